//! `versus clean`: removes the workspaces left under the workspace folder: those kept with
//! `--keep-workspaces` (later runs never touch them) and those of runs that died.

use std::process::ExitCode;

use clap::Args;

/// `versus clean` takes no arguments yet.
#[derive(Debug, Args)]
pub struct CleanArgs {}

/// Removes kept and abandoned workspaces and says how many.
pub fn run(_args: CleanArgs) -> anyhow::Result<ExitCode> {
    let parent = versus::workspace::default_parent();
    let removed = versus::workspace::clean_workspaces()?;
    eprintln!(
        "versus: removed {removed} workspace folder(s) under {}",
        parent.display()
    );
    Ok(ExitCode::SUCCESS)
}
