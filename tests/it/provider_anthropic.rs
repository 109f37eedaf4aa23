//! The Anthropic adapter end to end: `HttpModel` + `AnthropicWire` against a local mock server
//! replaying recorded Messages streams (tests/fixtures/anthropic/) and hand-written failures,
//! with assertions on both what came back and what versus sent.
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
use versus::provider::anthropic::AnthropicWire;
use versus::provider::http::default_client;
use versus::provider::{HttpModel, ProviderError, RetryPolicy, WireConfig};

const KEY: &str = "sk-ant-test-0123456789";
const MODEL: &str = "claude-sonnet-4-5";

fn client(server: &MockServer, max_tries: u32) -> HttpModel {
    let wire = AnthropicWire::new(WireConfig {
        provider: "anthropic".into(),
        base_url: format!("{}/", server.url()),
        api_key: Some(KEY.into()),
        key_hint: "ANTHROPIC_API_KEY".into(),
        base_hint: String::new(),
        headers: vec![("anthropic-beta".into(), "test-beta".into())],
        vision: true,
    });
    let retry = RetryPolicy {
        max_tries,
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(20),
        max_retry_after: Duration::from_secs(5),
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
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}},
                               "required": ["path"], "additionalProperties": false}),
        }]
        .into(),
        max_output_tokens: None,
        temperature: Some(0.5),
        reasoning: Reasoning::Default,
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

async fn once(replies: Vec<Reply>) -> (MockServer, Vec<StreamEvent>, Completion) {
    let server = MockServer::start(replies);
    let (events, done) = run(&server, 3, request(vec![Message::user("hi")])).await;
    (server, events, done.unwrap())
}

fn lines(name: &str) -> Reply {
    Reply::sse(payload_lines_to_sse(
        &fixture(&format!("anthropic/{name}")),
        Framing::EventFromType,
    ))
}

fn raw(name: &str) -> Reply {
    Reply::sse(fixture(&format!("anthropic/{name}")))
}

fn sse(events: &[Value]) -> Vec<u8> {
    let mut body = String::new();
    for event in events {
        let kind = event["type"].as_str().unwrap();
        body.push_str(&format!("event: {kind}\ndata: {event}\n\n"));
    }
    body.into_bytes()
}

/// A short, complete text stream for retry tests.
fn ok_stream() -> Reply {
    Reply::sse(sse(&[
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 3, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "recovered"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 2}}),
        json!({"type": "message_stop"}),
    ]))
}

#[tokio::test]
async fn text_stream_and_the_request_sent() {
    let (server, events, done) = once(vec![lines("vercel--anthropic-text.chunks.txt")]).await;
    let text = "Hello! I'm doing well, thank you for asking. How are you doing today? Is there anything I can help you with?";
    assert_eq!(text_of(&events), text);
    assert_eq!(done.message.text(), text);
    assert_eq!(done.message.role, Role::Assistant);
    assert_eq!(done.stop, StopReason::EndTurn);
    assert_eq!(
        done.usage,
        Usage {
            input: 12,
            output: 30,
            ..Usage::default()
        }
    );

    let sent = &server.requests()[0];
    assert_eq!(sent.method, "POST");
    assert_eq!(sent.target, "/v1/messages");
    assert_eq!(sent.header("x-api-key"), Some(KEY));
    assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(sent.header("anthropic-beta"), Some("test-beta"));
    assert!(!sent.target.contains("key="));
    let body = sent.json();
    assert_eq!(body["model"], MODEL);
    assert_eq!(body["stream"], true);
    assert_eq!(body["max_tokens"], 16_384);
    assert_eq!(
        body["system"],
        json!([{"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}])
    );
    assert_eq!(body["temperature"], 0.5);
    assert_eq!(
        body["tools"][0],
        json!({"name": "read_file", "description": "Read a file.",
               "input_schema": request(vec![]).tools[0].parameters,
               "cache_control": {"type": "ephemeral"}})
    );
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": [{"type": "text", "text": "hi",
                                             "cache_control": {"type": "ephemeral"}}]}])
    );
}

