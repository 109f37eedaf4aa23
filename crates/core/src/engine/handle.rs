//! The engine as a task: submissions in, events out.
//!
//! [`SessionEngine::spawn`] moves the engine into its own tokio task and gives the front end
//! an [`EngineHandle`] (to [`EngineHandle::submit`] [`Op`]s) and [`EngineEvents`] (one stream
//! of [`EngineEvent`]s, the same enum for every front end). The task is the only owner of the
//! session: it checks each submission against its [`Phase`] (a pure state machine,
//! [`super::state`]), records what happens in the session log before anyone hears of it, and
//! runs every slow step (the project capture, change sets, checks, apply previews, applies,
//! rewinds, the end of the session) on the blocking pool, whose answers come back to the task
//! itself. A front end never holds a job or hands anything back: it says what the user wants
//! and shows what the engine reports.
//!
//! Answers are events, in the order things happened: a turn reports `TurnStarted`, each
//! model's `Agent` events, one `ModelFinished` per model once its change set is built (with
//! the change set; when a check is configured its `CheckStarted` comes just before, so a front
//! end holding every change set knows which checks still run, and `CheckDone` later), then
//! `TurnEnded` with the turn's outcome. A refused or failed submission answers with
//! [`EngineEvent::Failed`] naming the [`OpKind`], and nothing else happens.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::state::{Phase, Step};
use super::turn::{FinishedModel, Launched, TurnOutcome, TurnRequest};
use super::{
    ChoiceOutcome, ChoiceRequest, EngineError, RewindDone, RewindPlan, RewindScope, SessionEngine,
};
use crate::apply::{ApplyEngine, ApplyPlan, Preview};
use crate::context::{LedgerEntry, ProjectContext};
use crate::exec::Sandbox;
use crate::model::AgentEvent;
use crate::review::BlindNames;
use crate::runner::RunEvent;
use crate::session::{CheckResult, HistoryEntry, Source, Store, append_history, now};
use crate::workspace::changeset::ChangeSet;

/// What a front end asks of the engine.
// A turn's request is the big one; ops are few (one per user action), so none is boxed.
#[allow(clippy::large_enum_variant)]
pub enum Op {
    /// Runs a turn: records it, captures the project, starts every model.
    StartTurn(TurnRequest),
    /// Cancels one model of the running turn (its bash children are killed).
    Cancel {
        /// The model's label.
        label: String,
    },
    /// Cancels every model of the running turn and its checks: the turn ends interrupted.
    CancelAll,
    /// Works out what applying `plan` would do to the user's files (conflicts, refusals).
    PreviewApply {
        /// The turn under review.
        turn: u32,
        /// What to apply.
        plan: ApplyPlan,
    },
    /// Carries out a choice of the turn under review: apply, preference line, `Choice`.
    Choose(ChoiceRequest),
    /// Works out what a rewind with this scope would do (answered by `RewindPlanned`).
    PlanRewind {
        /// Files, conversation or both.
        scope: RewindScope,
    },
    /// Carries out a rewind the user confirmed.
    Rewind {
        /// The plan shown.
        plan: RewindPlan,
        /// Also restore files edited since the apply.
        force: bool,
    },
    /// Sets the session's models (recorded, so `--continue` comes back with these).
    SetModels(Vec<String>),
    /// Blind mode on or off (off reveals the names).
    Blind(bool),
    /// Every conversation starts afresh.
    Clear,
    /// Folds each conversation's earlier turns into a recap (answered by `Compacted`).
    Compact,
    /// Runs `command` as the review check in `label`'s workspace of the turn under review.
    RunCheck {
        /// The model.
        label: String,
        /// The check command.
        command: String,
    },
    /// Asks for `label`'s workspace (answered by `Workspace`), to open a shell in it.
    OpenWorkspace {
        /// The model.
        label: String,
    },
    /// Asks for the workspace of entry `entry` of turn `turn` (answered by `Workspace`, or
    /// `Failed` with [`OpKind::OpenWorkspace`] when it has none): in a turn of several tasks
    /// a model's label names one workspace per task, its entry names one.
    EntryWorkspace {
        /// The turn.
        turn: u32,
        /// The entry.
        entry: usize,
    },
    /// The front end is done with entry `entry`'s workspace of turn `turn` (`versus run`
    /// checked its criteria): it is removed in the background now, or kept on disk when the
    /// turn keeps its workspaces, so a turn of many tasks holds only the workspaces in use.
    ReleaseWorkspace {
        /// The turn.
        turn: u32,
        /// The entry.
        entry: usize,
    },
    /// Ends the session: models and checks cancelled, blind names revealed, the `Ended`
    /// record written and the log closed, workspaces removed unless kept. Answered by
    /// `Closed`, after which the stream ends.
    Shutdown {
        /// Keep the last turn's workspaces on disk (their paths come with `Closed`).
        keep_workspaces: bool,
    },
}

