//! Recipes: a Markdown file describing one comparison (models, prompts, tools, limits, tasks,
//! success criteria), read into a typed [`Recipe`] (spec/recipes.md, user docs in
//! docs/recipes.md).
//!
//! Design:
//! - **Defaults are a recipe.** The built-in defaults are `defaults.recipe.md`, embedded in the
//!   binary and read by the same reader as user recipes; a user recipe is read *over* them.
//!   So there is one source of truth for every default, and a [`Recipe`] is always complete:
//!   the runner never decides a fallback of its own.
//! - **Every problem at once.** Readers never stop at the first problem: each pushes
//!   file:line problems ([`Problem`]) with the accepted values into one sink, and the result is
//!   either a recipe or all of its problems ([`RecipeErrors`]). Nothing is silently ignored:
//!   unknown sections, keys, tools and criteria are errors.
//! - **Tables, not scattered code.** Key/value sections are tables of keys that know how to
//!   read, write and describe themselves, so reading, writing ([`Recipe::to_markdown`]) and
//!   error messages cannot drift apart, and parse -> write -> parse gives an equal recipe.
//! - **Engine types out.** [`Recipe::tool_registry`], [`Recipe::tool_limits`] and
//!   [`Recipe::agent_settings`] hand the runner exactly what the engine takes.
//!
//! Errata recipes (same section and key names) load unchanged; MCP servers are read and
//! validated but versus does not start them yet.

pub mod criteria;
pub mod duration;
mod keys;
mod lists;
mod model;
mod output;
mod params;
mod parse;
mod problems;
mod read;
mod runtime;
mod sections;
mod tasks;
mod values;
mod write;

use std::path::Path;
use std::sync::OnceLock;

use crate::config::Config;

pub use criteria::{Criterion, CriterionError};
pub use model::{
    Choice, CompactStrategy, Constraints, ContextSettings, FORMAT_VERSION, FilesystemAccess,
    KeyLines, McpServer, McpTransport, Metadata, ModelEntry, ModelOverride, ModelParameters,
    NetworkAccess, OutputRule, Recipe, Review, Sampling, Sandbox, SourceLine, SubAgentsMode, Task,
    TaskMode, ToolEntry, ToolSet, Truncation, WorkspaceSettings,
};
pub use problems::{Problem, ProblemKind, RecipeErrors};
pub use runtime::{Loosening, LooseningKind, LooseningRefused, web_search_setup};

/// The built-in defaults, as shipped (comments explain each value).
pub const DEFAULTS_TEXT: &str = include_str!("defaults.recipe.md");

/// The commented starter recipe `versus recipe new` writes.
pub const TEMPLATE_TEXT: &str = include_str!("template.recipe.md");

/// How the defaults are named in problems.
const DEFAULTS_ORIGIN: &str = "defaults.recipe.md (built in)";

impl Recipe {
    /// The built-in defaults (read once). An error here is a bug in the shipped file; the
    /// tests make sure it never happens.
    pub fn defaults() -> Result<Recipe, RecipeErrors> {
        static DEFAULTS: OnceLock<Result<Recipe, RecipeErrors>> = OnceLock::new();
        DEFAULTS
            .get_or_init(|| read::read(DEFAULTS_TEXT, DEFAULTS_ORIGIN, Recipe::default(), None))
            .clone()
    }

    /// Reads a recipe from `text` over the built-in defaults. `origin` names the file in
    /// problems (`FILE:LINE: message`).
    pub fn parse(text: &str, origin: &str) -> Result<Recipe, RecipeErrors> {
        read::read(text, origin, Recipe::defaults()?, None)
    }

    /// Like [`Recipe::parse`], and every model spec (Models, per-model parameter lines) must
    /// name a provider `config` knows (built in or `[providers.NAME]`), with the problem at
    /// the spec's line. Plain parsing checks the syntax only, so a recipe can be read without
    /// a configuration.
    pub fn parse_for(text: &str, origin: &str, config: &Config) -> Result<Recipe, RecipeErrors> {
        read::read(text, origin, Recipe::defaults()?, Some(config))
    }

    /// Reads `text` over `base` instead of the built-in defaults (e.g. a project recipe over
    /// a team's shared one).
    pub fn parse_over(base: Recipe, text: &str, origin: &str) -> Result<Recipe, RecipeErrors> {
        read::read(text, origin, base, None)
    }

    /// Reads the recipe file at `path` over the built-in defaults. A file that cannot be
    /// read gives one [`ProblemKind::Unreadable`] problem (see [`RecipeErrors::is_unreadable`]).
    pub fn load(path: &Path) -> Result<Recipe, RecipeErrors> {
        let (text, origin) = read_file(path)?;
        Recipe::parse(&text, &origin)
    }

    /// [`Recipe::load`] with the provider check of [`Recipe::parse_for`].
    pub fn load_for(path: &Path, config: &Config) -> Result<Recipe, RecipeErrors> {
        Recipe::load_hashed_for(path, config).map(|(recipe, _)| recipe)
    }

    /// [`Recipe::load_for`], also returning the blake3 hash (hex) of the very bytes that were
    /// parsed: what a report records and what trust in the recipe is keyed by, so the two can
    /// never describe different contents of a file that changed in between.
    pub fn load_hashed_for(path: &Path, config: &Config) -> Result<(Recipe, String), RecipeErrors> {
        let (text, origin) = read_file(path)?;
        let hash = blake3::hash(text.as_bytes()).to_hex().to_string();
        Recipe::parse_for(&text, &origin, config).map(|recipe| (recipe, hash))
    }
}

/// The most versus reads of a recipe file (1 MiB; a recipe with long task prompts is tens of
/// KiB). A recipe may come with a cloned project: a link to `/dev/zero` or a fifo must end in a
/// clear problem at once, not in memory running out or a hang.
pub const RECIPE_READ_CAP: u64 = 1 << 20;

/// The file's text and its name for problems (read with [`crate::fsutil::read_capped`]).
fn read_file(path: &Path) -> Result<(String, String), RecipeErrors> {
    let origin = path.display().to_string();
    let text = crate::fsutil::read_capped_string(path, RECIPE_READ_CAP)
        .map_err(|e| unreadable(&origin, &e.to_string()))?;
    Ok((text, origin))
}

fn unreadable(origin: &str, why: &str) -> RecipeErrors {
    RecipeErrors {
        problems: vec![Problem {
            file: origin.to_string(),
            line: 0,
            kind: ProblemKind::Unreadable,
            message: format!("cannot read the recipe: {why}"),
        }],
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
