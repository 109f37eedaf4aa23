//! Walking the model's view of the project: the disk tree filtered like ripgrep filters it,
//! with the view's in-memory changes merged on top.
//!
//! list_directory, search_files and search_code must agree on what "the project" is, so the
//! rules live here once: `.gitignore` (also outside git repositories), `.ignore`,
//! `.git/info/exclude` and the global gitignore are honoured (`workspace::IgnoreRules`: compiled
//! once per file, not once per walk); hidden files are shown (a model
//! needs `.github/` and `.env.example`) but `.git` never is; symlinks are reported, not followed
//! (a link may point outside the project).
//!
//! A walk always starts at the workspace root, even for a subfolder, and prunes everything but
//! the chain of folders leading to it. That way ignore files of the root and of every folder on
//! the way apply exactly as git applies them, and ignore files above the root (outside the
//! project) never do. A folder the model names explicitly is walked even when it is ignored
//! itself, like `rg PATTERN node_modules`.

mod glob;
mod overlay;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use ignore::{DirEntry, WalkBuilder, WalkState};

pub(crate) use glob::{FileGlob, compile_glob};
pub(crate) use overlay::Overlay;

use super::ToolError;
use super::suggest::did_you_mean;
use crate::workspace::{EntryKind, FileView, IgnoreRules, ProjectPath};

/// What a path argument names in the model's view (disk merged with pending changes).
#[derive(Debug, Clone)]
pub(crate) enum Located {
    /// A folder; `on_disk` is false when it exists only because the model wrote files below it.
    Dir {
        /// Whether there is a folder on disk to walk.
        on_disk: bool,
    },
    /// A regular file; `Some` holds its content when the model's version lives in memory.
    File(Option<Arc<Vec<u8>>>),
    /// A socket, fifo or device.
    Other,
    /// Nothing there (or deleted by the model).
    Missing,
}

