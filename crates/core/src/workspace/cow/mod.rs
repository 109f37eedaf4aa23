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

pub(crate) mod cache;
mod layer;
mod namespace;

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};

pub use namespace::{CowUnavailable, PROBE_ENV, SWITCH_ENV, enter, probe};
pub(crate) use namespace::{mount_overlay as mount_layers, unmount};

use super::base::{Base, BaseEntry, scan};
use super::error::WorkspaceError;
use super::manager::{Isolation, Owned, TreePlan, new_folder};

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
/// made by the same code as a full workspace, in a workspace folder of its own (marker first,
/// removed when its owner is dead), never mounted writable anywhere, and then kept for later
/// turns and runs of the same key (see [`cache`]) or, when it cannot be kept, removed when the
/// last workspace lets it go.
#[derive(Debug)]
pub struct FrozenBase {
    /// Held only to keep the folders: the cache's shared lock, or the folder itself.
    _holder: Holder,
    /// The overlay's lower layers, the top one first: the checkout alone, or the layer of
    /// the user's uncommitted state over a kept checkout of the commit.
    lowers: Vec<PathBuf>,
    prefix: PathBuf,
    mode: Isolation,
    hidden: Vec<PathBuf>,
    objects: Vec<PathBuf>,
    /// The files of the kept checkout of the commit under the layer (`None`: a checkout of
    /// the whole state): a base file with the same hash is the commit's, which git holds.
    committed: Option<Arc<cache::Files>>,
}

/// What keeps a frozen base's folder alive.
#[derive(Debug)]
enum Holder {
    /// A kept checkout: released (never removed) on drop.
    Kept { _lease: cache::Lease },
    /// A checkout of this process only: removed on drop.
    Owned { _folder: Owned },
    /// A kept checkout of the commit alone and the layer of this base's uncommitted state
    /// over it (none when the base is the commit's files exactly).
    Layered {
        _checkout: Arc<CommitCheckout>,
        _layer: Option<layer::Layer>,
    },
}

impl FrozenBase {
    /// Whether `path`'s content in the base, hashed `hash`, is the commit's (known only for a
    /// layer over a kept checkout of the commit; `false` when not known).
    pub(crate) fn is_committed(&self, path: &str, hash: &str) -> bool {
        self.committed
            .as_ref()
            .and_then(|files| files.entries.get(path))
            .is_some_and(|entry| entry.hash == hash)
    }

    fn from_folder(holder: Holder, folder: &Path, plan: &TreePlan) -> Self {
        let tree = folder.join("tree");
        let filled = plan.filled(&tree);
        Self {
            _holder: holder,
            lowers: vec![tree],
            prefix: plan.prefix(),
            mode: filled.mode,
            hidden: filled.hidden,
            objects: filled.objects,
            committed: None,
        }
    }

    /// Makes the checkout of `base` under `parent` and keeps it under `key` when it is exactly
    /// the base (a kept one of the same key made meanwhile by another process is used
    /// instead).
    fn create(
        parent: &Path,
        base: &Base,
        plan: &TreePlan,
        key: &str,
    ) -> Result<Self, WorkspaceError> {
        let started = std::time::Instant::now();
        let owned = new_folder(parent, "base", base.root())?;
        let folder = owned.path().to_path_buf();
        let tree = folder.join("tree");
        let filled = plan.fill(base, &tree)?;
        let exact = match scan(&filled.root) {
            Ok(found) => found == *base.entries(),
            Err(_) => false,
        };
        tracing::debug!(
            folder = %folder.display(),
            ms = started.elapsed().as_millis() as u64,
            exact,
            "frozen base ready"
        );
        if !exact {
            // A file changed while it was copied: right for this turn (as before), never kept.
            tracing::info!("the project changed while its checkout was made: not kept");
            return Ok(Self::from_folder(
                Holder::Owned { _folder: owned },
                &folder,
                plan,
            ));
        }
        match cache::publish(parent, &folder, key, base.root()) {
            Ok(Some(lease)) => {
                let folder = lease.folder().to_path_buf();
                owned.forget();
                spawn_eviction(parent);
                Ok(Self::from_folder(
                    Holder::Kept { _lease: lease },
                    &folder,
                    plan,
                ))
            }
            Ok(None) => match cache::lookup(parent, key) {
                Some(lease) => {
                    let folder = lease.folder().to_path_buf();
                    super::background::remove_later(owned);
                    Ok(Self::from_folder(
                        Holder::Kept { _lease: lease },
                        &folder,
                        plan,
                    ))
                }
                None => Ok(Self::from_folder(
                    Holder::Owned { _folder: owned },
                    &folder,
                    plan,
                )),
            },
            Err(e) => {
                tracing::warn!(error = %e, "frozen checkout not kept");
                Ok(Self::from_folder(
                    Holder::Owned { _folder: owned },
                    &folder,
                    plan,
                ))
            }
        }
    }

