//! Finding and creating the `.versus/` folder and its sessions. Every open goes through the
//! ownership check of [`super::ownership`]: a `.versus` this user's versus did not write is
//! refused, and a session folder it did not write is never listed or reopened.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::clock::now;
use super::ownership::{self, Foreign, OwnerKey, StampKind, StoreState};

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
    #[error("this project has no versus session yet (nothing in {}); the demo of the interface keeps its session in the demo's own folder: `versus -C FOLDER --continue`, as printed when you quit it", .0.display())]
    NoSessions(PathBuf),
    /// The project's `.versus` is not this user's versus's own state.
    #[error("refusing {}: {}", store.display(), why.describe(store))]
    Foreign {
        /// The `.versus` path.
        store: PathBuf,
        /// What was found.
        why: Foreign,
    },
    /// A session folder that this user's versus did not write was named.
    #[error(
        "session `{0}` was not written by your versus in this project (no ownership stamp: \
         copied in, or made by an earlier versus); it is not reopened or rewound. Keep it with \
         `versus trust --adopt-state` if it is yours"
    )]
    ForeignSession(String),
    /// No folder to keep the ownership key in.
    #[error(
        "no folder to keep versus's ownership key in (it tells the .versus folders your versus \
         wrote from copies): set HOME or XDG_STATE_HOME"
    )]
    NoStateFolder,
    /// The ownership key could not be read or made.
    #[error(
        "could not use versus's ownership key {}: {source} (it tells the .versus folders your \
         versus wrote from copies; set XDG_STATE_HOME to a folder you can write)",
        path.display()
    )]
    Key {
        /// The key file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
}

fn io_err(op: &'static str, path: &Path) -> impl FnOnce(io::Error) -> SessionError + use<> {
    let path = path.to_path_buf();
    move |source| SessionError::Io { op, path, source }
}

/// The `.versus/` folder of one project, known to be this user's versus's own.
#[derive(Debug, Clone)]
pub struct Store {
    project: PathBuf,
    root: PathBuf,
    key: OwnerKey,
}

/// What [`Store::adopt`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Adopted {
    /// The `.versus` folder.
    pub store: PathBuf,
    /// Session folders stamped now.
    pub sessions: usize,
    /// Entries of `sessions/` left out (symlinks, files).
    pub skipped: Vec<String>,
}

impl Store {
    /// Opens the store of `project`, creating `.versus/` on first use and listing it in the
    /// repository's `info/exclude` so it never shows in `git status`. The exclude goes to the
    /// repository's common folder, the one git reads for every linked worktree too (a
    /// worktree's own `.git/worktrees/NAME/info/exclude` is ignored by git).
    ///
    /// A `.versus` this user's versus did not write is refused ([`SessionError::Foreign`]),
    /// see [`super::ownership`].
    pub fn open(project: &Path) -> Result<Self, SessionError> {
        Store::open_with(project, OwnerKey::for_user()?)
    }

