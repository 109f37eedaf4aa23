//! Filesystem primitives shared by every layer that writes user-visible files.
//!
//! A file is never half-written: content goes to a temporary file in the same directory (so the
//! final rename cannot cross filesystems), is flushed, gets the permissions of the file it
//! replaces, and is then renamed over the target in one atomic step. The one exception is a
//! model's private workspace ([`Durability::Scratch`]), written by its own tools one call at
//! a time, where an existing file is overwritten in place.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Whether a write must reach the disk before it is renamed into place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// fsync before rename: the user's own files, snapshots, journals. Survives a power cut.
    Synced,
    /// No fsync: private scratch trees (model workspaces) that a crash throws away anyway.
    /// Still atomic for every reader; an fsync of a 10 MB file can cost more than the edit.
    Unsynced,
    /// A model's own workspace, written only by its own tools, one call at a time: no fsync,
    /// and [`write_beneath`] overwrites an existing file that has one name in place instead of
    /// renaming a new file over it. Each temporary file costs a new inode and the replaced
    /// one a delete; on a busy ext4 volume without a journal, allocating that inode alone cost
    /// about 1 ms per edit in the harness benchmark (docs/benchmarks.md), more than the rest
    /// of the step. The model's tools run one call at a time, so none of them can read a file
    /// half written; the one reader that could is a person looking into the workspace by hand
    /// (a shell opened in it) during the microseconds of a write. A failure never leaves half
    /// a file (see `overwrite_in_place`).
    Scratch,
}

/// Writes `content` to `path` atomically (temp file in the same folder, fsync, rename).
///
/// Parent folders are created. An existing file's permission bits are kept, so an executable
/// script stays executable after a model rewrites it.
pub fn atomic_write(path: &Path, content: &[u8]) -> io::Result<()> {
    atomic_write_with(path, content, Durability::Synced)
}

/// [`atomic_write`] with a chosen [`Durability`].
pub fn atomic_write_with(path: &Path, content: &[u8], durability: Durability) -> io::Result<()> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    fs::create_dir_all(parent)?;
    let existing_perms = fs::metadata(path).ok().map(|m| m.permissions());
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".to_string());
    let tmp_path = unique_temp_path(parent, &file_name);
    let result = (|| {
        let mut tmp = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp_path)?;
        tmp.write_all(content)?;
        if durability == Durability::Synced {
            tmp.sync_all()?;
        }
        if let Some(perms) = existing_perms {
            fs::set_permissions(&tmp_path, perms)?;
        }
        fs::rename(&tmp_path, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp_path);
    }
    result
}

/// Folders of `rel` under `root`, opened one at a time from a handle on `root` with
/// `O_NOFOLLOW`: a folder that is (or is swapped for) a symlink fails the walk instead of
/// leading outside. Missing folders are created when `create` is set. Returns the handle of
/// the last folder and the final name.
fn walk_beneath<'r>(
    root: &Path,
    rel: &'r str,
    create: bool,
) -> io::Result<(std::os::fd::OwnedFd, &'r str)> {
    use nix::fcntl::{OFlag, open, openat};
    use nix::sys::stat::{Mode, mkdirat};
    let dir_flags = OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_RDONLY | OFlag::O_CLOEXEC;
    let mut parts: Vec<&str> = rel.split('/').filter(|p| !p.is_empty()).collect();
    let Some(name) = parts.pop() else {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "empty path"));
    };
    if parts
        .iter()
        .chain(std::iter::once(&name))
        .any(|p| *p == "." || *p == "..")
    {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "`.` and `..` are not allowed here",
        ));
    }
    let mut dir = open(root, dir_flags, Mode::empty()).map_err(io::Error::from)?;
    for part in parts {
        let next = match openat(&dir, part, dir_flags, Mode::empty()) {
            Err(nix::errno::Errno::ENOENT) if create => {
                match mkdirat(&dir, part, Mode::from_bits_truncate(0o755)) {
                    Ok(()) | Err(nix::errno::Errno::EEXIST) => {}
                    Err(e) => return Err(e.into()),
                }
                openat(&dir, part, dir_flags, Mode::empty())
            }
            other => other,
        };
        dir = next.map_err(|e| match e {
            nix::errno::Errno::ELOOP | nix::errno::Errno::ENOTDIR => io::Error::other(format!(
                "`{part}` in `{rel}` is not a real folder (a symlink or a file): refused"
            )),
            e => e.into(),
        })?;
    }
    Ok((dir, name))
}

