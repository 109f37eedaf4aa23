//! The run itself: check what was asked, open (or resume) the output folder, start the jobs
//! (at most `--jobs` at once), let the collector write what they report, and write the report.
//!
//! On cancellation (the caller's token: Ctrl+C, SIGTERM) running models are stopped, waiting
//! jobs never start, and the report is written with what finished; the checkpoint lets
//! `--resume` do the rest. The report is always rebuilt from the checkpoint as written, the
//! same way a resume reads it, so the two paths cannot drift apart.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::config::{Config, Env};
use crate::engine::{Concurrency, RunOptions};
use crate::engine::{
    EngineEvent, Op, SessionStart, StartNotice, StartOptions, Started, TurnTarget, start_session,
};
use crate::recipe::{Choice, Criterion, Recipe};
use crate::session::{Source, Store, now};
use crate::workspace::Isolation;

use super::assemble::{self, Frame};
use super::checkpoint::{self, CHECKPOINT_VERSION, Checkpoint, Header, HeaderModel, Record};
use super::collect::Collector;
use super::drive;
use super::layout::{self, Layout};
use super::models::{self, Prepared};
use super::plan::{Cell, Plan};
use super::progress::Progress;
use super::report::{Environment, ModelRun, Report};
use super::resume::{header_models, load_resume};
use super::{HeadlessError, OutDir, RunOutcome, RunRequest, Verdict, summary};