    /// [`Store::open`] with the ownership key given (tests keep theirs in a temp folder).
    pub fn open_with(project: &Path, key: OwnerKey) -> Result<Self, SessionError> {
        let project = project
            .canonicalize()
            .map_err(io_err("open the project folder", project))?;
        let root = project.join(".versus");
        match ownership::inspect(&project, &key)? {
            StoreState::Owned => {}
            StoreState::Claimable => key.stamp(&root, StampKind::Store, false)?,
            StoreState::Absent => {
                match fs::create_dir(&root) {
                    Ok(()) => {}
                    // Another versus made it meanwhile: it must pass the same check.
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                        if ownership::inspect(&project, &key)? == StoreState::Owned {
                            return Store::finish_open(project, root, key);
                        }
                    }
                    Err(e) => return Err(io_err("create", &root)(e)),
                }
                key.stamp(&root, StampKind::Store, false)?;
            }
        }
        Store::finish_open(project, root, key)
    }

    fn finish_open(project: PathBuf, root: PathBuf, key: OwnerKey) -> Result<Self, SessionError> {
        let sessions = root.join("sessions");
        match fs::create_dir(&sessions) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(io_err("create", &sessions)(e)),
        }
        // Until it is known to be done: a `.versus/` made by an older version in a linked
        // worktree had its exclude written where git never reads it. The marker spares every
        // later start a repository discovery.
        let marker = root.join(EXCLUDED_MARKER);
        if !marker.exists() && exclude_from_git(&project) {
            let _ = fs::write(&marker, b"");
        }
        Ok(Self { project, root, key })
    }

    /// The store of `project` when versus has state there; `None` when there is no `.versus`
    /// (or one with no state in it), so read-only commands (`sessions`, `rewind`, `stats`)
    /// create nothing. A foreign `.versus` is refused as by [`Store::open`].
    pub fn existing(project: &Path) -> Result<Option<Self>, SessionError> {
        let project = project
            .canonicalize()
            .map_err(io_err("open the project folder", project))?;
        let key = OwnerKey::for_user()?;
        match ownership::inspect(&project, &key)? {
            StoreState::Owned => {
                let root = project.join(".versus");
                Ok(Some(Self { project, root, key }))
            }
            StoreState::Absent | StoreState::Claimable => Ok(None),
        }
    }

    /// Adopts `project`'s existing `.versus` as this user's own (`versus trust
    /// --adopt-state`): for a store written by an earlier versus (no stamp), or one the user
    /// moved across filesystems or restored from a backup. Stamps the folder and every
    /// session folder in it. What can never be adopted stays refused: a symlink, a folder
    /// owned by another user, state tracked by git.
    pub fn adopt(project: &Path) -> Result<Adopted, SessionError> {
        let project = project
            .canonicalize()
            .map_err(io_err("open the project folder", project))?;
        let key = OwnerKey::for_user()?;
        let root = project.join(".versus");
        match ownership::inspect(&project, &key) {
            Ok(StoreState::Absent) => return Err(SessionError::NoSessions(root.join("sessions"))),
            Ok(StoreState::Owned | StoreState::Claimable) => {}
            Err(SessionError::Foreign {
                why: Foreign::Unstamped | Foreign::NotOurs,
                ..
            }) => {}
            Err(other) => return Err(other),
        }
        key.stamp(&root, StampKind::Store, true)?;
        let mut adopted = Adopted {
            store: root.clone(),
            sessions: 0,
            skipped: Vec::new(),
        };
        let sessions = root.join("sessions");
        let entries = match fs::read_dir(&sessions) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(adopted),
            Err(e) => return Err(io_err("list", &sessions)(e)),
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let real_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            if !real_dir {
                adopted.skipped.push(name);
                continue;
            }
            if !key.verify(&entry.path(), StampKind::Session) {
                key.stamp(&entry.path(), StampKind::Session, true)?;
                adopted.sessions += 1;
            }
        }
        adopted.skipped.sort();
        Ok(adopted)
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
                Ok(()) => {
                    self.key.stamp(&dir, StampKind::Session, false)?;
                    return Ok((id, dir));
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(io_err("create", &dir)(e)),
            }
        }
        Err(io_err("create a session in", &sessions)(io::Error::other(
            "too many sessions created in the same second",
        )))
    }

    /// Ids of the sessions this user's versus wrote here, oldest first. A folder without a
    /// valid stamp (dropped in by an archive, a symlink, an earlier versus's session) is left
    /// out, and named in the log.
    pub fn sessions(&self) -> Result<Vec<String>, SessionError> {
        Ok(self.list_sessions()?.0)
    }

    /// `(ours, foreign)` session folder names, each sorted.
    fn list_sessions(&self) -> Result<(Vec<String>, Vec<String>), SessionError> {
        let dir = self.root.join("sessions");
        let entries = match fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok((Vec::new(), Vec::new())),
            Err(e) => return Err(io_err("list", &dir)(e)),
        };
        let (mut ours, mut foreign) = (Vec::new(), Vec::new());
        for entry in entries.flatten() {
            let Ok(name) = entry.file_name().into_string() else {
                continue;
            };
            if entry.file_type().is_ok_and(|t| t.is_file()) {
                continue;
            }
            if self.key.verify(&entry.path(), StampKind::Session) {
                ours.push(name);
            } else {
                tracing::warn!(session = %name, "session folder without this user's stamp: ignored");
                foreign.push(name);
            }
        }
        ours.sort();
        foreign.sort();
        Ok((ours, foreign))
    }

    /// The folder of the session `id`, or of the latest session. A unique prefix is enough, and
    /// so is a unique ending: the header shows a session by the short ending of its id
    /// (`session ab12`), which must be something `--resume` takes.
    pub fn session(&self, id: Option<&str>) -> Result<(String, PathBuf), SessionError> {
        let (ids, foreign) = self.list_sessions()?;
        if let Some(prefix) = id
            && !ids
                .iter()
                .any(|i| i.starts_with(prefix) || i.ends_with(prefix))
            && foreign
                .iter()
                .any(|i| i == prefix || i.starts_with(prefix) || i.ends_with(prefix))
        {
            return Err(SessionError::ForeignSession(prefix.to_string()));
        }
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

/// The repository's exclude file, relative to its common git folder.
const EXCLUDE: &str = "info/exclude";

/// The most of an exclude file versus reads to add `.versus/` to it.
const EXCLUDE_CAP: u64 = 1 << 20;

/// File in `.versus/` saying the exclude is in place (in the repository's common folder).
const EXCLUDED_MARKER: &str = ".git-excluded";

/// Adds `.versus/` to the repository's info/exclude (best effort: outside git, or with a
/// read-only `.git`, there is nothing to hide it from or nothing we may change). Returns
/// whether the exclude is in place now.
fn exclude_from_git(project: &Path) -> bool {
    let Ok(repo) = git2::Repository::discover(project) else {
        return false;
    };
    // The repository's own file only, read and replaced relative to its git folder without
    // following a link: an archive's `.git/info/exclude -> ~/.ssh/id_ed25519` (or `.git/info
    // -> elsewhere`) must neither be copied into the project nor written through. Such an
    // exclude is left alone.
    let git_dir = repo.commondir().to_path_buf();
    let current = match crate::fsutil::read_capped_beneath(&git_dir, EXCLUDE, EXCLUDE_CAP) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
        Err(_) => return false,
    };
    if current
        .split(|b| *b == b'\n')
        .any(|l| l.trim_ascii() == b".versus/")
    {
        return true;
    }
    // Bytes, not text: whatever else the file holds stays exactly as it was.
    let mut text = current;
    if !text.is_empty() && !text.ends_with(b"\n") {
        text.push(b'\n');
    }
    text.extend_from_slice(b".versus/\n");
    crate::fsutil::write_beneath(&git_dir, EXCLUDE, &text, crate::fsutil::Durability::Synced)
        .is_ok()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// An ownership key of the test's own, beside its project: unit tests never write the
    /// key of whoever runs them.
    fn test_key(dir: &tempfile::TempDir) -> crate::session::OwnerKey {
        crate::session::OwnerKey::at(&dir.path().join(".test-state/store-key")).unwrap()
    }

    #[test]
    fn sessions_are_created_found_by_prefix_and_latest() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_with(dir.path(), test_key(&dir)).unwrap();
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
        Store::open_with(dir.path(), test_key(&dir)).unwrap();
        fs::remove_dir_all(dir.path().join(".versus")).unwrap();
        Store::open_with(dir.path(), test_key(&dir)).unwrap();
        let exclude = fs::read_to_string(dir.path().join(".git/info/exclude")).unwrap();
        assert_eq!(exclude.matches(".versus/").count(), 1, "{exclude}");
    }

    #[test]
    fn stores_opened_at_once_by_several_processes_all_succeed() {
        let state = tempfile::tempdir().unwrap();
        let key = OwnerKey::at(&state.path().join("store-key")).unwrap();
        for _ in 0..20 {
            let dir = tempfile::tempdir().unwrap();
            let handles: Vec<_> = (0..6)
                .map(|_| {
                    let (path, key) = (dir.path().to_path_buf(), key.clone());
                    std::thread::spawn(move || Store::open_with(&path, key).map(|_| ()))
                })
                .collect();
            for h in handles {
                h.join().unwrap().unwrap();
            }
        }
    }

    #[test]
    fn only_sessions_this_user_wrote_are_listed_or_opened() {
        let state = tempfile::tempdir().unwrap();
        let key = OwnerKey::at(&state.path().join("store-key")).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_with(dir.path(), key).unwrap();
        let (mine, _) = store.new_session().unwrap();
        let dropped = store.root().join("sessions/20000101-000000-beef");
        fs::create_dir(&dropped).unwrap();
        fs::copy(
            store
                .root()
                .join("sessions")
                .join(&mine)
                .join(super::ownership::STAMP_FILE),
            dropped.join(super::ownership::STAMP_FILE),
        )
        .unwrap();
        assert_eq!(store.sessions().unwrap(), std::slice::from_ref(&mine));
        assert_eq!(store.session(None).unwrap().0, mine);
        assert!(matches!(
            store.session(Some("beef")),
            Err(SessionError::ForeignSession(_))
        ));
    }
}
