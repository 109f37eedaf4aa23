//! Live model lists: what each configured provider offers right now (`versus models
//! --remote`, and the interface's `/models` once cached).
//!
//! Every provider is asked at once, each with its own short time limit, so one that hangs
//! costs its timeout and no more, and the others are listed anyway; the one that did not
//! answer is named. Lists are kept in a small versioned file in versus's state folder
//! (`$XDG_STATE_HOME/versus/cache/models.json`) with the time they were fetched, so a front
//! end can show the last list at once and refresh it in the background when it is older than
//! [`CACHE_TTL`]; nothing here runs at start-up unless a front end asks.
//!
//! Endpoints: OpenAI and every OpenAI-compatible server (OpenRouter included) `GET
//! {base}/models`; Anthropic `GET {base}/v1/models`; Gemini `GET {base}/v1beta/models`; Ollama
//! `GET {root}/api/tags`; Azure OpenAI the v1 API's `GET {base}/models` or, through deployment
//! URLs, the resource's deployments (`GET {root}/openai/deployments`), with the key or the
//! Entra token; Bedrock `ListFoundationModels` (`GET https://bedrock.{region}.amazonaws.com
//! /foundation-models`) and `ListInferenceProfiles` (`GET .../inference-profiles`, an extra
//! list: refused, the foundation models still count), SigV4-signed for `bedrock`, or the
//! Bedrock API key; Vertex AI the
//! publisher models of Google and Anthropic (`GET {base}/v1beta1/publishers/{google,
//! anthropic}/models`) with an access token. The cloud providers' credentials are found as
//! for a model of theirs (the same resolution), and a lookup that has to run a command or ask
//! the SSO portal runs on a thread of its own, inside the provider's time limit. Keys go in
//! headers only, and an error text never contains one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::env::Env;
use super::kind::ApiKind;
use super::load::Config;
use super::providers::{BaseSource, KeyStatus, ProviderDef};
use super::resolve::{CloudSettings, ResolveError, ResolvedModel};
use super::spec::ModelSpec;
use crate::provider::bedrock::credentials::{AWS_VARS, AwsEnv};
use crate::provider::redact::Redactor;

/// How long a cached list counts as fresh for a front end that refreshes in the background.
pub const CACHE_TTL: Duration = Duration::from_secs(6 * 60 * 60);

/// The time limit of one provider's answer when none is given (`--timeout`).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// The version of the cache file written now; a file of another version is ignored (it is a
/// cache: refetched, never an error).
pub const CACHE_VERSION: u32 = 1;

/// The most of one answer read (a list of a few thousand models is well under this).
const BODY_CAP: usize = 8 << 20;

/// The most pages of one paginated list read (Gemini and Vertex say `nextPageToken`).
const MAX_PAGES: usize = 10;

/// What asking one provider gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listing {
    /// The model ids it offers, sorted.
    Models(Vec<String>),
    /// It did not answer within the time limit.
    TimedOut(Duration),
    /// It answered with an error, or could not be reached (the text never holds a key).
    Failed(String),
    /// Not asked: its key is missing (the variables to set).
    NoKey(String),
    /// Not asked: the provider has no list to fetch (the offline demo provider).
    NotListable,
}

/// One provider's list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderListing {
    /// The provider's name (`openai`, `local`).
    pub provider: String,
    /// What it gave.
    pub listing: Listing,
}

/// One provider's list as cached.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CachedList {
    /// The base URL it was fetched from: a list of another server is not this one's.
    pub base_url: String,
    /// Seconds since the Unix epoch when it was fetched.
    pub fetched_at: u64,
    /// The model ids.
    pub models: Vec<String>,
}

/// The cache file: every provider's last list that was fetched.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelCache {
    /// [`CACHE_VERSION`].
    pub version: u32,
    /// By provider name.
    #[serde(default)]
    pub providers: BTreeMap<String, CachedList>,
}

/// The cache file's path under the user's state folder (`None` without one).
pub fn cache_path() -> Option<PathBuf> {
    crate::fsutil::user_state_dir().map(|dir| dir.join("versus").join("cache").join("models.json"))
}

