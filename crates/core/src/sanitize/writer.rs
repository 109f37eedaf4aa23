//! [`SafeWriter`]: an `io::Write` that escapes what goes through it, so a printer that
//! forgets to wrap one value still cannot send the terminal a control sequence.
//!
//! Everything written is treated as a [`Layout::Block`]: newlines and tabs pass, a CR only as
//! part of CRLF, every other control and invisible character comes out escaped, and bytes
//! that are not UTF-8 come out as `\xNN`. A character (or a CRLF) split across two writes is
//! held until the next write completes it, so escaping never depends on how `write!` chunks
//! its output. The only raw sequences are versus's own, typed as [`Control`].

use std::io::{self, Write};

use super::chars::Layout;

/// A terminal sequence versus itself sends (never built from text it was given).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    /// Moves the cursor up over `n` lines drawn before, clearing each, and back to column 0:
    /// how a live table redraws in place.
    ClearLinesAbove(usize),
}

/// Escapes everything written to it before it reaches `inner`.
#[derive(Debug)]
pub struct SafeWriter<W: Write> {
    inner: W,
    /// Bytes held back: an incomplete UTF-8 sequence or a CR waiting for its LF.
    pending: Vec<u8>,
    /// The last character passed on (for the joiner exception).
    prev: Option<char>,
}

/// The process's stdout, escaped.
#[allow(clippy::disallowed_methods)] // The one place the raw stream is taken.
pub fn stdout() -> SafeWriter<io::Stdout> {
    SafeWriter::new(io::stdout())
}

/// The process's stderr, escaped.
#[allow(clippy::disallowed_methods)] // The one place the raw stream is taken.
pub fn stderr() -> SafeWriter<io::Stderr> {
    SafeWriter::new(io::stderr())
}

impl<W: Write> SafeWriter<W> {
    /// Escapes into `inner`.
    pub fn new(inner: W) -> Self {
        Self {
            inner,
            pending: Vec::new(),
            prev: None,
        }
    }

    /// Sends one of versus's own terminal sequences, raw.
    pub fn control(&mut self, control: Control) -> io::Result<()> {
        self.drain(true)?;
        match control {
            Control::ClearLinesAbove(n) => {
                let mut out = "\x1b[1A\x1b[2K".repeat(n);
                out.push('\r');
                self.inner.write_all(out.as_bytes())
            }
        }
    }

    /// Escapes and writes what is pending, holding back an incomplete tail unless `all`.
    fn drain(&mut self, all: bool) -> io::Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let bytes = std::mem::take(&mut self.pending);
        let mut out = String::with_capacity(bytes.len() + 8);
        let mut held: &[u8] = &[];
        let mut chunks = bytes.utf8_chunks().peekable();
        while let Some(chunk) = chunks.next() {
            let last = chunks.peek().is_none();
            let valid = chunk.valid();
            let invalid = chunk.invalid();
            // An incomplete sequence at the very end may be completed by the next write.
            let incomplete = last && !all && !invalid.is_empty() && incomplete_tail(invalid);
            let mut text = valid;
            // A CR at the very end may be the first half of a CRLF.
            let cr_held = last && !all && invalid.is_empty() && text.ends_with('\r');
            if cr_held {
                text = &text[..text.len() - 1];
            }
            self.push_text(&mut out, text);
            if incomplete {
                held = invalid;
            } else {
                use std::fmt::Write as _;
                for b in invalid {
                    let _ = write!(out, "\\x{b:02x}");
                    self.prev = None;
                }
            }
            if cr_held {
                held = b"\r";
            }
        }
        self.pending = held.to_vec();
        self.inner.write_all(out.as_bytes())
    }

    /// Escapes `text` onto `out`.
    fn push_text(&mut self, out: &mut String, text: &str) {
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            let next = chars.peek().copied();
            if super::chars::needs_escape(c, self.prev, next, Layout::Block) {
                super::chars::push_escaped(out, c);
            } else {
                out.push(c);
            }
            self.prev = Some(c);
        }
    }
}

/// Whether `invalid` (the invalid bytes `utf8_chunks` reported last) is the start of a
/// sequence that more bytes could complete, rather than bytes that are wrong already.
fn incomplete_tail(invalid: &[u8]) -> bool {
    let Some(&first) = invalid.first() else {
        return false;
    };
    let need = match first {
        0xc2..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf4 => 4,
        _ => return false,
    };
    invalid.len() < need && invalid[1..].iter().all(|b| b & 0xc0 == 0x80)
}

impl<W: Write> Write for SafeWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(buf);
        self.drain(false)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.drain(true)?;
        self.inner.flush()
    }
}

impl<W: Write> Drop for SafeWriter<W> {
    fn drop(&mut self) {
        let _ = self.drain(true);
        let _ = self.inner.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn through(pieces: &[&[u8]]) -> String {
        let mut out = Vec::new();
        let mut w = SafeWriter::new(&mut out);
        for p in pieces {
            w.write_all(p).unwrap();
        }
        drop(w);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn escapes_whatever_is_written() {
        assert_eq!(
            through(&[b"title \x1b]0;owned\x07\n", b"ok\r\n"]),
            "title \\x1b]0;owned\\x07\nok\r\n"
        );
        assert_eq!(through(&[b"hide\rshown\n"]), "hide\\rshown\n");
        assert_eq!(through(&[b"bad \xff byte"]), "bad \\xff byte");
    }

    #[test]
    fn characters_and_crlf_split_across_writes_are_kept_whole() {
        let rlo = "\u{202e}".as_bytes();
        assert_eq!(through(&[&rlo[..1], &rlo[1..]]), r"\u{202e}");
        assert_eq!(
            through(&["é".as_bytes()[..1].as_ref(), &"é".as_bytes()[1..]]),
            "é"
        );
        assert_eq!(through(&[b"a\r", b"\nb"]), "a\r\nb");
        assert_eq!(through(&[b"a\r", b"b"]), "a\\rb");
        assert_eq!(through(&[b"end\r"]), "end\\r");
        assert_eq!(through(&[b"cut \xe2\x80"]), "cut \\xe2\\x80");
    }

    #[test]
    fn controls_are_versus_own() {
        let mut out = Vec::new();
        let mut w = SafeWriter::new(&mut out);
        w.write_all(b"x").unwrap();
        w.control(Control::ClearLinesAbove(2)).unwrap();
        drop(w);
        assert_eq!(out, b"x\x1b[1A\x1b[2K\x1b[1A\x1b[2K\r".to_vec());
    }
}
