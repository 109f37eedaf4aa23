//! `versus ask` end to end through the real binary against the cloud providers (Azure OpenAI,
//! a LiteLLM proxy, AWS Bedrock), each served by a local mock that speaks that provider's exact
//! format and refuses (401, with why) any request whose URL or credentials are not what the
//! real service requires. Each runs the same loop: read calc.py, edit it, run `sh test.sh`
//! in bash, finish; the test checks the change, the tool results sent back, and that no
//! credential reaches the output, the project (`.versus/` included) or the temp folder.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util;

use crate::util::mock_server;

use std::path::{Path, PathBuf};
use std::process::Output;

use mock_server::*;
use serde_json::{Value, json};
use util::{git, versus};

const CALC: &str = "def add(a, b):\n    return a - b\n";
const TEST_SH: &str = "grep -q 'return a + b' calc.py && echo PASS || echo FAIL\n";

// ---------------------------------------------------------------------------------------------
// The project and the binary.

/// Folders of one test: the project, the user config home and the temp folder.
pub(crate) struct Setup {
    _tmp: tempfile::TempDir,
    pub(crate) root: PathBuf,
    pub(crate) home: PathBuf,
    pub(crate) config_home: PathBuf,
    pub(crate) temp: PathBuf,
}

impl Setup {
    pub(crate) fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let root = base.join("project");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join("calc.py"), CALC).unwrap();
        std::fs::write(root.join("test.sh"), TEST_SH).unwrap();
        git(&root, &["init", "-q"]);
        git(&root, &["add", "."]);
        git(&root, &["commit", "-qm", "init"]);
        let home = base.join("home");
        let config_home = base.join("config");
        let temp = base.join("tmp");
        for dir in [&home, &config_home, &temp] {
            std::fs::create_dir_all(dir).unwrap();
        }
        Self {
            _tmp: tmp,
            root,
            home,
            config_home,
            temp,
        }
    }

    /// Writes the user config (`~/.config/versus/config.toml`).
    pub(crate) fn user_config(&self, text: &str) {
        let path = self.config_home.join("versus/config.toml");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// `versus ask PROMPT -m MODEL --quiet` with only `env` of the providers' variables.
    pub(crate) fn ask(&self, model: &str, env: &[(&str, &str)], extra: &[&str]) -> Output {
        self.command(env)
            .args(["ask", "fix add() so the tests pass", "-m", model, "--quiet"])
            .args(extra)
            .output()
            .unwrap()
    }

    /// The binary in the project with the test's home, config and temp folders and only
    /// `env` of the providers' variables (set on the child only).
    pub(crate) fn command(&self, env: &[(&str, &str)]) -> std::process::Command {
        let mut command = util::versus_without_providers();
        command
            .arg("-C")
            .arg(&self.root)
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", &self.config_home)
            .env("TMPDIR", &self.temp);
        for (name, value) in env {
            command.env(name, value);
        }
        command
    }

    /// Asserts that no file under the project, the config home or the temp folder, and
    /// nothing printed, contains any of `secrets`.
    pub(crate) fn assert_nowhere(&self, outputs: &[&Output], secrets: &[&str]) {
        for secret in secrets {
            for dir in [&self.root, &self.config_home, &self.temp] {
                let hits = files_containing(dir, secret.as_bytes());
                assert!(hits.is_empty(), "{secret} found in {hits:?}");
            }
            for output in outputs {
                let (stdout, stderr) = text(output);
                assert!(
                    !stdout.contains(secret) && !stderr.contains(secret),
                    "{secret} printed:\n{stdout}\n{stderr}"
                );
            }
        }
    }
}

pub(crate) fn text(output: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Every regular file under `dir` whose bytes contain `needle`.
fn files_containing(dir: &Path, needle: &[u8]) -> Vec<PathBuf> {
    let mut hits = Vec::new();
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
                let bytes = std::fs::read(&path).unwrap();
                if bytes.windows(needle.len()).any(|w| w == needle) {
                    hits.push(path);
                }
            }
        }
    }
    hits
}

// ---------------------------------------------------------------------------------------------
// The loop: read -> edit -> bash -> finish, in any format.

