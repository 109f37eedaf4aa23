//! A command a person drives from their terminal (the review's shell, `o` in the TUI), built by
//! the very rules [`super::run`] applies to a model's commands.
//!
//! Why in the sandbox: the workspace a reviewer opens a shell in is the model's. Its
//! `.git/config` (`core.fsmonitor`, `core.pager`, aliases), hooks, `.envrc` and scripts are the
//! model's writing; the first `git status` a prompt runs there would execute them. Run inside
//! the model's sandbox, they reach what the model's own commands reach and nothing more: no
//! keys in the environment (the same allowlist), no home folder, no project.
//!
//! The caller sets stdin, stdout and stderr (normally the terminal) and waits for the shell.
//! bubblewrap's `--new-session` stays: the shell cannot push keystrokes into the user's
//! terminal (TIOCSTI); the price is a shell without job control, which says so when it starts.

use std::path::Path;

use super::command::{ExecError, prepare};
use super::sandbox::Sandbox;

/// The command that runs `bash -c script` in `cwd` under `sandbox` for a person at the
/// terminal: the same program, arguments and environment as [`super::run`] would use, with
/// stdio left for the caller to set. `Err` exactly when `run` would not start the command
/// (refused, sandbox unavailable); with `sandbox = "off"` it runs unconfined, with the
/// allowlisted environment.
pub fn interactive(
    sandbox: &Sandbox,
    cwd: &Path,
    script: &str,
) -> Result<std::process::Command, ExecError> {
    let prepared = prepare(sandbox, cwd, script)?;
    // versus does not see the shell end: its cgroup (if any) stays, and a later command's
    // sweep removes it once it is empty.
    if let Some(cgroup) = prepared.limit {
        cgroup.leave();
    }
    Ok(prepared.command)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::exec::{SandboxMode, SandboxSettings, WorkspaceDirs};

    /// Program, arguments, environment and folder of a command, comparable: the process
    /// limit's shim (`/bin/sh -c JOIN PROCS`, its cgroup differs per command) is left out, and
    /// the cgroup it names is removed (the shell never ran).
    fn shape(command: &std::process::Command) -> String {
        let mut args: Vec<_> = command.get_args().collect();
        let mut program = command.get_program();
        if program == "/bin/sh" {
            let procs = std::path::Path::new(args[2]);
            let _ = std::fs::remove_dir(procs.parent().unwrap());
            program = args[3];
            args.drain(..4);
        }
        format!(
            "{:?} {:?} {:?} {:?}",
            program,
            args,
            command.get_envs().collect::<Vec<_>>(),
            command.get_current_dir(),
        )
    }

    #[test]
    fn the_interactive_command_is_the_one_run_starts() {
        let dir = tempfile::tempdir().unwrap();
        for mode in [SandboxMode::On, SandboxMode::Off] {
            let settings = SandboxSettings {
                sandbox: mode,
                ..SandboxSettings::default()
            };
            let sandbox = Sandbox::new(&settings, WorkspaceDirs::tree_only(dir.path()));
            let script = "git status; exec bash -i";
            let Ok(shell) = interactive(&sandbox, dir.path(), script) else {
                // No working bubblewrap here: `run` refuses too (checked below).
                assert!(prepare(&sandbox, dir.path(), script).is_err());
                continue;
            };
            let for_run = prepare(&sandbox, dir.path(), script).unwrap().command;
            assert_eq!(shape(&shell), shape(&for_run), "{mode:?}");
            let args: Vec<String> = shell
                .get_args()
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            if mode == SandboxMode::On {
                for flag in [
                    "--new-session",
                    "--die-with-parent",
                    "--unshare-pid",
                    "--cap-drop",
                ] {
                    assert!(args.iter().any(|a| a == flag), "{flag} missing: {args:?}");
                }
            } else {
                assert!(args.iter().any(|a| a == script), "{args:?}");
            }
            // The environment is the allowlist, never versus's own.
            let names: Vec<String> = shell
                .get_envs()
                .map(|(n, _)| n.to_string_lossy().into_owned())
                .collect();
            assert!(names.iter().any(|n| n == "PATH"), "{names:?}");
            assert!(!names.iter().any(|n| n.ends_with("_API_KEY")), "{names:?}");
        }
    }

    #[test]
    fn a_refusing_sandbox_refuses_the_interactive_shell_too() {
        let sandbox = Sandbox::refusing("in-memory isolation");
        let err = interactive(&sandbox, Path::new("/"), "bash").unwrap_err();
        assert!(matches!(err, ExecError::Refused(_)), "{err}");
        let settings = SandboxSettings {
            program: "/nonexistent/bwrap-interactive".into(),
            ..SandboxSettings::default()
        };
        let sandbox = Sandbox::new(&settings, WorkspaceDirs::tree_only("/"));
        let err = interactive(&sandbox, Path::new("/"), "bash").unwrap_err();
        assert!(matches!(err, ExecError::Unavailable { .. }), "{err}");
    }
}
