//! One turn from the interface: the models addressed become engine targets and the turn is
//! submitted; the engine's events of the turn (already recorded) become the app's messages,
//! each model's agent events drawn into its panel.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use versus_core::engine::{
    AgentSettings, EngineEvent, HistoryPolicy, Op, RunOptions, TurnRequest as EngineTurn,
    TurnTarget, entry_for,
};
use versus_core::fsutil::read_capped;
use versus_core::tools::{ToolLimits, ToolRegistry};
use versus_core::workspace::{Isolation, ProjectPath};

use super::super::action::{CheckState, EngineMsg, Target, TurnRequest};
use super::super::panel::RunSummary;
use super::Engine;

/// Largest file `@path` attaches.
const MAX_ATTACHMENT: u64 = 512 * 1024;

/// The running turn's display facts: which panel each model draws into.
#[derive(Debug)]
pub struct ActiveTurn {
    /// Its number, once the engine said it (`None`: submitted, not started yet).
    turn: Option<u32>,
    targets: Vec<Target>,
    /// `@word`s that named neither a model nor a project file: sent as plain text, and said
    /// so in the status line once the turn starts.
    plain: Vec<String>,
}

impl Engine {
    /// Starts a turn; the answer (`TurnStarted` or `TurnRejected`) comes through the loop.
    pub(super) fn submit(&mut self, request: TurnRequest) -> Vec<EngineMsg> {
        let reject = |error: String| vec![EngineMsg::TurnRejected { error }];
        if self.running {
            return reject("models are still running: wait for them, or press Esc".to_string());
        }
        let mut registry = ToolRegistry::builtin();
        // Web search (off unless `[web_search]` is configured), the same for every model.
        match versus_core::recipe::web_search_setup(&self.config, &self.env, None) {
            Ok(Some(search)) => registry = registry.with_web_search(search),
            Ok(None) => {}
            Err(error) => return reject(error),
        }
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
            instructions: request.settings.system.clone(),
            ..AgentSettings::configured(&self.config)
        };
        let mut targets = Vec::with_capacity(request.targets.len());
        for target in &request.targets {
            let Some(model) = self.models.get(&target.label) else {
                // While blind mode hides the names, the alias alone.
                return reject(match self.names.as_ref().filter(|_| self.blind()) {
                    Some(names) => format!(
                        "{} is not set up in this session",
                        names.shown(&target.label)
                    ),
                    None => format!(
                        "{} is not set up in this session; add it with /models add {}",
                        target.label, target.label
                    ),
                });
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
        let mut out = self.send(Op::Blind(request.blind));
        // A turn's models join the session's (the engine records them with the turn).
        let mut roster = self.roster.clone();
        for target in &request.targets {
            if !roster.contains(&target.label) {
                roster.push(target.label.clone());
            }
        }
        self.roster = roster;
        out.extend(self.send(Op::StartTurn(EngineTurn {
            prompt: request.prompt.clone(),
            attached,
            targets,
            options: RunOptions {
                isolation: Isolation::default_for(&self.project),
                limits: ToolLimits::default(),
                setup: None,
                workspace_parent: None,
                spill_dir: self.handle.info().dir.join("spill"),
                output_filter: None,
                sandbox: self.config.sandbox.clone(),
                limit: None,
                // The configured MCP servers, started for this turn's models.
                mcp: versus_core::mcp::plan(&self.config, &self.env, &self.project, Vec::new()),
            },
            policy: HistoryPolicy::default(),
            check: request.settings.check.clone(),
            history_line: request.remember.then(|| request.line.clone()),
            workspaces: Default::default(),
            context: self.config.context_sources(&self.env),
            tasks: Vec::new(),
        })));
        if out.is_empty() {
            self.running = true;
            self.turn = Some(ActiveTurn {
                turn: None,
                targets: request.targets,
                plain,
            });
        }
        out
    }

    fn panel(&self, turn: u32, entry: usize) -> Option<usize> {
        let active = self.turn.as_ref().filter(|t| t.turn == Some(turn))?;
        active.targets.get(entry).map(|t| t.panel)
    }

    /// The number of the turn submitted, once the engine gives it.
    fn number(&mut self, turn: u32) {
        if let Some(active) = self.turn.as_mut().filter(|t| t.turn.is_none()) {
            active.turn = Some(turn);
        }
    }

    /// An event of a turn, as the app's messages.
    pub(super) fn turn_event(&mut self, event: EngineEvent) -> Vec<EngineMsg> {
        match event {
            EngineEvent::HistoryShortened { turn, compacted } => {
                self.number(turn);
                // The app names the models (their aliases while names are hidden).
                vec![EngineMsg::Compacted(compacted)]
            }
            EngineEvent::TurnStarted { turn, .. } => {
                self.number(turn);
                let mut out = vec![EngineMsg::TurnStarted { turn }];
                if let Some(active) = self.turn.as_ref().filter(|t| !t.plain.is_empty()) {
                    out.push(EngineMsg::Info(plain_note(turn, &active.plain)));
                }
                out
            }
            EngineEvent::TurnContext {
                turn,
                context,
                ledger,
            } => vec![EngineMsg::TurnContext {
                turn,
                context: Box::new(context),
                ledger,
            }],
            EngineEvent::Agent { turn, entry, event } => match self.panel(turn, entry) {
                Some(panel) => vec![EngineMsg::Agent { panel, event }],
                None => Vec::new(),
            },
            EngineEvent::ModelFinished {
                turn,
                model,
                change_set,
            } => {
                let mut out = Vec::new();
                if let Some(panel) = self.panel(turn, model.entry) {
                    out.push(EngineMsg::Finished {
                        panel,
                        summary: RunSummary {
                            stop: model.stop,
                            elapsed_ms: model.stats.elapsed_ms,
                            writes: model.writes,
                            files: model.files.clone(),
                            deleted: model.deleted.clone(),
                            error: model.error.clone(),
                        },
                    });
                }
                out.push(EngineMsg::ChangeSet {
                    turn,
                    label: model.label,
                    set: change_set.map_err(|e| e.to_string()),
                });
                out
            }
            EngineEvent::CheckStarted { turn, label } => vec![EngineMsg::Check {
                turn,
                label,
                state: CheckState::Running,
            }],
            EngineEvent::CheckDone {
                turn,
                label,
                result,
            } => vec![EngineMsg::Check {
                turn,
                label,
                state: CheckState::Done(result),
            }],
            EngineEvent::TurnEnded { turn, .. } => {
                if self.turn.as_ref().is_some_and(|t| t.turn == Some(turn)) {
                    self.turn = None;
                }
                self.running = false;
                vec![EngineMsg::TurnEnded { turn }]
            }
            // The rest is not about a turn; the driver handles it (see `Engine::on_event`).
            _ => Vec::new(),
        }
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
