//! Headless runs of a recipe (`versus run`): every task x every model, each model in its own
//! workspace, the recipe's success criteria checked in that workspace when the model stops,
//! and a versioned report (`report.json`, `summary.md`, diffs, raw event logs).
//!
//! Design:
//! - **Jobs, run as engine turns.** The unit of a resume is a job (`plan.rs`): what one model
//!   does without a break in one workspace (one task in `independent` mode, the chain of every
//!   task in `sequential` mode), so "finished" always means "its workspace and conversation
//!   were complete". The jobs left become turns of the run's session (`drive.rs`), submitted
//!   to the session engine's handle like a turn of `versus ask`: independent tasks several to
//!   a turn (each task's prompt and entries named, each job starting with no history), so
//!   `--jobs` places fill across tasks; a sequential chain one turn per task, continuing in its
//!   workspace. The engine runs the models (at most `--jobs` at once), records them and builds
//!   their change sets; the next turn starts once this one's criteria are checked.
//! - **One writer.** The engine never touches the output folder; one collector turns its
//!   events into the event logs and the checkpoint, writes diffs, and drives the progress
//!   display. Nothing races for a file.
//! - **The checkpoint is the report's source.** Every finished run is appended to
//!   `checkpoint.jsonl` as the exact [`report::ModelRun`] the report holds, after every model
//!   step a step record is appended, and the final report is rebuilt from the checkpoint
//!   replayed in order. So an uninterrupted run, an interrupted one and a resumed one produce
//!   the same report shape, and a SIGKILL loses at most the jobs that were running.
//! - **Deterministic output.** Everything is ordered by recipe position (tasks, criteria) or
//!   command-line position (models), maps are sorted, and only the fields listed in
//!   [`report::VOLATILE_FIELDS`] carry times or ids.
//!
//! The library decides nothing about the terminal beyond the [`DisplayMode`] it is given; the
//! CLI (`src/cli/run_cmd.rs`) parses arguments, loads the recipe, turns signals into
//! cancellation and maps the [`Verdict`] to an exit code.

mod assemble;
mod checkpoint;
mod collect;
mod criteria;
mod drive;
mod execute;
pub mod layout;
mod models;
mod plan;
mod progress;
pub mod report;
mod resume;
mod summary;

use std::path::PathBuf;

use crate::workspace::WorkspaceError;

pub use execute::run;
pub use progress::DisplayMode;

/// A model the run was asked for: its demo script path (`demo/path/to/script.jsonl`) is read
/// from the recipe's folder for models listed in the recipe, the folder versus runs in for
/// `-m`. The same request `versus ask` makes, resolved by the same skip policy.
pub type RequestedModel = crate::engine::ModelRequest;

/// Where the run writes its output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutDir {
    /// This folder (`--out DIR`, or the folder a resume continues).
    Exact(PathBuf),
    /// A new `<recipe>-<time>` folder under this one (`.versus/reports/`).
    NewUnder(PathBuf),
    /// A new `<recipe>-<time>` folder under the reports of this folder's `.versus/` store,
    /// which is opened (made, stamped, hidden from git) only once the run can start: a run
    /// refused for its models or its recipe leaves nothing behind.
    NewInStore(PathBuf),
}

/// Everything a run needs, decided by the caller.
#[derive(Debug, Clone)]
pub struct RunRequest {
    /// The recipe file as the user named it (recorded in the report).
    pub recipe_file: PathBuf,
    /// The recipe, read over the built-in defaults.
    pub recipe: crate::recipe::Recipe,
    /// blake3 of the recipe file's bytes, hex.
    pub recipe_hash: String,
    /// Whether the recipe may loosen the sandbox (the user's own file, or trusted by content;
    /// see [`crate::config::RecipeTrust`]). When false, a recipe asking for
    /// `filesystem: unrestricted`, `network: full`, `allow_local_fetch: true` or a
    /// `project_root` outside its repository is refused before anything starts.
    pub recipe_may_loosen: bool,
    /// The project folder the models work on (absolute).
    pub project: PathBuf,
    /// The models to run, in order.
    pub models: Vec<RequestedModel>,
    /// Whether `models` came from `-m` (a resume then checks they match the checkpoint);
    /// otherwise a resume uses the models the run started with.
    pub models_from_command_line: bool,
    /// Where to write.
    pub out: OutDir,
    /// Continue the run in `out` instead of starting one.
    pub resume: bool,
    /// Model runs at once (`None`: one per model).
    pub jobs: Option<usize>,
    /// How progress is shown on stderr.
    pub display: DisplayMode,
}

