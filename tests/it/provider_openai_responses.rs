//! The Responses adapter end to end: `HttpModel` + `ResponsesWire` against a local server
//! replaying recorded Responses streams and failures, with assertions on the decoded results
//! and on the requests versus sent (input items, replayed reasoning for the same model only).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util::mock_server;

use std::sync::Arc;
use std::time::Duration;

use mock_server::*;
use serde_json::{Value, json};
use versus::model::{
    Completion, Message, ModelRequest, Part, Reasoning, Role, StopReason, StreamEvent, ToolDef,
    Usage, replay_tag,
};
use versus::provider::http::default_client;
use versus::provider::openai_responses::ResponsesWire;
use versus::provider::{HttpModel, ProviderError, RetryPolicy, WireConfig};

const KEY: &str = "sk-proj-test-secret-987654321";

fn model(server: &MockServer) -> HttpModel {
    let config = WireConfig {
        provider: "openai".into(),
        base_url: format!("{}/v1", server.url()),
        api_key: Some(KEY.into()),
        key_hint: "OPENAI_API_KEY".into(),
        headers: Vec::new(),
        vision: true,
        ..WireConfig::default()
    };
    let retry = RetryPolicy {
        max_tries: 3,
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(20),
        max_retry_after: Duration::from_millis(30),
    };
    HttpModel::new(
        default_client().unwrap(),
        Arc::new(ResponsesWire::new(config)),
        retry,
    )
}

fn request(model: &str, messages: Vec<Message>) -> ModelRequest {
    ModelRequest {
        model: model.into(),
        system: "You are terse.".into(),
        messages: messages.into(),
        tools: vec![ToolDef {
            name: "calculator".into(),
            description: "Arithmetic".into(),
            parameters: json!({"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"},"op":{"type":"string"}}}),
        }].into(),
        max_output_tokens: None,
        temperature: None,
        reasoning: Reasoning::Medium,
        seed: None,
    }
}

async fn run_result(
    replies: Vec<Reply>,
) -> (
    MockServer,
    Vec<StreamEvent>,
    Result<Completion, ProviderError>,
) {
    let server = MockServer::start(replies);
    let model = model(&server);
    let (events, done) = collect(&model, request("gpt-5", vec![Message::user("hi")])).await;
    (server, events, done)
}

async fn run(replies: Vec<Reply>) -> (MockServer, Vec<StreamEvent>, Completion) {
    let (server, events, done) = run_result(replies).await;
    (server, events, done.unwrap())
}

/// A vercel `*.chunks.txt` fixture with `event:` lines restored.
fn chunks(name: &str) -> Reply {
    let bytes = fixture(&format!("openai-responses/{name}"));
    Reply::sse(payload_lines_to_sse(&bytes, Framing::EventFromType))
}

/// A raw SSE fixture served byte for byte.
fn raw(name: &str) -> Reply {
    Reply::sse(fixture(&format!("openai-responses/{name}")))
}