impl std::fmt::Debug for Op {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Op::{:?}", self.kind())
    }
}

/// Which submission an answer is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpKind {
    /// [`Op::StartTurn`].
    StartTurn,
    /// [`Op::Cancel`] / [`Op::CancelAll`].
    Cancel,
    /// [`Op::PreviewApply`].
    PreviewApply,
    /// [`Op::Choose`].
    Choose,
    /// [`Op::PlanRewind`].
    PlanRewind,
    /// [`Op::Rewind`].
    Rewind,
    /// [`Op::SetModels`], [`Op::Blind`], [`Op::Clear`], [`Op::Compact`].
    Session,
    /// [`Op::RunCheck`].
    RunCheck,
    /// [`Op::OpenWorkspace`], [`Op::EntryWorkspace`], [`Op::ReleaseWorkspace`].
    OpenWorkspace,
    /// [`Op::Shutdown`].
    Shutdown,
}

impl Op {
    /// Which kind of submission this is.
    pub fn kind(&self) -> OpKind {
        match self {
            Op::StartTurn(_) => OpKind::StartTurn,
            Op::Cancel { .. } | Op::CancelAll => OpKind::Cancel,
            Op::PreviewApply { .. } => OpKind::PreviewApply,
            Op::Choose(_) => OpKind::Choose,
            Op::PlanRewind { .. } => OpKind::PlanRewind,
            Op::Rewind { .. } => OpKind::Rewind,
            Op::SetModels(_) | Op::Blind(_) | Op::Clear | Op::Compact => OpKind::Session,
            Op::RunCheck { .. } => OpKind::RunCheck,
            Op::OpenWorkspace { .. } | Op::EntryWorkspace { .. } | Op::ReleaseWorkspace { .. } => {
                OpKind::OpenWorkspace
            }
            Op::Shutdown { .. } => OpKind::Shutdown,
        }
    }
}

/// What a front end should say about a turn's context when it starts: instruction files and
/// skills left out, with why. (Models given something different are in the ledger of
/// [`EngineEvent::TurnContext`]: a front end names them as it names models, blind or not.)
pub fn context_notices(context: &ProjectContext) -> Vec<String> {
    let mut out: Vec<String> = context.notes.clone();
    for skipped in &context.skipped {
        out.push(format!(
            "skill {} was left out: {}",
            skipped.location, skipped.reason
        ));
    }
    out
}

