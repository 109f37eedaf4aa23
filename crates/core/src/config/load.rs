//! [`Config`]: built-ins plus config-file layers, merged and checked.
//!
//! Layering rules (later layers win): `models` is replaced as a whole; a `[providers.NAME]`
//! block changes only the keys it sets (headers merge by name); a `[prices."p/m"]` block
//! changes only the rates it sets, over the built-in entry. Problems found after merging still
//! name the file and line of the setting involved. The block-level merging lives in
//! `merge`; this module finds the files and answers questions about the result.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::ConfigError;
use super::env::Env;
use super::file::{Layer, read_layer};
use super::merge::{
    invalid, merge_mcp_servers, merge_prices, merge_providers, merge_sandbox, merge_ui,
    merge_web_search,
};
use super::prices::{ModelInfo, Price, PriceTable};
use super::providers::ProviderDef;
use super::spec::{ModelSpec, SpecError};
use super::ui::UiConfig;

/// Where to look for config files.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// Project root: its `.versus/config.toml` is layered over the user config.
    pub project_dir: Option<PathBuf>,
    /// `--config FILE`: read instead of the user config; must exist.
    pub config_file: Option<PathBuf>,
}

/// Which layer a config file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FileRole {
    /// The platform config dir (`~/.config/versus/config.toml`).
    User,
    /// Given with `--config` (replaces the user config).
    Explicit,
    /// The project's `.versus/config.toml`.
    Project,
}

/// A config file that was looked for, for `versus models` and `/config`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ConfigFileInfo {
    /// The path.
    pub path: PathBuf,
    /// Its layer.
    pub role: FileRole,
    /// Whether it existed and was read.
    pub loaded: bool,
}

/// A model `versus models` can list: from the price table, a provider's `models` or the
/// default models.
#[derive(Debug, Clone, PartialEq)]
pub struct KnownModel {
    /// `provider/model`.
    pub spec: ModelSpec,
    /// Price (free for demo and Ollama) and context window.
    pub info: ModelInfo,
}

/// The merged configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// `models = [...]`: models used when none are given with `-m` or a recipe.
    pub default_models: Vec<ModelSpec>,
    /// Built-in prices with config overrides.
    pub prices: PriceTable,
    /// `[ui]` settings.
    pub ui: UiConfig,
    /// `[sandbox]` settings (user config only): how model commands are confined.
    pub sandbox: crate::exec::SandboxSettings,
    /// Files looked for, in layer order.
    pub files: Vec<ConfigFileInfo>,
    /// Whether the project's own files were trusted (and so read); see [`super::trust`].
    pub trust: super::trust::Trust,
    /// `[check] command`: the review check run in each model's workspace when it finishes
    /// (the last layer that sets it wins; an empty command turns it off).
    pub check: Option<String>,
    /// `seed = N`: the sampling seed sent to every provider that takes one (Chat, Gemini);
    /// the last layer that sets it wins. A recipe's `seed` wins over it.
    pub seed: Option<u64>,
    /// `edit_tools = "family" | "edit_file" | "apply_patch" | "both"`: which editing tool
    /// each model gets; the last layer that sets it wins, a recipe's Constraints over it.
    pub edit_tools: crate::model::EditTools,
    /// Whether the user trusted the project folder (`versus trust`, unchanged since, or
    /// `--trust`): the project's skills count only then. Set by [`super::load`].
    pub project_trusted: bool,
    /// `[mcp_servers.NAME]`: the MCP servers every model gets, by name (a later layer's block
    /// replaces an earlier one of the same name; `enabled = false` removes it).
    pub mcp_servers: Vec<McpServerEntry>,
    /// `[web_search]` merged over the layers (`None`: web search is off, the default).
    pub web_search: Option<WebSearchConfig>,
    /// `[sub_agents]`: `spawn_agent` for every model of a run (`None`: off, the default; the
    /// last layer with the block decides). A recipe's `sub_agents` wins over it.
    pub sub_agents: Option<crate::model::SubAgentSettings>,
    providers: Vec<ProviderDef>,
}

/// The names `[web_search] backend` accepts (the tool knows what each means).
pub const WEB_SEARCH_BACKENDS: [&str; 4] = ["brave", "tavily", "exa", "searxng"];

