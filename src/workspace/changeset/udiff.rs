//! A change set as git-style unified diff text: what `git diff` would print for the same
//! change, so it can be read, pasted into a review, or fed to `git apply`.
//!
//! Created and deleted files get `new file mode` / `deleted file mode` and `/dev/null` on the
//! missing side; binary files get git's one-line "Binary files ... differ"; a last line without
//! a newline is followed by `\ No newline at end of file`. Mode-only changes are not shown,
//! because they are not proposals (see the module doc of `changeset`).

use std::fmt::Write;

use super::hunks::LineKind;
use super::{ChangeKind, FileChange};

/// git's mode for a regular file: executable or not.
fn git_mode(mode: Option<u32>) -> &'static str {
    if mode.is_some_and(|m| m & 0o111 != 0) {
        "100755"
    } else {
        "100644"
    }
}

/// git's mode for a symlink.
const SYMLINK_MODE: &str = "120000";

/// The unified diff of one file. A symlink is shown as git shows one: mode `120000` and its
/// target as the one line (no newline); a file replaced by a symlink (or the reverse) as a
/// mode change (`old mode 100644` / `new mode 120000`) followed by the content diff.
pub(super) fn file_diff(f: &FileChange) -> String {
    let mut out = String::new();
    let p = &f.path;
    let _ = writeln!(out, "diff --git a/{p} b/{p}");
    let new_mode = if f.symlink {
        SYMLINK_MODE
    } else {
        git_mode(f.mode)
    };
    let old_mode = if f.base_symlink {
        SYMLINK_MODE
    } else {
        git_mode(f.base_mode)
    };
    let (old_name, new_name) = match f.kind {
        ChangeKind::Created => {
            let _ = writeln!(out, "new file mode {new_mode}");
            ("/dev/null".to_string(), format!("b/{p}"))
        }
        ChangeKind::Deleted => {
            let _ = writeln!(out, "deleted file mode {old_mode}");
            (format!("a/{p}"), "/dev/null".to_string())
        }
        ChangeKind::Modified => {
            if f.symlink != f.base_symlink {
                let _ = writeln!(out, "old mode {old_mode}");
                let _ = writeln!(out, "new mode {new_mode}");
            }
            (format!("a/{p}"), format!("b/{p}"))
        }
    };
    if f.binary {
        let _ = writeln!(out, "Binary files {old_name} and {new_name} differ");
        return out;
    }
    if f.hunks.is_empty() {
        return out;
    }
    let _ = writeln!(out, "--- {old_name}");
    let _ = writeln!(out, "+++ {new_name}");
    for h in &f.hunks {
        let _ = writeln!(out, "@@ -{} +{} @@", h.old.header(), h.new.header());
        for l in &h.lines {
            let sign = match l.kind {
                LineKind::Context => ' ',
                LineKind::Added => '+',
                LineKind::Removed => '-',
            };
            let _ = writeln!(out, "{sign}{}", l.text);
            if !l.newline {
                out.push_str("\\ No newline at end of file\n");
            }
        }
    }
    out
}
