//! [`RecordingView`]: a view wrapper that turns every write into a proposal record.
//!
//! Tools already send every write and delete through a [`FileView`]; wrapping the workspace's
//! view records each one, in order, with the tool and call that made it, so proposals need no
//! help from the tools. Bash writes straight to disk, so its changes are found afterwards by
//! [`RecordingView::bash_changes`], which compares the workspace with the base and with what
//! the recorded writes should have left there.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::{self, Read};
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::base::{Base, BaseKind, hash_bytes, scan_lenient};
use super::cow::Layers;
use super::error::WorkspaceError;
use super::notes::{MAX_HASHED, MAX_PROPOSED_FILE, MAX_PROPOSED_TOTAL, ScanNote};
use super::path::{PathError, ProjectPath};
use super::view::{EntryMeta, FileView, PendingChange, WriteOrigin};

/// One recorded change to one file, in the order the model made it. Serializable so a session
/// can save a model's writes and rebuild its change set after a restart; the content is a JSON
/// string when it is short UTF-8 text, and otherwise base64 or, in a session log, a reference
/// to a content-addressed file beside it ([`content`](super::content)).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FileWrite {
    /// `/`-separated path relative to the workspace root.
    pub path: String,
    /// The file's full new content; `None` for a delete.
    #[serde(with = "super::content")]
    pub content: Option<Arc<Vec<u8>>>,
    /// Which tool call made the change (`bash` for changes found by comparison).
    pub origin: WriteOrigin,
    /// Position in this workspace's sequence of changes, from 0.
    pub seq: u64,
    /// The content is a symlink's target, not file bytes: bash made a symlink at `path`.
    /// Recorded so the link is proposed as a link (shown and applied as one), never as the
    /// bytes behind it. Absent in records written before symlinks were proposed (false).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub symlink: bool,
}

impl FileWrite {
    /// The paths whose last change in `writes` is a delete, sorted: a model's summary says
    /// "deleted" for these rather than "wrote" (a file written and then deleted was deleted;
    /// one deleted and then written again was written).
    pub fn deleted_paths(writes: &[FileWrite]) -> Vec<String> {
        let mut last: std::collections::BTreeMap<&str, bool> = std::collections::BTreeMap::new();
        for write in writes {
            last.insert(write.path.as_str(), write.content.is_none());
        }
        last.into_iter()
            .filter(|(_, deleted)| *deleted)
            .map(|(path, _)| path.to_string())
            .collect()
    }
}

/// Wraps a view and records every successful write and delete as a [`FileWrite`].
#[derive(Debug)]
pub struct RecordingView<V: FileView> {
    inner: V,
    log: Mutex<Vec<FileWrite>>,
    /// The layers of a copy-on-write workspace: the scan then hashes only what the model
    /// touched.
    layers: Option<Layers>,
    /// What the last bash-change scan left out, and why.
    notes: Mutex<Vec<ScanNote>>,
}

impl<V: FileView> RecordingView<V> {
    /// Starts recording over `inner`.
    pub fn new(inner: V) -> Self {
        Self {
            inner,
            log: Mutex::new(Vec::new()),
            layers: None,
            notes: Mutex::new(Vec::new()),
        }
    }

    /// Tells the bash-change scan that the view sits on an overlay over known files.
    pub(crate) fn with_layers(mut self, layers: Layers) -> Self {
        self.layers = Some(layers);
        self
    }

    /// The wrapped view.
    pub fn inner(&self) -> &V {
        &self.inner
    }

    /// Every change recorded so far, in order.
    pub fn writes(&self) -> Vec<FileWrite> {
        self.log().clone()
    }

    /// The log, even after a panic elsewhere poisoned its lock (the entries stay valid, and
    /// losing a proposal silently would be worse).
    fn log(&self) -> MutexGuard<'_, Vec<FileWrite>> {
        self.log.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Performs `op` on the inner view and records it, holding the log for both so the
    /// recorded order is the order the changes reached the view.
    fn apply(
        &self,
        path: &ProjectPath,
        content: Option<Arc<Vec<u8>>>,
        origin: &WriteOrigin,
        op: impl FnOnce() -> io::Result<()>,
    ) -> io::Result<()> {
        let mut log = self.log();
        op()?;
        let seq = log.len() as u64;
        log.push(FileWrite {
            path: path.rel().to_string(),
            content,
            origin: origin.clone(),
            seq,
            symlink: false,
        });
        Ok(())
    }

