//! What every front end checks before it writes to the project: the project-wide refusal to
//! apply while an apply of any session was interrupted half-way, and, for `versus rewind`, the
//! session to act on and the roll-back of such an apply.

use std::path::Path;

use super::{EngineError, RestoredTurn, SessionEngine};
use crate::apply::{ApplyEngine, LockWait, PendingApply, RecoveryReport};
use crate::exec::SandboxSettings;
use crate::session::{SessionError, SessionLog, Source, Store};

/// Which session a front end's work goes into.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionStart {
    /// A new session for these models (their labels).
    New(Vec<String>),
    /// An existing session (`id`: a prefix; `None`: the latest) with `models` as its roster
    /// (`None`: the session's own). Where versus never ran there is nothing to continue, and
    /// that is said without creating `.versus/`.
    Continue {
        /// The session, or the latest.
        id: Option<String>,
        /// The roster to go on with.
        models: Option<Vec<String>>,
    },
    /// The session `id` while it is there, else a new one for `models` (`versus run --resume`
    /// of a run whose session was removed by hand), said with [`StartNotice::SessionGone`].
    ContinueOrNew {
        /// The session the run recorded.
        id: String,
        /// The roster, of either.
        models: Vec<String>,
    },
}

/// How a front end starts: where, as what, and what its commands run in.
#[derive(Debug, Clone, Copy)]
pub struct StartOptions<'a> {
    /// The project.
    pub project: &'a Path,
    /// Which front end (recorded in the session's `opened` record).
    pub source: Source,
    /// The sandbox the session's commands run in, checked at the start; `None` when the
    /// session runs no command (`versus rewind`).
    pub sandbox: Option<&'a SandboxSettings>,
    /// Refuse before anything is created while an apply of the project is interrupted (a
    /// start that is going to apply, like `versus ask --pick`).
    pub refuse_if_interrupted: bool,
}

/// A session started for a front end: the engine to spawn, what its log held, and what the
/// start has to tell the user (each front end words it).
pub struct Started {
    /// The engine, ready to spawn.
    pub engine: SessionEngine,
    /// The log as read (empty for a new session); its skipped lines are the front end's to say.
    pub log: SessionLog,
    /// A turn killed before its choice whose finished models can still be reviewed.
    pub restored: Option<RestoredTurn>,
    /// What the start found: leftovers, the sandbox's state, a session that was gone.
    pub notices: Vec<StartNotice>,
}

/// The one start of a session for every front end (`versus ask`, the interface, `versus run`,
/// `versus rewind`): the store opened (never created to continue nothing), the session created
/// or reopened (its interrupted turn restored), the project-wide refusal while an apply is
/// interrupted when asked for, workspaces of crashed runs removed and the sandbox checked.
/// Blocking (reads logs and journals, walks the workspaces' folder, probes the sandbox).
pub fn start_session(
    start: SessionStart,
    options: StartOptions<'_>,
) -> Result<Started, EngineError> {
    let mut notices = Vec::new();
    let (engine, log, restored) = match start {
        SessionStart::New(models) => {
            let store = Store::open(options.project)?;
            if options.refuse_if_interrupted {
                refuse_if_interrupted(&store)?;
            }
            let engine = SessionEngine::create(store, options.source, models)?;
            (engine, SessionLog::default(), None)
        }
        SessionStart::Continue { id, models } => {
            let store = store_to_continue(options.project)?;
            if options.refuse_if_interrupted {
                refuse_if_interrupted(&store)?;
            }
            let reopened = SessionEngine::open(store, id.as_deref(), options.source, models)?;
            (reopened.engine, reopened.log, reopened.restored)
        }
        SessionStart::ContinueOrNew { id, models } => {
            let store = Store::open(options.project)?;
            if options.refuse_if_interrupted {
                refuse_if_interrupted(&store)?;
            }
            match SessionEngine::open(
                store.clone(),
                Some(&id),
                options.source,
                Some(models.clone()),
            ) {
                Ok(reopened) => (reopened.engine, reopened.log, reopened.restored),
                Err(EngineError::Session(
                    SessionError::NoSuchSession(_) | SessionError::NoSessions(_),
                )) => {
                    notices.push(StartNotice::SessionGone(id));
                    let engine = SessionEngine::create(store, options.source, models)?;
                    (engine, SessionLog::default(), None)
                }
                Err(err) => return Err(err),
            }
        }
    };
    notices.extend(prepare_start(options.project, options.sandbox));
    Ok(Started {
        engine,
        log,
        restored,
        notices,
    })
}

/// The project's store to continue a session in: there is nothing to continue where versus
/// never ran, and that is said without creating `.versus/`; a `.versus` this user's versus did
/// not stamp is opened so that the refusal says what to do.
fn store_to_continue(project: &Path) -> Result<Store, EngineError> {
    if let Some(store) = Store::existing(project)? {
        return Ok(store);
    }
    let root = project.join(".versus");
    if std::fs::symlink_metadata(&root).is_err() {
        return Err(SessionError::NoSessions(root.join("sessions")).into());
    }
    Ok(Store::open(project)?)
}

/// How many of the latest sessions are searched for an interrupted apply.
const SESSIONS_SEARCHED: usize = 20;

