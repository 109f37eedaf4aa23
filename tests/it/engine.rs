//! The session engine through its public API, as every front end drives it: the handle
//! (submissions in, events out) running turns of scripted demo models on a real temporary git
//! project, the session log they leave, and a session reopened from it.

use crate::util;

use util::git;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use versus::agent::{Agent, AgentSettings, system_prompt};
use versus::engine::{
    ChoiceOutcome, ChoiceRequest, EngineError, EngineEvent, EngineEvents, EngineHandle,
    HistoryPolicy, Op, OpKind, RewindDone, RewindPlan, RewindScope, SessionEngine, TurnOutcome,
    TurnRequest, TurnTarget, TurnTask,
};
use versus::provider::demo::DemoModel;
use versus::review::BlindNames;
use versus::runner::RunOptions;
use versus::session::{Source, Store};
use versus::tools::{ToolLimits, ToolRegistry};
use versus::workspace::Isolation;
use versus::workspace::changeset::ChangeSet;

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
        mcp: None,
    }
}

fn request(prompt: &str, targets: Vec<TurnTarget>, scratch: &Path) -> TurnRequest {
    TurnRequest {
        prompt: prompt.to_string(),
        attached: String::new(),
        targets,
        options: options(scratch),
        policy: HistoryPolicy::default(),
        check: None,
        history_line: None,
        workspaces: Default::default(),
        context: Default::default(),
        tasks: Vec::new(),
    }
}

/// A runtime of its own for an engine a test kills: dropping it ends the engine's task without
/// a shutdown, as a killed versus does.
fn killable_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// A session engine running as its task, driven through its handle as a front end does; it
/// keeps the blind names it was told and a short name of every event, in order.
struct Live {
    handle: EngineHandle,
    events: EngineEvents,
    names: Option<BlindNames>,
    seen: Vec<String>,
}

impl Live {
    fn spawn(engine: SessionEngine) -> Live {
        let names = engine.blind_names().cloned();
        let (handle, events) = engine.spawn();
        Live {
            handle,
            events,
            names,
            seen: Vec::new(),
        }
    }

    fn submit(&self, op: Op) {
        self.handle.submit(op).unwrap();
    }

    /// The next event (the engine's blind names remembered on the way).
    async fn next(&mut self) -> EngineEvent {
        let event = self.events.recv().await.expect("the engine ended early");
        let name = match &event {
            EngineEvent::Agent { .. } => None,
            EngineEvent::ModelFinished { model, .. } => Some(format!("finished {}", model.label)),
            EngineEvent::TurnStarted { turn, .. } => Some(format!("started {turn}")),
            EngineEvent::CheckStarted { label, .. } => Some(format!("check {label}")),
            EngineEvent::TurnEnded { turn, .. } => Some(format!("ended {turn}")),
            EngineEvent::Failed { op, .. } => Some(format!("failed {op:?}")),
            other => Some(
                format!("{other:?}")
                    .split([' ', '(', '{'])
                    .next()
                    .unwrap()
                    .to_string(),
            ),
        };
        self.seen.extend(name);
        if let EngineEvent::Blind(names) = &event {
            self.names = names.clone();
        }
        event
    }

    /// Runs one turn to its end the way `versus ask` does: its number, how it ended and the
    /// change sets in model order.
    async fn run_turn(
        &mut self,
        prompt: &str,
        targets: Vec<TurnTarget>,
        scratch: &Path,
    ) -> (u32, TurnOutcome, Vec<ChangeSet>) {
        self.submit(Op::StartTurn(request(prompt, targets, scratch)));
        let mut sets = Vec::new();
        loop {
            match self.next().await {
                EngineEvent::ModelFinished {
                    model, change_set, ..
                } => sets.push((model.entry, change_set.unwrap())),
                EngineEvent::TurnEnded { turn, outcome } => {
                    sets.sort_by_key(|(entry, _)| *entry);
                    return (turn, outcome, sets.into_iter().map(|(_, s)| s).collect());
                }
                EngineEvent::Failed { op, error } => panic!("{op:?} failed: {error}"),
                _ => {}
            }
        }
    }

    async fn turn(&mut self, prompt: &str, targets: Vec<TurnTarget>, scratch: &Path) -> u32 {
        self.run_turn(prompt, targets, scratch).await.0
    }

    /// The answer to the last submission: `pick` returns `Some` for it, a failure is `Err`.
    async fn answer<T>(
        &mut self,
        mut pick: impl FnMut(EngineEvent) -> Option<T>,
    ) -> Result<T, EngineError> {
        loop {
            match self.next().await {
                EngineEvent::Failed { error, .. } => return Err(error),
                event => {
                    if let Some(found) = pick(event) {
                        return Ok(found);
                    }
                }
            }
        }
    }

