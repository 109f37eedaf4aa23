//! The driver: carries out the app's effects against the engine (runner, session store, config)
//! and turns what it learns into messages.
//!
//! It owns everything that is not display state: the models' clients, each model's
//! conversation across turns (and the records a rewind rebuilds them from), the running turn's
//! cancellation tokens, the last turn's results (workspaces stay alive for the review, its
//! checks and "open workspace" until the next turn), the choice's note for the next turn, and
//! the session log. Slow work (capturing the project, reading attachments, building change
//! sets, running checks, applying, rewinding, reading stats, removing workspaces) runs on tasks
//! and reports back through the loop channel, so the event loop never waits on it. The review
//! half lives in `choice` (change sets, checks, preview, apply, preferences) and `rewind`.

pub mod check;
mod choice;
mod conversation;
pub mod models;
mod recorder;
mod rewind;
pub mod stats;
mod turn;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use serde_json::json;
use tokio::sync::mpsc::UnboundedSender;

use crate::config::{Config, Env};
use crate::model::Message;
use crate::runner::{ModelResult, RunEvent};
use crate::session::{SessionLog, SessionRecord, Store, now};

pub use choice::{ChoiceOutcome, TurnReview, apply_choice};
pub use conversation::compact;
pub use models::{Model, Resolver};
pub use recorder::Recorder;
pub use turn::ActiveTurn;

use super::action::{Effect, EngineMsg, RewindDone, Settings};

/// Default file of `/save` and `/load`, relative to the project.
pub const SETTINGS_FILE: &str = ".versus/tui.toml";

/// What reaches the event loop from the driver's tasks.
#[derive(Debug)]
pub enum LoopMsg {
    /// Straight to the app.
    App(EngineMsg),
    /// An event of turn `turn`'s model `entry` (position in the turn's targets).
    Run {
        /// Turn number.
        turn: u32,
        /// Position in the turn's targets.
        entry: usize,
        /// The event.
        event: RunEvent,
    },
    /// The turn's project state is captured and every model has started.
    Started {
        /// Turn number.
        turn: u32,
        /// The project's state at the start (change sets are computed against it).
        base: std::sync::Arc<crate::workspace::Base>,
    },
    /// The turn could not start.
    Rejected {
        /// Turn number.
        turn: u32,
        /// Why.
        error: String,
    },
    /// A finished model's change set was built (or could not be).
    ChangeSet {
        /// Turn number.
        turn: u32,
        /// The model.
        label: String,
        /// The change set, or why not.
        set: Result<crate::workspace::changeset::ChangeSet, String>,
    },
    /// A choice was carried out off the loop's thread: the engine records it.
    Chosen(ChoiceOutcome),
    /// The files part of a rewind was carried out: the engine does the conversation part.
    Rewound(RewindDone),
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

/// A shell the event loop should open (it owns the terminal).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellRequest {
    /// The workspace root.
    pub dir: PathBuf,
    /// The name shown for the model.
    pub shown: String,
}

/// The settings file `/save` writes.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct SavedSettings {
    models: Vec<String>,
    #[serde(flatten)]
    settings: Settings,
}

/// The driver's state.
pub struct Engine {
    project: PathBuf,
    config: Config,
    env: Env,
    http: reqwest::Client,
    models: HashMap<String, Model>,
    conversations: HashMap<String, Vec<Message>>,
    /// Files each model proposed in its last turn (for the next-turn note).
    last_files: HashMap<String, Vec<String>>,
    /// The latest turn started (conversation records of /clear and /compact carry it).
    last_turn: u32,
    session_dir: PathBuf,
    store: Store,
    session_id: String,
    recorder: Recorder,
    tx: UnboundedSender<LoopMsg>,
    turn: Option<ActiveTurn>,
    /// The last turn's results: workspaces kept for review until the next turn.
    kept: Vec<ModelResult>,
    /// The last turn's facts for the choice (base, models' stats, checks).
    review: Option<TurnReview>,
    /// Conversation and rewind records of the session, to rebuild conversations after a rewind
    /// exactly as a reopened session would.
    history: Vec<SessionRecord>,
    /// Prompt of every turn of the session.
    prompts: BTreeMap<u32, String>,
    /// The apply made by each turn's choice (`None`: chosen, nothing written).
    applies: BTreeMap<u32, Option<String>>,
    /// Turns rewound (out of every conversation).
    rewound: BTreeSet<u32>,
    /// What the next turn's note says (set by a choice or a rewind).
    next_note: Option<NoteInputs>,
    /// The note inputs each turn of this process was sent with (a rewind restores them).
    sent_notes: BTreeMap<u32, NoteInputs>,
    /// A shell waiting for the event loop.
    shell: Option<ShellRequest>,
}

