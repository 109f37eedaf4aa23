//! Recipes: every section and key, every error case with its line, defaults layering, the
//! round trip, an Errata-style recipe, and `versus recipe check/new` through the binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use ::versus::config::ModelSpec;
use ::versus::model::Reasoning;
use ::versus::recipe::*;
use ::versus::workspace::Isolation;
use util::{Dir, versus};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/recipes")
        .join(name)
}

fn load(name: &str) -> Recipe {
    match Recipe::load(&fixture(name)) {
        Ok(r) => r,
        Err(e) => panic!("{name} has problems:\n{e}"),
    }
}

fn spec(s: &str) -> ModelSpec {
    ModelSpec::parse(s).unwrap()
}

/// Every problem of `text` as (line, kind).
fn problems(text: &str) -> Vec<(usize, ProblemKind)> {
    match Recipe::parse(text, "t.md") {
        Ok(_) => Vec::new(),
        Err(e) => e.problems.iter().map(|p| (p.line, p.kind)).collect(),
    }
}

/// The messages of `text`'s problems.
fn messages(text: &str) -> Vec<String> {
    Recipe::parse(text, "t.md")
        .unwrap_err()
        .problems
        .iter()
        .map(|p| p.to_string())
        .collect()
}

/// A valid header followed by `body`: line 3 is the first line of `body`.
fn with_header(body: &str) -> String {
    format!("# T\nversion: 1\n{body}")
}

// ---------------------------------------------------------------------------------------
// Every section and key

