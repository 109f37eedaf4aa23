//! The `versus` binary: thin glue from the command line to the library, errors to exit codes.

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    cli::main()
}
