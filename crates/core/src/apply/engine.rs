//! The apply engine: decide per path, preview, then snapshot, journal and write.
//!
//! Deciding is pure reading, so [`ApplyEngine::preview`] and [`ApplyEngine::apply`] share it
//! and the preview the user saw is exactly what apply does (unless the tree changes between the
//! two calls, in which case apply decides again from the fresh state). Nothing is written until
//! every path has been decided and snapshotted: a refused path fails the whole apply up front.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use super::durable::{parent_of, sync_dirs};
use super::journal::{self, Record};
use super::merge3::{MergeOutcome, line_delta, merge3};
use super::outcome::{
    AppliedAs, ApplyReport, ConflictReason, FileOutcome, FilePreview, FileStatus, Preview,
    RegionText, span_text,
};
use super::place::{applied_mode, put_in_place, umask};
use super::recover::{self, PendingApply, RecoveryReport};
use super::rewind::{self, RewindPreview, RewindReport};
use super::snapshot::{self, FileIdentity, PendingChange};
use super::{ApplyError, ApplyPlan, PlannedWrite, Resolution, Result, now_secs};
use crate::workspace::ProjectPath;
use crate::workspace::changeset::shown_mode;

/// Applies change sets to one project root, keeping snapshots and the journal in one session
/// folder. Holds no state beyond the two folders, so a fresh instance after a restart sees
/// everything a previous one did.
#[derive(Debug, Clone)]
pub struct ApplyEngine {
    root: PathBuf,
    session: PathBuf,
    /// Test hooks (`hooks`): empty unless built with the `test-hooks` feature.
    pub(super) hooks: super::hooks::Hooks,
    lock_wait: super::LockWait,
}

/// New content of a path, or its deletion: borrowed from the plan, or made here (a merge).
type Target<'p> = Option<Cow<'p, [u8]>>;

/// The decision for one path, shared by preview and apply. Borrows the plan's content
/// (`'p`) instead of copying it: a 1,000-file pick copied every proposed file three times here.
struct Decision<'p> {
    path: ProjectPath,
    current: Option<(Vec<u8>, u32)>,
    /// The file `current` was read from (for a hard-linked snapshot).
    identity: Option<FileIdentity>,
    status: FileStatus,
    /// What a clean/merged path writes.
    write: Option<Target<'p>>,
    /// What Overwrite writes for a conflict.
    overwrite: Option<&'p [u8]>,
    /// What Markers writes for a conflict, when possible.
    markers: Option<Vec<u8>>,
    mode: Option<u32>,
    /// The target content is a symlink's target.
    symlink: bool,
    /// `current` is the target of the symlink at the path now (not file bytes).
    current_link: bool,
}

impl ApplyEngine {
    /// An engine for `root` (the user's project) recording into `session` (created if needed).
    pub fn new(root: &Path, session: &Path) -> Result<Self> {
        let root = root
            .canonicalize()
            .map_err(|e| ApplyError::io("open the project root", root, e))?;
        fs::create_dir_all(session).map_err(|e| ApplyError::io("create", session, e))?;
        Ok(Self {
            root,
            session: session.to_path_buf(),
            hooks: super::hooks::Hooks::default(),
            lock_wait: super::LockWait::Wait,
        })
    }

    /// What apply, rewind and recovery do when another process holds the project's lock
    /// (default: wait). See [`super::lock`].
    pub fn lock_wait(mut self, wait: super::LockWait) -> Self {
        self.lock_wait = wait;
        self
    }

    fn lock(&self) -> Result<super::ProjectLock> {
        super::ProjectLock::acquire(&self.root, &self.lock_wait)
    }

    /// Where the test hooks act (nothing without the `test-hooks` feature): before user-file
    /// write number `done`, or after the last one and before the commit.
    fn crash_point(&self, done: usize) -> Result<()> {
        self.hooks.at(&self.root, done)
    }

