//! Line view of a file's bytes, and the per-line keys the line-based strategies compare.
//!
//! The indentation strategy and the "closest region" report both reason in whole lines. They
//! compare *keys*: a line with its punctuation normalised and its surrounding whitespace trimmed.
//! Keys of ASCII lines are plain sub-slices, so scanning a large file allocates almost nothing.

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::normalize::punct_bytes;

/// Where one line sits in the file's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Span {
    /// First byte of the line.
    pub start: usize,
    /// End of the content, before `\r\n` or `\n`.
    pub end: usize,
    /// First byte of the next line (after the terminator).
    pub next: usize,
}

/// The lines of a byte buffer. A final line break does not start an extra empty line.
pub(super) struct Lines<'a> {
    src: &'a [u8],
    spans: Vec<Span>,
}

impl<'a> Lines<'a> {
    /// Indexes `src` in one pass.
    pub fn new(src: &'a [u8]) -> Self {
        let mut spans = Vec::with_capacity(src.len() / 32 + 1);
        let mut start = 0;
        for nl in memchr::memchr_iter(b'\n', src) {
            let end = if nl > start && src[nl - 1] == b'\r' {
                nl - 1
            } else {
                nl
            };
            spans.push(Span {
                start,
                end,
                next: nl + 1,
            });
            start = nl + 1;
        }
        if start < src.len() {
            spans.push(Span {
                start,
                end: src.len(),
                next: src.len(),
            });
        }
        Self { src, spans }
    }

    /// Number of lines.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// The span of line `i` (0-based).
    pub fn span(&self, i: usize) -> Span {
        self.spans[i]
    }

    /// The content of line `i`, without its terminator.
    pub fn content(&self, i: usize) -> &'a [u8] {
        let s = self.spans[i];
        &self.src[s.start..s.end]
    }

    /// The 0-based line holding byte `offset` (the last line for offsets at the end).
    pub fn line_of(&self, offset: usize) -> usize {
        self.spans
            .partition_point(|s| s.next <= offset)
            .min(self.spans.len().saturating_sub(1))
    }
}

/// A fast, non-cryptographic hasher for the line-key maps. Keys come from the file and the
/// model's own strings, so hash flooding is not a concern, and hashing every line of a large file
/// with SipHash would dominate the scan.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct FastHasher(u64);

impl FastHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

impl Hasher for FastHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word) ^ (rest.len() as u64) << 59);
        }
    }

    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// A map keyed by line keys, hashed with [`FastHasher`].
pub(super) type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;

/// Bytes that count as whitespace around a line's content.
fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | 0x0b | 0x0c)
}

/// `bytes` without whitespace at either end.
pub(super) fn trim(bytes: &[u8]) -> &[u8] {
    let start = bytes.iter().position(|&b| !is_ws(b)).unwrap_or(bytes.len());
    let end = bytes
        .iter()
        .rposition(|&b| !is_ws(b))
        .map_or(start, |i| i + 1);
    &bytes[start..end]
}

/// The comparison key of a line: punctuation normalised, whitespace trimmed at both ends.
pub(super) fn key(line: &[u8]) -> Cow<'_, [u8]> {
    match punct_bytes(line) {
        Cow::Borrowed(b) => Cow::Borrowed(trim(b)),
        Cow::Owned(v) => Cow::Owned(trim(&v).to_vec()),
    }
}

/// Columns a tab counts for when indentation widths are compared.
pub(super) const TAB_COLS: usize = 4;

/// A line's leading indentation: its length in bytes and its width in columns.
pub(super) fn indent(line: &[u8]) -> (usize, usize) {
    let mut cols = 0;
    let mut len = 0;
    for &b in line {
        match b {
            b' ' => cols += 1,
            b'\t' => cols += TAB_COLS,
            _ => break,
        }
        len += 1;
    }
    (len, cols)
}

