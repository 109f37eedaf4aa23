//! The process group of one bash call: signals to all its members, and knowing when they are gone.
//!
//! The group id is the shell's pid (the shell is started as a group leader). Once the shell is
//! reaped, the kernel keeps that id reserved while any member of the group exists, so signalling
//! the group cannot reach an unrelated process in practice.
//!
//! "Gone" means no member is alive. A SIGKILLed process takes a moment to die, and an orphan that
//! died is a zombie until its new parent reaps it; some container inits never do, and a zombie
//! still answers `kill(-pgid, 0)`. So on Linux a group whose remaining members are all zombies
//! counts as gone (checked in /proc); elsewhere, or without /proc, only an empty group does.

use std::time::Duration;

use nix::errno::Errno;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::time::Instant;

/// A command's process group. SIGKILLs the whole group when dropped while armed, so an aborted
/// call (its future dropped) leaves nothing running.
pub(crate) struct Group {
    pgid: Pid,
    armed: bool,
}

impl Group {
    /// The group led by the process `leader`.
    pub(crate) fn new(leader: i32) -> Self {
        Self {
            pgid: Pid::from_raw(leader),
            armed: true,
        }
    }

    /// Sends `signal` to every member.
    pub(crate) fn signal(&self, signal: Signal) {
        // ESRCH (group already empty) is the normal outcome of a clean end, and nothing can be
        // done about EPERM (a member that changed its user), so errors are ignored.
        let _ = killpg(self.pgid, signal);
    }

    /// Whether some member is still alive (not counting zombies where that can be told).
    pub(crate) fn has_live_members(&self) -> bool {
        if killpg(self.pgid, None) == Err(Errno::ESRCH) {
            return false;
        }
        live_member_in_proc(self.pgid.as_raw()).unwrap_or(true)
    }

    /// Waits until no member is alive, or `limit` passes.
    pub(crate) async fn wait_until_gone(&self, limit: Duration) {
        let give_up = Instant::now() + limit;
        let mut pause = Duration::from_millis(1);
        while self.has_live_members() && Instant::now() < give_up {
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_millis(50));
        }
    }

    /// SIGKILLs the group now; dropping it afterwards sends nothing more.
    pub(crate) fn kill_and_disarm(&mut self) {
        self.signal(Signal::SIGKILL);
        self.armed = false;
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if self.armed {
            self.signal(Signal::SIGKILL);
        }
    }
}

/// Scans /proc for a process of group `pgid` that is not a zombie. `None` when /proc cannot be
/// read (not Linux, or hidden), so the caller falls back to "a member may be alive".
fn live_member_in_proc(pgid: i32) -> Option<bool> {
    let entries = std::fs::read_dir("/proc").ok()?;
    let mut saw_any = false;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if !name.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        saw_any = true;
        // The process may vanish between listing and reading: that is simply "not alive".
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        if let Some((state, group)) = parse_stat(&stat)
            && group == pgid
            && !matches!(state, 'Z' | 'X')
        {
            return Some(true);
        }
    }
    saw_any.then_some(false)
}

/// State and process group from a /proc/PID/stat line: `pid (comm) state ppid pgrp ...`. The
/// command name may contain spaces and parentheses, so parsing starts after the last `)`.
fn parse_stat(stat: &str) -> Option<(char, i32)> {
    let (_, rest) = stat.rsplit_once(')')?;
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let _parent = fields.next()?;
    let group = fields.next()?.parse().ok()?;
    Some((state, group))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn parses_stat_lines_with_odd_command_names() {
        assert_eq!(
            parse_stat("42 (a (b) c) S 1 42 42 0 -1 4194560"),
            Some(('S', 42))
        );
        assert_eq!(parse_stat("7 (sleep) Z 1 5 5 0"), Some(('Z', 5)));
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn an_unused_group_has_no_live_members() {
        // A pid far above any pid_max default is never a process group.
        assert!(!Group::new(i32::MAX - 1).has_live_members());
    }

    #[tokio::test]
    async fn killing_the_group_leaves_no_member_alive() {
        let mut child = tokio::process::Command::new("sh")
            .args(["-c", "sleep 30 & sleep 30"])
            .process_group(0)
            .spawn()
            .unwrap();
        let leader = i32::try_from(child.id().unwrap()).unwrap();
        let mut group = Group::new(leader);
        assert!(group.has_live_members());
        group.kill_and_disarm();
        child.wait().await.unwrap();
        group.wait_until_gone(Duration::from_secs(5)).await;
        assert!(!group.has_live_members());
    }
}
