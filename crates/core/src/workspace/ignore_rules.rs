//! The project's ignore rules as a walk applies them, each ignore file compiled once and kept
//! between walks.
//!
//! A folder may hold a `.ignore` and a `.gitignore`; a folder holding a `.git` folder adds its
//! `info/exclude`; the user's global gitignore (git's `core.excludesFile`) applies everywhere.
//! For a path, within each kind the rule of the deepest folder that says something wins, and the
//! kinds rank `.ignore` over `.gitignore` over `info/exclude` over the global file: ripgrep's
//! order (without `--no-require-git` needing a repository), so `rg` and versus agree on what the
//! project is. Rules of folders above the one a walk starts at never apply.
//!
//! Why not the `ignore` crate's own stack: it rebuilds everything for every walk. It reads git's
//! configuration to find the global file, canonicalises the start and looks for ignore files in
//! every folder above it up to `/`, and compiles each ignore file again; in the harness benchmark
//! that was a quarter of a `search_code` call on a small project. Here a compiled file is kept
//! while its identity (device, inode, size, modification and change times) is unchanged, unless
//! it was modified less than a second before it was read: a rewrite within the filesystem's
//! timestamp granularity could leave every stamp equal (git's "racy" rule for its index).
//!
//! An ignore file is never read through a symlink (git does not follow them either since 2.32):
//! a cloned repository's `.gitignore -> ~/.ssh/id_ed25519` is not opened.

use std::collections::HashMap;
use std::ffi::OsString;
use std::fs::{Metadata, OpenOptions};
use std::io::Read;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, RwLock};
use std::time::{Duration, SystemTime};

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder, Glob};

/// Bytes of one ignore file that are read; the rest is left out (git has no limit, but a
/// many-gigabyte `.gitignore` in a hostile repository must not stall every search).
const MAX_FILE_BYTES: u64 = 1 << 20;

/// Compiled ignore files kept between walks; the cache starts over when it is full.
const CACHED_FILES: usize = 1024;

/// Folders known to hold no ignore file, kept between walks; forgotten when full.
const CACHED_FOLDERS: usize = 1 << 16;

/// A file modified less than this before it was read is read again next time.
const RACY: Duration = Duration::from_secs(1);

/// The rules one folder adds.
struct FolderRules {
    ignore: Option<Arc<Gitignore>>,
    gitignore: Option<Arc<Gitignore>>,
    exclude: Option<Arc<Gitignore>>,
}

/// The rules in force inside one folder: those of the folders that have some, from this folder
/// up to the walk's start (deepest first).
type Stack = Arc<Vec<Arc<FolderRules>>>;

/// Folders' rule stacks by the folder's path bytes. Asked once for every entry of a walk, so
/// the key is hashed as one run of bytes with a fast hasher (a `PathBuf` key hashes component
/// by component with SipHash: a tenth of a glob-filtered search's CPU). Every path asked about
/// comes from the same walk (`parent()` of an entry's path), so equal folders have equal bytes.
type Folders = HashMap<OsString, Stack, foldhash::fast::RandomState>;

/// One walk's rules: a folder's ignore files are looked at the first time the walk looks
/// inside it. Shared by the threads of a parallel walk.
pub(crate) struct IgnoreRules {
    origin: PathBuf,
    folders: RwLock<Folders>,
}

impl IgnoreRules {
    /// Rules for a walk starting at `origin` (the folder's own ignore files apply inside it).
    pub(crate) fn new(origin: &Path) -> Self {
        Self {
            origin: origin.to_path_buf(),
            folders: RwLock::new(Folders::default()),
        }
    }

    /// Whether the walk leaves `path` out (a path strictly inside the origin).
    pub(crate) fn ignored(&self, path: &Path, is_dir: bool) -> bool {
        let Some(parent) = path.parent() else {
            return false;
        };
        let stack = self.stack(parent);
        let (mut ignore, mut gitignore, mut exclude) = (Match::None, Match::None, Match::None);
        for rules in stack.iter() {
            first_answer(&mut ignore, rules.ignore.as_deref(), path, is_dir);
            first_answer(&mut gitignore, rules.gitignore.as_deref(), path, is_dir);
            first_answer(&mut exclude, rules.exclude.as_deref(), path, is_dir);
        }
        ignore
            .or(gitignore)
            .or(exclude)
            .or(global().matched(path, is_dir))
            .is_ignore()
    }

