//! The models a run was asked for, made runnable: the one skip policy of every front end.
//!
//! `versus ask`, `versus run` and anything else that takes a list of model specs resolve them
//! here, so a model whose API key is missing is skipped with the same warning everywhere
//! (which model, which variable to set and where), and a run where every model was skipped
//! stops with the same error after those warnings were given. Any other problem (an unknown
//! provider, a bad base URL, an unreadable demo script) stops the run: it would fail the same
//! way however often it was retried.

use std::path::PathBuf;
use std::sync::Arc;

use crate::agent::AgentSettings;
use crate::config::{Config, Env, ModelSpec, ResolveError, ResolvedModel, resolve};
use crate::provider::{ModelClient, RetryPolicy};
use crate::tools::ToolRegistry;

use super::{ModelEntry, client_for, entry_for};

/// One model asked for, with the folder its demo script (if it is one) is read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelRequest {
    /// The model entry (`openai/gpt-5#2`).
    pub spec: ModelSpec,
    /// Folder a demo script path (`demo/path/to/script.jsonl`) is read from.
    pub script_base: PathBuf,
}

/// A model asked for that cannot run, and why (the variable to set, where).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedModel {
    /// The model entry.
    pub model: String,
    /// Why it was skipped and how to fix it (starts with the model entry).
    pub reason: String,
}

impl SkippedModel {
    /// The warning every front end prints for it (after `versus: `), so `ask` and `run` say
    /// the same thing.
    pub fn warning(&self) -> String {
        format!("skipping {}", self.reason)
    }
}

/// One runnable model.
pub struct RosterModel {
    /// The entry to fan out to.
    pub entry: ModelEntry,
    /// Its context window in tokens, when known (automatic compaction needs it).
    pub window: Option<u64>,
}

/// The models that can run, and those skipped, each in the order asked.
pub struct Roster {
    /// Runnable models (never empty).
    pub models: Vec<RosterModel>,
    /// Skipped models.
    pub skipped: Vec<SkippedModel>,
}

