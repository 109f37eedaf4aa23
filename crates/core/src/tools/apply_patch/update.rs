//! Applying one file's hunks to its [`Document`] in memory, or explaining which hunk failed.
//!
//! Hunks are located in order, each after the previous one (see `locate`), then spliced in one
//! pass. Context lines keep the file's own text (a fuzzy match never rewrites the lines around a
//! change), removed lines go, added lines take the file's line ending. When a hunk cannot be
//! found the error shows the hunk, the range that was searched and how, and the closest region
//! of the file with its first differing line: enough for a model to fix its patch in one go.

use super::document::{Document, Line};
use super::locate::{self, Anchor, Strategy};
use super::parser::{Hunk, HunkLine};

/// Lines of a hunk shown in an error.
const SHOWN_HUNK_LINES: usize = 8;
/// Lines of the closest file region shown in an error.
const SHOWN_REGION_LINES: usize = 10;
/// Characters of a file line shown in an error.
const SHOWN_LINE_CHARS: usize = 200;

/// A successfully patched document and the hunks that needed a loose match.
#[derive(Debug)]
pub(crate) struct Updated {
    /// The new content.
    pub doc: Document,
    /// (1-based hunk number, strategy) for every hunk or `@@` line that did not match exactly.
    pub fuzzy: Vec<(usize, Strategy)>,
}

/// A hunk that could not be placed; `message` names the file, the hunk and where we looked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub(crate) struct HunkFailure {
    /// What the model reads.
    pub message: String,
}

struct Splice<'h> {
    start: usize,
    old_len: usize,
    lines: Vec<&'h HunkLine>,
}

/// Applies `hunks` (in file order) to `doc`. `path` is only used in error messages.
pub(crate) fn apply_hunks(
    doc: &Document,
    hunks: &[Hunk],
    path: &str,
) -> Result<Updated, HunkFailure> {
    let texts = doc.texts();
    let mut cursor = 0;
    let mut splices = Vec::with_capacity(hunks.len());
    let mut fuzzy = Vec::new();
    for (i, hunk) in hunks.iter().enumerate() {
        let here = Place {
            path,
            number: i + 1,
            total: hunks.len(),
            hunk,
        };
        let mut from = cursor;
        let mut context_at = None;
        if let Some(context) = &hunk.context {
            let Some(found) = locate::seek(&texts, &[context.as_str()], cursor, Anchor::Anywhere)
            else {
                return Err(here.context_not_found(&texts, context, cursor));
            };
            if found.strategy != Strategy::Exact {
                fuzzy.push((i + 1, found.strategy));
            }
            context_at = Some(found.index);
            from = found.index + 1;
        }
        let mut lines: Vec<&HunkLine> = hunk.lines.iter().collect();
        let mut old = old_of(&lines);
        if old.iter().all(|l| l.trim().is_empty()) && hunk.removed() == 0 {
            // Only blank "context" after the added lines: a separator, not an anchor.
            strip_trailing_blank(&mut lines);
            old = old_of(&lines);
        }
        if old.is_empty() {
            // Pure addition: after the `@@` line, or at the end of the file without one.
            let at = if context_at.is_some() {
                from
            } else {
                texts.len()
            };
            splices.push(Splice {
                start: at,
                old_len: 0,
                lines,
            });
            cursor = at;
            continue;
        }
        let anchor = if hunk.at_eof {
            Anchor::End
        } else {
            Anchor::Anywhere
        };
        let mut found = locate::seek(&texts, &old, from, anchor);
        if found.is_none()
            && let Some(at) = context_at
        {
            // The `@@` line may also be the hunk's first context line.
            found = locate::seek(&texts, &old, at, anchor);
        }
        if found.is_none() && strip_trailing_blank(&mut lines) {
            // A blank line ending the hunk is often just the separator before the next section.
            old = old_of(&lines);
            if !old.is_empty() {
                found = locate::seek(&texts, &old, from, anchor);
            }
        }
        let Some(found) = found else {
            let old = hunk.old_lines();
            return Err(here.not_found(&texts, &old, from, cursor, context_at));
        };
        if found.strategy != Strategy::Exact {
            fuzzy.push((i + 1, found.strategy));
        }
        cursor = found.index + old.len();
        splices.push(Splice {
            start: found.index,
            old_len: old.len(),
            lines,
        });
    }
    fuzzy.dedup_by_key(|(n, _)| *n);
    Ok(Updated {
        doc: splice(doc, &splices),
        fuzzy,
    })
}

