//! Two judgements the review makes before the user does: which change sets touch test files,
//! and which model the review opens on.
//!
//! Editing the test until it passes is the classic way a model "fixes" a failing test, and a
//! passing check says nothing then. So a change set that touches a file that looks like a test
//! (by the naming conventions of the common test runners: `tests/`, `__tests__/`, `spec/`,
//! `*_test.*`, `test_*.py`, `*.test.*`, `*.spec.*`, `*_spec.rb`, `FooTest.java`...) is marked
//! in the review, whatever else it did. Tests written inside a source file (a Rust
//! `#[cfg(test)]` module) are not recognised: only paths are looked at.
//!
//! The review opens on the model most likely to be worth keeping ([`best`]): first the check
//! (passed, then not run, then failed), then a change set that leaves the tests alone, then a
//! run that ended normally (not stopped by an error, a limit or a cancel), then one that
//! changed something; ties go to the model listed first. The user moves from there; nothing
//! is decided for them.

use std::cmp::Reverse;

/// Folder names whose files are tests.
const TEST_DIRS: &[&str] = &["test", "tests", "__tests__", "spec", "specs"];

/// Whether `path` (relative, `/`-separated) looks like a test file by the conventions of the
/// common test runners.
pub fn is_test_path(path: &str) -> bool {
    let mut parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    let Some(name) = parts.pop() else {
        return false;
    };
    if parts.iter().any(|dir| TEST_DIRS.contains(dir)) {
        return true;
    }
    let stem = name.split('.').next().unwrap_or(name);
    let lower = stem.to_ascii_lowercase();
    lower == "test"
        || lower == "tests"
        || lower == "conftest"
        || lower.starts_with("test_")
        || lower.ends_with("_test")
        || lower.ends_with("_tests")
        || lower.ends_with("_spec")
        || name.contains(".test.")
        || name.contains(".spec.")
        || camel_test_suffix(stem)
}

/// `FooTest` / `FooTests` (Java, Kotlin, C#, Swift): a capital `T` starting the last word.
fn camel_test_suffix(stem: &str) -> bool {
    let base = stem
        .strip_suffix("Tests")
        .or_else(|| stem.strip_suffix("Test"));
    base.is_some_and(|b| b.chars().last().is_some_and(|c| c.is_ascii_lowercase()))
}

/// The paths of `paths` that look like tests, in order.
pub fn test_files<'a>(paths: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    paths.into_iter().filter(|p| is_test_path(p)).collect()
}

/// How a model's review check went, in the order the review prefers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CheckVerdict {
    /// Exit 0.
    Passed,
    /// No check configured, or it has not ended.
    NotRun,
    /// Anything else (a failure, a timeout, a cancel).
    Failed,
}

/// What the review knows of one model when it picks where to open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Standing {
    /// Its check.
    pub check: CheckVerdict,
    /// How many test files its change set touches.
    pub test_files: usize,
    /// Its run ended normally (not an error, a limit, a timeout or a cancel).
    pub ended_well: bool,
    /// Its change set is not empty.
    pub changed: bool,
}

/// The index of the model the review opens on (see the module docs for the order); `None`
/// for no models.
pub fn best(standings: &[Standing]) -> Option<usize> {
    standings
        .iter()
        .enumerate()
        .min_by_key(|(i, s)| {
            (
                s.check,
                s.test_files > 0,
                !s.ended_well,
                Reverse(s.changed),
                *i,
            )
        })
        .map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_files_are_known_by_the_common_conventions() {
        for path in [
            "tests/pricing.rs",
            "crates/a/tests/it/main.rs",
            "src/__tests__/app.js",
            "spec/models/user_spec.rb",
            "pkg/server_test.go",
            "test_api.py",
            "app/tests.py",
            "conftest.py",
            "src/button.test.tsx",
            "src/button.spec.ts",
            "src/main/java/FooTest.java",
            "Foo.Tests/BarTests.cs",
            "lib/parser_test.exs",
            "test/helper.c",
        ] {
            assert!(is_test_path(path), "{path}");
        }
        for path in [
            "src/pricing.rs",
            "src/latest.rs",
            "LATEST.md",
            "src/contest.py",
            "attestation/mod.rs",
            "src/testing_utils.rs",
            "README.md",
            "",
        ] {
            assert!(!is_test_path(path), "{path}");
        }
        assert_eq!(
            test_files(["src/lib.rs", "tests/a.rs", "b_test.go"]),
            ["tests/a.rs", "b_test.go"]
        );
    }

    fn standing(check: CheckVerdict, test_files: usize) -> Standing {
        Standing {
            check,
            test_files,
            ended_well: true,
            changed: true,
        }
    }

    /// The demo's story: reckless (build broken) finishes first, sloppy (edited the test, so
    /// its check passes) second, good last: the review opens on good.
    #[test]
    fn the_best_passes_its_check_without_touching_tests() {
        use CheckVerdict::*;
        let demo = [
            standing(Failed, 0),
            standing(Passed, 1),
            standing(Passed, 0),
        ];
        assert_eq!(best(&demo), Some(2));
        // Without any check, the first model that leaves the tests alone.
        assert_eq!(best(&[standing(NotRun, 1), standing(NotRun, 0)]), Some(1));
        // A passing check that edited the tests still beats a failing one.
        assert_eq!(best(&[standing(Failed, 0), standing(Passed, 2)]), Some(1));
        // Then a normal end, then a change; ties go to the first listed.
        let mut errored = standing(Passed, 0);
        errored.ended_well = false;
        let mut empty = standing(Passed, 0);
        empty.changed = false;
        assert_eq!(best(&[errored, empty]), Some(1));
        assert_eq!(best(&[empty, standing(Passed, 0)]), Some(1));
        assert_eq!(best(&[standing(Passed, 0), standing(Passed, 0)]), Some(0));
        assert_eq!(best(&[]), None);
    }
}