/// What the engine reports, in the order it happened.
#[derive(Debug)]
pub enum EngineEvent {
    /// A new turn shortened some conversations first (label, turns folded into a recap).
    HistoryShortened {
        /// The turn.
        turn: u32,
        /// The models whose history was folded.
        compacted: Vec<(String, usize)>,
    },
    /// The project is captured and every model of `turn` started.
    TurnStarted {
        /// The turn.
        turn: u32,
        /// Its models, in entry order.
        models: Vec<String>,
    },
    /// What every model of `turn` was given besides the prompt, once all of it is known: the
    /// project context (instruction files, skill catalog, what was left out) and the fairness
    /// ledger, as recorded. Right after [`EngineEvent::TurnStarted`], or, when the turn's
    /// models have tool servers, once each model's servers started (a server that failed
    /// for one model only is flagged here). Once per turn.
    TurnContext {
        /// The turn.
        turn: u32,
        /// The project context every model was given.
        context: ProjectContext,
        /// What each model was given, hashed; a model that got something different carries
        /// the difference (`differs`).
        ledger: Vec<LedgerEntry>,
    },
    /// A model got its place (under a `--jobs` limit it may wait for one): its workspace is
    /// being prepared. Until then it is only waiting.
    ModelStarted {
        /// The turn.
        turn: u32,
        /// The model's position in the turn.
        entry: usize,
    },
    /// A model's workspace is ready.
    WorkspaceReady {
        /// The turn.
        turn: u32,
        /// The model's position in the turn.
        entry: usize,
        /// The workspace's root.
        root: PathBuf,
    },
    /// An event of a model's agent (already recorded).
    Agent {
        /// The turn.
        turn: u32,
        /// The model's position in the turn.
        entry: usize,
        /// The event.
        event: AgentEvent,
    },
    /// A model ended and its change set was built (or could not be).
    ModelFinished {
        /// The turn.
        turn: u32,
        /// How it ended.
        model: FinishedModel,
        /// Its change set against the turn's base.
        change_set: Result<ChangeSet, EngineError>,
    },
    /// The turn's review check started in a model's workspace.
    CheckStarted {
        /// The turn.
        turn: u32,
        /// The model.
        label: String,
    },
    /// A review check ended (already recorded).
    CheckDone {
        /// The turn.
        turn: u32,
        /// The model.
        label: String,
        /// How it ended.
        result: CheckResult,
    },
    /// Every model of the turn ended and every change set was reported: the turn is under
    /// review.
    TurnEnded {
        /// The turn.
        turn: u32,
        /// How it ended as a whole.
        outcome: TurnOutcome,
    },
    /// What applying a plan would do.
    ApplyPreview {
        /// The turn.
        turn: u32,
        /// Per path: clean, merge, conflict, refused.
        preview: Preview,
    },
    /// A choice was carried out and recorded.
    Chosen(ChoiceOutcome),
    /// What a rewind would do; confirm with [`Op::Rewind`].
    RewindPlanned(RewindPlan),
    /// A rewind was carried out and recorded.
    Rewound(RewindDone),
    /// Blind mode's names changed (assigned, a model joined, revealed): a front end names
    /// models by these from now on.
    Blind(Option<BlindNames>),
    /// `Compact` folded this many earlier turns (0: nothing to fold).
    Compacted {
        /// Turns folded over all models.
        folded: usize,
    },
    /// A model's workspace, for a shell.
    Workspace {
        /// The model.
        label: String,
        /// The workspace's root.
        root: PathBuf,
        /// The sandbox its commands run in.
        sandbox: Sandbox,
    },
    /// Something the user should read that changes nothing (a history line not kept).
    Notice(String),
    /// A submission was refused or failed; nothing of it was done.
    Failed {
        /// Which submission.
        op: OpKind,
        /// Why.
        error: EngineError,
    },
    /// The session ended; the stream ends after this.
    Closed {
        /// Workspaces kept on disk (label, root).
        kept: Vec<(String, PathBuf)>,
    },
}

/// The facts of the session a front end shows without asking (fixed for its life).
#[derive(Debug, Clone)]
pub struct SessionInfo {
    /// The session id.
    pub id: String,
    /// The session folder (journal, snapshots, spilled outputs).
    pub dir: PathBuf,
    /// The project.
    pub project: PathBuf,
    /// The project's store.
    pub store: Store,
    /// The front end that opened it.
    pub source: Source,
}

/// Where a front end submits [`Op`]s. Cheap to clone; the engine ends its session when every
/// handle is dropped (as after [`Op::Shutdown`]).
#[derive(Debug, Clone)]
pub struct EngineHandle {
    ops: mpsc::UnboundedSender<Op>,
    info: Arc<SessionInfo>,
}

