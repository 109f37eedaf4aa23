//! Command-line parsing (clap) and dispatch to one module per subcommand.

mod ask;
mod clean_cmd;
mod completions_cmd;
mod demo_cmd;
mod mcp_cmd;
mod models_cmd;
mod pick_cmd;
mod recipe_cmd;
mod replay_cmd;
mod rewind_cmd;
mod run_cmd;
mod sessions_cmd;
pub(crate) mod signals;
mod stats_cmd;
mod tool_cmd;
mod trust_cmd;
mod tui_cmd;

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Exit code for bad usage (clap uses the same for parse errors).
pub const EXIT_USAGE: u8 = 2;

/// Fan one coding prompt out to several AI models, compare what each proposes, keep the best.
#[derive(Debug, Parser)]
#[command(name = "versus", version, about)]
pub struct Cli {
    /// Project directory (default: the current directory).
    #[arg(short = 'C', global = true, value_name = "DIR")]
    pub project: Option<PathBuf>,

    /// Config file to read instead of the user config (~/.config/versus/config.toml); the
    /// project's .versus/config.toml is still layered over it.
    #[arg(long = "config", global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Use this project's own .versus/config.toml and .env for this run without recording
    /// trust (for scripts; `versus trust` records it).
    #[arg(long = "trust", global = true)]
    pub trust: bool,

    /// Write structured logs (requests, retries, tool calls, applies; never keys) to FILE.
    #[arg(long = "log", global = true, value_name = "FILE")]
    pub log: Option<PathBuf>,

    /// Append every request body sent to a model and every event of its answers to FILE, one
    /// JSON object a line, keys and auth headers redacted (for reporting provider bugs).
    /// Created 0600; refused inside the project, whose files every model's workspace copies.
    #[arg(long = "debug-log", global = true, value_name = "FILE")]
    pub debug_log: Option<PathBuf>,

    /// Flags of the interactive interface (the bare `versus`).
    #[command(flatten)]
    pub tui: tui_cmd::TuiArgs,

    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one tool exactly as a model would and print what the model would receive.
    ///
    /// Exit code 0 for a normal result, 1 for an error result, 2 for bad usage.
    /// Without NAME, lists the tools.
    Tool(tool_cmd::ToolArgs),
    /// List providers (API, base URL, whether the key is set), known models with prices and
    /// context windows, and the default models from the config.
    Models(models_cmd::ModelsArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(completions_cmd::CompletionsArgs),
    /// One turn without the TUI: send PROMPT to every model, print the comparison table and
    /// each model's diff; `--pick SPEC` applies that model's changes (undo: `versus rewind`).
    ///
    /// Exit code 0 when done, 1 when every model failed or --pick left conflicting files
    /// unwritten, 2 for bad usage,
    /// 75 when --no-wait met another versus applying to the project, 130 when interrupted
    /// (Ctrl+C stops every model and changes no file).
    Ask(ask::AskArgs),
    /// Apply one model's changes from the turn a session left without a choice (a `versus ask`
    /// without --pick, an interface closed before choosing), without running the models again
    /// (undo: `versus rewind`).
    ///
    /// Exit code 0 when done, 1 when there is nothing to pick or conflicting files were left
    /// unwritten, 2 for bad usage, 75 when --no-wait met another versus applying to the
    /// project.
    Pick(pick_cmd::PickArgs),
    /// Undo the latest applied change (or roll back an apply that was interrupted).
    Rewind(rewind_cmd::RewindArgs),
    /// Try versus offline: write the example project and run the demo models on its bug.
    Demo(demo_cmd::DemoArgs),
    /// List the sessions of this project, or show one turn by turn.
    Sessions(sessions_cmd::SessionsArgs),
    /// Remove workspaces kept with --keep-workspaces and those of runs that died.
    Clean(clean_cmd::CleanArgs),
    /// MCP servers: `list` starts each configured server, shows its tools and status.
    Mcp(mcp_cmd::McpArgs),
    /// Trust this project's own .versus/config.toml and .env (ignored until trusted).
    Trust(trust_cmd::TrustArgs),
    /// Replay tools: `export` writes a model's recorded conversation as a demo script.
    Replay(replay_cmd::ReplayArgs),
    /// Wins, losses, ties, win rate, rating with a 95% interval, cost and latency per model,
    /// from the project's choices (.versus/preferences.jsonl) and headless reports; then the
    /// pass rates per recipe.
    Stats(stats_cmd::StatsArgs),
    /// Check a recipe (`check FILE`: every problem as FILE:LINE: message) or write a
    /// commented template (`new [FILE]`).
    Recipe(recipe_cmd::RecipeArgs),
    /// Run a recipe headless: every task x every model, success criteria checked in each
    /// model's workspace, a report in .versus/reports/ (or --out DIR).
    ///
    /// Exit code 0 when every criterion passed, 1 when some failed, 2 for bad usage or a
    /// recipe with problems, 130 when interrupted (finish it later with --resume).
    Run(run_cmd::RunArgs),
}

/// Sends tracing output to `path` (appended; `VERSUS_LOG` sets the filter, default `debug` for
/// versus and `warn` for libraries). Never to the terminal: a TUI may own it.
fn start_log(path: &std::path::Path) -> anyhow::Result<()> {
    use anyhow::Context;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("open the log file {}", path.display()))?;
    let filter = tracing_subscriber::EnvFilter::try_from_env("VERSUS_LOG").unwrap_or_else(|_| {
        tracing_subscriber::EnvFilter::new("warn,versus=debug,versus_core=debug,versus_tui=debug")
    });
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_writer(std::sync::Mutex::new(file))
        .try_init()
        .map_err(|e| anyhow::anyhow!("start logging: {e}"))
}

