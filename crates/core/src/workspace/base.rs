//! [`Base`]: the project's files as the user has them when a run starts.
//!
//! A base is a map from `/`-separated relative path to a content hash, permission bits and
//! whether the entry is a symlink. It is what every workspace starts from and what proposals
//! and bash changes are measured against, so it must describe the working tree exactly as the
//! user sees it: committed, staged, unstaged and untracked files alike, without ignored files
//! or `.git`. The file set comes from the `ignore` crate (the same rules the tools' own walks
//! use: `.gitignore`, `.ignore`, `.git/info/exclude`, also outside a git repository), rather
//! than from `git status`, so a plain folder and a repository are captured the same way.
//!
//! Capture hashes files with blake3 on a parallel walk: one read per file and nothing else, so
//! a 10,000-file tree is captured in well under a second on a warm cache.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use ignore::{WalkBuilder, WalkState};
use serde::{Deserialize, Serialize};

use super::error::WorkspaceError;
use super::ignore_rules::IgnoreRules;
use super::manager::MARKER;
use super::notes::{MAX_DEPTH, Notes, ScanNote};
use super::stat_cache::{Capture, Stamp};

/// Whether a base entry is a regular file or a symlink (kept as a link, never followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BaseKind {
    /// A regular file; the hash covers its bytes.
    File,
    /// A symbolic link; the hash covers its target path.
    Symlink,
}

/// One file of the base: enough to tell whether a later copy of it differs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BaseEntry {
    /// blake3 of the content (or of the link target), lowercase hex.
    pub hash: String,
    /// Permission bits (`0o755` for an executable script); 0 where the platform has none.
    pub mode: u32,
    /// File or symlink.
    pub kind: BaseKind,
}

/// How a path in a workspace differs from the base.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "change", content = "path")]
pub enum DirChange {
    /// The path exists in the folder but not in the base.
    Added(String),
    /// The path exists in both with different content, mode or kind.
    Modified(String),
    /// The path exists in the base but not in the folder.
    Deleted(String),
}

impl DirChange {
    /// The path the change is about.
    pub fn path(&self) -> &str {
        match self {
            Self::Added(p) | Self::Modified(p) | Self::Deleted(p) => p,
        }
    }
}

/// The project's state at run start: path -> hash, mode, kind. Serializable so a session can
/// save it and an apply can check staleness after a restart.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Base {
    root: PathBuf,
    entries: BTreeMap<String, BaseEntry>,
    /// Folders of files named by their content's blake3 that may hold captured files' bytes
    /// (see [`Base::with_content_from`]); not part of what was captured.
    #[serde(skip)]
    content_from: Vec<PathBuf>,
}

impl Base {
    /// Captures the working tree under `root` (ignored files, `.git` and `.versus` excluded).
    pub fn capture(root: &Path) -> Result<Self, WorkspaceError> {
        let root = root
            .canonicalize()
            .map_err(|e| WorkspaceError::io("open the project folder", root, e))?;
        let started = std::time::Instant::now();
        let cache = Capture::start(&root);
        let entries = scan_with(&root, Some(&cache))?;
        let read = cache.files_read();
        cache.keep();
        tracing::debug!(
            files = entries.len(),
            read,
            ms = started.elapsed().as_millis() as u64,
            "project captured"
        );
        Ok(Self {
            root,
            entries,
            content_from: Vec::new(),
        })
    }

    /// A base rebuilt from recorded entries (a session reopened after a crash keeps the base
    /// entries of the paths its models touched, not a new capture).
    pub fn from_entries(root: PathBuf, entries: BTreeMap<String, BaseEntry>) -> Self {
        Self {
            root,
            entries,
            content_from: Vec::new(),
        }
    }

