//! The TUI's side of the engine handle: turns the app's effects into submissions
//! ([`versus_core::engine::Op`]) and the engine's events ([`versus_core::engine::EngineEvent`]) into
//! messages for the app.
//!
//! Everything that is not display state lives in the session engine's task: conversations,
//! the session log, the next-turn note, the turn under review and its workspaces, change sets,
//! review checks, the choice and rewinds. What stays here is what only an interactive front
//! end has: the models' clients by label (the roster can grow mid-session), the panel each
//! model of the running turn draws into, `/save` and `/load`, statistics and the shell
//! request. Nothing here runs a slow step of the turn: the engine does, and says when.

mod choice;
pub mod models;
mod rewind;
mod shell;
pub mod stats;
mod turn;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use tokio::sync::mpsc::UnboundedSender;

use versus_core::config::{Config, Env, remote};
use versus_core::engine::{EngineEvent, EngineEvents, EngineHandle, Op, OpKind, SessionEngine};
use versus_core::review::BlindNames;
use versus_core::session::Store;

pub use models::{Model, Resolver};
pub use shell::ShellRequest;
pub use turn::ActiveTurn;

use super::action::{Effect, EngineMsg, Settings};

/// Default file of `/save` and `/load`, relative to the project.
pub const SETTINGS_FILE: &str = ".versus/tui.toml";

/// What reaches the event loop from the front end's own tasks (statistics, the prompt
/// history and file list loaded at start).
#[derive(Debug)]
pub enum LoopMsg {
    /// Straight to the app.
    App(EngineMsg),
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
    handle: EngineHandle,
    events: EngineEvents,
    tx: UnboundedSender<LoopMsg>,
    /// The turn asked for or running: which panel each of its models draws into.
    turn: Option<ActiveTurn>,
    /// The session's models, as last set (the engine's roster; `/models` adds to it).
    roster: Vec<String>,
    /// Blind mode's names as the engine last told them.
    names: Option<BlindNames>,
    /// A turn was submitted and has not ended.
    running: bool,
    /// A shell asked for, waiting for the engine's answer: (label, shown, hidden).
    shell_wanted: Option<(String, String, bool)>,
    /// A shell waiting for the event loop.
    shell: Option<ShellRequest>,
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
    /// The open session (spawned into its task here).
    pub core: SessionEngine,
}

impl Engine {
    /// Starts the driver over an open session: the engine goes to its own task (a reopened
    /// session's unchosen turn has its change sets rebuilt there and reported).
    pub fn new(parts: EngineParts, tx: UnboundedSender<LoopMsg>) -> Engine {
        let roster = parts.core.models().to_vec();
        let names = parts.core.blind_names().cloned();
        let (handle, events) = parts.core.spawn();
        Engine {
            project: parts.project,
            config: parts.config,
            env: parts.env,
            http: parts.http,
            models: parts.models.into_iter().collect(),
            handle,
            events,
            tx,
            turn: None,
            roster,
            names,
            running: false,
            shell_wanted: None,
            shell: None,
        }
    }

    /// Submits `op`; a closed engine (the session ended) is said in the status line.
    fn send(&self, op: Op) -> Vec<EngineMsg> {
        match self.handle.submit(op) {
            Ok(()) => Vec::new(),
            Err(e) => vec![EngineMsg::Error(e.to_string())],
        }
    }

    /// The next event of the engine (`None` once the session ended).
    pub async fn next_event(&mut self) -> Option<EngineEvent> {
        self.events.recv().await
    }

    /// An event already waiting, if any.
    pub fn try_event(&mut self) -> Option<EngineEvent> {
        self.events.try_recv()
    }

    /// The session's blind-mode names now (the app starts from them).
    pub fn blind_names(&self) -> Option<&BlindNames> {
        self.names.as_ref()
    }

    /// Whether the names are hidden now.
    fn blind(&self) -> bool {
        self.names.as_ref().is_some_and(|n| !n.is_revealed())
    }

    /// Takes the shell the event loop should open, if one was asked for.
    pub fn take_shell(&mut self) -> Option<ShellRequest> {
        self.shell.take()
    }

