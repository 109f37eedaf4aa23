//! Reading what `versus stats` counts: `.versus/preferences.jsonl` and the headless reports
//! under `.versus/reports/*/report.json`.
//!
//! Reports are read into the few fields stats needs (`schema_version`, `recipe.name`, `recipe.file`, and per
//! `tasks[].runs[]`: `model`, `status`, `cost_usd`, `latency_ms`, `criteria_passed`,
//! `criteria_total`) rather than into the full report types of `headless::report`, so stats
//! keeps working while the report grows new fields, and an old or partly written report costs
//! a warning instead of the whole command. Unknown fields are ignored on purpose here: this is
//! a reader of a versioned document owned elsewhere, not a validator of it.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::StatsError;
use crate::session::{Preference, read_preferences_reporting};

/// The report schema version this reader understands (`schema_version` in report.json).
pub const SCHEMA_VERSION: u32 = 1;

/// The parts of one `report.json` that stats reads.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ReportDoc {
    /// Version of the report schema; other versions are skipped with a warning.
    pub schema_version: u32,
    /// The recipe the run came from.
    pub recipe: ReportRecipe,
    /// One entry per task, in recipe order.
    pub tasks: Vec<ReportTask>,
}

/// `recipe` of a report.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ReportRecipe {
    /// The recipe's name (its `# Title`).
    pub name: String,
    /// The recipe file as it was given to `versus run` (empty when the report has none).
    #[serde(default)]
    pub file: String,
}

/// One task of a report.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ReportTask {
    /// The task's name (`task-1`, or its `### name`).
    pub name: String,
    /// One run per model.
    pub runs: Vec<ReportRun>,
}

/// One model's run of one task.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ReportRun {
    /// The model's entry label (`openai/gpt-5`, `openai/gpt-5#2`).
    pub model: String,
    /// How the run ended; `not_run` and `error` are not counted.
    pub status: ReportStatus,
    /// USD; null when the price is unknown.
    #[serde(default)]
    pub cost_usd: Option<f64>,
    /// Wall time of the run in milliseconds.
    pub latency_ms: u64,
    /// Criteria passed.
    pub criteria_passed: usize,
    /// Criteria checked.
    pub criteria_total: usize,
}

/// A run's status in a report, as `versus run` writes it (a word outside these makes the report
/// unreadable, and it is reported, never counted as something else).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReportStatus {
    /// Finished, every criterion passed.
    Passed,
    /// Finished, some criterion failed.
    Failed,
    /// An interrupted run that never finished.
    NotRun,
    /// Its criteria could not be checked: a broken run, not the model's doing.
    Error,
}

impl ReportRun {
    /// Whether the run finished with results that say something about the model, so it can
    /// be compared: not an interrupted run, not a broken one (criteria that could not run).
    pub fn finished(&self) -> bool {
        matches!(self.status, ReportStatus::Passed | ReportStatus::Failed)
    }
}

/// A report and where it was read from.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedReport {
    /// The `report.json` file.
    pub path: PathBuf,
    /// Its content.
    pub doc: ReportDoc,
}

/// What was found under `.versus/reports/`: the readable reports (oldest folder first) and
/// one line per report that could not be used.
#[derive(Debug, Default)]
pub struct Reports {
    /// Readable reports.
    pub loaded: Vec<LoadedReport>,
    /// Why each skipped report was skipped.
    pub skipped: Vec<String>,
}

/// Every standing choice in `.versus/preferences.jsonl` (none when the file does not exist;
/// torn or unreadable lines are skipped by the session reader, rewound choices left out).
pub fn preferences(versus_dir: &Path) -> Result<Vec<Preference>, StatsError> {
    Ok(preferences_reporting(versus_dir)?.choices)
}

/// The standing choices, how many were left out because they were rewound, and one line per
/// unreadable line of the file (`file:line: skipped: why`).
pub fn preferences_reporting(versus_dir: &Path) -> Result<ReadPreferences, StatsError> {
    let path = versus_dir.join("preferences.jsonl");
    let read =
        read_preferences_reporting(&path).map_err(|source| StatsError::Read { path, source })?;
    Ok(ReadPreferences {
        choices: read.choices,
        rewound: read.rewound,
        skipped: read.skipped.iter().map(ToString::to_string).collect(),
    })
}

/// What [`preferences_reporting`] found.
#[derive(Debug, Default)]
pub struct ReadPreferences {
    /// Choices that still stand.
    pub choices: Vec<Preference>,
    /// Choices left out because they were rewound.
    pub rewound: usize,
    /// Unreadable lines.
    pub skipped: Vec<String>,
}

