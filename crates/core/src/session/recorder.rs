//! The session log writer: records are appended to `events.jsonl` on a thread of their own,
//! so no front end waits for the disk (a slow or full disk delays the log, not a frame or a
//! model). One writer per open session; every front end records through it.
//!
//! Streamed text is coalesced: a model's text, thinking and tool-argument deltas arrive a word
//! at a time, and one record per word made a log 30 times the text it held (7 MB of text, 231
//! MB of log). The writer joins consecutive deltas of one kind of one model into one record
//! (the same `agent` record with the joined text, so every reader replays it unchanged) and
//! writes it when anything else of that model's arrives, when it reaches [`CHUNK_BYTES`], or
//! after [`FLUSH_AFTER`] without one; any other record writes every pending chunk before it,
//! so the order of a model's events is kept. A crash loses at most the text streamed in the
//! last [`FLUSH_AFTER`] (never more than [`CHUNK_BYTES`] per model), like a torn last line.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::blobs;
use super::record::{SESSION_LOG, SessionRecord, encode_record_with_blobs};
use crate::jsonl::Appender;
use crate::model::AgentEvent;
use crate::workspace::content::Blob;

/// A model's pending streamed text is written once it holds this many bytes.
pub const CHUNK_BYTES: usize = 32 * 1024;

/// Pending streamed text is written at the latest this long after it arrived.
pub const FLUSH_AFTER: Duration = Duration::from_millis(250);

/// What the front end hands the writer.
enum Message {
    /// An encoded line and the content it refers to.
    Line(Vec<u8>, Vec<Blob>),
    /// A streamed delta, to be joined with its neighbours.
    Delta(Delta),
}

/// One streamed delta of one model.
struct Delta {
    turn: u32,
    entry: usize,
    model: String,
    kind: DeltaKind,
    text: String,
}

/// Which stream a delta belongs to: deltas join only with their own kind.
#[derive(Debug, Clone, PartialEq, Eq)]
enum DeltaKind {
    Text,
    Thinking,
    /// Argument text of one tool call.
    Args(String),
}

impl Delta {
    /// The delta of `record`, when it is one.
    fn of(record: &SessionRecord) -> Option<Self> {
        let SessionRecord::Agent {
            turn,
            entry,
            model,
            event,
            ..
        } = record
        else {
            return None;
        };
        let (kind, text) = match event {
            AgentEvent::TextDelta { text } => (DeltaKind::Text, text),
            AgentEvent::ThinkingDelta { text } => (DeltaKind::Thinking, text),
            AgentEvent::ToolCallArgs { id, delta } => (DeltaKind::Args(id.clone()), delta),
            _ => return None,
        };
        Some(Self {
            turn: *turn,
            entry: *entry,
            model: model.clone(),
            kind,
            text: text.clone(),
        })
    }

    fn record(self) -> SessionRecord {
        let event = match self.kind {
            DeltaKind::Text => AgentEvent::TextDelta { text: self.text },
            DeltaKind::Thinking => AgentEvent::ThinkingDelta { text: self.text },
            DeltaKind::Args(id) => AgentEvent::ToolCallArgs {
                id,
                delta: self.text,
            },
        };
        SessionRecord::Agent {
            turn: self.turn,
            entry: self.entry,
            model: self.model,
            event,
            output: None,
        }
    }
}

/// The most lines gathered into one write: the records queued while the writer wrote the
/// last ones (a busy run queues many: `versus run` of thousands of jobs wrote ~20 records a
/// job one write and one lock each) go out together, up to this many bytes.
const BATCH_BYTES: usize = 256 * 1024;

/// The writer thread's state: the file, the blob folder and the pending chunks by model.
struct Writer {
    file: Appender,
    blobs: PathBuf,
    /// By (turn, entry): the joined delta and when its first part arrived.
    pending: BTreeMap<(u32, usize), (Delta, Instant)>,
    /// Whole lines not written yet: what was queued together, written in one append.
    batch: Vec<u8>,
}

impl Writer {
    fn line(&mut self, line: &[u8], content: &[Blob]) {
        // The content a line names is stored before the line.
        if let Err(err) = blobs::store(&self.blobs, content) {
            tracing::warn!(error = %err, "could not store content for the session log");
        }
        self.batch.extend_from_slice(line);
        if self.batch.len() >= BATCH_BYTES {
            self.write_batch();
        }
    }

    /// Writes the gathered lines in one write on the append-mode file, under its lock: a
    /// crash tears at most the last line, and the next append (here or in a later process)
    /// removes what it tore.
    fn write_batch(&mut self) {
        if self.batch.is_empty() {
            return;
        }
        if let Err(err) = self.file.append(&self.batch) {
            tracing::warn!(error = %err, "could not append to the session log");
        }
        self.batch.clear();
    }

    fn handle(&mut self, message: Message) {
        match message {
            Message::Delta(delta) => self.delta(delta),
            Message::Line(line, content) => {
                self.flush_all(None);
                self.line(&line, &content);
            }
        }
    }

