//! The session engine: the one orchestration under every front end.
//!
//! `versus ask`, the TUI and `versus run` only translate what the user wants into calls on a
//! [`SessionEngine`] and what it reports into output. The engine owns the session log (one
//! typed, versioned writer), each model's conversation across turns, the next-turn note, the
//! history policy, the running turn's results (workspaces kept for review until the next turn),
//! the choice (apply, preference line, `Choice` record), rewinds (files, conversation, both,
//! marked so statistics leave them out), and crash-continue (finished models of a killed turn
//! rebuilt from their recorded proposals).
//!
//! Slow work never runs inside a method that holds the engine: such steps return a *job* (a
//! `Send` value with a blocking `run`), which the front end runs where it likes (the TUI on the
//! blocking pool, `ask` in place), then hands the outcome back. So the engine is a state
//! machine with no IO of its own except appending to its log, and every front end drives it
//! the same way.

mod blind;
pub mod check;
mod choice;
mod fairness;
mod handle;
pub mod history;
mod record;
mod restore;
mod rewind;
mod startup;
pub mod state;
mod turn;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use crate::model::Message;
use crate::review::BlindNames;
use crate::session::{Recorder, SessionError, SessionLog, SessionRecord, Source, Store, now};

pub use blind::names_from_log;
pub use choice::{ChoiceOutcome, ChoiceRequest};
pub use handle::{
    EngineEvent, EngineEvents, EngineHandle, Op, OpKind, SessionInfo, context_notices,
};
pub use history::{HistoryPolicy, Shortened};
pub use record::Finish;
pub use restore::RestoredTurn;
pub use rewind::{RewindDone, RewindPlan};
pub use startup::{
    RewindTarget, SessionStart, StartNotice, StartOptions, Started, find_rewind_target,
    refuse_if_interrupted, roll_back_interrupted, start_session,
};
pub use state::Phase;
pub(crate) use turn::TurnEvent;
pub use turn::{FinishedModel, TurnOutcome, TurnRequest, TurnTarget, TurnWorkspaces};

pub use crate::session::{CheckResult, RewindScope, TurnTask};

/// The project context a turn gives its models and the fairness ledger of what each got:
/// front ends hand [`ContextSources`] to a turn and show the rest.
pub use crate::context::{
    ContextSources, LedgerEntry, ProjectContext, fairness_lines, summary_lines as context_summary,
};

/// What a front end needs to describe a turn's models: the roster's one resolution and skip
/// policy, the turn's options and the settings of the one agent loop. Front ends name these
/// through the engine, never the runner (its fan-out, workspaces) or the agent loop itself:
/// those two modules are private to this crate (see the crate's documentation), so a front end
/// that names them does not compile.
pub use crate::agent::AgentSettings;
pub use crate::runner::{
    Concurrency, ModelEntry, ModelRequest, Roster, RosterError, RosterModel, RunOptions,
    SkippedModel, Unrunnable, entry_for, resolve_models, runnable,
};

