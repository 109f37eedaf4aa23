//! [`Workspace`]: one model entry's private copy of the project, from creation to removal.
//!
//! Each workspace lives in a folder versus owns, `<parent>/<pid>-<label>-<n>/`, holding a small
//! marker (`versus-workspace.json`: owner pid, project, whether it is kept), the tree itself in
//! `tree/` and the private `home/` and `tmp/` its commands get (in worktree mode the tree's
//! repository borrows the user's objects through git alternates: nothing in the folder is a
//! link to a user's file). The marker is written before anything else, so a
//! run that crashes at any point leaves something [`cleanup_leftovers`] can recognise: a folder
//! whose owner pid is dead is deleted, unless it was kept (`--keep-workspaces`, removed only by
//! `versus clean`). A live workspace is removed on drop unless [`Workspace::keep`] was called.
//!
//! Removal trusts nothing a model can write: only a folder that is a direct child of the
//! workspace parent, named like a workspace, a real folder (not a symlink) and holding a marker
//! is ever deleted, and deletion never follows symlinks. Commands only ever see `tree/`,
//! `home/`, `tmp/` and (read-only) the user's objects folders through the sandbox
//! ([`Workspace::sandbox`]).
//!
//! The view a workspace hands to tools is always a [`RecordingView`], so every write becomes a
//! proposal: over a scratch [`DirectView`] of the tree in worktree and copy modes, over an
//! [`OverlayView`] of the real project in overlay mode (which has no folder at all).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

use super::base::Base;
use super::copy::copy_tree;
use super::direct::DirectView;
use super::error::WorkspaceError;
use super::overlay::OverlayView;
use super::recording::{FileWrite, RecordingView};
use super::view::FileView;
use super::worktree::{CreatedCheckout, plan_checkout, prune_dead_worktrees, write_checkout};
use crate::exec::{Sandbox, SandboxSettings, WorkspaceDirs};

/// Name of the marker file in each workspace folder.
pub(crate) const MARKER: &str = "versus-workspace.json";

/// Bytes of setup output kept in an error (the tail, where the failure usually is).
const SETUP_OUTPUT_TAIL: usize = 4000;

/// The longest a setup command may run (dependency installs can be slow, hangs must end).
pub const SETUP_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(15 * 60);

/// How a model's workspace is isolated from the user's tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Isolation {
    /// A git worktree at HEAD plus the user's uncommitted state (default in a repository).
    Worktree,
    /// An ignore-aware copy of the tree (default outside git; fallback without commits).
    Copy,
    /// No copy: changes in memory over the real tree, commands refused. Called `in-memory`
    /// (`in_memory` in recipes) wherever users see it, since users call the default
    /// copy-on-write workspaces overlays.
    Overlay,
}

impl Isolation {
    /// The default for `project`: worktree inside a git repository, copy elsewhere.
    pub fn default_for(project: &Path) -> Self {
        if git2::Repository::discover(project).is_ok() {
            Self::Worktree
        } else {
            Self::Copy
        }
    }
}

/// What the marker file records about a workspace folder.
#[derive(Debug, Serialize, Deserialize)]
struct Marker {
    pid: u32,
    project: PathBuf,
    /// Kept for the user (`--keep-workspaces`): only `versus clean` removes it.
    #[serde(default)]
    kept: bool,
}

/// The recording view, typed by what it wraps (so writes can be read back).
#[derive(Debug, Clone)]
enum Recorder {
    Disk(Arc<RecordingView<DirectView>>),
    Memory(Arc<RecordingView<OverlayView>>),
}

/// One model entry's workspace: a private tree (or overlay) plus the record of its writes.
#[derive(Debug)]
pub struct Workspace {
    mode: Isolation,
    root: PathBuf,
    recorder: Recorder,
    owned: Owned,
    /// Paths commands must never see: the user's project (and its repository).
    hidden: Vec<PathBuf>,
    /// The user's object folders a private checkout borrows (read-only in the sandbox).
    objects: Vec<PathBuf>,
    /// The frozen base under a copy-on-write workspace; after `owned`, so the overlay is
    /// unmounted before the last workspace lets the base go.
    frozen: Option<Arc<super::cow::FrozenBase>>,
}

/// What a workspace owns on disk; removed on drop unless kept. Built before anything is
/// created, so a creation that fails half-way cleans up after itself.
#[derive(Debug, Default)]
pub(super) struct Owned {
    folder: Option<PathBuf>,
    /// The overlay mounted in the folder (copy-on-write workspaces), unmounted first.
    pub(super) mount: Option<PathBuf>,
    keep: bool,
}

