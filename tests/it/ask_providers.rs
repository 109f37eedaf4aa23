//! `versus ask` end to end through the binary against two real provider formats served by
//! local mock servers: `openai/gpt-5` (Responses API, the openai default) and
//! `anthropic/claude-sonnet-4-5` (Messages), pointed at the mocks with OPENAI_BASE_URL and
//! ANTHROPIC_BASE_URL and given fake keys. Checked: the comparison table and each model's
//! diff, `--pick` writing exactly the picked model's change set, `versus rewind --yes`
//! restoring the tree byte for byte (content and mode of every file), and that no file under
//! the project (`.versus/` and `.git/` included), the workspaces' temp folder or any output
//! contains a key.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util;

use crate::util::mock_server;

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use mock_server::*;
use serde_json::{Value, json};
use util::{git, versus};

const OPENAI_KEY: &str = "sk-test-SECRET-123456";
const ANTHROPIC_KEY: &str = "sk-ant-test-SECRET-654321";
const OPENAI: &str = "openai/gpt-5";
const ANTHROPIC: &str = "anthropic/claude-sonnet-4-5";

const CALC: &str = "def add(a, b):\n    return a - b\n";
const CALC_OPENAI: &str = "def add(a, b):\n    return a + b\n";
const CALC_ANTHROPIC: &str = "def add(a, b):\n    return b + a\n";
const NOTES: &str = "add() subtracted; fixed.\n";
const README_EDITED: &str = "# calc\n\nuncommitted line\n";

// ---------------------------------------------------------------------------------------------
// The project.

