//! Messages API stream events back into one assistant message.
//!
//! Content arrives as numbered blocks (`content_block_start` / `_delta` / `_stop`); each block
//! is accumulated under its index and the message is assembled in index order at the end, so
//! interleaved or repeated events (a duplicated `message_start`, pings anywhere) cannot reorder
//! or double anything. A response is complete only when `message_stop` arrived: a stream that
//! ends earlier is reported as a retryable network failure, never as a short answer.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::stream_error;
use crate::model::{Completion, Message, Part, Replay, Role, StopReason, StreamEvent, Usage};
use crate::provider::calls::{Call, ToolCalls};
use crate::provider::error::{ProviderError, broken_event};
use crate::provider::http::{Decoder, Flow};
use crate::provider::ids::synthesize_call_id;
use crate::provider::sse::SseEvent;

/// A `content_block_delta` event, borrowed from the event text where it has no escapes.
#[derive(serde::Deserialize)]
struct FastDelta<'a> {
    #[serde(rename = "type", borrow)]
    kind: std::borrow::Cow<'a, str>,
    index: u64,
    #[serde(borrow)]
    delta: FastDeltaBody<'a>,
}

/// The `delta` object of a [`FastDelta`]; only the fields the decoder reads.
#[derive(serde::Deserialize)]
struct FastDeltaBody<'a> {
    #[serde(rename = "type", borrow)]
    kind: std::borrow::Cow<'a, str>,
    #[serde(borrow, default)]
    text: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    thinking: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    signature: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    partial_json: Option<std::borrow::Cow<'a, str>>,
}

/// One content block as it is being streamed.
#[derive(Debug)]
enum Block {
    Text(String),
    Thinking {
        text: String,
        signature: String,
    },
    Redacted(String),
    ToolUse {
        /// Its position in [`AnthropicDecoder::calls`].
        position: usize,
        /// `input` from `content_block_start`, used when no `input_json_delta` follows.
        initial: Value,
    },
    /// Server-side blocks (web search results...) the canonical message has no place for.
    Ignored,
}

/// Decoder for one Messages response.
pub(crate) struct AnthropicDecoder {
    provider: String,
    key_hint: String,
    tag: String,
    blocks: BTreeMap<u64, Block>,
    calls: ToolCalls,
    usage: Usage,
    stop_reason: Option<String>,
    stopped: bool,
    /// `message_start` was malformed and skipped: its input counts must come from
    /// `message_delta`, or the usage is unknown.
    start_lost: bool,
    /// An input count was read (from either event).
    input_seen: bool,
}

impl AnthropicDecoder {
    /// A decoder whose replay state is tagged `tag` (this model's replay tag).
    pub(crate) fn new(provider: String, key_hint: String, tag: String) -> Self {
        Self {
            provider,
            key_hint,
            tag,
            blocks: BTreeMap::new(),
            calls: ToolCalls::default(),
            usage: Usage::default(),
            stop_reason: None,
            stopped: false,
            start_lost: false,
            input_seen: false,
        }
    }

    /// One event that is not valid JSON. What it held is known from its SSE name: a `ping`
    /// or `content_block_stop` carries nothing the message needs, and `message_start`'s
    /// usage is repeated by `message_delta` (read there; the usage is unknown when it is
    /// not), so those are skipped; anything else (a block's start or delta, the stop reason,
    /// an unnamed event) was content no later event repeats, and the step is requested again.
    fn broken(
        &mut self,
        event: &SseEvent,
        data: &str,
        err: &serde_json::Error,
    ) -> Result<Flow, ProviderError> {
        match event.event.as_str() {
            "ping" | "content_block_stop" => {}
            "message_start" => self.start_lost = true,
            _ => return Err(broken_event(&self.provider, data, err)),
        }
        tracing::warn!(
            provider = %self.provider,
            event = %event.event,
            "skipped a malformed event that a later one makes redundant"
        );
        Ok(Flow::Continue)
    }

    /// Takes whichever counters this usage object carries (`message_delta` may repeat or
    /// correct the input counts of `message_start`; the last value wins).
    fn read_usage(&mut self, usage: &Value) {
        let count = |key: &str| usage.get(key).and_then(Value::as_u64);
        if let Some(n) = count("input_tokens") {
            self.usage.input = n;
            self.input_seen = true;
        }
        if let Some(n) = count("output_tokens") {
            self.usage.output = n;
        }
        if let Some(n) = count("cache_read_input_tokens") {
            self.usage.cache_read = n;
        }
        if let Some(n) = count("cache_creation_input_tokens") {
            self.usage.cache_write = n;
        }
        if let Some(n) = usage
            .pointer("/output_tokens_details/thinking_tokens")
            .and_then(Value::as_u64)
        {
            self.usage.reasoning = n;
        }
    }

