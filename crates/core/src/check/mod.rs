//! The one evaluator of a check command: the review's check (`/config check cargo test`, the
//! config's `[check] command`, a recipe's `Review: check`) and a recipe's `run:` success
//! criterion are the same thing, a shell command run in a model's workspace whose exit status
//! says whether that model's change holds. They go through this module only, so they keep the
//! same part of the output (one size limit, one tail rule) and say how they ended in the same
//! words: the same command gives the same verdict text in the review, in the session's `check`
//! record and in a report's criterion detail.
//!
//! The command runs through the one command runner ([`crate::exec`]): `bash -c` in the
//! workspace's sandbox, stderr merged into stdout in order, a time limit and cancellation that
//! end every process the command started.

use std::path::Path;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use crate::exec::{CommandRole, CommandSpec, Ending, ExecError, Sandbox, Tail};

/// Lines of output a verdict keeps (the last ones): enough for a compiler error or a failing
/// test's assertion, few enough for a transcript and a report.
pub const TAIL_LINES: usize = 50;

/// Bytes of output kept while the command runs (the end of it): a command that prints
/// gigabytes must not take the memory of versus with it, and the last [`TAIL_LINES`] lines are
/// cut from these.
pub const KEEP_BYTES: usize = 64 * 1024;

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Exit code 0.
    Passed,
    /// Another exit code, a signal, or the time limit: the model's change does not hold.
    Failed,
    /// The command could not run at all (the sandbox cannot start, bash could not be spawned):
    /// a fault of the machine, not of the model, so a report must not rank models by it.
    NotChecked,
    /// Stopped by cancellation (Esc, Ctrl+C, the next turn): it says nothing either way.
    Cancelled,
}

/// A check's result, in the words every front end shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// How it came out.
    pub outcome: Outcome,
    /// How it ended in words: `passed (exit 0)`, `failed (exit 3)`, `killed by signal 9`,
    /// `timed out after 1m and was stopped`, `cancelled`, `not checked: WHY`.
    pub ending: String,
    /// The last [`TAIL_LINES`] lines of its merged output (trailing empty lines dropped), then
    /// a `versus: ...` line when the failure looks like a missing network in a sandbox without
    /// one (it names the switch that allows it).
    pub tail: Vec<String>,
    /// Wall time.
    pub elapsed_ms: u64,
}

impl Verdict {
    /// Exit code 0.
    pub fn passed(&self) -> bool {
        self.outcome == Outcome::Passed
    }

    /// A check that could not run for a reason known before starting it (no workspace, the
    /// sandbox known to be unavailable).
    pub fn not_checked(why: &str) -> Self {
        Self {
            outcome: Outcome::NotChecked,
            ending: format!("not checked: {why}"),
            tail: Vec::new(),
            elapsed_ms: 0,
        }
    }

    /// The verdict as one text (a report's criterion detail): how it ended, then its last
    /// lines, or `no output`.
    pub fn detail(&self) -> String {
        if self.outcome == Outcome::NotChecked {
            return self.ending.clone();
        }
        if self.tail.is_empty() {
            format!("{}; no output", self.ending)
        } else {
            format!(
                "{}; last {TAIL_LINES} lines of output:\n{}",
                self.ending,
                self.tail.join("\n")
            )
        }
    }
}

/// Runs `command` with `bash -c` in `dir` inside `sandbox` and judges it; never fails (a
/// command that cannot start is a verdict that says why).
pub async fn evaluate(
    command: &str,
    dir: &Path,
    sandbox: &Sandbox,
    timeout: Duration,
    cancel: &CancellationToken,
) -> Verdict {
    let started = Instant::now();
    let mut kept = Tail::new(KEEP_BYTES);
    let spec = CommandSpec {
        script: command,
        cwd: dir,
        sandbox,
        timeout,
        cancel,
    };
    let finished = crate::exec::run(spec, |chunk| kept.push(chunk)).await;
    let elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let (outcome, ending) = match finished {
        Err(err @ ExecError::Spawn(_)) => (
            Outcome::NotChecked,
            format!("not checked: {err}; is bash installed and on PATH?"),
        ),
        Err(refused) => (Outcome::NotChecked, format!("not checked: {refused}")),
        Ok(finished) => ending_of(finished.ending, timeout),
    };
    if outcome == Outcome::NotChecked {
        return Verdict {
            outcome,
            ending,
            tail: Vec::new(),
            elapsed_ms,
        };
    }
    let text = kept.text();
    let mut tail = last_lines(&text, TAIL_LINES);
    // A network failure in a sandbox without the network names the switch that allows it.
    if outcome == Outcome::Failed
        && sandbox.without_network()
        && let Some(hint) = crate::exec::network_hint(CommandRole::Check, &text)
    {
        tail.push(format!("versus: {hint}"));
    }
    Verdict {
        outcome,
        ending,
        tail,
        elapsed_ms,
    }
}

