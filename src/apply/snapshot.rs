//! Pre-apply snapshots: what every path looked like before an apply touched it.
//!
//! Layout: `<session>/snapshots/<apply-id>/manifest.json` plus `objects/<blake3>` holding each
//! distinct old content once. The manifest also records what the apply is about to write (its
//! hash), so rewind can tell a file edited after the apply from one still as the apply left it,
//! and the folders the apply will create, so rewind can remove them again when empty. Everything
//! is fsynced (files and folders) before the journal's `begin` record is written.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::{ApplyError, Result, content_hash};
use crate::fsutil::{Durability, atomic_write, atomic_write_with};
use crate::workspace::ProjectPath;

/// Name of the snapshots folder inside a session folder.
pub const SNAPSHOTS_DIR: &str = "snapshots";

/// The state of one path before the apply, and what the apply writes there.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SnapshotEntry {
    /// Relative `/` path.
    pub path: String,
    /// Content before the apply (`None`: the file did not exist).
    pub before: Option<StoredFile>,
    /// Hash of the content the apply writes (`None`: the apply deletes the file).
    pub after: Option<String>,
}

/// A stored old file: its blob and permission bits.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StoredFile {
    /// blake3 hex of the content; names the blob under `objects/`.
    pub hash: String,
    /// Permission bits (`mode & 0o7777`).
    pub mode: u32,
}

/// Everything needed to undo one apply.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Manifest {
    /// The apply this snapshot belongs to (also the snapshot id).
    pub apply_id: String,
    /// One entry per path the apply changes.
    pub entries: Vec<SnapshotEntry>,
    /// Folders (relative) that did not exist and that the apply creates, deepest first.
    pub created_dirs: Vec<String>,
}

/// A path about to change: its current bytes (if any) and the apply's new content.
#[derive(Debug, Clone)]
pub struct PendingChange<'a> {
    /// Resolved path.
    pub path: &'a ProjectPath,
    /// Current content and mode (`None`: does not exist).
    pub current: Option<(&'a [u8], u32)>,
    /// New content (`None`: delete).
    pub new: Option<&'a [u8]>,
}

/// Folder of one snapshot.
pub fn snapshot_dir(session: &Path, apply_id: &str) -> PathBuf {
    session.join(SNAPSHOTS_DIR).join(apply_id)
}

