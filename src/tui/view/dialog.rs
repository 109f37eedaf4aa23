//! The questions drawn over everything: which conflicting files to overwrite, skip or mark,
//! and whether to rewind (what it restores, what was edited since, what leaves the
//! conversations).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Wrap};

use crate::apply::{ConflictReason, FileStatus, Resolution, RewindAction};

use super::super::action::RewindPlan;
use super::super::state::{App, ApplyDialog, Dialog};

/// Draws the open dialog, if any.
pub fn render(frame: &mut Frame<'_>, area: Rect, app: &App) {
    let Some(dialog) = &app.dialog else { return };
    if area.height < 5 || area.width < 20 {
        return;
    }
    let (title, lines, keys) = match dialog {
        Dialog::Apply(d) => apply_lines(app, d),
        Dialog::Rewind(plan) => rewind_lines(app, plan),
    };
    let t = app.theme;
    let width = area.width.min(100);
    let inner = usize::from(width.saturating_sub(2)).max(1);
    let rows: usize = lines.iter().map(|l| l.width().div_ceil(inner).max(1)).sum();
    let height = u16::try_from(rows + 2).unwrap_or(u16::MAX).min(area.height);
    let rect = Rect::new(
        area.x + (area.width - width) / 2,
        area.y + (area.height - height) / 2,
        width,
        height,
    );
    frame.render_widget(Clear, rect);
    frame.render_widget(
        Paragraph::new(lines).wrap(Wrap { trim: false }).block(
            Block::bordered()
                .border_style(t.warn())
                .title_top(Line::styled(title, t.bold()))
                .title_bottom(Line::styled(keys, t.hint())),
        ),
        rect,
    );
}

type Drawn = (String, Vec<Line<'static>>, String);

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
        " ↑/↓ file · o overwrite · s skip · m markers · Enter apply · Esc cancel ".to_string(),
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
    let edited = plan.files.as_ref().is_some_and(|f| !f.edited().is_empty());
    let keys = if edited {
        " y rewind (edited files kept) · f rewind them too · n cancel "
    } else {
        " y rewind · n cancel "
    };
    let title = match plan.turn {
        Some(turn) => format!(" rewind turn {turn}? "),
        None => " rewind the last apply? ".to_string(),
    };
    (title, lines, keys.to_string())
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
