//! When `old_string` is not found: show the region of the file that looks most like it.
//!
//! A model that misquoted a line needs to see the real text, so the error shows a few
//! line-numbered lines and the first line that differs. The region is found by voting, which is
//! linear in the file: every file line equal (by key: trimmed, punctuation normalised) to line
//! `j` of `old_string` votes for a region starting `j` lines earlier. If no line is equal at all,
//! the file line sharing the most words with `old_string`'s first line wins.

use std::fmt::Write as _;

use super::lines::{FastMap, Lines, key, split};

/// Lines of the closest region shown at most.
const MAX_SHOWN: usize = 10;
/// Characters shown per line.
const MAX_LINE_CHARS: usize = 200;
/// Longest words of `old_string`'s first line searched for in the fallback.
const PROBE_WORDS: usize = 4;
/// Positions in `old_string` one distinct line votes for at most, so voting stays linear in
/// the file whatever `old_string` repeats.
const MAX_POSITIONS_PER_LINE: usize = 16;
/// Occurrences of one word scored at most in the fallback.
const MAX_WORD_HITS: usize = 5000;

/// The body of the "not found" error after its first sentence: the closest region and the first
/// line that differs, or a hint when nothing in the file resembles `old`.
pub(super) fn describe(body: &[u8], old: &str) -> String {
    let lines = Lines::new(body);
    let (old_lines, _) = split(old);
    let Some(start) = best_start(body, &lines, &old_lines) else {
        return "No line of the file resembles old_string; use read_file to see the file's \
            current content and copy old_string from it."
            .to_string();
    };
    let shown_end = (start + old_lines.len().min(MAX_SHOWN) + 1).min(lines.len());
    let shown_start = start.saturating_sub(1);
    let mut out = format!(
        "The closest region is at lines {}-{}:\n",
        start + 1,
        (start + old_lines.len()).min(lines.len())
    );
    for i in shown_start..shown_end {
        let _ = writeln!(out, "{:>6}\t{}", i + 1, shown(lines.content(i)));
    }
    out.push_str(&first_difference(&lines, &old_lines, start));
    out.push_str(
        "\nCopy old_string exactly from the file (read_file shows the current text) and retry.",
    );
    out
}

fn shown(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let count = text.chars().count();
    if count > MAX_LINE_CHARS {
        let cut: String = text.chars().take(MAX_LINE_CHARS).collect();
        format!("{cut}... [line truncated, {count} chars]")
    } else {
        text.into_owned()
    }
}

/// The 0-based line where the best region starts.
fn best_start(body: &[u8], lines: &Lines<'_>, old: &[&str]) -> Option<usize> {
    if lines.len() == 0 {
        return None;
    }
    let keys: Vec<Vec<u8>> = old.iter().map(|l| key(l.as_bytes()).into_owned()).collect();
    // Lines without a letter or digit (`}`, blank) say little about where a block is, unless
    // nothing else is there.
    let telling = |k: &[u8]| k.iter().any(|b| b.is_ascii_alphanumeric() || *b >= 0x80);
    let any_telling = keys.iter().any(|k| telling(k));
    let mut wanted: FastMap<&[u8], Vec<usize>> = FastMap::default();
    for (j, k) in keys.iter().enumerate() {
        if !k.is_empty() && (telling(k) || !any_telling) {
            let at = wanted.entry(k.as_slice()).or_default();
            // Each file line casts one vote per position of its key, so a key repeated
            // throughout `old_string` (20,000 lines of `a` against a file of 4 million)
            // made this quadratic: hours of the host's CPU in one tool call, past the run's
            // timeout. The first few positions of a key place the region as well.
            if at.len() < MAX_POSITIONS_PER_LINE {
                at.push(j);
            }
        }
    }
    let min_len = wanted.keys().map(|k| k.len()).min().unwrap_or(usize::MAX);
    let mut votes = vec![0u32; lines.len()];
    let mut best: Option<(u32, usize)> = None;
    for i in 0..lines.len() {
        let raw = lines.content(i);
        if raw.len() < min_len {
            continue;
        }
        let Some(js) = wanted.get(&*key(raw)) else {
            continue;
        };
        for &j in js {
            if let Some(s) = i.checked_sub(j) {
                votes[s] += 1;
                if best.is_none_or(|(v, at)| votes[s] > v || (votes[s] == v && s < at)) {
                    best = Some((votes[s], s));
                }
            }
        }
    }
    if let Some((_, s)) = best {
        return Some(s);
    }
    by_words(body, lines, old)
}

