//! spawn_agent: hand a task to a sub-agent that runs its own loop in the caller's workspace
//! and answers with its final text.
//!
//! The tool is defined here like every other (one spec, one schema, the registry's dispatch),
//! but running an agent is the agent loop's business, which the tools never see: the loop puts
//! a [`Spawner`] in the call's [`ToolContext`], and this tool only checks the arguments and
//! hands them over. Without a spawner (`versus tool spawn_agent`) the call is refused.
//!
//! A role decides the sub-agent's tools, structurally: an explorer is given the read-only
//! tools only (a write is then an unknown tool to it, not a refused call), a planner those and
//! bash, a coder the caller's own tools ([`ToolRegistry::for_role`]).

use std::sync::Arc;

use futures::future::BoxFuture;
use serde::Deserialize;
use serde_json::json;

use super::registry::{Handler, Tool, typed};
use super::{ToolClass, ToolContext, ToolError, ToolOutput, ToolRegistry, ToolSpec};
use crate::model::SubAgentSettings;

/// The tool's name, fixed: scripts and recipes name it.
pub const NAME: &str = "spawn_agent";

/// What a sub-agent may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SubAgentRole {
    /// Reads and searches only.
    Explorer,
    /// Reads, searches and runs commands (bash), but writes no file through a tool.
    Planner,
    /// The caller's own tools.
    Coder,
}

impl SubAgentRole {
    /// The role as written in the tool's arguments.
    pub fn as_str(self) -> &'static str {
        match self {
            SubAgentRole::Explorer => "explorer",
            SubAgentRole::Planner => "planner",
            SubAgentRole::Coder => "coder",
        }
    }

    /// What the sub-agent is told about its role (the start of its system prompt's extra
    /// instructions).
    pub fn instructions(self) -> &'static str {
        match self {
            SubAgentRole::Explorer => {
                "You are an explorer sub-agent: another agent gave you the task below. You can \
                 read and search the project but not change it. Answer with what you found, \
                 concisely, with paths and line numbers the other agent can use."
            }
            SubAgentRole::Planner => {
                "You are a planner sub-agent: another agent gave you the task below. You can \
                 read, search and run commands, but do not change files. Answer with a short, \
                 concrete plan (files, steps, risks)."
            }
            SubAgentRole::Coder => {
                "You are a coder sub-agent: another agent gave you the task below. Make the \
                 change in the project (your writes join the other agent's proposals), verify \
                 it, then answer with a short summary of what you changed."
            }
        }
    }
}

/// One `spawn_agent` call's arguments, checked.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct SpawnRequest {
    /// What the sub-agent is asked to do (its first and only user message).
    pub task: String,
    /// Its role.
    pub role: SubAgentRole,
    /// The model it runs on (a model of the run); `None`: the caller's.
    #[serde(default)]
    pub model: Option<String>,
}

/// Runs a sub-agent for a call: implemented by the agent loop, which alone can run one.
pub trait Spawner: Send + Sync {
    /// Runs the sub-agent `request` asks for and returns its final answer as the call's
    /// result (or why it was refused: depth or count limit, an unknown model).
    fn spawn<'a>(
        &'a self,
        request: SpawnRequest,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>>;
}

/// The tool, offered with `settings` and sub-agents allowed on `models` (the run's models, by
/// spec; the caller's own is the default). The models and limits are in the description and
/// the schema, so the fairness ledger sees them and the model knows them.
pub fn tool(settings: &SubAgentSettings, models: &[String]) -> Arc<dyn Tool> {
    let model_list = models
        .iter()
        .map(|m| format!("`{m}`"))
        .collect::<Vec<_>>()
        .join(", ");
    typed(
        ToolSpec {
            name: NAME,
            description: format!(
                "Start a sub-agent on a task; it works in your workspace with its own \
                 conversation and answers with its final text. Roles: `explorer` (read and \
                 search only), `planner` (read, search, bash; no file writes), `coder` (your \
                 tools; its writes become your proposals). At most {} sub-agents per turn, \
                 nested at most {} deep. `model`: one of {model_list} (default: yours).",
                settings.max_per_turn, settings.max_depth
            ),
            parameters: json!({
                "type": "object",
                "properties": {
                    "task": {"type": "string", "description": "The task, complete: the sub-agent sees nothing of your conversation."},
                    "role": {"type": "string", "enum": ["explorer", "planner", "coder"], "description": "What the sub-agent may do."},
                    "model": {"type": "string", "enum": models, "description": "The model it runs on (default: yours)."}
                },
                "required": ["task", "role"],
                "additionalProperties": false
            }),
            guidance: "spawn_agent: delegate a self-contained task (explore, plan or code) to a \
                sub-agent; give it everything it needs in `task`."
                .to_string(),
            // It runs an agent in the workspace, which may change it (a coder).
            class: ToolClass::WorkspaceEffect,
        },
        SpawnAgent {
            settings: settings.text(),
        },
    )
}