/// [`atomic_write_with`] of `rel` inside `root`, race-free: every folder on the way is opened
/// from the one before without following symlinks, and the temporary file and the rename are
/// made relative to the last folder's handle. Whatever swaps a folder for a symlink meanwhile,
/// the bytes land under `root` or nowhere. A symlink at the final name is replaced, never
/// written through.
pub fn write_beneath(
    root: &Path,
    rel: &str,
    content: &[u8],
    durability: Durability,
) -> io::Result<()> {
    use nix::fcntl::{AtFlags, OFlag, openat, renameat};
    use nix::sys::stat::{Mode, fstatat};
    use std::os::unix::fs::PermissionsExt;
    let (dir, name) = walk_beneath(root, rel, true)?;
    let existing = fstatat(&dir, name, AtFlags::AT_SYMLINK_NOFOLLOW)
        .ok()
        .filter(|st| (st.st_mode & nix::libc::S_IFMT) == nix::libc::S_IFREG);
    if durability == Durability::Scratch
        && existing.is_some_and(|st| st.st_nlink == 1)
        && overwrite_in_place(&dir, name, content)?
    {
        return Ok(());
    }
    let mode = existing.map_or(0o644, |st| st.st_mode & 0o7777);
    let tmp_name = unique_temp_path(Path::new(""), name)
        .to_string_lossy()
        .into_owned();
    let fd = openat(
        &dir,
        tmp_name.as_str(),
        OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::from_bits_truncate(0o600),
    )
    .map_err(io::Error::from)?;
    let mut tmp = fs::File::from(fd);
    let result = (|| {
        tmp.write_all(content)?;
        tmp.set_permissions(fs::Permissions::from_mode(mode))?;
        if durability == Durability::Synced {
            tmp.sync_all()?;
        }
        renameat(&dir, tmp_name.as_str(), &dir, name).map_err(io::Error::from)
    })();
    if result.is_err() {
        let _ = nix::unistd::unlinkat(
            &dir,
            tmp_name.as_str(),
            nix::unistd::UnlinkatFlags::NoRemoveDir,
        );
    }
    result
}

/// Overwrites the regular file `name` in `dir` with `content` without a new inode (see
/// [`Durability::Scratch`]). Returns `Ok(false)`, having changed nothing, when the file cannot
/// be overwritten safely, so the caller falls back to a temporary file and a rename: it is not
/// a regular file with a single name (a hard link would change its other names too), it is
/// sparse (writing into a hole could run out of space half way), or the filesystem cannot
/// reserve space ahead. The room for a longer content is reserved before the first byte
/// changes (`fallocate`, size kept), so a full disk fails the write with the old content
/// intact and nothing else; the recorded writes and the disk never disagree.
fn overwrite_in_place(dir: &std::os::fd::OwnedFd, name: &str, content: &[u8]) -> io::Result<bool> {
    use nix::errno::Errno;
    use nix::fcntl::{FallocateFlags, OFlag, fallocate, openat};
    use nix::sys::stat::{Mode, fstat};
    use std::os::unix::fs::FileExt;
    // O_NONBLOCK: a FIFO put there meanwhile fails the open instead of blocking it.
    let flags = OFlag::O_WRONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC;
    let Ok(fd) = openat(dir, name, flags, Mode::empty()) else {
        return Ok(false);
    };
    let st = fstat(&fd).map_err(io::Error::from)?;
    let sparse = st.st_blocks.saturating_mul(512) < st.st_size;
    if (st.st_mode & nix::libc::S_IFMT) != nix::libc::S_IFREG || st.st_nlink != 1 || sparse {
        return Ok(false);
    }
    let (Ok(len), Ok(size)) = (i64::try_from(content.len()), u64::try_from(content.len())) else {
        return Ok(false);
    };
    if len > st.st_size {
        match fallocate(
            &fd,
            FallocateFlags::FALLOC_FL_KEEP_SIZE,
            st.st_size,
            len - st.st_size,
        ) {
            Ok(()) => {}
            Err(Errno::EOPNOTSUPP | Errno::ENOSYS | Errno::EINVAL) => return Ok(false),
            Err(e) => return Err(e.into()),
        }
    }
    let file = fs::File::from(fd);
    file.write_all_at(content, 0)?;
    file.set_len(size)?;
    Ok(true)
}