    /// What [`ApplyEngine::apply`] would do, without writing anything.
    pub fn preview(&self, plan: &ApplyPlan) -> Result<Preview> {
        let decisions = self.decide_all(plan)?;
        Ok(Preview {
            files: decisions
                .iter()
                .map(|d| {
                    let cur = d.current.as_ref().map(|c| c.0.as_slice()).unwrap_or(b"");
                    let target = match &d.write {
                        Some(t) => t.as_deref(),
                        None => d.overwrite,
                    };
                    let (added, removed) = if d.status == FileStatus::AlreadyApplied
                        || matches!(d.status, FileStatus::Refused { .. })
                    {
                        (0, 0)
                    } else {
                        line_delta(cur, target.unwrap_or(b""))
                    };
                    let texts = match &d.status {
                        FileStatus::Conflict {
                            reason: ConflictReason::Lines,
                            regions,
                            ..
                        } => {
                            let theirs = d.overwrite.unwrap_or(b"");
                            regions
                                .iter()
                                .map(|r| RegionText {
                                    region: r.clone(),
                                    ours: span_text(cur, r.ours),
                                    theirs: span_text(theirs, r.theirs),
                                })
                                .collect()
                        }
                        _ => Vec::new(),
                    };
                    FilePreview {
                        path: d.path.rel().to_string(),
                        status: d.status.clone(),
                        added,
                        removed,
                        texts,
                    }
                })
                .collect(),
        })
    }

    /// Applies `plan`: clean and merged paths are written; conflicting paths only as
    /// `resolutions` says (keyed by relative path); a conflict with no resolution is skipped.
    /// The engine always goes through [`ApplyEngine::apply_resolving`]; this shorter form is
    /// for the tests and benchmarks that drive the apply engine directly.
    #[cfg(any(test, feature = "internals"))]
    pub fn apply(
        &self,
        plan: &ApplyPlan,
        resolutions: &BTreeMap<String, Resolution>,
    ) -> Result<ApplyReport> {
        self.apply_resolving(plan, resolutions, None)
    }

