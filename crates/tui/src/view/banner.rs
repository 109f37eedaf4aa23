//! The banner above the panels before the first turn (demo mode explains itself here).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Paragraph};

use super::super::state::App;
use super::super::wrap;

/// Draws the banner (nothing when its area is empty): its lines wrapped at words as the
/// layout counts them (`rows`); when the area is too low for all of them, the last row shown
/// ends with `…`, so the cut shows.
pub fn render(frame: &mut Frame<'_>, area: Rect, app: &App) {
    if area.height == 0 {
        return;
    }
    let t = app.theme;
    let inner = usize::from(area.width.saturating_sub(2)).max(1);
    let room = usize::from(area.height.saturating_sub(2));
    let first = wrap::rows(app.banner.first().map_or("", String::as_str), inner);
    let shown = wrap::at_most(rows(&app.banner, inner), room, inner);
    let lines: Vec<Line<'_>> = shown
        .into_iter()
        .enumerate()
        .map(|(i, r)| Line::styled(r, if i < first { t.warn() } else { t.text() }))
        .collect();
    let block = Block::bordered().border_style(t.warn());
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

/// The banner's lines wrapped at words within `inner` columns: the rows it draws, and so the
/// rows the layout gives it.
fn rows(banner: &[String], inner: usize) -> Vec<String> {
    banner.iter().flat_map(|l| wrap::words(l, inner)).collect()
}
