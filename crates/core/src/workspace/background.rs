//! Removals off the user's path: one thread per process that drops what it is handed.
//!
//! Removing a turn's workspaces (unmounting overlays, deleting what models wrote) and evicting
//! old frozen checkouts (thousands of files) took seconds at the start of the next turn, before
//! its first model request. Nothing waits for them: the next turn's workspaces are new folders
//! and a frozen checkout being evicted is one nobody holds (see `cow::cache`). A removal the
//! process does not live to finish leaves a folder carrying versus's marker and a dead owner,
//! which the next start's cleanup removes; [`settle`] waits for the queue where a front end
//! ends normally, so a finished run leaves nothing behind.

use std::sync::mpsc::{Sender, channel};
use std::sync::{Condvar, Mutex, PoisonError};

type Job = Box<dyn FnOnce() + Send + 'static>;

/// The queue's sender (the thread starts on first use) and how many jobs are not done.
static QUEUE: Mutex<Option<Sender<Job>>> = Mutex::new(None);
static PENDING: Mutex<usize> = Mutex::new(0);
static DONE: Condvar = Condvar::new();

/// Runs `job` on the background thread, after every job handed over before it. When the
/// thread cannot be started, the job runs here and now (slower, never lost).
pub(crate) fn run_later(job: impl FnOnce() + Send + 'static) {
    *PENDING.lock().unwrap_or_else(PoisonError::into_inner) += 1;
    let job: Job = Box::new(job);
    let mut queue = QUEUE.lock().unwrap_or_else(PoisonError::into_inner);
    if queue.is_none() {
        let (tx, rx) = channel::<Job>();
        let started = std::thread::Builder::new()
            .name("versus-removals".into())
            .spawn(move || {
                for job in rx {
                    // A panicking removal must not stop the ones after it, nor leave `settle`
                    // waiting forever.
                    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
                    finished();
                }
            });
        if started.is_ok() {
            *queue = Some(tx);
        }
    }
    let refused = match queue.as_ref() {
        Some(tx) => tx.send(job).err().map(|e| e.0),
        None => Some(job),
    };
    drop(queue);
    if let Some(job) = refused {
        job();
        finished();
    }
}

/// Drops `doomed` on the background thread (a turn's workspaces: their `Drop` removes them).
pub fn remove_later<T: Send + 'static>(doomed: T) {
    run_later(move || drop(doomed));
}

fn finished() {
    let mut pending = PENDING.lock().unwrap_or_else(PoisonError::into_inner);
    *pending = pending.saturating_sub(1);
    if *pending == 0 {
        DONE.notify_all();
    }
}

/// Waits until every removal handed over so far is done (a front end about to exit).
pub fn settle() {
    let mut pending = PENDING.lock().unwrap_or_else(PoisonError::into_inner);
    while *pending > 0 {
        pending = DONE.wait(pending).unwrap_or_else(PoisonError::into_inner);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn jobs_run_in_order_and_settle_waits_for_them() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let count = Arc::new(AtomicUsize::new(0));
        for i in 0..5 {
            let seen = Arc::clone(&seen);
            let count = Arc::clone(&count);
            run_later(move || {
                std::thread::sleep(std::time::Duration::from_millis(5));
                seen.lock().unwrap().push(i);
                count.fetch_add(1, Ordering::SeqCst);
            });
        }
        run_later(|| panic!("a failing job"));
        settle();
        assert_eq!(count.load(Ordering::SeqCst), 5);
        assert_eq!(*seen.lock().unwrap(), vec![0, 1, 2, 3, 4]);
    }
}
