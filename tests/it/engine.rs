//! The session engine through its public API, as every front end drives it: turns of scripted
//! demo models on a real temporary git project, the session log they leave, and a session
//! reopened from it.

use crate::util;

use util::git;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use versus::agent::{Agent, AgentSettings, system_prompt};
use versus::engine::{ChoiceRequest, HistoryPolicy, SessionEngine, TurnRequest, TurnTarget};
use versus::provider::demo::DemoModel;
use versus::runner::RunOptions;
use versus::session::{Source, Store};
use versus::tools::{ToolLimits, ToolRegistry};
use versus::workspace::Isolation;

fn project() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap().join("project");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("notes.txt"), "alpha\nbeta\n").unwrap();
    git(&root, &["init", "-q"]);
    git(&root, &["add", "."]);
    git(&root, &["commit", "-qm", "init"]);
    (tmp, root)
}

/// The ownership key of a test project, beside it: library tests never write the key of
/// whoever runs them.
fn test_key(root: &Path) -> versus::session::OwnerKey {
    versus::session::OwnerKey::at(&root.parent().unwrap().join("state/store-key")).unwrap()
}

/// A demo model answering every turn with the same step: `say`, and a write when given.
fn target(label: &str, say: &str, write: Option<(&str, &str)>, turns: usize) -> TurnTarget {
    let tools = Arc::new(ToolRegistry::builtin());
    let mut script = String::new();
    for n in 0..turns {
        let mut step = serde_json::json!({ "say": format!("{say} ({n})") });
        if let Some((path, content)) = write {
            step["tools"] = serde_json::json!([{"name": "write_file",
                "args": {"path": path, "content": format!("{content} {n}\n")}}]);
            script.push_str(&format!("{step}\n{{\"say\": \"done {n}\"}}\n"));
        } else {
            script.push_str(&format!("{step}\n"));
        }
    }
    TurnTarget {
        label: label.to_string(),
        agent: Agent {
            client: Arc::new(DemoModel::parse(label, &script).unwrap()),
            model: label.to_string(),
            settings: AgentSettings {
                system: system_prompt(&tools.guidance(), None),
                ..AgentSettings::default()
            },
            tools,
            cost: None,
        },
        window: None,
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
    }
}

/// Runs one turn to its end the way `versus ask` does; returns the turn number.
async fn turn(
    engine: &mut SessionEngine,
    prompt: &str,
    targets: Vec<TurnTarget>,
    scratch: &Path,
) -> u32 {
    let launch = engine
        .start_turn(TurnRequest {
            prompt: prompt.to_string(),
            attached: String::new(),
            targets,
            options: options(scratch),
            policy: HistoryPolicy::default(),
        })
        .unwrap();
    let driven = engine
        .drive_turn(launch, std::future::pending(), |_| {})
        .await
        .unwrap();
    for (_, set) in &driven.models {
        assert!(set.is_ok(), "{set:?}");
    }
    driven.turn
}

/// Regression: after a turn addressed to some models only (`/resume` re-runs the interrupted
/// ones), a continued session came back with only those models.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_continued_session_keeps_every_model_after_a_turn_for_some_of_them() {
    let (tmp, root) = project();
    let (a, b) = ("demo/a", "demo/b");
    let store = Store::open_with(&root, test_key(&root)).unwrap();
    let mut engine =
        SessionEngine::create(store.clone(), Source::Tui, vec![a.into(), b.into()]).unwrap();
    turn(
        &mut engine,
        "first",
        vec![target(a, "A", None, 1), target(b, "B", None, 2)],
        tmp.path(),
    )
    .await;
    // Like /resume: only model b is addressed.
    turn(
        &mut engine,
        "go on",
        vec![target(b, "B", None, 2)],
        tmp.path(),
    )
    .await;
    engine.finish();
    drop(engine);

    let reopened = SessionEngine::open(store, None, Source::Tui, None).unwrap();
    assert_eq!(reopened.engine.models(), [a, b]);
    assert_eq!(reopened.log.last_models(), [a, b]);
    // b's conversation holds both turns; a's the first.
    assert_eq!(reopened.engine.conversation(a).len(), 2);
    assert_eq!(reopened.engine.conversation(b).len(), 4);
    // The last turn had no choice yet: it comes back for review, with nothing to re-run.
    let restored = reopened.restored.expect("the unchosen turn comes back");
    assert_eq!(restored.turn, 2);
    assert_eq!(
        restored
            .finished
            .iter()
            .map(|f| f.label.as_str())
            .collect::<Vec<_>>(),
        [b]
    );
    assert!(restored.unfinished.is_empty());
}

