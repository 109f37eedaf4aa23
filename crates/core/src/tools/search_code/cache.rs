//! Compiled patterns kept for the next search.
//!
//! Several models in one run search the same project for the same identifiers, and one model
//! often repeats a search after an edit; compiling the regex (grep-regex builds a meta regex
//! with its literal prefilters) was about a seventh of a search_code call on a small project.
//! A [`RegexMatcher`] is a cheap handle to an immutable program, so a hit is a clone. The
//! cache is small and per process, keeps only patterns that compiled, and skips long patterns
//! (whose programs can be large and are rarely repeated).

use std::sync::{Mutex, PoisonError};

use grep_regex::RegexMatcher;

/// Patterns kept; the least recently used goes first.
const CAPACITY: usize = 32;
/// Patterns longer than this (bytes) are compiled every time.
const MAX_PATTERN: usize = 512;

/// What a compiled matcher depends on.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Key {
    pattern: String,
    literal: bool,
    ignore_case: bool,
}

/// Compiled matchers, most recently used last.
pub(super) struct MatcherCache(Mutex<Vec<(Key, RegexMatcher)>>);

/// The process's cache, shared by every search.
pub(super) static MATCHERS: MatcherCache = MatcherCache::new();

impl MatcherCache {
    const fn new() -> Self {
        Self(Mutex::new(Vec::new()))
    }

    /// The matcher for `pattern`, from the cache or built by `build` (and then kept).
    pub(super) fn matcher<E>(
        &self,
        pattern: &str,
        literal: bool,
        ignore_case: bool,
        build: impl FnOnce() -> Result<RegexMatcher, E>,
    ) -> Result<RegexMatcher, E> {
        if pattern.len() > MAX_PATTERN {
            return build();
        }
        let key = Key {
            pattern: pattern.to_string(),
            literal,
            ignore_case,
        };
        {
            // A panic elsewhere while holding the lock leaves a valid Vec: keep using it.
            let mut cache = self.0.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(at) = cache.iter().position(|(k, _)| *k == key) {
                let entry = cache.remove(at);
                let matcher = entry.1.clone();
                cache.push(entry);
                return Ok(matcher);
            }
        }
        // Compiled outside the lock: other searches need not wait for a slow pattern.
        let matcher = build()?;
        let mut cache = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if !cache.iter().any(|(k, _)| *k == key) {
            if cache.len() >= CAPACITY {
                cache.remove(0);
            }
            cache.push((key, matcher.clone()));
        }
        Ok(matcher)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use grep_matcher::Matcher;
    use grep_regex::RegexMatcherBuilder;

    use super::*;

    fn build(pattern: &str, literal: bool, ignore_case: bool) -> Result<RegexMatcher, String> {
        RegexMatcherBuilder::new()
            .fixed_strings(literal)
            .case_insensitive(ignore_case)
            .build(pattern)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn a_repeated_pattern_is_not_compiled_again_and_flags_are_part_of_the_key() {
        let cache = MatcherCache::new();
        let pattern = "cache_test_fn_[a-z]+";
        let mut builds = 0;
        for _ in 0..3 {
            cache
                .matcher(pattern, false, false, || {
                    builds += 1;
                    build(pattern, false, false)
                })
                .unwrap();
        }
        assert_eq!(builds, 1);
        // The same text with other flags is another program.
        let insensitive = cache
            .matcher(pattern, false, true, || {
                builds += 1;
                build(pattern, false, true)
            })
            .unwrap();
        assert_eq!(builds, 2);
        assert!(insensitive.is_match(b"CACHE_TEST_FN_X").unwrap());
        let sensitive = cache
            .matcher(pattern, false, false, || build(pattern, false, false))
            .unwrap();
        assert!(!sensitive.is_match(b"CACHE_TEST_FN_X").unwrap());
    }

    #[test]
    fn errors_are_not_kept_and_long_patterns_are_not_cached() {
        let cache = MatcherCache::new();
        let mut builds = 0;
        for _ in 0..2 {
            let bad = cache.matcher("cache_test_(", false, false, || {
                builds += 1;
                build("cache_test_(", false, false)
            });
            assert!(bad.is_err());
        }
        assert_eq!(builds, 2);
        let long = "x".repeat(MAX_PATTERN + 1);
        for _ in 0..2 {
            cache
                .matcher(&long, true, false, || {
                    builds += 1;
                    build(&long, true, false)
                })
                .unwrap();
        }
        assert_eq!(builds, 4);
    }

    #[test]
    fn the_least_recently_used_pattern_leaves_first() {
        let cache = MatcherCache::new();
        let first = "cache_test_lru_first";
        cache
            .matcher(first, true, false, || build(first, true, false))
            .unwrap();
        for i in 0..CAPACITY {
            let p = format!("cache_test_lru_{i}");
            cache
                .matcher(&p, true, false, || build(&p, true, false))
                .unwrap();
        }
        let mut rebuilt = false;
        cache
            .matcher(first, true, false, || {
                rebuilt = true;
                build(first, true, false)
            })
            .unwrap();
        assert!(rebuilt, "the oldest pattern should have been dropped");
    }
}
