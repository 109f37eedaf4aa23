//! Hunks of one file's change, each line attributed to the write that produced it.
//!
//! A hunk is what the diff view shows and what the user can pick: a run of changed lines with
//! up to [`CONTEXT_LINES`] unchanged lines around it, grouped exactly like `diff -U3` (changes
//! separated by at most twice the context share a hunk). Hunks come from one `similar` line
//! diff of base against the proposed content, so they are the same however many writes led
//! there.
//!
//! Provenance comes from replaying the model's writes in order. Every line of every version
//! carries its source: a base line (by index) or the write that introduced it. Each write is
//! diffed against the version before it; equal lines keep their source, inserted lines take
//! the write, and a base line that disappears records the write that removed it. The final
//! diff then reads added lines' sources and removed lines' removers. Where the final diff
//! pairs lines differently from the replay (rare: moved blocks), the line is credited to the
//! last write of the file, the one that left it that way.

use std::fmt;
use std::ops::Range;
use std::time::{Duration, Instant};

use serde::Serialize;
use similar::{Algorithm, DiffTag, capture_diff_slices_deadline, group_diff_ops};

/// Unchanged lines shown around each change, as in a unified diff.
pub const CONTEXT_LINES: usize = 3;

/// How long one file's diffs may search for a minimal result before settling for a larger
/// (still correct) one, so a huge rewritten file cannot stall a review.
const DIFF_DEADLINE: Duration = Duration::from_secs(2);

/// A span of lines, 1-based, so a UI can say "lines 12-15" directly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct LineRange {
    /// First line (1-based). For an empty span: the line before which the text sits.
    pub start: usize,
    /// Number of lines (0 for a pure insertion point).
    pub len: usize,
}

impl LineRange {
    /// The span covering the 0-based line indices `r`.
    pub fn from_indices(r: Range<usize>) -> Self {
        Self {
            start: r.start + 1,
            len: r.end.saturating_sub(r.start),
        }
    }

    /// The 0-based line indices of the span (empty for an insertion point).
    pub fn indices(&self) -> Range<usize> {
        let start = self.start.saturating_sub(1);
        start..start + self.len
    }

    /// The `start,len` pair of a unified diff header (an empty span names the line before).
    pub fn header(&self) -> String {
        match self.len {
            0 => format!("{},0", self.start.saturating_sub(1)),
            1 => self.start.to_string(),
            n => format!("{},{n}", self.start),
        }
    }
}

impl fmt::Display for LineRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.len {
            0 => write!(f, "before line {}", self.start),
            1 => write!(f, "line {}", self.start),
            n => write!(f, "lines {}-{}", self.start, self.start + n - 1),
        }
    }
}

/// What a hunk line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LineKind {
    /// Unchanged, shown for context.
    Context,
    /// Only in the proposed file.
    Added,
    /// Only in the base file.
    Removed,
}

/// One line of a hunk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HunkLine {
    /// Context, added or removed.
    pub kind: LineKind,
    /// The line without its `\n` (a `\r` of a CRLF line stays); each byte that is not UTF-8
    /// as `\xNN` ([`crate::sanitize::lossless`]: different bytes never look the same). Control
    /// characters stay as they are: printers escape them ([`crate::sanitize`]).
    pub text: String,
    /// False for a last line with no newline (`\ No newline at end of file`).
    pub newline: bool,
    /// For added and removed lines: [`Origin::seq`] of the write that added or removed it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<u64>,
}

/// A write that contributed to a change: enough to say "from edit_file, call abc".
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Origin {
    /// Position of the write in the model's sequence (`FileWrite::seq`).
    pub seq: u64,
    /// The tool (`write_file`, `edit_file`, `apply_patch`, `bash`).
    pub tool: String,
    /// The provider's tool call id (empty for bash changes and hand-run tools).
    pub call_id: String,
    /// The sub-agent that made the write (`coder #1`), `None` for the model itself.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
}

