//! The canonical request as a Messages API body.
//!
//! Anthropic is strict about shape, so the translation enforces it rather than trusting the
//! history: roles alternate (consecutive same-role messages are merged, which also puts every
//! tool result of a turn into one user message), `tool_result` blocks lead their message, empty
//! text blocks are left out, tool inputs are objects, and ids and names fit
//! `[a-zA-Z0-9_-]{1,64}`. Thinking is replayed with its signature only when it came from this
//! very model; anything else (other models, other providers, unsigned thinking) is dropped,
//! because Anthropic rejects thinking it cannot verify. A tool's pictures go inside its
//! `tool_result` as `image` blocks (base64 source) after the text when the model sees images
//! (`WireConfig::vision`); otherwise the text gets a note per picture.
//!
//! Prompt caching: every body carries three `cache_control` breakpoints (Anthropic allows
//! four), on the stable prefix and nowhere else: the last tool definition (the tools), the
//! system prompt (sent as one text block for that) and the last content block of the latest
//! message, so each step reads the whole conversation before it from the cache and writes
//! only what it added (the API finds the previous step's breakpoint by its lookback). The
//! same for every model of a run; see docs/config.md, "Prompt caching".
//!
//! The body is typed structs borrowing the request (texts, signatures, tool schemas, ids that
//! are already valid), serialised straight to bytes by the transport once per attempt; only
//! what has to be computed is owned: normalised ids and names, tool inputs parsed from the
//! streamed argument text, notes and base64 image data.

use std::borrow::Cow;

use serde::ser::{SerializeSeq, SerializeStruct};
use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::model::{Message, ModelRequest, Part, Reasoning, Replay, Role, ToolDef};
use crate::provider::ids::normalize_call_id;
use crate::provider::vision::content_with_notes;

/// `max_tokens` when the request sets none (the API requires one).
const DEFAULT_MAX_TOKENS: u32 = 16_384;

/// Room left for the visible answer above the thinking budget (Claude on Bedrock too).
pub(crate) const MIN_ANSWER_TOKENS: u32 = 4_096;

/// The `budget_tokens` for an effort level (the API's minimum is 1024); Claude on Bedrock
/// takes the same budgets.
pub(crate) fn thinking_budget(reasoning: Reasoning) -> Option<u32> {
    match reasoning {
        Reasoning::Default => None,
        Reasoning::Low => Some(2_048),
        Reasoning::Medium => Some(8_192),
        Reasoning::High => Some(24_576),
    }
}

/// The body for `request`, as typed parts borrowing the request (texts, signatures, tool
/// schemas); `tag` is this model's replay tag. Serialised straight to bytes by the transport,
/// once per attempt, instead of first copying the whole history into a `serde_json::Value`.
pub(super) fn body<'a>(request: &'a ModelRequest, tag: &str, vision: bool) -> Body<'a> {
    let messages = messages(&request.messages, tag, vision);
    let cap = request
        .max_output_tokens
        .unwrap_or(DEFAULT_MAX_TOKENS)
        .max(1);
    let budget = thinking_budget(request.reasoning).filter(|_| thinking_allowed(&messages));
    // Thinking counts against max_tokens, which must exceed the budget.
    let max_tokens = match budget {
        Some(budget) => cap.max(budget + MIN_ANSWER_TOKENS),
        None => cap,
    };
    Body {
        model: &request.model,
        max_tokens,
        stream: true,
        system: Some(&*request.system)
            .filter(|system| !system.trim().is_empty())
            .map(System::Text),
        messages,
        tools: request.tools.iter().map(tool).collect(),
        thinking: budget.map(|budget_tokens| Thinking {
            kind: "enabled",
            budget_tokens,
        }),
        // The API refuses a temperature together with thinking.
        temperature: request.temperature.filter(|_| budget.is_none()).map(round3),
    }
}

/// `POST /v1/messages` as sent.
#[derive(Debug, Serialize)]
pub(super) struct Body<'a> {
    model: &'a str,
    max_tokens: u32,
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<System<'a>>,
    messages: Vec<WireMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Tool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking: Option<Thinking>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
}