    /// The session folder.
    pub fn session_dir(&self) -> &Path {
        &self.handle.info().dir
    }

    /// Whether a turn is running.
    pub fn running(&self) -> bool {
        self.running
    }

    /// Sets the session's models (the engine records them) and remembers them.
    fn set_roster(&mut self, roster: Vec<String>) -> Vec<EngineMsg> {
        if roster == self.roster {
            return Vec::new();
        }
        self.roster = roster.clone();
        self.send(Op::SetModels(roster))
    }

    /// Sends the cached lists of what each provider offers and, when any is missing or older
    /// than the cache's time to live, asks the providers in the background (each within the
    /// short default timeout), keeps the answers and sends the lists again. Off the loop's
    /// thread; nothing waits for it.
    fn remote_models(&self) {
        let (config, env, http, tx) = (
            self.config.clone(),
            self.env.clone(),
            self.http.clone(),
            self.tx.clone(),
        );
        tokio::spawn(async move {
            let Some(path) = remote::cache_path() else {
                return;
            };
            let cache = {
                let path = path.clone();
                tokio::task::spawn_blocking(move || remote::ModelCache::load(&path))
                    .await
                    .unwrap_or_default()
            };
            let stale = cache.stale(&config, &env, remote::CACHE_TTL);
            let _ = tx.send(LoopMsg::App(EngineMsg::RemoteModels {
                lists: cached_lists(&cache, &config, &env),
                refreshing: stale,
            }));
            if !stale {
                return;
            }
            let listings = remote::fetch_all(&config, &env, &http, remote::DEFAULT_TIMEOUT).await;
            let mut cache = cache;
            cache.update(&config, &env, &listings);
            let lists = cached_lists(&cache, &config, &env);
            let saved = tokio::task::spawn_blocking(move || cache.save(&path)).await;
            if let Ok(Err(err)) = saved {
                tracing::warn!(error = %err, "could not keep the model lists");
            }
            let _ = tx.send(LoopMsg::App(EngineMsg::RemoteModels {
                lists,
                refreshing: false,
            }));
        });
    }

