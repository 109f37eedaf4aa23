//! Drawing: one render function per component, each a pure function of the state it shows.
//!
//! [`draw`] is the only entry point. It first brings the wrap cache of every visible panel up
//! to date for its width, or the review's laid-out diff for the file on screen (the only
//! mutations, and they only touch caches), then hands each component its area. Nothing here
//! blocks: all data is already in memory.

/// Public so the component can be tested alone (tests/it/tui_widgets.rs).
pub mod banner;
/// Public so the component can be tested alone (tests/it/tui_widgets.rs).
pub mod completion;
/// Public so the component can be tested alone (tests/it/tui_widgets.rs).
pub mod dialog;
/// Public so the component can be tested alone (tests/it/tui_widgets.rs).
pub mod header;
/// Public so the component can be tested alone (tests/it/tui_widgets.rs).
pub mod overlay;
/// Public so the component can be tested alone (tests/it/tui_widgets.rs).
pub mod panel;
/// Public so the component can be tested alone (tests/it/tui_widgets.rs).
pub mod prompt;
pub mod review;
/// Public so the component can be tested alone (tests/it/tui_widgets.rs).
pub mod status;

use ratatui::Frame;

use super::layout::{areas, placed_panels};
use super::state::{App, Screen};

/// Draws one frame of the whole interface.
pub fn draw(frame: &mut Frame<'_>, app: &mut App) {
    let area = frame.area();
    app.size = (area.width, area.height);
    let a = areas(app, area);
    let reviewing = app.screen == Screen::Review && app.review.is_some();
    if reviewing && let Some(review) = app.review.as_mut() {
        review.ensure_doc();
    }
    let rects = if reviewing {
        Vec::new()
    } else {
        placed_panels(app, a.panels)
    };
    let verbose = app.verbose;
    for (index, rect) in &rects {
        if let Some(panel) = app.panels.get_mut(*index) {
            panel
                .transcript
                .ensure(rect.width.saturating_sub(2), verbose);
        }
    }
    let app: &App = app;
    header::render(frame, a.header, app);
    banner::render(frame, a.banner, app);
    let shown = rects.len();
    for (index, rect) in rects {
        if let Some(p) = app.panels.get(index) {
            panel::render(frame, rect, app, p, index, shown);
        }
    }
    if reviewing {
        review::render(frame, a.panels, app);
    } else if app.panels.is_empty() {
        panel::render_empty(frame, a.panels, app);
    }
    prompt::render(frame, a.prompt, app);
    completion::render(frame, a.panels, a.prompt, app);
    overlay::render(frame, a.panels, app);
    dialog::render(frame, a.panels, app);
    status::render(frame, a.status, app);
}