/// Web search as the config turns it on: every model of a run gets web_search with this
/// backend. Checked when loaded; the key is looked up when a run starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebSearchConfig {
    /// One of [`WEB_SEARCH_BACKENDS`] (`searxng` when none is named).
    pub backend: String,
    /// The endpoint (from the user's own config only).
    pub url: Option<String>,
    /// The key's variable instead of the service's own (user config only).
    pub api_key_env: Option<String>,
    /// Results per search.
    pub max_results: Option<u32>,
    /// Where the block was written (the last layer's).
    pub origin: super::file::Origin,
}

/// One configured MCP server and where it was written.
#[derive(Debug, Clone, PartialEq)]
pub struct McpServerEntry {
    /// Its name: the prefix of its tools (`NAME__tool`).
    pub name: String,
    /// The block as written.
    pub block: super::file::McpServerBlock,
    /// The file and line.
    pub origin: super::Origin,
    /// The layer it came from (a project's server is a command the user trusted).
    pub role: FileRole,
}

/// The last layer's `[sub_agents]`, its limits checked: at least 1, at most 8 deep and 64 per
/// turn (a typo must not start thousands of paid runs).
fn sub_agents(
    layers: &[(Layer, FileRole)],
) -> Result<Option<crate::model::SubAgentSettings>, ConfigError> {
    let Some((block, origin)) = layers.iter().rev().find_map(|(l, _)| l.sub_agents.as_ref()) else {
        return Ok(None);
    };
    if block.enabled == Some(false) {
        return Ok(None);
    }
    let defaults = crate::model::SubAgentSettings::default();
    let max_depth = block.max_depth.unwrap_or(defaults.max_depth);
    let max_per_turn = block.max_per_turn.unwrap_or(defaults.max_per_turn);
    if !(1..=8).contains(&max_depth) {
        return Err(invalid(
            origin.clone(),
            format!("[sub_agents] max_depth must be from 1 to 8, not {max_depth}"),
        ));
    }
    if !(1..=64).contains(&max_per_turn) {
        return Err(invalid(
            origin.clone(),
            format!("[sub_agents] max_per_turn must be from 1 to 64, not {max_per_turn}"),
        ));
    }
    Ok(Some(crate::model::SubAgentSettings {
        max_depth,
        max_per_turn,
    }))
}

/// The user config file: `$XDG_CONFIG_HOME/versus/config.toml` when that variable is set (on
/// every platform), else `~/.config/versus/config.toml` on Linux and other Unix systems, else
/// the platform config dir (`~/Library/Application Support`, `%APPDATA%`).
pub fn user_config_path(env: &Env) -> Option<PathBuf> {
    let rel = Path::new("versus").join("config.toml");
    if let Some(xdg) = env.non_empty("XDG_CONFIG_HOME").map(PathBuf::from)
        && xdg.is_absolute()
    {
        return Some(xdg.join(rel));
    }
    if cfg!(all(unix, not(target_os = "macos")))
        && let Some(home) = env.non_empty("HOME")
    {
        return Some(Path::new(home).join(".config").join(rel));
    }
    dirs::config_dir().map(|dir| dir.join(rel))
}

/// The user's versus config folder (the folder of [`user_config_path`]): where the user's
/// global `AGENTS.md` and their `skills/` folder are.
pub fn user_config_dir(env: &Env) -> Option<PathBuf> {
    user_config_path(env).and_then(|p| p.parent().map(Path::to_path_buf))
}

impl Config {
    /// Where a turn's project context comes from under this config: the user's config folder
    /// (global `AGENTS.md`, `skills/`), the folder of the user config file in effect (with
    /// `--config FILE`, FILE's folder: a config given for one run brings its own context), and
    /// whether the project's skills count (trusted). Front ends hand it to the engine with each
    /// turn; a recipe adds its skill folders.
    pub fn context_sources(&self, env: &Env) -> crate::context::ContextSources {
        let user_dir = self
            .files
            .iter()
            .find(|f| matches!(f.role, FileRole::User | FileRole::Explicit))
            .and_then(|f| f.path.parent().map(Path::to_path_buf))
            .or_else(|| user_config_dir(env));
        crate::context::ContextSources {
            user_dir,
            project_trusted: self.project_trusted,
            skill_dirs: Vec::new(),
            sub_agents: self.sub_agents,
        }
    }

