//! Provider definitions: the six built-ins from the providers table, changed or extended by
//! `[providers.NAME]` blocks, and how each finds its base URL and key in an [`Env`].
//!
//! A [`ProviderDef`] is static (what the config says); the environment is applied only when a
//! base URL or key is asked for, so one loaded config serves any number of resolutions and
//! `versus models` can report where each value came from without ever printing a key.
//!
//! Precedence, for built-ins and configured providers alike: base URL from the provider's
//! environment variable, then the config file's `base_url`, then the built-in default; key
//! from the first set variable of `api_key_env` (or the built-in names), then the config
//! file's `api_key`.

use std::fmt;

use super::env::{Env, VarSource};
use super::file::Origin;
use super::kind::ApiKind;
use crate::provider::azure::AzureApi;

/// A value that must never be printed (an API key written in a config file).
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret value.
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    /// The value, for building a request.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

/// Where a provider's base URL came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BaseSource {
    /// The built-in default.
    Default,
    /// An environment variable (process or `.env`).
    Env(String),
    /// A config file's `base_url`.
    Config(Origin),
}

impl fmt::Display for BaseSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BaseSource::Default => f.write_str("the built-in default"),
            BaseSource::Env(var) => write!(f, "{var}"),
            BaseSource::Config(origin) => write!(f, "base_url in {origin}"),
        }
    }
}

/// A provider's base URL as configured, and the API base adapters append endpoints to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaseUrl {
    /// The URL as given, trailing slashes removed (e.g. `http://127.0.0.1:11434`).
    pub url: String,
    /// What adapters get: the same, except Ollama's server root gains `/v1`.
    pub api_base: String,
    /// Where it came from.
    pub source: BaseSource,
}

/// Where a key was found (never the key itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    /// An environment variable; `dotenv` when it came from the project's `.env`.
    Var {
        /// Variable name.
        name: String,
        /// Whether the value came from `.env`.
        dotenv: bool,
    },
    /// `api_key` in a config file.
    Config(Origin),
}

/// Whether a provider has the key it needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyStatus {
    /// The provider needs no key (Ollama, demo, a local server).
    NotNeeded,
    /// A key is available.
    Set(KeySource),
    /// A key is needed and none of its variables is set.
    Missing,
}

/// One provider as the loaded config defines it. `Debug` shows header names only (a header
/// can carry a token) and never the inline key.
#[derive(Clone, PartialEq)]
pub struct ProviderDef {
    /// The name used in specs (`openai`, `local`).
    pub name: String,
    /// Which adapter talks to it.
    pub kind: ApiKind,
    /// Built in (as opposed to defined in a config file).
    pub builtin: bool,
    /// Environment variable that overrides the base URL (built-ins only).
    pub base_env: Option<String>,
    /// Base URL from the config file.
    pub config_base: Option<(String, Origin)>,
    /// Built-in default base URL.
    pub default_base: Option<String>,
    /// Appended to the base URL unless already there (Ollama: `/v1`).
    pub api_suffix: Option<String>,
    /// Variables tried for the key, in order.
    pub key_vars: Vec<String>,
    /// Key written in a config file (allowed, discouraged).
    pub config_key: Option<(Secret, Origin)>,
    /// Whether requests need a key at all.
    pub needs_key: bool,
    /// Extra request headers from the config file.
    pub headers: Vec<(String, String)>,
    /// Model names listed in the config file for `versus models`.
    pub models: Vec<String>,
    /// Models of this provider cost nothing (demo, Ollama).
    pub free: bool,
    /// `vision = true|false` from the config: whether its models accept images (`None`:
    /// decided per model name).
    pub vision: Option<bool>,
    /// The config block that defined or changed it.
    pub origin: Option<Origin>,
    /// Azure OpenAI's settings (kind `azure`).
    pub azure: AzureDef,
    /// AWS Bedrock's `region` and `profile` (kind `bedrock`).
    pub bedrock: crate::provider::bedrock::credentials::Lookup,
    /// A key is used when set but not required (a LiteLLM proxy without a master key).
    pub key_optional: bool,
    /// A gateway to other providers' models (LiteLLM): a model without a price of its own is
    /// priced as the model its name names (`anthropic/claude-sonnet-4-5`, `gpt-4.1`).
    pub gateway: bool,
}

/// Azure OpenAI's settings of one provider as configured.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AzureDef {
    /// The OpenAI API the deployments are called through.
    pub api: AzureApi,
    /// `api-version`, when configured.
    pub api_version: Option<String>,
    /// Where an Entra ID token comes from, when configured (user config only).
    pub entra: Option<EntraDef>,
}

