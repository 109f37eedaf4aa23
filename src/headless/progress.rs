//! The progress display on stderr: one line per task x model with its status, step, elapsed
//! time and cost.
//!
//! Three modes, chosen by the caller:
//! - [`DisplayMode::Live`] (stderr is a terminal): the table is redrawn in place, at most a few
//!   times a second (the collector calls [`Progress::tick`]), never once per streamed token.
//!   When the table is taller than the terminal, finished and waiting rows collapse into one
//!   count line so the redraw never scrolls.
//! - [`DisplayMode::Lines`] (a pipe or a log file): one plain line per finished run, nothing
//!   redrawn, so CI logs stay readable.
//! - [`DisplayMode::Quiet`] prints nothing.
//!
//! State changes and rendering are separate: [`render`] is a pure function of the rows, the
//! time and the width, which is what the tests check.
//!
//! Task names come from the recipe and notes quote models and commands: everything goes out
//! through [`crate::sanitize`] (the raw streams are denied here); the only raw sequence is the
//! redraw's own [`Control`].
#![deny(clippy::disallowed_methods, clippy::print_stderr)]

use std::io::Write;
use std::time::{Duration, Instant};

use crate::model::AgentEvent;
use crate::sanitize::{self, Control};

use super::drive::Phase;
use super::plan::Cell;
use super::report::{ModelRun, RunStatus};

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DisplayMode {
    /// Redrawn in place (a terminal).
    Live,
    /// One line per finished run (not a terminal).
    Lines,
    /// Nothing.
    Quiet,
}

/// Where one cell is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Status {
    /// Not started.
    Waiting,
    /// Workspace and setup.
    Preparing,
    /// The model is working.
    Running,
    /// Change set and criteria.
    Checking,
    /// Finished (in this process or an earlier one).
    Done {
        /// Passed or failed.
        status: RunStatus,
        /// Criteria passed.
        passed: usize,
        /// Criteria checked.
        total: usize,
    },
    /// Stopped by Ctrl+C / SIGTERM.
    Interrupted,
}

/// One line of the display.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Task name.
    pub task: String,
    /// Model entry.
    pub model: String,
    /// Where it is.
    pub status: Status,
    /// Current (or last) step.
    pub step: u32,
    /// When it started in this process.
    pub started: Option<Instant>,
    /// Its time, once finished.
    pub elapsed: Option<Duration>,
    /// Cost so far (`None`: unknown price).
    pub cost: Option<f64>,
}

/// The display.
#[derive(Debug)]
pub struct Progress {
    mode: DisplayMode,
    rows: Vec<Row>,
    models: usize,
    widths: (usize, usize),
    drawn: usize,
    dirty: bool,
}

impl Progress {
    /// A display for every task x model (rows task by task, models in order).
    pub fn new(mode: DisplayMode, tasks: &[String], models: &[String]) -> Self {
        // Names as they will be shown (one escaped line each), so widths count what is drawn.
        let tasks: Vec<String> = tasks
            .iter()
            .map(|t| sanitize::line(t).to_string())
            .collect();
        let models: Vec<String> = models
            .iter()
            .map(|m| sanitize::line(m).to_string())
            .collect();
        let rows = tasks
            .iter()
            .flat_map(|task| {
                models.iter().map(move |model| Row {
                    task: task.clone(),
                    model: model.clone(),
                    status: Status::Waiting,
                    step: 0,
                    started: None,
                    elapsed: None,
                    cost: Some(0.0),
                })
            })
            .collect();
        let widths = (
            tasks.iter().map(|t| t.chars().count()).max().unwrap_or(0),
            models.iter().map(|m| m.chars().count()).max().unwrap_or(0),
        );
        Self {
            mode,
            rows,
            models: models.len(),
            widths,
            drawn: 0,
            dirty: true,
        }
    }

    fn row(&mut self, (task, model): Cell) -> Option<&mut Row> {
        self.dirty = true;
        self.rows.get_mut(task * self.models + model)
    }

    /// A message above the table (warnings, notes).
    pub fn note(&mut self, text: &str) {
        if self.mode == DisplayMode::Quiet {
            return;
        }
        let mut err = sanitize::stderr();
        if self.mode == DisplayMode::Live {
            let _ = err.control(Control::ClearLinesAbove(self.drawn));
            self.drawn = 0;
            self.dirty = true;
        }
        let _ = writeln!(err, "{}", sanitize::line(text));
    }

    /// The cell finished in an earlier process (a resume).
    pub fn earlier(&mut self, cell: Cell, run: &ModelRun) {
        if let Some(row) = self.row(cell) {
            row.status = done(run);
            row.step = run.steps;
            row.elapsed = Some(Duration::from_millis(run.latency_ms));
            row.cost = run.cost_usd;
        }
    }