    fn write_record(&mut self, record: &SessionRecord) {
        match encode_record_with_blobs(record) {
            Ok((mut line, content)) => {
                line.push(b'\n');
                self.line(&line, &content);
            }
            Err(err) => tracing::warn!(error = %err, "a session record could not be encoded"),
        }
    }

    fn delta(&mut self, delta: Delta) {
        let key = (delta.turn, delta.entry);
        if let Some((joined, _)) = self.pending.get_mut(&key)
            && joined.kind == delta.kind
            && joined.model == delta.model
        {
            joined.text.push_str(&delta.text);
        } else {
            self.flush(key);
            self.pending.insert(key, (delta, Instant::now()));
        }
        if self
            .pending
            .get(&key)
            .is_some_and(|(d, _)| d.text.len() >= CHUNK_BYTES)
        {
            self.flush(key);
        }
    }

    fn flush(&mut self, key: (u32, usize)) {
        if let Some((delta, _)) = self.pending.remove(&key) {
            self.write_record(&delta.record());
        }
    }

    /// Writes the chunks pending since before `older_than` (all of them for `None`).
    fn flush_all(&mut self, older_than: Option<Instant>) {
        let due: Vec<(u32, usize)> = self
            .pending
            .iter()
            .filter(|(_, (_, since))| older_than.is_none_or(|limit| *since <= limit))
            .map(|(key, _)| *key)
            .collect();
        for key in due {
            self.flush(key);
        }
    }

    fn run(mut self, rx: mpsc::Receiver<Message>) {
        loop {
            let message = if self.pending.is_empty() {
                rx.recv().map_err(|_| RecvTimeoutError::Disconnected)
            } else {
                rx.recv_timeout(FLUSH_AFTER)
            };
            match message {
                Ok(message) => self.handle(message),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    self.flush_all(None);
                    self.write_batch();
                    return;
                }
            }
            // What else is queued already goes out in the same write.
            while self.batch.len() < BATCH_BYTES {
                match rx.try_recv() {
                    Ok(message) => self.handle(message),
                    Err(_) => break,
                }
            }
            if let Some(limit) = Instant::now().checked_sub(FLUSH_AFTER) {
                self.flush_all(Some(limit));
            }
            self.write_batch();
        }
    }
}

/// Sends records to the writer thread.
#[derive(Debug)]
pub struct Recorder {
    tx: Option<mpsc::Sender<Message>>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Message {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Message::Line(line, _) => write!(f, "Line({} bytes)", line.len()),
            Message::Delta(delta) => write!(f, "Delta({} bytes)", delta.text.len()),
        }
    }
}

impl Recorder {
    /// Opens (creating) the log and starts the writer. A last line torn by a crash is removed
    /// first, so the first record written (`opened` on `--continue`) is never glued onto it;
    /// a log written by a newer versus is refused (it is never appended to: the error says
    /// to update versus).
    pub fn start(path: &Path) -> std::io::Result<Recorder> {
        let file = Appender::open(path, &SESSION_LOG)?;
        let writer = Writer {
            file,
            blobs: blobs::folder_of(path),
            pending: BTreeMap::new(),
            batch: Vec::new(),
        };
        let (tx, rx) = mpsc::channel::<Message>();
        let thread = std::thread::Builder::new()
            .name("versus-session-log".to_string())
            .spawn(move || writer.run(rx))?;
        Ok(Recorder {
            tx: Some(tx),
            thread: Some(thread),
        })
    }

