//! `versus pick SPEC|none [--session ID]`: apply one model's change set from the turn a session
//! left without a choice (a `versus ask` without `--pick`, an interface closed before the
//! choice), without running any model again.
//!
//! The session is reopened in the session engine, which rebuilds the turn's change sets from
//! their recorded proposals (as `--continue` does for the review), and the pick is the same
//! choice `ask --pick` submits: through the apply engine (snapshot + journal, so `versus
//! rewind` undoes it), with the preference line and the session's `choice` record. In a blind
//! session whose names are still hidden, a model is picked by the alias the review showed
//! (the choice stays blind), or by its name (which reveals the names first, so the choice is
//! not counted as blind).
//!
//! Everything printed here can carry model- or project-controlled text (labels, file names),
//! so nothing reaches stdout or stderr except through [`versus::sanitize`].
#![deny(clippy::disallowed_methods, clippy::print_stderr)]

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::bail;
use clap::Args;
use serde_json::json;

use versus::engine::{
    EngineError, EngineEvent, EngineEvents, EngineHandle, Op, RestoredTurn, SessionStart,
    StartNotice, StartOptions, start_session,
};
use versus::review::BlindNames;
use versus::sanitize::{self, line};
use versus::session::{SessionError, SessionLog, SessionRecord, Source};
use versus::workspace::changeset::ChangeSet;

use super::ask::pick::{self, PickOptions, PickReport};
use super::ask::{ConflictArg, close, one_line};

/// Exit code when there is nothing to pick or the pick left conflicting files unwritten.
const EXIT_FAILED: u8 = 1;

/// Arguments of `versus pick`.
#[derive(Debug, Args)]
pub struct PickArgs {
    /// The model whose changes to apply (as `versus ask` named it; in a blind session, the
    /// alias the review showed), or `none` to record that none of them was good.
    #[arg(value_name = "SPEC|none")]
    pub spec: String,

    /// Pick in this session (an id or a unique prefix; default: the latest session).
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,

    /// What to do when your own edits since the turn conflict with the model's.
    #[arg(long, value_enum, default_value_t = ConflictArg::Skip)]
    pub on_conflict: ConflictArg,

    /// When another versus is applying to or rewinding this project, refuse at once (exit
    /// code 75) instead of waiting for it.
    #[arg(long)]
    pub no_wait: bool,

