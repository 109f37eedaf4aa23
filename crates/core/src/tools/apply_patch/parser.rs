//! Parsing the `*** Begin Patch` envelope into file operations and hunks.
//!
//! The parser only understands the text; it never looks at the files (that is `plan`'s job),
//! so every structural mistake is reported with the patch line it sits on before anything else
//! happens. It is deliberately tolerant where a model's intent is unambiguous (markers padded
//! with spaces, CRLF patch text, a Markdown fence or a shell heredoc around the envelope, a
//! missing `@@` before the first hunk, unified-diff `@@ -1,3 +1,4 @@` headers, blank lines that
//! lost their leading space) and strict where guessing could produce a wrong edit (a truncated
//! patch without `*** End Patch`, a hunk line without a ` `/`-`/`+` prefix, an unknown header).

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File:";
const DELETE: &str = "*** Delete File:";
const UPDATE: &str = "*** Update File:";
const MOVE: &str = "*** Move to:";
const END_OF_FILE: &str = "*** End of File";

/// A parsed patch: the file operations in the order the model wrote them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Patch {
    /// At least one operation (an empty envelope is refused).
    pub ops: Vec<FileOp>,
}

/// One `*** ... File:` section. `line` is the 1-based patch line of its header, for errors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FileOp {
    /// Create (or replace) a file with these lines.
    Add {
        /// Path as the model wrote it.
        path: String,
        /// The file's lines, without their `+`.
        lines: Vec<String>,
        /// Patch line of the header.
        line: usize,
    },
    /// Remove a file.
    Delete {
        /// Path as the model wrote it.
        path: String,
        /// Patch line of the header.
        line: usize,
    },
    /// Change a file in place, optionally renaming it.
    Update {
        /// Path as the model wrote it.
        path: String,
        /// `*** Move to:` destination.
        move_to: Option<String>,
        /// The hunks, in file order. Empty only for a pure rename.
        hunks: Vec<Hunk>,
        /// Patch line of the header.
        line: usize,
    },
}

/// One `@@` hunk of an update: located by its content, never by line numbers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hunk {
    /// Text after `@@`: a line of the file that comes before the change (a function header).
    pub context: Option<String>,
    /// Context, removed and added lines in order.
    pub lines: Vec<HunkLine>,
    /// `*** End of File` followed the hunk: it must match at the end of the file.
    pub at_eof: bool,
    /// 1-based patch line where the hunk starts (its `@@`, or its first line).
    pub line: usize,
}

/// One line of a hunk, without its prefix character.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HunkLine {
    /// ` ` line: present before and after.
    Context(String),
    /// `-` line: present before only.
    Remove(String),
    /// `+` line: present after only.
    Add(String),
}

impl Hunk {
    /// The lines the file must contain for the hunk to apply (context and removed).
    pub fn old_lines(&self) -> Vec<&str> {
        self.lines
            .iter()
            .filter_map(|l| match l {
                HunkLine::Context(t) | HunkLine::Remove(t) => Some(t.as_str()),
                HunkLine::Add(_) => None,
            })
            .collect()
    }

    /// Number of `+` lines.
    pub fn added(&self) -> usize {
        self.lines
            .iter()
            .filter(|l| matches!(l, HunkLine::Add(_)))
            .count()
    }

    /// Number of `-` lines.
    pub fn removed(&self) -> usize {
        self.lines
            .iter()
            .filter(|l| matches!(l, HunkLine::Remove(_)))
            .count()
    }

    /// The hunk as the model wrote it (header and prefixed lines), for error messages.
    pub fn render(&self, max_lines: usize) -> String {
        let mut out = Vec::new();
        match &self.context {
            Some(c) => out.push(format!("@@ {c}")),
            None => out.push("@@".to_string()),
        }
        for l in self.lines.iter().take(max_lines) {
            out.push(match l {
                HunkLine::Context(t) => format!(" {t}"),
                HunkLine::Remove(t) => format!("-{t}"),
                HunkLine::Add(t) => format!("+{t}"),
            });
        }
        if self.lines.len() > max_lines {
            out.push(format!("... ({} more lines)", self.lines.len() - max_lines));
        }
        if self.at_eof {
            out.push(END_OF_FILE.to_string());
        }
        out.join("\n")
    }
}

