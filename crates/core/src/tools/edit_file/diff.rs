//! The unified diff shown after an edit, computed only around the edited places.
//!
//! Diffing a whole 10 MB file to show a three-line change would dominate the edit's cost. The
//! changes already say where the edit is, so each one becomes a region (its lines plus three
//! lines of context either side), overlapping regions merge, and only those regions are diffed
//! with `similar`. The new side of a region is assembled from the old bytes and the replacement
//! texts, so the diff needs neither a second copy of the file nor a pass over it. Hunk headers
//! carry the real line numbers of the whole file.

use std::fmt::Write as _;
use std::ops::Range;
use std::time::Duration;

use similar::{ChangeTag, TextDiff};

use super::lines::{back_lines, forward_lines};

/// Lines of context around each change.
const CONTEXT: usize = 3;
/// Diff lines shown at most; the rest is summarised.
const MAX_DIFF_LINES: usize = 400;

/// One replacement: the old byte range and the exact bytes written in its place.
#[derive(Debug, Clone)]
pub(super) struct Change {
    /// Bytes replaced in the old body.
    pub old: Range<usize>,
    /// What replaced them (line endings already adapted).
    pub text: String,
}

/// The unified diff (`---`/`+++` headers, `@@` hunks with line numbers) of `old` changed by
/// `changes` (sorted, non-overlapping, in `old` coordinates).
pub(super) fn unified(path: &str, old: &[u8], changes: &[Change]) -> String {
    let mut out = format!("--- a/{path}\n+++ b/{path}\n");
    let mut shown = 0usize;
    let (merged, omitted) = merge(old, changes);
    let mut not_shown = omitted;
    let mut old_line = 0usize;
    let mut counted_to = 0usize;
    let mut line_delta: isize = 0;
    for (range, idx) in &merged {
        if shown >= MAX_DIFF_LINES {
            not_shown += idx.len();
            continue;
        }
        old_line += count_lines(&old[counted_to..range.start]);
        counted_to = range.start;
        let new_line = (old_line as isize + line_delta).max(0) as usize;
        let region_changes = &changes[idx.clone()];
        let mut new_bytes = Vec::with_capacity(range.len() + 64);
        let mut pos = range.start;
        for c in region_changes {
            new_bytes.extend_from_slice(&old[pos..c.old.start]);
            new_bytes.extend_from_slice(c.text.as_bytes());
            pos = c.old.end;
            line_delta +=
                count_lines(c.text.as_bytes()) as isize - count_lines(&old[c.old.clone()]) as isize;
        }
        new_bytes.extend_from_slice(&old[pos..range.end]);
        let a = display_text(&old[range.clone()]);
        let b = display_text(&new_bytes);
        shown += render_hunks(&mut out, &a, &b, old_line, new_line, MAX_DIFF_LINES - shown);
    }
    if not_shown > 0 {
        let _ = writeln!(
            out,
            "... [diff truncated: {not_shown} more replacements not shown; use read_file to see the result]"
        );
    }
    out
}

/// Appends the hunks of one region, at most `budget` lines (one hunk always shows whole or not
/// at all). Returns the lines written, or `budget` when something had to be left out.
fn render_hunks(
    out: &mut String,
    a: &str,
    b: &str,
    old_line: usize,
    new_line: usize,
    budget: usize,
) -> usize {
    let diff = TextDiff::configure()
        .timeout(Duration::from_millis(100))
        .diff_lines(a, b);
    let mut used = 0;
    for group in diff.grouped_ops(CONTEXT) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let o = first.old_range().start..last.old_range().end;
        let n = first.new_range().start..last.new_range().end;
        let mut hunk = format!(
            "@@ -{} +{} @@\n",
            header_range(old_line + o.start, o.len()),
            header_range(new_line + n.start, n.len())
        );
        let mut lines = 1;
        for op in &group {
            for change in diff.iter_changes(op) {
                let sign = match change.tag() {
                    ChangeTag::Equal => ' ',
                    ChangeTag::Delete => '-',
                    ChangeTag::Insert => '+',
                };
                let value = change.value();
                let _ = writeln!(hunk, "{sign}{}", value.strip_suffix('\n').unwrap_or(value));
                if change.missing_newline() {
                    hunk.push_str("\\ No newline at end of file\n");
                }
                lines += 1;
            }
        }
        if used + lines > budget && used > 0 {
            let _ = writeln!(
                out,
                "... [diff truncated: the change is too long to show whole; use read_file to see the result]"
            );
            return budget;
        }
        used += lines;
        out.push_str(&hunk);
    }
    used
}

