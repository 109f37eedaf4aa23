//! One model's live panel: its transcript built from [`AgentEvent`]s, its counters and status.
//!
//! Panels are built only from the agent event stream (the same one `versus ask` and the session
//! log see), so a live run and a replayed session look identical. Lines that change after they
//! appear — the line being streamed, a tool call waiting for its result — are remembered by
//! index and replaced in place; everything else is append-only, which keeps the wrap cache
//! (see [`super::transcript`]) almost always warm.

use versus_core::model::{AgentEvent, RunStop, SubAgentTag, ToolOutcome, Usage, output_tail};

use super::format::{bytes, duration_ms, one_line, usage_tokens};
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
    /// Its result arrived.
    done: bool,
}

/// A sub-agent's tool call, shown nested under its parent's `spawn_agent`.
#[derive(Debug)]
struct SubCall {
    /// The sub-agent's name (`coder #1`) and its call id: ids repeat across agents.
    agent: String,
    id: String,
    args: String,
    line: usize,
}

/// Lines of a tool's output shown under its call (the whole result is one key away).
pub const TAIL_LINES: usize = 3;

/// One finished tool call as the "whole result" overlay shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct CallResult {
    /// The turn it belongs to.
    pub turn: u32,
    /// Tool name.
    pub name: String,
    /// Its most telling argument ([`arg_summary`]).
    pub target: String,
    /// How it ended.
    pub outcome: ToolOutcome,
    /// Run time.
    pub duration_ms: u64,
    /// The text the model received.
    pub output: String,
    /// The call's id (ids repeat across a model and its sub-agents).
    pub id: String,
    /// The sub-agent that made the call (`None`: the model itself).
    pub agent: Option<CallAgent>,
}

