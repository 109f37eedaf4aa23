//! [`resolve`]: from a [`ModelSpec`] to everything needed to talk to that model.
//!
//! A pure function of `(spec, Config, Env)`: the runner, `versus ask` and tests all get the
//! same answer for the same inputs. A missing key is its own error variant because callers
//! treat it differently: the model is skipped with a one-line warning, the run goes on.

use super::env::{Env, VarSource};
use super::kind::ApiKind;
use super::load::Config;
use super::prices::Price;
use super::providers::{BaseSource, EntraDef, KeySource, KeyStatus, ProviderDef, is_http_url};
use super::spec::{ModelSpec, SpecError};
use crate::provider::WireConfig;
use crate::provider::azure::{AzureSettings, EntraToken};
use crate::provider::bedrock::BedrockSettings;
use crate::provider::bedrock::credentials::{AWS_VARS, AwsEnv};
use crate::provider::vertex::{CREDENTIALS_HINT, VertexTarget, auth::credentials_path};

/// A model ready to be built into a client: which adapter, where, with which key, at what
/// price. `Debug` shows no key (WireConfig redacts it).
#[derive(Debug, Clone)]
pub struct ResolvedModel {
    /// The entry (`openai/gpt-5#2`).
    pub spec: ModelSpec,
    /// Which adapter to use.
    pub kind: ApiKind,
    /// Provider name, API base, key, headers. For demo models the base URL is empty.
    pub wire: WireConfig,
    /// USD per million tokens; `None` is unknown (show "unknown", never $0).
    pub price: Option<Price>,
    /// Context window in tokens, when known.
    pub context_window: Option<u64>,
    /// What only a cloud provider's wire needs (Azure's API and token).
    pub cloud: CloudSettings,
    /// For Vertex models: project, location, API base and credentials file.
    pub vertex: Option<VertexTarget>,
}

/// The settings a cloud kind's wire takes besides its [`WireConfig`].
#[derive(Debug, Clone, Default)]
pub enum CloudSettings {
    /// Not a cloud kind.
    #[default]
    None,
    /// Kind `azure`.
    Azure(AzureSettings),
    /// Kind `bedrock`.
    Bedrock(BedrockSettings),
}

impl ResolvedModel {
    /// Cost of a usage in USD, `None` when the price is unknown.
    pub fn cost(&self, usage: &crate::model::Usage) -> Option<f64> {
        self.price.map(|p| p.cost(usage))
    }
}

/// Why a spec could not be resolved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    /// The provider is unknown (lists the known ones).
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// The provider needs a key and none is set. One line; callers skip the model with it.
    #[error(
        "{model}: no API key for {provider}; set {hint} (in the environment or the project's .env) to use it"
    )]
    MissingKey {
        /// The entry label.
        model: String,
        /// Provider name.
        provider: String,
        /// What to set: `OPENAI_API_KEY`, `GEMINI_API_KEY or GOOGLE_API_KEY`...
        hint: String,
    },
    /// The project's `.env` redirects a provider whose key comes from elsewhere (the shell or
    /// the user config): a cloned repository must not be able to send the user's key to a
    /// server of its choosing.
    #[error(
        "{model}: {var} comes from the project's .env, but the {provider} key comes from {key_from}; versus will not send your key to a server a project file chose. Set {var} in your shell (or put the key in that .env too) if you trust it"
    )]
    UntrustedBaseUrl {
        /// The entry label.
        model: String,
        /// Provider name.
        provider: String,
        /// The base URL variable set in `.env`.
        var: String,
        /// Where the key comes from.
        key_from: String,
    },
    /// The provider has no default address and none is configured (Azure: each resource
    /// has its own). Skippable, like a missing key.
    #[error("{model}: no endpoint for {provider}; set {hint} to your resource's URL to use it")]
    MissingEndpoint {
        /// The entry label.
        model: String,
        /// Provider name.
        provider: String,
        /// What to set.
        hint: String,
    },
    /// The base URL in effect is not an http(s) URL.
    #[error(
        "{model}: the base URL for {provider} from {origin} is not an http:// or https:// URL; fix it (e.g. {example}) or unset it to use the default"
    )]
    BadBaseUrl {
        /// The entry label.
        model: String,
        /// Provider name.
        provider: String,
        /// Where it came from (a variable name or a config file line).
        origin: String,
        /// A well-formed example.
        example: String,
    },
}

