//! Globs as models write them, compiled once for search_files and search_code's file_glob.
//!
//! `*` stays within one folder and `**` crosses folders (gitignore semantics). A pattern with no
//! `/` at all matches file names at any depth, as ripgrep's `-g` does, because that is what
//! `*.rs` almost always means; one with a `/` matches the whole path relative to the folder
//! searched. A leading `./` or `/` anchors to that folder and is dropped.
//!
//! Why a [`GlobSet`] of one glob rather than a `GlobMatcher`: a matcher always runs a regex over
//! the whole path, while a set picks the cheapest strategy for the pattern (a hash lookup of the
//! extension for `*.rs`, of the name for `Cargo.toml`, a prefix or suffix test, and the regex
//! only when nothing simpler fits), and a name-only pattern is matched against the file name
//! alone, once. On a walk of tens of thousands of files that is the difference between keeping
//! up with ripgrep and falling behind it.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use crate::tools::ToolError;

/// A model's glob, compiled once per call.
#[derive(Debug, Clone)]
pub(crate) struct FileGlob {
    set: GlobSet,
    /// The pattern has no `/`: it matches a file's name, at any depth.
    name_only: bool,
}

impl FileGlob {
    /// Whether the file at `path` (relative to the folder searched) matches.
    pub(crate) fn is_match(&self, path: impl AsRef<Path>) -> bool {
        let path = path.as_ref();
        if self.name_only {
            return path.file_name().is_some_and(|name| self.name_matches(name));
        }
        self.set.is_match(path)
    }

    /// Whether a file matches by either of two paths (from the folder searched, and from the
    /// root); a name-only pattern looks at the name once, since both paths end in it.
    pub(crate) fn is_match_either(&self, below: &Path, from_root: &Path) -> bool {
        if self.name_only {
            return below
                .file_name()
                .is_some_and(|name| self.name_matches(name));
        }
        self.set.is_match(below) || self.set.is_match(from_root)
    }

    /// Whether the file at the absolute `path` matches, relative to the folder searched
    /// (`start`) or to the root. A name-only pattern never computes either relative path:
    /// on a walk that is the most frequent question asked, once per file.
    /// A search of the whole project (`start` is `root`) matches the one relative path once.
    pub(crate) fn is_match_at(&self, path: &Path, start: &Path, root: &Path) -> bool {
        if self.name_only {
            return path.file_name().is_some_and(|name| self.name_matches(name));
        }
        let below = strip_dir(path, start);
        if start.as_os_str().len() == root.as_os_str().len() {
            return self.set.is_match(below);
        }
        self.set.is_match(below) || self.set.is_match(strip_dir(path, root))
    }

    fn name_matches(&self, name: &OsStr) -> bool {
        self.set.is_match(Path::new(name))
    }
}

/// `path` below the folder `dir` it was walked from. The walker builds every path by joining
/// names onto the folder, so the folder's bytes are a prefix of the path's: comparing bytes
/// gives the same answer as `Path::strip_prefix` without splitting both into components.
fn strip_dir<'a>(path: &'a Path, dir: &Path) -> &'a Path {
    let (p, d) = (path.as_os_str().as_bytes(), dir.as_os_str().as_bytes());
    match p.strip_prefix(d) {
        Some([b'/', rest @ ..]) => Path::new(OsStr::from_bytes(rest)),
        Some(rest) if d.ends_with(b"/") => Path::new(OsStr::from_bytes(rest)),
        _ => path.strip_prefix(dir).unwrap_or(path),
    }
}

