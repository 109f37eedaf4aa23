//! Blind mode, owned by the session: one set of aliases per session ("Model A", "Model B"...
//! in a random order), stable across turns, recorded in the session log (a `blind` record each
//! time it changes) so a reopened session shows the same ones, and revealed only when the user
//! asks or the session ends. A choice made while the names are hidden is recorded as blind in
//! the preference line; once revealed, later choices are not.

use super::SessionEngine;
use crate::review::BlindNames;
use crate::session::{SessionLog, SessionRecord};

/// The blind-mode names a session log leaves: those of its latest `blind` record. A log older
/// than that record whose last turn was blind and is not chosen yet hides its models under the
/// aliases those versions derived from the turn's time and prompt (so they do not change on
/// reopening); otherwise it was not blind, or its names were revealed by the choice.
pub fn names_from_log(log: &SessionLog) -> Option<BlindNames> {
    if let Some((aliases, revealed)) = log.blind_aliases() {
        return Some(BlindNames::from_aliases(aliases, revealed));
    }
    let last = log.last_turn();
    let (time, prompt) = log.records.iter().rev().find_map(|r| match r {
        SessionRecord::Turn {
            turn,
            time,
            prompt,
            blind: true,
            ..
        } if *turn == last => Some((time, prompt)),
        _ => None,
    })?;
    let chosen = log
        .records
        .iter()
        .any(|r| matches!(r, SessionRecord::Choice { turn, .. } if *turn == last));
    (!chosen).then(|| BlindNames::new(&log.last_models(), legacy_seed(time, prompt)))
}

/// The seed versions before the `blind` record used for a reopened blind turn (FNV-1a of its
/// time and prompt).
fn legacy_seed(time: &str, prompt: &str) -> u64 {
    time.bytes()
        .chain(prompt.bytes())
        .fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
            (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
        })
}

/// A number that differs from session to session and run to run (the aliases' shuffle).
fn fresh_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    (nanos as u64) ^ (u64::from(std::process::id()) << 32)
}

impl SessionEngine {
    /// Whether the model names are hidden now (blind mode on and not revealed).
    pub fn blind(&self) -> bool {
        self.names.as_ref().is_some_and(|n| !n.is_revealed())
    }

    /// The session's aliases (`None`: blind mode was never on). Front ends show
    /// [`BlindNames::shown`] for every model name.
    pub fn blind_names(&self) -> Option<&BlindNames> {
        self.names.as_ref()
    }

    /// Turns blind mode on (every model of the session gets an alias, in a new random order
    /// unless the names are hidden already) or off (the names are revealed). Recorded.
    pub fn set_blind(&mut self, blind: bool) {
        if blind == self.blind() {
            return;
        }
        if blind {
            self.names = Some(BlindNames::new(&self.models, fresh_seed()));
            self.record_names();
        } else {
            self.reveal();
        }
    }

    /// Shows the names (the user asked, or the session ends): recorded, so choices from here
    /// on are not blind and a reopened session shows them.
    pub fn reveal(&mut self) {
        if let Some(names) = self.names.as_mut().filter(|n| !n.is_revealed()) {
            names.reveal();
            self.record_names();
        }
    }

    /// Gives the models of the session that have none an alias while the names are hidden
    /// (a model added to a blind session); recorded when one was added.
    pub(super) fn assign_aliases(&mut self) {
        if !self.blind() {
            return;
        }
        let Some(names) = self.names.as_mut() else {
            return;
        };
        let mut added = false;
        for label in &self.models {
            added |= names.assign(label);
        }
        if added {
            self.record_names();
        }
    }

    pub(super) fn record_names(&mut self) {
        if let Some(names) = &self.names {
            self.recorder.record(&SessionRecord::Blind {
                turn: self.last_turn,
                aliases: names.aliases(),
                revealed: names.is_revealed(),
            });
        }
    }
}
