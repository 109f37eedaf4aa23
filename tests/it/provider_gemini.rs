//! The Gemini adapter end to end: `HttpModel` + `GeminiWire` against a local mock server
//! replaying recorded `streamGenerateContent` streams (tests/fixtures/gemini/, CRLF recordings
//! served byte for byte) and hand-written failures, with assertions on what versus sent.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util::mock_server;

use std::sync::Arc;
use std::time::Duration;

use mock_server::*;
use serde_json::{Value, json};
use versus::model::{
    Completion, Message, ModelRequest, Part, Reasoning, Role, StopReason, StreamEvent, ToolDef,
    Usage,
};
use versus::provider::gemini::GeminiWire;
use versus::provider::http::default_client;
use versus::provider::{HttpModel, ProviderError, RetryPolicy, WireConfig};

const KEY: &str = "AIzaSy-test-0123456789";
const MODEL: &str = "gemini-3-pro-preview";
const MAX_RETRY_AFTER: Duration = Duration::from_millis(40);

fn client(server: &MockServer, max_tries: u32) -> HttpModel {
    let wire = GeminiWire::new(WireConfig {
        provider: "gemini".into(),
        base_url: server.url(),
        api_key: Some(KEY.into()),
        key_hint: "GEMINI_API_KEY".into(),
        base_hint: String::new(),
        headers: vec![],
        vision: true,
    });
    let retry = RetryPolicy {
        max_tries,
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(20),
        max_retry_after: MAX_RETRY_AFTER,
    };
    HttpModel::new(default_client().unwrap(), Arc::new(wire), retry)
}

fn request(messages: Vec<Message>) -> ModelRequest {
    ModelRequest {
        model: MODEL.into(),
        system: "You are terse.".into(),
        messages: messages.into(),
        tools: vec![ToolDef {
            name: "read_file".into(),
            description: "Read a file.".into(),
            parameters: json!({
                "$schema": "http://json-schema.org/draft-07/schema#",
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "File path."},
                    "offset": {"type": "integer", "minimum": 1}
                },
                "required": ["path"],
                "additionalProperties": false
            }),
        }]
        .into(),
        max_output_tokens: Some(2048),
        temperature: None,
        reasoning: Reasoning::Low,
        seed: None,
    }
}

/// Streams one request to the end: every event, and the completion or the final error.
async fn run(
    server: &MockServer,
    max_tries: u32,
    request: ModelRequest,
) -> (Vec<StreamEvent>, Result<Completion, ProviderError>) {
    collect(&client(server, max_tries), request).await
}

async fn once(reply: Reply) -> (MockServer, Vec<StreamEvent>, Completion) {
    let server = MockServer::start(vec![reply]);
    let (events, done) = run(&server, 3, request(vec![Message::user("hi")])).await;
    (server, events, done.unwrap())
}

fn lines(name: &str) -> Reply {
    Reply::sse(payload_lines_to_sse(
        &fixture(&format!("gemini/{name}")),
        Framing::DataOnly,
    ))
}

fn raw(name: &str) -> Reply {
    Reply::sse(fixture(&format!("gemini/{name}")))
}

fn sse(chunks: &[Value]) -> Vec<u8> {
    chunks
        .iter()
        .flat_map(|c| format!("data: {c}\r\n\r\n").into_bytes())
        .collect()
}

fn signature(part: &Part) -> Option<String> {
    let replay = match part {
        Part::Text { replay, .. }
        | Part::Thinking { replay, .. }
        | Part::ToolCall { replay, .. } => replay.as_ref()?,
        Part::ToolResult { .. } => return None,
    };
    assert_eq!(replay.origin, format!("gemini/{MODEL}"));
    replay.data["thoughtSignature"].as_str().map(str::to_string)
}

fn ok_stream() -> Reply {
    Reply::sse(sse(&[
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "recovered"}]}}]}),
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": ""}]}, "finishReason": "STOP"}],
               "usageMetadata": {"promptTokenCount": 4, "candidatesTokenCount": 1}}),
    ]))
}