impl EngineHandle {
    /// Submits `op`; its answers arrive on the event stream. Refused once the session ended.
    pub fn submit(&self, op: Op) -> Result<(), EngineError> {
        self.ops.send(op).map_err(|_| EngineError::Closed)
    }

    /// The session's fixed facts.
    pub fn info(&self) -> &SessionInfo {
        &self.info
    }
}

/// The one stream of [`EngineEvent`]s.
#[derive(Debug)]
pub struct EngineEvents {
    rx: mpsc::UnboundedReceiver<EngineEvent>,
}

impl EngineEvents {
    /// The next event; `None` once the session ended and every event was read.
    pub async fn recv(&mut self) -> Option<EngineEvent> {
        self.rx.recv().await
    }

    /// The next event if one is waiting (never blocks).
    pub fn try_recv(&mut self) -> Option<EngineEvent> {
        self.rx.try_recv().ok()
    }
}

/// What the engine's own jobs report back to its task.
// One per job, moved once: boxing the launched turn would buy nothing.
#[allow(clippy::large_enum_variant)]
enum Done {
    Launched {
        turn: u32,
        result: Result<Launched, EngineError>,
    },
    ChangeSet {
        turn: u32,
        model: FinishedModel,
        set: Result<ChangeSet, EngineError>,
    },
    Checked {
        turn: u32,
        label: String,
        result: CheckResult,
    },
    Preview {
        turn: u32,
        result: Result<Preview, EngineError>,
    },
    Chosen(Result<ChoiceOutcome, EngineError>),
    Planned(Result<RewindPlan, EngineError>),
    Rewound(Result<RewindDone, EngineError>),
}

impl SessionEngine {
    /// Moves the engine into its own task (on the current tokio runtime) and returns the
    /// handle to submit to and the stream of what it reports. A reopened session's unchosen
    /// turn ([`super::RestoredTurn`]) has its change sets rebuilt at once: one
    /// `ModelFinished` per finished model.
    pub fn spawn(self) -> (EngineHandle, EngineEvents) {
        let info = Arc::new(SessionInfo {
            id: self.id.clone(),
            dir: self.dir.clone(),
            project: self.project.clone(),
            store: self.store.clone(),
            source: self.source,
        });
        let (ops_tx, ops_rx) = mpsc::unbounded_channel();
        let (events_tx, events_rx) = mpsc::unbounded_channel();
        let (jobs_tx, jobs_rx) = mpsc::unbounded_channel();
        let task = Task {
            shown_names: self.blind_names().cloned(),
            core: Some(self),
            phase: Phase::Idle,
            events: events_tx,
            jobs: jobs_tx,
            run: None,
            checks: CancellationToken::new(),
            restored: None,
        };
        tokio::spawn(task.run(ops_rx, jobs_rx));
        (
            EngineHandle { ops: ops_tx, info },
            EngineEvents { rx: events_rx },
        )
    }
}

/// The engine's task: the session engine, its phase and its jobs' channel.
struct Task {
    /// The engine (taken only at the end, to finish it on the blocking pool).
    core: Option<SessionEngine>,
    phase: Phase,
    events: mpsc::UnboundedSender<EngineEvent>,
    jobs: mpsc::UnboundedSender<Done>,
    /// The running turn's run events.
    run: Option<(u32, mpsc::UnboundedReceiver<RunEvent>)>,
    /// Cancels the turn's review checks (a new turn, a choice, cancel all, the end).
    checks: CancellationToken,
    /// The reopened session's turn whose change sets are being rebuilt (it never "ends").
    restored: Option<u32>,
    /// The blind names the front end was last told.
    shown_names: Option<BlindNames>,
}

/// The next event of the running turn; waits forever when there is none (a closed channel
/// is forgotten, so the task never spins on it).
async fn next_run(run: &mut Option<(u32, mpsc::UnboundedReceiver<RunEvent>)>) -> (u32, RunEvent) {
    if let Some((turn, rx)) = run {
        if let Some(event) = rx.recv().await {
            return (*turn, event);
        }
        *run = None;
    }
    std::future::pending().await
}

