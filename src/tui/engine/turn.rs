//! One turn: entries built from each model's conversation, the project captured, one fan-out
//! per model (so each can get its own next-turn note and be cancelled alone), and every run
//! event recorded in the session log before it reaches the app.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use super::choice::TurnReview;
use super::conversation::{AUTO_COMPACT_THRESHOLD, auto_compact};
use crate::agent::{AgentSettings, system_prompt};
use crate::model::Message;
use crate::runner::{ModelEntry, RunEvent, RunOptions, entry_for, fan_out};
use crate::session::{EventLog, SessionRecord, next_turn_note, now};
use crate::tools::{ToolLimits, ToolRegistry};
use crate::workspace::{Base, Isolation};

use super::super::action::{EngineMsg, Target, TurnRequest};
use super::super::panel::RunSummary;
use super::{Engine, LoopMsg, NoteInputs};

/// Largest file `@path` attaches.
const MAX_ATTACHMENT: u64 = 512 * 1024;

/// The running turn.
#[derive(Debug)]
pub struct ActiveTurn {
    turn: u32,
    prompt: String,
    remember: bool,
    check: Option<String>,
    all: CancellationToken,
    targets: Vec<(Target, CancellationToken)>,
    remaining: usize,
}

impl ActiveTurn {
    /// Cancels every model of the turn.
    pub fn cancel_all(&self) {
        self.all.cancel();
    }

    /// Cancels one model.
    pub fn cancel(&self, label: &str) {
        for (target, token) in &self.targets {
            if target.label == label {
                token.cancel();
            }
        }
    }
}

impl Engine {
    /// Starts a turn; the answer (`TurnStarted` or `TurnRejected`) comes through the loop.
    pub(super) fn submit(&mut self, request: TurnRequest) -> Vec<EngineMsg> {
        let reject = |error: String| vec![EngineMsg::TurnRejected { error }];
        if self.turn.is_some() {
            return reject("models are still running: wait for them, or press Esc".to_string());
        }
        let mut registry = ToolRegistry::builtin();
        if let Some(names) = &request.settings.tools {
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            let unknown = registry.retain(&names);
            if !unknown.is_empty() {
                return reject(format!(
                    "unknown tool(s) {}; /config tools all offers every tool",
                    unknown.join(", ")
                ));
            }
        }
        let tools = Arc::new(registry);
        let settings = AgentSettings {
            max_steps: request.settings.max_steps,
            timeout: Duration::from_secs(request.settings.timeout_secs),
            system: system_prompt(&tools.guidance(), request.settings.system.as_deref()),
            ..AgentSettings::default()
        };
        let mut entries = Vec::with_capacity(request.targets.len());
        let mut compacted: Vec<String> = Vec::new();
        // What the models read about the previous turn's choice (nothing chosen: none applied).
        let inputs = NoteInputs {
            own: self.last_files.clone(),
            ..self.next_note.clone().unwrap_or_default()
        };
        let mut records = Vec::new();
        for target in &request.targets {
            let Some(model) = self.models.get(&target.label) else {
                return reject(format!(
                    "{} is not set up in this session; add it with /models add {}",
                    target.label, target.label
                ));
            };
            let mut entry: ModelEntry = entry_for(
                &model.resolved,
                Arc::clone(&model.client),
                Arc::clone(&tools),
                settings.clone(),
            );
            entry.label = target.label.clone();
            entry.history = self
                .conversations
                .get(&target.label)
                .cloned()
                .unwrap_or_default();
            if let Some(window) = model.resolved.context_window {
                let folded = auto_compact(&mut entry.history, window, AUTO_COMPACT_THRESHOLD);
                if folded > 0 {
                    tracing::info!(model = %target.label, folded, window, "auto-compacted");
                    records.push((target.label.clone(), entry.history.clone()));
                    compacted.push(format!("{} ({folded} turn(s))", target.label));
                }
            }
            // From the second turn on, a model reads what became of its proposals: which
            // model's changes were applied (or none) and which of its own files were not.
            let note = (!entry.history.is_empty()).then(|| {
                next_turn_note(
                    &target.label,
                    &inputs.chosen,
                    inputs
                        .own
                        .get(&target.label)
                        .map(Vec::as_slice)
                        .unwrap_or(&[]),
                    &inputs.applied,
                )
            });
            entries.push((entry, note));
        }
        for (label, messages) in records {
            self.record_conversation(self.last_turn, &label, &messages);
            self.conversations.insert(label, messages);
        }
        // The note is used up when the turn starts (a rejected turn leaves it for the next).
        self.sent_notes.insert(request.turn, inputs);
        // The old workspaces go below: stop their checks first.
        if let Some(review) = &self.review {
            review.checks.cancel();
        }
        let old = std::mem::take(&mut self.kept);
        if !old.is_empty() {
            // Removing workspaces is disk work: never on the loop's thread.
            tokio::task::spawn_blocking(move || drop(old));
        }
        let all = CancellationToken::new();
        let targets: Vec<(Target, CancellationToken)> = request
            .targets
            .iter()
            .map(|t| (t.clone(), all.child_token()))
            .collect();
        let tokens: Vec<CancellationToken> = targets.iter().map(|(_, t)| t.clone()).collect();
        self.turn = Some(ActiveTurn {
            turn: request.turn,
            prompt: request.prompt.clone(),
            remember: request.remember,
            check: request.settings.check.clone(),
            all,
            remaining: targets.len(),
            targets,
        });
        let start = TurnStart {
            tx: self.tx.clone(),
            turn: request.turn,
            project: self.project.clone(),
            spill_dir: self.session_dir.join("spill"),
            prompt: request.prompt,
            attachments: request.attachments,
            sandbox: self.config.sandbox.clone(),
        };
        tokio::spawn(start.run(entries, tokens));
        if compacted.is_empty() {
            Vec::new()
        } else {
            vec![EngineMsg::Info(format!(
                "context nearly full: compacted {} (earlier turns folded into a recap)",
                compacted.join(", ")
            ))]
        }
    }

