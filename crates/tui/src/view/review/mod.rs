//! The review screen: the table of models on top, the selected model's files and the basket on
//! the left, the diff of the selected file on the right (the diff alone under the table on
//! narrow terminals). Each part is drawn by its own module from the review state only.

mod cut;
/// Public so the component can be tested alone (tests/it/tui_widgets.rs).
pub mod diff;
/// Public so the component can be tested alone (tests/it/tui_widgets.rs).
pub mod lists;
/// Public so the component can be tested alone (tests/it/tui_widgets.rs).
pub mod table;
pub mod text;
mod versions;

use ratatui::Frame;
use ratatui::layout::Rect;

use super::super::layout::review_areas;
use super::super::state::App;

/// Draws the review screen in the panel area.
pub fn render(frame: &mut Frame<'_>, area: Rect, app: &App) {
    let Some(review) = &app.review else {
        return;
    };
    let a = review_areas(app, area);
    table::render(frame, a.table, app, review);
    lists::files(frame, a.files, app, review);
    lists::basket(frame, a.basket, app, review);
    diff::render(frame, a.diff, app, review);
}
