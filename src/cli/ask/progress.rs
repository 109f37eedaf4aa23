//! Progress lines on stderr while models run: one line per notable event, prefixed with the
//! model, so several models interleave readably and the output stays a clean log when piped.

use std::io::Write;

use versus::model::{AgentEvent, RunStop};
use versus::sanitize::{self, line};

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
            AgentEvent::ToolCallReady {
                name, arguments, ..
            } => self.line(entry, &format!("{name} {}", brief_args(arguments))),
            AgentEvent::ToolResult {
                is_error: true,
                summary,
                name,
                ..
            } => self.line(entry, &format!("  {name} failed: {summary}")),
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

/// The argument most worth showing: a path, command, pattern or URL, cut to one short line.
fn brief_args(arguments: &str) -> String {
    let value: serde_json::Value = serde_json::from_str(arguments).unwrap_or_default();
    let pick = ["path", "command", "pattern", "url", "query"]
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