#[tokio::test]
async fn text_stream_keeps_the_empty_signed_part_and_the_request_is_right() {
    let (server, events, done) = once(lines("vercel--google-text.chunks.txt")).await;
    let text = "There are **3** \"r\"s in strawberry.\n\nst**r**awbe**rr**y";
    assert_eq!(text_of(&events), text);
    assert_eq!(done.message.text(), text);
    assert_eq!(done.stop, StopReason::EndTurn);
    assert_eq!(done.message.parts.len(), 2);
    assert!(matches!(&done.message.parts[1], Part::Text { text, .. } if text.is_empty()));
    assert!(
        signature(&done.message.parts[1])
            .unwrap()
            .starts_with("EqsFCqgFAb4")
    );
    assert_eq!(
        done.usage,
        Usage {
            input: 9,
            output: 23 + 185,
            cache_read: 0,
            cache_write: 0,
            reasoning: 185,
            unreported: 0,
        }
    );

    let sent = &server.requests()[0];
    assert_eq!(
        sent.target,
        format!("/v1beta/models/{MODEL}:streamGenerateContent?alt=sse")
    );
    assert!(!sent.target.contains("key="));
    assert_eq!(sent.header("x-goog-api-key"), Some(KEY));
    let body = sent.json();
    assert_eq!(
        body["systemInstruction"],
        json!({"parts": [{"text": "You are terse."}]})
    );
    assert_eq!(
        body["contents"],
        json!([{"role": "user", "parts": [{"text": "hi"}]}])
    );
    assert_eq!(
        body["tools"],
        json!([{"functionDeclarations": [{
            "name": "read_file",
            "description": "Read a file.",
            "parameters": {
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "File path."},
                    "offset": {"type": "integer", "minimum": 1}
                },
                "required": ["path"]
            }
        }]}])
    );
    assert_eq!(
        body["generationConfig"],
        json!({"maxOutputTokens": 2048,
               "thinkingConfig": {"thinkingLevel": "low", "includeThoughts": true}})
    );
}

#[tokio::test]
async fn crlf_recordings_served_unchanged() {
    let (_, events, done) = once(raw("genai--gemini--thinking_stream--response_000.txt")).await;
    assert!(
        events
            .iter()
            .any(|e| matches!(e, StreamEvent::ThinkingDelta { text } if text.starts_with("**Defining Atmospheric Color**")))
    );
    assert!(matches!(&done.message.parts[0], Part::Thinking { .. }));
    assert!(done.message.text().starts_with("The sky is blue because"));
    assert_eq!(
        (done.usage.input, done.usage.output, done.usage.reasoning),
        (12, 35 + 697, 697)
    );

    // Gemini says STOP although it called a function.
    let (_, events, done) = once(raw("genai--gemini--tool_stream--response_000.txt")).await;
    assert_eq!(done.stop, StopReason::ToolUse);
    assert!(events.contains(&StreamEvent::ToolCallStart {
        index: 0,
        id: "u959pftr".into(),
        name: "get_weather".into()
    }));
    let (id, name, arguments) = done.message.tool_calls().next().unwrap();
    assert_eq!((id, name), ("u959pftr", "get_weather"));
    assert_eq!(
        serde_json::from_str::<Value>(arguments).unwrap(),
        json!({"country": "Egypt", "unit": "C", "city": "Cairo"})
    );
    let call = done
        .message
        .parts
        .iter()
        .find(|p| matches!(p, Part::ToolCall { .. }))
        .unwrap();
    assert!(signature(call).unwrap().starts_with("EpoICpcIAQw51sc7"));
    assert!(done.message.text().contains("Cairo is the only city"));

    let (_, _, done) = once(raw(
        "genai--gemini--builtin_with_functions--response_000.txt",
    ))
    .await;
    let (id, _, arguments) = done.message.tool_calls().next().unwrap();
    assert_eq!(id, "call_3091305");
    assert_eq!(
        serde_json::from_str::<Value>(arguments).unwrap(),
        json!({"unit": "C", "city": "Cairo"})
    );
    assert_eq!(done.usage.reasoning, 76);
}