    /// The overlay's lower layers, the top one first; the bottom one is the whole checkout
    /// (the repository root when the project is a subfolder of it).
    pub(crate) fn lowers(&self) -> Vec<&Path> {
        self.lowers.iter().map(PathBuf::as_path).collect()
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

/// Removes kept checkouts beyond the bound in the background (see [`cache::evict`]).
fn spawn_eviction(parent: &Path) {
    let parent = parent.to_path_buf();
    super::background::run_later(move || {
        if let Err(e) = cache::evict(&parent, cache::Evict::Old) {
            tracing::warn!(error = %e, "old frozen checkouts not all removed");
        }
    });
}

/// Starts removing old kept checkouts under `parent` in the background (at start-up).
pub(crate) fn evict_old_in_background(parent: &Path) {
    spawn_eviction(parent);
}

/// Removes every kept checkout under `parent` no process holds (`versus clean`).
pub(crate) fn evict_all(parent: &Path) -> Result<usize, WorkspaceError> {
    cache::evict(parent, cache::Evict::All)
}

type Registry = Vec<(String, Weak<FrozenBase>)>;

static BASES: Mutex<Registry> = Mutex::new(Vec::new());

/// The frozen base for `base`: one this process already holds, else the kept checkout of
/// the same key, else a new one (kept for later). Creation happens under the registry's lock,
/// so models starting together wait for one checkout instead of making one each.
pub(crate) fn frozen_base(
    parent: &Path,
    mode: Isolation,
    base: &Base,
) -> Result<Arc<FrozenBase>, WorkspaceError> {
    let started = std::time::Instant::now();
    let plan = TreePlan::new(mode, base, parent)?;
    let key = key_of(parent, &plan, base);
    tracing::debug!(ms = started.elapsed().as_millis() as u64, "frozen base key");
    let mut bases = BASES.lock().unwrap_or_else(PoisonError::into_inner);
    bases.retain(|(_, weak)| weak.strong_count() > 0);
    if let Some(found) = bases
        .iter()
        .find(|(k, _)| *k == key)
        .and_then(|(_, weak)| weak.upgrade())
    {
        return Ok(found);
    }
    super::parent::prepare(parent)?;
    let layered = if plan.mode() == Isolation::Worktree && LAYERED.load(Ordering::Acquire) {
        layered(parent, &plan, base)?
    } else {
        None
    };
    let frozen = match layered {
        Some(frozen) => frozen,
        None => match cache::lookup(parent, &key) {
            Some(lease) => {
                tracing::debug!(folder = %lease.folder().display(), "kept frozen base reused");
                let folder = lease.folder().to_path_buf();
                FrozenBase::from_folder(Holder::Kept { _lease: lease }, &folder, &plan)
            }
            None => FrozenBase::create(parent, base, &plan, &key)?,
        },
    };
    tracing::debug!(
        ms = started.elapsed().as_millis() as u64,
        "frozen base ready for the workspaces"
    );
    let frozen = Arc::new(frozen);
    bases.push((key, Arc::downgrade(&frozen)));
    Ok(frozen)
}

static LAYERED: AtomicBool = AtomicBool::new(true);

/// Turns the layered frozen bases (a kept checkout of the commit plus a layer of the
/// uncommitted state) off or back on; off, each state gets a whole checkout of its own, as
/// before. For tests and benches that compare the two.
#[doc(hidden)]
pub fn set_layered(on: bool) {
    LAYERED.store(on, Ordering::Release);
}

/// A kept checkout of a commit alone, shared by every base of that commit, with what it
/// holds.
#[derive(Debug)]
pub(crate) struct CommitCheckout {
    _holder: Holder,
    folder: PathBuf,
    files: Arc<cache::Files>,
}

type Commits = Vec<(String, Weak<CommitCheckout>)>;

static COMMITS: Mutex<Commits> = Mutex::new(Vec::new());

/// What kept checkouts hold, read once per process: `(folder, its inode, files)`. A kept
/// checkout is never written again, so the same folder (the same inode under the same name)
/// holds the same files.
static FILES_READ: Mutex<Vec<(PathBuf, u64, Arc<cache::Files>)>> = Mutex::new(Vec::new());

/// The frozen base of `base` as a kept checkout of its commit (found or made) with a layer
/// of what the user changed on top; `None` when no layer can be laid here (the caller makes a
/// checkout of the whole state instead).
fn layered(
    parent: &Path,
    plan: &TreePlan,
    base: &Base,
) -> Result<Option<FrozenBase>, WorkspaceError> {
    let key = commit_key(parent, plan, base);
    let checkout = commit_checkout(parent, plan, base, &key)?;
    let tree = checkout.folder.join("tree");
    let layer = match layer::lay(parent, base, &checkout.files, &plan.prefix()) {
        Ok(layer) => layer,
        Err(e) => {
            tracing::warn!(error = %e, "uncommitted state not laid as a layer; a whole checkout instead");
            return Ok(None);
        }
    };
    let mut lowers: Vec<PathBuf> = layer.iter().map(|l| l.tree().to_path_buf()).collect();
    lowers.push(tree.clone());
    let filled = plan.filled(&tree);
    let committed = Some(Arc::clone(&checkout.files));
    Ok(Some(FrozenBase {
        _holder: Holder::Layered {
            _checkout: checkout,
            _layer: layer,
        },
        lowers,
        prefix: plan.prefix(),
        mode: filled.mode,
        hidden: filled.hidden,
        objects: filled.objects,
        committed,
    }))
}

/// The checkout of the commit `plan` names: one this process holds, else the kept one of
/// `key`, else a new one (kept for later).
fn commit_checkout(
    parent: &Path,
    plan: &TreePlan,
    base: &Base,
    key: &str,
) -> Result<Arc<CommitCheckout>, WorkspaceError> {
    let mut commits = COMMITS.lock().unwrap_or_else(PoisonError::into_inner);
    commits.retain(|(_, weak)| weak.strong_count() > 0);
    if let Some(found) = commits
        .iter()
        .find(|(k, _)| k == key)
        .and_then(|(_, weak)| weak.upgrade())
    {
        return Ok(found);
    }
    let found = cache::lookup(parent, key).and_then(|lease| {
        let folder = lease.folder().to_path_buf();
        match files_of(&folder, key) {
            Some(files) => Some(CommitCheckout {
                _holder: Holder::Kept { _lease: lease },
                folder,
                files,
            }),
            None => {
                tracing::info!(folder = %folder.display(), "kept checkout without a readable record of its files: not used");
                None
            }
        }
    });
    let checkout = match found {
        Some(found) => {
            tracing::debug!(folder = %found.folder.display(), "kept checkout of the commit reused");
            found
        }
        None => make_commit_checkout(parent, plan, base, key)?,
    };
    let checkout = Arc::new(checkout);
    commits.push((key.to_string(), Arc::downgrade(&checkout)));
    Ok(checkout)
}

/// The files of the kept checkout at `folder`, read once per process.
fn files_of(folder: &Path, key: &str) -> Option<Arc<cache::Files>> {
    use std::os::unix::fs::MetadataExt;
    let ino = fs::symlink_metadata(folder).ok()?.ino();
    let mut read = FILES_READ.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((_, _, files)) = read.iter().find(|(f, i, _)| f == folder && *i == ino) {
        return Some(Arc::clone(files));
    }
    let files = Arc::new(cache::read_files(folder, key)?);
    read.retain(|(f, _, _)| f != folder);
    if read.len() >= cache::KEEP {
        read.remove(0);
    }
    read.push((folder.to_path_buf(), ino, Arc::clone(&files)));
    Some(files)
}

/// Writes the checkout of the commit alone, scans it, and keeps it under `key` (a kept one
/// of the same key made meanwhile by another process is used instead).
fn make_commit_checkout(
    parent: &Path,
    plan: &TreePlan,
    base: &Base,
    key: &str,
) -> Result<CommitCheckout, WorkspaceError> {
    let started = std::time::Instant::now();
    let owned = new_folder(parent, "base", base.root())?;
    let folder = owned.path().to_path_buf();
    let tree = folder.join("tree");
    let filled = plan.fill_commit(&tree)?;
    let entries = scan(&filled.root)?;
    let mut ignored = std::collections::BTreeMap::new();
    for rel in super::worktree::tracked_paths(&tree, &plan.prefix())? {
        if entries.contains_key(&rel) {
            continue;
        }
        if let Ok(entry) = super::base::entry_of(&filled.root.join(&rel)) {
            ignored.insert(rel, entry);
        }
    }
    let files = cache::Files::new(key, entries, ignored);
    tracing::debug!(
        folder = %folder.display(),
        files = files.entries.len(),
        ms = started.elapsed().as_millis() as u64,
        "checkout of the commit written"
    );
    if let Err(e) = cache::write_files(&folder, &files) {
        tracing::warn!(error = %e, "checkout of the commit not kept");
        return Ok(CommitCheckout {
            _holder: Holder::Owned { _folder: owned },
            folder,
            files: Arc::new(files),
        });
    }
    let files = Arc::new(files);
    match cache::publish(parent, &folder, key, base.root()) {
        Ok(Some(lease)) => {
            let folder = lease.folder().to_path_buf();
            owned.forget();
            spawn_eviction(parent);
            Ok(CommitCheckout {
                _holder: Holder::Kept { _lease: lease },
                folder,
                files,
            })
        }
        Ok(None) => {
            if let Some(lease) = cache::lookup(parent, key) {
                let theirs = lease.folder().to_path_buf();
                if let Some(their_files) = files_of(&theirs, key) {
                    super::background::remove_later(owned);
                    return Ok(CommitCheckout {
                        _holder: Holder::Kept { _lease: lease },
                        folder: theirs,
                        files: their_files,
                    });
                }
            }
            Ok(CommitCheckout {
                _holder: Holder::Owned { _folder: owned },
                folder,
                files,
            })
        }
        Err(e) => {
            tracing::warn!(error = %e, "checkout of the commit not kept");
            Ok(CommitCheckout {
                _holder: Holder::Owned { _folder: owned },
                folder,
                files,
            })
        }
    }
}

/// The key of a kept checkout of a commit alone: blake3 over the workspace parent, the
/// project and the tree's plan (repository, commit, refs, exclude file, borrowed objects, the
/// project's place), as 32 hex digits. The captured entries are not in it: the layer over it
/// carries them.
fn commit_key(parent: &Path, plan: &TreePlan, base: &Base) -> String {
    let mut hasher = blake3::Hasher::new();
    hasher.update(b"versus commit checkout 1\0");
    let mut field = |bytes: &[u8]| {
        hasher.update(&(bytes.len() as u64).to_le_bytes());
        hasher.update(bytes);
    };
    field(parent.as_os_str().as_encoded_bytes());
    field(base.root().as_os_str().as_encoded_bytes());
    field(&plan.identity());
    let hex = hasher.finalize().to_hex();
    hex[..32].to_string()
}

/// The key of a frozen base: blake3 over the workspace parent, the tree's plan (repository,
/// commit, refs, exclude file, borrowed objects, the project's place; or "copy") and every
/// entry of the base (path, hash, mode, kind), as 32 hex digits.
fn key_of(parent: &Path, plan: &TreePlan, base: &Base) -> String {
    let mut hasher = blake3::Hasher::new();
    hasher.update(b"versus frozen base 1\0");
    let mut field = |bytes: &[u8]| {
        hasher.update(&(bytes.len() as u64).to_le_bytes());
        hasher.update(bytes);
    };
    field(parent.as_os_str().as_encoded_bytes());
    field(base.root().as_os_str().as_encoded_bytes());
    field(&plan.identity());
    for (path, entry) in base.entries() {
        field(path.as_bytes());
        field(entry.hash.as_bytes());
        field(&entry.mode.to_le_bytes());
        field(&[entry.kind as u8]);
    }
    let hex = hasher.finalize().to_hex();
    hex[..32].to_string()
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
