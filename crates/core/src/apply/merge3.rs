//! Line-based three-way merge of (base, the user's current file, the model's proposal).
//!
//! Both sides are diffed against base with `similar` (Myers on line slices). The changed base
//! ranges of both sides are then walked together in base order and grouped whenever they
//! overlap or touch (closed intervals, like git: two edits on adjacent lines, or two insertions
//! at the same point, are one group). A group changed by one side only takes that side's lines;
//! a group both sides changed identically takes them once; anything else is a conflict.
//!
//! Lines keep their own terminators (`\n`, `\r\n`, or none on a last line), so CRLF files and
//! files without a trailing newline come out byte-exact. Files containing a NUL byte are treated
//! as binary: they merge only when one side left them untouched.

use std::ops::Range;

use similar::{Algorithm, DiffOp, capture_diff_slices};

/// Which text a conflict marker block shows first: the user's lines, labelled like git.
pub const MARKER_OURS: &str = "<<<<<<< yours";
/// Separates the user's lines from the model's lines inside a conflict block.
pub const MARKER_SEP: &str = "=======";
/// Closes a conflict block after the model's lines.
pub const MARKER_THEIRS: &str = ">>>>>>> model";

/// A span of lines, 1-based, so a UI can point at "lines 12-15" directly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LineSpan {
    /// First line (1-based). For an empty span, the line before which the text would sit.
    pub start: usize,
    /// Number of lines (0 for a pure insertion point).
    pub len: usize,
}

impl LineSpan {
    fn from_range(r: &Range<usize>) -> Self {
        Self {
            start: r.start + 1,
            len: r.end - r.start,
        }
    }
}

/// One region both sides changed differently: where it sits in each of the three texts.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ConflictRegion {
    /// The lines of base both sides touched.
    pub base: LineSpan,
    /// The user's lines for that region (in the user's current file).
    pub ours: LineSpan,
    /// The model's lines for that region (in the proposed file).
    pub theirs: LineSpan,
}

/// What a merge produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MergeOutcome {
    /// Every change combined without overlap: this is the merged content.
    Clean(Vec<u8>),
    /// At least one region conflicts. `with_markers` is the file with git-style marker blocks
    /// (None for binary content, where markers would corrupt the file).
    Conflict {
        /// Regions that conflict, in file order.
        regions: Vec<ConflictRegion>,
        /// The merged text with `<<<<<<< yours` / `=======` / `>>>>>>> model` blocks.
        with_markers: Option<Vec<u8>>,
    },
}

