//! The engine's phase as a pure state machine: what it is doing, and which submissions it
//! accepts there.
//!
//! Kept apart from the IO (workspaces, the log, the blocking jobs) so every transition can be
//! tested by feeding it scripted steps: no workspace, no clock, no front end. The engine task
//! ([`super::handle`]) asks the machine before it acts on a submission, and tells it each thing
//! that happened (a capture done, a model finished, a change set built, a job ended); when the
//! machine refuses, the engine answers with the machine's error and does nothing.

use std::collections::BTreeSet;

use super::EngineError;

/// What the engine is doing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Phase {
    /// No turn under review (a new session, or a reopened one without an unchosen turn).
    Idle,
    /// A turn is recorded; its project capture and the models' start are under way.
    Starting {
        /// The turn.
        turn: u32,
        /// Its models.
        models: usize,
    },
    /// Models of the turn are running, or their change sets are being built.
    Running {
        /// The turn.
        turn: u32,
        /// Entries whose model has not ended yet.
        waiting: BTreeSet<usize>,
        /// Entries whose model ended and whose change set is being built.
        building: BTreeSet<usize>,
    },
    /// Every model of the turn ended and every change set is built: a choice can be made.
    Reviewing {
        /// The turn.
        turn: u32,
    },
    /// A choice of the turn under review is being carried out (files written).
    Applying {
        /// The turn.
        turn: u32,
    },
    /// A rewind is being carried out (files restored); then back to `after`.
    Rewinding {
        /// The turn under review before the rewind (`None`: none).
        after: Option<u32>,
    },
    /// The session ended: nothing is accepted any more.
    Closed,
}

/// What happened, as the machine sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// A turn of `models` models was asked for and recorded as turn `turn`.
    StartTurn {
        /// The turn number given.
        turn: u32,
        /// How many models.
        models: usize,
    },
    /// The project was captured and every model started.
    Launched,
    /// The capture failed: no model started.
    LaunchFailed,
    /// A model ended.
    ModelFinished {
        /// Its entry.
        entry: usize,
    },
    /// A finished model's change set was built (or could not be).
    ChangeSetBuilt {
        /// Its entry.
        entry: usize,
    },
    /// A reopened session's unchosen turn came back: its change sets are rebuilt for the
    /// entries that finished before the process ended (the others never run again in it).
    Restored {
        /// The turn.
        turn: u32,
        /// The entries that finished.
        finished: BTreeSet<usize>,
    },
    /// A new turn is asked for while a reopened session's turn `turn` still has change sets
    /// being rebuilt from its records (no model of it runs, no workspace is read): the new
    /// turn supersedes it, so `versus ask --continue` does not wait for a review it never
    /// shows. Refused when a model of `turn` still runs.
    RestoreSuperseded {
        /// The restored turn.
        turn: u32,
    },
    /// A choice of turn `turn` is asked for.
    Choose {
        /// The turn named.
        turn: u32,
    },
    /// The choice was carried out, or failed (nothing applied).
    ChoiceEnded,
    /// A rewind is asked for.
    Rewind,
    /// The rewind was carried out, or failed (nothing changed).
    RewindEnded,
    /// The session ends.
    Shutdown,
}

/// What a transition means beyond the new phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Moved {
    /// The turn's last model just ended (its `TurnEnded` record is due).
    pub all_finished: bool,
    /// The turn is ready for review: every model ended, every change set built.
    pub ready: bool,
}

impl Phase {
    /// The turn under review or running, if any.
    pub fn turn(&self) -> Option<u32> {
        match self {
            Phase::Starting { turn, .. }
            | Phase::Running { turn, .. }
            | Phase::Reviewing { turn }
            | Phase::Applying { turn } => Some(*turn),
            Phase::Rewinding { after } => *after,
            Phase::Idle | Phase::Closed => None,
        }
    }

    /// Whether models of a turn may still be running.
    pub fn busy(&self) -> bool {
        matches!(self, Phase::Starting { .. } | Phase::Running { .. })
    }

