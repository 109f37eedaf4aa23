//! Batched durability: flush many files or folders to disk at once instead of one after the
//! other.
//!
//! An apply of 1,000 files used to fsync each file as it was written, so each flush waited for
//! its own journal commit. Here every file of a phase is written first and then flushed by a
//! few threads together: the filesystem folds the concurrent flushes into a handful of journal
//! commits, and files whose data is already on disk (a hard-linked snapshot of an unchanged
//! file) cost almost nothing. Only the files and folders named are flushed, never the whole
//! filesystem, so another program's unwritten data cannot slow an apply down.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Sender, channel};
use std::sync::{Mutex, PoisonError};

use super::{ApplyError, Result};

/// Flushing threads: enough for the filesystem to batch commits, few enough for a small machine.
const THREADS: usize = 8;
/// Below this many paths, threads cost more than they save.
const SERIAL_BELOW: usize = 16;

/// What to flush about a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A regular file's data (and the metadata needed to read it back): `fdatasync`.
    FileData,
    /// A folder's entries: `fsync` of the folder.
    Folder,
}

/// Makes the data of every file in `files` durable: `fdatasync` each, several at a time.
///
/// Never one `syncfs` of the whole filesystem, even for a large batch (an earlier version
/// did from 256 files: one call instead of 2,000). The filesystem of the project usually
/// also holds the session's blobs and, where the temp folder is on it, the workspaces whose
/// changes are being applied: a `versus ask --pick` of 1,000 files had 60 MB of such data
/// unwritten, which `syncfs` wrote and waited for, and it left the workspace's files under
/// writeback, so removing them right after waited about 4 ms per file (0.2-0.8 s). Flushing
/// only the files named costs the old files nothing (hard links of data already on disk), and
/// the unrelated data is written back later, or never when its files are removed first.
pub fn sync_files(files: &[PathBuf]) -> Result<()> {
    sync_all(files, Kind::FileData)
}

/// Starts writing `file`'s data back to the disk now, without waiting (Linux's
/// `sync_file_range(SYNC_FILE_RANGE_WRITE)`): only a hint, never what makes the data durable
/// (that stays the file's own `fdatasync`, which then mostly waits for writes already under
/// way). A snapshot of 1,000 new files written one after another and each flushed later made
/// the disk take the writes one flush at a time; started as each file is written, the block
/// layer gets them together. Measured on 1,000 files of 20 KB: written then flushed 210-223
/// ms, with the hint 128-135 ms, one `sync` of all 99-105 ms (docs/benchmarks.md). Errors are
/// ignored: the flush that follows reports any that matter.
pub fn start_writeback(file: &fs::File) {
    #[cfg(target_os = "linux")]
    start_writeback_linux(file);
    #[cfg(not(target_os = "linux"))]
    let _ = file;
}

#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn start_writeback_linux(file: &fs::File) {
    use std::os::fd::AsRawFd;
    // SAFETY: sync_file_range takes a descriptor this function borrows for the call (open for
    // its whole duration), two integers and a flag; it reads and writes no memory of this
    // process. No wrapper exists in nix 0.30 or std.
    let _ = unsafe {
        nix::libc::sync_file_range(file.as_raw_fd(), 0, 0, nix::libc::SYNC_FILE_RANGE_WRITE)
    };
}

/// Where a batch's files go to be flushed while the rest of the batch is still being made
/// ([`make_and_flush`]).
#[derive(Debug)]
pub struct FlushQueue {
    sender: Mutex<Option<Sender<PathBuf>>>,
    /// Files handed over (all of them flushed by the time [`make_and_flush`] returns `Ok`).
    queued: AtomicUsize,
}

impl FlushQueue {
    /// Hands `file` to the flushing threads: its data is made durable (`fdatasync`) before
    /// [`make_and_flush`] returns.
    pub fn push(&self, file: PathBuf) {
        self.queued.fetch_add(1, Ordering::Relaxed);
        let sender = self.sender.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(sender) = sender.as_ref() {
            // The receivers live until every sender is gone: a send cannot fail here.
            let _ = sender.send(file);
        }
    }
}