/// One hunk of one model's change to one file: the unit a user can pick.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Hunk {
    /// Stable id: a short hash of the path, position and lines, so the same hunk keeps its id
    /// when the change set is rebuilt (e.g. after a restart).
    pub id: String,
    /// Position in the file's list of hunks, from 1 (what a UI shows: "hunk 2 of 5").
    pub number: usize,
    /// The model entry that proposed it.
    pub model: String,
    /// `/`-separated path of the file.
    pub path: String,
    /// Lines of the base file the hunk covers, context included.
    pub old: LineRange,
    /// Lines of the proposed file the hunk covers, context included.
    pub new: LineRange,
    /// The lines, in unified diff order (removed lines before the added lines replacing them).
    pub lines: Vec<HunkLine>,
    /// The writes that produced its added and removed lines, in write order.
    pub origins: Vec<Origin>,
}

impl Hunk {
    /// The base lines the hunk actually changes (its span without leading and trailing
    /// context): what overlaps when two models' hunks conflict.
    pub fn changed_old(&self) -> LineRange {
        self.changed(self.old, LineKind::Added)
    }

    /// The proposed lines that replace [`Hunk::changed_old`].
    pub fn changed_new(&self) -> LineRange {
        self.changed(self.new, LineKind::Removed)
    }

    /// Number of added lines.
    pub fn added(&self) -> usize {
        self.count(LineKind::Added)
    }

    /// Number of removed lines.
    pub fn removed(&self) -> usize {
        self.count(LineKind::Removed)
    }

    /// Tools that produced the hunk, deduplicated, in write order.
    pub fn tools(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for o in &self.origins {
            if !out.contains(&o.tool.as_str()) {
                out.push(&o.tool);
            }
        }
        out
    }

    /// The id the apply journal records for this hunk: `model:path#id`.
    pub fn provenance(&self) -> String {
        format!("{}:{}#{}", self.model, self.path, self.id)
    }

    fn count(&self, kind: LineKind) -> usize {
        self.lines.iter().filter(|l| l.kind == kind).count()
    }

    /// `span` minus the leading and trailing context lines, counting only lines that exist
    /// on that side (lines of kind `other` do not).
    fn changed(&self, span: LineRange, other: LineKind) -> LineRange {
        let lead = self
            .lines
            .iter()
            .take_while(|l| l.kind == LineKind::Context)
            .count();
        let trail = self
            .lines
            .iter()
            .rev()
            .take_while(|l| l.kind == LineKind::Context)
            .count();
        let inner = self.lines.len().saturating_sub(lead + trail);
        let len = self
            .lines
            .iter()
            .skip(lead)
            .take(inner)
            .filter(|l| l.kind != other)
            .count();
        LineRange {
            start: span.start + lead,
            len,
        }
    }
}

/// One version of the file in the model's sequence of writes (`None`: deleted).
#[derive(Debug, Clone, Copy)]
pub(super) struct Version<'a> {
    pub content: Option<&'a [u8]>,
    pub origin: &'a Origin,
}

/// Where a line of some version came from.
#[derive(Debug, Clone, Copy)]
enum Source {
    Base(usize),
    Write(usize),
}

/// Splits text into lines that keep their terminator; the last line may have none.
pub(crate) fn split_lines(text: &[u8]) -> Vec<&[u8]> {
    text.split_inclusive(|&c| c == b'\n').collect()
}

/// True when the content is not text: it holds a NUL byte *and* is not valid UTF-8 (an
/// image, an archive, a compiled program). Either alone is text with odd bytes: a script with
/// a trailing `# \0` or a Latin-1 file is still diffed line by line, its odd bytes shown
/// escaped, so one byte cannot turn a readable change into an unreadable one.
pub fn is_binary(text: &[u8]) -> bool {
    memchr::memchr(0, text).is_some() && std::str::from_utf8(text).is_err()
}

