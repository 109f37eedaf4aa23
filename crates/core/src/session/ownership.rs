//! Whose `.versus/` is this? versus's state in a project counts as versus's own only if this
//! user's versus wrote it there.
//!
//! A project is often someone else's: a clone, an archive, a checkout. Before this check, a
//! repository that committed `.versus/` had its session reopened by `ask --continue` (running
//! the model script it named), its forged apply journal rewound by `rewind --yes` (writing the
//! repository's file over `src/main.rs`), and a committed `.versus` symlink sent sessions and
//! prompt history outside the project. So every open of `.versus/` (sessions, journal and
//! rewind, recovery, preferences for stats, history, the lock) goes through [`inspect`], which
//! refuses, with a message saying why and what to do:
//!
//! - a `.versus` that is a symlink or not a folder, or holds a symlink where versus keeps its
//!   own files (`sessions`, `reports`, `preferences.jsonl`, `history.jsonl`, `lock`...);
//! - a `.versus` owned by another user;
//! - a `.versus` with any path other than `config.toml` tracked by git (in the index of the
//!   repository holding the project): it came with the repository. `.versus/config.toml` is
//!   the project's shared config, which a repository may ship; it is read only after
//!   `versus trust` (see `config::trust`). Tracked state is also what a `git pull` or
//!   `checkout` writes *into* an existing store (git overwrites ignored files), which no stamp
//!   could notice;
//! - a `.versus` without this user's ownership stamp.
//!
//! The stamp: when versus creates `.versus/` (and each `sessions/<id>/`), it writes a file
//! `owner` holding a random id and `blake3::keyed_hash(key, kind, id, inode)`, where `key` is a
//! secret of this user kept outside every project (`$XDG_STATE_HOME/versus/store-key`, else
//! `~/.local/state/versus/store-key`, mode 0600, made on first use) and `inode` is the folder's
//! own inode number. A repository cannot forge it (it does not know the key), and a copy of a
//! real store (clone, tar, zip, `cp -r`) sits in a new folder with another inode, so even a
//! stamp that leaked does not vouch for it. The inode is used rather than the path so that
//! renaming or moving the project within its filesystem keeps its state; the device number is
//! left out because some filesystems (btrfs subvolumes) renumber it at each mount.
//!
//! Folders written by earlier versions of versus have no stamp. They are refused like a copy,
//! with a one-line message and an explicit command to keep them (`versus trust
//! --adopt-state`), never adopted silently: "untracked, not a link, owned by you, older than
//! this version" is exactly what a zip download of a repository that committed `.versus/`
//! looks like, so no test a program can run tells an upgrade from an attack. The one
//! exception is a `.versus` with no state at all (only `config.toml`, versus's exclude
//! marker, the lock file, empty `sessions/` or `reports/`): there is nothing in it to be
//! fooled by, so it is stamped and used.
//!
//! A session folder carries its own stamp, so a session dropped into a stamped store by other
//! means (an archive unpacked over the project) is never listed, reopened or rewound either.

use std::fs;
use std::io::{self, Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::store::SessionError;

/// Name of the stamp file, in `.versus/` and in each session folder.
pub const STAMP_FILE: &str = "owner";

/// The project's config, the one path of `.versus/` a repository may ship (and track).
const SHARED_CONFIG: &str = "config.toml";

/// Marker file of `.versus/` (see `store.rs`): says the git exclude is in place.
const EXCLUDED_MARKER: &str = ".git-excluded";

/// First word of a stamp file, and its format version.
const STAMP_MAGIC: &str = "versus-owner 1";

/// The most versus reads of a stamp or key file.
const SMALL_FILE_CAP: u64 = 512;

/// What a stamp vouches for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StampKind {
    /// A project's `.versus/`.
    Store,
    /// One `sessions/<id>/` folder.
    Session,
}

impl StampKind {
    fn as_str(self) -> &'static str {
        match self {
            StampKind::Store => "store",
            StampKind::Session => "session",
        }
    }
}

/// This user's secret that signs ownership stamps (never printed).
#[derive(Clone)]
pub struct OwnerKey {
    key: [u8; 32],
}

impl std::fmt::Debug for OwnerKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OwnerKey(..)")
    }
}

