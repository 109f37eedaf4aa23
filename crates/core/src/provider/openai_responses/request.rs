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
//!
//! The body is typed structs borrowing the request (texts, tool schemas, the replayed
//! reasoning items themselves), serialised straight to bytes by the transport once per
//! attempt; only what has to be computed is owned: normalised call ids, wrapped invalid
//! arguments, joined texts, notes and `data:` URLs.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;

use crate::model::{Image, Message, ModelRequest, Part, Reasoning, Role, ToolDef};
use crate::provider::openai_chat::history::{CallIds, is_ours, wire_arguments};
use crate::provider::vision::content_with_notes;

/// The body for `request`, as typed parts borrowing the request (texts, tool schemas, replayed
/// reasoning items); `tag` is this model's replay tag. Serialised straight to bytes by the
/// transport, once per attempt, instead of first copying the whole history into a
/// `serde_json::Value`.
///
/// A tool result with pictures becomes an `output` list (`input_text` then one `input_image`
/// per picture, as a `data:` URL) when `vision` is on; otherwise the text with a note per
/// picture.
pub(crate) fn body<'a>(request: &'a ModelRequest, tag: &str, vision: bool) -> Body<'a> {
    let effort = match request.reasoning {
        Reasoning::Default => None,
        Reasoning::Low => Some("low"),
        Reasoning::Medium => Some("medium"),
        Reasoning::High => Some("high"),
    };
    Body {
        model: &request.model,
        instructions: Some(&*request.system).filter(|system| !system.trim().is_empty()),
        input: input(request, tag, vision),
        tools: request.tools.iter().map(tool).collect(),
        stream: true,
        store: false,
        include: ["reasoning.encrypted_content"],
        max_output_tokens: request.max_output_tokens,
        temperature: request.temperature,
        reasoning: effort.map(|effort| Effort { effort }),
        prompt_cache_key: None,
    }
}

/// `POST /responses` as sent.
#[derive(Debug, Serialize)]
pub(crate) struct Body<'a> {
    model: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    instructions: Option<&'a str>,
    input: Vec<Item<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Tool<'a>>,
    stream: bool,
    store: bool,
    include: [&'static str; 1],
    #[serde(skip_serializing_if = "Option::is_none")]
    max_output_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// As the `f32` it is, so 0.2 goes out as `0.2` (widened to `f64` it would print as
    /// 0.20000000298023224).
    temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning: Option<Effort>,
    /// Routes the steps of one model's session to the same prompt cache
    /// ([`crate::provider::cache`]); set by the wire, absent in [`body`]'s own tests.
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_cache_key: Option<String>,
}

impl Body<'_> {
    /// The body with its prompt-cache key.
    pub(crate) fn with_cache_key(mut self, key: String) -> Self {
        self.prompt_cache_key = Some(key);
        self
    }
}

#[derive(Debug, Serialize)]
struct Effort {
    effort: &'static str,
}

#[derive(Debug, Serialize)]
struct Tool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
    strict: bool,
}

/// One input item. Untagged: each variant carries its own `type` (a replayed reasoning item
/// already has one, so it cannot be added by serde).
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum Item<'a> {
    Message(MessageItem<'a>),
    Call(CallItem<'a>),
    Output(OutputItem<'a>),
    /// This model's reasoning item, exactly as it was received.
    Reasoning(&'a Value),
}

#[derive(Debug, Serialize)]
struct MessageItem<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    role: &'static str,
    content: Cow<'a, str>,
}

#[derive(Debug, Serialize)]
struct CallItem<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    call_id: String,
    name: &'a str,
    arguments: Cow<'a, str>,
}

#[derive(Debug, Serialize)]
struct OutputItem<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    call_id: String,
    output: Output<'a>,
}

/// A result's `output`: the text alone (a string) unless it carries pictures.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum Output<'a> {
    Text(Cow<'a, str>),
    Parts(Vec<OutputPart<'a>>),
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum OutputPart<'a> {
    InputText {
        text: &'a str,
    },
    InputImage {
        image_url: String,
        detail: &'static str,
    },
}

fn tool(def: &ToolDef) -> Tool<'_> {
    Tool {
        kind: "function",
        name: &def.name,
        description: &def.description,
        parameters: &def.parameters,
        strict: false,
    }
}

fn message_item<'a>(role: &'static str, content: Cow<'a, str>) -> Item<'a> {
    Item::Message(MessageItem {
        kind: "message",
        role,
        content,
    })
}

