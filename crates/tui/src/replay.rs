//! Reopening a session (`versus --continue`, `--resume ID`): the panels are rebuilt from the
//! session log's records exactly as they were built live — the same `AgentEvent`s through the
//! same `Panel::apply` — so a reopened session looks like the one that was left.
//!
//! A turn whose models never all finished (versus was killed) shows what had streamed, marked
//! as interrupted; its prompt is offered back so the user can send it again.

use std::collections::HashMap;

use versus_core::engine::{RestoredTurn, names_from_log};
use versus_core::model::RunStop;
use versus_core::session::{SessionLog, SessionRecord};

use super::action::CheckState;
use super::panel::{PanelStatus, RunSummary};
use super::review::ReviewState;
use super::state::App;

/// What a replay found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Replayed {
    /// Turns in the log.
    pub turns: u32,
    /// The prompt of the last turn if some of its models never finished.
    pub interrupted: Option<String>,
}

/// Brings a reopened session's last turn back for review: the models that finished can be
/// reviewed and chosen as if the session had never stopped (their change sets arrive as
/// `ChangeSet` messages); the prompt goes back to the box addressed to the models that never
/// finished, so Enter runs only them again.
pub fn restore_review(app: &mut App, restored: &RestoredTurn, session: &str) {
    let targets: Vec<(usize, String)> = restored
        .finished
        .iter()
        .filter_map(|f| app.panel_of(&f.label).map(|panel| (panel, f.label.clone())))
        .collect();
    let order = app
        .panel_order()
        .iter()
        .filter_map(|panel| targets.iter().position(|(p, _)| p == panel))
        .collect();
    app.turn = restored.turn;
    let mut review = ReviewState::new(restored.turn, &restored.prompt, &targets, order);
    // The checks ran in workspaces that are gone: their recorded results come back, and a
    // check that had not ended (with one configured now) is said to be missed, not waited for.
    let checking = app.settings.check.is_some();
    for model in &mut review.models {
        model.check = match restored.checks.get(&model.label) {
            Some(result) => Some(CheckState::Done(result.clone())),
            None if checking => Some(CheckState::Missed),
            None => None,
        };
    }
    app.review = Some(review);
    let finished: Vec<String> = targets.iter().map(|(_, l)| app.shown_label(l)).collect();
    let unfinished: Vec<String> = restored
        .unfinished
        .iter()
        .map(|l| app.shown_label(l))
        .collect();
    if restored.unfinished.is_empty() {
        app.info(format!(
            "session {session} reopened: turn {} was not chosen yet; {} can be reviewed (Ctrl+O)",
            restored.turn,
            finished.join(", ")
        ));
        return;
    }
    if app.hiding() {
        // `@model` targets would name the models behind the aliases: the prompt comes back
        // alone, and /resume continues just the interrupted ones.
        app.prompt.set(&restored.prompt);
        app.info(format!(
            "session {session} reopened: turn {} was interrupted; {} finished and can be reviewed (Ctrl+O); {} did not (names are hidden: /resume continues just {}, Enter sends the prompt to every model)",
            restored.turn,
            if finished.is_empty() { "no model".to_string() } else { finished.join(", ") },
            unfinished.join(", "),
            if unfinished.len() == 1 { "it" } else { "them" },
        ));
        return;
    }
    let mut typed: String = restored
        .unfinished
        .iter()
        .map(|l| format!("@{l} "))
        .collect();
    typed.push_str(&restored.prompt);
    app.prompt.set(&typed);
    app.info(format!(
        "session {session} reopened: turn {} was interrupted; {} finished and can be reviewed (Ctrl+O); {} did not: the prompt is back in the box for {} only (Enter runs {} again)",
        restored.turn,
        if finished.is_empty() { "no model".to_string() } else { finished.join(", ") },
        unfinished.join(", "),
        if restored.unfinished.len() == 1 { "it" } else { "them" },
        if restored.unfinished.len() == 1 { "it" } else { "them" },
    ));
}