    /// The rules in force inside `dir`, read once per walk. Built from the nearest folder
    /// already known down to `dir` in a loop, never by recursion: a model's folders can be
    /// nested deeper than any stack.
    fn stack(&self, dir: &Path) -> Stack {
        let known = |folder: &Path| {
            self.folders
                .read()
                .unwrap_or_else(PoisonError::into_inner)
                .get(folder.as_os_str())
                .cloned()
        };
        if let Some(stack) = known(dir) {
            return stack;
        }
        // The folders from `dir` up to the first known one (or the walk's origin), deepest first.
        let mut missing: Vec<&Path> = vec![dir];
        let mut above = Stack::default();
        let mut folder = dir;
        while folder != self.origin && folder.starts_with(&self.origin) {
            let Some(parent) = folder.parent() else {
                break;
            };
            if let Some(stack) = known(parent) {
                above = stack;
                break;
            }
            missing.push(parent);
            folder = parent;
        }
        for folder in missing.into_iter().rev() {
            let stack = match folder_rules(folder) {
                None => above,
                Some(own) => {
                    let mut rules = Vec::with_capacity(above.len() + 1);
                    rules.push(Arc::new(own));
                    rules.extend(above.iter().cloned());
                    Arc::new(rules)
                }
            };
            self.folders
                .write()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(folder.as_os_str().to_os_string(), Arc::clone(&stack));
            above = stack;
        }
        above
    }
}

/// Asks `matcher` about `path` unless a deeper folder's file of the same kind already answered.
fn first_answer<'a>(
    found: &mut Match<&'a Glob>,
    matcher: Option<&'a Gitignore>,
    path: &Path,
    is_dir: bool,
) {
    if let (true, Some(matcher)) = (found.is_none(), matcher) {
        *found = matcher.matched(path, is_dir);
    }
}

/// The ignore files of `dir`, or `None` when it has none.
///
/// Most folders have none, and learning it costs three failed lookups (`.git`, `.ignore`,
/// `.gitignore`): on a large tree, the one cost a search pays that ripgrep does not. So a
/// folder found without any is remembered by its own stamp, and asked again with one lookup
/// of the folder: creating, removing or renaming an entry changes a folder's modification and
/// change times, so an unchanged stamp proves the files are still absent (unless the folder
/// changed less than [`RACY`] before it was looked at, as for files).
fn folder_rules(dir: &Path) -> Option<FolderRules> {
    folder_rules_at(dir, SystemTime::now())
}

/// [`folder_rules`], looked at `looked_at` (a test looks from later, past the racy window).
fn folder_rules_at(dir: &Path, looked_at: SystemTime) -> Option<FolderRules> {
    let stamp = std::fs::symlink_metadata(dir)
        .ok()
        .map(|meta| Stamp::of(&meta));
    if let Some(stamp) = stamp
        && without_rules()
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(dir.as_os_str())
            .is_some_and(|known| *known == stamp)
    {
        return None;
    }
    let rules = read_folder_rules(dir);
    if let (None, Some(stamp)) = (&rules, stamp)
        && !stamp.racy_at(looked_at)
    {
        let mut known = without_rules()
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if known.len() >= CACHED_FOLDERS {
            known.clear();
        }
        known.insert(dir.as_os_str().to_os_string(), stamp);
    }
    rules
}

/// Folders found without ignore files, by path, with their stamp then.
fn without_rules() -> &'static Mutex<HashMap<OsString, Stamp>> {
    static FOLDERS: OnceLock<Mutex<HashMap<OsString, Stamp>>> = OnceLock::new();
    FOLDERS.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Looks for the ignore files of `dir`.
fn read_folder_rules(dir: &Path) -> Option<FolderRules> {
    let git = dir.join(".git");
    let exclude = std::fs::symlink_metadata(&git)
        .is_ok_and(|m| m.is_dir())
        .then(|| compiled(dir, &git.join("info").join("exclude")))
        .flatten();
    let rules = FolderRules {
        ignore: compiled(dir, &dir.join(".ignore")),
        gitignore: compiled(dir, &dir.join(".gitignore")),
        exclude,
    };
    (rules.ignore.is_some() || rules.gitignore.is_some() || rules.exclude.is_some())
        .then_some(rules)
}

