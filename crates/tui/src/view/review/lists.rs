//! The two small panes beside the diff: the selected model's files (with what is picked from
//! each) and the basket (every pick, from any model, and whether it can be applied: what it
//! composes to, or the conflicts that forbid it).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};

use versus_core::apply::Pick;
use versus_core::review::BasketState;
use versus_core::workspace::changeset::ChangeKind;

use super::super::super::review::{ReviewState, conflict_side as side};
use super::super::super::state::App;
use super::super::super::wrap;

/// Draws the file list of the selected model.
pub fn files(frame: &mut Frame<'_>, area: Rect, app: &App, review: &ReviewState) {
    if area.height < 3 || area.width < 8 {
        return;
    }
    let t = app.theme;
    let label = review.model().map_or("", |m| m.label.as_str());
    let set = review.set();
    let count = set.map_or(0, |s| s.files.len());
    let inner = usize::from(area.height - 2);
    let first = review.file.saturating_sub(inner.saturating_sub(1));
    let lines: Vec<Line<'static>> = match set {
        Some(set) if !set.files.is_empty() => set
            .files
            .iter()
            .enumerate()
            .skip(first)
            .take(inner)
            .map(|(i, f)| {
                let (mark, style) = match review.file_pick(label, f) {
                    Some(true) => ("■", t.ok()),
                    Some(false) => ("◧", t.ok()),
                    None => ("□", t.dim()),
                };
                let kind = match f.kind {
                    ChangeKind::Created => "A",
                    ChangeKind::Modified => "M",
                    ChangeKind::Deleted => "D",
                };
                // A symlink is named as one: `srclink -> src (symlink)`.
                // Names quoted as git quotes them (a newline or a bidi control in a name is
                // shown escaped, never acted on).
                // The row's room for the name: the file's own name stays, its folders give way
                // (cut in the middle, with `…`), then the counts (the table and the diff's
                // title have them).
                let width = usize::from(area.width).saturating_sub(2 + 4);
                let base_name = f.path.rsplit('/').next().unwrap_or(&f.path);
                let mut counts = format!(" +{} -{}", f.added, f.removed);
                if base_name.chars().count() + 1 + counts.chars().count() > width {
                    counts.clear();
                }
                let room = width.saturating_sub(counts.chars().count()).max(4);
                let quoted = versus_core::sanitize::name(&f.path).to_string();
                let path = if f.symlink_label().is_some() {
                    quoted
                } else {
                    wrap::path(&quoted, room)
                };
                let name = match f.symlink_label() {
                    Some(label) => match label.strip_prefix("symlink -> ") {
                        Some(target) => {
                            format!(
                                "{path} -> {} (symlink)",
                                versus_core::sanitize::line(target)
                            )
                        }
                        None => format!("{path} ({})", versus_core::sanitize::line(&label)),
                    },
                    None => path.to_string(),
                };
                let line = Line::from(vec![
                    Span::styled(format!("{mark} "), style),
                    Span::styled(format!("{kind} "), t.dim()),
                    Span::raw(wrap::clip(&name, room)),
                    Span::styled(counts, t.dim()),
                ]);
                if i == review.file {
                    line.style(t.selected())
                } else {
                    line
                }
            })
            .collect(),
        _ => vec![Line::styled("no file changed", t.dim())],
    };
    // The model's name before the count: the count goes first when both do not fit (the
    // table has it).
    // (The title's last space may fall on the corner.)
    let room = usize::from(area.width).saturating_sub(2 + " files · ".chars().count());
    let count = format!(" ({count})");
    let title = if app.shown_label(label).chars().count() + count.len() <= room {
        format!(" files · {}{count} ", app.shown_label(label))
    } else {
        format!(
            " files · {} ",
            app.short_label(label, room.saturating_sub(1).max(1))
        )
    };
    frame.render_widget(
        Paragraph::new(lines).block(
            Block::bordered()
                .border_style(t.dim())
                .title_top(Line::styled(title, t.bold()))
                .title_bottom(Line::styled(" ←/→ ", t.dim())),
        ),
        area,
    );
}

