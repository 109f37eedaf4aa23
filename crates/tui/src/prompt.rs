//! The prompt box: a small multi-line editor with history, reverse search and paste badges.
//!
//! Large pastes are kept out of the editable text: each becomes one private-use character
//! (U+E000 + n) that the box draws as a badge (`[pasted 120 lines]`) and that moves, deletes
//! and undoes as a single character; the real text is put back when the prompt is sent. So a
//! 5,000-line paste cannot be half-deleted by accident, and editing around it stays cheap.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthChar;

use super::theme::Theme;

/// Pastes with more lines (or characters) than this become a badge.
pub const BADGE_MIN_LINES: usize = 6;
/// See [`BADGE_MIN_LINES`].
pub const BADGE_MIN_CHARS: usize = 800;
const PASTE_BASE: u32 = 0xE000;
const PASTE_LIMIT: u32 = 0x1800;

/// A reverse search over the history (Ctrl+R).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Search {
    /// What the user typed.
    pub query: String,
    /// Index into the history of the current match.
    pub found: Option<usize>,
}

/// The editor's state.
#[derive(Debug, Clone, Default)]
pub struct PromptBox {
    text: String,
    cursor: usize,
    pastes: Vec<String>,
    history_pos: Option<usize>,
    draft: String,
    /// The reverse search in progress, if any.
    pub search: Option<Search>,
}

fn paste_index(c: char) -> Option<usize> {
    let code = c as u32;
    (PASTE_BASE..PASTE_BASE + PASTE_LIMIT)
        .contains(&code)
        .then(|| (code - PASTE_BASE) as usize)
}

impl PromptBox {
    /// An empty box.
    pub fn new() -> PromptBox {
        PromptBox::default()
    }

    /// The text as typed (badges are single placeholder characters).
    pub fn raw(&self) -> &str {
        &self.text
    }

    /// The cursor's byte offset in [`PromptBox::raw`].
    pub fn cursor(&self) -> usize {
        self.cursor
    }

    /// Whether nothing is typed.
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// The text with every paste put back.
    pub fn expanded(&self) -> String {
        let mut out = String::with_capacity(self.text.len());
        for c in self.text.chars() {
            match paste_index(c).and_then(|i| self.pastes.get(i)) {
                Some(paste) => out.push_str(paste),
                None => out.push(c),
            }
        }
        out
    }

    /// Replaces the whole text (cursor at the end).
    pub fn set(&mut self, text: &str) {
        self.text = text.chars().filter(|c| paste_index(*c).is_none()).collect();
        self.cursor = self.text.len();
        self.pastes.clear();
    }

    /// Empties the box and leaves history navigation.
    pub fn clear(&mut self) {
        self.set("");
        self.history_pos = None;
        self.draft.clear();
    }

    /// Replaces bytes `start..end` with `with` and puts the cursor after it.
    pub fn replace(&mut self, start: usize, end: usize, with: &str) {
        if start <= end && end <= self.text.len() && self.text.is_char_boundary(start) {
            self.text.replace_range(start..end, with);
            self.cursor = start + with.len();
        }
    }

    /// Inserts typed text at the cursor.
    pub fn insert(&mut self, s: &str) {
        let clean: String = s
            .chars()
            .filter(|c| paste_index(*c).is_none() && (*c == '\n' || !c.is_control()))
            .collect();
        self.text.insert_str(self.cursor, &clean);
        self.cursor += clean.len();
        self.history_pos = None;
    }

    /// Inserts pasted text: inline when short, as a badge when large.
    pub fn paste(&mut self, s: &str) {
        let s = s.replace("\r\n", "\n").replace('\r', "\n");
        let lines = s.lines().count();
        let big = lines >= BADGE_MIN_LINES || s.chars().count() >= BADGE_MIN_CHARS;
        let slot = u32::try_from(self.pastes.len()).unwrap_or(u32::MAX);
        match char::from_u32(PASTE_BASE.saturating_add(slot)) {
            Some(marker) if big && slot < PASTE_LIMIT => {
                self.pastes.push(s);
                self.text.insert(self.cursor, marker);
                self.cursor += marker.len_utf8();
                self.history_pos = None;
            }
            _ => self.insert(&s),
        }
    }

    /// Deletes the character before the cursor.
    pub fn backspace(&mut self) {
        if let Some((at, _)) = self.text[..self.cursor].char_indices().next_back() {
            self.text.replace_range(at..self.cursor, "");
            self.cursor = at;
        }
    }

    /// Deletes the character under the cursor.
    pub fn delete(&mut self) {
        if let Some(c) = self.text[self.cursor..].chars().next() {
            self.text
                .replace_range(self.cursor..self.cursor + c.len_utf8(), "");
        }
    }

    /// Deletes the word before the cursor (Ctrl+W).
    pub fn delete_word(&mut self) {
        let before = &self.text[..self.cursor];
        let trimmed = before.trim_end_matches(' ');
        let start = trimmed.rfind([' ', '\n']).map(|i| i + 1).unwrap_or(0);
        self.text.replace_range(start..self.cursor, "");
        self.cursor = start;
    }

