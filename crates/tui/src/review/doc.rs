//! The rows of one file's diff as the review view shows them, unified or side by side, built
//! once per file and mode and then only sliced: a frame draws the visible rows, never the file.
//!
//! Rows point into the change set's hunks instead of copying their text, so opening a 20,000
//! line file costs one pass over its hunks. Word-level highlights are not stored for unified
//! rows: each changed line knows its partner (the line it replaces, or that replaces it) and
//! the view diffs the words of the few pairs on screen. Side-by-side rows come from
//! [`versus_core::review::side_by_side`], which pairs the lines and computes their highlights.

use versus_core::review::{SideRow, side_by_side};
use versus_core::workspace::changeset::{FileChange, LineKind};

/// How a diff is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DiffMode {
    /// One column, removed lines above the added ones (`diff -u`).
    #[default]
    Unified,
    /// Old file on the left, new on the right, changed lines paired.
    SideBySide,
}

/// One row of a diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Row {
    /// A line about the whole file (binary, created empty...).
    Note(String),
    /// The header of hunk `hunk` (index into the file's hunks).
    Header {
        /// Hunk index.
        hunk: usize,
    },
    /// A line of a hunk in the unified layout.
    Line {
        /// Hunk index.
        hunk: usize,
        /// Line index inside the hunk.
        line: usize,
        /// Old line number (context and removed lines).
        old: Option<usize>,
        /// New line number (context and added lines).
        new: Option<usize>,
        /// The line (same hunk) this one replaces or is replaced by, for word highlights.
        partner: Option<usize>,
    },
    /// A row of a hunk in the side-by-side layout.
    Side {
        /// Hunk index.
        hunk: usize,
        /// Both sides with their word highlights.
        row: Box<SideRow>,
    },
}

impl Row {
    /// The hunk the row belongs to (`None` for notes).
    pub fn hunk(&self) -> Option<usize> {
        match self {
            Row::Note(_) => None,
            Row::Header { hunk } | Row::Line { hunk, .. } | Row::Side { hunk, .. } => Some(*hunk),
        }
    }
}

/// The laid-out diff of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffDoc {
    /// Model label.
    pub model: String,
    /// Path of the file.
    pub path: String,
    /// Layout.
    pub mode: DiffMode,
    /// Every row, top to bottom.
    pub rows: Vec<Row>,
    /// Row index of each hunk's header.
    pub hunk_rows: Vec<usize>,
    /// Widest line number (for the gutter).
    pub number_width: usize,
    /// Columns of the widest line's text as shown (tabs expanded): how far sideways scrolling
    /// can go. Measured once here, so a key press never walks the file.
    pub widest: usize,
    /// The other model the file is compared with (`None`: the base), so a doc laid out for
    /// one comparison is not reused for another.
    pub against: Option<String>,
}

/// Columns `text` takes on screen as the diff shows it: tabs as four spaces, a trailing `\r`
/// dropped, other control, bidi and invisible characters as their escapes (`\x1b`, four
/// columns), wide characters two.
pub fn shown_width(text: &str) -> usize {
    let text = text.strip_suffix('\r').unwrap_or(text);
    versus_core::sanitize::line_width(text, 4)
}

/// The note after a last line without a newline (part of the line's text for wrapping).
pub const NO_NEWLINE: &str = " ⏎ no newline at end";

/// Columns of [`NO_NEWLINE`] after a line (none when the line has its newline).
pub fn note_width(newline: bool) -> usize {
    if newline { 0 } else { shown_width(NO_NEWLINE) }
}

/// Screen lines a text `width` columns wide takes when wrapped at `room` columns (at least
/// one, also for an empty line).
pub fn wrapped_lines(width: usize, room: usize) -> usize {
    width.div_ceil(room.max(1)).max(1)
}

