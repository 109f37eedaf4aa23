//! The body as the wire built it before it became typed structs: a `serde_json::Value` tree.
//! Kept for tests only, as the reference the typed body must equal on the whole corpus
//! (`crate::provider::test_corpus`).

use serde_json::{Map, Value, json};

use super::{DEFAULT_MAX_TOKENS, MIN_ANSWER_TOKENS, round3, thinking_budget};
use crate::model::{Message, ModelRequest, Part, Replay, Role, ToolDef};
use crate::provider::ids::normalize_call_id;
use crate::provider::vision::content_with_notes;

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
