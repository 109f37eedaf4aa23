//! A panel's transcript: styled logical lines plus a cache of their wrapped rows for one width.
//!
//! Why a cache keyed by width: a model can produce a hundred thousand lines, and a frame must
//! still draw in a few milliseconds. Logical lines are wrapped once per width into `Row`s
//! (byte ranges, not copies); appending wraps only the new lines, changing a line re-wraps only
//! from that line on (the lines that change — the streaming line, a tool call getting its
//! result — are always near the end). Drawing then asks for the rows of the visible window
//! and gets borrowed slices: no layout work proportional to the transcript's length.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthChar;

/// One logical line: text (no newline, no control characters) with style runs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TLine {
    text: String,
    /// `(start byte, style)`, sorted, the first at 0 when the line is not empty.
    runs: Vec<(u32, Style)>,
    /// Shown only in verbose mode (thinking, full tool arguments, a tool's whole output).
    pub verbose_only: bool,
    /// Shown only outside verbose mode (the tail of a tool's output, which the verbose view
    /// shows whole).
    pub compact_only: bool,
    /// Drawn on one row, cut with `…` where it is wider than the panel (a tail of output stays
    /// as short as it was meant to be).
    pub clip: bool,
}

impl TLine {
    /// An empty line.
    pub fn new() -> TLine {
        TLine::default()
    }

    /// A line of one style.
    pub fn styled(text: &str, style: Style) -> TLine {
        let mut line = TLine::new();
        line.push(text, style);
        line
    }

    /// Marks the line as verbose-only.
    pub fn verbose(mut self) -> TLine {
        self.verbose_only = true;
        self
    }

    /// Marks the line as drawn on one row, cut with `…`.
    pub fn clipped(mut self) -> TLine {
        self.clip = true;
        self
    }

    /// Marks the line as shown only outside verbose mode.
    pub fn compact(mut self) -> TLine {
        self.compact_only = true;
        self
    }

    /// Whether the line is shown in the view `verbose` says.
    pub fn shown(&self, verbose: bool) -> bool {
        if verbose {
            !self.compact_only
        } else {
            !self.verbose_only
        }
    }

    /// Appends text in a style (tabs become four spaces, other control characters are
    /// dropped so the terminal never sees them, and bidi and invisible characters are shown
    /// escaped, `\u{202e}`, by the one sanitiser: [`versus_core::sanitize`]).
    pub fn push(&mut self, text: &str, style: Style) {
        if text.is_empty() {
            return;
        }
        let start = self.text.len();
        let mut prev = self.text.chars().next_back();
        let mut chars = text.chars().peekable();
        while let Some(ch) = chars.next() {
            match ch {
                '\t' => self.text.push_str("    "),
                c if versus_core::sanitize::chars::is_control(c) => {}
                c if versus_core::sanitize::chars::needs_escape(
                    c,
                    prev,
                    chars.peek().copied(),
                    versus_core::sanitize::Layout::Line,
                ) =>
                {
                    let mut escaped = String::new();
                    versus_core::sanitize::chars::push_escaped(&mut escaped, c);
                    self.text.push_str(&escaped);
                }
                c => self.text.push(c),
            }
            prev = Some(ch);
        }
        if self.text.len() == start {
            return;
        }
        match self.runs.last() {
            Some((_, last)) if *last == style => {}
            _ => self
                .runs
                .push((u32::try_from(start).unwrap_or(u32::MAX), style)),
        }
    }

    /// The plain text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The style at byte `at` (for tests and hit checks).
    pub fn style_at(&self, at: usize) -> Style {
        let at = u32::try_from(at).unwrap_or(u32::MAX);
        let k = self.runs.partition_point(|(s, _)| *s <= at);
        k.checked_sub(1)
            .and_then(|k| self.runs.get(k))
            .map(|(_, s)| *s)
            .unwrap_or_default()
    }

    /// The spans of bytes `start..end`, borrowing the text.
    fn spans(&self, start: usize, end: usize) -> Vec<Span<'_>> {
        let mut spans = Vec::new();
        let start32 = u32::try_from(start).unwrap_or(u32::MAX);
        let first = self
            .runs
            .partition_point(|(s, _)| *s <= start32)
            .saturating_sub(1);
        for k in first..self.runs.len() {
            let (rs, style) = self.runs[k];
            let re = self
                .runs
                .get(k + 1)
                .map(|(s, _)| *s as usize)
                .unwrap_or(self.text.len());
            let a = (rs as usize).max(start);
            let b = re.min(end);
            if a >= end {
                break;
            }
            if a < b
                && let Some(slice) = self.text.get(a..b)
            {
                spans.push(Span::styled(slice, style));
            }
        }
        spans
    }
}

/// One wrapped row: a byte range of one logical line.
#[derive(Debug, Clone, Copy)]
struct Row {
    line: u32,
    start: u32,
    end: u32,
    /// The line goes on past this row but is clipped: `…` is drawn after it.
    cut: bool,
}

