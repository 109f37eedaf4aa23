//! Which models run when none are named: the config's `models`, else one documented default
//! model per provider whose key is set, else none (the interface's demo mode).
//!
//! Decided once here, from `(Config, Env)`, so `versus ask`, `versus run` and the interface
//! start the same models from the same keys and say so in the same words. A user who set
//! `OPENAI_API_KEY` and typed `versus ask "..."` meant "use OpenAI", not "no model given".

use super::env::Env;
use super::load::Config;
use super::providers::{KeySource, KeyStatus};
use super::spec::ModelSpec;

/// The model each built-in keyed provider runs when its key is set and no model is named
/// (docs/config.md, "Default models"): a current, generally available model of each vendor.
/// Ollama and local servers need no key, so a key says nothing about them: they have none.
pub const KEY_DEFAULTS: [(&str, &str); 4] = [
    ("openai", "gpt-5.4"),
    ("anthropic", "claude-sonnet-4-6"),
    ("gemini", "gemini-2.5-pro"),
    ("openrouter", "anthropic/claude-sonnet-4.6"),
];

/// The model Vertex AI runs when Google credentials and a project are the only credentials
/// found (docs/config.md, "Default models"): Google's own model, which every Vertex project
/// can call without enabling a partner model first.
pub const VERTEX_DEFAULT: (&str, &str) = ("vertex", "gemini-2.5-pro");

/// Where the models of a run without `-m` (and without a recipe's models) came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DefaultsFrom {
    /// The config's `models = [...]`.
    Config,
    /// One default model per provider whose key is set: `(spec, where its key is)` each.
    Keys(Vec<(String, String)>),
    /// No `models` and no key: nothing to run (the interface shows its demo).
    Nothing,
}

/// The models to run when none are named, and why those.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefaultModels {
    /// The models, in provider order.
    pub specs: Vec<ModelSpec>,
    /// Where they came from.
    pub from: DefaultsFrom,
}

impl DefaultModels {
    /// The line front ends show (the `ask` header, the interface's banner) when the models came
    /// from keys, so the user sees which models run and how to choose others; `None` otherwise.
    pub fn note(&self) -> Option<String> {
        let DefaultsFrom::Keys(picked) = &self.from else {
            return None;
        };
        let list: Vec<String> = picked
            .iter()
            .map(|(spec, key)| format!("{spec} ({key})"))
            .collect();
        Some(format!(
            "no model named: using the default model of each key set: {}; name others with -m PROVIDER/MODEL or `models = [...]` in the config",
            list.join(", ")
        ))
    }
}

impl Config {
    /// The models a run uses when none are named with `-m` (or in a recipe): the config's
    /// `models`, else [`KEY_DEFAULTS`] of every built-in provider whose key is set under `env`
    /// (a key in the environment, `.env` or an `api_key` in the config), else
    /// [`VERTEX_DEFAULT`] when Google credentials (`GOOGLE_APPLICATION_CREDENTIALS` or
    /// gcloud's Application Default Credentials) and a project are all there is, else none.
    /// Vertex comes last and only alone: gcloud's credentials file is often left on a machine
    /// by other tools, and it should not add a paid model to a run the user keyed for
    /// another provider.
    pub fn default_models_for(&self, env: &Env) -> DefaultModels {
        if !self.default_models.is_empty() {
            return DefaultModels {
                specs: self.default_models.clone(),
                from: DefaultsFrom::Config,
            };
        }
        let mut specs = Vec::new();
        let mut picked = Vec::new();
        for def in self.providers() {
            let Some((_, model)) = KEY_DEFAULTS.iter().find(|(p, _)| *p == def.name) else {
                continue;
            };
            let KeyStatus::Set(source) = def.key_status(env) else {
                continue;
            };
            let Ok(spec) = ModelSpec::parse(&format!("{}/{model}", def.name)) else {
                continue;
            };
            let key = match source {
                KeySource::Var { name, .. } => name,
                KeySource::Config(origin) => format!("api_key in {origin}"),
            };
            picked.push((spec.to_string(), key));
            specs.push(spec);
        }
        if specs.is_empty()
            && let Some((spec, source)) = self.vertex_default(env)
        {
            picked.push((spec.to_string(), source));
            specs.push(spec);
        }
        let from = if specs.is_empty() {
            DefaultsFrom::Nothing
        } else {
            DefaultsFrom::Keys(picked)
        };
        DefaultModels { specs, from }
    }
}

