//! What flows into the app ([`Msg`]) and what it asks the driver to do ([`Effect`]).
//!
//! The app never does I/O: terminal input and everything the engine learns arrive as
//! messages, and every side effect (start a turn, cancel, write a file) leaves as an effect
//! that the driver in [`super::engine`] carries out and answers with more messages. This queue
//! pair is what makes [`super::update`] testable without a terminal, a runtime or a model.

use std::collections::BTreeMap;

use crossterm::event::KeyEvent;

use versus_core::apply::{AppliedAs, ApplyPlan, Preview, Resolution};
use versus_core::model::AgentEvent;
use versus_core::review::BlindNames;
use versus_core::workspace::changeset::ChangeSet;

use super::notify::Notifier;
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
    /// Command run in each model's workspace when it finishes (`cargo test`), shown in the
    /// review table; `None`: no check.
    #[serde(default)]
    pub check: Option<String>,
    /// Whether the review opens by itself when the first changes are ready (`auto`) or the
    /// user stays on the panels with a "review ready" badge (`stay`). Saved by `/save`.
    #[serde(default)]
    pub review: ReviewOpening,
}

/// `/config review auto|stay`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReviewOpening {
    /// The review takes the screen when the first changes are ready (unless you are typing).
    #[default]
    Auto,
    /// You stay where you are; the header shows "review ready" and Ctrl+O opens it.
    Stay,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            tools: None,
            max_steps: 50,
            timeout_secs: 20 * 60,
            system: None,
            check: None,
            review: ReviewOpening::Auto,
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
    /// The prompt as typed (pastes expanded) with its `@model` targets: what the history keeps
    /// and what a rewind puts back, so Enter sends it to the same models again.
    pub line: String,
    /// Models addressed.
    pub targets: Vec<Target>,
    /// `@word`s that name no model, without the `@`: the driver attaches those that are files
    /// of the project and leaves the others as plain text.
    pub attachments: Vec<String>,
    /// Settings of this turn.
    pub settings: Settings,
    /// Whether blind mode is on for this turn (the engine hides the names under the
    /// session's aliases; recorded, so `--continue` hides them again).
    pub blind: bool,
    /// Whether to record the prompt in `.versus/history.jsonl` (not for `/resume`).
    pub remember: bool,
}

/// Everything the app reacts to.
#[derive(Debug, Clone)]
pub enum Msg {
    /// A key press.
    Key(KeyEvent),
    /// The mouse: wheel and clicks, while the interface takes the mouse.
    Mouse(crossterm::event::MouseEvent),
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
    /// The terminal gained (`true`) or lost the focus (focus reporting).
    Focus(bool),
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
    /// The models each provider offers (provider, model ids), as cached; `refreshing` while
    /// a background refresh is on its way.
    RemoteModels {
        /// By provider, in the config's order.
        lists: Vec<(String, Vec<String>)>,
        /// A refresh was started and will answer again.
        refreshing: bool,
    },
    /// The requested turn is running.
    TurnStarted {
        /// Turn number.
        turn: u32,
    },
    /// What the turn's models were given besides the prompt (instruction files, skills) and
    /// the fairness ledger, as recorded: shown in the review (after `TurnStarted`, once every
    /// model's tools are known: its tool servers start with its workspace).
    TurnContext {
        /// Turn number.
        turn: u32,
        /// Instruction files and skills.
        context: Box<versus_core::engine::ProjectContext>,
        /// What each model was given, differences flagged.
        ledger: Vec<versus_core::engine::LedgerEntry>,
    },
    /// The session's blind-mode aliases changed (blind mode turned on or off, a model added,
    /// a session reopened): the engine owns them, the app shows them.
    Blind(Option<BlindNames>),
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
    /// A finished model's change set (built off the loop's thread), or why it could not be.
    ChangeSet {
        /// Turn number.
        turn: u32,
        /// The model.
        label: String,
        /// The change set.
        set: Result<ChangeSet, String>,
    },
    /// The review check of a model started or ended.
    Check {
        /// Turn number.
        turn: u32,
        /// The model.
        label: String,
        /// Where it is.
        state: CheckState,
    },
    /// What applying the basket would do (answers [`Effect::PreviewApply`]).
    ApplyPreview {
        /// Turn number.
        turn: u32,
        /// Per path: clean, merged with the user's edits, or conflicting.
        preview: Preview,
    },
    /// The choice was recorded, and applied when it had a plan (answers [`Effect::Choose`]).
    Chosen(ChoiceDone),
    /// The choice could not be carried out (nothing was recorded).
    ChoiceFailed {
        /// What went wrong and what to do.
        error: String,
    },
    /// What a rewind would do (answers [`Effect::PlanRewind`]).
    RewindPlanned(RewindPlan),
    /// A rewind was carried out (answers [`Effect::Rewind`]).
    Rewound(RewindDone),
    /// A titled text to show over the panels (`/stats`).
    Show {
        /// Title.
        title: String,
        /// Lines.
        lines: Vec<String>,
    },
    /// Conversations were compacted before the turn: (model, turns folded). The app names the
    /// models, so a blind turn shows aliases.
    Compacted(Vec<(String, usize)>),
    /// A line for the status bar.
    Info(String),
    /// An error for the status bar.
    Error(String),
}