    /// [`ApplyEngine::apply`], with every conflict that `resolutions` does not name resolved
    /// as `rest` says (`None`: left unresolved). Each path is decided once, under the lock:
    /// a front end that resolves the rest one way (`versus ask --pick --on-conflict`) needs
    /// no [`ApplyEngine::preview`] first, which read every file and merged every conflict a
    /// second time (43-106 ms of a 1,000-file pick), and whose answers could be stale by
    /// the time apply decided again.
    pub fn apply_resolving(
        &self,
        plan: &ApplyPlan,
        resolutions: &BTreeMap<String, Resolution>,
        rest: Option<Resolution>,
    ) -> Result<ApplyReport> {
        // Held until the apply is committed (or has failed): one writer per project.
        let started = std::time::Instant::now();
        let _lock = self.lock()?;
        let history = journal::entries(&journal::read(&self.session)?);
        if let Some(p) = history.iter().rev().find(|e| e.is_interrupted()) {
            return Err(ApplyError::PendingRecovery {
                apply_id: p.apply_id.clone(),
            });
        }
        snapshot::remove_orphans(
            &self.session,
            &history.into_iter().map(|e| e.snapshot).collect(),
        );
        let decisions = self.decide_all(plan)?;
        let decided = started.elapsed();
        let mut outcomes = Vec::with_capacity(decisions.len());
        let mut actions: Vec<(usize, Option<&[u8]>)> = Vec::new();
        for (i, d) in decisions.iter().enumerate() {
            let (applied_as, target) = match (&d.status, &d.write) {
                (FileStatus::AlreadyApplied, _) => (AppliedAs::AlreadyApplied, None),
                (FileStatus::Refused { .. }, _) => (AppliedAs::Refused, None),
                (FileStatus::Clean, Some(t)) => {
                    let how = if t.is_some() {
                        AppliedAs::Written
                    } else {
                        AppliedAs::Deleted
                    };
                    (how, Some(t.as_deref()))
                }
                (FileStatus::Merged, Some(t)) => (AppliedAs::Merged, Some(t.as_deref())),
                _ => match resolutions.get(d.path.rel()).or(rest.as_ref()) {
                    Some(Resolution::Overwrite) => (AppliedAs::Overwritten, Some(d.overwrite)),
                    Some(Resolution::Markers) => match &d.markers {
                        Some(m) => (AppliedAs::MarkersWritten, Some(Some(m.as_slice()))),
                        None => (AppliedAs::MarkersUnavailable, None),
                    },
                    Some(Resolution::Skip) => (AppliedAs::Skipped, None),
                    None => (AppliedAs::Unresolved, None),
                },
            };
            outcomes.push(FileOutcome {
                path: d.path.rel().to_string(),
                applied_as,
            });
            // A link replacing a file whose bytes happen to equal its target still changes it,
            // and so does a change of the executable bit alone.
            if let Some(t) = target
                && (d.symlink
                    || d.current_link
                    || t != d.current.as_ref().map(|c| c.0.as_slice())
                    || d.current.as_ref().map(|c| c.1) != final_mode(d))
            {
                actions.push((i, t));
            }
        }
        let refused: BTreeMap<String, String> = decisions
            .iter()
            .filter_map(|d| match &d.status {
                FileStatus::Refused { why } => Some((d.path.rel().to_string(), why.clone())),
                _ => None,
            })
            .collect();
        if actions.is_empty() {
            return Ok(ApplyReport {
                apply_id: None,
                files: outcomes,
                refused,
            });
        }
        let apply_id = new_apply_id();
        let changes: Vec<PendingChange<'_>> = actions
            .iter()
            .map(|(i, t)| {
                let d = &decisions[*i];
                PendingChange {
                    path: &d.path,
                    current: d.current.as_ref().map(|(b, m)| (b.as_slice(), *m)),
                    identity: d.identity,
                    new: *t,
                    new_mode: final_mode(d),
                    symlink: d.symlink,
                    current_symlink: d.current_link,
                }
            })
            .collect();
        let snap = snapshot::create(&self.root, &self.session, &apply_id, &changes)?;
        let snapshotted = started.elapsed();
        journal::append(
            &self.session,
            &Record::Begin {
                apply_id: apply_id.clone(),
                time: now_secs(),
                label: plan.label.clone(),
                models: plan.models.clone(),
                hunks: plan.hunks.clone(),
                paths: changes.iter().map(|c| c.path.rel().to_string()).collect(),
                snapshot: apply_id.clone(),
            },
        )?;
        let begun = started.elapsed();
        // Every new content is staged and durable: putting it in place is one rename each.
        let mut touched: BTreeSet<PathBuf> = BTreeSet::new();
        for (done, (i, target)) in actions.iter().enumerate() {
            self.crash_point(done)?;
            let d = &decisions[*i];
            let staged = snap.staged.get(done).and_then(Option::as_deref);
            // Re-check at write time: a symlink created since deciding must not redirect us.
            let linked = snap.linked.get(done).copied().flatten();
            let written = ProjectPath::resolve(&self.root, d.path.rel())
                .map_err(ApplyError::from)
                .and_then(|path| {
                    // A file saved by another program since it was read is the user's newest
                    // work: stop (the rollback below leaves it as it is now) rather than
                    // replace it with content decided from its older bytes.
                    if let (Some(id), Some(_)) = (linked.or(d.identity), &d.current)
                        && !d.current_link
                        && !snapshot::still_as_read(path.abs(), &id)
                    {
                        return Err(ApplyError::ChangedWhileApplying {
                            path: path.rel().to_string(),
                        });
                    }
                    // The same for a link that was there: still the target that was read.
                    if d.current_link
                        && read_link_at(&path)? != d.current.as_ref().map(|(t, _)| t.clone())
                    {
                        return Err(ApplyError::ChangedWhileApplying {
                            path: path.rel().to_string(),
                        });
                    }
                    if d.symlink
                        && let Some(link_target) = *target
                    {
                        return crate::fsutil::symlink_beneath(&self.root, path.rel(), link_target)
                            .map_err(|e| ApplyError::io("create the symlink", path.abs(), e))
                            .map(|()| touched.insert(parent_of(path.abs())));
                    }
                    if d.current_link && target.is_none() {
                        // The link itself is removed, through folder handles, never followed.
                        return match crate::fsutil::remove_beneath(&self.root, path.rel()) {
                            Ok(()) => Ok(()),
                            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                            Err(e) => Err(ApplyError::io("remove the symlink", path.abs(), e)),
                        }
                        .map(|()| touched.insert(parent_of(path.abs())));
                    }
                    put_in_place(&path, staged, *target, final_mode(d))
                        .map(|()| touched.insert(parent_of(path.abs())))
                });
            if let Err(e) = written {
                // A real failure (disk full, a path turned into a folder): undo what was
                // written so far now. If even that fails, the journal still shows the apply
                // as interrupted and recovery offers the rollback at the next start.
                // Paths after this one were never reached, nor this one when it was saved by
                // someone else meanwhile: they stay exactly as they are.
                let first_untouched = match e {
                    ApplyError::ChangedWhileApplying { .. } => done,
                    _ => done + 1,
                };
                let not_reached: BTreeSet<String> = actions
                    .iter()
                    .skip(first_untouched)
                    .map(|(i, _)| decisions[*i].path.rel().to_string())
                    .collect();
                let _ =
                    recover::rollback_except(&self.root, &self.session, &apply_id, &not_reached);
                return Err(e);
            }
        }
        // After the last rename, before the folders are flushed and `commit` is written.
        self.crash_point(actions.len())?;
        // The renames (and the folders made for them) reach the disk before `commit` says so.
        for created in &snap.manifest.created_dirs {
            touched.insert(parent_of(&self.root.join(created)));
        }
        let renamed = started.elapsed();
        if let Err(e) = sync_dirs(&touched) {
            let _ = recover::rollback_incomplete(&self.root, &self.session, &apply_id);
            return Err(e);
        }
        let flushed = started.elapsed();
        journal::append(
            &self.session,
            &Record::Commit {
                apply_id: apply_id.clone(),
                time: now_secs(),
            },
        )?;
        snapshot::discard_staging(&self.session, &apply_id);
        tracing::debug!(
            files = actions.len(),
            decided_ms = decided.as_millis() as u64,
            snapshot_ms = snapshotted.as_millis() as u64,
            begin_ms = begun.as_millis() as u64,
            renamed_ms = renamed.as_millis() as u64,
            folders_flushed_ms = flushed.as_millis() as u64,
            committed_ms = started.elapsed().as_millis() as u64,
            "applied"
        );
        Ok(ApplyReport {
            apply_id: Some(apply_id),
            files: outcomes,
            refused,
        })
    }