/// What the engine refuses, in words a user can act on.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// `.versus/` or the session folder could not be used.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// The session log could not be opened or read.
    #[error("could not {op} {path}: {source}")]
    Io {
        /// What was being done.
        op: &'static str,
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A turn is running.
    #[error("models are still running: wait for them, or cancel them")]
    Busy,
    /// The turn named is not the one under review.
    #[error("turn {0} is no longer the one under review; nothing was applied")]
    NotUnderReview(u32),
    /// The session has ended: the engine accepts nothing more.
    #[error("the session has ended; start versus again to go on")]
    Closed,
    /// A turn was asked for without a model.
    #[error("no model to run: add one (-m PROVIDER/MODEL, or /models add SPEC)")]
    NoModels,
    /// The project's files could not be captured at the start of a turn: no model started.
    #[error("could not capture the project's files: {0}")]
    Capture(#[source] crate::workspace::WorkspaceError),
    /// A job of the engine (on the blocking pool) stopped without an answer.
    #[error("an engine job stopped unexpectedly ({0}); nothing more was done")]
    Job(#[from] tokio::task::JoinError),
    /// A finished model's change set could not be built.
    #[error("could not build the change set of {model}: {source}")]
    ChangeSet {
        /// The model.
        model: String,
        /// Why (boxed: every engine result carries this error type).
        source: Box<crate::workspace::changeset::ChangeSetError>,
    },
    /// The turn has not captured the project yet, so no change set can be built.
    #[error("turn {0} has no captured project state yet; nothing can be compared")]
    NoBase(u32),
    /// The apply engine refused or failed (the text says what to do).
    #[error("{0}")]
    Apply(#[from] crate::apply::ApplyError),
    /// An apply of this project was interrupted half-way: nothing new is applied before it is
    /// rolled back, since its snapshots would no longer match the files.
    #[error(
        "apply {apply_id} (session {session}) was interrupted half-way; run `versus rewind` to roll it back before applying anything new"
    )]
    ApplyInterrupted {
        /// The interrupted apply.
        apply_id: String,
        /// Its session.
        session: String,
    },
    /// There is nothing to rewind (the reason, in words).
    #[error("nothing to rewind: {0}")]
    NothingToRewind(String),
    /// The applied changes moved on between the plan and the rewind.
    #[error(
        "the applied changes moved on since the question (another rewind?); nothing was restored: rewind again"
    )]
    RewindMoved,
    /// Restoring the files failed: nothing changed, in the files or the conversations.
    #[error("rewind failed, nothing was changed in the conversations: {0}")]
    RewindFailed(#[source] crate::apply::ApplyError),
    /// The model has no workspace in the turn under review.
    #[error("{0} has no workspace left (it could not be prepared, or a newer turn replaced it)")]
    NoWorkspace(String),
    /// A model named is not one of the turn's.
    #[error("{model} is not one of the models of turn {turn} ({known})")]
    UnknownModel {
        /// The name given.
        model: String,
        /// The turn.
        turn: u32,
        /// The turn's models.
        known: String,
    },
}

/// What the next turn's note tells each model: the choice of the turn before.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NoteInputs {
    /// Models whose changes were applied (empty: none).
    pub chosen: Vec<String>,
    /// Files the apply wrote.
    pub applied: Vec<String>,
    /// Files each model proposed.
    pub own: HashMap<String, Vec<String>>,
}

/// An open session and everything rebuilt from its log.
pub struct SessionEngine {
    project: PathBuf,
    store: Store,
    id: String,
    dir: PathBuf,
    source: Source,
    recorder: Recorder,
    /// The session's models, in order (what `--continue` runs).
    models: Vec<String>,
    conversations: HashMap<String, Vec<Message>>,
    /// Files each model proposed in its last turn (for the next-turn note).
    last_files: HashMap<String, Vec<String>>,
    /// The latest turn started.
    last_turn: u32,
    /// Conversation, clear and rewind records of the session, to rebuild conversations after
    /// a rewind exactly as a reopened session would.
    history: Vec<SessionRecord>,
    /// Prompt of every turn.
    prompts: BTreeMap<u32, String>,
    /// The apply made by each turn's choice (`None`: chosen, nothing written).
    applies: BTreeMap<u32, Option<String>>,
    /// Turns rewound out of every conversation.
    rewound: BTreeSet<u32>,
    /// What the next turn's note says (set by a choice or a rewind).
    next_note: Option<NoteInputs>,
    /// The note inputs each turn was sent with (a rewind restores them).
    sent_notes: BTreeMap<u32, NoteInputs>,
    /// The running turn, or the last one, kept for review until the next starts.
    turn: Option<turn::TurnState>,
    /// Blind mode's aliases for the whole session (`None`: never blind), recorded in the log
    /// each time they change, so a reopened session shows the same ones (see `blind`).
    names: Option<BlindNames>,
    /// What a rewind does when another versus holds the project's lock (`versus rewind
    /// --no-wait` refuses at once; every other front end waits).
    rewind_lock: crate::apply::LockWait,
    /// Whether the end of the session reveals blind mode's names: the end of the user's
    /// blind review. Not for an open only to rewind ([`SessionEngine::rewind_only`]), nor for one only to pick
    /// ([`SessionEngine::pick_only`]) until a choice is made.
    reveal_at_end: bool,
}

impl std::fmt::Debug for SessionEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionEngine")
            .field("id", &self.id)
            .field("source", &self.source)
            .field("models", &self.models)
            .field("last_turn", &self.last_turn)
            .finish_non_exhaustive()
    }
}

