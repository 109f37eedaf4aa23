//! Turning the requested models into runnable entries with the recipe's settings.
//!
//! Every model gets the same tools, tool limits and system prompt (identical conditions are
//! the point of a recipe); limits and sampling come per model from [`Recipe::agent_settings`],
//! so `## Model Parameters` lines for one model apply to it only. A model whose API key is
//! missing is skipped with the reason (as `versus ask` does); any other problem stops the run
//! before anything is written, because it would fail the same way on every task.

use std::collections::BTreeSet;
use std::sync::Arc;

use crate::config::{Config, Env};
use crate::engine::{ModelEntry, RosterError, resolve_models};
use crate::recipe::Recipe;

use super::report::SkippedModel;
use super::{HeadlessError, RequestedModel};

/// The entries that can run, and the models that were skipped.
pub(super) struct Prepared {
    /// Runnable entries, in the requested order.
    pub entries: Vec<ModelEntry>,
    /// Each entry's context window in tokens, when known (automatic compaction needs it).
    pub windows: Vec<Option<u64>>,
    /// Skipped models, in the requested order.
    pub skipped: Vec<SkippedModel>,
}

/// Refuses an empty list and duplicate entries (two identical labels could not be told apart
/// in the report).
pub(super) fn check_list(models: &[RequestedModel]) -> Result<(), HeadlessError> {
    if models.is_empty() {
        return Err(HeadlessError::NoModels);
    }
    let mut seen = BTreeSet::new();
    for m in models {
        let label = m.spec.to_string();
        if !seen.insert(label.clone()) {
            return Err(HeadlessError::DuplicateModel(label));
        }
    }
    Ok(())
}

/// Resolves every model with the recipe's tools and settings, by the skip policy every front
/// end shares ([`crate::engine::resolve_models`]): each skipped model is handed to `warn` as
/// soon as it is known, so the warnings come before the error when none can run.
pub(super) fn prepare(
    recipe: &Recipe,
    models: &[RequestedModel],
    config: &Config,
    env: &Env,
    warn: &mut dyn FnMut(&crate::engine::SkippedModel),
) -> Result<Prepared, HeadlessError> {
    check_list(models)?;
    let search = recipe
        .web_search(config, env)
        .map_err(HeadlessError::Unsupported)?;
    let tools = Arc::new(recipe.tool_registry_with(search));
    let settings = |spec: &crate::config::ModelSpec| recipe.agent_settings_over(spec, config);
    let roster =
        resolve_models(models, config, env, &tools, settings, warn).map_err(|err| match err {
            RosterError::AllSkipped { .. } => HeadlessError::AllSkipped,
            RosterError::Resolve(err) => HeadlessError::Resolve(err),
            RosterError::Client { model, message } => HeadlessError::Model { model, message },
            RosterError::Http(message) => HeadlessError::Model {
                model: "http".to_string(),
                message,
            },
        })?;
    let (entries, windows) = roster
        .models
        .into_iter()
        .map(|m| (m.entry, m.window))
        .unzip();
    Ok(Prepared {
        entries,
        windows,
        skipped: roster
            .skipped
            .into_iter()
            .map(|s| SkippedModel {
                model: s.model,
                reason: s.reason,
            })
            .collect(),
    })
}

/// The seed warnings of a run: models given a seed (the recipe's, else the config's) whose
/// provider takes none. The same words as `versus recipe check`.
pub(super) fn seed_warnings(recipe: &Recipe, config: &Config) -> Vec<String> {
    recipe.seed_warnings(config.seed, |spec| {
        config.provider(&spec.provider).map(|p| p.kind)
    })
}

