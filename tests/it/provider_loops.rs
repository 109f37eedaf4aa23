//! The whole agent loop through each real adapter: `runner::fan_out_each` -> `Agent::run_turn` ->
//! `HttpModel` + the provider's `Wire`, against a local `MockServer` that answers with
//! hand-written streams in that provider's exact wire format, on a real git project in its own
//! worktree.
//!
//! One scenario is written once ([`Step`]s of tool calls or final text) and rendered per
//! provider; one extractor per provider reads the last tool turn back out of each recorded
//! request, checking the shape that provider requires (Chat: `role: tool` messages with
//! `tool_call_id`; Responses: `function_call_output` items with `call_id`; Anthropic: one user
//! message made only of `tool_result` blocks with `tool_use_id`; Gemini: `functionResponse`
//! parts with the call's name and, when Gemini issued one, its id). The assertions on what the
//! tools really returned, on the stats and on the proposals are then the same for all four.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util;

use util::git;

use crate::util::mock_server;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use mock_server::*;
use serde_json::{Value, json};
use util::fan_out;
use versus::agent::{Agent, AgentSettings, system_prompt};
use versus::model::{AgentEvent, Message, Part, Role, RunStop};
use versus::provider::anthropic::AnthropicWire;
use versus::provider::gemini::GeminiWire;
use versus::provider::http::default_client;
use versus::provider::openai_chat::ChatWire;
use versus::provider::openai_responses::ResponsesWire;
use versus::provider::{HttpModel, RetryPolicy, Wire, WireConfig};
use versus::runner::{ModelEntry, ModelResult, RunEvent, RunOptions};
use versus::tools::{ToolLimits, ToolRegistry};
use versus::workspace::{Base, Isolation};

const KEY: &str = "sk-test-loop-key-424242";
const ORIGINAL: &str = "def add(a, b):\n    return a - b\n";
const FIXED: &str = "def add(a, b):\n    return a + b\n";
const TEST_SH: &str = "grep -q 'return a + b' calc.py && echo PASS || echo FAIL\n";

// ---------------------------------------------------------------------------------------------
// The project and the run.

/// A committed git project with a buggy `calc.py` and a `test.sh` that says PASS once fixed.
fn project() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    std::fs::write(root.join("calc.py"), ORIGINAL).unwrap();
    std::fs::write(root.join("test.sh"), TEST_SH).unwrap();
    git(&root, &["init", "-q"]);
    git(&root, &["add", "."]);
    git(&root, &["commit", "-qm", "init"]);
    (tmp, root)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Api {
    Chat,
    Responses,
    Anthropic,
    Gemini,
}

const ALL: [Api; 4] = [Api::Chat, Api::Responses, Api::Anthropic, Api::Gemini];

impl Api {
    fn model(self) -> &'static str {
        match self {
            Api::Chat => "gpt-4.1",
            Api::Responses => "gpt-5",
            Api::Anthropic => "claude-sonnet-4-5",
            Api::Gemini => "gemini-2.5-pro",
        }
    }

    fn wire(self, server: &MockServer, vision: bool) -> Arc<dyn Wire> {
        let (provider, base, hint) = match self {
            Api::Chat => ("openai", format!("{}/v1", server.url()), "OPENAI_API_KEY"),
            Api::Responses => ("openai", format!("{}/v1", server.url()), "OPENAI_API_KEY"),
            Api::Anthropic => ("anthropic", server.url(), "ANTHROPIC_API_KEY"),
            Api::Gemini => ("gemini", server.url(), "GEMINI_API_KEY"),
        };
        let config = WireConfig {
            provider: provider.into(),
            base_url: base,
            api_key: Some(KEY.into()),
            key_hint: hint.into(),
            base_hint: String::new(),
            headers: Vec::new(),
            vision,
        };
        match self {
            Api::Chat => Arc::new(ChatWire::new(config)),
            Api::Responses => Arc::new(ResponsesWire::new(config)),
            Api::Anthropic => Arc::new(AnthropicWire::new(config)),
            Api::Gemini => Arc::new(GeminiWire::new(config)),
        }
    }

    /// The request target every step must go to.
    fn target(self) -> String {
        match self {
            Api::Chat => "/v1/chat/completions".into(),
            Api::Responses => "/v1/responses".into(),
            Api::Anthropic => "/v1/messages".into(),
            Api::Gemini => format!(
                "/v1beta/models/{}:streamGenerateContent?alt=sse",
                self.model()
            ),
        }
    }

    /// Where the key travels.
    fn auth(self, request: &Recorded) -> Option<String> {
        match self {
            Api::Chat | Api::Responses => request.header("authorization").map(str::to_string),
            Api::Anthropic => request.header("x-api-key").map(str::to_string),
            Api::Gemini => request.header("x-goog-api-key").map(str::to_string),
        }
    }

    fn expected_auth(self) -> String {
        match self {
            Api::Chat | Api::Responses => format!("Bearer {KEY}"),
            _ => KEY.to_string(),
        }
    }
}

/// Serves `steps` rendered for `api` and runs one turn through the runner in a worktree.
async fn run(
    api: Api,
    root: &Path,
    scratch: &Path,
    steps: &[Step],
) -> (MockServer, ModelResult, Vec<AgentEvent>) {
    run_with(api, root, scratch, steps, true).await
}

