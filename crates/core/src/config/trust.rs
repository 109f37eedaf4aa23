//! Workspace trust: a project's own `.versus/config.toml` and `.env` count only once the user
//! has trusted that folder, as VS Code, direnv and mise do.
//!
//! A cloned repository is someone else's code. Its config could name a demo script to run,
//! a keyless provider on an address it controls, or default models; its `.env` could point
//! versus's own config lookup elsewhere. So until the user runs `versus trust` in the folder
//! (or passes `--trust` for one run), both files are ignored and versus says so. Trust is
//! recorded by folder and by a hash of both files' bytes: when either changes, versus asks
//! again.
//!
//! The record lives in the user's state folder (`$XDG_STATE_HOME/versus/trust.json`, else
//! `~/.local/state/versus/trust.json`), found from the process environment only: a project
//! file never decides where its own trust is looked up.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The project files trust is about, relative to the project folder.
pub const PROJECT_FILES: [&str; 2] = [".versus/config.toml", ".env"];

/// Version of the trust record on disk.
const VERSION: u32 = 1;

/// Whether a project's own files may be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trust {
    /// The project has neither file: nothing to decide.
    NothingToTrust,
    /// The user trusted these exact files in this folder (or passed `--trust`).
    Trusted,
    /// The files exist and are not trusted: they are ignored.
    Untrusted {
        /// The files present (absolute paths).
        files: Vec<PathBuf>,
        /// The folder was trusted before, with other contents.
        changed: bool,
    },
}

impl Trust {
    /// What a front end tells the user when project files were ignored; `None` otherwise.
    pub fn notice(&self) -> Option<String> {
        let Trust::Untrusted { files, changed } = self else {
            return None;
        };
        let names: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
        let why = if *changed {
            "changed since you trusted this folder"
        } else {
            "this folder is not trusted"
        };
        Some(format!(
            "ignored {} ({why}): a project's own config and .env may choose models, providers \
             and commands. Review them, then run `versus trust` here (or pass --trust once)",
            names.join(" and ")
        ))
    }

    /// Whether the project's files are to be read.
    pub fn allows_project_files(&self) -> bool {
        matches!(self, Trust::Trusted)
    }
}

/// A problem with the trust record.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    /// No home or state folder to keep the record in.
    #[error("no folder to keep the trust record in: set HOME or XDG_STATE_HOME")]
    NoStateFolder,
    /// Reading or writing the record failed.
    #[error("could not {action} the trust record {}: {error}", path.display())]
    Io {
        /// What was being done.
        action: &'static str,
        /// The record file.
        path: PathBuf,
        /// Why.
        error: io::Error,
    },
    /// A project file could not be read.
    #[error("could not read {}: {error}", path.display())]
    ReadProject {
        /// The file.
        path: PathBuf,
        /// Why.
        error: io::Error,
    },
}

/// The record on disk.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Record {
    version: u32,
    /// Folder (canonical path) -> hash of its project files when trusted.
    folders: BTreeMap<PathBuf, String>,
    /// Recipe file (canonical path) -> blake3 of its bytes when trusted to loosen the sandbox.
    /// Absent in records written before recipes could be trusted.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    recipes: BTreeMap<PathBuf, String>,
}

/// Whether a recipe may loosen the sandbox (`filesystem: unrestricted`, `network: full`...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecipeTrust {
    /// The recipe is the user's own: it lies outside the project, outside the folder versus
    /// runs in and outside any git repository.
    OwnFile,
    /// The user trusted this file with exactly these bytes (`versus trust FILE`, or `--trust`).
    Trusted,
    /// A project's recipe nobody vouched for: it may narrow the sandbox, never loosen it.
    Untrusted {
        /// It was trusted before, with other contents.
        changed: bool,
    },
}

impl RecipeTrust {
    /// Whether the recipe may loosen the sandbox.
    pub fn may_loosen(&self) -> bool {
        !matches!(self, RecipeTrust::Untrusted { .. })
    }
}

/// The user's trust decisions.
#[derive(Debug, Clone)]
pub struct TrustStore {
    path: PathBuf,
}

impl TrustStore {
    /// The store in the user's state folder, located from the process environment only.
    pub fn for_user() -> Result<TrustStore, TrustError> {
        let state = crate::fsutil::user_state_dir().ok_or(TrustError::NoStateFolder)?;
        Ok(TrustStore::at(state.join("versus").join("trust.json")))
    }

    /// [`TrustStore::for_user`], or, without a state folder, a store that trusts nothing
    /// (nothing can have been recorded).
    pub fn for_user_or_none() -> TrustStore {
        TrustStore::for_user().unwrap_or_else(|_| TrustStore::at(PathBuf::new()))
    }

    /// A store kept in `path` (tests).
    pub fn at(path: PathBuf) -> TrustStore {
        TrustStore { path }
    }