impl ModelCache {
    /// The cache at `path`; empty when it is missing, unreadable or of another version (a
    /// cache is refetched, never an error).
    pub fn load(path: &Path) -> ModelCache {
        let Ok(bytes) = crate::fsutil::read_capped(path, BODY_CAP as u64) else {
            return ModelCache::default();
        };
        match serde_json::from_slice::<ModelCache>(&bytes) {
            Ok(cache) if cache.version == CACHE_VERSION => cache,
            _ => ModelCache::default(),
        }
    }

    /// Writes the cache to `path` atomically (its folder created, private to the user).
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let mut cache = self.clone();
        cache.version = CACHE_VERSION;
        let text = serde_json::to_vec_pretty(&cache).map_err(std::io::Error::other)?;
        crate::fsutil::atomic_write(path, &text)
    }

    /// Keeps the lists that were fetched (a failure leaves the provider's last list alone).
    pub fn update(&mut self, config: &Config, env: &Env, listings: &[ProviderListing]) {
        let now = unix_now();
        for listing in listings {
            let Listing::Models(models) = &listing.listing else {
                continue;
            };
            let Some(base_url) = config
                .provider(&listing.provider)
                .and_then(|def| origin(def, env))
            else {
                continue;
            };
            self.providers.insert(
                listing.provider.clone(),
                CachedList {
                    base_url,
                    fetched_at: now,
                    models: models.clone(),
                },
            );
        }
    }

    /// The cached list of `provider` if it was fetched from the base URL in effect now, with
    /// its age.
    pub fn list(&self, def: &ProviderDef, env: &Env) -> Option<(&[String], Duration)> {
        let cached = self.providers.get(&def.name)?;
        let base = origin(def, env)?;
        (cached.base_url == base).then(|| {
            let age = Duration::from_secs(unix_now().saturating_sub(cached.fetched_at));
            (cached.models.as_slice(), age)
        })
    }

    /// Whether any listable provider with its key has no list younger than `ttl`: a front end
    /// then refreshes in the background.
    pub fn stale(&self, config: &Config, env: &Env, ttl: Duration) -> bool {
        config
            .providers()
            .iter()
            .filter(|def| listable(def, env))
            .any(|def| self.list(def, env).is_none_or(|(_, age)| age > ttl))
    }
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// The AWS variables of `env`, as a Bedrock model resolved under it would have them.
fn aws_env(env: &Env) -> AwsEnv {
    AwsEnv::from_pairs(
        AWS_VARS
            .iter()
            .filter_map(|name| Some((*name, env.non_empty(name)?))),
    )
}

/// Where `def`'s list comes from, the key its cached list is kept under: the base URL in
/// effect, Bedrock's control-plane endpoint, or Vertex's base for its location.
fn origin(def: &ProviderDef, env: &Env) -> Option<String> {
    match def.kind {
        ApiKind::Bedrock => {
            crate::provider::bedrock::control_base(&crate::provider::bedrock::BedrockSettings {
                lookup: def.bedrock.clone(),
                env: aws_env(env),
            })
            .ok()
        }
        ApiKind::Vertex => {
            let location = env.non_empty("GOOGLE_CLOUD_LOCATION").unwrap_or("global");
            match def.base_url(env) {
                Some(base) if base.source != BaseSource::Default => Some(base.api_base),
                _ => Some(crate::provider::vertex::VertexTarget::default_base(
                    location,
                )),
            }
        }
        _ => def.base_url(env).map(|base| base.url),
    }
}

/// Whether `def` would be asked: not the demo provider; its key set if it needs one; for the
/// cloud providers, credentials in sight (Azure's key or Entra token source, some AWS
/// credential or profile, Google credentials).
fn listable(def: &ProviderDef, env: &Env) -> bool {
    match def.kind {
        ApiKind::Demo => false,
        ApiKind::Vertex => crate::provider::vertex::auth::credential_status(|var| {
            env.non_empty(var).map(str::to_string)
        })
        .usable(),
        ApiKind::Bedrock => {
            let aws = aws_env(env);
            [
                "AWS_ACCESS_KEY_ID",
                "AWS_BEARER_TOKEN_BEDROCK",
                "AWS_PROFILE",
                "AWS_CONFIG_FILE",
                "AWS_SHARED_CREDENTIALS_FILE",
            ]
            .iter()
            .any(|var| aws.get(var).is_some())
                || def.bedrock.profile.is_some()
                || aws.get("HOME").is_some_and(|home| {
                    let aws_dir = std::path::Path::new(home).join(".aws");
                    aws_dir.join("config").is_file() || aws_dir.join("credentials").is_file()
                })
        }
        ApiKind::Azure => {
            def.base_url(env).is_some()
                && (def.azure.entra.is_some() || !matches!(def.key_status(env), KeyStatus::Missing))
        }
        _ => !matches!(def.key_status(env), KeyStatus::Missing),
    }
}

