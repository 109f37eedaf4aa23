//! `versus stats`: which model wins, how often, at what cost, from everything the project has
//! recorded: interactive choices (`.versus/preferences.jsonl`, written by the TUI and by
//! `versus ask --pick`) and headless reports (`.versus/reports/*/report.json`).
//!
//! Both sources are reduced to the same thing, a list of comparisons that each yield
//! head-to-head games ([`tally`] holds the rules), so one Bradley-Terry fit ([`rating`]) ranks
//! models across interactive and headless evidence. Reading files ([`sources`]) is kept apart
//! from the arithmetic, so the counting and the ratings are plain functions over data and are
//! tested without files.
//!
//! This module sits beside `headless/` and reads its reports as JSON, not through its types:
//! it uses only `session` (for the preferences file format) below it.

pub mod rating;
pub mod sources;
pub mod tally;

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::session::Preference;
use rating::IndexedGame;
pub use rating::Rating;
use sources::{LoadedReport, ReportRecipe};
use tally::{Choice, Outcome};
pub use tally::{ModelPassRate, RecipePassRates};

/// Why the statistics could not be gathered. Texts say what to do.
#[derive(Debug, thiserror::Error)]
pub enum StatsError {
    /// A file or folder of `.versus/` exists but could not be read.
    #[error("could not read {}: {source}; check its permissions", path.display())]
    Read {
        /// What was being read.
        path: PathBuf,
        /// Why it failed.
        source: std::io::Error,
    },
    /// `--recipe NAME` matches no report.
    #[error("no report of a recipe named `{asked}`; {known}")]
    NoSuchRecipe {
        /// The name given.
        asked: String,
        /// The recipes that have reports, as a sentence.
        known: String,
    },
}

/// What to count.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Only headless reports of this recipe (by name, by the name's slug as used in report
    /// folder names, or by its file name); interactive choices belong to no recipe and are
    /// left out.
    pub recipe: Option<String>,
}

/// One model's line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelStats {
    /// The model (sample suffixes removed).
    pub model: String,
    /// Comparisons it took part in: interactive choices plus headless tasks (the `compared`
    /// column of `versus stats`; the name stays for scripts that read the JSON).
    pub choices: u32,
    /// Head-to-head games won.
    pub wins: u32,
    /// Games lost.
    pub losses: u32,
    /// Games tied.
    pub ties: u32,
    /// Interactive choices in which the user took none of the models.
    pub none_of_them: u32,
    /// Runs rated `good` (`+` in the review): a mark shown beside the games, not a game.
    pub good: u32,
    /// Runs rated `bad` (`-`): a mark, not a game.
    pub bad: u32,
    /// `(wins + ties / 2) / games`; `null` without games.
    pub win_rate: Option<f64>,
    /// Bradley-Terry rating with its 95% interval; `null` without games.
    pub rating: Option<Rating>,
    /// Mean USD per run, over the runs whose price is known.
    pub mean_cost_usd: Option<f64>,
    /// Mean wall time per run in milliseconds.
    pub mean_latency_ms: Option<f64>,
}

/// How many records each source gave.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SourceCounts {
    /// Interactive choices counted.
    pub preferences: usize,
    /// Interactive choices left out because they were rewound afterwards.
    pub rewound: usize,
    /// Headless reports counted.
    pub reports: usize,
    /// Headless tasks counted (each is one comparison).
    pub report_tasks: usize,
    /// Reports that could not be read, with the reason.
    pub skipped: Vec<String>,
}

/// How the figures were computed, so a JSON reader does not have to guess.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Method {
    /// The rating model.
    pub rating: &'static str,
    /// The interval.
    pub interval: &'static str,
    /// How games are derived.
    pub games: &'static str,
    /// What the review's ratings (`+` / `-` / `=`) mean for the figures.
    pub ratings: &'static str,
}

/// The method this version uses.
pub const METHOD: Method = Method {
    rating: "Bradley-Terry fitted by MM iterations, ties count half a win, each model also \
             gets 1 win and 1 loss against a virtual opponent rated 1000; Elo scale \
             (1000 + 400 log10 strength)",
    interval: "95%, rating +- 1.96 standard errors from the Fisher information",
    games: "interactive: the chosen models (and models rated tie) beat every other model of \
            the turn and tie with each other, 'none' gives no games; headless: per task, a \
            model that passed a larger share of the criteria beats the other, equal shares tie",
    ratings: RATINGS_MEANING,
};

