//! The Chat Completions adapter end to end: `HttpModel` + `ChatWire` against a local server
//! replaying recorded provider streams and hand-written quirks, with assertions on what was
//! decoded and on the requests versus sent.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util::mock_server;

use std::sync::Arc;
use std::time::Duration;

use mock_server::*;
use serde_json::{Value, json};
use versus::model::{
    Completion, Message, ModelRequest, Part, Reasoning, Replay, Role, StopReason, StreamEvent,
    ToolDef, Usage, replay_tag,
};
use versus::provider::http::default_client;
use versus::provider::openai_chat::ChatWire;
use versus::provider::{HttpModel, ProviderError, RetryPolicy, WireConfig};

const KEY: &str = "sk-test-secret-0123456789";

fn config(server: &MockServer, provider: &str, key: Option<&str>) -> WireConfig {
    WireConfig {
        provider: provider.into(),
        base_url: format!("{}/v1/", server.url()),
        api_key: key.map(str::to_string),
        key_hint: "OPENAI_API_KEY".into(),
        base_hint: String::new(),
        headers: vec![("HTTP-Referer".into(), "https://example.test".into())],
        vision: true,
    }
}

fn model(config: WireConfig) -> HttpModel {
    let retry = RetryPolicy {
        max_tries: 3,
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(20),
        max_retry_after: Duration::from_millis(30),
    };
    HttpModel::new(
        default_client().unwrap(),
        Arc::new(ChatWire::new(config)),
        retry,
    )
}