    /// Print one JSON document instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Runs the command.
pub fn run(args: PickArgs, project: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let project = super::project_dir(project)?;
    let runtime = super::runtime()?;
    super::on_runtime(&runtime, pick(args, project))
}

/// The model a pick names: its label, and what the output calls it.
struct Named {
    label: String,
    shown: String,
    /// Named by its real name while the names are hidden: they are revealed first.
    reveals: bool,
}

async fn pick(args: PickArgs, project: PathBuf) -> anyhow::Result<ExitCode> {
    let applies = args.spec != "none";
    let start = tokio::task::block_in_place(|| {
        start_session(
            SessionStart::Continue {
                id: args.session.clone(),
                models: None,
            },
            StartOptions {
                project: &project,
                source: Source::Ask,
                // A pick runs no command: no sandbox to check.
                sandbox: None,
                refuse_if_interrupted: applies,
            },
        )
    });
    let started = match start {
        Ok(started) => started,
        Err(EngineError::Session(SessionError::NoSessions(_))) => {
            say("Nothing to pick: versus has not run in this project (`versus ask` first).");
            return Ok(ExitCode::from(EXIT_FAILED));
        }
        Err(error) => return Err(error.into()),
    };
    for skipped in &started.log.skipped {
        say(&format!("versus: {skipped}"));
    }
    for notice in &started.notices {
        if let StartNotice::Leftover(err) = notice {
            say(&format!("versus: warning: {err}"));
        }
    }
    let names = started.engine.blind_names().cloned();
    let hidden = started.engine.blind();
    let restored = started.restored.clone();
    let started_log = started.log;
    let (handle, mut events) = started.engine.pick_only().spawn();
    let session = handle.info().id.clone();
    let outcome = match restored {
        None => {
            say(&format!(
                "Nothing to pick in session {session}: {}; `versus ask` runs a new turn.",
                why_nothing(&started_log, hidden)
            ));
            Ok((ExitCode::from(EXIT_FAILED), false))
        }
        Some(turn) => {
            pick_in(
                &args,
                &handle,
                &mut events,
                &session,
                &turn,
                names.as_ref().filter(|_| hidden),
            )
            .await
        }
    };
    close(&handle, &mut events, false).await;
    let (code, chosen) = outcome?;
    if hidden
        && chosen
        && let Some(names) = &names
        && !args.json
    {
        // The choice ended the blind review and the session: the names are revealed now
        // (and recorded so).
        for label in names.labels() {
            if let Some(alias) = names.alias(label) {
                say(&format!("{alias} was {label}"));
            }
        }
    }
    Ok(code)
}

/// Why a session has no turn to pick in, from its log: no turn yet, no model of its latest
/// turn finished, or that turn's choice (named unless the names are hidden), since rewound.
fn why_nothing(log: &SessionLog, hidden: bool) -> String {
    let last = log.last_turn();
    let mut why = if last == 0 {
        "it has no turn yet".to_string()
    } else {
        format!("no model of turn {last} finished (`versus --continue` runs them again)")
    };
    for record in log.records.iter().filter(|r| r.turn() == last) {
        match record {
            SessionRecord::Choice { chosen, .. } => {
                why = if chosen.is_empty() {
                    format!("turn {last} already has a choice: none of them")
                } else if hidden {
                    format!("turn {last} already has a choice")
                } else {
                    format!("turn {last} already has a choice: {}", chosen.join(", "))
                };
            }
            SessionRecord::Rewound { .. } => {
                why = format!("{why}, since rewound");
            }
            _ => {}
        }
    }
    why
}

/// Picks `args.spec` in the restored `turn`; `hidden` are the session's names while hidden.
/// Returns the exit code and whether a choice was made.
async fn pick_in(
    args: &PickArgs,
    handle: &EngineHandle,
    events: &mut EngineEvents,
    session: &str,
    turn: &RestoredTurn,
    hidden: Option<&BlindNames>,
) -> anyhow::Result<(ExitCode, bool)> {
    let named = if args.spec == "none" {
        None
    } else {
        Some(name_the_pick(&args.spec, turn, hidden)?)
    };
    let sets = rebuilt_change_sets(events, turn).await?;
    if named.as_ref().is_some_and(|n| n.reveals) {
        handle.submit(Op::Blind(false))?;
    }
    let label = named.as_ref().map_or("none", |n| n.label.as_str());
    let options = PickOptions {
        on_conflict: args.on_conflict,
        no_wait: args.no_wait,
    };
    let request = pick::choice(&sets, label, options, &turn.prompt, turn.turn)?;
    let outcome = pick::choose(handle, events, request).await?;
    if let Some(error) = &outcome.preference_error {
        say(&format!("versus: {error}"));
    }
    let (report, conflicts) = match &named {
        Some(named) => {
            let (report, conflicts) = PickReport::of(&named.shown, &outcome);
            (Some(report), conflicts)
        }
        None => (None, 0),
    };
    let mut out = sanitize::stdout();
    if args.json {
        let doc = json!({
            "version": 1,
            "session": session,
            "turn": turn.turn,
            "prompt": turn.prompt,
            "pick": args.spec,
            "applied": report,
        });
        writeln!(out, "{}", sanitize::json::to_string_pretty(&doc)?)?;
    } else {
        writeln!(
            out,
            "Turn {} of session {session}: {}",
            turn.turn,
            line(&one_line(&turn.prompt))
        )?;
        match &report {
            Some(report) => report.write(&mut out)?,
            None => writeln!(out, "Recorded: none of them.")?,
        }
    }
    out.flush()?;
    let code = if conflicts > 0 {
        ExitCode::from(EXIT_FAILED)
    } else {
        ExitCode::SUCCESS
    };
    Ok((code, true))
}

/// Which model of `turn` the user named: a finished model's label, or, while the names are
/// hidden, the alias the review showed ("Model B", or just "B"). Refused with the choices
/// there are (aliases only while the names are hidden: a wrong guess reveals nothing).
fn name_the_pick(
    spec: &str,
    turn: &RestoredTurn,
    hidden: Option<&BlindNames>,
) -> anyhow::Result<Named> {
    let finished: Vec<&str> = turn.finished.iter().map(|m| m.label.as_str()).collect();
    if let Some(names) = hidden {
        let by_alias = finished.iter().find(|label| {
            names.alias(label).is_some_and(|alias| {
                alias.eq_ignore_ascii_case(spec)
                    || alias
                        .rsplit(' ')
                        .next()
                        .is_some_and(|letter| letter.eq_ignore_ascii_case(spec))
            })
        });
        if let Some(label) = by_alias {
            return Ok(Named {
                label: label.to_string(),
                shown: names.shown(label),
                reveals: false,
            });
        }
    }
    if finished.contains(&spec) {
        return Ok(Named {
            label: spec.to_string(),
            shown: spec.to_string(),
            reveals: hidden.is_some(),
        });
    }
    let choices: Vec<String> = finished
        .iter()
        .map(|label| hidden.map_or(label.to_string(), |names| names.shown(label)))
        .collect();
    if hidden.is_none() && turn.unfinished.iter().any(|m| m == spec) {
        bail!(
            "{spec} did not finish turn {} (its run was stopped before it ended): it has \
             nothing to pick; pick one of {} or `none`, or run it again with `versus --continue`",
            turn.turn,
            list(&choices)
        );
    }
    bail!(
        "{spec} is not a model of turn {}: pick one of {} or `none`",
        turn.turn,
        list(&choices)
    )
}

fn list(choices: &[String]) -> String {
    if choices.is_empty() {
        "(no model finished)".to_string()
    } else {
        choices.join(", ")
    }
}

/// Waits for the engine to rebuild every finished model's change set of the restored turn.
async fn rebuilt_change_sets(
    events: &mut EngineEvents,
    turn: &RestoredTurn,
) -> anyhow::Result<Vec<ChangeSet>> {
    let mut sets = Vec::new();
    while sets.len() < turn.finished.len() {
        match events.recv().await {
            Some(EngineEvent::ModelFinished { change_set, .. }) => sets.push(change_set?),
            Some(EngineEvent::Failed { error, .. }) => return Err(error.into()),
            Some(_) => {}
            None => bail!("the session engine stopped before the turn's changes were rebuilt"),
        }
    }
    Ok(sets)
}

/// One line on stderr, escaped.
fn say(text: &str) {
    let _ = writeln!(sanitize::stderr(), "{}", line(text));
}
