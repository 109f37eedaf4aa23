//! Issue 25's wire findings 2 and 4 through the real binary (`versus ask`), against local mock
//! servers speaking each of the four formats versus has: OpenAI Responses (`openai/gpt-5`),
//! OpenAI Chat (`openrouter/openai/gpt-5`), Anthropic Messages and Gemini, each pointed at its
//! mock with the provider's base-URL variable and a fake key.
//!
//! Finding 2: one malformed stream event. Where a later event makes it redundant it is skipped
//! (one request, the answer whole); otherwise the step is requested again as for a cut stream,
//! and the work of the steps before it (a written file) is kept.
//!
//! Finding 4: a response without usage, or with all-zero usage from a proxy, is unknown in the
//! table and the JSON, and so is its cost: never `0 0` and `$0`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};

use crate::util::mock_server::{MockServer, Reply};
use crate::util::{git, versus};

const NOTES: &str = "checked calc.py\n";
const ANSWER: &str = "All done: the note is written.";

/// The four wire formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Responses,
    Chat,
    Anthropic,
    Gemini,
}

const FORMATS: [Format; 4] = [
    Format::Responses,
    Format::Chat,
    Format::Anthropic,
    Format::Gemini,
];

/// One SSE event: its `event:` name (empty: none) and its data.
type Event = (String, String);

fn ev(name: &str, data: Value) -> Event {
    (name.to_string(), data.to_string())
}

/// The events as an SSE body.
fn sse(events: &[Event]) -> Reply {
    let mut body = String::new();
    for (name, data) in events {
        if !name.is_empty() {
            body.push_str(&format!("event: {name}\n"));
        }
        body.push_str(&format!("data: {data}\n\n"));
    }
    Reply::sse(body)
}

/// `data` cut in the middle: no longer JSON.
fn broken(event: &Event) -> Event {
    let data = &event.1;
    (event.0.clone(), data[..data.len() / 2].to_string())
}