/// The sub-agent that made a call, and the call that started it, so the overlay lists a
/// sub-agent's calls under its parent's `spawn_agent`.
#[derive(Debug, Clone, PartialEq)]
pub struct CallAgent {
    /// Its name (`coder #1`).
    pub name: String,
    /// 1 for a sub-agent of the model, 2 for one of a sub-agent...
    pub depth: u32,
    /// Who made the `spawn_agent` call that started it (`None`: the model itself).
    pub parent: Option<String>,
    /// That call's id.
    pub call_id: String,
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
    /// Tool calls of this turn that did not succeed (by outcome: a non-zero exit counts).
    pub tool_errors: u32,
    /// Edits of this turn that did not apply (`old_string` not found...).
    pub failed_edits: u32,
    /// Transcript of every turn.
    pub transcript: Transcript,
    /// Rows scrolled up from the bottom (0 follows the output).
    pub scroll: usize,
    /// Every finished tool call of the session, its sub-agents' included, in the order they
    /// finished, with the text the model received (what the "whole result" key shows).
    pub results: Vec<CallResult>,
    /// The turn being shown.
    turn: u32,
    open: Option<OpenLine>,
    in_code: bool,
    tools: Vec<ToolEntry>,
    sub_calls: Vec<SubCall>,
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
            results: Vec::new(),
            turn: 0,
            open: None,
            in_code: false,
            tools: Vec::new(),
            sub_calls: Vec::new(),
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
        self.turn = turn;
        self.step = 0;
        self.usage = Usage::default();
        self.cost = Some(0.0);
        self.started_ms = now_ms;
        self.elapsed_ms = None;
        self.tool_calls = 0;
        self.tool_errors = 0;
        self.failed_edits = 0;
        self.tools.clear();
        self.sub_calls.clear();
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
                    done: false,
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
                            done: false,
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
                name,
                is_error,
                bytes,
                summary,
                duration_ms,
                failed_edit,
                outcome,
                output,
                ..
            } => {
                self.tool_calls += 1;
                let outcome = ToolOutcome::or_legacy(*outcome, *is_error);
                if !outcome.is_ok() {
                    self.tool_errors += 1;
                }
                if *failed_edit {
                    self.failed_edits += 1;
                }
                let index = self.tools.iter().position(|t| t.id == *id);
                let target = index
                    .and_then(|i| self.tools.get(i))
                    .map(|t| arg_summary(&t.args))
                    .unwrap_or_default();
                self.results.push(CallResult {
                    turn: self.turn,
                    name: name.clone(),
                    target,
                    outcome,
                    duration_ms: *duration_ms,
                    output: output.clone(),
                    id: id.clone(),
                    agent: None,
                });
                if let Some(index) = index {
                    self.tools[index].done = true;
                    self.redraw_tool(
                        index,
                        Some(ToolDone {
                            is_error: *is_error,
                            outcome,
                            bytes: *bytes,
                            summary,
                            duration_ms: *duration_ms,
                        }),
                    );
                    self.show_output(index, outcome, *is_error, output);
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
                self.mark_not_run();
                self.status = PanelStatus::Done(*stop);
                self.elapsed_ms = Some(now_ms.saturating_sub(self.started_ms));
            }
            AgentEvent::SubAgent { agent, event } => self.apply_sub_agent(agent, event, None),
        }
    }

    /// A sub-agent's event: its calls nested under the parent's, indented by depth and named
    /// with its role (`  ↳ coder #1: ✓ write_file a.txt · 3 ms`), its errors and its end.
    /// Its usage is not counted here: the parent's `Usage` event after it carries the sum.
    /// `parent` is the sub-agent that started this one (`None`: the model).
    fn apply_sub_agent(&mut self, agent: &SubAgentTag, event: &AgentEvent, parent: Option<&str>) {
        let theme = self.theme;
        let indent = "  ".repeat(agent.depth as usize);
        let name = agent.name();
        match event {
            AgentEvent::SubAgent {
                agent: inner,
                event,
            } => self.apply_sub_agent(inner, event, Some(&name)),
            AgentEvent::ToolCallReady {
                id,
                name: tool,
                arguments,
            } => {
                self.close_open();
                let mut line = TLine::styled(&format!("{indent}↳ {name}: "), theme.dim());
                line.push(&format!("⚙ {tool}"), theme.running());
                let target = arg_summary(arguments);
                if !target.is_empty() {
                    line.push(&format!(" {target}"), theme.text());
                }
                line.push(" …", theme.dim());
                let at = self.transcript.push(line);
                self.sub_calls.push(SubCall {
                    agent: name,
                    id: id.clone(),
                    args: arguments.clone(),
                    line: at,
                });
            }
            AgentEvent::ToolResult {
                id,
                name: tool,
                is_error,
                summary,
                duration_ms: ms,
                outcome,
                output,
                ..
            } => {
                let outcome = ToolOutcome::or_legacy(*outcome, *is_error);
                // The overlay lists it under the parent's call, whether or not its line is
                // still in this turn's transcript.
                let args = self
                    .sub_calls
                    .iter()
                    .rev()
                    .find(|c| c.agent == name && c.id == *id)
                    .map(|c| c.args.clone())
                    .unwrap_or_default();
                self.results.push(CallResult {
                    turn: self.turn,
                    name: tool.clone(),
                    target: arg_summary(&args),
                    outcome,
                    duration_ms: *ms,
                    output: output.clone(),
                    id: id.clone(),
                    agent: Some(CallAgent {
                        name: name.clone(),
                        depth: agent.depth,
                        parent: parent.map(str::to_string),
                        call_id: agent.call_id.clone(),
                    }),
                });
                let Some(call) = self
                    .sub_calls
                    .iter()
                    .rev()
                    .find(|c| c.agent == name && c.id == *id)
                else {
                    return;
                };
                let style = outcome_style(outcome, theme);
                let mut line = TLine::styled(&format!("{indent}↳ {name}: "), theme.dim());
                line.push(&format!("{} {tool}", outcome.icon()), style);
                let target = arg_summary(&call.args);
                if !target.is_empty() {
                    line.push(&format!(" {target}"), theme.text());
                }
                line.push(&format!(" · {}", duration_ms(*ms)), theme.dim());
                if !outcome.is_ok() {
                    line.push(&format!(" · {}", one_line(summary, 300)), style);
                }
                let at = call.line;
                self.transcript.set(at, line);
            }
            AgentEvent::Error { message, .. } => {
                self.close_open();
                let text = format!("{indent}↳ {name}: ✗ {}", one_line(message, 1000));
                self.transcript.push(TLine::styled(&text, theme.error()));
            }
            AgentEvent::Finished { stop } => {
                self.close_open();
                // Without the model: blind mode hides the names, and this one is a name.
                let text = format!("{indent}↳ {name} {}", stop.label());
                let style = match stop {
                    RunStop::Completed => theme.dim(),
                    RunStop::Error => theme.error(),
                    _ => theme.warn(),
                };
                self.transcript.push(TLine::styled(&text, style));
            }
            _ => {}
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
                usage_tokens(&self.usage),
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
                let style = outcome_style(done.outcome, theme);
                line.push(&format!("{} {}", done.outcome.icon(), tool.name), style);
                if !target.is_empty() {
                    let target_style = if done.outcome.is_ok() {
                        theme.text()
                    } else {
                        style
                    };
                    line.push(&format!(" {target}"), target_style);
                }
                // `error` is said by the summary that follows; the other outcomes by a word.
                if !matches!(done.outcome, ToolOutcome::Ok | ToolOutcome::Error) {
                    line.push(&format!(" · {}", done.outcome.label()), style);
                }
                line.push(
                    &format!(
                        " · {} · {}",
                        duration_ms(done.duration_ms),
                        bytes(done.bytes)
                    ),
                    theme.dim(),
                );
                if done.is_error && !shows_tail(&tool.name, done.outcome) {
                    line.push(&format!(" · {}", one_line(done.summary, 300)), style);
                }
            }
        }
        let at = tool.line;
        self.transcript.set(at, line);
    }
}

