//! Frozen checkouts kept across turns and runs: `<parent>/cache-<key>/`.
//!
//! Making the frozen checkout of a base (a `git read-tree -u` of the whole repository plus the
//! user's uncommitted files) and removing it took 2-4 s around every turn on a 10,000-file
//! repository, while the models themselves started in milliseconds. A checkout is a pure
//! function of the repository (its commit, refs, exclude file and borrowed objects), the
//! project's place in it, the isolation and the captured base (every path, hash and mode of
//! the user's files, uncommitted ones included), so one made for the same key holds exactly
//! the same files and can serve a later turn, or a later run, instead of a new one.
//!
//! Why it stays exact:
//! - the key covers everything the checkout is made from (see `TreePlan::identity`), and a
//!   checkout is kept only when a scan of it after it was made equals the base it was made for
//!   (a file the user changed while it was being copied makes it private to this turn);
//! - a kept checkout is never written again: it is only ever an overlay's lower layer, models'
//!   writes go to their own upper layers, and commands never see the workspace parent;
//! - it is published by one `rename` of a finished folder (`renameat2` without replacing), so
//!   a crash never leaves a half-made one under a cache name;
//! - every process using one holds a shared `flock` on its `lock` file; eviction takes it
//!   exclusively (without waiting) and renames the folder away before deleting anything, and a
//!   process that locked the file checks that it is still the published one, so nobody ever
//!   mounts a checkout being deleted;
//! - an entry is used only when it is a real folder of this user holding a lock file (not a
//!   link) and a typed record naming the same key and version; anything else is refused;
//! - its files are written without flushing (as every workspace's are): the page cache shows
//!   them whole until the machine stops, so an entry is used only in the boot that made it
//!   (after a crash its files could be incomplete on disk).
//!
//! Bounded: at most [`KEEP`] entries nobody holds, none unused for more than [`MAX_AGE`];
//! eviction runs in the background at start (`cleanup_leftovers`) and after a new entry is
//! published, and `versus clean` removes every entry nobody holds.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use nix::fcntl::{Flock, FlockArg};
use serde::{Deserialize, Serialize};

use crate::workspace::base::BaseEntry;
use crate::workspace::error::WorkspaceError;

/// Name of a kept checkout's folder, before its key.
pub(crate) const PREFIX: &str = "cache-";

/// The typed record of a kept checkout (what it was made for).
const RECORD: &str = "versus-base.json";

/// The typed record of what a kept checkout of a commit holds (see [`Files`]).
const FILES: &str = "versus-files.json";

/// Version of [`Files`]; a file of another version is not used.
const FILES_VERSION: u32 = 1;

/// The largest [`FILES`] read back (about 2 million files).
const FILES_CAP: u64 = 256 << 20;

/// The file whose shared `flock` says "in use"; its modification time is the last use.
const LOCK: &str = "lock";

/// Version of [`Record`]; an entry of another version is refused (and evicted in time).
const VERSION: u32 = 1;

/// The most entries kept that no process holds.
pub(crate) const KEEP: usize = 4;

/// An entry unused for longer is removed.
pub(crate) const MAX_AGE: Duration = Duration::from_secs(3 * 24 * 3600);

/// What a kept checkout records about itself.
#[derive(Debug, Serialize, Deserialize)]
struct Record {
    version: u32,
    /// The full key (the folder name holds it too).
    key: String,
    /// The project it was made from (for `versus clean` and a person looking).
    project: PathBuf,
    /// The boot it was made in: its files were written without flushing, so after a crash
    /// they may be incomplete on disk, and an entry of another boot is never used.
    #[serde(default)]
    boot: String,
}

/// What a kept checkout of a commit alone holds, as a scan of it found right after it was
/// written: the copy-on-write layers compare the user's base with it to lay only the files
/// that differ on top (see `cow::layer`). The checkout is never written again, so this stays
/// true for as long as the entry exists.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Files {
    version: u32,
    /// The key of the entry it describes.
    key: String,
    /// Every file of the project's folder in the checkout the capture's rules take (path ->
    /// hash, mode, kind), exactly as a capture of that folder would record them.
    pub(crate) entries: BTreeMap<String, BaseEntry>,
    /// The files the commit tracks that those rules ignore, with their entries: a capture
    /// never sees them, so the layers decide from these whether the user still has them.
    #[serde(default)]
    pub(crate) ignored: BTreeMap<String, BaseEntry>,
}