impl Config {
    /// [`VERTEX_DEFAULT`] and where its credentials are, when the `vertex` provider is
    /// configured, its credentials are found and usable, and a project is known.
    fn vertex_default(&self, env: &Env) -> Option<(ModelSpec, String)> {
        let (provider, model) = VERTEX_DEFAULT;
        let def = self.provider(provider)?;
        if def.kind != super::kind::ApiKind::Vertex {
            return None;
        }
        let status = crate::provider::vertex::auth::credential_status(|var| {
            env.non_empty(var).map(str::to_string)
        });
        let project = env
            .non_empty("GOOGLE_CLOUD_PROJECT")
            .map(str::to_string)
            .or(status.project.clone());
        if !status.usable() || project.is_none() {
            return None;
        }
        let spec = ModelSpec::parse(&format!("{provider}/{model}")).ok()?;
        Some((spec, status.from.to_string()))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn labels(d: &DefaultModels) -> Vec<String> {
        d.specs.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn one_default_per_key_set_in_provider_order() {
        let config = Config::builtin().unwrap();
        let env = Env::from_pairs([("GOOGLE_API_KEY", "g"), ("OPENAI_API_KEY", "o")]);
        let d = config.default_models_for(&env);
        assert_eq!(labels(&d), ["openai/gpt-5.4", "gemini/gemini-2.5-pro"]);
        let note = d.note().unwrap();
        assert!(note.contains("openai/gpt-5.4 (OPENAI_API_KEY)"), "{note}");
        assert!(
            note.contains("gemini/gemini-2.5-pro (GOOGLE_API_KEY)"),
            "{note}"
        );
        assert!(!note.contains("\"o\"") && !note.contains("(o)"), "{note}");
    }

    #[test]
    fn no_key_means_nothing_and_configured_models_win() {
        let mut config = Config::builtin().unwrap();
        let d = config.default_models_for(&Env::from_pairs([("OPENAI_API_KEY", "")]));
        assert_eq!(d.from, DefaultsFrom::Nothing);
        assert!(d.specs.is_empty() && d.note().is_none());
        config.default_models = vec![ModelSpec::parse("demo/good").unwrap()];
        let d = config.default_models_for(&Env::from_pairs([("OPENAI_API_KEY", "o")]));
        assert_eq!(d.from, DefaultsFrom::Config);
        assert_eq!(labels(&d), ["demo/good"]);
    }

    #[test]
    fn vertex_runs_its_default_only_with_credentials_and_a_project_and_no_key() {
        let dir = tempfile::tempdir().unwrap();
        let sa = dir.path().join("sa.json");
        std::fs::write(
            &sa,
            r#"{"type": "authorized_user", "client_id": "c", "client_secret": "s", "refresh_token": "r"}"#,
        )
        .unwrap();
        let config = Config::builtin().unwrap();
        let path = sa.to_str().unwrap();
        // No project: nothing.
        let env = Env::from_pairs([("GOOGLE_APPLICATION_CREDENTIALS", path)]);
        assert_eq!(config.default_models_for(&env).from, DefaultsFrom::Nothing);
        let env = Env::from_pairs([
            ("GOOGLE_APPLICATION_CREDENTIALS", path),
            ("GOOGLE_CLOUD_PROJECT", "p"),
        ]);
        let d = config.default_models_for(&env);
        assert_eq!(labels(&d), ["vertex/gemini-2.5-pro"]);
        assert!(
            d.note()
                .unwrap()
                .contains("vertex/gemini-2.5-pro (GOOGLE_APPLICATION_CREDENTIALS)")
        );
        // With a key set too, the key's default runs alone.
        let env = Env::from_pairs([
            ("GOOGLE_APPLICATION_CREDENTIALS", path),
            ("GOOGLE_CLOUD_PROJECT", "p"),
            ("OPENAI_API_KEY", "o"),
        ]);
        assert_eq!(labels(&config.default_models_for(&env)), ["openai/gpt-5.4"]);
        // A file that is not credentials: nothing.
        std::fs::write(&sa, "not json").unwrap();
        let env = Env::from_pairs([
            ("GOOGLE_APPLICATION_CREDENTIALS", path),
            ("GOOGLE_CLOUD_PROJECT", "p"),
        ]);
        assert_eq!(config.default_models_for(&env).from, DefaultsFrom::Nothing);
    }

    #[test]
    fn every_default_is_in_the_price_table() {
        let config = Config::builtin().unwrap();
        assert!(
            config
                .prices
                .has_builtin(VERTEX_DEFAULT.0, VERTEX_DEFAULT.1)
        );
        for (provider, model) in KEY_DEFAULTS {
            assert!(
                config.prices.has_builtin(provider, model),
                "{provider}/{model} has no price"
            );
        }
    }
}