#[tokio::test]
async fn raw_streams_with_pings_padding_and_no_space_after_colon() {
    let (_, events, done) =
        once(vec![raw("genai--anthropic--ping_stream--response_000.txt")]).await;
    assert_eq!(text_of(&events), "Hello!");
    assert_eq!(done.usage.output, 15);

    let (_, _, done) = once(vec![raw(
        "genai--anthropic--thinking_tool_stream--response_000.txt",
    )])
    .await;
    assert_eq!(done.stop, StopReason::ToolUse);
    assert!(
        matches!(&done.message.parts[0], Part::Thinking { text, .. } if text.starts_with("The user wants"))
    );
    assert_eq!(done.usage.cache_read, 227);

    let (_, _, done) = once(vec![raw(
        "genai--anthropic--thinking_tool_stream--response_001.txt",
    )])
    .await;
    assert!(done.message.text().contains("25"));
    assert_eq!(done.usage.reasoning, 18);

    // A gateway that sends a ping after message_stop.
    let (_, _, done) = once(vec![raw(
        "genai--opencode_go--minimax_stream--response_000.txt",
    )])
    .await;
    assert_eq!(done.message.text(), "\n\nHello!");
    assert_eq!(done.usage.input, 26);

    let (_, events, done) = once(vec![lines("vercel--duplicate-message-start.chunks.txt")]).await;
    assert_eq!(text_of(&events), "Hello, World!");
    assert_eq!(done.message.parts.len(), 1);
    assert_eq!(done.usage.input, 17);
}

#[tokio::test]
async fn thinking_with_signature_is_kept_for_replay() {
    let (_, events, done) =
        once(vec![lines("vercel--anthropic-clear-thinking.1.chunks.txt")]).await;
    assert!(
        events
            .iter()
            .any(|e| matches!(e, StreamEvent::ThinkingDelta { text } if text == "The previous"))
    );
    let Part::Thinking { text, replay } = &done.message.parts[0] else {
        panic!("first part is thinking: {:?}", done.message.parts);
    };
    assert!(text.starts_with("The previous result was 925."));
    let replay = replay.as_ref().unwrap();
    assert_eq!(replay.origin, format!("anthropic/{MODEL}"));
    assert!(
        replay.data["signature"]
            .as_str()
            .unwrap()
            .starts_with("EvQBCkYICxgCKkAxhD4N")
    );
    assert_eq!(done.message.text(), "925 ÷ 5 = 185");

    // Signature only, no readable thinking.
    let (_, _, done) = once(vec![lines(
        "vercel--anthropic-claude-sonnet-5-reasoning-generic.chunks.txt",
    )])
    .await;
    assert!(
        matches!(&done.message.parts[0], Part::Thinking { text, replay: Some(_) } if text.is_empty())
    );
    assert_eq!(done.usage.reasoning, 62);
}

