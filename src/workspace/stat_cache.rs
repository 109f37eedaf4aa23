//! Hashes of the project's files remembered between captures of one process, by what `lstat`
//! says of each file.
//!
//! Every turn captures the project ([`Base::capture`](super::Base::capture)): a walk that
//! hashed every byte, half a second for 10,000 files and 200 MB on a busy machine, before a
//! single model could start. Like git's index, a later capture now reuses the hash of a file
//! whose device, inode, size, mode, modification and change times are all what they were when
//! it was hashed, and reads only the others.
//!
//! Why it cannot miss a change: the stamp is taken *before* the file is read, so a write during
//! or after the read gives it a later change time (`ctime`, which no program can set back, unlike
//! `mtime`). Timestamps are coarse (a clock tick), so a write in the same tick as the stamp could
//! keep the same `ctime`: a hash is reused only when the file's `ctime` was already more than
//! [`RACY`] older than the capture that hashed it, so any later write lands on a later tick.
//! A file too new for that is hashed again at each capture until it is old enough.

use std::collections::HashMap;
use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::base::BaseEntry;

/// How much older than the capture that hashed it a file's `ctime` must be for its hash to be
/// reused (many clock ticks; a file changed this recently is read again).
const RACY: Duration = Duration::from_secs(2);

/// The projects remembered (a process works on one; a few keep a test process bounded).
const PROJECTS: usize = 4;

/// What `lstat` said of a file when it was hashed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    dev: u64,
    ino: u64,
    size: u64,
    mode: u32,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    /// The stamp of `meta`, taken before the file is read.
    pub(crate) fn of(meta: &Metadata) -> Self {
        Self {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mode: meta.mode(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
        }
    }

    /// The change time as a duration since the epoch (`None` before it: never trusted).
    fn changed(&self) -> Option<Duration> {
        let secs = u64::try_from(self.ctime.0).ok()?;
        let nanos = u32::try_from(self.ctime.1).ok()?;
        Some(Duration::new(secs, nanos))
    }
}

/// One remembered file.
#[derive(Debug, Clone)]
struct Known {
    stamp: Stamp,
    entry: BaseEntry,
    /// When the capture that hashed it started.
    hashed_at: Duration,
}

/// The hashes of one capture in progress: those it may reuse, and those it records.
#[derive(Debug)]
pub(crate) struct Capture {
    root: PathBuf,
    started: Duration,
    old: HashMap<String, Known>,
    new: Mutex<HashMap<String, Known>>,
}

static PROJECT_CACHES: Mutex<Vec<(PathBuf, HashMap<String, Known>)>> = Mutex::new(Vec::new());

fn now() -> Duration {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
}

impl Capture {
    /// Starts a capture of `root` with what the last capture of it in this process hashed.
    pub(crate) fn start(root: &Path) -> Self {
        let started = now();
        let mut caches = PROJECT_CACHES
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let old = caches
            .iter()
            .position(|(r, _)| r == root)
            .map(|at| caches.remove(at).1)
            .unwrap_or_default();
        drop(caches);
        Self {
            root: root.to_path_buf(),
            started,
            old,
            new: Mutex::new(HashMap::new()),
        }
    }

    /// The remembered entry of `rel` when the file is provably unchanged since it was hashed.
    pub(crate) fn reuse(&self, rel: &str, stamp: &Stamp) -> Option<BaseEntry> {
        let known = self.old.get(rel)?;
        let settled = stamp
            .changed()
            .is_some_and(|changed| changed + RACY < known.hashed_at);
        if known.stamp != *stamp || !settled {
            return None;
        }
        let entry = known.entry.clone();
        self.new
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(rel.to_string(), known.clone());
        Some(entry)
    }

    /// Records the entry of `rel` hashed in this capture, with the stamp taken before reading.
    pub(crate) fn hashed(&self, rel: &str, stamp: Stamp, entry: &BaseEntry) {
        self.new
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(
                rel.to_string(),
                Known {
                    stamp,
                    entry: entry.clone(),
                    hashed_at: self.started,
                },
            );
    }

    /// Keeps what this capture saw for the next one (only after it succeeded: a failed capture
    /// leaves nothing to trust).
    pub(crate) fn keep(self) {
        let new = self
            .new
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        let mut caches = PROJECT_CACHES
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        caches.retain(|(r, _)| *r != self.root);
        if caches.len() >= PROJECTS {
            caches.remove(0);
        }
        caches.push((self.root, new));
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::workspace::Base;
    use std::fs;

    #[test]
    fn a_file_changed_with_the_same_size_and_mtime_is_hashed_again() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let file = root.join("a.txt");
        fs::write(&file, "one").unwrap();
        let first = Base::capture(&root).unwrap();
        // Same size, and the old modification time put back: only ctime tells.
        let mtime = fs::metadata(&file).unwrap().modified().unwrap();
        fs::write(&file, "two").unwrap();
        fs::File::options()
            .write(true)
            .open(&file)
            .unwrap()
            .set_modified(mtime)
            .unwrap();
        let second = Base::capture(&root).unwrap();
        assert_ne!(first.get("a.txt"), second.get("a.txt"));
        assert_eq!(
            second.get("a.txt").unwrap().hash,
            crate::workspace::base::hash_bytes(b"two")
        );
    }

    #[test]
    fn only_a_settled_unchanged_file_is_reused() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let file = root.join("a.txt");
        fs::write(&file, "one").unwrap();
        let stamp = Stamp::of(&fs::symlink_metadata(&file).unwrap());
        let entry = BaseEntry {
            hash: "h".into(),
            mode: 0o644,
            kind: crate::workspace::BaseKind::File,
        };
        // Hashed just now: too recent to trust.
        let capture = Capture::start(&root);
        capture.hashed("a.txt", stamp, &entry);
        capture.keep();
        let capture = Capture::start(&root);
        assert_eq!(capture.reuse("a.txt", &stamp), None);
        // Hashed long after its last change: reused while the stamp is the same.
        capture.hashed("a.txt", stamp, &entry);
        let mut capture = capture;
        for known in capture.new.get_mut().unwrap().values_mut() {
            known.hashed_at += RACY * 2;
        }
        capture.keep();
        let capture = Capture::start(&root);
        assert_eq!(capture.reuse("a.txt", &stamp), Some(entry.clone()));
        let mut other = stamp;
        other.ctime.1 += 1;
        assert_eq!(capture.reuse("a.txt", &other), None);
        assert_eq!(capture.reuse("b.txt", &stamp), None);
    }
}
