//! Overlays over the panel area: `/help` (keys and commands) and titled text (`/config`,
//! `/models`, `/stats`). Arrows and pages scroll a long one; any other key closes them. The
//! keys section of `/help` is the key table, context by context ([`crate::keymap::help_rows`]).
//!
//! The overlay wraps its text itself ([`crate::wrap::hanging`]): a `/help` description goes on under
//! its own column, an indented line of a text overlay keeps its indent ([`crate::wrap::indented`]), and the scrolling and the title's `(a-b of N)` count the rows drawn, so
//! scrolling to the end shows the last row at every size.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};
use unicode_width::UnicodeWidthStr;

use super::super::commands::COMMANDS;
use super::super::keymap::{self, Context};
use super::super::state::{App, Overlay};
use super::super::strings::{
    HELP_CLOSE, HELP_PROMPT_WORDS, HELP_PROMPT_WORDS_TITLE, OVERLAY_ANY_KEY,
};
use super::super::theme::Theme;
use super::super::wrap;

/// The widest an overlay gets.
const WIDTH: u16 = 110;

/// The rows of a `/help` entry: the key (or command) in a column of `pad`, at least one space
/// before the text when the key is longer; the text wraps at words and goes on under the
/// column (a hanging indent), within `inner` columns.
fn row(key: &str, what: &str, pad: usize, inner: usize, t: Theme) -> Vec<Line<'static>> {
    let indent = (2 + pad).min(inner / 2);
    let pad = pad.max(key.width() + 1);
    let head = Span::styled(format!("  {key:<pad$}"), t.hint());
    let first = inner.saturating_sub(head.width());
    let rest = inner.saturating_sub(indent).max(1);
    let under = |text: String| Line::raw(format!("{}{text}", " ".repeat(indent)));
    // A key too long to leave the text a few columns on its row: the text starts below it.
    if first < MIN_TEXT {
        let mut rows = vec![Line::from(head)];
        rows.extend(wrap::words(what, rest).into_iter().map(under));
        return rows;
    }
    let mut texts = wrap::hanging(what, first, rest).into_iter();
    let mut rows = vec![Line::from(vec![
        head,
        Span::raw(texts.next().unwrap_or_default()),
    ])];
    rows.extend(texts.map(under));
    rows
}

/// Fewest columns of text worth starting on a key's row in `/help`.
const MIN_TEXT: usize = 12;

/// A line of text wrapped at words within `inner` columns, each row in `style`.
fn text_rows(text: &str, style: Style, inner: usize) -> Vec<Line<'static>> {
    wrap::words(text, inner)
        .into_iter()
        .map(|r| Line::styled(r, style))
        .collect()
}

/// The names of the commands as `/help` lists them: `/models [add SPEC...]`.
fn command_names() -> Vec<String> {
    COMMANDS
        .iter()
        .map(|c| {
            if c.args.is_empty() {
                format!("/{}", c.name)
            } else {
                format!("/{} {}", c.name, c.args)
            }
        })
        .collect()
}

/// The widest of `keys` plus two, at most `cap`: the column a part of `/help` aligns to.
fn column(keys: impl Iterator<Item = usize>, cap: usize) -> usize {
    keys.max().unwrap_or(0).saturating_add(2).min(cap)
}

/// The rows of `/help` wrapped within `inner` columns.
fn help_rows(inner: usize, t: Theme) -> Vec<Line<'static>> {
    let names = command_names();
    let sections: Vec<(&str, Vec<(String, &str)>)> = Context::ALL
        .iter()
        .map(|&c| (c.title(), keymap::help_rows(c)))
        .collect();
    // Each part aligns its own column, at most two fifths of the width, so a narrow terminal
    // keeps room for the text.
    let cap = inner * 2 / 5;
    let key_pad = column(
        sections
            .iter()
            .flat_map(|(_, rows)| rows.iter().map(|(k, _)| k.width()))
            .chain(HELP_PROMPT_WORDS.iter().map(|(w, _)| w.width())),
        cap,
    );
    let name_pad = column(names.iter().map(|n| n.width()), cap);
    let mut rows = text_rows("Keys", t.accent(), inner);
    for (title, keys) in sections {
        rows.extend(text_rows(title, t.bold(), inner));
        for (key, what) in keys {
            rows.extend(row(&key, what, key_pad, inner, t));
        }
    }
    rows.extend(text_rows(HELP_PROMPT_WORDS_TITLE, t.bold(), inner));
    for (word, what) in HELP_PROMPT_WORDS {
        rows.extend(row(word, what, key_pad, inner, t));
    }
    rows.push(Line::raw(""));
    rows.extend(text_rows("Commands", t.accent(), inner));
    for (c, name) in COMMANDS.iter().zip(&names) {
        rows.extend(row(name, c.help, name_pad, inner, t));
    }
    rows
}