/// A structural mistake in the patch text, with the patch line it is on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid patch{}: {message}", at_line(*.line))]
pub(crate) struct ParseError {
    /// 1-based patch line (0 when the patch is empty).
    pub line: usize,
    /// What is wrong and how to fix it.
    pub message: String,
}

fn at_line(line: usize) -> String {
    if line == 0 {
        String::new()
    } else {
        format!(", line {line}")
    }
}

fn err(line: usize, message: impl Into<String>) -> ParseError {
    ParseError {
        line,
        message: message.into(),
    }
}

/// A patch line with its 1-based number in the text the model sent.
#[derive(Clone, Copy)]
struct Line<'a> {
    no: usize,
    text: &'a str,
}

impl Line<'_> {
    fn trimmed(&self) -> &str {
        self.text.trim()
    }
    fn is_blank(&self) -> bool {
        self.text.trim().is_empty()
    }
    /// Starts a new file section (padding around the marker tolerated).
    fn is_file_header(&self) -> bool {
        let t = self.text.trim_start();
        t.starts_with(ADD) || t.starts_with(DELETE) || t.starts_with(UPDATE)
    }
}

/// Parses the whole patch text.
pub(crate) fn parse(text: &str) -> Result<Patch, ParseError> {
    let all: Vec<Line<'_>> = text
        .split('\n')
        .enumerate()
        .map(|(i, t)| Line {
            no: i + 1,
            text: t.strip_suffix('\r').unwrap_or(t),
        })
        .collect();
    let body = envelope(&all)?;
    let mut ops = Vec::new();
    let mut i = 0;
    while i < body.len() {
        let line = body[i];
        if line.is_blank() {
            i += 1;
            continue;
        }
        let t = line.trimmed();
        let (op, next) = if let Some(rest) = t.strip_prefix(ADD) {
            parse_add(path_of(rest, line, ADD)?, line.no, &body[i + 1..])?
        } else if let Some(rest) = t.strip_prefix(DELETE) {
            parse_delete(path_of(rest, line, DELETE)?, line.no, &body[i + 1..])?
        } else if let Some(rest) = t.strip_prefix(UPDATE) {
            parse_update(path_of(rest, line, UPDATE)?, line.no, &body[i + 1..])?
        } else if t.starts_with("***") {
            return Err(err(
                line.no,
                format!(
                    "unknown header `{t}`; a file section starts with `{ADD} path`, \
                     `{DELETE} path` or `{UPDATE} path`"
                ),
            ));
        } else {
            return Err(err(
                line.no,
                format!(
                    "expected a file header (`{ADD} path`, `{DELETE} path` or `{UPDATE} path`), \
                     found `{t}`"
                ),
            ));
        };
        ops.push(op);
        i += 1 + next;
    }
    if ops.is_empty() {
        return Err(err(
            0,
            format!(
                "the patch changes nothing; put at least one `{ADD}`, `{DELETE}` or `{UPDATE}` \
                 section between `{BEGIN}` and `{END}`"
            ),
        ));
    }
    Ok(Patch { ops })
}

/// Finds the lines between `*** Begin Patch` and `*** End Patch`, peeling off blank lines, a
/// Markdown code fence and a shell heredoc (`apply_patch <<'EOF'` ... `EOF`) around them.
fn envelope<'a, 'b>(all: &'b [Line<'a>]) -> Result<&'b [Line<'a>], ParseError> {
    let mut lines = strip_blank_ends(all);
    if lines.is_empty() {
        return Err(err(
            0,
            format!("the patch is empty; send `{BEGIN}`, the file sections, then `{END}`"),
        ));
    }
    loop {
        let first = lines[0].trimmed();
        let last = lines[lines.len() - 1].trimmed();
        let fenced = first.starts_with("```") && last == "```";
        let heredoc = heredoc_tag(first).is_some_and(|tag| tag == last);
        if lines.len() >= 2 && (fenced || heredoc) {
            lines = strip_blank_ends(&lines[1..lines.len() - 1]);
        } else {
            break;
        }
        if lines.is_empty() {
            return Err(err(
                0,
                format!("the patch is empty; send `{BEGIN}`, the file sections, then `{END}`"),
            ));
        }
    }
    let first = lines[0];
    if first.trimmed() != BEGIN {
        return Err(err(
            first.no,
            format!(
                "the patch must start with a line `{BEGIN}`, found `{}`",
                first.trimmed()
            ),
        ));
    }
    let last = lines[lines.len() - 1];
    if lines.len() < 2 || last.trimmed() != END {
        return Err(err(
            last.no,
            format!(
                "the patch must end with a line `{END}` (was it cut off?); send the whole patch \
                 again ending with `{END}`"
            ),
        ));
    }
    Ok(&lines[1..lines.len() - 1])
}

