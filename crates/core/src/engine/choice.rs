//! The choice: apply what was picked through the apply engine (snapshots and journal in the
//! session folder, so a rewind undoes it), the preference line, the `Choice` record and the
//! next turn's note. A model that answered in text only can be chosen too: its answer wins,
//! nothing is written.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use super::{EngineError, NoteInputs, SessionEngine};
use crate::apply::{AppliedAs, ApplyEngine, ApplyPlan, LockWait, Resolution};
use crate::model::{RunStats, RunStop};
use crate::session::{ModelRecord, Preference, Rating, SessionRecord, append_preference, now};

/// What the user chose for a turn.
#[derive(Debug, Clone, Default)]
pub struct ChoiceRequest {
    /// The turn.
    pub turn: u32,
    /// Models chosen without anything to apply (their answer was the best; text-only
    /// winners). The plan's models are chosen too.
    pub chosen: Vec<String>,
    /// What to write (`None`: nothing).
    pub plan: Option<ApplyPlan>,
    /// Per-path resolution of conflicts the user decided.
    pub resolutions: BTreeMap<String, Resolution>,
    /// Every conflict not in `resolutions` resolved this way (`versus ask --on-conflict`).
    pub resolve_rest: Option<Resolution>,
    /// Ratings by model.
    pub ratings: BTreeMap<String, Rating>,
    /// Whether to wait for another versus that holds the project's lock.
    pub lock_wait: LockWait,
}

/// A choice ready to be carried out: [`ChoiceJob::run`] blocks (it writes the user's files).
pub struct ChoiceJob {
    store: crate::session::Store,
    project: PathBuf,
    session_dir: PathBuf,
    preferences: PathBuf,
    turn: u32,
    chosen: Vec<String>,
    plan: Option<ApplyPlan>,
    resolutions: BTreeMap<String, Resolution>,
    resolve_rest: Option<Resolution>,
    ratings: BTreeMap<String, Rating>,
    lock_wait: LockWait,
    preference: Preference,
}

/// What carrying out a choice did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChoiceOutcome {
    /// The turn.
    pub turn: u32,
    /// Models chosen (empty: none of them).
    pub chosen: Vec<String>,
    /// Ratings given.
    pub ratings: BTreeMap<String, Rating>,
    /// The apply's journal id (`None`: nothing written).
    pub apply_id: Option<String>,
    /// What happened to each planned path.
    pub files: Vec<(String, AppliedAs)>,
    /// Why each refused path was refused, by relative path.
    pub refused: BTreeMap<String, String>,
    /// Paths whose content changed on disk.
    pub written: Vec<String>,
    /// The preference line could not be written (the choice still stands).
    pub preference_error: Option<String>,
}

impl ChoiceJob {
    /// Applies the plan, then appends the preference line. An error means nothing was
    /// applied and nothing recorded (`ApplyError::Busy`: another versus holds the project;
    /// [`EngineError::ApplyInterrupted`]: an apply of the project must be rolled back first).
    pub fn run(self) -> Result<ChoiceOutcome, EngineError> {
        let mut outcome = ChoiceOutcome {
            turn: self.turn,
            chosen: self.chosen,
            ratings: self.ratings,
            apply_id: None,
            files: Vec::new(),
            refused: BTreeMap::new(),
            written: Vec::new(),
            preference_error: None,
        };
        if let Some(plan) = &self.plan {
            super::startup::refuse_if_interrupted(&self.store)?;
            let engine =
                ApplyEngine::new(&self.project, &self.session_dir)?.lock_wait(self.lock_wait);
            // Each path is decided once, by the apply itself: conflicts the front end did
            // not answer take `resolve_rest` (`versus ask --on-conflict`), refused paths come
            // back with their reasons. (A front end that asks per conflict, the TUI, previewed
            // before and passes its answers.)
            let report = engine.apply_resolving(plan, &self.resolutions, self.resolve_rest)?;
            outcome.refused = report.refused.clone();
            outcome.written = report.written().into_iter().map(str::to_string).collect();
            outcome.apply_id = report.apply_id;
            outcome.files = report
                .files
                .into_iter()
                .map(|f| (f.path, f.applied_as))
                .collect();
        }
        if let Err(e) = append_preference(&self.preferences, &self.preference) {
            outcome.preference_error = Some(format!(
                "the choice was made but not logged to {}: {e}",
                self.preferences.display()
            ));
        }
        Ok(outcome)
    }
}

impl SessionEngine {
    /// Prepares the choice for the turn under review.
    pub(super) fn choice_job(&self, request: ChoiceRequest) -> Result<ChoiceJob, EngineError> {
        let state = self
            .turn
            .as_ref()
            .filter(|t| t.turn == request.turn && !t.running())
            .ok_or(EngineError::NotUnderReview(request.turn))?;
        let labels: Vec<&str> = state.slots.iter().map(|s| s.label.as_str()).collect();
        let mut chosen = request.chosen.clone();
        if let Some(plan) = &request.plan {
            for model in &plan.models {
                if !chosen.contains(model) {
                    chosen.push(model.clone());
                }
            }
        }
        for model in chosen.iter().chain(request.ratings.keys()) {
            if !labels.contains(&model.as_str()) {
                return Err(EngineError::UnknownModel {
                    model: model.clone(),
                    turn: state.turn,
                    known: labels.join(", "),
                });
            }
        }
        let preference = Preference {
            time: now().rfc3339(),
            session: self.id.clone(),
            turn: state.turn,
            prompt_hash: blake3::hash(state.prompt.as_bytes()).to_hex().to_string(),
            models: state
                .slots
                .iter()
                .map(|slot| {
                    let (stop, stats) = slot
                        .finished
                        .as_ref()
                        .map(|f| (f.stop, f.stats.clone()))
                        .unwrap_or((RunStop::Error, RunStats::default()));
                    ModelRecord {
                        model: slot.label.clone(),
                        status: stop,
                        cost: stats.cost,
                        usage: stats.usage,
                        latency_ms: stats.elapsed_ms,
                        files: slot.files.unwrap_or(0),
                    }
                })
                .collect(),
            chosen: chosen.clone(),
            ratings: request.ratings.clone(),
            // The engine's own state: hidden names make a blind choice; once revealed (the
            // user asked), later choices are not blind.
            blind: self.blind(),
            source: self.source,
        };
        Ok(ChoiceJob {
            store: self.store.clone(),
            project: self.project.clone(),
            session_dir: self.dir.clone(),
            preferences: self.store.preferences(),
            turn: state.turn,
            chosen,
            plan: request.plan,
            resolutions: request.resolutions,
            resolve_rest: request.resolve_rest,
            ratings: request.ratings,
            lock_wait: request.lock_wait,
            preference,
        })
    }

    /// Records a choice carried out: the `Choice` record and the next turn's note.
    pub(super) fn chosen(&mut self, outcome: &ChoiceOutcome) {
        // The choice ends the blind review: the session's end may reveal the names now, also
        // for one opened only to pick.
        self.reveal_at_end = true;
        self.recorder.record(&SessionRecord::Choice {
            turn: outcome.turn,
            chosen: outcome.chosen.clone(),
            apply_id: outcome.apply_id.clone(),
            ratings: outcome.ratings.clone(),
            applied: outcome.written.clone(),
        });
        self.applies.insert(outcome.turn, outcome.apply_id.clone());
        self.next_note = Some(NoteInputs {
            chosen: outcome.chosen.clone(),
            applied: outcome.written.clone(),
            own: HashMap::new(),
        });
    }
}
