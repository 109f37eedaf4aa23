//! The one place that runs commands for models and recipes: the bash tool, a workspace's
//! setup command, the review's check command and a recipe's `run:` criteria all call
//! [`run`]. It owns the sandbox ([`Sandbox`], built per workspace from the user's
//! [`SandboxSettings`]), the environment (an allowlist, [`env`]), the process tree (its own
//! process group and PID namespace), time limits and cancellation. What a caller does with the
//! output (spill it, keep its tail) is the caller's business: [`Tail`] covers the common case.
//!
//! Why bubblewrap: it is the mechanism the anchors use on Linux (Claude Code, codex's Linux
//! sandbox, Flatpak), it sets up user, mount, PID, network and IPC namespaces in one exec of a
//! small audited program, and it needs no `unsafe` in versus (the crate denies it; an
//! in-process `unshare` + `pivot_root` would need `pre_exec`). The only two exceptions are
//! single system calls with no wrapper in nix or std, each with its SAFETY note: marking
//! inherited descriptors close-on-exec (`descriptors`) and leaving the session keyring
//! versus was started with (`keyring`). See docs/sandbox.md.

mod bwrap;
mod command;
mod descriptors;
mod env;
mod group;
mod interactive;
mod keyring;
mod limit;
mod network;
mod probe;
mod sandbox;
mod service;

pub use command::{CommandSpec, Ending, ExecError, Finished, run};
pub use descriptors::close_on_exec_all;
pub use interactive::interactive;
pub use keyring::leave_session_keyring;
pub use network::{CommandRole, looks_like_network_failure, network_hint};
pub use sandbox::{
    DEFAULT_MAX_PROCESSES, FsAccess, Sandbox, SandboxMode, SandboxSettings, WorkspaceDirs,
};
pub use service::{Service, start_service};

/// Checks that the sandbox of `settings` can start here, so a front end can say so before the
/// first command (`Ok` when the sandbox is off: there is nothing to start).
pub fn check_available(settings: &SandboxSettings) -> Result<(), ExecError> {
    if settings.sandbox == SandboxMode::Off {
        return Ok(());
    }
    probe::check(&settings.program).map_err(|reason| ExecError::Unavailable {
        reason,
        remedy: probe::REMEDY,
    })
}

/// The end of a command's output, bounded: the last `max` bytes.
#[derive(Debug, Clone)]
pub struct Tail {
    kept: Vec<u8>,
    max: usize,
    total: u64,
}

impl Tail {
    /// Keeps at most `max` bytes.
    pub fn new(max: usize) -> Self {
        Self {
            kept: Vec::new(),
            max,
            total: 0,
        }
    }

    /// Appends a chunk, dropping the oldest bytes beyond the bound.
    pub fn push(&mut self, chunk: &[u8]) {
        self.total += chunk.len() as u64;
        self.kept.extend_from_slice(chunk);
        if self.kept.len() > self.max {
            let cut = self.kept.len() - self.max;
            self.kept.drain(..cut);
        }
    }

    /// Whether bytes were dropped.
    pub fn was_cut(&self) -> bool {
        self.total > self.kept.len() as u64
    }

    /// The kept bytes as lossy UTF-8.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.kept).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_keeps_the_end_within_its_bound() {
        let mut tail = Tail::new(4);
        tail.push(b"abc");
        assert!(!tail.was_cut());
        tail.push(b"def");
        assert_eq!(tail.text(), "cdef");
        assert!(tail.was_cut());
    }
}