/// The notes above a file's diff, escaped: what a link is and whether apply would make it,
/// a binary change's sizes and hashes, a change of the executable bit, bytes shown escaped,
/// or why there is no line at all.
fn notes(file: &FileChange) -> Vec<String> {
    use versus_core::sanitize::line;
    use versus_core::workspace::changeset::ChangeKind;
    let git = |m: u32| if m & 0o111 != 0 { "100755" } else { "100644" };
    let mut notes = Vec::new();
    if let Some(label) = file.symlink_label() {
        notes.push(format!(
            "{} (applied as a symlink only if it points inside the project)",
            line(&label)
        ));
        if file.symlink
            && let Some(target) = file.proposed.as_deref()
            && let Err(why) = versus_core::apply::links::check_link_target(&file.path, target)
        {
            notes.push(format!("apply will not make this link: {}", line(&why)));
        }
    }
    if let Some((before, after)) = file.binary_sides() {
        let side = |s: Option<versus_core::workspace::changeset::BlobInfo>| {
            s.map_or("no file".to_string(), |s| s.to_string())
        };
        notes.push(format!(
            "binary file, no line diff: {} -> {}",
            side(before),
            side(after)
        ));
    } else if file.binary {
        notes.push("binary file: no line diff".to_string());
    }
    if file.mode_changed()
        && let (Some(old), Some(new)) = (file.shown_base_mode(), file.shown_mode())
    {
        notes.push(format!("mode {} -> {}", git(old), git(new)));
    } else if file.kind == ChangeKind::Created && file.shown_mode() == Some(0o755) {
        notes.push("new file, executable (100755)".to_string());
    }
    if file.odd_bytes() {
        notes.push(
            "odd bytes in its new lines (controls, bidi, not UTF-8), shown escaped: \\x1b \\0"
                .to_string(),
        );
    }
    if !file.binary && file.hunks.is_empty() && !file.mode_changed() {
        notes.push(match file.kind {
            ChangeKind::Deleted => "deleted (the file was empty)".to_string(),
            _ => "empty file".to_string(),
        });
    }
    notes
}

impl DiffDoc {
    /// Lays out `file` of `model` in `mode`.
    pub fn build(model: &str, file: &FileChange, mode: DiffMode) -> DiffDoc {
        let mut rows = Vec::new();
        let mut hunk_rows = Vec::with_capacity(file.hunks.len());
        let mut widest = 1;
        rows.extend(notes(file).into_iter().map(Row::Note));
        for (h, hunk) in file.hunks.iter().enumerate() {
            hunk_rows.push(rows.len());
            rows.push(Row::Header { hunk: h });
            widest = widest
                .max(hunk.old.start + hunk.old.len)
                .max(hunk.new.start + hunk.new.len);
            match mode {
                DiffMode::Unified => unified_rows(h, hunk, &mut rows),
                DiffMode::SideBySide => {
                    rows.extend(side_by_side(hunk).into_iter().map(|row| Row::Side {
                        hunk: h,
                        row: Box::new(row),
                    }));
                }
            }
        }
        let longest = file
            .hunks
            .iter()
            .flat_map(|h| h.lines.iter())
            .map(|l| shown_width(&l.text) + note_width(l.newline))
            .max()
            .unwrap_or(0);
        DiffDoc {
            model: model.to_string(),
            path: file.path.clone(),
            mode,
            rows,
            hunk_rows,
            number_width: widest.to_string().len(),
            widest: longest,
            against: None,
        }
    }

    /// Columns of the line numbers and signs before a line's text in a pane (unified) or a
    /// half (side by side) `width` columns wide: what the renderer draws before the text.
    pub fn gutter(&self) -> usize {
        match self.mode {
            // "old new " then the sign and the pick mark.
            DiffMode::Unified => 2 * self.number_width + 4,
            // "n " then the sign.
            DiffMode::SideBySide => self.number_width + 2,
        }
    }

    /// The widths of the text columns in a pane `width` columns wide: one for unified, the
    /// left and the right half for side by side (the renderer splits the same way).
    pub fn text_widths(&self, width: usize) -> (usize, usize) {
        match self.mode {
            DiffMode::Unified => {
                let room = width.saturating_sub(self.gutter()).max(1);
                (room, room)
            }
            DiffMode::SideBySide => {
                let half = width.saturating_sub(1) / 2;
                let right = width.saturating_sub(half + 1);
                (
                    half.saturating_sub(self.gutter()).max(1),
                    right.saturating_sub(self.gutter()).max(1),
                )
            }
        }
    }

