//! Collecting matches from grep-searcher: one [`Collector`] per file, one [`Budget`] per search.
//!
//! Threads search files independently and in no fixed order, yet the result must be the same
//! on every run: the first `max` matches in path order (files sorted by path component by
//! component, as a sorted walk meets them and as `rg --sort path` prints them: a folder's
//! files come right after the folder; lines in file order), and a notice when there are more. So each file keeps up to `max + 1` matches of its
//! own, and the budget remembers, under a lock, how many matches each file holding one has.
//! Once those files hold more than `max` matches, the file where the first `max + 1` end is the
//! cut: files that sort after it can no longer change the result, so they are not searched and
//! folders whose whole subtree sorts after it are not walked. A pattern that matches everywhere
//! in a huge tree therefore still stops early, and which files it stops at does not depend on
//! thread timing. Lines are turned into their printed (possibly cut) form as they arrive, so a
//! file's raw bytes are never kept.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

use grep_matcher::Matcher;
use grep_regex::RegexMatcher;
use grep_searcher::{Searcher, Sink, SinkContext, SinkMatch};

use super::render::printable;

/// The match cap of one search, shared by all threads, and the search's counters.
#[derive(Debug)]
pub(super) struct Budget {
    max: usize,
    cut: Mutex<Cut>,
    /// Set once `cut.last` is: lets threads skip the lock until there is a cut.
    has_cut: AtomicBool,
    files_searched: AtomicUsize,
    binary_files: AtomicUsize,
    too_long_files: AtomicUsize,
}

/// What the budget knows about the matches found so far.
#[derive(Debug, Default)]
struct Cut {
    /// Matches per file, for the files with a match that sort at or before `last`.
    files: BTreeMap<PathBuf, usize>,
    /// The file in which the first `max + 1` matches in path order end, once known.
    last: Option<PathBuf>,
}

impl Budget {
    /// A budget of `max` matches.
    pub(super) fn new(max: usize) -> Self {
        Self {
            max,
            cut: Mutex::new(Cut::default()),
            has_cut: AtomicBool::new(false),
            files_searched: AtomicUsize::new(0),
            binary_files: AtomicUsize::new(0),
            too_long_files: AtomicUsize::new(0),
        }
    }

    /// The matches shown at most.
    pub(super) fn max(&self) -> usize {
        self.max
    }

    fn lock(&self) -> MutexGuard<'_, Cut> {
        self.cut
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// True once the first `max + 1` matches are known to lie at or before some file.
    pub(super) fn has_cut(&self) -> bool {
        self.has_cut.load(Ordering::Acquire)
    }

    /// True when the file or folder `rel` sorts after the cut: nothing in it can be shown. A
    /// folder's paths sort right after it, so a folder past the cut has all of them past it.
    pub(super) fn past_cut(&self, rel: &str) -> bool {
        self.has_cut()
            && self
                .lock()
                .last
                .as_deref()
                .is_some_and(|last| Path::new(rel) > last)
    }

    /// Records that the file `rel` has `matches` matches (at most `max + 1`) and moves the cut
    /// when it comes earlier now. False when the file sorts after the cut: drop its lines.
    pub(super) fn record(&self, rel: &str, matches: usize) -> bool {
        let rel = Path::new(rel);
        let mut cut = self.lock();
        if cut.last.as_deref().is_some_and(|last| rel > last) {
            return false;
        }
        cut.files.insert(rel.to_path_buf(), matches);
        let mut seen = 0usize;
        let mut last = None;
        for (path, n) in &cut.files {
            seen += n;
            if seen > self.max {
                last = Some(path.clone());
                break;
            }
        }
        if let Some(last) = last {
            cut.files.retain(|path, _| *path <= last);
            cut.last = Some(last);
            self.has_cut.store(true, Ordering::Release);
        }
        true
    }

