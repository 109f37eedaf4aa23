//! A turn: each model's history shortened by the one policy, its next-turn note, the project
//! captured, the fan-out, and every run event recorded before the front end sees it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::fairness::LedgerBook;
use super::history::{self, HistoryPolicy};
use super::record::Finish;
use super::{EngineError, NoteInputs, SessionEngine};
use crate::agent::{Agent, SubAgentModel, SubAgents, limits_text};
use crate::context::{ContextSources, LedgerEntry, LedgerSource, ProjectContext};
use crate::model::{AgentEvent, Message, RunStats, RunStop, SubAgentSettings};
use crate::runner::{EntryRun, ModelEntry, ModelResult, RunEvent, RunOptions, fan_out_each};
use crate::session::{SessionRecord, TurnTask, next_turn_note};
use crate::workspace::changeset::{BaseReader, ChangeSet, Modes};
use crate::workspace::{Base, FileWrite};

/// How many other workspaces of a turn a change set may read base content from.
const FALLBACK_WORKSPACES: usize = 8;

/// One model of a turn.
#[derive(Clone)]
pub struct TurnTarget {
    /// Entry label (`openai/gpt-5#2`).
    pub label: String,
    /// The configured model.
    pub agent: Agent,
    /// Its context window in tokens, when known (automatic compaction needs it).
    pub window: Option<u64>,
}

/// What a front end asks for.
pub struct TurnRequest {
    /// The user's prompt.
    pub prompt: String,
    /// Text appended to the prompt (attached files), not recorded as the prompt.
    pub attached: String,
    /// The models addressed, in order.
    pub targets: Vec<TurnTarget>,
    /// How workspaces are made and tools limited.
    pub options: RunOptions,
    /// How conversations are shortened.
    pub policy: HistoryPolicy,
    /// The review check run in each model's workspace once its change set is built (`None`:
    /// none). Its result is recorded and reported ([`super::EngineEvent::CheckDone`]).
    pub check: Option<String>,
    /// The line kept in the project's prompt history once the turn started (`None`: not
    /// kept, e.g. a prompt the TUI was told to forget).
    pub history_line: Option<String>,
    /// What becomes of the models' workspaces across turns (default: a new one per turn,
    /// removed when the next turn starts).
    pub workspaces: TurnWorkspaces,
    /// Where the turn's project context comes from (the user's config folder, whether the
    /// project is trusted, a recipe's skill folders): the engine reads it once for the turn
    /// and gives every model the same ([`crate::context`]).
    pub context: ContextSources,
    /// Several independent tasks in one turn (`versus run`), so their models run side by side
    /// under one `--jobs` limit instead of one task's turn waiting for the slowest model of
    /// the one before: each task's entries are sent its own prompt, start with no history
    /// and read no next-turn note (a job of its own), and the `turn` record names each
    /// entry's task. Empty: every entry works on `prompt` (every other front end).
    pub tasks: Vec<TurnTask>,
}

/// What becomes of a turn's workspaces: what `versus run` needs from the engine, where a
/// sequential job's tasks are turns that continue in one workspace and a recipe may keep
/// every workspace on disk.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TurnWorkspaces {
    /// Each model continues in its workspace of the previous turn when it has one (not made
    /// again, no setup command; its earlier changes are there), and reads no next-turn note
    /// (nothing was chosen: its own changes are where it left them).
    pub continue_previous: bool,
    /// The workspaces stay on disk when the turn's models are done with them (the next turn
    /// starts, or the session ends).
    pub keep: bool,
}

/// A turn recorded and ready to start: run [`TurnLaunch::launch`] on the async runtime.
pub struct TurnLaunch {
    /// Models whose conversation was shortened first (label, turns folded).
    pub compacted: Vec<(String, usize)>,
    project: PathBuf,
    runs: Vec<EntryRun>,
    options: RunOptions,
    old: Vec<ModelResult>,
    context: ContextSources,
    /// The session's blob folder: the files a pick of this session applied lie there, so the
    /// turn's base names it (`Base::with_content_from`).
    blobs: PathBuf,
}