#[derive(Debug, Serialize)]
struct Thinking {
    #[serde(rename = "type")]
    kind: &'static str,
    budget_tokens: u32,
}

/// A prompt-cache breakpoint: the 5-minute ephemeral cache, the kind every model has.
#[derive(Debug, Clone, Copy, Serialize)]
struct CacheControl {
    #[serde(rename = "type")]
    kind: &'static str,
}

/// The one breakpoint kind versus sends.
const EPHEMERAL: CacheControl = CacheControl { kind: "ephemeral" };

/// `body` with the prompt cache's breakpoints (see the module's documentation): what the
/// wire sends. Kept apart from [`body`] so the shape of a body and where its breakpoints go
/// are each tested on their own.
pub(super) fn cached(mut body: Body<'_>) -> Body<'_> {
    if let Some(last) = body.tools.last_mut() {
        last.cache_control = Some(EPHEMERAL);
    }
    if let Some(System::Text(text)) = body.system {
        body.system = Some(System::Blocks([SystemBlock {
            kind: "text",
            text,
            cache_control: Some(EPHEMERAL),
        }]));
    }
    mark_latest_turn(&mut body.messages);
    body
}

/// The system prompt: plain text, or the one text block that carries its breakpoint.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum System<'a> {
    Text(&'a str),
    Blocks([SystemBlock<'a>; 1]),
}

/// The system prompt as a text block: the form that can carry a breakpoint.
#[derive(Debug, Serialize)]
struct SystemBlock<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_control: Option<CacheControl>,
}

#[derive(Debug, Serialize)]
struct Tool<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_control: Option<CacheControl>,
}

#[derive(Debug)]
struct WireMessage<'a> {
    role: &'static str,
    content: Vec<Block<'a>>,
    /// The block that carries the latest turn's breakpoint.
    cache_at: Option<usize>,
}

impl Serialize for WireMessage<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut message = serializer.serialize_struct("WireMessage", 2)?;
        message.serialize_field("role", self.role)?;
        message.serialize_field("content", &Content(self))?;
        message.end()
    }
}

/// A message's blocks, the marked one with its `cache_control`.
struct Content<'m, 'a>(&'m WireMessage<'a>);

impl Serialize for Content<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let blocks = &self.0.content;
        let mut seq = serializer.serialize_seq(Some(blocks.len()))?;
        for (index, block) in blocks.iter().enumerate() {
            if self.0.cache_at == Some(index) {
                seq.serialize_element(&Marked {
                    block,
                    cache_control: EPHEMERAL,
                })?;
            } else {
                seq.serialize_element(block)?;
            }
        }
        seq.end()
    }
}

/// A block with a breakpoint.
#[derive(Serialize)]
struct Marked<'b, 'a> {
    #[serde(flatten)]
    block: &'b Block<'a>,
    cache_control: CacheControl,
}

/// Puts the latest turn's breakpoint on the last block of the last message that can carry
/// one (thinking blocks cannot).
fn mark_latest_turn(messages: &mut [WireMessage<'_>]) {
    if let Some(last) = messages.last_mut() {
        last.cache_at = last
            .content
            .iter()
            .rposition(|b| !matches!(b, Block::Thinking { .. } | Block::RedactedThinking { .. }));
    }
}

/// One content block.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block<'a> {
    Text {
        text: &'a str,
    },
    Thinking {
        thinking: &'a str,
        signature: &'a str,
    },
    RedactedThinking {
        data: &'a str,
    },
    ToolUse {
        id: Cow<'a, str>,
        name: Cow<'a, str>,
        /// Parsed from the streamed text, so owned: the API wants an object, not a string.
        input: Value,
    },
    ToolResult {
        tool_use_id: Cow<'a, str>,
        content: ResultContent<'a>,
        #[serde(skip_serializing_if = "is_false")]
        is_error: bool,
    },
}

/// `is_error` is sent only when true.
fn is_false(flag: &bool) -> bool {
    !*flag
}

