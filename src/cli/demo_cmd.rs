//! `versus demo [DIR]`: the whole flow offline, with no API key: writes the example project,
//! runs the three demo models on its bug, and shows how to pick and rewind.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use super::ask::{self, AskArgs};

/// Arguments of `versus demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Folder for the example project (must be new or empty; default: ./versus-demo).
    pub dir: Option<PathBuf>,

    /// Apply this demo model's change set at the end (e.g. demo/good).
    #[arg(long, value_name = "SPEC|none")]
    pub pick: Option<String>,
}

/// Runs the command.
pub fn run(args: DemoArgs, project: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let parent = super::project_dir(project)?;
    let dir = parent.join(args.dir.unwrap_or_else(|| PathBuf::from("versus-demo")));
    // The project, its own settings (the review check the interface runs) and trust for them.
    versus::tui::start::write_demo(&dir)
        .with_context(|| format!("write the example project to {}", dir.display()))?;
    versus::tui::start::trust_demo(&dir, versus::config::TrustStore::for_user());
    eprintln!(
        "versus: example project written to {} (a small Rust crate whose test fails)",
        dir.display()
    );
    let ask_args = AskArgs {
        prompt: versus::example::PROMPT.to_string(),
        models: versus::example::MODELS
            .iter()
            .map(|m| m.to_string())
            .collect(),
        pick: args.pick.clone(),
        json: false,
        isolation: None,
        max_steps: 20,
        timeout: 600,
        max_cost: None,
        setup: None,
        setup_network: false,
        keep_workspaces: false,
        on_conflict: ask::ConflictArg::Skip,
        quiet: false,
        no_wait: false,
        continue_session: false,
        session: None,
        no_pick_hint: true,
    };
    let code = ask::run(ask_args, Some(dir.clone()), None, false)?;
    if args.pick.is_none() {
        eprintln!();
        eprintln!(
            "Next: keep the best fix (the models do not run again), then undo it if you like:"
        );
        eprintln!("  versus -C {} pick demo/good", dir.display());
        eprintln!("  versus -C {} rewind --yes", dir.display());
        eprintln!(
            "Or in the interface, where each change is checked with cargo test as it finishes:"
        );
        eprintln!("  versus -C {}", dir.display());
    }
    Ok(code)
}
