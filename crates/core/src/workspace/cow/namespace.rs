//! The process's own user and mount namespace, where versus may mount overlays.
//!
//! An unprivileged process may mount an overlay only inside a user namespace it owns (Linux
//! 5.11+, `userxattr`). `unshare(CLONE_NEWUSER)` works only while the process has one thread,
//! so the binary calls [`enter`] first thing, before logging or the async runtime start any.
//! The uid and gid map to themselves, so every file versus writes (an apply, a session log)
//! is owned by the user as before; the mounts live and die with the process and are never
//! seen by the user's other programs.
//!
//! Whether it works is asked of a child first ([`PROBE_ENV`]): the child enters a namespace,
//! mounts an overlay over a scratch folder under the workspace parent, writes, deletes and
//! replaces a folder through it, and checks that the sandbox still starts inside. Only when
//! all of that holds does the process enter a namespace of its own; a kernel without
//! unprivileged overlays, a restricted AppArmor policy or a filesystem without user xattrs
//! leaves versus as it was (full checkouts, same safety, slower).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};

use nix::mount::{MntFlags, MsFlags, mount, umount2};
use nix::sched::{CloneFlags, unshare};
use nix::unistd::{getgid, getuid};

/// Set in a child versus to make it the probe: the value is the scratch folder to use.
pub const PROBE_ENV: &str = "VERSUS_INTERNAL_COW_PROBE";

/// Set to `off` (or `0`) to keep full checkouts even where overlays work.
pub const SWITCH_ENV: &str = "VERSUS_COPY_ON_WRITE";

static ENTERED: AtomicBool = AtomicBool::new(false);

/// Why copy-on-write workspaces are off in this process (workspaces are then full checkouts,
/// equally isolated). Said in the log, never an error for the user's command.
#[derive(Debug, thiserror::Error)]
pub enum CowUnavailable {
    /// The user turned them off.
    #[error("{SWITCH_ENV} turns them off")]
    TurnedOff,
    /// The probe could not be started or its folder made.
    #[error("could not {action}: {source}")]
    ProbeSetup {
        /// What was being done.
        action: String,
        /// Why it failed.
        #[source]
        source: io::Error,
    },
    /// The probe ran and said why overlays or the sandbox do not work in a namespace here.
    #[error("{0}")]
    ProbeFailed(String),
    /// Entering the namespace failed after the probe succeeded.
    #[error("could not enter a user namespace: {0}")]
    Namespace(#[source] io::Error),
}

impl CowUnavailable {
    fn setup(action: impl Into<String>) -> impl FnOnce(io::Error) -> Self {
        let action = action.into();
        move |source| Self::ProbeSetup { action, source }
    }
}

/// True once this process runs in its own namespace with working overlays.
pub(crate) fn entered() -> bool {
    ENTERED.load(Ordering::Acquire)
}

/// Puts this (single-threaded) process in a user and mount namespace of its own when the
/// probe says overlays and the sandbox both work there. `Ok` names what happened; `Err` is
/// why copy-on-write workspaces stay off (the process is unchanged then).
pub fn enter(parent: &Path) -> Result<(), CowUnavailable> {
    if matches!(
        std::env::var(SWITCH_ENV).as_deref(),
        Ok("off") | Ok("0") | Ok("false")
    ) {
        return Err(CowUnavailable::TurnedOff);
    }
    if entered() {
        return Ok(());
    }
    probe_in_child(parent)?;
    enter_namespace().map_err(CowUnavailable::Namespace)?;
    ENTERED.store(true, Ordering::Release);
    Ok(())
}

/// Runs this binary as the probe and reads its verdict.
fn probe_in_child(parent: &Path) -> Result<(), CowUnavailable> {
    crate::workspace::parent::prepare(parent)
        .map_err(|e| io::Error::other(e.to_string()))
        .map_err(CowUnavailable::setup(format!(
            "create {}",
            parent.display()
        )))?;
    remove_dead_probes(parent);
    let scratch = parent.join(format!("{PROBE_PREFIX}{}", std::process::id()));
    let _ = remove_scratch(&scratch);
    fs::create_dir(&scratch).map_err(CowUnavailable::setup(format!(
        "create {}",
        scratch.display()
    )))?;
    let exe = std::env::current_exe().map_err(CowUnavailable::setup("find this program"))?;
    let status = Command::new(exe)
        .env(PROBE_ENV, &scratch)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output();
    let _ = remove_scratch(&scratch);
    let output = status.map_err(CowUnavailable::setup("start the probe"))?;
    if output.status.success() {
        return Ok(());
    }
    let said = String::from_utf8_lossy(&output.stderr).trim().to_string();
    Err(CowUnavailable::ProbeFailed(if said.is_empty() {
        format!("the probe failed ({})", output.status)
    } else {
        said
    }))
}

/// Name of a probe's scratch folder under the workspace parent, before the owner's pid.
const PROBE_PREFIX: &str = ".cow-probe-";

/// Removes the scratch folders of probes whose process died before it could (killed in the
/// few milliseconds a probe takes); a live one's is left alone.
fn remove_dead_probes(parent: &Path) {
    let Ok(entries) = fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(PROBE_PREFIX))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if is_dir && super::super::manager::pid_is_dead(pid) {
            let _ = remove_scratch(&entry.path());
        }
    }
}

