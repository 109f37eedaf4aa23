//! Where each component goes for a terminal size: header, banner, panel grid, prompt box,
//! status line. Both drawing and the update logic (page size for scrolling) use it, so they
//! always agree on how big a panel is.

use ratatui::layout::{Constraint, Layout, Rect};

use super::state::App;

/// Narrowest panel worth placing beside another one.
pub const MIN_PANEL_WIDTH: u16 = 36;
/// Lowest panel worth stacking (borders plus two lines).
pub const MIN_PANEL_HEIGHT: u16 = 4;
/// Most lines the prompt box grows to.
pub const MAX_PROMPT_LINES: u16 = 10;

/// The areas of one frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Areas {
    /// One line at the top.
    pub header: Rect,
    /// The demo / welcome banner (empty rect when none).
    pub banner: Rect,
    /// Where the panels go.
    pub panels: Rect,
    /// The prompt box (with its border).
    pub prompt: Rect,
    /// One line at the bottom.
    pub status: Rect,
}

/// Splits the screen.
pub fn areas(app: &App, area: Rect) -> Areas {
    let inner_width = area.width.saturating_sub(2);
    let (lines, _) = app.prompt.layout(inner_width, app.theme);
    let prompt_lines = u16::try_from(lines.len())
        .unwrap_or(u16::MAX)
        .clamp(1, MAX_PROMPT_LINES);
    let room = area.height.saturating_sub(2);
    let prompt_height = (prompt_lines + 2).min(room.saturating_sub(MIN_PANEL_HEIGHT).max(3));
    let banner_lines = if app.turn == 0 && !app.banner.is_empty() {
        let inner = usize::from(area.width.saturating_sub(2)).max(1);
        let rows: usize = app.banner.iter().map(|l| super::wrap::rows(l, inner)).sum();
        let wanted = u16::try_from(rows).unwrap_or(u16::MAX).saturating_add(2);
        let left = room
            .saturating_sub(prompt_height)
            .saturating_sub(MIN_PANEL_HEIGHT);
        wanted.min(left)
    } else {
        0
    };
    let [header, banner, panels, prompt, status] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(banner_lines),
        Constraint::Min(0),
        Constraint::Length(prompt_height),
        Constraint::Length(status_height(app, area)),
    ])
    .areas(area);
    Areas {
        header,
        banner,
        panels,
        prompt,
        status,
    }
}

/// Most rows a long status message takes (it wraps instead of being cut).
pub const MAX_STATUS_LINES: u16 = 3;

/// Rows of the status line: one, or as many as a longer message needs when wrapped (up to
/// [`MAX_STATUS_LINES`], and never so many that the panels lose their last rows).
fn status_height(app: &App, area: Rect) -> u16 {
    let Some(status) = &app.status else {
        return 1;
    };
    let width = usize::from(area.width).max(1);
    let text = status.shown();
    let rows = u16::try_from(super::wrap::rows(&text, width)).unwrap_or(u16::MAX);
    let spare = area.height.saturating_sub(MIN_PANEL_HEIGHT + 6).max(1);
    rows.clamp(1, MAX_STATUS_LINES.min(spare))
}

/// The rectangles of the panels shown: all of them in a grid (side by side when wide,
/// stacked when narrow), or only the focused one when zoomed or when the grid would not fit.
pub fn panel_rects(area: Rect, count: usize, focus: usize, zoom: bool) -> Vec<(usize, Rect)> {
    if count == 0 || area.is_empty() {
        return Vec::new();
    }
    let focus = focus.min(count - 1);
    if zoom || count == 1 {
        return vec![(focus, area)];
    }
    let max_cols = usize::from((area.width / MIN_PANEL_WIDTH).max(1));
    let mut cols = max_cols.min(count);
    let rows = count.div_ceil(cols);
    cols = count.div_ceil(rows);
    let rows_fit = usize::from(area.height / MIN_PANEL_HEIGHT);
    if rows > rows_fit {
        return vec![(focus, area)];
    }
    let row_areas = Layout::vertical(vec![Constraint::Fill(1); rows]).split(area);
    let mut out = Vec::with_capacity(count);
    for (r, row_area) in row_areas.iter().enumerate() {
        let first = r * cols;
        let last = ((r + 1) * cols).min(count);
        let n = last - first;
        let cells = Layout::horizontal(vec![Constraint::Fill(1); n]).split(*row_area);
        for (k, cell) in cells.iter().enumerate() {
            out.push((first + k, *cell));
        }
    }
    out
}

/// The panels shown and where, by panel index: [`panel_rects`] over the panels in the order
/// they are laid out ([`App::panel_order`]: shuffled while a blind turn hides the names).
pub fn placed_panels(app: &App, area: Rect) -> Vec<(usize, Rect)> {
    let order = app.panel_order();
    let focus = order.iter().position(|&i| i == app.focus).unwrap_or(0);
    panel_rects(area, order.len(), focus, app.zoom)
        .into_iter()
        .filter_map(|(position, rect)| order.get(position).map(|&i| (i, rect)))
        .collect()
}

/// The inner height (rows of text) of panel `index` at the app's current size, for paging.
pub fn panel_height(app: &App, index: usize) -> usize {
    let area = Rect::new(0, 0, app.size.0, app.size.1);
    let a = areas(app, area);
    placed_panels(app, a.panels)
        .into_iter()
        .find(|(i, _)| *i == index)
        .map(|(_, r)| usize::from(r.height.saturating_sub(2)))
        .unwrap_or(1)
        .max(1)
}