impl Files {
    /// What a scan of the checkout of `key` found.
    pub(crate) fn new(
        key: &str,
        entries: BTreeMap<String, BaseEntry>,
        ignored: BTreeMap<String, BaseEntry>,
    ) -> Self {
        Self {
            version: FILES_VERSION,
            key: key.to_string(),
            entries,
            ignored,
        }
    }
}

/// Writes `files` into the finished checkout folder `made` before it is published.
pub(crate) fn write_files(made: &Path, files: &Files) -> io::Result<()> {
    let json = serde_json::to_vec(files).map_err(io::Error::other)?;
    crate::fsutil::atomic_write(&made.join(FILES), &json)
}

/// Reads back what the kept entry at `folder` holds, when its record is of this version and
/// names `key`.
pub(crate) fn read_files(folder: &Path, key: &str) -> Option<Files> {
    let text = crate::fsutil::read_capped_string(&folder.join(FILES), FILES_CAP).ok()?;
    let files: Files = serde_json::from_str(&text).ok()?;
    (files.version == FILES_VERSION && files.key == key).then_some(files)
}

/// This boot's id (`/proc/sys/kernel/random/boot_id`); empty where it cannot be read, which
/// never matches a recorded one.
fn boot_id() -> String {
    crate::fsutil::read_capped_string(Path::new("/proc/sys/kernel/random/boot_id"), 128)
        .map(|id| id.trim().to_string())
        .unwrap_or_default()
}

/// A kept checkout in use by this process: the shared lock, released on drop.
#[derive(Debug)]
pub(crate) struct Lease {
    _lock: Flock<File>,
    folder: PathBuf,
}

impl Lease {
    /// The entry's folder (`tree/` inside is the checkout).
    pub(crate) fn folder(&self) -> &Path {
        &self.folder
    }
}

/// The folder name of `key`.
pub(crate) fn name_of(key: &str) -> String {
    format!("{PREFIX}{key}")
}

/// Opens the kept checkout of `key` under `parent` for use, or `None` when there is none
/// usable (missing, being evicted, not this user's, or not what it should be).
pub(crate) fn lookup(parent: &Path, key: &str) -> Option<Lease> {
    let folder = parent.join(name_of(key));
    let meta = fs::symlink_metadata(&folder).ok()?;
    if !meta.is_dir() || meta.uid() != nix::unistd::geteuid().as_raw() {
        if !meta.is_dir() || meta.file_type().is_symlink() {
            tracing::warn!(folder = %folder.display(), "kept checkout refused: not a real folder");
        }
        return None;
    }
    let lock = open_lock(&folder.join(LOCK)).ok()?;
    let lock = match Flock::lock(lock, FlockArg::LockSharedNonblock) {
        Ok(held) => held,
        // Being evicted right now: make a new one.
        Err(_) => return None,
    };
    if !still_published(&lock, &folder) {
        return None;
    }
    let boot = boot_id();
    let refused = match read_record(&folder) {
        None => Some("it has no readable record"),
        Some(r) if r.version != VERSION || r.key != key => Some("its record does not match"),
        Some(r) if boot.is_empty() || r.boot != boot => Some("it was made before the last restart"),
        Some(_) => None,
    };
    if let Some(why) = refused {
        tracing::info!(folder = %folder.display(), reason = why, "kept checkout not used");
        // Out of the way, so this key's new checkout can be kept in its place.
        drop(lock);
        discard(parent, folder);
        return None;
    }
    let tree = fs::symlink_metadata(folder.join("tree")).ok()?;
    if !tree.is_dir() {
        return None;
    }
    touch(&lock);
    Some(Lease {
        _lock: lock,
        folder,
    })
}

/// Publishes the finished checkout in `made` (a workspace folder of this process holding
/// `tree/`) as the kept entry of `key`: a lock file held shared from before the rename, the
/// record, then one rename that never replaces. `Ok(None)` when another process published the
/// same key first (theirs is then used; `made` stays where it was).
pub(crate) fn publish(
    parent: &Path,
    made: &Path,
    key: &str,
    project: &Path,
) -> io::Result<Option<Lease>> {
    let lock = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(made.join(LOCK))?;
    let lock =
        Flock::lock(lock, FlockArg::LockSharedNonblock).map_err(|(_, e)| io::Error::from(e))?;
    let record = Record {
        version: VERSION,
        key: key.to_string(),
        project: project.to_path_buf(),
        boot: boot_id(),
    };
    let json = serde_json::to_vec_pretty(&record).map_err(io::Error::other)?;
    crate::fsutil::atomic_write(&made.join(RECORD), &json)?;
    let target = parent.join(name_of(key));
    match nix::fcntl::renameat2(
        nix::fcntl::AT_FDCWD,
        made,
        nix::fcntl::AT_FDCWD,
        &target,
        nix::fcntl::RenameFlags::RENAME_NOREPLACE,
    ) {
        Ok(()) => Ok(Some(Lease {
            _lock: lock,
            folder: target,
        })),
        Err(nix::errno::Errno::EEXIST) | Err(nix::errno::Errno::ENOTEMPTY) => Ok(None),
        Err(e) => Err(io::Error::from(e)),
    }
}