#[test]
fn every_section_and_key_is_read() {
    let r = load("all-sections.md");
    assert_eq!(r.name, "Every section");
    assert_eq!(
        r.model_specs(),
        [
            spec("openai/gpt-5"),
            spec("openai/gpt-5#2"),
            spec("anthropic/claude-sonnet-4-5"),
            spec("ollama/qwen2.5-coder:7b"),
            spec("demo/good"),
        ]
    );
    assert_eq!(r.models[3].line.0, 9);
    assert_eq!(
        r.system_prompt,
        "You are working on a small Rust project.\n\nRules:\n- Do not modify the tests.\n- Keep changes minimal."
    );

    let ToolSet::Only(tools) = &r.tools else {
        panic!("tools should be a list")
    };
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "read_file",
            "edit_file",
            "write_file",
            "apply_patch",
            "list_directory",
            "search_files",
            "search_code",
            "bash",
            "web_fetch"
        ]
    );
    assert_eq!(
        tools[0].guidance.as_deref(),
        Some("read_file: read before you edit")
    );
    let bash = &tools[7];
    assert_eq!(
        bash.bash_prefixes,
        Some(vec!["cargo test".to_string(), "cargo build".to_string()]),
        "Errata-style trailing `*` is the same prefix"
    );
    assert_eq!(
        bash.guidance.as_deref(),
        Some("bash: run the tests, nothing else")
    );
    assert_eq!(
        r.tool_descriptions["read_file"],
        "Read a file of the project, with line numbers."
    );
    assert_eq!(
        r.tool_descriptions["bash"],
        "Run a shell command in the workspace.\nOnly `cargo test` and `cargo build` are allowed."
    );

    assert_eq!(r.mcp_servers.len(), 2);
    assert_eq!(r.mcp_servers[0].name, "git");
    assert_eq!(
        r.mcp_servers[0].transport,
        McpTransport::Stdio {
            command_line: "uvx mcp-server-git --repository \"my repo\"".into(),
            argv: vec![
                "uvx".into(),
                "mcp-server-git".into(),
                "--repository".into(),
                "my repo".into()
            ],
        }
    );
    assert_eq!(
        r.mcp_servers[1].transport,
        McpTransport::Http {
            url: "https://mcp.example.com/mcp".into()
        }
    );

    assert_eq!(
        r.constraints,
        Constraints {
            timeout: Duration::from_secs(5400),
            bash_timeout: Duration::from_secs(90),
            bash_spill_max_mb: 64,
            max_steps: 0,
            max_cost: Some(2.5),
            project_root: Some("../project".into()),
            edit_tools: None,
            sub_agents: versus::recipe::SubAgentsMode::Default,
            sub_agents_max_depth: 2,
            sub_agents_per_turn: 4,
        }
    );
    assert_eq!(
        r.context,
        ContextSettings {
            task_mode: TaskMode::Sequential,
            max_history_turns: 0,
            strategy: CompactStrategy::Manual,
            compact_threshold: 1.0,
            skills: Vec::new(),
        }
    );
    assert_eq!(
        r.parameters.all,
        Sampling {
            temperature: Some(0.7),
            max_output_tokens: Some(8000),
            reasoning: Reasoning::Medium,
            seed: Some(42),
        }
    );
    assert_eq!(r.parameters.per_model.len(), 2);
    let gpt = &r.parameters.per_model[0];
    assert_eq!(gpt.spec, spec("openai/gpt-5"));
    assert_eq!(gpt.reasoning, Some(Reasoning::High));
    assert_eq!(
        gpt.temperature,
        Some(None),
        "`default` resets to the provider default"
    );
    assert_eq!(gpt.max_output_tokens, None, "not changed for this model");
    let qwen = &r.parameters.per_model[1];
    assert_eq!(qwen.spec, spec("ollama/qwen2.5-coder:7b"));
    assert_eq!(qwen.temperature, Some(Some(0.2)));
    assert_eq!(qwen.max_output_tokens, Some(Some(2048)));
    assert_eq!(qwen.seed, Some(Some(7)));

    assert_eq!(
        r.workspace,
        WorkspaceSettings {
            isolation: Some(Isolation::Copy),
            setup: Some("cargo fetch".into()),
            keep: true,
        }
    );
    assert_eq!(
        r.sandbox,
        Sandbox {
            filesystem: FilesystemAccess::ProjectOnly,
            network: NetworkAccess::Full,
            allow_local_fetch: true,
            setup_network: false,
        }
    );
    assert_eq!(
        r.review,
        Review {
            blind: true,
            check: Some("cargo test --quiet".into()),
        }
    );

    let tasks = r.tasks();
    assert_eq!(tasks.len(), 3);
    assert_eq!(tasks[0].name, "task-1");
    assert_eq!(tasks[0].prompt, "Fix the failing test in src/lib.rs.");
    assert_eq!(tasks[0].line.0, 77);
    assert_eq!(tasks[1].name, "task-2");
    assert_eq!(
        tasks[1].prompt,
        "Add a `--json` flag to the command line\nand document it in the README."
    );
    assert_eq!(tasks[2].name, "explain-the-design");
    assert_eq!(tasks[2].line.0, 81);

    assert_eq!(
        r.criteria(),
        [
            Criterion::NoErrors,
            Criterion::HasWrites,
            Criterion::FilesWritten(2),
            Criterion::Contains("tests pass".into()),
            Criterion::Run {
                command: "cargo test".into(),
                timeout: Duration::from_secs(60)
            },
            Criterion::Run {
                command: "cargo build --release".into(),
                timeout: Duration::from_secs(300)
            },
            Criterion::ToolUsed("bash".into()),
            Criterion::MaxCost(1.5),
            Criterion::MaxLatency(Duration::from_secs(600)),
            Criterion::MaxToolCalls(40),
            Criterion::MaxSteps(30),
            Criterion::Protected("tests/**".into()),
            Criterion::DiffMaxLines(200),
        ]
    );
    assert_eq!(
        r.summarization_prompt,
        "Summarize briefly: the task, the files changed, what is left."
    );

    assert_eq!(
        r.output_processing["bash"],
        OutputRule {
            max_lines: Some(500),
            max_bytes: Some(20 * 1024),
            truncation: Truncation::Tail,
        }
    );
    assert_eq!(
        r.output_processing["read_file"],
        OutputRule {
            max_lines: Some(1000),
            max_bytes: Some(50 * 1024),
            truncation: Truncation::Head,
        },
        "the ### form changes only the keys it names"
    );

    assert_eq!(
        r.metadata,
        Metadata {
            description: "A recipe that uses every section and key.".into(),
            tags: vec!["rust".into(), "tests".into(), "example".into()],
            author: "versus".into(),
            name: "Every section (display name)".into(),
            version: "1.2".into(),
        }
    );
}

#[test]
fn multi_line_tasks_keep_code_blocks_verbatim() {
    let r = load("all-sections.md");
    let prompt = &r.tasks()[2].prompt;
    assert_eq!(
        prompt,
        "Explain the design of the parser, then show the entry point:\n\n```rust\n\
         ## this is code, not a section\n### and this is not a task\nfn main() {}\n```\n\n\
         Stop after the explanation."
    );
    // The `##` inside the block did not end the Tasks section: the criteria are still read.
    assert_eq!(r.criteria().len(), 13);
}

