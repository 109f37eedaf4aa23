//! `.versus/preferences.jsonl`: one line per choice, so win rates and cost per model
//! accumulate across sessions (`versus stats` reads it). When a choice is rewound, a mark
//! line (`{"rewound": {"session", "turn"}}`) is appended rather than the choice rewritten:
//! the file stays append-only, and readers leave rewound choices out and say how many.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::events::EventLog;
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

/// Which choice a rewind mark undoes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChoiceRef {
    /// Session id.
    pub session: String,
    /// Turn number.
    pub turn: u32,
}

/// The mark appended when a choice is rewound.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RewoundMark {
    /// The choice.
    pub rewound: ChoiceRef,
    /// RFC 3339 time of the rewind.
    pub time: String,
}

/// One line of the file.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Line {
    Rewound(RewoundMark),
    Choice(Box<Preference>),
}

/// What the file holds: the choices that still stand, and what was left out.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Preferences {
    /// Choices in file order, rewound ones left out.
    pub choices: Vec<Preference>,
    /// Choices left out because they were rewound afterwards.
    pub rewound: usize,
    /// Lines that could not be read.
    pub skipped: Vec<super::events::SkippedLine>,
}

/// Appends a choice to `path`.
pub fn append_preference(path: &Path, preference: &Preference) -> std::io::Result<()> {
    EventLog::open(path)?.append(preference)
}

/// Appends the mark that the choice of `session`'s `turn` was rewound.
pub fn mark_rewound(path: &Path, session: &str, turn: u32, time: String) -> std::io::Result<()> {
    EventLog::open(path)?.append(&RewoundMark {
        rewound: ChoiceRef {
            session: session.to_string(),
            turn,
        },
        time,
    })
}

/// Every standing choice in `path` (missing file: none).
pub fn read_preferences(path: &Path) -> std::io::Result<Vec<Preference>> {
    let read = read_preferences_reporting(path)?;
    for line in &read.skipped {
        tracing::warn!("{line}");
    }
    Ok(read.choices)
}

/// Every standing choice in `path`, how many were rewound, and the lines that could not be
/// read.
pub fn read_preferences_reporting(path: &Path) -> std::io::Result<Preferences> {
    let (lines, skipped): (Vec<Line>, _) = super::events::read_lines_reporting(path)?;
    let marks: std::collections::HashSet<(String, u32)> = lines
        .iter()
        .filter_map(|l| match l {
            Line::Rewound(m) => Some((m.rewound.session.clone(), m.rewound.turn)),
            Line::Choice(_) => None,
        })
        .collect();
    let mut out = Preferences {
        skipped,
        ..Preferences::default()
    };
    for line in lines {
        if let Line::Choice(choice) = line {
            if marks.contains(&(choice.session.clone(), choice.turn)) {
                out.rewound += 1;
            } else {
                out.choices.push(*choice);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn choice(session: &str, turn: u32) -> Preference {
        Preference {
            time: "t".into(),
            session: session.into(),
            turn,
            prompt_hash: String::new(),
            models: Vec::new(),
            chosen: vec!["demo/a".into()],
            ratings: BTreeMap::new(),
            blind: false,
            source: "ask".into(),
        }
    }

    #[test]
    fn a_rewound_choice_is_left_out_and_counted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("preferences.jsonl");
        append_preference(&path, &choice("s1", 1)).unwrap();
        append_preference(&path, &choice("s1", 2)).unwrap();
        append_preference(&path, &choice("s2", 1)).unwrap();
        mark_rewound(&path, "s1", 2, "t".into()).unwrap();
        let read = read_preferences_reporting(&path).unwrap();
        let kept: Vec<(&str, u32)> = read
            .choices
            .iter()
            .map(|c| (c.session.as_str(), c.turn))
            .collect();
        assert_eq!(kept, vec![("s1", 1), ("s2", 1)]);
        assert_eq!(read.rewound, 1);
        assert!(read.skipped.is_empty());
    }
}
