//! Character-level normalisation that remembers where every byte came from.
//!
//! The first fuzzy strategies (line endings, trailing whitespace, punctuation) compare a
//! normalised `old_string` against a normalised copy of the file. A match in the normalised copy
//! is only useful if it maps back to exact byte offsets in the original, because the replacement
//! is spliced into the original bytes. So the normaliser records a short list of segments:
//! stretches copied unchanged, single characters replaced by their ASCII twin, and gaps where
//! bytes were dropped. Mapping an offset back is a binary search over the segments.
//!
//! Speed on large files: nothing is copied until the first change (an unchanged file costs one
//! scan), line ends are found with `memchr`, and ASCII is skipped 32 bytes at a time when looking
//! for punctuation to replace. A 10 MB file is normalised in a few milliseconds.

use std::borrow::Cow;
use std::ops::Range;

use memchr::memmem;

use crate::tools::text::punct_char;

/// Which normalisations to apply. The strategies are cumulative: each one keeps the previous ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Rules {
    /// `\r\n` becomes `\n`.
    pub endings: bool,
    /// Spaces, tabs and carriage returns at the end of each line are dropped.
    pub trailing_ws: bool,
    /// Curly quotes, dashes and odd spaces become their ASCII twins ([`punct_char`]).
    pub punctuation: bool,
}

/// Where a stretch of the normalised text starts, and where it came from. A stretch lasts until
/// the next one starts.
#[derive(Debug, Clone, Copy)]
struct Seg {
    norm: usize,
    orig: usize,
    /// 0: copied byte for byte. n > 0: one character of n bytes replaced by one ASCII byte.
    replaced: u8,
}

/// A normalised text plus the map back to the bytes it was made from.
#[derive(Debug)]
pub(super) struct Normalized<'a> {
    src: &'a [u8],
    /// `None` when normalising changed nothing (the text is `src`).
    out: Option<Vec<u8>>,
    segs: Vec<Seg>,
    /// The last line had no line break and lost trailing whitespace.
    pub last_line_trimmed: bool,
}

impl<'a> Normalized<'a> {
    /// Normalises `src` by `rules`.
    pub fn new(src: &'a [u8], rules: Rules) -> Self {
        let mut b = Builder {
            src,
            out: None,
            segs: Vec::new(),
            run_start: 0,
        };
        let mut last_line_trimmed = false;
        let mut scan_from = 0;
        let mut line_start = 0;
        let mut trim =
            |b: &mut Builder<'a>, line: Range<usize>, has_nl: bool, scan_from: &mut usize| {
                let mut end = line.end;
                if rules.trailing_ws {
                    while end > line.start && matches!(src[end - 1], b' ' | b'\t' | b'\r') {
                        end -= 1;
                    }
                } else if rules.endings && has_nl && end > line.start && src[end - 1] == b'\r' {
                    end -= 1;
                }
                if end < line.end {
                    if rules.punctuation {
                        b.punctuation(*scan_from..end);
                    }
                    b.delete(end..line.end);
                    *scan_from = line.end;
                    if !has_nl {
                        last_line_trimmed = true;
                    }
                }
            };
        if rules.trailing_ws || rules.endings {
            for nl in memchr::memchr_iter(b'\n', src) {
                trim(&mut b, line_start..nl, true, &mut scan_from);
                line_start = nl + 1;
            }
            if line_start < src.len() {
                trim(&mut b, line_start..src.len(), false, &mut scan_from);
            }
        }
        if rules.punctuation {
            b.punctuation(scan_from..src.len());
        }
        let out = b.finish();
        Self {
            src,
            out,
            segs: b.segs,
            last_line_trimmed,
        }
    }

    /// The normalised bytes.
    pub fn text(&self) -> &[u8] {
        self.out.as_deref().unwrap_or(self.src)
    }

    /// The original byte range that produced the normalised range `r` (non-empty, on character
    /// boundaries). Bytes dropped just after the match (trailing whitespace) stay outside it.
    pub fn to_original(&self, r: Range<usize>) -> Range<usize> {
        let start = match self.seg_at(r.start) {
            Some(s) if s.replaced == 0 => s.orig + (r.start - s.norm),
            Some(s) => s.orig,
            None => r.start,
        };
        let last = r.end.saturating_sub(1).max(r.start);
        let end = match self.seg_at(last) {
            Some(s) if s.replaced == 0 => s.orig + (r.end - s.norm),
            Some(s) => s.orig + usize::from(s.replaced),
            None => r.end,
        };
        start..end.max(start)
    }

    fn seg_at(&self, p: usize) -> Option<&Seg> {
        let idx = self.segs.partition_point(|s| s.norm <= p);
        self.segs.get(idx.checked_sub(1)?)
    }

    /// Non-overlapping matches of `needle` in this text, as original byte ranges. When the
    /// needle's last line lost trailing whitespace, a match must end at a line end, so `"foo  "`
    /// never matches the start of `foobar`.
    pub fn find(&self, needle: &Normalized<'_>) -> Vec<Range<usize>> {
        let (hay, pat) = (self.text(), needle.text());
        if pat.is_empty() {
            return Vec::new();
        }
        memmem::find_iter(hay, pat)
            .map(|s| s..s + pat.len())
            .filter(|r| {
                !needle.last_line_trimmed || r.end == hay.len() || hay.get(r.end) == Some(&b'\n')
            })
            .map(|r| self.to_original(r))
            .collect()
    }
}

