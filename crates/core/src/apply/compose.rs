//! Composition: the user's pick of whole change sets, files and hunks, from one model or
//! several, turned into one [`ApplyPlan`], or into the list of conflicts that forbid it.
//!
//! This is a pure function over [`ChangeSet`]s: nothing is read or written, so a UI can
//! compose on every click and show conflicts before the user confirms anything.
//!
//! Per path, every picked piece becomes an *edit* of the base: a hunk's changed base lines
//! (without its context) and the proposed lines replacing them; a whole file contributes all of
//! its hunks. Edits of different models conflict when their base ranges overlap or when an
//! insertion touches the other's range (two insertions at the same point included), since
//! their order would be a guess; identical edits from two models are taken once. The new
//! content is the base with the surviving edits applied from top to bottom, so hunk offsets
//! need no bookkeeping. Picking the same file whole from two models conflicts unless both
//! propose the same bytes: a whole-file pick means "exactly this file". Created, deleted and
//! binary files have no meaningful hunks and can only be picked whole.
//!
//! A hunk joins nearby changes (context merging), so single changed lines can be picked too
//! ([`Pick::Line`]): each picked removed line is an edit deleting that base line, each picked
//! added line an edit inserting it where it sits in the hunk (before the next base line), and
//! edits that touch (a removed line and the added line replacing it) become one edit. Unpicked
//! removed lines stay as they are and unpicked added lines are left out, as when lazygit stages
//! lines. Line edits conflict with other models' edits by the same rules as hunks.

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;

use serde::{Deserialize, Serialize};

use super::{ApplyPlan, PlannedWrite};
use crate::workspace::changeset::hunks::split_lines;
use crate::workspace::changeset::{ChangeKind, ChangeSet, FileChange, Hunk, LineKind, LineRange};

/// One item of a selection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "pick", rename_all = "snake_case")]
pub enum Pick {
    /// Every file of one model's change set.
    ChangeSet {
        /// The model entry.
        model: String,
    },
    /// One file of one model's change set, whole.
    File {
        /// The model entry.
        model: String,
        /// The file's path.
        path: String,
    },
    /// One hunk of one file of one model's change set.
    Hunk {
        /// The model entry.
        model: String,
        /// The file's path.
        path: String,
        /// The hunk's [`Hunk::id`].
        hunk: String,
    },
    /// One changed (added or removed) line of one hunk: a hunk joins nearby changes, and this
    /// takes one of them without the others.
    Line {
        /// The model entry.
        model: String,
        /// The file's path.
        path: String,
        /// The hunk's [`Hunk::id`].
        hunk: String,
        /// Index into the hunk's [`Hunk::lines`]; must be an added or removed line.
        line: usize,
    },
}

impl Pick {
    /// The model entry the pick takes from.
    pub fn model(&self) -> &str {
        match self {
            Pick::ChangeSet { model }
            | Pick::File { model, .. }
            | Pick::Hunk { model, .. }
            | Pick::Line { model, .. } => model,
        }
    }
}

/// What the user chose to apply. Empty is valid ("none of them").
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Selection {
    /// The picks, in the order the user made them (models are listed in that order).
    pub items: Vec<Pick>,
}

impl Selection {
    /// An empty selection.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one model's whole change set.
    pub fn change_set(mut self, model: &str) -> Self {
        self.items.push(Pick::ChangeSet {
            model: model.to_string(),
        });
        self
    }

    /// Adds one file of one model, whole.
    pub fn file(mut self, model: &str, path: &str) -> Self {
        self.items.push(Pick::File {
            model: model.to_string(),
            path: path.to_string(),
        });
        self
    }

    /// Adds one hunk (by [`Hunk::id`]) of one file of one model.
    pub fn hunk(mut self, model: &str, path: &str, hunk: &str) -> Self {
        self.items.push(Pick::Hunk {
            model: model.to_string(),
            path: path.to_string(),
            hunk: hunk.to_string(),
        });
        self
    }

    /// Adds one changed line (index into [`Hunk::lines`]) of one hunk.
    pub fn line(mut self, model: &str, path: &str, hunk: &str, line: usize) -> Self {
        self.items.push(Pick::Line {
            model: model.to_string(),
            path: path.to_string(),
            hunk: hunk.to_string(),
            line,
        });
        self
    }

    /// True when nothing is picked.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

/// One side of a conflict: a model's whole file or one of its hunks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConflictSide {
    /// The model entry.
    pub model: String,
    /// The hunk's id; `None` for a whole-file pick.
    pub hunk: Option<String>,
    /// The base lines the hunk changes; `None` for a whole-file pick.
    pub lines: Option<LineRange>,
}