/// A `tool_result`'s content: the text alone unless pictures go with it.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum ResultContent<'a> {
    Text(Cow<'a, str>),
    Blocks(Vec<ResultBlock<'a>>),
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ResultBlock<'a> {
    Text { text: Cow<'a, str> },
    Image { source: ImageSource<'a> },
}

#[derive(Debug, Serialize)]
struct ImageSource<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    media_type: &'a str,
    data: String,
}

/// With thinking on, the API requires the last assistant turn of a tool loop to start with
/// its thinking block. A turn that came from another model has none (it was dropped), so this
/// request goes without thinking rather than being refused.
fn thinking_allowed(messages: &[WireMessage<'_>]) -> bool {
    let Some(last) = messages.iter().rev().find(|m| m.role == "assistant") else {
        return true;
    };
    let calls_tools = last
        .content
        .iter()
        .any(|b| matches!(b, Block::ToolUse { .. }));
    let starts_with_thinking = matches!(
        last.content.first(),
        Some(Block::Thinking { .. } | Block::RedactedThinking { .. })
    );
    !calls_tools || starts_with_thinking
}

/// `0.2f32` as `0.2`, not `0.20000000298023224` (Bedrock's temperature too).
pub(crate) fn round3(value: f32) -> f64 {
    (f64::from(value) * 1000.0).round() / 1000.0
}

fn tool(def: &ToolDef) -> Tool<'_> {
    Tool {
        name: &def.name,
        description: &def.description,
        input_schema: &def.parameters,
        cache_control: None,
    }
}

/// An id or name as the API accepts it ([`normalize_call_id`]), borrowed when it already is.
fn wire_id(id: &str) -> Cow<'_, str> {
    let valid = !id.is_empty()
        && id.len() <= 64
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if valid {
        Cow::Borrowed(id)
    } else {
        Cow::Owned(normalize_call_id(id))
    }
}

/// Messages with same-role neighbours merged and tool results first in each user message.
fn messages<'a>(
    history: impl IntoIterator<Item = &'a Message>,
    tag: &str,
    vision: bool,
) -> Vec<WireMessage<'a>> {
    let mut merged: Vec<(Role, Vec<Block<'a>>)> = Vec::new();
    for message in history {
        let blocks = message
            .parts
            .iter()
            .filter_map(|part| block(part, tag, vision));
        match merged.last_mut() {
            Some((role, content)) if *role == message.role => content.extend(blocks),
            _ => {
                let blocks: Vec<Block<'a>> = blocks.collect();
                if !blocks.is_empty() {
                    merged.push((message.role, blocks));
                }
            }
        }
    }
    merged
        .into_iter()
        .map(|(role, mut content)| {
            let role = match role {
                Role::User => "user",
                Role::Assistant => "assistant",
            };
            // Stable: results keep their order, text after them keeps its order.
            content.sort_by_key(|block| !matches!(block, Block::ToolResult { .. }));
            WireMessage {
                role,
                content,
                cache_at: None,
            }
        })
        .collect()
}

fn block<'a>(part: &'a Part, tag: &str, vision: bool) -> Option<Block<'a>> {
    match part {
        Part::Text { text, .. } => {
            // The API rejects empty and whitespace-only text blocks.
            (!text.trim().is_empty()).then_some(Block::Text { text })
        }
        Part::Thinking { text, replay } => thinking(text, replay.as_ref()?, tag),
        Part::ToolCall {
            id,
            name,
            arguments,
            ..
        } => Some(Block::ToolUse {
            id: wire_id(id),
            name: wire_id(name),
            input: crate::provider::calls::arguments_object(arguments),
        }),
        Part::ToolResult {
            call_id,
            name,
            content,
            is_error,
            images,
        } => {
            let content: Cow<'a, str> = if images.is_empty() || vision {
                Cow::Borrowed(content)
            } else {
                Cow::Owned(content_with_notes(content, name, images))
            };
            // Empty results are refused (at least with `is_error`); say so in words.
            let content = if content.trim().is_empty() {
                Cow::Borrowed("(no output)")
            } else {
                content
            };
            let content = if vision && !images.is_empty() {
                let mut blocks = Vec::with_capacity(images.len() + 1);
                blocks.push(ResultBlock::Text { text: content });
                for image in images {
                    blocks.push(ResultBlock::Image {
                        source: ImageSource {
                            kind: "base64",
                            media_type: &image.media_type,
                            data: image.base64(),
                        },
                    });
                }
                ResultContent::Blocks(blocks)
            } else {
                ResultContent::Text(content)
            };
            Some(Block::ToolResult {
                tool_use_id: wire_id(call_id),
                content,
                is_error: *is_error,
            })
        }
    }
}