impl ResolveError {
    /// Whether the caller should skip this model with a warning and go on (a missing key),
    /// rather than stop (a typo in a spec or a broken URL).
    pub fn is_skippable(&self) -> bool {
        matches!(
            self,
            ResolveError::MissingKey { .. } | ResolveError::MissingEndpoint { .. }
        )
    }
}

/// Resolves one spec: provider (built in or configured), kind, base URL and key from `env`,
/// extra headers, price and context window.
pub fn resolve(
    spec: &ModelSpec,
    config: &Config,
    env: &Env,
) -> Result<ResolvedModel, ResolveError> {
    config.check_provider(spec, &spec.to_string())?;
    let Some(provider) = config.provider(&spec.provider) else {
        // check_provider has just said it exists; keep the error path anyway.
        return Err(ResolveError::Spec(SpecError::UnknownProvider {
            spec: spec.to_string(),
            provider: spec.provider.clone(),
            known: config.provider_names(),
            suggestion: None,
        }));
    };
    let base_from_dotenv = match provider.base_url(env).map(|b| b.source) {
        Some(BaseSource::Env(var)) if env.source(&var) == Some(VarSource::DotEnv) => Some(var),
        _ => None,
    };
    if let (Some(var), KeyStatus::Set(key)) = (&base_from_dotenv, provider.key_status(env)) {
        let key_from = match key {
            KeySource::Var { dotenv: true, .. } => None,
            KeySource::Var { name, .. } => Some(format!("the environment variable {name}")),
            KeySource::Config(origin) => Some(format!("the config file ({origin})")),
        };
        if let Some(key_from) = key_from {
            return Err(ResolveError::UntrustedBaseUrl {
                model: spec.to_string(),
                provider: provider.name.clone(),
                var: var.clone(),
                key_from,
            });
        }
    }
    let mut base_hint = String::new();
    let base = match provider.base_url(env) {
        Some(base) => {
            base_hint = match (&base.source, &provider.base_env) {
                (BaseSource::Default, Some(var)) => var.clone(),
                (source, _) => source.to_string(),
            };
            let ok = is_http_url(&base.api_base);
            if !ok {
                return Err(ResolveError::BadBaseUrl {
                    model: spec.to_string(),
                    provider: provider.name.clone(),
                    origin: base.source.to_string(),
                    example: provider
                        .default_base
                        .clone()
                        .unwrap_or_else(|| "http://127.0.0.1:8000/v1".to_string()),
                });
            }
            base.api_base
        }
        None => String::new(),
    };
    if base.is_empty() && provider.kind == ApiKind::Azure {
        return Err(ResolveError::MissingEndpoint {
            model: spec.to_string(),
            provider: provider.name.clone(),
            hint: match &provider.base_env {
                Some(var) => format!("{var} or base_url in [providers.{}]", provider.name),
                None => format!("base_url in [providers.{}]", provider.name),
            },
        });
    }
    let (entra, cloud_key_hint) = azure_token(provider, env);
    let api_key = match provider.key_status(env) {
        KeyStatus::NotNeeded => None,
        KeyStatus::Missing if entra.is_some() => None,
        KeyStatus::Missing => {
            return Err(ResolveError::MissingKey {
                model: spec.to_string(),
                provider: provider.name.clone(),
                hint: cloud_key_hint.unwrap_or_else(|| provider.key_hint()),
            });
        }
        KeyStatus::Set(_) => provider.key_value(env),
    };
    let cloud = match provider.kind {
        ApiKind::Azure => CloudSettings::Azure(AzureSettings {
            api: provider.azure.api,
            api_version: provider.azure.api_version.clone(),
            entra,
        }),
        ApiKind::Bedrock => CloudSettings::Bedrock(BedrockSettings {
            lookup: provider.bedrock.clone(),
            env: AwsEnv::from_pairs(
                AWS_VARS
                    .iter()
                    .filter_map(|name| Some((*name, env.non_empty(name)?))),
            ),
        }),
        _ => CloudSettings::None,
    };
    let vertex = match provider.kind {
        ApiKind::Vertex => Some(vertex_target(spec, &provider.name, env, &base, provider)?),
        _ => None,
    };
    let info = config.model_info(spec);
    Ok(ResolvedModel {
        spec: spec.clone(),
        kind: provider.kind,
        wire: WireConfig {
            provider: provider.name.clone(),
            base_url: base,
            api_key,
            // What a 401 tells the user to check, for every provider, a key-less one too (a
            // local server that turns out to want a key, a custom `[providers.NAME]`): its own
            // variables, else where its key is configured, never another API's variable.
            key_hint: provider.key_hint(),
            headers: provider.headers.clone(),
            base_hint,
            vision: info
                .vision
                .or(provider.vision)
                .unwrap_or_else(|| super::vision::default_vision(&spec.model)),
        },
        price: info.price,
        context_window: info.context_window,
        cloud,
        vertex,
    })
}

