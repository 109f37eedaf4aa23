//! One model's live panel: its transcript built from [`AgentEvent`]s, its counters and status.
//!
//! Panels are built only from the agent event stream (the same one `versus ask` and the session
//! log see), so a live run and a replayed session look identical. Lines that change after they
//! appear — the line being streamed, a tool call waiting for its result — are remembered by
//! index and replaced in place; everything else is append-only, which keeps the wrap cache
//! (see [`super::transcript`]) almost always warm.

use crate::model::{AgentEvent, RunStop, Usage};

use super::format::{bytes, duration_ms, one_line, tokens};
use super::markdown::render_line;
use super::theme::Theme;
use super::transcript::{TLine, Transcript};

/// Where a panel's model is in its run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PanelStatus {
    /// Not running (before its first turn, or not addressed this turn).
    Idle,
    /// Its workspace is being prepared.
    Preparing,
    /// The model is working.
    Running,
    /// The run ended.
    Done(RunStop),
}

impl PanelStatus {
    /// Whether the model is busy.
    pub fn is_active(self) -> bool {
        matches!(self, PanelStatus::Preparing | PanelStatus::Running)
    }
}

/// What the driver reports when a model's run has ended (facts the panel cannot see in events).
#[derive(Debug, Clone, PartialEq)]
pub struct RunSummary {
    /// Why it ended.
    pub stop: RunStop,
    /// Wall time of the run.
    pub elapsed_ms: u64,
    /// Writes and deletes it recorded (bash changes included).
    pub writes: usize,
    /// Paths it wrote or deleted (sorted; empty when not known, e.g. in a session log of
    /// version 1, which has no proposals).
    pub files: Vec<String>,
    /// Those of `files` it deleted, sorted (the summary says "deleted", not "wrote").
    pub deleted: Vec<String>,
    /// A failure outside the agent (workspace, bash-change scan).
    pub error: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StreamKind {
    Text,
    Thinking,
}

#[derive(Debug)]
struct OpenLine {
    index: usize,
    raw: String,
    kind: StreamKind,
}

#[derive(Debug)]
struct ToolEntry {
    id: String,
    name: String,
    args: String,
    line: usize,
}

/// One model's panel.
#[derive(Debug)]
pub struct Panel {
    /// Entry label (`openai/gpt-5#2`).
    pub label: String,
    /// Run status.
    pub status: PanelStatus,
    /// Current step of this turn.
    pub step: u32,
    /// Tokens of this turn so far.
    pub usage: Usage,
    /// Cost of this turn so far (`None`: unknown price).
    pub cost: Option<f64>,
    /// Cost of the finished turns of this session (`None` once any price was unknown).
    pub past_cost: Option<f64>,
    /// When this turn started (app clock, ms).
    pub started_ms: u64,
    /// Wall time once the run ended.
    pub elapsed_ms: Option<u64>,
    /// Tool calls of this turn.
    pub tool_calls: u32,
    /// Failed tool calls of this turn.
    pub tool_errors: u32,
    /// Edits of this turn that did not apply (`old_string` not found...).
    pub failed_edits: u32,
    /// Transcript of every turn.
    pub transcript: Transcript,
    /// Rows scrolled up from the bottom (0 follows the output).
    pub scroll: usize,
    open: Option<OpenLine>,
    in_code: bool,
    tools: Vec<ToolEntry>,
    theme: Theme,
}

impl Panel {
    /// An idle panel for `label`.
    pub fn new(label: &str, theme: Theme) -> Panel {
        Panel {
            label: label.to_string(),
            status: PanelStatus::Idle,
            step: 0,
            usage: Usage::default(),
            cost: Some(0.0),
            past_cost: Some(0.0),
            started_ms: 0,
            elapsed_ms: None,
            tool_calls: 0,
            tool_errors: 0,
            failed_edits: 0,
            transcript: Transcript::new(),
            scroll: 0,
            open: None,
            in_code: false,
            tools: Vec::new(),
            theme,
        }
    }

    /// Session cost so far including the running turn (`None`: some price unknown).
    pub fn total_cost(&self) -> Option<f64> {
        match (self.past_cost, self.cost) {
            (Some(a), Some(b)) => Some(a + b),
            _ => None,
        }
    }

    /// Elapsed time of this turn at `now_ms`.
    pub fn elapsed(&self, now_ms: u64) -> u64 {
        self.elapsed_ms
            .unwrap_or_else(|| now_ms.saturating_sub(self.started_ms))
    }

