//! `worktree` isolation: a checkout of HEAD plus the user's uncommitted state, in a git
//! repository of its own.
//!
//! A linked `git worktree` shares refs, config, hooks, objects, index and stash with the
//! user's repository, and its `.git` file names the real project: whatever a model's
//! `git update-ref`, `git config core.fsmonitor` or new hook did landed in the user's
//! repository. So the workspace gets a private repository instead:
//!
//! - `tree/.git` is a fresh repository: its own config, hooks, index, refs and stash, HEAD
//!   detached at the user's HEAD, the user's branches, tags and remote-tracking refs copied as
//!   packed refs (so `git log main` and `git diff HEAD` work), the user's `info/exclude` copied;
//! - it borrows the user's objects through git's **alternates** (`objects/info/alternates`
//!   names the user's objects folder, and every folder the user's own repository borrows
//!   from): nothing is linked or copied, so no file of the workspace is the user's file under
//!   another name (a hard link shares the inode: whoever could write one name wrote the
//!   user's object). The sandbox mounts those folders read-only at their own paths, so git in
//!   the sandbox reads the user's history while every object the model makes (commits, `git
//!   gc`, `git repack`) lands in the workspace's own `objects/`;
//! - the checkout is written by `git read-tree -u` in the new repository, then the user's own
//!   state is laid on top using `git status` of their repository: every staged, unstaged or
//!   untracked-not-ignored path present in the [`Base`] is copied from the user's tree, and
//!   every path the status lists that the base lacks (a deleted tracked file) is deleted.
//!
//! Nothing is registered in the user's repository, so removing a workspace never touches it.
//! The alternates file names the user's objects folder (a path, not access: the folder is
//! read-only to commands and the rest of the repository stays hidden).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use git2::{Repository, RepositoryInitOptions, StatusOptions};

use super::base::Base;
use super::copy::{Donors, copy_paths, make_real_folder, remove_file_beneath};
use super::error::WorkspaceError;

/// Prefix of the worktrees (and temporary branches) older versions of versus registered in the
/// user's repository; only used to prune their leftovers.
pub(crate) const NAME_PREFIX: &str = "versus-ws-";

/// The most of the user's `info/exclude` copied into a workspace repository.
const EXCLUDE_CAP: u64 = 1 << 20;

/// How deep git itself follows alternates of alternates; the same bound here.
const ALTERNATES_DEPTH: usize = 5;

/// A private checkout versus created.
#[derive(Debug, Clone)]
pub(crate) struct CreatedCheckout {
    /// Where the project root lies inside the checkout (the project may be a subfolder of its
    /// repository).
    pub project_root: PathBuf,
    /// The user's repository working folder (kept out of the sandbox).
    pub user_workdir: PathBuf,
    /// The user's repository git folder (kept out of the sandbox).
    pub user_git_dir: PathBuf,
    /// The user's object folders the private repository borrows (mounted read-only in the
    /// sandbox).
    pub objects: Vec<PathBuf>,
}

/// Everything a private checkout is made from, read from the user's repository before
/// anything is written: what it will hold is a function of this plan and the [`Base`], so the
/// plan's [`CheckoutPlan::identity`] (with the base) names the checkout a cache may keep.
#[derive(Debug, Clone)]
pub(crate) struct CheckoutPlan {
    /// The user's repository working folder (canonical).
    workdir: PathBuf,
    /// The user's common git folder.
    git_dir: PathBuf,
    /// The commit checked out.
    head: git2::Oid,
    /// The project's place in the repository (empty at its root).
    prefix: PathBuf,
    /// The object folders borrowed through alternates.
    objects: Vec<PathBuf>,
    /// The user's branches, tags and remote-tracking refs, as written.
    packed_refs: Vec<u8>,
    /// The user's `info/exclude`, as copied (when readable).
    exclude: Option<Vec<u8>>,
}

