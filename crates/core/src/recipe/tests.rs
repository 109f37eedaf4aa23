//! Unit tests of the module as a whole: the shipped defaults and template, layering, the
//! engine settings a recipe produces.

use std::time::Duration;

use super::*;
use crate::config::ModelSpec;
use crate::model::Reasoning;
use crate::tools::{ToolLimits, ToolRegistry};

fn parse(text: &str) -> Recipe {
    match Recipe::parse(text, "t.md") {
        Ok(r) => r,
        Err(e) => panic!("unexpected problems:\n{e}"),
    }
}

fn problems(text: &str) -> Vec<Problem> {
    Recipe::parse(text, "t.md").unwrap_err().problems
}

const MINIMAL: &str = "# Minimal\nversion: 1\n";

#[test]
fn defaults_read_cleanly_and_set_every_key() {
    let d = Recipe::defaults().unwrap();
    assert_eq!(d.name, "versus defaults");
    assert_eq!(d.tools, ToolSet::All);
    assert_eq!(d.constraints.timeout, Duration::from_secs(20 * 60));
    assert_eq!(d.constraints.bash_timeout, Duration::from_secs(120));
    assert_eq!(d.constraints.max_steps, 50);
    assert_eq!(d.context.compact_threshold, 0.8);
    assert_eq!(d.context.max_history_turns, 20);
    assert_eq!(d.criteria, [Criterion::NoErrors]);
    assert!(
        d.summarization_prompt
            .starts_with("Summarize the conversation")
    );
    // A recipe built from Rust defaults differs in every key the file sets, so a key missing
    // from the file would show up here as an unchanged zero value.
    assert_ne!(d.constraints.timeout, Duration::ZERO);
    assert_ne!(d.constraints.bash_timeout, Duration::ZERO);
    assert_ne!(d.context.compact_threshold, 0.0);
}

#[test]
fn default_limits_are_the_tools_own_defaults() {
    // The Output Processing defaults restate each tool's limits: they must agree, so a recipe
    // without the section changes nothing.
    let d = Recipe::defaults().unwrap();
    assert_eq!(d.tool_limits(), ToolLimits::default());
    for tool in ToolRegistry::builtin().names() {
        assert!(d.output_filter(tool).is_none(), "{tool} would be filtered");
    }
}

#[test]
fn defaults_and_template_round_trip() {
    let d = Recipe::defaults().unwrap();
    assert_eq!(parse(&d.to_markdown()), d);
    let t = parse(TEMPLATE_TEXT);
    assert_eq!(parse(&t.to_markdown()), t);
    assert_eq!(t.tasks.len(), 2);
    assert_eq!(t.tasks[1].name, "add-a-flag");
    assert!(t.tasks[1].prompt.contains("\n\nKeep the existing output"));
}

#[test]
fn a_minimal_recipe_is_the_defaults_with_its_name() {
    let r = parse(MINIMAL);
    let mut d = Recipe::defaults().unwrap();
    d.name = "Minimal".into();
    assert_eq!(r, d);
}

#[test]
fn key_sections_layer_key_by_key_and_lists_replace() {
    let r = parse(
        "# L\nversion: 1\n## Constraints\ntimeout: 5m\n## Success Criteria\n- has_writes\n\
         ## Output Processing\n- bash: max_lines=10\n",
    );
    assert_eq!(r.constraints.timeout, Duration::from_secs(300));
    assert_eq!(r.constraints.max_steps, 50, "kept from the defaults");
    assert_eq!(
        r.criteria,
        [Criterion::HasWrites],
        "the list replaced no_errors"
    );
    let bash = r.output_processing["bash"];
    assert_eq!(bash.max_lines, Some(10));
    assert_eq!(
        bash.max_bytes,
        Some(50 * 1024),
        "kept from the default rule"
    );
    assert_eq!(bash.truncation, Truncation::HeadTail);
    assert!(r.output_processing.contains_key("read_file"));
}

