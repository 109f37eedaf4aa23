//! The status line: the latest message (errors in red), else the key hints of the moment,
//! read from the key table for the context the keyboard is in.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::super::action::RewindPlan;
use super::super::keymap::{self, Context, When};
use super::super::state::{App, Dialog, Screen};

/// Draws the status line.
pub fn render(frame: &mut Frame<'_>, area: Rect, app: &App) {
    let t = app.theme;
    let line = match &app.status {
        Some(status) if status.error => Line::styled(format!("✗ {}", status.text), t.error()),
        Some(status) => Line::styled(status.text.as_str(), t.text()),
        None => {
            let (context, when) = hint_context(app);
            let mut spans = Vec::new();
            for (i, (key, what)) in keymap::hints(context, when).into_iter().enumerate() {
                if i > 0 {
                    spans.push(Span::styled(" · ", t.dim()));
                }
                spans.push(Span::styled(key, t.hint()));
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