#[tokio::test]
async fn tool_streams_concatenate_input_json_per_block() {
    let (_, events, done) =
        once(vec![raw("genai--anthropic--tool_stream--response_000.txt")]).await;
    assert_eq!(
        events[0],
        StreamEvent::ToolCallStart {
            index: 0,
            id: "toolu_01A2B3C4D5".into(),
            name: "get_weather".into()
        }
    );
    let calls: Vec<_> = done.message.tool_calls().collect();
    assert_eq!(calls.len(), 1);
    let args: Value = serde_json::from_str(calls[0].2).unwrap();
    assert_eq!(
        args,
        json!({"city": "Paris", "country": "France", "unit": "C"})
    );
    assert_eq!(done.stop, StopReason::ToolUse);

    // Escaped quotes split across fragments.
    let (_, _, done) = once(vec![lines(
        "vercel--anthropic-issue-11719-quoted-tool-input.chunks.txt",
    )])
    .await;
    let (_, name, arguments) = done.message.tool_calls().next().unwrap();
    assert_eq!(name, "website_update");
    let args: Value = serde_json::from_str(arguments).unwrap();
    assert!(
        args["tasks"][0]["description"]
            .as_str()
            .unwrap()
            .contains("\"What should I do next after this run?\"")
    );
    assert_eq!(args["tasks"][0]["passes"], false);

    // Three parallel calls, padded JSON.
    let (_, events, done) = once(vec![lines(
        "vercel--anthropic-issue-15652-false.chunks.txt",
    )])
    .await;
    let starts: Vec<usize> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ToolCallStart { index, .. } => Some(*index),
            _ => None,
        })
        .collect();
    assert_eq!(starts, vec![0, 1, 2]);
    let queries: Vec<Value> = done
        .message
        .tool_calls()
        .map(|(_, _, a)| serde_json::from_str::<Value>(a).unwrap()["query"].clone())
        .collect();
    assert_eq!(queries, vec![json!("alpha"), json!("beta"), json!("gamma")]);
}

#[tokio::test]
async fn calls_without_arguments_get_an_empty_object() {
    for name in [
        "vercel--anthropic-tool-no-args.chunks.txt",
        "vercel--anthropic-issue-11674-empty-schema-forced-tool-call.1.chunks.txt",
    ] {
        let (_, _, done) = once(vec![lines(name)]).await;
        let (_, _, arguments) = done.message.tool_calls().next().unwrap();
        assert_eq!(arguments, "{}", "{name}");
        assert_eq!(done.stop, StopReason::ToolUse);
    }
}

#[tokio::test]
async fn usage_with_cache_reads_writes_and_corrected_input() {
    let (_, _, done) = once(vec![raw(
        "genai--anthropic--usage_cache_stream--response_000.txt",
    )])
    .await;
    assert_eq!((done.usage.input, done.usage.cache_read), (9, 4202));
    let (_, _, done) = once(vec![raw(
        "genai--anthropic--usage_cache_creation_stream--response_000.txt",
    )])
    .await;
    assert_eq!((done.usage.input, done.usage.cache_write), (9, 4202));
    let (_, _, done) = once(vec![lines(
        "vercel--anthropic-issue-5942-cache-read.chunks.txt",
    )])
    .await;
    assert_eq!(done.usage.cache_read, 18_639);
    assert_eq!(done.stop, StopReason::MaxTokens);
    let (_, _, done) = once(vec![lines(
        "vercel--anthropic-issue-5942-cache-write.chunks.txt",
    )])
    .await;
    assert_eq!(done.usage.cache_write, 18_639);
    let (_, _, done) = once(vec![lines(
        "vercel--anthropic-message-delta-input-tokens.chunks.txt",
    )])
    .await;
    assert_eq!((done.usage.input, done.usage.output), (61, 2));
    let (_, _, done) = once(vec![raw(
        "genai--anthropic--thinking_adjudication_tool_stream--response_001.txt",
    )])
    .await;
    assert_eq!(done.usage.reasoning, 85);
    assert_eq!(done.message.tool_calls().count(), 3);
    let (_, _, done) = once(vec![lines("vercel--anthropic-refusal.chunks.txt")]).await;
    assert_eq!(done.stop, StopReason::Refusal);
    assert!(done.message.parts.is_empty());
}