/// The payloads of a fixture (either framing), parsed.
fn payloads(name: &str) -> Vec<Value> {
    let bytes = fixture(&format!("openai-responses/{name}"));
    String::from_utf8(bytes)
        .unwrap()
        .lines()
        .map(|l| l.strip_prefix("data: ").unwrap_or(l))
        .filter(|l| l.starts_with('{'))
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// The finished item of `kind` in a fixture.
fn done_item(name: &str, kind: &str) -> Value {
    payloads(name)
        .into_iter()
        .filter(|p| p["type"] == "response.output_item.done")
        .map(|p| p["item"].clone())
        .find(|item| item["type"] == kind)
        .unwrap()
}

fn calls(done: &Completion) -> Vec<(String, String, String)> {
    done.message
        .tool_calls()
        .map(|(id, name, args)| (id.to_string(), name.to_string(), args.to_string()))
        .collect()
}

fn call(id: &str, name: &str, args: &str) -> (String, String, String) {
    (id.to_string(), name.to_string(), args.to_string())
}

fn usage(input: u64, output: u64, cache_read: u64, reasoning: u64) -> Usage {
    Usage {
        input,
        output,
        cache_read,
        cache_write: 0,
        reasoning,
        unreported: 0,
    }
}

fn thinking(done: &Completion) -> (&str, Option<&Value>) {
    done.message
        .parts
        .iter()
        .find_map(|p| match p {
            Part::Thinking { text, replay } => {
                Some((text.as_str(), replay.as_ref().map(|r| &r.data)))
            }
            _ => None,
        })
        .unwrap()
}

#[tokio::test]
async fn recorded_function_calls() {
    let weather = r#"{"city":"Paris","country":"France","unit":"C"}"#;
    let cases = vec![
        (
            raw("genai--openai_resp--reasoning_stream_tools--response_000.txt"),
            vec![call(
                "call_j1UinAcTy1fjspOBHyCkJxR2",
                "get_weather",
                weather,
            )],
            usage(106, 45, 0, 17),
        ),
        (
            raw("genai--openai_resp--tools_completed_no_output_field--response_000.txt"),
            vec![call(
                "call_Y1aseRzSQSAMbKJIpnv6l73i",
                "get_weather",
                weather,
            )],
            usage(82, 26, 0, 0),
        ),
        (
            raw("genai--openai_resp--multi_tool_ordering--response_000.txt"),
            vec![
                call("call_weather_001", "get_weather", weather),
                call(
                    "call_time_002",
                    "get_time",
                    r#"{"timezone":"Europe/Paris"}"#,
                ),
                call(
                    "call_currency_003",
                    "get_currency",
                    r#"{"from":"USD","to":"EUR","amount":100}"#,
                ),
            ],
            usage(150, 80, 0, 10),
        ),
        (
            chunks("vercel--openai-issue-11239.1.chunks.txt"),
            vec![call(
                "call_wMUhph1s1bedjPJraJvGw62X",
                "lookupVerificationCode",
                r#"{"label":"issue-11239"}"#,
            )],
            usage(84, 39, 0, 15),
        ),
        (
            // xAI: the call arrives whole, without argument deltas.
            chunks("vercel--xai-responses-tool-call.1.chunks.txt"),
            vec![call(
                "call_25342192",
                "getWeather",
                r#"{"location":"San Francisco","unit":"fahrenheit"}"#,
            )],
            usage(1, 235, 390, 198),
        ),
        (
            // LM Studio: arguments only in `.done`, reasoning as reasoning_text.
            chunks("vercel--lmstudio-tool-call.1.chunks.txt"),
            vec![call(
                "call_2025306790300011",
                "weather",
                r#"{"location":"San Francisco"}"#,
            )],
            usage(180, 61, 2, 48),
        ),
    ];
    for (reply, expected, expected_usage) in cases {
        let (_, events, done) = run(vec![reply]).await;
        assert_eq!(calls(&done), expected);
        assert_eq!(done.stop, StopReason::ToolUse);
        assert_eq!(done.usage, expected_usage, "usage for {expected:?}");
        for (position, (id, name, args)) in expected.iter().enumerate() {
            assert!(events.contains(&StreamEvent::ToolCallStart {
                index: position,
                id: id.clone(),
                name: name.clone()
            }));
            let streamed: String = events
                .iter()
                .filter_map(|e| match e {
                    StreamEvent::ToolCallDelta { index, delta } if *index == position => {
                        Some(delta.as_str())
                    }
                    _ => None,
                })
                .collect();
            assert_eq!(&streamed, args);
        }
    }
}

#[tokio::test]
async fn recorded_reasoning_items_are_kept_for_replay() {
    let name = "vercel--openai-issue-11239.1.chunks.txt";
    let (_, _, done) = run(vec![chunks(name)]).await;
    let (_, data) = thinking(&done);
    let data = data.unwrap();
    let item = done_item(name, "reasoning");
    // The `.done` item wins: its encrypted_content differs from the `.added` one.
    assert_eq!(data, &item);
    let Part::Thinking { replay, .. } = &done.message.parts[0] else {
        panic!("reasoning comes first");
    };
    assert_eq!(
        replay.as_ref().unwrap().origin,
        replay_tag("openai-responses", "gpt-5")
    );

    let (_, events, done) = run(vec![chunks(
        "vercel--openai-reasoning-encrypted-content.1.chunks.txt",
    )])
    .await;
    let (text, data) = thinking(&done);
    assert!(text.starts_with("**Calculating step-by-step using calculator**"));
    assert!(
        data.unwrap()["encrypted_content"]
            .as_str()
            .unwrap()
            .starts_with("gAAAAA")
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(e, StreamEvent::ThinkingDelta { .. }))
    );

    // LM Studio sends reasoning text but no encrypted content: shown, never replayed.
    let (_, _, done) = run(vec![chunks("vercel--lmstudio-tool-call.1.chunks.txt")]).await;
    let (text, data) = thinking(&done);
    assert!(text.starts_with("The user is asking for the weather"));
    assert!(data.is_none());
    assert_eq!(
        done.message.text(),
        "I'll get the current weather information for San Francisco for you."
    );
}

