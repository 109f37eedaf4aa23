//! `copy` isolation: the project's base file set copied into a private folder.
//!
//! The copy takes exactly the paths of the [`Base`] (so ignored build folders such as
//! `target/` or `node_modules/` stay behind and the workspace starts equal to the base),
//! keeping permission bits and copying symlinks as symlinks.
//!
//! Reflinks: the crate forbids `unsafe`, so the FICLONE ioctl is out of reach, and spawning
//! `cp --reflink=auto` would tie us to GNU coreutils. We use [`std::fs::copy`] instead: on Linux
//! it calls `copy_file_range`, which the kernel turns into a reflink (shared extents, no data
//! copied) on btrfs, XFS and other filesystems that support it, and into an in-kernel copy
//! elsewhere; on macOS it uses `fclonefile` (APFS clones). It also copies the permission bits.
//! Files are copied on several threads because small-file copies are latency bound.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;

use super::base::{Base, BaseEntry, BaseKind};
use super::error::WorkspaceError;

/// Copies the files `paths` (relative, `/`-separated, all present in `base`) from `src` to
/// `dst`, replacing whatever is at each destination, or links a donor's copy of the same
/// bytes where `donors` allows it; returns how many were linked. Shared by copy and worktree
/// modes and the layer of the uncommitted state.
pub(crate) fn copy_paths(
    base: &Base,
    src: &Path,
    dst: &Path,
    paths: &[&str],
    donors: Donors<'_>,
) -> Result<usize, WorkspaceError> {
    if paths.is_empty() {
        return Ok(0);
    }
    let threads = thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(4)
        .min(16);
    let chunk = paths.len().div_ceil(threads).max(1);
    let failure: Mutex<Option<WorkspaceError>> = Mutex::new(None);
    let linked = AtomicUsize::new(0);
    thread::scope(|scope| {
        for part in paths.chunks(chunk) {
            let (failure, linked) = (&failure, &linked);
            scope.spawn(move || {
                for rel in part {
                    let entry = base.get(rel);
                    let is_link = entry.map(|e| e.kind) == Some(BaseKind::Symlink);
                    let donor = match (donors, entry) {
                        (Donors::ReadOnly(folders), Some(entry)) if !folders.is_empty() => {
                            Some((folders, entry))
                        }
                        _ => None,
                    };
                    match copy_one(src, dst, rel, is_link, donor) {
                        Ok(Placed::Linked) => {
                            linked.fetch_add(1, Ordering::Relaxed);
                        }
                        Ok(Placed::Copied) => {}
                        Err(err) => {
                            if let Ok(mut slot) = failure.lock() {
                                slot.get_or_insert(err);
                            }
                            return;
                        }
                    }
                }
            });
        }
    });
    match failure.into_inner().ok().flatten() {
        Some(err) => Err(err),
        None => Ok(linked.into_inner()),
    }
}

/// Where [`copy_paths`] may find a file's exact bytes instead of copying them.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Donors<'a> {
    /// Nowhere: every file is copied. The only choice for a tree anything writes into (a
    /// model's workspace): a hard link there would let a write reach the linked file.
    None,
    /// Folders of files named by their blake3 (`Base::content_from`), for a tree nothing
    /// ever writes into (a lower layer of the overlays): a file found there with the
    /// captured hash and mode is hard-linked, not copied.
    ReadOnly(&'a [PathBuf]),
}

/// How [`copy_one`] put a file in place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Placed {
    /// A new file with the source's bytes (or a new symlink).
    Copied,
    /// A hard link to a donor file holding the captured bytes.
    Linked,
}

/// Copies the whole base of `src` into the new folder `dst` (created if missing).
pub(crate) fn copy_tree(base: &Base, src: &Path, dst: &Path) -> Result<(), WorkspaceError> {
    fs::create_dir_all(dst).map_err(|e| WorkspaceError::io("create folder", dst, e))?;
    let paths: Vec<&str> = base.entries().keys().map(String::as_str).collect();
    copy_paths(base, src, dst, &paths, Donors::None).map(|_| ())
}

