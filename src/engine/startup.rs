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
