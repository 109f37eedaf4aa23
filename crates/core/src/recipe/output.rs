//! `## Output Processing`: how each tool's result is cut before the model reads it.
//!
//! Most tools already cut their own output (read_file pages, bash keeps head and tail...). A
//! rule that matches what a tool does natively is handed to the tool as its limit (see
//! [`super::Recipe::tool_limits`]); anything the tool cannot do itself (another truncation
//! mode, a byte limit on a tool that only counts lines) is applied afterwards to the result
//! text by [`OutputRule::apply`], so every rule takes effect and none is silently dropped.
//!
//! Two spellings are read: `tool: max_lines=N, max_bytes=50KB, truncation=head` lines, and
//! Errata's `### tool` subsections with one `key: value` per line. A rule only changes the keys
//! it names; the others keep the built-in value.

use std::collections::BTreeMap;

use super::lists::known_tool;
use super::model::{Choice, OutputRule, Truncation};
use super::parse::Section;
use super::problems::{ProblemKind, did_you_mean, list};
use super::sections::{Ctx, SectionId, assignments, items, key_value, subsections};
use super::values::{self, Value};

/// The keys of a rule.
const KEYS: &[&str] = &["max_lines", "max_bytes", "truncation"];

/// What a tool does by itself: which limits it applies and which part it keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Native {
    /// The tool has a line (or entry, or match) limit.
    pub lines: bool,
    /// The tool has a byte limit.
    pub bytes: bool,
    /// The part the tool keeps.
    pub truncation: Truncation,
}

/// The built-in cutting of each tool.
pub(crate) fn native(tool: &str) -> Native {
    let (lines, bytes) = match tool {
        "read_file" | "bash" => (true, true),
        "search_code" | "search_files" | "list_directory" => (true, false),
        "web_fetch" => (false, true),
        _ => (false, false),
    };
    Native {
        lines,
        bytes,
        truncation: if tool == "bash" {
            Truncation::HeadTail
        } else {
            Truncation::Head
        },
    }
}

impl OutputRule {
    /// A rule that changes nothing for `tool` (no limits, its own truncation).
    pub fn unlimited(tool: &str) -> OutputRule {
        OutputRule {
            max_lines: None,
            max_bytes: None,
            truncation: native(tool).truncation,
        }
    }

    /// Whether the tool `tool` can apply this rule by itself (through its limits).
    pub fn is_native_for(&self, tool: &str) -> bool {
        let n = native(tool);
        self.truncation == n.truncation
            && (self.max_lines.is_none() || n.lines)
            && (self.max_bytes.is_none() || n.bytes)
    }

    /// Cuts `text` to the rule: lines first, then bytes (never inside a character), keeping
    /// the head, the tail or both, with a note saying how much was left out. Notes are not
    /// counted against the limits.
    pub fn apply(&self, text: &str) -> String {
        let mut out = match self.max_lines {
            Some(max) => cut_lines(text, max, self.truncation),
            None => text.to_string(),
        };
        if let Some(max) = self.max_bytes
            && out.len() > max
        {
            out = cut_bytes(&out, max, self.truncation);
        }
        out
    }
}

fn cut_lines(text: &str, max: usize, how: Truncation) -> String {
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() <= max {
        return text.to_string();
    }
    let omitted = lines.len() - max;
    match how {
        Truncation::Head => format!(
            "{}\n[... {omitted} more lines not shown ...]",
            lines[..max].join("\n")
        ),
        Truncation::Tail => format!(
            "[... {omitted} earlier lines not shown ...]\n{}",
            lines[lines.len() - max..].join("\n")
        ),
        Truncation::HeadTail => {
            let head = max.div_ceil(2);
            let tail = max - head;
            format!(
                "{}\n[... {omitted} lines omitted ...]\n{}",
                lines[..head].join("\n"),
                lines[lines.len() - tail..].join("\n")
            )
        }
    }
}