    /// Finds what bash changed in the workspace: every path whose state on disk (or in the
    /// view's pending changes) differs from what the base plus the recorded writes predict.
    /// Each becomes a [`FileWrite`] from tool `bash` (content read from the workspace, or
    /// `None` when the file is gone), numbered after the recorded writes. The result is also
    /// appended to the record, so calling this twice does not report the same change twice.
    ///
    /// Content counts, and of the mode only the execute bit (what review shows: `100644` or
    /// `100755`): a file bash only `chmod +x`ed is reported with its unchanged content, and
    /// the change set reads its mode from the workspace. Symlinks are never followed: a
    /// symlink bash created or changed (or a file it replaced by one) is recorded as a
    /// symlink ([`FileWrite::symlink`]) whose content is the link's target, never the bytes
    /// behind it (`rel.txt -> ../../../etc/passwd` is proposed as exactly that link, which
    /// apply then refuses because it points outside). A deleted symlink is a delete; a link
    /// to a folder does not stop the scan of the rest.
    ///
    /// Memory stays bounded whatever bash made: files are hashed streaming (up to
    /// [`MAX_HASHED`]); a file over [`MAX_PROPOSED_FILE`] is not read but noted with its size
    /// and hash, and the files read
    /// (smallest first) hold at most [`MAX_PROPOSED_TOTAL`] together; a folder deeper than
    /// [`MAX_DEPTH`](super::notes::MAX_DEPTH) or an entry that cannot be read is noted and
    /// neither proposed nor taken for deleted. What was left out is in
    /// [`RecordingView::scan_notes`]; every other change is still proposed.
    pub fn bash_changes(&self, base: &Base) -> Result<Vec<FileWrite>, WorkspaceError> {
        let root = self.inner.root().to_path_buf();
        let started = std::time::Instant::now();
        let mut scanned = match &self.layers {
            Some(layers) => scan_lenient(&root, &|rel| layers.unchanged(base, rel), MAX_HASHED),
            None => scan_lenient(&root, &|_| None, MAX_HASHED),
        };
        tracing::debug!(
            files = scanned.entries.len(),
            unseen = scanned.blind.len(),
            copy_on_write = self.layers.is_some(),
            ms = started.elapsed().as_millis() as u64,
            "workspace scanned for bash changes"
        );
        // A file bash only made executable (or not) keeps its bytes: its execute bit, the
        // part of a mode review shows, is compared too (paths the tools wrote are read again
        // when the change set is built, mode included).
        let exec_now: BTreeMap<String, bool> = scanned
            .entries
            .iter()
            .filter(|(_, e)| e.kind == BaseKind::File)
            .map(|(path, e)| (path.clone(), e.mode & 0o111 != 0))
            .collect();
        // Each state is (content hash, is a symlink): a file and a link with the same bytes
        // as target differ.
        let mut actual: BTreeMap<String, Option<(String, bool)>> = scanned
            .entries
            .iter()
            .map(|(path, entry)| {
                let link = entry.kind == BaseKind::Symlink;
                (path.clone(), Some((entry.hash.clone(), link)))
            })
            .collect();
        for change in self.inner.pending() {
            match change {
                PendingChange::Write { rel, content } => {
                    actual.insert(rel, Some((hash_bytes(&content), false)));
                }
                PendingChange::Delete { rel } => {
                    actual.insert(rel, None);
                }
            }
        }
        let mut expected: BTreeMap<String, Option<(String, bool)>> = base
            .entries()
            .iter()
            .map(|(path, entry)| {
                let link = entry.kind == BaseKind::Symlink;
                (path.clone(), Some((entry.hash.clone(), link)))
            })
            .collect();
        let mut written = BTreeSet::new();
        for write in self.writes() {
            let state = write.content.map(|c| (hash_bytes(&c), write.symlink));
            written.insert(write.path.clone());
            expected.insert(write.path, state);
        }
        let exec_flipped = |path: &String| {
            !written.contains(path)
                && base
                    .get(path)
                    .filter(|e| e.kind == BaseKind::File)
                    .zip(exec_now.get(path))
                    .is_some_and(|(e, now)| (e.mode & 0o111 != 0) != *now)
        };
        let paths: BTreeSet<&String> = actual.keys().chain(expected.keys()).collect();
        let mut notes = std::mem::take(&mut scanned.notes);
        // Changed paths: deletions and links first (nothing to hold), files by size.
        let mut found: Vec<Found> = Vec::new();
        let mut files: Vec<(u64, String, String)> = Vec::new();
        for path in paths {
            let now = actual.get(path).cloned().flatten();
            let predicted = expected.get(path).cloned().flatten();
            if now == predicted && !exec_flipped(path) {
                continue;
            }
            match now {
                // Absent because the walk could not look there: unknown, not deleted.
                None if !actual.contains_key(path) && scanned.unseen(path) => {}
                None => found.push((path.clone(), None, false)),
                Some((_, true)) => match read_link_target(&root, path) {
                    Ok(target) => {
                        tracing::info!(path = %path, "bash made a symlink; proposed as a symlink");
                        found.push((path.clone(), Some(Arc::new(target)), true));
                    }
                    Err(e) => notes.push(unreadable(path, &e)),
                },
                Some((hash, false)) => match self.size_of(&root, path) {
                    Ok(size) if size > MAX_PROPOSED_FILE => notes.push(ScanNote::TooLarge {
                        path: path.clone(),
                        size,
                        hash,
                    }),
                    Ok(size) => files.push((size, path.clone(), hash)),
                    Err(e) => notes.push(unreadable(path, &e)),
                },
            }
        }
        files.sort();
        // The files that fit the total by their scanned sizes are read by a few threads at
        // once (a pick of a bash change to 1,000 files read them one by one); what is held
        // is then counted in the same order as before, with the sizes actually read.
        let mut fits = 0;
        let mut by_scan: u64 = 0;
        for (size, _, _) in &files {
            by_scan = by_scan.saturating_add(*size);
            if by_scan > MAX_PROPOSED_TOTAL {
                break;
            }
            fits += 1;
        }
        let mut read_ahead = read_all(&self.inner, &root, &files[..fits]).into_iter();
        let mut held: u64 = 0;
        for (size, path, hash) in files {
            // Taken for each of the first `fits` files, whether or not it is held.
            let ahead = read_ahead.next();
            if held.saturating_add(size) > MAX_PROPOSED_TOTAL {
                notes.push(ScanNote::OverTotal { path, size, hash });
                continue;
            }
            let read = match ahead {
                Some(read) => read,
                None => read_current(&self.inner, &root, &path, MAX_PROPOSED_FILE),
            };
            match read {
                Ok(Some(bytes)) => {
                    held = held.saturating_add(bytes.len() as u64);
                    found.push((path, Some(Arc::new(bytes)), false));
                }
                // It grew past the limit since it was hashed.
                Ok(None) => notes.push(ScanNote::TooLarge { path, size, hash }),
                Err(e) => notes.push(unreadable(&path, &e)),
            }
        }
        found.sort_by(|a, b| a.0.cmp(&b.0));
        let notes = notes.into_vec();
        for note in &notes {
            tracing::warn!(note = %note, "bash change not proposed");
        }
        *self.notes.lock().unwrap_or_else(PoisonError::into_inner) = notes;
        let origin = WriteOrigin::new("bash", "");
        let mut log = self.log();
        let mut out = Vec::with_capacity(found.len());
        for (path, content, symlink) in found {
            let write = FileWrite {
                path,
                content,
                origin: origin.clone(),
                seq: log.len() as u64,
                symlink,
            };
            log.push(write.clone());
            out.push(write);
        }
        Ok(out)
    }