struct SpawnAgent {
    /// The limits as one canonical text, for the fairness ledger.
    settings: String,
}

impl Handler for SpawnAgent {
    type Args = SpawnRequest;

    /// The limits (they are in the description too, but said once as settings, so the
    /// ledger names them when two models' differ and the summary says sub-agents are on).
    fn ledger(&self) -> Option<String> {
        Some(self.settings.clone())
    }

    async fn run(&self, args: SpawnRequest, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        if args.task.trim().is_empty() {
            return Err(ToolError::InvalidArgs {
                tool: NAME,
                reason: "`task` is empty: say what the sub-agent should do".to_string(),
            });
        }
        match &ctx.spawner {
            Some(spawner) => spawner.spawn(args, ctx).await,
            None => Err(ToolError::Refused(
                "spawn_agent runs only inside a model's turn with sub-agents turned on".to_string(),
            )),
        }
    }
}

impl ToolRegistry {
    /// The tools a sub-agent of `role` gets from its caller's registry: an explorer the
    /// read-only ones, a planner those and bash, a coder all of them. Leaving a tool out is
    /// the only way a role is held: a call to a tool not given is an unknown tool.
    pub fn for_role(&self, role: SubAgentRole) -> ToolRegistry {
        let mut out = self.clone();
        match role {
            SubAgentRole::Coder => {}
            SubAgentRole::Explorer => out.keep(|spec| spec.class == ToolClass::ReadOnly),
            SubAgentRole::Planner => {
                out.keep(|spec| spec.class == ToolClass::ReadOnly || spec.name == "bash")
            }
        }
        out
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::workspace::DirectView;

    fn registry() -> ToolRegistry {
        ToolRegistry::builtin().with_tools(vec![tool(
            &SubAgentSettings::default(),
            &["demo/a".to_string(), "demo/b".to_string()],
        )])
    }

    #[test]
    fn roles_get_their_tools_and_no_more() {
        let reg = registry();
        assert_eq!(
            reg.for_role(SubAgentRole::Explorer).names(),
            ["read_file", "list_directory", "search_files", "search_code"]
        );
        assert_eq!(
            reg.for_role(SubAgentRole::Planner).names(),
            [
                "read_file",
                "list_directory",
                "search_files",
                "search_code",
                "bash"
            ]
        );
        assert_eq!(reg.for_role(SubAgentRole::Coder).names(), reg.names());
        // Guidance follows the tools: an explorer is never told of a write tool.
        assert!(
            !reg.for_role(SubAgentRole::Explorer)
                .guidance()
                .contains("write_file")
        );
    }

    #[test]
    fn the_schema_names_the_models_and_limits() {
        let spec = registry().get(NAME).unwrap().spec().clone();
        assert_eq!(
            spec.parameters["properties"]["model"]["enum"],
            json!(["demo/a", "demo/b"])
        );
        assert!(spec.description.contains("At most 4 sub-agents per turn"));
        assert!(spec.description.contains("nested at most 2 deep"));
    }

    #[tokio::test]
    async fn without_a_spawner_the_call_is_refused_and_bad_roles_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ToolContext::new(Arc::new(DirectView::new(dir.path()).unwrap()));
        let reg = registry();
        let out = reg
            .dispatch(NAME, r#"{"task":"look","role":"explorer"}"#, &ctx)
            .await;
        assert!(out.is_error);
        assert!(
            out.text.contains("only inside a model's turn"),
            "{}",
            out.text
        );
        let out = reg
            .dispatch(NAME, r#"{"task":"look","role":"boss"}"#, &ctx)
            .await;
        assert!(out.text.contains("role"), "{}", out.text);
        let out = reg
            .dispatch(
                NAME,
                r#"{"task":"look","role":"coder","model":"x/y"}"#,
                &ctx,
            )
            .await;
        assert!(out.is_error && out.text.contains("model"), "{}", out.text);
    }
}
