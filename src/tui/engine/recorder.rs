//! The session log writer: run events are appended to `events.jsonl` on a thread of their own,
//! so the interface never waits for the disk (a slow or full disk delays the log, not a frame).

use std::path::Path;
use std::sync::mpsc;
use std::thread::JoinHandle;

use crate::session::EventLog;

/// Sends records to the writer thread.
#[derive(Debug)]
pub struct Recorder {
    tx: Option<mpsc::Sender<serde_json::Value>>,
    thread: Option<JoinHandle<()>>,
}

impl Recorder {
    /// Opens (creating) the log and starts the writer.
    pub fn start(path: &Path) -> std::io::Result<Recorder> {
        let mut log = EventLog::open(path)?;
        let (tx, rx) = mpsc::channel::<serde_json::Value>();
        let thread = std::thread::Builder::new()
            .name("versus-session-log".to_string())
            .spawn(move || {
                for record in rx {
                    if let Err(err) = log.append(&record) {
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
    pub fn record<T: serde::Serialize>(&self, record: &T) {
        match (serde_json::to_value(record), &self.tx) {
            (Ok(value), Some(tx)) => {
                let _ = tx.send(value);
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
        for n in 0..100 {
            r.record(&serde_json::json!({ "n": n }));
        }
        r.finish();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 100);
        assert_eq!(lines[99], r#"{"n":99}"#);
    }
}
