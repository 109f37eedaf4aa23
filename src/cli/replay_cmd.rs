//! `versus replay export`: a model's recorded conversation as a demo script, to replay a real
//! run offline (`-m demo/path/to/script.jsonl`), with its sub-agents' tracks (their calls and
//! answers, named in a comment) so the replay starts them too.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::{Args, Subcommand};

use versus::session::{SessionLog, SessionRecord, Store, demo_script_with, sub_agent_tracks};

/// Arguments of `versus replay`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    #[command(subcommand)]
    pub command: ReplayCommand,
}

/// `versus replay` subcommands.
#[derive(Debug, Subcommand)]
pub enum ReplayCommand {
    /// Write one model's conversation of a session as a demo script (JSON Lines).
    Export {
        /// The model entry, as shown in the session (e.g. `openai/gpt-5#2`).
        #[arg(long, short = 'm', value_name = "SPEC")]
        model: String,

        /// Session id or unique prefix (default: the latest).
        #[arg(long, value_name = "ID")]
        session: Option<String>,

        /// The conversation as it was after this turn (default: the latest kept).
        #[arg(long, value_name = "N")]
        turn: Option<u32>,

        /// Pause per streamed word on replay, in milliseconds.
        #[arg(long, default_value_t = 30, value_name = "MS")]
        delay: u64,

        /// Write to FILE instead of stdout (relative to the project folder, like -C).
        #[arg(long, short = 'o', value_name = "FILE")]
        output: Option<PathBuf>,
    },
}

/// Runs the command.
pub fn run(args: ReplayArgs, project: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let ReplayCommand::Export {
        model,
        session,
        turn,
        delay,
        output,
    } = args.command;
    let project = super::project_dir(project)?;
    let Some(store) = Store::existing(&project)? else {
        bail!("no sessions in {}: run versus first", project.display());
    };
    let (id, dir) = store.session(session.as_deref())?;
    let log = SessionLog::read(&dir).with_context(|| format!("read session {id}"))?;
    let messages = match turn {
        None => log.conversations().remove(&model),
        Some(n) => log.records.iter().rev().find_map(|r| match r {
            SessionRecord::Conversation {
                turn,
                model: m,
                messages,
            } if *turn == n && *m == model => Some(messages.clone()),
            _ => None,
        }),
    };
    let Some(messages) = messages else {
        let models = log.last_models().join(", ");
        bail!(
            "session {id} has no recorded conversation of {model}{}; its models: {models}",
            turn.map(|n| format!(" after turn {n}")).unwrap_or_default()
        );
    };
    // Its sub-agents' tracks, from their events in the turns this conversation holds.
    let tracks = sub_agent_tracks(log.records.iter().filter_map(|r| match r {
        SessionRecord::Agent {
            turn: t,
            model: m,
            event,
            ..
        } if *m == model && turn.is_none_or(|n| *t <= n) => Some((*t, event)),
        _ => None,
    }));
    let script = demo_script_with(&messages, &tracks, &format!("session {id}, {model}"), delay);
    match output {
        Some(path) => {
            let path = project.join(path);
            versus::fsutil::atomic_write(&path, script.as_bytes())
                .with_context(|| format!("write {}", path.display()))?
        }
        None => std::io::stdout().lock().write_all(script.as_bytes())?,
    }
    Ok(ExitCode::SUCCESS)
}