    /// Starts a turn: a separator with the prompt, fresh counters.
    pub fn begin_turn(&mut self, turn: u32, prompt: &str, now_ms: u64) {
        self.close_open();
        self.fold_cost();
        if !self.transcript.is_empty() {
            self.transcript.push(TLine::new());
        }
        let mut line = TLine::styled(&format!("── turn {turn} ── "), self.theme.dim());
        line.push(&one_line(prompt, 200), self.theme.bold());
        self.transcript.push(line);
        self.status = PanelStatus::Preparing;
        self.step = 0;
        self.usage = Usage::default();
        self.cost = Some(0.0);
        self.started_ms = now_ms;
        self.elapsed_ms = None;
        self.tool_calls = 0;
        self.tool_errors = 0;
        self.failed_edits = 0;
        self.tools.clear();
        self.in_code = false;
        self.scroll = 0;
    }

    fn fold_cost(&mut self) {
        self.past_cost = self.total_cost();
        self.cost = Some(0.0);
    }

    /// Adds a dim note line (not addressed this turn, a banner...).
    pub fn note(&mut self, text: &str) {
        self.close_open();
        self.transcript.push(TLine::styled(text, self.theme.dim()));
    }

    /// Applies one event of the model's run.
    pub fn apply(&mut self, event: &AgentEvent, now_ms: u64) {
        let theme = self.theme;
        match event {
            AgentEvent::StepStarted { step } => {
                self.status = PanelStatus::Running;
                self.step = *step;
                self.close_open();
            }
            AgentEvent::TextDelta { text } => {
                self.status = PanelStatus::Running;
                self.stream(StreamKind::Text, text);
            }
            AgentEvent::ThinkingDelta { text } => {
                self.status = PanelStatus::Running;
                self.stream(StreamKind::Thinking, text);
            }
            AgentEvent::ToolCallStarted { id, name } => {
                self.close_open();
                let line = self.transcript.push(TLine::new());
                self.transcript.push(TLine::new().verbose());
                self.tools.push(ToolEntry {
                    id: id.clone(),
                    name: name.clone(),
                    args: String::new(),
                    line,
                });
                self.redraw_tool(self.tools.len() - 1, None);
            }
            AgentEvent::ToolCallArgs { .. } | AgentEvent::StepFinished { .. } => {}
            AgentEvent::ToolCallReady {
                id,
                name,
                arguments,
            } => {
                let index = match self.tools.iter().position(|t| t.id == *id) {
                    Some(index) => index,
                    None => {
                        self.close_open();
                        let line = self.transcript.push(TLine::new());
                        self.transcript.push(TLine::new().verbose());
                        self.tools.push(ToolEntry {
                            id: id.clone(),
                            name: name.clone(),
                            args: String::new(),
                            line,
                        });
                        self.tools.len() - 1
                    }
                };
                self.tools[index].args = arguments.clone();
                self.redraw_tool(index, None);
                let line = self.tools[index].line + 1;
                let mut args = TLine::styled("    ", theme.dim());
                args.push(&one_line(arguments, 2000), theme.dim());
                self.transcript.set(line, args.verbose());
            }
            AgentEvent::ToolResult {
                id,
                is_error,
                bytes,
                summary,
                duration_ms,
                failed_edit,
                ..
            } => {
                self.tool_calls += 1;
                if *is_error {
                    self.tool_errors += 1;
                }
                if *failed_edit {
                    self.failed_edits += 1;
                }
                if let Some(index) = self.tools.iter().position(|t| t.id == *id) {
                    self.redraw_tool(
                        index,
                        Some(ToolDone {
                            is_error: *is_error,
                            bytes: *bytes,
                            summary,
                            duration_ms: *duration_ms,
                        }),
                    );
                }
            }
            AgentEvent::Usage { total, cost, .. } => {
                self.usage = *total;
                self.cost = *cost;
            }
            AgentEvent::Retrying {
                attempt,
                delay_ms,
                reason,
            } => {
                self.close_open();
                let text = format!(
                    "↻ retrying (attempt {attempt}) in {}: {}",
                    duration_ms(*delay_ms),
                    one_line(reason, 300)
                );
                self.transcript.push(TLine::styled(&text, theme.warn()));
            }
            AgentEvent::Error { message, .. } => {
                self.close_open();
                let text = format!("✗ {}", one_line(message, 1000));
                self.transcript.push(TLine::styled(&text, theme.error()));
            }
            AgentEvent::Finished { stop } => {
                self.close_open();
                self.status = PanelStatus::Done(*stop);
                self.elapsed_ms = Some(now_ms.saturating_sub(self.started_ms));
            }
        }
    }