/// A git project with the bug, an executable script, an uncommitted edit and an untracked
/// file (both must survive apply and rewind untouched).
fn project(root: &Path) {
    std::fs::create_dir_all(root).unwrap();
    std::fs::write(root.join("calc.py"), CALC).unwrap();
    std::fs::write(root.join("README.md"), "# calc\n").unwrap();
    std::fs::write(root.join("run.sh"), "#!/bin/sh\nsh test.sh\n").unwrap();
    std::fs::set_permissions(root.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(
        root.join("test.sh"),
        "grep -q 'return a + b' calc.py && echo PASS || echo FAIL\n",
    )
    .unwrap();
    git(root, &["init", "-q"]);
    git(root, &["add", "."]);
    git(root, &["commit", "-qm", "init"]);
    std::fs::write(root.join("README.md"), README_EDITED).unwrap();
    std::fs::write(root.join("untracked.txt"), "mine\n").unwrap();
}

/// Every file and folder under `root` except `.git` and `.versus`: blake3 of the content and
/// the permission bits (folders as `path/` with an empty hash, so created folders show).
fn tree(root: &Path) -> BTreeMap<String, (String, u32)> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, (String, u32)>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if dir == root && (name == ".git" || name == ".versus") {
                continue;
            }
            let rel = path.strip_prefix(root).unwrap().display().to_string();
            let mode = std::fs::symlink_metadata(&path)
                .unwrap()
                .permissions()
                .mode()
                & 0o7777;
            if path.is_dir() {
                out.insert(format!("{rel}/"), (String::new(), mode));
                walk(root, &path, out);
            } else {
                let hash = blake3::hash(&std::fs::read(&path).unwrap()).to_hex();
                out.insert(rel, (hash.to_string(), mode));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

fn hash(text: &str) -> String {
    blake3::hash(text.as_bytes()).to_hex().to_string()
}

// ---------------------------------------------------------------------------------------------
// The two mock models: read_file, an edit step, a final text.

/// Tokens per step (1-based): input 1000 x step, output 100, no cache.
fn usage(n: usize) -> (u64, u64) {
    (1000 * n as u64, 100)
}

/// OpenAI Responses events (`event:` + `data:`), one output item per call or one message.
fn responses(n: usize, calls: &[(&str, &str, Value)], text: Option<&str>) -> Reply {
    let mut events = vec![json!({"type": "response.created", "response": {
        "id": format!("resp_{n}"), "object": "response", "status": "in_progress", "output": []}})];
    let mut output = Vec::new();
    for (index, (call_id, name, args)) in calls.iter().enumerate() {
        let args = args.to_string();
        let item_id = format!("fc_{n}_{index}");
        let item = |arguments: &str, status: &str| {
            json!({"type": "function_call", "id": item_id, "call_id": call_id, "name": name,
                   "arguments": arguments, "status": status})
        };
        events.push(
            json!({"type": "response.output_item.added", "output_index": index,
                           "item": item("", "in_progress")}),
        );
        let (head, tail) = args.split_at(args.len() / 2);
        for delta in [head, tail] {
            events.push(json!({"type": "response.function_call_arguments.delta",
                               "item_id": item_id, "output_index": index, "delta": delta}));
        }
        events.push(json!({"type": "response.function_call_arguments.done",
                           "item_id": item_id, "output_index": index, "arguments": args}));
        events.push(
            json!({"type": "response.output_item.done", "output_index": index,
                           "item": item(&args, "completed")}),
        );
        output.push(item(&args, "completed"));
    }
    if let Some(text) = text {
        let item_id = format!("msg_{n}");
        let done = json!({"type": "message", "id": item_id, "status": "completed", "role": "assistant",
                          "content": [{"type": "output_text", "text": text, "annotations": []}]});
        events.push(
            json!({"type": "response.output_item.added", "output_index": 0,
                           "item": {"type": "message", "id": item_id, "status": "in_progress",
                                    "role": "assistant", "content": []}}),
        );
        events.push(
            json!({"type": "response.output_text.delta", "item_id": item_id,
                           "output_index": 0, "content_index": 0, "delta": text}),
        );
        events.push(
            json!({"type": "response.output_text.done", "item_id": item_id,
                           "output_index": 0, "content_index": 0, "text": text}),
        );
        events.push(json!({"type": "response.output_item.done", "output_index": 0, "item": done}));
        output.push(done);
    }
    let (input, out) = usage(n);
    events.push(json!({"type": "response.completed", "response": {
        "id": format!("resp_{n}"), "object": "response", "status": "completed", "output": output,
        "usage": {"input_tokens": input, "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens": out, "output_tokens_details": {"reasoning_tokens": 0},
                  "total_tokens": input + out}}}));
    for (sequence, event) in events.iter_mut().enumerate() {
        event["sequence_number"] = json!(sequence);
    }
    typed(&events)
}

/// Anthropic Messages events: one tool_use block per call (input streamed in two pieces) or
/// one text block.
fn messages(n: usize, calls: &[(&str, &str, Value)], text: Option<&str>) -> Reply {
    messages_ending(n, calls, text, None)
}

/// [`messages`] with the stop reason given (`max_tokens`), instead of the one its content
/// implies.
fn messages_ending(
    n: usize,
    calls: &[(&str, &str, Value)],
    text: Option<&str>,
    stop: Option<&str>,
) -> Reply {
    let (input, out) = usage(n);
    let mut events = vec![json!({"type": "message_start", "message": {
        "id": format!("msg_0{n}"), "type": "message", "role": "assistant",
        "model": "claude-sonnet-4-5-20250929", "content": [], "stop_reason": null,
        "usage": {"input_tokens": input, "cache_creation_input_tokens": 0,
                  "cache_read_input_tokens": 0, "output_tokens": 1}}})];
    for (index, (id, name, args)) in calls.iter().enumerate() {
        let args = args.to_string();
        events.push(json!({"type": "content_block_start", "index": index,
                           "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}));
        let (head, tail) = args.split_at(args.len() / 2);
        for piece in [head, tail] {
            events.push(json!({"type": "content_block_delta", "index": index,
                               "delta": {"type": "input_json_delta", "partial_json": piece}}));
        }
        events.push(json!({"type": "content_block_stop", "index": index}));
    }
    if let Some(text) = text {
        events.push(json!({"type": "content_block_start", "index": 0,
                           "content_block": {"type": "text", "text": ""}}));
        events.push(json!({"type": "content_block_delta", "index": 0,
                           "delta": {"type": "text_delta", "text": text}}));
        events.push(json!({"type": "content_block_stop", "index": 0}));
    }
    let stop = stop.unwrap_or(if calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    });
    events.push(
        json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
                       "usage": {"output_tokens": out}}),
    );
    events.push(json!({"type": "message_stop"}));
    typed(&events)
}

fn typed(events: &[Value]) -> Reply {
    let mut body = String::new();
    for event in events {
        body.push_str(&format!(
            "event: {}\ndata: {event}\n\n",
            event["type"].as_str().unwrap()
        ));
    }
    Reply::sse(body)
}

fn read_calc() -> Value {
    json!({"path": "calc.py"})
}

fn edit_calc(new: &str) -> Value {
    json!({"path": "calc.py", "old_string": "return a - b", "new_string": new})
}

/// gpt-5's patch (its family's editing tool is apply_patch): `a - b` to `a + b`.
fn patch_calc() -> Value {
    json!({"patch": "*** Begin Patch\n*** Update File: calc.py\n@@\n-    return a - b\n+    return a + b\n*** End Patch"})
}

/// The tool names a request offered (Responses `tools[].name`, Messages `tools[].name`).
fn offered_tools(request: &Recorded) -> Vec<String> {
    request.json()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect()
}

/// gpt-5: reads, patches to `a + b`, finishes.
fn openai_server() -> MockServer {
    MockServer::start(vec![
        responses(1, &[("call_oa_read", "read_file", read_calc())], None),
        responses(2, &[("call_oa_edit", "apply_patch", patch_calc())], None),
        responses(3, &[], Some("Changed the minus to a plus.")),
    ])
}

/// claude: reads, then in one step edits to `b + a` and writes NOTES.md, finishes.
fn anthropic_server() -> MockServer {
    MockServer::start(vec![
        messages(1, &[("toolu_01Read", "read_file", read_calc())], None),
        messages(
            2,
            &[
                ("toolu_02Edit", "edit_file", edit_calc("return b + a")),
                (
                    "toolu_03Notes",
                    "write_file",
                    json!({"path": "NOTES.md", "content": NOTES}),
                ),
            ],
            None,
        ),
        messages(3, &[], Some("Fixed add() and left a note.")),
    ])
}

// ---------------------------------------------------------------------------------------------
// Running the binary.

/// Folders of one test: the project, the user config home and the temp folder (workspaces).
struct Setup {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    config_home: PathBuf,
    temp: PathBuf,
}

impl Setup {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let root = base.join("project");
        project(&root);
        let config_home = base.join("config");
        let temp = base.join("tmp");
        std::fs::create_dir_all(&config_home).unwrap();
        std::fs::create_dir_all(&temp).unwrap();
        Self {
            _tmp: tmp,
            root,
            config_home,
            temp,
        }
    }

    fn command(&self, openai: &MockServer, anthropic: &MockServer) -> Command {
        let mut command = versus();
        command
            .arg("-C")
            .arg(&self.root)
            .env("XDG_CONFIG_HOME", &self.config_home)
            .env("TMPDIR", &self.temp)
            .env("OPENAI_API_KEY", OPENAI_KEY)
            .env("OPENAI_BASE_URL", format!("{}/v1", openai.url()))
            .env("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
            .env("ANTHROPIC_BASE_URL", anthropic.url())
            .env_remove("OPENAI_API_BASE")
            .env_remove("GEMINI_API_KEY")
            .env_remove("GOOGLE_API_KEY");
        command
    }

    /// `versus ask` with both models and `extra` flags, against fresh mock servers.
    fn ask(&self, extra: &[&str]) -> (Output, MockServer, MockServer) {
        let openai = openai_server();
        let anthropic = anthropic_server();
        let output = self
            .command(&openai, &anthropic)
            .args([
                "ask",
                "fix add() so the tests pass",
                "-m",
                OPENAI,
                "-m",
                ANTHROPIC,
            ])
            .args(extra)
            .output()
            .unwrap();
        (output, openai, anthropic)
    }
}

fn text(output: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// The table line of `model`, split on whitespace:
/// model, status, files, +a, -r, tokens in, out, cost, time, "s", tools, failed, failed edits.
fn table_row(stdout: &str, model: &str) -> Vec<String> {
    let line = stdout
        .lines()
        .find(|l| l.starts_with(model))
        .unwrap_or_else(|| panic!("no table row for {model} in:\n{stdout}"));
    line.split_whitespace().map(str::to_string).collect()
}

/// The `=== MODEL (...) ===` section of the output, up to the next one.
fn section<'a>(stdout: &'a str, model: &str) -> &'a str {
    let start = stdout
        .find(&format!("=== {model} ("))
        .unwrap_or_else(|| panic!("no section for {model} in:\n{stdout}"));
    let rest = &stdout[start..];
    let end = rest[4..].find("\n=== ").map_or(rest.len(), |e| e + 4);
    &rest[..end]
}

/// Every regular file under `dir` (hidden folders included) whose bytes contain `needle`.
fn files_containing(dir: &Path, needle: &[u8]) -> (Vec<PathBuf>, usize) {
    let mut hits = Vec::new();
    let mut seen = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                stack.push(path);
            } else if meta.is_file() {
                seen += 1;
                let bytes = std::fs::read(&path).unwrap();
                if bytes.windows(needle.len()).any(|w| w == needle) {
                    hits.push(path);
                }
            }
        }
    }
    (hits, seen)
}