#[test]
fn runner_helpers_reflect_the_recipe() {
    let r = load("all-sections.md");
    let settings = r.agent_settings(&spec("openai/gpt-5#2"));
    assert_eq!(settings.max_steps, u32::MAX, "0 = unlimited");
    assert_eq!(settings.timeout, Duration::from_secs(5400));
    assert_eq!(settings.max_cost, Some(2.5));
    assert_eq!(settings.reasoning, Reasoning::High);
    assert_eq!(settings.temperature, None);
    assert_eq!(settings.max_output_tokens, Some(8000));
    assert_eq!(settings.instructions.as_ref(), Some(&r.system_prompt));
    let qwen = r.agent_settings(&spec("ollama/qwen2.5-coder:7b"));
    assert_eq!(qwen.temperature, Some(0.2));
    assert_eq!(qwen.reasoning, Reasoning::Medium);

    let registry = r.tool_registry();
    assert_eq!(registry.names().len(), 9);
    let specs = registry.specs();
    let bash = specs.iter().find(|s| s.name == "bash").unwrap();
    assert!(
        bash.description
            .starts_with("Run a shell command in the workspace.")
    );
    assert_eq!(bash.guidance, "bash: run the tests, nothing else");

    let limits = r.tool_limits();
    assert_eq!(
        limits.bash_allowlist,
        Some(vec!["cargo test".to_string(), "cargo build".to_string()])
    );
    assert_eq!(limits.bash_default_timeout, Duration::from_secs(90));
    assert!(limits.allow_local_fetch);
    assert_eq!(limits.read_max_lines, 1000);
    let tail = r
        .output_filter("bash")
        .expect("bash cannot keep only the tail itself");
    let long: String = (1..=600).map(|i| format!("line {i}\n")).collect();
    let cut = tail.apply(&long);
    assert!(cut.starts_with("[... 100 earlier lines not shown ...]\nline 101\n"));
    assert!(cut.ends_with("line 600"));

    assert_eq!(r.isolation(), Some(Isolation::Copy));
    assert_eq!(r.task_mode(), TaskMode::Sequential);
    assert_eq!(
        r.project_root(&fixture("all-sections.md")),
        Some(fixture("../project"))
    );
}

// ---------------------------------------------------------------------------------------
// Defaults, layering, round trip

#[test]
fn sections_left_out_keep_their_defaults() {
    let r = load("minimal.md");
    let d = Recipe::defaults().unwrap();
    assert_eq!(r.name, "Minimal");
    assert_eq!(
        r.tools,
        ToolSet::All,
        "a missing Tools section means all tools"
    );
    assert_eq!(r.tool_registry().names().len(), 9);
    assert_eq!(r.constraints, d.constraints);
    assert_eq!(r.context, d.context);
    assert_eq!(r.criteria(), d.criteria());
    assert_eq!(r.output_processing, d.output_processing);
    assert_eq!(r.summarization_prompt, d.summarization_prompt);
    assert_eq!(r.tasks().len(), 1);
    assert!(r.models.is_empty());
}

#[test]
fn keys_left_out_of_a_section_keep_their_defaults() {
    let r = Recipe::parse(&with_header("## Constraints\nmax_steps: 9\n"), "t.md").unwrap();
    let d = Recipe::defaults().unwrap();
    assert_eq!(r.constraints.max_steps, 9);
    assert_eq!(r.constraints.timeout, d.constraints.timeout);
    assert_eq!(r.constraints.bash_timeout, d.constraints.bash_timeout);
}

#[test]
fn an_empty_tools_section_means_no_tools() {
    let r = load("no-tools.md");
    assert_eq!(r.tools, ToolSet::Only(vec![]));
    assert!(r.tool_registry().names().is_empty());
    assert!(r.active_tool_names().is_empty());
    assert_eq!(r.tasks()[0].name, "review");
    assert!(r.tasks()[0].prompt.contains("```python\ndef mean(xs):"));
}

#[test]
fn parse_write_parse_gives_the_same_recipe() {
    let mut checked = 0;
    for entry in std::fs::read_dir(fixture("")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if name == "broken.md" {
            continue;
        }
        let first = load(&name);
        let text = first.to_markdown();
        let second = Recipe::parse(&text, "written.md")
            .unwrap_or_else(|e| panic!("{name} written back has problems:\n{e}\n---\n{text}"));
        assert_eq!(second, first, "{name} changed on the round trip:\n{text}");
        assert_eq!(second.to_markdown(), text, "{name}: writing is stable");
        checked += 1;
    }
    assert_eq!(checked, 4, "every fixture but broken.md");
    let d = Recipe::defaults().unwrap();
    assert_eq!(Recipe::parse(&d.to_markdown(), "d.md").unwrap(), d);
    let t = Recipe::parse(TEMPLATE_TEXT, "template.md").unwrap();
    assert_eq!(Recipe::parse(&t.to_markdown(), "t.md").unwrap(), t);
}

#[test]
fn written_tasks_fall_back_to_headings_when_bullets_would_not_read_back() {
    let text = with_header(
        "## Tasks\n- first\n\n### named\nbody\n\n### task-3\nsingle line but after a heading\n",
    );
    let r = Recipe::parse(&text, "t.md").unwrap();
    let written = r.to_markdown();
    assert!(written.contains("- first\n"));
    assert!(written.contains("### named\nbody\n"));
    assert!(written.contains("### task-3\nsingle line but after a heading\n"));
    assert_eq!(Recipe::parse(&written, "w.md").unwrap(), r);
}

