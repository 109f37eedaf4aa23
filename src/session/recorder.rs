//! The session log writer: records are appended to `events.jsonl` on a thread of their own,
//! so no front end waits for the disk (a slow or full disk delays the log, not a frame or a
//! model). One writer per open session; every front end records through it.

use std::io::Write;
use std::path::Path;
use std::sync::mpsc;
use std::thread::JoinHandle;

use super::log::{SessionRecord, encode_record};

/// Sends records to the writer thread.
#[derive(Debug)]
pub struct Recorder {
    tx: Option<mpsc::Sender<Vec<u8>>>,
    thread: Option<JoinHandle<()>>,
}

impl Recorder {
    /// Opens (creating) the log and starts the writer.
    pub fn start(path: &Path) -> std::io::Result<Recorder> {
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        let (tx, rx) = mpsc::channel::<Vec<u8>>();
        let thread = std::thread::Builder::new()
            .name("versus-session-log".to_string())
            .spawn(move || {
                for line in rx {
                    // One write per line on an append-mode file: a crash tears at most the last.
                    if let Err(err) = file.write_all(&line) {
                        tracing::warn!(error = %err, "could not append to the session log");
                    }
                }
            })?;
        Ok(Recorder {
            tx: Some(tx),
            thread: Some(thread),
        })
    }

    /// Queues one record (never blocks on the disk).
    pub fn record(&self, record: &SessionRecord) {
        match (encode_record(record), &self.tx) {
            (Ok(mut line), Some(tx)) => {
                line.push(b'\n');
                let _ = tx.send(line);
            }
            (Err(err), _) => tracing::warn!(error = %err, "a session record could not be encoded"),
            (Ok(_), None) => {}
        }
    }

    /// Writes everything queued and stops the writer.
    pub fn finish(&mut self) {
        self.tx = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        self.finish();
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn records_reach_the_file_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        let mut r = Recorder::start(&path).unwrap();
        for turn in 0..100 {
            r.record(&SessionRecord::Cleared { turn });
        }
        r.finish();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 100);
        assert_eq!(lines[99], r#"{"v":2,"type":"cleared","turn":99}"#);
        let log = super::super::SessionLog::read(dir.path()).unwrap();
        assert_eq!(log.records.len(), 100);
        assert!(log.skipped.is_empty());
    }
}
