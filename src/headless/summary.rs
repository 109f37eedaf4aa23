//! `summary.md`: the report for people, as Markdown tables (one overall, one per task) plus
//! the reason for every failed criterion.
//!
//! It is rendered from the [`Report`] alone, so it can never say something report.json does not.
//!
//! The report carries text from the recipe (names, prompts, criteria), the models and the
//! commands criteria ran: every such value goes in as one escaped line ([`cell`],
//! [`crate::sanitize`]), so neither a terminal showing the file (or `versus run` printing it)
//! nor the Markdown around it can be steered by it; the whole document is escaped once more
//! at the end as a backstop.
#![deny(clippy::disallowed_methods, clippy::print_stderr)]

use std::fmt::Write;

use super::report::{ModelRun, Report, RunStatus, Tokens};
use crate::sanitize::{self, Layout};

/// The Markdown summary of `report`.
pub fn render(report: &Report) -> String {
    let out = render_raw(report);
    sanitize::escape(&out, Layout::Block).into_owned()
}

fn render_raw(report: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# {}\n", text(&report.recipe.name));
    let env = &report.environment;
    if let Some(warning) = env.sandbox.as_ref().and_then(|s| s.warning.as_ref()) {
        let _ = writeln!(out, "> **WARNING: {}**\n", text(warning));
    }
    let _ = writeln!(
        out,
        "Run `{}` of `{}` with versus {}, started {}, project commit {}.\n",
        text(&report.run_id),
        text(&report.recipe.file),
        text(&env.versus_version),
        text(&env.started_at),
        text(env.project_commit.as_deref().unwrap_or("none")),
    );
    let verdict = if !report.complete {
        format!(
            "**Incomplete**: the run was interrupted; finish it with `versus run {} --resume`.",
            text(&report.recipe.file)
        )
    } else if report.broken {
        "**Broken**: some criteria could not be checked (see \"Criteria not checked\" below); \
         these results say nothing about the models and are not counted by `versus stats`."
            .to_string()
    } else if report.passed {
        "**Every criterion passed.**".to_string()
    } else {
        "**Some criteria failed.**".to_string()
    };
    let _ = writeln!(out, "{verdict}\n");

    let _ = writeln!(out, "## Overall\n");
    let _ = writeln!(
        out,
        "| Model | Tasks passed | Criteria passed | Cost | Mean latency | Tokens in / out | Steps |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|---|");
    for s in &report.summary {
        let _ = writeln!(
            out,
            "| {} | {}/{} | {}/{} | {} | {} | {} / {} | {} |",
            cell(&s.model),
            s.tasks_passed,
            s.tasks_total,
            s.criteria_passed,
            s.criteria_total,
            cost(s.cost_usd),
            seconds(s.mean_latency_ms),
            known(&s.tokens, |t| t
                .input
                .saturating_add(t.cache_read)
                .saturating_add(t.cache_write)),
            known(&s.tokens, |t| t.output),
            s.steps,
        );
    }
    if !report.skipped_models.is_empty() {
        let _ = writeln!(out, "\nSkipped models:\n");
        for s in &report.skipped_models {
            let _ = writeln!(out, "- {}: {}", text(&s.model), one_line(&s.reason));
        }
    }

    for task in &report.tasks {
        let _ = writeln!(out, "\n## Task: {}\n", text(&task.name));
        let _ = writeln!(out, "> {}\n", one_line(&task.prompt));
        let _ = writeln!(
            out,
            "| Model | Status | Criteria | Stop | Steps | Files changed | Cost | Latency |"
        );
        let _ = writeln!(out, "|---|---|---|---|---|---|---|---|");
        for run in &task.runs {
            let _ = writeln!(
                out,
                "| {} | {} | {}/{} | {} | {} | {} (+{} -{}) | {} | {} |",
                cell(&run.model),
                run.status.label(),
                run.criteria_passed,
                run.criteria_total,
                run.stop_reason.map_or("-", |s| s.label()),
                run.steps,
                run.change_set.files_changed,
                run.change_set.added,
                run.change_set.removed,
                cost(run.cost_usd),
                seconds(run.latency_ms),
            );
        }
        failures(&mut out, &task.runs);
        failed_calls(&mut out, &task.runs);
        errors(&mut out, &task.runs);
        scan_notes(&mut out, &task.runs);
        build_output(&mut out, &task.runs);
    }
    out
}

/// What the change scans saw in the task's workspaces but did not propose (too large, too
/// deep, unreadable): a model's report must not look complete when part of its work was left
/// out.
fn scan_notes(out: &mut String, runs: &[ModelRun]) {
    let notes: Vec<(&ModelRun, &String)> = runs
        .iter()
        .flat_map(|r| r.change_set.notes.iter().map(move |n| (r, n)))
        .collect();
    if notes.is_empty() {
        return;
    }
    let _ = writeln!(out, "\nNot proposed from the workspaces:\n");
    for (run, note) in notes {
        let _ = writeln!(out, "- {}: {}", text(&run.model), text(note));
    }
}

