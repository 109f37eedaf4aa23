//! Turning typed model specs into runnable clients through the runner's one resolver
//! (`runner::runnable`), so the interface skips and refuses the same models with the same
//! words as `versus ask` and `versus run`; it only keeps going where they stop (one line per
//! model that cannot run, the others usable), as an interactive session should.

use std::path::Path;
use std::sync::Arc;

use versus_core::config::{Config, Env, ResolvedModel};
use versus_core::engine::{ModelRequest, Unrunnable, runnable};
use versus_core::provider::ModelClient;

/// A model ready to run turns.
#[derive(Clone)]
pub struct Model {
    /// Resolution (kind, price, context window).
    pub resolved: ResolvedModel,
    /// The adapter.
    pub client: Arc<dyn ModelClient>,
}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model")
            .field("resolved", &self.resolved)
            .finish_non_exhaustive()
    }
}

/// What `resolve_specs` needs.
pub struct Resolver<'a> {
    /// Project root (demo scripts given as paths are read from here).
    pub project: &'a Path,
    /// Merged config.
    pub config: &'a Config,
    /// Environment and `.env`.
    pub env: &'a Env,
    /// Shared HTTP client.
    pub http: &'a reqwest::Client,
}

impl Resolver<'_> {
    /// Resolves every spec: the models that can run (label, model) and one line per spec that
    /// cannot (missing key, unknown provider, unreadable demo script).
    pub fn resolve_specs(&self, specs: &[String]) -> (Vec<(String, Model)>, Vec<String>) {
        let mut ok = Vec::new();
        let mut errors = Vec::new();
        for text in specs {
            match self.one(text) {
                Ok(pair) => ok.push(pair),
                Err(error) => errors.push(error),
            }
        }
        (ok, errors)
    }

    fn one(&self, text: &str) -> Result<(String, Model), String> {
        let spec = self.config.parse_spec(text).map_err(|e| e.to_string())?;
        let request = ModelRequest {
            spec,
            script_base: self.project.to_path_buf(),
        };
        match runnable(&request, self.config, self.env, self.http) {
            Ok((resolved, client)) => Ok((request.spec.to_string(), Model { resolved, client })),
            // The reason starts with the model entry; each caller words it ("skipped: ...").
            Err(Unrunnable::Skipped(skipped)) => Err(skipped.reason),
            Err(Unrunnable::Error(err)) => Err(err.to_string()),
        }
    }
}
