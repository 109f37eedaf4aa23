//! `versus ask PROMPT -m SPEC... [--pick SPEC|none] [--json] [--continue | --session ID]`: one
//! turn without the TUI, in a new session or continuing one.
//!
//! Fans the prompt out, prints progress on stderr, then the comparison table and each model's
//! diff (or one JSON document). `--pick` applies that model's change set through the apply
//! engine, exactly as the TUI does (snapshot + journal, so `versus rewind` undoes it), and logs
//! the choice to `.versus/preferences.jsonl`.
//!
//! Everything printed here can carry model- or project-controlled text (answers, file names,
//! diff lines, tool arguments), so nothing reaches stdout or stderr except through
//! [`versus::sanitize`]: the raw streams and `eprintln!` are denied in this module.
#![deny(clippy::disallowed_methods, clippy::print_stderr)]

pub(crate) mod pick;
mod progress;
mod report;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::bail;
use clap::{Args, ValueEnum};
use serde_json::json;

use versus::engine::AgentSettings;
use versus::engine::{
    EngineEvent, EngineEvents, EngineHandle, FinishedModel, HistoryPolicy, Op, SessionStart,
    StartNotice, StartOptions, TurnOutcome, TurnRequest, TurnTarget, start_session,
};
use versus::engine::{ModelRequest, RunOptions, resolve_models};
use versus::sanitize::{self, block, line};
use versus::session::Source;
use versus::tools::{ToolLimits, ToolRegistry};
use versus::workspace::Isolation;
use versus::workspace::changeset::ChangeSet;

pub use pick::ConflictArg;
use pick::{PickOptions, PickReport};
use progress::Progress;
use report::{ChangedFile, Row};

/// Exit code when the user interrupted the run.
const EXIT_INTERRUPTED: u8 = 130;

/// Exit code when the turn gave nothing usable (every model failed) or --pick left
/// conflicting files unwritten.
const EXIT_FAILED: u8 = 1;

/// Isolation mode names on the command line.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum IsolationArg {
    /// A git worktree at HEAD plus your uncommitted changes (default in a git repository).
    Worktree,
    /// A gitignore-aware copy of the project (default outside git).
    Copy,
    /// No copy: changes live in memory over your real tree; bash and setup are refused.
    InMemory,
    /// The old name of `in-memory` (the default workspaces are copy-on-write overlays).
    #[value(hide = true)]
    Overlay,
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

    /// Workspace isolation (default: worktree in a git repository, else copy; both are
    /// copy-on-write where Linux allows it).
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

    /// Give the setup command the network (to download dependencies); the models' own
    /// commands still run without it.
    #[arg(long, requires = "setup")]
    pub setup_network: bool,

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

    /// Continue the project's latest session: each model goes on with its conversation and
    /// reads what became of its last proposal (default models: the session's).
    #[arg(long = "continue", conflicts_with = "session")]
    pub continue_session: bool,

    /// Continue the session with this id (or id prefix; `versus sessions` lists them).
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,

    /// Leave out the closing line on how to keep a model's changes (`versus demo` says it
    /// its own way).
    #[arg(skip)]
    pub no_pick_hint: bool,
}

/// Runs the command.
pub fn run(
    args: AskArgs,
    project: Option<PathBuf>,
    config_file: Option<PathBuf>,
    trust: bool,
) -> anyhow::Result<ExitCode> {
    let project = super::project_dir(project)?;
    let runtime = super::runtime()?;
    super::on_runtime(&runtime, ask(args, project, config_file, trust))
}

