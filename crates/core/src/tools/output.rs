//! What a tool call gives back to the model (and to the run's statistics).

use crate::model::ToolOutcome;

use super::ToolError;

/// An image part for providers that accept images in tool results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImagePart {
    /// MIME type such as `image/png`.
    pub media_type: String,
    /// Raw image bytes.
    pub data: Vec<u8>,
}

/// How an edit matched, so each run can count exact, fuzzy and failed edits per model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "strategy")]
pub enum EditOutcome {
    /// `old_string` matched byte for byte.
    Exact,
    /// A normalising strategy found the single match (its name).
    Fuzzy(&'static str),
    /// The edit was refused.
    Failed,
}

/// The result of one tool call. Errors are results too: the loop never crashes on them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutput {
    /// Text the model reads.
    pub text: String,
    /// Marked as an error to providers that support it (e.g. Anthropic `is_error`).
    pub is_error: bool,
    /// An image for providers that accept one (read_file of a picture).
    pub image: Option<ImagePart>,
    /// Set by edit tools.
    pub edit: Option<EditOutcome>,
    /// How the call ended, decided here where the tool ran (a command's exit code, a refusal),
    /// for the people judging the run; `is_error` stays what the provider is told.
    pub outcome: ToolOutcome,
}

impl ToolOutput {
    /// A normal result.
    pub fn ok(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            is_error: false,
            image: None,
            edit: None,
            outcome: ToolOutcome::Ok,
        }
    }

    /// An error result the model can correct.
    pub fn error(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            is_error: true,
            image: None,
            edit: None,
            outcome: ToolOutcome::Error,
        }
    }

    /// The error result of a failed call: its text, and the outcome its kind means (a refused
    /// path is `Refused`, a tool stopped at its time limit `TimedOut`...).
    pub fn from_error(error: &ToolError) -> Self {
        Self::error(error.to_string()).with_outcome(error.outcome())
    }

    /// Sets how the call ended.
    pub fn with_outcome(mut self, outcome: ToolOutcome) -> Self {
        self.outcome = outcome;
        self
    }

    /// Attaches how an edit matched.
    pub fn with_edit(mut self, edit: EditOutcome) -> Self {
        self.edit = Some(edit);
        self
    }
}
