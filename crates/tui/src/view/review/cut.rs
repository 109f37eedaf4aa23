//! Long diff lines: a line's text cut to a window of columns (sideways scroll, `<` / `>`), with
//! `←` / `→` where it goes on past either edge, or broken into screen lines of one width
//! (wrap, `w`). Works on spans already styled, so highlights survive the cut; only the rows on
//! screen are ever cut, so a long file costs no more than a short one.

use ratatui::style::Style;
use ratatui::text::Span;
use unicode_width::UnicodeWidthChar;

/// Shown where a line goes on past the right edge.
pub const MORE_RIGHT: &str = "→";
/// Shown where a line goes on past the left edge (scrolled sideways).
pub const MORE_LEFT: &str = "←";

/// Columns `from..from + width` of `spans`: a wide character cut by either edge becomes
/// spaces, so the result is never wider than `width` (it is shorter when the text ends).
pub fn slice(spans: &[Span<'static>], from: usize, width: usize) -> Vec<Span<'static>> {
    let end = from + width;
    let mut out = Vec::new();
    let mut at = 0;
    for span in spans {
        if at >= end {
            break;
        }
        let mut kept = String::new();
        for c in span.content.chars() {
            let w = c.width().unwrap_or(0);
            let (start, stop) = (at, at + w);
            at = stop;
            if stop <= from {
                continue;
            }
            if start >= end {
                break;
            }
            if start < from || stop > end {
                // Straddles an edge: the part inside as spaces.
                let inside = stop.min(end) - start.max(from);
                kept.push_str(&" ".repeat(inside));
            } else {
                kept.push(c);
            }
        }
        if !kept.is_empty() {
            out.push(Span::styled(kept, span.style));
        }
    }
    out
}

/// Columns `spans` take.
pub fn width_of(spans: &[Span<'static>]) -> usize {
    spans.iter().map(Span::width).sum()
}

/// The screen lines of one line's text in a column `room` wide: the window at `hscroll`
/// with edge marks in `mark` style (one line), or every piece of `room` columns when
/// `wrap` (at least one line, also for empty text).
pub fn lay(
    text: &[Span<'static>],
    room: usize,
    hscroll: usize,
    wrap: bool,
    mark: Style,
) -> Vec<Vec<Span<'static>>> {
    let room = room.max(1);
    let total = width_of(text);
    if wrap {
        let n = total.div_ceil(room).max(1);
        return (0..n).map(|k| slice(text, k * room, room)).collect();
    }
    let left = hscroll > 0 && total > 0;
    let right = total > hscroll + room;
    if !left && !right {
        return vec![slice(text, 0, room)];
    }
    let mut line = Vec::new();
    let mut from = hscroll;
    let mut width = room;
    if left && room > 1 {
        line.push(Span::styled(MORE_LEFT, mark));
        from += 1;
        width -= 1;
    }
    if right && width > 1 {
        width -= 1;
    }
    line.extend(slice(text, from, width));
    if right {
        let used = width_of(&line);
        if used < room - 1 {
            line.push(Span::raw(" ".repeat(room - 1 - used)));
        }
        line.push(Span::styled(MORE_RIGHT, mark));
    }
    vec![line]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(lines: &[Vec<Span<'static>>]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn a_cut_line_says_it_goes_on_and_scrolling_shows_the_rest() {
        let spans = vec![Span::raw("abcdef"), Span::raw("ghijkl")];
        let mark = Style::new();
        assert_eq!(text(&lay(&spans, 20, 0, false, mark)), ["abcdefghijkl"]);
        assert_eq!(text(&lay(&spans, 5, 0, false, mark)), ["abcd→"]);
        assert_eq!(text(&lay(&spans, 5, 4, false, mark)), ["←fgh→"]);
        assert_eq!(text(&lay(&spans, 5, 8, false, mark)), ["←jkl"]);
        assert_eq!(
            text(&lay(&spans, 5, 0, true, mark)),
            ["abcde", "fghij", "kl"]
        );
        assert_eq!(text(&lay(&[], 5, 0, true, mark)), [""]);
    }

    #[test]
    fn wide_characters_cut_by_an_edge_become_spaces() {
        let spans = vec![Span::raw("日本語")];
        assert_eq!(text(&[slice(&spans, 1, 4)]), [" 本 "]);
        assert_eq!(width_of(&slice(&spans, 1, 4)), 4);
    }
}