#[derive(Debug, Default)]
struct WrapCache {
    width: u16,
    verbose: bool,
    rows: Vec<Row>,
    /// First row of each wrapped logical line (`line_row.len()` lines are wrapped).
    line_row: Vec<u32>,
}

/// The lines of a panel and their wrapped rows.
#[derive(Debug, Default)]
pub struct Transcript {
    lines: Vec<TLine>,
    cache: WrapCache,
}

impl Transcript {
    /// An empty transcript.
    pub fn new() -> Transcript {
        Transcript::default()
    }

    /// Number of logical lines.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// Whether there is no line.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// Appends a line and returns its index.
    pub fn push(&mut self, line: TLine) -> usize {
        self.lines.push(line);
        self.lines.len() - 1
    }

    /// The line at `index`.
    pub fn get(&self, index: usize) -> Option<&TLine> {
        self.lines.get(index)
    }

    /// All lines.
    pub fn lines(&self) -> &[TLine] {
        &self.lines
    }

    /// Inserts `lines` before the line at `index` (at the end when past it); rows from it on
    /// are re-wrapped.
    pub fn insert(&mut self, index: usize, lines: Vec<TLine>) {
        let index = index.min(self.lines.len());
        self.lines.splice(index..index, lines);
        self.invalidate_from(index);
    }

    /// Replaces the line at `index` (ignored when out of range); rows from it on are re-wrapped.
    pub fn set(&mut self, index: usize, line: TLine) {
        if let Some(slot) = self.lines.get_mut(index) {
            *slot = line;
            self.invalidate_from(index);
        }
    }

    /// Removes every line from `len` on.
    pub fn truncate(&mut self, len: usize) {
        self.lines.truncate(len);
        self.invalidate_from(len);
    }

    /// Drops every line.
    pub fn clear(&mut self) {
        self.lines.clear();
        self.invalidate_all();
    }

    /// Forgets every wrapped row (the next [`Transcript::ensure`] wraps everything).
    pub fn invalidate_all(&mut self) {
        self.cache.rows.clear();
        self.cache.line_row.clear();
    }

    fn invalidate_from(&mut self, index: usize) {
        if index < self.cache.line_row.len() {
            let row = self.cache.line_row[index] as usize;
            self.cache.rows.truncate(row);
            self.cache.line_row.truncate(index);
        }
    }

    /// Makes the row cache valid for `width` and `verbose`, wrapping only what is missing, and
    /// returns the number of rows.
    pub fn ensure(&mut self, width: u16, verbose: bool) -> usize {
        if self.cache.width != width || self.cache.verbose != verbose {
            self.cache.width = width;
            self.cache.verbose = verbose;
            self.invalidate_all();
        }
        let from = self.cache.line_row.len();
        for (index, line) in self.lines.iter().enumerate().skip(from) {
            let first = u32::try_from(self.cache.rows.len()).unwrap_or(u32::MAX);
            self.cache.line_row.push(first);
            if !line.shown(verbose) {
                continue;
            }
            let line_no = u32::try_from(index).unwrap_or(u32::MAX);
            let rows = &mut self.cache.rows;
            let row = |start: usize, end: usize, cut: bool| Row {
                line: line_no,
                start: u32::try_from(start).unwrap_or(u32::MAX),
                end: u32::try_from(end).unwrap_or(u32::MAX),
                cut,
            };
            if line.clip {
                // The first row of the wrapped line, less one column for the `…`.
                let mut first = None;
                wrap(&line.text, usize::from(width).saturating_sub(1), |s, e| {
                    first.get_or_insert((s, e));
                });
                let (start, end) = first.unwrap_or((0, line.text.len()));
                rows.push(row(start, end, end < line.text.trim_end().len()));
                continue;
            }
            wrap(&line.text, usize::from(width), |start, end| {
                rows.push(row(start, end, false));
            });
        }
        self.cache.rows.len()
    }

    /// Rows wrapped so far (call [`Transcript::ensure`] first).
    pub fn row_count(&self) -> usize {
        self.cache.rows.len()
    }

    /// The rows `top..top + height` as lines ready to draw (borrowing the text).
    pub fn visible(&self, top: usize, height: usize) -> Vec<Line<'_>> {
        let end = top.saturating_add(height).min(self.cache.rows.len());
        let start = top.min(end);
        self.cache.rows[start..end]
            .iter()
            .map(|row| match self.lines.get(row.line as usize) {
                Some(line) => {
                    let mut spans = line.spans(row.start as usize, row.end as usize);
                    if row.cut {
                        let style = spans.last().map(|s| s.style).unwrap_or_default();
                        spans.push(Span::styled("…", style));
                    }
                    Line::from(spans)
                }
                None => Line::default(),
            })
            .collect()
    }
}