impl Owned {
    /// The owned folder (empty for a workspace that owns none).
    pub(super) fn path(&self) -> &Path {
        self.folder.as_deref().unwrap_or(Path::new(""))
    }

    /// Gives the folder up without removing it (it was moved elsewhere, e.g. kept as a cached
    /// checkout).
    pub(super) fn forget(mut self) {
        self.folder = None;
        self.mount = None;
    }

    fn remove_now(&mut self) -> Result<(), WorkspaceError> {
        if let Some(mount) = self.mount.take() {
            // Still mounted, the removal would walk the merged tree; refuse instead.
            if let Err(e) = super::cow::unmount(&mount) {
                self.folder = None;
                return Err(WorkspaceError::io("unmount the workspace", mount, e));
            }
        }
        if let Some(folder) = self.folder.take() {
            remove_workspace_folder(&folder)?;
            tracing::debug!(folder = %folder.display(), "workspace folder removed");
        }
        Ok(())
    }
}

/// Creates a fresh versus-owned folder `<pid>-<label>-<n>` under `parent` and writes its
/// marker before anything else goes in, so a crash at any later point leaves a folder
/// [`cleanup_leftovers`] recognises.
pub(super) fn new_folder(
    parent: &Path,
    label: &str,
    project: &Path,
) -> Result<Owned, WorkspaceError> {
    super::parent::prepare(parent)?;
    let pid = std::process::id();
    let label = sanitize(label);
    let folder = loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let folder = parent.join(format!("{pid}-{label}-{n}"));
        match fs::create_dir(&folder) {
            Ok(()) => break folder,
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(WorkspaceError::io("create folder", folder, e)),
        }
    };
    // From here on, a failure must not leave the folder behind.
    let mut owned = Owned::default();
    owned.folder = Some(folder.clone());
    write_marker(
        &folder,
        &Marker {
            pid,
            project: project.to_path_buf(),
            kept: false,
        },
    )?;
    Ok(owned)
}

/// A tree filled with the project: where its root lies, the isolation actually used and
/// what the sandbox must hide or mount read-only for it.
pub(super) struct Filled {
    /// The project root inside the tree.
    pub(super) root: PathBuf,
    /// Worktree, or copy when the project has no commit.
    pub(super) mode: Isolation,
    /// The user's project and repository folders (never visible to commands).
    pub(super) hidden: Vec<PathBuf>,
    /// The user's object folders a private checkout borrows (read-only for commands).
    pub(super) objects: Vec<PathBuf>,
}

/// How a tree will be filled with the project, decided before anything is written: a
/// private checkout in worktree mode, an ignore-aware copy otherwise or as the fallback.
pub(super) struct TreePlan {
    /// The checkout to write; `None` for a copy.
    checkout: Option<super::worktree::CheckoutPlan>,
    /// The user's project and repository folders (never visible to commands).
    hidden: Vec<PathBuf>,
}

impl TreePlan {
    /// Plans the tree of `base` for a workspace under `parent`.
    pub(super) fn new(mode: Isolation, base: &Base, parent: &Path) -> Result<Self, WorkspaceError> {
        let mut hidden = vec![base.root().to_path_buf(), parent.to_path_buf()];
        let checkout = if mode == Isolation::Worktree {
            plan_checkout(base)?
        } else {
            None
        };
        if checkout.is_none()
            && let Ok(repo) = git2::Repository::discover(base.root())
        {
            if let Some(workdir) = repo.workdir() {
                hidden.push(workdir.to_path_buf());
            }
            hidden.push(repo.commondir().to_path_buf());
        }
        Ok(Self { checkout, hidden })
    }

    /// The isolation the tree will have: worktree, or copy when there is nothing to check out.
    pub(super) fn mode(&self) -> Isolation {
        if self.checkout.is_some() {
            Isolation::Worktree
        } else {
            Isolation::Copy
        }
    }

    /// Where the project root lies inside the tree.
    pub(super) fn prefix(&self) -> PathBuf {
        self.checkout
            .as_ref()
            .map(|c| c.prefix().to_path_buf())
            .unwrap_or_default()
    }

