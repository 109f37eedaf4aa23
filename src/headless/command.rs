//! Running a criterion's shell command in a model's workspace: `bash -c` in its own process
//! group, stdout and stderr merged in the order they were written, a timeout, cancellation,
//! and nothing left running afterwards.
//!
//! Output is kept only as a bounded tail: a criterion's detail keeps its last lines, and a
//! command that prints gigabytes must not take the run's memory with it.

use std::io;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::AsyncReadExt;
use tokio::process::Command;
use tokio_util::sync::CancellationToken;

/// Bytes of output kept (the end of it).
const KEEP_BYTES: usize = 256 * 1024;

/// How long output is still read after the group was killed, for a process outside the group
/// that holds the pipe open.
const DRAIN_AFTER_KILL: Duration = Duration::from_secs(2);

/// How the command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// The shell exited with this code.
    Exited(i32),
    /// The shell was killed by this signal (not by versus).
    Signaled(i32),
    /// It ran past its timeout and was killed.
    TimedOut,
    /// The run was cancelled (Ctrl+C) and the command killed.
    Cancelled,
}

/// A finished command: how it ended and the end of its output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandOutput {
    /// How it ended.
    pub ending: Ending,
    /// The last bytes of merged stdout and stderr (at most 256 KiB), as lossy UTF-8.
    pub output: String,
}

/// Runs `command` with `bash -c` in `dir`. `Err` only when bash cannot be started.
pub async fn run(
    command: &str,
    dir: &Path,
    timeout: Duration,
    cancel: &CancellationToken,
) -> io::Result<CommandOutput> {
    let (sender, mut receiver) = tokio::net::unix::pipe::pipe()?;
    let stdout = sender.into_blocking_fd()?;
    let stderr = stdout.try_clone()?;
    let mut cmd = Command::new("bash");
    cmd.arg("-c")
        .arg(command)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::from(stdout))
        .stderr(Stdio::from(stderr))
        .process_group(0)
        .kill_on_drop(true);
    let mut child = cmd.spawn()?;
    // Our copies of the write end must go, or end-of-file never comes.
    drop(cmd);
    let pgid = child
        .id()
        .and_then(|id| i32::try_from(id).ok())
        .map(Pid::from_raw);
    let kill_group = || {
        if let Some(pgid) = pgid {
            // ESRCH (already gone) is the usual answer; nothing else can be done anyway.
            let _ = killpg(pgid, Signal::SIGKILL);
        }
    };

    let mut kept: Vec<u8> = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut eof = false;
    let mut status = None;
    let mut stopped = None;
    let deadline = tokio::time::Instant::now() + timeout;
    while status.is_none() && stopped.is_none() {
        tokio::select! {
            read = receiver.read(&mut buf), if !eof => match read {
                Ok(0) | Err(_) => eof = true,
                Ok(n) => keep(&mut kept, &buf[..n]),
            },
            exited = child.wait() => status = Some(exited?),
            () = tokio::time::sleep_until(deadline) => stopped = Some(Ending::TimedOut),
            () = cancel.cancelled() => stopped = Some(Ending::Cancelled),
        }
    }
    // The shell is gone or must go: its background children go with it.
    kill_group();
    let drain_until = tokio::time::Instant::now() + DRAIN_AFTER_KILL;
    while !eof {
        tokio::select! {
            read = receiver.read(&mut buf) => match read {
                Ok(0) | Err(_) => eof = true,
                Ok(n) => keep(&mut kept, &buf[..n]),
            },
            () = tokio::time::sleep_until(drain_until) => break,
        }
    }
    let status = match status {
        Some(status) => status,
        None => child.wait().await?,
    };
    let ending = stopped.unwrap_or(match (status.code(), status.signal()) {
        (Some(code), _) => Ending::Exited(code),
        (None, Some(signal)) => Ending::Signaled(signal),
        (None, None) => Ending::Exited(-1),
    });
    Ok(CommandOutput {
        ending,
        output: String::from_utf8_lossy(&kept).into_owned(),
    })
}

/// Appends `chunk`, dropping the oldest bytes beyond [`KEEP_BYTES`].
fn keep(kept: &mut Vec<u8>, chunk: &[u8]) {
    kept.extend_from_slice(chunk);
    if kept.len() > KEEP_BYTES {
        let cut = kept.len() - KEEP_BYTES;
        kept.drain(..cut);
    }
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
        run(command, dir.path(), timeout, &CancellationToken::new())
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
        let out = run("sleep 30", dir.path(), Duration::from_secs(60), &cancel)
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

    #[test]
    fn keep_bounds_memory_to_the_tail() {
        let mut kept = Vec::new();
        keep(&mut kept, &vec![b'a'; KEEP_BYTES]);
        keep(&mut kept, b"end");
        assert_eq!(kept.len(), KEEP_BYTES);
        assert!(kept.ends_with(b"end"));
    }
}
