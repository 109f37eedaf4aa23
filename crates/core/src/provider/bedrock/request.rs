//! The Converse request body from the canonical [`ModelRequest`].
//!
//! Converse wants alternating user and assistant messages, so consecutive messages of one role
//! are merged. Tool calls go out as `toolUse` blocks (the arguments as a JSON object), results
//! as `toolResult` blocks in a user message (`status: "error"` for a failed tool; a tool's
//! pictures as `image` blocks when the model sees images, a text note otherwise). Thinking goes
//! back as `reasoningContent` with its signature only to the model that produced it.
//! `maxTokens` is sent only when set: Converse's default is the model's own maximum, and a fixed
//! number would be refused by models with a smaller one.
//!
//! Reasoning: Converse has no common field for it, so a Claude model's extended thinking goes
//! in `additionalModelRequestFields` as Anthropic's own `thinking` object, with the Messages
//! wire's budgets ([`thinking_budget`]); `maxTokens` is then raised above the budget and the
//! temperature left out (Claude refuses it with thinking), and, as on the Messages API,
//! thinking stays off for a step whose previous tool-calling answer did not start with
//! thinking. Other models get no reasoning field (each vendor's differs). Converse has no
//! seed either: `ApiKind::takes_seed` says so and recipes warn.

use serde_json::{Map, Value, json};

use crate::model::{ModelRequest, Part, Role};
use crate::provider::anthropic::request::{MIN_ANSWER_TOKENS, round3, thinking_budget};
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
    let budget = thinking_budget(request.reasoning)
        .filter(|_| is_claude(&request.model) && thinking_allowed(&messages));
    let mut body = Map::new();
    body.insert("messages".into(), Value::Array(messages));
    if !request.system.trim().is_empty() {
        body.insert("system".into(), json!([{"text": &*request.system}]));
    }
    let mut inference = Map::new();
    let max_tokens = match budget {
        // Thinking counts against maxTokens, which must exceed the budget.
        Some(budget) => Some(
            request
                .max_output_tokens
                .unwrap_or(0)
                .max(budget + MIN_ANSWER_TOKENS),
        ),
        None => request.max_output_tokens,
    };
    if let Some(max) = max_tokens {
        inference.insert("maxTokens".into(), json!(max));
    }
    if let Some(temperature) = request.temperature.filter(|_| budget.is_none()) {
        inference.insert("temperature".into(), json!(round3(temperature)));
    }
    if let Some(budget) = budget {
        body.insert(
            "additionalModelRequestFields".into(),
            json!({"thinking": {"type": "enabled", "budget_tokens": budget}}),
        );
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

/// Whether a Bedrock model id (`anthropic.claude-...`, `us.anthropic.claude-...`, an inference
/// profile ARN naming one) is a Claude model, the one family whose thinking is sent.
fn is_claude(model: &str) -> bool {
    model.to_ascii_lowercase().contains("claude")
}

/// Claude refuses thinking when the previous answer called tools without starting with
/// thinking (a history from another model, or from a step without thinking).
fn thinking_allowed(messages: &[Value]) -> bool {
    let Some(last) = messages.iter().rev().find(|m| m["role"] == "assistant") else {
        return true;
    };
    let content = last["content"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    let calls_tools = content.iter().any(|b| b.get("toolUse").is_some());
    let starts_with_thinking = content
        .first()
        .is_some_and(|b| b.get("reasoningContent").is_some());
    !calls_tools || starts_with_thinking
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
            let input = crate::provider::calls::arguments_object(arguments);
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

    #[test]
    fn claude_thinking_goes_in_the_additional_fields() {
        let mut request = ModelRequest {
            model: "us.anthropic.claude-sonnet-4-5-20250929-v1:0".into(),
            system: "".into(),
            messages: vec![Message::user("think")].into(),
            tools: Vec::new().into(),
            max_output_tokens: None,
            temperature: Some(0.3),
            reasoning: Reasoning::High,
            seed: Some(7),
        };
        let sent = body(&request, "bedrock/m", false);
        assert_eq!(
            sent["additionalModelRequestFields"],
            json!({"thinking": {"type": "enabled", "budget_tokens": 24_576}})
        );
        // Above the budget, no temperature, and no seed (Converse has none).
        assert_eq!(sent["inferenceConfig"], json!({"maxTokens": 28_672}));
        assert!(!sent.to_string().contains("seed"));
        // A model that is not Claude: nothing of it.
        request.model = "amazon.nova-pro-v1:0".into();
        let sent = body(&request, "bedrock/m", false);
        assert!(sent.get("additionalModelRequestFields").is_none(), "{sent}");
        assert_eq!(sent["inferenceConfig"], json!({"temperature": 0.3}));
        // Claude after a tool call made without thinking: off for this step.
        request.model = "anthropic.claude-opus-4-6-v1".into();
        request.messages = vec![
            Message::user("go"),
            Message {
                role: Role::Assistant,
                parts: vec![Part::ToolCall {
                    id: "t1".into(),
                    name: "read_file".into(),
                    arguments: "{}".into(),
                    replay: None,
                }],
            },
        ]
        .into();
        let sent = body(&request, "bedrock/m", false);
        assert!(sent.get("additionalModelRequestFields").is_none(), "{sent}");
    }
}
