//! Finding a hunk's lines in a file by content, from strict to loose.
//!
//! Each strategy is tried over the whole search range before the next, looser one is: an exact
//! match further down always wins over a fuzzy one nearby. Within a strategy the first match at
//! or after the cursor wins, because hunks are written in file order and the `@@ context` line
//! is how a patch disambiguates repeated code. The four strategies are the ones codex-trained
//! models expect: exact, trailing whitespace ignored, surrounding whitespace ignored, and Unicode
//! punctuation normalised (curly quotes, dashes, odd spaces) on top of that.

use std::borrow::Cow;

use crate::tools::text::punct_char;

/// How lines were compared when a hunk was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Strategy {
    /// Byte for byte.
    Exact,
    /// Trailing spaces and tabs ignored.
    TrailingWhitespace,
    /// Leading and trailing whitespace ignored.
    Trimmed,
    /// Trimmed, and typographic punctuation mapped to ASCII.
    Punctuation,
}

impl Strategy {
    /// Every strategy, strictest first.
    pub const ALL: [Strategy; 4] = [
        Strategy::Exact,
        Strategy::TrailingWhitespace,
        Strategy::Trimmed,
        Strategy::Punctuation,
    ];

    /// How the strategy is named to the model.
    pub fn describe(self) -> &'static str {
        match self {
            Strategy::Exact => "exactly",
            Strategy::TrailingWhitespace => "ignoring trailing whitespace",
            Strategy::Trimmed => "ignoring indentation and trailing whitespace",
            Strategy::Punctuation => "with Unicode punctuation normalised",
        }
    }

    /// Short name for the run's edit statistics.
    pub fn tag(self) -> &'static str {
        match self {
            Strategy::Exact => "exact",
            Strategy::TrailingWhitespace => "trailing_whitespace",
            Strategy::Trimmed => "trimmed",
            Strategy::Punctuation => "punctuation",
        }
    }

    /// The form of `line` this strategy compares.
    pub fn key(self, line: &str) -> Cow<'_, str> {
        match self {
            Strategy::Exact => Cow::Borrowed(line),
            Strategy::TrailingWhitespace => Cow::Borrowed(line.trim_end()),
            Strategy::Trimmed => Cow::Borrowed(line.trim()),
            Strategy::Punctuation => {
                let mapped: String = line.chars().map(punct_char).collect();
                Cow::Owned(mapped.trim().to_string())
            }
        }
    }
}

/// Where a match may lie.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Anchor {
    /// Anywhere at or after the cursor.
    Anywhere,
    /// At the end of the file (only blank lines may follow): the hunk had `*** End of File`.
    End,
}

/// A located sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Found {
    /// Index of the first matched line.
    pub index: usize,
    /// The strategy that matched.
    pub strategy: Strategy,
}

/// Finds `pattern` (non-empty) in `lines` starting at or after `from`.
pub(crate) fn seek(lines: &[&str], pattern: &[&str], from: usize, anchor: Anchor) -> Option<Found> {
    if pattern.is_empty() || pattern.len() > lines.len() || from > lines.len() - pattern.len() {
        return None;
    }
    let candidates: Vec<usize> = match anchor {
        Anchor::Anywhere => (from..=lines.len() - pattern.len()).collect(),
        Anchor::End => {
            // The match must end after the last non-blank line; prefer the very end.
            let content_end = lines
                .iter()
                .rposition(|l| !l.trim().is_empty())
                .map_or(0, |i| i + 1);
            let lowest = content_end.saturating_sub(pattern.len()).max(from);
            (lowest..=lines.len() - pattern.len()).rev().collect()
        }
    };
    for strategy in Strategy::ALL {
        let keys: Vec<Cow<'_, str>> = lines.iter().map(|l| strategy.key(l)).collect();
        let wanted: Vec<Cow<'_, str>> = pattern.iter().map(|l| strategy.key(l)).collect();
        if let Some(&index) = candidates
            .iter()
            .find(|&&start| keys[start..start + wanted.len()] == wanted[..])
        {
            return Some(Found { index, strategy });
        }
    }
    None
}

