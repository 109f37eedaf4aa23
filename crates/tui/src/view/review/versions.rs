//! The N-way view (`V`): every model's version of the base lines under one hunk, in columns
//! when the pane is wide enough for each to be readable, else one after another. Columns are
//! headed by the shown names (aliases in blind mode) and say when a model left the region as
//! the base has it, deleted the file, or wrote the same lines as another column.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};

use versus_core::review::VersionColumn;
use versus_core::workspace::changeset::LineKind;

use super::super::super::review::{ReviewState, VersionsView};
use super::super::super::state::App;
use super::super::super::strings::VERSIONS_HINT;
use super::super::super::theme::Theme;
use super::super::super::wrap;
use super::cut::lay;
use super::text::{clean, fit};

/// Narrowest column worth laying side by side; narrower panes stack the versions.
pub const MIN_COLUMN: usize = 24;

/// Draws the N-way view in the diff pane.
pub fn render(
    frame: &mut Frame<'_>,
    area: Rect,
    app: &App,
    review: &ReviewState,
    view: &VersionsView,
) {
    let t = app.theme;
    let title = format!(
        " {} {} · every model's version ({}) ",
        view.path,
        view.region,
        view.columns.len()
    );
    let block = Block::bordered()
        .border_style(t.accent())
        .title_top(Line::styled(title, t.bold()))
        .title_bottom(Line::styled(VERSIONS_HINT, t.dim()));
    let width = usize::from(area.width.saturating_sub(2));
    let height = usize::from(area.height.saturating_sub(2));
    let selected = review.model().map(|m| m.label.as_str());
    let lines = layout(app, &view.columns, selected, width);
    let shown: Vec<Line<'static>> = lines.into_iter().skip(view.scroll).take(height).collect();
    frame.render_widget(Paragraph::new(shown).block(block), area);
}

/// Every screen line of the view at `width` columns (the caller slices the visible ones: a
/// region is a hunk's lines, a few dozen at most).
pub fn layout(
    app: &App,
    columns: &[VersionColumn],
    selected: Option<&str>,
    width: usize,
) -> Vec<Line<'static>> {
    let t = app.theme;
    let n = columns.len().max(1);
    let number_width = columns
        .iter()
        .flat_map(|c| c.lines.iter())
        .map(|l| l.number.to_string().len())
        .max()
        .unwrap_or(1);
    // A column's heading in `width` columns: the names cut by the one rule for labels (in the
    // middle, never two alike), the rest cut at its end with `…`.
    let heading = |c: &VersionColumn, width: usize| -> String {
        let mark = if Some(c.model.as_str()) == selected {
            "▶ "
        } else {
            ""
        };
        let room = width.saturating_sub(mark.chars().count()).max(1);
        let other = c
            .same_as
            .filter(|_| !c.deleted && !c.unchanged)
            .and_then(|j| columns.get(j));
        let (name, state) = if let Some(other) = other {
            // Two names: half the room each, or the other one unnamed when a half would
            // not tell much.
            let half = room.saturating_sub(" · same as ".chars().count()) / 2;
            if half >= 10 {
                (
                    app.short_label(&c.model, half),
                    format!(" · same as {}", app.short_label(&other.model, half)),
                )
            } else {
                let state = " · same as another";
                let name_room = room.saturating_sub(state.chars().count()).max(room.min(12));
                (app.short_label(&c.model, name_room), state.to_string())
            }
        } else {
            let state = if c.deleted {
                " · deleted the file"
            } else if c.unchanged {
                " · unchanged (the base)"
            } else {
                ""
            };
            // The state stays whole while the name has a dozen columns.
            let name_room = room.saturating_sub(state.chars().count()).max(room.min(12));
            (app.short_label(&c.model, name_room), state.to_string())
        };
        wrap::clip(&format!("{mark}{name}{state}"), width)
    };
    // A line wider than its column is cut with the diff's `→` (its number and sign first).
    let body = |c: &VersionColumn, t: Theme, width: usize| -> Vec<Vec<Span<'static>>> {
        c.lines
            .iter()
            .map(|l| {
                let (sign, style) = match (l.kind, c.unchanged) {
                    (LineKind::Added, _) => ("+", t.added_line()),
                    (_, true) => (" ", t.dim()),
                    _ => (" ", t.text()),
                };
                let room = width.saturating_sub(number_width + 2);
                let text = [Span::styled(clean(&l.text), style)];
                let mut spans = vec![
                    Span::styled(format!("{:>number_width$} ", l.number), t.dim()),
                    Span::styled(sign.to_string(), style),
                ];
                spans.extend(lay(&text, room, 0, false, t.dim()).into_iter().flatten());
                spans
            })
            .collect()
    };
    let column_width = width.saturating_sub(n - 1) / n;
    let mut out = Vec::new();
    if column_width >= MIN_COLUMN {
        let bodies: Vec<Vec<Vec<Span<'static>>>> =
            columns.iter().map(|c| body(c, t, column_width)).collect();
        let rows = bodies.iter().map(Vec::len).max().unwrap_or(0);
        let mut head = Vec::new();
        for (k, c) in columns.iter().enumerate() {
            if k > 0 {
                head.push(Span::styled("│", t.dim()));
            }
            head.extend(fit(
                vec![Span::styled(heading(c, column_width), t.bold())],
                column_width,
                t.text(),
            ));
        }
        out.push(Line::from(head));
        for r in 0..rows {
            let mut spans = Vec::new();
            for (k, b) in bodies.iter().enumerate() {
                if k > 0 {
                    spans.push(Span::styled("│", t.dim()));
                }
                let cell = b.get(r).cloned().unwrap_or_default();
                spans.extend(fit(cell, column_width, t.text()));
            }
            out.push(Line::from(spans));
        }
    } else {
        for (k, c) in columns.iter().enumerate() {
            if k > 0 {
                out.push(Line::default());
            }
            out.push(Line::styled(heading(c, width), t.bold()));
            out.extend(
                body(c, t, width)
                    .into_iter()
                    .map(|spans| Line::from(fit(spans, width, t.text()))),
            );
        }
    }
    out
}