    /// Handles what the turn's tasks report; returns messages for the app.
    pub fn on_loop(&mut self, msg: LoopMsg) -> Vec<EngineMsg> {
        match msg {
            LoopMsg::App(m) => vec![m],
            LoopMsg::Started { turn, base } => self.started(turn, base),
            LoopMsg::Rejected { turn, error } => {
                if self.turn.as_ref().is_some_and(|t| t.turn == turn) {
                    self.turn = None;
                }
                vec![EngineMsg::TurnRejected { error }]
            }
            LoopMsg::Run { turn, entry, event } => self.run_event(turn, entry, event),
            LoopMsg::ChangeSet { turn, label, set } => self.change_set_built(turn, label, set),
            LoopMsg::Chosen(outcome) => self.chosen(outcome),
            LoopMsg::Rewound(done) => self.rewound(done),
        }
    }

    fn started(&mut self, turn: u32, base: Arc<Base>) -> Vec<EngineMsg> {
        let Some(active) = self.turn.as_ref().filter(|t| t.turn == turn) else {
            return Vec::new();
        };
        self.last_turn = turn;
        self.next_note = None;
        self.prompts.insert(turn, active.prompt.clone());
        self.review = Some(TurnReview {
            turn,
            prompt: active.prompt.clone(),
            base,
            labels: active
                .targets
                .iter()
                .map(|(t, _)| t.label.clone())
                .collect(),
            finished: Default::default(),
            files: Default::default(),
            check: active.check.clone(),
            checks: tokio_util::sync::CancellationToken::new(),
        });
        self.recorder.record(&SessionRecord::Turn {
            turn,
            time: now().rfc3339(),
            prompt: active.prompt.clone(),
            models: active
                .targets
                .iter()
                .map(|(t, _)| t.label.clone())
                .collect(),
        });
        if active.remember {
            let line = json!({
                "time": now().rfc3339(), "session": self.session_id, "prompt": active.prompt,
            });
            let path = self.store.history();
            tokio::task::spawn_blocking(move || {
                if let Err(err) = EventLog::open(&path).and_then(|mut log| log.append(&line)) {
                    tracing::warn!(error = %err, "could not append to history.jsonl");
                }
            });
        }
        vec![EngineMsg::TurnStarted {
            turn,
            seed: seed(turn),
        }]
    }