/// What each rating of the review means for the statistics, said by `versus stats`, `/stats`
/// and the JSON `method`, so a user's `=` is never a surprise.
pub const RATINGS_MEANING: &str = "= tie means as good as the model you kept (it ties \
     with the kept model and beats the models not kept; with none of them it has no effect); \
     + good and - bad are marks (the marks column), not games";

/// Everything `versus stats` shows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stats {
    /// The `--recipe` filter, if any.
    pub recipe: Option<String>,
    /// What was read.
    pub sources: SourceCounts,
    /// One line per model, best rating first.
    pub models: Vec<ModelStats>,
    /// Headless pass rates per recipe.
    pub recipes: Vec<RecipePassRates>,
    /// How it was computed.
    pub method: Method,
}

/// Reads `PROJECT/.versus/` and computes the statistics. Missing files mean no data.
pub fn collect(project: &Path, filter: &Filter) -> Result<Stats, StatsError> {
    let dir = project.join(".versus");
    let read = if filter.recipe.is_some() {
        sources::ReadPreferences::default()
    } else {
        sources::preferences_reporting(&dir)?
    };
    let (preferences, unreadable) = (read.choices, read.skipped);
    let mut reports = sources::reports(&dir)?;
    if let Some(asked) = &filter.recipe {
        let before: Vec<String> = reports
            .loaded
            .iter()
            .map(|r| r.doc.recipe.name.clone())
            .collect();
        reports
            .loaded
            .retain(|r| recipe_matches(&r.doc.recipe, asked));
        if reports.loaded.is_empty() {
            return Err(StatsError::NoSuchRecipe {
                asked: asked.clone(),
                known: known_recipes(before),
            });
        }
    }
    let mut stats = compute(&preferences, &reports.loaded);
    stats.recipe = filter.recipe.clone();
    stats.sources.skipped = unreadable;
    stats.sources.rewound = read.rewound;
    stats.sources.skipped.extend(reports.skipped);
    Ok(stats)
}

/// The statistics of already-read records (no filtering, no IO).
pub fn compute(preferences: &[Preference], reports: &[LoadedReport]) -> Stats {
    let mut choices: Vec<Choice> = preferences.iter().map(tally::from_preference).collect();
    let mut report_tasks = 0;
    for report in reports {
        for task in &report.doc.tasks {
            choices.push(tally::from_task(task));
            report_tasks += 1;
        }
    }
    let counts = tally::count(&choices);
    let names: Vec<&String> = counts.keys().collect();
    let index = |name: &str| names.binary_search_by(|n| n.as_str().cmp(name)).ok();
    let games: Vec<IndexedGame> = choices
        .iter()
        .flat_map(|c| &c.games)
        .filter_map(|g| {
            Some(IndexedGame {
                a: index(&g.first)?,
                b: index(&g.second)?,
                score_a: match g.outcome {
                    Outcome::FirstWins => 1.0,
                    Outcome::SecondWins => 0.0,
                    Outcome::Tie => 0.5,
                },
            })
        })
        .collect();
    let ratings = rating::rate(names.len(), &games);
    let mut models: Vec<ModelStats> = counts
        .iter()
        .zip(ratings)
        .map(|((model, c), rating)| ModelStats {
            model: model.clone(),
            choices: c.choices,
            wins: c.wins,
            losses: c.losses,
            ties: c.ties,
            none_of_them: c.none_of_them,
            good: c.good,
            bad: c.bad,
            win_rate: c.win_rate(),
            rating,
            mean_cost_usd: c.mean_cost(),
            mean_latency_ms: c.mean_latency_ms(),
        })
        .collect();
    models.sort_by(|a, b| {
        let key = |m: &ModelStats| m.rating.map_or(f64::NEG_INFINITY, |r| r.value);
        key(b)
            .total_cmp(&key(a))
            .then_with(|| b.choices.cmp(&a.choices))
            .then_with(|| a.model.cmp(&b.model))
    });
    Stats {
        recipe: None,
        sources: SourceCounts {
            preferences: preferences.len(),
            rewound: 0,
            reports: reports.len(),
            report_tasks,
            skipped: Vec::new(),
        },
        models,
        recipes: tally::pass_rates(reports),
        method: METHOD,
    }
}

