//! Success criteria: each line of `## Success Criteria` read into a [`Criterion`].
//!
//! A criterion that cannot be read is an error at load time, never a criterion that silently
//! passes. [`Criterion`]'s `Display` is its canonical recipe spelling: the writer uses it, and
//! reports can use it as the criterion's label.

use std::fmt;
use std::time::Duration;

use super::duration;
use super::problems::{ProblemKind, did_you_mean, list};
use super::values::{self, Value, ValueError};

/// Default timeout of a `run:` criterion.
pub const DEFAULT_RUN_TIMEOUT: Duration = Duration::from_secs(60);

/// Every criterion name, for error messages.
pub const NAMES: &[&str] = &[
    "no_errors",
    "has_writes",
    "files_written",
    "contains",
    "run",
    "tool_used",
    "max_cost",
    "max_latency",
    "max_tool_calls",
    "max_steps",
    "protected",
    "diff_max_lines",
];

/// One success criterion, checked per model per task in that model's workspace.
#[derive(Debug, Clone, PartialEq)]
pub enum Criterion {
    /// `no_errors`: the run ended without error (a timeout is an error).
    NoErrors,
    /// `has_writes`: the change set has at least one path.
    HasWrites,
    /// `files_written >= N`: the change set has at least N paths.
    FilesWritten(usize),
    /// `contains: TEXT`: the final answer contains TEXT.
    Contains(String),
    /// `run: CMD` / `run(timeout=D): CMD`: CMD exits 0 in the workspace within the timeout;
    /// the detail keeps the last `crate::check::TAIL_LINES` lines of its output.
    Run {
        /// The shell command.
        command: String,
        /// How long it may take ([`DEFAULT_RUN_TIMEOUT`] unless given).
        timeout: Duration,
    },
    /// `tool_used: NAME`: the model called the tool at least once.
    ToolUsed(String),
    /// `max_cost: USD`: the run cost at most this much.
    MaxCost(f64),
    /// `max_latency: MS`: the run took at most this long.
    MaxLatency(Duration),
    /// `max_tool_calls: N`: at most N tool calls.
    MaxToolCalls(u32),
    /// `max_steps: N`: at most N requests to the model.
    MaxSteps(u32),
    /// `protected: GLOB`: no changed path matches GLOB.
    Protected(String),
    /// `diff_max_lines: N`: the change set touches at most N lines (added plus removed).
    DiffMaxLines(usize),
}