    /// Counts a file whose content was searched.
    pub(super) fn searched_one(&self) {
        self.files_searched.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a file skipped because a line passed the searcher's memory limit.
    pub(super) fn skipped_too_long(&self) {
        self.too_long_files.fetch_add(1, Ordering::Relaxed);
    }

    /// Files skipped for a line over the memory limit so far.
    pub(super) fn too_long_files(&self) -> usize {
        self.too_long_files.load(Ordering::Relaxed)
    }

    /// Counts a file skipped as binary.
    pub(super) fn skipped_binary(&self) {
        self.binary_files.fetch_add(1, Ordering::Relaxed);
    }

    /// Files skipped as binary so far.
    pub(super) fn binary_files(&self) -> usize {
        self.binary_files.load(Ordering::Relaxed)
    }

    /// Files searched so far.
    pub(super) fn files_searched(&self) -> usize {
        self.files_searched.load(Ordering::Relaxed)
    }
}

/// Sorts the files by path and keeps the first `max` matches in that order, each with the
/// context lines that follow it (at most `context`); returns whether matches were left out.
pub(super) fn keep_first(files: &mut Vec<FileHits>, max: usize, context: usize) -> bool {
    files.sort_unstable_by(|a, b| Path::new(&a.rel).cmp(Path::new(&b.rel)));
    let mut seen = 0usize;
    for i in 0..files.len() {
        let lines = &files[i].lines;
        let matches = lines.iter().filter(|l| l.is_match).count();
        if seen + matches <= max {
            seen += matches;
            continue;
        }
        // The first match that does not fit is in this file.
        let wanted = max - seen;
        let mut end = 0;
        if wanted > 0 {
            let mut taken = 0;
            for (at, line) in lines.iter().enumerate() {
                if line.is_match {
                    taken += 1;
                    if taken == wanted {
                        end = at + 1;
                        break;
                    }
                }
            }
            let after = lines[end..]
                .iter()
                .take(context)
                .take_while(|l| !l.is_match && !l.break_before)
                .count();
            end += after;
        }
        files[i].lines.truncate(end);
        files.truncate(if end > 0 { i + 1 } else { i });
        return true;
    }
    false
}

/// One printed line of a file's results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Line {
    /// 1-based line number.
    pub(super) number: u64,
    /// A matching line (`path:n:text`) rather than context (`path-n-text`).
    pub(super) is_match: bool,
    /// A `--` goes before this line: it does not follow the previous one.
    pub(super) break_before: bool,
    /// The line without its terminator, decoded and cut to the line cap.
    pub(super) text: String,
}

/// The results of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct FileHits {
    /// Path relative to the workspace root, `/`-separated.
    pub(super) rel: String,
    /// Matching and context lines in file order.
    pub(super) lines: Vec<Line>,
}

/// The grep-searcher sink for one file.
pub(super) struct Collector<'a> {
    /// Matches kept at most: one more than the search shows, to know that there are more.
    cap: usize,
    matcher: &'a RegexMatcher,
    max_chars: usize,
    lines: Vec<Line>,
    matches: usize,
    pending_break: bool,
    binary: bool,
}

impl<'a> Collector<'a> {
    /// An empty collector; it allocates nothing until a line is kept.
    pub(super) fn new(budget: &'a Budget, matcher: &'a RegexMatcher, max_chars: usize) -> Self {
        Self {
            cap: budget.max().saturating_add(1),
            matcher,
            max_chars,
            lines: Vec::new(),
            matches: 0,
            pending_break: false,
            binary: false,
        }
    }

    /// The file's lines and its number of matches, or `None` when nothing matched or the file
    /// is binary.
    pub(super) fn finish(self) -> Option<(Vec<Line>, usize)> {
        if self.binary || self.matches == 0 {
            return None;
        }
        Some((self.lines, self.matches))
    }

    /// True when the searcher found binary data and the file was skipped.
    pub(super) fn was_binary(&self) -> bool {
        self.binary
    }

    fn push(&mut self, number: u64, is_match: bool, bytes: &[u8]) {
        let at = if is_match && bytes.len() > self.max_chars {
            // Only long lines need the match position, to show the part that matched.
            self.matcher
                .find(bytes)
                .ok()
                .flatten()
                .map_or(0, |m| m.start())
        } else {
            0
        };
        self.lines.push(Line {
            number,
            is_match,
            break_before: std::mem::take(&mut self.pending_break),
            text: printable(bytes, at, self.max_chars),
        });
    }
}

