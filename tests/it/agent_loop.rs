//! The agent loop and the runner, driven by scripted demo models on real temporary projects:
//! tool dispatch into each model's own workspace, error results the model sees, limits,
//! cancellation, and partial proposals kept when a run ends early.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util;

use util::{fan_out, git};

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use versus::agent::{Agent, AgentSettings, CostFn, system_prompt};
use versus::model::{AgentEvent, Message, Part, Role, RunStop};
use versus::provider::demo::DemoModel;
use versus::runner::{
    Concurrency, EntryRun, ModelEntry, ModelResult, RunEvent, RunOptions, fan_out_each,
};
use versus::tools::{ToolLimits, ToolRegistry};
use versus::workspace::{Base, Isolation};

/// A git repository with one committed file and one uncommitted edit.
fn project() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    std::fs::write(root.join("notes.txt"), "alpha\nbeta\n").unwrap();
    std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
    git(&root, &["init", "-q"]);
    git(&root, &["add", "."]);
    git(&root, &["commit", "-qm", "init"]);
    std::fs::write(root.join("notes.txt"), "alpha\nbeta\ngamma\n").unwrap();
    (tmp, root)
}

fn entry(label: &str, script: &str, settings: AgentSettings, cost: Option<CostFn>) -> ModelEntry {
    let tools = Arc::new(ToolRegistry::builtin());
    let settings = AgentSettings {
        system: system_prompt(&tools.guidance(), None),
        ..settings
    };
    ModelEntry {
        label: label.to_string(),
        agent: Agent {
            client: Arc::new(DemoModel::parse(label, script).unwrap()),
            model: label.to_string(),
            tools,
            settings,
            cost,
        },
        history: Vec::new(),
    }
}

fn options(scratch: &Path) -> RunOptions {
    RunOptions {
        isolation: Isolation::Worktree,
        limits: ToolLimits::default(),
        setup: None,
        workspace_parent: Some(scratch.join("ws")),
        spill_dir: scratch.join("spill"),
        output_filter: None,
        sandbox: versus::exec::SandboxSettings::default(),
        limit: None,
        mcp: None,
    }
}

struct Finished {
    results: Vec<ModelResult>,
    events: Vec<Vec<AgentEvent>>,
}

async fn run_all(
    root: &Path,
    scratch: &Path,
    entries: Vec<ModelEntry>,
    cancel_after: Option<Duration>,
) -> Finished {
    let n = entries.len();
    let base = Arc::new(Base::capture(root).unwrap());
    let (mut rx, handle) = fan_out(base, entries, Message::user("do it"), options(scratch));
    if let Some(delay) = cancel_after {
        let handle = handle.clone();
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            handle.cancel();
        });
    }
    let mut results: Vec<Option<ModelResult>> = (0..n).map(|_| None).collect();
    let mut events = vec![Vec::new(); n];
    while let Some(event) = rx.recv().await {
        match event {
            RunEvent::Agent { entry, event } => events[entry].push(event),
            RunEvent::Finished { entry, result } => results[entry] = Some(*result),
            RunEvent::WorkspaceReady { .. }
            | RunEvent::Started { .. }
            | RunEvent::ToolsGiven { .. } => {}
        }
    }
    Finished {
        results: results.into_iter().map(Option::unwrap).collect(),
        events,
    }
}

fn tool_results(messages: &[Message]) -> Vec<(String, String, bool)> {
    messages
        .iter()
        .filter(|m| m.role == Role::User)
        .flat_map(|m| m.parts.iter())
        .filter_map(|p| match p {
            Part::ToolResult {
                call_id,
                content,
                is_error,
                ..
            } => Some((call_id.clone(), content.clone(), *is_error)),
            _ => None,
        })
        .collect()
}