    /// Records the driver's summary once the run has ended.
    pub fn finish(&mut self, summary: &RunSummary) {
        let theme = self.theme;
        self.close_open();
        self.status = PanelStatus::Done(summary.stop);
        self.elapsed_ms = Some(summary.elapsed_ms);
        if let Some(error) = &summary.error {
            self.transcript
                .push(TLine::styled(&format!("✗ {error}"), theme.error()));
        }
        // The title's marks (docs/tui.md): `✓` a normal finish, `✗` an error, `■` a limit
        // or a cancel.
        let (mark, style) = match summary.stop {
            RunStop::Completed => ("✓", theme.ok()),
            RunStop::Error => ("✗", theme.error()),
            _ => ("■", theme.warn()),
        };
        let mut line = TLine::styled(&format!("{mark} {}", summary.stop.label()), style);
        line.push(
            &format!(
                " · {} step(s) · {} tokens · {}",
                self.step,
                tokens(self.usage.input.saturating_add(self.usage.output)),
                duration_ms(summary.elapsed_ms)
            ),
            theme.dim(),
        );
        self.transcript.push(line);
        self.transcript
            .push(TLine::styled(&files_line(summary), theme.dim()));
    }

    fn stream(&mut self, kind: StreamKind, text: &str) {
        if self.open.as_ref().is_some_and(|o| o.kind != kind) {
            self.close_open();
        }
        for (i, piece) in text.split('\n').enumerate() {
            if i > 0 {
                self.close_open();
                self.open_line(kind);
            }
            if self.open.is_none() {
                self.open_line(kind);
            }
            if let Some(open) = self.open.as_mut() {
                open.raw.push_str(piece);
            }
            self.restyle_open(false);
        }
    }

    fn open_line(&mut self, kind: StreamKind) {
        let line = match kind {
            StreamKind::Thinking => TLine::new().verbose(),
            StreamKind::Text => TLine::new(),
        };
        let index = self.transcript.push(line);
        self.open = Some(OpenLine {
            index,
            raw: String::new(),
            kind,
        });
    }

    /// Re-renders the open line; `closing` makes a fence change the code state.
    fn restyle_open(&mut self, closing: bool) {
        let Some(open) = &self.open else { return };
        let line = match open.kind {
            StreamKind::Thinking => {
                TLine::styled(&open.raw, self.theme.dim().patch(italic())).verbose()
            }
            StreamKind::Text => {
                let (line, in_code) = render_line(&open.raw, self.in_code, self.theme);
                if closing {
                    self.in_code = in_code;
                }
                line
            }
        };
        let index = open.index;
        self.transcript.set(index, line);
    }

    fn close_open(&mut self) {
        if let Some(open) = &self.open {
            // A line opened by a trailing newline and never written to is not kept.
            if open.raw.is_empty() && open.index + 1 == self.transcript.len() {
                let index = open.index;
                self.open = None;
                self.transcript.truncate(index);
                return;
            }
            self.restyle_open(true);
            self.open = None;
        }
    }

    fn redraw_tool(&mut self, index: usize, done: Option<ToolDone<'_>>) {
        let theme = self.theme;
        let Some(tool) = self.tools.get(index) else {
            return;
        };
        let target = arg_summary(&tool.args);
        let mut line = TLine::new();
        match &done {
            None => {
                line.push(&format!("⚙ {}", tool.name), theme.running());
                if !target.is_empty() {
                    line.push(&format!(" {target}"), theme.text());
                }
                line.push(" …", theme.dim());
            }
            Some(done) => {
                let style = if done.is_error {
                    theme.error()
                } else {
                    theme.ok()
                };
                let icon = if done.is_error { "✗" } else { "✓" };
                line.push(&format!("{icon} {}", tool.name), style);
                if !target.is_empty() {
                    let target_style = if done.is_error { style } else { theme.text() };
                    line.push(&format!(" {target}"), target_style);
                }
                line.push(
                    &format!(
                        " · {} · {}",
                        duration_ms(done.duration_ms),
                        bytes(done.bytes)
                    ),
                    theme.dim(),
                );
                if done.is_error {
                    line.push(&format!(" · {}", one_line(done.summary, 300)), style);
                }
            }
        }
        let at = tool.line;
        self.transcript.set(at, line);
    }
}

struct ToolDone<'a> {
    is_error: bool,
    bytes: usize,
    summary: &'a str,
    duration_ms: u64,
}

