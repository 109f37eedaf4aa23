//! Comparing models with each other instead of with the base: one model's file diffed against
//! another model's version of it (review `v`), and every model's version of the base lines
//! under one hunk, side by side (review `V`).
//!
//! Both are plain functions of the change sets' bytes, so the TUI only lays them out. A model
//! that did not change a file has the base's version of it: the comparison with such a model
//! is the usual diff against the base, and its column in the N-way view is the base text,
//! marked unchanged.

use std::ops::Range;
use std::time::{Duration, Instant};

use similar::{Algorithm, DiffOp, capture_diff_slices_deadline};

use crate::workspace::changeset::hunks::{is_binary, split_lines};
use crate::workspace::changeset::{
    ChangeKind, FileChange, LineKind, LineRange, diff_texts, hunks_of_ops,
};

/// How long one version's diff against the base may search for a minimal result before
/// settling for a larger (still correct) one, so a huge rewrite cannot stall the review.
const DEADLINE: Duration = Duration::from_millis(500);

/// `mine` (one model's change to a file) diffed against `theirs` (another model's change to
/// the same file; `None` when that model left the file alone, so its version is the base).
///
/// The result is a [`FileChange`] whose `base` is the other version and whose `proposed` is
/// `mine`'s: the review lays it out and searches it like any diff. Its hunks are not picks
/// (picks are relative to the base); `added` / `removed` count the lines that differ
/// between the two models, so two identical edits compare as no change at all.
pub fn compare_file(mine: &FileChange, theirs: Option<&FileChange>) -> FileChange {
    let other = match theirs {
        Some(t) => t.proposed.clone(),
        None => mine.base.clone(),
    };
    let old: &[u8] = other.as_deref().map_or(&[], Vec::as_slice);
    let new = mine.proposed.as_deref().map(Vec::as_slice);
    let binary = is_binary(old) || new.is_some_and(is_binary);
    let model = mine.hunks.first().map_or("", |h| h.model.as_str());
    let hunks = if binary || other == mine.proposed {
        Vec::new()
    } else {
        let base: &[u8] = mine.base.as_deref().map_or(&[], Vec::as_slice);
        let theirs_lines = split_lines(old);
        let mine_lines = split_lines(new.unwrap_or(b""));
        let plain = |f: &FileChange| !f.binary && !f.symlink && !f.base_symlink;
        let aligned = (plain(mine) && theirs.is_none_or(plain))
            .then(|| {
                aligned_ops(
                    split_lines(base).len(),
                    &edits(Some(mine)),
                    &edits(theirs),
                    &theirs_lines,
                    &mine_lines,
                )
            })
            .flatten();
        match aligned {
            Some(ops) => hunks_of_ops(model, &mine.path, &theirs_lines, &mine_lines, ops),
            None => diff_texts(model, &mine.path, old, new),
        }
    };
    let kind = match (&other, &mine.proposed) {
        (None, _) => ChangeKind::Created,
        (Some(_), None) => ChangeKind::Deleted,
        (Some(_), Some(_)) => ChangeKind::Modified,
    };
    FileChange {
        path: mine.path.clone(),
        kind,
        base: other,
        proposed: mine.proposed.clone(),
        base_mode: None,
        mode: mine.mode,
        binary,
        symlink: mine.symlink,
        base_symlink: theirs.map_or(mine.base_symlink, |t| t.symlink),
        tools: Vec::new(),
        origins: Vec::new(),
        added: hunks.iter().map(|h| h.added()).sum(),
        removed: hunks.iter().map(|h| h.removed()).sum(),
        hunks,
    }
}

/// One change of a model against the base: base lines `old` (0-based) became its lines `new`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Edit {
    old: Range<usize>,
    new: Range<usize>,
}

