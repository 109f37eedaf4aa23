//! The collector: the one writer of the output folder while jobs run.
//!
//! Jobs send [`JobEvent`]s; the collector turns each into files, in the order they arrive:
//! raw agent events into `events/<task>/<model>.jsonl`, a `step` checkpoint record after every
//! model step, and for a finished cell first its diff file and then its `finished` record, so a
//! record in the checkpoint always has its files. It also drives the progress display, and
//! records every task as a turn of the run's session (`.versus/sessions/`) through the session
//! engine, with the same records `versus ask` and the TUI write. Being the only writer, it
//! needs no locks, and two jobs can never interleave half-lines.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::Arc;

use crate::engine::{Finish, SessionEngine};
use crate::model::{AgentEvent, ToolOutcome, call_target};
use crate::workspace::Base;

use super::HeadlessError;
use super::checkpoint::{Checkpoint, Record};
use super::execute::Turns;
use super::job::JobEvent;
use super::layout::Layout;
use super::plan::Cell;
use super::progress::Progress;
use super::report::ToolCallReport;

/// The one writer of the output folder while jobs run.
pub(super) struct Collector<'a> {
    checkpoint: &'a mut Checkpoint,
    layout: &'a Layout,
    tasks: &'a [String],
    labels: &'a [String],
    events: BTreeMap<Cell, BufWriter<File>>,
    /// The run's session: each task is a turn.
    session: &'a mut SessionEngine,
    /// The session turn of each task this process runs.
    turns: Turns,
    /// The project as the run started.
    base: Arc<Base>,
    /// Cells of each task still to end in this process.
    open_cells: BTreeMap<usize, usize>,
    /// The display.
    pub progress: &'a mut Progress,
    /// The first write that failed; the run is cancelled when it happens.
    pub failure: Option<HeadlessError>,
    /// The tool calls of each running cell so far, for its report.
    calls: BTreeMap<Cell, Vec<OpenCall>>,
}

/// A tool call seen in a cell's events: its id and target until its result arrives.
struct OpenCall {
    id: String,
    target: String,
    report: Option<ToolCallReport>,
}