fn old_of<'a>(lines: &[&'a HunkLine]) -> Vec<&'a str> {
    lines
        .iter()
        .filter_map(|l| match l {
            HunkLine::Context(t) | HunkLine::Remove(t) => Some(t.as_str()),
            HunkLine::Add(_) => None,
        })
        .collect()
}

/// Drops blank context/removed lines that end the hunk's old side. True if any was dropped.
fn strip_trailing_blank(lines: &mut Vec<&HunkLine>) -> bool {
    let mut dropped = false;
    while let Some(pos) = lines.iter().rposition(|l| !matches!(l, HunkLine::Add(_))) {
        match lines[pos] {
            HunkLine::Context(t) | HunkLine::Remove(t) if t.trim().is_empty() => {
                lines.remove(pos);
                dropped = true;
            }
            _ => break,
        }
    }
    dropped
}

fn splice(doc: &Document, splices: &[Splice<'_>]) -> Document {
    let mut out: Vec<Line> = Vec::with_capacity(doc.lines.len());
    let mut pos = 0;
    for s in splices {
        out.extend_from_slice(&doc.lines[pos..s.start]);
        let mut k = s.start;
        for line in &s.lines {
            match line {
                HunkLine::Context(_) => {
                    out.push(doc.lines[k].clone());
                    k += 1;
                }
                HunkLine::Remove(_) => k += 1,
                HunkLine::Add(t) => out.push(doc.new_line(t)),
            }
        }
        pos = s.start + s.old_len;
    }
    out.extend_from_slice(&doc.lines[pos..]);
    Document {
        bom: doc.bom,
        ending: doc.ending,
        lines: out,
    }
}

/// Which hunk of which file, for error messages.
struct Place<'a> {
    path: &'a str,
    number: usize,
    total: usize,
    hunk: &'a Hunk,
}

impl Place<'_> {
    fn heading(&self, what: &str) -> String {
        format!(
            "{}: hunk {} of {} (patch line {}) {what}:\n{}",
            self.path,
            self.number,
            self.total,
            self.hunk.line,
            indent(&self.hunk.render(SHOWN_HUNK_LINES)),
        )
    }

    fn how(&self) -> String {
        let names: Vec<&str> = Strategy::ALL.iter().map(|s| s.describe()).collect();
        names.join(", then ")
    }

    fn context_not_found(&self, texts: &[&str], context: &str, from: usize) -> HunkFailure {
        let mut msg = self.heading("did not apply");
        msg.push_str(&format!(
            "\nIts `@@ {context}` line was not found in {} ({}), comparing {}.",
            range(from, texts.len(), self.path),
            self.start_note(from),
            self.how()
        ));
        if let Some((n, line)) = closest_single(texts, context, from) {
            msg.push_str(&format!("\nThe most similar line is {n}: `{}`.", cut(line)));
        }
        msg.push_str(
            "\nThe text after `@@` must be a line copied from the file above the change (such as \
             the enclosing function's header); or use a bare `@@`.",
        );
        HunkFailure { message: msg }
    }

    fn not_found(
        &self,
        texts: &[&str],
        old: &[&str],
        from: usize,
        cursor: usize,
        context_at: Option<usize>,
    ) -> HunkFailure {
        let mut msg = self.heading("did not match the file");
        let start = match context_at {
            Some(at) => format!("after its `@@` line, found at line {}", at + 1),
            None => self.start_note(cursor),
        };
        let place = if self.hunk.at_eof {
            format!(
                "at the end of {} (the hunk has `*** End of File`)",
                self.path
            )
        } else {
            format!("in {}", range(from, texts.len(), self.path))
        };
        msg.push_str(&format!(
            "\nIts context and `-` lines were looked for {place} ({start}), comparing {}.",
            self.how()
        ));
        if texts.is_empty() {
            msg.push_str(&format!("\n{} is empty.", self.path));
            return HunkFailure { message: msg };
        }
        if self.hunk.at_eof
            && let Some(inside) = locate::seek(texts, old, from, Anchor::Anywhere)
        {
            msg.push_str(&format!(
                "\nThese lines occur at line {}, but not at the end of the file: remove \
                 `*** End of File` unless the hunk ends with the file's last line.",
                inside.index + 1
            ));
            return HunkFailure { message: msg };
        }
        if from > 0
            && let Some(earlier) = locate::seek(texts, old, 0, Anchor::Anywhere)
            && earlier.index < from
        {
            msg.push_str(&format!(
                "\nThese lines occur earlier, at line {}: hunks must be in file order, each \
                 below the previous one.",
                earlier.index + 1
            ));
            return HunkFailure { message: msg };
        }
        match locate::closest(texts, old, from) {
            Some(start) => {
                let end = (start + old.len()).min(texts.len());
                let shown_end = end.min(start + SHOWN_REGION_LINES);
                let lines = if end == start + 1 {
                    format!("line {end}")
                } else {
                    format!("lines {}-{end}", start + 1)
                };
                msg.push_str(&format!(
                    "\nThe closest region of {} is {lines}:",
                    self.path
                ));
                for (n, line) in texts[start..shown_end].iter().enumerate() {
                    msg.push_str(&format!("\n{:>6}\t{}", start + n + 1, cut(line)));
                }
                if let Some(diff) = first_difference(texts, old, start) {
                    msg.push_str(&format!("\n{diff}"));
                }
            }
            None => msg.push_str(&format!(
                "\nNone of the hunk's lines occur there; is this the right file ({})?",
                self.path
            )),
        }
        msg.push_str(
            "\nRead the file again and copy the context and `-` lines exactly as they are now.",
        );
        HunkFailure { message: msg }
    }

    fn start_note(&self, cursor: usize) -> String {
        if self.number == 1 || cursor == 0 {
            "from the start of the file".to_string()
        } else {
            format!(
                "below hunk {}, which ended at line {cursor}",
                self.number - 1
            )
        }
    }
}

