//! The completion list, drawn just above the prompt box over the panels.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};
use unicode_width::UnicodeWidthStr;

use super::super::state::App;

/// Most rows of the list on screen.
const ROWS: usize = 8;

/// Draws the list when one is open.
pub fn render(frame: &mut Frame<'_>, panels: Rect, prompt: Rect, app: &App) {
    let Some(c) = &app.completion else { return };
    if app.overlay.is_some() || app.prompt.search.is_some() {
        return;
    }
    let t = app.theme;
    let rows = c.items.len().min(ROWS);
    let height = u16::try_from(rows + 2)
        .unwrap_or(u16::MAX)
        .min(panels.height);
    if height < 3 {
        return;
    }
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
            let line = Line::from(vec![
                Span::styled(
                    format!(" {}{} ", item.replacement, " ".repeat(pad)),
                    t.hint(),
                ),
                Span::styled(item.detail.as_str(), t.dim()),
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