impl Criterion {
    /// The criterion's name (`run`, `protected`...), e.g. to group results.
    pub fn name(&self) -> &'static str {
        match self {
            Self::NoErrors => "no_errors",
            Self::HasWrites => "has_writes",
            Self::FilesWritten(_) => "files_written",
            Self::Contains(_) => "contains",
            Self::Run { .. } => "run",
            Self::ToolUsed(_) => "tool_used",
            Self::MaxCost(_) => "max_cost",
            Self::MaxLatency(_) => "max_latency",
            Self::MaxToolCalls(_) => "max_tool_calls",
            Self::MaxSteps(_) => "max_steps",
            Self::Protected(_) => "protected",
            Self::DiffMaxLines(_) => "diff_max_lines",
        }
    }

    /// Reads one criterion line (bullet already removed). `tools` are the known tool names
    /// (for `tool_used:`).
    pub fn parse(text: &str, tools: &[&str]) -> Result<Criterion, CriterionError> {
        let text = text.trim();
        let (name, options, value) = split(text)?;
        let lower = name.to_ascii_lowercase();
        let needs_value = |what: &str| CriterionError {
            kind: ProblemKind::MissingValue,
            message: format!("`{lower}` needs a value: write `{lower}: {what}`"),
        };
        if options.is_some() && lower != "run" {
            return Err(CriterionError {
                kind: ProblemKind::Syntax,
                message: format!(
                    "only `run` takes options in parentheses (`run(timeout=2m): CMD`), not `{lower}`"
                ),
            });
        }
        let bare = |c: Criterion| match value {
            None => Ok(c),
            Some(_) => Err(CriterionError {
                kind: ProblemKind::Syntax,
                message: format!("`{lower}` takes no value; write just `{lower}`"),
            }),
        };
        let with = |what: &str| {
            value
                .filter(|v| !v.is_empty())
                .ok_or_else(|| needs_value(what))
        };
        let read = |form: &str, accepts: &str, r: Value<Criterion>| {
            r.map_err(|e| CriterionError::value(form, accepts, e))
        };
        match lower.as_str() {
            "no_errors" => bare(Criterion::NoErrors),
            "has_writes" => bare(Criterion::HasWrites),
            "files_written" => {
                let v = with("N")?;
                read(
                    "files_written >= N",
                    "a whole number of at least 1",
                    values::at_least(v, 1).map(Criterion::FilesWritten),
                )
            }
            "contains" => Ok(Criterion::Contains(with("TEXT")?.to_string())),
            "run" => {
                let command = with("COMMAND")?.to_string();
                let timeout = match options {
                    None => DEFAULT_RUN_TIMEOUT,
                    Some(opts) => run_timeout(opts)?,
                };
                Ok(Criterion::Run { command, timeout })
            }
            "tool_used" => {
                let v = with("TOOL")?;
                if tools.contains(&v) {
                    Ok(Criterion::ToolUsed(v.to_string()))
                } else {
                    Err(CriterionError {
                        kind: ProblemKind::UnknownTool,
                        message: format!(
                            "`tool_used: {v}`: `{v}` is not a tool{}; tools: {}",
                            did_you_mean(v, tools.iter().copied()),
                            list(tools)
                        ),
                    })
                }
            }
            "max_cost" => {
                let v = with("USD")?;
                read(
                    "max_cost: USD",
                    "a number of US dollars of at least 0, e.g. `0.50`",
                    values::non_negative(v).map(Criterion::MaxCost),
                )
            }
            "max_latency" => {
                let v = with("MS")?;
                read(
                    "max_latency: MS",
                    "milliseconds (`90000`) or a duration with a unit (`90s`)",
                    latency(v).map(Criterion::MaxLatency),
                )
            }
            "max_tool_calls" => {
                let v = with("N")?;
                read(
                    "max_tool_calls: N",
                    "a whole number of at least 0",
                    values::whole(v).map(Criterion::MaxToolCalls),
                )
            }
            "max_steps" => {
                let v = with("N")?;
                read(
                    "max_steps: N",
                    "a whole number of at least 0",
                    values::whole(v).map(Criterion::MaxSteps),
                )
            }
            "protected" => {
                let v = with("GLOB")?;
                globset::Glob::new(v).map_err(|e| CriterionError {
                    kind: ProblemKind::BadValue,
                    message: format!(
                        "`protected: {v}`: not a valid glob ({}); write e.g. `protected: tests/**`",
                        e.kind()
                    ),
                })?;
                Ok(Criterion::Protected(v.to_string()))
            }
            "diff_max_lines" => {
                let v = with("N")?;
                read(
                    "diff_max_lines: N",
                    "a whole number of at least 0",
                    values::whole(v).map(Criterion::DiffMaxLines),
                )
            }
            _ => Err(CriterionError {
                kind: ProblemKind::UnknownCriterion,
                message: format!(
                    "unknown success criterion `{name}`{}; criteria: {}",
                    did_you_mean(&lower, NAMES.iter().copied()),
                    list(NAMES)
                ),
            }),
        }
    }
}

/// Splits `name(options): value`, `name >= value` and bare `name`.
fn split(text: &str) -> Result<(&str, Option<&str>, Option<&str>), CriterionError> {
    if text.is_empty() {
        return Err(CriterionError {
            kind: ProblemKind::MissingValue,
            message: format!("empty criterion; criteria: {}", list(NAMES)),
        });
    }
    let name_end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    let (name, rest) = text.split_at(name_end);
    let rest = rest.trim_start();
    if rest.is_empty() {
        return Ok((name, None, None));
    }
    if let Some(value) = rest.strip_prefix(">=") {
        return Ok((name, None, Some(value.trim())));
    }
    let (options, rest) = match rest.strip_prefix('(') {
        Some(inner) => match inner.split_once(')') {
            Some((opts, after)) => (Some(opts.trim()), after.trim_start()),
            None => {
                return Err(CriterionError {
                    kind: ProblemKind::Syntax,
                    message: format!(
                        "`{text}`: `(` is never closed; write e.g. `run(timeout=2m): cargo test`"
                    ),
                });
            }
        },
        None => (None, rest),
    };
    match rest.strip_prefix(':') {
        Some(value) => Ok((name, options, Some(value.trim()))),
        None if rest.is_empty() => Ok((name, options, None)),
        None => Err(CriterionError {
            kind: if NAMES.contains(&name.to_ascii_lowercase().as_str()) {
                ProblemKind::Syntax
            } else {
                ProblemKind::UnknownCriterion
            },
            message: format!(
                "`{text}` is not a criterion; write `name`, `name: value` or `files_written >= N`; criteria: {}",
                list(NAMES)
            ),
        }),
    }
}