    /// The cell's job (re)started or moved on.
    pub fn phase(&mut self, cell: Cell, phase: Phase) {
        if let Some(row) = self.row(cell) {
            if phase == Phase::Preparing {
                row.started = Some(Instant::now());
                row.step = 0;
                row.elapsed = None;
                row.cost = Some(0.0);
            }
            row.status = match phase {
                Phase::Preparing => Status::Preparing,
                Phase::Running => Status::Running,
                Phase::Checking => Status::Checking,
            };
        }
    }

    /// An agent event of the cell (steps and cost).
    pub fn event(&mut self, cell: Cell, event: &AgentEvent) {
        match event {
            AgentEvent::StepStarted { step } => {
                if let Some(row) = self.row(cell) {
                    row.step = *step;
                }
            }
            AgentEvent::Usage { cost, .. } => {
                if let Some(row) = self.row(cell) {
                    row.cost = *cost;
                }
            }
            _ => {}
        }
    }

    /// The cell finished in this process.
    pub fn finished(&mut self, cell: Cell, run: &ModelRun) {
        let (task_w, model_w) = self.widths;
        let line = match self.row(cell) {
            Some(row) => {
                row.status = done(run);
                row.step = run.steps;
                row.elapsed = row.started.map(|s| s.elapsed());
                row.cost = run.cost_usd;
                Some(line(row, Instant::now(), task_w, model_w))
            }
            None => None,
        };
        if self.mode == DisplayMode::Lines
            && let Some(line) = line
        {
            let _ = writeln!(sanitize::stderr(), "{}", line.trim_end());
        }
    }

    /// The cell was stopped by cancellation.
    pub fn interrupted(&mut self, cell: Cell) {
        if let Some(row) = self.row(cell) {
            row.status = Status::Interrupted;
            row.elapsed = row.started.map(|s| s.elapsed());
        }
    }

    /// Redraws the live table when something changed or a running clock moved.
    pub fn tick(&mut self) {
        if self.mode != DisplayMode::Live {
            return;
        }
        let running = self.rows.iter().any(|r| {
            matches!(
                r.status,
                Status::Preparing | Status::Running | Status::Checking
            )
        });
        if !(self.dirty || running) {
            return;
        }
        let (width, height) = terminal_size();
        let lines = render(&self.rows, Instant::now(), width, height.saturating_sub(1));
        let mut out = String::new();
        for l in &lines {
            out.push_str(l);
            out.push('\n');
        }
        let mut err = sanitize::stderr();
        let _ = err.control(Control::ClearLinesAbove(self.drawn));
        let _ = write!(err, "{out}");
        let _ = err.flush();
        self.drawn = lines.len();
        self.dirty = false;
    }

    /// The last redraw.
    pub fn finish(&mut self) {
        self.dirty = true;
        self.tick();
    }

    /// The rows, for tests.
    #[cfg(test)]
    pub fn rows(&self) -> &[Row] {
        &self.rows
    }
}

fn done(run: &ModelRun) -> Status {
    Status::Done {
        status: run.status,
        passed: run.criteria_passed,
        total: run.criteria_total,
    }
}

fn terminal_size() -> (usize, usize) {
    crossterm::terminal::size()
        .map(|(w, h)| (usize::from(w), usize::from(h)))
        .unwrap_or((100, 40))
}

/// The table's lines for `width` columns and at most `height` lines (0 = no limit): every row
/// when they fit; else the running rows and one line counting the others.
pub fn render(rows: &[Row], now: Instant, width: usize, height: usize) -> Vec<String> {
    let task_w = rows
        .iter()
        .map(|r| r.task.chars().count())
        .max()
        .unwrap_or(0);
    let model_w = rows
        .iter()
        .map(|r| r.model.chars().count())
        .max()
        .unwrap_or(0);
    let fit = |l: String| cut(&l, width);
    if height == 0 || rows.len() <= height {
        return rows
            .iter()
            .map(|r| fit(line(r, now, task_w, model_w)))
            .collect();
    }
    let active: Vec<&Row> = rows
        .iter()
        .filter(|r| {
            matches!(
                r.status,
                Status::Preparing | Status::Running | Status::Checking
            )
        })
        .collect();
    let finished = rows
        .iter()
        .filter(|r| matches!(r.status, Status::Done { .. }))
        .count();
    let failed = rows
        .iter()
        .filter(|r| {
            matches!(
                r.status,
                Status::Done {
                    status: RunStatus::Failed,
                    ..
                }
            )
        })
        .count();
    let waiting = rows.len() - finished - active.len();
    let mut out = vec![fit(format!(
        "{finished} done ({failed} failed), {} running, {waiting} waiting",
        active.len()
    ))];
    for row in active.iter().take(height.saturating_sub(1)) {
        out.push(fit(line(row, now, task_w, model_w)));
    }
    out
}

