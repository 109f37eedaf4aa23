//! The fan-out: N model entries at once, each on its prompt in its own workspace, each result
//! delivered as soon as that model ends. An engine turn starts its models through it.
//!
//! The runner owns workspaces and cancellation; it knows nothing of how results are shown.
//! Everything it learns goes out as [`RunEvent`]s on one channel, tagged with the entry's
//! position, so the TUI, `versus ask` and headless reports consume the same stream.
//!
//! Two things let a headless run go through the same fan-out as a turn of the interface: a
//! [`Concurrency`] limit shared by every fan-out given it (`versus run --jobs N`: at most N
//! models at once over the whole run, started in entry order), and an entry that continues in
//! the workspace of its previous turn ([`EntryRun::workspace`]: a sequential job's tasks in one
//! workspace) instead of a new one.

mod entries;
mod models;

use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio_util::sync::CancellationToken;

pub use entries::{client_for, entry_for};
pub use models::{
    ModelRequest, Roster, RosterError, RosterModel, SkippedModel, Unrunnable, resolve_models,
    runnable,
};

use crate::agent::{Agent, AgentOutcome, EventSink, ToolEnv};
use crate::exec::SandboxSettings;
use crate::model::{AgentEvent, Message};
use crate::tools::ToolLimits;
use crate::workspace::{Base, FileWrite, Isolation, Workspace, WorkspaceError};

/// One model entry of a run (the same model may appear twice, as `openai/gpt-5#2`).
#[derive(Clone)]
pub struct ModelEntry {
    /// Label shown everywhere (`openai/gpt-5#2`).
    pub label: String,
    /// The configured model.
    pub agent: Agent,
    /// This entry's conversation before the prompt (empty on the first turn).
    pub history: Vec<Message>,
}

/// How workspaces are made and tools limited.
#[derive(Clone)]
pub struct RunOptions {
    /// Isolation mode.
    pub isolation: Isolation,
    /// Tool limits.
    pub limits: ToolLimits,
    /// Setup command run once in each new workspace (`npm ci`).
    pub setup: Option<String>,
    /// Folder workspaces are created under (default: the system temp folder).
    pub workspace_parent: Option<PathBuf>,
    /// Folder for bash's spilled outputs.
    pub spill_dir: PathBuf,
    /// Cuts tool results the tools cannot cut themselves (a recipe's Output Processing).
    pub output_filter: Option<crate::agent::OutputFilter>,
    /// How model commands (bash, setup) are confined.
    pub sandbox: SandboxSettings,
    /// At most this many entries run at once, over every fan-out given the same limit
    /// (`None`: no limit).
    pub limit: Option<Concurrency>,
    /// The run's MCP servers (`None`: none): a model's own servers start in its workspace
    /// once that is ready, and their tools join its registry for the turn.
    pub mcp: Option<Arc<crate::mcp::McpPlan>>,
}

/// A limit on how many entries run at once, shared by every fan-out given a clone of it
/// (`versus run --jobs N` over all of a run's turns). Entries of one fan-out start in order:
/// entry 2 never starts before entry 1.
#[derive(Debug, Clone)]
pub struct Concurrency {
    permits: Arc<Semaphore>,
    /// Keeps the start order across fan-outs too: one dispatcher at a time takes permits.
    order: Arc<tokio::sync::Mutex<()>>,
}

impl Concurrency {
    /// At most `n` entries at once (`n` of 0 counts as 1).
    pub fn new(n: usize) -> Self {
        Self {
            permits: Arc::new(Semaphore::new(n.max(1))),
            order: Arc::new(tokio::sync::Mutex::new(())),
        }
    }

    /// Places free now.
    pub fn available(&self) -> usize {
        self.permits.available_permits()
    }

    /// Waits for a free place; `None` when `cancel` fires first.
    async fn acquire(&self, cancel: &CancellationToken) -> Option<OwnedSemaphorePermit> {
        tokio::select! {
            permit = Arc::clone(&self.permits).acquire_owned() => permit.ok(),
            () = cancel.cancelled() => None,
        }
    }
}

