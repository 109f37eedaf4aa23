//! Project context: what every model of a turn reads besides the prompt and its tools. The
//! instruction files (`AGENTS.md` from the project root down to the working folder, and the
//! user's global one), the catalog of AgentSkills, and the fairness ledger that proves each
//! model of a turn was given the same.
//!
//! Why one module: these are gathered once per turn by the engine and put into every model's
//! system prompt in the same words, so a comparison stays fair; a front end never reads them
//! itself. Everything here is bounded input from someone else's project: read with size caps,
//! never through a link out of the project.

pub mod files;
pub mod ledger;
pub mod skills;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use files::{CONTEXT_CAP, ContextFile, FileOrigin};
pub use ledger::{LedgerEntry, LedgerInput, compare};
pub use skills::{Skill, SkillOrigin, SkippedSkill};

/// Where a turn's context comes from: what the front end knows from the user's config, handed
/// to the engine with the turn so the engine gathers the same context for every model.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ContextSources {
    /// The user's versus config folder (`$XDG_CONFIG_HOME/versus`, else `~/.config/versus`):
    /// its `AGENTS.md` is the user's global instructions, its `skills/` the user's skills.
    pub user_dir: Option<PathBuf>,
    /// Whether the project is trusted (`versus trust`): its skills count only then. Its
    /// `AGENTS.md` files count either way (they are text the models read, not commands).
    pub project_trusted: bool,
    /// Folders a recipe names, each holding skill folders.
    pub skill_dirs: Vec<PathBuf>,
}

/// What a turn's models read besides the prompt, gathered once per turn.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProjectContext {
    /// The instruction files, in the order they are given (global first, then the project
    /// root down to the working folder).
    #[serde(default)]
    pub files: Vec<ContextFile>,
    /// The skills of the catalog, sorted by name.
    #[serde(default)]
    pub skills: Vec<Skill>,
    /// Skills left out, with why (malformed, shadowed, over the count cap).
    #[serde(default)]
    pub skipped: Vec<SkippedSkill>,
    /// What could not be read and was left out (an instruction file that is a link...).
    #[serde(default)]
    pub notes: Vec<String>,
}

impl ProjectContext {
    /// Reads the context of `project` (the working folder) from `sources`. Blocking (small,
    /// bounded reads); nothing here fails the turn: what cannot be read is left out and named
    /// in [`ProjectContext::notes`] or [`ProjectContext::skipped`].
    pub fn gather(project: &Path, sources: &ContextSources) -> ProjectContext {
        let mut context = ProjectContext::default();
        files::gather(project, sources.user_dir.as_deref(), &mut context);
        skills::gather(project, sources, &mut context);
        context
    }

    /// Whether there is nothing to add to the system prompt.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty() && self.skills.is_empty()
    }

    /// The text added to the system prompt: the instruction files, then the skill catalog.
    /// The same words for every model of the turn.
    pub fn prompt_text(&self) -> String {
        let mut out = String::new();
        files::render(&self.files, &mut out);
        skills::render(&self.skills, &mut out);
        out
    }

    /// `system` with [`ProjectContext::prompt_text`] after it.
    pub fn apply(&self, system: &str) -> String {
        let text = self.prompt_text();
        if text.is_empty() {
            return system.to_string();
        }
        let mut out = system.trim_end().to_string();
        out.push_str("\n\n");
        out.push_str(&text);
        out
    }

    /// Folders outside the project that `read_file` may read by absolute path: the folders
    /// of the user's and the recipe's skills (the project's own are in the workspace).
    pub fn read_roots(&self) -> Vec<PathBuf> {
        let mut roots: Vec<PathBuf> = self
            .skills
            .iter()
            .filter(|s| s.origin != SkillOrigin::Project)
            .filter_map(|s| s.dir.clone())
            .collect();
        roots.sort();
        roots.dedup();
        roots
    }
}

/// Hex blake3 of `bytes`, cut to 16 digits: enough to tell inputs apart in a log and a
/// header, short enough to read.
pub(crate) fn short_hash(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex()[..16].to_string()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_context_leaves_the_prompt_alone() {
        let context = ProjectContext::default();
        assert!(context.is_empty());
        assert_eq!(context.apply("base\n"), "base\n");
    }
}
