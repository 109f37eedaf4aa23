//! The servers of a run: which start once per model (in its workspace, in its sandbox), which
//! once for the run, and the tools each model is given from them.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures::future::join_all;
use tokio_util::sync::CancellationToken;

use super::client::{Place, Server};
use super::schema;
use super::spec::{ServerSpec, Transport};
use super::tool::McpTool;
use crate::exec::{FsAccess, Sandbox, SandboxSettings, WorkspaceDirs};
use crate::tools::{Tool, ToolClass};

/// The MCP servers of one run, shared by every model entry of it (a clone of the `Arc` per
/// entry). A shared server starts when the first model asks for it and ends when the plan is
/// dropped (its process group is killed with it).
pub struct McpPlan {
    specs: Vec<Arc<ServerSpec>>,
    http: Option<reqwest::Client>,
    project: PathBuf,
    sandbox: SandboxSettings,
    shared: tokio::sync::OnceCell<Started>,
}

/// Servers started together and what they gave.
#[derive(Default)]
struct Started {
    servers: Vec<Arc<Server>>,
    tools: Vec<Arc<dyn Tool>>,
    problems: Vec<String>,
}

/// One model's MCP tools, and the servers started for it alone.
pub struct ModelServers {
    /// Tools to add to the model's registry, in server then tool order.
    pub tools: Vec<Arc<dyn Tool>>,
    /// What did not start or was left out, one sentence each (the run goes on without it).
    pub problems: Vec<String>,
    own: Vec<Arc<Server>>,
}

impl ModelServers {
    /// Ends the servers started for this model (before its workspace is scanned, so nothing
    /// writes after the scan).
    pub async fn shutdown(self) {
        join_all(self.own.iter().map(|s| s.shutdown())).await;
    }
}

impl McpPlan {
    /// The servers `specs` for a run in `project`; `sandbox` is the user's sandbox settings
    /// (a shared stdio server runs under them with the project read-only); `http` reaches
    /// Streamable HTTP servers (`None`: they do not start, and say why).
    pub fn new(
        specs: Vec<ServerSpec>,
        project: &Path,
        sandbox: SandboxSettings,
        http: Option<reqwest::Client>,
    ) -> McpPlan {
        McpPlan {
            specs: specs.into_iter().map(Arc::new).collect(),
            http,
            project: project.to_path_buf(),
            sandbox,
            shared: tokio::sync::OnceCell::new(),
        }
    }

    /// Whether there is any server.
    pub fn is_empty(&self) -> bool {
        self.specs.is_empty()
    }

    /// The servers.
    pub fn specs(&self) -> impl Iterator<Item = &ServerSpec> {
        self.specs.iter().map(|s| s.as_ref())
    }

    /// The sandbox of a server that is not a model's: the user's settings with the project
    /// folder read-only, so it can read the project but propose nothing and change nothing.
    pub(crate) fn project_place(&self) -> Place {
        let settings = SandboxSettings {
            filesystem: match self.sandbox.filesystem {
                FsAccess::Unrestricted => FsAccess::Unrestricted,
                _ => FsAccess::ReadOnly,
            },
            ..self.sandbox.clone()
        };
        Place {
            sandbox: Arc::new(Sandbox::new(
                &settings,
                WorkspaceDirs::tree_only(self.project.clone()),
            )),
            cwd: self.project.clone(),
        }
    }

    /// The tools of one model: its own servers started in `sandbox` with `root` (its
    /// workspace) as their working folder, then the shared servers (started by the first model
    /// that asks). Never fails: what did not start is in [`ModelServers::problems`].
    pub async fn for_model(
        &self,
        sandbox: Arc<Sandbox>,
        root: &Path,
        cancel: &CancellationToken,
    ) -> ModelServers {
        let place = Place {
            sandbox,
            cwd: root.to_path_buf(),
        };
        let own_specs: Vec<Arc<ServerSpec>> = self
            .specs
            .iter()
            .filter(|s| s.per_model())
            .cloned()
            .collect();
        let own = start_all(&own_specs, Some(place), &self.http, cancel).await;
        let shared = self
            .shared
            .get_or_init(|| async {
                let specs: Vec<Arc<ServerSpec>> = self
                    .specs
                    .iter()
                    .filter(|s| !s.per_model())
                    .cloned()
                    .collect();
                if specs.is_empty() {
                    return Started::default();
                }
                // The shared servers outlive any one model: not cancelled with the first.
                start_all(
                    &specs,
                    Some(self.project_place()),
                    &self.http,
                    &CancellationToken::new(),
                )
                .await
            })
            .await;
        // Tools in the order of the configured servers, whichever kind they are.
        let mut tools = Vec::new();
        for spec in &self.specs {
            let from = |started: &Started| -> Vec<Arc<dyn Tool>> {
                started
                    .tools
                    .iter()
                    .filter(|t| {
                        t.spec()
                            .name
                            .strip_prefix(spec.name.as_str())
                            .is_some_and(|rest| rest.starts_with("__"))
                    })
                    .cloned()
                    .collect()
            };
            tools.extend(if spec.per_model() {
                from(&own)
            } else {
                from(shared)
            });
        }
        let mut problems = own.problems;
        problems.extend(shared.problems.iter().cloned());
        ModelServers {
            tools,
            problems,
            own: own.servers,
        }
    }
}

