//! The canonical request as a `generateContent` body.
//!
//! Gemini matches function responses to calls by name (and by id when it issued one), so
//! results carry the tool name, and ids are sent only for calls Gemini itself numbered: a
//! call's [`Replay`] records that (`geminiId`) together with its `thoughtSignature`. Signatures
//! go back only to the model that produced them, on the very part they came with. Gemini 3
//! refuses function calls without a signature; calls that crossed from another model get the
//! placeholder Google documents for exactly that case.
//!
//! A tool's pictures, for a model that sees images (`WireConfig::vision`): Gemini 3 and later
//! take them inside the `functionResponse` (`parts: [{inlineData}]`, Google's "multimodal
//! function responses"); older models only as `inlineData` parts of the same user turn, placed
//! after all its function responses. A model without vision gets a note per picture in the
//! response text instead.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value, json};

use super::schema;
use crate::model::{Image, Message, ModelRequest, Part, Reasoning, Replay, Role, ToolDef};
use crate::provider::vision::content_with_notes;

/// Google's documented stand-in for a signature on calls that did not come from this model.
const FOREIGN_SIGNATURE: &str = "skip_thought_signature_validator";

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

/// Gemini 1.x/2.x and Gemma take a token budget; Gemini 3 and later take a level.
fn is_budget_model(model: &str) -> bool {
    let model = model.trim_start_matches("models/");
    ["gemini-1", "gemini-2", "gemma"]
        .iter()
        .any(|prefix| model.starts_with(prefix))
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

/// The signature in `replay` when it belongs to this model.
fn signature<'a>(replay: Option<&'a Replay>, tag: &str) -> Option<&'a str> {
    replay
        .filter(|r| r.origin == tag)
        .and_then(|r| r.data.get("thoughtSignature"))
        .and_then(Value::as_str)
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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    const TAG: &str = "gemini/gemini-3-pro-preview";

    fn request(model: &str, messages: Vec<Message>) -> ModelRequest {
        ModelRequest {
            model: model.into(),
            system: "sys".into(),
            messages: messages.into(),
            tools: vec![
                ToolDef {
                    name: "read_file".into(),
                    description: "Read".into(),
                    parameters: json!({"type": "object", "properties": {"path": {"type": "string"}},
                                       "required": ["path"], "additionalProperties": false}),
                },
                ToolDef {
                    name: "status".into(),
                    description: "No args".into(),
                    parameters: json!({"type": "object", "properties": {}}),
                },
            ]
            .into(),
            max_output_tokens: Some(1000),
            temperature: Some(0.7),
            reasoning: Reasoning::Default,
        }
    }

    fn replay(data: Value) -> Option<Replay> {
        Some(Replay {
            origin: TAG.into(),
            data,
        })
    }

    #[test]
    fn top_level_fields() {
        let body = body(
            &request("gemini-3-pro-preview", vec![Message::user("hi")]),
            TAG,
            true,
        );
        assert_eq!(
            body["systemInstruction"],
            json!({"parts": [{"text": "sys"}]})
        );
        assert_eq!(
            body["contents"],
            json!([{"role": "user", "parts": [{"text": "hi"}]}])
        );
        let declarations = &body["tools"][0]["functionDeclarations"];
        assert!(
            declarations[0]["parameters"]
                .get("additionalProperties")
                .is_none()
        );
        assert_eq!(declarations[0]["parameters"]["required"], json!(["path"]));
        assert!(declarations[1].get("parameters").is_none());
        assert_eq!(body["generationConfig"]["maxOutputTokens"], 1000);
        assert_eq!(body["generationConfig"]["temperature"], 0.7);
        assert!(body["generationConfig"].get("thinkingConfig").is_none());
    }

    #[test]
    fn thinking_config_by_model_family() {
        let mut req = request("gemini-2.5-flash", vec![Message::user("hi")]);
        req.reasoning = Reasoning::Medium;
        assert_eq!(
            body(&req, TAG, true)["generationConfig"]["thinkingConfig"],
            json!({"thinkingBudget": 8192, "includeThoughts": true})
        );
        req.model = "gemini-3-pro-preview".into();
        assert_eq!(
            body(&req, TAG, true)["generationConfig"]["thinkingConfig"],
            json!({"thinkingLevel": "high", "includeThoughts": true})
        );
        req.model = "gemini-3-flash-preview".into();
        assert_eq!(
            body(&req, TAG, true)["generationConfig"]["thinkingConfig"]["thinkingLevel"],
            "medium"
        );
    }

    #[test]
    fn calls_results_and_signatures_round_trip_for_the_same_model() {
        let history = vec![
            Message::user("go"),
            Message {
                role: Role::Assistant,
                parts: vec![
                    Part::Thinking {
                        text: "plan".into(),
                        replay: replay(json!({"thoughtSignature": "T"})),
                    },
                    Part::text("Let me look."),
                    Part::ToolCall {
                        id: "g1".into(),
                        name: "read_file".into(),
                        arguments: r#"{"path":"a"}"#.into(),
                        replay: replay(json!({"thoughtSignature": "S", "geminiId": true})),
                    },
                    Part::ToolCall {
                        id: "call_1_status".into(),
                        name: "status".into(),
                        arguments: "not json".into(),
                        replay: None,
                    },
                    Part::Text {
                        text: String::new(),
                        replay: replay(json!({"thoughtSignature": "E"})),
                    },
                ],
            },
            Message {
                role: Role::User,
                parts: vec![Part::ToolResult {
                    call_id: "g1".into(),
                    name: "read_file".into(),
                    content: "A".into(),
                    is_error: false,
                    images: Vec::new(),
                }],
            },
            Message {
                role: Role::User,
                parts: vec![Part::ToolResult {
                    call_id: "call_1_status".into(),
                    name: String::new(),
                    content: "boom".into(),
                    is_error: true,
                    images: Vec::new(),
                }],
            },
        ];
        let body = body(&request("gemini-3-pro-preview", history), TAG, true);
        let contents = body["contents"].as_array().unwrap();
        assert_eq!(contents.len(), 3);
        assert_eq!(
            contents[1],
            json!({"role": "model", "parts": [
                {"text": "plan", "thought": true, "thoughtSignature": "T"},
                {"text": "Let me look."},
                {"functionCall": {"name": "read_file", "args": {"path": "a"}, "id": "g1"},
                 "thoughtSignature": "S"},
                {"functionCall": {"name": "status", "args": {}}},
                {"text": "", "thoughtSignature": "E"}
            ]})
        );
        assert_eq!(
            contents[2],
            json!({"role": "user", "parts": [
                {"functionResponse": {"name": "read_file", "response": {"content": "A"}, "id": "g1"}},
                {"functionResponse": {"name": "status", "response": {"error": "boom"}}}
            ]})
        );
    }

    #[test]
    fn another_models_state_is_dropped_and_foreign_calls_get_the_placeholder() {
        let other = Some(Replay {
            origin: "gemini/gemini-2.5-pro".into(),
            data: json!({"thoughtSignature": "OTHER", "geminiId": true}),
        });
        let history = vec![
            Message::user("go"),
            Message {
                role: Role::Assistant,
                parts: vec![
                    Part::Thinking {
                        text: "plan".into(),
                        replay: other.clone(),
                    },
                    Part::ToolCall {
                        id: "g1".into(),
                        name: "read_file".into(),
                        arguments: "{}".into(),
                        replay: other.clone(),
                    },
                    Part::ToolCall {
                        id: "g2".into(),
                        name: "read_file".into(),
                        arguments: "{}".into(),
                        replay: other,
                    },
                ],
            },
        ];
        let body = body(&request("gemini-3-pro-preview", history.clone()), TAG, true);
        assert_eq!(
            body["contents"][1]["parts"],
            json!([
                {"functionCall": {"name": "read_file", "args": {}},
                 "thoughtSignature": FOREIGN_SIGNATURE},
                {"functionCall": {"name": "read_file", "args": {}}}
            ])
        );
        let older = super::body(&request("gemini-2.5-flash", history), TAG, true);
        assert!(!older.to_string().contains(FOREIGN_SIGNATURE));
    }

    use crate::provider::test_pictures::{NOTE, picture_turn};

    #[test]
    fn a_picture_goes_inside_the_response_for_gemini_3_after_it_before_or_becomes_a_note() {
        let inline = json!({"inlineData":{"mimeType":"image/png","data":"iVBORw=="}});
        let three = body(
            &request("gemini-3-pro-preview", picture_turn("g-img")),
            TAG,
            true,
        );
        assert_eq!(
            three["contents"][2],
            json!({"role":"user","parts":[{"functionResponse":{"name":"read_file",
                "response":{"content":"[binary file, 4 bytes]"},"parts":[inline]}}]})
        );
        let older = body(&request("gemini-2.5-pro", picture_turn("g-img")), TAG, true);
        assert_eq!(
            older["contents"][2],
            json!({"role":"user","parts":[
                {"functionResponse":{"name":"read_file","response":{"content":"[binary file, 4 bytes]"}}},
                inline
            ]})
        );
        let blind = body(
            &request("gemini-2.5-pro", picture_turn("g-img")),
            TAG,
            false,
        );
        assert_eq!(
            blind["contents"][2],
            json!({"role":"user","parts":[{"functionResponse":{"name":"read_file","response":{"content":NOTE}}}]})
        );
        assert!(!blind.to_string().contains("iVBORw"));
    }
}