    fn start_block(&mut self, event: &Value, out: &mut Vec<StreamEvent>) {
        let Some(index) = event.get("index").and_then(Value::as_u64) else {
            return;
        };
        let block = event.get("content_block").unwrap_or(&Value::Null);
        let text = |key: &str| {
            block
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let new = match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                let text = text("text");
                if !text.is_empty() {
                    out.push(StreamEvent::TextDelta { text: text.clone() });
                }
                Block::Text(text)
            }
            Some("thinking") => {
                let thinking = text("thinking");
                if !thinking.is_empty() {
                    out.push(StreamEvent::ThinkingDelta {
                        text: thinking.clone(),
                    });
                }
                Block::Thinking {
                    text: thinking,
                    signature: text("signature"),
                }
            }
            Some("redacted_thinking") => Block::Redacted(text("data")),
            Some("tool_use") => {
                let name = text("name");
                let mut id = text("id");
                if id.is_empty() {
                    id = synthesize_call_id(self.calls.next(), &name);
                }
                Block::ToolUse {
                    position: self.calls.start(id, name, out),
                    initial: block.get("input").cloned().unwrap_or(Value::Null),
                }
            }
            _ => Block::Ignored,
        };
        self.blocks.insert(index, new);
    }

    fn delta(&mut self, event: &Value, out: &mut Vec<StreamEvent>) {
        let Some(index) = event.get("index").and_then(Value::as_u64) else {
            return;
        };
        let delta = event.get("delta").unwrap_or(&Value::Null);
        let field = |key: &str| delta.get(key).and_then(Value::as_str).unwrap_or_default();
        let kind = delta.get("type").and_then(Value::as_str);
        self.apply_delta(index, kind, field, out);
    }

    /// Handles a `content_block_delta` read by the typed fast path: the bulk of every stream,
    /// so it skips building a `serde_json::Value` tree (see docs/benchmarks.md).
    fn fast_delta(&mut self, event: &FastDelta<'_>, out: &mut Vec<StreamEvent>) {
        let body = &event.delta;
        let field = |key: &str| {
            let value = match key {
                "text" => &body.text,
                "thinking" => &body.thinking,
                "signature" => &body.signature,
                "partial_json" => &body.partial_json,
                _ => &None,
            };
            value.as_deref().unwrap_or_default()
        };
        self.apply_delta(event.index, Some(&body.kind), field, out);
    }

    fn apply_delta<'f>(
        &mut self,
        index: u64,
        kind: Option<&str>,
        field: impl Fn(&str) -> &'f str,
        out: &mut Vec<StreamEvent>,
    ) {
        let Some(block) = self.blocks.get_mut(&index) else {
            return;
        };
        match (kind, block) {
            (Some("text_delta"), Block::Text(text)) => {
                let piece = field("text");
                if !piece.is_empty() {
                    text.push_str(piece);
                    out.push(StreamEvent::TextDelta { text: piece.into() });
                }
            }
            (Some("thinking_delta"), Block::Thinking { text, .. }) => {
                let piece = field("thinking");
                if !piece.is_empty() {
                    text.push_str(piece);
                    out.push(StreamEvent::ThinkingDelta { text: piece.into() });
                }
            }
            (Some("signature_delta"), Block::Thinking { signature, .. }) => {
                signature.push_str(field("signature"));
            }
            (Some("input_json_delta"), Block::ToolUse { position, .. }) => {
                self.calls.append(*position, field("partial_json"), out);
            }
            // citations and unknown deltas carry nothing the canonical message keeps.
            _ => {}
        }
    }

    fn part(&mut self, block: Block) -> Option<Part> {
        match block {
            Block::Text(text) => (!text.is_empty()).then(|| Part::text(text)),
            Block::Thinking { text, signature } => {
                if text.is_empty() && signature.is_empty() {
                    return None;
                }
                let replay = (!signature.is_empty()).then(|| Replay {
                    origin: self.tag.clone(),
                    data: json!({"signature": signature}),
                });
                Some(Part::Thinking { text, replay })
            }
            Block::Redacted(data) => Some(Part::Thinking {
                text: String::new(),
                replay: Some(Replay {
                    origin: self.tag.clone(),
                    data: json!({"redacted_data": data}),
                }),
            }),
            Block::ToolUse { position, initial } => {
                let Call {
                    id,
                    name,
                    arguments: json,
                } = self.calls.take(position)?;
                let arguments = if !json.trim().is_empty() {
                    json
                } else if initial.as_object().is_some_and(|o| !o.is_empty()) {
                    initial.to_string()
                } else {
                    // No input at all means a call without arguments.
                    "{}".to_string()
                };
                Some(Part::ToolCall {
                    id,
                    name,
                    arguments,
                    replay: None,
                })
            }
            Block::Ignored => None,
        }
    }
}

