//! Rewind: undo the latest turn still in effect, one turn per call: its applied files through
//! the apply engine (the journal and snapshots in the session folder, the same ones
//! `versus rewind` reads), its place in every conversation, or both. A rewound choice is
//! marked in the session log and in `preferences.jsonl`, so statistics leave it out.

use std::path::{Path, PathBuf};

use super::{EngineError, NoteInputs, SessionEngine};
use crate::apply::{ApplyEngine, RewindPreview, journal};
use crate::session::{RewindScope, SessionLog, SessionRecord, mark_rewound, now};

/// What a rewind will do, shown before asking.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RewindPlan {
    /// The scope asked for.
    pub scope: RewindScope,
    /// The turn undone (`None`: a files-only rewind of an apply no turn of this session names).
    pub turn: Option<u32>,
    /// That turn's prompt (put back in the prompt box when the conversation is rewound).
    pub prompt: Option<String>,
    /// The files part (`None`: no file to restore).
    pub files: Option<RewindPreview>,
    /// Why the files are not part of it, when the scope asked for them.
    pub files_note: Option<String>,
}

/// What a rewind did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RewindDone {
    /// The scope carried out.
    pub scope: RewindScope,
    /// The turn undone.
    pub turn: Option<u32>,
    /// Its prompt.
    pub prompt: Option<String>,
    /// The apply undone, if files were restored.
    pub apply_id: Option<String>,
    /// Paths restored.
    pub restored: Vec<String>,
    /// Paths edited after the apply and left as they are.
    pub kept: Vec<String>,
}

/// Works out a rewind's plan (reads the journal: blocking).
pub struct RewindPlanJob {
    project: PathBuf,
    session: PathBuf,
    scope: RewindScope,
    turn: Option<u32>,
    prompt: Option<String>,
    apply: Option<Option<String>>,
    applies: Vec<(u32, Option<String>)>,
}

/// A confirmed rewind (restores files: blocking).
pub struct RewindJob {
    project: PathBuf,
    session: PathBuf,
    plan: RewindPlan,
    force: bool,
    lock: crate::apply::LockWait,
}

impl RewindPlanJob {
    /// The plan, or a sentence saying there is nothing to rewind.
    pub fn run(self) -> Result<RewindPlan, EngineError> {
        let (files, files_note) = files_part(&self.project, &self.session, self.scope, self.apply)?;
        let turn = match (self.scope, &files) {
            (RewindScope::Files, Some(preview)) => self
                .applies
                .iter()
                .find(|(_, id)| id.as_deref() == Some(preview.apply_id.as_str()))
                .map(|(t, _)| *t),
            _ => self.turn,
        };
        if self.scope == RewindScope::Files && files.is_none() {
            let never = self.applies.iter().all(|(_, id)| id.is_none());
            return Err(EngineError::NothingToRewind(files_note.unwrap_or_else(
                || {
                    if never {
                        "nothing was ever applied in this session".to_string()
                    } else {
                        "every change applied in this session is already undone".to_string()
                    }
                },
            )));
        }
        Ok(RewindPlan {
            scope: self.scope,
            turn,
            prompt: self.prompt,
            files,
            files_note,
        })
    }
}

impl RewindJob {
    /// Restores the files of the plan, if any (`force`: also files edited since the apply).
    /// An error means nothing changed, in the files or the conversations.
    pub fn run(self) -> Result<RewindDone, EngineError> {
        let mut done = RewindDone {
            scope: self.plan.scope,
            turn: self.plan.turn,
            prompt: self.plan.prompt.clone(),
            apply_id: None,
            restored: Vec::new(),
            kept: Vec::new(),
        };
        if let Some(files) = &self.plan.files {
            let lock = self.lock;
            let result = ApplyEngine::new(&self.project, &self.session).and_then(|engine| {
                let engine = engine.lock_wait(lock);
                let still = engine.rewind_preview()?;
                if still.as_ref().map(|p| &p.apply_id) != Some(&files.apply_id) {
                    return Ok(None);
                }
                engine.rewind(self.force).map(Some)
            });
            match result {
                Ok(Some(report)) => {
                    done.apply_id = Some(report.apply_id);
                    done.restored = report.restored;
                    done.kept = report.kept;
                }
                Ok(None) => return Err(EngineError::RewindMoved),
                Err(e) => return Err(EngineError::RewindFailed(e)),
            }
        }
        Ok(done)
    }
}

impl SessionEngine {
    /// The latest turn still in every conversation.
    fn latest_turn(&self) -> Option<u32> {
        self.prompts
            .keys()
            .rev()
            .find(|t| !self.rewound.contains(t))
            .copied()
    }

