//! The session's event log: one JSON object per line, appended and flushed as events happen.

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

/// A line of a JSON Lines file that could not be read (a torn last line after a crash, a
/// bad byte, a record of an unknown shape), named so the user can find it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedLine {
    /// The file.
    pub path: std::path::PathBuf,
    /// 1-based line number.
    pub line: usize,
    /// Why it was skipped (never the line's text: it may hold anything).
    pub why: String,
}

impl std::fmt::Display for SkippedLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}: skipped: {}",
            self.path.display(),
            self.line,
            self.why
        )
    }
}

/// Reads a JSON Lines file record by record from its bytes: a line that is not valid UTF-8 or
/// not a record is skipped and reported, never a reason to refuse the whole file.
pub(crate) fn read_lines_reporting<T: serde::de::DeserializeOwned>(
    path: &Path,
) -> io::Result<(Vec<T>, Vec<SkippedLine>)> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok((Vec::new(), Vec::new())),
        Err(e) => return Err(e),
    };
    let mut records = Vec::new();
    let mut skipped = Vec::new();
    for (index, line) in bytes.split(|&b| b == b'\n').enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice(line) {
            Ok(record) => records.push(record),
            Err(err) => skipped.push(SkippedLine {
                path: path.to_path_buf(),
                line: index + 1,
                why: err.to_string(),
            }),
        }
    }
    Ok((records, skipped))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_torn_utf8_character_and_a_bad_byte_skip_only_their_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        let mut bytes = b"{\"a\":1}\n{\"a\":\"\xff\"}\n{\"a\":2}\n{\"a\":\"\xc3".to_vec();
        bytes.extend_from_slice(b"");
        std::fs::write(&path, &bytes).unwrap();
        let (read, skipped): (Vec<serde_json::Value>, _) = read_lines_reporting(&path).unwrap();
        assert_eq!(
            read,
            vec![serde_json::json!({"a": 1}), serde_json::json!({"a": 2})]
        );
        let lines: Vec<usize> = skipped.iter().map(|s| s.line).collect();
        assert_eq!(lines, vec![2, 4]);
        assert!(
            skipped[0]
                .to_string()
                .starts_with(&format!("{}:2: skipped", path.display()))
        );
    }

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
        let (read, skipped): (Vec<serde_json::Value>, _) = read_lines_reporting(&path).unwrap();
        assert_eq!(skipped.len(), 1, "the torn line is reported");
        assert_eq!(read.len(), 2);
    }
}