#[tokio::test]
async fn whole_function_calls_with_and_without_ids() {
    let (_, _, done) = once(lines("vercel--google-tool-call.chunks.txt")).await;
    assert_eq!(done.stop, StopReason::ToolUse);
    let calls: Vec<_> = done.message.tool_calls().collect();
    assert_eq!(calls.len(), 1);
    let (id, name, arguments) = calls[0];
    assert_eq!(name, "weather");
    assert!(!id.is_empty(), "a call without an id gets one");
    assert_eq!(arguments, r#"{"location":"San Francisco"}"#);
    assert!(
        signature(&done.message.parts[0])
            .unwrap()
            .starts_with("EqUCCqICAb4")
    );
    assert!(
        matches!(&done.message.parts[0], Part::ToolCall { replay: Some(r), .. } if r.data.get("geminiId").is_none())
    );

    let (_, _, done) = once(lines("vercel--google-tool-call-gemini3.chunks.txt")).await;
    assert!(signature(&done.message.parts[0]).unwrap().len() > 1000);

    let (_, events, done) = once(lines("vercel--issue-10781.1.chunks.txt")).await;
    assert_eq!(text_of(&events), "Let me check.");
    assert_eq!(done.message.tool_calls().next().unwrap().0, "g1bmv6il");
    assert!(
        matches!(&done.message.parts[1], Part::ToolCall { replay: Some(r), .. } if r.data["geminiId"] == true)
    );

    // The non-streaming body, compacted into one event, decodes the same way.
    let whole: Value =
        serde_json::from_slice(&fixture("gemini/vercel--google-tool-call.json")).unwrap();
    let (_, _, done) = once(Reply::sse(sse(&[whole]))).await;
    assert_eq!(done.message.tool_calls().next().unwrap().1, "weather");
    assert_eq!(done.usage.reasoning, 893);

    // A whole stream as one JSON array (what Gemini sends without alt=sse).
    let array: Value = serde_json::from_slice(&fixture(
        "gemini/genai--gemini--thinking_stream_tools--response_000.txt",
    ))
    .unwrap();
    let (_, _, done) = once(Reply::sse(sse(&[array]))).await;
    assert!(matches!(&done.message.parts[0], Part::Thinking { .. }));
    let (_, name, arguments) = done.message.tool_calls().next().unwrap();
    assert_eq!(name, "get_weather");
    assert_eq!(
        serde_json::from_str::<Value>(arguments).unwrap(),
        json!({"country": "France", "unit": "C", "city": "Paris"})
    );
    assert_eq!(done.stop, StopReason::ToolUse);
}

#[tokio::test]
async fn signatures_on_empty_text_parts_and_thought_parts() {
    for name in [
        "vercel--google-reasoning-gemini3.chunks.txt",
        "vercel--issue-18073-empty-text-thought-signature.chunks.txt",
    ] {
        let (_, _, done) = once(lines(name)).await;
        let last = done.message.parts.last().unwrap();
        assert!(
            matches!(last, Part::Text { text, .. } if text.is_empty()),
            "{name}"
        );
        assert!(signature(last).is_some(), "{name}");
        assert!(!done.message.text().is_empty());
    }
    let (_, events, done) = once(lines("vercel--gemma-4-output-usage.chunks.txt")).await;
    assert_eq!(text_of(&events), "hello");
    let Part::Thinking { text, replay } = &done.message.parts[0] else {
        panic!("thought first: {:?}", done.message.parts);
    };
    assert!(text.contains("Reply with exactly: hello"));
    assert!(replay.is_none());
    assert_eq!((done.usage.output, done.usage.reasoning), (77, 76));
}

#[tokio::test]
async fn streamed_function_call_arguments() {
    let (_, events, done) = once(lines(
        "vercel--google-stream-tool-call-arguments.chunks.txt",
    ))
    .await;
    let calls: Vec<(String, Value)> = done
        .message
        .tool_calls()
        .map(|(_, n, a)| (n.to_string(), serde_json::from_str(a).unwrap()))
        .collect();
    assert_eq!(
        calls,
        vec![
            ("getWeather".to_string(), json!({"location": "Boston"})),
            (
                "getWeather".to_string(),
                json!({"location": "San Francisco"})
            ),
        ]
    );
    assert!(signature(&done.message.parts[0]).is_some());
    let ids: Vec<&str> = done.message.tool_calls().map(|c| c.0).collect();
    assert_ne!(ids[0], ids[1]);
    assert!(events.contains(&StreamEvent::ToolCallDelta {
        index: 1,
        delta: r#"{"location":"San Francisco"}"#.into()
    }));

    let (_, _, done) = once(lines("vercel--google-stream-no-args-tool-call.chunks.txt")).await;
    let calls: Vec<(String, String)> = done
        .message
        .tool_calls()
        .map(|(_, n, a)| (n.to_string(), a.to_string()))
        .collect();
    assert_eq!(
        calls,
        vec![
            ("read_theme".to_string(), "{}".to_string()),
            ("read_screen".to_string(), r#"{"id":"A"}"#.to_string()),
            ("read_screen".to_string(), r#"{"id":"B"}"#.to_string()),
            ("read_screen".to_string(), r#"{"id":"C"}"#.to_string()),
        ]
    );
    assert!(matches!(&done.message.parts[0], Part::Thinking { .. }));

    let (_, _, done) = once(lines(
        "vercel--google-stream-tool-call-array-arguments-missing-terminal-function-call.chunks.txt",
    ))
    .await;
    let (_, name, arguments) = done.message.tool_calls().next().unwrap();
    assert_eq!(name, "writeItems");
    assert_eq!(
        serde_json::from_str::<Value>(arguments).unwrap(),
        json!({"operations": [
            {"action": "add", "description": "Fresh red apple", "itemid": "apple_001", "price": 0.5},
            {"action": "add", "description": "Ripe yellow banana", "itemid": "banana_001", "price": 0.3}
        ]})
    );
    assert_eq!(done.stop, StopReason::ToolUse);
}

#[tokio::test]
async fn parallel_calls_in_one_candidate_and_cached_usage() {
    let body = sse(&[
        json!({"candidates": [{"content": {"role": "model", "parts": [
            {"text": "Reading both."},
            {"functionCall": {"name": "read_file", "args": {"path": "a.rs"}}, "thoughtSignature": "U0lH"},
            {"functionCall": {"name": "read_file", "args": {"path": "b.rs", "offset": 3}}}
        ]}, "finishReason": "STOP"}],
        "usageMetadata": {"promptTokenCount": 1000, "cachedContentTokenCount": 800,
                          "candidatesTokenCount": 30, "thoughtsTokenCount": 12}}),
    ]);
    let (_, events, done) = once(Reply::sse(body)).await;
    let starts: Vec<usize> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ToolCallStart { index, .. } => Some(*index),
            _ => None,
        })
        .collect();
    assert_eq!(starts, vec![0, 1]);
    let args: Vec<&str> = done.message.tool_calls().map(|c| c.2).collect();
    assert_eq!(
        args,
        vec![r#"{"path":"a.rs"}"#, r#"{"offset":3,"path":"b.rs"}"#]
    );
    assert_eq!(done.stop, StopReason::ToolUse);
    assert_eq!(
        done.usage,
        Usage {
            input: 200,
            output: 42,
            cache_read: 800,
            cache_write: 0,
            reasoning: 12,
            unreported: 0,
        }
    );
}

#[tokio::test]
async fn error_inside_the_stream_after_content_is_retried() {
    let failing = sse(&[
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "partial "}]}}]}),
        json!({"error": {"code": 503, "message": "The model is overloaded. Please try again later.", "status": "UNAVAILABLE"}}),
    ]);
    let server = MockServer::start(vec![Reply::sse(failing), ok_stream()]);
    let (events, done) = run(&server, 3, request(vec![Message::user("hi")])).await;
    assert_eq!(done.unwrap().message.text(), "recovered");
    assert_eq!(server.requests().len(), 2);
    assert_eq!(text_of(&events), "partial recovered");
    assert!(events.iter().any(
        |e| matches!(e, StreamEvent::Retrying { attempt: 2, reason, .. } if reason.contains("overloaded"))
    ));
}

