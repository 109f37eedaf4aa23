//! What one model's run looks like from outside: the event stream every frontend (TUI panels,
//! `versus ask` progress, headless reports, session logs) is built from, and the run's summary.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::stream::{StopReason, Usage};
use super::tool_outcome::ToolOutcome;

/// Why a model's run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStop {
    /// The model finished on its own (no more tool calls).
    Completed,
    /// It reached `max_steps`.
    MaxSteps,
    /// It ran out of time.
    Timeout,
    /// Its cost reached `max_cost`.
    MaxCost,
    /// The user (or the runner) cancelled it.
    Cancelled,
    /// The provider failed (after retries) or the context overflowed.
    Error,
    /// Its last answer was cut at the output token limit (the provider's `max_tokens`,
    /// `length`, `MAX_TOKENS`): it did not finish, though it asked for no tool.
    MaxTokens,
}

impl RunStop {
    /// A short word for tables.
    pub fn label(self) -> &'static str {
        match self {
            RunStop::Completed => "done",
            RunStop::MaxSteps => "max steps",
            RunStop::Timeout => "timeout",
            RunStop::MaxCost => "max cost",
            RunStop::Cancelled => "cancelled",
            RunStop::Error => "error",
            RunStop::MaxTokens => "max tokens",
        }
    }
}

/// One event of a model's run, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AgentEvent {
    /// A request to the model begins (1-based).
    StepStarted {
        /// Step number.
        step: u32,
    },
    /// Visible text.
    TextDelta {
        /// New text.
        text: String,
    },
    /// Thinking text.
    ThinkingDelta {
        /// New text.
        text: String,
    },
    /// The model began a tool call.
    ToolCallStarted {
        /// Call id.
        id: String,
        /// Tool name.
        name: String,
    },
    /// More argument text for a call.
    ToolCallArgs {
        /// Call id.
        id: String,
        /// New argument text.
        delta: String,
    },
    /// A tool call is complete and about to run.
    ToolCallReady {
        /// Call id.
        id: String,
        /// Tool name.
        name: String,
        /// Full argument text.
        arguments: String,
    },
    /// A tool finished.
    ToolResult {
        /// Call id.
        id: String,
        /// Tool name.
        name: String,
        /// Whether it failed.
        is_error: bool,
        /// Bytes of text returned to the model.
        bytes: usize,
        /// The first line of the result (for compact display).
        summary: String,
        /// Run time.
        duration_ms: u64,
        /// For edit tools: whether the edit failed.
        failed_edit: bool,
        /// How the call ended, decided where it ran (`None` in logs written before it was
        /// recorded: [`ToolOutcome::or_legacy`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        outcome: Option<ToolOutcome>,
        /// The text the model received (already cut to the tool's output limits), so the
        /// result can be shown, exported and reported. Empty in older logs.
        #[serde(default)]
        output: String,
        /// When the call ran, as the tool layer saw it (`None` in logs written before it was
        /// recorded): calls of one step that ran side by side overlap.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timing: Option<CallTiming>,
    },
    /// Token usage after a step.
    Usage {
        /// This step.
        step: Usage,
        /// Whole run so far.
        total: Usage,
        /// Cost so far in USD (`None` when the price is unknown).
        cost: Option<f64>,
    },
    /// The provider request is being retried: partial output of this step is void.
    Retrying {
        /// Attempt about to start.
        attempt: u32,
        /// Wait in milliseconds.
        delay_ms: u64,
        /// Why.
        reason: String,
    },
    /// The model's response ended (provider stop reason).
    StepFinished {
        /// Step number.
        step: u32,
        /// Provider stop reason.
        stop: StopReason,
    },
    /// A failure (provider error, context overflow).
    Error {
        /// Message (no secrets).
        message: String,
        /// Whether the context window overflowed.
        context_overflow: bool,
    },
    /// The run ended; nothing follows.
    Finished {
        /// Why.
        stop: RunStop,
    },
    /// An event of a sub-agent this model started with `spawn_agent` (nested again for a
    /// sub-agent's own sub-agents), so every front end can show its calls under the parent's
    /// with its role. Streamed text is not forwarded; its tool calls, usage, errors and end are.
    SubAgent {
        /// Which sub-agent.
        agent: SubAgentTag,
        /// Its event.
        event: Box<AgentEvent>,
    },
}

/// Names one sub-agent of a model's turn: what its events and its proposals carry, so a
/// reader can tell its work from the parent's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubAgentTag {
    /// `explorer`, `planner` or `coder`.
    pub role: String,
    /// 1-based, in the order the turn's sub-agents started (nested ones included).
    pub number: u32,
    /// 1 for a sub-agent of the model, 2 for a sub-agent of a sub-agent...
    pub depth: u32,
    /// The model it runs on (a spec of the run).
    pub model: String,
    /// The parent's `spawn_agent` call that started it.
    pub call_id: String,
}

impl SubAgentTag {
    /// The name shown and recorded as the provenance of its writes: `coder #2`.
    pub fn name(&self) -> String {
        format!("{} #{}", self.role, self.number)
    }
}

/// Sub-agents (`spawn_agent`) for a run: off unless the user config or a recipe turns them
/// on, and then the same for every model of the run (the fairness ledger hashes them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubAgentSettings {
    /// How deep sub-agents may nest: 1 lets a model start sub-agents that cannot start
    /// their own; 2 (the default) lets those start one more level.
    pub max_depth: u32,
    /// Sub-agents one model may start in one turn, nested ones included.
    pub max_per_turn: u32,
}

impl Default for SubAgentSettings {
    fn default() -> Self {
        Self {
            max_depth: 2,
            max_per_turn: 4,
        }
    }
}

impl SubAgentSettings {
    /// The settings as one canonical text, for the fairness ledger and the logs.
    pub fn text(&self) -> String {
        format!(
            "max_depth={} max_per_turn={}",
            self.max_depth, self.max_per_turn
        )
    }
}

/// When one tool call ran: its start and end in microseconds since the Unix epoch, taken
/// where the tool ran, so a log shows which calls of a step ran at the same time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallTiming {
    /// The call started (after its `tool_call_ready`).
    pub started_us: u64,
    /// The call ended (its output was complete).
    pub ended_us: u64,
}

/// Counters of one run, for tables and reports.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RunStats {
    /// Requests made.
    pub steps: u32,
    /// Tool calls made.
    pub tool_calls: u32,
    /// Tool calls per tool name.
    pub tools: BTreeMap<String, u32>,
    /// Tool calls that did not succeed (by `ToolOutcome`: a command's non-zero exit, a tool
    /// error, a refusal, a timeout, a cancellation), so a failing build counts.
    pub tool_errors: u32,
    /// Edit calls that did not apply.
    pub failed_edits: u32,
    /// Tokens over all steps.
    pub usage: Usage,
    /// USD (`None`: unknown price).
    pub cost: Option<f64>,
    /// Wall time in milliseconds.
    pub elapsed_ms: u64,
    /// Time to the first streamed token in milliseconds.
    pub first_token_ms: Option<u64>,
    /// Retries the provider layer made.
    pub retries: u32,
}