/// A signed thinking or redacted-thinking block, only for the model that produced it.
fn thinking<'a>(text: &'a str, replay: &'a Replay, tag: &str) -> Option<Block<'a>> {
    if replay.origin != tag {
        return None;
    }
    if let Some(data) = replay.data.get("redacted_data").and_then(Value::as_str) {
        return Some(Block::RedactedThinking { data });
    }
    let signature = replay.data.get("signature").and_then(Value::as_str)?;
    (!signature.is_empty()).then_some(Block::Thinking {
        thinking: text,
        signature,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The body as the server reads it: the bytes the transport sends, parsed.
    fn body(request: &ModelRequest, tag: &str, vision: bool) -> Value {
        let bytes = serde_json::to_vec(&super::body(request, tag, vision)).unwrap();
        serde_json::from_slice(&bytes).unwrap()
    }

    const TAG: &str = "anthropic/claude-x";

    fn request(messages: Vec<Message>) -> ModelRequest {
        ModelRequest {
            model: "claude-x".into(),
            system: "be brief".into(),
            messages: messages.into(),
            tools: vec![ToolDef {
                name: "read_file".into(),
                description: "Read".into(),
                parameters: json!({"type": "object", "properties": {}}),
            }]
            .into(),
            max_output_tokens: None,
            temperature: Some(0.2),
            reasoning: Reasoning::Default,
            seed: None,
        }
    }

    fn assistant(parts: Vec<Part>) -> Message {
        Message {
            role: Role::Assistant,
            parts,
        }
    }

    fn result(id: &str, content: &str, is_error: bool) -> Message {
        Message {
            role: Role::User,
            parts: vec![Part::ToolResult {
                call_id: id.into(),
                name: "read_file".into(),
                content: content.into(),
                is_error,
                images: Vec::new(),
            }],
        }
    }

    fn call(id: &str, arguments: &str) -> Part {
        Part::ToolCall {
            id: id.into(),
            name: "read_file".into(),
            arguments: arguments.into(),
            replay: None,
        }
    }

    #[test]
    fn top_level_fields_defaults_and_temperature() {
        let body = body(&request(vec![Message::user("hi")]), TAG, true);
        assert_eq!(body["model"], "claude-x");
        assert_eq!(body["max_tokens"], 16_384);
        assert_eq!(body["stream"], true);
        assert_eq!(body["system"], "be brief");
        assert_eq!(body["temperature"], 0.2);
        assert!(body.get("thinking").is_none());
        assert_eq!(body["tools"][0]["name"], "read_file");
        assert_eq!(body["tools"][0]["input_schema"]["type"], "object");
        assert_eq!(
            body["messages"],
            json!([{"role": "user", "content": [{"type": "text", "text": "hi"}]}])
        );
    }

    /// Every `cache_control` in `value`, as JSON pointers.
    fn breakpoints(value: &Value, at: String, out: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                for (key, child) in map {
                    if key == "cache_control" {
                        assert_eq!(child, &json!({"type": "ephemeral"}));
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

    #[test]
    fn breakpoints_on_the_tools_the_system_and_the_latest_turn_only() {
        let history = vec![
            Message::user("go"),
            assistant(vec![
                Part::text("reading"),
                call("toolu_1", r#"{"path":"a"}"#),
            ]),
            result("toolu_1", "A", false),
        ];
        let mut req = request(history);
        req.tools = vec![
            ToolDef {
                name: "read_file".into(),
                description: "Read".into(),
                parameters: json!({"type": "object"}),
            },
            ToolDef {
                name: "bash".into(),
                description: "Run".into(),
                parameters: json!({"type": "object"}),
            },
        ]
        .into();
        let sent = serde_json::to_value(cached(super::body(&req, TAG, true))).unwrap();
        let mut found = Vec::new();
        breakpoints(&sent, String::new(), &mut found);
        assert_eq!(found, ["/messages/2/content/0", "/system/0", "/tools/1"]);
        assert_eq!(sent["system"][0]["text"], "be brief");
        assert_eq!(sent["messages"][2]["content"][0]["type"], "tool_result");
        // A last message ending in thinking: the breakpoint goes on its last other block.
        let mut req = request(vec![
            Message::user("go"),
            assistant(vec![
                Part::text("partial"),
                Part::Thinking {
                    text: "t".into(),
                    replay: Some(Replay {
                        origin: TAG.into(),
                        data: json!({"signature": "s"}),
                    }),
                },
            ]),
        ]);
        req.system = "".into();
        let sent = serde_json::to_value(cached(super::body(&req, TAG, true))).unwrap();
        let mut found = Vec::new();
        breakpoints(&sent, String::new(), &mut found);
        assert_eq!(found, ["/messages/1/content/0", "/tools/0"]);
        assert!(sent.get("system").is_none());
    }

    #[test]
    fn thinking_budget_drops_temperature_and_raises_max_tokens() {
        let mut req = request(vec![Message::user("hi")]);
        req.reasoning = Reasoning::High;
        req.max_output_tokens = Some(1_000);
        let body = body(&req, TAG, true);
        assert_eq!(body["thinking"]["type"], "enabled");
        let budget = body["thinking"]["budget_tokens"].as_u64().unwrap();
        assert_eq!(budget, 24_576);
        assert!(body["max_tokens"].as_u64().unwrap() > budget);
        assert!(body.get("temperature").is_none());
        req.reasoning = Reasoning::Low;
        req.max_output_tokens = Some(50_000);
        assert_eq!(self::body(&req, TAG, true)["max_tokens"], 50_000);
    }

    #[test]
    fn tool_results_of_a_turn_share_one_user_message_and_lead_it() {
        let history = vec![
            Message::user("go"),
            assistant(vec![
                Part::text("two calls"),
                call("call:1/a", r#"{"path":"a"}"#),
                call("toolu_2", ""),
            ]),
            result("call:1/a", "A", false),
            result("toolu_2", "missing", true),
            Message::user("and hurry"),
        ];
        let body = body(&request(history), TAG, true);
        let messages = body["messages"].as_array().unwrap();
        assert_eq!(messages.len(), 3);
        let uses = &messages[1]["content"];
        let first_id = uses[1]["id"].as_str().unwrap();
        assert!(
            first_id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        );
        assert_eq!(uses[1]["input"], json!({"path": "a"}));
        assert_eq!(uses[2]["input"], json!({}));
        let results = messages[2]["content"].as_array().unwrap();
        assert_eq!(messages[2]["role"], "user");
        assert_eq!(results.len(), 3);
        assert_eq!(results[0]["tool_use_id"], first_id);
        assert!(results[0].get("is_error").is_none());
        assert_eq!(results[1]["tool_use_id"], "toolu_2");
        assert_eq!(results[1]["is_error"], true);
        assert_eq!(results[2]["type"], "text");
    }

    #[test]
    fn thinking_replayed_only_to_the_same_model() {
        let signed = |origin: &str| Part::Thinking {
            text: "hmm".into(),
            replay: Some(Replay {
                origin: origin.into(),
                data: json!({"signature": "sig-1"}),
            }),
        };
        let redacted = Part::Thinking {
            text: String::new(),
            replay: Some(Replay {
                origin: TAG.into(),
                data: json!({"redacted_data": "opaque"}),
            }),
        };
        let unsigned = Part::Thinking {
            text: "plain".into(),
            replay: None,
        };
        let history = vec![
            Message::user("go"),
            assistant(vec![
                signed(TAG),
                redacted,
                signed("anthropic/other-model"),
                unsigned,
                Part::text("done"),
            ]),
        ];
        let body = body(&request(history), TAG, true);
        let content = body["messages"][1]["content"].as_array().unwrap();
        assert_eq!(
            content,
            &vec![
                json!({"type": "thinking", "thinking": "hmm", "signature": "sig-1"}),
                json!({"type": "redacted_thinking", "data": "opaque"}),
                json!({"type": "text", "text": "done"}),
            ]
        );
    }

    #[test]
    fn thinking_is_left_off_when_the_open_tool_turn_came_from_another_model() {
        let foreign = vec![
            Message::user("go"),
            assistant(vec![call("call_1", "{}")]),
            result("call_1", "", false),
        ];
        let mut req = request(foreign);
        req.reasoning = Reasoning::Medium;
        let sent = body(&req, TAG, true);
        assert!(sent.get("thinking").is_none());
        assert_eq!(sent["temperature"], 0.2);
        assert_eq!(sent["messages"][2]["content"][0]["content"], "(no output)");

        let mut messages = req.messages.clone().into_vec();
        messages[1].parts.insert(
            0,
            Part::Thinking {
                text: "mine".into(),
                replay: Some(Replay {
                    origin: TAG.into(),
                    data: json!({"signature": "s"}),
                }),
            },
        );
        req.messages = messages.into();
        assert_eq!(body(&req, TAG, true)["thinking"]["budget_tokens"], 8_192);
    }

    #[test]
    fn empty_messages_vanish_and_neighbours_merge() {
        let history = vec![
            Message::user("one"),
            assistant(vec![Part::text("  ")]),
            Message::user("two"),
        ];
        let body = body(&request(history), TAG, true);
        assert_eq!(
            body["messages"],
            json!([{"role": "user", "content": [
                {"type": "text", "text": "one"},
                {"type": "text", "text": "two"}
            ]}])
        );
    }

    use crate::provider::test_pictures::{NOTE, picture_turn};

    #[test]
    fn a_picture_is_an_image_block_in_the_tool_result_or_a_note() {
        let seen = body(&request(picture_turn("toolu_img")), TAG, true);
        assert_eq!(
            seen["messages"][2],
            json!({"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_img","content":[
                {"type":"text","text":"[binary file, 4 bytes]"},
                {"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw=="}}
            ]}]})
        );
        let blind = body(&request(picture_turn("toolu_img")), TAG, false);
        assert_eq!(
            blind["messages"][2],
            json!({"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_img","content":NOTE}]})
        );
        assert!(!blind.to_string().contains("iVBORw"));
    }

    use crate::model::replay_tag;
    use crate::provider::anthropic::API_KIND;
    use crate::provider::test_corpus::{assert_exact_bodies, corpus};

    const MODEL: &str = "claude-x";

    #[test]
    fn the_rich_and_the_plain_request_exactly_as_sent() {
        assert_exact_bodies(API_KIND, MODEL, body, RICH, PLAIN);
    }

    #[test]
    fn every_corpus_body_keeps_the_rules() {
        let valid = |id: &Value| {
            let id = id.as_str().unwrap();
            (1..=64).contains(&id.len())
                && id
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        };
        for case in corpus(API_KIND, &[MODEL, "claude-y"]) {
            let tag = replay_tag(API_KIND, &case.request.model);
            let body = body(&case.request, &tag, case.vision);
            let messages = body["messages"].as_array().unwrap();
            for pair in messages.windows(2) {
                assert_ne!(pair[0]["role"], pair[1]["role"], "{}", case.label);
            }
            for message in messages {
                let content = message["content"].as_array().unwrap();
                assert!(!content.is_empty(), "{}", case.label);
                let results = content
                    .iter()
                    .take_while(|b| b["type"] == "tool_result")
                    .count();
                for block in &content[results..] {
                    assert_ne!(block["type"], "tool_result", "{}", case.label);
                }
                for block in content {
                    if block["type"] == "text" {
                        assert!(!block["text"].as_str().unwrap().trim().is_empty());
                    }
                    for key in ["id", "name", "tool_use_id"] {
                        if let Some(id) = block.get(key) {
                            assert!(valid(id), "{}: {id}", case.label);
                        }
                    }
                }
            }
            if let Some(thinking) = body.get("thinking") {
                assert!(body.get("temperature").is_none(), "{}", case.label);
                let budget = thinking["budget_tokens"].as_u64().unwrap();
                assert!(body["max_tokens"].as_u64().unwrap() > budget);
            }
            if !case.vision {
                assert!(!body.to_string().contains(r#""type":"image""#));
            }
        }
    }

    /// The body of [`rich_request`] for `claude-x`, with vision.
    const RICH: &str = r##"
{
  "max_tokens":1000,
  "messages":[
    {"content":[{"text":"Read a and b","type":"text"}],"role":"user"},
    {
      "content":[
        {"signature":"sig-rs_1","thinking":"let me see","type":"thinking"},
        {"data":"opaque","type":"redacted_thinking"},
        {"text":"Reading.","type":"text"},
        {"id":"call_1","input":{"path":"a.txt"},"name":"read_file","type":"tool_use"},
        {"id":"call_2","input":{},"name":"read_file","type":"tool_use"},
        {"id":"call_3","input":{},"name":"read_file","type":"tool_use"},
        {"id":"call_4","input":{},"name":"edit","type":"tool_use"},
        {
          "id":"call_5",
          "input":{"a":1500.0,"b":[true,null],"c":0.1,"d":"é"},
          "name":"edit",
          "type":"tool_use"
        },
        {"id":"call_6","input":{},"name":"status","type":"tool_use"}
      ],
      "role":"assistant"
    },
    {
      "content":[
        {"content":"A","tool_use_id":"call_1","type":"tool_result"},
        {"content":"missing","is_error":true,"tool_use_id":"call_2","type":"tool_result"},
        {"content":"(no output)","is_error":true,"tool_use_id":"call_3","type":"tool_result"},
        {"content":"(no output)","tool_use_id":"call_4","type":"tool_result"},
        {"content":"ok","tool_use_id":"call_5","type":"tool_result"},
        {"content":"(no output)","tool_use_id":"call_6","type":"tool_result"},
        {"text":"in between","type":"text"},
        {"text":"go on","type":"text"}
      ],
      "role":"user"
    },
    {
      "content":[
        {"text":"done","type":"text"},
        {"signature":"sig-rs_dangling","thinking":"dangling","type":"thinking"}
      ],
      "role":"assistant"
    },
    {"content":[{"text":"go","type":"text"}],"role":"user"},
    {
      "content":[
        {"text":"foreign text","type":"text"},
        {"id":"toolu_1_x_acbf2e88","input":{"path":"a"},"name":"read_file","type":"tool_use"},
        {"id":"g_2_7f75d7a0","input":{},"name":"read_file__1dadf090","type":"tool_use"},
        {
          "id":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx_67b9d905",
          "input":{},
          "name":"status",
          "type":"tool_use"
        }
      ],
      "role":"assistant"
    },
    {
      "content":[
        {"content":"A","tool_use_id":"toolu_1_x_acbf2e88","type":"tool_result"},
        {"content":"B","is_error":true,"tool_use_id":"g_2_7f75d7a0","type":"tool_result"},
        {
          "content":"C",
          "tool_use_id":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx_67b9d905",
          "type":"tool_result"
        },
        {"content":"D","tool_use_id":"unknown","type":"tool_result"},
        {"text":"Look","type":"text"}
      ],
      "role":"user"
    },
    {
      "content":[
        {"id":"call_p1","input":{"path":"a.png"},"name":"read_file","type":"tool_use"},
        {"id":"call_p2","input":{"path":"b"},"name":"read_file","type":"tool_use"},
        {"id":"call_p3","input":{"path":"c"},"name":"read_file","type":"tool_use"},
        {"id":"call_p4","input":{},"name":"call","type":"tool_use"}
      ],
      "role":"assistant"
    },
    {
      "content":[
        {
          "content":[
            {"text":"[png]","type":"text"},
            {
              "source":{"data":"iVBORw==","media_type":"image/png","type":"base64"},
              "type":"image"
            }
          ],
          "tool_use_id":"call_p1",
          "type":"tool_result"
        },
        {
          "content":[
            {"text":"two","type":"text"},
            {
              "source":{"data":"iVBORw==","media_type":"image/png","type":"base64"},
              "type":"image"
            },
            {
              "source":{"data":"/9j/4AAB","media_type":"image/jpeg","type":"base64"},
              "type":"image"
            }
          ],
          "tool_use_id":"call_p2",
          "type":"tool_result"
        },
        {
          "content":[
            {"text":"(no output)","type":"text"},
            {
              "source":{"data":"/9j/4AAB","media_type":"image/jpeg","type":"base64"},
              "type":"image"
            }
          ],
          "is_error":true,
          "tool_use_id":"call_p3",
          "type":"tool_result"
        },
        {
          "content":[
            {"text":"(no output)","type":"text"},
            {
              "source":{"data":"iVBORw==","media_type":"image/png","type":"base64"},
              "type":"image"
            }
          ],
          "tool_use_id":"call_p4",
          "type":"tool_result"
        },
        {"text":"And fix it.","type":"text"}
      ],
      "role":"user"
    }
  ],
  "model":"claude-x",
  "stream":true,
  "system":"Be brief.",
  "temperature":0.2,
  "tools":[
    {
      "description":"Reads a file",
      "input_schema":{
        "additionalProperties":false,
        "properties":{"path":{"type":"string"}},
        "required":["path"],
        "type":"object"
      },
      "name":"read_file"
    },
    {
      "description":"Edits — «quoted» \"text\"\n",
      "input_schema":"$EDIT_PARAMETERS",
      "name":"edit"
    },
    {"description":"No args","input_schema":{"properties":{},"type":"object"},"name":"status"},
    {"description":"","input_schema":true,"name":"anything"}
  ]
}
"##;

    /// The body of [`plain_request`] for `claude-x`, without vision.
    const PLAIN: &str = r##"
{
  "max_tokens":16384,
  "messages":[
    {
      "content":[
        {"text":"a","type":"text"},
        {"text":"b \"quoted\" \\ \n\t \u0001 é 😀","type":"text"},
        {"text":"Look","type":"text"}
      ],
      "role":"user"
    },
    {
      "content":[
        {"id":"call_p1","input":{"path":"a.png"},"name":"read_file","type":"tool_use"},
        {"id":"call_p2","input":{"path":"b"},"name":"read_file","type":"tool_use"},
        {"id":"call_p3","input":{"path":"c"},"name":"read_file","type":"tool_use"},
        {"id":"call_p4","input":{},"name":"call","type":"tool_use"}
      ],
      "role":"assistant"
    },
    {
      "content":[
        {
          "content":"[png]\n[versus] the image from read_file (image/png, 4 bytes) was not sent: this model does not accept images",
          "tool_use_id":"call_p1",
          "type":"tool_result"
        },
        {
          "content":"two\n[versus] the image from read_file (image/png, 4 bytes) was not sent: this model does not accept images\n[versus] the image from read_file (image/jpeg, 6 bytes) was not sent: this model does not accept images",
          "tool_use_id":"call_p2",
          "type":"tool_result"
        },
        {
          "content":"[versus] the image from read_file (image/jpeg, 6 bytes) was not sent: this model does not accept images",
          "is_error":true,
          "tool_use_id":"call_p3",
          "type":"tool_result"
        },
        {
          "content":"[versus] the image (image/png, 4 bytes) was not sent: this model does not accept images",
          "tool_use_id":"call_p4",
          "type":"tool_result"
        },
        {"text":"And fix it.","type":"text"}
      ],
      "role":"user"
    }
  ],
  "model":"claude-x",
  "stream":true
}
"##;
}
