//! What the engine answers about the review: change sets and checks as models finish, the
//! apply preview, the recorded choice, and rewinds.

use versus_core::apply::{AppliedAs, FileStatus};
use versus_core::model::RunStop;
use versus_core::workspace::changeset::ChangeSet;

use super::super::action::{
    CheckResult, CheckState, ChoiceDone, ChoiceRequest, Effect, ReviewOpening, RewindDone,
    RewindPlan,
};
use super::super::format::duration_ms;
use super::super::panel::{Panel, PanelStatus};
use super::super::review::{Decided, SetState};
use super::super::state::{App, ApplyDialog, Dialog, Screen};
use super::super::strings;

/// A finished model's change set: into the review, which may open by itself
/// ([`open_when_ready`]).
pub fn change_set(app: &mut App, turn: u32, label: &str, set: Result<ChangeSet, String>) {
    let Some(review) = app.review.as_mut().filter(|r| r.turn == turn) else {
        return;
    };
    match set {
        Ok(set) => {
            let changed = !set.is_empty();
            review.add_set(set);
            review.ensure_doc();
            open_when_ready(app, turn, changed.then_some(label));
        }
        Err(error) => {
            if let Some(m) = review.models.iter_mut().find(|m| m.label == label) {
                m.set = SetState::Failed(error.clone());
            }
            let who = app.shown_label(label);
            app.error(format!("the changes of {who} cannot be reviewed: {error}"));
            open_when_ready(app, turn, None);
        }
    }
}

/// Whether `label`'s run ended normally (not an error, a limit, a timeout or a cancel).
pub fn ended_well(app: &App, label: &str) -> bool {
    app.panel_of(label)
        .and_then(|i| app.panels.get(i))
        .is_some_and(|p| p.status == PanelStatus::Done(RunStop::Completed))
}

/// Opens the review by itself once, when it has something to show (unless the user is typing
/// a prompt or has a dialog open; then the status line says it is ready). Without a check it
/// opens on the first change (`changed`: the model whose non-empty change set just came);
/// with a check it waits until every change set is built and every check has ended, and opens
/// on the best model ([`versus_core::review::best`]: check passed, tests left alone, ended well,
/// changed something), so the first screen already says which change builds and passes.
fn open_when_ready(app: &mut App, turn: u32, changed: Option<&str>) {
    let checking = app.settings.check.is_some();
    let Some(review) = app.review.as_ref().filter(|r| r.turn == turn) else {
        return;
    };
    let checking = checking || review.models.iter().any(|m| m.check.is_some());
    if review.opened || !review.sets.iter().any(|s| !s.is_empty()) {
        return;
    }
    let target = if checking {
        if !review.settled() {
            return;
        }
        review.best(|label| ended_well(app, label))
    } else {
        match changed {
            Some(label) => review.models.iter().position(|m| m.label == label),
            None => return,
        }
    };
    let Some(target) = target else {
        return;
    };
    let Some(label) = review.models.get(target).map(|m| m.label.clone()) else {
        return;
    };
    let free = app.settings.review == ReviewOpening::Auto
        && app.screen == Screen::Panels
        && app.prompt.is_empty()
        && app.overlay.is_none()
        && app.dialog.is_none()
        && app.prompt.search.is_none();
    let who = app.shown_label(&label);
    if !free {
        app.info(if checking {
            format!("every check has ended: Ctrl+O opens the review on {who}")
        } else {
            format!("{who}'s changes are ready to review: Ctrl+O opens the review")
        });
        return;
    }
    if let Some(review) = app.review.as_mut() {
        review.opened = true;
        review.open_on(target);
        review.ensure_doc();
    }
    app.screen = Screen::Review;
    app.zoom = false;
}

/// A check started or ended: into the table, and its output into the model's transcript.
pub fn check(app: &mut App, turn: u32, label: &str, state: CheckState) {
    let Some(review) = app.review.as_mut().filter(|r| r.turn == turn) else {
        return;
    };
    if let Some(m) = review.models.iter_mut().find(|m| m.label == label) {
        m.check = Some(state.clone());
    }
    let CheckState::Done(result) = state else {
        return;
    };
    if let Some(panel) = app.panel_of(label).and_then(|i| app.panels.get_mut(i)) {
        check_notes(panel, &result);
    }
    open_when_ready(app, turn, None);
}

/// A check's result in its model's transcript: how it ended, then its last lines (live, and
/// again when a session is reopened).
pub fn check_notes(panel: &mut Panel, result: &CheckResult) {
    let mark = if result.passed { "✓" } else { "✗" };
    panel.note(&format!(
        "{mark} check `{}`: {} · {}",
        result.command,
        result.ending,
        duration_ms(result.elapsed_ms)
    ));
    for line in &result.tail {
        panel.note(&format!("  {line}"));
    }
}

