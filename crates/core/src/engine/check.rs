//! The review check (`/config check cargo test`, or a recipe's `Review: check`): a shell command
//! run in a model's workspace when it finishes, so the table can say whether its change builds
//! and passes before the user picks anything.
//!
//! It is judged by the one evaluator ([`crate::check`]) a recipe's `run:` criterion uses: the
//! same command gives the same verdict text here and in a report.

use std::path::Path;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::exec::Sandbox;
use crate::session::CheckResult;

/// How long a check may run.
pub const CHECK_TIMEOUT: Duration = Duration::from_secs(10 * 60);

/// Runs `command` in `dir` inside `sandbox`; never fails (a command that cannot start is a
/// failed check that says why).
pub async fn run_check(
    command: &str,
    dir: &Path,
    sandbox: &Sandbox,
    timeout: Duration,
    cancel: &CancellationToken,
) -> CheckResult {
    let verdict = crate::check::evaluate(command, dir, sandbox, timeout, cancel).await;
    CheckResult {
        command: command.to_string(),
        passed: verdict.passed(),
        ending: verdict.ending,
        elapsed_ms: verdict.elapsed_ms,
        tail: verdict.tail,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::check::TAIL_LINES;

    #[tokio::test]
    async fn passes_fails_and_keeps_the_tail_of_both_streams() {
        let dir = tempfile::tempdir().unwrap();
        let never = CancellationToken::new();
        let sb = Sandbox::for_dir(dir.path());
        let ok = run_check(
            "echo out; echo err >&2",
            dir.path(),
            &sb,
            CHECK_TIMEOUT,
            &never,
        )
        .await;
        assert!(ok.passed, "{ok:?}");
        assert_eq!(ok.tail, ["out", "err"]);
        let failed = run_check(
            "for i in $(seq 1 50); do echo line $i; done; exit 3",
            dir.path(),
            &sb,
            CHECK_TIMEOUT,
            &never,
        )
        .await;
        assert!(!failed.passed);
        assert_eq!(failed.ending, "failed (exit 3)");
        assert_eq!(failed.tail.len(), TAIL_LINES);
        assert_eq!(failed.tail.last().unwrap(), "line 50");
    }

    #[tokio::test]
    async fn a_check_that_failed_for_want_of_the_network_names_the_switch() {
        let dir = tempfile::tempdir().unwrap();
        let sb = Sandbox::for_dir(dir.path());
        let never = CancellationToken::new();
        let failed = run_check(
            "exec 3<>/dev/tcp/versus-test.invalid/80",
            dir.path(),
            &sb,
            CHECK_TIMEOUT,
            &never,
        )
        .await;
        assert!(!failed.passed);
        let last = failed.tail.last().unwrap();
        assert!(
            last.starts_with("versus: this looks like a network failure")
                && last.contains("network = true"),
            "{failed:?}"
        );
        let other = run_check("exit 3", dir.path(), &sb, CHECK_TIMEOUT, &never).await;
        assert!(other.tail.is_empty(), "{other:?}");
    }

    /// Whether a live process runs `sleep <marker>` (zombies do not count).
    fn alive(marker: &str) -> bool {
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return false;
        };
        entries.flatten().any(|e| {
            let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
            let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
            cmd == format!("sleep\0{marker}\0").into_bytes() && !stat.contains(") Z ")
        })
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
        let sb = Sandbox::for_dir(dir.path());
        let marker = format!("{}.{}", 30, std::process::id());
        let result = run_check(
            &format!("setsid sleep {marker} & sleep 30"),
            dir.path(),
            &sb,
            CHECK_TIMEOUT,
            &cancel,
        )
        .await;
        canceller.await.unwrap();
        assert!(!result.passed);
        assert_eq!(result.ending, "cancelled");
        let mut waited = 0;
        while alive(&marker) && waited < 50 {
            std::thread::sleep(Duration::from_millis(20));
            waited += 1;
        }
        assert!(
            !alive(&marker),
            "the background child (setsid) was killed with the sandbox"
        );
        let slow = run_check(
            "sleep 30",
            dir.path(),
            &sb,
            Duration::from_millis(200),
            &CancellationToken::new(),
        )
        .await;
        assert!(slow.ending.starts_with("timed out"), "{slow:?}");
    }
}