/// Stores the snapshot of `changes` durably and returns its manifest.
pub fn create(
    root: &Path,
    session: &Path,
    apply_id: &str,
    changes: &[PendingChange<'_>],
) -> Result<Manifest> {
    let dir = snapshot_dir(session, apply_id);
    let objects = dir.join("objects");
    fs::create_dir_all(&objects).map_err(|e| ApplyError::io("create", &objects, e))?;
    let mut entries = Vec::with_capacity(changes.len());
    let mut created_dirs: Vec<String> = Vec::new();
    for c in changes {
        let before = match c.current {
            Some((bytes, mode)) => {
                let hash = content_hash(bytes);
                let blob = objects.join(&hash);
                if !blob.exists() {
                    // One filesystem sync below makes every blob durable at once: a thousand
                    // per-file fsyncs were most of the cost of a large apply.
                    atomic_write_with(&blob, bytes, Durability::Unsynced)
                        .map_err(|e| ApplyError::io("write", &blob, e))?;
                }
                Some(StoredFile { hash, mode })
            }
            None => None,
        };
        if c.new.is_some() {
            missing_parents(root, c.path.rel(), &mut created_dirs);
        }
        entries.push(SnapshotEntry {
            path: c.path.rel().to_string(),
            before,
            after: c.new.map(content_hash),
        });
    }
    sync_blobs(&objects)?;
    created_dirs.sort_by_key(|d| std::cmp::Reverse(d.matches('/').count()));
    let manifest = Manifest {
        apply_id: apply_id.to_string(),
        entries,
        created_dirs,
    };
    let json = serde_json::to_vec_pretty(&manifest).map_err(|e| ApplyError::Snapshot {
        apply_id: apply_id.to_string(),
        why: format!("cannot encode the manifest: {e}"),
    })?;
    let path = dir.join("manifest.json");
    atomic_write(&path, &json).map_err(|e| ApplyError::io("write", &path, e))?;
    sync_dir(&objects)?;
    sync_dir(&dir)?;
    sync_dir(&session.join(SNAPSHOTS_DIR))?;
    Ok(manifest)
}

/// Reads a snapshot's manifest back from disk.
pub fn load(session: &Path, apply_id: &str) -> Result<Manifest> {
    let path = snapshot_dir(session, apply_id).join("manifest.json");
    let bytes = fs::read(&path).map_err(|e| ApplyError::Snapshot {
        apply_id: apply_id.to_string(),
        why: format!("cannot read {}: {e}", path.display()),
    })?;
    serde_json::from_slice(&bytes).map_err(|e| ApplyError::Snapshot {
        apply_id: apply_id.to_string(),
        why: format!("manifest does not parse: {e}"),
    })
}

/// Reads a stored blob, checking it still hashes to its name.
pub fn blob(session: &Path, apply_id: &str, hash: &str) -> Result<Vec<u8>> {
    let path = snapshot_dir(session, apply_id).join("objects").join(hash);
    let bytes = fs::read(&path).map_err(|e| ApplyError::Snapshot {
        apply_id: apply_id.to_string(),
        why: format!("cannot read blob {hash}: {e}"),
    })?;
    if content_hash(&bytes) != hash {
        return Err(ApplyError::Snapshot {
            apply_id: apply_id.to_string(),
            why: format!("blob {hash} no longer matches its hash"),
        });
    }
    Ok(bytes)
}

/// Reads a regular file's bytes and permission bits; `None` when nothing is there. Symlinks
/// and folders are refused: the engine only snapshots and replaces regular files.
pub fn read_current(path: &ProjectPath) -> Result<Option<(Vec<u8>, u32)>> {
    let abs = path.abs();
    let meta = match fs::symlink_metadata(abs) {
        Ok(m) => m,
        Err(e) if is_absent(&e) => return Ok(None),
        Err(e) => return Err(ApplyError::io("inspect", abs, e)),
    };
    if !meta.is_file() {
        return Err(ApplyError::NotAFile {
            path: path.rel().to_string(),
        });
    }
    let bytes = fs::read(abs).map_err(|e| ApplyError::io("read", abs, e))?;
    Ok(Some((bytes, meta.permissions().mode() & 0o7777)))
}

/// Puts one entry back exactly: old bytes and mode, or no file at all.
pub fn restore_entry(root: &Path, session: &Path, apply_id: &str, e: &SnapshotEntry) -> Result<()> {
    let path = ProjectPath::resolve(root, &e.path)?;
    let abs = path.abs();
    match &e.before {
        Some(stored) => {
            let bytes = blob(session, apply_id, &stored.hash)?;
            if let Ok(meta) = fs::symlink_metadata(abs)
                && !meta.is_file()
            {
                return Err(ApplyError::NotAFile {
                    path: e.path.clone(),
                });
            }
            atomic_write(abs, &bytes).map_err(|err| ApplyError::io("write", abs, err))?;
            fs::set_permissions(abs, fs::Permissions::from_mode(stored.mode))
                .map_err(|err| ApplyError::io("set the mode of", abs, err))?;
        }
        None => match fs::remove_file(abs) {
            Ok(()) => {}
            Err(err) if is_absent(&err) => {}
            Err(err) => return Err(ApplyError::io("remove", abs, err)),
        },
    }
    Ok(())
}

/// Removes the temporary files a killed apply left next to the paths it was writing
/// (`.NAME.versus-tmp-...`, see [`crate::fsutil::is_temp_for`]). Only names of this exact
/// shape beside a path of the manifest are touched; the project lock guarantees no other
/// versus is writing them.
pub fn remove_temp_debris(root: &Path, manifest: &Manifest) {
    for entry in &manifest.entries {
        let path = root.join(&entry.path);
        let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
            continue;
        };
        let name = name.to_string_lossy();
        let Ok(listing) = fs::read_dir(dir) else {
            continue;
        };
        for found in listing.flatten() {
            let candidate = found.file_name();
            if crate::fsutil::is_temp_for(&name, &candidate.to_string_lossy())
                && found.file_type().is_ok_and(|t| t.is_file())
            {
                let _ = fs::remove_file(found.path());
            }
        }
    }
}