/// Creates (or replaces) the symlink `rel` inside `root` pointing to `target`, race-free as
/// [`write_beneath`]: every folder on the way is a real folder opened without following
/// (missing ones are created), the link is made under a temporary name in the last folder
/// (`symlinkat`) and renamed over the final name (`renameat`), which replaces whatever is
/// there without following it. The caller flushes the folder.
pub fn symlink_beneath(root: &Path, rel: &str, target: &[u8]) -> io::Result<()> {
    use nix::fcntl::renameat;
    use std::os::unix::ffi::OsStrExt;
    let (dir, name) = walk_beneath(root, rel, true)?;
    let tmp_name = unique_temp_path(Path::new(""), name)
        .to_string_lossy()
        .into_owned();
    let target = std::ffi::OsStr::from_bytes(target);
    nix::unistd::symlinkat(target, &dir, tmp_name.as_str()).map_err(io::Error::from)?;
    let moved = renameat(&dir, tmp_name.as_str(), &dir, name).map_err(io::Error::from);
    if moved.is_err() {
        let _ = nix::unistd::unlinkat(
            &dir,
            tmp_name.as_str(),
            nix::unistd::UnlinkatFlags::NoRemoveDir,
        );
    }
    moved
}

/// Opens (creating it if needed) the file `rel` inside `root` for reading and writing, without
/// following a symlink on the way or at the end: for lock files in a project's `.versus/`.
pub fn open_beneath_create(root: &Path, rel: &str) -> io::Result<fs::File> {
    use nix::fcntl::{OFlag, openat};
    use nix::sys::stat::Mode;
    let (dir, name) = walk_beneath(root, rel, true)?;
    let fd = openat(
        &dir,
        name,
        OFlag::O_RDWR | OFlag::O_CREAT | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::from_bits_truncate(0o644),
    )
    .map_err(io::Error::from)?;
    Ok(fs::File::from(fd))
}

/// Deletes the file `rel` inside `root`, race-free as [`write_beneath`] (a symlink at the final
/// name is removed itself, never its target).
pub fn remove_beneath(root: &Path, rel: &str) -> io::Result<()> {
    let (dir, name) = walk_beneath(root, rel, false)?;
    nix::unistd::unlinkat(&dir, name, nix::unistd::UnlinkatFlags::NoRemoveDir)
        .map_err(io::Error::from)
}

/// Opens the file `rel` inside `root` for reading, race-free as [`write_beneath`]: neither a
/// folder on the way nor the file itself may be a symlink.
pub fn open_beneath(root: &Path, rel: &str) -> io::Result<fs::File> {
    use nix::fcntl::{OFlag, openat};
    use nix::sys::stat::Mode;
    let (dir, name) = walk_beneath(root, rel, false)?;
    let fd = openat(
        &dir,
        name,
        OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| match e {
        nix::errno::Errno::ELOOP => io::Error::other(format!("`{rel}` is a symlink: refused")),
        e => e.into(),
    })?;
    Ok(fs::File::from(fd))
}

