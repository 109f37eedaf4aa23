//! edit_file: search-and-replace in one file, exact first, carefully fuzzy after.
//!
//! A wrong edit that succeeds is far worse than a failed edit, so the design is conservative:
//! [`matcher`] tries the exact text, then a fixed list of normalisations that each must find
//! exactly one place, and never guesses from partial similarity. Whatever matched is mapped back
//! to a byte range of the original file and the replacement is spliced in there, so the rest of
//! the file (its quotes, trailing spaces, CRLF endings, BOM) stays byte for byte. The result is a
//! unified diff of just the edited regions ([`diff`]); a miss shows the closest region of the
//! file ([`closest`]) so the model can copy the real text.
//!
//! All work is linear in the file size (memchr/memmem scans, line-by-line comparison), so large
//! files edit in milliseconds.

mod closest;
mod diff;
mod indent;
mod lines;
mod matcher;
mod normalize;
mod probe;

use std::sync::Arc;

use serde::Deserialize;
use serde_json::json;

use super::registry::{Handler, Tool, run_blocking, typed};
use super::suggest::did_you_mean;
use super::text::{self, LineEnding};
use super::whole_file::read_whole;
use super::{EditOutcome, ToolClass, ToolContext, ToolError, ToolOutput, ToolSpec};
use crate::workspace::{EntryKind, WriteOrigin};
use matcher::{Miss, Plan, Strategy};

/// Line numbers listed at most in an "ambiguous" error.
const MAX_LISTED_LINES: usize = 20;

/// The edit_file tool, for the registry.
pub(crate) fn tool() -> Arc<dyn Tool> {
    typed(
        ToolSpec {
            name: "edit_file",
            description: "Replace text in an existing file. old_string must match the file's \
                text exactly once (copy it from read_file, without the line-number prefixes, \
                and include enough surrounding lines to make it unique); it is replaced by \
                new_string. Set replace_all to replace every occurrence. If no exact match \
                exists, differences in line endings, trailing whitespace, typographic \
                punctuation and indentation are tolerated when they leave exactly one match. \
                Returns a unified diff of the change."
                .to_string(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "File path, relative to the project root."},
                    "old_string": {"type": "string", "description": "The exact text to replace, including enough context to occur only once."},
                    "new_string": {"type": "string", "description": "The text to put in its place (must differ from old_string)."},
                    "replace_all": {"type": "boolean", "description": "Replace every occurrence of old_string instead of requiring exactly one. Default false."}
                },
                "required": ["path", "old_string", "new_string"],
                "additionalProperties": false
            }),
            guidance: "edit_file: for targeted changes; read the file first and copy old_string \
                exactly, with enough context to be unique."
                .to_string(),
            class: ToolClass::Proposal,
        },
        EditFile,
    )
}

/// The arguments a model sends.
#[derive(Debug, Deserialize)]
pub(crate) struct Args {
    path: String,
    old_string: String,
    new_string: String,
    #[serde(default)]
    replace_all: bool,
}

struct EditFile;

impl Handler for EditFile {
    type Args = Args;

    async fn run(&self, args: Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let result = run_blocking("edit_file", args, ctx, edit).await;
        // Every refusal is a failed edit in the run's statistics.
        Ok(result.unwrap_or_else(|e| ToolOutput::from_error(&e).with_edit(EditOutcome::Failed)))
    }
}

fn edit(args: &Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
    let view = &ctx.view;
    let path = view.resolve(&args.path)?;
    if args.old_string.is_empty() {
        return Err(ToolError::failed(
            "old_string is empty; edit_file replaces existing text. To create a file or \
             replace its whole content, use write_file",
        ));
    }
    if args.old_string == args.new_string {
        return Err(ToolError::failed(
            "old_string and new_string are identical, so the edit would change nothing; put \
             the changed text in new_string",
        ));
    }
    match view.metadata(&path) {
        Ok(meta) if meta.kind == EntryKind::File => {}
        Ok(meta) if meta.kind == EntryKind::Dir => {
            return Err(ToolError::failed(format!(
                "{path} is a directory, not a file; give the path of a file inside it"
            )));
        }
        Ok(_) => {
            return Err(ToolError::failed(format!(
                "{path} is not a regular file (socket, pipe or device); it cannot be edited"
            )));
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(ToolError::failed(format!(
                "file not found: {path}; edit_file only changes existing files, use write_file \
                 to create a new one{}",
                did_you_mean(view.root(), path.rel())
            )));
        }
        Err(e) => return Err(ToolError::io("reading", path.display(), e)),
    }
    let bytes = read_whole(view.as_ref(), &path, "edit_file")?;
    if text::is_binary(path.rel(), &bytes) {
        return Err(ToolError::failed(format!(
            "{path} is a binary file ({} bytes); edit_file only edits text files",
            bytes.len()
        )));
    }
    let (had_bom, body) = text::split_bom(&bytes);
    let plan = matcher::plan(body, &args.old_string, &args.new_string, args.replace_all)
        .map_err(|miss| miss_error(&path.to_string(), body, args, miss))?;

    let changes: Vec<diff::Change> = plan
        .splices
        .iter()
        .map(|splice| diff::Change {
            old: splice.range.clone(),
            text: if !splice.text.contains('\n') {
                splice.text.clone()
            } else {
                match ending_for(body, splice.range.clone()) {
                    Some(e) => text::convert_endings(&splice.text, e),
                    None => splice.text.clone(),
                }
            },
        })
        .collect();
    if changes
        .iter()
        .all(|c| c.text.as_bytes() == &body[c.old.clone()])
    {
        return Err(ToolError::failed(format!(
            "the edit would not change {path}: the matched text already reads as new_string; \
             nothing was written"
        )));
    }
    let summary = summary(&path.to_string(), body, &plan);
    let diff = diff::unified(path.rel(), body, &changes);
    let bom_len = if had_bom { text::BOM.len() } else { 0 };
    let new_bytes = apply(bytes, bom_len, &changes);
    let origin = WriteOrigin::new("edit_file", ctx.call_id.clone());
    view.write(&path, &new_bytes, &origin)
        .map_err(|e| ToolError::io("writing", path.display(), e))?;
    let outcome = match plan.strategy {
        Strategy::Exact => EditOutcome::Exact,
        other => EditOutcome::Fuzzy(other.name()),
    };
    Ok(ToolOutput::ok(format!("{summary}\n{diff}")).with_edit(outcome))
}