fn range(from: usize, len: usize, path: &str) -> String {
    if from >= len {
        format!("{path} after its last line ({len})")
    } else {
        format!("lines {}-{len} of {path}", from + 1)
    }
}

fn first_difference(texts: &[&str], old: &[&str], start: usize) -> Option<String> {
    for (j, want) in old.iter().enumerate() {
        let n = start + j;
        match texts.get(n) {
            None => {
                return Some(format!(
                    "The file ends at line {} but the hunk expects `{}` after it.",
                    texts.len(),
                    cut(want)
                ));
            }
            Some(have) if Strategy::Punctuation.key(have) != Strategy::Punctuation.key(want) => {
                return Some(format!(
                    "First difference: line {} is `{}` but the hunk expects `{}`.",
                    n + 1,
                    cut(have),
                    cut(want)
                ));
            }
            Some(_) => {}
        }
    }
    None
}

/// The line of `texts[from..]` most similar to `wanted`, if reasonably similar.
fn closest_single<'a>(texts: &[&'a str], wanted: &str, from: usize) -> Option<(usize, &'a str)> {
    const MAX_SCANNED: usize = 20_000;
    let wanted = wanted.trim();
    texts
        .iter()
        .enumerate()
        .skip(from)
        .take(MAX_SCANNED)
        .map(|(i, t)| (strsim::normalized_levenshtein(t.trim(), wanted), i, *t))
        .filter(|(score, _, _)| *score >= 0.6)
        .max_by(|a, b| a.0.total_cmp(&b.0).then_with(|| b.1.cmp(&a.1)))
        .map(|(_, i, t)| (i + 1, t))
}