#[test]
fn parse_over_uses_another_base() {
    let base = parse("# Team\nversion: 1\n## Constraints\nmax_steps: 7\n");
    let r = Recipe::parse_over(
        base,
        "# Mine\nversion: 1\n## Constraints\ntimeout: 1m\n",
        "m.md",
    )
    .unwrap();
    assert_eq!(r.name, "Mine");
    assert_eq!(r.constraints.max_steps, 7);
    assert_eq!(r.constraints.timeout, Duration::from_secs(60));
}

#[test]
fn tool_registry_applies_selection_guidance_descriptions_and_sandbox() {
    let r = parse(
        "# T\nversion: 1\n## Tools\n- read_file: read before editing\n- bash(cargo test)\n\
         ## Tool Descriptions\n- bash: Runs the tests.\n",
    );
    let reg = r.tool_registry();
    assert_eq!(reg.names(), ["read_file", "bash"]);
    let specs = reg.specs();
    assert_eq!(specs[0].guidance, "read before editing");
    assert_eq!(specs[1].description, "Runs the tests.");
    assert_eq!(
        r.tool_limits().bash_allowlist,
        Some(vec!["cargo test".to_string()])
    );
    let mut settings = r.agent_settings(&crate::config::ModelSpec::parse("demo/x").unwrap());
    settings.compose_system(&reg);
    assert!(settings.system.contains("- read before editing"));

    let none = parse("# N\nversion: 1\n## Tools\n");
    assert!(none.tool_registry().names().is_empty());

    let sandboxed = parse("# S\nversion: 1\n## Sandbox\nnetwork: none\nfilesystem: read_only\n");
    let names = sandboxed.tool_registry().names();
    assert!(!names.contains(&"web_fetch"));
    assert!(!names.contains(&"write_file") && !names.contains(&"apply_patch"));
    assert!(names.contains(&"bash") && names.contains(&"read_file"));
}

#[test]
fn tool_limits_follow_constraints_sandbox_and_rules() {
    let r = parse(
        "# T\nversion: 1\n## Constraints\nbash_timeout: 15m\n## Sandbox\nallow_local_fetch: true\n\
         ## Output Processing\n- read_file: max_lines=300, max_bytes=none\n\
         - bash: truncation=tail, max_lines=100\n- search_code: max_bytes=2KB\n",
    );
    let l = r.tool_limits();
    assert_eq!(l.bash_default_timeout, Duration::from_secs(900));
    assert_eq!(l.bash_max_timeout, Duration::from_secs(900));
    assert!(l.allow_local_fetch);
    assert_eq!(l.read_max_lines, 300);
    assert_eq!(l.read_max_bytes, usize::MAX);
    // bash cannot keep only the tail itself: it returns everything and the filter cuts.
    assert!(l.bash_output_max_lines > 100_000);
    let bash = r.output_filter("bash").unwrap();
    assert_eq!(bash.truncation, Truncation::Tail);
    assert!(r.output_filter("read_file").is_none());
    assert_eq!(
        r.output_filter("search_code").unwrap().max_bytes,
        Some(2048)
    );
    assert_eq!(l.search_max_matches, 100);
}