/// Reads the whole regular file at `path`, refusing anything that could make the read
/// unbounded or hang: a file over `cap` bytes, or something that is not a regular file (a
/// fifo, which would block waiting for a writer; `/dev/zero` or another device, which never
/// ends; a socket or a folder). A symlink is followed, but its target must be a regular
/// file too.
///
/// Why: versus reads files a project ships (`.env`, `.versus/config.toml`, recipes) and a
/// project is someone else's. `.env -> /dev/zero` made a plain `read_to_string` take the
/// machine's memory. The file is opened with `O_NONBLOCK` so a fifo cannot hold the open
/// itself, and it is checked on the open handle (`fstat`), so it cannot be swapped between
/// the check and the read; at most `cap + 1` bytes are ever read, in case it grows meanwhile.
/// The error's text says what was wrong and is meant to follow the file's name.
pub fn read_capped(path: &Path, cap: u64) -> io::Result<Vec<u8>> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_NOCTTY)
        .open(path)?;
    read_open_capped(file, cap)
}

/// [`read_capped`] of `rel` inside `root`, following no link at all: every folder on the way
/// and the file itself are opened without following (as [`open_beneath`]); a link anywhere
/// is an error, never a read of what it names.
///
/// Why: versus copies and rewrites files of a repository's own git folder (`info/exclude`),
/// and a repository unpacked from an archive carries its `.git` whole. `.git/info/exclude ->
/// ~/.ssh/id_ed25519` was read on the host and copied into the workspace's private
/// repository, where the model read the key with `cat .git/info/exclude`.
pub fn read_capped_beneath(root: &Path, rel: &str, cap: u64) -> io::Result<Vec<u8>> {
    read_open_capped(open_file_beneath(root, rel)?, cap)
}

/// The first `cap` bytes of the regular file `rel` inside `root`, following no link at all (as
/// [`read_capped_beneath`]), and the file's whole length: a file over the cap is cut, not
/// refused.
///
/// Why: a project's instruction files (`AGENTS.md`) go into every model's system prompt up to
/// a size cap; a long one is cut with a note saying so, where a config file over its cap is
/// an error. The file is still someone else's: no link followed, nothing but a regular file.
pub fn read_head_beneath(root: &Path, rel: &str, cap: u64) -> io::Result<(Vec<u8>, u64)> {
    read_open_head(open_file_beneath(root, rel)?, cap)
}

/// `rel` inside `root` opened for reading with no link followed on the way or at the end (a
/// final link is refused by name), without blocking on a FIFO or taking a terminal: the one
/// open of [`read_capped_beneath`] and [`read_head_beneath`].
fn open_file_beneath(root: &Path, rel: &str) -> io::Result<fs::File> {
    use nix::fcntl::{OFlag, openat};
    use nix::sys::stat::Mode;
    let (dir, name) = walk_beneath(root, rel, false)?;
    let flags = OFlag::O_RDONLY
        | OFlag::O_NOFOLLOW
        | OFlag::O_NONBLOCK
        | OFlag::O_NOCTTY
        | OFlag::O_CLOEXEC;
    let fd = openat(&dir, name, flags, Mode::empty()).map_err(|e| match e {
        nix::errno::Errno::ELOOP => io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("`{rel}` is a symlink: refused"),
        ),
        e => e.into(),
    })?;
    Ok(fs::File::from(fd))
}

/// [`read_head_beneath`] of a path the user chose (their own config folder): a link is
/// followed, but what it names must be a regular file.
pub fn read_head(path: &Path, cap: u64) -> io::Result<(Vec<u8>, u64)> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_NOCTTY)
        .open(path)?;
    read_open_head(file, cap)
}

fn read_open_head(file: fs::File, cap: u64) -> io::Result<(Vec<u8>, u64)> {
    use std::io::Read;
    let meta = file.metadata()?;
    if !meta.file_type().is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "it is not a regular file; versus reads only regular files here",
        ));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len().min(cap)).unwrap_or(0));
    file.take(cap).read_to_end(&mut bytes)?;
    let len = meta.len().max(bytes.len() as u64);
    Ok((bytes, len))
}

