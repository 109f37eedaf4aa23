//! The prompt box: the text being typed (badges for large pastes), who it goes to, and the
//! cursor. During a history search it shows the query and the match instead.

use ratatui::Frame;
use ratatui::layout::{Position, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};

use super::super::complete::model_is;
use super::super::keymap::{self, Context, KeyAction, When};
use super::super::state::{App, Screen};
use super::super::strings;
use super::super::wrap;
use unicode_width::UnicodeWidthStr;

/// Draws the prompt box and places the terminal cursor in it.
pub fn render(frame: &mut Frame<'_>, area: Rect, app: &App) {
    if area.height < 3 || area.width < 3 {
        return;
    }
    let t = app.theme;
    let inner_width = area.width.saturating_sub(2);
    let inner_height = usize::from(area.height.saturating_sub(2));
    if let Some(search) = &app.prompt.search {
        let found = search.found.and_then(|i| app.history.get(i));
        let title = Line::from(vec![
            Span::styled(" history search: ", t.hint()),
            Span::styled(format!("{} ", search.query), t.bold()),
        ]);
        let body = match found {
            Some(text) => Line::raw(text.lines().next().unwrap_or_default()),
            None if search.query.is_empty() => Line::styled("type to search your prompts", t.dim()),
            None => Line::styled("no match", t.warn()),
        };
        let block = Block::bordered().border_style(t.hint()).title_top(title);
        frame.render_widget(Paragraph::new(body).block(block), area);
        return;
    }
    if app.screen == Screen::Review && app.review.is_some() {
        let text = if app.prompt.is_empty() {
            format!(
                "reviewing: {} or {} goes back to the prompt",
                keymap::key_name(Context::Review, KeyAction::ReviewBack),
                keymap::key_name(Context::Review, KeyAction::ReviewClose)
            )
        } else {
            format!(
                "reviewing (your prompt is kept: {}) · {} goes back to it",
                super::super::format::one_line(app.prompt.raw(), 60),
                keymap::key_name(Context::Review, KeyAction::ReviewBack)
            )
        };
        let block = Block::bordered()
            .border_style(t.dim())
            .title_top(Line::styled(" prompt ", t.dim()));
        frame.render_widget(
            Paragraph::new(Line::styled(text, t.dim())).block(block),
            area,
        );
        return;
    }
    let (lines, (cx, cy)) = app.prompt.layout(inner_width, t);
    let top = usize::from(cy).saturating_sub(inner_height.saturating_sub(1));
    let shown: Vec<Line<'static>> = lines.into_iter().skip(top).take(inner_height).collect();
    let title = Line::from(vec![Span::styled(format!(" {} ", addressee(app)), t.dim())]);
    let hint = if app.running() {
        Line::styled(
            format!(
                " models running · {} cancels ",
                keymap::key_name(Context::Prompt, KeyAction::CancelAll)
            ),
            t.dim(),
        )
    } else if app.submitting {
        Line::styled(" starting… ", t.dim())
    } else {
        let keys: Vec<String> = [KeyAction::Send, KeyAction::Newline]
            .into_iter()
            .filter_map(|a| keymap::hint_of(Context::Prompt, a, Some(When::Idle)))
            .collect();
        Line::styled(format!(" {} ", keys.join(" · ")), t.dim())
    };
    let mut block = Block::bordered().border_style(t.text()).title_top(title);
    if area.width >= 60 {
        block = block.title_top(hint.right_aligned());
    }
    if app.prompt.is_empty() && !app.running() {
        let placeholder = placeholder(app, usize::from(area.width.saturating_sub(2)));
        frame.render_widget(
            Paragraph::new(Line::styled(placeholder, t.dim())).block(block),
            area,
        );
    } else {
        frame.render_widget(Paragraph::new(shown).block(block), area);
    }
    if app.overlay.is_none() && app.dialog.is_none() {
        let row = u16::try_from(usize::from(cy) - top).unwrap_or(0);
        frame.set_cursor_position(Position::new(
            area.x + 1 + cx.min(inner_width.saturating_sub(1)),
            area.y + 1 + row,
        ));
    }
}

/// The empty prompt's text within `width` columns: the long form when it fits, else the short
/// one (cut at a word with `…` on a very narrow box), never a word cut in two.
fn placeholder(app: &App, width: usize) -> String {
    let forms: &[&str] = if app.panels.is_empty() {
        &[strings::PROMPT_NO_MODEL]
    } else {
        &[
            strings::PROMPT_PLACEHOLDER,
            strings::PROMPT_PLACEHOLDER_SHORT,
        ]
    };
    let last = forms.last().copied().unwrap_or_default();
    let fits = forms.iter().find(|f| f.width() <= width).copied();
    wrap::fit(fits.unwrap_or(last), width)
}

/// "to: every model" or the models named with `@model`.
fn addressee(app: &App) -> String {
    let named: Vec<&str> = app
        .prompt
        .raw()
        .split_whitespace()
        .filter_map(|w| w.strip_prefix('@'))
        .filter_map(|w| {
            app.roster
                .iter()
                .find(|m| model_is(m, w))
                .map(String::as_str)
        })
        .collect();
    if named.is_empty() {
        "to: every model".to_string()
    } else {
        format!("to: {}", named.join(", "))
    }
}