/// Why the models asked for cannot run.
#[derive(Debug, thiserror::Error)]
pub enum RosterError {
    /// A model's spec or provider settings are wrong (not skippable).
    #[error(transparent)]
    Resolve(#[from] ResolveError),
    /// The model's client could not be made (an unreadable demo script).
    #[error("{model}: {message}")]
    Client {
        /// The model entry.
        model: String,
        /// What is wrong and what to do.
        message: String,
    },
    /// The HTTP client could not start.
    #[error("start the HTTP client: {0}")]
    Http(String),
    /// Every model was skipped; the warnings were given through `warn`.
    #[error("no model can run: every model given was skipped (see the warnings above)")]
    AllSkipped {
        /// The skipped models.
        skipped: Vec<SkippedModel>,
    },
}

/// Why one model asked for cannot run: skipped (a missing key: the run goes on without it,
/// after a warning) or an error that would fail however often it was retried.
#[derive(Debug)]
pub enum Unrunnable {
    /// Skipped, with the warning every front end gives.
    Skipped(SkippedModel),
    /// Not skippable.
    Error(RosterError),
}

/// One model asked for, made runnable: its resolution and its adapter. The one place a spec
/// becomes a client, so `versus ask`, `versus run` and the interface (which builds its agents
/// turn by turn, as its settings change) skip and refuse the same models with the same words.
pub fn runnable(
    request: &ModelRequest,
    config: &Config,
    env: &Env,
    http: &reqwest::Client,
) -> Result<(ResolvedModel, Arc<dyn ModelClient>), Unrunnable> {
    let resolved = match resolve(&request.spec, config, env) {
        Ok(resolved) => resolved,
        Err(err) if err.is_skippable() => {
            return Err(Unrunnable::Skipped(SkippedModel {
                model: request.spec.to_string(),
                reason: err.to_string(),
            }));
        }
        Err(err) => return Err(Unrunnable::Error(err.into())),
    };
    let client = client_for(
        &resolved,
        &request.script_base,
        http,
        RetryPolicy::default(),
    )
    .map_err(|e| {
        Unrunnable::Error(RosterError::Client {
            model: request.spec.to_string(),
            message: e.to_string(),
        })
    })?;
    Ok((resolved, client))
}

/// Resolves every model asked for with the same tools; `settings` gives each its agent
/// settings. Each skipped model is handed to `warn` as soon as it is known, before any error,
/// so the error "every model given was skipped" always comes after its reasons.
pub fn resolve_models(
    requests: &[ModelRequest],
    config: &Config,
    env: &Env,
    tools: &Arc<ToolRegistry>,
    settings: impl Fn(&ModelSpec) -> AgentSettings,
    warn: &mut dyn FnMut(&SkippedModel),
) -> Result<Roster, RosterError> {
    let http =
        crate::provider::http::default_client().map_err(|e| RosterError::Http(e.to_string()))?;
    let mut models = Vec::new();
    let mut skipped = Vec::new();
    for request in requests {
        let (resolved, client) = match runnable(request, config, env, &http) {
            Ok(found) => found,
            Err(Unrunnable::Skipped(model)) => {
                warn(&model);
                skipped.push(model);
                continue;
            }
            Err(Unrunnable::Error(err)) => return Err(err),
        };
        let entry = entry_for(
            &resolved,
            client,
            Arc::clone(tools),
            settings(&request.spec),
        );
        models.push(RosterModel {
            entry,
            window: resolved.context_window,
        });
    }
    if models.is_empty() {
        return Err(RosterError::AllSkipped { skipped });
    }
    Ok(Roster { models, skipped })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn request(spec: &str) -> ModelRequest {
        ModelRequest {
            spec: ModelSpec::parse(spec).unwrap(),
            script_base: PathBuf::from("."),
        }
    }

    #[test]
    fn a_missing_key_is_warned_about_before_the_error_that_every_model_was_skipped() {
        let config = Config::builtin().unwrap();
        let tools = Arc::new(ToolRegistry::builtin());
        let mut warned = Vec::new();
        let err = resolve_models(
            &[
                request("openai/gpt-5"),
                request("anthropic/claude-sonnet-4-5"),
            ],
            &config,
            &Env::empty(),
            &tools,
            |_| AgentSettings::default(),
            &mut |s| warned.push(s.warning()),
        )
        .err()
        .unwrap();
        assert!(matches!(err, RosterError::AllSkipped { ref skipped } if skipped.len() == 2));
        assert_eq!(warned.len(), 2);
        assert!(
            warned[0]
                .starts_with("skipping openai/gpt-5: no API key for openai; set OPENAI_API_KEY"),
            "{warned:?}"
        );
        assert!(warned[1].contains("ANTHROPIC_API_KEY"), "{warned:?}");
    }

    #[test]
    fn runnable_models_keep_their_order_and_other_errors_stop() {
        let config = Config::builtin().unwrap();
        let tools = Arc::new(ToolRegistry::builtin());
        let roster = resolve_models(
            &[
                request("demo/good"),
                request("openai/gpt-5"),
                request("demo/sloppy"),
            ],
            &config,
            &Env::empty(),
            &tools,
            |_| AgentSettings::default(),
            &mut |_| {},
        )
        .ok()
        .unwrap();
        let labels: Vec<&str> = roster
            .models
            .iter()
            .map(|m| m.entry.label.as_str())
            .collect();
        assert_eq!(labels, ["demo/good", "demo/sloppy"]);
        assert_eq!(roster.skipped[0].model, "openai/gpt-5");
        let err = resolve_models(
            &[request("demo/nope")],
            &config,
            &Env::empty(),
            &tools,
            |_| AgentSettings::default(),
            &mut |_| {},
        )
        .err()
        .unwrap();
        assert!(matches!(err, RosterError::Client { .. }), "{err}");
    }
}
