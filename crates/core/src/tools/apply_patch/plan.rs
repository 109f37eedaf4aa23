//! Turning a parsed patch into the final content of every path it touches, in memory.
//!
//! Operations run in patch order against a virtual copy of the files they touch (read once from
//! the view), so a later section sees an earlier one (add then update, update then move) while
//! nothing is written. Any refusal or unmatched hunk aborts the whole plan: this is how a patch
//! applies whole or not at all. The result is the net change per path plus what to report.

use std::io;

use super::document::{Document, NotText};
use super::locate::Strategy;
use super::parser::{FileOp, Patch};
use super::update::apply_hunks;
use crate::tools::whole_file::read_whole;
use crate::tools::{ToolError, suggest, text};
use crate::workspace::{EntryKind, FileView, ProjectPath};

/// The net change to one path: what it was before the patch and what it becomes.
#[derive(Debug, Clone)]
pub(crate) struct Change {
    /// The resolved path.
    pub path: ProjectPath,
    /// Content before the patch (`None`: did not exist). Used to restore on a failed write.
    pub original: Option<Vec<u8>>,
    /// Content after the patch (`None`: deleted).
    pub new: Option<Vec<u8>>,
}

/// One line of the result summary, per operation of the patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Report {
    /// `*** Add File`.
    Added {
        /// Path shown to the model.
        path: String,
        /// Lines of the new file.
        lines: usize,
        /// Line count of the file it replaced, if one existed.
        replaced: Option<usize>,
    },
    /// `*** Delete File`.
    Deleted {
        /// Path shown to the model.
        path: String,
        /// Lines the file had (`None` for a binary file).
        lines: Option<usize>,
    },
    /// `*** Update File`, possibly moved.
    Updated {
        /// Path shown to the model.
        path: String,
        /// `*** Move to` destination.
        dest: Option<String>,
        /// `+` lines over all hunks.
        added: usize,
        /// `-` lines over all hunks.
        removed: usize,
        /// Hunks that matched only loosely.
        fuzzy: Vec<(usize, Strategy)>,
    },
}

/// Everything the commit step needs, computed before any write.
#[derive(Debug)]
pub(crate) struct Plan {
    /// Paths whose content changes, in the order the patch first touched them.
    pub changes: Vec<Change>,
    /// One entry per operation, in patch order.
    pub reports: Vec<Report>,
}

struct Entry {
    path: ProjectPath,
    original: Option<Vec<u8>>,
    current: Option<Vec<u8>>,
}

enum Slot {
    Entry(usize),
    Dir,
    Other,
}

struct Files<'v> {
    view: &'v dyn FileView,
    entries: Vec<Entry>,
}

impl Files<'_> {
    /// The virtual entry for `path`, read from the view on first use.
    fn slot(&mut self, path: &ProjectPath) -> Result<Slot, ToolError> {
        if let Some(i) = self.entries.iter().position(|e| e.path == *path) {
            return Ok(Slot::Entry(i));
        }
        let original = match self.view.metadata(path) {
            Ok(meta) => match meta.kind {
                EntryKind::Dir => return Ok(Slot::Dir),
                EntryKind::Other => return Ok(Slot::Other),
                EntryKind::File => Some(read_whole(self.view, path, "apply_patch")?),
            },
            // A parent that is a file shows up as NotADirectory; `check_parents` explains it.
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
                ) =>
            {
                None
            }
            Err(e) => return Err(ToolError::io("reading", path.display(), e)),
        };
        self.entries.push(Entry {
            path: path.clone(),
            current: original.clone(),
            original,
        });
        Ok(Slot::Entry(self.entries.len() - 1))
    }

    fn missing(&self, path: &ProjectPath) -> String {
        suggest::did_you_mean(self.view.root(), path.rel())
    }
}

/// Resolves and checks every operation of `patch`, computing all new contents in memory.
pub(crate) fn build(view: &dyn FileView, patch: &Patch) -> Result<Plan, ToolError> {
    let mut files = Files {
        view,
        entries: Vec::new(),
    };
    let mut reports = Vec::with_capacity(patch.ops.len());
    for op in &patch.ops {
        let report = match op {
            FileOp::Add { path, lines, .. } => add(&mut files, path, lines)?,
            FileOp::Delete { path, .. } => delete(&mut files, path)?,
            FileOp::Update {
                path,
                move_to,
                hunks,
                ..
            } => update(&mut files, path, move_to.as_deref(), hunks)?,
        };
        reports.push(report);
    }
    check_parents(&files)?;
    let changes = files
        .entries
        .into_iter()
        .filter(|e| e.original != e.current)
        .map(|e| Change {
            path: e.path,
            original: e.original,
            new: e.current,
        })
        .collect();
    Ok(Plan { changes, reports })
}

fn resolve(view: &dyn FileView, raw: &str, section: &str) -> Result<ProjectPath, ToolError> {
    let path = view.resolve(raw)?;
    if path.rel().is_empty() {
        return Err(ToolError::failed(format!(
            "`{section} {raw}` names the project root; give a file path"
        )));
    }
    Ok(path)
}