/// Refuses when an apply of this project (any of its latest sessions) was interrupted
/// half-way: its snapshots describe files a new apply would change again, so it must be
/// rolled back (`versus rewind`) before anything new is applied. Blocking (reads journals).
pub fn refuse_if_interrupted(store: &Store) -> Result<(), EngineError> {
    for (id, dir) in sessions_that_applied(store)?.take(SESSIONS_SEARCHED) {
        if let Some(pending) = ApplyEngine::new(store.project(), &dir)?.pending_recovery()? {
            return Err(EngineError::ApplyInterrupted {
                apply_id: pending.apply_id,
                session: id,
            });
        }
    }
    Ok(())
}

/// The sessions of `store` that ever applied something (they have an apply journal), newest
/// first, with their folders: what both the interrupted-apply refusal and `versus rewind` walk.
fn sessions_that_applied(
    store: &Store,
) -> Result<impl Iterator<Item = (String, std::path::PathBuf)> + '_, EngineError> {
    Ok(store.sessions()?.into_iter().rev().filter_map(|id| {
        let dir = store.root().join("sessions").join(&id);
        dir.join(crate::apply::journal::JOURNAL_FILE)
            .exists()
            .then_some((id, dir))
    }))
}

/// What `versus rewind` acts on, decided once for the command (the TUI's `/rewind` acts on its
/// own open session).
#[derive(Debug)]
pub enum RewindTarget {
    /// This session: it was named, or it is the newest with something to undo.
    Found {
        /// The session's id.
        session: String,
        /// An apply of it that was interrupted half-way: it is rolled back
        /// ([`roll_back_interrupted`]) before anything else, never rewound.
        interrupted: Option<PendingApply>,
    },
    /// Something was applied in this project, and all of it is undone already.
    AllUndone,
    /// Nothing was ever applied: in the project (`None`), or in the session named.
    NeverApplied(Option<String>),
}

/// The session `versus rewind` acts on: the one named, else the newest with something to undo
/// (an interrupted apply or an apply in effect); else whether anything was ever applied, so the
/// message can say which of the two it is. Blocking (reads journals).
pub fn find_rewind_target(
    store: &Store,
    session: Option<&str>,
) -> Result<RewindTarget, EngineError> {
    if let Some(prefix) = session {
        let (id, dir) = store.session(Some(prefix))?;
        if !dir.join(crate::apply::journal::JOURNAL_FILE).exists() {
            return Ok(RewindTarget::NeverApplied(Some(id)));
        }
        let interrupted = ApplyEngine::new(store.project(), &dir)?.pending_recovery()?;
        return Ok(RewindTarget::Found {
            session: id,
            interrupted,
        });
    }
    let mut applied = false;
    for (id, dir) in sessions_that_applied(store)? {
        applied = true;
        let engine = ApplyEngine::new(store.project(), &dir)?;
        let interrupted = engine.pending_recovery()?;
        if interrupted.is_some() || engine.rewind_preview()?.is_some() {
            return Ok(RewindTarget::Found {
                session: id,
                interrupted,
            });
        }
    }
    Ok(if applied {
        RewindTarget::AllUndone
    } else {
        RewindTarget::NeverApplied(None)
    })
}

/// Rolls an interrupted apply of `session` back to the state before it started, under the
/// project's lock (`wait` says whether to wait for another versus holding it). Happens before
/// any session is opened, like the crash recovery it is. Blocking.
pub fn roll_back_interrupted(
    store: &Store,
    session: &str,
    apply_id: &str,
    wait: LockWait,
) -> Result<RecoveryReport, EngineError> {
    let (_, dir) = store.session(Some(session))?;
    let engine = ApplyEngine::new(store.project(), &dir)?.lock_wait(wait);
    Ok(engine.rollback_incomplete(apply_id)?)
}

/// What a session's start has to tell the user before the first turn; each front end words
/// the line (`versus ask` on stderr, the TUI in its banner), the facts are the same.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StartNotice {
    /// The sandbox is switched off in the settings: model commands run unconfined.
    SandboxOff(String),
    /// The sandbox cannot run here: model commands will be refused (why).
    CommandsRefused(String),
    /// A workspace a crashed run left behind could not be removed (it is skipped).
    Leftover(String),
    /// The session to continue (its id) is gone from `.versus/sessions`: a new one was started.
    SessionGone(String),
}

/// Part of [`start_session`]: workspaces left by crashed runs removed (one that cannot go is
/// reported, never fatal) and the sandbox's state checked (`None`: the session runs no
/// command). Blocking (walks the workspaces' folder, probes the sandbox).
fn prepare_start(project: &Path, sandbox: Option<&SandboxSettings>) -> Vec<StartNotice> {
    let mut notices = Vec::new();
    if let Some(sandbox) = sandbox {
        if let Some(warning) = sandbox.warning() {
            notices.push(StartNotice::SandboxOff(warning.to_string()));
        } else if let Err(err) = crate::exec::check_available(sandbox) {
            notices.push(StartNotice::CommandsRefused(err.to_string()));
        }
    }
    if let Err(err) = crate::workspace::cleanup_leftovers(project) {
        notices.push(StartNotice::Leftover(err.to_string()));
    }
    notices
}
