//! `/stats`: the numbers `versus stats` prints, for this session (its choices only) and for the
//! whole project (every choice and headless report), as text for an overlay.

use std::path::Path;

use versus_core::stats::{self, Filter, ModelStats, Stats};

use super::super::action::EngineMsg;

/// Reads `.versus/` and formats both tables (blocking: call it off the loop's thread).
pub fn show(project: &Path, session: &str) -> EngineMsg {
    let versus = project.join(".versus");
    let prefs = match stats::sources::preferences(&versus) {
        Ok(p) => p,
        Err(e) => return EngineMsg::Error(e.to_string()),
    };
    let mine: Vec<_> = prefs.into_iter().filter(|p| p.session == session).collect();
    let session_stats = stats::compute(&mine, &[]);
    let overall = match stats::collect(project, &Filter::default()) {
        Ok(s) => s,
        Err(e) => return EngineMsg::Error(e.to_string()),
    };
    EngineMsg::Show {
        title: "stats".to_string(),
        lines: lines(&session_stats, &overall),
    }
}

/// The overlay's lines: this session, then the project.
pub fn lines(session: &Stats, overall: &Stats) -> Vec<String> {
    let mut out = vec![format!(
        "This session: {} choice(s)",
        session.sources.preferences
    )];
    out.extend(table(&session.models));
    out.push(String::new());
    out.push(format!(
        "This project: {} interactive choice(s), {} headless task(s) in {} report(s) \
         (`compared`: those a model took part in)",
        overall.sources.preferences, overall.sources.report_tasks, overall.sources.reports
    ));
    out.extend(table(&overall.models));
    out.push(String::new());
    out.push(
        "A chosen model beats the others of its turn; ratings are Bradley-Terry on the Elo \
         scale with 95% intervals (versus stats --json has every number)."
            .to_string(),
    );
    out.push(format!(
        "Your review ratings: {}.",
        versus_core::stats::RATINGS_MEANING
    ));
    out
}

fn table(models: &[ModelStats]) -> Vec<String> {
    if models.is_empty() {
        return vec![
            "  no choice yet: pick a model's changes in the review (a) or x for none".into(),
        ];
    }
    let width = models
        .iter()
        .map(|m| m.model.chars().count())
        .max()
        .unwrap_or(5)
        .max(5);
    let mut out = vec![format!(
        "  {:<width$} {:>8} {:>5} {:>6} {:>5} {:>7} {:>8} {:>15} {:>10} {:>9}",
        "model",
        "compared",
        "wins",
        "losses",
        "ties",
        "marks",
        "win rate",
        "rating (95%)",
        "mean cost",
        "latency"
    )];
    for m in models {
        let rating = m.rating.map_or_else(
            || "-".to_string(),
            |r| format!("{:.0} ({:.0}-{:.0})", r.value, r.low, r.high),
        );
        out.push(format!(
            "  {:<width$} {:>8} {:>5} {:>6} {:>5} {:>7} {:>8} {:>15} {:>10} {:>9}",
            m.model,
            m.choices,
            m.wins,
            m.losses,
            m.ties,
            if m.good + m.bad == 0 {
                "-".to_string()
            } else {
                format!("+{} -{}", m.good, m.bad)
            },
            m.win_rate
                .map_or_else(|| "-".to_string(), |w| format!("{:.0}%", w * 100.0)),
            rating,
            m.mean_cost_usd
                .map_or_else(|| "unknown".to_string(), |c| format!("${c:.4}")),
            m.mean_latency_ms
                .map_or_else(|| "-".to_string(), |ms| format!("{:.1} s", ms / 1000.0)),
        ));
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use versus_core::model::Usage;
    use versus_core::session::{ModelRecord, Preference, append_preference};

    fn pref(session: &str, chosen: &str) -> Preference {
        Preference {
            time: "t".into(),
            session: session.into(),
            turn: 1,
            prompt_hash: "h".into(),
            models: ["demo/a", "demo/b"]
                .iter()
                .map(|m| ModelRecord {
                    model: m.to_string(),
                    status: versus_core::model::RunStop::Completed,
                    cost: Some(0.01),
                    usage: Usage::default(),
                    latency_ms: 1500,
                    files: 1,
                })
                .collect(),
            chosen: vec![chosen.into()],
            ratings: Default::default(),
            blind: false,
            source: versus_core::session::Source::Tui,
        }
    }

    #[test]
    fn the_session_counts_only_its_own_choices() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(".versus/preferences.jsonl");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        append_preference(&file, &pref("s1", "demo/a")).unwrap();
        append_preference(&file, &pref("s2", "demo/b")).unwrap();
        append_preference(&file, &pref("s2", "demo/b")).unwrap();
        let EngineMsg::Show { lines, .. } = show(dir.path(), "s1") else {
            panic!("expected the overlay");
        };
        assert_eq!(lines[0], "This session: 1 choice(s)");
        let project = lines
            .iter()
            .position(|l| l.starts_with("This project"))
            .unwrap();
        assert!(
            lines[project].contains("3 interactive choice(s)"),
            "{lines:?}"
        );
        let session_a = lines[..project]
            .iter()
            .find(|l| l.trim_start().starts_with("demo/a"))
            .unwrap();
        assert!(session_a.contains("100%"), "{session_a}");
        assert!(lines.iter().any(|l| l.contains("$0.0100")));
    }
}
