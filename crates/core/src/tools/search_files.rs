//! search_files: find files by glob, the way a model asks "where are the *.proto files?".
//!
//! The glob is matched against each file's path relative to `base_path` (`*` stays within one
//! folder, `**` crosses folders). A pattern without any `/` matches file names at any depth, as
//! ripgrep's `-g` and gitignore do, because that is what `*.rs` almost always means. The walk is
//! the shared one (ignore files honoured, `.git` skipped, in-memory changes merged) and runs on
//! all cores; every match is collected so the first results by path are the same every time.

use std::sync::Arc;

use ignore::WalkState;
use serde::Deserialize;
use serde_json::json;

use super::registry::{Handler, Tool, run_blocking, typed};
use super::walk::{FileGlob, Located, Overlay, Walk, compile_glob, locate, not_found};
use super::{ToolClass, ToolContext, ToolError, ToolOutput, ToolSpec};

/// The search_files tool, for the registry.
pub(crate) fn tool() -> Arc<dyn Tool> {
    typed(
        ToolSpec {
            name: "search_files",
            description: "Find files by glob pattern. `*` matches within one folder, `**` \
                across folders, `{a,b}` either; a pattern without `/` matches file names at any \
                depth (`*.rs`), one with `/` matches the path relative to base_path \
                (`src/**/test_*.py`). Returns matching file paths relative to the project root, \
                sorted, at most 1000. Files ignored by .gitignore/.ignore are skipped."
                .to_string(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "pattern": {"type": "string", "description": "Glob, e.g. \"*.rs\", \"src/**/*.{ts,tsx}\", \"**/Cargo.toml\"."},
                    "base_path": {"type": "string", "description": "Folder to search below, relative to the project root. Default \".\"."}
                },
                "required": ["pattern"],
                "additionalProperties": false
            }),
            guidance: "search_files: find files by name or glob (`**/*.rs`); use search_code to \
                search inside files."
                .to_string(),
            class: ToolClass::ReadOnly,
        },
        SearchFiles,
    )
}

/// Arguments as the model sends them.
#[derive(Debug, Deserialize)]
pub(crate) struct Args {
    pattern: String,
    base_path: Option<String>,
}

struct SearchFiles;

impl Handler for SearchFiles {
    type Args = Args;

    async fn run(&self, args: Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        run_blocking("search_files", args, ctx, search).await
    }
}

fn search(args: &Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
    let view = ctx.view.as_ref();
    let matcher = compile_glob(&args.pattern)?;
    let base = view.resolve(args.base_path.as_deref().unwrap_or("."))?;
    let overlay = Overlay::from_view(view);
    let on_disk = match locate(view, &overlay, &base)? {
        Located::Dir { on_disk } => on_disk,
        Located::File(_) | Located::Other => {
            return Err(ToolError::failed(format!(
                "base_path {base} is a file, not a folder; give the folder to search below \
                 (or read the file with read_file)"
            )));
        }
        Located::Missing => return Err(not_found(view, &base, "folder")),
    };
    let mut found: Vec<String> = Vec::new();
    if on_disk {
        found = walk_disk(&matcher, &base, &overlay, ctx)?;
    }
    let prefix = base.rel();
    for (rel, _) in overlay.writes_under(prefix) {
        let below = if prefix.is_empty() {
            rel
        } else {
            rel.get(prefix.len() + 1..).unwrap_or_default()
        };
        if !below.is_empty() && matcher.is_match(below) {
            found.push(rel.to_string());
        }
    }
    found.sort_unstable();
    found.dedup();
    if found.is_empty() {
        return Ok(ToolOutput::ok(format!(
            "no files match `{}` under {base} (the pattern is matched against paths relative \
             to base_path; files ignored by .gitignore/.ignore are skipped)",
            args.pattern
        )));
    }
    let total = found.len();
    let max = ctx.limits.search_max_files;
    found.truncate(max);
    let mut text = found.join("\n");
    if total > max {
        text.push_str(&format!(
            "\n[truncated: showing {max} of {total} matching files; narrow the pattern or \
             base_path]"
        ));
    }
    Ok(ToolOutput::ok(text))
}

/// Matching files on disk, as paths relative to the root, minus those the overlay shadows.
fn walk_disk(
    matcher: &FileGlob,
    base: &crate::workspace::ProjectPath,
    overlay: &Overlay,
    ctx: &ToolContext,
) -> Result<Vec<String>, ToolError> {
    let walk = Walk::new(ctx.view.root(), base)?;
    let builder = walk.builder(None);
    let check_overlay = !overlay.is_empty();
    let found = walk.collect(
        &builder,
        || (),
        |_, entry, out| {
            if ctx.cancel.is_cancelled() {
                return WalkState::Quit;
            }
            if entry.file_type().is_none_or(|t| t.is_dir()) {
                return WalkState::Continue;
            }
            let Some(below) = walk.rel_to_start(entry.path()) else {
                return WalkState::Continue;
            };
            if !matcher.is_match(&below) {
                return WalkState::Continue;
            }
            if let Some(rel) = walk.rel_to_root(entry.path())
                && !(check_overlay && overlay.shadows(&rel))
            {
                out.push(rel);
            }
            WalkState::Continue
        },
    );
    if ctx.cancel.is_cancelled() {
        return Err(ToolError::failed("search_files was cancelled"));
    }
    Ok(found)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::super::walk::testing::{delete, overlay_ctx, write};
    use super::*;

    #[tokio::test]
    async fn merges_the_models_in_memory_changes() {
        let (_dir, ctx) = overlay_ctx(
            &[("src/a.rs", ""), ("src/old.rs", ""), ("src/b.rs", "")],
            vec![
                delete("src/old.rs"),
                write("src/b.rs", "changed"),
                write("src/new/c.rs", ""),
                write("docs/x.md", ""),
            ],
        );
        let out = tool().call(&json!({"pattern": "*.rs"}), &ctx).await;
        assert_eq!(out.text, "src/a.rs\nsrc/b.rs\nsrc/new/c.rs");
        let based = tool()
            .call(&json!({"pattern": "*.rs", "base_path": "src/new"}), &ctx)
            .await;
        assert_eq!(based.text, "src/new/c.rs");
        let memory_only = tool()
            .call(&json!({"pattern": "**", "base_path": "docs"}), &ctx)
            .await;
        assert_eq!(memory_only.text, "docs/x.md");
    }
}
