//! The records of a turn, written by one piece of code for every front end: the engine's own
//! turns ([`SessionEngine::start_turn`]) and turns a front end drives itself (a headless job
//! keeps one workspace across several prompts, so it runs the agent loop directly) produce the
//! same lines in the session log.

use std::collections::BTreeMap;
use std::path::Path;

use super::SessionEngine;
use super::turn::FinishedModel;
use crate::agent::AgentOutcome;
use crate::model::{AgentEvent, RunStats, RunStop};
use crate::session::{CheckResult, SessionRecord, TurnTask, now};
use crate::workspace::{Base, BaseEntry, FileWrite, Isolation};

/// What a model's run left, for its records.
pub struct Finish<'a> {
    /// The agent's outcome (`None`: its workspace could not be prepared).
    pub outcome: Option<&'a AgentOutcome>,
    /// Recorded writes, then the changes bash made.
    pub writes: &'a [FileWrite],
    /// A failure outside the agent (workspace, setup, bash-change scan).
    pub error: Option<String>,
    /// The turn's base (the base entry of each touched path is recorded with the proposals).
    pub base: Option<&'a Base>,
    /// The model's workspace (the mode of each touched file is recorded with the proposals).
    pub root: Option<&'a Path>,
}

/// The most of a model's last text a `finished` record repeats (64 KiB). The whole text is
/// already in the log twice (its streamed deltas and the conversation record), so a model
/// that answers with megabytes does not put them in the log a third time.
pub const FINISHED_TEXT_BYTES: usize = 64 * 1024;

/// `text` as a `finished` record keeps it: whole up to [`FINISHED_TEXT_BYTES`], else its
/// beginning and a note saying where the rest is.
fn recorded_text(text: &str) -> String {
    if text.len() <= FINISHED_TEXT_BYTES {
        return text.to_string();
    }
    let mut end = FINISHED_TEXT_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}\n[... {} more bytes: the whole text is in the model's conversation]",
        &text[..end],
        text.len() - end
    )
}

/// The paths `writes` touched, sorted, each once (what the next-turn note names).
pub(super) fn touched(writes: &[FileWrite]) -> Vec<String> {
    let mut paths: Vec<String> = writes.iter().map(|w| w.path.clone()).collect();
    paths.sort();
    paths.dedup();
    paths
}

impl SessionEngine {
    /// Records a turn's prompt and models (models new to the session join its model set).
    pub fn record_turn(&mut self, turn: u32, prompt: &str, models: &[String], tasks: &[TurnTask]) {
        let mut all = self.models.clone();
        for label in models {
            if !all.contains(label) {
                all.push(label.clone());
            }
        }
        self.set_models(all);
        self.last_turn = self.last_turn.max(turn);
        self.prompts.insert(turn, prompt.to_string());
        self.recorder.record(&SessionRecord::Turn {
            turn,
            time: now().rfc3339(),
            prompt: prompt.to_string(),
            models: models.to_vec(),
            blind: self.blind(),
            tasks: tasks.to_vec(),
        });
    }

    /// Records that a model's workspace is ready.
    pub fn record_workspace(&mut self, turn: u32, entry: usize, root: &Path, mode: Isolation) {
        self.recorder.record(&SessionRecord::Workspace {
            turn,
            entry,
            root: root.to_path_buf(),
            mode,
        });
    }

    /// Records one event of a model's agent.
    pub fn record_agent(&mut self, turn: u32, entry: usize, label: &str, event: &AgentEvent) {
        self.recorder
            .record(&SessionRecord::agent(turn, entry, label, event.clone()));
    }

    /// Records a model's end: its proposals (with the base entries they change), how it ended
    /// and its whole conversation, which the next turn continues from.
    pub fn record_finished(
        &mut self,
        turn: u32,
        entry: usize,
        label: &str,
        finish: Finish<'_>,
    ) -> FinishedModel {
        let files = touched(finish.writes);
        let (stop, stats, error, final_text) = match finish.outcome {
            Some(o) => (
                o.stop,
                o.stats.clone(),
                o.error.clone().or_else(|| finish.error.clone()),
                o.final_text.clone(),
            ),
            None => (
                RunStop::Error,
                RunStats::default(),
                finish.error.clone(),
                String::new(),
            ),
        };
        let touched: BTreeMap<String, Option<BaseEntry>> = files
            .iter()
            .map(|p| (p.clone(), finish.base.and_then(|b| b.get(p).cloned())))
            .collect();
        self.recorder.record(&SessionRecord::Proposals {
            turn,
            entry,
            model: label.to_string(),
            writes: finish.writes.to_vec(),
            base: touched,
            modes: finish
                .root
                .map(|root| crate::workspace::changeset::recorded_modes(root, &files))
                .unwrap_or_default(),
        });
        let ran = finish.outcome.is_some();
        self.recorder.record(&SessionRecord::Finished {
            turn,
            entry,
            model: label.to_string(),
            stop: ran.then_some(stop),
            stats: ran.then(|| stats.clone()),
            writes: finish.writes.len(),
            error: error.clone(),
            final_text: recorded_text(&final_text),
        });
        if let Some(outcome) = finish.outcome {
            self.record_conversation(turn, label, &outcome.messages);
            self.conversations
                .insert(label.to_string(), outcome.messages.clone());
        }
        self.last_files.insert(label.to_string(), files.clone());
        FinishedModel {
            entry,
            label: label.to_string(),
            stop,
            stats,
            error,
            final_text,
            writes: finish.writes.len(),
            files,
            deleted: crate::workspace::FileWrite::deleted_paths(finish.writes),
            notes: Vec::new(),
            scan_notes: Vec::new(),
        }
    }

    /// Records how a model's review check ended, so a reopened session shows it again (the
    /// workspace it ran in is gone by then).
    pub fn record_check(&mut self, turn: u32, label: &str, result: &CheckResult) {
        self.recorder.record(&SessionRecord::Check {
            turn,
            model: label.to_string(),
            result: result.clone(),
        });
    }

    /// Records that every model of the turn has ended.
    pub fn record_turn_end(&mut self, turn: u32) {
        self.recorder.record(&SessionRecord::TurnEnded {
            turn,
            time: now().rfc3339(),
        });
    }
}
