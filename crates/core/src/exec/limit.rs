//! The process limit of one command (`[sandbox] max_processes`): a fork bomb stops at the
//! limit instead of taking every PID of the machine until the call times out.
//!
//! Two mechanisms, because neither covers every case:
//! - **RLIMIT_NPROC inside the sandbox** (`ulimit -u` before the command, in `bwrap.rs`). Since
//!   Linux 5.14 the count is kept per user namespace, and every command has a fresh one, so only
//!   the command's own processes (and threads) count, never the user's others. The kernel never
//!   enforces it for the real root user (uid 0 is exempt whatever the namespace), so:
//! - **a pids cgroup** per command, made here when versus may (as root, normally): a child of
//!   versus's own cgroup in the pids hierarchy (cgroup v1), or in the unified hierarchy (v2) when
//!   the pids controller is enabled for versus's cgroup's children. The command joins it before
//!   bubblewrap starts (a `/bin/sh` shim writes itself into `cgroup.procs`, then execs), so no
//!   process of the command is ever outside it. The cgroup is removed when the command ended;
//!   one a crash left behind is removed by a later run (a cgroup with a live process in it
//!   cannot be removed, so the sweep cannot disturb a running command).
//!
//! When neither applies (root without a writable pids hierarchy; an unconfined command of a
//! user without one), the log says so once.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The cgroups of this process older than this, and empty, are left-overs (an interactive
/// shell's, a failed start's): removed by the next sweep.
const STALE_AFTER: Duration = Duration::from_secs(60);

/// Name prefix of every cgroup versus makes.
const PREFIX: &str = "versus-";

/// The shell lines that put the shim itself into the cgroup, then become the command.
/// `$0` is the cgroup's `cgroup.procs`, the rest is the command.
const JOIN: &str = "echo 0 > \"$0\" || { echo \"versus: cannot enter the command's process \
                    limit ($0)\" >&2; exit 126; }; exec \"$@\"";

/// One command's pids cgroup; removed when dropped (if it is empty by then).
#[derive(Debug)]
pub(crate) struct Cgroup {
    dir: PathBuf,
}

impl Cgroup {
    /// Wraps `command` so it starts inside this cgroup: `/bin/sh -c JOIN procs program args`.
    pub(crate) fn wrap(&self, command: &std::process::Command) -> std::process::Command {
        let mut wrapped = std::process::Command::new("/bin/sh");
        wrapped
            .arg("-c")
            .arg(JOIN)
            .arg(self.dir.join("cgroup.procs"));
        wrapped.arg(command.get_program()).args(command.get_args());
        wrapped.env_clear();
        for (name, value) in command.get_envs() {
            if let Some(value) = value {
                wrapped.env(name, value);
            }
        }
        if let Some(dir) = command.get_current_dir() {
            wrapped.current_dir(dir);
        }
        wrapped
    }

