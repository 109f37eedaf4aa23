//! search_code: regex search in file contents with ripgrep's own libraries.
//!
//! `ignore` walks the tree on every core (the shared walk of `tools::walk`; a short first pass
//! in path order on one thread comes before it, see `search_disk`), `grep-regex`
//! compiles the pattern once (cloned per thread, which shares the compiled program), and
//! each thread reuses one `grep-searcher` [`Searcher`] and one read buffer for all its files, so
//! the work per file is an open, a read (two for files over 64 KiB) and the regex scan. Files
//! with a NUL byte are skipped (the searcher's binary detection quits on it), as are known
//! binary extensions without being read. Results are collected per file, sorted by path and cut at the match cap in that order,
//! so output does not depend on thread timing; once the cap is reached, files and folders that
//! sort after the cut are not searched (see [`collect::Budget`]). The model's in-memory
//! changes are merged: files it deleted are not searched, files it wrote are searched from
//! memory.

mod cache;
mod collect;
mod render;

/// Memory one line may take while it is searched; a file with a longer line is skipped.
const LINE_HEAP_LIMIT: usize = 16 * 1024 * 1024;

/// Bytes of a file read before it is searched: a file this small (most source files) is read
/// whole with one read and searched in place; a larger one is searched from this start and then
/// the rest of the file, in the searcher's buffer.
const HEAD_BYTES: usize = 64 * 1024;

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use grep_regex::{ErrorKind, RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder};
use ignore::WalkState;
use serde::Deserialize;
use serde_json::json;

use super::registry::{Handler, Tool, run_blocking, typed};
use super::text;
use super::walk::{FileGlob, Located, Overlay, Walk, compile_glob, locate, not_found};
use super::{ToolClass, ToolContext, ToolError, ToolOutput, ToolSpec};
use crate::workspace::ProjectPath;
use collect::{Budget, Collector, FileHits, keep_first};

/// Context lines beyond this are clamped: more would flood the model's context window.
const MAX_CONTEXT_LINES: i64 = 10;

/// The search_code tool, for the registry.
pub(crate) fn tool() -> Arc<dyn Tool> {
    typed(
        ToolSpec {
            name: "search_code",
            description: "Search file contents with a regular expression (Rust regex syntax, \
                like ripgrep). Output is grep format: `path:line:text` for matches, \
                `path-line-text` for context lines, `--` between groups. Searches the project \
                (or `path`, a folder or one file) in parallel, skipping binary files and files \
                ignored by .gitignore/.ignore. `file_glob` limits the files searched (\"*.rs\", \
                \"src/**/*.ts\"). Set literal=true to search for text as written, ignore_case \
                for case-insensitive matching. At most 100 matches; long lines are cut at 500 \
                characters."
                .to_string(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "pattern": {"type": "string", "description": "Regular expression (or plain text with literal=true). Matches within one line."},
                    "path": {"type": "string", "description": "Folder or file to search, relative to the project root. Default \".\"."},
                    "file_glob": {"type": "string", "description": "Only search files matching this glob, e.g. \"*.py\" or \"src/**/*.rs\"."},
                    "context_lines": {"type": "integer", "description": "Lines of context before and after each match (0-10). Default 0."},
                    "ignore_case": {"type": "boolean", "description": "Match case-insensitively. Default false."},
                    "literal": {"type": "boolean", "description": "Treat pattern as plain text, not a regex. Default false."}
                },
                "required": ["pattern"],
                "additionalProperties": false
            }),
            guidance: "search_code: find definitions and usages by regex across the project \
                (narrow with path or file_glob; literal=true for exact text)."
                .to_string(),
            class: ToolClass::ReadOnly,
        },
        SearchCode,
    )
}

/// Arguments as the model sends them.
#[derive(Debug, Deserialize)]
pub(crate) struct Args {
    pattern: String,
    path: Option<String>,
    file_glob: Option<String>,
    context_lines: Option<i64>,
    ignore_case: Option<bool>,
    literal: Option<bool>,
}