impl Task {
    async fn run(
        mut self,
        mut ops: mpsc::UnboundedReceiver<Op>,
        mut jobs: mpsc::UnboundedReceiver<Done>,
    ) {
        self.restore();
        loop {
            tokio::select! {
                // The engine's own answers first: a change set built before the next op.
                biased;
                Some(done) = jobs.recv() => self.on_done(done),
                (turn, event) = next_run(&mut self.run) => self.on_run(turn, event),
                op = ops.recv() => match op {
                    Some(Op::Shutdown { keep_workspaces }) => {
                        self.shutdown(keep_workspaces).await;
                        return;
                    }
                    // Every handle dropped: the session ends as if asked.
                    None => {
                        self.shutdown(false).await;
                        return;
                    }
                    Some(op) => self.on_op(op),
                },
            }
            self.announce_names();
        }
    }

    fn emit(&self, event: EngineEvent) {
        // A front end that stopped listening loses nothing recorded: the log has it all.
        let _ = self.events.send(event);
    }

    fn failed(&self, op: OpKind, error: EngineError) {
        self.emit(EngineEvent::Failed { op, error });
    }

    /// Tells the front end when blind mode's names changed since it last heard.
    fn announce_names(&mut self) {
        let Some(core) = &self.core else { return };
        if core.blind_names() != self.shown_names.as_ref() {
            self.shown_names = core.blind_names().cloned();
            self.emit(EngineEvent::Blind(self.shown_names.clone()));
        }
    }

    /// Moves the phase by `step`; `Err` when refused there (the phase stays).
    fn step(&mut self, step: Step) -> Result<super::state::Moved, EngineError> {
        let (next, moved) = self.phase.next(step)?;
        self.phase = next;
        Ok(moved)
    }

    /// A reopened session's unchosen turn: rebuild its finished models' change sets.
    fn restore(&mut self) {
        let Some(core) = &self.core else { return };
        let Some(state) = core.turn.as_ref().filter(|t| t.restored) else {
            return;
        };
        let turn = state.turn;
        let finished: Vec<FinishedModel> = state
            .slots
            .iter()
            .filter_map(|s| s.finished.clone())
            .collect();
        let entries: BTreeSet<usize> = finished.iter().map(|f| f.entry).collect();
        if self
            .step(Step::Restored {
                turn,
                finished: entries,
            })
            .is_err()
        {
            return;
        }
        self.restored = Some(turn);
        for model in finished {
            self.build_change_set(turn, model);
        }
    }