/// One row as text: task, model, status, step, elapsed, cost.
fn line(row: &Row, now: Instant, task_w: usize, model_w: usize) -> String {
    let status = match row.status {
        Status::Waiting => "waiting".to_string(),
        Status::Preparing => "preparing".to_string(),
        Status::Running => "running".to_string(),
        Status::Checking => "checking".to_string(),
        Status::Done {
            status,
            passed,
            total,
        } => format!("{} {passed}/{total}", status.label()),
        Status::Interrupted => "interrupted".to_string(),
    };
    let elapsed = match (row.elapsed, row.started) {
        (Some(d), _) => seconds(d),
        (None, Some(start)) => seconds(now.saturating_duration_since(start)),
        (None, None) => "-".to_string(),
    };
    let cost = match row.cost {
        Some(c) => format!("${c:.4}"),
        None => "$?".to_string(),
    };
    let step = if row.step == 0 {
        "-".to_string()
    } else {
        format!("step {}", row.step)
    };
    format!(
        "{task:<task_w$}  {model:<model_w$}  {status:<14} {step:<9} {elapsed:>7}  {cost}",
        task = row.task,
        model = row.model
    )
}

fn seconds(d: Duration) -> String {
    format!("{:.1}s", d.as_secs_f64())
}

/// `text` cut to `width` characters (0 = no limit), so a redraw never wraps.
fn cut(text: &str, width: usize) -> String {
    if width == 0 || text.chars().count() <= width {
        text.to_string()
    } else {
        text.chars().take(width).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(n: usize) -> Vec<Row> {
        (0..n)
            .map(|i| Row {
                task: format!("task-{i}"),
                model: "demo/good".to_string(),
                status: Status::Waiting,
                step: 0,
                started: None,
                elapsed: None,
                cost: Some(0.0),
            })
            .collect()
    }

    #[test]
    fn every_row_shows_status_step_elapsed_and_cost() {
        let now = Instant::now();
        let mut r = rows(2);
        r[0].status = Status::Running;
        r[0].step = 3;
        r[0].started = Some(now - Duration::from_millis(2500));
        r[0].cost = Some(0.0125);
        r[1].status = Status::Done {
            status: RunStatus::Failed,
            passed: 2,
            total: 4,
        };
        r[1].elapsed = Some(Duration::from_secs(1));
        r[1].cost = None;
        let lines = render(&r, now, 0, 0);
        assert_eq!(lines.len(), 2);
        assert!(lines[0].contains("running"), "{}", lines[0]);
        assert!(lines[0].contains("step 3"), "{}", lines[0]);
        assert!(lines[0].contains("2.5s"), "{}", lines[0]);
        assert!(lines[0].contains("$0.0125"), "{}", lines[0]);
        assert!(lines[1].contains("failed 2/4"), "{}", lines[1]);
        assert!(lines[1].ends_with("$?"), "{}", lines[1]);
    }

    #[test]
    fn a_tall_table_collapses_to_running_rows_and_counts() {
        let now = Instant::now();
        let mut r = rows(10);
        r[4].status = Status::Running;
        r[0].status = Status::Done {
            status: RunStatus::Passed,
            passed: 1,
            total: 1,
        };
        let lines = render(&r, now, 0, 5);
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0], "1 done (0 failed), 1 running, 8 waiting");
        assert!(lines[1].starts_with("task-4"));
    }

    #[test]
    fn lines_are_cut_to_the_width() {
        let lines = render(&rows(1), Instant::now(), 10, 0);
        assert_eq!(lines[0].chars().count(), 10);
    }

    #[test]
    fn cells_map_to_rows_task_by_task() {
        let tasks = vec!["a".to_string(), "b".to_string()];
        let models = vec!["m1".to_string(), "m2".to_string()];
        let mut p = Progress::new(DisplayMode::Quiet, &tasks, &models);
        p.phase((1, 0), Phase::Running);
        p.event((1, 0), &AgentEvent::StepStarted { step: 2 });
        let row = &p.rows()[2];
        assert_eq!((row.task.as_str(), row.model.as_str()), ("b", "m1"));
        assert_eq!(row.status, Status::Running);
        assert_eq!(row.step, 2);
    }
}
