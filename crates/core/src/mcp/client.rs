//! One live server: started (a stdio process in a sandbox, or a Streamable HTTP session),
//! its tools listed, its calls made with a time limit and cancellation, and restarted once
//! when it dies. Everything protocol is rmcp's; what versus adds is where the process runs,
//! the limits, and words for every way a server fails.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation,
    ProtocolVersion, Tool as RemoteTool,
};
use rmcp::service::{ClientLifecycleMode, RoleClient, RunningService, serve_client_with_lifecycle};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use tokio::io::AsyncReadExt;
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

use super::spec::{ServerSpec, Transport};
use crate::exec::{Sandbox, Service, Tail, start_service};

/// Bytes of a server's stderr kept for error messages (its last lines).
const STDERR_KEPT: usize = 4096;

/// Where a stdio server runs: a sandbox and the folder it starts in.
#[derive(Clone)]
pub struct Place {
    /// The sandbox (a model's workspace's, or the read-only one of a shared server).
    pub sandbox: Arc<Sandbox>,
    /// Its working folder (the model's workspace root).
    pub cwd: PathBuf,
}

/// Why a server is not usable.
#[derive(Debug, Clone, thiserror::Error)]
#[error("MCP server `{server}` {message}")]
pub struct ServerError {
    /// The server's name.
    pub server: String,
    /// What went wrong, in words for the user (ends with what to do where there is something).
    pub message: String,
}

/// A running session and the process behind it (stdio).
struct Live {
    service: RunningService<RoleClient, ClientConfig>,
    process: Option<Service>,
    stderr: Arc<std::sync::Mutex<Tail>>,
}

/// One server for its whole life in a run (one model's, or shared).
pub struct Server {
    spec: Arc<ServerSpec>,
    place: Option<Place>,
    http: Option<reqwest::Client>,
    live: Mutex<Option<Live>>,
    restarts: AtomicU32,
    protocol: std::sync::Mutex<String>,
}

/// What a call gave.
pub(crate) enum CallEnd {
    /// The server answered.
    Answered(CallToolResult),
    /// Past the tool's time limit.
    TimedOut(Duration),
    /// The model's run was cancelled.
    Cancelled,
    /// The server failed (crashed, broke the protocol); restarted or not, as said.
    Failed(String),
}

fn client_info() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("versus", env!("CARGO_PKG_VERSION")),
    )
}

/// The revision versus asks for first, and the one it falls back to with a server that
/// answers the 2026 discovery with an error (every server of the `initialize` era).
pub const PREFERRED_PROTOCOL: ProtocolVersion = ProtocolVersion::V_2026_07_28;
/// See [`PREFERRED_PROTOCOL`].
pub const FALLBACK_PROTOCOL: ProtocolVersion = ProtocolVersion::V_2025_11_25;

impl Server {
    /// A server not yet started; `place` is where a stdio server runs, `http` what reaches an
    /// HTTP one.
    pub fn new(
        spec: Arc<ServerSpec>,
        place: Option<Place>,
        http: Option<reqwest::Client>,
    ) -> Server {
        Server {
            spec,
            place,
            http,
            live: Mutex::new(None),
            restarts: AtomicU32::new(0),
            protocol: std::sync::Mutex::new(String::new()),
        }
    }

    /// Its configuration.
    pub fn spec(&self) -> &ServerSpec {
        &self.spec
    }

    /// The protocol revision negotiated with it (empty before it started).
    pub fn protocol(&self) -> String {
        self.protocol.lock().map(|p| p.clone()).unwrap_or_default()
    }

    fn fail(&self, message: impl Into<String>) -> ServerError {
        ServerError {
            server: self.spec.name.clone(),
            message: message.into(),
        }
    }