    /// Names a folder of files named by their content's blake3 (a session's `blobs/`) where
    /// captured files' exact bytes may already lie. Right after a pick, every file it applied
    /// is there: the layer of the uncommitted state that every model of the next turn reads
    /// (`cow::layer`) then hard-links those files instead of copying them, which on a
    /// filesystem that is slow to make new files (ext4 without a journal) was most of the
    /// next turn's start. A file is linked only when its bytes hash to the captured hash and
    /// its mode is the captured mode, and only into that read-only layer, never into a
    /// workspace a model writes.
    pub fn with_content_from(mut self, folder: PathBuf) -> Self {
        self.content_from.push(folder);
        self
    }

    /// The folders named by [`Base::with_content_from`].
    pub(crate) fn content_from(&self) -> &[PathBuf] {
        &self.content_from
    }

    /// The canonical project root the base was captured from.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The entry for `rel` (`/`-separated), if the path existed at run start.
    pub fn get(&self, rel: &str) -> Option<&BaseEntry> {
        self.entries.get(rel)
    }

    /// True when `rel` existed at run start.
    pub fn contains(&self, rel: &str) -> bool {
        self.entries.contains_key(rel)
    }

    /// Every entry, sorted by path.
    pub fn entries(&self) -> &BTreeMap<String, BaseEntry> {
        &self.entries
    }

    /// Number of files (and symlinks) in the base.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True for an empty project.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Compares the folder `dir` (a workspace) with the base, with the same ignore rules as
    /// capture, and lists what was added, modified or deleted, sorted by path. This is how
    /// changes made by bash (which bypass the file view) are found.
    pub fn diff_dir(&self, dir: &Path) -> Result<Vec<DirChange>, WorkspaceError> {
        let now = scan(dir)?;
        Ok(diff_maps(&self.entries, &now))
    }
}

/// Lists the changes from `before` to `after`, sorted by path.
pub(crate) fn diff_maps(
    before: &BTreeMap<String, BaseEntry>,
    after: &BTreeMap<String, BaseEntry>,
) -> Vec<DirChange> {
    let mut out = Vec::new();
    for (path, entry) in after {
        match before.get(path) {
            None => out.push(DirChange::Added(path.clone())),
            Some(old) if old != entry => out.push(DirChange::Modified(path.clone())),
            Some(_) => {}
        }
    }
    for path in before.keys() {
        if !after.contains_key(path) {
            out.push(DirChange::Deleted(path.clone()));
        }
    }
    out.sort_by(|a, b| a.path().cmp(b.path()));
    out
}

/// The ignore-aware walker every capture and copy uses, so they agree on the file set.
///
/// The rules are the tools' ([`IgnoreRules`]), read as git reads them: from the root of the
/// repository holding the project down (a project in a subfolder of its repository gets the
/// repository's `.gitignore` too), never from folders above that repository (a `.gitignore` in
/// the user's home is not the project's); a project outside any repository starts at its own
/// folder.
pub(crate) fn walker(root: &Path) -> WalkBuilder {
    let rules = IgnoreRules::new(&rules_top(root));
    let mut builder = WalkBuilder::new(root);
    builder
        .standard_filters(false)
        .follow_links(false)
        // A folder at the limit is still seen (a scan notes it) but never read.
        .max_depth(Some(MAX_DEPTH))
        // `.git` is a folder in a repository and a file in a worktree: skip both. `.versus`
        // holds versus' own sessions and reports: never part of the project a model sees
        // (outside git no ignore rule hides it).
        .filter_entry(move |entry| {
            entry.file_name() != ".git"
                && !(entry.depth() == 1 && entry.file_name() == ".versus")
                && !rules.ignored(entry.path(), entry.file_type().is_some_and(|t| t.is_dir()))
        });
    builder
}

