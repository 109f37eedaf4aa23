//! The indentation-flexible strategy: the same lines, indented differently.
//!
//! Models often re-indent what they quote (spaces for a tab-indented file, or a block copied
//! without its outer indentation). A window of file lines matches when every line has the same
//! content (trimmed, punctuation normalised) and the indentation has the same *shape*: lines
//! indented relative to the block's common indentation in the old string are indented by a
//! proportional amount in the file (4 spaces per level against one tab per level, say).
//! `new_string` is then re-indented with the file's base indentation and its tabs or spaces.
//!
//! A first line quoted without indentation while later lines have some is taken as copied from
//! after the indentation: its own indentation is not compared and the file's is kept.
//!
//! The scan is linear and usually tiny: a literal piece of one old line is searched with
//! `memmem` ([`probe`]), and only windows of lines around its occurrences are examined. Inside a
//! window, one pass records where each distinct old line occurs, and only the positions of the
//! rarest one are verified as candidate matches.

use std::borrow::Cow;
use std::ops::Range;

use super::lines::{FastMap, Lines, TAB_COLS, indent, key, split, trim};
use super::probe;

struct OldLine<'a> {
    key: Cow<'a, [u8]>,
    blank: bool,
    cols: usize,
}

/// How the file indents: with tabs, or with spaces of some unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    Tabs,
    Spaces(usize),
}

/// What a matched window's own indentation shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shown {
    Tabs,
    Spaces,
}

/// A verified window and its indentation geometry.
struct Window {
    first: usize,
    old_base: usize,
    file_base_cols: usize,
    /// The base line's indentation bytes (reused verbatim for re-indented lines).
    base_indent: Range<usize>,
    /// Old relative columns to file relative columns, when the window shows it.
    ratio: Option<(usize, usize)>,
    shown: Option<Shown>,
}

/// Every place in `body` where `old` matches up to indentation: the byte range to replace and
/// `new` re-indented for that place. Only windows around a literal probe are examined.
pub(super) fn find(body: &[u8], old: &str, new: &str) -> Vec<(Range<usize>, String)> {
    let (old_text, old_nl) = split(old);
    let olds: Vec<OldLine<'_>> = old_text
        .iter()
        .map(|l| {
            let k = key(l.as_bytes());
            OldLine {
                blank: k.is_empty(),
                key: k,
                cols: indent(l.as_bytes()).1,
            }
        })
        .collect();
    let k = olds.len();
    if olds.iter().all(|l| l.blank) {
        return Vec::new();
    }
    let free_first = k > 1
        && !olds[0].blank
        && olds[0].cols == 0
        && olds[1..].iter().any(|l| !l.blank && l.cols > 0);
    let constrained: Vec<usize> = (0..k)
        .filter(|&j| !olds[j].blank && (j > 0 || !free_first))
        .collect();

    let probe = olds
        .iter()
        .enumerate()
        .filter_map(|(j, l)| probe::longest_run(&l.key, b" \t'\"-").map(|run| (j, run)))
        .max_by_key(|(_, run)| run.len());
    let windows = probe
        .and_then(|(j, run)| probe::windows(body, run, j + 1, k - j + 1))
        .unwrap_or_else(|| std::iter::once(0..body.len()).collect());
    let mut whole_file_style = None;
    let mut found = Vec::new();
    for w in windows {
        let slice = &body[w.clone()];
        let lines = Lines::new(slice);
        if k > lines.len() {
            continue;
        }
        let Some((anchor, positions)) = rarest_line(&lines, &olds) else {
            continue;
        };
        let matched = positions
            .into_iter()
            .filter_map(|p| p.checked_sub(anchor))
            .filter(|&s| s + k <= lines.len())
            .filter_map(|s| verify(&lines, &olds, &constrained, s));
        for win in matched {
            let last = lines.span(win.first + k - 1);
            let first = lines.span(win.first);
            let start = if free_first {
                first.start + indent(lines.content(win.first)).0
            } else {
                first.start
            };
            let end = if old_nl { last.next } else { last.end };
            let mut file_style =
                || *whole_file_style.get_or_insert_with(|| file_style(&Lines::new(body)));
            let style = match (win.shown, win.ratio) {
                (Some(Shown::Tabs), _) => Style::Tabs,
                // The ratio carries the scale; the unit is not needed.
                (Some(Shown::Spaces), Some(_)) => Style::Spaces(TAB_COLS),
                (Some(Shown::Spaces), None) => match file_style() {
                    Style::Spaces(u) => Style::Spaces(u),
                    Style::Tabs => Style::Spaces(TAB_COLS),
                },
                (None, _) => file_style(),
            };
            let text = reindent(slice, new, &win, style, free_first, old);
            found.push((w.start + start..w.start + end, text));
        }
    }
    found
}

