//! Sub-agents: what `spawn_agent` runs. A sub-agent is the same loop ([`Agent::run_turn`])
//! on a task, with its role's tools, in its parent's workspace:
//!
//! - its view is the parent's, wrapped so each write is marked as the sub-agent's
//!   ([`AttributedView`]): its writes are the parent's proposals, with provenance;
//! - its events reach the parent's stream wrapped in [`AgentEvent::SubAgent`] (its tool calls,
//!   usage, errors and end; not its streamed text), so every front end nests them;
//! - its tokens and cost are added to the parent's once it ends ([`RunSpawner::take_used`]);
//! - a depth limit and a count per turn (shared by the whole tree of one model's turn) refuse
//!   further sub-agents with a message the model can act on;
//! - its final answer, cut to [`MAX_ANSWER_BYTES`], is the parent's tool result.

use std::fmt;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use futures::future::BoxFuture;

use super::turn::{Agent, CostFn, EventSink, ToolEnv};
use crate::model::{AgentEvent, Message, RunStop, SubAgentSettings, SubAgentTag, Usage};
use crate::provider::ModelClient;
use crate::tools::spawn_agent::{self, SpawnRequest, Spawner};
use crate::tools::{ToolContext, ToolError, ToolOutput};
use crate::workspace::AttributedView;

/// Bytes of a sub-agent's final answer given back to its parent; the rest is cut with a note.
pub const MAX_ANSWER_BYTES: usize = 16 * 1024;

/// A model a sub-agent may run on: one of the run's models.
#[derive(Clone)]
pub struct SubAgentModel {
    /// Its spec without the sample number (`openai/gpt-5`): what `spawn_agent`'s `model`
    /// argument names.
    pub label: String,
    /// The provider connection.
    pub client: Arc<dyn ModelClient>,
    /// Model name on the wire.
    pub model: String,
    /// Pricing.
    pub cost: Option<CostFn>,
}

/// Sub-agents as a turn sets them up: the same for every model of the run.
pub struct SubAgents {
    /// Limits.
    pub settings: SubAgentSettings,
    /// The models a sub-agent may run on (the run's, in order, each once).
    pub models: Vec<SubAgentModel>,
    /// The turn's project context, added to every sub-agent's system prompt as to its
    /// parent's (empty: none).
    pub context: String,
}

impl SubAgents {
    /// The set-up for a run whose models are `models` (the same model twice counts once).
    pub fn new(settings: SubAgentSettings, models: Vec<SubAgentModel>, context: String) -> Self {
        let mut unique: Vec<SubAgentModel> = Vec::with_capacity(models.len());
        for model in models {
            if !unique.iter().any(|m| m.label == model.label) {
                unique.push(model);
            }
        }
        Self {
            settings,
            models: unique,
            context,
        }
    }

    /// The names `spawn_agent`'s `model` accepts.
    pub fn model_labels(&self) -> Vec<String> {
        self.models.iter().map(|m| m.label.clone()).collect()
    }

    /// Turns sub-agents on for `agent` (the run's model `label`, sample number left out): the
    /// tool joins its tools, the tool's guidance its system prompt, and the agent knows it is
    /// at the top (depth 0).
    pub fn install(self: &Arc<Self>, agent: &mut Agent, label: &str) {
        let tool = spawn_agent::tool(&self.settings, &self.model_labels());
        let tools = agent.tools.with_tools(vec![tool]);
        // The prompt is made again from the tools the model now has: spawn_agent's guidance
        // goes with the others'.
        agent.settings.compose_system(&tools);
        agent.tools = Arc::new(tools);
        agent.settings.sub_agents = Some(SubAgentSlot {
            plan: Arc::clone(self),
            depth: 0,
            model: label.to_string(),
            count: None,
        });
    }
}

/// Where one agent stands among sub-agents: the run's set-up, its depth (0 for a model of the
/// run) and, below the top, the count its turn's tree shares.
#[derive(Clone)]
pub struct SubAgentSlot {
    plan: Arc<SubAgents>,
    depth: u32,
    /// The model it runs on (a label of the plan): a sub-agent's default.
    model: String,
    /// Sub-agents started in this model's turn so far; `None` at the top, where each turn
    /// starts its own count.
    count: Option<Arc<AtomicU32>>,
}