    /// What the last [`RecordingView::bash_changes`] saw but did not propose (too large, too
    /// deep, unreadable), for the user.
    pub fn scan_notes(&self) -> Vec<ScanNote> {
        self.notes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The size of `rel` as the view sees it (pending content in memory, else the file).
    fn size_of(&self, root: &Path, rel: &str) -> Result<u64, WorkspaceError> {
        if let Some(size) = self.inner.pending().iter().find_map(|p| match p {
            PendingChange::Write { rel: r, content } if r == rel => Some(content.len() as u64),
            _ => None,
        }) {
            return Ok(size);
        }
        let abs = root.join(rel);
        fs::symlink_metadata(&abs)
            .map(|m| m.len())
            .map_err(|e| WorkspaceError::io("inspect", abs, e))
    }
}

/// Threads that read a large bash change's files.
const READERS: usize = 4;

/// Below this many files one thread reads them.
const READ_PARALLEL_FROM: usize = 64;

/// [`read_current`] of each of `files` (size, path, hash), results in order; a large batch by
/// [`READERS`] threads, each taking consecutive files.
fn read_all<V: FileView>(
    view: &V,
    root: &Path,
    files: &[(u64, String, String)],
) -> Vec<Result<Option<Vec<u8>>, WorkspaceError>> {
    let one =
        |(_, path, _): &(u64, String, String)| read_current(view, root, path, MAX_PROPOSED_FILE);
    super::in_order::map_in_order(files, READERS, READ_PARALLEL_FROM, one)
}

/// A change bash made: path, new content (`None`: deleted), whether it is a symlink.
type Found = (String, Option<Arc<Vec<u8>>>, bool);

/// A note for a path whose read failed.
fn unreadable(path: &str, err: &WorkspaceError) -> ScanNote {
    let error = match err {
        WorkspaceError::Io { source, .. } => source.to_string(),
        other => other.to_string(),
    };
    ScanNote::Unreadable {
        path: path.to_string(),
        error,
    }
}

/// The target of the symlink at `root/rel`, as bytes (the link itself is read, never followed).
fn read_link_target(root: &Path, rel: &str) -> Result<Vec<u8>, WorkspaceError> {
    let abs = root.join(rel);
    let target = fs::read_link(&abs).map_err(|e| WorkspaceError::io("read the link", &abs, e))?;
    Ok(target.into_os_string().into_encoded_bytes())
}

/// Reads `rel` as the view sees it, falling back to the disk for paths the view refuses
/// (a symlink pointing outside is still the workspace's content). `None` when it holds more
/// than `limit` bytes: never more than that is read.
fn read_current<V: FileView>(
    view: &V,
    root: &Path,
    rel: &str,
    limit: u64,
) -> Result<Option<Vec<u8>>, WorkspaceError> {
    let abs = root.join(rel);
    if let Ok(path) = view.resolve(rel)
        && let Ok(reader) = view.open(&path)
    {
        return read_at_most(reader, limit).map_err(|e| WorkspaceError::io("read", &abs, e));
    }
    // Never through a symlink, at the last component or any folder on the way.
    let mut file = std::fs::OpenOptions::new();
    file.read(true);
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut file, nix::libc::O_NOFOLLOW);
    if fs::symlink_metadata(root.join(rel).parent().unwrap_or(root))
        .map(|m| m.file_type().is_symlink())
        .unwrap_or(false)
    {
        return Err(WorkspaceError::io(
            "read",
            abs,
            std::io::Error::other("a folder on the way is a symlink"),
        ));
    }
    let opened = file
        .open(&abs)
        .map_err(|e| WorkspaceError::io("read", &abs, e))?;
    read_at_most(opened, limit).map_err(|e| WorkspaceError::io("read", &abs, e))
}