/// Where the ignore rules of the project at `root` start: the nearest folder from `root` up
/// that holds a `.git` (folder or file) or is a workspace's tree (nothing above a workspace is
/// the project's: a copy has no `.git`, and the folders above it may belong to a repository of
/// their own, a dotfiles repository in the home folder ignoring `*`), else `root` itself; and
/// `root` itself when that repository ignores the project's folder.
fn rules_top(root: &Path) -> PathBuf {
    let top = root
        .ancestors()
        .find(|dir| {
            fs::symlink_metadata(dir.join(".git")).is_ok()
                || dir
                    .parent()
                    .is_some_and(|folder| folder.join(MARKER).is_file())
        })
        .unwrap_or(root);
    // The project's folder (or one on the way to it) ignored by the repository around it, as
    // a dotfiles repository at home ignoring `*` ignores everything below: the user named this
    // folder, so it is walked under its own rules, as `rg` walks a folder it is given even
    // when it is ignored.
    if ignored_by_repository(root, top) {
        return root.to_path_buf();
    }
    top.to_path_buf()
}

/// Whether the rules of the repository at `top` ignore the folder `root` below it (or a
/// folder on the way to it). The capture then takes `root` under its own rules, and a
/// workspace must be a copy: that repository's checkout and status do not hold it.
pub(crate) fn ignored_by_repository(root: &Path, top: &Path) -> bool {
    if root == top || !root.starts_with(top) {
        return false;
    }
    let rules = IgnoreRules::new(top);
    root.ancestors()
        .take_while(|dir| *dir != top)
        .any(|dir| rules.ignored(dir, true))
}

/// What one walk found: every file and symlink it could read, and what it could not see.
#[derive(Debug, Default)]
pub(crate) struct Scan {
    /// Path -> entry, for everything read.
    pub(crate) entries: BTreeMap<String, BaseEntry>,
    /// Paths the walk could not see: a folder it did not enter (too deep, unreadable; all
    /// below it is unknown) or a file it could not read. `""` means the root itself. Such a
    /// path is neither proposed nor taken for deleted.
    pub(crate) blind: BTreeSet<String>,
    /// Why, for the user (at most [`MAX_NOTES`](super::notes::MAX_NOTES)).
    pub(crate) notes: Notes,
}

impl Scan {
    /// Whether `rel` lies in something the walk could not see (the path or a folder above).
    pub(crate) fn unseen(&self, rel: &str) -> bool {
        if self.blind.is_empty() {
            return false;
        }
        if self.blind.contains("") || self.blind.contains(rel) {
            return true;
        }
        rel.match_indices('/')
            .any(|(at, _)| self.blind.contains(&rel[..at]))
    }
}

/// Walks `root` in parallel and hashes every file and symlink, strictly: what it cannot read
/// is an error (the user's own project must be captured exactly). A folder deeper than
/// [`MAX_DEPTH`] is left out with a warning.
pub(crate) fn scan(root: &Path) -> Result<BTreeMap<String, BaseEntry>, WorkspaceError> {
    scan_with(root, None)
}

/// [`scan`], reusing the hashes `cache` proves unchanged and recording the others in it.
fn scan_with(
    root: &Path,
    cache: Option<&Capture>,
) -> Result<BTreeMap<String, BaseEntry>, WorkspaceError> {
    let found = scan_walk(root, &|_| None, u64::MAX, cache);
    for note in found.notes.into_vec() {
        match note {
            ScanNote::TooDeep { path } => {
                tracing::warn!(root = %root.display(), folder = %path, "not walked: nested too deep");
            }
            other => {
                return Err(WorkspaceError::Walk {
                    root: root.to_path_buf(),
                    message: other.to_string(),
                });
            }
        }
    }
    Ok(found.entries)
}

/// Walks `root` in parallel and hashes every file and symlink, taking the entry of a path from
/// `known` instead of hashing it when `known` has one (a copy-on-write workspace knows every
/// file the model did not touch). Never fails and never recurses: a folder at [`MAX_DEPTH`]
/// is not entered, and what cannot be read is [`Scan::blind`] with a note, so the rest of the
/// walk (a model's real edits) still counts. Files are hashed streaming; one larger than
/// `hash_limit` is left unhashed (its entry's hash is empty).
pub(crate) fn scan_lenient(
    root: &Path,
    known: &(dyn Fn(&str) -> Option<BaseEntry> + Sync),
    hash_limit: u64,
) -> Scan {
    scan_walk(root, known, hash_limit, None)
}

