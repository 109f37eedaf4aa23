//! Azure OpenAI: a URL and auth layer over the OpenAI Chat and Responses wires.
//!
//! Azure serves the same two formats as OpenAI, so the bodies and the decoding are exactly
//! those of [`ChatWire`] and [`ResponsesWire`]; only three things differ, and they are all
//! here:
//!
//! - **Where**: with the resource's root as base URL (`https://RES.openai.azure.com`), a
//!   deployment's endpoint, `{root}/openai/deployments/{deployment}/chat/completions`, or the
//!   resource's Responses endpoint `{root}/openai/responses` (the deployment named in the
//!   body's `model`). With a base URL ending in `/openai/v1` (Azure's v1 API), the OpenAI paths
//!   under it: `{base}/chat/completions`, `{base}/responses`. The model name of the spec
//!   (`azure/NAME`) is the deployment's name.
//! - **Which version**: `?api-version=` on every request; the deployment endpoints need one
//!   (defaults: [`DEFAULT_CHAT_VERSION`], [`DEFAULT_RESPONSES_VERSION`]), the v1 API does not
//!   (sent only when configured).
//! - **Auth**: the key in an `api-key` header, or an Entra ID bearer token (`Authorization:
//!   Bearer`), taken from a variable or printed by a command the user's own config names
//!   (`az account get-access-token ...`). A command's token is kept until shortly before it
//!   expires (when the command says when: `az`'s JSON does) or for [`COMMAND_TOKEN_TTL`].

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use serde::{Deserialize, Serialize};

use super::error::ProviderError;
use super::http::{Decoder, Wire, WireConfig, WireRequest, percent_encode};
use super::openai_chat::ChatWire;
use super::openai_responses::ResponsesWire;
use crate::model::ModelRequest;

/// The `api-version` of deployment Chat requests when none is configured: the latest GA
/// version of the data-plane inference API.
pub const DEFAULT_CHAT_VERSION: &str = "2024-10-21";

/// The `api-version` of deployment-style Responses requests when none is configured (the
/// Responses API has only preview versions on the deployment endpoints).
pub const DEFAULT_RESPONSES_VERSION: &str = "2025-04-01-preview";

/// How long a token printed by a command is used when the command does not say when it
/// expires. Entra access tokens live 60 to 90 minutes.
pub const COMMAND_TOKEN_TTL: Duration = Duration::from_secs(30 * 60);

/// The `api-version` of the data-plane deployments list (`GET {root}/openai/deployments`),
/// the one version that has it; what `versus models --remote` asks a resource without the v1
/// API, whose model names are its deployments' names.
pub const DEPLOYMENTS_LIST_VERSION: &str = "2022-12-01";

/// How long a token command may run.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(60);

/// Which of OpenAI's two APIs the deployments are called through.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AzureApi {
    /// Chat Completions: every deployment and API version has it.
    #[default]
    Chat,
    /// The Responses API (newer models and API versions).
    Responses,
}

/// Where an Entra ID token comes from (configured in the user's own config only: a project
/// must not choose which of the user's credentials go where).
#[derive(Clone, PartialEq, Eq)]
pub enum EntraToken {
    /// The value of the variable named by `entra_token_env`, read when the model was resolved.
    Value(String),
    /// `entra_token_command`, run with `sh -c`; its output (trimmed) is the token, or the
    /// `accessToken` of the JSON object it prints (`az account get-access-token`).
    Command(String),
}

impl std::fmt::Debug for EntraToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EntraToken::Value(_) => f.write_str("Value([redacted])"),
            EntraToken::Command(command) => f.debug_tuple("Command").field(command).finish(),
        }
    }
}

/// Azure's settings of one provider, from its `[providers.NAME]` block.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AzureSettings {
    /// Chat or Responses.
    pub api: AzureApi,
    /// `api-version`; `None`: the default of the endpoint style (none for the v1 API).
    pub api_version: Option<String>,
    /// The Entra token used when no key is set.
    pub entra: Option<EntraToken>,
}

/// The endpoint style a base URL selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    /// `{root}/openai/deployments/{deployment}/...?api-version=...`
    Deployments,
    /// `{root}/openai/v1/...`
    V1,
}

fn style_of(base: &str) -> Style {
    if base.ends_with("/openai/v1") {
        Style::V1
    } else {
        Style::Deployments
    }
}

/// A token printed by a command, and until when it is used.
struct CachedToken {
    token: String,
    until: Instant,
}

