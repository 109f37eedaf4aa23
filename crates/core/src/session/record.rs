//! The session log's records: what one line of `events.jsonl` holds, its schema version,
//! how a line is written (content inline, or by reference to `blobs/`) and the untyped
//! markers of version 1 still read. Reading a whole log and the views rebuilt from it are in
//! `log`; the per-turn views in `summary`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::preferences::Rating;
use crate::jsonl::{Format, Versioned};

use crate::model::{AgentEvent, Message, RunStats, RunStop};
use crate::workspace::{BaseEntry, FileWrite, Isolation};

/// Schema version written with every record. Version 1 (no `v` field) is still read: its
/// records had the same shapes minus the fields marked `#[serde(default)]`. Version 3 writes
/// large or binary file content by reference (`{"blob": HASH, "size": N}`, bytes in the
/// session's `blobs/` folder) and streamed text as `text_chunk` records; versions 1 and 2
/// (content inline, one `agent` record per text delta) still read. The `check` record (a
/// review check's result) is newer than the first version 3 logs; a reader that does not know
/// it reports that one line as unreadable and reads the rest.
pub const SCHEMA_VERSION: u32 = 3;

/// Which front end wrote a session (the engine is the same under each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// `versus ask`.
    Ask,
    /// The interactive interface.
    Tui,
    /// `versus run` (a recipe).
    Run,
    /// `versus rewind`: the session opened only to undo its latest apply.
    Rewind,
}

impl Source {
    /// The word used in logs and preferences (`ask`, `tui`, `run`, `rewind`).
    pub fn word(self) -> &'static str {
        match self {
            Source::Ask => "ask",
            Source::Tui => "tui",
            Source::Run => "run",
            Source::Rewind => "rewind",
        }
    }
}

/// What a rewind undid: the applied files, the turn in every conversation, or both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum RewindScope {
    /// The applied files and the turn in every model's conversation (`/rewind`).
    #[default]
    Both,
    /// Only the applied files (`/rewind files`, `versus rewind`).
    Files,
    /// Only the conversation (`/rewind conversation`).
    Conversation,
}

impl RewindScope {
    /// Whether the files are restored.
    pub fn files(self) -> bool {
        matches!(self, RewindScope::Both | RewindScope::Files)
    }

    /// Whether the turn leaves the conversations.
    pub fn conversation(self) -> bool {
        matches!(self, RewindScope::Both | RewindScope::Conversation)
    }

    /// The word shown to the user.
    pub fn word(self) -> &'static str {
        match self {
            RewindScope::Both => "both",
            RewindScope::Files => "files",
            RewindScope::Conversation => "conversation",
        }
    }
}

/// One task of a turn that holds several (see [`SessionRecord::Turn`]'s `tasks`): why typed
/// and in the `turn` record, so a reader maps each entry to its task without parsing labels.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnTask {
    /// The task's name (a recipe's `### name`, or `task-N`).
    pub name: String,
    /// Its prompt, what its entries were sent instead of the turn's.
    pub prompt: String,
    /// Its entries (positions in the turn's `models`), in order.
    pub entries: Vec<usize>,
}

impl TurnTask {
    /// The task of `entry` among `tasks`, if any.
    pub fn of(tasks: &[TurnTask], entry: usize) -> Option<&TurnTask> {
        tasks.iter().find(|t| t.entries.contains(&entry))
    }
}