/// Which entries [`evict`] removes (of those no process holds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Evict {
    /// Beyond [`KEEP`] (the least recently used first) or unused for [`MAX_AGE`].
    Old,
    /// Every one (`versus clean`).
    All,
}

/// Removes kept checkouts under `parent` that no process holds, as `which` says. Each is
/// taken with an exclusive lock (never waiting), renamed to a workspace folder of this
/// process (so a removal cut short is finished by the next cleanup) and removed. Returns how
/// many went; a failure names them after the others were tried.
pub(crate) fn evict(parent: &Path, which: Evict) -> Result<usize, WorkspaceError> {
    let entries = match fs::read_dir(parent) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(WorkspaceError::io("list", parent, e)),
    };
    let me = nix::unistd::geteuid().as_raw();
    let mut free: Vec<(SystemTime, PathBuf, Flock<File>)> = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        if !name.to_str().is_some_and(|n| n.starts_with(PREFIX)) {
            continue;
        }
        let folder = entry.path();
        let Ok(meta) = fs::symlink_metadata(&folder) else {
            continue;
        };
        if !meta.is_dir() || meta.uid() != me {
            continue;
        }
        let Ok(lock) = open_lock(&folder.join(LOCK)) else {
            continue;
        };
        let Ok(lock) = Flock::lock(lock, FlockArg::LockExclusiveNonblock) else {
            continue; // in use
        };
        if !still_published(&lock, &folder) {
            continue;
        }
        let used = lock
            .metadata()
            .and_then(|m| m.modified())
            .unwrap_or(SystemTime::UNIX_EPOCH);
        free.push((used, folder, lock));
    }
    // Newest first: what lies past KEEP, or is too old, goes.
    free.sort_by_key(|e| std::cmp::Reverse(e.0));
    let now = SystemTime::now();
    let mut removed = 0;
    let mut failed = Vec::new();
    for (n, (used, folder, lock)) in free.into_iter().enumerate() {
        let old = now.duration_since(used).unwrap_or_default() > MAX_AGE;
        if which == Evict::Old && n < KEEP && !old {
            continue;
        }
        match super::super::manager::retire_folder(parent, &folder)
            .and_then(|retired| super::super::manager::remove_workspace_folder(&retired))
        {
            Ok(()) => {
                removed += 1;
                tracing::debug!(folder = %folder.display(), "kept checkout removed");
            }
            Err(e) => {
                tracing::warn!(folder = %folder.display(), error = %e, "kept checkout not removed");
                failed.push(e.to_string());
            }
        }
        drop(lock);
    }
    if failed.is_empty() {
        Ok(removed)
    } else {
        Err(WorkspaceError::Cleanup {
            removed,
            failed: failed.join("; "),
        })
    }
}

/// Removes the entry at `folder` in the background, unless some process holds it.
fn discard(parent: &Path, folder: PathBuf) {
    let parent = parent.to_path_buf();
    crate::workspace::background::run_later(move || {
        let Ok(lock) = open_lock(&folder.join(LOCK)) else {
            return;
        };
        let Ok(lock) = Flock::lock(lock, FlockArg::LockExclusiveNonblock) else {
            return;
        };
        if !still_published(&lock, &folder) {
            return;
        }
        let removed = super::super::manager::retire_folder(&parent, &folder)
            .and_then(|retired| super::super::manager::remove_workspace_folder(&retired));
        if let Err(e) = removed {
            tracing::warn!(folder = %folder.display(), error = %e, "unusable kept checkout not removed");
        }
        drop(lock);
    });
}

/// Opens an entry's lock file, never through a link.
fn open_lock(path: &Path) -> io::Result<File> {
    fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(path)
}

