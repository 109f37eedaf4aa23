//! `versus ask PROMPT -m SPEC... [--pick SPEC|none] [--json]`: one turn without the TUI.
//!
//! Fans the prompt out, prints progress on stderr, then the comparison table and each model's
//! diff (or one JSON document). `--pick` applies that model's change set through the apply
//! engine, exactly as the TUI does (snapshot + journal, so `versus rewind` undoes it), and logs
//! the choice to `.versus/preferences.jsonl`.

mod progress;
mod report;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::{Args, ValueEnum};
use serde_json::json;

use versus::agent::{AgentSettings, system_prompt};
use versus::apply::compose::{Selection, compose};
use versus::apply::{AppliedAs, ApplyEngine, FileStatus, Resolution};
use versus::config::{ResolveError, resolve};
use versus::model::{Message, RunStop};
use versus::provider::RetryPolicy;
use versus::provider::http::default_client;
use versus::runner::{
    ModelEntry, ModelResult, RunEvent, RunOptions, client_for, entry_for, fan_out,
};
use versus::session::{
    EventLog, ModelRecord, Preference, Session, SessionRecord, Store, append_preference, now,
};
use versus::tools::{ToolLimits, ToolRegistry};
use versus::workspace::changeset::{BaseReader, ChangeSet};
use versus::workspace::{Base, Isolation, cleanup_leftovers};

use progress::Progress;
use report::{ChangedFile, Row};

/// Exit code when the user interrupted the run.
const EXIT_INTERRUPTED: u8 = 130;

/// Isolation mode names on the command line.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum IsolationArg {
    /// A git worktree at HEAD plus your uncommitted changes (default in a git repository).
    Worktree,
    /// A gitignore-aware copy of the project (default outside git).
    Copy,
    /// No copy: changes live in memory over your real tree; bash is refused.
    Overlay,
}

/// What to do with a file you changed since the run started when the merge conflicts.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ConflictArg {
    /// Leave your file alone (default).
    Skip,
    /// Replace your file with the model's version.
    Overwrite,
    /// Write the merge with conflict markers for you to resolve.
    Markers,
}

/// Arguments of `versus ask`.
#[derive(Debug, Args)]
pub struct AskArgs {
    /// The prompt sent to every model.
    pub prompt: String,

    /// A model (PROVIDER/MODEL[#N]); repeat for several. Default: the config's `models`.
    #[arg(short = 'm', long = "model", value_name = "SPEC")]
    pub models: Vec<String>,

    /// Apply this model's change set when all are done (`none` records "none of them").
    #[arg(long, value_name = "SPEC|none")]
    pub pick: Option<String>,

    /// Print one JSON document instead of the table and diffs.
    #[arg(long)]
    pub json: bool,

    /// Workspace isolation.
    #[arg(long, value_enum)]
    pub isolation: Option<IsolationArg>,

    /// Requests per model at most.
    #[arg(long, default_value_t = 50, value_name = "N")]
    pub max_steps: u32,

    /// Time limit per model, in seconds.
    #[arg(long, default_value_t = 1200, value_name = "SECS")]
    pub timeout: u64,

    /// Stop a model once its cost reaches this many USD.
    #[arg(long, value_name = "USD")]
    pub max_cost: Option<f64>,

    /// Command run once in each new workspace before the model starts (e.g. `npm ci`).
    #[arg(long, value_name = "COMMAND")]
    pub setup: Option<String>,

    /// Keep the workspaces on disk afterwards (their paths are printed).
    #[arg(long)]
    pub keep_workspaces: bool,

    /// With --pick: what to do when your own edits since the run conflict with the model's.
    #[arg(long, value_enum, default_value_t = ConflictArg::Skip)]
    pub on_conflict: ConflictArg,

    /// Do not print progress on stderr.
    #[arg(long, short = 'q')]
    pub quiet: bool,

    /// With --pick: when another versus is applying to or rewinding this project, refuse at
    /// once (exit code 75) instead of waiting for it.
    #[arg(long)]
    pub no_wait: bool,
}

