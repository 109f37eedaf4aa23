//! One job: a model working through its tasks in a workspace, each task ending with the change
//! set and the criteria checked in that workspace.
//!
//! A job never writes to the output folder: everything it learns goes out as [`JobEvent`]s
//! to the one collector ([`super::execute`]). It stops at the first sign of cancellation and
//! reports the cells it did not finish as interrupted, so a resume knows to run the job again.
//!
//! The runner's `fan_out` makes a fresh workspace for every prompt; a `sequential` recipe needs
//! one workspace to outlive several prompts, so jobs drive [`Workspace`] and the agent loop
//! directly (the same calls the runner makes: create + setup on the blocking pool, one
//! `run_turn`, then the bash-change scan).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use crate::agent::{AgentOutcome, EventSink, ToolEnv};
use crate::engine::HistoryPolicy;
use crate::model::{AgentEvent, Message, RunStats, RunStop};
use crate::recipe::{CompactStrategy, Recipe, TaskMode};
use crate::runner::ModelEntry;
use crate::tools::ToolLimits;
use crate::workspace::changeset::ChangeSet;
use crate::workspace::{Base, ChangeKind, FileWrite, Isolation, Workspace, WorkspaceError};

use super::criteria::{self, Facts};
use super::layout::Layout;
use super::plan::{Cell, Job};
use super::report::{ChangeSetReport, FileReport, ModelRun, RunStatus, Tokens};

/// What stays the same for every job of a run.
pub(super) struct Shared {
    /// The project as the run started.
    pub base: Arc<Base>,
    /// The recipe (tasks, criteria, workspace and context settings).
    pub recipe: Arc<Recipe>,
    /// The runnable models, by model position.
    pub entries: Vec<ModelEntry>,
    /// Each model's context window, by model position.
    pub windows: Vec<Option<u64>>,
    /// Workspace isolation.
    pub isolation: Isolation,
    /// Tool limits from the recipe.
    pub limits: ToolLimits,
    /// The output folder's layout (for relative paths in the records and spill folders).
    pub layout: Layout,
    /// Fires on Ctrl+C / SIGTERM.
    pub cancel: CancellationToken,
    /// How model commands, setup and criteria are confined.
    pub sandbox: crate::exec::SandboxSettings,
    /// Why no command can run at all (the sandbox cannot start), when the start-up check
    /// found it: `run:` criteria are then errors of the run, never failures of a model.
    pub commands_unavailable: Option<String>,
}

/// Where a cell is, for the progress display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Phase {
    /// Creating the workspace and running the setup command.
    Preparing,
    /// The model is working.
    Running,
    /// Building the change set and checking the criteria.
    Checking,
}

/// What a job tells the collector.
#[derive(Debug)]
pub(super) enum JobEvent {
    /// The job (re)starts: its cells' earlier results are void.
    Started {
        /// The job.
        job: Job,
    },
    /// A cell moved to another phase.
    Phase {
        /// The cell.
        cell: Cell,
        /// Its phase.
        phase: Phase,
    },
    /// The model's workspace is ready (before its first task).
    Workspace {
        /// The cell.
        cell: Cell,
        /// Its root.
        root: PathBuf,
        /// Isolation actually used.
        mode: Isolation,
    },
    /// An event of the model's agent.
    Agent {
        /// The cell.
        cell: Cell,
        /// The event.
        event: AgentEvent,
    },
    /// A cell is complete.
    Finished {
        /// The cell.
        cell: Cell,
        /// Its record.
        run: Box<ModelRun>,
        /// What the model left, for the session log.
        output: Box<CellOutput>,
    },
    /// A cell was not finished because the run was cancelled.
    Interrupted {
        /// The cell.
        cell: Cell,
    },
}

/// What a cell's model left: its outcome (`None`: no workspace) and its proposals, recorded in
/// the session log exactly as the other front ends record a model's end.
#[derive(Debug)]
pub(super) struct CellOutput {
    /// The agent's outcome.
    pub outcome: Option<crate::agent::AgentOutcome>,
    /// Recorded writes, then the changes bash made.
    pub writes: Vec<crate::workspace::FileWrite>,
    /// A failure outside the agent.
    pub error: Option<String>,
}

