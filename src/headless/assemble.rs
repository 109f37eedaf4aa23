//! Building the [`Report`] from the finished runs: one function, used after an uninterrupted
//! run, an interrupted one and a resumed one alike, so they can only differ in content.
//!
//! Cells without a finished run (the run was interrupted) get a `not_run` record with empty
//! counters, so every report has one run per task x model in the same order.

use std::collections::BTreeMap;
use std::path::Path;

use crate::recipe::{Choice, Recipe};

use super::layout::Layout;
use super::report::{
    ChangeSetReport, Environment, ModelRun, ModelSummary, RecipeInfo, RecipeSection, Report,
    RunStatus, SCHEMA_VERSION, SkippedModel, TaskReport, Tokens,
};

/// Everything the report says besides the runs.
pub(super) struct Frame<'a> {
    /// The output folder's name.
    pub run_id: &'a str,
    /// The recipe.
    pub recipe: &'a Recipe,
    /// The recipe file as given.
    pub recipe_file: &'a str,
    /// blake3 of the file.
    pub recipe_hash: &'a str,
    /// The environment (times filled in by the caller).
    pub environment: Environment,
    /// Models that ran, in order.
    pub models: &'a [String],
    /// Models that were skipped.
    pub skipped: &'a [SkippedModel],
    /// File paths of the output folder.
    pub layout: &'a Layout,
    /// The run's session id.
    pub session: Option<&'a str>,
}

/// The report for `frame` with the finished runs by (task name, model label).
pub(super) fn report(frame: Frame<'_>, finished: &BTreeMap<(String, String), ModelRun>) -> Report {
    let mut tasks = Vec::new();
    for (t, task) in frame.recipe.tasks().iter().enumerate() {
        let runs = frame
            .models
            .iter()
            .enumerate()
            .map(|(m, model)| {
                finished
                    .get(&(task.name.clone(), model.clone()))
                    .cloned()
                    .unwrap_or_else(|| not_run(&task.name, model, frame.layout, t, m))
            })
            .collect();
        tasks.push(TaskReport {
            name: task.name.clone(),
            prompt: task.prompt.clone(),
            runs,
        });
    }
    let summary: Vec<ModelSummary> = frame
        .models
        .iter()
        .enumerate()
        .map(|(m, model)| {
            summarize(
                model,
                tasks.iter().filter_map(|t| t.runs.get(m)),
                tasks.len(),
            )
        })
        .collect();
    let complete = tasks
        .iter()
        .all(|t| t.runs.iter().all(|r| r.status != RunStatus::NotRun));
    let passed = complete
        && tasks
            .iter()
            .all(|t| t.runs.iter().all(|r| r.status == RunStatus::Passed));
    let broken = tasks
        .iter()
        .any(|t| t.runs.iter().any(|r| r.status == RunStatus::Error));
    Report {
        schema_version: SCHEMA_VERSION,
        run_id: frame.run_id.to_string(),
        complete,
        passed,
        broken,
        session: frame.session.map(str::to_string),
        recipe: RecipeInfo {
            name: frame.recipe.name.clone(),
            file: frame.recipe_file.to_string(),
            hash: frame.recipe_hash.to_string(),
            task_mode: frame.recipe.task_mode().as_str().to_string(),
            sections: sections(frame.recipe),
        },
        environment: frame.environment,
        models: frame.models.to_vec(),
        skipped_models: frame.skipped.to_vec(),
        tasks,
        summary,
    }
}

/// The record of a cell that never finished.
fn not_run(task: &str, model: &str, layout: &Layout, t: usize, m: usize) -> ModelRun {
    ModelRun {
        model: model.to_string(),
        task: task.to_string(),
        status: RunStatus::NotRun,
        stop_reason: None,
        error: None,
        steps: 0,
        tokens: Tokens::default(),
        cost_usd: Some(0.0),
        latency_ms: 0,
        time_to_first_token_ms: None,
        workspace_ms: 0,
        tool_calls: 0,
        tool_calls_by_name: BTreeMap::new(),
        tool_errors: 0,
        edit_failures: 0,
        tool_results: Vec::new(),
        retries: 0,
        change_set: ChangeSetReport {
            diff_file: layout.diff_rel(t, m),
            ..ChangeSetReport::default()
        },
        criteria: Vec::new(),
        criteria_passed: 0,
        criteria_total: 0,
        final_text: String::new(),
        events_file: layout.events_rel(t, m),
        workspace: None,
    }
}

