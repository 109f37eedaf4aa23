//! What the apply engine tells its callers: the preview of each path (clean, merged, a
//! conflict and why, refused), what each path was applied as, and the report of one apply.
//! Pure data, kept apart from the engine that computes it so the engine reads as the order of
//! its steps.

use std::collections::BTreeMap;

use super::merge3::{ConflictRegion, LineSpan, split_lines};

/// How a path will be (or was) handled, before resolutions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileStatus {
    /// The user's file is still as at base: the proposal is written as is.
    Clean,
    /// The user changed the file since base and the three-way merge is clean.
    Merged,
    /// The user's changes and the proposal overlap; nothing is written without a resolution.
    Conflict {
        /// Why it conflicts.
        reason: ConflictReason,
        /// Conflicting regions (line numbers), empty for whole-file conflicts.
        regions: Vec<ConflictRegion>,
        /// Whether [`Resolution::Markers`] can be honoured (not for binary files or deletions).
        markers_available: bool,
    },
    /// The file already holds what the proposal wants: nothing to write.
    AlreadyApplied,
    /// The proposal is a symlink that cannot be applied (its target leaves the project, or
    /// the path is not free for it); nothing is written there, whatever the resolution. The
    /// rest of the apply goes on.
    Refused {
        /// Why, naming the path and the target, for the user.
        why: String,
    },
}

/// Why a path conflicts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConflictReason {
    /// Both sides changed the same lines differently.
    Lines,
    /// Both sides changed a binary file.
    Binary,
    /// The user deleted the file the model changed.
    DeletedByYou,
    /// The model deletes a file the user changed.
    DeletedByModel,
}

/// Preview of one path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilePreview {
    /// Relative path.
    pub path: String,
    /// What apply will do with it.
    pub status: FileStatus,
    /// Lines added to the user's current file (for a conflict: if overwritten).
    pub added: usize,
    /// Lines removed from the user's current file (for a conflict: if overwritten).
    pub removed: usize,
    /// For a line conflict, what each side wrote in each conflicting region (in region
    /// order), so the question can show the texts and not only line numbers; empty otherwise.
    pub texts: Vec<RegionText>,
}

/// The text both sides wrote in one conflicting region, lines without their terminators, as
/// shown: bytes that are not UTF-8 as `\xNN`, controls, bidi and invisible characters escaped
/// ([`crate::sanitize`]; it is for showing, never written).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegionText {
    /// Where the region sits in base, the user's file and the proposal.
    pub region: ConflictRegion,
    /// The user's lines (what skip keeps).
    pub ours: Vec<String>,
    /// The model's lines (what overwrite writes).
    pub theirs: Vec<String>,
}

/// The lines of `span` in `text`, for showing; a span past the end yields what exists.
pub(super) fn span_text(text: &[u8], span: LineSpan) -> Vec<String> {
    split_lines(text)
        .into_iter()
        .skip(span.start.saturating_sub(1))
        .take(span.len)
        .map(|l| {
            let text = crate::sanitize::lossless(l);
            let text = text.trim_end_matches(['\n', '\r']);
            crate::sanitize::escape(text, crate::sanitize::Layout::Line).into_owned()
        })
        .collect()
}

/// What apply would do, path by path, in plan order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preview {
    /// One entry per planned path.
    pub files: Vec<FilePreview>,
}

impl Preview {
    /// Paths that need a [`Resolution`] before apply writes them.
    pub fn conflicts(&self) -> Vec<&str> {
        self.files
            .iter()
            .filter(|f| matches!(f.status, FileStatus::Conflict { .. }))
            .map(|f| f.path.as_str())
            .collect()
    }
}

/// What apply did with one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppliedAs {
    /// Written as proposed (unchanged since base).
    Written,
    /// Deleted as proposed.
    Deleted,
    /// The clean three-way merge was written.
    Merged,
    /// Conflict resolved with [`Resolution::Overwrite`].
    Overwritten,
    /// Conflict resolved with [`Resolution::Markers`]: the file now holds conflict markers.
    MarkersWritten,
    /// Already as proposed; nothing written.
    AlreadyApplied,
    /// Conflict the user chose to skip; nothing written.
    Skipped,
    /// Conflict with no resolution given; nothing written.
    Unresolved,
    /// Markers were asked for but cannot be written (binary or deletion); nothing written.
    MarkersUnavailable,
    /// A symlink proposal refused (see [`FileStatus::Refused`]); nothing written.
    Refused,
}

/// Outcome of one path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileOutcome {
    /// Relative path.
    pub path: String,
    /// What happened.
    pub applied_as: AppliedAs,
}

/// Result of an apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApplyReport {
    /// Journal id of the apply; `None` when nothing needed writing (no journal entry made).
    pub apply_id: Option<String>,
    /// One outcome per planned path, in plan order.
    pub files: Vec<FileOutcome>,
    /// Why each refused path (`AppliedAs::Refused`) was refused, by relative path: the words
    /// the preview would have shown, so a front end that did not preview can say them.
    pub refused: BTreeMap<String, String>,
}

impl ApplyReport {
    /// Paths whose content changed on disk.
    pub fn written(&self) -> Vec<&str> {
        self.files
            .iter()
            .filter(|f| {
                matches!(
                    f.applied_as,
                    AppliedAs::Written
                        | AppliedAs::Deleted
                        | AppliedAs::Merged
                        | AppliedAs::Overwritten
                        | AppliedAs::MarkersWritten
                )
            })
            .map(|f| f.path.as_str())
            .collect()
    }
}