impl<'a> Collector<'a> {
    /// A collector writing into `layout` for these task and model names; `turns` are the
    /// session turns of the cells this process runs.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        checkpoint: &'a mut Checkpoint,
        layout: &'a Layout,
        tasks: &'a [String],
        labels: &'a [String],
        session: &'a mut SessionEngine,
        turns: Turns,
        base: Arc<Base>,
        progress: &'a mut Progress,
    ) -> Self {
        let open_cells = turns.cells_of().map(|(task, _, n)| (task, n)).collect();
        Self {
            checkpoint,
            layout,
            tasks,
            labels,
            events: BTreeMap::new(),
            session,
            turns,
            base,
            open_cells,
            progress,
            failure: None,
            calls: BTreeMap::new(),
        }
    }

    /// One cell of `task` ended (finished or interrupted): the last one ends the turn.
    fn cell_ended(&mut self, task: usize) {
        if let Some(left) = self.open_cells.get_mut(&task) {
            *left = left.saturating_sub(1);
            if *left == 0 {
                self.open_cells.remove(&task);
                let (turn, _) = self.turns.of((task, 0));
                self.session.record_turn_end(turn);
            }
        }
    }

    /// Handles one event; a failure is kept in [`Collector::failure`].
    pub fn handle(&mut self, event: JobEvent) {
        if let Err(err) = self.try_handle(event)
            && self.failure.is_none()
        {
            self.failure = Some(err);
        }
    }

    fn key(&self, (task, model): Cell) -> (String, String) {
        (
            self.tasks.get(task).cloned().unwrap_or_default(),
            self.labels.get(model).cloned().unwrap_or_default(),
        )
    }

    fn try_handle(&mut self, event: JobEvent) -> Result<(), HeadlessError> {
        match event {
            JobEvent::Started { job } => {
                let model = self.labels.get(job.model).cloned().unwrap_or_default();
                let tasks = job
                    .tasks
                    .iter()
                    .map(|&t| self.tasks.get(t).cloned().unwrap_or_default())
                    .collect();
                self.checkpoint.append(&Record::Started { model, tasks })?;
                for cell in job.cells() {
                    let path = self.layout.path(&self.layout.events_rel(cell.0, cell.1));
                    let file = create_with_parents(&path)?;
                    self.events.insert(cell, BufWriter::new(file));
                }
            }
            JobEvent::Phase { cell, phase } => self.progress.phase(cell, phase),
            JobEvent::Workspace { cell, root, mode } => {
                let (turn, entry) = self.turns.of(cell);
                self.session.record_workspace(turn, entry, &root, mode);
            }
            JobEvent::Agent { cell, event } => {
                self.note_call(cell, &event);
                self.progress.event(cell, &event);
                let label = self.key(cell).1;
                let (turn, entry) = self.turns.of(cell);
                self.session.record_agent(turn, entry, &label, &event);
                self.log_event(cell, &event)?;
                if let AgentEvent::StepFinished { step, .. } = event {
                    let (task, model) = self.key(cell);
                    self.checkpoint
                        .append(&Record::Step { task, model, step })?;
                }
            }
            JobEvent::Finished {
                cell,
                mut run,
                output,
            } => {
                run.tool_results = self
                    .calls
                    .remove(&cell)
                    .unwrap_or_default()
                    .into_iter()
                    .filter_map(|c| c.report)
                    .collect();
                self.close_events(cell)?;
                let label = self.key(cell).1;
                let base = Arc::clone(&self.base);
                let (turn, entry) = self.turns.of(cell);
                self.session.record_finished(
                    turn,
                    entry,
                    &label,
                    Finish {
                        outcome: output.outcome.as_ref(),
                        writes: &output.writes,
                        error: output.error.clone(),
                        base: Some(&base),
                    },
                );
                self.cell_ended(cell.0);
                let path = self.layout.path(&run.change_set.diff_file);
                create_with_parents(&path)?
                    .write_all(run.change_set.diff.as_bytes())
                    .map_err(|e| HeadlessError::io("write", &path, e))?;
                self.checkpoint
                    .append(&Record::Finished { run: run.clone() })?;
                self.progress.finished(cell, &run);
            }
            JobEvent::Interrupted { cell } => {
                self.calls.remove(&cell);
                self.close_events(cell)?;
                self.cell_ended(cell.0);
                self.progress.interrupted(cell);
            }
        }
        Ok(())
    }

    /// Keeps what a cell's event says about its tool calls, for the cell's report.
    fn note_call(&mut self, cell: Cell, event: &AgentEvent) {
        let calls = self.calls.entry(cell).or_default();
        match event {
            AgentEvent::ToolCallReady { id, arguments, .. } => calls.push(OpenCall {
                id: id.clone(),
                target: call_target(arguments, 200),
                report: None,
            }),
            AgentEvent::ToolResult {
                id,
                name,
                is_error,
                duration_ms,
                outcome,
                output,
                ..
            } => {
                let outcome = ToolOutcome::or_legacy(*outcome, *is_error);
                let open = calls
                    .iter_mut()
                    .rev()
                    .find(|c| c.id == *id && c.report.is_none());
                let target = open.as_ref().map(|c| c.target.clone()).unwrap_or_default();
                let report = ToolCallReport::new(name, target, outcome, *duration_ms, output);
                match open {
                    Some(call) => call.report = Some(report),
                    None => calls.push(OpenCall {
                        id: id.clone(),
                        target: String::new(),
                        report: Some(report),
                    }),
                }
            }
            _ => {}
        }
    }

    fn log_event(&mut self, cell: Cell, event: &AgentEvent) -> Result<(), HeadlessError> {
        let path = || self.layout.path(&self.layout.events_rel(cell.0, cell.1));
        let Some(writer) = self.events.get_mut(&cell) else {
            return Ok(());
        };
        let mut line = serde_json::to_vec(event)
            .map_err(|e| HeadlessError::io("serialize an event for", &path(), e.into()))?;
        line.push(b'\n');
        writer
            .write_all(&line)
            .map_err(|e| HeadlessError::io("write", &path(), e))
    }

    fn close_events(&mut self, cell: Cell) -> Result<(), HeadlessError> {
        if let Some(mut writer) = self.events.remove(&cell) {
            let path = self.layout.path(&self.layout.events_rel(cell.0, cell.1));
            writer
                .flush()
                .map_err(|e| HeadlessError::io("write", &path, e))?;
        }
        Ok(())
    }
}

/// Creates (truncating) `path` and its folders.
fn create_with_parents(path: &Path) -> Result<File, HeadlessError> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| HeadlessError::io("create the folder", parent, e))?;
    }
    File::create(path).map_err(|e| HeadlessError::io("create", path, e))
}
