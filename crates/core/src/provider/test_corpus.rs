//! A corpus of varied requests for the wires' body tests: every kind of part, replay state
//! from the called model, from another model of the same API and from another provider,
//! odd tool ids, invalid arguments, empty texts, pictures, same-role neighbours, every
//! reasoning effort, and the optional fields on and off. The replay data carries every wire's
//! keys at once (a Responses reasoning item, an Anthropic signature, a Gemini
//! `thoughtSignature`...), so one corpus exercises each wire's own replay rules.

use serde_json::{Value, json};

use crate::model::{Image, Message, ModelRequest, Part, Reasoning, Replay, Role, ToolDef};
use crate::provider::test_pictures::picture_turn;

/// One request of the corpus and whether the model sees images.
pub(crate) struct Case {
    /// What the case is, for failure messages.
    pub(crate) label: String,
    /// The request.
    pub(crate) request: ModelRequest,
    /// `WireConfig::vision` for it.
    pub(crate) vision: bool,
}

/// Every history, for each model in `models` (called through API kind `api`), with every
/// reasoning effort, vision on and off, and three mixes of the optional fields.
pub(crate) fn corpus(api: &str, models: &[&str]) -> Vec<Case> {
    let mut cases = Vec::new();
    for model in models {
        for (name, history) in histories(api, model) {
            for (r, reasoning) in [
                Reasoning::Default,
                Reasoning::Low,
                Reasoning::Medium,
                Reasoning::High,
            ]
            .into_iter()
            .enumerate()
            {
                for mix in 0..3 {
                    for vision in [false, true] {
                        let request = ModelRequest {
                            model: (*model).to_string(),
                            system: SYSTEMS[mix % SYSTEMS.len()].into(),
                            messages: history.clone().into(),
                            tools: if (mix + r) % 4 == 3 {
                                Vec::new().into()
                            } else {
                                tools().into()
                            },
                            max_output_tokens: MAXES[(mix + r) % MAXES.len()],
                            temperature: TEMPERATURES[(mix * 4 + r) % TEMPERATURES.len()],
                            reasoning,
                            seed: None,
                        };
                        cases.push(Case {
                            label: format!(
                                "{model} {name} {reasoning:?} mix {mix} vision {vision}"
                            ),
                            request,
                            vision,
                        });
                    }
                }
            }
        }
    }
    cases
}

const SYSTEMS: [&str; 3] = ["Be brief.", "", "  \n "];

const MAXES: [Option<u32>; 5] = [None, Some(1000), Some(0), Some(50_000), Some(1)];

const TEMPERATURES: [Option<f32>; 9] = [
    None,
    Some(0.2),
    Some(0.7),
    Some(1.0),
    Some(0.0),
    Some(0.333),
    Some(2.0),
    Some(0.123_456_7),
    Some(0.1),
];

/// Tools with flat, empty, nested and odd schemas.
pub(crate) fn tools() -> Vec<ToolDef> {
    vec![
        ToolDef {
            name: "read_file".into(),
            description: "Reads a file".into(),
            parameters: json!({"type":"object","properties":{"path":{"type":"string"}},
                "required":["path"],"additionalProperties":false}),
        },
        ToolDef {
            name: "edit".into(),
            description: "Edits — «quoted» \"text\"\n".into(),
            parameters: json!({
                "$schema": "http://json-schema.org/draft-07/schema#",
                "type": "object",
                "properties": {
                    "path": {"type": "string", "format": "uri", "description": "Where"},
                    "offset": {"type": ["integer", "null"], "minimum": 0, "default": 0.5},
                    "mode": {"const": "fast"},
                    "level": {"enum": [1, 2]},
                    "kind": {"enum": ["a", "b"]},
                    "either": {"type": ["string", "number"]},
                    "edits": {
                        "type": "array",
                        "items": {"type": "object", "additionalProperties": false,
                                  "properties": {"old": {"type": "string"},
                                                 "new": {"type": "string", "maxLength": 10}},
                                  "required": ["old"]},
                        "minItems": 1
                    },
                    "pair": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}]},
                    "choice": {"oneOf": [{"type": "string"}, {"$ref": "#/x"}]},
                    "any": true
                },
                "required": ["path", "edits"]
            }),
        },
        ToolDef {
            name: "status".into(),
            description: "No args".into(),
            parameters: json!({"type": "object", "properties": {}}),
        },
        ToolDef {
            name: "anything".into(),
            description: String::new(),
            parameters: json!(true),
        },
    ]
}

fn replay(origin: &str, data: Value) -> Option<Replay> {
    Some(Replay {
        origin: origin.into(),
        data,
    })
}