/// Where a Vertex model lives: credentials (`GOOGLE_APPLICATION_CREDENTIALS`, else gcloud's
/// Application Default Credentials file; none is a missing key, so the model is skipped with
/// what to do), project (`GOOGLE_CLOUD_PROJECT`, else the credentials'), location
/// (`GOOGLE_CLOUD_LOCATION`, else `global`) and the API base for that location unless one is
/// configured.
fn vertex_target(
    spec: &ModelSpec,
    provider_name: &str,
    env: &Env,
    base: &str,
    provider: &super::providers::ProviderDef,
) -> Result<VertexTarget, ResolveError> {
    let credentials =
        credentials_path(|var| env.non_empty(var).map(str::to_string)).ok_or_else(|| {
            ResolveError::MissingKey {
                model: spec.to_string(),
                provider: provider_name.to_string(),
                hint: CREDENTIALS_HINT.to_string(),
            }
        })?;
    let location = env
        .non_empty("GOOGLE_CLOUD_LOCATION")
        .unwrap_or("global")
        .to_string();
    let base_url = match provider.base_url(env).map(|b| b.source) {
        Some(BaseSource::Default) | None => VertexTarget::default_base(&location),
        Some(_) => base.to_string(),
    };
    Ok(VertexTarget {
        project: env.non_empty("GOOGLE_CLOUD_PROJECT").map(str::to_string),
        location,
        base_url,
        credentials,
    })
}