/// The checks and the bounded read of [`read_capped`] on a file already open.
fn read_open_capped(file: fs::File, cap: u64) -> io::Result<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::FileTypeExt;
    let meta = file.metadata()?;
    let kind = meta.file_type();
    if !kind.is_file() {
        let what = if kind.is_fifo() {
            "a fifo (named pipe)"
        } else if kind.is_char_device() || kind.is_block_device() {
            "a device"
        } else if kind.is_socket() {
            "a socket"
        } else if kind.is_dir() {
            "a folder"
        } else {
            "not a regular file"
        };
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("it is {what}, not a regular file; versus reads only regular files here"),
        ));
    }
    if meta.len() > cap {
        return Err(too_large(meta.len(), cap));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(cap + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(too_large(bytes.len() as u64, cap));
    }
    Ok(bytes)
}

/// The user's state folder (`$XDG_STATE_HOME`, else `~/.local/state`), found from the process
/// environment only, so a project file never decides where versus keeps what it trusts and
/// the key that tells its own `.versus` from copies. `None` without an absolute one.
pub fn user_state_dir() -> Option<PathBuf> {
    std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
                .map(|home| home.join(".local").join("state"))
        })
}

/// [`read_capped`] as UTF-8 text.
pub fn read_capped_string(path: &Path, cap: u64) -> io::Result<String> {
    String::from_utf8(read_capped(path, cap)?).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            "it is not UTF-8 text; save it as UTF-8",
        )
    })
}

fn too_large(len: u64, cap: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!(
            "it holds {len} bytes or more, over the {} versus reads for this file; is it the \
             right file?",
            human_size(cap)
        ),
    )
}

/// `1 MiB`, `64 KiB`, `512 bytes`.
fn human_size(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else if bytes >= 1 << 10 && bytes.is_multiple_of(1 << 10) {
        format!("{} KiB", bytes >> 10)
    } else {
        format!("{bytes} bytes")
    }
}

/// Whether `candidate` (a file name) is one of the temporary files [`atomic_write`] makes for
/// `file_name` in the same folder: debris when a write was killed before its rename.
pub fn is_temp_for(file_name: &str, candidate: &str) -> bool {
    candidate
        .strip_prefix('.')
        .and_then(|rest| rest.strip_prefix(file_name))
        .is_some_and(|rest| rest.starts_with(".versus-tmp-"))
}