/// The log grows with the conversation, not with its square: each turn writes only the
/// messages it added, and a reopened session reads the whole conversation back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_turn_records_only_the_messages_it_added() {
    let (tmp, root) = project();
    let store = Store::open_with(&root, test_key(&root)).unwrap();
    let label = "demo/a";
    let mut engine = SessionEngine::create(store.clone(), Source::Ask, vec![label.into()]).unwrap();
    let turns = 6;
    for n in 0..turns {
        let prompt = format!("prompt number {n} with a marker");
        turn(
            &mut engine,
            &prompt,
            vec![target(label, "Answer", Some(("notes.txt", "x")), turns)],
            tmp.path(),
        )
        .await;
        let chosen = ChoiceRequest {
            turn: n as u32 + 1,
            ..ChoiceRequest::default()
        };
        let outcome = engine.choice_job(chosen).unwrap().run().unwrap();
        engine.chosen(&outcome);
    }
    let dir = engine.dir().to_path_buf();
    engine.finish();
    let text = std::fs::read_to_string(dir.join("events.jsonl")).unwrap();
    assert_eq!(
        text.matches("prompt number 0 with a marker").count(),
        2,
        "the first prompt is written once in its turn record and once in the conversation"
    );
    let reopened = SessionEngine::open(store, None, Source::Tui, None).unwrap();
    let conversation = reopened.engine.conversation(label);
    // Each turn: the prompt (with the note from turn 2 on), the call, its result, the answer.
    assert_eq!(conversation.len(), turns * 4, "{conversation:#?}");
    assert!(conversation[0].text().contains("prompt number 0"));
    assert!(
        conversation[turns * 4 - 4]
            .text()
            .contains("prompt number 5")
    );
    assert!(
        conversation[4]
            .text()
            .contains("none of the proposed changes were applied")
    );
}

/// Regression: a choice rewound in the interface (`/rewind`) kept counting as a win. Through
/// the engine, as the TUI's driver does it: choose with an apply, plan the rewind, carry it
/// out, record it; the preference line is then left out of the statistics.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rewound_choice_is_left_out_of_the_statistics() {
    let (tmp, root) = project();
    let store = Store::open_with(&root, test_key(&root)).unwrap();
    let label = "demo/a";
    let mut engine = SessionEngine::create(store.clone(), Source::Tui, vec![label.into()]).unwrap();
    let number = turn(
        &mut engine,
        "fix the notes",
        vec![target(label, "Fixed", Some(("notes.txt", "fixed")), 1)],
        tmp.path(),
    )
    .await;
    let job = engine.change_set_job(label).unwrap();
    let set = job.build().unwrap();
    let plan = versus::apply::compose(
        &[set],
        &versus::apply::Selection::new().change_set(label),
        "fix the notes",
    )
    .unwrap();
    let outcome = engine
        .choice_job(ChoiceRequest {
            turn: number,
            plan: Some(plan),
            ..ChoiceRequest::default()
        })
        .unwrap()
        .run()
        .unwrap();
    engine.chosen(&outcome);
    assert_eq!(
        std::fs::read_to_string(root.join("notes.txt")).unwrap(),
        "fixed 0\n"
    );
    let stats =
        |root: &Path| versus::stats::collect(root, &versus::stats::Filter::default()).unwrap();
    assert_eq!(stats(&root).sources.preferences, 1);

    let plan = engine
        .plan_rewind(versus::engine::RewindScope::Both)
        .unwrap()
        .run()
        .unwrap()
        .unwrap();
    assert_eq!(plan.turn, Some(number));
    let done = engine.rewind_job(plan, false).unwrap().run().unwrap();
    engine.rewound(&done);
    assert_eq!(
        std::fs::read_to_string(root.join("notes.txt")).unwrap(),
        "alpha\nbeta\n"
    );
    let after = stats(&root);
    assert_eq!(
        after.sources.preferences, 0,
        "the rewound choice still counts"
    );
    assert_eq!(after.sources.rewound, 1);
    assert!(
        engine.conversation(label).is_empty(),
        "the turn left the conversation"
    );
}