/// All of `reader` when it holds at most `limit` bytes, `None` otherwise (reading stops one
/// byte past the limit).
fn read_at_most(reader: impl Read, limit: u64) -> io::Result<Option<Vec<u8>>> {
    let mut bytes = Vec::new();
    reader
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)?;
    Ok((bytes.len() as u64 <= limit).then_some(bytes))
}

impl<V: FileView> FileView for RecordingView<V> {
    fn root(&self) -> &Path {
        self.inner.root()
    }

    fn resolve(&self, raw: &str) -> Result<ProjectPath, PathError> {
        self.inner.resolve(raw)
    }

    fn metadata(&self, path: &ProjectPath) -> io::Result<EntryMeta> {
        self.inner.metadata(path)
    }

    fn open(&self, path: &ProjectPath) -> io::Result<Box<dyn Read + Send>> {
        self.inner.open(path)
    }

    fn read(&self, path: &ProjectPath) -> io::Result<Vec<u8>> {
        self.inner.read(path)
    }

    fn write(&self, path: &ProjectPath, content: &[u8], origin: &WriteOrigin) -> io::Result<()> {
        let recorded = Some(Arc::new(content.to_vec()));
        self.apply(path, recorded, origin, || {
            self.inner.write(path, content, origin)
        })
    }

    fn delete(&self, path: &ProjectPath, origin: &WriteOrigin) -> io::Result<()> {
        self.apply(path, None, origin, || self.inner.delete(path, origin))
    }

    fn written_by_model(&self, path: &ProjectPath) -> bool {
        self.inner.written_by_model(path)
    }