impl CheckoutPlan {
    /// Where the project root lies inside the checkout.
    pub(crate) fn prefix(&self) -> &Path {
        &self.prefix
    }

    /// The bytes that, with the base, decide every byte of the checkout: the repository,
    /// the commit, the refs and exclude file copied, the folders borrowed, the project's
    /// place.
    pub(crate) fn identity(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let mut field = |bytes: &[u8]| {
            out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
            out.extend_from_slice(bytes);
        };
        field(self.workdir.as_os_str().as_encoded_bytes());
        field(self.git_dir.as_os_str().as_encoded_bytes());
        field(self.head.as_bytes());
        field(self.prefix.as_os_str().as_encoded_bytes());
        field(&self.packed_refs);
        field(self.exclude.as_deref().unwrap_or(b"\0none"));
        for folder in &self.objects {
            field(folder.as_os_str().as_encoded_bytes());
        }
        out
    }

    /// What the sandbox must know of it: the user's folders to hide, the objects to mount
    /// read-only.
    pub(crate) fn checkout_of(&self, tree: &Path) -> CreatedCheckout {
        CreatedCheckout {
            project_root: tree.join(&self.prefix),
            user_workdir: self.workdir.clone(),
            user_git_dir: self.git_dir.clone(),
            objects: self.objects.clone(),
        }
    }
}

/// Reads what a private checkout of the project would be made from; `None` when the project
/// is not in a git repository of its own with at least one commit (a copy then).
pub(crate) fn plan_checkout(base: &Base) -> Result<Option<CheckoutPlan>, WorkspaceError> {
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
    // A project its repository ignores (a folder under a dotfiles repository at home that
    // ignores `*`) is not in that repository's checkout, nor in its status: the capture takes
    // it under its own rules, and only a copy holds it.
    if super::base::ignored_by_repository(project, &workdir) {
        return Ok(None);
    }
    // A checkout holds the whole repository: right for a project that is a folder of it,
    // wrong for a folder the repository merely surrounds. Run in `~/Downloads/x` under a
    // dotfiles repository at home (`status.showUntrackedFiles=no`, nothing ignored), the
    // model's workspace held that repository's checkout, `../../.netrc` included. A project
    // folder HEAD does not hold is not that repository's: it gets a copy of its own files.
    if !prefix.as_os_str().is_empty() && !holds_folder(&head, prefix) {
        return Ok(None);
    }
    // A git folder outside the project must name it back, or the repository is not the
    // project's: an archive can ship `.git` as a file `gitdir: ~/private/.git`, or a `.git`
    // folder whose `commondir` is another repository, and its checkout would be that other
    // repository's files.
    let own = if project.starts_with(&workdir) {
        repository_is_its_own(&repo, &workdir)
    } else {
        Err("its working folder is elsewhere")
    };
    if let Err(why) = own {
        tracing::warn!(
            project = %project.display(),
            reason = why,
            "the project's git folder is not its own: the workspace is a copy"
        );
        return Ok(None);
    }
    let git_dir = repo.commondir().to_path_buf();
    let objects = borrowed_objects(&git_dir.join("objects"))?;
    // Read as a file of the repository's own, never through a link: an archive's
    // `.git/info/exclude -> ~/.ssh/id_ed25519` would put the key where the model reads it.
    let exclude = match crate::fsutil::read_capped_beneath(&git_dir, "info/exclude", EXCLUDE_CAP) {
        Ok(exclude) => Some(exclude),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => {
            tracing::warn!(
                git_dir = %git_dir.display(),
                error = %e,
                "info/exclude not copied to the workspace repository"
            );
            None
        }
    };
    Ok(Some(CheckoutPlan {
        prefix: prefix.to_path_buf(),
        head: head.id(),
        packed_refs: packed_refs(&repo),
        workdir,
        git_dir,
        objects,
        exclude,
    }))
}

