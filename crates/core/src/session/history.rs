//! `.versus/history.jsonl`: every prompt sent, for the prompt box's history (Up, Ctrl+R) in
//! later sessions. A record file of [`crate::jsonl`] like the others: typed lines with a
//! version, a torn last line removed before the next append, damaged lines reported.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::jsonl::{self, Appender, Format};

/// `history.jsonl` as a record file: version 1 is the shape it always had (lines written
/// before versions read as it).
pub const HISTORY: Format = Format {
    name: "prompt history",
    version: 1,
    unversioned: 1,
};

/// One prompt sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryEntry {
    /// RFC 3339 time (absent in lines of the earliest versions).
    #[serde(default)]
    pub time: String,
    /// The session it was sent in (absent in lines of the earliest versions).
    #[serde(default)]
    pub session: String,
    /// The prompt as typed, `@model` targets included.
    pub prompt: String,
}

/// Appends `entry` to the history file `path`.
pub fn append_history(path: &Path, entry: &HistoryEntry) -> std::io::Result<()> {
    Appender::open(path, &HISTORY)
        .map_err(|e| jsonl::appending(path, e))?
        .append_record(&HISTORY, entry)
        .map_err(|e| jsonl::appending(path, e))
}

/// The prompts of the history file `path`, oldest first, a prompt repeated right after itself
/// kept once (missing or unreadable file: none; lines that cannot be read are logged).
pub fn read_history(path: &Path) -> Vec<String> {
    let read: jsonl::Read<HistoryEntry> = match jsonl::read(path, &HISTORY) {
        Ok(read) => read,
        Err(err) => {
            tracing::warn!("{}: {err}", path.display());
            return Vec::new();
        }
    };
    for damage in &read.damaged {
        tracing::warn!("{damage}");
    }
    let mut out: Vec<String> = Vec::new();
    for entry in read.records {
        if out.last() != Some(&entry.prompt) {
            out.push(entry.prompt);
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn old_lines_read_and_new_ones_are_typed_and_versioned() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.jsonl");
        std::fs::write(
            &path,
            "{\"time\":\"t0\",\"session\":\"s0\",\"prompt\":\"old one\"}\n{\"prompt\":\"older\"}\n{\"pro",
        )
        .unwrap();
        let entry = HistoryEntry {
            time: "t1".into(),
            session: "s1".into(),
            prompt: "new one".into(),
        };
        append_history(&path, &entry).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.ends_with(
                "\"older\"}\n{\"v\":1,\"time\":\"t1\",\"session\":\"s1\",\"prompt\":\"new one\"}\n"
            ),
            "the torn line is gone and the new one is whole: {text}"
        );
        assert_eq!(read_history(&path), ["old one", "older", "new one"]);
    }

    #[test]
    fn history_skips_repeats_and_reads_a_missing_file_as_empty() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.jsonl");
        assert!(read_history(&path).is_empty());
        std::fs::write(
            &path,
            "{\"prompt\":\"a\"}\n{\"prompt\":\"a\"}\n{\"prompt\":\"b\"}\n",
        )
        .unwrap();
        assert_eq!(read_history(&path), ["a", "b"]);
    }
}