impl fmt::Display for ConflictSide {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.hunk, &self.lines) {
            (Some(id), Some(lines)) => write!(f, "{} hunk {id} ({lines})", self.model),
            _ => write!(f, "{} (whole file)", self.model),
        }
    }
}

/// Two picked pieces of one path that cannot both be applied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Conflict {
    /// The path.
    pub path: String,
    /// The piece picked first.
    pub first: ConflictSide,
    /// The piece that collides with it.
    pub second: ConflictSide,
}

impl fmt::Display for Conflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} and {} change the same lines differently",
            self.path, self.first, self.second
        )
    }
}

/// Why a selection cannot become a plan. Nothing has been written when this is returned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ComposeError {
    /// The selection names a model with no change set.
    #[error("no change set for model {model}; pick one of the models that ran: {known}")]
    UnknownModel {
        /// The model named.
        model: String,
        /// The models that have a change set, comma-separated.
        known: String,
    },
    /// Two change sets carry the same model label.
    #[error(
        "two change sets are both labelled {model}; give each model entry its own label (e.g. {model}#2)"
    )]
    DuplicateModel {
        /// The repeated label.
        model: String,
    },
    /// The model did not change the path.
    #[error("{model} did not change {path}; pick a file that is in its change set")]
    UnknownFile {
        /// The model.
        model: String,
        /// The path named.
        path: String,
    },
    /// The file has no hunk with that id.
    #[error(
        "{model}'s change to {path} has no hunk {hunk}; use the ids of the change set's hunks (Hunk::id)"
    )]
    UnknownHunk {
        /// The model.
        model: String,
        /// The path.
        path: String,
        /// The id named.
        hunk: String,
    },
    /// A line pick names a context line or a line past the hunk's end.
    #[error(
        "line {line} of {model}'s hunk {hunk} in {path} is not an added or removed line; pick one of the changed lines"
    )]
    UnchangedLine {
        /// The model.
        model: String,
        /// The path.
        path: String,
        /// The hunk's id.
        hunk: String,
        /// The index named.
        line: usize,
    },
    /// A hunk was picked from a file that can only be taken whole.
    #[error(
        "{path} can only be taken whole from {model} because {why}; select the file instead of its hunks"
    )]
    WholeFileOnly {
        /// The model.
        model: String,
        /// The path.
        path: String,
        /// Why (created, deleted, binary).
        why: &'static str,
    },
    /// Two change sets disagree about the path's base: they come from different runs.
    #[error(
        "{path} started from different contents for {first} and {second}, so their change sets come from different runs; pick from one run's change sets"
    )]
    DifferentBase {
        /// The path.
        path: String,
        /// One model.
        first: String,
        /// The other.
        second: String,
    },
    /// Picked pieces collide; the UI shows these before anything is written.
    #[error("the selection has conflicts, nothing was written; keep one side of each:{}", list(.0))]
    Conflicts(Vec<Conflict>),
}

fn list(conflicts: &[Conflict]) -> String {
    conflicts.iter().map(|c| format!("\n  - {c}")).collect()
}

/// Everything picked from one model for one path.
struct Take<'a> {
    model: &'a str,
    file: &'a FileChange,
    whole: bool,
    /// Indices into `file.hunks`, for a partial pick.
    hunks: Vec<usize>,
    /// Single changed lines, as (index into `file.hunks`, index into its lines), sorted; a
    /// hunk also picked whole (or the whole file) makes its line picks moot.
    lines: Vec<(usize, usize)>,
}

impl<'a> Take<'a> {
    fn chosen(&self) -> Vec<&'a Hunk> {
        if self.whole {
            self.file.hunks.iter().collect()
        } else {
            self.hunks.iter().map(|&i| &self.file.hunks[i]).collect()
        }
    }

    /// The hunks some of whose lines are picked (and not the hunk whole), in file order.
    fn line_hunks(&self) -> Vec<usize> {
        let mut out: Vec<usize> = Vec::new();
        for &(h, _) in &self.lines {
            if !self.whole && !self.hunks.contains(&h) && out.last() != Some(&h) {
                out.push(h);
            }
        }
        out
    }

    /// The picked line indices of hunk `h`.
    fn lines_of(&self, h: usize) -> Vec<usize> {
        self.lines
            .iter()
            .filter(|(hunk, _)| *hunk == h)
            .map(|(_, l)| *l)
            .collect()
    }

    fn side(&self, hunk: Option<&Hunk>) -> ConflictSide {
        ConflictSide {
            model: self.model.to_string(),
            hunk: hunk.map(|h| h.id.clone()),
            lines: hunk.map(Hunk::changed_old),
        }
    }

    /// Conflict sides describing this take: the whole file, or each picked hunk.
    fn sides(&self) -> Vec<ConflictSide> {
        if self.whole {
            vec![self.side(None)]
        } else {
            self.chosen()
                .into_iter()
                .chain(self.line_hunks().into_iter().map(|h| &self.file.hunks[h]))
                .map(|h| self.side(Some(h)))
                .collect()
        }
    }
}