    /// The phase after `step`, and what the move means; an error leaves the phase as it was
    /// and says why the step is refused there.
    pub fn next(&self, step: Step) -> Result<(Phase, Moved), EngineError> {
        let stay = |phase: &Phase| Ok((phase.clone(), Moved::default()));
        match (self, step) {
            (Phase::Closed, _) => Err(EngineError::Closed),
            (_, Step::Shutdown) => Ok((Phase::Closed, Moved::default())),
            (Phase::Idle | Phase::Reviewing { .. }, Step::StartTurn { turn, models }) => {
                if models == 0 {
                    return Err(EngineError::NoModels);
                }
                Ok((Phase::Starting { turn, models }, Moved::default()))
            }
            (Phase::Idle | Phase::Reviewing { .. }, Step::Restored { turn, finished }) => {
                if finished.is_empty() {
                    return Ok((Phase::Reviewing { turn }, Moved::default()));
                }
                let running = Phase::Running {
                    turn,
                    waiting: BTreeSet::new(),
                    building: finished,
                };
                Ok((running, Moved::default()))
            }
            (_, Step::StartTurn { .. } | Step::Restored { .. }) => Err(EngineError::Busy),
            (Phase::Running { turn, waiting, .. }, Step::RestoreSuperseded { turn: named })
                if *turn == named && waiting.is_empty() =>
            {
                Ok((Phase::Reviewing { turn: named }, Moved::default()))
            }
            (_, Step::RestoreSuperseded { .. }) => stay(self),
            (Phase::Starting { turn, models }, Step::Launched) => Ok((
                Phase::Running {
                    turn: *turn,
                    waiting: (0..*models).collect(),
                    building: BTreeSet::new(),
                },
                Moved::default(),
            )),
            (Phase::Starting { .. }, Step::LaunchFailed) => Ok((Phase::Idle, Moved::default())),
            (
                Phase::Running {
                    turn,
                    waiting,
                    building,
                },
                step @ (Step::ModelFinished { .. } | Step::ChangeSetBuilt { .. }),
            ) => {
                let mut waiting = waiting.clone();
                let mut building = building.clone();
                let mut moved = Moved::default();
                match step {
                    Step::ModelFinished { entry } if waiting.remove(&entry) => {
                        building.insert(entry);
                        moved.all_finished = waiting.is_empty();
                    }
                    // Only a finished model has a change set to build.
                    Step::ChangeSetBuilt { entry } if building.remove(&entry) => {}
                    _ => return stay(self),
                }
                if waiting.is_empty() && building.is_empty() {
                    moved.ready = true;
                    return Ok((Phase::Reviewing { turn: *turn }, moved));
                }
                Ok((
                    Phase::Running {
                        turn: *turn,
                        waiting,
                        building,
                    },
                    moved,
                ))
            }
            // Events of a turn no longer running (late, or of an older turn): nothing moves.
            (_, Step::Launched | Step::LaunchFailed)
            | (_, Step::ModelFinished { .. } | Step::ChangeSetBuilt { .. }) => stay(self),
            (Phase::Reviewing { turn }, Step::Choose { turn: named }) => {
                if named != *turn {
                    return Err(EngineError::NotUnderReview(named));
                }
                Ok((Phase::Applying { turn: *turn }, Moved::default()))
            }
            (Phase::Applying { turn }, Step::ChoiceEnded) => {
                Ok((Phase::Reviewing { turn: *turn }, Moved::default()))
            }
            (Phase::Starting { .. } | Phase::Running { .. }, Step::Choose { turn })
            | (Phase::Idle | Phase::Rewinding { .. }, Step::Choose { turn }) => {
                Err(EngineError::NotUnderReview(turn))
            }
            (Phase::Applying { .. }, Step::Choose { .. }) => Err(EngineError::Busy),
            (_, Step::ChoiceEnded) => stay(self),
            (Phase::Idle, Step::Rewind) => Ok((Phase::Rewinding { after: None }, Moved::default())),
            (Phase::Reviewing { turn }, Step::Rewind) => {
                Ok((Phase::Rewinding { after: Some(*turn) }, Moved::default()))
            }
            (_, Step::Rewind) => Err(EngineError::Busy),
            (Phase::Rewinding { after }, Step::RewindEnded) => Ok((
                match after {
                    Some(turn) => Phase::Reviewing { turn: *turn },
                    None => Phase::Idle,
                },
                Moved::default(),
            )),
            (_, Step::RewindEnded) => stay(self),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Plays `steps` from `phase`; each step's result (the new phase, or the refusal as text).
    fn play(mut phase: Phase, steps: &[Step]) -> (Phase, Vec<Result<Moved, String>>) {
        let mut out = Vec::new();
        for step in steps {
            match phase.next(step.clone()) {
                Ok((next, moved)) => {
                    phase = next;
                    out.push(Ok(moved));
                }
                Err(e) => out.push(Err(e.to_string())),
            }
        }
        (phase, out)
    }

    const NONE: Moved = Moved {
        all_finished: false,
        ready: false,
    };

    #[test]
    fn a_turn_walks_from_idle_to_review_once_every_model_ended_and_every_set_is_built() {
        let (phase, moved) = play(
            Phase::Idle,
            &[
                Step::StartTurn { turn: 1, models: 2 },
                Step::Launched,
                Step::ModelFinished { entry: 1 },
                Step::ChangeSetBuilt { entry: 1 },
                Step::ModelFinished { entry: 0 },
            ],
        );
        assert_eq!(
            moved,
            [
                Ok(NONE),
                Ok(NONE),
                Ok(NONE),
                Ok(NONE),
                Ok(Moved {
                    all_finished: true,
                    ready: false
                })
            ]
        );
        assert!(phase.busy(), "a change set is still being built: {phase:?}");
        let (phase, moved) = play(phase, &[Step::ChangeSetBuilt { entry: 0 }]);
        assert_eq!(
            moved,
            [Ok(Moved {
                all_finished: false,
                ready: true
            })]
        );
        assert_eq!(phase, Phase::Reviewing { turn: 1 });
    }

    #[test]
    fn a_new_turn_supersedes_a_restored_turn_whose_change_sets_are_still_rebuilt() {
        let (phase, moved) = play(
            Phase::Idle,
            &[
                Step::Restored {
                    turn: 4,
                    finished: BTreeSet::from([0, 1]),
                },
                Step::ChangeSetBuilt { entry: 0 },
                Step::RestoreSuperseded { turn: 4 },
                Step::StartTurn { turn: 5, models: 1 },
                // The late change set of the restored turn moves nothing.
                Step::ChangeSetBuilt { entry: 1 },
            ],
        );
        assert!(moved.iter().all(Result::is_ok), "{moved:?}");
        assert_eq!(phase, Phase::Starting { turn: 5, models: 1 });
        // A turn whose model still runs is not superseded.
        let running = Phase::Running {
            turn: 4,
            waiting: BTreeSet::from([1]),
            building: BTreeSet::new(),
        };
        let (phase, moved) = play(
            running.clone(),
            &[
                Step::RestoreSuperseded { turn: 4 },
                Step::StartTurn { turn: 5, models: 1 },
            ],
        );
        assert_eq!(phase, running);
        assert!(moved[1].is_err(), "{moved:?}");
    }

    #[test]
    fn a_busy_engine_refuses_a_new_turn_a_choice_and_a_rewind() {
        let running = Phase::Running {
            turn: 3,
            waiting: BTreeSet::from([0]),
            building: BTreeSet::new(),
        };
        for phase in [Phase::Starting { turn: 3, models: 1 }, running] {
            let (after, results) = play(
                phase.clone(),
                &[
                    Step::StartTurn { turn: 4, models: 1 },
                    Step::Rewind,
                    Step::Choose { turn: 3 },
                ],
            );
            assert_eq!(after, phase, "nothing moved");
            assert!(results[0].as_ref().unwrap_err().contains("still running"));
            assert!(results[1].as_ref().unwrap_err().contains("still running"));
            assert!(results[2].as_ref().unwrap_err().contains("turn 3"));
        }
    }

    #[test]
    fn a_choice_names_the_turn_under_review_and_returns_to_it() {
        let review = Phase::Reviewing { turn: 2 };
        let (_, results) = play(review.clone(), &[Step::Choose { turn: 1 }]);
        assert!(
            results[0]
                .as_ref()
                .unwrap_err()
                .contains("turn 1 is no longer")
        );
        let (phase, _) = play(review.clone(), &[Step::Choose { turn: 2 }]);
        assert_eq!(phase, Phase::Applying { turn: 2 });
        let (_, results) = play(
            phase.clone(),
            &[
                Step::Choose { turn: 2 },
                Step::Rewind,
                Step::StartTurn { turn: 3, models: 1 },
            ],
        );
        assert!(results.iter().all(Result::is_err), "{results:?}");
        let (phase, _) = play(phase, &[Step::ChoiceEnded]);
        assert_eq!(phase, review);
    }

    #[test]
    fn a_rewind_returns_to_where_it_started() {
        let (phase, _) = play(Phase::Idle, &[Step::Rewind]);
        assert_eq!(phase, Phase::Rewinding { after: None });
        let (_, results) = play(phase.clone(), &[Step::Rewind, Step::Choose { turn: 1 }]);
        assert!(results.iter().all(Result::is_err));
        let (phase, _) = play(phase, &[Step::RewindEnded]);
        assert_eq!(phase, Phase::Idle);
        let (phase, _) = play(
            Phase::Reviewing { turn: 5 },
            &[Step::Rewind, Step::RewindEnded],
        );
        assert_eq!(phase, Phase::Reviewing { turn: 5 });
    }

    #[test]
    fn a_failed_capture_goes_back_to_idle_and_late_events_move_nothing() {
        let (phase, _) = play(
            Phase::Idle,
            &[Step::StartTurn { turn: 1, models: 1 }, Step::LaunchFailed],
        );
        assert_eq!(phase, Phase::Idle);
        let review = Phase::Reviewing { turn: 1 };
        let (phase, results) = play(
            review.clone(),
            &[
                Step::ModelFinished { entry: 0 },
                Step::ChangeSetBuilt { entry: 0 },
                Step::Launched,
                Step::ChoiceEnded,
                Step::RewindEnded,
            ],
        );
        assert_eq!(phase, review);
        assert!(results.iter().all(|r| r == &Ok(NONE)), "{results:?}");
    }

    #[test]
    fn a_model_counts_once_and_a_set_only_after_its_model_ended() {
        let (phase, moved) = play(
            Phase::Idle,
            &[
                Step::StartTurn { turn: 1, models: 2 },
                Step::Launched,
                Step::ChangeSetBuilt { entry: 0 },
                Step::ModelFinished { entry: 0 },
                Step::ModelFinished { entry: 0 },
                Step::ModelFinished { entry: 7 },
                Step::ChangeSetBuilt { entry: 0 },
                Step::ModelFinished { entry: 1 },
                Step::ChangeSetBuilt { entry: 1 },
            ],
        );
        let flags: Vec<(bool, bool)> = moved
            .into_iter()
            .map(|m| {
                let m = m.unwrap();
                (m.all_finished, m.ready)
            })
            .collect();
        assert_eq!(
            flags,
            [
                (false, false),
                (false, false),
                (false, false),
                (false, false),
                (false, false),
                (false, false),
                (false, false),
                (true, false),
                (false, true)
            ]
        );
        assert_eq!(phase, Phase::Reviewing { turn: 1 });
    }

    #[test]
    fn a_restored_turn_is_reviewed_once_its_sets_are_rebuilt() {
        let (phase, moved) = play(
            Phase::Idle,
            &[
                Step::Restored {
                    turn: 4,
                    finished: BTreeSet::from([0]),
                },
                Step::ChangeSetBuilt { entry: 0 },
            ],
        );
        assert_eq!(phase, Phase::Reviewing { turn: 4 });
        assert!(moved[1].as_ref().unwrap().ready);
    }

    #[test]
    fn shutdown_closes_from_anywhere_and_then_everything_is_refused() {
        for phase in [
            Phase::Idle,
            Phase::Starting { turn: 1, models: 1 },
            Phase::Reviewing { turn: 1 },
            Phase::Applying { turn: 1 },
        ] {
            let (closed, _) = play(phase, &[Step::Shutdown]);
            assert_eq!(closed, Phase::Closed);
        }
        let (_, results) = play(
            Phase::Closed,
            &[
                Step::StartTurn { turn: 1, models: 1 },
                Step::Shutdown,
                Step::Rewind,
            ],
        );
        assert!(results.iter().all(Result::is_err));
    }

    #[test]
    fn a_turn_without_models_is_refused() {
        let (phase, results) = play(Phase::Idle, &[Step::StartTurn { turn: 1, models: 0 }]);
        assert_eq!(phase, Phase::Idle);
        assert!(results[0].is_err());
    }
}