/// A [`Wire`] for one Azure OpenAI deployment: the OpenAI wire of the configured API with
/// Azure's URL, `api-version` and auth.
pub struct AzureWire {
    /// The provider as configured (base URL = the resource root or the v1 base; the key).
    config: WireConfig,
    /// The OpenAI wire, built with the endpoint's base and no key of its own.
    inner: Box<dyn Wire>,
    /// `?api-version=...`, or empty.
    query: String,
    /// What `versus models --remote` asks (see [`AzureWire::list_request`]).
    list_url: String,
    entra: Option<EntraToken>,
    token: Arc<Mutex<Option<CachedToken>>>,
}

impl std::fmt::Debug for AzureWire {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AzureWire")
            .field("config", &self.config)
            .field("query", &self.query)
            .field("entra", &self.entra)
            .finish()
    }
}

impl AzureWire {
    /// The wire for deployment `deployment` of the provider `config` describes.
    pub fn new(config: WireConfig, deployment: &str, settings: &AzureSettings) -> Self {
        let base = config.base().to_string();
        let style = style_of(&base);
        let root = base
            .strip_suffix("/openai")
            .unwrap_or(base.as_str())
            .to_string();
        let api_base = match (style, settings.api) {
            (Style::V1, _) => base.clone(),
            (Style::Deployments, AzureApi::Chat) => {
                format!("{root}/openai/deployments/{}", percent_encode(deployment))
            }
            (Style::Deployments, AzureApi::Responses) => format!("{root}/openai"),
        };
        let version = settings.api_version.clone().or_else(|| match style {
            Style::V1 => None,
            Style::Deployments => Some(
                match settings.api {
                    AzureApi::Chat => DEFAULT_CHAT_VERSION,
                    AzureApi::Responses => DEFAULT_RESPONSES_VERSION,
                }
                .to_string(),
            ),
        });
        let query = version
            .map(|v| format!("?api-version={}", percent_encode(v.trim())))
            .unwrap_or_default();
        let list_url = match style {
            Style::V1 => format!("{base}/models{query}"),
            Style::Deployments => {
                format!("{root}/openai/deployments?api-version={DEPLOYMENTS_LIST_VERSION}")
            }
        };
        let inner_config = WireConfig {
            base_url: api_base,
            api_key: None,
            ..config.clone()
        };
        let inner: Box<dyn Wire> = match settings.api {
            AzureApi::Chat => Box::new(ChatWire::new(inner_config)),
            AzureApi::Responses => Box::new(ResponsesWire::new(inner_config)),
        };
        Self {
            config,
            inner,
            query,
            list_url,
            entra: settings.entra.clone(),
            token: Arc::default(),
        }
    }

    /// The request that lists what the resource serves, with the same auth as a model's
    /// requests: the v1 API's `GET {base}/models`, or the deployments of a resource called
    /// through deployment URLs (`GET {root}/openai/deployments?api-version=2022-12-01`), both
    /// answering `{"data": [{"id": ...}]}`. `(url, headers)`; may run the token command.
    pub fn list_request(&self) -> Result<(String, Vec<(String, String)>), ProviderError> {
        let mut headers = self.config.headers.clone();
        if let Some(header) = self.auth_header()? {
            headers.insert(0, header);
        }
        Ok((self.list_url.clone(), headers))
    }

    /// The key, else the Entra token (from its variable, the cache, or the command).
    fn auth_header(&self) -> Result<Option<(String, String)>, ProviderError> {
        if let Some(key) = self
            .config
            .api_key
            .as_deref()
            .filter(|k| !k.trim().is_empty())
        {
            return Ok(Some(("api-key".to_string(), key.trim().to_string())));
        }
        let token = match &self.entra {
            None => return Ok(None),
            Some(EntraToken::Value(token)) => token.trim().to_string(),
            Some(EntraToken::Command(command)) => self.command_token(command)?,
        };
        Ok(Some((
            "authorization".to_string(),
            format!("Bearer {token}"),
        )))
    }

    /// The cached token of the command, or a new one from running it.
    fn command_token(&self, command: &str) -> Result<String, ProviderError> {
        let mut cache = self.token.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(cached) = cache.as_ref()
            && cached.until > Instant::now()
        {
            return Ok(cached.token.clone());
        }
        let provider = self.config.provider.clone();
        let command = command.to_string();
        let (token, until) = blocking(move || run_token_command(&provider, &command))?;
        *cache = Some(CachedToken {
            token: token.clone(),
            until,
        });
        Ok(token)
    }
}