/// Runs the command.
pub fn run(
    args: AskArgs,
    project: Option<PathBuf>,
    config_file: Option<PathBuf>,
    trust: bool,
) -> anyhow::Result<ExitCode> {
    let project = super::project_dir(project)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("start the async runtime")?;
    runtime.block_on(ask(args, project, config_file, trust))
}

async fn ask(
    args: AskArgs,
    project: PathBuf,
    config_file: Option<PathBuf>,
    trust: bool,
) -> anyhow::Result<ExitCode> {
    let (config, env) = versus::config::load(&project, config_file.as_deref(), trust)?;
    super::print_config_notices(&config, &env);
    let specs = if args.models.is_empty() {
        config.default_models.clone()
    } else {
        args.models
            .iter()
            .map(|text| config.parse_spec(text))
            .collect::<Result<Vec<_>, _>>()?
    };
    if specs.is_empty() {
        bail!(
            "no model given: add -m PROVIDER/MODEL (e.g. -m demo/good -m openai/gpt-5), or set `models` in the config"
        );
    }
    let progress_quiet = args.quiet;
    let tools = Arc::new(ToolRegistry::builtin());
    let settings = AgentSettings {
        max_steps: args.max_steps,
        timeout: Duration::from_secs(args.timeout),
        max_cost: args.max_cost,
        system: system_prompt(&tools.guidance(), None),
        ..AgentSettings::default()
    };
    let http = default_client()?;
    let mut entries: Vec<ModelEntry> = Vec::new();
    for spec in &specs {
        let resolved = match resolve(spec, &config, &env) {
            Ok(resolved) => resolved,
            Err(err @ ResolveError::MissingKey { .. }) => {
                eprintln!("versus: skipping {spec}: {err}");
                continue;
            }
            Err(err) => return Err(err.into()),
        };
        let client = client_for(&resolved, &project, &http, RetryPolicy::default())?;
        entries.push(entry_for(
            &resolved,
            client,
            Arc::clone(&tools),
            settings.clone(),
        ));
    }
    if entries.is_empty() {
        bail!("no model can run: every model given was skipped (see the warnings above)");
    }
    let labels: Vec<String> = entries.iter().map(|e| e.label.clone()).collect();
    if let Some(pick) = &args.pick
        && pick != "none"
        && !labels.contains(pick)
    {
        bail!(
            "--pick {pick} is not one of the models of this run ({}); use one of them or `none`",
            labels.join(", ")
        );
    }

    let store = Store::open(&project)?;
    if args.pick.as_deref().is_some_and(|p| p != "none") {
        refuse_if_interrupted(&store)?;
    }
    let _ = cleanup_leftovers(&project);
    let mut session = Session::create(&store)?;
    let session_id = session.id().to_string();
    let session_dir = session.dir().to_path_buf();
    let turn = session.begin_turn(&args.prompt, &labels)?;
    EventLog::open(&store.history())?.append(&json!({
        "time": now().rfc3339(), "session": session_id, "prompt": args.prompt,
    }))?;

    let progress = Progress::new(labels.clone(), progress_quiet);
    let capture_root = project.clone();
    let base = tokio::task::spawn_blocking(move || Base::capture(&capture_root))
        .await
        .context("capture the project state")??;
    let base = Arc::new(base);
    let isolation = match args.isolation {
        Some(IsolationArg::Worktree) => Isolation::Worktree,
        Some(IsolationArg::Copy) => Isolation::Copy,
        Some(IsolationArg::Overlay) => Isolation::Overlay,
        None => Isolation::default_for(&project),
    };
    let options = RunOptions {
        isolation,
        limits: ToolLimits::default(),
        setup: args.setup.clone(),
        workspace_parent: None,
        spill_dir: session_dir.join("spill"),
        output_filter: None,
        sandbox: config.sandbox.clone(),
    };
    if let Some(warning) = config.sandbox.warning() {
        progress.note(&format!("versus: WARNING: {warning}"));
    } else if let Err(err) = versus::exec::check_available(&config.sandbox) {
        progress.note(&format!("versus: model commands will be refused: {err}"));
    }
    if isolation == Isolation::Overlay {
        progress.note(
            "versus: overlay isolation: model commands (bash, setup) are refused, since they \
             would run in your real project",
        );
    }
    progress.note(&format!(
        "versus: {} model(s) on: {}",
        labels.len(),
        one_line(&args.prompt)
    ));
    let (mut rx, handle) = fan_out(
        Arc::clone(&base),
        entries,
        Message::user(args.prompt.clone()),
        options,
    );
    let mut results: Vec<Option<ModelResult>> = labels.iter().map(|_| None).collect();
    let mut interrupted = false;
    let mut stop_signals = crate::cli::signals::StopSignals::new()?;
    loop {
        tokio::select! {
            event = rx.recv() => {
                let Some(event) = event else { break };
                record(&mut session, turn, &labels, &event);
                match event {
                    RunEvent::Agent { entry, event } => progress.event(entry, &event),
                    RunEvent::WorkspaceReady { .. } => {}
                    RunEvent::Finished { entry, result } => results[entry] = Some(*result),
                }
            }
            signal = stop_signals.next(), if !interrupted => {
                interrupted = true;
                progress.note(&format!(
                    "versus: {signal}, stopping every model (no file of yours is changed)"
                ));
                handle.cancel_all();
            }
        }
    }
    let results: Vec<ModelResult> = results.into_iter().flatten().collect();

    let mut reader = BaseReader::new(&base);
    for result in &results {
        if let Some(ws) = &result.workspace {
            reader = reader.with_fallback(ws.root());
        }
    }
    let mut sets = Vec::new();
    let mut rows = Vec::new();
    for result in &results {
        let set = ChangeSet::build(
            &result.label,
            &base,
            &result.writes,
            &reader,
            result.workspace.as_ref().map(|w| w.root()),
        )
        .with_context(|| format!("build the change set of {}", result.label))?;
        rows.push(row(result, &set));
        sets.push(set);
    }

    if interrupted {
        print_results(&args, &rows, &session_id, None)?;
        return Ok(ExitCode::from(EXIT_INTERRUPTED));
    }

    let mut exit = ExitCode::SUCCESS;
    let mut pick_report = None;
    if let Some(pick) = &args.pick {
        let chosen: Vec<String> = if pick == "none" {
            Vec::new()
        } else {
            vec![pick.clone()]
        };
        let mut apply_id = None;
        if !chosen.is_empty() {
            let (report, conflicts) = apply_pick(
                &project,
                &session_dir,
                &sets,
                pick,
                &args.prompt,
                args.on_conflict,
                args.no_wait,
            )?;
            if conflicts > 0 {
                exit = ExitCode::from(1);
            }
            apply_id = report.apply_id.clone();
            pick_report = Some(report);
        }
        session.append(&SessionRecord::Choice {
            turn,
            chosen: chosen.clone(),
            apply_id,
        })?;
        append_preference(
            &store.preferences(),
            &Preference {
                time: now().rfc3339(),
                session: session_id.clone(),
                turn,
                prompt_hash: blake3::hash(args.prompt.as_bytes()).to_hex().to_string(),
                models: rows
                    .iter()
                    .map(|r| ModelRecord {
                        model: r.model.clone(),
                        status: r.status.label().to_string(),
                        cost: r.cost,
                        usage: r.usage,
                        latency_ms: r.elapsed_ms,
                        files: r.files,
                    })
                    .collect(),
                chosen,
                ratings: BTreeMap::new(),
                blind: false,
                source: "ask".to_string(),
            },
        )
        .context("record the choice in .versus/preferences.jsonl")?;
    }
    print_results(&args, &rows, &session_id, pick_report.as_ref())?;
    if args.keep_workspaces {
        for mut result in results {
            if let Some(ws) = result.workspace.as_mut() {
                ws.keep();
                eprintln!(
                    "kept workspace of {}: {}",
                    result.label,
                    ws.root().display()
                );
            }
        }
    }
    Ok(exit)
}

