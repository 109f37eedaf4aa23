//! Removing a folder whatever a model left in it: [`remove_tree`].
//!
//! `std::fs::remove_dir_all` recurses once per level and works with whole paths: a model that
//! made 20,000 nested folders crashed versus (stack overflow) when its workspace was removed,
//! and every later start crashed the same way in the cleanup of leftovers. This walk keeps its
//! own stack (a name, an identity and the sub-folders still to visit per level, on the heap),
//! holds one folder handle at a time and names every entry relative to it (`openat`,
//! `unlinkat`), so neither the depth nor a path longer than `PATH_MAX` matters. It never
//! follows a symlink (a link is removed as a link), never crosses into another filesystem (a
//! mount left inside stops the removal with an error instead), and makes a folder the model
//! locked (`chmod 000`) removable again before going on. Climbing back up goes through `..`
//! of the current handle, checked against the identity recorded on the way down.

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use nix::dir::{Dir, Type};
use nix::errno::Errno;
use nix::fcntl::{AtFlags, OFlag, openat};
use nix::sys::stat::{FchmodatFlags, Mode, fchmod, fchmodat, fstat, fstatat};
use nix::unistd::{UnlinkatFlags, unlinkat};

/// How often a folder that refilled while it was emptied is emptied again before giving up.
const RETRIES: usize = 3;

/// One folder on the way down.
struct Level {
    /// Its name in the folder above.
    name: OsString,
    /// Device and inode, to check `..` leads back to it.
    id: (u64, u64),
    /// Sub-folders still to empty and remove.
    pending: Vec<OsString>,
}