    /// Moves one character left.
    pub fn left(&mut self) {
        if let Some((at, _)) = self.text[..self.cursor].char_indices().next_back() {
            self.cursor = at;
        }
    }

    /// Moves one character right.
    pub fn right(&mut self) {
        if let Some(c) = self.text[self.cursor..].chars().next() {
            self.cursor += c.len_utf8();
        }
    }

    fn line_start(&self) -> usize {
        self.text[..self.cursor]
            .rfind('\n')
            .map(|i| i + 1)
            .unwrap_or(0)
    }

    fn line_end(&self) -> usize {
        self.text[self.cursor..]
            .find('\n')
            .map(|i| self.cursor + i)
            .unwrap_or(self.text.len())
    }

    /// Start of the current line.
    pub fn home(&mut self) {
        self.cursor = self.line_start();
    }

    /// End of the current line.
    pub fn end(&mut self) {
        self.cursor = self.line_end();
    }

    /// Moves up a line; false when already on the first line (the caller goes to history).
    pub fn up(&mut self) -> bool {
        let start = self.line_start();
        if start == 0 {
            return false;
        }
        let column = self.text[start..self.cursor].chars().count();
        let prev_start = self.text[..start - 1]
            .rfind('\n')
            .map(|i| i + 1)
            .unwrap_or(0);
        self.cursor = advance(&self.text, prev_start, start - 1, column);
        true
    }

    /// Moves down a line; false when already on the last line.
    pub fn down(&mut self) -> bool {
        let end = self.line_end();
        if end == self.text.len() {
            return false;
        }
        let column = self.text[self.line_start()..self.cursor].chars().count();
        let next_start = end + 1;
        let next_end = self.text[next_start..]
            .find('\n')
            .map(|i| next_start + i)
            .unwrap_or(self.text.len());
        self.cursor = advance(&self.text, next_start, next_end, column);
        true
    }

    /// Shows the previous history entry (Up on the first line).
    pub fn history_back(&mut self, history: &[String]) {
        if history.is_empty() {
            return;
        }
        let pos = match self.history_pos {
            None => {
                self.draft = self.text.clone();
                history.len() - 1
            }
            Some(0) => 0,
            Some(p) => p - 1,
        };
        self.history_pos = Some(pos);
        self.show(&history[pos]);
    }

    /// Shows the next history entry, or the draft past the newest (Down on the last line).
    pub fn history_forward(&mut self, history: &[String]) {
        let Some(pos) = self.history_pos else { return };
        if pos + 1 < history.len() {
            self.history_pos = Some(pos + 1);
            self.show(&history[pos + 1]);
        } else {
            self.history_pos = None;
            let draft = std::mem::take(&mut self.draft);
            self.show(&draft);
        }
    }

    fn show(&mut self, text: &str) {
        self.text = text.to_string();
        self.cursor = self.text.len();
    }

    /// Starts a reverse search, or looks further back for the same query.
    pub fn search_back(&mut self, history: &[String]) {
        match &mut self.search {
            None => {
                self.search = Some(Search::default());
            }
            Some(search) => {
                let before = search.found.unwrap_or(history.len());
                search.found = find_back(history, &search.query, before).or(search.found);
            }
        }
    }

    /// Types into the search query (the match is the newest entry containing it).
    pub fn search_type(&mut self, history: &[String], edit: impl FnOnce(&mut String)) {
        if let Some(search) = &mut self.search {
            edit(&mut search.query);
            search.found = find_back(history, &search.query, history.len());
        }
    }

    /// Ends the search; `accept` puts the match in the box.
    pub fn search_end(&mut self, history: &[String], accept: bool) {
        if let Some(search) = self.search.take()
            && accept
            && let Some(found) = search.found.and_then(|i| history.get(i))
        {
            self.show(found);
            self.history_pos = None;
        }
    }

