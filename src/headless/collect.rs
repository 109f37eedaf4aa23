//! The collector: the one writer of the output folder while the run's turns go.
//!
//! The driver ([`super::drive`]) hands it what the engine reports, in order: raw agent events
//! into `events/<task>/<model>.jsonl` (through [`crate::jsonl`], like every record file: a
//! version on every line, a cell's lines gathered and written at each step's end and at its
//! end, whole lines under the file's lock), a `step` checkpoint record after every model step, and
//! for a finished cell first its diff file and then its `finished` record, so a record in the
//! checkpoint always has its files. It also drives the progress display. The session log is
//! the engine's: the collector writes only the report's files.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::path::Path;

use crate::jsonl::{Appender, Format};
use crate::model::{AgentEvent, ToolOutcome, call_target};

use super::HeadlessError;
use super::checkpoint::{Checkpoint, Record};
use super::drive::Phase;
use super::layout::Layout;
use super::plan::Cell;
use super::progress::{DisplayMode, Progress};
use super::report::{ModelRun, ToolCallReport};

/// A raw event log (`events/<task>/<model>.jsonl`): one [`AgentEvent`] a line. Logs written
/// before lines carried a version have the same shapes.
pub const EVENT_LOG: Format = Format {
    name: "run event log",
    version: 1,
    unversioned: 1,
};

/// A running cell's event log: the file, and its lines not written yet.
struct CellLog {
    file: Appender,
    pending: Vec<u8>,
}

impl CellLog {
    /// Writes the lines gathered so far (whole lines, one write, under the file's lock).
    fn flush(&mut self) -> std::io::Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let result = self.file.append(&self.pending);
        self.pending.clear();
        result
    }
}

/// The most a cell's event log gathers before it is written (besides each step's end).
const PENDING_MAX: usize = 64 * 1024;

/// The one writer of the output folder while the run goes.
pub(super) struct Collector<'a> {
    checkpoint: &'a mut Checkpoint,
    layout: &'a Layout,
    tasks: &'a [String],
    labels: &'a [String],
    events: BTreeMap<Cell, CellLog>,
    /// The display.
    pub progress: &'a mut Progress,
    /// How the display is shown.
    display: DisplayMode,
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
    /// A collector writing into `layout` for these task and model names.
    pub fn new(
        checkpoint: &'a mut Checkpoint,
        layout: &'a Layout,
        tasks: &'a [String],
        labels: &'a [String],
        progress: &'a mut Progress,
        display: DisplayMode,
    ) -> Self {
        Self {
            checkpoint,
            layout,
            tasks,
            labels,
            events: BTreeMap::new(),
            progress,
            display,
            failure: None,
            calls: BTreeMap::new(),
        }
    }

    /// Whether the display is redrawn on a timer.
    pub fn progress_is_live(&self) -> bool {
        self.display == DisplayMode::Live
    }

    /// A note above the progress (a skill left out, a model given something different).
    pub fn note(&mut self, text: &str) {
        self.progress.note(text);
    }

    /// Redraws the live display.
    pub fn tick(&mut self) {
        self.progress.tick();
    }

    /// Keeps the first failure (the run is cancelled on it) and passes the result on.
    fn keep<T>(&mut self, result: Result<T, HeadlessError>) -> Result<(), HeadlessError> {
        if let Err(err) = result
            && self.failure.is_none()
        {
            self.failure = Some(err);
        }
        Ok(())
    }

    fn key(&self, (task, model): Cell) -> (String, String) {
        (
            self.tasks.get(task).cloned().unwrap_or_default(),
            self.labels.get(model).cloned().unwrap_or_default(),
        )
    }

    /// A job (re)starts: `model` on `tasks`; their earlier results are void from here on.
    pub fn started(&mut self, model: usize, tasks: &[usize]) -> Result<(), HeadlessError> {
        let result = self.try_started(model, tasks);
        self.keep(result)
    }

    fn try_started(&mut self, model: usize, tasks: &[usize]) -> Result<(), HeadlessError> {
        let label = self.labels.get(model).cloned().unwrap_or_default();
        let names = tasks
            .iter()
            .map(|&t| self.tasks.get(t).cloned().unwrap_or_default())
            .collect();
        self.checkpoint.append(&Record::Started {
            model: label,
            tasks: names,
        })?;
        for &task in tasks {
            let cell = (task, model);
            let path = self.layout.path(&self.layout.events_rel(task, model));
            // A job run again starts its log afresh.
            drop(create_with_parents(&path)?);
            let file = Appender::open(&path, &EVENT_LOG)
                .map_err(|e| HeadlessError::io("open", &path, e.into()))?;
            self.events.insert(
                cell,
                CellLog {
                    file,
                    pending: Vec::new(),
                },
            );
        }
        Ok(())
    }

    /// A cell moved to another phase.
    pub fn phase(&mut self, cell: Cell, phase: Phase) {
        self.progress.phase(cell, phase);
    }

    /// An event of a cell's agent.
    pub fn agent(&mut self, cell: Cell, event: &AgentEvent) -> Result<(), HeadlessError> {
        self.note_call(cell, event);
        self.progress.event(cell, event);
        let result = self.try_agent(cell, event);
        self.keep(result)
    }

    fn try_agent(&mut self, cell: Cell, event: &AgentEvent) -> Result<(), HeadlessError> {
        self.log_event(cell, event)?;
        if let AgentEvent::StepFinished { step, .. } = event {
            let (task, model) = self.key(cell);
            self.checkpoint.append(&Record::Step {
                task,
                model,
                step: *step,
            })?;
        }
        Ok(())
    }

    /// A cell is complete: its diff, then its checkpoint record.
    pub fn finished(&mut self, cell: Cell, mut run: ModelRun) -> Result<(), HeadlessError> {
        run.tool_results = self
            .calls
            .remove(&cell)
            .unwrap_or_default()
            .into_iter()
            .filter_map(|c| c.report)
            .collect();
        let result = self.try_finished(cell, &run);
        self.progress.finished(cell, &run);
        self.keep(result)
    }

    fn try_finished(&mut self, cell: Cell, run: &ModelRun) -> Result<(), HeadlessError> {
        self.close_events(cell)?;
        let path = self.layout.path(&run.change_set.diff_file);
        create_with_parents(&path)?
            .write_all(run.change_set.diff.as_bytes())
            .map_err(|e| HeadlessError::io("write", &path, e))?;
        self.checkpoint.append(&Record::Finished {
            run: Box::new(run.clone()),
        })
    }

    /// A cell was not finished because the run was cancelled.
    pub fn interrupted(&mut self, cell: Cell) {
        self.calls.remove(&cell);
        let result = self.close_events(cell);
        let _ = self.keep(result);
        self.progress.interrupted(cell);
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
        let Some(log) = self.events.get_mut(&cell) else {
            return Ok(());
        };
        let line = EVENT_LOG
            .encode(event)
            .map_err(|e| HeadlessError::io("serialize an event for", &path(), e.into()))?;
        log.pending.extend_from_slice(&line);
        if matches!(event, AgentEvent::StepFinished { .. }) || log.pending.len() >= PENDING_MAX {
            log.flush()
                .map_err(|e| HeadlessError::io("write", &path(), e))?;
        }
        Ok(())
    }

    fn close_events(&mut self, cell: Cell) -> Result<(), HeadlessError> {
        if let Some(mut log) = self.events.remove(&cell) {
            let path = self.layout.path(&self.layout.events_rel(cell.0, cell.1));
            log.flush()
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
