//! Where each component goes for a terminal size: header, banner, panel grid, prompt box,
//! status line. Both drawing and the update logic (page size for scrolling) use it, so they
//! always agree on how big a panel is.

use ratatui::layout::{Constraint, Layout, Rect};
use unicode_width::UnicodeWidthStr;

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
        let rows: usize = app
            .banner
            .iter()
            .map(|l| UnicodeWidthStr::width(l.as_str()).div_ceil(inner).max(1))
            .sum();
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
        Constraint::Length(1),
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

/// The inner height (rows of text) of panel `index` at the app's current size, for paging.
pub fn panel_height(app: &App, index: usize) -> usize {
    let area = Rect::new(0, 0, app.size.0, app.size.1);
    let a = areas(app, area);
    panel_rects(a.panels, app.panels.len(), app.focus, app.zoom)
        .into_iter()
        .find(|(i, _)| *i == index)
        .map(|(_, r)| usize::from(r.height.saturating_sub(2)))
        .unwrap_or(1)
        .max(1)
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