/// Writes the checkout `plan` describes at `tree`: a fresh private repository, HEAD checked
/// out, the user's uncommitted state laid on top.
pub(crate) fn write_checkout(
    plan: &CheckoutPlan,
    base: &Base,
    tree: &Path,
) -> Result<(), WorkspaceError> {
    let repo = Repository::discover(base.root())
        .map_err(|e| WorkspaceError::git("open the repository", base.root(), e))?;
    write_commit_checkout(plan, tree)?;
    fill(&repo, base, tree, &plan.prefix)?;
    Ok(())
}

/// Writes the checkout of the commit alone at `tree`: a fresh private repository with HEAD
/// checked out and nothing of the user's uncommitted state (the copy-on-write layers lay that
/// on top, see `cow::layer`).
pub(crate) fn write_commit_checkout(
    plan: &CheckoutPlan,
    tree: &Path,
) -> Result<(), WorkspaceError> {
    fs::create_dir_all(tree).map_err(|e| WorkspaceError::io("create folder", tree, e))?;
    // Without git's template folder: its hook samples (or the user's `init.templateDir`
    // hooks) have no place in a model's repository, and copying them was most of the CPU of
    // setting a workspace up.
    let private =
        Repository::init_opts(tree, RepositoryInitOptions::new().external_template(false))
            .map_err(|e| WorkspaceError::git("create the workspace repository", tree, e))?;
    let private_git = private.path().to_path_buf();
    write_file(
        &private_git.join("objects/info/alternates"),
        &alternates_file(&plan.objects),
    )?;
    write_file(&private_git.join("packed-refs"), &plan.packed_refs)?;
    write_file(
        &private_git.join("HEAD"),
        format!("{}\n", plan.head).as_bytes(),
    )?;
    if let Some(exclude) = &plan.exclude {
        write_file(&private_git.join("info/exclude"), exclude)?;
    }
    checkout(tree)?;
    Ok(())
}

/// The paths (relative to the project, `/`-separated) the index of the private checkout at
/// `tree` holds below the project's place `prefix`: every file the commit checked out.
pub(crate) fn tracked_paths(tree: &Path, prefix: &Path) -> Result<Vec<String>, WorkspaceError> {
    let repo = Repository::open(tree)
        .map_err(|e| WorkspaceError::git("open the workspace repository", tree, e))?;
    let index = repo
        .index()
        .map_err(|e| WorkspaceError::git("read the workspace index", tree, e))?;
    let prefix = prefix
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/");
    let mut out = Vec::with_capacity(index.len());
    for entry in index.iter() {
        let Ok(path) = std::str::from_utf8(&entry.path) else {
            continue;
        };
        let rel = if prefix.is_empty() {
            Some(path)
        } else {
            path.strip_prefix(prefix.as_str())
                .and_then(|p| p.strip_prefix('/'))
        };
        if let Some(rel) = rel {
            out.push(rel.to_string());
        }
    }
    Ok(out)
}

/// `Ok` when the repository libgit2 found for `workdir` is that folder's own: its git folder
/// is `workdir/.git`; or it lies in the `.git/modules` of a folder above (a submodule's
/// `.git/modules/NAME`); or it is a linked worktree's (`COMMON/worktrees/NAME`) whose `gitdir`
/// file names `workdir/.git` back, as `git worktree add` writes it. Anything else is a git
/// folder the project only points at (a `.git` file or a `commondir` shipped in an archive),
/// and a checkout of it would hold another repository's files.
fn repository_is_its_own(repo: &Repository, workdir: &Path) -> Result<(), &'static str> {
    let canonical = |p: &Path| p.canonicalize().ok();
    let git_dir = canonical(repo.path()).ok_or("its git folder cannot be resolved")?;
    let common = canonical(repo.commondir()).ok_or("its common folder cannot be resolved")?;
    let dot_git = workdir.join(".git");
    let inside_a_dot_git_above = |dir: &Path| {
        workdir
            .ancestors()
            .skip(1)
            .any(|above| dir.starts_with(above.join(".git").join("modules")))
    };
    if git_dir == common {
        // `workdir/.git` itself, or a submodule's folder in the `.git` of a folder above.
        return if git_dir == dot_git || inside_a_dot_git_above(&git_dir) {
            Ok(())
        } else {
            Err("its git folder lies elsewhere and is not a submodule's")
        };
    }
    // A linked worktree: its folder must be one of the common folder's worktrees, and name
    // this project's `.git` back.
    if git_dir.parent() != Some(common.join("worktrees").as_path()) {
        return Err("its common folder does not list it as a worktree");
    }
    let named = read_small(&git_dir.join("gitdir")).map_err(|_| "its worktree has no gitdir")?;
    let named = Path::new(named.trim_end_matches(['\n', '\r']));
    let named = if named.is_absolute() {
        named.to_path_buf()
    } else {
        git_dir.join(named)
    };
    if canonical(&named).as_deref() == Some(dot_git.as_path()) {
        Ok(())
    } else {
        Err("its worktree does not name this project back")
    }
}

