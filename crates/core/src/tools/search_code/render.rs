//! Printing results in grep format: `path:line:text` for matches, `path-line-text` for
//! context, `--` between groups that do not touch, lines cut to the line cap.

use super::collect::FileHits;

/// The line as printed: terminator removed, decoded (invalid UTF-8 replaced), and cut to
/// `max_chars` characters. When a cut line's match lies beyond the cut, the shown window starts
/// a little before the match (`at` is its byte offset) instead of at the start of the line, so
/// a hit in a minified file is still visible.
pub(super) fn printable(bytes: &[u8], at: usize, max_chars: usize) -> String {
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    let text = String::from_utf8_lossy(bytes);
    // Cheap pre-check: a line of at most max_chars bytes has at most max_chars characters.
    if bytes.len() <= max_chars {
        return text.into_owned();
    }
    let total = text.chars().count();
    if total <= max_chars {
        return text.into_owned();
    }
    let match_char = String::from_utf8_lossy(&bytes[..at.min(bytes.len())])
        .chars()
        .count();
    let lead = max_chars / 5;
    let start = if match_char + lead < max_chars {
        0
    } else {
        (match_char - lead).min(total - max_chars)
    };
    let shown: String = text.chars().skip(start).take(max_chars).collect();
    let before = if start > 0 { "..." } else { "" };
    format!("{before}{shown}... [line truncated, {total} chars]")
}

/// The whole result: files in path order, their lines in file order, `--` between groups
/// when context was asked for, and the truncation notice when the cap cut the search short.
pub(super) fn render(files: &[FileHits], with_context: bool, truncated: bool) -> String {
    let mut out = String::new();
    for (i, file) in files.iter().enumerate() {
        if with_context && i > 0 {
            out.push_str("--\n");
        }
        for line in &file.lines {
            if with_context && line.break_before {
                out.push_str("--\n");
            }
            let sep = if line.is_match { ':' } else { '-' };
            out.push_str(&file.rel);
            out.push(sep);
            out.push_str(&line.number.to_string());
            out.push(sep);
            out.push_str(&line.text);
            out.push('\n');
        }
    }
    if truncated {
        out.push_str("[truncated: more matches; narrow the pattern or path]\n");
    }
    out.truncate(out.trim_end().len());
    out
}

#[cfg(test)]
mod tests {
    use super::super::collect::Line;
    use super::*;

    #[test]
    fn short_lines_lose_only_their_terminator() {
        assert_eq!(printable(b"let x = 1;\r\n", 0, 500), "let x = 1;");
        assert_eq!(printable(b"caf\xC3\xA9\n", 0, 500), "caf\u{e9}");
        assert_eq!(printable(b"bad \xFF byte", 0, 500), "bad \u{FFFD} byte");
    }

    #[test]
    fn long_lines_are_cut_around_the_match() {
        let mut line = "a".repeat(1000);
        line.push_str("NEEDLE");
        line.push_str(&"b".repeat(1000));
        let head = printable(line.as_bytes(), 0, 50);
        assert_eq!(
            head,
            format!("{}... [line truncated, 2006 chars]", "a".repeat(50))
        );
        let around = printable(line.as_bytes(), 1000, 50);
        assert!(
            around.starts_with(&format!("...{}NEEDLE", "a".repeat(10))),
            "{around}"
        );
        assert!(around.ends_with("... [line truncated, 2006 chars]"));
        let at_end = printable(b"xxxxxxxxxxxxxxxxxxxxyz", 21, 10);
        assert_eq!(at_end, "...xxxxxxxxyz... [line truncated, 22 chars]");
    }

    fn line(number: u64, is_match: bool, break_before: bool, text: &str) -> Line {
        Line {
            number,
            is_match,
            break_before,
            text: text.to_string(),
        }
    }

    #[test]
    fn grep_format_with_separators() {
        let files = [
            FileHits {
                rel: "a.rs".into(),
                lines: vec![
                    line(1, false, false, "ctx"),
                    line(2, true, false, "hit"),
                    line(9, true, true, "hit again"),
                ],
            },
            FileHits {
                rel: "b/c.rs".into(),
                lines: vec![line(4, true, false, "hit")],
            },
        ];
        assert_eq!(
            render(&files, true, false),
            "a.rs-1-ctx\na.rs:2:hit\n--\na.rs:9:hit again\n--\nb/c.rs:4:hit"
        );
        assert_eq!(
            render(&files[1..], false, true),
            "b/c.rs:4:hit\n[truncated: more matches; narrow the pattern or path]"
        );
    }
}
