//! The completion list, drawn just above the prompt box over the panels.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};
use unicode_width::UnicodeWidthStr;

use super::super::state::App;
use super::super::wrap;

/// Most rows of the list on screen.
const ROWS: usize = 8;

/// Draws the list when one is open.
pub fn render(frame: &mut Frame<'_>, panels: Rect, prompt: Rect, app: &App) {
    let Some(c) = &app.completion else { return };
    if app.overlay.is_some() || app.prompt.search.is_some() {
        return;
    }
    let t = app.theme;
    let height = u16::try_from(c.items.len().min(ROWS) + 2)
        .unwrap_or(u16::MAX)
        .min(panels.height);
    if height < 3 {
        return;
    }
    // The rows drawn, which the panels' height may make fewer than ROWS: the scrolling
    // counts these, so the selected item is always one of them.
    let rows = usize::from(height - 2);
    let name_width = c
        .items
        .iter()
        .map(|i| i.replacement.width())
        .max()
        .unwrap_or(0)
        .min(40);
    let width = prompt.width.min(100);
    let area = Rect::new(prompt.x, prompt.y.saturating_sub(height), width, height);
    let first = c.selected.saturating_sub(rows - 1);
    let lines: Vec<Line<'_>> = c
        .items
        .iter()
        .enumerate()
        .skip(first)
        .take(rows)
        .map(|(i, item)| {
            let pad = name_width.saturating_sub(item.replacement.width());
            let name = format!(" {}{} ", item.replacement, " ".repeat(pad));
            let room = usize::from(width.saturating_sub(2)).saturating_sub(name.width());
            let line = Line::from(vec![
                Span::styled(name, t.hint()),
                Span::styled(wrap::fit(&item.detail, room), t.dim()),
            ]);
            if i == c.selected {
                line.style(t.selected())
            } else {
                line
            }
        })
        .collect();
    let title = format!(" {}/{} · Tab complete ", c.selected + 1, c.items.len());
    frame.render_widget(Clear, area);
    frame.render_widget(
        Paragraph::new(lines).block(Block::bordered().border_style(t.hint()).title_top(title)),
        area,
    );
}
