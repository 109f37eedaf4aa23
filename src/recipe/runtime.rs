//! What a runner needs from a recipe, already in the types the engine takes: the tool
//! registry, tool limits, agent settings per model, isolation, tasks and criteria.
//!
//! These are the only places that translate recipe settings into engine settings, so a runner
//! (headless or interactive) applies a recipe the same way everywhere.

use std::path::{Path, PathBuf};

use crate::agent::AgentSettings;
use crate::config::ModelSpec;
use crate::exec::{FsAccess, SandboxSettings};
use crate::tools::{ToolClass, ToolLimits, ToolRegistry};
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
    /// `filesystem: read_only` removes write_file, edit_file and apply_patch).
    pub fn active_tool_names(&self) -> Vec<&'static str> {
        let registry = ToolRegistry::builtin();
        registry
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
            .collect()
    }

    /// The tools offered to every model, with the recipe's guidance (Tools) and descriptions
    /// (Tool Descriptions) applied.
    pub fn tool_registry(&self) -> ToolRegistry {
        let mut registry = ToolRegistry::builtin();
        // Names come from the validated recipe, so nothing can be unknown here.
        let _ = registry.retain(&self.active_tool_names());
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
    /// user's settings narrowed or opened by `## Sandbox`. `network: full` gives commands the
    /// network; `filesystem` is taken as written (its default is `project_only`).
    pub fn sandbox_settings(&self, user: &SandboxSettings) -> SandboxSettings {
        let mut settings = user.clone();
        settings.filesystem = match self.sandbox.filesystem {
            FilesystemAccess::ProjectOnly => user.filesystem,
            FilesystemAccess::ReadOnly => FsAccess::ReadOnly,
            FilesystemAccess::Unrestricted => FsAccess::Unrestricted,
        };
        settings.network = match self.sandbox.network {
            NetworkAccess::Full => true,
            NetworkAccess::FetchOnly => user.network,
            NetworkAccess::None => false,
        };
        settings
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

    /// Limits and sampling of one model's run. `system` is the recipe's System Prompt
    /// only: combine it with the tools' guidance through [`Recipe::system_prompt`] (or
    /// [`crate::agent::system_prompt`]) before running. `max_steps: 0` becomes `u32::MAX`.
    /// The seed is not part of [`AgentSettings`]; see [`Recipe::sampling`].
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
            system: self.system_prompt.clone(),
        }
    }

    /// The whole system prompt for models using `tools`: versus's base prompt, the tools'
    /// guidance, then the recipe's System Prompt.
    pub fn full_system_prompt(&self, tools: &ToolRegistry) -> String {
        crate::agent::system_prompt(&tools.guidance(), Some(&self.system_prompt))
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
