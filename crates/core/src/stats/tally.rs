//! The scoring rules: how one interactive choice or one headless task becomes head-to-head
//! games, and the per-model counts (choices, wins, losses, ties, cost, latency, pass rates).
//!
//! Everything is counted per *model*: samples of one model (`openai/gpt-5`, `openai/gpt-5#2`)
//! add up under `openai/gpt-5`, and two samples of the same model never play each other (a
//! model beating itself says nothing about the model).
//!
//! Rules for an interactive choice (one line of preferences.jsonl):
//! - the chosen entries, plus any entry rated `tie` (`=` in the review: "as good as the model
//!   I keep"), form the top group; every entry of the top group beats every entry outside it,
//!   and entries inside it tie with each other. So a model rated tie that was not kept ties
//!   with the kept one and beats the models not kept: its win rate comes out like the kept
//!   model's, which is what the rating says. Rating the kept model tie changes nothing;
//! - entries outside the top group do not play each other: the user said nothing about their
//!   order;
//! - "none of them" (nothing chosen) gives no games at all: every model of the turn lost, but
//!   not to another model, so it is counted as a choice (and in `none_of_them`) and neither as
//!   a win nor as a loss. A tie rating there has no effect (there is no kept model to be as
//!   good as), and the review says so when the user rates.
//! - `good` / `bad` ratings (`+` / `-`) are absolute marks, not comparisons: they are counted
//!   per model ([`Counts::good`], [`Counts::bad`], one per rated run) and shown beside the
//!   games, but do not change the games or the Bradley-Terry rating.
//!
//! Rule for a headless task: every pair of entries plays once; the one that passed the larger
//! share of its criteria wins (with the same criteria for everyone, that is simply "passed
//! more criteria"); equal shares tie.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::sources::{LoadedReport, ReportRun, ReportTask};
use crate::session::{Preference, Rating};

/// The model an entry label belongs to: the label without its `#N` sample suffix.
pub fn model_of(label: &str) -> &str {
    match label.rsplit_once('#') {
        Some((model, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => model,
        _ => label,
    }
}

/// How a game ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The first model won.
    FirstWins,
    /// The second model won.
    SecondWins,
    /// Neither.
    Tie,
}

/// One head-to-head game between two different models.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Game {
    /// First model.
    pub first: String,
    /// Second model.
    pub second: String,
    /// Result.
    pub outcome: Outcome,
}

/// One model run that took part in a choice: what it cost and how long it took.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The model (sample suffix removed).
    pub model: String,
    /// USD, when the price is known.
    pub cost: Option<f64>,
    /// Wall time in milliseconds, when known.
    pub latency_ms: Option<u64>,
}

/// One comparison: an interactive choice or one task of a headless report.
#[derive(Debug, Clone, PartialEq)]
pub struct Choice {
    /// Every run of the comparison.
    pub entries: Vec<Entry>,
    /// The games it yields.
    pub games: Vec<Game>,
    /// The user rejected every model.
    pub none_of_them: bool,
    /// Models of the runs rated `good` (one per rated run): marks, not games.
    pub good: Vec<String>,
    /// Models of the runs rated `bad` (one per rated run): marks, not games.
    pub bad: Vec<String>,
}

impl Choice {
    /// The distinct models of the comparison.
    pub fn models(&self) -> BTreeSet<&str> {
        self.entries.iter().map(|e| e.model.as_str()).collect()
    }
}

/// The games of one interactive choice (rules in the module docs).
pub fn from_preference(p: &Preference) -> Choice {
    let entries = p
        .models
        .iter()
        .map(|m| Entry {
            model: model_of(&m.model).to_string(),
            cost: m.cost,
            latency_ms: Some(m.latency_ms),
        })
        .collect();
    let none_of_them = p.chosen.is_empty();
    let mut games = Vec::new();
    if !none_of_them {
        let mut labels: Vec<&str> = p.models.iter().map(|m| m.model.as_str()).collect();
        for chosen in &p.chosen {
            if !labels.contains(&chosen.as_str()) {
                labels.push(chosen);
            }
        }
        let top = |label: &str| {
            p.chosen.iter().any(|c| c == label)
                || p.ratings.get(label).is_some_and(|r| *r == Rating::Tie)
        };
        for (i, a) in labels.iter().enumerate() {
            for b in &labels[i + 1..] {
                let outcome = match (top(a), top(b)) {
                    (true, true) => Outcome::Tie,
                    (true, false) => Outcome::FirstWins,
                    (false, true) => Outcome::SecondWins,
                    (false, false) => continue,
                };
                push_game(&mut games, a, b, outcome);
            }
        }
    }
    let marked = |mark: Rating| -> Vec<String> {
        p.ratings
            .iter()
            .filter(|(_, r)| **r == mark)
            .map(|(label, _)| model_of(label).to_string())
            .collect()
    };
    Choice {
        entries,
        games,
        none_of_them,
        good: marked(Rating::Good),
        bad: marked(Rating::Bad),
    }
}