/// [`run`] with the model's vision setting chosen.
async fn run_with(
    api: Api,
    root: &Path,
    scratch: &Path,
    steps: &[Step],
    vision: bool,
) -> (MockServer, ModelResult, Vec<AgentEvent>) {
    let replies = steps
        .iter()
        .enumerate()
        .map(|(n, step)| render(api, step, n + 1))
        .collect();
    let server = MockServer::start(replies);
    let retry = RetryPolicy {
        max_tries: 2,
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(10),
        max_retry_after: Duration::from_millis(10),
    };
    let client = Arc::new(HttpModel::new(
        default_client().unwrap(),
        api.wire(&server, vision),
        retry,
    ));
    let tools = Arc::new(ToolRegistry::builtin());
    let settings = AgentSettings {
        system: system_prompt(&tools.guidance(), None),
        max_steps: 10,
        ..AgentSettings::default()
    };
    let entry = ModelEntry {
        label: format!("{api:?}/{}", api.model()),
        agent: Agent {
            client,
            model: api.model().to_string(),
            tools,
            settings,
            cost: None,
        },
        history: Vec::new(),
    };
    let options = RunOptions {
        isolation: Isolation::Worktree,
        limits: ToolLimits::default(),
        setup: None,
        workspace_parent: Some(scratch.join("ws")),
        spill_dir: scratch.join("spill"),
        output_filter: None,
        sandbox: versus::exec::SandboxSettings::default(),
        limit: None,
        mcp: None,
    };
    let base = Arc::new(Base::capture(root).unwrap());
    let (mut rx, _handle) = fan_out(
        base,
        vec![entry],
        Message::user("Fix add() and run the tests."),
        options,
    );
    let mut result = None;
    let mut events = Vec::new();
    while let Some(event) = rx.recv().await {
        match event {
            RunEvent::Agent { event, .. } => events.push(event),
            RunEvent::Finished { result: done, .. } => result = Some(*done),
            RunEvent::WorkspaceReady { .. }
            | RunEvent::Started { .. }
            | RunEvent::ToolsGiven { .. } => {}
        }
    }
    (server, result.unwrap(), events)
}

// ---------------------------------------------------------------------------------------------
// The scenario, written once.

#[derive(Debug, Clone)]
struct Call {
    /// The id the provider sends; `None`: Gemini sends none and matches results by name.
    id: Option<&'static str>,
    name: &'static str,
    /// The argument text exactly as the model streams it (may be invalid JSON).
    args: String,
}

