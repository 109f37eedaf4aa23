//! The checkpoint: an append-only JSON Lines log in the output folder from which an
//! interrupted run is resumed and every report is built.
//!
//! Records, in the order they happen:
//! - `header` (first line): what was asked for (recipe hash, tasks, models, project);
//! - `session`: the id of the run's session in `.versus/sessions/` (right after the header):
//!   a resume continues that session, so the session log holds every attempt of every task;
//! - `resumed`: a later process took the run over;
//! - `started`: a job (re)starts; every earlier result of its cells is void from here on;
//! - `step`: a model finished a request (written after every step, so progress survives a
//!   SIGKILL and tells how far a job had got);
//! - `finished`: one task x model run is complete, with its whole report record.
//!
//! The file is kept through [`crate::jsonl`], the one module for every record file: a version
//! first on every line, one write per line under a lock, a torn last line (a process killed
//! mid-write) removed before the next append, every line that cannot be read named by file
//! and line. Checkpoints written before lines carried a version read as version 1 (the same
//! shapes). Replaying the records in order ([`State`]) gives the finished runs of the latest
//! attempt of every job: a job cut short is simply run again from scratch, and its earlier
//! partial results are dropped by its new `started` record.

use std::collections::BTreeMap;
use std::fs::OpenOptions;
use std::path::{Path, PathBuf};

use crate::jsonl::{self, Appender, Format};

use serde::{Deserialize, Serialize};

use super::HeadlessError;
use super::report::ModelRun;

/// Version of the checkpoint format.
pub const CHECKPOINT_VERSION: u32 = 1;

/// The checkpoint as a record file: lines without a version (written before they carried one)
/// have the same shapes.
pub const CHECKPOINT: Format = Format {
    name: "run checkpoint",
    version: CHECKPOINT_VERSION,
    unversioned: 1,
};

/// What the run was asked to do (first record).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// [`CHECKPOINT_VERSION`].
    pub checkpoint_version: u32,
    /// The output folder's name.
    pub run_id: String,
    /// The recipe file as given.
    pub recipe_file: String,
    /// blake3 of the recipe file's bytes.
    pub recipe_hash: String,
    /// The recipe's name.
    pub recipe_name: String,
    /// Task names, in order.
    pub tasks: Vec<String>,
    /// The requested models, in order (skipped ones included).
    pub models: Vec<HeaderModel>,
    /// The project folder.
    pub project: String,
    /// When the run started (RFC 3339).
    pub started_at: String,
}

/// One requested model as the checkpoint remembers it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeaderModel {
    /// The model entry, e.g. `demo/good`.
    pub spec: String,
    /// Where its demo script path is read from.
    pub script_base: PathBuf,
}

/// One line of the checkpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Record {
    /// What the run is (first line).
    Header(Header),
    /// The run's session (`.versus/sessions/ID`): every task is a turn of it, and a resume
    /// appends to it. Checkpoints written before this record existed have none (their resume
    /// opens a new session).
    Session {
        /// The session id.
        id: String,
    },
    /// A later process continues the run.
    Resumed {
        /// When (RFC 3339).
        at: String,
    },
    /// A job starts (again): results of these cells recorded so far are void.
    Started {
        /// The model entry.
        model: String,
        /// The tasks of the job, in order.
        tasks: Vec<String>,
    },
    /// A model finished a request.
    Step {
        /// The task.
        task: String,
        /// The model entry.
        model: String,
        /// Step number (1-based).
        step: u32,
    },
    /// A task x model run is complete.
    Finished {
        /// The run as the report holds it.
        run: Box<ModelRun>,
    },
}

/// The checkpoint replayed: what a resume starts from.
#[derive(Debug, Clone, PartialEq)]
pub struct State {
    /// The header.
    pub header: Header,
    /// Finished runs by (task, model), from the latest attempt of each job.
    pub finished: BTreeMap<(String, String), ModelRun>,
    /// How many times the run was resumed before.
    pub resumed: u32,
    /// The last step recorded per (task, model) of the current attempts.
    pub steps: BTreeMap<(String, String), u32>,
    /// The run's session, when the checkpoint names one.
    pub session: Option<String>,
}

impl State {
    /// Replays `records` in order; `None` when the first record is not a header.
    pub fn replay(records: &[Record]) -> Option<State> {
        let Some(Record::Header(header)) = records.first() else {
            return None;
        };
        let mut state = State {
            header: header.clone(),
            finished: BTreeMap::new(),
            resumed: 0,
            steps: BTreeMap::new(),
            session: None,
        };
        for record in &records[1..] {
            match record {
                Record::Header(_) => {}
                Record::Session { id } => state.session = Some(id.clone()),
                Record::Resumed { .. } => state.resumed += 1,
                Record::Started { model, tasks } => {
                    for task in tasks {
                        let key = (task.clone(), model.clone());
                        state.finished.remove(&key);
                        state.steps.remove(&key);
                    }
                }
                Record::Step { task, model, step } => {
                    state.steps.insert((task.clone(), model.clone()), *step);
                }
                Record::Finished { run } => {
                    state
                        .finished
                        .insert((run.task.clone(), run.model.clone()), (**run).clone());
                }
            }
        }
        Some(state)
    }
}

/// Reads the checkpoint at `path`: its records, and the lines that could not be read (a torn
/// last line left by a kill, or damage, which the caller names to the user).
pub fn read(path: &Path) -> Result<jsonl::Read<Record>, HeadlessError> {
    jsonl::read(path, &CHECKPOINT).map_err(|e| HeadlessError::io("read the checkpoint", path, e))
}

/// The open checkpoint, for appending.
#[derive(Debug)]
pub struct Checkpoint {
    log: Appender,
}