/// Runs the recipe as `request` says, until done or until `cancel` fires.
pub async fn run(
    request: RunRequest,
    config: &Config,
    env: &Env,
    cancel: CancellationToken,
) -> Result<RunOutcome, HeadlessError> {
    let recipe = Arc::new(request.recipe.clone());
    if recipe.tasks().is_empty() {
        return Err(HeadlessError::NoTasks(
            request.recipe_file.display().to_string(),
        ));
    }
    // Before anything is created: an untrusted recipe never loosens the sandbox.
    recipe.check_loosening(
        &config.sandbox,
        &request.recipe_file,
        request.recipe_may_loosen,
        crate::recipe::LooseningKind::ALL,
    )?;
    let isolation = recipe.isolation_for(&request.project);
    check_isolation(isolation, &recipe)?;
    let mut opened = open(&request, &recipe, config, env)?;
    let labels: Vec<String> = opened
        .prepared
        .entries
        .iter()
        .map(|e| e.label.clone())
        .collect();

    let mut progress = Progress::new(request.display, &opened.tasks, &labels);
    for warning in models::seed_warnings(&recipe, config) {
        progress.note(&format!("versus: warning: {warning}"));
    }
    let (recipe_servers, servers_note) =
        models::mcp_servers(&recipe, &request.recipe_file, request.recipe_may_loosen);
    if let Some(note) = servers_note {
        progress.note(&format!("versus: note: {note}"));
    }
    // Started once per model (per-model servers) or once for the run (shared ones), for
    // every task of the run: the plan lives as long as the run.
    let mcp = crate::mcp::plan(config, env, &request.project, recipe_servers);
    let sandbox = recipe.sandbox_settings(&config.sandbox, request.recipe_may_loosen);
    let sandbox_info = super::report::SandboxInfo::of(&sandbox);

    let mut done: BTreeSet<Cell> = BTreeSet::new();
    for (t, task) in opened.tasks.iter().enumerate() {
        for (m, model) in labels.iter().enumerate() {
            if let Some(run) = opened.earlier.get(&(task.clone(), model.clone())) {
                done.insert((t, m));
                progress.earlier((t, m), run);
            }
        }
    }
    let plan = Plan::new(recipe.task_mode(), opened.tasks.len(), labels.len());
    let jobs = request.jobs.unwrap_or(labels.len()).max(1);
    let run_cancel = cancel.child_token();
    if recipe.workspace.keep {
        // Kept workspaces must be real trees that outlive this process.
        crate::workspace::cow::set_copy_on_write(false);
    }
    let turns = drive::task_turns(
        &plan.remaining(&done),
        opened.tasks.len(),
        recipe.task_mode(),
        jobs,
    );
    // The tasks are turns of the run's session (independent ones several to a turn), run by
    // the engine as `versus ask` and the interface run theirs; a resume continues the same
    // session, so its log holds every attempt.
    let started = run_session(&request, &mut opened, &labels, &sandbox)?;
    let mut commands_unavailable = None;
    for notice in started.notices {
        match notice {
            StartNotice::SandboxOff(warning) => {
                progress.note(&format!("versus: WARNING: {warning}"));
            }
            StartNotice::CommandsRefused(err) => {
                progress.note(&format!(
                    "versus: model commands will be refused, and `run:` criteria reported as \
                     errors of the run: {err}"
                ));
                commands_unavailable = Some(err);
            }
            StartNotice::Leftover(err) => progress.note(&format!("versus: warning: {err}")),
            StartNotice::SessionGone(id) => progress.note(&format!(
                "versus: note: the run's session {id} is gone from .versus/sessions; the rest \
                 of the run is recorded in a new session"
            )),
        }
    }
    // The finished models of the reopened session's last turn the engine brings back (their
    // change sets are rebuilt before it takes a new turn).
    let restored_models = started.restored.map_or(0, |t| t.finished.len());
    let session = started.engine;
    let resumed_session = session.last_turn() > 0;
    let (handle, mut events) = session.spawn();
    let filter_recipe = Arc::clone(&recipe);
    let shared = drive::Shared {
        context: {
            let mut sources = config.context_sources(env);
            sources.skill_dirs = recipe.skill_dirs(&request.recipe_file);
            sources.sub_agents = recipe.sub_agents(config.sub_agents);
            sources
        },
        recipe: Arc::clone(&recipe),
        targets: opened
            .prepared
            .entries
            .iter()
            .zip(opened.prepared.windows.iter())
            .map(|(entry, window)| TurnTarget {
                label: entry.label.clone(),
                agent: entry.agent.clone(),
                window: *window,
            })
            .collect(),
        options: RunOptions {
            isolation,
            limits: {
                let mut limits = recipe.tool_limits();
                limits.allow_local_fetch = recipe.allows_local_fetch(request.recipe_may_loosen);
                limits
            },
            setup: recipe.workspace.setup.clone(),
            workspace_parent: None,
            spill_dir: opened.layout.path("spill"),
            output_filter: Some(Arc::new(
                move |tool: &str, text: String| match filter_recipe.output_filter(tool) {
                    Some(rule) => rule.apply(&text),
                    None => text,
                },
            )),
            sandbox,
            limit: Some(Concurrency::new(jobs)),
            mcp: mcp.clone(),
        },
        layout: opened.layout.clone(),
        cancel: run_cancel.clone(),
        commands_unavailable,
        resumed_session,
        restored_models,
    };
    let mut collector = Collector::new(
        &mut opened.checkpoint,
        &opened.layout,
        &opened.tasks,
        &labels,
        &mut progress,
        request.display,
    );
    let driven = drive::run(&shared, &turns, &handle, &mut events, &mut collector).await;
    let failure = collector.failure.take();
    // The session ends: its log closed, the last turn's workspaces removed (kept with
    // `keep: true`).
    let _ = handle.submit(Op::Shutdown {
        keep_workspaces: recipe.workspace.keep,
    });
    drop(handle);
    while let Some(event) = events.recv().await {
        if matches!(event, EngineEvent::Closed { .. }) {
            break;
        }
    }
    progress.finish();
    driven?;
    if let Some(err) = failure {
        return Err(err);
    }

    let environment = Environment {
        versus_version: env!("CARGO_PKG_VERSION").to_string(),
        started_at: opened.header.started_at.clone(),
        finished_at: now().rfc3339(),
        resumed: opened.resumes,
        project: request.project.display().to_string(),
        project_commit: assemble::project_commit(&request.project),
        os: std::env::consts::OS.to_string(),
        arch: std::env::consts::ARCH.to_string(),
        jobs,
        sandbox: Some(sandbox_info),
    };
    let report = final_report(&opened, &recipe, &labels, environment)?;
    write_report(&opened.layout, &report)?;
    let verdict = if cancel.is_cancelled() || !report.complete {
        Verdict::Interrupted
    } else if report.broken {
        Verdict::Broken
    } else if report.passed {
        Verdict::AllPassed
    } else {
        Verdict::SomeFailed
    };
    Ok(RunOutcome {
        report,
        out_dir: opened.layout.dir().to_path_buf(),
        verdict,
    })
}