/// A session reopened: the engine, its log as read (front ends replay it), and what could not
/// be read.
#[derive(Debug)]
pub struct Reopened {
    /// The engine, ready for the next turn.
    pub engine: SessionEngine,
    /// The log as read (records in order).
    pub log: SessionLog,
    /// A turn killed before its choice whose finished models can still be reviewed.
    pub restored: Option<RestoredTurn>,
}

impl SessionEngine {
    /// Starts a new session in `store` for `models`.
    pub fn create(store: Store, source: Source, models: Vec<String>) -> Result<Self, EngineError> {
        let (id, dir) = store.new_session()?;
        Self::attach(store, id, dir, source, models, &SessionLog::default())
    }

    /// Reopens a session (`id` prefix; `None`: the latest). `models`: the roster to continue
    /// with (`None`: the session's own, every model it had).
    pub fn open(
        store: Store,
        id: Option<&str>,
        source: Source,
        models: Option<Vec<String>>,
    ) -> Result<Reopened, EngineError> {
        let (id, dir) = store.session(id)?;
        let log = SessionLog::read(&dir).map_err(|source| EngineError::Io {
            op: "read",
            path: dir.join(crate::session::EVENTS_FILE),
            source,
        })?;
        let models = models.unwrap_or_else(|| log.last_models());
        let mut engine = Self::attach(store, id, dir, source, models, &log)?;
        let restored = engine.restore_interrupted(&log);
        Ok(Reopened {
            engine,
            log,
            restored,
        })
    }

    fn attach(
        store: Store,
        id: String,
        dir: PathBuf,
        source: Source,
        models: Vec<String>,
        log: &SessionLog,
    ) -> Result<Self, EngineError> {
        let path = dir.join(crate::session::EVENTS_FILE);
        let recorder = Recorder::start(&path).map_err(|source| EngineError::Io {
            op: "open",
            path,
            source,
        })?;
        let mut prompts = BTreeMap::new();
        let mut applies = BTreeMap::new();
        let mut history = Vec::new();
        let mut notes: BTreeMap<u32, NoteInputs> = BTreeMap::new();
        let mut files: HashMap<String, Vec<String>> = HashMap::new();
        for record in &log.records {
            match record {
                SessionRecord::Turn { turn, prompt, .. } => {
                    prompts.insert(*turn, prompt.clone());
                }
                SessionRecord::Proposals { model, writes, .. } => {
                    files.insert(model.clone(), record::touched(writes));
                }
                SessionRecord::Choice {
                    turn,
                    apply_id,
                    chosen,
                    applied,
                    ..
                } => {
                    applies.insert(*turn, apply_id.clone());
                    notes.insert(
                        *turn,
                        NoteInputs {
                            chosen: chosen.clone(),
                            applied: applied.clone(),
                            own: HashMap::new(),
                        },
                    );
                }
                r @ (SessionRecord::Rewound { .. }
                | SessionRecord::Conversation { .. }
                | SessionRecord::ConversationTail { .. }
                | SessionRecord::Cleared { .. }) => history.push(r.clone()),
                _ => {}
            }
        }
        let last_turn = log.last_turn();
        // What the next turn's note says, as it would have said in the process that wrote the
        // log: the choice of the latest turn still in the conversations, unless its files were
        // rewound (then nothing is applied).
        let rewound = log.rewound();
        let undone = log.undone_choices();
        let next_note = prompts
            .keys()
            .rev()
            .find(|t| !rewound.contains(t))
            .map(|t| match notes.get(t) {
                Some(note) if !undone.contains(t) => note.clone(),
                _ => NoteInputs::default(),
            });
        let mut engine = SessionEngine {
            project: store.project().to_path_buf(),
            store,
            id,
            dir,
            source,
            recorder,
            conversations: log.conversations().into_iter().collect(),
            last_files: files,
            last_turn,
            history,
            prompts,
            applies,
            rewound,
            next_note,
            sent_notes: BTreeMap::new(),
            turn: None,
            models: models.clone(),
            names: blind::names_from_log(log),
            rewind_lock: crate::apply::LockWait::Wait,
            reveal_at_end: true,
        };
        engine.recorder.record(&SessionRecord::Opened {
            time: now().rfc3339(),
            source,
            models,
            continued_after_turn: last_turn,
        });
        // A log older than the `blind` record: its aliases, recorded from now on.
        if engine.names.is_some() && log.blind_aliases().is_none() {
            engine.record_names();
        }
        engine.assign_aliases();
        Ok(engine)
    }

