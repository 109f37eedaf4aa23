//! The interactive interface (`versus` with no subcommand): one live panel per model, a prompt
//! box, slash commands, and a session log that holds every turn.
//!
//! Design (docs/tui.md has the user's view):
//! - **One state, pure updates.** [`state::App`] is all the interface knows; [`update::update`]
//!   changes it from one [`action::Msg`] and returns [`action::Effect`]s. No I/O happens there,
//!   so keys, commands and how runs show up are tested without a terminal.
//! - **An adapter over the engine's handle.** [`engine::Engine`] turns effects into the
//!   session engine's `Op`s and its events into messages, and keeps only what an interactive
//!   front end has (model clients by label, running panels, `/save` and `/load`, statistics,
//!   the shell request). The engine runs every turn, change set, check, apply and rewind.
//! - **The review is state too.** [`review::ReviewState`] holds the last turn's change sets,
//!   the basket and what is on screen; picking, conflicts and the apply flow are pure
//!   [`update`] code, tested without a terminal; the rules themselves (pairing, word
//!   highlights, composing picks, blind names) come from [`versus_core::review`].
//! - **Render from memory.** [`view::draw`] reads the state only; each panel's transcript keeps
//!   a wrap cache keyed by width so a frame costs what is visible, not what was streamed.
//! - **One key table.** [`keymap`] lists, per context, each key's action, hint and help text;
//!   the handlers match on actions, and the status line, the questions' key lines and `/help`
//!   are drawn from the same entries, so they cannot disagree with what a key does.
//! - **One loop.** [`event_loop::run`] merges terminal input, driver messages, a clock and
//!   signals, and redraws at most once per frame when something changed; idle costs nothing.
//!
//! This crate is the `tui` module of docs/ARCHITECTURE.md's tables. It reaches a turn only
//! through `versus_core::engine`'s handle: the runner, the agent loop, workspace creation and
//! the apply engine are private to the core, so naming them here does not compile.

pub mod action;
pub mod commands;
pub mod complete;
pub mod engine;
pub mod event_loop;
pub mod export;
pub mod format;
pub mod keymap;
pub mod layout;
pub mod markdown;
pub mod notify;
pub mod panel;
pub mod prompt;
pub mod replay;
pub mod review;
pub mod start;
pub mod state;
pub mod strings;
pub mod terminal;
pub mod theme;
pub mod transcript;
pub mod update;
pub mod view;
pub mod wrap;

use std::path::{Path, PathBuf};

use versus_core::config::ConfigError;
use versus_core::engine::{EngineError, SessionStart, StartNotice, StartOptions, start_session};
use versus_core::provider::ProviderError;
use versus_core::session::{SessionError, Source, Store};
use versus_core::tools::ToolRegistry;

use action::{EngineMsg, Settings};
use engine::{Engine, EngineParts, LoopMsg};
use start::{Choice, StartError};
use state::{App, SessionInfo};
use theme::Theme;

/// How the interface is started (the bare command's flags).
#[derive(Debug, Clone, Default)]
pub struct TuiOptions {
    /// Project folder.
    pub project: PathBuf,
    /// `--config FILE`.
    pub config_file: Option<PathBuf>,
    /// `--trust`: use the project's own config and `.env` this once.
    pub trust: bool,
    /// `-m SPEC` flags.
    pub models: Vec<String>,
    /// `--continue` (`Some(None)`: the latest session) or `--resume ID` (`Some(Some(id))`).
    pub resume: Option<Option<String>>,
    /// `--blind`: hide the model names until each choice.
    pub blind: bool,
    /// `--recipe FILE`: its models (when no `-m`) and its Review section (blind, check).
    pub recipe: Option<PathBuf>,
}