/// The file with `changes` applied (`bom_len` bytes precede the body the ranges refer to). A
/// single change is made in place, which spares copying a large file into fresh memory.
fn apply(mut bytes: Vec<u8>, bom_len: usize, changes: &[diff::Change]) -> Vec<u8> {
    if let [only] = changes {
        let range = only.old.start + bom_len..only.old.end + bom_len;
        bytes.splice(range, only.text.bytes());
        return bytes;
    }
    let grows: usize = changes.iter().map(|c| c.text.len()).sum();
    let mut out = Vec::with_capacity(bytes.len() + grows);
    out.extend_from_slice(&bytes[..bom_len]);
    let mut pos = bom_len;
    for c in changes {
        out.extend_from_slice(&bytes[pos..c.old.start + bom_len]);
        out.extend_from_slice(c.text.as_bytes());
        pos = c.old.end + bom_len;
    }
    out.extend_from_slice(&bytes[pos..]);
    out
}

/// The line ending inserted text takes: the one the replaced text used consistently, else that
/// of the line the replaced text sits on (its neighbours, in a file with mixed endings), else
/// `None` when the file has no line breaks to follow.
fn ending_for(body: &[u8], range: std::ops::Range<usize>) -> Option<LineEnding> {
    let is_crlf = |nl: usize| nl > 0 && body[nl - 1] == b'\r';
    let (mut crlf, mut lf) = (0usize, 0usize);
    for nl in memchr::memchr_iter(b'\n', &body[range.clone()]) {
        if is_crlf(range.start + nl) {
            crlf += 1;
        } else {
            lf += 1;
        }
    }
    match (lf, crlf) {
        (0, 0) => {}
        (0, _) => return Some(LineEnding::CrLf),
        (_, 0) => return Some(LineEnding::Lf),
        _ => {}
    }
    let near = memchr::memchr(b'\n', &body[range.end..])
        .map(|i| range.end + i)
        .or_else(|| memchr::memrchr(b'\n', &body[..range.start]))?;
    Some(if is_crlf(near) {
        LineEnding::CrLf
    } else {
        LineEnding::Lf
    })
}

/// First line of the result: what was replaced where, and how it was found if not exactly.
fn summary(path: &str, body: &[u8], plan: &Plan) -> String {
    let starts: Vec<usize> = plan.splices.iter().map(|s| s.range.start).collect();
    let lines = lines::line_numbers(body, &starts);
    let mut text = match lines.as_slice() {
        [one] => format!("edited {path}: replaced 1 occurrence at line {one}"),
        many => format!(
            "edited {path}: replaced {} occurrences (lines {})",
            many.len(),
            list_lines(many)
        ),
    };
    if plan.strategy != Strategy::Exact {
        text.push_str(&format!(
            "\nnote: no exact match; matched after {}",
            plan.strategy.describe()
        ));
        if let Some(inner) = plan.inner {
            text.push_str(&format!(" and {}", inner.describe()));
        }
        text.push_str(". Check the diff.");
    }
    text
}

fn list_lines(lines: &[usize]) -> String {
    let mut listed: Vec<String> = lines
        .iter()
        .take(MAX_LISTED_LINES)
        .map(usize::to_string)
        .collect();
    if lines.len() > MAX_LISTED_LINES {
        listed.push(format!("and {} more", lines.len() - MAX_LISTED_LINES));
    }
    listed.join(", ")
}