/// Rebuilds the panels of `app` (one per roster model) from `log`; models of the log that are
/// not in the roster are not shown.
pub fn replay(app: &mut App, log: &SessionLog) -> Replayed {
    let mut entries: HashMap<u32, Vec<Option<usize>>> = HashMap::new();
    let mut prompts: HashMap<u32, String> = HashMap::new();
    let mut done: HashMap<u32, Vec<bool>> = HashMap::new();
    // What each model changed, from its proposals (recorded just before it finished), so the
    // summary names the files written and deleted as the live panel did.
    let mut changed: HashMap<(u32, usize), (Vec<String>, Vec<String>)> = HashMap::new();
    for record in &log.records {
        match record {
            SessionRecord::Turn {
                turn,
                prompt,
                models,
                ..
            } => {
                let map: Vec<Option<usize>> = models.iter().map(|m| app.panel_of(m)).collect();
                for (index, panel) in app.panels.iter_mut().enumerate() {
                    if map.contains(&Some(index)) {
                        panel.begin_turn(*turn, prompt, 0);
                    } else {
                        panel.note(&format!("── turn {turn}: not addressed ──"));
                    }
                }
                done.insert(*turn, vec![false; models.len()]);
                app.sent.insert(*turn, app.addressed(prompt, models));
                entries.insert(*turn, map);
                prompts.insert(*turn, prompt.clone());
            }
            SessionRecord::Agent {
                turn, entry, event, ..
            } => {
                if let Some(panel) = panel_for(app, &entries, *turn, *entry) {
                    panel.apply(event, 0);
                }
            }
            SessionRecord::Proposals {
                turn,
                entry,
                writes,
                ..
            } => {
                let mut files: Vec<String> = writes.iter().map(|w| w.path.clone()).collect();
                files.sort();
                files.dedup();
                let deleted = versus_core::workspace::FileWrite::deleted_paths(writes);
                changed.insert((*turn, *entry), (files, deleted));
            }
            SessionRecord::Finished {
                turn,
                entry,
                stop,
                stats,
                writes,
                error,
                ..
            } => {
                if let Some(flags) = done.get_mut(turn).and_then(|d| d.get_mut(*entry)) {
                    *flags = true;
                }
                let (files, deleted) = changed.remove(&(*turn, *entry)).unwrap_or_default();
                if let Some(panel) = panel_for(app, &entries, *turn, *entry) {
                    panel.finish(&RunSummary {
                        stop: stop.unwrap_or(RunStop::Error),
                        elapsed_ms: stats.as_ref().map(|s| s.elapsed_ms).unwrap_or(0),
                        writes: *writes,
                        files,
                        deleted,
                        error: error.clone(),
                    });
                }
            }
            SessionRecord::Check { model, result, .. } => {
                if let Some(panel) = app.panel_of(model).and_then(|i| app.panels.get_mut(i)) {
                    super::update::check_notes(panel, result);
                }
            }
            _ => {}
        }
    }
    // Blind mode's names as the session engine reads them from the same log: the session's
    // aliases, hidden until the user revealed them or the session ended.
    app.names = names_from_log(log);
    app.blind = app.hiding();
    for panel in &mut app.panels {
        if panel.status.is_active() {
            panel.note("(interrupted: versus stopped before this model finished)");
            panel.status = PanelStatus::Done(RunStop::Cancelled);
            panel.elapsed_ms = Some(0);
        }
    }
    let turns = log.last_turn();
    app.turn = turns;
    let interrupted = done
        .get(&turns)
        .filter(|flags| flags.iter().any(|f| !f))
        .and_then(|_| prompts.get(&turns).cloned());
    Replayed { turns, interrupted }
}