#[tokio::test]
async fn rate_limits_honour_retry_after_and_retry_info() {
    let server = MockServer::start(vec![
        Reply::json(
            429,
            r#"{"error":{"code":429,"message":"slow down","status":"RESOURCE_EXHAUSTED"}}"#,
        )
        .header("retry-after", "0.03"),
        ok_stream(),
    ]);
    let (events, done) = run(&server, 3, request(vec![Message::user("hi")])).await;
    assert_eq!(done.unwrap().message.text(), "recovered");
    assert_eq!(server.requests().len(), 2);
    assert_eq!(retries(&events), vec![(2, 30)]);

    // No header: the body's RetryInfo (34.4 s) is used, capped by the policy.
    let server = MockServer::start(vec![
        Reply::json(429, fixture("gemini/vercel--google-429-retry-info.json")),
        ok_stream(),
    ]);
    let (events, done) = run(&server, 3, request(vec![Message::user("hi")])).await;
    assert_eq!(done.unwrap().message.text(), "recovered");
    assert_eq!(
        retries(&events),
        vec![(2, MAX_RETRY_AFTER.as_millis() as u64)]
    );
    let reason = events
        .iter()
        .find_map(|e| match e {
            StreamEvent::Retrying { reason, .. } => Some(reason.clone()),
            _ => None,
        })
        .unwrap();
    assert!(
        reason.contains("You exceeded your current quota"),
        "{reason}"
    );
}