#[tokio::test]
async fn hand_written_parallel_calls_after_thinking_and_text() {
    let body = sse(&[
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 50, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Two files."}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "c2ln"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Reading both."}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "toolu_a", "name": "read_file", "input": {}}}),
        json!({"type": "content_block_start", "index": 3, "content_block": {"type": "tool_use", "id": "toolu_b", "name": "read_file", "input": {}}}),
        json!({"type": "content_block_delta", "index": 3, "delta": {"type": "input_json_delta", "partial_json": "{\"path\": \"b.rs\"}"}}),
        json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "{\"path\": \"a.rs\"}"}}),
        json!({"type": "content_block_stop", "index": 2}),
        json!({"type": "content_block_stop", "index": 3}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 60}}),
        json!({"type": "message_stop"}),
    ]);
    let (_, events, done) = once(vec![Reply::sse(body)]).await;
    assert!(events.contains(&StreamEvent::ToolCallDelta {
        index: 1,
        delta: "{\"path\": \"b.rs\"}".into()
    }));
    assert_eq!(
        done.message.tool_calls().collect::<Vec<_>>(),
        vec![
            ("toolu_a", "read_file", "{\"path\": \"a.rs\"}"),
            ("toolu_b", "read_file", "{\"path\": \"b.rs\"}"),
        ]
    );
    assert_eq!(done.message.text(), "Reading both.");
    assert_eq!(done.stop, StopReason::ToolUse);
}

#[tokio::test]
async fn malformed_tool_arguments_are_kept_verbatim() {
    let broken = "{\"path\": \"a.rs\", \"limit\": 1O}";
    let body = sse(&[
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 5}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "toolu_x", "name": "read_file", "input": {}}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": &broken[..10]}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": &broken[10..]}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}}),
        json!({"type": "message_stop"}),
    ]);
    let (_, _, done) = once(vec![Reply::sse(body)]).await;
    assert_eq!(
        done.message.parts,
        vec![Part::ToolCall {
            id: "toolu_x".into(),
            name: "read_file".into(),
            arguments: broken.into(),
            replay: None
        }]
    );
}

#[tokio::test]
async fn overloaded_error_event_after_content_is_retried() {
    let failing = sse(&[
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 3}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "partial "}}),
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    ]);
    let server = MockServer::start(vec![Reply::sse(failing), ok_stream()]);
    let (events, done) = run(&server, 3, request(vec![Message::user("hi")])).await;
    let done = done.unwrap();
    assert_eq!(server.requests().len(), 2);
    assert_eq!(text_of(&events), "partial recovered");
    let retry = events
        .iter()
        .position(|e| matches!(e, StreamEvent::Retrying { .. }))
        .unwrap();
    assert_eq!(text_of(&events[retry..]), "recovered");
    assert!(
        matches!(&events[retry], StreamEvent::Retrying { attempt: 2, reason, .. } if reason.contains("overloaded_error"))
    );
    assert_eq!(done.message.text(), "recovered");
}

#[tokio::test]
async fn rate_limit_with_retry_after_then_success() {
    let server = MockServer::start(vec![
        Reply::json(
            429,
            r#"{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}"#,
        )
        .header("retry-after", "0.03"),
        ok_stream(),
    ]);
    let (events, done) = run(&server, 3, request(vec![Message::user("hi")])).await;
    assert_eq!(done.unwrap().message.text(), "recovered");
    assert_eq!(server.requests().len(), 2);
    assert_eq!(retries(&events), vec![(2, 30)]);
}

#[tokio::test]
async fn server_errors_529_and_500_are_retried() {
    let server = MockServer::start(vec![
        Reply::json(
            500,
            r#"{"type":"error","error":{"type":"api_error","message":"Internal server error"}}"#,
        ),
        Reply::json(
            529,
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        ),
        ok_stream(),
    ]);
    let (events, done) = run(&server, 3, request(vec![Message::user("hi")])).await;
    assert_eq!(done.unwrap().message.text(), "recovered");
    assert_eq!(server.requests().len(), 3);
    assert_eq!(retries(&events).len(), 2);

    let server = MockServer::start(vec![
        Reply::json(500, "upstream exploded"),
        Reply::json(500, "upstream exploded"),
    ]);
    let (_, done) = run(&server, 2, request(vec![Message::user("hi")])).await;
    let err = done.unwrap_err();
    assert!(matches!(err, ProviderError::Server { status: 500, .. }));
    assert!(err.to_string().contains("upstream exploded"));
}