async fn ask(
    args: AskArgs,
    project: PathBuf,
    config_file: Option<PathBuf>,
    trust: bool,
) -> anyhow::Result<ExitCode> {
    let (config, env) = versus::config::load(&project, config_file.as_deref(), trust)?;
    super::print_config_notices(&config, &env);
    let mcp = versus::mcp::plan(&config, &env, &project, Vec::new());
    // Nothing is created (no `.versus/`, no line in git's exclude file) before the turn can
    // start: the models are resolved and --pick checked first.
    let start = |refuse| StartOptions {
        project: &project,
        source: Source::Ask,
        sandbox: Some(&config.sandbox),
        refuse_if_interrupted: refuse,
    };
    let applies = args.pick.as_deref().is_some_and(|p| p != "none");
    let continued = match (&args.session, args.continue_session) {
        (Some(_), _) | (None, true) => Some(start_session(
            SessionStart::Continue {
                id: args.session.clone(),
                models: None,
            },
            start(applies),
        )?),
        (None, false) => None,
    };
    for skipped in continued.iter().flat_map(|r| &r.log.skipped) {
        say(&format!("versus: {skipped}"));
    }
    let models = continued.as_ref().map(|r| r.engine.models().to_vec());
    let targets = targets(&args, models.as_deref(), &project, &config, &env)?;
    let labels: Vec<String> = targets.iter().map(|t| t.label.clone()).collect();
    if let Some(pick) = &args.pick
        && pick != "none"
        && !labels.contains(pick)
    {
        bail!(
            "--pick {pick} is not one of the models of this run ({}); use one of them or `none`",
            labels.join(", ")
        );
    }
    let started = match continued {
        Some(started) => started,
        None => start_session(SessionStart::New(labels.clone()), start(applies))?,
    };
    // The one start of every front end: leftovers removed (one that cannot go is said and
    // skipped: it never stops this run), the sandbox checked (said with the notes below).
    let mut sandbox_notes = Vec::new();
    for notice in started.notices {
        match notice {
            StartNotice::Leftover(err) => say(&format!("versus: warning: {err}")),
            StartNotice::SandboxOff(warning) => {
                sandbox_notes.push(format!("versus: WARNING: {warning}"));
            }
            StartNotice::CommandsRefused(err) => {
                sandbox_notes.push(format!("versus: model commands will be refused: {err}"));
            }
            StartNotice::SessionGone(id) => say(&format!("versus: session {id} is gone")),
        }
    }
    let engine = started.engine;
    let (handle, mut events) = engine.spawn();
    let session_id = handle.info().id.clone();

    let progress = Progress::new(labels.clone(), args.quiet);
    let isolation = match args.isolation {
        Some(IsolationArg::Worktree) => Isolation::Worktree,
        Some(IsolationArg::Copy) => Isolation::Copy,
        Some(IsolationArg::InMemory) => Isolation::Overlay,
        Some(IsolationArg::Overlay) => {
            progress.note(
                "versus: note: `--isolation overlay` is now called `--isolation in-memory` \
                 (changes in memory, commands refused); the default workspaces are the \
                 copy-on-write ones",
            );
            Isolation::Overlay
        }
        None => Isolation::default_for(&project),
    };
    for note in sandbox_notes
        .into_iter()
        .chain(notes(isolation, labels.len(), &args.prompt))
    {
        progress.note(&note);
    }
    handle.submit(Op::StartTurn(TurnRequest {
        prompt: args.prompt.clone(),
        attached: String::new(),
        targets,
        options: RunOptions {
            isolation,
            limits: ToolLimits::default(),
            setup: args.setup.clone(),
            workspace_parent: None,
            spill_dir: handle.info().dir.join("spill"),
            output_filter: None,
            sandbox: {
                let mut sandbox = config.sandbox.clone();
                sandbox.setup_network |= args.setup_network;
                sandbox
            },
            limit: None,
            mcp,
        },
        policy: HistoryPolicy::default(),
        check: None,
        history_line: Some(args.prompt.clone()),
        workspaces: Default::default(),
        context: config.context_sources(&env),
        tasks: Vec::new(),
    }))?;
    let mut stop_signals = crate::cli::signals::StopSignals::new()?;
    let mut stopping = false;
    let mut finished = Vec::new();
    let (turn, outcome) = loop {
        tokio::select! {
            event = events.recv() => match event {
                Some(EngineEvent::Agent { entry, event, .. }) => progress.event(entry, &event),
                Some(EngineEvent::ModelFinished { model, change_set, .. }) => {
                    finished.push((model, change_set));
                }
                Some(EngineEvent::TurnEnded { turn, outcome }) => break (turn, outcome),
                Some(EngineEvent::Notice(text)) => progress.note(&format!("versus: {text}")),
                Some(EngineEvent::TurnContext { ledger, .. }) => {
                    // Only a difference is worth a line here; `sessions show` has the rest.
                    if ledger.iter().any(|e| !e.differs.is_empty()) {
                        for text in versus::engine::fairness_lines(&ledger, &|l| l.to_string()) {
                            progress.note(&format!("versus: warning: {text}"));
                        }
                    }
                }
                Some(EngineEvent::Failed { error, .. }) => {
                    close(&handle, &mut events, false).await;
                    return Err(error.into());
                }
                Some(_) => {}
                None => bail!("the session engine stopped before the turn ended"),
            },
            signal = stop_signals.next(), if !stopping => {
                stopping = true;
                progress.note(&format!(
                    "versus: {signal}, stopping every model (no file of yours is changed)"
                ));
                handle.submit(Op::CancelAll)?;
            }
        }
    };
    finished.sort_by_key(|(model, _)| model.entry);
    let mut sets = Vec::new();
    let mut rows = Vec::new();
    for (model, set) in finished {
        let set = match set {
            Ok(set) => set,
            Err(error) => {
                close(&handle, &mut events, false).await;
                return Err(error.into());
            }
        };
        rows.push(row(&model, &set));
        sets.push(set);
    }
    if outcome == TurnOutcome::Interrupted {
        print_results(&args, &rows, &session_id, None)?;
        close(&handle, &mut events, false).await;
        return Ok(ExitCode::from(EXIT_INTERRUPTED));
    }

    let mut exit = ExitCode::SUCCESS;
    if outcome == TurnOutcome::EveryModelFailed {
        exit = ExitCode::from(EXIT_FAILED);
    }
    let mut pick_report = None;
    if let Some(pick) = &args.pick {
        let options = PickOptions {
            on_conflict: args.on_conflict,
            no_wait: args.no_wait,
        };
        let request = pick::choice(&sets, pick, options, &args.prompt, turn)?;
        let outcome = match pick::choose(&handle, &mut events, request).await {
            Ok(outcome) => outcome,
            Err(error) => {
                close(&handle, &mut events, false).await;
                return Err(error);
            }
        };
        if let Some(error) = &outcome.preference_error {
            say(&format!("versus: {error}"));
        }
        if pick != "none" {
            let (report, conflicts) = PickReport::of(pick, &outcome);
            if conflicts > 0 {
                exit = ExitCode::from(EXIT_FAILED);
            }
            pick_report = Some(report);
        }
    }
    print_results(&args, &rows, &session_id, pick_report.as_ref())?;
    for (label, root) in close(&handle, &mut events, args.keep_workspaces).await {
        say(&format!("kept workspace of {label}: {}", root.display()));
    }
    if outcome == TurnOutcome::EveryModelFailed {
        say("versus: every model failed (each one's error is under its name above)");
    }
    if let Some(hint) = pick_hint(&args, &rows, &project) {
        say(&hint);
    }
    Ok(exit)
}

