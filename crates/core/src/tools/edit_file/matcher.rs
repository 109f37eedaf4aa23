//! Finding where `old_string` is: exact first, then the fuzzy strategies in the spec's order.
//!
//! A wrong edit that succeeds is far worse than a failed one, so every fuzzy strategy must find
//! exactly one place; the first strategy that finds anything decides (one place: edit; several:
//! refuse as ambiguous). The strategies are cumulative normalisations, so a later one would find
//! a superset of the places an earlier one found. There is deliberately no similarity matching
//! (first and last lines equal with a "close enough" middle): that is how wrong edits succeed.

use std::ops::Range;

use memchr::memmem;

use super::lines::line_numbers;
use super::normalize::{Normalized, Rules};
use super::{indent, probe};

/// How `old_string` was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Strategy {
    /// Byte for byte.
    Exact,
    /// After turning `\r\n` into `\n` on both sides.
    LineEndings,
    /// After also dropping whitespace at the end of each line.
    TrailingWhitespace,
    /// After also mapping curly quotes, dashes and odd spaces to ASCII.
    Punctuation,
    /// The same lines with different indentation; `new_string` re-indented.
    Indentation,
    /// After stripping read_file's `{n:>6}\t` prefixes from every line.
    LineNumberPrefixes,
}

impl Strategy {
    /// Name recorded in the run's statistics.
    pub fn name(self) -> &'static str {
        match self {
            Self::Exact => "exact",
            Self::LineEndings => "line_endings",
            Self::TrailingWhitespace => "trailing_whitespace",
            Self::Punctuation => "punctuation",
            Self::Indentation => "indentation",
            Self::LineNumberPrefixes => "line_number_prefixes",
        }
    }

    /// What was done to find the match, for the model to read.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Exact => "matching exactly",
            Self::LineEndings => "normalising line endings (CRLF/LF)",
            Self::TrailingWhitespace => "ignoring trailing whitespace on each line",
            Self::Punctuation => {
                "normalising Unicode punctuation (curly quotes, dashes, non-breaking spaces)"
            }
            Self::Indentation => {
                "ignoring indentation (new_string was re-indented to match the file)"
            }
            Self::LineNumberPrefixes => "stripping read_file line-number prefixes",
        }
    }
}

/// One replacement in the file's body (after the BOM).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Splice {
    /// Bytes of the body to replace.
    pub range: Range<usize>,
    /// What goes there (line endings not yet adapted to the file).
    pub text: String,
}

/// A decided edit.
#[derive(Debug)]
pub(super) struct Plan {
    /// The strategy that found the match.
    pub strategy: Strategy,
    /// For line-number prefixes: which strategy matched the stripped string.
    pub inner: Option<Strategy>,
    /// Replacements, sorted and non-overlapping.
    pub splices: Vec<Splice>,
}

/// Why no edit was planned.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Miss {
    /// No strategy found `old_string`.
    NotFound,
    /// A strategy found it in several places.
    Ambiguous {
        /// The strategy that found several places.
        strategy: Strategy,
        /// 1-based first line of each place.
        lines: Vec<usize>,
    },
}

/// Decides where to edit `body` (a file without its BOM).
pub(super) fn plan(body: &[u8], old: &str, new: &str, replace_all: bool) -> Result<Plan, Miss> {
    let exact = exact_matches(body, old);
    if exact.len() == 1 || (replace_all && !exact.is_empty()) {
        return Ok(plan_from(Strategy::Exact, exact, new));
    }
    if !exact.is_empty() {
        return Err(ambiguous(Strategy::Exact, body, &exact));
    }
    match fuzzy(body, old, new) {
        Err(Miss::NotFound) => {}
        other => return other,
    }
    let Some(stripped_old) = strip_line_numbers(old) else {
        return Err(Miss::NotFound);
    };
    let stripped_new = strip_line_numbers(new).unwrap_or_else(|| new.to_string());
    let found = match exact_matches(body, &stripped_old) {
        m if m.len() == 1 => Ok(plan_from(Strategy::Exact, m, &stripped_new)),
        m if m.len() > 1 => Err(ambiguous(Strategy::Exact, body, &m)),
        _ => fuzzy(body, &stripped_old, &stripped_new),
    };
    match found {
        Ok(p) => Ok(Plan {
            strategy: Strategy::LineNumberPrefixes,
            inner: (p.strategy != Strategy::Exact).then_some(p.strategy),
            splices: p.splices,
        }),
        Err(Miss::Ambiguous { lines, .. }) => Err(Miss::Ambiguous {
            strategy: Strategy::LineNumberPrefixes,
            lines,
        }),
        Err(Miss::NotFound) => Err(Miss::NotFound),
    }
}

