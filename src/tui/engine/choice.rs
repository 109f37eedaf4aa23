//! The review half of the driver: the apply preview, and the choice carried out by the session
//! engine exactly as `versus ask --pick` does it (apply, preference line, `Choice` record,
//! next-turn note), off the loop's thread.

use crate::apply::{ApplyEngine, ApplyPlan};
use crate::engine::{ChoiceOutcome, ChoiceRequest as EngineChoice};

use super::super::action::{ChoiceDone, ChoiceRequest, EngineMsg};
use super::{Engine, LoopMsg};

impl Engine {
    /// Previews the apply of `plan` (reads the user's files: off the loop's thread).
    pub(super) fn preview(&mut self, turn: u32, plan: ApplyPlan) -> Vec<EngineMsg> {
        let (project, session) = (self.project.clone(), self.core.dir().to_path_buf());
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

    /// Carries out a choice off the loop's thread; [`Engine::chosen`] records it.
    pub(super) fn choose(&mut self, request: ChoiceRequest) -> Vec<EngineMsg> {
        self.checks.cancel();
        let job = match self.core.choice_job(EngineChoice {
            turn: request.turn,
            chosen: request.chosen,
            plan: request.plan,
            resolutions: request.resolutions,
            resolve_rest: None,
            ratings: request.ratings,
            lock_wait: Default::default(),
        }) {
            Ok(job) => job,
            Err(e) => {
                return vec![EngineMsg::ChoiceFailed {
                    error: e.to_string(),
                }];
            }
        };
        let tx = self.tx.clone();
        tokio::task::spawn_blocking(move || {
            let msg = match job.run() {
                Ok(outcome) => LoopMsg::Chosen(outcome),
                Err(e) => LoopMsg::App(EngineMsg::ChoiceFailed {
                    error: format!("nothing was applied: {e}"),
                }),
            };
            let _ = tx.send(msg);
        });
        Vec::new()
    }

    /// Records a choice carried out.
    pub(super) fn chosen(&mut self, outcome: ChoiceOutcome) -> Vec<EngineMsg> {
        self.core.chosen(&outcome);
        let mut out = Vec::new();
        if let Some(error) = &outcome.preference_error {
            out.push(EngineMsg::Error(error.clone()));
        }
        out.push(EngineMsg::Chosen(ChoiceDone {
            turn: outcome.turn,
            chosen: outcome.chosen,
            apply_id: outcome.apply_id,
            files: outcome.files,
        }));
        out
    }
}