impl Format {
    fn spec(self) -> &'static str {
        match self {
            Format::Responses => "openai/gpt-5",
            Format::Chat => "openrouter/openai/gpt-5",
            Format::Anthropic => "anthropic/claude-sonnet-4-5",
            Format::Gemini => "gemini/gemini-2.5-flash",
        }
    }

    /// The base-URL and key variables, and the base for `server`.
    fn env(self, server: &MockServer) -> [(&'static str, String); 2] {
        let url = server.url();
        match self {
            Format::Responses => [
                ("OPENAI_BASE_URL", format!("{url}/v1")),
                ("OPENAI_API_KEY", "sk-test-wire-1".into()),
            ],
            Format::Chat => [
                ("OPENROUTER_BASE_URL", format!("{url}/api/v1")),
                ("OPENROUTER_API_KEY", "sk-or-test-wire-2".into()),
            ],
            Format::Anthropic => [
                ("ANTHROPIC_BASE_URL", url),
                ("ANTHROPIC_API_KEY", "sk-ant-test-wire-3".into()),
            ],
            Format::Gemini => [
                ("GEMINI_BASE_URL", url),
                ("GEMINI_API_KEY", "gm-test-wire-4".into()),
            ],
        }
    }

    /// A step that calls `write_file` for NOTES.md, with real usage.
    fn call_step(self) -> Vec<Event> {
        let args = json!({"path": "NOTES.md", "content": NOTES});
        let text = args.to_string();
        match self {
            Format::Responses => {
                let item = |arguments: &str, status: &str| {
                    json!({"type": "function_call", "id": "fc_1", "call_id": "call_w1",
                           "name": "write_file", "arguments": arguments, "status": status})
                };
                vec![
                    ev(
                        "response.created",
                        json!({"type": "response.created", "response": {"id": "r1", "output": []}}),
                    ),
                    ev(
                        "response.output_item.added",
                        json!({"type": "response.output_item.added", "output_index": 0,
                               "item": item("", "in_progress")}),
                    ),
                    ev(
                        "response.function_call_arguments.delta",
                        json!({"type": "response.function_call_arguments.delta",
                               "output_index": 0, "item_id": "fc_1", "delta": text}),
                    ),
                    ev(
                        "response.output_item.done",
                        json!({"type": "response.output_item.done", "output_index": 0,
                               "item": item(&text, "completed")}),
                    ),
                    ev(
                        "response.completed",
                        json!({"type": "response.completed", "response": {"id": "r1",
                               "status": "completed", "output": [item(&text, "completed")],
                               "usage": {"input_tokens": 1000, "output_tokens": 100,
                                         "total_tokens": 1100}}}),
                    ),
                ]
            }
            Format::Chat => vec![
                ev(
                    "",
                    json!({"choices": [{"index": 0, "delta": {"role": "assistant",
                           "tool_calls": [{"index": 0, "id": "call_w1", "type": "function",
                           "function": {"name": "write_file", "arguments": text}}]}}]}),
                ),
                ev(
                    "",
                    json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
                ),
                ev(
                    "",
                    json!({"choices": [], "usage": {"prompt_tokens": 1000,
                           "completion_tokens": 100, "total_tokens": 1100}}),
                ),
                ("".into(), "[DONE]".into()),
            ],
            Format::Anthropic => vec![
                ev(
                    "message_start",
                    json!({"type": "message_start", "message": {"id": "m1", "role": "assistant",
                           "content": [], "usage": {"input_tokens": 1000, "output_tokens": 1}}}),
                ),
                ev(
                    "content_block_start",
                    json!({"type": "content_block_start", "index": 0, "content_block":
                           {"type": "tool_use", "id": "toolu_w1", "name": "write_file", "input": {}}}),
                ),
                ev(
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": 0,
                           "delta": {"type": "input_json_delta", "partial_json": text}}),
                ),
                ev(
                    "content_block_stop",
                    json!({"type": "content_block_stop", "index": 0}),
                ),
                ev(
                    "message_delta",
                    json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"},
                           "usage": {"output_tokens": 100}}),
                ),
                ev("message_stop", json!({"type": "message_stop"})),
            ],
            Format::Gemini => vec![ev(
                "",
                json!({"candidates": [{"content": {"role": "model", "parts":
                       [{"functionCall": {"name": "write_file", "args": args}}]},
                       "finishReason": "STOP"}],
                       "usageMetadata": {"promptTokenCount": 1000, "candidatesTokenCount": 100,
                                         "totalTokenCount": 1100}}),
            )],
        }
    }

    /// A final answer `text` in two pieces, with `usage` (input, output) or none.
    fn text_step(self, text: &str, usage: Option<(u64, u64)>) -> Vec<Event> {
        let (head, tail) = text.split_at(text.len() / 2);
        match self {
            Format::Responses => {
                let done = json!({"type": "message", "id": "msg_2", "status": "completed",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": text, "annotations": []}]});
                let mut completed = json!({"type": "response.completed", "response": {
                    "id": "r2", "status": "completed", "output": [done]}});
                if let Some((input, output)) = usage {
                    completed["response"]["usage"] = json!({"input_tokens": input,
                        "output_tokens": output, "total_tokens": input + output});
                }
                let mut events = vec![ev(
                    "response.output_item.added",
                    json!({"type": "response.output_item.added", "output_index": 0,
                           "item": {"type": "message", "id": "msg_2", "role": "assistant",
                                    "status": "in_progress", "content": []}}),
                )];
                for piece in [head, tail] {
                    events.push(ev(
                        "response.output_text.delta",
                        json!({"type": "response.output_text.delta", "output_index": 0,
                               "item_id": "msg_2", "content_index": 0, "delta": piece}),
                    ));
                }
                events.push(ev(
                    "response.output_item.done",
                    json!({"type": "response.output_item.done", "output_index": 0, "item": done}),
                ));
                events.push(ev("response.completed", completed));
                events
            }
            Format::Chat => {
                let mut events: Vec<Event> = [head, tail]
                    .iter()
                    .map(|piece| {
                        ev(
                            "",
                            json!({"choices": [{"index": 0, "delta": {"content": piece}}]}),
                        )
                    })
                    .collect();
                events.push(ev(
                    "",
                    json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
                ));
                if let Some((input, output)) = usage {
                    events.push(ev(
                        "",
                        json!({"choices": [], "usage": {"prompt_tokens": input,
                               "completion_tokens": output, "total_tokens": input + output}}),
                    ));
                }
                events.push(("".into(), "[DONE]".into()));
                events
            }
            Format::Anthropic => {
                let (input, output) = usage.unwrap_or((0, 0));
                let mut events = vec![
                    ev(
                        "message_start",
                        json!({"type": "message_start", "message": {"id": "m2",
                               "role": "assistant", "content": [],
                               "usage": {"input_tokens": input, "output_tokens": 0}}}),
                    ),
                    ev("ping", json!({"type": "ping"})),
                    ev(
                        "content_block_start",
                        json!({"type": "content_block_start", "index": 0,
                               "content_block": {"type": "text", "text": ""}}),
                    ),
                ];
                for piece in [head, tail] {
                    events.push(ev(
                        "content_block_delta",
                        json!({"type": "content_block_delta", "index": 0,
                               "delta": {"type": "text_delta", "text": piece}}),
                    ));
                }
                events.push(ev(
                    "content_block_stop",
                    json!({"type": "content_block_stop", "index": 0}),
                ));
                // Like the API today, message_delta repeats the input count.
                events.push(ev(
                    "message_delta",
                    json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                           "usage": {"input_tokens": input, "output_tokens": output}}),
                ));
                events.push(ev("message_stop", json!({"type": "message_stop"})));
                events
            }
            Format::Gemini => {
                let mut last = json!({"candidates": [{"content": {"role": "model",
                    "parts": [{"text": tail}]}, "finishReason": "STOP"}]});
                if let Some((input, output)) = usage {
                    last["usageMetadata"] = json!({"promptTokenCount": input,
                        "candidatesTokenCount": output, "totalTokenCount": input + output});
                }
                vec![
                    ev(
                        "",
                        json!({"candidates": [{"content": {"role": "model",
                               "parts": [{"text": head}]}}]}),
                    ),
                    ev("", last),
                ]
            }
        }
    }

    /// The final answer with one malformed event that a later event makes redundant.
    fn text_step_with_a_redundant_break(self) -> Vec<Event> {
        let mut events = self.text_step(ANSWER, Some((2000, 50)));
        match self {
            // A text delta: the item's done event carries the whole text.
            Format::Responses => events[1] = broken(&events[1]),
            // message_start: message_delta repeats its usage.
            Format::Anthropic => events[0] = broken(&events[0]),
            // After the finish reason (usage on the finish chunk): nothing the answer needs.
            Format::Chat => {
                let usage = serde_json::from_str::<Value>(&events[3].1).unwrap()["usage"].clone();
                let mut finish: Value = serde_json::from_str(&events[2].1).unwrap();
                finish["usage"] = usage;
                events[2].1 = finish.to_string();
                events[3] = broken(&events[3]);
            }
            // A chunk after the finishReason.
            Format::Gemini => events.push(broken(&ev(
                "",
                json!({"usageMetadata": {"promptTokenCount": 2000, "candidatesTokenCount": 50}}),
            ))),
        }
        events
    }

    /// A final answer whose malformed event no later event repeats: a text piece (and, for
    /// Responses, the item's done event with nothing in `response.completed` to stand in).
    fn text_step_with_a_lost_piece(self) -> Vec<Event> {
        let mut events = self.text_step("Half an ans", Some((2000, 50)));
        match self {
            Format::Responses => {
                events[3] = broken(&events[3]);
                let mut completed: Value = serde_json::from_str(&events[4].1).unwrap();
                completed["response"]["output"] = json!([]);
                events[4].1 = completed.to_string();
            }
            Format::Chat => events[0] = broken(&events[0]),
            Format::Anthropic => events[3] = broken(&events[3]),
            Format::Gemini => events[0] = broken(&events[0]),
        }
        events
    }
}