#[test]
fn agent_settings_merge_global_and_per_model_parameters() {
    let r = parse(
        "# P\nversion: 1\n## Constraints\nmax_steps: 0\nmax_cost: 0.25\ntimeout: 90s\n\
         ## System Prompt\nBe brief.\n\
         ## Model Parameters\ntemperature: 0.2\nreasoning_effort: low\nseed: 5\n\
         - openai/o3: temperature=default, reasoning_effort=high\n\
         - openai/o3#2: max_output_tokens=4000\n\
         - ollama/qwen2.5-coder:7b: temperature=1.5\n",
    );
    let spec = |s: &str| ModelSpec::parse(s).unwrap();
    let plain = r.agent_settings(&spec("anthropic/claude-sonnet-4-5"));
    assert_eq!(plain.max_steps, u32::MAX);
    assert_eq!(plain.max_cost, Some(0.25));
    assert_eq!(plain.timeout, Duration::from_secs(90));
    assert_eq!(plain.temperature, Some(0.2));
    assert_eq!(plain.reasoning, Reasoning::Low);
    assert_eq!(plain.instructions.as_deref(), Some("Be brief."));
    let o3 = r.agent_settings(&spec("openai/o3"));
    assert_eq!(o3.temperature, None);
    assert_eq!(o3.reasoning, Reasoning::High);
    assert_eq!(o3.max_output_tokens, None);
    let o3_2 = r.agent_settings(&spec("openai/o3#2"));
    assert_eq!(
        o3_2.temperature, None,
        "the plain line applies to every sample"
    );
    assert_eq!(o3_2.max_output_tokens, Some(4000));
    assert_eq!(
        r.agent_settings(&spec("ollama/qwen2.5-coder:7b"))
            .temperature,
        Some(1.5)
    );
    assert_eq!(r.sampling(&spec("openai/o3")).seed, Some(5));
}

#[test]
fn isolation_and_project_root() {
    let r = parse(
        "# I\nversion: 1\n## Workspace\nisolation: overlay\n## Constraints\nproject_root: ../app\n",
    );
    assert_eq!(r.isolation(), Some(crate::workspace::Isolation::Overlay));
    assert_eq!(
        r.project_root(std::path::Path::new("/r/recipes/x.md")),
        Some(std::path::PathBuf::from("/r/recipes/../app"))
    );
    let d = parse(MINIMAL);
    assert_eq!(d.isolation(), None);
    assert_eq!(d.project_root(std::path::Path::new("x.md")), None);
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(
        d.isolation_for(dir.path()),
        crate::workspace::Isolation::Copy
    );
}

#[test]
fn missing_title_and_version_are_reported_together() {
    let p = problems("## Models\n- a/b\n");
    let kinds: Vec<ProblemKind> = p.iter().map(|p| p.kind).collect();
    assert_eq!(
        kinds,
        [ProblemKind::MissingTitle, ProblemKind::MissingVersion]
    );
    assert_eq!(p[1].line, 1, "reported at the first section");
}

#[test]
fn unreadable_files_are_one_problem() {
    let err = Recipe::load(std::path::Path::new("/no/such/recipe.md")).unwrap_err();
    assert!(err.is_unreadable());
    assert_eq!(err.problems.len(), 1);
    assert!(
        err.to_string()
            .starts_with("/no/such/recipe.md: cannot read the recipe")
    );
}

#[test]
fn the_defaults_file_sets_every_key() {
    // Read the defaults over a base where every setting differs: a key the file forgot would
    // keep the poisoned value and the two recipes would differ.
    let poison = "# P\nversion: 1\n## Models\n- x/y\n## System Prompt\nP\n\
        ## Tool Descriptions\n- bash: P\n## MCP Servers\n- p: p\n\
        ## Constraints\ntimeout: 3s\nbash_timeout: 3s\nmax_steps: 3\nmax_cost: 3\nproject_root: p\n\
        ## Context\ntask_mode: sequential\nmax_history_turns: 3\nstrategy: off\ncompact_threshold: 0.3\n\
        ## Model Parameters\ntemperature: 0.3\nmax_output_tokens: 3\nreasoning_effort: high\nseed: 3\n\
        ## Workspace\nisolation: overlay\nsetup: p\nkeep: true\n\
        ## Sandbox\nfilesystem: project_only\nnetwork: none\nallow_local_fetch: true\n\
        ## Review\nblind: true\ncheck: p\n## Tasks\n- p\n## Success Criteria\n- has_writes\n\
        ## Context Summarization Prompt\nP\n## Output Processing\n\
        - read_file: max_lines=3, max_bytes=3, truncation=tail\n\
        - bash: max_lines=3, max_bytes=3, truncation=tail\n\
        - search_code: max_lines=3, max_bytes=3, truncation=tail\n\
        - search_files: max_lines=3, max_bytes=3, truncation=tail\n\
        - list_directory: max_lines=3, max_bytes=3, truncation=tail\n\
        - web_fetch: max_lines=3, max_bytes=3, truncation=tail\n\
        ## Metadata\ndescription: p\ntags: p\nauthor: p\nname: p\nversion: p\n";
    let base = Recipe::parse_over(Recipe::default(), poison, "poison.md").unwrap();
    let over = Recipe::parse_over(base, DEFAULTS_TEXT, "defaults").unwrap();
    assert_eq!(over, Recipe::defaults().unwrap());
}

