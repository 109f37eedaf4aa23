//! A change set as git-style unified diff text: what `git diff` would print for the same
//! change, so it can be read, pasted into a review, or fed to `git apply`.
//!
//! Created and deleted files get `new file mode` / `deleted file mode` and `/dev/null` on the
//! missing side; a change of the executable bit gets `old mode` / `new mode`; binary files get
//! git's one-line "Binary files ... differ" and a line with both sides' sizes and hashes; a
//! last line without a newline is followed by `\ No newline at end of file`.
//!
//! Names are quoted as git quotes them (`"a/x\n+++ b/evil"`), so a newline or an escape
//! sequence in a file name can never forge a header line. The lines' own bytes stay as they
//! are (the diff is data, and `git apply` needs them exact): whoever prints the diff to a
//! terminal escapes it ([`crate::sanitize`]).

use std::fmt::Write;

use super::hunks::LineKind;
use super::{ChangeKind, FileChange};
use crate::sanitize::quote_prefixed;

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
    let (a, b) = (quote_prefixed("a/", p), quote_prefixed("b/", p));
    let _ = writeln!(out, "diff --git {a} {b}");
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
            ("/dev/null".to_string(), b.into_owned())
        }
        ChangeKind::Deleted => {
            let _ = writeln!(out, "deleted file mode {old_mode}");
            (a.into_owned(), "/dev/null".to_string())
        }
        ChangeKind::Modified => {
            if f.symlink != f.base_symlink || f.mode_changed() {
                let _ = writeln!(out, "old mode {old_mode}");
                let _ = writeln!(out, "new mode {new_mode}");
            }
            (a.into_owned(), b.into_owned())
        }
    };
    if let Some((before, after)) = f.binary_sides() {
        let _ = writeln!(out, "Binary files {old_name} and {new_name} differ");
        let side = |s: Option<super::BlobInfo>| s.map_or("no file".to_string(), |s| s.to_string());
        let _ = writeln!(out, "binary: {} -> {}", side(before), side(after));
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