/// Issue 22 item 4: a turn's review checks are recorded through the engine and come back with
/// the turn when the session is reopened (their workspaces are gone by then); a check of a
/// turn already chosen does not, and a log written before checks were recorded still reads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_results_are_recorded_and_come_back_with_the_reopened_turn() {
    use versus::engine::CheckResult;
    let (tmp, root) = project();
    let (a, b) = ("demo/a", "demo/b");
    let store = Store::open_with(&root, test_key(&root)).unwrap();
    let mut engine =
        SessionEngine::create(store.clone(), Source::Tui, vec![a.into(), b.into()]).unwrap();
    let t = turn(
        &mut engine,
        "fix it",
        vec![
            target(a, "A", Some(("notes.txt", "from a")), 1),
            target(b, "B", Some(("tests/notes_test.rs", "from b")), 1),
        ],
        tmp.path(),
    )
    .await;
    let passed = CheckResult {
        command: "cargo test --quiet".into(),
        passed: true,
        ending: "passed (exit 0)".into(),
        elapsed_ms: 1200,
        tail: vec!["test result: ok. 3 passed".into()],
    };
    let failed = CheckResult {
        passed: false,
        ending: "failed (exit 101)".into(),
        tail: vec!["error[E0425]: cannot find function `format_receipt`".into()],
        ..passed.clone()
    };
    engine.record_check(t, a, &failed);
    // The latest result of a model counts (a check run again).
    engine.record_check(t, a, &passed);
    engine.record_check(t, b, &failed);
    engine.finish();
    drop(engine);

    let reopened = SessionEngine::open(store.clone(), None, Source::Tui, None).unwrap();
    let restored = reopened.restored.expect("the unchosen turn comes back");
    assert_eq!(restored.checks.len(), 2, "{:?}", restored.checks);
    assert_eq!(restored.checks[a], passed);
    assert_eq!(restored.checks[b], failed);
    // The records themselves, typed, in the log.
    let checks: Vec<_> = reopened
        .log
        .records
        .iter()
        .filter(|r| matches!(r, versus::session::SessionRecord::Check { .. }))
        .collect();
    assert_eq!(checks.len(), 3);
    let mut engine = reopened.engine;
    engine.finish();
    drop(engine);

    // The same log without its check lines (as written before they existed) reads whole,
    // and the turn comes back without checks.
    let dir = store.session(None).unwrap().1;
    let log = dir.join(versus::session::EVENTS_FILE);
    let text = std::fs::read_to_string(&log).unwrap();
    let old: String = text
        .lines()
        .filter(|l| !l.contains("\"type\":\"check\""))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_ne!(old, text);
    std::fs::write(&log, old).unwrap();
    let reopened = SessionEngine::open(store, None, Source::Tui, None).unwrap();
    assert!(
        reopened.log.skipped.is_empty(),
        "{:?}",
        reopened.log.skipped
    );
    let restored = reopened.restored.expect("the unchosen turn comes back");
    assert!(restored.checks.is_empty());
    assert_eq!(restored.finished.len(), 2);
}

/// The aliases the engine gives, as (label, alias) pairs.
fn aliases(engine: &SessionEngine) -> Vec<(String, String)> {
    engine
        .blind_names()
        .expect("blind mode is on")
        .aliases()
        .into_iter()
        .collect()
}

/// Chooses "none of them" for `turn`; returns whether the preference line says blind.
fn choose_none(engine: &mut SessionEngine, store: &Store, turn: u32) -> bool {
    let outcome = engine
        .choice_job(ChoiceRequest {
            turn,
            ..ChoiceRequest::default()
        })
        .unwrap()
        .run()
        .unwrap();
    engine.chosen(&outcome);
    let prefs = versus::session::read_preferences(&store.preferences()).unwrap();
    let line = prefs
        .iter()
        .find(|p| p.turn == turn)
        .expect("the choice's line");
    line.blind
}