struct SearchCode;

impl Handler for SearchCode {
    type Args = Args;

    async fn run(&self, args: Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        run_blocking("search_code", args, ctx, search).await
    }
}

/// Everything one search needs, shared read-only by all threads.
struct Plan<'a> {
    matcher: RegexMatcher,
    context: usize,
    glob: Option<FileGlob>,
    budget: Budget,
    overlay: Overlay,
    ctx: &'a ToolContext,
}

impl Plan<'_> {
    /// A searcher for one thread: line numbers on, context as asked, quit on a NUL byte.
    /// Buffered reads, no memory maps (they need `unsafe`, and rg does not use them when
    /// walking folders either).
    fn scanner(&self) -> Scanner {
        Scanner {
            searcher: SearcherBuilder::new()
                .line_number(true)
                // A line is held whole in memory to be matched: without a limit, a 2 GB file
                // with no newline takes 2 GB (and more while the buffer grows).
                .heap_limit(Some(LINE_HEAP_LIMIT))
                .binary_detection(BinaryDetection::quit(0))
                .before_context(self.context)
                .after_context(self.context)
                .build(),
            head: Vec::new(),
        }
    }
}

/// What one thread searches files with, reused from file to file.
struct Scanner {
    searcher: Searcher,
    /// The start of the file being searched (all of it when it is small).
    head: Vec<u8>,
}

impl Scanner {
    /// Searches the file at `abs`: read whole into `head` when it fits (searching a slice
    /// skips the searcher's line buffer and the read that finds the end, in the same way
    /// the searcher would, byte-order marks included), else its head and then the rest.
    fn search_disk(
        &mut self,
        matcher: &RegexMatcher,
        abs: &Path,
        sink: &mut Collector<'_>,
    ) -> std::io::Result<()> {
        self.head.clear();
        // Room for the whole head up front (once per thread): reading into a smaller buffer
        // starts with small probing reads.
        self.head.reserve(HEAD_BYTES);
        // The walk saw a regular file there; one swapped since for a symlink (to a file outside
        // the project) or a fifo is not opened, or waited on.
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
            .open(abs)?;
        (&mut file)
            .take(HEAD_BYTES as u64)
            .read_to_end(&mut self.head)?;
        if self.head.len() < HEAD_BYTES {
            self.searcher.search_slice(matcher, &self.head, sink)
        } else {
            let rest = std::io::Cursor::new(&self.head).chain(file);
            self.searcher.search_reader(matcher, rest, sink)
        }
    }
}

fn search(args: &Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
    let view = ctx.view.as_ref();
    let literal = args.literal.unwrap_or(false);
    let ignore_case = args.ignore_case.unwrap_or(false);
    let matcher = build_matcher(&args.pattern, literal, ignore_case)?;
    let glob = args.file_glob.as_deref().map(compile_glob).transpose()?;
    let context = args.context_lines.unwrap_or(0).clamp(0, MAX_CONTEXT_LINES) as usize;
    let path = view.resolve(args.path.as_deref().unwrap_or("."))?;
    let plan = Plan {
        matcher,
        context,
        glob,
        budget: Budget::new(ctx.limits.search_max_matches),
        overlay: Overlay::from_view(view),
        ctx,
    };
    let located = locate(view, &plan.overlay, &path)?;
    let is_file = matches!(located, Located::File(_));
    let mut files = match located {
        Located::Dir { on_disk } => {
            let mut files = if on_disk {
                search_disk(&plan, &path)?
            } else {
                Vec::new()
            };
            files.extend(search_written(&plan, &path));
            files
        }
        Located::File(Some(content)) => search_one(&plan, &path, Source::Memory(&content))
            .into_iter()
            .collect(),
        Located::File(None) => search_one(&plan, &path, Source::Disk).into_iter().collect(),
        Located::Other => {
            return Err(ToolError::failed(format!(
                "{path} is not a regular file (socket, pipe or device); search a folder or a \
                 file instead"
            )));
        }
        Located::Missing => return Err(not_found(view, &path, "path")),
    };
    if files.is_empty() {
        return Ok(ToolOutput::ok(no_matches(args, &path, &plan, is_file)));
    }
    let truncated = keep_first(&mut files, plan.budget.max(), context);
    Ok(ToolOutput::ok(render::render(
        &files,
        context > 0,
        truncated,
    )))
}

