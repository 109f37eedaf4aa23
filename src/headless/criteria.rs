//! Checking a recipe's success criteria against one finished model run.
//!
//! Every criterion is checked, in recipe order, with a detail text that says why it passed or
//! failed (the measured value against the limit, the paths that matched, or a command's exit
//! status and last lines of output), so a report can be read without re-running anything.
//!
//! `run:` commands run in the model's own workspace after the model stopped and after its
//! change set was taken, so a criterion that reads a file sees that model's version, and what
//! the command itself writes (build outputs) never counts as the model's change.

use std::path::Path;

use globset::GlobBuilder;
use tokio_util::sync::CancellationToken;

use crate::check;
use crate::model::{RunStats, RunStop};
use crate::recipe::Criterion;

use super::report::{ChangeSetReport, CriterionResult};
use crate::exec::Sandbox;

/// What is known about a finished run, for the checks.
#[derive(Debug, Clone, Copy)]
pub struct Facts<'a> {
    /// Why the model's run ended (`None`: it never started, e.g. the setup failed).
    pub stop: Option<RunStop>,
    /// The run's error, if any (provider, setup, timeout...).
    pub error: Option<&'a str>,
    /// The model's last visible text.
    pub final_text: &'a str,
    /// The run's counters.
    pub stats: &'a RunStats,
    /// The change set.
    pub changes: &'a ChangeSetReport,
    /// The model's workspace root and the sandbox its commands run in (`None` when there is
    /// no workspace to run commands in).
    pub workspace: Option<(&'a Path, &'a Sandbox)>,
    /// Why no command can run in this run at all (the sandbox cannot start), when known up
    /// front: a `run:` criterion is then an error of the run, even without a workspace (the
    /// setup command, refused the same way, is why there is none).
    pub commands_unavailable: Option<&'a str>,
}

/// How one criterion came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Passed,
    Failed,
    /// It could not be checked (the sandbox could not start, the command was refused or could
    /// not be spawned): a fault of the run, not of the model.
    Error,
}

impl From<bool> for Outcome {
    fn from(passed: bool) -> Self {
        if passed {
            Outcome::Passed
        } else {
            Outcome::Failed
        }
    }
}

/// The checks were stopped by cancellation (Ctrl+C): the run counts as not finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cancelled;

/// Checks every criterion, in order. Stops early only when `cancel` fires.
pub async fn check_all(
    criteria: &[Criterion],
    facts: &Facts<'_>,
    cancel: &CancellationToken,
) -> Result<Vec<CriterionResult>, Cancelled> {
    let mut out = Vec::with_capacity(criteria.len());
    for criterion in criteria {
        let (outcome, detail) = check(criterion, facts, cancel).await?;
        out.push(CriterionResult {
            criterion: criterion.to_string(),
            kind: criterion.name().to_string(),
            passed: outcome == Outcome::Passed,
            error: outcome == Outcome::Error,
            detail,
        });
    }
    Ok(out)
}

async fn check(
    criterion: &Criterion,
    facts: &Facts<'_>,
    cancel: &CancellationToken,
) -> Result<(Outcome, String), Cancelled> {
    if let Criterion::Run { command, timeout } = criterion {
        return run(command, *timeout, facts, cancel).await;
    }
    let (passed, detail) = check_static(criterion, facts);
    Ok((passed.into(), detail))
}

/// Every criterion that needs no process.
fn check_static(criterion: &Criterion, facts: &Facts<'_>) -> (bool, String) {
    let stats = facts.stats;
    let changes = facts.changes;
    match criterion {
        Criterion::NoErrors => no_errors(facts),
        Criterion::HasWrites => (
            changes.files_changed > 0,
            format!("{} changed", plural(changes.files_changed, "file")),
        ),
        Criterion::FilesWritten(n) => (
            changes.files_changed >= *n,
            format!(
                "{} changed, at least {n} needed",
                plural(changes.files_changed, "file")
            ),
        ),
        Criterion::Contains(text) => {
            if facts.final_text.contains(text.as_str()) {
                (true, format!("the final answer contains `{text}`"))
            } else {
                (false, format!("the final answer does not contain `{text}`"))
            }
        }
        Criterion::ToolUsed(name) => {
            let n = stats.tools.get(name).copied().unwrap_or(0);
            (
                n > 0,
                format!("{name} called {}", plural(n as usize, "time")),
            )
        }
        Criterion::MaxCost(limit) => match stats.cost {
            Some(cost) => (
                cost <= *limit,
                format!("cost ${cost:.4}, limit ${limit:.4}"),
            ),
            None => (
                false,
                format!(
                    "cost unknown (no price for this model), limit ${limit:.4}; add the price to the config's [prices] to check it"
                ),
            ),
        },
        Criterion::MaxLatency(limit) => {
            let limit_ms = limit.as_millis();
            (
                u128::from(stats.elapsed_ms) <= limit_ms,
                format!("took {} ms, limit {limit_ms} ms", stats.elapsed_ms),
            )
        }
        Criterion::MaxToolCalls(limit) => (
            stats.tool_calls <= *limit,
            format!(
                "{} made, limit {limit}",
                plural(stats.tool_calls as usize, "tool call")
            ),
        ),
        Criterion::MaxSteps(limit) => (
            stats.steps <= *limit,
            format!(
                "{} made, limit {limit}",
                plural(stats.steps as usize, "step")
            ),
        ),
        Criterion::Protected(glob) => protected(glob, changes),
        Criterion::DiffMaxLines(limit) => {
            let lines = changes.added + changes.removed;
            (
                lines <= *limit,
                format!(
                    "{} touched (+{} -{}), limit {limit}",
                    plural(lines, "line"),
                    changes.added,
                    changes.removed
                ),
            )
        }
        // Handled by `check`; kept total so a new criterion cannot be forgotten silently.
        Criterion::Run { .. } => (
            false,
            "internal: run criteria are checked with a process".to_string(),
        ),
    }
}

