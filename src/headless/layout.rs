//! Where a run's files go inside its output folder, and how report folders are named.
//!
//! One place decides every path, so the writer, the checkpoint and the report's own
//! `events_file` / `diff_file` fields cannot disagree. Task and model names become file names
//! through [`file_name`], which keeps letters, digits, `.`, `_` and `-` and turns anything else
//! (`/`, `#`, spaces) into `-`; the report stores the resulting relative paths, so readers never
//! have to redo that mapping.

use std::path::{Path, PathBuf};

/// The report document.
pub const REPORT_FILE: &str = "report.json";
/// The human summary.
pub const SUMMARY_FILE: &str = "summary.md";
/// The append-only checkpoint a resume reads.
pub const CHECKPOINT_FILE: &str = "checkpoint.jsonl";

/// The files of one output folder.
#[derive(Debug, Clone)]
pub struct Layout {
    dir: PathBuf,
    tasks: Vec<String>,
    models: Vec<String>,
}

impl Layout {
    /// The layout of `dir` for these task and model names (file names are made unique when
    /// two names map to the same one).
    pub fn new(dir: &Path, tasks: &[String], models: &[String]) -> Self {
        Self {
            dir: dir.to_path_buf(),
            tasks: unique_names(tasks),
            models: unique_names(models),
        }
    }

    /// The output folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `report.json`.
    pub fn report(&self) -> PathBuf {
        self.dir.join(REPORT_FILE)
    }

    /// `summary.md`.
    pub fn summary(&self) -> PathBuf {
        self.dir.join(SUMMARY_FILE)
    }

    /// `checkpoint.jsonl`.
    pub fn checkpoint(&self) -> PathBuf {
        self.dir.join(CHECKPOINT_FILE)
    }

    /// Folder for tools' spilled outputs.
    pub fn spill(&self) -> PathBuf {
        self.dir.join("spill")
    }

    /// `diffs/<task>/<model>.diff`, relative to the folder.
    pub fn diff_rel(&self, task: usize, model: usize) -> String {
        format!("diffs/{}/{}.diff", self.task(task), self.model(model))
    }

    /// `events/<task>/<model>.jsonl`, relative to the folder.
    pub fn events_rel(&self, task: usize, model: usize) -> String {
        format!("events/{}/{}.jsonl", self.task(task), self.model(model))
    }

    /// A relative path of this layout made absolute.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }

    fn task(&self, index: usize) -> &str {
        self.tasks.get(index).map_or("task", String::as_str)
    }

    fn model(&self, index: usize) -> &str {
        self.models.get(index).map_or("model", String::as_str)
    }
}

/// `name` as a file name: letters, digits, `.`, `_` and `-` kept, anything else becomes `-`,
/// never empty and never `.` or `..`.
pub fn file_name(name: &str) -> String {
    let mapped: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect();
    if mapped.is_empty() || mapped.chars().all(|c| c == '.') {
        format!("_{mapped}")
    } else {
        mapped
    }
}

/// File names for `names`, with `-2`, `-3`... added to later names that collide.
fn unique_names(names: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(names.len());
    for name in names {
        let base = file_name(name);
        let mut candidate = base.clone();
        let mut n = 2;
        while out.contains(&candidate) {
            candidate = format!("{base}-{n}");
            n += 1;
        }
        out.push(candidate);
    }
    out
}

/// The recipe's name as the start of a report folder name: lower case, runs of other
/// characters turned into one `-`, at most 60 characters, `recipe` when nothing is left.
pub fn slug(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let trimmed: String = out.trim_matches('-').chars().take(60).collect();
    let trimmed = trimmed.trim_end_matches('-').to_string();
    if trimmed.is_empty() {
        "recipe".to_string()
    } else {
        trimmed
    }
}