/// Asks every provider of `config` for its models at once, each within `timeout`; the result
/// is in the config's provider order. Providers whose key is missing are not asked.
pub async fn fetch_all(
    config: &Config,
    env: &Env,
    http: &reqwest::Client,
    timeout: Duration,
) -> Vec<ProviderListing> {
    let asks = config.providers().iter().map(|def| async move {
        let listing = if def.kind == ApiKind::Demo {
            Listing::NotListable
        } else {
            match tokio::time::timeout(timeout, fetch_one(def, config, env, http)).await {
                Ok(Ok(models)) => Listing::Models(models),
                Ok(Err(listing)) => listing,
                Err(_) => Listing::TimedOut(timeout),
            }
        };
        ProviderListing {
            provider: def.name.clone(),
            listing,
        }
    });
    futures::future::join_all(asks).await
}

/// Request headers as (name, value) pairs.
type Headers = Vec<(String, String)>;

/// One list to fetch: where, with which headers, how to read it, and the secrets its errors
/// are scrubbed of.
struct ListRequest {
    url: String,
    headers: Headers,
    shape: Shape,
    secrets: Vec<String>,
    /// An extra list (Bedrock's inference profiles): when it fails, the provider's other
    /// lists still count, and the failure goes to the log.
    extra: bool,
}

/// What one provider's list request looks like: URL, headers, and how to read the answer
/// (the providers with a key or none; the cloud providers are in [`cloud_requests`]).
fn request_for(def: &ProviderDef, env: &Env) -> Option<(String, Headers, Shape)> {
    let base = def.base_url(env)?;
    let key = def.key_value(env);
    let mut headers: Headers = def.headers.clone();
    let (url, shape) = match def.kind {
        ApiKind::Anthropic => {
            if let Some(key) = key {
                headers.push(("x-api-key".into(), key));
            }
            headers.push(("anthropic-version".into(), "2023-06-01".into()));
            (
                format!("{}/v1/models?limit=1000", base.api_base),
                Shape::Data,
            )
        }
        ApiKind::Gemini => {
            if let Some(key) = key {
                headers.push(("x-goog-api-key".into(), key));
            }
            (
                format!("{}/v1beta/models?pageSize=1000", base.api_base),
                Shape::Gemini,
            )
        }
        ApiKind::OpenAiChat | ApiKind::OpenAiResponses if def.api_suffix.is_some() => {
            // Ollama: its own list, at the server's root.
            let root = match &def.api_suffix {
                Some(suffix) => base.url.trim_end_matches(suffix.as_str()).to_string(),
                None => base.url.clone(),
            };
            (format!("{root}/api/tags"), Shape::Ollama)
        }
        ApiKind::OpenAiChat | ApiKind::OpenAiResponses => {
            if let Some(key) = key {
                headers.push(("authorization".into(), format!("Bearer {key}")));
            }
            (format!("{}/models", base.api_base), Shape::Data)
        }
        // Their credentials need a resolution (and maybe a command or a token exchange).
        ApiKind::Demo | ApiKind::Vertex | ApiKind::Azure | ApiKind::Bedrock => return None,
    };
    Some((url, headers, shape))
}

/// `def` resolved as one of its models would be (the model name does not matter to a list),
/// so the list is asked with exactly the credentials and endpoint a run would use; a missing
/// key or endpoint is "not asked", with what to set.
fn resolve_for_listing(
    def: &ProviderDef,
    config: &Config,
    env: &Env,
) -> Result<ResolvedModel, Listing> {
    let spec = ModelSpec::parse(&format!("{}/models", def.name))
        .map_err(|err| Listing::Failed(err.to_string()))?;
    super::resolve::resolve(&spec, config, env).map_err(|err| match err {
        ResolveError::MissingKey { hint, .. } | ResolveError::MissingEndpoint { hint, .. } => {
            Listing::NoKey(hint)
        }
        other => Listing::Failed(other.to_string()),
    })
}

