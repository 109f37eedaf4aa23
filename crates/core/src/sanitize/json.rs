//! JSON that is safe to print: the same document, with every control and invisible character
//! inside strings written as a `\uXXXX` escape.
//!
//! JSON itself only requires escaping `U+0000`-`U+001F`; DEL, the C1 controls (some terminals
//! act on `U+009B` as CSI) and the bidi and zero-width characters are legal raw. A document
//! printed to a terminal (`ask --json`, `sessions --json`, `run --json`) or `cat`ed from
//! `report.json` must not carry them raw, and escaping them changes no value: any JSON reader
//! decodes `\u202e` to the same string.

use std::io;

use serde::Serialize;
use serde_json::ser::{Formatter, PrettyFormatter};

use super::chars;

/// `value` as pretty-printed JSON with risky characters escaped (see the module doc).
pub fn to_string_pretty<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    let mut out = Vec::with_capacity(256);
    let mut ser = serde_json::Serializer::with_formatter(&mut out, Safe(PrettyFormatter::new()));
    value.serialize(&mut ser)?;
    // The serializer writes UTF-8 (strings are `str`, escapes are ASCII).
    String::from_utf8(out).map_err(|e| serde_json::Error::io(io::Error::other(e)))
}

/// `value` as one line of JSON with risky characters escaped.
pub fn to_string<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    let mut out = Vec::with_capacity(128);
    let mut ser = serde_json::Serializer::with_formatter(&mut out, Safe(Compact));
    value.serialize(&mut ser)?;
    String::from_utf8(out).map_err(|e| serde_json::Error::io(io::Error::other(e)))
}

/// serde_json's compact formatter (all defaults).
struct Compact;

impl Formatter for Compact {}

/// A formatter that escapes risky characters in string fragments and otherwise lays out as
/// the one it wraps.
struct Safe<F>(F);

impl<F: Formatter> Formatter for Safe<F> {
    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let mut from = 0;
        for (at, c) in fragment.char_indices() {
            if chars::is_control(c) || chars::is_invisible(c) {
                writer.write_all(&fragment.as_bytes()[from..at])?;
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    write!(writer, "\\u{unit:04x}")?;
                }
                from = at + c.len_utf8();
            }
        }
        writer.write_all(&fragment.as_bytes()[from..])
    }

    fn begin_array<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.begin_array(writer)
    }

    fn end_array<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_array(writer)
    }

    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.0.begin_array_value(writer, first)
    }

    fn end_array_value<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_array_value(writer)
    }

    fn begin_object<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.begin_object(writer)
    }

    fn end_object<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_object(writer)
    }

    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.0.begin_object_key(writer, first)
    }

    fn begin_object_value<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.begin_object_value(writer)
    }

    fn end_object_value<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_object_value(writer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn risky_characters_are_escaped_and_the_value_is_unchanged() {
        let value = serde_json::json!({
            "text": "a\x1b]52;c;x\x07 \u{9b}31m \u{202e}rev \u{e0041} \x7f ok é",
            "list": ["\r"],
        });
        for text in [
            to_string_pretty(&value).unwrap(),
            to_string(&value).unwrap(),
        ] {
            assert!(text.is_ascii() || text.contains('é'), "{text}");
            for bad in [
                '\x1b',
                '\x07',
                '\u{9b}',
                '\u{202e}',
                '\u{e0041}',
                '\x7f',
                '\r',
            ] {
                assert!(!text.contains(bad), "{bad:?} in {text}");
            }
            assert!(
                text.contains(r"\u202e") && text.contains(r"\udb40\udc41"),
                "{text}"
            );
            let back: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert_eq!(back, value);
        }
        assert!(to_string_pretty(&value).unwrap().contains("\n  \"list\""));
    }
}