/// The error text for a miss: the closest region, or the places that made it ambiguous.
fn miss_error(path: &str, body: &[u8], args: &Args, miss: Miss) -> ToolError {
    let old = args.old_string.as_str();
    match miss {
        Miss::NotFound if body.iter().all(u8::is_ascii_whitespace) => ToolError::failed(format!(
            "old_string was not found: {path} is empty (or only whitespace); use write_file to \
             give it content"
        )),
        Miss::NotFound => {
            let shown_old = matcher::strip_line_numbers(old);
            let detail = closest::describe(body, shown_old.as_deref().unwrap_or(old));
            ToolError::failed(format!(
                "old_string was not found in {path} (not exactly, nor after normalising line \
                 endings, trailing whitespace, punctuation or indentation); no edit was made.\n{detail}"
            ))
        }
        Miss::Ambiguous {
            strategy: Strategy::Exact,
            lines,
        } => ToolError::failed(format!(
            "old_string occurs {} times in {path} (at lines {}); no edit was made. Include more \
             surrounding lines in old_string so it occurs exactly once, or set replace_all to \
             true to replace every occurrence.",
            lines.len(),
            list_lines(&lines)
        )),
        Miss::Ambiguous { strategy, lines } => ToolError::failed(format!(
            "old_string has no exact match in {path}, and after {} it matches {} places (at \
             lines {}); no edit was made. Copy old_string exactly from the file, with enough \
             surrounding lines to match one place.{}",
            strategy.describe(),
            lines.len(),
            list_lines(&lines),
            if args.replace_all {
                " replace_all only applies to exact matches."
            } else {
                ""
            }
        )),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::path::Path;

    use serde_json::Value;

    use super::*;
    use crate::workspace::DirectView;

    async fn call(dir: &Path, args: Value) -> ToolOutput {
        let ctx = ToolContext::new(Arc::new(DirectView::new(dir).unwrap()));
        tool().call(&args, &ctx).await
    }

    fn args(path: &str, old: &str, new: &str) -> Value {
        json!({"path": path, "old_string": old, "new_string": new})
    }

    #[tokio::test]
    async fn outcomes_are_recorded_for_the_run_statistics() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("a.txt"), "one\ntwo\n").unwrap();
        std::fs::write(d.path().join("w.txt"), "x\r\ny\r\n").unwrap();

        let out = call(d.path(), args("a.txt", "one", "ONE")).await;
        assert!(!out.is_error, "{}", out.text);
        assert_eq!(out.edit, Some(EditOutcome::Exact));

        let out = call(d.path(), args("w.txt", "x\ny", "X\nY")).await;
        assert!(!out.is_error, "{}", out.text);
        assert_eq!(out.edit, Some(EditOutcome::Fuzzy("line_endings")));
        assert_eq!(
            std::fs::read(d.path().join("w.txt")).unwrap(),
            b"X\r\nY\r\n"
        );

        for failing in [
            args("a.txt", "absent", "x"),
            args("a.txt", "", "x"),
            args("a.txt", "two", "two"),
            args("missing.txt", "a", "b"),
            args("../escape.txt", "a", "b"),
        ] {
            let out = call(d.path(), failing.clone()).await;
            assert!(out.is_error, "{failing}: {}", out.text);
            assert_eq!(out.edit, Some(EditOutcome::Failed), "{failing}");
        }
    }

    #[tokio::test]
    async fn empty_file_and_fuzzy_replace_all_say_what_to_do() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("e.txt"), "").unwrap();
        let out = call(d.path(), args("e.txt", "a", "b")).await;
        assert!(out.text.contains("is empty"), "{}", out.text);
        assert!(out.text.contains("write_file"), "{}", out.text);

        std::fs::write(d.path().join("t.txt"), "a  \nb\na \nb\n").unwrap();
        let out = call(
            d.path(),
            json!({"path": "t.txt", "old_string": "a\nb", "new_string": "c", "replace_all": true}),
        )
        .await;
        assert!(out.is_error);
        assert!(
            out.text
                .contains("replace_all only applies to exact matches"),
            "{}",
            out.text
        );
    }

    #[test]
    fn inserted_lines_follow_the_surrounding_endings() {
        let body = b"a\r\nb\nc\r\n";
        // The replaced text's own breaks decide when they agree.
        assert_eq!(ending_for(body, 0..3), Some(LineEnding::CrLf));
        assert_eq!(ending_for(body, 3..5), Some(LineEnding::Lf));
        // Otherwise the line the text sits on.
        assert_eq!(ending_for(body, 0..1), Some(LineEnding::CrLf));
        assert_eq!(ending_for(body, 3..4), Some(LineEnding::Lf));
        // No line breaks at all: leave the text alone.
        assert_eq!(ending_for(b"abc", 0..1), None);
    }

    #[test]
    fn spec_is_a_proposal_tool_with_required_fields() {
        let t = tool();
        let spec = t.spec();
        assert_eq!(spec.name, "edit_file");
        assert_eq!(spec.class, ToolClass::Proposal);
        assert_eq!(
            spec.parameters["required"],
            json!(["path", "old_string", "new_string"])
        );
        assert!(!spec.guidance.contains('\n'));
    }
}