    /// Screen lines row `i` takes in a pane `width` columns wide when long lines wrap (1 for
    /// headers, notes and lines that fit). Only the rows drawn are measured.
    pub fn row_height(&self, file: &FileChange, i: usize, width: usize) -> usize {
        let (left, right) = self.text_widths(width);
        match self.rows.get(i) {
            Some(Row::Line { hunk, line, .. }) => file
                .hunks
                .get(*hunk)
                .and_then(|h| h.lines.get(*line))
                .map_or(1, |l| {
                    wrapped_lines(shown_width(&l.text) + note_width(l.newline), left)
                }),
            Some(Row::Side { row, .. }) => {
                let l = row
                    .left
                    .as_ref()
                    .map_or(1, |c| wrapped_lines(shown_width(&c.text), left));
                let r = row
                    .right
                    .as_ref()
                    .map_or(1, |c| wrapped_lines(shown_width(&c.text), right));
                l.max(r)
            }
            _ => 1,
        }
    }

    /// The top row that shows the last row at the bottom of a pane `height` lines high and
    /// `width` wide when long lines wrap: walks back from the end, so it measures at most a
    /// screenful of rows.
    pub fn wrapped_bottom(&self, file: &FileChange, height: usize, width: usize) -> usize {
        let mut used = 0;
        let mut top = self.rows.len();
        while top > 0 {
            let h = self.row_height(file, top - 1, width);
            if used + h > height.max(1) {
                break;
            }
            used += h;
            top -= 1;
        }
        top.min(self.rows.len().saturating_sub(1))
    }

    /// The hunk shown at row `top`: the last hunk starting at or above it (0 when none).
    pub fn hunk_at(&self, top: usize) -> usize {
        match self.hunk_rows.binary_search(&top) {
            Ok(i) => i,
            Err(0) => 0,
            Err(i) => i - 1,
        }
    }

    /// Rows whose text contains `query`, ignoring ASCII case, in order.
    pub fn search(&self, file: &FileChange, query: &str) -> Vec<usize> {
        if query.is_empty() {
            return Vec::new();
        }
        let needle = query.to_lowercase();
        let hit = |text: &str| text.to_lowercase().contains(&needle);
        self.rows
            .iter()
            .enumerate()
            .filter(|(_, row)| match row {
                Row::Note(text) => hit(text),
                Row::Header { .. } => false,
                Row::Line { hunk, line, .. } => file
                    .hunks
                    .get(*hunk)
                    .and_then(|h| h.lines.get(*line))
                    .is_some_and(|l| hit(&l.text)),
                Row::Side { row, .. } => {
                    row.left.as_ref().is_some_and(|c| hit(&c.text))
                        || row.right.as_ref().is_some_and(|c| hit(&c.text))
                }
            })
            .map(|(i, _)| i)
            .collect()
    }
}