/// Whether a report's recipe is the one asked for: its name ignoring case, or the same slug
/// as its name or its file's stem (`Fix failing tests`, `fix-failing-tests`, and for a report
/// of `recipes/fix-tests.recipe.md` also `fix-tests` or that path).
pub fn recipe_matches(recipe: &ReportRecipe, asked: &str) -> bool {
    if recipe.name.eq_ignore_ascii_case(asked.trim()) {
        return true;
    }
    let wanted = slug(file_stem(asked));
    !wanted.is_empty()
        && (slug(&recipe.name) == wanted
            || (!recipe.file.is_empty() && slug(file_stem(&recipe.file)) == wanted))
}

/// `dir/name.recipe.md` -> `name` (also `.md`); other text unchanged.
fn file_stem(text: &str) -> &str {
    let file = text.rsplit(['/', '\\']).next().unwrap_or(text);
    file.strip_suffix(".recipe.md")
        .or_else(|| file.strip_suffix(".md"))
        .unwrap_or(file)
}

/// Lower-case ASCII letters and digits, every other run of characters one `-`.
pub fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    while out.ends_with('-') {
        out.pop();
    }
    out
}

fn known_recipes(mut names: Vec<String>) -> String {
    names.sort();
    names.dedup();
    if names.is_empty() {
        "there are no headless reports in .versus/reports/ yet: run a recipe with `versus run \
         RECIPE` first"
            .to_string()
    } else {
        format!(
            "recipes with reports: {} (give one of these names)",
            names.join(", ")
        )
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::model::Usage;
    use crate::session::ModelRecord;

    fn pref(models: &[&str], chosen: &[&str]) -> Preference {
        Preference {
            time: "t".into(),
            session: "s".into(),
            turn: 1,
            prompt_hash: "h".into(),
            models: models
                .iter()
                .map(|m| ModelRecord {
                    model: m.to_string(),
                    status: crate::model::RunStop::Completed,
                    cost: None,
                    usage: Usage::default(),
                    latency_ms: 10,
                    files: 0,
                })
                .collect(),
            chosen: chosen.iter().map(|s| s.to_string()).collect(),
            ratings: Default::default(),
            blind: false,
            source: crate::session::Source::Tui,
        }
    }

    #[test]
    fn models_are_ranked_by_rating_and_unrated_ones_come_last() {
        let mut prefs = vec![pref(&["a/x", "b/y"], &["b/y"]); 4];
        prefs.push(pref(&["a/x", "b/y"], &["a/x"]));
        prefs.push(pref(&["c/z"], &["c/z"]));
        let stats = compute(&prefs, &[]);
        let order: Vec<&str> = stats.models.iter().map(|m| m.model.as_str()).collect();
        assert_eq!(order, ["b/y", "a/x", "c/z"]);
        assert!(stats.models[2].rating.is_none());
        assert_eq!(stats.models[2].choices, 1);
        assert_eq!(stats.models[0].win_rate, Some(0.8));
        assert_eq!(stats.sources.preferences, 6);
    }

    #[test]
    fn recipes_match_by_name_slug_or_file() {
        let recipe = ReportRecipe {
            name: "Fix failing tests".into(),
            file: "recipes/fix-tests.recipe.md".into(),
        };
        for asked in [
            "fix failing tests",
            "fix-failing-tests",
            "recipes/fix-failing-tests.recipe.md",
            "fix-tests",
            "other/fix-tests.recipe.md",
            "fix-tests.md",
        ] {
            assert!(recipe_matches(&recipe, asked), "{asked}");
        }
        for asked in ["fix", "---", "tests"] {
            assert!(!recipe_matches(&recipe, asked), "{asked}");
        }
        let no_file = ReportRecipe {
            name: "x".into(),
            file: String::new(),
        };
        assert!(!recipe_matches(&no_file, ""));
        assert_eq!(slug("  Demo: the bug (v2) "), "demo-the-bug-v2");
    }

    #[test]
    fn an_unknown_recipe_names_the_known_ones() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join(".versus/reports/demo-1");
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(
            folder.join("report.json"),
            r#"{"schema_version":1,"recipe":{"name":"demo"},"tasks":[]}"#,
        )
        .unwrap();
        let filter = Filter {
            recipe: Some("nope".into()),
        };
        let err = collect(dir.path(), &filter).unwrap_err().to_string();
        assert!(err.contains("`nope`") && err.contains("demo"), "{err}");
        let empty = tempfile::tempdir().unwrap();
        let err = collect(empty.path(), &filter).unwrap_err().to_string();
        assert!(err.contains("versus run"), "{err}");
    }
}
