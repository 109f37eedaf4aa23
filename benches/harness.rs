//! Harness benchmarks: what the agent loop and the adapters cost on top of the model.
//!
//! `cargo bench --bench harness [-- overhead|streaming]`; docs/benchmarks.md ("Providers and
//! the agent loop") explains the method and records the latest run.
//!
//! - overhead: N models in parallel (default 16, then 1 for the scaling ratio), each running
//!   S steps (default 50) of read_file / search_code / edit_file calls on a small generated git
//!   project, through the path every front end takes: one turn of a session engine, submitted
//!   to its handle (`SessionEngine::spawn`, `Op::StartTurn`; the engine captures the project,
//!   records every event in the session log and builds each model's change set), the runner
//!   (worktree isolation: a full checkout per model; with `VERSUS_BENCH_COW=1`, copy-on-write
//!   workspaces where the machine allows them, as the binary makes them by default),
//!   `Agent::run_turn`,
//!   `HttpModel` + `ChatWire` and reqwest, against a keep-alive HTTP server in a process of its
//!   own (so its CPU is not the harness's) that answers each request at once with a
//!   pre-rendered Chat Completions stream. The server stamps
//!   when each request was fully received and when its reply was fully written; a step's
//!   overhead is the time between the reply to one request and the arrival of the next
//!   (decoding the stream, running the tool, building and sending the next request), so the
//!   server's own time is excluded by construction. Each configuration runs in a child process
//!   so its peak RSS (`VmHWM`) is its own.
//! - streaming: recorded SSE responses from tests/fixtures/, repeated to `VERSUS_BENCH_STREAM_MB`
//!   (default 100) MB per adapter, fed in 8 KiB chunks through `SseParser` and the adapter's
//!   own decoder (`Wire::decoder`), one parser and decoder per response, exactly as the HTTP
//!   transport does. SSE framing alone is reported as a reference.
//!
//!   "CPU per step" p50/p90: the harness process's CPU clock is read (by the server, through
//!   `clock_getcpuclockid`) at every request and reply; each
//!   step gets its share of the CPU spent while it was open (split evenly among the steps of
//!   other models open at the same time); the mean is all CPU of the run over all steps.
//!
//! Environment: `VERSUS_BENCH_MODELS` (16), `VERSUS_BENCH_STEPS` (50), `VERSUS_BENCH_STREAM_MB`
//! (100). A quick run: `VERSUS_BENCH_MODELS=4 VERSUS_BENCH_STEPS=10 VERSUS_BENCH_STREAM_MB=5`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    missing_docs
)]

#[path = "../tests/it/util/mock_server.rs"]
mod mock_server;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mock_server::{Framing, fixture, payload_lines_to_sse};
use serde_json::{Value, json};
use versus::agent::{Agent, AgentSettings, system_prompt};
use versus::engine::{EngineEvent, Op, SessionEngine, TurnRequest, TurnTarget};
use versus::model::{AgentEvent, Message, ModelRequest, Reasoning, RunStop, ToolDef};
use versus::provider::anthropic::AnthropicWire;
use versus::provider::gemini::GeminiWire;
use versus::provider::http::default_client;
use versus::provider::openai_chat::ChatWire;
use versus::provider::openai_responses::ResponsesWire;
use versus::provider::sse::SseParser;
use versus::provider::{Flow, HttpModel, RetryPolicy, Wire, WireConfig};
use versus::runner::RunOptions;
use versus::session::{SessionLog, Source, Store};
use versus::tools::{ToolLimits, ToolRegistry};
use versus::workspace::{Base, Isolation, Workspace};

const CHILD_ENV: &str = "VERSUS_BENCH_HARNESS_CHILD";
const FILES: usize = 20;
const LINES: usize = 40;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|v| *v > 0)
        .unwrap_or(default)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

/// `VmHWM` / `VmRSS` from /proc/self/status, in MB.
fn proc_status_mb(field: &str) -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

/// User + system CPU time of this process so far (all threads), from /proc/self/stat in clock
/// ticks of 10 ms (Linux's USER_HZ is 100 on every common configuration).
fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which is in parentheses and may hold spaces).
    let rest = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<u64> = rest
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|f| f.parse().ok())
        .collect();
    Duration::from_millis(fields.iter().sum::<u64>() * 10)
}

/// The CPU each harness interval (reply of one request to the arrival of the next) cost. The
/// process CPU clock is read at every interval end; between two consecutive readings, the CPU
/// spent is split evenly among the intervals open at that moment (with N models running, N
/// steps share the cores). CPU spent when no interval is open (the server writing a reply,
/// idle threads) is not counted.
/// A moment with the process CPU clock read then.
type Stamp = (Duration, Duration);

fn cpu_per_interval(intervals: &[(Stamp, Stamp)]) -> Vec<Duration> {
    let mut points: Vec<Stamp> = intervals
        .iter()
        .flat_map(|&(start, end)| [start, end])
        .collect();
    points.sort_by_key(|p| p.0);
    let mut cost = vec![Duration::ZERO; intervals.len()];
    for pair in points.windows(2) {
        let (from, to) = (pair[0], pair[1]);
        if to.0 == from.0 {
            continue;
        }
        let open: Vec<usize> = intervals
            .iter()
            .enumerate()
            .filter(|(_, (start, end))| start.0 <= from.0 && end.0 >= to.0)
            .map(|(i, _)| i)
            .collect();
        if open.is_empty() {
            continue;
        }
        let share = to.1.saturating_sub(from.1) / u32::try_from(open.len()).unwrap_or(1);
        for i in open {
            cost[i] += share;
        }
    }
    cost
}

