//! `worktree` isolation: a git worktree at HEAD plus the user's uncommitted state.
//!
//! libgit2 checks out HEAD into a private folder (cheaper than copying: git writes only the
//! committed files, and build folders are never there). The user's own state is then laid on
//! top using `git status` of their repository: every staged, unstaged or untracked-not-ignored
//! path present in the [`Base`] is copied from the user's tree, and every path the status lists
//! that the base lacks (a deleted tracked file) is deleted, so the worktree shows exactly what
//! the user sees. Tracked files that an ignore rule matches stay in the worktree (git has them),
//! but neither the base nor the bash-change scan looks at them, so they never become proposals.
//!
//! libgit2 cannot add a detached worktree, so the worktree is added on a branch named after it,
//! its HEAD is then detached at the same commit and the branch deleted: the user's repository
//! gains no branch. Every name starts with `versus-ws-<pid>-` so a crashed run's leftovers can
//! be recognised and pruned without touching anything of the user's.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use git2::{BranchType, Repository, StatusOptions, WorktreePruneOptions};

use super::base::Base;
use super::copy::copy_paths;
use super::error::WorkspaceError;

/// Prefix of every worktree (and temporary branch) name versus creates.
pub(crate) const NAME_PREFIX: &str = "versus-ws-";

/// A worktree versus created: enough to remove it and its registration later.
#[derive(Debug, Clone)]
pub(crate) struct CreatedWorktree {
    /// The repository's common git dir (the main `.git`), to reopen it for pruning.
    pub git_dir: PathBuf,
    /// The worktree's name in `.git/worktrees/`.
    pub name: String,
    /// Where the project root lies inside the worktree (the project may be a subfolder of
    /// its repository).
    pub project_root: PathBuf,
}

/// Adds a worktree named `name` at `tree` for the repository holding `base.root()` and lays
/// the user's uncommitted state on it. Returns `None` when the project is not in a git
/// repository with at least one commit (the caller then falls back to a plain copy).
pub(crate) fn create_worktree(
    base: &Base,
    tree: &Path,
    name: &str,
) -> Result<Option<CreatedWorktree>, WorkspaceError> {
    let project = base.root();
    let Ok(repo) = Repository::discover(project) else {
        return Ok(None);
    };
    let Some(workdir) = repo.workdir().and_then(|w| w.canonicalize().ok()) else {
        return Ok(None);
    };
    let Some(head) = repo.head().ok().and_then(|h| h.peel_to_commit().ok()) else {
        return Ok(None);
    };
    let prefix = project.strip_prefix(&workdir).unwrap_or(Path::new(""));
    let git_dir = repo.commondir().to_path_buf();

    let created = CreatedWorktree {
        git_dir: git_dir.clone(),
        name: name.to_string(),
        project_root: tree.join(prefix),
    };
    {
        // libgit2 reads every worktree's HEAD while adding one; two adds racing in the same
        // repository make it see a half-written HEAD ("already checked out"). Adding and
        // detaching are quick; the copying below runs in parallel.
        let _serial = ADD_LOCK
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        repo.worktree(name, tree, None)
            .map_err(|e| WorkspaceError::git("add a worktree", project, e))?;
        if let Err(err) = detach(&repo, tree, name, head.id()) {
            let _ = remove_worktree_locked(&created.git_dir, name);
            return Err(err);
        }
    }
    if let Err(err) = fill(&repo, base, tree, prefix) {
        let _ = remove_worktree(&created.git_dir, name);
        return Err(err);
    }
    Ok(Some(created))
}

/// Serialises worktree additions within this process (see [`create_worktree`]).
static ADD_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Detaches the new worktree's HEAD and drops the temporary branch.
fn detach(
    repo: &Repository,
    tree: &Path,
    name: &str,
    head: git2::Oid,
) -> Result<(), WorkspaceError> {
    let wt_repo =
        Repository::open(tree).map_err(|e| WorkspaceError::git("open the worktree", tree, e))?;
    wt_repo
        .set_head_detached(head)
        .map_err(|e| WorkspaceError::git("detach the worktree HEAD", tree, e))?;
    if let Ok(mut branch) = repo.find_branch(name, BranchType::Local) {
        branch
            .delete()
            .map_err(|e| WorkspaceError::git("delete the temporary branch", tree, e))?;
    }
    Ok(())
}