/// The window of `lines[from..]` most like `pattern`, for the "closest region" of a not-found
/// error: line by line similarity (equal lines count fully), or, on very large searches, equal
/// lines only. `None` when nothing is reasonably alike.
pub(crate) fn closest(lines: &[&str], pattern: &[&str], from: usize) -> Option<usize> {
    /// Line comparisons above which similarity is too slow and only equality is counted.
    const MAX_FUZZY_PAIRS: usize = 200_000;
    if pattern.is_empty() || from >= lines.len() {
        return None;
    }
    let keys: Vec<Cow<'_, str>> = lines.iter().map(|l| Strategy::Punctuation.key(l)).collect();
    let wanted: Vec<Cow<'_, str>> = pattern
        .iter()
        .map(|l| Strategy::Punctuation.key(l))
        .collect();
    let last_start = lines.len().saturating_sub(pattern.len()).max(from);
    let fuzzy = (last_start + 1 - from) * wanted.len() <= MAX_FUZZY_PAIRS;
    let similarity = |have: &str, want: &str| {
        if have == want {
            if want.is_empty() { 0.0 } else { 1.0 }
        } else if fuzzy {
            strsim::normalized_levenshtein(have, want)
        } else {
            0.0
        }
    };
    let mut best: Option<(f64, usize)> = None;
    for start in from..=last_start {
        let score: f64 = wanted
            .iter()
            .enumerate()
            .map(|(j, w)| keys.get(start + j).map_or(0.0, |k| similarity(k, w)))
            .sum();
        if best.is_none_or(|(s, _)| score > s) {
            best = Some((score, start));
        }
    }
    let needed = if fuzzy {
        wanted.len() as f64 * 0.5
    } else {
        1.0
    };
    best.filter(|(score, _)| *score >= needed)
        .map(|(_, start)| start)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn find(lines: &[&str], pattern: &[&str]) -> Option<(usize, Strategy)> {
        seek(lines, pattern, 0, Anchor::Anywhere).map(|f| (f.index, f.strategy))
    }

    #[test]
    fn exact_match_first() {
        let lines = ["a", "b", "c", "b", "c"];
        assert_eq!(find(&lines, &["b", "c"]), Some((1, Strategy::Exact)));
        assert_eq!(
            seek(&lines, &["b", "c"], 2, Anchor::Anywhere).map(|f| f.index),
            Some(3)
        );
        assert_eq!(find(&lines, &["c", "a"]), None);
    }

    #[test]
    fn exact_further_down_beats_fuzzy_nearby() {
        let lines = ["x  ", "y", "x", "y"];
        assert_eq!(find(&lines, &["x", "y"]), Some((2, Strategy::Exact)));
    }

    #[test]
    fn each_looser_strategy_in_turn() {
        assert_eq!(
            find(&["fn a() {   ", "}"], &["fn a() {", "}"]),
            Some((0, Strategy::TrailingWhitespace))
        );
        assert_eq!(
            find(&["    let x = 1;", "}"], &["let x = 1;", "}"]),
            Some((0, Strategy::Trimmed))
        );
        assert_eq!(
            find(
                &["say(\u{201C}hi\u{201D}) \u{2014} ok", "it\u{2019}s"],
                &["say(\"hi\") - ok", "it's"]
            ),
            Some((0, Strategy::Punctuation))
        );
        assert_eq!(
            find(&["a\u{00A0}b"], &["a b"]),
            Some((0, Strategy::Punctuation))
        );
    }

    #[test]
    fn end_anchor_matches_only_at_the_end() {
        let lines = ["x", "end", "x", "end"];
        assert_eq!(
            seek(&lines, &["x", "end"], 0, Anchor::End).map(|f| f.index),
            Some(2)
        );
        assert_eq!(seek(&lines, &["x"], 0, Anchor::End), None);
        let trailing_blank = ["x", "end", "", "  "];
        assert_eq!(
            seek(&trailing_blank, &["x", "end"], 0, Anchor::End).map(|f| f.index),
            Some(0)
        );
    }

    #[test]
    fn degenerate_inputs_find_nothing() {
        assert_eq!(find(&["a"], &[]), None);
        assert_eq!(find(&["a"], &["a", "b"]), None);
        assert_eq!(seek(&["a", "b"], &["b"], 5, Anchor::Anywhere), None);
    }

    #[test]
    fn closest_region_has_most_shared_lines() {
        let lines = [
            "fn a() {", "one", "two", "}", "fn b() {", "one", "three", "}",
        ];
        assert_eq!(closest(&lines, &["fn b() {", "one", "four"], 0), Some(4));
        assert_eq!(closest(&lines, &["zzz"], 0), None);
        assert_eq!(closest(&lines, &["one"], 2), Some(5));
        // No equal line, but a clearly similar one.
        assert_eq!(closest(&lines, &["fn b() {", "thre"], 0), Some(4));
        assert_eq!(closest(&lines, &["    let x = 3;"], 0), None);
    }
}