/// The changes of `file` against the base, from its hunks (none for `None`: the base itself).
fn edits(file: Option<&FileChange>) -> Vec<Edit> {
    let mut out = Vec::new();
    for hunk in file.map_or(&[][..], |f| f.hunks.as_slice()) {
        let (mut o, mut n) = (hunk.old.indices().start, hunk.new.indices().start);
        let mut open: Option<(usize, usize)> = None;
        for line in &hunk.lines {
            match line.kind {
                LineKind::Context => {
                    if let Some((o0, n0)) = open.take() {
                        out.push(Edit {
                            old: o0..o,
                            new: n0..n,
                        });
                    }
                    o += 1;
                    n += 1;
                }
                LineKind::Removed => {
                    open.get_or_insert((o, n));
                    o += 1;
                }
                LineKind::Added => {
                    open.get_or_insert((o, n));
                    n += 1;
                }
            }
        }
        if let Some((o0, n0)) = open {
            out.push(Edit {
                old: o0..o,
                new: n0..n,
            });
        }
    }
    out
}

/// The line diff of `theirs` against `mine` made from each one's changes against the same
/// base (`base_len` lines), so only the stretches of the base that either model changed are
/// diffed: two 20,000-line versions with scattered edits compare in a few milliseconds, where
/// one diff of the whole files takes tens of them (review `v` runs on the loop's thread).
///
/// Stretches are the base spans of overlapping or touching changes of either model; outside
/// them both versions hold the base's lines. `None` when the changes do not add up to the two
/// texts (the caller then diffs the whole files).
fn aligned_ops(
    base_len: usize,
    mine: &[Edit],
    theirs: &[Edit],
    theirs_lines: &[&[u8]],
    mine_lines: &[&[u8]],
) -> Option<Vec<DiffOp>> {
    let delta = |e: &Edit| e.new.len() as isize - e.old.len() as isize;
    let at = |p: usize, d: isize| usize::try_from(p as isize + d).ok();
    let (mut i, mut j) = (0, 0);
    let (mut da, mut db) = (0isize, 0isize);
    let mut pos = 0;
    let mut ops = Vec::new();
    loop {
        let next = match (mine.get(i), theirs.get(j)) {
            (None, None) => break,
            (Some(a), None) => a.old.start,
            (None, Some(b)) => b.old.start,
            (Some(a), Some(b)) => a.old.start.min(b.old.start),
        };
        if next < pos {
            return None;
        }
        push_equal(&mut ops, at(pos, db)?, at(pos, da)?, next - pos);
        let (start, mut end) = (next, next);
        let (a_from, b_from) = (at(start, da)?, at(start, db)?);
        loop {
            let mut grew = false;
            if let Some(a) = mine.get(i).filter(|a| a.old.start <= end) {
                end = end.max(a.old.end);
                da += delta(a);
                i += 1;
                grew = true;
            }
            if let Some(b) = theirs.get(j).filter(|b| b.old.start <= end) {
                end = end.max(b.old.end);
                db += delta(b);
                j += 1;
                grew = true;
            }
            if !grew {
                break;
            }
        }
        let (a_to, b_to) = (at(end, da)?, at(end, db)?);
        let old = theirs_lines.get(b_from..b_to)?;
        let new = mine_lines.get(a_from..a_to)?;
        if old == new {
            push_equal(&mut ops, b_from, a_from, old.len());
        } else {
            for op in similar::capture_diff_slices(Algorithm::Myers, old, new) {
                push(&mut ops, shifted(op, b_from, a_from));
            }
        }
        pos = end;
    }
    if pos > base_len {
        return None;
    }
    push_equal(&mut ops, at(pos, db)?, at(pos, da)?, base_len - pos);
    (at(base_len, db)? == theirs_lines.len() && at(base_len, da)? == mine_lines.len())
        .then_some(ops)
}

fn push_equal(ops: &mut Vec<DiffOp>, old_index: usize, new_index: usize, len: usize) {
    push(
        ops,
        DiffOp::Equal {
            old_index,
            new_index,
            len,
        },
    );
}

