//! The typed recipe: every section of spec/recipes.md as a plain Rust value.
//!
//! A [`Recipe`] is always complete: it is the built-in defaults with one file layered over them,
//! so every setting has a value and the runner never has to guess a fallback. Enumerations
//! ([`TaskMode`], [`Truncation`]...) know their recipe spelling in one place ([`Choice`]), which
//! the reader, the writer and the error messages all use.
//!
//! Where an item was written ([`SourceLine`]) is kept for messages but is not part of a
//! recipe's meaning: two recipes that say the same thing are equal even if their lines differ,
//! which is what makes "parse, write, parse" comparable.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::config::ModelSpec;
use crate::model::Reasoning;
use crate::workspace::Isolation;

use super::criteria::Criterion;

/// The only recipe format version this versus reads.
pub const FORMAT_VERSION: u32 = 1;

/// A 1-based line of the file an item came from (0 when it was built in code).
///
/// Equality ignores it on purpose: a recipe and its rewritten form are equal although their
/// items sit on other lines.
#[derive(Debug, Clone, Copy, Default)]
pub struct SourceLine(pub usize);

impl PartialEq for SourceLine {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for SourceLine {}

/// A recipe enum value with its one recipe spelling.
pub trait Choice: Sized + Copy + 'static {
    /// Every value, in the order error messages list them.
    const ALL: &'static [Self];
    /// How a recipe writes it.
    fn as_str(self) -> &'static str;

    /// Reads a value (ASCII case-insensitive).
    fn from_name(text: &str) -> Option<Self> {
        Self::ALL
            .iter()
            .copied()
            .find(|v| v.as_str().eq_ignore_ascii_case(text.trim()))
    }

    /// The accepted spellings, for error messages.
    fn names() -> Vec<&'static str> {
        Self::ALL.iter().map(|v| v.as_str()).collect()
    }
}

/// One comparison, with the built-in defaults filled in.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Recipe {
    /// The `# Title`: the recipe's name in reports.
    pub name: String,
    /// `## Models`: the entries to run (the command line may add more).
    pub models: Vec<ModelEntry>,
    /// `## System Prompt`: sent to every model after the tool guidance (may be empty).
    pub system_prompt: String,
    /// `## Tools`: which tools the models get.
    pub tools: ToolSet,
    /// `## Tool Descriptions`: tool name -> description that replaces the built-in one.
    pub tool_descriptions: BTreeMap<String, String>,
    /// `## MCP Servers`: started for every model of a run once the recipe is trusted (see
    /// `crate::mcp`).
    pub mcp_servers: Vec<McpServer>,
    /// `## Constraints`: limits of each model run.
    pub constraints: Constraints,
    /// `## Context`: task chaining and history management.
    pub context: ContextSettings,
    /// `## Model Parameters`: sampling settings, globally and per model.
    pub parameters: ModelParameters,
    /// `## Workspace`: how each model's copy of the project is made.
    pub workspace: WorkspaceSettings,
    /// `## Sandbox`: what the models may reach.
    pub sandbox: Sandbox,
    /// `## Review`: how results are shown to a person.
    pub review: Review,
    /// `## Tasks`: the prompts, in order.
    pub tasks: Vec<Task>,
    /// `## Success Criteria`: checked per model per task in headless runs.
    pub criteria: Vec<Criterion>,
    /// `## Context Summarization Prompt`: what compaction asks the model to write.
    pub summarization_prompt: String,
    /// `## Output Processing`: tool name -> how its results are cut.
    pub output_processing: BTreeMap<String, OutputRule>,
    /// `## Metadata`: descriptive fields for people and reports.
    pub metadata: Metadata,
    /// Where each `key: value` of the file was written (for messages such as the refusal of
    /// a recipe that would loosen the sandbox; ignored by equality like [`SourceLine`]).
    pub key_lines: KeyLines,
}

/// `(section, key)` -> the line of the file that set it, e.g. `("Sandbox", "filesystem")`.
/// Keys the file left to the defaults are absent. Equality ignores it, as it does
/// [`SourceLine`]: two recipes that say the same thing are equal wherever they say it.
#[derive(Debug, Clone, Default)]
pub struct KeyLines(pub BTreeMap<(&'static str, &'static str), usize>);