/// The probe's whole work, in the child: `Ok` when an overlay mounted in a namespace of our
/// own behaves (write, delete, a folder replaced) and the sandbox starts there; the error is
/// what the child prints for the parent.
pub fn probe(scratch: &Path) -> Result<(), CowUnavailable> {
    let layers =
        ProbeLayers::create(scratch).map_err(CowUnavailable::setup("prepare the probe"))?;
    enter_namespace().map_err(CowUnavailable::Namespace)?;
    mount_overlay(
        &[&layers.lower],
        &layers.upper,
        &layers.work,
        &layers.merged,
    )
    .map_err(CowUnavailable::setup("mount an overlay"))?;
    let checked = layers.exercise();
    let _ = unmount(&layers.merged);
    checked.map_err(CowUnavailable::setup("use the overlay"))?;
    let settings = crate::exec::SandboxSettings::default();
    if crate::exec::check_available(&settings).is_err() {
        // Entering would then refuse commands a sandbox outside the namespace might run (a
        // policy that allows bwrap only from the first namespace): stay out instead.
        return Err(CowUnavailable::ProbeFailed(
            "the sandbox does not start inside the namespace".to_string(),
        ));
    }
    Ok(())
}

/// Mounts an overlay of `lowers` (never written; the first one on top) and `upper` (every
/// change) at `target`. Paths holding `,`, `:` or `\` cannot be named in the mount options and
/// are refused.
pub(crate) fn mount_overlay(
    lowers: &[&Path],
    upper: &Path,
    work: &Path,
    target: &Path,
) -> io::Result<()> {
    let text_of = |path: &Path| -> io::Result<String> {
        let Some(text) = path.to_str() else {
            return Err(io::Error::other(format!("{} is not UTF-8", path.display())));
        };
        if text.contains([',', ':', '\\']) {
            return Err(io::Error::other(format!(
                "{} holds a character overlay options cannot carry",
                path.display()
            )));
        }
        Ok(text.to_string())
    };
    let lower = lowers
        .iter()
        .map(|path| text_of(path))
        .collect::<io::Result<Vec<_>>>()?
        .join(":");
    let mut data = format!(
        "lowerdir={lower},upperdir={},workdir={},",
        text_of(upper)?,
        text_of(work)?
    );
    data.push_str("userxattr");
    let mount_with = |options: &str| {
        mount(
            Some("overlay"),
            target,
            Some("overlay"),
            MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
            Some(options),
        )
    };
    // `volatile` (Linux 5.10+): the overlay no longer flushes the upper layer, above all the
    // `fsync` it otherwise pays for every file copied up on its first write (a model's bash
    // appending a line to 1,000 files took 5.5 s, nearly all of it those flushes). The upper
    // layer is a model's scratch space: nothing in it needs to survive a crash (its proposals
    // are recorded in the session, a crashed run's folders are removed, never mounted again),
    // and what reaches the user's files is made durable by the apply engine. Where the kernel
    // does not know the option, the overlay is mounted without it.
    match mount_with(&format!("{data},volatile")) {
        Err(nix::errno::Errno::EINVAL) => mount_with(&data),
        other => other,
    }
    .map_err(io::Error::from)
}