#[tokio::test]
async fn server_error_then_success_and_bad_requests_are_final() {
    let server = MockServer::start(vec![
        Reply::json(
            500,
            r#"{"error":{"code":500,"message":"Internal error encountered.","status":"INTERNAL"}}"#,
        ),
        ok_stream(),
    ]);
    let (events, done) = run(&server, 3, request(vec![Message::user("hi")])).await;
    assert_eq!(done.unwrap().message.text(), "recovered");
    assert_eq!(retries(&events).len(), 1);

    let server = MockServer::start(vec![Reply::json(
        400,
        fixture("gemini/vercel--issue-8943-gemini-2.5-flash-error.json"),
    )]);
    let (_, done) = run(&server, 3, request(vec![Message::user("hi")])).await;
    let err = done.unwrap_err();
    assert!(matches!(err, ProviderError::BadRequest { status: 400, .. }));
    assert!(err.to_string().contains("Penalty is not enabled"));
    assert_eq!(server.requests().len(), 1);

    let server = MockServer::start(vec![Reply::json(
        400,
        r#"{"error":{"code":400,"message":"The input token count (1500000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}"#,
    )]);
    let (_, done) = run(&server, 3, request(vec![Message::user("hi")])).await;
    assert!(done.unwrap_err().is_context_overflow());
}