/// Compiles the pattern the way rg does for line-oriented search (no match spans a newline).
fn build_matcher(
    pattern: &str,
    literal: bool,
    ignore_case: bool,
) -> Result<RegexMatcher, ToolError> {
    if pattern.is_empty() {
        return Err(ToolError::failed(
            "the pattern is empty; give a regex or text to search for",
        ));
    }
    cache::MATCHERS
        .matcher(pattern, literal, ignore_case, || {
            RegexMatcherBuilder::new()
                .case_insensitive(ignore_case)
                .fixed_strings(literal)
                .line_terminator(Some(b'\n'))
                .build(pattern)
        })
        .map_err(|e| match e.kind() {
            ErrorKind::NotAllowed(_) => ToolError::failed(format!(
                "invalid pattern: {e}; search_code matches within one line, so search for a \
                 single line of the text (or use \\s instead of a line break)"
            )),
            _ if literal => ToolError::failed(format!("invalid pattern: {e}")),
            _ => ToolError::failed(format!(
                "invalid regex: {}\nfix the regex (escape special characters with \\), or set \
                 literal=true to search for the text as written",
                syntax_error(pattern).unwrap_or_else(|| e.to_string())
            )),
        })
}

/// The syntax error of `pattern` as regex-syntax words it, caret under the position in the
/// pattern the model wrote (grep-regex reports it inside its own wrapping of the pattern).
fn syntax_error(pattern: &str) -> Option<String> {
    regex_syntax::ParserBuilder::new()
        .utf8(false)
        .build()
        .parse(pattern)
        .err()
        .map(|e| e.to_string())
}

/// Where a file's content comes from.
enum Source<'c> {
    /// Read from disk by the searcher.
    Disk,
    /// The model's in-memory version.
    Memory(&'c [u8]),
}

/// Searches one file named by the model (ignore rules and file_glob do not apply to it).
fn search_one(plan: &Plan<'_>, path: &ProjectPath, source: Source<'_>) -> Option<FileHits> {
    if text::is_binary(path.rel(), &[]) {
        plan.budget.skipped_binary();
        return None;
    }
    let mut scanner = plan.scanner();
    search_file(
        plan,
        &mut scanner,
        path.rel().to_string(),
        path.abs(),
        source,
    )
}

/// Runs the searcher on one file and keeps its lines when something matched (and the file
/// does not sort after the cut of the match cap).
fn search_file(
    plan: &Plan<'_>,
    scanner: &mut Scanner,
    rel: String,
    abs: &std::path::Path,
    source: Source<'_>,
) -> Option<FileHits> {
    let max_chars = plan.ctx.limits.search_max_line_chars;
    let mut sink = Collector::new(&plan.budget, &plan.matcher, max_chars);
    plan.budget.searched_one();
    let result = match source {
        Source::Disk => scanner.search_disk(&plan.matcher, abs, &mut sink),
        Source::Memory(bytes) => scanner
            .searcher
            .search_slice(&plan.matcher, bytes, &mut sink),
    };
    // An unreadable file (permissions, vanished meanwhile) is skipped, as rg does; so is one
    // with a line longer than the searcher may hold, and that is said.
    if let Err(err) = result {
        if err.to_string().contains("allocation limit") {
            plan.budget.skipped_too_long();
        }
        return None;
    }
    if sink.was_binary() {
        plan.budget.skipped_binary();
    }
    let (lines, matches) = sink.finish()?;
    plan.budget
        .record(&rel, matches)
        .then_some(FileHits { rel, lines })
}

