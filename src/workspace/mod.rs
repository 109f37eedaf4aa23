//! The model's view of the project: where its reads come from and where its writes go.
//!
//! Tools never touch `std::fs` for writes directly; they go through [`FileView`], so the proposal
//! layer (per-model workspaces, in-memory overlays) can sit behind the same tools unchanged.

mod direct;
mod path;
mod view;

pub use direct::DirectView;
pub use path::{PathError, ProjectPath};
pub use view::{EntryKind, EntryMeta, FileView, PendingChange, WriteOrigin};
