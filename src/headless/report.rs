//! The `report.json` schema: what one `versus run` found, as plain serde types.
//!
//! These types are the contract with everything that reads reports (`versus stats`, CI
//! scripts, dashboards), so they are kept boring on purpose: field names are stable and
//! snake_case, units are in the names (`_ms`, `_usd`), every list has a documented order, maps
//! are `BTreeMap`s (sorted keys), and nothing depends on hash-map iteration order. Adding a
//! field is compatible; renaming or removing one bumps [`SCHEMA_VERSION`]. docs/report.md
//! describes every field.
//!
//! The same [`ModelRun`] record is written to the checkpoint when a run finishes, so a resumed
//! run rebuilds exactly the report an uninterrupted one would have written.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::model::{RunStop, ToolOutcome};

/// Version of the report schema. Readers should refuse versions they do not know.
pub const SCHEMA_VERSION: u32 = 1;

/// Fields whose values legitimately differ between two runs of the same recipe (wall-clock
/// times, durations and run ids). Everything else is a function of the recipe, the project
/// and the models' answers, which is what makes reports of scripted models comparable.
pub const VOLATILE_FIELDS: &[&str] = &[
    "run_id",
    "started_at",
    "finished_at",
    "latency_ms",
    "time_to_first_token_ms",
    "workspace_ms",
    "mean_latency_ms",
    "total_latency_ms",
];

/// The whole report (`report.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// [`SCHEMA_VERSION`] of the writer.
    pub schema_version: u32,
    /// The output folder's name, unique per run (e.g. `demo-20261121-090503`).
    pub run_id: String,
    /// False when the run was interrupted: some runs have `status: not_run`.
    pub complete: bool,
    /// True when every criterion of every run passed (and the run is complete).
    pub passed: bool,
    /// True when some criterion could not be checked (see [`CriterionResult::error`]): the
    /// results say nothing about the models. Written only when true.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub broken: bool,
    /// The run's session in `.versus/sessions/` (each task one of its turns; a resume
    /// continues it), so `versus sessions show ID` finds every model's transcript. Absent in
    /// reports written before runs were sessions of their own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// Which recipe ran.
    pub recipe: RecipeInfo,
    /// Where and when it ran.
    pub environment: Environment,
    /// Model entries that ran, in the order they were given.
    pub models: Vec<String>,
    /// Model entries that were given but could not run (e.g. missing API key), in order.
    pub skipped_models: Vec<SkippedModel>,
    /// One entry per task, in recipe order.
    pub tasks: Vec<TaskReport>,
    /// One entry per model, in the order of [`Report::models`].
    pub summary: Vec<ModelSummary>,
}

/// The recipe as it was run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecipeInfo {
    /// The `# Title`.
    pub name: String,
    /// The recipe file as given on the command line.
    pub file: String,
    /// blake3 of the recipe file's bytes (hex); a resume refuses a recipe whose hash changed.
    pub hash: String,
    /// `independent` or `sequential`.
    pub task_mode: String,
    /// Every section of the effective recipe (the file over the built-in defaults), in the
    /// recipe format's order, each as the Markdown `versus` would write for it.
    pub sections: Vec<RecipeSection>,
}

/// One section of the effective recipe.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecipeSection {
    /// Section title, e.g. `Constraints`.
    pub title: String,
    /// The section's body in recipe Markdown (no `##` heading).
    pub text: String,
}

/// Where and when the run happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Environment {
    /// `versus` version that wrote the report.
    pub versus_version: String,
    /// When the run started (RFC 3339 UTC); the first start for a resumed run.
    pub started_at: String,
    /// When the report was written (RFC 3339 UTC).
    pub finished_at: String,
    /// How many times the run was resumed (`versus run --resume`).
    pub resumed: u32,
    /// The project folder the models worked on.
    pub project: String,
    /// The project's git HEAD commit, when it is in a repository with a commit.
    pub project_commit: Option<String>,
    /// Operating system (`linux`, `macos`...).
    pub os: String,
    /// CPU architecture (`x86_64`, `aarch64`...).
    pub arch: String,
    /// How many model runs were allowed at once (`--jobs`).
    pub jobs: usize,
    /// How the run's commands were confined. Absent in reports written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxInfo>,
}

/// The sandbox every command of the run (bash, setup, `run:` criteria) ran in, so a report
/// read later says whether its numbers came from confined runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SandboxInfo {
    /// False when `sandbox = "off"`: commands ran unconfined.
    pub enabled: bool,
    /// `project_only`, `read_only` or `unrestricted`.
    pub filesystem: String,
    /// Whether commands could reach the network.
    pub network: bool,
    /// Whether the setup command could reach the network (`setup_network`), when the
    /// others could not; absent in reports written before it existed.
    #[serde(default)]
    pub setup_network: bool,
    /// The warning shown when the settings weaken the sandbox (off, or unrestricted).
    pub warning: Option<String>,
}

