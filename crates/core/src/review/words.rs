//! Word-level highlights inside a changed line pair: which byte ranges of the old and the new
//! line actually differ, so a one-word change is not shown as a whole red and green line.

use std::ops::Range;

use similar::{Algorithm, ChangeTag, TextDiff};

/// Byte ranges that differ, on each side.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Highlight {
    /// Ranges in the old line.
    pub old: Vec<Range<usize>>,
    /// Ranges in the new line.
    pub new: Vec<Range<usize>>,
}

/// Lines longer than this get no word diff (whole-line highlight): the diff is quadratic in
/// the worst case and a minified line is unreadable word by word anyway.
const MAX_LINE: usize = 2_000;

/// The differing word ranges between `old` and `new` (adjacent ranges merged). Returns an
/// empty highlight when the lines are equal, too long, or share nothing (then the whole line
/// is the change and the caller shows it as such).
pub fn word_highlights(old: &str, new: &str) -> Highlight {
    if old == new || old.len() > MAX_LINE || new.len() > MAX_LINE {
        return Highlight::default();
    }
    let diff = TextDiff::configure()
        .algorithm(Algorithm::Patience)
        .diff_words(old, new);
    let mut out = Highlight::default();
    let (mut old_at, mut new_at) = (0usize, 0usize);
    let mut shared = 0usize;
    for change in diff.iter_all_changes() {
        let len = change.value().len();
        match change.tag() {
            ChangeTag::Equal => {
                if !change.value().trim().is_empty() {
                    shared += len;
                }
                old_at += len;
                new_at += len;
            }
            ChangeTag::Delete => {
                push_merged(&mut out.old, old_at..old_at + len);
                old_at += len;
            }
            ChangeTag::Insert => {
                push_merged(&mut out.new, new_at..new_at + len);
                new_at += len;
            }
        }
    }
    if shared == 0 {
        return Highlight::default();
    }
    out
}

fn push_merged(ranges: &mut Vec<Range<usize>>, range: Range<usize>) {
    if let Some(last) = ranges.last_mut()
        && last.end == range.start
    {
        last.end = range.end;
        return;
    }
    ranges.push(range);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_changed_word_is_highlighted_alone() {
        let h = word_highlights("    if count > LIMIT {", "    if count >= LIMIT {");
        assert_eq!(h.old.len(), 1);
        assert_eq!(h.new.len(), 1);
        assert_eq!(&"    if count > LIMIT {"[h.old[0].clone()], ">");
        assert_eq!(&"    if count >= LIMIT {"[h.new[0].clone()], ">=");
    }

    #[test]
    fn unrelated_or_equal_or_huge_lines_get_no_word_highlight() {
        assert_eq!(
            word_highlights("alpha beta", "gamma delta"),
            Highlight::default()
        );
        assert_eq!(word_highlights("same", "same"), Highlight::default());
        let long = "x ".repeat(2_000);
        assert_eq!(word_highlights(&long, "x"), Highlight::default());
    }

    #[test]
    fn ranges_are_on_char_boundaries_with_unicode() {
        let old = "let naïve = \"héllo\";";
        let new = "let naïve = \"hallo wörld\";";
        let h = word_highlights(old, new);
        for r in &h.old {
            assert!(old.is_char_boundary(r.start) && old.is_char_boundary(r.end));
        }
        for r in &h.new {
            assert!(new.is_char_boundary(r.start) && new.is_char_boundary(r.end));
        }
        assert!(!h.new.is_empty());
    }
}
