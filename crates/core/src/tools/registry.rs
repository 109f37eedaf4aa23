//! The registry: tool lookup by name, schema validation, typed parsing, dispatch.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{ToolClass, ToolContext, ToolError, ToolOutput, ToolSpec, args};

/// A tool as the agent loop sees it: a spec and a call on raw JSON arguments.
pub trait Tool: Send + Sync {
    /// The canonical definition.
    fn spec(&self) -> &ToolSpec;
    /// Validates `args` against the schema, runs the tool, and turns every failure into an
    /// error result (a tool never fails the loop).
    fn call<'a>(&'a self, args: &'a Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput>;
    /// Whether its calls may run at the same time as other such calls of one step: it only
    /// reads (the model's view, the web, a server's read-only tool), so running it beside
    /// another read changes nothing either sees. The agent loop runs these concurrently and
    /// everything else (writes, bash) one by one, in order.
    fn concurrent(&self) -> bool {
        self.spec().class == ToolClass::ReadOnly
    }
    /// What else a fair comparison must know of this tool beyond its definition (web_search:
    /// its backend), for the fairness ledger; `None` when its definition says it all.
    fn ledger(&self) -> Option<String> {
        None
    }
}

/// A tool with typed arguments. The adapter below does validation and parsing once for all.
pub(crate) trait Handler: Send + Sync + 'static {
    /// Arguments, parsed after the schema check passed.
    type Args: DeserializeOwned + Send + 'static;
    /// Calls may run beside other concurrent calls although the tool is not
    /// [`ToolClass::ReadOnly`] (web_fetch, web_search: they read the web, not the workspace).
    const CONCURRENT: bool = false;
    /// See [`Tool::ledger`].
    fn ledger(&self) -> Option<String> {
        None
    }
    /// Runs the tool.
    fn run<'a>(
        &'a self,
        args: Self::Args,
        ctx: &'a ToolContext,
    ) -> impl Future<Output = Result<ToolOutput, ToolError>> + Send + 'a;
}

struct Typed<H> {
    spec: ToolSpec,
    handler: H,
}

impl<H: Handler> Tool for Typed<H> {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn concurrent(&self) -> bool {
        H::CONCURRENT || self.spec.class == ToolClass::ReadOnly
    }

    fn ledger(&self) -> Option<String> {
        self.handler.ledger()
    }

    fn call<'a>(&'a self, args: &'a Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            let name = self.spec.name;
            if let Err(reason) = args::validate(&self.spec.parameters, args) {
                return ToolOutput::error(
                    ToolError::InvalidArgs { tool: name, reason }.to_string(),
                );
            }
            let parsed: H::Args = match serde_json::from_value(strip_nulls(args)) {
                Ok(a) => a,
                Err(e) => {
                    return ToolOutput::error(
                        ToolError::InvalidArgs {
                            tool: name,
                            reason: e.to_string(),
                        }
                        .to_string(),
                    );
                }
            };
            match self.handler.run(parsed, ctx).await {
                Ok(out) => out,
                Err(e) => ToolOutput::from_error(&e),
            }
        })
    }
}