/// Whether `folder` (a folder name under `.versus/reports/`) is a report of the recipe with
/// this slug: `<slug>-YYYYMMDD-HHMMSS`, optionally followed by `-N`.
pub fn is_report_of(folder: &str, slug: &str) -> bool {
    let Some(rest) = folder.strip_prefix(slug).and_then(|r| r.strip_prefix('-')) else {
        return false;
    };
    let mut parts = rest.split('-');
    let date = parts.next().unwrap_or_default();
    let time = parts.next().unwrap_or_default();
    let digits = |s: &str, n: usize| s.len() == n && s.chars().all(|c| c.is_ascii_digit());
    let suffix_ok = match parts.next() {
        None => true,
        Some(n) => !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()),
    };
    digits(date, 8) && digits(time, 6) && suffix_ok && parts.next().is_none()
}

/// The newest report folder of the recipe `slug` under `reports` (names sort by time).
pub fn latest_report(reports: &Path, slug: &str) -> Option<PathBuf> {
    let entries = std::fs::read_dir(reports).ok()?;
    let mut found: Vec<(String, u64, PathBuf)> = entries
        .flatten()
        .filter(|e| e.path().is_dir())
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            if !is_report_of(&name, slug) {
                return None;
            }
            let (stamp, n) = split_suffix(&name, slug);
            Some((stamp, n, e.path()))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, _, path)| path)
}

/// `(timestamp, N)` of a report folder name, so `-10` sorts after `-9`.
fn split_suffix(name: &str, slug: &str) -> (String, u64) {
    let rest = &name[slug.len().min(name.len())..];
    let rest = rest.trim_start_matches('-');
    match rest.get(15..) {
        Some(tail) if tail.starts_with('-') => (
            rest.get(..15).unwrap_or(rest).to_string(),
            tail[1..].parse().unwrap_or(0),
        ),
        _ => (rest.to_string(), 1),
    }
}

/// A new, empty report folder `<reports>/<slug>-<stamp>[-N]`, created now.
pub fn create_report_dir(reports: &Path, slug: &str, stamp: &str) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(reports)?;
    for n in 1..1000u32 {
        let name = if n == 1 {
            format!("{slug}-{stamp}")
        } else {
            format!("{slug}-{stamp}-{n}")
        };
        let dir = reports.join(name);
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other(
        "too many reports of this recipe started in the same second",
    ))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn names_become_safe_unique_file_names() {
        assert_eq!(file_name("demo/good"), "demo-good");
        assert_eq!(file_name("openai/gpt-5#2"), "openai-gpt-5-2");
        assert_eq!(file_name(".."), "_..");
        assert_eq!(file_name(""), "_");
        let names = vec!["a/b".to_string(), "a#b".to_string(), "c".to_string()];
        let layout = Layout::new(Path::new("/r"), &names, &names);
        assert_eq!(layout.diff_rel(0, 1), "diffs/a-b/a-b-2.diff");
        assert_eq!(layout.events_rel(2, 2), "events/c/c.jsonl");
    }

    #[test]
    fn slugs_and_report_folder_names() {
        assert_eq!(
            slug("Demo: fix the bulk discount!"),
            "demo-fix-the-bulk-discount"
        );
        assert_eq!(slug("!!!"), "recipe");
        assert!(is_report_of("demo-20261121-090503", "demo"));
        assert!(is_report_of("demo-20261121-090503-2", "demo"));
        assert!(!is_report_of("demo-fix-20261121-090503", "demo"));
        assert!(!is_report_of("demo-2026-090503", "demo"));
        assert!(!is_report_of("demo-20261121-090503-", "demo"));
    }

    #[test]
    fn latest_report_sorts_by_time_then_number() {
        let dir = tempfile::tempdir().unwrap();
        for name in [
            "demo-20261121-090503",
            "demo-20261121-090503-10",
            "demo-20261121-090503-9",
            "demo-20261120-235959",
            "demo-x-20291120-235959",
        ] {
            std::fs::create_dir(dir.path().join(name)).unwrap();
        }
        let latest = latest_report(dir.path(), "demo").unwrap();
        assert!(latest.ends_with("demo-20261121-090503-10"), "{latest:?}");
        let made = create_report_dir(dir.path(), "demo", "20261121-090503").unwrap();
        assert!(made.ends_with("demo-20261121-090503-2"), "{made:?}");
    }
}