// ---------------------------------------------------------------------------------------------
// Overhead: the generated project and the scripted model.

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "bench")
        .env("GIT_AUTHOR_EMAIL", "bench@localhost")
        .env("GIT_COMMITTER_NAME", "bench")
        .env("GIT_COMMITTER_EMAIL", "bench@localhost")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

/// 20 Rust files of 40 lines, committed.
fn generate_project(root: &Path) {
    std::fs::create_dir_all(root.join("src")).unwrap();
    for f in 0..FILES {
        let mut text = format!("//! Module {f} of the benchmark project.\n\n");
        for l in 0..LINES {
            text.push_str(&format!(
                "pub const VALUE_{f}_{l}: u32 = {l}; // item {l} of module {f}\n"
            ));
        }
        std::fs::write(root.join(format!("src/mod_{f}.rs")), text).unwrap();
    }
    std::fs::write(root.join("README.md"), "# bench project\n").unwrap();
    git(root, &["init", "-q"]);
    git(root, &["add", "."]);
    git(root, &["commit", "-qm", "init"]);
}

/// The call of step `k` (0-based): read, search, edit in turn; each edit hits a new line.
fn step_call(k: usize) -> (&'static str, Value) {
    let file = k % FILES;
    match k % 3 {
        0 => ("read_file", json!({"path": format!("src/mod_{file}.rs")})),
        1 => (
            "search_code",
            json!({"pattern": format!("VALUE_{file}_1[0-9]:")}),
        ),
        _ => {
            let edit = k / 3;
            let (f, l) = (edit % FILES, (edit / FILES) % LINES);
            (
                "edit_file",
                json!({"path": format!("src/mod_{f}.rs"),
                       "old_string": format!("VALUE_{f}_{l}: u32 = {l};"),
                       "new_string": format!("VALUE_{f}_{l}: u32 = {l} + 1;")}),
            )
        }
    }
}

/// The whole HTTP response for step `k` of `steps`: a tool call, or the final text.
fn chat_reply(k: usize, steps: usize) -> Vec<u8> {
    let chunk = |delta: Value, finish: Value| {
        json!({"id": format!("chatcmpl-{k}"), "object": "chat.completion.chunk", "created": 1,
               "model": "bench", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let mut events = Vec::new();
    if k + 1 == steps {
        events.push(chunk(
            json!({"role": "assistant", "content": "Done."}),
            Value::Null,
        ));
        events.push(chunk(json!({}), json!("stop")));
    } else {
        let (name, args) = step_call(k);
        let args = args.to_string();
        let (head, tail) = args.split_at(args.len() / 2);
        events.push(chunk(
            json!({"role": "assistant", "content": null, "tool_calls": [{"index": 0,
                   "id": format!("call_{k}"), "type": "function",
                   "function": {"name": name, "arguments": head}}]}),
            Value::Null,
        ));
        events.push(chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": tail}}]}),
            Value::Null,
        ));
        events.push(chunk(json!({}), json!("tool_calls")));
    }
    events.push(json!({"id": format!("chatcmpl-{k}"), "object": "chat.completion.chunk",
                       "created": 1, "model": "bench", "choices": [],
                       "usage": {"prompt_tokens": 1000, "completion_tokens": 20, "total_tokens": 1020}}));
    let mut body = String::new();
    for event in events {
        body.push_str(&format!("data: {event}\n\n"));
    }
    body.push_str("data: [DONE]\n\n");
    let mut reply = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    reply.extend_from_slice(body.as_bytes());
    reply
}

// ---------------------------------------------------------------------------------------------
// Overhead: an instant keep-alive server, in a process of its own.

/// The server runs in its own process (the bench executable again, with this variable set to
/// `STEPS CLIENT_PID`), so its threads' CPU is not counted as the harness's. It prints its port,
/// serves until its stdin closes, then prints the log of every request as JSON.
const SERVER_ENV: &str = "VERSUS_BENCH_HARNESS_SERVER";

/// `CLOCK_MONOTONIC` (what `Instant` reads on Linux), comparable between the two processes.
fn now() -> Duration {
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC)
        .map(Duration::from)
        .unwrap_or(Duration::ZERO)
}

/// The harness process's CPU time so far (all threads), read by either process: the server
/// reads the client's clock through `clock_getcpuclockid`.
fn cpu_of(clock: nix::time::ClockId) -> Duration {
    nix::time::clock_gettime(clock)
        .map(Duration::from)
        .unwrap_or(Duration::ZERO)
}

/// When one request was fully read and when its reply was fully written ([`now`]), with the
/// harness process's CPU clock at the same two moments.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
struct Served {
    received: Duration,
    replied: Duration,
    received_cpu: Duration,
    replied_cpu: Duration,
}

/// Per model (from the path `/m{i}/...`), the requests in order.
type ServedLog = Arc<Mutex<HashMap<usize, Vec<Served>>>>;

/// The server's process, seen from the harness.
struct InstantServer {
    port: u16,
    child: std::process::Child,
}

impl InstantServer {
    fn start(steps: usize) -> Self {
        let exe = std::env::current_exe().unwrap();
        let mut child = Command::new(exe)
            .env_remove(CHILD_ENV)
            .env(SERVER_ENV, format!("{steps} {}", std::process::id()))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        BufReader::new(child.stdout.as_mut().unwrap())
            .read_line(&mut first)
            .unwrap();
        let port = first.trim().parse().unwrap();
        Self { port, child }
    }

    /// Stops the server and reads its log.
    fn finish(mut self) -> HashMap<usize, Vec<Served>> {
        drop(self.child.stdin.take());
        let mut out = String::new();
        self.child
            .stdout
            .as_mut()
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        assert!(self.child.wait().unwrap().success());
        serde_json::from_str(out.trim()).unwrap()
    }
}

/// The server process: port on stdout, serve until stdin closes, then the log on stdout.
fn server_main(spec: &str) {
    let words: Vec<usize> = spec
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    let (steps, client) = (words[0], words[1]);
    let clock =
        nix::time::clock_getcpuclockid(nix::unistd::Pid::from_raw(i32::try_from(client).unwrap()))
            .unwrap();
    let replies: Arc<Vec<Vec<u8>>> = Arc::new((0..steps).map(|k| chat_reply(k, steps)).collect());
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    println!("{}", listener.local_addr().unwrap().port());
    std::io::stdout().flush().unwrap();
    let log: ServedLog = Arc::default();
    let shared = Arc::clone(&log);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let log = Arc::clone(&shared);
            let replies = Arc::clone(&replies);
            std::thread::spawn(move || serve_connection(stream, &replies, &log, clock));
        }
    });
    // The harness closes our stdin when its run is over.
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
    let log = log.lock().unwrap().clone();
    println!("{}", serde_json::to_string(&log).unwrap());
}