/// `timeout=D` inside `run(...)`.
fn run_timeout(options: &str) -> Result<Duration, CriterionError> {
    let syntax = |m: String| CriterionError {
        kind: ProblemKind::Syntax,
        message: m,
    };
    let Some((key, value)) = options.split_once('=') else {
        return Err(syntax(format!(
            "`run({options})`: write `run(timeout=2m): COMMAND` (plain numbers are seconds)"
        )));
    };
    if !key.trim().eq_ignore_ascii_case("timeout") {
        return Err(CriterionError {
            kind: ProblemKind::UnknownKey,
            message: format!(
                "`run({options})`: `{}` is not an option of run; options: `timeout`",
                key.trim()
            ),
        });
    }
    values::duration_at_least(value, Duration::from_secs(1)).map_err(|e| {
        CriterionError::value(
            "run(timeout=D)",
            &format!("{} (at least 1s)", duration::ACCEPTED),
            e,
        )
    })
}

/// Milliseconds, or a duration with a unit.
fn latency(text: &str) -> Value<Duration> {
    let text = values::required(text)?;
    if text.chars().all(|c| c.is_ascii_digit()) {
        return values::whole::<u64>(text).map(Duration::from_millis);
    }
    duration::parse(text).map_err(|_| values::bad(format!("`{text}` is not milliseconds")))
}

impl fmt::Display for Criterion {
    /// The recipe spelling, e.g. `run(timeout=2m): cargo test` or `files_written >= 2`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoErrors | Self::HasWrites => f.write_str(self.name()),
            Self::FilesWritten(n) => write!(f, "files_written >= {n}"),
            Self::Contains(text) => write!(f, "contains: {text}"),
            Self::Run { command, timeout } if *timeout == DEFAULT_RUN_TIMEOUT => {
                write!(f, "run: {command}")
            }
            Self::Run { command, timeout } => {
                write!(f, "run(timeout={}): {command}", duration::format(*timeout))
            }
            Self::ToolUsed(name) => write!(f, "tool_used: {name}"),
            Self::MaxCost(usd) => write!(f, "max_cost: {usd}"),
            Self::MaxLatency(d) => write!(f, "max_latency: {}", d.as_millis()),
            Self::MaxToolCalls(n) => write!(f, "max_tool_calls: {n}"),
            Self::MaxSteps(n) => write!(f, "max_steps: {n}"),
            Self::Protected(glob) => write!(f, "protected: {glob}"),
            Self::DiffMaxLines(n) => write!(f, "diff_max_lines: {n}"),
        }
    }
}

/// Why a criterion line could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct CriterionError {
    /// What sort of problem (unknown criterion, bad value...).
    pub kind: ProblemKind,
    /// What was wrong and what is accepted.
    pub message: String,
}