#[test]
fn with_a_config_unknown_providers_are_problems_at_their_line() {
    let config = crate::config::Config::builtin().unwrap();
    let text = "# C\nversion: 1\n## Models\n- openai/gpt-5\n- opnai/gpt-5\n\
                ## Model Parameters\n- nosuch/m: seed=1\n";
    assert!(Recipe::parse(text, "c.md").is_ok(), "syntax alone is fine");
    let err = Recipe::parse_for(text, "c.md", &config).unwrap_err();
    let lines: Vec<(usize, ProblemKind)> = err.problems.iter().map(|p| (p.line, p.kind)).collect();
    assert_eq!(
        lines,
        [(5, ProblemKind::BadModel), (7, ProblemKind::BadModel)]
    );
    assert!(
        err.problems[0].message.contains("did you mean `openai`"),
        "{err}"
    );
}

#[test]
fn only_a_trusted_recipe_loosens_the_sandbox_and_narrowing_is_always_allowed() {
    use crate::exec::{FsAccess, SandboxMode, SandboxSettings};
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().canonicalize().unwrap().join("repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::create_dir_all(repo.join("app")).unwrap();
    std::fs::create_dir_all(dir.path().join("secrets")).unwrap();
    let file = repo.join("bench.md");
    let user = SandboxSettings::default();
    let r = parse(
        "# L\nversion: 1\n## Constraints\nproject_root: ../secrets\n## Sandbox\n\
         filesystem: unrestricted\nnetwork: full\nallow_local_fetch: true\n",
    );
    let found: Vec<(LooseningKind, usize)> = r
        .loosenings(&user, &file)
        .iter()
        .map(|l| (l.kind, l.line))
        .collect();
    assert_eq!(
        found,
        [
            (LooseningKind::Filesystem, 6),
            (LooseningKind::Network, 7),
            (LooseningKind::LocalFetch, 8),
            (LooseningKind::ProjectRoot, 4),
        ]
    );
    let refused = r
        .check_loosening(&user, &file, false, LooseningKind::ALL)
        .unwrap_err();
    let text = refused.to_string();
    assert!(
        text.contains("bench.md:6: `filesystem: unrestricted`"),
        "{text}"
    );
    assert!(text.contains("versus trust"), "{text}");
    // The TUI applies the sandbox settings only.
    let tui = r
        .check_loosening(&user, &file, false, LooseningKind::SANDBOX)
        .unwrap_err();
    assert_eq!(tui.loosenings.len(), 2);
    assert!(
        r.check_loosening(&user, &file, true, LooseningKind::ALL)
            .is_ok()
    );
    // Untrusted, the settings never loosen even if a caller skips the check.
    let s = r.sandbox_settings(&user, false);
    assert_eq!((s.filesystem, s.network), (FsAccess::ProjectOnly, false));
    assert!(!r.allows_local_fetch(false));
    let s = r.sandbox_settings(&user, true);
    assert_eq!((s.filesystem, s.network), (FsAccess::Unrestricted, true));
    assert!(r.allows_local_fetch(true));
    // What the user's own settings already allow is no loosening.
    let open = SandboxSettings {
        filesystem: FsAccess::Unrestricted,
        network: true,
        ..SandboxSettings::default()
    };
    let kinds: Vec<LooseningKind> = r.loosenings(&open, &file).iter().map(|l| l.kind).collect();
    assert_eq!(
        kinds,
        [LooseningKind::LocalFetch, LooseningKind::ProjectRoot]
    );
    let off = SandboxSettings {
        sandbox: SandboxMode::Off,
        ..SandboxSettings::default()
    };
    assert_eq!(r.loosenings(&off, &file).len(), 2);
    // Narrowing, and a project_root inside the recipe's repository, are fine.
    let narrow = parse(
        "# N\nversion: 1\n## Constraints\nproject_root: app\n## Sandbox\n\
         filesystem: read_only\nnetwork: none\n",
    );
    assert!(narrow.loosenings(&user, &file).is_empty());
    let s = narrow.sandbox_settings(&open, false);
    assert_eq!((s.filesystem, s.network), (FsAccess::ReadOnly, false));
    // Lines are this file's own: a key left to the defaults has none.
    assert_eq!(r.key_lines.get("Sandbox", "filesystem"), Some(6));
    assert_eq!(r.key_lines.get("Workspace", "isolation"), None);
}

#[test]
fn setup_network_loosens_only_the_setup_commands_and_only_when_trusted() {
    use crate::exec::SandboxSettings;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("deps.md");
    let user = SandboxSettings::default();
    let r =
        parse("# D\nversion: 1\n## Workspace\nsetup: npm ci\n## Sandbox\nsetup_network: true\n");
    let found: Vec<(LooseningKind, usize)> = r
        .loosenings(&user, &file)
        .iter()
        .map(|l| (l.kind, l.line))
        .collect();
    assert_eq!(found, [(LooseningKind::SetupNetwork, 6)]);
    let refused = r
        .check_loosening(&user, &file, false, LooseningKind::ALL)
        .unwrap_err()
        .to_string();
    assert!(refused.contains("`setup_network: true`"), "{refused}");
    // The TUI runs no setup command: nothing to refuse there.
    assert!(
        r.check_loosening(&user, &file, false, LooseningKind::SANDBOX)
            .is_ok()
    );
    let untrusted = r.sandbox_settings(&user, false);
    assert!(!untrusted.setup_network && !untrusted.for_setup().network);
    let trusted = r.sandbox_settings(&user, true);
    assert!(trusted.setup_network && trusted.for_setup().network);
    assert!(!trusted.network, "model commands keep no network");
    // The user's own setting is no loosening, and a recipe cannot take it away.
    let mine = SandboxSettings {
        setup_network: true,
        ..SandboxSettings::default()
    };
    assert!(r.loosenings(&mine, &file).is_empty());
    let plain = parse("# P\nversion: 1\n## Tasks\n- go\n");
    assert!(plain.sandbox_settings(&mine, false).setup_network);
}

#[test]
fn the_seed_reaches_agent_settings_and_models_whose_api_takes_none_are_warned() {
    let r = parse(
        "# S\nversion: 1\n## Models\n- openai/gpt-5\n- anthropic/claude-sonnet-4-5\n\
         - gemini/gemini-2.5-pro\n- ollama/qwen\n\
         ## Model Parameters\nseed: 5\n- ollama/qwen: seed=9\n",
    );
    let spec = |s: &str| ModelSpec::parse(s).unwrap();
    assert_eq!(r.agent_settings(&spec("openai/gpt-5")).seed, Some(5));
    assert_eq!(r.agent_settings(&spec("ollama/qwen")).seed, Some(9));
    let providers = crate::config::providers::builtin_providers();
    let kind_of = |s: &ModelSpec| {
        providers
            .iter()
            .find(|p| p.name == s.provider)
            .map(|p| p.kind)
    };
    let warnings = r.seed_warnings(None, kind_of);
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(warnings[0].starts_with("openai/gpt-5: seed 5 is not sent"));
    assert!(warnings[1].starts_with("anthropic/claude-sonnet-4-5: seed 5 is not sent"));
    // Without a seed anywhere, nothing to say; the config's seed counts when the recipe has none.
    let plain = parse("# S\nversion: 1\n## Models\n- anthropic/claude-sonnet-4-5\n");
    assert!(plain.seed_warnings(None, kind_of).is_empty());
    assert_eq!(plain.seed_warnings(Some(3), kind_of).len(), 1);
    // On Vertex a Gemini model takes the seed and Claude does not.
    let vertex = parse(
        "# S\nversion: 1\n## Models\n- vertex/gemini-2.5-pro\n- vertex/claude-sonnet-4-5\n\
         ## Model Parameters\nseed: 5\n",
    );
    let warnings = vertex.seed_warnings(None, kind_of);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].starts_with("vertex/claude-sonnet-4-5: seed 5 is not sent"));
}

