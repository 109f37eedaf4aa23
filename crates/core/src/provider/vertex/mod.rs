//! Google Vertex AI: Gemini models (`publishers/google`, the Gemini wire's body and events)
//! and Anthropic models (`publishers/anthropic`, the Messages wire's body without `model` and
//! with `anthropic_version: "vertex-2023-10-16"`, and its events), as a thin URL and auth
//! layer over the existing wires.
//!
//! `{base}/v1/projects/{project}/locations/{location}/publishers/google/models/{model}:streamGenerateContent?alt=sse`
//! `{base}/v1/projects/{project}/locations/{location}/publishers/anthropic/models/{model}:streamRawPredict`
//!
//! Requests carry `Authorization: Bearer TOKEN`, the token from [`auth::GoogleAuth`]
//! (service account or authorized user), fetched before each step when the cached one is
//! missing or about to expire. The base is `https://{location}-aiplatform.googleapis.com`
//! (`https://aiplatform.googleapis.com` for `global`) unless `VERTEX_BASE_URL` or a config
//! `base_url` names another.

pub mod auth;

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::StreamExt;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::ProviderError;
use super::anthropic::AnthropicWire;
use super::client::{EventStream, ModelClient};
use super::gemini::GeminiWire;
use super::http::{Decoder, HttpModel, RetryPolicy, Wire, WireConfig, WireRequest, driven_stream};
use crate::model::ModelRequest;

/// The `anthropic_version` Anthropic's models on Vertex take in the body.
pub const ANTHROPIC_VERSION: &str = "vertex-2023-10-16";

/// What to set when Vertex has no credentials, for messages.
pub const CREDENTIALS_HINT: &str = "GOOGLE_APPLICATION_CREDENTIALS (a service-account key file) or run `gcloud auth application-default login`";

/// Where a Vertex model lives and whose credentials reach it (no secret: the credentials are
/// read from their file when the client is built).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VertexTarget {
    /// The Google Cloud project (`GOOGLE_CLOUD_PROJECT`); `None`: the credentials' own.
    pub project: Option<String>,
    /// The region, or `global` (`GOOGLE_CLOUD_LOCATION`).
    pub location: String,
    /// The API base: regional by location, or the one configured.
    pub base_url: String,
    /// The credentials file (service account or authorized user).
    pub credentials: PathBuf,
}

impl VertexTarget {
    /// The default API base for `location`.
    pub fn default_base(location: &str) -> String {
        if location == "global" {
            "https://aiplatform.googleapis.com".to_string()
        } else {
            format!("https://{location}-aiplatform.googleapis.com")
        }
    }
}

/// Which publisher's format a model speaks on Vertex.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Publisher {
    /// Gemini (`publishers/google`).
    Google,
    /// Claude (`publishers/anthropic`).
    Anthropic,
}

impl Publisher {
    /// Claude models are Anthropic's; everything else is Google's.
    pub fn of(model: &str) -> Publisher {
        if model.starts_with("claude") {
            Publisher::Anthropic
        } else {
            Publisher::Google
        }
    }
}

/// The publishers whose models `versus models --remote` lists: the two formats versus speaks
/// on Vertex.
pub const LISTED_PUBLISHERS: [&str; 2] = ["google", "anthropic"];

/// What listing Vertex's models needs: the publisher-model list URLs (`GET
/// {base}/v1beta1/publishers/{publisher}/models`, Model Garden's list, v1beta1 only), and the
/// headers (a fresh access token; `x-goog-user-project` naming the project billed, when one
/// is known) with the secrets to scrub.
pub async fn list_requests(
    provider: &str,
    target: &VertexTarget,
    http: &reqwest::Client,
) -> Result<(Vec<String>, Vec<(String, String)>, Vec<String>), String> {
    let credentials = auth::Credentials::read(&target.credentials)?;
    let project = target
        .project
        .clone()
        .or_else(|| credentials.project().map(str::to_string));
    let auth = auth::GoogleAuth::new(provider, credentials, http.clone(), auth::system_clock());
    let mut secrets = auth.secrets();
    let token = auth.token().await.map_err(|err| err.to_string())?;
    secrets.push(token.clone());
    let mut headers = vec![("authorization".to_string(), format!("Bearer {token}"))];
    if let Some(project) = project {
        headers.push(("x-goog-user-project".to_string(), project));
    }
    let base = target.base_url.trim_end_matches('/');
    let urls = LISTED_PUBLISHERS
        .iter()
        .map(|publisher| format!("{base}/v1beta1/publishers/{publisher}/models?pageSize=1000"))
        .collect();
    Ok((urls, headers, secrets))
}

