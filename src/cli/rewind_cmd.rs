//! `versus rewind [--session ID] [--yes] [--force]`: undo the latest applied change.
//!
//! The same engine as /rewind in the TUI: the session with the latest apply still in effect is
//! opened in the session engine (source `rewind`), which plans the files-only rewind from the
//! journal and snapshots, and, once confirmed, restores and records it in the session's log. An apply that was interrupted half-way is
//! rolled back first (that is what "the next start offers to roll it back" means here).

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Args;

use versus::apply::{RewindAction, RewindPreview};
use versus::engine::{
    EngineError, EngineEvent, EngineEvents, EngineHandle, Op, OpKind, RewindScope, RewindTarget,
    SessionStart, StartNotice, StartOptions, find_rewind_target, roll_back_interrupted,
    start_session,
};
use versus::session::{Source, Store};

/// A line on stdout; a closed stdout (e.g. `| head`) must not turn a finished rewind into an
/// error, so write failures are ignored here. Escaped on the way
/// out ([`versus::sanitize`]): the lines name project files and quote project text.
macro_rules! say {
    ($($arg:tt)*) => {{
        let _ = writeln!(versus::sanitize::stdout(), $($arg)*);
    }};
}

/// Arguments of `versus rewind`.
#[derive(Debug, Args)]
pub struct RewindArgs {
    /// Session to rewind in (an id or a unique prefix; default: the latest session with an
    /// apply still in effect).
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,

    /// Do not ask for confirmation.
    #[arg(long, short = 'y')]
    pub yes: bool,

    /// Also restore files that were edited after the apply (their later edits are lost).
    #[arg(long)]
    pub force: bool,

    /// When another versus is applying to or rewinding this project, refuse at once (exit
    /// code 75) instead of waiting for it.
    #[arg(long)]
    pub no_wait: bool,
}

/// Runs the command.
pub fn run(args: RewindArgs, project: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let project = super::project_dir(project)?;
    // A `.versus` this user's versus did not write (a clone's, a link) is refused here: its
    // journals and snapshots are never rewound.
    let Some(store) = Store::existing(&project)? else {
        eprintln!("Nothing to rewind: versus has not applied anything in this project.");
        return Ok(ExitCode::SUCCESS);
    };
    let (id, interrupted) = match find_rewind_target(&store, args.session.as_deref())? {
        RewindTarget::Found {
            session,
            interrupted,
        } => (session, interrupted),
        RewindTarget::AllUndone => {
            eprintln!("Nothing to rewind: every change versus applied here is already undone.");
            return Ok(ExitCode::SUCCESS);
        }
        RewindTarget::NeverApplied(None) => {
            eprintln!("Nothing to rewind: versus has not applied anything in this project.");
            return Ok(ExitCode::SUCCESS);
        }
        RewindTarget::NeverApplied(Some(id)) => {
            eprintln!("Nothing to rewind: nothing was ever applied in session {id}.");
            return Ok(ExitCode::SUCCESS);
        }
    };
    if let Some(pending) = interrupted {
        say!(
            "Apply {} in session {id} was interrupted while writing {} file(s) ({}).",
            pending.apply_id,
            pending.paths.len(),
            pending.models.join(", ")
        );
        if !confirm(args.yes, "Roll it back to the state before it started?")? {
            say!("Left as it is.");
            return Ok(ExitCode::SUCCESS);
        }
        let report = roll_back_interrupted(
            &store,
            &id,
            &pending.apply_id,
            super::lock_wait(args.no_wait),
        )?;
        say!("Rolled back: {} file(s) restored.", report.restored.len());
        return Ok(ExitCode::SUCCESS);
    }
    // The rewind itself goes through the session engine, like /rewind in the TUI: the
    // session's one log writer records the `rewound` record and the choice's mark.
    let runtime = super::runtime()?;
    let _entered = runtime.enter();
    drop(store);
    // The one start of every front end; a rewind runs no command, so no sandbox to check.
    let started = start_session(
        SessionStart::Continue {
            id: Some(id.clone()),
            models: None,
        },
        StartOptions {
            project: &project,
            source: Source::Rewind,
            sandbox: None,
            refuse_if_interrupted: false,
        },
    )?;
    for skipped in &started.log.skipped {
        eprintln!("versus: {skipped}");
    }
    for notice in &started.notices {
        if let StartNotice::Leftover(err) = notice {
            eprintln!("versus: warning: {err}");
        }
    }
    let session = started
        .engine
        .rewind_only()
        .with_rewind_lock(super::lock_wait(args.no_wait));
    let (handle, mut events) = session.spawn();
    let result = rewind(&runtime, &handle, &mut events, &id, &args);
    // The session ends whatever happened: its `ended` record is written and the log closed.
    if handle
        .submit(Op::Shutdown {
            keep_workspaces: true,
        })
        .is_ok()
    {
        runtime.block_on(async {
            while let Some(event) = events.recv().await {
                if matches!(event, EngineEvent::Closed { .. }) {
                    break;
                }
            }
        });
    }
    result
}