/// Word-wraps `text` to `width` columns, calling `out(start, end)` with the byte range of each
/// row. Long words are cut; an empty text is one empty row; a space at a break is dropped.
pub fn wrap(text: &str, width: usize, mut out: impl FnMut(usize, usize)) {
    if width == 0 || text.is_empty() {
        out(0, text.len());
        return;
    }
    let mut start = 0;
    let mut col = 0;
    // (end of the row if we break here, start of the next row, columns used up to that start)
    let mut brk: Option<(usize, usize, usize)> = None;
    for (i, ch) in text.char_indices() {
        let w = ch.width().unwrap_or(0);
        if ch == ' ' {
            if col + w > width {
                out(start, i);
                start = i + 1;
                col = 0;
                brk = None;
                continue;
            }
            col += w;
            brk = Some((i, i + 1, col));
            continue;
        }
        if col + w > width {
            match brk {
                Some((end, next, used)) if end > start => {
                    out(start, end);
                    start = next;
                    col -= used;
                }
                _ => {
                    out(start, i);
                    start = i;
                    col = 0;
                }
            }
            brk = None;
            if col + w > width && i > start {
                out(start, i);
                start = i;
                col = 0;
            }
        }
        col += w;
    }
    out(start, text.len());
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn rows(text: &str, width: usize) -> Vec<&str> {
        let mut out = Vec::new();
        wrap(text, width, |a, b| out.push(&text[a..b]));
        out
    }

    #[test]
    fn wraps_on_words_and_cuts_long_words() {
        assert_eq!(rows("hello big world", 9), ["hello big", "world"]);
        assert_eq!(rows("hello big world", 5), ["hello", "big", "world"]);
        assert_eq!(rows("abcdefghij", 4), ["abcd", "efgh", "ij"]);
        assert_eq!(rows("", 4), [""]);
        assert_eq!(rows("ab cdefgh", 4), ["ab", "cdef", "gh"]);
    }

    #[test]
    fn wide_characters_take_two_columns() {
        assert_eq!(rows("日本語のテキスト", 6), ["日本語", "のテキ", "スト"]);
        assert_eq!(rows("ok 🚀🚀🚀", 5), ["ok", "🚀🚀", "🚀"]);
        assert_eq!(rows("ok 🚀 🚀🚀", 5), ["ok 🚀", "🚀🚀"]);
    }

    #[test]
    fn appends_wrap_incrementally_and_changes_rewrap_from_the_line() {
        let mut t = Transcript::new();
        t.push(TLine::styled("one two three", Style::new()));
        t.push(TLine::styled("four", Style::new()));
        assert_eq!(t.ensure(5, false), 4);
        t.push(TLine::styled("five six", Style::new()));
        assert_eq!(t.ensure(5, false), 6);
        t.set(1, TLine::styled("four four", Style::new()));
        assert_eq!(t.ensure(5, false), 7);
        let text: Vec<String> = t.visible(3, 10).iter().map(|l| l.to_string()).collect();
        assert_eq!(text, ["four", "four", "five", "six"]);
        assert_eq!(t.ensure(100, false), 3);
    }

    #[test]
    fn verbose_only_lines_are_skipped_unless_verbose() {
        let mut t = Transcript::new();
        t.push(TLine::styled("shown", Style::new()));
        t.push(TLine::styled("thinking", Style::new()).verbose());
        assert_eq!(t.ensure(20, false), 1);
        assert_eq!(t.ensure(20, true), 2);
    }

    #[test]
    fn clipped_lines_take_one_row_cut_with_an_ellipsis_and_compact_ones_leave_verbose() {
        let mut t = Transcript::new();
        t.push(TLine::styled("a tail line far too long", Style::new()).clipped());
        t.push(TLine::styled("short", Style::new()).clipped());
        t.push(TLine::styled("tail", Style::new()).compact());
        t.insert(0, vec![TLine::styled("first", Style::new())]);
        assert_eq!(t.ensure(12, false), 4);
        let rows: Vec<String> = t.visible(0, 4).iter().map(|l| l.to_string()).collect();
        assert_eq!(rows, ["first", "a tail line…", "short", "tail"]);
        assert_eq!(
            t.ensure(12, true),
            3,
            "the compact line is left out of verbose"
        );
    }

    #[test]
    fn rows_keep_their_styles_across_runs() {
        let bold = Style::new().add_modifier(ratatui::style::Modifier::BOLD);
        let mut line = TLine::new();
        line.push("plain ", Style::new());
        line.push("strong", bold);
        line.push("\tend", Style::new());
        assert_eq!(line.text(), "plain strong    end");
        assert_eq!(line.style_at(7), bold);
        let mut t = Transcript::new();
        t.push(line);
        t.ensure(9, false);
        let rows = t.visible(0, 5);
        assert_eq!(rows[0].to_string(), "plain");
        assert_eq!(rows[1].spans[0].content, "strong");
        assert_eq!(rows[1].spans[0].style, bold);
        assert_eq!(rows[2].to_string(), "end");
    }
}