fn thinking(text: &str, origin: &str, data: Value) -> Part {
    Part::Thinking {
        text: text.into(),
        replay: replay(origin, data),
    }
}

/// A Responses reasoning item that also carries the other wires' keys.
fn reasoning_item(id: &str) -> Value {
    json!({"type": "reasoning", "id": id, "encrypted_content": "gAAA",
        "summary": [{"type": "summary_text", "text": "summary"}],
        "signature": format!("sig-{id}"), "thoughtSignature": format!("T-{id}"),
        "field": "reasoning_content", "n": 0.1, "big": 12_345_678_901_234_567_890_u64, "neg": -1})
}

fn call(id: &str, name: &str, arguments: &str, replay: Option<Replay>) -> Part {
    Part::ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: arguments.into(),
        replay,
    }
}

fn result(id: &str, name: &str, content: &str, is_error: bool, images: Vec<Image>) -> Part {
    Part::ToolResult {
        call_id: id.into(),
        name: name.into(),
        content: content.into(),
        is_error,
        images,
    }
}

fn image(media_type: &str, data: &[u8]) -> Image {
    Image {
        media_type: media_type.into(),
        data: data.to_vec(),
    }
}

fn assistant(parts: Vec<Part>) -> Message {
    Message {
        role: Role::Assistant,
        parts,
    }
}

fn user(parts: Vec<Part>) -> Message {
    Message {
        role: Role::User,
        parts,
    }
}