#[derive(Debug, Clone)]
enum Step {
    Calls(Vec<Call>),
    Text(&'static str),
}

fn call(id: Option<&'static str>, name: &'static str, args: Value) -> Call {
    Call {
        id,
        name,
        args: args.to_string(),
    }
}

/// Ids in each provider's own style; Gemini leaves the edit call without one.
fn ids(api: Api) -> [Option<&'static str>; 3] {
    match api {
        Api::Chat => [
            Some("call_Rd7QkV2x9"),
            Some("call_Ed3LmP0q1"),
            Some("call_Bs8TnW4z6"),
        ],
        Api::Responses => [Some("call_r1xA"), Some("call_e2yB"), Some("call_b3zC")],
        Api::Anthropic => [
            Some("toolu_01ReadAbc"),
            Some("toolu_02EditDef"),
            Some("toolu_03BashGhi"),
        ],
        Api::Gemini => [Some("g-read-1"), None, Some("g-bash-3")],
    }
}

/// read_file, edit_file, bash running the test, final text.
fn fix_scenario(api: Api) -> Vec<Step> {
    let [read, edit, bash] = ids(api);
    vec![
        Step::Calls(vec![call(read, "read_file", json!({"path": "calc.py"}))]),
        Step::Calls(vec![call(
            edit,
            "edit_file",
            json!({"path": "calc.py", "old_string": "return a - b", "new_string": "return a + b"}),
        )]),
        Step::Calls(vec![call(bash, "bash", json!({"command": "sh test.sh"}))]),
        Step::Text("Fixed add(): it subtracted. test.sh prints PASS now."),
    ]
}

/// Tokens reported for step `n` (1-based): input grows with the conversation.
fn usage_of(n: usize) -> (u64, u64) {
    (100 * n as u64, 10 + n as u64)
}

/// Splits a text into three pieces at character boundaries (streams deliver fragments).
fn pieces(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    if chars.len() < 3 {
        return vec![text.to_string()];
    }
    let third = chars.len() / 3;
    vec![
        chars[..third].iter().collect(),
        chars[third..2 * third].iter().collect(),
        chars[2 * third..].iter().collect(),
    ]
}

// ---------------------------------------------------------------------------------------------
// Rendering a step in each wire format.

fn render(api: Api, step: &Step, n: usize) -> Reply {
    match api {
        Api::Chat => chat_stream(step, n),
        Api::Responses => responses_stream(step, n),
        Api::Anthropic => anthropic_stream(step, n),
        Api::Gemini => gemini_stream(step, n),
    }
}

fn data_lines(payloads: &[Value], done: bool) -> Reply {
    let mut body = String::new();
    for payload in payloads {
        body.push_str(&format!("data: {payload}\n\n"));
    }
    if done {
        body.push_str("data: [DONE]\n\n");
    }
    Reply::sse(body)
}

fn typed_events(payloads: &[Value]) -> Reply {
    let mut body = String::new();
    for payload in payloads {
        let kind = payload["type"].as_str().unwrap();
        body.push_str(&format!("event: {kind}\ndata: {payload}\n\n"));
    }
    Reply::sse(body)
}

/// `chat.completion.chunk`s: a role chunk, per call an id+name chunk then argument fragments
/// under the call's `index`, the finish chunk, a usage-only chunk, `[DONE]`.
fn chat_stream(step: &Step, n: usize) -> Reply {
    let id = format!("chatcmpl-loop{n}");
    let chunk = |delta: Value, finish: Value| {
        json!({"id": id, "object": "chat.completion.chunk", "created": 1_760_000_000 + n,
               "model": "gpt-4.1-2025-04-14", "system_fingerprint": "fp_loop",
               "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]})
    };
    let mut out = vec![chunk(
        json!({"role": "assistant", "content": null}),
        Value::Null,
    )];
    let finish = match step {
        Step::Text(text) => {
            for piece in pieces(text) {
                out.push(chunk(json!({"content": piece}), Value::Null));
            }
            "stop"
        }
        Step::Calls(calls) => {
            for (index, call) in calls.iter().enumerate() {
                out.push(chunk(
                    json!({"tool_calls": [{"index": index, "id": call.id.unwrap(), "type": "function",
                                            "function": {"name": call.name, "arguments": ""}}]}),
                    Value::Null,
                ));
                for piece in pieces(&call.args) {
                    out.push(chunk(
                        json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}),
                        Value::Null,
                    ));
                }
            }
            "tool_calls"
        }
    };
    out.push(chunk(json!({}), json!(finish)));
    let (input, output) = usage_of(n);
    out.push(
        json!({"id": id, "object": "chat.completion.chunk", "created": 1_760_000_000 + n,
                    "model": "gpt-4.1-2025-04-14", "choices": [],
                    "usage": {"prompt_tokens": input, "completion_tokens": output,
                              "total_tokens": input + output,
                              "prompt_tokens_details": {"cached_tokens": 0},
                              "completion_tokens_details": {"reasoning_tokens": 0}}}),
    );
    data_lines(&out, true)
}

/// Responses events: created, per output item added / deltas / done, then completed with the
/// output and usage.
fn responses_stream(step: &Step, n: usize) -> Reply {
    let response_id = format!("resp_loop{n}");
    let mut out = Vec::new();
    let mut items = Vec::new();
    out.push(
        json!({"type": "response.created", "response": {"id": response_id, "object": "response",
                    "status": "in_progress", "model": "gpt-5-2025-08-07", "output": []}}),
    );
    match step {
        Step::Text(text) => {
            let item_id = format!("msg_loop{n}");
            let done_item = json!({"type": "message", "id": item_id, "status": "completed", "role": "assistant",
                                   "content": [{"type": "output_text", "text": text, "annotations": []}]});
            out.push(
                json!({"type": "response.output_item.added", "output_index": 0,
                            "item": {"type": "message", "id": item_id, "status": "in_progress",
                                     "role": "assistant", "content": []}}),
            );
            out.push(json!({"type": "response.content_part.added", "item_id": item_id, "output_index": 0,
                            "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}}));
            for piece in pieces(text) {
                out.push(
                    json!({"type": "response.output_text.delta", "item_id": item_id,
                                "output_index": 0, "content_index": 0, "delta": piece}),
                );
            }
            out.push(
                json!({"type": "response.output_text.done", "item_id": item_id, "output_index": 0,
                            "content_index": 0, "text": text}),
            );
            out.push(json!({"type": "response.content_part.done", "item_id": item_id, "output_index": 0,
                            "content_index": 0, "part": {"type": "output_text", "text": text, "annotations": []}}));
            out.push(
                json!({"type": "response.output_item.done", "output_index": 0, "item": done_item}),
            );
            items.push(done_item);
        }
        Step::Calls(calls) => {
            for (index, call) in calls.iter().enumerate() {
                let item_id = format!("fc_loop{n}_{index}");
                let item = |arguments: &str, status: &str| {
                    json!({"type": "function_call", "id": item_id, "call_id": call.id.unwrap(),
                           "name": call.name, "arguments": arguments, "status": status})
                };
                out.push(
                    json!({"type": "response.output_item.added", "output_index": index,
                                "item": item("", "in_progress")}),
                );
                for piece in pieces(&call.args) {
                    out.push(
                        json!({"type": "response.function_call_arguments.delta", "item_id": item_id,
                                    "output_index": index, "delta": piece}),
                    );
                }
                out.push(
                    json!({"type": "response.function_call_arguments.done", "item_id": item_id,
                                "output_index": index, "arguments": call.args}),
                );
                out.push(
                    json!({"type": "response.output_item.done", "output_index": index,
                                "item": item(&call.args, "completed")}),
                );
                items.push(item(&call.args, "completed"));
            }
        }
    }
    let (input, output) = usage_of(n);
    out.push(json!({"type": "response.completed", "response": {
        "id": response_id, "object": "response", "status": "completed", "model": "gpt-5-2025-08-07",
        "output": items,
        "usage": {"input_tokens": input, "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens": output, "output_tokens_details": {"reasoning_tokens": 0},
                  "total_tokens": input + output}}}));
    for (sequence, event) in out.iter_mut().enumerate() {
        event["sequence_number"] = json!(sequence);
    }
    typed_events(&out)
}

/// Messages events: message_start, a text block or one tool_use block per call (input streamed
/// as `input_json_delta`), message_delta with the stop reason and usage, message_stop.
fn anthropic_stream(step: &Step, n: usize) -> Reply {
    let (input, output) = usage_of(n);
    let mut out = vec![json!({"type": "message_start", "message": {
        "id": format!("msg_01Loop{n}"), "type": "message", "role": "assistant",
        "model": "claude-sonnet-4-5-20250929", "content": [], "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": input, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
                  "output_tokens": 1}}})];
    let stop = match step {
        Step::Text(text) => {
            out.push(json!({"type": "content_block_start", "index": 0,
                            "content_block": {"type": "text", "text": ""}}));
            out.push(json!({"type": "ping"}));
            for piece in pieces(text) {
                out.push(json!({"type": "content_block_delta", "index": 0,
                                "delta": {"type": "text_delta", "text": piece}}));
            }
            out.push(json!({"type": "content_block_stop", "index": 0}));
            "end_turn"
        }
        Step::Calls(calls) => {
            for (index, call) in calls.iter().enumerate() {
                out.push(json!({"type": "content_block_start", "index": index,
                                "content_block": {"type": "tool_use", "id": call.id.unwrap(),
                                                  "name": call.name, "input": {}}}));
                out.push(json!({"type": "content_block_delta", "index": index,
                                "delta": {"type": "input_json_delta", "partial_json": ""}}));
                for piece in pieces(&call.args) {
                    out.push(json!({"type": "content_block_delta", "index": index,
                                    "delta": {"type": "input_json_delta", "partial_json": piece}}));
                }
                out.push(json!({"type": "content_block_stop", "index": index}));
            }
            "tool_use"
        }
    };
    out.push(
        json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
                    "usage": {"output_tokens": output}}),
    );
    out.push(json!({"type": "message_stop"}));
    typed_events(&out)
}

/// `alt=sse` chunks separated by CRLF, as Gemini sends them: function calls come whole (args
/// as an object, an `id` only when given), `finishReason: STOP` even with calls.
fn gemini_stream(step: &Step, n: usize) -> Reply {
    let (input, output) = usage_of(n);
    let usage = json!({"promptTokenCount": input, "candidatesTokenCount": output,
                       "totalTokenCount": input + output});
    let chunk = |parts: Value, finish: Option<&str>| {
        let mut candidate = json!({"content": {"parts": parts, "role": "model"}, "index": 0});
        if let Some(finish) = finish {
            candidate["finishReason"] = json!(finish);
        }
        json!({"candidates": [candidate], "usageMetadata": usage,
               "modelVersion": "gemini-2.5-pro", "responseId": format!("loop{n}")})
    };
    let mut out = Vec::new();
    match step {
        Step::Text(text) => {
            let split = pieces(text);
            let last = split.len() - 1;
            for (i, piece) in split.into_iter().enumerate() {
                let finish = (i == last).then_some("STOP");
                out.push(chunk(json!([{"text": piece}]), finish));
            }
        }
        Step::Calls(calls) => {
            let parts: Vec<Value> = calls
                .iter()
                .map(|call| {
                    let args: Value = serde_json::from_str(&call.args).unwrap();
                    let mut function = json!({"name": call.name, "args": args});
                    if let Some(id) = call.id {
                        function["id"] = json!(id);
                    }
                    json!({"functionCall": function})
                })
                .collect();
            out.push(chunk(Value::Array(parts), None));
            out.push(chunk(json!([{"text": ""}]), Some("STOP")));
        }
    }
    let mut body = String::new();
    for payload in out {
        body.push_str(&format!("data: {payload}\r\n\r\n"));
    }
    Reply::sse(body)
}

// ---------------------------------------------------------------------------------------------
// Reading the last tool turn back out of a recorded request.

/// A call as the request replays it.
#[derive(Debug, Clone, PartialEq)]
struct WireCall {
    id: Option<String>,
    name: String,
    /// The arguments as sent (a string for the OpenAI formats, an object otherwise).
    args: Value,
}

/// A tool result as the request carries it.
#[derive(Debug, Clone, PartialEq)]
struct WireResult {
    id: Option<String>,
    /// Only Gemini names the tool in a result.
    name: Option<String>,
    content: String,
    /// Only Anthropic (`is_error`) and Gemini (`response.error`) can say so.
    is_error: Option<bool>,
}

/// The model's last tool-calling turn and the results that follow it, from one request.
#[derive(Debug, Clone, PartialEq)]
struct ToolTurn {
    calls: Vec<WireCall>,
    results: Vec<WireResult>,
    /// Tool results anywhere in the request (the whole history travels every time).
    all_results: usize,
}

fn text(value: &Value) -> String {
    value.as_str().unwrap_or_default().to_string()
}

fn opt_text(value: &Value) -> Option<String> {
    value.as_str().map(str::to_string)
}

fn tool_turn(api: Api, body: &Value) -> Option<ToolTurn> {
    match api {
        Api::Chat => chat_turn(body),
        Api::Responses => responses_turn(body),
        Api::Anthropic => anthropic_turn(body),
        Api::Gemini => gemini_turn(body),
    }
}

/// Chat: the trailing `role: tool` messages, each with `tool_call_id`, right after the
/// assistant message whose `tool_calls` they answer.
fn chat_turn(body: &Value) -> Option<ToolTurn> {
    let messages = body["messages"].as_array().unwrap();
    let all_results = messages.iter().filter(|m| m["role"] == "tool").count();
    let start = messages.iter().rposition(|m| m["role"] != "tool")?;
    let tail = &messages[start + 1..];
    if tail.is_empty() {
        return None;
    }
    let assistant = &messages[start];
    assert_eq!(assistant["role"], "assistant", "results follow the calls");
    let calls = assistant["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            assert_eq!(c["type"], "function");
            WireCall {
                id: opt_text(&c["id"]),
                name: text(&c["function"]["name"]),
                args: c["function"]["arguments"].clone(),
            }
        })
        .collect();
    let results = tail
        .iter()
        .map(|m| {
            assert!(m["content"].is_string(), "{m}");
            WireResult {
                id: opt_text(&m["tool_call_id"]),
                name: None,
                content: text(&m["content"]),
                is_error: None,
            }
        })
        .collect();
    Some(ToolTurn {
        calls,
        results,
        all_results,
    })
}