/// True when the locked file is still `folder/lock` (not a file of an entry renamed away for
/// removal after it was opened).
fn still_published(lock: &File, folder: &Path) -> bool {
    let (Ok(held), Ok(now)) = (lock.metadata(), fs::symlink_metadata(folder.join(LOCK))) else {
        return false;
    };
    held.is_file() && now.is_file() && held.dev() == now.dev() && held.ino() == now.ino()
}

/// Reads an entry's record: a regular file of at most 64 KiB.
fn read_record(folder: &Path) -> Option<Record> {
    let text = crate::fsutil::read_capped_string(&folder.join(RECORD), 64 * 1024).ok()?;
    serde_json::from_str(&text).ok()
}

/// Marks the entry as used now (eviction keeps the most recently used).
fn touch(lock: &File) {
    let _ = lock.set_modified(SystemTime::now());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn made(parent: &Path, n: usize) -> PathBuf {
        let owned = crate::workspace::manager::new_folder(parent, "base", parent).unwrap();
        let folder = owned.path().to_path_buf();
        std::mem::forget(owned);
        fs::create_dir_all(folder.join("tree")).unwrap();
        fs::write(folder.join("tree/file"), n.to_string()).unwrap();
        folder
    }

    #[test]
    fn a_published_entry_is_found_and_held_entries_are_never_evicted() {
        let tmp = tempfile::tempdir().unwrap();
        let parent = tmp.path().join("ws");
        let first = made(&parent, 1);
        let lease = publish(&parent, &first, "k1", tmp.path()).unwrap().unwrap();
        assert!(!first.exists());
        assert_eq!(fs::read(lease.folder().join("tree/file")).unwrap(), b"1");
        // A second process made the same key at the same time: theirs stays, ours is not used.
        let second = made(&parent, 2);
        assert!(
            publish(&parent, &second, "k1", tmp.path())
                .unwrap()
                .is_none()
        );
        assert!(second.exists());
        // Found while held, and held entries survive `versus clean`.
        let again = lookup(&parent, "k1").unwrap();
        assert_eq!(evict(&parent, Evict::All).unwrap(), 0);
        drop((lease, again));
        assert!(lookup(&parent, "k2").is_none());
        assert_eq!(evict(&parent, Evict::All).unwrap(), 1);
        assert!(lookup(&parent, "k1").is_none());
        assert!(!parent.join(name_of("k1")).exists());
    }

    #[test]
    fn eviction_keeps_the_most_recent_few_and_a_wrong_record_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let parent = tmp.path().join("ws");
        for n in 0..KEEP + 2 {
            let folder = made(&parent, n);
            let lease = publish(&parent, &folder, &format!("k{n}"), tmp.path())
                .unwrap()
                .unwrap();
            // Older entries were used longer ago.
            let when = SystemTime::now() - Duration::from_secs(100 * (KEEP + 2 - n) as u64);
            File::open(lease.folder().join(LOCK))
                .unwrap()
                .set_modified(when)
                .unwrap();
        }
        assert_eq!(evict(&parent, Evict::Old).unwrap(), 2);
        assert!(!parent.join(name_of("k0")).exists());
        assert!(!parent.join(name_of("k1")).exists());
        assert!(lookup(&parent, &format!("k{}", KEEP + 1)).is_some());
        let folder = parent.join(name_of("k2"));
        let record = |key: &str, boot: &str| {
            format!(r#"{{"version":1,"key":"{key}","project":"/","boot":"{boot}"}}"#)
        };
        fs::write(folder.join(RECORD), record("k2", &boot_id())).unwrap();
        let held = lookup(&parent, "k2").unwrap();
        // A record naming another key is not used, nor removed while someone holds it.
        fs::write(folder.join(RECORD), record("other", &boot_id())).unwrap();
        assert!(lookup(&parent, "k2").is_none());
        crate::workspace::background::settle();
        assert!(folder.exists());
        drop(held);
        // Made before a restart (maybe a crash): its unflushed files are not trusted, and it
        // is removed so that a new checkout of its key can be kept.
        fs::write(folder.join(RECORD), record("k2", "an-earlier-boot")).unwrap();
        assert!(lookup(&parent, "k2").is_none());
        crate::workspace::background::settle();
        assert!(!folder.exists());
        // A link in place of an entry is not followed.
        std::os::unix::fs::symlink(parent.join(name_of("k3")), parent.join(name_of("k9"))).unwrap();
        assert!(lookup(&parent, "k9").is_none());
    }
}