/// The client for a Vertex model: reads the credentials now (a bad file is an error before
/// the run starts, naming the file), fetches tokens when a step needs one.
pub fn client(
    config: WireConfig,
    target: &VertexTarget,
    model: &str,
    http: &reqwest::Client,
    retry: RetryPolicy,
    clock: auth::Clock,
) -> Result<Arc<dyn ModelClient>, String> {
    let credentials = auth::Credentials::read(&target.credentials)?;
    let project = target
        .project
        .clone()
        .or_else(|| credentials.project().map(str::to_string))
        .ok_or_else(|| {
            format!(
                "no Google Cloud project for Vertex: set GOOGLE_CLOUD_PROJECT (the credentials in {} name none)",
                target.credentials.display()
            )
        })?;
    let publisher = Publisher::of(model);
    let auth = Arc::new(auth::GoogleAuth::new(
        &config.provider,
        credentials,
        http.clone(),
        clock,
    ));
    let inner_config = WireConfig {
        api_key: None,
        ..config.clone()
    };
    let inner: Arc<dyn Wire> = match publisher {
        Publisher::Google => Arc::new(GeminiWire::new(inner_config)),
        Publisher::Anthropic => Arc::new(AnthropicWire::new(inner_config)),
    };
    let mut config = config;
    config.key_hint = CREDENTIALS_HINT.to_string();
    let token = Arc::new(Mutex::new(None));
    let wire = Arc::new(VertexWire {
        inner,
        publisher,
        prefix: format!(
            "{}/v1/projects/{project}/locations/{}/publishers",
            target.base_url.trim_end_matches('/'),
            target.location
        ),
        config,
        token: Arc::clone(&token),
        secrets: auth.secrets(),
    });
    Ok(Arc::new(VertexModel {
        http: HttpModel::new(http.clone(), wire, retry),
        auth,
        token,
    }))
}

/// One of the wires with Vertex's URL, bearer token and (for Claude) body.
struct VertexWire {
    inner: Arc<dyn Wire>,
    publisher: Publisher,
    /// `{base}/v1/projects/{p}/locations/{l}/publishers`.
    prefix: String,
    config: WireConfig,
    /// The token of the step being sent (set by [`VertexModel`] before each step).
    token: Arc<Mutex<Option<String>>>,
    /// The credentials' secrets, scrubbed from every text with the token.
    secrets: Vec<String>,
}

impl Wire for VertexWire {
    fn config(&self) -> &WireConfig {
        &self.config
    }

    fn secrets(&self) -> Vec<String> {
        let mut out = self.secrets.clone();
        out.extend(self.config.secrets());
        if let Some(token) = self
            .token
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
        {
            out.push(token);
        }
        out
    }

    fn build(&self, request: &ModelRequest) -> Result<WireRequest, ProviderError> {
        let model = request.model.trim_start_matches("models/");
        if model.is_empty() || model.contains(['/', '?', '#', ' ', ':']) {
            return Err(ProviderError::Config {
                provider: self.config.provider.clone(),
                message: format!(
                    "`{}` is not a Vertex model name; use a name like `gemini-2.5-pro` or `claude-sonnet-4-5@20250929`",
                    request.model
                ),
            });
        }
        let mut built = self.inner.build(request)?;
        built.headers.retain(|(name, _)| {
            !name.eq_ignore_ascii_case("x-api-key")
                && !name.eq_ignore_ascii_case("x-goog-api-key")
                && !name.eq_ignore_ascii_case("anthropic-version")
        });
        let token = self
            .token
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
            .ok_or_else(|| ProviderError::Config {
                provider: self.config.provider.clone(),
                message: "no access token (a bug: the token is fetched before each step)"
                    .to_string(),
            })?;
        built
            .headers
            .push(("authorization".to_string(), format!("Bearer {token}")));
        match self.publisher {
            Publisher::Google => {
                built.url = format!(
                    "{}/google/models/{model}:streamGenerateContent?alt=sse",
                    self.prefix
                );
            }
            Publisher::Anthropic => {
                built.url = format!("{}/anthropic/models/{model}:streamRawPredict", self.prefix);
                built.body = anthropic_body(&self.config.provider, &built.body)?;
            }
        }
        Ok(built)
    }