fn panel_for<'a>(
    app: &'a mut App,
    entries: &HashMap<u32, Vec<Option<usize>>>,
    turn: u32,
    entry: usize,
) -> Option<&'a mut super::panel::Panel> {
    let index = entries.get(&turn)?.get(entry).copied().flatten()?;
    app.panels.get_mut(index)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::action::Settings;
    use crate::state::SessionInfo;
    use crate::theme::Theme;
    use versus_core::model::AgentEvent;

    fn turn(n: u32, prompt: &str) -> SessionRecord {
        SessionRecord::Turn {
            turn: n,
            time: String::new(),
            prompt: prompt.into(),
            models: vec!["demo/a".into(), "demo/b".into()],
            blind: false,
            tasks: Vec::new(),
        }
    }

    fn text(n: u32, entry: usize, text: &str) -> SessionRecord {
        SessionRecord::Agent {
            turn: n,
            entry,
            model: String::new(),
            event: AgentEvent::TextDelta { text: text.into() },
            output: None,
        }
    }

    fn finished(n: u32, entry: usize) -> SessionRecord {
        SessionRecord::Finished {
            turn: n,
            entry,
            model: String::new(),
            stop: Some(RunStop::Completed),
            stats: None,
            writes: 0,
            error: None,
            final_text: String::new(),
        }
    }

    #[test]
    fn finished_turns_come_back_and_a_killed_turn_is_marked_interrupted() {
        let log = SessionLog {
            records: vec![
                turn(1, "first"),
                text(1, 0, "answer A"),
                text(1, 1, "answer B"),
                finished(1, 0),
                finished(1, 1),
                turn(2, "second"),
                text(2, 1, "half of B"),
                finished(2, 0),
            ],
            skipped: Vec::new(),
        };
        let mut app = App::new(
            SessionInfo::default(),
            vec!["demo/a".into(), "demo/b".into()],
            Settings::default(),
            Theme::PLAIN,
        );
        let replayed = replay(&mut app, &log);
        assert_eq!(replayed.turns, 2);
        assert_eq!(replayed.interrupted.as_deref(), Some("second"));
        assert_eq!(app.turn, 2);
        assert!(!app.running());
        let b: Vec<&str> = app.panels[1]
            .transcript
            .lines()
            .iter()
            .map(|l| l.text())
            .collect();
        assert!(b.contains(&"answer B"));
        assert!(b.contains(&"half of B"));
        assert_eq!(
            b.last().copied(),
            Some("(interrupted: versus stopped before this model finished)")
        );
        assert_eq!(app.panels[1].status, PanelStatus::Done(RunStop::Cancelled));
    }

    /// Issue 22 item 4: a reopened session's recorded checks come back in the transcript (as
    /// live) and in the restored review's check column.
    #[test]
    fn recorded_checks_come_back_in_the_transcript_and_the_review() {
        let result = versus_core::engine::CheckResult {
            command: "cargo test".into(),
            passed: false,
            ending: "failed (exit 101)".into(),
            elapsed_ms: 900,
            tail: vec!["error: could not compile".into()],
        };
        let log = SessionLog {
            records: vec![
                turn(1, "fix"),
                finished(1, 0),
                finished(1, 1),
                SessionRecord::Check {
                    turn: 1,
                    model: "demo/b".into(),
                    result: result.clone(),
                },
            ],
            skipped: Vec::new(),
        };
        let mut app = App::new(
            SessionInfo::default(),
            vec!["demo/a".into(), "demo/b".into()],
            Settings::default(),
            Theme::PLAIN,
        );
        replay(&mut app, &log);
        let b: Vec<&str> = app.panels[1]
            .transcript
            .lines()
            .iter()
            .map(|l| l.text())
            .collect();
        assert!(
            b.iter()
                .any(|l| l.starts_with("✗ check `cargo test`: failed (exit 101)")),
            "{b:?}"
        );
        assert!(b.contains(&"  error: could not compile"), "{b:?}");
        let model = |label: &str| versus_core::engine::FinishedModel {
            entry: 0,
            label: label.into(),
            stop: RunStop::Completed,
            stats: versus_core::model::RunStats::default(),
            error: None,
            final_text: String::new(),
            writes: 0,
            files: Vec::new(),
            deleted: Vec::new(),
            notes: Vec::new(),
            scan_notes: Vec::new(),
        };
        let restored = RestoredTurn {
            turn: 1,
            prompt: "fix".into(),
            finished: vec![model("demo/a"), model("demo/b")],
            unfinished: Vec::new(),
            checks: [("demo/b".to_string(), result.clone())].into(),
        };
        restore_review(&mut app, &restored, "s");
        let review = app.review.as_ref().unwrap();
        let checks: Vec<Option<CheckState>> =
            review.models.iter().map(|m| m.check.clone()).collect();
        assert_eq!(checks, [None, Some(CheckState::Done(result.clone()))]);
        // With a check configured now, one that never ended is missed, not waited for.
        app.settings.check = Some("cargo test".into());
        restore_review(&mut app, &restored, "s");
        let review = app.review.as_ref().unwrap();
        let checks: Vec<Option<CheckState>> =
            review.models.iter().map(|m| m.check.clone()).collect();
        assert_eq!(
            checks,
            [Some(CheckState::Missed), Some(CheckState::Done(result))]
        );
    }

    /// Bug (issue 14, 2): a rewind of a reopened session's turn put its prompt back without the
    /// `@model` it was sent to.
    #[test]
    fn a_replayed_turn_remembers_its_targets_for_a_rewind() {
        let log = SessionLog {
            records: vec![
                turn(1, "both"),
                SessionRecord::Turn {
                    turn: 2,
                    time: String::new(),
                    prompt: "only b".into(),
                    models: vec!["demo/b".into()],
                    blind: false,
                    tasks: Vec::new(),
                },
            ],
            skipped: Vec::new(),
        };
        let mut app = App::new(
            SessionInfo::default(),
            vec!["demo/a".into(), "demo/b".into()],
            Settings::default(),
            Theme::PLAIN,
        );
        replay(&mut app, &log);
        assert_eq!(app.sent.get(&1).map(String::as_str), Some("both"));
        assert_eq!(app.sent.get(&2).map(String::as_str), Some("@demo/b only b"));
    }

    /// Bug (issue 14, 6): a reopened panel said "1 write(s)" where the live one named the
    /// files, and a deleted file was reported as written.
    #[test]
    fn a_reopened_panel_names_the_files_written_and_deleted_like_the_live_one() {
        use versus_core::workspace::{FileWrite, WriteOrigin};
        let change = |seq: u64, path: &str, content: Option<&str>| FileWrite {
            path: path.into(),
            content: content.map(|c| std::sync::Arc::new(c.as_bytes().to_vec())),
            origin: WriteOrigin::new("write_file", format!("call-{seq}")),
            seq,
            symlink: false,
        };
        let writes = vec![
            change(0, "src/new.rs", Some("fn main() {}\n")),
            change(1, "old.txt", None),
            change(2, "tmp.txt", Some("x")),
            change(3, "tmp.txt", None),
        ];
        let log = SessionLog {
            records: vec![
                turn(1, "tidy up"),
                SessionRecord::Proposals {
                    turn: 1,
                    entry: 0,
                    model: "demo/a".into(),
                    writes: writes.clone(),
                    base: Default::default(),
                    modes: Default::default(),
                },
                SessionRecord::Finished {
                    turn: 1,
                    entry: 0,
                    model: String::new(),
                    stop: Some(RunStop::Completed),
                    stats: None,
                    writes: writes.len(),
                    error: None,
                    final_text: String::new(),
                },
            ],
            skipped: Vec::new(),
        };
        let mut app = App::new(
            SessionInfo::default(),
            vec!["demo/a".into(), "demo/b".into()],
            Settings::default(),
            Theme::PLAIN,
        );
        replay(&mut app, &log);
        let last = |app: &App| {
            app.panels[0]
                .transcript
                .lines()
                .last()
                .map(|l| l.text().to_string())
        };
        let expected = "wrote 1 file(s): src/new.rs · deleted 2 file(s): old.txt, tmp.txt";
        assert_eq!(last(&app).as_deref(), Some(expected));
        // The live panel says the same from the driver's summary.
        let mut live = App::new(
            SessionInfo::default(),
            vec!["demo/a".into()],
            Settings::default(),
            Theme::PLAIN,
        );
        live.panels[0].begin_turn(1, "tidy up", 0);
        live.panels[0].finish(&RunSummary {
            stop: RunStop::Completed,
            elapsed_ms: 0,
            writes: writes.len(),
            files: vec!["old.txt".into(), "src/new.rs".into(), "tmp.txt".into()],
            deleted: FileWrite::deleted_paths(&writes),
            error: None,
        });
        assert_eq!(last(&live).as_deref(), Some(expected));
    }

    /// Bug (issue 14, 1): `--continue` of a blind session came back with the names of its
    /// unchosen turn shown; they stay hidden (the engine keeps blind mode on) until the choice.
    #[test]
    fn a_reopened_blind_turn_hides_the_names_until_its_choice() {
        let blind_turn = |n: u32| SessionRecord::Turn {
            turn: n,
            time: "2026-11-21T09:05:03Z".into(),
            prompt: "fix it".into(),
            models: vec!["demo/a".into(), "demo/b".into()],
            blind: true,
            tasks: Vec::new(),
        };
        let fresh = || {
            App::new(
                SessionInfo::default(),
                vec!["demo/a".into(), "demo/b".into()],
                Settings::default(),
                Theme::PLAIN,
            )
        };
        let log = SessionLog {
            records: vec![blind_turn(1), finished(1, 0), finished(1, 1)],
            skipped: Vec::new(),
        };
        assert!(log.blind());
        let mut app = fresh();
        replay(&mut app, &log);
        assert!(app.hiding());
        assert!((0..2).all(|i| app.shown(i).starts_with("Model ")));
        // Chosen: the names show.
        let mut log = log;
        log.records.push(SessionRecord::Choice {
            turn: 1,
            chosen: Vec::new(),
            apply_id: None,
            applied: Vec::new(),
            ratings: Default::default(),
        });
        let mut app = fresh();
        replay(&mut app, &log);
        assert!(!app.hiding());
        assert_eq!(app.shown(0), "demo/a");
    }
}