/// Responses: the trailing `function_call_output` items (`call_id`, `output`) after the
/// `function_call` items they answer.
fn responses_turn(body: &Value) -> Option<ToolTurn> {
    let items = body["input"].as_array().unwrap();
    let kind = |i: &Value| i["type"].as_str().unwrap_or_default().to_string();
    let all_results = items
        .iter()
        .filter(|i| kind(i) == "function_call_output")
        .count();
    let start = items
        .iter()
        .rposition(|i| kind(i) != "function_call_output")?;
    let outputs = &items[start + 1..];
    if outputs.is_empty() {
        return None;
    }
    let first_call = items[..=start]
        .iter()
        .rposition(|i| kind(i) != "function_call")
        .map_or(0, |p| p + 1);
    let calls = items[first_call..=start]
        .iter()
        .map(|c| WireCall {
            id: opt_text(&c["call_id"]),
            name: text(&c["name"]),
            args: c["arguments"].clone(),
        })
        .collect();
    let results = outputs
        .iter()
        .map(|o| WireResult {
            id: opt_text(&o["call_id"]),
            name: None,
            content: text(&o["output"]),
            is_error: None,
        })
        .collect();
    Some(ToolTurn {
        calls,
        results,
        all_results,
    })
}

/// Anthropic: the last message is ONE user message made only of `tool_result` blocks; the one
/// before it is the assistant's, with the `tool_use` blocks.
fn anthropic_turn(body: &Value) -> Option<ToolTurn> {
    let messages = body["messages"].as_array().unwrap();
    let blocks = |m: &Value| m["content"].as_array().cloned().unwrap_or_default();
    let all_results = messages
        .iter()
        .flat_map(blocks)
        .filter(|b| b["type"] == "tool_result")
        .count();
    let last = messages.last()?;
    let content = blocks(last);
    if !content.iter().any(|b| b["type"] == "tool_result") {
        return None;
    }
    assert_eq!(last["role"], "user");
    assert!(
        content.iter().all(|b| b["type"] == "tool_result"),
        "one user message of tool_result blocks only: {last}"
    );
    let assistant = &messages[messages.len() - 2];
    assert_eq!(assistant["role"], "assistant");
    let calls = blocks(assistant)
        .iter()
        .filter(|b| b["type"] == "tool_use")
        .map(|b| WireCall {
            id: opt_text(&b["id"]),
            name: text(&b["name"]),
            args: b["input"].clone(),
        })
        .collect();
    let results = content
        .iter()
        .map(|b| WireResult {
            id: opt_text(&b["tool_use_id"]),
            name: None,
            content: text(&b["content"]),
            is_error: Some(b["is_error"] == true),
        })
        .collect();
    Some(ToolTurn {
        calls,
        results,
        all_results,
    })
}