/// [`scan_lenient`] with the capture's hash cache (see `stat_cache`).
fn scan_walk(
    root: &Path,
    known: &(dyn Fn(&str) -> Option<BaseEntry> + Sync),
    hash_limit: u64,
    cache: Option<&Capture>,
) -> Scan {
    let scan: Mutex<Scan> = Mutex::new(Scan::default());
    let record = |rel: String, note: ScanNote| {
        if let Ok(mut scan) = scan.lock() {
            scan.blind.insert(rel);
            scan.notes.push(note);
        }
    };
    walker(root).build_parallel().run(|| {
        Box::new(|result| {
            let entry = match result {
                Ok(entry) => entry,
                Err(err) => {
                    let rel = error_path(&err)
                        .map(|p| rel_of(root, &p).unwrap_or_default())
                        .unwrap_or_default();
                    record(
                        rel.clone(),
                        ScanNote::Unreadable {
                            path: rel,
                            error: error_text(&err),
                        },
                    );
                    return WalkState::Continue;
                }
            };
            let Some(file_type) = entry.file_type() else {
                return WalkState::Continue;
            };
            if file_type.is_dir() {
                if entry.depth() >= MAX_DEPTH {
                    let rel = rel_of(root, entry.path()).unwrap_or_default();
                    record(rel.clone(), ScanNote::TooDeep { path: rel });
                    return WalkState::Skip;
                }
                return WalkState::Continue;
            }
            if !(file_type.is_file() || file_type.is_symlink()) {
                return WalkState::Continue;
            }
            let Some(rel) = rel_of(root, entry.path()) else {
                return WalkState::Continue;
            };
            let hashed = match (known(&rel), cache) {
                (Some(entry), _) => Ok(entry),
                (None, Some(cache)) => hash_cached(
                    cache,
                    &rel,
                    entry.path(),
                    file_type.is_symlink(),
                    hash_limit,
                ),
                (None, None) => hash_entry(entry.path(), file_type.is_symlink(), hash_limit),
            };
            match hashed {
                Ok(base_entry) => {
                    if let Ok(mut scan) = scan.lock() {
                        scan.entries.insert(rel, base_entry);
                    }
                }
                // A file deleted while we walk is simply not part of the tree.
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => record(
                    rel.clone(),
                    ScanNote::Unreadable {
                        path: rel,
                        error: e.to_string(),
                    },
                ),
            }
            WalkState::Continue
        })
    });
    scan.into_inner().unwrap_or_default()
}

/// The path an error of the walker is about, when it says.
fn error_path(err: &ignore::Error) -> Option<PathBuf> {
    let mut err = err;
    loop {
        match err {
            ignore::Error::WithPath { path, .. } => return Some(path.clone()),
            ignore::Error::WithDepth { err: inner, .. }
            | ignore::Error::WithLineNumber { err: inner, .. } => err = inner,
            ignore::Error::Loop { child, .. } => return Some(child.clone()),
            ignore::Error::Partial(errs) => err = errs.first()?,
            _ => return None,
        }
    }
}

/// What the walker said, without the path (notes name it themselves).
fn error_text(err: &ignore::Error) -> String {
    let mut err = err;
    loop {
        match err {
            ignore::Error::WithPath { err: inner, .. }
            | ignore::Error::WithDepth { err: inner, .. }
            | ignore::Error::WithLineNumber { err: inner, .. } => err = inner,
            ignore::Error::Partial(errs) if errs.len() == 1 => err = &errs[0],
            other => return other.to_string(),
        }
    }
}