/// The old line whose key occurs least often in the file, and where it occurs. `None` when some
/// old line occurs nowhere (then no window can match).
fn rarest_line(lines: &Lines<'_>, olds: &[OldLine<'_>]) -> Option<(usize, Vec<usize>)> {
    let mut wanted: FastMap<&[u8], Vec<usize>> = FastMap::default();
    for l in olds.iter().filter(|l| !l.blank) {
        wanted.entry(&l.key).or_default();
    }
    let min_len = wanted.keys().map(|k| k.len()).min().unwrap_or(0);
    let max_len = wanted.keys().map(|k| k.len()).max().unwrap_or(0);
    let mut len_wanted = vec![false; max_len + 1];
    for k in wanted.keys() {
        len_wanted[k.len()] = true;
    }
    for i in 0..lines.len() {
        let raw = lines.content(i);
        // Normalising only ever shortens a line, so short lines cannot match.
        if raw.len() < min_len {
            continue;
        }
        let k = key(raw);
        if k.len() > max_len || !len_wanted[k.len()] {
            continue;
        }
        if let Some(v) = wanted.get_mut(&*k) {
            v.push(i);
        }
    }
    let (rare_key, positions) = wanted.into_iter().min_by_key(|(_, v)| v.len())?;
    if positions.is_empty() {
        return None;
    }
    let anchor = olds.iter().position(|l| !l.blank && *l.key == *rare_key)?;
    Some((anchor, positions))
}