    /// Sets what this session's rewinds do when another versus holds the project's lock:
    /// `versus rewind --no-wait` refuses at once instead of waiting.
    pub fn with_rewind_lock(mut self, wait: crate::apply::LockWait) -> Self {
        self.rewind_lock = wait;
        self
    }

    /// Session id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The session folder (apply journal, snapshots, spilled outputs).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The project.
    pub fn project(&self) -> &Path {
        &self.project
    }

    /// The project's store.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The front end that opened the session.
    pub fn source(&self) -> Source {
        self.source
    }

    /// The session's models, in order.
    pub fn models(&self) -> &[String] {
        &self.models
    }

    /// The latest turn started (0 before the first).
    pub fn last_turn(&self) -> u32 {
        self.last_turn
    }

    /// The conversation `model` continues from (empty before its first turn).
    pub fn conversation(&self, model: &str) -> &[Message] {
        self.conversations.get(model).map_or(&[], Vec::as_slice)
    }

    /// Changes the session's models (recorded, so `--continue` comes back with these).
    pub fn set_models(&mut self, models: Vec<String>) {
        if models == self.models {
            return;
        }
        self.models = models.clone();
        self.recorder.record(&SessionRecord::ModelsChanged {
            turn: self.last_turn,
            models,
        });
        self.assign_aliases();
    }

    /// Records a model's conversation (the log, and the records rewinds rebuild from). When it
    /// continues the conversation the engine holds for the model (the usual case: a turn
    /// appends to the history it was given), only the new messages are recorded.
    fn record_conversation(&mut self, turn: u32, model: &str, messages: &[Message]) {
        let before = self.conversations.get(model).map_or(&[][..], Vec::as_slice);
        let keep = before.len();
        let continues = keep > 0
            && messages.len() >= keep
            && messages.get(keep - 1) == before.get(keep - 1)
            && messages.first() == before.first();
        let record = if continues {
            SessionRecord::ConversationTail {
                turn,
                model: model.to_string(),
                keep,
                messages: messages[keep..].to_vec(),
            }
        } else {
            SessionRecord::Conversation {
                turn,
                model: model.to_string(),
                messages: messages.to_vec(),
            }
        };
        self.recorder.record(&record);
        self.history.push(record);
    }

    /// `/clear`: every conversation starts afresh (a reopened session too).
    pub fn clear_conversations(&mut self) {
        let record = SessionRecord::Cleared {
            turn: self.last_turn,
        };
        self.recorder.record(&record);
        self.history.push(record);
        self.conversations.clear();
        self.last_files.clear();
    }

    /// `/compact`: folds each conversation's earlier turns into a recap. Returns the number of
    /// turns folded over all models.
    pub fn compact(&mut self) -> usize {
        let mut folded = 0;
        let mut changed = Vec::new();
        for (model, messages) in &self.conversations {
            let mut shorter = messages.clone();
            let n = history::compact(&mut shorter);
            if n > 0 {
                changed.push((model.clone(), shorter));
            }
            folded += n;
        }
        for (model, messages) in changed {
            self.record_conversation(self.last_turn, &model, &messages);
            self.conversations.insert(model, messages);
        }
        self.recorder.record(&SessionRecord::Compacted {
            turn: self.last_turn,
            turns_folded: folded,
        });
        folded
    }

    /// Writes everything queued to the log and closes it. Workspaces of the last turn are
    /// removed when the engine is dropped.
    pub fn finish(&mut self) {
        if let Some(turn) = &self.turn {
            turn.cancel_all();
        }
        // The session ends: blind mode's names are revealed (the front end says who was who),
        // unless it was opened only to rewind (`versus rewind` says nothing of the models) or
        // only to pick and nothing was chosen (a refused `versus pick` reveals nothing).
        if self.reveal_at_end {
            self.reveal();
        }
        self.recorder.record(&SessionRecord::Ended {
            turn: self.last_turn,
            time: now().rfc3339(),
        });
        self.recorder.finish();
        // Earlier turns' workspaces are removed in the background: a run that ends normally
        // leaves none behind.
        crate::workspace::settle_removals();
    }
}