fn cut(line: &str) -> String {
    match line.char_indices().nth(SHOWN_LINE_CHARS) {
        Some((i, _)) => format!("{}... [line truncated]", &line[..i]),
        None => line.to_string(),
    }
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("    {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::super::parser::{FileOp, parse};
    use super::*;

    fn hunks(body: &str) -> Vec<Hunk> {
        let patch = parse(&format!(
            "*** Begin Patch\n*** Update File: f\n{body}\n*** End Patch"
        ))
        .unwrap();
        match patch.ops.into_iter().next().unwrap() {
            FileOp::Update { hunks, .. } => hunks,
            other => panic!("{other:?}"),
        }
    }

    fn apply(file: &str, body: &str) -> Result<String, String> {
        let doc = Document::parse(file.as_bytes()).unwrap();
        apply_hunks(&doc, &hunks(body), "f")
            .map(|u| String::from_utf8(u.doc.to_bytes()).unwrap())
            .map_err(|e| e.message)
    }

    #[test]
    fn replaces_in_order_and_keeps_the_rest() {
        assert_eq!(
            apply("1\n2\n3\n4\n5\n", "@@\n 1\n-2\n+two\n@@\n 4\n-5\n+five").unwrap(),
            "1\ntwo\n3\n4\nfive\n"
        );
    }

    #[test]
    fn context_header_disambiguates() {
        let file = "fn a() {\n    x();\n}\nfn b() {\n    x();\n}\n";
        assert_eq!(
            apply(file, "@@ fn b() {\n-    x();\n+    y();").unwrap(),
            "fn a() {\n    x();\n}\nfn b() {\n    y();\n}\n"
        );
        // The header line repeated as the first context line still works.
        assert_eq!(
            apply(file, "@@ fn b() {\n fn b() {\n-    x();\n+    y();").unwrap(),
            "fn a() {\n    x();\n}\nfn b() {\n    y();\n}\n"
        );
    }

    #[test]
    fn pure_additions_go_after_the_header_or_at_the_end() {
        assert_eq!(apply("a\nb\n", "@@\n+c").unwrap(), "a\nb\nc\n");
        assert_eq!(apply("a\n\nb\n", "@@\n+c\n").unwrap(), "a\n\nb\nc\n");
        assert_eq!(
            apply("a\nb\n", "@@ a\n+between").unwrap(),
            "a\nbetween\nb\n"
        );
        assert_eq!(apply("", "@@\n+first").unwrap(), "first\n");
    }

    #[test]
    fn end_of_file_hunks_match_the_tail() {
        let file = "x\nend\nx\nend\n";
        assert_eq!(
            apply(file, "@@\n x\n-end\n+END\n*** End of File").unwrap(),
            "x\nend\nx\nEND\n"
        );
    }

    #[test]
    fn fuzzy_matches_keep_the_files_context_lines() {
        let doc = Document::parse("say(\u{201C}hi\u{201D})\nold\n".as_bytes()).unwrap();
        let u = apply_hunks(&doc, &hunks("@@\n say(\"hi\")\n-old\n+new"), "f").unwrap();
        assert_eq!(
            String::from_utf8(u.doc.to_bytes()).unwrap(),
            "say(\u{201C}hi\u{201D})\nnew\n"
        );
        assert_eq!(u.fuzzy, vec![(1, Strategy::Punctuation)]);
    }

    #[test]
    fn a_trailing_blank_context_line_is_optional() {
        assert_eq!(apply("a\nb\n", "@@\n-b\n+c\n").unwrap(), "a\nc\n");
    }

    #[test]
    fn crlf_and_missing_final_newline_are_kept() {
        assert_eq!(apply("a\r\nb\r\nc", "@@\n-b\n+B").unwrap(), "a\r\nB\r\nc");
        assert_eq!(
            apply("only", "@@\n-only\n+one\n+two").unwrap(),
            "one\ntwo\n"
        );
    }

    #[test]
    fn not_found_names_the_hunk_range_and_closest_region() {
        let err = apply(
            "fn main() {\n    let x = 1;\n    run(x);\n}\n",
            "@@\n fn main() {\n-    let x = 2;\n+    let x = 3;",
        )
        .unwrap_err();
        assert!(
            err.starts_with("f: hunk 1 of 1 (patch line 3) did not match the file:"),
            "{err}"
        );
        assert!(err.contains("    -    let x = 2;"), "{err}");
        assert!(
            err.contains("in lines 1-4 of f (from the start of the file), comparing exactly, then"),
            "{err}"
        );
        assert!(err.contains("closest region of f is lines 1-2"), "{err}");
        assert!(
            err.contains("line 2 is `    let x = 1;` but the hunk expects `    let x = 2;`"),
            "{err}"
        );
    }

    #[test]
    fn end_of_file_mismatch_says_where_the_lines_are() {
        let err = apply("a\nb\nc\n", "@@\n-a\n+A\n*** End of File").unwrap_err();
        assert!(
            err.contains("at the end of f (the hunk has `*** End of File`)"),
            "{err}"
        );
        assert!(
            err.contains("occur at line 1, but not at the end of the file"),
            "{err}"
        );
    }

    #[test]
    fn a_similar_line_is_shown_as_the_closest_region() {
        let err = apply(
            "def b():\n    x = 2\n",
            "@@ def b():\n-    x = 3\n+    x = 4",
        )
        .unwrap_err();
        assert!(
            err.contains("(after its `@@` line, found at line 1)"),
            "{err}"
        );
        assert!(
            err.contains("closest region of f is line 2:\n     2\t    x = 2"),
            "{err}"
        );
    }

    #[test]
    fn out_of_order_hunks_are_explained() {
        let err = apply("a\nb\nc\nd\n", "@@\n-c\n+C\n@@\n-a\n+A").unwrap_err();
        assert!(err.contains("hunk 2 of 2"), "{err}");
        assert!(err.contains("occur earlier, at line 1"), "{err}");
    }

    #[test]
    fn missing_context_header_is_reported() {
        let err = apply("fn alpha() {\n}\n", "@@ fn alpah() {\n-}\n+};").unwrap_err();
        assert!(
            err.contains("`@@ fn alpah() {` line was not found"),
            "{err}"
        );
        assert!(
            err.contains("most similar line is 1: `fn alpha() {`"),
            "{err}"
        );
    }
}
