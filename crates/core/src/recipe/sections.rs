//! The section catalogue and what every section reader shares: list items, `###`
//! subsections, prose bodies, and the trace of where things were written.
//!
//! Sections are identified by [`SectionId`]; its order is the order the writer uses and the
//! order error messages list the section names in. Readers work on [`Line`]s and push
//! problems into the shared [`Ctx`]; none of them stops at the first problem.

use std::collections::BTreeMap;

use crate::config::{Config, ModelSpec, SpecError};

use super::parse::{Line, Section};
use super::problems::{ProblemKind, Problems};

/// One recipe section.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum SectionId {
    Models,
    SystemPrompt,
    Tools,
    ToolDescriptions,
    McpServers,
    Constraints,
    Context,
    ModelParameters,
    Workspace,
    Sandbox,
    Review,
    Tasks,
    SuccessCriteria,
    SummarizationPrompt,
    OutputProcessing,
    Metadata,
}

impl SectionId {
    /// Every section, in the order a recipe is written.
    pub(crate) const ALL: &'static [SectionId] = &[
        Self::Models,
        Self::SystemPrompt,
        Self::Tools,
        Self::ToolDescriptions,
        Self::McpServers,
        Self::Constraints,
        Self::Context,
        Self::ModelParameters,
        Self::Workspace,
        Self::Sandbox,
        Self::Review,
        Self::Tasks,
        Self::SuccessCriteria,
        Self::SummarizationPrompt,
        Self::OutputProcessing,
        Self::Metadata,
    ];

    /// The heading as the spec writes it.
    pub(crate) fn title(self) -> &'static str {
        match self {
            Self::Models => "Models",
            Self::SystemPrompt => "System Prompt",
            Self::Tools => "Tools",
            Self::ToolDescriptions => "Tool Descriptions",
            Self::McpServers => "MCP Servers",
            Self::Constraints => "Constraints",
            Self::Context => "Context",
            Self::ModelParameters => "Model Parameters",
            Self::Workspace => "Workspace",
            Self::Sandbox => "Sandbox",
            Self::Review => "Review",
            Self::Tasks => "Tasks",
            Self::SuccessCriteria => "Success Criteria",
            Self::SummarizationPrompt => "Context Summarization Prompt",
            Self::OutputProcessing => "Output Processing",
            Self::Metadata => "Metadata",
        }
    }

    /// Finds a section by name: case-insensitive, runs of spaces count as one.
    pub(crate) fn from_name(name: &str) -> Option<SectionId> {
        let wanted = normalise(name);
        Self::ALL
            .iter()
            .copied()
            .find(|id| id.title().eq_ignore_ascii_case(&wanted))
    }

    /// Every section title, for "sections: ..." lists.
    pub(crate) fn titles() -> Vec<&'static str> {
        Self::ALL.iter().map(|id| id.title()).collect()
    }
}

fn normalise(name: &str) -> String {
    name.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Where the file being read set things, for checks that look across sections.
#[derive(Debug, Default)]
pub(crate) struct Trace {
    /// Sections present in the file, with their heading line.
    pub sections: BTreeMap<SectionId, usize>,
    /// `(section, key)` -> line, for key/value sections.
    pub keys: BTreeMap<(SectionId, &'static str), usize>,
    /// Tool name -> line in `## Tools`.
    pub tools: BTreeMap<String, usize>,
    /// Tool name -> line in `## Tool Descriptions`.
    pub descriptions: BTreeMap<String, usize>,
    /// Line of each criterion of `## Success Criteria`, in order.
    pub criteria: Vec<usize>,
}

/// What every reader works with.
pub(crate) struct Ctx<'a> {
    /// Where problems go.
    pub problems: &'a mut Problems,
    /// Where things were set.
    pub trace: Trace,
    /// Built-in tool names (for Tools, Tool Descriptions, Output Processing, `tool_used:`).
    pub tools: Vec<&'static str>,
    /// When given, model specs must name a provider it knows.
    pub config: Option<&'a Config>,
}

impl Ctx<'_> {
    /// Records a problem.
    pub(crate) fn problem(&mut self, line: usize, kind: ProblemKind, message: impl Into<String>) {
        self.problems.push(line, kind, message);
    }

    /// Reads a model spec, checking its provider against the configuration when there is one.
    pub(crate) fn model_spec(&self, text: &str) -> Result<ModelSpec, SpecError> {
        match self.config {
            Some(config) => config.parse_spec(text),
            None => ModelSpec::parse(text),
        }
    }
}

/// One entry of a list or key/value section: a non-blank line with its bullet removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Item {
    /// Line number.
    pub line: usize,
    /// The text, trimmed, without `- `, `* ` or `+ `.
    pub text: String,
}

/// Removes a list marker (`- `, `* `, `+ `, or a lone marker for an empty item).
pub(crate) fn strip_bullet(text: &str) -> Option<&str> {
    let t = text.trim_start();
    for marker in ['-', '*', '+'] {
        if let Some(rest) = t.strip_prefix(marker)
            && (rest.is_empty() || rest.starts_with([' ', '\t']))
        {
            return Some(rest.trim());
        }
    }
    None
}

