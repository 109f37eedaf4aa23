//! `.versus/preferences.jsonl`: one line per choice, so win rates and cost per model
//! accumulate across sessions (`versus stats` reads it).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::events::{EventLog, read_lines};
use crate::model::Usage;

/// What one model of the turn did, as recorded with the choice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelRecord {
    /// Entry label (`openai/gpt-5#2`).
    pub model: String,
    /// How its run ended (`done`, `timeout`, ...).
    pub status: String,
    /// USD; `None` when the price is unknown.
    pub cost: Option<f64>,
    /// Tokens.
    pub usage: Usage,
    /// Wall time in milliseconds.
    pub latency_ms: u64,
    /// Files in its change set.
    pub files: usize,
}

/// One choice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Preference {
    /// RFC 3339 time.
    pub time: String,
    /// Session id.
    pub session: String,
    /// Turn number in the session (1-based).
    pub turn: u32,
    /// blake3 of the prompt (the prompt itself stays in the session).
    pub prompt_hash: String,
    /// Every model of the turn.
    pub models: Vec<ModelRecord>,
    /// The chosen model(s); empty = "none of them".
    pub chosen: Vec<String>,
    /// Per-model ratings (`good`, `bad`, `tie`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub ratings: BTreeMap<String, String>,
    /// Whether names were hidden when the choice was made.
    pub blind: bool,
    /// Where the choice was made (`ask`, `tui`).
    pub source: String,
}

/// Appends a choice to `path`.
pub fn append_preference(path: &Path, preference: &Preference) -> std::io::Result<()> {
    EventLog::open(path)?.append(preference)
}

/// Every readable choice in `path` (missing file: none).
pub fn read_preferences(path: &Path) -> std::io::Result<Vec<Preference>> {
    read_lines(path)
}

/// Every readable choice in `path`, and the lines that could not be read.
pub fn read_preferences_reporting(
    path: &Path,
) -> std::io::Result<(Vec<Preference>, Vec<super::events::SkippedLine>)> {
    super::events::read_lines_reporting(path)
}
