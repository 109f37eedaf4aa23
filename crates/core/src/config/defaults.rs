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
    /// (a key in the environment, `.env` or an `api_key` in the config), else none.
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
        let from = if specs.is_empty() {
            DefaultsFrom::Nothing
        } else {
            DefaultsFrom::Keys(picked)
        };
        DefaultModels { specs, from }
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
    fn every_default_is_in_the_price_table() {
        let config = Config::builtin().unwrap();
        for (provider, model) in KEY_DEFAULTS {
            assert!(
                config.prices.has_builtin(provider, model),
                "{provider}/{model} has no price"
            );
        }
    }
}