    /// Built-in providers and prices only, no files.
    pub fn builtin() -> Result<Config, ConfigError> {
        Config::from_layers(&[])
    }

    /// Reads the user (or `--config`) file and the project file, then merges them.
    pub fn load(options: &LoadOptions, env: &Env) -> Result<Config, ConfigError> {
        let mut layers = Vec::new();
        let mut files = Vec::new();
        match &options.config_file {
            Some(path) => {
                layers.push((read_layer(path)?, FileRole::Explicit));
                files.push(ConfigFileInfo {
                    path: path.clone(),
                    role: FileRole::Explicit,
                    loaded: true,
                });
            }
            None => {
                if let Some(path) = user_config_path(env) {
                    let loaded = present(&path);
                    if loaded {
                        layers.push((read_layer(&path)?, FileRole::User));
                    }
                    files.push(ConfigFileInfo {
                        path,
                        role: FileRole::User,
                        loaded,
                    });
                }
            }
        }
        if let Some(dir) = &options.project_dir {
            let path = dir.join(".versus").join("config.toml");
            let loaded = present(&path);
            if loaded {
                layers.push((read_layer(&path)?, FileRole::Project));
            }
            files.push(ConfigFileInfo {
                path,
                role: FileRole::Project,
                loaded,
            });
        }
        let mut config = Config::from_layers(&layers)?;
        config.files = files;
        Ok(config)
    }

    /// Merges parsed layers (lowest first) over the built-ins and checks the result.
    pub fn from_layers(layers: &[(Layer, FileRole)]) -> Result<Config, ConfigError> {
        let providers = merge_providers(layers)?;
        let mut config = Config {
            default_models: Vec::new(),
            prices: PriceTable::builtin()?,
            ui: UiConfig::default(),
            sandbox: crate::exec::SandboxSettings::default(),
            files: Vec::new(),
            trust: super::trust::Trust::NothingToTrust,
            check: None,
            seed: None,
            edit_tools: crate::model::EditTools::default(),
            project_trusted: false,
            mcp_servers: Vec::new(),
            web_search: None,
            sub_agents: None,
            providers,
        };
        config.apply_models(layers)?;
        merge_prices(layers, &config.providers, &mut config.prices)?;
        config.ui = merge_ui(layers)?;
        config.sandbox = merge_sandbox(layers)?;
        config.check = layers
            .iter()
            .rev()
            .find_map(|(l, _)| l.check.as_ref())
            .map(|(block, _)| block.command.trim().to_string())
            .filter(|command| !command.is_empty());
        config.seed = layers.iter().rev().find_map(|(l, _)| l.seed);
        config.edit_tools = layers
            .iter()
            .rev()
            .find_map(|(l, _)| l.edit_tools)
            .unwrap_or_default();
        config.mcp_servers = merge_mcp_servers(layers)?;
        config.web_search = merge_web_search(layers)?;
        config.sub_agents = sub_agents(layers)?;
        Ok(config)
    }

    fn apply_models(&mut self, layers: &[(Layer, FileRole)]) -> Result<(), ConfigError> {
        let Some(models) = layers.iter().rev().find_map(|(l, _)| l.models.as_ref()) else {
            return Ok(());
        };
        let mut specs = Vec::with_capacity(models.len());
        for (text, origin) in models {
            let spec = self
                .parse_spec(text)
                .map_err(|err| invalid(origin.clone(), format!("in `models`: {err}")))?;
            specs.push(spec);
        }
        self.default_models = specs;
        Ok(())
    }

    /// Every provider, built-ins first (in the providers-table order), then configured ones
    /// by name.
    pub fn providers(&self) -> &[ProviderDef] {
        &self.providers
    }

    /// A provider by name.
    pub fn provider(&self, name: &str) -> Option<&ProviderDef> {
        self.providers.iter().find(|p| p.name == name)
    }

    /// Names of every provider, in listing order.
    pub fn provider_names(&self) -> Vec<String> {
        self.providers.iter().map(|p| p.name.clone()).collect()
    }