    /// Bytes that, with the base, decide the whole tree (see `CheckoutPlan::identity`).
    pub(super) fn identity(&self) -> Vec<u8> {
        match &self.checkout {
            Some(checkout) => checkout.identity(),
            None => b"copy".to_vec(),
        }
    }

    /// What the sandbox needs for a tree at `tree`, without writing anything.
    pub(super) fn filled(&self, tree: &Path) -> Filled {
        let mut hidden = self.hidden.clone();
        let mut objects = Vec::new();
        let mut root = tree.to_path_buf();
        if let Some(checkout) = &self.checkout {
            let CreatedCheckout {
                project_root,
                user_workdir,
                user_git_dir,
                objects: borrowed,
            } = checkout.checkout_of(tree);
            root = project_root;
            hidden.push(user_workdir);
            hidden.push(user_git_dir);
            objects = borrowed;
        }
        Filled {
            root,
            mode: self.mode(),
            hidden,
            objects,
        }
    }

    /// Writes the checkout of the commit alone at `tree` (no uncommitted state; worktree
    /// plans only: a copy has no commit to check out).
    pub(super) fn fill_commit(&self, tree: &Path) -> Result<Filled, WorkspaceError> {
        let Some(checkout) = &self.checkout else {
            return Err(WorkspaceError::io(
                "check out the commit in",
                tree,
                io::Error::other("the project has no commit to check out"),
            ));
        };
        super::worktree::write_commit_checkout(checkout, tree)?;
        let filled = self.filled(tree);
        fs::create_dir_all(&filled.root)
            .map_err(|e| WorkspaceError::io("create folder", &filled.root, e))?;
        Ok(filled)
    }

    /// Writes the tree at `tree`.
    pub(super) fn fill(&self, base: &Base, tree: &Path) -> Result<Filled, WorkspaceError> {
        match &self.checkout {
            Some(checkout) => write_checkout(checkout, base, tree)?,
            None => copy_tree(base, base.root(), tree)?,
        }
        let filled = self.filled(tree);
        // A project folder with no committed file is absent from a fresh worktree.
        fs::create_dir_all(&filled.root)
            .map_err(|e| WorkspaceError::io("create folder", &filled.root, e))?;
        Ok(filled)
    }
}

/// Fills `tree` (inside the owned `folder` under `parent`) with the project: a private
/// checkout in worktree mode, an ignore-aware copy otherwise or as the fallback.
pub(super) fn fill_tree(
    mode: Isolation,
    base: &Base,
    parent: &Path,
    tree: &Path,
) -> Result<Filled, WorkspaceError> {
    TreePlan::new(mode, base, parent)?.fill(base, tree)
}

impl Drop for Owned {
    fn drop(&mut self) {
        if !self.keep
            && let Err(e) = self.remove_now()
        {
            // The next run's cleanup removes what is left; say why it was left.
            tracing::warn!(error = %e, "workspace folder not removed");
        }
    }
}

/// The folder all workspaces live under by default: `<temp>/versus-workspaces-<uid>`, this
/// user's own private folder (see `parent.rs`).
pub fn default_parent() -> PathBuf {
    super::parent::default_parent()
}

static COUNTER: AtomicU64 = AtomicU64::new(0);

impl Workspace {
    /// Creates a workspace for the project `base` was captured from, under
    /// [`default_parent`]. `label` (e.g. the model entry) only makes the folder recognisable.
    /// Worktree mode falls back to copy when the project has no git commit yet; see
    /// [`Workspace::mode`] for the mode actually used.
    pub fn create(mode: Isolation, base: &Base, label: &str) -> Result<Self, WorkspaceError> {
        Self::create_in(&default_parent(), mode, base, label)
    }

    /// Like [`Workspace::create`] under another parent folder (tests, a session's own folder).
    pub fn create_in(
        parent: &Path,
        mode: Isolation,
        base: &Base,
        label: &str,
    ) -> Result<Self, WorkspaceError> {
        if mode == Isolation::Overlay {
            let view = OverlayView::new(base.root())
                .map_err(|e| WorkspaceError::io("open the project folder", base.root(), e))?;
            return Ok(Self {
                mode,
                root: view.root().to_path_buf(),
                recorder: Recorder::Memory(Arc::new(RecordingView::new(view))),
                owned: Owned::default(),
                hidden: Vec::new(),
                objects: Vec::new(),
                frozen: None,
            });
        }
        if super::cow::usable()
            && let Some(workspace) = Self::create_layered(parent, mode, base, label)?
        {
            return Ok(workspace);
        }
        let owned = new_folder(parent, label, base.root())?;
        let folder = owned.path().to_path_buf();
        for private in ["home", "tmp"] {
            let dir = folder.join(private);
            fs::create_dir(&dir).map_err(|e| WorkspaceError::io("create folder", &dir, e))?;
        }
        let filled = fill_tree(mode, base, parent, &folder.join("tree"))?;
        let view = DirectView::scratch(&filled.root)
            .map_err(|e| WorkspaceError::io("open folder", &filled.root, e))?;
        Ok(Self {
            mode: filled.mode,
            root: view.root().to_path_buf(),
            recorder: Recorder::Disk(Arc::new(RecordingView::new(view))),
            owned,
            hidden: filled.hidden,
            objects: filled.objects,
            frozen: None,
        })
    }

