//! The one agent loop for every provider.
//!
//! A turn: send the conversation, stream the answer (forwarding deltas as [`AgentEvent`](crate::model::AgentEvent)s),
//! run each tool call the model made against its own workspace view, append the results, and
//! repeat until the model stops calling tools or a limit ends the run (`max_steps`, the
//! timeout, `max_cost`, cancellation, a provider error). Whatever happened, the outcome carries
//! the conversation so far, so a model that failed half-way keeps its transcript and its
//! proposals stay reviewable.
//!
//! Adapters know nothing of tools' executors; the loop knows nothing of wire formats.

mod prompt;
mod schedule;
mod spawn;
mod turn;

pub use prompt::system_prompt;
pub use spawn::{SubAgentModel, SubAgents};
pub use turn::{
    Agent, AgentOutcome, AgentSettings, CostFn, EventSink, OutputFilter, ToolEnv, limits_text,
};