/// A turn that started: its base and the events of its models, tagged with their position.
pub struct Launched {
    /// The project's state at the start (change sets are computed against it).
    pub base: Arc<Base>,
    /// Every model's events; closes after the last `Finished`.
    pub events: mpsc::UnboundedReceiver<RunEvent>,
    /// What each model was given (the project context and the rest), to be hashed and
    /// compared once the tools each got are known (see [`crate::context::ledger`]).
    pub(super) ledger: LedgerBook,
}

impl TurnLaunch {
    /// Hands the previous turn's workspaces to the background removal (the new turn never
    /// waits for them), captures the project and starts every model. Blocking work runs on
    /// the blocking pool. An error means no model started.
    pub(super) async fn launch(mut self) -> Result<Launched, EngineError> {
        crate::workspace::remove_later(self.old);
        let project = self.project.clone();
        let sources = self.context;
        let sub_agents = sources.sub_agents;
        let blobs = self.blobs;
        let (captured, context) = tokio::task::spawn_blocking(move || {
            (
                Base::capture(&project).map(|base| base.with_content_from(blobs)),
                ProjectContext::gather(&project, &sources),
            )
        })
        .await?;
        let base = Arc::new(captured.map_err(EngineError::Capture)?);
        let sources = give_context(&mut self.runs, &context, sub_agents);
        // A model's tool servers start in its workspace: its tools are known only then.
        let late_tools = self
            .options
            .mcp
            .as_ref()
            .is_some_and(|plan| !plan.is_empty());
        let ledger = LedgerBook::new(context, sources, late_tools);
        let events = fan_out_each(Arc::clone(&base), self.runs, self.options);
        Ok(Launched {
            base,
            events,
            ledger,
        })
    }
}

/// Puts the turn's project context into every model's system prompt (the same words for
/// each), lets read_file open the skills outside the project, and hashes what each model was
/// given for the fairness ledger. With `sub_agents` on, every model gets the same
/// `spawn_agent` tool (sub-agents on any model of the run), its limits a tool setting.
pub(super) fn give_context(
    runs: &mut [EntryRun],
    context: &ProjectContext,
    sub_agents: Option<SubAgentSettings>,
) -> Vec<LedgerSource> {
    let roots = context.read_roots();
    let mut ledger = Vec::with_capacity(runs.len());
    let plan = sub_agents.map(|settings| {
        let models = runs
            .iter()
            .map(|run| SubAgentModel {
                label: without_sample(&run.entry.label).to_string(),
                client: Arc::clone(&run.entry.agent.client),
                model: run.entry.agent.model.clone(),
                cost: run.entry.agent.cost.clone(),
            })
            .collect();
        Arc::new(SubAgents::new(settings, models, context.prompt_text()))
    });
    for run in runs.iter_mut() {
        let agent = &mut run.entry.agent;
        // Before the context: the tool's guidance goes with the other tools'.
        if let Some(plan) = &plan {
            plan.install(agent, without_sample(&run.entry.label));
        }
        agent.settings.system = context.apply(&agent.settings.system);
        agent.settings.read_roots.extend(roots.iter().cloned());
        ledger.push(LedgerSource {
            model: run.entry.label.clone(),
            system: agent.settings.system.clone(),
            tools: agent.tool_defs(),
            tool_settings: agent.tools.ledger_notes(),
            seed: agent.settings.seed,
            limits: limits_text(&agent.settings),
        });
    }
    ledger
}