    fn on_op(&mut self, op: Op) {
        let kind = op.kind();
        let Some(core) = self.core.as_mut() else {
            return self.failed(kind, EngineError::Closed);
        };
        match op {
            Op::StartTurn(request) => self.start_turn(request),
            Op::Cancel { label } => core.cancel(&label),
            Op::CancelAll => {
                core.cancel_all();
                self.checks.cancel();
            }
            Op::PreviewApply { turn, plan } => {
                let (project, session) = (core.project.clone(), core.dir.clone());
                let jobs = self.jobs.clone();
                tokio::task::spawn_blocking(move || {
                    let result = ApplyEngine::new(&project, &session)
                        .and_then(|engine| engine.preview(&plan))
                        .map_err(EngineError::from);
                    let _ = jobs.send(Done::Preview { turn, result });
                });
            }
            Op::Choose(request) => self.choose(request),
            Op::PlanRewind { scope } => match core.plan_rewind(scope) {
                Err(error) => self.failed(kind, error),
                Ok(job) => {
                    let jobs = self.jobs.clone();
                    tokio::task::spawn_blocking(move || {
                        let _ = jobs.send(Done::Planned(job.run()));
                    });
                }
            },
            Op::Rewind { plan, force } => self.rewind(plan, force),
            Op::SetModels(models) => core.set_models(models),
            Op::Blind(on) => core.set_blind(on),
            Op::Clear => core.clear_conversations(),
            Op::Compact => {
                let folded = core.compact();
                self.emit(EngineEvent::Compacted { folded });
            }
            Op::RunCheck { label, command } => match self.phase.turn() {
                Some(turn) if self.start_check(turn, &label, command) => {}
                _ => self.failed(kind, EngineError::NoWorkspace(label)),
            },
            Op::OpenWorkspace { label } => {
                let found = core.turn.as_ref().and_then(|state| {
                    let ws = core.workspace(&label)?;
                    Some((ws.root().to_path_buf(), ws.sandbox(&state.sandbox)))
                });
                match found {
                    Some((root, sandbox)) => self.emit(EngineEvent::Workspace {
                        label,
                        root,
                        sandbox,
                    }),
                    None => self.failed(kind, EngineError::NoWorkspace(label)),
                }
            }
            Op::EntryWorkspace { turn, entry } => {
                let found = core.workspace_at(turn, entry).map(|(ws, settings)| {
                    let label = core
                        .turn
                        .as_ref()
                        .and_then(|t| t.slots.get(entry))
                        .map(|s| s.label.clone())
                        .unwrap_or_default();
                    (label, ws.root().to_path_buf(), ws.sandbox(settings))
                });
                match found {
                    Some((label, root, sandbox)) => self.emit(EngineEvent::Workspace {
                        label,
                        root,
                        sandbox,
                    }),
                    None => self.failed(kind, EngineError::NoWorkspace(format!("entry {entry}"))),
                }
            }
            Op::ReleaseWorkspace { turn, entry } => {
                if let Some(ws) = core.release_workspace(turn, entry) {
                    crate::workspace::remove_later(ws);
                }
            }
            // Handled by the loop.
            Op::Shutdown { .. } => {}
        }
    }

    fn start_turn(&mut self, request: TurnRequest) {
        let Some(core) = self.core.as_mut() else {
            return;
        };
        let turn = core.last_turn + 1;
        if let Some(restored) = self.restored {
            // Its change sets come from its records, not from a workspace: nothing to wait for.
            let _ = self.step(Step::RestoreSuperseded { turn: restored });
        }
        let Some(core) = self.core.as_mut() else {
            return;
        };
        let next = match self.phase.next(Step::StartTurn {
            turn,
            models: request.targets.len(),
        }) {
            Ok((next, _)) => next,
            Err(error) => return self.failed(OpKind::StartTurn, error),
        };
        let history_line = request.history_line.clone();
        let launch = match core.start_turn(request) {
            Ok(launch) => launch,
            Err(error) => return self.failed(OpKind::StartTurn, error),
        };
        self.phase = next;
        // The old workspaces go with the new turn: their checks stop first.
        self.checks.cancel();
        self.checks = CancellationToken::new();
        self.restored = None;
        if !launch.compacted.is_empty() {
            self.emit(EngineEvent::HistoryShortened {
                turn,
                compacted: launch.compacted.clone(),
            });
        }
        if let Some((line, core)) = history_line.zip(self.core.as_ref()) {
            let entry = HistoryEntry {
                time: now().rfc3339(),
                session: core.id.clone(),
                prompt: line,
            };
            let path = core.store.history();
            let events = self.events.clone();
            tokio::task::spawn_blocking(move || {
                if let Err(err) = append_history(&path, &entry) {
                    let _ = events.send(EngineEvent::Notice(format!(
                        "the prompt was not kept in the prompt history ({}): {err}",
                        path.display()
                    )));
                }
            });
        }
        let jobs = self.jobs.clone();
        tokio::spawn(async move {
            let result = launch.launch().await;
            let _ = jobs.send(Done::Launched { turn, result });
        });
    }

    fn choose(&mut self, request: ChoiceRequest) {
        let Some(core) = self.core.as_mut() else {
            return;
        };
        let next = match self.phase.next(Step::Choose { turn: request.turn }) {
            Ok((next, _)) => next,
            Err(error) => return self.failed(OpKind::Choose, error),
        };
        let job = match core.choice_job(request) {
            Ok(job) => job,
            Err(error) => return self.failed(OpKind::Choose, error),
        };
        self.phase = next;
        self.checks.cancel();
        let jobs = self.jobs.clone();
        tokio::task::spawn_blocking(move || {
            let _ = jobs.send(Done::Chosen(job.run()));
        });
    }