    /// Parses a spec and checks that its provider exists. A bare model name that the price
    /// table knows gets a suggestion (`gpt-5` -> `openai/gpt-5`).
    pub fn parse_spec(&self, text: &str) -> Result<ModelSpec, SpecError> {
        let spec = match ModelSpec::parse(text) {
            Ok(spec) => spec,
            Err(SpecError::NoProvider { spec, .. }) => {
                let suggestion = self.suggest_provider_for(&spec);
                return Err(SpecError::NoProvider { spec, suggestion });
            }
            Err(other) => return Err(other),
        };
        self.check_provider(&spec, text)?;
        Ok(spec)
    }

    /// `Err(UnknownProvider)` (with the known names and a close match) unless the spec's
    /// provider is built in or configured; `text` is the spec as the user wrote it.
    pub(crate) fn check_provider(&self, spec: &ModelSpec, text: &str) -> Result<(), SpecError> {
        if self.provider(&spec.provider).is_some() {
            return Ok(());
        }
        let known = self.provider_names();
        let suggestion = known
            .iter()
            .map(|name| (strsim::damerau_levenshtein(name, &spec.provider), name))
            .filter(|(distance, _)| *distance <= 2)
            .min()
            .map(|(_, name)| name.clone());
        Err(SpecError::UnknownProvider {
            spec: text.trim().to_string(),
            provider: spec.provider.clone(),
            known,
            suggestion,
        })
    }

    fn suggest_provider_for(&self, bare: &str) -> Option<String> {
        let (model, sample) = match bare.rsplit_once('#') {
            Some((m, n)) => (m, format!("#{n}")),
            None => (bare, String::new()),
        };
        self.providers.iter().find_map(|p| {
            let listed = p.models.iter().any(|m| m == model);
            (listed || self.prices.has_builtin(&p.name, model))
                .then(|| format!("{}/{model}{sample}", p.name))
        })
    }

    /// Price and context window of a model; demo and Ollama models are free unless a price
    /// is configured for them.
    pub fn model_info(&self, spec: &ModelSpec) -> ModelInfo {
        let mut info = self.prices.lookup(&spec.provider, &spec.model);
        if info.price.is_none() && self.provider(&spec.provider).is_some_and(|p| p.free) {
            info.price = Some(Price::FREE);
        }
        if info.price.is_none() && self.provider(&spec.provider).is_some_and(|p| p.gateway) {
            info = self.gateway_info(&spec.model).unwrap_or(info);
        }
        info
    }

    /// A gateway's model priced as the model it names: `anthropic/claude-sonnet-4-5` as that
    /// provider's, a bare `gpt-4.1` as the first of OpenAI, Anthropic and Gemini that has it.
    fn gateway_info(&self, model: &str) -> Option<ModelInfo> {
        let candidates: Vec<(&str, &str)> = match model.split_once('/') {
            Some((provider, name)) => vec![(provider, name)],
            None => ["openai", "anthropic", "gemini"]
                .into_iter()
                .map(|provider| (provider, model))
                .collect(),
        };
        candidates
            .into_iter()
            .map(|(provider, name)| self.prices.lookup(provider, name))
            .find(|info| info.price.is_some())
    }

    /// Models worth listing: price-table entries of known providers, each provider's
    /// configured `models`, and the default models; grouped by provider in listing order.
    pub fn known_models(&self) -> Vec<KnownModel> {
        let mut bases: BTreeSet<(usize, String)> = BTreeSet::new();
        let rank = |provider: &str| self.providers.iter().position(|p| p.name == provider);
        for (key, _) in self.prices.entries() {
            if let Some((provider, _)) = key.split_once('/')
                && let Some(r) = rank(provider)
            {
                bases.insert((r, key));
            }
        }
        for (r, def) in self.providers.iter().enumerate() {
            for model in &def.models {
                bases.insert((r, format!("{}/{model}", def.name)));
            }
        }
        for spec in &self.default_models {
            if let Some(r) = rank(&spec.provider) {
                bases.insert((r, spec.base()));
            }
        }
        bases
            .into_iter()
            .filter_map(|(_, base)| {
                let spec = ModelSpec::parse(&base).ok()?;
                let info = self.model_info(&spec);
                Some(KnownModel { spec, info })
            })
            .collect()
    }
}

