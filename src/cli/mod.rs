//! Command-line parsing (clap) and dispatch to one module per subcommand.

mod tool_cmd;

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
}

fn print_overview() -> anyhow::Result<ExitCode> {
    use clap::CommandFactory;
    Cli::command().print_long_help()?;
    Ok(ExitCode::SUCCESS)
}

/// Parses the command line, runs the subcommand, maps the outcome to an exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Command::Tool(args)) => tool_cmd::run(args, cli.project),
        // The interactive TUI is not built yet (docs/ARCHITECTURE.md); until it is, the bare
        // command shows what is available instead of failing.
        None => print_overview(),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("versus: {err:#}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}
