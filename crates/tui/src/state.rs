//! The one state struct of the interface. Everything a frame shows is here, and nothing here
//! touches the terminal, the disk or the network.

use std::collections::BTreeMap;

use versus_core::apply::{ApplyPlan, Preview, Resolution};
use versus_core::review::BlindNames;

use super::action::{RewindPlan, Settings, TurnRequest};
use super::complete::Completion;
use super::notify::Notifier;
use super::panel::Panel;
use super::prompt::PromptBox;
use super::review::ReviewState;
use super::theme::Theme;

/// What the session is (shown in the header, used for default file names).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionInfo {
    /// Session id (`20261121-090503-ab12`).
    pub id: String,
    /// Project folder as shown to the user.
    pub project: String,
    /// Whether the demo models run on the example project.
    pub demo: bool,
}

/// A status-bar message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    /// The text.
    pub text: String,
    /// Whether it reports an error (drawn in red).
    pub error: bool,
}

impl Status {
    /// The message as the status line writes it, `✗ ` before an error: the layout counts its
    /// rows from the same text the view draws.
    pub fn shown(&self) -> String {
        if self.error {
            format!("✗ {}", self.text)
        } else {
            self.text.clone()
        }
    }
}

/// An overlay over the panels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Overlay {
    /// `/help`.
    Help,
    /// A titled text (`/config`, `/models`).
    Info {
        /// Title.
        title: String,
        /// Lines.
        lines: Vec<String>,
    },
}

/// What fills the area between the header and the prompt box.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Screen {
    /// The models' live panels; keys edit the prompt.
    #[default]
    Panels,
    /// The review of the last turn: table, files, diff, basket; keys pick and apply.
    Review,
}

/// A question that takes every key until it is answered.
#[derive(Debug, Clone, PartialEq)]
pub enum Dialog {
    /// Some files of the plan conflict with the user's edits since the run started: what to
    /// do with each.
    Apply(ApplyDialog),
    /// Confirm a rewind.
    Rewind(RewindPlan),
}

/// The apply question: the preview, and a resolution per conflicting file.
#[derive(Debug, Clone, PartialEq)]
pub struct ApplyDialog {
    /// The turn.
    pub turn: u32,
    /// The plan.
    pub plan: ApplyPlan,
    /// What apply would do per path.
    pub preview: Preview,
    /// The conflicting file selected (index into the preview's conflicts).
    pub selected: usize,
    /// Chosen resolutions; a conflicting file without one is not written.
    pub resolutions: BTreeMap<String, Resolution>,
    /// Rows the selected file's conflict detail (both texts, what each answer writes) is
    /// scrolled down; back to 0 when another file is selected.
    pub scroll: usize,
}

/// How long a "press again" question stands, in the app clock's milliseconds: long enough to
/// read it and press again, short enough that a press much later starts afresh.
pub const CONFIRM_MS: u64 = 3_000;

/// A key that asked before losing work, and until when pressing it again confirms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Confirm {
    /// The key that asked.
    pub key: ConfirmKey,
    /// App clock time after which the question lapses.
    pub until_ms: u64,
}

/// The keys that ask before losing work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfirmKey {
    /// Esc while models run: cancel them all.
    Esc,
    /// Ctrl+C on an empty prompt while a turn waits for its choice: quit.
    CtrlC,
    /// Ctrl+D, likewise.
    CtrlD,
    /// Enter sending a new prompt while review comments wait unsent: they would be lost.
    SendOverComments,
}

