//! The header line: session, models, turn and cumulative cost.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::super::format::cost;
use super::super::state::App;

/// Draws the header.
pub fn render(frame: &mut Frame<'_>, area: Rect, app: &App) {
    let t = app.theme;
    let sep = Span::styled(" │ ", t.dim());
    let mut spans = vec![Span::styled("versus", t.accent())];
    if app.session.demo {
        spans.push(Span::raw(" "));
        spans.push(Span::styled(" DEMO ", t.badge()));
    }
    spans.push(sep.clone());
    spans.push(Span::raw(format!("session {}", app.session.id)));
    spans.push(sep.clone());
    let n = app.roster.len();
    spans.push(Span::raw(format!(
        "{n} model{}",
        if n == 1 { "" } else { "s" }
    )));
    spans.push(sep.clone());
    spans.push(Span::raw(format!("turn {}", app.turn)));
    spans.push(sep);
    spans.push(Span::raw(format!("{} total", cost(app.total_cost()))));
    if app.review_ready() {
        spans.push(Span::raw("  "));
        spans.push(Span::styled(" review ready · Ctrl+O ", t.badge()));
    }
    if app.blind || app.hiding() {
        spans.push(Span::styled("  blind", t.warn()));
    }
    if app.verbose {
        spans.push(Span::styled("  verbose", t.dim()));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}
