//! The append-only apply journal: `<session>/journal.jsonl`, one JSON record per line.
//!
//! The file is only ever appended to and each append is fsynced, so the journal is the durable
//! truth about which applies happened, finished, were rewound or rolled back. A crash can tear
//! the last line; readers skip lines that do not parse instead of failing, and a writer that
//! finds the file not ending in a newline starts its record on a fresh line.

use std::fs::{self, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::{ApplyError, Result};

/// File name of the journal inside the session folder.
pub const JOURNAL_FILE: &str = "journal.jsonl";

/// One journal line.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Record {
    /// Written (and fsynced) after the snapshot and before the first user-file write.
    Begin {
        /// Unique id of this apply.
        apply_id: String,
        /// Unix seconds.
        time: u64,
        /// The turn's label or prompt.
        label: String,
        /// Model entries whose changes are applied.
        models: Vec<String>,
        /// Hunk provenance ids.
        hunks: Vec<String>,
        /// Paths about to change.
        paths: Vec<String>,
        /// Snapshot id (folder under `<session>/snapshots/`).
        snapshot: String,
    },
    /// Written after the last user-file write of an apply.
    Commit {
        /// The apply that finished.
        apply_id: String,
        /// Unix seconds.
        time: u64,
    },
    /// A rewind undid this apply.
    Rewind {
        /// The apply undone.
        apply_id: String,
        /// Unix seconds.
        time: u64,
        /// Paths restored.
        restored: Vec<String>,
        /// Paths edited after the apply and left as they were.
        kept: Vec<String>,
    },
    /// Recovery rolled back an interrupted apply.
    Rollback {
        /// The interrupted apply.
        apply_id: String,
        /// Unix seconds.
        time: u64,
        /// Paths restored.
        restored: Vec<String>,
    },
}

/// Where the journal of a session lives.
pub fn journal_path(session: &Path) -> PathBuf {
    session.join(JOURNAL_FILE)
}

/// Appends one record and fsyncs it before returning.
pub fn append(session: &Path, record: &Record) -> Result<()> {
    let path = journal_path(session);
    fs::create_dir_all(session).map_err(|e| ApplyError::io("create", session, e))?;
    let mut file = OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .open(&path)
        .map_err(|e| ApplyError::io("open", &path, e))?;
    let len = file
        .metadata()
        .map_err(|e| ApplyError::io("inspect", &path, e))?
        .len();
    let mut line = Vec::new();
    if len > 0 {
        let mut last = [0u8; 1];
        file.seek(SeekFrom::Start(len - 1))
            .and_then(|_| file.read_exact(&mut last))
            .map_err(|e| ApplyError::io("read", &path, e))?;
        if last[0] != b'\n' {
            line.push(b'\n');
        }
    }
    let json = serde_json::to_vec(record).map_err(|e| ApplyError::Io {
        op: "encode a record for",
        path: path.clone(),
        source: e.into(),
    })?;
    line.extend_from_slice(&json);
    line.push(b'\n');
    file.write_all(&line)
        .and_then(|_| file.sync_data())
        .map_err(|e| ApplyError::io("append to", &path, e))
}

/// Reads every record that parses, in order (a line that does not is skipped and named in the
/// log). A missing journal is an empty one.
pub fn read(session: &Path) -> Result<Vec<Record>> {
    let path = journal_path(session);
    let bytes = match fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(ApplyError::io("read", &path, e)),
    };
    let mut records = Vec::new();
    for (index, line) in bytes.split(|&c| c == b'\n').enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice(line) {
            Ok(record) => records.push(record),
            // A torn last line after a crash, or damage: skipped, named, never fatal.
            Err(err) => tracing::warn!("{}:{}: skipped: {err}", path.display(), index + 1),
        }
    }
    Ok(records)
}

/// The life of one apply as the journal tells it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApplyEntry {
    /// The apply id.
    pub apply_id: String,
    /// Unix seconds at begin.
    pub time: u64,
    /// Label or prompt.
    pub label: String,
    /// Models involved.
    pub models: Vec<String>,
    /// Paths it changes.
    pub paths: Vec<String>,
    /// Snapshot id.
    pub snapshot: String,
    /// A commit record exists.
    pub committed: bool,
    /// A rewind record exists.
    pub rewound: bool,
    /// A rollback record exists.
    pub rolled_back: bool,
}

impl ApplyEntry {
    /// Begun but neither committed nor rolled back: a crash interrupted it.
    pub fn is_interrupted(&self) -> bool {
        !self.committed && !self.rolled_back
    }

    /// Committed and still in effect: what the next rewind would undo.
    pub fn is_live(&self) -> bool {
        self.committed && !self.rewound && !self.rolled_back
    }
}

/// Folds the records into one entry per apply, in begin order.
pub fn entries(records: &[Record]) -> Vec<ApplyEntry> {
    let mut out: Vec<ApplyEntry> = Vec::new();
    for r in records {
        match r {
            Record::Begin {
                apply_id,
                time,
                label,
                models,
                paths,
                snapshot,
                ..
            } => out.push(ApplyEntry {
                apply_id: apply_id.clone(),
                time: *time,
                label: label.clone(),
                models: models.clone(),
                paths: paths.clone(),
                snapshot: snapshot.clone(),
                committed: false,
                rewound: false,
                rolled_back: false,
            }),
            Record::Commit { apply_id, .. } => {
                if let Some(e) = out.iter_mut().rev().find(|e| &e.apply_id == apply_id) {
                    e.committed = true;
                }
            }
            Record::Rewind { apply_id, .. } => {
                if let Some(e) = out.iter_mut().rev().find(|e| &e.apply_id == apply_id) {
                    e.rewound = true;
                }
            }
            Record::Rollback { apply_id, .. } => {
                if let Some(e) = out.iter_mut().rev().find(|e| &e.apply_id == apply_id) {
                    e.rolled_back = true;
                }
            }
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn begin(id: &str) -> Record {
        Record::Begin {
            apply_id: id.into(),
            time: 1,
            label: "l".into(),
            models: vec!["m".into()],
            hunks: vec![],
            paths: vec!["a".into()],
            snapshot: id.into(),
        }
    }

    #[test]
    fn round_trips_and_folds_state() {
        let dir = tempfile::tempdir().unwrap();
        append(dir.path(), &begin("1")).unwrap();
        append(
            dir.path(),
            &Record::Commit {
                apply_id: "1".into(),
                time: 2,
            },
        )
        .unwrap();
        append(dir.path(), &begin("2")).unwrap();
        let recs = read(dir.path()).unwrap();
        assert_eq!(recs.len(), 3);
        let e = entries(&recs);
        assert!(e[0].is_live());
        assert!(e[1].is_interrupted());
    }

    #[test]
    fn torn_last_line_is_skipped_and_next_append_starts_a_new_line() {
        let dir = tempfile::tempdir().unwrap();
        append(dir.path(), &begin("1")).unwrap();
        let path = journal_path(dir.path());
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(br#"{"kind":"commit","apply_"#).unwrap();
        drop(f);
        assert_eq!(read(dir.path()).unwrap().len(), 1);
        append(dir.path(), &begin("2")).unwrap();
        let recs = read(dir.path()).unwrap();
        assert_eq!(recs.len(), 2);
        assert_eq!(recs[1], begin("2"));
    }
}
