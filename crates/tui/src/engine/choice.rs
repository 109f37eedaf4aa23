//! The review half of the driver: the apply preview and the choice, submitted to the session
//! engine, which carries them out exactly as for `versus ask --pick` (apply, preference line,
//! `Choice` record, next-turn note) and reports back.

use versus_core::apply::ApplyPlan;
use versus_core::engine::{ChoiceOutcome, ChoiceRequest as EngineChoice, EngineError, Op};

use super::super::action::{ChoiceDone, ChoiceRequest, EngineMsg};
use super::Engine;

impl Engine {
    /// Asks the engine what applying `plan` would do (answered by `ApplyPreview`).
    pub(super) fn preview(&mut self, turn: u32, plan: ApplyPlan) -> Vec<EngineMsg> {
        self.send(Op::PreviewApply { turn, plan })
    }

    /// Submits a choice; the engine answers with `Chosen`, or why nothing was applied.
    pub(super) fn choose(&mut self, request: ChoiceRequest) -> Vec<EngineMsg> {
        self.send(Op::Choose(EngineChoice {
            turn: request.turn,
            chosen: request.chosen,
            plan: request.plan,
            resolutions: request.resolutions,
            resolve_rest: None,
            ratings: request.ratings,
            lock_wait: Default::default(),
        }))
    }

    /// A preview or a choice failed: nothing was applied.
    pub(super) fn choice_failed(&mut self, error: EngineError) -> Vec<EngineMsg> {
        let error = match error {
            // Refused before anything ran: the reason alone.
            e @ (EngineError::NotUnderReview(_)
            | EngineError::UnknownModel { .. }
            | EngineError::Busy
            | EngineError::Closed) => e.to_string(),
            e => format!("nothing was applied: {e}"),
        };
        vec![EngineMsg::ChoiceFailed { error }]
    }

    /// A choice carried out (recorded by the engine).
    pub(super) fn chosen(&mut self, outcome: ChoiceOutcome) -> Vec<EngineMsg> {
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