const READ_WRITE_EDIT_TEST: &str = r#"
{"say": "Reading.", "tools": [{"name": "read_file", "args": {"path": "notes.txt"}}]}
{"tools": [{"name": "write_file", "args": {"path": "src/new.txt", "content": "one\n"}}, {"name": "edit_file", "args": {"path": "src/new.txt", "old_string": "one", "new_string": "two"}}]}
{"tools": [{"name": "bash", "args": {"command": "cat src/new.txt && grep -c . notes.txt"}}]}
{"tools": [{"name": "search_code", "args": {"pattern": "two"}}]}
{"say": "All done."}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_reads_writes_edits_and_tests_in_its_own_workspace() {
    let (_tmp, root) = project();
    let scratch = tempfile::tempdir().unwrap();
    let before = std::fs::read(root.join("notes.txt")).unwrap();
    let run = run_all(
        &root,
        scratch.path(),
        vec![entry(
            "demo/a",
            READ_WRITE_EDIT_TEST,
            AgentSettings::default(),
            None,
        )],
        None,
    )
    .await;
    let result = &run.results[0];
    let outcome = result.outcome.as_ref().unwrap();
    assert_eq!(outcome.stop, RunStop::Completed, "{outcome:#?}");
    assert_eq!(outcome.final_text, "All done.");
    assert_eq!(outcome.stats.steps, 5);
    assert_eq!(outcome.stats.tool_calls, 5);
    assert_eq!(outcome.stats.tool_errors, 0, "{:#?}", outcome.messages);

    let results = tool_results(&outcome.messages);
    let ids: Vec<&str> = results.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(
        ids,
        ["demo_0_0", "demo_1_0", "demo_1_1", "demo_2_0", "demo_3_0"]
    );
    // The uncommitted third line is visible to the model, bash sees its own edit.
    assert!(results[0].1.contains("gamma"), "{}", results[0].1);
    assert!(results[3].1.contains("two"), "{}", results[3].1);
    assert!(results[3].1.contains('3'), "{}", results[3].1);
    assert!(results[4].1.contains("src/new.txt"), "{}", results[4].1);

    // The proposals: write then edit, in order; the user's tree is untouched.
    let paths: Vec<(&str, &str)> = result
        .writes
        .iter()
        .map(|w| (w.path.as_str(), w.origin.tool.as_str()))
        .collect();
    assert_eq!(
        paths,
        [("src/new.txt", "write_file"), ("src/new.txt", "edit_file")]
    );
    assert_eq!(std::fs::read(root.join("notes.txt")).unwrap(), before);
    assert!(!root.join("src/new.txt").exists());

    // The event stream: steps, tool calls with results, usage, and one Finished at the end.
    let events = &run.events[0];
    assert!(matches!(
        events.first(),
        Some(AgentEvent::StepStarted { step: 1 })
    ));
    assert!(matches!(
        events.last(),
        Some(AgentEvent::Finished {
            stop: RunStop::Completed
        })
    ));
    let results_seen = events
        .iter()
        .filter(|e| matches!(e, AgentEvent::ToolResult { .. }))
        .count();
    assert_eq!(results_seen, 5);
    assert!(events.iter().any(|e| matches!(e, AgentEvent::Usage { .. })));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_calls_become_error_results_the_model_sees() {
    let (_tmp, root) = project();
    let scratch = tempfile::tempdir().unwrap();
    let script = r#"
{"tools": [{"name": "read_file", "raw_args": "{\"path\": \"notes.txt\""}, {"name": "launch_rocket", "args": {}}, {"name": "read_file", "args": {"path": 7}}, {"name": "edit_file", "args": {"path": "notes.txt", "old_string": "zeta", "new_string": "eta"}}]}
{"say": "I see the errors."}
"#;
    let run = run_all(
        &root,
        scratch.path(),
        vec![entry("demo/bad", script, AgentSettings::default(), None)],
        None,
    )
    .await;
    let outcome = run.results[0].outcome.as_ref().unwrap();
    assert_eq!(outcome.stop, RunStop::Completed);
    let results = tool_results(&outcome.messages);
    assert_eq!(results.len(), 4);
    assert!(results.iter().all(|r| r.2), "all are errors: {results:#?}");
    assert!(results[0].1.contains("not valid JSON"), "{}", results[0].1);
    assert!(
        results[1].1.contains("unknown tool `launch_rocket`"),
        "{}",
        results[1].1
    );
    assert!(results[2].1.contains("path"), "{}", results[2].1);
    assert_eq!(outcome.stats.tool_errors, 4);
    assert_eq!(outcome.stats.failed_edits, 1);
    assert!(run.results[0].writes.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limits_end_the_run_and_keep_partial_proposals() {
    let (_tmp, root) = project();
    let scratch = tempfile::tempdir().unwrap();
    let looping = r#"
{"tools": [{"name": "write_file", "args": {"path": "a.txt", "content": "1\n"}}]}
{"tools": [{"name": "write_file", "args": {"path": "b.txt", "content": "2\n"}}]}
{"tools": [{"name": "write_file", "args": {"path": "c.txt", "content": "3\n"}}]}
{"say": "never reached"}
"#;
    let failing = r#"
{"tools": [{"name": "write_file", "args": {"path": "kept.txt", "content": "partial\n"}}]}
{"error": "overloaded_error: the server is overloaded"}
"#;
    let price: CostFn = Arc::new(|usage| Some(usage.output as f64));
    let run = run_all(
        &root,
        scratch.path(),
        vec![
            entry(
                "demo/steps",
                looping,
                AgentSettings {
                    max_steps: 2,
                    ..AgentSettings::default()
                },
                None,
            ),
            entry(
                "demo/cost",
                looping,
                AgentSettings {
                    max_cost: Some(0.5),
                    ..AgentSettings::default()
                },
                Some(price),
            ),
            entry("demo/error", failing, AgentSettings::default(), None),
        ],
        None,
    )
    .await;
    let steps = &run.results[0];
    assert_eq!(steps.outcome.as_ref().unwrap().stop, RunStop::MaxSteps);
    assert_eq!(steps.writes.len(), 2, "the last permitted step's calls ran");

    let cost = &run.results[1];
    let outcome = cost.outcome.as_ref().unwrap();
    assert_eq!(outcome.stop, RunStop::MaxCost);
    assert_eq!(cost.writes.len(), 1);
    assert!(outcome.error.as_deref().unwrap().contains("limit"));

    let failed = &run.results[2];
    let outcome = failed.outcome.as_ref().unwrap();
    assert_eq!(outcome.stop, RunStop::Error);
    assert!(outcome.error.as_deref().unwrap().contains("overloaded"));
    assert_eq!(failed.writes.len(), 1, "partial proposal kept");
    assert_eq!(failed.writes[0].path, "kept.txt");
    assert!(
        run.events[2].iter().any(
            |e| matches!(e, AgentEvent::Error { message, .. } if message.contains("overloaded"))
        )
    );
    // The transcript up to the failure is kept.
    assert_eq!(tool_results(&outcome.messages).len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_and_timeout_stop_bash_and_keep_what_was_written() {
    let (_tmp, root) = project();
    let scratch = tempfile::tempdir().unwrap();
    // Unique among the test modules, which share one process id in the one test binary.
    let marker = format!("301.{}", std::process::id());
    let script = format!(
        r#"{{"tools": [{{"name": "write_file", "args": {{"path": "before.txt", "content": "x\n"}}}}]}}
{{"tools": [{{"name": "bash", "args": {{"command": "setsid sleep {marker}1 & sleep {marker}; wait"}}}}]}}
{{"say": "never"}}
"#
    );
    let timeout_script = script.replace(&format!("sleep {marker}"), &format!("sleep {marker}2"));
    let run = run_all(
        &root,
        scratch.path(),
        vec![
            entry("demo/cancel", &script, AgentSettings::default(), None),
            entry(
                "demo/slow",
                &timeout_script,
                AgentSettings {
                    timeout: Duration::from_secs(2),
                    ..AgentSettings::default()
                },
                None,
            ),
        ],
        Some(Duration::from_secs(3)),
    )
    .await;
    let cancelled = &run.results[0];
    let outcome = cancelled.outcome.as_ref().unwrap();
    assert_eq!(outcome.stop, RunStop::Cancelled);
    assert_eq!(cancelled.writes.len(), 1);
    let timed = &run.results[1];
    let outcome = timed.outcome.as_ref().unwrap();
    assert_eq!(outcome.stop, RunStop::Timeout, "{outcome:#?}");
    assert_eq!(timed.writes.len(), 1);
    assert!(outcome.error.as_deref().unwrap().contains("timeout"));
    // The conversation stays valid: the interrupted call has a result.
    assert_eq!(tool_results(&outcome.messages).len(), 2);
    // Both background sleepers were killed with their process groups.
    for sleeper in [
        marker.clone(),
        format!("{marker}1"),
        format!("{marker}2"),
        format!("{marker}21"),
    ] {
        assert!(
            util::command_gone(&["sleep", &sleeper]),
            "background sleep {sleeper} survived"
        );
    }
    assert!(!root.join("before.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_models_on_the_same_file_never_see_each_other() {
    let (_tmp, root) = project();
    let scratch = tempfile::tempdir().unwrap();
    let script = |word: &str| {
        format!(
            r#"{{"tools": [{{"name": "edit_file", "args": {{"path": "notes.txt", "old_string": "beta", "new_string": "{word}"}}}}]}}
{{"tools": [{{"name": "read_file", "args": {{"path": "notes.txt"}}}}]}}
{{"say": "ok"}}
"#
        )
    };
    let run = run_all(
        &root,
        scratch.path(),
        vec![
            entry("demo/x", &script("from-x"), AgentSettings::default(), None),
            entry("demo/y", &script("from-y"), AgentSettings::default(), None),
        ],
        None,
    )
    .await;
    let seen = |i: usize| {
        tool_results(&run.results[i].outcome.as_ref().unwrap().messages)[1]
            .1
            .clone()
    };
    assert!(seen(0).contains("from-x") && !seen(0).contains("from-y"));
    assert!(seen(1).contains("from-y") && !seen(1).contains("from-x"));
    assert_eq!(
        std::fs::read_to_string(root.join("notes.txt")).unwrap(),
        "alpha\nbeta\ngamma\n"
    );
}

/// A client that always answers with the same made-up call id, as providers without ids do.
struct RepeatingIds {
    calls: std::sync::atomic::AtomicUsize,
}

impl versus::provider::ModelClient for RepeatingIds {
    fn provider(&self) -> &str {
        "test"
    }

    fn stream(
        &self,
        _request: versus::model::ModelRequest,
        _cancel: tokio_util::sync::CancellationToken,
    ) -> versus::provider::EventStream {
        use futures::StreamExt;
        use versus::model::{Completion, StopReason, StreamEvent, Usage};
        let n = self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let parts = if n < 2 {
            vec![Part::ToolCall {
                id: "call_0_read_file".into(),
                name: "read_file".into(),
                arguments: r#"{"path": "notes.txt"}"#.into(),
                replay: None,
            }]
        } else {
            vec![Part::text("done")]
        };
        let completion = Completion {
            message: Message {
                role: Role::Assistant,
                parts,
            },
            usage: Usage::default(),
            stop: StopReason::EndTurn,
        };
        futures::stream::iter(vec![Ok(StreamEvent::Completed(completion))]).boxed()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repeated_call_ids_are_made_unique_in_the_conversation() {
    let (_tmp, root) = project();
    let scratch = tempfile::tempdir().unwrap();
    let mut model = entry("x", "", AgentSettings::default(), None);
    model.agent.client = Arc::new(RepeatingIds {
        calls: std::sync::atomic::AtomicUsize::new(0),
    });
    let run = run_all(&root, scratch.path(), vec![model], None).await;
    let outcome = run.results[0].outcome.as_ref().unwrap();
    assert_eq!(outcome.stop, RunStop::Completed);
    let ids: Vec<String> = outcome
        .messages
        .iter()
        .flat_map(|m| m.tool_calls().map(|(id, _, _)| id.to_string()))
        .collect();
    assert_eq!(ids, ["call_0_read_file", "call_0_read_file_s2"]);
    let results: Vec<String> = tool_results(&outcome.messages)
        .into_iter()
        .map(|r| r.0)
        .collect();
    assert_eq!(results, ids, "each result answers its own call");
}

/// Every event of a fan-out, in arrival order, as (entry, what) with `what` one of
/// `workspace`, `event` or `finished`; plus each entry's result.
async fn collect(
    mut rx: tokio::sync::mpsc::UnboundedReceiver<RunEvent>,
    n: usize,
) -> (Vec<(usize, &'static str)>, Vec<ModelResult>) {
    let mut order = Vec::new();
    let mut results: Vec<Option<ModelResult>> = (0..n).map(|_| None).collect();
    while let Some(event) = rx.recv().await {
        match event {
            RunEvent::Started { .. } | RunEvent::ToolsGiven { .. } => {}
            RunEvent::WorkspaceReady { entry, .. } => order.push((entry, "workspace")),
            RunEvent::Agent { entry, .. } => order.push((entry, "event")),
            RunEvent::Finished { entry, result } => {
                order.push((entry, "finished"));
                results[entry] = Some(*result);
            }
        }
    }
    (order, results.into_iter().map(Option::unwrap).collect())
}

fn run_of(entry: ModelEntry, prompt: &str) -> EntryRun {
    EntryRun {
        entry,
        prompt: Message::user(prompt),
        cancel: CancellationToken::new(),
        workspace: None,
    }
}

const PAUSED_WRITE: &str = r#"
{"say": "Writing slowly now.", "token_delay_ms": 30, "tools": [{"name": "write_file", "args": {"path": "out.txt", "content": "done\n"}}]}
{"say": "Done."}
"#;

/// Issue 23: a concurrency limit shared by fan-outs. With one place, three entries of one
/// fan-out run one after the other in entry order, and a second fan-out given the same limit
/// starts only after the first one's last entry ended.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_limit_runs_entries_one_at_a_time_in_order() {
    let (_tmp, root) = project();
    let scratch = tempfile::tempdir().unwrap();
    let base = Arc::new(Base::capture(&root).unwrap());
    let limit = Concurrency::new(1);
    let options = RunOptions {
        limit: Some(limit.clone()),
        ..options(scratch.path())
    };
    let runs = |names: &[&str]| -> Vec<EntryRun> {
        names
            .iter()
            .map(|n| run_of(entry(n, PAUSED_WRITE, AgentSettings::default(), None), "go"))
            .collect()
    };
    let first = fan_out_each(
        Arc::clone(&base),
        runs(&["demo/a", "demo/b", "demo/c"]),
        options.clone(),
    );
    let second = fan_out_each(Arc::clone(&base), runs(&["demo/d"]), options);
    let ((order, results), (later, _)) = tokio::join!(collect(first, 3), collect(second, 1));
    assert!(
        results
            .iter()
            .all(|r| r.outcome.as_ref().unwrap().stop == RunStop::Completed)
    );
    // Entry k's first sign of life comes after entry k-1 finished.
    let started = |k: usize| order.iter().position(|(e, _)| *e == k).unwrap();
    let finished = |k: usize| order.iter().position(|x| *x == (k, "finished")).unwrap();
    assert!(started(1) > finished(0), "{order:?}");
    assert!(started(2) > finished(1), "{order:?}");
    assert_eq!(later.first(), Some(&(0, "workspace")), "{later:?}");
    assert_eq!(limit.available(), 1, "every place is given back");
}

/// Issue 23: an entry cancelled while it waits for its place ends cancelled without running
/// (no workspace made), and the others are not held up by it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_entry_cancelled_while_waiting_ends_without_running() {
    let (_tmp, root) = project();
    let scratch = tempfile::tempdir().unwrap();
    let base = Arc::new(Base::capture(&root).unwrap());
    let options = RunOptions {
        limit: Some(Concurrency::new(1)),
        ..options(scratch.path())
    };
    let runs: Vec<EntryRun> = ["demo/a", "demo/b", "demo/c"]
        .iter()
        .map(|n| run_of(entry(n, PAUSED_WRITE, AgentSettings::default(), None), "go"))
        .collect();
    runs[1].cancel.cancel();
    let (order, results) = collect(fan_out_each(base, runs, options), 3).await;
    let b = &results[1];
    assert_eq!(b.outcome.as_ref().unwrap().stop, RunStop::Cancelled);
    assert!(b.workspace.is_none() && b.writes.is_empty(), "{b:?}");
    assert!(!order.contains(&(1, "workspace")), "{order:?}");
    assert_eq!(
        results[2].outcome.as_ref().unwrap().stop,
        RunStop::Completed
    );
}

/// Two turns of one demo model (it takes up its script where the conversation is): a write,
/// then a command that reads it and adds to it.
const TWO_TURNS: &str = r#"
{"say": "Writing now.", "tools": [{"name": "write_file", "args": {"path": "out.txt", "content": "done\n"}}]}
{"say": "Done."}
{"tools": [{"name": "bash", "args": {"command": "cat out.txt && echo more >> out.txt"}}]}
{"say": "Continued."}
"#;

/// Issue 23: workspace reuse. An entry given the workspace of its previous turn continues in
/// it (same root, the earlier turn's file there, no setup run again), and its proposals are
/// taken against the turn's base: the earlier write and the new change together.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_entry_continues_in_the_workspace_of_its_previous_turn() {
    let (_tmp, root) = project();
    let scratch = tempfile::tempdir().unwrap();
    let base = Arc::new(Base::capture(&root).unwrap());
    let options = RunOptions {
        isolation: Isolation::Copy,
        setup: Some("echo setup >> setup-runs.txt".to_string()),
        ..options(scratch.path())
    };
    let first = run_of(
        entry("demo/a", TWO_TURNS, AgentSettings::default(), None),
        "one",
    );
    let (order, mut results) = collect(
        fan_out_each(Arc::clone(&base), vec![first], options.clone()),
        1,
    )
    .await;
    assert_eq!(order.first(), Some(&(0, "workspace")));
    let done = results.remove(0);
    let workspace = done.workspace.unwrap();
    let root_then = workspace.root().to_path_buf();
    let mut next = run_of(
        entry("demo/a", TWO_TURNS, AgentSettings::default(), None),
        "two",
    );
    next.entry.history = done.outcome.unwrap().messages;
    next.workspace = Some(workspace);
    let (_, mut results) = collect(fan_out_each(base, vec![next], options), 1).await;
    let done = results.remove(0);
    let outcome = done.outcome.unwrap();
    assert_eq!(outcome.stop, RunStop::Completed, "{:?}", outcome.error);
    let seen = tool_results(&outcome.messages);
    assert!(
        seen.last().unwrap().1.starts_with("done\n"),
        "the earlier turn's file is there: {seen:?}"
    );
    let ws = done.workspace.unwrap();
    assert_eq!(ws.root(), root_then, "the same workspace");
    assert_eq!(
        std::fs::read_to_string(ws.root().join("setup-runs.txt")).unwrap(),
        "setup\n",
        "the setup ran once"
    );
    let paths: Vec<&str> = done.writes.iter().map(|w| w.path.as_str()).collect();
    assert!(paths.contains(&"out.txt"), "{paths:?}");
    assert_eq!(
        std::fs::read_to_string(ws.root().join("out.txt")).unwrap(),
        "done\nmore\n"
    );
}
