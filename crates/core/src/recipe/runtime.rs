//! What a runner needs from a recipe, already in the types the engine takes: the tool
//! registry, tool limits, agent settings per model, isolation, tasks and criteria.
//!
//! These are the only places that translate recipe settings into engine settings, so a runner
//! (headless or interactive) applies a recipe the same way everywhere.

use std::path::{Path, PathBuf};

use crate::agent::AgentSettings;
use crate::config::{Config, Env, ModelSpec};
use crate::exec::{FsAccess, SandboxSettings};
use crate::tools::{SearchBackend, ToolClass, ToolLimits, ToolRegistry, WebSearchSetup};
use crate::workspace::Isolation;

use super::criteria::Criterion;
use super::model::{
    FilesystemAccess, NetworkAccess, OutputRule, Recipe, Sampling, Task, TaskMode, ToolSet,
};

/// Native limits given to a tool whose rule it cannot apply itself: large enough that
/// [`OutputRule::apply`] sees the whole result, small enough to bound memory.
const RAW_LINES: usize = 200_000;
const RAW_BYTES: usize = 8 << 20;

impl Recipe {
    /// The names of the tools the models get: the Tools section (all tools when it is
    /// missing), minus what the Sandbox takes away (`network: none` removes web_fetch,
    /// `filesystem: read_only` removes write_file, edit_file and apply_patch). web_search
    /// counts when the Tools section lists it (without the section it depends on the user's
    /// config, which a recipe cannot know).
    pub fn active_tool_names(&self) -> Vec<&'static str> {
        let registry = ToolRegistry::builtin();
        let mut names: Vec<&'static str> = registry
            .specs()
            .iter()
            .filter(|spec| match &self.tools {
                ToolSet::All => true,
                ToolSet::Only(entries) => entries.iter().any(|e| e.name == spec.name),
            })
            .filter(|spec| {
                !(spec.class == ToolClass::ExternalEffect
                    && self.sandbox.network == NetworkAccess::None)
            })
            .filter(|spec| {
                !(spec.class == ToolClass::Proposal
                    && self.sandbox.filesystem == FilesystemAccess::ReadOnly)
            })
            .map(|spec| spec.name)
            .collect();
        if let ToolSet::Only(entries) = &self.tools
            && entries.iter().any(|e| e.name == "web_search")
            && self.sandbox.network != NetworkAccess::None
        {
            insert_web_search(&mut names);
        }
        names
    }

    /// [`Recipe::active_tool_names`] as a run with `config` gives them: without a `## Tools`
    /// section web_search counts too when the config turns it on (`[web_search]`), unless
    /// `network: none` takes it away, exactly as [`Recipe::web_search`] decides for the run.
    /// With no config (`None`) it is the same as [`Recipe::active_tool_names`].
    pub fn active_tool_names_for(&self, config: Option<&Config>) -> Vec<&'static str> {
        let mut names = self.active_tool_names();
        if self.web_search_from_config(config) == Some(true) {
            insert_web_search(&mut names);
        }
        names
    }

    /// Whether the models of a recipe without a `## Tools` section get web_search from the
    /// user's config: `Some(true)` when `config` turns it on, `Some(false)` when it does not,
    /// `None` when the recipe decides itself (a `## Tools` section, `network: none`) or the
    /// config is unknown.
    pub fn web_search_from_config(&self, config: Option<&Config>) -> Option<bool> {
        if self.sandbox.network == NetworkAccess::None || self.tools != ToolSet::All {
            return None;
        }
        config.map(|c| c.web_search.is_some())
    }

    /// The tools offered to every model, with the recipe's guidance (Tools) and descriptions
    /// (Tool Descriptions) applied.
    pub fn tool_registry(&self) -> ToolRegistry {
        self.tool_registry_with(None)
    }

    /// [`Recipe::tool_registry`] with web_search asking `search`'s backend (see
    /// [`Recipe::web_search`]).
    pub fn tool_registry_with(&self, search: Option<WebSearchSetup>) -> ToolRegistry {
        let mut registry = ToolRegistry::builtin();
        // Names come from the validated recipe, so nothing can be unknown here.
        let _ = registry.retain(&self.active_tool_names());
        if let Some(search) = search {
            registry = registry.with_web_search(search);
        }
        if let ToolSet::Only(entries) = &self.tools {
            for entry in entries {
                if entry.guidance.is_some() {
                    registry.override_text(&entry.name, None, entry.guidance.clone());
                }
            }
        }
        for (name, description) in &self.tool_descriptions {
            registry.override_text(name, Some(description.clone()), None);
        }
        registry
    }

    /// The web search of this recipe's models: none under `network: none`; with no `## Tools`
    /// section, the user's `[web_search]` if any; with one, only when it lists `web_search`,
    /// with the backend it names (`web_search(brave)`) or else the configured one. A recipe
    /// names a backend only: the address and key come from the user's config and environment.
    pub fn web_search(&self, config: &Config, env: &Env) -> Result<Option<WebSearchSetup>, String> {
        if self.sandbox.network == NetworkAccess::None {
            return Ok(None);
        }
        match &self.tools {
            ToolSet::All => web_search_setup(config, env, None),
            ToolSet::Only(entries) => {
                let Some(entry) = entries.iter().find(|e| e.name == "web_search") else {
                    return Ok(None);
                };
                web_search_setup(config, env, entry.search_backend.as_deref())?
                    .map(Some)
                    .ok_or_else(|| {
                        "the recipe offers web_search (## Tools) but no search backend is set: \
                         add [web_search] to your config (docs/extensions.md, \"Web search\") \
                         or name one in the recipe, e.g. `web_search(brave)`"
                            .to_string()
                    })
            }
        }
    }

    /// Tool limits: bash allowlist and timeout, output limits the tools apply themselves,
    /// local fetch. Rules a tool cannot apply itself lift its own limits (so nothing is cut
    /// twice) and must be applied with [`Recipe::output_filter`].
    pub fn tool_limits(&self) -> ToolLimits {
        let mut limits = ToolLimits::default();
        limits.bash_default_timeout = self.constraints.bash_timeout;
        limits.bash_spill_max_bytes = self
            .constraints
            .bash_spill_max_mb
            .saturating_mul(1024 * 1024);
        limits.bash_max_timeout = limits.bash_max_timeout.max(self.constraints.bash_timeout);
        limits.allow_local_fetch = self.sandbox.allow_local_fetch;
        if let ToolSet::Only(entries) = &self.tools {
            limits.bash_allowlist = entries
                .iter()
                .find(|e| e.name == "bash")
                .and_then(|e| e.bash_prefixes.clone());
        }
        for (tool, rule) in &self.output_processing {
            let native = rule.truncation == super::output::native(tool).truncation;
            let lines = if native {
                rule.max_lines.unwrap_or(usize::MAX)
            } else {
                RAW_LINES
            };
            let bytes = if native {
                rule.max_bytes.unwrap_or(usize::MAX)
            } else {
                RAW_BYTES
            };
            match tool.as_str() {
                "read_file" => {
                    limits.read_max_lines = lines;
                    limits.read_max_bytes = bytes;
                }
                "bash" => {
                    limits.bash_output_max_lines = lines;
                    limits.bash_output_max_bytes = bytes;
                }
                "search_code" => limits.search_max_matches = lines,
                "search_files" => limits.search_max_files = lines,
                "list_directory" => limits.list_max_entries = lines,
                "web_fetch" => limits.fetch_max_return = bytes,
                _ => {}
            }
        }
        limits
    }

    /// The sandbox of every command the recipe runs (bash, setup, criteria, check): the
    /// user's settings narrowed by `## Sandbox`, and opened by it only when `may_loosen` (the
    /// recipe is trusted, see [`Recipe::check_loosening`]). `network: full` gives commands the
    /// network; `filesystem: unrestricted` the whole filesystem. An untrusted recipe that asks
    /// for either gets the user's setting instead: the front ends refuse such a run before it
    /// starts, and this is the floor under them, so a forgotten check can only make a run
    /// stricter.
    pub fn sandbox_settings(&self, user: &SandboxSettings, may_loosen: bool) -> SandboxSettings {
        let mut settings = user.clone();
        settings.filesystem = match self.sandbox.filesystem {
            FilesystemAccess::ProjectOnly => user.filesystem,
            FilesystemAccess::ReadOnly => FsAccess::ReadOnly,
            FilesystemAccess::Unrestricted if may_loosen => FsAccess::Unrestricted,
            FilesystemAccess::Unrestricted => user.filesystem,
        };
        settings.network = match self.sandbox.network {
            NetworkAccess::Full => may_loosen || user.network,
            NetworkAccess::FetchOnly => user.network,
            NetworkAccess::None => false,
        };
        settings.setup_network = user.setup_network || (self.sandbox.setup_network && may_loosen);
        settings
    }

    /// Whether web_fetch may reach loopback, private and link-local addresses: only when the
    /// recipe asks for it and may loosen the sandbox (see [`Recipe::sandbox_settings`]).
    pub fn allows_local_fetch(&self, may_loosen: bool) -> bool {
        self.sandbox.allow_local_fetch && may_loosen
    }

    /// Every setting of this recipe that would reach further than `user`'s own sandbox
    /// settings allow: `filesystem: unrestricted`, `network: full`, `allow_local_fetch: true`,
    /// and a `project_root` outside the repository (or, outside any repository, the folder)
    /// the recipe file lies in, which would hand the models a copy of a folder of yours
    /// (`project_root: ../.ssh`). Narrowing settings are never listed.
    pub fn loosenings(&self, user: &SandboxSettings, recipe_file: &Path) -> Vec<Loosening> {
        let line = |section, key| self.key_lines.get(section, key).unwrap_or(0);
        let unconfined = user.sandbox == crate::exec::SandboxMode::Off;
        let mut out = Vec::new();
        if self.sandbox.filesystem == FilesystemAccess::Unrestricted
            && user.filesystem != FsAccess::Unrestricted
            && !unconfined
        {
            out.push(Loosening {
                kind: LooseningKind::Filesystem,
                line: line("Sandbox", "filesystem"),
                setting: "filesystem: unrestricted".into(),
                effect: "model commands could read and write every file you can".into(),
            });
        }
        if self.sandbox.network == NetworkAccess::Full && !user.network && !unconfined {
            out.push(Loosening {
                kind: LooseningKind::Network,
                line: line("Sandbox", "network"),
                setting: "network: full".into(),
                effect: "model commands could reach the network".into(),
            });
        }
        if self.sandbox.setup_network && !user.setup_network && !user.network && !unconfined {
            out.push(Loosening {
                kind: LooseningKind::SetupNetwork,
                line: line("Sandbox", "setup_network"),
                setting: "setup_network: true".into(),
                effect: "the setup command could reach the network".into(),
            });
        }
        if self.sandbox.allow_local_fetch {
            out.push(Loosening {
                kind: LooseningKind::LocalFetch,
                line: line("Sandbox", "allow_local_fetch"),
                setting: "allow_local_fetch: true".into(),
                effect: "web_fetch could reach services on your machine and local network".into(),
            });
        }
        if let (Some(text), Some(root)) = (
            self.constraints.project_root.as_deref(),
            self.project_root(recipe_file),
        ) && let Some(outside) = outside_home(recipe_file, &root)
        {
            out.push(Loosening {
                kind: LooseningKind::ProjectRoot,
                line: line("Constraints", "project_root"),
                setting: format!("project_root: {text}"),
                effect: format!(
                    "the models would get a copy of {}, outside {} where the recipe lies",
                    root.display(),
                    outside.display()
                ),
            });
        }
        out
    }

    /// Refuses a recipe that would loosen the sandbox (see [`Recipe::loosenings`]) unless
    /// `trusted`: a recipe committed in a repository is anyone's, and only a source the user
    /// vouches for may open the sandbox wider than the user's own config does. `file` is the
    /// recipe as the user named it, for the message.
    ///
    /// `applies` says which kinds the caller would apply (the TUI uses the sandbox settings
    /// only; `versus run` all of them), so a run is never refused for a setting it ignores.
    pub fn check_loosening(
        &self,
        user: &SandboxSettings,
        file: &Path,
        trusted: bool,
        applies: &[LooseningKind],
    ) -> Result<(), LooseningRefused> {
        if trusted {
            return Ok(());
        }
        let loosenings: Vec<Loosening> = self
            .loosenings(user, file)
            .into_iter()
            .filter(|l| applies.contains(&l.kind))
            .collect();
        if loosenings.is_empty() {
            return Ok(());
        }
        Err(LooseningRefused {
            file: file.display().to_string(),
            loosenings,
        })
    }

    /// The rule to apply to `tool`'s result text after the tool ran, when the tool cannot
    /// apply it itself (see [`OutputRule::apply`]); `None` when the tool's own limits do it.
    pub fn output_filter(&self, tool: &str) -> Option<&OutputRule> {
        self.output_processing
            .get(tool)
            .filter(|rule| !rule.is_native_for(tool))
    }

    /// The sampling settings for `model`: the values for every model, then the per-model
    /// line for the plain spec, then the one for its exact sample (`#N`).
    pub fn sampling(&self, model: &ModelSpec) -> Sampling {
        let mut s = self.parameters.all.clone();
        let plain = self
            .parameters
            .per_model
            .iter()
            .filter(|o| o.spec.sample == 1 && o.spec.base() == model.base());
        let exact = self
            .parameters
            .per_model
            .iter()
            .filter(|o| o.spec.sample > 1 && o.spec == *model);
        for o in plain.chain(exact) {
            if let Some(t) = o.temperature {
                s.temperature = t;
            }
            if let Some(m) = o.max_output_tokens {
                s.max_output_tokens = m;
            }
            if let Some(r) = o.reasoning {
                s.reasoning = r;
            }
            if let Some(seed) = o.seed {
                s.seed = seed;
            }
        }
        s
    }

    /// [`Recipe::agent_settings`] over the user config's defaults: the recipe's seed and
    /// editing tools where it sets them, the config's otherwise. What `versus run` gives
    /// every model.
    pub fn agent_settings_over(&self, model: &ModelSpec, config: &Config) -> AgentSettings {
        let configured = AgentSettings::configured(config);
        let mut settings = self.agent_settings(model);
        settings.seed = settings.seed.or(configured.seed);
        settings.edit_tools = self.constraints.edit_tools.unwrap_or(configured.edit_tools);
        settings
    }

    /// Limits and sampling of one model's run, from the recipe alone. `system` is the
    /// recipe's System Prompt only: combine it with the tools' guidance through
    /// [`Recipe::system_prompt`] (or [`crate::agent::system_prompt`]) before running.
    /// `max_steps: 0` becomes `u32::MAX`. The seed is the recipe's for this model
    /// ([`Recipe::sampling`]); [`Recipe::agent_settings_over`] falls back on the config's.
    pub fn agent_settings(&self, model: &ModelSpec) -> AgentSettings {
        let sampling = self.sampling(model);
        AgentSettings {
            max_steps: match self.constraints.max_steps {
                0 => u32::MAX,
                n => n,
            },
            timeout: self.constraints.timeout,
            max_cost: self.constraints.max_cost,
            max_output_tokens: sampling.max_output_tokens,
            temperature: sampling.temperature,
            reasoning: sampling.reasoning,
            system: String::new(),
            // The prompt is composed from each model's final tools when its entry is made.
            instructions: Some(self.system_prompt.clone()),
            seed: sampling.seed,
            read_roots: Vec::new(),
            edit_tools: self.constraints.edit_tools.unwrap_or_default(),
            // Turned on per turn by the engine, from `ContextSources::sub_agents`.
            sub_agents: None,
        }
    }

    /// The sub-agents of the run: the recipe's when it turns them on or off, else `config`'s
    /// (the user config's `[sub_agents]`).
    pub fn sub_agents(
        &self,
        config: Option<crate::model::SubAgentSettings>,
    ) -> Option<crate::model::SubAgentSettings> {
        match self.constraints.sub_agents {
            super::model::SubAgentsMode::Default => config,
            super::model::SubAgentsMode::Off => None,
            super::model::SubAgentsMode::On => Some(crate::model::SubAgentSettings {
                max_depth: self.constraints.sub_agents_max_depth,
                max_per_turn: self.constraints.sub_agents_per_turn,
            }),
        }
    }

    /// The skill folders the recipe names (`## Context` `skills:`), resolved against the
    /// folder of the recipe file `recipe_file`.
    pub fn skill_dirs(&self, recipe_file: &std::path::Path) -> Vec<std::path::PathBuf> {
        let base = recipe_file
            .parent()
            .unwrap_or(std::path::Path::new("."))
            .to_path_buf();
        self.context.skills.iter().map(|s| base.join(s)).collect()
    }

    /// One warning per model of the recipe given a seed (by the recipe, else `config_seed`)
    /// whose provider's API takes none (OpenAI Responses, Anthropic Messages): the seed is not
    /// sent to it, and its samples may differ where the others' repeat. `kind_of` gives a
    /// model's API (`None`: unknown provider, not warned about).
    pub fn seed_warnings(
        &self,
        config_seed: Option<u64>,
        kind_of: impl Fn(&ModelSpec) -> Option<crate::config::ApiKind>,
    ) -> Vec<String> {
        let mut out = Vec::new();
        for m in &self.models {
            let Some(seed) = self.sampling(&m.spec).seed.or(config_seed) else {
                continue;
            };
            if let Some(kind) = kind_of(&m.spec).filter(|k| !k.takes_seed_for(&m.spec.model)) {
                out.push(format!(
                    "{}: seed {seed} is not sent; the {} API takes no seed, so its samples may differ where other models' repeat",
                    m.spec,
                    kind.as_str()
                ));
            }
        }
        out
    }

    /// The isolation the recipe asks for; `None` means automatic (see
    /// [`Recipe::isolation_for`]).
    pub fn isolation(&self) -> Option<Isolation> {
        self.workspace.isolation
    }

    /// The isolation to use for `project`: the recipe's, or worktree in a git repository and
    /// copy elsewhere.
    pub fn isolation_for(&self, project: &Path) -> Isolation {
        self.workspace
            .isolation
            .unwrap_or_else(|| Isolation::default_for(project))
    }

    /// The project folder: `project_root` resolved against the folder of `recipe_file`;
    /// `None` when the recipe leaves it to the caller (current folder or `-C DIR`).
    pub fn project_root(&self, recipe_file: &Path) -> Option<PathBuf> {
        let root = self.constraints.project_root.as_deref()?;
        let root = Path::new(root);
        Some(if root.is_absolute() {
            root.to_path_buf()
        } else {
            recipe_file
                .parent()
                .unwrap_or_else(|| Path::new(""))
                .join(root)
        })
    }

    /// The model specs of `## Models`, in order.
    pub fn model_specs(&self) -> Vec<ModelSpec> {
        self.models.iter().map(|m| m.spec.clone()).collect()
    }

    /// The tasks, in order.
    pub fn tasks(&self) -> &[Task] {
        &self.tasks
    }

    /// The success criteria, in order.
    pub fn criteria(&self) -> &[Criterion] {
        &self.criteria
    }

    /// Whether tasks start fresh or continue one another.
    pub fn task_mode(&self) -> TaskMode {
        self.context.task_mode
    }
}

