//! `overlay` isolation: the real project tree, with the model's changes held in memory.
//!
//! For trees too big to copy, [`OverlayView`] reads the user's files in place and keeps every
//! write and delete in a map instead of on disk. Reads, metadata and opens look in the map
//! first (a deleted path is `NotFound`); listing and search merge [`FileView::pending`] over
//! their disk walk, and they also work out folders that exist only in memory, so `metadata`
//! of such a folder is `NotFound`, as it would be for any view with pending changes. Nothing is ever written to the project: the map *is* the proposal.
//! (Bash, which cannot see the map, runs in the real tree; the UI marks that as unsafe.)

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Cursor, Read};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use super::path::ProjectPath;
use super::view::{EntryKind, EntryMeta, FileView, PendingChange, WriteOrigin};

/// In-memory content per path: `Some` = written, `None` = deleted.
type Changes = BTreeMap<String, Option<Arc<Vec<u8>>>>;

/// A [`FileView`] over the real tree whose writes never leave memory.
#[derive(Debug)]
pub struct OverlayView {
    root: PathBuf,
    changes: Mutex<Changes>,
}

impl OverlayView {
    /// Opens the project at `root` (canonicalised, like [`super::DirectView`]).
    pub fn new(root: &Path) -> io::Result<Self> {
        let root = root.canonicalize()?;
        if !root.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                format!("{} is not a directory", root.display()),
            ));
        }
        Ok(Self {
            root,
            changes: Mutex::new(BTreeMap::new()),
        })
    }

    fn changes(&self) -> io::Result<MutexGuard<'_, Changes>> {
        self.changes
            .lock()
            .map_err(|_| io::Error::other("the overlay's change map was poisoned by a panic"))
    }

    /// What the overlay holds for `rel`: `Some(Some(bytes))` written, `Some(None)` deleted,
    /// `None` untouched (read the disk).
    fn lookup(&self, rel: &str) -> io::Result<Option<Option<Arc<Vec<u8>>>>> {
        Ok(self.changes()?.get(rel).cloned())
    }
}

fn not_found(path: &ProjectPath) -> io::Error {
    io::Error::new(
        io::ErrorKind::NotFound,
        format!("{} was deleted in this workspace", path.display()),
    )
}

impl FileView for OverlayView {
    fn root(&self) -> &Path {
        &self.root
    }

    fn metadata(&self, path: &ProjectPath) -> io::Result<EntryMeta> {
        match self.lookup(path.rel())? {
            Some(Some(content)) => {
                return Ok(EntryMeta {
                    kind: EntryKind::File,
                    len: content.len() as u64,
                });
            }
            Some(None) => return Err(not_found(path)),
            None => {}
        }
        match fs::metadata(path.abs()) {
            Ok(meta) => Ok(EntryMeta {
                kind: if meta.is_file() {
                    EntryKind::File
                } else if meta.is_dir() {
                    EntryKind::Dir
                } else {
                    EntryKind::Other
                },
                len: meta.len(),
            }),
            Err(e) => Err(e),
        }
    }

    fn open(&self, path: &ProjectPath) -> io::Result<Box<dyn Read + Send>> {
        match self.lookup(path.rel())? {
            Some(Some(content)) => Ok(Box::new(Cursor::new(SharedBytes(content)))),
            Some(None) => Err(not_found(path)),
            None => Ok(Box::new(fs::File::open(path.abs())?)),
        }
    }

    fn write(&self, path: &ProjectPath, content: &[u8], _origin: &WriteOrigin) -> io::Result<()> {
        self.changes()?
            .insert(path.rel().to_string(), Some(Arc::new(content.to_vec())));
        Ok(())
    }

    fn delete(&self, path: &ProjectPath, _origin: &WriteOrigin) -> io::Result<()> {
        let mut changes = self.changes()?;
        let exists = match changes.get(path.rel()) {
            Some(held) => held.is_some(),
            None => fs::symlink_metadata(path.abs()).is_ok_and(|m| !m.is_dir()),
        };
        if !exists {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("{} does not exist", path.display()),
            ));
        }
        changes.insert(path.rel().to_string(), None);
        Ok(())
    }

    fn written_by_model(&self, path: &ProjectPath) -> bool {
        matches!(self.lookup(path.rel()), Ok(Some(Some(_))))
    }

    fn pending(&self) -> Vec<PendingChange> {
        let Ok(changes) = self.changes() else {
            return Vec::new();
        };
        changes
            .iter()
            .map(|(rel, held)| match held {
                Some(content) => PendingChange::Write {
                    rel: rel.clone(),
                    content: Arc::clone(content),
                },
                None => PendingChange::Delete { rel: rel.clone() },
            })
            .collect()
    }
}

/// Lets a `Cursor` read an `Arc<Vec<u8>>` without copying it.
struct SharedBytes(Arc<Vec<u8>>);

impl AsRef<[u8]> for SharedBytes {
    fn as_ref(&self) -> &[u8] {
        self.0.as_slice()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn writes_and_deletes_stay_in_memory() {
        let d = tempfile::tempdir().unwrap();
        fs::write(d.path().join("a.txt"), "disk").unwrap();
        let v = OverlayView::new(d.path()).unwrap();
        let o = WriteOrigin::new("write_file", "c1");
        let a = v.resolve("a.txt").unwrap();
        let n = v.resolve("new/dir/b.txt").unwrap();
        assert!(!v.written_by_model(&a));
        v.write(&a, b"model", &o).unwrap();
        v.write(&n, b"nb", &o).unwrap();
        assert_eq!(v.read(&a).unwrap(), b"model");
        assert!(v.written_by_model(&a));
        assert_eq!(fs::read(d.path().join("a.txt")).unwrap(), b"disk");
        assert!(!d.path().join("new").exists());
        // Folders that exist only in memory are the walkers' business (they merge
        // `pending()`); metadata describes files and what is on disk.
        assert!(v.metadata(&v.resolve("new/dir").unwrap()).is_err());
        assert_eq!(v.metadata(&n).unwrap().len, 2);
        v.delete(&a, &o).unwrap();
        assert_eq!(v.read(&a).unwrap_err().kind(), io::ErrorKind::NotFound);
        assert!(v.metadata(&a).is_err());
        assert!(d.path().join("a.txt").exists());
        assert_eq!(v.pending().len(), 2);
        let missing = v.resolve("missing.txt").unwrap();
        assert!(v.delete(&missing, &o).is_err());
    }
}