impl Panel {
    /// Once the run ended: the calls that never got a result (the run was stopped before
    /// them) say so instead of looking still running.
    fn mark_not_run(&mut self) {
        let theme = self.theme;
        for tool in self.tools.iter_mut().filter(|t| !t.done) {
            tool.done = true;
            let mut line = TLine::styled(&format!("⊘ {}", tool.name), theme.warn());
            let target = arg_summary(&tool.args);
            if !target.is_empty() {
                line.push(&format!(" {target}"), theme.warn());
            }
            line.push(" · not run", theme.warn());
            self.transcript.set(tool.line, line);
        }
    }

    /// Under a finished call: the last lines of its output (for a command, or a failure the
    /// first line does not say whole), dimmed and cut with `…`, shown in the compact view; the
    /// whole output in the verbose view (and so in `/export`). Inserted right after the call's
    /// lines, since later calls of the same step are already below it.
    fn show_output(&mut self, index: usize, outcome: ToolOutcome, is_error: bool, output: &str) {
        let theme = self.theme;
        let Some(tool) = self.tools.get(index) else {
            return;
        };
        let at = tool.line + 2;
        let mut lines = Vec::new();
        let tail =
            shows_tail(&tool.name, outcome) || (is_error && output.trim().lines().nth(1).is_some());
        if tail {
            let (shown, skipped) = output_tail(output, TAIL_LINES);
            if skipped > 0 {
                let key = super::keymap::key_name(
                    super::keymap::Context::Prompt,
                    super::keymap::KeyAction::ToolOutput,
                );
                lines.push(
                    TLine::styled(
                        &format!("    … +{skipped} line(s) above ({key}: the whole result)"),
                        theme.dim(),
                    )
                    .compact()
                    .clipped(),
                );
            }
            for text in shown {
                let mut line = TLine::styled("    ", theme.dim());
                line.push(&cut(text, TAIL_WIDTH), theme.dim());
                lines.push(line.compact().clipped());
            }
        }
        if !output.is_empty() {
            for text in output.lines() {
                let mut line = TLine::styled("    │ ", theme.dim());
                line.push(
                    &versus_core::sanitize::escape(text, versus_core::sanitize::Layout::Line),
                    theme.dim(),
                );
                lines.push(line.verbose());
            }
        }
        let added = lines.len();
        if added == 0 {
            return;
        }
        self.transcript.insert(at, lines);
        for later in self.tools.iter_mut().filter(|t| t.line >= at) {
            later.line += added;
        }
        for later in self.sub_calls.iter_mut().filter(|c| c.line >= at) {
            later.line += added;
        }
        if let Some(open) = self.open.as_mut().filter(|o| o.index >= at) {
            open.index += added;
        }
    }
}

