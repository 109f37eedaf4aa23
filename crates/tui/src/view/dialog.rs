//! The questions drawn over everything: which conflicting files to overwrite, skip or mark,
//! and whether to rewind (what it restores, what was edited since, what leaves the
//! conversations).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};

use versus_core::apply::merge3::{MARKER_OURS, MARKER_SEP, MARKER_THEIRS};
use versus_core::apply::{ConflictReason, FileStatus, LineSpan, Resolution, RewindAction};

use super::super::action::RewindPlan;
use super::super::keymap::{self, Context, When};
use super::super::state::{App, ApplyDialog, Dialog};
use super::super::strings;
use super::super::wrap;
use super::status::rewind_when;

/// Draws the open dialog, if any.
pub fn render(frame: &mut Frame<'_>, area: Rect, app: &App) {
    let Some(dialog) = &app.dialog else { return };
    if area.height < 5 || area.width < 20 {
        return;
    }
    let (title, lines, keys) = match dialog {
        Dialog::Apply(d) => {
            if let Some(detail) = conflict_detail(app, d, area) {
                return render_apply(frame, area, app, d, detail);
            }
            apply_lines(app, d)
        }
        Dialog::Rewind(plan) => rewind_lines(app, plan),
    };
    let t = app.theme;
    let width = area.width.min(100);
    let inner = usize::from(width.saturating_sub(2)).max(1);
    let lines = wrapped(&lines, inner);
    let height = u16::try_from(lines.len() + 2)
        .unwrap_or(u16::MAX)
        .min(area.height);
    let rect = Rect::new(
        area.x + (area.width - width) / 2,
        area.y + (area.height - height) / 2,
        width,
        height,
    );
    frame.render_widget(Clear, rect);
    frame.render_widget(
        Paragraph::new(lines).block(
            Block::bordered()
                .border_style(t.warn())
                .title_top(Line::styled(title, t.bold()))
                .title_bottom(Line::styled(keys_line(keys, width), t.hint())),
        ),
        rect,
    );
}

