//! Parallel tool calls: a step with 8 read/search calls takes about its slowest call's time,
//! not the sum of them.
//!
//! `cargo bench --bench parallel`. A demo model asks, in one step, for 6 web_search calls to a
//! local SearXNG-speaking server that answers each after the number of milliseconds named in
//! its query (20, 40, ... 120 ms, shuffled), one read_file and one search_code; then it says
//! done. The agent loop runs the step as a model's turn does (`Agent::run_turn`). In the same
//! run, alternating: the same step's slowest call alone in a step of its own (the reference a
//! parallel step is measured against), and the 8 calls dispatched one after the other (the
//! sum, what the loop did before). Reported: medians and the ratios step / slowest call and
//! step / sum. `VERSUS_BENCH_RUNS` sets the number of rounds (default 20).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    missing_docs
)]

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;
use versus::agent::{Agent, AgentSettings, EventSink, ToolEnv};
use versus::exec::Sandbox;
use versus::model::Message;
use versus::provider::demo::DemoModel;
use versus::tools::{SearchBackend, ToolContext, ToolLimits, ToolRegistry, WebSearchSetup};
use versus::workspace::DirectView;

/// The searches' delays in milliseconds, in call order.
const DELAYS: [u64; 6] = [60, 20, 120, 40, 100, 80];

fn runs() -> usize {
    std::env::var("VERSUS_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

/// A SearXNG-speaking server answering `q=N` after N milliseconds.
fn slow_backend() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut first = String::new();
                if reader.read_line(&mut first).unwrap_or(0) == 0 {
                    return;
                }
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
                        break;
                    }
                }
                let delay: u64 = first
                    .split_once("q=")
                    .and_then(|(_, r)| r.split('&').next())
                    .and_then(|q| q.parse().ok())
                    .unwrap_or(0);
                std::thread::sleep(Duration::from_millis(delay));
                let body = format!(
                    r#"{{"results":[{{"url":"https://example.com/{delay}","title":"t{delay}","content":"c"}}]}}"#
                );
                let mut out = stream;
                let _ = write!(
                    out,
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
                     connection: close\r\n\r\n{body}",
                    body.len()
                );
            });
        }
    });
    url
}

fn calls() -> Vec<serde_json::Value> {
    let mut calls: Vec<serde_json::Value> = DELAYS
        .iter()
        .map(|d| serde_json::json!({"name": "web_search", "args": {"query": d.to_string()}}))
        .collect();
    calls.insert(
        2,
        serde_json::json!({"name": "read_file", "args": {"path": "src/lib.rs"}}),
    );
    calls.insert(
        5,
        serde_json::json!({"name": "search_code", "args": {"pattern": "fn "}}),
    );
    calls
}

/// One turn of a demo model whose script is `steps` then "done"; its wall time.
fn turn(
    runtime: &tokio::runtime::Runtime,
    tools: &Arc<ToolRegistry>,
    env: &ToolEnv,
    steps: &[Vec<serde_json::Value>],
) -> Duration {
    let mut script = String::new();
    for step in steps {
        script.push_str(&serde_json::json!({ "tools": step }).to_string());
        script.push('\n');
    }
    script.push_str("{\"say\": \"done\"}\n");
    let agent = Agent {
        client: Arc::new(DemoModel::parse("bench", &script).unwrap()),
        model: "demo/bench".into(),
        tools: Arc::clone(tools),
        settings: AgentSettings::default(),
        cost: None,
    };
    let emit: EventSink = Arc::new(|_| {});
    let start = Instant::now();
    let outcome = runtime.block_on(agent.run_turn(
        Vec::new(),
        Message::user("go"),
        env,
        &emit,
        CancellationToken::new(),
    ));
    assert_eq!(outcome.stats.tool_errors, 0, "{:?}", outcome.messages);
    start.elapsed()
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    for i in 0..50 {
        std::fs::write(
            root.join(format!("src/m{i}.rs")),
            format!("pub fn f{i}() -> u32 {{ {i} }}\n").repeat(40),
        )
        .unwrap();
    }
    std::fs::write(root.join("src/lib.rs"), "pub fn lib() {}\n".repeat(200)).unwrap();
    let url = slow_backend();
    let setup =
        WebSearchSetup::new(SearchBackend::Searxng, Some(&url), None, None, |_| None).unwrap();
    let tools = Arc::new(ToolRegistry::builtin().with_web_search(setup));
    let view = Arc::new(DirectView::new(&root).unwrap());
    let env = ToolEnv {
        view: view.clone(),
        limits: ToolLimits::default(),
        spill_dir: root.join(".spill"),
        output_filter: None,
        sandbox: Arc::new(Sandbox::for_dir(&root)),
    };
    let all = calls();
    let slowest = DELAYS.iter().max().unwrap().to_string();
    let alone = vec![serde_json::json!({"name": "web_search", "args": {"query": slowest}})];
    // The empty turn: what a turn costs besides its tools (two demo steps).
    let (mut step, mut single, mut sum, mut empty) = (vec![], vec![], vec![], vec![]);
    for round in 0..=runs() {
        let s = turn(&runtime, &tools, &env, std::slice::from_ref(&all));
        let one = turn(&runtime, &tools, &env, std::slice::from_ref(&alone));
        let none = turn(&runtime, &tools, &env, &[]);
        let ctx = ToolContext::new(view.clone());
        let start = Instant::now();
        runtime.block_on(async {
            for call in &all {
                let out = tools
                    .dispatch(
                        call["name"].as_str().unwrap(),
                        &call["args"].to_string(),
                        &ctx,
                    )
                    .await;
                assert!(!out.is_error, "{}", out.text);
            }
        });
        let seq = start.elapsed();
        if round == 0 {
            continue; // warm-up
        }
        step.push(s);
        single.push(one);
        empty.push(none);
        sum.push(seq);
    }
    let (step, single, sum, empty) = (median(step), median(single), median(sum), median(empty));
    println!(
        "8 calls in one step (6 web_search of {:?} ms, read_file, search_code), {} rounds:",
        DELAYS,
        runs()
    );
    println!("  turn with the step of 8 calls      {}", ms(step));
    println!("  turn with the slowest call alone   {}", ms(single));
    println!("  turn without tools                 {}", ms(empty));
    println!("  the 8 calls one after the other    {}", ms(sum));
    println!(
        "  step / slowest call alone: {:.2}x   step / sum: {:.2}x",
        step.as_secs_f64() / single.as_secs_f64(),
        step.as_secs_f64() / sum.as_secs_f64()
    );
}
