//! What every front end checks before it writes to the project: the project-wide refusal to
//! apply while an apply of any session was interrupted half-way.

use super::EngineError;
use crate::apply::ApplyEngine;
use crate::session::Store;

/// How many of the latest sessions are searched for an interrupted apply.
const SESSIONS_SEARCHED: usize = 20;

/// Refuses when an apply of this project (any of its latest sessions) was interrupted
/// half-way: its snapshots describe files a new apply would change again, so it must be
/// rolled back (`versus rewind`) before anything new is applied. Blocking (reads journals).
pub fn refuse_if_interrupted(store: &Store) -> Result<(), EngineError> {
    for id in store.sessions()?.into_iter().rev().take(SESSIONS_SEARCHED) {
        let dir = store.root().join("sessions").join(&id);
        if !dir.join(crate::apply::journal::JOURNAL_FILE).exists() {
            continue;
        }
        if let Some(pending) = ApplyEngine::new(store.project(), &dir)?.pending_recovery()? {
            return Err(EngineError::ApplyInterrupted {
                apply_id: pending.apply_id,
                session: id,
            });
        }
    }
    Ok(())
}

/// What a session's start has to tell the user before the first turn; each front end words
/// the line (`versus ask` on stderr, the TUI in its banner), the facts are the same.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StartNotice {
    /// The sandbox is switched off in the settings: model commands run unconfined.
    SandboxOff(String),
    /// The sandbox cannot run here: model commands will be refused (why).
    CommandsRefused(String),
    /// A workspace a crashed run left behind could not be removed (it is skipped).
    Leftover(String),
}

/// The one start of a session's work in a project, for every front end: workspaces left by
/// crashed runs removed (one that cannot go is reported, never fatal) and the sandbox's state
/// checked. Blocking (walks the workspaces' folder, probes the sandbox).
pub fn prepare_start(
    project: &std::path::Path,
    sandbox: &crate::exec::SandboxSettings,
) -> Vec<StartNotice> {
    let mut notices = Vec::new();
    if let Some(warning) = sandbox.warning() {
        notices.push(StartNotice::SandboxOff(warning.to_string()));
    } else if let Err(err) = crate::exec::check_available(sandbox) {
        notices.push(StartNotice::CommandsRefused(err.to_string()));
    }
    if let Err(err) = crate::workspace::cleanup_leftovers(project) {
        notices.push(StartNotice::Leftover(err.to_string()));
    }
    notices
}