/// Runs `work` (which may run a command or block on the SSO portal) on a thread of its own,
/// so the provider's time limit still holds and the other providers' asks go on; a thread
/// that outlives its limit is left to finish on its own.
async fn off_thread<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Listing> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("versus-list-credentials".to_string())
        .spawn(move || {
            let _ = tx.send(work());
        })
        .map_err(|err| Listing::Failed(format!("could not start a thread: {err}")))?;
    rx.await
        .map_err(|_| Listing::Failed("the credentials lookup stopped".to_string()))
}

/// The list requests of a cloud provider (Azure, Bedrock, Vertex), credentials included.
async fn cloud_requests(
    def: &ProviderDef,
    config: &Config,
    env: &Env,
    http: &reqwest::Client,
) -> Result<Vec<ListRequest>, Listing> {
    let resolved = resolve_for_listing(def, config, env)?;
    match (def.kind, resolved.cloud) {
        (ApiKind::Azure, cloud) => {
            let settings = match cloud {
                CloudSettings::Azure(settings) => settings,
                _ => Default::default(),
            };
            let wire = crate::provider::azure::AzureWire::new(
                resolved.wire.clone(),
                &resolved.spec.model,
                &settings,
            );
            let (url, headers, secrets) = off_thread(move || {
                use crate::provider::http::Wire as _;
                let (url, headers) = wire.list_request().map_err(|err| err.to_string())?;
                Ok::<_, String>((url, headers, wire.secrets()))
            })
            .await?
            .map_err(Listing::Failed)?;
            Ok(vec![ListRequest {
                url,
                headers,
                shape: Shape::Data,
                secrets,
                extra: false,
            }])
        }
        (ApiKind::Bedrock, CloudSettings::Bedrock(settings)) => {
            let headers = resolved.wire.headers.clone();
            let requests =
                off_thread(move || crate::provider::bedrock::list_requests(&settings, &headers))
                    .await?
                    .map_err(Listing::Failed)?;
            Ok(requests
                .into_iter()
                .zip([(Shape::Bedrock, false), (Shape::BedrockProfiles, true)])
                .map(|((url, headers, secrets), (shape, extra))| ListRequest {
                    url,
                    headers,
                    shape,
                    secrets,
                    extra,
                })
                .collect())
        }
        (ApiKind::Vertex, _) => {
            let Some(target) = resolved.vertex else {
                return Err(Listing::NoKey(
                    crate::provider::vertex::CREDENTIALS_HINT.to_string(),
                ));
            };
            let (urls, mut headers, secrets) =
                crate::provider::vertex::list_requests(&def.name, &target, http)
                    .await
                    .map_err(Listing::Failed)?;
            headers.extend(resolved.wire.headers.iter().cloned());
            Ok(urls
                .into_iter()
                .map(|url| ListRequest {
                    url,
                    headers: headers.clone(),
                    shape: Shape::Vertex,
                    secrets: secrets.clone(),
                    extra: false,
                })
                .collect())
        }
        _ => Err(Listing::NotListable),
    }
}

/// Where the ids are in an answer.
#[derive(Debug, Clone, Copy)]
enum Shape {
    /// `{"data": [{"id": ...}]}` (OpenAI, OpenRouter, Anthropic, compatible servers, Azure).
    Data,
    /// `{"models": [{"name": "models/..."}]}`.
    Gemini,
    /// `{"models": [{"name": ...}]}`.
    Ollama,
    /// `{"modelSummaries": [{"modelId": ...}]}` (Bedrock's ListFoundationModels).
    Bedrock,
    /// `{"inferenceProfileSummaries": [{"inferenceProfileId": ..., "status": "ACTIVE"}]}`
    /// (Bedrock's ListInferenceProfiles; a profile that is not active is left out).
    BedrockProfiles,
    /// `{"publisherModels": [{"name": "publishers/P/models/..."}]}` (Vertex).
    Vertex,
}