/// Issue 22 item 2: blind mode's aliases are the session's. They are given once, before the
/// first turn, stay the same through two turns and their choices (a choice does not reveal
/// them), and a session reopened after versus was killed comes back with the same ones, still
/// hidden; a model added later gets the next alias and the others keep theirs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blind_aliases_stay_the_same_across_turns_and_a_continue() {
    let (tmp, root) = project();
    let (a, b, c) = ("demo/a", "demo/b", "demo/c");
    // Five models (a shuffle that came out the same again would go unseen with two).
    let five: Vec<String> = [a, b, "demo/x", "demo/y", "demo/z"]
        .iter()
        .map(|m| m.to_string())
        .collect();
    let store = Store::open_with(&root, test_key(&root)).unwrap();
    let mut engine = SessionEngine::create(store.clone(), Source::Tui, five.clone()).unwrap();
    assert!(engine.blind_names().is_none());
    engine.set_blind(true);
    assert!(engine.blind());
    let given = aliases(&engine);
    assert_eq!(given.len(), 5);
    let targets = || vec![target(a, "A", None, 2), target(b, "B", None, 2)];
    let one = turn(&mut engine, "first", targets(), tmp.path()).await;
    assert_eq!(aliases(&engine), given, "the turn keeps the aliases");
    assert!(choose_none(&mut engine, &store, one), "chosen while hidden");
    assert!(engine.blind(), "a choice does not reveal the names");
    let two = turn(&mut engine, "second", targets(), tmp.path()).await;
    assert_eq!(aliases(&engine), given, "turn 2 keeps them too");
    assert!(choose_none(&mut engine, &store, two));
    // Killed: no `ended` record (dropping the engine flushes its log).
    drop(engine);

    let mut reopened = SessionEngine::open(store.clone(), None, Source::Tui, None)
        .unwrap()
        .engine;
    assert!(reopened.blind(), "still hidden after --continue");
    assert_eq!(
        aliases(&reopened),
        given,
        "the same aliases after --continue"
    );
    // A model joins: it gets the next alias, the others keep theirs.
    let mut six = five.clone();
    six.push(c.to_string());
    reopened.set_models(six);
    let mut with_c = given.clone();
    with_c.push((c.to_string(), "Model F".to_string()));
    with_c.sort();
    assert_eq!(aliases(&reopened), with_c);
    // The session ends: the names are revealed, and a later reopening says so.
    reopened.finish();
    drop(reopened);
    let again = SessionEngine::open(store, None, Source::Tui, None).unwrap();
    assert!(!again.engine.blind());
    assert!(again.engine.blind_names().unwrap().is_revealed());
    assert_eq!(aliases(&again.engine), with_c);
    let log = std::fs::read_to_string(again.engine.dir().join("events.jsonl")).unwrap();
    assert!(log.contains(r#""type":"blind""#), "{log}");
}

/// Issue 22 item 2: once the names are revealed (the user asked), later choices are not
/// recorded as blind in `.versus/preferences.jsonl`; the choice before the reveal is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn choices_after_a_reveal_are_not_counted_as_blind() {
    let (tmp, root) = project();
    let (a, b) = ("demo/a", "demo/b");
    let store = Store::open_with(&root, test_key(&root)).unwrap();
    let mut engine =
        SessionEngine::create(store.clone(), Source::Tui, vec![a.into(), b.into()]).unwrap();
    engine.set_blind(true);
    let targets = || vec![target(a, "A", None, 2), target(b, "B", None, 2)];
    let one = turn(&mut engine, "first", targets(), tmp.path()).await;
    assert!(choose_none(&mut engine, &store, one));
    engine.set_blind(false);
    assert!(!engine.blind());
    let two = turn(&mut engine, "second", targets(), tmp.path()).await;
    assert!(
        !choose_none(&mut engine, &store, two),
        "revealed: not blind"
    );
    engine.finish();
    let log = versus::session::SessionLog::read(engine.dir()).unwrap();
    let blind_turns: Vec<bool> = log
        .records
        .iter()
        .filter_map(|r| match r {
            versus::session::SessionRecord::Turn { blind, .. } => Some(*blind),
            _ => None,
        })
        .collect();
    assert_eq!(blind_turns, [true, false]);
}

/// A session log written before the `blind` record (a blind `turn`, not chosen yet) still
/// reads: its names stay hidden under the aliases those versions derived, the same on every
/// reopening, and they are recorded from then on.
#[test]
fn a_blind_log_older_than_the_blind_record_keeps_its_names_hidden() {
    let (_tmp, root) = project();
    let store = Store::open_with(&root, test_key(&root)).unwrap();
    let engine = SessionEngine::create(
        store.clone(),
        Source::Tui,
        vec!["demo/a".into(), "demo/b".into()],
    )
    .unwrap();
    let dir = engine.dir().to_path_buf();
    drop(engine);
    // What an older version appended: a blind turn and its finished models, no `blind` record.
    let mut log = std::fs::OpenOptions::new()
        .append(true)
        .open(dir.join("events.jsonl"))
        .unwrap();
    use std::io::Write;
    writeln!(
        log,
        r#"{{"v":3,"type":"turn","turn":1,"time":"2026-11-21T09:05:03Z","prompt":"fix it","models":["demo/a","demo/b"],"blind":true}}"#
    )
    .unwrap();
    drop(log);
    let first = SessionEngine::open(store.clone(), None, Source::Tui, None).unwrap();
    assert!(first.log.skipped.is_empty(), "{:?}", first.log.skipped);
    assert!(first.engine.blind());
    let given = aliases(&first.engine);
    drop(first);
    let second = SessionEngine::open(store, None, Source::Tui, None).unwrap();
    assert_eq!(aliases(&second.engine), given);
    assert!(
        second.log.blind_aliases().is_some(),
        "recorded once reopened"
    );
}