/// Everything the engine starts from.
pub struct EngineParts {
    /// Project root.
    pub project: PathBuf,
    /// Merged config.
    pub config: Config,
    /// Environment.
    pub env: Env,
    /// Shared HTTP client.
    pub http: reqwest::Client,
    /// Models that resolved, in order.
    pub models: Vec<(String, Model)>,
    /// The project's store.
    pub store: Store,
    /// Session id.
    pub session_id: String,
    /// Session folder.
    pub session_dir: PathBuf,
    /// Conversations to continue (a reopened session), keyed by label.
    pub conversations: HashMap<String, Vec<Message>>,
    /// Turns already in the session.
    pub last_turn: u32,
    /// The session's log so far (turns, choices, conversations, rewinds).
    pub log: SessionLog,
}

impl Engine {
    /// Starts the driver (opens the session log).
    pub fn new(parts: EngineParts, tx: UnboundedSender<LoopMsg>) -> std::io::Result<Engine> {
        let recorder = Recorder::start(&parts.session_dir.join("events.jsonl"))?;
        recorder.record(&json!({
            "type": "session", "time": now().rfc3339(), "id": parts.session_id,
            "project": parts.project, "source": "tui", "continued_after_turn": parts.last_turn,
            "models": parts.models.iter().map(|(l, _)| l.clone()).collect::<Vec<_>>(),
        }));
        let mut prompts = BTreeMap::new();
        let mut applies = BTreeMap::new();
        let mut rewound = BTreeSet::new();
        let mut history = Vec::new();
        for record in parts.log.records {
            match record {
                SessionRecord::Turn { turn, prompt, .. } => {
                    prompts.insert(turn, prompt);
                }
                SessionRecord::Choice { turn, apply_id, .. } => {
                    applies.insert(turn, apply_id);
                }
                SessionRecord::Rewound { turn } => {
                    rewound.insert(turn);
                    history.push(SessionRecord::Rewound { turn });
                }
                c @ SessionRecord::Conversation { .. } => history.push(c),
                _ => {}
            }
        }
        Ok(Engine {
            project: parts.project,
            config: parts.config,
            env: parts.env,
            http: parts.http,
            models: parts.models.into_iter().collect(),
            conversations: parts.conversations,
            last_files: HashMap::new(),
            last_turn: parts.last_turn,
            session_dir: parts.session_dir,
            store: parts.store,
            session_id: parts.session_id,
            recorder,
            tx,
            turn: None,
            kept: Vec::new(),
            review: None,
            history,
            prompts,
            applies,
            rewound,
            next_note: None,
            sent_notes: BTreeMap::new(),
            shell: None,
        })
    }

    /// Records a model's conversation (the session log, and the copy rewinds rebuild from).
    fn record_conversation(&mut self, turn: u32, model: &str, messages: &[Message]) {
        let record = SessionRecord::Conversation {
            turn,
            model: model.to_string(),
            messages: messages.to_vec(),
        };
        self.recorder.record(&record);
        self.history.push(record);
    }

    /// Takes the shell the event loop should open, if one was asked for.
    pub fn take_shell(&mut self) -> Option<ShellRequest> {
        self.shell.take()
    }

    /// The session folder.
    pub fn session_dir(&self) -> &Path {
        &self.session_dir
    }

    /// Whether a turn is running.
    pub fn running(&self) -> bool {
        self.turn.is_some()
    }

