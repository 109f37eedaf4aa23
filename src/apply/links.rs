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
    fn dot_dot_after_a_name_is_refused_even_inside() {
        assert!(check("link", b"a/../../x").is_err());
        assert!(check("link", b"a/../x").is_err());
        assert!(check("d/e/link", b"../x/../y").is_err());
    }
}