/// Runs `make`, which creates files and hands each to the queue as soon as it is written,
/// while [`THREADS`] threads flush them (`fdatasync`), and returns once every file handed over
/// is durable (or the first error, of `make` first).
///
/// Making the files of a large snapshot (creating inodes, copying bytes) keeps the processor
/// and the filesystem's locks busy; flushing them waits on the disk. One after the other, a
/// 1,000-file apply waited for the whole flush after the whole making; overlapped, the
/// first files' flushes are under way while the last ones are made. What is durable when it
/// returns is the same as [`sync_files`] of the same files.
pub fn make_and_flush<T>(make: impl FnOnce(&FlushQueue) -> Result<T>) -> Result<T> {
    let (sender, receiver) = channel::<PathBuf>();
    let receiver = Mutex::new(receiver);
    let queue = FlushQueue {
        sender: Mutex::new(Some(sender)),
        queued: AtomicUsize::new(0),
    };
    let flushed = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..THREADS)
            .map(|_| {
                let (receiver, flushed) = (&receiver, &flushed);
                scope.spawn(move || {
                    let mut first_error = Ok(());
                    loop {
                        // The lock is held only while waiting for the next file.
                        let next = receiver
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .recv();
                        let Ok(file) = next else {
                            return first_error;
                        };
                        // After an error the rest is only drained: the batch has failed.
                        if first_error.is_ok() {
                            first_error = sync_one(&file, Kind::FileData);
                            flushed.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                })
            })
            .collect();
        let made = make(&queue);
        // No more files: the flushing threads end once the queue is empty.
        queue
            .sender
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let mut first_error = Ok(());
        for worker in workers {
            let outcome = worker.join().unwrap_or_else(|_| {
                Err(ApplyError::io(
                    "sync",
                    PathBuf::new(),
                    std::io::Error::other("a flushing thread panicked"),
                ))
            });
            if first_error.is_ok() {
                first_error = outcome;
            }
        }
        let value = made?;
        first_error?;
        if flushed.load(Ordering::Relaxed) != queue.queued.load(Ordering::Relaxed) {
            return Err(ApplyError::io(
                "sync",
                PathBuf::new(),
                std::io::Error::other("a file handed over was not flushed"),
            ));
        }
        Ok(value)
    })
}

/// Makes the entries of every folder in `dirs` durable (an `fsync` of each folder, several at
/// a time): after it, renames into, links in and removals from those folders survive a power
/// cut.
pub fn sync_dirs(dirs: &BTreeSet<PathBuf>) -> Result<()> {
    let dirs: Vec<PathBuf> = dirs.iter().cloned().collect();
    sync_all(&dirs, Kind::Folder)
}

/// The folder holding `path` (what must be fsynced for a change of its name to last).
pub fn parent_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

fn sync_all(paths: &[PathBuf], kind: Kind) -> Result<()> {
    if paths.len() < SERIAL_BELOW {
        return paths.iter().try_for_each(|p| sync_one(p, kind));
    }
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..THREADS)
            .map(|k| {
                scope.spawn(move || {
                    paths
                        .iter()
                        .skip(k)
                        .step_by(THREADS)
                        .try_for_each(|p| sync_one(p, kind))
                })
            })
            .collect();
        let mut first_error = Ok(());
        for worker in workers {
            let outcome = worker.join().unwrap_or_else(|_| {
                Err(ApplyError::io(
                    "sync",
                    paths.first().cloned().unwrap_or_default(),
                    std::io::Error::other("a flushing thread panicked"),
                ))
            });
            if first_error.is_ok() {
                first_error = outcome;
            }
        }
        first_error
    })
}

fn sync_one(path: &Path, kind: Kind) -> Result<()> {
    let file = fs::File::open(path).map_err(|e| ApplyError::io("open", path, e))?;
    match kind {
        Kind::FileData => file.sync_data(),
        Kind::Folder => file.sync_all(),
    }
    .map_err(|e| ApplyError::io("sync", path, e))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn flushes_files_while_they_are_made_and_reports_the_first_error() {
        let dir = tempfile::tempdir().unwrap();
        let made = make_and_flush(|queue| {
            let mut names = Vec::new();
            for i in 0..100 {
                let p = dir.path().join(format!("f{i}"));
                fs::write(&p, format!("{i}")).unwrap();
                queue.push(p.clone());
                names.push(p);
            }
            Ok(names)
        })
        .unwrap();
        assert_eq!(made.len(), 100);
        assert_eq!(made[7], dir.path().join("f7"));
        // A file handed over that cannot be flushed fails the batch, naming it.
        let missing = dir.path().join("missing");
        match make_and_flush(|queue| {
            queue.push(made[0].clone());
            queue.push(missing.clone());
            Ok(())
        }) {
            Err(ApplyError::Io { path, .. }) => assert_eq!(path, missing),
            other => panic!("{other:?}"),
        }
        // The maker's own error wins, whatever the flushes did.
        match make_and_flush::<()>(|queue| {
            queue.push(dir.path().join("missing too"));
            Err(ApplyError::io(
                "create",
                "made",
                std::io::Error::other("no"),
            ))
        }) {
            Err(ApplyError::Io { path, .. }) => assert_eq!(path, Path::new("made")),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn flushes_many_files_and_reports_a_missing_one() {
        let dir = tempfile::tempdir().unwrap();
        let files: Vec<PathBuf> = (0..40)
            .map(|i| {
                let p = dir.path().join(format!("f{i}"));
                fs::write(&p, format!("{i}")).unwrap();
                p
            })
            .collect();
        sync_files(&files).unwrap();
        sync_dirs(&[dir.path().to_path_buf()].into_iter().collect()).unwrap();
        // A large batch (once flushed as a whole filesystem); a missing file still fails it.
        let many: Vec<PathBuf> = (0..256).map(|i| files[i % 40].clone()).collect();
        sync_files(&many).unwrap();
        let mut with_missing = many.clone();
        with_missing.push(dir.path().join("missing"));
        assert!(sync_files(&with_missing).is_err());
        let mut with_missing = files.clone();
        with_missing.push(dir.path().join("missing"));
        match sync_files(&with_missing) {
            Err(ApplyError::Io { path, .. }) => assert!(path.ends_with("missing")),
            other => panic!("{other:?}"),
        }
    }
}
