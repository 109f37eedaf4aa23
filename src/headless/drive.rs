//! A headless run driven through the session engine's handle: every task is one engine turn
//! (its models: those whose cell of the task is still to run), submitted with
//! [`Op::StartTurn`]; the engine runs the models (workspaces, the agent loop, bash changes,
//! the `--jobs` limit shared by every turn, a sequential job's workspace kept from turn to
//! turn), records everything in the run's session and builds each model's change set. This
//! module only turns the engine's events into the run's files (through the collector), its
//! progress display, and the recipe's criteria, checked in each model's workspace once its
//! change set is built (the engine hands the workspace out on [`Op::OpenWorkspace`]).
//!
//! A task's turn ends when the engine says so and every criterion of it is checked; the next
//! task's turn starts only then, so each workspace is still there for its criteria. Ctrl+C
//! (the run's token) cancels the running turn; its unfinished cells and the tasks not started
//! are reported interrupted, and a resume runs them again.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::engine::RunOptions;
use crate::engine::{
    EngineEvent, EngineEvents, EngineHandle, FinishedModel, HistoryPolicy, Op, OpKind, TurnRequest,
    TurnTarget, TurnTask, TurnWorkspaces,
};
use crate::exec::Sandbox;
use crate::model::RunStats;
use crate::recipe::{CompactStrategy, Recipe, TaskMode};
use crate::workspace::ChangeKind;
use crate::workspace::changeset::ChangeSet;

use super::HeadlessError;
use super::collect::Collector;
use super::criteria::{self, Facts};
use super::layout::Layout;
use super::plan::Cell;
use super::report::{ChangeSetReport, CriterionResult, FileReport, ModelRun, RunStatus, Tokens};

/// How often the live display is redrawn.
const TICK: Duration = Duration::from_millis(250);

/// Where a cell is, for the progress display (before the first: waiting for its turn or
/// its `--jobs` place).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Phase {
    /// Creating the workspace and running the setup command (it has its place).
    Preparing,
    /// The model is working.
    Running,
    /// Building the change set and checking the criteria.
    Checking,
}

/// What stays the same for every turn of a run.
pub(super) struct Shared {
    /// The recipe (tasks, criteria, workspace and context settings).
    pub recipe: Arc<Recipe>,
    /// Each model, by model position, as the engine runs it.
    pub targets: Vec<TurnTarget>,
    /// Workspaces, tools, sandbox and the `--jobs` limit, for every turn.
    pub options: RunOptions,
    /// The output folder's layout.
    pub layout: Layout,
    /// Fires on Ctrl+C / SIGTERM.
    pub cancel: CancellationToken,
    /// Why no command can run at all (the sandbox cannot start), when the start-up check
    /// found it: `run:` criteria are then errors of the run, never failures of a model.
    pub commands_unavailable: Option<String>,
    /// Whether the session had conversations before this process (a resume): they are
    /// cleared before the first turn, as every job starts afresh.
    pub resumed_session: bool,
    /// Finished models of the reopened session's last turn whose change sets the engine
    /// rebuilds first (it takes no new turn until then).
    pub restored_models: usize,
    /// Where every turn's project context comes from (the config's, the recipe's skills).
    pub context: crate::engine::ContextSources,
}

/// One engine turn of the run: the cells it runs, in entry order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct TaskTurn {
    /// Its cells (task, model position), in entry order: task by task, models in order.
    pub cells: Vec<Cell>,
    /// The cells that begin a job here (a `started` checkpoint record each), with the tasks
    /// of that job.
    pub starts: Vec<(Cell, Vec<usize>)>,
    /// Its entries are jobs of several tasks (the engine is given each task's prompt and
    /// entries): every turn of an `independent` run of more than one task.
    pub batched: bool,
}

/// How many jobs at most one turn of independent tasks holds (whole tasks, at least one;
/// more when `--jobs` is higher): enough that `--jobs` places stay filled across tasks and
/// the turns' ends (the last model of a turn, the next project capture) are rare, few enough
/// that a turn read back (`versus sessions show`, the interface's `--continue`) stays a
/// readable size.
pub(super) const BATCH_JOBS: usize = 512;

