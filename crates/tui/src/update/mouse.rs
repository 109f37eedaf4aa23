//! The mouse, while the interface takes it (`[ui] mouse`, `/mouse`): the wheel scrolls what
//! is under the pointer (a panel, the review's diff, an open overlay) and a left click focuses
//! the panel under it, or in the review selects the model row or the file under it. Pure: the
//! same layout functions the drawing uses say what is where, so a click lands where it was
//! drawn at every size.

use crossterm::event::{MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::{Position, Rect};

use super::super::layout::{Areas, areas, diff_height, panel_height, placed_panels, review_areas};
use super::super::state::{App, Screen};

/// Rows one wheel notch scrolls.
const WHEEL_ROWS: usize = 3;

/// Handles one mouse event.
pub fn handle(app: &mut App, event: MouseEvent) {
    let at = Position::new(event.column, event.row);
    let screen = Rect::new(0, 0, app.size.0, app.size.1);
    let a = areas(app, screen);
    match event.kind {
        MouseEventKind::ScrollUp => wheel(app, &a, at, true),
        MouseEventKind::ScrollDown => wheel(app, &a, at, false),
        MouseEventKind::Down(MouseButton::Left) => click(app, &a, at),
        _ => app.dirty = false,
    }
}

fn wheel(app: &mut App, a: &Areas, at: Position, up: bool) {
    if app.overlay.is_some() {
        app.overlay_scroll = if up {
            app.overlay_scroll.saturating_sub(WHEEL_ROWS)
        } else {
            app.overlay_scroll + WHEEL_ROWS
        };
        return;
    }
    match app.screen {
        Screen::Review => {
            let r = review_areas(app, a.panels);
            if !r.diff.contains(at) {
                app.dirty = false;
                return;
            }
            let height = diff_height(app);
            if let Some(review) = app.review.as_mut() {
                let rows = WHEEL_ROWS as isize;
                let delta = if up { -rows } else { rows };
                // The N-way view (`V`) scrolls when it is open, else the diff.
                if !review.scroll_versions(delta, height) {
                    review.scroll_by(delta, height);
                }
            }
        }
        Screen::Panels => {
            let Some(index) = panel_at(app, a, at) else {
                app.dirty = false;
                return;
            };
            let height = panel_height(app, index);
            if let Some(panel) = app.panels.get_mut(index) {
                // A panel's scroll counts rows up from its end (0 follows the stream).
                let max = panel.transcript.row_count().saturating_sub(height);
                panel.scroll = if up {
                    (panel.scroll + WHEEL_ROWS).min(max)
                } else {
                    panel.scroll.saturating_sub(WHEEL_ROWS)
                };
            }
        }
    }
}

fn click(app: &mut App, a: &Areas, at: Position) {
    match app.screen {
        Screen::Panels => match panel_at(app, a, at) {
            Some(index) => app.focus = index,
            None => app.dirty = false,
        },
        Screen::Review => {
            let r = review_areas(app, a.panels);
            let Some(review) = app.review.as_mut() else {
                return;
            };
            // The table: a border, the header line, then one row per model in shown order.
            if r.table.contains(at) {
                if at.y >= r.table.y + 2 {
                    let row = usize::from(at.y - r.table.y - 2);
                    let from = review.order.iter().position(|&i| i == review.selected);
                    if let Some(from) = from
                        && row < review.order.len()
                        && row != from
                    {
                        review.select_model(row as isize - from as isize);
                    }
                }
                return;
            }
            // The file list: a border, then the files from the first one drawn.
            if r.files.contains(at) && at.y > r.files.y {
                let inner = usize::from(r.files.height.saturating_sub(2));
                let first = review.file.saturating_sub(inner.saturating_sub(1));
                let wanted = first + usize::from(at.y - r.files.y - 1);
                let count = review.set().map_or(0, |s| s.files.len());
                if wanted < count && wanted != review.file {
                    review.select_file(wanted as isize - review.file as isize);
                }
                return;
            }
            app.dirty = false;
        }
    }
}

/// The panel drawn under `at`, if any.
fn panel_at(app: &App, a: &Areas, at: Position) -> Option<usize> {
    placed_panels(app, a.panels)
        .into_iter()
        .find(|(_, rect)| rect.contains(at))
        .map(|(index, _)| index)
}
