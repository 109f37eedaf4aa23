//! Putting one decided path in place in the user's tree: the mode it gets (the executable bit
//! the review showed, nothing else) and the final rename or write.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::OnceLock;

use super::durable::parent_of;
use super::{ApplyError, Result};
use crate::fsutil::atomic_write;
use crate::workspace::ProjectPath;

/// The mode of an existing file of mode `current` after applying a plan's mode `shown` (see
/// `final_mode` in the engine).
pub(super) fn applied_mode(current: u32, shown: Option<u32>) -> u32 {
    let Some(shown) = shown else {
        return current;
    };
    let exec = shown & 0o111 != 0;
    if exec == (current & 0o111 != 0) {
        return current;
    }
    let rw = current & 0o666;
    if exec {
        rw | ((current & 0o444) >> 2)
    } else {
        rw
    }
}

/// The process's umask, from `/proc/self/status` (reading it with `umask(2)` would change it
/// for every thread for a moment); `0o022` where it cannot be read. Read once per process:
/// apply asks for every new file it writes.
pub(super) fn umask() -> u32 {
    static UMASK: OnceLock<u32> = OnceLock::new();
    *UMASK.get_or_init(|| {
        fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|status| {
                status
                    .lines()
                    .find_map(|l| l.strip_prefix("Umask:"))
                    .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
            })
            .unwrap_or(0o022)
            & 0o777
    })
}

/// Puts one user file's new content in place, or deletes it. Staged content (already durable,
/// with its final mode) is renamed over the target; without it (session on another
/// filesystem) the file is written beside its target with temp + fsync + rename and given
/// `mode` if given. The caller flushes the folder afterwards.
pub(super) fn put_in_place(
    path: &ProjectPath,
    staged: Option<&Path>,
    target: Option<&[u8]>,
    mode: Option<u32>,
) -> Result<()> {
    let abs = path.abs();
    match target {
        Some(bytes) => {
            if let Some(staged) = staged {
                let parent = parent_of(abs);
                fs::create_dir_all(&parent).map_err(|e| ApplyError::io("create", &parent, e))?;
                match fs::rename(staged, abs) {
                    Ok(()) => return Ok(()),
                    // Another filesystem after all (a mount inside the project): write it.
                    Err(e) if e.raw_os_error() == Some(nix::libc::EXDEV) => {}
                    Err(e) => return Err(ApplyError::io("write", abs, e)),
                }
            }
            atomic_write(abs, bytes).map_err(|e| ApplyError::io("write", abs, e))?;
            if let Some(m) = mode {
                fs::set_permissions(abs, fs::Permissions::from_mode(m & 0o7777))
                    .map_err(|e| ApplyError::io("set the mode of", abs, e))?;
            }
        }
        None => match fs::remove_file(abs) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(ApplyError::io("remove", abs, e)),
        },
    }
    Ok(())
}