/// The turns of the jobs left to run. In `independent` mode, runs of consecutive tasks with
/// the models whose cell is missing, up to [`BATCH_JOBS`] jobs (or four times `jobs`) a
/// turn, so the models of several tasks run side by side; in `sequential` mode one turn per
/// task, the chains to run again from their first task, the workspaces kept from turn to
/// turn.
pub(super) fn task_turns(
    plan_jobs: &[super::plan::Job],
    tasks: usize,
    mode: TaskMode,
    jobs: usize,
) -> Vec<TaskTurn> {
    let mut per_task: Vec<Vec<usize>> = vec![Vec::new(); tasks];
    let mut starts: Vec<Vec<(Cell, Vec<usize>)>> = vec![Vec::new(); tasks];
    for job in plan_jobs {
        for (i, &task) in job.tasks.iter().enumerate() {
            if let Some(models) = per_task.get_mut(task) {
                models.push(job.model);
                if i == 0
                    && let Some(s) = starts.get_mut(task)
                {
                    s.push(((task, job.model), job.tasks.clone()));
                }
            }
        }
    }
    for models in &mut per_task {
        models.sort_unstable();
        models.dedup();
    }
    let batched = mode == TaskMode::Independent && tasks > 1;
    let limit = if batched {
        BATCH_JOBS.max(jobs.saturating_mul(4))
    } else {
        0
    };
    let mut turns: Vec<TaskTurn> = Vec::new();
    for (task, models) in per_task.into_iter().enumerate() {
        if models.is_empty() {
            continue;
        }
        let fits = turns
            .last()
            .is_some_and(|t| batched && t.cells.len() + models.len() <= limit);
        if !fits {
            turns.push(TaskTurn {
                cells: Vec::new(),
                starts: Vec::new(),
                batched,
            });
        }
        if let Some(turn) = turns.last_mut() {
            turn.cells.extend(models.iter().map(|&m| (task, m)));
            turn.starts
                .extend(starts.get_mut(task).map(std::mem::take).unwrap_or_default());
        }
    }
    turns
}

/// What became of one cell of the running turn.
#[derive(Default)]
struct Slot {
    /// Its job's `started` record is written (at the model's first sign of life: with
    /// `--jobs`, a model may wait for its place).
    begun: bool,
    /// When it had its `--jobs` place (`None`: it never had one).
    started: Option<Instant>,
    /// When its workspace was ready (`None`: it never started).
    ready: Option<Instant>,
    /// The model ended (and its change set).
    finished: Option<(FinishedModel, Result<ChangeSet, String>)>,
    /// Its criteria are being checked.
    checking: bool,
    /// Done: finished and recorded, or interrupted.
    done: bool,
}

/// The result of one cell's criteria check, sent back from its task.
struct Checked {
    entry: usize,
    results: Result<Vec<CriterionResult>, criteria::Cancelled>,
    changes: ChangeSetReport,
    kept: Option<String>,
}

/// Runs every turn, in task order; stops early on cancellation or a write failure.
pub(super) async fn run(
    shared: &Shared,
    turns: &[TaskTurn],
    handle: &EngineHandle,
    events: &mut EngineEvents,
    collector: &mut Collector<'_>,
) -> Result<(), HeadlessError> {
    let mut tick = tokio::time::interval(TICK);
    let mut turns_done = 0;
    // A reopened session: its last turn's models come back first (nothing to report here).
    let mut restoring = shared.restored_models;
    while restoring > 0 {
        match events.recv().await {
            Some(EngineEvent::ModelFinished { .. }) => restoring -= 1,
            Some(_) => {}
            None => break,
        }
    }
    let sequential = shared.recipe.task_mode() == TaskMode::Sequential;
    for (position, turn) in turns.iter().enumerate() {
        if shared.cancel.is_cancelled() || collector.failure.is_some() {
            break;
        }
        let continues = sequential && position > 0;
        // A job starts afresh. The jobs of a batched turn do by themselves (the engine gives
        // them no history); a turn of one prompt continues each model's conversation, so a
        // resumed run clears the cut-off attempt's first, once.
        if shared.resumed_session && position == 0 && !turn.batched {
            let _ = handle.submit(Op::Clear);
        }
        run_turn(
            shared, turn, continues, handle, events, collector, &mut tick,
        )
        .await?;
        turns_done = position + 1;
    }
    for turn in &turns[turns_done.min(turns.len())..] {
        for &cell in &turn.cells {
            collector.interrupted(cell);
        }
    }
    Ok(())
}