    fn rewind(&mut self, plan: RewindPlan, force: bool) {
        let Some(core) = self.core.as_mut() else {
            return;
        };
        let next = match self.phase.next(Step::Rewind) {
            Ok((next, _)) => next,
            Err(error) => return self.failed(OpKind::Rewind, error),
        };
        let job = match core.rewind_job(plan, force) {
            Ok(job) => job,
            Err(error) => return self.failed(OpKind::Rewind, error),
        };
        self.phase = next;
        let jobs = self.jobs.clone();
        tokio::task::spawn_blocking(move || {
            let _ = jobs.send(Done::Rewound(job.run()));
        });
    }

    fn on_run(&mut self, turn: u32, event: RunEvent) {
        let Some(core) = self.core.as_mut() else {
            return;
        };
        for event in core.on_event(turn, event) {
            match event {
                super::TurnEvent::Started { entry } => {
                    self.emit(EngineEvent::ModelStarted { turn, entry });
                }
                super::TurnEvent::WorkspaceReady { entry, root } => {
                    self.emit(EngineEvent::WorkspaceReady { turn, entry, root });
                }
                super::TurnEvent::Agent { entry, event } => {
                    self.emit(EngineEvent::Agent { turn, entry, event });
                }
                super::TurnEvent::Fairness { context, ledger } => {
                    self.emit(EngineEvent::TurnContext {
                        turn,
                        context,
                        ledger,
                    });
                }
                super::TurnEvent::Finished(model) => {
                    let _ = self.step(Step::ModelFinished { entry: model.entry });
                    self.build_change_set(turn, model);
                }
                // The phase says when the turn is under review (every change set reported).
                super::TurnEvent::Ended => {}
            }
        }
    }

    /// Builds a finished model's change set on the blocking pool.
    fn build_change_set(&self, turn: u32, model: FinishedModel) {
        let Some(core) = &self.core else { return };
        let job = core.change_set_job(model.entry);
        let jobs = self.jobs.clone();
        match job {
            Some(job) => {
                tokio::task::spawn_blocking(move || {
                    let set = job.build();
                    let _ = jobs.send(Done::ChangeSet { turn, model, set });
                });
            }
            None => {
                let _ = jobs.send(Done::ChangeSet {
                    turn,
                    model,
                    set: Err(EngineError::NoBase(turn)),
                });
            }
        }
    }

    /// Starts `command` in `label`'s workspace; false when it has none.
    fn start_check(&self, turn: u32, label: &str, command: String) -> bool {
        let Some(core) = &self.core else { return false };
        let Some(state) = core.turn.as_ref().filter(|t| t.turn == turn) else {
            return false;
        };
        let Some(workspace) = core.workspace(label) else {
            return false;
        };
        let dir = workspace.root().to_path_buf();
        let sandbox = workspace.sandbox(&state.sandbox);
        let token = self.checks.clone();
        let jobs = self.jobs.clone();
        let label = label.to_string();
        self.emit(EngineEvent::CheckStarted {
            turn,
            label: label.clone(),
        });
        tokio::spawn(async move {
            let result = super::check::run_check(
                &command,
                &dir,
                &sandbox,
                super::check::CHECK_TIMEOUT,
                &token,
            )
            .await;
            let _ = jobs.send(Done::Checked {
                turn,
                label,
                result,
            });
        });
        true
    }

