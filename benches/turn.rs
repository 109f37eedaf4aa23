//! Turn latency: the time from Enter (a turn started through the session engine, as every
//! front end starts one) to the first model request, on a generated repository, against
//! `git worktree add` of the same repository timed in the same run.
//!
//! `cargo bench --bench turn`. `VERSUS_BENCH_FILES` (default 10,000) files totalling
//! `VERSUS_BENCH_MB` megabytes (default 200), `VERSUS_BENCH_MODELS` models (default 4),
//! `VERSUS_BENCH_RUNS` (default 5) later turns; `VERSUS_BENCH_DIR` for the temporary folder;
//! `VERSUS_BENCH_LOG=FILE` writes the library's debug log there.
//! The process enters its copy-on-write namespace first, as the binary does.
//!
//! Rows: the first turn of a run (no kept checkout: the frozen checkout is written), later
//! turns of the same session on the same state, a turn after the user edited a file and a
//! turn after 1,000 files changed (as a pick applied leaves them: the files changed and their
//! bytes in the session's blobs, where the pick's recorded proposals put them), each measured with the
//! uncommitted state laid as a thin layer over the kept checkout of the commit (now) and with
//! a whole checkout per state (before: `cow::set_layered(false)`), and the first turn of a
//! second run on the same commit and state (a new engine in the same process: the kept
//! checkout is found on disk). docs/benchmarks.md records the results.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    missing_docs
)]

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[path = "common/repo.rs"]
mod repo;

use repo::{generate, git, rel};
use tokio_util::sync::CancellationToken;
use versus::agent::{Agent, AgentSettings, system_prompt};
use versus::engine::{
    EngineEvent, EngineEvents, EngineHandle, HistoryPolicy, Op, SessionEngine, TurnRequest,
    TurnTarget,
};
use versus::model::ModelRequest;
use versus::provider::demo::DemoModel;
use versus::provider::{EventStream, ModelClient};
use versus::runner::RunOptions;
use versus::session::{Source, Store};
use versus::tools::{ToolLimits, ToolRegistry};
use versus::workspace::Isolation;

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

/// A demo model that notes when each of its requests was sent.
struct Stamped {
    inner: DemoModel,
    sent: Arc<Mutex<Vec<Instant>>>,
}

impl ModelClient for Stamped {
    fn provider(&self) -> &str {
        self.inner.provider()
    }

    fn stream(&self, request: ModelRequest, cancel: CancellationToken) -> EventStream {
        tracing::debug!(target: "versus::bench", "request sent");
        self.sent.lock().unwrap().push(Instant::now());
        self.inner.stream(request, cancel)
    }
}

struct Run {
    engine: EngineHandle,
    events: EngineEvents,
    targets: Vec<TurnTarget>,
    sent: Arc<Mutex<Vec<Instant>>>,
}

