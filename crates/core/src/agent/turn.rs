//! The loop itself: one [`Agent::run_turn`] per user prompt.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use futures::StreamExt;
use tokio_util::sync::CancellationToken;

use crate::model::{
    AgentEvent, CallTiming, Completion, Conversation, Image, Message, ModelRequest, Part, Reasoning, Role,
    RunStats, RunStop, StopReason, StreamEvent, ToolDef, Usage,
};
use crate::provider::{ModelClient, ProviderError};
use crate::tools::{EditOutcome, ToolContext, ToolLimits, ToolRegistry};
use crate::workspace::FileView;

/// Prices a run's usage; `None` when the price is unknown (shown as unknown, never $0).
pub type CostFn = Arc<dyn Fn(&Usage) -> Option<f64> + Send + Sync>;

/// Where a run's events go (the runner tags them with the model entry).
pub type EventSink = Arc<dyn Fn(AgentEvent) + Send + Sync>;

/// Limits and sampling settings of one model's run.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentSettings {
    /// Requests to the model at most in one turn.
    pub max_steps: u32,
    /// Wall time for the turn.
    pub timeout: Duration,
    /// Stop once the run's cost reaches this many USD.
    pub max_cost: Option<f64>,
    /// Output cap per request.
    pub max_output_tokens: Option<u32>,
    /// Sampling temperature.
    pub temperature: Option<f32>,
    /// Thinking effort.
    pub reasoning: Reasoning,
    /// The full system prompt: composed from the model's final tools and `instructions` when
    /// its entry is made ([`AgentSettings::compose_system`]), then the engine appends the
    /// project context.
    pub system: String,
    /// The front end's own instructions, put after the built-in prompt and the tool guidance
    /// (a recipe's system prompt, the TUI's `/config system`); `None`: none.
    pub instructions: Option<String>,
    /// Sampling seed, sent to providers that take one (Chat `seed`, Gemini
    /// `generationConfig.seed`), so samples of one model can be repeated.
    pub seed: Option<u64>,
    /// Folders outside the workspace that `read_file` may read by absolute path, read-only
    /// (the user's and a recipe's skills), so a model can open a skill the catalog names.
    pub read_roots: Vec<PathBuf>,
    /// Which editing tool the model gets (`edit_file`, `apply_patch`, both, or its family's);
    /// applied when its entry is made ([`crate::tools::narrow_edit_tools`]).
    pub edit_tools: crate::tools::EditTools,
    /// Sub-agents (`spawn_agent`): `None` when off (the default); set by the engine for every
    /// model of a turn alike ([`super::SubAgents::install`]), and for a sub-agent by its parent.
    pub sub_agents: Option<super::spawn::SubAgentSlot>,
}

impl Default for AgentSettings {
    fn default() -> Self {
        Self {
            max_steps: 50,
            timeout: Duration::from_secs(20 * 60),
            max_cost: None,
            max_output_tokens: None,
            temperature: None,
            reasoning: Reasoning::Default,
            system: String::new(),
            instructions: None,
            seed: None,
            read_roots: Vec::new(),
            edit_tools: crate::tools::EditTools::default(),
            sub_agents: None,
        }
    }
}

impl AgentSettings {
    /// The defaults of the user's config (its `seed` and `edit_tools`) over the built-in
    /// ones: what every front end starts a model's settings from, so a setting of the config
    /// reaches `ask`, the TUI and `run` alike (a recipe's own values go over these:
    /// `Recipe::agent_settings_over`).
    pub fn configured(config: &crate::config::Config) -> Self {
        Self {
            seed: config.seed,
            edit_tools: config.edit_tools,
            ..Self::default()
        }
    }

    /// Makes the system prompt from `tools`, the tools the model actually gets, and the
    /// instructions: composed, never patched, so whoever changes a model's tools (its editing
    /// tool by family, sub-agents) composes again and the prompt never names a tool the model
    /// cannot call.
    pub fn compose_system(&mut self, tools: &crate::tools::ToolRegistry) {
        self.system = super::system_prompt(&tools.guidance(), self.instructions.as_deref());
    }
}