/// The hunks turning `base` into the last of `versions`, with provenance. `versions` must not
/// be empty; the last one's content is the proposal (`None` diffs against an empty file).
pub(super) fn compute(model: &str, path: &str, base: &[u8], versions: &[Version<'_>]) -> Vec<Hunk> {
    if versions.is_empty() {
        return Vec::new();
    }
    let deadline = Some(Instant::now() + DIFF_DEADLINE);
    let base_lines = split_lines(base);
    let mut current = base_lines.clone();
    let mut sources: Vec<Source> = (0..base_lines.len()).map(Source::Base).collect();
    let mut removed_by: Vec<Option<usize>> = vec![None; base_lines.len()];
    let mut last_ops = Vec::new();
    for (k, version) in versions.iter().enumerate() {
        let next = split_lines(version.content.unwrap_or(b""));
        let ops = capture_diff_slices_deadline(Algorithm::Myers, &current, &next, deadline);
        let mut next_sources = Vec::with_capacity(next.len());
        for op in &ops {
            let (tag, old, new) = op.as_tag_tuple();
            if tag == DiffTag::Equal {
                next_sources.extend(old.map(|i| sources[i]));
                continue;
            }
            for i in old {
                if let Source::Base(b) = sources[i] {
                    removed_by[b] = Some(k);
                }
            }
            next_sources.extend(new.map(|_| Source::Write(k)));
        }
        current = next;
        sources = next_sources;
        last_ops = ops;
    }
    // With a single write the replayed diff already is base -> proposal.
    let ops = if versions.len() == 1 {
        last_ops
    } else {
        capture_diff_slices_deadline(Algorithm::Myers, &base_lines, &current, deadline)
    };
    let fallback = versions.len() - 1;
    let seq_of = |k: usize| versions[k].origin.seq;
    let mut hunks = Vec::new();
    for group in group_diff_ops(ops, CONTEXT_LINES) {
        let (Some(first), Some(end)) = (group.first(), group.last()) else {
            continue;
        };
        let old = first.old_range().start..end.old_range().end;
        let new = first.new_range().start..end.new_range().end;
        let mut lines = Vec::new();
        for op in &group {
            let (tag, o, n) = op.as_tag_tuple();
            if tag == DiffTag::Equal {
                lines.extend(o.map(|i| line(LineKind::Context, base_lines[i], None)));
                continue;
            }
            for i in o {
                let by = removed_by[i].unwrap_or(fallback);
                lines.push(line(LineKind::Removed, base_lines[i], Some(seq_of(by))));
            }
            for j in n {
                let by = match sources[j] {
                    Source::Write(k) => k,
                    Source::Base(_) => fallback,
                };
                lines.push(line(LineKind::Added, current[j], Some(seq_of(by))));
            }
        }
        let mut origins: Vec<Origin> = versions
            .iter()
            .filter(|v| lines.iter().any(|l| l.origin == Some(v.origin.seq)))
            .map(|v| v.origin.clone())
            .collect();
        origins.dedup_by_key(|o| o.seq);
        let old = LineRange::from_indices(old);
        hunks.push(Hunk {
            id: hunk_id(path, old, &lines),
            number: hunks.len() + 1,
            model: model.to_string(),
            path: path.to_string(),
            old,
            new: LineRange::from_indices(new),
            lines,
            origins,
        });
    }
    hunks
}

/// The hunks turning `old` into `new` (`None`: deleted), as `diff -U3` groups them, with no
/// provenance: for comparing two versions that are not a base and its proposal (one model's
/// file against another's in the review), where no write sequence links them.
pub fn diff_texts(model: &str, path: &str, old: &[u8], new: Option<&[u8]>) -> Vec<Hunk> {
    let old_lines = split_lines(old);
    let new_lines = split_lines(new.unwrap_or(b""));
    let deadline = Some(Instant::now() + DIFF_DEADLINE);
    let ops = capture_diff_slices_deadline(Algorithm::Myers, &old_lines, &new_lines, deadline);
    hunks_of_ops(model, path, &old_lines, &new_lines, ops)
}

/// The hunks of a line diff already made (`ops` turn `old` into `new`), grouped as `diff -U3`
/// does, with no provenance: lets a caller that knows where two texts can differ diff only
/// there (the review's model-against-model diff) and still get ordinary hunks.
pub fn hunks_of_ops(
    model: &str,
    path: &str,
    old: &[&[u8]],
    new: &[&[u8]],
    ops: Vec<similar::DiffOp>,
) -> Vec<Hunk> {
    let mut hunks = Vec::new();
    for group in group_diff_ops(ops, CONTEXT_LINES) {
        let (Some(first), Some(end)) = (group.first(), group.last()) else {
            continue;
        };
        let old_span = first.old_range().start..end.old_range().end;
        let new_span = first.new_range().start..end.new_range().end;
        let mut lines = Vec::new();
        for op in &group {
            let (tag, o, n) = op.as_tag_tuple();
            if tag == DiffTag::Equal {
                lines.extend(
                    o.filter_map(|i| old.get(i))
                        .map(|l| line(LineKind::Context, l, None)),
                );
                continue;
            }
            lines.extend(
                o.filter_map(|i| old.get(i))
                    .map(|l| line(LineKind::Removed, l, None)),
            );
            lines.extend(
                n.filter_map(|j| new.get(j))
                    .map(|l| line(LineKind::Added, l, None)),
            );
        }
        let old_range = LineRange::from_indices(old_span);
        hunks.push(Hunk {
            id: hunk_id(path, old_range, &lines),
            number: hunks.len() + 1,
            model: model.to_string(),
            path: path.to_string(),
            old: old_range,
            new: LineRange::from_indices(new_span),
            lines,
            origins: Vec::new(),
        });
    }
    hunks
}

fn line(kind: LineKind, raw: &[u8], origin: Option<u64>) -> HunkLine {
    let (body, newline) = match raw.strip_suffix(b"\n") {
        Some(body) => (body, true),
        None => (raw, false),
    };
    HunkLine {
        kind,
        text: crate::sanitize::lossless(body).into_owned(),
        newline,
        origin,
    }
}

/// 12 hex digits of blake3 over the path, the base position and the lines.
fn hunk_id(path: &str, old: LineRange, lines: &[HunkLine]) -> String {
    let mut h = blake3::Hasher::new();
    h.update(path.as_bytes());
    h.update(&[0]);
    h.update(old.start.to_string().as_bytes());
    for l in lines {
        let tag: &[u8] = match l.kind {
            LineKind::Context => b" ",
            LineKind::Added => b"+",
            LineKind::Removed => b"-",
        };
        h.update(tag);
        h.update(l.text.as_bytes());
        h.update(if l.newline { b"\n" } else { b"\0" });
    }
    h.finalize().to_hex()[..12].to_string()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn origin(seq: u64, tool: &str) -> Origin {
        Origin {
            seq,
            tool: tool.into(),
            call_id: format!("c{seq}"),
            agent: None,
        }
    }

    fn numbered(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    #[test]
    fn groups_like_unified_diff_with_three_lines_of_context() {
        let base = numbered(30);
        let new = base
            .replace("line 2\n", "LINE 2\n")
            .replace("line 6\n", "LINE 6\n")
            .replace("line 20\n", "");
        let o = origin(0, "write_file");
        let v = [Version {
            content: Some(new.as_bytes()),
            origin: &o,
        }];
        let h = compute("m", "f.txt", base.as_bytes(), &v);
        assert_eq!(h.len(), 2, "changes 3 lines apart share a hunk");
        assert_eq!(h[0].old, LineRange { start: 1, len: 9 });
        assert_eq!(h[0].changed_old(), LineRange { start: 2, len: 5 });
        assert_eq!(h[0].changed_new(), LineRange { start: 2, len: 5 });
        assert_eq!((h[0].added(), h[0].removed()), (2, 2));
        assert_eq!(h[1].old, LineRange { start: 17, len: 7 });
        assert_eq!(h[1].new, LineRange { start: 17, len: 6 });
        assert_eq!(h[1].changed_old(), LineRange { start: 20, len: 1 });
        assert_eq!(h[1].changed_new(), LineRange { start: 20, len: 0 });
        assert_eq!(h[1].number, 2);
        assert_eq!(h[1].id.len(), 12);
        assert_ne!(h[0].id, h[1].id);
        assert_eq!(h[1].old.header(), "17,7");
        assert_eq!(h[1].changed_new().to_string(), "before line 20");
    }

    #[test]
    fn each_line_is_credited_to_the_write_that_made_it() {
        let base = numbered(20);
        let first = base.replace("line 3\n", "three\n");
        let second = first
            .replace("line 15\n", "fifteen\n")
            .replace("line 18\n", "");
        let w = origin(4, "write_file");
        let e = origin(7, "edit_file");
        let v = [
            Version {
                content: Some(first.as_bytes()),
                origin: &w,
            },
            Version {
                content: Some(second.as_bytes()),
                origin: &e,
            },
        ];
        let h = compute("m", "f", base.as_bytes(), &v);
        assert_eq!(h.len(), 2);
        assert_eq!(h[0].tools(), vec!["write_file"]);
        assert_eq!(h[1].tools(), vec!["edit_file"]);
        let removed: Vec<Option<u64>> = h[1]
            .lines
            .iter()
            .filter(|l| l.kind == LineKind::Removed)
            .map(|l| l.origin)
            .collect();
        assert_eq!(removed, vec![Some(7), Some(7)]);
    }

    #[test]
    fn a_deletion_only_hunk_takes_the_write_that_removed_the_lines() {
        let base = numbered(10);
        let first = format!("{base}extra\n");
        let second = first.replace("line 5\n", "");
        let a = origin(0, "write_file");
        let b = origin(1, "bash");
        let v = [
            Version {
                content: Some(first.as_bytes()),
                origin: &a,
            },
            Version {
                content: Some(second.as_bytes()),
                origin: &b,
            },
        ];
        let h = compute("m", "f", base.as_bytes(), &v);
        assert_eq!(h.len(), 1, "lines 5 and 11 are within six lines");
        let tools: Vec<(LineKind, Option<u64>)> = h[0]
            .lines
            .iter()
            .filter(|l| l.kind != LineKind::Context)
            .map(|l| (l.kind, l.origin))
            .collect();
        assert_eq!(
            tools,
            vec![(LineKind::Removed, Some(1)), (LineKind::Added, Some(0))]
        );
        assert_eq!(h[0].tools(), vec!["write_file", "bash"]);
    }

    #[test]
    fn missing_final_newline_and_crlf_are_kept_in_lines() {
        let o = origin(0, "write_file");
        let v = [Version {
            content: Some(b"a\r\nb"),
            origin: &o,
        }];
        let h = compute("m", "f", b"a\r\n", &v);
        let last = h[0].lines.last().unwrap();
        assert_eq!((last.text.as_str(), last.newline), ("b", false));
        assert_eq!(h[0].lines[0].text, "a\r");
    }

    #[test]
    fn a_deleted_file_is_one_hunk_removing_everything() {
        let o = origin(3, "bash");
        let v = [Version {
            content: None,
            origin: &o,
        }];
        let h = compute("m", "f", b"x\ny\n", &v);
        assert_eq!(h.len(), 1);
        assert_eq!((h[0].added(), h[0].removed()), (0, 2));
        assert_eq!(h[0].new, LineRange { start: 1, len: 0 });
        assert_eq!(h[0].new.header(), "0,0");
    }
}