/// Runs `work` on this thread, telling a multi-threaded tokio runtime first so its other tasks
/// move on (a token command can take a second).
fn blocking<T>(work: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(work)
        }
        _ => work(),
    }
}

/// Runs the token command (`sh -c`, at most [`COMMAND_TIMEOUT`]) and reads its token and
/// expiry.
fn run_token_command(provider: &str, command: &str) -> Result<(String, Instant), ProviderError> {
    use std::io::Read;
    use std::process::{Command, Stdio};
    let fail = |message: String| ProviderError::Config {
        provider: provider.to_string(),
        message: format!("{message} (entra_token_command in your user config)"),
    };
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|err| fail(format!("could not run the Entra token command: {err}")))?;
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let out_reader = std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(pipe) = stdout.as_mut() {
            let _ = pipe.take(1024 * 1024).read_to_string(&mut text);
        }
        text
    });
    let err_reader = std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(pipe) = stderr.as_mut() {
            let _ = pipe.take(64 * 1024).read_to_string(&mut text);
        }
        text
    });
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() > COMMAND_TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(fail(format!(
                    "the Entra token command did not finish within {}s",
                    COMMAND_TIMEOUT.as_secs()
                )));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(err) => return Err(fail(format!("the Entra token command failed: {err}"))),
        }
    };
    let stdout = out_reader.join().unwrap_or_default();
    let stderr = err_reader.join().unwrap_or_default();
    if !status.success() {
        let last = stderr.trim().lines().last().unwrap_or("").trim();
        let last: String = last.chars().take(300).collect();
        return Err(fail(format!(
            "the Entra token command failed ({status}){}",
            if last.is_empty() {
                String::new()
            } else {
                format!(": {last}")
            }
        )));
    }
    parse_token_output(&stdout)
        .ok_or_else(|| fail("the Entra token command printed no token".to_string()))
}

/// The token (and until when to use it) in a token command's output: a JSON object with
/// `accessToken` (`az account get-access-token`, whose `expires_on` is in Unix seconds), else
/// the trimmed text.
fn parse_token_output(output: &str) -> Option<(String, Instant)> {
    #[derive(Deserialize)]
    struct AzToken {
        #[serde(rename = "accessToken")]
        access_token: String,
        expires_on: Option<serde_json::Value>,
    }
    let text = output.trim();
    if text.is_empty() {
        return None;
    }
    let now = Instant::now();
    if text.starts_with('{') {
        let parsed: AzToken = serde_json::from_str(text).ok()?;
        let left = parsed
            .expires_on
            .and_then(|v| match v {
                serde_json::Value::Number(n) => n.as_u64(),
                serde_json::Value::String(s) => s.trim().parse().ok(),
                _ => None,
            })
            .and_then(|at| {
                let now = SystemTime::now()
                    .duration_since(SystemTime::UNIX_EPOCH)
                    .ok()?
                    .as_secs();
                // Refreshed five minutes before it expires.
                Some(Duration::from_secs(
                    at.saturating_sub(now).saturating_sub(300),
                ))
            })
            .unwrap_or(COMMAND_TOKEN_TTL);
        return Some((parsed.access_token.trim().to_string(), now + left));
    }
    if text.contains(char::is_whitespace) {
        return None;
    }
    Some((text.to_string(), now + COMMAND_TOKEN_TTL))
}

impl Wire for AzureWire {
    fn config(&self) -> &WireConfig {
        &self.config
    }

    fn secrets(&self) -> Vec<String> {
        let mut out = self.config.secrets();
        match &self.entra {
            Some(EntraToken::Value(token)) => out.push(token.trim().to_string()),
            Some(EntraToken::Command(_)) if self.config.api_key.is_none() => {
                // The redactor is made before the first request: fetch the token now so it
                // is scrubbed too (an error here is reported by the request itself).
                if let Ok(Some((_, value))) = self.auth_header() {
                    out.push(value.trim_start_matches("Bearer ").to_string());
                }
            }
            _ => {}
        }
        out
    }

    fn build(&self, request: &ModelRequest) -> Result<WireRequest, ProviderError> {
        let mut built = self.inner.build(request)?;
        built.url.push_str(&self.query);
        if let Some(header) = self.auth_header()? {
            built.headers.insert(0, header);
        }
        Ok(built)
    }

