//! Running a criterion's shell command in a model's workspace, through the one command runner
//! ([`crate::exec`]): the workspace's sandbox, its own process tree, a timeout, cancellation,
//! and nothing left running afterwards.
//!
//! Output is kept only as a bounded tail: a criterion's detail keeps its last lines, and a
//! command that prints gigabytes must not take the run's memory with it.

use std::path::Path;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

pub use crate::exec::Ending;
use crate::exec::{CommandSpec, ExecError, Sandbox, Tail};

/// Bytes of output kept (the end of it).
const KEEP_BYTES: usize = 256 * 1024;

/// A finished command: how it ended and the end of its output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandOutput {
    /// How it ended.
    pub ending: Ending,
    /// The last bytes of merged stdout and stderr (at most 256 KiB), as lossy UTF-8.
    pub output: String,
}

/// Runs `command` with `bash -c` in `dir` inside `sandbox`. `Err` when it could not start
/// (sandbox unavailable or refusing, bash missing).
pub async fn run(
    command: &str,
    dir: &Path,
    sandbox: &Sandbox,
    timeout: Duration,
    cancel: &CancellationToken,
) -> Result<CommandOutput, ExecError> {
    let mut tail = Tail::new(KEEP_BYTES);
    let spec = CommandSpec {
        script: command,
        cwd: dir,
        sandbox,
        timeout,
        cancel,
    };
    let finished = crate::exec::run(spec, |chunk| tail.push(chunk)).await?;
    Ok(CommandOutput {
        ending: finished.ending,
        output: tail.text(),
    })
}

/// The last `n` lines of `text` (a final newline does not count as an empty line).
pub fn last_lines(text: &str, n: usize) -> String {
    let trimmed = text.strip_suffix('\n').unwrap_or(text);
    if trimmed.is_empty() {
        return String::new();
    }
    let lines: Vec<&str> = trimmed.split('\n').collect();
    let start = lines.len().saturating_sub(n);
    lines[start..].join("\n")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    async fn go(command: &str, timeout: Duration) -> CommandOutput {
        let dir = tempfile::tempdir().unwrap();
        run(
            command,
            dir.path(),
            &Sandbox::for_dir(dir.path()),
            timeout,
            &CancellationToken::new(),
        )
        .await
        .unwrap()
    }

    #[tokio::test]
    async fn merges_output_in_order_and_reports_the_exit_code() {
        let out = go(
            "echo one; echo two >&2; echo three; exit 3",
            Duration::from_secs(10),
        )
        .await;
        assert_eq!(out.ending, Ending::Exited(3));
        assert_eq!(out.output, "one\ntwo\nthree\n");
    }

    #[tokio::test]
    async fn a_command_past_its_timeout_is_killed_with_its_children() {
        let out = go(
            "echo started; sleep 30 & sleep 30",
            Duration::from_millis(200),
        )
        .await;
        assert_eq!(out.ending, Ending::TimedOut);
        assert_eq!(out.output, "started\n");
    }

    #[tokio::test]
    async fn cancellation_stops_the_command() {
        let dir = tempfile::tempdir().unwrap();
        let cancel = CancellationToken::new();
        cancel.cancel();
        let sandbox = Sandbox::for_dir(dir.path());
        let out = run(
            "sleep 30",
            dir.path(),
            &sandbox,
            Duration::from_secs(60),
            &cancel,
        )
        .await
        .unwrap();
        assert_eq!(out.ending, Ending::Cancelled);
    }

    #[test]
    fn last_lines_keeps_the_end() {
        assert_eq!(last_lines("a\nb\nc\n", 2), "b\nc");
        assert_eq!(last_lines("a\nb", 5), "a\nb");
        assert_eq!(last_lines("", 5), "");
    }
}
