//! A session's `events.jsonl`: appending records as things happen (`Session`) and reading
//! them back (`SessionLog`) with the views rebuilt from them (each model's conversation for
//! `--continue`, the next-turn note). What a line holds is in `record`, the per-turn views
//! for `versus sessions show` in `summary`.

use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::path::{Path, PathBuf};

use super::SkippedLine;
use super::clock::now;
use super::record::{LegacyRecord, SESSION_LOG, SessionRecord, TurnTask, encode_record_with_blobs};
use super::store::{SessionError, Store};
use super::summary::{TurnModel, TurnSummary, note_tool_event};
use crate::jsonl::{self, Appender, Decoded, VersionedIn};
use crate::model::{Message, RunStop};

/// File name of the log inside a session folder.
pub const EVENTS_FILE: &str = "events.jsonl";

/// Everything read back from one session's log.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionLog {
    /// Every readable record, in order.
    pub records: Vec<SessionRecord>,
    /// Lines that could not be read (named by file and line), for the front end to report.
    pub skipped: Vec<SkippedLine>,
}

impl SessionLog {
    /// Reads `dir/events.jsonl` (a missing file is an empty session). Lines that cannot be
    /// read (a torn last line, a record of an unknown type, a line of a newer versus) are kept
    /// in [`SessionLog::skipped`], named by file and line, for the front end to report.
    pub fn read(dir: &Path) -> io::Result<Self> {
        let path = dir.join(EVENTS_FILE);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(e) => return Err(e),
        };
        let blobs = dir.join(super::BLOBS_DIR);
        let log = crate::workspace::content::resolving(&blobs, || Self::parse(&path, &bytes));
        for line in &log.skipped {
            tracing::warn!("{line}");
        }
        Ok(log)
    }

    /// The records of the log file `path` holding `bytes` (content references resolved by the
    /// caller).
    fn parse(path: &Path, bytes: &[u8]) -> Self {
        let mut last_turn = 0;
        let read = jsonl::parse(path, bytes, &SESSION_LOG, |line| {
            let decoded = match serde_json::from_slice::<VersionedIn<SessionRecord>>(line) {
                Ok(read) => Decoded::Record {
                    version: read.v.unwrap_or(SESSION_LOG.unversioned),
                    record: read.record.joined(),
                },
                Err(err) => match serde_json::from_slice::<LegacyRecord>(line) {
                    // Version 1 markers the interface wrote untyped: read into their typed
                    // successors (a rewind of the conversation was also written typed: the
                    // duplicate is dropped).
                    Ok(legacy) => match legacy.upgrade(last_turn) {
                        Some(record) => Decoded::Record { version: 1, record },
                        None => Decoded::Nothing,
                    },
                    Err(_) => Decoded::Bad(err),
                },
            };
            if let Decoded::Record { version, record } = &decoded
                && *version <= SESSION_LOG.version
            {
                last_turn = last_turn.max(record.turn());
            }
            decoded
        });
        Self {
            records: read.records,
            skipped: read.damaged,
        }
    }

    /// The highest turn number (0 for a new session).
    pub fn last_turn(&self) -> u32 {
        self.records
            .iter()
            .map(SessionRecord::turn)
            .max()
            .unwrap_or(0)
    }

    /// Turns taken out of the conversations by a rewind.
    pub fn rewound(&self) -> BTreeSet<u32> {
        self.records
            .iter()
            .filter_map(|r| match r {
                SessionRecord::Rewound { turn, scope, .. } if scope.conversation() => Some(*turn),
                _ => None,
            })
            .collect()
    }

    /// Turns whose choice no longer stands: their apply or the turn itself was rewound.
    pub fn undone_choices(&self) -> BTreeSet<u32> {
        self.records
            .iter()
            .filter_map(|r| match r {
                SessionRecord::Rewound { turn, .. } => Some(*turn),
                _ => None,
            })
            .collect()
    }

    /// The turns in order.
    pub fn turns(&self) -> Vec<TurnSummary> {
        let rewound = self.rewound();
        let mut turns: BTreeMap<u32, TurnSummary> = BTreeMap::new();
        for record in &self.records {
            match record {
                SessionRecord::Turn {
                    turn,
                    time,
                    prompt,
                    models,
                    tasks,
                    ..
                } => {
                    turns.insert(
                        *turn,
                        TurnSummary {
                            turn: *turn,
                            time: time.clone(),
                            prompt: prompt.clone(),
                            models: models
                                .iter()
                                .enumerate()
                                .map(|(entry, m)| TurnModel {
                                    model: m.clone(),
                                    task: TurnTask::of(tasks, entry).map(|t| t.name.clone()),
                                    stop: None,
                                    final_text: String::new(),
                                    stats: None,
                                    writes: 0,
                                    tools: Vec::new(),
                                    sub_agent_writes: Vec::new(),
                                })
                                .collect(),
                            complete: false,
                            chosen: None,
                            rewound: rewound.contains(turn),
                            context: None,
                            ledger: Vec::new(),
                        },
                    );
                }
                SessionRecord::Finished {
                    turn,
                    entry,
                    stop,
                    stats,
                    writes,
                    final_text,
                    ..
                } => {
                    if let Some(model) = turns.get_mut(turn).and_then(|t| t.models.get_mut(*entry))
                    {
                        model.stop = Some(stop.unwrap_or(RunStop::Error));
                        model.stats = stats.clone();
                        model.writes = *writes;
                        model.final_text = final_text.clone();
                    }
                }
                SessionRecord::Choice { turn, chosen, .. } => {
                    if let Some(t) = turns.get_mut(turn) {
                        t.chosen = Some(chosen.clone());
                    }
                }
                SessionRecord::Context {
                    turn,
                    context,
                    ledger,
                } => {
                    if let Some(t) = turns.get_mut(turn) {
                        t.context = Some(context.clone());
                        t.ledger = ledger.clone();
                    }
                }
                SessionRecord::Proposals {
                    turn,
                    entry,
                    writes,
                    ..
                } => {
                    if let Some(model) = turns.get_mut(turn).and_then(|t| t.models.get_mut(*entry))
                    {
                        model.sub_agent_writes = writes
                            .iter()
                            .filter_map(|w| {
                                w.origin.agent.as_ref().map(|a| (w.path.clone(), a.clone()))
                            })
                            .collect();
                    }
                }
                SessionRecord::Agent {
                    turn, entry, event, ..
                } => {
                    if let Some(model) = turns.get_mut(turn).and_then(|t| t.models.get_mut(*entry))
                    {
                        note_tool_event(&mut model.tools, event);
                    }
                }
                _ => {}
            }
        }
        let mut out: Vec<TurnSummary> = turns.into_values().collect();
        for turn in &mut out {
            turn.complete = turn.models.iter().all(|m| m.stop.is_some());
        }
        out
    }

    /// Each model's conversation to continue from: its conversation records outside rewound
    /// turns applied in order (a `Conversation` replaces, a `ConversationTail` keeps a prefix
    /// and appends; a `/clear` empties every conversation). Models are keyed by entry label.
    pub fn conversations(&self) -> BTreeMap<String, Vec<Message>> {
        fold_conversations(&self.records, &self.rewound())
    }

    /// The latest blind-mode aliases recorded, and whether they were revealed (`None`: the
    /// log has no `blind` record: blind mode never on, or a log older than the record).
    pub fn blind_aliases(&self) -> Option<(&BTreeMap<String, String>, bool)> {
        self.records.iter().rev().find_map(|r| match r {
            SessionRecord::Blind {
                aliases, revealed, ..
            } => Some((aliases, *revealed)),
            _ => None,
        })
    }

    /// Whether the latest turn hid the model names (blind mode).
    pub fn blind(&self) -> bool {
        self.records
            .iter()
            .rev()
            .find_map(|r| match r {
                SessionRecord::Turn { blind, .. } => Some(*blind),
                _ => None,
            })
            .unwrap_or(false)
    }

    /// The session's models: those of the latest `Opened` / `ModelsChanged` record, plus any
    /// model a later turn addressed; for version 1 logs, the models of every turn in order of
    /// first appearance. What a continued session runs next by default.
    pub fn last_models(&self) -> Vec<String> {
        let mut models: Vec<String> = Vec::new();
        for record in &self.records {
            match record {
                SessionRecord::Opened { models: set, .. }
                | SessionRecord::ModelsChanged { models: set, .. } => models = set.clone(),
                SessionRecord::Turn { models: used, .. } => {
                    for model in used {
                        if !models.contains(model) {
                            models.push(model.clone());
                        }
                    }
                }
                _ => {}
            }
        }
        models
    }
}