/// Cuts a tool's result text (tool name, text) before the model reads it: a recipe's Output
/// Processing rule that the tool cannot apply itself (e.g. keep the tail of bash output).
pub type OutputFilter = Arc<dyn Fn(&str, String) -> String + Send + Sync>;

/// What the tools of this model act on.
#[derive(Clone)]
pub struct ToolEnv {
    /// The model's workspace view (records proposals).
    pub view: Arc<dyn FileView>,
    /// Tool limits.
    pub limits: ToolLimits,
    /// Where bash spills long outputs.
    pub spill_dir: PathBuf,
    /// Applied to every tool result after the tool ran (`None`: results as the tools cut them).
    pub output_filter: Option<OutputFilter>,
    /// Where the model's commands run (its workspace's sandbox).
    pub sandbox: Arc<crate::exec::Sandbox>,
}

/// One model, ready to run turns.
#[derive(Clone)]
pub struct Agent {
    /// The provider connection.
    pub client: Arc<dyn ModelClient>,
    /// Model name on the wire.
    pub model: String,
    /// Tools offered.
    pub tools: Arc<ToolRegistry>,
    /// Limits and sampling.
    pub settings: AgentSettings,
    /// Pricing.
    pub cost: Option<CostFn>,
}

impl Agent {
    /// The tools as the provider is sent them (name, description, schema): what the model
    /// is offered, and what the fairness ledger hashes.
    pub fn tool_defs(&self) -> Vec<ToolDef> {
        self.tools
            .specs()
            .iter()
            .map(|spec| ToolDef {
                name: spec.name.to_string(),
                description: spec.description.clone(),
                parameters: spec.parameters.clone(),
            })
            .collect()
    }
}

/// The limits and sampling settings of `settings` as one canonical text, for the fairness
/// ledger: two models with the same text ran under the same limits.
pub fn limits_text(settings: &AgentSettings) -> String {
    format!(
        "max_steps={} timeout={}s max_cost={} max_output_tokens={} temperature={} reasoning={:?} \
         edit_tools={}",
        settings.max_steps,
        settings.timeout.as_secs_f64(),
        settings
            .max_cost
            .map(|c| c.to_string())
            .unwrap_or_else(|| "none".into()),
        settings
            .max_output_tokens
            .map(|c| c.to_string())
            .unwrap_or_else(|| "default".into()),
        settings
            .temperature
            .map(|c| c.to_string())
            .unwrap_or_else(|| "default".into()),
        settings.reasoning,
        settings.edit_tools.as_str(),
    )
}

/// How a turn ended, with everything needed to show, score or continue it.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentOutcome {
    /// The whole conversation: the history given, the prompt, and this turn's messages.
    pub messages: Vec<Message>,
    /// Why it ended.
    pub stop: RunStop,
    /// The error text when `stop` is `Error` (or a timeout/cancel note).
    pub error: Option<String>,
    /// The model's last visible text.
    pub final_text: String,
    /// Counters.
    pub stats: RunStats,
}

/// Result of streaming one response.
enum StepResult {
    Done(Completion),
    /// Stopped by cancellation; the partial text streamed so far.
    Interrupted(String),
    Failed(ProviderError),
}

struct Run<'a> {
    agent: &'a Agent,
    env: &'a ToolEnv,
    emit: &'a EventSink,
    cancel: CancellationToken,
    timed_out: Arc<AtomicBool>,
    started: Instant,
    stats: RunStats,
    /// Shared with each step's request: a step copies one pointer per message, not the text.
    messages: Conversation,
    /// The system prompt and tool definitions, built once per turn and shared by every step.
    system: Arc<str>,
    tools: Arc<[ToolDef]>,
    /// Every tool call id in `messages`, kept up to date so a step need not collect them
    /// from the whole conversation (see [`Run::make_call_ids_unique`]).
    call_ids: HashSet<String>,
    /// Runs this turn's sub-agents (`None`: sub-agents are off).
    spawner: Option<Arc<super::spawn::RunSpawner>>,
    /// The tokens of this agent's own requests (its sub-agents' are in `stats.usage` too,
    /// but priced by their own model: `sub_cost`).
    own_usage: Usage,
    /// What its sub-agents cost (`None`: a price was unknown).
    sub_cost: Option<f64>,
}

