//! Everything versus keeps on disk for a project, under `.versus/` at the project root:
//! `sessions/<id>/` (events log, apply snapshots and journal, spilled tool output),
//! `preferences.jsonl` (every choice the user made) and `history.jsonl` (prompts).
//!
//! All logs are append-only JSON Lines written as things happen, so a process killed at any
//! moment leaves readable files behind.

mod blobs;
mod clock;
mod events;
mod log;
mod ownership;
mod preferences;
mod recorder;
mod replay;
mod store;

pub use blobs::BLOBS_DIR;
pub use clock::{Timestamp, now};
pub use events::{EventLog, SkippedLine};
pub use log::{
    CheckResult, EVENTS_FILE, RewindScope, SCHEMA_VERSION, Session, SessionLog, SessionRecord,
    Source, ToolCallSummary, TurnModel, TurnSummary, encode_record, next_turn_note,
};
pub use ownership::{Foreign, OwnerKey, STAMP_FILE};
pub use preferences::{
    ChoiceRef, ModelRecord, Preference, Preferences, RewoundMark, append_preference, mark_rewound,
    read_preferences, read_preferences_reporting,
};
pub use recorder::Recorder;
pub use replay::demo_script;
pub use store::{Adopted, SessionError, Store};