impl OwnerKey {
    /// This user's key, from the state folder found in the process environment only (a
    /// project file never decides where it is looked up), created on first use.
    pub fn for_user() -> Result<OwnerKey, SessionError> {
        let state = crate::fsutil::user_state_dir().ok_or(SessionError::NoStateFolder)?;
        OwnerKey::at(&state.join("versus").join("store-key"))
    }

    /// The key kept in `path`, created there (mode 0600, parents 0700) when missing. Two
    /// processes creating it at once agree on one: the file appears under its name only
    /// complete (a hard link of a finished temporary file), and the loser reads the winner's.
    pub fn at(path: &Path) -> Result<OwnerKey, SessionError> {
        let key_err = |source: io::Error| SessionError::Key {
            path: path.to_path_buf(),
            source,
        };
        match read_small(path) {
            Ok(text) => return OwnerKey::parse(&text).map_err(key_err),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(key_err(e)),
        }
        let parent = path.parent().unwrap_or(Path::new("/"));
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(parent)
            .map_err(key_err)?;
        let key = random_bytes::<32>().map_err(key_err)?;
        let nonce = hex(&random_bytes::<8>().map_err(key_err)?);
        let temp = parent.join(format!(".store-key.{}.{nonce}.tmp", std::process::id()));
        let written = (|| {
            let mut file = fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .custom_flags(nix::libc::O_NOFOLLOW)
                .open(&temp)?;
            file.write_all(hex(&key).as_bytes())?;
            file.write_all(b"\n")?;
            file.sync_all()?;
            match fs::hard_link(&temp, path) {
                Ok(()) => Ok(true),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
                Err(e) => Err(e),
            }
        })();
        let _ = fs::remove_file(&temp);
        if written.map_err(key_err)? {
            return Ok(OwnerKey { key });
        }
        let text = read_small(path).map_err(key_err)?;
        OwnerKey::parse(&text).map_err(key_err)
    }

    /// A key from its 64 hex digits.
    fn parse(text: &str) -> io::Result<OwnerKey> {
        let text = text.trim();
        let bytes = unhex(text)
            .filter(|b| b.len() == 32)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "not a versus key"))?;
        let mut key = [0u8; 32];
        key.copy_from_slice(&bytes);
        Ok(OwnerKey { key })
    }

    /// The signature of `(kind, id, inode)`.
    fn mac(&self, kind: StampKind, id: &str, inode: u64) -> String {
        let mut message = Vec::with_capacity(64);
        message.extend_from_slice(STAMP_MAGIC.as_bytes());
        message.push(0);
        message.extend_from_slice(kind.as_str().as_bytes());
        message.push(0);
        message.extend_from_slice(id.as_bytes());
        message.push(0);
        message.extend_from_slice(&inode.to_le_bytes());
        blake3::keyed_hash(&self.key, &message).to_hex().to_string()
    }

    /// Writes the stamp of `dir` (a real folder this process just made, or one the user
    /// adopts). An existing stamp is replaced only when `replace` (adoption); otherwise a
    /// stamp written meanwhile by another versus wins and is checked instead.
    pub(crate) fn stamp(
        &self,
        dir: &Path,
        kind: StampKind,
        replace: bool,
    ) -> Result<(), SessionError> {
        let io_err = |op: &'static str| {
            let path = dir.join(STAMP_FILE);
            move |source| SessionError::Io { op, path, source }
        };
        let inode = fs::symlink_metadata(dir)
            .map_err(io_err("inspect the folder of"))?
            .ino();
        let id = hex(&random_bytes::<16>().map_err(io_err("make an id for"))?);
        let text = format!(
            "{STAMP_MAGIC} {} {id} {}\n",
            kind.as_str(),
            self.mac(kind, &id, inode)
        );
        let temp = dir.join(format!(".{STAMP_FILE}.{}.{id}.tmp", std::process::id()));
        let result = (|| {
            let mut file = fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o644)
                .custom_flags(nix::libc::O_NOFOLLOW)
                .open(&temp)?;
            file.write_all(text.as_bytes())?;
            file.sync_all()?;
            if replace {
                fs::rename(&temp, dir.join(STAMP_FILE))
            } else {
                let linked = fs::hard_link(&temp, dir.join(STAMP_FILE));
                let _ = fs::remove_file(&temp);
                match linked {
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
                    other => other,
                }
            }
        })();
        if result.is_err() {
            let _ = fs::remove_file(&temp);
        }
        result.map_err(io_err("write the ownership stamp"))?;
        if self.verify(dir, kind) {
            Ok(())
        } else {
            Err(io_err("check the ownership stamp")(io::Error::other(
                "another process wrote a stamp that is not yours",
            )))
        }
    }

    /// Whether `dir` (never followed if it is a symlink) carries this user's stamp of `kind`
    /// for this very folder.
    pub(crate) fn verify(&self, dir: &Path, kind: StampKind) -> bool {
        let Ok(meta) = fs::symlink_metadata(dir) else {
            return false;
        };
        if !meta.is_dir() {
            return false;
        }
        let Ok(text) = read_small(&dir.join(STAMP_FILE)) else {
            return false;
        };
        let mut words = text.split_whitespace();
        let magic = [words.next(), words.next()];
        let (Some(k), Some(id), Some(mac), None) =
            (words.next(), words.next(), words.next(), words.next())
        else {
            return false;
        };
        let expected = self.mac(kind, id, meta.ino());
        magic == [Some("versus-owner"), Some("1")]
            && k == kind.as_str()
            && constant_time_eq(mac.as_bytes(), expected.as_bytes())
    }
}

