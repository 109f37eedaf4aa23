//! Everything versus keeps on disk for a project, under `.versus/` at the project root:
//! `sessions/<id>/` (events log, apply snapshots and journal, spilled tool output),
//! `preferences.jsonl` (every choice the user made) and `history.jsonl` (prompts).
//!
//! All logs are append-only JSON Lines written as things happen, so a process killed at any
//! moment leaves readable files behind.

mod clock;
mod events;
mod log;
mod preferences;
mod replay;
mod store;

pub use clock::{Timestamp, now};
pub use events::{EventLog, SkippedLine};
pub use log::{
    EVENTS_FILE, Session, SessionLog, SessionRecord, TurnModel, TurnSummary, next_turn_note,
};
pub use preferences::{
    ModelRecord, Preference, append_preference, read_preferences, read_preferences_reporting,
};
pub use replay::demo_script;
pub use store::{SessionError, Store};