/// Applies the conversation records of `records` outside the `rewound` turns, in order.
pub(crate) fn fold_conversations(
    records: &[SessionRecord],
    rewound: &BTreeSet<u32>,
) -> BTreeMap<String, Vec<Message>> {
    let mut out: BTreeMap<String, Vec<Message>> = BTreeMap::new();
    for record in records {
        match record {
            SessionRecord::Conversation {
                turn,
                model,
                messages,
            } if !rewound.contains(turn) => {
                out.insert(model.clone(), messages.clone());
            }
            SessionRecord::ConversationTail {
                turn,
                model,
                keep,
                messages,
            } if !rewound.contains(turn) => {
                let conversation = out.entry(model.clone()).or_default();
                conversation.truncate(*keep);
                conversation.extend(messages.iter().cloned());
            }
            SessionRecord::Cleared { .. } => out.clear(),
            _ => {}
        }
    }
    out
}

/// An open session: appends records for the turns run now.
#[derive(Debug)]
pub struct Session {
    id: String,
    dir: PathBuf,
    log: Appender,
    turn: u32,
}

impl Session {
    /// Starts a new session in `store`.
    pub fn create(store: &Store) -> Result<Self, SessionError> {
        let (id, dir) = store.new_session()?;
        Self::attach(id, dir, 0)
    }