/// After a turn without `--pick` in which a model changed files: how to keep one of them
/// without running the models again (`versus pick`), naming the project when it is not the
/// current folder.
fn pick_hint(args: &AskArgs, rows: &[Row], project: &std::path::Path) -> Option<String> {
    if args.pick.is_some() || args.quiet || args.no_pick_hint {
        return None;
    }
    let first = rows.iter().find(|row| row.files > 0)?;
    let here = std::env::current_dir()
        .and_then(|dir| dir.canonicalize())
        .is_ok_and(|dir| dir == project);
    let folder = if here {
        String::new()
    } else {
        format!("-C {} ", sanitize::name(&project.display().to_string()))
    };
    Some(format!(
        "Keep one model's changes (the models do not run again): versus {folder}pick {} \
         (undo: versus {folder}rewind)",
        first.model
    ))
}

/// Ends the session (the `Ended` record, the workspaces removed unless kept) and waits for
/// the engine to say so; returns the workspaces kept.
pub(crate) async fn close(
    handle: &EngineHandle,
    events: &mut EngineEvents,
    keep_workspaces: bool,
) -> Vec<(String, PathBuf)> {
    if handle.submit(Op::Shutdown { keep_workspaces }).is_err() {
        return Vec::new();
    }
    while let Some(event) = events.recv().await {
        if let EngineEvent::Closed { kept } = event {
            return kept;
        }
    }
    Vec::new()
}

/// The models of `-m` (else those of the continued session, else the config's defaults) as
/// engine targets; a model whose key is missing is skipped with a warning.
fn targets(
    args: &AskArgs,
    continued: Option<&[String]>,
    project: &std::path::Path,
    config: &versus::config::Config,
    env: &versus::config::Env,
) -> anyhow::Result<Vec<TurnTarget>> {
    let texts: Vec<String> = match continued {
        Some(models) if args.models.is_empty() => models.to_vec(),
        _ => args.models.clone(),
    };
    let specs = if texts.is_empty() {
        let defaults = config.default_models_for(env);
        if let Some(note) = defaults.note() {
            say(&format!("versus: {note}"));
        }
        defaults.specs
    } else {
        texts
            .iter()
            .map(|text| config.parse_spec(text))
            .collect::<Result<Vec<_>, _>>()?
    };
    if specs.is_empty() {
        bail!(
            "no model given and no API key set: add -m PROVIDER/MODEL (e.g. -m demo/good -m openai/gpt-5), set a key (OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY, OPENROUTER_API_KEY) or Google credentials with a project (GOOGLE_APPLICATION_CREDENTIALS and GOOGLE_CLOUD_PROJECT, for Vertex) for its default model, or set `models` in the config"
        );
    }
    // Web search (off unless `[web_search]` is configured), the same for every model.
    let mut registry = ToolRegistry::builtin();
    if let Some(search) =
        versus::recipe::web_search_setup(config, env, None).map_err(|e| anyhow::anyhow!(e))?
    {
        registry = registry.with_web_search(search);
    }
    let tools = Arc::new(registry);
    let settings = AgentSettings {
        max_steps: args.max_steps,
        timeout: Duration::from_secs(args.timeout),
        max_cost: args.max_cost,
        ..AgentSettings::configured(config)
    };
    let requests: Vec<ModelRequest> = specs
        .into_iter()
        .map(|spec| ModelRequest {
            spec,
            script_base: project.to_path_buf(),
        })
        .collect();
    let roster = resolve_models(
        &requests,
        config,
        env,
        &tools,
        |_| settings.clone(),
        &mut |skipped| say(&format!("versus: {}", skipped.warning())),
    )?;
    Ok(roster
        .models
        .into_iter()
        .map(|m| TurnTarget {
            label: m.entry.label,
            agent: m.entry.agent,
            window: m.window,
        })
        .collect())
}

