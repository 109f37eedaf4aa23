//! list_directory: the shape of a folder as an indented tree, a few levels deep.
//!
//! The walk is the one search uses (see `tools::walk`): ignore files honoured, `.git` skipped,
//! symlinks shown but not followed, the model's in-memory changes merged. Entries are gathered
//! on all cores (file sizes need a `stat` each), then sorted and printed by [`tree`]; the cap
//! keeps shallow entries first so a capped listing still shows the top of the project.

mod tree;

use std::sync::Arc;

use ignore::WalkState;
use serde::Deserialize;
use serde_json::json;

use super::registry::{Handler, Tool, run_blocking, typed};
use super::walk::{Located, Overlay, Walk, locate, not_found};
use super::{ToolClass, ToolContext, ToolError, ToolOutput, ToolSpec};
use tree::{Kind, Tree};

/// Depth used when the model gives none.
const DEFAULT_DEPTH: i64 = 2;
/// Depths outside this range are clamped into it (the spec's 1..5).
const MIN_DEPTH: i64 = 1;
const MAX_DEPTH: i64 = 5;

/// The list_directory tool, for the registry.
pub(crate) fn tool() -> Arc<dyn Tool> {
    typed(
        ToolSpec {
            name: "list_directory",
            description: "List a folder of the project as an indented tree: folders end with \
                `/`, symlinks with `@`, files show their size. Sorted by name \
                (case-insensitive); files ignored by .gitignore/.ignore and the .git folder are \
                left out. `depth` is how many levels to show (1-5, default 2). At most 500 \
                entries; list a subfolder to see more."
                .to_string(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "Folder to list, relative to the project root. Default \".\" (the root)."},
                    "depth": {"type": "integer", "description": "Levels to show, 1 to 5 (clamped). Default 2."}
                },
                "additionalProperties": false
            }),
            guidance: "list_directory: get the lay of the land (depth 1-5) before reading files; \
                prefer search_files or search_code to find something specific."
                .to_string(),
            class: ToolClass::ReadOnly,
        },
        ListDirectory,
    )
}

/// Arguments as the model sends them.
#[derive(Debug, Deserialize)]
pub(crate) struct Args {
    path: Option<String>,
    depth: Option<i64>,
}

struct ListDirectory;

impl Handler for ListDirectory {
    type Args = Args;

    async fn run(&self, args: Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        run_blocking("list_directory", args, ctx, list).await
    }
}

fn list(args: &Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
    let view = ctx.view.as_ref();
    let path = view.resolve(args.path.as_deref().unwrap_or("."))?;
    let depth = args
        .depth
        .unwrap_or(DEFAULT_DEPTH)
        .clamp(MIN_DEPTH, MAX_DEPTH) as usize;
    let overlay = Overlay::from_view(view);
    let on_disk = match locate(view, &overlay, &path)? {
        Located::Dir { on_disk } => on_disk,
        Located::File(_) => {
            return Err(ToolError::failed(format!(
                "{path} is a file, not a folder; use read_file to read it, or list its parent \
                 folder"
            )));
        }
        Located::Other => {
            return Err(ToolError::failed(format!(
                "{path} is not a folder (socket, pipe or device); list its parent folder instead"
            )));
        }
        Located::Missing => return Err(not_found(view, &path, "folder")),
    };
    let mut tree = Tree::default();
    if on_disk {
        collect_disk(&mut tree, &path, depth, &overlay, ctx)?;
    }
    let prefix = path.rel();
    for (rel, content) in overlay.writes_under(prefix) {
        let below = if prefix.is_empty() {
            rel
        } else {
            rel.get(prefix.len() + 1..).unwrap_or_default()
        };
        if !below.is_empty() {
            tree.insert_written(below, content.len() as u64, depth);
        }
    }
    let header = if prefix.is_empty() {
        "./".to_string()
    } else {
        format!("{prefix}/")
    };
    if tree.len() == 0 {
        return Ok(ToolOutput::ok(format!(
            "{header}\n  [empty folder (files ignored by .gitignore/.ignore are not shown)]"
        )));
    }
    let (mut text, more) = tree.render(&header, ctx.limits.list_max_entries);
    if more > 0 {
        text.push_str(&format!(
            "... {more} more entries (list a subfolder or use a smaller depth to see them)"
        ));
    }
    Ok(ToolOutput::ok(text.trim_end().to_string()))
}

/// Adds what the disk holds below `path`, as deep as the listing goes, minus what the model
/// deleted in memory.
fn collect_disk(
    tree: &mut Tree,
    path: &crate::workspace::ProjectPath,
    depth: usize,
    overlay: &Overlay,
    ctx: &ToolContext,
) -> Result<(), ToolError> {
    let walk = Walk::new(ctx.view.root(), path)?;
    let builder = walk.builder(Some(depth));
    let check_overlay = !overlay.is_empty();
    let found = walk.collect(
        &builder,
        || (),
        |_, entry, out| {
            if ctx.cancel.is_cancelled() {
                return WalkState::Quit;
            }
            if check_overlay
                && walk
                    .rel_to_root(entry.path())
                    .is_some_and(|rel| overlay.hides(&rel))
            {
                return WalkState::Skip;
            }
            let Some(rel) = walk.rel_to_start(entry.path()) else {
                return WalkState::Continue;
            };
            let kind = match entry.file_type() {
                Some(t) if t.is_dir() => Kind::Dir,
                Some(t) if t.is_symlink() => Kind::Symlink,
                Some(t) if t.is_file() => Kind::File(entry.metadata().map_or(0, |m| m.len())),
                _ => Kind::Other,
            };
            out.push((rel, kind));
            WalkState::Continue
        },
    );
    if ctx.cancel.is_cancelled() {
        return Err(ToolError::failed("list_directory was cancelled"));
    }
    for (rel, kind) in found {
        tree.insert(rel, kind);
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::super::walk::testing::{delete, overlay_ctx, write};
    use super::*;

    #[tokio::test]
    async fn merges_the_models_in_memory_changes() {
        let (_dir, ctx) = overlay_ctx(
            &[
                ("a.txt", "disk"),
                ("old.txt", "gone"),
                ("dir/x.txt", "gone too"),
                ("keep/k.txt", "k"),
            ],
            vec![
                write("a.txt", &"m".repeat(2048)),
                delete("old.txt"),
                delete("dir/x.txt"),
                write("new/deep/n.rs", "fn n() {}"),
                write("keep/extra.md", "12345"),
            ],
        );
        let out = tool().call(&json!({"depth": 3}), &ctx).await;
        assert!(!out.is_error, "{}", out.text);
        assert_eq!(
            out.text,
            "./\n  a.txt (2 KB)\n  dir/\n  keep/\n    extra.md (5 B)\n    k.txt (1 B)\n  new/\n    \
             deep/\n      n.rs (9 B)"
        );
        // A folder that exists only in memory can be listed; a deleted file is gone.
        let new = tool().call(&json!({"path": "new"}), &ctx).await;
        assert_eq!(new.text, "new/\n  deep/\n    n.rs (9 B)");
        let gone = tool().call(&json!({"path": "old.txt"}), &ctx).await;
        assert!(gone.is_error);
        assert!(
            gone.text.starts_with("folder not found: old.txt"),
            "{}",
            gone.text
        );
    }
}