/// Where an Entra ID token comes from, as configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntraDef {
    /// `entra_token_env`: the variable's name.
    Env(String),
    /// `entra_token_command`: run with `sh -c`.
    Command(String),
}

impl fmt::Debug for ProviderDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProviderDef")
            .field("name", &self.name)
            .field("kind", &self.kind)
            .field("builtin", &self.builtin)
            .field("base_env", &self.base_env)
            .field("config_base", &self.config_base)
            .field("default_base", &self.default_base)
            .field("api_suffix", &self.api_suffix)
            .field("key_vars", &self.key_vars)
            .field("config_key", &self.config_key)
            .field("needs_key", &self.needs_key)
            .field(
                "headers",
                &self.headers.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            )
            .field("models", &self.models)
            .field("free", &self.free)
            .field("vision", &self.vision)
            .field("origin", &self.origin)
            .field("azure", &self.azure)
            .field("bedrock", &self.bedrock)
            .field("key_optional", &self.key_optional)
            .field("gateway", &self.gateway)
            .finish()
    }
}

impl ProviderDef {
    fn builtin(
        name: &str,
        kind: ApiKind,
        base: Option<(&str, &str)>,
        key_vars: &[&str],
        free: bool,
    ) -> ProviderDef {
        ProviderDef {
            name: name.to_string(),
            kind,
            builtin: true,
            base_env: base.map(|(var, _)| var.to_string()),
            config_base: None,
            default_base: base.map(|(_, url)| url.to_string()),
            api_suffix: None,
            key_vars: key_vars.iter().map(|v| v.to_string()).collect(),
            config_key: None,
            needs_key: !key_vars.is_empty(),
            headers: Vec::new(),
            models: Vec::new(),
            free,
            vision: None,
            origin: None,
            azure: AzureDef::default(),
            bedrock: Default::default(),
            key_optional: false,
            gateway: false,
        }
    }

    /// An empty definition for a name first seen in a config file; `kind` and `base_url` must
    /// be filled in by the config.
    pub(crate) fn custom(name: &str, origin: Origin) -> ProviderDef {
        ProviderDef {
            name: name.to_string(),
            kind: ApiKind::OpenAiChat,
            builtin: false,
            base_env: None,
            config_base: None,
            default_base: None,
            api_suffix: None,
            key_vars: Vec::new(),
            config_key: None,
            needs_key: false,
            headers: Vec::new(),
            models: Vec::new(),
            free: false,
            vision: None,
            origin: Some(origin),
            azure: AzureDef::default(),
            bedrock: Default::default(),
            key_optional: false,
            gateway: false,
        }
    }

    /// The base URL in effect under `env`; `None` for the demo provider, which has none.
    pub fn base_url(&self, env: &Env) -> Option<BaseUrl> {
        let from_env = self
            .base_env
            .as_deref()
            .and_then(|var| Some((env.non_empty(var)?, BaseSource::Env(var.to_string()))));
        let (url, source) = from_env
            .or_else(|| {
                let (url, origin) = self.config_base.as_ref()?;
                Some((url.as_str(), BaseSource::Config(origin.clone())))
            })
            .or_else(|| Some((self.default_base.as_deref()?, BaseSource::Default)))?;
        let url = url.trim().trim_end_matches('/').to_string();
        let api_base = match &self.api_suffix {
            Some(suffix) if !url.ends_with(suffix.as_str()) => format!("{url}{suffix}"),
            _ => url.clone(),
        };
        Some(BaseUrl {
            url,
            api_base,
            source,
        })
    }

    /// Whether the key is available under `env`, and from where.
    pub fn key_status(&self, env: &Env) -> KeyStatus {
        if !self.needs_key {
            return KeyStatus::NotNeeded;
        }
        for var in &self.key_vars {
            if env.non_empty(var).is_some() {
                return KeyStatus::Set(KeySource::Var {
                    name: var.clone(),
                    dotenv: env.source(var) == Some(VarSource::DotEnv),
                });
            }
        }
        match &self.config_key {
            Some((_, origin)) => KeyStatus::Set(KeySource::Config(origin.clone())),
            None if self.key_optional => KeyStatus::NotNeeded,
            None => KeyStatus::Missing,
        }
    }

    /// The key itself, for the request (never print it).
    pub(crate) fn key_value(&self, env: &Env) -> Option<String> {
        if !self.needs_key {
            return None;
        }
        self.key_vars
            .iter()
            .find_map(|var| env.non_empty(var))
            .map(str::to_string)
            .or_else(|| {
                self.config_key
                    .as_ref()
                    .map(|(key, _)| key.expose().to_string())
            })
    }