/// How a run ended, for the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Every criterion of every run passed.
    AllPassed,
    /// Some criterion failed.
    SomeFailed,
    /// Cancelled (Ctrl+C, SIGTERM): the report is incomplete, the checkpoint allows a resume.
    Interrupted,
    /// Some criterion could not be checked (the command sandbox could not start, a command
    /// could not be spawned): the run says nothing about the models. Exit code 2, as for a
    /// setup problem, never 1 ("a model failed").
    Broken,
}

/// What [`run`] hands back.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// The report as written to `report.json`.
    pub report: report::Report,
    /// The output folder.
    pub out_dir: PathBuf,
    /// Passed, failed or interrupted.
    pub verdict: Verdict,
}

/// Why a run could not start or finish. Texts say what to do instead.
#[derive(Debug, thiserror::Error)]
pub enum HeadlessError {
    /// A file of the output folder could not be written or read.
    #[error("could not {op} {}: {source}", path.display())]
    Io {
        /// What was being done.
        op: &'static str,
        /// Where.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The recipe has no task.
    #[error("{0} has no task: add a `## Tasks` section with at least one `- task` line")]
    NoTasks(String),
    /// No model was given anywhere.
    #[error(
        "no model to run: list models in the recipe's `## Models`, pass -m PROVIDER/MODEL, or set `models` in the config"
    )]
    NoModels,
    /// The same model entry twice.
    #[error("{0} is listed twice; write {0}#2 for a second sample of the same model")]
    DuplicateModel(String),
    /// Every model was skipped.
    #[error("no model can run: every model given was skipped (see the warnings above)")]
    AllSkipped,
    /// A model's spec or provider settings are wrong (unknown provider, bad base URL).
    #[error(transparent)]
    Resolve(crate::config::ResolveError),
    /// A model could not be set up (an unreadable demo script).
    #[error("{model}: {message}")]
    Model {
        /// The model entry.
        model: String,
        /// What is wrong and what to do.
        message: String,
    },
    /// The recipe asks for something a headless run cannot do.
    #[error("{0}")]
    Unsupported(String),
    /// `--out DIR` already holds a run and `--resume` was not given.
    #[error(
        "{} already holds a run (checkpoint.jsonl); add --resume to finish it, or choose another --out folder",
        .0.display()
    )]
    OutDirInUse(PathBuf),
    /// `--resume` found nothing to continue.
    #[error("nothing to resume in {}: {why}; run without --resume to start a new run", path.display())]
    NothingToResume {
        /// The folder looked at.
        path: PathBuf,
        /// What is missing.
        why: String,
    },
    /// The run being resumed differs from the one asked for now.
    #[error("cannot resume {}: {why}", path.display())]
    ResumeMismatch {
        /// The folder being resumed.
        path: PathBuf,
        /// What differs and what to do.
        why: String,
    },
    /// The project could not be captured or prepared.
    #[error(transparent)]
    Workspace(#[from] WorkspaceError),
    /// The run's session could not be opened in `.versus/`.
    #[error(transparent)]
    Session(#[from] crate::engine::EngineError),
    /// `.versus/` could not be used.
    #[error(transparent)]
    Store(#[from] crate::session::SessionError),
    /// An untrusted recipe asked to loosen the sandbox.
    #[error(transparent)]
    Loosens(#[from] crate::recipe::LooseningRefused),
}

impl HeadlessError {
    fn io(op: &'static str, path: &std::path::Path, source: std::io::Error) -> Self {
        Self::Io {
            op,
            path: path.to_path_buf(),
            source,
        }
    }
}