/// Removes the folders an apply created, deepest first, keeping any that are not empty.
pub fn remove_created_dirs(root: &Path, manifest: &Manifest) {
    for d in &manifest.created_dirs {
        // A folder still holding files (the user's, or restored ones) is kept on purpose.
        let _ = fs::remove_dir(root.join(d));
    }
}

/// Adds every not-yet-existing parent folder of `rel` to `out` (deduplicated).
fn missing_parents(root: &Path, rel: &str, out: &mut Vec<String>) {
    let mut parts: Vec<&str> = rel.split('/').collect();
    parts.pop();
    for i in 1..=parts.len() {
        let dir = parts[..i].join("/");
        if !root.join(&dir).exists() && !out.contains(&dir) {
            out.push(dir);
        }
    }
}

/// True when an error means "nothing there": missing, or a parent is now a file.
fn is_absent(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
    )
}

/// Makes every blob written unsynced in `objects` durable: one `syncfs` of the filesystem
/// holding them on Linux, an fsync per blob elsewhere.
fn sync_blobs(objects: &Path) -> Result<()> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        let dir = fs::File::open(objects).map_err(|e| ApplyError::io("open", objects, e))?;
        nix::unistd::syncfs(&dir)
            .map_err(|e| ApplyError::io("sync", objects, std::io::Error::from(e)))
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let entries = fs::read_dir(objects).map_err(|e| ApplyError::io("list", objects, e))?;
        for entry in entries.flatten() {
            fs::File::open(entry.path())
                .and_then(|f| f.sync_all())
                .map_err(|e| ApplyError::io("sync", entry.path(), e))?;
        }
        Ok(())
    }
}

/// fsyncs a folder so the names created inside it survive a power cut.
fn sync_dir(dir: &Path) -> Result<()> {
    fs::File::open(dir)
        .and_then(|f| f.sync_all())
        .map_err(|e| ApplyError::io("sync", dir, e))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn stores_blobs_modes_and_missing_parents() {
        let root = tempfile::tempdir().unwrap();
        let session = tempfile::tempdir().unwrap();
        let root_path = root.path().canonicalize().unwrap();
        fs::write(root_path.join("a.sh"), "old").unwrap();
        let a = ProjectPath::resolve(&root_path, "a.sh").unwrap();
        let n = ProjectPath::resolve(&root_path, "x/y/new.txt").unwrap();
        let changes = [
            PendingChange {
                path: &a,
                current: Some((b"old", 0o755)),
                new: Some(b"new"),
            },
            PendingChange {
                path: &n,
                current: None,
                new: Some(b"n"),
            },
        ];
        let m = create(&root_path, session.path(), "id1", &changes).unwrap();
        assert_eq!(m.created_dirs, vec!["x/y".to_string(), "x".to_string()]);
        let loaded = load(session.path(), "id1").unwrap();
        assert_eq!(loaded, m);
        let stored = loaded.entries[0].before.clone().unwrap();
        assert_eq!(stored.mode, 0o755);
        assert_eq!(blob(session.path(), "id1", &stored.hash).unwrap(), b"old");
        assert_eq!(loaded.entries[1].before, None);
    }
}
