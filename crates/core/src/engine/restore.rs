//! Crash-continue: a session reopened after its process was killed (or quit before the
//! choice) gets its last turn back for review. Each finished model's change set is rebuilt
//! from its recorded proposals against the base entries recorded with them, so it can be
//! reviewed, applied and rewound like a live one; models that never finished are named, so a
//! front end offers to run only them again.

use std::collections::BTreeMap;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::SessionEngine;
use super::turn::{FinishedModel, Slot, TurnState};
use crate::model::{RunStats, RunStop};
use crate::session::{CheckResult, SessionLog, SessionRecord};
use crate::workspace::Base;

/// The last turn of a reopened session, brought back for review.
#[derive(Debug, Clone, PartialEq)]
pub struct RestoredTurn {
    /// The turn.
    pub turn: u32,
    /// Its prompt.
    pub prompt: String,
    /// Models that finished, with what they proposed (their change sets can be rebuilt).
    pub finished: Vec<FinishedModel>,
    /// Models that never finished (the process ended first): the ones to run again.
    pub unfinished: Vec<String>,
    /// The review check of each finished model that had one, by label (the latest recorded).
    pub checks: BTreeMap<String, CheckResult>,
}

impl SessionEngine {
    /// Opens the session only to undo an apply (`versus rewind`): the unchosen turn of a
    /// reopened session is left alone (its change sets are not rebuilt; the log still has it,
    /// the next `--continue` brings it back), and blind mode's names stay hidden at the end
    /// (the user's blind review has not ended).
    pub fn rewind_only(mut self) -> Self {
        if self.turn.as_ref().is_some_and(|t| t.restored) {
            self.turn = None;
        }
        self.reveal_at_end = false;
        self
    }

    /// Opens the session only to choose in its unchosen turn (`versus pick`): blind mode's
    /// names stay hidden at the end unless a choice was made (a pick refused before it, a
    /// wrong name, says nothing of who was who).
    pub fn pick_only(mut self) -> Self {
        self.reveal_at_end = false;
        self
    }

    /// Brings back the last turn when it has no choice yet and is not rewound.
    pub(super) fn restore_interrupted(&mut self, log: &SessionLog) -> Option<RestoredTurn> {
        let turn = log.records.iter().rev().find_map(|r| match r {
            SessionRecord::Turn { turn, .. } => Some(*turn),
            _ => None,
        })?;
        let mut prompt = String::new();
        let mut labels: Vec<String> = Vec::new();
        let mut finished: BTreeMap<usize, FinishedModel> = BTreeMap::new();
        let mut proposals = BTreeMap::new();
        let mut base = BTreeMap::new();
        let mut checks = BTreeMap::new();
        let mut modes: BTreeMap<usize, BTreeMap<String, u32>> = BTreeMap::new();
        for record in log.records.iter().filter(|r| r.turn() == turn) {
            match record {
                SessionRecord::Turn {
                    prompt: p, models, ..
                } => {
                    prompt = p.clone();
                    labels = models.clone();
                }
                SessionRecord::Choice { .. } | SessionRecord::Rewound { .. } => return None,
                SessionRecord::Check { model, result, .. } => {
                    checks.insert(model.clone(), result.clone());
                }
                SessionRecord::Proposals {
                    entry,
                    writes,
                    base: entries,
                    modes: recorded,
                    ..
                } => {
                    proposals.insert(*entry, writes.clone());
                    modes.insert(*entry, recorded.clone());
                    for (path, entry) in entries {
                        if let Some(entry) = entry {
                            base.insert(path.clone(), entry.clone());
                        }
                    }
                }
                SessionRecord::Finished {
                    entry,
                    model,
                    stop,
                    stats,
                    writes,
                    error,
                    final_text,
                    ..
                } => {
                    let files = proposals
                        .get(entry)
                        .map(|w: &Vec<crate::workspace::FileWrite>| super::record::touched(w))
                        .unwrap_or_default();
                    finished.insert(
                        *entry,
                        FinishedModel {
                            entry: *entry,
                            label: model.clone(),
                            stop: stop.unwrap_or(RunStop::Error),
                            stats: stats.clone().unwrap_or_else(RunStats::default),
                            error: error.clone(),
                            final_text: final_text.clone(),
                            writes: *writes,
                            files,
                            deleted: proposals
                                .get(entry)
                                .map(|w| crate::workspace::FileWrite::deleted_paths(w))
                                .unwrap_or_default(),
                            notes: Vec::new(),
                            scan_notes: Vec::new(),
                        },
                    );
                }
                _ => {}
            }
        }
        if finished.is_empty() {
            return None;
        }
        let mut slots = Vec::new();
        let mut unfinished = Vec::new();
        for (entry, label) in labels.iter().enumerate() {
            let done = finished.get(&entry).cloned();
            // A model that finished with proposals but whose proposals were not recorded
            // (a version 1 log) cannot be reviewed: it is offered to run again.
            let reviewable = done
                .as_ref()
                .is_some_and(|f| f.writes == 0 || proposals.contains_key(&entry));
            if !reviewable {
                unfinished.push(label.clone());
            }
            if let Some(done) = &done {
                self.last_files.insert(label.clone(), done.files.clone());
            }
            slots.push(Slot {
                label: label.clone(),
                finished: done.filter(|_| reviewable),
                writes: proposals.remove(&entry).unwrap_or_default(),
                modes: modes.remove(&entry).unwrap_or_default(),
                result: None,
                files: None,
                cancel: CancellationToken::new(),
            });
        }
        // Only the checks of models brought back for review (a model run again gets its own).
        checks.retain(|label, _| {
            slots
                .iter()
                .any(|s| &s.label == label && s.finished.is_some())
        });
        let restored = RestoredTurn {
            turn,
            prompt: prompt.clone(),
            finished: slots.iter().filter_map(|s| s.finished.clone()).collect(),
            unfinished,
            checks,
        };
        self.turn = Some(TurnState {
            turn,
            // Never used to trust a file: a reopened turn keeps no base content.
            started: std::time::SystemTime::UNIX_EPOCH,
            prompt,
            // Base content git does not hold was kept in the session's blobs when the turn ran.
            base: Some(Arc::new(
                Base::from_entries(self.project.clone(), base)
                    .with_content_from(self.dir.join(crate::session::BLOBS_DIR)),
            )),
            slots,
            all: CancellationToken::new(),
            restored: true,
            interrupted: false,
            check: None,
            sandbox: crate::exec::SandboxSettings::default(),
            keep: false,
            ledger: None,
        });
        Some(restored)
    }
}