/// Every model id `def` offers, or why there is no list.
async fn fetch_one(
    def: &ProviderDef,
    config: &Config,
    env: &Env,
    http: &reqwest::Client,
) -> Result<Vec<String>, Listing> {
    let requests = match def.kind {
        ApiKind::Bedrock if !listable(def, env) => {
            return Err(Listing::NoKey(
                "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or AWS_BEARER_TOKEN_BEDROCK"
                    .to_string(),
            ));
        }
        ApiKind::Azure | ApiKind::Bedrock | ApiKind::Vertex => {
            cloud_requests(def, config, env, http).await?
        }
        _ => {
            if matches!(def.key_status(env), KeyStatus::Missing) {
                return Err(Listing::NoKey(def.key_hint()));
            }
            let Some((url, headers, shape)) = request_for(def, env) else {
                return Err(Listing::Failed("no base URL".to_string()));
            };
            vec![ListRequest {
                url,
                headers,
                shape,
                secrets: def.key_value(env).into_iter().collect(),
                extra: false,
            }]
        }
    };
    let mut ids = Vec::new();
    for request in &requests {
        match fetch_list(request, http).await {
            Ok(found) => ids.extend(found),
            Err(error) if request.extra => {
                tracing::warn!(provider = %def.name, %error, "an extra model list left out");
            }
            Err(error) => return Err(Listing::Failed(error)),
        }
    }
    ids.sort();
    ids.dedup();
    Ok(ids)
}

/// The ids of one list, following `nextPageToken` for up to [`MAX_PAGES`] pages.
async fn fetch_list(request: &ListRequest, http: &reqwest::Client) -> Result<Vec<String>, String> {
    let redactor = Redactor::new(request.secrets.iter().cloned());
    let mut ids = Vec::new();
    let mut page: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let url = match &page {
            Some(token) => {
                let sep = if request.url.contains('?') { '&' } else { '?' };
                format!(
                    "{}{sep}pageToken={}",
                    request.url,
                    crate::provider::http::percent_encode(token)
                )
            }
            None => request.url.clone(),
        };
        let json = get_json(&url, &request.headers, http, &redactor).await?;
        let shown = crate::provider::redact::redact_url(&request.url);
        ids.extend(
            ids_of(&json, request.shape)
                .ok_or_else(|| format!("GET {shown}: the answer has no model list"))?,
        );
        page = json
            .get("nextPageToken")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
            .map(str::to_string);
        if page.is_none() {
            break;
        }
    }
    Ok(ids)
}

/// One GET, its JSON answer or a scrubbed error.
async fn get_json(
    url: &str,
    headers: &Headers,
    http: &reqwest::Client,
    redactor: &Redactor,
) -> Result<Value, String> {
    let mut request = http.get(url);
    for (name, value) in headers {
        request = request.header(name.as_str(), value.as_str());
    }
    let shown = crate::provider::redact::redact_url(url);
    let response = request.send().await.map_err(|err| {
        redactor.scrub(&format!(
            "GET {shown}: {}",
            crate::provider::http::error_chain(&err)
        ))
    })?;
    let status = response.status();
    let mut body = Vec::new();
    let mut response = response;
    while let Some(chunk) = response.chunk().await.map_err(|err| {
        redactor.scrub(&format!(
            "GET {shown}: {}",
            crate::provider::http::error_chain(&err)
        ))
    })? {
        body.extend_from_slice(&chunk);
        if body.len() > BODY_CAP {
            return Err(format!("GET {shown}: the answer is larger than 8 MiB"));
        }
    }
    if !status.is_success() {
        let text = String::from_utf8_lossy(&body);
        let text: String = text.chars().take(300).collect();
        return Err(redactor.scrub(&format!("GET {shown}: HTTP {status}: {}", text.trim())));
    }
    serde_json::from_slice(&body)
        .map_err(|err| format!("GET {shown}: the answer is not JSON ({err})"))
}