/// The entries of a list or key/value section. Code blocks and headings are problems here:
/// they only mean something in prose sections and under `###` headings.
pub(crate) fn items(lines: &[Line], id: SectionId, ctx: &mut Ctx) -> Vec<Item> {
    let mut out = Vec::new();
    let mut in_block = false;
    for line in lines {
        if line.fenced {
            if !in_block {
                ctx.problem(
                    line.number,
                    ProblemKind::Syntax,
                    format!(
                        "a code block cannot go in ## {}: write one entry per line (code blocks \
                         belong in prose sections and `###` tasks)",
                        id.title()
                    ),
                );
            }
            in_block = true;
            continue;
        }
        in_block = false;
        if line.is_blank() {
            continue;
        }
        if let Some((level, _)) = line.heading() {
            ctx.problem(
                line.number,
                ProblemKind::Syntax,
                format!(
                    "a level-{level} heading cannot go in ## {}; `###` headings only structure \
                     Tasks, Tool Descriptions and Output Processing",
                    id.title()
                ),
            );
            continue;
        }
        let text = strip_bullet(&line.text).unwrap_or(line.text.trim());
        out.push(Item {
            line: line.number,
            text: text.to_string(),
        });
    }
    out
}

/// A `###` subsection.
#[derive(Debug, Clone)]
pub(crate) struct Sub {
    /// The heading text.
    pub name: String,
    /// Line of the heading.
    pub line: usize,
    /// Lines up to the next `###` (or the end of the section).
    pub body: Vec<Line>,
}

/// Splits a section at its `###` headings (outside code blocks): the lines before the first
/// one, and each subsection.
pub(crate) fn subsections(section: &Section) -> (Vec<Line>, Vec<Sub>) {
    let mut lead = Vec::new();
    let mut subs: Vec<Sub> = Vec::new();
    for line in &section.body {
        if let Some((3, name)) = line.heading() {
            subs.push(Sub {
                name: name.to_string(),
                line: line.number,
                body: Vec::new(),
            });
            continue;
        }
        match subs.last_mut() {
            Some(sub) => sub.body.push(line.clone()),
            None => lead.push(line.clone()),
        }
    }
    (lead, subs)
}

/// Prose: the lines joined verbatim, without leading and trailing blank lines or trailing
/// whitespace at the end.
pub(crate) fn body_text(lines: &[Line]) -> String {
    let start = lines.iter().position(|l| !l.is_blank());
    let end = lines.iter().rposition(|l| !l.is_blank());
    match (start, end) {
        (Some(s), Some(e)) => lines[s..=e]
            .iter()
            .map(|l| l.text.as_str())
            .collect::<Vec<_>>()
            .join("\n")
            .trim_end()
            .to_string(),
        _ => String::new(),
    }
}

/// Splits `key: value` at the first colon; the key is lower-cased.
pub(crate) fn key_value(text: &str) -> Option<(String, &str)> {
    let (key, value) = text.split_once(':')?;
    let key = key.trim().to_ascii_lowercase();
    (!key.is_empty()).then_some((key, value.trim()))
}

/// Splits `k=v, k=v` into trimmed pairs; `Err(part)` for a part without `=`.
pub(crate) fn assignments(text: &str) -> Vec<Result<(String, &str), &str>> {
    text.split(',')
        .map(str::trim)
        .filter(|part| !part.is_empty())
        .map(|part| match part.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_ascii_lowercase(), v.trim())),
            _ => Err(part),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn section_names_are_case_and_space_insensitive() {
        assert_eq!(
            SectionId::from_name("system   PROMPT"),
            Some(SectionId::SystemPrompt)
        );
        assert_eq!(
            SectionId::from_name("mcp servers"),
            Some(SectionId::McpServers)
        );
        assert_eq!(SectionId::from_name("Sub-Agent"), None);
        assert_eq!(SectionId::titles().len(), SectionId::ALL.len());
    }

    #[test]
    fn bullets_and_pairs() {
        assert_eq!(strip_bullet("- a"), Some("a"));
        assert_eq!(strip_bullet("  * b "), Some("b"));
        assert_eq!(strip_bullet("-"), Some(""));
        assert_eq!(strip_bullet("**bold**"), None);
        assert_eq!(strip_bullet("-x"), None);
        assert_eq!(key_value("Timeout: 5m"), Some(("timeout".into(), "5m")));
        assert_eq!(key_value(": x"), None);
        let pairs = assignments("temperature=0.2, seed = 7,, oops");
        assert_eq!(pairs[0], Ok(("temperature".into(), "0.2")));
        assert_eq!(pairs[1], Ok(("seed".into(), "7")));
        assert_eq!(pairs[2], Err("oops"));
    }

    #[test]
    fn prose_keeps_inner_lines_verbatim() {
        let line = |n, t: &str| Line {
            number: n,
            text: t.into(),
            fenced: false,
        };
        let lines = [
            line(1, ""),
            line(2, "  a"),
            line(3, ""),
            line(4, "b  "),
            line(5, " "),
        ];
        assert_eq!(body_text(&lines), "  a\n\nb");
        assert_eq!(body_text(&[line(1, " ")]), "");
    }
}