    /// Reopens a session (`None`: the latest) to continue it; returns what it holds so far.
    pub fn open(store: &Store, id: Option<&str>) -> Result<(Self, SessionLog), SessionError> {
        let (id, dir) = store.session(id)?;
        let log = SessionLog::read(&dir).map_err(|source| SessionError::Io {
            op: "read",
            path: dir.join(EVENTS_FILE),
            source,
        })?;
        let session = Self::attach(id, dir, log.last_turn())?;
        Ok((session, log))
    }

    fn attach(id: String, dir: PathBuf, turn: u32) -> Result<Self, SessionError> {
        let path = dir.join(EVENTS_FILE);
        let log = Appender::open(&path, &SESSION_LOG).map_err(|source| SessionError::Io {
            op: "open",
            path,
            source: source.into(),
        })?;
        Ok(Self { id, dir, log, turn })
    }

    /// Session id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Session folder (apply journal, snapshots and spill files live here too).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The current turn (0 before the first).
    pub fn turn(&self) -> u32 {
        self.turn
    }

    /// Starts the next turn and records its prompt and models.
    pub fn begin_turn(&mut self, prompt: &str, models: &[String]) -> io::Result<u32> {
        self.turn += 1;
        self.append(&SessionRecord::Turn {
            turn: self.turn,
            time: now().rfc3339(),
            prompt: prompt.to_string(),
            models: models.to_vec(),
            blind: false,
            tasks: Vec::new(),
        })?;
        Ok(self.turn)
    }

    /// Appends a record (its turn should be [`Session::turn`]), with the schema version; file
    /// content in it goes to the session's blob folder first, by reference.
    pub fn append(&mut self, record: &SessionRecord) -> io::Result<()> {
        let (mut line, content) = encode_record_with_blobs(record).map_err(io::Error::other)?;
        super::blobs::store(&self.dir.join(super::BLOBS_DIR), &content)?;
        line.push(b'\n');
        self.log.append(&line)
    }
}

