//! Symlink proposals: the lexical check that decides whether a link may be applied.
//!
//! A model's bash can make any symlink in its workspace; proposing it as a link (never the
//! bytes behind it) is safe, applying it is not always: a link pointing outside the project
//! would hand whoever follows it later (the user's editor, a build) a file the model chose
//! outside. So a link is applied only when its target, read as text from the link's own
//! folder, stays inside the project root. Nothing is followed: the check is lexical.
//!
//! Rules (each refusal says why):
//! - an empty or absolute target is refused;
//! - `.` parts are ignored; `..` parts are allowed only before the first named part (as in
//!   `../lib/x`), and must not climb above the project root from the link's folder;
//! - a `..` after a named part (`a/../x`) is refused even when it would stay inside, because
//!   the kernel resolves it through `a` (which may itself be a link) and not lexically.
//!
//! The link's own folder must be a real folder (no symlink on the way): apply creates links
//! through folder handles opened without following ([`crate::fsutil::symlink_beneath`]), so
//! the folder the target is read from is the folder it is checked from.
//!
//! Inside the project, two folders are not the project's content: a git folder (`.git` at any
//! depth, in any letter case, and the repository's own git folder wherever it sits inside the
//! project) and versus's state (`.versus`). A link into either would let whoever follows it
//! (an editor saving "a file", a build writing "an output", the user running "a script") write
//! the repository's hooks or config, or versus's journal. So the target is resolved against
//! the project, lexically, following every link it meets on the way (links already in the
//! project and links proposed in the same apply, up to [`MAX_HOPS`]), and refused when any
//! step of it lands in one of them ([`resolve_inside`]).

use std::collections::BTreeMap;
use std::path::Path;

/// Links followed while resolving one target before giving up (the kernel's own limit).
pub const MAX_HOPS: usize = 40;

/// Whether `part`, one name of a path, is a folder a link must never lead into: `.git` (in
/// any letter case: on a case-insensitive filesystem `.GIT` is the same folder) or `.versus`.
pub fn is_protected_name(part: &str) -> bool {
    part.eq_ignore_ascii_case(".git") || part == ".versus"
}

/// What [`resolve_inside`] reads of the project: whether a project-relative path is a link
/// and to what (the link's target text), for links on disk and links an apply proposes.
pub trait LinkLookup {
    /// The target of the link at `rel`, or `None` when `rel` is not a link.
    fn link_at(&self, rel: &str) -> Option<Vec<u8>>;
}

/// Links on disk under a project root, overlaid with the links an apply proposes (which win:
/// they are what the path will be).
#[derive(Debug)]
pub struct ProjectLinks<'a> {
    /// The project root.
    pub root: &'a Path,
    /// Project-relative path -> target of the links the apply proposes.
    pub proposed: &'a BTreeMap<String, Vec<u8>>,
}

impl LinkLookup for ProjectLinks<'_> {
    fn link_at(&self, rel: &str) -> Option<Vec<u8>> {
        if let Some(target) = self.proposed.get(rel) {
            return Some(target.clone());
        }
        let abs = self.root.join(rel);
        match std::fs::symlink_metadata(&abs) {
            Ok(m) if m.file_type().is_symlink() => std::fs::read_link(&abs)
                .ok()
                .map(|t| t.into_os_string().into_encoded_bytes()),
            _ => None,
        }
    }
}

/// Resolves the target of a link at `link_rel` inside the project, lexically, following the
/// links met on the way (from `links`), and refuses it when a step lands in a protected
/// folder (see the module doc): a `.git` or `.versus` part, or a path under one of
/// `protected` (project-relative folders, such as where the repository's git folder is).
/// `Ok` holds the project-relative path the link finally names.
pub fn resolve_inside(
    link_rel: &str,
    target: &[u8],
    links: &dyn LinkLookup,
    protected: &[String],
) -> Result<String, String> {
    let mut at: Vec<String> = link_rel
        .split('/')
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect();
    at.pop();
    let mut todo: Vec<String> = parts_of(target)?;
    todo.reverse();
    let mut hops = 0;
    while let Some(part) = todo.pop() {
        match part.as_str() {
            "" | "." => continue,
            ".." => {
                if at.pop().is_none() {
                    return Err("it leads out of the project (`..`)".to_string());
                }
                continue;
            }
            _ => {}
        }
        at.push(part);
        let here = at.join("/");
        if let Some(name) = at.iter().find(|p| is_protected_name(p)) {
            return Err(format!(
                "it leads into `{here}`, inside {}",
                if name == ".versus" {
                    "versus's own state folder (.versus)"
                } else {
                    "a git folder (.git)"
                }
            ));
        }
        if let Some(folder) = protected
            .iter()
            .find(|p| here == **p || here.starts_with(&format!("{p}/")))
        {
            return Err(format!(
                "it leads into `{here}`, inside the repository's git folder ({folder})"
            ));
        }
        if here == link_rel.trim_matches('/') {
            return Err("it leads back to itself".to_string());
        }
        if let Some(next) = links.link_at(&here) {
            hops += 1;
            if hops > MAX_HOPS {
                return Err(format!("it goes through more than {MAX_HOPS} links"));
            }
            if next.first() == Some(&b'/') {
                return Err(format!(
                    "it goes through the link `{here}`, which points out of the project"
                ));
            }
            at.pop();
            let mut more = parts_of(&next)?;
            more.reverse();
            todo.extend(more);
        }
    }
    Ok(at.join("/"))
}

