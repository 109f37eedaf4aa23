//! apply_patch: the `*** Begin Patch` envelope codex-trained models edit with.
//!
//! Three steps, one module each, so that a patch applies whole or not at all:
//! `parser` reads the text (no file access), `plan` resolves every path and computes every new
//! content in memory (reading each file once, through the view), and only when all of that
//! succeeded does `commit` write through the view, restoring the originals if the disk fails
//! half-way. `locate` finds hunks by content (exact, then looser), `update` splices them into a
//! `document` that remembers each line's ending, so CRLF files and BOMs survive a patch.

mod commit;
mod document;
mod locate;
mod parser;
mod plan;
mod update;

use std::sync::Arc;

use serde::Deserialize;
use serde_json::json;

use super::registry::{Handler, Tool, run_blocking, typed};
use super::{EditOutcome, ToolClass, ToolContext, ToolError, ToolOutput, ToolSpec};
use crate::workspace::WriteOrigin;
use locate::Strategy;
use plan::Report;

const DESCRIPTION: &str = "\
Apply a patch that adds, deletes, updates or renames one or more files. The patch applies whole \
or not at all: if any part does not fit, nothing is changed and the error says which file and hunk.

The `patch` argument is text in this envelope:

*** Begin Patch
*** Add File: path/to/new.py
+every line of a new file starts with +
*** Delete File: path/to/obsolete.py
*** Update File: path/to/app.py
*** Move to: path/to/main.py
@@ def greet(name):
     unchanged context line
-    line to remove
+    line to add
*** End Patch

`*** Move to:` (optional, right after `*** Update File:`) also renames the file. In an Update, \
each hunk starts with `@@`, optionally followed by a line copied from the file \
above the change (such as the function or class header) to say where it is. Then come lines \
starting with ` ` (context, about 3 lines before and after each change), `-` (remove) or `+` \
(add). Hunks are found by their context and removed lines, not by line numbers: copy those lines \
exactly from the file, include enough context to be unique, and list hunks in file order. Put \
`*** End of File` after a hunk that must match at the end of the file. Paths are relative to the \
project root.";

/// The apply_patch tool, for the registry.
pub(crate) fn tool() -> Arc<dyn Tool> {
    typed(
        ToolSpec {
            name: "apply_patch",
            description: DESCRIPTION.to_string(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "patch": {
                        "type": "string",
                        "description": "The whole patch, from `*** Begin Patch` to `*** End Patch`."
                    }
                },
                "required": ["patch"],
                "additionalProperties": false
            }),
            guidance: "apply_patch: edit, add, delete or rename files with one `*** Begin Patch` \
                envelope; context and `-` lines must match the file; it applies whole or not at all."
                .to_string(),
            class: ToolClass::Proposal,
        },
        ApplyPatch,
    )
}

/// Arguments of apply_patch.
#[derive(Debug, Deserialize)]
pub(crate) struct Args {
    patch: String,
}

struct ApplyPatch;

impl Handler for ApplyPatch {
    type Args = Args;

    async fn run(&self, args: Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        // On the blocking pool, under the tools' time limit (it reads and writes files of the
        // model's making). Every failure is an edit that did not happen: count it as such.
        Ok(
            match run_blocking("apply_patch", args, ctx, apply_args).await {
                Ok(output) => output,
                Err(err) => ToolOutput::from_error(&err).with_edit(EditOutcome::Failed),
            },
        )
    }
}

fn apply_args(args: &Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
    apply(&args.patch, ctx).map_err(ToolError::failed)
}

/// Parses, plans and commits; the error text is what the model reads.
fn apply(text: &str, ctx: &ToolContext) -> Result<ToolOutput, String> {
    const UNCHANGED: &str = "Nothing was changed (a patch applies whole or not at all); fix it and send the whole \
         patch again.";
    let patch = parser::parse(text).map_err(|e| format!("{e}\n{UNCHANGED}"))?;
    let view = ctx.view.as_ref();
    let plan = plan::build(view, &patch).map_err(|e| format!("{e}\n{UNCHANGED}"))?;
    if ctx.cancel.is_cancelled() {
        return Err("apply_patch was cancelled before writing; nothing was changed.".to_string());
    }
    let origin = WriteOrigin::new("apply_patch", ctx.call_id.clone());
    commit::commit(view, &plan.changes, &origin).map_err(|e| e.message)?;
    Ok(ToolOutput::ok(summary(&plan.reports)).with_edit(outcome(&plan.reports)))
}