/// Merges `ours` (the user's current file) and `theirs` (the model's proposal), both descended
/// from `base`.
pub fn merge3(base: &[u8], ours: &[u8], theirs: &[u8]) -> MergeOutcome {
    if ours == theirs || theirs == base {
        return MergeOutcome::Clean(ours.to_vec());
    }
    if ours == base {
        return MergeOutcome::Clean(theirs.to_vec());
    }
    if is_binary(base) || is_binary(ours) || is_binary(theirs) {
        let whole = |t: &[u8]| 0..split_lines(t).len();
        return MergeOutcome::Conflict {
            regions: vec![ConflictRegion {
                base: LineSpan::from_range(&whole(base)),
                ours: LineSpan::from_range(&whole(ours)),
                theirs: LineSpan::from_range(&whole(theirs)),
            }],
            with_markers: None,
        };
    }
    let b = split_lines(base);
    let o = split_lines(ours);
    let t = split_lines(theirs);
    let eol: &[u8] = if [base, ours, theirs].iter().any(|x| has_crlf(x)) {
        b"\r\n"
    } else {
        b"\n"
    };
    let mut chunks: Vec<Chunk> = changes(&b, &o, Side::Ours);
    chunks.extend(changes(&b, &t, Side::Theirs));
    chunks.sort_by_key(|c| (c.base.start, c.base.end));

    let mut out: Vec<u8> = Vec::new();
    let mut regions = Vec::new();
    // Running (new - old) line offset of each side before the current base position.
    let (mut delta_o, mut delta_t) = (0isize, 0isize);
    let mut pos = 0usize;
    let mut i = 0usize;
    while i < chunks.len() {
        let lo = chunks[i].base.start;
        let mut hi = chunks[i].base.end;
        let mut j = i + 1;
        while j < chunks.len() && chunks[j].base.start <= hi {
            hi = hi.max(chunks[j].base.end);
            j += 1;
        }
        let group = &chunks[i..j];
        for line in &b[pos..lo] {
            out.extend_from_slice(line);
        }
        let (mut grow_o, mut grow_t) = (0isize, 0isize);
        let (mut touched_o, mut touched_t) = (false, false);
        for c in group {
            let grow = c.new_len as isize - (c.base.end - c.base.start) as isize;
            match c.side {
                Side::Ours => {
                    grow_o += grow;
                    touched_o = true;
                }
                Side::Theirs => {
                    grow_t += grow;
                    touched_t = true;
                }
            }
        }
        let span = |delta: isize, grow: isize| {
            let start = offset(lo, delta);
            let end = offset(hi, delta + grow);
            start..end
        };
        let ro = span(delta_o, grow_o);
        let rt = span(delta_t, grow_t);
        let (lo_lines, lt_lines) = (&o[ro.clone()], &t[rt.clone()]);
        if touched_o && touched_t && lo_lines != lt_lines {
            regions.push(ConflictRegion {
                base: LineSpan::from_range(&(lo..hi)),
                ours: LineSpan::from_range(&ro),
                theirs: LineSpan::from_range(&rt),
            });
            push_marker(&mut out, MARKER_OURS.as_bytes(), eol);
            push_block(&mut out, lo_lines, eol);
            push_marker(&mut out, MARKER_SEP.as_bytes(), eol);
            push_block(&mut out, lt_lines, eol);
            push_marker(&mut out, MARKER_THEIRS.as_bytes(), eol);
        } else {
            let lines = if touched_o { lo_lines } else { lt_lines };
            for line in lines {
                out.extend_from_slice(line);
            }
        }
        delta_o += grow_o;
        delta_t += grow_t;
        pos = hi;
        i = j;
    }
    for line in &b[pos..] {
        out.extend_from_slice(line);
    }
    if regions.is_empty() {
        MergeOutcome::Clean(out)
    } else {
        MergeOutcome::Conflict {
            regions,
            with_markers: Some(out),
        }
    }
}

/// Splits text into lines that keep their terminator; the last line may have none.
pub fn split_lines(text: &[u8]) -> Vec<&[u8]> {
    text.split_inclusive(|&c| c == b'\n').collect()
}

/// Counts (added, removed) lines between two versions of a file, for "+42 -17" summaries.
pub fn line_delta(old: &[u8], new: &[u8]) -> (usize, usize) {
    if old == new {
        return (0, 0);
    }
    // Whole lines both versions share at the start and at the end change nothing: only the
    // middle is split and diffed (a preview of 1,000 files with one line appended each split
    // and diffed 800,000 lines for it).
    let (old, new) = trim_common_lines(old, new);
    let (a, b) = (split_lines(old), split_lines(new));
    let mut added = 0;
    let mut removed = 0;
    for op in capture_diff_slices(Algorithm::Myers, &a, &b) {
        match op {
            DiffOp::Equal { .. } => {}
            DiffOp::Delete { old_len, .. } => removed += old_len,
            DiffOp::Insert { new_len, .. } => added += new_len,
            DiffOp::Replace {
                old_len, new_len, ..
            } => {
                removed += old_len;
                added += new_len;
            }
        }
    }
    (added, removed)
}

/// `old` and `new` without the whole lines they share at the start and at the end (a line
/// ends after its `\n`; the last one may have none).
fn trim_common_lines<'a>(old: &'a [u8], new: &'a [u8]) -> (&'a [u8], &'a [u8]) {
    let same = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    // Back to the end of the last whole line inside the shared bytes.
    let start = old[..same]
        .iter()
        .rposition(|&c| c == b'\n')
        .map_or(0, |at| at + 1);
    let (old, new) = (&old[start..], &new[start..]);
    let same = old
        .iter()
        .rev()
        .zip(new.iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let at_line_start = |text: &[u8], at: usize| at == 0 || text[at - 1] == b'\n';
    let mut keep = same;
    // Forward to the start of a line in both (the shared bytes are the same in both, so a
    // `\n` inside them starts a line in each).
    while keep > 0
        && !(at_line_start(old, old.len() - keep) && at_line_start(new, new.len() - keep))
    {
        let from = old.len() - keep;
        match old[from..].iter().position(|&c| c == b'\n') {
            Some(at) => keep -= at + 1,
            None => keep = 0,
        }
    }
    (&old[..old.len() - keep], &new[..new.len() - keep])
}