/// Why a project's `.versus` is not used. Each text says what was found, why it is refused and
/// what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Foreign {
    /// `.versus` is a symlink.
    Symlink {
        /// Where it points.
        target: PathBuf,
    },
    /// `.versus` is a file, a fifo... not a folder.
    NotAFolder,
    /// `.versus` belongs to another user.
    OtherOwner {
        /// Its owner as seen here.
        uid: u32,
        /// The uid is the kernel's overflow uid: the owner may be a user not mapped into
        /// versus's own user namespace.
        maybe_unmapped: bool,
    },
    /// A name versus keeps its own files under is a symlink (or not what it should be).
    LinkInside {
        /// The name inside `.versus/`.
        name: String,
    },
    /// git tracks a path under `.versus/` (other than `config.toml`).
    Tracked {
        /// One such path, relative to the repository.
        path: String,
    },
    /// No ownership stamp, and state inside: an earlier versus, or copied in.
    Unstamped,
    /// A stamp that is not this user's for this folder.
    NotOurs,
}

impl Foreign {
    /// Why `store` (a project's `.versus` path) is refused and what to do, as a sentence that
    /// follows "refusing STORE: ". The commands it suggests work from any folder.
    pub fn describe(&self, store: &Path) -> String {
        let project = store.parent().unwrap_or(Path::new("."));
        let (q_store, q_project) = (shell_quote(store), shell_quote(project));
        let adopt = format!(
            "If your own versus wrote it here, keep it with `versus -C {q_project} trust \
             --adopt-state`; otherwise remove it: `rm -rf {q_store}`"
        );
        match self {
            Foreign::Symlink { target } => format!(
                "it is a symlink (to {}): versus keeps its sessions and history only in a real \
                 folder of the project, and a link would send them elsewhere. Remove the link \
                 (`rm {q_store}`); versus makes a new folder on its next run",
                target.display()
            ),
            Foreign::NotAFolder => format!(
                "it is not a folder. Move it away (`mv {q_store} {q_store}.old`); versus makes \
                 a new folder on its next run"
            ),
            Foreign::OtherOwner {
                uid,
                maybe_unmapped,
            } => format!(
                "it belongs to another user (uid {uid}{}), not to you (uid {}): versus uses \
                 only state it wrote as you. Run versus as that user, or move the folder away \
                 (`mv {q_store} {q_store}.other`)",
                if *maybe_unmapped {
                    ", or a user not mapped into versus's namespace"
                } else {
                    ""
                },
                nix::unistd::geteuid()
            ),
            Foreign::LinkInside { name } => format!(
                "{name} in it is a symlink or not what versus keeps there, and versus's state \
                 is never reached through links. Remove it (`rm -r {}`)",
                shell_quote(&store.join(name))
            ),
            Foreign::Tracked { path } => format!(
                "it is tracked by git ({path} is in the repository), so it came with the \
                 repository, not from your versus: its sessions, applies and history are not \
                 used. Remove it from git and from disk: `git -C {q_project} rm -r -q --cached \
                 .versus` then `rm -rf {q_store}`"
            ),
            Foreign::Unstamped => format!(
                "it has no ownership stamp: it was written by an earlier versus, or copied in \
                 (a clone, an archive), so its sessions, applies and history are not used. \
                 {adopt}"
            ),
            Foreign::NotOurs => format!(
                "it was not written by your versus in this folder (its stamp is another \
                 user's or machine's, or the folder is a copy), so its sessions, applies and \
                 history are not used. {adopt}"
            ),
        }
    }
}