fn exact_matches(body: &[u8], old: &str) -> Vec<Range<usize>> {
    if old.is_empty() {
        return Vec::new();
    }
    memmem::find_iter(body, old.as_bytes())
        .map(|s| s..s + old.len())
        .collect()
}

fn plan_from(strategy: Strategy, ranges: Vec<Range<usize>>, new: &str) -> Plan {
    Plan {
        strategy,
        inner: None,
        splices: ranges
            .into_iter()
            .map(|range| Splice {
                range,
                text: new.to_string(),
            })
            .collect(),
    }
}

fn ambiguous(strategy: Strategy, body: &[u8], ranges: &[Range<usize>]) -> Miss {
    let starts: Vec<usize> = ranges.iter().map(|r| r.start).collect();
    Miss::Ambiguous {
        strategy,
        lines: line_numbers(body, &starts),
    }
}

/// The fuzzy strategies in order; the first that finds anything decides.
fn fuzzy(body: &[u8], old: &str, new: &str) -> Result<Plan, Miss> {
    let old_non_ascii = !old.is_ascii();
    let steps = [
        (
            Strategy::LineEndings,
            Rules {
                endings: true,
                trailing_ws: false,
                punctuation: false,
            },
        ),
        (
            Strategy::TrailingWhitespace,
            Rules {
                endings: true,
                trailing_ws: true,
                punctuation: false,
            },
        ),
        (
            Strategy::Punctuation,
            Rules {
                endings: true,
                trailing_ws: true,
                punctuation: true,
            },
        ),
    ];
    let body_has_cr = memchr::memchr(b'\r', body).is_some();
    let mut body_non_ascii = None;
    for (strategy, rules) in steps {
        if strategy == Strategy::LineEndings && !body_has_cr && !old.contains('\r') {
            continue;
        }
        if strategy == Strategy::Punctuation
            && !old_non_ascii
            && !*body_non_ascii.get_or_insert_with(|| !body.is_ascii())
        {
            continue;
        }
        let found = normalized_matches(body, old, rules);
        match found.len() {
            0 => continue,
            1 => return Ok(plan_from(strategy, found, new)),
            _ => return Err(ambiguous(strategy, body, &found)),
        }
    }
    match indent::find(body, old, new).as_slice() {
        [] => Err(Miss::NotFound),
        [(range, text)] => Ok(Plan {
            strategy: Strategy::Indentation,
            inner: None,
            splices: vec![Splice {
                range: range.clone(),
                text: text.clone(),
            }],
        }),
        many => {
            let ranges: Vec<Range<usize>> = many.iter().map(|(r, _)| r.clone()).collect();
            Err(ambiguous(Strategy::Indentation, body, &ranges))
        }
    }
}

/// Matches of `old` in `body` when both are normalised by `rules`, as original byte ranges.
/// Only windows around a literal probe are normalised (see [`probe`]); the whole file when the
/// probe is too common.
fn normalized_matches(body: &[u8], old: &str, rules: Rules) -> Vec<Range<usize>> {
    let needle = Normalized::new(old.as_bytes(), rules);
    if needle.text().is_empty() {
        return Vec::new();
    }
    let avoid = if rules.punctuation {
        probe::PUNCT_OUTPUTS
    } else {
        b""
    };
    let lines = memchr::memchr_iter(b'\n', needle.text()).count() + 1;
    let windows = probe::longest_run(needle.text(), avoid)
        .and_then(|run| probe::windows(body, run, lines, lines));
    let Some(windows) = windows else {
        return Normalized::new(body, rules).find(&needle);
    };
    windows
        .into_iter()
        .flat_map(|w| {
            let found = Normalized::new(&body[w.clone()], rules).find(&needle);
            found
                .into_iter()
                .map(move |r| r.start + w.start..r.end + w.start)
        })
        .collect()
}