impl SandboxInfo {
    /// The record of `settings`.
    pub fn of(settings: &crate::exec::SandboxSettings) -> Self {
        Self {
            enabled: settings.sandbox == crate::exec::SandboxMode::On,
            filesystem: settings.filesystem.as_str().to_string(),
            network: settings.network,
            setup_network: settings.setup_network,
            warning: settings.warning(),
        }
    }
}

/// A model that was asked for but did not run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkippedModel {
    /// The model entry.
    pub model: String,
    /// Why it was skipped and how to fix it.
    pub reason: String,
}

/// One task and every model's run on it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskReport {
    /// The task's name (`### name`, or `task-N` for a bullet).
    pub name: String,
    /// The prompt sent.
    pub prompt: String,
    /// One run per model, in the order of [`Report::models`].
    pub runs: Vec<ModelRun>,
}

/// The most bytes of a tool call's output a report keeps (its end: a command's summary and
/// error are usually there); the whole text is in the run's raw event log.
pub const TOOL_OUTPUT_MAX: usize = 4096;

/// One tool call of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallReport {
    /// Tool name.
    pub name: String,
    /// Its most telling argument (path, command, pattern...), on one line.
    pub target: String,
    /// How it ended (`{"kind": "exit", "code": 3}`, `{"kind": "ok"}`...).
    pub outcome: ToolOutcome,
    /// Run time in milliseconds.
    pub duration_ms: u64,
    /// The last [`TOOL_OUTPUT_MAX`] bytes of the text the model received.
    pub output: String,
    /// The size of that whole text in bytes (more than `output` holds when it was cut).
    pub output_bytes: usize,
}

impl ToolCallReport {
    /// The report of a call with the whole `output` the model received.
    pub fn new(
        name: &str,
        target: String,
        outcome: ToolOutcome,
        duration_ms: u64,
        output: &str,
    ) -> Self {
        let mut start = output.len().saturating_sub(TOOL_OUTPUT_MAX);
        while !output.is_char_boundary(start) {
            start += 1;
        }
        Self {
            name: name.to_string(),
            target,
            outcome,
            duration_ms,
            output: output[start..].to_string(),
            output_bytes: output.len(),
        }
    }
}

/// The verdict on one model's run of one task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// The run finished and every criterion passed.
    Passed,
    /// The run finished and at least one criterion failed.
    Failed,
    /// The run did not finish before the whole run was interrupted (incomplete reports only).
    NotRun,
    /// Some criterion could not be checked (the command sandbox could not start, a command
    /// could not be spawned): the run is broken, not the model; `versus stats` leaves it out.
    Error,
}

impl RunStatus {
    /// The word used in tables.
    pub fn label(self) -> &'static str {
        match self {
            RunStatus::Passed => "passed",
            RunStatus::Failed => "failed",
            RunStatus::NotRun => "not run",
            RunStatus::Error => "error",
        }
    }
}

/// One model's run of one task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelRun {
    /// The model entry (`openai/gpt-5#2`).
    pub model: String,
    /// The task's name.
    pub task: String,
    /// Passed, failed or not run.
    pub status: RunStatus,
    /// Why the model's run ended (`null` when it never started).
    pub stop_reason: Option<RunStop>,
    /// The error when the run ended in one (provider error, timeout, setup failure...).
    pub error: Option<String>,
    /// Requests made to the model.
    pub steps: u32,
    /// Tokens over all steps.
    pub tokens: Tokens,
    /// Cost in USD; `null` when the model's price is unknown.
    pub cost_usd: Option<f64>,
    /// Wall time of the model's run in milliseconds.
    pub latency_ms: u64,
    /// Time to the first streamed token in milliseconds (`null`: nothing was streamed).
    pub time_to_first_token_ms: Option<u64>,
    /// Time to create the workspace and run the setup command, in milliseconds (0 when a
    /// sequential task continued in the previous task's workspace).
    pub workspace_ms: u64,
    /// Tool calls made.
    pub tool_calls: u32,
    /// Tool calls per tool name (sorted by name).
    pub tool_calls_by_name: BTreeMap<String, u32>,
    /// Tool calls that did not succeed (a non-zero exit, a tool error, a refusal, a timeout).
    pub tool_errors: u32,
    /// Edit calls (edit_file, apply_patch) that did not apply.
    pub edit_failures: u32,
    /// Every tool call in order: how it ended and the end of what it returned (absent in
    /// reports written before it was recorded).
    #[serde(default)]
    pub tool_results: Vec<ToolCallReport>,
    /// Requests the provider layer retried.
    pub retries: u32,
    /// What the model changed, against the project as it was at the start.
    pub change_set: ChangeSetReport,
    /// One result per criterion, in recipe order.
    pub criteria: Vec<CriterionResult>,
    /// How many criteria passed.
    pub criteria_passed: usize,
    /// How many criteria were checked.
    pub criteria_total: usize,
    /// The model's last visible text.
    pub final_text: String,
    /// The raw event log, relative to the report folder (`events/<task>/<model>.jsonl`).
    pub events_file: String,
    /// Where the workspace was kept (`keep: true` only).
    pub workspace: Option<String>,
}