/// `path` as a shell word: as it is when it holds only safe characters, else single-quoted.
fn shell_quote(path: &Path) -> String {
    let text = path.display().to_string();
    let safe = text
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+,:@%".contains(c));
    if safe && !text.is_empty() {
        text
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// What [`inspect`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StoreState {
    /// No `.versus` yet.
    Absent,
    /// A `.versus` with no stamp and no state in it (only the shared config): safe to stamp.
    Claimable,
    /// This user's stamped store.
    Owned,
}

/// Names versus keeps its own files and folders under, directly in `.versus/`: none may be a
/// symlink (nor a session folder, checked when sessions are listed).
const OWN_NAMES: [(&str, bool); 8] = [
    ("sessions", true),
    ("reports", true),
    (STAMP_FILE, false),
    ("preferences.jsonl", false),
    ("history.jsonl", false),
    ("lock", false),
    ("tui.toml", false),
    (EXCLUDED_MARKER, false),
];

/// Decides whether `project`'s `.versus` is this user's (see the module docs). `project` is
/// canonical. Refusals come back as [`SessionError::Foreign`].
pub(crate) fn inspect(project: &Path, key: &OwnerKey) -> Result<StoreState, SessionError> {
    let root = project.join(".versus");
    let refuse = |why: Foreign| SessionError::Foreign {
        store: root.clone(),
        why,
    };
    let meta = match fs::symlink_metadata(&root) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(StoreState::Absent),
        Err(source) => {
            return Err(SessionError::Io {
                op: "inspect",
                path: root,
                source,
            });
        }
    };
    if meta.file_type().is_symlink() {
        let target = fs::read_link(&root).unwrap_or_default();
        return Err(refuse(Foreign::Symlink { target }));
    }
    if !meta.is_dir() {
        return Err(refuse(Foreign::NotAFolder));
    }
    if other_owner(&root, &meta) {
        return Err(refuse(Foreign::OtherOwner {
            uid: meta.uid(),
            maybe_unmapped: meta.uid() == overflow_uid(),
        }));
    }
    if let Some(path) = tracked_path(project) {
        return Err(refuse(Foreign::Tracked { path }));
    }
    for (name, folder) in OWN_NAMES {
        match fs::symlink_metadata(root.join(name)) {
            Ok(m) if m.file_type().is_symlink() || m.is_dir() != folder => {
                return Err(refuse(Foreign::LinkInside {
                    name: name.to_string(),
                }));
            }
            _ => {}
        }
    }
    if let Some(ours) = stamped(&root, key) {
        return if ours {
            Ok(StoreState::Owned)
        } else {
            Err(refuse(Foreign::NotOurs))
        };
    }
    if holds_no_state(&root) {
        return Ok(StoreState::Claimable);
    }
    // Another versus creating the store may have stamped it while this one looked.
    match stamped(&root, key) {
        Some(true) => Ok(StoreState::Owned),
        Some(false) => Err(refuse(Foreign::NotOurs)),
        None => Err(refuse(Foreign::Unstamped)),
    }
}

/// Whether the store `root` carries a stamp (`None`: none) and whether it is `key`'s. A stamp
/// appears whole (hard-linked from a finished file, [`OwnerKey::stamp`]), so it is verified
/// after it was seen to exist: verified first and looked for after, a stamp another versus
/// made in between (two starts on a fresh project at once) was taken for someone else's.
fn stamped(root: &Path, key: &OwnerKey) -> Option<bool> {
    root.join(STAMP_FILE).symlink_metadata().ok()?;
    Some(key.verify(root, StampKind::Store))
}