/// Appends `op`, joining it to the previous one when both are equal runs that meet (grouping
/// into hunks expects one run of equal lines between changes) and dropping empty runs.
fn push(ops: &mut Vec<DiffOp>, op: DiffOp) {
    if let DiffOp::Equal { len, .. } = op {
        if len == 0 {
            return;
        }
        if let Some(DiffOp::Equal {
            old_index,
            new_index,
            len: last,
        }) = ops.last_mut()
            && let DiffOp::Equal {
                old_index: o,
                new_index: n,
                ..
            } = op
            && *old_index + *last == o
            && *new_index + *last == n
        {
            *last += len;
            return;
        }
    }
    ops.push(op);
}

fn shifted(op: DiffOp, o: usize, n: usize) -> DiffOp {
    match op {
        DiffOp::Equal {
            old_index,
            new_index,
            len,
        } => DiffOp::Equal {
            old_index: old_index + o,
            new_index: new_index + n,
            len,
        },
        DiffOp::Delete {
            old_index,
            old_len,
            new_index,
        } => DiffOp::Delete {
            old_index: old_index + o,
            old_len,
            new_index: new_index + n,
        },
        DiffOp::Insert {
            old_index,
            new_index,
            new_len,
        } => DiffOp::Insert {
            old_index: old_index + o,
            new_index: new_index + n,
            new_len,
        },
        DiffOp::Replace {
            old_index,
            old_len,
            new_index,
            new_len,
        } => DiffOp::Replace {
            old_index: old_index + o,
            old_len,
            new_index: new_index + n,
            new_len,
        },
    }
}

/// Whether two models' versions of a file are the same bytes (then comparing them shows
/// no difference, which the review says in words instead of an empty pane).
pub fn same_version(mine: &FileChange, theirs: Option<&FileChange>) -> bool {
    match theirs {
        Some(t) => t.proposed == mine.proposed,
        None => mine.base == mine.proposed,
    }
}

/// One line of a model's version in the N-way view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionLine {
    /// 1-based line number in that model's version of the file.
    pub number: usize,
    /// The text (no line ending; invalid UTF-8 shown lossily).
    pub text: String,
    /// `Context` for a base line the model kept, `Added` for a line it wrote.
    pub kind: LineKind,
}

/// One model's version of the region in the N-way view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionColumn {
    /// The model entry (the caller shows its shown name, never this, in blind mode).
    pub model: String,
    /// The lines of its version that stand where the region's base lines stood.
    pub lines: Vec<VersionLine>,
    /// The model left the region as the base has it (or did not change the file).
    pub unchanged: bool,
    /// The model deleted the file.
    pub deleted: bool,
    /// Index of an earlier column with exactly the same lines (two models that agree).
    pub same_as: Option<usize>,
}

