//! Filesystem primitives shared by every layer that writes user-visible files.
//!
//! A file is never half-written: content goes to a temporary file in the same directory (so the
//! final rename cannot cross filesystems), is flushed, gets the permissions of the file it
//! replaces, and is then renamed over the target in one atomic step.

use std::fs;
use std::io::{self, Write};
use std::path::Path;

/// Whether a write must reach the disk before it is renamed into place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// fsync before rename: the user's own files, snapshots, journals. Survives a power cut.
    Synced,
    /// No fsync: private scratch trees (model workspaces) that a crash throws away anyway.
    /// Still atomic for every reader; an fsync of a 10 MB file can cost more than the edit.
    Unsynced,
}

/// Writes `content` to `path` atomically (temp file in the same folder, fsync, rename).
///
/// Parent folders are created. An existing file's permission bits are kept, so an executable
/// script stays executable after a model rewrites it.
pub fn atomic_write(path: &Path, content: &[u8]) -> io::Result<()> {
    atomic_write_with(path, content, Durability::Synced)
}

/// [`atomic_write`] with a chosen [`Durability`].
pub fn atomic_write_with(path: &Path, content: &[u8], durability: Durability) -> io::Result<()> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    fs::create_dir_all(parent)?;
    let existing_perms = fs::metadata(path).ok().map(|m| m.permissions());
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".to_string());
    let tmp_path = unique_temp_path(parent, &file_name);
    let result = (|| {
        let mut tmp = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp_path)?;
        tmp.write_all(content)?;
        if durability == Durability::Synced {
            tmp.sync_all()?;
        }
        if let Some(perms) = existing_perms {
            fs::set_permissions(&tmp_path, perms)?;
        }
        fs::rename(&tmp_path, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp_path);
    }
    result
}

fn unique_temp_path(dir: &Path, file_name: &str) -> std::path::PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    dir.join(format!(
        ".{file_name}.versus-tmp-{}-{n}-{nanos}",
        std::process::id()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn replaces_content_and_keeps_mode() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("run.sh");
        fs::write(&p, "old").unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
        atomic_write(&p, b"new").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"new");
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o755
        );
        let leftovers: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temp file left behind");
    }

    #[test]
    fn creates_parent_folders() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a/b/c.txt");
        atomic_write(&p, b"x").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"x");
    }
}
