//! `versus` with no subcommand: the interactive interface (src/tui/, docs/tui.md).

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Args;

use versus::tui::{TuiOptions, run as run_tui};

/// Flags of the bare command.
#[derive(Debug, Args)]
pub struct TuiArgs {
    /// A model for the interactive session (PROVIDER/MODEL[#N]); repeat for several.
    /// Default: the config's `models`; with none that can run, the offline demo models on an
    /// example project.
    #[arg(short = 'm', long = "model", value_name = "SPEC")]
    pub models: Vec<String>,

    /// Reopen the latest session of this project: its turns are shown again and every model
    /// continues its conversation (-m replaces its models).
    #[arg(long = "continue", conflicts_with = "resume")]
    pub continue_session: bool,

    /// Reopen the session ID (a unique prefix is enough; `versus sessions` lists them).
    #[arg(long, value_name = "ID")]
    pub resume: Option<String>,

    /// Blind review: models are shown as Model A, B, C in a random order until you choose
    /// (/blind toggles it in the session).
    #[arg(long)]
    pub blind: bool,

    /// A recipe: its models (unless -m is given) and its Review section (`blind`, and the
    /// `check` command run in each model's workspace when it finishes).
    #[arg(long, value_name = "FILE")]
    pub recipe: Option<PathBuf>,
}

/// Runs the interactive interface.
pub fn run(
    args: TuiArgs,
    project: Option<PathBuf>,
    config_file: Option<PathBuf>,
    trust: bool,
) -> anyhow::Result<ExitCode> {
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        bail!(
            "the interactive interface needs a terminal; in scripts use `versus ask PROMPT -m SPEC` (see versus --help)"
        );
    }
    let project = super::project_dir(project)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("start the async runtime")?;
    let outcome = runtime.block_on(run_tui(TuiOptions {
        project,
        config_file,
        trust,
        models: args.models,
        resume: match (args.continue_session, args.resume) {
            (_, Some(id)) => Some(Some(id)),
            (true, None) => Some(None),
            (false, None) => None,
        },
        blind: args.blind,
        recipe: args.recipe,
    }))?;
    // Workspaces are removed on drop; do not let a runtime shutdown timeout cut that short.
    runtime.shutdown_timeout(std::time::Duration::from_secs(5));
    eprintln!(
        "versus: session {} is in {}",
        outcome.session_id,
        outcome.session_dir.display()
    );
    if let Some(dir) = outcome.demo_project {
        eprintln!(
            "versus: the demo ran on the example project in {} (delete it when you are done)",
            dir.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}