fn floor_char(text: &str, mut i: usize) -> usize {
    while i > 0 && !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_char(text: &str, mut i: usize) -> usize {
    while i < text.len() && !text.is_char_boundary(i) {
        i += 1;
    }
    i
}

fn cut_bytes(text: &str, max: usize, how: Truncation) -> String {
    match how {
        Truncation::Head => {
            let end = floor_char(text, max);
            format!(
                "{}\n[... {} more bytes not shown ...]",
                &text[..end],
                text.len() - end
            )
        }
        Truncation::Tail => {
            let start = ceil_char(text, text.len() - max);
            format!(
                "[... {start} earlier bytes not shown ...]\n{}",
                &text[start..]
            )
        }
        Truncation::HeadTail => {
            let head = floor_char(text, max.div_ceil(2));
            let tail = ceil_char(text, text.len() - (max - max.div_ceil(2)));
            format!(
                "{}\n[... {} bytes omitted ...]\n{}",
                &text[..head],
                tail - head,
                &text[tail..]
            )
        }
    }
}

/// Reads `## Output Processing` into `rules`, changing only the keys it names.
pub(crate) fn read(section: &Section, rules: &mut BTreeMap<String, OutputRule>, ctx: &mut Ctx) {
    let (lead, subs) = subsections(section);
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut claim = |tool: &str, line: usize, ctx: &mut Ctx| -> bool {
        if !known_tool(tool, line, ctx) {
            return false;
        }
        if let Some(first) = seen.get(tool) {
            ctx.problem(
                line,
                ProblemKind::DuplicateEntry,
                format!(
                    "`{tool}` already has a rule at line {first}; put all its keys in one rule"
                ),
            );
            return false;
        }
        seen.insert(tool.to_string(), line);
        true
    };
    for item in items(&lead, SectionId::OutputProcessing, ctx) {
        let Some((tool, rest)) = item.text.split_once(':') else {
            ctx.problem(
                item.line,
                ProblemKind::Syntax,
                format!(
                    "`{}` is not a rule; write `tool: max_lines=200, max_bytes=50KB, truncation=head_tail`",
                    item.text
                ),
            );
            continue;
        };
        let tool = tool.trim();
        if !claim(tool, item.line, ctx) {
            continue;
        }
        let mut rule = rules
            .get(tool)
            .copied()
            .unwrap_or_else(|| OutputRule::unlimited(tool));
        let mut keys_seen = Vec::new();
        let pairs = assignments(rest);
        if pairs.is_empty() {
            ctx.problem(
                item.line,
                ProblemKind::MissingValue,
                format!("no settings for `{tool}`; write `{tool}: max_lines=200`"),
            );
        }
        for pair in pairs {
            match pair {
                Ok((key, value)) => {
                    set(&mut rule, tool, &key, value, item.line, &mut keys_seen, ctx)
                }
                Err(part) => ctx.problem(
                    item.line,
                    ProblemKind::Syntax,
                    format!("`{part}` is not `key=value`; keys: {}", list(KEYS)),
                ),
            }
        }
        rules.insert(tool.to_string(), rule);
    }
    for sub in subs {
        let tool = sub.name.trim().to_string();
        if !claim(&tool, sub.line, ctx) {
            continue;
        }
        let mut rule = rules
            .get(&tool)
            .copied()
            .unwrap_or_else(|| OutputRule::unlimited(&tool));
        let mut keys_seen = Vec::new();
        for item in items(&sub.body, SectionId::OutputProcessing, ctx) {
            match key_value(&item.text) {
                Some((key, value)) => set(
                    &mut rule,
                    &tool,
                    &key,
                    value,
                    item.line,
                    &mut keys_seen,
                    ctx,
                ),
                None => ctx.problem(
                    item.line,
                    ProblemKind::Syntax,
                    format!("`{}` is not `key: value`; keys: {}", item.text, list(KEYS)),
                ),
            }
        }
        rules.insert(tool, rule);
    }
}

fn set(
    rule: &mut OutputRule,
    tool: &str,
    key: &str,
    value: &str,
    line: usize,
    seen: &mut Vec<String>,
    ctx: &mut Ctx,
) {
    if seen.iter().any(|k| k == key) {
        ctx.problem(
            line,
            ProblemKind::DuplicateKey,
            format!("`{key}` is given twice for `{tool}`; keep one"),
        );
        return;
    }
    seen.push(key.to_string());
    let (result, accepts): (Value<()>, String) = match key {
        "max_lines" => (
            values::optional(value, |t| values::at_least(t, 1)).map(|v| rule.max_lines = v),
            "a whole number of at least 1, or `none`".into(),
        ),
        "max_bytes" => (
            values::optional(value, values::size).map(|v| rule.max_bytes = v),
            format!("{}, or `none`", values::SIZE),
        ),
        "truncation" => (
            values::choice(value).map(|v| rule.truncation = v),
            values::choices::<Truncation>(),
        ),
        _ => {
            ctx.problem(
                line,
                ProblemKind::UnknownKey,
                format!(
                    "unknown key `{key}` for `{tool}` in ## Output Processing{}; keys: {}",
                    did_you_mean(key, KEYS.iter().copied()),
                    list(KEYS)
                ),
            );
            return;
        }
    };
    if let Err(e) = result {
        ctx.problem(
            line,
            e.kind,
            format!("`{key}` for `{tool}`: {}; accepted: {accepts}", e.reason),
        );
    }
}

/// Writes one rule as `max_lines=N, max_bytes=S, truncation=T` (every key, so it reads back
/// the same over any defaults).
pub(crate) fn format_rule(rule: &OutputRule) -> String {
    format!(
        "max_lines={}, max_bytes={}, truncation={}",
        rule.max_lines
            .map_or_else(|| "none".into(), |n| n.to_string()),
        rule.max_bytes
            .map_or_else(|| "none".into(), values::format_size),
        rule.truncation.as_str()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(lines: Option<usize>, bytes: Option<usize>, t: Truncation) -> OutputRule {
        OutputRule {
            max_lines: lines,
            max_bytes: bytes,
            truncation: t,
        }
    }

    #[test]
    fn lines_are_cut_at_the_chosen_end() {
        let text = "1\n2\n3\n4\n5";
        assert_eq!(
            rule(Some(2), None, Truncation::Head).apply(text),
            "1\n2\n[... 3 more lines not shown ...]"
        );
        assert_eq!(
            rule(Some(2), None, Truncation::Tail).apply(text),
            "[... 3 earlier lines not shown ...]\n4\n5"
        );
        assert_eq!(
            rule(Some(3), None, Truncation::HeadTail).apply(text),
            "1\n2\n[... 2 lines omitted ...]\n5"
        );
        assert_eq!(rule(Some(9), None, Truncation::Head).apply(text), text);
    }

    #[test]
    fn bytes_are_cut_on_character_boundaries() {
        let text = "ééééé"; // 10 bytes
        let head = rule(None, Some(3), Truncation::Head).apply(text);
        assert!(head.starts_with("é\n"), "{head}");
        let tail = rule(None, Some(3), Truncation::Tail).apply(text);
        assert!(tail.ends_with("\né"), "{tail}");
        let both = rule(None, Some(4), Truncation::HeadTail).apply(text);
        assert!(
            both.starts_with("é\n[... 6 bytes omitted ...]\né"),
            "{both}"
        );
    }

    #[test]
    fn native_rules_are_left_to_the_tools() {
        assert!(rule(Some(10), Some(10), Truncation::HeadTail).is_native_for("bash"));
        assert!(!rule(Some(10), None, Truncation::Tail).is_native_for("bash"));
        assert!(!rule(None, Some(10), Truncation::Head).is_native_for("search_code"));
        assert!(!rule(Some(10), None, Truncation::Head).is_native_for("write_file"));
        assert!(OutputRule::unlimited("write_file").is_native_for("write_file"));
    }
}