/// Gemini: the last content is a `user` turn of `functionResponse` parts (name, response, and
/// the id when Gemini issued one), after the `model` turn with the `functionCall` parts.
fn gemini_turn(body: &Value) -> Option<ToolTurn> {
    let contents = body["contents"].as_array().unwrap();
    let parts = |c: &Value| c["parts"].as_array().cloned().unwrap_or_default();
    let all_results = contents
        .iter()
        .flat_map(parts)
        .filter(|p| p.get("functionResponse").is_some())
        .count();
    let last = contents.last()?;
    let answers = parts(last);
    if !answers.iter().any(|p| p.get("functionResponse").is_some()) {
        return None;
    }
    assert_eq!(last["role"], "user");
    assert!(
        answers.iter().all(|p| p.get("functionResponse").is_some()),
        "{last}"
    );
    let model = &contents[contents.len() - 2];
    assert_eq!(model["role"], "model");
    let calls = parts(model)
        .iter()
        .filter_map(|p| p.get("functionCall"))
        .map(|c| WireCall {
            id: opt_text(&c["id"]),
            name: text(&c["name"]),
            args: c["args"].clone(),
        })
        .collect();
    let results = answers
        .iter()
        .map(|p| {
            let r = &p["functionResponse"];
            let response = &r["response"];
            let (content, is_error) = match response.get("error") {
                Some(error) => (text(error), true),
                None => (text(&response["content"]), false),
            };
            WireResult {
                id: opt_text(&r["id"]),
                name: opt_text(&r["name"]),
                content,
                is_error: Some(is_error),
            }
        })
        .collect();
    Some(ToolTurn {
        calls,
        results,
        all_results,
    })
}

/// The canonical tool results of a conversation, in order: `(call_id, name, content, is_error)`.
fn canonical_results(messages: &[Message]) -> Vec<(String, String, String, bool)> {
    messages
        .iter()
        .filter(|m| m.role == Role::User)
        .flat_map(|m| m.parts.iter())
        .filter_map(|p| match p {
            Part::ToolResult {
                call_id,
                name,
                content,
                is_error,
                ..
            } => Some((call_id.clone(), name.clone(), content.clone(), *is_error)),
            _ => None,
        })
        .collect()
}

/// Checks request `k` (0-based) against step `k - 1`: the calls replayed with their ids and
/// the results answering them with the same ids, in order.
fn assert_turn(api: Api, request: &Recorded, step: &Step, k: usize) -> ToolTurn {
    let turn = tool_turn(api, &request.json())
        .unwrap_or_else(|| panic!("{api:?}: request {} carries no tool results", k + 1));
    let Step::Calls(calls) = step else {
        panic!("step {k} made no calls")
    };
    let names: Vec<&str> = turn.calls.iter().map(|c| c.name.as_str()).collect();
    let want: Vec<&str> = calls.iter().map(|c| c.name).collect();
    assert_eq!(names, want, "{api:?} request {}: replayed calls", k + 1);
    let sent_ids: Vec<Option<&str>> = turn.calls.iter().map(|c| c.id.as_deref()).collect();
    let want_ids: Vec<Option<&str>> = calls.iter().map(|c| c.id).collect();
    assert_eq!(sent_ids, want_ids, "{api:?} request {}: call ids", k + 1);
    let result_ids: Vec<Option<&str>> = turn.results.iter().map(|r| r.id.as_deref()).collect();
    assert_eq!(
        result_ids,
        want_ids,
        "{api:?} request {}: result ids",
        k + 1
    );
    if api == Api::Gemini {
        let result_names: Vec<Option<&str>> =
            turn.results.iter().map(|r| r.name.as_deref()).collect();
        let want_names: Vec<Option<&str>> = want.iter().map(|n| Some(*n)).collect();
        assert_eq!(result_names, want_names, "Gemini matches results by name");
    }
    turn
}