impl Panel {
    /// The text of the "whole result" overlay: each finished call's heading (turn, mark, tool,
    /// argument, time) and the whole text the model received, escaped for the terminal; and
    /// the index of the last call's heading, which the overlay opens on. `None` before any
    /// call finished.
    ///
    /// A sub-agent's calls finish before the `spawn_agent` call that started it, but are
    /// listed after it, nested and named by the sub-agent (`↳ coder #1: ✓ write_file a.txt`),
    /// in the order they ran; while that call still runs they are listed where they finished.
    pub fn results_text(&self) -> Option<(Vec<String>, usize)> {
        let mut lines = Vec::new();
        let mut last = 0;
        let newest = self.results.len().saturating_sub(1);
        for i in self.results_order() {
            let call = &self.results[i];
            if !lines.is_empty() {
                lines.push(String::new());
            }
            if i == newest {
                last = lines.len();
            }
            let mut head = format!("turn {} · ", call.turn);
            let mut indent = "  ".to_string();
            if let Some(agent) = &call.agent {
                let nest = "  ".repeat(agent.depth as usize);
                head = format!("{nest}{head}↳ {}: ", agent.name);
                indent = format!("{nest}  ");
            }
            head.push_str(&format!("{} {}", call.outcome.mark(), call.name));
            if !call.target.is_empty() {
                head.push(' ');
                head.push_str(&call.target);
            }
            head.push_str(&format!(" · {}", duration_ms(call.duration_ms)));
            lines.push(
                versus_core::sanitize::escape(&head, versus_core::sanitize::Layout::Line)
                    .into_owned(),
            );
            if call.output.is_empty() {
                lines.push(format!("{indent}(no output recorded)"));
            }
            for text in call.output.lines() {
                lines.push(format!(
                    "{indent}{}",
                    versus_core::sanitize::escape(text, versus_core::sanitize::Layout::Line)
                ));
            }
        }
        (!self.results.is_empty()).then_some((lines, last))
    }

    /// The order the overlay lists [`Panel::results`] in: each call, then the calls of the
    /// sub-agents it started (depth first), each list in the order the calls finished.
    fn results_order(&self) -> Vec<usize> {
        let results = &self.results;
        // Where a sub-agent's call goes: under the finished call that started its agent.
        let spawner = |i: usize| -> Option<usize> {
            let call = &results[i];
            let agent = call.agent.as_ref()?;
            results.iter().position(|p| {
                p.turn == call.turn
                    && p.id == agent.call_id
                    && p.agent.as_ref().map(|a| &a.name) == agent.parent.as_ref()
            })
        };
        let parents: Vec<Option<usize>> = (0..results.len()).map(spawner).collect();
        let mut order = Vec::with_capacity(results.len());
        let mut stack: Vec<usize> = (0..results.len())
            .rev()
            .filter(|&i| parents[i].is_none())
            .collect();
        while let Some(i) = stack.pop() {
            order.push(i);
            stack.extend((0..results.len()).rev().filter(|&c| parents[c] == Some(i)));
        }
        // Nothing is left out, even of a log whose ids loop.
        if order.len() < results.len() {
            let listed: std::collections::HashSet<usize> = order.iter().copied().collect();
            order.extend((0..results.len()).filter(|i| !listed.contains(i)));
        }
        order
    }
}

/// Columns of one tail line before it is cut with `…`.
const TAIL_WIDTH: usize = 200;

/// `text` escaped for one line and cut to `max` characters with `…`.
fn cut(text: &str, max: usize) -> String {
    let escaped = versus_core::sanitize::escape(text, versus_core::sanitize::Layout::Line);
    let mut out: String = escaped.chars().take(max).collect();
    if out.len() < escaped.len() {
        out.push('…');
    }
    out
}