    /// The latest interrupted apply of this session, if a crash left one.
    pub fn pending_recovery(&self) -> Result<Option<PendingApply>> {
        recover::pending_recovery(&self.session)
    }

    /// Rolls back the interrupted apply `apply_id` to its snapshot.
    /// The lock is taken before the journal is read: an apply still being written by a live
    /// process holds it, so it is never rolled back under that process's feet (once it has
    /// committed, this reports it is not pending).
    pub fn rollback_incomplete(&self, apply_id: &str) -> Result<RecoveryReport> {
        let _lock = self.lock()?;
        recover::rollback_incomplete(&self.root, &self.session, apply_id)
    }

    /// What the next rewind would change; `None` when nothing is left to rewind.
    pub fn rewind_preview(&self) -> Result<Option<RewindPreview>> {
        rewind::rewind_preview(&self.root, &self.session)
    }

    /// Undoes the latest apply still in effect. Files edited after that apply are kept unless
    /// `force_edited`.
    pub fn rewind(&self, force_edited: bool) -> Result<RewindReport> {
        let _lock = self.lock()?;
        rewind::rewind(&self.root, &self.session, force_edited)
    }

    fn decide_all<'p>(&self, plan: &'p ApplyPlan) -> Result<Vec<Decision<'p>>> {
        let mut seen = BTreeSet::new();
        let guard = LinkGuard {
            proposed: plan
                .writes
                .iter()
                .filter(|w| w.symlink)
                .filter_map(|w| Some((w.path.trim_matches('/').to_string(), w.proposed.clone()?)))
                .collect(),
            protected: git_folders_inside(&self.root),
        };
        // Deciding reads each path's file (and merges a conflicting one): independent per
        // path, so a large plan is decided by a few threads, each taking consecutive paths.
        // The results are then taken in plan order, so the first error is the one a single
        // thread would have met first.
        let decided: Vec<Result<Decision<'p>>> = if plan.writes.len() < DECIDE_PARALLEL_FROM {
            plan.writes.iter().map(|w| self.decide(w, &guard)).collect()
        } else {
            let chunk = plan.writes.len().div_ceil(DECIDERS);
            let guard = &guard;
            std::thread::scope(|scope| {
                let workers: Vec<_> = plan
                    .writes
                    .chunks(chunk)
                    .map(|part| {
                        scope.spawn(move || {
                            part.iter()
                                .map(|w| self.decide(w, guard))
                                .collect::<Vec<_>>()
                        })
                    })
                    .collect();
                workers
                    .into_iter()
                    .flat_map(|worker| {
                        worker.join().unwrap_or_else(|_| {
                            vec![Err(ApplyError::io(
                                "decide",
                                PathBuf::new(),
                                std::io::Error::other("a deciding thread panicked"),
                            ))]
                        })
                    })
                    .collect()
            })
        };
        decided
            .into_iter()
            .map(|d| {
                let d = d?;
                if !seen.insert(d.path.rel().to_string()) {
                    return Err(ApplyError::DuplicatePath {
                        path: d.path.rel().to_string(),
                    });
                }
                Ok(d)
            })
            .collect()
    }

    fn decide<'p>(&self, w: &'p PlannedWrite, guard: &LinkGuard) -> Result<Decision<'p>> {
        let path = ProjectPath::resolve(&self.root, &w.path)?;
        if w.symlink
            && let Some(target) = &w.proposed
        {
            return self.decide_symlink(w, path, target, guard);
        }
        if let Some(now) = read_link_at(&path)? {
            return Ok(decide_over_link(w, path, now));
        }
        let read = snapshot::read_current_identified(&path)?;
        let identity = read.as_ref().map(|r| r.2);
        let current = read.map(|(bytes, mode, _)| (bytes, mode));
        let proposed = w.proposed.as_deref();
        let mut d = Decision {
            path,
            current,
            identity,
            status: FileStatus::Clean,
            write: None,
            overwrite: proposed,
            markers: None,
            mode: w.mode,
            symlink: false,
            current_link: false,
        };
        let cur_bytes = d.current.as_ref().map(|c| c.0.as_slice());
        // The base was a link and the user replaced or removed it: not the base any more,
        // whatever the bytes (a file holding the link's target text is not that link).
        if w.base_symlink {
            d.status = match (cur_bytes, proposed) {
                (c, p) if c == p => FileStatus::AlreadyApplied,
                (None, _) => whole_conflict(ConflictReason::DeletedByYou),
                (Some(_), None) => whole_conflict(ConflictReason::DeletedByModel),
                (Some(_), Some(_)) => whole_conflict(ConflictReason::Binary),
            };
            return Ok(d);
        }
        // The executable bit review showed is part of the proposal: a file that already
        // holds the proposed bytes may still need it set or cleared.
        let exec_flip = d
            .current
            .as_ref()
            .is_some_and(|(_, m)| applied_mode(*m, w.mode) != *m);
        if cur_bytes == proposed {
            if exec_flip {
                d.write = Some(proposed.map(Cow::Borrowed));
            } else {
                d.status = FileStatus::AlreadyApplied;
            }
            return Ok(d);
        }
        if cur_bytes == w.base.as_deref() {
            d.write = Some(proposed.map(Cow::Borrowed));
            return Ok(d);
        }
        let whole = |reason| FileStatus::Conflict {
            reason,
            regions: Vec::new(),
            markers_available: false,
        };
        match (&w.base, cur_bytes, proposed) {
            (_, Some(_), None) => d.status = whole(ConflictReason::DeletedByModel),
            (Some(_), None, Some(_)) => d.status = whole(ConflictReason::DeletedByYou),
            (_, ours, Some(theirs)) => {
                let base = w.base.as_deref().unwrap_or(b"");
                match merge3(base, ours.unwrap_or(b""), theirs) {
                    MergeOutcome::Clean(merged) => {
                        d.status = FileStatus::Merged;
                        d.write = Some(Some(Cow::Owned(merged)));
                    }
                    MergeOutcome::Conflict {
                        regions,
                        with_markers,
                    } => {
                        d.status = FileStatus::Conflict {
                            reason: if with_markers.is_some() {
                                ConflictReason::Lines
                            } else {
                                ConflictReason::Binary
                            },
                            regions,
                            markers_available: with_markers.is_some(),
                        };
                        d.markers = with_markers;
                    }
                }
            }
            // Proposed deletion of a file that is already gone: handled as AlreadyApplied above.
            (_, None, None) => d.status = FileStatus::AlreadyApplied,
        }
        Ok(d)
    }
}

