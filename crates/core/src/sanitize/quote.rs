//! Names quoted as git quotes paths (`quote_c_style`): a name that needs nothing is shown as
//! is; otherwise it is put in double quotes with `\"`, `\\`, `\a \b \t \n \v \f \r` and a
//! three-digit octal escape per byte of every other character that must not reach a terminal
//! raw (`"a\nb"`, `"\033]52;..."`, `"\342\200\256"` for U+202E). `git apply` and every tool
//! that reads git's output unquote these, so a diff with a quoted name is still a diff.
//!
//! One difference from git's default (`core.quotePath=true`): printable non-ASCII characters
//! stay as they are (`é.txt`, not `"\303\251.txt"`), as with `core.quotePath=false`, while
//! the invisible ones ([`super::chars::is_invisible`]), which `quotePath=false` would let
//! through, are still escaped.

use std::borrow::Cow;

use super::chars;

/// `name` quoted as git quotes a path (see the module doc); borrowed when it needs nothing.
pub fn quote_name(name: &str) -> Cow<'_, str> {
    quote_prefixed("", name)
}

/// `prefix` + `name` quoted as one (git quotes `a/x y` as `"a/x\ny"`, prefix included, in a
/// diff header); as is when `name` needs nothing.
pub fn quote_prefixed<'a>(prefix: &str, name: &'a str) -> Cow<'a, str> {
    if !needs_quotes(name) {
        if prefix.is_empty() {
            return Cow::Borrowed(name);
        }
        return Cow::Owned(format!("{prefix}{name}"));
    }
    let mut out = String::with_capacity(name.len() + prefix.len() + 8);
    out.push('"');
    push_quoted(&mut out, prefix);
    push_quoted(&mut out, name);
    out.push('"');
    Cow::Owned(out)
}

/// Whether git's quoting would change `name` (a quote, a backslash, or a character that
/// must not be shown raw).
fn needs_quotes(name: &str) -> bool {
    name.chars()
        .any(|c| c == '"' || c == '\\' || must_escape(c))
}

/// A character that is escaped inside quotes. Names are shown within a line, so every
/// control, tab and newline included, is; invisible characters are judged alone (no emoji
/// exception in a name).
fn must_escape(c: char) -> bool {
    chars::is_control(c) || chars::is_invisible(c)
}

fn push_quoted(out: &mut String, text: &str) {
    use std::fmt::Write;
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\x07' => out.push_str("\\a"),
            '\x08' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\x0b' => out.push_str("\\v"),
            '\x0c' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            c if must_escape(c) => {
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    let _ = write!(out, "\\{b:03o}");
                }
            }
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_like_git() {
        assert_eq!(quote_name("src/main.rs"), "src/main.rs");
        assert_eq!(quote_name("café.txt"), "café.txt");
        assert_eq!(quote_name("with space"), "with space");
        assert_eq!(quote_name("a\nb"), r#""a\nb""#);
        assert_eq!(quote_name("x\n+++ b/evil"), r#""x\n+++ b/evil""#);
        assert_eq!(quote_name("t\x1b]0;owned\x07"), r#""t\033]0;owned\a""#);
        assert_eq!(quote_name("say\"hi\\"), r#""say\"hi\\""#);
        assert_eq!(
            quote_name("rtl\u{202e}txt.sh"),
            r#""rtl\342\200\256txt.sh""#
        );
        assert_eq!(quote_name("\x7f\u{9b}"), r#""\177\302\233""#);
        assert_eq!(quote_prefixed("b/", "x\ny"), r#""b/x\ny""#);
        assert_eq!(quote_prefixed("b/", "x"), "b/x");
    }
}