impl Checkpoint {
    /// Creates the checkpoint with its header; fails if one exists.
    pub fn create(path: &Path, header: Header) -> Result<Self, HeadlessError> {
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(|e| HeadlessError::io("create the checkpoint", path, e))?;
        let mut checkpoint = Self::open_log(path)?;
        checkpoint.append(&Record::Header(header))?;
        Ok(checkpoint)
    }

    /// Opens an existing checkpoint for appending (a torn last line is removed first; one
    /// written by a newer versus is refused).
    pub fn reopen(path: &Path) -> Result<Self, HeadlessError> {
        Self::open_log(path)
    }

    fn open_log(path: &Path) -> Result<Self, HeadlessError> {
        let log = Appender::open(path, &CHECKPOINT)
            .map_err(|e| HeadlessError::io("open the checkpoint", path, e.into()))?;
        Ok(Self { log })
    }

    /// Appends one record (one `write` call; it survives the process being killed).
    pub fn append(&mut self, record: &Record) -> Result<(), HeadlessError> {
        self.log
            .append_record(&CHECKPOINT, record)
            .map_err(|e| HeadlessError::io("append to the checkpoint", self.log.path(), e))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::headless::report::{ChangeSetReport, RunStatus, Tokens};

    fn header() -> Header {
        Header {
            checkpoint_version: CHECKPOINT_VERSION,
            run_id: "r".into(),
            recipe_file: "r.md".into(),
            recipe_hash: "h".into(),
            recipe_name: "r".into(),
            tasks: vec!["a".into(), "b".into()],
            models: vec![HeaderModel {
                spec: "demo/good".into(),
                script_base: PathBuf::from("."),
            }],
            project: "/p".into(),
            started_at: "t".into(),
        }
    }

    fn run(task: &str, model: &str, steps: u32) -> ModelRun {
        ModelRun {
            model: model.into(),
            task: task.into(),
            status: RunStatus::Passed,
            stop_reason: None,
            error: None,
            steps,
            tokens: Tokens::default(),
            cost_usd: None,
            latency_ms: 0,
            time_to_first_token_ms: None,
            workspace_ms: 0,
            tool_calls: 0,
            tool_calls_by_name: BTreeMap::new(),
            tool_errors: 0,
            edit_failures: 0,
            tool_results: Vec::new(),
            retries: 0,
            change_set: ChangeSetReport::default(),
            criteria: vec![],
            criteria_passed: 0,
            criteria_total: 0,
            final_text: String::new(),
            events_file: String::new(),
            workspace: None,
        }
    }

    #[test]
    fn a_restarted_job_voids_its_earlier_results() {
        let m = "demo/good".to_string();
        let records = vec![
            Record::Header(header()),
            Record::Started {
                model: m.clone(),
                tasks: vec!["a".into(), "b".into()],
            },
            Record::Step {
                task: "a".into(),
                model: m.clone(),
                step: 1,
            },
            Record::Finished {
                run: Box::new(run("a", &m, 1)),
            },
            Record::Resumed { at: "t2".into() },
            Record::Started {
                model: m.clone(),
                tasks: vec!["a".into(), "b".into()],
            },
            Record::Finished {
                run: Box::new(run("a", &m, 2)),
            },
        ];
        let state = State::replay(&records).unwrap();
        assert_eq!(state.resumed, 1);
        assert_eq!(state.finished.len(), 1);
        assert_eq!(state.finished[&("a".to_string(), m.clone())].steps, 2);
        assert!(
            state.steps.is_empty(),
            "steps of the voided attempt are gone"
        );
        assert!(State::replay(&records[1..]).is_none());
    }

    #[test]
    fn torn_lines_are_skipped_and_repaired_before_appending() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("checkpoint.jsonl");
        let mut cp = Checkpoint::create(&path, header()).unwrap();
        cp.append(&Record::Step {
            task: "a".into(),
            model: "m".into(),
            step: 1,
        })
        .unwrap();
        drop(cp);
        assert!(
            Checkpoint::create(&path, header()).is_err(),
            "never overwritten"
        );
        use std::io::Write;
        OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"{\"type\":\"step\",\"ta")
            .unwrap();
        let read_back = read(&path).unwrap();
        assert_eq!(read_back.records.len(), 2);
        assert_eq!(read_back.damaged.len(), 1, "the torn line is named");
        let mut cp = Checkpoint::reopen(&path).unwrap();
        cp.append(&Record::Resumed { at: "t".into() }).unwrap();
        let read_back = read(&path).unwrap();
        assert!(
            read_back.damaged.is_empty(),
            "the fragment was cut, not kept"
        );
        assert_eq!(read_back.records.len(), 3);
        assert_eq!(State::replay(&read_back.records).unwrap().resumed, 1);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.lines().all(|l| l.starts_with("{\"v\":1,")),
            "a version on every line: {text}"
        );
    }

    #[test]
    fn a_checkpoint_written_before_versions_still_reads() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("checkpoint.jsonl");
        let old = format!(
            "{}\n{}\n",
            serde_json::to_string(&Record::Header(header())).unwrap(),
            r#"{"type":"step","task":"a","model":"m","step":2}"#
        );
        std::fs::write(&path, old).unwrap();
        let read_back = read(&path).unwrap();
        assert!(read_back.damaged.is_empty());
        let state = State::replay(&read_back.records).unwrap();
        assert_eq!(state.steps[&("a".to_string(), "m".to_string())], 2);
        let mut cp = Checkpoint::reopen(&path).unwrap();
        cp.append(&Record::Resumed { at: "t".into() }).unwrap();
        assert_eq!(
            State::replay(&read(&path).unwrap().records)
                .unwrap()
                .resumed,
            1
        );
    }
}