/// What identifies one version of a file without reading it.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    /// Changed less than [`RACY`] before `now`: a change within the timestamp granularity
    /// could follow without changing the stamp.
    fn racy_at(&self, now: SystemTime) -> bool {
        let changed = |(secs, nanos): (i64, i64)| {
            let (Ok(secs), Ok(nanos)) = (u64::try_from(secs), u32::try_from(nanos)) else {
                return true;
            };
            SystemTime::UNIX_EPOCH + Duration::new(secs, nanos) + RACY > now
        };
        changed(self.mtime) || changed(self.ctime)
    }

    fn of(meta: &Metadata) -> Self {
        Self {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
        }
    }
}

/// A compiled ignore file and the version it was compiled from.
struct Cached {
    stamp: Stamp,
    /// Modified too shortly before it was read for the stamp to prove it unchanged.
    racy: bool,
    rules: Arc<Gitignore>,
}

fn cache() -> &'static Mutex<HashMap<PathBuf, Cached>> {
    static CACHE: OnceLock<Mutex<HashMap<PathBuf, Cached>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The rules of the ignore file `file` (patterns relative to `dir`), from the cache when the
/// file is unchanged; `None` when there is no such regular file (a symlink does not count).
fn compiled(dir: &Path, file: &Path) -> Option<Arc<Gitignore>> {
    let meta = std::fs::symlink_metadata(file).ok()?;
    if !meta.is_file() {
        return None;
    }
    let stamp = Stamp::of(&meta);
    if let Some(hit) = cache()
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(file)
        .filter(|hit| hit.stamp == stamp && !hit.racy)
    {
        return Some(Arc::clone(&hit.rules));
    }
    let read_at = SystemTime::now();
    let rules = Arc::new(compile(dir, file)?);
    let racy = meta
        .modified()
        .map_or(true, |modified| modified + RACY > read_at);
    let mut cache = cache().lock().unwrap_or_else(PoisonError::into_inner);
    if cache.len() >= CACHED_FILES {
        cache.clear();
    }
    cache.insert(
        file.to_path_buf(),
        Cached {
            stamp,
            racy,
            rules: Arc::clone(&rules),
        },
    );
    Some(rules)
}

/// Reads and compiles one ignore file the way git does: line by line, a byte-order mark
/// dropped, a pattern that does not compile skipped; reading stops at the first line that is
/// not UTF-8 (as the `ignore` crate does).
fn compile(dir: &Path, file: &Path) -> Option<Gitignore> {
    let mut content = Vec::new();
    OpenOptions::new()
        .read(true)
        // Swapped for a symlink or a fifo since it was looked at: not opened, not waited on.
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(file)
        .ok()?
        .take(MAX_FILE_BYTES)
        .read_to_end(&mut content)
        .ok()?;
    let mut builder = GitignoreBuilder::new(dir);
    for (i, line) in content.split(|&b| b == b'\n').enumerate() {
        let Ok(line) = std::str::from_utf8(line) else {
            break;
        };
        let line = line.strip_suffix('\r').unwrap_or(line);
        let line = if i == 0 {
            line.trim_start_matches('\u{feff}')
        } else {
            line
        };
        // A pattern that does not compile is left out; the others still apply.
        let _ = builder.add_line(Some(file.to_path_buf()), line);
    }
    builder.build().ok()
}

