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
//!
//! The body is typed structs borrowing the request (texts, names, ids, signatures),
//! serialised straight to bytes by the transport once per attempt; only what has to be
//! computed is owned: call arguments parsed from the streamed text, notes, base64 image data,
//! and the tool schemas, which [`schema::convert`] rewrites into new values (once per body,
//! like everything else here).

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use serde::Serialize;
use serde_json::Value;

use super::schema;
use crate::model::{Image, Message, ModelRequest, Part, Reasoning, Replay, Role, ToolDef};
use crate::provider::vision::content_with_notes;

/// Google's documented stand-in for a signature on calls that did not come from this model.
const FOREIGN_SIGNATURE: &str = "skip_thought_signature_validator";

/// The body for `request`, as typed parts borrowing the request (texts, names, ids,
/// signatures); `tag` is this model's replay tag. Serialised straight to bytes by the
/// transport, once per attempt, instead of first copying the whole history into a
/// `serde_json::Value`.
pub(super) fn body<'a>(request: &'a ModelRequest, tag: &str, vision: bool) -> Body<'a> {
    let generation = GenerationConfig {
        max_output_tokens: request.max_output_tokens,
        // Rounded so 0.2f32 goes out as 0.2.
        temperature: request
            .temperature
            .map(|temperature| (f64::from(temperature) * 1000.0).round() / 1000.0),
        thinking_config: thinking_config(&request.model, request.reasoning),
        seed: request.seed,
    };
    let configured = generation.seed.is_some()
        || generation.max_output_tokens.is_some()
        || generation.temperature.is_some()
        || generation.thinking_config.is_some();
    Body {
        contents: contents(&request.messages, tag, &request.model, vision),
        system_instruction: (!request.system.trim().is_empty()).then(|| Instruction {
            parts: [TextPart {
                text: &request.system,
            }],
        }),
        tools: (!request.tools.is_empty()).then(|| {
            [Tools {
                function_declarations: request.tools.iter().map(declaration).collect(),
            }]
        }),
        generation_config: configured.then_some(generation),
    }
}

/// `POST …:streamGenerateContent` as sent.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Body<'a> {
    contents: Vec<Content<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    system_instruction: Option<Instruction<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<[Tools<'a>; 1]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    generation_config: Option<GenerationConfig>,
}

#[derive(Debug, Serialize)]
struct Instruction<'a> {
    parts: [TextPart<'a>; 1],
}

#[derive(Debug, Serialize)]
struct TextPart<'a> {
    text: &'a str,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Tools<'a> {
    function_declarations: Vec<Declaration<'a>>,
}

#[derive(Debug, Serialize)]
struct Declaration<'a> {
    name: &'a str,
    description: &'a str,
    /// The tool's schema cut down by [`schema::convert`]: a new value (keywords dropped or
    /// rewritten), so it cannot borrow the request's; computed once per body.
    #[serde(skip_serializing_if = "Option::is_none")]
    parameters: Option<Value>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct GenerationConfig {
    #[serde(skip_serializing_if = "Option::is_none")]
    max_output_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking_config: Option<ThinkingConfig>,
    /// The sampling seed.
    #[serde(skip_serializing_if = "Option::is_none")]
    seed: Option<u64>,
}

/// A budget (Gemini 1.x/2.x, Gemma) or a level (Gemini 3 and later), never both.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ThinkingConfig {
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking_budget: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking_level: Option<&'static str>,
    include_thoughts: bool,
}

#[derive(Debug, Serialize)]
struct Content<'a> {
    role: &'static str,
    parts: Vec<WirePart<'a>>,
}

/// One part: Gemini's parts are objects with one payload field (text, a call, a response,
/// inline data) plus the optional `thought` flag and `thoughtSignature`.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
struct WirePart<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<&'a str>,
    #[serde(skip_serializing_if = "is_false")]
    thought: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    function_call: Option<FunctionCall<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    function_response: Option<FunctionResponse<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    inline_data: Option<InlineData<'a>>,
    /// This model's signature from the replay, or [`FOREIGN_SIGNATURE`].
    #[serde(skip_serializing_if = "Option::is_none")]
    thought_signature: Option<&'a str>,
}

/// `thought` is sent only when true.
fn is_false(flag: &bool) -> bool {
    !*flag
}

