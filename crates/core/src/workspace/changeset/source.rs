//! Where a change set gets the base content of the files a model changed.
//!
//! A [`Base`] keeps only hashes, which is what makes capture cheap. The bytes are needed only
//! for the few paths a model changed, and only once it finishes, so they are fetched then and
//! checked against the base hash: from the user's tree (usually untouched during the run), from
//! the git index or HEAD (a file committed or staged at run start), then from any fallback
//! folder that started from the same base (another model's workspace that left the file alone).
//! A source that returns bytes with a different hash is never believed.

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock, PoisonError};

use crate::workspace::base::hash_bytes;
use crate::workspace::{Base, BaseEntry};

/// Supplies the content a path had when the base was captured, or `None` when it cannot.
/// Implemented by [`BaseReader`]; tests and callers with their own cache can implement it too
/// (closures `Fn(&str, &BaseEntry) -> Option<Vec<u8>>` do). `Sync`: a large change set reads
/// its base content from several threads at once.
pub trait BaseSource: Sync {
    /// The bytes `path` had at base time (for a symlink: its target path), if available.
    fn base_content(&self, path: &str, entry: &BaseEntry) -> Option<Vec<u8>>;
}

impl<F: Fn(&str, &BaseEntry) -> Option<Vec<u8>> + Sync> BaseSource for F {
    fn base_content(&self, path: &str, entry: &BaseEntry) -> Option<Vec<u8>> {
        self(path, entry)
    }
}

/// The default [`BaseSource`]: the user's tree, then git, then fallback folders, each answer
/// verified against the base hash.
pub struct BaseReader {
    project: PathBuf,
    fallbacks: Vec<PathBuf>,
    /// Opened on first need; behind a lock because a repository handle is not `Sync` (git is
    /// only the fallback when the user's tree no longer holds a file's base content).
    git: OnceLock<Option<Mutex<GitBlobs>>>,
}

/// The project's repository and where the project sits inside it.
struct GitBlobs {
    repo: git2::Repository,
    prefix: PathBuf,
}

impl fmt::Debug for BaseReader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BaseReader")
            .field("project", &self.project)
            .field("fallbacks", &self.fallbacks)
            .finish_non_exhaustive()
    }
}

impl BaseReader {
    /// Reads from `base`'s project folder and its git repository (if any).
    pub fn new(base: &Base) -> Self {
        Self {
            project: base.root().to_path_buf(),
            fallbacks: Vec::new(),
            git: OnceLock::new(),
        }
    }

    /// Also looks in `root`, a folder that started from the same base (e.g. another model's
    /// workspace root), when the user's tree and git no longer hold a file's base content.
    pub fn with_fallback(mut self, root: &Path) -> Self {
        self.fallbacks.push(root.to_path_buf());
        self
    }

    fn read_git(&self, path: &str, entry: &BaseEntry) -> Option<Vec<u8>> {
        let git = self
            .git
            .get_or_init(|| open_repo(&self.project).map(Mutex::new))
            .as_ref()?
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let rel = git.prefix.join(path);
        if let Ok(index) = git.repo.index()
            && let Some(staged) = index.get_path(&rel, 0)
            && let Ok(blob) = git.repo.find_blob(staged.id)
            && hash_bytes(blob.content()) == entry.hash
        {
            return Some(blob.content().to_vec());
        }
        let tree = git.repo.head().ok()?.peel_to_tree().ok()?;
        let id = tree.get_path(&rel).ok()?.id();
        let blob = git.repo.find_blob(id).ok()?;
        (hash_bytes(blob.content()) == entry.hash).then(|| blob.content().to_vec())
    }
}

impl BaseSource for BaseReader {
    fn base_content(&self, path: &str, entry: &BaseEntry) -> Option<Vec<u8>> {
        if let Some(bytes) = read_verified(&self.project, path, entry) {
            return Some(bytes);
        }
        if let Some(bytes) = self.read_git(path, entry) {
            return Some(bytes);
        }
        self.fallbacks
            .iter()
            .find_map(|root| read_verified(root, path, entry))
    }
}

/// Reads `root/path` the way base capture hashed it (a symlink's target, a file's bytes) and
/// returns it only if the hash still matches.
fn read_verified(root: &Path, path: &str, entry: &BaseEntry) -> Option<Vec<u8>> {
    let abs = root.join(path);
    let meta = fs::symlink_metadata(&abs).ok()?;
    let bytes = if meta.file_type().is_symlink() {
        fs::read_link(&abs)
            .ok()?
            .into_os_string()
            .into_encoded_bytes()
    } else if meta.is_file() {
        fs::read(&abs).ok()?
    } else {
        return None;
    };
    (hash_bytes(&bytes) == entry.hash).then_some(bytes)
}

fn open_repo(project: &Path) -> Option<GitBlobs> {
    let repo = git2::Repository::discover(project).ok()?;
    let workdir = repo.workdir()?.canonicalize().ok()?;
    let prefix = project.strip_prefix(&workdir).ok()?.to_path_buf();
    Some(GitBlobs { repo, prefix })
}