    async fn choose(&mut self, request: ChoiceRequest) -> Result<ChoiceOutcome, EngineError> {
        self.submit(Op::Choose(request));
        self.answer(|e| match e {
            EngineEvent::Chosen(outcome) => Some(outcome),
            _ => None,
        })
        .await
    }

    async fn plan_rewind(&mut self, scope: RewindScope) -> Result<RewindPlan, EngineError> {
        self.submit(Op::PlanRewind { scope });
        self.answer(|e| match e {
            EngineEvent::RewindPlanned(plan) => Some(plan),
            _ => None,
        })
        .await
    }

    async fn rewind(&mut self, plan: RewindPlan) -> Result<RewindDone, EngineError> {
        self.submit(Op::Rewind { plan, force: false });
        self.answer(|e| match e {
            EngineEvent::Rewound(done) => Some(done),
            _ => None,
        })
        .await
    }

    /// Blind mode on or off; waits for the engine's new names.
    async fn blind(&mut self, on: bool) {
        self.submit(Op::Blind(on));
        self.answer(|e| matches!(e, EngineEvent::Blind(_)).then_some(()))
            .await
            .unwrap();
    }

    /// Ends the session and waits for the engine to say so.
    async fn close(mut self) {
        self.submit(Op::Shutdown {
            keep_workspaces: false,
        });
        self.answer(|e| matches!(e, EngineEvent::Closed { .. }).then_some(()))
            .await
            .unwrap();
        assert!(self.events.recv().await.is_none(), "the stream ends");
    }
}

/// Regression: after a turn addressed to some models only (`/resume` re-runs the interrupted
/// ones), a continued session came back with only those models.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_continued_session_keeps_every_model_after_a_turn_for_some_of_them() {
    let (tmp, root) = project();
    let (a, b) = ("demo/a", "demo/b");
    let store = Store::open_with(&root, test_key(&root)).unwrap();
    let mut engine = Live::spawn(
        SessionEngine::create(store.clone(), Source::Tui, vec![a.into(), b.into()]).unwrap(),
    );
    engine
        .turn(
            "first",
            vec![target(a, "A", None, 1), target(b, "B", None, 2)],
            tmp.path(),
        )
        .await;
    // Like /resume: only model b is addressed.
    engine
        .turn("go on", vec![target(b, "B", None, 2)], tmp.path())
        .await;
    engine.close().await;

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
    let mut engine =
        Live::spawn(SessionEngine::create(store.clone(), Source::Ask, vec![label.into()]).unwrap());
    let turns = 6;
    for n in 0..turns {
        let prompt = format!("prompt number {n} with a marker");
        engine
            .turn(
                &prompt,
                vec![target(label, "Answer", Some(("notes.txt", "x")), turns)],
                tmp.path(),
            )
            .await;
        let chosen = ChoiceRequest {
            turn: n as u32 + 1,
            ..ChoiceRequest::default()
        };
        engine.choose(chosen).await.unwrap();
    }
    let dir = engine.handle.info().dir.clone();
    engine.close().await;
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