    fn decoder(&self, request: &ModelRequest) -> Box<dyn Decoder> {
        self.inner.decoder(request)
    }

    fn classify(&self, status: u16, retry_after: Option<Duration>, body: &str) -> ProviderError {
        self.inner.classify(status, retry_after, body)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::model::ModelRequest;

    fn config(base: &str, key: Option<&str>) -> WireConfig {
        WireConfig {
            provider: "azure".into(),
            base_url: base.into(),
            api_key: key.map(str::to_string),
            key_hint: "AZURE_OPENAI_API_KEY".into(),
            ..WireConfig::default()
        }
    }

    fn request() -> ModelRequest {
        crate::provider::test_corpus::hello_request("my-gpt")
    }

    #[test]
    fn urls_per_style_and_api() {
        let settings = |api, version: Option<&str>| AzureSettings {
            api,
            api_version: version.map(str::to_string),
            entra: None,
        };
        let cases = [
            (
                "https://res.openai.azure.com/",
                settings(AzureApi::Chat, None),
                "https://res.openai.azure.com/openai/deployments/my-gpt/chat/completions?api-version=2024-10-21",
            ),
            (
                "https://res.openai.azure.com/openai",
                settings(AzureApi::Responses, None),
                "https://res.openai.azure.com/openai/responses?api-version=2025-04-01-preview",
            ),
            (
                "https://res.openai.azure.com/openai/v1",
                settings(AzureApi::Chat, None),
                "https://res.openai.azure.com/openai/v1/chat/completions",
            ),
            (
                "https://res.openai.azure.com/openai/v1/",
                settings(AzureApi::Responses, Some("preview")),
                "https://res.openai.azure.com/openai/v1/responses?api-version=preview",
            ),
        ];
        for (base, settings, url) in cases {
            let wire = AzureWire::new(config(base, Some("k-123456")), "my-gpt", &settings);
            let built = wire.build(&request()).unwrap();
            assert_eq!(built.url, url);
            assert_eq!(built.headers[0], ("api-key".into(), "k-123456".into()));
            assert!(
                !built
                    .headers
                    .iter()
                    .any(|(n, _)| n.eq_ignore_ascii_case("authorization"))
            );
        }
    }

    #[test]
    fn entra_tokens_from_a_value_or_a_command() {
        let wire = AzureWire::new(
            config("https://res.openai.azure.com", None),
            "d",
            &AzureSettings {
                entra: Some(EntraToken::Value("eyJ-token-value".into())),
                ..AzureSettings::default()
            },
        );
        let built = wire.build(&request()).unwrap();
        assert_eq!(
            built.headers[0],
            ("authorization".into(), "Bearer eyJ-token-value".into())
        );
        assert!(wire.secrets().contains(&"eyJ-token-value".to_string()));
        assert!(!format!("{:?}", wire).contains("eyJ-token-value"));

        let wire = AzureWire::new(
            config("https://res.openai.azure.com", None),
            "d",
            &AzureSettings {
                entra: Some(EntraToken::Command(
                    r#"echo '{"accessToken": "eyJ-from-az", "expires_on": 4102444800}'"#.into(),
                )),
                ..AzureSettings::default()
            },
        );
        assert!(wire.secrets().contains(&"eyJ-from-az".to_string()));
        let built = wire.build(&request()).unwrap();
        assert_eq!(built.headers[0].1, "Bearer eyJ-from-az");

        let wire = AzureWire::new(
            config("https://res.openai.azure.com", None),
            "d",
            &AzureSettings {
                entra: Some(EntraToken::Command("echo oops >&2; exit 3".into())),
                ..AzureSettings::default()
            },
        );
        let err = wire.build(&request()).unwrap_err().to_string();
        assert!(
            err.contains("token command failed") && err.contains("oops"),
            "{err}"
        );
    }

    #[test]
    fn token_output_shapes() {
        assert_eq!(parse_token_output("  tok123\n").unwrap().0, "tok123");
        assert!(parse_token_output("").is_none());
        assert!(parse_token_output("two words").is_none());
        let (token, until) =
            parse_token_output(r#"{"accessToken":"a.b.c","expiresOn":"x","expires_on":"1"}"#)
                .unwrap();
        assert_eq!(token, "a.b.c");
        // Already expired: refreshed on the next request.
        assert!(until <= Instant::now());
    }
}