/// A replacement of base lines `old` by `new`, from one hunk (or some of its lines) of one take.
struct Edit<'a> {
    take: usize,
    hunk: &'a Hunk,
    old: Range<usize>,
    new: Vec<&'a [u8]>,
    /// What a conflict names: the hunk's changed lines, or only the picked lines' span.
    span: LineRange,
}

/// The edits of the picked changed lines `picked` (indices into `hunk.lines`) of a hunk, with
/// `proposed` the proposed file's lines. Walking the hunk keeps the base and proposed positions;
/// a removed line deletes its base line, an added line is inserted before the next base line,
/// and edits that meet (a removed line and the added line replacing it) are joined.
fn line_edits<'a>(
    hunk: &Hunk,
    picked: &[usize],
    proposed: &[&'a [u8]],
) -> Vec<(Range<usize>, Vec<&'a [u8]>)> {
    let mut old = hunk.old.indices().start;
    let mut new = hunk.new.indices().start;
    let mut out: Vec<(Range<usize>, Vec<&'a [u8]>)> = Vec::new();
    for (i, line) in hunk.lines.iter().enumerate() {
        let edit = match line.kind {
            LineKind::Context => None,
            LineKind::Removed => Some((old..old + 1, None)),
            LineKind::Added => Some((old..old, proposed.get(new).copied())),
        };
        match line.kind {
            LineKind::Context => {
                old += 1;
                new += 1;
            }
            LineKind::Removed => old += 1,
            LineKind::Added => new += 1,
        }
        let Some((range, text)) = edit else { continue };
        if !picked.contains(&i) {
            continue;
        }
        match out.last_mut() {
            Some((last, texts)) if last.end == range.start => {
                last.end = range.end;
                texts.extend(text);
            }
            _ => out.push((range, text.into_iter().collect())),
        }
    }
    out
}

impl Edit<'_> {
    fn side(&self, takes: &[Take<'_>]) -> ConflictSide {
        ConflictSide {
            model: takes[self.take].model.to_string(),
            hunk: Some(self.hunk.id.clone()),
            lines: Some(self.span),
        }
    }
}

/// Composes `selection` over the change sets of one run into one plan labelled `label`
/// (the turn's prompt, shown by rewind). Paths come out sorted.
pub fn compose(
    sets: &[ChangeSet],
    selection: &Selection,
    label: &str,
) -> Result<ApplyPlan, ComposeError> {
    let mut by_model: BTreeMap<&str, &ChangeSet> = BTreeMap::new();
    for set in sets {
        if by_model.insert(set.model.as_str(), set).is_some() {
            return Err(ComposeError::DuplicateModel {
                model: set.model.clone(),
            });
        }
    }
    let mut picked: BTreeMap<&str, Vec<Take<'_>>> = BTreeMap::new();
    for item in &selection.items {
        resolve(item, &by_model, &mut picked)?;
    }
    let mut plan = ApplyPlan {
        label: label.to_string(),
        ..ApplyPlan::default()
    };
    let mut conflicts = Vec::new();
    let mut used_models: Vec<&str> = Vec::new();
    for (path, takes) in &picked {
        check_same_base(path, takes)?;
        match compose_file(takes) {
            Err(mut found) => conflicts.append(&mut found),
            Ok(None) => {}
            Ok(Some((write, models, hunks))) => {
                plan.writes.push(write);
                plan.hunks.extend(hunks);
                used_models.extend(models);
            }
        }
    }
    if !conflicts.is_empty() {
        return Err(ComposeError::Conflicts(conflicts));
    }
    // Models in the order the user picked them.
    for item in &selection.items {
        let model = item.model();
        if used_models.contains(&model) && !plan.models.iter().any(|m| m == model) {
            plan.models.push(model.to_string());
        }
    }
    Ok(plan)
}

/// Adds one pick to the per-path takes, checking that what it names exists.
fn resolve<'a>(
    item: &Pick,
    by_model: &BTreeMap<&str, &'a ChangeSet>,
    picked: &mut BTreeMap<&'a str, Vec<Take<'a>>>,
) -> Result<(), ComposeError> {
    let model = &item.model().to_string();
    let set = by_model
        .get(model.as_str())
        .ok_or_else(|| ComposeError::UnknownModel {
            model: model.clone(),
            known: by_model.keys().copied().collect::<Vec<_>>().join(", "),
        })?;
    let find_file = |path: &str| {
        set.file(path).ok_or_else(|| ComposeError::UnknownFile {
            model: model.clone(),
            path: path.to_string(),
        })
    };
    let mut take = |file: &'a FileChange, hunk: Option<(usize, Option<usize>)>| {
        let takes = picked.entry(file.path.as_str()).or_default();
        let i = match takes.iter().position(|t| t.model == set.model) {
            Some(i) => i,
            None => {
                takes.push(Take {
                    model: &set.model,
                    file,
                    whole: false,
                    hunks: Vec::new(),
                    lines: Vec::new(),
                });
                takes.len() - 1
            }
        };
        let t = &mut takes[i];
        match hunk {
            None => t.whole = true,
            Some((h, None)) => {
                if let Err(at) = t.hunks.binary_search(&h) {
                    t.hunks.insert(at, h);
                }
            }
            Some((h, Some(line))) => {
                if let Err(at) = t.lines.binary_search(&(h, line)) {
                    t.lines.insert(at, (h, line));
                }
            }
        }
    };
    match item {
        Pick::ChangeSet { .. } => set.files.iter().for_each(|f| take(f, None)),
        Pick::File { path, .. } => take(find_file(path)?, None),
        Pick::Hunk { path, hunk, .. } | Pick::Line { path, hunk, .. } => {
            let file = find_file(path)?;
            if let Some(why) = file.whole_file_only() {
                return Err(ComposeError::WholeFileOnly {
                    model: model.clone(),
                    path: path.clone(),
                    why,
                });
            }
            let index = file
                .hunks
                .iter()
                .position(|h| &h.id == hunk)
                .ok_or_else(|| ComposeError::UnknownHunk {
                    model: model.clone(),
                    path: path.clone(),
                    hunk: hunk.clone(),
                })?;
            let line = match item {
                Pick::Line { line, .. } => {
                    let changed = file.hunks[index]
                        .lines
                        .get(*line)
                        .is_some_and(|l| l.kind != LineKind::Context);
                    if !changed {
                        return Err(ComposeError::UnchangedLine {
                            model: model.clone(),
                            path: path.clone(),
                            hunk: hunk.clone(),
                            line: *line,
                        });
                    }
                    Some(*line)
                }
                _ => None,
            };
            take(file, Some((index, line)));
        }
    }
    Ok(())
}

