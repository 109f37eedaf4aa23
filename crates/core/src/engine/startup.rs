//! What every front end checks before it writes to the project: the project-wide refusal to
//! apply while an apply of any session was interrupted half-way, and, for `versus rewind`, the
//! session to act on and the roll-back of such an apply.

use super::EngineError;
use crate::apply::{ApplyEngine, LockWait, PendingApply, RecoveryReport};
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

/// What `versus rewind` acts on, decided once for the command (the TUI's `/rewind` acts on its
/// own open session).
#[derive(Debug)]
pub enum RewindTarget {
    /// This session: it was named, or it is the newest with something to undo.
    Found {
        /// The session's id.
        session: String,
        /// An apply of it that was interrupted half-way: it is rolled back
        /// ([`roll_back_interrupted`]) before anything else, never rewound.
        interrupted: Option<PendingApply>,
    },
    /// Something was applied in this project, and all of it is undone already.
    AllUndone,
    /// Nothing was ever applied: in the project (`None`), or in the session named.
    NeverApplied(Option<String>),
}

/// The session `versus rewind` acts on: the one named, else the newest with something to undo
/// (an interrupted apply or an apply in effect); else whether anything was ever applied, so the
/// message can say which of the two it is. Blocking (reads journals).
pub fn find_rewind_target(
    store: &Store,
    session: Option<&str>,
) -> Result<RewindTarget, EngineError> {
    let journal = crate::apply::journal::JOURNAL_FILE;
    if let Some(prefix) = session {
        let (id, dir) = store.session(Some(prefix))?;
        if !dir.join(journal).exists() {
            return Ok(RewindTarget::NeverApplied(Some(id)));
        }
        let interrupted = ApplyEngine::new(store.project(), &dir)?.pending_recovery()?;
        return Ok(RewindTarget::Found {
            session: id,
            interrupted,
        });
    }
    let mut applied = false;
    for id in store.sessions()?.into_iter().rev() {
        let dir = store.root().join("sessions").join(&id);
        if !dir.join(journal).exists() {
            continue;
        }
        applied = true;
        let engine = ApplyEngine::new(store.project(), &dir)?;
        let interrupted = engine.pending_recovery()?;
        if interrupted.is_some() || engine.rewind_preview()?.is_some() {
            return Ok(RewindTarget::Found {
                session: id,
                interrupted,
            });
        }
    }
    Ok(if applied {
        RewindTarget::AllUndone
    } else {
        RewindTarget::NeverApplied(None)
    })
}

/// Rolls an interrupted apply of `session` back to the state before it started, under the
/// project's lock (`wait` says whether to wait for another versus holding it). Happens before
/// any session is opened, like the crash recovery it is. Blocking.
pub fn roll_back_interrupted(
    store: &Store,
    session: &str,
    apply_id: &str,
    wait: LockWait,
) -> Result<RecoveryReport, EngineError> {
    let (_, dir) = store.session(Some(session))?;
    let engine = ApplyEngine::new(store.project(), &dir)?.lock_wait(wait);
    Ok(engine.rollback_incomplete(apply_id)?)
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
