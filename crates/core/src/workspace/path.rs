//! Resolving a path a model gave us into one inside the workspace root, or refusing it.
//!
//! Models are untrusted input: `../`, absolute paths elsewhere, symlinks pointing out of the tree
//! and git's internals are all ways to reach files the user did not offer. Every tool resolves
//! through [`ProjectPath::resolve`], so the rule lives in exactly one place.

use std::fmt;
use std::path::{Component, Path, PathBuf};

/// Why a path was refused. The display text is what the model reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    /// The path leaves the workspace root or points into `.git/`.
    #[error("path escapes the project: {path} ({why}); use a path inside the project root")]
    Escape {
        /// The path as the model wrote it.
        path: String,
        /// What made it escape.
        why: &'static str,
    },
    /// Empty path or one containing a NUL byte.
    #[error("invalid path {path:?}: {why}")]
    Invalid {
        /// The path as the model wrote it.
        path: String,
        /// What is wrong with it.
        why: &'static str,
    },
}

/// A path inside the workspace: its `/`-separated form relative to the root (what models and
/// proposals see) and its absolute form on disk (what the filesystem sees).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ProjectPath {
    rel: String,
    abs: PathBuf,
}

impl ProjectPath {
    /// Resolves `raw` against `root`, refusing escapes, `.git/`, empty paths and NUL bytes.
    ///
    /// `root` should be canonical (see [`crate::workspace::DirectView::new`]); symlinks inside the
    /// tree are followed only as far as they stay inside it.
    pub fn resolve(root: &Path, raw: &str) -> Result<Self, PathError> {
        if raw.is_empty() {
            return Err(PathError::Invalid {
                path: raw.to_string(),
                why: "the path is empty",
            });
        }
        if raw.contains('\0') {
            return Err(PathError::Invalid {
                path: raw.to_string(),
                why: "the path contains a NUL byte",
            });
        }
        let escape = |why| PathError::Escape {
            path: raw.to_string(),
            why,
        };
        let given = Path::new(raw);
        let relative: PathBuf = if given.is_absolute() {
            match given.strip_prefix(root) {
                Ok(r) => r.to_path_buf(),
                Err(_) => return Err(escape("absolute path outside the project root")),
            }
        } else {
            given.to_path_buf()
        };
        let mut parts: Vec<String> = Vec::new();
        for comp in relative.components() {
            match comp {
                Component::CurDir => {}
                Component::ParentDir => {
                    if parts.pop().is_none() {
                        return Err(escape("`..` leaves the project root"));
                    }
                }
                Component::Normal(p) => parts.push(p.to_string_lossy().into_owned()),
                Component::RootDir | Component::Prefix(_) => {
                    return Err(escape("absolute path outside the project root"));
                }
            }
        }
        if parts.iter().any(|p| p == ".git") {
            return Err(escape("files under .git/ are off limits"));
        }
        let rel = parts.join("/");
        let abs = if rel.is_empty() {
            root.to_path_buf()
        } else {
            root.join(&rel)
        };
        check_symlinks(root, &parts).map_err(escape)?;
        Ok(Self { rel, abs })
    }

    /// The root itself, for tools whose path argument defaults to `.`.
    pub fn root(root: &Path) -> Self {
        Self {
            rel: String::new(),
            abs: root.to_path_buf(),
        }
    }

    /// `/`-separated path relative to the workspace root (empty for the root itself).
    pub fn rel(&self) -> &str {
        &self.rel
    }

    /// The relative path as shown to models: `.` for the root.
    pub fn display(&self) -> &str {
        if self.rel.is_empty() { "." } else { &self.rel }
    }

    /// Absolute path on disk.
    pub fn abs(&self) -> &Path {
        &self.abs
    }

    /// Joins a child name (from a directory listing) onto this path.
    pub fn child(&self, name: &str) -> Self {
        let rel = if self.rel.is_empty() {
            name.to_string()
        } else {
            format!("{}/{}", self.rel, name)
        };
        Self {
            abs: self.abs.join(name),
            rel,
        }
    }
}

impl fmt::Display for ProjectPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.display())
    }
}

/// Walks the existing prefix of the path; any symlink on the way must resolve inside `root`.
///
/// The root is canonicalised only when a symlink is met: most paths have none, and resolving
/// the root's every component on each tool call was a dozen system calls for nothing.
fn check_symlinks(root: &Path, parts: &[String]) -> Result<(), &'static str> {
    let mut canonical: Option<PathBuf> = None;
    let mut cur = root.to_path_buf();
    for part in parts {
        cur.push(part);
        match std::fs::symlink_metadata(&cur) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let canonical_root = canonical.get_or_insert_with(|| {
                    root.canonicalize().unwrap_or_else(|_| root.to_path_buf())
                });
                check_link(&cur, root, canonical_root)?;
            }
            Ok(_) => {}
            Err(_) => break, // the rest does not exist yet (a new file): nothing to follow
        }
    }
    Ok(())
}

