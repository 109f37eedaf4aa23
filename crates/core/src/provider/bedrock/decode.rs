//! ConverseStream events back into one assistant message.
//!
//! Content arrives as numbered blocks (`contentBlockStart` for a tool use, `contentBlockDelta`
//! with `text`, `toolUse.input` or `reasoningContent`, `contentBlockStop`), then `messageStop`
//! with the stop reason and `metadata` with the usage. Blocks are assembled in index order at
//! the end. A response is complete only once `messageStop` arrived: a stream that ends before
//! is a retryable network failure. Exceptions inside the stream are classified like HTTP
//! errors: throttling as a rate limit, the service's transient failures as server errors (both
//! retried), validation errors as bad requests (or context overflow when they say so).

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::model::{Completion, Message, Part, Replay, Role, StopReason, StreamEvent, Usage};
use crate::provider::calls::ToolCalls;
use crate::provider::error::{ProviderError, event_json, looks_like_context_overflow};
use crate::provider::http::{Decoder, Flow};
use crate::provider::ids::synthesize_call_id;
use crate::provider::sse::SseEvent;

#[derive(Debug)]
enum Block {
    Text(String),
    Reasoning {
        text: String,
        signature: String,
    },
    /// A tool use: its position in [`BedrockDecoder::calls`].
    ToolUse(usize),
}

/// Decoder for one ConverseStream response.
pub(crate) struct BedrockDecoder {
    provider: String,
    tag: String,
    blocks: BTreeMap<u64, Block>,
    calls: ToolCalls,
    usage: Usage,
    stop_reason: Option<String>,
}

impl BedrockDecoder {
    /// A decoder whose replay state is tagged `tag`.
    pub(crate) fn new(provider: &str, tag: String) -> Self {
        Self {
            provider: provider.to_string(),
            tag,
            blocks: BTreeMap::new(),
            calls: ToolCalls::default(),
            usage: Usage::default(),
            stop_reason: None,
        }
    }

    fn exception(&self, kind: &str, data: &str) -> ProviderError {
        let message = serde_json::from_str::<Value>(data)
            .ok()
            .and_then(|v| v.get("message").and_then(Value::as_str).map(str::to_string))
            .unwrap_or_else(|| data.chars().take(300).collect());
        let message = format!("{kind}: {message}");
        let provider = self.provider.clone();
        match kind.to_ascii_lowercase().as_str() {
            "throttlingexception" => ProviderError::RateLimited {
                provider,
                message,
                retry_after: None,
            },
            "internalserverexception"
            | "modelstreamerrorexception"
            | "serviceunavailableexception"
            | "modeltimeoutexception" => ProviderError::Server {
                provider,
                status: 0,
                message,
                retry_after: None,
            },
            _ if looks_like_context_overflow(&message) => {
                ProviderError::ContextOverflow { provider, message }
            }
            _ => ProviderError::BadRequest {
                provider,
                status: 0,
                message,
            },
        }
    }

    fn tool_block(&mut self, index: u64, id: &str, name: &str, out: &mut Vec<StreamEvent>) {
        if self.blocks.contains_key(&index) {
            return;
        }
        let id = if id.is_empty() {
            synthesize_call_id(self.calls.next(), name)
        } else {
            id.to_string()
        };
        let position = self.calls.start(id, name.to_string(), out);
        self.blocks.insert(index, Block::ToolUse(position));
    }