/// A git project with one file.
fn project() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap().join("project");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("calc.py"), "def add(a, b):\n    return a + b\n").unwrap();
    git(&root, &["init", "-q"]);
    git(&root, &["add", "."]);
    git(&root, &["commit", "-qm", "init"]);
    (tmp, root)
}

/// `versus ask --json` of `format`'s model against `server`; the JSON document's model entry.
fn ask(format: Format, root: &Path, server: &MockServer, extra: &[&str]) -> (Value, Output) {
    let mut command = versus();
    command
        .arg("-C")
        .arg(root)
        .env("XDG_CONFIG_HOME", root.join(".no-config"));
    for name in [
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "OPENAI_API_BASE",
        "OPENROUTER_API_KEY",
        "ANTHROPIC_API_KEY",
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
    ] {
        command.env_remove(name);
    }
    for (name, value) in format.env(server) {
        command.env(name, value);
    }
    let output = command
        .args(["ask", "write a note", "-m", format.spec(), "--quiet"])
        .args(extra)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let doc: Value = if extra.contains(&"--json") {
        serde_json::from_str(&stdout).unwrap_or_else(|_| {
            panic!(
                "{format:?}: {stdout}\n{}",
                String::from_utf8_lossy(&output.stderr)
            )
        })
    } else {
        Value::Null
    };
    (doc["models"][0].clone(), output)
}

