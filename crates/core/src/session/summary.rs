//! What `versus sessions show` and the front ends read back of a turn: each model's part,
//! its tool calls with their outcomes and output, folded from the log's records.

use serde::Serialize;

use crate::model::{AgentEvent, RunStats, RunStop, SubAgentTag, ToolOutcome};

/// One model's part of a turn, as read back.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TurnModel {
    /// Entry label.
    pub model: String,
    /// The task it worked on, when its turn held several (`versus run`); `None` otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    /// How it ended (`None`: it never finished, e.g. the process was killed).
    pub stop: Option<RunStop>,
    /// Its last text.
    pub final_text: String,
    /// Counters, when it finished.
    pub stats: Option<RunStats>,
    /// Proposals it recorded.
    pub writes: usize,
    /// Its tool calls in order, each with how it ended and the text the model received;
    /// its sub-agents' calls among them, each named by its sub-agent.
    pub tools: Vec<ToolCallSummary>,
    /// The files its sub-agents wrote (path, sub-agent), in the order written: part of its
    /// proposals, told apart (empty without sub-agents).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sub_agent_writes: Vec<(String, String)>,
}

/// One tool call of a turn, as read back from the log's agent events.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolCallSummary {
    /// Call id.
    pub id: String,
    /// Tool name.
    pub name: String,
    /// The full argument text.
    pub arguments: String,
    /// How it ended (`None`: no result was recorded, the run stopped first).
    pub outcome: Option<ToolOutcome>,
    /// Run time.
    pub duration_ms: u64,
    /// The text the model received (empty in logs written before it was recorded).
    pub output: String,
    /// The sub-agent that made the call (`coder #1`), `None` for the model itself.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<SubAgentTag>,
}

/// One turn, as read back.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TurnSummary {
    /// 1-based number.
    pub turn: u32,
    /// When it started.
    pub time: String,
    /// The prompt.
    pub prompt: String,
    /// Its models in order.
    pub models: Vec<TurnModel>,
    /// Every model finished.
    pub complete: bool,
    /// The choice, if one was made: chosen models (empty = none of them).
    pub chosen: Option<Vec<String>>,
    /// It was rewound afterwards.
    pub rewound: bool,
    /// What its models were given besides the prompt (`None` in logs written before the
    /// `context` record).
    pub context: Option<crate::context::ProjectContext>,
    /// The fairness ledger: what each model was given, hashed, differences flagged (empty in
    /// logs written before it).
    pub ledger: Vec<crate::context::LedgerEntry>,
}

/// Adds what `event` says about a tool call to `tools`: a call ready to run, or its result
/// (a sub-agent's too, named by the sub-agent that made it).
pub(super) fn note_tool_event(tools: &mut Vec<ToolCallSummary>, event: &AgentEvent) {
    note_call(tools, event, None);
}

fn note_call(tools: &mut Vec<ToolCallSummary>, event: &AgentEvent, agent: Option<&SubAgentTag>) {
    match event {
        AgentEvent::SubAgent { agent, event } => note_call(tools, event, Some(agent)),
        AgentEvent::ToolCallReady {
            id,
            name,
            arguments,
        } => tools.push(ToolCallSummary {
            id: id.clone(),
            name: name.clone(),
            arguments: arguments.clone(),
            outcome: None,
            duration_ms: 0,
            output: String::new(),
            agent: agent.cloned(),
        }),
        AgentEvent::ToolResult {
            id,
            name,
            is_error,
            duration_ms,
            outcome,
            output,
            ..
        } => {
            let outcome = Some(ToolOutcome::or_legacy(*outcome, *is_error));
            match tools
                .iter_mut()
                .rev()
                .find(|t| t.id == *id && t.outcome.is_none() && t.agent.as_ref() == agent)
            {
                Some(call) => {
                    call.outcome = outcome;
                    call.duration_ms = *duration_ms;
                    call.output = output.clone();
                }
                None => tools.push(ToolCallSummary {
                    id: id.clone(),
                    name: name.clone(),
                    arguments: String::new(),
                    outcome,
                    duration_ms: *duration_ms,
                    output: output.clone(),
                    agent: agent.cloned(),
                }),
            }
        }
        _ => {}
    }
}
