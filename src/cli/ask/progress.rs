//! Progress lines on stderr while models run: one line per notable event, prefixed with the
//! model, so several models interleave readably and the output stays a clean log when piped.

use std::io::Write;

use versus::model::{AgentEvent, RunStop, SubAgentTag, ToolOutcome, output_tail};
use versus::sanitize::{self, line};

/// Lines of a failed call's output printed under it.
const TAIL_LINES: usize = 3;

/// Prints progress for a run with these entry labels.
pub struct Progress {
    labels: Vec<String>,
    width: usize,
    quiet: bool,
}

impl Progress {
    /// A printer for `labels`; `quiet` prints nothing.
    pub fn new(labels: Vec<String>, quiet: bool) -> Self {
        let width = labels
            .iter()
            .map(|l| line(l).to_string().chars().count())
            .max()
            .unwrap_or(0);
        Self {
            labels,
            width,
            quiet,
        }
    }

    /// A line about one entry.
    pub fn line(&self, entry: usize, text: &str) {
        if self.quiet {
            return;
        }
        let label = self.labels.get(entry).map(String::as_str).unwrap_or("?");
        let label = line(label).to_string();
        let _ = writeln!(
            sanitize::stderr(),
            "[{label:<width$}] {}",
            line(text),
            width = self.width
        );
    }

    /// A line not about one model.
    pub fn note(&self, text: &str) {
        if !self.quiet {
            let _ = writeln!(sanitize::stderr(), "{}", line(text));
        }
    }

    /// Reports an agent event when it is worth a line.
    pub fn event(&self, entry: usize, event: &AgentEvent) {
        match event {
            AgentEvent::SubAgent { agent, event } => self.sub_agent(entry, agent, event),
            AgentEvent::ToolCallReady {
                name, arguments, ..
            } => self.line(entry, &format!("{name} {}", brief_args(arguments))),
            AgentEvent::ToolResult {
                is_error,
                summary,
                name,
                outcome,
                output,
                ..
            } => {
                let outcome = ToolOutcome::or_legacy(*outcome, *is_error);
                if outcome.is_ok() {
                    return;
                }
                // A command says what it printed; another tool's first line says why.
                let (tail, skipped) = output_tail(output, TAIL_LINES);
                if name == "bash" || summary.is_empty() || tail.len() > 1 {
                    self.line(entry, &format!("  {} {name} failed", outcome.mark()));
                    if skipped > 0 {
                        self.line(entry, &format!("    │ … {skipped} earlier line(s)"));
                    }
                    for text in tail {
                        let cut: String = text.chars().take(200).collect();
                        let more = if cut.len() < text.len() { "…" } else { "" };
                        self.line(entry, &format!("    │ {cut}{more}"));
                    }
                } else {
                    self.line(
                        entry,
                        &format!("  {} {name} failed: {summary}", outcome.mark()),
                    );
                }
            }
            AgentEvent::Retrying {
                attempt,
                delay_ms,
                reason,
            } => self.line(
                entry,
                &format!(
                    "retry {attempt} in {:.1} s: {reason}",
                    *delay_ms as f64 / 1000.0
                ),
            ),
            AgentEvent::Error { message, .. } => self.line(entry, &format!("error: {message}")),
            AgentEvent::Finished { stop } => {
                let word = match stop {
                    RunStop::Completed => "finished",
                    other => other.label(),
                };
                self.line(entry, word);
            }
            _ => {}
        }
    }
}

impl Progress {
    /// A sub-agent's event, indented under its parent by depth and named with its role
    /// (`  ↳ coder #1: write_file a.txt`): its calls, failures and end.
    fn sub_agent(&self, entry: usize, agent: &SubAgentTag, event: &AgentEvent) {
        let indent = "  ".repeat(agent.depth as usize);
        let name = agent.name();
        match event {
            AgentEvent::SubAgent { agent, event } => self.sub_agent(entry, agent, event),
            AgentEvent::ToolCallReady {
                name: tool,
                arguments,
                ..
            } => self.line(
                entry,
                &format!("{indent}↳ {name}: {tool} {}", brief_args(arguments)),
            ),
            AgentEvent::ToolResult {
                is_error,
                summary,
                name: tool,
                outcome,
                ..
            } => {
                let outcome = ToolOutcome::or_legacy(*outcome, *is_error);
                if !outcome.is_ok() {
                    self.line(
                        entry,
                        &format!(
                            "{indent}↳ {name}: {} {tool} failed: {summary}",
                            outcome.mark()
                        ),
                    );
                }
            }
            AgentEvent::Error { message, .. } => {
                self.line(entry, &format!("{indent}↳ {name}: error: {message}"))
            }
            AgentEvent::Finished { stop } => {
                let word = match stop {
                    RunStop::Completed => "finished",
                    other => other.label(),
                };
                self.line(entry, &format!("{indent}↳ {name} ({}) {word}", agent.model));
            }
            _ => {}
        }
    }
}

/// The argument most worth showing: a path, command, pattern or URL, cut to one short line.
fn brief_args(arguments: &str) -> String {
    let value: serde_json::Value = serde_json::from_str(arguments).unwrap_or_default();
    let pick = ["path", "command", "pattern", "url", "query", "task"]
        .iter()
        .find_map(|k| value.get(k).and_then(|v| v.as_str()).map(str::to_string));
    let text = pick.unwrap_or_else(|| arguments.to_string());
    let line = text.lines().next().unwrap_or_default();
    let mut cut: String = line.chars().take(80).collect();
    if cut.len() < text.len() {
        cut.push('…');
    }
    cut
}