// ---------------------------------------------------------------------------------------
// Errata compatibility

#[test]
fn an_errata_style_recipe_loads_unchanged() {
    let r = load("errata-style.md");
    assert_eq!(r.name, "Go Bug Hunt");
    assert_eq!(r.models.len(), 3);
    assert_eq!(
        r.models[2].spec,
        spec("openrouter/meta-llama/llama-3.1-8b-instruct")
    );
    assert!(
        r.system_prompt
            .starts_with("You are an experienced Go developer")
    );
    assert_eq!(
        r.active_tool_names(),
        [
            "read_file",
            "edit_file",
            "list_directory",
            "search_files",
            "search_code",
            "bash"
        ]
    );
    assert_eq!(
        r.tool_limits().bash_allowlist,
        Some(vec![
            "go test".to_string(),
            "go vet".to_string(),
            "go build".to_string()
        ])
    );
    let reg = r.tool_registry();
    let list_dir = reg
        .specs()
        .into_iter()
        .find(|s| s.name == "list_directory")
        .unwrap();
    assert_eq!(
        list_dir.guidance,
        "Use list_directory first to see how the project is laid out."
    );
    assert!(r.tool_descriptions["search_code"].contains("\nPrefer it over reading"));
    assert_eq!(r.constraints.timeout, Duration::from_secs(300));
    assert_eq!(r.constraints.bash_timeout, Duration::from_secs(60));
    assert_eq!(r.constraints.max_steps, 40);
    assert_eq!(r.context.compact_threshold, 0.8);
    assert_eq!(r.sandbox.network, NetworkAccess::None);
    assert_eq!(r.tasks().len(), 2);
    assert!(r.tasks()[1].prompt.contains("go test -race"));
    assert_eq!(
        r.criteria()[4],
        Criterion::Run {
            command: "cd ratelimit && go test -race ./...".into(),
            timeout: Duration::from_secs(120)
        }
    );
    assert_eq!(r.criteria()[5], Criterion::MaxCost(0.5));
    assert_eq!(r.metadata.tags, ["go", "debugging", "concurrency"]);
    let bash_rule = r.output_processing["bash"];
    assert_eq!(bash_rule.max_lines, Some(300));
    assert_eq!(bash_rule.truncation, Truncation::HeadTail);
    assert_eq!(r.tool_limits().bash_output_max_lines, 300);
}

// ---------------------------------------------------------------------------------------
// Error cases, each at its line

#[test]
fn header_errors() {
    assert_eq!(
        problems("version: 1\n## Tasks\n- x\n"),
        [(1, ProblemKind::MissingTitle)]
    );
    assert_eq!(
        problems("# T\n\n## Tasks\n- x\n"),
        [(3, ProblemKind::MissingVersion)]
    );
    assert_eq!(
        problems("# T\nversion: 2\n"),
        [(2, ProblemKind::BadVersion)]
    );
    assert_eq!(
        problems("# T\nversion: one\n"),
        [(2, ProblemKind::BadVersion)]
    );
    assert_eq!(
        problems("# T\nversion: 1\nversion: 1\n"),
        [(3, ProblemKind::DuplicateKey)]
    );
    assert_eq!(
        problems("# T\nversion: 1\nA paragraph.\n# Second title\n"),
        [(3, ProblemKind::Syntax), (4, ProblemKind::Syntax)]
    );
    assert_eq!(
        problems("#\nversion: 1\n"),
        [(1, ProblemKind::MissingTitle)]
    );
    let m = messages("# T\nversion: 3\n");
    assert!(m[0].contains("`version: 1`"), "{m:?}");
}

#[test]
fn section_errors() {
    assert_eq!(
        problems(&with_header("## Sub-Agent\nmodel: x\n")),
        [(3, ProblemKind::UnknownSection)]
    );
    let m = messages(&with_header("## Succes Criteria\n- no_errors\n"));
    assert!(m[0].contains("did you mean `Success Criteria`"), "{m:?}");
    assert!(
        m[0].contains("`Output Processing`"),
        "lists the sections: {m:?}"
    );
    assert_eq!(
        problems(&with_header("## Tasks\n- a\n## tasks\n- b\n")),
        [(5, ProblemKind::DuplicateSection)]
    );
    // Case-insensitive names: not an error.
    assert!(problems(&with_header("## SUCCESS criteria\n- has_writes\n")).is_empty());
    assert_eq!(
        problems(&with_header(
            "## Tasks\n### a\n```\n- never closed\n## Metadata\n"
        )),
        [(5, ProblemKind::Unclosed)]
    );
    assert_eq!(
        problems(&with_header("<!-- open\n## Tasks\n- a\n")),
        [(3, ProblemKind::Unclosed)]
    );
    assert_eq!(
        problems(&with_header("## Models\n### sub\n- a/b\n")),
        [(4, ProblemKind::Syntax)]
    );
    assert_eq!(
        problems(&with_header("## Constraints\n```\ntimeout: 5m\n```\n")),
        [(4, ProblemKind::Syntax)]
    );
}