/// The next answer of the engine about `op`: what it reports, or why it refused.
fn answer(
    runtime: &tokio::runtime::Runtime,
    events: &mut EngineEvents,
    op: OpKind,
) -> anyhow::Result<Result<EngineEvent, EngineError>> {
    runtime.block_on(async {
        while let Some(event) = events.recv().await {
            match event {
                EngineEvent::Failed { op: kind, error } if kind == op => return Ok(Err(error)),
                EngineEvent::RewindPlanned(_) if op == OpKind::PlanRewind => return Ok(Ok(event)),
                EngineEvent::Rewound(_) if op == OpKind::Rewind => return Ok(Ok(event)),
                _ => {}
            }
        }
        bail!("the session engine stopped before it answered")
    })
}

/// Plans the files-only rewind on the engine, shows it, asks, and carries it out.
fn rewind(
    runtime: &tokio::runtime::Runtime,
    handle: &EngineHandle,
    events: &mut EngineEvents,
    id: &str,
    args: &RewindArgs,
) -> anyhow::Result<ExitCode> {
    handle.submit(Op::PlanRewind {
        scope: RewindScope::Files,
    })?;
    let plan = match answer(runtime, events, OpKind::PlanRewind)? {
        Ok(EngineEvent::RewindPlanned(plan)) => plan,
        Err(EngineError::NothingToRewind(_)) | Ok(_) => {
            say!(
                "Nothing to rewind in session {id}: every change applied in it is already undone."
            );
            return Ok(ExitCode::SUCCESS);
        }
        Err(error) => return Err(error.into()),
    };
    let Some(preview) = plan.files.clone() else {
        say!("Nothing to rewind in session {id}: every change applied in it is already undone.");
        return Ok(ExitCode::SUCCESS);
    };
    print_preview(id, &preview);
    if !confirm(args.yes, "Rewind?")? {
        say!("Nothing changed.");
        return Ok(ExitCode::SUCCESS);
    }
    let edited = preview.edited();
    let mut force = args.force;
    if !edited.is_empty() && !force && !args.yes {
        force = confirm(
            false,
            &format!(
                "{} file(s) were edited after the apply ({}). Overwrite them too?",
                edited.len(),
                edited.join(", ")
            ),
        )?;
    }
    handle.submit(Op::Rewind { plan, force })?;
    // The choice that made this apply no longer stands: the engine's `rewound` record says
    // so and `versus stats` leaves it out.
    let report = match answer(runtime, events, OpKind::Rewind)? {
        Ok(EngineEvent::Rewound(done)) => done,
        Ok(_) => bail!("the session engine answered the rewind with something else"),
        // Said as before: the apply engine's own sentence (another versus holds the lock,
        // a damaged journal), nothing about conversations this command never touches.
        Err(EngineError::RewindFailed(error)) => return Err(error.into()),
        Err(error) => return Err(error.into()),
    };
    say!(
        "Rewound: {} file(s) restored{}.",
        report.restored.len(),
        if report.kept.is_empty() {
            String::new()
        } else {
            format!(
                "; kept {} edited after the apply ({}); use --force to restore them too",
                report.kept.len(),
                report.kept.join(", ")
            )
        }
    );
    if !preview.label.is_empty() {
        say!("The prompt of that turn was: {}", preview.label);
    }
    Ok(ExitCode::SUCCESS)
}

fn print_preview(session: &str, preview: &RewindPreview) {
    let models = if preview.models.is_empty() {
        String::new()
    } else {
        format!(" from {}", preview.models.join(", "))
    };
    say!(
        "Rewind apply {}{models} (session {session}): {}",
        preview.apply_id,
        preview.summary()
    );
    for file in &preview.files {
        let action = match file.action {
            RewindAction::Restore => "restore",
            RewindAction::Recreate => "recreate",
            RewindAction::Remove => "remove",
        };
        let edited = if file.edited_after_apply {
            "  (edited after the apply)"
        } else {
            ""
        };
        say!(
            "  {action:<8} {} +{} -{}{edited}",
            file.path,
            file.added,
            file.removed
        );
    }
}

/// Asks a yes/no question on the terminal; `--yes` answers yes. Without a terminal and
/// without `--yes`, refuses rather than guessing.
pub(crate) fn confirm(yes: bool, question: &str) -> anyhow::Result<bool> {
    if yes {
        return Ok(true);
    }
    if !std::io::stdin().is_terminal() {
        bail!("{question} Not asking without a terminal: add --yes to confirm");
    }
    write!(std::io::stdout(), "{question} [y/N] ").context("write to the terminal")?;
    std::io::stdout().flush().context("write to the terminal")?;
    let mut answer = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut answer)
        .context("read the answer")?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes" | "Yes"))
}