// ---------------------------------------------------------------------------------------------
// The tests.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_edit_test_finish_through_every_adapter() {
    for api in ALL {
        let (_tmp, root) = project();
        let scratch = tempfile::tempdir().unwrap();
        let steps = fix_scenario(api);
        let (server, result, events) = run(api, &root, scratch.path(), &steps).await;
        let outcome = result.outcome.as_ref().unwrap();
        assert_eq!(outcome.stop, RunStop::Completed, "{api:?}: {outcome:#?}");
        assert_eq!(outcome.error, None);
        assert_eq!(outcome.stats.steps, 4, "{api:?}");
        assert_eq!(outcome.stats.tool_calls, 3, "{api:?}");
        assert_eq!(
            outcome.stats.tool_errors, 0,
            "{api:?}: {:#?}",
            outcome.messages
        );
        assert_eq!(outcome.stats.retries, 0, "{api:?}");
        assert_eq!(
            outcome.final_text, "Fixed add(): it subtracted. test.sh prints PASS now.",
            "{api:?}"
        );
        // Usage from every step's stream, summed.
        assert_eq!(outcome.stats.usage.input, 100 + 200 + 300 + 400, "{api:?}");
        assert_eq!(outcome.stats.usage.output, 11 + 12 + 13 + 14, "{api:?}");

        // What the server received: four requests to the right endpoint with the key.
        let requests = server.requests();
        assert_eq!(requests.len(), 4, "{api:?}");
        for request in &requests {
            assert_eq!(request.method, "POST");
            assert_eq!(request.target, api.target(), "{api:?}");
            assert_eq!(
                api.auth(request).as_deref(),
                Some(api.expected_auth().as_str())
            );
        }
        assert_eq!(tool_turn(api, &requests[0].json()), None, "{api:?}");
        let expected = ["return a - b", "edited calc.py", "PASS"];
        for k in 1..4 {
            let turn = assert_turn(api, &requests[k], &steps[k - 1], k);
            assert_eq!(turn.results.len(), 1);
            let result = &turn.results[0];
            assert!(
                result.content.contains(expected[k - 1]),
                "{api:?} request {}: {:?} lacks {:?}",
                k + 1,
                result.content,
                expected[k - 1]
            );
            assert_ne!(result.is_error, Some(true), "{api:?}: {result:?}");
            assert_eq!(turn.all_results, k, "{api:?}: the history travels whole");
        }
        // The read result is the file as read_file shows it; bash did not see FAIL.
        let read = &tool_turn(api, &requests[1].json()).unwrap().results[0].content;
        assert!(read.contains("     2\t    return a - b"), "{read}");
        let bash = &tool_turn(api, &requests[3].json()).unwrap().results[0].content;
        assert!(!bash.contains("FAIL"), "{bash}");

        // The canonical transcript matches what went on the wire.
        let canonical = canonical_results(&outcome.messages);
        let names: Vec<&str> = canonical.iter().map(|r| r.1.as_str()).collect();
        assert_eq!(names, ["read_file", "edit_file", "bash"], "{api:?}");

        // The edit is a proposal: recorded in the workspace, the user's tree untouched.
        assert_eq!(result.writes.len(), 1, "{api:?}: {:#?}", result.writes);
        let write = &result.writes[0];
        assert_eq!(write.path, "calc.py");
        assert_eq!(write.origin.tool, "edit_file");
        assert_eq!(write.origin.call_id, canonical[1].0, "{api:?}");
        assert_eq!(
            write.content.as_deref().map(Vec::as_slice),
            Some(FIXED.as_bytes())
        );
        let workspace = result.workspace.as_ref().unwrap();
        assert_eq!(
            std::fs::read_to_string(workspace.root().join("calc.py")).unwrap(),
            FIXED
        );
        assert_eq!(
            std::fs::read_to_string(root.join("calc.py")).unwrap(),
            ORIGINAL
        );

        // The event stream saw three tool results and ended Completed.
        let results_seen = events
            .iter()
            .filter(|e| {
                matches!(
                    e,
                    AgentEvent::ToolResult {
                        is_error: false,
                        ..
                    }
                )
            })
            .count();
        assert_eq!(results_seen, 3, "{api:?}");
        assert!(matches!(
            events.last(),
            Some(AgentEvent::Finished {
                stop: RunStop::Completed
            })
        ));
    }
}

/// The first 16 bytes of a PNG (signature + IHDR length and type): binary, `.png`.
const PNG: [u8; 16] = [
    0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0x0D, b'I', b'H', b'D', b'R',
];
/// [`PNG`] in base64, written out so the test does not share the code under test.
const PNG_BASE64: &str = "iVBORw0KGgoAAAANSUhEUg==";
const PNG_TEXT: &str = "[binary file, 16 bytes]";
const PNG_NOTE: &str = "[binary file, 16 bytes]\n[versus] the image from read_file (image/png, 16 bytes) was not sent: this model does not accept images";

/// The project with `logo.png` committed.
fn picture_project() -> (tempfile::TempDir, PathBuf) {
    let (tmp, root) = project();
    std::fs::write(root.join("logo.png"), PNG).unwrap();
    git(&root, &["add", "."]);
    git(&root, &["commit", "-qm", "logo"]);
    (tmp, root)
}

/// read_file on the PNG, then a final answer.
fn picture_scenario(api: Api) -> (Vec<Step>, &'static str) {
    let id = match api {
        Api::Chat => "call_Img7Pq",
        Api::Responses => "call_img1",
        Api::Anthropic => "toolu_01ImageAbc",
        Api::Gemini => "g-img-1",
    };
    let steps = vec![
        Step::Calls(vec![call(
            Some(id),
            "read_file",
            json!({"path": "logo.png"}),
        )]),
        Step::Text("It is a logo."),
    ];
    (steps, id)
}

