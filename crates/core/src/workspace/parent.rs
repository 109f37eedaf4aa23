//! The folder every workspace lives under: one per user, private, checked before use.
//!
//! Why: workspaces hold a copy of the project (uncommitted work included) and later become
//! proposals the user applies. In a temp folder every local user shares (`/tmp`), a folder
//! named the same for everyone could be made first by another user, who could then read each
//! workspace or plant folders that look like leftovers. So the name carries the user id, the
//! folder is made `0700`, and an existing one is used only when it is a real folder (not a
//! link) owned by this user; one of ours that others may enter is closed to them first.

use std::fs;
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::error::WorkspaceError;

/// The default workspace folder: `<temp>/versus-workspaces-<uid>`.
pub fn default_parent() -> PathBuf {
    std::env::temp_dir().join(format!(
        "versus-workspaces-{}",
        nix::unistd::geteuid().as_raw()
    ))
}

/// Makes `parent` (and the folders above it) if missing, then checks that it is this user's
/// private folder ([`check`]).
pub fn prepare(parent: &Path) -> Result<(), WorkspaceError> {
    if let Some(above) = parent.parent() {
        fs::create_dir_all(above).map_err(|e| WorkspaceError::io("create folder", above, e))?;
    }
    match fs::DirBuilder::new().mode(0o700).create(parent) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(WorkspaceError::io("create folder", parent, e)),
    }
    check(parent)
}

/// `Ok` when `parent` is a real folder owned by this user; if others may enter it, it is
/// made private (`0700`) first. A missing folder is fine (there is nothing in it).
pub fn check(parent: &Path) -> Result<(), WorkspaceError> {
    let meta = match fs::symlink_metadata(parent) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(WorkspaceError::io("inspect", parent, e)),
    };
    let unsafe_parent = |reason: String| WorkspaceError::UnsafeParent {
        path: parent.to_path_buf(),
        reason,
    };
    if meta.file_type().is_symlink() {
        return Err(unsafe_parent("it is a symbolic link".into()));
    }
    if !meta.is_dir() {
        return Err(unsafe_parent("it is not a folder".into()));
    }
    let me = nix::unistd::geteuid().as_raw();
    if meta.uid() != me {
        return Err(unsafe_parent(format!(
            "it belongs to user {}, not to you ({me})",
            meta.uid()
        )));
    }
    if meta.mode() & 0o077 != 0 {
        fs::set_permissions(parent, fs::Permissions::from_mode(0o700))
            .map_err(|e| WorkspaceError::io("make private", parent, e))?;
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_new_parent_is_private_and_an_open_one_of_ours_is_closed() {
        let tmp = tempfile::tempdir().unwrap();
        let parent = tmp.path().join("a/versus-workspaces-x");
        prepare(&parent).unwrap();
        assert_eq!(fs::metadata(&parent).unwrap().mode() & 0o777, 0o700);
        fs::set_permissions(&parent, fs::Permissions::from_mode(0o777)).unwrap();
        prepare(&parent).unwrap();
        assert_eq!(fs::metadata(&parent).unwrap().mode() & 0o777, 0o700);
    }

    #[test]
    fn a_link_or_a_file_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("elsewhere");
        fs::create_dir(&target).unwrap();
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let err = prepare(&link).unwrap_err().to_string();
        assert!(err.contains("symbolic link"), "{err}");
        let file = tmp.path().join("file");
        fs::write(&file, "").unwrap();
        let err = check(&file).unwrap_err().to_string();
        assert!(err.contains("not a folder"), "{err}");
    }

    #[test]
    fn the_default_names_the_user() {
        let name = default_parent();
        let uid = nix::unistd::geteuid().as_raw().to_string();
        assert!(
            name.to_string_lossy().ends_with(&format!("-{uid}")),
            "{name:?}"
        );
    }
}