impl ApplyEngine {
    /// The decision for a symlink proposal: refused unless its target stays inside the
    /// project ([`super::links::check_link_target`]), no folder on the way is a symlink, and
    /// the path is free (absent, or the user's file still as at base, which the snapshot keeps
    /// for rewind). A link already there is never replaced (unless it is this very link).
    fn decide_symlink<'p>(
        &self,
        w: &PlannedWrite,
        path: ProjectPath,
        target: &'p [u8],
        guard: &LinkGuard,
    ) -> Result<Decision<'p>> {
        let shown = String::from_utf8_lossy(target).into_owned();
        let mut d = Decision {
            path,
            current: None,
            identity: None,
            status: FileStatus::Clean,
            write: Some(Some(Cow::Borrowed(target))),
            overwrite: Some(target),
            markers: None,
            mode: None,
            symlink: true,
            current_link: false,
        };
        let rel = d.path.rel().to_string();
        let refuse = |why: String| FileStatus::Refused {
            why: format!("symlink {rel} -> {shown} refused: {why}"),
        };
        if let Err(why) = super::links::check_link_target(&rel, target) {
            d.status = refuse(format!(
                "{why}; links are applied only when they point inside the project"
            ));
            return Ok(d);
        }
        // Where it lands once every link on the way is followed: never a git folder or
        // versus's state, whatever links lead there.
        let links = super::links::ProjectLinks {
            root: &self.root,
            proposed: &guard.proposed,
        };
        if let Err(why) = super::links::resolve_inside(&rel, target, &links, &guard.protected) {
            d.status = refuse(format!(
                "{why}; links into a git folder or versus's state are never applied"
            ));
            return Ok(d);
        }
        let parts: Vec<&str> = rel.split('/').collect();
        for i in 1..parts.len() {
            let folder = self.root.join(parts[..i].join("/"));
            if fs::symlink_metadata(&folder).is_ok_and(|m| !m.is_dir()) {
                d.status = refuse(format!(
                    "{} is not a real folder (a symlink or a file)",
                    parts[..i].join("/")
                ));
                return Ok(d);
            }
        }
        let abs = d.path.abs().to_path_buf();
        match fs::symlink_metadata(&abs) {
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                ) =>
            {
                if w.base_symlink {
                    d.status = refuse(
                        "the link that was there at run start was removed since; apply again to \
                         make it anyway"
                            .to_string(),
                    );
                }
            }
            Err(e) => return Err(ApplyError::io("inspect", &abs, e)),
            Ok(m) if m.file_type().is_symlink() => {
                let now = fs::read_link(&abs)
                    .map_err(|e| ApplyError::io("read the link", &abs, e))?
                    .into_os_string()
                    .into_encoded_bytes();
                d.status = if now == target {
                    FileStatus::AlreadyApplied
                } else if w.base_symlink && w.base.as_deref() == Some(now.as_slice()) {
                    // The base link, as at run start: re-pointed (the snapshot keeps it).
                    d.current = Some((now, 0o777));
                    d.current_link = true;
                    FileStatus::Clean
                } else {
                    refuse(format!(
                        "a symlink is already there (-> {}); remove it and apply again",
                        String::from_utf8_lossy(&now)
                    ))
                };
            }
            Ok(m) if m.is_file() => {
                let read = snapshot::read_current_identified(&d.path)?;
                let unchanged = match (&read, &w.base) {
                    (Some((bytes, _, _)), Some(base)) => bytes == base && !w.base_symlink,
                    _ => false,
                };
                if unchanged {
                    d.identity = read.as_ref().map(|r| r.2);
                    d.current = read.map(|(bytes, mode, _)| (bytes, mode));
                } else {
                    d.status = refuse(
                        "a file you changed since the run is there; move it aside and apply again"
                            .to_string(),
                    );
                }
            }
            Ok(_) => {
                d.status = refuse("a folder is there".to_string());
            }
        }
        Ok(d)
    }
}