fn input<'a>(request: &'a ModelRequest, tag: &str, vision: bool) -> Vec<Item<'a>> {
    let ids = CallIds::from_history(&request.messages, tag);
    let mut items = Vec::with_capacity(request.messages.len());
    for message in &request.messages {
        match message.role {
            Role::User => user(message, &ids, vision, &mut items),
            Role::Assistant => assistant(message, &ids, tag, &mut items),
        }
    }
    items
}

fn user<'a>(message: &'a Message, ids: &CallIds, vision: bool, items: &mut Vec<Item<'a>>) {
    let mut texts: Vec<&str> = Vec::new();
    for part in &message.parts {
        match part {
            Part::ToolResult {
                call_id,
                name,
                content,
                images,
                ..
            } => items.push(Item::Output(OutputItem {
                kind: "function_call_output",
                call_id: ids.wire_id(call_id),
                output: output(name, content, images, vision),
            })),
            Part::Text { text, .. } if !text.is_empty() => texts.push(text),
            _ => {}
        }
    }
    match texts.as_slice() {
        [] => {}
        [text] => items.push(message_item("user", Cow::Borrowed(text))),
        _ => items.push(message_item("user", Cow::Owned(texts.join("\n\n")))),
    }
}

/// A result's `output`: the text alone (a string) unless it carries pictures.
fn output<'a>(tool: &str, content: &'a str, images: &[Image], vision: bool) -> Output<'a> {
    if images.is_empty() {
        return Output::Text(Cow::Borrowed(content));
    }
    if !vision {
        return Output::Text(Cow::Owned(content_with_notes(content, tool, images)));
    }
    let mut parts = Vec::with_capacity(images.len() + 1);
    parts.push(OutputPart::InputText { text: content });
    for image in images {
        parts.push(OutputPart::InputImage {
            image_url: image.data_url(),
            detail: "auto",
        });
    }
    Output::Parts(parts)
}