/// Copies one file or symlink to `dst/rel`, creating parents and replacing an existing
/// destination, without ever writing through a link.
///
/// The destination tree is not the project: in worktree mode it is a checkout of HEAD, and
/// HEAD is whatever the repository committed. A committed `a -> ~/.ssh` while the user's tree
/// holds a real folder `a/` (a type change, or a repository unpacked from an archive with
/// its `.git`) made a plain `create_dir_all` + `copy` of `a/authorized_keys` write into
/// `~/.ssh` on the host. So every folder on the way is opened from the one before with
/// `O_NOFOLLOW`, and one that is a link or a file in the checkout is replaced by a real folder
/// (the base says the user has a folder there); the file itself is created `O_EXCL |
/// O_NOFOLLOW` relative to that folder's handle. The source is opened without following a
/// link or blocking on a fifo, and must be a regular file.
pub(crate) fn copy_one(
    src: &Path,
    dst: &Path,
    rel: &str,
    is_link: bool,
    donor: Option<(&[PathBuf], &BaseEntry)>,
) -> Result<Placed, WorkspaceError> {
    use nix::fcntl::{AtFlags, OFlag, openat};
    use nix::sys::stat::{Mode, fstatat};
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let from = src.join(rel);
    let to = dst.join(rel);
    let io_err = |op: &'static str, path: &Path| {
        let path = path.to_path_buf();
        move |e: io::Error| WorkspaceError::io(op, path, e)
    };
    let (dir, name) = real_folders(dst, rel, true)
        .map_err(io_err("create folder", &to))?
        .ok_or_else(|| WorkspaceError::io("create folder", &to, io::Error::other("no folder")))?;
    match fstatat(&dir, name, AtFlags::AT_SYMLINK_NOFOLLOW) {
        Ok(st) if (st.st_mode & nix::libc::S_IFMT) == nix::libc::S_IFDIR => {
            // Every folder above is a real one just checked: the path names no link.
            super::remove::remove_tree(&to).map_err(io_err("replace folder", &to))?;
        }
        Ok(_) => unlink(&dir, name).map_err(io_err("replace file", &to))?,
        Err(nix::errno::Errno::ENOENT) => {}
        Err(e) => return Err(WorkspaceError::io("inspect", &to, e.into())),
    }
    if is_link {
        let target = fs::read_link(&from).map_err(io_err("read link", &from))?;
        nix::unistd::symlinkat(&target, &dir, name)
            .map_err(|e| WorkspaceError::io("create link", &to, e.into()))?;
        return Ok(Placed::Copied);
    }
    if let Some((folders, entry)) = donor
        && folders
            .iter()
            .any(|folder| link_donor(folder, entry, &dir, name))
    {
        return Ok(Placed::Linked);
    }
    let mut source = fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(&from)
        .map_err(io_err("copy", &from))?;
    let meta = source.metadata().map_err(io_err("copy", &from))?;
    if !meta.is_file() {
        return Err(WorkspaceError::io(
            "copy",
            &from,
            io::Error::other("not a regular file"),
        ));
    }
    let fd = openat(
        &dir,
        name,
        OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::from_bits_truncate(0o600),
    )
    .map_err(|e| WorkspaceError::io("copy to", &to, e.into()))?;
    let mut target = fs::File::from(fd);
    // File to file: `copy_file_range`, so a reflink where the filesystem has them.
    io::copy(&mut source, &mut target).map_err(io_err("copy", &from))?;
    target
        .set_permissions(fs::Permissions::from_mode(
            meta.permissions().mode() & 0o7777,
        ))
        .map_err(io_err("copy to", &to))?;
    Ok(Placed::Copied)
}

/// Hard-links `folder/<entry's hash>` at `name` in `dir` when that file holds exactly the
/// captured bytes with the captured mode; false (nothing made) otherwise, and whenever the
/// link cannot be made (another filesystem, no `/proc`): the caller copies instead.
///
/// The donor is opened without following a link and checked through that handle (a regular
/// file, the captured mode, bytes whose blake3 is the captured hash), and the link is made to
/// that same open file (`/proc/self/fd`), so a name swapped after the check links nothing
/// else.
fn link_donor(folder: &Path, entry: &BaseEntry, dir: &std::os::fd::OwnedFd, name: &str) -> bool {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    if entry.kind != BaseKind::File || !super::content::is_blob_name(&entry.hash) {
        return false;
    }
    let Ok(file) = fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(folder.join(&entry.hash))
    else {
        return false;
    };
    let Ok(meta) = file.metadata() else {
        return false;
    };
    if !meta.is_file() || meta.mode() & 0o7777 != entry.mode {
        return false;
    }
    let mut hasher = blake3::Hasher::new();
    if hasher.update_reader(&file).is_err() || hasher.finalize().to_hex().as_str() != entry.hash {
        return false;
    }
    let held = format!("/proc/self/fd/{}", file.as_raw_fd());
    nix::unistd::linkat(
        nix::fcntl::AT_FDCWD,
        held.as_str(),
        dir,
        name,
        nix::fcntl::AtFlags::AT_SYMLINK_FOLLOW,
    )
    .is_ok()
}

/// Deletes the file `rel` of the checkout at `root` (a path the user deleted), never through
/// a link: when a folder on the way is a link or a file (HEAD has one there), nothing of the
/// checkout lies at that path and nothing is deleted; a folder at the name is left alone.
pub(crate) fn remove_file_beneath(root: &Path, rel: &str) -> Result<(), WorkspaceError> {
    let path = root.join(rel);
    let Some((dir, name)) =
        real_folders(root, rel, false).map_err(|e| WorkspaceError::io("delete", &path, e))?
    else {
        return Ok(());
    };
    match unlink(&dir, name) {
        Ok(()) => Ok(()),
        Err(e)
            if e.kind() == io::ErrorKind::NotFound
                || e.raw_os_error() == Some(nix::libc::EISDIR) =>
        {
            Ok(())
        }
        Err(e) => Err(WorkspaceError::io("delete", path, e)),
    }
}

