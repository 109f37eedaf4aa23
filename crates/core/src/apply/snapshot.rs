//! Pre-apply snapshots: what every path looked like before an apply touched it.
//!
//! Layout: `<session>/snapshots/<apply-id>/manifest.json`, `entries/<k>/<n>` holding the old file of
//! the manifest's entry `n`, and `new/<k>/<n>` holding the content the apply is about to put there
//! (staged, so the apply itself is only renames). The manifest also records the hash of what the
//! apply writes, so rewind can tell a file edited after the apply from one still as the apply
//! left it, and the folders the apply will create, so rewind can remove them again when empty.
//!
//! The old file is **hard-linked**, not copied: the apply replaces the user's file by renaming
//! new content over it, so the old inode is never written again and lives on, unchanged, under
//! `entries/`. No bytes are copied and only data not yet on disk has to be flushed. A link is
//! only kept when it provably names the very file that was read (same inode, size and
//! modification time) and that file had no other name (a second name could change it in place
//! later); otherwise, and when linking fails (another filesystem, a protected link), the bytes
//! are copied. Everything is durable (files and folders) before the journal's `begin` record is
//! written. Snapshots of older versions (`objects/<blake3>`, copies shared by content) are still
//! read.

use std::collections::BTreeSet;
use std::fs;
use std::io::{Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::durable::{FlushQueue, make_and_flush, parent_of, sync_dirs, sync_files};
use super::{ApplyError, Result, content_hash};
use crate::fsutil::atomic_write;
use crate::workspace::ProjectPath;

/// Name of the snapshots folder inside a session folder.
pub const SNAPSHOTS_DIR: &str = "snapshots";
/// Folder of a snapshot holding the old file of each entry (`entries/<k>/<n>`: `k` the thread that made it; older snapshots `entries/<n>`).
const ENTRIES_DIR: &str = "entries";
/// Folder of a snapshot holding the staged new content of each entry (`new/<k>/<n>`).
const STAGED_DIR: &str = "new";
/// Suffix of the second name an object gets while it is being restored.
const RESTORE_SUFFIX: &str = ".restore";

/// The state of one path before the apply, and what the apply writes there.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SnapshotEntry {
    /// Relative `/` path.
    pub path: String,
    /// Content before the apply (`None`: the file did not exist).
    pub before: Option<StoredFile>,
    /// Hash of the content the apply writes (`None`: the apply deletes the file).
    pub after: Option<String>,
    /// The apply puts a symlink there and `after` is the hash of its target. Absent (false)
    /// in snapshots of applies that wrote only files.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub after_symlink: bool,
}

/// A stored old file: where its bytes are, their hash and the permission bits.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StoredFile {
    /// blake3 hex of the content.
    pub hash: String,
    /// Permission bits (`mode & 0o7777`).
    pub mode: u32,
    /// The file holding the bytes, relative to the snapshot folder (`entries/<k>/<n>`), this
    /// entry's alone, so it can be renamed back into place. Absent in snapshots made before
    /// hard-linking: their bytes are in `objects/<hash>`, shared by equal contents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<String>,
    /// The path was a symlink: the object holds its target text (`hash` is the target's),
    /// never the bytes behind it, and restoring it makes that link again (never followed).
    /// Absent (false) for regular files and in older snapshots.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub symlink: bool,
}

/// Everything needed to undo one apply.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Manifest {
    /// The apply this snapshot belongs to (also the snapshot id).
    pub apply_id: String,
    /// One entry per path the apply changes.
    pub entries: Vec<SnapshotEntry>,
    /// Folders (relative) that did not exist and that the apply creates, deepest first.
    pub created_dirs: Vec<String>,
}

/// Which file a path named when it was read: lets the snapshot hard-link exactly that file, and
/// notice when the path has been replaced or written since.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileIdentity {
    dev: u64,
    ino: u64,
    nlink: u64,
    size: u64,
    mtime: (i64, i64),
}