fn responses_results(request: &Recorded) -> Vec<(String, String)> {
    request.json()["input"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["type"] == "function_call_output")
        .map(|i| {
            (
                i["call_id"].as_str().unwrap().to_string(),
                i["output"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn anthropic_last_results(request: &Recorded) -> Vec<(String, String)> {
    let body = request.json();
    let last = body["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["role"], "user");
    last["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            assert_eq!(b["type"], "tool_result", "{last}");
            (
                b["tool_use_id"].as_str().unwrap().to_string(),
                b["content"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// The test.

#[test]
fn ask_with_two_real_providers_pick_and_rewind_without_leaking_keys() {
    let setup = Setup::new();
    let root = &setup.root;
    let before = tree(root);
    let mut outputs: Vec<(String, String)> = Vec::new();

    // 1. Ask both: the table and the diffs, nothing of the user's changes.
    let (output, openai, anthropic) = setup.ask(&[]);
    let (stdout, stderr) = text(&output);
    assert!(
        output.status.success(),
        "versus ask failed:\n{stdout}\n{stderr}"
    );
    outputs.push((stdout.clone(), stderr.clone()));
    assert_eq!(tree(root), before, "ask without --pick changes nothing");

    let row = table_row(&stdout, OPENAI);
    assert_eq!(
        row[1..8],
        ["done", "1", "+1", "-1", "6000", "300", "$0.0105"],
        "{stdout}"
    );
    assert_eq!(
        row[10..],
        ["2", "0", "0"],
        "two tool calls, none failed, no failed edit"
    );
    let row = table_row(&stdout, ANTHROPIC);
    assert_eq!(
        row[1..8],
        ["done", "2", "+2", "-1", "6000", "300", "$0.0225"],
        "{stdout}"
    );
    assert_eq!(row[10..], ["3", "0", "0"]);

    let diff = section(&stdout, OPENAI);
    assert!(
        diff.starts_with("=== openai/gpt-5 (done, 1 file(s), +1 -1) ==="),
        "{diff}"
    );
    assert!(diff.contains("Changed the minus to a plus."), "{diff}");
    assert!(
        diff.contains("-    return a - b\n+    return a + b\n"),
        "{diff}"
    );
    assert!(
        !diff.contains("b + a") && !diff.contains("NOTES.md"),
        "{diff}"
    );
    let diff = section(&stdout, ANTHROPIC);
    assert!(
        diff.starts_with("=== anthropic/claude-sonnet-4-5 (done, 2 file(s), +2 -1) ==="),
        "{diff}"
    );
    assert!(
        diff.contains("-    return a - b\n+    return b + a\n"),
        "{diff}"
    );
    assert!(diff.contains("NOTES.md") && diff.contains("+add() subtracted; fixed."));
    assert!(!diff.contains("return a + b"), "{diff}");

    // The requests: the right endpoints and keys, and each step's results sent back.
    let sent = openai.requests();
    assert_eq!(sent.len(), 3);
    for request in &sent {
        assert_eq!(request.target, "/v1/responses");
        assert_eq!(
            request.header("authorization"),
            Some(format!("Bearer {OPENAI_KEY}").as_str())
        );
        assert_eq!(request.json()["model"], "gpt-5");
    }
    let results = responses_results(&sent[1]);
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].0, "call_oa_read");
    assert!(results[0].1.contains("return a - b"), "{}", results[0].1);
    let results = responses_results(&sent[2]);
    assert_eq!(results[1].0, "call_oa_edit");
    assert!(
        results[1].1.contains("M calc.py (+1 -1"),
        "{}",
        results[1].1
    );
    // Each family gets its own editing tool (edit_tools = "family", the default), and the
    // system prompt names only the tools it has.
    let tools = offered_tools(&sent[0]);
    assert!(tools.iter().any(|t| t == "apply_patch"), "{tools:?}");
    assert!(!tools.iter().any(|t| t == "edit_file"), "{tools:?}");
    let instructions = sent[0].json()["instructions"].as_str().unwrap().to_string();
    assert!(!instructions.contains("- edit_file:"), "{instructions}");
    let sent = anthropic.requests();
    assert_eq!(sent.len(), 3);
    for request in &sent {
        assert_eq!(request.target, "/v1/messages");
        assert_eq!(request.header("x-api-key"), Some(ANTHROPIC_KEY));
        assert_eq!(request.json()["model"], "claude-sonnet-4-5");
    }
    let tools = offered_tools(&sent[0]);
    assert!(tools.iter().any(|t| t == "edit_file"), "{tools:?}");
    assert!(!tools.iter().any(|t| t == "apply_patch"), "{tools:?}");
    let results = anthropic_last_results(&sent[2]);
    let ids: Vec<&str> = results.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(ids, ["toolu_02Edit", "toolu_03Notes"]);
    assert!(results[0].1.contains("edited calc.py"), "{}", results[0].1);
    assert!(results[1].1.contains("wrote NOTES.md"), "{}", results[1].1);

    // 2. The same run with --pick: exactly claude's change set is written.
    let (output, _openai, _anthropic) = setup.ask(&["--pick", ANTHROPIC]);
    let (stdout, stderr) = text(&output);
    assert!(
        output.status.success(),
        "versus ask --pick failed:\n{stdout}\n{stderr}"
    );
    outputs.push((stdout.clone(), stderr.clone()));
    assert!(
        stdout.contains(&format!("Applied {ANTHROPIC} (apply ")),
        "{stdout}"
    );
    let mut expected = before.clone();
    let calc_mode = expected["calc.py"].1;
    expected.insert("calc.py".into(), (hash(CALC_ANTHROPIC), calc_mode));
    let notes_mode = std::fs::metadata(root.join("NOTES.md"))
        .map(|m| m.permissions().mode() & 0o7777)
        .unwrap_or(0);
    expected.insert("NOTES.md".into(), (hash(NOTES), notes_mode));
    assert_eq!(tree(root), expected, "only claude's two files changed");
    assert_eq!(notes_mode & 0o111, 0, "a new text file is not executable");
    assert_eq!(
        std::fs::read_to_string(root.join("calc.py")).unwrap(),
        CALC_ANTHROPIC
    );
    assert_ne!(
        std::fs::read_to_string(root.join("calc.py")).unwrap(),
        CALC_OPENAI
    );
    let preferences =
        std::fs::read_to_string(root.join(".versus/preferences.jsonl")).unwrap_or_default();
    let last: Value = serde_json::from_str(preferences.lines().last().unwrap()).unwrap();
    assert_eq!(last["chosen"], json!([ANTHROPIC]), "{preferences}");

    // 3. Rewind: the tree as it was, byte for byte and mode for mode.
    let openai = openai_server();
    let anthropic = anthropic_server();
    let output = setup
        .command(&openai, &anthropic)
        .args(["rewind", "--yes"])
        .output()
        .unwrap();
    let (stdout, stderr) = text(&output);
    assert!(
        output.status.success(),
        "rewind failed:\n{stdout}\n{stderr}"
    );
    outputs.push((stdout, stderr));
    assert_eq!(tree(root), before, "rewind restores the tree exactly");
    assert!(openai.requests().is_empty() && anthropic.requests().is_empty());

    // 4. No key anywhere: project (.versus/ and .git/ included), config home, temp folder,
    //    and everything printed.
    for key in [OPENAI_KEY, ANTHROPIC_KEY, "SECRET-123456", "SECRET-654321"] {
        for dir in [root, &setup.config_home, &setup.temp] {
            let (hits, _) = files_containing(dir, key.as_bytes());
            assert!(hits.is_empty(), "{key} found in {hits:?}");
        }
        for (stdout, stderr) in &outputs {
            assert!(
                !stdout.contains(key) && !stderr.contains(key),
                "{key} printed"
            );
        }
    }
    // The search really covered versus's own files: session logs, snapshots, preferences.
    let (_, seen) = files_containing(&root.join(".versus"), b"x");
    assert!(seen >= 3, "only {seen} files under .versus/");
    let (logged, _) = files_containing(&root.join(".versus"), b"call_oa_edit");
    assert!(!logged.is_empty(), "the session log records the tool calls");
}

/// Regression: Ollama not running meant 14 s of silent retries. A refused connection to this
/// machine says at once that nothing listens there, and where the address comes from.
#[test]
fn a_local_server_that_is_not_running_is_named_at_once_without_retries() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("notes.txt"), "hello\n").unwrap();
    // A port nothing listens on: bound, then released.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = util::versus()
        .arg("-C")
        .arg(&root)
        .args(["ask", "hi", "-m", "ollama/llama3.2", "--json", "--quiet"])
        .env("XDG_CONFIG_HOME", root.join(".no-config"))
        .env("OLLAMA_BASE_URL", format!("http://127.0.0.1:{port}"))
        .output()
        .unwrap();
    let (stdout, stderr) = text(&out);
    let doc: Value = serde_json::from_str(&stdout).unwrap_or_else(|_| panic!("{stdout}\n{stderr}"));
    let model = &doc["models"][0];
    assert_eq!(model["status"], "error", "{model}");
    let error = model["error"].as_str().unwrap();
    assert!(
        error.contains(&format!("nothing listens at http://127.0.0.1:{port}/v1"))
            && error.contains("OLLAMA_BASE_URL"),
        "{error}"
    );
    // No retry was made: the session log holds no `retrying` event.
    let sessions = root.join(".versus/sessions");
    let session = std::fs::read_dir(&sessions)
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    let log = std::fs::read_to_string(session.path().join("events.jsonl")).unwrap();
    assert!(log.contains("nothing listens"), "{log}");
    assert!(!log.contains("\"retrying\""), "{log}");
}

/// Wire finding 3 of issue 25: an answer cut at the output token limit is not "done". The
/// table, the JSON and the session log say `max tokens`, with why.
#[test]
fn an_answer_cut_at_the_token_limit_is_reported_as_max_tokens_not_done() {
    let setup = Setup::new();
    let openai = MockServer::start(Vec::new());
    let anthropic = MockServer::start(vec![messages_ending(
        1,
        &[],
        Some("Here is the start of a long expla"),
        Some("max_tokens"),
    )]);
    let run = |extra: &[&str]| {
        let out = setup
            .command(&openai, &anthropic)
            .args(["ask", "explain calc.py", "-m", ANTHROPIC, "--quiet"])
            .args(extra)
            .output()
            .unwrap();
        text(&out)
    };
    let (stdout, stderr) = run(&[]);
    let row = table_row(&stdout, ANTHROPIC);
    assert_eq!(row[1..3], ["max", "tokens"], "{stdout}\n{stderr}");
    let anthropic_again = MockServer::start(vec![messages_ending(
        1,
        &[],
        Some("Cut again"),
        Some("max_tokens"),
    )]);
    let out = setup
        .command(&openai, &anthropic_again)
        .args([
            "ask",
            "explain calc.py",
            "-m",
            ANTHROPIC,
            "--quiet",
            "--json",
        ])
        .output()
        .unwrap();
    let (stdout, stderr) = text(&out);
    let doc: Value = serde_json::from_str(&stdout).unwrap_or_else(|_| panic!("{stdout}\n{stderr}"));
    let model = &doc["models"][0];
    assert_eq!(model["status"], "max_tokens", "{model}");
    assert!(
        model["error"]
            .as_str()
            .is_some_and(|e| e.contains("output token limit")),
        "{model}"
    );
}

/// Wire finding 1 of issue 25: a custom provider with no key that answers 401 is told to check
/// where that provider's key is configured, for every kind: never nothing (the OpenAI kinds
/// said "check " and stopped) and never another API's variable (the Anthropic and Gemini kinds
/// named `ANTHROPIC_API_KEY` and `GEMINI_API_KEY`).
#[test]
fn a_custom_provider_without_a_key_is_told_where_its_key_goes_on_401() {
    for kind in ["openai-chat", "openai-responses", "anthropic", "gemini"] {
        let setup = Setup::new();
        let server = MockServer::start(vec![Reply::json(
            401,
            r#"{"error": {"message": "missing api key", "type": "invalid_request_error"}}"#,
        )]);
        let config = setup.config_home.join("versus/config.toml");
        std::fs::create_dir_all(config.parent().unwrap()).unwrap();
        std::fs::write(
            &config,
            format!(
                "[providers.local]\nkind = \"{kind}\"\nbase_url = \"{}/v1\"\n",
                server.url()
            ),
        )
        .unwrap();
        let out = versus()
            .arg("-C")
            .arg(&setup.root)
            .env("XDG_CONFIG_HOME", &setup.config_home)
            .env("TMPDIR", &setup.temp)
            .env_remove("OPENAI_API_KEY")
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("GEMINI_API_KEY")
            .env_remove("GOOGLE_API_KEY")
            .args(["ask", "hi", "-m", "local/some-model", "--json", "--quiet"])
            .output()
            .unwrap();
        let (stdout, stderr) = text(&out);
        let doc: Value =
            serde_json::from_str(&stdout).unwrap_or_else(|_| panic!("{kind}: {stdout}\n{stderr}"));
        let error = doc["models"][0]["error"].as_str().unwrap_or_default();
        assert!(
            error.contains("authentication failed")
                && error.contains("check api_key_env in [providers.local]"),
            "{kind}: {error}"
        );
        for other in ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"] {
            assert!(!error.contains(other), "{kind}: {error}");
        }
    }
}

#[test]
fn edit_tools_both_in_the_user_config_gives_every_model_both_editing_tools() {
    let setup = Setup::new();
    let dir = setup.config_home.join("versus");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), "edit_tools = \"both\"\n").unwrap();
    let (output, openai, anthropic) = setup.ask(&[]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    for tools in [
        offered_tools(&openai.requests()[0]),
        offered_tools(&anthropic.requests()[0]),
    ] {
        assert!(tools.iter().any(|t| t == "edit_file"), "{tools:?}");
        assert!(tools.iter().any(|t| t == "apply_patch"), "{tools:?}");
    }
    // The same tools for both: the fairness ledger has nothing to say about them.
    assert!(!stdout.contains("editing tool"), "{stdout}");
}