#[test]
fn key_errors_name_the_accepted_values() {
    let cases: &[(&str, ProblemKind, &str)] = &[
        (
            "## Constraints\ncolour: blue\n",
            ProblemKind::UnknownKey,
            "keys: `timeout`",
        ),
        (
            "## Constraints\ntimeot: 5m\n",
            ProblemKind::UnknownKey,
            "did you mean `timeout`",
        ),
        (
            "## Constraints\ntimeout 5m\n",
            ProblemKind::Syntax,
            "not a `key: value` line",
        ),
        (
            "## Constraints\ntimeout:\n",
            ProblemKind::MissingValue,
            "no value given",
        ),
        (
            "## Constraints\ntimeout: soon\n",
            ProblemKind::BadValue,
            "plain seconds",
        ),
        (
            "## Constraints\ntimeout: 0\n",
            ProblemKind::OutOfRange,
            "at least 1s",
        ),
        (
            "## Constraints\nbash_timeout: 5x\n",
            ProblemKind::BadValue,
            "duration",
        ),
        (
            "## Constraints\nmax_steps: -1\n",
            ProblemKind::OutOfRange,
            "at least 0",
        ),
        (
            "## Constraints\nmax_steps: many\n",
            ProblemKind::BadValue,
            "whole number",
        ),
        (
            "## Constraints\nmax_cost: 0\n",
            ProblemKind::OutOfRange,
            "`none` for no limit",
        ),
        (
            "## Constraints\nmax_cost: lots\n",
            ProblemKind::BadValue,
            "US dollars",
        ),
        (
            "## Constraints\ntimeout: 5m\ntimeout: 6m\n",
            ProblemKind::DuplicateKey,
            "line 4",
        ),
        (
            "## Context\ntask_mode: parallel\n",
            ProblemKind::BadValue,
            "`independent` or `sequential`",
        ),
        (
            "## Context\nstrategy: sometimes\n",
            ProblemKind::BadValue,
            "`auto_compact`, `manual` or `off`",
        ),
        (
            "## Context\ncompact_threshold: 0\n",
            ProblemKind::OutOfRange,
            "(0, 1]",
        ),
        (
            "## Context\ncompact_threshold: 1.01\n",
            ProblemKind::OutOfRange,
            "(0, 1]",
        ),
        (
            "## Context\ncompact_threshold: high\n",
            ProblemKind::BadValue,
            "(0, 1]",
        ),
        (
            "## Context\nmax_history_turns: 2.5\n",
            ProblemKind::BadValue,
            "whole number",
        ),
        (
            "## Model Parameters\ntemperature: 2.5\n",
            ProblemKind::OutOfRange,
            "[0, 2]",
        ),
        (
            "## Model Parameters\ntemperature: -0.1\n",
            ProblemKind::OutOfRange,
            "[0, 2]",
        ),
        (
            "## Model Parameters\ntemperature: warm\n",
            ProblemKind::BadValue,
            "[0, 2]",
        ),
        (
            "## Model Parameters\nmax_output_tokens: 0\n",
            ProblemKind::OutOfRange,
            "at least 1",
        ),
        (
            "## Model Parameters\nreasoning_effort: max\n",
            ProblemKind::BadValue,
            "`low`, `medium` or `high`",
        ),
        (
            "## Model Parameters\nseed: -4\n",
            ProblemKind::OutOfRange,
            "at least 0",
        ),
        (
            "## Model Parameters\n- openai/gpt-5: temperature=9\n",
            ProblemKind::OutOfRange,
            "[0, 2]",
        ),
        (
            "## Model Parameters\n- openai/gpt-5: top_k=9\n",
            ProblemKind::UnknownKey,
            "`reasoning_effort`",
        ),
        (
            "## Model Parameters\n- openai/gpt-5: seed=1, seed=2\n",
            ProblemKind::DuplicateKey,
            "twice",
        ),
        (
            "## Model Parameters\n- gpt5: seed=1\n",
            ProblemKind::BadModel,
            "PROVIDER/MODEL",
        ),
        (
            "## Model Parameters\n- openai/gpt-5 temperature=1\n",
            ProblemKind::Syntax,
            "key=value",
        ),
        (
            "## Workspace\nisolation: docker\n",
            ProblemKind::BadValue,
            "`auto`, `worktree`, `copy` or `in_memory`",
        ),
        (
            "## Workspace\nkeep: yes\n",
            ProblemKind::BadValue,
            "`true` or `false`",
        ),
        (
            "## Workspace\nsetup:\n",
            ProblemKind::MissingValue,
            "`none`",
        ),
        (
            "## Sandbox\nfilesystem: jail\n",
            ProblemKind::BadValue,
            "`read_only`",
        ),
        (
            "## Sandbox\nnetwork: partial\n",
            ProblemKind::BadValue,
            "`full`, `fetch_only` or `none`",
        ),
        (
            "## Sandbox\nallow_local_fetch: 1\n",
            ProblemKind::BadValue,
            "`true` or `false`",
        ),
        (
            "## Review\nblind: maybe\n",
            ProblemKind::BadValue,
            "`true` or `false`",
        ),
        (
            "## Review\nreviewer: me\n",
            ProblemKind::UnknownKey,
            "`check`",
        ),
        (
            "## Metadata\nextends: base.md\n",
            ProblemKind::UnknownKey,
            "`description`",
        ),
        (
            "## Output Processing\n- bash: max_lines=0\n",
            ProblemKind::OutOfRange,
            "at least 1",
        ),
        (
            "## Output Processing\n- bash: max_bytes=huge\n",
            ProblemKind::BadValue,
            "KB = 1024",
        ),
        (
            "## Output Processing\n- bash: truncation=middle\n",
            ProblemKind::BadValue,
            "`head`, `tail` or `head_tail`",
        ),
        (
            "## Output Processing\n- bash: max_tokens=100\n",
            ProblemKind::UnknownKey,
            "`max_lines`",
        ),
        (
            "## Output Processing\n- bash max_lines=3\n",
            ProblemKind::Syntax,
            "not a rule",
        ),
        (
            "## Output Processing\n- telnet: max_lines=3\n",
            ProblemKind::UnknownTool,
            "tools: `read_file`",
        ),
        (
            "## Output Processing\n### bash\nlimit: 3\n",
            ProblemKind::UnknownKey,
            "`truncation`",
        ),
    ];
    for (body, kind, needle) in cases {
        let text = with_header(body);
        let err = Recipe::parse(&text, "t.md").unwrap_err();
        let last_line = 2 + body.lines().count();
        let p = &err.problems;
        assert_eq!(p.len(), 1, "{body:?}: {err}");
        assert_eq!(p[0].kind, *kind, "{body:?}: {err}");
        assert_eq!(p[0].line, last_line, "{body:?}: {err}");
        assert!(
            p[0].message.contains(needle),
            "{body:?}: `{needle}` not in {err}"
        );
    }
}

