//! `versus completions SHELL`: prints a completion script generated from the clap definition,
//! so completions can never drift from the real options.

use std::io::Write;
use std::process::ExitCode;

use clap::{Args, CommandFactory};
use clap_complete::Shell;

/// Arguments of `versus completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to generate for (bash, zsh, fish, elvish, powershell).
    #[arg(value_enum)]
    pub shell: Shell,
}

/// Writes the script to stdout, e.g. `versus completions bash > ~/.local/share/bash-completion/completions/versus`.
pub fn run(args: CompletionsArgs) -> anyhow::Result<ExitCode> {
    let mut command = super::Cli::command();
    // Generated into memory first: the generators panic on a failed write, and a closed pipe
    // (`versus completions bash | head`) is not worth a panic.
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "versus", &mut script);
    let mut out = std::io::stdout().lock();
    match out.write_all(&script).and_then(|()| out.flush()) {
        Err(err) if err.kind() != std::io::ErrorKind::BrokenPipe => Err(err.into()),
        _ => Ok(ExitCode::SUCCESS),
    }
}