#[test]
fn skill_folders_stay_inside_the_recipes_folder() {
    let r = parse("# S\nversion: 1\n## Context\nskills: skills, more/skills\n");
    assert_eq!(r.context.skills, ["skills", "more/skills"]);
    assert_eq!(
        r.skill_dirs(std::path::Path::new("/r/x.recipe.md")),
        [
            std::path::PathBuf::from("/r/skills"),
            std::path::PathBuf::from("/r/more/skills")
        ]
    );
    assert_eq!(parse(&r.to_markdown()), r);
    for bad in ["../shared", "/etc/skills", "a/../../b"] {
        let found = problems(&format!("# S\nversion: 1\n## Context\nskills: {bad}\n"));
        assert!(
            found[0].to_string().contains("inside the recipe's folder"),
            "{bad}: {found:?}"
        );
    }
}

#[test]
fn web_search_is_named_in_tools_with_an_optional_backend_and_follows_the_network() {
    use crate::config::{Config, Env};
    let text = "# W\nversion: 1\n## Tools\n- read_file\n- web_search(brave): search rarely\n";
    let r = parse(text);
    let ToolSet::Only(entries) = &r.tools else {
        panic!("{:?}", r.tools)
    };
    assert_eq!(entries[1].search_backend.as_deref(), Some("brave"));
    assert_eq!(parse(&r.to_markdown()), r);
    let config = Config::builtin().unwrap();
    let keyed = Env::from_pairs([("BRAVE_API_KEY", "k")]);
    let setup = r.web_search(&config, &keyed).unwrap().unwrap();
    assert_eq!(setup.backend, crate::tools::SearchBackend::Brave);
    let registry = r.tool_registry_with(Some(setup));
    assert_eq!(registry.names(), ["read_file", "web_search"]);
    assert!(registry.guidance().contains("- search rarely"));
    let err = r.web_search(&config, &Env::empty()).unwrap_err();
    assert!(err.contains("set BRAVE_API_KEY"), "{err}");
    // Listed without a backend and none configured: said when the run starts.
    let plain = parse("# W\nversion: 1\n## Tools\n- web_search\n");
    let err = plain.web_search(&config, &keyed).unwrap_err();
    assert!(err.contains("no search backend is set"), "{err}");
    // Not listed, or no Tools section and nothing configured: no web search.
    assert_eq!(
        parse("# W\nversion: 1\n## Tools\n- read_file\n").web_search(&config, &keyed),
        Ok(None)
    );
    assert_eq!(parse(MINIMAL).web_search(&config, &keyed), Ok(None));
    // network: none takes it away, and listing it then is a conflict.
    let found =
        problems("# W\nversion: 1\n## Tools\n- web_search(exa)\n## Sandbox\nnetwork: none\n");
    assert!(
        found.iter().any(|p| p
            .message
            .contains("`web_search` is listed in ## Tools but ## Sandbox says `network: none`")),
        "{found:?}"
    );
    let found = problems("# W\nversion: 1\n## Tools\n- web_search(bing)\n");
    assert!(
        found
            .iter()
            .any(|p| p.message.contains("unknown search backend `bing`")),
        "{found:?}"
    );
}