/// Every session's event log of the project, joined.
fn event_logs(root: &Path) -> String {
    let mut all = String::new();
    for session in std::fs::read_dir(root.join(".versus/sessions")).unwrap() {
        let path = session.unwrap().path().join("events.jsonl");
        all.push_str(&std::fs::read_to_string(path).unwrap_or_default());
    }
    all
}

#[test]
fn a_malformed_event_a_later_one_makes_redundant_is_skipped_in_every_format() {
    for format in FORMATS {
        let (_tmp, root) = project();
        let server = MockServer::start(vec![
            sse(&format.call_step()),
            sse(&format.text_step_with_a_redundant_break()),
        ]);
        let (model, _) = ask(format, &root, &server, &["--json"]);
        assert_eq!(model["status"], "completed", "{format:?}: {model}");
        assert_eq!(model["final_text"], ANSWER, "{format:?}: {model}");
        assert!(
            model["diff"].as_str().unwrap().contains("+checked calc.py"),
            "{format:?}: {model}"
        );
        assert_eq!(
            server.requests().len(),
            2,
            "{format:?}: no step asked twice"
        );
        assert!(
            !event_logs(&root).contains("\"retrying\""),
            "{format:?}: nothing retried"
        );
        // The usage the later event carried is known: 1000 + 2000 in, 100 + 50 out.
        assert_eq!(model["usage"]["input"], 3000, "{format:?}: {model}");
        assert_eq!(model["usage"]["output"], 150, "{format:?}: {model}");
        assert!(model["cost"].is_number(), "{format:?}: {model}");
    }
}

#[test]
fn a_malformed_event_nothing_repeats_retries_the_step_and_keeps_the_work_in_every_format() {
    for format in FORMATS {
        let (_tmp, root) = project();
        let server = MockServer::start(vec![
            sse(&format.call_step()),
            sse(&format.text_step_with_a_lost_piece()),
            sse(&format.text_step(ANSWER, Some((2000, 50)))),
        ]);
        let (model, _) = ask(format, &root, &server, &["--json"]);
        assert_eq!(model["status"], "completed", "{format:?}: {model}");
        assert_eq!(model["final_text"], ANSWER, "{format:?}: {model}");
        // The first step's file is still the model's proposal.
        assert!(
            model["diff"].as_str().unwrap().contains("+checked calc.py"),
            "{format:?}: {model}"
        );
        let sent = server.requests();
        assert_eq!(sent.len(), 3, "{format:?}: the broken step was asked again");
        assert_eq!(
            sent[1].json(),
            sent[2].json(),
            "{format:?}: the same step, sent again"
        );
        let log = event_logs(&root);
        assert!(log.contains("\"retrying\""), "{format:?}: {log}");
        assert!(log.contains("not valid JSON"), "{format:?}: {log}");
    }
}