/// A question's title, its lines and the context (and situation) whose keys its bottom border
/// shows, fitted to the width it gets ([`keys_line`]).
type Drawn = (String, Vec<Line<'static>>, (Context, Option<When>));

/// The bottom border's keys for a dialog `width` wide: the hints that fit between the corners
/// and a space either side ([`keymap::hint_line_within`]).
fn keys_line((context, when): (Context, Option<When>), width: u16) -> String {
    let room = usize::from(width).saturating_sub(4);
    format!(" {} ", keymap::hint_line_within(context, when, room))
}

/// Rows `lines` take wrapped at `inner` columns.
fn wrapped_rows(lines: &[Line<'static>], inner: usize) -> usize {
    lines.iter().map(|l| wrap::styled(l, inner).len()).sum()
}

/// A question's lines broken into the rows drawn, each under its label ([`wrap::styled`]):
/// drawn as they are, so the rows counted are the rows shown.
fn wrapped(lines: &[Line<'static>], inner: usize) -> Vec<Line<'static>> {
    lines.iter().flat_map(|l| wrap::styled(l, inner)).collect()
}

/// The widest the apply question grows: wide enough for two texts side by side.
const APPLY_MAX_WIDTH: u16 = 140;
/// From this inner width on, the two sides of a region stand side by side; narrower, one
/// above the other, so neither is cut to a sliver.
const SIDE_BY_SIDE_MIN: usize = 70;

/// The apply question with the selected file's conflict detail under the file list: the
/// dialog takes the whole area (the texts need the room), the list keeps at most half of it,
/// and the detail scrolls (PgUp/PgDn) below a rule naming the file.
fn render_apply(
    frame: &mut Frame<'_>,
    area: Rect,
    app: &App,
    d: &ApplyDialog,
    detail: Vec<Line<'static>>,
) {
    let t = app.theme;
    let (title, lines, keys) = apply_lines(app, d);
    let width = area.width.min(APPLY_MAX_WIDTH);
    let inner_w = usize::from(width.saturating_sub(2)).max(1);
    let list_rows = wrapped_rows(&lines, inner_w);
    let wanted = list_rows + detail.len() + 2;
    let height = u16::try_from(wanted).unwrap_or(u16::MAX).min(area.height);
    let rect = Rect::new(
        area.x + (area.width - width) / 2,
        area.y + (area.height - height) / 2,
        width,
        height,
    );
    frame.render_widget(Clear, rect);
    let inner = Block::bordered().inner(rect);
    // The list keeps what it needs up to a third of the room (the texts matter more); the
    // selected file's line is kept in view by scrolling the list so that it ends last.
    let list_h = u16::try_from(list_rows)
        .unwrap_or(u16::MAX)
        .min((inner.height / 3).max(3));
    let selected_row = selected_list_row(d, &lines, inner_w);
    let list_scroll = selected_row.saturating_sub(usize::from(list_h).saturating_sub(1));
    frame.render_widget(
        Paragraph::new(wrapped(&lines, inner_w))
            .scroll((u16::try_from(list_scroll).unwrap_or(u16::MAX), 0)),
        Rect::new(inner.x, inner.y, inner.width, list_h),
    );
    let rest = inner.height.saturating_sub(list_h);
    let detail_rect = Rect::new(inner.x, inner.y + list_h, inner.width, rest);
    let more = rest > 0 && render_detail(frame, detail_rect, detail, d.scroll);
    // The "more below" badge sits in the bottom border, right of the keys (which make room for
    // it), so it covers no text.
    let badge = more.then(|| Line::styled(strings::CONFLICT_MORE, t.badge()));
    let badge_width = badge.as_ref().map_or(0, |b| b.width() + 1);
    let keys_width = width.saturating_sub(u16::try_from(badge_width).unwrap_or(u16::MAX));
    let mut block = Block::bordered()
        .border_style(t.warn())
        .title_top(Line::styled(title, t.bold()))
        .title_bottom(Line::styled(keys_line(keys, keys_width), t.hint()));
    if let Some(badge) = badge {
        block = block.title_bottom(badge.right_aligned());
    }
    frame.render_widget(block, rect);
}

/// Draws the conflict detail scrolled by `scroll` (no further than its end) in `area`;
/// whether more of it is below.
fn render_detail(
    frame: &mut Frame<'_>,
    area: Rect,
    detail: Vec<Line<'static>>,
    scroll: usize,
) -> bool {
    let max_scroll = detail.len().saturating_sub(usize::from(area.height));
    let scroll = scroll.min(max_scroll);
    frame.render_widget(
        Paragraph::new(detail).scroll((u16::try_from(scroll).unwrap_or(u16::MAX), 0)),
        area,
    );
    scroll < max_scroll
}

/// The row (wrapped) of the selected conflicting file in the apply question's list.
fn selected_list_row(d: &ApplyDialog, lines: &[Line<'static>], inner: usize) -> usize {
    let conflicts = d.preview.conflicts();
    let Some(path) = conflicts.get(d.selected) else {
        return 0;
    };
    let Some(index) = d.preview.files.iter().position(|f| &f.path == path) else {
        return 0;
    };
    // Two lines (the explanation and a blank) come before the files; the last row of the
    // selected file's (possibly wrapped) line.
    wrapped_rows(&lines[..(index + 3).min(lines.len())], inner).saturating_sub(1)
}

/// The detail of the selected conflicting file: a rule naming it, then per region both
/// texts (side by side when wide, else one above the other) and what each answer writes
/// there. `None` when no conflicting file is selected.
fn conflict_detail(app: &App, d: &ApplyDialog, area: Rect) -> Option<Vec<Line<'static>>> {
    let t = app.theme;
    let conflicts = d.preview.conflicts();
    let path = conflicts.get(d.selected)?;
    let file = d.preview.files.iter().find(|f| &f.path == path)?;
    let FileStatus::Conflict { reason, .. } = &file.status else {
        return None;
    };
    let inner = usize::from(area.width.min(APPLY_MAX_WIDTH).saturating_sub(2)).max(1);
    let mut out = vec![Line::styled(
        rule(&format!(" {} ", file.path), inner),
        t.accent(),
    )];
    if file.texts.is_empty() {
        out.extend(
            words(strings::conflict_whole(*reason), inner)
                .into_iter()
                .map(|l| Line::styled(l, t.text())),
        );
        return Some(out);
    }
    let count = file.texts.len();
    for (i, text) in file.texts.iter().enumerate() {
        let r = &text.region;
        out.push(Line::styled(
            format!(
                "region {}/{count} · yours {} · model {}",
                i + 1,
                span(r.ours),
                span(r.theirs)
            ),
            t.bold(),
        ));
        if inner >= SIDE_BY_SIDE_MIN {
            let half = (inner - 3) / 2;
            out.push(Line::from(vec![
                Span::styled(pad(strings::CONFLICT_YOURS, half), t.removed()),
                Span::styled(" │ ", t.dim()),
                Span::styled(strings::CONFLICT_MODEL, t.added()),
            ]));
            for row in 0..text.ours.len().max(text.theirs.len()) {
                let left = text.ours.get(row).map_or("", String::as_str);
                let right = text.theirs.get(row).map_or("", String::as_str);
                out.push(Line::from(vec![
                    Span::styled(pad(left, half), t.text()),
                    Span::styled(" │ ", t.dim()),
                    Span::styled(cut(right, half), t.text()),
                ]));
            }
        } else {
            for (label, style, body) in [
                (strings::CONFLICT_YOURS, t.removed(), &text.ours),
                (strings::CONFLICT_MODEL, t.added(), &text.theirs),
            ] {
                out.push(Line::styled(format!("{label}:"), style));
                out.extend(
                    body.iter()
                        .map(|l| Line::styled(format!("  {}", cut(l, inner - 2)), t.text())),
                );
            }
        }
        out.push(Line::styled(strings::CONFLICT_WRITES, t.dim()));
        let markers: Vec<String> = std::iter::once(MARKER_OURS.to_string())
            .chain(text.ours.iter().cloned())
            .chain(std::iter::once(MARKER_SEP.to_string()))
            .chain(text.theirs.iter().cloned())
            .chain(std::iter::once(MARKER_THEIRS.to_string()))
            .collect();
        let markers_ok = matches!(
            file.status,
            FileStatus::Conflict {
                markers_available: true,
                ..
            }
        );
        let answers: [(&str, &[String]); 3] = [
            (strings::CONFLICT_ANSWERS[0], &text.theirs),
            (strings::CONFLICT_ANSWERS[1], &text.ours),
            (
                strings::CONFLICT_ANSWERS[2],
                if markers_ok { &markers } else { &[] },
            ),
        ];
        let label_w = strings::CONFLICT_ANSWERS[0].chars().count() + 3;
        for (label, body) in answers {
            let chosen = d.resolutions.get(&file.path).is_some_and(|r| {
                matches!(
                    (r, label.chars().next()),
                    (Resolution::Overwrite, Some('o'))
                        | (Resolution::Skip, Some('s'))
                        | (Resolution::Markers, Some('m'))
                )
            });
            let head = if chosen { t.bold() } else { t.dim() };
            if body.is_empty() {
                out.push(Line::from(vec![
                    Span::styled(format!("{label} │ "), head),
                    Span::styled("(no lines)", t.dim()),
                ]));
            }
            for (k, l) in body.iter().enumerate() {
                let lead = if k == 0 {
                    format!("{label} │ ")
                } else {
                    format!("{:w$}│ ", "", w = label_w - 2)
                };
                out.push(Line::from(vec![
                    Span::styled(lead, head),
                    Span::styled(cut(l, inner.saturating_sub(label_w)), t.text()),
                ]));
            }
        }
    }
    // After the texts: on a small screen the texts come first, this note is a PgDn away.
    out.extend(
        words(
            &strings::conflict_overwrite_note(file.added, file.removed),
            inner,
        )
        .into_iter()
        .map(|l| Line::styled(l, t.dim())),
    );
    Some(out)
}

/// "line 5" / "lines 5-7" / "nothing (before line 5)" for a region's span in one text.
fn span(s: LineSpan) -> String {
    match s.len {
        0 => format!("nothing (before line {})", s.start),
        1 => format!("line {}", s.start),
        n => format!("lines {}-{}", s.start, s.start + n - 1),
    }
}

/// `text` broken at spaces into lines of at most `width` characters (a longer word is cut),
/// so the detail can count its own rows for scrolling.
fn words(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let (n, w) = (line.chars().count(), word.chars().count());
        if n > 0 && n + 1 + w > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines.into_iter().map(|l| cut(&l, width)).collect()
}

/// `text` cut to `width` columns (characters; tabs shown as spaces) with `…` when cut.
fn cut(text: &str, width: usize) -> String {
    let text = text.replace('\t', "    ");
    if text.chars().count() <= width {
        return text;
    }
    let mut out: String = text.chars().take(width.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// `text` cut, then padded with spaces to exactly `width` columns.
fn pad(text: &str, width: usize) -> String {
    let c = cut(text, width);
    let n = c.chars().count();
    format!("{c}{}", " ".repeat(width.saturating_sub(n)))
}

/// A horizontal rule `width` wide with `label` near its start.
fn rule(label: &str, width: usize) -> String {
    let label = cut(label, width.saturating_sub(2));
    let used = 2 + label.chars().count();
    format!("──{label}{}", "─".repeat(width.saturating_sub(used)))
}

fn apply_lines(app: &App, d: &ApplyDialog) -> Drawn {
    let t = app.theme;
    let conflicts = d.preview.conflicts();
    let selected = conflicts.get(d.selected).copied();
    let mut lines = vec![Line::styled(
        "You changed these files since the run started. Clean files are written, your edits \
         are merged where they do not overlap; for each conflicting file choose what to do \
         (a file left unanswered is not written):",
        t.text(),
    )];
    lines.push(Line::raw(""));
    for f in &d.preview.files {
        let counts = format!(" +{} -{}", f.added, f.removed);
        let line = match &f.status {
            FileStatus::Clean => Line::from(vec![
                Span::styled("  write     ", t.ok()),
                Span::raw(f.path.clone()),
                Span::styled(counts, t.dim()),
            ]),
            FileStatus::Merged => Line::from(vec![
                Span::styled("  merge     ", t.ok()),
                Span::raw(f.path.clone()),
                Span::styled(format!("{counts} (your edits kept)"), t.dim()),
            ]),
            FileStatus::AlreadyApplied => Line::from(vec![
                Span::styled("  same      ", t.dim()),
                Span::raw(f.path.clone()),
                Span::styled(" (already as proposed)", t.dim()),
            ]),
            FileStatus::Refused { why } => Line::from(vec![
                Span::styled("  refused   ", t.warn()),
                Span::raw(f.path.clone()),
                Span::styled(format!(" ({why})"), t.dim()),
            ]),
            FileStatus::Conflict {
                reason, regions, ..
            } => {
                let why = match reason {
                    ConflictReason::Lines => {
                        let spans: Vec<String> = regions
                            .iter()
                            .map(|r| match r.ours.len {
                                0 | 1 => format!("line {}", r.ours.start),
                                n => format!("lines {}-{}", r.ours.start, r.ours.start + n - 1),
                            })
                            .take(3)
                            .collect();
                        format!("same lines changed ({})", spans.join(", "))
                    }
                    ConflictReason::Binary => "binary file changed on both sides".to_string(),
                    ConflictReason::DeletedByYou => "you deleted it".to_string(),
                    ConflictReason::DeletedByModel => {
                        "the model deletes it, you changed it".to_string()
                    }
                };
                let choice = match d.resolutions.get(&f.path) {
                    Some(Resolution::Overwrite) => ("overwrite", t.warn()),
                    Some(Resolution::Skip) => ("skip", t.text()),
                    Some(Resolution::Markers) => ("markers", t.warn()),
                    None => ("not written", t.dim()),
                };
                let here = selected == Some(f.path.as_str());
                let line = Line::from(vec![
                    Span::styled(if here { "▸ " } else { "  " }, t.accent()),
                    Span::styled("⚠ conflict ", t.error()),
                    Span::raw(f.path.clone()),
                    Span::styled(format!(": {why} → "), t.dim()),
                    Span::styled(choice.0, choice.1),
                ]);
                if here { line.style(t.bold()) } else { line }
            }
        };
        lines.push(line);
    }
    (
        format!(" apply · {} conflicting file(s) ", conflicts.len()),
        lines,
        (Context::ApplyDialog, None),
    )
}

fn rewind_lines(app: &App, plan: &RewindPlan) -> Drawn {
    let t = app.theme;
    let mut lines = Vec::new();
    if let Some(prompt) = &plan.prompt {
        lines.push(Line::from(vec![
            Span::styled("prompt  ", t.dim()),
            Span::raw(super::super::format::one_line(prompt, 120)),
        ]));
    }
    match &plan.files {
        Some(files) => {
            lines.push(Line::from(vec![
                Span::styled("files   ", t.dim()),
                Span::styled(files.summary(), t.bold()),
                Span::styled(
                    format!(
                        " (apply {} from {})",
                        files.apply_id,
                        names(app, &files.models)
                    ),
                    t.dim(),
                ),
            ]));
            for f in &files.files {
                let action = match f.action {
                    RewindAction::Restore => "restore ",
                    RewindAction::Recreate => "recreate",
                    RewindAction::Remove => "remove  ",
                };
                let mut spans = vec![
                    Span::styled(format!("  {action} "), t.text()),
                    Span::raw(f.path.clone()),
                    Span::styled(format!(" +{} -{}", f.added, f.removed), t.dim()),
                ];
                if f.edited_after_apply {
                    spans.push(Span::styled(
                        " ⚠ edited after the apply: kept unless you press f",
                        t.warn(),
                    ));
                }
                lines.push(Line::from(spans));
            }
        }
        None => {
            if plan.scope.files() {
                let note = plan
                    .files_note
                    .clone()
                    .unwrap_or_else(|| "nothing was applied in that turn".to_string());
                lines.push(Line::from(vec![
                    Span::styled("files   ", t.dim()),
                    Span::styled(note, t.dim()),
                ]));
            }
        }
    }
    if plan.scope.conversation() {
        lines.push(Line::from(vec![
            Span::styled("models  ", t.dim()),
            Span::raw(
                "the turn leaves every model's conversation; its prompt comes back to the box",
            ),
        ]));
    } else {
        lines.push(Line::from(vec![
            Span::styled("models  ", t.dim()),
            Span::raw("conversations are kept; the next prompt tells the models"),
        ]));
    }
    let keys = (Context::RewindDialog, Some(rewind_when(plan)));
    let title = match plan.turn {
        Some(turn) => format!(" rewind turn {turn}? "),
        None => " rewind the last apply? ".to_string(),
    };
    (title, lines, keys)
}

fn names(app: &App, labels: &[String]) -> String {
    if labels.is_empty() {
        return "no model".to_string();
    }
    labels
        .iter()
        .map(|l| app.shown_label(l))
        .collect::<Vec<_>>()
        .join(", ")
}
