//! Globs as models write them, compiled once for search_files and search_code's file_glob.
//!
//! `*` stays within one folder and `**` crosses folders (gitignore semantics). A pattern with no
//! `/` at all matches file names at any depth, as ripgrep's `-g` does, because that is what
//! `*.rs` almost always means; one with a `/` matches the whole path relative to the folder
//! searched. A leading `./` or `/` anchors to that folder and is dropped.

use globset::{GlobBuilder, GlobMatcher};

use crate::tools::ToolError;

/// Compiles a model's glob: relative to the base folder, any depth when it has no `/`.
pub(crate) fn compile_glob(pattern: &str) -> Result<GlobMatcher, ToolError> {
    let trimmed = pattern.trim();
    let anchored = trimmed.trim_start_matches("./").trim_start_matches('/');
    if anchored.is_empty() {
        return Err(ToolError::failed(format!(
            "invalid glob {pattern:?}: the pattern is empty; give a glob such as \"*.rs\" or \
             \"src/**/*.ts\""
        )));
    }
    let full = if anchored.contains('/') {
        anchored.to_string()
    } else {
        format!("**/{anchored}")
    };
    GlobBuilder::new(&full)
        .literal_separator(true)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| {
            ToolError::failed(format!(
                "invalid glob `{pattern}`: {}; fix the pattern (`*` within a folder, `**` \
                 across folders, `{{a,b}}` alternatives, `[abc]` classes)",
                e.kind()
            ))
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