/// True when the content holds a NUL byte in its first 8 KiB, the usual binary heuristic.
pub fn is_binary(text: &[u8]) -> bool {
    text.iter().take(8192).any(|&c| c == 0)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Ours,
    Theirs,
}

/// One changed base range of one side and how many lines replace it.
#[derive(Debug, Clone)]
struct Chunk {
    side: Side,
    base: Range<usize>,
    new_len: usize,
}

fn changes(base: &[&[u8]], other: &[&[u8]], side: Side) -> Vec<Chunk> {
    capture_diff_slices(Algorithm::Myers, base, other)
        .into_iter()
        .filter_map(|op| match op {
            DiffOp::Equal { .. } => None,
            DiffOp::Delete {
                old_index, old_len, ..
            } => Some(Chunk {
                side,
                base: old_index..old_index + old_len,
                new_len: 0,
            }),
            DiffOp::Insert {
                old_index, new_len, ..
            } => Some(Chunk {
                side,
                base: old_index..old_index,
                new_len,
            }),
            DiffOp::Replace {
                old_index,
                old_len,
                new_len,
                ..
            } => Some(Chunk {
                side,
                base: old_index..old_index + old_len,
                new_len,
            }),
        })
        .collect()
}

fn offset(pos: usize, delta: isize) -> usize {
    pos.saturating_add_signed(delta)
}

fn has_crlf(text: &[u8]) -> bool {
    text.windows(2).any(|w| w == b"\r\n")
}

fn push_marker(out: &mut Vec<u8>, marker: &[u8], eol: &[u8]) {
    out.extend_from_slice(marker);
    out.extend_from_slice(eol);
}