#[tokio::test]
async fn connection_cut_mid_stream_is_retried_and_an_endless_cut_fails() {
    let body = payload_lines_to_sse(
        &fixture("anthropic/vercel--anthropic-text.chunks.txt"),
        Framing::EventFromType,
    );
    let server = MockServer::start(vec![Reply::sse(body.clone()).cut_after(900), ok_stream()]);
    let (events, done) = run(&server, 3, request(vec![Message::user("hi")])).await;
    assert_eq!(done.unwrap().message.text(), "recovered");
    assert_eq!(server.requests().len(), 2);
    assert_eq!(retries(&events).len(), 1);
    let retry = events
        .iter()
        .position(|e| matches!(e, StreamEvent::Retrying { .. }))
        .unwrap();
    assert_eq!(text_of(&events[..retry]), "Hello! I");

    // Complete events but no message_stop: incomplete every time.
    let truncated = sse(&[
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 3}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": "Hi"}}),
    ]);
    let server = MockServer::start(vec![Reply::sse(truncated.clone()), Reply::sse(truncated)]);
    let (_, done) = run(&server, 2, request(vec![Message::user("hi")])).await;
    assert!(matches!(done.unwrap_err(), ProviderError::Network { .. }));
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn unauthorized_names_the_variable_and_never_the_key() {
    let body = format!(
        r#"{{"type":"error","error":{{"type":"authentication_error","message":"invalid x-api-key {KEY}"}}}}"#
    );
    let server = MockServer::start(vec![Reply::json(401, body)]);
    let (events, done) = run(&server, 3, request(vec![Message::user("hi")])).await;
    let err = done.unwrap_err();
    assert!(matches!(err, ProviderError::Auth { status: 401, .. }));
    let text = err.to_string();
    assert!(text.contains("ANTHROPIC_API_KEY"), "{text}");
    assert!(!text.contains(KEY), "{text}");
    assert!(events.is_empty());
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn recorded_error_bodies_are_rejections_and_overflow_is_recognised() {
    for name in [
        "vercel--anthropic-issue-17366-error.json",
        "vercel--anthropic-parallel-provider-client-tools.error.json",
    ] {
        let server = MockServer::start(vec![Reply::json(
            400,
            fixture(&format!("anthropic/{name}")),
        )]);
        let (_, done) = run(&server, 3, request(vec![Message::user("hi")])).await;
        let err = done.unwrap_err();
        assert!(
            matches!(err, ProviderError::BadRequest { status: 400, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("invalid_request_error"));
        assert_eq!(server.requests().len(), 1);
    }
    let server = MockServer::start(vec![Reply::json(
        400,
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 215000 tokens > 200000 maximum"}}"#,
    )]);
    let (_, done) = run(&server, 3, request(vec![Message::user("hi")])).await;
    assert!(done.unwrap_err().is_context_overflow());
}

/// The conversation after `first`: its assistant message, then one result per call.
fn follow_up(first: &Completion) -> Vec<Message> {
    let mut history = vec![Message::user("read both"), first.message.clone()];
    for (id, name, _) in first.message.tool_calls() {
        history.push(Message {
            role: Role::User,
            parts: vec![Part::ToolResult {
                call_id: id.into(),
                name: name.into(),
                content: format!("contents for {id}"),
                is_error: id.ends_with('b'),
                images: Vec::new(),
            }],
        });
    }
    history
}

#[tokio::test]
async fn follow_up_request_replays_signature_and_groups_tool_results() {
    let first = sse(&[
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 5}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Need both."}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "U0lH"}}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_a", "name": "read_file", "input": {}}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"path\":\"a\"}"}}),
        json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "toolu_b", "name": "read_file", "input": {}}}),
        json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "{\"path\":\"b\"}"}}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}}),
        json!({"type": "message_stop"}),
    ]);
    let (_, _, first) = once(vec![Reply::sse(first)]).await;

    let server = MockServer::start(vec![ok_stream(), ok_stream()]);
    let mut same = request(follow_up(&first));
    same.reasoning = Reasoning::Medium;
    run(&server, 1, same).await.1.unwrap();
    let mut other = request(follow_up(&first));
    other.model = "claude-opus-4-1".into();
    run(&server, 1, other).await.1.unwrap();

    let sent = server.requests();
    let body = sent[0].json();
    assert_eq!(body["thinking"]["type"], "enabled");
    assert!(body.get("temperature").is_none());
    assert!(
        body["max_tokens"].as_u64().unwrap() > body["thinking"]["budget_tokens"].as_u64().unwrap()
    );
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3, "{messages:#?}");
    assert_eq!(
        messages[1]["content"],
        json!([
            {"type": "thinking", "thinking": "Need both.", "signature": "U0lH"},
            {"type": "tool_use", "id": "toolu_a", "name": "read_file", "input": {"path": "a"}},
            {"type": "tool_use", "id": "toolu_b", "name": "read_file", "input": {"path": "b"}}
        ])
    );
    assert_eq!(
        messages[2],
        json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_a", "content": "contents for toolu_a"},
            {"type": "tool_result", "tool_use_id": "toolu_b", "content": "contents for toolu_b", "is_error": true,
             "cache_control": {"type": "ephemeral"}}
        ]})
    );

    // Another model gets the calls but not the signed thinking.
    let body = sent[1].json();
    let content = body["messages"][1]["content"].as_array().unwrap();
    assert_eq!(content.len(), 2);
    assert!(content.iter().all(|b| b["type"] == "tool_use"));
    assert!(!body.to_string().contains("U0lH"));
}

