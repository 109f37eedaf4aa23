//! Turning file lines into spans a terminal shows faithfully: tabs expanded, a CRLF line's
//! `\r` dropped, every other control, bidi or invisible character shown escaped by the one
//! sanitiser ([`versus_core::sanitize`]: `\0`, `\x1b`, `\u{202e}`, as `versus ask` prints them),
//! word highlights kept on the right characters, and a row cut (and padded) to an exact number
//! of columns.

use std::ops::Range;

use ratatui::style::Style;
use ratatui::text::Span;
use unicode_width::UnicodeWidthChar;

/// Columns a tab takes.
const TAB: &str = "    ";

/// `text` as shown: tabs as spaces, a trailing `\r` dropped, every other control, bidi or
/// invisible character escaped ([`versus_core::sanitize::escape`]).
pub fn clean(text: &str) -> String {
    clean_piece(text, 0, text.len())
}

/// `text[start..end]` as [`clean`] shows it within the whole line `text` (the characters
/// around the piece decide as they do for the whole line, and the line's trailing `\r` is
/// dropped from the piece that ends there).
pub fn clean_piece(text: &str, start: usize, end: usize) -> String {
    let line = text.strip_suffix('\r').unwrap_or(text);
    let end = end.min(line.len());
    if start >= end {
        return String::new();
    }
    versus_core::sanitize::escape_piece(line, start, end).replace('\t', TAB)
}

/// Spans of `text` in `base` style, with syntax tokens (`syntax`: sorted byte ranges and the
/// style patched over `base`) and, above them, the changed words `marks` in `mark` style.
/// Ranges must be on char boundaries; overlapping or stray ones are skipped.
pub fn highlighted_code(
    text: &str,
    marks: &[Range<usize>],
    syntax: &[(Range<usize>, Style)],
    base: Style,
    mark: Style,
) -> Vec<Span<'static>> {
    highlighted_found(text, marks, syntax, base, mark, &[], base)
}

/// [`highlighted_code`] with a top layer: the byte ranges `found` (search matches) in
/// `found_style`, over the changed words and the syntax colours.
pub fn highlighted_found(
    text: &str,
    marks: &[Range<usize>],
    syntax: &[(Range<usize>, Style)],
    base: Style,
    mark: Style,
    found: &[Range<usize>],
    found_style: Style,
) -> Vec<Span<'static>> {
    if syntax.is_empty() && found.is_empty() {
        return highlighted(text, marks, base, mark);
    }
    // Cut points where any layer changes, then one style per piece.
    let mut cuts: Vec<usize> = vec![0, text.len()];
    for r in marks
        .iter()
        .chain(syntax.iter().map(|(r, _)| r))
        .chain(found.iter())
    {
        for at in [r.start, r.end] {
            if at <= text.len() && text.is_char_boundary(at) {
                cuts.push(at);
            }
        }
    }
    cuts.sort_unstable();
    cuts.dedup();
    let mut spans: Vec<Span<'static>> = Vec::with_capacity(cuts.len());
    let mut pending: Option<(usize, usize, Style)> = None;
    for pair in cuts.windows(2) {
        let (start, end) = (pair[0], pair[1]);
        let style = if found.iter().any(|r| r.start <= start && end <= r.end) {
            found_style
        } else if marks.iter().any(|r| r.start <= start && end <= r.end) {
            mark
        } else if let Some((_, s)) = syntax
            .iter()
            .find(|(r, _)| r.start <= start && end <= r.end)
        {
            base.patch(*s)
        } else {
            base
        };
        match pending {
            Some((from, _, s)) if s == style => pending = Some((from, end, s)),
            Some((from, to, s)) => {
                spans.push(Span::styled(clean_piece(text, from, to), s));
                pending = Some((start, end, style));
            }
            None => pending = Some((start, end, style)),
        }
    }
    if let Some((from, to, s)) = pending
        && to > from
    {
        spans.push(Span::styled(clean_piece(text, from, to), s));
    }
    spans
}

/// Byte ranges of `text` where `query` occurs, ignoring case as the diff search does (ASCII
/// case only when lowercasing would change byte lengths), on char boundaries, not
/// overlapping; empty for an empty query.
pub fn find_all(text: &str, query: &str) -> Vec<Range<usize>> {
    if query.is_empty() {
        return Vec::new();
    }
    let (hay, needle) = {
        let (h, n) = (text.to_lowercase(), query.to_lowercase());
        if h.len() == text.len() {
            (h, n)
        } else {
            (text.to_ascii_lowercase(), query.to_ascii_lowercase())
        }
    };
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = hay.get(from..).and_then(|h| h.find(&needle)) {
        let start = from + at;
        let end = start + needle.len();
        if text.is_char_boundary(start) && text.is_char_boundary(end) {
            out.push(start..end);
        }
        from = end.max(start + 1);
        while from < hay.len() && !hay.is_char_boundary(from) {
            from += 1;
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
            spans.push(Span::styled(clean_piece(text, at, start), base));
        }
        if end > start {
            spans.push(Span::styled(clean_piece(text, start, end), mark));
        }
        at = end;
    }
    if at < text.len() {
        spans.push(Span::styled(clean_piece(text, at, text.len()), base));
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
    fn find_all_ignores_case_and_finds_every_occurrence() {
        assert_eq!(find_all("Tax tax TAX", "tax"), vec![0..3, 4..7, 8..11]);
        assert_eq!(find_all("aaa", "aa"), vec![0..2], "no overlaps");
        assert_eq!(
            find_all("é tax", "TAX"),
            vec![3..6],
            "byte offsets past multibyte text"
        );
        assert!(find_all("anything", "").is_empty());
    }

    #[test]
    fn tabs_and_control_characters_are_made_visible() {
        assert_eq!(clean("\tx\u{1b}y\r"), "    x\\x1by");
        assert_eq!(clean("run\0 \u{202e}x\rhid"), "run\\0 \\u{202e}x\\rhid");
        // Pieces of a line (word highlights, search matches) come out as the line does.
        let text = "a\u{1b}[2J\tb\r";
        let joined: String = [(0, 2), (2, 5), (5, text.len())]
            .iter()
            .map(|&(a, b)| clean_piece(text, a, b))
            .collect();
        assert_eq!(joined, clean(text));
    }

    #[test]
    #[allow(clippy::single_range_in_vec_init)]
    fn highlights_keep_their_characters_and_rows_fit_exactly() {
        let marks = vec![5..6];
        let spans = highlighted("if a > b {", &marks, Style::new(), Style::new().bold());
        let keyword = Style::new().italic();
        let code = highlighted_code(
            "if a > b {",
            &marks,
            &[(0..2, keyword)],
            Style::new(),
            Style::new().bold(),
        );
        let texts: Vec<(String, Style)> = code
            .iter()
            .map(|s| (s.content.to_string(), s.style))
            .collect();
        assert_eq!(texts[0], ("if".to_string(), Style::new().patch(keyword)));
        assert!(
            texts
                .iter()
                .any(|(t, st)| t == ">" && *st == Style::new().bold())
        );
        assert_eq!(
            texts.iter().map(|t| t.0.as_str()).collect::<String>(),
            "if a > b {"
        );
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