#[tokio::test]
async fn recorded_text_streams() {
    let name = "genai--openai_resp--utf8_chunking_bug--response_000.txt";
    let expected = done_item(name, "message")["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(!expected.is_ascii());
    let (_, events, done) = run(vec![raw(name)]).await;
    assert_eq!(done.message.text(), expected);
    assert_eq!(text_of(&events), expected);
    assert_eq!(done.stop, StopReason::EndTurn);
    assert_eq!(done.usage, usage(10, 50, 0, 0));

    // Item ids rotate on every event: correlation is by output_index.
    let name = "vercel--github-copilot-id-rotation.1.chunks.txt";
    let expected = done_item(name, "message")["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_string();
    let (_, _, done) = run(vec![chunks(name)]).await;
    assert_eq!(done.message.text(), expected);
    assert_eq!(thinking(&done).0, "**Counting character occurrences**");
    assert_eq!(done.usage, usage(19, 105, 0, 44));

    // Two message items (commentary, then final answer) stay two text parts.
    let (_, _, done) = run(vec![chunks("vercel--openai-phase.1.chunks.txt")]).await;
    let texts: Vec<&Part> = done
        .message
        .parts
        .iter()
        .filter(|p| matches!(p, Part::Text { .. }))
        .collect();
    assert_eq!(texts.len(), 2);
    assert!(done.message.text().starts_with("Got it"));
    assert_eq!(done.usage, usage(4040, 463, 3072, 64));

    // No deltas at all: the text comes from output_item.done.
    let (_, events, done) = run(vec![raw("codex--cli_responses_fixture.sse")]).await;
    assert_eq!(done.message.text(), "fixture hello");
    assert_eq!(text_of(&events), "fixture hello");
}

#[tokio::test]
async fn custom_tool_input_is_kept_and_builtin_items_are_skipped() {
    let (_, _, done) = run(vec![raw(
        "genai--openai_resp--custom_grammar_tool--response_000.txt",
    )])
    .await;
    let found = calls(&done);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].0, "call_dnKaJCb74pLKobQZDVi5yv2U");
    assert_eq!(found[0].1, "apply_patch");
    assert!(
        found[0]
            .2
            .starts_with("*** Begin Patch\n*** Update File: hello.py")
    );

    let (_, _, done) = run(vec![chunks("vercel--openai-apply-patch-tool.1.chunks.txt")]).await;
    assert!(calls(&done).is_empty());
    assert_eq!(done.stop, StopReason::EndTurn);
}