    fn run_event(&mut self, turn: u32, entry: usize, event: RunEvent) -> Vec<EngineMsg> {
        let Some(active) = self.turn.as_ref().filter(|t| t.turn == turn) else {
            return Vec::new();
        };
        let Some((target, _)) = active.targets.get(entry) else {
            return Vec::new();
        };
        let (panel, label) = (target.panel, target.label.clone());
        self.recorder.record(&record(turn, entry, &label, &event));
        match event {
            RunEvent::Agent { event, .. } => vec![EngineMsg::Agent { panel, event }],
            RunEvent::WorkspaceReady { .. } => Vec::new(),
            RunEvent::Finished { result, .. } => {
                let mut files: Vec<String> = result.writes.iter().map(|w| w.path.clone()).collect();
                files.sort();
                files.dedup();
                let (stop, elapsed_ms) = match &result.outcome {
                    Some(o) => (o.stop, o.stats.elapsed_ms),
                    None => (crate::model::RunStop::Error, 0),
                };
                if let Some(outcome) = &result.outcome {
                    let messages = outcome.messages.clone();
                    self.record_conversation(turn, &label, &messages);
                    self.conversations.insert(label.clone(), messages);
                }
                self.last_files.insert(label, files.clone());
                let summary = RunSummary {
                    stop,
                    elapsed_ms,
                    writes: result.writes.len(),
                    files,
                    error: result.error.clone(),
                };
                let mut out = vec![EngineMsg::Finished { panel, summary }];
                out.extend(self.review_finished(turn, &result));
                self.kept.push(*result);
                let Some(active) = self.turn.as_mut() else {
                    return out;
                };
                active.remaining = active.remaining.saturating_sub(1);
                if active.remaining == 0 {
                    self.turn = None;
                    self.recorder.record(
                        &json!({"type": "turn_end", "turn": turn, "time": now().rfc3339()}),
                    );
                    out.push(EngineMsg::TurnEnded { turn });
                }
                out
            }
        }
    }
}

/// A number that differs from turn to turn and run to run (blind mode shuffles with it).
fn seed(turn: u32) -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    (nanos as u64) ^ (u64::from(std::process::id()) << 32) ^ u64::from(turn).rotate_left(17)
}

/// One runner event as a session-log record (the shape `versus ask` writes).
fn record(turn: u32, entry: usize, label: &str, event: &RunEvent) -> SessionRecord {
    match event {
        RunEvent::Agent { event, .. } => SessionRecord::Agent {
            turn,
            entry,
            model: label.to_string(),
            event: event.clone(),
        },
        RunEvent::WorkspaceReady { root, mode, .. } => SessionRecord::Workspace {
            turn,
            entry,
            root: root.clone(),
            mode: format!("{mode:?}").to_lowercase(),
        },
        RunEvent::Finished { result, .. } => SessionRecord::Finished {
            turn,
            entry,
            model: label.to_string(),
            stop: result.outcome.as_ref().map(|o| o.stop),
            stats: result.outcome.as_ref().map(|o| o.stats.clone()),
            writes: result.writes.len(),
            error: result.error.clone(),
            final_text: result
                .outcome
                .as_ref()
                .map(|o| o.final_text.clone())
                .unwrap_or_default(),
        },
    }
}

/// The part of a turn that runs on a task: attachments, capture, fan-out, forwarding.
struct TurnStart {
    tx: UnboundedSender<LoopMsg>,
    turn: u32,
    project: PathBuf,
    spill_dir: PathBuf,
    prompt: String,
    attachments: Vec<String>,
    sandbox: crate::exec::SandboxSettings,
}

