//! Applying a composed change set to the user's tree, and undoing it exactly.
//!
//! The input is already composed: final content (or deletion) per path plus the base it was
//! computed from. The engine then works in a fixed order so that a crash at any point leaves
//! something recoverable:
//!
//! 1. decide per path (unchanged since base: write; changed: three-way merge, see [`mod@merge3`]);
//! 2. snapshot every path about to change (the old file hard-linked or copied, mode, existence,
//!    folders about to be created) and stage the new content, into the session folder, flushed
//!    in one batch ([`snapshot`]);
//! 3. append a `begin` record to the append-only journal, fsynced ([`journal`]);
//! 4. rename each staged file over its path (never half-written), then fsync each folder once;
//! 5. append `commit`.
//!
//! docs/apply.md ("What survives a power cut") goes through each step.
//!
//! A `begin` without `commit` is an interrupted apply ([`recover`]); rewind reads the journal
//! and snapshots from disk only, so it works after a restart ([`rewind`]).

pub mod compose;
mod durable;
internal! {
    /// The apply engine itself: only the session engine drives it (see the crate's documentation).
    mod engine;
}
mod hooks;
internal! {
    /// The apply journal: written and read only by the apply engine.
    mod journal;
}
pub mod links;
pub mod lock;
pub mod merge3;
mod outcome;
mod place;
internal! {
    /// Rolling back an interrupted apply: only through the session engine.
    mod recover;
}
internal! {
    /// Undoing an apply on disk: only through the session engine.
    mod rewind;
}
internal! {
    /// What an apply replaced, kept for rewind: only the apply engine writes and restores it.
    mod snapshot;
}

use std::io;
use std::path::PathBuf;

pub use compose::{ComposeError, Conflict, ConflictSide, Pick, Selection, compose};
internal!(
    use engine::ApplyEngine;
);
#[cfg(feature = "test-hooks")]
pub use hooks::EditorSave;
pub use lock::{LockWait, ProjectLock};
pub use merge3::{ConflictRegion, LineSpan, MergeOutcome, merge3};
pub use outcome::{
    AppliedAs, ApplyReport, ConflictReason, FileOutcome, FilePreview, FileStatus, Preview,
    RegionText,
};
pub use recover::{PendingApply, RecoveryReport};
pub use rewind::{RewindAction, RewindFile, RewindPreview, RewindReport};

/// One path of a composed change set: what it was at run start and what should be there now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedWrite {
    /// `/`-separated path relative to the project root.
    pub path: String,
    /// Content at run start; `None` when the file did not exist then.
    pub base: Option<Vec<u8>>,
    /// Content to write; `None` deletes the file.
    pub proposed: Option<Vec<u8>>,
    /// The mode review showed for the proposal (only its executable bit counts: `0o644` or
    /// `0o755`, see [`crate::workspace::changeset::shown_mode`]). A file apply creates gets
    /// exactly that (less the umask); an existing file keeps the user's mode unless the
    /// executable bit differs, which apply then sets or clears. `None`: no mode proposed,
    /// the user's mode is kept.
    pub mode: Option<u32>,
    /// `proposed` is a symlink's target: the path becomes a symlink, applied only when the
    /// target stays inside the project ([`links::check_link_target`]), refused otherwise.
    pub symlink: bool,
    /// The path was a symlink at run start and `base` is its target (not file bytes): apply
    /// checks the link is still there with that target before changing it, and the snapshot
    /// keeps it as a link, so rewind puts back exactly that link.
    pub base_symlink: bool,
}

/// Everything one apply writes, with the provenance the journal records.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApplyPlan {
    /// The paths to change, each at most once.
    pub writes: Vec<PlannedWrite>,
    /// Model entries whose changes are in this apply (e.g. `openai/gpt-5#2`).
    pub models: Vec<String>,
    /// Provenance ids of the hunks taken (opaque to this module).
    pub hunks: Vec<String>,
    /// The turn's prompt or a short label, shown by rewind.
    pub label: String,
}

/// What to do with a path whose merge conflicted. A conflicting path with no resolution is
/// skipped: nothing is written to it unless the user chose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Resolution {
    /// Replace the user's file with the model's proposal (or delete it, if proposed).
    Overwrite,
    /// Leave the user's file as it is.
    Skip,
    /// Write the merge with git-style conflict markers for the user to edit.
    Markers,
}