/// `/`-separated path of `path` relative to `root` (None for the root itself).
pub(crate) fn rel_of(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.is_empty() {
        None
    } else {
        Some(parts.join("/"))
    }
}

/// Hashes one file (streaming) or one symlink's target, with its permission bits.
/// A file larger than `limit` is left unhashed (an empty hash, which equals no real one): a
/// model's `truncate -s 1T` costs it nothing and would cost versus an hour.
/// The entry of the file or symlink at `path` as a capture would record it (never following
/// a link).
pub(crate) fn entry_of(path: &Path) -> io::Result<BaseEntry> {
    let meta = fs::symlink_metadata(path)?;
    hash_with(path, &meta, meta.file_type().is_symlink(), u64::MAX)
}

fn hash_entry(path: &Path, is_symlink: bool, limit: u64) -> io::Result<BaseEntry> {
    let meta = fs::symlink_metadata(path)?;
    hash_with(path, &meta, is_symlink, limit)
}

/// [`hash_entry`] through the capture's cache: the stamp is taken before the file is read,
/// and the remembered hash is used when the cache proves the file unchanged.
fn hash_cached(
    cache: &Capture,
    rel: &str,
    path: &Path,
    is_symlink: bool,
    limit: u64,
) -> io::Result<BaseEntry> {
    let meta = fs::symlink_metadata(path)?;
    let stamp = Stamp::of(&meta);
    if let Some(entry) = cache.reuse(rel, &stamp) {
        return Ok(entry);
    }
    let entry = hash_with(path, &meta, is_symlink, limit)?;
    cache.hashed(rel, stamp, &entry);
    Ok(entry)
}

/// Hashes `path` whose metadata (taken before reading) is `meta`.
fn hash_with(
    path: &Path,
    meta: &fs::Metadata,
    is_symlink: bool,
    limit: u64,
) -> io::Result<BaseEntry> {
    if !is_symlink && meta.len() > limit {
        return Ok(BaseEntry {
            hash: String::new(),
            mode: mode_bits(meta),
            kind: BaseKind::File,
        });
    }
    let mut hasher = blake3::Hasher::new();
    let kind = if is_symlink {
        let target = fs::read_link(path)?;
        hasher.update(target.as_os_str().as_encoded_bytes());
        BaseKind::Symlink
    } else {
        hasher.update_reader(fs::File::open(path)?)?;
        BaseKind::File
    };
    Ok(BaseEntry {
        hash: hasher.finalize().to_hex().to_string(),
        mode: mode_bits(meta),
        kind,
    })
}

/// blake3 of a byte slice, in the same form as [`BaseEntry::hash`].
pub(crate) fn hash_bytes(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

#[cfg(unix)]
fn mode_bits(meta: &fs::Metadata) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o7777
}

