//! Session benchmark: what a long interactive session costs in memory.
//!
//! `cargo bench --bench session`: 40 turns (`VERSUS_BENCH_TURNS`) with 4 scripted demo models
//! (`VERSUS_BENCH_MODELS`), driven through the session engine as every front end drives it
//! (start a turn, record every run event, build each change set, choose, next turn:
//! each model continues its conversation with the next-turn note). Each model reads a file,
//! writes one and answers with about 2 KB of text per turn, so the conversations grow by a
//! fixed amount per turn.
//!
//! Printed after every turn: the process's resident memory (`VmRSS`), the bytes of every
//! model's conversation the engine holds (the reference: what a session must keep), and the
//! size of the session log. Linear growth shows as a constant increment per turn; the last
//! lines compare the mean increment of the first and the second half of the session (1.0 =
//! linear; a session that kept a full copy of each conversation per turn would approach 3x).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    missing_docs
)]

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use versus::agent::{Agent, AgentSettings, system_prompt};
use versus::engine::{
    ChoiceRequest, EngineEvent, EngineEvents, HistoryPolicy, Op, SessionEngine, TurnRequest,
    TurnTarget,
};
use versus::provider::demo::DemoModel;
use versus::runner::RunOptions;
use versus::session::{Source, Store};
use versus::tools::{ToolLimits, ToolRegistry};
use versus::workspace::Isolation;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn rss_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .args(["-c", "user.name=bench", "-c", "user.email=b@example.com"])
        .args(["-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(dir)
        .status()
        .unwrap()
        .success();
    assert!(ok, "git {args:?}");
}

fn script(model: usize, turns: usize) -> String {
    let answer = "The change keeps the public interface and adds a test. ".repeat(36);
    let mut out = String::new();
    for turn in 0..turns {
        let step = serde_json::json!({"say": "Reading first.", "tools": [
            {"name": "read_file", "args": {"path": "src/lib.txt"}},
            {"name": "write_file", "args": {"path": format!("notes/m{model}.txt"),
                "content": format!("turn {turn} of model {model}\n")}}]});
        out.push_str(&format!("{step}\n"));
        out.push_str(&format!(
            "{}\n",
            serde_json::json!({ "say": format!("{answer}({turn})") })
        ));
    }
    out
}

fn conversation_bytes(engine: &SessionEngine, labels: &[String]) -> usize {
    labels
        .iter()
        .map(|l| serde_json::to_vec(engine.conversation(l)).unwrap().len())
        .sum()
}

/// Waits for the answer `pick` recognises; panics on a failure.
async fn answer<T>(events: &mut EngineEvents, mut pick: impl FnMut(EngineEvent) -> Option<T>) -> T {
    loop {
        match events.recv().await.unwrap() {
            EngineEvent::Failed { op, error } => panic!("{op:?}: {error}"),
            event => {
                if let Some(found) = pick(event) {
                    return found;
                }
            }
        }
    }
}

fn main() {
    let turns = env_usize("VERSUS_BENCH_TURNS", 40);
    let models = env_usize("VERSUS_BENCH_MODELS", 4);
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("project");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/lib.txt"), "fn main() {}\n".repeat(50)).unwrap();
    git(&root, &["init", "-q"]);
    git(&root, &["add", "."]);
    git(&root, &["commit", "-qm", "init"]);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let tools = Arc::new(ToolRegistry::builtin());
    let labels: Vec<String> = (0..models).map(|m| format!("demo/m{m}")).collect();
    let targets: Vec<TurnTarget> = labels
        .iter()
        .enumerate()
        .map(|(m, label)| TurnTarget {
            label: label.clone(),
            agent: Agent {
                client: Arc::new(DemoModel::parse(label, &script(m, turns)).unwrap()),
                model: label.clone(),
                tools: Arc::clone(&tools),
                settings: AgentSettings {
                    system: system_prompt(&tools.guidance(), None),
                    ..AgentSettings::default()
                },
                cost: None,
            },
            window: None,
        })
        .collect();
    let store = Store::open(&root).unwrap();
    let engine = SessionEngine::create(store.clone(), Source::Tui, labels.clone()).unwrap();
    let log = engine.dir().join("events.jsonl");
    println!("{turns} turns x {models} models through the session engine");
    println!();
    println!("| turn | RSS | RSS +/turn | conversations held | session log |");
    println!("|---|---|---|---|---|");
    let start = rss_kb();
    let mut curve = vec![start];
    runtime.block_on(async {
        let (engine, mut events) = engine.spawn();
        for n in 0..turns {
            engine
                .submit(Op::StartTurn(TurnRequest {
                    prompt: format!("Turn {n}: improve the notes."),
                    attached: String::new(),
                    targets: targets.clone(),
                    options: RunOptions {
                        isolation: Isolation::Worktree,
                        limits: ToolLimits::default(),
                        setup: None,
                        workspace_parent: Some(tmp.path().join("ws")),
                        spill_dir: tmp.path().join("spill"),
                        output_filter: None,
                        sandbox: versus::exec::SandboxSettings::default(),
                        limit: None,
                        mcp: None,
                    },
                    policy: HistoryPolicy::default(),
                    check: None,
                    history_line: None,
                    workspaces: Default::default(),
                    context: Default::default(),
                    tasks: Vec::new(),
                }))
                .unwrap();
            let turn = answer(&mut events, |e| match e {
                EngineEvent::TurnEnded { turn, .. } => Some(turn),
                _ => None,
            })
            .await;
            engine
                .submit(Op::Choose(ChoiceRequest {
                    turn,
                    chosen: vec![labels[n % models].clone()],
                    ..ChoiceRequest::default()
                }))
                .unwrap();
            answer(&mut events, |e| {
                matches!(e, EngineEvent::Chosen(_)).then_some(())
            })
            .await;
            let rss = rss_kb();
            let step = rss.saturating_sub(*curve.last().unwrap());
            curve.push(rss);
            std::thread::sleep(std::time::Duration::from_millis(50)); // let the log writer catch up
            // The conversations the engine holds are inside its task: the reference column
            // is the last turn's, read back from the log once the session ends.
            println!(
                "| {} | {:.1} MB | {} KB | - | {:.1} KB |",
                turn,
                rss as f64 / 1024.0,
                step,
                std::fs::metadata(&log).map(|m| m.len()).unwrap_or(0) as f64 / 1024.0
            );
        }
        engine
            .submit(Op::Shutdown {
                keep_workspaces: false,
            })
            .unwrap();
        while events.recv().await.is_some() {}
    });
    let engine = SessionEngine::open(store, None, Source::Tui, None)
        .unwrap()
        .engine;
    let half = turns / 2;
    let first = (curve[half] as f64 - curve[1] as f64) / (half - 1).max(1) as f64;
    let second = (curve[turns] as f64 - curve[half] as f64) / (turns - half).max(1) as f64;
    println!();
    println!(
        "RSS per turn: first half {first:.0} KB, second half {second:.0} KB, ratio {:.2} (1.0 = linear)",
        second / first.max(1.0)
    );
    println!(
        "conversations held at the end: {:.1} KB; RSS growth over the session: {:.1} MB ({:.1}x the conversations)",
        conversation_bytes(&engine, &labels) as f64 / 1024.0,
        (curve[turns] - curve[1]) as f64 / 1024.0,
        (curve[turns] - curve[1]) as f64 * 1024.0 / conversation_bytes(&engine, &labels) as f64
    );
}
