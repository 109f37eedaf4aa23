//! "Did you mean": similar existing paths for a path that does not exist.
//!
//! Models often guess a path from memory (`src/utils.rs` for `src/util.rs`). Naming the closest
//! real files saves a listing round trip.

use std::path::Path;

/// Up to `max` existing files whose path is close to `wanted` (relative, `/`-separated).
pub fn similar_paths(root: &Path, wanted: &str, max: usize) -> Vec<String> {
    const MAX_SCANNED: usize = 50_000;
    let wanted_name = wanted.rsplit('/').next().unwrap_or(wanted).to_lowercase();
    let wanted_lower = wanted.to_lowercase();
    let mut scored: Vec<(f64, String)> = Vec::new();
    let walker = ignore::WalkBuilder::new(root)
        .hidden(false)
        .filter_entry(|e| e.file_name() != ".git")
        .build();
    for entry in walker.filter_map(Result::ok).take(MAX_SCANNED) {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let Ok(rel) = entry.path().strip_prefix(root) else {
            continue;
        };
        let rel = rel.to_string_lossy().replace('\\', "/");
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
        std::fs::create_dir(d.path().join("src")).unwrap();
        std::fs::write(d.path().join("src/util.rs"), "").unwrap();
        std::fs::write(d.path().join("zzz.md"), "").unwrap();
        let got = similar_paths(d.path(), "src/utils.rs", 3);
        assert_eq!(got, vec!["src/util.rs".to_string()]);
    }
}