#[cfg(not(unix))]
fn mode_bits(_meta: &fs::Metadata) -> u32 {
    0
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn write(root: &Path, rel: &str, content: &str) {
        let p = root.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, content).unwrap();
    }

    #[test]
    fn versus_own_folder_is_never_part_of_the_base() {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), "src/lib.rs", "x");
        write(d.path(), ".versus/reports/r/report.json", "{}");
        write(d.path(), ".versus/sessions/s/events.jsonl", "{}");
        let base = Base::capture(d.path()).unwrap();
        let paths: Vec<&str> = base.entries().keys().map(String::as_str).collect();
        assert_eq!(paths, vec!["src/lib.rs"]);
    }

    #[test]
    fn capture_honours_ignore_files_outside_git() {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), ".gitignore", "target/\n*.log\n");
        write(d.path(), ".ignore", "secret.txt\n");
        write(d.path(), "src/main.rs", "fn main() {}");
        write(d.path(), "target/debug/out", "bin");
        write(d.path(), "x.log", "log");
        write(d.path(), "secret.txt", "s");
        write(d.path(), ".hidden", "h");
        let base = Base::capture(d.path()).unwrap();
        let keys: Vec<&str> = base.entries().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            vec![".gitignore", ".hidden", ".ignore", "src/main.rs"]
        );
        assert_eq!(
            base.get("src/main.rs").unwrap().hash,
            hash_bytes(b"fn main() {}")
        );
    }

    #[test]
    fn capture_reads_ignore_files_from_the_repository_root_down_and_none_above() {
        let d = tempfile::tempdir().unwrap();
        // Above the repository: not the project's rules (git never reads them).
        write(d.path(), ".gitignore", "*.rs\n");
        let repo = d.path().join("repo");
        write(&repo, ".gitignore", "*.log\n");
        write(&repo, ".git/info/exclude", "*.tmp\n");
        write(&repo, "pkg/lib.rs", "x");
        write(&repo, "pkg/debug.log", "x");
        write(&repo, "pkg/scratch.tmp", "x");
        // A project in a subfolder of its repository gets the repository's rules.
        let base = Base::capture(&repo.join("pkg")).unwrap();
        let keys: Vec<&str> = base.entries().keys().map(String::as_str).collect();
        assert_eq!(keys, vec!["lib.rs"]);
        // A project the repository around it ignores (a dotfiles repository at home ignoring
        // `*`): the user named it, it is captured under its own rules.
        let home = d.path().join("home");
        write(&home, ".git/HEAD", "ref: refs/heads/main\n");
        write(&home, ".gitignore", "*\n");
        write(&home, "scratch/proj/main.rs", "x");
        write(&home, "scratch/proj/.gitignore", "*.log\n");
        write(&home, "scratch/proj/x.log", "x");
        let base = Base::capture(&home.join("scratch/proj")).unwrap();
        let keys: Vec<&str> = base.entries().keys().map(String::as_str).collect();
        assert_eq!(keys, vec![".gitignore", "main.rs"]);
        // Outside any repository a project's rules start at its own folder.
        let plain = d.path().join("plain");
        write(&plain, "a.rs", "x");
        write(&plain, "b.log", "x");
        let base = Base::capture(&plain).unwrap();
        let keys: Vec<&str> = base.entries().keys().map(String::as_str).collect();
        assert_eq!(keys, vec!["a.rs", "b.log"]);
    }

    #[cfg(unix)]
    #[test]
    fn capture_records_modes_and_symlinks() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        write(d.path(), "run.sh", "#!/bin/sh\n");
        fs::set_permissions(d.path().join("run.sh"), fs::Permissions::from_mode(0o755)).unwrap();
        std::os::unix::fs::symlink("run.sh", d.path().join("link")).unwrap();
        let base = Base::capture(d.path()).unwrap();
        assert_eq!(base.get("run.sh").unwrap().mode, 0o755);
        let link = base.get("link").unwrap();
        assert_eq!(link.kind, BaseKind::Symlink);
        assert_eq!(link.hash, hash_bytes(b"run.sh"));
    }

    #[test]
    fn diff_dir_reports_added_modified_deleted() {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), "a.txt", "a");
        write(d.path(), "b.txt", "b");
        write(d.path(), "c.txt", "c");
        let base = Base::capture(d.path()).unwrap();
        write(d.path(), "a.txt", "A");
        fs::remove_file(d.path().join("b.txt")).unwrap();
        write(d.path(), "new/d.txt", "d");
        let changes = base.diff_dir(d.path()).unwrap();
        assert_eq!(
            changes,
            vec![
                DirChange::Modified("a.txt".into()),
                DirChange::Deleted("b.txt".into()),
                DirChange::Added("new/d.txt".into()),
            ]
        );
    }

    #[test]
    fn base_roundtrips_through_json() {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), "a.txt", "a");
        let base = Base::capture(d.path()).unwrap();
        let json = serde_json::to_string(&base).unwrap();
        let back: Base = serde_json::from_str(&json).unwrap();
        assert_eq!(back, base);
    }
}