#[tokio::test]
async fn history_from_another_provider_is_normalised() {
    let history = vec![
        Message::user("go"),
        Message {
            role: Role::Assistant,
            parts: vec![
                Part::Thinking {
                    text: "openai reasoning".into(),
                    replay: None,
                },
                Part::ToolCall {
                    id: "call_abc|fc_123.x".into(),
                    name: "read_file".into(),
                    arguments: "{\"path\": ".into(),
                    replay: None,
                },
            ],
        },
        Message {
            role: Role::User,
            parts: vec![Part::ToolResult {
                call_id: "call_abc|fc_123.x".into(),
                name: "read_file".into(),
                content: "error: invalid JSON".into(),
                is_error: true,
                images: Vec::new(),
            }],
        },
    ];
    let server = MockServer::start(vec![ok_stream()]);
    run(&server, 1, request(history)).await.1.unwrap();
    let body = server.requests()[0].json();
    let call = &body["messages"][1]["content"][0];
    let id = call["id"].as_str().unwrap();
    assert!(
        !id.is_empty()
            && id.len() <= 64
            && id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
        "{id}"
    );
    assert_eq!(call["input"], json!({}));
    assert_eq!(body["messages"][1]["content"].as_array().unwrap().len(), 1);
    assert_eq!(body["messages"][2]["content"][0]["tool_use_id"], id);
}

#[tokio::test]
async fn a_redirect_is_not_followed_and_the_key_does_not_leave_for_another_host() {
    // The server at the configured address answers 307 (method, body and headers kept) to
    // another host: following it would hand `x-api-key` (which reqwest only strips for
    // `Authorization`) to whoever that is.
    let elsewhere = MockServer::start(vec![lines("vercel--anthropic-text.chunks.txt")]);
    let target = format!("{}/v1/messages", elsewhere.url());
    let server = MockServer::start(vec![Reply::json(307, "").header("location", &target)]);
    let (_, done) = run(&server, 3, request(vec![Message::user("hi")])).await;
    let err = done.expect_err("a redirect must not be followed");
    assert!(
        elsewhere.requests().is_empty(),
        "the request went on to {target}"
    );
    assert_eq!(server.requests().len(), 1, "a redirect is not retried");
    let text = err.to_string();
    assert!(
        text.contains("307") && text.contains(&target) && text.contains("base_url"),
        "{text}"
    );
    assert!(!text.contains(KEY), "{text}");
}
