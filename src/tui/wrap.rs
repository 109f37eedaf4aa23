//! Word wrapping and cutting shared by the components that must know how many rows a text
//! takes before drawing it (the banner and its layout, `/help` and its scrolling, the status
//! message): one rule, so the count and the drawing always agree, and no word is cut in two
//! unless it alone is wider than the row.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// The mark ending a text that was cut short.
pub const ELLIPSIS: &str = "…";

/// `text` broken at spaces into rows of at most `width` columns; a word wider than a row is
/// cut into row-sized pieces. An empty text is one empty row (a paragraph break); a text that
/// fits is kept as it is (its runs of spaces too: aligned columns stay aligned).
pub fn words(text: &str, width: usize) -> Vec<String> {
    hanging(text, width, width)
}

/// [`words`] for a line that may be indented (a list item of `/config`, a row of `/stats`):
/// every row keeps the line's leading spaces and the rows after the first go two further in,
/// so a wrapped item still reads as one item under its heading. A line that fits is kept as
/// it is.
pub fn indented(text: &str, width: usize) -> Vec<String> {
    if text.width() <= width {
        return vec![text.to_string()];
    }
    let body = text.trim_start_matches(' ');
    // Keep at least half the row for the text itself on a narrow screen.
    let indent = (text.len() - body.len()).min(width / 2);
    let more = (indent + 2).min(width / 2);
    let rows = hanging(body, width - indent, width - more);
    rows.into_iter()
        .enumerate()
        .map(|(i, row)| {
            let pad = if i == 0 { indent } else { more };
            format!("{}{row}", " ".repeat(pad))
        })
        .collect()
}