/// Runs `job` to its end (or until cancelled), reporting on `tx`. The workspace is made once,
/// before the first task: an independent job has one task, a sequential one continues in it.
pub(super) async fn run(job: Job, shared: Arc<Shared>, tx: UnboundedSender<JobEvent>) {
    let _ = tx.send(JobEvent::Started { job: job.clone() });
    let mut workspace: Option<Workspace> = None;
    let mut setup_error: Option<String> = None;
    let mut history: Vec<Message> = Vec::new();
    for (position, &task) in job.tasks.iter().enumerate() {
        let cell = (task, job.model);
        if shared.cancel.is_cancelled() {
            interrupt_rest(&tx, &job, position);
            return;
        }
        let _ = tx.send(JobEvent::Phase {
            cell,
            phase: Phase::Preparing,
        });
        let mut workspace_ms = 0;
        if position == 0 {
            let started = Instant::now();
            match prepare(&shared, job.model).await {
                Ok(ws) => {
                    let _ = tx.send(JobEvent::Workspace {
                        cell,
                        root: ws.root().to_path_buf(),
                        mode: ws.mode(),
                    });
                    workspace = Some(ws);
                }
                Err(err) => setup_error = Some(err),
            }
            workspace_ms = millis(started);
        }
        let outcome = match &workspace {
            Some(ws) => {
                let _ = tx.send(JobEvent::Phase {
                    cell,
                    phase: Phase::Running,
                });
                Some(run_model(&shared, cell, ws, std::mem::take(&mut history), &tx).await)
            }
            None => None,
        };
        if shared.cancel.is_cancelled() {
            interrupt_rest(&tx, &job, position);
            return;
        }
        let _ = tx.send(JobEvent::Phase {
            cell,
            phase: Phase::Checking,
        });
        let finished = finish_cell(
            &shared,
            cell,
            workspace.take(),
            outcome.as_ref(),
            &setup_error,
        )
        .await;
        let Some((mut record, kept, writes)) = finished else {
            interrupt_rest(&tx, &job, position);
            return;
        };
        workspace = kept;
        record.workspace_ms = workspace_ms;
        if let Some(outcome) = &outcome {
            history = outcome.messages.clone();
        }
        let error = record.error.clone();
        let _ = tx.send(JobEvent::Finished {
            cell,
            run: Box::new(record),
            output: Box::new(CellOutput {
                outcome,
                writes,
                error,
            }),
        });
    }
    if let Some(ws) = workspace.take() {
        drop_or_keep(ws, &shared).await;
    }
}

/// Tells the collector that the cells from `position` on will not finish.
fn interrupt_rest(tx: &UnboundedSender<JobEvent>, job: &Job, position: usize) {
    for &task in &job.tasks[position..] {
        let _ = tx.send(JobEvent::Interrupted {
            cell: (task, job.model),
        });
    }
}

/// Creates the workspace and runs the setup command, the way the fan-out does.
async fn prepare(shared: &Shared, model: usize) -> Result<Workspace, String> {
    let label = shared
        .entries
        .get(model)
        .map_or_else(|| "model".to_string(), |e| e.label.clone());
    crate::runner::prepare_workspace(
        &label,
        Arc::clone(&shared.base),
        shared.isolation,
        shared.recipe.workspace.setup.clone(),
        None,
        &shared.sandbox,
        &shared.cancel,
    )
    .await
    .map_err(|e| match e {
        WorkspaceError::Setup { .. } => format!("the setup command failed: {e}"),
        _ => format!("the workspace could not be created: {e}"),
    })
}