#[tokio::test]
async fn errors_inside_the_stream() {
    // insufficient_quota: reported once, not retried.
    let (server, _, done) = run_result(vec![chunks("vercel--openai-error.1.chunks.txt")]).await;
    let err = done.unwrap_err();
    assert!(!err.is_retryable());
    assert!(err.to_string().contains("You exceeded your current quota"));
    assert_eq!(server.requests().len(), 1);

    let (_, events, done) = run_result(vec![raw(
        "genai--openai_resp--stream_error_after_delta--response_000.txt",
    )])
    .await;
    assert!(
        done.unwrap_err()
            .to_string()
            .contains("Something went wrong")
    );
    assert_eq!(text_of(&events), "Partial answer");

    let (_, _, done) = run_result(vec![raw(
        "genai--openai_resp--stream_error--response_000.txt",
    )])
    .await;
    let err = done.unwrap_err();
    assert!(matches!(err, ProviderError::Stream { .. }));
    assert!(
        err.to_string()
            .contains("ERR_SOMETHING: Something went wrong")
    );

    // A request above the tokens-per-minute limit can only pass smaller: treated as overflow.
    let (server, _, done) = run_result(vec![chunks(
        "vercel--openai-response-failed-only.1.chunks.txt",
    )])
    .await;
    assert!(done.unwrap_err().is_context_overflow());
    assert_eq!(server.requests().len(), 1);

    // A transient failure event is retried.
    let failed = Reply::sse(
        "event: response.failed\ndata: {\"type\":\"response.failed\",\"response\":{\"status\":\"failed\",\"error\":{\"code\":\"server_error\",\"message\":\"The server had an error\"}}}\n\n",
    );
    let (server, events, done) = run(vec![failed, raw("codex--cli_responses_fixture.sse")]).await;
    assert_eq!(done.message.text(), "fixture hello");
    assert_eq!(server.requests().len(), 2);
    assert!(
        events
            .iter()
            .any(|e| matches!(e, StreamEvent::Retrying { .. }))
    );
}

#[tokio::test]
async fn truncated_and_cut_streams_are_retried() {
    // Recorded stream that stops before response.completed.
    let (server, events, done) = run(vec![
        chunks("vercel--openai-issue-8562-missing-reasoning-summary.1.chunks.txt"),
        raw("codex--cli_responses_fixture.sse"),
    ])
    .await;
    assert_eq!(server.requests().len(), 2);
    assert!(events.iter().any(|e| matches!(
        e,
        StreamEvent::Retrying { reason, .. } if reason.contains("response.completed")
    )));
    assert_eq!(done.message.text(), "fixture hello");

    // Connection dropped in the middle of the argument deltas.
    let body =
        fixture("openai-responses/genai--openai_resp--reasoning_stream_tools--response_000.txt");
    let cut = Reply::sse(body.clone()).cut_after(body.len() * 3 / 4);
    let (server, events, done) = run(vec![cut, Reply::sse(body)]).await;
    assert_eq!(server.requests().len(), 2);
    assert!(
        events
            .iter()
            .any(|e| matches!(e, StreamEvent::Retrying { attempt: 2, .. }))
    );
    assert_eq!(done.message.tool_calls().count(), 1);
}

#[tokio::test]
async fn http_failures() {
    let (server, events, done) = run(vec![
        Reply::json(429, r#"{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}"#)
            .header("retry-after", "1"),
        Reply::json(503, r#"{"error":{"message":"overloaded"}}"#),
        raw("codex--cli_responses_fixture.sse"),
    ])
    .await;
    assert_eq!(done.message.text(), "fixture hello");
    assert_eq!(server.requests().len(), 3);
    let attempts: Vec<u32> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Retrying { attempt, .. } => Some(*attempt),
            _ => None,
        })
        .collect();
    assert_eq!(attempts, vec![2, 3]);

    let body = format!(
        r#"{{"error":{{"message":"Incorrect API key provided: {KEY}","type":"invalid_request_error","code":"invalid_api_key"}}}}"#
    );
    let (server, _, done) = run_result(vec![Reply::json(401, body)]).await;
    let err = done.unwrap_err();
    assert!(matches!(err, ProviderError::Auth { .. }));
    assert!(err.to_string().contains("OPENAI_API_KEY"));
    assert!(!err.to_string().contains(KEY));
    assert_eq!(server.requests().len(), 1);

    // The Responses overflow message does not say "context length"; the code does.
    let (_, _, done) = run_result(vec![Reply::json(
        400,
        r#"{"error":{"message":"Your input exceeds the limit of this model. Please adjust your input and try again.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}"#,
    )])
    .await;
    assert!(done.unwrap_err().is_context_overflow());
}