/// Every `report.json` one level under `.versus/reports/`, in folder-name order (folders are
/// named `<recipe>-<time>`, and times sort). A folder without a report (a run still going, or
/// killed before its first write) is passed over silently; a report that does not parse is
/// skipped with a warning.
pub fn reports(versus_dir: &Path) -> Result<Reports, StatsError> {
    let root = versus_dir.join("reports");
    let entries = match std::fs::read_dir(&root) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Reports::default()),
        Err(source) => return Err(StatsError::Read { path: root, source }),
    };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path().join("report.json"))
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    let mut out = Reports::default();
    for path in files {
        match read_report(&path) {
            Ok(doc) => out.loaded.push(LoadedReport { path, doc }),
            Err(why) => out.skipped.push(why),
        }
    }
    Ok(out)
}

/// One report, or a line saying why it cannot be counted.
pub fn read_report(path: &Path) -> Result<ReportDoc, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("skipped {}: could not read it: {e}", path.display()))?;
    let doc: ReportDoc = serde_json::from_str(&text).map_err(|e| {
        format!(
            "skipped {}: not a report this version of versus can read ({e}); re-run its recipe \
             with `versus run` to count it",
            path.display()
        )
    })?;
    if doc.schema_version != SCHEMA_VERSION {
        return Err(format!(
            "skipped {}: report schema version {} (this versus reads version {SCHEMA_VERSION}); \
             use the versus that wrote it, or re-run its recipe",
            path.display(),
            doc.schema_version
        ));
    }
    Ok(doc)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn missing_files_mean_no_data() {
        let dir = tempfile::tempdir().unwrap();
        assert!(preferences(dir.path()).unwrap().is_empty());
        let r = reports(dir.path()).unwrap();
        assert!(r.loaded.is_empty() && r.skipped.is_empty());
    }

    #[test]
    fn reads_reports_in_folder_order_and_skips_broken_ones() {
        let dir = tempfile::tempdir().unwrap();
        let reports_dir = dir.path().join("reports");
        for (folder, text) in [
            (
                "b-2",
                r#"{"schema_version":1,"recipe":{"name":"b","hash":"x"},"tasks":[{"name":"t",
                    "prompt":"p","runs":[{"model":"m/one","task":"t","status":"failed",
                    "cost_usd":0.5,"latency_ms":10,"extra":1,"criteria_passed":1,
                    "criteria_total":2,"criteria":[]}]}]}"#,
            ),
            (
                "a-1",
                r#"{"schema_version":1,"recipe":{"name":"a"},"tasks":[]}"#,
            ),
            ("c-3", "{not json"),
            (
                "e-5",
                r#"{"schema_version":9,"recipe":{"name":"e"},"tasks":[]}"#,
            ),
        ] {
            std::fs::create_dir_all(reports_dir.join(folder)).unwrap();
            std::fs::write(reports_dir.join(folder).join("report.json"), text).unwrap();
        }
        std::fs::create_dir_all(reports_dir.join("d-still-running")).unwrap();
        let r = reports(dir.path()).unwrap();
        let names: Vec<&str> = r
            .loaded
            .iter()
            .map(|l| l.doc.recipe.name.as_str())
            .collect();
        assert_eq!(names, ["a", "b"]);
        let m = &r.loaded[1].doc.tasks[0].runs[0];
        assert_eq!((m.criteria_passed, m.criteria_total), (1, 2));
        assert_eq!((m.cost_usd, m.latency_ms), (Some(0.5), 10));
        assert!(m.finished());
        assert_eq!(r.skipped.len(), 2, "{:?}", r.skipped);
        assert!(r.skipped[0].contains("c-3"), "{}", r.skipped[0]);
        assert!(r.skipped[1].contains("version 9"), "{}", r.skipped[1]);
    }

    /// A run's status is typed: the words `versus run` writes read, another is reported (the
    /// report skipped with its name), never counted as a finished run.
    #[test]
    fn run_statuses_are_typed_and_an_unknown_one_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let reports_dir = dir.path().join("reports");
        let report = |status: &str| {
            format!(
                r#"{{"schema_version":1,"recipe":{{"name":"r"}},"tasks":[{{"name":"t","runs":[
                    {{"model":"m/one","status":"{status}","latency_ms":1,"criteria_passed":0,
                    "criteria_total":0}}]}}]}}"#
            )
        };
        for (folder, status) in [
            ("a", "not_run"),
            ("b", "error"),
            ("c", "passed"),
            ("d", "exploded"),
        ] {
            std::fs::create_dir_all(reports_dir.join(folder)).unwrap();
            std::fs::write(reports_dir.join(folder).join("report.json"), report(status)).unwrap();
        }
        let r = reports(dir.path()).unwrap();
        let statuses: Vec<(ReportStatus, bool)> = r
            .loaded
            .iter()
            .map(|l| &l.doc.tasks[0].runs[0])
            .map(|run| (run.status, run.finished()))
            .collect();
        assert_eq!(
            statuses,
            [
                (ReportStatus::NotRun, false),
                (ReportStatus::Error, false),
                (ReportStatus::Passed, true)
            ]
        );
        assert_eq!(r.skipped.len(), 1, "{:?}", r.skipped);
        assert!(r.skipped[0].contains("exploded"), "{}", r.skipped[0]);
    }
}