/// The tool result of the one read_file call, exactly as `api` must carry a picture, taken
/// from the request that followed the call.
fn picture_result(api: Api, body: &Value, id: &str) -> Value {
    let data_url = format!("data:image/png;base64,{PNG_BASE64}");
    match api {
        Api::Chat => {
            let messages = body["messages"].as_array().unwrap();
            let tail = &messages[messages.len() - 2..];
            assert_eq!(
                tail[0],
                json!({"role": "tool", "tool_call_id": id, "content": PNG_TEXT})
            );
            assert_eq!(
                tail[1],
                json!({"role": "user", "content": [
                    {"type": "text", "text": format!("[versus] the image returned by read_file (call {id}):")},
                    {"type": "image_url", "image_url": {"url": data_url}}
                ]})
            );
            tail[1].clone()
        }
        Api::Responses => {
            let input = body["input"].as_array().unwrap();
            let last = input.last().unwrap();
            assert_eq!(
                last,
                &json!({"type": "function_call_output", "call_id": id, "output": [
                    {"type": "input_text", "text": PNG_TEXT},
                    {"type": "input_image", "image_url": data_url, "detail": "auto"}
                ]})
            );
            last.clone()
        }
        Api::Anthropic => {
            let last = body["messages"].as_array().unwrap().last().unwrap();
            assert_eq!(
                last,
                &json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": [
                    {"type": "text", "text": PNG_TEXT},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_BASE64}}
                ], "cache_control": {"type": "ephemeral"}}]})
            );
            last.clone()
        }
        Api::Gemini => {
            // gemini-2.5-pro: the picture follows the function responses of the turn.
            let last = body["contents"].as_array().unwrap().last().unwrap();
            assert_eq!(
                last,
                &json!({"role": "user", "parts": [
                    {"functionResponse": {"name": "read_file", "id": id, "response": {"content": PNG_TEXT}}},
                    {"inlineData": {"mimeType": "image/png", "data": PNG_BASE64}}
                ]})
            );
            last.clone()
        }
    }
}

/// A picture read by a tool reaches the model in the next request, in each wire's own format,
/// and stays in the conversation for the steps after.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_picture_read_by_a_tool_reaches_a_vision_model_in_its_wire_format() {
    for api in ALL {
        let (_tmp, root) = picture_project();
        let scratch = tempfile::tempdir().unwrap();
        let (steps, id) = picture_scenario(api);
        let (server, result, _events) = run_with(api, &root, scratch.path(), &steps, true).await;
        let outcome = result.outcome.as_ref().unwrap();
        assert_eq!(outcome.stop, RunStop::Completed, "{api:?}: {outcome:#?}");
        let requests = server.requests();
        assert_eq!(requests.len(), 2, "{api:?}");
        assert!(
            !requests[0].json().to_string().contains(PNG_BASE64),
            "{api:?}: no picture before the call"
        );
        picture_result(api, &requests[1].json(), id);
        // The canonical conversation keeps the bytes (that is what the session log stores).
        let images: Vec<&versus::model::Image> = outcome
            .messages
            .iter()
            .flat_map(|m| &m.parts)
            .filter_map(|p| match p {
                Part::ToolResult { images, .. } => Some(images),
                _ => None,
            })
            .flatten()
            .collect();
        assert_eq!(images.len(), 1, "{api:?}");
        assert_eq!(images[0].media_type, "image/png");
        assert_eq!(images[0].data, PNG);
    }
}

/// A model without vision reads a note where the picture would be, and no image bytes or
/// image parts are sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_without_vision_gets_a_note_instead_of_the_picture() {
    for api in ALL {
        let (_tmp, root) = picture_project();
        let scratch = tempfile::tempdir().unwrap();
        let (steps, id) = picture_scenario(api);
        let (server, result, _events) = run_with(api, &root, scratch.path(), &steps, false).await;
        let outcome = result.outcome.as_ref().unwrap();
        assert_eq!(outcome.stop, RunStop::Completed, "{api:?}: {outcome:#?}");
        let requests = server.requests();
        assert_eq!(requests.len(), 2, "{api:?}");
        let body = requests[1].json();
        let text = body.to_string();
        assert!(
            !text.contains(PNG_BASE64),
            "{api:?}: image bytes sent: {text}"
        );
        for marker in [
            "input_image",
            "image_url",
            "inlineData",
            r#""type":"image""#,
        ] {
            assert!(!text.contains(marker), "{api:?}: {marker} in {text}");
        }
        let turn = tool_turn(api, &body).unwrap();
        assert_eq!(turn.results.len(), 1, "{api:?}");
        assert_eq!(turn.results[0].id.as_deref(), Some(id), "{api:?}");
        assert_eq!(turn.results[0].content, PNG_NOTE, "{api:?}");
    }
}

/// Gemini sends no id for the edit call: its result must still find it, by name only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_results_without_an_issued_id_are_matched_by_name() {
    let (_tmp, root) = project();
    let scratch = tempfile::tempdir().unwrap();
    let steps = fix_scenario(Api::Gemini);
    let (server, _result, _events) = run(Api::Gemini, &root, scratch.path(), &steps).await;
    let body = server.requests()[2].json();
    let response = &body["contents"].as_array().unwrap().last().unwrap()["parts"][0];
    let response = &response["functionResponse"];
    assert_eq!(response["name"], "edit_file");
    assert!(response.get("id").is_none(), "{response}");
    assert!(
        response["response"]["content"]
            .as_str()
            .unwrap()
            .contains("edited calc.py")
    );
}