/// `versus rewind` opens a session only to undo an apply (`rewind_only`): a blind session a
/// kill left with its names hidden keeps them hidden when that open ends.
#[test]
fn a_rewind_only_open_leaves_blind_names_hidden() {
    let (_tmp, root) = project();
    let store = Store::open_with(&root, test_key(&root)).unwrap();
    let models = vec!["demo/a".to_string(), "demo/b".to_string()];
    let engine = SessionEngine::create(store.clone(), Source::Tui, models).unwrap();
    let runtime = killable_runtime();
    // Killed while blind: the runtime goes away without a shutdown (see the test above).
    let (given, live) = runtime.block_on(async {
        let mut live = Live::spawn(engine);
        live.blind(true).await;
        (told(&live), live)
    });
    drop(runtime);
    drop(live);

    let opened = SessionEngine::open(store.clone(), None, Source::Rewind, None)
        .unwrap()
        .engine
        .rewind_only();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let live = Live::spawn(opened);
        live.close().await;
    });
    let again = SessionEngine::open(store, None, Source::Tui, None).unwrap();
    assert!(
        again.engine.blind(),
        "still hidden after a rewind-only open"
    );
    assert_eq!(aliases(&again.engine), given);
    let log = std::fs::read_to_string(again.engine.dir().join("events.jsonl")).unwrap();
    assert!(log.contains(r#""source":"rewind""#), "{log}");
    assert!(!log.contains(r#""revealed":true"#), "{log}");
}

/// Regression: a choice rewound in the interface (`/rewind`) kept counting as a win. Through
/// the engine's handle, as the TUI does it: choose with an apply, plan the rewind, carry it
/// out; the preference line is then left out of the statistics.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rewound_choice_is_left_out_of_the_statistics() {
    let (tmp, root) = project();
    let store = Store::open_with(&root, test_key(&root)).unwrap();
    let label = "demo/a";
    let mut engine =
        Live::spawn(SessionEngine::create(store.clone(), Source::Tui, vec![label.into()]).unwrap());
    let (number, _, sets) = engine
        .run_turn(
            "fix the notes",
            vec![target(label, "Fixed", Some(("notes.txt", "fixed")), 1)],
            tmp.path(),
        )
        .await;
    let plan = versus::apply::compose(
        &sets,
        &versus::apply::Selection::new().change_set(label),
        "fix the notes",
    )
    .unwrap();
    engine
        .choose(ChoiceRequest {
            turn: number,
            plan: Some(plan),
            ..ChoiceRequest::default()
        })
        .await
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(root.join("notes.txt")).unwrap(),
        "fixed 0\n"
    );
    let stats =
        |root: &Path| versus::stats::collect(root, &versus::stats::Filter::default()).unwrap();
    assert_eq!(stats(&root).sources.preferences, 1);

    let plan = engine.plan_rewind(RewindScope::Both).await.unwrap();
    assert_eq!(plan.turn, Some(number));
    engine.rewind(plan).await.unwrap();
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
    engine.close().await;
    let reopened = SessionEngine::open(store, None, Source::Tui, None).unwrap();
    assert!(
        reopened.engine.conversation(label).is_empty(),
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
    let mut live = Live::spawn(
        SessionEngine::create(store.clone(), Source::Tui, vec![a.into(), b.into()]).unwrap(),
    );
    let t = live
        .turn(
            "fix it",
            vec![
                target(a, "A", Some(("notes.txt", "from a")), 1),
                target(b, "B", Some(("tests/notes_test.rs", "from b")), 1),
            ],
            tmp.path(),
        )
        .await;
    live.close().await;
    // The turn's checks, recorded as a front end's check would (the exact results matter).
    let mut engine = SessionEngine::open(store.clone(), None, Source::Tui, None)
        .unwrap()
        .engine;
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

/// The aliases the front end was told, as (label, alias) pairs.
fn told(live: &Live) -> Vec<(String, String)> {
    live.names
        .as_ref()
        .expect("blind mode is on")
        .aliases()
        .into_iter()
        .collect()
}

/// Chooses "none of them" for `turn`; returns whether the preference line says blind.
async fn choose_none(live: &mut Live, store: &Store, turn: u32) -> bool {
    live.choose(ChoiceRequest {
        turn,
        ..ChoiceRequest::default()
    })
    .await
    .unwrap();
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
#[test]
fn blind_aliases_stay_the_same_across_turns_and_a_continue() {
    let (tmp, root) = project();
    let (a, b, c) = ("demo/a", "demo/b", "demo/c");
    // Five models (a shuffle that came out the same again would go unseen with two).
    let five: Vec<String> = [a, b, "demo/x", "demo/y", "demo/z"]
        .iter()
        .map(|m| m.to_string())
        .collect();
    let store = Store::open_with(&root, test_key(&root)).unwrap();
    let engine = SessionEngine::create(store.clone(), Source::Tui, five.clone()).unwrap();
    assert!(engine.blind_names().is_none());
    // Killed: the runtime that runs the engine's task goes away without a shutdown, so no
    // `ended` record (dropping the engine flushes its log).
    let runtime = killable_runtime();
    let (given, live) = runtime.block_on(async {
        let mut live = Live::spawn(engine);
        live.blind(true).await;
        let given = told(&live);
        assert_eq!(given.len(), 5);
        assert!(!live.names.as_ref().unwrap().is_revealed());
        let targets = || vec![target(a, "A", None, 2), target(b, "B", None, 2)];
        let one = live.turn("first", targets(), tmp.path()).await;
        assert_eq!(told(&live), given, "the turn keeps the aliases");
        assert!(
            choose_none(&mut live, &store, one).await,
            "chosen while hidden"
        );
        let two = live.turn("second", targets(), tmp.path()).await;
        assert_eq!(told(&live), given, "turn 2 keeps them too");
        assert!(choose_none(&mut live, &store, two).await);
        assert!(
            !live.names.as_ref().unwrap().is_revealed(),
            "a choice does not reveal the names"
        );
        assert_eq!(
            live.seen.iter().filter(|e| *e == "Blind").count(),
            1,
            "the names were told once, when blind mode came on: {:?}",
            live.seen
        );
        // The handle outlives the runtime: dropped inside it, the engine would see every
        // handle gone and end the session properly, which a kill never does.
        (given, live)
    });
    drop(runtime);
    drop(live);

    let reopened = SessionEngine::open(store.clone(), None, Source::Tui, None)
        .unwrap()
        .engine;
    assert!(reopened.blind(), "still hidden after --continue");
    assert_eq!(
        aliases(&reopened),
        given,
        "the same aliases after --continue"
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let with_c = runtime.block_on(async {
        let mut live = Live::spawn(reopened);
        // A model joins: it gets the next alias, the others keep theirs.
        let mut six = five.clone();
        six.push(c.to_string());
        live.submit(Op::SetModels(six));
        live.answer(|e| matches!(e, EngineEvent::Blind(_)).then_some(()))
            .await
            .unwrap();
        let mut with_c = given.clone();
        with_c.push((c.to_string(), "Model F".to_string()));
        with_c.sort();
        assert_eq!(told(&live), with_c);
        // The session ends: the names are revealed, and a later reopening says so.
        live.submit(Op::Shutdown {
            keep_workspaces: false,
        });
        live.answer(|e| matches!(e, EngineEvent::Closed { .. }).then_some(()))
            .await
            .unwrap();
        assert!(
            live.names.as_ref().unwrap().is_revealed(),
            "revealed at the end"
        );
        with_c
    });
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
    let mut engine = Live::spawn(
        SessionEngine::create(store.clone(), Source::Tui, vec![a.into(), b.into()]).unwrap(),
    );
    engine.blind(true).await;
    let targets = || vec![target(a, "A", None, 2), target(b, "B", None, 2)];
    let one = engine.turn("first", targets(), tmp.path()).await;
    assert!(choose_none(&mut engine, &store, one).await);
    engine.blind(false).await;
    assert!(engine.names.as_ref().unwrap().is_revealed());
    let two = engine.turn("second", targets(), tmp.path()).await;
    assert!(
        !choose_none(&mut engine, &store, two).await,
        "revealed: not blind"
    );
    let dir = engine.handle.info().dir.clone();
    engine.close().await;
    let log = versus::session::SessionLog::read(&dir).unwrap();
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

/// A demo model whose first step runs `command` in bash, then says "done".
fn bash_target(label: &str, command: &str) -> TurnTarget {
    let mut t = target(label, "unused", None, 1);
    let script = format!(
        "{}\n{{\"say\": \"done\"}}\n",
        serde_json::json!({"tools": [{"name": "bash", "args": {"command": command}}]})
    );
    t.agent.client = Arc::new(DemoModel::parse(label, &script).unwrap());
    t
}

/// Issue 23 item 1: one turn through the handle reports, in order, the turn's start, each
/// model's agent events before its `ModelFinished` (with its change set), then `TurnEnded`;
/// and the log holds the records `versus ask` always wrote, in the same order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_through_the_handle_reports_its_events_in_order() {
    let (tmp, root) = project();
    let (a, b) = ("demo/a", "demo/b");
    let store = Store::open_with(&root, test_key(&root)).unwrap();
    let mut live = Live::spawn(
        SessionEngine::create(store.clone(), Source::Ask, vec![a.into(), b.into()]).unwrap(),
    );
    live.submit(Op::StartTurn(request(
        "fix the notes",
        vec![
            target(a, "A", Some(("notes.txt", "from a")), 1),
            target(b, "B", None, 1),
        ],
        tmp.path(),
    )));
    let mut order = Vec::new();
    let (turn, outcome) = loop {
        match live.next().await {
            EngineEvent::TurnStarted { turn, models, .. } => {
                assert_eq!(models, [a, b]);
                order.push(format!("started {turn}"));
            }
            EngineEvent::Agent { entry, .. } => order.push(format!("agent {entry}")),
            EngineEvent::ModelFinished {
                model, change_set, ..
            } => {
                let set = change_set.unwrap();
                let files: Vec<&str> = set.files.iter().map(|f| f.path.as_str()).collect();
                match model.label.as_str() {
                    "demo/a" => assert_eq!(files, ["notes.txt"]),
                    _ => assert!(files.is_empty(), "{files:?}"),
                }
                order.push(format!("finished {}", model.entry));
            }
            EngineEvent::TurnEnded { turn, outcome } => break (turn, outcome),
            EngineEvent::Failed { op, error } => panic!("{op:?}: {error}"),
            _ => {}
        }
    };
    assert_eq!((turn, outcome), (1, TurnOutcome::Done));
    assert_eq!(
        order.first().map(String::as_str),
        Some("started 1"),
        "{order:?}"
    );
    for entry in 0..2 {
        let finished = order
            .iter()
            .position(|e| *e == format!("finished {entry}"))
            .unwrap_or_else(|| panic!("model {entry} finished: {order:?}"));
        let agent = format!("agent {entry}");
        assert!(order[..finished].contains(&agent), "{order:?}");
        assert!(!order[finished..].contains(&agent), "{order:?}");
    }
    let dir = live.handle.info().dir.clone();
    live.close().await;
    let log = versus::session::SessionLog::read(&dir).unwrap();
    let kinds: Vec<String> = log
        .records
        .iter()
        .map(|r| {
            let json = serde_json::to_value(r).unwrap();
            json["type"].as_str().unwrap().to_string()
        })
        .filter(|k| !matches!(k.as_str(), "agent" | "workspace"))
        .collect();
    let kinds: Vec<&str> = kinds.iter().map(String::as_str).collect();
    // Each model's proposals, finished and conversation (in the order the models ended).
    // The turn's context (files, skills, the fairness ledger) comes before any model's record.
    let mut middle = kinds[3..kinds.len() - 2].to_vec();
    middle.sort();
    assert_eq!(kinds[..3], ["opened", "turn", "context"], "{kinds:?}");
    assert_eq!(
        middle,
        [
            "conversation",
            "conversation",
            "finished",
            "finished",
            "proposals",
            "proposals"
        ],
        "{kinds:?}"
    );
    assert_eq!(
        kinds[kinds.len() - 2..],
        ["turn_ended", "ended"],
        "{kinds:?}"
    );
}

/// Issue 23 item 1: a running engine refuses a new turn, a choice and a rewind with typed
/// errors naming the submission; cancelling one model ends only it, and cancelling all ends
/// the turn interrupted. Nothing here waits on a clock: the cancelled models sleep 30 s.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_turn_refuses_what_must_wait_and_cancels_one_model_or_all() {
    let (tmp, root) = project();
    let (a, b) = ("demo/a", "demo/b");
    let store = Store::open_with(&root, test_key(&root)).unwrap();
    let mut live = Live::spawn(
        SessionEngine::create(store.clone(), Source::Tui, vec![a.into(), b.into()]).unwrap(),
    );
    live.submit(Op::StartTurn(request(
        "wait",
        vec![bash_target(a, "sleep 30"), target(b, "B", None, 1)],
        tmp.path(),
    )));
    live.submit(Op::StartTurn(request(
        "too soon",
        vec![target(b, "B", None, 1)],
        tmp.path(),
    )));
    live.submit(Op::Choose(ChoiceRequest {
        turn: 1,
        ..ChoiceRequest::default()
    }));
    live.submit(Op::PlanRewind {
        scope: RewindScope::Files,
    });
    let mut refusals = Vec::new();
    let mut stops = Vec::new();
    let mut cancelled = false;
    let outcome = loop {
        match live.next().await {
            EngineEvent::Failed { op, error } => {
                refusals.push((op, error.to_string()));
                // Every refusal is in: cancel the sleeper alone.
                if refusals.len() == 3 && !cancelled {
                    cancelled = true;
                    live.submit(Op::Cancel { label: a.into() });
                }
            }
            EngineEvent::ModelFinished { model, .. } => stops.push((model.label, model.stop)),
            EngineEvent::TurnEnded { outcome, .. } => break outcome,
            _ => {}
        }
    };
    assert_eq!(refusals[0].0, OpKind::StartTurn);
    assert!(refusals[0].1.contains("still running"), "{refusals:?}");
    assert_eq!(refusals[1].0, OpKind::Choose);
    assert!(
        refusals[1].1.contains("turn 1 is no longer"),
        "{refusals:?}"
    );
    // Planning a rewind reads only: it may run, and says there is nothing to rewind.
    assert_eq!(refusals[2].0, OpKind::PlanRewind);
    assert!(
        refusals[2].1.starts_with("nothing to rewind"),
        "{refusals:?}"
    );
    stops.sort_by(|x, y| x.0.cmp(&y.0));
    assert_eq!(
        stops,
        [
            (a.to_string(), versus::model::RunStop::Cancelled),
            (b.to_string(), versus::model::RunStop::Completed)
        ]
    );
    assert_eq!(
        outcome,
        TurnOutcome::Done,
        "one model cancelled is not an interrupted turn"
    );

    // Cancel all: the turn ends interrupted.
    live.submit(Op::StartTurn(request(
        "wait again",
        vec![bash_target(a, "sleep 30")],
        tmp.path(),
    )));
    loop {
        if let EngineEvent::TurnStarted { .. } = live.next().await {
            break;
        }
    }
    live.submit(Op::CancelAll);
    let outcome = live
        .answer(|e| match e {
            EngineEvent::TurnEnded { outcome, .. } => Some(outcome),
            _ => None,
        })
        .await
        .unwrap();
    assert_eq!(outcome, TurnOutcome::Interrupted);
    live.close().await;
}

/// Issue 23 item 2: the engine runs the turn's configured check in each finished model's
/// workspace, reports it (`CheckStarted` just before the model's `ModelFinished`, so a front
/// end holding every change set knows which checks still run; then `CheckDone`) and records
/// it, so a reopened session shows it again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_engine_runs_and_records_the_configured_check() {
    let (tmp, root) = project();
    let (a, b) = ("demo/a", "demo/b");
    let store = Store::open_with(&root, test_key(&root)).unwrap();
    let mut live = Live::spawn(
        SessionEngine::create(store.clone(), Source::Tui, vec![a.into(), b.into()]).unwrap(),
    );
    let mut turn = request(
        "fix it",
        vec![
            target(a, "A", Some(("notes.txt", "fixed")), 1),
            target(b, "B", None, 1),
        ],
        tmp.path(),
    );
    turn.check = Some("grep -q fixed notes.txt && echo checked".into());
    live.submit(Op::StartTurn(turn));
    let mut results = std::collections::BTreeMap::new();
    while results.len() < 2 {
        if let EngineEvent::CheckDone { label, result, .. } = live.next().await {
            results.insert(label, result);
        }
    }
    let seen = live.seen.clone();
    for label in [a, b] {
        let finished = seen.iter().position(|e| *e == format!("finished {label}"));
        let started = seen.iter().position(|e| *e == format!("check {label}"));
        assert_eq!(
            started.zip(finished).map(|(s, f)| s + 1 == f),
            Some(true),
            "{seen:?}"
        );
    }
    assert!(results[a].passed, "{:?}", results[a]);
    assert_eq!(results[a].tail, ["checked"]);
    assert!(!results[b].passed, "{:?}", results[b]);
    assert_eq!(results[b].ending, "failed (exit 1)");
    live.close().await;
    let reopened = SessionEngine::open(store, None, Source::Tui, None).unwrap();
    let restored = reopened.restored.expect("the unchosen turn comes back");
    assert_eq!(restored.checks.len(), 2);
    assert!(restored.checks[a].passed);
}

/// Issue 23 item 1: a reopened session's unchosen turn comes back through the handle: one
/// `ModelFinished` per finished model, with its change set rebuilt from the log, and a choice
/// of that turn is accepted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restored_turn_comes_back_through_the_handle_and_can_be_chosen() {
    let (tmp, root) = project();
    let a = "demo/a";
    let store = Store::open_with(&root, test_key(&root)).unwrap();
    let mut live =
        Live::spawn(SessionEngine::create(store.clone(), Source::Tui, vec![a.into()]).unwrap());
    let t = live
        .turn(
            "fix it",
            vec![target(a, "A", Some(("notes.txt", "fixed")), 1)],
            tmp.path(),
        )
        .await;
    live.close().await;
    let reopened = SessionEngine::open(store.clone(), None, Source::Tui, None).unwrap();
    assert!(reopened.restored.is_some());
    let mut live = Live::spawn(reopened.engine);
    let set = live
        .answer(|e| match e {
            EngineEvent::ModelFinished {
                turn, change_set, ..
            } => Some((turn, change_set)),
            _ => None,
        })
        .await
        .unwrap();
    assert_eq!(set.0, t);
    let set = set.1.unwrap();
    assert_eq!(set.files.len(), 1);
    let plan = versus::apply::compose(
        &[set],
        &versus::apply::Selection::new().change_set(a),
        "fix it",
    )
    .unwrap();
    let outcome = live
        .choose(ChoiceRequest {
            turn: t,
            plan: Some(plan),
            ..ChoiceRequest::default()
        })
        .await
        .unwrap();
    assert_eq!(outcome.written, ["notes.txt"]);
    assert_eq!(
        std::fs::read_to_string(root.join("notes.txt")).unwrap(),
        "fixed 0\n"
    );
    live.close().await;
}

/// A model that records the system prompt of every request it is sent, then answers as its
/// demo script says.
struct SystemRecorder {
    inner: DemoModel,
    seen: Arc<std::sync::Mutex<Vec<String>>>,
}

impl versus::provider::ModelClient for SystemRecorder {
    fn provider(&self) -> &str {
        "demo"
    }

    fn stream(
        &self,
        request: versus::model::ModelRequest,
        cancel: tokio_util::sync::CancellationToken,
    ) -> versus::provider::EventStream {
        self.seen.lock().unwrap().push(request.system.to_string());
        self.inner.stream(request, cancel)
    }
}

/// The project context is put into the system prompt of every turn, which compaction never
/// folds: after `/compact` the next turn's model still reads AGENTS.md and the skill catalog,
/// and each turn's `context` record lists them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_context_and_skill_catalog_survive_compaction() {
    let (tmp, root) = project();
    std::fs::write(root.join("AGENTS.md"), "ENGINE-RULE-3141\n").unwrap();
    let user = tmp.path().join("user");
    std::fs::create_dir_all(user.join("skills/lint-fix")).unwrap();
    std::fs::write(
        user.join("skills/lint-fix/SKILL.md"),
        "---\nname: lint-fix\ndescription: Fix lint warnings.\n---\nRun the linter.\n",
    )
    .unwrap();
    let store = Store::open_with(&root, test_key(&root)).unwrap();
    let label = "demo/a";
    let mut engine =
        Live::spawn(SessionEngine::create(store.clone(), Source::Ask, vec![label.into()]).unwrap());
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let recording = || {
        let mut t = target(label, "A", None, 10);
        let script: String = (0..10)
            .map(|n| format!("{{\"say\": \"A {n}\"}}\n"))
            .collect();
        t.agent.client = Arc::new(SystemRecorder {
            inner: DemoModel::parse(label, &script).unwrap(),
            seen: Arc::clone(&seen),
        });
        t
    };
    let sources = versus::engine::ContextSources {
        user_dir: Some(user.clone()),
        project_trusted: false,
        skill_dirs: Vec::new(),
        sub_agents: None,
    };
    for prompt in ["one", "two", "three"] {
        if prompt == "three" {
            engine.submit(Op::Compact);
            let folded = engine
                .answer(|e| match e {
                    EngineEvent::Compacted { folded } => Some(folded),
                    _ => None,
                })
                .await
                .unwrap();
            assert!(folded > 0, "nothing was compacted");
        }
        let mut turn = request(prompt, vec![recording()], tmp.path());
        turn.context = sources.clone();
        engine.submit(Op::StartTurn(turn));
        engine
            .answer(|e| matches!(e, EngineEvent::TurnEnded { .. }).then_some(()))
            .await
            .unwrap();
    }
    let dir = engine.handle.info().dir.clone();
    engine.close().await;
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 3);
    for system in &seen {
        assert!(system.contains("ENGINE-RULE-3141"), "{system}");
        assert!(system.contains("<name>lint-fix</name>"), "{system}");
        assert!(system.contains("Fix lint warnings."), "{system}");
        // Given once per turn, never piled up from one turn to the next.
        assert_eq!(system.matches("ENGINE-RULE-3141").count(), 1, "{system}");
    }
    let log = versus::session::SessionLog::read(&dir).unwrap();
    for turn in log.turns() {
        let context = turn.context.expect("every turn has its context record");
        assert_eq!(context.files[0].path, "AGENTS.md");
        assert_eq!(context.skills[0].name, "lint-fix");
        assert_eq!(turn.ledger.len(), 1);
    }
}

