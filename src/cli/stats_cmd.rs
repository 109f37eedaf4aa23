//! `versus stats [--recipe NAME] [--json]`: per model wins, losses, ties, win rate, rating with
//! its 95% interval, mean cost and latency, from the project's interactive choices and
//! headless reports; then the pass rates per recipe.
//!
//! The numbers come from `versus::stats`; this file only formats them: an aligned table for
//! people, or the library's `Stats` as one JSON document for scripts. Reports that could not
//! be read are named on stderr in both modes, so `--json` output stays one valid document.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use versus::stats::{self, Filter, ModelStats, RecipePassRates, Stats};

/// Arguments of `versus stats`.
#[derive(Debug, Args)]
pub struct StatsArgs {
    /// Count only the headless reports of this recipe: its `# Title`, that title as in report
    /// folder names (`fix-failing-tests`), or its file name. Interactive choices are then left
    /// out.
    #[arg(long, value_name = "NAME")]
    pub recipe: Option<String>,

    /// Print one JSON document instead of the tables.
    #[arg(long)]
    pub json: bool,
}

/// Runs the command.
pub fn run(args: StatsArgs, project: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let project = super::project_dir(project)?;
    let filter = Filter {
        recipe: args.recipe.clone(),
    };
    // A `.versus` this user's versus did not write (a clone's, a link) is never counted.
    versus::session::Store::existing(&project)?;
    let stats = stats::collect(&project, &filter)?;
    for why in &stats.sources.skipped {
        eprintln!("versus: {why}");
    }
    let text = if args.json {
        let mut text = serde_json::to_string_pretty(&stats).context("write the JSON document")?;
        text.push('\n');
        text
    } else {
        human(&stats)
    };
    // A closed stdout (`| head`) is not worth an error.
    let _ = std::io::stdout().write_all(text.as_bytes());
    Ok(ExitCode::SUCCESS)
}

/// Both tables and a line on where the numbers come from.
fn human(stats: &Stats) -> String {
    if stats.models.is_empty() {
        if stats.sources.rewound > 0 {
            return format!(
                "No standing choices: the {} choice{} made here were rewound afterwards.\n",
                stats.sources.rewound,
                plural(stats.sources.rewound)
            );
        }
        return "No choices or reports yet in .versus/: pick a model's change with `versus ask \
                PROMPT -m SPEC... --pick SPEC` (or in the TUI), or run a recipe with `versus run \
                RECIPE`.\n"
            .to_string();
    }
    let mut out = models_table(&stats.models);
    let s = &stats.sources;
    out.push_str(&format!(
        "\nFrom {} interactive choice{} and {} headless task{} in {} report{}; `compared` \
         counts those a model took part in.\n\
         Games: a chosen model beats the others of its turn; in a report, passing more criteria \
         of a task wins.\n\
         Ratings: Bradley-Terry on the Elo scale (400 points = 10:1 odds), with 95% intervals.\n\
         Your review ratings: {}.\n",
        s.preferences,
        plural(s.preferences),
        s.report_tasks,
        plural(s.report_tasks),
        s.reports,
        plural(s.reports),
        stats::RATINGS_MEANING,
    ));
    if s.rewound > 0 {
        out.push_str(&format!(
            "Left out: {} choice{} rewound afterwards.\n",
            s.rewound,
            plural(s.rewound)
        ));
    }
    for recipe in &stats.recipes {
        out.push('\n');
        out.push_str(&recipe_table(recipe));
    }
    out
}

/// The `+` / `-` marks of a model ("+2 -1"), `-` when it has none.
fn marks(good: u32, bad: u32) -> String {
    if good == 0 && bad == 0 {
        "-".to_string()
    } else {
        format!("+{good} -{bad}")
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn models_table(models: &[ModelStats]) -> String {
    let header = [
        "model",
        "compared",
        "wins",
        "losses",
        "ties",
        "marks",
        "win rate",
        "rating",
        "95% interval",
        "mean cost",
        "mean latency",
    ];
    let rows = models
        .iter()
        .map(|m| {
            vec![
                m.model.clone(),
                m.choices.to_string(),
                m.wins.to_string(),
                m.losses.to_string(),
                m.ties.to_string(),
                marks(m.good, m.bad),
                percent(m.win_rate),
                m.rating
                    .map_or_else(|| "-".to_string(), |r| format!("{:.0}", r.value)),
                m.rating.map_or_else(
                    || "-".to_string(),
                    |r| format!("{:.0} to {:.0}", r.low, r.high),
                ),
                m.mean_cost_usd
                    .map_or_else(|| "unknown".to_string(), |c| format!("${c:.4}")),
                m.mean_latency_ms
                    .map_or_else(|| "-".to_string(), |ms| format!("{:.1} s", ms / 1000.0)),
            ]
        })
        .collect();
    table(&header, rows)
}

fn recipe_table(recipe: &RecipePassRates) -> String {
    let mut out = format!(
        "Recipe `{}` ({} report{}):\n",
        recipe.recipe,
        recipe.reports,
        plural(recipe.reports)
    );
    let header = ["model", "tasks passed", "criteria passed", "pass rate"];
    let rows = recipe
        .models
        .iter()
        .map(|m| {
            vec![
                m.model.clone(),
                format!("{}/{}", m.tasks_passed, m.tasks),
                format!("{}/{}", m.criteria_passed, m.criteria_total),
                percent(m.pass_rate),
            ]
        })
        .collect();
    out.push_str(&table(&header, rows));
    out
}

fn percent(share: Option<f64>) -> String {
    share.map_or_else(|| "-".to_string(), |s| format!("{:.0}%", s * 100.0))
}

/// An aligned table: the first column left-aligned, the others right-aligned, a rule under
/// the header.
fn table(header: &[&str], rows: Vec<Vec<String>>) -> String {
    let mut cells: Vec<Vec<String>> = vec![header.iter().map(|h| h.to_string()).collect()];
    cells.extend(rows);
    let columns = header.len();
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            cells
                .iter()
                .map(|r| r.get(c).map_or(0, |s| s.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for (i, row) in cells.iter().enumerate() {
        let mut line = String::new();
        for (c, width) in widths.iter().enumerate() {
            let cell = row.get(c).map_or("", String::as_str);
            let pad = " ".repeat(width - cell.chars().count());
            if c == 0 {
                line.push_str(cell);
                line.push_str(&pad);
            } else {
                line.push_str("  ");
                line.push_str(&pad);
                line.push_str(cell);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
        if i == 0 {
            out.push_str(&"-".repeat(widths.iter().sum::<usize>() + 2 * (columns - 1)));
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_aligns_numbers_right() {
        let text = table(
            &["model", "n"],
            vec![
                vec!["a/long-name".into(), "1".into()],
                vec!["b".into(), "100".into()],
            ],
        );
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "model          n");
        assert_eq!(lines[1], "----------------");
        assert_eq!(lines[2], "a/long-name    1");
        assert_eq!(lines[3], "b            100");
    }

    #[test]
    fn shares_are_percentages() {
        assert_eq!(percent(Some(0.666)), "67%");
        assert_eq!(percent(None), "-");
    }
}
