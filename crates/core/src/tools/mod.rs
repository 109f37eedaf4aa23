//! Every tool a model can call: one canonical definition each, a registry, and the executors.
//!
//! Tools act on a [`crate::workspace::FileView`] and know nothing of providers, the agent loop
//! or the UI. A provider adapter translates [`ToolSpec`]s into its wire format; the agent loop
//! calls [`ToolRegistry::dispatch`] with the model's raw arguments and hands the
//! [`ToolOutput`] back.

mod args;
mod context;
mod edit_tools;
mod error;
mod output;
mod registry;
mod spec;
mod suggest;
pub mod text;
mod walk;
mod whole_file;

mod apply_patch;
mod bash;
mod edit_file;
mod list_directory;
mod read_file;
mod search_code;
mod search_files;
pub mod spawn_agent;
mod web_fetch;
mod web_search;
mod write_file;

pub use crate::model::{EditTools, trained_tool};
pub use args::validate as validate_args;
pub use context::{ToolContext, ToolLimits};
pub use edit_tools::narrow as narrow_edit_tools;
pub use error::ToolError;
pub use output::{EditOutcome, ImagePart, ToolOutput};
pub use registry::{Tool, ToolRegistry};
pub use spec::{ToolClass, ToolSpec};
pub use walk::project_files;
pub use web_search::{DEFAULT_RESULTS, MAX_RESULTS, SearchBackend, WebSearchSetup};