    /// Queues one record (never blocks on the disk). Streamed deltas are joined with their
    /// neighbours (see the module); file content goes by reference, its bytes to the
    /// session's blob folder (written by the writer thread, before the line).
    pub fn record(&self, record: &SessionRecord) {
        let Some(tx) = &self.tx else {
            return;
        };
        if let Some(delta) = Delta::of(record) {
            let _ = tx.send(Message::Delta(delta));
            return;
        }
        match encode_record_with_blobs(record) {
            Ok((mut line, content)) => {
                line.push(b'\n');
                let _ = tx.send(Message::Line(line, content));
            }
            Err(err) => tracing::warn!(error = %err, "a session record could not be encoded"),
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
        assert_eq!(lines[99], r#"{"v":3,"type":"cleared","turn":99}"#);
        let log = super::super::SessionLog::read(dir.path()).unwrap();
        assert_eq!(log.records.len(), 100);
        assert!(log.skipped.is_empty());
    }

    fn tool_result(output: &str) -> AgentEvent {
        AgentEvent::ToolResult {
            id: "c1".into(),
            name: "bash".into(),
            is_error: false,
            bytes: output.len(),
            summary: String::new(),
            duration_ms: 5,
            failed_edit: false,
            outcome: Some(crate::model::ToolOutcome::Exit { code: 3 }),
            output: output.into(),
            timing: None,
        }
    }

    #[test]
    fn a_long_tool_output_goes_to_a_blob_and_reads_back_whole_and_old_results_still_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        let long = "a line of a long build log\n".repeat(200);
        let mut r = Recorder::start(&path).unwrap();
        r.record(&SessionRecord::agent(1, 0, "demo/m", tool_result(&long)));
        r.record(&SessionRecord::agent(
            1,
            0,
            "demo/m",
            tool_result("short\n"),
        ));
        r.finish();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[0].len() < 1000,
            "the long output is not inline: {}",
            lines[0]
        );
        assert!(lines[0].contains(r#""output":{"blob":"#), "{}", lines[0]);
        assert!(lines[1].contains(r#""output":"short\n""#), "{}", lines[1]);
        // A result written before outcomes and outputs were recorded.
        let old = r#"{"v":3,"type":"agent","turn":1,"entry":0,"model":"demo/m","event":{"type":"tool_result","id":"c0","name":"read_file","is_error":true,"bytes":9,"summary":"not found","duration_ms":1,"failed_edit":false}}"#;
        std::fs::write(&path, format!("{text}{old}\n")).unwrap();
        let log = super::super::SessionLog::read(dir.path()).unwrap();
        assert!(log.skipped.is_empty(), "{:?}", log.skipped);
        let events: Vec<&AgentEvent> = log
            .records
            .iter()
            .filter_map(|r| match r {
                SessionRecord::Agent { event, .. } => Some(event),
                _ => None,
            })
            .collect();
        assert_eq!(events[0], &tool_result(&long));
        assert_eq!(events[1], &tool_result("short\n"));
        let AgentEvent::ToolResult {
            outcome,
            output,
            is_error,
            ..
        } = events[2]
        else {
            panic!("{:?}", events[2]);
        };
        assert_eq!((outcome, output.as_str()), (&None, ""));
        assert_eq!(
            crate::model::ToolOutcome::or_legacy(*outcome, *is_error),
            crate::model::ToolOutcome::Error
        );
    }

    fn agent(entry: usize, event: AgentEvent) -> SessionRecord {
        SessionRecord::Agent {
            turn: 1,
            entry,
            model: format!("demo/m{entry}"),
            event,
            output: None,
        }
    }

    /// The events of `entry` as read back, text deltas of one kind joined (what a replay
    /// shows).
    fn events_of(log: &super::super::SessionLog, entry: usize) -> Vec<AgentEvent> {
        let mut out: Vec<AgentEvent> = Vec::new();
        for record in &log.records {
            if let SessionRecord::Agent {
                entry: e, event, ..
            } = record
                && *e == entry
            {
                match (out.last_mut(), event) {
                    (
                        Some(AgentEvent::TextDelta { text: joined }),
                        AgentEvent::TextDelta { text },
                    ) => joined.push_str(text),
                    _ => out.push(event.clone()),
                }
            }
        }
        out
    }

    #[test]
    fn streamed_words_are_joined_in_order_and_the_log_stays_near_the_text() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        let mut r = Recorder::start(&path).unwrap();
        let mut sent = [String::new(), String::new()];
        for n in 0..20_000 {
            let entry = n % 2;
            let word = format!("w{n} ");
            sent[entry].push_str(&word);
            r.record(&agent(entry, AgentEvent::TextDelta { text: word }));
            if n == 10_001 {
                // Another event of model 1 splits its text; model 0's goes on.
                r.record(&agent(1, AgentEvent::StepStarted { step: 2 }));
            }
        }
        r.record(&SessionRecord::TurnEnded {
            turn: 1,
            time: String::new(),
        });
        r.finish();
        let size = std::fs::metadata(&path).unwrap().len() as usize;
        let text = sent[0].len() + sent[1].len();
        assert!(
            size < text * 11 / 10 + 4096,
            "log {size} for {text} of text"
        );
        let log = super::super::SessionLog::read(dir.path()).unwrap();
        assert!(log.records.len() < 20, "{} records", log.records.len());
        assert_eq!(
            events_of(&log, 0),
            vec![AgentEvent::TextDelta {
                text: sent[0].clone()
            }]
        );
        let one = events_of(&log, 1);
        assert_eq!(one.len(), 3, "{:?}", one.len());
        assert_eq!(one[1], AgentEvent::StepStarted { step: 2 });
        let joined: String = [&one[0], &one[2]]
            .iter()
            .map(|e| match e {
                AgentEvent::TextDelta { text } => text.as_str(),
                _ => "",
            })
            .collect();
        assert_eq!(joined, sent[1]);
        assert!(matches!(
            log.records.last(),
            Some(SessionRecord::TurnEnded { .. })
        ));
    }

    #[test]
    fn pending_text_is_written_without_waiting_for_the_next_event() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        let r = Recorder::start(&path).unwrap();
        r.record(&agent(
            0,
            AgentEvent::TextDelta {
                text: "hello".into(),
            },
        ));
        // No further record: the writer writes it on its own (polled, not timed).
        let mut written = false;
        for _ in 0..200 {
            std::thread::sleep(Duration::from_millis(25));
            if std::fs::read_to_string(&path).unwrap().contains("hello") {
                written = true;
                break;
            }
        }
        assert!(written, "pending text never reached the log");
        drop(r);
    }
}
