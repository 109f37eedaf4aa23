//! One turn from the interface: the models addressed become engine targets, the session engine
//! records the turn and prepares each model's history and note, a task captures the project and
//! starts the models, and every run event goes through the engine (which records it) before it
//! reaches the app.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::agent::{AgentSettings, system_prompt};
use crate::engine::{HistoryPolicy, TurnEvent, TurnRequest as EngineTurn, TurnTarget};
use crate::fsutil::read_capped;
use crate::runner::{RunOptions, entry_for};
use crate::session::{EventLog, now};
use crate::tools::{ToolLimits, ToolRegistry};
use crate::workspace::{Base, Isolation, ProjectPath};

use super::super::action::{CheckState, EngineMsg, Target, TurnRequest};
use super::super::panel::RunSummary;
use super::{Engine, LoopMsg};
use crate::engine::check::{CHECK_TIMEOUT, run_check};

/// Largest file `@path` attaches.
const MAX_ATTACHMENT: u64 = 512 * 1024;

/// The running turn's display facts: which panel each model draws into.
#[derive(Debug)]
pub struct ActiveTurn {
    turn: u32,
    /// The prompt as typed, `@model` targets included (what history.jsonl keeps).
    line: String,
    remember: bool,
    targets: Vec<Target>,
    /// `@word`s that named neither a model nor a project file: sent as plain text, and said
    /// so in the status line once the turn starts.
    plain: Vec<String>,
}