/// Token counts (see `Usage` in the model layer).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Tokens {
    /// Uncached input tokens.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Input tokens served from the prompt cache.
    pub cache_read: u64,
    /// Input tokens written to the prompt cache.
    pub cache_write: u64,
    /// Reasoning tokens (part of `output` for providers that count them there).
    pub reasoning: u64,
    /// Requests whose usage the provider did not report (`Usage::unreported`): when not 0
    /// the counts above are only a lower bound, shown as unknown, and the cost is unknown.
    /// Absent when 0 (and in reports written before it).
    #[serde(default, skip_serializing_if = "no_unreported")]
    pub unreported: u32,
}

/// Serde's test for leaving `unreported` out when every request reported its usage.
fn no_unreported(n: &u32) -> bool {
    *n == 0
}

impl Tokens {
    /// Whether the counts are whole (every request's usage was reported).
    pub fn is_known(&self) -> bool {
        self.unreported == 0
    }

    /// Adds another run's tokens.
    pub fn add(&mut self, other: &Tokens) {
        self.unreported = self.unreported.saturating_add(other.unreported);
        self.input = self.input.saturating_add(other.input);
        self.output = self.output.saturating_add(other.output);
        self.cache_read = self.cache_read.saturating_add(other.cache_read);
        self.cache_write = self.cache_write.saturating_add(other.cache_write);
        self.reasoning = self.reasoning.saturating_add(other.reasoning);
    }
}

/// A model's net change to the project.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ChangeSetReport {
    /// Number of files changed.
    pub files_changed: usize,
    /// Lines added over all files.
    pub added: usize,
    /// Lines removed over all files.
    pub removed: usize,
    /// The changed files, sorted by path.
    pub files: Vec<FileReport>,
    /// The whole change in git's unified diff format (empty when nothing changed).
    pub diff: String,
    /// The same diff as a file, relative to the report folder (`diffs/<task>/<model>.diff`).
    pub diff_file: String,
    /// What the change scan saw in the workspace but did not propose (a file too large, a
    /// folder too deep, an entry it could not read), one sentence each: said, never dropped.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Build output proposed only because the project does not ignore its folder (`target/`,
    /// `node_modules/`...), one sentence per folder name with the fix; absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub build_output: Vec<String>,
}

/// One changed file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileReport {
    /// `/`-separated path relative to the project root.
    pub path: String,
    /// `created`, `modified` or `deleted`.
    pub kind: String,
    /// Lines added.
    pub added: usize,
    /// Lines removed.
    pub removed: usize,
    /// Whether the file is binary (no line counts).
    pub binary: bool,
    /// Tools that wrote it, in order of first use.
    pub tools: Vec<String>,
}

/// The result of one success criterion for one run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CriterionResult {
    /// The criterion as written in a recipe, e.g. `run(timeout=2m): cargo test`.
    pub criterion: String,
    /// Its kind: `no_errors`, `run`, `protected`...
    pub kind: String,
    /// Whether it passed.
    pub passed: bool,
    /// True when it could not be checked at all (the command sandbox could not start, the
    /// command was refused or could not be spawned): neither a pass nor a failure of the
    /// model, and the run's status is `error`. Written only when true.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub error: bool,
    /// Why: the measured value against the limit, the matching paths, or for `run` the exit
    /// status and the last 50 lines of output.
    pub detail: String,
}

impl CriterionResult {
    /// `passed`, `failed` or `error`, for tables.
    pub fn label(&self) -> &'static str {
        match (self.passed, self.error) {
            (true, _) => "passed",
            (false, true) => "error",
            (false, false) => "failed",
        }
    }
}

/// One model's results over all tasks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelSummary {
    /// The model entry.
    pub model: String,
    /// Tasks the model ran to the end (status passed or failed).
    pub tasks_run: usize,
    /// Tasks where every criterion passed.
    pub tasks_passed: usize,
    /// Tasks whose criteria could not all be checked (status `error`): not in `tasks_run` nor
    /// in the criteria counts. Written only when not 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub tasks_errored: usize,
    /// Tasks in the recipe.
    pub tasks_total: usize,
    /// Criteria passed over all tasks.
    pub criteria_passed: usize,
    /// Criteria checked over all tasks.
    pub criteria_total: usize,
    /// Total cost in USD; `null` when some run's price is unknown.
    pub cost_usd: Option<f64>,
    /// Mean latency of the runs, in milliseconds (0 when none ran).
    pub mean_latency_ms: u64,
    /// Sum of the runs' latencies, in milliseconds.
    pub total_latency_ms: u64,
    /// Requests over all runs.
    pub steps: u32,
    /// Tokens over all runs.
    pub tokens: Tokens,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}
