//! [`ScanNote`]: what the bash-change scan saw but did not propose, said instead of dropped.
//!
//! A model controls what its commands leave in the workspace: a 3 GB sparse file costs it no
//! disk, 20,000 nested folders cost it a second. Reading such things whole, or walking them
//! by recursion, took the host's memory or crashed versus, and a scan that failed dropped the
//! model's real edits with it. The scan now proposes what fits its limits and notes the rest,
//! path by path, so a user always learns that something was left out and why, and every other
//! change is still proposed.

use serde::{Deserialize, Serialize};

/// The largest file the scan proposes with its content (16 MiB). Source files, lock files and
/// generated bundles fit; a bigger file is noted with its size and blake3 hash instead.
pub const MAX_PROPOSED_FILE: u64 = 16 * 1024 * 1024;

/// The most content one scan holds in memory over all the files it proposes (64 MiB). Files
/// are taken smallest first, so the model's ordinary edits always fit.
pub const MAX_PROPOSED_TOTAL: u64 = 64 * 1024 * 1024;

/// The largest file the bash-change scan hashes (4 GiB): a bigger one is noted by its size
/// alone. Hashing streams at a few GB/s, and `truncate -s 1T` makes a file no disk holds.
pub const MAX_HASHED: u64 = 4 * 1024 * 1024 * 1024;

/// The deepest folder level the scan (and every walk of a project) looks into. A folder at
/// this depth is noted, not entered.
pub const MAX_DEPTH: usize = 200;

/// Notes kept per scan; past it only their number is said.
pub const MAX_NOTES: usize = 50;

/// Longest path shown in a note (the middle is elided).
const SHOWN_PATH: usize = 160;

/// One thing the scan did not propose, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ScanNote {
    /// A file larger than [`MAX_PROPOSED_FILE`]: known by its size and hash only.
    TooLarge {
        /// `/`-separated path in the workspace.
        path: String,
        /// Bytes (its apparent size: a sparse file counts whole).
        size: u64,
        /// blake3 of the content, hashed streaming; empty when larger than [`MAX_HASHED`].
        hash: String,
    },
    /// A file that fits [`MAX_PROPOSED_FILE`] but not what was left of [`MAX_PROPOSED_TOTAL`].
    OverTotal {
        /// `/`-separated path in the workspace.
        path: String,
        /// Bytes.
        size: u64,
        /// blake3 of the content.
        hash: String,
    },
    /// A folder at [`MAX_DEPTH`]: nothing below it was looked at or proposed.
    TooDeep {
        /// `/`-separated path of the folder.
        path: String,
    },
    /// An entry the scan could not read (a path longer than the system allows, a permission):
    /// neither proposed nor taken for deleted.
    Unreadable {
        /// `/`-separated path (empty when the walker could not say).
        path: String,
        /// What the system said.
        error: String,
    },
    /// More notes than [`MAX_NOTES`]: how many were left out.
    More {
        /// Notes not kept.
        count: usize,
    },
}

impl ScanNote {
    /// The path the note is about (empty for [`ScanNote::More`]).
    pub fn path(&self) -> &str {
        match self {
            Self::TooLarge { path, .. }
            | Self::OverTotal { path, .. }
            | Self::TooDeep { path }
            | Self::Unreadable { path, .. } => path,
            Self::More { .. } => "",
        }
    }

    /// One line for the user about all of `notes` (`None` when there are none): what the
    /// model's commands left in its workspace that is not proposed.
    pub fn summary(notes: &[ScanNote]) -> Option<String> {
        if notes.is_empty() {
            return None;
        }
        let parts: Vec<String> = notes.iter().map(ToString::to_string).collect();
        Some(format!(
            "not proposed from the workspace: {}",
            parts.join("; ")
        ))
    }
}

/// Folder names that hold what a build, a package install or an interpreter writes, never
/// source: when a project does not ignore them, a model's `cargo build` or `npm install` is
/// proposed file by file.
pub const BUILD_OUTPUT_FOLDERS: &[&str] = &[
    "target",
    "node_modules",
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".tox",
    ".venv",
    "venv",
    ".gradle",
    ".next",
    "zig-cache",
    ".zig-cache",
];

/// Proposed files under folders of one such name from which the user is told (a few files
/// in a folder named `target` may be the model's intent; this many are a build's output).
pub const BUILD_OUTPUT_MIN_FILES: usize = 10;

/// One sentence per build-output folder name (see [`BUILD_OUTPUT_FOLDERS`]) under which
/// `paths` (the changed files of one change set) hold at least [`BUILD_OUTPUT_MIN_FILES`],
/// naming the fix: these files are proposed only because the project does not ignore that
/// folder (the workspace scans follow the project's ignore files).
pub fn build_output_notes<'a>(paths: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut counts: std::collections::BTreeMap<&'static str, usize> = Default::default();
    for path in paths {
        let mut folders = path.split('/').rev().skip(1);
        if let Some(name) = folders.find_map(|part| {
            BUILD_OUTPUT_FOLDERS
                .iter()
                .copied()
                .find(|name| *name == part)
        }) {
            *counts.entry(name).or_default() += 1;
        }
    }
    BUILD_OUTPUT_FOLDERS
        .iter()
        .filter_map(|name| counts.get(name).map(|n| (name, *n)))
        .filter(|(_, n)| *n >= BUILD_OUTPUT_MIN_FILES)
        .map(|(name, n)| {
            format!(
                "{n} of the changed files are under `{name}/`, build output the project does not \
                 ignore: add `{name}/` to .gitignore (or .git/info/exclude) and it is no longer \
                 proposed"
            )
        })
        .collect()
}

