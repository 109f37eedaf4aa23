//! The user's uncommitted state as a thin layer over a kept checkout of the commit.
//!
//! A kept checkout keyed by every captured entry served a later turn only when nothing had
//! changed: one edit by the user, or a pick just applied, and the next turn wrote a whole new
//! checkout (1.5 s on a 10,000-file repository, 5 s on a busy machine) before a model could
//! start. Now the kept checkout holds the commit alone (keyed by the repository and the
//! commit, see `cache`), with the entries a scan found in it ([`Files`]), and each state gets a
//! layer of its own holding exactly what differs from it:
//!
//! - every file of the base whose entry (hash, mode, kind) is not the checkout's, copied from
//!   the user's tree (what a full checkout lays on top too);
//! - a whiteout (the overlay's mark of a deleted name) for every file of the checkout the
//!   base lacks, and for every file the commit tracks but the ignore rules hide that the user
//!   no longer has as committed (as the old fill deleted what `git status` listed).
//!
//! The layer sits between the checkout and each model's upper layer, so every model sees the
//! checkout's files overridden by the layer's, which is the base, file for file: a state that
//! differs from the commit by a few files costs those few files. The layer is a workspace
//! folder of this process (marker first), shared by the models of one base and removed when
//! the last of them lets it go, or by the next run's cleanup after a crash.

use std::path::{Path, PathBuf};

use super::cache::Files;
use crate::workspace::base::{Base, entry_of};
use crate::workspace::copy::{Donors, copy_paths, make_real_folder, whiteout_beneath};
use crate::workspace::error::WorkspaceError;
use crate::workspace::manager::{Owned, new_folder};

/// A laid layer: its folder (removed on drop) and the tree the overlay stacks.
#[derive(Debug)]
pub(crate) struct Layer {
    _owned: Owned,
    tree: PathBuf,
}

impl Layer {
    /// The folder to stack above the checkout (the repository's root, like the checkout's).
    pub(crate) fn tree(&self) -> &Path {
        &self.tree
    }
}

/// What the layer of `base` over a checkout holding `files` must hold: the base's paths to
/// copy and the checkout's paths to hide, each sorted.
pub(crate) fn plan<'b>(base: &'b Base, files: &'b Files) -> (Vec<&'b str>, Vec<&'b str>) {
    let copies: Vec<&str> = base
        .entries()
        .iter()
        .filter(|(path, entry)| files.entries.get(*path) != Some(entry))
        .map(|(path, _)| path.as_str())
        .collect();
    let mut hide: Vec<&str> = files
        .entries
        .keys()
        .filter(|path| !base.contains(path))
        .map(String::as_str)
        .collect();
    for (path, committed) in &files.ignored {
        if base.contains(path) {
            continue; // the user's rules take it now: copied above when it differs
        }
        let same = entry_of(&base.root().join(path)).is_ok_and(|now| now == *committed);
        if !same {
            hide.push(path);
        }
    }
    hide.sort_unstable();
    (copies, hide)
}

