//! Turning configured models into runnable entries: the one place that maps an API kind to
//! its adapter, so every frontend builds models the same way.

use std::path::Path;
use std::sync::Arc;

use crate::agent::{Agent, AgentSettings, CostFn};
use crate::config::{ApiKind, CloudSettings, ResolvedModel};
use crate::provider::anthropic::AnthropicWire;
use crate::provider::azure::{AzureSettings, AzureWire};
use crate::provider::bedrock::{BedrockSettings, BedrockWire};
use crate::provider::demo::{DemoError, DemoModel};
use crate::provider::gemini::GeminiWire;
use crate::provider::openai_chat::ChatWire;
use crate::provider::openai_responses::ResponsesWire;
use crate::provider::vertex;
use crate::provider::{HttpModel, ModelClient, RetryPolicy, Wire};
use crate::tools::ToolRegistry;

use super::ModelEntry;

/// Why a model's client could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// A demo script could not be read.
    #[error(transparent)]
    Demo(#[from] DemoError),
    /// Vertex credentials could not be read, or no project is known.
    #[error("{0}")]
    Vertex(String),
}

/// The client for a resolved model. Demo scripts given as paths are read relative to
/// `project`.
pub fn client_for(
    resolved: &ResolvedModel,
    project: &Path,
    http: &reqwest::Client,
    retry: RetryPolicy,
) -> Result<Arc<dyn ModelClient>, ClientError> {
    let wire: Arc<dyn Wire> = match resolved.kind {
        ApiKind::Demo => {
            return Ok(Arc::new(DemoModel::load(&resolved.spec.model, project)?));
        }
        ApiKind::Vertex => {
            let target = resolved.vertex.as_ref().ok_or_else(|| {
                ClientError::Vertex(format!(
                    "no credentials for Vertex: set {}",
                    vertex::CREDENTIALS_HINT
                ))
            })?;
            return vertex::client(
                resolved.wire.clone(),
                target,
                &resolved.spec.model,
                http,
                retry,
                vertex::auth::system_clock(),
            )
            .map_err(ClientError::Vertex);
        }
        ApiKind::OpenAiChat => Arc::new(ChatWire::new(resolved.wire.clone())),
        ApiKind::OpenAiResponses => Arc::new(ResponsesWire::new(resolved.wire.clone())),
        ApiKind::Anthropic => Arc::new(AnthropicWire::new(resolved.wire.clone())),
        ApiKind::Gemini => Arc::new(GeminiWire::new(resolved.wire.clone())),
        ApiKind::Azure => {
            let settings = match &resolved.cloud {
                CloudSettings::Azure(settings) => settings.clone(),
                _ => AzureSettings::default(),
            };
            Arc::new(AzureWire::new(
                resolved.wire.clone(),
                &resolved.spec.model,
                &settings,
            ))
        }
        ApiKind::Bedrock => {
            let settings = match &resolved.cloud {
                CloudSettings::Bedrock(settings) => settings.clone(),
                _ => BedrockSettings::default(),
            };
            Arc::new(BedrockWire::new(resolved.wire.clone(), settings))
        }
    };
    Ok(Arc::new(HttpModel::new(http.clone(), wire, retry)))
}

/// A ready entry for a resolved model: client, tools, settings and pricing.
pub fn entry_for(
    resolved: &ResolvedModel,
    client: Arc<dyn ModelClient>,
    tools: Arc<ToolRegistry>,
    mut settings: AgentSettings,
) -> ModelEntry {
    // The one place a model's tools are final (its editing tool by the settings' policy) and
    // its prompt is made from them. Demo scripts name whichever tool they call.
    let scripted = resolved.kind == ApiKind::Demo;
    let tools = match crate::tools::narrow_edit_tools(
        &tools,
        settings.edit_tools,
        &resolved.spec.model,
        scripted,
    ) {
        Some(narrowed) => Arc::new(narrowed),
        None => tools,
    };
    settings.compose_system(&tools);
    let cost: Option<CostFn> = resolved.price.map(|price| {
        let f: CostFn = Arc::new(move |usage| Some(price.cost(usage)));
        f
    });
    ModelEntry {
        label: resolved.spec.to_string(),
        agent: Agent {
            client,
            model: resolved.spec.model.clone(),
            tools,
            settings,
            cost,
        },
        history: Vec::new(),
    }
}