/// Whether an unstamped `.versus` holds nothing versus would read as its own state: only the
/// shared config, the exclude marker, the lock file (a pid at most), and empty `sessions/` or
/// `reports/` folders.
fn holds_no_state(root: &Path) -> bool {
    let Ok(entries) = fs::read_dir(root) else {
        return false;
    };
    entries.into_iter().all(|entry| {
        let Ok(entry) = entry else {
            return false;
        };
        let name = entry.file_name();
        match name.to_str() {
            Some(SHARED_CONFIG | EXCLUDED_MARKER) => true,
            // Another versus creating the store this very moment, writing its stamp.
            Some(name)
                if name.starts_with(&format!(".{STAMP_FILE}.")) && name.ends_with(".tmp") =>
            {
                true
            }
            Some("lock") => entry.file_type().is_ok_and(|t| t.is_file()),
            Some("sessions" | "reports") => {
                entry.file_type().is_ok_and(|t| t.is_dir())
                    && fs::read_dir(entry.path()).is_ok_and(|mut d| d.next().is_none())
            }
            _ => false,
        }
    })
}

/// Whether `.versus` is not this user's. Inside versus's own user namespace (see
/// `workspace::cow`), a folder of a user not mapped there shows as the overflow uid, which can
/// be this user's own uid when versus runs as `nobody`: then only the owner may change the
/// folder's mode, and trying it (to the mode it already has) tells the two apart.
fn other_owner(root: &Path, meta: &fs::Metadata) -> bool {
    let me = nix::unistd::geteuid().as_raw();
    if meta.uid() != me {
        return true;
    }
    if me != 0 && meta.uid() == overflow_uid() {
        let mode = fs::Permissions::from_mode(meta.mode() & 0o7777);
        return fs::set_permissions(root, mode).is_err();
    }
    false
}

/// The uid the kernel shows for users not mapped into the current user namespace.
fn overflow_uid() -> u32 {
    fs::read_to_string("/proc/sys/kernel/overflowuid")
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(65534)
}

/// A path under the project's `.versus/`, other than the shared config, that the index of the
/// repository holding the project tracks. A repository git will not open (another user's) is
/// not looked into: its `.versus` is then refused for its owner or its stamp instead.
fn tracked_path(project: &Path) -> Option<String> {
    let repo = git2::Repository::discover(project).ok()?;
    let workdir = repo.workdir()?.canonicalize().ok()?;
    let rel = project.strip_prefix(&workdir).ok()?;
    let mut prefix = String::new();
    for part in rel.components() {
        prefix.push_str(part.as_os_str().to_str()?);
        prefix.push('/');
    }
    prefix.push_str(".versus");
    let index = repo.index().ok()?;
    let config = format!("{prefix}/{SHARED_CONFIG}");
    let folder = format!("{prefix}/");
    // `.versus` itself tracked (a link, a file) or anything inside it.
    if index.get_path(Path::new(&prefix), 0).is_some() {
        return Some(prefix);
    }
    let start = index.find_prefix(Path::new(&folder)).ok()?;
    index
        .iter()
        .skip(start)
        .map(|entry| String::from_utf8_lossy(&entry.path).into_owned())
        .take_while(|path| path.starts_with(&folder))
        .find(|path| *path != config)
}

/// Reads a small file without following a symlink at its name, never blocking on a fifo.
fn read_small(path: &Path) -> io::Result<String> {
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "not a regular file",
        ));
    }
    let mut text = String::new();
    file.take(SMALL_FILE_CAP).read_to_string(&mut text)?;
    Ok(text)
}