fn strip_blank_ends<'a, 'b>(mut lines: &'b [Line<'a>]) -> &'b [Line<'a>] {
    while lines.first().is_some_and(Line::is_blank) {
        lines = &lines[1..];
    }
    while lines.last().is_some_and(Line::is_blank) {
        lines = &lines[..lines.len() - 1];
    }
    lines
}

/// `cmd <<'EOF'`, `<<"EOF"`, `<<EOF`, `<<-EOF`: the terminator word, if the line opens a heredoc.
fn heredoc_tag(line: &str) -> Option<&str> {
    let (_, after) = line.rsplit_once("<<")?;
    let after = after.trim_start_matches('-').trim();
    let tag = after
        .strip_prefix('\'')
        .and_then(|t| t.strip_suffix('\''))
        .or_else(|| after.strip_prefix('"').and_then(|t| t.strip_suffix('"')))
        .unwrap_or(after);
    let valid = !tag.is_empty() && tag.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    valid.then_some(tag)
}

fn path_of(rest: &str, line: Line<'_>, marker: &str) -> Result<String, ParseError> {
    let path = rest.trim();
    if path.is_empty() {
        return Err(err(
            line.no,
            format!("`{marker}` needs a path after it, e.g. `{marker} src/main.rs`"),
        ));
    }
    Ok(path.to_string())
}