/// Issue 23: a turn of several tasks (what `versus run` submits for independent tasks): the
/// same model once per task, each entry sent its task's prompt with no history (the model's
/// conversation of the earlier turn is not continued), under one `--jobs` limit (a model
/// reports `ModelStarted` when it has its place); change sets and workspaces are found by
/// entry, and a released workspace is gone from the turn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_of_several_tasks_runs_each_entry_on_its_own_prompt_afresh() {
    let (tmp, root) = project();
    let store = Store::open_with(&root, test_key(&root)).unwrap();
    let a = "demo/a";
    let mut engine =
        Live::spawn(SessionEngine::create(store.clone(), Source::Run, vec![a.into()]).unwrap());
    engine
        .turn("before", vec![target(a, "A", None, 3)], tmp.path())
        .await;
    let mut request = request(
        "2 tasks: one, two",
        vec![
            target(a, "A", Some(("out.txt", "first")), 1),
            target(a, "A", Some(("out.txt", "second")), 1),
        ],
        tmp.path(),
    );
    request.options.limit = Some(versus::engine::Concurrency::new(1));
    request.tasks = vec![
        TurnTask {
            name: "one".into(),
            prompt: "the first task".into(),
            entries: vec![0],
        },
        TurnTask {
            name: "two".into(),
            prompt: "the second task".into(),
            entries: vec![1],
        },
    ];
    engine.submit(Op::StartTurn(request));
    let mut started = Vec::new();
    let mut sets = [None, None];
    let turn = loop {
        match engine.next().await {
            EngineEvent::ModelStarted { entry, .. } => started.push(entry),
            EngineEvent::ModelFinished {
                model, change_set, ..
            } => sets[model.entry] = Some(change_set.unwrap()),
            EngineEvent::TurnEnded { turn, .. } => break turn,
            EngineEvent::Failed { op, error } => panic!("{op:?} failed: {error}"),
            _ => {}
        }
    };
    assert_eq!(started, [0, 1], "each model had its place, in order");
    for (entry, content) in [(0, "first 0"), (1, "second 0")] {
        let diff = sets[entry].as_ref().unwrap().unified_diff();
        assert!(
            diff.contains(&format!("+{content}")),
            "entry {entry}: {diff}"
        );
    }
    engine.submit(Op::EntryWorkspace { turn, entry: 1 });
    let root_1 = engine
        .answer(|e| match e {
            EngineEvent::Workspace { root, .. } => Some(root),
            _ => None,
        })
        .await
        .unwrap();
    assert!(root_1.join("out.txt").exists());
    engine.submit(Op::ReleaseWorkspace { turn, entry: 1 });
    engine.submit(Op::EntryWorkspace { turn, entry: 1 });
    let gone = engine
        .answer(|e| matches!(e, EngineEvent::Workspace { .. }).then_some(()))
        .await;
    assert!(
        gone.is_err(),
        "the released workspace is no longer the turn's"
    );
    engine.close().await;

    let (_, dir) = store.session(None).unwrap();
    let log = versus::session::SessionLog::read(&dir).unwrap();
    let summary = log.turns();
    let tasks: Vec<Option<&str>> = summary[1]
        .models
        .iter()
        .map(|m| m.task.as_deref())
        .collect();
    assert_eq!(tasks, [Some("one"), Some("two")]);
    // Each entry's conversation is its own task's prompt and answer, nothing before.
    let firsts: Vec<String> = log
        .records
        .iter()
        .filter_map(|r| match r {
            versus::session::SessionRecord::Conversation {
                turn: 2, messages, ..
            } => Some(format!("{:?}", messages[0].parts)),
            _ => None,
        })
        .collect();
    assert_eq!(firsts.len(), 2, "{firsts:?}");
    assert!(
        firsts.iter().any(|m| m.contains("the first task")),
        "{firsts:?}"
    );
    assert!(
        firsts.iter().any(|m| m.contains("the second task")),
        "{firsts:?}"
    );
}

