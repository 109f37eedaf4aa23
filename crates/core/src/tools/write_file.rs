//! write_file: create or replace a whole file in the model's view.
//!
//! When a model replaces a file it did not write itself, the new text takes on the file's own
//! line endings and BOM: models almost always send LF, and turning a CRLF file into LF would
//! make every line of the diff change.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::json;

use super::registry::{Handler, Tool, run_blocking, typed};
use super::text;
use super::whole_file::read_whole;
use super::{ToolClass, ToolContext, ToolError, ToolOutput, ToolSpec};
use crate::workspace::{EntryKind, WriteOrigin};

pub(crate) fn tool() -> Arc<dyn Tool> {
    typed(
        ToolSpec {
            name: "write_file",
            description: "Create a file or replace its whole content. Parent folders are \
                created. To change part of an existing file, use the file-editing tool you were \
                given (edit_file or apply_patch) instead."
                .to_string(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "File path, relative to the project root."},
                    "content": {"type": "string", "description": "The complete new content of the file."}
                },
                "required": ["path", "content"],
                "additionalProperties": false
            }),
            guidance:
                "write_file: for new files or full rewrites; make targeted changes with your editing tool."
                    .to_string(),
            class: ToolClass::Proposal,
        },
        WriteFile,
    )
}

#[derive(Debug, Deserialize)]
pub(crate) struct Args {
    path: String,
    content: String,
}

struct WriteFile;

impl Handler for WriteFile {
    type Args = Args;

    async fn run(&self, args: Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        // On the blocking pool, under the tools' time limit: reading and writing a file of the
        // model's making is blocking I/O, which used to run on (and stall) a runtime thread.
        run_blocking("write_file", args, ctx, write).await
    }
}

fn write(args: &Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
    {
        let view = &ctx.view;
        let path = view.resolve(&args.path)?;
        if path.rel().is_empty() {
            return Err(ToolError::failed(
                "write_file needs a file path, not the project root",
            ));
        }
        let existing = match view.metadata(&path) {
            Ok(meta) if meta.kind == EntryKind::Dir => {
                return Err(ToolError::failed(format!(
                    "{path} is a directory; give a file path inside it"
                )));
            }
            Ok(_) => Some(read_whole(view.as_ref(), &path, "write_file")?),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(ToolError::io("reading", path.display(), e)),
        };
        let bytes = match &existing {
            Some(old) if !view.written_by_model(&path) && !text::looks_binary(old) => {
                text::adapt_to_existing(&args.content, old)
            }
            _ => args.content.clone().into_bytes(),
        };
        let origin = WriteOrigin::new("write_file", ctx.call_id.clone());
        view.write(&path, &bytes, &origin)
            .map_err(|e| ToolError::io("writing", path.display(), e))?;
        let lines = text::line_count(&args.content);
        let summary = match existing {
            None => format!("wrote {path} ({lines} lines, new file)"),
            Some(old) => {
                let was = text::line_count(&String::from_utf8_lossy(&old));
                format!("wrote {path} ({lines} lines, was {was} lines)")
            }
        };
        Ok(ToolOutput::ok(summary))
    }
}