/// What the engine is asked for one turn: one entry per cell; a batched turn names each
/// task's prompt and entries.
fn turn_request(shared: &Shared, task_turn: &TaskTurn, continues: bool) -> TurnRequest {
    let recipe_tasks = shared.recipe.tasks();
    let prompt_of = |task: usize| {
        recipe_tasks
            .get(task)
            .map(|t| t.prompt.clone())
            .unwrap_or_default()
    };
    let name_of = |task: usize| {
        recipe_tasks
            .get(task)
            .map(|t| t.name.clone())
            .unwrap_or_default()
    };
    let targets: Vec<TurnTarget> = task_turn
        .cells
        .iter()
        .filter_map(|&(_, m)| shared.targets.get(m).cloned())
        .collect();
    let mut tasks: Vec<TurnTask> = Vec::new();
    if task_turn.batched {
        for (entry, &(task, _)) in task_turn.cells.iter().enumerate() {
            match tasks.last_mut() {
                Some(last) if last.name == name_of(task) => last.entries.push(entry),
                _ => tasks.push(TurnTask {
                    name: name_of(task),
                    prompt: prompt_of(task),
                    entries: vec![entry],
                }),
            }
        }
    }
    let prompt = match tasks.as_slice() {
        [] => task_turn
            .cells
            .first()
            .map(|&(task, _)| prompt_of(task))
            .unwrap_or_default(),
        [one] => one.prompt.clone(),
        several => format!(
            "{} tasks: {}",
            several.len(),
            several
                .iter()
                .map(|t| t.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut options = shared.options.clone();
    options.spill_dir = match task_turn.cells.first() {
        Some(&(task, _)) if !task_turn.batched => shared.layout.path(&format!("spill/{task}")),
        _ => shared.layout.path("spill"),
    };
    TurnRequest {
        prompt,
        attached: String::new(),
        targets,
        options,
        policy: history_policy(&shared.recipe),
        check: None,
        history_line: None,
        workspaces: TurnWorkspaces {
            continue_previous: continues,
            keep: shared.recipe.workspace.keep,
        },
        tasks,
        context: shared.context.clone(),
    }
}

#[allow(clippy::too_many_arguments)]
async fn run_turn(
    shared: &Shared,
    task_turn: &TaskTurn,
    continues: bool,
    handle: &EngineHandle,
    events: &mut EngineEvents,
    collector: &mut Collector<'_>,
    tick: &mut tokio::time::Interval,
) -> Result<(), HeadlessError> {
    let cell = |entry: usize| task_turn.cells.get(entry).copied().unwrap_or((0, 0));
    handle
        .submit(Op::StartTurn(turn_request(shared, task_turn, continues)))
        .map_err(HeadlessError::Session)?;
    let mut turn: Option<u32> = None;
    let mut slots: Vec<Slot> = task_turn.cells.iter().map(|_| Slot::default()).collect();
    let mut ended = false;
    let (checked_tx, mut checked_rx) = mpsc::unbounded_channel::<Checked>();
    let mut cancelled = false;
    let live = collector.progress_is_live();
    // A `run:` criterion runs in the workspace; a kept one is named in the report.
    let needs_workspace = shared.recipe.workspace.keep
        || shared
            .recipe
            .criteria()
            .iter()
            .any(|c| matches!(c, crate::recipe::Criterion::Run { .. }));
    // A workspace is let go once its criteria are checked, unless the next task continues
    // in it (sequential).
    let release = shared.recipe.task_mode() != TaskMode::Sequential;
    // The entries whose workspace was asked for, in order: the engine answers in that order.
    let mut asked: std::collections::VecDeque<usize> = std::collections::VecDeque::new();
    // A job starts when its model first shows up (its earlier results are void from then).
    let begin = |slots: &mut [Slot], entry: usize, collector: &mut Collector<'_>| {
        let Some(slot) = slots.get_mut(entry).filter(|s| !s.begun) else {
            return Ok(());
        };
        slot.begun = true;
        let here = cell(entry);
        match task_turn.starts.iter().find(|(c, _)| *c == here) {
            Some((_, tasks)) => collector.started(here.1, tasks),
            None => Ok(()),
        }
    };
    // Cells not done yet (counted, not searched: a turn holds hundreds).
    let mut open = slots.len();
    loop {
        if ended && open == 0 {
            break;
        }
        tokio::select! {
            event = events.recv() => {
                let Some(event) = event else {
                    // The engine is gone: nothing more will come.
                    for (entry, slot) in slots.iter_mut().enumerate() {
                        if !slot.done {
                            slot.done = true;
                            collector.interrupted(cell(entry));
                        }
                    }
                    break;
                };
                match event {
                    EngineEvent::TurnStarted { turn: t, .. } => turn = Some(t),
                    // A comparison whose models were not given the same says so.
                    EngineEvent::TurnContext { turn: t, ledger, .. }
                        if Some(t) == turn && ledger.iter().any(|e| !e.differs.is_empty()) =>
                    {
                        for text in crate::engine::fairness_lines(&ledger, &|l| l.to_string()) {
                            collector.note(&format!("versus: warning: {text}"));
                        }
                    }
                    EngineEvent::Notice(text) => collector.note(&format!("versus: {text}")),
                    // It has its `--jobs` place: until now it only waited.
                    EngineEvent::ModelStarted { turn: t, entry } if Some(t) == turn => {
                        begin(&mut slots, entry, collector)?;
                        if let Some(slot) = slots.get_mut(entry) {
                            slot.started = Some(Instant::now());
                        }
                        collector.phase(cell(entry), Phase::Preparing);
                    }
                    EngineEvent::WorkspaceReady { turn: t, entry, .. } if Some(t) == turn => {
                        begin(&mut slots, entry, collector)?;
                        if let Some(slot) = slots.get_mut(entry) {
                            slot.ready = Some(Instant::now());
                        }
                        collector.phase(cell(entry), Phase::Running);
                    }
                    EngineEvent::Agent { turn: t, entry, event } if Some(t) == turn => {
                        begin(&mut slots, entry, collector)?;
                        collector.agent(cell(entry), &event)?;
                    }
                    EngineEvent::ModelFinished { turn: t, model, change_set } if Some(t) == turn => {
                        let entry = model.entry;
                        begin(&mut slots, entry, collector)?;
                        collector.phase(cell(entry), Phase::Checking);
                        let set = change_set.map_err(|e| e.to_string());
                        if let Some(slot) = slots.get_mut(entry) {
                            slot.finished = Some((model, set));
                            slot.checking = true;
                        }
                        // Criteria that run no command need no workspace: checked at once.
                        if !needs_workspace {
                            check(shared, &slots, entry, None, &checked_tx);
                            continue;
                        }
                        // Its workspace, for the criteria (answered by `Workspace` or, when
                        // there is none, `Failed`).
                        asked.push_back(entry);
                        if handle.submit(Op::EntryWorkspace { turn: t, entry }).is_err() {
                            asked.pop_back();
                            check(shared, &slots, entry, None, &checked_tx);
                        }
                    }
                    EngineEvent::Workspace { root, sandbox, .. } => {
                        if let Some(entry) = asked.pop_front() {
                            check(shared, &slots, entry, Some((root, sandbox)), &checked_tx);
                        }
                    }
                    // No workspace left (a model that could not prepare one).
                    EngineEvent::Failed { op: OpKind::OpenWorkspace, .. } => {
                        if let Some(entry) = asked.pop_front() {
                            check(shared, &slots, entry, None, &checked_tx);
                        }
                    }
                    EngineEvent::Failed { op: OpKind::StartTurn, error } => {
                        return Err(HeadlessError::Session(error));
                    }
                    EngineEvent::TurnEnded { turn: t, .. } if Some(t) == turn => ended = true,
                    _ => {}
                }
            }
            Some(done) = checked_rx.recv() => {
                let entry = done.entry;
                let Some(slot) = slots.get_mut(entry).filter(|s| !s.done) else { continue };
                slot.checking = false;
                slot.done = true;
                open -= 1;
                if release && let Some(t) = turn {
                    let _ = handle.submit(Op::ReleaseWorkspace { turn: t, entry });
                }
                let finished = slot.finished.take();
                match (done.results, finished) {
                    (Ok(results), Some((model, set))) if !shared.cancel.is_cancelled() => {
                        // Creating the workspace and running the setup command, from the
                        // moment the model had its place.
                        let workspace_ms = slot.ready.zip(slot.started).map_or(0, |(ready, started)| {
                            millis(ready.saturating_duration_since(started))
                        });
                        let run = model_run(shared, cell(entry), &model, set.err(), slot.ready.is_some(), done.changes, results, done.kept, workspace_ms);
                        collector.finished(cell(entry), run)?;
                    }
                    _ => collector.interrupted(cell(entry)),
                }
            }
            () = shared.cancel.cancelled(), if !cancelled => {
                cancelled = true;
                let _ = handle.submit(Op::CancelAll);
            }
            _ = tick.tick(), if live => collector.tick(),
        }
        if collector.failure.is_some() && !cancelled {
            cancelled = true;
            shared.cancel.cancel();
            let _ = handle.submit(Op::CancelAll);
        }
    }
    Ok(())
}

/// Checks the criteria of `entry` in its workspace (`None`: it has none), in a task of its
/// own; the result comes back on `tx`.
fn check(
    shared: &Shared,
    slots: &[Slot],
    entry: usize,
    workspace: Option<(PathBuf, Sandbox)>,
    tx: &mpsc::UnboundedSender<Checked>,
) {
    let Some((model, set)) = slots.get(entry).and_then(|s| s.finished.as_ref()) else {
        return;
    };
    let never_started = slots.get(entry).is_some_and(|s| s.ready.is_none());
    let mut changes = match set {
        Ok(set) => report_of(set),
        Err(_) => ChangeSetReport::default(),
    };
    changes.notes = model.scan_notes.clone();
    let error = error_of(model, set.as_ref().err());
    let criteria = shared.recipe.criteria().to_vec();
    let stats = model.stats.clone();
    let final_text = model.final_text.clone();
    let stop = (!never_started).then_some(model.stop);
    let cancel = shared.cancel.clone();
    let unavailable = shared.commands_unavailable.clone();
    let kept = workspace
        .as_ref()
        .filter(|_| shared.recipe.workspace.keep)
        .map(|(root, _)| root.display().to_string());
    let tx = tx.clone();
    tokio::spawn(async move {
        let facts = Facts {
            stop,
            error: error.as_deref(),
            final_text: &final_text,
            stats: &stats,
            changes: &changes,
            workspace: workspace
                .as_ref()
                .map(|(root, sandbox)| (root.as_path(), sandbox)),
            commands_unavailable: unavailable.as_deref(),
        };
        let results = criteria::check_all(&criteria, &facts, &cancel).await;
        let _ = tx.send(Checked {
            entry,
            results,
            changes,
            kept,
        });
    });
}

/// The run's error: the model's (agent, workspace, setup), else its change set's. What the
/// engine appended to the model's error (what the scan left out, build output proposed) is
/// not an error of the run: the report gives it apart (`change_set.notes`, `build_output`).
fn error_of(model: &FinishedModel, change_set: Option<&String>) -> Option<String> {
    let own = match &model.error {
        Some(error) if !model.notes.is_empty() => {
            let notes = model.notes.join("; ");
            if *error == notes {
                None
            } else {
                Some(
                    error
                        .strip_suffix(&format!("; {notes}"))
                        .unwrap_or(error)
                        .to_string(),
                )
            }
        }
        other => other.clone(),
    };
    own.or_else(|| change_set.map(|err| format!("the change set could not be built: {err}")))
}

/// A finished cell as the report holds it.
#[allow(clippy::too_many_arguments)]
fn model_run(
    shared: &Shared,
    (task, model_position): Cell,
    model: &FinishedModel,
    change_error: Option<String>,
    started: bool,
    mut change_set: ChangeSetReport,
    results: Vec<CriterionResult>,
    kept: Option<String>,
    workspace_ms: u64,
) -> ModelRun {
    change_set.diff_file = shared.layout.diff_rel(task, model_position);
    let passed = results.iter().filter(|r| r.passed).count();
    let total = results.len();
    let stats: &RunStats = &model.stats;
    let usage = &stats.usage;
    ModelRun {
        model: model.label.clone(),
        task: shared
            .recipe
            .tasks()
            .get(task)
            .map_or_else(String::new, |t| t.name.clone()),
        status: if results.iter().any(|r| r.error) {
            RunStatus::Error
        } else if passed == total {
            RunStatus::Passed
        } else {
            RunStatus::Failed
        },
        stop_reason: started.then_some(model.stop),
        error: error_of(model, change_error.as_ref()),
        steps: stats.steps,
        tokens: Tokens {
            input: usage.input,
            output: usage.output,
            cache_read: usage.cache_read,
            cache_write: usage.cache_write,
            reasoning: usage.reasoning,
            unreported: usage.unreported,
        },
        cost_usd: stats.cost,
        latency_ms: stats.elapsed_ms,
        time_to_first_token_ms: stats.first_token_ms,
        workspace_ms,
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
        final_text: model.final_text.clone(),
        events_file: shared.layout.events_rel(task, model_position),
        workspace: kept,
    }
}

/// The recipe's `## Context` as the engine's one history policy.
pub(super) fn history_policy(recipe: &Recipe) -> HistoryPolicy {
    HistoryPolicy {
        compact_at: match recipe.context.strategy {
            CompactStrategy::AutoCompact => Some(recipe.context.compact_threshold),
            CompactStrategy::Manual | CompactStrategy::Off => None,
        },
        max_turns: recipe.context.max_history_turns,
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

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::headless::plan::Plan;

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

    #[test]
    fn independent_jobs_share_turns_and_sequential_chains_get_one_per_task() {
        let plan = Plan::new(TaskMode::Independent, 2, 3);
        let done = [(0, 1)].into_iter().collect();
        let turns = task_turns(&plan.remaining(&done), 2, TaskMode::Independent, 2);
        assert_eq!(turns.len(), 1, "both tasks' jobs run in one turn");
        assert!(turns[0].batched);
        assert_eq!(turns[0].cells, vec![(0, 0), (0, 2), (1, 0), (1, 1), (1, 2)]);
        assert_eq!(
            turns[0].starts,
            vec![
                ((0, 0), vec![0]),
                ((0, 2), vec![0]),
                ((1, 0), vec![1]),
                ((1, 1), vec![1]),
                ((1, 2), vec![1])
            ]
        );
        // Many tasks: whole tasks, at most BATCH_JOBS jobs a turn.
        let tasks = BATCH_JOBS; // two models: two turns
        let plan = Plan::new(TaskMode::Independent, tasks, 2);
        let turns = task_turns(
            &plan.remaining(&Default::default()),
            tasks,
            TaskMode::Independent,
            16,
        );
        assert_eq!(turns.len(), 2);
        assert!(turns.iter().all(|t| t.cells.len() == BATCH_JOBS));
        assert_eq!(turns[1].cells[0], (BATCH_JOBS / 2, 0));
        // One task: a plain turn (the same records as `versus ask`).
        let one = Plan::new(TaskMode::Independent, 1, 2);
        let turns = task_turns(
            &one.remaining(&Default::default()),
            1,
            TaskMode::Independent,
            2,
        );
        assert!(!turns[0].batched);
        let chain = Plan::new(TaskMode::Sequential, 3, 2);
        let done = [(0, 0), (1, 0), (2, 0), (0, 1)].into_iter().collect();
        let turns = task_turns(&chain.remaining(&done), 3, TaskMode::Sequential, 2);
        assert_eq!(
            turns.len(),
            3,
            "a cut-off chain runs again from its first task"
        );
        assert!(turns.iter().all(|t| !t.batched));
        assert_eq!(turns[0].cells, vec![(0, 1)]);
        assert_eq!(turns[2].cells, vec![(2, 1)]);
        assert_eq!(turns[0].starts, vec![((0, 1), vec![0, 1, 2])]);
        assert!(turns[1].starts.is_empty());
    }
}