impl Agent {
    /// Runs one turn: `prompt` after `history`. Never panics on provider or tool failures;
    /// they end up in the outcome and the event stream (which always ends with `Finished`).
    pub async fn run_turn(
        &self,
        history: Vec<Message>,
        prompt: Message,
        env: &ToolEnv,
        emit: &EventSink,
        cancel: CancellationToken,
    ) -> AgentOutcome {
        let run_cancel = cancel.child_token();
        let timed_out = Arc::new(AtomicBool::new(false));
        let timer = {
            let token = run_cancel.clone();
            let flag = Arc::clone(&timed_out);
            let timeout = self.settings.timeout;
            tokio::spawn(async move {
                tokio::time::sleep(timeout).await;
                flag.store(true, Ordering::SeqCst);
                token.cancel();
            })
        };
        let mut messages = Conversation::from(history);
        messages.push(prompt);
        let tools: Arc<[ToolDef]> = self.tool_defs().into();
        let call_ids = messages
            .iter()
            .flat_map(|m| m.tool_calls().map(|(id, _, _)| id.to_string()))
            .collect();
        let mut run = Run {
            agent: self,
            env,
            emit,
            cancel: run_cancel,
            timed_out,
            started: Instant::now(),
            stats: RunStats::default(),
            messages,
            system: Arc::from(self.settings.system.as_str()),
            tools,
            call_ids,
            spawner: super::spawn::RunSpawner::for_turn(self, env, emit),
            own_usage: Usage::default(),
            sub_cost: Some(0.0),
        };
        let (stop, error) = run.drive().await;
        timer.abort();
        tracing::info!(
            model = %self.model,
            stop = stop.label(),
            steps = run.stats.steps,
            tool_calls = run.stats.tool_calls,
            error = error.as_deref().unwrap_or(""),
            "turn ended"
        );
        run.stats.elapsed_ms = millis(run.started.elapsed());
        if let Some(message) = &error {
            if stop == RunStop::Error {
                // Already emitted as an Error event with its kind.
            } else {
                emit(AgentEvent::Error {
                    message: message.clone(),
                    context_overflow: false,
                });
            }
        }
        emit(AgentEvent::Finished { stop });
        let final_text = run
            .messages
            .iter()
            .rev()
            .find(|m| m.role == Role::Assistant && !m.text().trim().is_empty())
            .map(Message::text)
            .unwrap_or_default();
        AgentOutcome {
            messages: run.messages.into_vec(),
            stop,
            error,
            final_text,
            stats: run.stats,
        }
    }
}