/// Passes only when the model finished on its own: a timeout, a limit reached, a provider
/// error or a workspace that could not be prepared all fail it.
fn no_errors(facts: &Facts<'_>) -> (bool, String) {
    match (facts.stop, facts.error) {
        (Some(RunStop::Completed), None) => (true, "the run completed without error".to_string()),
        (Some(stop), Some(error)) => (false, format!("the run ended: {}: {error}", stop.label())),
        (Some(stop), None) => (false, format!("the run ended: {}", stop.label())),
        (None, Some(error)) => (false, format!("the run did not start: {error}")),
        (None, None) => (false, "the run did not start".to_string()),
    }
}

/// Fails when a changed path matches `glob` (`*` stays within one folder, `**` crosses them).
fn protected(glob: &str, changes: &ChangeSetReport) -> (bool, String) {
    let matcher = match GlobBuilder::new(glob).literal_separator(true).build() {
        Ok(glob) => glob.compile_matcher(),
        Err(err) => {
            return (
                false,
                format!(
                    "`{glob}` is not a valid glob ({}); fix the recipe",
                    err.kind()
                ),
            );
        }
    };
    let hits: Vec<&str> = changes
        .files
        .iter()
        .map(|f| f.path.as_str())
        .filter(|p| matcher.is_match(p))
        .collect();
    if hits.is_empty() {
        (true, format!("no changed path matches `{glob}`"))
    } else {
        (
            false,
            format!("changed paths matching `{glob}`: {}", hits.join(", ")),
        )
    }
}

/// A `run:` criterion, judged by the one evaluator ([`crate::check`]) the review's check uses,
/// so its detail is worded as the review words the same command. A command that could not run
/// at all (refused by the sandbox, which could not start; a spawn error) is an
/// [`Outcome::Error`]: the model did nothing wrong, and counting it as a failure would rank
/// models by the machine's state.
async fn run(
    command: &str,
    timeout: std::time::Duration,
    facts: &Facts<'_>,
    cancel: &CancellationToken,
) -> Result<(Outcome, String), Cancelled> {
    let Some((dir, sandbox)) = facts.workspace else {
        if let Some(why) = facts.commands_unavailable {
            return Ok((Outcome::Error, check::Verdict::not_checked(why).detail()));
        }
        return Ok((
            Outcome::Failed,
            "not run: the model has no workspace (it could not be prepared)".to_string(),
        ));
    };
    let verdict = check::evaluate(command, dir, sandbox, timeout, cancel).await;
    let outcome = match verdict.outcome {
        check::Outcome::Passed => Outcome::Passed,
        check::Outcome::Failed => Outcome::Failed,
        check::Outcome::NotChecked => Outcome::Error,
        check::Outcome::Cancelled => return Err(Cancelled),
    };
    Ok((outcome, verdict.detail()))
}

fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::headless::report::FileReport;

    fn changes(paths: &[&str], added: usize, removed: usize) -> ChangeSetReport {
        ChangeSetReport {
            files_changed: paths.len(),
            added,
            removed,
            files: paths
                .iter()
                .map(|p| FileReport {
                    path: p.to_string(),
                    kind: "modified".into(),
                    added: 0,
                    removed: 0,
                    binary: false,
                    tools: vec![],
                })
                .collect(),
            diff: String::new(),
            diff_file: String::new(),
            notes: Vec::new(),
            build_output: Vec::new(),
        }
    }

    fn facts<'a>(stats: &'a RunStats, changes: &'a ChangeSetReport) -> Facts<'a> {
        Facts {
            stop: Some(RunStop::Completed),
            error: None,
            final_text: "All tests pass.",
            stats,
            changes,
            workspace: None,
            commands_unavailable: None,
        }
    }

    fn one(c: Criterion, f: &Facts<'_>) -> CriterionResult {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(check_all(&[c], f, &CancellationToken::new()))
            .unwrap()
            .remove(0)
    }

    #[test]
    fn static_criteria_pass_and_fail_with_details() {
        let mut stats = RunStats {
            steps: 3,
            tool_calls: 4,
            cost: Some(0.25),
            elapsed_ms: 1500,
            ..RunStats::default()
        };
        stats.tools.insert("bash".into(), 2);
        let ch = changes(&["src/a.rs", "tests/t.rs"], 5, 2);
        let f = facts(&stats, &ch);
        assert!(one(Criterion::NoErrors, &f).passed);
        assert!(one(Criterion::HasWrites, &f).passed);
        assert!(!one(Criterion::FilesWritten(3), &f).passed);
        assert!(one(Criterion::Contains("tests pass".into()), &f).passed);
        assert!(!one(Criterion::Contains("TESTS".into()), &f).passed);
        assert!(one(Criterion::ToolUsed("bash".into()), &f).passed);
        assert!(!one(Criterion::ToolUsed("read_file".into()), &f).passed);
        assert!(!one(Criterion::MaxCost(0.1), &f).passed);
        assert!(one(Criterion::MaxLatency(Duration::from_secs(2)), &f).passed);
        assert!(!one(Criterion::MaxToolCalls(3), &f).passed);
        assert!(one(Criterion::MaxSteps(3), &f).passed);
        assert!(one(Criterion::DiffMaxLines(7), &f).passed);
        let r = one(Criterion::DiffMaxLines(6), &f);
        assert_eq!(r.detail, "7 lines touched (+5 -2), limit 6");
        assert_eq!(r.criterion, "diff_max_lines: 6");
        assert_eq!(r.kind, "diff_max_lines");
    }

    #[test]
    fn protected_globs_match_changed_paths() {
        let stats = RunStats::default();
        let ch = changes(&["src/a.rs", "tests/deep/t.rs"], 1, 1);
        let f = facts(&stats, &ch);
        let r = one(Criterion::Protected("tests/**".into()), &f);
        assert!(!r.passed);
        assert!(r.detail.contains("tests/deep/t.rs"), "{}", r.detail);
        assert!(
            one(Criterion::Protected("*.rs".into()), &f).passed,
            "* stays in a folder"
        );
        assert!(!one(Criterion::Protected("**/*.rs".into()), &f).passed);
        assert!(one(Criterion::Protected("Cargo.toml".into()), &f).passed);
    }

    #[test]
    fn errors_and_unknown_costs_fail() {
        let stats = RunStats::default();
        let ch = changes(&[], 0, 0);
        let mut f = facts(&stats, &ch);
        assert!(!one(Criterion::MaxCost(1.0), &f).passed);
        f.stop = Some(RunStop::Timeout);
        f.error = Some("ran out of time");
        let r = one(Criterion::NoErrors, &f);
        assert!(!r.passed);
        assert!(r.detail.contains("timeout"), "{}", r.detail);
        f.stop = None;
        f.error = Some("setup failed");
        assert!(!one(Criterion::NoErrors, &f).passed);
        let r = one(
            Criterion::Run {
                command: "true".into(),
                timeout: Duration::from_secs(5),
            },
            &f,
        );
        assert!(!r.passed);
        assert!(r.detail.contains("no workspace"), "{}", r.detail);
    }

    #[test]
    fn run_criteria_see_the_workspace_and_keep_the_output_tail() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("answer.txt"), "42\n").unwrap();
        let stats = RunStats::default();
        let ch = changes(&[], 0, 0);
        let mut f = facts(&stats, &ch);
        let sandbox = Sandbox::for_dir(dir.path());
        f.workspace = Some((dir.path(), &sandbox));
        let run = |command: &str| Criterion::Run {
            command: command.into(),
            timeout: Duration::from_secs(60),
        };
        let r = one(run("grep -q 42 answer.txt"), &f);
        assert!(r.passed, "{}", r.detail);
        assert_eq!(r.detail, "passed (exit 0); no output");
        let r = one(run("seq 1 80; exit 4"), &f);
        assert!(!r.passed);
        assert!(
            r.detail
                .starts_with("failed (exit 4); last 50 lines of output:\n"),
            "{}",
            r.detail
        );
        assert!(r.detail.ends_with("\n80"), "{}", r.detail);
        assert!(r.detail.contains("\n31\n"), "{}", r.detail);
        assert!(!r.detail.contains("\n30\n"), "{}", r.detail);
    }

    #[test]
    fn a_criterion_that_could_not_run_is_an_error_not_a_failure() {
        let dir = tempfile::tempdir().unwrap();
        let stats = RunStats::default();
        let ch = changes(&[], 0, 0);
        let mut f = facts(&stats, &ch);
        let sandbox = Sandbox::refusing("the command sandbox cannot start: no bwrap");
        f.workspace = Some((dir.path(), &sandbox));
        let run = Criterion::Run {
            command: "true".into(),
            timeout: Duration::from_secs(5),
        };
        let r = one(run.clone(), &f);
        assert!(!r.passed && r.error, "{r:?}");
        assert!(r.detail.starts_with("not checked: "), "{}", r.detail);
        // No workspace because the sandbox could not start: an error too.
        f.workspace = None;
        f.commands_unavailable = Some("the command sandbox cannot start");
        let r = one(run.clone(), &f);
        assert!(!r.passed && r.error, "{r:?}");
        // No workspace for another reason: the model's run failed.
        f.commands_unavailable = None;
        let r = one(run, &f);
        assert!(!r.passed && !r.error, "{r:?}");
    }
}