    /// Starts it and lists its tools, within its startup time limit.
    pub async fn start(&self, cancel: &CancellationToken) -> Result<Vec<RemoteTool>, ServerError> {
        if let Some(problem) = &self.spec.problem {
            return Err(self.fail(format!("was not started: {problem}")));
        }
        let limit = self.spec.startup_timeout;
        let started = tokio::select! {
            started = tokio::time::timeout(limit, self.connect()) => started,
            () = cancel.cancelled() => return Err(self.fail("was not started: the run was cancelled")),
        };
        let live = match started {
            Ok(Ok(live)) => live,
            Ok(Err(err)) => return Err(err),
            Err(_) => {
                return Err(self.fail(format!(
                    "did not answer within {} s of starting (startup_timeout in its config); \
                     it was stopped",
                    limit.as_secs_f64()
                )));
            }
        };
        let listed = tokio::time::timeout(limit, live.service.list_all_tools()).await;
        let tools = match listed {
            Ok(Ok(tools)) => tools,
            Ok(Err(err)) => {
                let why = self.describe(&live, &err.to_string());
                stop(live).await;
                return Err(self.fail(format!("could not list its tools: {why}")));
            }
            Err(_) => {
                stop(live).await;
                return Err(self.fail(format!(
                    "did not list its tools within {} s; it was stopped",
                    limit.as_secs_f64()
                )));
            }
        };
        if let Some(info) = live.service.peer_info()
            && let Ok(mut p) = self.protocol.lock()
        {
            *p = info.protocol_version.to_string();
        }
        *self.live.lock().await = Some(live);
        Ok(tools)
    }