    /// A copy-on-write workspace: an overlay whose lower layer is the run's frozen base
    /// (shared by every workspace of the same base) and whose upper layer holds this model's
    /// changes. `None` when the overlay cannot be mounted here (the caller makes a full
    /// checkout instead).
    fn create_layered(
        parent: &Path,
        mode: Isolation,
        base: &Base,
        label: &str,
    ) -> Result<Option<Self>, WorkspaceError> {
        let frozen = super::cow::frozen_base(parent, mode, base)?;
        let mut owned = new_folder(parent, label, base.root())?;
        let folder = owned.path().to_path_buf();
        for private in ["home", "tmp", "upper", "work", "tree"] {
            let dir = folder.join(private);
            fs::create_dir(&dir).map_err(|e| WorkspaceError::io("create folder", &dir, e))?;
        }
        let tree = folder.join("tree");
        if let Err(e) = super::cow::mount_layers(
            &frozen.lowers(),
            &folder.join("upper"),
            &folder.join("work"),
            &tree,
        ) {
            tracing::warn!(error = %e, "copy-on-write workspace not mounted; making a full checkout");
            return Ok(None);
        }
        owned.mount = Some(tree.clone());
        let root = tree.join(frozen.prefix());
        fs::create_dir_all(&root).map_err(|e| WorkspaceError::io("create folder", &root, e))?;
        let view =
            DirectView::scratch(&root).map_err(|e| WorkspaceError::io("open folder", &root, e))?;
        let layers = super::cow::Layers::new(folder.join("upper").join(frozen.prefix()));
        let mut hidden = frozen.hidden().to_vec();
        hidden.push(parent.to_path_buf());
        Ok(Some(Self {
            mode: frozen.mode(),
            root: view.root().to_path_buf(),
            recorder: Recorder::Disk(Arc::new(RecordingView::new(view).with_layers(layers))),
            owned,
            hidden,
            objects: frozen.objects().to_vec(),
            frozen: Some(frozen),
        }))
    }

    /// The sandbox the workspace's commands run in under `settings`: the tree, the private
    /// home and temp folders, the user's objects folders read-only; the project, its repository and
    /// every other workspace hidden. In overlay mode commands are refused: they would run in
    /// the user's real project.
    pub fn sandbox(&self, settings: &SandboxSettings) -> Sandbox {
        let Some(folder) = self.owned.folder.as_deref() else {
            return Sandbox::refusing(
                "in-memory isolation keeps the model's changes in memory over your real project, \
                 so a command would run in (and could change) your own files; use worktree or \
                 copy isolation (`--isolation worktree|copy`, or `isolation:` in the recipe) to \
                 let models run commands",
            );
        };
        let dirs = WorkspaceDirs {
            tree: folder.join("tree"),
            home: Some(folder.join("home")),
            tmp: Some(folder.join("tmp")),
            read_only: self.objects.clone(),
            hidden: self.hidden.clone(),
        };
        Sandbox::new(settings, dirs)
    }

    /// Whether `path`'s base content, hashed `hash`, is known to be the commit's (its HEAD
    /// holds those bytes): a copy-on-write workspace over a kept checkout of the commit knows
    /// every committed file's hash; other workspaces know nothing (`false`).
    pub fn base_is_committed(&self, path: &str, hash: &str) -> bool {
        self.frozen
            .as_ref()
            .is_some_and(|frozen| frozen.is_committed(path, hash))
    }

    /// True for a copy-on-write workspace (an overlay over the run's frozen base).
    pub fn is_copy_on_write(&self) -> bool {
        self.frozen.is_some()
    }

