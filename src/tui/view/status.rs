//! The status line: the latest message (errors in red), else the key hints of the moment.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::super::state::{App, Screen};
use super::super::strings::{
    HINTS_COMPLETION, HINTS_DIALOG, HINTS_IDLE, HINTS_IDLE_REVIEW, HINTS_REVIEW, HINTS_RUNNING,
    HINTS_SEARCH,
};

/// Draws the status line.
pub fn render(frame: &mut Frame<'_>, area: Rect, app: &App) {
    let t = app.theme;
    let line = match &app.status {
        Some(status) if status.error => Line::styled(format!("✗ {}", status.text), t.error()),
        Some(status) => Line::styled(status.text.as_str(), t.text()),
        None => {
            let hints = if app.dialog.is_some() {
                HINTS_DIALOG
            } else if app.screen == Screen::Review && app.review.is_some() {
                HINTS_REVIEW
            } else if app.prompt.search.is_some() {
                HINTS_SEARCH
            } else if app.completion.is_some() {
                HINTS_COMPLETION
            } else if app.running() {
                HINTS_RUNNING
            } else if app
                .review
                .as_ref()
                .is_some_and(|r| r.sets.iter().any(|s| !s.is_empty()))
            {
                HINTS_IDLE_REVIEW
            } else {
                HINTS_IDLE
            };
            let mut spans = Vec::new();
            for (i, (key, what)) in hints.iter().enumerate() {
                if i > 0 {
                    spans.push(Span::styled(" · ", t.dim()));
                }
                spans.push(Span::styled(*key, t.hint()));
                spans.push(Span::styled(format!(" {what}"), t.dim()));
            }
            Line::from(spans)
        }
    };
    // A long message wraps onto the rows the layout gave it instead of being cut; the key
    // hints keep to their one row.
    let paragraph = Paragraph::new(line);
    let paragraph = if app.status.is_some() {
        paragraph.wrap(ratatui::widgets::Wrap { trim: false })
    } else {
        paragraph
    };
    frame.render_widget(paragraph, area);
}
