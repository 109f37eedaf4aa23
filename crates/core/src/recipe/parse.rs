//! Markdown to sections: the only place that knows about headings, fences and comments.
//!
//! A recipe is read line by line, keeping each line's number. Fenced code blocks (```` ``` ````
//! or `~~~`) are opaque: a `##` or `###` inside one is text, and so is `<!--`. HTML comments
//! outside code blocks are removed (a line that held only a comment disappears), which is how
//! the built-in defaults and the template explain themselves without changing any value.
//! Everything above the first `##` is the header (title and version); each `##` starts a
//! section whose lines are handed, unparsed, to the section readers.

use super::problems::{ProblemKind, Problems};

/// One line of the recipe after comment removal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Line {
    /// 1-based line number in the file.
    pub number: usize,
    /// The text (verbatim inside code blocks, comments removed elsewhere).
    pub text: String,
    /// Inside a fenced code block, or one of its fence lines.
    pub fenced: bool,
}

impl Line {
    /// Whether the line is blank.
    pub(crate) fn is_blank(&self) -> bool {
        self.text.trim().is_empty()
    }

    /// The heading level and title when this line is an ATX heading outside code.
    pub(crate) fn heading(&self) -> Option<(usize, &str)> {
        if self.fenced {
            return None;
        }
        heading(&self.text)
    }
}

/// One `##` section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Section {
    /// The name as written.
    pub name: String,
    /// Line of the `##` heading.
    pub line: usize,
    /// The lines up to the next `##` (or the end).
    pub body: Vec<Line>,
}

/// A recipe split into header and sections.
#[derive(Debug, Default)]
pub(crate) struct Document {
    /// The `# Title` text and its line.
    pub title: Option<(String, usize)>,
    /// Non-blank lines before the first section other than the title.
    pub header: Vec<Line>,
    /// The sections in file order.
    pub sections: Vec<Section>,
}

/// `(level, title)` for `# x`, `## x`, `### x`... (up to three spaces of indent, a closing
/// `#` sequence removed). `#foo` is not a heading.
pub(crate) fn heading(text: &str) -> Option<(usize, &str)> {
    let indent = text.len() - text.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &text[indent..];
    let level = rest.len() - rest.trim_start_matches('#').len();
    if level == 0 || level > 6 {
        return None;
    }
    let after = &rest[level..];
    if !(after.is_empty() || after.starts_with([' ', '\t'])) {
        return None;
    }
    let mut title = after.trim();
    let closing = title.trim_end_matches('#');
    if closing.is_empty() || closing.ends_with([' ', '\t']) {
        title = closing.trim_end();
    }
    Some((level, title))
}

/// A fence opening or closing line: the fence character and run length.
fn fence(text: &str) -> Option<(char, usize)> {
    let indent = text.len() - text.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &text[indent..];
    let ch = rest.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let run = rest.len() - rest.trim_start_matches(ch).len();
    (run >= 3).then_some((ch, run))
}

struct Fence {
    ch: char,
    run: usize,
    line: usize,
}

/// Splits `text` into header and sections, recording unclosed fences and comments.
pub(crate) fn split(text: &str, problems: &mut Problems) -> Document {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut doc = Document::default();
    let mut open_fence: Option<Fence> = None;
    let mut open_comment: Option<usize> = None;
    for (index, raw) in text.lines().enumerate() {
        let number = index + 1;
        if let Some(f) = &open_fence {
            let closes = fence(raw).is_some_and(|(ch, run)| ch == f.ch && run >= f.run)
                && raw.trim().chars().all(|c| c == f.ch);
            if closes {
                open_fence = None;
            }
            push(&mut doc, raw.to_string(), number, true);
            continue;
        }
        let (text, had_comment) = strip_comments(raw, number, &mut open_comment);
        if had_comment && text.trim().is_empty() {
            continue;
        }
        if let Some((ch, run)) = fence(&text) {
            open_fence = Some(Fence {
                ch,
                run,
                line: number,
            });
            push(&mut doc, text, number, true);
            continue;
        }
        match heading(&text) {
            Some((1, title)) if doc.sections.is_empty() && doc.title.is_none() => {
                doc.title = Some((title.to_string(), number));
            }
            Some((2, name)) => doc.sections.push(Section {
                name: name.to_string(),
                line: number,
                body: Vec::new(),
            }),
            _ => push(&mut doc, text, number, false),
        }
    }
    if let Some(f) = open_fence {
        problems.push(
            f.line,
            ProblemKind::Unclosed,
            format!(
                "this code block is never closed, so everything after it is part of it; add a \
                 closing `{}` line",
                f.ch.to_string().repeat(f.run)
            ),
        );
    }
    if let Some(line) = open_comment {
        problems.push(
            line,
            ProblemKind::Unclosed,
            "this comment is never closed, so everything after it is ignored; end it with `-->`",
        );
    }
    doc
}

