//! The body as the wire built it before it became typed structs: a `serde_json::Value` tree.
//! Kept for tests only, as the reference the typed body must equal on the whole corpus
//! (`crate::provider::test_corpus`).

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value, json};

use super::{FOREIGN_SIGNATURE, is_budget_model, signature};
use crate::model::{Image, Message, ModelRequest, Part, Reasoning, Role, ToolDef};
use crate::provider::gemini::schema;
use crate::provider::vision::content_with_notes;

/// The JSON body for `request`; `tag` is this model's replay tag.
pub(super) fn body(request: &ModelRequest, tag: &str, vision: bool) -> Value {
    let mut body = Map::new();
    body.insert(
        "contents".into(),
        Value::Array(contents(&request.messages, tag, &request.model, vision)),
    );
    if !request.system.trim().is_empty() {
        body.insert(
            "systemInstruction".into(),
            json!({"parts": [{"text": &*request.system}]}),
        );
    }
    if !request.tools.is_empty() {
        let declarations: Vec<Value> = request.tools.iter().map(declaration).collect();
        body.insert(
            "tools".into(),
            json!([{"functionDeclarations": declarations}]),
        );
    }
    let mut generation = Map::new();
    if let Some(max) = request.max_output_tokens {
        generation.insert("maxOutputTokens".into(), json!(max));
    }
    if let Some(temperature) = request.temperature {
        let rounded = (f64::from(temperature) * 1000.0).round() / 1000.0;
        generation.insert("temperature".into(), json!(rounded));
    }
    if let Some(thinking) = thinking_config(&request.model, request.reasoning) {
        generation.insert("thinkingConfig".into(), thinking);
    }
    if !generation.is_empty() {
        body.insert("generationConfig".into(), Value::Object(generation));
    }
    Value::Object(body)
}

fn thinking_config(model: &str, reasoning: Reasoning) -> Option<Value> {
    if reasoning == Reasoning::Default {
        return None;
    }
    if is_budget_model(model) {
        let budget = match reasoning {
            Reasoning::Low => 2_048,
            Reasoning::Medium => 8_192,
            _ => 24_576,
        };
        return Some(json!({"thinkingBudget": budget, "includeThoughts": true}));
    }
    // Gemini 3 Pro knows only low and high; Flash models also know medium.
    let level = match reasoning {
        Reasoning::Low => "low",
        Reasoning::Medium if model.contains("flash") => "medium",
        _ => "high",
    };
    Some(json!({"thinkingLevel": level, "includeThoughts": true}))
}

fn declaration(tool: &ToolDef) -> Value {
    let mut declaration = json!({"name": tool.name, "description": tool.description});
    let parameters = schema::convert(&tool.parameters);
    if !schema::is_empty_object(&parameters) {
        declaration["parameters"] = parameters;
    }
    declaration
}

/// What the history knows about calls: which ids Gemini issued, and each call's name.
struct Calls {
    gemini_ids: HashSet<String>,
    names: HashMap<String, String>,
}

impl Calls {
    fn scan<'a>(history: impl IntoIterator<Item = &'a Message>, tag: &str) -> Self {
        let mut gemini_ids = HashSet::new();
        let mut names = HashMap::new();
        for part in history.into_iter().flat_map(|m| &m.parts) {
            if let Part::ToolCall {
                id, name, replay, ..
            } = part
            {
                names.insert(id.clone(), name.clone());
                let issued = replay
                    .as_ref()
                    .filter(|r| r.origin == tag)
                    .and_then(|r| r.data.get("geminiId"))
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                if issued {
                    gemini_ids.insert(id.clone());
                }
            }
        }
        Self { gemini_ids, names }
    }
}