/// One line of the log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SessionRecord {
    /// A front end opened the session (new or continued) with these models.
    Opened {
        /// RFC 3339 time.
        time: String,
        /// The front end.
        source: Source,
        /// Every model of the session at this point, in order (what `--continue` runs).
        models: Vec<String>,
        /// Turns already in the session (0 for a new one).
        continued_after_turn: u32,
    },
    /// The session's models changed (`/models add`, `/models remove`, `/load`).
    ModelsChanged {
        /// The turn it happened after.
        turn: u32,
        /// Every model of the session now, in order.
        models: Vec<String>,
    },
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
        /// The names were hidden (blind mode): a reopened session keeps them hidden until this
        /// turn's choice. Absent (false) in logs written before it was recorded.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        blind: bool,
        /// The tasks the turn holds when its entries do not all work on `prompt` (`versus
        /// run` puts several independent tasks in one turn, so their models run side by
        /// side): each task's name, prompt and entries. Every record of a model (workspace,
        /// agent, proposals, finished) names its entry, so it says which task it belongs to.
        /// Absent (empty) for a turn of one prompt and in logs written before it.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tasks: Vec<TurnTask>,
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
        mode: Isolation,
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
        /// A tool result's output longer than [`crate::workspace::content::INLINE_MAX`],
        /// moved out of `event` so the line names it by hash in `blobs/` (each distinct
        /// output stored once) and stays short to read; put back into the event when the log
        /// is read. Absent otherwise and in older logs.
        #[serde(
            default,
            skip_serializing_if = "Option::is_none",
            with = "crate::workspace::content"
        )]
        output: Option<std::sync::Arc<Vec<u8>>>,
    },
    /// What a finished model proposed: every write in order and the base entry of each path it
    /// touched, so its change set can be rebuilt after a crash (`--continue`) without its
    /// workspace.
    Proposals {
        /// Turn.
        turn: u32,
        /// Entry position.
        entry: usize,
        /// Entry label.
        model: String,
        /// Recorded writes, then the changes bash made.
        writes: Vec<FileWrite>,
        /// The base entry of each touched path (`None`: the path did not exist at turn start).
        base: BTreeMap<String, Option<BaseEntry>>,
        /// The mode of each touched path that was a file in the model's workspace when it
        /// finished, so a turn reopened after its workspace is gone keeps a change of the
        /// executable bit (absent in records written before: modes then unknown).
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        modes: BTreeMap<String, u32>,
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
    /// A model's conversation after this turn, written as a change to its previous one: its
    /// first `keep` messages, then `messages`. A turn appends to the conversation it was given,
    /// so only the new messages are written, and a long session's log (and the engine's memory)
    /// grows with the conversation, not with its square.
    ConversationTail {
        /// Turn.
        turn: u32,
        /// Entry label.
        model: String,
        /// Messages kept from the model's conversation before this record.
        keep: usize,
        /// The messages that follow them.
        messages: Vec<Message>,
    },
    /// A model's review check ended (the project's or recipe's check command, run in its
    /// workspace when it finished): a reopened session shows it again, since the workspace
    /// it ran in is gone.
    Check {
        /// Turn.
        turn: u32,
        /// Entry label.
        model: String,
        /// How it ended.
        result: CheckResult,
    },
    /// Every model of the turn has ended.
    TurnEnded {
        /// Turn.
        turn: u32,
        /// RFC 3339 time.
        time: String,
    },
    /// What the user chose for the turn.
    Choice {
        /// Turn.
        turn: u32,
        /// Models chosen (their changes applied, or their answer preferred when they changed
        /// nothing); empty: none of them.
        chosen: Vec<String>,
        /// The apply's journal id, if anything was written.
        apply_id: Option<String>,
        /// Ratings given with the choice (written as `good`, `bad`, `tie`).
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        ratings: BTreeMap<String, Rating>,
        /// Paths the apply changed on disk (the next turn's note names them).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        applied: Vec<String>,
    },
    /// A turn was rewound (its apply, its conversation, or both).
    Rewound {
        /// Turn.
        turn: u32,
        /// What was undone (version 1 logs: both).
        #[serde(default)]
        scope: RewindScope,
        /// The apply undone, if files were restored.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        apply_id: Option<String>,
        /// Paths restored.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        restored: Vec<String>,
        /// Paths edited after the apply and left as they were.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        kept: Vec<String>,
    },
    /// `/clear`: every conversation starts afresh after this turn.
    Cleared {
        /// The turn it happened after.
        turn: u32,
    },
    /// What the turn's models were given besides the prompt: the instruction files (paths,
    /// sizes, hashes), the skill catalog and what was left out of it, and the fairness
    /// ledger (a hash per model of everything it was given, the differences flagged).
    /// Written once the turn started, before any of its models' events.
    Context {
        /// The turn.
        turn: u32,
        /// Instruction files and skills.
        #[serde(default)]
        context: crate::context::ProjectContext,
        /// One entry per model, in entry order.
        #[serde(default)]
        ledger: Vec<crate::context::LedgerEntry>,
    },
    /// `/compact` or automatic compaction folded earlier turns into a recap.
    Compacted {
        /// The turn it happened after.
        turn: u32,
        /// Turns folded over all models.
        turns_folded: usize,
    },
    /// Blind mode's aliases changed: set for the session's models (blind mode turned on, a
    /// model added), or revealed (the user asked, or the session ended). The latest one is
    /// the session's state, so a reopened session shows the same aliases. Logs written before
    /// it have none (a blind `turn` then derives its aliases as those versions did).
    Blind {
        /// The turn it happened after (0: before the first).
        turn: u32,
        /// Every model's alias: entry label → `Model A`...
        aliases: BTreeMap<String, String>,
        /// The names are shown: choices from here on are not blind.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        revealed: bool,
    },
    /// The front end closed the session.
    Ended {
        /// The last turn.
        turn: u32,
        /// RFC 3339 time.
        time: String,
    },
}