/// Issue 24: without `## Tools`, web_search comes from the user's config, so
/// `tool_used: web_search` passes the check when the config turns it on, and is a clear
/// problem (naming what to add) when it does not; `web_search(BACKEND)` in `## Tools` offers
/// it whatever the config says.
#[test]
fn tool_used_web_search_without_tools_follows_the_config() {
    use crate::config::{Config, WebSearchConfig};
    let text = "# W\nversion: 1\n## Success Criteria\n- tool_used: web_search\n";
    let plain = Config::builtin().unwrap();
    let mut searching = plain.clone();
    searching.web_search = Some(WebSearchConfig {
        backend: "searxng".into(),
        url: Some("http://localhost:8888".into()),
        api_key_env: None,
        max_results: None,
        origin: crate::config::file::Origin::new("config.toml", Some(1)),
    });
    let r = Recipe::parse_for(text, "t.md", &searching).unwrap();
    assert!(
        r.active_tool_names_for(Some(&searching))
            .contains(&"web_search")
    );
    assert!(!r.active_tool_names().contains(&"web_search"));
    let found = Recipe::parse_for(text, "t.md", &plain)
        .unwrap_err()
        .problems;
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].kind, ProblemKind::Conflict);
    assert!(
        found[0].message.contains("web_search is not configured")
            && found[0].message.contains("add [web_search] to your config")
            && found[0].message.contains("web_search(BACKEND)"),
        "{found:?}"
    );
    // A backend named in ## Tools offers it with or without the config.
    let named = "# W\nversion: 1\n## Tools\n- web_search(brave)\n## Success Criteria\n\
                 - tool_used: web_search\n";
    assert!(Recipe::parse_for(named, "t.md", &plain).is_ok());
    // network: none takes it away, whatever the config says.
    let offline = format!("{text}## Sandbox\nnetwork: none\n");
    let found = Recipe::parse_for(&offline, "t.md", &searching)
        .unwrap_err()
        .problems;
    assert!(
        found[0]
            .message
            .contains("the models are not given `web_search`"),
        "{found:?}"
    );
    // Without a config the check cannot know, and leaves it to the run.
    assert!(Recipe::parse(text, "t.md").is_ok());
}

