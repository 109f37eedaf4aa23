//! The review's shell (`o`): an interactive shell in one model's workspace, run inside that
//! model's sandbox.
//!
//! Why a sandbox for a shell the user types into: the workspace is the model's. Its
//! `.git/config` (`core.fsmonitor`, `core.pager`, `diff.external`, aliases), its hooks, its
//! `.envrc`, a `Makefile` or a script named like a command the user will type are all the
//! model's writing, and a git-aware prompt runs some of them before the user types anything.
//! Run on the host with versus's environment they would run with the user's keys, so the shell
//! gets exactly what the model's own commands get: the workspace, a private home, the
//! allowlisted environment (no keys), no network unless allowed, no way out of its tree.

use std::path::{Path, PathBuf};
use std::process::Command;

use versus_core::exec::{self, ExecError, Sandbox};

/// A shell the event loop should open (it owns the terminal).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellRequest {
    /// The workspace root (the project's folder inside the model's tree).
    pub dir: PathBuf,
    /// The name shown for the model.
    pub shown: String,
    /// Names are hidden (a blind turn before its choice): the workspace's folder is named
    /// after the model, so neither it nor the model's name may be printed.
    pub hidden: bool,
    /// The model's sandbox, which the shell runs in.
    pub sandbox: Sandbox,
}

/// Where, inside the sandbox's private `/tmp`, the link named after the alias lives.
const ALIAS_FOLDER: &str = "/tmp/versus";

impl ShellRequest {
    /// The folder the shell's prompt shows: the workspace, or while names are hidden a link
    /// named after the alias (made inside the sandbox's own `/tmp`), so the prompt (`\w`,
    /// `$PWD`) shows the alias rather than the real folder.
    pub fn shown_dir(&self) -> PathBuf {
        if self.hidden {
            Path::new(ALIAS_FOLDER).join(alias_name(&self.shown))
        } else {
            self.dir.clone()
        }
    }

    /// What is printed above the shell.
    pub fn banner(&self) -> String {
        let confined = if self.sandbox.is_unconfined() {
            "the sandbox is off in your config, so it runs unconfined"
        } else {
            "sandboxed like the model's own commands: this workspace only, no keys"
        };
        if self.hidden {
            format!(
                "versus: a shell in the workspace of {} ({confined}; names are hidden, so its folder is not shown); exit it to return to versus",
                self.shown
            )
        } else {
            format!(
                "versus: a shell in the workspace of {} ({}; {confined}); exit it to return to versus",
                self.shown,
                self.dir.display()
            )
        }
    }

    /// The status line when the shell could not run.
    pub fn failed(&self, error: &std::io::Error) -> String {
        let place = if self.hidden {
            format!("{}'s workspace", self.shown)
        } else {
            self.dir.display().to_string()
        };
        format!("could not run a shell in {place}: {error}")
    }

    /// The command that runs the shell: bubblewrap around `$SHELL -i` (when that shell is
    /// one the sandbox has, else bash), with the terminal inherited. `VERSUS_WORKSPACE` names
    /// the model inside it.
    pub fn command(&self) -> Result<Command, ExecError> {
        let shell = user_shell();
        let start = if self.hidden {
            let link = self.shown_dir();
            format!(
                "mkdir -p {folder} && ln -sfn \"$PWD\" {link} && cd {link} && ",
                folder = quote(ALIAS_FOLDER),
                link = quote(&link.to_string_lossy()),
            )
        } else {
            String::new()
        };
        let script = format!("{start}exec {} -i", quote(&shell));
        let mut command = exec::interactive(&self.sandbox, &self.dir, &script)?;
        command.env("VERSUS_WORKSPACE", &self.shown);
        Ok(command)
    }
}

/// The user's `$SHELL` when it lies in a system folder the sandbox mounts; bash otherwise
/// (a shell under the home folder is not in the sandbox).
fn user_shell() -> String {
    std::env::var("SHELL")
        .ok()
        .filter(|s| {
            ["/bin/", "/usr/bin/", "/usr/local/bin/"]
                .iter()
                .any(|dir| s.starts_with(dir))
                && !s.contains("..")
                && Path::new(s).is_file()
        })
        .unwrap_or_else(|| "bash".to_string())
}

/// The alias as a file name: letters and digits kept, anything else `-`.
fn alias_name(alias: &str) -> String {
    alias
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// `text` as one single-quoted shell word.
fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hidden_shell_shows_only_the_alias() {
        let request = ShellRequest {
            dir: "/w/.versus/ws/5766-demo-good-8/tree".into(),
            shown: "Model A".into(),
            hidden: true,
            sandbox: Sandbox::for_dir(Path::new("/w/.versus/ws/5766-demo-good-8/tree")),
        };
        assert_eq!(request.shown_dir(), Path::new("/tmp/versus/Model-A"));
        assert!(!request.banner().contains("good"), "{}", request.banner());
    }

    #[test]
    fn quoting_survives_quotes() {
        assert_eq!(quote("it's"), "'it'\\''s'");
    }
}