impl TurnStart {
    async fn run(self, entries: Vec<(ModelEntry, Option<String>)>, tokens: Vec<CancellationToken>) {
        let project = self.project.clone();
        let attachments = self.attachments.clone();
        let prepared = tokio::task::spawn_blocking(move || -> Result<(String, Base), String> {
            let text = read_attachments(&project, &attachments)?;
            let base = Base::capture(&project)
                .map_err(|e| format!("could not capture the project's files: {e}"))?;
            Ok((text, base))
        })
        .await
        .unwrap_or_else(|e| Err(format!("preparing the turn failed: {e}")));
        let (attached, base) = match prepared {
            Ok(ok) => ok,
            Err(error) => {
                let _ = self.tx.send(LoopMsg::Rejected {
                    turn: self.turn,
                    error,
                });
                return;
            }
        };
        let base = Arc::new(base);
        let _ = self.tx.send(LoopMsg::Started {
            turn: self.turn,
            base: Arc::clone(&base),
        });
        let options = RunOptions {
            isolation: Isolation::default_for(&self.project),
            limits: ToolLimits::default(),
            setup: None,
            workspace_parent: None,
            spill_dir: self.spill_dir.clone(),
            output_filter: None,
            sandbox: self.sandbox.clone(),
        };
        for (index, ((entry, note), token)) in entries.into_iter().zip(tokens).enumerate() {
            let mut text = String::new();
            if let Some(note) = note {
                text.push_str(&note);
                text.push_str("\n\n");
            }
            text.push_str(&self.prompt);
            text.push_str(&attached);
            let (mut rx, handle) = fan_out(
                Arc::clone(&base),
                vec![entry],
                Message::user(text),
                options.clone(),
            );
            let tx = self.tx.clone();
            let turn = self.turn;
            tokio::spawn(async move {
                let mut cancelled = false;
                loop {
                    tokio::select! {
                        event = rx.recv() => match event {
                            Some(event) => {
                                if tx.send(LoopMsg::Run { turn, entry: index, event }).is_err() {
                                    handle.cancel_all();
                                }
                            }
                            None => break,
                        },
                        () = token.cancelled(), if !cancelled => {
                            cancelled = true;
                            handle.cancel_all();
                        }
                    }
                }
            });
        }
    }
}

/// The text appended to the prompt for `@path` attachments.
fn read_attachments(project: &Path, paths: &[String]) -> Result<String, String> {
    let mut out = String::new();
    for rel in paths {
        let path = project.join(rel);
        let not_found = || {
            format!(
                "@{rel} is neither a model of this session nor a file in the project; \
                 /models lists the models, Tab completes file names"
            )
        };
        let meta = std::fs::metadata(&path).map_err(|_| not_found())?;
        if !meta.is_file() {
            return Err(not_found());
        }
        if meta.len() > MAX_ATTACHMENT {
            return Err(format!(
                "@{rel} is {} KB; attachments are limited to {} KB (let the models read it with their tools instead)",
                meta.len() / 1024,
                MAX_ATTACHMENT / 1024
            ));
        }
        let bytes = std::fs::read(&path).map_err(|e| format!("could not read @{rel}: {e}"))?;
        let text = String::from_utf8(bytes)
            .map_err(|_| format!("@{rel} is not a text file (UTF-8); only text can be attached"))?;
        out.push_str(&format!("\n\nAttached file `{rel}`:\n```\n{text}"));
        if !text.ends_with('\n') {
            out.push('\n');
        }
        out.push_str("```");
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn attachments_are_fenced_and_missing_ones_are_explained() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "hello").unwrap();
        let text = read_attachments(dir.path(), &["a.txt".to_string()]).unwrap();
        assert_eq!(text, "\n\nAttached file `a.txt`:\n```\nhello\n```");
        let err = read_attachments(dir.path(), &["nope".to_string()]).unwrap_err();
        assert!(err.contains("neither a model"), "{err}");
    }
}
