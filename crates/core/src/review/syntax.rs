//! Syntax-aware colouring for diff lines: a small, line-at-a-time tokenizer that finds
//! comments, strings, numbers and keywords for the languages people most often review.
//!
//! It works on one line without state, because a diff shows lines out of their file: a block
//! comment or a multi-line string that starts outside the visible hunk is not known, and a
//! full parser would cost more than a frame may take. Unknown languages get no colours.

use std::ops::Range;

/// What a token is, for the theme to colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Token {
    /// A comment, to the end of the line.
    Comment,
    /// A string or character literal.
    Str,
    /// A number.
    Number,
    /// A keyword of the language.
    Keyword,
}

/// A language family: its comment marker, string quotes and keywords.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lang {
    line_comment: &'static [&'static str],
    quotes: &'static [char],
    keywords: &'static [&'static str],
}

const RUST: Lang = Lang {
    line_comment: &["//"],
    quotes: &['"'],
    keywords: &[
        "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum",
        "extern", "false", "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move",
        "mut", "pub", "ref", "return", "self", "Self", "static", "struct", "super", "trait",
        "true", "type", "unsafe", "use", "where", "while",
    ],
};

const PYTHON: Lang = Lang {
    line_comment: &["#"],
    quotes: &['"', '\''],
    keywords: &[
        "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
        "elif", "else", "except", "False", "finally", "for", "from", "global", "if", "import",
        "in", "is", "lambda", "None", "nonlocal", "not", "or", "pass", "raise", "return", "True",
        "try", "while", "with", "yield",
    ],
};

const C_LIKE: Lang = Lang {
    line_comment: &["//"],
    quotes: &['"', '\'', '`'],
    keywords: &[
        "abstract",
        "async",
        "await",
        "break",
        "case",
        "catch",
        "class",
        "const",
        "continue",
        "default",
        "defer",
        "do",
        "else",
        "enum",
        "export",
        "extends",
        "false",
        "final",
        "finally",
        "fn",
        "for",
        "func",
        "function",
        "go",
        "if",
        "implements",
        "import",
        "in",
        "interface",
        "let",
        "new",
        "nil",
        "null",
        "package",
        "private",
        "protected",
        "public",
        "return",
        "static",
        "struct",
        "switch",
        "this",
        "throw",
        "true",
        "try",
        "type",
        "typeof",
        "var",
        "void",
        "while",
        "yield",
    ],
};

const SHELL: Lang = Lang {
    line_comment: &["#"],
    quotes: &['"', '\''],
    keywords: &[
        "case", "do", "done", "elif", "else", "esac", "export", "fi", "for", "function", "if",
        "in", "local", "return", "then", "while",
    ],
};

const CONFIG: Lang = Lang {
    line_comment: &["#"],
    quotes: &['"', '\''],
    keywords: &["true", "false", "null"],
};

impl Lang {
    /// The language of a file, from its extension (or name); `None` when unknown.
    pub fn for_path(path: &str) -> Option<Lang> {
        let name = path.rsplit('/').next().unwrap_or(path);
        let ext = name.rsplit_once('.').map(|(_, e)| e).unwrap_or(name);
        Some(match ext.to_ascii_lowercase().as_str() {
            "rs" => RUST,
            "py" | "pyi" => PYTHON,
            "js" | "jsx" | "ts" | "tsx" | "mjs" | "cjs" | "go" | "c" | "h" | "cc" | "cpp"
            | "hpp" | "java" | "kt" | "kts" | "swift" | "cs" | "scala" | "dart" => C_LIKE,
            "sh" | "bash" | "zsh" => SHELL,
            "toml" | "yaml" | "yml" | "json" | "ini" | "cfg" => CONFIG,
            _ if name == "Makefile" || name == "Dockerfile" => SHELL,
            _ => return None,
        })
    }
}

/// The tokens of one line, in order, as byte ranges on char boundaries.
pub fn tokens(lang: Lang, line: &str) -> Vec<(Range<usize>, Token)> {
    let bytes = line.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let rest = &line[i..];
        if lang.line_comment.iter().any(|m| rest.starts_with(m)) {
            out.push((i..line.len(), Token::Comment));
            break;
        }
        let c = rest.chars().next().unwrap_or(' ');
        if lang.quotes.contains(&c) {
            let end = string_end(line, i, c);
            out.push((i..end, Token::Str));
            i = end;
            continue;
        }
        if c.is_ascii_digit() {
            let end = i + rest
                .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_' || ch == '.'))
                .unwrap_or(rest.len());
            out.push((i..end, Token::Number));
            i = end;
            continue;
        }
        if c.is_alphabetic() || c == '_' {
            let len = rest
                .find(|ch: char| !(ch.is_alphanumeric() || ch == '_'))
                .unwrap_or(rest.len());
            if lang.keywords.contains(&&rest[..len]) {
                out.push((i..i + len, Token::Keyword));
            }
            i += len;
            continue;
        }
        i += c.len_utf8();
    }
    out
}

/// Where the string starting with `quote` at `start` ends (after its closing quote, or the
/// end of the line); backslash escapes are skipped.
fn string_end(line: &str, start: usize, quote: char) -> usize {
    let mut escaped = false;
    for (offset, c) in line[start + quote.len_utf8()..].char_indices() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == quote {
            return start + quote.len_utf8() + offset + c.len_utf8();
        }
    }
    line.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(path: &str, line: &str) -> Vec<(String, Token)> {
        let lang = Lang::for_path(path).unwrap_or(CONFIG);
        tokens(lang, line)
            .into_iter()
            .map(|(r, t)| (line[r].to_string(), t))
            .collect()
    }

    #[test]
    fn rust_keywords_strings_numbers_and_comments() {
        assert_eq!(
            kinds(
                "src/a.rs",
                r#"    if count >= 10 { let s = "a \"b\" // c"; } // done"#
            ),
            vec![
                ("if".into(), Token::Keyword),
                ("10".into(), Token::Number),
                ("let".into(), Token::Keyword),
                (r#""a \"b\" // c""#.into(), Token::Str),
                ("// done".into(), Token::Comment),
            ]
        );
    }

    #[test]
    fn languages_by_extension_and_unknown_ones() {
        assert_eq!(
            kinds("x.py", "def f(): return None  # why"),
            vec![
                ("def".into(), Token::Keyword),
                ("return".into(), Token::Keyword),
                ("None".into(), Token::Keyword),
                ("# why".into(), Token::Comment),
            ]
        );
        assert!(Lang::for_path("notes.txt").is_none());
        assert!(Lang::for_path("web/app.TSX").is_some());
        assert!(Lang::for_path("Makefile").is_some());
    }

    #[test]
    fn unterminated_strings_and_unicode_stay_on_char_boundaries() {
        let line = "let s = \"héllo wörld";
        for (range, _) in tokens(RUST, line) {
            assert!(line.is_char_boundary(range.start) && line.is_char_boundary(range.end));
        }
        assert_eq!(
            kinds("a.rs", "let s = \"héllo").last().unwrap().1,
            Token::Str
        );
        // Identifiers that contain a keyword are not keywords.
        assert!(kinds("a.rs", "letter iffy").is_empty());
    }
}