/// Whether a call's output tail is shown under it: always for a command and for an MCP
/// server's tool (their output is what they did, and nothing else on the call line says it),
/// else for an outcome the call line's word does not explain.
fn shows_tail(tool: &str, outcome: ToolOutcome) -> bool {
    tool == "bash"
        || is_mcp_tool(tool)
        || matches!(outcome, ToolOutcome::TimedOut | ToolOutcome::Cancelled)
}

/// Whether `tool` is an MCP server's tool: those are named `server__tool`, and no built-in
/// tool's name has `__`.
fn is_mcp_tool(tool: &str) -> bool {
    tool.split_once("__")
        .is_some_and(|(server, name)| !server.is_empty() && !name.is_empty())
}

/// The colour of an outcome's mark: success, failure, or stopped (refused, timed out,
/// cancelled).
pub fn outcome_style(outcome: ToolOutcome, theme: Theme) -> ratatui::style::Style {
    match outcome {
        ToolOutcome::Ok => theme.ok(),
        ToolOutcome::Exit { .. } | ToolOutcome::Signal { .. } | ToolOutcome::Error => theme.error(),
        ToolOutcome::Refused | ToolOutcome::TimedOut | ToolOutcome::Cancelled => theme.warn(),
    }
}

struct ToolDone<'a> {
    is_error: bool,
    outcome: ToolOutcome,
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
    for key in [
        "path", "command", "pattern", "query", "url", "patch", "task",
    ] {
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
    fn a_sub_agents_calls_are_nested_under_the_parent_with_its_role() {
        let mut p = Panel::new("m", Theme::COLOR);
        p.begin_turn(1, "x", 0);
        p.apply(
            &AgentEvent::ToolCallReady {
                id: "c1".into(),
                name: "spawn_agent".into(),
                arguments: r#"{"task":"fix it","role":"coder"}"#.into(),
            },
            0,
        );
        let coder = SubAgentTag {
            role: "coder".into(),
            number: 1,
            depth: 1,
            model: "demo/x".into(),
            call_id: "c1".into(),
        };
        let explorer = SubAgentTag {
            role: "explorer".into(),
            number: 2,
            depth: 2,
            model: "demo/x".into(),
            call_id: "c1".into(),
        };
        let sub = |tag: &SubAgentTag, event: AgentEvent| AgentEvent::SubAgent {
            agent: tag.clone(),
            event: Box::new(event),
        };
        // The same call id as the parent's: ids repeat across agents.
        p.apply(
            &sub(
                &coder,
                AgentEvent::ToolCallReady {
                    id: "c1".into(),
                    name: "write_file".into(),
                    arguments: r#"{"path":"a.txt","content":"x"}"#.into(),
                },
            ),
            0,
        );
        p.apply(
            &sub(
                &coder,
                sub(
                    &explorer,
                    AgentEvent::ToolCallReady {
                        id: "c1".into(),
                        name: "write_file".into(),
                        arguments: r#"{"path":"b.txt"}"#.into(),
                    },
                ),
            ),
            0,
        );
        p.apply(
            &sub(
                &coder,
                sub(
                    &explorer,
                    AgentEvent::ToolResult {
                        id: "c1".into(),
                        name: "write_file".into(),
                        is_error: true,
                        bytes: 10,
                        summary: "unknown tool `write_file`".into(),
                        duration_ms: 0,
                        failed_edit: false,
                        outcome: Some(ToolOutcome::Error),
                        output: String::new(),
                        timing: None,
                    },
                ),
            ),
            0,
        );
        p.apply(
            &sub(
                &coder,
                AgentEvent::ToolResult {
                    id: "c1".into(),
                    name: "write_file".into(),
                    is_error: false,
                    bytes: 10,
                    summary: "wrote".into(),
                    duration_ms: 3,
                    failed_edit: false,
                    outcome: Some(ToolOutcome::Ok),
                    output: String::new(),
                    timing: None,
                },
            ),
            0,
        );
        p.apply(
            &sub(
                &coder,
                AgentEvent::Finished {
                    stop: RunStop::Completed,
                },
            ),
            0,
        );
        // The parent's own counters are not the sub-agent's.
        assert_eq!(p.tool_calls, 0);
        assert_eq!(
            text_of(&p)[1..],
            [
                "⚙ spawn_agent fix it …",
                "  ↳ coder #1: ✓ write_file a.txt · 3 ms",
                "    ↳ explorer #2: ✗ write_file b.txt · 0 ms · unknown tool `write_file`",
                "  ↳ coder #1 done",
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
                outcome: None,
                output: String::new(),
                timing: None,
            },
            5,
        );
        assert_eq!(
            text_of(&p)[1],
            "✗ edit_file src/lib.rs · 3 ms · 40 B · old_string not found"
        );
        assert_eq!(p.tool_errors, 1);
    }

    fn bash_call(p: &mut Panel, id: &str, command: &str) {
        p.apply(
            &AgentEvent::ToolCallStarted {
                id: id.into(),
                name: "bash".into(),
            },
            0,
        );
        p.apply(
            &AgentEvent::ToolCallReady {
                id: id.into(),
                name: "bash".into(),
                arguments: serde_json::json!({ "command": command }).to_string(),
            },
            0,
        );
    }

    fn bash_result(p: &mut Panel, id: &str, outcome: ToolOutcome, output: &str) {
        p.apply(
            &AgentEvent::ToolResult {
                id: id.into(),
                name: "bash".into(),
                is_error: matches!(outcome, ToolOutcome::TimedOut),
                bytes: output.len(),
                summary: output.lines().next().unwrap_or_default().into(),
                duration_ms: 7,
                failed_edit: false,
                outcome: Some(outcome),
                output: output.into(),
                timing: None,
            },
            5,
        );
    }

    #[test]
    fn a_command_that_exits_3_is_marked_failed_with_its_output_under_it() {
        let mut p = Panel::new("m", Theme::COLOR);
        p.begin_turn(1, "x", 0);
        // Two calls of one step: the first one's output goes under it, above the second.
        bash_call(&mut p, "c1", "make test");
        bash_call(&mut p, "c2", "echo fine");
        let out = "one\ntwo\nthree\nFAILED: 2 tests\n[exit code: 3]";
        bash_result(&mut p, "c1", ToolOutcome::Exit { code: 3 }, out);
        bash_result(&mut p, "c2", ToolOutcome::Ok, "fine\n[exit code: 0]");
        // The review's `failed` column counts it although the model was not told "error".
        assert_eq!((p.tool_calls, p.tool_errors), (2, 1));
        assert_eq!(
            text_of(&p)[1..],
            [
                "✗ bash make test · exit 3 · 7 ms · 44 B",
                "    … +1 line(s) above (Ctrl+T: the whole result)",
                "    two",
                "    three",
                "    FAILED: 2 tests",
                "✓ bash echo fine · 7 ms · 19 B",
                "    fine",
            ]
        );
        assert_eq!(
            p.transcript.lines()[1].style_at(0),
            Theme::COLOR.error(),
            "the mark is the failure colour"
        );
        // The verbose view has the whole output instead of the tail.
        let verbose: Vec<&str> = p
            .transcript
            .lines()
            .iter()
            .filter(|l| l.shown(true))
            .map(|l| l.text())
            .collect();
        assert!(verbose.contains(&"    │ one"), "{verbose:?}");
        assert!(verbose.contains(&"    │ [exit code: 3]"), "{verbose:?}");
        assert!(!verbose.contains(&"    two"), "{verbose:?}");
        // The overlay's text: both calls, whole, opening on the last.
        let (lines, last) = p.results_text().unwrap();
        assert_eq!(lines[0], "turn 1 · ✗ exit 3 bash make test · 7 ms");
        assert_eq!(lines[last], "turn 1 · ✓ bash echo fine · 7 ms");
        assert!(lines.contains(&"  one".to_string()), "{lines:?}");
    }

    /// Issue 24: an MCP server's tool (`server__tool`) shows its result's tail under the call,
    /// like a command, with its outcome mark; a failed one its tail instead of a summary.
    #[test]
    fn an_mcp_tools_result_tail_is_shown_under_its_call() {
        let mut p = Panel::new("m", Theme::COLOR);
        p.begin_turn(1, "x", 0);
        for (id, is_error, output) in [
            ("m1", false, "alpha\nbeta\ngamma\ndelta"),
            ("m2", true, "server said no\nbecause"),
        ] {
            p.apply(
                &AgentEvent::ToolCallReady {
                    id: id.into(),
                    name: "py__lines".into(),
                    arguments: r#"{"count":4}"#.into(),
                },
                0,
            );
            p.apply(
                &AgentEvent::ToolResult {
                    id: id.into(),
                    name: "py__lines".into(),
                    is_error,
                    bytes: output.len(),
                    summary: output.lines().next().unwrap_or_default().into(),
                    duration_ms: 4,
                    failed_edit: false,
                    outcome: None,
                    output: output.into(),
                    timing: None,
                },
                5,
            );
        }
        assert_eq!(
            text_of(&p)[1..],
            [
                "✓ py__lines · 4 ms · 22 B",
                "    … +1 line(s) above (Ctrl+T: the whole result)",
                "    beta",
                "    gamma",
                "    delta",
                "✗ py__lines · 4 ms · 22 B",
                "    server said no",
                "    because",
            ]
        );
        assert!(is_mcp_tool("fs__write_file") && !is_mcp_tool("read_file"));
        assert!(!is_mcp_tool("__x") && !is_mcp_tool("x__"));
    }

    /// Issue 24: the overlay lists a sub-agent's calls (which finish first) after the
    /// `spawn_agent` call that started it, nested and named by the sub-agent, a sub-agent's own
    /// sub-agent one level further; and opens on the latest call.
    #[test]
    fn the_overlay_lists_sub_agent_calls_under_the_call_that_started_them() {
        let mut p = Panel::new("m", Theme::COLOR);
        p.begin_turn(1, "x", 0);
        let coder = SubAgentTag {
            role: "coder".into(),
            number: 1,
            depth: 1,
            model: "demo/m".into(),
            call_id: "s1".into(),
        };
        let explorer = SubAgentTag {
            role: "explorer".into(),
            number: 2,
            depth: 2,
            model: "demo/m".into(),
            call_id: "c2".into(),
        };
        let result = |id: &str, name: &str, output: &str| AgentEvent::ToolResult {
            id: id.into(),
            name: name.into(),
            is_error: false,
            bytes: output.len(),
            summary: output.into(),
            duration_ms: 2,
            failed_edit: false,
            outcome: None,
            output: output.into(),
            timing: None,
        };
        let ready = |id: &str, name: &str, args: &str| AgentEvent::ToolCallReady {
            id: id.into(),
            name: name.into(),
            arguments: args.into(),
        };
        let under = |tag: &SubAgentTag, event: AgentEvent| AgentEvent::SubAgent {
            agent: tag.clone(),
            event: Box::new(event),
        };
        p.apply(&ready("r1", "read_file", r#"{"path":"a.rs"}"#), 0);
        p.apply(&result("r1", "read_file", "1 fn a() {}"), 0);
        p.apply(
            &ready("s1", "spawn_agent", r#"{"task":"fix a","role":"coder"}"#),
            0,
        );
        // The coder's own calls share ids with the model's: they are told apart by agent.
        p.apply(
            &under(&coder, ready("r1", "read_file", r#"{"path":"a.rs"}"#)),
            0,
        );
        p.apply(&under(&coder, result("r1", "read_file", "1 fn a() {}")), 0);
        p.apply(
            &under(&coder, ready("c2", "spawn_agent", r#"{"task":"look"}"#)),
            0,
        );
        let deep = under(
            &coder,
            under(&explorer, ready("e1", "list_directory", "{}")),
        );
        p.apply(&deep, 0);
        let deep = under(
            &coder,
            under(&explorer, result("e1", "list_directory", "a.rs")),
        );
        p.apply(&deep, 0);
        p.apply(
            &under(
                &coder,
                result("c2", "spawn_agent", "sub-agent explorer #2 finished."),
            ),
            0,
        );
        // Before the spawn_agent call finished, its sub-agent's calls are listed as they came.
        let (lines, _) = p.results_text().unwrap();
        assert!(
            lines.contains(&"  turn 1 · ↳ coder #1: ✓ read_file a.rs · 2 ms".to_string()),
            "{lines:?}"
        );
        p.apply(
            &ready("w1", "write_file", r#"{"path":"b.rs","content":"x"}"#),
            0,
        );
        p.apply(
            &under(&coder, ready("w1", "write_file", r#"{"path":"a.rs"}"#)),
            0,
        );
        p.apply(&under(&coder, result("w1", "write_file", "wrote a.rs")), 0);
        p.apply(
            &result("s1", "spawn_agent", "sub-agent coder #1 finished."),
            0,
        );
        p.apply(&result("w1", "write_file", "wrote b.rs"), 0);
        let (lines, last) = p.results_text().unwrap();
        let heads: Vec<&str> = lines
            .iter()
            .filter(|l| l.contains("turn 1 ·"))
            .map(String::as_str)
            .collect();
        assert_eq!(
            heads,
            [
                "turn 1 · ✓ read_file a.rs · 2 ms",
                "turn 1 · ✓ spawn_agent fix a · 2 ms",
                "  turn 1 · ↳ coder #1: ✓ read_file a.rs · 2 ms",
                "  turn 1 · ↳ coder #1: ✓ spawn_agent look · 2 ms",
                "    turn 1 · ↳ explorer #2: ✓ list_directory · 2 ms",
                "  turn 1 · ↳ coder #1: ✓ write_file a.rs · 2 ms",
                "turn 1 · ✓ write_file b.rs · 2 ms",
            ]
        );
        assert!(lines.contains(&"      a.rs".to_string()), "{lines:?}");
        assert!(lines.contains(&"    wrote a.rs".to_string()), "{lines:?}");
        assert_eq!(lines[last], "turn 1 · ✓ write_file b.rs · 2 ms");
        // Its calls are listed, not counted as the model's.
        assert_eq!(p.tool_calls, 3);
    }

    #[test]
    fn escape_sequences_in_tool_output_reach_the_panel_escaped() {
        let mut p = Panel::new("m", Theme::COLOR);
        p.begin_turn(1, "x", 0);
        bash_call(&mut p, "c1", "cat evil");
        let out = "\x1b]0;pwned\x07title\n\x1b[2Jcleared\n[exit code: 0]";
        bash_result(&mut p, "c1", ToolOutcome::Ok, out);
        let all: Vec<&str> = p.transcript.lines().iter().map(|l| l.text()).collect();
        assert!(all.contains(&"    \\x1b]0;pwned\\x07title"), "{all:?}");
        assert!(all.contains(&"    \\x1b[2Jcleared"), "{all:?}");
        assert!(all.iter().all(|l| !l.contains('\x1b')), "{all:?}");
        let (lines, _) = p.results_text().unwrap();
        assert!(lines.iter().all(|l| !l.contains('\x1b')), "{lines:?}");
        assert!(
            lines.contains(&"  \\x1b[2Jcleared".to_string()),
            "{lines:?}"
        );
    }

    #[test]
    fn a_call_the_run_stopped_before_is_marked_not_run() {
        let mut p = Panel::new("m", Theme::COLOR);
        p.begin_turn(1, "x", 0);
        bash_call(&mut p, "c1", "make");
        p.apply(
            &AgentEvent::Finished {
                stop: RunStop::Cancelled,
            },
            9,
        );
        assert_eq!(text_of(&p)[1], "⊘ bash make · not run");
    }

    #[test]
    fn a_timed_out_command_is_marked_timed_out() {
        let mut p = Panel::new("m", Theme::COLOR);
        p.begin_turn(1, "x", 0);
        bash_call(&mut p, "c1", "sleep 99");
        let out = "started\n[the command did not finish in time]\n[killed: timed out after 1 s]";
        bash_result(&mut p, "c1", ToolOutcome::TimedOut, out);
        assert_eq!(
            text_of(&p)[1..3],
            [
                format!("⏱ bash sleep 99 · timed out · 7 ms · {} B", out.len()),
                "    started".to_string(),
            ]
        );
        assert_eq!(p.transcript.lines()[1].style_at(0), Theme::COLOR.warn());
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
