//! The model's view of the project: where its reads come from and where its writes go.
//!
//! Tools never touch `std::fs` for writes directly; they go through [`FileView`], so the proposal
//! layer (per-model workspaces, in-memory overlays) can sit behind the same tools unchanged.

mod background;
mod base;
pub mod changeset;
pub mod content;
mod copy;
pub mod cow;
mod direct;
mod error;
mod ignore_rules;
mod in_order;
mod manager;
mod notes;
mod overlay;
mod parent;
mod path;
mod recording;
mod remove;
mod stat_cache;
mod view;
mod worktree;

pub use background::{remove_later, settle as settle_removals};

/// Keeps the hashes a capture makes for the next process too (`versus/hashes` in the user's
/// state folder, private, see `stat_cache`), so a new `versus ask` reads only the files that
/// changed since the last run. Front ends call it once at start; without it (or without a
/// state folder) hashes live in the process only (library users, tests).
pub fn keep_hashes_between_runs() {
    if let Some(state) = crate::fsutil::user_state_dir() {
        stat_cache::keep_between_runs(&state.join("versus").join("hashes"));
    }
}
pub use base::{Base, BaseEntry, BaseKind, DirChange};
pub use changeset::{ChangeKind, ChangeSet, ChangeSetError, FileChange, Hunk};
pub use direct::DirectView;
pub use error::WorkspaceError;
pub(crate) use ignore_rules::IgnoreRules;
pub use manager::{
    Isolation, SETUP_TIMEOUT, clean_workspaces, clean_workspaces_in, cleanup_leftovers,
    cleanup_leftovers_in, default_parent,
};
// A model's workspace: made and removed only by the runner for the engine (see the crate's
// documentation), so a front end cannot set one up and run a model in it by itself.
internal!(
    use manager::Workspace;
);
pub use notes::{
    BUILD_OUTPUT_FOLDERS, BUILD_OUTPUT_MIN_FILES, MAX_DEPTH, MAX_HASHED, MAX_PROPOSED_FILE,
    MAX_PROPOSED_TOTAL, ScanNote, build_output_notes,
};
pub use overlay::OverlayView;
pub use path::{PathError, ProjectPath};
pub use recording::{FileWrite, RecordingView};
pub use view::{AttributedView, EntryKind, EntryMeta, FileView, PendingChange, WriteOrigin};
