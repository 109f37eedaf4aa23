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
pub use ledger::{LedgerEntry, LedgerInput, LedgerSource, compare};

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
    /// Sub-agents (`spawn_agent`) for every model of the turn: `None` (the default) leaves
    /// them off; the user config's `[sub_agents]` or a recipe turns them on. The engine gives
    /// every model the same tool and settings and hashes them into the ledger.
    pub sub_agents: Option<crate::model::SubAgentSettings>,
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

/// A size for people: `812 B`, `3.4 KiB`.
fn size_text(bytes: u64) -> String {
    if bytes < 1024 {
        format!("{bytes} B")
    } else {
        format!("{:.1} KiB", bytes as f64 / 1024.0)
    }
}

/// The lines every front end shows about a turn's context (the review, `versus sessions
/// show`): the instruction files with their sizes (cut ones said), the skills, those left
/// out, and the fairness ledger's verdict ([`fairness_lines`]). The same words everywhere;
/// `name` shows a model's label (its alias while blind mode hides the names); the caller
/// sanitizes the lines (paths and names come from the project).
pub fn summary_lines(
    context: &ProjectContext,
    ledger: &[LedgerEntry],
    name: &dyn Fn(&str) -> String,
) -> Vec<String> {
    let mut out = Vec::new();
    if context.files.is_empty() {
        out.push("context files: none".to_string());
    } else {
        let files: Vec<String> = context
            .files
            .iter()
            .map(|f| {
                // The global file by its name alone (the log has its whole path): the line
                // stays short whatever the user's folder is called.
                let (whose, path) = match f.origin {
                    FileOrigin::Global => (
                        "global, ",
                        std::path::Path::new(&f.path)
                            .file_name()
                            .map(|n| n.to_string_lossy().into_owned())
                            .unwrap_or_else(|| f.path.clone()),
                    ),
                    FileOrigin::Project => ("", f.path.clone()),
                };
                if f.cut() {
                    format!(
                        "{path} ({whose}{}, cut to {})",
                        size_text(f.bytes),
                        size_text(f.given)
                    )
                } else {
                    format!("{path} ({whose}{})", size_text(f.bytes))
                }
            })
            .collect();
        out.push(format!("context files: {}", files.join(", ")));
    }
    if !context.skills.is_empty() {
        let skills: Vec<String> = context
            .skills
            .iter()
            .map(|s| {
                let origin = match s.origin {
                    SkillOrigin::Project => "project",
                    SkillOrigin::Recipe => "recipe",
                    SkillOrigin::User => "user",
                };
                format!("{} ({origin})", s.name)
            })
            .collect();
        out.push(format!("skills: {}", skills.join(", ")));
    }
    for s in &context.skipped {
        out.push(format!("skill left out: {}: {}", s.location, s.reason));
    }
    for note in &context.notes {
        out.push(format!("left out: {note}"));
    }
    // Sub-agents are a tool like the others, but one that changes how a model works: said.
    let spawn_agent = |e: &LedgerEntry| {
        e.tool_settings
            .iter()
            .find_map(|s| s.strip_prefix("spawn_agent: ").map(str::to_string))
            // A log written before the limits became a tool setting.
            .or_else(|| e.sub_agents.clone())
    };
    if let Some(settings) = ledger.iter().find_map(spawn_agent) {
        out.push(format!("sub-agents: on ({settings})"));
    }
    out.extend(fairness_lines(ledger, name));
    out
}

/// The fairness ledger's verdict: one line saying every model was given the same (with the
/// ledger's hash), or one line per model that was given something different, naming what.
/// Nothing for an empty ledger (a log written before it).
pub fn fairness_lines(ledger: &[LedgerEntry], name: &dyn Fn(&str) -> String) -> Vec<String> {
    let Some(first) = ledger.first() else {
        return Vec::new();
    };
    let differing: Vec<String> = ledger
        .iter()
        .filter(|e| !e.differs.is_empty())
        .map(|e| {
            format!(
                "fairness: {} was given something different: {}",
                name(&e.model),
                e.differs.join("; ")
            )
        })
        .collect();
    if differing.is_empty() {
        vec![format!(
            "fairness: every model was given the same (ledger {})",
            first.hash
        )]
    } else {
        differing
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
    fn the_summary_names_sizes_cuts_skills_and_the_verdict() {
        let context = ProjectContext {
            files: vec![
                ContextFile {
                    origin: FileOrigin::Global,
                    path: "/u/AGENTS.md".into(),
                    bytes: 20,
                    given: 20,
                    ..ContextFile::default()
                },
                ContextFile {
                    path: "AGENTS.md".into(),
                    bytes: 40 * 1024,
                    given: 32 * 1024,
                    ..ContextFile::default()
                },
            ],
            skills: vec![Skill {
                name: "pdf".into(),
                origin: SkillOrigin::User,
                ..Skill::default()
            }],
            ..ProjectContext::default()
        };
        let entry = |model: &str, differs: &[&str]| LedgerEntry {
            model: model.into(),
            hash: "h1".into(),
            differs: differs.iter().map(|d| d.to_string()).collect(),
            ..LedgerEntry::default()
        };
        let plain = |label: &str| label.to_string();
        let lines = summary_lines(&context, &[entry("a", &[]), entry("b", &[])], &plain);
        assert_eq!(
            lines,
            [
                "context files: AGENTS.md (global, 20 B), AGENTS.md (40.0 KiB, cut to 32.0 KiB)",
                "skills: pdf (user)",
                "fairness: every model was given the same (ledger h1)",
            ]
        );
        let lines = summary_lines(
            &context,
            &[entry("a", &[]), entry("b", &["seed (1 vs none)"])],
            &plain,
        );
        assert_eq!(
            lines[2],
            "fairness: b was given something different: seed (1 vs none)"
        );
        let on = LedgerEntry {
            tool_settings: vec!["spawn_agent: max_depth=2 max_per_turn=4".into()],
            ..entry("a", &[])
        };
        let lines = summary_lines(&context, &[on.clone(), on], &plain);
        assert_eq!(lines[2], "sub-agents: on (max_depth=2 max_per_turn=4)");
        // As a log written before the limits became a tool setting has them.
        let old = LedgerEntry {
            sub_agents: Some("max_depth=1 max_per_turn=4".into()),
            ..entry("a", &[])
        };
        let lines = summary_lines(&context, &[old.clone(), old], &plain);
        assert_eq!(lines[2], "sub-agents: on (max_depth=1 max_per_turn=4)");
    }

    #[test]
    fn an_empty_context_leaves_the_prompt_alone() {
        let context = ProjectContext::default();
        assert!(context.is_empty());
        assert_eq!(context.apply("base\n"), "base\n");
    }
}