/// The user's global gitignore, found through git's configuration once per process; its
/// patterns are relative to the folder versus started in, as for `rg`.
fn global() -> &'static Gitignore {
    static GLOBAL: OnceLock<Gitignore> = OnceLock::new();
    GLOBAL.get_or_init(|| {
        let cwd = std::env::current_dir().unwrap_or_default();
        GitignoreBuilder::new(cwd).build_global().0
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::path::{Path, PathBuf};

    use ignore::WalkBuilder;

    use super::IgnoreRules;

    /// Every file and folder below `origin` that a walk keeps, relative to it, sorted.
    fn kept(builder: &WalkBuilder, origin: &Path) -> Vec<String> {
        let mut out: Vec<String> = builder
            .build()
            .filter_map(Result::ok)
            .filter(|e| e.depth() > 0)
            .map(|e| {
                e.path()
                    .strip_prefix(origin)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        out.sort();
        out
    }

    /// A walk of `origin` under these rules, as the tools and the capture build theirs.
    fn ours(origin: &Path) -> Vec<String> {
        let rules = IgnoreRules::new(origin);
        let mut builder = WalkBuilder::new(origin);
        builder
            .standard_filters(false)
            .follow_links(false)
            .filter_entry(move |e| {
                e.file_name() != ".git"
                    && !rules.ignored(e.path(), e.file_type().is_some_and(|t| t.is_dir()))
            });
        kept(&builder, origin)
    }

    /// The `ignore` crate's own stack configured as the walks were before this module: the
    /// reference the rules must agree with.
    fn reference(origin: &Path) -> Vec<String> {
        let mut builder = WalkBuilder::new(origin);
        builder
            .hidden(false)
            .parents(false)
            .ignore(true)
            .git_ignore(true)
            .git_global(true)
            .git_exclude(true)
            .require_git(false)
            .follow_links(false)
            .filter_entry(|e| e.file_name() != ".git");
        kept(&builder, origin)
    }

    /// xorshift64*: a reproducible stream without a dependency.
    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) as usize % n
        }
        fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
            from[self.below(from.len())]
        }
    }

    const NAMES: &[&str] = &[
        "a", "b", "c", "build", "deep", ".hidden", "x.rs", "y.log", "keep.log", "z.txt",
    ];
    const PATTERNS: &[&str] = &[
        "*.log",
        "!keep.log",
        "build/",
        "/a",
        "a/",
        "b/**/c",
        "x*",
        "!x.rs",
        "**/deep",
        "c",
        ".hidden",
        "a/b",
        "*.rs",
        "!/b/",
        "!*.txt",
        "z.txt",
        "deep/",
        "# a comment",
        "",
        "\\!not-negated",
        "b/*.log",
        "!c/",
        "**/*.txt",
        "[xy].*",
    ];

    /// A random tree of folders and files with ignore files sprinkled in, and a `.git` folder
    /// with an `info/exclude` at the top half of the time.
    fn random_tree(root: &Path, rng: &mut Rng) -> Vec<PathBuf> {
        let mut folders = vec![root.to_path_buf()];
        let mut i = 0;
        while i < folders.len() && folders.len() < 12 {
            let depth = folders[i].strip_prefix(root).unwrap().components().count();
            if depth < 3 {
                for _ in 0..rng.below(4) {
                    let name = rng.pick(&NAMES[..6]);
                    let dir = folders[i].join(name);
                    if std::fs::create_dir_all(&dir).is_ok() && !folders.contains(&dir) {
                        folders.push(dir);
                    }
                }
            }
            i += 1;
        }
        for dir in &folders {
            for _ in 0..1 + rng.below(4) {
                let name = rng.pick(&NAMES[6..]);
                std::fs::write(dir.join(name), "text\n").unwrap();
            }
            for file in [".gitignore", ".ignore"] {
                if rng.below(3) == 0 {
                    let lines: Vec<&str> =
                        (0..1 + rng.below(4)).map(|_| rng.pick(PATTERNS)).collect();
                    std::fs::write(dir.join(file), lines.join("\n")).unwrap();
                }
            }
        }
        if rng.below(2) == 0 {
            let info = root.join(".git").join("info");
            std::fs::create_dir_all(&info).unwrap();
            std::fs::write(info.join("exclude"), rng.pick(PATTERNS)).unwrap();
        }
        folders
    }

    #[test]
    fn the_rules_agree_with_the_ignore_crate_on_random_trees() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        for round in 0..150 {
            let dir = tempfile::tempdir().unwrap();
            let root = dir.path().canonicalize().unwrap();
            let folders = random_tree(&root, &mut rng);
            // Every folder as the start: the top, and each folder named explicitly.
            for origin in &folders {
                assert_eq!(
                    ours(origin),
                    reference(origin),
                    "round {round}, walk of {}",
                    origin.display()
                );
            }
            // Twice: the second walk answers from the cache.
            assert_eq!(ours(&root), reference(&root), "round {round}, cached");
        }
    }

    /// A project holding `a.txt` and `b.txt`.
    fn a_and_b() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for name in ["a.txt", "b.txt"] {
            std::fs::write(root.join(name), "x\n").unwrap();
        }
        (dir, root)
    }

    /// Sets the modification time of `file`.
    fn set_modified(file: &Path, at: std::time::SystemTime) {
        std::fs::File::options()
            .write(true)
            .open(file)
            .unwrap()
            .set_modified(at)
            .unwrap();
    }

    #[test]
    fn a_rewritten_ignore_file_is_read_again() {
        let (_dir, root) = a_and_b();
        let rules = root.join(".gitignore");
        std::fs::write(&rules, "a.txt\n").unwrap();
        assert_eq!(ours(&root), [".gitignore", "b.txt"]);
        // Same size, right away (within the racy second).
        std::fs::write(&rules, "b.txt\n").unwrap();
        assert_eq!(ours(&root), [".gitignore", "a.txt"]);

        // An old file is kept compiled; rewriting it with the same size and putting its
        // modification time back still shows in its change time.
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        set_modified(&rules, old);
        assert_eq!(ours(&root), [".gitignore", "a.txt"]);
        assert_eq!(ours(&root), [".gitignore", "a.txt"], "from the cache");
        std::fs::write(&rules, "a.txt\n").unwrap();
        set_modified(&rules, old);
        assert_eq!(ours(&root), [".gitignore", "b.txt"]);
    }

    #[test]
    fn an_ignore_file_is_not_read_through_a_symlink_or_from_a_fifo() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let secret = outside.path().join("secret");
        std::fs::write(&secret, "a.txt\n").unwrap();
        std::fs::write(root.join("a.txt"), "x\n").unwrap();
        std::os::unix::fs::symlink(&secret, root.join(".gitignore")).unwrap();
        assert_eq!(ours(&root), [".gitignore", "a.txt"]);

        std::fs::create_dir(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/b.txt"), "x\n").unwrap();
        nix::unistd::mkfifo(&root.join("sub/.ignore"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        // Would block forever if the fifo were opened for reading.
        assert_eq!(
            ours(&root),
            [".gitignore", "a.txt", "sub", "sub/.ignore", "sub/b.txt"]
        );
    }

    #[test]
    fn only_the_first_mebibyte_of_an_ignore_file_counts() {
        let (_dir, root) = a_and_b();
        let mut rules = String::from("a.txt\n");
        while rules.len() < (1 << 20) + 10 {
            rules.push_str("# padding padding padding padding\n");
        }
        rules.push_str("b.txt\n");
        std::fs::write(root.join(".gitignore"), rules).unwrap();
        assert_eq!(ours(&root), [".gitignore", "b.txt"]);
    }

    #[test]
    fn a_folder_known_to_have_no_ignore_file_is_looked_at_again_once_it_changed() {
        use super::{folder_rules, folder_rules_at, without_rules};
        let (_dir, root) = a_and_b();
        // Looked at two seconds later: past the racy window of what was just made.
        let later = || std::time::SystemTime::now() + std::time::Duration::from_secs(2);
        let known = |dir: &Path| {
            without_rules()
                .lock()
                .unwrap()
                .contains_key(dir.as_os_str())
        };
        assert!(folder_rules_at(&root, later()).is_none());
        assert!(known(&root), "a folder without ignore files is remembered");
        assert!(folder_rules_at(&root, later()).is_none());
        // A new ignore file changes the folder's times: it is looked at again.
        std::fs::write(root.join(".gitignore"), "a.txt\n").unwrap();
        assert!(folder_rules_at(&root, later()).is_some_and(|r| r.gitignore.is_some()));
        // So does a `.git` folder, whose `info/exclude` counts.
        std::fs::remove_file(root.join(".gitignore")).unwrap();
        assert!(folder_rules_at(&root, later()).is_none());
        std::fs::create_dir_all(root.join(".git/info")).unwrap();
        std::fs::write(root.join(".git/info/exclude"), "a.txt\n").unwrap();
        assert!(folder_rules_at(&root, later()).is_some_and(|r| r.exclude.is_some()));
        // A folder that changed just now is not remembered (a change within the timestamp
        // granularity could follow unseen).
        std::fs::create_dir(root.join("fresh")).unwrap();
        assert!(folder_rules(&root.join("fresh")).is_none());
        assert!(!known(&root.join("fresh")));
    }
}
