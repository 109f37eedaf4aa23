//! Project context end to end through the binary: `AGENTS.md` (the project's and the user's
//! global one) and the skill catalog in the system prompt each of the four wire formats sent
//! (local mock servers for Chat, Responses, Anthropic Messages and Gemini), the config's seed
//! in the requests of the APIs that take one and in no other; a scripted demo model reading a
//! user skill's `SKILL.md` outside the project with read_file (and nothing else out there);
//! project skills counted only after trust, a malformed one reported; and the fairness ledger
//! in the session log: the same for models given the same, a model with other limits flagged
//! with the difference (`versus run`, `versus sessions show`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};
use util::mock_server::{MockServer, Recorded, Reply};
use util::{git, versus};

const PROJECT_RULE: &str = "PROJECT-RULE-7731 indent with tabs";
const GLOBAL_RULE: &str = "GLOBAL-RULE-5521 answer briefly";
const SKILL_BODY: &str = "RELEASE-BODY-9931 list every change";
const SEED: u64 = 4242;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A git project with an `AGENTS.md`, a project skill, a malformed project skill and an
/// ignored `scripts/` folder; a user config folder with a global `AGENTS.md` and a skill.
struct World {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    config: PathBuf,
    temp: PathBuf,
}

fn world() -> World {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let root = base.join("project");
    let config = base.join("config");
    let temp = base.join("tmp");
    std::fs::create_dir_all(&temp).unwrap();
    write(&root.join("calc.py"), "def add(a, b):\n    return a - b\n");
    write(&root.join(".gitignore"), "scripts/\n");
    write(
        &root.join("AGENTS.md"),
        &format!("# Rules\n{PROJECT_RULE}\n"),
    );
    write(
        &root.join(".agents/skills/tabs-style/SKILL.md"),
        "---\nname: tabs-style\ndescription: How this project indents <code>.\n---\nUse tabs.\n",
    );
    write(
        &root.join(".claude/skills/Broken/SKILL.md"),
        "---\nname: Broken\ndescription: bad name\n---\n",
    );
    git(&root, &["init", "-q"]);
    git(&root, &["add", "."]);
    git(&root, &["commit", "-qm", "init"]);
    let user = config.join("versus");
    write(&user.join("AGENTS.md"), &format!("{GLOBAL_RULE}\n"));
    write(
        &user.join("skills/release-notes/SKILL.md"),
        &format!(
            "---\nname: release-notes\ndescription: >\n  Write release notes\n  from the git log.\nlicense: MIT\n---\n{SKILL_BODY}\n"
        ),
    );
    World {
        _tmp: tmp,
        root,
        config,
        temp,
    }
}

impl World {
    fn user_skill(&self) -> PathBuf {
        self.config
            .join("versus/skills/release-notes/SKILL.md")
            .canonicalize()
            .unwrap()
    }