impl Run<'_> {
    async fn drive(&mut self) -> (RunStop, Option<String>) {
        let settings = &self.agent.settings;
        loop {
            if self.cancel.is_cancelled() {
                return self.interrupted();
            }
            self.stats.steps += 1;
            let step = self.stats.steps;
            (self.emit)(AgentEvent::StepStarted { step });
            let completion = match self.stream_step().await {
                StepResult::Done(completion) => completion,
                StepResult::Interrupted(partial) => {
                    if !partial.is_empty() {
                        self.messages.push(Message {
                            role: Role::Assistant,
                            parts: vec![Part::text(partial)],
                        });
                    }
                    return self.interrupted();
                }
                StepResult::Failed(err) => {
                    let message = err.to_string();
                    (self.emit)(AgentEvent::Error {
                        message: message.clone(),
                        context_overflow: err.is_context_overflow(),
                    });
                    return (RunStop::Error, Some(message));
                }
            };
            let mut completion = completion;
            self.make_call_ids_unique(&mut completion.message, step);
            // Missing usage is unknown, never zero: decided here once for every provider, and
            // a run with any unknown step has an unknown cost (a lower bound would read as
            // the price).
            completion.usage = completion.usage.or_unreported();
            self.stats.usage.add(&completion.usage);
            self.own_usage.add(&completion.usage);
            self.stats.cost = self.cost();
            (self.emit)(AgentEvent::Usage {
                step: completion.usage,
                total: self.stats.usage,
                cost: self.stats.cost,
            });
            let has_calls = completion.message.tool_calls().next().is_some();
            let stop = if has_calls {
                StopReason::ToolUse
            } else {
                completion.stop.clone()
            };
            (self.emit)(AgentEvent::StepFinished { step, stop });
            self.messages.push(completion.message);
            if !has_calls {
                // An answer cut at the output token limit is not a finished one: said as its
                // own stop, so a table never shows it as done.
                if completion.stop == StopReason::MaxTokens {
                    return (
                        RunStop::MaxTokens,
                        Some(
                            "stopped: the answer was cut at the model's output token limit \
                             (max_tokens)"
                                .to_string(),
                        ),
                    );
                }
                return (RunStop::Completed, None);
            }
            // The calls of a step run even when a limit is reached now: they were asked for
            // within budget, and an edit made here is a proposal the user may still want.
            self.run_tools().await;
            self.add_sub_agents_usage();
            if self.cancel.is_cancelled() {
                return self.interrupted();
            }
            if let (Some(max), Some(cost)) = (settings.max_cost, self.stats.cost)
                && cost >= max
            {
                return (
                    RunStop::MaxCost,
                    Some(format!(
                        "stopped: cost ${cost:.4} reached the limit of ${max:.4}"
                    )),
                );
            }
            if step >= settings.max_steps {
                return (
                    RunStop::MaxSteps,
                    Some(format!("stopped after {step} steps (max_steps)")),
                );
            }
        }
    }

    /// Providers that send no call id get one made up per response (`call_0_read_file`), so
    /// two responses can repeat an id. Ids must be unique in a conversation (results are
    /// matched by id, Anthropic rejects duplicates, proposals record them), so a repeated id
    /// gets the step number appended.
    fn make_call_ids_unique(&mut self, message: &mut Message, step: u32) {
        for part in &mut message.parts {
            if let Part::ToolCall { id, .. } = part {
                if self.call_ids.contains(id.as_str()) {
                    let fresh = crate::provider::ids::normalize_call_id(&format!("{id}_s{step}"));
                    tracing::debug!(model = %self.agent.model, old = %id, new = %fresh, "renamed a repeated call id");
                    *id = fresh;
                }
                self.call_ids.insert(id.clone());
            }
        }
    }

    /// The turn's cost: its own requests at its price plus what its sub-agents cost.
    fn cost(&self) -> Option<f64> {
        // Usage a provider did not report makes the cost unknown, never $0.
        if !self.stats.usage.is_known() {
            return None;
        }
        let own = self.agent.cost.as_ref().and_then(|f| f(&self.own_usage))?;
        self.sub_cost.map(|sub| own + sub)
    }

    /// Adds what the sub-agents that ended in the last step used to the turn's tokens and
    /// cost, and says so with a `Usage` event (its `step` is theirs).
    fn add_sub_agents_usage(&mut self) {
        let Some((usage, cost)) = self.spawner.as_ref().and_then(|s| s.take_used()) else {
            return;
        };
        self.stats.usage.add(&usage);
        self.sub_cost = match (self.sub_cost, cost) {
            (Some(a), Some(b)) => Some(a + b),
            _ => None,
        };
        self.stats.cost = self.cost();
        (self.emit)(AgentEvent::Usage {
            step: usage,
            total: self.stats.usage,
            cost: self.stats.cost,
        });
    }

    fn interrupted(&self) -> (RunStop, Option<String>) {
        if self.timed_out.load(Ordering::SeqCst) {
            let secs = self.agent.settings.timeout.as_secs_f64();
            (
                RunStop::Timeout,
                Some(format!("stopped: the {secs:.0} s timeout was reached")),
            )
        } else {
            (RunStop::Cancelled, Some("cancelled".to_string()))
        }
    }

    fn request(&self) -> ModelRequest {
        let settings = &self.agent.settings;
        ModelRequest {
            model: self.agent.model.clone(),
            system: Arc::clone(&self.system),
            messages: self.messages.clone(),
            tools: Arc::clone(&self.tools),
            max_output_tokens: settings.max_output_tokens,
            temperature: settings.temperature,
            reasoning: settings.reasoning,
            seed: settings.seed,
        }
    }

    async fn stream_step(&mut self) -> StepResult {
        let mut stream = self
            .agent
            .client
            .stream(self.request(), self.cancel.clone());
        let mut ids: Vec<String> = Vec::new();
        let mut partial = String::new();
        loop {
            let next = tokio::select! {
                biased;
                () = self.cancel.cancelled() => return StepResult::Interrupted(partial),
                next = stream.next() => next,
            };
            let event = match next {
                Some(Ok(event)) => event,
                Some(Err(ProviderError::Cancelled)) => return StepResult::Interrupted(partial),
                Some(Err(err)) => return StepResult::Failed(err),
                None => {
                    return StepResult::Failed(ProviderError::Network {
                        provider: self.agent.client.provider().to_string(),
                        message: "the response ended without completing".to_string(),
                    });
                }
            };
            self.note_first_token(&event);
            match event {
                StreamEvent::TextDelta { text } => {
                    partial.push_str(&text);
                    (self.emit)(AgentEvent::TextDelta { text });
                }
                StreamEvent::ThinkingDelta { text } => {
                    (self.emit)(AgentEvent::ThinkingDelta { text });
                }
                StreamEvent::ToolCallStart { index, id, name } => {
                    if ids.len() <= index {
                        ids.resize(index + 1, String::new());
                    }
                    ids[index] = id.clone();
                    (self.emit)(AgentEvent::ToolCallStarted { id, name });
                }
                StreamEvent::ToolCallDelta { index, delta } => {
                    let id = ids.get(index).cloned().unwrap_or_default();
                    (self.emit)(AgentEvent::ToolCallArgs { id, delta });
                }
                StreamEvent::Retrying {
                    attempt,
                    delay_ms,
                    reason,
                } => {
                    self.stats.retries += 1;
                    partial.clear();
                    ids.clear();
                    (self.emit)(AgentEvent::Retrying {
                        attempt,
                        delay_ms,
                        reason,
                    });
                }
                StreamEvent::Completed(completion) => return StepResult::Done(completion),
            }
        }
    }

    fn note_first_token(&mut self, event: &StreamEvent) {
        if self.stats.first_token_ms.is_none()
            && matches!(
                event,
                StreamEvent::TextDelta { .. }
                    | StreamEvent::ThinkingDelta { .. }
                    | StreamEvent::ToolCallStart { .. }
                    | StreamEvent::Completed(_)
            )
        {
            self.stats.first_token_ms = Some(millis(self.started.elapsed()));
        }
    }

    /// Runs every call of the last assistant message and appends one user message with all
    /// results in call order (calls not run because of cancellation get a result saying so,
    /// so the conversation stays valid for the next turn). Reads run side by side, writes and
    /// commands one by one in order ([`super::schedule`]).
    async fn run_tools(&mut self) {
        let calls: Vec<Call> = self
            .messages
            .last()
            .map(|m| {
                m.tool_calls()
                    .map(|(id, name, args)| Call {
                        id: id.to_string(),
                        name: name.to_string(),
                        arguments: args.to_string(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let concurrent: Vec<bool> = calls
            .iter()
            .map(|c| self.agent.tools.runs_concurrently(&c.name))
            .collect();
        let finished = {
            let this = &*self;
            super::schedule::run_calls(
                &concurrent,
                |i| this.run_call(&calls[i]),
                |i, done| this.report(&calls[i], done),
            )
            .await
        };
        let mut results = Vec::with_capacity(calls.len());
        for (call, done) in calls.into_iter().zip(finished) {
            results.push(self.count(call, done));
        }
        self.messages.push(Message {
            role: Role::User,
            parts: results,
        });
    }

    /// Runs one call: says it is ready, runs it (or not, once the run is stopped), and keeps
    /// when it started and ended.
    async fn run_call(&self, call: &Call) -> CallDone {
        (self.emit)(AgentEvent::ToolCallReady {
            id: call.id.clone(),
            name: call.name.clone(),
            arguments: call.arguments.clone(),
        });
        let started = Instant::now();
        let started_us = unix_micros();
        if self.cancel.is_cancelled() {
            return CallDone {
                output: None,
                elapsed: started.elapsed(),
                timing: CallTiming {
                    started_us,
                    ended_us: unix_micros(),
                },
            };
        }
        let ctx = ToolContext {
            view: Arc::clone(&self.env.view),
            limits: self.env.limits.clone(),
            call_id: call.id.clone(),
            cancel: self.cancel.clone(),
            spill_dir: self.env.spill_dir.clone(),
            sandbox: Arc::clone(&self.env.sandbox),
            read_roots: self.agent.settings.read_roots.clone().into(),
            spawner: self
                .spawner
                .clone()
                .map(|s| s as Arc<dyn crate::tools::spawn_agent::Spawner>),
        };
        let mut output = self
            .agent
            .tools
            .dispatch(&call.name, &call.arguments, &ctx)
            .await;
        if let Some(filter) = &self.env.output_filter {
            output.text = filter(&call.name, output.text);
        }
        let ended_us = unix_micros();
        CallDone {
            output: Some(output),
            elapsed: started.elapsed(),
            timing: CallTiming {
                started_us,
                ended_us,
            },
        }
    }

    /// Reports a finished call (in call order): its result event.
    fn report(&self, call: &Call, done: &CallDone) {
        let Some(output) = &done.output else {
            return;
        };
        tracing::debug!(
            model = %self.agent.model,
            tool = %call.name,
            call_id = %call.id,
            is_error = output.is_error,
            outcome = ?output.outcome,
            ms = done.elapsed.as_millis() as u64,
            "tool call"
        );
        (self.emit)(AgentEvent::ToolResult {
            id: call.id.clone(),
            name: call.name.clone(),
            is_error: output.is_error,
            bytes: output.text.len(),
            summary: first_line(&output.text),
            duration_ms: millis(done.elapsed),
            failed_edit: output.edit == Some(EditOutcome::Failed),
            outcome: Some(output.outcome),
            output: output.text.clone(),
            timing: Some(done.timing),
        });
    }

    /// Counts a finished call in the run's statistics and makes its result part.
    fn count(&mut self, call: Call, done: CallDone) -> Part {
        let Some(output) = done.output else {
            return Part::ToolResult {
                call_id: call.id,
                name: call.name,
                content: "not run: the run was stopped before this call".to_string(),
                is_error: true,
                images: Vec::new(),
            };
        };
        let failed_edit = output.edit == Some(EditOutcome::Failed);
        self.stats.tool_calls += 1;
        *self.stats.tools.entry(call.name.clone()).or_default() += 1;
        // Counted by outcome, not by the provider's error flag: a command that exits 3 is
        // a normal result to the model but did not succeed.
        if !output.outcome.is_ok() {
            self.stats.tool_errors += 1;
        }
        if failed_edit {
            self.stats.failed_edits += 1;
        }
        // The picture travels with the result; each wire sends it to models that see
        // images and a text note to the others.
        let images = output
            .image
            .map(|image| Image {
                media_type: image.media_type,
                data: image.data,
            })
            .into_iter()
            .collect();
        Part::ToolResult {
            call_id: call.id,
            name: call.name,
            content: output.text,
            is_error: output.is_error,
            images,
        }
    }
}

/// One call of a step, as the model made it.
struct Call {
    id: String,
    name: String,
    arguments: String,
}

/// A call's end: its output (`None`: not run, the run was stopped first), how long it took and
/// when it ran.
struct CallDone {
    output: Option<crate::tools::ToolOutput>,
    elapsed: Duration,
    timing: CallTiming,
}

/// Now, in microseconds since the Unix epoch (0 if the clock is before it).
fn unix_micros() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    let mut cut: String = line.chars().take(160).collect();
    if cut.len() < line.len() {
        cut.push('…');
    }
    cut
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}