    fn pending(&self) -> Vec<PendingChange> {
        self.inner.pending()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::workspace::DirectView;

    #[test]
    fn records_in_order_and_finds_bash_changes() {
        let d = tempfile::tempdir().unwrap();
        fs::write(d.path().join("keep.txt"), "k").unwrap();
        fs::write(d.path().join("gone.txt"), "g").unwrap();
        let base = Base::capture(d.path()).unwrap();
        let v = RecordingView::new(DirectView::scratch(d.path()).unwrap());
        let a = v.resolve("a.txt").unwrap();
        v.write(&a, b"1", &WriteOrigin::new("write_file", "c1"))
            .unwrap();
        v.write(&a, b"2", &WriteOrigin::new("edit_file", "c2"))
            .unwrap();
        let w = v.writes();
        assert_eq!(w.len(), 2);
        assert_eq!((w[1].seq, w[1].origin.tool.as_str()), (1, "edit_file"));
        assert_eq!(w[1].content.as_deref().map(Vec::as_slice), Some(&b"2"[..]));
        assert!(v.bash_changes(&base).unwrap().is_empty());

        // "bash": a new file, a deletion, and an overwrite of the model's own file.
        fs::write(d.path().join("new.txt"), "x").unwrap();
        fs::remove_file(d.path().join("gone.txt")).unwrap();
        fs::write(d.path().join("a.txt"), "3").unwrap();
        let found = v.bash_changes(&base).unwrap();
        let paths: Vec<&str> = found.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, vec!["a.txt", "gone.txt", "new.txt"]);
        assert!(found.iter().all(|f| f.origin.tool == "bash"));
        assert_eq!(found[1].content, None);
        assert_eq!(found[0].seq, 2);
        // Already recorded: a second look finds nothing new.
        assert!(v.bash_changes(&base).unwrap().is_empty());
    }

    /// Enough changed files to be read by several threads: each is proposed with its own
    /// bytes, in path order, whatever their sizes (they are read smallest first).
    #[test]
    fn many_bash_changes_are_read_by_several_threads_each_with_its_own_content() {
        let d = tempfile::tempdir().unwrap();
        let n = READ_PARALLEL_FROM * 2 + 3;
        let name = |i: usize| format!("f{i:04}.txt");
        for i in 0..n {
            fs::write(d.path().join(name(i)), format!("base {i}\n")).unwrap();
        }
        let base = Base::capture(d.path()).unwrap();
        let v = RecordingView::new(DirectView::scratch(d.path()).unwrap());
        // "bash": sizes that do not follow the names, so reading order differs from path order.
        let content = |i: usize| format!("changed {i}\n{}", "x".repeat((i * 37) % 101));
        for i in 0..n {
            fs::write(d.path().join(name(i)), content(i)).unwrap();
        }
        let found = v.bash_changes(&base).unwrap();
        assert_eq!(found.len(), n);
        for (i, f) in found.iter().enumerate() {
            assert_eq!(f.path, name(i));
            assert_eq!(
                f.content.as_deref().map(Vec::as_slice),
                Some(content(i).as_bytes()),
                "{}",
                f.path
            );
        }
    }

    #[test]
    fn bash_symlinks_are_recorded_as_links_with_their_target_never_followed() {
        let d = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("secret"), "SECRET").unwrap();
        fs::write(d.path().join("plain.txt"), "src").unwrap();
        std::os::unix::fs::symlink("plain.txt", d.path().join("old_link")).unwrap();
        let base = Base::capture(d.path()).unwrap();
        let v = RecordingView::new(DirectView::scratch(d.path()).unwrap());
        // "bash": a link out, a link to a folder, a file replaced by a link with the same
        // text as target, and a base link deleted.
        std::os::unix::fs::symlink(outside.path().join("secret"), d.path().join("out")).unwrap();
        fs::create_dir(d.path().join("src")).unwrap();
        std::os::unix::fs::symlink("src", d.path().join("srclink")).unwrap();
        fs::remove_file(d.path().join("plain.txt")).unwrap();
        std::os::unix::fs::symlink("src", d.path().join("plain.txt")).unwrap();
        fs::remove_file(d.path().join("old_link")).unwrap();
        let found = v.bash_changes(&base).unwrap();
        let got: Vec<(&str, Option<&[u8]>, bool)> = found
            .iter()
            .map(|f| {
                (
                    f.path.as_str(),
                    f.content.as_deref().map(Vec::as_slice),
                    f.symlink,
                )
            })
            .collect();
        let out_target = outside.path().join("secret");
        assert_eq!(
            got,
            vec![
                ("old_link", None, false),
                ("out", Some(out_target.as_os_str().as_encoded_bytes()), true),
                ("plain.txt", Some(&b"src"[..]), true),
                ("srclink", Some(&b"src"[..]), true),
            ]
        );
        assert!(v.bash_changes(&base).unwrap().is_empty());
        // Old records (no `symlink` field) still read, as files.
        let old: FileWrite = serde_json::from_str(
            r#"{"path":"a","content":"x","origin":{"tool":"bash","call_id":""},"seq":0}"#,
        )
        .unwrap();
        assert!(!old.symlink);
        let json = serde_json::to_string(&found[3]).unwrap();
        assert!(json.contains("\"symlink\":true"), "{json}");
    }
}