fn check_same_base(path: &str, takes: &[Take<'_>]) -> Result<(), ComposeError> {
    let Some(first) = takes.first() else {
        return Ok(());
    };
    for t in &takes[1..] {
        if t.file.base != first.file.base {
            return Err(ComposeError::DifferentBase {
                path: path.to_string(),
                first: first.model.to_string(),
                second: t.model.to_string(),
            });
        }
    }
    Ok(())
}

/// The write, contributing models and hunk provenance ids for one path; `Ok(None)` when the
/// picks leave the file as it was; the conflicts otherwise.
type FileResult<'a> = Result<Option<(PlannedWrite, Vec<&'a str>, Vec<String>)>, Vec<Conflict>>;

fn compose_file<'a>(takes: &[Take<'a>]) -> FileResult<'a> {
    let Some(first) = takes.first() else {
        return Ok(None);
    };
    let path = first.file.path.clone();
    let conflict = |a: ConflictSide, b: ConflictSide| Conflict {
        path: path.clone(),
        first: a,
        second: b,
    };
    let mut conflicts = Vec::new();
    // Whole-file picks: equal proposals are one pick; different ones, or a whole-only file
    // (created, deleted, binary) next to anything else, collide.
    let mut kept: Vec<usize> = Vec::new();
    for (i, t) in takes.iter().enumerate() {
        let mut duplicate = false;
        for &k in &kept {
            let other = &takes[k];
            let whole_only =
                t.file.whole_file_only().is_some() || other.file.whole_file_only().is_some();
            if other.whole && t.whole {
                if other.file.proposed == t.file.proposed {
                    duplicate = true;
                } else {
                    conflicts.push(conflict(other.side(None), t.side(None)));
                }
            } else if whole_only {
                for a in other.sides() {
                    for b in t.sides() {
                        conflicts.push(conflict(a.clone(), b));
                    }
                }
            }
        }
        if !duplicate {
            kept.push(i);
        }
    }
    if !conflicts.is_empty() {
        return Err(conflicts);
    }
    let models: Vec<&'a str> = takes.iter().map(|t| t.model).collect();
    let provenance: Vec<String> = takes
        .iter()
        .flat_map(|t| {
            let hunks = t.chosen();
            let line_hunks = t.line_hunks();
            if hunks.is_empty() && line_hunks.is_empty() {
                vec![format!("{}:{}", t.model, t.file.path)]
            } else {
                // A line pick names its hunk and the picked lines' indices in it.
                let lines = line_hunks.into_iter().map(|h| {
                    let picked: Vec<String> =
                        t.lines_of(h).iter().map(ToString::to_string).collect();
                    format!(
                        "{}:lines {}",
                        t.file.hunks[h].provenance(),
                        picked.join(",")
                    )
                });
                hunks
                    .into_iter()
                    .map(Hunk::provenance)
                    .chain(lines)
                    .collect()
            }
        })
        .collect();
    let base = first.file.base.as_deref().map(|b| b.to_vec());
    // A single whole pick (after merging duplicates) is taken byte for byte.
    if let [only] = kept.as_slice()
        && takes[*only].whole
    {
        let file = takes[*only].file;
        let write = PlannedWrite {
            path,
            base,
            proposed: file.proposed.as_deref().map(|p| p.to_vec()),
            // The mode review showed, for a new file (or one replacing a base link, new as a
            // file) and for a change of the executable bit; otherwise the user's is kept.
            mode: if file.kind == ChangeKind::Created || file.base_symlink || file.mode_changed() {
                file.shown_mode()
            } else {
                None
            },
            symlink: file.symlink && file.proposed.is_some(),
            base_symlink: file.base_symlink,
        };
        return Ok(Some((write, models, provenance)));
    }
    let edits = collect_edits(takes, &kept, &conflict)?;
    let base_bytes = base.as_deref().unwrap_or(b"");
    let base_lines = split_lines(base_bytes);
    let mut out = Vec::with_capacity(base_bytes.len());
    let mut pos = 0;
    for e in &edits {
        base_lines[pos..e.old.start]
            .iter()
            .for_each(|l| out.extend_from_slice(l));
        e.new.iter().for_each(|l| out.extend_from_slice(l));
        pos = e.old.end;
    }
    base_lines[pos..]
        .iter()
        .for_each(|l| out.extend_from_slice(l));
    if out == base_bytes {
        return Ok(None);
    }
    let write = PlannedWrite {
        path,
        base,
        proposed: Some(out),
        mode: None,
        symlink: false,
        base_symlink: first.file.base_symlink,
    };
    Ok(Some((write, models, provenance)))
}