/// Lays the layer of `base` over a checkout holding `files` (the project at `prefix` in
/// both) in a new workspace folder under `parent`; `None` when the base is the checkout's
/// files exactly. An error (a whiteout the filesystem refuses) means no layer can be laid
/// here, and the caller makes a full checkout instead.
pub(crate) fn lay(
    parent: &Path,
    base: &Base,
    files: &Files,
    prefix: &Path,
) -> Result<Option<Layer>, WorkspaceError> {
    let started = std::time::Instant::now();
    let (copies, hide) = plan(base, files);
    if copies.is_empty() && hide.is_empty() {
        return Ok(None);
    }
    let owned = new_folder(parent, "layer", base.root())?;
    let tree = owned.path().join("tree");
    std::fs::create_dir(&tree).map_err(|e| WorkspaceError::io("create folder", &tree, e))?;
    let prefix_str = prefix
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/");
    make_real_folder(&tree, &prefix_str)?;
    let root = tree.join(prefix);
    // Whiteouts first: a file the user has where the checkout has a folder replaces the
    // folder made for them, and a folder the user has where the checkout has a file
    // replaces the whiteout of that file.
    for path in &hide {
        whiteout_beneath(&root, path)?;
    }
    // Nothing writes into a layer (it is a lower layer of every overlay), so a file whose
    // exact bytes a session already holds (a pick just applied it) is linked, not copied.
    let linked = copy_paths(
        base,
        base.root(),
        &root,
        &copies,
        Donors::ReadOnly(base.content_from()),
    )?;
    tracing::debug!(
        copied = copies.len() - linked,
        linked,
        hidden = hide.len(),
        ms = started.elapsed().as_millis() as u64,
        "uncommitted state laid over the kept checkout"
    );
    Ok(Some(Layer {
        _owned: owned,
        tree,
    }))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::workspace::base::{BaseEntry, BaseKind};
    use std::collections::BTreeMap;

    fn entry(hash: &str, mode: u32) -> BaseEntry {
        BaseEntry {
            hash: hash.into(),
            mode,
            kind: BaseKind::File,
        }
    }

    #[test]
    fn the_layer_holds_exactly_what_differs_from_the_checkout() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("kept.log"), "same").unwrap();
        std::fs::write(root.join("edited.log"), "now").unwrap();
        let committed = |text: &str| {
            crate::workspace::base::entry_of(&{
                let p = root.join(".probe");
                std::fs::write(&p, text).unwrap();
                p
            })
            .unwrap()
        };
        let same_log = committed("same");
        let old_log = committed("then");
        std::fs::remove_file(root.join(".probe")).unwrap();
        let checkout: BTreeMap<String, BaseEntry> = [
            ("a.txt", entry("1", 0o644)),
            ("b.txt", entry("2", 0o644)),
            ("gone.txt", entry("3", 0o644)),
            ("run.sh", entry("4", 0o644)),
        ]
        .into_iter()
        .map(|(p, e)| (p.to_string(), e))
        .collect();
        let ignored: BTreeMap<String, BaseEntry> = [
            ("kept.log".to_string(), same_log.clone()),
            ("edited.log".to_string(), old_log),
            ("deleted.log".to_string(), same_log),
        ]
        .into_iter()
        .collect();
        let files = Files::new("k", checkout, ignored);
        let base = Base::from_entries(
            root.clone(),
            [
                ("a.txt", entry("1", 0o644)),        // unchanged
                ("b.txt", entry("22", 0o644)),       // edited
                ("run.sh", entry("4", 0o755)),       // mode only
                ("new/file.txt", entry("5", 0o644)), // untracked
            ]
            .into_iter()
            .map(|(p, e)| (p.to_string(), e))
            .collect(),
        );
        let (copies, hide) = plan(&base, &files);
        assert_eq!(copies, vec!["b.txt", "new/file.txt", "run.sh"]);
        // Deleted, and tracked-but-ignored files the user changed or deleted.
        assert_eq!(hide, vec!["deleted.log", "edited.log", "gone.txt"]);
        // The commit's files exactly: no layer at all.
        let same = Base::from_entries(root, files.entries.clone());
        let (copies, hide) = plan(&same, &files);
        assert!(copies.is_empty());
        assert_eq!(hide, vec!["deleted.log", "edited.log"]);
    }

    /// After a pick, the session's blobs hold the applied files' bytes: the layer links
    /// them, but only a blob whose bytes hash to the captured hash and whose mode is the
    /// captured mode; anything else is copied from the project as before.
    #[test]
    fn a_layer_links_the_blobs_holding_the_exact_bytes_and_copies_the_rest() {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path().canonicalize().unwrap();
        let (root, blobs, parent) = (top.join("project"), top.join("blobs"), top.join("ws"));
        for d in [&root, &blobs, &parent] {
            std::fs::create_dir_all(d).unwrap();
        }
        let put = |rel: &str, text: &str, mode: u32| {
            let p = root.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, text).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        };
        put("src/picked.rs", "picked by the user\n", 0o644);
        put("forged.rs", "the user's bytes\n", 0o644);
        put("run.sh", "echo run\n", 0o755);
        put("plain.rs", "no blob for this one\n", 0o644);
        let base = Base::capture(&root)
            .unwrap()
            .with_content_from(blobs.clone());
        let blob = |rel: &str, text: &str, mode: u32| {
            let p = blobs.join(&base.get(rel).unwrap().hash);
            std::fs::write(&p, text).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
            p
        };
        let picked = blob("src/picked.rs", "picked by the user\n", 0o644);
        // Named after the user's file but holding other bytes: never linked.
        let forged = blob("forged.rs", "a forged blob\n", 0o644);
        // The right bytes, another mode than the user's file.
        let script = blob("run.sh", "echo run\n", 0o644);
        let files = Files::new("k", BTreeMap::new(), BTreeMap::new());
        let layer = lay(&parent, &base, &files, Path::new("")).unwrap().unwrap();
        let ino = |p: &Path| std::fs::metadata(p).unwrap().ino();
        let at = |rel: &str| layer.tree().join(rel);
        assert_eq!(ino(&at("src/picked.rs")), ino(&picked), "linked");
        assert_ne!(ino(&at("forged.rs")), ino(&forged));
        assert_eq!(
            std::fs::read_to_string(at("forged.rs")).unwrap(),
            "the user's bytes\n"
        );
        assert_ne!(ino(&at("run.sh")), ino(&script));
        let mode = std::fs::metadata(at("run.sh"))
            .unwrap()
            .permissions()
            .mode()
            & 0o7777;
        assert_eq!(mode, 0o755);
        assert_eq!(
            std::fs::read_to_string(at("plain.rs")).unwrap(),
            "no blob for this one\n"
        );
        // Without the blob folder named, nothing is linked.
        let alone = Base::capture(&root).unwrap();
        let layer = lay(&parent, &alone, &files, Path::new(""))
            .unwrap()
            .unwrap();
        assert_ne!(ino(&layer.tree().join("src/picked.rs")), ino(&picked));
    }
}
