//! Turning file lines into spans a terminal shows faithfully: tabs expanded, carriage returns
//! and other control characters made visible or dropped, word highlights kept on the right
//! characters, and a row cut (and padded) to an exact number of columns.

use std::ops::Range;

use ratatui::style::Style;
use ratatui::text::Span;
use unicode_width::UnicodeWidthChar;

/// Columns a tab takes.
const TAB: &str = "    ";

/// `text` as shown: tabs as spaces, a trailing `\r` dropped, other control characters as `·`.
pub fn clean(text: &str) -> String {
    let text = text.strip_suffix('\r').unwrap_or(text);
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\t' => out.push_str(TAB),
            c if c.is_control() => out.push('·'),
            c => out.push(c),
        }
    }
    out
}

/// Spans of `text` in `base` style with the byte ranges `marks` (sorted, on char boundaries)
/// in `mark` style.
pub fn highlighted(
    text: &str,
    marks: &[Range<usize>],
    base: Style,
    mark: Style,
) -> Vec<Span<'static>> {
    let mut spans = Vec::with_capacity(marks.len() * 2 + 1);
    let mut at = 0;
    for range in marks {
        let (start, end) = (range.start.min(text.len()), range.end.min(text.len()));
        if start < at || !text.is_char_boundary(start) || !text.is_char_boundary(end) {
            continue;
        }
        if start > at {
            spans.push(Span::styled(clean(&text[at..start]), base));
        }
        if end > start {
            spans.push(Span::styled(clean(&text[start..end]), mark));
        }
        at = end;
    }
    if at < text.len() {
        spans.push(Span::styled(clean(&text[at..]), base));
    }
    spans
}

/// Cuts `spans` to `width` columns (a wide character that would straddle the edge is left
/// out) and pads with spaces in `pad` style to exactly `width`.
pub fn fit(spans: Vec<Span<'static>>, width: usize, pad: Style) -> Vec<Span<'static>> {
    let mut out = Vec::with_capacity(spans.len() + 1);
    let mut used = 0;
    'spans: for span in spans {
        let mut kept = String::new();
        for c in span.content.chars() {
            let w = c.width().unwrap_or(0);
            if used + w > width {
                if !kept.is_empty() {
                    out.push(Span::styled(kept, span.style));
                }
                break 'spans;
            }
            used += w;
            kept.push(c);
        }
        if !kept.is_empty() {
            out.push(Span::styled(kept, span.style));
        }
    }
    if used < width {
        out.push(Span::styled(" ".repeat(width - used), pad));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tabs_and_control_characters_are_made_visible() {
        assert_eq!(clean("\tx\u{1b}y\r"), "    x·y");
    }

    #[test]
    #[allow(clippy::single_range_in_vec_init)]
    fn highlights_keep_their_characters_and_rows_fit_exactly() {
        let marks = vec![5..6];
        let spans = highlighted("if a > b {", &marks, Style::new(), Style::new().bold());
        let texts: Vec<&str> = spans.iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(texts, ["if a ", ">", " b {"]);
        let fitted = fit(spans, 7, Style::new());
        let text: String = fitted.iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(text, "if a > ");
        let wide = fit(vec![Span::raw("日本語")], 5, Style::new());
        let text: String = wide.iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(text, "日本 ", "the straddling character becomes a space");
        let padded = fit(vec![Span::raw("ab")], 4, Style::new());
        assert_eq!(padded.iter().map(|s| s.width()).sum::<usize>(), 4);
    }
}
