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

use serde_json::{Map, Value, json};

use crate::model::{Message, ModelRequest, Part, Reasoning, Replay, Role, ToolDef};
use crate::provider::ids::normalize_call_id;
use crate::provider::vision::content_with_notes;

/// `max_tokens` when the request sets none (the API requires one).
const DEFAULT_MAX_TOKENS: u32 = 16_384;

/// Room left for the visible answer above the thinking budget.
const MIN_ANSWER_TOKENS: u32 = 4_096;

/// The `budget_tokens` for an effort level (the API's minimum is 1024).
fn thinking_budget(reasoning: Reasoning) -> Option<u32> {
    match reasoning {
        Reasoning::Default => None,
        Reasoning::Low => Some(2_048),
        Reasoning::Medium => Some(8_192),
        Reasoning::High => Some(24_576),
    }
}

/// The JSON body for `request`; `tag` is this model's replay tag.
pub(super) fn body(request: &ModelRequest, tag: &str, vision: bool) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
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
    body.insert("max_tokens".into(), json!(max_tokens));
    body.insert("stream".into(), json!(true));
    if !request.system.trim().is_empty() {
        body.insert("system".into(), json!(&*request.system));
    }
    body.insert("messages".into(), Value::Array(messages));
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request.tools.iter().map(tool).collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    match (budget, request.temperature) {
        (Some(budget), _) => {
            // The API refuses a temperature together with thinking.
            body.insert(
                "thinking".into(),
                json!({"type": "enabled", "budget_tokens": budget}),
            );
        }
        (None, Some(temperature)) => {
            body.insert("temperature".into(), json!(round3(temperature)));
        }
        (None, None) => {}
    }
    Value::Object(body)
}

/// With thinking on, the API requires the last assistant turn of a tool loop to start with
/// its thinking block. A turn that came from another model has none (it was dropped), so this
/// request goes without thinking rather than being refused.
fn thinking_allowed(messages: &[Value]) -> bool {
    let Some(last) = messages.iter().rev().find(|m| m["role"] == "assistant") else {
        return true;
    };
    let content = last["content"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let calls_tools = content.iter().any(|b| b["type"] == "tool_use");
    let starts_with_thinking = content
        .first()
        .is_some_and(|b| b["type"] == "thinking" || b["type"] == "redacted_thinking");
    !calls_tools || starts_with_thinking
}

/// `0.2f32` as `0.2`, not `0.20000000298023224`.
fn round3(value: f32) -> f64 {
    (f64::from(value) * 1000.0).round() / 1000.0
}

fn tool(def: &ToolDef) -> Value {
    json!({
        "name": def.name,
        "description": def.description,
        "input_schema": def.parameters,
    })
}

/// Messages with same-role neighbours merged and tool results first in each user message.
fn messages<'a>(
    history: impl IntoIterator<Item = &'a Message>,
    tag: &str,
    vision: bool,
) -> Vec<Value> {
    let mut merged: Vec<(Role, Vec<Value>)> = Vec::new();
    for message in history {
        let blocks: Vec<Value> = message
            .parts
            .iter()
            .filter_map(|part| block(part, tag, vision))
            .collect();
        if blocks.is_empty() {
            continue;
        }
        match merged.last_mut() {
            Some((role, content)) if *role == message.role => content.extend(blocks),
            _ => merged.push((message.role, blocks)),
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
            content.sort_by_key(|block| block["type"] != "tool_result");
            json!({"role": role, "content": content})
        })
        .collect()
}

fn block(part: &Part, tag: &str, vision: bool) -> Option<Value> {
    match part {
        Part::Text { text, .. } => {
            // The API rejects empty and whitespace-only text blocks.
            (!text.trim().is_empty()).then(|| json!({"type": "text", "text": text}))
        }
        Part::Thinking { text, replay } => thinking(text, replay.as_ref()?, tag),
        Part::ToolCall {
            id,
            name,
            arguments,
            ..
        } => Some(json!({
            "type": "tool_use",
            "id": normalize_call_id(id),
            "name": normalize_call_id(name),
            "input": input_object(arguments),
        })),
        Part::ToolResult {
            call_id,
            name,
            content,
            is_error,
            images,
        } => {
            let noted;
            let content = if images.is_empty() || vision {
                content.as_str()
            } else {
                noted = content_with_notes(content, name, images);
                noted.as_str()
            };
            // Empty results are refused (at least with `is_error`); say so in words.
            let content = if content.trim().is_empty() {
                "(no output)"
            } else {
                content
            };
            let content = if vision && !images.is_empty() {
                let mut blocks = vec![json!({"type": "text", "text": content})];
                for image in images {
                    blocks.push(json!({
                        "type": "image",
                        "source": {
                            "type": "base64",
                            "media_type": image.media_type,
                            "data": image.base64(),
                        },
                    }));
                }
                Value::Array(blocks)
            } else {
                json!(content)
            };
            let mut result = json!({
                "type": "tool_result",
                "tool_use_id": normalize_call_id(call_id),
                "content": content,
            });
            if *is_error {
                result["is_error"] = json!(true);
            }
            Some(result)
        }
    }
}

/// A signed thinking or redacted-thinking block, only for the model that produced it.
fn thinking(text: &str, replay: &Replay, tag: &str) -> Option<Value> {
    if replay.origin != tag {
        return None;
    }
    if let Some(data) = replay.data.get("redacted_data").and_then(Value::as_str) {
        return Some(json!({"type": "redacted_thinking", "data": data}));
    }
    let signature = replay.data.get("signature").and_then(Value::as_str)?;
    (!signature.is_empty())
        .then(|| json!({"type": "thinking", "thinking": text, "signature": signature}))
}

/// Streamed argument text as the object `input` must be; anything else becomes `{}` (the
/// model already got an error result for invalid arguments).
fn input_object(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(value @ Value::Object(_)) => value,
        _ => json!({}),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

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
        assert_eq!(super::body(&req, TAG, true)["max_tokens"], 50_000);
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
}