impl SessionRecord {
    /// The turn the record belongs to (0 for records written before the first turn).
    pub fn turn(&self) -> u32 {
        match self {
            SessionRecord::Opened {
                continued_after_turn,
                ..
            } => *continued_after_turn,
            SessionRecord::ModelsChanged { turn, .. }
            | SessionRecord::Turn { turn, .. }
            | SessionRecord::Workspace { turn, .. }
            | SessionRecord::Agent { turn, .. }
            | SessionRecord::Proposals { turn, .. }
            | SessionRecord::Finished { turn, .. }
            | SessionRecord::Conversation { turn, .. }
            | SessionRecord::ConversationTail { turn, .. }
            | SessionRecord::Check { turn, .. }
            | SessionRecord::TurnEnded { turn, .. }
            | SessionRecord::Choice { turn, .. }
            | SessionRecord::Rewound { turn, .. }
            | SessionRecord::Cleared { turn }
            | SessionRecord::Compacted { turn, .. }
            | SessionRecord::Context { turn, .. }
            | SessionRecord::Blind { turn, .. }
            | SessionRecord::Ended { turn, .. } => *turn,
        }
    }

    /// A rewind of the whole turn (files and conversation), as versions before 2 wrote it.
    pub fn rewound(turn: u32) -> Self {
        SessionRecord::Rewound {
            turn,
            scope: RewindScope::Both,
            apply_id: None,
            restored: Vec::new(),
            kept: Vec::new(),
        }
    }
}

/// How a review check ended: the command, whether it passed, in words, how long it took and
/// the end of its output. Kept in the session log ([`SessionRecord::Check`]) so the review of a
/// reopened session still says which model's change builds and passes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckResult {
    /// The command that ran (the check column names it).
    pub command: String,
    /// Exit code 0.
    pub passed: bool,
    /// How it ended in words (`passed (exit 0)`, `failed (exit 101)`, `timed out after 600 s
    /// and was stopped`, `cancelled`).
    pub ending: String,
    /// Wall time.
    pub elapsed_ms: u64,
    /// The last lines of its merged stdout and stderr.
    #[serde(default)]
    pub tail: Vec<String>,
}

/// The session log as a record file: every line carries [`SCHEMA_VERSION`]; a line without a
/// version is version 1. Reading, appending, torn tails and newer logs follow [`crate::jsonl`].
pub const SESSION_LOG: Format = Format {
    name: "session log",
    version: SCHEMA_VERSION,
    unversioned: 1,
};

