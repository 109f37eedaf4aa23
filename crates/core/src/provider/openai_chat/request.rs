//! The Chat Completions request body from the canonical [`ModelRequest`].
//!
//! Choices that depend on the server, decided from the provider name (and the base URL for
//! configured providers pointing at OpenAI or OpenRouter):
//! - token cap: `max_completion_tokens` for OpenAI (and Azure OpenAI), whose reasoning models
//!   reject `max_tokens`; `max_tokens` everywhere else, since many compatible servers do not
//!   know the newer name;
//! - effort: `reasoning: {effort}` for OpenRouter, `reasoning_effort` elsewhere; nothing at all
//!   for [`Reasoning::Default`], so servers without the parameter never see it;
//! - thinking: sent back only to the model that produced it, in the field it arrived in.
//!   `reasoning_content` always (DeepSeek rejects tool-call histories without it);
//!   `reasoning` only to OpenRouter and Ollama and `reasoning_details` only to OpenRouter,
//!   because strict servers (Groq, Mistral) reject unknown message fields. Thinking from another model is
//!   dropped, not turned into text: the model would read it as something it said aloud.
//!
//! Tool results have no error flag in this format: a failed tool's text already says so. Tool
//! messages take text only, so a result's pictures follow the tool messages in one user
//! message (a label naming the call, then an `image_url` part with a `data:` URL per picture)
//! when the model sees images (`WireConfig::vision`); otherwise the tool text gets a note per
//! picture.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;
use serde_json::value::{RawValue, to_raw_value};

use super::body_cache::{BodyCache, Key};
use super::history::{CallIds, is_ours, wire_arguments};
use crate::model::{Message, ModelRequest, Part, Reasoning, Role, ToolDef};
use crate::provider::WireConfig;
use crate::provider::vision::content_with_notes;

/// What differs between servers speaking this format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Dialect {
    openai: bool,
    openrouter: bool,
    ollama: bool,
}

impl Dialect {
    /// The dialect of the server `config` points at.
    pub(crate) fn of(config: &WireConfig) -> Self {
        let provider = config.provider.to_ascii_lowercase();
        let base = config.base().to_ascii_lowercase();
        Self {
            openai: provider == "openai"
                || base.contains("api.openai.com")
                || base.contains(".openai.azure.com")
                || base.contains("/openai/deployments/"),
            openrouter: provider == "openrouter" || base.contains("openrouter.ai"),
            ollama: provider == "ollama",
        }
    }

    /// Whether thinking that arrived in `field` may be sent back in that field.
    fn echoes(self, field: &str) -> bool {
        match field {
            "reasoning_content" => true,
            "reasoning" => self.openrouter || self.ollama,
            _ => false,
        }
    }
}

/// The body for `request` as the bytes sent; `tag` is this model's replay tag. Messages the
/// cache encoded for an earlier step of the same conversation are copied, not encoded again
/// (see [`BodyCache`]).
pub(crate) fn encode(
    config: &WireConfig,
    request: &ModelRequest,
    tag: &str,
    cache: &mut BodyCache,
) -> Result<Vec<u8>, serde_json::Error> {
    let dialect = Dialect::of(config);
    let key = Key {
        tag,
        dialect,
        vision: config.vision,
    };
    let encoded = cache.update(request, key)?;
    let cap = request.max_output_tokens;
    let effort = effort(request.reasoning);
    let body = Body {
        model: &request.model,
        messages: encoded.messages,
        tools: encoded.tools,
        stream: true,
        stream_options: StreamOptions {
            include_usage: true,
        },
        // OpenAI's reasoning models reject `max_tokens`; many compatible servers do not know
        // the newer name.
        max_completion_tokens: cap.filter(|_| dialect.openai),
        max_tokens: cap.filter(|_| !dialect.openai),
        temperature: request.temperature,
        reasoning: effort
            .filter(|_| dialect.openrouter)
            .map(|effort| Effort { effort }),
        reasoning_effort: effort.filter(|_| !dialect.openrouter),
        seed: request.seed,
        // Only OpenAI's own API documents the key; compatible servers may refuse a field
        // they do not know (OpenRouter and DeepSeek cache on their own).
        prompt_cache_key: dialect
            .openai
            .then(|| crate::provider::cache::prompt_cache_key(request)),
    };
    // Sized up front: the body is mostly the cached JSON, copied once instead of through a
    // dozen doublings of a growing buffer.
    let cached: usize = body
        .messages
        .iter()
        .map(|m| m.get().len() + 1)
        .sum::<usize>()
        + body.tools.map_or(0, |t| t.get().len());
    let mut bytes = Vec::with_capacity(cached + request.model.len() + 256);
    serde_json::to_writer(&mut bytes, &body)?;
    Ok(bytes)
}