/// The preview: apply at once when nothing conflicts, else ask per conflicting file.
pub fn preview(app: &mut App, turn: u32, preview: versus_core::apply::Preview) -> Vec<Effect> {
    let Some(review) = app.review.as_mut().filter(|r| r.turn == turn) else {
        return Vec::new();
    };
    let Some(plan) = review.pending.take() else {
        review.busy = false;
        return Vec::new();
    };
    let conflicts = preview.conflicts().len();
    let ratings = review.ratings.clone();
    if conflicts == 0 {
        let merged = preview
            .files
            .iter()
            .filter(|f| f.status == FileStatus::Merged)
            .count();
        app.info(if merged > 0 {
            format!("applying ({merged} file(s) merged with your edits)…")
        } else {
            "applying…".to_string()
        });
        return vec![Effect::Choose(ChoiceRequest {
            turn,
            chosen: Vec::new(),
            plan: Some(plan),
            resolutions: Default::default(),
            ratings,
        })];
    }
    app.dialog = Some(Dialog::Apply(ApplyDialog {
        turn,
        plan,
        preview,
        selected: 0,
        resolutions: Default::default(),
        scroll: 0,
    }));
    app.error(format!(
        "{conflicts} file(s) conflict with your edits since the run started: choose per file (o overwrite, s skip, m markers), Enter applies"
    ));
    Vec::new()
}

/// The choice is recorded: say what was written. Blind mode's names stay hidden (they are
/// the session's, revealed only when the user asks or the session ends).
pub fn chosen(app: &mut App, done: ChoiceDone) {
    if let Some(review) = app.review.as_mut().filter(|r| r.turn == done.turn) {
        review.busy = false;
        review.pending = None;
        review.decided = Some(Decided {
            chosen: done.chosen.clone(),
            apply_id: done.apply_id.clone(),
        });
        review.basket.clear();
        review.recompute_basket();
    }
    let hidden = if app.hiding() {
        strings::NAMES_STAY_HIDDEN
    } else {
        ""
    };
    if done.chosen.is_empty() {
        app.info(format!(
            "turn {}: none of them (recorded in .versus/preferences.jsonl){hidden}",
            done.turn
        ));
        return;
    }
    let names: Vec<String> = done.chosen.iter().map(|l| app.shown_label(l)).collect();
    let group = |kinds: &[AppliedAs]| -> Vec<&str> {
        done.files
            .iter()
            .filter(|(_, how)| kinds.contains(how))
            .map(|(p, _)| p.as_str())
            .collect()
    };
    let written = group(&[
        AppliedAs::Written,
        AppliedAs::Deleted,
        AppliedAs::Overwritten,
    ]);
    let merged = group(&[AppliedAs::Merged]);
    let markers = group(&[AppliedAs::MarkersWritten]);
    let same = group(&[AppliedAs::AlreadyApplied]);
    let refused = group(&[AppliedAs::Refused]);
    let left = group(&[
        AppliedAs::Skipped,
        AppliedAs::Unresolved,
        AppliedAs::MarkersUnavailable,
    ]);
    let mut parts = Vec::new();
    for (what, list) in [
        ("wrote", &written),
        ("merged with your edits", &merged),
        ("conflict markers in", &markers),
        ("already as proposed", &same),
        ("not written (conflicts)", &left),
        (
            "refused symlinks (outside the project or path taken)",
            &refused,
        ),
    ] {
        if !list.is_empty() {
            parts.push(format!("{what} {}", list.join(", ")));
        }
    }
    let undo = if done.apply_id.is_some() {
        " · /rewind undoes it"
    } else {
        ""
    };
    let text = format!(
        "applied {}: {}{undo}{hidden}",
        names.join(" + "),
        if parts.is_empty() {
            "nothing to write".to_string()
        } else {
            parts.join("; ")
        }
    );
    if left.is_empty() {
        app.info(text);
    } else {
        app.error(text);
    }
}

/// The engine could not carry out the choice: nothing was recorded.
pub fn choice_failed(app: &mut App, error: String) {
    if let Some(review) = app.review.as_mut() {
        review.busy = false;
        review.pending = None;
    }
    app.error(error);
}

/// A rewind plan: ask.
pub fn rewind_planned(app: &mut App, plan: RewindPlan) {
    app.dialog = Some(Dialog::Rewind(plan));
}

/// A rewind is done: the prompt comes back, the review of that turn is reopened for a new
/// choice (files only) or closed (its conversation is gone).
pub fn rewound(app: &mut App, done: RewindDone) {
    let mut parts = Vec::new();
    if done.scope.files() {
        parts.push(match (done.restored.len(), done.kept.len()) {
            (0, 0) => "no file to restore".to_string(),
            (n, 0) => format!("{n} file(s) restored"),
            (n, _) => format!(
                "{n} file(s) restored; kept {} (edited after the apply)",
                done.kept.join(", ")
            ),
        });
    }
    if let Some(turn) = done.turn {
        if done.scope.conversation() {
            parts.push(format!("turn {turn} removed from every conversation"));
            for panel in &mut app.panels {
                panel.note(&format!("── turn {turn} rewound ──"));
            }
            if let Some(prompt) = &done.prompt {
                // The prompt as it was typed, `@model` targets included, when this session
                // sent or replayed it (the engine keeps the prompt without them).
                let line = app.sent.get(&turn).cloned();
                app.prompt.set(line.as_deref().unwrap_or(prompt));
                app.completion = None;
                parts.push("its prompt is back in the box".to_string());
            }
        }
        let reviewed = app.review.as_ref().is_some_and(|r| r.turn == turn);
        if reviewed && done.scope.conversation() {
            app.review = None;
            app.screen = Screen::Panels;
        } else if reviewed && let Some(review) = app.review.as_mut() {
            review.decided = None;
            parts.push("choose again, or send the next prompt".to_string());
        }
    }
    let head = match done.turn {
        Some(turn) => format!("rewound turn {turn}"),
        None => "rewound".to_string(),
    };
    app.info(format!("{head}: {}", parts.join("; ")));
}