impl Decoder for AnthropicDecoder {
    fn event(
        &mut self,
        event: &SseEvent,
        out: &mut Vec<StreamEvent>,
    ) -> Result<Flow, ProviderError> {
        let data = event.data.trim();
        // Some proxies end every stream OpenAI-style; the content already said whether it
        // was complete.
        if data.is_empty() || data == "[DONE]" {
            return Ok(Flow::Continue);
        }
        if event.event == "content_block_delta"
            && let Ok(fast) = serde_json::from_str::<FastDelta<'_>>(data)
            && fast.kind == "content_block_delta"
        {
            self.fast_delta(&fast, out);
            return Ok(Flow::Continue);
        }
        let value: Value = match serde_json::from_str(data) {
            Ok(value) => value,
            Err(err) => return self.broken(event, data, &err),
        };
        let kind = value
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or(event.event.as_str());
        match kind {
            "message_start" => {
                if let Some(usage) = value.pointer("/message/usage") {
                    self.read_usage(usage);
                }
            }
            "content_block_start" => self.start_block(&value, out),
            "content_block_delta" => self.delta(&value, out),
            "message_delta" => {
                if let Some(reason) = value.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(reason.to_string());
                }
                if let Some(usage) = value.get("usage") {
                    self.read_usage(usage);
                }
            }
            "message_stop" => {
                self.stopped = true;
                return Ok(Flow::Done);
            }
            "error" => return Err(stream_error(&self.provider, &self.key_hint, &value)),
            // ping, content_block_stop and future event types change nothing.
            _ => {}
        }
        Ok(Flow::Continue)
    }

    fn finish(&mut self) -> Result<Completion, ProviderError> {
        if !self.stopped {
            return Err(ProviderError::Network {
                provider: self.provider.clone(),
                message: "the stream ended before `message_stop`, so the response is incomplete; \
                          it will be requested again"
                    .to_string(),
            });
        }
        let blocks = std::mem::take(&mut self.blocks);
        let parts: Vec<Part> = blocks
            .into_values()
            .filter_map(|block| self.part(block))
            .collect();
        let has_calls = parts.iter().any(|p| matches!(p, Part::ToolCall { .. }));
        if self.start_lost && !self.input_seen {
            // The input count went with the malformed `message_start`.
            self.usage.unreported = 1;
        }
        let stop = if has_calls {
            StopReason::ToolUse
        } else {
            match self.stop_reason.as_deref() {
                None | Some("end_turn" | "stop_sequence") => StopReason::EndTurn,
                Some("max_tokens") => StopReason::MaxTokens,
                Some("refusal") => StopReason::Refusal,
                Some(other) => StopReason::Other(other.to_string()),
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
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn decoder() -> AnthropicDecoder {
        AnthropicDecoder::new(
            "anthropic".into(),
            "ANTHROPIC_API_KEY".into(),
            "anthropic/m".into(),
        )
    }

    fn feed(decoder: &mut AnthropicDecoder, lines: &[&str]) -> Vec<StreamEvent> {
        let mut out = Vec::new();
        for line in lines {
            let event = SseEvent {
                event: String::new(),
                data: (*line).to_string(),
            };
            if decoder.event(&event, &mut out).unwrap() == Flow::Done {
                break;
            }
        }
        out
    }

    #[test]
    fn blocks_assemble_in_index_order_with_signature_and_calls() {
        let mut d = decoder();
        let events = feed(
            &mut d,
            &[
                r#"{"type":"message_start","message":{"usage":{"input_tokens":10,"output_tokens":1,"cache_read_input_tokens":5}}}"#,
                r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}"#,
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"plan"}}"#,
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"SIG"}}"#,
                r#"{"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"ENC"}}"#,
                r#"{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_1","name":"read_file","input":{}}}"#,
                r#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"path\":"}}"#,
                r#"{"type":"ping"}"#,
                r#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"\"a\"}"}}"#,
                r#"{"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"","name":"list","input":{}}}"#,
                r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":40,"output_tokens_details":{"thinking_tokens":7}}}"#,
                r#"{"type":"message_stop"}"#,
            ],
        );
        assert_eq!(
            events[0],
            StreamEvent::ThinkingDelta {
                text: "plan".into()
            }
        );
        assert!(events.contains(&StreamEvent::ToolCallStart {
            index: 1,
            id: synthesize_call_id(1, "list"),
            name: "list".into()
        }));
        let done = d.finish().unwrap();
        assert_eq!(done.stop, StopReason::ToolUse);
        assert_eq!(
            done.usage,
            Usage {
                input: 10,
                output: 40,
                cache_read: 5,
                cache_write: 0,
                reasoning: 7,
                unreported: 0,
            }
        );
        let parts = &done.message.parts;
        assert_eq!(parts.len(), 4);
        assert_eq!(
            parts[0],
            Part::Thinking {
                text: "plan".into(),
                replay: Some(Replay {
                    origin: "anthropic/m".into(),
                    data: json!({"signature": "SIG"})
                })
            }
        );
        assert!(
            matches!(&parts[1], Part::Thinking { text, replay: Some(r) } if text.is_empty() && r.data["redacted_data"] == "ENC")
        );
        assert_eq!(
            done.message.tool_calls().collect::<Vec<_>>(),
            vec![
                ("toolu_1", "read_file", r#"{"path":"a"}"#),
                (synthesize_call_id(1, "list").as_str(), "list", "{}"),
            ]
        );
    }

    #[test]
    fn missing_message_stop_is_a_retryable_incomplete_stream() {
        let mut d = decoder();
        feed(
            &mut d,
            &[
                r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}"#,
            ],
        );
        let err = d.finish().unwrap_err();
        assert!(matches!(err, ProviderError::Network { .. }));
        assert!(err.is_retryable());
    }

    #[test]
    fn error_events_and_bad_json_are_errors() {
        let mut d = decoder();
        let mut out = Vec::new();
        let overloaded = SseEvent {
            event: "error".into(),
            data: r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
                .into(),
        };
        assert!(d.event(&overloaded, &mut out).unwrap_err().is_retryable());
        let done = SseEvent {
            event: String::new(),
            data: "[DONE]".into(),
        };
        assert_eq!(d.event(&done, &mut out).unwrap(), Flow::Continue);
        let garbage = SseEvent {
            event: String::new(),
            data: "{not json".into(),
        };
        assert!(matches!(
            d.event(&garbage, &mut out),
            Err(ProviderError::Decode { .. })
        ));
    }

    fn named(decoder: &mut AnthropicDecoder, events: &[(&str, &str)]) -> Result<(), ProviderError> {
        let mut out = Vec::new();
        for (name, data) in events {
            let event = SseEvent {
                event: (*name).to_string(),
                data: (*data).to_string(),
            };
            if decoder.event(&event, &mut out)? == Flow::Done {
                break;
            }
        }
        Ok(())
    }

    #[test]
    fn a_malformed_event_is_skipped_only_when_a_later_one_makes_it_redundant() {
        let text = [
            (
                "content_block_start",
                r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}"#,
            ),
        ];
        let end = |input: &str| {
            format!(
                r#"{{"type":"message_delta","delta":{{"stop_reason":"end_turn"}},"usage":{{{input}"output_tokens":3}}}}"#
            )
        };
        // A broken ping and message_start; message_delta repeats the input count.
        let mut d = decoder();
        let with_input = end(r#""input_tokens":12,"#);
        let mut events = vec![
            ("message_start", "{\"type\":\"message_st"),
            ("ping", "{oops"),
        ];
        events.extend(text);
        events.push(("content_block_stop", "{\"type\""));
        events.push(("message_delta", &with_input));
        events.push(("message_stop", r#"{"type":"message_stop"}"#));
        named(&mut d, &events).unwrap();
        let done = d.finish().unwrap();
        assert_eq!(done.message.text(), "Hi");
        assert_eq!((done.usage.input, done.usage.output), (12, 3));
        assert!(done.usage.is_known());
        // Without the repeated input count the usage is unknown, the answer still whole.
        let mut d = decoder();
        let without = end("");
        let mut events = vec![("message_start", "{broken")];
        events.extend(text);
        events.push(("message_delta", &without));
        events.push(("message_stop", r#"{"type":"message_stop"}"#));
        named(&mut d, &events).unwrap();
        let done = d.finish().unwrap();
        assert_eq!(done.message.text(), "Hi");
        assert!(!done.usage.is_known());
        // A broken delta is lost text: an error that retries the step.
        let mut d = decoder();
        let err = named(
            &mut d,
            &[
                text[0],
                (
                    "content_block_delta",
                    r#"{"type":"content_block_delta","index":0,"del"#,
                ),
            ],
        )
        .unwrap_err();
        assert!(
            matches!(
                err,
                ProviderError::Decode {
                    retryable: true,
                    ..
                }
            ),
            "{err:?}"
        );
        assert!(err.is_retryable());
    }

    #[test]
    fn stop_reasons_map_when_no_calls() {
        for (reason, stop) in [
            ("end_turn", StopReason::EndTurn),
            ("max_tokens", StopReason::MaxTokens),
            ("refusal", StopReason::Refusal),
            ("pause_turn", StopReason::Other("pause_turn".into())),
        ] {
            let mut d = decoder();
            let delta =
                format!(r#"{{"type":"message_delta","delta":{{"stop_reason":"{reason}"}}}}"#);
            feed(&mut d, &[&delta, r#"{"type":"message_stop"}"#]);
            assert_eq!(d.finish().unwrap().stop, stop);
        }
    }
}