impl CriterionError {
    fn value(form: &str, accepts: &str, e: ValueError) -> Self {
        Self {
            kind: e.kind,
            message: format!("`{form}`: {}; accepted: {accepts}", e.reason),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const TOOLS: &[&str] = &["read_file", "bash"];

    fn parse(text: &str) -> Criterion {
        Criterion::parse(text, TOOLS).unwrap()
    }

    fn fail(text: &str) -> CriterionError {
        Criterion::parse(text, TOOLS).unwrap_err()
    }

    #[test]
    fn every_criterion_reads_with_its_arguments() {
        assert_eq!(parse("no_errors"), Criterion::NoErrors);
        assert_eq!(parse("has_writes"), Criterion::HasWrites);
        assert_eq!(parse("files_written >= 3"), Criterion::FilesWritten(3));
        assert_eq!(parse("files_written>=2"), Criterion::FilesWritten(2));
        assert_eq!(
            parse("contains: all tests pass"),
            Criterion::Contains("all tests pass".into())
        );
        assert_eq!(
            parse("run: cargo test"),
            Criterion::Run {
                command: "cargo test".into(),
                timeout: DEFAULT_RUN_TIMEOUT
            }
        );
        assert_eq!(
            parse("run(timeout=120): cargo test -- --ignored"),
            Criterion::Run {
                command: "cargo test -- --ignored".into(),
                timeout: Duration::from_secs(120)
            }
        );
        assert_eq!(
            parse("run(timeout=2m): make"),
            Criterion::Run {
                command: "make".into(),
                timeout: Duration::from_secs(120)
            }
        );
        assert_eq!(parse("tool_used: bash"), Criterion::ToolUsed("bash".into()));
        assert_eq!(parse("max_cost: 0.50"), Criterion::MaxCost(0.5));
        assert_eq!(
            parse("max_latency: 90000"),
            Criterion::MaxLatency(Duration::from_secs(90))
        );
        assert_eq!(
            parse("max_latency: 90s"),
            Criterion::MaxLatency(Duration::from_secs(90))
        );
        assert_eq!(parse("max_tool_calls: 20"), Criterion::MaxToolCalls(20));
        assert_eq!(parse("max_steps: 0"), Criterion::MaxSteps(0));
        assert_eq!(
            parse("protected: tests/**"),
            Criterion::Protected("tests/**".into())
        );
        assert_eq!(parse("diff_max_lines: 40"), Criterion::DiffMaxLines(40));
        assert_eq!(parse("No_Errors"), Criterion::NoErrors);
    }

    #[test]
    fn display_reads_back_to_the_same_criterion() {
        for text in [
            "no_errors",
            "has_writes",
            "files_written >= 3",
            "contains: done: ok",
            "run: cargo test",
            "run(timeout=1m30s): cargo test",
            "tool_used: read_file",
            "max_cost: 0.5",
            "max_latency: 1500",
            "max_tool_calls: 7",
            "max_steps: 9",
            "protected: src/**/*.rs",
            "diff_max_lines: 12",
        ] {
            let c = parse(text);
            assert_eq!(c.to_string(), text);
            assert_eq!(parse(&c.to_string()), c);
        }
    }

    #[test]
    fn unknown_and_malformed_criteria_are_errors() {
        let e = fail("no_error");
        assert_eq!(e.kind, ProblemKind::UnknownCriterion);
        assert!(
            e.message.contains("did you mean `no_errors`"),
            "{}",
            e.message
        );
        assert!(e.message.contains("`diff_max_lines`"));
        assert_eq!(fail("passes: yes").kind, ProblemKind::UnknownCriterion);
        assert_eq!(fail("contains").kind, ProblemKind::MissingValue);
        assert_eq!(fail("run:").kind, ProblemKind::MissingValue);
        assert_eq!(fail("no_errors: yes").kind, ProblemKind::Syntax);
        assert_eq!(fail("files_written >= many").kind, ProblemKind::BadValue);
        assert_eq!(fail("files_written >= 0").kind, ProblemKind::OutOfRange);
        assert_eq!(fail("max_cost: -1").kind, ProblemKind::OutOfRange);
        assert_eq!(fail("max_cost: cheap").kind, ProblemKind::BadValue);
        assert_eq!(fail("max_steps: -1").kind, ProblemKind::OutOfRange);
        assert_eq!(fail("tool_used: teleport").kind, ProblemKind::UnknownTool);
        assert_eq!(fail("protected: src/[").kind, ProblemKind::BadValue);
        assert_eq!(fail("run(retries=2): make").kind, ProblemKind::UnknownKey);
        assert_eq!(fail("run(timeout=0): make").kind, ProblemKind::OutOfRange);
        assert_eq!(fail("run(timeout=2m: make").kind, ProblemKind::Syntax);
        assert_eq!(fail("contains(x): y").kind, ProblemKind::Syntax);
        assert_eq!(fail("").kind, ProblemKind::MissingValue);
    }
}
