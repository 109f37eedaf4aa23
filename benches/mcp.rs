//! What an MCP tool call through versus costs over the server's own time.
//!
//! `cargo bench --bench mcp`: one local stdio server (tests/fixtures/mcp/raw_server.py, the
//! standard library only) is called in two ways, alternating call by call:
//! - **versus**: `ToolRegistry::dispatch` of `raw__echo`, exactly as the agent loop calls it
//!   (argument parsing, rmcp's JSON-RPC client, the result turned into the model's text), the
//!   server started by `McpPlan::for_model` in a workspace sandbox (bubblewrap when it can run
//!   here, else unconfined: the sandbox costs nothing per call, only at start);
//! - **direct**: a second process of the same server, given the same `tools/call` line by a
//!   minimal client (write one line, read one line): the server's own time, pipes included.
//!
//! The added cost is versus's median minus the direct median (the target: at most 1 ms). The
//! server also reports the time it spent between reading a request and writing its answer.
//! `VERSUS_BENCH_RUNS` sets the number of timed calls of each kind (default 2000).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    missing_docs
)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;
use versus::exec::{Sandbox, SandboxMode, SandboxSettings, WorkspaceDirs};
use versus::mcp::{McpPlan, ServerSpec};
use versus::tools::{ToolContext, ToolRegistry};
use versus::workspace::DirectView;

const SERVER: &str = include_str!("../tests/fixtures/mcp/raw_server.py");

fn runs() -> usize {
    std::env::var("VERSUS_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000)
}

fn percentile(v: &mut [Duration], p: f64) -> Duration {
    v.sort();
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v[i]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("raw_server.py"), SERVER).unwrap();
    let mut settings = SandboxSettings::default();
    let confined = versus::exec::check_available(&settings).is_ok();
    if !confined {
        settings.sandbox = SandboxMode::Off;
    }
    let sandbox = Arc::new(Sandbox::new(&settings, WorkspaceDirs::tree_only(&root)));
    let spec = ServerSpec::recipe_stdio(
        "raw",
        &["python3".to_string(), "raw_server.py".to_string()],
        "bench",
    );
    let plan = McpPlan::new(vec![spec], &root, settings, None);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();

    // The direct client: its own server process, one line out, one line in.
    let mut direct = Command::new("python3")
        .arg(root.join("raw_server.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut to_server = direct.stdin.take().unwrap();
    let mut from_server = BufReader::new(direct.stdout.take().unwrap());
    let request = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":\
                   {\"name\":\"echo\",\"arguments\":{\"text\":\"x\"}}}\n";
    let mut line = String::new();
    let mut direct_call = || {
        let started = Instant::now();
        to_server.write_all(request.as_bytes()).unwrap();
        to_server.flush().unwrap();
        line.clear();
        from_server.read_line(&mut line).unwrap();
        let took = started.elapsed();
        assert!(line.contains("echo: x"), "{line}");
        took
    };

    let n = runs();
    let (mut through, mut raw, mut server) = runtime.block_on(async {
        let cancel = CancellationToken::new();
        let servers = plan.for_model(sandbox, &root, &cancel).await;
        // The fixture's `bad` tool is left out on purpose; nothing else may go wrong.
        assert!(
            servers
                .problems
                .iter()
                .all(|p| p.contains("tool `bad` was left out")),
            "{:?}",
            servers.problems
        );
        let registry = ToolRegistry::builtin().with_tools(servers.tools.clone());
        let ctx = ToolContext::new(Arc::new(DirectView::new(&root).unwrap()));
        let mut through = Vec::with_capacity(n);
        let mut raw = Vec::with_capacity(n);
        let mut server = Vec::with_capacity(n);
        for i in 0..(n + 200) {
            let started = Instant::now();
            let out = registry
                .dispatch("raw__echo", "{\"text\":\"x\"}", &ctx)
                .await;
            let took = started.elapsed();
            assert!(
                !out.is_error && out.text.starts_with("echo: x"),
                "{}",
                out.text
            );
            let direct_took = direct_call();
            if i < 200 {
                continue; // warm-up
            }
            through.push(took);
            raw.push(direct_took);
            let reported = out
                .text
                .split("\"server_ms\":")
                .nth(1)
                .and_then(|s| s.trim_end_matches('}').parse::<f64>().ok())
                .unwrap_or(0.0);
            server.push(Duration::from_secs_f64(reported / 1000.0));
        }
        servers.shutdown().await;
        (through, raw, server)
    });
    drop(to_server);
    let _ = direct.kill();
    let _ = direct.wait();

    let t50 = percentile(&mut through, 0.5);
    let t95 = percentile(&mut through, 0.95);
    let r50 = percentile(&mut raw, 0.5);
    let r95 = percentile(&mut raw, 0.95);
    let s50 = percentile(&mut server, 0.5);
    println!(
        "MCP tool call, {n} calls each ({}):",
        if confined {
            "server in the bubblewrap sandbox"
        } else {
            "sandbox unavailable here: server unconfined"
        }
    );
    println!("  server's own work (reported)   median {:.3} ms", ms(s50));
    println!(
        "  direct client (line in, out)   median {:.3} ms  p95 {:.3} ms",
        ms(r50),
        ms(r95)
    );
    println!(
        "  through versus (dispatch)      median {:.3} ms  p95 {:.3} ms",
        ms(t50),
        ms(t95)
    );
    println!(
        "  added by versus                median {:.3} ms (target: at most 1 ms)",
        ms(t50.saturating_sub(r50))
    );
}