/// What the runner reports.
#[derive(Debug)]
pub enum RunEvent {
    /// The entry got its place (under a [`Concurrency`] limit it may wait for one first):
    /// its workspace is being prepared. A front end tells waiting from preparing by it.
    Started {
        /// Entry position.
        entry: usize,
    },
    /// The entry's workspace exists (its root, for "open workspace").
    WorkspaceReady {
        /// Entry position.
        entry: usize,
        /// Workspace root.
        root: PathBuf,
        /// Mode actually used (worktree may fall back to copy).
        mode: Isolation,
    },
    /// An event of the entry's agent.
    Agent {
        /// Entry position.
        entry: usize,
        /// The event.
        event: AgentEvent,
    },
    /// The entry's tool servers started (only when the run has any): every tool it got, its
    /// servers' included, so the fairness ledger hashes what it was actually given (a server
    /// that failed for this model only is a difference, not only an error event).
    ToolsGiven {
        /// Entry position.
        entry: usize,
        /// Its tools with their schemas, in the order it is offered them.
        tools: Vec<crate::model::ToolDef>,
    },
    /// The entry ended; its result is ready to review.
    Finished {
        /// Entry position.
        entry: usize,
        /// Everything about its run.
        result: Box<ModelResult>,
    },
}

/// One entry's finished run.
#[derive(Debug)]
pub struct ModelResult {
    /// Entry label.
    pub label: String,
    /// The agent's outcome (`None` when the workspace could not be prepared).
    pub outcome: Option<AgentOutcome>,
    /// The workspace (kept alive for review, checks and "open workspace"; dropped = removed).
    pub workspace: Option<Workspace>,
    /// Recorded writes in order, then the changes bash made (found after the run).
    pub writes: Vec<FileWrite>,
    /// A failure outside the agent: workspace creation, setup command, bash-change scan; then
    /// what the scan left out and build output it proposed, said once each.
    pub error: Option<String>,
    /// The notes at the end of `error`, as appended (what the scan left out, build output
    /// proposed): `versus run` reports them apart from the model's error.
    pub notes: Vec<String>,
    /// What the change scan left out of the proposals (too large, too deep, unreadable), one
    /// text per path.
    pub scan_notes: Vec<String>,
}

/// One entry of [`fan_out_each`]: the model, its own prompt (a next-turn note differs from
/// model to model) and the token that cancels it.
pub struct EntryRun {
    /// The model.
    pub entry: ModelEntry,
    /// What it is sent.
    pub prompt: Message,
    /// Cancels this entry (its bash children are killed).
    pub cancel: CancellationToken,
    /// The workspace to continue in (the entry's previous turn's, for a sequential job), or
    /// `None` for a new one. A continued workspace gets no setup command and keeps what the
    /// earlier turns changed; its proposals are still taken against the turn's base.
    pub workspace: Option<Workspace>,
}

/// Starts every entry on its own prompt; events are tagged with the entry's position. The
/// channel closes after the last `Finished`. With a [`Concurrency`] limit, entries start in
/// order as places free up; an entry cancelled before its start ends at once (cancelled,
/// without a workspace unless it was given one).
pub fn fan_out_each(
    base: Arc<Base>,
    runs: Vec<EntryRun>,
    options: RunOptions,
) -> mpsc::UnboundedReceiver<RunEvent> {
    let (tx, rx) = mpsc::unbounded_channel();
    match options.limit.clone() {
        None => {
            for (index, run) in runs.into_iter().enumerate() {
                spawn_entry(index, run, Arc::clone(&base), options.clone(), None, &tx);
            }
        }
        Some(limit) => {
            tokio::spawn(async move {
                let _turn = limit.order.lock().await;
                for (index, run) in runs.into_iter().enumerate() {
                    match limit.acquire(&run.cancel).await {
                        Some(permit) => spawn_entry(
                            index,
                            run,
                            Arc::clone(&base),
                            options.clone(),
                            Some(permit),
                            &tx,
                        ),
                        None => not_started(index, run, &tx),
                    }
                }
            });
        }
    }
    rx
}

fn spawn_entry(
    index: usize,
    run: EntryRun,
    base: Arc<Base>,
    options: RunOptions,
    permit: Option<OwnedSemaphorePermit>,
    tx: &mpsc::UnboundedSender<RunEvent>,
) {
    let tx = tx.clone();
    let _ = tx.send(RunEvent::Started { entry: index });
    tokio::spawn(async move {
        let result = run_entry(index, run, base, options, tx.clone()).await;
        // The place frees up before the result is handed on: the next entry may start while
        // this one's result is recorded.
        drop(permit);
        let _ = tx.send(RunEvent::Finished {
            entry: index,
            result: Box::new(result),
        });
    });
}