    /// Carries out one effect; returns the messages that answer it at once.
    pub fn execute(&mut self, effect: Effect) -> Vec<EngineMsg> {
        match effect {
            Effect::Submit(request) => self.submit(request),
            Effect::CancelAll => {
                if let Some(turn) = &self.turn {
                    turn.cancel_all();
                }
                if let Some(review) = &self.review {
                    review.checks.cancel();
                }
                Vec::new()
            }
            Effect::Cancel { label } => {
                if let Some(turn) = &self.turn {
                    turn.cancel(&label);
                }
                Vec::new()
            }
            Effect::AddModels { specs, replace } => {
                let resolver = Resolver {
                    project: &self.project,
                    config: &self.config,
                    env: &self.env,
                    http: &self.http,
                };
                let (ok, errors) = resolver.resolve_specs(&specs);
                let added = ok.iter().map(|(l, _)| l.clone()).collect();
                self.models.extend(ok);
                vec![EngineMsg::ModelsAdded {
                    added,
                    errors,
                    replace,
                }]
            }
            Effect::ClearConversations => {
                // Empty conversation records, so a reopened session starts afresh too.
                let models: Vec<String> = self.conversations.keys().cloned().collect();
                for model in models {
                    self.record_conversation(self.last_turn, &model, &[]);
                }
                self.conversations.clear();
                self.last_files.clear();
                self.recorder
                    .record(&json!({"type": "clear", "time": now().rfc3339()}));
                Vec::new()
            }
            Effect::Compact => {
                let mut folded = 0;
                let mut changed = Vec::new();
                for (model, messages) in self.conversations.iter_mut() {
                    let n = compact(messages);
                    if n > 0 {
                        changed.push((model.clone(), messages.clone()));
                    }
                    folded += n;
                }
                for (model, messages) in changed {
                    self.record_conversation(self.last_turn, &model, &messages);
                }
                self.recorder.record(
                    &json!({"type": "compact", "time": now().rfc3339(), "turns_folded": folded}),
                );
                vec![EngineMsg::Info(if folded == 0 {
                    "nothing to compact: every conversation has at most one turn".to_string()
                } else {
                    format!(
                        "compacted: {folded} earlier turn(s) folded into a recap; each model keeps its latest turn"
                    )
                })]
            }
            Effect::Save {
                path,
                settings,
                models,
            } => vec![self.save(path.as_deref(), settings, models)],
            Effect::Load { path } => vec![self.load(path.as_deref())],
            Effect::Export { path, markdown } => {
                let target = match &path {
                    Some(p) => self.project.join(p),
                    None => self.session_dir.join("transcript.md"),
                };
                vec![
                    match crate::fsutil::atomic_write(&target, markdown.as_bytes()) {
                        Ok(()) => EngineMsg::Info(format!("exported to {}", target.display())),
                        Err(e) => EngineMsg::Error(format!(
                            "could not write {}: {e}; give another file: /export FILE",
                            target.display()
                        )),
                    },
                ]
            }
            Effect::PreviewApply { turn, plan } => self.preview(turn, plan),
            Effect::Choose(request) => self.choose(request),
            Effect::PlanRewind { scope } => self.plan_rewind(scope),
            Effect::Rewind { plan, force } => self.rewind(plan, force),
            Effect::Stats => {
                let project = self.project.clone();
                let session = self.session_id.clone();
                let tx = self.tx.clone();
                tokio::task::spawn_blocking(move || {
                    let msg = stats::show(&project, &session);
                    let _ = tx.send(LoopMsg::App(msg));
                });
                Vec::new()
            }
            Effect::OpenShell { label, shown } => {
                let root = self
                    .kept
                    .iter()
                    .find(|r| r.label == label)
                    .and_then(|r| r.workspace.as_ref())
                    .map(|w| w.root().to_path_buf());
                match root {
                    Some(dir) => {
                        self.shell = Some(ShellRequest { dir, shown });
                        Vec::new()
                    }
                    None => vec![EngineMsg::Error(format!(
                        "{shown} has no workspace left to open (it could not be prepared, or a newer turn replaced it)"
                    ))],
                }
            }
            Effect::Quit => {
                if let Some(turn) = &self.turn {
                    turn.cancel_all();
                }
                if let Some(review) = &self.review {
                    review.checks.cancel();
                }
                Vec::new()
            }
        }
    }

    fn save(&self, path: Option<&str>, settings: Settings, models: Vec<String>) -> EngineMsg {
        let target = self.project.join(path.unwrap_or(SETTINGS_FILE));
        let text = match toml::to_string_pretty(&SavedSettings { models, settings }) {
            Ok(text) => text,
            Err(e) => return EngineMsg::Error(format!("could not write the settings: {e}")),
        };
        match crate::fsutil::atomic_write(&target, text.as_bytes()) {
            Ok(()) => EngineMsg::Info(format!(
                "settings saved to {} (/load reads them back)",
                target.display()
            )),
            Err(e) => EngineMsg::Error(format!(
                "could not write {}: {e}; give another file: /save FILE",
                target.display()
            )),
        }
    }

    fn load(&mut self, path: Option<&str>) -> EngineMsg {
        let target = self.project.join(path.unwrap_or(SETTINGS_FILE));
        let text = match std::fs::read_to_string(&target) {
            Ok(text) => text,
            Err(e) => {
                return EngineMsg::Error(format!(
                    "could not read {}: {e}; save settings first with /save, or name the file: /load FILE",
                    target.display()
                ));
            }
        };
        let saved: SavedSettings = match toml::from_str(&text) {
            Ok(saved) => saved,
            Err(e) => {
                return EngineMsg::Error(format!(
                    "{} is not a settings file written by /save: {e}",
                    target.display()
                ));
            }
        };
        let resolver = Resolver {
            project: &self.project,
            config: &self.config,
            env: &self.env,
            http: &self.http,
        };
        let (ok, errors) = resolver.resolve_specs(&saved.models);
        let models = ok.iter().map(|(l, _)| l.clone()).collect();
        self.models.extend(ok);
        EngineMsg::SettingsLoaded {
            settings: saved.settings,
            models,
            errors,
        }
    }

    /// Stops every run and removes the kept workspaces; flushes the log. Blocking: call it
    /// after the terminal is restored.
    pub fn shutdown(&mut self) {
        if let Some(turn) = &self.turn {
            turn.cancel_all();
        }
        if let Some(review) = &self.review {
            review.checks.cancel();
        }
        self.recorder
            .record(&json!({"type": "end", "time": now().rfc3339()}));
        self.kept.clear();
        self.recorder.finish();
    }

    /// The store (for the history file).
    pub fn store(&self) -> &Store {
        &self.store
    }
}
