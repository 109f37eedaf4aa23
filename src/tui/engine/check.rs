//! The review check (`/config check cargo test`, or a recipe's `Review: check`): a shell command
//! run in a model's workspace when it finishes, so the table can say whether its change builds
//! and passes before the user picks anything.
//!
//! `bash -c` in its own process group with stderr folded into stdout (one pipe keeps the
//! order), a time limit, and cancellation: on either, the whole group is killed, so a test
//! server the command started does not outlive it. Only the end of the output is kept.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::AsyncReadExt;
use tokio::process::Command;
use tokio_util::sync::CancellationToken;

use super::super::action::CheckResult;

/// How long a check may run.
pub const CHECK_TIMEOUT: Duration = Duration::from_secs(10 * 60);
/// Lines of output kept for the transcript.
const TAIL_LINES: usize = 20;
/// Bytes of output kept while reading (the end of it).
const KEEP_BYTES: usize = 64 * 1024;

/// Runs `command` in `dir`; never fails (a command that cannot start is a failed check).
pub async fn run_check(
    command: &str,
    dir: &Path,
    timeout: Duration,
    cancel: &CancellationToken,
) -> CheckResult {
    let started = Instant::now();
    let script = format!("exec 2>&1\n{command}");
    let mut cmd = Command::new("bash");
    cmd.arg("-c")
        .arg(script)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) => {
            return CheckResult {
                passed: false,
                ending: format!("could not start bash: {e}"),
                elapsed_ms: 0,
                tail: Vec::new(),
            };
        }
    };
    let group = child
        .id()
        .and_then(|id| i32::try_from(id).ok())
        .map(Pid::from_raw);
    let mut out = child.stdout.take();
    let mut kept: Vec<u8> = Vec::new();
    let mut buf = vec![0u8; 16 * 1024];
    let deadline = tokio::time::Instant::now() + timeout;
    let mut stopped: Option<String> = None;
    let mut status = None;
    while status.is_none() && stopped.is_none() {
        tokio::select! {
            read = async {
                match out.as_mut() {
                    Some(o) => o.read(&mut buf).await,
                    None => std::future::pending().await,
                }
            } => match read {
                Ok(0) | Err(_) => out = None,
                Ok(n) => keep(&mut kept, &buf[..n]),
            },
            exited = child.wait() => status = Some(exited),
            () = tokio::time::sleep_until(deadline) => {
                stopped = Some(format!("timed out after {} s and was stopped", timeout.as_secs()));
            }
            () = cancel.cancelled() => stopped = Some("cancelled".to_string()),
        }
    }
    if let Some(pgid) = group {
        // The shell is gone or must go; its background children go with it (ESRCH is fine).
        let _ = killpg(pgid, Signal::SIGKILL);
    }
    if let Some(mut o) = out {
        let drain = async {
            while let Ok(n) = o.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                keep(&mut kept, &buf[..n]);
            }
        };
        let _ = tokio::time::timeout(Duration::from_secs(1), drain).await;
    }
    let status = match status {
        Some(s) => s.ok(),
        None => child.wait().await.ok(),
    };
    let (passed, ending) = match (stopped, status.and_then(|s| s.code())) {
        (Some(why), _) => (false, why),
        (None, Some(0)) => (true, "passed (exit 0)".to_string()),
        (None, Some(code)) => (false, format!("failed (exit {code})")),
        (None, None) => (false, "killed by a signal".to_string()),
    };
    CheckResult {
        passed,
        ending,
        elapsed_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        tail: tail(&kept),
    }
}

fn keep(kept: &mut Vec<u8>, chunk: &[u8]) {
    kept.extend_from_slice(chunk);
    if kept.len() > KEEP_BYTES {
        let cut = kept.len() - KEEP_BYTES;
        kept.drain(..cut);
    }
}

/// The last lines of the output (lossy UTF-8, trailing empty lines dropped).
fn tail(bytes: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.trim_end().lines().collect();
    let from = lines.len().saturating_sub(TAIL_LINES);
    lines[from..].iter().map(|l| l.to_string()).collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn passes_fails_and_keeps_the_tail_of_both_streams() {
        let dir = tempfile::tempdir().unwrap();
        let never = CancellationToken::new();
        let ok = run_check("echo out; echo err >&2", dir.path(), CHECK_TIMEOUT, &never).await;
        assert!(ok.passed, "{ok:?}");
        assert_eq!(ok.tail, ["out", "err"]);
        let failed = run_check(
            "for i in $(seq 1 50); do echo line $i; done; exit 3",
            dir.path(),
            CHECK_TIMEOUT,
            &never,
        )
        .await;
        assert!(!failed.passed);
        assert_eq!(failed.ending, "failed (exit 3)");
        assert_eq!(failed.tail.len(), TAIL_LINES);
        assert_eq!(failed.tail.last().unwrap(), "line 50");
    }

    fn alive(pid: &str) -> bool {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Ok(stat) => !stat.contains(") Z "),
            Err(_) => false,
        }
    }

    #[tokio::test]
    async fn a_cancelled_or_slow_check_is_stopped_with_its_children() {
        let dir = tempfile::tempdir().unwrap();
        let cancel = CancellationToken::new();
        let token = cancel.clone();
        let canceller = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            token.cancel();
        });
        let result = run_check(
            "sleep 30 & echo $!; sleep 30",
            dir.path(),
            CHECK_TIMEOUT,
            &cancel,
        )
        .await;
        canceller.await.unwrap();
        assert!(!result.passed);
        assert_eq!(result.ending, "cancelled");
        let child = result.tail[0].clone();
        let mut waited = 0;
        while alive(&child) && waited < 50 {
            std::thread::sleep(Duration::from_millis(20));
            waited += 1;
        }
        assert!(
            !alive(&child),
            "the background child was killed with the group"
        );
        let slow = run_check(
            "sleep 30",
            dir.path(),
            Duration::from_millis(200),
            &CancellationToken::new(),
        )
        .await;
        assert!(slow.ending.starts_with("timed out"), "{slow:?}");
    }
}
