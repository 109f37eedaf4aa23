//! Sub-agents end to end through the binary (`versus ask` with scripted demo models whose
//! scripts also say what each sub-agent does: `"agent": "NAME"` lines, docs/extensions.md):
//! a coder sub-agent's edit is the parent's proposal with provenance (in the change set, the
//! session log, `versus sessions show` and `--pick`), its calls nested in the progress and the
//! transcript; an explorer is never given a write tool; the depth and per-turn limits answer
//! with a clear message; the tool is absent unless the config turns it on, and hashed by the
//! ledger when it does; the sub-agent's tokens add up into the parent's.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};
use util::{git, versus};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A git project with a greeting and an ignored `scripts/` folder, a user config folder.
struct World {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    config: PathBuf,
    temp: PathBuf,
}

fn world(config: Option<&str>) -> World {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let root = base.join("project");
    let config_dir = base.join("config");
    let temp = base.join("tmp");
    std::fs::create_dir_all(&temp).unwrap();
    std::fs::create_dir_all(config_dir.join("versus")).unwrap();
    write(&root.join("greeting.txt"), "hello\n");
    write(&root.join(".gitignore"), "scripts/\n");
    git(&root, &["init", "-q"]);
    git(&root, &["add", "."]);
    git(&root, &["commit", "-qm", "init"]);
    if let Some(toml) = config {
        write(&config_dir.join("versus/config.toml"), toml);
    }
    World {
        _tmp: tmp,
        root,
        config: config_dir,
        temp,
    }
}

impl World {
    fn versus(&self) -> Command {
        let mut c = versus();
        c.arg("-C")
            .arg(&self.root)
            .env("XDG_CONFIG_HOME", &self.config)
            .env("XDG_STATE_HOME", self.config.with_file_name("state"))
            .env("TMPDIR", &self.temp);
        c
    }

    /// Writes a demo script of `steps` and returns its model spec.
    fn script(&self, name: &str, steps: &[Value]) -> String {
        let text: String = steps.iter().map(|s| format!("{s}\n")).collect();
        write(&self.root.join("scripts").join(name), &text);
        format!("demo/scripts/{name}")
    }

    fn ask(&self, model: &str, extra: &[&str]) -> Output {
        self.versus()
            .args(["ask", "do it", "-m", model])
            .args(extra)
            .output()
            .unwrap()
    }