async fn run_model(
    shared: &Shared,
    cell: Cell,
    workspace: &Workspace,
    mut history: Vec<Message>,
    tx: &UnboundedSender<JobEvent>,
) -> AgentOutcome {
    let (task, model) = cell;
    let Some(entry) = shared.entries.get(model) else {
        return AgentOutcome {
            stop: RunStop::Error,
            error: Some("internal: no such model entry".to_string()),
            final_text: String::new(),
            stats: RunStats::default(),
            messages: history,
        };
    };
    let prompt = shared
        .recipe
        .tasks()
        .get(task)
        .map(|t| t.prompt.clone())
        .unwrap_or_default();
    let spill_dir: PathBuf = shared.layout.path(&format!("spill/{task}-{model}"));
    let recipe = Arc::clone(&shared.recipe);
    let env = ToolEnv {
        view: workspace.view(),
        limits: shared.limits.clone(),
        spill_dir,
        output_filter: Some(Arc::new(move |tool: &str, text: String| {
            match recipe.output_filter(tool) {
                Some(rule) => rule.apply(&text),
                None => text,
            }
        })),
        sandbox: Arc::new(workspace.sandbox(&shared.sandbox)),
    };
    let sink_tx = tx.clone();
    let emit: EventSink = Arc::new(move |event| {
        let _ = sink_tx.send(JobEvent::Agent { cell, event });
    });
    let window = shared.windows.get(model).copied().flatten();
    crate::engine::history::prepare(&mut history, window, history_policy(&shared.recipe));
    entry
        .agent
        .run_turn(
            history,
            Message::user(prompt),
            &env,
            &emit,
            shared.cancel.child_token(),
        )
        .await
}

/// The recipe's `## Context` as the engine's one history policy.
fn history_policy(recipe: &Recipe) -> HistoryPolicy {
    HistoryPolicy {
        compact_at: match recipe.context.strategy {
            CompactStrategy::AutoCompact => Some(recipe.context.compact_threshold),
            CompactStrategy::Manual | CompactStrategy::Off => None,
        },
        max_turns: recipe.context.max_history_turns,
    }
}

/// Builds the change set and checks the criteria; `None` when cancelled meanwhile. Hands the
/// workspace back when a sequential job continues in it.
async fn finish_cell(
    shared: &Shared,
    cell: Cell,
    workspace: Option<Workspace>,
    outcome: Option<&AgentOutcome>,
    setup_error: &Option<String>,
) -> Option<(ModelRun, Option<Workspace>, Vec<FileWrite>)> {
    let (task, model) = cell;
    let label = shared
        .entries
        .get(model)
        .map_or_else(String::new, |e| e.label.clone());
    let task_name = shared
        .recipe
        .tasks()
        .get(task)
        .map_or_else(String::new, |t| t.name.clone());
    let (workspace, built, writes) = match workspace {
        Some(ws) => change_set(shared, &label, ws).await,
        None => (None, Ok(ChangeSetReport::default()), Vec::new()),
    };
    let (mut change_set, change_error) = match built {
        Ok(report) => (report, None),
        Err(err) => (ChangeSetReport::default(), Some(err)),
    };
    change_set.diff_file = shared.layout.diff_rel(task, model);
    let error = outcome
        .and_then(|o| o.error.clone())
        .or_else(|| setup_error.clone())
        .or(change_error);
    let default_stats = RunStats::default();
    let stats = outcome.map_or(&default_stats, |o| &o.stats);
    let final_text = outcome.map_or("", |o| o.final_text.as_str());
    let sandbox = std::sync::Arc::new(
        workspace
            .as_ref()
            .map(|ws| ws.sandbox(&shared.sandbox))
            .unwrap_or_else(|| crate::exec::Sandbox::refusing("no workspace")),
    );
    let facts = Facts {
        stop: outcome.map(|o| o.stop),
        error: error.as_deref(),
        final_text,
        stats,
        changes: &change_set,
        workspace: workspace.as_ref().map(|ws| (ws.root(), &*sandbox)),
        commands_unavailable: shared.commands_unavailable.as_deref(),
    };
    let results = criteria::check_all(shared.recipe.criteria(), &facts, &shared.cancel)
        .await
        .ok()?;
    let passed = results.iter().filter(|r| r.passed).count();
    let total = results.len();
    let kept_path = match &workspace {
        Some(ws) if shared.recipe.workspace.keep => Some(ws.root().display().to_string()),
        _ => None,
    };
    // A sequential job continues in the workspace; otherwise it is done with it.
    let workspace = match workspace {
        Some(ws) if shared.recipe.task_mode() == TaskMode::Sequential => Some(ws),
        Some(ws) => {
            drop_or_keep(ws, shared).await;
            None
        }
        None => None,
    };
    let usage = &stats.usage;
    let record = ModelRun {
        model: label,
        task: task_name,
        status: if results.iter().any(|r| r.error) {
            RunStatus::Error
        } else if passed == total {
            RunStatus::Passed
        } else {
            RunStatus::Failed
        },
        stop_reason: outcome.map(|o| o.stop),
        error,
        steps: stats.steps,
        tokens: Tokens {
            input: usage.input,
            output: usage.output,
            cache_read: usage.cache_read,
            cache_write: usage.cache_write,
            reasoning: usage.reasoning,
        },
        cost_usd: stats.cost,
        latency_ms: stats.elapsed_ms,
        time_to_first_token_ms: stats.first_token_ms,
        workspace_ms: 0,
        tool_calls: stats.tool_calls,
        tool_calls_by_name: stats.tools.clone(),
        tool_errors: stats.tool_errors,
        edit_failures: stats.failed_edits,
        tool_results: Vec::new(),
        retries: stats.retries,
        change_set,
        criteria: results,
        criteria_passed: passed,
        criteria_total: total,
        final_text: final_text.to_string(),
        events_file: shared.layout.events_rel(task, model),
        workspace: kept_path,
    };
    Some((record, workspace, writes))
}