/// Whether the tree of `commit` has a folder at `prefix` (the project's place in it).
fn holds_folder(commit: &git2::Commit<'_>, prefix: &Path) -> bool {
    commit
        .tree()
        .ok()
        .and_then(|tree| tree.get_path(prefix).ok())
        .is_some_and(|entry| entry.kind() == Some(git2::ObjectType::Tree))
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<(), WorkspaceError> {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(|e| WorkspaceError::io("create folder", parent, e))?;
    }
    fs::write(path, bytes).map_err(|e| WorkspaceError::io("write", path, e))
}

/// The user's branches, tags and remote-tracking refs as a packed-refs file.
fn packed_refs(repo: &Repository) -> Vec<u8> {
    let mut lines: Vec<String> = Vec::new();
    if let Ok(refs) = repo.references() {
        for reference in refs.flatten() {
            let Ok(name) = reference.name() else {
                continue;
            };
            let wanted = ["refs/heads/", "refs/tags/", "refs/remotes/"]
                .iter()
                .any(|p| name.starts_with(p));
            if !wanted || name.starts_with(&format!("refs/heads/{NAME_PREFIX}")) {
                continue;
            }
            if let Some(target) = reference.target() {
                lines.push(format!("{target} {name}"));
            }
        }
    }
    lines.sort_by(|a, b| a.split(' ').nth(1).cmp(&b.split(' ').nth(1)));
    let mut out = String::from("# pack-refs with: sorted\n");
    for line in lines {
        out.push_str(&line);
        out.push('\n');
    }
    out.into_bytes()
}

/// Checks HEAD out into the new repository's tree and index with real git (faster than
/// libgit2's checkout on large trees). git runs with versus's environment minus every
/// `GIT_*` variable, so nothing redirects it to another repository.
fn checkout(tree: &Path) -> Result<(), WorkspaceError> {
    let mut command = Command::new("git");
    command
        .args(["read-tree", "--reset", "-u", "HEAD"])
        .current_dir(tree)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("GIT_") {
            command.env_remove(name);
        }
    }
    let out = command
        .output()
        .map_err(|e| WorkspaceError::io("run git read-tree in", tree, e))?;
    if !out.status.success() {
        return Err(WorkspaceError::io(
            "check out HEAD with git read-tree in",
            tree,
            io::Error::other(String::from_utf8_lossy(&out.stderr).trim().to_string()),
        ));
    }
    Ok(())
}