/// `start,len` of a hunk header (1-based; an empty range names the line before it).
fn header_range(start0: usize, len: usize) -> String {
    if len == 0 {
        format!("{start0},0")
    } else {
        format!("{},{len}", start0 + 1)
    }
}

/// Text as the model reads it elsewhere: decoded lossily, CRLF shown as LF.
fn display_text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).replace("\r\n", "\n")
}

fn count_lines(src: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', src).count()
}

/// A region's old byte range and the indices of the changes inside it.
type Region = (Range<usize>, Range<usize>);

/// One region of whole lines per change, merged where their context overlaps: the old byte
/// range and the indices of the changes inside it. Stops once the regions cover more lines than
/// the diff can show; the second value counts the changes left out.
fn merge(old: &[u8], changes: &[Change]) -> (Vec<Region>, usize) {
    let mut merged: Vec<Region> = Vec::new();
    let mut covered = 0usize;
    for (i, c) in changes.iter().enumerate() {
        if covered > MAX_DIFF_LINES {
            return (merged, changes.len() - i);
        }
        let start = back_lines(old, c.old.start, CONTEXT);
        let end = forward_lines(old, c.old.end, CONTEXT);
        match merged.last_mut() {
            Some((r, idx)) if start <= r.end => {
                if end > r.end {
                    covered += count_lines(&old[r.end..end]);
                    r.end = end;
                }
                idx.end = i + 1;
            }
            _ => {
                covered += count_lines(&old[start..end]);
                merged.push((start..end, i..i + 1));
            }
        }
    }
    (merged, 0)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn change(old: &str, find: &str, with: &str) -> Change {
        let at = old.find(find).unwrap();
        Change {
            old: at..at + find.len(),
            text: with.to_string(),
        }
    }

    #[test]
    fn hunk_has_line_numbers_and_three_lines_of_context() {
        let old: String = (1..=20).map(|i| format!("line {i}\n")).collect();
        let d = unified(
            "f.txt",
            old.as_bytes(),
            &[change(&old, "line 10\n", "ten\n")],
        );
        assert_eq!(
            d,
            "--- a/f.txt\n+++ b/f.txt\n@@ -7,7 +7,7 @@\n line 7\n line 8\n line 9\n-line 10\n+ten\n line 11\n line 12\n line 13\n"
        );
    }

    #[test]
    fn later_hunks_account_for_earlier_growth() {
        let old: String = (1..=30).map(|i| format!("l{i}\n")).collect();
        let changes = vec![change(&old, "l2\n", "A\nB\n"), change(&old, "l25\n", "X\n")];
        let d = unified("f", old.as_bytes(), &changes);
        assert!(d.contains("@@ -1,5 +1,6 @@"), "{d}");
        assert!(d.contains("@@ -22,7 +23,7 @@"), "{d}");
    }

    #[test]
    fn nearby_changes_share_one_hunk() {
        let old: String = (1..=10).map(|i| format!("l{i}\n")).collect();
        let changes = vec![change(&old, "l4\n", "a\n"), change(&old, "l6\n", "b\n")];
        let d = unified("f", old.as_bytes(), &changes);
        assert_eq!(d.matches("@@ -").count(), 1, "{d}");
        assert!(d.contains("@@ -1,9 +1,9 @@"), "{d}");
    }

    #[test]
    fn crlf_is_shown_as_lf_and_missing_final_newline_is_marked() {
        let old = "a\r\nb";
        let d = unified("f", old.as_bytes(), &[change(old, "b", "c")]);
        assert!(d.contains("-b\n\\ No newline at end of file\n+c\n"), "{d}");
        assert!(!d.contains('\r'));
    }

    #[test]
    fn many_changes_are_cut_with_a_note() {
        let old: String = (1..=4000).map(|i| format!("l{i}\n")).collect();
        let changes: Vec<Change> = (11..=4000)
            .step_by(10)
            .map(|i| change(&old, &format!("\nl{i}\n"), &format!("\nL{i}\n")))
            .collect();
        let d = unified("f", old.as_bytes(), &changes);
        assert!(d.lines().count() < 450, "{}", d.lines().count());
        assert!(d.contains("more replacements not shown"), "{d}");
    }

    #[test]
    fn changing_every_line_stops_at_the_cap() {
        let old: String = (0..5000).map(|_| "x\n").collect();
        let changes: Vec<Change> = (0..5000)
            .map(|i| Change {
                old: i * 2..i * 2 + 1,
                text: "y".to_string(),
            })
            .collect();
        let d = unified("f", old.as_bytes(), &changes);
        assert!(d.lines().count() < 1000, "{}", d.lines().count());
        assert!(d.contains("more replacements not shown"), "{d}");
        assert!(d.starts_with("--- a/f\n+++ b/f\n@@ -1,"), "{d}");
    }
}