/// The recorded four-step run (reasoning + calls, then the answer), split per response.
fn steps() -> Vec<Reply> {
    let bytes = fixture("openai-responses/vercel--openai-reasoning-encrypted-content.1.chunks.txt");
    let mut bodies: Vec<String> = Vec::new();
    for line in String::from_utf8(bytes).unwrap().lines() {
        if line.contains(r#""type":"response.created""#) {
            bodies.push(String::new());
        }
        if let Some(body) = bodies.last_mut() {
            body.push_str(line);
            body.push('\n');
        }
    }
    bodies
        .into_iter()
        .map(|b| Reply::sse(payload_lines_to_sse(b.as_bytes(), Framing::EventFromType)))
        .collect()
}

fn answer(done: &Completion, value: &str) -> Message {
    let (id, name, _) = done.message.tool_calls().next().unwrap();
    Message {
        role: Role::User,
        parts: vec![Part::ToolResult {
            call_id: id.into(),
            name: name.into(),
            content: value.into(),
            is_error: false,
            images: Vec::new(),
        }],
    }
}

#[tokio::test]
async fn multi_step_run_replays_reasoning_to_the_same_model_only() {
    let server = MockServer::start(steps());
    let model = model(&server);
    let mut history = vec![Message::user("Compute ((12 + 7) * 3) * 10")];
    let mut results = ["19", "57", "570"].into_iter();
    let mut final_text = String::new();
    for _ in 0..4 {
        let (_, done) = collect(&model, request("gpt-5", history.clone())).await;
        let done = done.unwrap();
        history.push(done.message.clone());
        if done.stop == StopReason::ToolUse {
            history.push(answer(&done, results.next().unwrap()));
        } else {
            final_text = done.message.text();
        }
    }
    assert_eq!(final_text, "The final result is **570**.");

    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    let reasoning = done_item(
        "vercel--openai-reasoning-encrypted-content.1.chunks.txt",
        "reasoning",
    );
    let first = requests[0].json();
    assert_eq!(requests[0].target, "/v1/responses");
    assert_eq!(
        requests[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(first["instructions"], "You are terse.");
    assert_eq!(first["store"], false);
    assert_eq!(first["stream"], true);
    assert_eq!(first["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(first["reasoning"], json!({"effort": "medium"}));
    assert_eq!(
        first["tools"][0],
        json!({"type":"function","name":"calculator","description":"Arithmetic",
            "parameters":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"},"op":{"type":"string"}}},
            "strict":false})
    );
    assert_eq!(
        first["input"],
        json!([{"type":"message","role":"user","content":"Compute ((12 + 7) * 3) * 10"}])
    );

    let second = requests[1].json();
    let input = second["input"].as_array().unwrap();
    assert_eq!(input[1], reasoning, "reasoning replayed unchanged");
    assert_eq!(
        input[2],
        json!({"type":"function_call","call_id":"call_AB6AaRZ1FYZB2RwS6A5vbdqn","name":"calculator","arguments":"{\"a\":12,\"b\":7,\"op\":\"add\"}"})
    );
    assert_eq!(
        input[3],
        json!({"type":"function_call_output","call_id":"call_AB6AaRZ1FYZB2RwS6A5vbdqn","output":"19"})
    );
    let last = requests[3].json();
    let items = last["input"].as_array().unwrap();
    let outputs: Vec<&Value> = items
        .iter()
        .filter(|i| i["type"] == "function_call_output")
        .map(|i| &i["output"])
        .collect();
    assert_eq!(outputs, ["19", "57", "570"]);

    // The same history sent to another model: the reasoning stays behind.
    let server = MockServer::start(vec![raw("codex--cli_responses_fixture.sse")]);
    let other = self::model(&server);
    let (_, done) = collect(&other, request("gpt-5-mini", history)).await;
    done.unwrap();
    let body = server.requests()[0].json();
    let input = body["input"].as_array().unwrap();
    assert!(input.iter().all(|i| i["type"] != "reasoning"));
    assert!(
        !body
            .to_string()
            .contains(reasoning["encrypted_content"].as_str().unwrap())
    );
    assert_eq!(
        input
            .iter()
            .filter(|i| i["type"] == "function_call")
            .count(),
        3
    );
}