impl std::fmt::Display for ScanNote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::TooLarge { path, size, hash } if hash.is_empty() => write!(
                f,
                "{} is too large ({}, over the {} limit; not hashed, over {})",
                shown(path),
                human(*size),
                human(MAX_PROPOSED_FILE),
                human(MAX_HASHED)
            ),
            Self::TooLarge { path, size, hash } => write!(
                f,
                "{} is too large ({}, over the {} limit; blake3 {hash})",
                shown(path),
                human(*size),
                human(MAX_PROPOSED_FILE)
            ),
            Self::OverTotal { path, size, hash } => write!(
                f,
                "{} ({}; blake3 {hash}) is past the {} the scan holds for one model",
                shown(path),
                human(*size),
                human(MAX_PROPOSED_TOTAL)
            ),
            Self::TooDeep { path } => write!(
                f,
                "{} is nested {MAX_DEPTH} folders deep; nothing below it was scanned",
                shown(path)
            ),
            Self::Unreadable { path, error } if path.is_empty() => {
                write!(f, "an entry could not be read ({error})")
            }
            Self::Unreadable { path, error } => {
                write!(f, "{} could not be read ({error})", shown(path))
            }
            Self::More { count } => write!(f, "and {count} more"),
        }
    }
}

/// A path cut in the middle when long (a 20,000-level path is 40 KB).
fn shown(path: &str) -> String {
    let chars: Vec<char> = path.chars().collect();
    if chars.len() <= SHOWN_PATH {
        return path.to_string();
    }
    let head: String = chars[..SHOWN_PATH / 2].iter().collect();
    let tail: String = chars[chars.len() - SHOWN_PATH / 2..].iter().collect();
    format!("{head}…{tail}")
}

/// Bytes as people read them: `512 B`, `3.0 GiB`.
fn human(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// Collects notes up to [`MAX_NOTES`], counting the rest.
#[derive(Debug, Default)]
pub(crate) struct Notes {
    kept: Vec<ScanNote>,
    more: usize,
}

impl Notes {
    /// Adds a note (or counts it when full).
    pub(crate) fn push(&mut self, note: ScanNote) {
        if self.kept.len() < MAX_NOTES {
            self.kept.push(note);
        } else {
            self.more += 1;
        }
    }

    /// The notes, with a [`ScanNote::More`] at the end when some were left out.
    pub(crate) fn into_vec(mut self) -> Vec<ScanNote> {
        if self.more > 0 {
            self.kept.push(ScanNote::More { count: self.more });
        }
        self.kept
    }
}

#[cfg(test)]
mod build_output_tests {
    use super::*;

    #[test]
    fn many_files_under_a_build_folder_are_named_once_with_the_fix() {
        let mut paths: Vec<String> = (0..12)
            .map(|i| format!("target/debug/deps/f{i}.o"))
            .collect();
        paths.extend((0..5).map(|i| format!("pkg/__pycache__/m{i}.pyc")));
        paths.extend((0..6).map(|i| format!("app/__pycache__/n{i}.pyc")));
        paths.push("src/target.rs".into());
        paths.push("node_modules/x.js".into());
        let notes = build_output_notes(paths.iter().map(String::as_str));
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(
            notes[0].starts_with("12 of the changed files are under `target/`"),
            "{notes:?}"
        );
        assert!(
            notes[0].contains("add `target/` to .gitignore"),
            "{notes:?}"
        );
        assert!(notes[1].starts_with("11 of the changed files are under `__pycache__/`"));
        // A few files, or a file merely named like a build folder, say nothing.
        assert!(build_output_notes(["target/a", "src/target", "target"]).is_empty());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_say_what_was_left_out_and_stay_short() {
        let big = ScanNote::TooLarge {
            path: "big".into(),
            size: 3 << 30,
            hash: "ab12".into(),
        };
        assert_eq!(
            big.to_string(),
            "big is too large (3.0 GiB, over the 16.0 MiB limit; blake3 ab12)"
        );
        let deep = ScanNote::TooDeep {
            path: "d/".repeat(20_000),
        };
        assert!(deep.to_string().len() < 300, "{deep}");
        let mut notes = Notes::default();
        for n in 0..MAX_NOTES + 7 {
            notes.push(ScanNote::TooDeep {
                path: n.to_string(),
            });
        }
        let all = notes.into_vec();
        assert_eq!(all.len(), MAX_NOTES + 1);
        assert_eq!(all[MAX_NOTES], ScanNote::More { count: 7 });
        assert_eq!(human(512), "512 B");
        assert!(ScanNote::summary(&[]).is_none());
    }
}