/// The games of one headless task (rule in the module docs). Runs that never finished (an
/// interrupted report) take no part.
pub fn from_task(task: &ReportTask) -> Choice {
    let runs: Vec<&ReportRun> = task.runs.iter().filter(|r| r.finished()).collect();
    let entries = runs
        .iter()
        .map(|r| Entry {
            model: model_of(&r.model).to_string(),
            cost: r.cost_usd,
            latency_ms: Some(r.latency_ms),
        })
        .collect();
    let mut games = Vec::new();
    for (i, a) in runs.iter().enumerate() {
        for b in &runs[i + 1..] {
            // a.passed / a.total against b.passed / b.total, without division.
            let left = a.criteria_passed * b.criteria_total;
            let right = b.criteria_passed * a.criteria_total;
            let outcome = match left.cmp(&right) {
                std::cmp::Ordering::Greater => Outcome::FirstWins,
                std::cmp::Ordering::Less => Outcome::SecondWins,
                std::cmp::Ordering::Equal => Outcome::Tie,
            };
            push_game(&mut games, &a.model, &b.model, outcome);
        }
    }
    Choice {
        entries,
        games,
        none_of_them: false,
        good: Vec::new(),
        bad: Vec::new(),
    }
}

fn push_game(games: &mut Vec<Game>, a: &str, b: &str, outcome: Outcome) {
    let (first, second) = (model_of(a), model_of(b));
    if first != second {
        games.push(Game {
            first: first.to_string(),
            second: second.to_string(),
            outcome,
        });
    }
}

/// Everything counted for one model.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Counts {
    /// Comparisons the model took part in (once per comparison, whatever its samples).
    pub choices: u32,
    /// Games won.
    pub wins: u32,
    /// Games lost.
    pub losses: u32,
    /// Games tied.
    pub ties: u32,
    /// Interactive choices where the user took none of the models.
    pub none_of_them: u32,
    /// Runs the user rated `good` (`+`): a mark, not a game.
    pub good: u32,
    /// Runs the user rated `bad` (`-`): a mark, not a game.
    pub bad: u32,
    /// Sum of known costs (USD).
    pub cost_sum: f64,
    /// Runs with a known cost.
    pub priced_runs: u32,
    /// Sum of known latencies (ms).
    pub latency_sum_ms: f64,
    /// Runs with a known latency.
    pub timed_runs: u32,
}

impl Counts {
    /// Games played.
    pub fn games(&self) -> u32 {
        self.wins + self.losses + self.ties
    }

    /// Share of games won, a tie counting half; `None` without games. 0.5 is average.
    pub fn win_rate(&self) -> Option<f64> {
        let games = self.games();
        (games > 0).then(|| (f64::from(self.wins) + 0.5 * f64::from(self.ties)) / f64::from(games))
    }

    /// Mean cost of the runs whose cost is known.
    pub fn mean_cost(&self) -> Option<f64> {
        (self.priced_runs > 0).then(|| self.cost_sum / f64::from(self.priced_runs))
    }

    /// Mean latency of the runs whose latency is known.
    pub fn mean_latency_ms(&self) -> Option<f64> {
        (self.timed_runs > 0).then(|| self.latency_sum_ms / f64::from(self.timed_runs))
    }
}

/// Counts per model over `choices`, in model-name order.
pub fn count(choices: &[Choice]) -> BTreeMap<String, Counts> {
    let mut out: BTreeMap<String, Counts> = BTreeMap::new();
    for choice in choices {
        for model in choice.models() {
            let c = out.entry(model.to_string()).or_default();
            c.choices += 1;
            if choice.none_of_them {
                c.none_of_them += 1;
            }
        }
        for e in &choice.entries {
            let c = out.entry(e.model.clone()).or_default();
            if let Some(cost) = e.cost {
                c.cost_sum += cost;
                c.priced_runs += 1;
            }
            if let Some(ms) = e.latency_ms {
                c.latency_sum_ms += ms as f64;
                c.timed_runs += 1;
            }
        }
        for model in &choice.good {
            out.entry(model.clone()).or_default().good += 1;
        }
        for model in &choice.bad {
            out.entry(model.clone()).or_default().bad += 1;
        }
        for g in &choice.games {
            let (first, second) = match g.outcome {
                Outcome::FirstWins => (Result::Win, Result::Loss),
                Outcome::SecondWins => (Result::Loss, Result::Win),
                Outcome::Tie => (Result::Tie, Result::Tie),
            };
            record(out.entry(g.first.clone()).or_default(), first);
            record(out.entry(g.second.clone()).or_default(), second);
        }
    }
    out
}