/// An interrupted apply must be rolled back before a new one (its snapshots would be stale).
fn refuse_if_interrupted(store: &Store) -> anyhow::Result<()> {
    for id in store.sessions()?.into_iter().rev().take(20) {
        let dir = store.root().join("sessions").join(&id);
        if !dir.join(versus::apply::journal::JOURNAL_FILE).exists() {
            continue;
        }
        if let Some(p) = ApplyEngine::new(store.project(), &dir)?.pending_recovery()? {
            bail!(
                "apply {} (session {id}) was interrupted half-way; run `versus rewind` to roll it back before applying anything new",
                p.apply_id
            );
        }
    }
    Ok(())
}

/// What --pick did, for the output.
#[derive(Debug, serde::Serialize)]
struct PickReport {
    model: String,
    apply_id: Option<String>,
    files: Vec<(String, String)>,
}

fn apply_pick(
    project: &std::path::Path,
    session_dir: &std::path::Path,
    sets: &[ChangeSet],
    pick: &str,
    prompt: &str,
    on_conflict: ConflictArg,
    no_wait: bool,
) -> anyhow::Result<(PickReport, usize)> {
    let plan = compose(sets, &Selection::new().change_set(pick), prompt)?;
    let engine = ApplyEngine::new(project, session_dir)?.lock_wait(super::lock_wait(no_wait));
    let preview = engine.preview(&plan)?;
    let resolution = match on_conflict {
        ConflictArg::Skip => Resolution::Skip,
        ConflictArg::Overwrite => Resolution::Overwrite,
        ConflictArg::Markers => Resolution::Markers,
    };
    let resolutions: BTreeMap<String, Resolution> = preview
        .conflicts()
        .into_iter()
        .map(|p| (p.to_string(), resolution))
        .collect();
    let report = engine.apply(&plan, &resolutions)?;
    let refusals: BTreeMap<&str, &str> = preview
        .files
        .iter()
        .filter_map(|f| match &f.status {
            FileStatus::Refused { why } => Some((f.path.as_str(), why.as_str())),
            _ => None,
        })
        .collect();
    let mut conflicts = 0;
    let files = report
        .files
        .iter()
        .map(|f| {
            let what = match f.applied_as {
                AppliedAs::Written => "written",
                AppliedAs::Deleted => "deleted",
                AppliedAs::Merged => "merged with your edits",
                AppliedAs::Overwritten => "overwritten (conflict)",
                AppliedAs::MarkersWritten => "conflict markers written",
                AppliedAs::AlreadyApplied => "already as proposed",
                AppliedAs::Skipped => {
                    conflicts += 1;
                    "skipped: conflicts with your edits"
                }
                AppliedAs::Unresolved => {
                    conflicts += 1;
                    "not written: conflicts with your edits"
                }
                AppliedAs::MarkersUnavailable => {
                    conflicts += 1;
                    "not written: conflict, and markers cannot be written here"
                }
                // Reported, not a conflict: the rest of the pick was applied as chosen.
                AppliedAs::Refused => {
                    let why = refusals.get(f.path.as_str()).copied().unwrap_or("refused");
                    return (f.path.clone(), format!("not written: {why}"));
                }
            };
            (f.path.clone(), what.to_string())
        })
        .collect();
    Ok((
        PickReport {
            model: pick.to_string(),
            apply_id: report.apply_id,
            files,
        },
        conflicts,
    ))
}