    /// The isolation actually in use (worktree may have fallen back to copy).
    pub fn mode(&self) -> Isolation {
        self.mode
    }

    /// The project root as the model sees it: bash runs here. In overlay mode, the user's
    /// real project.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The versus-owned folder holding the marker and the tree (`None` in overlay mode).
    pub fn folder(&self) -> Option<&Path> {
        self.owned.folder.as_deref()
    }

    /// The view to give tools (`ToolContext::new(workspace.view())`); it records every write.
    pub fn view(&self) -> Arc<dyn FileView> {
        match &self.recorder {
            Recorder::Disk(v) => v.clone(),
            Recorder::Memory(v) => v.clone(),
        }
    }

    /// The model's writes and deletes so far, in order.
    pub fn writes(&self) -> Vec<FileWrite> {
        match &self.recorder {
            Recorder::Disk(v) => v.writes(),
            Recorder::Memory(v) => v.writes(),
        }
    }

    /// Finds and records the changes bash made (see [`RecordingView::bash_changes`]); call
    /// when the model finishes.
    pub fn bash_changes(&self, base: &Base) -> Result<Vec<FileWrite>, WorkspaceError> {
        match &self.recorder {
            Recorder::Disk(v) => v.bash_changes(base),
            Recorder::Memory(v) => v.bash_changes(base),
        }
    }

    /// What the last bash-change scan saw in the workspace but did not propose (a file too
    /// large, a folder too deep, an entry it could not read), for the user to be told.
    pub fn scan_notes(&self) -> Vec<super::ScanNote> {
        match &self.recorder {
            Recorder::Disk(v) => v.scan_notes(),
            Recorder::Memory(v) => v.scan_notes(),
        }
    }