/// Finds out what `path` is, looking at the model's pending changes before the disk.
pub(crate) fn locate(
    view: &dyn FileView,
    overlay: &Overlay,
    path: &ProjectPath,
) -> Result<Located, ToolError> {
    let rel = path.rel();
    if rel.is_empty() {
        return Ok(Located::Dir { on_disk: true });
    }
    if let Some(content) = overlay.written(rel) {
        return Ok(Located::File(Some(content.clone())));
    }
    let in_memory_dir = overlay.has_dir(rel);
    if overlay.hides(rel) {
        return Ok(if in_memory_dir {
            Located::Dir { on_disk: false }
        } else {
            Located::Missing
        });
    }
    match view.metadata(path) {
        Ok(meta) => Ok(match meta.kind {
            EntryKind::Dir => Located::Dir { on_disk: true },
            EntryKind::File => Located::File(None),
            EntryKind::Other => Located::Other,
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(if in_memory_dir {
            Located::Dir { on_disk: false }
        } else {
            Located::Missing
        }),
        Err(e) => Err(ToolError::io("reading", path.display(), e)),
    }
}

/// The error for a path that does not exist, with similar paths when there are some.
pub(crate) fn not_found(view: &dyn FileView, path: &ProjectPath, what: &str) -> ToolError {
    ToolError::failed(format!(
        "{what} not found: {path}{}; use list_directory to see what exists",
        did_you_mean(view.root(), path.rel())
    ))
}

/// Threads a walk uses: the machine's cores, asked once per process. The standard library
/// reads the cgroup's CPU quota from /sys on every call, which cost more than walking a small
/// project (about a tenth of a search_code call in the harness benchmark).
fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
}

/// A walk of one folder of the project, configured with the project's ignore rules.
pub(crate) struct Walk {
    root: PathBuf,
    start: PathBuf,
    /// Depth of `start` below the root in the underlying walker (0 when walked directly).
    base_depth: usize,
    /// Folder names from the root down to `start`, when walking from the root.
    chain: Option<Arc<Vec<OsString>>>,
    threads: usize,
    /// Files the caller wants, asked before the ignore rules (see [`Walk::only_files`]).
    files: Option<FileFilter>,
}

/// Whether a caller wants the file at this path at all (by name or glob).
pub(crate) type FileFilter = Arc<dyn Fn(&Path) -> bool + Send + Sync>;

impl Walk {
    /// Prepares a walk of the folder `dir` (which must exist on disk) inside `root`.
    pub(crate) fn new(root: &Path, dir: &ProjectPath) -> Result<Self, ToolError> {
        let threads = cores();
        // Real paths are compared against the root: views give it canonical (FileView::root),
        // which saves resolving it again for every walk.
        let root = &root.to_path_buf();
        if dir.rel().is_empty() {
            return Ok(Self {
                root: root.clone(),
                start: root.clone(),
                base_depth: 0,
                chain: None,
                threads,
                files: None,
            });
        }
        // A symlinked folder inside the project is walked at its real location.
        let start = dir
            .abs()
            .canonicalize()
            .map_err(|e| ToolError::io("reading", dir.display(), e))?;
        let Ok(real_rel) = start.strip_prefix(root) else {
            return Err(ToolError::failed(format!(
                "path escapes the project: {dir} (it resolves outside the project root); use a \
                 path inside the project root"
            )));
        };
        let chain: Vec<OsString> = real_rel
            .components()
            .map(|c| c.as_os_str().to_os_string())
            .collect();
        let mut walk = Self {
            root: root.clone(),
            start,
            base_depth: chain.len(),
            chain: Some(Arc::new(chain)),
            threads,
            files: None,
        };
        if !walk.start_is_reachable() {
            // The folder itself is ignored: walk it directly, like an explicit rg argument.
            walk.chain = None;
            walk.base_depth = 0;
        }
        Ok(walk)
    }

    /// Leaves out, before the ignore rules are asked about them, the files `wanted` says no
    /// to. A glob that keeps a tenth of the files (`*.toml`) would otherwise pay the rules'
    /// folder lookup and pattern matching for every file it drops, which is how ripgrep's
    /// `-g` stays ahead: its globs are asked first too. Folders are always walked.
    pub(crate) fn only_files(mut self, wanted: FileFilter) -> Self {
        self.files = Some(wanted);
        self
    }

    /// Whether a walk from the root reaches `start` as a folder (it is not ignored).
    fn start_is_reachable(&self) -> bool {
        let depth = self.base_depth;
        self.builder(Some(0))
            .build()
            .filter_map(Result::ok)
            .any(|e| e.depth() == depth && e.file_type().is_some_and(|t| t.is_dir()))
    }

    /// A walker over the folder, descending at most `max_depth` levels below it (`None`: all).
    pub(crate) fn builder(&self, max_depth: Option<usize>) -> WalkBuilder {
        self.configured(max_depth, None)
    }

    /// A walker over the whole folder that also counts every entry it looks at, including the
    /// files [`Walk::only_files`] leaves out and the entries the ignore rules drop, which the
    /// walker never yields. A walk that must stop after a bounded amount of work (search_code's
    /// ordered first pass) counts with this: counting only what is yielded, a glob that keeps
    /// one file in twenty let the first pass walk half of a cargo registry on one thread.
    pub(crate) fn counting_builder(&self) -> (WalkBuilder, Arc<AtomicUsize>) {
        let looked = Arc::new(AtomicUsize::new(0));
        (self.configured(None, Some(looked.clone())), looked)
    }

    fn configured(
        &self,
        max_depth: Option<usize>,
        looked: Option<Arc<AtomicUsize>>,
    ) -> WalkBuilder {
        let origin = if self.chain.is_some() {
            &self.root
        } else {
            &self.start
        };
        let mut builder = WalkBuilder::new(origin);
        // The walker only walks; the ignore rules are ours (`IgnoreRules`), compiled once per
        // file instead of once per walk.
        builder
            .standard_filters(false)
            .follow_links(false)
            .threads(self.threads)
            .max_depth(max_depth.map(|d| d + self.base_depth));
        let chain = self.chain.clone();
        let rules = IgnoreRules::new(origin);
        let files = self.files.clone();
        builder.filter_entry(move |entry| {
            if let Some(looked) = &looked {
                looked.fetch_add(1, Ordering::Relaxed);
            }
            if entry.file_name() == ".git" {
                return false;
            }
            let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
            if let Some(wanted) = &files
                && !is_dir
                && !wanted(entry.path())
            {
                return false;
            }
            let on_the_way = match &chain {
                Some(chain) if entry.depth() >= 1 && entry.depth() <= chain.len() => {
                    entry.file_name() == chain[entry.depth() - 1].as_os_str()
                }
                _ => true,
            };
            on_the_way && !rules.ignored(entry.path(), is_dir)
        });
        builder
    }

    /// The workspace root (canonical), for paths relative to it.
    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// The folder actually walked (symlinks resolved), for paths relative to it.
    pub(crate) fn start(&self) -> &Path {
        &self.start
    }

    /// True for entries strictly inside the walked folder (not the folder or its ancestors).
    pub(crate) fn inside(&self, entry: &DirEntry) -> bool {
        entry.depth() > self.base_depth
    }

    /// The `/`-separated path of `path` relative to the workspace root.
    pub(crate) fn rel_to_root(&self, path: &Path) -> Option<String> {
        path.strip_prefix(&self.root).ok().map(slash_path)
    }

    /// The `/`-separated path of `path` relative to the walked folder.
    pub(crate) fn rel_to_start(&self, path: &Path) -> Option<String> {
        path.strip_prefix(&self.start).ok().map(slash_path)
    }

    /// Runs the walk on all cores. `init` makes one state per thread; `visit` sees every entry
    /// inside the folder and pushes results into that thread's list. The lists are joined (in
    /// no particular order) once every thread has finished.
    pub(crate) fn collect<T, S, I, V>(&self, builder: &WalkBuilder, init: I, visit: V) -> Vec<T>
    where
        T: Send,
        S: Send,
        I: Fn() -> S + Sync,
        V: Fn(&mut S, DirEntry, &mut Vec<T>) -> WalkState + Sync,
    {
        let shared: Mutex<Vec<T>> = Mutex::new(Vec::new());
        builder.build_parallel().run(|| {
            let mut local = Local {
                out: Vec::new(),
                shared: &shared,
            };
            let mut state = init();
            let visit = &visit;
            Box::new(move |result| match result {
                Ok(entry) if self.inside(&entry) => visit(&mut state, entry, &mut local.out),
                // Unreadable entries are skipped, as rg does without --debug.
                _ => WalkState::Continue,
            })
        });
        shared
            .into_inner()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// One thread's results, handed to the shared list when the thread's visitor is dropped.
struct Local<'a, T> {
    out: Vec<T>,
    shared: &'a Mutex<Vec<T>>,
}

impl<T> Drop for Local<'_, T> {
    fn drop(&mut self) {
        if self.out.is_empty() {
            return;
        }
        let mut shared = self
            .shared
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        shared.append(&mut self.out);
    }
}

/// The files of the project at the canonical `root` as the tools see them (its ignore rules,
/// no `.git`), relative and `/`-separated, in path order: the first `limit` that `keep`
/// accepts. For lists offered to the user (the TUI's `@path` completion), so they name the
/// same files a model can list and search.
pub fn project_files(root: &Path, limit: usize, keep: impl Fn(&str) -> bool) -> Vec<String> {
    let Ok(top) = ProjectPath::resolve(root, ".") else {
        return Vec::new();
    };
    let Ok(walk) = Walk::new(root, &top) else {
        return Vec::new();
    };
    let mut builder = walk.builder(None);
    builder.sort_by_file_name(|a, b| a.cmp(b));
    builder
        .build()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .filter_map(|e| walk.rel_to_root(e.path()))
        .filter(|rel| keep(rel))
        .take(limit)
        .collect()
}

/// A relative path as models see it: `/`-separated, lossy for names that are not UTF-8.
fn slash_path(rel: &Path) -> String {
    let mut out = String::new();
    for comp in rel.components() {
        if !out.is_empty() {
            out.push('/');
        }
        out.push_str(&comp.as_os_str().to_string_lossy());
    }
    out
}

/// A view with in-memory changes for unit tests of the tools that merge them.
#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) mod testing {
    use std::io;
    use std::path::Path;
    use std::sync::Arc;

    use crate::tools::ToolContext;
    use crate::workspace::{
        DirectView, EntryMeta, FileView, PendingChange, ProjectPath, WriteOrigin,
    };

    /// A [`DirectView`] whose `pending()` reports changes that are not on disk, like an
    /// overlay workspace does.
    pub(crate) struct FakeOverlayView {
        inner: DirectView,
        changes: Vec<PendingChange>,
    }

    impl FileView for FakeOverlayView {
        fn root(&self) -> &Path {
            self.inner.root()
        }
        fn metadata(&self, path: &ProjectPath) -> io::Result<EntryMeta> {
            self.inner.metadata(path)
        }
        fn open(&self, path: &ProjectPath) -> io::Result<Box<dyn io::Read + Send>> {
            self.inner.open(path)
        }
        fn write(
            &self,
            path: &ProjectPath,
            content: &[u8],
            origin: &WriteOrigin,
        ) -> io::Result<()> {
            self.inner.write(path, content, origin)
        }
        fn delete(&self, path: &ProjectPath, origin: &WriteOrigin) -> io::Result<()> {
            self.inner.delete(path, origin)
        }
        fn written_by_model(&self, path: &ProjectPath) -> bool {
            self.inner.written_by_model(path)
        }
        fn pending(&self) -> Vec<PendingChange> {
            self.changes.clone()
        }
    }

    /// A pending write of `text` to `rel`.
    pub(crate) fn write(rel: &str, text: &str) -> PendingChange {
        PendingChange::Write {
            rel: rel.to_string(),
            content: Arc::new(text.as_bytes().to_vec()),
        }
    }

    /// A pending delete of `rel`.
    pub(crate) fn delete(rel: &str) -> PendingChange {
        PendingChange::Delete {
            rel: rel.to_string(),
        }
    }

    /// A temp project with `files` on disk and `changes` pending in memory, and a tool
    /// context on it. Keep the TempDir alive for the test's duration.
    pub(crate) fn overlay_ctx(
        files: &[(&str, &str)],
        changes: Vec<PendingChange>,
    ) -> (tempfile::TempDir, ToolContext) {
        let dir = tempfile::tempdir().unwrap();
        for (rel, text) in files {
            let p = dir.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        let view = FakeOverlayView {
            inner: DirectView::new(dir.path()).unwrap(),
            changes,
        };
        (dir, ToolContext::new(Arc::new(view)))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::workspace::DirectView;

    fn tree() -> (tempfile::TempDir, PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let r = d.path().canonicalize().unwrap();
        for (rel, text) in [
            (".gitignore", "ignored/\n*.log\n"),
            ("src/main.rs", "fn main() {}\n"),
            ("src/debug.log", "x\n"),
            ("src/deep/x.rs", "\n"),
            ("ignored/inner/a.rs", "\n"),
            (".git/config", "[core]\n"),
        ] {
            let p = r.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        (d, r)
    }

    fn files(r: &Path, rel: &str) -> Vec<String> {
        let path = ProjectPath::resolve(r, rel).unwrap();
        let walk = Walk::new(r, &path).unwrap();
        let builder = walk.builder(None);
        let mut out = walk.collect(
            &builder,
            || (),
            |_, e, out| {
                if e.file_type().is_some_and(|t| t.is_file()) {
                    out.push(walk.rel_to_root(e.path()).unwrap());
                }
                WalkState::Continue
            },
        );
        out.sort();
        out
    }

    #[test]
    fn a_counting_walk_counts_the_files_it_leaves_out() {
        let (_d, r) = tree();
        let top = ProjectPath::resolve(&r, ".").unwrap();
        // Every file left out by the filter or the ignore rules is still looked at.
        let walk = Walk::new(&r, &top)
            .unwrap()
            .only_files(Arc::new(|_: &Path| false));
        let (builder, looked) = walk.counting_builder();
        let yielded: Vec<_> = builder
            .build()
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
            .collect();
        assert!(yielded.is_empty());
        // .gitignore, src, src/main.rs, src/debug.log, src/deep, src/deep/x.rs, ignored, .git
        assert_eq!(looked.load(Ordering::Relaxed), 8);
    }

    #[test]
    fn root_walk_applies_ignore_rules_and_skips_git() {
        let (_d, r) = tree();
        assert_eq!(
            files(&r, "."),
            [".gitignore", "src/deep/x.rs", "src/main.rs"]
        );
    }

    #[test]
    fn subfolder_walk_keeps_the_root_rules() {
        let (_d, r) = tree();
        assert_eq!(files(&r, "src"), ["src/deep/x.rs", "src/main.rs"]);
    }

    #[test]
    fn an_ignored_folder_named_explicitly_is_walked() {
        let (_d, r) = tree();
        assert_eq!(files(&r, "ignored"), ["ignored/inner/a.rs"]);
    }

    #[test]
    fn locate_merges_pending_changes() {
        let (_d, r) = tree();
        let view = DirectView::new(&r).unwrap();
        let overlay = Overlay::from_changes(vec![
            crate::workspace::PendingChange::Write {
                rel: "new/file.rs".into(),
                content: Arc::new(b"x".to_vec()),
            },
            crate::workspace::PendingChange::Delete {
                rel: "src/main.rs".into(),
            },
        ]);
        let at = |rel: &str| locate(&view, &overlay, &view.resolve(rel).unwrap()).unwrap();
        assert!(matches!(at("new"), Located::Dir { on_disk: false }));
        assert!(matches!(at("new/file.rs"), Located::File(Some(_))));
        assert!(matches!(at("src/main.rs"), Located::Missing));
        assert!(matches!(at("src"), Located::Dir { on_disk: true }));
        assert!(matches!(at("src/deep/x.rs"), Located::File(None)));
        assert!(matches!(at("nope"), Located::Missing));
    }
}
