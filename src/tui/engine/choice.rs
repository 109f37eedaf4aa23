//! The engine's half of the review: each finished model's change set built off the loop's
//! thread, its check run in its workspace, the apply preview, and the choice carried out
//! exactly as `versus ask --pick` does it: apply through the apply engine (snapshots and
//! journal in the session folder, so /rewind and `versus rewind` undo it), a `Choice` record in
//! the session log, a line in `.versus/preferences.jsonl`, and the next turn's note.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::apply::{ApplyEngine, ApplyPlan, Resolution};
use crate::model::{RunStats, RunStop};
use crate::runner::ModelResult;
use crate::session::{ModelRecord, Preference, SessionRecord, append_preference, now};
use crate::workspace::Base;
use crate::workspace::changeset::{BaseReader, ChangeSet};

use super::super::action::{CheckState, ChoiceDone, ChoiceRequest, EngineMsg};
use super::check::{CHECK_TIMEOUT, run_check};
use super::{Engine, LoopMsg, NoteInputs};

/// What the engine keeps about the turn under review until the next one starts.
#[derive(Debug)]
pub struct TurnReview {
    /// The turn.
    pub turn: u32,
    /// Its prompt.
    pub prompt: String,
    /// The project's state when it started (change sets are computed against it).
    pub base: Arc<Base>,
    /// Its models in order.
    pub labels: Vec<String>,
    /// How each finished model ended, with its counters.
    pub finished: HashMap<String, (RunStop, RunStats)>,
    /// Files in each model's change set.
    pub files: HashMap<String, usize>,
    /// The check command, if one runs.
    pub check: Option<String>,
    /// Cancels the running checks (Esc, a new turn, quitting).
    pub checks: CancellationToken,
}

/// What carrying out a choice produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChoiceOutcome {
    /// For the app.
    pub done: ChoiceDone,
    /// Paths whose content changed on disk.
    pub written: Vec<String>,
}

/// Applies `plan` in `project`, journaling in `session_dir` (`None`: none of them, nothing to
/// write). Conflicting paths are written only as `resolutions` says. The same function the
/// engine runs, so tests drive the real apply path.
pub fn apply_choice(
    project: &Path,
    session_dir: &Path,
    turn: u32,
    plan: Option<&ApplyPlan>,
    resolutions: &BTreeMap<String, Resolution>,
) -> Result<ChoiceOutcome, String> {
    let Some(plan) = plan else {
        return Ok(ChoiceOutcome {
            done: ChoiceDone {
                turn,
                chosen: Vec::new(),
                apply_id: None,
                files: Vec::new(),
            },
            written: Vec::new(),
        });
    };
    let engine = ApplyEngine::new(project, session_dir).map_err(|e| e.to_string())?;
    let report = engine
        .apply(plan, resolutions)
        .map_err(|e| format!("nothing was applied: {e}"))?;
    Ok(ChoiceOutcome {
        written: report.written().into_iter().map(str::to_string).collect(),
        done: ChoiceDone {
            turn,
            chosen: plan.models.clone(),
            apply_id: report.apply_id,
            files: report
                .files
                .into_iter()
                .map(|f| (f.path, f.applied_as))
                .collect(),
        },
    })
}

impl Engine {
    /// A model finished: build its change set off the loop's thread and start its check.
    pub(super) fn review_finished(&mut self, turn: u32, result: &ModelResult) -> Vec<EngineMsg> {
        let Some(review) = self.review.as_mut().filter(|r| r.turn == turn) else {
            return Vec::new();
        };
        if let Some(outcome) = &result.outcome {
            review
                .finished
                .insert(result.label.clone(), (outcome.stop, outcome.stats.clone()));
        }
        let base = Arc::clone(&review.base);
        let writes = result.writes.clone();
        let root: Option<PathBuf> = result.workspace.as_ref().map(|w| w.root().to_path_buf());
        // Other finished workspaces started from the same base: a fallback for base content the
        // user's tree and git no longer hold.
        let fallbacks: Vec<PathBuf> = self
            .kept
            .iter()
            .filter_map(|r| r.workspace.as_ref().map(|w| w.root().to_path_buf()))
            .collect();
        let label = result.label.clone();
        let tx = self.tx.clone();
        tokio::task::spawn_blocking(move || {
            let mut reader = BaseReader::new(&base);
            for dir in &fallbacks {
                reader = reader.with_fallback(dir);
            }
            let set = ChangeSet::build(&label, &base, &writes, &reader, root.as_deref())
                .map_err(|e| e.to_string());
            let _ = tx.send(LoopMsg::ChangeSet { turn, label, set });
        });
        let mut out = Vec::new();
        if let (Some(command), Some(workspace)) = (review.check.clone(), &result.workspace) {
            let dir = workspace.root().to_path_buf();
            let sandbox = workspace.sandbox(&self.config.sandbox);
            let token = review.checks.clone();
            let tx = self.tx.clone();
            let label = result.label.clone();
            out.push(EngineMsg::Check {
                turn,
                label: label.clone(),
                state: CheckState::Running,
            });
            tokio::spawn(async move {
                let result = run_check(&command, &dir, &sandbox, CHECK_TIMEOUT, &token).await;
                let _ = tx.send(LoopMsg::App(EngineMsg::Check {
                    turn,
                    label,
                    state: CheckState::Done(result),
                }));
            });
        }
        out
    }

