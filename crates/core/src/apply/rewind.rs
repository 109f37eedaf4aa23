//! Rewind: undo the latest apply still in effect, from the journal and snapshots on disk.
//!
//! The target is always the most recent committed apply that has not been rewound, so calling
//! rewind repeatedly walks back apply by apply. Nothing is kept in memory between calls, which
//! is what lets `versus rewind` work in a new process. A file whose current content differs from
//! what the apply wrote was edited afterwards; rewind reports it in the preview and leaves it
//! alone unless forced, so the user's later work is never silently lost.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::durable::sync_dirs;
use super::journal::{self, ApplyEntry, Record};
use super::merge3::line_delta;
use super::snapshot::{self, Manifest};
use super::{ApplyError, Result, now_secs};
use crate::workspace::ProjectPath;

/// What rewinding does to one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RewindAction {
    /// The file existed before the apply: its old bytes and mode come back.
    Restore,
    /// The apply deleted the file: it is recreated.
    Recreate,
    /// The apply created the file: it is removed.
    Remove,
}

/// One path of a rewind preview.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RewindFile {
    /// Relative path.
    pub path: String,
    /// What happens to it.
    pub action: RewindAction,
    /// Lines the rewind adds back to the current file.
    pub added: usize,
    /// Lines the rewind removes from the current file.
    pub removed: usize,
    /// The file no longer holds what the apply wrote: someone edited it since.
    pub edited_after_apply: bool,
}

/// What the next rewind will change, so the caller can show it and ask.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RewindPreview {
    /// The apply to be undone.
    pub apply_id: String,
    /// Its label or prompt (for putting the prompt back in the input box).
    pub label: String,
    /// Models whose changes it carried.
    pub models: Vec<String>,
    /// Per path, in apply order.
    pub files: Vec<RewindFile>,
}

impl RewindPreview {
    /// Total lines added back.
    pub fn added(&self) -> usize {
        self.files.iter().map(|f| f.added).sum()
    }

    /// Total lines removed.
    pub fn removed(&self) -> usize {
        self.files.iter().map(|f| f.removed).sum()
    }

    /// Paths edited after the apply (the caller should ask before forcing them).
    pub fn edited(&self) -> Vec<&str> {
        self.files
            .iter()
            .filter(|f| f.edited_after_apply)
            .map(|f| f.path.as_str())
            .collect()
    }

    /// One-line summary such as `3 files, +42 -17`.
    pub fn summary(&self) -> String {
        let n = self.files.len();
        let noun = if n == 1 { "file" } else { "files" };
        format!("{n} {noun}, +{} -{}", self.added(), self.removed())
    }
}

/// What a rewind did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RewindReport {
    /// The apply undone.
    pub apply_id: String,
    /// Its label or prompt.
    pub label: String,
    /// Paths put back to their pre-apply state.
    pub restored: Vec<String>,
    /// Paths edited after the apply and left untouched (not forced).
    pub kept: Vec<String>,
}

/// Previews the rewind of the latest apply in effect; `None` when nothing is left.
pub fn rewind_preview(root: &Path, session: &Path) -> Result<Option<RewindPreview>> {
    let root = canonical(root)?;
    let Some(entry) = latest_live(session)? else {
        return Ok(None);
    };
    let manifest = snapshot::load(session, &entry.snapshot)?;
    let mut files = Vec::with_capacity(manifest.entries.len());
    for e in &manifest.entries {
        let path = ProjectPath::resolve(&root, &e.path)?;
        let current = snapshot::read_current_for(&path)?;
        let cur_bytes = current.as_ref().map(|c| c.0.as_slice());
        let before = match &e.before {
            Some(s) => Some(snapshot::blob(session, &entry.snapshot, s)?),
            None => None,
        };
        let (added, removed) =
            line_delta(cur_bytes.unwrap_or(b""), before.as_deref().unwrap_or(b""));
        let action = match (&e.before, &e.after) {
            (None, _) => RewindAction::Remove,
            (Some(_), None) => RewindAction::Recreate,
            (Some(_), Some(_)) => RewindAction::Restore,
        };
        files.push(RewindFile {
            path: e.path.clone(),
            action,
            added,
            removed,
            edited_after_apply: snapshot::edited_since(current.as_ref(), e),
        });
    }
    Ok(Some(RewindPreview {
        apply_id: entry.apply_id,
        label: entry.label,
        models: entry.models,
        files,
    }))
}

/// Rewinds the latest apply in effect. Paths edited after it are kept unless `force_edited`.
pub fn rewind(root: &Path, session: &Path, force_edited: bool) -> Result<RewindReport> {
    let root = canonical(root)?;
    let entry = match latest_live(session)? {
        Some(entry) => entry,
        None if journal::entries(&journal::read(session)?).is_empty() => {
            return Err(ApplyError::NothingApplied);
        }
        None => return Err(ApplyError::NothingToRewind),
    };
    let manifest: Manifest = snapshot::load(session, &entry.snapshot)?;
    let mut restored = Vec::new();
    let mut kept = Vec::new();
    let mut touched = BTreeSet::new();
    for e in &manifest.entries {
        let path = ProjectPath::resolve(&root, &e.path)?;
        let current = snapshot::read_current_for(&path)?;
        let edited = snapshot::edited_since(current.as_ref(), e);
        if edited && !force_edited {
            kept.push(e.path.clone());
            continue;
        }
        touched.insert(snapshot::restore_entry(&root, session, &entry.snapshot, e)?);
        restored.push(e.path.clone());
    }
    touched.extend(snapshot::remove_created_dirs(&root, &manifest));
    // Restored names are on disk before the journal says the apply is rewound.
    touched.retain(|d| d.is_dir());
    sync_dirs(&touched)?;
    journal::append(
        session,
        &Record::Rewind {
            apply_id: entry.apply_id.clone(),
            time: now_secs(),
            restored: restored.clone(),
            kept: kept.clone(),
        },
    )?;
    snapshot::discard_files(session, &entry.snapshot);
    Ok(RewindReport {
        apply_id: entry.apply_id,
        label: entry.label,
        restored,
        kept,
    })
}

/// The latest committed, not rewound apply; refuses while an interrupted apply awaits recovery.
fn latest_live(session: &Path) -> Result<Option<ApplyEntry>> {
    let entries = journal::entries(&journal::read(session)?);
    if let Some(p) = entries.iter().rev().find(|e| e.is_interrupted()) {
        return Err(ApplyError::PendingRecovery {
            apply_id: p.apply_id.clone(),
        });
    }
    Ok(entries.into_iter().rev().find(ApplyEntry::is_live))
}

fn canonical(root: &Path) -> Result<PathBuf> {
    root.canonicalize()
        .map_err(|e| ApplyError::io("open the project root", root, e))
}