/// Build output in the task's change sets that is there only because the project does not
/// ignore its folder, with the fix (see [`crate::workspace::build_output_notes`]).
fn build_output(out: &mut String, runs: &[ModelRun]) {
    let notes: Vec<(&ModelRun, &String)> = runs
        .iter()
        .flat_map(|r| r.change_set.build_output.iter().map(move |n| (r, n)))
        .collect();
    if notes.is_empty() {
        return;
    }
    let _ = writeln!(out, "\nBuild output proposed:\n");
    for (run, note) in notes {
        let _ = writeln!(out, "- {}: {}", text(&run.model), text(note));
    }
}

/// The criteria of the task's runs that could not be checked, each with the first line of
/// its detail (why: the sandbox could not start, the command could not be spawned).
fn errors(out: &mut String, runs: &[ModelRun]) {
    let errors: Vec<(&ModelRun, &super::report::CriterionResult)> = runs
        .iter()
        .flat_map(|r| r.criteria.iter().filter(|c| c.error).map(move |c| (r, c)))
        .collect();
    if errors.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\nCriteria not checked (errors of the run, not of the model):\n"
    );
    for (run, c) in errors {
        let _ = writeln!(
            out,
            "- {}: `{}`: {}",
            run.model,
            c.criterion,
            first_and_last_line(&c.detail)
        );
    }
}

/// The failed criteria of the task's runs, each with the first line of its detail.
fn failures(out: &mut String, runs: &[ModelRun]) {
    let failed: Vec<(&ModelRun, &super::report::CriterionResult)> = runs
        .iter()
        .filter(|r| r.status == RunStatus::Failed)
        .flat_map(|r| {
            r.criteria
                .iter()
                .filter(|c| !c.passed && !c.error)
                .map(move |c| (r, c))
        })
        .collect();
    if failed.is_empty() {
        return;
    }
    let _ = writeln!(out, "\nFailed criteria:\n");
    for (run, c) in failed {
        let _ = writeln!(
            out,
            "- {}: `{}`: {}",
            text(&run.model),
            text(&c.criterion),
            first_and_last_line(&c.detail)
        );
    }
}

/// Failed tool calls listed per run before the rest are counted.
const FAILED_CALLS_SHOWN: usize = 10;

/// The tool calls of the task's runs that did not succeed (a command's exit code, a refusal,
/// a timeout...), each with the last line of what it returned: whether a model's tests passed
/// is read here, not guessed from a check mark.
fn failed_calls(out: &mut String, runs: &[ModelRun]) {
    let failed: Vec<(&ModelRun, Vec<&super::report::ToolCallReport>)> = runs
        .iter()
        .map(|r| {
            let calls = r
                .tool_results
                .iter()
                .filter(|c| !c.outcome.is_ok())
                .collect();
            (r, calls)
        })
        .filter(|(_, calls): &(_, Vec<_>)| !calls.is_empty())
        .collect();
    if failed.is_empty() {
        return;
    }
    let _ = writeln!(out, "\nTool calls that did not succeed:\n");
    for (run, calls) in failed {
        for call in calls.iter().take(FAILED_CALLS_SHOWN) {
            let (tail, _) = crate::model::output_tail(&call.output, 1);
            let _ = writeln!(
                out,
                "- {}: {} `{} {}`: {}",
                text(&run.model),
                call.outcome.mark(),
                cell(&call.name),
                cut(&call.target).replace('`', "'"),
                tail.first()
                    .map_or_else(|| "(no output)".to_string(), |l| cut(l.trim()))
            );
        }
        if calls.len() > FAILED_CALLS_SHOWN {
            let _ = writeln!(
                out,
                "- {}: and {} more (see report.json)",
                text(&run.model),
                calls.len() - FAILED_CALLS_SHOWN
            );
        }
    }
}

/// The first line of a detail, and its last non-empty line when there are more (for a
/// command, the status and the line that usually says what went wrong).
fn first_and_last_line(text: &str) -> String {
    let first = text.lines().next().unwrap_or_default();
    match text.lines().skip(1).filter(|l| !l.trim().is_empty()).last() {
        Some(last) => format!("{} {}", cut(first), cut(last.trim())),
        None => cut(first),
    }
}

/// A token count, or `unknown` when some request's usage was not reported (the count would
/// only be a lower bound).
fn known(tokens: &Tokens, count: impl Fn(&Tokens) -> u64) -> String {
    if tokens.is_known() {
        count(tokens).to_string()
    } else {
        "unknown".to_string()
    }
}

fn cost(usd: Option<f64>) -> String {
    usd.map_or_else(|| "unknown".to_string(), |c| format!("${c:.4}"))
}

fn seconds(ms: u64) -> String {
    format!("{:.1} s", ms as f64 / 1000.0)
}

/// One value as one line: every control (newlines too), bidi and invisible character
/// escaped ([`sanitize::line`]).
fn text(value: &str) -> String {
    sanitize::line(value).to_string()
}

/// Text safe inside a table cell: one escaped line, `|` escaped.
fn cell(value: &str) -> String {
    text(value).replace('|', "\\|")
}