fn unique_temp_path(dir: &Path, file_name: &str) -> std::path::PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    dir.join(format!(
        ".{file_name}.versus-tmp-{}-{n}-{nanos}",
        std::process::id()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn capped_reads_refuse_devices_fifos_and_big_files() {
        let dir = tempfile::tempdir().unwrap();
        let small = dir.path().join("small");
        fs::write(&small, b"abc").unwrap();
        assert_eq!(read_capped(&small, 3).unwrap(), b"abc");
        let err = read_capped(&small, 2).unwrap_err().to_string();
        assert!(err.contains("over the 2 bytes"), "{err}");
        let zero = read_capped(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert!(zero.to_string().contains("a device"), "{zero}");
        let fifo = dir.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        // Returns at once: no writer is waited for.
        let err = read_capped(&fifo, 1 << 20).unwrap_err();
        assert!(err.to_string().contains("fifo"), "{err}");
        let link = dir.path().join("link");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        assert!(read_capped(&link, 1 << 20).is_err());
        std::os::unix::fs::symlink(&small, dir.path().join("ok")).unwrap();
        assert_eq!(read_capped(&dir.path().join("ok"), 10).unwrap(), b"abc");
        assert_eq!(human_size(1 << 20), "1 MiB");
        assert_eq!(human_size(4 << 10), "4 KiB");
    }

    #[test]
    fn temp_names_are_recognised_for_their_file_only() {
        let tmp = unique_temp_path(Path::new(""), "a.txt");
        let name = tmp.to_string_lossy();
        assert!(is_temp_for("a.txt", &name));
        assert!(!is_temp_for("b.txt", &name));
        assert!(!is_temp_for("a.txt", "a.txt"));
        assert!(!is_temp_for("a", &name));
    }

    #[test]
    fn replaces_content_and_keeps_mode() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("run.sh");
        fs::write(&p, "old").unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
        atomic_write(&p, b"new").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"new");
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o755
        );
        let leftovers: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temp file left behind");
    }

    #[test]
    fn scratch_writes_overwrite_a_single_name_in_place_and_nothing_else() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir(root.join("src")).unwrap();
        let p = root.join("src/a.rs");
        fs::write(&p, "fn main() {}\n").unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
        let inode = fs::metadata(&p).unwrap().ino();
        // Longer, then shorter, then empty: same inode, exact bytes, mode kept.
        for content in [&b"fn main() { println!(\"hi\"); }\n"[..], b"x\n", b""] {
            write_beneath(root, "src/a.rs", content, Durability::Scratch).unwrap();
            assert_eq!(fs::read(&p).unwrap(), content);
            let meta = fs::metadata(&p).unwrap();
            assert_eq!(meta.ino(), inode, "overwritten in place");
            assert_eq!(meta.permissions().mode() & 0o777, 0o755);
        }
        // A file with a second name is replaced by a new file: the other name keeps its bytes.
        fs::hard_link(&p, root.join("other.rs")).unwrap();
        write_beneath(root, "src/a.rs", b"new", Durability::Scratch).unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"new");
        assert_eq!(fs::read(root.join("other.rs")).unwrap(), b"");
        assert_ne!(fs::metadata(&p).unwrap().ino(), inode);
        // A symlink at the name is replaced, never written through.
        fs::write(root.join("target.txt"), "keep").unwrap();
        std::os::unix::fs::symlink("target.txt", root.join("link.txt")).unwrap();
        write_beneath(root, "link.txt", b"mine", Durability::Scratch).unwrap();
        assert_eq!(fs::read(root.join("target.txt")).unwrap(), b"keep");
        assert!(
            fs::symlink_metadata(root.join("link.txt"))
                .unwrap()
                .is_file()
        );
        assert_eq!(fs::read(root.join("link.txt")).unwrap(), b"mine");
        // A new file is created as before; no temporary file is left anywhere.
        write_beneath(root, "src/new.rs", b"fresh", Durability::Scratch).unwrap();
        assert_eq!(fs::read(root.join("src/new.rs")).unwrap(), b"fresh");
        for folder in [root.to_path_buf(), root.join("src")] {
            for entry in fs::read_dir(folder).unwrap() {
                let name = entry.unwrap().file_name();
                assert!(!name.to_string_lossy().contains("versus-tmp"), "{name:?}");
            }
        }
    }

    #[test]
    fn creates_parent_folders() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a/b/c.txt");
        atomic_write(&p, b"x").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"x");
    }

    #[test]
    fn read_capped_beneath_follows_no_link_and_stays_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join("info")).unwrap();
        fs::write(root.join("secret"), "key").unwrap();
        fs::write(root.join("info/exclude"), "target/\n").unwrap();
        assert_eq!(
            read_capped_beneath(root, "info/exclude", 64).unwrap(),
            b"target/\n"
        );
        assert!(read_capped_beneath(root, "info/exclude", 4).is_err());
        std::os::unix::fs::symlink(root.join("secret"), root.join("info/linked")).unwrap();
        assert!(read_capped_beneath(root, "info/linked", 64).is_err());
        std::os::unix::fs::symlink("/dev/zero", root.join("info/zero")).unwrap();
        assert!(read_capped_beneath(root, "info/zero", 64).is_err());
        std::os::unix::fs::symlink(root.join("info"), root.join("via")).unwrap();
        assert!(read_capped_beneath(root, "via/exclude", 64).is_err());
        nix::unistd::mkfifo(&root.join("info/fifo"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert!(read_capped_beneath(root, "info/fifo", 64).is_err());
    }
}