/// Files the ordered first pass of [`search_disk`] searches at most.
const PROBE_FILES: usize = 256;
/// Entries the ordered first pass looks at most (a glob may leave most files unsearched). Every
/// entry the walk looks at counts, also the files the glob or the ignore rules leave out
/// ([`Walk::counting_builder`]).
const PROBE_ENTRIES: usize = 4096;
/// Entries after which the first pass gives up early when it has searched fewer than
/// [`SPARSE_FILES`] files: a glob that leaves most files out (`*.toml` in a cargo registry)
/// makes the ordered walk a single-threaded walk of the tree's first part, which the parallel
/// walk does in a fraction of the time.
const SPARSE_ENTRIES: usize = 1024;
/// See [`SPARSE_ENTRIES`].
const SPARSE_FILES: usize = 32;
/// Files after which the first pass gives up when the matches found so far, at the rate found,
/// would not reach the cap within [`PROBE_FILES`] files: a rare pattern (the usual search for a
/// name) then goes to the parallel walk after 8 files instead of 256 searched on one thread.
const RATE_FILES: usize = 8;

/// Whether the ordered first pass stops and leaves the rest to the parallel walk, having looked
/// at `seen` entries and searched `searched` files with `matches` matches of the `wanted`
/// that settle the result.
fn first_pass_gives_up(seen: usize, searched: usize, matches: usize, wanted: usize) -> bool {
    seen >= PROBE_ENTRIES
        || searched >= PROBE_FILES
        || (seen >= SPARSE_ENTRIES && searched < SPARSE_FILES)
        || (searched >= RATE_FILES
            && matches.saturating_mul(PROBE_FILES) < wanted.saturating_mul(searched))
}

