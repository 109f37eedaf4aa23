//! Problems found in a recipe, each pinned to a file and line.
//!
//! Reading a recipe never stops at the first problem: every reader pushes into one [`Problems`]
//! sink and carries on with the next line, so `versus recipe check` can list everything that is
//! wrong in one pass. Each problem has a [`ProblemKind`] (what tests and tools match on) and a
//! message that says what was wrong and what is accepted instead.

use std::fmt;

/// What sort of problem a [`Problem`] is, so callers can tell them apart without parsing text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProblemKind {
    /// The file could not be read at all (missing, unreadable, not UTF-8).
    Unreadable,
    /// No `# Title` line before the first section.
    MissingTitle,
    /// No `version:` line before the first section.
    MissingVersion,
    /// A `version:` that is not 1.
    BadVersion,
    /// Text where none is expected (before the first section, a line that is not `key: value`,
    /// a `###` heading in a section without subsections).
    Syntax,
    /// A code block or comment that is never closed.
    Unclosed,
    /// A `##` section name that is not one of the recipe sections.
    UnknownSection,
    /// The same section twice.
    DuplicateSection,
    /// A key the section does not have.
    UnknownKey,
    /// The same key twice in one section.
    DuplicateKey,
    /// A key, item or heading with nothing after it.
    MissingValue,
    /// A value of the wrong type (text where a number is expected, an unknown choice).
    BadValue,
    /// A value of the right type outside its range.
    OutOfRange,
    /// A tool name that is not a built-in tool.
    UnknownTool,
    /// A model spec that cannot be read or names an unknown provider.
    BadModel,
    /// A success criterion versus does not know.
    UnknownCriterion,
    /// The same model, tool, server, task name or criterion listed twice.
    DuplicateEntry,
    /// A task bullet or `###` task with no text.
    EmptyTask,
    /// Two settings that cannot both hold (e.g. `tool_used: bash` when bash is not offered).
    Conflict,
}

/// One problem: where it is and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The recipe file as the user named it (or `defaults.recipe.md (built in)`).
    pub file: String,
    /// 1-based line; 0 when the problem concerns the whole file.
    pub line: usize,
    /// What sort of problem.
    pub kind: ProblemKind,
    /// What was wrong and what is accepted instead.
    pub message: String,
}

impl fmt::Display for Problem {
    /// `FILE:LINE: message`, the form editors and terminals turn into links.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(f, "{}:{}: {}", self.file, self.line, self.message)
        }
    }
}

/// Every problem of one recipe, in file order. Never empty when returned as an error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", render(.problems))]
pub struct RecipeErrors {
    /// The problems, sorted by line.
    pub problems: Vec<Problem>,
}

fn render(problems: &[Problem]) -> String {
    problems
        .iter()
        .map(Problem::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

impl RecipeErrors {
    /// Whether the file itself could not be read (a usage error rather than a recipe problem).
    pub fn is_unreadable(&self) -> bool {
        self.problems
            .iter()
            .any(|p| p.kind == ProblemKind::Unreadable)
    }

    /// Whether some problem is of this kind.
    pub fn has(&self, kind: ProblemKind) -> bool {
        self.problems.iter().any(|p| p.kind == kind)
    }
}

/// The sink every reader pushes into while parsing one file.
#[derive(Debug)]
pub(crate) struct Problems {
    file: String,
    list: Vec<Problem>,
}

impl Problems {
    /// An empty sink for `file`.
    pub(crate) fn new(file: &str) -> Self {
        Self {
            file: file.to_string(),
            list: Vec::new(),
        }
    }

    /// Records one problem.
    pub(crate) fn push(&mut self, line: usize, kind: ProblemKind, message: impl Into<String>) {
        self.list.push(Problem {
            file: self.file.clone(),
            line,
            kind,
            message: message.into(),
        });
    }

    /// Whether nothing was recorded.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// `Ok(value)` when nothing was recorded, else every problem sorted by line (stable, so
    /// problems of one line keep the order they were found in).
    pub(crate) fn finish<T>(mut self, value: T) -> Result<T, RecipeErrors> {
        if self.list.is_empty() {
            return Ok(value);
        }
        self.list.sort_by_key(|p| p.line);
        Err(RecipeErrors {
            problems: self.list,
        })
    }
}

/// ` (did you mean `X`?)` when one of `candidates` is close to `word`, else nothing.
pub(crate) fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> String {
    let word = word.to_ascii_lowercase();
    candidates
        .into_iter()
        .map(|c| {
            (
                strsim::damerau_levenshtein(&word, &c.to_ascii_lowercase()),
                c,
            )
        })
        .filter(|(distance, c)| *distance <= 2.max(c.len() / 4))
        .min()
        .map(|(_, c)| format!(" (did you mean `{c}`?)"))
        .unwrap_or_default()
}

/// `a, b, c` with each name in backticks, for "accepted: ..." lists.
pub(crate) fn list(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn problems_print_as_file_line_message_in_line_order() {
        let mut p = Problems::new("r.md");
        p.push(9, ProblemKind::BadValue, "second");
        p.push(3, ProblemKind::UnknownKey, "first");
        p.push(0, ProblemKind::MissingTitle, "whole file");
        let err = p.finish(()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "r.md: whole file\nr.md:3: first\nr.md:9: second"
        );
        assert!(err.has(ProblemKind::UnknownKey));
        assert!(!err.is_unreadable());
    }

    #[test]
    fn suggestions_only_for_close_names() {
        assert_eq!(
            did_you_mean("modles", ["models", "tasks"]),
            " (did you mean `models`?)"
        );
        assert_eq!(did_you_mean("zzz", ["models", "tasks"]), "");
        assert_eq!(list(&["a", "b"]), "`a`, `b`");
    }
}
