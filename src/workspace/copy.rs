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
use std::path::Path;
use std::sync::Mutex;
use std::thread;

use super::base::{Base, BaseKind};
use super::error::WorkspaceError;

/// Copies the files `paths` (relative, `/`-separated, all present in `base`) from `src` to
/// `dst`, replacing whatever is at each destination. Shared by copy and worktree modes.
pub(crate) fn copy_paths(
    base: &Base,
    src: &Path,
    dst: &Path,
    paths: &[&str],
) -> Result<(), WorkspaceError> {
    if paths.is_empty() {
        return Ok(());
    }
    let threads = thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(4)
        .min(16);
    let chunk = paths.len().div_ceil(threads).max(1);
    let failure: Mutex<Option<WorkspaceError>> = Mutex::new(None);
    thread::scope(|scope| {
        for part in paths.chunks(chunk) {
            let failure = &failure;
            scope.spawn(move || {
                for rel in part {
                    let is_link = base.get(rel).map(|e| e.kind) == Some(BaseKind::Symlink);
                    if let Err(err) = copy_one(&src.join(rel), &dst.join(rel), is_link) {
                        if let Ok(mut slot) = failure.lock() {
                            slot.get_or_insert(err);
                        }
                        return;
                    }
                }
            });
        }
    });
    match failure.into_inner().ok().flatten() {
        Some(err) => Err(err),
        None => Ok(()),
    }
}

/// Copies the whole base of `src` into the new folder `dst` (created if missing).
pub(crate) fn copy_tree(base: &Base, src: &Path, dst: &Path) -> Result<(), WorkspaceError> {
    fs::create_dir_all(dst).map_err(|e| WorkspaceError::io("create folder", dst, e))?;
    let paths: Vec<&str> = base.entries().keys().map(String::as_str).collect();
    copy_paths(base, src, dst, &paths)
}

/// Copies one file or symlink, creating parents and replacing an existing destination.
fn copy_one(from: &Path, to: &Path, is_link: bool) -> Result<(), WorkspaceError> {
    if let Some(parent) = to.parent() {
        fs::create_dir_all(parent).map_err(|e| WorkspaceError::io("create folder", parent, e))?;
    }
    match fs::symlink_metadata(to) {
        Ok(meta) if meta.is_dir() => super::remove::remove_tree(to)
            .map_err(|e| WorkspaceError::io("replace folder", to, e))?,
        Ok(_) => fs::remove_file(to).map_err(|e| WorkspaceError::io("replace file", to, e))?,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(WorkspaceError::io("inspect", to, e)),
    }
    if is_link {
        let target = fs::read_link(from).map_err(|e| WorkspaceError::io("read link", from, e))?;
        make_symlink(&target, to).map_err(|e| WorkspaceError::io("create link", to, e))?;
    } else {
        fs::copy(from, to).map_err(|e| WorkspaceError::io("copy", from, e))?;
    }
    Ok(())
}

#[cfg(unix)]
fn make_symlink(target: &Path, link: &Path) -> io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

#[cfg(not(unix))]
fn make_symlink(target: &Path, link: &Path) -> io::Result<()> {
    // Without unix symlinks, keep the content the link pointed at.
    let resolved = link.parent().map(|p| p.join(target)).unwrap_or_default();
    fs::copy(resolved, link).map(|_| ())
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
