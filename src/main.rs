//! The `versus` binary: thin glue from the command line to the library, errors to exit codes.

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    // First, before any thread: no descriptor versus was started with, and no key of the
    // user's session keyring, may reach a command.
    versus::exec::close_on_exec_all();
    versus::exec::leave_session_keyring();
    cli::main()
}