fn assistant<'a>(message: &'a Message, ids: &CallIds, tag: &str, items: &mut Vec<Item<'a>>) {
    let mut turn: Vec<Item<'a>> = Vec::new();
    // The text since the last call or reasoning item: borrowed while it is one piece.
    let mut text: Cow<'a, str> = Cow::Borrowed("");
    let flush = |text: &mut Cow<'a, str>, turn: &mut Vec<Item<'a>>| {
        if !text.is_empty() {
            turn.push(message_item(
                "assistant",
                std::mem::replace(text, Cow::Borrowed("")),
            ));
        }
    };
    for part in &message.parts {
        match part {
            Part::Text { text: piece, .. } => {
                if text.is_empty() {
                    text = Cow::Borrowed(piece);
                } else {
                    text.to_mut().push_str(piece);
                }
            }
            Part::Thinking { replay, .. } if is_ours(replay.as_ref(), tag) => {
                let Some(replay) = replay else { continue };
                if replay.data.get("type").and_then(Value::as_str) == Some("reasoning") {
                    flush(&mut text, &mut turn);
                    turn.push(Item::Reasoning(&replay.data));
                }
            }
            Part::ToolCall {
                id,
                name,
                arguments,
                ..
            } => {
                flush(&mut text, &mut turn);
                turn.push(Item::Call(CallItem {
                    kind: "function_call",
                    call_id: ids.wire_id(id),
                    name,
                    arguments: wire_arguments(arguments),
                }));
            }
            _ => {}
        }
    }
    flush(&mut text, &mut turn);
    // A reasoning item must be followed by the item it led to.
    while matches!(turn.last(), Some(Item::Reasoning(_))) {
        turn.pop();
    }
    items.extend(turn);
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::model::{Replay, replay_tag};
    use serde_json::json;

    /// The body as the server reads it: the bytes the transport sends, parsed.
    fn body(request: &ModelRequest, tag: &str, vision: bool) -> Value {
        let bytes = serde_json::to_vec(&super::body(request, tag, vision)).unwrap();
        serde_json::from_slice(&bytes).unwrap()
    }

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
            seed: None,
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

    use crate::provider::openai_responses::API_KIND;
    use crate::provider::test_corpus::{assert_exact_bodies, corpus};

    const MODEL: &str = "gpt-5";

    #[test]
    fn the_rich_and_the_plain_request_exactly_as_sent() {
        assert_exact_bodies(API_KIND, MODEL, body, RICH, PLAIN);
    }

    #[test]
    fn every_corpus_body_keeps_the_rules() {
        for case in corpus(API_KIND, &[MODEL, "gpt-4.1"]) {
            let tag = replay_tag(API_KIND, &case.request.model);
            let body = body(&case.request, &tag, case.vision);
            let input = body["input"].as_array().unwrap();
            for (i, item) in input.iter().enumerate() {
                // A reasoning item is followed by what it led to (more reasoning, a call or
                // the assistant's text), never by the user's turn or nothing.
                if item["type"] == "reasoning" {
                    let next = input.get(i + 1).unwrap_or(&Value::Null);
                    assert!(
                        next["type"] == "reasoning"
                            || next["type"] == "function_call"
                            || next["role"] == "assistant",
                        "{}",
                        case.label
                    );
                }
                if item["type"] == "message" {
                    assert_ne!(item["content"], "", "{}", case.label);
                }
            }
            if let Some(instructions) = body.get("instructions") {
                assert!(!instructions.as_str().unwrap().trim().is_empty());
            }
            assert_eq!(
                body.to_string().contains("input_image"),
                case.vision && body.to_string().contains("data:image"),
                "{}",
                case.label
            );
        }
    }

    /// The body of [`rich_request`] for `gpt-5`, with vision.
    const RICH: &str = r##"
{
  "include":["reasoning.encrypted_content"],
  "input":[
    {"content":"Read a and b","role":"user","type":"message"},
    {
      "big":12345678901234567890,
      "encrypted_content":"gAAA",
      "field":"reasoning_content",
      "id":"rs_1",
      "n":0.1,
      "neg":-1,
      "signature":"sig-rs_1",
      "summary":[{"text":"summary","type":"summary_text"}],
      "thoughtSignature":"T-rs_1",
      "type":"reasoning"
    },
    {"content":"Reading.","role":"assistant","type":"message"},
    {
      "arguments":"{\"path\":\"a.txt\"}",
      "call_id":"call_1",
      "name":"read_file",
      "type":"function_call"
    },
    {"arguments":"{}","call_id":"call_2","name":"read_file","type":"function_call"},
    {
      "arguments":"{\"raw_arguments\":\"{\\\"path\\\": \"}",
      "call_id":"call_3",
      "name":"read_file",
      "type":"function_call"
    },
    {
      "arguments":"{\"raw_arguments\":\"[1,2]\"}",
      "call_id":"call_4",
      "name":"edit",
      "type":"function_call"
    },
    {
      "arguments":"  {\"a\": 1.5e3, \"b\": [true, null], \"c\": 0.1, \"d\": \"é\"}  ",
      "call_id":"call_5",
      "name":"edit",
      "type":"function_call"
    },
    {"arguments":"{}","call_id":"call_6","name":"status","type":"function_call"},
    {"call_id":"call_1","output":"A","type":"function_call_output"},
    {"call_id":"call_2","output":"missing","type":"function_call_output"},
    {"call_id":"call_3","output":"","type":"function_call_output"},
    {"call_id":"call_4","output":"   ","type":"function_call_output"},
    {"call_id":"call_5","output":"ok","type":"function_call_output"},
    {"call_id":"call_6","output":"","type":"function_call_output"},
    {"content":"in between\n\ngo on","role":"user","type":"message"},
    {"content":"done","role":"assistant","type":"message"},
    {"content":"go","role":"user","type":"message"},
    {"content":"foreign text","role":"assistant","type":"message"},
    {
      "arguments":"{\"path\":\"a\"}",
      "call_id":"toolu_1_x_acbf2e88",
      "name":"read_file",
      "type":"function_call"
    },
    {"arguments":"{}","call_id":"g_2_7f75d7a0","name":"read file!","type":"function_call"},
    {
      "arguments":"{\"raw_arguments\":\"not json\"}",
      "call_id":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx_67b9d905",
      "name":"status",
      "type":"function_call"
    },
    {"call_id":"toolu_1_x_acbf2e88","output":"A","type":"function_call_output"},
    {"call_id":"g_2_7f75d7a0","output":"B","type":"function_call_output"},
    {
      "call_id":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx_67b9d905",
      "output":"C",
      "type":"function_call_output"
    },
    {"call_id":"unknown","output":"D","type":"function_call_output"},
    {"content":"Look","role":"user","type":"message"},
    {
      "arguments":"{\"path\":\"a.png\"}",
      "call_id":"call_p1",
      "name":"read_file",
      "type":"function_call"
    },
    {
      "arguments":"{\"path\":\"b\"}",
      "call_id":"call_p2",
      "name":"read_file",
      "type":"function_call"
    },
    {
      "arguments":"{\"path\":\"c\"}",
      "call_id":"call_p3",
      "name":"read_file",
      "type":"function_call"
    },
    {"arguments":"{}","call_id":"call_p4","name":"","type":"function_call"},
    {
      "call_id":"call_p1",
      "output":[
        {"text":"[png]","type":"input_text"},
        {"detail":"auto","image_url":"data:image/png;base64,iVBORw==","type":"input_image"}
      ],
      "type":"function_call_output"
    },
    {
      "call_id":"call_p2",
      "output":[
        {"text":"two","type":"input_text"},
        {"detail":"auto","image_url":"data:image/png;base64,iVBORw==","type":"input_image"},
        {"detail":"auto","image_url":"data:image/jpeg;base64,/9j/4AAB","type":"input_image"}
      ],
      "type":"function_call_output"
    },
    {
      "call_id":"call_p3",
      "output":[
        {"text":"","type":"input_text"},
        {"detail":"auto","image_url":"data:image/jpeg;base64,/9j/4AAB","type":"input_image"}
      ],
      "type":"function_call_output"
    },
    {
      "call_id":"call_p4",
      "output":[
        {"text":"","type":"input_text"},
        {"detail":"auto","image_url":"data:image/png;base64,iVBORw==","type":"input_image"}
      ],
      "type":"function_call_output"
    },
    {"content":"And fix it.","role":"user","type":"message"}
  ],
  "instructions":"Be brief.",
  "max_output_tokens":1000,
  "model":"gpt-5",
  "reasoning":{"effort":"medium"},
  "store":false,
  "stream":true,
  "temperature":0.2,
  "tools":[
    {
      "description":"Reads a file",
      "name":"read_file",
      "parameters":{
        "additionalProperties":false,
        "properties":{"path":{"type":"string"}},
        "required":["path"],
        "type":"object"
      },
      "strict":false,
      "type":"function"
    },
    {
      "description":"Edits — «quoted» \"text\"\n",
      "name":"edit",
      "parameters":"$EDIT_PARAMETERS",
      "strict":false,
      "type":"function"
    },
    {
      "description":"No args",
      "name":"status",
      "parameters":{"properties":{},"type":"object"},
      "strict":false,
      "type":"function"
    },
    {"description":"","name":"anything","parameters":true,"strict":false,"type":"function"}
  ]
}
"##;

    /// The body of [`plain_request`] for `gpt-5`, without vision.
    const PLAIN: &str = r##"
{
  "include":["reasoning.encrypted_content"],
  "input":[
    {"content":"  \n\na\n\nb \"quoted\" \\ \n\t \u0001 é 😀","role":"user","type":"message"},
    {"content":"Look","role":"user","type":"message"},
    {
      "arguments":"{\"path\":\"a.png\"}",
      "call_id":"call_p1",
      "name":"read_file",
      "type":"function_call"
    },
    {
      "arguments":"{\"path\":\"b\"}",
      "call_id":"call_p2",
      "name":"read_file",
      "type":"function_call"
    },
    {
      "arguments":"{\"path\":\"c\"}",
      "call_id":"call_p3",
      "name":"read_file",
      "type":"function_call"
    },
    {"arguments":"{}","call_id":"call_p4","name":"","type":"function_call"},
    {
      "call_id":"call_p1",
      "output":"[png]\n[versus] the image from read_file (image/png, 4 bytes) was not sent: this model does not accept images",
      "type":"function_call_output"
    },
    {
      "call_id":"call_p2",
      "output":"two\n[versus] the image from read_file (image/png, 4 bytes) was not sent: this model does not accept images\n[versus] the image from read_file (image/jpeg, 6 bytes) was not sent: this model does not accept images",
      "type":"function_call_output"
    },
    {
      "call_id":"call_p3",
      "output":"[versus] the image from read_file (image/jpeg, 6 bytes) was not sent: this model does not accept images",
      "type":"function_call_output"
    },
    {
      "call_id":"call_p4",
      "output":"[versus] the image (image/png, 4 bytes) was not sent: this model does not accept images",
      "type":"function_call_output"
    },
    {"content":"And fix it.","role":"user","type":"message"}
  ],
  "model":"gpt-5",
  "store":false,
  "stream":true
}
"##;
}
