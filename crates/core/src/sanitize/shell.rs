//! A path or argument printed as a word the user can paste into a POSIX shell: as it is when
//! it holds only characters no shell treats specially, else in single quotes (a `'` inside
//! becomes `'\''`). What must not reach a terminal raw (controls, bidi and invisible
//! characters, bytes that are not UTF-8) is escaped first ([`super::escape`]), so such a word
//! shows what is there instead of acting on the terminal; pasted, it then names another path,
//! which fails visibly instead of running something.

use super::{Layout, escape};

/// `text` as one shell word (see the module doc).
pub fn shell_word(text: &str) -> String {
    let shown = escape(text, Layout::Line);
    let safe = !shown.is_empty()
        && shown
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+,:@%=".contains(c));
    if safe {
        shown.into_owned()
    } else {
        format!("'{}'", shown.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_quoted_only_when_needed_and_never_carry_controls() {
        assert_eq!(shell_word("/tmp/versus-demo-1"), "/tmp/versus-demo-1");
        assert_eq!(shell_word("/tmp/my demo"), "'/tmp/my demo'");
        assert_eq!(shell_word("/tmp/it's"), "'/tmp/it'\\''s'");
        assert_eq!(shell_word("$(rm -rf ~)"), "'$(rm -rf ~)'");
        assert_eq!(shell_word(""), "''");
        let hostile = shell_word("/tmp/a\x1b]52;c;x\x07b");
        assert!(
            !hostile.contains('\x1b') && !hostile.contains('\x07'),
            "{hostile}"
        );
        assert!(
            hostile.starts_with('\'') && hostile.contains("\\x1b"),
            "{hostile}"
        );
    }
}