/// Detaches the overlay at `target`; `Ok` when nothing was mounted there.
pub(crate) fn unmount(target: &Path) -> io::Result<()> {
    match umount2(target, MntFlags::MNT_DETACH) {
        Ok(()) | Err(nix::errno::Errno::EINVAL) | Err(nix::errno::Errno::ENOENT) => Ok(()),
        Err(e) => Err(io::Error::from(e)),
    }
}

/// `unshare` a user and mount namespace and map our own uid and gid to themselves.
///
/// Root maps every id to itself instead: capabilities in a user namespace only reach files
/// whose owner is mapped there, so with root alone mapped, root could no longer write a project
/// owned by another user (a CI checkout, say). Only a process outside the new namespace may
/// write such a map, so a small shell started before `unshare` writes it; when that fails the
/// namespace gets the one-id map and the error says why (the probe then keeps versus out).
fn enter_namespace() -> io::Result<()> {
    let uid = getuid();
    let gid = getgid();
    let mut mapper = if uid.is_root() {
        Some(
            Command::new("/bin/sh")
                .arg("-c")
                .arg(
                    "read go && printf '0 0 4294967295\\n' > /proc/$PPID/uid_map && \
                     printf '0 0 4294967295\\n' > /proc/$PPID/gid_map",
                )
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()?,
        )
    } else {
        None
    };
    unshare(CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWNS).map_err(io::Error::from)?;
    if let Some(mapper) = mapper.as_mut() {
        use std::io::Write;
        let told = mapper
            .stdin
            .take()
            .map(|mut stdin| stdin.write_all(b"go\n"))
            .unwrap_or(Ok(()));
        let mapped = told.is_ok() && mapper.wait().is_ok_and(|status| status.success());
        if mapped {
            return Ok(());
        }
    }
    match fs::write("/proc/self/setgroups", "deny") {
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    fs::write("/proc/self/uid_map", format!("{uid} {uid} 1\n"))?;
    fs::write("/proc/self/gid_map", format!("{gid} {gid} 1\n"))?;
    if mapper.is_some() {
        return Err(io::Error::other(
            "root's full id map could not be written, so files of other users would be out of reach",
        ));
    }
    Ok(())
}

/// Removes a probe's scratch folder (its overlay `work/work` has mode 000; the removal opens
/// such folders itself).
pub(crate) fn remove_scratch(folder: &Path) -> io::Result<()> {
    super::super::remove::remove_tree(folder)
}

/// The probe's four folders.
struct ProbeLayers {
    lower: PathBuf,
    upper: PathBuf,
    work: PathBuf,
    merged: PathBuf,
}

impl ProbeLayers {
    fn create(scratch: &Path) -> io::Result<Self> {
        let layers = Self {
            lower: scratch.join("lower"),
            upper: scratch.join("upper"),
            work: scratch.join("work"),
            merged: scratch.join("merged"),
        };
        for dir in [&layers.upper, &layers.work, &layers.merged] {
            fs::create_dir_all(dir)?;
        }
        fs::create_dir_all(layers.lower.join("folder"))?;
        fs::write(layers.lower.join("folder/inside"), b"lower")?;
        fs::write(layers.lower.join("kept"), b"lower")?;
        fs::write(layers.lower.join("gone"), b"lower")?;
        Ok(layers)
    }

    /// What a model's commands do most: change a file, delete one, replace a folder.
    fn exercise(&self) -> io::Result<()> {
        let m = &self.merged;
        fs::write(m.join("kept"), b"upper")?;
        fs::remove_file(m.join("gone"))?;
        fs::remove_dir_all(m.join("folder"))?;
        fs::create_dir(m.join("folder"))?;
        let sound = fs::read(m.join("kept"))? == b"upper"
            && fs::symlink_metadata(m.join("gone")).is_err()
            && fs::symlink_metadata(m.join("folder/inside")).is_err()
            && fs::read(self.lower.join("kept"))? == b"lower"
            && fs::read(self.lower.join("folder/inside"))? == b"lower";
        if sound {
            Ok(())
        } else {
            Err(io::Error::other(
                "a change did not show or reached the lower layer",
            ))
        }
    }
}