/// Step 1 sends arguments that are not JSON (a schema violation for Gemini, whose arguments
/// always arrive as an object) and a tool that does not exist; step 2 corrects itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_arguments_and_unknown_tools_come_back_as_correctable_errors() {
    for api in ALL {
        let (_tmp, root) = project();
        let scratch = tempfile::tempdir().unwrap();
        let (bad_id, rocket_id, good_id) = match api {
            Api::Gemini => (Some("g-bad-1"), Some("g-rocket-2"), Some("g-good-3")),
            Api::Anthropic => (
                Some("toolu_01BadArgs"),
                Some("toolu_02Rocket"),
                Some("toolu_03Good"),
            ),
            _ => (
                Some("call_bad_1"),
                Some("call_rocket_2"),
                Some("call_good_3"),
            ),
        };
        let bad_args = match api {
            Api::Gemini => r#"{"path": 7}"#.to_string(),
            _ => r#"{"path": "calc.py""#.to_string(),
        };
        let steps = vec![
            Step::Calls(vec![
                Call {
                    id: bad_id,
                    name: "read_file",
                    args: bad_args.clone(),
                },
                call(rocket_id, "launch_rocket", json!({"target": "moon"})),
            ]),
            Step::Calls(vec![call(good_id, "read_file", json!({"path": "calc.py"}))]),
            Step::Text("Read it after all."),
        ];
        let (server, result, _events) = run(api, &root, scratch.path(), &steps).await;
        let outcome = result.outcome.as_ref().unwrap();
        assert_eq!(outcome.stop, RunStop::Completed, "{api:?}: {outcome:#?}");
        assert_eq!(outcome.stats.steps, 3);
        assert_eq!(outcome.stats.tool_calls, 3);
        assert_eq!(outcome.stats.tool_errors, 2, "{api:?}");

        let requests = server.requests();
        assert_eq!(requests.len(), 3, "{api:?}");
        let turn = assert_turn(api, &requests[1], &steps[0], 1);
        let [bad, rocket] = [&turn.results[0], &turn.results[1]];
        let bad_reason = if api == Api::Gemini {
            "path"
        } else {
            "not valid JSON"
        };
        assert!(
            bad.content.contains("invalid arguments for read_file")
                && bad.content.contains(bad_reason),
            "{api:?}: {}",
            bad.content
        );
        assert!(
            rocket.content.contains("unknown tool `launch_rocket`"),
            "{api:?}: {}",
            rocket.content
        );
        // The error names the real tools so the model can pick one.
        assert!(rocket.content.contains("read_file"), "{}", rocket.content);
        if matches!(api, Api::Anthropic | Api::Gemini) {
            assert_eq!(bad.is_error, Some(true), "{api:?}");
            assert_eq!(rocket.is_error, Some(true), "{api:?}");
        }
        // The broken call is replayed in a form the server accepts (never invalid JSON).
        let replayed = &turn.calls[0].args;
        match api {
            Api::Chat | Api::Responses => {
                let args: Value = serde_json::from_str(replayed.as_str().unwrap()).unwrap();
                assert_eq!(args["raw_arguments"], bad_args, "{api:?}");
            }
            Api::Anthropic => assert_eq!(replayed, &json!({})),
            Api::Gemini => assert_eq!(replayed, &json!({"path": 7})),
        }
        // The corrected call worked and its result went back.
        let turn = assert_turn(api, &requests[2], &steps[1], 2);
        assert!(turn.results[0].content.contains("return a - b"));
        assert_ne!(turn.results[0].is_error, Some(true));
        assert_eq!(turn.all_results, 3);
        assert!(result.writes.is_empty());
    }
}

/// Two read_file calls in one response: both run, both results go back in call order with
/// their own ids (for Anthropic in one user message; for Chat as two `tool` messages).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallel_calls_in_one_response_get_one_result_each() {
    for api in ALL {
        let (_tmp, root) = project();
        let scratch = tempfile::tempdir().unwrap();
        let (first, second) = match api {
            Api::Chat => ("call_par_A1", "call_par_B2"),
            Api::Responses => ("call_resp_A1", "call_resp_B2"),
            Api::Anthropic => ("toolu_01ParA", "toolu_02ParB"),
            Api::Gemini => ("g-par-a", "g-par-b"),
        };
        let steps = vec![
            Step::Calls(vec![
                call(Some(first), "read_file", json!({"path": "calc.py"})),
                call(Some(second), "read_file", json!({"path": "test.sh"})),
            ]),
            Step::Text("Both read."),
        ];
        let (server, result, _events) = run(api, &root, scratch.path(), &steps).await;
        let outcome = result.outcome.as_ref().unwrap();
        assert_eq!(outcome.stop, RunStop::Completed, "{api:?}: {outcome:#?}");
        assert_eq!(outcome.stats.steps, 2);
        assert_eq!(outcome.stats.tool_calls, 2);
        assert_eq!(outcome.stats.tool_errors, 0);

        let requests = server.requests();
        assert_eq!(requests.len(), 2);
        let turn = assert_turn(api, &requests[1], &steps[0], 1);
        assert_eq!(turn.results.len(), 2, "{api:?}");
        assert!(turn.results[0].content.contains("return a - b"), "{api:?}");
        assert!(turn.results[1].content.contains("grep -q"), "{api:?}");
        match api {
            Api::Anthropic => {
                // All results of the turn in ONE user message, after one assistant message.
                let body = requests[1].json();
                let messages = body["messages"].as_array().unwrap();
                assert_eq!(messages.len(), 3, "{body}");
                assert_eq!(messages[2]["content"].as_array().unwrap().len(), 2);
            }
            Api::Chat => {
                let body = requests[1].json();
                let roles: Vec<&str> = body["messages"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|m| m["role"].as_str().unwrap())
                    .collect();
                assert_eq!(roles, ["system", "user", "assistant", "tool", "tool"]);
            }
            _ => {}
        }
    }
}
