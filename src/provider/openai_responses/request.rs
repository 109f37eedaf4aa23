//! The Responses request body from the canonical [`ModelRequest`].
//!
//! Input items, in conversation order: user text as `message` items, tool results as
//! `function_call_output`, assistant text as `message`, calls as `function_call`, and this
//! model's reasoning items exactly as they were received. A reasoning item must be followed by
//! the item it led to, so one left dangling at the end of a turn is not sent.
//!
//! `reasoning: {effort}` is sent only when an effort was chosen; no `summary` is requested,
//! because OpenAI refuses reasoning summaries for organisations that are not verified, and a
//! refused request would end the run. `function_call_output` has no error flag: a failed
//! tool's text already says so.

use serde_json::{Map, Value, json};

use crate::model::{Image, Message, ModelRequest, Part, Reasoning, Role, ToolDef};
use crate::provider::openai_chat::history::{CallIds, is_ours, wire_arguments};
use crate::provider::vision::content_with_notes;

/// The JSON body for `request`; `tag` is this model's replay tag.
///
/// A tool result with pictures becomes an `output` list (`input_text` then one `input_image`
/// per picture, as a `data:` URL) when `vision` is on; otherwise the text with a note per
/// picture.
pub(crate) fn body(request: &ModelRequest, tag: &str, vision: bool) -> Value {
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::model::{Replay, replay_tag};

    const TAG: &str = "openai-responses/gpt-5";

    fn reasoning(origin: &str, id: &str) -> Part {
        Part::Thinking {
            text: "summary".into(),
            replay: Some(Replay {
                origin: origin.into(),
                data: json!({"type":"reasoning","id":id,"encrypted_content":"gAAA","summary":[{"type":"summary_text","text":"summary"}]}),
            }),
        }
    }

    fn call(id: &str, args: &str, origin: &str) -> Part {
        Part::ToolCall {
            id: id.into(),
            name: "read_file".into(),
            arguments: args.into(),
            replay: Some(Replay {
                origin: origin.into(),
                data: Value::Null,
            }),
        }
    }

    fn result(id: &str) -> Part {
        Part::ToolResult {
            call_id: id.into(),
            name: "read_file".into(),
            content: "contents".into(),
            is_error: false,
            images: Vec::new(),
        }
    }

    fn request(messages: Vec<Message>) -> ModelRequest {
        ModelRequest {
            model: "gpt-5".into(),
            system: "Be brief.".into(),
            messages: messages.into(),
            tools: vec![ToolDef {
                name: "read_file".into(),
                description: "Reads".into(),
                parameters: json!({"type":"object"}),
            }]
            .into(),
            max_output_tokens: Some(2000),
            temperature: None,
            reasoning: Reasoning::Low,
        }
    }

    #[test]
    fn items_tools_and_options() {
        let body = body(
            &request(vec![
                Message::user("Read a"),
                Message {
                    role: Role::Assistant,
                    parts: vec![
                        reasoning(TAG, "rs_1"),
                        Part::text("Reading."),
                        call("call_1", "", TAG),
                    ],
                },
                Message {
                    role: Role::User,
                    parts: vec![result("call_1")],
                },
            ]),
            TAG,
            true,
        );
        assert_eq!(body["instructions"], "Be brief.");
        assert_eq!(body["stream"], true);
        assert_eq!(body["store"], false);
        assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
        assert_eq!(body["max_output_tokens"], 2000);
        assert_eq!(body["reasoning"], json!({"effort":"low"}));
        assert!(body.get("temperature").is_none());
        assert_eq!(
            body["tools"][0],
            json!({"type":"function","name":"read_file","description":"Reads","parameters":{"type":"object"},"strict":false})
        );
        let input = body["input"].as_array().unwrap();
        assert_eq!(
            input[0],
            json!({"type":"message","role":"user","content":"Read a"})
        );
        assert_eq!(input[1]["type"], "reasoning");
        assert_eq!(input[1]["id"], "rs_1");
        assert_eq!(input[1]["encrypted_content"], "gAAA");
        assert_eq!(
            input[2],
            json!({"type":"message","role":"assistant","content":"Reading."})
        );
        assert_eq!(
            input[3],
            json!({"type":"function_call","call_id":"call_1","name":"read_file","arguments":"{}"})
        );
        assert_eq!(
            input[4],
            json!({"type":"function_call_output","call_id":"call_1","output":"contents"})
        );
        assert_eq!(input.len(), 5);
    }

    #[test]
    fn other_models_reasoning_is_dropped_and_ids_normalised() {
        let other = replay_tag("openai-responses", "gpt-4.1");
        let foreign = replay_tag("anthropic", "claude");
        let body = body(
            &request(vec![
                Message {
                    role: Role::Assistant,
                    parts: vec![
                        reasoning(&other, "rs_other"),
                        call("toolu:9", "{}", &foreign),
                    ],
                },
                Message {
                    role: Role::User,
                    parts: vec![result("toolu:9")],
                },
            ]),
            TAG,
            true,
        );
        let input = body["input"].as_array().unwrap();
        assert_eq!(input.len(), 2);
        assert!(!body.to_string().contains("rs_other"));
        let id = input[0]["call_id"].as_str().unwrap();
        assert_ne!(id, "toolu:9");
        assert_eq!(input[1]["call_id"], id);
    }

    #[test]
    fn dangling_reasoning_is_not_sent() {
        let body = body(
            &request(vec![
                Message::user("hi"),
                Message {
                    role: Role::Assistant,
                    parts: vec![reasoning(TAG, "rs_1")],
                },
                Message::user("again"),
            ]),
            TAG,
            true,
        );
        let input = body["input"].as_array().unwrap();
        assert_eq!(input.len(), 2);
        assert!(!body.to_string().contains("rs_1"));
    }

    use crate::provider::test_pictures::{NOTE, picture_turn};

    #[test]
    fn a_picture_goes_in_the_output_list_or_becomes_a_note() {
        let seen = body(&request(picture_turn("call_img")), TAG, true);
        let input = seen["input"].as_array().unwrap();
        assert_eq!(
            input.last().unwrap(),
            &json!({"type":"function_call_output","call_id":"call_img","output":[
                {"type":"input_text","text":"[binary file, 4 bytes]"},
                {"type":"input_image","image_url":"data:image/png;base64,iVBORw==","detail":"auto"}
            ]})
        );
        let blind = body(&request(picture_turn("call_img")), TAG, false);
        assert_eq!(
            blind["input"].as_array().unwrap().last().unwrap(),
            &json!({"type":"function_call_output","call_id":"call_img","output":NOTE})
        );
        assert!(!blind.to_string().contains("iVBORw"));
    }
}