/// Why an apply, rewind or recovery could not proceed. Each text says what to do instead.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    /// A filesystem operation failed.
    #[error("could not {op} {}: {source}; check the path exists and is writable", path.display())]
    Io {
        /// What was being done (e.g. "read", "write", "remove").
        op: &'static str,
        /// The file or folder involved.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// A path in the plan or a snapshot resolves outside the project (e.g. via a new symlink).
    #[error("refused path: {0}")]
    Path(#[from] crate::workspace::PathError),
    /// The path exists but is neither a regular file nor a symlink (a folder, a device), so
    /// it cannot be snapshotted and replaced; also a symlink where a regular file was just
    /// read (swapped in meanwhile), which is never followed.
    #[error(
        "{path} is a folder or a special file, not a regular file or a symlink; apply only replaces files and links: move it aside and try again"
    )]
    NotAFile {
        /// The relative path.
        path: String,
    },
    /// The same path appears twice in one plan.
    #[error(
        "{path} appears more than once in the plan; compose the change set so each path occurs once"
    )]
    DuplicatePath {
        /// The relative path.
        path: String,
    },
    /// A snapshot manifest or blob is missing or unreadable.
    #[error(
        "snapshot of apply {apply_id} is damaged: {why}; the session folder was modified outside versus, restore it from a backup"
    )]
    Snapshot {
        /// The apply whose snapshot is damaged.
        apply_id: String,
        /// What is wrong.
        why: String,
    },
    /// A file being applied to was saved by another program after versus read it: the apply
    /// was rolled back so that save is kept, never replaced by content decided from the older
    /// bytes.
    #[error(
        "{path} was saved by another program while versus was applying; the apply was rolled back and your save kept: look at the file and apply again"
    )]
    ChangedWhileApplying {
        /// The relative path.
        path: String,
    },
    /// A line of the session's apply journal cannot be read (damaged, or written by a newer
    /// versus): which applies finished is unknown, so nothing is applied, rewound or rolled
    /// back until it is repaired.
    #[error(
        "{}:{line}: the apply journal cannot be read here ({why}); versus will not apply, rewind or roll back in this session until the line is repaired (or the session folder restored from a backup)",
        path.display()
    )]
    JournalDamaged {
        /// The journal.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        why: String,
    },
    /// An earlier apply was interrupted and must be rolled back first.
    #[error(
        "apply {apply_id} was interrupted before it finished; roll it back (rollback_incomplete) before applying or rewinding"
    )]
    PendingRecovery {
        /// The interrupted apply.
        apply_id: String,
    },
    /// Rewind was asked for but every apply of the session is already undone.
    #[error("nothing to rewind: every change applied in this session is already undone")]
    NothingToRewind,
    /// Rewind was asked for in a session where nothing was ever applied.
    #[error("nothing to rewind: nothing was ever applied in this session")]
    NothingApplied,
    /// Another versus process is applying to or rewinding this project, and waiting was not
    /// wanted.
    #[error(
        "another versus process{} is applying to or rewinding this project; try again when it is done (or leave out --no-wait to wait for it)",
        pid.map(|p| format!(" (pid {p})")).unwrap_or_default()
    )]
    Busy {
        /// The holder's pid, when it could be read.
        pid: Option<u32>,
    },
    /// The recovery asked for names an apply that is not interrupted.
    #[error("apply {apply_id} is not an interrupted apply; use pending_recovery to find one")]
    NotPending {
        /// The apply id given.
        apply_id: String,
    },
    /// Test hook: the apply stopped on purpose after this many writes, like a crash (only
    /// with the `test-hooks` feature).
    #[cfg(feature = "test-hooks")]
    #[error("apply stopped on purpose after {after} writes (failure injection for tests)")]
    InjectedFailure {
        /// Writes done before stopping.
        after: usize,
    },
}

impl ApplyError {
    /// Shorthand for [`ApplyError::Io`].
    pub(crate) fn io(op: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        Self::Io {
            op,
            path: path.into(),
            source,
        }
    }
}

/// Result type of this module.
pub type Result<T> = std::result::Result<T, ApplyError>;

/// Content hash used by snapshots, the journal and edit detection (blake3, hex).
pub fn content_hash(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

/// Seconds since the Unix epoch, for journal records.
pub(crate) fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}