/// The output folder of a run, ready for jobs.
struct Opened {
    /// Its files.
    layout: Layout,
    /// The open checkpoint.
    checkpoint: Checkpoint,
    /// What the run is (from the checkpoint when resuming).
    header: Header,
    /// How many times it has been resumed, this time included.
    resumes: u32,
    /// Runs finished by earlier processes, by (task, model).
    earlier: BTreeMap<(String, String), ModelRun>,
    /// The runnable models and the skipped ones.
    prepared: Prepared,
    /// Task names, in order.
    tasks: Vec<String>,
    /// The run's session, when the checkpoint names one (a resume continues it).
    session: Option<String>,
}

/// Starts the run's session through the engine's one start: the one the checkpoint names when
/// resuming (the session log is where every attempt of the run is recorded), else a new one,
/// named in the checkpoint; a session that is gone (removed by hand) is replaced by a new one
/// ([`StartNotice::SessionGone`]).
fn run_session(
    request: &RunRequest,
    opened: &mut Opened,
    labels: &[String],
    sandbox: &crate::exec::SandboxSettings,
) -> Result<Started, HeadlessError> {
    let start = match opened.session.clone() {
        Some(id) => SessionStart::ContinueOrNew {
            id,
            models: labels.to_vec(),
        },
        None => SessionStart::New(labels.to_vec()),
    };
    let started = start_session(
        start,
        StartOptions {
            project: &request.project,
            source: Source::Run,
            sandbox: Some(sandbox),
            refuse_if_interrupted: false,
        },
    )?;
    let id = started.engine.id().to_string();
    if opened.session.as_deref() != Some(id.as_str()) {
        opened
            .checkpoint
            .append(&Record::Session { id: id.clone() })?;
        opened.session = Some(id);
    }
    Ok(started)
}

/// Checks the request, prepares the models, and creates (or reopens) the output folder and
/// its checkpoint. Nothing is written before every check passed.
fn open(
    request: &RunRequest,
    recipe: &Recipe,
    config: &Config,
    env: &Env,
) -> Result<Opened, HeadlessError> {
    let tasks: Vec<String> = recipe.tasks().iter().map(|t| t.name.clone()).collect();
    let resumed = match (&request.out, request.resume) {
        (OutDir::Exact(dir), true) => Some(load_resume(dir, request)?),
        (OutDir::NewInStore(folder), true) => {
            return Err(HeadlessError::NothingToResume {
                path: folder.join(".versus").join("reports"),
                why: "no report folder of this recipe was found".to_string(),
            });
        }
        (OutDir::NewUnder(reports), true) => {
            return Err(HeadlessError::NothingToResume {
                path: reports.clone(),
                why: "no report folder of this recipe was found".to_string(),
            });
        }
        (OutDir::Exact(dir), false) if dir.join(layout::CHECKPOINT_FILE).exists() => {
            return Err(HeadlessError::OutDirInUse(dir.clone()));
        }
        _ => None,
    };
    let requested = match &resumed {
        Some(state) if !request.models_from_command_line => header_models(state)?,
        _ => request.models.clone(),
    };
    // Said at once, as `versus ask` says them, even with --quiet: before the error when no
    // model can run, and above the live table otherwise.
    let prepared = models::prepare(recipe, &requested, config, env, &mut |skipped| {
        let mut err = crate::sanitize::stderr();
        let _ = writeln!(err, "versus: {}", crate::sanitize::line(&skipped.warning()));
    })?;
    let labels: Vec<String> = prepared.entries.iter().map(|e| e.label.clone()).collect();

    let dir: PathBuf = match &request.out {
        OutDir::Exact(dir) => {
            std::fs::create_dir_all(dir)
                .map_err(|e| HeadlessError::io("create the output folder", dir, e))?;
            dir.clone()
        }
        OutDir::NewInStore(folder) => {
            let reports = Store::open(folder)?.reports();
            layout::create_report_dir(&reports, &layout::slug(&recipe.name), &now().compact())
                .map_err(|e| HeadlessError::io("create a report folder in", &reports, e))?
        }
        OutDir::NewUnder(reports) => {
            layout::create_report_dir(reports, &layout::slug(&recipe.name), &now().compact())
                .map_err(|e| HeadlessError::io("create a report folder in", reports, e))?
        }
    };
    let layout = Layout::new(&dir, &tasks, &labels);
    let started_at = now().rfc3339();
    let (checkpoint, header, resumes, earlier, session) = match resumed {
        Some(state) => {
            let mut checkpoint = Checkpoint::reopen(&layout.checkpoint())?;
            checkpoint.append(&Record::Resumed { at: started_at })?;
            (
                checkpoint,
                state.header,
                state.resumed + 1,
                state.finished,
                state.session,
            )
        }
        None => {
            let header = Header {
                checkpoint_version: CHECKPOINT_VERSION,
                run_id: dir
                    .file_name()
                    .map_or_else(|| "run".to_string(), |n| n.to_string_lossy().into_owned()),
                recipe_file: request.recipe_file.display().to_string(),
                recipe_hash: request.recipe_hash.clone(),
                recipe_name: recipe.name.clone(),
                tasks: tasks.clone(),
                models: requested
                    .iter()
                    .map(|m| HeaderModel {
                        spec: m.spec.to_string(),
                        script_base: m.script_base.clone(),
                    })
                    .collect(),
                project: request.project.display().to_string(),
                started_at,
            };
            let checkpoint = Checkpoint::create(&layout.checkpoint(), header.clone())?;
            (checkpoint, header, 0, BTreeMap::new(), None)
        }
    };
    Ok(Opened {
        layout,
        checkpoint,
        header,
        resumes,
        earlier,
        prepared,
        tasks,
        session,
    })
}