/// The object folders a private repository borrows: the user's own (`objects`) and, in git's
/// order, every folder it borrows from in turn (`objects/info/alternates`, relative lines
/// resolved against the folder naming them, followed as deep as git follows them). Each is
/// canonical, listed once, and must look like a repository's objects folder (a folder named
/// `objects` beside a `HEAD`): an alternates file is not part of a clone, but a repository
/// unpacked from an archive carries its `.git` whole, and a line naming `~/.ssh` must not
/// make that folder readable to commands. Such lines are skipped with a warning.
fn borrowed_objects(objects: &Path) -> Result<Vec<PathBuf>, WorkspaceError> {
    let first = objects
        .canonicalize()
        .map_err(|e| WorkspaceError::io("open the objects folder", objects, e))?;
    let mut out = vec![first.clone()];
    let mut frontier = vec![first];
    for _ in 0..ALTERNATES_DEPTH {
        let mut next = Vec::new();
        for folder in frontier {
            let list = folder.join("info").join("alternates");
            let Ok(text) = read_small(&list) else {
                continue;
            };
            for line in text.lines() {
                let line = line.trim_end_matches('\r');
                if line.is_empty() || line.starts_with('#') {
                    continue;
                }
                let named = folder.join(unquote(line));
                match named.canonicalize() {
                    Ok(found) if looks_like_objects(&found) => {
                        if !out.contains(&found) {
                            out.push(found.clone());
                            next.push(found);
                        }
                    }
                    _ => tracing::warn!(
                        alternates = %list.display(),
                        line = %line.escape_debug(),
                        "not borrowed: not a repository's objects folder"
                    ),
                }
            }
        }
        if next.is_empty() {
            break;
        }
        frontier = next;
    }
    Ok(out)
}

/// Reads a small file of a repository's git folder (an alternates list, a worktree's
/// `gitdir`): a regular file of at most 64 KiB, never a fifo or device.
fn read_small(path: &Path) -> io::Result<String> {
    crate::fsutil::read_capped_string(path, 64 * 1024)
}

/// A real folder named `objects` whose parent holds a `HEAD`, as every git folder does.
fn looks_like_objects(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n == "objects")
        && fs::symlink_metadata(path).is_ok_and(|m| m.is_dir())
        && path
            .parent()
            .is_some_and(|git| fs::symlink_metadata(git.join("HEAD")).is_ok_and(|m| m.is_file()))
}

/// A line of an alternates file as git reads it: C-quoted when it starts with `"`.
fn unquote(line: &str) -> PathBuf {
    use std::os::unix::ffi::OsStringExt;
    let Some(inner) = line.strip_prefix('"').and_then(|l| l.strip_suffix('"')) else {
        return PathBuf::from(line);
    };
    let mut bytes = Vec::new();
    let mut chars = inner.bytes().peekable();
    while let Some(b) = chars.next() {
        if b != b'\\' {
            bytes.push(b);
            continue;
        }
        match chars.next() {
            Some(b'n') => bytes.push(b'\n'),
            Some(b't') => bytes.push(b'\t'),
            Some(d @ b'0'..=b'7') => {
                let mut value = u32::from(d - b'0');
                for _ in 0..2 {
                    match chars.peek() {
                        Some(&o @ b'0'..=b'7') => {
                            value = value * 8 + u32::from(o - b'0');
                            chars.next();
                        }
                        _ => break,
                    }
                }
                bytes.push((value & 0xff) as u8);
            }
            Some(other) => bytes.push(other),
            None => bytes.push(b'\\'),
        }
    }
    PathBuf::from(std::ffi::OsString::from_vec(bytes))
}

/// The private repository's `objects/info/alternates`: one absolute folder per line, C-quoted
/// (as git writes and reads it) when the path holds a newline, a quote or a backslash, or
/// does not start with `/`.
fn alternates_file(folders: &[PathBuf]) -> Vec<u8> {
    let mut out = Vec::new();
    for folder in folders {
        let bytes = folder.as_os_str().as_encoded_bytes();
        let plain = bytes.first() == Some(&b'/')
            && !bytes
                .iter()
                .any(|b| matches!(b, b'\n' | b'"' | b'\\' | b'\r'));
        if plain {
            out.extend_from_slice(bytes);
        } else {
            out.push(b'"');
            for &b in bytes {
                match b {
                    b'\n' => out.extend_from_slice(b"\\n"),
                    b'"' => out.extend_from_slice(b"\\\""),
                    b'\\' => out.extend_from_slice(b"\\\\"),
                    b'\r' => out.extend_from_slice(b"\\015"),
                    _ => out.push(b),
                }
            }
            out.push(b'"');
        }
        out.push(b'\n');
    }
    out
}