    fn on_done(&mut self, done: Done) {
        let Some(core) = self.core.as_mut() else {
            return;
        };
        match done {
            Done::Launched { turn, result } => match result {
                Ok(launched) => {
                    let notices = context_notices(launched.ledger.context());
                    let settled = core.turn_started(turn, launched.base, launched.ledger);
                    let models = core
                        .turn
                        .as_ref()
                        .map(|t| t.slots.iter().map(|s| s.label.clone()).collect())
                        .unwrap_or_default();
                    self.run = Some((turn, launched.events));
                    let _ = self.step(Step::Launched);
                    for note in notices {
                        self.emit(EngineEvent::Notice(note));
                    }
                    self.emit(EngineEvent::TurnStarted { turn, models });
                    if let Some(super::TurnEvent::Fairness { context, ledger }) = settled {
                        self.emit(EngineEvent::TurnContext {
                            turn,
                            context,
                            ledger,
                        });
                    }
                }
                Err(error) => {
                    core.turn_rejected(turn);
                    let _ = self.step(Step::LaunchFailed);
                    self.failed(OpKind::StartTurn, error);
                }
            },
            Done::ChangeSet { turn, model, set } => {
                if core.current_turn() != Some(turn) {
                    return;
                }
                if let Ok(set) = &set {
                    core.change_set_built(turn, model.entry, set);
                }
                let check = core
                    .turn
                    .as_ref()
                    .and_then(|t| t.check.clone())
                    .filter(|_| set.is_ok());
                let entry = model.entry;
                // The check starts (and says so) before the model's change set is reported:
                // a front end that has every change set knows which checks are still running.
                if let Some(command) = check {
                    self.start_check(turn, &model.label, command);
                }
                self.emit(EngineEvent::ModelFinished {
                    turn,
                    model,
                    change_set: set,
                });
                let moved = self
                    .step(Step::ChangeSetBuilt { entry })
                    .unwrap_or_default();
                if moved.ready && self.restored != Some(turn) {
                    let outcome = self
                        .core
                        .as_ref()
                        .map_or(TurnOutcome::Done, |c| c.turn_outcome());
                    self.emit(EngineEvent::TurnEnded { turn, outcome });
                }
            }
            Done::Checked {
                turn,
                label,
                result,
            } => {
                core.record_check(turn, &label, &result);
                self.emit(EngineEvent::CheckDone {
                    turn,
                    label,
                    result,
                });
            }
            Done::Preview { turn, result } => match result {
                Ok(preview) => self.emit(EngineEvent::ApplyPreview { turn, preview }),
                Err(error) => self.failed(OpKind::PreviewApply, error),
            },
            Done::Chosen(result) => {
                let _ = self.step(Step::ChoiceEnded);
                match result {
                    Ok(outcome) => {
                        if let Some(core) = self.core.as_mut() {
                            core.chosen(&outcome);
                        }
                        self.emit(EngineEvent::Chosen(outcome));
                    }
                    Err(error) => self.failed(OpKind::Choose, error),
                }
            }
            Done::Planned(result) => match result {
                Ok(plan) => self.emit(EngineEvent::RewindPlanned(plan)),
                Err(error) => self.failed(OpKind::PlanRewind, error),
            },
            Done::Rewound(result) => {
                let _ = self.step(Step::RewindEnded);
                match result {
                    Ok(done) => {
                        if let Some(core) = self.core.as_mut() {
                            core.rewound(&done);
                        }
                        self.emit(EngineEvent::Rewound(done));
                    }
                    Err(error) => self.failed(OpKind::Rewind, error),
                }
            }
        }
    }

    /// Ends the session: the log's last records and the workspaces' removal run on the
    /// blocking pool; then `Closed`.
    async fn shutdown(&mut self, keep_workspaces: bool) {
        self.checks.cancel();
        self.phase = Phase::Closed;
        self.run = None;
        let Some(mut core) = self.core.take() else {
            return;
        };
        let kept = if keep_workspaces {
            core.keep_workspaces()
        } else {
            Vec::new()
        };
        let finished = tokio::task::spawn_blocking(move || {
            core.finish();
            core.drop_workspaces();
            let names = core.blind_names().cloned();
            drop(core);
            names
        })
        .await;
        if let Ok(names) = finished
            && names != self.shown_names
        {
            self.emit(EngineEvent::Blind(names));
        }
        self.emit(EngineEvent::Closed { kept });
    }
}