/// `versus run` starts from the user config's seed and editing tools, and a recipe's own
/// values win over them (one rule for every front end: `AgentSettings::configured`).
#[test]
fn a_recipes_seed_and_editing_tools_go_over_the_configs() {
    use crate::config::Config;
    use crate::tools::EditTools;
    let spec = |s: &str| ModelSpec::parse(s).unwrap();
    let mut config = Config::builtin().unwrap();
    config.seed = Some(7);
    config.edit_tools = EditTools::ApplyPatch;
    let plain = parse("# P\nversion: 1\n## Tasks\n- go\n");
    let settings = plain.agent_settings_over(&spec("openai/gpt-5"), &config);
    assert_eq!(
        (settings.seed, settings.edit_tools),
        (Some(7), EditTools::ApplyPatch)
    );
    let own = parse(
        "# O\nversion: 1\n## Constraints\nedit_tools: both\n\
         ## Model Parameters\nseed: 3\n## Tasks\n- go\n",
    );
    let settings = own.agent_settings_over(&spec("openai/gpt-5"), &config);
    assert_eq!(
        (settings.seed, settings.edit_tools),
        (Some(3), EditTools::Both)
    );
    // The front ends without a recipe start from the same defaults.
    let asked = crate::agent::AgentSettings::configured(&config);
    assert_eq!(
        (asked.seed, asked.edit_tools),
        (Some(7), EditTools::ApplyPatch)
    );
}
