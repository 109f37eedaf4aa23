//! No descriptor but stdin, stdout and stderr reaches a command.
//!
//! A descriptor is a capability the kernel checks once, at open: one versus was started with
//! (`3</` from a shell, `exec 3<>/some/dir`, a job server's pipe) and passed on to a sandboxed
//! command would let it read and write outside every mount, through `/proc/self/fd/3` or
//! `openat` relative to it, whatever the sandbox shows. Rust opens its own descriptors
//! close-on-exec, but inherited ones, and any a C library opens without the flag, are not.
//! So every descriptor above 2 is marked close-on-exec: once at start, before any thread
//! exists (`versus`'s `main`), and again right before each command is built.

use std::os::fd::{BorrowedFd, RawFd};

use nix::fcntl::{FcntlArg, FdFlag, fcntl};

/// Marks every open descriptor above 2 close-on-exec, so no command inherits it. Call it
/// first thing in `main`, before any thread starts; the command runner calls it again before
/// each command.
pub fn close_on_exec_all() {
    for fd in open_descriptors() {
        if fd > 2 {
            set_close_on_exec(fd);
        }
    }
}

/// The descriptors open in this process, from `/proc/self/fd` (empty where it cannot be read).
fn open_descriptors() -> Vec<RawFd> {
    let Ok(list) = std::fs::read_dir("/proc/self/fd") else {
        return Vec::new();
    };
    // The listing's own descriptor is in the list too; it is closed by then and the flag call
    // on it fails harmlessly (or reaches a descriptor opened since, which is as wanted).
    list.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect()
}

#[allow(unsafe_code)]
fn set_close_on_exec(fd: RawFd) {
    // SAFETY: `borrow_raw` requires the descriptor to stay open while the borrow lives; the
    // borrow lives for this one fcntl call. If another thread closed `fd` in between, the call
    // fails with EBADF (no memory is touched); if the number was reused meanwhile, the new
    // descriptor gets close-on-exec, which is what this function wants for every descriptor.
    let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
    let Ok(flags) = fcntl(borrowed, FcntlArg::F_GETFD) else {
        return;
    };
    let flags = FdFlag::from_bits_truncate(flags);
    if !flags.contains(FdFlag::FD_CLOEXEC) {
        let _ = fcntl(borrowed, FcntlArg::F_SETFD(flags | FdFlag::FD_CLOEXEC));
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn an_inherited_descriptor_is_marked_close_on_exec() {
        let file = tempfile::tempfile().unwrap();
        let fd = std::os::fd::AsFd::as_fd(&file);
        // What an inheriting shell leaves: the flag cleared.
        fcntl(fd, FcntlArg::F_SETFD(FdFlag::empty())).unwrap();
        close_on_exec_all();
        let flags = FdFlag::from_bits_truncate(fcntl(fd, FcntlArg::F_GETFD).unwrap());
        assert!(flags.contains(FdFlag::FD_CLOEXEC));
    }
}