/// What `versus ask` says before the models start, after the sandbox's state: in-memory
/// isolation's limits, the prompt.
fn notes(isolation: Isolation, models: usize, prompt: &str) -> Vec<String> {
    let mut notes = Vec::new();
    if isolation == Isolation::Overlay {
        notes.push(
            "versus: in-memory isolation: model commands (bash, setup) are refused, since they \
             would run in your real project"
                .to_string(),
        );
    }
    notes.push(format!(
        "versus: {models} model(s) on: {}",
        one_line(prompt)
    ));
    notes
}

fn row(model: &FinishedModel, set: &ChangeSet) -> Row {
    let stats = &model.stats;
    Row {
        model: model.label.clone(),
        status: model.stop,
        error: model.error.clone(),
        files: set.files_changed(),
        added: set.added(),
        removed: set.removed(),
        usage: stats.usage,
        cost: stats.cost,
        elapsed_ms: stats.elapsed_ms,
        steps: stats.steps,
        tool_calls: stats.tool_calls,
        failed_calls: stats.tool_errors,
        failed_edits: stats.failed_edits,
        final_text: model.final_text.clone(),
        diff: set.unified_diff(),
        changes: ChangedFile::all(set),
    }
}

/// One line on stderr, escaped.
fn say(text: &str) {
    let _ = writeln!(sanitize::stderr(), "{}", line(text));
}

fn print_results(
    args: &AskArgs,
    rows: &[Row],
    session: &str,
    pick: Option<&PickReport>,
) -> anyhow::Result<()> {
    let mut out = sanitize::stdout();
    if args.json {
        let doc = json!({
            "version": 1,
            "session": session,
            "prompt": args.prompt,
            "models": rows,
            "pick": args.pick,
            "applied": pick,
        });
        writeln!(out, "{}", sanitize::json::to_string_pretty(&doc)?)?;
        return Ok(());
    }
    write!(out, "{}", report::table(rows))?;
    for row in rows {
        writeln!(out)?;
        writeln!(
            out,
            "=== {} ({}, {} file(s), +{} -{}) ===",
            line(&row.model),
            row.status.label(),
            row.files,
            row.added,
            row.removed
        )?;
        if let Some(error) = &row.error {
            writeln!(out, "note: {}", block(error))?;
        }
        if !row.final_text.trim().is_empty() {
            writeln!(out, "{}", block(row.final_text.trim()))?;
        }
        if row.diff.is_empty() {
            writeln!(out, "(no changes)")?;
        } else {
            // What a diff alone would not make plain, first: links (and whether apply would
            // refuse them), binary changes, lines holding bytes shown escaped.
            for change in &row.changes {
                for note in report::notes(change) {
                    writeln!(out, "{note}")?;
                }
            }
            writeln!(out)?;
            // The diff's names are quoted already; its lines are escaped on the way out.
            write!(out, "{}", block(&row.diff))?;
        }
    }
    if let Some(pick) = pick {
        writeln!(out)?;
        pick.write(&mut out)?;
    } else if args.pick.as_deref() == Some("none") {
        writeln!(out)?;
        writeln!(out, "Recorded: none of them.")?;
    }
    out.flush()?;
    Ok(())
}

/// The first line of `text`, at most 100 characters, `…` where cut.
pub(crate) fn one_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    let mut cut: String = line.chars().take(100).collect();
    if cut.len() < text.len() {
        cut.push('…');
    }
    cut
}
