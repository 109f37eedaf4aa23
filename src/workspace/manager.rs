//! [`Workspace`]: one model entry's private copy of the project, from creation to removal.
//!
//! Each workspace lives in a folder versus owns, `<parent>/<pid>-<label>-<n>/`, holding a small
//! marker (`versus-workspace.json`: owner pid, project, worktree name) and the tree itself in
//! `tree/`. The marker is written before the tree, so a run that crashes at any point leaves
//! something [`cleanup_leftovers`] can recognise: a folder whose owner pid is dead is deleted and
//! its git worktree registration pruned. A live workspace is removed on drop unless
//! [`Workspace::keep`] was called (the user wants to look around in it).
//!
//! The view a workspace hands to tools is always a [`RecordingView`], so every write becomes a
//! proposal: over a scratch [`DirectView`] of the tree in worktree and copy modes, over an
//! [`OverlayView`] of the real project in overlay mode (which has no folder at all).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
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
use super::worktree::{CreatedWorktree, NAME_PREFIX, create_worktree, prune_dead_worktrees};

/// Name of the marker file in each workspace folder.
const MARKER: &str = "versus-workspace.json";

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
    /// No copy: changes in memory over the real tree (bash then runs in the real tree).
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
    worktree: Option<String>,
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
}

/// What a workspace owns on disk; removed on drop unless kept. Built before anything is
/// created, so a creation that fails half-way cleans up after itself.
#[derive(Debug, Default)]
struct Owned {
    folder: Option<PathBuf>,
    worktree: Option<CreatedWorktree>,
    keep: bool,
}

impl Owned {
    fn remove_now(&mut self) -> Result<(), WorkspaceError> {
        if let Some(wt) = self.worktree.take() {
            super::worktree::remove_worktree(&wt.git_dir, &wt.name)?;
        }
        if let Some(folder) = self.folder.take() {
            remove_folder(&folder)?;
        }
        Ok(())
    }
}

impl Drop for Owned {
    fn drop(&mut self) {
        if !self.keep {
            let _ = self.remove_now();
        }
    }
}

