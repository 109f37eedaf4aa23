//! The in-memory changes of an overlay view, indexed for merging over a disk walk.
//!
//! An overlay workspace keeps a model's writes and deletes in memory instead of on disk
//! ([`PendingChange`]). Listing and search walk the disk, so without this merge a model would
//! not find the file it just wrote and would still find the one it just deleted. The view gives
//! the changes as a list in the order they happened; here the last change to a path wins.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::workspace::{FileView, PendingChange};

/// A model's pending writes and deletes, looked up by `/`-separated path relative to the root.
#[derive(Debug, Default, Clone)]
pub(crate) struct Overlay {
    writes: BTreeMap<String, Arc<Vec<u8>>>,
    deleted: BTreeSet<String>,
}

impl Overlay {
    /// Indexes the view's pending changes (none for a view that writes straight to disk).
    pub(crate) fn from_view(view: &dyn FileView) -> Self {
        Self::from_changes(view.pending())
    }

    /// Indexes a list of changes; a later change to the same path replaces an earlier one.
    pub(crate) fn from_changes(changes: Vec<PendingChange>) -> Self {
        let mut overlay = Self::default();
        for change in changes {
            match change {
                PendingChange::Write { rel, content } => {
                    let rel = normalize(&rel);
                    overlay.deleted.remove(&rel);
                    overlay.writes.insert(rel, content);
                }
                PendingChange::Delete { rel } => {
                    let rel = normalize(&rel);
                    overlay.writes.remove(&rel);
                    overlay.deleted.insert(rel);
                }
            }
        }
        overlay
    }

    /// True when there is nothing to merge, so walkers can skip every per-entry lookup.
    pub(crate) fn is_empty(&self) -> bool {
        self.writes.is_empty() && self.deleted.is_empty()
    }

    /// The in-memory content of `rel`, when the model wrote it.
    pub(crate) fn written(&self, rel: &str) -> Option<&Arc<Vec<u8>>> {
        self.writes.get(rel)
    }

    /// True when the disk entry at `rel` must not be shown: the model deleted it (or a folder
    /// above it) and did not write it again.
    pub(crate) fn hides(&self, rel: &str) -> bool {
        if self.deleted.is_empty() || self.writes.contains_key(rel) {
            return false;
        }
        if self.deleted.contains(rel) {
            return true;
        }
        ancestors(rel).any(|a| self.deleted.contains(a))
    }

    /// True when the overlay's disk state should be replaced for `rel`: hidden or rewritten.
    /// Walkers skip such disk files and take them from [`Overlay::writes_under`] instead.
    pub(crate) fn shadows(&self, rel: &str) -> bool {
        self.writes.contains_key(rel) || self.hides(rel)
    }

    /// Every written file at or below the folder `dir` (`""` for the root), in path order.
    pub(crate) fn writes_under<'a>(
        &'a self,
        dir: &'a str,
    ) -> impl Iterator<Item = (&'a str, &'a Arc<Vec<u8>>)> + 'a {
        self.writes
            .iter()
            .filter(move |(rel, _)| is_under(rel, dir))
            .map(|(rel, content)| (rel.as_str(), content))
    }

    /// True when some written file lies below `dir`, so the folder exists in the view even if
    /// it does not exist on disk.
    pub(crate) fn has_dir(&self, dir: &str) -> bool {
        self.writes
            .keys()
            .any(|rel| rel != dir && is_under(rel, dir))
    }
}

/// True when `rel` is `dir` itself or lies below it (`dir == ""` is the root).
fn is_under(rel: &str, dir: &str) -> bool {
    dir.is_empty()
        || rel == dir
        || (rel.len() > dir.len() && rel.starts_with(dir) && rel.as_bytes()[dir.len()] == b'/')
}

/// The proper ancestors of a relative path, nearest first: `a/b/c` gives `a/b`, `a`.
fn ancestors(rel: &str) -> impl Iterator<Item = &str> {
    let mut rest = rel;
    std::iter::from_fn(move || {
        let cut = rest.rfind('/')?;
        rest = &rest[..cut];
        Some(rest)
    })
}

/// Views give `/`-separated paths; tolerate a leading `./` or a trailing `/` anyway.
fn normalize(rel: &str) -> String {
    rel.trim_start_matches("./")
        .trim_end_matches('/')
        .to_string()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn write(rel: &str, text: &str) -> PendingChange {
        PendingChange::Write {
            rel: rel.to_string(),
            content: Arc::new(text.as_bytes().to_vec()),
        }
    }

    fn delete(rel: &str) -> PendingChange {
        PendingChange::Delete {
            rel: rel.to_string(),
        }
    }

    #[test]
    fn last_change_to_a_path_wins() {
        let o = Overlay::from_changes(vec![write("a.txt", "1"), delete("a.txt")]);
        assert!(o.written("a.txt").is_none());
        assert!(o.hides("a.txt"));
        let o = Overlay::from_changes(vec![delete("a.txt"), write("a.txt", "2")]);
        assert_eq!(o.written("a.txt").unwrap().as_slice(), b"2");
        assert!(!o.hides("a.txt"));
    }

    #[test]
    fn a_deleted_folder_hides_what_is_below_it() {
        let o = Overlay::from_changes(vec![delete("gen"), write("gen/keep.rs", "k")]);
        assert!(o.hides("gen/old.rs"));
        assert!(o.hides("gen/deep/old.rs"));
        assert!(!o.hides("gen/keep.rs"));
        assert!(!o.hides("general.rs"));
        assert!(o.shadows("gen/keep.rs"));
        assert!(!o.shadows("src/main.rs"));
    }

    #[test]
    fn writes_under_a_folder() {
        let o = Overlay::from_changes(vec![
            write("src/a.rs", ""),
            write("src/sub/b.rs", ""),
            write("srcx/c.rs", ""),
            write("top.rs", ""),
        ]);
        let under: Vec<&str> = o.writes_under("src").map(|(r, _)| r).collect();
        assert_eq!(under, ["src/a.rs", "src/sub/b.rs"]);
        assert_eq!(o.writes_under("").count(), 4);
        assert!(o.has_dir("src/sub"));
        assert!(!o.has_dir("src/a.rs"));
        assert!(!o.has_dir("nothing"));
    }

    #[test]
    fn under_is_by_whole_components() {
        assert!(is_under("a/b", "a"));
        assert!(is_under("a", "a"));
        assert!(is_under("x", ""));
        assert!(!is_under("ab", "a"));
        assert!(!is_under("a", "a/b"));
    }
}