impl KeyLines {
    /// The line that set `key` of `## section`, if the file set it.
    pub fn get(&self, section: &str, key: &str) -> Option<usize> {
        self.0
            .iter()
            .find(|((s, k), _)| *s == section && *k == key)
            .map(|(_, line)| *line)
    }
}

impl PartialEq for KeyLines {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// One line of `## Models`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelEntry {
    /// The model, with its sample number.
    pub spec: ModelSpec,
    /// Where it was written.
    pub line: SourceLine,
}

/// `## Tools`: all built-in tools (section missing) or exactly the listed ones.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ToolSet {
    /// Every built-in tool with its built-in guidance.
    #[default]
    All,
    /// Only these tools (an empty list: no tools at all).
    Only(Vec<ToolEntry>),
}

/// One line of `## Tools`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolEntry {
    /// Built-in tool name.
    pub name: String,
    /// `name: guidance`: replaces the tool's line in the system prompt.
    pub guidance: Option<String>,
    /// `bash(p1, p2)`: the command prefixes bash may run (bash only).
    pub bash_prefixes: Option<Vec<String>>,
    /// `web_search(brave)`: the backend web_search asks (web_search only; `None`: the one
    /// the user's `[web_search]` configures).
    pub search_backend: Option<String>,
    /// Where it was written.
    pub line: SourceLine,
}

/// One line of `## MCP Servers`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServer {
    /// The server's name (letters, digits, `-`, `_`, `.`).
    pub name: String,
    /// How to reach it.
    pub transport: McpTransport,
}

/// How an MCP server is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpTransport {
    /// A program speaking MCP on stdin/stdout.
    Stdio {
        /// The command line as written (what the recipe writer writes back).
        command_line: String,
        /// The command line split into program and arguments (quotes honoured).
        argv: Vec<String>,
    },
    /// A streamable HTTP endpoint.
    Http {
        /// `http://` or `https://` URL.
        url: String,
    },
}

/// `## Constraints`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Constraints {
    /// Wall time of one model run on one task.
    pub timeout: Duration,
    /// Timeout of a bash call when the model gives none.
    pub bash_timeout: Duration,
    /// Size limit, in MiB, of the file a long bash output is saved to.
    pub bash_spill_max_mb: u64,
    /// Requests to the model per run; 0 means unlimited.
    pub max_steps: u32,
    /// USD per model run; the model is stopped once its cost passes it. `None`: no limit.
    pub max_cost: Option<f64>,
    /// The project to run in, relative to the recipe file's folder. `None`: the folder versus
    /// was started in (or `-C DIR`).
    pub project_root: Option<String>,
    /// `edit_tools`: which editing tool each model gets. `None` (`default`): the config's.
    pub edit_tools: Option<crate::tools::EditTools>,
    /// `sub_agents`: whether the models get `spawn_agent` (`default`: as the user config says).
    pub sub_agents: SubAgentsMode,
    /// `sub_agents_max_depth`: how deep sub-agents may nest, when the recipe turns them on.
    pub sub_agents_max_depth: u32,
    /// `sub_agents_per_turn`: sub-agents one model may start per task, when the recipe turns
    /// them on.
    pub sub_agents_per_turn: u32,
}

/// `sub_agents`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SubAgentsMode {
    /// As the user config's `[sub_agents]` says (off without it).
    #[default]
    Default,
    /// On for every model, with the recipe's depth and count.
    On,
    /// Off, whatever the config says.
    Off,
}

impl Choice for SubAgentsMode {
    const ALL: &'static [Self] = &[Self::Default, Self::On, Self::Off];
    fn as_str(self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::On => "on",
            Self::Off => "off",
        }
    }
}

