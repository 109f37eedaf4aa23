//! [`UiConfig`]: the `[ui]` section of the config file.
//!
//! The TUI adds its settings here as fields with serde defaults. Unknown keys are still errors,
//! with the list of accepted ones, like every other section.

use serde::{Deserialize, Serialize};

/// Settings of the interactive interface (`[ui]` in the config file).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct UiConfig {
    /// How to tell the user that models finished or a question waits, while the terminal is
    /// not focused.
    pub notify: NotifyMode,
    /// Whether the interface takes the mouse (wheel scrolling, click to focus). While it does,
    /// most terminals still select text with Shift held; `false` (or `/mouse`) leaves the mouse
    /// to the terminal.
    pub mouse: bool,
}

impl Default for UiConfig {
    fn default() -> Self {
        Self {
            notify: NotifyMode::default(),
            mouse: true,
        }
    }
}

/// `[ui] notify`: how a notification reaches the user when the terminal is not focused.
///
/// Only the terminal knows whether a desktop notification escape is shown, so `auto` picks
/// one by `TERM_PROGRAM` and falls back to the bell, which every terminal (and tmux) handles.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NotifyMode {
    /// OSC 9 in terminals known to show it (iTerm2, WezTerm, Ghostty), else the bell.
    #[default]
    Auto,
    /// The terminal bell (BEL).
    Bell,
    /// A desktop notification with OSC 9 (iTerm2, WezTerm, Ghostty, Windows Terminal...).
    Osc9,
    /// A desktop notification with OSC 777 (foot, rxvt-unicode with its extension, Ghostty...).
    Osc777,
    /// Never.
    Off,
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn notify_reads_every_mode_and_defaults_to_auto() {
        let parsed: UiConfig = toml::from_str("notify = \"osc777\"").unwrap();
        assert_eq!(parsed.notify, NotifyMode::Osc777);
        let empty: UiConfig = toml::from_str("").unwrap();
        assert_eq!(empty.notify, NotifyMode::Auto);
        assert!(empty.mouse, "the mouse is on by default");
        let off: UiConfig = toml::from_str("mouse = false").unwrap();
        assert!(!off.mouse);
        let err = toml::from_str::<UiConfig>("notify = \"loud\"").unwrap_err();
        assert!(err.to_string().contains("osc9"), "{err}");
    }
}