/// One step of a tool loop by the called model (`own`): its thinking, text, two parallel
/// calls, and their results.
fn own_step(own: &str, step: usize) -> [Message; 2] {
    let first = format!("call_{step}_a");
    let second = format!("call_{step}_b");
    [
        assistant(vec![
            thinking(
                &format!("thinking about step {step}"),
                own,
                reasoning_item(&format!("rs_{step}")),
            ),
            Part::text(format!("Step {step}: reading two files.")),
            call(
                &first,
                "read_file",
                &format!(r#"{{"path":"src/file_{step}.rs"}}"#),
                replay(own, json!({"thoughtSignature": "S", "geminiId": true})),
            ),
            call(
                &second,
                "read_file",
                r#"{"path":"README.md"}"#,
                replay(own, Value::Null),
            ),
        ]),
        user(vec![
            result(
                &first,
                "read_file",
                &"fn main() {}\n".repeat(20),
                false,
                Vec::new(),
            ),
            result(&second, "read_file", "# versus\n", false, Vec::new()),
        ]),
    ]
}

/// A conversation of `steps` tool-loop steps by the model behind `own`, after one user
/// message (for timing a long history).
pub(crate) fn long_conversation(own: &str, steps: usize) -> Vec<Message> {
    let mut messages = vec![Message::user("Fix the build.")];
    for step in 0..steps {
        messages.extend(own_step(own, step));
    }
    messages
}

/// The corpus's histories named `names`, one after the other, as the model behind
/// `api`/`model` sees them.
pub(crate) fn history(api: &str, model: &str, names: &[&str]) -> Vec<Message> {
    let mut out = Vec::new();
    for (name, history) in histories(api, model) {
        if names.contains(&name) {
            out.extend(history);
        }
    }
    out
}

/// Every history, named, with replay state from the model behind `api`/`model` (its tag),
/// another model of the same API, and another provider.
fn histories(api: &str, model: &str) -> Vec<(&'static str, Vec<Message>)> {
    let own = &crate::model::replay_tag(api, model);
    let other = &crate::model::replay_tag(api, "other-model");
    let foreign = if api == "anthropic" {
        "gemini/gemini-3-pro-preview"
    } else {
        "anthropic/claude-x"
    };
    let png = image("image/png", &[0x89, b'P', b'N', b'G']);
    let jpeg = image("image/jpeg", &[0xff, 0xd8, 0xff, 0xe0, 0, 1]);
    let long_id = "x".repeat(80);
    vec![
        ("empty", Vec::new()),
        ("one user text", vec![Message::user("hi")]),
        (
            "texts empty whitespace and escapes",
            vec![user(vec![
                Part::text(""),
                Part::text("  "),
                Part::text("a"),
                Part::text("b \"quoted\" \\ \n\t \u{1} é 😀"),
            ])],
        ),
        (
            "own tool loop",
            vec![
                Message::user("Read a and b"),
                assistant(vec![
                    thinking("let me see", own, reasoning_item("rs_1")),
                    thinking("", own, json!({"redacted_data": "opaque"})),
                    thinking("unsigned", own, json!({"signature": ""})),
                    thinking("chat", own, json!({"field": "reasoning"})),
                    thinking("null", own, Value::Null),
                    Part::text("Reading."),
                    call(
                        "call_1",
                        "read_file",
                        r#"{"path":"a.txt"}"#,
                        replay(own, json!({"thoughtSignature": "S1", "geminiId": true})),
                    ),
                    call("call_2", "read_file", "", replay(own, Value::Null)),
                    call(
                        "call_3",
                        "read_file",
                        r#"{"path": "#,
                        replay(own, json!({"geminiId": false})),
                    ),
                    call("call_4", "edit", "[1,2]", replay(own, Value::Null)),
                    call(
                        "call_5",
                        "edit",
                        "  {\"a\": 1.5e3, \"b\": [true, null], \"c\": 0.1, \"d\": \"é\"}  ",
                        replay(own, Value::Null),
                    ),
                    call("call_6", "status", "   ", replay(own, Value::Null)),
                ]),
                user(vec![
                    result("call_1", "read_file", "A", false, Vec::new()),
                    result("call_2", "read_file", "missing", true, Vec::new()),
                    result("call_3", "read_file", "", true, Vec::new()),
                    Part::text("in between"),
                    result("call_4", "edit", "   ", false, Vec::new()),
                    result("call_5", "edit", "ok", false, Vec::new()),
                    result("call_6", "status", "", false, Vec::new()),
                    Part::text("go on"),
                ]),
                assistant(vec![
                    Part::text("done"),
                    thinking("dangling", own, reasoning_item("rs_dangling")),
                ]),
            ],
        ),
        (
            "state from another model and provider",
            vec![
                Message::user("go"),
                assistant(vec![
                    thinking("other plan", other, reasoning_item("rs_other")),
                    thinking("foreign plan", foreign, reasoning_item("rs_foreign")),
                    Part::Thinking {
                        text: "plain".into(),
                        replay: None,
                    },
                    Part::Text {
                        text: "foreign text".into(),
                        replay: replay(foreign, json!({"thoughtSignature": "F"})),
                    },
                    call(
                        "toolu:1/x",
                        "read_file",
                        r#"{"path":"a"}"#,
                        replay(foreign, Value::Null),
                    ),
                    call(
                        "g 2",
                        "read file!",
                        "{}",
                        replay(other, json!({"thoughtSignature": "O", "geminiId": true})),
                    ),
                    call(&long_id, "status", "not json", None),
                ]),
                user(vec![
                    result("toolu:1/x", "read_file", "A", false, Vec::new()),
                    result("g 2", "", "B", true, Vec::new()),
                    result(&long_id, "", "C", false, Vec::new()),
                    result("unknown", "", "D", false, Vec::new()),
                ]),
            ],
        ),
        (
            "results with pictures",
            vec![
                Message::user("Look"),
                assistant(vec![
                    call(
                        "call_p1",
                        "read_file",
                        r#"{"path":"a.png"}"#,
                        replay(own, json!({"geminiId": true})),
                    ),
                    call("call_p2", "read_file", r#"{"path":"b"}"#, None),
                    call("call_p3", "read_file", r#"{"path":"c"}"#, None),
                    call("call_p4", "", "{}", None),
                ]),
                user(vec![
                    result("call_p1", "read_file", "[png]", false, vec![png.clone()]),
                    result(
                        "call_p2",
                        "read_file",
                        "two",
                        false,
                        vec![png.clone(), jpeg.clone()],
                    ),
                    result("call_p3", "read_file", "", true, vec![jpeg]),
                    result("call_p4", "", "", false, vec![png]),
                    Part::text("And fix it."),
                ]),
            ],
        ),
        ("picture turn", picture_turn("call_img")),
        (
            "same-role neighbours",
            vec![
                Message::user("a"),
                Message::user("b"),
                assistant(vec![Part::text("  ")]),
                assistant(vec![Part::text("x")]),
                assistant(vec![Part::text("y")]),
                Message::user("c"),
                user(Vec::new()),
            ],
        ),
        (
            "thinking only",
            vec![
                Message::user("hi"),
                assistant(vec![thinking("hmm", own, reasoning_item("rs_only"))]),
                Message::user("again"),
            ],
        ),
        (
            "open tool turn without thinking",
            vec![
                Message::user("go"),
                assistant(vec![call("call_1", "read_file", "{}", None)]),
                user(vec![result("call_1", "read_file", "", false, Vec::new())]),
            ],
        ),
        (
            "open tool turn with own thinking",
            vec![
                Message::user("go"),
                assistant(vec![
                    thinking("mine", own, reasoning_item("rs_open")),
                    call(
                        "call_1",
                        "read_file",
                        "{}",
                        replay(own, json!({"thoughtSignature": "S"})),
                    ),
                ]),
                user(vec![result("call_1", "read_file", "x", false, Vec::new())]),
            ],
        ),
        (
            "signed texts and mixed calls",
            vec![
                Message::user("go"),
                assistant(vec![
                    Part::Text {
                        text: String::new(),
                        replay: replay(own, json!({"thoughtSignature": "E"})),
                    },
                    Part::Text {
                        text: "signed".into(),
                        replay: replay(own, json!({"thoughtSignature": "X"})),
                    },
                    Part::Text {
                        text: String::new(),
                        replay: None,
                    },
                    call("c1", "read_file", "{}", None),
                    call(
                        "c2",
                        "read_file",
                        "{}",
                        replay(own, json!({"thoughtSignature": "S2"})),
                    ),
                    call(
                        "c3",
                        "read_file",
                        "{}",
                        replay(other, json!({"thoughtSignature": "O"})),
                    ),
                ]),
                user(vec![
                    result("c1", "read_file", "1", false, Vec::new()),
                    result("c2", "read_file", "2", false, Vec::new()),
                    result("c3", "read_file", "3", false, Vec::new()),
                ]),
                assistant(vec![call("c4", "status", "{}", None)]),
            ],
        ),
        (
            "assistant first",
            vec![assistant(vec![Part::text("Hello.")]), Message::user("hi")],
        ),
        ("five-step loop", long_conversation(own, 5)),
    ]
}

/// JSON text as a value: the wires' expected bodies. `"$EDIT_PARAMETERS"` stands for the
/// `edit` tool's schema of [`tools`], for the wires that send a schema as it is given.
pub(crate) fn expected(text: &str) -> serde_json::Value {
    let schema = tools()
        .into_iter()
        .find(|t| t.name == "edit")
        .map(|t| t.parameters.to_string())
        .unwrap();
    serde_json::from_str(&text.replace("\"$EDIT_PARAMETERS\"", &schema)).unwrap()
}

/// The pinned exact bodies of a wire: [`rich_request`] with vision on gives `rich`,
/// [`plain_request`] with vision off gives `plain` (as the wire's `body` builds them for the
/// request's replay tag). Pinned when the bodies became typed structs: the same values the old
/// `serde_json::Value` builders produced (a corpus test compared the two on every request of
/// [`corpus`] before those builders were removed).
pub(crate) fn assert_exact_bodies(
    api: &str,
    model: &str,
    body: impl Fn(&ModelRequest, &str, bool) -> Value,
    rich: &str,
    plain: &str,
) {
    let request = rich_request(api, model);
    let tag = crate::model::replay_tag(api, &request.model);
    assert_eq!(
        body(&request, &tag, true),
        expected(rich),
        "rich request, vision on"
    );
    let request = plain_request(api, model);
    let tag = crate::model::replay_tag(api, &request.model);
    assert_eq!(
        body(&request, &tag, false),
        expected(plain),
        "plain request, vision off"
    );
}

/// A request with much of the corpus in one history (this model's tool loop, state from
/// elsewhere, pictures) and every optional field set: the wires' exact-body tests send it
/// with vision on.
pub(crate) fn rich_request(api: &str, model: &str) -> ModelRequest {
    ModelRequest {
        model: model.into(),
        system: "Be brief.".into(),
        messages: history(
            api,
            model,
            &[
                "own tool loop",
                "state from another model and provider",
                "results with pictures",
            ],
        )
        .into(),
        tools: tools().into(),
        max_output_tokens: Some(1000),
        temperature: Some(0.2),
        reasoning: Reasoning::Medium,
        seed: None,
    }
}

/// The smallest request: one user message (`hi`), a short system prompt, no tools and no
/// optional field; for the tests of a wire's URL and headers.
pub(crate) fn hello_request(model: &str) -> ModelRequest {
    ModelRequest {
        model: model.into(),
        system: "be brief".into(),
        messages: vec![crate::model::Message::user("hi")].into(),
        tools: Vec::new().into(),
        max_output_tokens: None,
        temperature: None,
        reasoning: Reasoning::Default,
        seed: None,
    }
}

/// A request with every optional field left out (a blank system prompt, no tools) and
/// pictures: the wires' exact-body tests send it with vision off.
pub(crate) fn plain_request(api: &str, model: &str) -> ModelRequest {
    ModelRequest {
        model: model.into(),
        system: "  \n ".into(),
        messages: history(
            api,
            model,
            &[
                "texts empty whitespace and escapes",
                "results with pictures",
            ],
        )
        .into(),
        tools: Vec::new().into(),
        max_output_tokens: None,
        temperature: None,
        reasoning: Reasoning::Default,
        seed: None,
    }
}