    fn delta(&mut self, index: u64, delta: &Value, out: &mut Vec<StreamEvent>) {
        if let Some(text) = delta.get("text").and_then(Value::as_str) {
            if let Block::Text(existing) = self
                .blocks
                .entry(index)
                .or_insert_with(|| Block::Text(String::new()))
            {
                existing.push_str(text);
                out.push(StreamEvent::TextDelta {
                    text: text.to_string(),
                });
            }
        } else if let Some(input) = delta.pointer("/toolUse/input").and_then(Value::as_str) {
            if !self.blocks.contains_key(&index) {
                self.tool_block(index, "", "", out);
            }
            if let Some(Block::ToolUse(position)) = self.blocks.get(&index) {
                self.calls.append(*position, input, out);
            }
        } else if let Some(reasoning) = delta.get("reasoningContent") {
            let block = self
                .blocks
                .entry(index)
                .or_insert_with(|| Block::Reasoning {
                    text: String::new(),
                    signature: String::new(),
                });
            if let Block::Reasoning { text, signature } = block {
                if let Some(more) = reasoning.get("text").and_then(Value::as_str) {
                    text.push_str(more);
                    out.push(StreamEvent::ThinkingDelta {
                        text: more.to_string(),
                    });
                }
                if let Some(sig) = reasoning.get("signature").and_then(Value::as_str) {
                    signature.push_str(sig);
                }
            }
        }
    }
}

impl Decoder for BedrockDecoder {
    fn event(
        &mut self,
        event: &SseEvent,
        out: &mut Vec<StreamEvent>,
    ) -> Result<Flow, ProviderError> {
        if let Some(kind) = event.event.strip_prefix("exception:") {
            return Err(self.exception(kind, &event.data));
        }
        if let Some(code) = event.event.strip_prefix("error:") {
            return Err(self.exception(code, &event.data));
        }
        let value = event_json(&self.provider, &event.data)?;
        let index = value
            .get("contentBlockIndex")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        match event.event.as_str() {
            "contentBlockStart" => {
                if let Some(tool) = value.pointer("/start/toolUse") {
                    let id = tool.get("toolUseId").and_then(Value::as_str).unwrap_or("");
                    let name = tool.get("name").and_then(Value::as_str).unwrap_or("");
                    self.tool_block(index, id, name, out);
                }
            }
            "contentBlockDelta" => {
                if let Some(delta) = value.get("delta") {
                    self.delta(index, delta, out);
                }
            }
            "messageStop" => {
                self.stop_reason = Some(
                    value
                        .get("stopReason")
                        .and_then(Value::as_str)
                        .unwrap_or("end_turn")
                        .to_string(),
                );
            }
            "metadata" => {
                if let Some(usage) = value.get("usage") {
                    let count = |key: &str| usage.get(key).and_then(Value::as_u64).unwrap_or(0);
                    self.usage.input = count("inputTokens");
                    self.usage.output = count("outputTokens");
                    self.usage.cache_read = count("cacheReadInputTokens");
                    self.usage.cache_write = count("cacheWriteInputTokens");
                }
            }
            // messageStart, contentBlockStop and anything newer carry nothing to keep.
            _ => {}
        }
        Ok(Flow::Continue)
    }