#[test]
fn missing_or_all_zero_usage_is_unknown_not_zero_in_the_table_and_json() {
    for format in FORMATS {
        // Anthropic always sends usage objects; a proxy that fills them with zeros is the
        // case there. The others: no usage at all.
        let (_tmp, root) = project();
        let unknown = || sse(&format.text_step(ANSWER, None));
        let server = MockServer::start(vec![unknown(), unknown()]);
        let (model, _) = ask(format, &root, &server, &["--json"]);
        assert_eq!(model["status"], "completed", "{format:?}: {model}");
        assert_eq!(model["usage"]["unreported"], 1, "{format:?}: {model}");
        assert!(model["cost"].is_null(), "{format:?}: {model}");
        let (_, output) = ask(format, &root, &server, &[]);
        let stdout = String::from_utf8_lossy(&output.stdout);
        let row: Vec<&str> = stdout
            .lines()
            .find(|l| l.starts_with(format.spec()))
            .unwrap_or_else(|| panic!("{format:?}: {stdout}"))
            .split_whitespace()
            .collect();
        // model, status, files, +a, -r, tokens in, out, cost
        assert_eq!(row[5..8], ["?", "?", "unknown"], "{format:?}: {stdout}");
    }
}

// ---------------------------------------------------------------------------------------------
// Prompt caching.