fn italic() -> ratatui::style::Style {
    ratatui::style::Style::new().add_modifier(ratatui::style::Modifier::ITALIC)
}

/// The most telling argument of a tool call: its path, command, pattern or URL.
pub fn arg_summary(arguments: &str) -> String {
    let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(arguments)
    else {
        return String::new();
    };
    for key in ["path", "command", "pattern", "query", "url", "patch"] {
        if let Some(serde_json::Value::String(value)) = map.get(key) {
            return one_line(value, 80);
        }
    }
    String::new()
}

/// The last line of a finished model's summary: which files it wrote and which it deleted
/// (a deleted file is never reported as written). Only the count is known for a session log
/// without proposals (version 1).
fn files_line(summary: &RunSummary) -> String {
    let written: Vec<&str> = summary
        .files
        .iter()
        .filter(|f| !summary.deleted.contains(f))
        .map(String::as_str)
        .collect();
    let mut parts = Vec::new();
    if !written.is_empty() {
        parts.push(format!(
            "wrote {} file(s): {}",
            written.len(),
            one_line(&written.join(", "), 300)
        ));
    }
    if !summary.deleted.is_empty() {
        parts.push(format!(
            "deleted {} file(s): {}",
            summary.deleted.len(),
            one_line(&summary.deleted.join(", "), 300)
        ));
    }
    match (parts.is_empty(), summary.writes) {
        (false, _) => parts.join(" · "),
        (true, 0) => "wrote no file".to_string(),
        (true, n) => format!("{n} write(s)"),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn text_of(panel: &Panel) -> Vec<String> {
        panel
            .transcript
            .lines()
            .iter()
            .filter(|l| !l.verbose_only)
            .map(|l| l.text().to_string())
            .collect()
    }

    fn delta(text: &str) -> AgentEvent {
        AgentEvent::TextDelta {
            text: text.to_string(),
        }
    }

    #[test]
    fn streamed_text_is_split_into_lines_with_markdown() {
        let mut p = Panel::new("demo/good", Theme::COLOR);
        p.begin_turn(1, "fix it", 0);
        for piece in ["Hello **wor", "ld**\n```\nlet a", " = 1;\n```\ndone"] {
            p.apply(&delta(piece), 10);
        }
        assert_eq!(
            text_of(&p),
            [
                "── turn 1 ── fix it",
                "Hello world",
                "┄┄┄",
                "let a = 1;",
                "┄┄┄",
                "done"
            ]
        );
    }

    #[test]
    fn tool_calls_show_running_then_their_result() {
        let mut p = Panel::new("m", Theme::COLOR);
        p.begin_turn(1, "x", 0);
        p.apply(
            &AgentEvent::ToolCallStarted {
                id: "c1".into(),
                name: "edit_file".into(),
            },
            0,
        );
        p.apply(
            &AgentEvent::ToolCallReady {
                id: "c1".into(),
                name: "edit_file".into(),
                arguments: r#"{"path":"src/lib.rs","old_string":"a"}"#.into(),
            },
            0,
        );
        assert_eq!(text_of(&p)[1], "⚙ edit_file src/lib.rs …");
        p.apply(
            &AgentEvent::ToolResult {
                id: "c1".into(),
                name: "edit_file".into(),
                is_error: true,
                bytes: 40,
                summary: "old_string not found".into(),
                duration_ms: 3,
                failed_edit: true,
            },
            5,
        );
        assert_eq!(
            text_of(&p)[1],
            "✗ edit_file src/lib.rs · 3 ms · 40 B · old_string not found"
        );
        assert_eq!(p.tool_errors, 1);
    }

    #[test]
    fn costs_fold_into_the_session_total_across_turns() {
        let mut p = Panel::new("m", Theme::COLOR);
        p.begin_turn(1, "x", 0);
        p.apply(
            &AgentEvent::Usage {
                step: Usage::default(),
                total: Usage::default(),
                cost: Some(0.5),
            },
            0,
        );
        p.begin_turn(2, "y", 0);
        p.apply(
            &AgentEvent::Usage {
                step: Usage::default(),
                total: Usage::default(),
                cost: Some(0.25),
            },
            0,
        );
        assert_eq!(p.total_cost(), Some(0.75));
    }
}