/// A styled line (a question's line: a label span, then its text) broken at spaces into rows
/// of at most `width` columns, each piece keeping its style. The first span of a line of
/// several is its label: the rows after the first go on under the text after it (a hanging
/// indent), or two columns in when the label takes more than half the row. A line that fits
/// is kept as it is; a word wider than a row is cut into row-sized pieces.
pub fn styled(line: &Line<'static>, width: usize) -> Vec<Line<'static>> {
    let width = width.max(1);
    if line.width() <= width {
        return vec![line.clone()];
    }
    let (label, rest) = match line.spans.split_first() {
        Some((label, rest)) if !rest.is_empty() => (Some(label.clone()), rest),
        _ => (None, &line.spans[..]),
    };
    let label_width = label.as_ref().map_or(0, Span::width);
    let indent = if label.is_none() {
        0
    } else if label_width <= width / 2 {
        label_width
    } else {
        2
    };
    // The words of the text, each a run of styled pieces (a word may cross spans).
    let mut words: Vec<Vec<(String, Style)>> = Vec::new();
    let mut word: Vec<(String, Style)> = Vec::new();
    for span in rest {
        for c in span.content.chars() {
            if c == ' ' {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
                continue;
            }
            match word.last_mut() {
                Some((text, style)) if *style == span.style => text.push(c),
                _ => word.push((c.to_string(), span.style)),
            }
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    let mut rows: Vec<Line<'static>> = Vec::new();
    let mut row: Vec<Span<'static>> = label.into_iter().collect();
    let mut used = if row.is_empty() {
        0
    } else {
        label_width.min(width)
    };
    // No word on the row yet (no space before the next one).
    let mut fresh = true;
    // Only the indentation on the row: a piece of a word goes there even when it is too wide,
    // so that no row is left empty.
    let mut bare = row.is_empty();
    let mut next_row = |row: &mut Vec<Span<'static>>, used: &mut usize, fresh: &mut bool| {
        rows.push(Line::from(std::mem::take(row)));
        if indent > 0 {
            row.push(Span::raw(" ".repeat(indent)));
        }
        *used = indent;
        *fresh = true;
    };
    for word in words {
        let word_width: usize = word.iter().map(|(t, _)| t.width()).sum();
        let gap = usize::from(!fresh);
        if !fresh && used + gap + word_width > width {
            next_row(&mut row, &mut used, &mut fresh);
            bare = true;
        }
        if !fresh {
            row.push(Span::raw(" "));
            used += 1;
        }
        for (text, style) in word {
            let mut piece = String::new();
            for c in text.chars() {
                let w = c.width().unwrap_or(0);
                if used + w > width && !bare {
                    if !piece.is_empty() {
                        row.push(Span::styled(std::mem::take(&mut piece), style));
                    }
                    next_row(&mut row, &mut used, &mut fresh);
                }
                piece.push(c);
                used += w;
                bare = false;
            }
            if !piece.is_empty() {
                row.push(Span::styled(piece, style));
            }
        }
        fresh = false;
    }
    if !row.is_empty() {
        rows.push(Line::from(row));
    }
    rows
}

/// [`words`] with a first row of `first` columns and the others of `width` (the text after a
/// key column: its first row starts after the key, the others under it).
pub fn hanging(text: &str, first: usize, width: usize) -> Vec<String> {
    if text.width() <= first {
        return vec![text.to_string()];
    }
    let mut rows = Vec::new();
    let mut row = String::new();
    let limit = |rows: &Vec<String>| if rows.is_empty() { first } else { width }.max(1);
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let needed = if row.is_empty() { 0 } else { 1 } + word.width();
        if !row.is_empty() && row.width() + needed > limit(&rows) {
            rows.push(std::mem::take(&mut row));
        }
        if !row.is_empty() {
            row.push(' ');
        }
        for c in word.chars() {
            if !row.is_empty() && row.width() + c.width().unwrap_or(0) > limit(&rows) {
                rows.push(std::mem::take(&mut row));
            }
            row.push(c);
        }
    }
    if !row.is_empty() || rows.is_empty() {
        rows.push(row);
    }
    rows
}

/// Rows `text` takes wrapped by [`words`] at `width` columns.
pub fn rows(text: &str, width: usize) -> usize {
    words(text, width).len()
}

/// `text` fitted to `width` columns: whole when it fits, else cut after its last word that
/// fits, followed by `…` (cut inside the word only when the first word alone is too wide).
pub fn fit(text: &str, width: usize) -> String {
    if text.width() <= width {
        return text.to_string();
    }
    let room = width.saturating_sub(ELLIPSIS.width());
    let first = words(text, room.max(1))
        .into_iter()
        .next()
        .unwrap_or_default();
    let kept = if first.width() <= room {
        first
    } else {
        String::new()
    };
    format!("{}{ELLIPSIS}", kept.trim_end())
}

/// `rows` cut to at most `max` rows; when some were left out, the last row kept ends with `…`
/// (replacing its last word when the row is full), so the cut shows.
pub fn at_most(mut rows: Vec<String>, max: usize, width: usize) -> Vec<String> {
    if rows.len() <= max {
        return rows;
    }
    rows.truncate(max);
    if let Some(last) = rows.last_mut() {
        *last = ended(last, width);
    }
    rows
}

/// `row` with `…` at its end, within `width` columns (its last words give way if needed).
fn ended(row: &str, width: usize) -> String {
    let marked = format!("{row} {ELLIPSIS}");
    if marked.width() <= width {
        return marked;
    }
    // `fit` always ends with the mark when it cuts; force a cut by asking for one column less.
    let mut out = fit(row, width.saturating_sub(1));
    if !out.ends_with(ELLIPSIS) {
        out.push_str(ELLIPSIS);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_break_at_spaces() {
        assert_eq!(words("aa bb cc", 5), vec!["aa bb", "cc"]);
        assert_eq!(words("", 5), vec![""]);
        assert_eq!(words("abcdefgh", 3), vec!["abc", "def", "gh"]);
    }

    #[test]
    fn indented_lines_keep_their_indent_and_hang_under_it() {
        assert_eq!(
            indented("  demo/good won 3 of 4 turns", 16),
            vec!["  demo/good won", "    3 of 4 turns"]
        );
        assert_eq!(indented("  fits", 16), vec!["  fits"]);
        assert_eq!(
            indented("no indent at all here", 10),
            vec!["no indent", "  at all", "  here"]
        );
        // Narrow: the indent gives way so half the row is text.
        assert_eq!(
            indented("        abcdef ghij", 8),
            vec!["    abcd", "    ef", "    ghij"]
        );
    }

    #[test]
    fn styled_lines_hang_under_their_label_and_keep_styles() {
        let bold = Style::default().add_modifier(ratatui::style::Modifier::BOLD);
        let line = Line::from(vec![
            Span::raw("files   "),
            Span::styled("2 files", bold),
            Span::raw(" (apply 1f3a from "),
            Span::raw("demo/good"),
            Span::raw(")"),
        ]);
        let rows = styled(&line, 24);
        let text: Vec<String> = rows.iter().map(ToString::to_string).collect();
        assert_eq!(
            text,
            vec![
                "files   2 files (apply",
                "        1f3a from",
                "        demo/good)"
            ]
        );
        assert!(rows.iter().all(|r| r.width() <= 24));
        // The styled word kept its style.
        assert!(
            rows[0]
                .spans
                .iter()
                .any(|s| s.content == "2 files" || (s.content == "2" && s.style == bold))
        );
        // A line that fits is kept as it is, runs of spaces too.
        let fits = Line::from(vec![Span::raw("a   b")]);
        assert_eq!(styled(&fits, 10), vec![fits]);
        // No label (one span): plain word wrap; a word longer than a row is cut.
        let long = Line::from(vec![Span::raw("abcdefghij klm")]);
        let text: Vec<String> = styled(&long, 4).iter().map(ToString::to_string).collect();
        assert_eq!(text, vec!["abcd", "efgh", "ij", "klm"]);
        // A label, then a word too long for the rest of its row: cut there, then under it.
        let path = Line::from(vec![
            Span::raw("  restore "),
            Span::raw("src/a/very/long/path.rs"),
        ]);
        let text: Vec<String> = styled(&path, 20).iter().map(ToString::to_string).collect();
        assert_eq!(
            text,
            vec![
                "  restore src/a/very",
                "          /long/path",
                "          .rs"
            ]
        );
    }

    #[test]
    fn fit_cuts_at_a_word() {
        assert_eq!(fit("models, tools, limits", 12), "models,…");
        assert_eq!(fit("short", 12), "short");
        assert_eq!(fit("abcdefghij", 4), "abc…");
    }

    #[test]
    fn at_most_marks_the_cut() {
        let rows = vec!["one two".to_string(), "three".to_string()];
        assert_eq!(at_most(rows.clone(), 1, 10), vec!["one two …"]);
        assert_eq!(at_most(rows.clone(), 1, 8), vec!["one two…"]);
        assert_eq!(at_most(rows.clone(), 1, 7), vec!["one…"]);
        assert_eq!(at_most(rows, 2, 8).len(), 2);
    }
}
