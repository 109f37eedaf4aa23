//! The append-only apply journal: `<session>/journal.jsonl`, one JSON record per line.
//!
//! The file is only ever appended to and each append is fsynced, so the journal is the durable
//! truth about which applies happened, finished, were rewound or rolled back. It is a record
//! file of [`crate::jsonl`]: a version on every line, a last line torn by a crash removed
//! before the next append (under the file's lock; apply, rewind and recovery also hold the
//! project's). Reading is strict where the logs are lenient: a torn last line is only what a
//! crash leaves and is skipped, but any other line that cannot be read, or a line of a newer
//! versus, is an error naming file and line ([`ApplyError::JournalDamaged`]), because a lost
//! `commit` would make a finished apply look interrupted and offer to roll it back.

use std::fs;
use std::path::{Path, PathBuf};

use super::{ApplyError, Result};
use crate::jsonl::{self, Appender, Format};

/// File name of the journal inside the session folder.
pub const JOURNAL_FILE: &str = "journal.jsonl";

/// The journal as a record file: version 1 is the shape journals always had (lines written
/// before versions read as it).
pub const JOURNAL: Format = Format {
    name: "apply journal",
    version: 1,
    unversioned: 1,
};

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

/// Appends one record and fsyncs it before returning (a torn last line is removed first; a
/// journal written by a newer versus is refused).
pub fn append(session: &Path, record: &Record) -> Result<()> {
    let path = journal_path(session);
    fs::create_dir_all(session).map_err(|e| ApplyError::io("create", session, e))?;
    let mut journal = Appender::open(&path, &JOURNAL)
        .map_err(|e| match e {
            jsonl::AppendError::Io { op, path, source } => ApplyError::Io { op, path, source },
            // The line that says so, from the reader (which refuses a newer line too).
            newer @ jsonl::AppendError::Newer { .. } => match read(session) {
                Err(damaged) => damaged,
                Ok(_) => ApplyError::io("append to", &path, newer.into()),
            },
        })?
        .durable();
    journal
        .append_record(&JOURNAL, record)
        .map_err(|e| ApplyError::io("append to", &path, e))
}

/// Reads every record, in order. A missing journal is an empty one; a torn last line (what a
/// crash leaves) is skipped and named in the log; any other line that cannot be read is an
/// error naming file and line.
pub fn read(session: &Path) -> Result<Vec<Record>> {
    let path = journal_path(session);
    let read: jsonl::Read<Record> =
        jsonl::read(&path, &JOURNAL).map_err(|e| ApplyError::io("read", &path, e))?;
    if let Some(damage) = read.serious().next() {
        return Err(ApplyError::JournalDamaged {
            path: damage.path.clone(),
            line: damage.line,
            why: damage.why.clone(),
        });
    }
    // What is left is only what a crash leaves: a torn line.
    for damage in &read.damaged {
        tracing::warn!("{damage}");
    }
    Ok(read.records)
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
    use std::fs::OpenOptions;
    use std::io::Write;

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
    fn a_damaged_middle_line_is_an_error_naming_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        append(dir.path(), &begin("1")).unwrap();
        let path = journal_path(dir.path());
        let mut text = fs::read_to_string(&path).unwrap();
        text.push_str("{\"v\":1,\"kind\":\"comit\",\"apply_id\":\"1\",\"time\":2}\n");
        fs::write(&path, &text).unwrap();
        append(dir.path(), &begin("2")).unwrap();
        let err = read(dir.path()).unwrap_err();
        let shown = err.to_string();
        assert!(
            matches!(&err, ApplyError::JournalDamaged { line: 2, .. }),
            "{shown}"
        );
        assert!(shown.contains(&format!("{}:2", path.display())), "{shown}");
        // A newer journal: read as an error, never appended to.
        fs::write(
            &path,
            "{\"v\":7,\"kind\":\"commit\",\"apply_id\":\"1\",\"time\":2}\n",
        )
        .unwrap();
        assert!(
            read(dir.path())
                .unwrap_err()
                .to_string()
                .contains("newer versus")
        );
        let err = append(dir.path(), &begin("3")).unwrap_err();
        assert!(err.to_string().contains("update versus"), "{err}");
        assert_eq!(fs::read_to_string(&path).unwrap().lines().count(), 1);
    }

    #[test]
    fn old_lines_without_a_version_and_old_repairs_still_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = journal_path(dir.path());
        // As versions before this one wrote it: no `v`, and a torn line they ended with a
        // newline instead of removing.
        fs::write(
            &path,
            concat!(
                r#"{"kind":"begin","apply_id":"1","time":1,"label":"l","models":["m"],"hunks":[],"paths":["a"],"snapshot":"1"}"#,
                "\n",
                r#"{"kind":"commit","apply_"#,
                "\n",
                r#"{"kind":"commit","apply_id":"1","time":2}"#,
                "\n"
            ),
        )
        .unwrap();
        let recs = read(dir.path()).unwrap();
        assert_eq!(recs.len(), 2);
        assert!(entries(&recs)[0].is_live());
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
        // The fragment is gone, not left as a damaged line in the middle.
        let text = fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 2, "{text}");
    }
}
