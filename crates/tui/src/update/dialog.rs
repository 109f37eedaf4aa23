//! The two questions that hold every key until answered: what to do with files that conflict
//! with the user's own edits (overwrite / skip / markers, per file), and whether to rewind.
//!
//! Nothing is written while a question is open. A conflicting file the user leaves without an
//! answer is not written (the apply engine's rule), and Esc abandons the apply entirely.

use crossterm::event::KeyEvent;

use versus_core::apply::{FilePreview, FileStatus, Resolution};

use super::super::action::{ChoiceRequest, Effect};
use super::super::keymap::{self, Context, KeyAction};
use super::super::state::{App, Dialog};

/// Handles a key while a dialog is open.
pub fn key(app: &mut App, key: KeyEvent) -> Vec<Effect> {
    match app.dialog.take() {
        Some(Dialog::Apply(mut dialog)) => {
            let conflicts: Vec<String> = dialog
                .preview
                .conflicts()
                .into_iter()
                .map(str::to_string)
                .collect();
            let selected = conflicts.get(dialog.selected).cloned();
            let before = dialog.selected;
            let set = |dialog: &mut super::super::state::ApplyDialog, r: Resolution| {
                if let Some(path) = &selected {
                    dialog.resolutions.insert(path.clone(), r);
                    dialog.selected = (dialog.selected + 1).min(conflicts.len().saturating_sub(1));
                }
            };
            // A page of the detail: the dialog takes the screen less its frame and the file
            // list, so half the terminal is a safe step that never skips a whole region.
            let page = usize::from(app.size.1 / 2).max(1);
            match keymap::action(Context::ApplyDialog, key) {
                Some(KeyAction::ApplyCancel) => {
                    cancel_apply(app);
                    return Vec::new();
                }
                Some(KeyAction::ConflictUp) => {
                    dialog.selected = dialog.selected.saturating_sub(1);
                }
                Some(KeyAction::ConflictDown) => {
                    dialog.selected = (dialog.selected + 1).min(conflicts.len().saturating_sub(1));
                }
                Some(KeyAction::DetailPageDown) => {
                    let rows = dialog
                        .preview
                        .files
                        .iter()
                        .find(|f| Some(&f.path) == selected.as_ref())
                        .map_or(0, detail_rows);
                    dialog.scroll = (dialog.scroll + page).min(rows.saturating_sub(1));
                }
                Some(KeyAction::DetailPageUp) => {
                    dialog.scroll = dialog.scroll.saturating_sub(page);
                }
                Some(KeyAction::DetailTop) => dialog.scroll = 0,
                Some(KeyAction::Overwrite) => set(&mut dialog, Resolution::Overwrite),
                Some(KeyAction::Skip) => set(&mut dialog, Resolution::Skip),
                Some(KeyAction::Markers) => {
                    let available = selected.as_ref().is_some_and(|path| {
                        dialog.preview.files.iter().any(|f| {
                            &f.path == path
                                && matches!(
                                    f.status,
                                    FileStatus::Conflict {
                                        markers_available: true,
                                        ..
                                    }
                                )
                        })
                    });
                    if available {
                        set(&mut dialog, Resolution::Markers);
                    } else {
                        app.error(
                            "conflict markers cannot be written for this file (binary or deleted): choose o or s",
                        );
                    }
                }
                Some(KeyAction::ApplyConfirm) => {
                    let ratings = app
                        .review
                        .as_ref()
                        .map(|r| r.ratings.clone())
                        .unwrap_or_default();
                    if let Some(review) = app.review.as_mut() {
                        review.busy = true;
                    }
                    let unanswered = conflicts
                        .iter()
                        .filter(|p| !dialog.resolutions.contains_key(*p))
                        .count();
                    app.info(if unanswered == 0 {
                        "applying…".to_string()
                    } else {
                        format!("applying; {unanswered} conflicting file(s) left unanswered are not written…")
                    });
                    return vec![Effect::Choose(ChoiceRequest {
                        turn: dialog.turn,
                        chosen: Vec::new(),
                        plan: Some(dialog.plan),
                        resolutions: dialog.resolutions,
                        ratings,
                    })];
                }
                _ => app.dirty = false,
            }
            if dialog.selected != before {
                dialog.scroll = 0;
            }
            app.dialog = Some(Dialog::Apply(dialog));
            Vec::new()
        }
        Some(Dialog::Rewind(plan)) => match keymap::action(Context::RewindDialog, key) {
            Some(KeyAction::RewindConfirm) => {
                app.info("rewinding…");
                vec![Effect::Rewind { plan, force: false }]
            }
            Some(KeyAction::RewindForce)
                if plan.files.as_ref().is_some_and(|f| !f.edited().is_empty()) =>
            {
                app.info("rewinding, edited files included…");
                vec![Effect::Rewind { plan, force: true }]
            }
            Some(KeyAction::RewindCancel) => {
                app.info("nothing rewound");
                Vec::new()
            }
            _ => {
                app.dirty = false;
                app.dialog = Some(Dialog::Rewind(plan));
                Vec::new()
            }
        },
        None => Vec::new(),
    }
}

/// An upper bound of the rows the conflict detail of `file` takes (the view draws at most
/// this many: per region a heading, both texts, and the three answers' texts with the
/// marker lines), so scrolling stops near the end instead of growing without bound.
fn detail_rows(file: &FilePreview) -> usize {
    file.texts
        .iter()
        .map(|t| 2 * (t.ours.len() + t.theirs.len()) + 12)
        .sum::<usize>()
        + 2
}

fn cancel_apply(app: &mut App) {
    if let Some(review) = app.review.as_mut() {
        review.busy = false;
        review.pending = None;
    }
    app.info("nothing applied; the basket is as it was");
}
