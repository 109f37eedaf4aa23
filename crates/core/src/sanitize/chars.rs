//! Which characters a terminal (or a reader of a text report) must never receive raw, and
//! the one visible form each takes instead.
//!
//! Three families, decided by Unicode properties and not by a list of known attacks:
//! - **controls** (general category `Cc`): C0 (`U+0000`-`U+001F`), DEL and C1
//!   (`U+0080`-`U+009F`). ESC and the C1 CSI/OSC start terminal sequences (clipboard writes,
//!   window titles, cursor moves), a bare CR returns the cursor and lets the rest of a line
//!   overwrite what came before it, BS erases;
//! - **invisible format characters** (`Default_Ignorable_Code_Point`, Unicode 15): the bidi
//!   controls (`U+202A`-`U+202E`, `U+2066`-`U+2069`, `U+200E`/`U+200F`, `U+061C`) reorder what
//!   is shown against what is stored, the zero-width ones (`U+200B`-`U+200D`, `U+2060`, `U+FEFF`)
//!   make two different names or lines look the same, tag characters (`U+E0000`-`U+E0FFF`)
//!   carry text nobody sees;
//! - **line and paragraph separators** (`U+2028`, `U+2029`) and the interlinear annotation
//!   characters (`U+FFF9`-`U+FFFB`), which some renderers break lines on.
//!
//! Two exceptions keep ordinary text readable: `U+FE0F` (emoji presentation) and `U+200D`
//! (zero-width joiner) right after a character at or above `U+2000` (an emoji, a symbol), as
//! in `⚠️` and `👩‍💻`. After a letter of any script below `U+2000` (Latin, Greek, Cyrillic,
//! Hebrew, Arabic...), where a joiner would make `adm‍in` look like `admin`, they are escaped.

/// The text around a character that decides how it may be shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// A name (a file, a label) shown within a line: every newline, tab and control escaped.
    Name,
    /// One line of text (a diff line, a cut summary): tabs kept, every other control (CR
    /// and LF included) escaped.
    Line,
    /// Several lines (a model's answer, a whole diff): newlines and tabs kept, a CR kept only
    /// as part of a CRLF line end (it cannot hide anything there), every other control
    /// escaped.
    Block,
}

/// Whether `c` is a control character (`Cc`: C0, DEL, C1).
pub fn is_control(c: char) -> bool {
    matches!(c, '\0'..='\x1f' | '\x7f'..='\u{9f}')
}

/// Whether `c` is an invisible format character or a separator a terminal must not receive
/// raw (see the module doc for the families).
pub fn is_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{ad}'
            | '\u{34f}'
            | '\u{61c}'
            | '\u{115f}'..='\u{1160}'
            | '\u{17b4}'..='\u{17b5}'
            | '\u{180b}'..='\u{180f}'
            | '\u{200b}'..='\u{200f}'
            | '\u{2028}'..='\u{202e}'
            | '\u{2060}'..='\u{206f}'
            | '\u{3164}'
            | '\u{fe00}'..='\u{fe0f}'
            | '\u{feff}'
            | '\u{ffa0}'
            | '\u{fff0}'..='\u{fffb}'
            | '\u{1bca0}'..='\u{1bca3}'
            | '\u{1d173}'..='\u{1d17a}'
            | '\u{e0000}'..='\u{e0fff}'
    )
}

/// Whether `c` is a bidi control (it reorders what is shown against what is stored).
pub fn is_bidi_control(c: char) -> bool {
    matches!(
        c,
        '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
    )
}

/// Whether `c`, after `prev` (`None` at the start of the text) and before `next`, must be
/// shown escaped in `layout`.
pub fn needs_escape(c: char, prev: Option<char>, next: Option<char>, layout: Layout) -> bool {
    match c {
        '\n' => layout != Layout::Block,
        '\t' => layout == Layout::Name,
        '\r' => !(layout == Layout::Block && next == Some('\n')),
        '\u{200d}' | '\u{fe0f}' => !prev.is_some_and(|p| p >= '\u{2000}' && !is_invisible(p)),
        c => is_control(c) || is_invisible(c),
    }
}

/// Appends the visible form of `c` to `out`: `\0`, `\t`, `\n`, `\r`, `\xNN` for the other
/// C0 controls and DEL (the byte is the character), `\u{NN}` for every other character
/// (C1 controls, format characters), the form Rust's own `{:?}` uses for them.
pub fn push_escaped(out: &mut String, c: char) {
    use std::fmt::Write;
    match c {
        '\0' => out.push_str("\\0"),
        '\t' => out.push_str("\\t"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        c if u32::from(c) < 0x80 => {
            let _ = write!(out, "\\x{:02x}", u32::from(c));
        }
        c => {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_control_and_format_family_is_caught() {
        for c in [
            '\0', '\x07', '\x08', '\x1b', '\x7f', '\u{85}', '\u{9b}', '\u{9d}',
        ] {
            assert!(is_control(c), "{c:?}");
        }
        for c in [
            '\u{202e}',
            '\u{2066}',
            '\u{2069}',
            '\u{200e}',
            '\u{200f}',
            '\u{61c}',
            '\u{200b}',
            '\u{2060}',
            '\u{feff}',
            '\u{e0041}',
            '\u{2028}',
            '\u{2029}',
            '\u{fff9}',
            '\u{ad}',
        ] {
            assert!(is_invisible(c), "{c:?}");
            assert!(needs_escape(c, Some('a'), None, Layout::Block), "{c:?}");
        }
        for c in ['a', 'é', 'ж', 'א', '日', '😀', ' ', '\u{a0}', '\u{fffd}'] {
            assert!(!needs_escape(c, Some('a'), None, Layout::Name), "{c:?}");
        }
    }

    #[test]
    fn newline_tab_and_carriage_return_depend_on_the_layout() {
        assert!(!needs_escape('\n', None, None, Layout::Block));
        assert!(needs_escape('\n', None, None, Layout::Line));
        assert!(!needs_escape('\t', None, None, Layout::Line));
        assert!(needs_escape('\t', None, None, Layout::Name));
        assert!(!needs_escape('\r', None, Some('\n'), Layout::Block));
        assert!(needs_escape('\r', None, Some('x'), Layout::Block));
        assert!(needs_escape('\r', None, None, Layout::Block));
        assert!(needs_escape('\r', None, Some('\n'), Layout::Line));
    }

    #[test]
    fn joiners_stay_in_emoji_and_are_escaped_in_words() {
        assert!(!needs_escape('\u{fe0f}', Some('⚠'), None, Layout::Line));
        assert!(!needs_escape(
            '\u{200d}',
            Some('👩'),
            Some('💻'),
            Layout::Line
        ));
        assert!(needs_escape('\u{200d}', Some('m'), Some('i'), Layout::Line));
        assert!(needs_escape('\u{fe0f}', None, None, Layout::Line));
        assert!(needs_escape(
            '\u{fe0f}',
            Some('\u{fe0f}'),
            None,
            Layout::Line
        ));
    }

    #[test]
    fn escapes_name_the_character() {
        let mut out = String::new();
        for c in [
            '\0',
            '\x1b',
            '\r',
            '\x7f',
            '\u{9b}',
            '\u{202e}',
            '\u{e0041}',
        ] {
            push_escaped(&mut out, c);
        }
        assert_eq!(out, r"\0\x1b\r\x7f\u{9b}\u{202e}\u{e0041}");
    }
}