/// The overlay's title and its rows wrapped within `inner` columns.
fn content(overlay: &Overlay, inner: usize, t: Theme) -> (String, Vec<Line<'static>>) {
    match overlay {
        Overlay::Help => ("help".to_string(), help_rows(inner, t)),
        Overlay::Info { title, lines } => (
            title.clone(),
            lines
                .iter()
                .flat_map(|l| wrap::indented(l, inner))
                .map(Line::raw)
                .collect(),
        ),
    }
}

/// The title of an overlay with `total` rows, `room` of them shown from `scroll`, within
/// `inner` columns: the longest form that fits (the scrolling keys, then the closing note give
/// way before the place `(a-b of N)`).
fn title(name: &str, scroll: usize, room: usize, total: usize, inner: usize) -> String {
    if total <= room {
        return wrap::fit(&format!(" {name} · {OVERLAY_ANY_KEY} "), inner);
    }
    let place = format!("({}-{} of {total})", scroll + 1, (scroll + room).min(total));
    let keys = keymap::hint_line(Context::Overlay, None);
    [
        format!(" {name} · {keys} {place} · {HELP_CLOSE} "),
        format!(" {name} {place} · {HELP_CLOSE} "),
        format!(" {name} {place} "),
    ]
    .into_iter()
    .find(|t| t.width() <= inner)
    .unwrap_or_else(|| wrap::fit(&format!(" {place} "), inner))
}

/// The furthest the open overlay scrolls in `area` (its rows less the rows shown), for the
/// keys that scroll it.
pub fn max_scroll(app: &App, area: Rect) -> usize {
    let Some(overlay) = &app.overlay else {
        return 0;
    };
    let inner = usize::from(area.width.min(WIDTH).saturating_sub(2)).max(1);
    let (_, rows) = content(overlay, inner, app.theme);
    rows.len()
        .saturating_sub(usize::from(area.height.saturating_sub(2)))
}

/// The rows the open text overlay draws in `area` before its logical line `line` (where to
/// scroll to show that line first).
pub fn rows_before(app: &App, area: Rect, line: usize) -> usize {
    let Some(Overlay::Info { lines, .. }) = &app.overlay else {
        return 0;
    };
    let inner = usize::from(area.width.min(WIDTH).saturating_sub(2)).max(1);
    lines
        .iter()
        .take(line)
        .map(|l| wrap::indented(l, inner).len())
        .sum()
}

/// Draws the open overlay, if any.
pub fn render(frame: &mut Frame<'_>, area: Rect, app: &App) {
    let Some(overlay) = &app.overlay else { return };
    if area.height < 3 || area.width < 10 {
        return;
    }
    let t = app.theme;
    let width = area.width.min(WIDTH);
    let inner = usize::from(width.saturating_sub(2)).max(1);
    let (name, rows) = content(overlay, inner, t);
    let room = usize::from(area.height.saturating_sub(2));
    let scroll = app.overlay_scroll.min(rows.len().saturating_sub(room));
    let title = title(&name, scroll, room, rows.len(), inner);
    let rows: Vec<Line<'_>> = rows.into_iter().skip(scroll).take(room).collect();
    let height = u16::try_from(rows.len() + 2)
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
        Paragraph::new(rows).block(Block::bordered().border_style(t.accent()).title_top(title)),
        rect,
    );
}
