//! The driver: carries out the app's effects on the session engine ([`crate::engine`]) and
//! turns what it reports into messages for the app.
//!
//! Everything that is not display state lives in the session engine: conversations, the
//! session log, the next-turn note, the turn under review and its workspaces, the choice and
//! rewinds. What stays here is what only an interactive front end has: the models' clients
//! by label (the roster can grow mid-session), the panel each model of the running turn draws
//! into, review checks, `/save` and `/load`, and the shell request. Slow work (capturing the
//! project, building change sets, checks, applying, rewinding, statistics) runs on tasks and
//! reports back through the loop channel, so the event loop never waits on it.

mod choice;
pub mod models;
mod rewind;
mod shell;
pub mod stats;
mod turn;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use tokio::sync::mpsc::UnboundedSender;

use crate::config::{Config, Env};
use crate::engine::{CheckResult, ChoiceOutcome, RewindDone, SessionEngine};
use crate::runner::RunEvent;
use crate::session::Store;

pub use models::{Model, Resolver};
pub use shell::ShellRequest;
pub use turn::ActiveTurn;

use super::action::{Effect, EngineMsg, Settings};

/// Default file of `/save` and `/load`, relative to the project.
pub const SETTINGS_FILE: &str = ".versus/tui.toml";

/// What reaches the event loop from the driver's tasks.
#[derive(Debug)]
pub enum LoopMsg {
    /// Straight to the app.
    App(EngineMsg),
    /// An event of turn `turn`.
    Run {
        /// Turn number.
        turn: u32,
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
    /// A review check ended: the engine records it, then the app shows it.
    Checked {
        /// Turn number.
        turn: u32,
        /// The model.
        label: String,
        /// How it ended.
        result: CheckResult,
    },
    /// A choice was carried out off the loop's thread: the engine records it.
    Chosen(ChoiceOutcome),
    /// The files part of a rewind was carried out: the engine does the conversation part.
    Rewound(RewindDone),
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
    core: SessionEngine,
    tx: UnboundedSender<LoopMsg>,
    turn: Option<ActiveTurn>,
    /// Cancels the running review checks (Esc, a new turn, quitting).
    checks: tokio_util::sync::CancellationToken,
    /// The check command of the turn under review.
    check: Option<String>,
    /// A shell waiting for the event loop.
    shell: Option<ShellRequest>,
    /// The blind-mode names the app was last told (it hears again when the engine's change).
    shown_names: Option<crate::review::BlindNames>,
}

/// Everything the driver starts from.
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
    /// The open session.
    pub core: SessionEngine,
}

impl Engine {
    /// Starts the driver over an open session.
    pub fn new(parts: EngineParts, tx: UnboundedSender<LoopMsg>) -> Engine {
        Engine {
            project: parts.project,
            config: parts.config,
            env: parts.env,
            http: parts.http,
            models: parts.models.into_iter().collect(),
            tx,
            turn: None,
            checks: tokio_util::sync::CancellationToken::new(),
            check: None,
            shell: None,
            shown_names: parts.core.blind_names().cloned(),
            core: parts.core,
        }
    }

    /// The session's blind-mode names now (the app starts from them).
    pub fn blind_names(&self) -> Option<&crate::review::BlindNames> {
        self.core.blind_names()
    }

    /// `messages`, after a [`EngineMsg::Blind`] when the engine's names changed since the app
    /// last heard: the aliases are the engine's (assigned when blind mode turns on, a model
    /// joins, a turn starts), and the app must know them before it names anyone.
    fn with_names(&mut self, messages: Vec<EngineMsg>) -> Vec<EngineMsg> {
        let names = self.core.blind_names();
        if names == self.shown_names.as_ref() {
            return messages;
        }
        self.shown_names = names.cloned();
        let mut out = vec![EngineMsg::Blind(self.shown_names.clone())];
        out.extend(messages);
        out
    }

    /// Handles what the turn's tasks report; returns messages for the app.
    pub fn on_loop(&mut self, msg: LoopMsg) -> Vec<EngineMsg> {
        let out = self.on_loop_msg(msg);
        self.with_names(out)
    }