/// `POST /chat/completions` as sent.
#[derive(Debug, Serialize)]
struct Body<'a> {
    model: &'a str,
    /// Each already JSON: the system message, then every message of the conversation.
    messages: Vec<&'a RawValue>,
    /// The `tools` array, already JSON (absent when no tool is offered).
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<&'a RawValue>,
    stream: bool,
    stream_options: StreamOptions,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_completion_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// As the `f32` it is, so 0.2 goes out as `0.2` (widened to `f64` it would print as
    /// 0.20000000298023224).
    temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning: Option<Effort>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_effort: Option<&'static str>,
    /// The sampling seed (OpenAI, OpenRouter, Ollama and most compatible servers take it).
    #[serde(skip_serializing_if = "Option::is_none")]
    seed: Option<u64>,
    /// Routes the steps of one model's session to the same prompt cache
    /// ([`crate::provider::cache`]), on OpenAI's own API.
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_cache_key: Option<String>,
}

#[derive(Debug, Serialize)]
struct StreamOptions {
    include_usage: bool,
}

#[derive(Debug, Serialize)]
struct Effort {
    effort: &'static str,
}

#[derive(Debug, Serialize)]
struct Tool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: Function<'a>,
}

#[derive(Debug, Serialize)]
struct Function<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
}

#[derive(Debug, Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
enum ChatMessage<'a> {
    System {
        content: &'a str,
    },
    User {
        content: UserContent<'a>,
    },
    Tool {
        tool_call_id: String,
        content: Cow<'a, str>,
    },
    Assistant {
        /// `null` for a message that only calls tools.
        content: Option<String>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<Call<'a>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        reasoning_content: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        reasoning: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        reasoning_details: Option<Vec<&'a Value>>,
    },
}

#[derive(Debug, Serialize)]
#[serde(untagged)]
enum UserContent<'a> {
    Text(String),
    Parts(Vec<UserPart<'a>>),
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum UserPart<'a> {
    Text { text: Cow<'a, str> },
    ImageUrl { image_url: ImageUrl },
}

#[derive(Debug, Serialize)]
struct ImageUrl {
    url: String,
}

#[derive(Debug, Serialize)]
struct Call<'a> {
    id: String,
    #[serde(rename = "type")]
    kind: &'static str,
    function: CallFunction<'a>,
}

#[derive(Debug, Serialize)]
struct CallFunction<'a> {
    name: &'a str,
    arguments: Cow<'a, str>,
}

fn effort(reasoning: Reasoning) -> Option<&'static str> {
    match reasoning {
        Reasoning::Default => None,
        Reasoning::Low => Some("low"),
        Reasoning::Medium => Some("medium"),
        Reasoning::High => Some("high"),
    }
}

/// The `tools` array as JSON.
pub(super) fn tools_json(tools: &[ToolDef]) -> Result<Box<RawValue>, serde_json::Error> {
    to_raw_value(&tools.iter().map(tool).collect::<Vec<_>>())
}

fn tool(def: &ToolDef) -> Tool<'_> {
    Tool {
        kind: "function",
        function: Function {
            name: &def.name,
            description: &def.description,
            parameters: &def.parameters,
        },
    }
}

/// The wire messages one canonical message becomes, as JSON (none, one, or several: tool
/// results are one message each). `ids` must know every call this model made in the
/// conversation.
pub(super) fn message_json(
    message: &Message,
    ids: &CallIds,
    tag: &str,
    dialect: Dialect,
    vision: bool,
) -> Result<Vec<Box<RawValue>>, serde_json::Error> {
    let mut out = Vec::new();
    match message.role {
        Role::User => user(message, ids, vision, &mut out),
        Role::Assistant => assistant(message, ids, tag, dialect, &mut out),
    }
    out.iter().map(to_raw_value).collect()
}

/// The system message as JSON.
pub(super) fn system_json(text: &str) -> Result<Box<RawValue>, serde_json::Error> {
    to_raw_value(&ChatMessage::System { content: text })
}