/// Compiles a model's glob: relative to the base folder, any depth when it has no `/`.
pub(crate) fn compile_glob(pattern: &str) -> Result<FileGlob, ToolError> {
    let trimmed = pattern.trim();
    let anchored = trimmed.trim_start_matches("./").trim_start_matches('/');
    if anchored.is_empty() {
        return Err(ToolError::failed(format!(
            "invalid glob {pattern:?}: the pattern is empty; give a glob such as \"*.rs\" or \
             \"src/**/*.ts\""
        )));
    }
    let invalid = |e: globset::Error| {
        ToolError::failed(format!(
            "invalid glob `{pattern}`: {}; fix the pattern (`*` within a folder, `**` \
             across folders, `{{a,b}}` alternatives, `[abc]` classes)",
            e.kind()
        ))
    };
    let glob = GlobBuilder::new(anchored)
        .literal_separator(true)
        .build()
        .map_err(invalid)?;
    let set = GlobSetBuilder::new().add(glob).build().map_err(invalid)?;
    Ok(FileGlob {
        set,
        name_only: !anchored.contains('/'),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_without_slash_matches_names_at_any_depth() {
        let Ok(m) = compile_glob("*.rs") else {
            panic!("valid glob refused")
        };
        assert!(m.is_match("main.rs"));
        assert!(m.is_match("src/tools/mod.rs"));
        assert!(!m.is_match("src/main.rsx"));
        assert!(!m.is_match("src.rs/main.txt"));
        let Ok(m) = compile_glob("Cargo.toml") else {
            panic!("valid glob refused")
        };
        assert!(m.is_match("Cargo.toml"));
        assert!(m.is_match("crates/core/Cargo.toml"));
        assert!(!m.is_match("crates/core/Cargo.toml.orig"));
        let Ok(m) = compile_glob("**") else {
            panic!("valid glob refused")
        };
        assert!(m.is_match("a/b/c.txt"));
    }

    #[test]
    fn either_path_matches_and_a_name_pattern_needs_only_the_name() {
        let Ok(m) = compile_glob("core/*.rs") else {
            panic!("valid glob refused")
        };
        // Searched from `crates/`: `core/lib.rs` below it matches, `crates/core/lib.rs` does not.
        assert!(m.is_match_either(Path::new("core/lib.rs"), Path::new("crates/core/lib.rs")));
        assert!(m.is_match_either(Path::new("lib.rs"), Path::new("core/lib.rs")));
        assert!(!m.is_match_either(Path::new("a/lib.rs"), Path::new("x/a/lib.rs")));
        let Ok(m) = compile_glob("*.toml") else {
            panic!("valid glob refused")
        };
        assert!(m.is_match_either(Path::new("a/Cargo.toml"), Path::new("x/a/Cargo.toml")));
        assert!(!m.is_match_either(Path::new("a.toml/x"), Path::new("a.toml/x")));
    }

    #[test]
    fn an_absolute_path_matches_relative_to_the_folder_searched_or_the_root() {
        let (root, start) = (Path::new("/p"), Path::new("/p/crates"));
        let Ok(m) = compile_glob("core/*.rs") else {
            panic!("valid glob refused")
        };
        assert!(m.is_match_at(Path::new("/p/crates/core/lib.rs"), start, root));
        assert!(!m.is_match_at(Path::new("/p/crates/tui/lib.rs"), start, root));
        let Ok(m) = compile_glob("crates/core/*.rs") else {
            panic!("valid glob refused")
        };
        assert!(m.is_match_at(Path::new("/p/crates/core/lib.rs"), start, root));
        let Ok(m) = compile_glob("*.rs") else {
            panic!("valid glob refused")
        };
        assert!(m.is_match_at(Path::new("/p/crates/core/lib.rs"), start, root));
        assert!(!m.is_match_at(Path::new("/p/crates/core/lib.rs.bak"), start, root));
        // Searching the whole project: one relative path.
        let Ok(m) = compile_glob("crates/**/*.rs") else {
            panic!("valid glob refused")
        };
        assert!(m.is_match_at(Path::new("/p/crates/core/lib.rs"), root, root));
        assert!(!m.is_match_at(Path::new("/p/src/lib.rs"), root, root));
    }

    #[test]
    fn a_folder_is_stripped_by_whole_names_only() {
        let p = Path::new("/p/crates/core/lib.rs");
        assert_eq!(
            strip_dir(p, Path::new("/p/crates")),
            Path::new("core/lib.rs")
        );
        assert_eq!(
            strip_dir(p, Path::new("/p/crates/")),
            Path::new("core/lib.rs")
        );
        assert_eq!(
            strip_dir(p, Path::new("/")),
            Path::new("p/crates/core/lib.rs")
        );
        // `/p/cr` is not a folder of the path: no cut in the middle of a name.
        assert_eq!(strip_dir(p, Path::new("/p/cr")), p);
    }

    #[test]
    fn a_pattern_with_slash_matches_the_whole_path() {
        let Ok(m) = compile_glob("./src/*.rs") else {
            panic!("valid glob refused")
        };
        assert!(m.is_match("src/main.rs"));
        assert!(!m.is_match("src/tools/mod.rs"));
        assert!(!m.is_match("other/src/main.rs"));
        let Ok(m) = compile_glob("src/**/*.{ts,tsx}") else {
            panic!("valid glob refused")
        };
        assert!(m.is_match("src/a.ts"));
        assert!(m.is_match("src/x/y/b.tsx"));
    }

    #[test]
    fn invalid_and_empty_globs_say_why() {
        let Err(e) = compile_glob("src/[abc") else {
            panic!("invalid glob accepted")
        };
        let text = e.to_string();
        assert!(
            text.starts_with("invalid glob `src/[abc`: unclosed character class"),
            "{text}"
        );
        assert!(compile_glob("  ").is_err());
    }
}