/// The report, from the checkpoint as written.
fn final_report(
    opened: &Opened,
    recipe: &Recipe,
    labels: &[String],
    environment: Environment,
) -> Result<Report, HeadlessError> {
    let replayed =
        checkpoint::State::replay(&checkpoint::read(&opened.layout.checkpoint())?.records)
            .ok_or_else(|| HeadlessError::NothingToResume {
                path: opened.layout.dir().to_path_buf(),
                why: "its checkpoint lost its header while the run went on".to_string(),
            })?;
    let finished: BTreeMap<(String, String), ModelRun> = replayed
        .finished
        .into_iter()
        .filter(|((t, m), _)| opened.tasks.contains(t) && labels.contains(m))
        .collect();
    Ok(assemble::report(
        Frame {
            run_id: &opened.header.run_id,
            recipe,
            recipe_file: &opened.header.recipe_file,
            recipe_hash: &opened.header.recipe_hash,
            environment,
            models: labels,
            skipped: &opened.prepared.skipped,
            layout: &opened.layout,
            session: opened.session.as_deref(),
        },
        &finished,
    ))
}

/// Refuses an isolation a headless run cannot check: in overlay mode the model's changes live
/// in memory, so commands (setup, `run:` criteria) would see the user's tree instead.
fn check_isolation(
    isolation: Isolation,
    recipe: &crate::recipe::Recipe,
) -> Result<(), HeadlessError> {
    if isolation != Isolation::Overlay {
        return Ok(());
    }
    let runs = recipe
        .criteria()
        .iter()
        .any(|c| matches!(c, Criterion::Run { .. }));
    if runs || recipe.workspace.setup.is_some() {
        return Err(HeadlessError::Unsupported(format!(
            "`isolation: {}` keeps each model's changes in memory, so `run:` criteria and the setup command would run in your real project instead of the model's version; use `isolation: copy` or `worktree` in ## Workspace",
            isolation.as_str()
        )));
    }
    Ok(())
}

/// Writes report.json and summary.md (each atomically). The JSON escapes every control and
/// invisible character in its strings (`\u001b`, `\u202e`: the same values to any JSON reader),
/// so the file is safe to `cat` as well as to parse.
fn write_report(layout: &Layout, report: &Report) -> Result<(), HeadlessError> {
    let mut json = crate::sanitize::json::to_string_pretty(report)
        .map_err(|e| HeadlessError::io("serialize the report", &layout.report(), e.into()))?
        .into_bytes();
    json.push(b'\n');
    crate::fsutil::atomic_write(&layout.report(), &json)
        .map_err(|e| HeadlessError::io("write", &layout.report(), e))?;
    crate::fsutil::atomic_write(&layout.summary(), summary::render(report).as_bytes())
        .map_err(|e| HeadlessError::io("write", &layout.summary(), e))
}