/// Every edit of the kept takes, sorted by base position, identical ones merged; the
/// conflicts between different models' edits otherwise.
fn collect_edits<'a>(
    takes: &[Take<'a>],
    kept: &[usize],
    conflict: &dyn Fn(ConflictSide, ConflictSide) -> Conflict,
) -> Result<Vec<Edit<'a>>, Vec<Conflict>> {
    let mut edits: Vec<Edit<'a>> = Vec::new();
    let mut conflicts = Vec::new();
    for &i in kept {
        let t = &takes[i];
        let proposed = split_lines(t.file.proposed.as_deref().map_or(&[], Vec::as_slice));
        let whole_hunks = t.chosen().into_iter().map(|hunk| Edit {
            take: i,
            hunk,
            old: hunk.changed_old().indices(),
            new: proposed
                .get(hunk.changed_new().indices())
                .unwrap_or_default()
                .to_vec(),
            span: hunk.changed_old(),
        });
        let line_picks = t.line_hunks().into_iter().flat_map(|h| {
            let hunk = &t.file.hunks[h];
            line_edits(hunk, &t.lines_of(h), &proposed)
                .into_iter()
                .map(move |(old, new)| Edit {
                    take: i,
                    hunk,
                    span: LineRange::from_indices(old.clone()),
                    old,
                    new,
                })
        });
        for edit in whole_hunks.chain(line_picks).collect::<Vec<_>>() {
            let mut same = false;
            for other in &edits {
                if other.take == i {
                    continue;
                }
                if other.old == edit.old && other.new == edit.new {
                    same = true;
                } else if overlaps(&other.old, &edit.old) {
                    conflicts.push(conflict(other.side(takes), edit.side(takes)));
                }
            }
            if !same {
                edits.push(edit);
            }
        }
    }
    if !conflicts.is_empty() {
        return Err(conflicts);
    }
    edits.sort_by_key(|e| (e.old.start, e.old.end));
    Ok(edits)
}