/// One step of the scripted model: tool calls `(id, name, arguments)` or a final text.
pub(crate) enum Step {
    Calls(Vec<(&'static str, &'static str, Value)>),
    Text(&'static str),
}

pub(crate) fn fix_loop() -> Vec<Step> {
    fix_loop_editing(
        "edit_file",
        json!({"path": "calc.py", "old_string": "return a - b", "new_string": "return a + b"}),
    )
}

/// The same loop for a model of OpenAI's patch family (GPT-4.1, GPT-5, ...), which is given
/// apply_patch instead of edit_file (`edit_tools = "family"`, the default).
pub(crate) fn fix_loop_patching() -> Vec<Step> {
    fix_loop_editing(
        "apply_patch",
        json!({"patch": "*** Begin Patch\n*** Update File: calc.py\n@@\n-    return a - b\n+    return a + b\n*** End Patch"}),
    )
}

fn fix_loop_editing(tool: &'static str, arguments: Value) -> Vec<Step> {
    vec![
        Step::Calls(vec![("call_read", "read_file", json!({"path": "calc.py"}))]),
        Step::Calls(vec![("call_edit", tool, arguments)]),
        Step::Calls(vec![(
            "call_bash",
            "bash",
            json!({"command": "sh test.sh"}),
        )]),
        Step::Text("Fixed add(): test.sh prints PASS."),
    ]
}

/// What the run must show: done, calc.py fixed in the diff, three tool calls.
pub(crate) fn assert_fixed(output: &Output, model: &str) {
    let (stdout, stderr) = text(output);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    let row: Vec<&str> = stdout
        .lines()
        .find(|l| l.starts_with(model))
        .unwrap_or_else(|| panic!("no row for {model}:\n{stdout}\n{stderr}"))
        .split_whitespace()
        .collect();
    assert_eq!(row[1..5], ["done", "1", "+1", "-1"], "{stdout}\n{stderr}");
    assert!(
        stdout.contains("-    return a - b\n+    return a + b\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("Fixed add(): test.sh prints PASS."),
        "{stdout}"
    );
}

/// `chat.completion.chunk`s of one step: a role chunk, per call an id+name chunk and its
/// arguments in two pieces, the finish chunk, a usage chunk, `[DONE]`.
pub(crate) fn chat_stream(n: usize, step: &Step) -> Reply {
    let id = format!("chatcmpl-{n}");
    let chunk = |delta: Value, finish: Value| {
        json!({"id": id, "object": "chat.completion.chunk", "created": 1_760_000_000 + n,
               "model": "gpt-4.1-2025-04-14",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let mut events = vec![chunk(
        json!({"role": "assistant", "content": ""}),
        Value::Null,
    )];
    let finish = match step {
        Step::Text(text) => {
            events.push(chunk(json!({"content": text}), Value::Null));
            "stop"
        }
        Step::Calls(calls) => {
            for (index, (call_id, name, args)) in calls.iter().enumerate() {
                let args = args.to_string();
                events.push(chunk(
                    json!({"tool_calls": [{"index": index, "id": call_id, "type": "function",
                                            "function": {"name": name, "arguments": ""}}]}),
                    Value::Null,
                ));
                let (head, tail) = args.split_at(args.len() / 2);
                for piece in [head, tail] {
                    events.push(chunk(
                        json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}),
                        Value::Null,
                    ));
                }
            }
            "tool_calls"
        }
    };
    events.push(chunk(json!({}), json!(finish)));
    events.push(json!({"id": id, "object": "chat.completion.chunk", "choices": [],
        "usage": {"prompt_tokens": 1000 * n, "completion_tokens": 100, "total_tokens": 1000 * n + 100}}));
    let mut body = String::new();
    for event in events {
        body.push_str(&format!("data: {event}\n\n"));
    }
    body.push_str("data: [DONE]\n\n");
    Reply::sse(body)
}

/// Responses API events of one step (created, items added / argument deltas / done, text,
/// completed with usage).
pub(crate) fn responses_stream(n: usize, step: &Step) -> Reply {
    let mut events = vec![json!({"type": "response.created", "response": {
        "id": format!("resp_{n}"), "object": "response", "status": "in_progress", "output": []}})];
    let mut output = Vec::new();
    match step {
        Step::Calls(calls) => {
            for (index, (call_id, name, args)) in calls.iter().enumerate() {
                let args = args.to_string();
                let item_id = format!("fc_{n}_{index}");
                let item = |arguments: &str, status: &str| {
                    json!({"type": "function_call", "id": item_id, "call_id": call_id,
                           "name": name, "arguments": arguments, "status": status})
                };
                events.push(json!({"type": "response.output_item.added",
                                   "output_index": index, "item": item("", "in_progress")}));
                events.push(json!({"type": "response.function_call_arguments.delta",
                                   "item_id": item_id, "output_index": index, "delta": args}));
                events.push(json!({"type": "response.function_call_arguments.done",
                                   "item_id": item_id, "output_index": index, "arguments": args}));
                events.push(json!({"type": "response.output_item.done",
                                   "output_index": index, "item": item(&args, "completed")}));
                output.push(item(&args, "completed"));
            }
        }
        Step::Text(text) => {
            let item_id = format!("msg_{n}");
            let done = json!({"type": "message", "id": item_id, "status": "completed",
                "role": "assistant",
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
                json!({"type": "response.output_item.done", "output_index": 0,
                               "item": done}),
            );
            output.push(done);
        }
    }
    events.push(json!({"type": "response.completed", "response": {
        "id": format!("resp_{n}"), "object": "response", "status": "completed", "output": output,
        "usage": {"input_tokens": 1000 * n, "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens": 100, "output_tokens_details": {"reasoning_tokens": 0},
                  "total_tokens": 1000 * n + 100}}}));
    let mut body = String::new();
    for (sequence, mut event) in events.into_iter().enumerate() {
        event["sequence_number"] = json!(sequence);
        body.push_str(&format!(
            "event: {}\ndata: {event}\n\n",
            event["type"].as_str().unwrap()
        ));
    }
    Reply::sse(body)
}

/// The tool results in a Chat request's messages: `(tool_call_id, content)`.
fn chat_results(request: &Recorded) -> Vec<(String, String)> {
    request.json()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            (
                m["tool_call_id"].as_str().unwrap().to_string(),
                m["content"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The tool results in a Responses request's input: `(call_id, output)`.
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

/// The results every step sent back: after the last step, the read, edit and bash results
/// with their ids, the file's text, the edit and PASS.
fn assert_results(results: &[(String, String)]) {
    assert_results_edited(results, "edited calc.py");
}

/// [`assert_results`] with the editing tool's own result (`M calc.py (+1 -1)` for apply_patch).
fn assert_results_edited(results: &[(String, String)], edited: &str) {
    let ids: Vec<&str> = results.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(ids, ["call_read", "call_edit", "call_bash"], "{results:?}");
    assert!(results[0].1.contains("return a - b"), "{results:?}");
    assert!(results[1].1.contains(edited), "{results:?}");
    assert!(results[2].1.contains("PASS"), "{results:?}");
}

// ---------------------------------------------------------------------------------------------
// Azure OpenAI.

const AZURE_KEY: &str = "azure-key-SECRET-0a1b2c3d";
const ENTRA_TOKEN: &str = "eyJ0eXAiOiJKV1Qi.entra-SECRET-token.sig";

/// A mock Azure resource: deployment `my-gpt41`, Chat at the deployment's URL with
/// `api-version=2024-10-21` and the `api-key` header, as Azure requires.
fn azure_deployment_check(request: &Recorded) -> Result<(), String> {
    let expected = "/openai/deployments/my-gpt41/chat/completions?api-version=2024-10-21";
    if request.method != "POST" || request.target != expected {
        return Err(format!(
            "Resource not found: {} {} (want POST {expected})",
            request.method, request.target
        ));
    }
    if request.header("api-key") != Some(AZURE_KEY) {
        return Err("Access denied due to invalid subscription key".to_string());
    }
    if request.header("authorization").is_some() {
        return Err("both api-key and Authorization sent".to_string());
    }
    Ok(())
}

/// The v1 API with an Entra ID token: `/openai/v1/responses`, `Authorization: Bearer`, no
/// `api-key`, the deployment in the body's `model`.
fn azure_entra_check(request: &Recorded) -> Result<(), String> {
    if request.target != "/openai/v1/responses" {
        return Err(format!("Resource not found: {}", request.target));
    }
    if request.header("authorization") != Some(&format!("Bearer {ENTRA_TOKEN}")) {
        return Err("Unauthorized. Access token is missing, invalid, audience is incorrect (https://cognitiveservices.azure.com), or have expired.".to_string());
    }
    if request.header("api-key").is_some() {
        return Err("api-key sent with a token".to_string());
    }
    if request.json()["model"] != "my-gpt5" {
        return Err(format!(
            "The API deployment {} does not exist",
            request.json()["model"]
        ));
    }
    Ok(())
}

#[test]
fn azure_deployment_with_api_key_runs_the_loop() {
    let setup = Setup::new();
    let steps = fix_loop();
    let server = MockServer::start_checked(
        steps
            .iter()
            .enumerate()
            .map(|(i, s)| chat_stream(i + 1, s))
            .collect(),
        azure_deployment_check,
    );
    let endpoint = format!("{}/", server.url());
    let output = setup.ask(
        "azure/my-gpt41",
        &[
            ("AZURE_OPENAI_ENDPOINT", &endpoint),
            ("AZURE_OPENAI_API_KEY", AZURE_KEY),
        ],
        &[],
    );
    assert_eq!(server.refused(), Vec::<String>::new());
    assert_fixed(&output, "azure/my-gpt41");
    let sent = server.requests();
    assert_eq!(sent.len(), 4);
    // OpenAI's dialect: Azure's reasoning deployments refuse `max_tokens`.
    assert!(
        sent[0].json().get("max_tokens").is_none(),
        "{}",
        sent[0].json()
    );
    assert_results(&chat_results(&sent[3]));
    setup.assert_nowhere(&[&output], &[AZURE_KEY, "SECRET-0a1b2c3d"]);
}

#[test]
fn azure_v1_api_with_an_entra_token_from_the_user_config() {
    let setup = Setup::new();
    let steps = fix_loop();
    let replies = |steps: &[Step]| {
        steps
            .iter()
            .enumerate()
            .map(|(i, s)| responses_stream(i + 1, s))
            .collect::<Vec<_>>()
    };
    // The token from a variable the user config names.
    let server = MockServer::start_checked(replies(&steps), azure_entra_check);
    setup.user_config(&format!(
        "[providers.work]\nkind = \"azure\"\nbase_url = \"{}/openai/v1\"\napi = \"responses\"\nentra_token_env = \"WORK_ENTRA_TOKEN\"\n",
        server.url()
    ));
    let output = setup.ask("work/my-gpt5", &[("WORK_ENTRA_TOKEN", ENTRA_TOKEN)], &[]);
    assert_eq!(server.refused(), Vec::<String>::new());
    assert_fixed(&output, "work/my-gpt5");
    let sent = server.requests();
    assert_eq!(sent.len(), 4);
    assert_results(&responses_results(&sent[3]));

    // The token printed by a command (az's JSON shape), run once for the whole loop.
    let server = MockServer::start_checked(replies(&steps), azure_entra_check);
    let counter = setup.home.join("token-runs");
    let script = setup.home.join("get-token.sh");
    std::fs::write(
        &script,
        format!(
            "echo run >> '{}'\nprintf '{{\"accessToken\": \"%s\", \"expires_on\": 4102444800}}' '{ENTRA_TOKEN}'\n",
            counter.display()
        ),
    )
    .unwrap();
    setup.user_config(&format!(
        "[providers.work]\nkind = \"azure\"\nbase_url = \"{}/openai/v1\"\napi = \"responses\"\nentra_token_command = \"sh '{}'\"\n",
        server.url(),
        script.display()
    ));
    let second = setup.ask("work/my-gpt5", &[], &[]);
    assert_eq!(server.refused(), Vec::<String>::new());
    assert_fixed(&second, "work/my-gpt5");
    assert_eq!(std::fs::read_to_string(&counter).unwrap(), "run\n");
    setup.assert_nowhere(&[&output, &second], &[ENTRA_TOKEN, "entra-SECRET-token"]);
}

/// A project's config may not name a token source: it could send the user's token to a
/// server of its choosing, or run any command.
#[test]
fn a_project_config_cannot_set_an_entra_token_source() {
    let setup = Setup::new();
    std::fs::create_dir_all(setup.root.join(".versus")).unwrap();
    std::fs::write(
        setup.root.join(".versus/config.toml"),
        "[providers.work]\nkind = \"azure\"\nbase_url = \"https://x.openai.azure.com\"\nentra_token_command = \"touch pwned\"\n",
    )
    .unwrap();
    let output = versus()
        .arg("-C")
        .arg(&setup.root)
        .env("HOME", &setup.home)
        .env("XDG_CONFIG_HOME", &setup.config_home)
        .env("TMPDIR", &setup.temp)
        .args(["trust"])
        .output()
        .unwrap();
    let (stdout, stderr) = text(&output);
    let output = setup.ask("work/d", &[], &[]);
    let (out2, err2) = text(&output);
    assert!(!output.status.success(), "{stdout}{stderr}\n{out2}\n{err2}");
    assert!(
        err2.contains("may not set `entra_token_env` or `entra_token_command`"),
        "{out2}\n{err2}"
    );
    assert!(!setup.root.join("pwned").exists());
}

/// The server echoing the key or the token back in its error: the message reaches the user
/// with the credential replaced by `[redacted]`.
#[test]
fn azure_credentials_echoed_by_the_server_are_redacted() {
    let setup = Setup::new();
    let server = MockServer::start(vec![Reply::json(
        401,
        format!(
            r#"{{"error": {{"code": "401", "message": "Access denied: key {AZURE_KEY} is not valid for this resource"}}}}"#
        ),
    )]);
    let endpoint = server.url();
    let output = setup.ask(
        "azure/my-gpt41",
        &[
            ("AZURE_OPENAI_ENDPOINT", &endpoint),
            ("AZURE_OPENAI_API_KEY", AZURE_KEY),
        ],
        &["--json"],
    );
    let (stdout, stderr) = text(&output);
    let doc: Value = serde_json::from_str(&stdout).unwrap_or_else(|_| panic!("{stdout}\n{stderr}"));
    let error = doc["models"][0]["error"].as_str().unwrap();
    assert!(
        error.contains("Access denied: key [redacted] is not valid")
            && error.contains("AZURE_OPENAI_API_KEY"),
        "{error}"
    );
    setup.assert_nowhere(&[&output], &[AZURE_KEY, "SECRET-0a1b2c3d"]);
}

// ---------------------------------------------------------------------------------------------
// LiteLLM proxy.

const LITELLM_KEY: &str = "sk-litellm-SECRET-77aa88bb";

/// A LiteLLM proxy with a master key: `/chat/completions` at its root, the key as a bearer.
fn litellm_check(request: &Recorded) -> Result<(), String> {
    if request.target != "/chat/completions" {
        return Err(format!("Not Found: {}", request.target));
    }
    if request.header("authorization") != Some(&format!("Bearer {LITELLM_KEY}")) {
        return Err("Authentication Error, No api key passed in.".to_string());
    }
    Ok(())
}

#[test]
fn litellm_proxy_runs_the_loop_priced_as_the_model_it_names() {
    let setup = Setup::new();
    // gpt-4.1 edits with apply_patch, its family's tool.
    let steps = fix_loop_patching();
    let server = MockServer::start_checked(
        steps
            .iter()
            .enumerate()
            .map(|(i, s)| chat_stream(i + 1, s))
            .collect(),
        litellm_check,
    );
    let output = setup.ask(
        "litellm/gpt-4.1",
        &[
            ("LITELLM_BASE_URL", &server.url()),
            ("LITELLM_API_KEY", LITELLM_KEY),
        ],
        &[],
    );
    assert_eq!(server.refused(), Vec::<String>::new());
    assert_fixed(&output, "litellm/gpt-4.1");
    let sent = server.requests();
    assert_eq!(sent.len(), 4);
    assert_eq!(sent[0].json()["model"], "gpt-4.1");
    assert_results_edited(&chat_results(&sent[3]), "M calc.py (+1 -1");
    // 10,000 input tokens at $2/M and 400 output at $8/M: OpenAI's gpt-4.1 price.
    let (stdout, _) = text(&output);
    let row: Vec<&str> = stdout
        .lines()
        .find(|l| l.starts_with("litellm/gpt-4.1"))
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(row[5..8], ["10.0k", "400", "$0.0232"], "{stdout}");
    setup.assert_nowhere(&[&output], &[LITELLM_KEY, "SECRET-77aa88bb"]);

    // A proxy without a master key: no key needed, none sent.
    let server = MockServer::start(vec![chat_stream(1, &Step::Text("hello"))]);
    let output = setup.ask(
        "litellm/gpt-4.1",
        &[("LITELLM_BASE_URL", &server.url())],
        &[],
    );
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert_eq!(server.requests()[0].header("authorization"), None);
}

// ---------------------------------------------------------------------------------------------
// AWS Bedrock.

const AWS_KEY_ID: &str = "AKIDBEDROCKTEST01";
const AWS_SECRET: &str = "aws-secret-SECRET-9f8e7d6c5b4a";
const AWS_TOKEN: &str = "aws-session-SECRET-token-1a2b3c";
const BEDROCK_MODEL: &str = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";

fn bedrock_expected() -> util::aws::Expected {
    util::aws::Expected {
        access_key_id: AWS_KEY_ID,
        secret_access_key: AWS_SECRET,
        session_token: Some(AWS_TOKEN),
        region: "us-west-2",
    }
}

/// Bedrock Runtime: ConverseStream at the model's path (its `:` percent-encoded), signed with
/// SigV4 for `bedrock` in us-west-2 by the profile's temporary credentials.
fn bedrock_check(request: &Recorded) -> Result<(), String> {
    let path = "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream";
    if request.method != "POST" || request.target != path {
        return Err(format!(
            "UnknownOperationException: {} {}",
            request.method, request.target
        ));
    }
    util::aws::verify_sigv4(request, &bedrock_expected())
}

#[test]
fn bedrock_converse_stream_runs_the_loop_signed_with_profile_credentials_and_retries_throttling() {
    let setup = Setup::new();
    // The profile's keys in a shared credentials file, the region in the config file.
    let credentials = setup.home.join("aws-credentials");
    let config = setup.home.join("aws-config");
    std::fs::write(
        &credentials,
        format!(
            "[default]\naws_access_key_id = AKIDWRONG\naws_secret_access_key = wrong\n\n[work]\naws_access_key_id = {AWS_KEY_ID}\naws_secret_access_key = {AWS_SECRET}\naws_session_token = {AWS_TOKEN}\n"
        ),
    )
    .unwrap();
    std::fs::write(&config, "[profile work]\nregion = us-west-2\n").unwrap();
    let mut replies = vec![
        // Throttled first, as an HTTP 429, then in the stream: both retried.
        Reply::json(
            429,
            r#"{"message":"Too many requests, please wait before trying again."}"#,
        )
        .header(
            "x-amzn-ErrorType",
            "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/",
        ),
        util::aws::stream_reply(util::aws::exception(
            "throttlingException",
            "Too many tokens, please wait before trying again.",
        )),
    ];
    for (i, step) in fix_loop().iter().enumerate() {
        let bytes = match step {
            Step::Calls(calls) => util::aws::converse(i + 1, calls, None),
            Step::Text(text) => util::aws::converse(i + 1, &[], Some(text)),
        };
        replies.push(util::aws::stream_reply(bytes));
    }
    let server = MockServer::start_checked(replies, bedrock_check);
    let model = format!("bedrock/{BEDROCK_MODEL}");
    let output = setup.ask(
        &model,
        &[
            ("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", &server.url()),
            ("AWS_SHARED_CREDENTIALS_FILE", credentials.to_str().unwrap()),
            ("AWS_CONFIG_FILE", config.to_str().unwrap()),
            ("AWS_PROFILE", "work"),
        ],
        &[],
    );
    assert_eq!(server.refused(), Vec::<String>::new());
    assert_fixed(&output, &model);
    let sent = server.requests();
    assert_eq!(sent.len(), 6, "two throttled attempts, then four steps");
    // Every attempt signed anew (its own x-amz-date may repeat within a second, but each
    // carries a signature the mock verified).
    let body = sent[5].json();
    assert_eq!(
        body["system"][0]["text"].as_str().map(|s| !s.is_empty()),
        Some(true)
    );
    assert!(
        body["toolConfig"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["toolSpec"]["name"] == "bash"),
        "{body}"
    );
    let results = util::aws::tool_results(&sent[5]);
    // The last request carries only the bash result in its last message; the earlier ones
    // are in earlier user messages.
    assert_eq!(results.len(), 1, "{results:?}");
    assert_eq!(results[0].0, "call_bash");
    assert!(results[0].1.contains("PASS"), "{results:?}");
    let all: Vec<(String, String)> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().unwrap().clone())
        .filter_map(|b| {
            let r = b.get("toolResult")?;
            Some((
                r["toolUseId"].as_str()?.to_string(),
                r["content"][0]["text"].as_str()?.to_string(),
            ))
        })
        .collect();
    assert_results(&all);
    let uses: Vec<&str> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().unwrap())
        .filter_map(|b| b.pointer("/toolUse/toolUseId")?.as_str())
        .collect();
    assert_eq!(uses, ["call_read", "call_edit", "call_bash"]);
    // Priced from the table: the inference profile as its model, $3/M in and $15/M out.
    let (stdout, _) = text(&output);
    let row: Vec<&str> = stdout
        .lines()
        .find(|l| l.starts_with(&model))
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(row[5..8], ["10.0k", "400", "$0.0360"], "{stdout}");
    setup.assert_nowhere(
        &[&output],
        &[AWS_TOKEN, "SECRET-9f8e7d6c5b4a", "SECRET-token-1a2b3c"],
    );
}

/// Credentials in the environment, and what a missing region or missing credentials say.
#[test]
fn bedrock_with_environment_credentials_and_clear_errors_without() {
    let setup = Setup::new();
    let server = MockServer::start_checked(
        vec![util::aws::stream_reply(util::aws::converse(
            1,
            &[],
            Some("Hello from Bedrock."),
        ))],
        |request| {
            util::aws::verify_sigv4(
                request,
                &util::aws::Expected {
                    session_token: None,
                    ..bedrock_expected()
                },
            )
        },
    );
    let model = format!("bedrock/{BEDROCK_MODEL}");
    let output = setup.ask(
        &model,
        &[
            ("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", &server.url()),
            ("AWS_ACCESS_KEY_ID", AWS_KEY_ID),
            ("AWS_SECRET_ACCESS_KEY", AWS_SECRET),
            ("AWS_REGION", "us-west-2"),
        ],
        &[],
    );
    let (stdout, stderr) = text(&output);
    assert_eq!(server.refused(), Vec::<String>::new());
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("Hello from Bedrock."), "{stdout}");

    let output = setup.ask(&model, &[("AWS_REGION", "us-west-2")], &["--json"]);
    let (stdout, stderr) = text(&output);
    let doc: Value = serde_json::from_str(&stdout).unwrap_or_else(|_| panic!("{stdout}\n{stderr}"));
    let error = doc["models"][0]["error"].as_str().unwrap();
    assert!(
        error.contains("no AWS credentials") && error.contains("AWS_ACCESS_KEY_ID"),
        "{error}"
    );
    let output = setup.ask(
        &model,
        &[
            ("AWS_ACCESS_KEY_ID", AWS_KEY_ID),
            ("AWS_SECRET_ACCESS_KEY", AWS_SECRET),
        ],
        &["--json"],
    );
    let (stdout, stderr) = text(&output);
    let doc: Value = serde_json::from_str(&stdout).unwrap_or_else(|_| panic!("{stdout}\n{stderr}"));
    let error = doc["models"][0]["error"].as_str().unwrap();
    assert!(
        error.contains("no AWS region") && error.contains("AWS_REGION"),
        "{error}"
    );
}

// AWS SSO: the token `aws sso login` cached, exchanged at the portal for the role's keys.

const SSO_TOKEN: &str = "sso-access-SECRET-token-77aa88bb";

/// `~/.aws/config` of an SSO profile `dev` (session `corp`, portal in eu-west-1, Bedrock in
/// us-west-2) and the token cache file `aws sso login` writes: named by the SHA-1 of the
/// session name, computed here independently of versus.
fn sso_home(setup: &Setup, expires_at: &str) {
    let aws = setup.home.join(".aws");
    std::fs::create_dir_all(aws.join("sso/cache")).unwrap();
    std::fs::write(
        aws.join("config"),
        "[profile dev]\nsso_session = corp\nsso_account_id = 111122223333\nsso_role_name = BedrockUser\nregion = us-west-2\n\n[sso-session corp]\nsso_start_url = https://corp.awsapps.com/start\nsso_region = eu-west-1\nsso_registration_scopes = sso:account:access\n",
    )
    .unwrap();
    let digest = ring::digest::digest(&ring::digest::SHA1_FOR_LEGACY_USE_ONLY, b"corp");
    let name: String = digest.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    std::fs::write(
        aws.join(format!("sso/cache/{name}.json")),
        json!({"startUrl": "https://corp.awsapps.com/start", "region": "eu-west-1",
               "accessToken": SSO_TOKEN, "expiresAt": expires_at,
               "clientId": "client-id", "clientSecret": "client-secret",
               "refreshToken": "refresh-SECRET-token"})
        .to_string(),
    )
    .unwrap();
}

/// The SSO portal: GetRoleCredentials for the profile's account and role, with the cached
/// token in `x-amz-sso_bearer_token`; answers the keys the Bedrock mock verifies.
fn sso_portal() -> MockServer {
    MockServer::start_checked(
        vec![Reply::json(
            200,
            json!({"roleCredentials": {"accessKeyId": AWS_KEY_ID, "secretAccessKey": AWS_SECRET,
                   "sessionToken": AWS_TOKEN, "expiration": 4_102_444_800_000u64}})
            .to_string(),
        )],
        |request| {
            let target = "/federation/credentials?account_id=111122223333&role_name=BedrockUser";
            if request.method != "GET" || request.target != target {
                return Err(format!(
                    "unknown operation {} {}",
                    request.method, request.target
                ));
            }
            match request.header("x-amz-sso_bearer_token") {
                Some(SSO_TOKEN) => Ok(()),
                other => Err(format!("UnauthorizedException: bad token {other:?}")),
            }
        },
    )
}

#[test]
fn bedrock_signs_with_the_role_credentials_of_an_sso_profile_fetched_once() {
    let setup = Setup::new();
    sso_home(&setup, "2099-01-01T00:00:00Z");
    let portal = sso_portal();
    let mut replies = Vec::new();
    for (i, step) in fix_loop().iter().enumerate() {
        let bytes = match step {
            Step::Calls(calls) => util::aws::converse(i + 1, calls, None),
            Step::Text(text) => util::aws::converse(i + 1, &[], Some(text)),
        };
        replies.push(util::aws::stream_reply(bytes));
    }
    let server = MockServer::start_checked(replies, bedrock_check);
    let model = format!("bedrock/{BEDROCK_MODEL}");
    let output = setup.ask(
        &model,
        &[
            ("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", &server.url()),
            ("AWS_ENDPOINT_URL_SSO", &portal.url()),
            ("AWS_PROFILE", "dev"),
        ],
        &[],
    );
    assert_eq!(portal.refused(), Vec::<String>::new());
    assert_eq!(server.refused(), Vec::<String>::new());
    assert_fixed(&output, &model);
    // Four signed steps, one portal call: the role credentials are kept until they expire.
    assert_eq!(server.requests().len(), 4);
    assert_eq!(portal.requests().len(), 1);
    setup.assert_nowhere(
        &[&output],
        &[
            SSO_TOKEN,
            AWS_TOKEN,
            "SECRET-9f8e7d6c5b4a",
            "refresh-SECRET",
        ],
    );
    // `versus models` says where Bedrock's credentials come from, without asking the portal.
    let bedrock_row = |env: &[(&str, &str)]| {
        let out = setup.command(env).arg("models").output().unwrap();
        let (stdout, _) = text(&out);
        stdout
            .lines()
            .find(|l| l.trim_start().starts_with("bedrock "))
            .unwrap_or_else(|| panic!("{stdout}"))
            .to_string()
    };
    let row = bedrock_row(&[("AWS_PROFILE", "dev")]);
    assert!(
        row.contains("profile `dev`: AWS SSO, after `aws sso login`"),
        "{row}"
    );
    assert_eq!(portal.requests().len(), 1);
    let row = bedrock_row(&[("AWS_PROFILE", "nobody")]);
    assert!(row.contains("not found (set AWS_ACCESS_KEY_ID"), "{row}");
    let row = bedrock_row(&[("AWS_BEARER_TOKEN_BEDROCK", "k-SECRET-bearer-1234")]);
    assert!(
        row.contains("AWS_BEARER_TOKEN_BEDROCK (a Bedrock API key)"),
        "{row}"
    );
    assert!(!row.contains("k-SECRET-bearer"), "{row}");
}

#[test]
fn an_expired_sso_sign_in_says_to_run_aws_sso_login() {
    let setup = Setup::new();
    sso_home(&setup, "2020-01-01T00:00:00Z");
    let portal = sso_portal();
    let server = MockServer::start(Vec::new());
    let output = setup.ask(
        &format!("bedrock/{BEDROCK_MODEL}"),
        &[
            ("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", &server.url()),
            ("AWS_ENDPOINT_URL_SSO", &portal.url()),
            ("AWS_PROFILE", "dev"),
        ],
        &["--json"],
    );
    let (stdout, stderr) = text(&output);
    let doc: Value = serde_json::from_str(&stdout).unwrap_or_else(|_| panic!("{stdout}\n{stderr}"));
    let error = doc["models"][0]["error"].as_str().unwrap();
    assert!(
        error.contains("AWS SSO sign-in of profile `dev` has expired")
            && error.contains("run `aws sso login --profile dev`"),
        "{error}"
    );
    assert!(portal.requests().is_empty() && server.requests().is_empty());
    setup.assert_nowhere(&[&output], &[SSO_TOKEN]);
}

// A Bedrock API key (`AWS_BEARER_TOKEN_BEDROCK`): a bearer token instead of a signature.

const BEDROCK_API_KEY: &str = "ABSKQmVkcm9ja0FQSUtleS1-SECRET-bearer-0123456789";

#[test]
fn bedrock_api_key_is_sent_as_a_bearer_token_and_never_logged() {
    let setup = Setup::new();
    let server = MockServer::start_checked(
        vec![util::aws::stream_reply(util::aws::converse(
            1,
            &[],
            Some("Hello with a Bedrock API key."),
        ))],
        |request| {
            let expected = format!("Bearer {BEDROCK_API_KEY}");
            if request.header("authorization") != Some(expected.as_str()) {
                return Err(format!(
                    "UnrecognizedClientException: {:?}",
                    request.header("authorization")
                ));
            }
            for sigv4 in ["x-amz-date", "x-amz-security-token", "x-amz-content-sha256"] {
                if let Some(value) = request.header(sigv4) {
                    return Err(format!(
                        "a SigV4 header came with the bearer token: {sigv4}: {value}"
                    ));
                }
            }
            Ok(())
        },
    );
    let log = setup.home.join("debug.jsonl");
    let model = format!("bedrock/{BEDROCK_MODEL}");
    let output = setup.ask(
        &model,
        &[
            ("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", &server.url()),
            ("AWS_BEARER_TOKEN_BEDROCK", BEDROCK_API_KEY),
            ("AWS_REGION", "us-west-2"),
        ],
        &["--debug-log", log.to_str().unwrap()],
    );
    let (stdout, stderr) = text(&output);
    assert_eq!(server.refused(), Vec::<String>::new());
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("Hello with a Bedrock API key."), "{stdout}");
    let logged = std::fs::read_to_string(&log).unwrap();
    let request: Value = logged
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|l| l["kind"] == "request")
        .unwrap_or_else(|| panic!("{logged}"));
    assert_eq!(
        request["headers"]["authorization"], "[redacted]",
        "{logged}"
    );
    assert!(
        !logged.contains(BEDROCK_API_KEY) && !logged.contains("SECRET-bearer"),
        "{logged}"
    );
    setup.assert_nowhere(&[&output], &[BEDROCK_API_KEY, "SECRET-bearer"]);
}

// Reasoning and seed on Bedrock, through `versus run` (a recipe is where both are set).

/// One ConverseStream answer that thinks (text and signature in `reasoningContent` deltas,
/// as Claude on Bedrock streams them), then calls tools or answers.
fn converse_thinking(
    thinking: &str,
    signature: &str,
    calls: &[(&str, &str, Value)],
    text: Option<&str>,
) -> Vec<u8> {
    use util::aws::event;
    let mut out = event("messageStart", json!({"role": "assistant"}));
    let (head, tail) = thinking.split_at(thinking.len() / 2);
    for piece in [head, tail] {
        out.extend(event(
            "contentBlockDelta",
            json!({"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": piece}}}),
        ));
    }
    out.extend(event(
        "contentBlockDelta",
        json!({"contentBlockIndex": 0, "delta": {"reasoningContent": {"signature": signature}}}),
    ));
    out.extend(event("contentBlockStop", json!({"contentBlockIndex": 0})));
    let mut index = 1;
    if let Some(text) = text {
        out.extend(event(
            "contentBlockDelta",
            json!({"contentBlockIndex": index, "delta": {"text": text}}),
        ));
        out.extend(event(
            "contentBlockStop",
            json!({"contentBlockIndex": index}),
        ));
        index += 1;
    }
    for (id, name, input) in calls {
        out.extend(event(
            "contentBlockStart",
            json!({"contentBlockIndex": index, "start": {"toolUse": {"toolUseId": id, "name": name}}}),
        ));
        out.extend(event(
            "contentBlockDelta",
            json!({"contentBlockIndex": index, "delta": {"toolUse": {"input": input.to_string()}}}),
        ));
        out.extend(event(
            "contentBlockStop",
            json!({"contentBlockIndex": index}),
        ));
        index += 1;
    }
    let stop = if calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    out.extend(event("messageStop", json!({"stopReason": stop})));
    out.extend(event(
        "metadata",
        json!({"usage": {"inputTokens": 1000, "outputTokens": 100, "totalTokens": 1100}}),
    ));
    out
}

