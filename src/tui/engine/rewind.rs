//! `/rewind`: undo the latest turn that is still in effect, walking back one turn per call.
//!
//! Files come back through the apply engine (the journal and snapshots in the session folder,
//! the same ones `versus rewind` reads). The conversation part records `Rewound { turn }` and
//! rebuilds every model's conversation from the session's conversation records the way
//! [`SessionLog::conversations`] does for a reopened session: each model resumes from its
//! latest record outside the rewound turns. The plan shown before asking is computed here and
//! checked again before anything is restored.

use serde_json::json;

use crate::apply::ApplyEngine;
use crate::apply::journal;
use crate::session::{SessionLog, SessionRecord, now};

use super::super::action::{EngineMsg, RewindDone, RewindPlan, RewindScope};
use super::{Engine, LoopMsg, NoteInputs};

impl Engine {
    /// The latest turn still in every conversation.
    fn latest_turn(&self) -> Option<u32> {
        self.prompts
            .keys()
            .rev()
            .find(|t| !self.rewound.contains(t))
            .copied()
    }

    /// Works out what `/rewind` would do and sends the plan (journal reads: off the thread).
    pub(super) fn plan_rewind(&mut self, scope: RewindScope) -> Vec<EngineMsg> {
        let (turn, prompt, apply) = if scope.conversation() {
            let Some(turn) = self.latest_turn() else {
                return vec![EngineMsg::Info(
                    "nothing to rewind: this session has no turn left".to_string(),
                )];
            };
            (
                Some(turn),
                self.prompts.get(&turn).cloned(),
                self.applies.get(&turn).cloned(),
            )
        } else {
            (None, None, None)
        };
        let applies = self.applies.clone();
        let (project, session) = (self.project.clone(), self.session_dir.clone());
        let tx = self.tx.clone();
        tokio::task::spawn_blocking(move || {
            let msg = match files_part(&project, &session, scope, apply) {
                Ok((files, files_note)) => {
                    let turn = match (scope, &files) {
                        (RewindScope::Files, Some(preview)) => applies
                            .iter()
                            .find(|(_, id)| id.as_deref() == Some(preview.apply_id.as_str()))
                            .map(|(t, _)| *t),
                        _ => turn,
                    };
                    if scope == RewindScope::Files && files.is_none() {
                        EngineMsg::Info(files_note.unwrap_or_else(|| {
                            "nothing to rewind: no applied change is left in this session"
                                .to_string()
                        }))
                    } else {
                        EngineMsg::RewindPlanned(RewindPlan {
                            scope,
                            turn,
                            prompt,
                            files,
                            files_note,
                        })
                    }
                }
                Err(error) => EngineMsg::Error(error),
            };
            let _ = tx.send(LoopMsg::App(msg));
        });
        Vec::new()
    }

    /// Carries out a confirmed rewind: the files first (off the thread), then
    /// [`Engine::rewound`] does the conversation part.
    pub(super) fn rewind(&mut self, plan: RewindPlan, force: bool) -> Vec<EngineMsg> {
        if self.turn.is_some() {
            return vec![EngineMsg::Error(
                "models are running: wait for them before rewinding".to_string(),
            )];
        }
        let (project, session) = (self.project.clone(), self.session_dir.clone());
        let tx = self.tx.clone();
        tokio::task::spawn_blocking(move || {
            let mut done = RewindDone {
                scope: plan.scope,
                turn: plan.turn,
                prompt: plan.prompt.clone(),
                restored: Vec::new(),
                kept: Vec::new(),
            };
            if let Some(files) = &plan.files {
                let result = ApplyEngine::new(&project, &session).and_then(|engine| {
                    let still = engine.rewind_preview()?;
                    if still.as_ref().map(|p| &p.apply_id) != Some(&files.apply_id) {
                        return Ok(None);
                    }
                    engine.rewind(force).map(Some)
                });
                match result {
                    Ok(Some(report)) => {
                        done.restored = report.restored;
                        done.kept = report.kept;
                    }
                    Ok(None) => {
                        let _ = tx.send(LoopMsg::App(EngineMsg::Error(
                            "the applied changes moved on since the question (another rewind?); nothing was restored: /rewind again"
                                .to_string(),
                        )));
                        return;
                    }
                    Err(e) => {
                        let _ = tx.send(LoopMsg::App(EngineMsg::Error(format!(
                            "rewind failed, nothing was changed in the conversations: {e}"
                        ))));
                        return;
                    }
                }
            }
            let _ = tx.send(LoopMsg::Rewound(done));
        });
        Vec::new()
    }

    /// The conversation part of a rewind, and the next turn's note.
    pub(super) fn rewound(&mut self, done: RewindDone) -> Vec<EngineMsg> {
        match (done.scope.conversation(), done.turn) {
            (true, Some(turn)) => {
                self.recorder.record(&SessionRecord::Rewound { turn });
                self.recorder.record(&json!({
                    "type": "rewind", "time": now().rfc3339(), "turn": turn,
                    "scope": scope_word(done.scope), "restored": done.restored,
                    "kept": done.kept,
                }));
                self.rewound.insert(turn);
                self.history.push(SessionRecord::Rewound { turn });
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
            }
            _ => {
                self.recorder.record(&json!({
                    "type": "rewind", "time": now().rfc3339(), "turn": done.turn,
                    "scope": scope_word(done.scope), "restored": done.restored,
                    "kept": done.kept,
                }));
                // Files only: the models keep their conversation and learn nothing is applied.
                self.next_note = Some(NoteInputs::default());
            }
        }
        vec![EngineMsg::Rewound(done)]
    }
}

fn scope_word(scope: RewindScope) -> &'static str {
    match scope {
        RewindScope::Both => "both",
        RewindScope::Files => "files",
        RewindScope::Conversation => "conversation",
    }
}

type FilesPart = (Option<crate::apply::RewindPreview>, Option<String>);

/// The files part of a plan: the preview of the apply to undo, or why there is none.
/// `apply` is the turn's choice (`None`: no choice; `Some(None)`: chosen, nothing written).
fn files_part(
    project: &std::path::Path,
    session: &std::path::Path,
    scope: RewindScope,
    apply: Option<Option<String>>,
) -> Result<FilesPart, String> {
    if !scope.files() {
        return Ok((None, None));
    }
    let has_journal = session.join(journal::JOURNAL_FILE).exists();
    if scope == RewindScope::Files {
        if !has_journal {
            return Ok((None, None));
        }
        let engine = ApplyEngine::new(project, session).map_err(|e| e.to_string())?;
        return engine
            .rewind_preview()
            .map(|p| (p, None))
            .map_err(|e| e.to_string());
    }
    let id = match apply {
        None => return Ok((None, Some("no choice was made in that turn".to_string()))),
        Some(None) => return Ok((None, Some("nothing was applied in that turn".to_string()))),
        Some(Some(id)) => id,
    };
    let records = journal::read(session).map_err(|e| e.to_string())?;
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
    let engine = ApplyEngine::new(project, session).map_err(|e| e.to_string())?;
    engine
        .rewind_preview()
        .map(|p| (p, None))
        .map_err(|e| e.to_string())
}