/// The folder all workspaces live under by default: `<temp>/versus-workspaces`.
pub fn default_parent() -> PathBuf {
    std::env::temp_dir().join("versus-workspaces")
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
            });
        }
        fs::create_dir_all(parent).map_err(|e| WorkspaceError::io("create folder", parent, e))?;
        let pid = std::process::id();
        let label = sanitize(label);
        let (folder, n) = loop {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let folder = parent.join(format!("{pid}-{label}-{n}"));
            match fs::create_dir(&folder) {
                Ok(()) => break (folder, n),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(WorkspaceError::io("create folder", folder, e)),
            }
        };
        // From here on, a failure must not leave the folder behind.
        let mut owned = Owned::default();
        owned.folder = Some(folder.clone());
        let worktree_name = format!("{NAME_PREFIX}{pid}-{label}-{n}");
        let marker = Marker {
            pid,
            project: base.root().to_path_buf(),
            worktree: (mode == Isolation::Worktree).then(|| worktree_name.clone()),
        };
        let marker_path = folder.join(MARKER);
        let json = serde_json::to_vec_pretty(&marker)
            .map_err(|e| WorkspaceError::io("write marker", &marker_path, io::Error::other(e)))?;
        fs::write(&marker_path, json)
            .map_err(|e| WorkspaceError::io("write marker", &marker_path, e))?;

        let tree = folder.join("tree");
        let mut root = tree.clone();
        let mut used = Isolation::Copy;
        if mode == Isolation::Worktree
            && let Some(created) = create_worktree(base, &tree, &worktree_name)?
        {
            root = created.project_root.clone();
            owned.worktree = Some(created);
            used = Isolation::Worktree;
        }
        if used == Isolation::Copy {
            copy_tree(base, base.root(), &tree)?;
        }
        // A project folder with no committed file is absent from a fresh worktree.
        fs::create_dir_all(&root).map_err(|e| WorkspaceError::io("create folder", &root, e))?;
        let view =
            DirectView::scratch(&root).map_err(|e| WorkspaceError::io("open folder", &root, e))?;
        Ok(Self {
            mode: used,
            root: view.root().to_path_buf(),
            recorder: Recorder::Disk(Arc::new(RecordingView::new(view))),
            owned,
        })
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

    /// Runs the setup command (e.g. `npm ci`) once with `bash -c` in the workspace root and
    /// returns its output; a failure names the command and its exit status. A command still
    /// running after [`SETUP_TIMEOUT`] is killed with its whole process group and reported as
    /// timed out, so a hanging setup cannot hold a run forever. Blocking: call it from
    /// `spawn_blocking` in async code.
    pub fn run_setup(&self, command: &str) -> Result<String, WorkspaceError> {
        self.run_setup_within(command, SETUP_TIMEOUT)
    }

    /// [`Workspace::run_setup`] with another time limit.
    pub fn run_setup_within(
        &self,
        command: &str,
        timeout: std::time::Duration,
    ) -> Result<String, WorkspaceError> {
        use std::io::Read;
        use std::os::unix::process::CommandExt;
        let mut child = Command::new("bash")
            .arg("-c")
            .arg(command)
            .current_dir(&self.root)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .map_err(|e| {
                WorkspaceError::io("start bash for the setup command in", &self.root, e)
            })?;
        // Drain both pipes on threads so a chatty command cannot block on a full pipe.
        let drain = |pipe: Option<Box<dyn Read + Send>>| {
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                if let Some(mut pipe) = pipe {
                    let _ = pipe.read_to_end(&mut buf);
                }
                buf
            })
        };
        let out = drain(
            child
                .stdout
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
        );
        let err = drain(
            child
                .stderr
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
        );
        let started = std::time::Instant::now();
        let mut timed_out = false;
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) if started.elapsed() >= timeout => {
                    timed_out = true;
                    let pgid = nix::unistd::Pid::from_raw(child.id() as i32);
                    let _ = nix::sys::signal::killpg(pgid, nix::sys::signal::Signal::SIGKILL);
                    let _ = child.wait();
                    break None;
                }
                Ok(None) => std::thread::sleep(std::time::Duration::from_millis(20)),
                Err(e) => {
                    return Err(WorkspaceError::io(
                        "wait for the setup command in",
                        &self.root,
                        e,
                    ));
                }
            }
        };
        let mut text = String::from_utf8_lossy(&out.join().unwrap_or_default()).into_owned();
        text.push_str(&String::from_utf8_lossy(&err.join().unwrap_or_default()));
        let status = match status {
            Some(status) if status.success() => return Ok(text),
            Some(status) => match status.code() {
                Some(code) => format!("exit code {code}"),
                None => "killed by a signal".to_string(),
            },
            None => {
                debug_assert!(timed_out);
                format!(
                    "timed out after {:.1} s and was killed",
                    timeout.as_secs_f64()
                )
            }
        };
        Err(WorkspaceError::Setup {
            command: command.to_string(),
            dir: self.root.clone(),
            status,
            output: tail(&text, SETUP_OUTPUT_TAIL),
        })
    }

    /// Keeps the workspace on disk after drop (`--keep-workspaces`, "open workspace").
    pub fn keep(&mut self) {
        self.owned.keep = true;
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

/// Removes every workspace folder under `parent` whose owner process is dead, pruning its
/// git worktree registration, then prunes versus worktrees of `project`'s repository whose
/// owner is dead (their folder may already be gone). Folders of live runs and folders
/// without a readable marker are left alone. Returns how many folders were removed.
pub fn cleanup_leftovers_in(parent: &Path, project: &Path) -> Result<usize, WorkspaceError> {
    let mut removed = 0;
    let entries = match fs::read_dir(parent) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return prune_only(project, removed),
        Err(e) => return Err(WorkspaceError::io("list", parent, e)),
    };
    for entry in entries.flatten() {
        let folder = entry.path();
        let Ok(bytes) = fs::read(folder.join(MARKER)) else {
            continue;
        };
        let Ok(marker) = serde_json::from_slice::<Marker>(&bytes) else {
            continue;
        };
        if !pid_is_dead(marker.pid) {
            continue;
        }
        if let Some(name) = &marker.worktree
            && let Ok(repo) = git2::Repository::discover(&marker.project)
        {
            super::worktree::remove_worktree(repo.commondir(), name)?;
        }
        remove_folder(&folder)?;
        removed += 1;
    }
    prune_only(project, removed)
}

fn prune_only(project: &Path, removed: usize) -> Result<usize, WorkspaceError> {
    prune_dead_worktrees(project, pid_is_dead)?;
    Ok(removed)
}

/// True when no process has this pid (pid 0 or an out-of-range pid counts as dead: it cannot
/// be a versus run, and signalling pid 0 would mean our own process group).
fn pid_is_dead(pid: u32) -> bool {
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

fn remove_folder(folder: &Path) -> Result<(), WorkspaceError> {
    match fs::remove_dir_all(folder) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(WorkspaceError::io("remove workspace folder", folder, e)),
    }
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