/// Splits text into lines on `\n` (a `\r` before it is dropped). The flag says whether the text
/// ended with a line break, which is not an extra empty line.
pub(super) fn split(text: &str) -> (Vec<&str>, bool) {
    let (body, ends_nl) = match text.strip_suffix('\n') {
        Some(b) => (b, true),
        None => (text, false),
    };
    let lines = body
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    (lines, ends_nl)
}

/// Start of the line `n` lines before the one holding `pos`.
pub(super) fn back_lines(src: &[u8], pos: usize, n: usize) -> usize {
    let mut start = memchr::memrchr(b'\n', &src[..pos]).map_or(0, |i| i + 1);
    for _ in 0..n {
        if start == 0 {
            break;
        }
        start = memchr::memrchr(b'\n', &src[..start - 1]).map_or(0, |i| i + 1);
    }
    start
}

/// End (after the line break) of the line `n` lines after the one holding `pos - 1`; a range
/// ending right after a line break ends on that line.
pub(super) fn forward_lines(src: &[u8], pos: usize, n: usize) -> usize {
    let mut end = if pos > 0 && src.get(pos - 1) == Some(&b'\n') {
        pos
    } else {
        memchr::memchr(b'\n', &src[pos..]).map_or(src.len(), |i| pos + i + 1)
    };
    for _ in 0..n {
        if end >= src.len() {
            break;
        }
        end = memchr::memchr(b'\n', &src[end..]).map_or(src.len(), |i| end + i + 1);
    }
    end
}

/// 1-based line numbers of sorted byte offsets, counting line breaks once over the buffer.
pub(super) fn line_numbers(src: &[u8], offsets: &[usize]) -> Vec<usize> {
    let mut out = Vec::with_capacity(offsets.len());
    let mut line = 1;
    let mut pos = 0;
    for &off in offsets {
        let off = off.min(src.len());
        if off > pos {
            line += memchr::memchr_iter(b'\n', &src[pos..off]).count();
            pos = off;
        }
        out.push(line);
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn spans_handle_crlf_and_missing_final_newline() {
        let l = Lines::new(b"a\r\nbb\nc");
        assert_eq!(l.len(), 3);
        assert_eq!(l.content(0), b"a");
        assert_eq!(l.span(0).next, 3);
        assert_eq!(l.content(1), b"bb");
        assert_eq!(l.content(2), b"c");
        assert_eq!(l.line_of(0), 0);
        assert_eq!(l.line_of(3), 1);
        assert_eq!(l.line_of(7), 2);
        assert_eq!(Lines::new(b"x\n").len(), 1);
        assert_eq!(Lines::new(b"").len(), 0);
    }

    #[test]
    fn keys_trim_and_normalise() {
        assert_eq!(&*key(b"\t  foo(\"x\")  \r"), b"foo(\"x\")");
        assert_eq!(&*key("\u{00A0}\u{201C}y\u{201D}".as_bytes()), b"\"y\"");
        assert_eq!(&*key(b"   "), b"");
    }

    #[test]
    fn indentation_widths() {
        assert_eq!(indent(b"\t\tx"), (2, 8));
        assert_eq!(indent(b"  x"), (2, 2));
        assert_eq!(indent(b"x"), (0, 0));
    }

    #[test]
    fn split_keeps_trailing_newline_flag() {
        assert_eq!(split("a\r\nb\n"), (vec!["a", "b"], true));
        assert_eq!(split("a"), (vec!["a"], false));
    }

    #[test]
    fn walking_lines() {
        let src = b"a\nb\nc\nd\ne";
        assert_eq!(back_lines(src, 4, 1), 2);
        assert_eq!(back_lines(src, 4, 9), 0);
        assert_eq!(forward_lines(src, 5, 1), 8);
        assert_eq!(forward_lines(src, 4, 1), 6);
        assert_eq!(forward_lines(src, 4, 9), src.len());
        // A range ending after a line break ends on that line.
        assert_eq!(forward_lines(src, 2, 0), 2);
    }

    #[test]
    fn numbers_of_offsets() {
        assert_eq!(line_numbers(b"a\nb\nc", &[0, 2, 4]), vec![1, 2, 3]);
    }
}