impl FileIdentity {
    /// The identity of the file `meta` describes.
    pub fn of(meta: &fs::Metadata) -> Self {
        Self {
            dev: meta.dev(),
            ino: meta.ino(),
            nlink: meta.nlink(),
            size: meta.size(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
        }
    }

    /// Same file, same size, same modification time: the bytes read are the bytes it holds.
    fn same_content(&self, other: &Self) -> bool {
        self.dev == other.dev
            && self.ino == other.ino
            && self.size == other.size
            && self.mtime == other.mtime
    }
}

/// A path about to change: its current bytes (if any) and the apply's new content.
#[derive(Debug, Clone)]
pub struct PendingChange<'a> {
    /// Resolved path.
    pub path: &'a ProjectPath,
    /// Current content and mode (`None`: does not exist).
    pub current: Option<(&'a [u8], u32)>,
    /// The file `current` was read from; `None` makes the snapshot copy the bytes.
    pub identity: Option<FileIdentity>,
    /// New content (`None`: delete).
    pub new: Option<&'a [u8]>,
    /// Permission bits the new content gets (`None`: the process's default for a new file).
    pub new_mode: Option<u32>,
    /// `new` is a symlink's target: nothing is staged, the apply makes the link in place
    /// ([`crate::fsutil::symlink_beneath`]).
    pub symlink: bool,
    /// `current` is the target of the symlink there now: the snapshot stores the target text
    /// (a copy, never a hard link, never followed), so rollback and rewind remake the link.
    pub current_symlink: bool,
}

/// A durable snapshot plus where the new content of each entry is staged.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// What was saved.
    pub manifest: Manifest,
    /// Per entry (same order): the staged new content, ready to be renamed into place; `None`
    /// for a deletion, or when the session is on another filesystem than the project (then the
    /// apply writes the file beside its target instead).
    pub staged: Vec<Option<PathBuf>>,
    /// Per entry: the identity of the user's file when the snapshot holds it by hard link (see
    /// [`still_as_read`]); `None` for a copy or a path that did not exist.
    pub linked: Vec<Option<FileIdentity>>,
}

/// Folder of one snapshot.
pub fn snapshot_dir(session: &Path, apply_id: &str) -> PathBuf {
    session.join(SNAPSHOTS_DIR).join(apply_id)
}