    fn finish(&mut self) -> Result<Completion, ProviderError> {
        let Some(reason) = self.stop_reason.clone() else {
            return Err(ProviderError::Network {
                provider: self.provider.clone(),
                message: "the stream ended before messageStop (the response was cut)".to_string(),
            });
        };
        let mut parts = Vec::new();
        let mut calls: Vec<(usize, Part)> = Vec::new();
        for block in std::mem::take(&mut self.blocks).into_values() {
            match block {
                Block::Text(text) if !text.is_empty() => {
                    parts.push(Part::Text { text, replay: None })
                }
                Block::Text(_) => {}
                Block::Reasoning { text, signature } => parts.push(Part::Thinking {
                    text,
                    replay: (!signature.is_empty()).then(|| Replay {
                        origin: self.tag.clone(),
                        data: json!({"signature": signature}),
                    }),
                }),
                Block::ToolUse(position) => {
                    if let Some(call) = self.calls.take(position) {
                        calls.push((
                            position,
                            Part::ToolCall {
                                id: call.id,
                                name: call.name,
                                arguments: if call.arguments.trim().is_empty() {
                                    "{}".to_string()
                                } else {
                                    call.arguments
                                },
                                replay: None,
                            },
                        ));
                    }
                }
            }
        }
        calls.sort_by_key(|(index, _)| *index);
        let has_calls = !calls.is_empty();
        parts.extend(calls.into_iter().map(|(_, part)| part));
        let stop = if has_calls {
            StopReason::ToolUse
        } else {
            match reason.as_str() {
                "end_turn" | "stop_sequence" | "tool_use" => StopReason::EndTurn,
                "max_tokens" | "model_context_window_exceeded" => StopReason::MaxTokens,
                "guardrail_intervened" | "content_filtered" => StopReason::Refusal,
                other => StopReason::Other(other.to_string()),
            }
        };
        Ok(Completion {
            message: Message {
                role: Role::Assistant,
                parts,
            },
            usage: self.usage,
            stop,
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn ev(kind: &str, data: Value) -> SseEvent {
        SseEvent {
            event: kind.into(),
            data: data.to_string(),
        }
    }

    #[test]
    fn text_reasoning_and_a_tool_use() {
        let mut d = BedrockDecoder::new("bedrock", "bedrock/m".into());
        let mut out = Vec::new();
        for event in [
            ev("messageStart", json!({"role": "assistant"})),
            ev(
                "contentBlockDelta",
                json!({"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "hmm"}}}),
            ),
            ev(
                "contentBlockDelta",
                json!({"contentBlockIndex": 0, "delta": {"reasoningContent": {"signature": "sig"}}}),
            ),
            ev(
                "contentBlockDelta",
                json!({"contentBlockIndex": 1, "delta": {"text": "Reading."}}),
            ),
            ev(
                "contentBlockStart",
                json!({"contentBlockIndex": 2, "start": {"toolUse": {"toolUseId": "tooluse_A", "name": "read_file"}}}),
            ),
            ev(
                "contentBlockDelta",
                json!({"contentBlockIndex": 2, "delta": {"toolUse": {"input": "{\"path\":"}}}),
            ),
            ev(
                "contentBlockDelta",
                json!({"contentBlockIndex": 2, "delta": {"toolUse": {"input": "\"a.py\"}"}}}),
            ),
            ev("contentBlockStop", json!({"contentBlockIndex": 2})),
            ev("messageStop", json!({"stopReason": "tool_use"})),
            ev(
                "metadata",
                json!({"usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15, "cacheReadInputTokens": 3}}),
            ),
        ] {
            d.event(&event, &mut out).unwrap();
        }
        let done = d.finish().unwrap();
        assert_eq!(done.stop, StopReason::ToolUse);
        assert_eq!(done.usage.input, 10);
        assert_eq!(done.usage.cache_read, 3);
        assert_eq!(done.message.parts.len(), 3);
        assert!(
            matches!(&done.message.parts[2], Part::ToolCall { id, arguments, .. } if id == "tooluse_A" && arguments == "{\"path\":\"a.py\"}")
        );
        assert!(
            matches!(&done.message.parts[0], Part::Thinking { replay: Some(r), .. } if r.data["signature"] == "sig")
        );
    }

    #[test]
    fn exceptions_and_cut_streams() {
        let mut d = BedrockDecoder::new("bedrock", "t".into());
        let err = d
            .event(
                &ev(
                    "exception:throttlingException",
                    json!({"message": "Too many requests"}),
                ),
                &mut Vec::new(),
            )
            .unwrap_err();
        assert!(
            err.is_retryable() && matches!(err, ProviderError::RateLimited { .. }),
            "{err}"
        );
        let err = d
            .event(
                &ev(
                    "exception:validationException",
                    json!({"message": "Input is too long for requested model."}),
                ),
                &mut Vec::new(),
            )
            .unwrap_err();
        assert!(err.is_context_overflow(), "{err}");
        let err = BedrockDecoder::new("bedrock", "t".into())
            .finish()
            .unwrap_err();
        assert!(err.is_retryable(), "{err}");
    }
}
