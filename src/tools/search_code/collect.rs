//! Collecting matches from grep-searcher: one [`Collector`] per file, one [`Budget`] per search.
//!
//! Threads search files independently; the only thing they share is the budget, an atomic
//! counter of matches taken. When a thread finds one match more than the cap allows, the budget
//! is marked overflowed and every thread stops its walk, so a pattern that matches everywhere in
//! a huge tree costs about as much as finding the first hundred matches. Lines are turned into
//! their printed (possibly cut) form as they arrive, so a file's raw bytes are never kept.

use std::io;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use grep_matcher::Matcher;
use grep_regex::RegexMatcher;
use grep_searcher::{Searcher, Sink, SinkContext, SinkMatch};

use super::render::printable;

/// The match cap shared by all threads of one search.
#[derive(Debug)]
pub(super) struct Budget {
    max: usize,
    taken: AtomicUsize,
    overflowed: AtomicBool,
    files_searched: AtomicUsize,
    binary_files: AtomicUsize,
    too_long_files: AtomicUsize,
}

impl Budget {
    /// A budget of `max` matches.
    pub(super) fn new(max: usize) -> Self {
        Self {
            max,
            taken: AtomicUsize::new(0),
            overflowed: AtomicBool::new(false),
            files_searched: AtomicUsize::new(0),
            binary_files: AtomicUsize::new(0),
            too_long_files: AtomicUsize::new(0),
        }
    }

    /// Takes one match; false (and the budget marked overflowed) when the cap is reached.
    fn take(&self) -> bool {
        if self.taken.fetch_add(1, Ordering::Relaxed) < self.max {
            true
        } else {
            self.overflowed.store(true, Ordering::Relaxed);
            false
        }
    }

    /// Gives back matches of a file that turned out to be binary.
    fn refund(&self, n: usize) {
        self.taken.fetch_sub(n, Ordering::Relaxed);
    }

    /// True once a match beyond the cap was seen: there are more matches than are shown.
    pub(super) fn overflowed(&self) -> bool {
        self.overflowed.load(Ordering::Relaxed)
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
    budget: &'a Budget,
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
            budget,
            matcher,
            max_chars,
            lines: Vec::new(),
            matches: 0,
            pending_break: false,
            binary: false,
        }
    }

    /// The file's lines, or `None` when nothing matched or the file is binary.
    pub(super) fn finish(self) -> Option<Vec<Line>> {
        if self.binary || self.matches == 0 {
            return None;
        }
        Some(self.lines)
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
        if !self.budget.take() {
            return Ok(false);
        }
        self.matches += 1;
        let first = mat.line_number().unwrap_or(0);
        for (i, line) in mat.lines().enumerate() {
            self.push(first + i as u64, true, line);
        }
        Ok(true)
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
        self.budget.refund(self.matches);
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
        c.finish()
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
    fn the_budget_stops_at_the_cap_and_remembers_overflow() {
        let budget = Budget::new(2);
        let lines = run(b"x\nx\nx\n", "x", 0, &budget).unwrap();
        assert_eq!(lines.len(), 2);
        assert!(budget.overflowed());
        let exact = Budget::new(3);
        run(b"x\nx\nx\n", "x", 0, &exact).unwrap();
        assert!(!exact.overflowed());
    }

    #[test]
    fn binary_content_is_skipped_and_refunded() {
        let budget = Budget::new(10);
        assert!(run(b"hit\n\0\x01\x02hit\n", "hit", 0, &budget).is_none());
        assert_eq!(budget.taken.load(Ordering::Relaxed), 0);
    }
}