/// Whether two edits of base lines collide: overlapping ranges, or an insertion point inside
/// or at either edge of the other range (or at the same point as another insertion).
fn overlaps(a: &Range<usize>, b: &Range<usize>) -> bool {
    match (a.is_empty(), b.is_empty()) {
        (true, true) => a.start == b.start,
        (true, false) => b.start <= a.start && a.start <= b.end,
        (false, true) => a.start <= b.start && b.start <= a.end,
        (false, false) => a.start < b.end && b.start < a.end,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::workspace::changeset::BaseReader;
    use crate::workspace::{Base, FileWrite, WriteOrigin};

    const BASE: &str = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\n17\n18\n19\n20\n";

    /// Change sets of models writing `a.txt` (base [`BASE`]) to each given content.
    fn sets(proposals: &[(&str, &str)]) -> Vec<ChangeSet> {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("a.txt"), BASE).unwrap();
        let base = Base::capture(d.path()).unwrap();
        proposals
            .iter()
            .map(|(model, content)| {
                let w = FileWrite {
                    path: "a.txt".into(),
                    content: Some(Arc::new(content.as_bytes().to_vec())),
                    origin: WriteOrigin::new("write_file", "c"),
                    seq: 0,
                    symlink: false,
                };
                ChangeSet::build(model, &base, &[w], &BaseReader::new(&base), None).unwrap()
            })
            .collect()
    }

    /// [`BASE`] with whole lines replaced (`to` may hold several lines, or none).
    fn rep(changes: &[(&str, &str)]) -> String {
        BASE.lines()
            .map(|l| match changes.iter().find(|(from, _)| *from == l) {
                Some((_, to)) => to.to_string(),
                None => format!("{l}\n"),
            })
            .collect()
    }

    fn id(sets: &[ChangeSet], model: usize, hunk: usize) -> String {
        sets[model].files[0].hunks[hunk].id.clone()
    }

    fn content(plan: &ApplyPlan) -> String {
        String::from_utf8(plan.writes[0].proposed.clone().unwrap()).unwrap()
    }

    #[test]
    fn overlap_rules_treat_touching_insertions_as_conflicts() {
        assert!(overlaps(&(2..4), &(3..5)));
        assert!(
            !overlaps(&(2..4), &(4..6)),
            "adjacent replacements are fine"
        );
        assert!(overlaps(&(4..4), &(4..4)));
        assert!(overlaps(&(4..4), &(2..4)) && overlaps(&(2..4), &(2..2)));
        assert!(!overlaps(&(5..5), &(2..4)));
    }

    #[test]
    fn hunks_of_one_model_apply_with_offsets() {
        let new = rep(&[("2", "2a\n2b\n2c\n"), ("10", ""), ("18", "eighteen\n")]);
        let s = sets(&[("A", &new)]);
        assert_eq!(s[0].files[0].hunks.len(), 3);
        let sel =
            Selection::new()
                .hunk("A", "a.txt", &id(&s, 0, 0))
                .hunk("A", "a.txt", &id(&s, 0, 2));
        let plan = compose(&s, &sel, "t").unwrap();
        assert_eq!(
            content(&plan),
            rep(&[("2", "2a\n2b\n2c\n"), ("18", "eighteen\n")])
        );
        assert_eq!(plan.models, vec!["A"]);
        assert_eq!(plan.hunks.len(), 2);
        // All hunks picked one by one give exactly the whole file.
        let all = (0..3).fold(Selection::new(), |sel, h| {
            sel.hunk("A", "a.txt", &id(&s, 0, h))
        });
        assert_eq!(content(&compose(&s, &all, "t").unwrap()), new);
    }

    #[test]
    fn hunks_from_two_models_merge_when_disjoint_and_conflict_when_not() {
        let a = rep(&[("3", "three (A)\n")]);
        let b = rep(&[("15", "fifteen (B)\n"), ("4", "four (B)\n")]);
        let s = sets(&[("A", &a), ("B", &b)]);
        let merged =
            Selection::new()
                .hunk("A", "a.txt", &id(&s, 0, 0))
                .hunk("B", "a.txt", &id(&s, 1, 1));
        let plan = compose(&s, &merged, "t").unwrap();
        assert_eq!(
            content(&plan),
            rep(&[("3", "three (A)\n"), ("15", "fifteen (B)\n")])
        );
        assert_eq!(plan.models, vec!["A", "B"]);

        // Line 3 (A) and line 4 (B) are adjacent replacements: allowed.
        let adjacent = Selection::new()
            .change_set("A")
            .hunk("B", "a.txt", &id(&s, 1, 0));
        assert!(compose(&s, &adjacent, "t").is_ok());
        // Whole files from both: different results conflict.
        let err = compose(&s, &Selection::new().change_set("A").change_set("B"), "t").unwrap_err();
        let ComposeError::Conflicts(c) = err else {
            panic!("expected conflicts, got {err:?}");
        };
        assert_eq!(
            (c[0].first.hunk.clone(), c[0].second.model.as_str()),
            (None, "B")
        );
    }

    #[test]
    fn identical_edits_from_two_models_are_taken_once() {
        let same = rep(&[("7", "seven\n")]);
        let s = sets(&[("A", &same), ("B", &same)]);
        let sel =
            Selection::new()
                .hunk("A", "a.txt", &id(&s, 0, 0))
                .hunk("B", "a.txt", &id(&s, 1, 0));
        assert_eq!(content(&compose(&s, &sel, "t").unwrap()), same);
        let whole = Selection::new().change_set("A").change_set("B");
        let plan = compose(&s, &whole, "t").unwrap();
        assert_eq!((content(&plan), plan.models.len()), (same, 2));
    }

    #[test]
    fn same_point_insertions_conflict_and_errors_name_what_is_wrong() {
        let a = rep(&[("9", "9\nA\n")]);
        let b = rep(&[("9", "9\nB\n")]);
        let s = sets(&[("A", &a), ("B", &b)]);
        let sel =
            Selection::new()
                .hunk("A", "a.txt", &id(&s, 0, 0))
                .hunk("B", "a.txt", &id(&s, 1, 0));
        let err = compose(&s, &sel, "t").unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("a.txt: A hunk") && text.contains("before line 10"),
            "{text}"
        );
        let err = compose(&s, &Selection::new().change_set("C"), "t").unwrap_err();
        assert!(err.to_string().contains("A, B"), "{err}");
        let err = compose(&s, &Selection::new().hunk("A", "a.txt", "nope"), "t").unwrap_err();
        assert!(matches!(err, ComposeError::UnknownHunk { .. }));
        assert!(
            compose(&s, &Selection::new(), "none")
                .unwrap()
                .writes
                .is_empty()
        );
    }
    /// Index into hunk `hunk` of model `model` of the changed line with this kind and text.
    fn line(s: &[ChangeSet], model: usize, hunk: usize, kind: LineKind, text: &str) -> usize {
        s[model].files[0].hunks[hunk]
            .lines
            .iter()
            .position(|l| l.kind == kind && l.text == text)
            .unwrap()
    }

    #[test]
    fn line_picks_take_one_change_of_a_joined_hunk() {
        // Lines 3 and 5 changed: one hunk, since their context joins.
        let a = rep(&[("3", "three\n"), ("5", "five\n")]);
        let s = sets(&[("A", &a)]);
        assert_eq!(s[0].files[0].hunks.len(), 1);
        let h = id(&s, 0, 0);
        // A modified line: its removed and added lines together replace it.
        let pair = Selection::new()
            .line("A", "a.txt", &h, line(&s, 0, 0, LineKind::Removed, "3"))
            .line("A", "a.txt", &h, line(&s, 0, 0, LineKind::Added, "three"));
        let plan = compose(&s, &pair, "t").unwrap();
        assert_eq!(content(&plan), rep(&[("3", "three\n")]));
        assert_eq!(plan.models, vec!["A"]);
        assert!(
            plan.hunks[0].ends_with(&format!("#{h}:lines 2,3")),
            "{:?}",
            plan.hunks
        );
        // A removed line alone: deleted, its replacement left out.
        let removed =
            Selection::new().line("A", "a.txt", &h, line(&s, 0, 0, LineKind::Removed, "5"));
        assert_eq!(
            content(&compose(&s, &removed, "t").unwrap()),
            rep(&[("5", "")])
        );
        // An added line alone: inserted where it sits, the line it replaces kept.
        let added =
            Selection::new().line("A", "a.txt", &h, line(&s, 0, 0, LineKind::Added, "five"));
        assert_eq!(
            content(&compose(&s, &added, "t").unwrap()),
            rep(&[("5", "5\nfive\n")])
        );
        // Every changed line picked gives the whole hunk.
        let all = (s[0].files[0].hunks[0].lines.iter().enumerate())
            .filter(|(_, l)| l.kind != LineKind::Context)
            .fold(Selection::new(), |sel, (i, _)| {
                sel.line("A", "a.txt", &h, i)
            });
        assert_eq!(content(&compose(&s, &all, "t").unwrap()), a);
        // A context line is not a change.
        let context =
            Selection::new().line("A", "a.txt", &h, line(&s, 0, 0, LineKind::Context, "4"));
        assert!(matches!(
            compose(&s, &context, "t").unwrap_err(),
            ComposeError::UnchangedLine { .. }
        ));
    }

    #[test]
    fn line_picks_insert_and_edit_at_the_file_start_and_end() {
        // Insertions between lines 4/5 and 6/7 join into one hunk; take the second only.
        let ins = rep(&[("4", "4\nX\n"), ("6", "6\nY\n")]);
        // Lines 1 and 3 changed (start of file), lines 18 and 20 changed (end of file).
        let edges = rep(&[
            ("1", "one\n"),
            ("3", "three\n"),
            ("18", "eighteen\n"),
            ("20", "twenty\n"),
        ]);
        let s = sets(&[("I", &ins), ("E", &edges)]);
        let h = id(&s, 0, 0);
        let sel = Selection::new().line("I", "a.txt", &h, line(&s, 0, 0, LineKind::Added, "Y"));
        assert_eq!(
            content(&compose(&s, &sel, "t").unwrap()),
            rep(&[("6", "6\nY\n")])
        );
        let (top, bottom) = (id(&s, 1, 0), id(&s, 1, 1));
        let sel = Selection::new()
            .line("E", "a.txt", &top, line(&s, 1, 0, LineKind::Removed, "1"))
            .line("E", "a.txt", &top, line(&s, 1, 0, LineKind::Added, "one"))
            .line(
                "E",
                "a.txt",
                &bottom,
                line(&s, 1, 1, LineKind::Removed, "20"),
            )
            .line(
                "E",
                "a.txt",
                &bottom,
                line(&s, 1, 1, LineKind::Added, "twenty"),
            );
        assert_eq!(
            content(&compose(&s, &sel, "t").unwrap()),
            rep(&[("1", "one\n"), ("20", "twenty\n")])
        );
        // The last line removed alone.
        let sel = Selection::new().line(
            "E",
            "a.txt",
            &bottom,
            line(&s, 1, 1, LineKind::Removed, "20"),
        );
        assert_eq!(
            content(&compose(&s, &sel, "t").unwrap()),
            rep(&[("20", "")])
        );
    }

    #[test]
    fn line_picks_conflict_with_another_models_hunk_only_where_they_meet() {
        let a = rep(&[("3", "three (A)\n"), ("5", "five (A)\n")]);
        let b = rep(&[("3", "three (B)\n")]);
        let s = sets(&[("A", &a), ("B", &b)]);
        let (ha, hb) = (id(&s, 0, 0), id(&s, 1, 0));
        // A's line 5 next to B's hunk on line 3: the whole hunk of A would collide, the line
        // does not.
        let five = line(&s, 0, 0, LineKind::Added, "five (A)");
        let five_old = line(&s, 0, 0, LineKind::Removed, "5");
        let sel = Selection::new()
            .line("A", "a.txt", &ha, five_old)
            .line("A", "a.txt", &ha, five)
            .hunk("B", "a.txt", &hb);
        assert_eq!(
            content(&compose(&s, &sel, "t").unwrap()),
            rep(&[("3", "three (B)\n"), ("5", "five (A)\n")])
        );
        // A's line 3 and B's hunk on line 3: refused, naming the picked line.
        let sel = Selection::new()
            .line("A", "a.txt", &ha, line(&s, 0, 0, LineKind::Removed, "3"))
            .hunk("B", "a.txt", &hb);
        let err = compose(&s, &sel, "t").unwrap_err();
        let ComposeError::Conflicts(c) = err else {
            panic!("expected a conflict, got {err:?}");
        };
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].first.model, "A");
        assert_eq!(c[0].first.lines, Some(LineRange { start: 3, len: 1 }));
        assert_eq!(c[0].second.hunk.as_deref(), Some(hb.as_str()));
        // An insertion picked alone right below B's changed line touches it: refused too.
        let sel = Selection::new()
            .line(
                "A",
                "a.txt",
                &ha,
                line(&s, 0, 0, LineKind::Added, "three (A)"),
            )
            .hunk("B", "a.txt", &hb);
        assert!(matches!(
            compose(&s, &sel, "t").unwrap_err(),
            ComposeError::Conflicts(_)
        ));
    }
}