/// HTTP/1.1 with keep-alive: read a request (headers, `content-length` body), answer with the
/// model's next pre-rendered reply, repeat until the client closes.
fn serve_connection(
    stream: TcpStream,
    replies: &[Vec<u8>],
    log: &Mutex<HashMap<usize, Vec<Served>>>,
    clock: nix::time::ClockId,
) {
    let _ = stream.set_nodelay(true);
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::with_capacity(64 * 1024, stream);
    let mut line = String::new();
    let mut body = Vec::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let model: usize = line
            .split_whitespace()
            .nth(1)
            .and_then(|target| target.strip_prefix("/m"))
            .and_then(|rest| rest.split('/').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        let mut length = 0;
        loop {
            line.clear();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        body.resize(length, 0);
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let received = now();
        let received_cpu = cpu_of(clock);
        let step = {
            let mut log = log.lock().unwrap();
            let served = log.entry(model).or_default();
            served.push(Served {
                received,
                replied: received,
                received_cpu,
                replied_cpu: received_cpu,
            });
            served.len() - 1
        };
        let reply = &replies[step.min(replies.len() - 1)];
        if writer.write_all(reply).is_err() || writer.flush().is_err() {
            return;
        }
        let replied = now();
        let replied_cpu = cpu_of(clock);
        if let Some(entry) = log
            .lock()
            .unwrap()
            .get_mut(&model)
            .and_then(|v| v.get_mut(step))
        {
            entry.replied = replied;
            entry.replied_cpu = replied_cpu;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Overhead: one configuration (runs in a child process).

/// Whether the run asks for copy-on-write workspaces (an overlay per model on one frozen
/// checkout) instead of a full checkout per model. Off by default: the overlay's copy-up on
/// the first write to each file is filesystem work of making the workspace, and every edit of
/// this bench is a first write; the figures of both are in docs/benchmarks.md.
fn wants_copy_on_write() -> bool {
    std::env::var_os("VERSUS_BENCH_COW").is_some_and(|v| v != "0")
}

fn overhead_child(models: usize, steps: usize) -> Value {
    // As the binary does before any thread starts, when asked: workspaces become overlays on
    // one frozen checkout where the machine allows it.
    let copy_on_write = wants_copy_on_write()
        && versus::workspace::cow::enter(&versus::workspace::default_parent()).is_ok();
    let rss_start = proc_status_mb("VmRSS:");
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path().canonicalize().unwrap().join("project");
    generate_project(&root);
    let server = InstantServer::start(steps);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let http = default_client().unwrap();
    let tools = Arc::new(ToolRegistry::builtin());
    let settings = AgentSettings {
        system: system_prompt(&tools.guidance(), None),
        max_steps: u32::try_from(steps).unwrap() + 1,
        ..AgentSettings::default()
    };
    let targets: Vec<TurnTarget> = (0..models)
        .map(|i| {
            let wire = ChatWire::new(WireConfig {
                provider: "bench".into(),
                base_url: format!("http://127.0.0.1:{}/m{i}/v1", server.port),
                api_key: Some("sk-bench".into()),
                key_hint: "BENCH_API_KEY".into(),
                headers: Vec::new(),
                vision: true,
                ..WireConfig::default()
            });
            TurnTarget {
                label: format!("bench/m{i}"),
                agent: Agent {
                    client: Arc::new(HttpModel::new(
                        http.clone(),
                        Arc::new(wire),
                        RetryPolicy::default(),
                    )),
                    model: "bench-model".into(),
                    tools: Arc::clone(&tools),
                    settings: settings.clone(),
                    cost: None,
                },
                window: None,
            }
        })
        .collect();
    let options = RunOptions {
        isolation: Isolation::Worktree,
        limits: ToolLimits::default(),
        setup: None,
        workspace_parent: Some(scratch.path().join("ws")),
        spill_dir: scratch.path().join("spill"),
        output_filter: None,
        sandbox: versus::exec::SandboxSettings::default(),
        limit: None,
        mcp: None,
    };
    let base = Arc::new(Base::capture(&root).unwrap());

    // The CPU that preparing the workspaces costs, measured on its own so that "CPU per step"
    // is the steps' (the runner prepares them while other models already run).
    let prep_before = cpu_time();
    let warmup: Vec<Workspace> = (0..models)
        .map(|i| {
            Workspace::create_in(
                &scratch.path().join("ws-prep"),
                Isolation::Worktree,
                &base,
                &format!("prep{i}"),
            )
            .unwrap()
        })
        .collect();
    let prep_cpu = cpu_time().saturating_sub(prep_before);
    drop(warmup);

    // The session, opened before the clock starts (as `versus ask` opens it before the turn).
    let store = Store::open(&root).unwrap();
    let labels: Vec<String> = targets.iter().map(|t| t.label.clone()).collect();
    let engine = SessionEngine::create(store, Source::Ask, labels).unwrap();
    let session_dir = engine.dir().to_path_buf();

    let cpu_before = cpu_time();
    let started = now();
    // The front end is a task on the runtime, as `versus ask` and the interface are: it
    // submits the turn and reads the engine's events until the turn ended, then ends the
    // session (its log closed, the workspaces removed).
    let consumer = runtime.spawn(async move {
        let (handle, mut events) = engine.spawn();
        handle
            .submit(Op::StartTurn(TurnRequest {
                prompt: "benchmark".into(),
                attached: String::new(),
                targets,
                options,
                policy: Default::default(),
                check: None,
                history_line: None,
                workspaces: Default::default(),
                context: Default::default(),
                tasks: Vec::new(),
            }))
            .unwrap();
        let mut ready = vec![None; models];
        let mut agent_done = vec![None; models];
        let mut results = Vec::new();
        while let Some(event) = events.recv().await {
            match event {
                EngineEvent::WorkspaceReady { entry, .. } => ready[entry] = Some(now()),
                EngineEvent::Agent {
                    entry,
                    event: AgentEvent::Finished { .. },
                    ..
                } => agent_done[entry] = Some(now()),
                EngineEvent::ModelFinished { model, .. } => results.push(model),
                EngineEvent::TurnEnded { .. } => break,
                EngineEvent::Failed { op, error } => panic!("{op:?}: {error}"),
                _ => {}
            }
        }
        let turn_end = (now(), cpu_time());
        handle
            .submit(Op::Shutdown {
                keep_workspaces: false,
            })
            .unwrap();
        while events.recv().await.is_some() {}
        (ready, agent_done, results, turn_end)
    });
    let (ready, agent_done, results, turn_end) = runtime.block_on(consumer).unwrap();
    // Up to the end of the turn (every change set built and recorded); the session's end
    // (removing the workspaces) is not a step's.
    let wall = turn_end.0 - started;
    let cpu = turn_end
        .1
        .saturating_sub(cpu_before)
        .saturating_sub(prep_cpu);

    // Every model did what it was told.
    let edits = (0..steps.saturating_sub(1)).filter(|k| k % 3 == 2).count();
    assert_eq!(results.len(), models);
    for result in &results {
        assert_eq!(result.stop, RunStop::Completed, "{}", result.label);
        assert_eq!(result.stats.steps as usize, steps);
        assert_eq!(result.stats.tool_calls as usize, steps - 1);
        assert_eq!(result.stats.tool_errors, 0, "{}", result.label);
        assert_eq!(result.writes, edits);
    }

    // What building the last request costs: the whole conversation, the system prompt and
    // the tool schemas, as a JSON body (what `HttpModel` does before every step), from
    // nothing and after the step before.
    // The conversation as the session log recorded it.
    let conversation = SessionLog::read(&session_dir)
        .unwrap()
        .conversations()
        .remove(&results[0].label)
        .unwrap();
    let request = ModelRequest {
        model: "bench-model".into(),
        system: settings.system.as_str().into(),
        messages: conversation.into(),
        tools: tools
            .specs()
            .iter()
            .map(|spec| ToolDef {
                name: spec.name.to_string(),
                description: spec.description.clone(),
                parameters: spec.parameters.clone(),
            })
            .collect::<Vec<_>>()
            .into(),
        max_output_tokens: None,
        temperature: None,
        reasoning: Reasoning::Default,
        seed: None,
    };
    let config = WireConfig {
        provider: "bench".into(),
        base_url: "http://127.0.0.1:9/v1".into(),
        ..WireConfig::default()
    };
    // Cold: a wire that has sent nothing yet encodes every message. Step: the wire sent the
    // conversation without its last two messages (the previous step's request, sharing the
    // messages as a run's steps do), then the whole.
    let mut previous = request.clone();
    previous
        .messages
        .truncate(request.messages.len().saturating_sub(2));
    let rounds = 50;
    let (mut cold, mut step) = (Duration::ZERO, Duration::ZERO);
    let mut body_bytes = 0;
    for _ in 0..rounds {
        let wire = ChatWire::new(config.clone());
        let started = Instant::now();
        body_bytes = wire.build(&request).unwrap().body.len();
        cold += started.elapsed();
        let wire = ChatWire::new(config.clone());
        wire.build(&previous).unwrap();
        let started = Instant::now();
        wire.build(&request).unwrap();
        step += started.elapsed();
    }
    let build = cold / rounds;
    let build_step = step / rounds;

    let log = server.finish();
    let mut overhead = Vec::new();
    let mut by_tool: HashMap<&'static str, Vec<Duration>> = HashMap::new();
    let mut server_time = Vec::new();
    let mut prepare = Vec::new();
    let mut intervals = Vec::new();
    for model in 0..models {
        let served = &log[&model];
        assert_eq!(served.len(), steps);
        let ready = ready[model].unwrap();
        prepare.push(ready.saturating_sub(started));
        overhead.push(served[0].received.saturating_sub(ready));
        for (k, pair) in served.windows(2).enumerate() {
            let gap = pair[1].received.saturating_sub(pair[0].replied);
            overhead.push(gap);
            intervals.push((
                (pair[0].replied, pair[0].replied_cpu),
                (pair[1].received, pair[1].received_cpu),
            ));
            by_tool.entry(step_call(k).0).or_default().push(gap);
        }
        overhead.push(
            agent_done[model]
                .unwrap()
                .saturating_sub(served[steps - 1].replied),
        );
        server_time.extend(served.iter().map(|s| s.replied.saturating_sub(s.received)));
    }
    let mut step_cpu = cpu_per_interval(&intervals);
    // The same, counting only steps that began after every workspace was ready: until then the
    // runner is still creating the other models' workspaces (git checkouts, which have their
    // own benchmark in benches/workspace.rs), and that CPU lands in the steps open meanwhile.
    let all_ready = ready.iter().flatten().max().copied().unwrap_or(started);
    let mut steady: Vec<Duration> = intervals
        .iter()
        .zip(&step_cpu)
        .filter(|((start, _), _)| start.0 >= all_ready)
        .map(|(_, cpu)| *cpu)
        .collect();
    steady.sort();
    step_cpu.sort();
    overhead.sort();
    server_time.sort();
    prepare.sort();
    let total_steps = (models * steps) as f64;
    let tool_p50: serde_json::Map<String, Value> = by_tool
        .into_iter()
        .map(|(tool, mut gaps)| {
            gaps.sort();
            (tool.to_string(), json!(ms(percentile(&gaps, 0.5))))
        })
        .collect();
    json!({
        "models": models,
        "copy_on_write": if copy_on_write { 1 } else { 0 },
        "tool_p50_ms": tool_p50,
        "steps": steps,
        "overhead_p50_ms": ms(percentile(&overhead, 0.5)),
        "overhead_p90_ms": ms(percentile(&overhead, 0.9)),
        "overhead_p99_ms": ms(percentile(&overhead, 0.99)),
        "overhead_max_ms": ms(*overhead.last().unwrap()),
        "overhead_mean_ms": ms(overhead.iter().sum::<Duration>()) / overhead.len() as f64,
        "server_p50_ms": ms(percentile(&server_time, 0.5)),
        "prepare_p50_ms": ms(percentile(&prepare, 0.5)),
        "prepare_max_ms": ms(*prepare.last().unwrap()),
        "wall_ms": ms(wall),
        "last_request_build_ms": ms(build),
        "step_request_build_ms": ms(build_step),
        "last_request_kb": body_bytes as f64 / 1024.0,
        "cpu_per_step_ms": ms(cpu) / total_steps,
        "step_cpu_p50_ms": ms(percentile(&step_cpu, 0.5)),
        "step_cpu_p90_ms": ms(percentile(&step_cpu, 0.9)),
        "steady_steps": steady.len(),
        "steady_cpu_p50_ms": ms(percentile(&steady, 0.5)),
        "steady_cpu_p90_ms": ms(percentile(&steady, 0.9)),
        "rss_start_mb": rss_start,
        "rss_peak_mb": proc_status_mb("VmHWM:"),
    })
}

/// The median of each number across runs (objects recursively); peak RSS takes the maximum.
fn median_of(runs: &[Value]) -> Value {
    let Some(Value::Object(first)) = runs.first() else {
        return Value::Null;
    };
    let mut out = serde_json::Map::new();
    for (key, value) in first {
        let column: Vec<Value> = runs.iter().map(|r| r[key].clone()).collect();
        let merged = match value {
            Value::Object(_) => median_of(&column),
            Value::Number(_) => {
                let mut numbers: Vec<f64> = column.iter().filter_map(Value::as_f64).collect();
                numbers.sort_by(f64::total_cmp);
                if key == "rss_peak_mb" {
                    json!(numbers.last().copied().unwrap_or(0.0))
                } else {
                    json!(numbers[numbers.len() / 2])
                }
            }
            other => other.clone(),
        };
        out.insert(key.clone(), merged);
    }
    Value::Object(out)
}

/// Runs `part` in a child process (so peak RSS is per configuration) and reads its result.
fn in_child(part: &str) -> Value {
    let exe = std::env::current_exe().unwrap();
    let out = Command::new(exe).env(CHILD_ENV, part).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "child {part} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("RESULT "))
        .unwrap_or_else(|| panic!("child {part} printed no result:\n{stdout}"));
    serde_json::from_str(line).unwrap()
}

fn bench_overhead() {
    let models = env_usize("VERSUS_BENCH_MODELS", 16);
    let steps = env_usize("VERSUS_BENCH_STEPS", 50);
    println!(
        "\nharness overhead: {models} model(s) x {steps} steps (read_file/search_code/edit_file), \
         Chat Completions over HTTP/1.1 keep-alive, worktree isolation; median of {} runs \
         (peak RSS: the highest)\n",
        env_usize("VERSUS_BENCH_RUNS", 3)
    );
    println!(
        "| models | overhead p50 | p90 | p99 | max | mean | server p50 | CPU per step | workspace prep p50 | wall of the run | peak RSS |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    let mut rows = Vec::new();
    let mut counts = vec![models];
    if models != 1 {
        counts.push(1);
    }
    let runs = env_usize("VERSUS_BENCH_RUNS", 3);
    for n in counts {
        let all: Vec<Value> = (0..runs)
            .map(|_| in_child(&format!("overhead {n} {steps}")))
            .collect();
        let r = median_of(&all);
        println!(
            "| {:.0} | {:.2} ms | {:.2} ms | {:.2} ms | {:.2} ms | {:.2} ms | {:.3} ms | {:.2} ms | {:.1} ms | {:.0} ms | {:.1} MB (start {:.1}) |",
            r["models"].as_f64().unwrap(),
            r["overhead_p50_ms"].as_f64().unwrap(),
            r["overhead_p90_ms"].as_f64().unwrap(),
            r["overhead_p99_ms"].as_f64().unwrap(),
            r["overhead_max_ms"].as_f64().unwrap(),
            r["overhead_mean_ms"].as_f64().unwrap(),
            r["server_p50_ms"].as_f64().unwrap(),
            r["cpu_per_step_ms"].as_f64().unwrap(),
            r["prepare_p50_ms"].as_f64().unwrap(),
            r["wall_ms"].as_f64().unwrap(),
            r["rss_peak_mb"].as_f64().unwrap(),
            r["rss_start_mb"].as_f64().unwrap(),
        );
        rows.push(r);
    }
    let cow = rows
        .iter()
        .all(|r| r["copy_on_write"].as_f64() == Some(1.0));
    println!(
        "\nworkspaces: {}",
        if cow {
            "copy-on-write (an overlay per model on one frozen checkout), as the binary makes them"
        } else {
            "a full checkout per model (VERSUS_BENCH_COW=1 for copy-on-write workspaces)"
        }
    );
    for r in &rows {
        println!(
            "\n{:.0} model(s): building the last request ({:.0} KB body) takes {:.3} ms from nothing, {:.3} ms after the previous step's",
            r["models"].as_f64().unwrap(),
            r["last_request_kb"].as_f64().unwrap(),
            r["last_request_build_ms"].as_f64().unwrap(),
            r["step_request_build_ms"].as_f64().unwrap()
        );
    }
    println!(
        "\nCPU per step (each step's share of the process CPU while it was open; target for 16 \
         models: p50 < 0.3 ms, the machine's speed drifts by about a fifth between runs, see \
         docs/benchmarks.md):\n"
    );
    println!(
        "| models | p50 | p90 | mean (all CPU / steps) | after every workspace is ready: steps | p50 | p90 |\n|---|---|---|---|---|---|---|"
    );
    for r in &rows {
        println!(
            "| {:.0} | {:.3} ms | {:.3} ms | {:.3} ms | {:.0} | {:.3} ms | {:.3} ms |",
            r["models"].as_f64().unwrap(),
            r["step_cpu_p50_ms"].as_f64().unwrap(),
            r["step_cpu_p90_ms"].as_f64().unwrap(),
            r["cpu_per_step_ms"].as_f64().unwrap(),
            r["steady_steps"].as_f64().unwrap(),
            r["steady_cpu_p50_ms"].as_f64().unwrap(),
            r["steady_cpu_p90_ms"].as_f64().unwrap()
        );
    }
    println!("\noverhead p50 by the tool run in the step:\n");
    println!("| models | read_file | search_code | edit_file |\n|---|---|---|---|");
    for r in &rows {
        let t = |name: &str| r["tool_p50_ms"][name].as_f64().unwrap_or(0.0);
        println!(
            "| {:.0} | {:.2} ms | {:.2} ms | {:.2} ms |",
            r["models"].as_f64().unwrap(),
            t("read_file"),
            t("search_code"),
            t("edit_file")
        );
    }
    if rows.len() == 2 {
        let f = |r: &Value, k: &str| r[k].as_f64().unwrap();
        println!(
            "\nscaling {models} vs 1 model: overhead p50 {:.2}x, p99 {:.2}x; CPU per step {:.2}x; wall of the whole run {:.2}x for {models}x the steps; peak RSS {:.2}x",
            f(&rows[0], "overhead_p50_ms") / f(&rows[1], "overhead_p50_ms"),
            f(&rows[0], "overhead_p99_ms") / f(&rows[1], "overhead_p99_ms"),
            f(&rows[0], "cpu_per_step_ms") / f(&rows[1], "cpu_per_step_ms"),
            f(&rows[0], "wall_ms") / f(&rows[1], "wall_ms"),
            f(&rows[0], "rss_peak_mb") / f(&rows[1], "rss_peak_mb"),
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Streaming.

/// Successful recorded responses per adapter (file under tests/fixtures/, framing; `None`:
/// served as recorded).
fn stream_fixtures(name: &str) -> Vec<(&'static str, Option<Framing>)> {
    use Framing::*;
    match name {
        "openai-chat" => vec![
            (
                "openai-chat/vercel--openai-text.chunks.txt",
                Some(DataThenDone),
            ),
            (
                "openai-chat/vercel--issue-15789-step-1.chunks.txt",
                Some(DataThenDone),
            ),
            (
                "openai-chat/vercel--deepseek-tool-call.chunks.txt",
                Some(DataThenDone),
            ),
            (
                "openai-chat/genai--openai--stream_tool_call_with_finish_reason--response_000.txt",
                None,
            ),
        ],
        "openai-responses" => vec![
            (
                "openai-responses/genai--openai_resp--reasoning_stream_tools--response_000.txt",
                None,
            ),
            (
                "openai-responses/genai--openai_resp--utf8_chunking_bug--response_000.txt",
                None,
            ),
            (
                "openai-responses/vercel--openai-reasoning-encrypted-content.1.chunks.txt",
                Some(EventFromType),
            ),
            (
                "openai-responses/vercel--github-copilot-id-rotation.1.chunks.txt",
                Some(EventFromType),
            ),
        ],
        "anthropic" => vec![
            (
                "anthropic/vercel--anthropic-text.chunks.txt",
                Some(EventFromType),
            ),
            (
                "anthropic/vercel--anthropic-issue-15652-false.chunks.txt",
                Some(EventFromType),
            ),
            (
                "anthropic/genai--anthropic--thinking_tool_stream--response_000.txt",
                None,
            ),
            (
                "anthropic/genai--anthropic--thinking_adjudication_tool_stream--response_001.txt",
                None,
            ),
        ],
        _ => vec![
            ("gemini/vercel--google-text.chunks.txt", Some(DataOnly)),
            ("gemini/genai--gemini--tool_stream--response_000.txt", None),
            (
                "gemini/vercel--google-tool-call-gemini3.chunks.txt",
                Some(DataOnly),
            ),
            (
                "gemini/vercel--google-reasoning-gemini3.chunks.txt",
                Some(DataOnly),
            ),
        ],
    }
}

fn wire_for(name: &str) -> (Arc<dyn Wire>, &'static str) {
    let config = WireConfig {
        provider: name.into(),
        base_url: "http://127.0.0.1:9".into(),
        api_key: Some("sk-bench".into()),
        key_hint: "BENCH_API_KEY".into(),
        headers: Vec::new(),
        vision: true,
        ..WireConfig::default()
    };
    match name {
        "openai-chat" => (Arc::new(ChatWire::new(config)), "gpt-4.1"),
        "openai-responses" => (Arc::new(ResponsesWire::new(config)), "gpt-5"),
        "anthropic" => (Arc::new(AnthropicWire::new(config)), "claude-sonnet-4-5"),
        _ => (Arc::new(GeminiWire::new(config)), "gemini-2.5-pro"),
    }
}

const CHUNK: usize = 8 * 1024;

/// One response through a fresh parser and decoder, as `HttpModel` does; returns the number
/// of stream events produced.
fn decode_response(wire: &dyn Wire, request: &ModelRequest, body: &[u8]) -> usize {
    let mut decoder = wire.decoder(request);
    let mut parser = SseParser::new();
    let mut frames = Vec::new();
    let mut events = Vec::new();
    let mut produced = 0;
    let mut done = false;
    for chunk in body.chunks(CHUNK) {
        parser.feed(chunk, &mut frames);
        for frame in frames.drain(..) {
            if decoder.event(&frame, &mut events).unwrap() == Flow::Done {
                done = true;
                break;
            }
        }
        produced += events.len();
        events.clear();
        if done {
            break;
        }
    }
    if !done {
        parser.finish(&mut frames);
        for frame in frames.drain(..) {
            if decoder.event(&frame, &mut events).unwrap() == Flow::Done {
                break;
            }
        }
        produced += events.len();
    }
    decoder.finish().unwrap();
    produced
}

/// Frames every response of `order` and hands each event's data to `parse`; the time taken.
fn frame_and_parse(bodies: &[Vec<u8>], order: &[usize], parse: impl Fn(&str) -> bool) -> Duration {
    let started = Instant::now();
    let mut frames = Vec::new();
    let mut parsed = 0usize;
    for &i in order {
        let mut parser = SseParser::new();
        for chunk in bodies[i].chunks(CHUNK) {
            parser.feed(chunk, &mut frames);
            for frame in frames.drain(..) {
                parsed += usize::from(parse(frame.data.trim()));
            }
        }
        parser.finish(&mut frames);
        frames.clear();
    }
    std::hint::black_box(parsed);
    started.elapsed()
}

fn bench_streaming() {
    let target = env_usize("VERSUS_BENCH_STREAM_MB", 100) * 1024 * 1024;
    println!(
        "\nstreaming: {} MB of recorded SSE per adapter, {} KiB chunks, one parser + decoder per response\n",
        target / (1024 * 1024),
        CHUNK / 1024
    );
    println!(
        "| adapter | responses | events out | SSE framing only | framing + JSON syntax check | framing + JSON to Value | framing + decoder |"
    );
    println!("|---|---|---|---|---|---|---|");
    for name in ["openai-chat", "openai-responses", "anthropic", "gemini"] {
        let bodies: Vec<Vec<u8>> = stream_fixtures(name)
            .into_iter()
            .map(|(file, framing)| {
                let bytes = fixture(file);
                match framing {
                    Some(framing) => payload_lines_to_sse(&bytes, framing),
                    None => bytes,
                }
            })
            .collect();
        let (wire, model) = wire_for(name);
        let request = ModelRequest {
            model: model.into(),
            system: "".into(),
            messages: vec![Message::user("bench")].into(),
            tools: Vec::new().into(),
            max_output_tokens: None,
            temperature: None,
            reasoning: Reasoning::Default,
            seed: None,
        };
        // The workload: the recorded responses in turn until the target size is reached.
        let mut order = Vec::new();
        let mut total = 0;
        while total < target {
            let i = order.len() % bodies.len();
            total += bodies[i].len();
            order.push(i);
        }
        // Warm-up (and a check that every fixture decodes to a completion).
        for body in &bodies {
            decode_response(wire.as_ref(), &request, body);
        }
        let started = Instant::now();
        let mut frames = Vec::new();
        let mut count = 0;
        for &i in &order {
            let mut parser = SseParser::new();
            for chunk in bodies[i].chunks(CHUNK) {
                parser.feed(chunk, &mut frames);
                count += frames.len();
                frames.clear();
            }
            parser.finish(&mut frames);
            count += frames.len();
            frames.clear();
        }
        let framing = started.elapsed();
        std::hint::black_box(count);

        // References: framing plus parsing each event's data into a `serde_json::Value` (the
        // first thing every decoder does; the rest of the decoder's time is its own logic),
        // and framing plus a syntax-only pass (`IgnoredAny`), the floor for any serde-based
        // decoder, typed or not.
        let json_only = frame_and_parse(&bodies, &order, |data| {
            serde_json::from_str::<Value>(data).is_ok_and(|v| !v.is_null())
        });
        let syntax_only = frame_and_parse(&bodies, &order, |data| {
            serde_json::from_str::<serde::de::IgnoredAny>(data).is_ok()
        });

        let started = Instant::now();
        let mut produced = 0;
        for &i in &order {
            produced += decode_response(wire.as_ref(), &request, &bodies[i]);
        }
        let decoding = started.elapsed();
        let mb = total as f64 / (1024.0 * 1024.0);
        println!(
            "| {name} | {} | {produced} | {:.0} MB/s | {:.0} MB/s | {:.0} MB/s | {:.0} MB/s |",
            order.len(),
            mb / framing.as_secs_f64(),
            mb / syntax_only.as_secs_f64(),
            mb / json_only.as_secs_f64(),
            mb / decoding.as_secs_f64(),
        );
    }
}

// ---------------------------------------------------------------------------------------------

fn main() {
    // The copy-on-write probe runs this executable again, as it runs the binary.
    if let Some(scratch) = std::env::var_os(versus::workspace::cow::PROBE_ENV) {
        if let Err(why) = versus::workspace::cow::probe(std::path::Path::new(&scratch)) {
            eprintln!("{why}");
            std::process::exit(1);
        }
        return;
    }
    if let Ok(spec) = std::env::var(SERVER_ENV) {
        server_main(&spec);
        return;
    }
    if let Ok(part) = std::env::var(CHILD_ENV) {
        let words: Vec<usize> = part
            .split_whitespace()
            .skip(1)
            .filter_map(|w| w.parse().ok())
            .collect();
        let result = overhead_child(words[0], words[1]);
        println!("RESULT {result}");
        return;
    }
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let wants = |name: &str| filter.is_empty() || filter.iter().any(|f| name.contains(f.as_str()));
    println!("versus harness benchmarks (release build)");
    if wants("overhead") {
        bench_overhead();
    }
    if wants("streaming") {
        bench_streaming();
    }
}