/// The untyped markers version 1 of the interface wrote beside the typed records.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum LegacyRecord {
    Session {
        #[serde(default)]
        time: String,
        #[serde(default)]
        models: Vec<String>,
        #[serde(default)]
        continued_after_turn: u32,
    },
    TurnEnd {
        turn: u32,
        #[serde(default)]
        time: String,
    },
    Clear {},
    Compact {
        #[serde(default)]
        turns_folded: usize,
    },
    Rewind {
        #[serde(default)]
        turn: Option<u32>,
        #[serde(default)]
        scope: Option<RewindScope>,
        #[serde(default)]
        restored: Vec<String>,
        #[serde(default)]
        kept: Vec<String>,
    },
    End {
        #[serde(default)]
        time: String,
    },
}

impl LegacyRecord {
    /// The typed record, or `None` for a marker that only repeated a typed one.
    pub(super) fn upgrade(self, last_turn: u32) -> Option<SessionRecord> {
        Some(match self {
            LegacyRecord::Session {
                time,
                models,
                continued_after_turn,
            } => SessionRecord::Opened {
                time,
                source: Source::Tui,
                models,
                continued_after_turn,
            },
            LegacyRecord::TurnEnd { turn, time } => SessionRecord::TurnEnded { turn, time },
            LegacyRecord::Clear {} => SessionRecord::Cleared { turn: last_turn },
            LegacyRecord::Compact { turns_folded } => SessionRecord::Compacted {
                turn: last_turn,
                turns_folded,
            },
            LegacyRecord::Rewind {
                turn: Some(turn),
                scope: Some(RewindScope::Files),
                restored,
                kept,
            } => SessionRecord::Rewound {
                turn,
                scope: RewindScope::Files,
                apply_id: None,
                restored,
                kept,
            },
            LegacyRecord::Rewind { .. } => return None,
            LegacyRecord::End { time } => SessionRecord::Ended {
                turn: last_turn,
                time,
            },
        })
    }
}

/// Encodes a record as one log line (without the newline), self-contained: file content is
/// inline (text, or base64).
pub fn encode_record(record: &SessionRecord) -> serde_json::Result<Vec<u8>> {
    serde_json::to_vec(&Versioned {
        v: SCHEMA_VERSION,
        record,
    })
}

/// Encodes a record as one log line (without the newline) with large or binary file content
/// by reference, and returns that content for the session's blob folder.
pub(crate) fn encode_record_with_blobs(
    record: &SessionRecord,
) -> serde_json::Result<(Vec<u8>, Vec<crate::workspace::content::Blob>)> {
    super::blobs::encode(&Versioned {
        v: SCHEMA_VERSION,
        record,
    })
}

impl SessionRecord {
    /// The record of one agent event: a tool result's long output goes apart, to be stored
    /// by reference ([`SessionRecord::Agent::output`]).
    pub fn agent(turn: u32, entry: usize, model: &str, mut event: AgentEvent) -> SessionRecord {
        let mut apart = None;
        if let AgentEvent::ToolResult { output, .. } = &mut event
            && output.len() > crate::workspace::content::INLINE_MAX
        {
            apart = Some(std::sync::Arc::new(std::mem::take(output).into_bytes()));
        }
        SessionRecord::Agent {
            turn,
            entry,
            model: model.to_string(),
            event,
            output: apart,
        }
    }

    /// A record as read: a tool result's output stored apart is back in its event.
    pub(super) fn joined(mut self) -> SessionRecord {
        if let SessionRecord::Agent {
            event: AgentEvent::ToolResult { output, .. },
            output: apart,
            ..
        } = &mut self
            && let Some(bytes) = apart.take()
        {
            *output = String::from_utf8_lossy(&bytes).into_owned();
        }
        self
    }
}