/// Body of `*** Add File:`: `+` lines. Blank lines between `+` lines are taken as empty lines
/// (their `+` was lost); blank lines at the end of the section are separators.
fn parse_add(path: String, line: usize, rest: &[Line<'_>]) -> Result<(FileOp, usize), ParseError> {
    let mut lines = Vec::new();
    let mut pending_blank = 0;
    let mut used = 0;
    for l in rest {
        if l.is_file_header() {
            break;
        }
        used += 1;
        if let Some(content) = l.text.strip_prefix('+') {
            lines.extend(std::iter::repeat_n(String::new(), pending_blank));
            pending_blank = 0;
            lines.push(content.to_string());
        } else if l.is_blank() {
            pending_blank += 1;
        } else {
            return Err(err(
                l.no,
                format!(
                    "in `{ADD} {path}` every line must start with `+` (the file's content), \
                     found `{}`",
                    l.text
                ),
            ));
        }
    }
    Ok((FileOp::Add { path, lines, line }, used))
}

fn parse_delete(
    path: String,
    line: usize,
    rest: &[Line<'_>],
) -> Result<(FileOp, usize), ParseError> {
    let mut used = 0;
    for l in rest {
        if l.is_file_header() {
            break;
        }
        if !l.is_blank() {
            return Err(err(
                l.no,
                format!(
                    "`{DELETE} {path}` takes no content lines, found `{}`; to change the file \
                     use `{UPDATE} {path}` instead",
                    l.text
                ),
            ));
        }
        used += 1;
    }
    Ok((FileOp::Delete { path, line }, used))
}

fn parse_update(
    path: String,
    line: usize,
    rest: &[Line<'_>],
) -> Result<(FileOp, usize), ParseError> {
    let mut used = 0;
    let mut move_to = None;
    if let Some(first) = rest.first()
        && let Some(dest) = first.trimmed().strip_prefix(MOVE)
    {
        move_to = Some(path_of(dest, *first, MOVE)?);
        used = 1;
    }
    let mut hunks: Vec<Hunk> = Vec::new();
    let mut current: Option<Hunk> = None;
    for l in &rest[used..] {
        if l.is_file_header() {
            break;
        }
        used += 1;
        if let Some(header) = l.text.strip_prefix("@@") {
            finish(&mut hunks, current.take(), &path)?;
            current = Some(Hunk {
                context: hunk_context(header),
                lines: Vec::new(),
                at_eof: false,
                line: l.no,
            });
            continue;
        }
        if l.trimmed() == END_OF_FILE {
            let Some(mut h) = current.take() else {
                return Err(err(
                    l.no,
                    format!("`{END_OF_FILE}` must follow the lines of a hunk"),
                ));
            };
            h.at_eof = true;
            finish(&mut hunks, Some(h), &path)?;
            continue;
        }
        let hunk_line = if let Some(t) = l.text.strip_prefix(' ') {
            HunkLine::Context(t.to_string())
        } else if let Some(t) = l.text.strip_prefix('-') {
            HunkLine::Remove(t.to_string())
        } else if let Some(t) = l.text.strip_prefix('+') {
            HunkLine::Add(t.to_string())
        } else if l.text.is_empty() {
            // An empty context line whose leading space was trimmed away.
            HunkLine::Context(String::new())
        } else {
            return Err(err(
                l.no,
                format!(
                    "`{}` is not a hunk line: in `{UPDATE} {path}` every line of a hunk starts \
                     with ` ` (unchanged context), `-` (remove) or `+` (add); a new hunk starts \
                     with `@@`",
                    l.text
                ),
            ));
        };
        match &mut current {
            Some(h) => h.lines.push(hunk_line),
            None if hunks.is_empty() => {
                // The first hunk may omit its `@@`.
                current = Some(Hunk {
                    context: None,
                    lines: vec![hunk_line],
                    at_eof: false,
                    line: l.no,
                });
            }
            None => {
                return Err(err(
                    l.no,
                    format!(
                        "a line after `{END_OF_FILE}` must start a new hunk with `@@` or a new \
                         file section"
                    ),
                ));
            }
        }
    }
    finish(&mut hunks, current, &path)?;
    if hunks.is_empty() && move_to.is_none() {
        return Err(err(
            line,
            format!(
                "`{UPDATE} {path}` has no hunks; add `@@` hunks with the lines to change, or \
                 leave the file out of the patch"
            ),
        ));
    }
    Ok((
        FileOp::Update {
            path,
            move_to,
            hunks,
            line,
        },
        used,
    ))
}

/// Accepts a finished hunk if it changes something.
fn finish(hunks: &mut Vec<Hunk>, hunk: Option<Hunk>, path: &str) -> Result<(), ParseError> {
    let Some(h) = hunk else {
        return Ok(());
    };
    if h.lines.is_empty() {
        return Err(err(
            h.line,
            format!(
                "hunk in `{path}` has no lines; give its context, `-` and `+` lines after `@@`"
            ),
        ));
    }
    if h.added() + h.removed() == 0 {
        return Err(err(
            h.line,
            format!(
                "hunk in `{path}` changes nothing (it has only context lines); mark lines to \
                 remove with `-` and lines to add with `+`"
            ),
        ));
    }
    hunks.push(h);
    Ok(())
}

/// The text after `@@`: `None` for a bare `@@`; the trailing text of a unified-diff range
/// header (`@@ -12,7 +12,8 @@ fn main() {`); otherwise the line itself.
fn hunk_context(header: &str) -> Option<String> {
    let text = header.strip_prefix(' ').unwrap_or(header).trim_end();
    let text = match unified_range_tail(text) {
        Some(tail) => tail.trim_start(),
        None => text,
    };
    (!text.trim().is_empty()).then(|| text.to_string())
}

/// `-a[,b] +c[,d] @@ tail` -> `tail`.
fn unified_range_tail(text: &str) -> Option<&str> {
    let (ranges, tail) = text.split_once("@@")?;
    let mut parts = ranges.split_whitespace();
    let old = parts.next()?.strip_prefix('-')?;
    let new = parts.next()?.strip_prefix('+')?;
    let is_range = |r: &str| {
        !r.is_empty()
            && r.split(',')
                .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    (parts.next().is_none() && is_range(old) && is_range(new)).then_some(tail)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn ctx(t: &str) -> HunkLine {
        HunkLine::Context(t.to_string())
    }
    fn rm(t: &str) -> HunkLine {
        HunkLine::Remove(t.to_string())
    }
    fn add(t: &str) -> HunkLine {
        HunkLine::Add(t.to_string())
    }

    #[test]
    fn parses_all_three_operations() {
        let p = parse(
            "*** Begin Patch\n*** Add File: a.txt\n+one\n+two\n*** Delete File: b.txt\n\
             *** Update File: c.txt\n*** Move to: d/c.txt\n@@ fn main() {\n keep\n-old\n+new\n\
             *** End Patch\n",
        )
        .unwrap();
        assert_eq!(
            p.ops,
            vec![
                FileOp::Add {
                    path: "a.txt".into(),
                    lines: vec!["one".into(), "two".into()],
                    line: 2
                },
                FileOp::Delete {
                    path: "b.txt".into(),
                    line: 5
                },
                FileOp::Update {
                    path: "c.txt".into(),
                    move_to: Some("d/c.txt".into()),
                    hunks: vec![Hunk {
                        context: Some("fn main() {".into()),
                        lines: vec![ctx("keep"), rm("old"), add("new")],
                        at_eof: false,
                        line: 8,
                    }],
                    line: 6
                },
            ]
        );
    }

    #[test]
    fn first_hunk_may_omit_its_header_and_eof_is_recorded() {
        let p = parse(
            "*** Begin Patch\n*** Update File: f\n a\n-b\n+c\n*** End of File\n@@\n-x\n+y\n\
             *** End Patch",
        )
        .unwrap();
        let FileOp::Update { hunks, .. } = &p.ops[0] else {
            panic!("not an update")
        };
        assert_eq!(hunks.len(), 2);
        assert!(hunks[0].at_eof);
        assert_eq!(hunks[0].context, None);
        assert_eq!(hunks[0].line, 3);
        assert!(!hunks[1].at_eof);
        assert_eq!(hunks[1].old_lines(), vec!["x"]);
    }

    #[test]
    fn tolerates_padding_crlf_fences_and_heredocs() {
        for text in [
            " *** Begin Patch\r\n  *** Update File: f\r\n@@\r\n-a\r\n+b\r\n*** End Patch \r\n",
            "```\n*** Begin Patch\n*** Update File: f\n@@\n-a\n+b\n*** End Patch\n```\n",
            "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: f\n@@\n-a\n+b\n*** End Patch\nEOF\n",
            "\n\n*** Begin Patch\n\n*** Update File: f\n@@\n-a\n+b\n\n*** End Patch\n\n",
        ] {
            let p = parse(text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
            let FileOp::Update { path, hunks, .. } = &p.ops[0] else {
                panic!("not an update")
            };
            assert_eq!(path, "f");
            // A blank line before `*** End Patch` stays an empty context line; the locator
            // retries without it when the file has no blank line there.
            assert_eq!(hunks[0].lines[..2], [rm("a"), add("b")], "{text:?}");
        }
    }

    #[test]
    fn unified_diff_headers_keep_only_their_trailing_context() {
        assert_eq!(
            hunk_context(" -12,7 +12,8 @@ fn main() {"),
            Some("fn main() {".into())
        );
        assert_eq!(hunk_context(" -1 +1 @@"), None);
        assert_eq!(hunk_context(""), None);
        assert_eq!(hunk_context(" class A:"), Some("class A:".into()));
        assert_eq!(
            hunk_context("     indented()"),
            Some("    indented()".into())
        );
    }

    #[test]
    fn blank_lines_inside_hunks_are_empty_context() {
        let p =
            parse("*** Begin Patch\n*** Update File: f\n@@\n a\n\n-b\n+c\n*** End Patch").unwrap();
        let FileOp::Update { hunks, .. } = &p.ops[0] else {
            panic!()
        };
        assert_eq!(hunks[0].lines, vec![ctx("a"), ctx(""), rm("b"), add("c")]);
    }

    #[test]
    fn add_file_keeps_inner_blank_lines_and_drops_trailing_ones() {
        let p = parse(
            "*** Begin Patch\n*** Add File: n\n+a\n\n+b\n\n*** Delete File: x\n*** End Patch",
        )
        .unwrap();
        assert_eq!(
            p.ops[0],
            FileOp::Add {
                path: "n".into(),
                lines: vec!["a".into(), "".into(), "b".into()],
                line: 2
            }
        );
        assert_eq!(p.ops.len(), 2);
    }

    #[test]
    fn pure_rename_needs_no_hunks() {
        let p =
            parse("*** Begin Patch\n*** Update File: a\n*** Move to: b\n*** End Patch").unwrap();
        assert!(
            matches!(&p.ops[0], FileOp::Update { move_to: Some(m), hunks, .. } if m == "b" && hunks.is_empty())
        );
    }

    fn parse_err(text: &str) -> ParseError {
        parse(text).unwrap_err()
    }

    #[test]
    fn rejects_broken_envelopes() {
        assert!(parse_err("").message.contains("empty"));
        assert!(
            parse_err("*** Begin Patch\n*** End Patch\n")
                .message
                .contains("changes nothing")
        );
        let e = parse_err("*** Update File: f\n@@\n-a\n+b\n*** End Patch");
        assert_eq!(e.line, 1);
        assert!(e.message.contains("must start with"), "{e}");
        let e = parse_err("*** Begin Patch\n*** Update File: f\n@@\n-a\n+b\n");
        assert!(e.message.contains("must end with"), "{e}");
    }

    #[test]
    fn rejects_unknown_headers_and_stray_lines() {
        let e = parse_err("*** Begin Patch\n*** Frobnicate File: foo\n*** End Patch");
        assert_eq!(e.line, 2);
        assert!(
            e.to_string()
                .contains("unknown header `*** Frobnicate File: foo`"),
            "{e}"
        );
        let e = parse_err("*** Begin Patch\nhello\n*** End Patch");
        assert!(e.message.contains("expected a file header"), "{e}");
        let e = parse_err("*** Begin Patch\n*** Add File: a\nno plus\n*** End Patch");
        assert_eq!(e.line, 3);
        assert!(e.message.contains("must start with `+`"), "{e}");
        let e = parse_err("*** Begin Patch\n*** Update File: a\n@@\n-x\nstray\n*** End Patch");
        assert_eq!(e.line, 5);
        assert!(e.message.contains("not a hunk line"), "{e}");
        let e = parse_err("*** Begin Patch\n*** Delete File: a\n+x\n*** End Patch");
        assert!(e.message.contains("takes no content"), "{e}");
        let e = parse_err("*** Begin Patch\n*** Add File:   \n+x\n*** End Patch");
        assert!(e.message.contains("needs a path"), "{e}");
    }

    #[test]
    fn rejects_empty_and_no_op_hunks() {
        let e = parse_err("*** Begin Patch\n*** Update File: foo.txt\n*** End Patch");
        assert!(e.message.contains("has no hunks"), "{e}");
        let e = parse_err("*** Begin Patch\n*** Update File: f\n@@\n@@\n-a\n*** End Patch");
        assert_eq!(e.line, 3);
        assert!(e.message.contains("no lines"), "{e}");
        let e = parse_err("*** Begin Patch\n*** Update File: f\n@@\n a\n b\n*** End Patch");
        assert!(e.message.contains("changes nothing"), "{e}");
    }

    #[test]
    fn hunk_renders_as_written() {
        let p = parse("*** Begin Patch\n*** Update File: f\n@@ fn x\n a\n-b\n+c\n*** End of File\n*** End Patch")
            .unwrap();
        let FileOp::Update { hunks, .. } = &p.ops[0] else {
            panic!()
        };
        assert_eq!(hunks[0].render(10), "@@ fn x\n a\n-b\n+c\n*** End of File");
        assert_eq!(
            hunks[0].render(1),
            "@@ fn x\n a\n... (2 more lines)\n*** End of File"
        );
    }
}