/// Where a model's review check is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckState {
    /// Running.
    Running,
    /// Ended.
    Done(CheckResult),
    /// Never ended, and never will: a reopened turn whose check had not ended when versus
    /// stopped (its workspace is gone, so it cannot run again).
    Missed,
}

/// How a review check ended (the engine's record of it, restored with the session).
pub use versus_core::engine::CheckResult;

pub use versus_core::engine::{RewindDone, RewindPlan, RewindScope};

/// A choice for the turn under review: a plan to apply (or none: "none of them"), how to
/// resolve conflicting files, and the ratings given.
#[derive(Debug, Clone, PartialEq)]
pub struct ChoiceRequest {
    /// The turn.
    pub turn: u32,
    /// Models chosen with nothing to apply (a text-only answer was the best).
    pub chosen: Vec<String>,
    /// What to apply (`None`: nothing; with no `chosen` either: none of them).
    pub plan: Option<ApplyPlan>,
    /// Per conflicting path, what to do (a conflict with no entry is not written).
    pub resolutions: BTreeMap<String, Resolution>,
    /// Per model label: `good`, `bad` or `tie`.
    pub ratings: BTreeMap<String, versus_core::session::Rating>,
}

/// What a choice did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChoiceDone {
    /// The turn.
    pub turn: u32,
    /// The chosen models (empty: none of them).
    pub chosen: Vec<String>,
    /// The apply's journal id (`None`: nothing was written).
    pub apply_id: Option<String>,
    /// Per planned path, what happened.
    pub files: Vec<(String, AppliedAs)>,
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
    /// Preview the apply of a composed plan (answered by `ApplyPreview`).
    PreviewApply {
        /// The turn.
        turn: u32,
        /// The composed basket.
        plan: ApplyPlan,
    },
    /// Record a choice and apply its plan (answered by `Chosen` or `ChoiceFailed`).
    Choose(ChoiceRequest),
    /// Work out what a rewind would do (answered by `RewindPlanned`, or an error).
    PlanRewind {
        /// The scope.
        scope: RewindScope,
    },
    /// Carry out a rewind the user confirmed (answered by `Rewound`, or an error).
    Rewind {
        /// The plan shown.
        plan: RewindPlan,
        /// Also restore files edited after the apply.
        force: bool,
    },
    /// The statistics of this session and of the project (answered by `Show`).
    Stats,
    /// The models each provider offers, from the cache, refreshed in the background when
    /// stale (answered by `RemoteModels`, once or twice).
    RemoteModels,
    /// Suspend the interface and run a shell in a model's workspace.
    OpenShell {
        /// The model.
        label: String,
        /// The name shown for it (its alias in a blind turn).
        shown: String,
        /// Names are hidden: print neither the model's name nor its workspace folder.
        hidden: bool,
    },
    /// Tell the user, who is in another window, that something needs them.
    /// Take the mouse (wheel, clicks) or leave it to the terminal (text selection).
    Mouse(bool),
    /// Turn blind mode on (the session's models get aliases) or off (the names are revealed);
    /// answered by [`EngineMsg::Blind`].
    Blind(bool),
    /// Ring / notify the user (the terminal is not focused).
    Notify {
        /// How.
        notifier: Notifier,
        /// What (the desktop notification's text; the bell has none).
        text: String,
    },
    /// Leave: cancel runs, clean up, restore the terminal.
    Quit,
}