/// Tool results first (each its own `role: tool` message, right after the assistant's calls,
/// as the format requires), then the user's text; pictures of the results go in that user
/// message (see the module docs).
fn user<'a>(message: &'a Message, ids: &CallIds, vision: bool, out: &mut Vec<ChatMessage<'a>>) {
    let mut texts: Vec<&str> = Vec::new();
    let mut pictures = Vec::new();
    for part in &message.parts {
        match part {
            Part::ToolResult {
                call_id,
                name,
                content,
                images,
                ..
            } => {
                let wire_id = ids.wire_id(call_id);
                let content: Cow<'a, str> = if images.is_empty() || vision {
                    Cow::Borrowed(content)
                } else {
                    Cow::Owned(content_with_notes(content, name, images))
                };
                // Some servers reject empty tool messages.
                let content = if content.is_empty() {
                    Cow::Borrowed("(no output)")
                } else {
                    content
                };
                if vision && !images.is_empty() {
                    let plural = if images.len() == 1 { "" } else { "s" };
                    pictures.push(UserPart::Text {
                        text: Cow::Owned(format!(
                            "[versus] the image{plural} returned by {name} (call {wire_id}):"
                        )),
                    });
                    for image in images {
                        pictures.push(UserPart::ImageUrl {
                            image_url: ImageUrl {
                                url: image.data_url(),
                            },
                        });
                    }
                }
                out.push(ChatMessage::Tool {
                    tool_call_id: wire_id,
                    content,
                });
            }
            Part::Text { text, .. } if !text.is_empty() => texts.push(text),
            _ => {}
        }
    }
    if !pictures.is_empty() {
        if !texts.is_empty() {
            pictures.push(UserPart::Text {
                text: Cow::Owned(texts.join("\n\n")),
            });
        }
        out.push(ChatMessage::User {
            content: UserContent::Parts(pictures),
        });
    } else if !texts.is_empty() {
        out.push(ChatMessage::User {
            content: UserContent::Text(texts.join("\n\n")),
        });
    }
}