/// `A path (+n)`, `M path (+a -r)`, `M old -> new (+a -r)`, `D path (-n)`, one per operation.
fn summary(reports: &[Report]) -> String {
    let mut lines = vec![format!(
        "applied patch ({} {})",
        reports.len(),
        if reports.len() == 1 { "file" } else { "files" }
    )];
    for report in reports {
        lines.push(match report {
            Report::Added {
                path,
                lines,
                replaced: None,
            } => format!("A {path} (+{lines})"),
            Report::Added {
                path,
                lines,
                replaced: Some(was),
            } => format!("A {path} (+{lines}; replaced the existing file of {was} lines)"),
            Report::Deleted {
                path,
                lines: Some(n),
            } => format!("D {path} (-{n})"),
            Report::Deleted { path, lines: None } => format!("D {path} (binary)"),
            Report::Updated {
                path,
                dest,
                added,
                removed,
                fuzzy,
            } => {
                let name = match dest {
                    Some(dest) => format!("{path} -> {dest}"),
                    None => path.clone(),
                };
                let mut line = format!("M {name} (+{added} -{removed}");
                for (hunk, strategy) in fuzzy {
                    line.push_str(&format!("; hunk {hunk} matched {}", strategy.describe()));
                }
                line.push(')');
                line
            }
        });
    }
    lines.join("\n")
}

