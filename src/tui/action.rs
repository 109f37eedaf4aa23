//! What flows into the app ([`Msg`]) and what it asks the driver to do ([`Effect`]).
//!
//! The app never does I/O: terminal input and everything the engine learns arrive as
//! messages, and every side effect (start a turn, cancel, write a file) leaves as an effect
//! that the driver in [`super::engine`] carries out and answers with more messages. This queue
//! pair is what makes [`super::update`] testable without a terminal, a runtime or a model.

use crossterm::event::KeyEvent;

use crate::model::AgentEvent;

use super::panel::RunSummary;

/// The session's settings that the next turn uses (`/config` shows and changes them).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// Tools offered to the models (`None`: every built-in tool).
    #[serde(default)]
    pub tools: Option<Vec<String>>,
    /// Requests per model per turn at most.
    pub max_steps: u32,
    /// Time limit per model per turn, in seconds.
    pub timeout_secs: u64,
    /// Text added to the system prompt.
    #[serde(default)]
    pub system: Option<String>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            tools: None,
            max_steps: 50,
            timeout_secs: 20 * 60,
            system: None,
        }
    }
}

/// One model of a turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// Its panel.
    pub panel: usize,
    /// Its label.
    pub label: String,
}

/// A turn the app wants started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnRequest {
    /// Turn number (1-based, per session).
    pub turn: u32,
    /// The prompt with pastes expanded (`@model` tokens removed, `@path` tokens kept).
    pub prompt: String,
    /// Models addressed.
    pub targets: Vec<Target>,
    /// Files to attach (`@path` tokens without the `@`).
    pub attachments: Vec<String>,
    /// Settings of this turn.
    pub settings: Settings,
    /// Whether to record the prompt in `.versus/history.jsonl` (not for `/resume`).
    pub remember: bool,
}

/// Everything the app reacts to.
#[derive(Debug, Clone)]
pub enum Msg {
    /// A key press.
    Key(KeyEvent),
    /// Pasted text (bracketed paste).
    Paste(String),
    /// The terminal changed size.
    Resize {
        /// Columns.
        width: u16,
        /// Rows.
        height: u16,
    },
    /// Time passed (only sent while models run, to refresh clocks).
    Tick,
    /// SIGTERM or SIGHUP: stop everything and leave.
    Terminate,
    /// The driver's answer to an effect, or news from a run.
    Engine(EngineMsg),
}

/// What the driver reports.
#[derive(Debug, Clone)]
pub enum EngineMsg {
    /// Prompts of `.versus/history.jsonl`, oldest first.
    HistoryLoaded(Vec<String>),
    /// Project files (relative paths) for `@path` completion.
    FilesLoaded(Vec<String>),
    /// The requested turn is running.
    TurnStarted {
        /// Turn number.
        turn: u32,
    },
    /// The requested turn could not start (bad attachment, no model...).
    TurnRejected {
        /// What was wrong and what to do.
        error: String,
    },
    /// An event of a model's run.
    Agent {
        /// Panel.
        panel: usize,
        /// The event.
        event: AgentEvent,
    },
    /// A model's run ended.
    Finished {
        /// Panel.
        panel: usize,
        /// What the panel cannot see in events.
        summary: RunSummary,
    },
    /// Every model of the turn has ended.
    TurnEnded {
        /// Turn number.
        turn: u32,
    },
    /// Models resolved for `/models add` or `/config models`.
    ModelsAdded {
        /// Labels that can run.
        added: Vec<String>,
        /// One line per spec that cannot.
        errors: Vec<String>,
        /// Whether they replace the current models.
        replace: bool,
    },
    /// Settings read by `/load`, with the models they name that can run.
    SettingsLoaded {
        /// The settings.
        settings: Settings,
        /// Models that resolved.
        models: Vec<String>,
        /// Problems (skipped models).
        errors: Vec<String>,
    },
    /// A line for the status bar.
    Info(String),
    /// An error for the status bar.
    Error(String),
}

/// What the app asks the driver to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Start a turn (answered by `TurnStarted` or `TurnRejected`, then run events).
    Submit(TurnRequest),
    /// Cancel every running model.
    CancelAll,
    /// Cancel one model.
    Cancel {
        /// Its label.
        label: String,
    },
    /// Resolve these specs (answered by `ModelsAdded`).
    AddModels {
        /// Specs as typed.
        specs: Vec<String>,
        /// Replace the current models instead of adding.
        replace: bool,
    },
    /// Every model starts its conversation afresh.
    ClearConversations,
    /// Shorten every conversation to its latest turn, with a note about the earlier ones.
    Compact,
    /// Write the settings and models to a file.
    Save {
        /// File (relative to the project), default `.versus/tui.toml`.
        path: Option<String>,
        /// Settings.
        settings: Settings,
        /// Models.
        models: Vec<String>,
    },
    /// Read settings written by `Save` (answered by `SettingsLoaded`).
    Load {
        /// File (relative to the project), default `.versus/tui.toml`.
        path: Option<String>,
    },
    /// Write the transcripts as Markdown.
    Export {
        /// File (relative to the project), default `transcript.md` in the session folder.
        path: Option<String>,
        /// The document.
        markdown: String,
    },
    /// Leave: cancel runs, clean up, restore the terminal.
    Quit,
}