impl fmt::Debug for SubAgentSlot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SubAgentSlot")
            .field("settings", &self.plan.settings)
            .field("models", &self.plan.model_labels())
            .field("depth", &self.depth)
            .field("model", &self.model)
            .finish()
    }
}

impl PartialEq for SubAgentSlot {
    fn eq(&self, other: &Self) -> bool {
        self.plan.settings == other.plan.settings
            && self.plan.model_labels() == other.plan.model_labels()
            && self.depth == other.depth
            && self.model == other.model
    }
}

/// Tokens and cost of the sub-agents that ended since the parent last looked.
#[derive(Debug, Default)]
struct Used {
    usage: Usage,
    /// `None` once a sub-agent's price was unknown.
    cost: Option<f64>,
    any: bool,
}

/// The [`Spawner`] of one agent's turn: runs its sub-agents and keeps what they used until
/// the loop adds it to the turn's counters.
pub struct RunSpawner {
    slot: SubAgentSlot,
    count: Arc<AtomicU32>,
    parent: Agent,
    env: ToolEnv,
    emit: EventSink,
    used: Mutex<Used>,
}

impl RunSpawner {
    /// The spawner of `agent`'s turn, when sub-agents are on for it.
    pub(super) fn for_turn(agent: &Agent, env: &ToolEnv, emit: &EventSink) -> Option<Arc<Self>> {
        let slot = agent.settings.sub_agents.clone()?;
        let count = slot
            .count
            .clone()
            .unwrap_or_else(|| Arc::new(AtomicU32::new(0)));
        Some(Arc::new(Self {
            slot,
            count,
            parent: agent.clone(),
            env: env.clone(),
            emit: Arc::clone(emit),
            used: Mutex::new(Used {
                cost: Some(0.0),
                ..Used::default()
            }),
        }))
    }

    /// What the sub-agents that ended since the last call used: tokens, and their cost
    /// (`None`: a price was unknown). `None` when none ended.
    pub(super) fn take_used(&self) -> Option<(Usage, Option<f64>)> {
        let mut used = self.used.lock().unwrap_or_else(PoisonError::into_inner);
        if !used.any {
            return None;
        }
        let taken = (used.usage, used.cost);
        *used = Used {
            cost: Some(0.0),
            ..Used::default()
        };
        Some(taken)
    }

    fn add_used(&self, usage: &Usage, cost: Option<f64>) {
        let mut used = self.used.lock().unwrap_or_else(PoisonError::into_inner);
        used.any = true;
        used.usage.add(usage);
        used.cost = match (used.cost, cost) {
            (Some(a), Some(b)) => Some(a + b),
            _ => None,
        };
    }