/// The recipe's `## MCP Servers` as servers to start, when the recipe may run commands (a
/// recipe the user trusted, or their own file: its servers are commands like its setup);
/// otherwise none, and the note that says why and what to do.
pub(super) fn mcp_servers(
    recipe: &Recipe,
    recipe_file: &std::path::Path,
    trusted: bool,
) -> (Vec<crate::mcp::ServerSpec>, Option<String>) {
    if recipe.mcp_servers.is_empty() {
        return (Vec::new(), None);
    }
    if !trusted {
        let names: Vec<&str> = recipe.mcp_servers.iter().map(|s| s.name.as_str()).collect();
        return (
            Vec::new(),
            Some(format!(
                "the recipe's MCP servers ({}) were not started: a project's recipe runs commands \
                 only once you trust it; read it, then run `versus trust {}`",
                names.join(", "),
                recipe_file.display()
            )),
        );
    }
    let source = format!("recipe {}", recipe_file.display());
    let specs = recipe
        .mcp_servers
        .iter()
        .map(|s| {
            // Tool names allow letters, digits, `_` and `-`; a recipe's server name may hold `.`.
            let name = s.name.replace('.', "_");
            match &s.transport {
                crate::recipe::McpTransport::Stdio { argv, .. } => {
                    crate::mcp::ServerSpec::recipe_stdio(&name, argv, &source)
                }
                crate::recipe::McpTransport::Http { url } => {
                    crate::mcp::ServerSpec::recipe_http(&name, url, &source)
                }
            }
        })
        .collect();
    (specs, None)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::config::ModelSpec;

    fn requested(spec: &str) -> RequestedModel {
        RequestedModel {
            spec: ModelSpec::parse(spec).unwrap(),
            script_base: PathBuf::from("."),
        }
    }

    #[test]
    fn missing_keys_skip_and_settings_come_from_the_recipe() {
        let recipe = Recipe::parse(
            "# t\nversion: 1\n\n## Constraints\nmax_steps: 7\n\n## Model Parameters\ndemo/good: temperature=0.5\n\n## Tasks\n- go\n",
            "t.md",
        )
        .unwrap();
        let config = Config::builtin().unwrap();
        let models = [
            requested("demo/good"),
            requested("openai/gpt-5"),
            requested("demo/sloppy"),
        ];
        let prepared = prepare(&recipe, &models, &config, &Env::empty(), &mut |_| {}).unwrap();
        let labels: Vec<&str> = prepared.entries.iter().map(|e| e.label.as_str()).collect();
        assert_eq!(labels, ["demo/good", "demo/sloppy"]);
        assert_eq!(prepared.skipped.len(), 1);
        assert!(prepared.skipped[0].reason.contains("OPENAI_API_KEY"));
        let good = &prepared.entries[0].agent.settings;
        assert_eq!(good.max_steps, 7);
        assert_eq!(good.temperature, Some(0.5));
        assert!(
            good.system.contains("read_file"),
            "tool guidance in the prompt"
        );
        assert_eq!(prepared.entries[1].agent.settings.temperature, None);
    }

    #[test]
    fn duplicates_empty_lists_and_all_skipped_are_errors() {
        let recipe = Recipe::parse("# t\nversion: 1\n\n## Tasks\n- go\n", "t.md").unwrap();
        let config = Config::builtin().unwrap();
        let env = Env::empty();
        assert!(matches!(
            prepare(&recipe, &[], &config, &env, &mut |_| {}),
            Err(HeadlessError::NoModels)
        ));
        assert!(matches!(
            prepare(
                &recipe,
                &[requested("demo/good"), requested("demo/good")],
                &config,
                &env,
                &mut |_| {}
            ),
            Err(HeadlessError::DuplicateModel(_))
        ));
        assert!(matches!(
            prepare(
                &recipe,
                &[requested("openai/gpt-5")],
                &config,
                &env,
                &mut |_| {}
            ),
            Err(HeadlessError::AllSkipped)
        ));
        assert!(matches!(
            prepare(
                &recipe,
                &[requested("demo/nope")],
                &config,
                &env,
                &mut |_| {}
            ),
            Err(HeadlessError::Model { .. })
        ));
    }
}