/// What the symlink decisions of one apply share: the links the plan proposes (a link may
/// point at another one) and the project-relative git folders that are not named `.git`.
struct LinkGuard {
    proposed: BTreeMap<String, Vec<u8>>,
    protected: Vec<String>,
}

/// The repository's git folders (its own and the common one) when they sit inside `root`
/// under another name than `.git` (`GIT_DIR=meta/repo`), project-relative; `.git` folders
/// are refused by name anyway ([`super::links::is_protected_name`]).
fn git_folders_inside(root: &Path) -> Vec<String> {
    let Ok(repo) = git2::Repository::discover(root) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for dir in [repo.path(), repo.commondir()] {
        if let Ok(dir) = dir.canonicalize()
            && let Ok(rel) = dir.strip_prefix(root)
            && let Some(rel) = rel.to_str()
            && !rel.is_empty()
            && !out.iter().any(|o| o == rel)
        {
            out.push(rel.to_string());
        }
    }
    out
}

/// A whole-file conflict (no regions, no markers).
fn whole_conflict(reason: ConflictReason) -> FileStatus {
    FileStatus::Conflict {
        reason,
        regions: Vec::new(),
        markers_available: false,
    }
}

/// The target of the symlink at `path`, read without following it; `None` when the path is
/// not a symlink (or absent).
fn read_link_at(path: &ProjectPath) -> Result<Option<Vec<u8>>> {
    let abs = path.abs();
    match fs::symlink_metadata(abs) {
        Ok(m) if m.file_type().is_symlink() => fs::read_link(abs)
            .map(|t| Some(t.into_os_string().into_encoded_bytes()))
            .map_err(|e| ApplyError::io("read the link", abs, e)),
        _ => Ok(None),
    }
}