/// Stores the snapshot of `changes` and stages their new content, durably, and returns the
/// manifest. On failure nothing of it is left behind (no stray link to a user's file).
pub fn create(
    root: &Path,
    session: &Path,
    apply_id: &str,
    changes: &[PendingChange<'_>],
) -> Result<Snapshot> {
    let dir = snapshot_dir(session, apply_id);
    let made = create_in(root, session, &dir, apply_id, changes);
    if made.is_err() {
        let _ = fs::remove_dir_all(&dir);
    }
    made
}

fn create_in(
    root: &Path,
    session: &Path,
    dir: &Path,
    apply_id: &str,
    changes: &[PendingChange<'_>],
) -> Result<Snapshot> {
    let entries_dir = dir.join(ENTRIES_DIR);
    let staged_dir = dir.join(STAGED_DIR);
    // Each path's old file (a hard link, or a copy) and staged new content are independent
    // files: made by a few threads at once, since creating a thousand new inodes is most of a
    // large apply's time, each thread in folders of its own (`entries/<k>/`, `new/<k>/`):
    // creating a name locks its folder, and four threads filling one folder took turns.
    // Assembled in order afterwards.
    let chunk = chunk_of(changes.len());
    let shards = changes.len().div_ceil(chunk).max(1);
    let mut folders = BTreeSet::new();
    for top in [&entries_dir, &staged_dir] {
        for k in 0..shards {
            let d = top.join(k.to_string());
            fs::create_dir_all(&d).map_err(|e| ApplyError::io("create", &d, e))?;
            folders.insert(d);
        }
        folders.insert(top.clone());
    }
    // Staging only pays when the final step can be a rename.
    let stage = same_filesystem(root, &staged_dir);
    // Every file made is flushed (the old files: already on disk, unless the user just saved
    // them; the staged new content) before this returns. A large batch hands each file to
    // the flushing threads as soon as it is made, so the disk works while the rest is made;
    // a small one is flushed as one batch afterwards.
    let made = if changes.len() < PARALLEL_FROM {
        let made = in_parallel(changes, |n, c| {
            make_one(n, n / chunk, c, dir, &staged_dir, stage, None)
        })?;
        let files: Vec<PathBuf> = made
            .iter()
            .flat_map(|one| one.object.iter().chain(one.staged.iter()).cloned())
            .collect();
        sync_files(&files)?;
        made
    } else {
        make_and_flush(|queue| {
            in_parallel(changes, |n, c| {
                make_one(n, n / chunk, c, dir, &staged_dir, stage, Some(queue))
            })
        })?
    };
    let mut entries = Vec::with_capacity(changes.len());
    let mut staged = Vec::with_capacity(changes.len());
    let mut linked_ids = Vec::with_capacity(changes.len());
    let mut created_dirs: Vec<String> = Vec::new();
    for (c, one) in changes.iter().zip(made) {
        linked_ids.push(one.linked);
        staged.push(one.staged);
        if c.new.is_some() {
            missing_parents(root, c.path.rel(), &mut created_dirs);
        }
        entries.push(SnapshotEntry {
            path: c.path.rel().to_string(),
            before: one.before,
            after: one.after,
            after_symlink: c.symlink && c.new.is_some(),
        });
    }
    sync_dirs(&folders)?;
    created_dirs.sort_by_key(|d| std::cmp::Reverse(d.matches('/').count()));
    let manifest = Manifest {
        apply_id: apply_id.to_string(),
        entries,
        created_dirs,
    };
    let json = serde_json::to_vec_pretty(&manifest).map_err(|e| ApplyError::Snapshot {
        apply_id: apply_id.to_string(),
        why: format!("cannot encode the manifest: {e}"),
    })?;
    let path = dir.join("manifest.json");
    atomic_write(&path, &json).map_err(|e| ApplyError::io("write", &path, e))?;
    sync_dirs(
        &[dir.to_path_buf(), session.join(SNAPSHOTS_DIR)]
            .into_iter()
            .collect(),
    )?;
    Ok(Snapshot {
        manifest,
        staged,
        linked: linked_ids,
    })
}

/// What the snapshot made for one path.
struct Made {
    before: Option<StoredFile>,
    linked: Option<FileIdentity>,
    /// The old file's copy or link, to flush.
    object: Option<PathBuf>,
    /// The staged new content, to flush and later rename into place.
    staged: Option<PathBuf>,
    /// Hash of the new content (`None`: a deletion), made by the same thread.
    after: Option<String>,
}

/// Saves the old file of change `n` (hard link when it is exactly the file read, a copy
/// otherwise) and stages its new content, both in the folders of `shard`; each file made is
/// handed to `flush` at once when given (else the caller flushes them).
fn make_one(
    n: usize,
    shard: usize,
    c: &PendingChange<'_>,
    dir: &Path,
    staged_dir: &Path,
    stage: bool,
    flush: Option<&FlushQueue>,
) -> Result<Made> {
    let mut made = Made {
        before: None,
        linked: None,
        object: None,
        staged: None,
        after: c.new.map(content_hash),
    };
    if let Some((bytes, mode)) = c.current {
        let name = format!("{ENTRIES_DIR}/{shard}/{n}");
        let object = dir.join(&name);
        let linked = !c.current_symlink
            && c.identity
                .filter(|id| id.nlink == 1)
                .is_some_and(|id| link_exact(c.path.abs(), &object, &id));
        if !linked {
            write_new_file(&object, bytes, None)?;
        }
        made.linked = if linked { c.identity } else { None };
        if let Some(queue) = flush {
            queue.push(object.clone());
        }
        made.object = Some(object);
        made.before = Some(StoredFile {
            hash: content_hash(bytes),
            mode,
            object: Some(name),
            symlink: c.current_symlink,
        });
    }
    if let Some(bytes) = c.new
        && stage
        && !c.symlink
    {
        let path = staged_dir.join(shard.to_string()).join(n.to_string());
        write_new_file(&path, bytes, c.new_mode)?;
        if let Some(queue) = flush {
            queue.push(path.clone());
        }
        made.staged = Some(path);
    }
    Ok(made)
}

/// Threads that make a snapshot's files (each creates inodes in the same two folders; more
/// than a few only queue on the filesystem's locks).
const MAKERS: usize = 4;

/// Below this many changes one thread makes the snapshot.
const PARALLEL_FROM: usize = 32;

/// How many consecutive changes one thread (and one shard folder) takes.
fn chunk_of(len: usize) -> usize {
    if len < PARALLEL_FROM {
        len.max(1)
    } else {
        len.div_ceil(MAKERS)
    }
}

/// `f` over every change, by up to [`MAKERS`] threads (thread `k` takes the changes
/// `k * chunk_of(len)..`), results in order; the first error.
fn in_parallel<T: Send>(
    changes: &[PendingChange<'_>],
    f: impl Fn(usize, &PendingChange<'_>) -> Result<T> + Sync,
) -> Result<Vec<T>> {
    if changes.len() < PARALLEL_FROM {
        return changes.iter().enumerate().map(|(n, c)| f(n, c)).collect();
    }
    let chunk = chunk_of(changes.len());
    let f = &f;
    std::thread::scope(|scope| {
        let workers: Vec<_> = changes
            .chunks(chunk)
            .enumerate()
            .map(|(k, part)| {
                scope.spawn(move || {
                    part.iter()
                        .enumerate()
                        .map(|(i, c)| f(k * chunk + i, c))
                        .collect::<Result<Vec<T>>>()
                })
            })
            .collect();
        let mut out = Vec::with_capacity(changes.len());
        let mut first_error = None;
        for worker in workers {
            match worker.join() {
                Ok(Ok(part)) => out.extend(part),
                Ok(Err(e)) => {
                    first_error.get_or_insert(e);
                }
                Err(_) => {
                    first_error.get_or_insert(ApplyError::io(
                        "snapshot",
                        PathBuf::new(),
                        std::io::Error::other("a snapshot thread panicked"),
                    ));
                }
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(out),
        }
    })
}

/// Whether the file at `target`, whose old file the snapshot holds by hard link, is still
/// exactly what was read (`id`: same inode, size and modification time). Checked just before
/// the apply replaces it: a file an editor saved in the meantime is the user's newest work.
pub fn still_as_read(target: &Path, id: &FileIdentity) -> bool {
    fs::symlink_metadata(target).is_ok_and(|m| FileIdentity::of(&m).same_content(id))
}

/// Hard-links `src` as `object` and keeps the link only if it names the file that was read
/// (`id`) and nothing else names it; otherwise removes it. False means: copy the bytes instead.
fn link_exact(src: &Path, object: &Path, id: &FileIdentity) -> bool {
    if fs::hard_link(src, object).is_err() {
        return false;
    }
    let exact = fs::symlink_metadata(object).is_ok_and(|m| {
        let now = FileIdentity::of(&m);
        m.is_file() && now.same_content(id) && now.nlink == 2
    });
    if !exact {
        let _ = fs::remove_file(object);
    }
    exact
}

/// Creates `path` (which must not exist) holding `bytes`, with `mode` if given. Not flushed:
/// the caller flushes a batch at once.
fn write_new_file(path: &Path, bytes: &[u8], mode: Option<u32>) -> Result<()> {
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| ApplyError::io("create", path, e))?;
    file.write_all(bytes)
        .map_err(|e| ApplyError::io("write", path, e))?;
    if let Some(m) = mode {
        file.set_permissions(fs::Permissions::from_mode(m & 0o7777))
            .map_err(|e| ApplyError::io("set the mode of", path, e))?;
    }
    // Its flush comes later (with the batch); the disk can start on it now.
    super::durable::start_writeback(&file);
    Ok(())
}

/// Whether `root` and `dir` are on one filesystem (a rename between them can work).
fn same_filesystem(root: &Path, dir: &Path) -> bool {
    match (fs::metadata(root), fs::metadata(dir)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev(),
        _ => false,
    }
}

/// Reads a snapshot's manifest back from disk.
pub fn load(session: &Path, apply_id: &str) -> Result<Manifest> {
    let path = snapshot_dir(session, apply_id).join("manifest.json");
    let bytes = fs::read(&path).map_err(|e| ApplyError::Snapshot {
        apply_id: apply_id.to_string(),
        why: format!("cannot read {}: {e}", path.display()),
    })?;
    serde_json::from_slice(&bytes).map_err(|e| ApplyError::Snapshot {
        apply_id: apply_id.to_string(),
        why: format!("manifest does not parse: {e}"),
    })
}

/// Where the bytes of a stored file are.
fn object_path(session: &Path, apply_id: &str, stored: &StoredFile) -> PathBuf {
    let dir = snapshot_dir(session, apply_id);
    match &stored.object {
        Some(name) => dir.join(name),
        None => dir.join("objects").join(&stored.hash),
    }
}

/// Reads a stored old file, checking it still hashes to what the manifest says.
pub fn blob(session: &Path, apply_id: &str, stored: &StoredFile) -> Result<Vec<u8>> {
    let path = object_path(session, apply_id, stored);
    let bytes = fs::read(&path).map_err(|e| ApplyError::Snapshot {
        apply_id: apply_id.to_string(),
        why: format!("cannot read {}: {e}", path.display()),
    })?;
    if content_hash(&bytes) != stored.hash {
        return Err(ApplyError::Snapshot {
            apply_id: apply_id.to_string(),
            why: format!("{} no longer matches its hash", path.display()),
        });
    }
    Ok(bytes)
}

/// Reads a regular file's bytes and permission bits; `None` when nothing is there. Symlinks
/// and folders are refused: the engine only snapshots and replaces regular files.
pub fn read_current(path: &ProjectPath) -> Result<Option<(Vec<u8>, u32)>> {
    Ok(read_current_identified(path)?.map(|(bytes, mode, _)| (bytes, mode)))
}

/// [`read_current`] plus the identity of the file the bytes came from (read through one open
/// handle, so the two agree), for hard-linking it into a snapshot.
pub fn read_current_identified(path: &ProjectPath) -> Result<Option<(Vec<u8>, u32, FileIdentity)>> {
    let abs = path.abs();
    let not_a_file = || ApplyError::NotAFile {
        path: path.rel().to_string(),
    };
    match fs::symlink_metadata(abs) {
        Ok(m) if !m.is_file() => return Err(not_a_file()),
        Ok(_) => {}
        Err(e) if is_absent(&e) => return Ok(None),
        Err(e) => return Err(ApplyError::io("inspect", abs, e)),
    }
    let mut file = match fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(abs)
    {
        Ok(f) => f,
        Err(e) if is_absent(&e) => return Ok(None),
        Err(e) if e.raw_os_error() == Some(nix::libc::ELOOP) => return Err(not_a_file()),
        Err(e) => return Err(ApplyError::io("read", abs, e)),
    };
    let meta = file
        .metadata()
        .map_err(|e| ApplyError::io("inspect", abs, e))?;
    if !meta.is_file() {
        return Err(not_a_file());
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.read_to_end(&mut bytes)
        .map_err(|e| ApplyError::io("read", abs, e))?;
    Ok(Some((
        bytes,
        meta.permissions().mode() & 0o7777,
        FileIdentity::of(&meta),
    )))
}

/// What is at `path` now, as rewind compares it with what an apply left there: the bytes
/// of a regular file, or the target of a symlink (read, never followed), so a link the apply
/// made is compared by target and a link made since the apply counts as an edit. The flag says
/// whether the bytes are a link's target. Folders are refused as by [`read_current`].
pub fn read_current_for(path: &ProjectPath) -> Result<Option<(Vec<u8>, bool)>> {
    if fs::symlink_metadata(path.abs()).is_ok_and(|m| m.file_type().is_symlink()) {
        let target = fs::read_link(path.abs())
            .map_err(|err| ApplyError::io("read the link", path.abs(), err))?;
        return Ok(Some((target.into_os_string().into_encoded_bytes(), true)));
    }
    Ok(read_current(path)?.map(|(bytes, _)| (bytes, false)))
}

/// Whether `path` no longer holds what entry `e`'s apply left there (edited since), given
/// what [`read_current_for`] read: same kind (file or link) and same content hash.
pub fn edited_since(current: Option<&(Vec<u8>, bool)>, e: &SnapshotEntry) -> bool {
    match current {
        None => e.after.is_some(),
        Some((bytes, link)) => *link != e.after_symlink || Some(content_hash(bytes)) != e.after,
    }
}

/// Puts one entry back exactly: old bytes and mode, or no file at all. The old file is renamed
/// back into place when the snapshot holds it as a file of its own (the user gets their very
/// file back, nothing is rewritten); older snapshots, and a session on another filesystem, have
/// the bytes written (temp + fsync + rename). Returns the folder whose entries changed, for the
/// caller to flush with the others.
pub fn restore_entry(
    root: &Path,
    session: &Path,
    apply_id: &str,
    e: &SnapshotEntry,
) -> Result<PathBuf> {
    let path = ProjectPath::resolve(root, &e.path)?;
    let abs = path.abs();
    let current = match fs::symlink_metadata(abs) {
        Ok(m) => Some(m),
        Err(err) if is_absent(&err) => None,
        Err(err) => return Err(ApplyError::io("inspect", abs, err)),
    };
    match &e.before {
        Some(stored) if stored.symlink => {
            // A link was there: made again with its exact target, under a temporary name and
            // renamed over whatever the apply left (file, link or nothing), never following.
            if current.as_ref().is_some_and(|m| m.is_dir()) {
                return Err(ApplyError::NotAFile {
                    path: e.path.clone(),
                });
            }
            let target = blob(session, apply_id, stored)?;
            crate::fsutil::symlink_beneath(root, path.rel(), &target)
                .map_err(|err| ApplyError::io("restore the symlink", abs, err))?;
        }
        Some(stored) => {
            // A symlink there (the one this apply made, or one made since when rewind is
            // forced) is replaced by the old file with a rename, never followed.
            let link = current.as_ref().is_some_and(|m| m.is_symlink());
            if current.as_ref().is_some_and(|m| !m.is_file()) && !link {
                return Err(ApplyError::NotAFile {
                    path: e.path.clone(),
                });
            }
            let object = object_path(session, apply_id, stored);
            // Still the very file the snapshot holds (a rollback of a path the apply had not
            // reached yet): nothing to move, and its bytes are not checked against the hash,
            // since a file saved in place after it was read (the reason an apply stops with
            // `ChangedWhileApplying`) is the user's newest work and stays as it is.
            let in_place = stored.object.is_some()
                && current.as_ref().is_some_and(|m| {
                    fs::symlink_metadata(&object)
                        .is_ok_and(|o| o.dev() == m.dev() && o.ino() == m.ino())
                });
            if !in_place {
                // Checked against its hash before it goes back in place, either way.
                let bytes = blob(session, apply_id, stored)?;
                if !(stored.object.is_some() && rename_back(&object, abs)) {
                    atomic_write(abs, &bytes).map_err(|err| ApplyError::io("write", abs, err))?;
                }
            }
            fs::set_permissions(abs, fs::Permissions::from_mode(stored.mode))
                .map_err(|err| ApplyError::io("set the mode of", abs, err))?;
        }
        None => match fs::remove_file(abs) {
            Ok(()) => {}
            Err(err) if is_absent(&err) => {}
            Err(err) => return Err(ApplyError::io("remove", abs, err)),
        },
    }
    Ok(parent_of(abs))
}

/// Moves a second name of `object` over `target` (one atomic rename; the object keeps its own
/// name until the snapshot is discarded, so an interrupted rewind can be done again). False
/// when that is not possible (another filesystem): the caller writes the bytes instead.
fn rename_back(object: &Path, target: &Path) -> bool {
    let mut second = object.as_os_str().to_owned();
    second.push(RESTORE_SUFFIX);
    let second = PathBuf::from(second);
    let _ = fs::remove_file(&second);
    if fs::hard_link(object, &second).is_err() {
        return false;
    }
    let moved = fs::create_dir_all(parent_of(target)).and_then(|()| fs::rename(&second, target));
    if moved.is_err() {
        let _ = fs::remove_file(&second);
    }
    moved.is_ok()
}

/// Drops the old files and staged content of a snapshot once the journal says it is rewound or
/// rolled back (the manifest stays, as a record). Until then they are kept, so the step can be
/// repeated after a crash. Restored files were given back by rename, so this only drops the
/// snapshot's second name of them.
pub fn discard_files(session: &Path, apply_id: &str) {
    let dir = snapshot_dir(session, apply_id);
    for sub in [ENTRIES_DIR, STAGED_DIR] {
        let _ = fs::remove_dir_all(dir.join(sub));
    }
}

/// Removes the snapshots no journal record names: left by an apply that stopped (crash, power
/// cut) before its `begin` record was durable, so before it changed anything. Their old files
/// are second names of the user's files, which would otherwise stay shared (and make the next
/// snapshot of those files a copy). Call with the project lock held.
pub fn remove_orphans(session: &Path, named: &BTreeSet<String>) {
    let Ok(listing) = fs::read_dir(session.join(SNAPSHOTS_DIR)) else {
        return;
    };
    for found in listing.flatten() {
        let name = found.file_name().to_string_lossy().into_owned();
        if !named.contains(&name) && found.file_type().is_ok_and(|t| t.is_dir()) {
            let _ = fs::remove_dir_all(found.path());
        }
    }
}

/// Removes the (by then empty) staging folders of a committed apply.
pub fn discard_staging(session: &Path, apply_id: &str) {
    let staged = snapshot_dir(session, apply_id).join(STAGED_DIR);
    if let Ok(shards) = fs::read_dir(&staged) {
        for shard in shards.flatten() {
            let _ = fs::remove_dir(shard.path());
        }
    }
    let _ = fs::remove_dir(&staged);
}

/// Removes the temporary files a killed apply left next to the paths it was writing
/// (`.NAME.versus-tmp-...`, see [`crate::fsutil::is_temp_for`]). Only names of this exact
/// shape beside a path of the manifest are touched; the project lock guarantees no other
/// versus is writing them.
pub fn remove_temp_debris(root: &Path, manifest: &Manifest) {
    for entry in &manifest.entries {
        let path = root.join(&entry.path);
        let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
            continue;
        };
        let name = name.to_string_lossy();
        let Ok(listing) = fs::read_dir(dir) else {
            continue;
        };
        for found in listing.flatten() {
            let candidate = found.file_name();
            if crate::fsutil::is_temp_for(&name, &candidate.to_string_lossy())
                && found
                    .file_type()
                    .is_ok_and(|t| t.is_file() || t.is_symlink())
            {
                let _ = fs::remove_file(found.path());
            }
        }
    }
}

/// Removes the folders an apply created, deepest first, keeping any that are not empty.
/// Returns the folders whose entries changed (parents of the removed ones), to be flushed.
pub fn remove_created_dirs(root: &Path, manifest: &Manifest) -> BTreeSet<PathBuf> {
    let mut changed = BTreeSet::new();
    for d in &manifest.created_dirs {
        // A folder still holding files (the user's, or restored ones) is kept on purpose.
        let dir = root.join(d);
        if fs::remove_dir(&dir).is_ok() {
            changed.insert(parent_of(&dir));
        }
    }
    changed
}

/// Adds every not-yet-existing parent folder of `rel` to `out` (deduplicated).
fn missing_parents(root: &Path, rel: &str, out: &mut Vec<String>) {
    let mut parts: Vec<&str> = rel.split('/').collect();
    parts.pop();
    for i in 1..=parts.len() {
        let dir = parts[..i].join("/");
        if !root.join(&dir).exists() && !out.contains(&dir) {
            out.push(dir);
        }
    }
}

/// True when an error means "nothing there": missing, or a parent is now a file.
fn is_absent(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn stores_blobs_modes_and_missing_parents() {
        let root = tempfile::tempdir().unwrap();
        let session = tempfile::tempdir().unwrap();
        let root_path = root.path().canonicalize().unwrap();
        fs::write(root_path.join("a.sh"), "old").unwrap();
        let a = ProjectPath::resolve(&root_path, "a.sh").unwrap();
        let n = ProjectPath::resolve(&root_path, "x/y/new.txt").unwrap();
        let changes = [
            PendingChange {
                path: &a,
                current: Some((b"old", 0o755)),
                identity: None,
                new: Some(b"new"),
                new_mode: Some(0o755),
                symlink: false,
                current_symlink: false,
            },
            PendingChange {
                path: &n,
                current: None,
                identity: None,
                new: Some(b"n"),
                new_mode: None,
                symlink: false,
                current_symlink: false,
            },
        ];
        let m = create(&root_path, session.path(), "id1", &changes)
            .unwrap()
            .manifest;
        assert_eq!(m.created_dirs, vec!["x/y".to_string(), "x".to_string()]);
        let loaded = load(session.path(), "id1").unwrap();
        assert_eq!(loaded, m);
        let stored = loaded.entries[0].before.clone().unwrap();
        assert_eq!(stored.mode, 0o755);
        assert_eq!(blob(session.path(), "id1", &stored).unwrap(), b"old");
        assert_eq!(loaded.entries[1].before, None);
    }

    /// Snapshots `rel` of `root` (as the engine does: identity from the read) and returns the
    /// snapshot and whether its old file is the user's very inode.
    fn snapshot_of(root: &Path, session: &Path, rel: &str) -> (Snapshot, bool) {
        let path = ProjectPath::resolve(root, rel).unwrap();
        let (bytes, mode, id) = read_current_identified(&path).unwrap().unwrap();
        let changes = [PendingChange {
            path: &path,
            current: Some((&bytes, mode)),
            identity: Some(id),
            new: Some(b"new\n"),
            new_mode: Some(mode),
            symlink: false,
            current_symlink: false,
        }];
        let snap = create(root, session, "s", &changes).unwrap();
        let stored = snap.manifest.entries[0].before.clone().unwrap();
        let object = object_path(session, "s", &stored);
        let linked =
            fs::metadata(&object).unwrap().ino() == fs::metadata(path.abs()).unwrap().ino();
        assert_eq!(blob(session, "s", &stored).unwrap(), bytes);
        (snap, linked)
    }

    #[test]
    fn a_file_with_one_name_is_hard_linked_not_copied() {
        let root = tempfile::tempdir().unwrap();
        let session = tempfile::tempdir().unwrap();
        let root_path = root.path().canonicalize().unwrap();
        fs::write(root_path.join("a.txt"), "old\n").unwrap();
        let (snap, linked) = snapshot_of(&root_path, session.path(), "a.txt");
        assert!(linked, "the snapshot is the user's file itself");
        assert!(snap.staged[0].as_ref().unwrap().exists());
    }

    #[test]
    fn a_file_with_another_name_is_copied_so_edits_through_that_name_cannot_reach_it() {
        let root = tempfile::tempdir().unwrap();
        let session = tempfile::tempdir().unwrap();
        let root_path = root.path().canonicalize().unwrap();
        fs::write(root_path.join("a.txt"), "old\n").unwrap();
        fs::hard_link(root_path.join("a.txt"), root_path.join("twin.txt")).unwrap();
        let (snap, linked) = snapshot_of(&root_path, session.path(), "a.txt");
        assert!(!linked, "a second name could change the snapshot in place");
        fs::write(root_path.join("twin.txt"), "edited through the twin\n").unwrap();
        let stored = snap.manifest.entries[0].before.clone().unwrap();
        assert_eq!(blob(session.path(), "s", &stored).unwrap(), b"old\n");
    }

    #[test]
    fn a_file_on_another_filesystem_is_copied_and_not_staged() {
        let shm = Path::new("/dev/shm");
        if !shm.is_dir() {
            return;
        }
        let root = tempfile::tempdir().unwrap();
        let session = tempfile::tempdir_in(shm).unwrap();
        let root_path = root.path().canonicalize().unwrap();
        if same_filesystem(&root_path, session.path()) {
            return; // nothing to test on this machine
        }
        fs::write(root_path.join("a.txt"), "old\n").unwrap();
        let (snap, linked) = snapshot_of(&root_path, session.path(), "a.txt");
        assert!(
            !linked,
            "a link cannot cross filesystems: the bytes are copied"
        );
        assert_eq!(snap.staged, vec![None]);
    }

    #[test]
    fn a_linked_file_saved_in_place_after_it_was_read_is_no_longer_as_read() {
        let root = tempfile::tempdir().unwrap();
        let session = tempfile::tempdir().unwrap();
        let root_path = root.path().canonicalize().unwrap();
        fs::write(root_path.join("a.txt"), "old\n").unwrap();
        let (snap, _) = snapshot_of(&root_path, session.path(), "a.txt");
        let linked = snap.linked[0].unwrap();
        let target = root_path.join("a.txt");
        assert!(still_as_read(&target, &linked));
        // Saved in place during the apply (same inode, more bytes).
        let mut f = fs::OpenOptions::new().append(true).open(&target).unwrap();
        f.write_all(b"typed during the apply\n").unwrap();
        drop(f);
        assert!(!still_as_read(&target, &linked));
    }

    #[test]
    fn a_file_changed_after_it_was_read_is_copied_from_what_was_read() {
        let root = tempfile::tempdir().unwrap();
        let session = tempfile::tempdir().unwrap();
        let root_path = root.path().canonicalize().unwrap();
        fs::write(root_path.join("a.txt"), "old\n").unwrap();
        let path = ProjectPath::resolve(&root_path, "a.txt").unwrap();
        let (bytes, mode, id) = read_current_identified(&path).unwrap().unwrap();
        fs::write(root_path.join("a.txt"), "changed meanwhile, longer\n").unwrap();
        let changes = [PendingChange {
            path: &path,
            current: Some((&bytes, mode)),
            identity: Some(id),
            new: None,
            new_mode: None,
            symlink: false,
            current_symlink: false,
        }];
        let snap = create(&root_path, session.path(), "s", &changes).unwrap();
        let stored = snap.manifest.entries[0].before.clone().unwrap();
        assert_eq!(blob(session.path(), "s", &stored).unwrap(), b"old\n");
        assert_eq!(fs::metadata(path.abs()).unwrap().nlink(), 1, "no link left");
    }
}