enum Result {
    Win,
    Loss,
    Tie,
}

fn record(c: &mut Counts, r: Result) {
    match r {
        Result::Win => c.wins += 1,
        Result::Loss => c.losses += 1,
        Result::Tie => c.ties += 1,
    }
}

/// Pass rates of the models of one recipe, over all its reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecipePassRates {
    /// Recipe name.
    pub recipe: String,
    /// Reports counted.
    pub reports: usize,
    /// One row per model, best pass rate first.
    pub models: Vec<ModelPassRate>,
}

/// One model's results on one recipe.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelPassRate {
    /// Model (samples added up).
    pub model: String,
    /// Finished task runs (tasks x samples x reports).
    pub tasks: u32,
    /// Task runs where every criterion passed.
    pub tasks_passed: u32,
    /// Criteria passed over all task runs.
    pub criteria_passed: u32,
    /// Criteria checked over all task runs.
    pub criteria_total: u32,
    /// `criteria_passed / criteria_total`; `None` when nothing was checked.
    pub pass_rate: Option<f64>,
}

/// Pass rates per recipe (recipes in name order) over `reports`.
pub fn pass_rates(reports: &[LoadedReport]) -> Vec<RecipePassRates> {
    let mut by_recipe: BTreeMap<&str, (usize, BTreeMap<String, ModelPassRate>)> = BTreeMap::new();
    for report in reports {
        let (count, models) = by_recipe.entry(&report.doc.recipe.name).or_default();
        *count += 1;
        for task in &report.doc.tasks {
            for m in task.runs.iter().filter(|r| r.finished()) {
                let model = model_of(&m.model);
                let row = models
                    .entry(model.to_string())
                    .or_insert_with(|| ModelPassRate {
                        model: model.to_string(),
                        tasks: 0,
                        tasks_passed: 0,
                        criteria_passed: 0,
                        criteria_total: 0,
                        pass_rate: None,
                    });
                let passed = u32::try_from(m.criteria_passed).unwrap_or(u32::MAX);
                let total = u32::try_from(m.criteria_total).unwrap_or(u32::MAX);
                row.tasks += 1;
                if total > 0 && passed == total {
                    row.tasks_passed += 1;
                }
                row.criteria_passed += passed;
                row.criteria_total += total;
            }
        }
    }
    by_recipe
        .into_iter()
        .map(|(recipe, (reports, models))| {
            let mut models: Vec<ModelPassRate> = models
                .into_values()
                .map(|mut row| {
                    row.pass_rate = (row.criteria_total > 0)
                        .then(|| f64::from(row.criteria_passed) / f64::from(row.criteria_total));
                    row
                })
                .collect();
            models.sort_by(|a, b| {
                b.pass_rate
                    .unwrap_or(-1.0)
                    .total_cmp(&a.pass_rate.unwrap_or(-1.0))
                    .then_with(|| a.model.cmp(&b.model))
            });
            RecipePassRates {
                recipe: recipe.to_string(),
                reports,
                models,
            }
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::model::Usage;
    use crate::session::ModelRecord;
    use crate::stats::sources::{ReportDoc, ReportRecipe, ReportStatus};

    fn pref(models: &[&str], chosen: &[&str], ratings: &[(&str, &str)]) -> Preference {
        Preference {
            time: "2026-01-01T00:00:00Z".into(),
            session: "s".into(),
            turn: 1,
            prompt_hash: "h".into(),
            models: models
                .iter()
                .enumerate()
                .map(|(i, m)| ModelRecord {
                    model: m.to_string(),
                    status: crate::model::RunStop::Completed,
                    cost: (i != 0).then_some(0.25),
                    usage: Usage::default(),
                    latency_ms: 1000 * (i as u64 + 1),
                    files: 1,
                })
                .collect(),
            chosen: chosen.iter().map(|s| s.to_string()).collect(),
            ratings: ratings
                .iter()
                .map(|(a, b)| {
                    let rating = serde_json::from_value(serde_json::json!(b)).unwrap();
                    (a.to_string(), rating)
                })
                .collect(),
            blind: false,
            source: crate::session::Source::Ask,
        }
    }

    fn result(model: &str, passed: &[bool]) -> ReportRun {
        let criteria_passed = passed.iter().filter(|p| **p).count();
        ReportRun {
            model: model.into(),
            status: if criteria_passed == passed.len() {
                ReportStatus::Passed
            } else {
                ReportStatus::Failed
            },
            cost_usd: Some(0.1),
            latency_ms: 500,
            criteria_passed,
            criteria_total: passed.len(),
        }
    }

    #[test]
    fn sample_suffixes_are_removed() {
        assert_eq!(model_of("openai/gpt-5#2"), "openai/gpt-5");
        assert_eq!(model_of("openai/gpt-5"), "openai/gpt-5");
        assert_eq!(model_of("x/y#"), "x/y#");
        assert_eq!(model_of("x/y#a"), "x/y#a");
    }

    #[test]
    fn the_chosen_model_beats_each_other_model_and_the_others_do_not_play() {
        let c = count(&[from_preference(&pref(
            &["a/x", "b/y", "c/z"],
            &["b/y"],
            &[],
        ))]);
        let b = &c["b/y"];
        assert_eq!((b.choices, b.wins, b.losses, b.ties), (1, 2, 0, 0));
        for m in ["a/x", "c/z"] {
            assert_eq!(
                (c[m].choices, c[m].wins, c[m].losses, c[m].ties),
                (1, 0, 1, 0)
            );
        }
        assert_eq!(b.win_rate(), Some(1.0));
        assert_eq!(c["a/x"].win_rate(), Some(0.0));
    }

    #[test]
    fn none_of_them_is_a_choice_without_wins_or_losses() {
        let c = count(&[from_preference(&pref(&["a/x", "b/y"], &[], &[]))]);
        for m in ["a/x", "b/y"] {
            assert_eq!((c[m].choices, c[m].games(), c[m].none_of_them), (1, 0, 1));
            assert_eq!(c[m].win_rate(), None);
        }
    }

    #[test]
    fn several_chosen_models_tie_with_each_other_and_a_tie_rating_joins_them() {
        let p = pref(
            &["a/x", "b/y", "c/z", "d/w"],
            &["a/x", "b/y"],
            &[("c/z", "tie"), ("d/w", "bad")],
        );
        let c = count(&[from_preference(&p)]);
        assert_eq!((c["a/x"].wins, c["a/x"].losses, c["a/x"].ties), (1, 0, 2));
        assert_eq!((c["c/z"].wins, c["c/z"].losses, c["c/z"].ties), (1, 0, 2));
        assert_eq!((c["d/w"].wins, c["d/w"].losses, c["d/w"].ties), (0, 3, 0));
        assert_eq!(c["a/x"].win_rate(), Some(2.0 / 3.0));
    }

    #[test]
    fn a_tie_rated_model_not_kept_ties_with_the_kept_one_and_beats_the_rest() {
        let p = pref(&["a/x", "b/y", "c/z"], &["a/x"], &[("b/y", "tie")]);
        let c = count(&[from_preference(&p)]);
        // b/y is "as good as the model kept": a tie with a/x, a win over c/z.
        assert_eq!((c["b/y"].wins, c["b/y"].losses, c["b/y"].ties), (1, 0, 1));
        assert_eq!((c["a/x"].wins, c["a/x"].losses, c["a/x"].ties), (1, 0, 1));
        assert_eq!((c["c/z"].wins, c["c/z"].losses, c["c/z"].ties), (0, 2, 0));
        assert_eq!(c["b/y"].win_rate(), c["a/x"].win_rate());
        // Rating the kept model tie changes nothing.
        let kept = pref(&["a/x", "b/y"], &["a/x"], &[("a/x", "tie")]);
        let plain = pref(&["a/x", "b/y"], &["a/x"], &[]);
        assert_eq!(from_preference(&kept).games, from_preference(&plain).games);
    }

    #[test]
    fn a_tie_rating_with_none_of_them_has_no_effect() {
        let p = pref(&["a/x", "b/y"], &[], &[("b/y", "tie")]);
        let choice = from_preference(&p);
        assert!(choice.games.is_empty());
        let c = count(&[choice]);
        for m in ["a/x", "b/y"] {
            assert_eq!((c[m].games(), c[m].none_of_them), (0, 1));
        }
    }

    #[test]
    fn good_and_bad_are_counted_as_marks_not_games() {
        let rated = pref(
            &["a/x", "a/x#2", "b/y", "c/z"],
            &["b/y"],
            &[("a/x", "good"), ("a/x#2", "good"), ("c/z", "bad")],
        );
        let plain = pref(&["a/x", "a/x#2", "b/y", "c/z"], &["b/y"], &[]);
        assert_eq!(
            from_preference(&rated).games,
            from_preference(&plain).games,
            "marks change no game"
        );
        let c = count(&[from_preference(&rated)]);
        assert_eq!((c["a/x"].good, c["a/x"].bad), (2, 0), "one per rated run");
        assert_eq!((c["c/z"].good, c["c/z"].bad), (0, 1));
        assert_eq!((c["b/y"].good, c["b/y"].bad), (0, 0));
        // Marks count with "none of them" too: they are not comparisons.
        let none = pref(&["a/x", "b/y"], &[], &[("a/x", "bad")]);
        assert_eq!(count(&[from_preference(&none)])["a/x"].bad, 1);
    }

    #[test]
    fn samples_add_up_under_their_model_and_never_play_each_other() {
        let p = pref(&["a/x", "a/x#2", "b/y"], &["a/x#2"], &[]);
        let choice = from_preference(&p);
        assert_eq!(choice.games.len(), 1, "{:?}", choice.games);
        let c = count(&[choice]);
        assert_eq!(
            (c["a/x"].choices, c["a/x"].wins, c["a/x"].losses),
            (1, 1, 0)
        );
        assert_eq!(c["b/y"].losses, 1);
        // a/x#1 has no price (first record), a/x#2 has 0.25; latencies 1 s and 2 s.
        assert_eq!(c["a/x"].mean_cost(), Some(0.25));
        assert_eq!(c["a/x"].mean_latency_ms(), Some(1500.0));
        assert_eq!(c["a/x"].priced_runs, 1);
    }

    #[test]
    fn the_model_that_passed_more_criteria_wins_the_task() {
        let task = ReportTask {
            name: "t".into(),
            runs: vec![
                result("a/x", &[true, true, false]),
                result("b/y", &[true, false, false]),
                result("c/z", &[false, true, false]),
                ReportRun {
                    status: ReportStatus::NotRun,
                    ..result("d/w", &[true, true, true])
                },
            ],
        };
        let choice = from_task(&task);
        let c = count(&[choice]);
        assert_eq!((c["a/x"].wins, c["a/x"].losses, c["a/x"].ties), (2, 0, 0));
        assert_eq!((c["b/y"].wins, c["b/y"].losses, c["b/y"].ties), (0, 1, 1));
        assert_eq!((c["c/z"].wins, c["c/z"].losses, c["c/z"].ties), (0, 1, 1));
        assert!(
            !c.contains_key("d/w"),
            "a run that never finished takes no part"
        );
        assert_eq!(c["a/x"].mean_cost(), Some(0.1));
        assert_eq!(c["a/x"].mean_latency_ms(), Some(500.0));
    }

    #[test]
    fn pass_rates_per_recipe_add_up_reports_and_samples() {
        let report = |name: &str, runs: Vec<ReportRun>| LoadedReport {
            path: "r".into(),
            doc: ReportDoc {
                schema_version: 1,
                recipe: ReportRecipe {
                    name: name.into(),
                    file: String::new(),
                },
                tasks: vec![ReportTask {
                    name: "t".into(),
                    runs,
                }],
            },
        };
        let reports = vec![
            report(
                "fix",
                vec![result("a/x", &[true, true]), result("b/y", &[true, false])],
            ),
            report(
                "fix",
                vec![
                    result("a/x", &[true, false]),
                    result("a/x#2", &[true, true]),
                ],
            ),
            report("other", vec![result("b/y", &[])]),
        ];
        let rates = pass_rates(&reports);
        assert_eq!(rates.len(), 2);
        assert_eq!((rates[0].recipe.as_str(), rates[0].reports), ("fix", 2));
        let a = &rates[0].models[0];
        assert_eq!(a.model, "a/x");
        assert_eq!(
            (a.tasks, a.tasks_passed, a.criteria_passed, a.criteria_total),
            (3, 2, 5, 6)
        );
        assert_eq!(rates[0].models[1].pass_rate, Some(0.5));
        assert_eq!(rates[1].models[0].pass_rate, None);
        assert_eq!(rates[1].models[0].tasks_passed, 0);
    }
}