/// The decision for a file or deletion proposal where a symlink is now (`now` its target).
/// The link as at run start (the base was this very link) is replaced or removed as proposed,
/// the snapshot keeping it as a link. A link the user made or re-pointed during the run is
/// their edit: a whole-file conflict, never silently overwritten.
fn decide_over_link(w: &PlannedWrite, path: ProjectPath, now: Vec<u8>) -> Decision<'_> {
    let unchanged = w.base_symlink && w.base.as_deref() == Some(now.as_slice());
    let status = match (&w.proposed, unchanged) {
        (_, true) => FileStatus::Clean,
        (None, false) => whole_conflict(ConflictReason::DeletedByModel),
        (Some(_), false) => whole_conflict(ConflictReason::Binary),
    };
    Decision {
        path,
        current: Some((now, 0o777)),
        identity: None,
        write: unchanged.then(|| w.proposed.as_deref().map(Cow::Borrowed)),
        status,
        overwrite: w.proposed.as_deref(),
        markers: None,
        mode: w.mode,
        symlink: false,
        current_link: true,
    }
}

/// The permission bits a file gets when apply writes it (`None`: the process's default for a
/// new file, which only happens for a plan that names no mode).
///
/// An existing file keeps the user's mode (theirs, however unusual), except for the one part
/// of a mode review shows: when the plan's executable bit differs from the file's, the
/// execute bits are set (for whoever may read it) or cleared, and setuid, setgid and sticky
/// are dropped. A new file (also one replacing a link, new as a file) gets exactly the mode
/// review showed, `0o644` or `0o755` ([`shown_mode`], whatever bits the plan carries), less
/// what the user's umask takes away, as git's checkout does.
fn final_mode(d: &Decision) -> Option<u32> {
    match &d.current {
        Some((_, m)) if !d.current_link => Some(applied_mode(*m, d.mode)),
        _ if d.current_link => Some(shown_mode(d.mode.unwrap_or(0o644)) & !umask()),
        _ => d.mode.map(|m| shown_mode(m) & !umask()),
    }
}

/// From this many planned paths a plan is decided by [`DECIDERS`] threads.
const DECIDE_PARALLEL_FROM: usize = 64;

/// Threads that decide a large plan (each reads its paths' files: more than a few only queue
/// on the disk and the processors).
const DECIDERS: usize = 4;

/// A sortable, unique id: milliseconds, process id and a counter.
fn new_apply_id() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{millis:013}-{}-{n}", std::process::id())
}