/// `## Context`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ContextSettings {
    /// Whether each task starts fresh or continues the previous one.
    pub task_mode: TaskMode,
    /// Conversation turns kept when a task continues; 0 keeps all of them.
    pub max_history_turns: u32,
    /// How a long conversation is shortened.
    pub strategy: CompactStrategy,
    /// Share of the context window at which automatic compaction starts, in (0, 1].
    pub compact_threshold: f64,
    /// Folders holding AgentSkills, as written: relative to the recipe's folder, inside it
    /// (see [`crate::context`]); their skills join every model's catalog.
    pub skills: Vec<String>,
}

/// `task_mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TaskMode {
    /// Every task starts from the unchanged project with an empty history.
    #[default]
    Independent,
    /// Each task continues in the previous task's workspace, with its history.
    Sequential,
}

impl Choice for TaskMode {
    const ALL: &'static [Self] = &[Self::Independent, Self::Sequential];
    fn as_str(self) -> &'static str {
        match self {
            Self::Independent => "independent",
            Self::Sequential => "sequential",
        }
    }
}

/// `strategy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CompactStrategy {
    /// Summarise the conversation when it reaches `compact_threshold` of the context window.
    #[default]
    AutoCompact,
    /// Only when the user asks for it.
    Manual,
    /// Never: a conversation that no longer fits ends with a context-overflow error.
    Off,
}

impl Choice for CompactStrategy {
    const ALL: &'static [Self] = &[Self::AutoCompact, Self::Manual, Self::Off];
    fn as_str(self) -> &'static str {
        match self {
            Self::AutoCompact => "auto_compact",
            Self::Manual => "manual",
            Self::Off => "off",
        }
    }
}

impl Choice for Reasoning {
    const ALL: &'static [Self] = &[Self::Default, Self::Low, Self::Medium, Self::High];
    fn as_str(self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
        }
    }
}

impl Choice for Isolation {
    const ALL: &'static [Self] = &[Self::Worktree, Self::Copy, Self::Overlay];
    /// `in_memory` for the mode that keeps changes in memory: "overlay" is what users call
    /// the default copy-on-write workspaces, so the mode no longer goes by that name.
    fn as_str(self) -> &'static str {
        match self {
            Self::Worktree => "worktree",
            Self::Copy => "copy",
            Self::Overlay => "in_memory",
        }
    }

    /// Also reads `overlay`, the in-memory mode's name before it was renamed, so existing
    /// recipes keep working (the writer then spells it `in_memory`).
    fn from_name(text: &str) -> Option<Self> {
        if text.trim().eq_ignore_ascii_case("overlay") {
            return Some(Self::Overlay);
        }
        Self::ALL
            .iter()
            .copied()
            .find(|v| v.as_str().eq_ignore_ascii_case(text.trim()))
    }
}

/// `## Model Parameters`: the values for every model, then per-model changes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelParameters {
    /// What every model gets unless a per-model line says otherwise.
    pub all: Sampling,
    /// `model-spec: key=value, ...` lines, in file order.
    pub per_model: Vec<ModelOverride>,
}

/// Sampling settings of one model run. `None` / [`Reasoning::Default`]: the provider's default.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Sampling {
    /// Sampling temperature, in [0, 2].
    pub temperature: Option<f32>,
    /// Cap on output tokens per request.
    pub max_output_tokens: Option<u32>,
    /// Thinking effort.
    pub reasoning: Reasoning,
    /// Sampling seed, for providers that take one.
    pub seed: Option<u64>,
}

/// One `model-spec: key=value, ...` line. Each field: `None` = not changed for this model,
/// `Some(None)` = back to the provider default.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelOverride {
    /// Which model. A spec without `#N` applies to every sample of the model; `#N` to that
    /// sample only (and wins over the plain line).
    pub spec: ModelSpec,
    /// `temperature=`.
    pub temperature: Option<Option<f32>>,
    /// `max_output_tokens=`.
    pub max_output_tokens: Option<Option<u32>>,
    /// `reasoning_effort=`.
    pub reasoning: Option<Reasoning>,
    /// `seed=`.
    pub seed: Option<Option<u64>>,
    /// Where it was written.
    pub line: SourceLine,
}