fn open_run(runtime: &tokio::runtime::Runtime, root: &Path, models: usize, turns: usize) -> Run {
    let tools = Arc::new(ToolRegistry::builtin());
    let sent = Arc::new(Mutex::new(Vec::new()));
    let script = "{\"say\": \"Nothing to change.\"}\n".repeat(turns);
    let labels: Vec<String> = (0..models).map(|m| format!("demo/m{m}")).collect();
    let targets = labels
        .iter()
        .map(|label| TurnTarget {
            label: label.clone(),
            agent: Agent {
                client: Arc::new(Stamped {
                    inner: DemoModel::parse(label, &script).unwrap(),
                    sent: Arc::clone(&sent),
                }),
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
    let store = Store::open(root).unwrap();
    let _runtime = runtime.enter();
    let (engine, events) = SessionEngine::create(store, Source::Tui, labels)
        .unwrap()
        .spawn();
    Run {
        engine,
        events,
        targets,
        sent,
    }
}

/// One turn: Enter to the first model request, and Enter to the end of the turn.
fn turn(runtime: &tokio::runtime::Runtime, run: &mut Run, parent: &Path) -> (Duration, Duration) {
    run.sent.lock().unwrap().clear();
    tracing::debug!(target: "versus::bench", "enter");
    let enter = Instant::now();
    runtime.block_on(async {
        run.engine
            .submit(Op::StartTurn(TurnRequest {
                prompt: "Say hello.".into(),
                attached: String::new(),
                targets: run.targets.clone(),
                options: RunOptions {
                    isolation: Isolation::Worktree,
                    limits: ToolLimits::default(),
                    setup: None,
                    workspace_parent: Some(parent.to_path_buf()),
                    spill_dir: parent.with_file_name("spill"),
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
        loop {
            match run.events.recv().await.unwrap() {
                EngineEvent::TurnEnded { .. } => break,
                EngineEvent::Failed { op, error } => panic!("{op:?}: {error}"),
                _ => {}
            }
        }
    });
    let whole = enter.elapsed();
    let first = *run.sent.lock().unwrap().iter().min().unwrap();
    (first - enter, whole)
}

/// The folder of the project's only session (the bench's first run).
fn session_folder(root: &Path) -> PathBuf {
    let sessions: Vec<PathBuf> = fs::read_dir(root.join(".versus/sessions"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(sessions.len(), 1, "one session: {sessions:?}");
    sessions.into_iter().next().unwrap()
}

/// Ends the run's session and waits for the engine to close it.
fn close(runtime: &tokio::runtime::Runtime, mut run: Run) {
    run.engine
        .submit(Op::Shutdown {
            keep_workspaces: false,
        })
        .unwrap();
    runtime.block_on(async { while run.events.recv().await.is_some() {} });
}

fn main() {
    if let Some(scratch) = std::env::var_os(versus::workspace::cow::PROBE_ENV) {
        if let Err(why) = versus::workspace::cow::probe(Path::new(&scratch)) {
            eprintln!("{why}");
            std::process::exit(1);
        }
        return;
    }
    let files = env_or("VERSUS_BENCH_FILES", 10_000).max(4);
    let mb = env_or("VERSUS_BENCH_MB", 200);
    let models = env_or("VERSUS_BENCH_MODELS", 4);
    let runs = env_or("VERSUS_BENCH_RUNS", 5).max(1);
    let scratch = match std::env::var("VERSUS_BENCH_DIR") {
        Ok(dir) => tempfile::tempdir_in(dir).unwrap(),
        Err(_) => tempfile::tempdir().unwrap(),
    };
    let scratch_path: PathBuf = scratch.path().canonicalize().unwrap();
    let parent = scratch_path.join("workspaces");
    // As the binary does, before any thread starts.
    let cow = versus::workspace::cow::enter(&parent);
    let root = scratch_path.join("repo");
    fs::create_dir_all(&root).unwrap();
    let t = Instant::now();
    generate(&root, files, mb * 1024 * 1024 / files);
    println!(
        "versus turn latency: {files} files, {mb} MB, {models} instant models, copy-on-write: {}, \
         median of {runs} (repository generated in {:.1} s)\n",
        match &cow {
            Ok(()) => "yes".to_string(),
            Err(why) => format!("no ({why})"),
        },
        t.elapsed().as_secs_f64()
    );
    // `VERSUS_BENCH_LOG=FILE`: the library's debug log (where a turn's time goes).
    if let Some(log) = std::env::var_os("VERSUS_BENCH_LOG") {
        let file = fs::File::create(log).unwrap();
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new("versus=debug"))
            .with_writer(Mutex::new(file))
            .with_ansi(false)
            .init();
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let turns = 8 * runs + 8;
    let mut run = open_run(&runtime, &root, models, turns);

    // Reference: `git worktree add --detach` of the same repository (and its removal, untimed).
    let mut reference = Vec::new();
    for i in 0..runs {
        let dir = scratch_path.join(format!("wt{i}"));
        let t = Instant::now();
        git(
            &root,
            &[
                "worktree",
                "add",
                "-q",
                "--detach",
                dir.to_str().unwrap(),
                "HEAD",
            ],
        );
        reference.push(t.elapsed());
        git(
            &root,
            &["worktree", "remove", "--force", dir.to_str().unwrap()],
        );
    }
    let reference = median(reference);

    let (first_turn, first_whole) = turn(&runtime, &mut run, &parent);
    let mut later = Vec::new();
    let mut later_whole = Vec::new();
    for _ in 0..runs {
        let (f, w) = turn(&runtime, &mut run, &parent);
        later.push(f);
        later_whole.push(w);
    }
    // The user edits a file between turns, or 1,000 files changed (a pick applied): measured
    // with a whole checkout per state (before) and with the state laid over the kept checkout
    // of the commit (now).
    let mut edited = Vec::new();
    let mut edited_before = Vec::new();
    let mut picked = Vec::new();
    let mut picked_before = Vec::new();
    let mut serial = 0;
    // The session's blob folder: where a pick's proposals are recorded, one file per content
    // named by its blake3 (the session's recorder writes them when the model proposes).
    let blobs = session_folder(&root).join(versus::session::BLOBS_DIR);
    fs::create_dir_all(&blobs).unwrap();
    // `count` files changed; `picked`: by a pick, whose recorded proposals hold their bytes.
    let mut edit = |count: usize, picked: bool| {
        for k in 0..count {
            let i = (serial * 7919 + k * (files / count.max(1)).max(1)) % files;
            let path = root.join(rel(i));
            let mut f = fs::OpenOptions::new().append(true).open(&path).unwrap();
            writeln!(f, "// the user's edit {serial}").unwrap();
            if picked {
                let bytes = fs::read(&path).unwrap();
                fs::write(blobs.join(blake3::hash(&bytes).to_hex().as_str()), bytes).unwrap();
            }
        }
        serial += 1;
    };
    // Layered first: a whole checkout's writeback and its eviction in the background would
    // otherwise slow the turns after it. After each measured turn the files go back to the
    // commit (`git checkout`), so every state differs from the commit by exactly its case.
    for layered in [true, false] {
        versus::workspace::cow::set_layered(layered);
        for _ in 0..runs {
            edit(1, false);
            let took = turn(&runtime, &mut run, &parent).0;
            if layered {
                edited.push(took)
            } else {
                edited_before.push(took)
            }
            git(&root, &["checkout", "-q", "--", "."]);
            edit(1_000.min(files), true);
            let took = turn(&runtime, &mut run, &parent).0;
            if layered {
                picked.push(took)
            } else {
                picked_before.push(took)
            }
            git(&root, &["checkout", "-q", "--", "."]);
        }
        versus::workspace::settle_removals();
    }
    versus::workspace::cow::set_layered(true);
    close(&runtime, run);
    // A new session on the same commit and state: a new engine finds the kept checkout (the
    // capture's hash cache is this process's, as for a new session opened in the TUI).
    let mut again = Vec::new();
    for _ in 0..runs {
        let mut second = open_run(&runtime, &root, models, 2);
        again.push(turn(&runtime, &mut second, &parent).0);
        close(&runtime, second);
    }
    let ratio = |d: Duration| d.as_secs_f64() / reference.as_secs_f64();
    println!(
        "| case | Enter to first model request | whole turn | reference (`git worktree add`) | ratio |"
    );
    println!("|---|---|---|---|---|");
    println!(
        "| first turn (checkout written) | {} | {} | {} | {:.2}x |",
        ms(first_turn),
        ms(first_whole),
        ms(reference),
        ratio(first_turn)
    );
    println!(
        "| later turn, same state | {} | {} | {} | {:.2}x |",
        ms(median(later.clone())),
        ms(median(later_whole)),
        ms(reference),
        ratio(median(later))
    );
    for (case, now, before) in [
        ("after the user edited a file", edited, edited_before),
        (
            "after 1,000 files changed (a pick applied)",
            picked,
            picked_before,
        ),
    ] {
        println!(
            "| later turn {case}, whole checkout of the state (before) | {} | - | {} | {:.2}x |",
            ms(median(before.clone())),
            ms(reference),
            ratio(median(before))
        );
        println!(
            "| later turn {case}, layer over the kept checkout of the commit | {} | - | {} | {:.2}x |",
            ms(median(now.clone())),
            ms(reference),
            ratio(median(now))
        );
    }
    println!(
        "| first turn of a new session in this process, same commit and state | {} | - | {} | {:.2}x |",
        ms(median(again.clone())),
        ms(reference),
        ratio(median(again))
    );
    versus::workspace::settle_removals();
    let _ = versus::workspace::clean_workspaces_in(&parent);
}