/// Removes `path` (a real folder; a symlink there is removed as a link) and everything in it,
/// without recursion and without ever following a symlink. `Ok` when nothing was there.
pub(crate) fn remove_tree(path: &Path) -> io::Result<()> {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(io::Error::other("not a removable folder"));
    };
    let parent = if parent.as_os_str().is_empty() {
        Path::new(".")
    } else {
        parent
    };
    let above = open_dir_path(parent)?;
    let st = match fstatat(&above, name, AtFlags::AT_SYMLINK_NOFOLLOW) {
        Ok(st) => st,
        Err(Errno::ENOENT) => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    if !is_dir(st.st_mode) {
        return unlink(&above, name, false);
    }
    let device = st.st_dev;
    for _ in 0..RETRIES {
        empty(&above, name, device)?;
        match unlinkat(&above, name, UnlinkatFlags::RemoveDir) {
            Ok(()) | Err(Errno::ENOENT) => return Ok(()),
            Err(Errno::ENOTEMPTY | Errno::EEXIST) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Err(io::Error::other(
        "the folder kept filling while it was removed",
    ))
}

/// Empties the folder `name` in `above` (which stays), depth first, with an explicit stack.
fn empty(above: &OwnedFd, name: &OsStr, device: u64) -> io::Result<()> {
    let mut current = open_child(above, name)?;
    let id = identity(&current, device)?;
    let pending = clear_files(&current)?;
    let mut levels = vec![Level {
        name: name.to_os_string(),
        id,
        pending,
    }];
    loop {
        let Some(top) = levels.last_mut() else {
            return Ok(());
        };
        if let Some(child) = top.pending.pop() {
            let handle = match open_child(&current, &child) {
                Ok(handle) => handle,
                Err(e) if e.raw_os_error() == Some(Errno::ENOENT as i32) => continue,
                // Replaced by something else than a folder: remove that instead.
                Err(e)
                    if e.raw_os_error() == Some(Errno::ENOTDIR as i32)
                        || e.raw_os_error() == Some(Errno::ELOOP as i32) =>
                {
                    unlink(&current, &child, false)?;
                    continue;
                }
                Err(e) => return Err(e),
            };
            let id = identity(&handle, device)?;
            let pending = clear_files(&handle)?;
            levels.push(Level {
                name: child,
                id,
                pending,
            });
            current = handle;
            continue;
        }
        // Every sub-folder of the current one is gone: climb up and remove it.
        if levels.len() == 1 {
            return Ok(());
        }
        let Some(done) = levels.pop() else {
            return Ok(());
        };
        let up = openat(
            &current,
            "..",
            OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
            Mode::empty(),
        )?;
        let expected = levels.last().map(|l| l.id);
        if Some(identity(&up, device)?) != expected {
            return Err(io::Error::other(
                "a folder was moved while it was being removed",
            ));
        }
        current = up;
        match unlinkat(&current, done.name.as_os_str(), UnlinkatFlags::RemoveDir) {
            Ok(()) | Err(Errno::ENOENT) => {}
            // Something appeared in it meanwhile: empty it again.
            Err(Errno::ENOTEMPTY | Errno::EEXIST) => {
                if let Some(top) = levels.last_mut() {
                    top.pending.push(done.name);
                }
            }
            Err(Errno::EACCES | Errno::EPERM) => {
                make_writable(&current)?;
                unlinkat(&current, done.name.as_os_str(), UnlinkatFlags::RemoveDir)?;
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// Removes every non-folder entry of `dir` and returns the names of its sub-folders.
fn clear_files(dir: &OwnedFd) -> io::Result<Vec<OsString>> {
    let mut listing = Dir::openat(
        dir,
        ".",
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )?;
    let mut folders = Vec::new();
    let mut unlocked = false;
    for entry in listing.iter() {
        let entry = entry?;
        let name = OsStr::from_bytes(entry.file_name().to_bytes());
        if name == "." || name == ".." {
            continue;
        }
        let folder = match entry.file_type() {
            Some(Type::Directory) => true,
            Some(_) => false,
            None => match fstatat(dir, name, AtFlags::AT_SYMLINK_NOFOLLOW) {
                Ok(st) => is_dir(st.st_mode),
                Err(Errno::ENOENT) => continue,
                Err(e) => return Err(e.into()),
            },
        };
        if folder {
            folders.push(name.to_os_string());
            continue;
        }
        match unlinkat(dir, name, UnlinkatFlags::NoRemoveDir) {
            Ok(()) | Err(Errno::ENOENT) => {}
            Err(Errno::EACCES | Errno::EPERM) if !unlocked => {
                make_writable(dir)?;
                unlocked = true;
                unlink(dir, name, false)?;
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(folders)
}

/// Opens the sub-folder `name` of `dir` without following a link; a folder the model made
/// unreadable (`chmod 000`) is given its owner's rights back first.
fn open_child(dir: &OwnedFd, name: &OsStr) -> io::Result<OwnedFd> {
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    match openat(dir, name, flags, Mode::empty()) {
        Ok(fd) => Ok(fd),
        Err(Errno::EACCES | Errno::EPERM) => {
            let st = fstatat(dir, name, AtFlags::AT_SYMLINK_NOFOLLOW)?;
            if !is_dir(st.st_mode) {
                return Err(Errno::ENOTDIR.into());
            }
            fchmodat(
                dir,
                name,
                Mode::from_bits_truncate(0o700),
                FchmodatFlags::FollowSymlink,
            )?;
            Ok(openat(dir, name, flags, Mode::empty())?)
        }
        Err(e) => Err(e.into()),
    }
}

/// Opens a folder by path (the workspace's parent: a short path versus chose).
fn open_dir_path(path: &Path) -> io::Result<OwnedFd> {
    Ok(nix::fcntl::open(
        path,
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )?)
}

/// The device and inode of `fd`, refusing a folder on another device (a mount inside).
fn identity(fd: &OwnedFd, device: u64) -> io::Result<(u64, u64)> {
    let st = fstat(fd)?;
    if st.st_dev != device {
        return Err(io::Error::other(
            "another filesystem is mounted inside; unmount it first",
        ));
    }
    Ok((st.st_dev, st.st_ino))
}

/// Gives the owner of the folder `dir` the right to change it again.
fn make_writable(dir: &OwnedFd) -> io::Result<()> {
    let st = fstat(dir)?;
    let mode = Mode::from_bits_truncate((st.st_mode & 0o7777) | 0o700);
    Ok(fchmod(dir.as_fd(), mode)?)
}

fn unlink(dir: &OwnedFd, name: &OsStr, folder: bool) -> io::Result<()> {
    let flags = if folder {
        UnlinkatFlags::RemoveDir
    } else {
        UnlinkatFlags::NoRemoveDir
    };
    match unlinkat(dir, name, flags) {
        Ok(()) | Err(Errno::ENOENT) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

fn is_dir(mode: nix::libc::mode_t) -> bool {
    (mode & nix::libc::S_IFMT) == nix::libc::S_IFDIR
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::PermissionsExt;

    /// Builds `depth` nested folders named `d` under `top` through handles (the path soon
    /// exceeds PATH_MAX), with a file at the bottom.
    fn nest(top: &Path, depth: usize) {
        let mut dir = open_dir_path(top).unwrap();
        for _ in 0..depth {
            nix::sys::stat::mkdirat(&dir, "d", Mode::from_bits_truncate(0o755)).unwrap();
            dir = open_child(&dir, OsStr::new("d")).unwrap();
        }
        let fd = openat(
            &dir,
            "bottom",
            OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_CLOEXEC,
            Mode::from_bits_truncate(0o644),
        )
        .unwrap();
        drop(fd);
    }

    /// A temporary folder in memory where there is one: removing 20,000 nested folders takes
    /// half a minute on some ext4 disks (`rm -rf` too), a quarter of a second on tmpfs.
    fn fast_tempdir() -> tempfile::TempDir {
        tempfile::tempdir_in("/dev/shm").unwrap_or_else(|_| tempfile::tempdir().unwrap())
    }

    #[test]
    fn removes_a_tree_deeper_than_any_stack_and_longer_than_path_max() {
        let d = fast_tempdir();
        let top = d.path().join("ws");
        fs::create_dir(&top).unwrap();
        nest(&top, 20_000);
        remove_tree(&top).unwrap();
        assert!(!top.exists());
    }

    #[test]
    fn never_follows_links_and_opens_locked_folders() {
        let d = tempfile::tempdir().unwrap();
        let outside = d.path().join("outside");
        fs::create_dir(&outside).unwrap();
        fs::write(outside.join("precious"), "x").unwrap();
        let top = d.path().join("ws");
        fs::create_dir_all(top.join("a/locked/inner")).unwrap();
        fs::write(top.join("a/locked/inner/f"), "x").unwrap();
        fs::write(top.join("a/locked/g"), "x").unwrap();
        std::os::unix::fs::symlink(&outside, top.join("a/link")).unwrap();
        std::os::unix::fs::symlink(&outside, top.join("a/locked/link")).unwrap();
        fs::set_permissions(
            top.join("a/locked/inner"),
            fs::Permissions::from_mode(0o000),
        )
        .unwrap();
        fs::set_permissions(top.join("a/locked"), fs::Permissions::from_mode(0o500)).unwrap();
        remove_tree(&top).unwrap();
        assert!(!top.exists());
        assert!(outside.join("precious").exists());
        // A symlink given as the folder is removed as a link.
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&outside, &link).unwrap();
        remove_tree(&link).unwrap();
        assert!(outside.join("precious").exists() && fs::symlink_metadata(&link).is_err());
        // Nothing there: fine.
        remove_tree(&d.path().join("missing")).unwrap();
    }
}
