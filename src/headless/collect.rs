//! The collector: the one writer of the output folder while jobs run.
//!
//! Jobs send [`JobEvent`]s; the collector turns each into files, in the order they arrive:
//! raw agent events into `events/<task>/<model>.jsonl`, a `step` checkpoint record after every
//! model step, and for a finished cell first its diff file and then its `finished` record, so a
//! record in the checkpoint always has its files. It also drives the progress display. Being
//! the only writer, it needs no locks, and two jobs can never interleave half-lines.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use crate::model::AgentEvent;

use super::HeadlessError;
use super::checkpoint::{Checkpoint, Record};
use super::job::JobEvent;
use super::layout::Layout;
use super::plan::Cell;
use super::progress::Progress;

/// The one writer of the output folder while jobs run.
pub(super) struct Collector<'a> {
    checkpoint: &'a mut Checkpoint,
    layout: &'a Layout,
    tasks: &'a [String],
    labels: &'a [String],
    events: BTreeMap<Cell, BufWriter<File>>,
    /// The display.
    pub progress: &'a mut Progress,
    /// The first write that failed; the run is cancelled when it happens.
    pub failure: Option<HeadlessError>,
}

impl<'a> Collector<'a> {
    /// A collector writing into `layout` for these task and model names.
    pub fn new(
        checkpoint: &'a mut Checkpoint,
        layout: &'a Layout,
        tasks: &'a [String],
        labels: &'a [String],
        progress: &'a mut Progress,
    ) -> Self {
        Self {
            checkpoint,
            layout,
            tasks,
            labels,
            events: BTreeMap::new(),
            progress,
            failure: None,
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
            JobEvent::Agent { cell, event } => {
                self.progress.event(cell, &event);
                self.log_event(cell, &event)?;
                if let AgentEvent::StepFinished { step, .. } = event {
                    let (task, model) = self.key(cell);
                    self.checkpoint
                        .append(&Record::Step { task, model, step })?;
                }
            }
            JobEvent::Finished { cell, run } => {
                self.close_events(cell)?;
                let path = self.layout.path(&run.change_set.diff_file);
                create_with_parents(&path)?
                    .write_all(run.change_set.diff.as_bytes())
                    .map_err(|e| HeadlessError::io("write", &path, e))?;
                self.checkpoint
                    .append(&Record::Finished { run: run.clone() })?;
                self.progress.finished(cell, &run);
            }
            JobEvent::Interrupted { cell } => {
                self.close_events(cell)?;
                self.progress.interrupted(cell);
            }
        }
        Ok(())
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