/// Makes `rel` below `root` a chain of real folders (see [`real_folders`]): where a project
/// lies in a subfolder of its repository, HEAD may hold a link on the way to it.
pub(crate) fn make_real_folder(root: &Path, rel: &str) -> Result<(), WorkspaceError> {
    if rel.split('/').all(str::is_empty) {
        return Ok(());
    }
    let path = root.join(rel);
    let inner = format!("{rel}/-");
    real_folders(root, &inner, true)
        .map_err(|e| WorkspaceError::io("create folder", &path, e))
        .map(|_| ())
}

/// Puts an overlay whiteout (a character device 0/0, which hides the lower layers' entry of
/// that name) at `rel` below `root`, making the folders on the way real ones (see
/// [`real_folders`]). Linux lets any user make one since 5.8; an error means the caller
/// cannot lay deletions as a layer.
pub(crate) fn whiteout_beneath(root: &Path, rel: &str) -> Result<(), WorkspaceError> {
    use nix::sys::stat::{Mode, SFlag, makedev, mknodat};
    let path = root.join(rel);
    let (dir, name) = real_folders(root, rel, true)
        .map_err(|e| WorkspaceError::io("create folder", &path, e))?
        .ok_or_else(|| WorkspaceError::io("create folder", &path, io::Error::other("no folder")))?;
    match mknodat(&dir, name, SFlag::S_IFCHR, Mode::empty(), makedev(0, 0)) {
        Ok(()) | Err(nix::errno::Errno::EEXIST) => Ok(()),
        Err(e) => Err(WorkspaceError::io("hide a deleted file at", path, e.into())),
    }
}

fn unlink(dir: &std::os::fd::OwnedFd, name: &str) -> io::Result<()> {
    nix::unistd::unlinkat(dir, name, nix::unistd::UnlinkatFlags::NoRemoveDir).map_err(Into::into)
}

/// Opens the folders of `rel` below `root` one at a time, each from the one before with
/// `O_NOFOLLOW`, and returns the last one's handle and the final name. With `make`, a missing
/// folder is created and a link or file in the way is replaced by a real folder; without, a
/// missing one or one that is not a real folder gives `None` (nothing lies below it).
fn real_folders<'r>(
    root: &Path,
    rel: &'r str,
    make: bool,
) -> io::Result<Option<(std::os::fd::OwnedFd, &'r str)>> {
    use nix::errno::Errno;
    use nix::fcntl::{OFlag, open, openat};
    use nix::sys::stat::{Mode, mkdirat};
    let flags = OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_RDONLY | OFlag::O_CLOEXEC;
    let mut parts: Vec<&str> = rel.split('/').filter(|p| !p.is_empty()).collect();
    let Some(name) = parts.pop() else {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "empty path"));
    };
    if parts.iter().chain([&name]).any(|p| *p == "." || *p == "..") {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "`.` and `..` are not allowed here",
        ));
    }
    let mut dir = open(root, flags, Mode::empty())?;
    for part in parts {
        let opened = match openat(&dir, part, flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::ENOENT | Errno::ELOOP | Errno::ENOTDIR) if !make => return Ok(None),
            Err(first @ (Errno::ENOENT | Errno::ELOOP | Errno::ENOTDIR)) => {
                if first != Errno::ENOENT {
                    // A link or file of the checkout where the user has a folder. Another
                    // thread may have replaced it already: a folder is never unlinked here.
                    match nix::unistd::unlinkat(&dir, part, nix::unistd::UnlinkatFlags::NoRemoveDir)
                    {
                        Ok(()) | Err(Errno::ENOENT | Errno::EISDIR) => {}
                        Err(e) => return Err(e.into()),
                    }
                }
                match mkdirat(&dir, part, Mode::from_bits_truncate(0o777)) {
                    Ok(()) | Err(Errno::EEXIST) => {}
                    Err(e) => return Err(e.into()),
                }
                openat(&dir, part, flags, Mode::empty())?
            }
            Err(e) => return Err(e.into()),
        };
        dir = opened;
    }
    Ok(Some((dir, name)))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn copy_keeps_modes_links_and_skips_ignored() {
        use std::os::unix::fs::PermissionsExt;
        let src = tempfile::tempdir().unwrap();
        let dst = tempfile::tempdir().unwrap();
        let s = src.path();
        fs::write(s.join(".gitignore"), "target/\n").unwrap();
        fs::create_dir_all(s.join("target")).unwrap();
        fs::write(s.join("target/big"), "x").unwrap();
        fs::create_dir_all(s.join("src")).unwrap();
        fs::write(s.join("src/run.sh"), "#!/bin/sh\necho hi\n").unwrap();
        fs::set_permissions(s.join("src/run.sh"), fs::Permissions::from_mode(0o755)).unwrap();
        std::os::unix::fs::symlink("src/run.sh", s.join("run")).unwrap();
        let base = Base::capture(s).unwrap();
        let out = dst.path().join("tree");
        copy_tree(&base, base.root(), &out).unwrap();
        assert!(!out.join("target").exists());
        let mode = fs::metadata(out.join("src/run.sh"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o755);
        assert_eq!(
            fs::read_link(out.join("run")).unwrap(),
            Path::new("src/run.sh")
        );
        assert!(base.diff_dir(&out).unwrap().is_empty());
    }
}