/// What the session left behind, for the command line to print after the terminal is back.
#[derive(Debug, Clone)]
pub struct TuiOutcome {
    /// Session id.
    pub session_id: String,
    /// Session folder (events.jsonl).
    pub session_dir: PathBuf,
    /// The project the session belongs to (the example project's folder in demo mode).
    pub project: PathBuf,
    /// The example project, in demo mode.
    pub demo_project: Option<PathBuf>,
    /// Blind mode hid the names until the session ended: who was who (`Model A` → label), in
    /// alias order. Empty when the names were not hidden at the end.
    pub revealed: Vec<(String, String)>,
}

/// Why the interface could not run.
#[derive(Debug, thiserror::Error)]
pub enum TuiError {
    /// The config could not be read.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The HTTP client could not be built.
    #[error(transparent)]
    Http(#[from] ProviderError),
    /// No model can run.
    #[error(transparent)]
    Start(#[from] StartError),
    /// `.versus/` could not be used.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// The session could not be opened.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// The recipe given with `--recipe` has problems.
    #[error("{0}")]
    Recipe(String),
    /// The terminal failed.
    #[error(
        "terminal error: {0} (versus needs an interactive terminal; use `versus ask` in scripts)"
    )]
    Terminal(#[from] std::io::Error),
}

/// Runs the interactive interface until the user quits.
pub async fn run(options: TuiOptions) -> Result<TuiOutcome, TuiError> {
    let (mut config, env) = versus_core::config::load(
        &options.project,
        options.config_file.as_deref(),
        options.trust,
    )?;
    let http = versus_core::provider::http::default_client()?;
    let (recipe, recipe_may_loosen) = match &options.recipe {
        Some(path) => {
            let (recipe, hash) = versus_core::recipe::Recipe::load_hashed_for(path, &config)
                .map_err(|e| TuiError::Recipe(e.to_string()))?;
            // Only a trusted recipe may loosen the sandbox; refused before anything starts.
            let may_loosen = options.trust
                || versus_core::config::TrustStore::for_user_or_none()
                    .recipe(path, &hash, &[&options.project])
                    .may_loosen();
            recipe
                .check_loosening(
                    &config.sandbox,
                    path,
                    may_loosen,
                    versus_core::recipe::LooseningKind::SANDBOX,
                )
                .map_err(|e| TuiError::Recipe(e.to_string()))?;
            (Some(recipe), may_loosen)
        }
        None => (None, false),
    };
    let mut options = options;
    if options.models.is_empty()
        && let Some(recipe) = &recipe
    {
        options.models = recipe.model_specs().iter().map(|s| s.to_string()).collect();
    }
    // The sandbox the session's commands run in: the recipe's may narrow the settings' (or
    // loosen them, once trusted).
    let sandbox_for = |config: &versus_core::config::Config| match &recipe {
        Some(recipe) => recipe.sandbox_settings(&config.sandbox, recipe_may_loosen),
        None => config.sandbox.clone(),
    };
    let mut reopened = None;
    let (project, models, banner, warnings, demo) = match &options.resume {
        Some(id) => {
            let roster = (!options.models.is_empty()).then(|| options.models.clone());
            let opened = start_session(
                SessionStart::Continue {
                    id: id.clone(),
                    models: roster,
                },
                StartOptions {
                    project: &options.project,
                    source: Source::Tui,
                    sandbox: Some(&sandbox_for(&config)),
                    refuse_if_interrupted: false,
                },
            )?;
            let specs = opened.engine.models().to_vec();
            let (models, warnings) =
                start::choose_for_session(&specs, &options.project, &config, &env, &http)?;
            reopened = Some(opened);
            (options.project.clone(), models, Vec::new(), warnings, false)
        }
        None => match start::choose(&options.models, &options.project, &config, &env, &http)? {
            Choice::Models {
                models,
                warnings,
                banner,
            } => (options.project.clone(), models, banner, warnings, false),
            Choice::Demo {
                project,
                models,
                banner,
            } => {
                // The example project's own settings (its review check) count in its session,
                // and when it is continued.
                start::trust_demo(&project, versus_core::config::TrustStore::for_user());
                (config, _) = start::demo_config(&project, options.config_file.as_deref())?;
                (project, models, banner, Vec::new(), true)
            }
        },
    };
    let labels: Vec<String> = models.iter().map(|(l, _)| l.clone()).collect();
    config.sandbox = sandbox_for(&config);
    // The one start of every front end: the session created or reopened, leftovers removed,
    // the sandbox checked.
    let started = match reopened {
        Some(started) => started,
        None => start_session(
            SessionStart::New(labels.clone()),
            StartOptions {
                project: &project,
                source: Source::Tui,
                sandbox: Some(&config.sandbox),
                refuse_if_interrupted: false,
            },
        )?,
    };
    let (mut core, log, restored) = (started.engine, started.log, started.restored);
    let session_id = core.id().to_string();
    let session_dir = core.dir().to_path_buf();
    let session = SessionInfo {
        id: session_id.clone(),
        project: project.display().to_string(),
        demo,
    };
    // The review check: the recipe's, else the config's `[check]` (the project's own, once
    // trusted, or the user's); `/config check` changes it for the session.
    let settings = Settings {
        check: recipe
            .as_ref()
            .and_then(|r| r.review.check.clone())
            .or_else(|| config.check.clone()),
        ..Settings::default()
    };
    // Blind mode belongs to the session engine: it gives the aliases (a reopened blind
    // session keeps its own until they are revealed), so even the idle panels before the
    // first turn show no name.
    if options.blind || recipe.as_ref().is_some_and(|r| r.review.blind) {
        core.set_blind(true);
    }
    let mut app = App::new(session, labels, settings, Theme::from_env());
    app.names = core.blind_names().cloned();
    app.blind = core.blind();
    let config_mouse = config.ui.mouse;
    let term_program = std::env::var("TERM_PROGRAM").ok();
    app.notifier = notify::resolve(config.ui.notify, term_program.as_deref());
    app.banner = banner;
    if let Some(notice) = config.trust.notice() {
        app.banner.insert(0, notice);
    }
    for notice in started.notices {
        match notice {
            StartNotice::SandboxOff(warning) => app.banner.insert(0, format!("WARNING: {warning}")),
            StartNotice::CommandsRefused(err) => app
                .banner
                .insert(0, format!("model commands will be refused: {err}")),
            StartNotice::Leftover(err) => app.banner.push(format!("warning: {err}")),
            StartNotice::SessionGone(id) => app.banner.push(format!("session {id} is gone")),
        }
    }
    app.tool_names = ToolRegistry::builtin()
        .names()
        .into_iter()
        .map(str::to_string)
        .collect();
    if config.web_search.is_some() {
        // Offered from the config's `[web_search]`, so `/config tools` may name it.
        app.tool_names.push("web_search".to_string());
    }
    if demo {
        app.prompt.set(versus_core::example::PROMPT);
    }
    if options.resume.is_some() {
        let replayed = replay::replay(&mut app, &log);
        // The engine's names (`--blind` on a session that was not blind gives new ones).
        app.names = core.blind_names().cloned();
        app.blind = core.blind();
        match &restored {
            Some(turn) => replay::restore_review(&mut app, turn, &session_id),
            None => match replayed.interrupted {
                Some(prompt) => {
                    app.prompt.set(&prompt);
                    app.info(format!(
                        "session {session_id} reopened: turn {} was interrupted; its prompt is back in the box (Enter sends it again)",
                        replayed.turns
                    ));
                }
                None => app.info(format!(
                    "session {session_id} reopened after {} turn(s): every model continues its conversation",
                    replayed.turns
                )),
            },
        }
        if !log.skipped.is_empty() {
            app.error(format!(
                "{} line(s) of the session log could not be read and were left out: {}",
                log.skipped.len(),
                log.skipped
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("; ")
            ));
        }
    }
    if !warnings.is_empty() {
        app.error(format!("skipped: {}", warnings.join("; ")));
    }
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let store = core.store().clone();
    load_in_background(&store, &project, tx.clone());
    let parts = EngineParts {
        project: project.clone(),
        config,
        env,
        http,
        models,
        core,
    };
    let mut engine = Engine::new(parts, tx);
    app.mouse = config_mouse;
    terminal::set_mouse(app.mouse);
    let (mut terminal, guard) = terminal::enter()?;
    let size = terminal.size()?;
    app.size = (size.width, size.height);
    let result = event_loop::run(&mut terminal, &mut app, &mut engine, &mut rx).await;
    drop(guard);
    let hidden = engine.blind_names().filter(|n| !n.is_revealed()).cloned();
    // Ends the session: the engine reveals blind mode's names (recorded).
    engine.shutdown().await;
    result?;
    let revealed = hidden.map_or_else(Vec::new, |names| {
        names
            .labels()
            .iter()
            .filter_map(|label| Some((names.alias(label)?, label.clone())))
            .collect()
    });
    Ok(TuiOutcome {
        session_id,
        session_dir,
        project: project.clone(),
        demo_project: demo.then_some(project),
        revealed,
    })
}

/// Reads the prompt history and the project's file list off the loop's thread.
fn load_in_background(
    store: &Store,
    project: &Path,
    tx: tokio::sync::mpsc::UnboundedSender<LoopMsg>,
) {
    let history = store.history();
    let project = project.to_path_buf();
    tokio::task::spawn_blocking(move || {
        let prompts = read_history(&history);
        let _ = tx.send(LoopMsg::App(EngineMsg::HistoryLoaded(prompts)));
        let files = list_files(&project, 20_000);
        let _ = tx.send(LoopMsg::App(EngineMsg::FilesLoaded(files)));
    });
}

/// Prompts of a `history.jsonl`, oldest first (unreadable lines skipped and logged).
pub fn read_history(path: &Path) -> Vec<String> {
    versus_core::session::read_history(path)
}

/// Project files for `@path` completion: relative, `/`-separated, sorted, at most `limit`,
/// under the same ignore rules as the tools (a file offered is one a model can read), without
/// hidden files and folders (`.env` is not suggested for attaching) or versus's `.versus/`.
pub fn list_files(project: &Path, limit: usize) -> Vec<String> {
    let Ok(root) = project.canonicalize() else {
        return Vec::new();
    };
    let mut files = versus_core::tools::project_files(&root, limit, |rel| {
        !rel.split('/').any(|part| part.starts_with('.'))
    });
    files.sort();
    files
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn history_skips_torn_lines_and_repeats() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.jsonl");
        std::fs::write(
            &path,
            "{\"prompt\":\"a\"}\n{\"prompt\":\"a\"}\n{\"prompt\":\"b\"}\n{\"prom",
        )
        .unwrap();
        assert_eq!(read_history(&path), ["a", "b"]);
    }

    #[test]
    fn files_are_listed_relative_and_sorted_without_hidden_ones() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::create_dir_all(dir.path().join(".versus")).unwrap();
        std::fs::write(dir.path().join("src/b.rs"), "").unwrap();
        std::fs::write(dir.path().join("a.md"), "").unwrap();
        std::fs::write(dir.path().join(".versus/x"), "").unwrap();
        assert_eq!(list_files(dir.path(), 10), ["a.md", "src/b.rs"]);
    }

    #[test]
    fn files_follow_the_tools_ignore_rules_outside_git_too() {
        // Not a repository: the `.gitignore` still applies, as it does for the tools (the
        // list offered `build/out.rs` before); one above the project does not.
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".gitignore"), "*.md\n").unwrap();
        let project = dir.path().join("project");
        std::fs::create_dir_all(project.join("build")).unwrap();
        std::fs::write(project.join(".gitignore"), "build/\n").unwrap();
        std::fs::write(project.join("build/out.rs"), "").unwrap();
        std::fs::write(project.join("a.md"), "").unwrap();
        std::fs::write(project.join("lib.rs"), "").unwrap();
        assert_eq!(list_files(&project, 10), ["a.md", "lib.rs"]);
    }
}
