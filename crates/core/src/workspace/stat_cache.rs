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
//!
//! Between processes: a new `versus ask` hashed the whole project again (86 ms of a 0.9 s
//! `--pick` on 10,000 files). Once a front end starts ([`keep_between_runs`]), what a capture
//! hashed is also written, in the background, to `versus/hashes/<key>.json` in the user's
//! state folder (`$XDG_STATE_HOME`, else `~/.local/state`; the folder `0700`, checked to be
//! this user's, never inside the project: a hostile project cannot plant or read it), a
//! typed, versioned record of each file's stamp and entry, and the next process's first capture of that project starts from it. The same
//! rule decides reuse: only a file whose `lstat` stamp is exactly the recorded one and whose
//! change time was settled when it was hashed; anything else (another file at that inode, a
//! copy, an edit, a record that does not parse or names another project) is hashed again.

use std::collections::HashMap;
use std::fs;
use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::base::BaseEntry;

/// How much older than the capture that hashed it a file's `ctime` must be for its hash to be
/// reused (many clock ticks; a file changed this recently is read again).
const RACY: Duration = Duration::from_secs(2);

/// The projects remembered (a process works on one; a few keep a test process bounded).
const PROJECTS: usize = 4;

/// What `lstat` said of a file when it was hashed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Serialize, Deserialize)]
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
    /// How many files this capture read (the others' hashes were reused).
    read: std::sync::atomic::AtomicUsize,
}

static PROJECT_CACHES: Mutex<Vec<(PathBuf, HashMap<String, Known>)>> = Mutex::new(Vec::new());

/// The folder hashes are kept in between runs (`<workspace parent>/hashes`); `None`: in this
/// process only.
static BETWEEN_RUNS: Mutex<Option<PathBuf>> = Mutex::new(None);

/// Version of [`Stored`]; a record of another version is not read.
const STORED_VERSION: u32 = 1;

/// The most projects whose hashes are kept on disk (the least recently written go).
const STORED_PROJECTS: usize = 16;

/// The largest record read back (about a million files).
const STORED_CAP: u64 = 256 << 20;

/// The record of one project's hashes on disk.
#[derive(Debug, Serialize, Deserialize)]
struct Stored {
    version: u32,
    /// The canonical project root the hashes are of.
    root: PathBuf,
    files: HashMap<String, Known>,
}

/// Keeps what captures hash in `folder` (in the user's state folder, see
/// `workspace::keep_hashes_between_runs`) for later processes: front ends call it once at
/// start.
pub(crate) fn keep_between_runs(folder: &Path) {
    *BETWEEN_RUNS.lock().unwrap_or_else(PoisonError::into_inner) = Some(folder.to_path_buf());
}

/// The record file of `root` in `folder`.
fn stored_path(folder: &Path, root: &Path) -> PathBuf {
    let key = blake3::hash(root.as_os_str().as_encoded_bytes()).to_hex();
    folder.join(format!("{}.json", &key[..32]))
}

/// The hashes a previous process kept for `root`, when their record is this version's and
/// names `root`; empty otherwise.
fn load_stored(root: &Path) -> HashMap<String, Known> {
    let Some(folder) = BETWEEN_RUNS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
    else {
        return HashMap::new();
    };
    // Only from a real folder of this user's, closed to others.
    if super::parent::check(&folder).is_err() {
        return HashMap::new();
    }
    let path = stored_path(&folder, root);
    let Ok(text) = crate::fsutil::read_capped_string(&path, STORED_CAP) else {
        return HashMap::new();
    };
    match serde_json::from_str::<Stored>(&text) {
        Ok(stored) if stored.version == STORED_VERSION && stored.root == root => stored.files,
        _ => {
            tracing::debug!(file = %path.display(), "kept hashes not used");
            HashMap::new()
        }
    }
}

/// Writes `files` as the record of `root` in the background (a temporary file renamed into
/// place: a reader sees the old record or the new one, a crash at worst leaves one that does
/// not parse and is not used), then drops the oldest records beyond [`STORED_PROJECTS`].
fn store_in_background(root: PathBuf, files: HashMap<String, Known>) {
    let Some(folder) = BETWEEN_RUNS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
    else {
        return;
    };
    super::background::run_later(move || {
        let stored = Stored {
            version: STORED_VERSION,
            root,
            files,
        };
        if let Err(e) = write_stored(&folder, &stored) {
            tracing::debug!(error = %e, "hashes not kept for the next run");
        }
    });
}

fn write_stored(folder: &Path, stored: &Stored) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    super::parent::prepare(folder).map_err(|e| std::io::Error::other(e.to_string()))?;
    let json = serde_json::to_vec(stored).map_err(std::io::Error::other)?;
    let path = stored_path(folder, &stored.root);
    let temp = path.with_extension(format!("{}.tmp", std::process::id()));
    let written = (|| {
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .custom_flags(nix::libc::O_NOFOLLOW)
            .open(&temp)?;
        file.write_all(&json)?;
        fs::rename(&temp, &path)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&temp);
    }
    written?;
    // Bounded: the least recently written records go.
    let mut records: Vec<(SystemTime, PathBuf)> = fs::read_dir(folder)?
        .flatten()
        .filter(|e| e.file_name().to_str().is_some_and(|n| n.ends_with(".json")))
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    if records.len() > STORED_PROJECTS {
        records.sort();
        for (_, old) in &records[..records.len() - STORED_PROJECTS] {
            let _ = fs::remove_file(old);
        }
    }
    Ok(())
}

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
            .map(|at| caches.remove(at).1);
        drop(caches);
        // The first capture of the project in this process: what an earlier run kept.
        let old = old.unwrap_or_else(|| load_stored(root));
        Self {
            root: root.to_path_buf(),
            started,
            old,
            new: Mutex::new(HashMap::new()),
            read: std::sync::atomic::AtomicUsize::new(0),
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
        self.read.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
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

    /// How many files this capture read so far.
    pub(crate) fn files_read(&self) -> usize {
        self.read.load(std::sync::atomic::Ordering::Relaxed)
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
        if BETWEEN_RUNS
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
        {
            store_in_background(self.root.clone(), new.clone());
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