/// Narrowest review area that still gets the file list and basket beside the diff.
pub const MIN_REVIEW_SIDE: u16 = 70;

/// The parts of the review screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReviewAreas {
    /// The table of models (with its border).
    pub table: Rect,
    /// The selected model's files (empty on narrow terminals).
    pub files: Rect,
    /// The basket (empty on narrow terminals).
    pub basket: Rect,
    /// The diff (with its border).
    pub diff: Rect,
}

/// Splits the panel area for the review: the table on top (one row per model, a line for the
/// selected model's check, and one when a change set touches test files), then the files and the basket on the left and the diff on the
/// right; on narrow terminals the diff alone under the table.
pub fn review_areas(app: &App, area: Rect) -> ReviewAreas {
    let models = app.review.as_ref().map_or(0, |r| r.models.len());
    let check_line = u16::from(app.settings.check.is_some() || has_checks(app));
    let tests_line = u16::from(has_test_edits(app));
    let context_line = u16::from(
        app.review
            .as_ref()
            .is_some_and(super::view::review::table::shows_context),
    );
    let wanted =
        u16::try_from(models).unwrap_or(u16::MAX) + 3 + check_line + tests_line + context_line;
    let table_height = wanted.min(area.height / 2).max(3.min(area.height));
    let [table, rest] =
        Layout::vertical([Constraint::Length(table_height), Constraint::Min(0)]).areas(area);
    if rest.width < MIN_REVIEW_SIDE {
        return ReviewAreas {
            table,
            files: Rect::default(),
            basket: Rect::default(),
            diff: rest,
        };
    }
    let side = (rest.width * 3 / 10).clamp(24, 44);
    let [left, diff] =
        Layout::horizontal([Constraint::Length(side), Constraint::Min(0)]).areas(rest);
    // Picks and comments take a line or two at this width, conflicts two or three (they wrap).
    let basket_lines = app.review.as_ref().map_or(1, |r| {
        let conflicts = match &r.basket_state {
            versus_core::review::BasketState::Conflicts(c) => c.len(),
            _ => 0,
        };
        let wide = usize::from(side) >= 40;
        let pick = if wide { 1 } else { 2 };
        let conflict = if wide { 2 } else { 3 };
        ((r.basket.picks().len() + r.comments.len()) * pick + conflicts * conflict).max(1) + 1
    });
    // The file list keeps the rows its files need (at least a third of the column while it
    // has more files than that); the basket gets everything else it can use, so neither a
    // third pick nor a conflict's lines hide under an empty file list.
    let files_needed = app
        .review
        .as_ref()
        .and_then(|r| r.set())
        .map_or(1, |set| set.files.len().max(1));
    let files_rows = (u16::try_from(files_needed).unwrap_or(u16::MAX) + 2)
        .min((left.height / 3).max(3))
        .min(left.height);
    let basket_height = (u16::try_from(basket_lines).unwrap_or(u16::MAX) + 2)
        .min(left.height.saturating_sub(files_rows))
        .max(3.min(left.height));
    let [files, basket] =
        Layout::vertical([Constraint::Min(0), Constraint::Length(basket_height)]).areas(left);
    ReviewAreas {
        table,
        files,
        basket,
        diff,
    }
}

fn has_checks(app: &App) -> bool {
    app.review
        .as_ref()
        .is_some_and(|r| r.models.iter().any(|m| m.check.is_some()))
}

/// Whether a change set of the review touches test files (the table adds a note about it).
fn has_test_edits(app: &App) -> bool {
    app.review
        .as_ref()
        .is_some_and(|r| r.models.iter().any(|m| !r.test_files(&m.label).is_empty()))
}

/// Rows of diff text on screen at the app's current size (for paging in the review).
pub fn diff_height(app: &App) -> usize {
    let area = Rect::new(0, 0, app.size.0, app.size.1);
    let a = areas(app, area);
    usize::from(review_areas(app, a.panels).diff.height.saturating_sub(2)).max(1)
}

/// Columns inside the review's diff pane at the current terminal size (sideways scroll and
/// wrapping measure lines against it).
pub fn diff_width(app: &App) -> usize {
    let area = Rect::new(0, 0, app.size.0, app.size.1);
    let a = areas(app, area);
    usize::from(review_areas(app, a.panels).diff.width.saturating_sub(2)).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_terminals_put_panels_side_by_side_and_narrow_ones_stack_them() {
        let wide = panel_rects(Rect::new(0, 0, 150, 40), 3, 0, false);
        assert_eq!(wide.len(), 3);
        assert!(wide.iter().all(|(_, r)| r.y == 0 && r.height == 40));
        let narrow = panel_rects(Rect::new(0, 0, 60, 40), 3, 0, false);
        assert!(narrow.iter().all(|(_, r)| r.x == 0 && r.width == 60));
        let eight = panel_rects(Rect::new(0, 0, 240, 60), 8, 0, false);
        assert_eq!(eight.len(), 8);
        assert_eq!(eight[0].1.width, 60);
    }

    #[test]
    fn zoom_and_tiny_terminals_show_only_the_focused_panel() {
        assert_eq!(
            panel_rects(Rect::new(0, 0, 150, 40), 3, 2, true),
            vec![(2, Rect::new(0, 0, 150, 40))]
        );
        let tiny = panel_rects(Rect::new(0, 0, 40, 5), 3, 1, false);
        assert_eq!(tiny, vec![(1, Rect::new(0, 0, 40, 5))]);
    }
}