impl Engine {
    /// Starts a turn; the answer (`TurnStarted` or `TurnRejected`) comes through the loop.
    pub(super) fn submit(&mut self, request: TurnRequest) -> Vec<EngineMsg> {
        let reject = |error: String| vec![EngineMsg::TurnRejected { error }];
        if self.core.running() {
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
        let (attached, plain) = match read_attachments(&self.project, &request.attachments) {
            Ok(found) => found,
            Err(error) => return reject(error),
        };
        let tools = Arc::new(registry);
        let settings = AgentSettings {
            max_steps: request.settings.max_steps,
            timeout: Duration::from_secs(request.settings.timeout_secs),
            system: system_prompt(&tools.guidance(), request.settings.system.as_deref()),
            ..AgentSettings::default()
        };
        let mut targets = Vec::with_capacity(request.targets.len());
        for target in &request.targets {
            let Some(model) = self.models.get(&target.label) else {
                // While blind mode hides the names, the alias alone.
                return reject(
                    match self.core.blind_names().filter(|_| self.core.blind()) {
                        Some(names) => format!(
                            "{} is not set up in this session",
                            names.shown(&target.label)
                        ),
                        None => format!(
                            "{} is not set up in this session; add it with /models add {}",
                            target.label, target.label
                        ),
                    },
                );
            };
            let entry = entry_for(
                &model.resolved,
                Arc::clone(&model.client),
                Arc::clone(&tools),
                settings.clone(),
            );
            targets.push(TurnTarget {
                label: target.label.clone(),
                agent: entry.agent,
                window: model.resolved.context_window,
            });
        }
        // The old workspaces go with the new turn: stop their checks first.
        self.checks.cancel();
        self.checks = tokio_util::sync::CancellationToken::new();
        self.check = request.settings.check.clone();
        self.core.set_blind(request.blind);
        let launch = match self.core.start_turn(EngineTurn {
            prompt: request.prompt.clone(),
            attached,
            targets,
            options: RunOptions {
                isolation: Isolation::default_for(&self.project),
                limits: ToolLimits::default(),
                setup: None,
                workspace_parent: None,
                spill_dir: self.core.dir().join("spill"),
                output_filter: None,
                sandbox: self.config.sandbox.clone(),
                limit: None,
            },
            policy: HistoryPolicy::default(),
            // This driver runs its own checks and history lines (until it uses the handle).
            check: None,
            history_line: None,
            workspaces: Default::default(),
        }) {
            Ok(launch) => launch,
            Err(e) => return reject(e.to_string()),
        };
        let turn = launch.turn;
        let compacted = launch.compacted.clone();
        self.turn = Some(ActiveTurn {
            turn,
            line: request.line.clone(),
            remember: request.remember,
            targets: request.targets,
            plain,
        });
        let tx = self.tx.clone();
        tokio::spawn(async move {
            match launch.launch().await {
                Err(error) => {
                    let _ = tx.send(LoopMsg::Rejected {
                        turn,
                        error: error.to_string(),
                    });
                }
                Ok(mut launched) => {
                    let _ = tx.send(LoopMsg::Started {
                        turn,
                        base: launched.base,
                    });
                    while let Some(event) = launched.events.recv().await {
                        if tx.send(LoopMsg::Run { turn, event }).is_err() {
                            break;
                        }
                    }
                }
            }
        });
        if compacted.is_empty() {
            Vec::new()
        } else {
            // The app names the models (their aliases while names are hidden).
            vec![EngineMsg::Compacted(compacted)]
        }
    }

    /// Handles what the turn's tasks report (see [`Engine::on_loop`]).
    pub(super) fn on_loop_msg(&mut self, msg: LoopMsg) -> Vec<EngineMsg> {
        match msg {
            LoopMsg::App(m) => vec![m],
            LoopMsg::Started { turn, base } => self.started(turn, base),
            LoopMsg::Rejected { turn, error } => {
                self.core.turn_rejected(turn);
                if self.turn.as_ref().is_some_and(|t| t.turn == turn) {
                    self.turn = None;
                }
                vec![EngineMsg::TurnRejected { error }]
            }
            LoopMsg::Run { turn, event } => {
                let events = self.core.on_event(turn, event);
                events
                    .into_iter()
                    .flat_map(|e| self.turn_event(turn, e))
                    .collect()
            }
            LoopMsg::ChangeSet { turn, label, set } => {
                if let Ok(set) = &set {
                    self.core.change_set_built(turn, set);
                }
                vec![EngineMsg::ChangeSet { turn, label, set }]
            }
            LoopMsg::Checked {
                turn,
                label,
                result,
            } => {
                self.core.record_check(turn, &label, &result);
                vec![EngineMsg::Check {
                    turn,
                    label,
                    state: CheckState::Done(result),
                }]
            }
            LoopMsg::Chosen(outcome) => self.chosen(outcome),
            LoopMsg::Rewound(done) => self.rewound(done),
        }
    }

    fn started(&mut self, turn: u32, base: Arc<Base>) -> Vec<EngineMsg> {
        let Some(active) = self.turn.as_ref().filter(|t| t.turn == turn) else {
            return Vec::new();
        };
        self.core.turn_started(turn, base);
        if active.remember {
            let line = serde_json::json!({
                "time": now().rfc3339(), "session": self.core.id(), "prompt": active.line,
            });
            let path = self.core.store().history();
            tokio::task::spawn_blocking(move || {
                if let Err(err) = EventLog::open(&path).and_then(|mut log| log.append(&line)) {
                    tracing::warn!(error = %err, "could not append to history.jsonl");
                }
            });
        }
        let mut out = vec![EngineMsg::TurnStarted { turn }];
        if !active.plain.is_empty() {
            out.push(EngineMsg::Info(plain_note(turn, &active.plain)));
        }
        out
    }

    fn panel(&self, turn: u32, entry: usize) -> Option<usize> {
        let active = self.turn.as_ref().filter(|t| t.turn == turn)?;
        active.targets.get(entry).map(|t| t.panel)
    }

    fn turn_event(&mut self, turn: u32, event: TurnEvent) -> Vec<EngineMsg> {
        match event {
            TurnEvent::WorkspaceReady { .. } => Vec::new(),
            TurnEvent::Agent { entry, event } => match self.panel(turn, entry) {
                Some(panel) => vec![EngineMsg::Agent { panel, event }],
                None => Vec::new(),
            },
            TurnEvent::Finished(finished) => {
                let mut out = Vec::new();
                if let Some(panel) = self.panel(turn, finished.entry) {
                    out.push(EngineMsg::Finished {
                        panel,
                        summary: RunSummary {
                            stop: finished.stop,
                            elapsed_ms: finished.stats.elapsed_ms,
                            writes: finished.writes,
                            files: finished.files.clone(),
                            deleted: finished.deleted.clone(),
                            error: finished.error.clone(),
                        },
                    });
                }
                self.build_change_set(turn, &finished.label);
                out.extend(self.start_check(turn, &finished.label));
                out
            }
            TurnEvent::Ended { turn } => {
                if self.turn.as_ref().is_some_and(|t| t.turn == turn) {
                    self.turn = None;
                }
                vec![EngineMsg::TurnEnded { turn }]
            }
        }
    }

    /// Builds a finished model's change set off the loop's thread.
    pub(super) fn build_change_set(&self, turn: u32, label: &str) {
        let Some(job) = self.core.change_set_job(label) else {
            return;
        };
        let tx = self.tx.clone();
        let label = label.to_string();
        tokio::task::spawn_blocking(move || {
            let set = job.build().map_err(|e| e.to_string());
            let _ = tx.send(LoopMsg::ChangeSet { turn, label, set });
        });
    }

    /// A reopened session's last turn came back for review: rebuild its models' change sets.
    pub fn restore(&self, restored: &crate::engine::RestoredTurn) {
        for finished in &restored.finished {
            self.build_change_set(restored.turn, &finished.label);
        }
    }

    /// Runs the review check in a finished model's workspace.
    fn start_check(&self, turn: u32, label: &str) -> Option<EngineMsg> {
        let command = self.check.clone()?;
        let workspace = self.core.workspace(label)?;
        let dir = workspace.root().to_path_buf();
        let sandbox = workspace.sandbox(&self.config.sandbox);
        let token = self.checks.clone();
        let tx = self.tx.clone();
        let label = label.to_string();
        let answer = EngineMsg::Check {
            turn,
            label: label.clone(),
            state: CheckState::Running,
        };
        tokio::spawn(async move {
            let result = run_check(&command, &dir, &sandbox, CHECK_TIMEOUT, &token).await;
            let _ = tx.send(LoopMsg::Checked {
                turn,
                label,
                result,
            });
        });
        Some(answer)
    }
}

/// The status line when some `@word`s were left as text.
fn plain_note(turn: u32, plain: &[String]) -> String {
    let words: Vec<String> = plain.iter().map(|w| format!("@{w}")).collect();
    format!(
        "turn {turn}: {} sent as plain text (no model of this session or project file by that name; /models lists the models, Tab completes file names)",
        words.join(", ")
    )
}

/// The text appended to the prompt for `@path` attachments, and the `@word`s that are not
/// files of the project. Those stay plain text in the prompt (a Python decorator, a Java
/// annotation, `@types/node`, a user handle): only an existing file inside the project
/// attaches, so a word that merely starts with `@` never blocks sending. A path that leaves
/// the project (absolute, or through `..`) is text too: attachments are project files only.
///
/// "Inside" is decided by the rule the models' own file tools follow ([`ProjectPath`]): a link
/// on the way or at the end must resolve inside the project and never into `.git/`. A cloned
/// repository ships links as easily as files: `CONTRIBUTING.md -> ~/.ssh/id_ed25519` or `->
/// /proc/self/environ` (versus's own environment, every API key) was read and sent to every
/// model of the turn when the user attached what looked like a project file. The read itself
/// is bounded and of a regular file only ([`read_capped`]), whatever the file became since.
fn read_attachments(project: &Path, paths: &[String]) -> Result<(String, Vec<String>), String> {
    let mut out = String::new();
    let mut plain = Vec::new();
    for rel in paths {
        let inside = std::path::Path::new(rel).components().all(|c| {
            matches!(
                c,
                std::path::Component::Normal(_) | std::path::Component::CurDir
            )
        });
        let resolved = match ProjectPath::resolve(project, rel) {
            Ok(resolved) if inside => resolved,
            _ => {
                plain.push(rel.clone());
                continue;
            }
        };
        let meta = match std::fs::metadata(resolved.abs()) {
            Ok(meta) if meta.is_file() => meta,
            _ => {
                plain.push(rel.clone());
                continue;
            }
        };
        if meta.len() > MAX_ATTACHMENT {
            return Err(format!(
                "@{rel} is {} KB; attachments are limited to {} KB (let the models read it with their tools instead)",
                meta.len() / 1024,
                MAX_ATTACHMENT / 1024
            ));
        }
        let bytes = read_capped(resolved.abs(), MAX_ATTACHMENT)
            .map_err(|e| format!("could not read @{rel}: {e}"))?;
        let text = String::from_utf8(bytes)
            .map_err(|_| format!("@{rel} is not a text file (UTF-8); only text can be attached"))?;
        out.push_str(&format!("\n\nAttached file `{rel}`:\n```\n{text}"));
        if !text.ends_with('\n') {
            out.push('\n');
        }
        out.push_str("```");
    }
    Ok((out, plain))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn attachments_are_fenced_and_missing_ones_are_explained() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "hello").unwrap();
        let (text, plain) = read_attachments(dir.path(), &["a.txt".to_string()]).unwrap();
        assert_eq!(text, "\n\nAttached file `a.txt`:\n```\nhello\n```");
        assert!(plain.is_empty());
    }

    /// Bug (issue 14, 3): any `@word` that was not a model had to be a file, so "add a
    /// @property decorator" could not be sent. Unknown words are plain text now, and only
    /// files inside the project attach.
    #[test]
    fn unknown_at_words_are_plain_text_and_only_project_files_attach() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/a.py"), "x = 1\n").unwrap();
        let outside = tempfile::NamedTempFile::new().unwrap();
        let words: Vec<String> = [
            "property",
            "types/node",
            "Override",
            "src",
            "src/a.py",
            "../etc/passwd",
            &outside.path().display().to_string(),
        ]
        .iter()
        .map(|w| w.to_string())
        .collect();
        let (text, plain) = read_attachments(dir.path(), &words).unwrap();
        assert_eq!(text, "\n\nAttached file `src/a.py`:\n```\nx = 1\n```");
        assert_eq!(
            plain,
            [
                "property".to_string(),
                "types/node".into(),
                "Override".into(),
                "src".into(),
                "../etc/passwd".into(),
                outside.path().display().to_string(),
            ]
        );
        let note = plain_note(3, &plain[..2]);
        assert!(
            note.starts_with("turn 3: @property, @types/node sent as plain text"),
            "{note}"
        );
    }
}
