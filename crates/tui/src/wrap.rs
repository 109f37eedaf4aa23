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

/// `line` fitted to `width` columns span by span: whole when it fits, else the span that
/// crosses the edge cut by [`fit`] (so the cut shows as `…`) and the spans after it dropped.
/// For one-row lines built of several styles (the review's check line), which the terminal
/// would otherwise clip mid-word with nothing to say so.
pub fn fit_line(line: Line<'static>, width: usize) -> Line<'static> {
    if line.width() <= width {
        return line;
    }
    let mut used = 0;
    let mut spans = Vec::new();
    for span in line.spans {
        let w = span.content.width();
        if used + w < width {
            used += w;
            spans.push(span);
            continue;
        }
        spans.push(Span::styled(fit(&span.content, width - used), span.style));
        break;
    }
    Line::from(spans).style(line.style)
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

/// The first characters of `text` that fit in `cols` columns.
fn head(text: &str, cols: usize) -> &str {
    let mut used = 0;
    for (at, c) in text.char_indices() {
        let w = c.width().unwrap_or(0);
        if used + w > cols {
            return &text[..at];
        }
        used += w;
    }
    text
}

/// The last characters of `text` that fit in `cols` columns.
fn tail(text: &str, cols: usize) -> &str {
    let mut used = 0;
    for (at, c) in text.char_indices().rev() {
        let w = c.width().unwrap_or(0);
        if used + w > cols {
            return &text[at + c.len_utf8()..];
        }
        used += w;
    }
    text
}

/// `text` in `width` columns: whole when it fits, else its first characters and its last
/// `width - 1 - head_cols` ones around a `…`.
fn cut_at(text: &str, width: usize, head_cols: usize) -> String {
    if text.width() <= width {
        return text.to_string();
    }
    let room = width.saturating_sub(ELLIPSIS.width());
    let head_cols = head_cols.min(room);
    format!(
        "{}{ELLIPSIS}{}",
        head(text, head_cols),
        tail(text, room - head_cols)
    )
}

/// The head's share of a middle cut: a little more than half, so the provider and the start
/// of the model's name stay, and the end (version, size, `#2`) too.
fn head_share(room: usize) -> usize {
    (room * 3 + 2) / 5
}

/// `text` cut in the middle to `width` columns, with `…` where it was cut
/// (`openrouter/ant…sonnet-4.5`): whole when it fits.
pub fn middle(text: &str, width: usize) -> String {
    cut_at(
        text,
        width,
        head_share(width.saturating_sub(ELLIPSIS.width())),
    )
}

/// `text` cut at its end to `width` columns, ending in `…` when cut (a title whose every part
/// matters less than its start).
pub fn clip(text: &str, width: usize) -> String {
    if text.width() <= width {
        return text.to_string();
    }
    format!(
        "{}{ELLIPSIS}",
        head(text, width.saturating_sub(ELLIPSIS.width()))
    )
}

/// The one way model labels are shortened: each of `labels` in `width` columns, cut in the
/// middle with `…` ([`middle`]), and still told apart. When two would read the same, the cut
/// moves (more of the tail, then more of the head) until every label differs; labels that
/// differ only in their middle show the part around their first difference (`…-sonnet-…`).
/// Labels that fit stay whole.
pub fn labels(labels: &[String], width: usize) -> Vec<String> {
    let room = width.saturating_sub(ELLIPSIS.width());
    let share = head_share(room);
    let unique = |cut: &[String]| {
        let mut seen = std::collections::HashSet::new();
        cut.iter().all(|c| seen.insert(c.as_str()))
    };
    // First choice: a head short enough that every tail starts where its label differs from
    // the others (`open…sonnet-4.5`, `open…e-opus-4.1`, not `openrout…et-4.5`).
    let distinct_tail = labels
        .iter()
        .enumerate()
        .map(|(i, label)| {
            let shared = labels
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != i)
                .map(|(_, other)| {
                    label
                        .chars()
                        .zip(other.chars())
                        .take_while(|(a, b)| a == b)
                        .count()
                })
                .max()
                .unwrap_or(0);
            label
                .chars()
                .skip(shared)
                .map(|c| c.width().unwrap_or(0))
                .sum::<usize>()
        })
        .max()
        .unwrap_or(0);
    let preferred = if distinct_tail + room.min(4) <= room {
        (room - distinct_tail).min(share)
    } else {
        share
    };
    let mut heads: Vec<usize> = vec![preferred];
    heads.extend((0..=share).rev().filter(|&h| h != preferred));
    heads.extend(share + 1..=room);
    let mut last = Vec::new();
    for head_cols in heads {
        let cut: Vec<String> = labels.iter().map(|l| cut_at(l, width, head_cols)).collect();
        if unique(&cut) {
            return cut;
        }
        last = cut;
    }
    // No single cut tells them apart: show each colliding label around where it differs.
    let mut out = last;
    for (i, label) in labels.iter().enumerate() {
        let others: Vec<&String> = labels
            .iter()
            .enumerate()
            .filter(|&(j, _)| j != i && out[j] == out[i])
            .map(|(_, l)| l)
            .collect();
        if others.is_empty() {
            continue;
        }
        let differs = others
            .iter()
            .map(|o| {
                label
                    .char_indices()
                    .zip(o.chars())
                    .find(|((_, a), b)| a != b)
                    .map_or(label.len().min(o.len()), |((at, _), _)| at)
            })
            .max()
            .unwrap_or(0);
        let inner = width.saturating_sub(2 * ELLIPSIS.width());
        // Up to half the room before the first difference.
        let start = label[..differs]
            .char_indices()
            .rev()
            .nth(inner / 2)
            .map_or(0, |(at, _)| at);
        out[i] = format!("{ELLIPSIS}{}{ELLIPSIS}", head(&label[start..], inner));
    }
    out
}

/// A file path in `width` columns that keeps the file's name: the folders give way first, cut
/// in the middle (`src/…/deep/pricing.rs`); only a name too long alone is cut itself, in the
/// middle, so its extension stays.
pub fn path(path: &str, width: usize) -> String {
    if path.width() <= width {
        return path.to_string();
    }
    match path.rsplit_once('/') {
        Some((folders, name)) if name.width() + 1 + ELLIPSIS.width() <= width => {
            format!("{}/{name}", middle(folders, width - 1 - name.width()))
        }
        // No room for a folder: `…` says there was one.
        Some((_, name)) if name.width() + ELLIPSIS.width() <= width => format!("{ELLIPSIS}{name}"),
        Some((_, name)) => middle(name, width),
        None => middle(path, width),
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_line_of_several_spans_is_cut_with_an_ellipsis() {
        let line = Line::from(vec![
            Span::raw("  demo/good: `cargo test` passed · "),
            Span::raw("test result: ok. 3 passed"),
            Span::raw("  (t: full output)"),
        ]);
        let cut = fit_line(line.clone(), 50);
        let text: String = cut.spans.iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(text, "  demo/good: `cargo test` passed · test result:…");
        assert!(text.width() <= 50);
        assert_eq!(
            fit_line(line.clone(), 200),
            line,
            "a line that fits is kept whole"
        );
    }
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

    #[test]
    fn labels_cut_in_the_middle_stay_unique() {
        let two = vec![
            "openrouter/anthropic/claude-sonnet-4.5".to_string(),
            "openrouter/anthropic/claude-opus-4.1".to_string(),
        ];
        assert_eq!(middle(&two[0], 25), "openrouter/ant…sonnet-4.5");
        for width in 3..45 {
            let cut = labels(&two, width);
            assert_ne!(cut[0], cut[1], "at {width}: {cut:?}");
            for (c, l) in cut.iter().zip(&two) {
                assert!(c.width() <= width, "{c} at {width}");
                assert_eq!(c.contains('…'), l.width() > width, "{c} at {width}");
            }
        }
        // Same beginning and end, different middle.
        let middles = vec![
            "provider/model-alpha-2025-instruct".to_string(),
            "provider/model-bravo-2025-instruct".to_string(),
            "provider/model-alpha-2025-instruct#2".to_string(),
        ];
        for width in 6..40 {
            let cut = labels(&middles, width);
            let set: std::collections::HashSet<&String> = cut.iter().collect();
            assert_eq!(set.len(), 3, "at {width}: {cut:?}");
            assert!(cut.iter().all(|c| c.width() <= width), "{cut:?}");
        }
        // Short labels stay whole.
        assert_eq!(labels(&["a/b".to_string()], 10), ["a/b"]);
    }

    #[test]
    fn a_path_keeps_its_file_name() {
        let p = "src/some/deeply/nested/folder/pricing_rules.rs";
        assert_eq!(path(p, 80), p);
        let cut = path(p, 30);
        assert!(
            cut.ends_with("/pricing_rules.rs") && cut.contains('…'),
            "{cut}"
        );
        assert_eq!(cut.width(), 30);
        let tiny = path(p, 10);
        assert!(tiny.ends_with(".rs") && tiny.contains('…'), "{tiny}");
        assert_eq!(clip("abcdef", 4), "abc…");
    }
}