    async fn run(&self, request: SpawnRequest, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let settings = self.slot.plan.settings;
        if self.slot.depth >= settings.max_depth {
            return Err(ToolError::Refused(format!(
                "spawn_agent refused: the sub-agent depth limit ({}) is reached: you are a \
                 sub-agent at depth {}, and yours may not start another; do this task yourself \
                 with your own tools",
                settings.max_depth, self.slot.depth
            )));
        }
        let wanted = request.model.as_deref().unwrap_or(&self.slot.model);
        let Some(model) = self.slot.plan.models.iter().find(|m| m.label == wanted) else {
            return Err(ToolError::Refused(format!(
                "spawn_agent refused: `{wanted}` is not a model of this run; use one of: {}",
                self.slot.plan.model_labels().join(", ")
            )));
        };
        let number = self.count.fetch_add(1, Ordering::SeqCst) + 1;
        if number > settings.max_per_turn {
            self.count.fetch_sub(1, Ordering::SeqCst);
            return Err(ToolError::Refused(format!(
                "spawn_agent refused: the limit of {} sub-agents per turn is reached; do the \
                 rest yourself",
                settings.max_per_turn
            )));
        }
        let tag = SubAgentTag {
            role: request.role.as_str().to_string(),
            number,
            depth: self.slot.depth + 1,
            model: model.label.clone(),
            call_id: ctx.call_id.clone(),
        };
        let tools = self.parent.tools.for_role(request.role);
        let mut system = super::system_prompt(&tools.guidance(), Some(request.role.instructions()));
        if !self.slot.plan.context.is_empty() {
            system = system.trim_end().to_string();
            system.push_str("\n\n");
            system.push_str(&self.slot.plan.context);
        }
        let mut agent_settings = self.parent.settings.clone();
        agent_settings.system = system;
        agent_settings.sub_agents = Some(SubAgentSlot {
            plan: Arc::clone(&self.slot.plan),
            depth: tag.depth,
            model: model.label.clone(),
            count: Some(Arc::clone(&self.count)),
        });
        let agent = Agent {
            client: Arc::clone(&model.client),
            model: model.model.clone(),
            tools: Arc::new(tools),
            settings: agent_settings,
            cost: model.cost.clone(),
        };
        let env = ToolEnv {
            view: Arc::new(AttributedView::new(Arc::clone(&self.env.view), tag.name())),
            ..self.env.clone()
        };
        let parent_emit = Arc::clone(&self.emit);
        let forwarded = tag.clone();
        let emit: EventSink = Arc::new(move |event: AgentEvent| {
            if forwards(&event) {
                parent_emit(AgentEvent::SubAgent {
                    agent: forwarded.clone(),
                    event: Box::new(event),
                });
            }
        });
        tracing::info!(
            parent = %self.parent.model,
            agent = %tag.name(),
            model = %tag.model,
            depth = tag.depth,
            "sub-agent started"
        );
        let outcome = agent
            .run_turn(
                Vec::new(),
                Message::user(request.task),
                &env,
                &emit,
                ctx.cancel.clone(),
            )
            .await;
        self.add_used(&outcome.stats.usage, outcome.stats.cost);
        // The model is not named: in blind mode the panels show this text, and the caller
        // knows which model it asked for.
        let mut text = format!(
            "sub-agent {} {}",
            tag.name(),
            match outcome.stop {
                RunStop::Completed => "finished".to_string(),
                other => format!("stopped ({})", other.label()),
            }
        );
        if let Some(error) = &outcome.error {
            text.push_str(": ");
            text.push_str(error);
        }
        text.push_str(".\n\n");
        let answer = outcome.final_text.trim();
        if answer.is_empty() {
            text.push_str("(It gave no answer.)");
        } else {
            text.push_str(&cut(answer, MAX_ANSWER_BYTES));
        }
        let failed = outcome.stop != RunStop::Completed && answer.is_empty();
        Ok(if failed {
            ToolOutput::error(text)
        } else {
            ToolOutput::ok(text)
        })
    }
}

impl Spawner for RunSpawner {
    fn spawn<'a>(
        &'a self,
        request: SpawnRequest,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(self.run(request, ctx))
    }
}

/// Whether a sub-agent's event reaches its parent's stream: its calls, usage, errors and end;
/// not its streamed text and argument deltas (its final answer is the parent's tool result).
fn forwards(event: &AgentEvent) -> bool {
    !matches!(
        event,
        AgentEvent::TextDelta { .. }
            | AgentEvent::ThinkingDelta { .. }
            | AgentEvent::ToolCallStarted { .. }
            | AgentEvent::ToolCallArgs { .. }
            | AgentEvent::StepStarted { .. }
            | AgentEvent::StepFinished { .. }
    )
}

/// `text` cut to at most `max` bytes on a character boundary, with a note when cut.
fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}\n[… the answer was cut at {max} bytes of {}]",
        &text[..end],
        text.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_answers_are_cut_on_a_character_boundary_with_a_note() {
        assert_eq!(cut("short", 10), "short");
        let cut_text = cut("ééééé", 5);
        assert!(cut_text.starts_with("éé\n"), "{cut_text}");
        assert!(cut_text.contains("cut at 5 bytes of 10"), "{cut_text}");
    }

    #[test]
    fn streamed_text_stays_with_the_sub_agent() {
        assert!(!forwards(&AgentEvent::TextDelta { text: "x".into() }));
        assert!(forwards(&AgentEvent::ToolCallReady {
            id: "c".into(),
            name: "read_file".into(),
            arguments: "{}".into(),
        }));
        assert!(forwards(&AgentEvent::Finished {
            stop: RunStop::Completed
        }));
    }
}