/// The ways a recipe can reach further than the user's own settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LooseningKind {
    /// `filesystem: unrestricted`.
    Filesystem,
    /// `network: full`.
    Network,
    /// `allow_local_fetch: true`.
    LocalFetch,
    /// `setup_network: true`.
    SetupNetwork,
    /// A `project_root` outside the recipe's repository.
    ProjectRoot,
}

impl LooseningKind {
    /// Every kind (what `versus run` applies).
    pub const ALL: &'static [LooseningKind] = &[
        LooseningKind::Filesystem,
        LooseningKind::Network,
        LooseningKind::LocalFetch,
        LooseningKind::SetupNetwork,
        LooseningKind::ProjectRoot,
    ];
    /// The kinds that change the command sandbox itself.
    pub const SANDBOX: &'static [LooseningKind] =
        &[LooseningKind::Filesystem, LooseningKind::Network];
}

/// One setting of a recipe that would open the sandbox wider than the user's own settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loosening {
    /// Which setting.
    pub kind: LooseningKind,
    /// The line of the recipe file that asks for it (0 when the file does not say it, e.g. a
    /// base recipe did).
    pub line: usize,
    /// The setting, as a recipe writes it (`filesystem: unrestricted`).
    pub setting: String,
    /// What it would let the models do.
    pub effect: String,
}