/// A symlink at `cur` must resolve inside the project (or, dangling, point inside it), and
/// never into a git folder or versus's state: a cloned repository may ship `docs ->
/// .git/hooks`, and a proposal of `docs/pre-commit` would then be written as a hook the user's
/// next `git commit` runs.
fn check_link(cur: &Path, root: &Path, canonical_root: &Path) -> Result<(), &'static str> {
    let landing = match cur.canonicalize() {
        Ok(target) => target,
        // A dangling link: judged by its literal target.
        Err(_) => {
            let target = std::fs::read_link(cur).map_err(|_| "unreadable symlink")?;
            let base = cur.parent().unwrap_or(root);
            lexical(&base.join(target))
        }
    };
    let Ok(inside) = landing.strip_prefix(canonical_root) else {
        return Err("a symlink on the path points outside the project");
    };
    if inside
        .components()
        .any(|c| matches!(c.as_os_str().to_str(), Some(".git" | ".versus")))
    {
        return Err("a symlink on the path leads into .git/ or .versus/");
    }
    Ok(())
}

/// `path` with `.` and `..` folded away, without touching the disk.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for comp in path.components() {
        match comp {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> (tempfile::TempDir, PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let r = d.path().canonicalize().unwrap();
        (d, r)
    }

    #[test]
    fn relative_paths_resolve_inside() {
        let (_d, r) = root();
        let p = ProjectPath::resolve(&r, "src/./a/../main.rs").unwrap();
        assert_eq!(p.rel(), "src/main.rs");
        assert_eq!(p.abs(), r.join("src/main.rs"));
    }

    #[test]
    fn dot_is_root() {
        let (_d, r) = root();
        let p = ProjectPath::resolve(&r, ".").unwrap();
        assert_eq!(p.display(), ".");
        assert_eq!(p.abs(), r);
    }

    #[test]
    fn refuses_escapes() {
        let (_d, r) = root();
        for bad in [
            "..",
            "../x",
            "a/../../x",
            "/etc/passwd",
            ".git/config",
            "a/.git/HEAD",
        ] {
            let e = ProjectPath::resolve(&r, bad).unwrap_err();
            assert!(
                e.to_string().starts_with("path escapes the project"),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn absolute_inside_is_fine() {
        let (_d, r) = root();
        let abs = r.join("x.txt");
        let p = ProjectPath::resolve(&r, abs.to_str().unwrap()).unwrap();
        assert_eq!(p.rel(), "x.txt");
    }

    #[test]
    fn refuses_symlink_out() {
        let (_d, r) = root();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), r.join("link")).unwrap();
        let e = ProjectPath::resolve(&r, "link/secret").unwrap_err();
        assert!(e.to_string().contains("symlink"), "{e}");
    }

    #[test]
    fn refuses_a_symlink_into_git_or_versus_state() {
        let (_t, r) = root();
        std::fs::create_dir_all(r.join(".git/hooks")).unwrap();
        std::fs::create_dir_all(r.join("sub/.versus")).unwrap();
        std::os::unix::fs::symlink(".git/hooks", r.join("docs")).unwrap();
        std::os::unix::fs::symlink("sub/.versus", r.join("state")).unwrap();
        // Dangling, into a git folder that does not exist yet.
        std::os::unix::fs::symlink("vendor/.git/x", r.join("later")).unwrap();
        for raw in ["docs/pre-commit", "state/config.toml", "later/y"] {
            let e = ProjectPath::resolve(&r, raw).unwrap_err();
            assert!(e.to_string().contains(".git/ or .versus/"), "{raw}: {e}");
        }
    }

    #[test]
    fn allows_symlink_inside() {
        let (_d, r) = root();
        std::fs::create_dir(r.join("real")).unwrap();
        std::os::unix::fs::symlink(r.join("real"), r.join("alias")).unwrap();
        assert!(ProjectPath::resolve(&r, "alias/x").is_ok());
    }

    #[test]
    fn refuses_empty_and_nul() {
        let (_d, r) = root();
        assert!(matches!(
            ProjectPath::resolve(&r, ""),
            Err(PathError::Invalid { .. })
        ));
        assert!(matches!(
            ProjectPath::resolve(&r, "a\0b"),
            Err(PathError::Invalid { .. })
        ));
    }

    #[test]
    fn tilde_is_not_expanded() {
        let (_d, r) = root();
        let p = ProjectPath::resolve(&r, "~/notes").unwrap();
        assert_eq!(p.abs(), r.join("~/notes"));
    }
}
