//! Pure data shared by every layer above it: the canonical conversation, what a model streams
//! back, and token usage. Nothing here does I/O or imports the rest of the crate, so providers,
//! the agent loop, sessions and both frontends can all speak it.

pub mod agent_event;
pub mod edit_tools;
pub mod message;
pub mod stream;
pub mod tool_outcome;

pub use agent_event::{AgentEvent, CallTiming, RunStats, RunStop, SubAgentSettings, SubAgentTag};
pub use edit_tools::{EditTools, trained_tool};
pub use message::{
    Conversation, Image, Message, ModelRequest, Part, Reasoning, Replay, Role, ToolDef, replay_tag,
};
pub use stream::{Completion, StopReason, StreamEvent, Usage};
pub use tool_outcome::{ToolOutcome, call_target, output_tail};
