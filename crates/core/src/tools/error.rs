//! Errors a tool reports to the model. Each says what went wrong and what to do instead.

use crate::model::ToolOutcome;
use crate::workspace::PathError;

/// A failed tool call. The display text is exactly what the model receives.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The arguments did not match the tool's schema.
    #[error("invalid arguments for {tool}: {reason}")]
    InvalidArgs {
        /// Tool name.
        tool: &'static str,
        /// Which field was wrong and how.
        reason: String,
    },
    /// The path was refused.
    #[error(transparent)]
    Path(#[from] PathError),
    /// A tool-specific failure, already worded for the model.
    #[error("{0}")]
    Failed(String),
    /// The call was refused before it ran (a command the recipe does not allow, a sandbox
    /// that refuses commands), worded for the model.
    #[error("{0}")]
    Refused(String),
    /// The tool was stopped at its time limit, worded for the model.
    #[error("{0}")]
    TimedOut(String),
    /// The call was cancelled, worded for the model.
    #[error("{0}")]
    Cancelled(String),
    /// An I/O failure on a path.
    #[error("{op} {path}: {source}")]
    Io {
        /// What was being done (`reading`, `writing`...).
        op: &'static str,
        /// The path as the model knows it.
        path: String,
        /// The underlying error.
        source: std::io::Error,
    },
}

impl ToolError {
    /// A tool-specific failure message.
    pub fn failed(msg: impl Into<String>) -> Self {
        Self::Failed(msg.into())
    }

    /// How a call that failed this way ended, for the people judging the run.
    pub fn outcome(&self) -> ToolOutcome {
        match self {
            ToolError::Path(PathError::Escape { .. }) | ToolError::Refused(_) => {
                ToolOutcome::Refused
            }
            ToolError::TimedOut(_) => ToolOutcome::TimedOut,
            ToolError::Cancelled(_) => ToolOutcome::Cancelled,
            ToolError::InvalidArgs { .. }
            | ToolError::Path(PathError::Invalid { .. })
            | ToolError::Failed(_)
            | ToolError::Io { .. } => ToolOutcome::Error,
        }
    }

    /// Wraps an I/O error with what was being done to which path.
    pub fn io(op: &'static str, path: impl Into<String>, source: std::io::Error) -> Self {
        Self::Io {
            op,
            path: path.into(),
            source,
        }
    }
}