    /// The record file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Decides whether `project`'s files may be used. An unreadable or damaged record trusts
    /// nothing (and is reported in the log), so a broken file can only make versus stricter.
    pub fn check(&self, project: &Path) -> Result<Trust, TrustError> {
        let (files, hash) = fingerprint(project)?;
        if files.is_empty() {
            return Ok(Trust::NothingToTrust);
        }
        let record = self.read().unwrap_or_else(|err| {
            tracing::warn!(error = %err, "trust record unreadable; trusting no project");
            Record::default()
        });
        match record.folders.get(&canonical(project)) {
            Some(trusted) if *trusted == hash => Ok(Trust::Trusted),
            Some(_) => Ok(Trust::Untrusted {
                files,
                changed: true,
            }),
            None => Ok(Trust::Untrusted {
                files,
                changed: false,
            }),
        }
    }

    /// Whether the user ran `versus trust` in `project` and its config files are unchanged
    /// since: what a project's skills need to count (they are instructions a model follows),
    /// also in a project that has no config file for [`TrustStore::check`] to decide on.
    pub fn folder_trusted(&self, project: &Path) -> bool {
        let Ok((_, hash)) = fingerprint(project) else {
            return false;
        };
        self.read()
            .ok()
            .and_then(|record| record.folders.get(&canonical(project)).cloned())
            .is_some_and(|trusted| trusted == hash)
    }

    /// Trusts `project`'s files as they are now. Returns the files trusted (empty when the
    /// project has none; the folder is then recorded anyway, so files added later need trust).
    pub fn trust(&self, project: &Path) -> Result<Vec<PathBuf>, TrustError> {
        let (files, hash) = fingerprint(project)?;
        let mut record = self.read().unwrap_or_default();
        record.folders.insert(canonical(project), hash);
        self.write(&mut record)?;
        Ok(files)
    }

    /// Decides whether the recipe at `path`, whose bytes hash to `hash` (blake3, hex), may
    /// loosen the sandbox of a run in `projects` (the run's project, the folder versus runs
    /// in). A recipe inside one of them, or inside any git repository, came with a project
    /// and needs `versus trust FILE`; one elsewhere is the user's own file.
    pub fn recipe(&self, path: &Path, hash: &str, projects: &[&Path]) -> RecipeTrust {
        let file = canonical(path);
        let folder = file.parent().unwrap_or(Path::new("/")).to_path_buf();
        let someone_elses = {
            use std::os::unix::fs::MetadataExt;
            fs::metadata(&file).is_ok_and(|m| m.uid() != nix::unistd::geteuid().as_raw())
        };
        let from_project = projects.iter().any(|p| file.starts_with(canonical(p)))
            || work_tree_of(&folder).is_some()
            || someone_elses;
        if !from_project {
            return RecipeTrust::OwnFile;
        }
        let record = self.read().unwrap_or_else(|err| {
            tracing::warn!(error = %err, "trust record unreadable; trusting no recipe");
            Record::default()
        });
        match record.recipes.get(&file) {
            Some(trusted) if trusted == hash => RecipeTrust::Trusted,
            Some(_) => RecipeTrust::Untrusted { changed: true },
            None => RecipeTrust::Untrusted { changed: false },
        }
    }

    /// Trusts the recipe at `path` with the bytes hashing to `hash` to loosen the sandbox.
    pub fn trust_recipe(&self, path: &Path, hash: &str) -> Result<(), TrustError> {
        let mut record = self.read().unwrap_or_default();
        record.recipes.insert(canonical(path), hash.to_string());
        self.write(&mut record)
    }

    /// Forgets the recipe at `path`; returns whether it was trusted.
    pub fn revoke_recipe(&self, path: &Path) -> Result<bool, TrustError> {
        let mut record = self.read().unwrap_or_default();
        let removed = record.recipes.remove(&canonical(path)).is_some();
        if removed {
            self.write(&mut record)?;
        }
        Ok(removed)
    }

    /// Forgets `project`; returns whether it was trusted.
    pub fn revoke(&self, project: &Path) -> Result<bool, TrustError> {
        let mut record = self.read().unwrap_or_default();
        let removed = record.folders.remove(&canonical(project)).is_some();
        if removed {
            self.write(&mut record)?;
        }
        Ok(removed)
    }

    fn read(&self) -> Result<Record, TrustError> {
        let bytes = match fs::read(&self.path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Record::default()),
            Err(error) => {
                return Err(TrustError::Io {
                    action: "read",
                    path: self.path.clone(),
                    error,
                });
            }
        };
        serde_json::from_slice(&bytes).map_err(|e| TrustError::Io {
            action: "parse",
            path: self.path.clone(),
            error: io::Error::other(e.to_string()),
        })
    }

    fn write(&self, record: &mut Record) -> Result<(), TrustError> {
        record.version = VERSION;
        let io_err = |error: io::Error| TrustError::Io {
            action: "write",
            path: self.path.clone(),
            error,
        };
        if let Some(parent) = self.path.parent() {
            fs::create_dir_all(parent).map_err(io_err)?;
        }
        let bytes = serde_json::to_vec_pretty(record).map_err(|e| io_err(io::Error::other(e)))?;
        crate::fsutil::atomic_write(&self.path, &bytes).map_err(io_err)
    }
}