/// Fallback: the line sharing the most distinct words with the first non-blank old line. Only
/// lines holding one of its longest words are scored, found with `memmem`.
fn by_words(body: &[u8], lines: &Lines<'_>, old: &[&str]) -> Option<usize> {
    let (j, first) = old.iter().enumerate().find(|(_, l)| !l.trim().is_empty())?;
    // Each distinct word gets a bit, so a line's score is the number of distinct words it shares.
    let mut wanted: FastMap<&[u8], u32> = FastMap::default();
    for w in words(first.as_bytes()) {
        let bit = wanted.len() as u32;
        if bit < 64 && !wanted.contains_key(w) {
            wanted.insert(w, bit);
        }
    }
    let mut longest: Vec<&[u8]> = wanted.keys().copied().collect();
    longest.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
    let score = |line: usize| {
        let mut seen = 0u64;
        for w in words(lines.content(line)) {
            if let Some(&bit) = wanted.get(w) {
                seen |= 1 << bit;
            }
        }
        seen.count_ones()
    };
    let mut best: Option<(u32, usize)> = None;
    for w in longest.into_iter().take(PROBE_WORDS) {
        for hit in memchr::memmem::find_iter(body, w).take(MAX_WORD_HITS) {
            let glued_before = hit > 0 && is_word_byte(body[hit - 1]);
            let glued_after = body.get(hit + w.len()).is_some_and(|&b| is_word_byte(b));
            if glued_before || glued_after {
                continue;
            }
            let line = lines.line_of(hit);
            let s = score(line);
            if best.is_none_or(|(b, l)| s > b || (s == b && line < l)) {
                best = Some((s, line));
            }
        }
    }
    best.map(|(_, i)| i.saturating_sub(j))
}

/// Letters, digits and `_`. Non-ASCII bytes separate words, so typographic quotes glued to a
/// word do not change it (both sides are split the same way).
fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn words(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    bytes.split(|&b| !is_word_byte(b)).filter(|w| w.len() >= 2)
}

/// "First difference" lines comparing `old` with the file from line `start`.
fn first_difference(lines: &Lines<'_>, old: &[&str], start: usize) -> String {
    let k = old.len();
    for (j, want) in old.iter().enumerate() {
        let i = start + j;
        if i >= lines.len() {
            return format!(
                "The file ends at line {}, but old_string continues with line {} of {k}: {want:?}",
                lines.len(),
                j + 1
            );
        }
        let have = String::from_utf8_lossy(lines.content(i));
        // The first line may start mid-line and the last may stop mid-line.
        let same = match (j == 0, j + 1 == k) {
            (true, true) => have.contains(want),
            (true, false) => have.ends_with(want),
            (false, true) => have.starts_with(want),
            (false, false) => have == *want,
        };
        if !same {
            return format!(
                "First difference: line {} of the file vs line {} of old_string:\n  file:       {:?}\n  old_string: {:?}",
                i + 1,
                j + 1,
                shown(lines.content(i)),
                want
            );
        }
    }
    "Every line of old_string appears here, but not as one contiguous text (check line \
        breaks at the start and end of old_string)."
        .to_string()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn shows_region_and_first_difference() {
        let body = b"fn a() {}\n\nfn main() {\n    let x = 1;\n    let y = 2;\n    go(x, y);\n}\n";
        let old = "fn main() {\n    let x = 1;\n    let y = 3;\n    go(x, y);\n}";
        let d = describe(body, old);
        assert!(d.contains("closest region is at lines 3-7"), "{d}");
        assert!(d.contains("     3\tfn main() {"), "{d}");
        assert!(d.contains("     5\t    let y = 2;"), "{d}");
        assert!(
            d.contains("line 5 of the file vs line 3 of old_string"),
            "{d}"
        );
        assert!(d.contains("\"    let y = 3;\""), "{d}");
    }

    #[test]
    fn falls_back_to_shared_words() {
        let body = b"alpha beta\ngamma delta\nepsilon\n";
        let d = describe(body, "gamma deltas zeta");
        assert!(d.contains("     2\tgamma delta"), "{d}");
        assert!(d.contains("line 2 of the file"), "{d}");
    }

    #[test]
    fn nothing_similar() {
        let d = describe(b"aaa\n", "zzz qqq");
        assert!(d.contains("No line of the file resembles"), "{d}");
    }
}
