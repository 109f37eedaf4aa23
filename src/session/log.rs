//! A session's `events.jsonl`: typed records appended as things happen, and the views rebuilt
//! from them (turns for `versus sessions show`, each model's conversation for `--continue`).
//!
//! The log is the only truth: a session killed with SIGKILL is read back up to its last
//! complete line. A turn whose models never all finished is shown as interrupted; each model's
//! conversation resumes from the last turn that recorded it (`Conversation` records are written
//! when a model ends), minus turns that were rewound.

use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::clock::now;
use super::events::{EventLog, read_lines_reporting};
use super::store::{SessionError, Store};
use crate::model::{AgentEvent, Message, RunStats, RunStop};

/// File name of the log inside a session folder.
pub const EVENTS_FILE: &str = "events.jsonl";

/// One line of the log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SessionRecord {
    /// A prompt was sent to these models.
    Turn {
        /// 1-based turn number.
        turn: u32,
        /// RFC 3339 time.
        time: String,
        /// The prompt.
        prompt: String,
        /// Entry labels, in order.
        models: Vec<String>,
    },
    /// A model's workspace is ready.
    Workspace {
        /// Turn.
        turn: u32,
        /// Entry position.
        entry: usize,
        /// Workspace root.
        root: PathBuf,
        /// Isolation actually used.
        mode: String,
    },
    /// One event of one model.
    Agent {
        /// Turn.
        turn: u32,
        /// Entry position.
        entry: usize,
        /// Entry label.
        model: String,
        /// The event.
        event: AgentEvent,
    },
    /// A model ended.
    Finished {
        /// Turn.
        turn: u32,
        /// Entry position.
        entry: usize,
        /// Entry label.
        model: String,
        /// Why (`None`: its workspace could not be prepared).
        stop: Option<RunStop>,
        /// Counters.
        stats: Option<RunStats>,
        /// Proposals recorded.
        writes: usize,
        /// Failure outside the agent.
        error: Option<String>,
        /// Its last text.
        #[serde(default)]
        final_text: String,
    },
    /// A model's whole conversation after this turn (what `--continue` resumes from).
    Conversation {
        /// Turn.
        turn: u32,
        /// Entry label.
        model: String,
        /// Every message.
        messages: Vec<Message>,
    },
    /// What the user chose for the turn.
    Choice {
        /// Turn.
        turn: u32,
        /// Models whose changes were applied (empty: none of them).
        chosen: Vec<String>,
        /// The apply's journal id, if anything was written.
        apply_id: Option<String>,
    },
    /// The turn's apply and conversation were rewound.
    Rewound {
        /// Turn.
        turn: u32,
    },
}

impl SessionRecord {
    /// The turn the record belongs to.
    pub fn turn(&self) -> u32 {
        match self {
            SessionRecord::Turn { turn, .. }
            | SessionRecord::Workspace { turn, .. }
            | SessionRecord::Agent { turn, .. }
            | SessionRecord::Finished { turn, .. }
            | SessionRecord::Conversation { turn, .. }
            | SessionRecord::Choice { turn, .. }
            | SessionRecord::Rewound { turn } => *turn,
        }
    }
}

/// One model's part of a turn, as read back.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TurnModel {
    /// Entry label.
    pub model: String,
    /// How it ended (`None`: it never finished, e.g. the process was killed).
    pub stop: Option<RunStop>,
    /// Its last text.
    pub final_text: String,
    /// Counters, when it finished.
    pub stats: Option<RunStats>,
    /// Proposals it recorded.
    pub writes: usize,
}

/// One turn, as read back.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TurnSummary {
    /// 1-based number.
    pub turn: u32,
    /// When it started.
    pub time: String,
    /// The prompt.
    pub prompt: String,
    /// Its models in order.
    pub models: Vec<TurnModel>,
    /// Every model finished.
    pub complete: bool,
    /// The choice, if one was made: chosen models (empty = none of them).
    pub chosen: Option<Vec<String>>,
    /// It was rewound afterwards.
    pub rewound: bool,
}

/// Everything read back from one session's log.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionLog {
    /// Every readable record, in order.
    pub records: Vec<SessionRecord>,
    /// Lines that could not be read (named by file and line), for the front end to report.
    pub skipped: Vec<super::events::SkippedLine>,
}

impl SessionLog {
    /// Reads `dir/events.jsonl` (a missing file is an empty session; a torn last line is
    /// skipped).
    pub fn read(dir: &Path) -> io::Result<Self> {
        let (records, skipped) = read_lines_reporting(&dir.join(EVENTS_FILE))?;
        for line in &skipped {
            tracing::warn!("{line}");
        }
        Ok(Self { records, skipped })
    }

    /// The highest turn number (0 for a new session).
    pub fn last_turn(&self) -> u32 {
        self.records
            .iter()
            .map(SessionRecord::turn)
            .max()
            .unwrap_or(0)
    }

    fn rewound(&self) -> BTreeSet<u32> {
        self.records
            .iter()
            .filter_map(|r| match r {
                SessionRecord::Rewound { turn } => Some(*turn),
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
                } => {
                    turns.insert(
                        *turn,
                        TurnSummary {
                            turn: *turn,
                            time: time.clone(),
                            prompt: prompt.clone(),
                            models: models
                                .iter()
                                .map(|m| TurnModel {
                                    model: m.clone(),
                                    stop: None,
                                    final_text: String::new(),
                                    stats: None,
                                    writes: 0,
                                })
                                .collect(),
                            complete: false,
                            chosen: None,
                            rewound: rewound.contains(turn),
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
                _ => {}
            }
        }
        let mut out: Vec<TurnSummary> = turns.into_values().collect();
        for turn in &mut out {
            turn.complete = turn.models.iter().all(|m| m.stop.is_some());
        }
        out
    }

    /// Each model's conversation to continue from: its latest `Conversation` record outside
    /// rewound turns. Models are keyed by entry label.
    pub fn conversations(&self) -> BTreeMap<String, Vec<Message>> {
        let rewound = self.rewound();
        let mut out = BTreeMap::new();
        for record in &self.records {
            if let SessionRecord::Conversation {
                turn,
                model,
                messages,
            } = record
                && !rewound.contains(turn)
            {
                out.insert(model.clone(), messages.clone());
            }
        }
        out
    }

    /// The models of the latest turn (what a continued session runs next by default).
    pub fn last_models(&self) -> Vec<String> {
        self.records
            .iter()
            .rev()
            .find_map(|r| match r {
                SessionRecord::Turn { models, .. } => Some(models.clone()),
                _ => None,
            })
            .unwrap_or_default()
    }
}

/// An open session: appends records for the turns run now.
#[derive(Debug)]
pub struct Session {
    id: String,
    dir: PathBuf,
    log: EventLog,
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
        let log = EventLog::open(&path).map_err(|source| SessionError::Io {
            op: "open",
            path,
            source,
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
        self.log.append(&SessionRecord::Turn {
            turn: self.turn,
            time: now().rfc3339(),
            prompt: prompt.to_string(),
            models: models.to_vec(),
        })?;
        Ok(self.turn)
    }

    /// Appends a record (its turn should be [`Session::turn`]).
    pub fn append(&mut self, record: &SessionRecord) -> io::Result<()> {
        self.log.append(record)
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
    use super::*;

    #[test]
    fn turns_and_conversations_survive_a_torn_log_and_rewinds() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
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
        session.append(&SessionRecord::Rewound { turn: 2 }).unwrap();
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
