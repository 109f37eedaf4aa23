//! Finding and creating the `.versus/` folder and its sessions.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::clock::now;

/// Why the project's store could not be used. Texts say what to do.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// A filesystem operation failed.
    #[error("could not {op} {}: {source}", path.display())]
    Io {
        /// What was being done.
        op: &'static str,
        /// Where.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// No session matches the id or prefix given.
    #[error("no session matches `{0}`; `versus sessions` lists them")]
    NoSuchSession(String),
    /// The prefix matches several sessions.
    #[error("`{prefix}` matches several sessions ({matches}); give more characters")]
    Ambiguous {
        /// The prefix given.
        prefix: String,
        /// The matching ids.
        matches: String,
    },
    /// The project has no session yet.
    #[error("this project has no versus session yet (nothing in {})", .0.display())]
    NoSessions(PathBuf),
}

fn io_err(op: &'static str, path: &Path) -> impl FnOnce(io::Error) -> SessionError + use<> {
    let path = path.to_path_buf();
    move |source| SessionError::Io { op, path, source }
}

/// The `.versus/` folder of one project.
#[derive(Debug, Clone)]
pub struct Store {
    project: PathBuf,
    root: PathBuf,
}

impl Store {
    /// Opens the store of `project`, creating `.versus/` on first use and listing it in the
    /// repository's `info/exclude` so it never shows in `git status`. The exclude goes to the
    /// repository's common folder, the one git reads for every linked worktree too (a
    /// worktree's own `.git/worktrees/NAME/info/exclude` is ignored by git).
    pub fn open(project: &Path) -> Result<Self, SessionError> {
        let project = project
            .canonicalize()
            .map_err(io_err("open the project folder", project))?;
        let root = project.join(".versus");
        fs::create_dir_all(root.join("sessions")).map_err(io_err("create", &root))?;
        // Until it is known to be done: a `.versus/` made by an older version in a linked
        // worktree had its exclude written where git never reads it. The marker spares every
        // later start a repository discovery.
        let marker = root.join(EXCLUDED_MARKER);
        if !marker.exists() && exclude_from_git(&project) {
            let _ = fs::write(&marker, b"");
        }
        Ok(Self { project, root })
    }

    /// The project root.
    pub fn project(&self) -> &Path {
        &self.project
    }

    /// `.versus/`.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `.versus/preferences.jsonl`.
    pub fn preferences(&self) -> PathBuf {
        self.root.join("preferences.jsonl")
    }

    /// `.versus/history.jsonl`.
    pub fn history(&self) -> PathBuf {
        self.root.join("history.jsonl")
    }

    /// `.versus/reports/`.
    pub fn reports(&self) -> PathBuf {
        self.root.join("reports")
    }

    /// Creates a new session folder and returns `(id, folder)`. Ids sort by creation time.
    pub fn new_session(&self) -> Result<(String, PathBuf), SessionError> {
        let stamp = now().compact();
        let sessions = self.root.join("sessions");
        for n in 0..1000u32 {
            let id = if n == 0 {
                format!("{stamp}-{:04x}", std::process::id() & 0xffff)
            } else {
                format!("{stamp}-{:04x}-{n}", std::process::id() & 0xffff)
            };
            let dir = sessions.join(&id);
            match fs::create_dir(&dir) {
                Ok(()) => return Ok((id, dir)),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(io_err("create", &dir)(e)),
            }
        }
        Err(io_err("create a session in", &sessions)(io::Error::other(
            "too many sessions created in the same second",
        )))
    }

    /// Session ids, oldest first.
    pub fn sessions(&self) -> Result<Vec<String>, SessionError> {
        let dir = self.root.join("sessions");
        let mut ids: Vec<String> = fs::read_dir(&dir)
            .map_err(io_err("list", &dir))?
            .flatten()
            .filter(|e| e.path().is_dir())
            .filter_map(|e| e.file_name().into_string().ok())
            .collect();
        ids.sort();
        Ok(ids)
    }

