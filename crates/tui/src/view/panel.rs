//! A model's panel: border with the label and status, the visible rows of its transcript,
//! and its counters (step, tokens, cost, elapsed) in the bottom border.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};

use versus_core::model::RunStop;

use super::super::format::{clock, cost, usage_tokens};
use super::super::panel::{Panel, PanelStatus};
use super::super::state::App;
use super::super::theme::Theme;

/// The icon and word for a status.
pub fn status_mark(status: PanelStatus, theme: Theme) -> (&'static str, &'static str, Style) {
    match status {
        PanelStatus::Idle => ("○", "idle", theme.dim()),
        PanelStatus::Preparing => ("◌", "preparing", theme.running()),
        PanelStatus::Running => ("●", "running", theme.running()),
        PanelStatus::Done(RunStop::Completed) => ("✓", "done", theme.ok()),
        PanelStatus::Done(RunStop::Error) => ("✗", "error", theme.error()),
        PanelStatus::Done(stop) => ("■", stop.label(), theme.warn()),
    }
}

/// Draws panel `index` (`shown` panels are on screen; when fewer than all, the title says
/// which one this is).
pub fn render(
    frame: &mut Frame<'_>,
    area: Rect,
    app: &App,
    panel: &Panel,
    index: usize,
    shown: usize,
) {
    let t = app.theme;
    let focused = index == app.focus;
    let (icon, word, style) = status_mark(panel.status, t);
    // Its place on screen, not in the roster: in a blind turn the roster order is the `-m`
    // order, which would name the model behind the alias.
    let place = (shown < app.panels.len()).then(|| {
        let place = app
            .panel_order()
            .iter()
            .position(|&i| i == index)
            .unwrap_or(index);
        format!("{}/{} ", place + 1, app.panels.len())
    });
    // The label in what the border leaves (corners, the mark, the place), cut in the middle
    // and still unlike every other model's.
    let room = usize::from(area.width)
        .saturating_sub(2 + 3 + 1)
        .saturating_sub(place.as_ref().map_or(0, |p| p.chars().count()));
    let mut title = vec![
        Span::styled(format!(" {icon} "), style),
        Span::styled(
            app.short_label(&panel.label, room.max(1)),
            if focused { t.accent() } else { t.bold() },
        ),
        Span::raw(" "),
    ];
    if let Some(place) = place {
        title.push(Span::styled(place, t.dim()));
    }
    let mut counters = vec![Span::styled(format!(" {word}"), style)];
    if panel.status != PanelStatus::Idle || panel.step > 0 {
        counters.push(Span::styled(
            format!(
                " · step {} · {} tok · {} · {} ",
                panel.step,
                usage_tokens(&panel.usage),
                cost(panel.cost),
                clock(panel.elapsed(app.now_ms)),
            ),
            t.dim(),
        ));
    } else {
        counters.push(Span::raw(" "));
    }
    let inner_height = usize::from(area.height.saturating_sub(2));
    let rows = panel.transcript.row_count();
    let max_scroll = rows.saturating_sub(inner_height);
    let scroll = panel.scroll.min(max_scroll);
    let mut block = Block::bordered()
        .border_style(if focused { t.accent() } else { t.dim() })
        .title_top(Line::from(title))
        .title_bottom(Line::from(counters));
    if scroll > 0 {
        block = block
            .title_bottom(Line::styled(format!(" ↑{scroll} (PgDn) "), t.hint()).right_aligned());
    }
    let top = rows.saturating_sub(inner_height + scroll);
    let lines = panel.transcript.visible(top, inner_height);
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

/// Draws the panel area when there is no model at all.
pub fn render_empty(frame: &mut Frame<'_>, area: Rect, app: &App) {
    let t = app.theme;
    let text = Line::styled(
        "No model. Add one with /models add PROVIDER/MODEL.",
        t.warn(),
    );
    frame.render_widget(
        Paragraph::new(text).block(Block::bordered().border_style(t.dim())),
        area,
    );
}