/// The change set of the model in `workspace` (bash changes included), as report data, and
/// the writes it was built from.
async fn change_set(
    shared: &Shared,
    label: &str,
    workspace: Workspace,
) -> (
    Option<Workspace>,
    Result<ChangeSetReport, String>,
    Vec<FileWrite>,
) {
    let base = Arc::clone(&shared.base);
    let label = label.to_string();
    let joined = tokio::task::spawn_blocking(move || {
        let built = ChangeSet::from_workspace(&label, &base, &workspace);
        let writes = workspace.writes();
        (workspace, built, writes)
    })
    .await;
    let failed = |err: String| format!("the change set could not be built: {err}");
    match joined {
        Ok((ws, Ok(set), writes)) => {
            let mut report = report_of(&set);
            report.notes = ws.scan_notes().iter().map(ToString::to_string).collect();
            (Some(ws), Ok(report), writes)
        }
        Ok((ws, Err(err), writes)) => (Some(ws), Err(failed(err.to_string())), writes),
        Err(err) => (None, Err(failed(err.to_string())), Vec::new()),
    }
}

/// A change set as report data.
fn report_of(set: &ChangeSet) -> ChangeSetReport {
    ChangeSetReport {
        files_changed: set.files_changed(),
        added: set.added(),
        removed: set.removed(),
        files: set
            .files
            .iter()
            .map(|f| FileReport {
                path: f.path.clone(),
                kind: match f.kind {
                    ChangeKind::Created => "created",
                    ChangeKind::Modified => "modified",
                    ChangeKind::Deleted => "deleted",
                }
                .to_string(),
                added: f.added,
                removed: f.removed,
                binary: f.binary,
                tools: f.tools.clone(),
            })
            .collect(),
        diff: set.unified_diff(),
        diff_file: String::new(),
        notes: Vec::new(),
        build_output: crate::workspace::build_output_notes(
            set.files.iter().map(|f| f.path.as_str()),
        ),
    }
}

/// Removes the workspace (on the blocking pool: a tree or a git worktree goes with it), or
/// keeps it on disk when the recipe says `keep: true`.
async fn drop_or_keep(mut workspace: Workspace, shared: &Shared) {
    if shared.recipe.workspace.keep {
        workspace.keep();
    }
    // A failure to remove leaves a folder that `cleanup_leftovers` removes on the next start.
    let _ = tokio::task::spawn_blocking(move || drop(workspace)).await;
}

fn millis(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_recipe_context_becomes_the_engine_history_policy() {
        let mut recipe = Recipe::parse("# R\nversion: 1\n", "r.md").unwrap();
        recipe.context.max_history_turns = 3;
        recipe.context.compact_threshold = 0.5;
        assert_eq!(
            history_policy(&recipe),
            HistoryPolicy {
                compact_at: Some(0.5),
                max_turns: 3
            }
        );
        recipe.context.strategy = CompactStrategy::Manual;
        assert_eq!(history_policy(&recipe).compact_at, None);
        recipe.context.strategy = CompactStrategy::Off;
        assert_eq!(history_policy(&recipe).compact_at, None);
    }
}