#[test]
fn list_errors() {
    let cases: &[(&str, ProblemKind, &str)] = &[
        (
            "## Models\n- gpt-5\n",
            ProblemKind::BadModel,
            "names no provider",
        ),
        ("## Models\n- openai/\n", ProblemKind::BadModel, "no model"),
        (
            "## Models\n- a/b\n- a/b\n",
            ProblemKind::DuplicateEntry,
            "`a/b#2`",
        ),
        (
            "## Tools\n- teleport\n",
            ProblemKind::UnknownTool,
            "tools: `read_file`, `write_file`",
        ),
        (
            "## Tools\n- read_fille\n",
            ProblemKind::UnknownTool,
            "did you mean `read_file`",
        ),
        (
            "## Tools\n- bash\n- bash(ls)\n",
            ProblemKind::DuplicateEntry,
            "line 4",
        ),
        (
            "## Tools\n- bash()\n",
            ProblemKind::MissingValue,
            "list prefixes",
        ),
        (
            "## Tools\n- bash(go *test)\n",
            ProblemKind::BadValue,
            "not globs",
        ),
        ("## Tools\n- bash(ls\n", ProblemKind::Syntax, "never closed"),
        (
            "## Tools\n- read_file(x)\n",
            ProblemKind::Syntax,
            "only bash",
        ),
        (
            "## Tools\n- read_file:\n",
            ProblemKind::MissingValue,
            "guidance",
        ),
        (
            "## Tools\n- read_file - fast\n",
            ProblemKind::Syntax,
            "not a tool line",
        ),
        (
            "## Tool Descriptions\n- teleport: beams you up\n",
            ProblemKind::UnknownTool,
            "tools:",
        ),
        (
            "## Tool Descriptions\n- bash:\n",
            ProblemKind::MissingValue,
            "no description",
        ),
        (
            "## Tool Descriptions\njust words\n",
            ProblemKind::Syntax,
            "`tool: description`",
        ),
        (
            "## Tool Descriptions\n- bash: a\n\n### bash\nb\n",
            ProblemKind::DuplicateEntry,
            "line 4",
        ),
        (
            "## MCP Servers\n- npx server\n",
            ProblemKind::Syntax,
            "names no server",
        ),
        (
            "## MCP Servers\n- my server: npx x\n",
            ProblemKind::BadValue,
            "not a server name",
        ),
        (
            "## MCP Servers\n- s:\n",
            ProblemKind::MissingValue,
            "no command or URL",
        ),
        (
            "## MCP Servers\n- s: npx 'x\n",
            ProblemKind::BadValue,
            "never closed",
        ),
        (
            "## MCP Servers\n- s: https://\n",
            ProblemKind::BadValue,
            "not a URL",
        ),
        (
            "## MCP Servers\n- s: npx a\n- s: npx b\n",
            ProblemKind::DuplicateEntry,
            "line 4",
        ),
        (
            "## Success Criteria\n- passes\n",
            ProblemKind::UnknownCriterion,
            "criteria: `no_errors`",
        ),
        (
            "## Success Criteria\n- no_error\n",
            ProblemKind::UnknownCriterion,
            "did you mean `no_errors`",
        ),
        (
            "## Success Criteria\n- contains\n",
            ProblemKind::MissingValue,
            "contains: TEXT",
        ),
        (
            "## Success Criteria\n- files_written >= lots\n",
            ProblemKind::BadValue,
            "whole number",
        ),
        (
            "## Success Criteria\n- max_cost: -1\n",
            ProblemKind::OutOfRange,
            "negative",
        ),
        (
            "## Success Criteria\n- run(timeout=forever): make\n",
            ProblemKind::BadValue,
            "duration",
        ),
        (
            "## Success Criteria\n- tool_used: teleport\n",
            ProblemKind::UnknownTool,
            "tools:",
        ),
        (
            "## Success Criteria\n- protected: src/[\n",
            ProblemKind::BadValue,
            "glob",
        ),
        (
            "## Success Criteria\n- has_writes\n- has_writes\n",
            ProblemKind::DuplicateEntry,
            "line 4",
        ),
        ("## Tasks\n-\n", ProblemKind::EmptyTask, "empty task"),
        ("## Tasks\n### fix\n\n", ProblemKind::EmptyTask, "no text"),
        ("## Tasks\nFix it.\n", ProblemKind::Syntax, "`- `"),
        (
            "## Tasks\n- a\n```\ncode\n```\n",
            ProblemKind::Syntax,
            "### name",
        ),
        (
            "## Tasks\n### a\nx\n### a\ny\n",
            ProblemKind::DuplicateEntry,
            "unique",
        ),
    ];
    for (body, kind, needle) in cases {
        let text = with_header(body);
        let err = Recipe::parse(&text, "t.md").unwrap_err();
        let p = &err.problems;
        assert_eq!(p.len(), 1, "{body:?}: {err}");
        assert_eq!(p[0].kind, *kind, "{body:?}: {err}");
        assert!(
            p[0].message.contains(needle),
            "{body:?}: `{needle}` not in {err}"
        );
        // Each case's problem is on its last non-blank line, or on the heading of an empty
        // task, the opening fence of a code block, or the second `### a`.
        let expected = match *body {
            "## Tasks\n### fix\n\n" => 4,
            "## Tasks\n- a\n```\ncode\n```\n" => 5,
            "## Tasks\n### a\nx\n### a\ny\n" => 6,
            "## Tool Descriptions\n- bash: a\n\n### bash\nb\n" => 6,
            _ => 2 + body.trim_end().lines().count(),
        };
        assert_eq!(p[0].line, expected, "{body:?}: {err}");
    }
}