    /// A change set is built: note its size for the preferences line, pass it on.
    pub(super) fn change_set_built(
        &mut self,
        turn: u32,
        label: String,
        set: Result<ChangeSet, String>,
    ) -> Vec<EngineMsg> {
        if let (Some(review), Ok(set)) = (self.review.as_mut().filter(|r| r.turn == turn), &set) {
            review.files.insert(label.clone(), set.files_changed());
        }
        vec![EngineMsg::ChangeSet { turn, label, set }]
    }

    /// Previews the apply of `plan` (reads the user's files: off the loop's thread).
    pub(super) fn preview(&mut self, turn: u32, plan: ApplyPlan) -> Vec<EngineMsg> {
        let (project, session) = (self.project.clone(), self.session_dir.clone());
        let tx = self.tx.clone();
        tokio::task::spawn_blocking(move || {
            let msg = match ApplyEngine::new(&project, &session).and_then(|e| e.preview(&plan)) {
                Ok(preview) => EngineMsg::ApplyPreview { turn, preview },
                Err(e) => EngineMsg::ChoiceFailed {
                    error: format!("could not check your files before applying: {e}"),
                },
            };
            let _ = tx.send(LoopMsg::App(msg));
        });
        Vec::new()
    }

    /// Carries out a choice off the loop's thread: apply, then the preferences line; the
    /// session record and the next turn's note follow in [`Engine::chosen`].
    pub(super) fn choose(&mut self, request: ChoiceRequest) -> Vec<EngineMsg> {
        let Some(review) = self.review.as_ref().filter(|r| r.turn == request.turn) else {
            return vec![EngineMsg::ChoiceFailed {
                error: format!(
                    "turn {} is no longer the one under review; nothing was applied",
                    request.turn
                ),
            }];
        };
        let chosen: Vec<String> = request
            .plan
            .as_ref()
            .map(|p| p.models.clone())
            .unwrap_or_default();
        let preference = Preference {
            time: now().rfc3339(),
            session: self.session_id.clone(),
            turn: review.turn,
            prompt_hash: blake3::hash(review.prompt.as_bytes()).to_hex().to_string(),
            models: review
                .labels
                .iter()
                .map(|label| {
                    let (stop, stats) = review
                        .finished
                        .get(label)
                        .cloned()
                        .unwrap_or((RunStop::Error, RunStats::default()));
                    ModelRecord {
                        model: label.clone(),
                        status: stop.label().to_string(),
                        cost: stats.cost,
                        usage: stats.usage,
                        latency_ms: stats.elapsed_ms,
                        files: review.files.get(label).copied().unwrap_or(0),
                    }
                })
                .collect(),
            chosen,
            ratings: request.ratings.clone(),
            blind: request.blind,
            source: "tui".to_string(),
        };
        let (project, session) = (self.project.clone(), self.session_dir.clone());
        let preferences = self.store.preferences();
        let tx = self.tx.clone();
        tokio::task::spawn_blocking(move || {
            let outcome = apply_choice(
                &project,
                &session,
                request.turn,
                request.plan.as_ref(),
                &request.resolutions,
            );
            let msg = match outcome {
                Ok(outcome) => {
                    if let Err(e) = append_preference(&preferences, &preference) {
                        let _ = tx.send(LoopMsg::App(EngineMsg::Error(format!(
                            "the choice was made but not logged to {}: {e}",
                            preferences.display()
                        ))));
                    }
                    LoopMsg::Chosen(outcome)
                }
                Err(error) => LoopMsg::App(EngineMsg::ChoiceFailed { error }),
            };
            let _ = tx.send(msg);
        });
        Vec::new()
    }

    /// Records a choice carried out: the session's `Choice` record and the next turn's note.
    pub(super) fn chosen(&mut self, outcome: ChoiceOutcome) -> Vec<EngineMsg> {
        let ChoiceOutcome { done, written } = outcome;
        self.recorder.record(&SessionRecord::Choice {
            turn: done.turn,
            chosen: done.chosen.clone(),
            apply_id: done.apply_id.clone(),
        });
        self.applies.insert(done.turn, done.apply_id.clone());
        self.next_note = Some(NoteInputs {
            chosen: done.chosen.clone(),
            applied: written,
            own: HashMap::new(),
        });
        vec![EngineMsg::Chosen(done)]
    }
}
