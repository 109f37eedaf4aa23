//! Writing a checked plan through the view, undoing it if the disk fails half-way.
//!
//! Planning already proved every hunk applies, so the only failures left are I/O errors (disk
//! full, permissions). Each write is atomic on its own; across files we keep the in-memory
//! originals and, on the first failure, put back every path already changed (best effort),
//! newest first. Writes go before deletes so a crash never loses content that exists only in
//! memory; writes below a path that is deleted (a file becoming a folder) wait for the deletes.

use super::plan::Change;
use crate::workspace::{FileView, WriteOrigin};

/// A failed commit, worded for the model: what failed and what state the files are in.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub(crate) struct CommitError {
    /// What the model reads.
    pub message: String,
}

/// Writes and deletes `changes` through `view`; on an I/O error restores what was done.
pub(crate) fn commit(
    view: &dyn FileView,
    changes: &[Change],
    origin: &WriteOrigin,
) -> Result<(), CommitError> {
    let deleted: Vec<&str> = changes
        .iter()
        .filter(|c| c.new.is_none())
        .map(|c| c.path.rel())
        .collect();
    let below_deleted = |c: &Change| {
        deleted.iter().any(|d| {
            c.path
                .rel()
                .strip_prefix(d)
                .is_some_and(|r| r.starts_with('/'))
        })
    };
    let mut order: Vec<&Change> = Vec::with_capacity(changes.len());
    order.extend(
        changes
            .iter()
            .filter(|c| c.new.is_some() && !below_deleted(c)),
    );
    order.extend(changes.iter().filter(|c| c.new.is_none()));
    order.extend(
        changes
            .iter()
            .filter(|c| c.new.is_some() && below_deleted(c)),
    );

    let mut done: Vec<&Change> = Vec::with_capacity(order.len());
    for change in order {
        let result = match &change.new {
            Some(bytes) => view.write(&change.path, bytes, origin),
            None => view.delete(&change.path, origin),
        };
        if let Err(e) = result {
            let op = if change.new.is_some() {
                "writing"
            } else {
                "deleting"
            };
            let mut message = format!("apply_patch failed while {op} {}: {e}.", change.path);
            message.push_str(&rollback(view, &done, origin));
            return Err(CommitError { message });
        }
        done.push(change);
    }
    Ok(())
}

