//! Notifications when the interface needs the user (a turn finished, the review is ready, a
//! question waits) while the terminal is not focused: the bell, or a desktop notification
//! through OSC 9 or OSC 777.
//!
//! Which one is settled once at start from `[ui] notify` and the terminal's name (kept in the
//! app as a [`Notifier`]), so whether a notification is due stays a pure decision of
//! [`super::update`]; the driver only writes [`escape`]'s bytes to the terminal.

use versus_core::config::NotifyMode;

/// How a notification is sent, once `auto` is settled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Notifier {
    /// BEL: every terminal rings or marks the tab; tmux flags the window.
    Bell,
    /// `ESC ] 9 ; text BEL`.
    Osc9,
    /// `ESC ] 777 ; notify ; title ; text BEL`.
    Osc777,
}

/// Terminals (by `TERM_PROGRAM`) known to show OSC 9 as a desktop notification. Others get the
/// bell under `auto`: an escape a terminal does not know is silently dropped, a bell never is.
const OSC9_TERMINALS: &[&str] = &["iTerm.app", "WezTerm", "ghostty"];

/// Settles the config's mode for the terminal named `term_program` (`None`: never notify).
pub fn resolve(mode: NotifyMode, term_program: Option<&str>) -> Option<Notifier> {
    match mode {
        NotifyMode::Off => None,
        NotifyMode::Bell => Some(Notifier::Bell),
        NotifyMode::Osc9 => Some(Notifier::Osc9),
        NotifyMode::Osc777 => Some(Notifier::Osc777),
        NotifyMode::Auto => Some(match term_program {
            Some(name) if OSC9_TERMINALS.contains(&name) => Notifier::Osc9,
            _ => Notifier::Bell,
        }),
    }
}

/// The bytes that notify with `text`. Control characters are taken out of the text: one
/// inside an OSC string would end it early and spill the rest onto the screen.
pub fn escape(notifier: Notifier, text: &str) -> String {
    let clean: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    match notifier {
        Notifier::Bell => "\x07".to_string(),
        Notifier::Osc9 => format!("\x1b]9;{clean}\x07"),
        Notifier::Osc777 => format!("\x1b]777;notify;versus;{clean}\x07"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_uses_osc9_only_where_it_is_known_to_show() {
        assert_eq!(
            resolve(NotifyMode::Auto, Some("iTerm.app")),
            Some(Notifier::Osc9)
        );
        assert_eq!(
            resolve(NotifyMode::Auto, Some("tmux")),
            Some(Notifier::Bell)
        );
        assert_eq!(resolve(NotifyMode::Auto, None), Some(Notifier::Bell));
        assert_eq!(resolve(NotifyMode::Off, Some("iTerm.app")), None);
        assert_eq!(resolve(NotifyMode::Osc777, None), Some(Notifier::Osc777));
    }

    #[test]
    fn escapes_cannot_be_ended_early_by_the_text() {
        assert_eq!(escape(Notifier::Bell, "x"), "\x07");
        assert_eq!(
            escape(Notifier::Osc9, "turn 1\x07 done\x1b"),
            "\x1b]9;turn 1  done \x07"
        );
        assert_eq!(
            escape(Notifier::Osc777, "turn 1 finished"),
            "\x1b]777;notify;versus;turn 1 finished\x07"
        );
    }
}