/// The one wording of how a check command ended.
fn ending_of(ending: Ending, timeout: Duration) -> (Outcome, String) {
    match ending {
        Ending::Exited(0) => (Outcome::Passed, "passed (exit 0)".to_string()),
        Ending::Exited(code) => (Outcome::Failed, format!("failed (exit {code})")),
        Ending::Signaled(signal) => (Outcome::Failed, format!("killed by signal {signal}")),
        Ending::TimedOut => (
            Outcome::Failed,
            format!("timed out after {} and was stopped", duration_text(timeout)),
        ),
        Ending::Cancelled => (Outcome::Cancelled, "cancelled".to_string()),
    }
}

/// The last `n` lines of `text` (trailing empty lines dropped; `\r\n` ends a line too).
pub fn last_lines(text: &str, n: usize) -> Vec<String> {
    let lines: Vec<&str> = text.trim_end_matches(['\n', '\r']).lines().collect();
    let from = lines.len().saturating_sub(n);
    if text.trim_end_matches(['\n', '\r']).is_empty() {
        return Vec::new();
    }
    lines[from..].iter().map(|l| l.to_string()).collect()
}

/// A time limit as recipes write it (`1m`, `10m`, `1m30s`, `500ms`).
pub fn duration_text(d: Duration) -> String {
    let mut ms = d.as_millis();
    if ms == 0 {
        return "0s".to_string();
    }
    let mut out = String::new();
    for (unit, size) in [("h", 3_600_000), ("m", 60_000), ("s", 1000), ("ms", 1)] {
        if ms >= size {
            out.push_str(&format!("{}{unit}", ms / size));
            ms %= size;
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    async fn go(command: &str, timeout: Duration) -> Verdict {
        let dir = tempfile::tempdir().unwrap();
        evaluate(
            command,
            dir.path(),
            &Sandbox::for_dir(dir.path()),
            timeout,
            &CancellationToken::new(),
        )
        .await
    }

    #[tokio::test]
    async fn merges_output_in_order_and_words_the_exit_code() {
        let v = go(
            "echo one; echo two >&2; echo three; exit 3",
            Duration::from_secs(10),
        )
        .await;
        assert_eq!(v.outcome, Outcome::Failed);
        assert_eq!(v.ending, "failed (exit 3)");
        assert_eq!(v.tail, ["one", "two", "three"]);
        assert_eq!(
            v.detail(),
            "failed (exit 3); last 50 lines of output:\none\ntwo\nthree"
        );
        let ok = go("true", Duration::from_secs(10)).await;
        assert!(ok.passed());
        assert_eq!(ok.detail(), "passed (exit 0); no output");
    }

    #[tokio::test]
    async fn keeps_the_last_lines_only() {
        let v = go("seq 1 80; exit 4", Duration::from_secs(10)).await;
        assert_eq!(v.tail.len(), TAIL_LINES);
        assert_eq!(v.tail.first().unwrap(), "31");
        assert_eq!(v.tail.last().unwrap(), "80");
        let d = v.detail();
        assert!(d.ends_with("\n80") && d.contains("\n31\n") && !d.contains("\n30\n"));
    }

    #[tokio::test]
    async fn a_command_past_its_timeout_is_stopped_with_its_children() {
        let v = go(
            "echo started; sleep 30 & sleep 30",
            Duration::from_millis(200),
        )
        .await;
        assert_eq!(v.outcome, Outcome::Failed);
        assert_eq!(v.ending, "timed out after 200ms and was stopped");
        assert_eq!(v.tail, ["started"]);
    }

    #[tokio::test]
    async fn cancellation_stops_the_command_and_decides_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let cancel = CancellationToken::new();
        cancel.cancel();
        let v = evaluate(
            "sleep 30",
            dir.path(),
            &Sandbox::for_dir(dir.path()),
            Duration::from_secs(60),
            &cancel,
        )
        .await;
        assert_eq!(
            (v.outcome, v.ending.as_str()),
            (Outcome::Cancelled, "cancelled")
        );
    }

    #[tokio::test]
    async fn a_command_that_cannot_run_is_not_checked() {
        let dir = tempfile::tempdir().unwrap();
        let v = evaluate(
            "true",
            dir.path(),
            &Sandbox::refusing("the command sandbox cannot start: no bwrap"),
            Duration::from_secs(5),
            &CancellationToken::new(),
        )
        .await;
        assert_eq!(v.outcome, Outcome::NotChecked);
        assert!(v.ending.starts_with("not checked: "), "{v:?}");
        assert_eq!(
            v.detail(),
            v.ending,
            "no output line for a command that never ran"
        );
    }

    #[test]
    fn last_lines_and_durations() {
        assert_eq!(last_lines("a\nb\nc\n", 2), ["b", "c"]);
        assert_eq!(last_lines("a\r\nb\r\n\n", 5), ["a", "b"]);
        assert!(last_lines("", 5).is_empty());
        assert!(last_lines("\n\n", 5).is_empty());
        assert_eq!(duration_text(Duration::from_secs(600)), "10m");
        assert_eq!(duration_text(Duration::from_secs(90)), "1m30s");
        assert_eq!(duration_text(Duration::from_millis(500)), "500ms");
    }
}