fn ids_of(json: &Value, shape: Shape) -> Option<Vec<String>> {
    let (list, field) = match shape {
        Shape::Data => (json.get("data")?.as_array()?, "id"),
        Shape::Gemini | Shape::Ollama => (json.get("models")?.as_array()?, "name"),
        Shape::Bedrock => (json.get("modelSummaries")?.as_array()?, "modelId"),
        Shape::BedrockProfiles => {
            let list = json.get("inferenceProfileSummaries")?.as_array()?;
            return Some(
                list.iter()
                    .filter(|p| {
                        p.get("status")
                            .and_then(Value::as_str)
                            .is_none_or(|s| s == "ACTIVE")
                    })
                    .filter_map(|p| p.get("inferenceProfileId")?.as_str().map(str::to_string))
                    .collect(),
            );
        }
        // An empty page has no field at all.
        Shape::Vertex => match json.get("publisherModels") {
            Some(list) => (list.as_array()?, "name"),
            None => return json.is_object().then(Vec::new),
        },
    };
    Some(
        list.iter()
            .filter_map(|item| item.get(field)?.as_str())
            .map(|id| match shape {
                Shape::Gemini => id.strip_prefix("models/").unwrap_or(id).to_string(),
                Shape::Vertex => id.rsplit('/').next().unwrap_or(id).to_string(),
                _ => id.to_string(),
            })
            .collect(),
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_read_from_each_shape() {
        let data = serde_json::json!({"data": [{"id": "gpt-5"}, {"id": "o3"}]});
        assert_eq!(ids_of(&data, Shape::Data).unwrap(), ["gpt-5", "o3"]);
        let gemini = serde_json::json!({"models": [{"name": "models/gemini-2.5-pro"}]});
        assert_eq!(ids_of(&gemini, Shape::Gemini).unwrap(), ["gemini-2.5-pro"]);
        let ollama = serde_json::json!({"models": [{"name": "qwen2.5-coder:7b"}]});
        assert_eq!(
            ids_of(&ollama, Shape::Ollama).unwrap(),
            ["qwen2.5-coder:7b"]
        );
        assert!(ids_of(&serde_json::json!({}), Shape::Data).is_none());
        let bedrock = serde_json::json!({"modelSummaries": [{"modelId": "amazon.nova-pro-v1:0"}]});
        assert_eq!(
            ids_of(&bedrock, Shape::Bedrock).unwrap(),
            ["amazon.nova-pro-v1:0"]
        );
        let vertex = serde_json::json!({"publisherModels": [{"name": "publishers/anthropic/models/claude-opus-4-6"}]});
        assert_eq!(ids_of(&vertex, Shape::Vertex).unwrap(), ["claude-opus-4-6"]);
        // An empty Vertex page has no field.
        assert_eq!(
            ids_of(&serde_json::json!({}), Shape::Vertex).unwrap(),
            Vec::<String>::new()
        );
    }

    #[test]
    fn requests_carry_keys_in_headers_only() {
        let config = Config::builtin().unwrap();
        let env = Env::from_pairs([
            ("GEMINI_API_KEY", "g-secret-key"),
            ("OLLAMA_BASE_URL", "http://h:1/v1"),
        ]);
        let (url, headers, _) = request_for(config.provider("gemini").unwrap(), &env).unwrap();
        assert_eq!(
            url,
            "https://generativelanguage.googleapis.com/v1beta/models?pageSize=1000"
        );
        assert!(!url.contains("g-secret-key"));
        assert!(headers.contains(&("x-goog-api-key".into(), "g-secret-key".into())));
        let (url, _, _) = request_for(config.provider("ollama").unwrap(), &env).unwrap();
        assert_eq!(url, "http://h:1/api/tags");
    }

    #[test]
    fn the_cache_keeps_lists_per_base_url_and_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cache/models.json");
        let config = Config::builtin().unwrap();
        let env = Env::from_pairs([("OPENAI_API_KEY", "k-123456")]);
        let mut cache = ModelCache::load(&path);
        assert!(cache.stale(&config, &env, CACHE_TTL));
        cache.update(
            &config,
            &env,
            &[ProviderListing {
                provider: "openai".into(),
                listing: Listing::Models(vec!["gpt-5".into()]),
            }],
        );
        cache.save(&path).unwrap();
        let cache = ModelCache::load(&path);
        let openai = config.provider("openai").unwrap();
        assert_eq!(cache.list(openai, &env).unwrap().0, ["gpt-5"]);
        // Another server: not its list.
        let elsewhere = Env::from_pairs([("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")]);
        assert!(cache.list(openai, &elsewhere).is_none());
        // A file of another version is a cache miss, not an error.
        std::fs::write(&path, r#"{"version": 99, "providers": {}}"#).unwrap();
        assert!(ModelCache::load(&path).providers.is_empty());
    }
}