/// Checks the window starting at line `s`: contents equal, indentation of the same shape.
fn verify(
    lines: &Lines<'_>,
    olds: &[OldLine<'_>],
    constrained: &[usize],
    s: usize,
) -> Option<Window> {
    for (j, old) in olds.iter().enumerate() {
        let file_key = key(lines.content(s + j));
        if old.blank != file_key.is_empty() || (!old.blank && *file_key != *old.key) {
            return None;
        }
    }
    let old_base = constrained.iter().map(|&j| olds[j].cols).min()?;
    let file_indents: Vec<(usize, usize)> = constrained
        .iter()
        .map(|&j| indent(lines.content(s + j)))
        .collect();
    let (base_pos, &(base_len, file_base_cols)) = file_indents
        .iter()
        .enumerate()
        .min_by_key(|(_, (_, cols))| *cols)?;
    let mut ratio: Option<(usize, usize)> = None;
    for (&j, &(_, cols)) in constrained.iter().zip(&file_indents) {
        let ro = olds[j].cols - old_base;
        let rf = cols - file_base_cols;
        if (ro == 0) != (rf == 0) {
            return None;
        }
        if ro > 0 {
            match ratio {
                None => ratio = Some((ro, rf)),
                Some((a, b)) if ro * b != rf * a => return None,
                Some(_) => {}
            }
        }
    }
    let mut shown = None;
    for (&j, &(len, _)) in constrained.iter().zip(&file_indents) {
        let ind = &lines.content(s + j)[..len];
        if ind.contains(&b'\t') {
            shown = Some(Shown::Tabs);
            break;
        }
        if !ind.is_empty() {
            shown = Some(Shown::Spaces);
        }
    }
    let base_line = lines.span(s + constrained[base_pos]);
    Some(Window {
        first: s,
        old_base,
        file_base_cols,
        base_indent: base_line.start..base_line.start + base_len,
        ratio,
        shown,
    })
}

/// The file's dominant indentation, for when the matched window has none to copy.
fn file_style(lines: &Lines<'_>) -> Style {
    let (mut tabs, mut spaces, mut twos) = (0usize, 0usize, 0usize);
    for i in 0..lines.len() {
        let line = lines.content(i);
        match line.first() {
            Some(b'\t') => tabs += 1,
            Some(b' ') if !trim(line).is_empty() => {
                spaces += 1;
                if indent(line).1 % 4 == 2 {
                    twos += 1;
                }
            }
            _ => {}
        }
    }
    if tabs > spaces {
        Style::Tabs
    } else if twos * 10 > spaces {
        Style::Spaces(2)
    } else {
        Style::Spaces(4)
    }
}

fn render(cols: usize, style: Style) -> String {
    match style {
        Style::Tabs => "\t".repeat(cols / TAB_COLS) + &" ".repeat(cols % TAB_COLS),
        Style::Spaces(_) => " ".repeat(cols),
    }
}

/// `new` with each line's indentation moved from the old string's base to the file's.
fn reindent(
    body: &[u8],
    new: &str,
    w: &Window,
    style: Style,
    free_first: bool,
    old: &str,
) -> String {
    let (new_lines, new_nl) = split(new);
    let base = String::from_utf8_lossy(&body[w.base_indent.clone()]).into_owned();
    let old_unit = old_unit(old, new, w.old_base, &new_lines);
    let file_unit = match style {
        Style::Tabs => TAB_COLS,
        Style::Spaces(u) => u,
    };
    let scale = |rel: isize| -> isize {
        match w.ratio {
            Some((ro, rf)) => rel * rf as isize / ro as isize,
            None => rel * file_unit as isize / old_unit as isize,
        }
    };
    let mut out = Vec::with_capacity(new_lines.len());
    for (t, line) in new_lines.iter().enumerate() {
        let bytes = line.as_bytes();
        if t == 0 && free_first {
            out.push((*line).to_string());
            continue;
        }
        if trim(bytes).is_empty() {
            out.push(String::new());
            continue;
        }
        let (len, cols) = indent(bytes);
        let content = &line[len..];
        let scaled = scale(cols as isize - w.old_base as isize);
        let prefix = if scaled >= 0 {
            format!("{base}{}", render(scaled as usize, style))
        } else {
            let total = (w.file_base_cols as isize + scaled).max(0) as usize;
            render(total, style)
        };
        out.push(prefix + content);
    }
    let mut text = out.join("\n");
    if new_nl {
        text.push('\n');
    }
    text
}

/// The old string's indentation unit, for when the window cannot show the ratio: a tab if the
/// strings indent with tabs, else the smallest relative indentation used in `new`.
fn old_unit(old: &str, new: &str, old_base: usize, new_lines: &[&str]) -> usize {
    let uses_tabs = |s: &str| {
        split(s)
            .0
            .iter()
            .any(|l| l.as_bytes()[..indent(l.as_bytes()).0].contains(&b'\t'))
    };
    if uses_tabs(old) || uses_tabs(new) {
        return TAB_COLS;
    }
    new_lines
        .iter()
        .filter(|l| !trim(l.as_bytes()).is_empty())
        .map(|l| indent(l.as_bytes()).1.abs_diff(old_base))
        .filter(|&d| d > 0)
        .min()
        .unwrap_or(1)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn run(file: &str, old: &str, new: &str) -> Vec<(Range<usize>, String)> {
        find(file.as_bytes(), old, new)
    }

    fn apply(file: &str, old: &str, new: &str) -> String {
        match run(file, old, new).as_slice() {
            [(range, text)] => {
                format!("{}{}{}", &file[..range.start], text, &file[range.end..])
            }
            other => panic!("expected one match, got {other:?}"),
        }
    }

    #[test]
    fn spaces_against_tabs_gets_tabs() {
        let file = "fn a() {\n\tif x {\n\t\ty();\n\t}\n}\n";
        let old = "    if x {\n        y();\n    }\n";
        let new = "    if x {\n        y();\n        z();\n    }\n";
        assert_eq!(
            apply(file, old, new),
            "fn a() {\n\tif x {\n\t\ty();\n\t\tz();\n\t}\n}\n"
        );
    }

    #[test]
    fn dedented_quote_is_reindented() {
        let file = "class A:\n    def f(self):\n        return 1\n";
        let old = "def f(self):\n    return 1";
        let new = "def f(self):\n    x = 2\n    return x";
        assert_eq!(
            apply(file, old, new),
            "class A:\n    def f(self):\n        x = 2\n        return x\n"
        );
    }

    #[test]
    fn first_line_copied_after_its_indentation() {
        let file = "\tfn b() {\n\t\tone();\n\t}\n";
        let old = "fn b() {\n        one();\n    }";
        let new = "fn b() {\n        two();\n    }";
        assert_eq!(apply(file, old, new), "\tfn b() {\n\t\ttwo();\n\t}\n");
    }

    #[test]
    fn different_shape_is_refused() {
        let file = "a\n    b\nc\n";
        assert!(run(file, "a\nb\nc\n", "x").is_empty());
    }

    #[test]
    fn two_windows_are_ambiguous() {
        let file = "\tx();\n\ty();\n\n\t\tx();\n\t\ty();\n";
        let found = run(file, "  x();\n  y();\n", "z();\n");
        let starts: Vec<usize> = found.iter().map(|(r, _)| r.start).collect();
        assert_eq!(starts, vec![0, file.find("\t\tx").unwrap()]);
    }

    #[test]
    fn missing_line_stops_early() {
        assert!(run("a\nb\n", "  a\n  q\n", "x").is_empty());
    }

    #[test]
    fn flat_block_takes_file_unit_for_new_nesting() {
        let file = "fn f() {\n\tlet a = 1;\n}\n";
        let old = "    let a = 1;";
        let new = "    if c {\n        let a = 1;\n    }";
        assert_eq!(
            apply(file, old, new),
            "fn f() {\n\tif c {\n\t\tlet a = 1;\n\t}\n}\n"
        );
    }
}