/// An Azure provider's Entra token source under `env` (a variable's value is read now), and,
/// when a configured token variable is unset, what to set instead of the key.
fn azure_token(provider: &ProviderDef, env: &Env) -> (Option<EntraToken>, Option<String>) {
    match &provider.azure.entra {
        None => (None, None),
        Some(EntraDef::Command(command)) => (Some(EntraToken::Command(command.clone())), None),
        Some(EntraDef::Env(var)) => match env.non_empty(var) {
            Some(token) => (Some(EntraToken::Value(token.to_string())), None),
            None => (
                None,
                Some(format!(
                    "{} (or the Entra ID token in {var})",
                    provider.key_hint()
                )),
            ),
        },
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::config::file::parse_layer;
    use crate::config::load::FileRole;

    fn spec(s: &str) -> ModelSpec {
        ModelSpec::parse(s).unwrap()
    }

    #[test]
    fn a_project_env_cannot_redirect_a_key_it_did_not_provide() {
        let redirect = vec![(
            "OPENAI_BASE_URL".to_string(),
            "https://evil.example/v1".to_string(),
        )];
        let env = Env::from_pairs([("OPENAI_API_KEY", "sk-user-secret")])
            .with_dotenv_entries(redirect.clone());
        let err = resolve(&spec("openai/gpt-5"), &builtin(), &env).unwrap_err();
        assert!(
            matches!(err, ResolveError::UntrustedBaseUrl { .. }),
            "{err}"
        );
        assert!(!err.is_skippable());
        let text = err.to_string();
        assert!(text.contains("OPENAI_BASE_URL") && text.contains("OPENAI_API_KEY"));
        assert!(!text.contains("sk-user-secret"));

        // Both from the same .env: the project supplies its own key, nothing of the user's
        // leaves.
        let mut both = redirect.clone();
        both.push(("OPENAI_API_KEY".to_string(), "sk-project".to_string()));
        let env = Env::empty().with_dotenv_entries(both);
        let ok = resolve(&spec("openai/gpt-5"), &builtin(), &env).unwrap();
        assert_eq!(ok.wire.base_url, "https://evil.example/v1");

        // A base URL the user set in the shell is trusted.
        let env = Env::from_pairs([
            ("OPENAI_API_KEY", "sk-user-secret"),
            ("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1"),
        ]);
        assert!(resolve(&spec("openai/gpt-5"), &builtin(), &env).is_ok());

        // A keyless provider (ollama) may be pointed anywhere by the project.
        let env = Env::empty().with_dotenv_entries(vec![(
            "OLLAMA_BASE_URL".to_string(),
            "http://gpu-box:11434".to_string(),
        )]);
        assert!(resolve(&spec("ollama/qwen2.5-coder:7b"), &builtin(), &env).is_ok());
    }

    fn builtin() -> Config {
        Config::builtin().unwrap()
    }

    #[test]
    fn resolves_openai_with_key_price_and_window() {
        let env = Env::from_pairs([("OPENAI_API_KEY", "sk-test-123")]);
        let m = resolve(&spec("openai/gpt-5#2"), &builtin(), &env).unwrap();
        assert_eq!(m.kind, ApiKind::OpenAiResponses);
        assert_eq!(m.wire.provider, "openai");
        assert_eq!(m.wire.base_url, "https://api.openai.com/v1");
        assert_eq!(m.wire.api_key.as_deref(), Some("sk-test-123"));
        assert_eq!(m.wire.key_hint, "OPENAI_API_KEY");
        assert_eq!(m.spec.to_string(), "openai/gpt-5#2");
        assert_eq!(m.price.unwrap().input, 1.25);
        assert_eq!(m.context_window, Some(400_000));
        assert!(
            !format!("{m:?}").contains("sk-test-123"),
            "Debug leaks the key"
        );
    }

    #[test]
    fn missing_key_is_a_skippable_one_line_error_naming_the_variable() {
        let err = resolve(
            &spec("anthropic/claude-sonnet-4-5"),
            &builtin(),
            &Env::empty(),
        )
        .unwrap_err();
        assert!(err.is_skippable());
        let text = err.to_string();
        assert!(text.contains("ANTHROPIC_API_KEY"), "{text}");
        assert!(!text.contains('\n'));
        let err = resolve(&spec("gemini/gemini-2.5-pro"), &builtin(), &Env::empty()).unwrap_err();
        assert!(
            err.to_string().contains("GEMINI_API_KEY or GOOGLE_API_KEY"),
            "{err}"
        );
    }

    #[test]
    fn keyless_providers_resolve_without_env_and_are_free() {
        let m = resolve(&spec("ollama/qwen2.5-coder:7b"), &builtin(), &Env::empty()).unwrap();
        assert_eq!(m.kind, ApiKind::OpenAiChat);
        assert_eq!(m.wire.base_url, "http://127.0.0.1:11434/v1");
        assert_eq!(m.wire.api_key, None);
        assert_eq!(m.price, Some(Price::FREE));
        let d = resolve(
            &spec("demo/path/to/script.jsonl"),
            &builtin(),
            &Env::empty(),
        )
        .unwrap();
        assert_eq!(d.kind, ApiKind::Demo);
        assert_eq!(d.wire.base_url, "");
        assert_eq!(d.spec.model, "path/to/script.jsonl");
        assert_eq!(d.price, Some(Price::FREE));
    }

    #[test]
    fn env_base_urls_apply_and_bad_ones_are_reported_by_source() {
        let env = Env::from_pairs([
            ("OPENROUTER_API_KEY", "k"),
            ("OPENROUTER_BASE_URL", "http://127.0.0.1:4000/api/v1/"),
        ]);
        let m = resolve(
            &spec("openrouter/meta-llama/llama-3.3-70b-instruct"),
            &builtin(),
            &env,
        )
        .unwrap();
        assert_eq!(m.wire.base_url, "http://127.0.0.1:4000/api/v1");
        assert_eq!(m.price.unwrap().output, 0.32);

        let env = Env::from_pairs([
            ("ANTHROPIC_API_KEY", "k"),
            ("ANTHROPIC_BASE_URL", "localhost:1"),
        ]);
        let err = resolve(&spec("anthropic/claude-haiku-4-5"), &builtin(), &env).unwrap_err();
        assert!(!err.is_skippable());
        assert!(err.to_string().contains("ANTHROPIC_BASE_URL"), "{err}");
    }

    #[test]
    fn unknown_providers_list_the_known_ones() {
        let err = resolve(&spec("nimbus/gpt-5"), &builtin(), &Env::empty()).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("unknown provider `nimbus`"), "{text}");
        assert!(
            text.contains(
                "openai, anthropic, gemini, openrouter, ollama, azure, litellm, bedrock, demo"
            ),
            "{text}"
        );
    }

    #[test]
    fn configured_providers_resolve_like_builtins() {
        let text = r#"
[providers.openai]
kind = "openai-chat"

[providers.local]
kind = "openai-chat"
base_url = "http://127.0.0.1:8000/v1"
api_key_env = "LOCAL_KEY"
headers = { "X-Team" = "core" }

[prices."local/qwen"]
input = 0.5
output = 1.0
"#;
        let layer = parse_layer(text, Path::new("/u/config.toml")).unwrap();
        let config = Config::from_layers(&[(layer, FileRole::User)]).unwrap();
        let env = Env::from_pairs([("LOCAL_KEY", "local-secret"), ("OPENAI_API_KEY", "sk")]);
        let m = resolve(&spec("local/qwen"), &config, &env).unwrap();
        assert_eq!(m.kind, ApiKind::OpenAiChat);
        assert_eq!(m.wire.base_url, "http://127.0.0.1:8000/v1");
        assert_eq!(m.wire.api_key.as_deref(), Some("local-secret"));
        assert_eq!(
            m.wire.headers,
            vec![("X-Team".to_string(), "core".to_string())]
        );
        assert_eq!(
            m.cost(&crate::model::Usage {
                input: 2_000_000,
                ..Default::default()
            }),
            Some(1.0)
        );
        let o = resolve(&spec("openai/gpt-5"), &config, &env).unwrap();
        assert_eq!(
            o.kind,
            ApiKind::OpenAiChat,
            "config selects Chat Completions"
        );

        let err = resolve(&spec("local/qwen"), &config, &Env::empty()).unwrap_err();
        assert!(err.to_string().contains("set LOCAL_KEY"), "{err}");
    }

    #[test]
    fn inline_config_keys_are_used_after_env_and_never_printed() {
        let text = "[providers.openai]\napi_key = \"sk-inline-999\"\n";
        let layer = parse_layer(text, Path::new("/u/config.toml")).unwrap();
        let config = Config::from_layers(&[(layer, FileRole::User)]).unwrap();
        let m = resolve(&spec("openai/gpt-5"), &config, &Env::empty()).unwrap();
        assert_eq!(m.wire.api_key.as_deref(), Some("sk-inline-999"));
        assert!(!format!("{m:?}{config:?}").contains("sk-inline-999"));
        let env = Env::from_pairs([("OPENAI_API_KEY", "sk-env")]);
        let m = resolve(&spec("openai/gpt-5"), &config, &env).unwrap();
        assert_eq!(m.wire.api_key.as_deref(), Some("sk-env"));
    }

    #[test]
    fn unknown_price_stays_unknown() {
        let env = Env::from_pairs([("OPENAI_API_KEY", "k")]);
        let m = resolve(&spec("openai/gpt-99"), &builtin(), &env).unwrap();
        assert_eq!(m.price, None);
        assert_eq!(m.cost(&crate::model::Usage::default()), None);
    }

    #[test]
    fn vision_from_the_model_entry_then_the_provider_then_the_name() {
        let env = Env::from_pairs([
            ("OPENAI_API_KEY", "sk-test"),
            ("ANTHROPIC_API_KEY", "sk-ant"),
        ]);
        let vision =
            |config: &Config, s: &str| resolve(&spec(s), config, &env).unwrap().wire.vision;
        let plain = builtin();
        assert!(vision(&plain, "openai/gpt-5"));
        assert!(vision(&plain, "anthropic/claude-sonnet-4-5"));
        assert!(!vision(&plain, "openai/o3-mini"));
        assert!(!vision(&plain, "ollama/qwen3-coder:30b"));
        let text = "[providers.ollama]\nvision = true\n[prices.\"ollama/qwen3-coder:30b\"]\nvision = false\n[prices.\"openai/gpt-5\"]\nvision = false\n";
        let layer = parse_layer(text, Path::new("/u/config.toml")).unwrap();
        let config = Config::from_layers(&[(layer, FileRole::User)]).unwrap();
        assert!(
            vision(&config, "ollama/llama3.1"),
            "the provider block says yes"
        );
        assert!(
            !vision(&config, "ollama/qwen3-coder:30b"),
            "the model's entry wins over its provider"
        );
        assert!(
            !vision(&config, "openai/gpt-5"),
            "an entry overrides the name"
        );
        assert!(vision(&config, "anthropic/claude-sonnet-4-5"));
    }
}