/// An untrusted recipe asked to loosen the sandbox: the run is refused before anything
/// starts. The text names each line and the way to vouch for the recipe.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct LooseningRefused {
    /// The recipe file as the user named it.
    pub file: String,
    /// What it asked for.
    pub loosenings: Vec<Loosening>,
}

impl std::fmt::Display for LooseningRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let file = &self.file;
        writeln!(
            f,
            "{file} would loosen the sandbox, and it is a project's recipe, which anyone may \
             have written:"
        )?;
        for l in &self.loosenings {
            writeln!(f, "  {file}:{}: `{}`: {}", l.line, l.setting, l.effect)?;
        }
        write!(
            f,
            "Only a recipe you trust may loosen the sandbox. Read it, then run `versus trust \
             {file}` (asked again whenever it changes) or pass --trust for this run; or remove \
             the line{}.",
            if self.loosenings.len() == 1 { "" } else { "s" }
        )
    }
}

/// The folder a recipe file belongs to (the work tree of the git repository it lies in, else
/// its own folder) when `root` lies outside it; `None` when `root` is inside, or when either
/// cannot be resolved (a missing project folder is the run's own error).
fn outside_home(recipe_file: &Path, root: &Path) -> Option<PathBuf> {
    let folder = match recipe_file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let folder = folder.canonicalize().ok()?;
    let root = root.canonicalize().ok()?;
    let home = crate::config::trust::work_tree_of(&folder).unwrap_or(folder);
    (!root.starts_with(&home)).then_some(home)
}

