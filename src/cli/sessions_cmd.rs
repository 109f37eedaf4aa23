//! `versus sessions [show ID] [--json]`: what was asked, what each model did, what was kept.
//!
//! A session's log holds model answers and labels: everything is printed through
//! [`versus::sanitize`] (the raw streams and `eprintln!` are denied here).
#![deny(clippy::disallowed_methods, clippy::print_stderr)]

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use serde_json::json;

use versus::model::{ToolOutcome, call_target, output_tail};
use versus::sanitize::{self, line};
use versus::session::{SessionLog, Store, ToolCallSummary, TurnSummary};

/// Arguments of `versus sessions`.
#[derive(Debug, Args)]
pub struct SessionsArgs {
    /// Print JSON instead of text.
    #[arg(long, global = true)]
    pub json: bool,

    #[command(subcommand)]
    pub command: Option<SessionsCommand>,
}

/// `versus sessions` subcommands.
#[derive(Debug, Subcommand)]
pub enum SessionsCommand {
    /// Every turn of one session (an id or a unique prefix; default: the latest).
    Show {
        /// Session id or prefix.
        id: Option<String>,
    },
}

/// Runs the command.
pub fn run(args: SessionsArgs, project: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let project = super::project_dir(project)?;
    let mut out = sanitize::stdout();
    let Some(store) = Store::existing(&project)? else {
        if args.json {
            writeln!(out, "[]")?;
        } else {
            writeln!(out, "No sessions yet in {}.", project.display())?;
        }
        return Ok(ExitCode::SUCCESS);
    };
    match args.command {
        None => {
            let mut rows = Vec::new();
            for id in store.sessions()?.into_iter().rev() {
                let (_, dir) = store.session(Some(&id))?;
                let log = SessionLog::read(&dir)?;
                report_skipped(&log);
                let turns = log.turns();
                rows.push((id, turns));
            }
            if args.json {
                let doc: Vec<_> = rows
                    .iter()
                    .map(|(id, turns)| {
                        json!({
                            "id": id,
                            "turns": turns.len(),
                            "started": turns.first().map(|t| t.time.clone()),
                            "first_prompt": turns.first().map(|t| t.prompt.clone()),
                            "models": turns.last().map(|t| t.models.iter().map(|m| m.model.clone()).collect::<Vec<_>>()),
                        })
                    })
                    .collect();
                writeln!(out, "{}", sanitize::json::to_string_pretty(&doc)?)?;
                return Ok(ExitCode::SUCCESS);
            }
            if rows.is_empty() {
                writeln!(out, "No sessions yet.")?;
            }
            for (id, turns) in rows {
                let first = turns
                    .first()
                    .map(|t| one_line(&t.prompt, 60))
                    .unwrap_or_else(|| "(no turn)".to_string());
                let models = turns.last().map(|t| t.models.len()).unwrap_or_default();
                writeln!(
                    out,
                    "{}  {} turn(s), {models} model(s)  {}",
                    line(&id),
                    turns.len(),
                    line(&first)
                )?;
            }
        }
        Some(SessionsCommand::Show { id }) => {
            let (id, dir) = store.session(id.as_deref())?;
            let log = SessionLog::read(&dir)?;
            report_skipped(&log);
            let turns = log.turns();
            if args.json {
                let doc = json!({"id": id, "turns": turns});
                writeln!(out, "{}", sanitize::json::to_string_pretty(&doc)?)?;
                return Ok(ExitCode::SUCCESS);
            }
            writeln!(out, "Session {}", line(&id))?;
            for turn in &turns {
                show_turn(&mut out, turn)?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn show_turn(out: &mut impl Write, turn: &TurnSummary) -> std::io::Result<()> {
    let mut flags = Vec::new();
    if !turn.complete {
        flags.push("interrupted");
    }
    if turn.rewound {
        flags.push("rewound");
    }
    let flags = if flags.is_empty() {
        String::new()
    } else {
        format!(" [{}]", flags.join(", "))
    };
    writeln!(out)?;
    writeln!(out, "Turn {} ({}){flags}", turn.turn, line(&turn.time))?;
    for prompt_line in turn.prompt.trim().split('\n') {
        writeln!(out, "> {}", line(prompt_line))?;
    }
    // What the models were given besides the prompt, and whether each got the same.
    if let Some(context) = &turn.context {
        for text in versus::context::summary_lines(context, &turn.ledger, &|l| l.to_string()) {
            writeln!(out, "  {}", line(&text))?;
        }
    }
    for model in &turn.models {
        let status = model.stop.map_or("did not finish", |s| s.label());
        let cost = model
            .stats
            .as_ref()
            .and_then(|s| s.cost)
            .map_or_else(String::new, |c| format!(", ${c:.4}"));
        // A turn of several tasks (`versus run`) names each model's task.
        let task = model
            .task
            .as_ref()
            .map_or_else(String::new, |t| format!(" [{}]", line(t)));
        writeln!(
            out,
            "  {}{task}: {status}, {} proposal(s){cost}",
            line(&model.model),
            model.writes
        )?;
        for call in &model.tools {
            show_call(out, call)?;
        }
        for (path, agent) in &model.sub_agent_writes {
            writeln!(
                out,
                "    ✎ {} written by sub-agent {}",
                line(path),
                line(agent)
            )?;
        }
        if !model.final_text.trim().is_empty() {
            writeln!(out, "    {}", line(&one_line(&model.final_text, 100)))?;
        }
    }
    match &turn.chosen {
        Some(chosen) if chosen.is_empty() => writeln!(out, "  chosen: none of them")?,
        Some(chosen) => writeln!(out, "  chosen: {}", line(&chosen.join(", ")))?,
        None => {}
    }
    Ok(())
}

/// Lines of a call's output `sessions show` prints under it (`--json` has the whole text).
const TAIL_LINES: usize = 5;

/// One tool call: its mark (`✓`, `✗ exit 3`, `⊘ refused`...), tool and argument, then the
/// last lines of what it returned for a command or a call that did not succeed.
fn show_call(out: &mut impl Write, call: &ToolCallSummary) -> std::io::Result<()> {
    let mark = call
        .outcome
        .map_or_else(|| "… not finished".to_string(), ToolOutcome::mark);
    let target = call_target(&call.arguments, 80);
    // A sub-agent's call sits under its parent's, indented by depth and named with its role.
    let (indent, by) = match &call.agent {
        Some(agent) => (
            "  ".repeat(agent.depth as usize),
            format!("↳ {} ({}): ", agent.name(), agent.model),
        ),
        None => (String::new(), String::new()),
    };
    writeln!(
        out,
        "    {indent}{}{mark} {} {} ({} ms)",
        line(&by),
        line(&call.name),
        line(&target),
        call.duration_ms
    )?;
    let failed = call.outcome.is_some_and(|o| !o.is_ok());
    if call.name == "bash" || failed {
        let (tail, skipped) = output_tail(&call.output, TAIL_LINES);
        if skipped > 0 {
            writeln!(out, "      │ … {skipped} earlier line(s)")?;
        }
        for text in tail {
            writeln!(out, "      │ {}", line(&one_line(text, 200)))?;
        }
    }
    Ok(())
}

fn one_line(text: &str, max: usize) -> String {
    let line = text.trim().lines().next().unwrap_or_default();
    let mut cut: String = line.chars().take(max).collect();
    if cut.len() < text.trim().len() {
        cut.push('…');
    }
    cut
}

/// Names, on stderr, each line of a session log that could not be read.
fn report_skipped(log: &SessionLog) {
    for skipped in &log.skipped {
        let _ = writeln!(sanitize::stderr(), "versus: {}", line(&skipped.to_string()));
    }
}