#[test]
fn settings_that_contradict_each_other_are_errors() {
    assert_eq!(
        problems(&with_header(
            "## Tools\n- read_file\n## Success Criteria\n- tool_used: bash\n"
        )),
        [(6, ProblemKind::Conflict)]
    );
    assert_eq!(
        problems(&with_header(
            "## Tools\n- read_file\n- web_fetch\n## Sandbox\nnetwork: none\n"
        )),
        [(5, ProblemKind::Conflict)]
    );
    assert_eq!(
        problems(&with_header(
            "## Tools\n- write_file\n## Sandbox\nfilesystem: read_only\n"
        )),
        [(4, ProblemKind::Conflict)]
    );
    assert_eq!(
        problems(&with_header(
            "## Tools\n- read_file\n## Tool Descriptions\n- bash: runs things\n"
        )),
        [(6, ProblemKind::Conflict)]
    );
    // Without a Tools section the Sandbox just removes the tool: nothing to contradict.
    assert!(problems(&with_header("## Sandbox\nnetwork: none\n")).is_empty());
}

#[test]
fn all_problems_are_reported_at_once_in_line_order() {
    let err = Recipe::load(&fixture("broken.md")).unwrap_err();
    let got: Vec<(usize, ProblemKind)> = err.problems.iter().map(|p| (p.line, p.kind)).collect();
    use ProblemKind::*;
    assert_eq!(
        got,
        [
            (3, Syntax),
            (5, UnknownSection),
            (9, BadModel),
            (11, DuplicateEntry),
            (15, UnknownTool),
            (16, Syntax),
            (19, BadValue),
            (20, OutOfRange),
            (21, BadValue),
            (22, UnknownKey),
            (23, DuplicateKey),
            (26, BadValue),
            (27, OutOfRange),
            (30, OutOfRange),
            (31, UnknownKey),
            (34, EmptyTask),
            (35, Syntax),
            (37, MissingValue),
            (40, EmptyTask),
            (43, UnknownCriterion),
            (44, Conflict),
            (45, OutOfRange),
            (47, DuplicateSection),
        ]
    );
    let file = fixture("broken.md").display().to_string();
    assert!(
        err.problems
            .iter()
            .all(|p| p.to_string().starts_with(&format!("{file}:{}: ", p.line)))
    );
}

