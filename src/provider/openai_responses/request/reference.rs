//! The body as the wire built it before it became typed structs: a `serde_json::Value` tree.
//! Kept for tests only, as the reference the typed body must equal on the whole corpus
//! (`crate::provider::test_corpus`).

use serde_json::{Map, Value, json};

use crate::model::{Image, Message, ModelRequest, Part, Reasoning, Role, ToolDef};
use crate::provider::openai_chat::history::{CallIds, is_ours, wire_arguments};
use crate::provider::vision::content_with_notes;

/// The JSON body for `request`; `tag` is this model's replay tag.
///
/// A tool result with pictures becomes an `output` list (`input_text` then one `input_image`
/// per picture, as a `data:` URL) when `vision` is on; otherwise the text with a note per
/// picture.
pub(super) fn body(request: &ModelRequest, tag: &str, vision: bool) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    if !request.system.trim().is_empty() {
        body.insert("instructions".into(), json!(&*request.system));
    }
    body.insert("input".into(), Value::Array(input(request, tag, vision)));
    if !request.tools.is_empty() {
        body.insert(
            "tools".into(),
            Value::Array(request.tools.iter().map(tool).collect()),
        );
    }
    body.insert("stream".into(), json!(true));
    body.insert("store".into(), json!(false));
    body.insert("include".into(), json!(["reasoning.encrypted_content"]));
    if let Some(cap) = request.max_output_tokens {
        body.insert("max_output_tokens".into(), json!(cap));
    }
    if let Some(temperature) = request.temperature {
        body.insert("temperature".into(), json!(temperature));
    }
    let effort = match request.reasoning {
        Reasoning::Default => None,
        Reasoning::Low => Some("low"),
        Reasoning::Medium => Some("medium"),
        Reasoning::High => Some("high"),
    };
    if let Some(effort) = effort {
        body.insert("reasoning".into(), json!({ "effort": effort }));
    }
    Value::Object(body)
}

fn tool(def: &ToolDef) -> Value {
    json!({
        "type": "function",
        "name": def.name,
        "description": def.description,
        "parameters": def.parameters,
        "strict": false,
    })
}

fn input(request: &ModelRequest, tag: &str, vision: bool) -> Vec<Value> {
    let ids = CallIds::from_history(&request.messages, tag);
    let mut items = Vec::new();
    for message in &request.messages {
        match message.role {
            Role::User => user(message, &ids, vision, &mut items),
            Role::Assistant => assistant(message, &ids, tag, &mut items),
        }
    }
    items
}

fn user(message: &Message, ids: &CallIds, vision: bool, items: &mut Vec<Value>) {
    let mut texts = Vec::new();
    for part in &message.parts {
        match part {
            Part::ToolResult {
                call_id,
                name,
                content,
                images,
                ..
            } => items.push(json!({
                "type": "function_call_output",
                "call_id": ids.wire_id(call_id),
                "output": output(name, content, images, vision),
            })),
            Part::Text { text, .. } if !text.is_empty() => texts.push(text.as_str()),
            _ => {}
        }
    }
    if !texts.is_empty() {
        items.push(json!({ "type": "message", "role": "user", "content": texts.join("\n\n") }));
    }
}

/// A result's `output`: the text alone (a string) unless it carries pictures.
fn output(tool: &str, content: &str, images: &[Image], vision: bool) -> Value {
    if images.is_empty() {
        return json!(content);
    }
    if !vision {
        return json!(content_with_notes(content, tool, images));
    }
    let mut parts = vec![json!({"type": "input_text", "text": content})];
    for image in images {
        parts.push(json!({
            "type": "input_image",
            "image_url": image.data_url(),
            "detail": "auto",
        }));
    }
    Value::Array(parts)
}

fn assistant(message: &Message, ids: &CallIds, tag: &str, items: &mut Vec<Value>) {
    let mut turn: Vec<Value> = Vec::new();
    let mut text = String::new();
    let flush = |text: &mut String, turn: &mut Vec<Value>| {
        if !text.is_empty() {
            turn.push(json!({
                "type": "message",
                "role": "assistant",
                "content": std::mem::take(text),
            }));
        }
    };
    for part in &message.parts {
        match part {
            Part::Text { text: piece, .. } => text.push_str(piece),
            Part::Thinking { replay, .. } if is_ours(replay.as_ref(), tag) => {
                let Some(replay) = replay else { continue };
                if replay.data.get("type").and_then(Value::as_str) == Some("reasoning") {
                    flush(&mut text, &mut turn);
                    turn.push(replay.data.clone());
                }
            }
            Part::ToolCall {
                id,
                name,
                arguments,
                ..
            } => {
                flush(&mut text, &mut turn);
                turn.push(json!({
                    "type": "function_call",
                    "call_id": ids.wire_id(id),
                    "name": name,
                    "arguments": wire_arguments(arguments),
                }));
            }
            _ => {}
        }
    }
    flush(&mut text, &mut turn);
    while turn
        .last()
        .is_some_and(|item| item.get("type").and_then(Value::as_str) == Some("reasoning"))
    {
        turn.pop();
    }
    items.extend(turn);
}