/// `versus pick` in a blind session a kill left with its names hidden: a name the turn does
/// not have is refused with the aliases only (a wrong guess reveals nothing), the alias the
/// review showed picks that model and the choice is recorded as blind, and the names are told
/// once the pick has ended the session.
#[test]
fn a_blind_turn_left_unchosen_is_picked_by_the_alias_the_review_showed() {
    let (tmp, root) = project();
    // The key the binary uses (`util::versus` points XDG_STATE_HOME there): the store made
    // here is the binary's own.
    let key = versus::session::OwnerKey::at(&util::state_home().join("versus/store-key")).unwrap();
    let store = Store::open_with(&root, key).unwrap();
    let (a, b) = ("demo/blind-a", "demo/blind-b");
    let models = vec![a.to_string(), b.to_string()];
    let engine = SessionEngine::create(store.clone(), Source::Tui, models).unwrap();
    let runtime = killable_runtime();
    let scratch = tmp.path().join("scratch");
    let (given, live) = runtime.block_on(async {
        let mut live = Live::spawn(engine);
        live.blind(true).await;
        let targets = vec![
            target(a, "A", Some(("notes.txt", "from a")), 1),
            target(b, "B", Some(("notes.txt", "from b")), 1),
        ];
        live.turn("change the notes", targets, &scratch).await;
        (told(&live), live)
    });
    // Killed before the choice: no shutdown, so the names stay hidden.
    drop(runtime);
    drop(live);
    let alias_of = |label: &str| {
        given
            .iter()
            .find(|(l, _)| l == label)
            .map(|(_, alias)| alias.clone())
            .unwrap()
    };
    let (alias_a, alias_b) = (alias_of(a), alias_of(b));

    let pick = |spec: &str| {
        util::versus()
            .arg("-C")
            .arg(&root)
            .args(["pick", spec])
            .output()
            .unwrap()
    };
    let out = pick("demo/nope");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&alias_a) && stderr.contains(&alias_b),
        "{stderr}"
    );
    assert!(
        !stderr.contains(a) && !stderr.contains(b),
        "a name leaked: {stderr}"
    );

    // "Model B" as the review showed it, or only its letter.
    let letter = alias_b.rsplit(' ').next().unwrap().to_lowercase();
    let out = pick(&letter);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains(&format!("Applied {alias_b} (apply ")),
        "{stdout}"
    );
    assert!(!stdout.contains(a) && !stdout.contains(b), "{stdout}");
    assert_eq!(
        std::fs::read_to_string(root.join("notes.txt")).unwrap(),
        "from b 0\n"
    );
    // The session ended with the pick: its names are told.
    assert!(stderr.contains(&format!("{alias_b} was {b}")), "{stderr}");
    let prefs = versus::session::read_preferences(&store.preferences()).unwrap();
    assert_eq!(prefs.len(), 1);
    assert_eq!(prefs[0].chosen, vec![b.to_string()]);
    assert!(
        prefs[0].blind,
        "picked by alias while the names were hidden"
    );
}
