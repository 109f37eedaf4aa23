//! The palette: a handful of styles every component draws with, in one place.
//!
//! A tiny fixed palette (dim, cyan hints, green/red outcomes, yellow warnings) reads well on
//! light and dark terminals alike. `NO_COLOR` keeps the emphasis (bold, dim, reversed) and
//! drops every colour, so nothing depends on colour alone: errors also carry a `✗`.

use ratatui::style::{Color, Modifier, Style};

/// The styles of the interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    /// Whether colours are used at all (false under `NO_COLOR`).
    pub color: bool,
}

impl Theme {
    /// Colours on.
    pub const COLOR: Theme = Theme { color: true };
    /// Colours off (`NO_COLOR`).
    pub const PLAIN: Theme = Theme { color: false };

    /// The theme for this process: plain when `NO_COLOR` is set to anything non-empty.
    pub fn from_env() -> Theme {
        match std::env::var_os("NO_COLOR") {
            Some(v) if !v.is_empty() => Theme::PLAIN,
            _ => Theme::COLOR,
        }
    }

    fn fg(self, color: Color) -> Style {
        if self.color {
            Style::new().fg(color)
        } else {
            Style::new()
        }
    }

    /// Body text.
    pub fn text(self) -> Style {
        Style::new()
    }

    /// Secondary text: separators, hints, thinking.
    pub fn dim(self) -> Style {
        Style::new().add_modifier(Modifier::DIM)
    }

    /// Key names and command names in hints.
    pub fn hint(self) -> Style {
        self.fg(Color::Cyan)
    }

    /// Headings and the focused panel's border.
    pub fn accent(self) -> Style {
        self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
    }

    /// Strong emphasis (`**bold**`).
    pub fn bold(self) -> Style {
        Style::new().add_modifier(Modifier::BOLD)
    }

    /// Code blocks and inline code.
    pub fn code(self) -> Style {
        if self.color {
            Style::new().fg(Color::LightYellow)
        } else {
            Style::new().add_modifier(Modifier::ITALIC)
        }
    }

    /// Something that went well (a tool result, a finished run).
    pub fn ok(self) -> Style {
        self.fg(Color::Green)
    }

    /// Errors: failed tools, provider errors, unknown commands.
    pub fn error(self) -> Style {
        self.fg(Color::Red).add_modifier(Modifier::BOLD)
    }

    /// Warnings: retries, cancelled runs, skipped models.
    pub fn warn(self) -> Style {
        self.fg(Color::Yellow)
    }

    /// A tool call still running.
    pub fn running(self) -> Style {
        self.fg(Color::Blue)
    }

    /// The selected row of a list.
    pub fn selected(self) -> Style {
        Style::new().add_modifier(Modifier::REVERSED)
    }

    /// The text of an added diff line: green with a dark green background, so syntax
    /// colours inside it still read as "added".
    pub fn added_line(self) -> Style {
        if self.color {
            Style::new().fg(Color::Green).bg(Color::Indexed(22))
        } else {
            Style::new()
        }
    }

    /// The text of a removed diff line (see [`Theme::added_line`]).
    pub fn removed_line(self) -> Style {
        if self.color {
            Style::new().fg(Color::Red).bg(Color::Indexed(52))
        } else {
            Style::new()
        }
    }

    /// Syntax colours for code in diffs (none without colours: bold keywords only).
    pub fn syntax(self, token: versus_core::review::Token) -> Style {
        use versus_core::review::Token;
        if !self.color {
            return match token {
                Token::Keyword => Style::new().add_modifier(Modifier::BOLD),
                _ => Style::new(),
            };
        }
        match token {
            Token::Comment => Style::new()
                .fg(Color::DarkGray)
                .add_modifier(Modifier::ITALIC),
            Token::Str => Style::new().fg(Color::Yellow),
            Token::Number => Style::new().fg(Color::Magenta),
            Token::Keyword => Style::new()
                .fg(Color::LightBlue)
                .add_modifier(Modifier::BOLD),
        }
    }

    /// An added line of a diff.
    pub fn added(self) -> Style {
        self.fg(Color::Green)
    }

    /// A removed line of a diff.
    pub fn removed(self) -> Style {
        self.fg(Color::Red)
    }

    /// The words that changed inside an added line.
    pub fn added_word(self) -> Style {
        if self.color {
            Style::new()
                .fg(Color::Black)
                .bg(Color::Green)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::new().add_modifier(Modifier::REVERSED | Modifier::BOLD)
        }
    }

    /// The words that changed inside a removed line.
    pub fn removed_word(self) -> Style {
        if self.color {
            Style::new()
                .fg(Color::Black)
                .bg(Color::Red)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::new().add_modifier(Modifier::REVERSED | Modifier::BOLD)
        }
    }

    /// Text matching the diff search, on rows other than the current match's.
    pub fn search_match(self) -> Style {
        if self.color {
            Style::new().fg(Color::Black).bg(Color::Yellow)
        } else {
            Style::new().add_modifier(Modifier::REVERSED)
        }
    }

    /// Text matching the diff search on the current match's row: stronger than the others,
    /// so `n`/`N` show where they landed.
    pub fn search_current(self) -> Style {
        let strong = Modifier::BOLD | Modifier::UNDERLINED;
        if self.color {
            Style::new()
                .fg(Color::Black)
                .bg(Color::LightYellow)
                .add_modifier(strong)
        } else {
            Style::new().add_modifier(Modifier::REVERSED | strong)
        }
    }

    /// Badges in the prompt box (`[pasted 120 lines]`).
    pub fn badge(self) -> Style {
        if self.color {
            Style::new().fg(Color::Black).bg(Color::Cyan)
        } else {
            Style::new().add_modifier(Modifier::REVERSED)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_theme_has_no_colour_but_keeps_emphasis() {
        let plain = Theme::PLAIN;
        assert_eq!(plain.error().fg, None);
        assert!(plain.error().add_modifier.contains(Modifier::BOLD));
        assert_eq!(Theme::COLOR.error().fg, Some(Color::Red));
    }
}