    /// Takes the shell the event loop should open, if one was asked for.
    pub fn take_shell(&mut self) -> Option<ShellRequest> {
        self.shell.take()
    }

    /// The session folder.
    pub fn session_dir(&self) -> &Path {
        self.core.dir()
    }

    /// Whether a turn is running.
    pub fn running(&self) -> bool {
        self.core.running()
    }

    /// Carries out one effect; returns the messages that answer it at once.
    pub fn execute(&mut self, effect: Effect) -> Vec<EngineMsg> {
        let out = self.carry_out(effect);
        self.with_names(out)
    }

    fn carry_out(&mut self, effect: Effect) -> Vec<EngineMsg> {
        match effect {
            Effect::Submit(request) => self.submit(request),
            Effect::Blind(on) => {
                self.core.set_blind(on);
                Vec::new()
            }
            Effect::Mouse(on) => {
                super::terminal::set_mouse(on);
                Vec::new()
            }
            Effect::Notify { notifier, text } => {
                super::terminal::notify(&super::notify::escape(notifier, &text));
                Vec::new()
            }
            Effect::CancelAll => {
                self.core.cancel_all();
                self.checks.cancel();
                Vec::new()
            }
            Effect::Cancel { label } => {
                self.core.cancel(&label);
                Vec::new()
            }
            Effect::AddModels { specs, replace } => {
                let (ok, errors) = self.resolver().resolve_specs(&specs);
                let added: Vec<String> = ok.iter().map(|(l, _)| l.clone()).collect();
                self.models.extend(ok);
                let mut roster = if replace && (!added.is_empty() || errors.is_empty()) {
                    Vec::new()
                } else {
                    self.core.models().to_vec()
                };
                for label in &added {
                    if !roster.contains(label) {
                        roster.push(label.clone());
                    }
                }
                self.core.set_models(roster);
                vec![EngineMsg::ModelsAdded {
                    added,
                    errors,
                    replace,
                }]
            }
            Effect::ClearConversations => {
                self.core.clear_conversations();
                Vec::new()
            }
            Effect::Compact => {
                let folded = self.core.compact();
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
                    None => self.core.dir().join("transcript.md"),
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
                let session = self.core.id().to_string();
                let tx = self.tx.clone();
                tokio::task::spawn_blocking(move || {
                    let msg = stats::show(&project, &session);
                    let _ = tx.send(LoopMsg::App(msg));
                });
                Vec::new()
            }
            Effect::OpenShell {
                label,
                shown,
                hidden,
            } => match self.core.workspace(&label) {
                Some(ws) => {
                    self.shell = Some(ShellRequest {
                        dir: ws.root().to_path_buf(),
                        shown,
                        hidden,
                        sandbox: ws.sandbox(&self.config.sandbox),
                    });
                    Vec::new()
                }
                None => vec![EngineMsg::Error(format!(
                    "{shown} has no workspace left to open (it could not be prepared, or a newer turn replaced it)"
                ))],
            },
            Effect::Quit => {
                self.core.cancel_all();
                self.checks.cancel();
                Vec::new()
            }
        }
    }

    fn resolver(&self) -> Resolver<'_> {
        Resolver {
            project: &self.project,
            config: &self.config,
            env: &self.env,
            http: &self.http,
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
        let (ok, errors) = self.resolver().resolve_specs(&saved.models);
        let models: Vec<String> = ok.iter().map(|(l, _)| l.clone()).collect();
        self.models.extend(ok);
        if !models.is_empty() {
            self.core.set_models(models.clone());
        }
        EngineMsg::SettingsLoaded {
            settings: saved.settings,
            models,
            errors,
        }
    }

    /// Stops every run and removes the kept workspaces; flushes the log. Blocking: call it
    /// after the terminal is restored.
    pub fn shutdown(&mut self) {
        self.checks.cancel();
        self.core.finish();
        self.core.drop_workspaces();
    }

    /// The store (for the history file).
    pub fn store(&self) -> &Store {
        self.core.store()
    }
}