/// Starts `specs` at once; each server's tools, or why it gave none.
async fn start_all(
    specs: &[Arc<ServerSpec>],
    place: Option<Place>,
    http: &Option<reqwest::Client>,
    cancel: &CancellationToken,
) -> Started {
    let servers: Vec<Arc<Server>> = specs
        .iter()
        .map(|spec| {
            let place = matches!(spec.transport, Transport::Stdio { .. })
                .then(|| place.clone())
                .flatten();
            Arc::new(Server::new(Arc::clone(spec), place, http.clone()))
        })
        .collect();
    let listed = join_all(servers.iter().map(|s| s.start(cancel))).await;
    let mut started = Started::default();
    for (server, listed) in servers.into_iter().zip(listed) {
        match listed {
            Ok(remote) => {
                let class = if server.spec().per_model() {
                    ToolClass::WorkspaceEffect
                } else {
                    ToolClass::ExternalEffect
                };
                let mut seen = std::collections::HashSet::new();
                for tool in remote {
                    let server_name = &server.spec().name;
                    let Some(name) = schema::tool_name(server_name, &tool.name) else {
                        started.problems.push(format!(
                            "MCP server `{server_name}`: a tool without a usable name was left out"
                        ));
                        continue;
                    };
                    if !seen.insert(name.clone()) {
                        started.problems.push(format!(
                            "MCP server `{server_name}`: tool `{}` was left out: its name is \
                             `{name}` once made valid for every provider, like another of its tools",
                            tool.name
                        ));
                        continue;
                    }
                    match schema::normalize(&tool.input_schema) {
                        Ok(parameters) => started.tools.push(Arc::new(
                            McpTool::new(
                                Arc::clone(&server),
                                &name,
                                &tool.name,
                                tool.description.as_deref().unwrap_or_default(),
                                parameters,
                                class,
                            )
                            .read_only(
                                tool.annotations.as_ref().and_then(|a| a.read_only_hint)
                                    == Some(true),
                            ),
                        )),
                        Err(reason) => started.problems.push(format!(
                            "MCP server `{server_name}`: tool `{}` was left out: {reason}",
                            tool.name
                        )),
                    }
                }
                started.servers.push(server);
            }
            Err(err) => {
                tracing::warn!(error = %err, "MCP server did not start");
                started.problems.push(err.to_string());
            }
        }
    }
    started
}

/// What `versus mcp list` shows of one server.
#[derive(Debug, Clone)]
pub struct ServerReport {
    /// Its name.
    pub name: String,
    /// Where it was configured.
    pub source: String,
    /// `stdio: npx -y ...` or `http: https://...`.
    pub reach: String,
    /// `per model` or `shared`.
    pub scope: &'static str,
    /// The protocol revision negotiated, its tools (offered name, description), or why not.
    pub status: Result<(String, Vec<(String, String)>), String>,
    /// Tools left out (a schema no provider takes).
    pub problems: Vec<String>,
}

/// Starts every server of `plan` (stdio ones read-only over the project), lists its tools and
/// stops it again: what `versus mcp list` prints.
pub async fn inspect(plan: &McpPlan) -> Vec<ServerReport> {
    let cancel = CancellationToken::new();
    let reports = plan.specs.iter().map(|spec| {
        let cancel = cancel.clone();
        async move {
            let started = start_all(
                std::slice::from_ref(spec),
                Some(plan.project_place()),
                &plan.http,
                &cancel,
            )
            .await;
            let status = match started.servers.first() {
                Some(server) => Ok((
                    server.protocol(),
                    started
                        .tools
                        .iter()
                        .map(|t| (t.spec().name.to_string(), t.spec().description.clone()))
                        .collect(),
                )),
                None => Err(started.problems.join("; ")),
            };
            let problems = if status.is_ok() {
                started.problems.clone()
            } else {
                Vec::new()
            };
            join_all(started.servers.iter().map(|s| s.shutdown())).await;
            ServerReport {
                name: spec.name.clone(),
                source: spec.source.clone(),
                reach: match &spec.transport {
                    Transport::Stdio { command, args, .. } => {
                        format!("stdio: {} {}", command, args.join(" "))
                            .trim_end()
                            .to_string()
                    }
                    Transport::Http { url, .. } => format!("http: {url}"),
                },
                scope: if spec.per_model() {
                    "per model"
                } else {
                    "shared"
                },
                status,
                problems,
            }
        }
    });
    join_all(reports).await
}

/// The plan of a run in `project`: the config's servers (user file, and the project's own
/// once trusted), then `extra` (a recipe's) unless the config names them; `None` when there
/// are none. The HTTP client is the providers' (one TLS stack, no redirects followed: a
/// token never goes where a redirect points).
pub fn plan(
    config: &crate::config::Config,
    env: &crate::config::Env,
    project: &Path,
    extra: Vec<ServerSpec>,
) -> Option<Arc<McpPlan>> {
    let specs = super::spec::merge(super::spec::from_config(config, env), extra);
    plan_of(specs, project, config)
}

/// The plan of exactly `specs` (`None` when empty), under `config`'s sandbox settings.
pub fn plan_of(
    specs: Vec<ServerSpec>,
    project: &Path,
    config: &crate::config::Config,
) -> Option<Arc<McpPlan>> {
    if specs.is_empty() {
        return None;
    }
    // Without a client (it cannot be built: never seen) HTTP servers say so when they start.
    let http = crate::provider::http::default_client()
        .inspect_err(|err| tracing::warn!(error = %err, "no HTTP client for MCP servers"))
        .ok();
    Some(Arc::new(McpPlan::new(
        specs,
        project,
        config.sandbox.clone(),
        http,
    )))
}