    /// The folder of the session `id`, or of the latest session. A unique prefix is enough, and
    /// so is a unique ending: the header shows a session by the short ending of its id
    /// (`session ab12`), which must be something `--resume` takes.
    pub fn session(&self, id: Option<&str>) -> Result<(String, PathBuf), SessionError> {
        let ids = self.sessions()?;
        let chosen = match id {
            None => ids
                .last()
                .cloned()
                .ok_or_else(|| SessionError::NoSessions(self.root.join("sessions")))?,
            Some(prefix) => {
                if ids.iter().any(|i| i == prefix) {
                    prefix.to_string()
                } else {
                    let mut matches: Vec<&String> =
                        ids.iter().filter(|i| i.starts_with(prefix)).collect();
                    if matches.is_empty() {
                        matches = ids.iter().filter(|i| i.ends_with(prefix)).collect();
                    }
                    match matches.as_slice() {
                        [] => return Err(SessionError::NoSuchSession(prefix.to_string())),
                        [one] => (*one).clone(),
                        many => {
                            return Err(SessionError::Ambiguous {
                                prefix: prefix.to_string(),
                                matches: many
                                    .iter()
                                    .map(|s| s.as_str())
                                    .collect::<Vec<_>>()
                                    .join(", "),
                            });
                        }
                    }
                }
            }
        };
        let dir = self.root.join("sessions").join(&chosen);
        Ok((chosen, dir))
    }
}

/// File in `.versus/` saying the exclude is in place (in the repository's common folder).
const EXCLUDED_MARKER: &str = ".git-excluded";

/// Adds `.versus/` to the repository's info/exclude (best effort: outside git, or with a
/// read-only `.git`, there is nothing to hide it from or nothing we may change). Returns
/// whether the exclude is in place now.
fn exclude_from_git(project: &Path) -> bool {
    let Ok(repo) = git2::Repository::discover(project) else {
        return false;
    };
    let info = repo.commondir().join("info");
    let exclude = info.join("exclude");
    let current = fs::read_to_string(&exclude).unwrap_or_default();
    if current.lines().any(|l| l.trim() == ".versus/") {
        return true;
    }
    let mut text = current;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(".versus/\n");
    let _ = fs::create_dir_all(&info);
    crate::fsutil::atomic_write(&exclude, text.as_bytes()).is_ok()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn sessions_are_created_found_by_prefix_and_latest() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        assert!(matches!(
            store.session(None),
            Err(SessionError::NoSessions(_))
        ));
        let (a, _) = store.new_session().unwrap();
        let (b, folder) = store.new_session().unwrap();
        assert!(folder.is_dir());
        assert_eq!(store.session(None).unwrap().0, b);
        assert_eq!(store.session(Some(&a)).unwrap().0, a);
        assert!(matches!(
            store.session(Some("1999")),
            Err(SessionError::NoSuchSession(_))
        ));
        let prefix = &a[..8];
        assert!(matches!(
            store.session(Some(prefix)),
            Err(SessionError::Ambiguous { .. })
        ));
        // The short form the header shows: the id's ending.
        let ending = &b[b.len() - 4..];
        if !a.ends_with(ending) {
            assert_eq!(store.session(Some(ending)).unwrap().0, b);
        }
    }

    #[test]
    fn versus_folder_is_excluded_from_git_once() {
        let dir = tempfile::tempdir().unwrap();
        git2::Repository::init(dir.path()).unwrap();
        Store::open(dir.path()).unwrap();
        fs::remove_dir_all(dir.path().join(".versus")).unwrap();
        Store::open(dir.path()).unwrap();
        let exclude = fs::read_to_string(dir.path().join(".git/info/exclude")).unwrap();
        assert_eq!(exclude.matches(".versus/").count(), 1, "{exclude}");
    }
}