/// The note a model reads before the next prompt, so it never believes its unapplied edits
/// are on disk: which model's changes were applied (or none), and which of its own changed
/// files were not applied. Sent only from the second turn on.
pub fn next_turn_note(
    model: &str,
    chosen: &[String],
    own_files: &[String],
    applied_files: &[String],
) -> String {
    let mut note = String::from("[versus] Since your last answer: ");
    if chosen.is_empty() {
        note.push_str("none of the proposed changes were applied");
    } else if chosen.iter().any(|c| c == model) && chosen.len() == 1 {
        note.push_str("your changes were applied");
    } else {
        note.push_str(&format!("changes from {} were applied", chosen.join(", ")));
    }
    let unapplied: Vec<&String> = own_files
        .iter()
        .filter(|f| !applied_files.contains(f))
        .collect();
    if !unapplied.is_empty() {
        note.push_str(&format!(
            "; these files you changed were NOT applied and are back to the project's version: {}",
            unapplied
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    note.push_str(". The workspace now matches the user's project.");
    note
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::super::record::RewindScope;
    use super::*;
    use crate::workspace::Isolation;

    /// An ownership key of the test's own, beside its project: unit tests never write the
    /// key of whoever runs them.
    fn test_key(dir: &tempfile::TempDir) -> crate::session::OwnerKey {
        crate::session::OwnerKey::at(&dir.path().join(".test-state/store-key")).unwrap()
    }

    #[test]
    fn turns_and_conversations_survive_a_torn_log_and_rewinds() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_with(dir.path(), test_key(&dir)).unwrap();
        let mut session = Session::create(&store).unwrap();
        let models = vec!["demo/a".to_string(), "demo/b".to_string()];
        for (n, prompt) in ["first", "second"].iter().enumerate() {
            let turn = session.begin_turn(prompt, &models).unwrap();
            assert_eq!(turn, n as u32 + 1);
            for (entry, model) in models.iter().enumerate() {
                session
                    .append(&SessionRecord::Finished {
                        turn,
                        entry,
                        model: model.clone(),
                        stop: Some(RunStop::Completed),
                        stats: None,
                        writes: 1,
                        error: None,
                        final_text: format!("{model} answer {turn}"),
                    })
                    .unwrap();
                session
                    .append(&SessionRecord::Conversation {
                        turn,
                        model: model.clone(),
                        messages: vec![Message::user(format!("{prompt} for {model}"))],
                    })
                    .unwrap();
            }
        }
        session.append(&SessionRecord::rewound(2)).unwrap();
        // A third turn killed mid-way: one model finished, then a torn line.
        let turn = session.begin_turn("third", &models).unwrap();
        session
            .append(&SessionRecord::Finished {
                turn,
                entry: 0,
                model: "demo/a".into(),
                stop: Some(RunStop::Completed),
                stats: None,
                writes: 0,
                error: None,
                final_text: String::new(),
            })
            .unwrap();
        drop(session);
        use std::io::Write;
        std::fs::OpenOptions::new()
            .append(true)
            .open(store.session(None).unwrap().1.join(EVENTS_FILE))
            .unwrap()
            .write_all(b"{\"type\":\"agent\",\"tu")
            .unwrap();

        let (reopened, log) = Session::open(&store, None).unwrap();
        assert_eq!(reopened.turn(), 3);
        let turns = log.turns();
        assert_eq!(turns.len(), 3);
        assert!(turns[0].complete && !turns[0].rewound);
        assert!(turns[1].rewound);
        assert!(!turns[2].complete, "the killed turn is incomplete");
        assert_eq!(turns[0].models[1].final_text, "demo/b answer 1");
        let conversations = log.conversations();
        assert_eq!(
            conversations["demo/a"],
            vec![Message::user("first for demo/a")],
            "the rewound turn's conversation is not resumed"
        );
        assert_eq!(log.last_models(), models);
    }

    /// A session log as version 1 of the interface wrote it (typed records without `v`, the
    /// workspace mode as a word, untyped markers) reads completely, with nothing skipped.
    #[test]
    fn a_version_1_log_still_reads() {
        let dir = tempfile::tempdir().unwrap();
        let lines = [
            r#"{"type":"session","time":"t0","id":"s","project":"/p","source":"tui","continued_after_turn":0,"models":["demo/a","demo/b"]}"#,
            r#"{"type":"turn","turn":1,"time":"t1","prompt":"fix it","models":["demo/a","demo/b"]}"#,
            r#"{"type":"workspace","turn":1,"entry":0,"root":"/tmp/w","mode":"worktree"}"#,
            r#"{"type":"finished","turn":1,"entry":0,"model":"demo/a","stop":"completed","stats":null,"writes":1,"error":null,"final_text":"done"}"#,
            r#"{"type":"conversation","turn":1,"model":"demo/a","messages":[{"role":"user","parts":[{"type":"text","text":"fix it"}]}]}"#,
            r#"{"type":"turn_end","turn":1,"time":"t2"}"#,
            r#"{"type":"choice","turn":1,"chosen":["demo/a"],"apply_id":"a1"}"#,
            r#"{"type":"rewound","turn":1}"#,
            r#"{"type":"rewind","time":"t3","turn":1,"scope":"both","restored":["x"],"kept":[]}"#,
            r#"{"type":"rewind","time":"t4","turn":1,"scope":"files","restored":["x"],"kept":[]}"#,
            r#"{"type":"compact","time":"t5","turns_folded":0}"#,
            r#"{"type":"clear","time":"t6"}"#,
            r#"{"type":"end","time":"t7"}"#,
        ];
        std::fs::write(dir.path().join(EVENTS_FILE), lines.join("\n") + "\n").unwrap();
        let log = SessionLog::read(dir.path()).unwrap();
        assert!(log.skipped.is_empty(), "{:?}", log.skipped);
        assert_eq!(
            log.records.len(),
            lines.len() - 1,
            "the duplicate rewind is dropped"
        );
        assert!(matches!(
            &log.records[2],
            SessionRecord::Workspace {
                mode: Isolation::Worktree,
                ..
            }
        ));
        assert_eq!(log.last_models(), ["demo/a", "demo/b"]);
        assert_eq!(log.rewound(), BTreeSet::from([1]));
        assert!(log.conversations().is_empty(), "rewound, then cleared");
        assert!(log.records.iter().any(|r| matches!(
            r,
            SessionRecord::Rewound {
                scope: RewindScope::Files,
                ..
            }
        )));
        // A line this version cannot read is reported with its place, not dropped silently.
        std::fs::write(
            dir.path().join(EVENTS_FILE),
            "{\"v\":9,\"type\":\"cleared\",\"turn\":1}\n{\"type\":\"mystery\"}\n",
        )
        .unwrap();
        let log = SessionLog::read(dir.path()).unwrap();
        assert_eq!(log.skipped.len(), 2);
        assert!(
            log.skipped[0].why.contains("newer versus"),
            "{}",
            log.skipped[0]
        );
        assert_eq!(log.skipped[1].line, 2);
    }

    #[test]
    fn conversation_tails_append_to_what_is_kept_and_rewinds_drop_theirs() {
        let m = "demo/a".to_string();
        let tail = |turn: u32, keep: usize, text: &str| SessionRecord::ConversationTail {
            turn,
            model: m.clone(),
            keep,
            messages: vec![Message::user(text)],
        };
        let mut log = SessionLog {
            records: vec![tail(1, 0, "one"), tail(2, 1, "two"), tail(3, 2, "three")],
            skipped: Vec::new(),
        };
        let texts = |log: &SessionLog| -> Vec<String> {
            log.conversations()[&m].iter().map(Message::text).collect()
        };
        assert_eq!(texts(&log), ["one", "two", "three"]);
        // Turn 3 rewound, then turn 4 continues from turn 2's conversation.
        log.records.push(SessionRecord::rewound(3));
        assert_eq!(texts(&log), ["one", "two"]);
        log.records.push(tail(4, 2, "four"));
        assert_eq!(texts(&log), ["one", "two", "four"]);
        // A full record (compaction) replaces; a clear empties.
        log.records.push(SessionRecord::Conversation {
            turn: 4,
            model: m.clone(),
            messages: vec![Message::user("recap")],
        });
        log.records.push(tail(5, 1, "five"));
        assert_eq!(texts(&log), ["recap", "five"]);
        log.records.push(SessionRecord::Cleared { turn: 5 });
        assert!(log.conversations().is_empty());
    }

    #[test]
    fn the_note_says_what_was_applied_and_what_was_not() {
        let files = vec!["a.rs".to_string(), "b.rs".to_string()];
        let note = next_turn_note("m1", &["m1".into()], &files, &["a.rs".into()]);
        assert!(note.contains("your changes were applied"));
        assert!(note.contains("NOT applied") && note.contains("b.rs") && !note.contains("a.rs,"));
        let none = next_turn_note("m1", &[], &files, &[]);
        assert!(none.contains("none of the proposed changes"));
        let other = next_turn_note("m1", &["m2".into()], &[], &[]);
        assert!(other.contains("changes from m2 were applied"));
        assert!(!other.contains("NOT applied"));
    }
}
