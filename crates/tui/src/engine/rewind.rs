//! `/rewind` from the interface: the session engine works out the plan and carries it out
//! (files on its blocking pool, then the conversations rebuilt and the choice marked rewound).

use versus_core::engine::{EngineError, Op, RewindPlan, RewindScope};

use super::super::action::EngineMsg;
use super::Engine;

impl Engine {
    /// Asks what `/rewind` would do (answered by `RewindPlanned`).
    pub(super) fn plan_rewind(&mut self, scope: RewindScope) -> Vec<EngineMsg> {
        self.send(Op::PlanRewind { scope })
    }

    /// Submits a confirmed rewind (answered by `Rewound`).
    pub(super) fn rewind(&mut self, plan: RewindPlan, force: bool) -> Vec<EngineMsg> {
        self.send(Op::Rewind { plan, force })
    }

    /// A rewind could not be planned or carried out: nothing changed.
    pub(super) fn rewind_failed(&mut self, error: EngineError) -> Vec<EngineMsg> {
        vec![match error {
            e @ EngineError::NothingToRewind(_) => EngineMsg::Info(e.to_string()),
            EngineError::Busy => {
                EngineMsg::Error("models are running: wait for them before rewinding".to_string())
            }
            e => EngineMsg::Error(e.to_string()),
        }]
    }
}