/// The web search every model of a run gets: the user's `[web_search]` (`None` when it is not
/// configured: web search is off by default), or the backend `backend` a recipe names (then
/// the configured address and key variable count only when the config names the same
/// backend). The key is read from `env` (the environment, or a trusted `.env`). An error says
/// what to set.
pub fn web_search_setup(
    config: &Config,
    env: &Env,
    backend: Option<&str>,
) -> Result<Option<WebSearchSetup>, String> {
    let configured = config.web_search.as_ref();
    let name = match (backend, configured) {
        (Some(name), _) => name,
        (None, Some(c)) => c.backend.as_str(),
        (None, None) => return Ok(None),
    };
    let Some(backend) = SearchBackend::parse(name) else {
        return Err(format!("unknown web search backend `{name}`"));
    };
    let same = configured.filter(|c| c.backend == backend.name());
    let origin = same.map(|c| format!(" ({})", c.origin)).unwrap_or_default();
    WebSearchSetup::new(
        backend,
        same.and_then(|c| c.url.as_deref()),
        same.and_then(|c| c.api_key_env.as_deref()),
        same.and_then(|c| c.max_results).map(|n| n as usize),
        |var| env.non_empty(var).map(str::to_string),
    )
    .map(Some)
    .map_err(|e| format!("{e}{origin}"))
}

/// Puts web_search where the registry offers it: right after web_fetch (at the end without it).
fn insert_web_search(names: &mut Vec<&'static str>) {
    let at = names
        .iter()
        .position(|n| *n == "web_fetch")
        .map_or(names.len(), |i| i + 1);
    names.insert(at, "web_search");
}