/// Pushes lines inside a marker block, ending an unterminated last line so the next marker
/// starts on its own line.
fn push_block(out: &mut Vec<u8>, lines: &[&[u8]], eol: &[u8]) {
    for line in lines {
        out.extend_from_slice(line);
    }
    if let Some(last) = lines.last()
        && !last.ends_with(b"\n")
    {
        out.extend_from_slice(eol);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn clean(base: &str, ours: &str, theirs: &str) -> String {
        match merge3(base.as_bytes(), ours.as_bytes(), theirs.as_bytes()) {
            MergeOutcome::Clean(v) => String::from_utf8(v).unwrap(),
            other => panic!("expected a clean merge, got {other:?}"),
        }
    }

    fn conflict(base: &str, ours: &str, theirs: &str) -> (Vec<ConflictRegion>, String) {
        match merge3(base.as_bytes(), ours.as_bytes(), theirs.as_bytes()) {
            MergeOutcome::Conflict {
                regions,
                with_markers,
            } => (regions, String::from_utf8(with_markers.unwrap()).unwrap()),
            other => panic!("expected a conflict, got {other:?}"),
        }
    }

    const BASE: &str = "a\nb\nc\nd\ne\nf\ng\n";

    #[test]
    fn non_overlapping_edits_combine() {
        let ours = "A\nb\nc\nd\ne\nf\ng\n";
        let theirs = "a\nb\nc\nd\ne\nf\nG\n";
        assert_eq!(clean(BASE, ours, theirs), "A\nb\nc\nd\ne\nf\nG\n");
    }

    #[test]
    fn line_count_changes_on_both_sides_stay_aligned() {
        let ours = "x\ny\na\nb\nc\nd\ne\nf\ng\n";
        let theirs = "a\nb\nc\nd\ne\ng\nh\n";
        assert_eq!(clean(BASE, ours, theirs), "x\ny\na\nb\nc\nd\ne\ng\nh\n");
    }

    #[test]
    fn identical_changes_are_taken_once() {
        let both = "a\nb\nC\nd\ne\nf\ng\n";
        let ours = "a\nb\nC\nd\ne\nf\ng\nextra\n";
        assert_eq!(clean(BASE, ours, both), ours);
    }

    #[test]
    fn overlapping_changes_conflict_with_markers_and_regions() {
        let ours = "a\nb\nmine\nd\ne\nf\ng\n";
        let theirs = "a\nb\nmodel\nd\ne\nf\ng\n";
        let (regions, text) = conflict(BASE, ours, theirs);
        assert_eq!(
            text,
            "a\nb\n<<<<<<< yours\nmine\n=======\nmodel\n>>>>>>> model\nd\ne\nf\ng\n"
        );
        assert_eq!(regions.len(), 1);
        assert_eq!(regions[0].base, LineSpan { start: 3, len: 1 });
        assert_eq!(regions[0].ours, LineSpan { start: 3, len: 1 });
        assert_eq!(regions[0].theirs, LineSpan { start: 3, len: 1 });
    }

    #[test]
    fn different_insertions_at_the_same_point_conflict() {
        let ours = "a\nb\nmine\nc\nd\ne\nf\ng\n";
        let theirs = "a\nb\nmodel\nc\nd\ne\nf\ng\n";
        let (regions, _) = conflict(BASE, ours, theirs);
        assert_eq!(regions[0].base.len, 0);
        assert_eq!(regions[0].ours, LineSpan { start: 3, len: 1 });
    }

    #[test]
    fn deletions_merge_and_delete_vs_edit_conflicts() {
        let ours = "b\nc\nd\ne\nf\ng\n";
        let theirs = "a\nb\nc\nd\ne\nf\n";
        assert_eq!(clean(BASE, ours, theirs), "b\nc\nd\ne\nf\n");
        let edited = "a\nb\nc\nD\ne\nf\ng\n";
        let deleted = "a\nb\nc\ne\nf\ng\n";
        let (_, text) = conflict(BASE, edited, deleted);
        assert!(text.contains("<<<<<<< yours\nD\n=======\n>>>>>>> model\n"));
    }

    #[test]
    fn missing_trailing_newline_is_preserved_and_markers_stay_on_own_lines() {
        let base = "a\nb\nc";
        assert_eq!(clean(base, "A\nb\nc", "a\nb\nC"), "A\nb\nC");
        let (_, text) = conflict(base, "a\nb\nmine", "a\nb\nmodel");
        assert_eq!(
            text,
            "a\nb\n<<<<<<< yours\nmine\n=======\nmodel\n>>>>>>> model\n"
        );
    }

    #[test]
    fn crlf_line_endings_are_kept() {
        let base = "a\r\nb\r\nc\r\nd\r\n";
        let ours = "A\r\nb\r\nc\r\nd\r\n";
        let theirs = "a\r\nb\r\nc\r\nD\r\n";
        assert_eq!(clean(base, ours, theirs), "A\r\nb\r\nc\r\nD\r\n");
        let (_, text) = conflict(base, "x\r\nb\r\nc\r\nd\r\n", "y\r\nb\r\nc\r\nd\r\n");
        assert!(text.starts_with("<<<<<<< yours\r\nx\r\n=======\r\ny\r\n>>>>>>> model\r\n"));
    }

    #[test]
    fn binary_content_conflicts_without_markers() {
        let out = merge3(b"a\0b", b"a\0c", b"a\0d");
        assert!(matches!(
            out,
            MergeOutcome::Conflict {
                with_markers: None,
                ..
            }
        ));
        assert_eq!(
            merge3(b"a\0b", b"a\0b", b"x\0"),
            MergeOutcome::Clean(b"x\0".to_vec())
        );
    }

    #[test]
    fn line_delta_counts_added_and_removed() {
        assert_eq!(line_delta(b"a\nb\nc\n", b"a\nB\nc\nd\n"), (2, 1));
        assert_eq!(line_delta(b"", b"x\n"), (1, 0));
        // Shared lines at both ends are trimmed, never a part of a line.
        assert_eq!(line_delta(b"a\nb\nc\n", b"a\nb\nc\nd\n"), (1, 0));
        assert_eq!(line_delta(b"a\nb", b"a\nxb"), (1, 1));
        assert_eq!(line_delta(b"xa\nb\n", b"ya\nb\n"), (1, 1));
        assert_eq!(line_delta(b"a\nb\n", b"a\nc\nb\n"), (1, 0));
        assert_eq!(line_delta(b"ab\n", b"b\n"), (1, 1));
        assert_eq!(line_delta(b"a\n", b"a"), (1, 1));
    }
}