impl Sink for Collector<'_> {
    type Error = io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, io::Error> {
        self.matches += 1;
        let first = mat.line_number().unwrap_or(0);
        for (i, line) in mat.lines().enumerate() {
            self.push(first + i as u64, true, line);
        }
        Ok(self.matches < self.cap)
    }

    fn context(&mut self, _: &Searcher, ctx: &SinkContext<'_>) -> Result<bool, io::Error> {
        self.push(ctx.line_number().unwrap_or(0), false, ctx.bytes());
        Ok(true)
    }

    fn context_break(&mut self, _: &Searcher) -> Result<bool, io::Error> {
        self.pending_break = true;
        Ok(true)
    }

    fn binary_data(&mut self, _: &Searcher, _offset: u64) -> Result<bool, io::Error> {
        // Matches seen before the NUL byte turned up do not count: the file is skipped.
        self.binary = true;
        self.matches = 0;
        self.lines = Vec::new();
        Ok(false)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use grep_searcher::{BinaryDetection, SearcherBuilder};

    use super::*;

    fn run(text: &[u8], pattern: &str, context: usize, budget: &Budget) -> Option<Vec<Line>> {
        let matcher = RegexMatcher::new_line_matcher(pattern).unwrap();
        let mut searcher = SearcherBuilder::new()
            .line_number(true)
            .binary_detection(BinaryDetection::quit(0))
            .before_context(context)
            .after_context(context)
            .build();
        let mut c = Collector::new(budget, &matcher, 500);
        searcher.search_slice(&matcher, text, &mut c).unwrap();
        c.finish().map(|(lines, _)| lines)
    }

    #[test]
    fn context_groups_are_marked_with_breaks() {
        let text = b"a\nhit1\nb\nc\nd\ne\nhit2\nf\n";
        let lines = run(text, "hit", 1, &Budget::new(100)).unwrap();
        let shown: Vec<(u64, bool, bool)> = lines
            .iter()
            .map(|l| (l.number, l.is_match, l.break_before))
            .collect();
        assert_eq!(
            shown,
            [
                (1, false, false),
                (2, true, false),
                (3, false, false),
                (6, false, true),
                (7, true, false),
                (8, false, false)
            ]
        );
    }

    #[test]
    fn a_file_keeps_one_match_more_than_the_cap() {
        let lines = run(b"x\nx\nx\nx\n", "x", 0, &Budget::new(2)).unwrap();
        assert_eq!(lines.len(), 3);
        let lines = run(b"x\nx\nx\n", "x", 0, &Budget::new(3)).unwrap();
        assert_eq!(lines.len(), 3);
    }

    #[test]
    fn binary_content_is_skipped() {
        let budget = Budget::new(10);
        assert!(run(b"hit\n\0\x01\x02hit\n", "hit", 0, &budget).is_none());
    }

    #[test]
    fn the_cut_moves_to_the_earliest_files_whatever_the_order_they_come_in() {
        let budget = Budget::new(3);
        assert!(budget.record("m/x.rs", 2));
        assert!(!budget.past_cut("z.rs"), "no cut before 4 matches");
        assert!(budget.record("z.rs", 4));
        assert!(budget.past_cut("zz.rs"));
        assert!(!budget.past_cut("a.rs"));
        assert!(budget.record("b/y.rs", 2));
        // b/y.rs (2) + m/x.rs (2) = 4 > 3: nothing after m/x.rs can be shown.
        assert!(budget.past_cut("m/y.rs"));
        assert!(budget.past_cut("z.rs"));
        assert!(!budget.past_cut("m/w.rs"));
        assert!(!budget.record("n.rs", 1), "past the cut");
        assert!(budget.past_cut("n"));
        assert!(budget.past_cut("m/z"));
        assert!(!budget.past_cut("m"), "m/w.rs may still come");
        assert!(!budget.past_cut("c"));
        // A folder's files come before a sibling file that extends its name.
        assert!(budget.past_cut("m.rs"));
    }

    fn hits(rel: &str, lines: &[(u64, bool, bool)]) -> FileHits {
        FileHits {
            rel: rel.to_string(),
            lines: lines
                .iter()
                .map(|&(number, is_match, break_before)| Line {
                    number,
                    is_match,
                    break_before,
                    text: String::new(),
                })
                .collect(),
        }
    }

    #[test]
    fn keep_first_cuts_in_path_order_after_the_last_match_and_its_context() {
        let numbers = |files: &[FileHits]| -> Vec<(String, Vec<u64>)> {
            files
                .iter()
                .map(|f| (f.rel.clone(), f.lines.iter().map(|l| l.number).collect()))
                .collect()
        };
        let make = || {
            vec![
                hits("b.rs", &[(1, true, false)]),
                hits(
                    "a.rs",
                    &[
                        (1, true, false),
                        (2, false, false),
                        (3, false, false),
                        (4, true, false),
                        (5, false, false),
                        (9, false, true),
                        (10, true, false),
                    ],
                ),
            ]
        };
        let mut files = make();
        assert!(keep_first(&mut files, 2, 1));
        assert_eq!(numbers(&files), [("a.rs".to_string(), vec![1, 2, 3, 4, 5])]);
        let mut files = make();
        assert!(keep_first(&mut files, 1, 2));
        assert_eq!(numbers(&files), [("a.rs".to_string(), vec![1, 2, 3])]);
        let mut files = make();
        assert!(keep_first(&mut files, 3, 1));
        assert_eq!(numbers(&files).len(), 1, "b.rs is left out");
        let mut files = make();
        assert!(!keep_first(&mut files, 4, 1));
        assert_eq!(numbers(&files).len(), 2);
        let mut files = make();
        assert!(keep_first(&mut files, 0, 1));
        assert!(files.is_empty());
        // Path order is by component: a folder's files before a file that extends its name.
        let mut files = vec![
            hits("a.rs", &[(1, true, false)]),
            hits("a/b.rs", &[(1, true, false)]),
        ];
        assert!(keep_first(&mut files, 1, 0));
        assert_eq!(numbers(&files), [("a/b.rs".to_string(), vec![1])]);
    }
}