    /// Prepares the plan of a rewind with `scope`; `Err`: nothing to rewind (why).
    pub(super) fn plan_rewind(&self, scope: RewindScope) -> Result<RewindPlanJob, EngineError> {
        let (turn, prompt, apply) = if scope.conversation() {
            let Some(turn) = self.latest_turn() else {
                return Err(EngineError::NothingToRewind(
                    "this session has no turn left".to_string(),
                ));
            };
            (
                Some(turn),
                self.prompts.get(&turn).cloned(),
                self.applies.get(&turn).cloned(),
            )
        } else {
            (None, None, None)
        };
        Ok(RewindPlanJob {
            project: self.project.clone(),
            session: self.dir.clone(),
            scope,
            turn,
            prompt,
            apply,
            applies: self.applies.iter().map(|(t, a)| (*t, a.clone())).collect(),
        })
    }

    /// Prepares a confirmed rewind (refused while models run).
    pub(super) fn rewind_job(
        &self,
        plan: RewindPlan,
        force: bool,
    ) -> Result<RewindJob, EngineError> {
        if self.running() {
            return Err(EngineError::Busy);
        }
        Ok(RewindJob {
            project: self.project.clone(),
            session: self.dir.clone(),
            plan,
            force,
            lock: self.rewind_lock.clone(),
        })
    }

    /// Records a rewind carried out: the `Rewound` record, the mark in `preferences.jsonl`
    /// when the turn had a choice, the conversations rebuilt, and the next turn's note.
    pub(super) fn rewound(&mut self, done: &RewindDone) {
        let Some(turn) = done.turn else {
            // A files-only rewind of an apply no turn names: the models learn nothing applies.
            self.next_note = Some(NoteInputs::default());
            return;
        };
        let record = SessionRecord::Rewound {
            turn,
            scope: done.scope,
            apply_id: done.apply_id.clone(),
            restored: done.restored.clone(),
            kept: done.kept.clone(),
        };
        self.recorder.record(&record);
        if self.applies.contains_key(&turn)
            && let Err(e) = mark_rewound(&self.store.preferences(), &self.id, turn, now().rfc3339())
        {
            tracing::warn!(error = %e, "could not mark the rewound choice in preferences.jsonl");
        }
        if done.scope.conversation() {
            self.rewound.insert(turn);
            self.history.push(record);
            let log = SessionLog {
                records: self.history.clone(),
                skipped: Vec::new(),
            };
            self.conversations = log.conversations().into_iter().collect();
            // The models are back to the turn before: they read again what they read then.
            match self.sent_notes.get(&turn).cloned() {
                Some(inputs) => {
                    self.last_files = inputs.own.clone();
                    self.next_note = Some(inputs);
                }
                None => {
                    self.last_files.clear();
                    self.next_note = None;
                }
            }
        } else {
            // Files only: the models keep their conversation and learn nothing is applied.
            self.next_note = Some(NoteInputs::default());
        }
    }
}

type FilesPart = (Option<RewindPreview>, Option<String>);

/// The files part of a plan: the preview of the apply to undo, or why there is none.
/// `apply` is the turn's choice (`None`: no choice; `Some(None)`: chosen, nothing written).
fn files_part(
    project: &Path,
    session: &Path,
    scope: RewindScope,
    apply: Option<Option<String>>,
) -> Result<FilesPart, EngineError> {
    if !scope.files() {
        return Ok((None, None));
    }
    let has_journal = session.join(journal::JOURNAL_FILE).exists();
    if scope == RewindScope::Files {
        if !has_journal {
            return Ok((None, None));
        }
        let engine = ApplyEngine::new(project, session)?;
        return Ok((engine.rewind_preview()?, None));
    }
    let id = match apply {
        None => return Ok((None, Some("no choice was made in that turn".to_string()))),
        Some(None) => return Ok((None, Some("nothing was applied in that turn".to_string()))),
        Some(Some(id)) => id,
    };
    let records = journal::read(session)?;
    let entries = journal::entries(&records);
    let Some(entry) = entries.iter().find(|e| e.apply_id == id) else {
        return Ok((None, Some(format!("apply {id} is not in the journal"))));
    };
    if !entry.is_live() {
        return Ok((None, Some("its apply was already undone".to_string())));
    }
    let latest = entries.iter().rev().find(|e| e.is_live());
    if latest.map(|e| &e.apply_id) != Some(&id) {
        return Ok((
            None,
            Some(
                "a later apply is still in effect: /rewind files undoes that one first; \
                 this rewind leaves the files alone"
                    .to_string(),
            ),
        ));
    }
    let engine = ApplyEngine::new(project, session)?;
    Ok((engine.rewind_preview()?, None))
}