/// The `/`-separated parts of a link target (which must be UTF-8 text).
fn parts_of(target: &[u8]) -> Result<Vec<String>, String> {
    let text = std::str::from_utf8(target)
        .map_err(|_| "its target is not valid UTF-8 text".to_string())?;
    Ok(text.split('/').map(str::to_string).collect())
}

/// Checks that a symlink at `link_rel` (a `/`-separated path relative to the project root)
/// with `target` stays inside the project. `Err` holds why not, for the user.
pub fn check_link_target(link_rel: &str, target: &[u8]) -> Result<(), String> {
    let text = std::str::from_utf8(target)
        .map_err(|_| "its target is not valid UTF-8 text".to_string())?;
    if text.is_empty() {
        return Err("its target is empty".to_string());
    }
    if text.starts_with('/') {
        return Err("its target is an absolute path".to_string());
    }
    if text.contains('\0') {
        return Err("its target holds a NUL byte".to_string());
    }
    let mut depth: Vec<&str> = link_rel.split('/').filter(|p| !p.is_empty()).collect();
    // The link's folder: its path without the last part.
    depth.pop();
    let mut named = false;
    for part in text.split('/') {
        match part {
            "" | "." => {}
            ".." if named => {
                return Err(
                    "its target goes back up (`..`) after a folder name; write it without `..` in the middle"
                        .to_string(),
                );
            }
            ".." => {
                if depth.pop().is_none() {
                    return Err("its target climbs out of the project (`..`)".to_string());
                }
            }
            part if is_protected_name(part) => {
                return Err(format!(
                    "its target goes into {}",
                    if part == ".versus" {
                        "versus's own state folder (.versus)"
                    } else {
                        "a git folder (.git)"
                    }
                ));
            }
            _ => named = true,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::check_link_target as check;

    #[test]
    fn inside_targets_are_allowed() {
        assert_eq!(check("srclink", b"src"), Ok(()));
        assert_eq!(check("a/b/link", b"../c/d.txt"), Ok(()));
        assert_eq!(check("a/b/link", b"../../top.txt"), Ok(()));
        assert_eq!(check("link", b"./x"), Ok(()));
        assert_eq!(check("a/link", b"./x/./y"), Ok(()));
        assert_eq!(check("a/b/link", b".."), Ok(()));
        assert_eq!(check("link", b"dir/"), Ok(()));
    }

    #[test]
    fn absolute_and_escaping_targets_are_refused() {
        assert!(check("rel.txt", b"/etc/passwd").is_err());
        assert!(check("rel.txt", b"../../../../etc/passwd").is_err());
        assert!(check("link", b"..").is_err());
        assert!(check("a/b/link", b"../../../x").is_err());
        assert!(check("a/link", b"./../../x").is_err());
        assert!(check("link", b"").is_err());
        assert!(check("link", b"\xff").is_err());
    }

    #[test]
    fn targets_into_git_or_versus_folders_are_refused() {
        for (link, target) in [
            ("hook", ".git/hooks/pre-commit"),
            ("cfg", "./.git/config"),
            ("a/cfg", "../.git"),
            ("a/b", "../.GIT/config"),
            ("sub/x", "../vendor/.git/hooks"),
            ("state", ".versus/sessions"),
            ("j", ".versus"),
        ] {
            let err = check(link, target.as_bytes()).unwrap_err();
            assert!(
                err.contains(".git") || err.contains(".versus"),
                "{link}: {err}"
            );
        }
        assert_eq!(check("ok", b".github/workflows"), Ok(()));
        assert_eq!(check("ok", b".gitignore"), Ok(()));
    }

    struct Links(Vec<(&'static str, &'static str)>);

    impl super::LinkLookup for Links {
        fn link_at(&self, rel: &str) -> Option<Vec<u8>> {
            self.0
                .iter()
                .find(|(p, _)| *p == rel)
                .map(|(_, t)| t.as_bytes().to_vec())
        }
    }

    #[test]
    fn links_through_other_links_are_followed_to_where_they_land() {
        use super::resolve_inside as resolve;
        let links = Links(vec![
            ("docs", "src"),
            ("g", ".git"),
            ("deep/g2", "../g"),
            ("loop1", "loop2"),
            ("loop2", "loop1"),
            ("abs", "/etc"),
            ("gitdata", "meta/repo"),
        ]);
        let protected = vec!["meta/repo".to_string()];
        assert_eq!(
            resolve("l", b"docs/main.rs", &links, &[]),
            Ok("src/main.rs".into())
        );
        for (link, target) in [
            ("x", "g/config"),
            ("x", "g"),
            ("a/x", "../deep/g2/hooks/pre-commit"),
            ("x", "gitdata/hooks"),
            ("x", "meta/repo"),
        ] {
            let err = resolve(link, target.as_bytes(), &links, &protected).unwrap_err();
            assert!(err.contains("git folder"), "{link} -> {target}: {err}");
        }
        assert!(
            resolve("x", b"loop1", &links, &[])
                .unwrap_err()
                .contains("links")
        );
        assert!(
            resolve("x", b"abs/passwd", &links, &[])
                .unwrap_err()
                .contains("out of")
        );
        assert!(
            resolve("self", b"self", &links, &[])
                .unwrap_err()
                .contains("itself")
        );
    }

    #[test]
    fn dot_dot_after_a_name_is_refused_even_inside() {
        assert!(check("link", b"a/../../x").is_err());
        assert!(check("link", b"a/../x").is_err());
        assert!(check("d/e/link", b"../x/../y").is_err());
    }
}
