//! Overlays over the panel area: `/help` (keys and commands) and titled text (`/config`,
//! `/models`, `/stats`). Arrows and pages scroll a long one; any other key closes them. The
//! keys section of `/help` is the key table, context by context ([`keymap::help_rows`]).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Wrap};

use super::super::commands::COMMANDS;
use super::super::keymap::{self, Context};
use super::super::state::{App, Overlay};
use super::super::strings::{HELP_CLOSE, HELP_PROMPT_WORDS, HELP_PROMPT_WORDS_TITLE};
use super::super::theme::Theme;

/// The widest an overlay gets.
const WIDTH: u16 = 110;

/// A row of `/help`: the key (or command) in a column of `pad`, at least one space before the
/// text when the key is longer.
fn row<'a>(key: &str, what: &'a str, pad: usize, t: Theme) -> Line<'a> {
    let pad = pad.max(key.chars().count() + 1);
    Line::from(vec![
        Span::styled(format!("  {key:<pad$}"), t.hint()),
        Span::raw(what),
    ])
}

/// Draws the open overlay, if any.
pub fn render(frame: &mut Frame<'_>, area: Rect, app: &App) {
    let Some(overlay) = &app.overlay else { return };
    if area.height < 3 || area.width < 10 {
        return;
    }
    let t = app.theme;
    let (title, lines): (String, Vec<Line<'_>>) = match overlay {
        Overlay::Help => {
            let names: Vec<String> = COMMANDS
                .iter()
                .map(|c| {
                    if c.args.is_empty() {
                        format!("/{}", c.name)
                    } else {
                        format!("/{} {}", c.name, c.args)
                    }
                })
                .collect();
            let sections: Vec<(&str, Vec<(String, &str)>)> = Context::ALL
                .iter()
                .map(|&c| (c.title(), keymap::help_rows(c)))
                .collect();
            // Each part aligns its own column, at most two fifths of the width, so a narrow
            // terminal keeps room for the text.
            let cap = usize::from(area.width.min(WIDTH).saturating_sub(2)) * 2 / 5;
            let key_pad = sections
                .iter()
                .flat_map(|(_, rows)| rows.iter().map(|(k, _)| k.chars().count()))
                .chain(HELP_PROMPT_WORDS.iter().map(|(w, _)| w.chars().count()))
                .max()
                .unwrap_or(0)
                .saturating_add(2)
                .min(cap);
            let name_pad = names
                .iter()
                .map(|n| n.chars().count())
                .max()
                .unwrap_or(0)
                .saturating_add(2)
                .min(cap);
            let mut lines = vec![Line::styled("Keys", t.accent())];
            for (title, rows) in sections {
                lines.push(Line::styled(title, t.bold()));
                for (key, what) in rows {
                    lines.push(row(&key, what, key_pad, t));
                }
            }
            lines.push(Line::styled(HELP_PROMPT_WORDS_TITLE, t.bold()));
            for (word, what) in HELP_PROMPT_WORDS {
                lines.push(row(word, what, key_pad, t));
            }
            lines.push(Line::raw(""));
            lines.push(Line::styled("Commands", t.accent()));
            for (c, name) in COMMANDS.iter().zip(&names) {
                lines.push(row(name, c.help, name_pad, t));
            }
            ("help".to_string(), lines)
        }
        Overlay::Info { title, lines } => (
            title.clone(),
            lines.iter().map(|l| Line::raw(l.as_str())).collect(),
        ),
    };
    let room = usize::from(area.height.saturating_sub(2));
    let longer = lines.len() > room;
    let scroll = app.overlay_scroll.min(lines.len().saturating_sub(room));
    let title = if longer {
        format!(
            " {title} · {} ({}-{} of {}) · {HELP_CLOSE} ",
            keymap::hint_line(Context::Overlay, None),
            scroll + 1,
            (scroll + room).min(lines.len()),
            lines.len()
        )
    } else {
        format!(" {title} · any key closes ")
    };
    let lines: Vec<Line<'_>> = lines.into_iter().skip(scroll).collect();
    let height = u16::try_from(lines.len() + 2)
        .unwrap_or(u16::MAX)
        .min(area.height);
    let width = area.width.min(WIDTH);
    let rect = Rect::new(
        area.x + (area.width - width) / 2,
        area.y + (area.height - height) / 2,
        width,
        height,
    );
    frame.render_widget(Clear, rect);
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(Block::bordered().border_style(t.accent()).title_top(title)),
        rect,
    );
}