/// The async runtime of a command that needs one (all threads, every driver): built the same
/// way for each.
pub(crate) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    use anyhow::Context;
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("start the async runtime")
}

/// Runs a command's body as a task on `runtime` and waits for it. A body awaited directly by
/// `block_on` runs on the main thread, which then has to be woken (a futex wake and two
/// context switches) for every event the models' tasks send it; as a task it is woken on a
/// worker thread, usually one that is already running. The harness benchmark measured this as
/// about 0.05 ms of CPU per model step.
/// [`on_runtime`] for a body that gives back a value instead of an exit code.
pub(crate) fn on_runtime_value<F, T>(
    runtime: &tokio::runtime::Runtime,
    body: F,
) -> anyhow::Result<T>
where
    F: std::future::Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    match runtime.block_on(runtime.spawn(body)) {
        Ok(value) => Ok(value),
        Err(err) if err.is_panic() => std::panic::resume_unwind(err.into_panic()),
        Err(err) => Err(anyhow::anyhow!("the command's task ended early: {err}")),
    }
}

pub(crate) fn on_runtime<F>(runtime: &tokio::runtime::Runtime, body: F) -> anyhow::Result<ExitCode>
where
    F: std::future::Future<Output = anyhow::Result<ExitCode>> + Send + 'static,
{
    match runtime.block_on(runtime.spawn(body)) {
        Ok(outcome) => outcome,
        // A panic stays a panic, as it was when the body ran on this thread.
        Err(err) if err.is_panic() => std::panic::resume_unwind(err.into_panic()),
        Err(err) => Err(anyhow::anyhow!("the command's task ended early: {err}")),
    }
}

/// The project folder: `-C DIR` or the current directory, made absolute.
pub(crate) fn project_dir(project: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    use anyhow::Context;
    let dir = match project {
        Some(dir) => dir,
        None => std::env::current_dir().context("find the current directory")?,
    };
    dir.canonicalize()
        .with_context(|| format!("open the project folder {}", dir.display()))
}

