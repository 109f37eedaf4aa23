//! `.versus/preferences.jsonl`: one line per choice, so win rates and cost per model
//! accumulate across sessions (`versus stats` reads it). When a choice is rewound, a mark
//! line (`{"rewound": {"session", "turn"}}`) is appended rather than the choice rewritten:
//! the file stays append-only, and readers leave rewound choices out and say how many.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::record::Source;
use crate::jsonl::{self, Appender, Format};
use crate::model::{RunStop, Usage};

/// `preferences.jsonl` as a record file: every line carries its version (a line without one is
/// version 1, the same shapes); torn tails, damage and newer files follow [`crate::jsonl`].
pub const PREFERENCES: Format = Format {
    name: "preferences file",
    version: 1,
    unversioned: 1,
};

/// A rating given with a choice (the review's `+`, `-`, `=`), written as the word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rating {
    /// `+`: a good answer (a mark counted in the stats, not a game).
    Good,
    /// `-`: a bad answer (a mark, not a game).
    Bad,
    /// `=`: as good as the chosen one (a tie in the stats).
    Tie,
}

impl Rating {
    /// The word written in the files and shown (`good`, `bad`, `tie`).
    pub fn word(self) -> &'static str {
        match self {
            Rating::Good => "good",
            Rating::Bad => "bad",
            Rating::Tie => "tie",
        }
    }
}

impl std::fmt::Display for Rating {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.word())
    }
}

/// How a model's run ended, written as the word the review shows (`done`, `max steps`,
/// `timeout`, `max cost`, `cancelled`, `error`, `max tokens`: [`RunStop::label`]), as it always
/// was.
mod stop_label {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::model::RunStop;

    const ALL: [RunStop; 7] = [
        RunStop::Completed,
        RunStop::MaxSteps,
        RunStop::Timeout,
        RunStop::MaxCost,
        RunStop::Cancelled,
        RunStop::Error,
        RunStop::MaxTokens,
    ];

    pub fn serialize<S: Serializer>(stop: &RunStop, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(stop.label())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<RunStop, D::Error> {
        let word = String::deserialize(d)?;
        ALL.into_iter()
            .find(|stop| stop.label() == word)
            .ok_or_else(|| {
                serde::de::Error::custom(format!(
                    "unknown status {word:?} (expected one of: {})",
                    ALL.map(RunStop::label).join(", ")
                ))
            })
    }
}

/// What one model of the turn did, as recorded with the choice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelRecord {
    /// Entry label (`openai/gpt-5#2`).
    pub model: String,
    /// How its run ended (written as `done`, `timeout`, ...).
    #[serde(with = "stop_label")]
    pub status: RunStop,
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
    /// Per-model ratings.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub ratings: BTreeMap<String, Rating>,
    /// Whether names were hidden when the choice was made.
    pub blind: bool,
    /// Where the choice was made (written as `ask`, `tui`, `run`).
    pub source: Source,
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
    pub skipped: Vec<super::SkippedLine>,
}

/// Appends a choice to `path` (after removing a last line a crash cut short; refused when a
/// newer versus wrote the file). Errors do not name the path: callers do.
pub fn append_preference(path: &Path, preference: &Preference) -> std::io::Result<()> {
    Appender::open(path, &PREFERENCES)?.append_record(&PREFERENCES, preference)
}

/// Appends the mark that the choice of `session`'s `turn` was rewound.
pub fn mark_rewound(path: &Path, session: &str, turn: u32, time: String) -> std::io::Result<()> {
    let mark = RewoundMark {
        rewound: ChoiceRef {
            session: session.to_string(),
            turn,
        },
        time,
    };
    Appender::open(path, &PREFERENCES)?.append_record(&PREFERENCES, &mark)
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
    let read: jsonl::Read<Line> = jsonl::read(path, &PREFERENCES)?;
    let (lines, skipped) = (read.records, read.damaged);
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
            source: Source::Ask,
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

    /// Lines as versions before this one wrote them (no version, the words as strings) read
    /// into the typed choice; new lines carry the version first and the same words.
    #[test]
    fn old_lines_read_typed_and_new_ones_keep_the_words() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("preferences.jsonl");
        std::fs::write(
            &path,
            concat!(
                r#"{"time":"t","session":"s1","turn":1,"prompt_hash":"h","models":[{"model":"demo/a","status":"done","cost":null,"usage":{"input":1,"output":2,"cache_read":0,"cache_write":0,"reasoning":0},"latency_ms":3,"files":1},{"model":"demo/b","status":"max steps","cost":0.5,"usage":{"input":0,"output":0,"cache_read":0,"cache_write":0,"reasoning":0},"latency_ms":4,"files":0}],"chosen":["demo/a"],"ratings":{"demo/b":"tie"},"blind":true,"source":"tui"}"#,
                "\n",
                r#"{"rewound":{"session":"s0","turn":1},"time":"t"}"#,
                "\n"
            ),
        )
        .unwrap();
        let read = read_preferences_reporting(&path).unwrap();
        assert!(read.skipped.is_empty(), "{:?}", read.skipped);
        let p = &read.choices[0];
        assert_eq!(p.models[0].status, RunStop::Completed);
        assert_eq!(p.models[1].status, RunStop::MaxSteps);
        assert_eq!(p.ratings["demo/b"], Rating::Tie);
        assert_eq!(p.source, Source::Tui);
        append_preference(&path, p).unwrap();
        mark_rewound(&path, "s1", 1, "t2".into()).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[2].starts_with(r#"{"v":1,"time":"t","#),
            "{}",
            lines[2]
        );
        assert!(lines[2].contains(r#""status":"max steps""#));
        assert!(lines[2].contains(r#""ratings":{"demo/b":"tie"}"#));
        assert!(lines[2].ends_with(r#""source":"tui"}"#), "{}", lines[2]);
        assert!(lines[3].starts_with(r#"{"v":1,"rewound":"#), "{}", lines[3]);
        let read = read_preferences_reporting(&path).unwrap();
        assert!(read.skipped.is_empty(), "{:?}", read.skipped);
        assert_eq!((read.choices.len(), read.rewound), (0, 2));
        // An unknown word is reported with its place, not read as something else.
        std::fs::write(&path, text.replace("max steps", "exploded")).unwrap();
        let read = read_preferences_reporting(&path).unwrap();
        assert_eq!(read.skipped.len(), 2, "{:?}", read.skipped);
        assert_eq!(read.skipped[0].line, 1);
    }
}
