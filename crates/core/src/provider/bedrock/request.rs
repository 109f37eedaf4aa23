//! The Converse request body from the canonical [`ModelRequest`].
//!
//! Converse wants alternating user and assistant messages, so consecutive messages of one role
//! are merged. Tool calls go out as `toolUse` blocks (the arguments as a JSON object), results
//! as `toolResult` blocks in a user message (`status: "error"` for a failed tool; a tool's
//! pictures as `image` blocks when the model sees images, a text note otherwise). Thinking goes
//! back as `reasoningContent` with its signature only to the model that produced it.
//! `maxTokens` is sent only when set: Converse's default is the model's own maximum, and a fixed
//! number would be refused by models with a smaller one.

use serde_json::{Map, Value, json};

use crate::model::{ModelRequest, Part, Role};
use crate::provider::ids::normalize_call_id;
use crate::provider::vision::content_with_notes;

/// The body for `request`; `tag` is this model's replay tag.
pub(crate) fn body(request: &ModelRequest, tag: &str, vision: bool) -> Value {
    let mut messages: Vec<(Role, Vec<Value>)> = Vec::new();
    for message in &request.messages {
        let mut blocks = Vec::new();
        for part in &message.parts {
            blocks.extend(block(part, tag, vision));
        }
        if blocks.is_empty() {
            continue;
        }
        match messages.last_mut() {
            Some((role, existing)) if *role == message.role => existing.extend(blocks),
            _ => messages.push((message.role, blocks)),
        }
    }
    let messages: Vec<Value> = messages
        .into_iter()
        .map(|(role, content)| {
            let role = match role {
                Role::User => "user",
                Role::Assistant => "assistant",
            };
            json!({"role": role, "content": content})
        })
        .collect();
    let mut body = Map::new();
    body.insert("messages".into(), Value::Array(messages));
    if !request.system.trim().is_empty() {
        body.insert("system".into(), json!([{"text": &*request.system}]));
    }
    let mut inference = Map::new();
    if let Some(max) = request.max_output_tokens {
        inference.insert("maxTokens".into(), json!(max));
    }
    if let Some(temperature) = request.temperature {
        inference.insert("temperature".into(), json!(temperature));
    }
    if !inference.is_empty() {
        body.insert("inferenceConfig".into(), Value::Object(inference));
    }
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                json!({"toolSpec": {
                    "name": tool.name,
                    "description": tool.description,
                    "inputSchema": {"json": tool.parameters},
                }})
            })
            .collect();
        body.insert("toolConfig".into(), json!({"tools": tools}));
    }
    Value::Object(body)
}

fn block(part: &Part, tag: &str, vision: bool) -> Option<Value> {
    match part {
        Part::Text { text, .. } if text.trim().is_empty() => None,
        Part::Text { text, .. } => Some(json!({"text": text})),
        Part::Thinking { text, replay } => {
            let replay = replay.as_ref().filter(|r| r.origin == tag)?;
            let signature = replay.data.get("signature").and_then(Value::as_str)?;
            Some(
                json!({"reasoningContent": {"reasoningText": {"text": text, "signature": signature}}}),
            )
        }
        Part::ToolCall {
            id,
            name,
            arguments,
            ..
        } => {
            let input = match serde_json::from_str::<Value>(arguments) {
                Ok(Value::Object(map)) => Value::Object(map),
                _ => json!({}),
            };
            Some(
                json!({"toolUse": {"toolUseId": normalize_call_id(id), "name": name, "input": input}}),
            )
        }
        Part::ToolResult {
            call_id,
            name,
            content,
            is_error,
            images,
        } => {
            let mut blocks = Vec::new();
            if vision {
                blocks.push(json!({"text": content}));
                for image in images {
                    let format = image
                        .media_type
                        .strip_prefix("image/")
                        .unwrap_or("png")
                        .replace("jpg", "jpeg");
                    blocks.push(
                        json!({"image": {"format": format, "source": {"bytes": image.base64()}}}),
                    );
                }
            } else {
                blocks.push(json!({"text": content_with_notes(content, name, images)}));
            }
            let mut result = json!({"toolUseId": normalize_call_id(call_id), "content": blocks});
            if *is_error {
                result["status"] = json!("error");
            }
            Some(json!({"toolResult": result}))
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::model::{Message, Reasoning, Replay, ToolDef};

    #[test]
    fn a_tool_turn_in_converse_shape() {
        let request = ModelRequest {
            model: "anthropic.claude-x".into(),
            system: "be brief".into(),
            messages: vec![
                Message::user("fix it"),
                Message {
                    role: Role::Assistant,
                    parts: vec![
                        Part::Thinking {
                            text: "look first".into(),
                            replay: Some(Replay {
                                origin: "bedrock/m".into(),
                                data: json!({"signature": "sig=="}),
                            }),
                        },
                        Part::ToolCall {
                            id: "tooluse_1".into(),
                            name: "read_file".into(),
                            arguments: r#"{"path":"a.py"}"#.into(),
                            replay: None,
                        },
                    ],
                },
                Message {
                    role: Role::User,
                    parts: vec![Part::ToolResult {
                        call_id: "tooluse_1".into(),
                        name: "read_file".into(),
                        content: "no such file".into(),
                        is_error: true,
                        images: Vec::new(),
                    }],
                },
                Message::user("and then?"),
            ]
            .into(),
            tools: vec![ToolDef {
                name: "read_file".into(),
                description: "Read".into(),
                parameters: json!({"type": "object"}),
            }]
            .into(),
            max_output_tokens: None,
            temperature: Some(0.5),
            reasoning: Reasoning::Default,
            seed: None,
        };
        let body = body(&request, "bedrock/m", false);
        assert_eq!(
            body,
            json!({
                "system": [{"text": "be brief"}],
                "messages": [
                    {"role": "user", "content": [{"text": "fix it"}]},
                    {"role": "assistant", "content": [
                        {"reasoningContent": {"reasoningText": {"text": "look first", "signature": "sig=="}}},
                        {"toolUse": {"toolUseId": "tooluse_1", "name": "read_file", "input": {"path": "a.py"}}}
                    ]},
                    {"role": "user", "content": [
                        {"toolResult": {"toolUseId": "tooluse_1", "content": [{"text": "no such file"}], "status": "error"}},
                        {"text": "and then?"}
                    ]}
                ],
                "inferenceConfig": {"temperature": 0.5},
                "toolConfig": {"tools": [{"toolSpec": {"name": "read_file", "description": "Read", "inputSchema": {"json": {"type": "object"}}}}]}
            })
        );
        // Another model's thinking is not sent.
        let other = super::body(&request, "bedrock/other", false);
        assert!(!other.to_string().contains("reasoningContent"));
    }
}