    /// Carries out one effect; returns the messages that answer it at once.
    pub fn execute(&mut self, effect: Effect) -> Vec<EngineMsg> {
        match effect {
            Effect::Submit(request) => self.submit(request),
            Effect::Blind(on) => self.send(Op::Blind(on)),
            Effect::Mouse(on) => {
                super::terminal::set_mouse(on);
                Vec::new()
            }
            Effect::Notify { notifier, text } => {
                super::terminal::notify(&super::notify::escape(notifier, &text));
                Vec::new()
            }
            Effect::CancelAll => self.send(Op::CancelAll),
            Effect::Cancel { label } => self.send(Op::Cancel { label }),
            Effect::AddModels { specs, replace } => {
                let (ok, errors) = self.resolver().resolve_specs(&specs);
                let added: Vec<String> = ok.iter().map(|(l, _)| l.clone()).collect();
                self.models.extend(ok);
                let mut roster = if replace && (!added.is_empty() || errors.is_empty()) {
                    Vec::new()
                } else {
                    self.roster.clone()
                };
                for label in &added {
                    if !roster.contains(label) {
                        roster.push(label.clone());
                    }
                }
                let mut out = self.set_roster(roster);
                out.push(EngineMsg::ModelsAdded {
                    added,
                    errors,
                    replace,
                });
                out
            }
            Effect::ClearConversations => self.send(Op::Clear),
            Effect::Compact => self.send(Op::Compact),
            Effect::Save {
                path,
                settings,
                models,
            } => vec![self.save(path.as_deref(), settings, models)],
            Effect::Load { path } => vec![self.load(path.as_deref())],
            Effect::Export { path, markdown } => {
                let target = match &path {
                    Some(p) => self.project.join(p),
                    None => self.handle.info().dir.join("transcript.md"),
                };
                vec![
                    match versus_core::fsutil::atomic_write(&target, markdown.as_bytes()) {
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
            Effect::RemoteModels => {
                self.remote_models();
                Vec::new()
            }
            Effect::Stats => {
                let project = self.project.clone();
                let session = self.handle.info().id.clone();
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
            } => {
                self.shell_wanted = Some((label.clone(), shown, hidden));
                self.send(Op::OpenWorkspace { label })
            }
            Effect::Quit => self.send(Op::CancelAll),
        }
    }

    /// What the engine reported, as messages for the app.
    pub fn on_event(&mut self, event: EngineEvent) -> Vec<EngineMsg> {
        match event {
            EngineEvent::Blind(names) => {
                self.names = names.clone();
                vec![EngineMsg::Blind(names)]
            }
            EngineEvent::Compacted { folded } => vec![EngineMsg::Info(if folded == 0 {
                "nothing to compact: every conversation has at most one turn".to_string()
            } else {
                format!(
                    "compacted: {folded} earlier turn(s) folded into a recap; each model keeps its latest turn"
                )
            })],
            EngineEvent::Workspace {
                label,
                root,
                sandbox,
            } => {
                if let Some((wanted, shown, hidden)) = self.shell_wanted.take()
                    && wanted == label
                {
                    self.shell = Some(ShellRequest {
                        dir: root,
                        shown,
                        hidden,
                        sandbox,
                    });
                }
                Vec::new()
            }
            EngineEvent::Notice(text) => vec![EngineMsg::Info(text)],
            EngineEvent::Failed {
                op: OpKind::OpenWorkspace,
                ..
            } => match self.shell_wanted.take() {
                Some((_, shown, _)) => vec![EngineMsg::Error(format!(
                    "{shown} has no workspace left to open (it could not be prepared, or a newer turn replaced it)"
                ))],
                None => Vec::new(),
            },
            EngineEvent::Failed {
                op: OpKind::PreviewApply | OpKind::Choose,
                error,
            } => self.choice_failed(error),
            EngineEvent::Failed {
                op: OpKind::PlanRewind | OpKind::Rewind,
                error,
            } => self.rewind_failed(error),
            EngineEvent::Failed {
                op: OpKind::StartTurn,
                error,
            } => {
                self.turn = None;
                self.running = false;
                vec![EngineMsg::TurnRejected {
                    error: error.to_string(),
                }]
            }
            EngineEvent::Failed { error, .. } => vec![EngineMsg::Error(error.to_string())],
            EngineEvent::ApplyPreview { turn, preview } => {
                vec![EngineMsg::ApplyPreview { turn, preview }]
            }
            EngineEvent::Chosen(outcome) => self.chosen(outcome),
            EngineEvent::RewindPlanned(plan) => vec![EngineMsg::RewindPlanned(plan)],
            EngineEvent::Rewound(done) => vec![EngineMsg::Rewound(done)],
            EngineEvent::Closed { .. } => {
                self.running = false;
                Vec::new()
            }
            turn_event => self.turn_event(turn_event),
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
        match versus_core::fsutil::atomic_write(&target, text.as_bytes()) {
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
            // A closed engine says so when the next turn is asked for.
            let _ = self.set_roster(models.clone());
        }
        EngineMsg::SettingsLoaded {
            settings: saved.settings,
            models,
            errors,
        }
    }

    /// Ends the session: models and checks stopped, blind names revealed, the log closed,
    /// the workspaces removed (by the engine, off the async threads); returns when the engine
    /// says it is closed. Call it after the terminal is restored.
    pub async fn shutdown(&mut self) {
        if self
            .handle
            .submit(Op::Shutdown {
                keep_workspaces: false,
            })
            .is_err()
        {
            return;
        }
        while let Some(event) = self.events.recv().await {
            if let EngineEvent::Blind(names) = &event {
                self.names = names.clone();
            }
            if matches!(event, EngineEvent::Closed { .. }) {
                break;
            }
        }
    }

    /// The store (for the history file).
    pub fn store(&self) -> &Store {
        &self.handle.info().store
    }
}

/// The cached lists of the config's providers, in its order (lists of another server left out).
fn cached_lists(
    cache: &remote::ModelCache,
    config: &Config,
    env: &Env,
) -> Vec<(String, Vec<String>)> {
    config
        .providers()
        .iter()
        .filter_map(|def| {
            let (models, _) = cache.list(def, env)?;
            Some((def.name.clone(), models.to_vec()))
        })
        .collect()
}