/// Searches the folder on disk, skipping what the overlay shadows: first in path order on this
/// thread, then, when that did not settle the result, in parallel.
///
/// Why two passes: a capped search must return the first matches in path order. The parallel
/// walk can skip files and folders that sort after the cut only once a cut exists, and by then
/// it has queued, and will list, every folder it met (every crate of a cargo registry). A short
/// walk in path order finds the first matches of a common pattern after a few files, and then
/// the result is known without a parallel walk; for a rare pattern it gives up after
/// [`PROBE_FILES`] files and the parallel walk searches the rest, skipping what it covered.
fn search_disk(plan: &Plan<'_>, dir: &ProjectPath) -> Result<Vec<FileHits>, ToolError> {
    let ctx = plan.ctx;
    let walk = Walk::new(ctx.view.root(), dir)?;
    // Files binary by name or outside the glob are left out by the walk itself, before its
    // ignore rules are asked about them.
    let (glob, start, root) = (
        plan.glob.clone(),
        walk.start().to_path_buf(),
        walk.root().to_path_buf(),
    );
    let walk = walk.only_files(Arc::new(move |path: &Path| {
        !path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|name| text::is_binary(name, &[]))
            && glob
                .as_ref()
                .is_none_or(|glob| glob.is_match_at(path, &start, &root))
    }));
    let check_overlay = !plan.overlay.is_empty();
    // The file's path from the root when it is to be searched (not shadowed by the model's
    // in-memory changes).
    let wanted = |path: &Path| -> Option<String> {
        let rel = walk.rel_to_root(path)?;
        (!(check_overlay && plan.overlay.shadows(&rel))).then_some(rel)
    };

    // First pass: in path order (names compared as the cut compares them), on this thread.
    let mut found = Vec::new();
    let mut scanner = plan.scanner();
    let mut probed: Option<String> = None;
    let mut searched = 0usize;
    // Matches found so far, against the max + 1 that settle the result.
    let mut matches = 0usize;
    let wanted_matches = plan.budget.max().saturating_add(1);
    let mut settled = true;
    let (mut ordered, looked) = walk.counting_builder();
    ordered.sort_by_file_name(|a, b| match (a.to_str(), b.to_str()) {
        (Some(a), Some(b)) => a.cmp(b),
        // Names that are not UTF-8 sort as they are shown (lossily), like the cut sorts them.
        _ => a.to_string_lossy().cmp(&b.to_string_lossy()),
    });
    for entry in ordered.build() {
        let seen = looked.load(Ordering::Relaxed);
        if ctx.cancel.is_cancelled() {
            return Err(ToolError::failed("search_code was cancelled"));
        }
        if plan.budget.has_cut() {
            // The first max + 1 matches are known: nothing after them can be shown.
            break;
        }
        if first_pass_gives_up(seen, searched, matches, wanted_matches) {
            settled = false;
            break;
        }
        let Ok(entry) = entry else { continue };
        if !walk.inside(&entry) || !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let path = entry.path();
        let Some(rel) = wanted(path) else { continue };
        searched += 1;
        if let Some(hits) = search_file(plan, &mut scanner, rel.clone(), path, Source::Disk) {
            matches += hits.lines.iter().filter(|l| l.is_match).count();
            found.push(hits);
        }
        probed = Some(rel);
    }
    if settled {
        return Ok(found);
    }

    // Second pass: everything after the first pass, in parallel.
    let probed = probed.map(PathBuf::from);
    // Every path up to `probed` was seen by the first pass; a folder before it whose paths all
    // come before it (it does not hold `probed`) was covered whole.
    let covered = |rel: &str| probed.as_deref().is_some_and(|p| Path::new(rel) <= p);
    let covered_folder = |rel: &str| {
        probed
            .as_deref()
            .is_some_and(|p| Path::new(rel) < p && !p.starts_with(rel))
    };
    let builder = walk.builder(None);
    found.extend(walk.collect(
        &builder,
        || plan.scanner(),
        |scanner, entry, out| {
            if ctx.cancel.is_cancelled() {
                return WalkState::Quit;
            }
            let Some(kind) = entry.file_type() else {
                return WalkState::Continue;
            };
            if kind.is_dir() {
                // Everything below was searched already, or sorts after the cut.
                return match walk.rel_to_root(entry.path()) {
                    Some(rel) if covered_folder(&rel) || plan.budget.past_cut(&rel) => {
                        WalkState::Skip
                    }
                    _ => WalkState::Continue,
                };
            }
            if !kind.is_file() {
                return WalkState::Continue;
            }
            let path = entry.path();
            let Some(rel) = wanted(path) else {
                return WalkState::Continue;
            };
            if covered(&rel) || plan.budget.past_cut(&rel) {
                return WalkState::Continue;
            }
            if let Some(hits) = search_file(plan, scanner, rel, path, Source::Disk) {
                out.push(hits);
            }
            WalkState::Continue
        },
    ));
    if ctx.cancel.is_cancelled() {
        return Err(ToolError::failed("search_code was cancelled"));
    }
    Ok(found)
}

/// Searches the files the model wrote in memory below `dir`.
fn search_written(plan: &Plan<'_>, dir: &ProjectPath) -> Vec<FileHits> {
    let mut scanner = plan.scanner();
    let prefix = dir.rel();
    let mut found = Vec::new();
    for (rel, content) in plan.overlay.writes_under(prefix) {
        if plan.budget.past_cut(rel) {
            continue;
        }
        if text::is_binary(rel, &[]) {
            continue;
        }
        if let Some(glob) = &plan.glob {
            let below = if prefix.is_empty() {
                rel
            } else {
                rel.get(prefix.len() + 1..).unwrap_or_default()
            };
            if !glob.is_match_either(Path::new(below), Path::new(rel)) {
                continue;
            }
        }
        let abs = plan.ctx.view.root().join(rel);
        let source = Source::Memory(content.as_slice());
        if let Some(hits) = search_file(plan, &mut scanner, rel.to_string(), &abs, source) {
            found.push(hits);
        }
    }
    found
}