/// An entry cancelled while it waited for its place: it ends cancelled without running, with
/// its conversation as it was and the workspace it was given (if any) handed back.
fn not_started(index: usize, run: EntryRun, tx: &mpsc::UnboundedSender<RunEvent>) {
    let stop = crate::model::RunStop::Cancelled;
    let _ = tx.send(RunEvent::Agent {
        entry: index,
        event: AgentEvent::Finished { stop },
    });
    let _ = tx.send(RunEvent::Finished {
        entry: index,
        result: Box::new(ModelResult {
            label: run.entry.label,
            outcome: Some(AgentOutcome {
                stop,
                error: None,
                final_text: String::new(),
                stats: crate::model::RunStats::default(),
                messages: run.entry.history,
            }),
            workspace: run.workspace,
            writes: Vec::new(),
            error: None,
            notes: Vec::new(),
            scan_notes: Vec::new(),
        }),
    });
}

async fn run_entry(
    index: usize,
    run: EntryRun,
    base: Arc<Base>,
    options: RunOptions,
    tx: mpsc::UnboundedSender<RunEvent>,
) -> ModelResult {
    let EntryRun {
        entry,
        prompt,
        cancel,
        workspace,
    } = run;
    let label = entry.label.clone();
    let failed = |error: String| ModelResult {
        label: label.clone(),
        outcome: None,
        workspace: None,
        writes: Vec::new(),
        error: Some(error),
        notes: Vec::new(),
        scan_notes: Vec::new(),
    };
    let prepared = match workspace {
        Some(workspace) => Ok(workspace),
        None => {
            prepare_workspace(
                &entry.label,
                Arc::clone(&base),
                options.isolation,
                options.setup.clone(),
                options.workspace_parent.clone(),
                &options.sandbox,
                &cancel,
            )
            .await
        }
    };
    let workspace = match prepared {
        Ok(workspace) => workspace,
        Err(err) => {
            let message = format!("{}: {err}", entry.label);
            tracing::error!(model = %entry.label, error = %err, "workspace could not be prepared");
            let _ = tx.send(RunEvent::Agent {
                entry: index,
                event: AgentEvent::Error {
                    message: message.clone(),
                    context_overflow: false,
                },
            });
            let _ = tx.send(RunEvent::Agent {
                entry: index,
                event: AgentEvent::Finished {
                    stop: crate::model::RunStop::Error,
                },
            });
            return failed(message);
        }
    };
    tracing::info!(
        model = %entry.label,
        root = %workspace.root().display(),
        mode = ?workspace.mode(),
        copy_on_write = workspace.is_copy_on_write(),
        "workspace ready"
    );
    let _ = tx.send(RunEvent::WorkspaceReady {
        entry: index,
        root: workspace.root().to_path_buf(),
        mode: workspace.mode(),
    });
    let sandbox = Arc::new(workspace.sandbox(&options.sandbox));
    let env = ToolEnv {
        view: workspace.view(),
        limits: options.limits.clone(),
        spill_dir: options.spill_dir.clone(),
        output_filter: options.output_filter.clone(),
        sandbox: Arc::clone(&sandbox),
    };
    let sink_tx = tx.clone();
    let emit: EventSink = Arc::new(move |event| {
        let _ = sink_tx.send(RunEvent::Agent {
            entry: index,
            event,
        });
    });
    // The model's MCP servers: its own in its workspace and sandbox, the run's shared ones.
    // One that does not start is said in the model's events and the run goes on without it.
    let mut agent = entry.agent.clone();
    let servers = match &options.mcp {
        Some(plan) if !plan.is_empty() => {
            let servers = plan.for_model(sandbox, workspace.root(), &cancel).await;
            for problem in &servers.problems {
                emit(AgentEvent::Error {
                    message: problem.clone(),
                    context_overflow: false,
                });
            }
            agent.tools = Arc::new(agent.tools.with_tools(servers.tools.clone()));
            let _ = tx.send(RunEvent::ToolsGiven {
                entry: index,
                tools: agent.tool_defs(),
            });
            Some(servers)
        }
        _ => None,
    };
    let outcome = run_agent(&agent, entry.history, prompt, &env, &emit, cancel).await;
    // Its servers end before the scan: nothing of theirs writes after the change set is taken.
    if let Some(servers) = servers {
        servers.shutdown().await;
    }
    let recorded = workspace.writes();
    // An in-memory workspace runs no command (it has no tree of its own to run one in), so
    // nothing but its recorded writes changed it: no scan (it would walk the real project).
    let (workspace, found) = if workspace.mode() == Isolation::Overlay {
        (Some(workspace), Ok(Vec::new()))
    } else {
        collect_bash_changes(workspace, Arc::clone(&base)).await
    };
    let mut writes = recorded;
    let mut error = None;
    match found {
        Ok(changes) => writes.extend(changes),
        Err(err) => {
            error = Some(format!(
                "could not scan the workspace for bash changes: {err}"
            ))
        }
    }
    // What the scan left out (too large, too deep, unreadable) is said, never dropped; and
    // a build's output proposed only because the project does not ignore it, with the fix.
    let mut paths: Vec<&str> = writes.iter().map(|w| w.path.as_str()).collect();
    paths.sort_unstable();
    paths.dedup();
    let scan = workspace
        .as_ref()
        .map(|w| w.scan_notes())
        .unwrap_or_default();
    let scan_notes = scan.iter().map(ToString::to_string).collect();
    let notes: Vec<String> = crate::workspace::ScanNote::summary(&scan)
        .into_iter()
        .chain(crate::workspace::build_output_notes(paths))
        .collect();
    for note in notes.iter().cloned() {
        error = Some(match error {
            Some(error) => format!("{error}; {note}"),
            None => note,
        });
    }
    ModelResult {
        label,
        outcome: Some(outcome),
        workspace,
        writes,
        error,
        notes,
        scan_notes,
    }
}