// ---------------------------------------------------------------------------------------
// The binary

/// `versus recipe ARGS` in `dir`, with an empty config so the user's own config plays no part.
fn recipe_cmd(dir: &Dir, args: &[&str]) -> Output {
    let config = dir.write("empty-config.toml", "");
    versus()
        .current_dir(dir.path())
        .arg("--config")
        .arg(config)
        .arg("recipe")
        .args(args)
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn check_prints_a_summary_for_a_good_recipe() {
    let dir = Dir::new();
    let path = fixture("all-sections.md");
    let out = recipe_cmd(&dir, &["check", path.to_str().unwrap()]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.starts_with(&format!("{}: ok\n", path.display())),
        "{stdout}"
    );
    assert!(stdout.contains("name: Every section\n"));
    assert!(stdout.contains("models: 5 (openai/gpt-5, openai/gpt-5#2,"));
    assert!(stdout.contains("tasks: 3 (task-1, task-2, explain-the-design)"));
    assert!(stdout.contains("criteria: 13 (no_errors; has_writes;"));
    assert!(stdout.contains("bash(cargo test, cargo build)"));
    assert!(stdout.contains("mcp servers: "));
    assert!(stdout.contains("(started for every model of a run once the recipe is trusted)"));
}

#[test]
fn check_lists_every_problem_and_exits_1() {
    let dir = Dir::new();
    let path = fixture("broken.md");
    let out = recipe_cmd(&dir, &["check", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 23, "{stdout}");
    let file = path.display().to_string();
    assert_eq!(
        lines[0],
        format!(
            "{file}:3: `Some stray text` cannot go before the first `##` section: only the \
             `# Title` and `version: 1` go there (a description goes in ## Metadata as \
             `description:`)"
        )
    );
    assert!(lines[6].starts_with(&format!("{file}:19: `timeout` in ## Constraints: `soon`")));
    assert!(lines[22].starts_with(&format!("{file}:47: `## Tasks` already appears at line 33")));
    assert!(text(&out.stderr).contains("23 problems"));
}

#[test]
fn check_reports_unknown_providers_at_their_line() {
    let dir = Dir::new();
    dir.write(
        "r.md",
        "# R\nversion: 1\n\n## Models\n- demo/good\n- opnai/gpt-5\n",
    );
    let out = recipe_cmd(&dir, &["check", "r.md"]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    assert!(
        stdout.starts_with(
            "r.md:6: unknown provider `opnai` in `opnai/gpt-5` (did you mean `openai`?)"
        ),
        "{stdout}"
    );
}

#[test]
fn check_of_a_missing_file_is_a_usage_error() {
    let dir = Dir::new();
    let out = recipe_cmd(&dir, &["check", "nope.md"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("nope.md: cannot read the recipe"));
    let out = recipe_cmd(&dir, &["check"]);
    assert_eq!(out.status.code(), Some(2), "missing FILE argument");
}

#[test]
fn new_writes_a_template_that_passes_check_and_never_overwrites() {
    let dir = Dir::new();
    let out = recipe_cmd(&dir, &["new"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("versus recipe check recipe.md"));
    let written = dir.read("recipe.md");
    assert_eq!(written, TEMPLATE_TEXT.as_bytes());
    assert!(text(&written).contains("<!--"), "the template is commented");

    let check = recipe_cmd(&dir, &["check", "recipe.md"]);
    assert_eq!(check.status.code(), Some(0), "{}", text(&check.stdout));

    dir.write("recipe.md", "# Mine\nversion: 1\n");
    let again = recipe_cmd(&dir, &["new"]);
    assert_eq!(again.status.code(), Some(2));
    assert!(text(&again.stderr).contains("already exists"));
    assert_eq!(
        dir.read("recipe.md"),
        b"# Mine\nversion: 1\n",
        "left untouched"
    );

    let named = recipe_cmd(&dir, &["new", "fix-tests.md"]);
    assert_eq!(named.status.code(), Some(0));
    assert!(dir.exists("fix-tests.md"));
}
