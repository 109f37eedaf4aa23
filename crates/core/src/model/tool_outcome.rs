//! How one tool call ended, decided where the tool ran (the exit status bash saw, the refusal
//! the path rule made), never guessed later from the text the model received.
//!
//! Why a type of its own and not `is_error`: `is_error` is what a provider is told (a command
//! that ran and exited 3 is information for the model, not a failed call), while a person
//! judging the model wants to see that the command failed. Every front end (panels, `versus
//! ask`, `sessions show`, reports) shows the same mark from this one value.

use serde::{Deserialize, Serialize};

/// The outcome of one tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ToolOutcome {
    /// It did what was asked (a command exited 0).
    Ok,
    /// A command ran to its end and exited with a code other than 0.
    Exit {
        /// The exit code (a shell reports a child killed by signal N as 128 + N).
        code: i32,
    },
    /// A command was killed by a signal versus did not send.
    Signal {
        /// The signal number.
        signal: i32,
    },
    /// The tool failed: bad arguments, an edit that did not apply, a file that is not there.
    Error,
    /// The call was refused before it ran: a path leaving the project, a command the recipe
    /// does not allow, a sandbox that refuses commands.
    Refused,
    /// versus stopped it at its time limit.
    TimedOut,
    /// The run was cancelled while (or before) it ran.
    Cancelled,
}

impl ToolOutcome {
    /// The outcome of a result recorded before outcomes were (a session log of an older
    /// version): the provider's error flag is all there is.
    pub fn or_legacy(outcome: Option<ToolOutcome>, is_error: bool) -> ToolOutcome {
        outcome.unwrap_or(if is_error {
            ToolOutcome::Error
        } else {
            ToolOutcome::Ok
        })
    }

    /// Whether the call succeeded (the only outcome shown with `✓`).
    pub fn is_ok(self) -> bool {
        self == ToolOutcome::Ok
    }

    /// The mark every front end shows before the call: `✓` only for success.
    pub fn icon(self) -> &'static str {
        match self {
            ToolOutcome::Ok => "✓",
            ToolOutcome::Exit { .. } | ToolOutcome::Signal { .. } | ToolOutcome::Error => "✗",
            ToolOutcome::Refused | ToolOutcome::Cancelled => "⊘",
            ToolOutcome::TimedOut => "⏱",
        }
    }

    /// A few words for the outcome (`exit 3`, `refused`), empty for success.
    pub fn label(self) -> String {
        match self {
            ToolOutcome::Ok => String::new(),
            ToolOutcome::Exit { code } => format!("exit {code}"),
            ToolOutcome::Signal { signal } => format!("signal {signal}"),
            ToolOutcome::Error => "error".to_string(),
            ToolOutcome::Refused => "refused".to_string(),
            ToolOutcome::TimedOut => "timed out".to_string(),
            ToolOutcome::Cancelled => "cancelled".to_string(),
        }
    }

    /// The icon and the label together (`✗ exit 3`, `✓`).
    pub fn mark(self) -> String {
        match self {
            ToolOutcome::Ok => self.icon().to_string(),
            other => format!("{} {}", other.icon(), other.label()),
        }
    }
}

/// The lines of a tool's result worth showing under the call: the output without the status
/// line bash ends with (`[exit code: 3]`, which the mark already says), then its last `max`
/// lines. Returns the lines and how many were left out before them.
pub fn output_tail(output: &str, max: usize) -> (Vec<&str>, usize) {
    let mut lines: Vec<&str> = output.lines().collect();
    if lines
        .last()
        .is_some_and(|l| l.starts_with("[exit code: ") || l.starts_with("[killed"))
    {
        lines.pop();
    }
    if lines.len() == 1 && lines[0] == "(no output)" {
        lines.clear();
    }
    while lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
    let skipped = lines.len().saturating_sub(max);
    (lines.split_off(skipped), skipped)
}

/// The most telling argument of a call (its path, command, pattern, query or URL), on one line
/// of at most `max` characters with `…` where cut; empty when there is none.
pub fn call_target(arguments: &str, max: usize) -> String {
    let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(arguments)
    else {
        return String::new();
    };
    let Some(value) = ["path", "command", "pattern", "query", "url", "task"]
        .iter()
        .find_map(|k| map.get(*k).and_then(serde_json::Value::as_str))
    else {
        return String::new();
    };
    let first = value.trim().lines().next().unwrap_or_default();
    let mut cut: String = first.chars().take(max).collect();
    if cut.len() < value.trim().len() {
        cut.push('…');
    }
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_success_gets_the_check_mark() {
        assert_eq!(ToolOutcome::Ok.mark(), "✓");
        assert_eq!(ToolOutcome::Exit { code: 3 }.mark(), "✗ exit 3");
        assert_eq!(ToolOutcome::Refused.mark(), "⊘ refused");
        assert_eq!(ToolOutcome::TimedOut.mark(), "⏱ timed out");
        assert_eq!(ToolOutcome::or_legacy(None, true), ToolOutcome::Error);
        assert_eq!(ToolOutcome::or_legacy(None, false), ToolOutcome::Ok);
    }

    #[test]
    fn the_tail_leaves_out_the_status_line() {
        let (tail, skipped) = output_tail("a\nb\nc\nd\n[exit code: 3]", 2);
        assert_eq!((tail, skipped), (vec!["c", "d"], 2));
        assert_eq!(output_tail("(no output)\n[exit code: 1]", 3), (vec![], 0));
    }

    #[test]
    fn outcomes_read_back_from_json() {
        let json = serde_json::to_string(&ToolOutcome::Exit { code: 3 }).unwrap_or_default();
        assert_eq!(json, r#"{"kind":"exit","code":3}"#);
        let back: ToolOutcome = serde_json::from_str(&json).unwrap_or(ToolOutcome::Ok);
        assert_eq!(back, ToolOutcome::Exit { code: 3 });
    }
}
