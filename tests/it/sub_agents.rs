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