/// Lays the user's uncommitted state (staged, unstaged, untracked-not-ignored, deletions) on
/// the new worktree.
fn fill(repo: &Repository, base: &Base, tree: &Path, prefix: &Path) -> Result<(), WorkspaceError> {
    let mut opts = StatusOptions::new();
    opts.include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_ignored(false)
        .exclude_submodules(true)
        .renames_head_to_index(false)
        .renames_index_to_workdir(false);
    let statuses = repo
        .statuses(Some(&mut opts))
        .map_err(|e| WorkspaceError::git("read the status", base.root(), e))?;
    let prefix_str = prefix
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/");
    let mut to_copy: Vec<String> = Vec::new();
    let mut to_delete: Vec<String> = Vec::new();
    for entry in statuses.iter() {
        let Ok(path) = entry.path() else { continue };
        let rel = if prefix_str.is_empty() {
            path
        } else {
            match path
                .strip_prefix(prefix_str.as_str())
                .and_then(|p| p.strip_prefix('/'))
            {
                Some(rel) => rel,
                None => continue,
            }
        };
        if base.contains(rel) {
            to_copy.push(rel.to_string());
        } else {
            to_delete.push(rel.to_string());
        }
    }
    let project_root = tree.join(prefix);
    let refs: Vec<&str> = to_copy.iter().map(String::as_str).collect();
    copy_paths(base, base.root(), &project_root, &refs)?;
    for rel in to_delete {
        let path = project_root.join(&rel);
        match fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(WorkspaceError::io("delete", path, e)),
        }
    }
    Ok(())
}

/// Prunes the worktree `name` of the repository at `git_dir` (its registration and its
/// folder) and deletes a leftover temporary branch of the same name. A worktree that is
/// already gone is not an error. Serialised with worktree additions: libgit2 reads every
/// worktree's HEAD while adding one, and a prune running at that moment made an addition fail
/// ("already checked out") when `versus run` finished some jobs while starting others.
pub(crate) fn remove_worktree(git_dir: &Path, name: &str) -> Result<(), WorkspaceError> {
    let _serial = ADD_LOCK
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    remove_worktree_locked(git_dir, name)
}

/// [`remove_worktree`] for a caller that already holds `ADD_LOCK`.
fn remove_worktree_locked(git_dir: &Path, name: &str) -> Result<(), WorkspaceError> {
    let repo = match Repository::open(git_dir) {
        Ok(repo) => repo,
        Err(e) if e.code() == git2::ErrorCode::NotFound => return Ok(()),
        Err(e) => return Err(WorkspaceError::git("open the repository", git_dir, e)),
    };
    if let Ok(wt) = repo.find_worktree(name) {
        let mut opts = WorktreePruneOptions::new();
        opts.valid(true).working_tree(true).locked(true);
        wt.prune(Some(&mut opts))
            .map_err(|e| WorkspaceError::git("prune the worktree", git_dir, e))?;
    }
    if let Ok(mut branch) = repo.find_branch(name, BranchType::Local) {
        // Only reached after a crash between adding the worktree and deleting the branch.
        let _ = branch.delete();
    }
    Ok(())
}

/// Prunes the worktrees of the repository holding `project` that versus created in a
/// process that no longer runs (`is_dead(pid)`), whatever state their folder is in.
pub(crate) fn prune_dead_worktrees(
    project: &Path,
    is_dead: impl Fn(u32) -> bool,
) -> Result<usize, WorkspaceError> {
    let Ok(repo) = Repository::discover(project) else {
        return Ok(0);
    };
    let git_dir = repo.commondir().to_path_buf();
    let names = repo
        .worktrees()
        .map_err(|e| WorkspaceError::git("list worktrees", &git_dir, e))?;
    let mut pruned = 0;
    for name in names.iter().flatten().flatten() {
        if owner_pid(name).is_some_and(&is_dead) {
            remove_worktree(&git_dir, name)?;
            pruned += 1;
        }
    }
    Ok(pruned)
}

/// The pid encoded in a versus worktree name (`versus-ws-<pid>-...`).
pub(crate) fn owner_pid(name: &str) -> Option<u32> {
    name.strip_prefix(NAME_PREFIX)?
        .split('-')
        .next()?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owner_pid_parses_only_versus_names() {
        assert_eq!(owner_pid("versus-ws-1234-gpt-5-0"), Some(1234));
        assert_eq!(owner_pid("versus-1234"), None);
        assert_eq!(owner_pid("feature-x"), None);
        assert_eq!(owner_pid("versus-ws-abc-1"), None);
    }
}