    /// Runs the setup command (e.g. `npm ci`) once in the workspace root, in `sandbox` (see
    /// [`Workspace::sandbox`]), and returns its output; a failure names the command and its
    /// exit status. A command still running after `timeout` is killed with every process it
    /// started and reported as timed out, so a hanging setup cannot hold a run forever.
    pub async fn run_setup(
        &self,
        command: &str,
        sandbox: &Sandbox,
        timeout: std::time::Duration,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> Result<String, WorkspaceError> {
        use crate::exec::{CommandSpec, Ending, Tail};
        let mut output = Tail::new(SETUP_OUTPUT_TAIL * 16);
        let spec = CommandSpec {
            script: command,
            cwd: &self.root,
            sandbox,
            timeout,
            cancel,
        };
        let finished = crate::exec::run(spec, |chunk| output.push(chunk))
            .await
            .map_err(|e| WorkspaceError::Setup {
                command: command.to_string(),
                dir: self.root.clone(),
                status: format!("did not run: {e}"),
                hint: String::new(),
                output: String::new(),
            })?;
        let text = output.text();
        let status = match finished.ending {
            Ending::Exited(0) => return Ok(text),
            Ending::Exited(code) => format!("exit code {code}"),
            Ending::Signaled(signal) => format!("killed by signal {signal}"),
            Ending::TimedOut => format!(
                "timed out after {:.1} s and was killed",
                timeout.as_secs_f64()
            ),
            Ending::Cancelled => "cancelled".to_string(),
        };
        let hint = if sandbox.without_network() {
            crate::exec::network_hint(crate::exec::CommandRole::Setup, &text)
                .map(|hint| format!("; {hint}"))
                .unwrap_or_default()
        } else {
            String::new()
        };
        Err(WorkspaceError::Setup {
            command: command.to_string(),
            dir: self.root.clone(),
            status,
            hint,
            output: tail(&text, SETUP_OUTPUT_TAIL),
        })
    }

    /// Keeps the workspace on disk after drop (`--keep-workspaces`, "open workspace"); its
    /// marker says so, so later runs leave it alone until `versus clean`.
    pub fn keep(&mut self) {
        self.owned.keep = true;
        if let Some(folder) = &self.owned.folder
            && let Ok(bytes) = fs::read(folder.join(MARKER))
            && let Ok(mut marker) = serde_json::from_slice::<Marker>(&bytes)
        {
            marker.kept = true;
            let _ = write_marker(folder, &marker);
        }
    }

    /// Removes the workspace now (worktree registration and folder), reporting failures that
    /// a drop would have to ignore.
    pub fn remove(mut self) -> Result<(), WorkspaceError> {
        self.owned.remove_now()
    }
}

/// Removes the workspaces a crashed run left under [`default_parent`] (see
/// [`cleanup_leftovers_in`]). Call once at start.
pub fn cleanup_leftovers(project: &Path) -> Result<usize, WorkspaceError> {
    cleanup_leftovers_in(&default_parent(), project)
}

/// Removes every workspace folder under `parent` whose owner process is dead and that was not
/// kept, then prunes registrations that older versions of versus left in `project`'s
/// repository. Folders of live runs, kept folders and anything that does not look exactly
/// like a workspace folder are left alone. Returns how many folders were removed; a folder
/// that cannot be removed is skipped (the error names it once the rest is done), so callers
/// at start-up report it and go on.
pub fn cleanup_leftovers_in(parent: &Path, project: &Path) -> Result<usize, WorkspaceError> {
    let removed = sweep(parent, |marker| !marker.kept && pid_is_dead(marker.pid));
    // Kept frozen checkouts past their bound go in the background: a start never waits for
    // thousands of files to be deleted.
    if super::parent::check(parent).is_ok() {
        super::cow::evict_old_in_background(parent);
    }
    let pruned = prune_dead_worktrees(project, pid_is_dead);
    let removed = removed?;
    pruned?;
    Ok(removed)
}

/// Removes every workspace folder under [`default_parent`] that no live process owns, kept
/// ones included (`versus clean`). Returns how many were removed.
pub fn clean_workspaces() -> Result<usize, WorkspaceError> {
    clean_workspaces_in(&default_parent())
}

/// [`clean_workspaces`] under another parent folder.
pub fn clean_workspaces_in(parent: &Path) -> Result<usize, WorkspaceError> {
    let removed = sweep(parent, |marker| pid_is_dead(marker.pid) || marker.kept)?;
    // And every kept frozen checkout no running versus holds.
    Ok(removed + super::cow::evict_all(parent)?)
}

/// Removes the workspace folders under `parent` whose marker `doomed` accepts. A folder that
/// cannot be removed (a mount left inside, a permission) is reported and skipped: one bad
/// workspace never stops the others from going, nor a later run from starting. The error,
/// when some failed, names each with its reason after every other folder was removed.
fn sweep(parent: &Path, doomed: impl Fn(&Marker) -> bool) -> Result<usize, WorkspaceError> {
    // Markers in a folder someone else controls are theirs to write: nothing is trusted there.
    super::parent::check(parent)?;
    let entries = match fs::read_dir(parent) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(WorkspaceError::io("list", parent, e)),
    };
    let mut removed = 0;
    let mut failed: Vec<String> = Vec::new();
    for entry in entries.flatten() {
        let folder = entry.path();
        let Some(marker) = read_marker(&folder) else {
            continue;
        };
        if marker.pid == std::process::id() && !marker.kept {
            continue;
        }
        if !doomed(&marker) {
            continue;
        }
        match remove_workspace_folder(&folder) {
            Ok(()) => removed += 1,
            Err(e) => {
                tracing::warn!(folder = %folder.display(), error = %e, "leftover workspace not removed");
                failed.push(e.to_string());
            }
        }
    }
    if failed.is_empty() {
        return Ok(removed);
    }
    Err(WorkspaceError::Cleanup {
        removed,
        failed: failed.join("; "),
    })
}

/// The marker of `folder` when it is a real folder (not a symlink) named like a workspace
/// (`<pid>-<label>-<n>`) holding a readable marker (a regular file, not a link).
fn read_marker(folder: &Path) -> Option<Marker> {
    let meta = fs::symlink_metadata(folder).ok()?;
    if !meta.is_dir() {
        return None;
    }
    let name = folder.file_name()?.to_str()?;
    let _pid: u32 = name.split('-').next()?.parse().ok()?;
    let marker_path = folder.join(MARKER);
    if !fs::symlink_metadata(&marker_path).ok()?.is_file() {
        return None;
    }
    serde_json::from_slice(&fs::read(marker_path).ok()?).ok()
}

fn write_marker(folder: &Path, marker: &Marker) -> Result<(), WorkspaceError> {
    let marker_path = folder.join(MARKER);
    let json = serde_json::to_vec_pretty(marker)
        .map_err(|e| WorkspaceError::io("write marker", &marker_path, io::Error::other(e)))?;
    crate::fsutil::atomic_write(&marker_path, &json)
        .map_err(|e| WorkspaceError::io("write marker", &marker_path, e))
}