/// The unified rows of hunk `h`: line numbers on both sides, and within each run of changes the
/// k-th removed line partnered with the k-th added line.
fn unified_rows(h: usize, hunk: &versus_core::workspace::changeset::Hunk, rows: &mut Vec<Row>) {
    let mut old = if hunk.old.len == 0 {
        hunk.old.start + 1
    } else {
        hunk.old.start.max(1)
    };
    let mut new = if hunk.new.len == 0 {
        hunk.new.start + 1
    } else {
        hunk.new.start.max(1)
    };
    let first = rows.len();
    let mut removed: Vec<usize> = Vec::new();
    let mut added: Vec<usize> = Vec::new();
    let pair = |rows: &mut Vec<Row>, removed: &mut Vec<usize>, added: &mut Vec<usize>| {
        for (r, a) in removed.iter().zip(added.iter()) {
            let (r_line, a_line) = match (&rows[first + *r], &rows[first + *a]) {
                (Row::Line { line: rl, .. }, Row::Line { line: al, .. }) => (*rl, *al),
                _ => continue,
            };
            if let Row::Line { partner, .. } = &mut rows[first + *r] {
                *partner = Some(a_line);
            }
            if let Row::Line { partner, .. } = &mut rows[first + *a] {
                *partner = Some(r_line);
            }
        }
        removed.clear();
        added.clear();
    };
    for (i, line) in hunk.lines.iter().enumerate() {
        let at = rows.len() - first;
        match line.kind {
            LineKind::Context => {
                pair(rows, &mut removed, &mut added);
                rows.push(Row::Line {
                    hunk: h,
                    line: i,
                    old: Some(old),
                    new: Some(new),
                    partner: None,
                });
                old += 1;
                new += 1;
            }
            LineKind::Removed => {
                if !added.is_empty() {
                    pair(rows, &mut removed, &mut added);
                }
                removed.push(at);
                rows.push(Row::Line {
                    hunk: h,
                    line: i,
                    old: Some(old),
                    new: None,
                    partner: None,
                });
                old += 1;
            }
            LineKind::Added => {
                added.push(at);
                rows.push(Row::Line {
                    hunk: h,
                    line: i,
                    old: None,
                    new: Some(new),
                    partner: None,
                });
                new += 1;
            }
        }
    }
    pair(rows, &mut removed, &mut added);
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use versus_core::workspace::changeset::{BaseReader, ChangeSet};
    use versus_core::workspace::{Base, FileWrite, WriteOrigin};

    fn change(before: &str, after: &str) -> (tempfile::TempDir, ChangeSet) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f.txt"), before).unwrap();
        let base = Base::capture(dir.path()).unwrap();
        let write = FileWrite {
            path: "f.txt".into(),
            content: Some(Arc::new(after.as_bytes().to_vec())),
            origin: WriteOrigin::new("edit_file", "c1"),
            seq: 0,
            symlink: false,
        };
        let set = ChangeSet::build("m", &base, &[write], &BaseReader::new(&base), None).unwrap();
        (dir, set)
    }

    #[test]
    fn unified_rows_number_both_sides_and_pair_changed_lines() {
        let before: String = (1..=20).map(|i| format!("line {i}\n")).collect();
        let after = before
            .replace("line 5\n", "line five\n")
            .replace("line 15\n", "");
        let (_d, set) = change(&before, &after);
        let file = &set.files[0];
        let doc = DiffDoc::build("m", file, DiffMode::Unified);
        assert_eq!(doc.hunk_rows.len(), 2);
        assert_eq!(doc.hunk_rows[0], 0);
        // Header, 3 context, removed, added, 3 context.
        let Row::Line {
            old, new, partner, ..
        } = &doc.rows[4]
        else {
            panic!("{:?}", doc.rows[4]);
        };
        assert_eq!((*old, *new), (Some(5), None));
        assert!(
            partner.is_some(),
            "the removed line is paired with its new version"
        );
        let Row::Line { old, new, .. } = &doc.rows[5] else {
            panic!()
        };
        assert_eq!((*old, *new), (None, Some(5)));
        assert_eq!(doc.hunk_at(0), 0);
        assert_eq!(doc.hunk_at(doc.hunk_rows[1]), 1);
        assert_eq!(doc.hunk_at(doc.rows.len() - 1), 1);
        assert_eq!(doc.search(file, "FIVE"), vec![5]);
        assert_eq!(doc.number_width, 2);
    }

    #[test]
    fn side_by_side_rows_come_from_the_review_library() {
        let (_d, set) = change("a\nb\nc\n", "a\nB\nc\nd\n");
        let doc = DiffDoc::build("m", &set.files[0], DiffMode::SideBySide);
        assert!(matches!(doc.rows[0], Row::Header { hunk: 0 }));
        assert!(
            doc.rows
                .iter()
                .any(|r| matches!(r, Row::Side { row, .. } if row.left.as_ref().is_some_and(|c| c.text == "b") && row.right.as_ref().is_some_and(|c| c.text == "B")))
        );
        assert_eq!(doc.search(&set.files[0], "d"), vec![doc.rows.len() - 1]);
    }
}