fn add(files: &mut Files<'_>, raw: &str, lines: &[String]) -> Result<Report, ToolError> {
    let path = resolve(files.view, raw, "*** Add File:")?;
    let i = match files.slot(&path)? {
        Slot::Entry(i) => i,
        Slot::Dir => {
            return Err(ToolError::failed(format!(
                "cannot add {path}: it is a directory; give the path of a file inside it"
            )));
        }
        Slot::Other => return Err(not_regular(&path)),
    };
    let mut content = lines.join("\n");
    if !lines.is_empty() {
        content.push('\n');
    }
    let entry = &mut files.entries[i];
    let replaced = entry
        .current
        .as_ref()
        .map(|old| text::line_count(&String::from_utf8_lossy(old)));
    // Replacing a file the model did not write keeps its line endings and BOM, as write_file.
    let bytes = match &entry.current {
        Some(old)
            if entry.current == entry.original
                && !files.view.written_by_model(&path)
                && !text::looks_binary(old) =>
        {
            text::adapt_to_existing(&content, old)
        }
        _ => content.into_bytes(),
    };
    entry.current = Some(bytes);
    Ok(Report::Added {
        path: path.display().to_string(),
        lines: lines.len(),
        replaced,
    })
}

fn delete(files: &mut Files<'_>, raw: &str) -> Result<Report, ToolError> {
    let path = resolve(files.view, raw, "*** Delete File:")?;
    let i = match files.slot(&path)? {
        Slot::Entry(i) => i,
        Slot::Dir => {
            return Err(ToolError::failed(format!(
                "cannot delete {path}: it is a directory, and `*** Delete File` removes single \
                 files; delete the files inside it one by one"
            )));
        }
        Slot::Other => return Err(not_regular(&path)),
    };
    let Some(old) = files.entries[i].current.take() else {
        return Err(ToolError::failed(format!(
            "cannot delete {path}: no such file{}",
            files.missing(&path)
        )));
    };
    let lines =
        (!text::looks_binary(&old)).then(|| text::line_count(&String::from_utf8_lossy(&old)));
    Ok(Report::Deleted {
        path: path.display().to_string(),
        lines,
    })
}

fn update(
    files: &mut Files<'_>,
    raw: &str,
    move_to: Option<&str>,
    hunks: &[super::parser::Hunk],
) -> Result<Report, ToolError> {
    let path = resolve(files.view, raw, "*** Update File:")?;
    let i = match files.slot(&path)? {
        Slot::Entry(i) => i,
        Slot::Dir => {
            return Err(ToolError::failed(format!(
                "cannot update {path}: it is a directory; give the path of a file"
            )));
        }
        Slot::Other => return Err(not_regular(&path)),
    };
    let Some(old) = &files.entries[i].current else {
        return Err(ToolError::failed(format!(
            "cannot update {path}: no such file{}; to create it use `*** Add File: {raw}` with \
             every line prefixed by `+`",
            files.missing(&path)
        )));
    };
    let doc = Document::parse(old).map_err(|why| match why {
        NotText::Binary => ToolError::failed(format!(
            "cannot update {path}: it is a binary file; apply_patch edits text files only"
        )),
        NotText::Encoding(at) => ToolError::failed(format!(
            "cannot update {path}: it is not valid UTF-8 (byte {at}); apply_patch edits UTF-8 \
             text only, so change this file another way (e.g. with bash)"
        )),
    })?;
    let (new_bytes, fuzzy) = if hunks.is_empty() {
        (old.clone(), Vec::new())
    } else {
        let updated =
            apply_hunks(&doc, hunks, path.display()).map_err(|f| ToolError::failed(f.message))?;
        (updated.doc.to_bytes(), updated.fuzzy)
    };
    let dest = match move_to {
        Some(raw_dest) => {
            let dest = resolve(files.view, raw_dest, "*** Move to:")?;
            (dest != path).then_some(dest)
        }
        None => None,
    };
    match &dest {
        Some(dest) => {
            let j = match files.slot(dest)? {
                Slot::Entry(j) => j,
                Slot::Dir => {
                    return Err(ToolError::failed(format!(
                        "cannot move {path} to {dest}: {dest} is a directory; give the full new \
                         file path (e.g. {dest}/{})",
                        path.rel().rsplit('/').next().unwrap_or(path.rel())
                    )));
                }
                Slot::Other => return Err(not_regular(dest)),
            };
            files.entries[j].current = Some(new_bytes);
            files.entries[i].current = None;
        }
        None => files.entries[i].current = Some(new_bytes),
    }
    Ok(Report::Updated {
        path: path.display().to_string(),
        dest: dest.map(|d| d.display().to_string()),
        added: hunks.iter().map(|h| h.added()).sum(),
        removed: hunks.iter().map(|h| h.removed()).sum(),
        fuzzy,
    })
}

fn not_regular(path: &ProjectPath) -> ToolError {
    ToolError::failed(format!(
        "{path} is not a regular file (a socket, fifo or device); apply_patch edits files only"
    ))
}

/// Every file that will exist needs folders above it, not files: catch `a` and `a/b` both being
/// files before anything is written.
fn check_parents(files: &Files<'_>) -> Result<(), ToolError> {
    for entry in files.entries.iter().filter(|e| e.current.is_some()) {
        let rel = entry.path.rel();
        for (cut, _) in rel.match_indices('/') {
            let parent = &rel[..cut];
            let is_file = match files.entries.iter().find(|e| e.path.rel() == parent) {
                Some(e) => e.current.is_some(),
                None => {
                    let resolved = files.view.resolve(parent)?;
                    files
                        .view
                        .metadata(&resolved)
                        .is_ok_and(|m| m.kind != EntryKind::Dir)
                }
            };
            if is_file {
                return Err(ToolError::failed(format!(
                    "cannot write {rel}: {parent} is a file, not a folder; delete or move \
                     {parent} in the same patch, or choose another path"
                )));
            }
        }
    }
    Ok(())
}