/// Every model's version of the base lines `region` of one file (1-based, as a hunk's `old`
/// range): `base` is the file at run start (`None`: it did not exist), and `versions` gives
/// each model (in the order shown) with its version (`Some(None)`: it deleted the file; `None`:
/// it did not change the file, so its version is the base).
///
/// A model's lines are those its diff against the base puts where the region was: kept base
/// lines as context, its own lines as added; an edit that straddles the region's edge is
/// taken whole, so no column shows half a change. For a file that did not exist (an empty
/// region of an empty base), a column is the model's whole file.
pub fn region_versions(
    base: Option<&[u8]>,
    region: LineRange,
    versions: &[(String, Option<Option<&[u8]>>)],
) -> Vec<VersionColumn> {
    let base_bytes = base.unwrap_or(b"");
    let base_lines = split_lines(base_bytes);
    let wanted = region.indices();
    let wanted = wanted.start.min(base_lines.len())..wanted.end.min(base_lines.len());
    let mut columns: Vec<VersionColumn> = Vec::with_capacity(versions.len());
    for (model, version) in versions {
        let column = match version {
            None => VersionColumn {
                model: model.clone(),
                lines: wanted
                    .clone()
                    .map(|i| version_line(i, base_lines[i], LineKind::Context))
                    .collect(),
                unchanged: true,
                deleted: false,
                same_as: None,
            },
            Some(None) => VersionColumn {
                model: model.clone(),
                lines: Vec::new(),
                unchanged: false,
                deleted: true,
                same_as: None,
            },
            Some(Some(text)) => {
                let lines = split_lines(text);
                let deadline = Some(Instant::now() + DEADLINE);
                let ops =
                    capture_diff_slices_deadline(Algorithm::Myers, &base_lines, &lines, deadline);
                let span = mapped(&ops, wanted.clone(), lines.len());
                let mut out = Vec::with_capacity(span.len());
                for op in &ops {
                    let (tag, _, new) = op.as_tag_tuple();
                    for j in new {
                        if span.contains(&j) {
                            let kind = if tag == similar::DiffTag::Equal {
                                LineKind::Context
                            } else {
                                LineKind::Added
                            };
                            out.push(version_line(j, lines[j], kind));
                        }
                    }
                }
                let changed =
                    out.iter().any(|l| l.kind == LineKind::Added) || out.len() != wanted.len();
                VersionColumn {
                    model: model.clone(),
                    lines: out,
                    unchanged: !changed,
                    deleted: false,
                    same_as: None,
                }
            }
        };
        columns.push(column);
    }
    for i in 1..columns.len() {
        let same = (0..i).find(|&j| {
            columns[j].same_as.is_none()
                && columns[j].deleted == columns[i].deleted
                && texts(&columns[j]) == texts(&columns[i])
        });
        columns[i].same_as = same;
    }
    columns
}

fn texts(column: &VersionColumn) -> Vec<&str> {
    column.lines.iter().map(|l| l.text.as_str()).collect()
}

fn version_line(index: usize, raw: &[u8], kind: LineKind) -> VersionLine {
    let body = raw.strip_suffix(b"\n").unwrap_or(raw);
    VersionLine {
        number: index + 1,
        text: String::from_utf8_lossy(body).into_owned(),
        kind,
    }
}