/// Whether a config file is there to be read: anything at the name counts (a symlink to
/// `/dev/zero`, a fifo), so that what is not a regular file ends in the reader's clear error
/// instead of being skipped without a word. A name that cannot even be looked at (a home
/// folder this user may not enter) is not there.
fn present(path: &std::path::Path) -> bool {
    path.symlink_metadata().is_ok()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) mod tests {
    use super::*;
    use crate::config::file::parse_layer;
    use crate::config::kind::ApiKind;

    /// Parses config text as if read from `name`.
    pub(crate) fn layer(text: &str, name: &str) -> Layer {
        parse_layer(text, Path::new(name)).unwrap()
    }

    /// Merges texts as layers named `/layer0.toml`, `/layer1.toml`...
    pub(crate) fn config(layers: &[(&str, FileRole)]) -> Result<Config, ConfigError> {
        let parsed: Vec<(Layer, FileRole)> = layers
            .iter()
            .enumerate()
            .map(|(i, (text, role))| (layer(text, &format!("/layer{i}.toml")), *role))
            .collect();
        Config::from_layers(&parsed)
    }

    /// [`config`] that must succeed.
    pub(crate) fn ok(layers: &[(&str, FileRole)]) -> Config {
        config(layers).unwrap()
    }

    /// [`config`] that must fail; its message.
    pub(crate) fn err(layers: &[(&str, FileRole)]) -> String {
        config(layers).unwrap_err().to_string()
    }

    /// Short names for the layer roles in tests.
    pub(crate) const USER: FileRole = FileRole::User;
    pub(crate) const PROJECT: FileRole = FileRole::Project;

    #[test]
    fn builtins_alone_know_the_builtin_providers() {
        let c = Config::builtin().unwrap();
        assert_eq!(
            c.provider_names(),
            [
                "openai",
                "anthropic",
                "gemini",
                "openrouter",
                "ollama",
                "azure",
                "litellm",
                "bedrock",
                "demo",
                "vertex"
            ]
        );
        assert!(c.default_models.is_empty());
    }

    /// `[sub_agents]`: off without it, on with it (defaults filled in), off again with
    /// `enabled = false` in a later layer; limits out of range name the file and line.
    #[test]
    fn sub_agents_are_off_unless_a_layer_turns_them_on() {
        assert_eq!(Config::builtin().unwrap().sub_agents, None);
        let on = ok(&[("[sub_agents]\n", USER)]);
        assert_eq!(
            on.sub_agents,
            Some(crate::model::SubAgentSettings {
                max_depth: 2,
                max_per_turn: 4
            })
        );
        let set = ok(&[("[sub_agents]\nmax_depth = 1\nmax_per_turn = 9\n", USER)]);
        assert_eq!(
            set.sub_agents.map(|s| (s.max_depth, s.max_per_turn)),
            Some((1, 9))
        );
        let off = ok(&[
            ("[sub_agents]\n", USER),
            ("[sub_agents]\nenabled = false\n", PROJECT),
        ]);
        assert_eq!(off.sub_agents, None);
        assert_eq!(
            on.context_sources(&crate::config::Env::default())
                .sub_agents,
            on.sub_agents
        );
        let bad = err(&[("\n[sub_agents]\nmax_depth = 0\n", USER)]);
        assert!(bad.contains("/layer0.toml:2"), "{bad}");
        assert!(
            bad.contains("max_depth must be from 1 to 8, not 0"),
            "{bad}"
        );
        let typo = parse_layer("[sub_agents]\nmax_dept = 3\n", Path::new("/c.toml"))
            .unwrap_err()
            .to_string();
        assert!(typo.contains("accepted keys here: `enabled`"), "{typo}");
    }

    /// `[check] command`: the project's wins over the user's, an empty one turns it off, and
    /// a misspelt key is an error that names the accepted one.
    #[test]
    fn the_check_command_is_layered_and_can_be_turned_off() {
        assert_eq!(Config::builtin().unwrap().check, None);
        let c = ok(&[
            ("[check]\ncommand = \"make test\"\n", USER),
            ("[check]\ncommand = \" cargo test --quiet \"\n", PROJECT),
        ]);
        assert_eq!(c.check.as_deref(), Some("cargo test --quiet"));
        let c = ok(&[("[check]\ncommand = \"make test\"\n", USER), ("", PROJECT)]);
        assert_eq!(c.check.as_deref(), Some("make test"));
        let c = ok(&[
            ("[check]\ncommand = \"make test\"\n", USER),
            ("[check]\ncommand = \"\"\n", PROJECT),
        ]);
        assert_eq!(c.check, None);
        let e = parse_layer("[check]\ncomand = \"x\"\n", Path::new("/c.toml"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("unknown key `comand`") && e.contains("command"),
            "{e}"
        );
    }

    #[test]
    fn project_layer_overrides_user_layer() {
        let c = ok(&[
            (
                "models = [\"openai/gpt-5\"]\n[providers.openai]\nkind = \"openai-chat\"\nheaders = { A = \"1\", B = \"2\" }\n",
                USER,
            ),
            (
                "models = [\"anthropic/claude-sonnet-4-5\", \"demo/good#2\"]\n[providers.openai]\nmodels = [\"gpt-5\"]\n",
                PROJECT,
            ),
        ]);
        let labels: Vec<String> = c.default_models.iter().map(ToString::to_string).collect();
        assert_eq!(labels, ["anthropic/claude-sonnet-4-5", "demo/good#2"]);
        let openai = c.provider("openai").unwrap();
        assert_eq!(openai.kind, ApiKind::OpenAiChat, "user setting kept");
        assert_eq!(openai.models, ["gpt-5"], "project setting added");
        assert_eq!(openai.headers.len(), 2);
    }

    #[test]
    fn default_models_are_checked_with_their_line() {
        let e = err(&[(
            "\nmodels = [\n  \"openai/gpt-5\",\n  \"opneai/gpt-5\",\n]\n",
            USER,
        )]);
        assert!(e.contains("/layer0.toml:4"), "{e}");
        assert!(e.contains("did you mean `openai`"), "{e}");
        // A provider defined in another layer counts.
        ok(&[
            (
                "[providers.local]\nkind = \"openai-chat\"\nbase_url = \"http://x:1\"\n",
                USER,
            ),
            ("models = [\"local/qwen\"]\n", PROJECT),
        ]);
    }

    #[test]
    fn parse_spec_suggests_a_provider_for_a_bare_model() {
        let c = Config::builtin().unwrap();
        let e = c.parse_spec("claude-sonnet-4-5").unwrap_err().to_string();
        assert!(e.contains("`anthropic/claude-sonnet-4-5`"), "{e}");
        let e = c.parse_spec("gpt-5#2").unwrap_err().to_string();
        assert!(e.contains("`openai/gpt-5#2`"), "{e}");
        let e = c.parse_spec("nope/x").unwrap_err().to_string();
        assert!(e.contains("known providers: openai, anthropic"), "{e}");
        assert!(c.parse_spec("ollama/qwen2.5-coder:7b").is_ok());
    }

    #[test]
    fn known_models_cover_table_config_and_defaults() {
        let c = ok(&[(
            "models = [\"ollama/qwen2.5-coder:7b\"]\n[providers.local]\nkind = \"openai-chat\"\nbase_url = \"http://x:1\"\nmodels = [\"m1\"]\n",
            USER,
        )]);
        let known: Vec<String> = c
            .known_models()
            .iter()
            .map(|k| k.spec.to_string())
            .collect();
        assert!(known.contains(&"openai/gpt-5".to_string()));
        assert!(known.contains(&"local/m1".to_string()));
        assert!(known.contains(&"ollama/qwen2.5-coder:7b".to_string()));
        let first_anthropic = known
            .iter()
            .position(|k| k.starts_with("anthropic/"))
            .unwrap();
        let last_openai = known
            .iter()
            .rposition(|k| k.starts_with("openai/"))
            .unwrap();
        assert!(last_openai < first_anthropic, "grouped in provider order");
        let local = c
            .known_models()
            .into_iter()
            .find(|k| k.spec.provider == "local")
            .unwrap();
        assert_eq!(local.info.price, None, "unknown, not free");
    }

    #[test]
    fn user_config_path_honours_xdg_then_home() {
        let env = Env::from_pairs([("XDG_CONFIG_HOME", "/xdg"), ("HOME", "/home/u")]);
        assert_eq!(
            user_config_path(&env).unwrap(),
            Path::new("/xdg/versus/config.toml")
        );
        if cfg!(all(unix, not(target_os = "macos"))) {
            let env = Env::from_pairs([("XDG_CONFIG_HOME", "relative"), ("HOME", "/home/u")]);
            assert_eq!(
                user_config_path(&env).unwrap(),
                Path::new("/home/u/.config/versus/config.toml")
            );
        }
    }

    #[test]
    fn load_reads_user_and_project_files_and_explicit_replaces_user() {
        let home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let env = Env::from_pairs([("XDG_CONFIG_HOME", home.path().to_str().unwrap())]);
        std::fs::create_dir_all(home.path().join("versus")).unwrap();
        std::fs::write(
            home.path().join("versus/config.toml"),
            "models = [\"openai/gpt-5\"]\n",
        )
        .unwrap();
        let options = LoadOptions {
            project_dir: Some(project.path().to_path_buf()),
            config_file: None,
        };
        let c = Config::load(&options, &env).unwrap();
        assert_eq!(c.default_models[0].to_string(), "openai/gpt-5");
        assert_eq!(c.files.len(), 2);
        assert!(c.files[0].loaded && !c.files[1].loaded);

        std::fs::create_dir_all(project.path().join(".versus")).unwrap();
        std::fs::write(
            project.path().join(".versus/config.toml"),
            "models = [\"demo/good\"]\n",
        )
        .unwrap();
        let c = Config::load(&options, &env).unwrap();
        assert_eq!(c.default_models[0].to_string(), "demo/good");

        let explicit = project.path().join("other.toml");
        std::fs::write(&explicit, "[providers.openai]\nkind = \"openai-chat\"\n").unwrap();
        let c = Config::load(
            &LoadOptions {
                config_file: Some(explicit.clone()),
                ..options.clone()
            },
            &env,
        )
        .unwrap();
        assert_eq!(c.provider("openai").unwrap().kind, ApiKind::OpenAiChat);
        assert_eq!(c.files[0].role, FileRole::Explicit);
        assert_eq!(
            c.default_models[0].to_string(),
            "demo/good",
            "project still layered"
        );

        let missing = Config::load(
            &LoadOptions {
                config_file: Some(project.path().join("missing.toml")),
                ..options
            },
            &env,
        )
        .unwrap_err()
        .to_string();
        assert!(missing.contains("missing.toml"), "{missing}");
    }

    #[test]
    fn web_search_is_off_unless_configured_and_a_project_cannot_point_the_key_elsewhere() {
        assert_eq!(config(&[("", FileRole::User)]).unwrap().web_search, None);
        let c = config(&[
            (
                "[web_search]\nurl = \"http://localhost:8888\"\nmax_results = 3\n",
                FileRole::User,
            ),
            ("[web_search]\nmax_results = 7\n", FileRole::Project),
        ])
        .unwrap();
        let w = c.web_search.unwrap();
        assert_eq!(
            (w.backend.as_str(), w.url.as_deref(), w.max_results),
            ("searxng", Some("http://localhost:8888"), Some(7))
        );
        // Another backend drops the earlier address (the key must not go there).
        let c = config(&[
            (
                "[web_search]\nurl = \"http://localhost:8888\"\n",
                FileRole::User,
            ),
            ("[web_search]\nbackend = \"brave\"\n", FileRole::Project),
        ])
        .unwrap();
        let w = c.web_search.unwrap();
        assert_eq!((w.backend.as_str(), w.url), ("brave", None));
        for key in [
            "url = \"https://evil.example/\"",
            "api_key_env = \"OPENAI_API_KEY\"",
        ] {
            let err = config(&[(&format!("[web_search]\n{key}\n"), FileRole::Project)])
                .unwrap_err()
                .to_string();
            assert!(err.contains("a project's config may not set"), "{err}");
        }
        let err = config(&[("[web_search]\nbackend = \"bing\"\n", FileRole::User)])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("unknown backend `bing`; backends: brave, tavily"),
            "{err}"
        );
        let off = config(&[
            ("[web_search]\nbackend = \"exa\"\n", FileRole::User),
            ("[web_search]\nenabled = false\n", FileRole::Project),
        ])
        .unwrap();
        assert_eq!(off.web_search, None);
    }
}