    /// SIGKILLs every process still in the cgroup (one that left the command's process group,
    /// unconfined) and waits, at most `limit`, until it is empty, so it can be removed.
    pub(crate) async fn end(&self, limit: Duration) {
        let give_up = tokio::time::Instant::now() + limit;
        loop {
            let members = self.members();
            if members.is_empty() || tokio::time::Instant::now() >= give_up {
                return;
            }
            // cgroup v2 ends them all at once; v1 one by one (a process can only be in here
            // if the command started it).
            if std::fs::write(self.dir.join("cgroup.kill"), "1").is_err() {
                for pid in members {
                    let _ = nix::sys::signal::kill(
                        nix::unistd::Pid::from_raw(pid),
                        nix::sys::signal::Signal::SIGKILL,
                    );
                }
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// The processes in the cgroup.
    fn members(&self) -> Vec<i32> {
        std::fs::read_to_string(self.dir.join("cgroup.procs"))
            .map(|text| text.lines().filter_map(|l| l.trim().parse().ok()).collect())
            .unwrap_or_default()
    }

    /// Leaves the cgroup in place for a command whose end versus does not see (an interactive
    /// shell): a later sweep removes it once it is empty.
    pub(crate) fn leave(self) {
        std::mem::forget(self);
    }

    /// The cgroup's folder.
    #[cfg(test)]
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        // Busy (a process still exiting): the sweep of a later command removes it.
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// A new pids cgroup limited to `max` processes, or `None` where versus cannot make one.
pub(crate) fn cgroup(max: u32) -> Option<Cgroup> {
    let parent = pids_parent().as_deref()?;
    sweep(parent);
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let name = format!(
        "{PREFIX}{}-{now}-{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    );
    let dir = parent.join(name);
    if let Err(e) = std::fs::create_dir(&dir) {
        tracing::debug!(dir = %dir.display(), %e, "no pids cgroup");
        return None;
    }
    let cgroup = Cgroup { dir };
    match std::fs::write(cgroup.dir.join("pids.max"), max.to_string()) {
        Ok(()) => Some(cgroup),
        Err(e) => {
            tracing::debug!(dir = %cgroup.dir.display(), %e, "pids.max not written");
            None
        }
    }
}

/// Says once per process that commands run without a process limit, and why.
pub(crate) fn warn_unlimited(why: &str) {
    static SAID: AtomicBool = AtomicBool::new(false);
    if !SAID.swap(true, Ordering::Relaxed) {
        tracing::warn!("commands run without a process limit: {why}");
    }
}

/// The folder in which versus makes its pids cgroups (its own cgroup), found once.
fn pids_parent() -> &'static Option<PathBuf> {
    static PARENT: OnceLock<Option<PathBuf>> = OnceLock::new();
    PARENT.get_or_init(|| {
        let cgroups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
        let mounts = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
        let found = find_pids_parent(&cgroups, &mounts);
        tracing::debug!(parent = ?found, "pids cgroup parent");
        found
    })
}

/// Where versus's own pids cgroup is, from `/proc/self/cgroup` and `/proc/self/mountinfo`:
/// the v1 `pids` hierarchy when mounted, otherwise the unified (v2) one when its pids
/// controller is, or can be, enabled for the children of versus's cgroup.
fn find_pids_parent(cgroups: &str, mounts: &str) -> Option<PathBuf> {
    let mut v1: Option<&str> = None;
    let mut v2: Option<&str> = None;
    for line in cgroups.lines() {
        let mut fields = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) =
            (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        if controllers.split(',').any(|c| c == "pids") {
            v1 = Some(path);
        } else if id == "0" && controllers.is_empty() {
            v2 = Some(path);
        }
    }
    if let Some(path) = v1 {
        return mount_of(mounts, |fs, options| {
            fs == "cgroup" && options.split(',').any(|o| o == "pids")
        })
        .and_then(|(root, point)| under_mount(&root, &point, path));
    }
    let dir = mount_of(mounts, |fs, _| fs == "cgroup2")
        .and_then(|(root, point)| under_mount(&root, &point, v2?))?;
    let enabled = |file: &str| {
        std::fs::read_to_string(dir.join(file))
            .is_ok_and(|text| text.split_whitespace().any(|c| c == "pids"))
    };
    if !enabled("cgroup.controllers") {
        return None;
    }
    // Fails (EBUSY) when versus's cgroup holds processes and is not the root: then there is
    // no place for a limited child.
    if !enabled("cgroup.subtree_control")
        && std::fs::write(dir.join("cgroup.subtree_control"), "+pids").is_err()
    {
        return None;
    }
    Some(dir)
}

/// The mount root and mount point of the first mount whose filesystem type and super options
/// `wanted` accepts.
fn mount_of(mounts: &str, wanted: impl Fn(&str, &str) -> bool) -> Option<(PathBuf, PathBuf)> {
    mounts.lines().find_map(|line| {
        let (before, after) = line.split_once(" - ")?;
        let mut after = after.split(' ');
        let (fs, _source, options) = (after.next()?, after.next()?, after.next()?);
        if !wanted(fs, options) {
            return None;
        }
        let mut before = before.split(' ');
        let root = before.nth(3)?;
        let point = before.next()?;
        Some((unescape(root), unescape(point)))
    })
}

/// The folder of cgroup `path` in a hierarchy whose `root` is mounted at `point`.
fn under_mount(root: &Path, point: &Path, path: &str) -> Option<PathBuf> {
    let rel = Path::new(path).strip_prefix(root).ok()?;
    Some(point.join(rel))
}

/// Undoes mountinfo's octal escapes (`\040` for a space, and tab, newline, backslash).
fn unescape(field: &str) -> PathBuf {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes.get(i + 1..i + 4).and_then(|d| {
            let text = std::str::from_utf8(d).ok()?;
            u8::from_str_radix(text, 8).ok()
        });
        match (bytes[i], octal) {
            (b'\\', Some(byte)) => {
                out.push(byte);
                i += 4;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    PathBuf::from(OsString::from_vec(out))
}

/// Removes left-over cgroups of versus under `parent`: those of dead processes, and this
/// process's own older than [`STALE_AFTER`]. A cgroup with a process in it cannot be removed,
/// so a running command keeps its own.
fn sweep(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    let me = std::process::id();
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some((pid, made)) = name.to_str().and_then(parse_name) else {
            continue;
        };
        let stale = if pid == me {
            now.saturating_sub(made) > STALE_AFTER.as_secs()
        } else {
            process_is_gone(pid)
        };
        if stale {
            let _ = std::fs::remove_dir(entry.path());
        }
    }
}

/// The pid and creation time in a cgroup name `versus-PID-SECS-SEQ`.
fn parse_name(name: &str) -> Option<(u32, u64)> {
    let mut parts = name.strip_prefix(PREFIX)?.split('-');
    let pid = parts.next()?.parse().ok()?;
    let made = parts.next()?.parse().ok()?;
    parts.next()?.parse::<u64>().ok()?;
    Some((pid, made))
}

fn process_is_gone(pid: u32) -> bool {
    let Ok(pid) = i32::try_from(pid) else {
        return false;
    };
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None) == Err(nix::errno::Errno::ESRCH)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    const MOUNTS_V1: &str = "\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";

    #[test]
    fn the_v1_pids_hierarchy_is_found_under_its_mount() {
        let cgroups = "9:name=systemd:/\n8:pids:/ci/job 1\n0::/\n";
        assert_eq!(
            find_pids_parent(cgroups, MOUNTS_V1),
            Some(PathBuf::from("/sys/fs/cgroup/pids/ci/job 1"))
        );
        // A container sees its own cgroup as the mount's root.
        let mounts = "39 31 0:36 /docker/abc /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n";
        assert_eq!(
            find_pids_parent("8:pids:/docker/abc\n", mounts),
            Some(PathBuf::from("/sys/fs/cgroup/pids"))
        );
        // No pids line and no v2 line: nothing.
        assert_eq!(find_pids_parent("4:memory:/\n", MOUNTS_V1), None);
    }

    #[test]
    fn mountinfo_escapes_are_undone() {
        assert_eq!(unescape("/a\\040b\\134c"), PathBuf::from("/a b\\c"));
        assert_eq!(unescape("/plain\\"), PathBuf::from("/plain\\"));
    }

    #[test]
    fn names_carry_pid_and_time() {
        assert_eq!(
            parse_name("versus-12-1700000000-3"),
            Some((12, 1_700_000_000))
        );
        assert_eq!(parse_name("versus-12-x-3"), None);
        assert_eq!(parse_name("other-12-1-3"), None);
    }

    #[test]
    fn a_cgroup_where_one_can_be_made_limits_and_goes_away() {
        let Some(cgroup) = cgroup(7) else {
            return; // Not root, or no writable pids hierarchy here.
        };
        let dir = cgroup.dir().to_path_buf();
        let max = std::fs::read_to_string(dir.join("pids.max")).unwrap();
        assert_eq!(max.trim(), "7");
        let mut cat = std::process::Command::new("cat");
        cat.arg("/proc/self/cgroup");
        let out = cgroup.wrap(&cat).output().unwrap();
        assert!(out.status.success(), "{out:?}");
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let seen = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(seen.contains(&name), "the command is not in {name}: {seen}");
        drop(cgroup);
        assert!(!dir.exists(), "the cgroup was left behind");
    }
}