async fn run_agent(
    agent: &Agent,
    history: Vec<Message>,
    prompt: Message,
    env: &ToolEnv,
    emit: &EventSink,
    cancel: CancellationToken,
) -> AgentOutcome {
    agent.run_turn(history, prompt, env, emit, cancel).await
}

/// Creates a workspace for `label` (under `parent`, or the default folder) on the blocking
/// pool, then runs the setup command in its sandbox. Shared by the fan-out and headless runs,
/// so both prepare workspaces the same way.
pub async fn prepare_workspace(
    label: &str,
    base: Arc<Base>,
    isolation: Isolation,
    setup: Option<String>,
    parent: Option<PathBuf>,
    sandbox: &SandboxSettings,
    cancel: &CancellationToken,
) -> Result<Workspace, WorkspaceError> {
    let label = label.to_string();
    // An in-memory workspace is only a view of the project: nothing to copy, made in place
    // (a hop to the blocking pool would cost more than the work).
    if isolation == Isolation::Overlay {
        return match &parent {
            Some(parent) => Workspace::create_in(parent, isolation, &base, &label),
            None => Workspace::create(isolation, &base, &label),
        };
    }
    let joined = tokio::task::spawn_blocking(move || match &parent {
        Some(parent) => Workspace::create_in(parent, isolation, &base, &label),
        None => Workspace::create(isolation, &base, &label),
    })
    .await;
    let workspace = joined.unwrap_or_else(|join| {
        Err(WorkspaceError::io(
            "prepare the workspace in",
            std::path::Path::new("."),
            std::io::Error::other(join.to_string()),
        ))
    })?;
    if let Some(command) = &setup {
        workspace
            .run_setup(
                command,
                // Setup alone may get the network (`setup_network`): installs download.
                &workspace.sandbox(&sandbox.for_setup()),
                crate::workspace::SETUP_TIMEOUT,
                cancel,
            )
            .await?;
    }
    Ok(workspace)
}

async fn collect_bash_changes(
    workspace: Workspace,
    base: Arc<Base>,
) -> (Option<Workspace>, Result<Vec<FileWrite>, WorkspaceError>) {
    let joined = tokio::task::spawn_blocking(move || {
        let found = workspace.bash_changes(&base);
        (workspace, found)
    })
    .await;
    match joined {
        Ok((workspace, found)) => (Some(workspace), found),
        Err(join) => (
            None,
            Err(WorkspaceError::io(
                "scan",
                std::path::Path::new("."),
                std::io::Error::other(join.to_string()),
            )),
        ),
    }
}