/// `null` for an optional field means "use the default"; serde's `default` only covers absence.
fn strip_nulls(args: &Value) -> Value {
    match args {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Runs a synchronous tool body on the blocking pool, so file walks and large reads never stall
/// the async runtime that streams other models' events. A panic in the body becomes an error
/// result naming the tool instead of tearing down the loop.
pub(crate) async fn run_blocking<A: Send + 'static>(
    tool: &'static str,
    args: A,
    ctx: &ToolContext,
    body: fn(&A, &ToolContext) -> Result<ToolOutput, ToolError>,
) -> Result<ToolOutput, ToolError> {
    let mut ctx = ctx.clone();
    // The body gets its own token: on a timeout it is told to stop (walks and searches check
    // it), and the call returns at once either way.
    let outer = ctx.cancel.clone();
    let stop = outer.child_token();
    ctx.cancel = stop.clone();
    let limit = ctx.limits.blocking_timeout;
    let work = tokio::task::spawn_blocking(move || body(&args, &ctx));
    tokio::select! {
        done = work => {
            done.map_err(|e| ToolError::failed(format!("{tool} stopped unexpectedly: {e}")))?
        }
        () = tokio::time::sleep(limit) => {
            stop.cancel();
            Err(ToolError::TimedOut(format!(
                "{tool} timed out after {} s and was stopped; narrow the request (a smaller \
                 path, a more specific pattern) and try again",
                limit.as_secs_f64()
            )))
        }
        () = outer.cancelled() => {
            stop.cancel();
            Err(ToolError::Cancelled(format!("{tool} was cancelled")))
        }
    }
}

pub(crate) fn typed<H: Handler>(spec: ToolSpec, handler: H) -> Arc<dyn Tool> {
    Arc::new(Typed { spec, handler })
}

/// The set of tools offered to a model, in a stable order, with recipe overrides of
/// descriptions and guidance applied.
#[derive(Clone)]
pub struct ToolRegistry {
    tools: Vec<Arc<dyn Tool>>,
    overrides: BTreeMap<&'static str, (Option<String>, Option<String>)>,
}

impl ToolRegistry {
    /// Every built-in tool.
    pub fn builtin() -> Self {
        Self {
            tools: vec![
                super::read_file::tool(),
                super::write_file::tool(),
                super::edit_file::tool(),
                super::apply_patch::tool(),
                super::list_directory::tool(),
                super::search_files::tool(),
                super::search_code::tool(),
                super::bash::tool(),
                super::web_fetch::tool(),
            ],
            overrides: BTreeMap::new(),
        }
    }

    /// Keeps only the named tools (a recipe's Tools section). Unknown names are returned so the
    /// caller can report them instead of silently dropping them.
    pub fn retain(&mut self, names: &[&str]) -> Vec<String> {
        let unknown = names
            .iter()
            .filter(|n| self.get(n).is_none())
            .map(|n| n.to_string())
            .collect();
        self.tools.retain(|t| names.contains(&t.spec().name));
        unknown
    }

    /// Keeps only the tools whose own spec passes `keep` (a sub-agent role's tools).
    pub(crate) fn keep(&mut self, keep: impl Fn(&ToolSpec) -> bool) {
        self.tools.retain(|t| keep(t.spec()));
    }

    /// Replaces a tool's description and/or guidance. Returns false for an unknown tool.
    pub fn override_text(
        &mut self,
        name: &str,
        description: Option<String>,
        guidance: Option<String>,
    ) -> bool {
        let Some(tool) = self.get(name) else {
            return false;
        };
        let key = tool.spec().name;
        let entry = self.overrides.entry(key).or_default();
        if description.is_some() {
            entry.0 = description;
        }
        if guidance.is_some() {
            entry.1 = guidance;
        }
        true
    }

    /// This registry with `extra` tools after its own (a model's MCP tools, which exist only
    /// once its servers started). A name already taken keeps the tool it has.
    pub fn with_tools(&self, extra: Vec<Arc<dyn Tool>>) -> Self {
        let mut out = self.clone();
        for tool in extra {
            if out.get(tool.spec().name).is_none() {
                out.tools.push(tool);
            }
        }
        out
    }

    /// This registry with web_search asking `setup`'s backend, after web_fetch (at the end
    /// when web_fetch is not offered). Every model of a run gets the one registry, so the same
    /// backend.
    pub fn with_web_search(&self, setup: super::WebSearchSetup) -> Self {
        let mut out = self.clone();
        if out.get("web_search").is_some() {
            return out;
        }
        let at = out
            .tools
            .iter()
            .position(|t| t.spec().name == "web_fetch")
            .map_or(out.tools.len(), |i| i + 1);
        out.tools.insert(at, super::web_search::tool(setup));
        out
    }

    /// Whether calls of `name` may run beside other such calls of one step ([`Tool::concurrent`];
    /// an unknown name is not: its error result is made in order like any call's).
    pub fn runs_concurrently(&self, name: &str) -> bool {
        self.get(name).is_some_and(|t| t.concurrent())
    }

    /// What the fairness ledger records of the tools beyond their definitions (web_search's
    /// backend), as `name: note` lines in tool order.
    pub fn ledger_notes(&self) -> Vec<String> {
        self.tools
            .iter()
            .filter_map(|t| t.ledger().map(|note| format!("{}: {note}", t.spec().name)))
            .collect()
    }

    /// Looks a tool up by name.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.iter().find(|t| t.spec().name == name)
    }

    /// Tool names in order.
    pub fn names(&self) -> Vec<&'static str> {
        self.tools.iter().map(|t| t.spec().name).collect()
    }

    /// The effective specs (overrides applied), for provider translation and the system prompt.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.tools
            .iter()
            .map(|t| {
                let mut spec = t.spec().clone();
                if let Some((d, g)) = self.overrides.get(spec.name) {
                    if let Some(d) = d {
                        spec.description = d.clone();
                    }
                    if let Some(g) = g {
                        spec.guidance = g.clone();
                    }
                }
                spec
            })
            .collect()
    }

    /// The system-prompt guidance, one line per active tool (overrides applied). Only active
    /// tools get a line: a model is never told about a tool it cannot call.
    pub fn guidance(&self) -> String {
        self.specs()
            .iter()
            .map(|s| format!("- {}", s.guidance))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Runs the named tool on raw arguments. Unknown tools and invalid JSON are error results.
    pub async fn dispatch(&self, name: &str, raw_args: &str, ctx: &ToolContext) -> ToolOutput {
        let Some(tool) = self.get(name) else {
            return ToolOutput::error(format!(
                "unknown tool `{name}`; available tools: {}",
                self.names().join(", ")
            ));
        };
        let trimmed = raw_args.trim();
        let args: Value = if trimmed.is_empty() {
            Value::Object(Default::default())
        } else {
            match serde_json::from_str(trimmed) {
                Ok(v) => v,
                Err(e) => {
                    return ToolOutput::error(format!(
                        "invalid arguments for {name}: not valid JSON ({e}); send one JSON object"
                    ));
                }
            }
        };
        tool.call(&args, ctx).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::DirectView;

    static STOPPED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

    /// Blocking work that only ends when told to stop (or after a minute).
    fn endless(_: &(), ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let start = std::time::Instant::now();
        while start.elapsed() < std::time::Duration::from_secs(60) {
            if ctx.cancel.is_cancelled() {
                STOPPED.store(true, std::sync::atomic::Ordering::SeqCst);
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        Ok(ToolOutput::ok("finished"))
    }

    #[tokio::test]
    async fn blocking_work_past_its_time_limit_is_reported_and_told_to_stop() {
        let dir = tempfile::tempdir().unwrap();
        let mut ctx = ToolContext::new(std::sync::Arc::new(DirectView::new(dir.path()).unwrap()));
        ctx.limits.blocking_timeout = std::time::Duration::from_millis(50);
        let err = run_blocking("search_code", (), &ctx, endless)
            .await
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("search_code timed out after 0.05 s"),
            "{err}"
        );
        let start = std::time::Instant::now();
        while !STOPPED.load(std::sync::atomic::Ordering::SeqCst) {
            assert!(
                start.elapsed() < std::time::Duration::from_secs(30),
                "never told to stop"
            );
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        // The caller's own token is untouched: only this call was stopped.
        assert!(!ctx.cancel.is_cancelled());
    }

    #[test]
    fn every_builtin_has_a_complete_definition() {
        let reg = ToolRegistry::builtin();
        assert_eq!(
            reg.names(),
            [
                "read_file",
                "write_file",
                "edit_file",
                "apply_patch",
                "list_directory",
                "search_files",
                "search_code",
                "bash",
                "web_fetch"
            ]
        );
        for spec in reg.specs() {
            assert!(
                !spec.description.is_empty(),
                "{} has no description",
                spec.name
            );
            assert!(!spec.guidance.is_empty(), "{} has no guidance", spec.name);
            assert!(
                !spec.guidance.contains('\n'),
                "{} guidance is not one line",
                spec.name
            );
            assert_eq!(spec.parameters["type"], "object", "{}", spec.name);
            assert_eq!(
                spec.parameters["additionalProperties"],
                serde_json::Value::Bool(false),
                "{} accepts unknown fields",
                spec.name
            );
            for required in spec.parameters["required"].as_array().into_iter().flatten() {
                let name = required.as_str().unwrap();
                assert!(
                    spec.parameters["properties"].get(name).is_some(),
                    "{}: required `{name}` is not a property",
                    spec.name
                );
            }
        }
    }

    #[test]
    fn retain_and_overrides_shape_what_the_model_sees() {
        let mut reg = ToolRegistry::builtin();
        let unknown = reg.retain(&["read_file", "bash", "teleport"]);
        assert_eq!(unknown, ["teleport"]);
        assert_eq!(reg.names(), ["read_file", "bash"]);
        assert!(reg.override_text(
            "bash",
            Some("Run tests only.".into()),
            Some("bash: only cargo test".into())
        ));
        assert!(!reg.override_text("write_file", None, Some("x".into())));
        let bash = reg.specs().into_iter().find(|s| s.name == "bash").unwrap();
        assert_eq!(bash.description, "Run tests only.");
        let guidance = reg.guidance();
        assert_eq!(guidance.lines().count(), 2);
        assert!(guidance.contains("- bash: only cargo test"));
        assert!(!guidance.contains("write_file"));
    }

    #[tokio::test]
    async fn unknown_tools_and_bad_json_are_error_results() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ToolContext::new(std::sync::Arc::new(DirectView::new(dir.path()).unwrap()));
        let reg = ToolRegistry::builtin();
        let out = reg.dispatch("teleport", "{}", &ctx).await;
        assert!(out.is_error);
        assert!(
            out.text
                .starts_with("unknown tool `teleport`; available tools: read_file")
        );
        let out = reg.dispatch("read_file", "{\"path\": ", &ctx).await;
        assert!(out.is_error);
        assert!(out.text.contains("not valid JSON"), "{}", out.text);
        // Empty arguments mean an empty object: the schema check names the missing field.
        let out = reg.dispatch("read_file", "  ", &ctx).await;
        assert_eq!(
            out.text,
            "invalid arguments for read_file: missing required field `path`"
        );
    }
}