#[tokio::test]
async fn connection_cut_and_missing_finish_reason_are_retried() {
    let recording = fixture("gemini/genai--gemini--tool_stream--response_000.txt");
    let server = MockServer::start(vec![Reply::sse(recording).cut_after(2500), ok_stream()]);
    let (events, done) = run(&server, 3, request(vec![Message::user("hi")])).await;
    assert_eq!(done.unwrap().message.text(), "recovered");
    assert_eq!(server.requests().len(), 2);
    let retry = events
        .iter()
        .position(|e| matches!(e, StreamEvent::Retrying { .. }))
        .unwrap();
    assert!(text_of(&events[..retry]).starts_with("To determine"));

    let unfinished = sse(&[json!({"candidates": [{"content": {"parts": [{"text": "Hi"}]}}]})]);
    let server = MockServer::start(vec![Reply::sse(unfinished.clone()), Reply::sse(unfinished)]);
    let (_, done) = run(&server, 2, request(vec![Message::user("hi")])).await;
    assert!(matches!(done.unwrap_err(), ProviderError::Network { .. }));
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn invalid_key_names_the_variable_and_never_the_key() {
    let body = format!(
        r#"{{"error":{{"code":400,"message":"API key not valid. Please pass a valid API key. (got {KEY})","status":"INVALID_ARGUMENT","details":[{{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID"}}]}}}}"#
    );
    let server = MockServer::start(vec![Reply::json(400, body)]);
    let (_, done) = run(&server, 3, request(vec![Message::user("hi")])).await;
    let err = done.unwrap_err();
    assert!(matches!(err, ProviderError::Auth { .. }), "{err}");
    let text = err.to_string();
    assert!(text.contains("GEMINI_API_KEY"), "{text}");
    assert!(!text.contains(KEY), "{text}");
    assert_eq!(server.requests().len(), 1);

    let server = MockServer::start(vec![Reply::json(
        403,
        r#"{"error":{"code":403,"message":"Permission denied","status":"PERMISSION_DENIED"}}"#,
    )]);
    let (_, done) = run(&server, 3, request(vec![Message::user("hi")])).await;
    assert!(matches!(
        done.unwrap_err(),
        ProviderError::Auth { status: 403, .. }
    ));
}

/// The conversation after `first`: its assistant message, then one result per call.
fn follow_up(first: &Completion) -> Vec<Message> {
    let mut history = vec![Message::user("weather please"), first.message.clone()];
    for (id, name, _) in first.message.tool_calls() {
        history.push(Message {
            role: Role::User,
            parts: vec![Part::ToolResult {
                call_id: id.into(),
                name: name.into(),
                content: "25 C".into(),
                is_error: false,
                images: Vec::new(),
            }],
        });
    }
    history
}

#[tokio::test]
async fn follow_up_replays_signatures_to_the_same_model_only() {
    let (_, _, first) = once(raw("genai--gemini--tool_stream--response_000.txt")).await;
    let recorded_signature = signature(
        first
            .message
            .parts
            .iter()
            .find(|p| matches!(p, Part::ToolCall { .. }))
            .unwrap(),
    )
    .unwrap();

    let server = MockServer::start(vec![ok_stream(), ok_stream()]);
    run(&server, 1, request(follow_up(&first))).await.1.unwrap();
    let mut other = request(follow_up(&first));
    other.model = "gemini-2.5-pro".into();
    run(&server, 1, other).await.1.unwrap();
    let sent = server.requests();

    let body = sent[0].json();
    let contents = body["contents"].as_array().unwrap();
    assert_eq!(contents.len(), 3);
    assert_eq!(contents[1]["role"], "model");
    let call = contents[1]["parts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p.get("functionCall").is_some())
        .unwrap();
    assert_eq!(
        call["functionCall"],
        json!({"name": "get_weather", "id": "u959pftr",
               "args": {"country": "Egypt", "unit": "C", "city": "Cairo"}})
    );
    assert_eq!(call["thoughtSignature"], json!(recorded_signature));
    assert_eq!(
        contents[2],
        json!({"role": "user", "parts": [{"functionResponse": {
            "name": "get_weather", "id": "u959pftr", "response": {"content": "25 C"}}}]})
    );

    // Another model: no signature, no thought, no Gemini-issued id.
    let body = sent[1].json();
    assert_eq!(
        sent[1].target,
        "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
    );
    assert!(!body.to_string().contains(&recorded_signature));
    let parts = body["contents"][1]["parts"].as_array().unwrap();
    assert!(parts.iter().all(|p| p.get("thought").is_none()));
    let call = parts
        .iter()
        .find(|p| p.get("functionCall").is_some())
        .unwrap();
    assert!(call["functionCall"].get("id").is_none());
    assert!(
        body["contents"][2]["parts"][0]["functionResponse"]
            .get("id")
            .is_none()
    );
}

#[tokio::test]
async fn history_from_another_provider_with_malformed_arguments() {
    let history = vec![
        Message::user("go"),
        Message {
            role: Role::Assistant,
            parts: vec![
                Part::Thinking {
                    text: "anthropic thinking".into(),
                    replay: None,
                },
                Part::ToolCall {
                    id: "toolu_01".into(),
                    name: "read_file".into(),
                    arguments: "{\"path\": ".into(),
                    replay: None,
                },
                Part::ToolCall {
                    id: "toolu_02".into(),
                    name: "read_file".into(),
                    arguments: "{\"path\": \"b\"}".into(),
                    replay: None,
                },
            ],
        },
        Message {
            role: Role::User,
            parts: vec![Part::ToolResult {
                call_id: "toolu_01".into(),
                name: "read_file".into(),
                content: "invalid JSON in arguments".into(),
                is_error: true,
                images: Vec::new(),
            }],
        },
        Message {
            role: Role::User,
            parts: vec![Part::ToolResult {
                call_id: "toolu_02".into(),
                name: "read_file".into(),
                content: "B".into(),
                is_error: false,
                images: Vec::new(),
            }],
        },
    ];
    let server = MockServer::start(vec![ok_stream()]);
    run(&server, 1, request(history)).await.1.unwrap();
    let body = server.requests()[0].json();
    assert_eq!(
        body["contents"][1],
        json!({"role": "model", "parts": [
            {"functionCall": {"name": "read_file", "args": {}},
             "thoughtSignature": "skip_thought_signature_validator"},
            {"functionCall": {"name": "read_file", "args": {"path": "b"}}}
        ]})
    );
    assert_eq!(
        body["contents"][2],
        json!({"role": "user", "parts": [
            {"functionResponse": {"name": "read_file", "response": {"error": "invalid JSON in arguments"}}},
            {"functionResponse": {"name": "read_file", "response": {"content": "B"}}}
        ]})
    );
}