/// Every `cache_control` in `value`, as JSON pointers.
fn breakpoints(value: &Value, at: String, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                if key == "cache_control" {
                    assert_eq!(child, &json!({"type": "ephemeral"}), "{at}");
                    out.push(at.clone());
                } else {
                    breakpoints(child, format!("{at}/{key}"), out);
                }
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                breakpoints(child, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// An Anthropic step with cache usage: (uncached input, cache writes, cache reads, output).
fn with_cache_usage(mut events: Vec<Event>, counts: (u64, u64, u64, u64)) -> Reply {
    let (input, write, read, output) = counts;
    let usage = json!({"input_tokens": input, "cache_creation_input_tokens": write,
                       "cache_read_input_tokens": read, "output_tokens": output});
    for event in &mut events {
        let mut data: Value = match serde_json::from_str(&event.1) {
            Ok(data) => data,
            Err(_) => continue,
        };
        if data["type"] == "message_start" {
            data["message"]["usage"] = usage.clone();
        } else if data["type"] == "message_delta" {
            data["usage"] = usage.clone();
        } else {
            continue;
        }
        event.1 = data.to_string();
    }
    sse(&events)
}

#[test]
fn anthropic_gets_breakpoints_on_the_stable_prefix_only_and_cache_reads_are_priced_as_such() {
    let (_tmp, root) = project();
    let format = Format::Anthropic;
    let server = MockServer::start(vec![
        with_cache_usage(format.call_step(), (1000, 4000, 0, 100)),
        with_cache_usage(format.text_step(ANSWER, Some((0, 0))), (50, 1000, 4000, 40)),
    ]);
    let (model, _) = ask(format, &root, &server, &["--json"]);
    assert_eq!(model["status"], "completed", "{model}");
    let sent = server.requests();
    assert_eq!(sent.len(), 2);
    for (step, request) in sent.iter().enumerate() {
        let body = request.json();
        let mut found = Vec::new();
        breakpoints(&body, String::new(), &mut found);
        let tools = body["tools"].as_array().unwrap().len();
        let messages = body["messages"].as_array().unwrap();
        let last = messages.len() - 1;
        let blocks = messages[last]["content"].as_array().unwrap().len();
        // The tools, the system prompt and the latest turn; nothing else.
        let mut expected = vec![
            format!("/messages/{last}/content/{}", blocks - 1),
            "/system/0".to_string(),
            format!("/tools/{}", tools - 1),
        ];
        expected.sort();
        found.sort();
        assert_eq!(found, expected, "step {}", step + 1);
        assert!(
            body["system"][0]["text"]
                .as_str()
                .is_some_and(|s| !s.is_empty())
        );
    }
    // The second step's breakpoint is on the tool result: the first step's whole turn is
    // in the cached prefix.
    assert_eq!(
        sent[1].json()["messages"][2]["content"][0]["type"],
        "tool_result"
    );
    // Cache reads and writes counted apart and priced at their own rates
    // (claude-sonnet-4-5: $3 input, $15 output, $0.30 cache read, $3.75 cache write):
    // 1050 x 3 + 5000 x 3.75 + 4000 x 0.30 + 140 x 15 = 25,200 per million.
    assert_eq!(model["usage"]["input"], 1050, "{model}");
    assert_eq!(model["usage"]["cache_write"], 5000, "{model}");
    assert_eq!(model["usage"]["cache_read"], 4000, "{model}");
    let cost = model["cost"].as_f64().unwrap();
    assert!((cost - 0.0252).abs() < 1e-9, "{cost}");
    let server = MockServer::start(vec![
        with_cache_usage(format.call_step(), (1000, 4000, 0, 100)),
        with_cache_usage(format.text_step(ANSWER, Some((0, 0))), (50, 1000, 4000, 40)),
    ]);
    let (_, output) = ask(format, &root, &server, &[]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let row: Vec<&str> = stdout
        .lines()
        .find(|l| l.starts_with(format.spec()))
        .unwrap()
        .split_whitespace()
        .collect();
    // tokens in counts every input token, cached or not; the cost prices them apart.
    assert_eq!(row[5..8], ["10.1k", "140", "$0.0252"], "{stdout}");
}

#[test]
fn openai_gets_one_prompt_cache_key_per_model_and_session_and_cached_tokens_are_cheap() {
    let (_tmp, root) = project();
    let format = Format::Responses;
    let mut last = format.text_step(ANSWER, Some((0, 0)));
    let mut completed: Value = serde_json::from_str(&last[4].1).unwrap();
    completed["response"]["usage"] = json!({"input_tokens": 5000,
        "input_tokens_details": {"cached_tokens": 4000}, "output_tokens": 100,
        "total_tokens": 5100});
    last[4].1 = completed.to_string();
    let server = MockServer::start(vec![sse(&format.call_step()), sse(&last)]);
    let (model, _) = ask(format, &root, &server, &["--json"]);
    assert_eq!(model["status"], "completed", "{model}");
    let keys: Vec<Value> = server
        .requests()
        .iter()
        .map(|r| r.json()["prompt_cache_key"].clone())
        .collect();
    assert_eq!(keys.len(), 2);
    assert!(
        keys[0].as_str().is_some_and(|k| k.starts_with("versus-")),
        "{keys:?}"
    );
    assert_eq!(keys[0], keys[1], "one key for every step of the session");
    // gpt-5: $1.25 input, $0.125 cached, $10 output; step 1: 1000 in 100 out,
    // step 2: 1000 uncached + 4000 cached in, 100 out.
    assert_eq!(model["usage"]["cache_read"], 4000, "{model}");
    let cost = model["cost"].as_f64().unwrap();
    let expected = (2000.0 * 1.25 + 4000.0 * 0.125 + 200.0 * 10.0) / 1e6;
    assert!((cost - expected).abs() < 1e-9, "{cost} != {expected}");
}

/// The run report prices cache reads as cache reads, and says unknown for a model whose
/// provider reported no usage (wire finding 4), through `versus run`.
#[test]
fn the_run_report_prices_cache_reads_and_shows_unreported_usage_as_unknown() {
    let (_tmp, root) = project();
    let dir = root.parent().unwrap().to_path_buf();
    std::fs::write(
        dir.join("cache.recipe.md"),
        "# Cache\nversion: 1\n\n## Models\n- anthropic/claude-sonnet-4-5\n- gemini/gemini-2.5-flash\n\n\
         ## Constraints\ntimeout: 1m\nproject_root: project\n\n\
         ## Tasks\n- Write a note.\n\n## Success Criteria\n- no_errors\n",
    )
    .unwrap();
    let anthropic = MockServer::start(vec![
        with_cache_usage(Format::Anthropic.call_step(), (1000, 4000, 0, 100)),
        with_cache_usage(
            Format::Anthropic.text_step(ANSWER, Some((0, 0))),
            (50, 1000, 4000, 40),
        ),
    ]);
    let gemini = MockServer::start(vec![sse(&Format::Gemini.text_step(ANSWER, None))]);
    let mut command = versus();
    command
        .current_dir(&dir)
        .env("XDG_CONFIG_HOME", dir.join(".no-config"));
    for name in ["OPENAI_API_KEY", "OPENROUTER_API_KEY", "GOOGLE_API_KEY"] {
        command.env_remove(name);
    }
    for (name, value) in Format::Anthropic
        .env(&anthropic)
        .into_iter()
        .chain(Format::Gemini.env(&gemini))
    {
        command.env(name, value);
    }
    let out = command
        .args(["run", "cache.recipe.md", "--out", "out", "--quiet"])
        .output()
        .unwrap();
    let said = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("out/report.json"))
            .unwrap_or_else(|e| panic!("{e}: {said}")),
    )
    .unwrap();
    let runs = report["tasks"][0]["runs"].as_array().unwrap();
    let claude = runs
        .iter()
        .find(|r| r["model"] == "anthropic/claude-sonnet-4-5")
        .unwrap();
    assert_eq!(claude["tokens"]["cache_read"], 4000, "{claude}");
    assert!(
        (claude["cost_usd"].as_f64().unwrap() - 0.0252).abs() < 1e-9,
        "{claude}"
    );
    let flash = runs
        .iter()
        .find(|r| r["model"] == "gemini/gemini-2.5-flash")
        .unwrap();
    assert_eq!(flash["tokens"]["unreported"], 1, "{flash}");
    assert!(flash["cost_usd"].is_null(), "{flash}");
    let summary = std::fs::read_to_string(dir.join("out/summary.md")).unwrap();
    let line = summary
        .lines()
        .find(|l| l.starts_with("| gemini/gemini-2.5-flash |"))
        .unwrap();
    assert!(
        line.contains("| unknown | ") && line.contains("| unknown / unknown |"),
        "{line}"
    );
    let line = summary
        .lines()
        .find(|l| l.starts_with("| anthropic/claude-sonnet-4-5 |"))
        .unwrap();
    assert!(line.contains("| $0.0252 |"), "{line}");
}

// ---------------------------------------------------------------------------------------------
// --debug-log

#[test]
fn the_debug_log_has_every_request_and_event_without_the_key_and_stays_out_of_the_project() {
    use std::os::unix::fs::PermissionsExt;
    let (tmp, root) = project();
    let format = Format::Anthropic;
    let server = MockServer::start(vec![
        sse(&format.call_step()),
        sse(&format.text_step(ANSWER, Some((2000, 50)))),
    ]);
    let log = tmp.path().join("debug.jsonl");
    let (model, output) = ask(
        format,
        &root,
        &server,
        &["--json", "--debug-log", log.to_str().unwrap()],
    );
    assert_eq!(model["status"], "completed", "{model} {output:?}");
    let text = std::fs::read_to_string(&log).unwrap();
    let mode = std::fs::metadata(&log).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the log is private");
    let key = "sk-ant-test-wire-3";
    assert!(
        !text.contains(key) && !text.contains("test-wire-3"),
        "{text}"
    );
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let requests: Vec<&Value> = lines.iter().filter(|l| l["kind"] == "request").collect();
    assert_eq!(requests.len(), 2, "{text}");
    // The bodies as sent (the second step carries the first step's tool result), the auth
    // header named but not shown.
    for (sent, logged) in server.requests().iter().zip(&requests) {
        assert_eq!(sent.json(), logged["body"], "{text}");
        assert_eq!(logged["headers"]["x-api-key"], "[redacted]");
        assert_eq!(logged["provider"], "anthropic");
    }
    let events: Vec<&Value> = lines.iter().filter(|l| l["kind"] == "event").collect();
    assert_eq!(
        events.len(),
        format.call_step().len() + format.text_step(ANSWER, None).len(),
        "every event of both answers"
    );
    assert!(
        events
            .iter()
            .any(|e| e["event"] == "message_stop" && e["data"]["type"] == "message_stop")
    );
    // Inside the project it is refused, before any model runs.
    let server = MockServer::start(Vec::new());
    let inside = root.join("debug.jsonl");
    let (_, output) = ask(
        format,
        &root,
        &server,
        &["--debug-log", inside.to_str().unwrap()],
    );
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("inside the project"), "{stderr}");
    assert!(!inside.exists());
    assert!(server.requests().is_empty());
}