/// The whole interface state.
#[derive(Debug)]
pub struct App {
    /// Session facts.
    pub session: SessionInfo,
    /// Lines shown above the panels until the first turn (demo mode explains itself here).
    pub banner: Vec<String>,
    /// Models of the next turn.
    pub roster: Vec<String>,
    /// One panel per model (roster models, plus removed ones until the next turn).
    pub panels: Vec<Panel>,
    /// Focused panel.
    pub focus: usize,
    /// Whether the focused panel fills the panel area.
    pub zoom: bool,
    /// The prompt editor.
    pub prompt: PromptBox,
    /// The completion list, when open.
    pub completion: Option<Completion>,
    /// Set by Esc on a completion list; cleared by the next edit.
    pub completion_dismissed: bool,
    /// The overlay, when open.
    pub overlay: Option<Overlay>,
    /// Lines the overlay is scrolled down.
    pub overlay_scroll: usize,
    /// Status-bar message (replaces the key hints until the next key).
    pub status: Option<Status>,
    /// Show thinking and full tool arguments.
    pub verbose: bool,
    /// Settings of the next turn.
    pub settings: Settings,
    /// Turns started so far.
    pub turn: u32,
    /// A turn was requested and not yet started or rejected.
    pub submitting: bool,
    /// The requested turn and the prompt as typed (put back if the turn is rejected).
    pub pending: Option<(TurnRequest, String)>,
    /// Names of the tools models can be offered (for `/config tools`).
    pub tool_names: Vec<String>,
    /// Terminal size.
    pub size: (u16, u16),
    /// App clock in milliseconds (set by the event loop; fixed in tests).
    pub now_ms: u64,
    /// A key that would lose work was pressed once: it asks, and only the same key again
    /// (before any other key, within [`CONFIRM_MS`]) does it.
    pub confirm: Option<Confirm>,
    /// Whether the terminal has the focus (it says so when focus reporting works; assumed
    /// until it says otherwise, so a terminal that never reports focus is never notified).
    pub focused: bool,
    /// How to notify while the terminal is not focused (`None`: never), from `[ui] notify`.
    pub notifier: Option<Notifier>,
    /// Whether the interface takes the mouse (`[ui] mouse`, `/mouse`).
    pub mouse: bool,
    /// Prompts of `.versus/history.jsonl`, oldest first.
    pub history: Vec<String>,
    /// Project files for `@path` completion.
    pub files: Vec<String>,
    /// The models each provider offers (`/models`), from the cache of `versus models
    /// --remote`, and whether a background refresh is on its way.
    pub remote_models: (Vec<(String, Vec<String>)>, bool),
    /// Panels or review.
    pub screen: Screen,
    /// The review of the latest turn (from its start until the next turn starts).
    pub review: Option<ReviewState>,
    /// The open question, if any.
    pub dialog: Option<Dialog>,
    /// Blind mode is on (`--blind`, `/blind`, a recipe's `Review: blind`, a reopened blind
    /// session): the names are hidden until the user reveals them or the session ends.
    pub blind: bool,
    /// Each turn's prompt as it would be typed again, `@model` targets included (a rewind puts
    /// it back: the prompt alone would go to every model).
    pub sent: BTreeMap<u32, String>,
    /// The session's blind-mode aliases, as the session engine holds them (`None`: blind mode
    /// was never on). Every model name on screen goes through [`App::shown_label`].
    pub names: Option<BlindNames>,
    /// Palette.
    pub theme: Theme,
    /// The app asked to leave.
    pub quit: bool,
    /// Something changed since the last frame.
    pub dirty: bool,
}

impl App {
    /// Changes wait for review and the review was not opened yet (the header's badge).
    pub fn review_ready(&self) -> bool {
        self.screen == Screen::Panels
            && self.review.as_ref().is_some_and(|r| {
                !r.opened && r.decided.is_none() && r.sets.iter().any(|s| !s.is_empty())
            })
    }

    /// A fresh app for a session with `models`.
    pub fn new(session: SessionInfo, models: Vec<String>, settings: Settings, theme: Theme) -> App {
        let panels = models.iter().map(|m| Panel::new(m, theme)).collect();
        App {
            session,
            banner: Vec::new(),
            roster: models,
            panels,
            focus: 0,
            zoom: false,
            prompt: PromptBox::new(),
            completion: None,
            completion_dismissed: false,
            overlay: None,
            overlay_scroll: 0,
            status: None,
            verbose: false,
            settings,
            turn: 0,
            submitting: false,
            pending: None,
            tool_names: Vec::new(),
            size: (80, 24),
            now_ms: 0,
            confirm: None,
            focused: true,
            notifier: None,
            mouse: false,
            history: Vec::new(),
            files: Vec::new(),
            remote_models: (Vec::new(), false),
            screen: Screen::Panels,
            review: None,
            dialog: None,
            blind: false,
            sent: BTreeMap::new(),
            names: None,
            theme,
            quit: false,
            dirty: true,
        }
    }