/// `text` without read_file's line-number prefixes (`{n:>6}\t`), or `None` unless every line
/// carries one.
pub(super) fn strip_line_numbers(text: &str) -> Option<String> {
    let (body, ends_nl) = match text.strip_suffix('\n') {
        Some(b) => (b, true),
        None => (text, false),
    };
    let mut out = String::with_capacity(text.len());
    for (i, line) in body.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let rest = line.trim_start_matches(' ');
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        out.push_str(rest[digits..].strip_prefix('\t')?);
    }
    if ends_nl {
        out.push('\n');
    }
    Some(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn apply(body: &str, old: &str, new: &str) -> (String, Strategy) {
        let p = plan(body.as_bytes(), old, new, false).unwrap();
        let mut out = body.to_string();
        for s in p.splices.iter().rev() {
            out.replace_range(s.range.clone(), &s.text);
        }
        (out, p.strategy)
    }

    #[test]
    fn exact_once() {
        assert_eq!(apply("a b c", "b", "x"), ("a x c".into(), Strategy::Exact));
    }

    #[test]
    fn exact_twice_is_ambiguous_with_lines() {
        let e = plan(b"x\ny\nx\n", "x", "z", false).unwrap_err();
        assert_eq!(
            e,
            Miss::Ambiguous {
                strategy: Strategy::Exact,
                lines: vec![1, 3]
            }
        );
        let p = plan(b"x\ny\nx\n", "x", "z", true).unwrap();
        assert_eq!(p.splices.len(), 2);
    }

    #[test]
    fn line_endings() {
        let (out, s) = apply("a\r\nb\r\nc\r\n", "a\nb\n", "q\n");
        assert_eq!(s, Strategy::LineEndings);
        assert_eq!(out, "q\nc\r\n");
    }

    #[test]
    fn trailing_whitespace() {
        let (out, s) = apply("let a = 1;   \nlet b = 2;\n", "let a = 1;\nlet b = 2;", "x");
        assert_eq!(s, Strategy::TrailingWhitespace);
        assert_eq!(out, "x\n");
    }

    #[test]
    fn punctuation() {
        let (out, s) = apply("say(\u{201C}hi\u{201D});\n", "say(\"hi\");", "say(\"yo\");");
        assert_eq!(s, Strategy::Punctuation);
        assert_eq!(out, "say(\"yo\");\n");
    }

    #[test]
    fn indentation() {
        let (out, s) = apply(
            "\tif a {\n\t\tb();\n\t}\n",
            "if a {\n    b();\n}\n",
            "c();\n",
        );
        assert_eq!(s, Strategy::Indentation);
        assert_eq!(out, "\tc();\n");
    }

    #[test]
    fn line_number_prefixes() {
        let (out, s) = apply(
            "one\ntwo\nthree\n",
            "     2\ttwo\n     3\tthree\n",
            "     2\tTWO\n     3\tthree\n",
        );
        assert_eq!(s, Strategy::LineNumberPrefixes);
        assert_eq!(out, "one\nTWO\nthree\n");
    }

    #[test]
    fn prefixes_need_every_line() {
        assert_eq!(strip_line_numbers("  1\ta\n  2\tb\n").unwrap(), "a\nb\n");
        assert_eq!(strip_line_numbers("  1\ta\nb"), None);
        assert_eq!(strip_line_numbers("a\tb"), None);
    }

    #[test]
    fn two_fuzzy_places_are_refused() {
        let e = plan(b"a  \nb\na \nb\n", "a\nb", "x", false).unwrap_err();
        assert_eq!(
            e,
            Miss::Ambiguous {
                strategy: Strategy::TrailingWhitespace,
                lines: vec![1, 3]
            }
        );
    }

    #[test]
    fn anchor_only_similarity_is_refused() {
        let body = b"fn f() {\n    let a = compute(1);\n    a + 1\n}\n";
        let old = "fn f() {\n    let a = compute(2);\n    a + 2\n}\n";
        assert_eq!(plan(body, old, "x", false).unwrap_err(), Miss::NotFound);
    }
}