    /// The variables to set, for messages: `GEMINI_API_KEY or GOOGLE_API_KEY`.
    pub fn key_hint(&self) -> String {
        if self.key_vars.is_empty() {
            match &self.config_key {
                Some((_, origin)) => format!("api_key in {origin}"),
                None => format!("api_key_env in [providers.{}]", self.name),
            }
        } else {
            self.key_vars.join(" or ")
        }
    }
}

/// Whether `url` is `http://` or `https://` followed by a host.
pub fn is_http_url(url: &str) -> bool {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"));
    rest.is_some_and(|r| !r.is_empty() && !r.starts_with('/') && !r.contains(char::is_whitespace))
}

/// Google Vertex AI: credentials are a file (Application Default Credentials), found when a
/// model resolves, so the provider needs no key variable; `GOOGLE_APPLICATION_CREDENTIALS` is
/// the variable its messages name.
fn vertex() -> ProviderDef {
    let mut def = ProviderDef::builtin(
        "vertex",
        ApiKind::Vertex,
        Some(("VERTEX_BASE_URL", "https://aiplatform.googleapis.com")),
        &["GOOGLE_APPLICATION_CREDENTIALS"],
        false,
    );
    def.needs_key = false;
    def
}

/// The providers that work with no config, in the order they are listed.
pub fn builtin_providers() -> Vec<ProviderDef> {
    let mut ollama = ProviderDef::builtin(
        "ollama",
        ApiKind::OpenAiChat,
        Some(("OLLAMA_BASE_URL", "http://127.0.0.1:11434")),
        &[],
        true,
    );
    ollama.api_suffix = Some("/v1".to_string());
    // Azure OpenAI: no default endpoint (each resource has its own); the variables of
    // OpenAI's own SDKs.
    let mut azure = ProviderDef::builtin(
        "azure",
        ApiKind::Azure,
        None,
        &["AZURE_OPENAI_API_KEY"],
        false,
    );
    azure.base_env = Some("AZURE_OPENAI_ENDPOINT".to_string());
    // A LiteLLM proxy: its documented address and the key variables its clients use; the key
    // (a virtual or master key) is optional, as a proxy without a master key takes none.
    let mut litellm = ProviderDef::builtin(
        "litellm",
        ApiKind::OpenAiChat,
        Some(("LITELLM_BASE_URL", "http://localhost:4000")),
        &["LITELLM_API_KEY", "LITELLM_PROXY_API_KEY"],
        false,
    );
    litellm.key_optional = true;
    litellm.gateway = true;
    // AWS Bedrock: credentials and region where the AWS tools look (provider::bedrock), the
    // endpoint from the region unless AWS's own override variable says otherwise.
    let mut bedrock = ProviderDef::builtin("bedrock", ApiKind::Bedrock, None, &[], false);
    bedrock.base_env = Some("AWS_ENDPOINT_URL_BEDROCK_RUNTIME".to_string());
    vec![
        ProviderDef::builtin(
            "openai",
            ApiKind::OpenAiResponses,
            Some(("OPENAI_BASE_URL", "https://api.openai.com/v1")),
            &["OPENAI_API_KEY"],
            false,
        ),
        ProviderDef::builtin(
            "anthropic",
            ApiKind::Anthropic,
            Some(("ANTHROPIC_BASE_URL", "https://api.anthropic.com")),
            &["ANTHROPIC_API_KEY"],
            false,
        ),
        ProviderDef::builtin(
            "gemini",
            ApiKind::Gemini,
            Some((
                "GEMINI_BASE_URL",
                "https://generativelanguage.googleapis.com",
            )),
            &["GEMINI_API_KEY", "GOOGLE_API_KEY"],
            false,
        ),
        ProviderDef::builtin(
            "openrouter",
            ApiKind::OpenAiChat,
            Some(("OPENROUTER_BASE_URL", "https://openrouter.ai/api/v1")),
            &["OPENROUTER_API_KEY"],
            false,
        ),
        ollama,
        azure,
        litellm,
        bedrock,
        ProviderDef::builtin("demo", ApiKind::Demo, None, &[], true),
        vertex(),
    ]
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn builtin(name: &str) -> ProviderDef {
        builtin_providers()
            .into_iter()
            .find(|p| p.name == name)
            .unwrap()
    }

    #[test]
    fn defaults_match_the_providers_table() {
        let env = Env::empty();
        let cases = [
            (
                "openai",
                ApiKind::OpenAiResponses,
                "https://api.openai.com/v1",
            ),
            ("anthropic", ApiKind::Anthropic, "https://api.anthropic.com"),
            (
                "gemini",
                ApiKind::Gemini,
                "https://generativelanguage.googleapis.com",
            ),
            (
                "openrouter",
                ApiKind::OpenAiChat,
                "https://openrouter.ai/api/v1",
            ),
            ("ollama", ApiKind::OpenAiChat, "http://127.0.0.1:11434/v1"),
        ];
        for (name, kind, api_base) in cases {
            let p = builtin(name);
            assert_eq!(p.kind, kind, "{name}");
            let base = p.base_url(&env).unwrap();
            assert_eq!(base.api_base, api_base, "{name}");
            assert_eq!(base.source, BaseSource::Default);
        }
        assert_eq!(builtin("demo").base_url(&env), None);
        assert_eq!(builtin("demo").kind, ApiKind::Demo);
    }

    #[test]
    fn env_overrides_base_urls_and_trailing_slashes_are_tolerated() {
        let env = Env::from_pairs([
            ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1/"),
            ("OLLAMA_BASE_URL", "http://gpu-box:11434/"),
        ]);
        let openai = builtin("openai").base_url(&env).unwrap();
        assert_eq!(openai.api_base, "http://127.0.0.1:9/v1");
        assert_eq!(openai.source, BaseSource::Env("OPENAI_BASE_URL".into()));
        let ollama = builtin("ollama").base_url(&env).unwrap();
        assert_eq!(ollama.url, "http://gpu-box:11434");
        assert_eq!(ollama.api_base, "http://gpu-box:11434/v1");
        // Users who already wrote the /v1 do not get it twice.
        let env = Env::from_pairs([("OLLAMA_BASE_URL", "http://h:1/v1")]);
        assert_eq!(
            builtin("ollama").base_url(&env).unwrap().api_base,
            "http://h:1/v1"
        );
    }

    #[test]
    fn keys_come_from_the_first_set_variable() {
        let gemini = builtin("gemini");
        assert_eq!(gemini.key_status(&Env::empty()), KeyStatus::Missing);
        let env = Env::from_pairs([("GOOGLE_API_KEY", "g-key"), ("GEMINI_API_KEY", "")]);
        assert_eq!(gemini.key_value(&env).as_deref(), Some("g-key"));
        assert_eq!(
            gemini.key_status(&env),
            KeyStatus::Set(KeySource::Var {
                name: "GOOGLE_API_KEY".into(),
                dotenv: false
            })
        );
        assert_eq!(gemini.key_hint(), "GEMINI_API_KEY or GOOGLE_API_KEY");
        let env = Env::empty().with_dotenv_entries(vec![("GEMINI_API_KEY".into(), "k".into())]);
        assert!(matches!(
            gemini.key_status(&env),
            KeyStatus::Set(KeySource::Var { dotenv: true, .. })
        ));
    }

    #[test]
    fn litellm_uses_a_key_when_set_and_runs_without_one() {
        let litellm = builtin("litellm");
        let env = Env::empty();
        assert_eq!(litellm.key_status(&env), KeyStatus::NotNeeded);
        assert_eq!(litellm.key_value(&env), None);
        assert_eq!(
            litellm.base_url(&env).unwrap().api_base,
            "http://localhost:4000"
        );
        let env = Env::from_pairs([("LITELLM_PROXY_API_KEY", "sk-litellm")]);
        assert_eq!(litellm.key_value(&env).as_deref(), Some("sk-litellm"));
        assert!(matches!(litellm.key_status(&env), KeyStatus::Set(_)));
    }

    #[test]
    fn keyless_providers_need_no_key() {
        let env = Env::empty();
        for name in ["ollama", "demo"] {
            assert_eq!(builtin(name).key_status(&env), KeyStatus::NotNeeded);
            assert_eq!(builtin(name).key_value(&env), None);
            assert!(builtin(name).free);
        }
    }

    #[test]
    fn secrets_do_not_show_in_debug() {
        let mut p = builtin("openai");
        p.config_key = Some((Secret::new("sk-inline"), Origin::new("/c.toml", Some(3))));
        p.headers.push(("X-Api-Token".into(), "tok-123".into()));
        let debug = format!("{p:?}");
        assert!(
            !debug.contains("sk-inline") && !debug.contains("tok-123"),
            "{debug}"
        );
        assert!(debug.contains("X-Api-Token"));
        assert_eq!(p.key_value(&Env::empty()).as_deref(), Some("sk-inline"));
    }
}
