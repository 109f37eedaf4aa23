//! Recovery of an apply a crash interrupted between its `begin` and `commit` records.
//!
//! Because `begin` is only written once the snapshot is durable, and every user-file write is a
//! temp + rename, an interrupted apply leaves each path either exactly as before or exactly as
//! the apply meant it. Rolling back therefore restores every snapshotted path unconditionally
//! (restoring an untouched path is a no-op) and removes the folders the apply created.

use std::collections::BTreeSet;
use std::path::Path;

use super::durable::sync_dirs;
use super::journal::{self, Record};
use super::snapshot;
use super::{ApplyError, Result, now_secs};

/// An apply that began but never committed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingApply {
    /// Its id (pass it to `rollback_incomplete`).
    pub apply_id: String,
    /// Label or prompt of the turn.
    pub label: String,
    /// Models whose changes it carried.
    pub models: Vec<String>,
    /// Paths it was changing.
    pub paths: Vec<String>,
    /// Unix seconds at begin.
    pub time: u64,
}

/// What a rollback restored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecoveryReport {
    /// The apply rolled back.
    pub apply_id: String,
    /// Paths put back to their pre-apply state.
    pub restored: Vec<String>,
}

/// Finds the latest interrupted apply in `session`'s journal, if any.
pub fn pending_recovery(session: &Path) -> Result<Option<PendingApply>> {
    let records = journal::read(session)?;
    Ok(journal::entries(&records)
        .into_iter()
        .rev()
        .find(journal::ApplyEntry::is_interrupted)
        .map(|e| PendingApply {
            apply_id: e.apply_id,
            label: e.label,
            models: e.models,
            paths: e.paths,
            time: e.time,
        }))
}

/// Restores every path of the interrupted apply `apply_id` from its snapshot, removes folders
/// it created, and records a `rollback` in the journal.
pub fn rollback_incomplete(root: &Path, session: &Path, apply_id: &str) -> Result<RecoveryReport> {
    rollback_except(root, session, apply_id, &BTreeSet::new())
}

/// [`rollback_incomplete`] by the apply that just failed, which knows the paths it never
/// reached: those are left exactly as they are (one of them may hold a save the user made
/// during the apply, which putting the old file back would lose).
pub(super) fn rollback_except(
    root: &Path,
    session: &Path,
    apply_id: &str,
    not_reached: &BTreeSet<String>,
) -> Result<RecoveryReport> {
    let root = root
        .canonicalize()
        .map_err(|e| ApplyError::io("open the project root", root, e))?;
    let records = journal::read(session)?;
    let entry = journal::entries(&records)
        .into_iter()
        .find(|e| e.apply_id == apply_id && e.is_interrupted())
        .ok_or_else(|| ApplyError::NotPending {
            apply_id: apply_id.to_string(),
        })?;
    let manifest = snapshot::load(session, &entry.snapshot)?;
    let mut restored = Vec::with_capacity(manifest.entries.len());
    let mut touched = BTreeSet::new();
    for e in manifest
        .entries
        .iter()
        .filter(|e| !not_reached.contains(&e.path))
    {
        touched.insert(snapshot::restore_entry(&root, session, &entry.snapshot, e)?);
        restored.push(e.path.clone());
    }
    snapshot::remove_temp_debris(&root, &manifest);
    touched.extend(snapshot::remove_created_dirs(&root, &manifest));
    // Restored names are on disk before the journal says the apply is rolled back.
    touched.retain(|d| d.is_dir());
    sync_dirs(&touched)?;
    journal::append(
        session,
        &Record::Rollback {
            apply_id: apply_id.to_string(),
            time: now_secs(),
            restored: restored.clone(),
        },
    )?;
    snapshot::discard_files(session, &entry.snapshot);
    Ok(RecoveryReport {
        apply_id: apply_id.to_string(),
        restored,
    })
}