fn contents<'a>(
    history: impl IntoIterator<Item = &'a Message> + Copy,
    tag: &str,
    model: &str,
    vision: bool,
) -> Vec<Value> {
    let calls = Calls::scan(history, tag);
    let images = if !vision {
        Images::Notes
    } else if is_budget_model(model) {
        Images::AfterResponses
    } else {
        Images::InResponse
    };
    let mut merged: Vec<(Role, Vec<Value>)> = Vec::new();
    for message in history {
        let mut trailing = Vec::new();
        let mut parts: Vec<Value> = message
            .parts
            .iter()
            .filter_map(|part| wire_part(part, tag, &calls, images, &mut trailing))
            .collect();
        parts.extend(trailing);
        if parts.is_empty() {
            continue;
        }
        match merged.last_mut() {
            Some((role, existing)) if *role == message.role => existing.extend(parts),
            _ => merged.push((message.role, parts)),
        }
    }
    let placeholder = !is_budget_model(model);
    merged
        .into_iter()
        .map(|(role, mut parts)| {
            let role = match role {
                Role::User => "user",
                Role::Assistant => {
                    if placeholder {
                        sign_foreign_calls(&mut parts);
                    }
                    "model"
                }
            };
            json!({"role": role, "parts": parts})
        })
        .collect()
}

/// Gemini 3 validates the first function call of each model turn: when none of the turn's
/// calls carries a real signature, the first gets the documented placeholder.
fn sign_foreign_calls(parts: &mut [Value]) {
    let calls = || parts.iter().filter(|p| p.get("functionCall").is_some());
    if calls().count() == 0 || calls().any(|p| p.get("thoughtSignature").is_some()) {
        return;
    }
    if let Some(first) = parts.iter_mut().find(|p| p.get("functionCall").is_some()) {
        first["thoughtSignature"] = json!(FOREIGN_SIGNATURE);
    }
}

/// Where a tool's pictures go for this model (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Images {
    /// No vision: a note in the response text.
    Notes,
    /// Gemini 3+: `functionResponse.parts`.
    InResponse,
    /// Older models: `inlineData` parts after the turn's function responses.
    AfterResponses,
}

fn inline_data(image: &Image) -> Value {
    json!({"inlineData": {"mimeType": image.media_type, "data": image.base64()}})
}

/// One wire part for `part`; pictures that must follow the turn's responses go to `trailing`.
fn wire_part(
    part: &Part,
    tag: &str,
    calls: &Calls,
    images_to: Images,
    trailing: &mut Vec<Value>,
) -> Option<Value> {
    match part {
        Part::Text { text, replay } => {
            let signature = signature(replay.as_ref(), tag);
            if text.is_empty() && signature.is_none() {
                return None;
            }
            let mut out = json!({"text": text});
            if let Some(signature) = signature {
                out["thoughtSignature"] = json!(signature);
            }
            Some(out)
        }
        Part::Thinking { text, replay } => {
            // Thoughts matter to Gemini only through their signature, and only its own.
            let signature = signature(replay.as_ref(), tag)?;
            Some(json!({"text": text, "thought": true, "thoughtSignature": signature}))
        }
        Part::ToolCall {
            id,
            name,
            arguments,
            replay,
        } => {
            let args = match serde_json::from_str::<Value>(arguments) {
                Ok(value @ Value::Object(_)) => value,
                _ => json!({}),
            };
            let mut call = json!({"name": name, "args": args});
            if calls.gemini_ids.contains(id) {
                call["id"] = json!(id);
            }
            let mut out = json!({"functionCall": call});
            if let Some(signature) = signature(replay.as_ref(), tag) {
                out["thoughtSignature"] = json!(signature);
            }
            Some(out)
        }
        Part::ToolResult {
            call_id,
            name,
            content,
            is_error,
            images,
        } => {
            let name = if name.is_empty() {
                calls.names.get(call_id).cloned().unwrap_or_default()
            } else {
                name.clone()
            };
            let noted;
            let content = if images.is_empty() || images_to != Images::Notes {
                content.as_str()
            } else {
                noted = content_with_notes(content, &name, images);
                noted.as_str()
            };
            let response = if *is_error {
                json!({"error": content})
            } else {
                json!({"content": content})
            };
            let mut result = json!({"name": name, "response": response});
            if calls.gemini_ids.contains(call_id) {
                result["id"] = json!(call_id);
            }
            if !images.is_empty() {
                match images_to {
                    Images::Notes => {}
                    Images::InResponse => {
                        result["parts"] = images.iter().map(inline_data).collect();
                    }
                    Images::AfterResponses => trailing.extend(images.iter().map(inline_data)),
                }
            }
            Some(json!({"functionResponse": result}))
        }
    }
}
