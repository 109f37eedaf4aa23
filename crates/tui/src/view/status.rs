//! The status line: the latest message (errors in red), else the key hints of the moment,
//! read from the key table for the context the keyboard is in.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::super::action::RewindPlan;
use super::super::keymap::{self, Context, When};
use super::super::state::{App, Dialog, Screen, Status};
use super::super::wrap::{self, ELLIPSIS};

/// Draws the status line.
pub fn render(frame: &mut Frame<'_>, area: Rect, app: &App) {
    match &app.status {
        Some(status) => message(frame, area, app, status),
        None => frame.render_widget(
            Paragraph::new(hint_spans(app, usize::from(area.width))),
            area,
        ),
    }
}

/// A message (errors in red after `✗`), wrapped at words onto the rows the layout gave it
/// ([`wrap::words`], as the layout counts them); the last row ends with `…` when the message
/// needs more.
fn message(frame: &mut Frame<'_>, area: Rect, app: &App, status: &Status) {
    let t = app.theme;
    let width = usize::from(area.width);
    let rows = wrap::at_most(
        wrap::words(&status.shown(), width),
        usize::from(area.height),
        width,
    );
    let style = if status.error { t.error() } else { t.text() };
    let lines: Vec<Line<'_>> = rows.into_iter().map(|r| Line::styled(r, style)).collect();
    frame.render_widget(Paragraph::new(lines), area);
}

/// The key hints of the moment that fit in `width` columns ([`keymap::fit_hints`]), ending
/// with ` · …` when some were left out (`/help` lists them all).
fn hint_spans(app: &App, width: usize) -> Line<'static> {
    let t = app.theme;
    let (context, when) = hint_context(app);
    let (hints, dropped) = keymap::fit_hints(keymap::hints(context, when), width);
    let mut spans = Vec::new();
    for (i, (key, what)) in hints.into_iter().enumerate() {
        if i > 0 {
            spans.push(Span::styled(keymap::HINT_SEP, t.dim()));
        }
        spans.push(Span::styled(key, t.hint()));
        spans.push(Span::styled(format!(" {what}"), t.dim()));
    }
    if dropped {
        let mark = if spans.is_empty() {
            ""
        } else {
            keymap::HINT_SEP
        };
        spans.push(Span::styled(format!("{mark}{ELLIPSIS}"), t.dim()));
    }
    Line::from(spans)
}

/// The context whose hints the status line shows, and the situation that picks among them:
/// the one that reads the keys (a question, the review, the history search, the completion
/// list, else the prompt: idle, with changes to review, or while models run).
pub fn hint_context(app: &App) -> (Context, Option<When>) {
    if let Some(dialog) = &app.dialog {
        return match dialog {
            Dialog::Apply(_) => (Context::ApplyDialog, None),
            Dialog::Rewind(plan) => (Context::RewindDialog, Some(rewind_when(plan))),
        };
    }
    if app.screen == Screen::Review && app.review.is_some() {
        (Context::Review, None)
    } else if app.prompt.search.is_some() {
        (Context::HistorySearch, None)
    } else if app.completion.is_some() {
        (Context::Completion, None)
    } else if app.running() {
        (Context::Prompt, Some(When::Running))
    } else if app
        .review
        .as_ref()
        .is_some_and(|r| r.sets.iter().any(|s| !s.is_empty()))
    {
        (Context::Prompt, Some(When::ToReview))
    } else {
        (Context::Prompt, Some(When::Idle))
    }
}

/// The rewind question's situation: whether files were edited after the apply (`f` then
/// rewinds them too).
pub fn rewind_when(plan: &RewindPlan) -> When {
    if plan.files.as_ref().is_some_and(|f| !f.edited().is_empty()) {
        When::EditedFiles
    } else {
        When::NoEditedFiles
    }
}