    fn versus(&self) -> Command {
        let mut c = versus();
        c.arg("-C")
            .arg(&self.root)
            .env("XDG_CONFIG_HOME", &self.config)
            .env("TMPDIR", &self.temp)
            .env_remove("OPENAI_API_BASE");
        c
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
}

fn text(out: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

// ---------------------------------------------------------------------------------------------
// One final answer in each wire format.

fn sse(payloads: &[Value], typed: bool, done: bool) -> Reply {
    let mut body = String::new();
    for payload in payloads {
        if typed {
            body.push_str(&format!("event: {}\n", payload["type"].as_str().unwrap()));
        }
        body.push_str(&format!("data: {payload}\n\n"));
    }
    if done {
        body.push_str("data: [DONE]\n\n");
    }
    Reply::sse(body)
}

fn chat_reply() -> Reply {
    let chunk = |delta: Value, finish: Value| {
        json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1_760_000_000,
               "model": "m", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    sse(
        &[
            chunk(json!({"role": "assistant", "content": ""}), Value::Null),
            chunk(json!({"content": "done"}), Value::Null),
            chunk(json!({}), json!("stop")),
            json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1_760_000_000,
                   "model": "m", "choices": [],
                   "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11}}),
        ],
        false,
        true,
    )
}

fn responses_reply() -> Reply {
    let done = json!({"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
                      "content": [{"type": "output_text", "text": "done", "annotations": []}]});
    let mut events = vec![
        json!({"type": "response.created", "response": {"id": "resp_1", "object": "response",
               "status": "in_progress", "output": []}}),
        json!({"type": "response.output_item.added", "output_index": 0,
               "item": {"type": "message", "id": "msg_1", "status": "in_progress",
                        "role": "assistant", "content": []}}),
        json!({"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0,
               "content_index": 0, "delta": "done"}),
        json!({"type": "response.output_text.done", "item_id": "msg_1", "output_index": 0,
               "content_index": 0, "text": "done"}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": done}),
        json!({"type": "response.completed", "response": {"id": "resp_1", "object": "response",
               "status": "completed", "output": [done],
               "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                         "output_tokens": 1, "output_tokens_details": {"reasoning_tokens": 0},
                         "total_tokens": 11}}}),
    ];
    for (n, event) in events.iter_mut().enumerate() {
        event["sequence_number"] = json!(n);
    }
    sse(&events, true, false)
}

fn anthropic_reply() -> Reply {
    sse(
        &[
            json!({"type": "message_start", "message": {"id": "msg_01", "type": "message",
                   "role": "assistant", "model": "claude-sonnet-4-5", "content": [],
                   "stop_reason": null, "usage": {"input_tokens": 10, "output_tokens": 1}}}),
            json!({"type": "content_block_start", "index": 0,
                   "content_block": {"type": "text", "text": ""}}),
            json!({"type": "content_block_delta", "index": 0,
                   "delta": {"type": "text_delta", "text": "done"}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn",
                   "stop_sequence": null}, "usage": {"output_tokens": 1}}),
            json!({"type": "message_stop"}),
        ],
        true,
        false,
    )
}

fn gemini_reply() -> Reply {
    sse(
        &[
            json!({"candidates": [{"content": {"parts": [{"text": "done"}], "role": "model"},
                 "index": 0, "finishReason": "STOP"}],
                 "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 1,
                                   "totalTokenCount": 11},
                 "modelVersion": "gemini-2.5-pro"}),
        ],
        false,
        false,
    )
}

/// The system prompt a request carried, in its wire's place for it.
fn system_of(request: &Recorded) -> String {
    let body = request.json();
    if let Some(text) = body["instructions"].as_str() {
        return text.to_string(); // Responses
    }
    if let Some(parts) = body["systemInstruction"]["parts"].as_array() {
        return parts.iter().filter_map(|p| p["text"].as_str()).collect(); // Gemini
    }
    match &body["system"] {
        Value::String(text) => return text.clone(), // Anthropic, plain
        Value::Array(blocks) => {
            return blocks.iter().filter_map(|b| b["text"].as_str()).collect();
        }
        _ => {}
    }
    // Chat: the first message.
    let first = &body["messages"][0];
    assert_eq!(first["role"], "system", "{body}");
    match &first["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
        other => panic!("no system text in {other}"),
    }
}

#[test]
fn agents_md_skills_and_the_seed_reach_every_wire_in_the_same_words() {
    let w = world();
    let chat = MockServer::start(vec![chat_reply()]);
    let responses = MockServer::start(vec![responses_reply()]);
    let anthropic = MockServer::start(vec![anthropic_reply()]);
    let gemini = MockServer::start(vec![gemini_reply()]);
    write(
        &w.config.join("versus/config.toml"),
        &format!(
            // `edit_tools = "both"`: every model the same tools, so the whole system prompt
            // is the same words (by default gpt-5's names apply_patch where the others name
            // edit_file; tests/it/ask_providers.rs holds that).
            "seed = {SEED}\nedit_tools = \"both\"\n\n[providers.chatty]\nkind = \"openai-chat\"\nbase_url = \"{}/v1\"\napi_key_env = \"CHATTY_KEY\"\n",
            chat.url()
        ),
    );
    let out = w
        .versus()
        .args(["--trust", "ask", "say done"])
        .args(["-m", "chatty/some-model", "-m", "openai/gpt-5"])
        .args([
            "-m",
            "anthropic/claude-sonnet-4-5",
            "-m",
            "gemini/gemini-2.5-pro",
        ])
        .env("CHATTY_KEY", "sk-chat-test")
        .env("OPENAI_API_KEY", "sk-openai-test")
        .env("OPENAI_BASE_URL", format!("{}/v1", responses.url()))
        .env("ANTHROPIC_API_KEY", "sk-ant-test")
        .env("ANTHROPIC_BASE_URL", anthropic.url())
        .env("GEMINI_API_KEY", "gemini-test")
        .env("GEMINI_BASE_URL", gemini.url())
        .env_remove("GOOGLE_API_KEY")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    // The malformed skill is named, with why, and the run goes on.
    let said = text(&out);
    assert!(
        said.contains("skill .claude/skills/Broken was left out")
            || said.contains("skill .claude/skills/Broken/SKILL.md was left out"),
        "{said}"
    );

    let mut systems = Vec::new();
    for (name, server) in [
        ("chat", &chat),
        ("responses", &responses),
        ("anthropic", &anthropic),
        ("gemini", &gemini),
    ] {
        let requests = server.requests();
        assert_eq!(requests.len(), 1, "{name}");
        let system = system_of(&requests[0]);
        for needle in [
            PROJECT_RULE,
            GLOBAL_RULE,
            "<name>tabs-style</name>",
            "How this project indents &lt;code&gt;.",
            "<name>release-notes</name>",
            "Write release notes from the git log.",
        ] {
            assert!(
                system.contains(needle),
                "{name}: no {needle:?} in\n{system}"
            );
        }
        // The global file first, then the project's: nearer files win.
        assert!(
            system.find(GLOBAL_RULE) < system.find(PROJECT_RULE),
            "{name}"
        );
        assert!(
            system.contains(&w.user_skill().display().to_string()),
            "{name}: the user skill's location\n{system}"
        );
        assert!(
            !system.contains("bad name"),
            "{name}: a malformed skill in the catalog"
        );
        systems.push(system);
        // The seed: sent where the API takes one, and nowhere else.
        let body = requests[0].json();
        match name {
            "chat" => assert_eq!(body["seed"], SEED, "{body}"),
            "gemini" => assert_eq!(body["generationConfig"]["seed"], SEED, "{body}"),
            _ => assert!(
                !requests[0].body.windows(6).any(|w| w == b"\"seed\""),
                "{name}: {body}"
            ),
        }
    }
    // The same words for every model.
    assert!(systems.windows(2).all(|s| s[0] == s[1]));

    // The session log lists the sources and sizes, the catalog and the ledger.
    let doc = w.session();
    let turn = &doc["turns"][0];
    let files: Vec<&str> = turn["context"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    let global = w.config.join("versus/AGENTS.md").display().to_string();
    assert_eq!(files, [global.as_str(), "AGENTS.md"]);
    assert_eq!(
        turn["context"]["files"][1]["bytes"],
        format!("# Rules\n{PROJECT_RULE}\n").len()
    );
    let ledger = turn["ledger"].as_array().unwrap();
    assert_eq!(ledger.len(), 4);
    // Four models given the same: one hash, nothing flagged.
    assert!(
        ledger.iter().all(|e| e["hash"] == ledger[0]["hash"]),
        "{ledger:?}"
    );
    assert!(
        ledger.iter().all(|e| e.get("differs").is_none()),
        "{ledger:?}"
    );
    assert!(ledger.iter().all(|e| e["seed"] == SEED));
    let shown = w.versus().args(["sessions", "show"]).output().unwrap();
    let shown = text(&shown);
    let project_size = format!("# Rules\n{PROJECT_RULE}\n").len();
    assert!(
        shown.contains(&format!("AGENTS.md ({project_size} B)")),
        "{shown}"
    );
    assert!(
        shown.contains("skills: release-notes (user), tabs-style (project)"),
        "{shown}"
    );
    assert!(
        shown.contains("fairness: every model was given the same"),
        "{shown}"
    );
}

#[test]
fn a_model_reads_a_user_skill_outside_the_project_and_project_skills_wait_for_trust() {
    let w = world();
    let skill = w.user_skill();
    let outside = w.config.join("versus/config-secret.txt");
    write(&outside, "NOT-FOR-MODELS\n");
    let steps = [
        json!({"tools": [{"name": "read_file", "args": {"path": skill.display().to_string()}}]}),
        // Beside the skills, the user's config folder stays out of reach.
        json!({"tools": [{"name": "read_file", "args": {"path": outside.display().to_string()}}]}),
        // A skill is read, never written: a write there is a write outside the project.
        json!({"tools": [{"name": "write_file",
                          "args": {"path": skill.display().to_string(), "content": "x"}}]}),
        json!({"say": "read the skill"}),
    ];
    let script: String = steps.iter().map(|s| format!("{s}\n")).collect();
    write(&w.root.join("scripts/skill.jsonl"), &script);
    let out = w
        .versus()
        .args([
            "ask",
            "write the release notes",
            "-m",
            "demo/scripts/skill.jsonl",
        ])
        .args(["--quiet", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let doc = w.session();
    let turn = &doc["turns"][0];
    let tools = turn["models"][0]["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 3, "{tools:?}");
    let output = |i: usize| tools[i]["output"].as_str().unwrap().to_string();
    assert!(output(0).contains(SKILL_BODY), "{}", output(0));
    assert!(output(0).contains("name: release-notes"), "{}", output(0));
    assert!(!output(1).contains("NOT-FOR-MODELS"), "{}", output(1));
    assert_eq!(tools[1]["outcome"]["kind"], "refused", "{:?}", tools[1]);
    assert!(output(1).contains("outside the project"), "{}", output(1));
    assert_eq!(tools[2]["outcome"]["kind"], "refused", "{:?}", tools[2]);
    assert!(
        std::fs::read_to_string(&skill)
            .unwrap()
            .contains(SKILL_BODY)
    );
    // Untrusted: the project's skills are not in the catalog (nor reported), the user's is.
    let skills: Vec<&str> = turn["context"]["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(skills, ["release-notes"]);
    assert_eq!(turn["context"]["skipped"], json!([]));

    // After `versus trust`, they count; the malformed one is skipped with the spec's rule.
    let trusted = w.versus().arg("trust").output().unwrap();
    assert!(trusted.status.success(), "{}", text(&trusted));
    write(&w.root.join("scripts/say.jsonl"), "{\"say\": \"hi\"}\n");
    let out = w
        .versus()
        .args(["ask", "again", "-m", "demo/scripts/say.jsonl", "--quiet"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let doc = w.session();
    let context = &doc["turns"][0]["context"];
    let skills: Vec<&str> = context["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(skills, ["release-notes", "tabs-style"]);
    let skipped = context["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 1, "{skipped:?}");
    assert!(
        skipped[0]["reason"].as_str().unwrap().contains("lowercase"),
        "{skipped:?}"
    );
}

#[test]
fn the_ledger_flags_the_model_given_other_limits_and_names_the_difference() {
    let w = world();
    for name in ["a", "b", "c"] {
        write(
            &w.root.join(format!("scripts/{name}.jsonl")),
            "{\"say\": \"hi\"}\n",
        );
    }
    // A recipe beside the project, with its own skills folder.
    let dir = w.root.parent().unwrap().to_path_buf();
    write(
        &dir.join("recipe-skills/house-style/SKILL.md"),
        "---\nname: house-style\ndescription: The house style.\n---\nBe terse.\n",
    );
    write(
        &dir.join("ledger.recipe.md"),
        "# Ledger\nversion: 1\n\n## Models\n- demo/project/scripts/a.jsonl\n\
         - demo/project/scripts/b.jsonl\n- demo/project/scripts/c.jsonl\n\n\
         ## Constraints\ntimeout: 1m\nproject_root: project\n\n\
         ## Context\nskills: recipe-skills\n\n\
         ## Model Parameters\n- demo/project/scripts/c.jsonl: max_output_tokens=64\n\n\
         ## Tasks\n\n### hello\nSay hi.\n\n## Success Criteria\n- no_errors\n",
    );
    let out = versus()
        .current_dir(&dir)
        .env("XDG_CONFIG_HOME", &w.config)
        .env("TMPDIR", &w.temp)
        .args(["run", "ledger.recipe.md"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    // The run says so as it starts the turn.
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains(
            "versus: warning: fairness: demo/project/scripts/c.jsonl was given something different: limits ("
        ),
        "{said}"
    );
    let doc = w.session();
    let turn = &doc["turns"][0];
    let ledger = turn["ledger"].as_array().unwrap();
    assert_eq!(ledger.len(), 3, "{ledger:?}");
    // a and b were given the same; c other limits, and only that.
    assert_eq!(ledger[0]["hash"], ledger[1]["hash"]);
    assert_ne!(ledger[0]["hash"], ledger[2]["hash"]);
    assert!(ledger[0].get("differs").is_none() && ledger[1].get("differs").is_none());
    let differs = ledger[2]["differs"].as_array().unwrap();
    assert_eq!(differs.len(), 1, "{differs:?}");
    let difference = differs[0].as_str().unwrap();
    assert!(
        difference.starts_with("limits (") && difference.contains("max_output_tokens=64"),
        "{difference}"
    );
    assert_eq!(ledger[0]["parts"]["tools"], ledger[2]["parts"]["tools"]);
    // The recipe's skill joined the catalog.
    let skills: Vec<&str> = turn["context"]["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(skills, ["house-style", "release-notes"]);
    let shown = w.versus().args(["sessions", "show"]).output().unwrap();
    let shown = text(&shown);
    assert!(
        shown.contains(
            "fairness: demo/project/scripts/c.jsonl was given something different: limits ("
        ),
        "{shown}"
    );
}

#[test]
fn recipe_check_warns_for_the_models_whose_api_takes_no_seed() {
    let w = world();
    let recipe = w.root.join("seeded.recipe.md");
    write(
        &recipe,
        "# Seeded\nversion: 1\n\n## Models\n- openai/gpt-5\n- anthropic/claude-sonnet-4-5\n\
         - gemini/gemini-2.5-pro\n- openrouter/qwen/qwen3-coder\n\n\
         ## Model Parameters\nseed: 11\n\n## Tasks\n\n### t\nDo it.\n",
    );
    let out = w
        .versus()
        .args(["recipe", "check"])
        .arg(&recipe)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let said = text(&out);
    let warnings: Vec<&str> = said.lines().filter(|l| l.starts_with("warning:")).collect();
    assert_eq!(
        warnings,
        [
            "warning: openai/gpt-5: seed 11 is not sent; the openai-responses API takes no seed, so its samples may differ where other models' repeat",
            "warning: anthropic/claude-sonnet-4-5: seed 11 is not sent; the anthropic API takes no seed, so its samples may differ where other models' repeat",
        ],
        "{said}"
    );
}

#[test]
fn a_recipes_system_prompt_follows_the_guidance_of_the_tools_the_model_actually_has() {
    let w = world();
    let responses = MockServer::start(vec![responses_reply()]);
    let dir = w.root.parent().unwrap().to_path_buf();
    write(
        &dir.join("prompt.recipe.md"),
        "# Prompt\nversion: 1\n\n## Models\n- openai/gpt-5\n\n\
         ## Constraints\ntimeout: 1m\nproject_root: project\n\n\
         ## System Prompt\nRECIPE-PROMPT-4417 answer like a pirate.\n\n\
         ## Tasks\n\n### hello\nSay hi.\n\n## Success Criteria\n- no_errors\n",
    );
    let out = versus()
        .current_dir(&dir)
        .env("XDG_CONFIG_HOME", &w.config)
        .env("TMPDIR", &w.temp)
        .env("OPENAI_API_KEY", "sk-openai-test")
        .env("OPENAI_BASE_URL", format!("{}/v1", responses.url()))
        .args(["run", "prompt.recipe.md"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let requests = responses.requests();
    assert_eq!(requests.len(), 1);
    let system = system_of(&requests[0]);
    // gpt-5 gets apply_patch by its family: the prompt is made from that registry, the
    // recipe's own words after the tools' guidance, the project's context after those.
    assert!(system.contains("- apply_patch:"), "{system}");
    assert!(!system.contains("edit_file"), "{system}");
    let guidance = system.find("- apply_patch:").unwrap();
    let recipe = system
        .find("RECIPE-PROMPT-4417")
        .expect("the recipe's prompt");
    let context = system.find(PROJECT_RULE).expect("the project's AGENTS.md");
    assert!(guidance < recipe && recipe < context, "{system}");
    let body = requests[0].json();
    let tools: Vec<&str> = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(tools.contains(&"apply_patch"), "{tools:?}");
    assert!(!tools.contains(&"edit_file"), "{tools:?}");
}