fn row(result: &ModelResult, set: &ChangeSet) -> Row {
    let (status, error, stats, final_text) = match &result.outcome {
        Some(o) => (
            o.stop,
            o.error.clone().or_else(|| result.error.clone()),
            o.stats.clone(),
            o.final_text.clone(),
        ),
        None => (
            RunStop::Error,
            result.error.clone(),
            Default::default(),
            String::new(),
        ),
    };
    Row {
        model: result.label.clone(),
        status,
        error,
        files: set.files_changed(),
        added: set.added(),
        removed: set.removed(),
        usage: stats.usage,
        cost: stats.cost,
        elapsed_ms: stats.elapsed_ms,
        steps: stats.steps,
        tool_calls: stats.tool_calls,
        failed_edits: stats.failed_edits,
        final_text,
        diff: set.unified_diff(),
        changes: ChangedFile::all(set),
    }
}

fn print_results(
    args: &AskArgs,
    rows: &[Row],
    session: &str,
    pick: Option<&PickReport>,
) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    if args.json {
        let doc = json!({
            "version": 1,
            "session": session,
            "prompt": args.prompt,
            "models": rows,
            "pick": args.pick,
            "applied": pick,
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
        return Ok(());
    }
    write!(out, "{}", report::table(rows))?;
    for row in rows {
        writeln!(out)?;
        writeln!(
            out,
            "=== {} ({}, {} file(s), +{} -{}) ===",
            row.model,
            row.status.label(),
            row.files,
            row.added,
            row.removed
        )?;
        if let Some(error) = &row.error {
            writeln!(out, "note: {error}")?;
        }
        if !row.final_text.trim().is_empty() {
            writeln!(out, "{}", row.final_text.trim())?;
        }
        if row.diff.is_empty() {
            writeln!(out, "(no changes)")?;
        } else {
            // Symlinks first, unmistakably: `srclink -> src (symlink)`.
            for change in &row.changes {
                if let Some(label) = &change.symlink {
                    let target = label.split_once(" -> ").map_or("", |(_, t)| t);
                    match label.starts_with("symlink") {
                        true => writeln!(out, "{} -> {target} (symlink)", change.path)?,
                        false => writeln!(out, "{} ({label})", change.path)?,
                    }
                }
            }
            writeln!(out)?;
            write!(out, "{}", row.diff)?;
        }
    }
    if let Some(pick) = pick {
        writeln!(out)?;
        match &pick.apply_id {
            Some(id) => writeln!(out, "Applied {} (apply {id}):", pick.model)?,
            None => writeln!(out, "Nothing to write for {}:", pick.model)?,
        }
        for (path, what) in &pick.files {
            writeln!(out, "  {path}: {what}")?;
        }
        writeln!(out, "Undo with: versus rewind")?;
    } else if args.pick.as_deref() == Some("none") {
        writeln!(out)?;
        writeln!(out, "Recorded: none of them.")?;
    }
    Ok(())
}

/// Appends one runner event to the session log (a finished model also gets its whole
/// conversation recorded, so the session can be continued from it).
fn record(session: &mut Session, turn: u32, labels: &[String], event: &RunEvent) {
    let label = |entry: usize| labels.get(entry).cloned().unwrap_or_default();
    let mut records = Vec::new();
    match event {
        RunEvent::Agent { entry, event } => records.push(SessionRecord::Agent {
            turn,
            entry: *entry,
            model: label(*entry),
            event: event.clone(),
        }),
        RunEvent::WorkspaceReady { entry, root, mode } => records.push(SessionRecord::Workspace {
            turn,
            entry: *entry,
            root: root.clone(),
            mode: format!("{mode:?}").to_lowercase(),
        }),
        RunEvent::Finished { entry, result } => {
            records.push(SessionRecord::Finished {
                turn,
                entry: *entry,
                model: result.label.clone(),
                stop: result.outcome.as_ref().map(|o| o.stop),
                stats: result.outcome.as_ref().map(|o| o.stats.clone()),
                writes: result.writes.len(),
                error: result.error.clone(),
                final_text: result
                    .outcome
                    .as_ref()
                    .map(|o| o.final_text.clone())
                    .unwrap_or_default(),
            });
            if let Some(outcome) = &result.outcome {
                records.push(SessionRecord::Conversation {
                    turn,
                    model: result.label.clone(),
                    messages: outcome.messages.clone(),
                });
            }
        }
    }
    for record in records {
        // Logging must never stop a run; a full disk shows up in the apply step instead.
        let _ = session.append(&record);
    }
}

fn one_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    let mut cut: String = line.chars().take(100).collect();
    if cut.len() < text.len() {
        cut.push('…');
    }
    cut
}