fn push(doc: &mut Document, text: String, number: usize, fenced: bool) {
    let line = Line {
        number,
        text,
        fenced,
    };
    match doc.sections.last_mut() {
        Some(section) => section.body.push(line),
        None if !line.is_blank() => doc.header.push(line),
        None => {}
    }
}

/// Removes `<!-- ... -->` from one line (continuing a comment opened on an earlier line).
/// Returns the remaining text and whether any comment was removed.
fn strip_comments(raw: &str, number: usize, open: &mut Option<usize>) -> (String, bool) {
    let mut out = String::new();
    let mut rest = raw;
    let mut had = false;
    loop {
        if open.is_some() {
            had = true;
            match rest.find("-->") {
                Some(end) => {
                    *open = None;
                    rest = &rest[end + 3..];
                }
                None => return (out, true),
            }
        }
        match rest.find("<!--") {
            Some(start) => {
                out.push_str(&rest[..start]);
                *open = Some(number);
                rest = &rest[start + 4..];
            }
            None => {
                out.push_str(rest);
                return (out, had);
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn doc(text: &str) -> (Document, Problems) {
        let mut p = Problems::new("t.md");
        let d = split(text, &mut p);
        (d, p)
    }

    #[test]
    fn headings_are_recognised_like_markdown() {
        assert_eq!(heading("## Models"), Some((2, "Models")));
        assert_eq!(heading("   ### A task ###"), Some((3, "A task")));
        assert_eq!(heading("# Title #hash"), Some((1, "Title #hash")));
        assert_eq!(heading("##"), Some((2, "")));
        assert_eq!(heading("#hashtag"), None);
        assert_eq!(heading("    ## indented code"), None);
    }

    #[test]
    fn splits_title_header_and_sections_with_line_numbers() {
        let (d, p) = doc("# Name\nversion: 1\n\n## Models\n- a/b\n## Tasks\n- x\n");
        assert!(p.is_empty());
        assert_eq!(d.title, Some(("Name".to_string(), 1)));
        assert_eq!(d.header.len(), 1);
        assert_eq!(d.header[0].number, 2);
        assert_eq!(d.sections.len(), 2);
        assert_eq!(d.sections[0].name, "Models");
        assert_eq!(d.sections[0].line, 4);
        assert_eq!(d.sections[1].body[0].number, 7);
    }

    #[test]
    fn headings_inside_code_blocks_are_text() {
        let text =
            "# T\n## Tasks\n### one\n```md\n## not a section\n### not a task\n```\n## Metadata\n";
        let (d, p) = doc(text);
        assert!(p.is_empty());
        assert_eq!(d.sections.len(), 2);
        let body = &d.sections[0].body;
        assert!(body[2].fenced && body[2].heading().is_none());
        assert_eq!(body[2].text, "## not a section");
        assert_eq!(body[0].heading(), Some((3, "one")));
    }

    #[test]
    fn longer_fences_need_as_long_a_closing_fence() {
        let (d, p) = doc("# T\n## Tasks\n````\n```\n## still code\n````\n## Metadata\n");
        assert!(p.is_empty());
        assert_eq!(d.sections.len(), 2);
    }

    #[test]
    fn comments_disappear_but_not_inside_code() {
        let text = "# T\n<!-- a\nmulti-line\ncomment -->\n## System Prompt\nkeep <!-- cut --> this\n```\n<!-- kept -->\n```\n";
        let (d, p) = doc(text);
        assert!(p.is_empty());
        assert!(d.header.is_empty());
        let body: Vec<&str> = d.sections[0].body.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(body, ["keep  this", "```", "<!-- kept -->", "```"]);
    }

    #[test]
    fn unclosed_blocks_and_comments_are_problems() {
        let (_, p) = doc("# T\n## Tasks\n```\n## Metadata\n");
        let err = p.finish(()).unwrap_err();
        assert_eq!(err.problems[0].line, 3);
        assert_eq!(err.problems[0].kind, ProblemKind::Unclosed);
        let (_, p) = doc("# T\n<!-- open\n## Models\n");
        let err = p.finish(()).unwrap_err();
        assert_eq!(err.problems[0].line, 2);
    }
}
