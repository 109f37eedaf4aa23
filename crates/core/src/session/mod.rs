//! Everything versus keeps on disk for a project, under `.versus/` at the project root:
//! `sessions/<id>/` (events log, apply snapshots and journal, spilled tool output),
//! `preferences.jsonl` (every choice the user made) and `history.jsonl` (prompts).
//!
//! All logs are append-only JSON Lines written as things happen, so a process killed at any
//! moment leaves readable files behind.

mod blobs;
mod clock;
mod history;
mod log;
mod ownership;
mod preferences;
mod record;
mod recorder;
mod replay;
mod store;
mod summary;

pub use blobs::BLOBS_DIR;
pub(crate) use blobs::store as store_blobs;
pub use clock::{Timestamp, now};
pub use history::{HISTORY, HistoryEntry, append_history, read_history};
pub use log::{EVENTS_FILE, Session, SessionLog, next_turn_note};
pub use ownership::{Foreign, OwnerKey, STAMP_FILE};
pub use preferences::{
    ChoiceRef, ModelRecord, PREFERENCES, Preference, Preferences, Rating, RewoundMark,
    append_preference, mark_rewound, read_preferences, read_preferences_reporting,
};
pub use record::{
    CheckResult, RewindScope, SCHEMA_VERSION, SESSION_LOG, SessionRecord, Source, TurnTask,
    encode_record,
};
pub use recorder::Recorder;
pub use replay::{SubAgentTrack, demo_script, demo_script_with, sub_agent_tracks};
pub use store::{Adopted, SessionError, Store};
pub use summary::{ToolCallSummary, TurnModel, TurnSummary};

/// A line of a record file that could not be read, named by file and line (see
/// [`crate::jsonl`]).
pub type SkippedLine = crate::jsonl::Damage;
