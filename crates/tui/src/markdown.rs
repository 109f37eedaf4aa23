//! Light Markdown for streamed model text, one line at a time.
//!
//! Models answer in Markdown, and text arrives a few characters at a time, so a full parser
//! (which wants the whole document) does not fit. What matters in a narrow panel is handled
//! line by line with one bit of state (inside a code fence or not): fences and code lines,
//! headings, bullets, `**bold**` and `` `code` ``. Markers are only taken as markup when they
//! are closed on the same line, so a half-streamed `**` shows as typed until its pair arrives.

use super::theme::Theme;
use super::transcript::TLine;

/// Styles one raw line of model text. `in_code` is whether a code fence is open before the
/// line; returns the styled line and whether one is open after it.
pub fn render_line(raw: &str, in_code: bool, theme: Theme) -> (TLine, bool) {
    let trimmed = raw.trim_start();
    if trimmed.starts_with("```") {
        let lang = trimmed.trim_start_matches('`').trim();
        let text = if in_code || lang.is_empty() {
            "┄┄┄".to_string()
        } else {
            format!("┄┄┄ {lang}")
        };
        return (TLine::styled(&text, theme.dim()), !in_code);
    }
    if in_code {
        return (TLine::styled(raw, theme.code()), true);
    }
    let hashes = trimmed.chars().take_while(|c| *c == '#').count();
    if (1..=6).contains(&hashes) && trimmed[hashes..].starts_with(' ') {
        let mut line = TLine::new();
        inline(trimmed[hashes..].trim(), theme.accent(), theme, &mut line);
        return (line, false);
    }
    let indent = raw.len() - trimmed.len();
    let mut line = TLine::new();
    let body = match trimmed
        .strip_prefix("- ")
        .or_else(|| trimmed.strip_prefix("* "))
    {
        Some(rest) => {
            line.push(&raw[..indent], theme.text());
            line.push("• ", theme.dim());
            rest
        }
        None => raw,
    };
    inline(body, theme.text(), theme, &mut line);
    (line, false)
}

/// Appends `text` with `**bold**` and `` `code` `` spans (only when closed on the line).
fn inline(text: &str, base: ratatui::style::Style, theme: Theme, out: &mut TLine) {
    let mut rest = text;
    while !rest.is_empty() {
        let bold_at = rest.find("**");
        let code_at = rest.find('`');
        let (at, marker) = match (bold_at, code_at) {
            (Some(b), Some(c)) if c < b => (c, "`"),
            (Some(b), _) => (b, "**"),
            (None, Some(c)) => (c, "`"),
            (None, None) => {
                out.push(rest, base);
                return;
            }
        };
        let after = &rest[at + marker.len()..];
        match after.find(marker) {
            Some(close) if close > 0 => {
                out.push(&rest[..at], base);
                let style = if marker == "**" {
                    base.patch(theme.bold())
                } else {
                    theme.code()
                };
                out.push(&after[..close], style);
                rest = &after[close + marker.len()..];
            }
            _ => {
                out.push(&rest[..at + marker.len()], base);
                rest = after;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::style::Modifier;

    const T: Theme = Theme::COLOR;

    #[test]
    fn bold_and_code_spans_lose_their_markers() {
        let (line, open) = render_line("a **big** `x` b", false, T);
        assert!(!open);
        assert_eq!(line.text(), "a big x b");
        assert!(line.style_at(2).add_modifier.contains(Modifier::BOLD));
        assert_eq!(line.style_at(6), T.code());
        assert_eq!(line.style_at(0), T.text());
    }

    #[test]
    fn unclosed_markers_stay_as_typed() {
        let (line, _) = render_line("a **half", false, T);
        assert_eq!(line.text(), "a **half");
    }

    #[test]
    fn fences_toggle_code_and_headings_and_bullets_are_styled() {
        let (fence, open) = render_line("```rust", false, T);
        assert!(open);
        assert_eq!(fence.text(), "┄┄┄ rust");
        let (code, still) = render_line("let x = **y**;", true, T);
        assert!(still);
        assert_eq!(code.text(), "let x = **y**;");
        assert_eq!(code.style_at(0), T.code());
        let (_, closed) = render_line("```", true, T);
        assert!(!closed);
        let (heading, _) = render_line("## Plan", false, T);
        assert_eq!(heading.text(), "Plan");
        assert_eq!(heading.style_at(0), T.accent());
        let (bullet, _) = render_line("  - item", false, T);
        assert_eq!(bullet.text(), "  • item");
    }
}
