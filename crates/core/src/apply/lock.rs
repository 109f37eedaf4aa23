//! One writer per project: apply, rewind and crash recovery hold an exclusive `flock` on
//! `.versus/lock` for their whole duration.
//!
//! Two versus processes on one project used to interleave: a `versus rewind` during an
//! `ask --pick` "rolled back" an apply that then committed, and two concurrent picks of the
//! same files left a silent mix. With the lock, the second writer waits (and says for whom) or,
//! asked not to wait, refuses at once; recovery takes the lock before reading the journal, so
//! it can never roll back an apply whose process is still writing. Runs of models take no lock
//! and stay concurrent. The lock is the kernel's: it goes away with its process, however that
//! process ends, so a crash never leaves a project locked.
//!
//! `.versus/` belongs to a project that may come from someone else: the lock file is reached
//! without following symlinks (see [`crate::fsutil::open_beneath_create`]).

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::Arc;

use nix::fcntl::{Flock, FlockArg};

use super::{ApplyError, Result};

/// What to do when another process holds the lock.
#[derive(Clone, Default)]
pub enum LockWait {
    /// Wait for it; `on_wait` is told once, with the holder's pid when known.
    #[default]
    Wait,
    /// Wait, telling `on_wait` first (a front end prints "waiting for ...").
    WaitTelling(Arc<dyn Fn(Option<u32>) + Send + Sync>),
    /// Refuse at once with [`ApplyError::Busy`].
    NoWait,
}

impl std::fmt::Debug for LockWait {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Wait => "Wait",
            Self::WaitTelling(_) => "WaitTelling",
            Self::NoWait => "NoWait",
        })
    }
}

/// The held lock; released when dropped.
#[derive(Debug)]
pub struct ProjectLock {
    _held: Flock<File>,
}

/// Where the lock lives, relative to the project root.
pub const LOCK_FILE: &str = ".versus/lock";

impl ProjectLock {
    /// Takes the project's lock, waiting or refusing as `wait` says.
    pub fn acquire(root: &Path, wait: &LockWait) -> Result<ProjectLock> {
        let file = crate::fsutil::open_beneath_create(root, LOCK_FILE)
            .map_err(|e| ApplyError::io("open the project lock", root.join(LOCK_FILE), e))?;
        let file = match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(held) => return Ok(Self::record(held)),
            Err((file, nix::errno::Errno::EWOULDBLOCK)) => file,
            Err((_, errno)) => {
                return Err(ApplyError::io(
                    "lock",
                    root.join(LOCK_FILE),
                    std::io::Error::from(errno),
                ));
            }
        };
        let holder = holder_pid(&file);
        match wait {
            LockWait::NoWait => return Err(ApplyError::Busy { pid: holder }),
            LockWait::WaitTelling(tell) => tell(holder),
            LockWait::Wait => {}
        }
        tracing::info!(holder = ?holder, "waiting for the project lock");
        match Flock::lock(file, FlockArg::LockExclusive) {
            Ok(held) => Ok(Self::record(held)),
            Err((_, errno)) => Err(ApplyError::io(
                "lock",
                root.join(LOCK_FILE),
                std::io::Error::from(errno),
            )),
        }
    }

    /// Writes this process's pid into the lock file, for the next waiter's message.
    fn record(mut held: Flock<File>) -> ProjectLock {
        let file: &mut File = &mut held;
        let _ = file.set_len(0);
        let _ = file.seek(SeekFrom::Start(0));
        let _ = write!(file, "{}", std::process::id());
        ProjectLock { _held: held }
    }
}

/// The pid the holder wrote, when the file says one.
fn holder_pid(file: &File) -> Option<u32> {
    let mut text = String::new();
    let mut reader = file;
    reader.seek(SeekFrom::Start(0)).ok()?;
    reader.take(32).read_to_string(&mut text).ok()?;
    text.trim().parse().ok()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_second_writer_is_refused_or_waits_until_the_first_is_done() {
        let root = tempfile::tempdir().unwrap();
        let first = ProjectLock::acquire(root.path(), &LockWait::NoWait).unwrap();
        match ProjectLock::acquire(root.path(), &LockWait::NoWait) {
            Err(ApplyError::Busy { pid }) => assert_eq!(pid, Some(std::process::id())),
            other => panic!("{other:?}"),
        }
        let told = Arc::new(std::sync::Mutex::new(None));
        let seen = Arc::clone(&told);
        let path = root.path().to_path_buf();
        let waiter = std::thread::spawn(move || {
            let wait = LockWait::WaitTelling(Arc::new(move |pid| {
                *seen.lock().unwrap() = Some(pid);
            }));
            ProjectLock::acquire(&path, &wait).map(|_| ())
        });
        while told.lock().unwrap().is_none() {
            std::thread::yield_now();
        }
        drop(first);
        waiter.join().unwrap().unwrap();
    }

    #[test]
    fn a_symlinked_versus_folder_is_refused() {
        let root = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), root.path().join(".versus")).unwrap();
        assert!(ProjectLock::acquire(root.path(), &LockWait::NoWait).is_err());
        assert!(!elsewhere.path().join("lock").exists());
    }
}
