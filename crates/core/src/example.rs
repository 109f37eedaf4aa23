//! The example project shipped in the binary: a tiny Rust crate with a real bug and a failing
//! test, so a new user can watch the demo models work on something without any API key.
//!
//! The files live in `recipes/demo/project/` in the repository and are compiled in, so
//! `versus demo` works from an installed binary too.

use std::io;
use std::path::Path;

/// (relative path, content) of every file of the example project.
pub const FILES: &[(&str, &str)] = &[
    (
        "Cargo.toml",
        include_str!("../../../recipes/demo/project/Cargo.toml"),
    ),
    (
        "Cargo.lock",
        include_str!("../../../recipes/demo/project/Cargo.lock"),
    ),
    (
        ".gitignore",
        include_str!("../../../recipes/demo/project/.gitignore"),
    ),
    (
        "README.md",
        include_str!("../../../recipes/demo/project/README.md"),
    ),
    (
        "src/lib.rs",
        include_str!("../../../recipes/demo/project/src/lib.rs"),
    ),
    (
        "src/pricing.rs",
        include_str!("../../../recipes/demo/project/src/pricing.rs"),
    ),
    (
        "src/main.rs",
        include_str!("../../../recipes/demo/project/src/main.rs"),
    ),
    (
        "tests/pricing.rs",
        include_str!("../../../recipes/demo/project/tests/pricing.rs"),
    ),
];

/// The example project's own versus settings (`recipes/demo/config.toml`): a review check
/// (`[check] command = "cargo test --quiet --all-targets"`), so the demo's review shows by itself which model
/// broke the build and which one passes, without the user typing `/config check`.
pub const SETTINGS: &str = include_str!("../../../recipes/demo/config.toml");

/// Where [`write_settings`] puts [`SETTINGS`] (a project's own config file).
pub const SETTINGS_FILE: &str = ".versus/config.toml";

/// The prompt the demo uses.
pub const PROMPT: &str = "The test ten_items_get_the_bulk_discount fails. Find the bug and fix it.";

/// The demo models: one fixes the bug well, one edits the test instead, one breaks the build.
pub const MODELS: &[&str] = &["demo/good", "demo/sloppy", "demo/reckless"];

/// Writes the project into `dir` (which must be empty or missing) and commits it in a new git
/// repository, so the default worktree isolation applies and `git diff` shows what was kept.
pub fn write_project(dir: &Path) -> io::Result<()> {
    if dir.exists() && std::fs::read_dir(dir)?.next().is_some() {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!(
                "{} is not empty; choose a new folder for the example project",
                dir.display()
            ),
        ));
    }
    for (rel, content) in FILES {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        crate::fsutil::atomic_write(&path, content.as_bytes())?;
    }
    commit_all(dir).map_err(|e| io::Error::other(format!("git: {}", e.message())))
}

/// Writes the example project's own settings ([`SETTINGS`]) to `dir/.versus/config.toml`. Kept
/// apart from [`write_project`], which other tools use as a plain project: a project's config
/// counts only once trusted, so the front ends that write it (the demos) also trust the folder
/// they just wrote. Not committed: `.versus/` is versus's own folder.
pub fn write_settings(dir: &Path) -> io::Result<()> {
    let path = dir.join(SETTINGS_FILE);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    crate::fsutil::atomic_write(&path, SETTINGS.as_bytes())
}

fn commit_all(dir: &Path) -> Result<(), git2::Error> {
    let repo = git2::Repository::init(dir)?;
    let mut index = repo.index()?;
    index.add_all(["*"].iter(), git2::IndexAddOption::DEFAULT, None)?;
    index.write()?;
    let tree = repo.find_tree(index.write_tree()?)?;
    let signature = repo
        .signature()
        .or_else(|_| git2::Signature::now("versus demo", "demo@versus.invalid"))?;
    repo.commit(
        Some("HEAD"),
        &signature,
        &signature,
        "Example project for the versus demo",
        &tree,
        &[],
    )?;
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn writes_a_committed_project_and_refuses_a_full_folder() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("demo");
        write_project(&target).unwrap();
        assert!(target.join("src/pricing.rs").is_file());
        let repo = git2::Repository::open(&target).unwrap();
        let statuses = repo.statuses(None).unwrap();
        assert_eq!(statuses.len(), 0, "everything is committed");
        assert!(write_project(&target).is_err());
        // The settings go beside it, uncommitted, and are a valid project config.
        write_settings(&target).unwrap();
        let layer = crate::fsutil::read_capped_string(&target.join(SETTINGS_FILE), 4096).unwrap();
        assert!(layer.contains("[check]"), "{layer}");
        assert!(target.join("tests/pricing.rs").is_file());
    }
}