#[test]
fn bedrock_claude_thinks_when_a_recipe_asks_and_its_seed_is_warned_about() {
    let setup = Setup::new();
    let signature = "EqQBCkYIBxgCKkBbedrock-thinking-signature==";
    let server = MockServer::start_checked(
        vec![
            util::aws::stream_reply(converse_thinking(
                "The bug is in calc.py; read it first.",
                signature,
                &[("call_read", "read_file", json!({"path": "calc.py"}))],
                None,
            )),
            util::aws::stream_reply(converse_thinking(
                "It subtracts.",
                "sig-2",
                &[],
                Some("add() subtracts instead of adding."),
            )),
        ],
        |request| {
            util::aws::verify_sigv4(
                request,
                &util::aws::Expected {
                    session_token: None,
                    ..bedrock_expected()
                },
            )
        },
    );
    let model = format!("bedrock/{BEDROCK_MODEL}");
    let recipe = setup.home.join("think.recipe.md");
    std::fs::write(
        &recipe,
        format!(
            "# Think\nversion: 1\n\n## Models\n- {model}\n\n## Model Parameters\ntemperature: 0.2\nreasoning_effort: high\nseed: 7\n\n## Tasks\n\n- find the bug in calc.py\n"
        ),
    )
    .unwrap();
    let env = [
        ("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", server.url()),
        ("AWS_ACCESS_KEY_ID", AWS_KEY_ID.to_string()),
        ("AWS_SECRET_ACCESS_KEY", AWS_SECRET.to_string()),
        ("AWS_REGION", "us-west-2".to_string()),
    ];
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let warning = format!(
        "warning: {model}: seed 7 is not sent; the bedrock API takes no seed, so its samples may differ where other models' repeat"
    );
    let checked = setup
        .command(&env)
        .args(["recipe", "check"])
        .arg(&recipe)
        .output()
        .unwrap();
    let (stdout, stderr) = text(&checked);
    assert!(checked.status.success(), "{stdout}\n{stderr}");
    assert!(
        format!("{stdout}{stderr}").lines().any(|l| l == warning),
        "{stdout}\n{stderr}"
    );
    let out_dir = setup.home.join("out");
    let output = setup
        .command(&env)
        .arg("run")
        .arg(&recipe)
        .arg("--out")
        .arg(&out_dir)
        .output()
        .unwrap();
    let (stdout, stderr) = text(&output);
    assert_eq!(server.refused(), Vec::<String>::new());
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stderr.contains(&warning), "{stderr}");
    let sent = server.requests();
    assert_eq!(sent.len(), 2, "{stderr}");
    for request in &sent {
        let body = request.json();
        // Claude's thinking in Converse's extra fields, maxTokens above its budget, no
        // temperature (Claude refuses it with thinking) and no seed anywhere.
        assert_eq!(
            body["additionalModelRequestFields"],
            json!({"thinking": {"type": "enabled", "budget_tokens": 24_576}}),
            "{body}"
        );
        assert_eq!(
            body["inferenceConfig"],
            json!({"maxTokens": 28_672}),
            "{body}"
        );
        assert!(!body.to_string().contains("seed"), "{body}");
    }
    // The first answer's thinking was decoded whole and goes back, signed, before its call.
    let second = sent[1].json();
    let assistant = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "assistant")
        .unwrap();
    assert_eq!(
        assistant["content"][0],
        json!({"reasoningContent": {"reasoningText": {
            "text": "The bug is in calc.py; read it first.", "signature": signature}}}),
        "{second}"
    );
    assert_eq!(assistant["content"][1]["toolUse"]["name"], "read_file");
    let report = std::fs::read_to_string(out_dir.join("report.json")).unwrap();
    assert!(report.contains(&model), "{report}");
}