/// An entry label without its sample number (`openai/gpt-5#2` -> `openai/gpt-5`): the name
/// of the model `spawn_agent` accepts.
fn without_sample(label: &str) -> &str {
    match label.rsplit_once('#') {
        Some((model, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => model,
        _ => label,
    }
}

/// How a turn ended as a whole: the one decision front ends map to their exit codes
/// and messages, so `versus ask` and any later front end judge a turn the same way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TurnOutcome {
    /// At least one model ended without an error (its answer or changes can be judged).
    Done,
    /// Every model ended with an error (provider, key, setup, workspace): there is nothing to
    /// judge, and a script must not read it as success.
    EveryModelFailed,
    /// The turn was stopped (Ctrl+C, a signal).
    Interrupted,
}

/// A turn's [`TurnOutcome`] from its parts: interrupted first; then failed when there was a
/// model and none ended without an error.
pub(super) fn outcome_of(interrupted: bool, stops: impl Iterator<Item = RunStop>) -> TurnOutcome {
    if interrupted {
        return TurnOutcome::Interrupted;
    }
    let mut any = false;
    for stop in stops {
        if stop != RunStop::Error {
            return TurnOutcome::Done;
        }
        any = true;
    }
    if any {
        TurnOutcome::EveryModelFailed
    } else {
        TurnOutcome::Done
    }
}

/// A finished model, as front ends show it.
#[derive(Debug, Clone, PartialEq)]
pub struct FinishedModel {
    /// Position in the turn.
    pub entry: usize,
    /// Entry label.
    pub label: String,
    /// How it ended (`Error` when its workspace could not be prepared).
    pub stop: RunStop,
    /// Counters.
    pub stats: RunStats,
    /// The error text, if any (agent or outside it).
    pub error: Option<String>,
    /// Its last visible text.
    pub final_text: String,
    /// Proposals recorded.
    pub writes: usize,
    /// Paths it changed, sorted.
    pub files: Vec<String>,
    /// Those of `files` it deleted (its last change to them was a delete), sorted.
    pub deleted: Vec<String>,
    /// The notes at the end of `error` (what the change scan left out, build output it
    /// proposed), as appended; empty for a model rebuilt from the log.
    pub notes: Vec<String>,
    /// What the change scan left out of its proposals, one text per path; empty for a model
    /// rebuilt from the log.
    pub scan_notes: Vec<String>,
}

/// What a run event meant, for the front end.
#[derive(Debug)]
pub enum TurnEvent {
    /// A model got its place under the `--jobs` limit: its workspace is being prepared.
    Started {
        /// Position in the turn.
        entry: usize,
    },
    /// A model's workspace is ready.
    WorkspaceReady {
        /// Position in the turn.
        entry: usize,
        /// Its root.
        root: PathBuf,
    },
    /// An event of a model's agent.
    Agent {
        /// Position in the turn.
        entry: usize,
        /// The event.
        event: AgentEvent,
    },
    /// Every model's tools are known: what each was given, compared (recorded already).
    Fairness {
        /// The project context every model was given.
        context: ProjectContext,
        /// One entry per model, differences flagged.
        ledger: Vec<LedgerEntry>,
    },
    /// A model ended; its change set can be built ([`SessionEngine::change_set_job`]).
    Finished(FinishedModel),
    /// Every model of the turn has ended.
    Ended,
}

/// One model's slot in the turn under review.
pub(super) struct Slot {
    pub label: String,
    pub finished: Option<FinishedModel>,
    pub writes: Vec<FileWrite>,
    /// The modes recorded with a reopened turn's proposals (its workspace is gone).
    pub modes: BTreeMap<String, u32>,
    pub result: Option<ModelResult>,
    pub files: Option<usize>,
    pub cancel: CancellationToken,
}

/// The running turn, or the last one, kept for review until the next starts.
pub(super) struct TurnState {
    pub turn: u32,
    /// When the turn was launched, before its capture (a file unchanged since then still has
    /// its base bytes).
    pub started: SystemTime,
    pub prompt: String,
    pub base: Option<Arc<Base>>,
    pub slots: Vec<Slot>,
    pub all: CancellationToken,
    /// Rebuilt from the log after the process that ran it ended: nothing runs.
    pub restored: bool,
    /// Every model was cancelled (Ctrl+C, a signal, Esc): the turn ends interrupted.
    pub interrupted: bool,
    /// The review check of the turn (`None`: none).
    pub check: Option<String>,
    /// The sandbox settings its commands ran under (checks and shells get the same).
    pub sandbox: crate::exec::SandboxSettings,
    /// Its workspaces stay on disk when it is replaced.
    pub keep: bool,
    /// Its fairness ledger until it settles (`None`: not started yet, or restored).
    pub ledger: Option<LedgerBook>,
}

impl TurnState {
    pub fn cancel_all(&self) {
        self.all.cancel();
    }

    pub(super) fn running(&self) -> bool {
        !self.restored && self.slots.iter().any(|s| s.finished.is_none())
    }
}

/// Keeps in the session's blob folder the base content of `set`'s changed files that git does
/// not hold (the user's uncommitted or untracked version at the start of the turn). Once the
/// turn's workspaces are gone and the user edits such a file, nothing else has those bytes,
/// and a turn reopened for review or `versus pick` needs them to rebuild the change set and
/// to merge the model's change with the user's edit. A file the copy-on-write workspace knows
/// to be the commit's costs nothing here, another file git holds a hash (or a look at its
/// index entry), and nothing on disk. A failure to keep them is logged: the live turn has its
/// workspaces.
fn keep_base_content(
    set: &ChangeSet,
    base: &Base,
    reader: &BaseReader,
    (folder, started): (&Path, SystemTime),
    committed: &BTreeSet<String>,
) {
    let timer = std::time::Instant::now();
    // What the workspace knows to be the commit's needs no hashing.
    let changed = set
        .files
        .iter()
        .filter(|file| !committed.contains(&file.path))
        .filter_map(|file| Some((file.path.as_str(), file.base.as_deref()?.as_slice())))
        .collect::<Vec<_>>();
    if changed.is_empty() {
        return;
    }
    let missing: BTreeSet<&str> = reader
        .not_held_by_git(changed, Some(started))
        .into_iter()
        .collect();
    let blobs: Vec<crate::workspace::content::Blob> = set
        .files
        .iter()
        .filter(|file| missing.contains(file.path.as_str()))
        .filter_map(|file| {
            let entry = base.get(&file.path)?;
            Some((entry.hash.clone(), Arc::clone(file.base.as_ref()?)))
        })
        .collect();
    if let Err(error) = crate::session::store_blobs(folder, &blobs) {
        tracing::warn!(%error, "base content of a change set not kept in the session");
    }
    tracing::debug!(
        files = set.files.len(),
        kept = blobs.len(),
        ms = timer.elapsed().as_millis() as u64,
        "base content git does not hold kept"
    );
}

/// Builds one model's change set off the engine (reads base content: blocking).
pub struct ChangeSetJob {
    /// The model.
    pub label: String,
    base: Arc<Base>,
    writes: Vec<FileWrite>,
    root: Option<PathBuf>,
    /// The modes recorded with the proposals, for a reopened turn (no workspace root).
    modes: BTreeMap<String, u32>,
    fallbacks: Vec<PathBuf>,
    /// The session's blob folder, where a live turn keeps the base content of the files the
    /// model changed that git does not hold, and when the turn started (`None` for a reopened
    /// turn: its base content is read from there, never written).
    keep_base_in: Option<(PathBuf, SystemTime)>,
    /// The touched paths whose base content is known to be the commit's (git holds it).
    committed: BTreeSet<String>,
}

impl ChangeSetJob {
    /// Folds the model's writes into its change set against the turn's base.
    pub fn build(self) -> Result<ChangeSet, EngineError> {
        let started = std::time::Instant::now();
        let mut reader = BaseReader::new(&self.base);
        for dir in &self.fallbacks {
            reader = reader.with_fallback(dir);
        }
        let modes = match &self.root {
            Some(root) => Modes::Workspace(root),
            None => Modes::Recorded(&self.modes),
        };
        let set =
            ChangeSet::build_with_modes(&self.label, &self.base, &self.writes, &reader, modes)
                .map_err(|source| EngineError::ChangeSet {
                    model: self.label.clone(),
                    source: Box::new(source),
                })?;
        if let Some((folder, started)) = &self.keep_base_in {
            keep_base_content(
                &set,
                &self.base,
                &reader,
                (folder, *started),
                &self.committed,
            );
        }
        tracing::debug!(
            model = %self.label,
            files = set.files.len(),
            ms = started.elapsed().as_millis() as u64,
            "change set built"
        );
        Ok(set)
    }
}

impl SessionEngine {
    /// Whether a turn is running.
    pub(super) fn running(&self) -> bool {
        self.turn.as_ref().is_some_and(TurnState::running)
    }

    /// The turn under review (running or finished), if any.
    pub(super) fn current_turn(&self) -> Option<u32> {
        self.turn.as_ref().map(|t| t.turn)
    }

    /// Records a new turn and prepares each model's history and prompt; the front end then
    /// runs [`TurnLaunch::launch`]. The previous turn's workspaces go with it.
    pub(super) fn start_turn(&mut self, request: TurnRequest) -> Result<TurnLaunch, EngineError> {
        if self.running() {
            return Err(EngineError::Busy);
        }
        let turn = self.last_turn + 1;
        // What the models read about the previous turn's choice (nothing chosen: none applied).
        let inputs = NoteInputs {
            own: self.last_files.clone(),
            ..self.next_note.clone().unwrap_or_default()
        };
        let all = CancellationToken::new();
        // The previous turn's workspaces: a model continuing in its own takes it; the rest
        // are removed in the background when the turn launches (left on disk if kept).
        let mut old: Vec<ModelResult> = match self.turn.take() {
            Some(state) => {
                let keep = state.keep;
                state
                    .slots
                    .into_iter()
                    .filter_map(|s| s.result)
                    .map(|mut result| {
                        if keep && let Some(ws) = result.workspace.as_mut() {
                            ws.keep();
                        }
                        result
                    })
                    .collect()
            }
            None => Vec::new(),
        };
        let continues = request.workspaces.continue_previous;
        let mut runs = Vec::with_capacity(request.targets.len());
        let mut slots = Vec::with_capacity(request.targets.len());
        let mut compacted = Vec::new();
        for (position, target) in request.targets.iter().enumerate() {
            // An entry of one of several tasks is a job of its own: no history, no note.
            let task = TurnTask::of(&request.tasks, position);
            let mut history = match task {
                Some(_) => Vec::new(),
                None => self
                    .conversations
                    .get(&target.label)
                    .cloned()
                    .unwrap_or_default(),
            };
            let shortened = history::prepare(&mut history, target.window, request.policy);
            if shortened.folded > 0 || shortened.dropped > 0 {
                tracing::info!(model = %target.label, ?shortened, "history shortened");
                self.record_conversation(self.last_turn, &target.label, &history);
                self.conversations
                    .insert(target.label.clone(), history.clone());
                if shortened.folded > 0 {
                    self.recorder.record(&SessionRecord::Compacted {
                        turn: self.last_turn,
                        turns_folded: shortened.folded,
                    });
                    compacted.push((target.label.clone(), shortened.folded));
                }
            }
            // From the second turn on, a model reads what became of its proposals: which
            // model's changes were applied (or none) and which of its own files were not.
            let mut text = String::new();
            if !history.is_empty() && !continues {
                text.push_str(&next_turn_note(
                    &target.label,
                    &inputs.chosen,
                    inputs
                        .own
                        .get(&target.label)
                        .map(Vec::as_slice)
                        .unwrap_or(&[]),
                    &inputs.applied,
                ));
                text.push_str("\n\n");
            }
            text.push_str(task.map_or(&request.prompt, |t| &t.prompt));
            text.push_str(&request.attached);
            let cancel = all.child_token();
            slots.push(Slot {
                label: target.label.clone(),
                finished: None,
                writes: Vec::new(),
                modes: BTreeMap::new(),
                result: None,
                files: None,
                cancel: cancel.clone(),
            });
            runs.push(EntryRun {
                entry: ModelEntry {
                    label: target.label.clone(),
                    agent: target.agent.clone(),
                    history,
                },
                prompt: Message::user(text),
                cancel,
                workspace: old
                    .iter_mut()
                    .filter(|_| continues)
                    .find(|r| r.label == target.label)
                    .and_then(|r| r.workspace.take()),
            });
        }
        self.sent_notes.insert(turn, inputs);
        self.next_note = None;
        self.last_turn = turn;
        self.prompts.insert(turn, request.prompt.clone());
        let labels: Vec<String> = request.targets.iter().map(|t| t.label.clone()).collect();
        self.record_turn(turn, &request.prompt, &labels, &request.tasks);
        self.turn = Some(TurnState {
            turn,
            started: SystemTime::now(),
            prompt: request.prompt,
            base: None,
            slots,
            all,
            restored: false,
            interrupted: false,
            check: request.check,
            sandbox: request.options.sandbox.clone(),
            keep: request.workspaces.keep,
            ledger: None,
        });
        Ok(TurnLaunch {
            compacted,
            project: self.project.clone(),
            runs,
            options: request.options,
            old,
            context: request.context,
            blobs: self.dir.join(crate::session::BLOBS_DIR),
        })
    }

    /// The turn could not start (its project capture failed): nothing ran.
    pub(super) fn turn_rejected(&mut self, turn: u32) {
        if self.turn.as_ref().is_some_and(|t| t.turn == turn) {
            self.turn = None;
            self.record_turn_end(turn);
        }
    }

    /// The turn started from `base`, its models given what `ledger` holds: recorded before
    /// any of their events. The ledger's verdict when it is settled already (no model waits
    /// for tool servers), else it comes with the last model's tools ([`TurnEvent::Fairness`]).
    pub(super) fn turn_started(
        &mut self,
        turn: u32,
        base: Arc<Base>,
        ledger: LedgerBook,
    ) -> Option<TurnEvent> {
        let state = self.turn.as_mut().filter(|t| t.turn == turn)?;
        state.base = Some(base);
        let settled = ledger.settled();
        state.ledger = Some(ledger);
        // Recorded now even when it is not settled: a session that ends before its models'
        // tools are known still says what they were given at the start.
        let recorded = self.record_ledger(turn);
        recorded.filter(|_| settled)
    }

    /// The ledger of `turn` just settled: recorded again (the reader keeps the last record)
    /// and reported.
    fn ledger_settled(&mut self, turn: u32) -> Option<TurnEvent> {
        self.record_ledger(turn)
    }

    /// Records the turn's ledger as it stands (a `context` record) and says it as an event.
    fn record_ledger(&mut self, turn: u32) -> Option<TurnEvent> {
        let book = self.turn.as_ref()?.ledger.as_ref()?;
        let (context, ledger) = (book.context().clone(), book.entries());
        self.recorder.record(&SessionRecord::Context {
            turn,
            context: context.clone(),
            ledger: ledger.clone(),
        });
        Some(TurnEvent::Fairness { context, ledger })
    }

    /// Cancels every model of the running turn (their bash children are killed); a turn
    /// still running ends interrupted.
    pub(super) fn cancel_all(&mut self) {
        if let Some(turn) = &mut self.turn {
            if turn.running() {
                turn.interrupted = true;
            }
            turn.cancel_all();
        }
    }

    /// How the turn under review ended (see [`TurnOutcome`]).
    pub(super) fn turn_outcome(&self) -> TurnOutcome {
        match &self.turn {
            Some(state) => outcome_of(
                state.interrupted,
                state
                    .slots
                    .iter()
                    .filter_map(|s| s.finished.as_ref().map(|f| f.stop)),
            ),
            None => TurnOutcome::Done,
        }
    }

    /// Cancels one model of the running turn.
    pub(super) fn cancel(&self, label: &str) {
        if let Some(turn) = &self.turn {
            for slot in turn.slots.iter().filter(|s| s.label == label) {
                slot.cancel.cancel();
            }
        }
    }

    /// Records one run event of turn `turn` and says what it means. Events of an older turn
    /// are ignored.
    pub(super) fn on_event(&mut self, turn: u32, event: RunEvent) -> Vec<TurnEvent> {
        let Some(state) = self.turn.as_mut().filter(|t| t.turn == turn) else {
            return Vec::new();
        };
        match event {
            RunEvent::Started { entry } => vec![TurnEvent::Started { entry }],
            RunEvent::WorkspaceReady { entry, root, mode } => {
                self.record_workspace(turn, entry, &root, mode);
                vec![TurnEvent::WorkspaceReady { entry, root }]
            }
            RunEvent::Agent { entry, event } => {
                let label = state
                    .slots
                    .get(entry)
                    .map(|s| s.label.clone())
                    .unwrap_or_default();
                self.record_agent(turn, entry, &label, &event);
                vec![TurnEvent::Agent { entry, event }]
            }
            RunEvent::ToolsGiven { entry, tools } => {
                let settled = state
                    .ledger
                    .as_mut()
                    .is_some_and(|book| book.tools_given(entry, tools));
                if settled {
                    self.ledger_settled(turn).into_iter().collect()
                } else {
                    Vec::new()
                }
            }
            RunEvent::Finished { entry, result } => {
                let settled = state.ledger.as_mut().is_some_and(|book| book.ended(entry));
                let mut out: Vec<TurnEvent> = if settled {
                    self.ledger_settled(turn).into_iter().collect()
                } else {
                    Vec::new()
                };
                out.extend(self.finished(turn, entry, *result));
                out
            }
        }
    }

    fn finished(&mut self, turn: u32, entry: usize, result: ModelResult) -> Vec<TurnEvent> {
        let Some(state) = self.turn.as_ref() else {
            return Vec::new();
        };
        let Some(label) = state.slots.get(entry).map(|s| s.label.clone()) else {
            return Vec::new();
        };
        let base = state.base.clone();
        let mut finished = self.record_finished(
            turn,
            entry,
            &label,
            Finish {
                outcome: result.outcome.as_ref(),
                writes: &result.writes,
                error: result.error.clone(),
                base: base.as_deref(),
                root: result.workspace.as_ref().map(|w| w.root()),
            },
        );
        finished.notes = result.notes.clone();
        finished.scan_notes = result.scan_notes.clone();
        let Some(state) = self.turn.as_mut() else {
            return Vec::new();
        };
        if let Some(slot) = state.slots.get_mut(entry) {
            slot.finished = Some(finished.clone());
            slot.writes = result.writes.clone();
            slot.result = Some(result);
        }
        let all_done = state.slots.iter().all(|s| s.finished.is_some());
        let mut out = vec![TurnEvent::Finished(finished)];
        if all_done {
            self.record_turn_end(turn);
            out.push(TurnEvent::Ended);
        }
        out
    }

    /// The job that builds the change set of entry `entry` in the turn under review (`None`:
    /// no such finished model, or the turn has no base yet). By entry, not label: a turn of
    /// several tasks holds the same model once per task.
    pub(super) fn change_set_job(&self, entry: usize) -> Option<ChangeSetJob> {
        let state = self.turn.as_ref()?;
        let base = Arc::clone(state.base.as_ref()?);
        let slot = state.slots.get(entry)?;
        slot.finished.as_ref()?;
        let workspace = slot.result.as_ref().and_then(|r| r.workspace.as_ref());
        let root = workspace.map(|w| w.root().to_path_buf());
        let committed = workspace
            .map(|w| {
                slot.writes
                    .iter()
                    .filter_map(|write| {
                        let entry = base.get(&write.path)?;
                        w.base_is_committed(&write.path, &entry.hash)
                            .then(|| write.path.clone())
                    })
                    .collect()
            })
            .unwrap_or_default();
        // Other finished workspaces started from the same base: a fallback for base content
        // the user's tree and git no longer hold (a few are plenty: a turn of many tasks
        // would otherwise hand every job every other workspace).
        let fallbacks = state
            .slots
            .iter()
            .filter_map(|s| s.result.as_ref()?.workspace.as_ref())
            .map(|w| w.root().to_path_buf())
            .take(FALLBACK_WORKSPACES)
            .collect();
        Some(ChangeSetJob {
            label: slot.label.clone(),
            base,
            writes: slot.writes.clone(),
            root,
            modes: slot.modes.clone(),
            fallbacks,
            keep_base_in: (!state.restored)
                .then(|| (self.dir.join(crate::session::BLOBS_DIR), state.started)),
            committed,
        })
    }

    /// A change set was built: its size goes into the preference line.
    pub(super) fn change_set_built(&mut self, turn: u32, entry: usize, set: &ChangeSet) {
        if let Some(state) = self.turn.as_mut().filter(|t| t.turn == turn)
            && let Some(slot) = state.slots.get_mut(entry)
        {
            slot.files = Some(set.files_changed());
        }
    }

    /// The workspace of entry `entry` of turn `turn` (a turn of several tasks holds a model
    /// once per task, so its label does not name one).
    pub(super) fn workspace_at(
        &self,
        turn: u32,
        entry: usize,
    ) -> Option<(&crate::workspace::Workspace, &crate::exec::SandboxSettings)> {
        let state = self.turn.as_ref().filter(|t| t.turn == turn)?;
        let ws = state
            .slots
            .get(entry)?
            .result
            .as_ref()?
            .workspace
            .as_ref()?;
        Some((ws, &state.sandbox))
    }

    /// The front end is done with entry `entry`'s workspace (its criteria are checked): it
    /// goes now, not with the turn, so a turn of many tasks holds only the workspaces still
    /// in use. Kept on disk when the turn keeps its workspaces. Returns it for the caller to
    /// hand to the background removal (dropping removes it: blocking).
    pub(super) fn release_workspace(
        &mut self,
        turn: u32,
        entry: usize,
    ) -> Option<crate::workspace::Workspace> {
        let state = self.turn.as_mut().filter(|t| t.turn == turn)?;
        let keep = state.keep;
        let slot = state.slots.get_mut(entry)?;
        slot.finished.as_ref()?;
        let mut ws = slot.result.as_mut()?.workspace.take()?;
        if keep {
            ws.keep();
        }
        Some(ws)
    }

    /// The workspace of `label` in the turn under review (for checks and "open workspace").
    pub(super) fn workspace(&self, label: &str) -> Option<&crate::workspace::Workspace> {
        self.turn
            .as_ref()?
            .slots
            .iter()
            .find(|s| s.label == label)?
            .result
            .as_ref()?
            .workspace
            .as_ref()
    }

    /// Keeps every workspace of the turn under review on disk; returns (label, root).
    pub(super) fn keep_workspaces(&mut self) -> Vec<(String, PathBuf)> {
        let mut kept = Vec::new();
        if let Some(state) = self.turn.as_mut() {
            for slot in &mut state.slots {
                if let Some(ws) = slot.result.as_mut().and_then(|r| r.workspace.as_mut()) {
                    ws.keep();
                    kept.push((slot.label.clone(), ws.root().to_path_buf()));
                }
            }
        }
        kept
    }

    /// Removes the workspaces of the turn under review (blocking: call off async threads).
    pub(super) fn drop_workspaces(&mut self) {
        if let Some(state) = self.turn.as_mut() {
            for slot in &mut state.slots {
                if let Some(result) = slot.result.as_mut() {
                    result.workspace = None;
                }
            }
        }
    }
}

#[cfg(test)]
mod outcome_tests {
    use super::*;

    #[test]
    fn the_sample_number_is_not_part_of_a_sub_agent_model_name() {
        assert_eq!(without_sample("openai/gpt-5#2"), "openai/gpt-5");
        assert_eq!(without_sample("openai/gpt-5"), "openai/gpt-5");
        assert_eq!(without_sample("demo/a#b"), "demo/a#b");
    }

    #[test]
    fn a_turn_fails_only_when_every_model_errored() {
        use RunStop::*;
        let of = |interrupted, stops: &[RunStop]| outcome_of(interrupted, stops.iter().copied());
        assert_eq!(of(false, &[Error, Error]), TurnOutcome::EveryModelFailed);
        assert_eq!(of(false, &[Error, Completed]), TurnOutcome::Done);
        assert_eq!(of(false, &[Error, MaxSteps]), TurnOutcome::Done);
        assert_eq!(of(false, &[]), TurnOutcome::Done);
        assert_eq!(of(true, &[Error, Error]), TurnOutcome::Interrupted);
    }
}