    /// `versus sessions show --json` of the latest session.
    fn session(&self) -> Value {
        let out = self
            .versus()
            .args(["sessions", "show", "--json"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
        serde_json::from_slice(&out.stdout).unwrap()
    }

    /// Every record of the latest session's log.
    fn records(&self) -> Vec<Value> {
        let sessions = self.root.join(".versus/sessions");
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(&sessions)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.join("events.jsonl").is_file())
            .collect();
        dirs.sort();
        let log = std::fs::read_to_string(dirs.last().unwrap().join("events.jsonl")).unwrap();
        log.lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

fn text(out: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn spawn(task: &str, role: &str) -> Value {
    json!({"name": "spawn_agent", "args": {"task": task, "role": role}})
}

/// The tool calls `sessions show --json` lists for the first model of the first turn.
fn calls_of(doc: &Value) -> Vec<Value> {
    doc["turns"][0]["models"][0]["tools"]
        .as_array()
        .unwrap()
        .clone()
}

const ON: &str = "[sub_agents]\n";

#[test]
fn a_coder_sub_agents_edit_is_the_parents_proposal_with_provenance_and_its_tokens_add_up() {
    let w = world(Some(ON));
    let model = w.script(
        "parent.jsonl",
        &[
            json!({"say": "Delegating.", "tools": [spawn("fix: make the greeting polite", "coder")]}),
            json!({"agent": "fix", "tools": [{"name": "read_file", "args": {"path": "greeting.txt"}}]}),
            json!({"agent": "fix", "tools": [{"name": "edit_file", "args": {
                "path": "greeting.txt", "old_string": "hello", "new_string": "good morning"}}]}),
            json!({"agent": "fix", "say": "SUB-ANSWER-7781: the greeting is polite now."}),
            json!({"say": "My sub-agent made the greeting polite."}),
        ],
    );
    let out = w.ask(&model, &["--json", "--pick", &model]);
    assert!(out.status.success(), "{}", text(&out));
    // Applied: the sub-agent's edit was the parent's proposal, picked like any other.
    assert_eq!(
        std::fs::read_to_string(w.root.join("greeting.txt")).unwrap(),
        "good morning\n"
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let row = &doc["models"][0];
    assert_eq!(row["files"], 1, "{row}");
    assert!(
        row["diff"].as_str().unwrap().contains("+good morning"),
        "{row}"
    );
    // Nested in the progress, with its role.
    let progress = String::from_utf8_lossy(&out.stderr);
    assert!(
        progress.contains("  ↳ coder #1: edit_file greeting.txt"),
        "{progress}"
    );
    assert!(
        progress.contains(&format!("  ↳ coder #1 ({model}) finished")),
        "{progress}"
    );

    // The log: the proposal names the sub-agent; the parent's result is its answer.
    let records = w.records();
    let proposals = records
        .iter()
        .find(|r| r["type"] == "proposals")
        .expect("a proposals record");
    let writes = proposals["writes"].as_array().unwrap();
    assert_eq!(writes.len(), 1, "{writes:?}");
    assert_eq!(writes[0]["origin"]["agent"], "coder #1", "{writes:?}");
    assert_eq!(writes[0]["origin"]["tool"], "edit_file", "{writes:?}");

    let doc = w.session();
    let model_doc = &doc["turns"][0]["models"][0];
    assert_eq!(
        model_doc["sub_agent_writes"],
        json!([["greeting.txt", "coder #1"]])
    );
    let calls = calls_of(&doc);
    let names: Vec<(&str, Option<&str>)> = calls
        .iter()
        .map(|c| (c["name"].as_str().unwrap(), c["agent"]["role"].as_str()))
        .collect();
    assert_eq!(
        names,
        [
            ("spawn_agent", None),
            ("read_file", Some("coder")),
            ("edit_file", Some("coder")),
        ]
    );
    let answer = calls[0]["output"].as_str().unwrap();
    assert!(answer.contains("SUB-ANSWER-7781"), "{answer}");
    assert!(
        answer.starts_with("sub-agent coder #1 finished."),
        "{answer}"
    );
    let shown = w.versus().args(["sessions", "show"]).output().unwrap();
    let shown = text(&shown);
    assert!(
        shown.contains(&format!("  ↳ coder #1 ({model}): ✓ edit_file greeting.txt")),
        "{shown}"
    );
    assert!(
        shown.contains("✎ greeting.txt written by sub-agent coder #1"),
        "{shown}"
    );
    assert!(
        shown.contains("  sub-agents: on (max_depth=2 max_per_turn=4)"),
        "{shown}"
    );

    // Tokens add up: the parent's total is its own steps plus the sub-agent's total, which
    // the parent's `Usage` event after the call carries as its step.
    let agent_events: Vec<&Value> = records
        .iter()
        .filter(|r| r["type"] == "agent")
        .map(|r| &r["event"])
        .collect();
    let sub_total = agent_events
        .iter()
        .rev()
        .find(|e| e["type"] == "sub_agent" && e["event"]["type"] == "usage")
        .map(|e| e["event"]["total"].clone())
        .expect("the sub-agent's usage");
    assert!(sub_total["input"].as_u64().unwrap() > 0, "{sub_total}");
    let steps: Vec<&Value> = agent_events
        .iter()
        .filter(|e| e["type"] == "usage")
        .map(|e| &e["step"])
        .collect();
    assert!(steps.contains(&&sub_total), "{steps:?}");
    let sum = |key: &str| steps.iter().map(|s| s[key].as_u64().unwrap()).sum::<u64>();
    let stats = &model_doc["stats"]["usage"];
    assert_eq!(stats["input"].as_u64().unwrap(), sum("input"), "{stats}");
    assert_eq!(stats["output"].as_u64().unwrap(), sum("output"), "{stats}");
    assert!(
        stats["input"].as_u64().unwrap() > sub_total["input"].as_u64().unwrap(),
        "{stats}"
    );
}

#[test]
fn an_explorer_is_never_given_a_write_tool() {
    let w = world(Some(ON));
    let model = w.script(
        "explore.jsonl",
        &[
            json!({"tools": [spawn("look: find the greeting", "explorer")]}),
            json!({"agent": "look", "tools": [{"name": "write_file", "args": {"path": "greeting.txt", "content": "hacked\n"}}]}),
            json!({"agent": "look", "tools": [{"name": "read_file", "args": {"path": "greeting.txt"}}]}),
            json!({"agent": "look", "say": "It says hello."}),
            json!({"say": "done"}),
        ],
    );
    let out = w.ask(&model, &["--json"]);
    assert!(out.status.success(), "{}", text(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["models"][0]["files"], 0, "{doc}");
    let calls = calls_of(&w.session());
    let write = &calls[1];
    assert_eq!(write["agent"]["role"], "explorer", "{write}");
    // Not refused by a check: the tool is not there.
    assert_eq!(
        write["output"],
        "unknown tool `write_file`; available tools: read_file, list_directory, search_files, search_code"
    );
    assert_eq!(calls[2]["outcome"]["kind"], "ok", "{:?}", calls[2]);
    assert!(
        calls[0]["output"]
            .as_str()
            .unwrap()
            .contains("It says hello."),
        "{:?}",
        calls[0]
    );
    assert_eq!(
        std::fs::read_to_string(w.root.join("greeting.txt")).unwrap(),
        "hello\n"
    );
}

#[test]
fn the_depth_and_per_turn_limits_answer_with_a_clear_message() {
    // Default depth 2: the model's sub-agent may start one, that one may not.
    let w = world(Some(ON));
    let model = w.script(
        "deep.jsonl",
        &[
            json!({"tools": [spawn("one: go deeper", "coder")]}),
            json!({"agent": "one", "tools": [spawn("two: go deeper", "coder")]}),
            json!({"agent": "one", "say": "one done"}),
            json!({"agent": "two", "tools": [spawn("three: go deeper", "coder")]}),
            json!({"agent": "two", "say": "two done"}),
            json!({"agent": "three", "say": "never played"}),
            json!({"say": "done"}),
        ],
    );
    let out = w.ask(&model, &[]);
    assert!(out.status.success(), "{}", text(&out));
    let progress = String::from_utf8_lossy(&out.stderr);
    assert!(
        progress.contains("    ↳ coder #2: spawn_agent three: go deeper"),
        "{progress}"
    );
    let calls = calls_of(&w.session());
    let refused = calls
        .iter()
        .find(|c| c["agent"]["number"] == 2 && c["name"] == "spawn_agent")
        .expect("the second sub-agent's spawn_agent call");
    assert_eq!(refused["agent"]["depth"], 2, "{refused}");
    assert_eq!(refused["outcome"]["kind"], "refused", "{refused}");
    assert_eq!(
        refused["output"],
        "spawn_agent refused: the sub-agent depth limit (2) is reached: you are a sub-agent \
         at depth 2, and yours may not start another; do this task yourself with your own tools"
    );
    assert!(
        !calls.iter().any(|c| c["agent"]["number"] == 3),
        "{calls:?}"
    );

    // One per turn: the second of two calls in one step is refused.
    let w = world(Some("[sub_agents]\nmax_per_turn = 1\n"));
    let model = w.script(
        "twice.jsonl",
        &[
            json!({"tools": [spawn("a: first", "explorer"), spawn("b: second", "explorer")]}),
            json!({"agent": "a", "say": "first done"}),
            json!({"agent": "b", "say": "never played"}),
            json!({"say": "done"}),
        ],
    );
    let out = w.ask(&model, &[]);
    assert!(out.status.success(), "{}", text(&out));
    let calls = calls_of(&w.session());
    let spawns: Vec<&Value> = calls
        .iter()
        .filter(|c| c["name"] == "spawn_agent")
        .collect();
    assert_eq!(spawns.len(), 2, "{calls:?}");
    assert_eq!(spawns[0]["outcome"]["kind"], "ok", "{:?}", spawns[0]);
    assert_eq!(
        spawns[1]["output"],
        "spawn_agent refused: the limit of 1 sub-agents per turn is reached; do the rest yourself"
    );
}

#[test]
fn sub_agents_are_off_by_default_and_hashed_by_the_ledger_when_on() {
    let steps = [
        json!({"tools": [spawn("x: anything", "explorer")]}),
        json!({"agent": "x", "say": "explored"}),
        json!({"say": "done"}),
    ];
    // Off: the tool is not offered, a call to it is an unknown tool.
    let w = world(None);
    let model = w.script("off.jsonl", &steps);
    let out = w.ask(&model, &[]);
    assert!(out.status.success(), "{}", text(&out));
    let doc = w.session();
    let ledger = &doc["turns"][0]["ledger"][0];
    assert!(
        !ledger["tools"]
            .as_array()
            .unwrap()
            .contains(&json!("spawn_agent")),
        "{ledger}"
    );
    assert!(ledger.get("tool_settings").is_none(), "{ledger}");
    let calls = calls_of(&doc);
    assert!(
        calls[0]["output"]
            .as_str()
            .unwrap()
            .starts_with("unknown tool `spawn_agent`"),
        "{calls:?}"
    );

    // On for two models of a run: the same tool and settings for both, hashed alike, and a
    // sub-agent may run on the other model.
    let w = world(Some("[sub_agents]\nmax_depth = 1\n"));
    let other = w.script("other.jsonl", &[json!({"say": "other"})]);
    let model = w.script(
        "on.jsonl",
        &[
            json!({"tools": [{"name": "spawn_agent", "args": {
                "task": "x: anything", "role": "explorer", "model": other}}]}),
            json!({"say": "done"}),
        ],
    );
    let out = w
        .versus()
        .args(["ask", "do it", "-m", &model, "-m", &other])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let doc = w.session();
    let ledger = doc["turns"][0]["ledger"].as_array().unwrap();
    assert_eq!(ledger.len(), 2);
    for entry in ledger {
        assert!(
            entry["tools"]
                .as_array()
                .unwrap()
                .contains(&json!("spawn_agent")),
            "{entry}"
        );
        assert_eq!(
            entry["tool_settings"],
            json!(["spawn_agent: max_depth=1 max_per_turn=4"]),
            "{entry}"
        );
        assert_eq!(entry["differs"], Value::Null, "{entry}");
    }
    assert_eq!(ledger[0]["parts"], ledger[1]["parts"]);
    let calls = calls_of(&doc);
    let answer = calls[0]["output"].as_str().unwrap();
    // The other model's script played its main track for the sub-agent: "other".
    assert!(
        answer.starts_with("sub-agent explorer #1 finished."),
        "{answer}"
    );
    assert!(answer.ends_with("other"), "{answer}");
    let ended = w
        .records()
        .into_iter()
        .find(|r| r["type"] == "agent" && r["event"]["type"] == "sub_agent")
        .expect("a sub-agent event");
    assert_eq!(ended["event"]["agent"]["model"], other.as_str(), "{ended}");
}

#[test]
fn a_recipe_turns_sub_agents_on_or_off_over_the_config() {
    // The config has none; the recipe turns them on with its own depth, for `versus run`.
    let w = world(None);
    let model = w.script(
        "run.jsonl",
        &[
            json!({"tools": [spawn("fix: make the greeting polite", "coder")]}),
            json!({"agent": "fix", "tools": [{"name": "write_file", "args": {
                "path": "greeting.txt", "content": "good day\n"}}]}),
            json!({"agent": "fix", "say": "done"}),
            json!({"say": "delegated"}),
        ],
    );
    let model = model.replace("demo/scripts/", "demo/project/scripts/");
    let dir = w.root.parent().unwrap().to_path_buf();
    let recipe = |name: &str, mode: &str| {
        write(
            &dir.join(name),
            &format!(
                "# Subs\nversion: 1\n\n## Models\n- {model}\n\n\
                 ## Constraints\ntimeout: 1m\nproject_root: project\n{mode}\n\
                 ## Tasks\n\n### polite\nBe polite.\n\n## Success Criteria\n- no_errors\n"
            ),
        );
    };
    recipe(
        "on.recipe.md",
        "sub_agents: on\nsub_agents_max_depth: 1\nsub_agents_per_turn: 3\n",
    );
    let run = |name: &str| {
        versus()
            .current_dir(&dir)
            .env("XDG_CONFIG_HOME", &w.config)
            .env("XDG_STATE_HOME", w.config.with_file_name("state"))
            .env("TMPDIR", &w.temp)
            .args(["run", name])
            .output()
            .unwrap()
    };
    let out = run("on.recipe.md");
    assert!(out.status.success(), "{}", text(&out));
    let doc = w.session();
    let ledger = &doc["turns"][0]["ledger"][0];
    assert_eq!(
        ledger["tool_settings"],
        json!(["spawn_agent: max_depth=1 max_per_turn=3"]),
        "{ledger}"
    );
    assert_eq!(
        doc["turns"][0]["models"][0]["sub_agent_writes"],
        json!([["greeting.txt", "coder #1"]])
    );

    // The config turns them on, the recipe off: off.
    write(&w.config.join("versus/config.toml"), ON);
    recipe("off.recipe.md", "sub_agents: off\n");
    let out = run("off.recipe.md");
    assert!(out.status.success(), "{}", text(&out));
    let doc = w.session();
    let ledger = &doc["turns"][0]["ledger"][0];
    assert!(ledger.get("tool_settings").is_none(), "{ledger}");
    let calls = calls_of(&doc);
    assert!(
        calls[0]["output"]
            .as_str()
            .unwrap()
            .starts_with("unknown tool `spawn_agent`"),
        "{calls:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// The interface's Ctrl+T overlay (issue 24): a sub-agent's calls after the parent's call.

/// A finished tool call of `agent` (`None`: the model) with its whole output.
fn tui_call(
    app: &mut versus::tui::state::App,
    agent: Option<&versus::model::SubAgentTag>,
    (id, name, args): (&str, &str, &str),
    output: &str,
) {
    use versus::model::{AgentEvent, ToolOutcome};
    let wrap = |event: AgentEvent| match agent {
        Some(tag) => AgentEvent::SubAgent {
            agent: tag.clone(),
            event: Box::new(event),
        },
        None => event,
    };
    crate::tui_snapshots::agent(
        app,
        0,
        wrap(AgentEvent::ToolCallReady {
            id: id.into(),
            name: name.into(),
            arguments: args.into(),
        }),
    );
    crate::tui_snapshots::agent(
        app,
        0,
        wrap(AgentEvent::ToolResult {
            id: id.into(),
            name: name.into(),
            is_error: false,
            bytes: output.len(),
            summary: output.lines().next().unwrap_or_default().into(),
            duration_ms: 12,
            failed_edit: false,
            outcome: Some(ToolOutcome::Ok),
            output: output.into(),
            timing: None,
        }),
    );
}

/// A turn where the model reads a file, starts a coder sub-agent (which reads and writes),
/// and then runs a command: the sub-agent's calls end before its `spawn_agent` call does.
fn tui_turn_with_a_coder() -> versus::tui::state::App {
    use crate::tui_snapshots::{agent, app, start_turn};
    use versus::model::{AgentEvent, SubAgentTag, ToolOutcome};
    let mut a = app(&["demo/good"]);
    start_turn(&mut a, "Fix the greeting");
    agent(&mut a, 0, AgentEvent::StepStarted { step: 1 });
    tui_call(
        &mut a,
        None,
        ("c1", "read_file", r#"{"path":"src/lib.rs"}"#),
        "1 pub fn greet() -> &'static str { \"helo\" }",
    );
    let spawn = r#"{"task":"fix the typo in greet","role":"coder"}"#;
    agent(
        &mut a,
        0,
        AgentEvent::ToolCallReady {
            id: "c2".into(),
            name: "spawn_agent".into(),
            arguments: spawn.into(),
        },
    );
    let coder = SubAgentTag {
        role: "coder".into(),
        number: 1,
        depth: 1,
        model: "demo/good".into(),
        call_id: "c2".into(),
    };
    tui_call(
        &mut a,
        Some(&coder),
        ("c1", "read_file", r#"{"path":"src/lib.rs"}"#),
        "1 pub fn greet() -> &'static str { \"helo\" }",
    );
    tui_call(
        &mut a,
        Some(&coder),
        (
            "c2",
            "edit_file",
            r#"{"path":"src/lib.rs","old_string":"helo","new_string":"hello"}"#,
        ),
        "edited src/lib.rs: 1 replacement",
    );
    agent(
        &mut a,
        0,
        AgentEvent::ToolResult {
            id: "c2".into(),
            name: "spawn_agent".into(),
            is_error: false,
            bytes: 40,
            summary: "sub-agent coder #1 finished.".into(),
            duration_ms: 900,
            failed_edit: false,
            outcome: Some(ToolOutcome::Ok),
            output: "sub-agent coder #1 finished.\n\nFixed the typo.".into(),
            timing: None,
        },
    );
    tui_call(
        &mut a,
        None,
        ("c3", "bash", r#"{"command":"cargo test"}"#),
        "test result: ok. 3 passed\n[exit code: 0]",
    );
    a
}

/// Pure update: Ctrl+T lists the coder's calls after the `spawn_agent` call that started it,
/// nested and named `coder #1`, each with its whole result; the model's later call after them;
/// the overlay opens on the latest call.
#[test]
fn the_results_overlay_lists_a_sub_agents_calls_under_its_spawn_call() {
    use versus::tui::state::Overlay;
    let mut a = tui_turn_with_a_coder();
    crate::tui_snapshots::ctrl(&mut a, 't');
    let Some(Overlay::Info { title, lines }) = a.overlay.clone() else {
        panic!("no overlay: {:?}", a.overlay);
    };
    assert_eq!(title, "tool results · demo/good");
    let heads: Vec<&str> = lines
        .iter()
        .filter(|l| l.contains("turn 1 ·"))
        .map(String::as_str)
        .collect();
    assert_eq!(
        heads,
        [
            "turn 1 · ✓ read_file src/lib.rs · 12 ms",
            "turn 1 · ✓ spawn_agent fix the typo in greet · 900 ms",
            "  turn 1 · ↳ coder #1: ✓ read_file src/lib.rs · 12 ms",
            "  turn 1 · ↳ coder #1: ✓ edit_file src/lib.rs · 12 ms",
            "turn 1 · ✓ bash cargo test · 12 ms",
        ]
    );
    assert!(
        lines.contains(&"    edited src/lib.rs: 1 replacement".to_string()),
        "the sub-agent's result, nested: {lines:?}"
    );
    assert!(
        lines.contains(&"  Fixed the typo.".to_string()),
        "{lines:?}"
    );
    // The panel counts only the model's own calls.
    assert_eq!(a.panels[0].tool_calls, 3);
}

/// The overlay drawn alone at two sizes (snapshots `sub_agents__overlay__WxH`).
#[test]
fn the_results_overlay_with_a_sub_agent_at_two_sizes() {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    let mut a = tui_turn_with_a_coder();
    crate::tui_snapshots::ctrl(&mut a, 't');
    // Scrolled to the top: the nesting is on screen at both sizes.
    a.overlay_scroll = 0;
    for (w, h) in [(100, 30), (60, 20)] {
        a.size = (w, h);
        let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
        terminal
            .draw(|f| versus::tui::view::overlay::render(f, f.area(), &a))
            .unwrap();
        insta::assert_snapshot!(format!("sub_agents__overlay__{w}x{h}"), terminal.backend());
        let screen = util::screen_rows(terminal.backend().buffer()).join("\n");
        assert!(screen.contains("↳ coder #1: ✓ edit_file"), "{screen}");
    }
}

/// Issue 24: `versus replay export` keeps a sub-agent's track: its calls step by step and its
/// answer, as `"agent": TASK` lines under a comment naming it (`coder #1`), right after the
/// line whose call started it, a nested sub-agent's after its parent's; replaying the export
/// in a fresh project starts the same sub-agents and makes the same edit.
#[test]
fn replay_export_keeps_the_sub_agents_tracks_and_replays_them() {
    let config = "[sub_agents]\nmax_depth = 2\n";
    let w = world(Some(config));
    let model = w.script(
        "recorded.jsonl",
        &[
            json!({"say": "Delegating.", "tools": [spawn("polish: make the greeting polite", "coder")]}),
            json!({"agent": "polish", "tools": [{"name": "read_file", "args": {"path": "greeting.txt"}}]}),
            json!({"agent": "polish", "tools": [
                {"name": "edit_file", "args": {"path": "greeting.txt", "old_string": "hello", "new_string": "good morning"}},
                spawn("survey: list the files", "explorer")]}),
            json!({"agent": "survey", "tools": [{"name": "list_directory", "args": {"path": "."}}]}),
            json!({"agent": "survey", "say": "SURVEY-ANSWER: one file."}),
            json!({"agent": "polish", "say": "POLISH-ANSWER-5521: polite now."}),
            json!({"say": "Done by my sub-agent."}),
        ],
    );
    let out = w.ask(&model, &[]);
    assert!(out.status.success(), "{}", text(&out));
    let export = w
        .versus()
        .args(["replay", "export", "-m", &model, "--delay", "0"])
        .output()
        .unwrap();
    assert!(export.status.success(), "{}", text(&export));
    let script = String::from_utf8(export.stdout).unwrap();
    let lines: Vec<&str> = script.lines().collect();
    let polish = "polish: make the greeting polite";
    let survey = "survey: list the files";
    let parsed = |line: &str| serde_json::from_str::<Value>(line).unwrap();
    assert!(
        lines[0].starts_with("# demo script exported from session"),
        "{script}"
    );
    assert_eq!(
        parsed(lines[1])["tools"][0]["name"],
        "spawn_agent",
        "{script}"
    );
    assert_eq!(
        lines[2],
        format!("# coder #1 (turn 1, depth 1), started by the call above: {polish}"),
        "{script}"
    );
    assert_eq!(
        parsed(lines[3]),
        json!({"agent": polish, "tools": [{"name": "read_file", "args": {"path": "greeting.txt"}}]})
    );
    let both = parsed(lines[4]);
    assert_eq!(both["agent"], polish);
    let names: Vec<&str> = both["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["edit_file", "spawn_agent"], "{script}");
    assert_eq!(
        parsed(lines[5]),
        json!({"agent": polish, "say": "POLISH-ANSWER-5521: polite now."})
    );
    assert_eq!(
        lines[6],
        format!("# explorer #2 (turn 1, depth 2), started by the call above: {survey}"),
        "{script}"
    );
    assert_eq!(
        parsed(lines[7]),
        json!({"agent": survey, "tools": [{"name": "list_directory", "args": {"path": "."}}]})
    );
    assert_eq!(
        parsed(lines[8]),
        json!({"agent": survey, "say": "SURVEY-ANSWER: one file."})
    );
    assert_eq!(parsed(lines[9]), json!({"say": "Done by my sub-agent."}));
    assert_eq!(lines.len(), 10, "{script}");

    // Replayed in a fresh project: the same sub-agents, the same edit, the same answers.
    let fresh = world(Some(config));
    write(&fresh.root.join("scripts/exported.jsonl"), &script);
    let out = fresh.ask("demo/scripts/exported.jsonl", &["--json"]);
    assert!(out.status.success(), "{}", text(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        doc["models"][0]["diff"]
            .as_str()
            .unwrap()
            .contains("+good morning"),
        "{doc}"
    );
    let calls = calls_of(&fresh.session());
    let replayed: Vec<(&str, Option<&str>)> = calls
        .iter()
        .map(|c| (c["name"].as_str().unwrap(), c["agent"]["role"].as_str()))
        .collect();
    assert_eq!(
        replayed,
        [
            ("spawn_agent", None),
            ("read_file", Some("coder")),
            ("edit_file", Some("coder")),
            ("spawn_agent", Some("coder")),
            ("list_directory", Some("explorer")),
        ]
    );
    assert!(
        calls[0]["output"]
            .as_str()
            .unwrap()
            .contains("POLISH-ANSWER-5521"),
        "{calls:?}"
    );
}
