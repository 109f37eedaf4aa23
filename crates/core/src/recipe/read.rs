//! One file read over a base recipe: header, every section, then the checks that look across
//! sections.
//!
//! The base is the built-in defaults for a user recipe, and an empty recipe for the defaults
//! themselves, so both go through exactly the same reader. Every section the file has replaces
//! (lists, prose) or updates key by key (key/value sections, per-model lines, output rules)
//! what the base had; sections the file leaves out keep the base's value.

use super::keys;
use super::lists;
use super::model::{FORMAT_VERSION, FilesystemAccess, NetworkAccess, Recipe, ToolSet};
use super::output;
use super::params;
use super::parse::{self, Document};
use super::problems::{ProblemKind, Problems, RecipeErrors, did_you_mean, list};
use super::sections::{Ctx, SectionId, Trace, body_text, items};
use super::tasks;
use crate::config::Config;
use crate::tools::{ToolClass, ToolRegistry};

/// Reads `text` (named `origin` in problems) over `base`; with a `config`, model specs must
/// name providers it knows.
pub(crate) fn read(
    text: &str,
    origin: &str,
    base: Recipe,
    config: Option<&Config>,
) -> Result<Recipe, RecipeErrors> {
    let mut problems = Problems::new(origin);
    let doc = parse::split(text, &mut problems);
    let mut recipe = base;
    let registry = ToolRegistry::builtin();
    let mut ctx = Ctx {
        problems: &mut problems,
        trace: Trace::default(),
        // web_search is offered only with a backend, so it is no built-in; a recipe may
        // still name it.
        tools: registry.names().into_iter().chain(["web_search"]).collect(),
        config,
    };
    header(&doc, &mut recipe, &mut ctx);
    for section in &doc.sections {
        let Some(id) = SectionId::from_name(&section.name) else {
            let titles = SectionId::titles();
            ctx.problem(
                section.line,
                ProblemKind::UnknownSection,
                format!(
                    "unknown section `## {}`{}; sections: {}",
                    section.name,
                    did_you_mean(&section.name, titles.iter().copied()),
                    list(&titles)
                ),
            );
            continue;
        };
        if let Some(first) = ctx.trace.sections.get(&id) {
            ctx.problem(
                section.line,
                ProblemKind::DuplicateSection,
                format!(
                    "`## {}` already appears at line {first}; merge the two sections into one",
                    id.title()
                ),
            );
            continue;
        }
        ctx.trace.sections.insert(id, section.line);
        match id {
            SectionId::Models => recipe.models = lists::models(section, &mut ctx),
            SectionId::SystemPrompt => recipe.system_prompt = body_text(&section.body),
            SectionId::Tools => recipe.tools = ToolSet::Only(lists::tools(section, &mut ctx)),
            SectionId::ToolDescriptions => {
                recipe.tool_descriptions = lists::descriptions(section, &mut ctx)
            }
            SectionId::McpServers => recipe.mcp_servers = lists::mcp_servers(section, &mut ctx),
            SectionId::Constraints
            | SectionId::Context
            | SectionId::Workspace
            | SectionId::Sandbox
            | SectionId::Review
            | SectionId::Metadata => {
                let entries = items(&section.body, id, &mut ctx);
                keys::read(&entries, id, &mut recipe, &mut ctx);
            }
            SectionId::ModelParameters => {
                let entries = items(&section.body, id, &mut ctx);
                params::read(&entries, &mut recipe, &mut ctx);
            }
            SectionId::Tasks => recipe.tasks = tasks::read(section, &mut ctx),
            SectionId::SuccessCriteria => recipe.criteria = lists::criteria(section, &mut ctx),
            SectionId::SummarizationPrompt => {
                recipe.summarization_prompt = body_text(&section.body)
            }
            SectionId::OutputProcessing => {
                output::read(section, &mut recipe.output_processing, &mut ctx)
            }
        }
    }
    let trace = std::mem::take(&mut ctx.trace);
    // Only this file's lines: a key left to the base was not written here.
    recipe.key_lines = super::model::KeyLines::default();
    for ((section, key), line) in &trace.keys {
        recipe.key_lines.0.insert((section.title(), key), *line);
    }
    cross_check(&recipe, &trace, &mut ctx);
    problems.finish(recipe)
}