/// Builds the normalised copy lazily: bytes are copied only once a first change happens.
struct Builder<'a> {
    src: &'a [u8],
    out: Option<Vec<u8>>,
    segs: Vec<Seg>,
    /// Start of the stretch of `src` not yet copied (all of it unchanged).
    run_start: usize,
}

impl Builder<'_> {
    /// Copies the unchanged stretch up to `to` and returns the output buffer.
    fn flush(&mut self, to: usize) -> &mut Vec<u8> {
        let src = self.src;
        let out = self
            .out
            .get_or_insert_with(|| Vec::with_capacity(src.len()));
        if to > self.run_start {
            self.segs.push(Seg {
                norm: out.len(),
                orig: self.run_start,
                replaced: 0,
            });
            out.extend_from_slice(&src[self.run_start..to]);
        }
        out
    }

    fn delete(&mut self, range: Range<usize>) {
        self.flush(range.start);
        self.run_start = range.end;
    }

    fn replace(&mut self, range: Range<usize>, with: u8) {
        let out = self.flush(range.start);
        let norm = out.len();
        out.push(with);
        self.segs.push(Seg {
            norm,
            orig: range.start,
            replaced: u8::try_from(range.len()).unwrap_or(u8::MAX),
        });
        self.run_start = range.end;
    }

    /// Replaces typographic punctuation in `range`. Invalid UTF-8 is left as is.
    fn punctuation(&mut self, range: Range<usize>) {
        let mut pos = range.start;
        while let Some(at) = next_non_ascii(&self.src[..range.end], pos) {
            let window = &self.src[at..range.end.min(at + 4)];
            let first = window.utf8_chunks().next();
            let Some(c) = first.and_then(|ch| ch.valid().chars().next()) else {
                pos = at + 1;
                continue;
            };
            let mapped = punct_char(c);
            if mapped != c && mapped.is_ascii() {
                self.replace(at..at + c.len_utf8(), mapped as u8);
            }
            pos = at + c.len_utf8();
        }
    }

    fn finish(&mut self) -> Option<Vec<u8>> {
        if self.out.is_some() {
            self.flush(self.src.len());
        }
        self.out.take()
    }
}

/// Position of the first byte at or after `from` that is not ASCII.
fn next_non_ascii(s: &[u8], from: usize) -> Option<usize> {
    let tail = s.get(from..)?;
    let mut chunks = tail.chunks_exact(32);
    let mut base = from;
    for chunk in &mut chunks {
        if !chunk.is_ascii() {
            return chunk.iter().position(|&b| b >= 0x80).map(|p| base + p);
        }
        base += 32;
    }
    chunks
        .remainder()
        .iter()
        .position(|&b| b >= 0x80)
        .map(|p| base + p)
}

/// [`punct_char`] over bytes; invalid UTF-8 passes through. Borrowed when nothing changes.
pub(super) fn punct_bytes(bytes: &[u8]) -> Cow<'_, [u8]> {
    if bytes.is_ascii() {
        return Cow::Borrowed(bytes);
    }
    let n = Normalized::new(
        bytes,
        Rules {
            endings: false,
            trailing_ws: false,
            punctuation: true,
        },
    );
    match n.out {
        Some(v) => Cow::Owned(v),
        None => Cow::Borrowed(bytes),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const ALL: Rules = Rules {
        endings: true,
        trailing_ws: true,
        punctuation: true,
    };

    #[test]
    fn endings_map_back() {
        let src = b"a\r\nbc\r\nd";
        let n = Normalized::new(
            src,
            Rules {
                endings: true,
                trailing_ws: false,
                punctuation: false,
            },
        );
        assert_eq!(n.text(), b"a\nbc\nd");
        assert!(n.out.is_some());
        // "bc\nd" in normalised text is "bc\r\nd" in the original.
        assert_eq!(n.to_original(2..6), 3..8);
    }

    #[test]
    fn trailing_whitespace_stays_outside_a_match_ending_mid_line() {
        let src = b"foo   \nbar";
        let n = Normalized::new(src, ALL);
        assert_eq!(n.text(), b"foo\nbar");
        assert_eq!(n.to_original(0..3), 0..3);
        assert_eq!(n.to_original(0..4), 0..7);
    }

    #[test]
    fn punctuation_maps_multibyte_chars() {
        let src = "say \u{201C}hi\u{201D} \u{2014} ok".as_bytes();
        let n = Normalized::new(src, ALL);
        assert_eq!(n.text(), b"say \"hi\" - ok");
        let r = n.to_original(4..8);
        assert_eq!(&src[r], "\u{201C}hi\u{201D}".as_bytes());
    }

    #[test]
    fn invalid_utf8_is_copied() {
        let src = b"a\xff\xe2\x80\x9cb";
        let n = Normalized::new(src, ALL);
        assert_eq!(n.text(), b"a\xff\"b");
        assert_eq!(n.to_original(1..3), 1..5);
    }

    #[test]
    fn trimmed_needle_must_end_at_line_end() {
        let hay = Normalized::new(b"foobar\nfoo  \n", ALL);
        let needle = Normalized::new(b"foo  ", ALL);
        assert!(needle.last_line_trimmed);
        assert_eq!(hay.find(&needle), vec![7..10]);
    }

    #[test]
    fn punct_bytes_borrows_when_unchanged() {
        assert!(matches!(punct_bytes(b"plain"), Cow::Borrowed(_)));
        assert!(matches!(
            punct_bytes("caf\u{e9}".as_bytes()),
            Cow::Borrowed(_)
        ));
        assert_eq!(&*punct_bytes("\u{2018}x\u{2019}".as_bytes()), b"'x'");
    }
}