/// Draws the basket.
pub fn basket(frame: &mut Frame<'_>, area: Rect, app: &App, review: &ReviewState) {
    if area.height < 3 || area.width < 8 {
        return;
    }
    let t = app.theme;
    let inner = usize::from(area.width.saturating_sub(2));
    let mut lines: Vec<Line<'static>> = review
        .basket
        .picks()
        .iter()
        .map(|p| {
            if in_conflict(review, p) {
                Line::from(vec![
                    Span::styled("⚠ ", t.error()),
                    Span::raw(pick_text(app, review, p, inner)),
                ])
            } else {
                Line::from(vec![
                    Span::styled("✓ ", t.ok()),
                    Span::raw(pick_text(app, review, p, inner)),
                ])
            }
        })
        .collect();
    for c in &review.comments {
        lines.push(Line::from(vec![
            Span::styled("✎ ", t.hint()),
            Span::raw(format!(
                "{} · {}:{}: {}",
                app.short_label(&c.label, label_room(inner)),
                wrap::path(&c.path, inner.saturating_sub(2).max(4)),
                c.place,
                c.text
            )),
        ]));
    }
    match (&review.decided, &review.basket_state) {
        (Some(d), _) => lines.push(Line::styled(
            if d.chosen.is_empty() {
                "✓ recorded: none of them".to_string()
            } else if d.apply_id.is_some() {
                "✓ applied · /rewind undoes it".to_string()
            } else {
                "✓ chosen (nothing written)".to_string()
            },
            t.ok(),
        )),
        (None, BasketState::Empty) => lines.push(Line::styled(
            "empty: Space hunk · f file · c model",
            t.dim(),
        )),
        (None, BasketState::Ready { summary, .. }) => {
            lines.push(Line::styled(format!("→ {summary} · a applies"), t.ok()));
        }
        (None, BasketState::Conflicts(conflicts)) => {
            for c in conflicts {
                lines.push(Line::styled(
                    format!(
                        "conflict in {}: {} × {}",
                        c.path,
                        side(app, &c.first),
                        side(app, &c.second)
                    ),
                    t.error(),
                ));
            }
        }
        (None, BasketState::Invalid(why)) => {
            lines.push(Line::styled(format!("✗ {why}"), t.error()));
        }
    }
    let title = match &review.basket_state {
        BasketState::Conflicts(c) => format!(" basket · {} conflict(s) ", c.len()),
        _ if !review.comments.is_empty() => {
            format!(" basket · ✎ {} · M/A send ", review.comments.len())
        }
        _ => " basket · a apply · x none ".to_string(),
    };
    let border = match &review.basket_state {
        BasketState::Conflicts(_) => t.error(),
        _ => t.dim(),
    };
    // Every line wrapped under its mark; when the rows outrun the pane, the last one kept says
    // how many more there are (nothing is clipped unseen).
    let height = usize::from(area.height.saturating_sub(2));
    let mut rows: Vec<Line<'static>> = lines.iter().flat_map(|l| wrap::styled(l, inner)).collect();
    if rows.len() > height && height > 0 {
        let more = rows.len() - (height - 1);
        rows.truncate(height - 1);
        rows.push(Line::styled(
            wrap::clip(&format!("{} {more} more row(s)", wrap::ELLIPSIS), inner),
            t.dim(),
        ));
    }
    frame.render_widget(
        Paragraph::new(rows).block(
            Block::bordered()
                .border_style(border)
                .title_top(Line::styled(wrap::clip(&title, inner), t.bold())),
        ),
        area,
    );
}

/// The columns a model's name gets in a pane's line: a row, less the mark and a separator (at
/// least 8); the rest of the line wraps under it.
fn label_room(inner: usize) -> usize {
    inner.saturating_sub(4).max(8)
}

/// Whether a pick is one side of a conflict of the basket.
fn in_conflict(review: &ReviewState, pick: &Pick) -> bool {
    let BasketState::Conflicts(conflicts) = &review.basket_state else {
        return false;
    };
    conflicts.iter().any(|c| {
        [&c.first, &c.second].iter().any(|side| match pick {
            Pick::ChangeSet { model } => side.model == *model,
            Pick::File { model, path } => side.model == *model && c.path == *path,
            Pick::Hunk { model, path, hunk }
            | Pick::Line {
                model, path, hunk, ..
            } => {
                side.model == *model
                    && c.path == *path
                    && side.hunk.as_ref().is_none_or(|h| h == hunk)
            }
        })
    })
}

/// One pick, with the model's shown name and the hunk's number, its name and path cut (with
/// `…`) to fit a pane `inner` columns wide.
fn pick_text(app: &App, review: &ReviewState, pick: &Pick, inner: usize) -> String {
    let name = |model: &str| app.short_label(model, label_room(inner));
    let cut = |path: &str| wrap::path(path, inner.saturating_sub(2).max(4));
    match pick {
        Pick::ChangeSet { model } => format!("{} · every change", name(model)),
        Pick::File { model, path } => format!("{} · {}", name(model), cut(path)),
        Pick::Hunk { model, path, hunk } => {
            let number = review
                .set_of(model)
                .and_then(|s| s.file(path))
                .and_then(|f| f.hunk(hunk))
                .map(|h| h.number.to_string())
                .unwrap_or_else(|| "?".to_string());
            format!("{} · {} hunk {number}", name(model), cut(path))
        }
        Pick::Line {
            model,
            path,
            hunk,
            line,
        } => {
            let place = review
                .set_of(model)
                .and_then(|s| s.file(path))
                .and_then(|f| f.hunk(hunk))
                .and_then(|h| versus_core::review::line_place(h, *line))
                .unwrap_or_else(|| "a line".to_string());
            format!("{} · {} {place}", name(model), cut(path))
        }
    }
}