/// The first line, cut to 120 characters (`…` when something was left out).
fn one_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    let mut out = cut(line);
    if line.len() < text.trim_end().len() && !out.ends_with('…') {
        out.push('…');
    }
    out
}

/// One line cut to 120 characters, safe in a table cell.
fn cut(line: &str) -> String {
    let mut out: String = line.chars().take(120).collect();
    if out.len() < line.len() {
        out.push('…');
    }
    cell(&out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::headless::report::{
        ChangeSetReport, CriterionResult, Environment, ModelSummary, RecipeInfo, TaskReport, Tokens,
    };

    fn run(model: &str, status: RunStatus, criteria: Vec<CriterionResult>) -> ModelRun {
        ModelRun {
            model: model.into(),
            task: "fix".into(),
            status,
            stop_reason: Some(crate::model::RunStop::Completed),
            error: None,
            steps: 4,
            tokens: Tokens::default(),
            cost_usd: Some(0.5),
            latency_ms: 1500,
            time_to_first_token_ms: None,
            workspace_ms: 0,
            tool_calls: 0,
            tool_calls_by_name: Default::default(),
            tool_errors: 0,
            edit_failures: 0,
            tool_results: Vec::new(),
            retries: 0,
            change_set: ChangeSetReport::default(),
            criteria_passed: criteria.iter().filter(|c| c.passed).count(),
            criteria_total: criteria.len(),
            criteria,
            final_text: String::new(),
            events_file: String::new(),
            workspace: None,
        }
    }

    #[test]
    fn tables_list_every_model_and_the_failed_criteria() {
        let bad = CriterionResult {
            criterion: "run: make test".into(),
            kind: "run".into(),
            passed: false,
            error: false,
            detail: "failed (exit 2); last 50 lines of output:\nboom".into(),
        };
        let good = CriterionResult {
            passed: true,
            ..bad.clone()
        };
        let mut report = Report {
            schema_version: 1,
            run_id: "demo-1".into(),
            broken: false,
            complete: true,
            passed: false,
            session: None,
            recipe: RecipeInfo {
                name: "Demo".into(),
                file: "demo.recipe.md".into(),
                hash: "h".into(),
                task_mode: "independent".into(),
                sections: vec![],
            },
            environment: Environment {
                versus_version: "0.1.0".into(),
                started_at: "t".into(),
                finished_at: "t".into(),
                resumed: 0,
                project: "/p".into(),
                project_commit: None,
                os: "linux".into(),
                arch: "x".into(),
                jobs: 2,
                sandbox: None,
            },
            models: vec!["demo/good".into(), "demo/bad|x".into()],
            skipped_models: vec![],
            tasks: vec![TaskReport {
                name: "fix".into(),
                prompt: "Fix it.\nMore.".into(),
                runs: vec![
                    run("demo/good", RunStatus::Passed, vec![good]),
                    run("demo/bad|x", RunStatus::Failed, vec![bad]),
                ],
            }],
            summary: vec![ModelSummary {
                model: "demo/good".into(),
                tasks_run: 1,
                tasks_passed: 1,
                tasks_errored: 0,
                tasks_total: 1,
                criteria_passed: 1,
                criteria_total: 1,
                cost_usd: Some(0.5),
                mean_latency_ms: 1500,
                total_latency_ms: 1500,
                steps: 4,
                tokens: Tokens::default(),
            }],
        };
        report.tasks[0].runs[1]
            .tool_results
            .push(super::super::report::ToolCallReport::new(
                "bash",
                "make test".into(),
                crate::model::ToolOutcome::Exit { code: 3 },
                12,
                "boom\nFAILED 2 \x1b[2J\n[exit code: 3]",
            ));
        let md = render(&report);
        assert!(md.contains("| 1.5 s | 0 / 0 | 4 |"), "{md}");
        // A model whose provider did not report usage: unknown, not 0 / 0 (issue 25, wire
        // finding 4), and its cost unknown.
        let mut unknown = report.clone();
        unknown.summary[0].tokens.unreported = 1;
        unknown.summary[0].cost_usd = None;
        let unknown_md = render(&unknown);
        assert!(
            unknown_md
                .contains("| demo/good | 1/1 | 1/1 | unknown | 1.5 s | unknown / unknown | 4 |"),
            "{unknown_md}"
        );
        assert!(
            md.contains("- demo/bad|x: ✗ exit 3 `bash make test`: FAILED 2 \\x1b[2J"),
            "{md}"
        );
        assert!(md.contains("**Some criteria failed.**"), "{md}");
        assert!(
            md.contains("| demo/good | 1/1 | 1/1 | $0.5000 | 1.5 s |"),
            "{md}"
        );
        assert!(md.contains("## Task: fix"), "{md}");
        assert!(md.contains("> Fix it.…"), "{md}");
        assert!(
            md.contains("| demo/bad\\|x | failed | 0/1 | done |"),
            "{md}"
        );
        assert!(
            md.contains(
                "- demo/bad|x: `run: make test`: failed (exit 2); last 50 lines of output: boom"
            ),
            "{md}"
        );
    }
}
