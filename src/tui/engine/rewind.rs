//! `/rewind` from the interface: the session engine works out the plan and carries it out off
//! the loop's thread, then records it (conversations rebuilt, the choice marked rewound).

use crate::engine::{RewindDone, RewindPlan, RewindScope};

use super::super::action::EngineMsg;
use super::{Engine, LoopMsg};

impl Engine {
    /// Works out what `/rewind` would do and sends the plan (journal reads: off the thread).
    pub(super) fn plan_rewind(&mut self, scope: RewindScope) -> Vec<EngineMsg> {
        let job = match self.core.plan_rewind(scope) {
            Ok(job) => job,
            Err(nothing) => return vec![EngineMsg::Info(nothing.to_string())],
        };
        let tx = self.tx.clone();
        tokio::task::spawn_blocking(move || {
            let msg = match job.run() {
                Ok(plan) => EngineMsg::RewindPlanned(plan),
                Err(nothing @ crate::engine::EngineError::NothingToRewind(_)) => {
                    EngineMsg::Info(nothing.to_string())
                }
                Err(error) => EngineMsg::Error(error.to_string()),
            };
            let _ = tx.send(LoopMsg::App(msg));
        });
        Vec::new()
    }

    /// Carries out a confirmed rewind: the files first (off the thread), then
    /// [`Engine::rewound`] records it.
    pub(super) fn rewind(&mut self, plan: RewindPlan, force: bool) -> Vec<EngineMsg> {
        let job = match self.core.rewind_job(plan, force) {
            Ok(job) => job,
            Err(_) => {
                return vec![EngineMsg::Error(
                    "models are running: wait for them before rewinding".to_string(),
                )];
            }
        };
        let tx = self.tx.clone();
        tokio::task::spawn_blocking(move || {
            let msg = match job.run() {
                Ok(done) => LoopMsg::Rewound(done),
                Err(error) => LoopMsg::App(EngineMsg::Error(error.to_string())),
            };
            let _ = tx.send(msg);
        });
        Vec::new()
    }

    /// Records the rewind in the session engine and tells the app.
    pub(super) fn rewound(&mut self, done: RewindDone) -> Vec<EngineMsg> {
        self.core.rewound(&done);
        vec![EngineMsg::Rewound(done)]
    }
}