/// The lines of the new side that stand where the old lines `wanted` stood, through the diff
/// `ops` of old against new (`new_len` lines). Edits straddling either edge are included
/// whole; lines inserted exactly at an edge are included at the start and left out at the
/// end (they belong to the region only when it is empty, as in a created file).
fn mapped(ops: &[DiffOp], wanted: Range<usize>, new_len: usize) -> Range<usize> {
    let mut start = None;
    let mut end = None;
    for op in ops {
        let (tag, old, new) = op.as_tag_tuple();
        let equal = tag == similar::DiffTag::Equal;
        if start.is_none() {
            if old.is_empty() && old.start == wanted.start {
                start = Some(new.start);
            } else if old.contains(&wanted.start) {
                start = Some(if equal {
                    new.start + (wanted.start - old.start)
                } else {
                    new.start
                });
            }
        }
        if wanted.is_empty() {
            if old.is_empty() && old.start == wanted.start {
                end = Some(new.end);
            }
        } else if old.start < wanted.end && wanted.end <= old.end {
            end = Some(if equal {
                new.start + (wanted.end - old.start)
            } else {
                new.end
            });
        }
    }
    let start = start.unwrap_or(new_len);
    let end = end.unwrap_or(start).max(start);
    start..end
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::workspace::changeset::{BaseReader, ChangeSet};
    use crate::workspace::{Base, FileWrite, WriteOrigin};
    use std::sync::Arc;

    fn file(base: &str, after: Option<&str>) -> (tempfile::TempDir, FileChange) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f.txt"), base).unwrap();
        let b = Base::capture(dir.path()).unwrap();
        let write = FileWrite {
            path: "f.txt".into(),
            content: after.map(|a| Arc::new(a.as_bytes().to_vec())),
            origin: WriteOrigin::new("edit_file", "c1"),
            seq: 0,
            symlink: false,
        };
        let set = ChangeSet::build("m", &b, &[write], &BaseReader::new(&b), None).unwrap();
        (dir, set.files.into_iter().next().unwrap())
    }

    const BASE: &str = "a\nb\nc\nd\ne\nf\ng\nh\n";

    #[test]
    fn the_same_edit_by_two_models_compares_as_no_difference() {
        let (_d1, mine) = file(BASE, Some("a\nb\nC\nd\ne\nf\ng\nh\n"));
        let (_d2, theirs) = file(BASE, Some("a\nb\nC\nd\ne\nf\ng\nh\n"));
        let c = compare_file(&mine, Some(&theirs));
        assert!(c.hunks.is_empty());
        assert_eq!((c.added, c.removed), (0, 0));
        assert!(same_version(&mine, Some(&theirs)));
    }

    #[test]
    fn different_edits_show_theirs_removed_and_mine_added() {
        let (_d1, mine) = file(BASE, Some("a\nb\nmine\nd\ne\nf\ng\nh\n"));
        let (_d2, theirs) = file(BASE, Some("a\nb\ntheirs\nd\ne\nf\ng\nh\n"));
        let c = compare_file(&mine, Some(&theirs));
        assert_eq!(c.hunks.len(), 1);
        let changed: Vec<(LineKind, &str)> = c.hunks[0]
            .lines
            .iter()
            .filter(|l| l.kind != LineKind::Context)
            .map(|l| (l.kind, l.text.as_str()))
            .collect();
        assert_eq!(
            changed,
            vec![(LineKind::Removed, "theirs"), (LineKind::Added, "mine")]
        );
        assert_eq!(
            c.base.as_deref().unwrap(),
            theirs.proposed.as_deref().unwrap()
        );
        assert!(!same_version(&mine, Some(&theirs)));
    }

    #[test]
    fn a_model_that_left_the_file_alone_compares_as_the_base() {
        let (_d1, mine) = file(BASE, Some("a\nb\nmine\nd\ne\nf\ng\nh\n"));
        let c = compare_file(&mine, None);
        assert_eq!(c.hunks.len(), 1);
        assert_eq!(
            c.hunks[0].lines,
            mine.hunks[0]
                .lines
                .iter()
                .map(|l| {
                    let mut l = l.clone();
                    l.origin = None;
                    l
                })
                .collect::<Vec<_>>()
        );
        assert_eq!((c.added, c.removed), (1, 1));
    }

    /// The aligned diff covers both texts exactly and its equal runs hold equal lines, and it
    /// finds as many changed lines as a diff of the whole files, on edits that touch, overlap,
    /// insert, delete and agree.
    #[test]
    fn the_aligned_diff_is_a_valid_diff_of_the_two_versions() {
        let base: String = (1..=60).map(|i| format!("l{i}\n")).collect();
        let edit = |pairs: &[(&str, &str)]| {
            let mut t = base.clone();
            for (from, to) in pairs {
                t = t.replacen(from, to, 1);
            }
            t
        };
        let cases = [
            (edit(&[("l5\n", "X\n")]), edit(&[("l5\n", "Y\n")])),
            (edit(&[("l5\n", "X\n")]), edit(&[("l5\n", "X\n")])),
            (edit(&[("l5\n", "X\nX2\n")]), edit(&[("l6\n", "")])),
            (edit(&[("l1\n", "")]), edit(&[("l60\n", "end\nmore\n")])),
            (
                edit(&[("l10\nl11\nl12\n", "A\n"), ("l40\n", "B\n")]),
                edit(&[("l11\n", "C\nD\n"), ("l50\n", "")]),
            ),
            (
                edit(&[("l30\n", "new\nl30\n")]),
                edit(&[("l30\n", "l30\nnew\n")]),
            ),
            (
                edit(&[("l3\n", "three\n")]),
                edit(&[("l2\n", "two\n"), ("l4\n", "four\n")]),
            ),
        ];
        for (k, (mine_text, theirs_text)) in cases.iter().enumerate() {
            let (_d1, mine) = file(&base, Some(mine_text));
            let (_d2, theirs) = file(&base, Some(theirs_text));
            let mine_edits = edits(Some(&mine));
            let theirs_edits = edits(Some(&theirs));
            let a = split_lines(mine_text.as_bytes());
            let b = split_lines(theirs_text.as_bytes());
            let ops = aligned_ops(60, &mine_edits, &theirs_edits, &b, &a)
                .unwrap_or_else(|| panic!("case {k}: no aligned diff"));
            let (mut o, mut n) = (0, 0);
            for op in &ops {
                let (tag, old, new) = op.as_tag_tuple();
                assert_eq!((old.start, new.start), (o, n), "case {k}: contiguous");
                if tag == similar::DiffTag::Equal {
                    assert_eq!(&b[old.clone()], &a[new.clone()], "case {k}");
                }
                (o, n) = (old.end, new.end);
            }
            assert_eq!((o, n), (b.len(), a.len()), "case {k}: covers both");
            let changed = |hunks: &[crate::workspace::changeset::Hunk]| {
                hunks
                    .iter()
                    .flat_map(|h| h.lines.iter())
                    .filter(|l| l.kind != LineKind::Context)
                    .count()
            };
            let fast = compare_file(&mine, Some(&theirs));
            let full = diff_texts(
                "m",
                "f.txt",
                theirs_text.as_bytes(),
                Some(mine_text.as_bytes()),
            );
            assert_eq!(changed(&fast.hunks), changed(&full), "case {k}");
        }
    }

    #[test]
    fn region_versions_line_up_each_models_lines_under_the_hunk() {
        let base = BASE.as_bytes();
        // Region: base lines 2-4 (b c d).
        let region = LineRange { start: 2, len: 3 };
        let cols = region_versions(
            Some(base),
            region,
            &[
                ("one".into(), Some(Some(b"a\nb\nONE\nd\ne\nf\ng\nh\n"))),
                ("two".into(), None),
                (
                    "three".into(),
                    Some(Some(b"x\ny\na\nb\nONE\nd\ne\nf\ng\nh\n")),
                ),
                ("four".into(), Some(None)),
                ("five".into(), Some(Some(b"a\nb\nc\nd\ne\nf\ng\nH\n"))),
            ],
        );
        let text = |c: &VersionColumn| {
            c.lines
                .iter()
                .map(|l| {
                    format!(
                        "{}{}:{}",
                        if l.kind == LineKind::Added { "+" } else { " " },
                        l.number,
                        l.text
                    )
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(text(&cols[0]), vec![" 2:b", "+3:ONE", " 4:d"]);
        assert!(!cols[0].unchanged);
        assert_eq!(text(&cols[1]), vec![" 2:b", " 3:c", " 4:d"]);
        assert!(
            cols[1].unchanged,
            "a model that did not touch the file shows the base"
        );
        assert_eq!(
            text(&cols[2]),
            vec![" 4:b", "+5:ONE", " 6:d"],
            "numbered in its own version, same lines as the first"
        );
        assert_eq!(cols[2].same_as, Some(0));
        assert!(cols[3].deleted && cols[3].lines.is_empty());
        assert!(
            cols[4].unchanged,
            "an edit elsewhere leaves the region as the base"
        );
        assert_eq!(cols[4].same_as, Some(1));
    }

    #[test]
    fn an_edit_straddling_the_region_edge_is_taken_whole() {
        let region = LineRange { start: 3, len: 2 };
        let cols = region_versions(
            Some(BASE.as_bytes()),
            region,
            &[("m".into(), Some(Some(b"a\nB\nC\nd\ne\nf\ng\nh\n")))],
        );
        let texts: Vec<&str> = cols[0].lines.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(texts, vec!["B", "C", "d"]);
    }

    #[test]
    fn a_created_file_shows_each_models_whole_file() {
        let cols = region_versions(
            None,
            LineRange { start: 1, len: 0 },
            &[("m".into(), Some(Some(b"one\ntwo\n"))), ("n".into(), None)],
        );
        assert_eq!(cols[0].lines.len(), 2);
        assert!(cols[1].lines.is_empty() && cols[1].unchanged);
    }
}