#[derive(Debug, Serialize)]
struct FunctionCall<'a> {
    name: &'a str,
    /// Parsed from the streamed text, so owned: Gemini wants an object, not a string.
    args: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a str>,
}

#[derive(Debug, Serialize)]
struct FunctionResponse<'a> {
    name: &'a str,
    response: Response<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a str>,
    /// Pictures inside the response (Gemini 3 and later).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    parts: Vec<WirePart<'a>>,
}

/// `{"content": text}`, or `{"error": text}` for a failed tool.
#[derive(Debug, Serialize)]
#[serde(rename_all = "snake_case")]
enum Response<'a> {
    Content(Cow<'a, str>),
    Error(Cow<'a, str>),
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct InlineData<'a> {
    mime_type: &'a str,
    /// The bytes as base64 (computed).
    data: String,
}

/// Gemini 1.x/2.x and Gemma take a token budget; Gemini 3 and later take a level.
fn is_budget_model(model: &str) -> bool {
    let model = model.trim_start_matches("models/");
    ["gemini-1", "gemini-2", "gemma"]
        .iter()
        .any(|prefix| model.starts_with(prefix))
}

fn thinking_config(model: &str, reasoning: Reasoning) -> Option<ThinkingConfig> {
    if reasoning == Reasoning::Default {
        return None;
    }
    if is_budget_model(model) {
        let budget = match reasoning {
            Reasoning::Low => 2_048,
            Reasoning::Medium => 8_192,
            _ => 24_576,
        };
        return Some(ThinkingConfig {
            thinking_budget: Some(budget),
            thinking_level: None,
            include_thoughts: true,
        });
    }
    // Gemini 3 Pro knows only low and high; Flash models also know medium.
    let level = match reasoning {
        Reasoning::Low => "low",
        Reasoning::Medium if model.contains("flash") => "medium",
        _ => "high",
    };
    Some(ThinkingConfig {
        thinking_budget: None,
        thinking_level: Some(level),
        include_thoughts: true,
    })
}

fn declaration(tool: &ToolDef) -> Declaration<'_> {
    let parameters = schema::convert(&tool.parameters);
    Declaration {
        name: &tool.name,
        description: &tool.description,
        parameters: (!schema::is_empty_object(&parameters)).then_some(parameters),
    }
}

/// The signature in `replay` when it belongs to this model.
fn signature<'a>(replay: Option<&'a Replay>, tag: &str) -> Option<&'a str> {
    replay
        .filter(|r| r.origin == tag)
        .and_then(|r| r.data.get("thoughtSignature"))
        .and_then(Value::as_str)
}

/// What the history knows about calls: which ids Gemini issued, and each call's name.
struct Calls<'a> {
    gemini_ids: HashSet<&'a str>,
    names: HashMap<&'a str, &'a str>,
}

impl<'a> Calls<'a> {
    fn scan(history: impl IntoIterator<Item = &'a Message>, tag: &str) -> Self {
        let mut gemini_ids = HashSet::new();
        let mut names = HashMap::new();
        for part in history.into_iter().flat_map(|m| &m.parts) {
            if let Part::ToolCall {
                id, name, replay, ..
            } = part
            {
                names.insert(id.as_str(), name.as_str());
                let issued = replay
                    .as_ref()
                    .filter(|r| r.origin == tag)
                    .and_then(|r| r.data.get("geminiId"))
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                if issued {
                    gemini_ids.insert(id.as_str());
                }
            }
        }
        Self { gemini_ids, names }
    }

    /// `id` when Gemini issued it (only those ids go back).
    fn gemini_id<'b>(&self, id: &'b str) -> Option<&'b str> {
        self.gemini_ids.contains(id).then_some(id)
    }
}

fn contents<'a>(
    history: impl IntoIterator<Item = &'a Message> + Copy,
    tag: &str,
    model: &str,
    vision: bool,
) -> Vec<Content<'a>> {
    let calls = Calls::scan(history, tag);
    let images = if !vision {
        Images::Notes
    } else if is_budget_model(model) {
        Images::AfterResponses
    } else {
        Images::InResponse
    };
    let mut merged: Vec<(Role, Vec<WirePart<'a>>)> = Vec::new();
    for message in history {
        let mut trailing = Vec::new();
        let mut parts: Vec<WirePart<'a>> = message
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
            Content { role, parts }
        })
        .collect()
}

