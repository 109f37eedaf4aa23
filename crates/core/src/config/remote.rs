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
//! `GET {root}/api/tags`. Keys go in headers only, and an error text never contains one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::env::Env;
use super::kind::ApiKind;
use super::load::Config;
use super::providers::{KeyStatus, ProviderDef};
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
                .and_then(|def| def.base_url(env))
            else {
                continue;
            };
            self.providers.insert(
                listing.provider.clone(),
                CachedList {
                    base_url: base_url.url,
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
        let base = def.base_url(env)?;
        (cached.base_url == base.url).then(|| {
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

/// Whether `def` would be asked: not the demo provider, and its key set if it needs one.
fn listable(def: &ProviderDef, env: &Env) -> bool {
    !matches!(def.kind, ApiKind::Demo | ApiKind::Vertex)
        && !matches!(def.key_status(env), KeyStatus::Missing)
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
        let listing = if matches!(def.kind, ApiKind::Demo | ApiKind::Vertex) {
            Listing::NotListable
        } else if matches!(def.key_status(env), KeyStatus::Missing) {
            Listing::NoKey(def.key_hint())
        } else {
            match tokio::time::timeout(timeout, fetch_one(def, env, http)).await {
                Ok(Ok(models)) => Listing::Models(models),
                Ok(Err(message)) => Listing::Failed(message),
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

/// What one provider's list request looks like: URL, headers, and how to read the answer.
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
        // Vertex's publisher lists need a project and a token, Azure lists deployments through
        // its management API, Bedrock needs a signed control-plane call: not listed here yet.
        ApiKind::Demo | ApiKind::Vertex | ApiKind::Azure | ApiKind::Bedrock => return None,
    };
    Some((url, headers, shape))
}

/// Where the ids are in an answer.
#[derive(Debug, Clone, Copy)]
enum Shape {
    /// `{"data": [{"id": ...}]}` (OpenAI, OpenRouter, Anthropic, compatible servers).
    Data,
    /// `{"models": [{"name": "models/..."}]}`.
    Gemini,
    /// `{"models": [{"name": ...}]}`.
    Ollama,
}

async fn fetch_one(
    def: &ProviderDef,
    env: &Env,
    http: &reqwest::Client,
) -> Result<Vec<String>, String> {
    let redactor = Redactor::new(def.key_value(env));
    let Some((url, headers, shape)) = request_for(def, env) else {
        return Err("no base URL".to_string());
    };
    let mut request = http.get(&url);
    for (name, value) in &headers {
        request = request.header(name.as_str(), value.as_str());
    }
    let shown = crate::provider::redact::redact_url(&url);
    let response = request
        .send()
        .await
        .map_err(|err| redactor.scrub(&format!("GET {shown}: {}", error_chain(&err))))?;
    let status = response.status();
    let mut body = Vec::new();
    let mut response = response;
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|err| redactor.scrub(&format!("GET {shown}: {}", error_chain(&err))))?
    {
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
    let json: Value = serde_json::from_slice(&body)
        .map_err(|err| format!("GET {shown}: the answer is not JSON ({err})"))?;
    let mut ids =
        ids_of(&json, shape).ok_or_else(|| format!("GET {shown}: the answer has no model list"))?;
    ids.sort();
    ids.dedup();
    Ok(ids)
}

fn ids_of(json: &Value, shape: Shape) -> Option<Vec<String>> {
    let (list, field) = match shape {
        Shape::Data => (json.get("data")?.as_array()?, "id"),
        Shape::Gemini | Shape::Ollama => (json.get("models")?.as_array()?, "name"),
    };
    Some(
        list.iter()
            .filter_map(|item| item.get(field)?.as_str())
            .map(|id| match shape {
                Shape::Gemini => id.strip_prefix("models/").unwrap_or(id).to_string(),
                _ => id.to_string(),
            })
            .collect(),
    )
}

/// The error and its causes, for a connection failure (`error sending request: ... refused`).
fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
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