/// The text for a search that found nothing, with the likely reasons.
fn no_matches(args: &Args, path: &ProjectPath, plan: &Plan<'_>, is_file: bool) -> String {
    if is_file && plan.budget.binary_files() > 0 {
        return format!(
            "{path} is a binary file; search_code skips binary files (read_file reports its size)"
        );
    }
    let searched = plan.budget.files_searched();
    let mut text = format!(
        "no matches for `{}` in {path} ({searched} file{} searched",
        args.pattern,
        if searched == 1 { "" } else { "s" }
    );
    if let Some(glob) = &args.file_glob {
        text.push_str(&format!(" matching `{glob}`"));
    }
    let too_long = plan.budget.too_long_files();
    if too_long > 0 {
        text.push_str(&format!(
            "; {too_long} file{} skipped for a line longer than {} MiB",
            if too_long == 1 { "" } else { "s" },
            LINE_HEAP_LIMIT / (1024 * 1024)
        ));
    }
    text.push_str("; binary files and files ignored by .gitignore/.ignore are skipped)");
    let literal = args.literal.unwrap_or(false);
    if !literal
        && args.pattern.contains([
            '(', ')', '[', ']', '{', '}', '.', '*', '+', '?', '|', '\\', '^', '$',
        ])
    {
        text.push_str(
            "; the pattern is a regex: set literal=true to search for the text as written",
        );
    }
    if !args.ignore_case.unwrap_or(false) && args.pattern.chars().any(char::is_alphabetic) {
        text.push_str("; set ignore_case=true to ignore case");
    }
    text
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use grep_matcher::Matcher as _;

    use super::super::walk::testing::{delete, overlay_ctx, write};
    use super::*;

    #[test]
    fn the_first_pass_leaves_a_rare_pattern_to_the_parallel_walk_early() {
        let wanted = 101;
        // A common pattern keeps going: two matches a file reach the cap within 256 files.
        assert!(!first_pass_gives_up(20, RATE_FILES, 2 * RATE_FILES, wanted));
        assert!(!first_pass_gives_up(200, 100, 99, wanted));
        // A rare one stops after RATE_FILES files, not PROBE_FILES.
        assert!(!first_pass_gives_up(10, RATE_FILES - 1, 0, wanted));
        assert!(first_pass_gives_up(10, RATE_FILES, 0, wanted));
        assert!(first_pass_gives_up(300, 64, 10, wanted));
        // The hard bounds hold whatever the matches.
        assert!(first_pass_gives_up(PROBE_ENTRIES, 1, 1000, wanted));
        assert!(first_pass_gives_up(10, PROBE_FILES, 1000, wanted));
        assert!(first_pass_gives_up(
            SPARSE_ENTRIES,
            SPARSE_FILES - 1,
            1000,
            wanted
        ));
    }

    #[tokio::test]
    async fn searches_the_models_in_memory_changes_instead_of_disk() {
        let (_dir, ctx) = overlay_ctx(
            &[
                ("a.txt", "needle on disk\n"),
                ("gone.txt", "needle deleted\n"),
                ("same.txt", "needle untouched\n"),
            ],
            vec![
                write("a.txt", "first\nneedle in memory\n"),
                delete("gone.txt"),
                write("new/n.rs", "// needle new\n"),
                write("new/blob.dat", "needle\0binary"),
            ],
        );
        let out = tool().call(&json!({"pattern": "needle"}), &ctx).await;
        assert_eq!(
            out.text,
            "a.txt:2:needle in memory\nnew/n.rs:1:// needle new\nsame.txt:1:needle untouched"
        );
        let folder = tool()
            .call(&json!({"pattern": "needle", "path": "new"}), &ctx)
            .await;
        assert_eq!(folder.text, "new/n.rs:1:// needle new");
        let file = tool()
            .call(&json!({"pattern": "memory", "path": "a.txt"}), &ctx)
            .await;
        assert_eq!(file.text, "a.txt:2:needle in memory");
        let globbed = tool()
            .call(&json!({"pattern": "needle", "file_glob": "*.rs"}), &ctx)
            .await;
        assert_eq!(globbed.text, "new/n.rs:1:// needle new");
        let deleted = tool()
            .call(&json!({"pattern": "needle", "path": "gone.txt"}), &ctx)
            .await;
        assert!(deleted.is_error, "{}", deleted.text);
    }

    #[tokio::test]
    async fn files_larger_than_the_head_are_searched_whole_and_like_small_ones() {
        // A line straddling the end of the head, matches after it, a NUL after the head, and
        // UTF-16 with a byte-order mark, small and large: the same answers as one read.
        let filler = |n: usize| "x".repeat(63) + &format!(" {n}\n");
        let mut big = String::new();
        let mut n = 0;
        while big.len() < HEAD_BYTES - 10 {
            big.push_str(&filler(n));
            n += 1;
        }
        big.push_str("straddling needle line\n");
        while big.len() < 3 * HEAD_BYTES {
            big.push_str(&filler(n));
            n += 1;
        }
        big.push_str("needle at the end\n");
        let mut nul_late = big.clone();
        nul_late.push('\0');
        let utf16 = |text: &str| -> Vec<u8> {
            let mut out = vec![0xFF, 0xFE];
            out.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
            out
        };
        let small16 = utf16("first\nneedle wide\n");
        let big16 = utf16(&big);
        let dir = tempfile::tempdir().unwrap();
        for (name, content) in [
            ("big.txt", big.as_bytes()),
            ("late_nul.txt", nul_late.as_bytes()),
            ("small16.txt", &small16[..]),
            ("big16.txt", &big16[..]),
        ] {
            std::fs::write(dir.path().join(name), content).unwrap();
        }
        let ctx = ToolContext::new(Arc::new(
            crate::workspace::DirectView::new(dir.path()).unwrap(),
        ));
        let out = tool().call(&json!({"pattern": "needle"}), &ctx).await;
        let straddling = big.lines().position(|l| l.contains("straddling")).unwrap() + 1;
        let end = big.lines().count();
        assert_eq!(
            out.text,
            format!(
                "big.txt:{straddling}:straddling needle line\nbig.txt:{end}:needle at the \
                 end\nbig16.txt:{straddling}:straddling needle line\nbig16.txt:{end}:needle \
                 at the end\nsmall16.txt:2:needle wide"
            )
        );
    }

    #[test]
    fn a_file_swapped_for_a_symlink_or_a_fifo_after_the_walk_is_not_read() {
        // What the walk listed as a regular file is opened without following a symlink and
        // without waiting on a fifo: a model racing the search from a background process
        // cannot make it read a file outside the project.
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let secret = outside.path().join("secret");
        std::fs::write(&secret, "needle secret\n").unwrap();
        let link = dir.path().join("swapped.txt");
        std::os::unix::fs::symlink(&secret, &link).unwrap();
        let fifo = dir.path().join("fifo.txt");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let ctx = ToolContext::new(Arc::new(
            crate::workspace::DirectView::new(dir.path()).unwrap(),
        ));
        let plan = Plan {
            matcher: build_matcher("needle", false, false).unwrap(),
            context: 0,
            glob: None,
            budget: Budget::new(10),
            overlay: Overlay::default(),
            ctx: &ctx,
        };
        let mut scanner = plan.scanner();
        let mut sink = Collector::new(&plan.budget, &plan.matcher, 500);
        assert!(
            scanner
                .search_disk(&plan.matcher, &link, &mut sink)
                .is_err(),
            "the symlink was followed"
        );
        // Opened without a writer: at once, and nothing in it (this would hang if blocking).
        let mut sink = Collector::new(&plan.budget, &plan.matcher, 500);
        scanner
            .search_disk(&plan.matcher, &fifo, &mut sink)
            .unwrap();
        assert!(sink.finish().is_none());
    }

    #[test]
    fn literal_escapes_and_case_folds() {
        let m = build_matcher("a.b(", true, false).unwrap();
        assert!(m.is_match(b"xa.b(y").unwrap());
        assert!(!m.is_match(b"axb(").unwrap());
        let m = build_matcher("HeLLo", false, true).unwrap();
        assert!(m.is_match(b"hello").unwrap());
        assert!(build_matcher("", false, false).is_err());
    }
}