    /// The box's content as lines for `width` columns (hard-wrapped, badges whole) and the
    /// cursor's `(column, row)` in them.
    pub fn layout(&self, width: u16, theme: Theme) -> (Vec<Line<'static>>, (u16, u16)) {
        let width = usize::from(width.max(1));
        let mut rows: Vec<Vec<Span<'static>>> = vec![Vec::new()];
        let mut col = 0usize;
        let mut plain = String::new();
        let mut cursor = (0usize, 0usize);
        let flush = |rows: &mut Vec<Vec<Span<'static>>>, plain: &mut String| {
            if !plain.is_empty()
                && let Some(row) = rows.last_mut()
            {
                row.push(Span::styled(std::mem::take(plain), Style::new()));
            }
        };
        for (at, c) in self.text.char_indices() {
            if at == self.cursor {
                cursor = (col, rows.len() - 1);
            }
            if c == '\n' {
                flush(&mut rows, &mut plain);
                rows.push(Vec::new());
                col = 0;
                continue;
            }
            let badge = paste_index(c).map(|i| self.badge(i));
            let w = match &badge {
                Some(b) => b.chars().count(),
                None => c.width().unwrap_or(0),
            };
            if col + w > width && col > 0 {
                flush(&mut rows, &mut plain);
                rows.push(Vec::new());
                col = 0;
                if at == self.cursor {
                    cursor = (0, rows.len() - 1);
                }
            }
            match badge {
                Some(b) => {
                    flush(&mut rows, &mut plain);
                    if let Some(row) = rows.last_mut() {
                        row.push(Span::styled(b, theme.badge()));
                    }
                }
                None => plain.push(c),
            }
            col += w;
        }
        flush(&mut rows, &mut plain);
        if self.cursor >= self.text.len() {
            cursor = (col, rows.len() - 1);
            if col >= width {
                rows.push(Vec::new());
                cursor = (0, rows.len() - 1);
            }
        }
        let lines = rows.into_iter().map(Line::from).collect();
        (
            lines,
            (
                u16::try_from(cursor.0).unwrap_or(u16::MAX),
                u16::try_from(cursor.1).unwrap_or(u16::MAX),
            ),
        )
    }

    fn badge(&self, index: usize) -> String {
        let paste = self.pastes.get(index).map(String::as_str).unwrap_or("");
        let lines = paste.lines().count();
        if lines > 1 {
            format!("[pasted {lines} lines]")
        } else {
            format!("[pasted {} chars]", paste.chars().count())
        }
    }
}

/// The byte offset `column` characters after `start`, not past `end`.
fn advance(text: &str, start: usize, end: usize, column: usize) -> usize {
    text[start..end]
        .char_indices()
        .nth(column)
        .map(|(i, _)| start + i)
        .unwrap_or(end)
}

/// The newest history index before `before` whose text contains `query` (case-insensitive).
fn find_back(history: &[String], query: &str, before: usize) -> Option<usize> {
    let query = query.to_lowercase();
    history[..before.min(history.len())]
        .iter()
        .rposition(|h| h.to_lowercase().contains(&query))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn history() -> Vec<String> {
        ["fix the test", "add docs", "fix the build"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    }

    #[test]
    fn edits_move_by_characters_and_lines() {
        let mut p = PromptBox::new();
        p.insert("héllo");
        p.left();
        p.backspace();
        assert_eq!(p.raw(), "hélo");
        p.end();
        p.insert("\nworld");
        assert!(p.up());
        assert_eq!(&p.raw()[p.cursor()..], "\nworld");
        assert!(!p.up());
        assert!(p.down());
        assert!(!p.down());
        p.delete_word();
        assert_eq!(p.raw(), "hélo\nd");
    }

    #[test]
    fn history_walks_back_and_restores_the_draft() {
        let h = history();
        let mut p = PromptBox::new();
        p.insert("draft");
        p.history_back(&h);
        assert_eq!(p.raw(), "fix the build");
        p.history_back(&h);
        p.history_back(&h);
        p.history_back(&h);
        assert_eq!(p.raw(), "fix the test");
        p.history_forward(&h);
        p.history_forward(&h);
        p.history_forward(&h);
        assert_eq!(p.raw(), "draft");
    }

    #[test]
    fn reverse_search_finds_newest_first_then_older() {
        let h = history();
        let mut p = PromptBox::new();
        p.search_back(&h);
        p.search_type(&h, |q| q.push_str("FIX"));
        assert_eq!(p.search.as_ref().and_then(|s| s.found), Some(2));
        p.search_back(&h);
        assert_eq!(p.search.as_ref().and_then(|s| s.found), Some(0));
        p.search_end(&h, true);
        assert_eq!(p.raw(), "fix the test");
        assert!(p.search.is_none());
    }

    #[test]
    fn big_pastes_are_one_badge_character() {
        let mut p = PromptBox::new();
        p.insert("see ");
        let big: String = (0..120).map(|i| format!("line {i}\n")).collect();
        p.paste(&big);
        p.insert(" ok");
        assert_eq!(p.raw().chars().count(), "see  ok".chars().count() + 1);
        let (lines, _) = p.layout(80, Theme::PLAIN);
        assert_eq!(lines[0].to_string(), "see [pasted 120 lines] ok");
        assert_eq!(p.expanded(), format!("see {big} ok"));
        p.left();
        p.left();
        p.left();
        p.backspace();
        assert_eq!(p.raw(), "see  ok");
        p.paste("short");
        assert_eq!(p.raw(), "see short ok");
    }

    #[test]
    fn layout_wraps_and_places_the_cursor() {
        let mut p = PromptBox::new();
        p.insert("abcdef\n日本");
        let (lines, cursor) = p.layout(4, Theme::PLAIN);
        let text: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        assert_eq!(text, ["abcd", "ef", "日本", ""]);
        assert_eq!(cursor, (0, 3));
    }
}
