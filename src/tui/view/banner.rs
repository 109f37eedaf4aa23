//! The banner above the panels before the first turn (demo mode explains itself here).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Paragraph, Wrap};

use super::super::state::App;

/// Draws the banner (nothing when its area is empty).
pub fn render(frame: &mut Frame<'_>, area: Rect, app: &App) {
    if area.height == 0 {
        return;
    }
    let t = app.theme;
    let lines: Vec<Line<'_>> = app
        .banner
        .iter()
        .enumerate()
        .map(|(i, l)| Line::styled(l.as_str(), if i == 0 { t.warn() } else { t.text() }))
        .collect();
    let block = Block::bordered().border_style(t.warn());
    frame.render_widget(
        Paragraph::new(lines).block(block).wrap(Wrap { trim: true }),
        area,
    );
}