fn assistant<'a>(
    message: &'a Message,
    ids: &CallIds,
    tag: &str,
    dialect: Dialect,
    out: &mut Vec<ChatMessage<'a>>,
) {
    let mut text = String::new();
    let mut calls = Vec::new();
    let mut thinking = String::new();
    let mut field: Option<&str> = None;
    let mut details: Vec<&'a Value> = Vec::new();
    for part in &message.parts {
        match part {
            Part::Text { text: piece, .. } => text.push_str(piece),
            Part::ToolCall {
                id,
                name,
                arguments,
                ..
            } => calls.push(Call {
                id: ids.wire_id(id),
                kind: "function",
                function: CallFunction {
                    name,
                    arguments: wire_arguments(arguments),
                },
            }),
            Part::Thinking {
                text: piece,
                replay,
            } if is_ours(replay.as_ref(), tag) => {
                let Some(replay) = replay else { continue };
                let Some(name) = replay.data.get("field").and_then(Value::as_str) else {
                    continue;
                };
                if !dialect.echoes(name) {
                    continue;
                }
                thinking.push_str(piece);
                field.get_or_insert(name);
                if let Some(Value::Array(items)) = replay.data.get("details") {
                    details.extend(items.iter());
                }
            }
            _ => {}
        }
    }
    let reasoning = field.filter(|_| !thinking.is_empty() || !details.is_empty());
    if text.is_empty() && calls.is_empty() && reasoning.is_none() {
        return;
    }
    let content = if text.is_empty() && !calls.is_empty() {
        None
    } else {
        Some(text)
    };
    let mut reasoning_content = None;
    let mut reasoning_text = None;
    let mut reasoning_details = None;
    if let Some(field) = reasoning {
        if !thinking.is_empty() {
            // `echoes` lets only these two names through.
            if field == "reasoning" {
                reasoning_text = Some(thinking);
            } else {
                reasoning_content = Some(thinking);
            }
        }
        if dialect.openrouter && !details.is_empty() {
            reasoning_details = Some(details);
        }
    }
    out.push(ChatMessage::Assistant {
        content,
        tool_calls: calls,
        reasoning_content,
        reasoning: reasoning_text,
        reasoning_details,
    });
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The body as JSON, as the server reads it (encoded with nothing cached).
    fn body(config: &WireConfig, request: &ModelRequest, tag: &str) -> Value {
        let bytes = encode(config, request, tag, &mut BodyCache::default()).unwrap();
        serde_json::from_slice(&bytes).unwrap()
    }
    use crate::model::{Replay, replay_tag};

    const TAG: &str = "openai-chat/m";

    fn config(provider: &str) -> WireConfig {
        WireConfig {
            provider: provider.into(),
            base_url: "http://127.0.0.1:1/v1/".into(),
            ..WireConfig::default()
        }
    }

    fn request(messages: Vec<Message>) -> ModelRequest {
        ModelRequest {
            model: "m".into(),
            system: "Be brief.".into(),
            messages: messages.into(),
            tools: vec![ToolDef {
                name: "read_file".into(),
                description: "Reads a file".into(),
                parameters: json!({"type":"object","properties":{"path":{"type":"string"}}}),
            }]
            .into(),
            max_output_tokens: Some(1000),
            temperature: Some(0.5),
            reasoning: Reasoning::High,
            seed: None,
        }
    }

    fn thinking(text: &str, origin: &str, data: Value) -> Part {
        Part::Thinking {
            text: text.into(),
            replay: Some(Replay {
                origin: origin.into(),
                data,
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
            content: "hello".into(),
            is_error: false,
            images: Vec::new(),
        }
    }

    #[test]
    fn conversation_translates_to_messages() {
        let messages = vec![
            Message::user("Read a.txt"),
            Message {
                role: Role::Assistant,
                parts: vec![
                    thinking("let me see", TAG, json!({"field": "reasoning_content"})),
                    Part::text("Reading."),
                    call("call_1", r#"{"path":"a.txt"}"#, TAG),
                    call("call_2", "", TAG),
                ],
            },
            Message {
                role: Role::User,
                parts: vec![result("call_1"), result("call_2"), Part::text("go on")],
            },
        ];
        let body = body(&config("deepseek"), &request(messages), TAG);
        let msgs = body["messages"].as_array().unwrap();
        assert_eq!(msgs[0], json!({"role":"system","content":"Be brief."}));
        assert_eq!(msgs[1], json!({"role":"user","content":"Read a.txt"}));
        assert_eq!(msgs[2]["content"], "Reading.");
        assert_eq!(msgs[2]["reasoning_content"], "let me see");
        assert_eq!(msgs[2]["tool_calls"][0]["id"], "call_1");
        assert_eq!(msgs[2]["tool_calls"][0]["type"], "function");
        assert_eq!(
            msgs[2]["tool_calls"][0]["function"]["arguments"],
            r#"{"path":"a.txt"}"#
        );
        assert_eq!(msgs[2]["tool_calls"][1]["function"]["arguments"], "{}");
        assert_eq!(
            msgs[3],
            json!({"role":"tool","tool_call_id":"call_1","content":"hello"})
        );
        assert_eq!(msgs[4]["tool_call_id"], "call_2");
        assert_eq!(msgs[5], json!({"role":"user","content":"go on"}));
        assert_eq!(body["stream"], true);
        assert_eq!(body["stream_options"]["include_usage"], true);
        assert_eq!(body["max_tokens"], 1000);
        assert!(body.get("max_completion_tokens").is_none());
        assert_eq!(body["temperature"], 0.5);
        // An f32 goes out as written, not widened (0.20000000298023224).
        let mut fifth = request(vec![user_text("hi")]);
        fifth.temperature = Some(0.2);
        let bytes = encode(&config("openai"), &fifth, TAG, &mut BodyCache::default()).unwrap();
        assert!(
            String::from_utf8(bytes)
                .unwrap()
                .contains(r#""temperature":0.2,"#),
            "temperature widened"
        );
        assert_eq!(body["reasoning_effort"], "high");
        assert_eq!(
            body["tools"][0],
            json!({"type":"function","function":{"name":"read_file","description":"Reads a file",
                "parameters":{"type":"object","properties":{"path":{"type":"string"}}}}})
        );
    }

    #[test]
    fn openai_and_openrouter_differences() {
        let req = request(vec![Message::user("hi")]);
        let openai = body(&config("openai"), &req, TAG);
        assert_eq!(openai["max_completion_tokens"], 1000);
        assert!(openai.get("max_tokens").is_none());
        let router = body(&config("openrouter"), &req, TAG);
        assert_eq!(router["reasoning"], json!({"effort": "high"}));
        assert!(router.get("reasoning_effort").is_none());
        let mut plain = req.clone();
        plain.reasoning = Reasoning::Default;
        plain.tools = Vec::new().into();
        plain.max_output_tokens = None;
        plain.temperature = None;
        plain.system = "".into();
        let minimal = body(&config("vllm"), &plain, TAG);
        let mut keys: Vec<&String> = minimal.as_object().unwrap().keys().collect();
        keys.sort();
        assert_eq!(keys, ["messages", "model", "stream", "stream_options"]);
        assert_eq!(minimal["messages"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn foreign_state_is_dropped_and_ids_normalised() {
        let foreign = replay_tag("anthropic", "claude");
        let messages = vec![
            Message {
                role: Role::Assistant,
                parts: vec![
                    thinking("secret plan", &foreign, json!({"signature": "abc"})),
                    call("toolu:1/x", r#"{"path": "#, &foreign),
                ],
            },
            Message {
                role: Role::User,
                parts: vec![result("toolu:1/x")],
            },
        ];
        let body = body(&config("openai"), &request(messages), TAG);
        let msgs = body["messages"].as_array().unwrap();
        let assistant = &msgs[1];
        assert!(assistant["content"].is_null());
        assert!(assistant.get("reasoning_content").is_none());
        assert!(!body.to_string().contains("secret plan"));
        let id = assistant["tool_calls"][0]["id"].as_str().unwrap();
        assert_ne!(id, "toolu:1/x");
        assert_eq!(msgs[2]["tool_call_id"], id);
        let args = assistant["tool_calls"][0]["function"]["arguments"]
            .as_str()
            .unwrap();
        let args: Value = serde_json::from_str(args).unwrap();
        assert_eq!(args["raw_arguments"], r#"{"path": "#);
    }

    #[test]
    fn reasoning_field_echo_depends_on_the_server() {
        let parts = vec![
            thinking(
                "hmm",
                TAG,
                json!({"field": "reasoning", "details": [{"type":"reasoning.text","text":"hmm"}]}),
            ),
            Part::text("ok"),
        ];
        let messages = vec![Message {
            role: Role::Assistant,
            parts,
        }];
        let req = request(messages);
        let router = body(&config("openrouter"), &req, TAG);
        assert_eq!(router["messages"][1]["reasoning"], "hmm");
        assert_eq!(
            router["messages"][1]["reasoning_details"][0]["type"],
            "reasoning.text"
        );
        let ollama = body(&config("ollama"), &req, TAG);
        assert_eq!(ollama["messages"][1]["reasoning"], "hmm");
        assert!(ollama["messages"][1].get("reasoning_details").is_none());
        let groq = body(&config("groq"), &req, TAG);
        assert!(groq["messages"][1].get("reasoning").is_none());
        assert_eq!(groq["messages"][1]["content"], "ok");
    }

    use crate::provider::test_pictures::{NOTE, picture_turn};

    #[test]
    fn a_picture_follows_the_tool_messages_or_becomes_a_note() {
        let mut messages = picture_turn("call_img");
        if let Some(last) = messages.last_mut() {
            last.parts.push(Part::text("And fix it."));
        }
        let seen = body(
            &WireConfig {
                vision: true,
                ..config("openai")
            },
            &request(messages.clone()),
            TAG,
        );
        let sent = seen["messages"].as_array().unwrap();
        let tail = &sent[sent.len() - 2..];
        assert_eq!(
            tail[0],
            json!({"role":"tool","tool_call_id":"call_img","content":"[binary file, 4 bytes]"})
        );
        assert_eq!(
            tail[1],
            json!({"role":"user","content":[
                {"type":"text","text":"[versus] the image returned by read_file (call call_img):"},
                {"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw=="}},
                {"type":"text","text":"And fix it."}
            ]})
        );
        let blind = body(&config("openai"), &request(messages), TAG);
        let sent = blind["messages"].as_array().unwrap();
        assert_eq!(
            sent[sent.len() - 2],
            json!({"role":"tool","tool_call_id":"call_img","content":NOTE})
        );
        assert_eq!(
            sent[sent.len() - 1],
            json!({"role":"user","content":"And fix it."})
        );
        assert!(!blind.to_string().contains("iVBORw"));
    }

    /// Encodes `request` with `cache` and asserts the bytes are those of an encode from
    /// scratch: a cached message must never go out different from what it would be today.
    fn cached_matches_fresh(config: &WireConfig, request: &ModelRequest, cache: &mut BodyCache) {
        let cached = encode(config, request, TAG, cache).unwrap();
        let fresh = encode(config, request, TAG, &mut BodyCache::default()).unwrap();
        assert_eq!(
            String::from_utf8(cached).unwrap(),
            String::from_utf8(fresh).unwrap()
        );
    }

    fn user_text(text: &str) -> Message {
        Message {
            role: Role::User,
            parts: vec![Part::text(text)],
        }
    }

    #[test]
    fn cached_messages_go_out_exactly_as_a_fresh_encode_would() {
        let config = config("ollama");
        let mut cache = BodyCache::default();
        let mut request = request(vec![user_text("fix the bug")]);
        cached_matches_fresh(&config, &request, &mut cache);
        // A growing conversation: our calls, their results, thinking we may echo.
        for step in 0..4 {
            let id = format!("call_{step}");
            let mut messages = request.messages.clone();
            messages.push(Message {
                role: Role::Assistant,
                parts: vec![
                    thinking("hmm", TAG, json!({"field": "reasoning"})),
                    call(&id, r#"{"path":"a"}"#, TAG),
                ],
            });
            messages.push(Message {
                role: Role::User,
                parts: vec![result(&id)],
            });
            request.messages = messages;
            cached_matches_fresh(&config, &request, &mut cache);
        }
        // A call from another provider: its id goes out normalised...
        let mut messages = request.messages.clone();
        messages.push(Message {
            role: Role::Assistant,
            parts: vec![call("toolu 01/x", "{}", "anthropic/claude")],
        });
        messages.push(Message {
            role: Role::User,
            parts: vec![result("toolu 01/x")],
        });
        request.messages = messages;
        cached_matches_fresh(&config, &request, &mut cache);
        // ...until this model makes a call with that very id: then it is ours everywhere, and
        // the cached messages that sent it normalised must not be reused.
        let mut messages = request.messages.clone();
        messages.push(Message {
            role: Role::Assistant,
            parts: vec![call("toolu 01/x", "{}", TAG)],
        });
        request.messages = messages;
        let body = {
            let bytes = encode(&config, &request, TAG, &mut cache).unwrap();
            serde_json::from_slice::<Value>(&bytes).unwrap()
        };
        let sent: Vec<&str> = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|m| m["tool_call_id"].as_str())
            .collect();
        assert!(sent.contains(&"toolu 01/x"), "{sent:?}");
        cached_matches_fresh(&config, &request, &mut cache);
    }

    #[test]
    fn a_conversation_changed_in_place_system_tools_and_vision_are_noticed() {
        let mut cache = BodyCache::default();
        let mut config = config("openai");
        let mut request = request(vec![user_text("one"), user_text("two")]);
        cached_matches_fresh(&config, &request, &mut cache);
        // Compaction: the history is rebuilt, new messages at old positions.
        request.messages = vec![user_text("summary"), user_text("two")].into();
        cached_matches_fresh(&config, &request, &mut cache);
        // A shorter conversation (a rewind).
        request.messages = vec![user_text("summary")].into();
        cached_matches_fresh(&config, &request, &mut cache);
        request.system = "Be thorough.".into();
        cached_matches_fresh(&config, &request, &mut cache);
        request.system = " ".into();
        cached_matches_fresh(&config, &request, &mut cache);
        request.tools = Vec::new().into();
        cached_matches_fresh(&config, &request, &mut cache);
        let mut picture = result("c9");
        if let Part::ToolResult { images, .. } = &mut picture {
            images.push(crate::model::Image {
                media_type: "image/png".into(),
                data: b"\x89PNG".to_vec(),
            });
        }
        let mut messages = request.messages.clone();
        messages.push(Message {
            role: Role::User,
            parts: vec![picture],
        });
        request.messages = messages;
        cached_matches_fresh(&config, &request, &mut cache);
        config.vision = true;
        cached_matches_fresh(&config, &request, &mut cache);
        // Another model's requests through the same cache (its tag differs).
        let other = encode(&config, &request, "openai-chat/other", &mut cache).unwrap();
        let fresh = encode(
            &config,
            &request,
            "openai-chat/other",
            &mut BodyCache::default(),
        );
        assert_eq!(other, fresh.unwrap());
    }
}
