//! Narrowing a search to the few places where a literal piece of `old_string` occurs.
//!
//! The fuzzy strategies only change bytes at line ends (line endings, trailing whitespace), turn
//! typographic punctuation into `'`, `"`, `-` or a space, or change indentation. So a run of the
//! normalised `old_string` that avoids line breaks and those characters appears byte for byte in
//! the raw file wherever a match is. Searching for that run with `memmem` and normalising only a
//! window of lines around each occurrence gives exactly the matches a full-file pass would, at a
//! fraction of the cost. When the run is too common, the caller falls back to the whole file.

use std::ops::Range;

use memchr::memmem;

use super::lines::{back_lines, forward_lines};

/// Occurrences beyond which windows stop paying off.
const MAX_HITS: usize = 2000;

/// Bytes a probe must avoid when punctuation may have been normalised.
pub(super) const PUNCT_OUTPUTS: &[u8] = b"'\"- ";

/// The longest run of `text` containing no line break and none of `avoid`.
pub(super) fn longest_run<'t>(text: &'t [u8], avoid: &[u8]) -> Option<&'t [u8]> {
    text.split(|b| *b == b'\n' || avoid.contains(b))
        .max_by_key(|run| run.len())
        .filter(|run| !run.is_empty())
}

/// Whole-line windows around each occurrence of `probe` in `body`: `before` lines before the
/// occurrence's line and `after` lines after it, merged where they overlap. `None` when the probe
/// is too common to be worth it (search the whole file instead).
pub(super) fn windows(
    body: &[u8],
    probe: &[u8],
    before: usize,
    after: usize,
) -> Option<Vec<Range<usize>>> {
    let mut out: Vec<Range<usize>> = Vec::new();
    for (n, hit) in memmem::find_iter(body, probe).enumerate() {
        if n >= MAX_HITS {
            return None;
        }
        let start = back_lines(body, hit, before);
        let end = forward_lines(body, hit + probe.len(), after);
        match out.last_mut() {
            Some(last) if start <= last.end => last.end = last.end.max(end),
            _ => out.push(start..end),
        }
    }
    Some(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn longest_run_avoids_breaks_and_punctuation() {
        assert_eq!(longest_run(b"ab\ncdef\ng", b""), Some(&b"cdef"[..]));
        assert_eq!(
            longest_run(b"say(\"hello\") - now", PUNCT_OUTPUTS),
            Some(&b"hello"[..])
        );
        assert_eq!(longest_run(b"\n\n", b""), None);
    }

    #[test]
    fn windows_cover_lines_around_hits_and_merge() {
        let body = b"a\nb\nX\nc\nd\ne\nf\nX\ng\n";
        let w = windows(body, b"X", 1, 1).unwrap();
        assert_eq!(w, vec![2..8, 12..18]);
        assert_eq!(&body[w[0].clone()], b"b\nX\nc\n");
        let merged = windows(body, b"X", 3, 3).unwrap();
        assert_eq!(merged, vec![0..body.len()]);
        assert!(windows(body, b"Q", 1, 1).unwrap().is_empty());
    }
}