/// Parses the command line, runs the subcommand, maps the outcome to an exit code.
pub fn main() -> ExitCode {
    if let Some(scratch) = std::env::var_os(versus::workspace::cow::PROBE_ENV) {
        return match versus::workspace::cow::probe(std::path::Path::new(&scratch)) {
            Ok(()) => ExitCode::SUCCESS,
            Err(why) => {
                eprintln!("{why}");
                ExitCode::FAILURE
            }
        };
    }
    let cli = Cli::parse();
    // Before anything starts a thread (logging, the runtime): see workspace::cow.
    let copy_on_write = wants_copy_on_write(&cli.command)
        .then(|| versus::workspace::cow::enter(&versus::workspace::default_parent()));
    if wants_copy_on_write(&cli.command) {
        versus::workspace::keep_hashes_between_runs();
    }
    if let Some(path) = &cli.log
        && let Err(err) = start_log(path)
    {
        eprintln!("versus: {}", describe(&err));
        return ExitCode::from(EXIT_USAGE);
    }
    if let Some(path) = &cli.debug_log {
        let opened = project_dir(cli.project.clone()).and_then(|project| {
            versus::provider::debug_log::install(path, &project).map_err(anyhow::Error::from)
        });
        if let Err(err) = opened {
            let _ = writeln!(
                versus::sanitize::stderr(),
                "versus: {}",
                versus::sanitize::line(&describe(&err))
            );
            return ExitCode::from(EXIT_USAGE);
        }
    }
    match copy_on_write {
        Some(Ok(())) => tracing::info!("copy-on-write workspaces"),
        Some(Err(why)) => tracing::info!(%why, "full checkouts: no copy-on-write workspaces"),
        None => {}
    }
    let result = match cli.command {
        Some(Command::Tool(args)) => tool_cmd::run(args, cli.project, cli.config, cli.trust),
        Some(Command::Models(args)) => models_cmd::run(args, cli.project, cli.config, cli.trust),
        Some(Command::Completions(args)) => completions_cmd::run(args),
        Some(Command::Ask(args)) => ask::run(args, cli.project, cli.config, cli.trust),
        Some(Command::Pick(args)) => pick_cmd::run(args, cli.project),
        Some(Command::Rewind(args)) => rewind_cmd::run(args, cli.project),
        Some(Command::Demo(args)) => demo_cmd::run(args, cli.project),
        Some(Command::Sessions(args)) => sessions_cmd::run(args, cli.project),
        Some(Command::Replay(args)) => replay_cmd::run(args, cli.project),
        Some(Command::Recipe(args)) => recipe_cmd::run(args, cli.project, cli.config, cli.trust),
        Some(Command::Run(args)) => run_cmd::run(args, cli.project, cli.config, cli.trust),
        Some(Command::Trust(args)) => trust_cmd::run(args, cli.project),
        Some(Command::Mcp(args)) => mcp_cmd::run(args, cli.project, cli.config, cli.trust),
        Some(Command::Stats(args)) => stats_cmd::run(args, cli.project),
        Some(Command::Clean(args)) => clean_cmd::run(args),
        None => tui_cmd::run(cli.tui, cli.project, cli.config, cli.trust),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            // Errors name project files and quote model text: escaped like every other line.
            let _ = writeln!(
                versus::sanitize::stderr(),
                "versus: {}",
                versus::sanitize::line(&describe(&err))
            );
            let busy = err.chain().any(|cause| {
                matches!(
                    cause.downcast_ref::<versus::apply::ApplyError>(),
                    Some(versus::apply::ApplyError::Busy { .. })
                )
            });
            ExitCode::from(if busy { EXIT_BUSY } else { EXIT_USAGE })
        }
    }
}

/// Whether the command makes model workspaces that may be copy-on-write: `ask` and `run`
/// and the TUI, unless workspaces must outlive the process (`--keep-workspaces`).
fn wants_copy_on_write(command: &Option<Command>) -> bool {
    match command {
        Some(Command::Ask(args)) => !args.keep_workspaces,
        Some(Command::Run(_)) | None => true,
        _ => false,
    }
}

/// Exit code when `--no-wait` met another versus applying to or rewinding the project
/// (EX_TEMPFAIL: try again later).
pub(crate) const EXIT_BUSY: u8 = 75;

/// How apply and rewind wait for another versus process on the same project: refuse at once
/// with `--no-wait`, else wait and say for whom, once.
pub(crate) fn lock_wait(no_wait: bool) -> versus::apply::LockWait {
    if no_wait {
        return versus::apply::LockWait::NoWait;
    }
    versus::apply::LockWait::WaitTelling(std::sync::Arc::new(|pid| {
        let who = pid.map(|p| format!(" (pid {p})")).unwrap_or_default();
        eprintln!(
            "versus: waiting for another versus{who} that is applying to or rewinding this \
             project..."
        );
    }))
}

/// Tells the user, on stderr, what of the project's own files was ignored and why: an
/// untrusted folder's config and `.env`, and `.env` names that are not keys or base URLs.
pub(crate) fn print_config_notices(config: &versus::config::Config, env: &versus::config::Env) {
    if let Some(notice) = config.trust.notice() {
        eprintln!("versus: {notice}");
    }
    if !env.ignored_dotenv().is_empty() {
        eprintln!(
            "versus: ignored {} in {}: a project's .env may only set keys (*_API_KEY, *_KEY, \
             *_TOKEN) and base URLs (*_BASE_URL)",
            env.ignored_dotenv().join(", "),
            env.dotenv_path()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| ".env".into())
        );
    }
}

/// The error and its causes on one line, like `{:#}`, but a cause whose text the message
/// already contains (an error that names its source in its own text) is not repeated.
fn describe(err: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line
}

#[cfg(test)]
mod tests {
    use super::describe;

    #[derive(Debug, thiserror::Error)]
    #[error("could not read x: {source}")]
    struct Named {
        source: std::io::Error,
    }

    #[test]
    fn causes_already_in_the_message_are_not_repeated() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        let err = anyhow::Error::new(Named { source: io }).context("load the model");
        assert_eq!(
            describe(&err),
            "load the model: could not read x: no such file"
        );
        let plain = anyhow::anyhow!("inner").context("outer");
        assert_eq!(describe(&plain), "outer: inner");
    }
}
