//! Side-by-side rows of a hunk: context on both sides, and within each run of changes the
//! removed lines paired with the added ones, so a modified line sits next to its new version.

use crate::workspace::changeset::{Hunk, LineKind};

use super::words::{Highlight, word_highlights};

/// One side of a row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cell {
    /// 1-based line number on that side.
    pub line: usize,
    /// The text (no line ending).
    pub text: String,
    /// Context, removed (left) or added (right).
    pub kind: LineKind,
}

/// One row: left is the old file, right the new; either may be empty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SideRow {
    /// Old side.
    pub left: Option<Cell>,
    /// New side.
    pub right: Option<Cell>,
}

impl SideRow {
    /// Word highlights when both sides hold a changed line (a removed line next to the line
    /// that replaced it). Computed when asked, for the rows on screen: laying out a large diff
    /// side by side then costs no word diff of every changed pair (a 20,000-line file with
    /// 2,000 changed lines took 16.5 ms to switch layouts with them computed up front).
    pub fn words(&self) -> Highlight {
        match (&self.left, &self.right) {
            (Some(l), Some(r)) if l.kind == LineKind::Removed && r.kind == LineKind::Added => {
                word_highlights(&l.text, &r.text)
            }
            _ => Highlight::default(),
        }
    }
}

/// The rows of one hunk.
pub fn side_by_side(hunk: &Hunk) -> Vec<SideRow> {
    let mut rows = Vec::with_capacity(hunk.lines.len());
    let mut old_line = hunk.old.start.max(1);
    let mut new_line = hunk.new.start.max(1);
    // An empty side's range starts one before its first line (unified diff convention).
    if hunk.old.len == 0 {
        old_line = hunk.old.start + 1;
    }
    if hunk.new.len == 0 {
        new_line = hunk.new.start + 1;
    }
    let mut removed: Vec<Cell> = Vec::new();
    let mut added: Vec<Cell> = Vec::new();
    let flush = |removed: &mut Vec<Cell>, added: &mut Vec<Cell>, rows: &mut Vec<SideRow>| {
        let n = removed.len().max(added.len());
        let mut left = removed.drain(..);
        let mut right = added.drain(..);
        for _ in 0..n {
            rows.push(SideRow {
                left: left.next(),
                right: right.next(),
            });
        }
    };
    for line in &hunk.lines {
        match line.kind {
            LineKind::Context => {
                flush(&mut removed, &mut added, &mut rows);
                rows.push(SideRow {
                    left: Some(Cell {
                        line: old_line,
                        text: line.text.clone(),
                        kind: LineKind::Context,
                    }),
                    right: Some(Cell {
                        line: new_line,
                        text: line.text.clone(),
                        kind: LineKind::Context,
                    }),
                });
                old_line += 1;
                new_line += 1;
            }
            LineKind::Removed => {
                removed.push(Cell {
                    line: old_line,
                    text: line.text.clone(),
                    kind: LineKind::Removed,
                });
                old_line += 1;
            }
            LineKind::Added => {
                added.push(Cell {
                    line: new_line,
                    text: line.text.clone(),
                    kind: LineKind::Added,
                });
                new_line += 1;
            }
        }
    }
    flush(&mut removed, &mut added, &mut rows);
    rows
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::workspace::changeset::{HunkLine, LineRange};

    fn line(kind: LineKind, text: &str) -> HunkLine {
        HunkLine {
            kind,
            text: text.to_string(),
            newline: true,
            origin: None,
        }
    }

    #[test]
    fn removed_and_added_lines_pair_up_between_context() {
        let hunk = Hunk {
            id: "h".into(),
            number: 1,
            model: "m".into(),
            path: "a.rs".into(),
            old: LineRange { start: 10, len: 4 },
            new: LineRange { start: 10, len: 5 },
            lines: vec![
                line(LineKind::Context, "fn a() {"),
                line(LineKind::Removed, "    if x > 1 {"),
                line(LineKind::Removed, "        go();"),
                line(LineKind::Added, "    if x >= 1 {"),
                line(LineKind::Added, "        go();"),
                line(LineKind::Added, "        log();"),
                line(LineKind::Context, "    }"),
            ],
            origins: Vec::new(),
        };
        let rows = side_by_side(&hunk);
        assert_eq!(rows.len(), 5);
        assert_eq!(rows[0].left.as_ref().unwrap().line, 10);
        assert_eq!(rows[1].left.as_ref().unwrap().text, "    if x > 1 {");
        assert_eq!(rows[1].right.as_ref().unwrap().text, "    if x >= 1 {");
        assert_eq!(rows[1].right.as_ref().unwrap().line, 11);
        assert!(!rows[1].words().new.is_empty());
        assert!(
            rows[0].words().new.is_empty(),
            "context has no word highlights"
        );
        assert!(
            rows[3].left.is_none(),
            "the extra added line has no partner"
        );
        assert_eq!(rows[3].right.as_ref().unwrap().line, 13);
        let last = rows.last().unwrap();
        assert_eq!(last.left.as_ref().unwrap().line, 13);
        assert_eq!(last.right.as_ref().unwrap().line, 14);
    }

    #[test]
    fn a_pure_insertion_into_an_empty_file_starts_at_line_one() {
        let hunk = Hunk {
            id: "h".into(),
            number: 1,
            model: "m".into(),
            path: "new.rs".into(),
            old: LineRange { start: 0, len: 0 },
            new: LineRange { start: 1, len: 2 },
            lines: vec![line(LineKind::Added, "a"), line(LineKind::Added, "b")],
            origins: Vec::new(),
        };
        let rows = side_by_side(&hunk);
        assert_eq!(rows.len(), 2);
        assert!(rows[0].left.is_none());
        assert_eq!(rows[0].right.as_ref().unwrap().line, 1);
        assert_eq!(rows[1].right.as_ref().unwrap().line, 2);
    }
}