/// One model's totals over its runs.
fn summarize<'a>(
    model: &str,
    runs: impl Iterator<Item = &'a ModelRun>,
    tasks_total: usize,
) -> ModelSummary {
    let mut s = ModelSummary {
        model: model.to_string(),
        tasks_run: 0,
        tasks_passed: 0,
        tasks_errored: 0,
        tasks_total,
        criteria_passed: 0,
        criteria_total: 0,
        cost_usd: Some(0.0),
        mean_latency_ms: 0,
        total_latency_ms: 0,
        steps: 0,
        tokens: Tokens::default(),
    };
    for run in runs {
        // A run that never finished, or whose criteria could not be checked, says nothing
        // about the model.
        if matches!(run.status, RunStatus::NotRun | RunStatus::Error) {
            if run.status == RunStatus::Error {
                s.tasks_errored += 1;
            }
            continue;
        }
        s.tasks_run += 1;
        if run.status == RunStatus::Passed {
            s.tasks_passed += 1;
        }
        s.criteria_passed += run.criteria_passed;
        s.criteria_total += run.criteria_total;
        s.cost_usd = match (s.cost_usd, run.cost_usd) {
            (Some(a), Some(b)) => Some(a + b),
            _ => None,
        };
        s.total_latency_ms += run.latency_ms;
        s.steps += run.steps;
        s.tokens.add(&run.tokens);
    }
    if s.tasks_run > 0 {
        s.mean_latency_ms = s.total_latency_ms / s.tasks_run as u64;
    }
    s
}

/// The effective recipe split into its sections (as `Recipe::to_markdown` writes them).
pub(super) fn sections(recipe: &Recipe) -> Vec<RecipeSection> {
    let text = recipe.to_markdown();
    let mut out: Vec<RecipeSection> = Vec::new();
    let mut in_fence = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
        }
        if !in_fence && let Some(title) = line.strip_prefix("## ") {
            out.push(RecipeSection {
                title: title.trim().to_string(),
                text: String::new(),
            });
            continue;
        }
        if let Some(section) = out.last_mut() {
            section.text.push_str(line);
            section.text.push('\n');
        }
    }
    for section in &mut out {
        section.text = section.text.trim().to_string();
    }
    out
}

/// The project's HEAD commit, when it is in a git repository with one.
pub(super) fn project_commit(project: &Path) -> Option<String> {
    let repo = git2::Repository::discover(project).ok()?;
    let head = repo.head().ok()?;
    head.peel_to_commit().ok().map(|c| c.id().to_string())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn recipe() -> Recipe {
        Recipe::parse(
            "# Two tasks\nversion: 1\n\n## Tasks\n- first\n\n### second\n```\n## not a section\n```\n",
            "r.md",
        )
        .unwrap()
    }

    fn env() -> Environment {
        Environment {
            versus_version: "0".into(),
            started_at: "a".into(),
            finished_at: "b".into(),
            resumed: 0,
            project: "/p".into(),
            project_commit: None,
            os: "linux".into(),
            arch: "x".into(),
            jobs: 1,
            sandbox: None,
        }
    }

    #[test]
    fn sections_follow_the_format_and_ignore_headings_in_code() {
        let s = sections(&recipe());
        let titles: Vec<&str> = s.iter().map(|s| s.title.as_str()).collect();
        assert_eq!(titles[0], "Models");
        assert!(titles.contains(&"Success Criteria"));
        assert!(!titles.contains(&"not a section"));
        let tasks = s.iter().find(|s| s.title == "Tasks").unwrap();
        assert!(tasks.text.contains("## not a section"), "{}", tasks.text);
    }

    #[test]
    fn missing_cells_are_not_run_and_the_summary_adds_up() {
        let recipe = recipe();
        let models = vec!["demo/a".to_string(), "demo/b".to_string()];
        let tasks: Vec<String> = recipe.tasks().iter().map(|t| t.name.clone()).collect();
        let layout = Layout::new(Path::new("/out"), &tasks, &models);
        let mut finished = BTreeMap::new();
        let mut done = not_run(&tasks[0], "demo/a", &layout, 0, 0);
        done.status = RunStatus::Passed;
        done.criteria_passed = 1;
        done.criteria_total = 1;
        done.latency_ms = 300;
        done.cost_usd = None;
        finished.insert((tasks[0].clone(), "demo/a".to_string()), done);
        let frame = Frame {
            run_id: "id",
            recipe: &recipe,
            recipe_file: "r.md",
            recipe_hash: "h",
            environment: env(),
            models: &models,
            skipped: &[],
            layout: &layout,
            session: Some("20261127-120000-abcd"),
        };
        let report = report(frame, &finished);
        assert!(!report.complete);
        assert!(!report.passed);
        assert_eq!(report.tasks.len(), 2);
        assert_eq!(report.tasks[1].runs[1].status, RunStatus::NotRun);
        assert_eq!(
            report.tasks[1].runs[1].events_file,
            "events/second/demo-b.jsonl"
        );
        let a = &report.summary[0];
        assert_eq!((a.tasks_run, a.tasks_passed, a.tasks_total), (1, 1, 2));
        assert_eq!(a.mean_latency_ms, 300);
        assert_eq!(a.cost_usd, None);
        assert_eq!(report.summary[1].tasks_run, 0);
    }
}