/// Gemini 3 validates the first function call of each model turn: when none of the turn's
/// calls carries a real signature, the first gets the documented placeholder.
fn sign_foreign_calls(parts: &mut [WirePart<'_>]) {
    let mut calls = parts.iter_mut().filter(|p| p.function_call.is_some());
    let Some(first) = calls.next() else {
        return;
    };
    if first.thought_signature.is_some() || calls.any(|p| p.thought_signature.is_some()) {
        return;
    }
    first.thought_signature = Some(FOREIGN_SIGNATURE);
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

fn inline_data(image: &Image) -> WirePart<'_> {
    WirePart {
        inline_data: Some(InlineData {
            mime_type: &image.media_type,
            data: image.base64(),
        }),
        ..WirePart::default()
    }
}

/// One wire part for `part`; pictures that must follow the turn's responses go to `trailing`.
fn wire_part<'a>(
    part: &'a Part,
    tag: &str,
    calls: &Calls<'a>,
    images_to: Images,
    trailing: &mut Vec<WirePart<'a>>,
) -> Option<WirePart<'a>> {
    match part {
        Part::Text { text, replay } => {
            let signature = signature(replay.as_ref(), tag);
            if text.is_empty() && signature.is_none() {
                return None;
            }
            Some(WirePart {
                text: Some(text),
                thought_signature: signature,
                ..WirePart::default()
            })
        }
        Part::Thinking { text, replay } => {
            // Thoughts matter to Gemini only through their signature, and only its own.
            let signature = signature(replay.as_ref(), tag)?;
            Some(WirePart {
                text: Some(text),
                thought: true,
                thought_signature: Some(signature),
                ..WirePart::default()
            })
        }
        Part::ToolCall {
            id,
            name,
            arguments,
            replay,
        } => {
            let args = crate::provider::calls::arguments_object(arguments);
            Some(WirePart {
                function_call: Some(FunctionCall {
                    name,
                    args,
                    id: calls.gemini_id(id),
                }),
                thought_signature: signature(replay.as_ref(), tag),
                ..WirePart::default()
            })
        }
        Part::ToolResult {
            call_id,
            name,
            content,
            is_error,
            images,
        } => {
            let name: &'a str = if name.is_empty() {
                calls
                    .names
                    .get(call_id.as_str())
                    .copied()
                    .unwrap_or_default()
            } else {
                name
            };
            let content: Cow<'a, str> = if images.is_empty() || images_to != Images::Notes {
                Cow::Borrowed(content)
            } else {
                Cow::Owned(content_with_notes(content, name, images))
            };
            let response = if *is_error {
                Response::Error(content)
            } else {
                Response::Content(content)
            };
            let mut parts = Vec::new();
            if !images.is_empty() {
                match images_to {
                    Images::Notes => {}
                    Images::InResponse => parts.extend(images.iter().map(inline_data)),
                    Images::AfterResponses => trailing.extend(images.iter().map(inline_data)),
                }
            }
            Some(WirePart {
                function_response: Some(FunctionResponse {
                    name,
                    response,
                    id: calls.gemini_id(call_id),
                    parts,
                }),
                ..WirePart::default()
            })
        }
    }
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
            seed: None,
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
        let older = self::body(&request("gemini-2.5-flash", history), TAG, true);
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

    use crate::model::replay_tag;
    use crate::provider::gemini::API_KIND;
    use crate::provider::test_corpus::{assert_exact_bodies, corpus};

    const MODEL: &str = "gemini-3-pro-preview";

    #[test]
    fn the_rich_and_the_plain_request_exactly_as_sent() {
        assert_exact_bodies(API_KIND, MODEL, body, RICH, PLAIN);
    }

    #[test]
    fn every_corpus_body_keeps_the_rules() {
        let models = [
            MODEL,
            "gemini-3-flash-preview",
            "gemini-2.5-flash",
            "models/gemma-3-27b-it",
        ];
        for case in corpus(API_KIND, &models) {
            let tag = replay_tag(API_KIND, &case.request.model);
            let body = body(&case.request, &tag, case.vision);
            let contents = body["contents"].as_array().unwrap();
            for pair in contents.windows(2) {
                assert_ne!(pair[0]["role"], pair[1]["role"], "{}", case.label);
            }
            for content in contents {
                let parts = content["parts"].as_array().unwrap();
                assert!(!parts.is_empty(), "{}", case.label);
                for part in parts {
                    let payloads = ["text", "functionCall", "functionResponse", "inlineData"]
                        .iter()
                        .filter(|key| part.get(**key).is_some())
                        .count();
                    assert_eq!(payloads, 1, "{}: {part}", case.label);
                }
                // Gemini 3 validates the first call of each model turn.
                let calls: Vec<&Value> = parts
                    .iter()
                    .filter(|p| p.get("functionCall").is_some())
                    .collect();
                if !is_budget_model(&case.request.model) && !calls.is_empty() {
                    assert!(
                        calls.iter().any(|c| c.get("thoughtSignature").is_some()),
                        "{}",
                        case.label
                    );
                }
            }
            if let Some(thinking) = body["generationConfig"].get("thinkingConfig") {
                let budget = thinking.get("thinkingBudget").is_some();
                assert_ne!(budget, thinking.get("thinkingLevel").is_some());
                assert_eq!(budget, is_budget_model(&case.request.model));
            }
            if !case.vision {
                assert!(!body.to_string().contains("inlineData"), "{}", case.label);
            }
        }
    }

    /// The body of [`rich_request`] for `gemini-3-pro-preview`, with vision.
    const RICH: &str = r##"
{
  "contents":[
    {"parts":[{"text":"Read a and b"}],"role":"user"},
    {
      "parts":[
        {"text":"let me see","thought":true,"thoughtSignature":"T-rs_1"},
        {"text":"Reading."},
        {
          "functionCall":{"args":{"path":"a.txt"},"id":"call_1","name":"read_file"},
          "thoughtSignature":"S1"
        },
        {"functionCall":{"args":{},"name":"read_file"}},
        {"functionCall":{"args":{},"name":"read_file"}},
        {"functionCall":{"args":{},"name":"edit"}},
        {"functionCall":{"args":{"a":1500.0,"b":[true,null],"c":0.1,"d":"é"},"name":"edit"}},
        {"functionCall":{"args":{},"name":"status"}}
      ],
      "role":"model"
    },
    {
      "parts":[
        {"functionResponse":{"id":"call_1","name":"read_file","response":{"content":"A"}}},
        {"functionResponse":{"name":"read_file","response":{"error":"missing"}}},
        {"functionResponse":{"name":"read_file","response":{"error":""}}},
        {"text":"in between"},
        {"functionResponse":{"name":"edit","response":{"content":"   "}}},
        {"functionResponse":{"name":"edit","response":{"content":"ok"}}},
        {"functionResponse":{"name":"status","response":{"content":""}}},
        {"text":"go on"}
      ],
      "role":"user"
    },
    {
      "parts":[
        {"text":"done"},
        {"text":"dangling","thought":true,"thoughtSignature":"T-rs_dangling"}
      ],
      "role":"model"
    },
    {"parts":[{"text":"go"}],"role":"user"},
    {
      "parts":[
        {"text":"foreign text"},
        {
          "functionCall":{"args":{"path":"a"},"name":"read_file"},
          "thoughtSignature":"skip_thought_signature_validator"
        },
        {"functionCall":{"args":{},"name":"read file!"}},
        {"functionCall":{"args":{},"name":"status"}}
      ],
      "role":"model"
    },
    {
      "parts":[
        {"functionResponse":{"name":"read_file","response":{"content":"A"}}},
        {"functionResponse":{"name":"read file!","response":{"error":"B"}}},
        {"functionResponse":{"name":"status","response":{"content":"C"}}},
        {"functionResponse":{"name":"","response":{"content":"D"}}},
        {"text":"Look"}
      ],
      "role":"user"
    },
    {
      "parts":[
        {
          "functionCall":{"args":{"path":"a.png"},"id":"call_p1","name":"read_file"},
          "thoughtSignature":"skip_thought_signature_validator"
        },
        {"functionCall":{"args":{"path":"b"},"name":"read_file"}},
        {"functionCall":{"args":{"path":"c"},"name":"read_file"}},
        {"functionCall":{"args":{},"name":""}}
      ],
      "role":"model"
    },
    {
      "parts":[
        {
          "functionResponse":{
            "id":"call_p1",
            "name":"read_file",
            "parts":[{"inlineData":{"data":"iVBORw==","mimeType":"image/png"}}],
            "response":{"content":"[png]"}
          }
        },
        {
          "functionResponse":{
            "name":"read_file",
            "parts":[
              {"inlineData":{"data":"iVBORw==","mimeType":"image/png"}},
              {"inlineData":{"data":"/9j/4AAB","mimeType":"image/jpeg"}}
            ],
            "response":{"content":"two"}
          }
        },
        {
          "functionResponse":{
            "name":"read_file",
            "parts":[{"inlineData":{"data":"/9j/4AAB","mimeType":"image/jpeg"}}],
            "response":{"error":""}
          }
        },
        {
          "functionResponse":{
            "name":"",
            "parts":[{"inlineData":{"data":"iVBORw==","mimeType":"image/png"}}],
            "response":{"content":""}
          }
        },
        {"text":"And fix it."}
      ],
      "role":"user"
    }
  ],
  "generationConfig":{
    "maxOutputTokens":1000,
    "temperature":0.2,
    "thinkingConfig":{"includeThoughts":true,"thinkingLevel":"high"}
  },
  "systemInstruction":{"parts":[{"text":"Be brief."}]},
  "tools":[
    {
      "functionDeclarations":[
        {
          "description":"Reads a file",
          "name":"read_file",
          "parameters":{
            "properties":{"path":{"type":"string"}},
            "required":["path"],
            "type":"object"
          }
        },
        {
          "description":"Edits — «quoted» \"text\"\n",
          "name":"edit",
          "parameters":{
            "properties":{
              "any":{},
              "choice":{"anyOf":[{"type":"string"},{}]},
              "edits":{
                "items":{
                  "properties":{"new":{"maxLength":10,"type":"string"},"old":{"type":"string"}},
                  "required":["old"],
                  "type":"object"
                },
                "minItems":1,
                "type":"array"
              },
              "either":{"anyOf":[{"type":"string"},{"type":"number"}]},
              "kind":{"enum":["a","b"],"type":"string"},
              "level":{},
              "mode":{"enum":["fast"],"type":"string"},
              "offset":{"default":0.5,"minimum":0,"nullable":true,"type":"integer"},
              "pair":{"items":{"type":"string"},"type":"array"},
              "path":{"description":"Where","type":"string"}
            },
            "required":["path","edits"],
            "type":"object"
          }
        },
        {"description":"No args","name":"status"},
        {"description":"","name":"anything"}
      ]
    }
  ]
}
"##;

    /// The body of [`plain_request`] for `gemini-3-pro-preview`, without vision.
    const PLAIN: &str = r##"
{
  "contents":[
    {
      "parts":[
        {"text":"  "},
        {"text":"a"},
        {"text":"b \"quoted\" \\ \n\t \u0001 é 😀"},
        {"text":"Look"}
      ],
      "role":"user"
    },
    {
      "parts":[
        {
          "functionCall":{"args":{"path":"a.png"},"id":"call_p1","name":"read_file"},
          "thoughtSignature":"skip_thought_signature_validator"
        },
        {"functionCall":{"args":{"path":"b"},"name":"read_file"}},
        {"functionCall":{"args":{"path":"c"},"name":"read_file"}},
        {"functionCall":{"args":{},"name":""}}
      ],
      "role":"model"
    },
    {
      "parts":[
        {
          "functionResponse":{
            "id":"call_p1",
            "name":"read_file",
            "response":{
              "content":"[png]\n[versus] the image from read_file (image/png, 4 bytes) was not sent: this model does not accept images"
            }
          }
        },
        {
          "functionResponse":{
            "name":"read_file",
            "response":{
              "content":"two\n[versus] the image from read_file (image/png, 4 bytes) was not sent: this model does not accept images\n[versus] the image from read_file (image/jpeg, 6 bytes) was not sent: this model does not accept images"
            }
          }
        },
        {
          "functionResponse":{
            "name":"read_file",
            "response":{
              "error":"[versus] the image from read_file (image/jpeg, 6 bytes) was not sent: this model does not accept images"
            }
          }
        },
        {
          "functionResponse":{
            "name":"",
            "response":{
              "content":"[versus] the image (image/png, 4 bytes) was not sent: this model does not accept images"
            }
          }
        },
        {"text":"And fix it."}
      ],
      "role":"user"
    }
  ]
}
"##;
}