/// `N` bytes from the kernel's random source.
fn random_bytes<const N: usize>() -> io::Result<[u8; N]> {
    let mut bytes = [0u8; N];
    fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

/// Compares two equal-length strings without stopping at the first difference.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Adds `rel` to the index of the repository at `root` (made when missing).
    fn git_add(root: &Path, rel: &str) {
        let repo = git2::Repository::open(root)
            .or_else(|_| git2::Repository::init(root))
            .unwrap();
        let mut index = repo.index().unwrap();
        index.add_path(Path::new(rel)).unwrap();
        index.write().unwrap();
    }

    fn key() -> (tempfile::TempDir, OwnerKey) {
        let state = tempfile::tempdir().unwrap();
        let key = OwnerKey::at(&state.path().join("versus/store-key")).unwrap();
        (state, key)
    }

    #[test]
    fn a_key_is_made_once_and_read_back() {
        let state = tempfile::tempdir().unwrap();
        let path = state.path().join("versus/store-key");
        let a = OwnerKey::at(&path).unwrap();
        let b = OwnerKey::at(&path).unwrap();
        assert_eq!(a.key, b.key);
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert!(!format!("{a:?}").contains(&hex(&a.key)));
    }

    #[test]
    fn a_stamp_vouches_for_its_own_folder_only() {
        let (_state, key) = key();
        let project = tempfile::tempdir().unwrap();
        let root = project.path().join(".versus");
        fs::create_dir(&root).unwrap();
        key.stamp(&root, StampKind::Store, false).unwrap();
        assert!(key.verify(&root, StampKind::Store));
        assert!(!key.verify(&root, StampKind::Session));
        // Another user's key, or a copy of the folder (new inode), is not vouched for.
        let (_other_state, other) = self::key();
        assert!(!other.verify(&root, StampKind::Store));
        let copy = project.path().join("copy");
        fs::create_dir(&copy).unwrap();
        fs::copy(root.join(STAMP_FILE), copy.join(STAMP_FILE)).unwrap();
        assert!(!key.verify(&copy, StampKind::Store));
        // Renaming keeps it.
        let moved = project.path().join("moved");
        fs::rename(&root, &moved).unwrap();
        assert!(key.verify(&moved, StampKind::Store));
    }

    #[test]
    fn inspect_tells_absent_claimable_owned_and_foreign_apart() {
        let (_state, key) = key();
        let project = tempfile::tempdir().unwrap();
        let p = project.path().canonicalize().unwrap();
        assert_eq!(inspect(&p, &key).unwrap(), StoreState::Absent);
        fs::create_dir_all(p.join(".versus/sessions")).unwrap();
        fs::write(p.join(".versus/config.toml"), "").unwrap();
        assert_eq!(inspect(&p, &key).unwrap(), StoreState::Claimable);
        fs::create_dir(p.join(".versus/sessions/s1")).unwrap();
        let why = |r: Result<StoreState, SessionError>| match r {
            Err(SessionError::Foreign { why, .. }) => why,
            other => panic!("{other:?}"),
        };
        assert_eq!(why(inspect(&p, &key)), Foreign::Unstamped);
        key.stamp(&p.join(".versus"), StampKind::Store, false)
            .unwrap();
        assert_eq!(inspect(&p, &key).unwrap(), StoreState::Owned);
        let (_s, other) = self::key();
        assert_eq!(why(inspect(&p, &other)), Foreign::NotOurs);
        std::os::unix::fs::symlink("/tmp", p.join(".versus/reports")).unwrap();
        assert!(matches!(
            why(inspect(&p, &key)),
            Foreign::LinkInside { name } if name == "reports"
        ));
        fs::remove_file(p.join(".versus/reports")).unwrap();
        // Tracked by git: refused, except the shared config.
        git_add(&p, ".versus/config.toml");
        assert_eq!(inspect(&p, &key).unwrap(), StoreState::Owned);
        fs::write(p.join(".versus/sessions/s1/journal.jsonl"), "").unwrap();
        git_add(&p, ".versus/sessions/s1/journal.jsonl");
        assert_eq!(
            why(inspect(&p, &key)),
            Foreign::Tracked {
                path: ".versus/sessions/s1/journal.jsonl".into()
            }
        );
        let text = Foreign::Tracked { path: "x".into() }.describe(&p.join(".versus"));
        assert!(text.contains("rm -r -q --cached .versus"), "{text}");
        assert_eq!(shell_quote(Path::new("/a b/it's")), "'/a b/it'\\''s'");
        // A symlinked .versus.
        let elsewhere = tempfile::tempdir().unwrap();
        let q = elsewhere.path().canonicalize().unwrap();
        std::os::unix::fs::symlink(&p, q.join(".versus")).unwrap();
        assert!(matches!(why(inspect(&q, &key)), Foreign::Symlink { .. }));
    }
}