fn request(messages: Vec<Message>) -> ModelRequest {
    ModelRequest {
        model: "gpt-test".into(),
        system: "You are terse.".into(),
        messages: messages.into(),
        tools: vec![ToolDef {
            name: "read_file".into(),
            description: "Read a file".into(),
            parameters: json!({"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}),
        }].into(),
        max_output_tokens: Some(512),
        temperature: None,
        reasoning: Reasoning::Default,
        seed: None,
    }
}

/// Serves `replies` and runs one request against them with the given provider name.
async fn run_with(
    provider: &str,
    key: Option<&str>,
    replies: Vec<Reply>,
    req: ModelRequest,
) -> (
    MockServer,
    Vec<StreamEvent>,
    Result<Completion, ProviderError>,
) {
    let server = MockServer::start(replies);
    let model = model(config(&server, provider, key));
    let (events, done) = collect(&model, req).await;
    (server, events, done)
}

async fn run(replies: Vec<Reply>) -> (MockServer, Vec<StreamEvent>, Completion) {
    let (server, events, done) = run_with(
        "openai",
        Some(KEY),
        replies,
        request(vec![Message::user("hi")]),
    )
    .await;
    (server, events, done.unwrap())
}

/// A vercel `*.chunks.txt` fixture framed as OpenAI Chat sends it.
fn chunks(name: &str) -> Reply {
    let bytes = fixture(&format!("openai-chat/{name}"));
    Reply::sse(payload_lines_to_sse(&bytes, Framing::DataThenDone))
}

/// A raw SSE fixture served byte for byte.
fn raw(name: &str) -> Reply {
    Reply::sse(fixture(&format!("openai-chat/{name}")))
}

fn sse(payloads: &[&str]) -> Reply {
    let mut body = String::new();
    for payload in payloads {
        body.push_str("data: ");
        body.push_str(payload);
        body.push_str("\n\n");
    }
    Reply::sse(body)
}

/// `(id, name, arguments)` of each call, in order.
type Calls = Vec<(String, String, String)>;

fn calls(done: &Completion) -> Calls {
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

#[tokio::test]
async fn recorded_tool_call_streams_give_the_right_calls() {
    let cases: Vec<(Reply, Calls, &str, Usage)> = vec![
        (
            chunks("vercel--issue-15789-step-1.chunks.txt"),
            vec![call("call_NZa7xqfefoaMI2YYHowVXVlU", "weather", "{}")],
            "PRE_TOOL",
            usage(58, 12, 0, 0),
        ),
        (
            raw("genai--github_copilot--tool_stream--response_000.txt"),
            vec![call(
                "call_YC2QMIr5bbEvqMl96iKr7oCN",
                "get_weather",
                r#"{"city":"Paris","country":"France","unit":"C"}"#,
            )],
            "",
            Usage::default(),
        ),
        (
            raw("genai--openai--stream_tool_call_with_finish_reason--response_000.txt"),
            vec![call(
                "call_yakbak_fixture_0",
                "get_weather",
                r#"{"city": "Paris", "country": "France", "unit": "C"}"#,
            )],
            "",
            usage(163, 11, 0, 0),
        ),
        (
            chunks("vercel--alibaba-tool-call.chunks.txt"),
            vec![call(
                "call_eee11723464a4b9eb8cee71d",
                "weather",
                r#"{"location": "San Francisco"}"#,
            )],
            "",
            usage(295, 22, 0, 0),
        ),
        (
            raw("vercel--anthropic-fallback-tool-call.sse"),
            vec![call("toolu_sanitized", "read_file", r#"{"path": "a.txt"}"#)],
            "Reading it.",
            Usage::default(),
        ),
        (
            chunks("vercel--xai-tool-call.chunks.txt"),
            vec![call(
                "call_55117580",
                "weather",
                r#"{"location":"San Francisco"}"#,
            )],
            "",
            // completion_tokens (26) leaves out the 196 reasoning tokens; total says so.
            usage(1, 222, 290, 196),
        ),
        (
            chunks("vercel--groq-tool-call.chunks.txt"),
            vec![call("tk85n1k4m", "weather", "{}")],
            "",
            usage(210, 15, 0, 0),
        ),
        (
            chunks("vercel--deepseek-tool-call.chunks.txt"),
            vec![call(
                "call_00_ioIn7yN9p1ZOMNpDLwd4MgAF",
                "weather",
                r#"{"location": "San Francisco"}"#,
            )],
            "",
            usage(19, 83, 320, 39),
        ),
        (
            chunks("vercel--mistral-tool-call.chunks.txt"),
            vec![call(
                "gSIMJiOkT",
                "weather",
                r#"{"location": "San Francisco"}"#,
            )],
            "",
            usage(124, 22, 0, 0),
        ),
        (
            chunks("vercel--mistral-incremental-tool-call.chunks.txt"),
            vec![call(
                "chatcmpl-tool-9f149c74c42f265b",
                "webSearchTool",
                r#"{"query": "current Berlin weather"}"#,
            )],
            "",
            usage(43, 14, 128, 0),
        ),
    ];
    for (reply, expected, text, expected_usage) in cases {
        let (_, events, done) = run(vec![reply]).await;
        assert_eq!(calls(&done), expected);
        assert_eq!(done.stop, StopReason::ToolUse);
        assert_eq!(done.message.text(), text);
        assert_eq!(text_of(&events), text);
        assert_eq!(done.usage, expected_usage, "usage for {expected:?}");
        let starts: Vec<_> = events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::ToolCallStart { index, id, name } => Some((*index, id, name)),
                _ => None,
            })
            .collect();
        assert_eq!(starts, vec![(0, &expected[0].0, &expected[0].1)]);
        let streamed: String = events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::ToolCallDelta { index: 0, delta } => Some(delta.as_str()),
                _ => None,
            })
            .collect();
        if expected[0].2 != "{}" {
            assert_eq!(streamed, expected[0].2);
        }
    }
}

#[tokio::test]
async fn recorded_text_streams_give_the_right_text_and_usage() {
    let (_, events, done) = run(vec![chunks("vercel--openai-text.chunks.txt")]).await;
    let text = done.message.text();
    assert!(text.starts_with("**Holiday Name:** Harmony Day"));
    assert_eq!(text.chars().count(), 1724);
    assert_eq!(text_of(&events), text);
    assert_eq!(done.usage, usage(16, 300, 0, 0));
    assert_eq!(done.stop, StopReason::EndTurn);

    let (_, _, done) = run(vec![raw("genai--aihubmix--chat_stream--response_000.txt")]).await;
    assert_eq!(done.message.text(), "Hello.");
    assert_eq!(done.usage, usage(15, 3, 0, 0));

    let (_, _, done) = run(vec![chunks("vercel--azure-model-router.1.chunks.txt")]).await;
    assert_eq!(done.message.text(), "Capital of Denmark.");
    assert_eq!(done.usage, usage(15, 78, 0, 64));

    let (_, _, done) = run(vec![chunks("vercel--issue-15789-step-2.chunks.txt")]).await;
    assert_eq!(done.message.text(), "POST_TOOL");
    assert_eq!(done.usage, usage(86, 2, 0, 0));
}

#[tokio::test]
async fn recorded_thinking_streams() {
    // GLM through a gateway: reasoning_content deltas, then the answer; a chunk after [DONE].
    let (_, events, done) = run(vec![raw(
        "genai--opencode_go--openai_stream--response_000.txt",
    )])
    .await;
    assert_eq!(done.message.text(), "Hello");
    let Part::Thinking { text, replay } = &done.message.parts[0] else {
        panic!("thinking comes first: {:?}", done.message.parts);
    };
    assert!(text.starts_with("1.  **Analyze the Request:**"));
    let replay = replay.as_ref().unwrap();
    assert_eq!(replay.origin, replay_tag("openai-chat", "gpt-test"));
    assert_eq!(replay.data["field"], "reasoning_content");
    assert!(
        events
            .iter()
            .any(|e| matches!(e, StreamEvent::ThinkingDelta { .. }))
    );
    assert_eq!(done.usage, usage(10, 123, 0, 0));

    // Mistral: content is an array of typed parts.
    let (_, _, done) = run(vec![chunks(
        "vercel--issue-13703-mistral-thinking.chunks.txt",
    )])
    .await;
    assert_eq!(done.message.text(), "391");
    let Part::Thinking { text, replay } = &done.message.parts[0] else {
        panic!("thinking comes first");
    };
    assert!(text.starts_with("Okay, the user is asking for the product"));
    assert!(replay.is_none());
}

#[tokio::test]
async fn parallel_calls_with_distinct_indices() {
    let (_, events, done) = run(vec![sse(&[
        r#"{"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"read_file","arguments":""}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"read_file","arguments":""}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":\"a\"}"}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\"path\":\"b\"}"}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
        "[DONE]",
    ])])
    .await;
    assert_eq!(
        calls(&done),
        vec![
            call("call_a", "read_file", r#"{"path":"a"}"#),
            call("call_b", "read_file", r#"{"path":"b"}"#),
        ]
    );
    assert!(events.contains(&StreamEvent::ToolCallDelta {
        index: 1,
        delta: r#"{"path":"b"}"#.into()
    }));
}

#[tokio::test]
async fn calls_without_index_and_all_at_index_zero() {
    // Missing `index`: each new id is a new call, fragments continue the latest one.
    let (_, _, done) = run(vec![sse(&[
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"c1","function":{"name":"read_file","arguments":"{\"path\":"}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":"\"x\"}"}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"c2","function":{"name":"read_file","arguments":"{\"path\":\"y\"}"}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
        "[DONE]",
    ])])
    .await;
    assert_eq!(
        calls(&done),
        vec![
            call("c1", "read_file", r#"{"path":"x"}"#),
            call("c2", "read_file", r#"{"path":"y"}"#),
        ]
    );

    // Every parallel call at index 0 (some vLLM/Ollama builds): a new id starts a new call.
    let (_, events, done) = run(vec![sse(&[
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"read_file","arguments":""}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":\"x\"}"}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c2","function":{"name":"list_directory","arguments":""}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":\".\"}"}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
        "[DONE]",
    ])])
    .await;
    assert_eq!(
        calls(&done),
        vec![
            call("c1", "read_file", r#"{"path":"x"}"#),
            call("c2", "list_directory", r#"{"path":"."}"#),
        ]
    );
    // Decided by content: `finish_reason: stop` with calls is still a tool turn.
    assert_eq!(done.stop, StopReason::ToolUse);
    assert!(events.contains(&StreamEvent::ToolCallStart {
        index: 1,
        id: "c2".into(),
        name: "list_directory".into()
    }));
}

#[tokio::test]
async fn empty_and_malformed_arguments() {
    let (_, _, done) = run(vec![sse(&[
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"now","arguments":""}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"c2","function":{"name":"read_file","arguments":"{\"path\": \"a.txt\""}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
        "[DONE]",
    ])])
    .await;
    assert_eq!(
        calls(&done),
        vec![
            call("c1", "now", "{}"),
            // Kept verbatim: the agent loop turns it into an error result the model can fix.
            call("c2", "read_file", r#"{"path": "a.txt""#),
        ]
    );
}

#[tokio::test]
async fn sse_comments_and_keep_alives_are_ignored() {
    let body = ": OPENROUTER PROCESSING\n\n: OPENROUTER PROCESSING\n\n\
        data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n\
        : keep-alive\n\n\
        data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" there\"},\"finish_reason\":\"stop\"}]}\n\n\
        data: [DONE]\n\n";
    let (_, events, done) = run(vec![Reply::sse(body)]).await;
    assert_eq!(done.message.text(), "Hi there");
    assert_eq!(events.len(), 2);
}

#[tokio::test]
async fn error_inside_the_stream_after_content() {
    // OpenRouter reports a provider failure inside the 200 stream; it is retried.
    let failing = sse(&[
        r#"{"choices":[{"index":0,"delta":{"content":"Part"}}]}"#,
        r#"{"error":{"code":502,"message":"Upstream provider overloaded"},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}"#,
    ]);
    let good = sse(&[
        r#"{"choices":[{"index":0,"delta":{"content":"Full answer"},"finish_reason":"stop"}]}"#,
        "[DONE]",
    ]);
    let (server, events, done) = run(vec![failing, good]).await;
    assert_eq!(done.message.text(), "Full answer");
    assert_eq!(server.requests().len(), 2);
    let retry = events
        .iter()
        .find_map(|e| match e {
            StreamEvent::Retrying { reason, .. } => Some(reason.clone()),
            _ => None,
        })
        .unwrap();
    assert!(retry.contains("Upstream provider overloaded"), "{retry}");

    // A non-retryable error object stops the run with the server's message.
    let (server, _, done) = run_with(
        "openrouter",
        Some(KEY),
        vec![sse(&[
            r#"{"choices":[{"index":0,"delta":{"content":"Par"}}]}"#,
            r#"{"error":{"code":400,"message":"tool schema rejected by provider"}}"#,
        ])],
        request(vec![Message::user("hi")]),
    )
    .await;
    let err = done.unwrap_err();
    assert!(matches!(err, ProviderError::BadRequest { status: 400, .. }));
    assert!(err.to_string().contains("tool schema rejected"));
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn rate_limit_with_retry_after_then_success() {
    let (server, events, done) = run(vec![
        Reply::json(
            429,
            r#"{"error":{"message":"Rate limit reached","type":"requests"}}"#,
        )
        .header("retry-after", "1"),
        raw("genai--aihubmix--chat_stream--response_000.txt"),
    ])
    .await;
    assert_eq!(done.message.text(), "Hello.");
    assert_eq!(server.requests().len(), 2);
    let retrying: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Retrying {
                attempt, delay_ms, ..
            } => Some((*attempt, *delay_ms)),
            _ => None,
        })
        .collect();
    // retry-after: 1 s, capped by the test policy's 30 ms ceiling.
    assert_eq!(retrying, vec![(2, 30)]);
}

#[tokio::test]
async fn server_error_then_success() {
    let (server, events, done) = run(vec![
        Reply::json(500, r#"{"error":{"message":"internal"}}"#),
        raw("genai--aihubmix--chat_stream--response_000.txt"),
    ])
    .await;
    assert_eq!(done.message.text(), "Hello.");
    assert_eq!(server.requests().len(), 2);
    assert!(
        events
            .iter()
            .any(|e| matches!(e, StreamEvent::Retrying { attempt: 2, .. }))
    );
}

#[tokio::test]
async fn connection_cut_mid_stream_is_retried() {
    let body = payload_lines_to_sse(
        &fixture("openai-chat/vercel--openai-text.chunks.txt"),
        Framing::DataThenDone,
    );
    let cut = Reply::sse(body.clone()).cut_after(body.len() / 2);
    let (server, events, done) = run(vec![cut, Reply::sse(body)]).await;
    assert_eq!(server.requests().len(), 2);
    let retry_at = events
        .iter()
        .position(|e| matches!(e, StreamEvent::Retrying { .. }))
        .unwrap();
    assert!(retry_at > 0, "content arrived before the cut");
    // The completion holds the full second answer, not a splice of both attempts.
    assert_eq!(done.message.text(), text_of(&events[retry_at..]));
    assert_eq!(done.message.text().chars().count(), 1724);
}

#[tokio::test]
async fn stream_ending_without_finish_or_done_is_retried() {
    let truncated = sse(&[r#"{"choices":[{"index":0,"delta":{"content":"half"}}]}"#]);
    let (server, events, done) = run(vec![
        truncated,
        raw("genai--aihubmix--chat_stream--response_000.txt"),
    ])
    .await;
    assert_eq!(server.requests().len(), 2);
    assert!(events.iter().any(|e| matches!(
        e,
        StreamEvent::Retrying { reason, .. } if reason.contains("before the response was complete")
    )));
    assert_eq!(done.message.text(), "Hello.");
}

#[tokio::test]
async fn unauthorized_names_the_variable_not_the_key() {
    let body = format!(
        r#"{{"error":{{"message":"Incorrect API key provided: {KEY}.","type":"invalid_request_error","code":"invalid_api_key"}}}}"#
    );
    let (server, _, done) = run_with(
        "openai",
        Some(KEY),
        vec![Reply::json(401, body)],
        request(vec![Message::user("hi")]),
    )
    .await;
    let err = done.unwrap_err();
    assert!(matches!(err, ProviderError::Auth { status: 401, .. }));
    let text = err.to_string();
    assert!(text.contains("OPENAI_API_KEY"), "{text}");
    assert!(!text.contains(KEY), "{text}");
    assert!(!format!("{err:?}").contains(KEY));
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn context_overflow_is_recognised() {
    let (server, _, done) = run_with(
        "openai",
        Some(KEY),
        vec![Reply::json(
            400,
            r#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
        )],
        request(vec![Message::user("hi")]),
    )
    .await;
    let err = done.unwrap_err();
    assert!(err.is_context_overflow(), "{err}");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn request_shape_url_headers_and_history() {
    let own = replay_tag("openai-chat", "gpt-test");
    let foreign = replay_tag("anthropic", "claude-sonnet-4-5");
    let history = vec![
        Message::user("Read both files"),
        Message {
            role: Role::Assistant,
            parts: vec![
                Part::Thinking {
                    text: "old plan from claude".into(),
                    replay: Some(Replay {
                        origin: foreign.clone(),
                        data: json!({"signature": "sig"}),
                    }),
                },
                Part::ToolCall {
                    id: "toolu:01/a".into(),
                    name: "read_file".into(),
                    arguments: r#"{"path":"a.txt"}"#.into(),
                    replay: Some(Replay {
                        origin: foreign,
                        data: Value::Null,
                    }),
                },
            ],
        },
        Message {
            role: Role::User,
            parts: vec![Part::ToolResult {
                call_id: "toolu:01/a".into(),
                name: "read_file".into(),
                content: "A".into(),
                is_error: false,
                images: Vec::new(),
            }],
        },
        Message {
            role: Role::Assistant,
            parts: vec![
                Part::Thinking {
                    text: "now b".into(),
                    replay: Some(Replay {
                        origin: own.clone(),
                        data: json!({"field": "reasoning_content"}),
                    }),
                },
                Part::text("Next."),
                Part::ToolCall {
                    id: "call_b".into(),
                    name: "read_file".into(),
                    arguments: r#"{"path":"b.txt"}"#.into(),
                    replay: Some(Replay {
                        origin: own,
                        data: Value::Null,
                    }),
                },
            ],
        },
        Message {
            role: Role::User,
            parts: vec![Part::ToolResult {
                call_id: "call_b".into(),
                name: "read_file".into(),
                content: "B".into(),
                is_error: true,
                images: Vec::new(),
            }],
        },
    ];
    let (server, _, done) = run_with(
        "openai",
        Some(KEY),
        vec![chunks("vercel--issue-15789-step-2.chunks.txt")],
        request(history),
    )
    .await;
    done.unwrap();
    let sent = &server.requests()[0];
    assert_eq!(sent.method, "POST");
    assert_eq!(sent.target, "/v1/chat/completions");
    assert_eq!(
        sent.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(sent.header("http-referer"), Some("https://example.test"));
    let body = sent.json();
    assert_eq!(body["model"], "gpt-test");
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    assert_eq!(body["max_completion_tokens"], 512);
    assert_eq!(body["tools"][0]["type"], "function");
    assert_eq!(body["tools"][0]["function"]["name"], "read_file");
    let messages = body["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "tool", "assistant", "tool"]
    );
    // Claude's call: id normalised identically on the call and its result; thinking dropped.
    let foreign_id = messages[2]["tool_calls"][0]["id"].as_str().unwrap();
    assert_ne!(foreign_id, "toolu:01/a");
    assert_eq!(messages[3]["tool_call_id"], foreign_id);
    assert_eq!(messages[3]["content"], "A");
    assert!(!body.to_string().contains("old plan from claude"));
    // Our own call: id kept, reasoning sent back in the field it came from.
    assert_eq!(messages[4]["tool_calls"][0]["id"], "call_b");
    assert_eq!(messages[4]["content"], "Next.");
    assert_eq!(messages[4]["reasoning_content"], "now b");
    assert_eq!(
        messages[4]["tool_calls"][0]["function"]["arguments"],
        r#"{"path":"b.txt"}"#
    );
    assert_eq!(messages[5]["tool_call_id"], "call_b");
}

#[tokio::test]
async fn local_servers_get_no_authorization_and_max_tokens() {
    let (server, _, done) = run_with(
        "ollama",
        None,
        vec![raw("genai--aihubmix--chat_stream--response_000.txt")],
        request(vec![Message::user("hi")]),
    )
    .await;
    done.unwrap();
    let sent = &server.requests()[0];
    assert_eq!(sent.target, "/v1/chat/completions");
    assert_eq!(sent.header("authorization"), None);
    let body = sent.json();
    assert_eq!(body["max_tokens"], 512);
    assert!(body.get("max_completion_tokens").is_none());
}
