//! Copy-on-write workspaces: one frozen checkout per run, an overlay per model.
//!
//! Writing a full checkout for every model costs a `git worktree add` each (10,000 files and
//! 200 MB, several seconds, most of it the filesystem allocating inodes). Where the process
//! could enter a namespace of its own ([`enter`]), a workspace is instead an overlay mount:
//! the lower layer is a [`FrozenBase`], the private checkout made once for all workspaces of
//! the same base and never written again; the upper layer is the model's own folder and
//! receives every change, from tools and from bash alike. Creating a workspace is then a few
//! `mkdir`s and a `mount`, and finding what bash changed hashes only what lies in the upper
//! layer ([`Layers`]); everything else is the captured base, already hashed.
//!
//! The overlay lives in versus's mount namespace: the sandbox binds it like any tree, the
//! user's other programs never see it, and it disappears with the process (a crash leaves
//! plain folders that the usual cleanup removes). Kept workspaces (`--keep-workspaces`, a
//! recipe's `keep: true`) need a tree that outlives the process, so front ends turn this off
//! for them ([`set_copy_on_write`]).

mod namespace;

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};

pub use namespace::{CowUnavailable, PROBE_ENV, SWITCH_ENV, enter, probe};
pub(crate) use namespace::{mount_overlay as mount_layers, unmount};

use super::base::{Base, BaseEntry};
use super::error::WorkspaceError;
use super::manager::{Isolation, Owned, fill_tree, new_folder};

static ENABLED: AtomicBool = AtomicBool::new(true);

/// Turns copy-on-write workspaces off (or back on) for the workspaces created from now on:
/// front ends call it when workspaces must outlive the process.
pub fn set_copy_on_write(on: bool) {
    ENABLED.store(on, Ordering::Release);
}

/// True when new workspaces are overlays: the process entered its namespace and nobody
/// turned them off.
pub(crate) fn usable() -> bool {
    namespace::entered() && ENABLED.load(Ordering::Acquire)
}

/// The checkout every copy-on-write workspace of one base shares as its lower layer. It is
/// a workspace folder like any other (marker first, removed when its owner is dead), made
/// by the same code as a full workspace, and never mounted writable anywhere.
#[derive(Debug)]
pub struct FrozenBase {
    /// Held only to remove the folder when the last workspace lets the base go.
    _owned: Owned,
    tree: PathBuf,
    prefix: PathBuf,
    mode: Isolation,
    hidden: Vec<PathBuf>,
    objects: Vec<PathBuf>,
}

impl FrozenBase {
    fn create(parent: &Path, mode: Isolation, base: &Base) -> Result<Self, WorkspaceError> {
        let started = std::time::Instant::now();
        let owned = new_folder(parent, "base", base.root())?;
        let folder = owned.path().to_path_buf();
        let tree = folder.join("tree");
        let filled = fill_tree(mode, base, parent, &tree)?;
        let prefix = filled
            .root
            .strip_prefix(&tree)
            .map(Path::to_path_buf)
            .unwrap_or_default();
        tracing::debug!(
            folder = %folder.display(),
            ms = started.elapsed().as_millis() as u64,
            "frozen base ready"
        );
        Ok(Self {
            _owned: owned,
            tree,
            prefix,
            mode: filled.mode,
            hidden: filled.hidden,
            objects: filled.objects,
        })
    }

    /// The lower layer: the whole checkout (the repository root when the project is a
    /// subfolder of it).
    pub(crate) fn tree(&self) -> &Path {
        &self.tree
    }

    /// Where the project root lies inside the tree.
    pub(crate) fn prefix(&self) -> &Path {
        &self.prefix
    }

    /// Worktree, or copy when the project had no commit.
    pub(crate) fn mode(&self) -> Isolation {
        self.mode
    }

    /// Paths commands must never see.
    pub(crate) fn hidden(&self) -> &[PathBuf] {
        &self.hidden
    }

    /// The user's object folders the private repository borrows (read-only for commands).
    pub(crate) fn objects(&self) -> &[PathBuf] {
        &self.objects
    }
}

/// What identifies a frozen base: where it lives, the isolation and the exact captured state.
#[derive(Debug, Clone, PartialEq, Eq)]
struct BaseKey {
    parent: PathBuf,
    mode: Isolation,
    root: PathBuf,
    fingerprint: [u8; 32],
}

type Registry = Vec<(BaseKey, Weak<FrozenBase>)>;

static BASES: Mutex<Registry> = Mutex::new(Vec::new());

/// The frozen base for `base`, made on first use and shared while any workspace holds it.
/// Creation happens under the registry's lock, so models starting together wait for one
/// checkout instead of making one each.
pub(crate) fn frozen_base(
    parent: &Path,
    mode: Isolation,
    base: &Base,
) -> Result<Arc<FrozenBase>, WorkspaceError> {
    let key = BaseKey {
        parent: parent.to_path_buf(),
        mode,
        root: base.root().to_path_buf(),
        fingerprint: fingerprint(base),
    };
    let mut bases = BASES.lock().unwrap_or_else(PoisonError::into_inner);
    bases.retain(|(_, weak)| weak.strong_count() > 0);
    if let Some(found) = bases
        .iter()
        .find(|(k, _)| *k == key)
        .and_then(|(_, weak)| weak.upgrade())
    {
        return Ok(found);
    }
    let frozen = Arc::new(FrozenBase::create(parent, mode, base)?);
    bases.push((key, Arc::downgrade(&frozen)));
    Ok(frozen)
}

/// blake3 over every entry of the base (path, hash, mode, kind).
fn fingerprint(base: &Base) -> [u8; 32] {
    let mut hasher = blake3::Hasher::new();
    for (path, entry) in base.entries() {
        hasher.update(path.as_bytes());
        hasher.update(&[0]);
        hasher.update(entry.hash.as_bytes());
        hasher.update(&entry.mode.to_le_bytes());
        hasher.update(&[entry.kind as u8]);
    }
    *hasher.finalize().as_bytes()
}

/// What the bash-change scan needs to skip everything the model did not touch: a path with
/// nothing of it in the upper layer is the frozen base's file, which is the captured base's
/// (the checkout is made from it), so its entry is already known and nothing is hashed.
#[derive(Debug, Clone)]
pub struct Layers {
    upper_root: PathBuf,
}

impl Layers {
    /// `upper_root`: the project root inside the upper layer.
    pub(crate) fn new(upper_root: PathBuf) -> Self {
        Self { upper_root }
    }

    /// The base's entry of `rel` when the model did not touch it; `None` means it must be
    /// read.
    pub(crate) fn unchanged(&self, base: &Base, rel: &str) -> Option<BaseEntry> {
        match fs::symlink_metadata(self.upper_root.join(rel)) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => base.get(rel).cloned(),
            _ => None,
        }
    }
}