    fn decoder(&self, request: &ModelRequest) -> Box<dyn Decoder> {
        self.inner.decoder(request)
    }

    fn classify(&self, status: u16, retry_after: Option<Duration>, body: &str) -> ProviderError {
        match self.inner.classify(status, retry_after, body) {
            ProviderError::Auth {
                provider,
                status,
                message,
                ..
            } => ProviderError::Auth {
                provider,
                status,
                message,
                hint: CREDENTIALS_HINT.to_string(),
            },
            other => other,
        }
    }
}

/// The Messages body as Vertex takes it: no `model` (it is in the URL) and
/// `anthropic_version` first.
fn anthropic_body(provider: &str, body: &[u8]) -> Result<Vec<u8>, ProviderError> {
    let bad = |err: serde_json::Error| ProviderError::Config {
        provider: provider.to_string(),
        message: format!("could not encode the request: {err}"),
    };
    let value: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(body).map_err(bad)?;
    let mut out = serde_json::Map::with_capacity(value.len() + 1);
    out.insert(
        "anthropic_version".to_string(),
        serde_json::Value::String(ANTHROPIC_VERSION.to_string()),
    );
    for (key, field) in value {
        if key != "model" {
            out.insert(key, field);
        }
    }
    serde_json::to_vec(&out).map_err(bad)
}

/// A Vertex model: a token for the step, then the step over the shared transport.
struct VertexModel {
    http: HttpModel,
    auth: Arc<auth::GoogleAuth>,
    token: Arc<Mutex<Option<String>>>,
}

impl ModelClient for VertexModel {
    fn provider(&self) -> &str {
        self.http.provider()
    }

    fn stream(&self, request: ModelRequest, cancel: CancellationToken) -> EventStream {
        let (tx, rx) = mpsc::channel(256);
        let (http, auth, slot) = (
            self.http.clone(),
            Arc::clone(&self.auth),
            Arc::clone(&self.token),
        );
        driven_stream(
            async move {
                let token = tokio::select! {
                    token = auth.token() => token,
                    () = cancel.cancelled() => Err(ProviderError::Cancelled),
                };
                match token {
                    Ok(token) => {
                        *slot.lock().unwrap_or_else(PoisonError::into_inner) = Some(token);
                    }
                    Err(err) => {
                        let _ = tx.send(Err(err)).await;
                        return;
                    }
                }
                let mut events = http.stream(request, cancel);
                while let Some(event) = events.next().await {
                    if tx.send(event).await.is_err() {
                        return;
                    }
                }
            },
            rx,
        )
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_messages_body_loses_its_model_and_gains_the_vertex_version() {
        let body = br#"{"model":"claude-sonnet-4-5","max_tokens":10,"stream":true}"#;
        let out: serde_json::Value =
            serde_json::from_slice(&anthropic_body("vertex", body).unwrap()).unwrap();
        assert_eq!(
            out,
            serde_json::json!({"anthropic_version": "vertex-2023-10-16", "max_tokens": 10, "stream": true})
        );
    }

    #[test]
    fn publishers_and_bases() {
        assert_eq!(Publisher::of("claude-opus-4-6"), Publisher::Anthropic);
        assert_eq!(Publisher::of("gemini-2.5-pro"), Publisher::Google);
        assert_eq!(
            VertexTarget::default_base("us-east5"),
            "https://us-east5-aiplatform.googleapis.com"
        );
        assert_eq!(
            VertexTarget::default_base("global"),
            "https://aiplatform.googleapis.com"
        );
    }
}