    async fn connect(&self) -> Result<Live, ServerError> {
        let lifecycle = ClientLifecycleMode::Auto {
            preferred_versions: vec![PREFERRED_PROTOCOL],
            legacy_version: Some(FALLBACK_PROTOCOL),
        };
        let stderr = Arc::new(std::sync::Mutex::new(Tail::new(STDERR_KEPT)));
        match &self.spec.transport {
            Transport::Stdio { env, .. } => {
                let Some(place) = &self.place else {
                    return Err(self.fail("has no place to run (a bug)"));
                };
                let script = self.spec.script().unwrap_or_default();
                let mut process = start_service(&place.sandbox, &place.cwd, &script, env)
                    .map_err(|err| self.fail(format!("could not start: {err}")))?;
                if let Some(mut err_pipe) = process.stderr.take() {
                    let tail = Arc::clone(&stderr);
                    tokio::spawn(async move {
                        let mut buf = [0u8; 4096];
                        while let Ok(n) = err_pipe.read(&mut buf).await {
                            if n == 0 {
                                break;
                            }
                            if let Ok(mut t) = tail.lock() {
                                t.push(&buf[..n]);
                            }
                        }
                    });
                }
                let (Some(stdout), Some(stdin)) = (process.stdout.take(), process.stdin.take())
                else {
                    return Err(self.fail("could not start: its pipes are missing"));
                };
                match serve_client_with_lifecycle(client_info(), (stdout, stdin), lifecycle).await {
                    Ok(service) => Ok(Live {
                        service,
                        process: Some(process),
                        stderr,
                    }),
                    Err(err) => {
                        // Let its last words reach the tail before they are quoted.
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        let exited = process.exited();
                        process.stop().await;
                        Err(self.fail(format!(
                            "did not start as an MCP server: {}{}{}",
                            err,
                            exited.map_or(String::new(), |s| format!(" (it exited: {s})")),
                            last_lines(&stderr)
                        )))
                    }
                }
            }
            Transport::Http {
                url,
                headers,
                bearer,
            } => {
                let mut custom = std::collections::HashMap::new();
                for (name, value) in headers {
                    let name = reqwest::header::HeaderName::from_bytes(name.as_bytes())
                        .map_err(|_| self.fail(format!("has a bad header name `{name}`")))?;
                    let value = reqwest::header::HeaderValue::from_str(value).map_err(|_| {
                        self.fail(format!("has a header `{name}` whose value is not valid"))
                    })?;
                    custom.insert(name, value);
                }
                let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str())
                    .custom_headers(custom);
                if let Some(token) = bearer {
                    config = config.auth_header(token.clone());
                }
                let Some(http) = &self.http else {
                    return Err(self.fail("could not be reached: versus has no HTTP client here"));
                };
                let transport = StreamableHttpClientTransport::with_client(http.clone(), config);
                let service = serve_client_with_lifecycle(client_info(), transport, lifecycle)
                    .await
                    .map_err(|err| self.fail(format!("could not be reached at {url}: {err}")))?;
                Ok(Live {
                    service,
                    process: None,
                    stderr,
                })
            }
        }
    }

    /// An error with the process's end and last stderr lines, when there is a process.
    fn describe(&self, live: &Live, error: &str) -> String {
        format!("{error}{}", last_lines(&live.stderr))
    }

    /// Calls `tool` (its name on the server) with `arguments`; a dead server is restarted once
    /// per run before the call (a call it died in is not repeated: it may have acted).
    pub(crate) async fn call(
        &self,
        tool: &str,
        arguments: serde_json::Map<String, serde_json::Value>,
        cancel: &CancellationToken,
    ) -> CallEnd {
        let peer = {
            let mut live = self.live.lock().await;
            let dead = match live.as_mut() {
                None => true,
                Some(l) => {
                    l.service.is_closed()
                        || l.process.as_mut().is_some_and(|p| p.exited().is_some())
                }
            };
            if dead {
                if let Some(old) = live.take() {
                    stop(old).await;
                }
                if self.restarts.fetch_add(1, Ordering::SeqCst) >= 1 {
                    return CallEnd::Failed(format!(
                        "MCP server `{}` stopped and was already restarted once in this run; \
                         its tools are unavailable for the rest of the run",
                        self.spec.name
                    ));
                }
                tracing::warn!(server = %self.spec.name, "MCP server stopped; restarting it once");
                match tokio::time::timeout(self.spec.startup_timeout, self.connect()).await {
                    Ok(Ok(new)) => *live = Some(new),
                    Ok(Err(err)) => {
                        return CallEnd::Failed(format!(
                            "{err} (while restarting it after it stopped)"
                        ));
                    }
                    Err(_) => {
                        return CallEnd::Failed(format!(
                            "MCP server `{}` stopped, and restarting it took longer than {} s",
                            self.spec.name,
                            self.spec.startup_timeout.as_secs_f64()
                        ));
                    }
                }
            }
            match live.as_ref() {
                Some(l) => l.service.peer().clone(),
                None => {
                    return CallEnd::Failed(format!(
                        "MCP server `{}` is not running",
                        self.spec.name
                    ));
                }
            }
        };
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments);
        let limit = self.spec.tool_timeout;
        // Dropping the call (timeout, cancellation) sends the server `notifications/cancelled`.
        tokio::select! {
            answer = peer.call_tool(params) => match answer {
                Ok(result) => CallEnd::Answered(result),
                Err(err) => {
                    let mut live = self.live.lock().await;
                    let tail = live.as_ref().map(|l| last_lines(&l.stderr)).unwrap_or_default();
                    // A process whose pipe just closed may not be reaped yet: a moment's wait.
                    let mut exited = None;
                    for _ in 0..20 {
                        exited = live
                            .as_mut()
                            .and_then(|l| l.process.as_mut())
                            .and_then(|p| p.exited());
                        if exited.is_some() || live.as_ref().is_none_or(|l| l.process.is_none()) {
                            break;
                        }
                        tokio::time::sleep(Duration::from_millis(10)).await;
                    }
                    let closed = live.as_ref().is_none_or(|l| l.service.is_closed());
                    let name = &self.spec.name;
                    CallEnd::Failed(match exited {
                        Some(status) => {
                            let next = if self.restarts.load(Ordering::SeqCst) == 0 {
                                "it is restarted at the next call (once per run)"
                            } else {
                                "it was restarted once already, so its tools are unavailable \
                                 for the rest of the run"
                            };
                            format!(
                                "MCP server `{name}` stopped during the call ({status}); {next}{tail}"
                            )
                        }
                        None if closed => format!(
                            "MCP server `{name}` closed the connection during the call ({err}){tail}"
                        ),
                        None => format!("MCP server `{name}` answered with an error: {err}{tail}"),
                    })
                }
            },
            () = tokio::time::sleep(limit) => CallEnd::TimedOut(limit),
            () = cancel.cancelled() => CallEnd::Cancelled,
        }
    }

    /// Ends the session and its process.
    pub async fn shutdown(&self) {
        if let Some(live) = self.live.lock().await.take() {
            stop(live).await;
        }
    }
}

async fn stop(live: Live) {
    let Live {
        service, process, ..
    } = live;
    let _ = tokio::time::timeout(Duration::from_secs(1), service.cancel()).await;
    if let Some(process) = process {
        process.stop().await;
    }
}

/// `; its last output: ...` from a server's stderr, or nothing.
fn last_lines(stderr: &std::sync::Mutex<Tail>) -> String {
    let text = stderr.lock().map(|t| t.text()).unwrap_or_default();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        return String::new();
    }
    let start = lines.len().saturating_sub(5);
    format!("; its last output: {}", lines[start..].join(" | "))
}