/// The work tree of the git repository `folder` lies in, if any (the nearest folder up from
/// it holding a `.git` folder or file): where a file came from when it came with a repository
/// (a recipe, a recipe's `project_root`). Found by looking, not by opening the repository, so
/// a repository owned by someone else (which git refuses to open) still counts.
pub fn work_tree_of(folder: &Path) -> Option<PathBuf> {
    let folder = canonical(folder);
    folder
        .ancestors()
        .find(|dir| dir.join(".git").symlink_metadata().is_ok())
        .map(Path::to_path_buf)
}

fn canonical(project: &Path) -> PathBuf {
    project
        .canonicalize()
        .unwrap_or_else(|_| project.to_path_buf())
}

/// The project files present and one hash over their names and bytes (a missing file and an
/// empty one differ).
fn fingerprint(project: &Path) -> Result<(Vec<PathBuf>, String), TrustError> {
    let mut hasher = blake3::Hasher::new();
    let mut files = Vec::new();
    for rel in PROJECT_FILES {
        let path = project.join(rel);
        hasher.update(rel.as_bytes());
        match crate::fsutil::read_capped(&path, super::FILE_READ_CAP) {
            Ok(bytes) => {
                hasher.update(&[1]);
                hasher.update(&(bytes.len() as u64).to_le_bytes());
                hasher.update(&bytes);
                files.push(path);
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                hasher.update(&[0]);
            }
            Err(error) => return Err(TrustError::ReadProject { path, error }),
        }
    }
    Ok((files, hasher.finalize().to_hex().to_string()))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn trust_is_by_folder_and_content_and_can_be_revoked() {
        let state = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let store = TrustStore::at(state.path().join("trust.json"));
        assert_eq!(store.check(project.path()).unwrap(), Trust::NothingToTrust);

        fs::create_dir_all(project.path().join(".versus")).unwrap();
        fs::write(project.path().join(".versus/config.toml"), "models = []\n").unwrap();
        let first = store.check(project.path()).unwrap();
        assert!(matches!(first, Trust::Untrusted { changed: false, .. }));
        assert!(first.notice().unwrap().contains("versus trust"));

        store.trust(project.path()).unwrap();
        assert_eq!(store.check(project.path()).unwrap(), Trust::Trusted);

        // A new .env (or any change) asks again.
        fs::write(project.path().join(".env"), "X=1\n").unwrap();
        let changed = store.check(project.path()).unwrap();
        assert!(
            matches!(changed, Trust::Untrusted { changed: true, ref files } if files.len() == 2)
        );
        assert!(changed.notice().unwrap().contains("changed since"));

        store.trust(project.path()).unwrap();
        assert_eq!(store.check(project.path()).unwrap(), Trust::Trusted);
        assert!(store.revoke(project.path()).unwrap());
        assert!(!store.revoke(project.path()).unwrap());
        assert!(matches!(
            store.check(project.path()).unwrap(),
            Trust::Untrusted { changed: false, .. }
        ));
    }

    #[test]
    fn a_damaged_record_trusts_nothing() {
        let state = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        fs::write(project.path().join(".env"), "X=1\n").unwrap();
        let store = TrustStore::at(state.path().join("trust.json"));
        store.trust(project.path()).unwrap();
        fs::write(store.path(), b"{not json").unwrap();
        assert!(matches!(
            store.check(project.path()).unwrap(),
            Trust::Untrusted { .. }
        ));
    }

    #[test]
    fn a_projects_recipe_is_trusted_by_path_and_content_and_an_own_recipe_always() {
        let state = tempfile::tempdir().unwrap();
        let store = TrustStore::at(state.path().join("trust.json"));
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let project = base.join("project");
        fs::create_dir_all(project.join("sub")).unwrap();
        let inside = project.join("sub/r.md");
        fs::write(&inside, "x").unwrap();
        let own = base.join("own.md");
        fs::write(&own, "x").unwrap();
        assert_eq!(store.recipe(&own, "h1", &[&project]), RecipeTrust::OwnFile);
        assert_eq!(
            store.recipe(&inside, "h1", &[&project]),
            RecipeTrust::Untrusted { changed: false }
        );
        store.trust_recipe(&inside, "h1").unwrap();
        assert_eq!(
            store.recipe(&inside, "h1", &[&project]),
            RecipeTrust::Trusted
        );
        assert_eq!(
            store.recipe(&inside, "h2", &[&project]),
            RecipeTrust::Untrusted { changed: true }
        );
        // In a git repository, even outside the projects named: it came with a repository.
        let repo = base.join("repo");
        fs::create_dir_all(repo.join(".git")).unwrap();
        fs::create_dir_all(repo.join("deep")).unwrap();
        fs::write(repo.join("deep/r.md"), "x").unwrap();
        assert_eq!(work_tree_of(&repo.join("deep")), Some(repo.clone()));
        assert!(!store.recipe(&repo.join("deep/r.md"), "h", &[]).may_loosen());
        assert!(store.revoke_recipe(&inside).unwrap());
        assert!(!store.recipe(&inside, "h1", &[&project]).may_loosen());
        // The folder record still reads (recipes were added to it later).
        store.trust(&project).unwrap();
        assert_eq!(store.check(&project).unwrap(), Trust::NothingToTrust);
    }
}
