//! A plain append-only JSON Lines writer, kept for the headless checkpoint (whose header
//! carries its version and which ends its own torn tail on `--resume`), and the name of a line
//! that could not be read. versus's record files (the session log, the apply journal,
//! preferences, history) go through [`crate::jsonl`] instead: versioned lines, torn tails
//! removed before an append, a lock, newer files never appended to.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

/// An append-only JSON Lines file. Each line is written with one `write` call on a file opened
/// in append mode, so a crash leaves at worst one incomplete last line, which readers skip.
#[derive(Debug)]
pub struct EventLog {
    path: PathBuf,
    file: File,
}

impl EventLog {
    /// Opens (creating) the log at `path`.
    pub fn open(path: &Path) -> io::Result<Self> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(Self {
            path: path.to_path_buf(),
            file,
        })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one record.
    pub fn append<T: Serialize>(&mut self, record: &T) -> io::Result<()> {
        let mut line = serde_json::to_vec(record).map_err(io::Error::other)?;
        line.push(b'\n');
        self.file.write_all(&line)
    }

    /// Appends one line already encoded (ending in a newline), in one write.
    pub fn append_line(&mut self, line: &[u8]) -> io::Result<()> {
        self.file.write_all(line)
    }
}

/// A line of a record file that could not be read, named by file and line (see
/// [`crate::jsonl`]).
pub type SkippedLine = crate::jsonl::Damage;

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn appends_and_reads_back_skipping_a_torn_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        let mut log = EventLog::open(&path).unwrap();
        log.append(&serde_json::json!({"n": 1})).unwrap();
        log.append(&serde_json::json!({"n": 2})).unwrap();
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"{\"n\": 3")
            .unwrap();
        let format = crate::jsonl::Format {
            name: "test",
            version: 1,
            unversioned: 1,
        };
        let read: crate::jsonl::Read<serde_json::Value> =
            crate::jsonl::read(&path, &format).unwrap();
        assert_eq!(read.damaged.len(), 1, "the torn line is reported");
        assert_eq!(read.records.len(), 2);
    }
}