/// Puts back every change in `done`, newest first; says what state the files are in.
fn rollback(view: &dyn FileView, done: &[&Change], origin: &WriteOrigin) -> String {
    if done.is_empty() {
        return " Nothing was changed.".to_string();
    }
    let mut restored = Vec::new();
    let mut failed = Vec::new();
    for change in done.iter().rev() {
        let result = match &change.original {
            Some(bytes) => view.write(&change.path, bytes, origin),
            None => view.delete(&change.path, origin),
        };
        match result {
            Ok(()) => restored.push(change.path.display().to_string()),
            Err(e) => failed.push(format!("{} ({e})", change.path)),
        }
    }
    restored.reverse();
    failed.reverse();
    if failed.is_empty() {
        format!(
            " The files already changed were restored ({}); nothing was changed. Fix the cause \
             and send the patch again.",
            restored.join(", ")
        )
    } else {
        let mut text = format!(
            " Restoring failed for {}: these files may hold the patch's version; read them \
             before trying again.",
            failed.join(", ")
        );
        if !restored.is_empty() {
            text.push_str(&format!(" Restored: {}.", restored.join(", ")));
        }
        text
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::io::{self, Read};
    use std::path::Path;
    use std::sync::Mutex;

    use super::*;
    use crate::workspace::{DirectView, EntryMeta, ProjectPath};

    /// A directory view whose writes under one prefix fail, and that logs every operation.
    struct Flaky {
        inner: DirectView,
        fail_write: String,
        log: Mutex<Vec<String>>,
    }

    impl FileView for Flaky {
        fn root(&self) -> &Path {
            self.inner.root()
        }
        fn metadata(&self, path: &ProjectPath) -> io::Result<EntryMeta> {
            self.inner.metadata(path)
        }
        fn open(&self, path: &ProjectPath) -> io::Result<Box<dyn Read + Send>> {
            self.inner.open(path)
        }
        fn write(
            &self,
            path: &ProjectPath,
            content: &[u8],
            origin: &WriteOrigin,
        ) -> io::Result<()> {
            self.log
                .lock()
                .unwrap()
                .push(format!("write {}", path.rel()));
            if path.rel().starts_with(&self.fail_write) {
                return Err(io::Error::other("disk full"));
            }
            self.inner.write(path, content, origin)
        }
        fn delete(&self, path: &ProjectPath, origin: &WriteOrigin) -> io::Result<()> {
            self.log
                .lock()
                .unwrap()
                .push(format!("delete {}", path.rel()));
            self.inner.delete(path, origin)
        }
        fn written_by_model(&self, path: &ProjectPath) -> bool {
            self.inner.written_by_model(path)
        }
    }

    fn change(view: &dyn FileView, rel: &str, original: Option<&str>, new: Option<&str>) -> Change {
        Change {
            path: view.resolve(rel).unwrap(),
            original: original.map(|s| s.as_bytes().to_vec()),
            new: new.map(|s| s.as_bytes().to_vec()),
        }
    }

    #[test]
    fn a_failed_write_restores_everything_already_done() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "a old\n").unwrap();
        std::fs::write(dir.path().join("gone.txt"), "keep me\n").unwrap();
        let view = Flaky {
            inner: DirectView::new(dir.path()).unwrap(),
            fail_write: "z.txt".into(),
            log: Mutex::new(Vec::new()),
        };
        let changes = vec![
            change(&view, "a.txt", Some("a old\n"), Some("a new\n")),
            change(&view, "new/b.txt", None, Some("b\n")),
            change(&view, "gone.txt", Some("keep me\n"), None),
            change(&view, "z.txt", None, Some("z\n")),
        ];
        let err = commit(&view, &changes, &WriteOrigin::new("apply_patch", "c1")).unwrap_err();
        assert!(
            err.message
                .contains("failed while writing z.txt: disk full"),
            "{}",
            err.message
        );
        assert!(
            err.message.contains("restored (a.txt, new/b.txt)"),
            "{}",
            err.message
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
            "a old\n"
        );
        assert!(!dir.path().join("new/b.txt").exists());
        assert_eq!(
            std::fs::read_to_string(dir.path().join("gone.txt")).unwrap(),
            "keep me\n"
        );
        // Writes ran before the delete, so the delete never happened.
        assert!(
            !view
                .log
                .lock()
                .unwrap()
                .iter()
                .any(|l| l == "delete gone.txt")
        );
    }

    #[test]
    fn a_failed_restore_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "old\n").unwrap();
        let view = Flaky {
            inner: DirectView::new(dir.path()).unwrap(),
            fail_write: "a.txt".into(),
            log: Mutex::new(Vec::new()),
        };
        // Deleting `a.txt` succeeds, the write below it fails, restoring `a.txt` fails too.
        let changes = vec![
            change(&view, "a.txt", Some("old\n"), None),
            change(&view, "b.txt", None, Some("b\n")),
            change(&view, "a.txt/c", None, Some("c\n")),
        ];
        let err = commit(&view, &changes, &WriteOrigin::new("apply_patch", "")).unwrap_err();
        assert!(
            err.message
                .contains("Restoring failed for a.txt (disk full)"),
            "{}",
            err.message
        );
        assert!(err.message.contains("Restored: b.txt."), "{}", err.message);
        let log = view.log.lock().unwrap().clone();
        assert_eq!(
            log,
            vec![
                "write b.txt",
                "delete a.txt",
                "write a.txt/c",
                "write a.txt",
                "delete b.txt"
            ]
        );
    }

    #[test]
    fn deletes_precede_writes_below_them() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a"), "file\n").unwrap();
        let view = DirectView::new(dir.path()).unwrap();
        let changes = vec![
            change(&view, "a/b", None, Some("now a folder\n")),
            change(&view, "a", Some("file\n"), None),
        ];
        commit(&view, &changes, &WriteOrigin::new("apply_patch", "")).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a/b")).unwrap(),
            "now a folder\n"
        );
    }
}