/// `## Workspace`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WorkspaceSettings {
    /// `None` (`auto`): a git worktree inside a repository, a copy elsewhere.
    pub isolation: Option<Isolation>,
    /// Command run once in each fresh workspace before the model starts.
    pub setup: Option<String>,
    /// Keep the workspaces after the run (to look around in them).
    pub keep: bool,
}

/// `## Sandbox`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Sandbox {
    /// What the file tools may touch.
    pub filesystem: FilesystemAccess,
    /// Whether tools may reach the network.
    pub network: NetworkAccess,
    /// Let web_fetch reach loopback, private and link-local addresses.
    pub allow_local_fetch: bool,
    /// Give the setup command (`## Workspace setup:`) the network even when other commands
    /// have none: installs download, a model's bash does not need to.
    pub setup_network: bool,
}

/// `filesystem`: what the models' tools and commands may touch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FilesystemAccess {
    /// Commands run unconfined on the filesystem: they can read and write every file the user
    /// can (shown as a warning).
    Unrestricted,
    /// Commands write only their own workspace and private home/temp folders, and see no
    /// project, home folder or secret place (the default).
    #[default]
    ProjectOnly,
    /// No writing tools (write_file, edit_file and apply_patch are removed) and the workspace
    /// is read-only to commands too.
    ReadOnly,
}

impl Choice for FilesystemAccess {
    const ALL: &'static [Self] = &[Self::Unrestricted, Self::ProjectOnly, Self::ReadOnly];
    fn as_str(self) -> &'static str {
        match self {
            Self::Unrestricted => "unrestricted",
            Self::ProjectOnly => "project_only",
            Self::ReadOnly => "read_only",
        }
    }
}

/// `network`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NetworkAccess {
    /// web_fetch and commands both reach the network.
    Full,
    /// web_fetch (with its address guard) reaches the web; commands have no network (the
    /// default).
    #[default]
    FetchOnly,
    /// Nothing reaches the network: web_fetch is removed and commands have no network.
    None,
}

impl Choice for NetworkAccess {
    const ALL: &'static [Self] = &[Self::Full, Self::FetchOnly, Self::None];
    fn as_str(self) -> &'static str {
        match self {
            Self::Full => "full",
            Self::FetchOnly => "fetch_only",
            Self::None => "none",
        }
    }
}

/// `## Review`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Review {
    /// Hide and shuffle model names until a choice is made.
    pub blind: bool,
    /// Command run in every workspace when its model finishes; shown beside the diff.
    pub check: Option<String>,
}

/// One task: a prompt sent to every model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Task {
    /// The `### name`, or `task-N` (N = position) for a bullet.
    pub name: String,
    /// The prompt, verbatim (code blocks included).
    pub prompt: String,
    /// Where the bullet or heading was written.
    pub line: SourceLine,
}

/// How a tool's result is cut before the model reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputRule {
    /// Lines kept at most (`None`: no line limit).
    pub max_lines: Option<usize>,
    /// Bytes kept at most (`None`: no byte limit).
    pub max_bytes: Option<usize>,
    /// Which part is kept when the result is too long.
    pub truncation: Truncation,
}

/// `truncation`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Truncation {
    /// The beginning.
    #[default]
    Head,
    /// The end.
    Tail,
    /// Both ends, with a note of what was left out between them.
    HeadTail,
}

impl Choice for Truncation {
    const ALL: &'static [Self] = &[Self::Head, Self::Tail, Self::HeadTail];
    fn as_str(self) -> &'static str {
        match self {
            Self::Head => "head",
            Self::Tail => "tail",
            Self::HeadTail => "head_tail",
        }
    }
}

/// `## Metadata`: descriptive only; nothing in a run depends on it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Metadata {
    /// One-line description.
    pub description: String,
    /// Free tags, for finding recipes and grouping reports.
    pub tags: Vec<String>,
    /// Who wrote the recipe.
    pub author: String,
    /// Errata's `name:` (a display name; the `# Title` stays the recipe's name).
    pub name: String,
    /// Errata's `version:` of the recipe's content (not the format version).
    pub version: String,
}