/// Lays the user's uncommitted state (staged, unstaged, untracked-not-ignored, deletions) on
/// the new checkout.
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
    // Deletions first, then copies, and neither through a link: the checkout is HEAD, which
    // the repository wrote. A path the user replaced (a committed link `a` that is a folder
    // `a/` in their tree) is a deletion of the link and copies into a real folder; a deleted
    // `a/b` below a committed link `a` is outside the checkout and stays untouched.
    make_real_folder(tree, &prefix_str)?;
    for rel in to_delete {
        remove_file_beneath(&project_root, &rel)?;
    }
    let refs: Vec<&str> = to_copy.iter().map(String::as_str).collect();
    copy_paths(base, base.root(), &project_root, &refs, Donors::None)?;
    Ok(())
}

/// Prunes the registrations of worktrees that older versions of versus added to the user's
/// repository, when their owner process is dead. Only the registration (`.git/worktrees/NAME`)
/// is removed: the folder its `gitdir` file names is never touched, whatever it says.
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
        if !owner_pid(name).is_some_and(&is_dead) {
            continue;
        }
        let admin = git_dir.join("worktrees").join(name);
        match fs::symlink_metadata(&admin) {
            Ok(meta) if meta.is_dir() => {
                fs::remove_dir_all(&admin).map_err(|e| {
                    WorkspaceError::io("remove the worktree registration", &admin, e)
                })?;
                pruned += 1;
            }
            _ => continue,
        }
        if let Ok(mut branch) = repo.find_branch(name, git2::BranchType::Local) {
            let _ = branch.delete();
        }
    }
    Ok(pruned)
}

/// The pid encoded in an old versus worktree name (`versus-ws-<pid>-...`).
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
    fn borrowed_objects_follow_real_alternates_and_skip_anything_else() {
        let d = tempfile::tempdir().unwrap();
        let top = d.path().canonicalize().unwrap();
        let repo = |name: &str| {
            let git = top.join(name);
            fs::create_dir_all(git.join("objects/info")).unwrap();
            fs::write(git.join("HEAD"), "ref: refs/heads/main\n").unwrap();
            git.join("objects")
        };
        let user = repo("user.git");
        let shared = repo("shared.git");
        let deeper = repo("deeper.git");
        let secrets = top.join("home/.ssh");
        fs::create_dir_all(&secrets).unwrap();
        fs::write(
            user.join("info/alternates"),
            format!(
                "# a comment\n../../shared.git/objects\n{}\n\"{}\"\n{}\n",
                secrets.display(),
                deeper.display(),
                top.join("missing/objects").display()
            ),
        )
        .unwrap();
        // Followed as git follows them, each once.
        fs::write(
            shared.join("info/alternates"),
            format!("{}\n", user.display()),
        )
        .unwrap();
        let found = borrowed_objects(&user).unwrap();
        assert_eq!(found, vec![user.clone(), shared, deeper]);
        // The file git reads back names exactly those, quoted when needed.
        let odd = top.join("a\"b");
        let text = alternates_file(&[user.clone(), odd.clone()]);
        let lines: Vec<&[u8]> = text
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .collect();
        assert_eq!(lines[0], user.as_os_str().as_encoded_bytes());
        assert_eq!(unquote(std::str::from_utf8(lines[1]).unwrap()), odd);
    }

    #[test]
    fn owner_pid_parses_only_versus_names() {
        assert_eq!(owner_pid("versus-ws-1234-gpt-5-0"), Some(1234));
        assert_eq!(owner_pid("versus-1234"), None);
        assert_eq!(owner_pid("feature-x"), None);
        assert_eq!(owner_pid("versus-ws-abc-1"), None);
    }
}