/// Exact when every hunk matched byte for byte, else the loosest strategy that was needed.
fn outcome(reports: &[Report]) -> EditOutcome {
    let loosest = reports
        .iter()
        .filter_map(|r| match r {
            Report::Updated { fuzzy, .. } => fuzzy.iter().map(|(_, s)| *s).max(),
            _ => None,
        })
        .max();
    match loosest {
        None | Some(Strategy::Exact) => EditOutcome::Exact,
        Some(s) => EditOutcome::Fuzzy(s.tag()),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::workspace::DirectView;

    fn ctx(dir: &std::path::Path) -> ToolContext {
        ToolContext::new(Arc::new(DirectView::new(dir).unwrap()))
    }

    async fn run(dir: &std::path::Path, patch: &str) -> ToolOutput {
        tool().call(&json!({ "patch": patch }), &ctx(dir)).await
    }

    #[tokio::test]
    async fn summary_lists_every_operation_with_counts() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("m.txt"), "a\nb\nc\n").unwrap();
        std::fs::write(d.path().join("gone.txt"), "1\n2\n").unwrap();
        std::fs::write(d.path().join("old.txt"), "x\n").unwrap();
        let out = run(
            d.path(),
            "*** Begin Patch\n*** Add File: n.txt\n+1\n+2\n*** Update File: m.txt\n@@\n a\n-b\n\
             +B\n+B2\n*** Delete File: gone.txt\n*** Update File: old.txt\n*** Move to: new.txt\n\
             @@\n-x\n+y\n*** End Patch",
        )
        .await;
        assert!(!out.is_error, "{}", out.text);
        assert_eq!(
            out.text,
            "applied patch (4 files)\nA n.txt (+2)\nM m.txt (+2 -1)\nD gone.txt (-2)\n\
             M old.txt -> new.txt (+1 -1)"
        );
        assert_eq!(out.edit, Some(EditOutcome::Exact));
    }

    #[tokio::test]
    async fn fuzzy_matches_are_named_and_counted() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("f.txt"), "    keep  \nold\n").unwrap();
        let out = run(
            d.path(),
            "*** Begin Patch\n*** Update File: f.txt\n@@\n keep\n-old\n+new\n*** End Patch",
        )
        .await;
        assert_eq!(
            out.text,
            "applied patch (1 file)\nM f.txt (+1 -1; hunk 1 matched ignoring indentation and \
             trailing whitespace)"
        );
        assert_eq!(out.edit, Some(EditOutcome::Fuzzy("trimmed")));
        assert_eq!(
            std::fs::read(d.path().join("f.txt")).unwrap(),
            b"    keep  \nnew\n"
        );
    }

    #[tokio::test]
    async fn failures_are_failed_edits_that_say_nothing_changed() {
        let d = tempfile::tempdir().unwrap();
        let out = run(
            d.path(),
            "*** Begin Patch\n*** Delete File: nope.txt\n*** End Patch",
        )
        .await;
        assert!(out.is_error);
        assert_eq!(out.edit, Some(EditOutcome::Failed));
        assert!(
            out.text.starts_with("cannot delete nope.txt: no such file"),
            "{}",
            out.text
        );
        assert!(
            out.text.ends_with("send the whole patch again."),
            "{}",
            out.text
        );
    }

    #[tokio::test]
    async fn add_then_update_in_one_patch_sees_the_added_file() {
        let d = tempfile::tempdir().unwrap();
        let out = run(
            d.path(),
            "*** Begin Patch\n*** Add File: a.txt\n+one\n+two\n*** Update File: a.txt\n@@\n-two\n\
             +2\n*** End Patch",
        )
        .await;
        assert!(!out.is_error, "{}", out.text);
        assert_eq!(std::fs::read(d.path().join("a.txt")).unwrap(), b"one\n2\n");
    }

    #[tokio::test]
    async fn a_file_cannot_also_be_a_folder() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("a"), "file\n").unwrap();
        let out = run(
            d.path(),
            "*** Begin Patch\n*** Add File: a/b.txt\n+x\n*** End Patch",
        )
        .await;
        assert!(
            out.text.contains("a is a file, not a folder"),
            "{}",
            out.text
        );
        let out = run(
            d.path(),
            "*** Begin Patch\n*** Delete File: a\n*** Add File: a/b.txt\n+x\n*** End Patch",
        )
        .await;
        assert!(!out.is_error, "{}", out.text);
        assert_eq!(std::fs::read(d.path().join("a/b.txt")).unwrap(), b"x\n");
    }

    #[tokio::test]
    async fn pure_rename_and_add_keeping_crlf() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("w.txt"), "\u{FEFF}old\r\n").unwrap();
        let out = run(
            d.path(),
            "*** Begin Patch\n*** Update File: w.txt\n*** Move to: sub/w.txt\n\
             *** Add File: w2.txt\n+x\n*** End Patch",
        )
        .await;
        assert!(!out.is_error, "{}", out.text);
        assert_eq!(
            std::fs::read(d.path().join("sub/w.txt")).unwrap(),
            "\u{FEFF}old\r\n".as_bytes()
        );
        assert!(!d.path().join("w.txt").exists());
        // Add over an existing CRLF file keeps its conventions, as write_file does.
        std::fs::write(d.path().join("c.txt"), "a\r\nb\r\n").unwrap();
        let out = run(
            d.path(),
            "*** Begin Patch\n*** Add File: c.txt\n+1\n+2\n*** End Patch",
        )
        .await;
        assert!(
            out.text.contains("replaced the existing file of 2 lines"),
            "{}",
            out.text
        );
        assert_eq!(
            std::fs::read(d.path().join("c.txt")).unwrap(),
            b"1\r\n2\r\n"
        );
    }

    #[test]
    fn description_shows_the_envelope_verbatim() {
        let t = tool();
        let d = &t.spec().description;
        assert!(
            d.contains(
                "\n*** Update File: path/to/app.py\n*** Move to: path/to/main.py\n\
                 @@ def greet(name):\n     unchanged context line\n-    line to remove\n\
                 +    line to add\n*** End Patch\n"
            ),
            "{d}"
        );
        assert!(
            d.contains("also renames the file. In an Update, each hunk"),
            "{d}"
        );
        assert_eq!(t.spec().class, ToolClass::Proposal);
    }

    #[test]
    fn outcome_takes_the_loosest_strategy() {
        let r = |fuzzy| Report::Updated {
            path: "p".into(),
            dest: None,
            added: 1,
            removed: 1,
            fuzzy,
        };
        assert_eq!(outcome(&[r(vec![])]), EditOutcome::Exact);
        assert_eq!(
            outcome(&[
                r(vec![(1, Strategy::TrailingWhitespace)]),
                r(vec![(2, Strategy::Punctuation)])
            ]),
            EditOutcome::Fuzzy("punctuation")
        );
    }
}