/// Title and `version:` (the only things allowed before the first section).
fn header(doc: &Document, recipe: &mut Recipe, ctx: &mut Ctx) {
    match &doc.title {
        Some((title, line)) if title.is_empty() => ctx.problem(
            *line,
            ProblemKind::MissingTitle,
            "the `#` title is empty; write the recipe's name after it, e.g. `# Fix the failing tests`",
        ),
        Some((title, _)) => recipe.name = title.clone(),
        None => ctx.problem(
            1,
            ProblemKind::MissingTitle,
            "the recipe has no `# Title` line; start the file with `# NAME`",
        ),
    }
    let mut version_line = None;
    for line in &doc.header {
        let text = line.text.trim();
        let Some((key, value)) = text.split_once(':').map(|(k, v)| (k.trim(), v.trim())) else {
            ctx.problem(line.number, ProblemKind::Syntax, not_header(text));
            continue;
        };
        if !key.eq_ignore_ascii_case("version") {
            ctx.problem(line.number, ProblemKind::Syntax, not_header(text));
            continue;
        }
        if let Some(first) = version_line {
            ctx.problem(
                line.number,
                ProblemKind::DuplicateKey,
                format!("`version:` is already given at line {first}; keep one"),
            );
            continue;
        }
        version_line = Some(line.number);
        match value.parse::<u32>() {
            Ok(FORMAT_VERSION) => {}
            Ok(other) => ctx.problem(
                line.number,
                ProblemKind::BadVersion,
                format!(
                    "recipe format version {other} is not supported: this versus reads \
                     `version: {FORMAT_VERSION}`"
                ),
            ),
            Err(_) => ctx.problem(
                line.number,
                ProblemKind::BadVersion,
                format!(
                    "`version: {value}` is not a format version: write `version: {FORMAT_VERSION}`"
                ),
            ),
        }
    }
    if version_line.is_none() {
        let line = doc.sections.first().map_or(1, |s| s.line);
        ctx.problem(
            line,
            ProblemKind::MissingVersion,
            format!(
                "the recipe has no `version:` line; add `version: {FORMAT_VERSION}` under the \
                 title, before the first `##` section"
            ),
        );
    }
}

fn not_header(text: &str) -> String {
    format!(
        "`{text}` cannot go before the first `##` section: only the `# Title` and \
         `version: {FORMAT_VERSION}` go there (a description goes in ## Metadata as \
         `description:`)"
    )
}

/// Checks that need several sections: a setting in this file that another one makes
/// meaningless is an error, not a silent no-op.
fn cross_check(recipe: &Recipe, trace: &Trace, ctx: &mut Ctx) {
    let active = recipe.active_tool_names_for(ctx.config);
    // Without ## Tools, web_search comes from the user's config: unknown without one (a
    // plain parse), so only a config that leaves it off makes `tool_used: web_search` fail.
    let search_from_config = recipe.web_search_from_config(ctx.config);
    for (i, criterion) in recipe.criteria.iter().enumerate() {
        if let super::criteria::Criterion::ToolUsed(name) = criterion
            && !active.iter().any(|a| a == name)
            && let Some(line) = trace.criteria.get(i)
        {
            let message = match search_from_config {
                _ if name != "web_search" => format!(
                    "`tool_used: {name}` can never pass: the models are not given `{name}` \
                     (see ## Tools and ## Sandbox)"
                ),
                None if recipe.tools == ToolSet::All
                    && recipe.sandbox.network != NetworkAccess::None =>
                {
                    continue;
                }
                Some(false) => "`tool_used: web_search` can never pass: web_search is not \
                     configured, so the models are not given it; add [web_search] to your \
                     config (docs/extensions.md, \"Web search\"), or list \
                     `- web_search(BACKEND)` in ## Tools (brave, tavily, exa or searxng)"
                    .to_string(),
                _ => "`tool_used: web_search` can never pass: the models are not given \
                     `web_search` (see ## Tools and ## Sandbox)"
                    .to_string(),
            };
            ctx.problem(*line, ProblemKind::Conflict, message);
        }
    }
    for (name, line) in &trace.descriptions {
        if !active.iter().any(|a| a == name) {
            ctx.problem(
                *line,
                ProblemKind::Conflict,
                format!(
                    "`{name}` has a description but the models are not given `{name}` (see \
                     ## Tools and ## Sandbox); remove the description or offer the tool"
                ),
            );
        }
    }
    if let ToolSet::Only(entries) = &recipe.tools {
        let registry = ToolRegistry::builtin();
        for entry in entries {
            let class = match registry.get(&entry.name) {
                Some(tool) => tool.spec().class,
                None if entry.name == "web_search" => ToolClass::ExternalEffect,
                None => continue,
            };
            let why = if class == ToolClass::ExternalEffect
                && recipe.sandbox.network == NetworkAccess::None
            {
                Some("## Sandbox says `network: none`")
            } else if class == ToolClass::Proposal
                && recipe.sandbox.filesystem == FilesystemAccess::ReadOnly
            {
                Some("## Sandbox says `filesystem: read_only`")
            } else {
                None
            };
            if let (Some(why), Some(line)) = (why, trace.tools.get(&entry.name)) {
                ctx.problem(
                    *line,
                    ProblemKind::Conflict,
                    format!(
                        "`{}` is listed in ## Tools but {why}; remove one of them",
                        entry.name
                    ),
                );
            }
        }
    }
}
