//! [`DirectView`]: writes go straight to a directory, atomically.
//!
//! This is what `versus tool --dir DIR` uses, and what a per-model workspace copy uses
//! underneath: the directory *is* the model's private tree.

use std::collections::HashSet;
use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::path::ProjectPath;
use super::view::{EntryKind, EntryMeta, FileView, WriteOrigin};
use crate::fsutil::{Durability, remove_beneath, write_beneath};

/// A [`FileView`] backed directly by a directory on disk.
#[derive(Debug)]
pub struct DirectView {
    root: PathBuf,
    durability: Durability,
    written: Mutex<HashSet<String>>,
}

impl DirectView {
    /// Opens `root` (canonicalised, so symlink checks compare like with like). Writes are
    /// synced to disk: this is the view for a directory the user owns.
    pub fn new(root: &Path) -> io::Result<Self> {
        Self::with_durability(root, Durability::Synced)
    }

    /// A view of a private scratch tree (a model's workspace copy): writes skip fsync, since a
    /// crash discards the workspace anyway, and overwrite files in place
    /// ([`Durability::Scratch`]: only the model's own tools write there, one call at a time).
    pub fn scratch(root: &Path) -> io::Result<Self> {
        Self::with_durability(root, Durability::Scratch)
    }

    fn with_durability(root: &Path, durability: Durability) -> io::Result<Self> {
        let root = root.canonicalize()?;
        if !root.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                format!("{} is not a directory", root.display()),
            ));
        }
        Ok(Self {
            root,
            durability,
            written: Mutex::new(HashSet::new()),
        })
    }

    fn remember(&self, path: &ProjectPath, written: bool) {
        if let Ok(mut set) = self.written.lock() {
            if written {
                set.insert(path.rel().to_string());
            } else {
                set.remove(path.rel());
            }
        }
    }
}

impl FileView for DirectView {
    fn root(&self) -> &Path {
        &self.root
    }

    fn metadata(&self, path: &ProjectPath) -> io::Result<EntryMeta> {
        let meta = fs::metadata(path.abs())?;
        let kind = if meta.is_file() {
            EntryKind::File
        } else if meta.is_dir() {
            EntryKind::Dir
        } else {
            EntryKind::Other
        };
        Ok(EntryMeta {
            kind,
            len: meta.len(),
        })
    }

    fn open(&self, path: &ProjectPath) -> io::Result<Box<dyn Read + Send>> {
        Ok(Box::new(fs::File::open(path.abs())?))
    }

    /// Race-free ([`write_beneath`]): a folder on the way swapped for a symlink after the path
    /// was resolved cannot send the bytes outside the root.
    fn write(&self, path: &ProjectPath, content: &[u8], _origin: &WriteOrigin) -> io::Result<()> {
        write_beneath(&self.root, path.rel(), content, self.durability)?;
        self.remember(path, true);
        Ok(())
    }

    fn delete(&self, path: &ProjectPath, _origin: &WriteOrigin) -> io::Result<()> {
        remove_beneath(&self.root, path.rel())?;
        self.remember(path, false);
        Ok(())
    }

    fn written_by_model(&self, path: &ProjectPath) -> bool {
        self.written
            .lock()
            .map(|s| s.contains(path.rel()))
            .unwrap_or(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_read_delete_roundtrip() {
        let d = tempfile::tempdir().unwrap();
        let v = DirectView::new(d.path()).unwrap();
        let p = v.resolve("a/b.txt").unwrap();
        let o = WriteOrigin::new("write_file", "c1");
        assert!(!v.written_by_model(&p));
        v.write(&p, b"hi", &o).unwrap();
        assert!(v.written_by_model(&p));
        assert_eq!(v.read(&p).unwrap(), b"hi");
        assert_eq!(v.metadata(&p).unwrap().kind, EntryKind::File);
        v.delete(&p, &o).unwrap();
        assert!(v.metadata(&p).is_err());
        assert!(!v.written_by_model(&p));
    }
}