/// True when no process has this pid (pid 0 or an out-of-range pid counts as dead: it cannot
/// be a versus run, and signalling pid 0 would mean our own process group).
pub(super) fn pid_is_dead(pid: u32) -> bool {
    use nix::errno::Errno;
    use nix::sys::signal::kill;
    use nix::unistd::Pid;
    let Ok(raw) = i32::try_from(pid) else {
        return true;
    };
    if raw <= 0 {
        return true;
    }
    matches!(kill(Pid::from_raw(raw), None), Err(Errno::ESRCH))
}

/// Renames `folder` (a folder of versus's under `parent`, e.g. a kept checkout about to be
/// evicted) to a fresh workspace folder name of this process, its marker rewritten to say so
/// first: a removal cut short is then finished by the next cleanup, and nobody finds the folder
/// under its old name meanwhile. Returns the new path.
pub(super) fn retire_folder(parent: &Path, folder: &Path) -> Result<PathBuf, WorkspaceError> {
    let project = fs::read(folder.join(MARKER))
        .ok()
        .and_then(|bytes| serde_json::from_slice::<Marker>(&bytes).ok())
        .map(|m| m.project)
        .unwrap_or_default();
    let pid = std::process::id();
    write_marker(
        folder,
        &Marker {
            pid,
            project,
            kept: false,
        },
    )?;
    loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let target = parent.join(format!("{pid}-retired-{n}"));
        match nix::fcntl::renameat2(
            nix::fcntl::AT_FDCWD,
            folder,
            nix::fcntl::AT_FDCWD,
            &target,
            nix::fcntl::RenameFlags::RENAME_NOREPLACE,
        ) {
            Ok(()) => return Ok(target),
            Err(nix::errno::Errno::EEXIST) => continue,
            Err(e) => return Err(WorkspaceError::io("rename", folder, io::Error::from(e))),
        }
    }
}

/// Deletes a workspace folder after checking it is one: a real folder holding a marker.
/// [`remove_tree`](super::remove::remove_tree) never follows symlinks (a link a model planted
/// inside leads nowhere) and never recurses, so no depth the model made can crash it.
pub(super) fn remove_workspace_folder(folder: &Path) -> Result<(), WorkspaceError> {
    match fs::symlink_metadata(folder) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(WorkspaceError::io("inspect workspace folder", folder, e)),
        Ok(meta) if !meta.is_dir() => {
            tracing::warn!(folder = %folder.display(), "not removed: not a real folder");
            return Ok(());
        }
        Ok(_) => {}
    }
    if read_marker(folder).is_none() {
        tracing::warn!(folder = %folder.display(), "not removed: no workspace marker");
        return Ok(());
    }
    // The marker goes last: a removal that fails half-way leaves a folder the next run (or
    // `versus clean`) still recognises and tries again, never an unmarked one nobody removes.
    let entries = fs::read_dir(folder).map_err(|e| WorkspaceError::io("list", folder, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| WorkspaceError::io("list", folder, e))?;
        if entry.file_name() == MARKER {
            continue;
        }
        super::remove::remove_tree(&entry.path())
            .map_err(|e| WorkspaceError::io("remove workspace folder", folder, e))?;
    }
    super::remove::remove_tree(folder)
        .map_err(|e| WorkspaceError::io("remove workspace folder", folder, e))
}

/// A label safe in a folder name and a git ref name.
fn sanitize(label: &str) -> String {
    let s: String = label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '-'
            }
        })
        .take(40)
        .collect();
    if s.is_empty() { "ws".to_string() } else { s }
}

/// The last `max` bytes of `text` (on a char boundary), marked when cut.
fn tail(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    format!("[...]{}", &text[start..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitize_makes_ref_safe_labels() {
        assert_eq!(sanitize("openai/gpt-5#2"), "openai-gpt-5-2");
        assert_eq!(sanitize(""), "ws");
        assert_eq!(sanitize("a.b..lock"), "a-b--lock");
    }

    #[test]
    fn tail_keeps_the_end() {
        assert_eq!(tail("abcdef", 10), "abcdef");
        assert_eq!(tail("abcdef", 2), "[...]ef");
    }

    #[test]
    fn pid_zero_and_huge_are_dead_and_self_is_alive() {
        assert!(pid_is_dead(0));
        assert!(pid_is_dead(u32::MAX));
        assert!(!pid_is_dead(std::process::id()));
    }
}