    /// Whether any model is working.
    pub fn running(&self) -> bool {
        self.panels.iter().any(|p| p.status.is_active())
    }

    /// Session cost over every panel (`None` when some price is unknown).
    pub fn total_cost(&self) -> Option<f64> {
        self.panels
            .iter()
            .try_fold(0.0, |sum, p| p.total_cost().map(|c| sum + c))
    }

    /// Sets an info message (it replaces a "press again" question, which lapses).
    pub fn info(&mut self, text: impl Into<String>) {
        // A "press again" question stands only while it is on the status line.
        self.confirm = None;
        self.status = Some(Status {
            text: text.into(),
            error: false,
        });
    }

    /// Sets an error message.
    pub fn error(&mut self, text: impl Into<String>) {
        // A "press again" question stands only while it is on the status line.
        self.confirm = None;
        self.status = Some(Status {
            text: text.into(),
            error: true,
        });
    }

    /// The name shown for panel `index`: its label, or its alias while blind mode hides the
    /// names (the label with its alias once revealed).
    pub fn shown(&self, index: usize) -> String {
        let label = self.panels.get(index).map_or("", |p| p.label.as_str());
        self.shown_label(label)
    }

    /// The name shown for the model `label` (see [`App::shown`]): never the label while the
    /// names are hidden, even for a model without a panel.
    pub fn shown_label(&self, label: &str) -> String {
        match &self.names {
            Some(names) => names.shown(label),
            None => label.to_string(),
        }
    }

    /// The name shown for `label` in at most `width` columns: every model's shown name cut by
    /// the one rule for labels ([`super::wrap::labels`]: in the middle, with `…`), so two
    /// models never read the same however narrow the place.
    pub fn short_label(&self, label: &str, width: usize) -> String {
        let mut names: Vec<String> = self
            .panels
            .iter()
            .map(|p| self.shown_label(&p.label))
            .collect();
        let mine = self.shown_label(label);
        let at = match names.iter().position(|n| *n == mine) {
            Some(at) => at,
            None => {
                names.push(mine);
                names.len() - 1
            }
        };
        super::wrap::labels(&names, width).swap_remove(at)
    }

    /// The models of the next turn as shown (aliases while the names are hidden), joined.
    pub fn shown_roster(&self) -> String {
        self.roster
            .iter()
            .map(|m| self.shown_label(m))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Whether names are hidden right now.
    pub fn hiding(&self) -> bool {
        self.names.as_ref().is_some_and(|n| !n.is_revealed())
    }

    /// Panel indices in the order they are laid out: by alias while the session is blind (a
    /// panel's place would give its model away; the same order every turn), else as in the
    /// roster.
    pub fn panel_order(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.panels.len()).collect();
        if let Some(names) = &self.names {
            order.sort_by_key(|&i| names.rank(&self.panels[i].label).unwrap_or(usize::MAX));
        }
        order
    }

    /// `prompt` as typed to reach `models`: with an `@model` per model in front when they are
    /// not every model of the roster (a turn sent to all needs none).
    pub fn addressed(&self, prompt: &str, models: &[String]) -> String {
        if self.roster.iter().all(|m| models.contains(m)) {
            return prompt.to_string();
        }
        let mut line: String = models.iter().map(|m| format!("@{m} ")).collect();
        line.push_str(prompt);
        line
    }

    /// The panel index of `label`.
    pub fn panel_of(&self, label: &str) -> Option<usize> {
        self.panels.iter().position(|p| p.label == label)
    }

    /// Makes the panels match the roster (only between turns: a running panel is never
    /// removed). Panels of removed models go; new models get a panel.
    pub fn sync_panels(&mut self) {
        if self.running() {
            return;
        }
        let theme = self.theme;
        let focused = self.panels.get(self.focus).map(|p| p.label.clone());
        let mut old: Vec<Panel> = std::mem::take(&mut self.panels);
        for label in &self.roster {
            match old.iter().position(|p| &p.label == label) {
                Some(i) => self.panels.push(old.swap_remove(i)),
                None => self.panels.push(Panel::new(label, theme)),
            }
        }
        self.focus = focused
            .and_then(|l| self.panel_of(&l))
            .unwrap_or(0)
            .min(self.panels.len().saturating_sub(1));
    }
}
