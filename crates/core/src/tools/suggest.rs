//! "Did you mean": similar existing paths for a path that does not exist.
//!
//! Models often guess a path from memory (`src/utils.rs` for `src/util.rs`). Naming the closest
//! real files saves a listing round trip.

use std::path::Path;

use super::walk::project_files;

/// Up to `max` existing files whose path is close to `wanted` (relative, `/`-separated), in the
/// project at the canonical `root`.
pub fn similar_paths(root: &Path, wanted: &str, max: usize) -> Vec<String> {
    const MAX_SCANNED: usize = 50_000;
    let wanted_name = wanted.rsplit('/').next().unwrap_or(wanted).to_lowercase();
    let wanted_lower = wanted.to_lowercase();
    let mut scored: Vec<(f64, String)> = Vec::new();
    // The project as the other tools see it (the same ignore rules, none from above the root),
    // so a suggestion never names a file list_directory and search_files leave out.
    for rel in project_files(root, MAX_SCANNED, |_| true) {
        let name = rel.rsplit('/').next().unwrap_or(&rel).to_lowercase();
        let by_name = strsim::normalized_levenshtein(&wanted_name, &name);
        let by_path = strsim::normalized_levenshtein(&wanted_lower, &rel.to_lowercase());
        let score = by_name.max(by_path);
        if score >= 0.5 {
            scored.push((score, rel));
        }
    }
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    scored.into_iter().take(max).map(|(_, p)| p).collect()
}

/// The "did you mean" sentence for an error text, or an empty string.
pub fn did_you_mean(root: &Path, wanted: &str) -> String {
    let found = similar_paths(root, wanted, 3);
    if found.is_empty() {
        String::new()
    } else {
        format!("; did you mean: {}?", found.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_near_names() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("src")).unwrap();
        std::fs::write(root.join("src/util.rs"), "").unwrap();
        std::fs::write(root.join("zzz.md"), "").unwrap();
        let got = similar_paths(&root, "src/utils.rs", 3);
        assert_eq!(got, vec!["src/util.rs".to_string()]);
    }

    #[test]
    fn ignored_files_are_not_suggested_as_in_the_other_tools() {
        // Outside a git repository too, and with ignore files above the root not applying.
        let d = tempfile::tempdir().unwrap();
        let top = d.path().canonicalize().unwrap();
        std::fs::write(top.join(".gitignore"), "*.rs\n").unwrap();
        let root = top.join("project");
        std::fs::create_dir_all(root.join("build")).unwrap();
        std::fs::write(root.join(".gitignore"), "build/\n").unwrap();
        std::fs::write(root.join("build/util.rs"), "").unwrap();
        std::fs::write(root.join("util.rs"), "").unwrap();
        assert_eq!(similar_paths(&root, "build/utils.rs", 3), ["util.rs"]);
    }
}
