//! Decoding a Responses stream: typed events until `response.completed`.
//!
//! Output items are tracked by `output_index` (item ids rotate on some servers) and become
//! parts in that order. Deltas are shown live; the `.done` events carry the final text or
//! arguments, which fill in what servers that skip deltas (xAI, LM Studio, truncated text
//! items) never streamed. `response.completed` is the only normal end: a body that stops
//! before it is a cut stream, retried by the transport. `response.incomplete` ends normally
//! when the cap or the content filter stopped the model (like `finish_reason: length` in
//! Chat) and is an error otherwise; `response.failed` and `error` events are errors.
//!
//! Only `function_call` items (and `custom_tool_call`, whose free-form input is kept as the
//! arguments) become tool calls: versus offers no built-in tools, so other item kinds
//! (`apply_patch_call`, `local_shell_call`, web search) are not answerable and are skipped.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde_json::{Value, json};

use super::items::{call_input, item_type, message_text, parse_usage, reasoning_text, text_field};
use crate::model::{Completion, Message, Part, Replay, Role, StopReason, StreamEvent, Usage};
use crate::provider::calls::ToolCalls;
use crate::provider::http::Flow;
use crate::provider::openai_chat::history::{decoded_arguments, origin_marker};
use crate::provider::openai_chat::stream_error;
use crate::provider::sse::SseEvent;
use crate::provider::{Decoder, ProviderError};

/// One output item being assembled.
#[derive(Debug)]
enum Slot {
    Message {
        text: String,
    },
    Reasoning {
        text: String,
        summary_index: Option<u64>,
        /// The finished item, kept when it has encrypted content to send back.
        item: Option<Value>,
    },
    /// Position in `calls`.
    Call(usize),
    Skipped,
}

/// Decoder for one Responses stream.
pub(crate) struct ResponsesDecoder {
    provider: String,
    key_hint: String,
    tag: String,
    slots: BTreeMap<u64, Slot>,
    by_item_id: HashMap<String, u64>,
    calls: ToolCalls,
    usage: Usage,
    stop: Option<StopReason>,
    refusal: bool,
    /// An event was not valid JSON and was skipped: the items' `done` events (or the
    /// output of `response.completed`) are then the whole truth, and every item must have
    /// had one, or the step is requested again (issue 25, wire finding 2; codex does the
    /// same).
    lost: Option<String>,
    /// The slots a whole item arrived for (`output_item.done`, or `response.completed`).
    finished: BTreeSet<u64>,
}

impl ResponsesDecoder {
    /// A decoder for a response of the model tagged `tag`.
    pub(crate) fn new(provider: &str, key_hint: &str, tag: String) -> Self {
        Self {
            provider: provider.to_string(),
            key_hint: key_hint.to_string(),
            tag,
            slots: BTreeMap::new(),
            by_item_id: HashMap::new(),
            calls: ToolCalls::default(),
            usage: Usage::default(),
            stop: None,
            refusal: false,
            lost: None,
            finished: BTreeSet::new(),
        }
    }

    /// The slot an event refers to: `output_index`, else a known item id, else `fallback`.
    fn key(&self, event: &Value, item: Option<&Value>, fallback: u64) -> u64 {
        if let Some(index) = event.get("output_index").and_then(Value::as_u64) {
            return index;
        }
        let id = item
            .and_then(|i| i.get("id"))
            .or_else(|| event.get("item_id"))
            .and_then(Value::as_str);
        id.and_then(|id| self.by_item_id.get(id).copied())
            .unwrap_or(fallback)
    }

    fn next_key(&self) -> u64 {
        self.slots.keys().next_back().map_or(0, |k| k + 1)
    }

    fn last_key(&self) -> u64 {
        self.slots.keys().next_back().copied().unwrap_or(0)
    }

    fn item_added(&mut self, key: u64, item: &Value, out: &mut Vec<StreamEvent>) {
        if let Some(id) = item.get("id").and_then(Value::as_str) {
            self.by_item_id.insert(id.to_string(), key);
        }
        if self.slots.contains_key(&key) {
            return;
        }
        let slot = match item_type(item) {
            "message" => Slot::Message {
                text: String::new(),
            },
            "reasoning" => Slot::Reasoning {
                text: String::new(),
                summary_index: None,
                item: None,
            },
            "function_call" | "custom_tool_call" => {
                let position = self.calls.next();
                let id = ["call_id", "id"]
                    .iter()
                    .find_map(|k| item.get(*k).and_then(Value::as_str))
                    .filter(|id| !id.is_empty())
                    .map_or_else(|| format!("call_{position}"), str::to_string);
                let name = text_field(item, "name");
                self.calls.start(id, name, out);
                self.calls.append(position, &call_input(item), out);
                Slot::Call(position)
            }
            _ => Slot::Skipped,
        };
        self.slots.insert(key, slot);
    }

    fn item_done(&mut self, key: u64, item: &Value, out: &mut Vec<StreamEvent>) {
        self.item_added(key, item, out);
        self.finished.insert(key);
        // After a skipped event the streamed text may miss a piece: the whole item wins.
        let repair = self.lost.is_some();
        let Some(slot) = self.slots.get_mut(&key) else {
            return;
        };
        match slot {
            Slot::Message { text } if text.is_empty() || repair => {
                let full = message_text(item, &mut self.refusal);
                if !full.is_empty() {
                    if text.is_empty() {
                        out.push(StreamEvent::TextDelta { text: full.clone() });
                    }
                    *text = full;
                }
            }
            Slot::Reasoning {
                text, item: kept, ..
            } => {
                if text.is_empty() || repair {
                    let full = reasoning_text(item);
                    if !full.is_empty() {
                        out.push(StreamEvent::ThinkingDelta { text: full.clone() });
                        *text = full;
                    }
                }
                let encrypted = item.get("encrypted_content").and_then(Value::as_str);
                if encrypted.is_some_and(|e| !e.is_empty()) {
                    *kept = Some(item.clone());
                }
            }
            Slot::Call(position) => {
                let position = *position;
                let last = call_input(item);
                self.calls.finish(position, last, out);
            }
            _ => {}
        }
    }

    fn text_delta(&mut self, event: &Value, out: &mut Vec<StreamEvent>) {
        let delta = text_field(event, "delta");
        let key = self.key(event, None, self.last_key());
        let slot = self.slots.entry(key).or_insert(Slot::Message {
            text: String::new(),
        });
        if let Slot::Message { text } = slot
            && !delta.is_empty()
        {
            text.push_str(&delta);
            out.push(StreamEvent::TextDelta { text: delta });
        }
    }

    fn thinking_delta(&mut self, event: &Value, out: &mut Vec<StreamEvent>) {
        let mut delta = text_field(event, "delta");
        let key = self.key(event, None, self.last_key());
        let slot = self.slots.entry(key).or_insert(Slot::Reasoning {
            text: String::new(),
            summary_index: None,
            item: None,
        });
        if let Slot::Reasoning {
            text,
            summary_index,
            ..
        } = slot
            && !delta.is_empty()
        {
            let index = event.get("summary_index").and_then(Value::as_u64);
            if index.is_some() && *summary_index != index {
                if !text.is_empty() {
                    delta.insert_str(0, "\n\n");
                }
                *summary_index = index;
            }
            text.push_str(&delta);
            out.push(StreamEvent::ThinkingDelta { text: delta });
        }
    }

    fn arguments_event(&mut self, event: &Value, done: bool, out: &mut Vec<StreamEvent>) {
        let key = self.key(event, None, self.last_key());
        let Some(Slot::Call(position)) = self.slots.get(&key) else {
            return;
        };
        let position = *position;
        if done {
            let last = ["arguments", "input"]
                .iter()
                .find_map(|k| event.get(*k).and_then(Value::as_str))
                .unwrap_or_default()
                .to_string();
            self.calls.finish(position, last, out);
        } else {
            self.calls
                .append(position, &text_field(event, "delta"), out);
        }
    }

    /// `response.completed` / `response.incomplete`: usage, stop, and the output items when
    /// no item events were streamed.
    fn end(&mut self, response: &Value, out: &mut Vec<StreamEvent>) {
        if let Some(usage) = response.get("usage").filter(|u| u.is_object()) {
            self.usage = parse_usage(usage);
        }
        if (self.slots.is_empty() || self.lost.is_some())
            && let Some(Value::Array(items)) = response.get("output")
        {
            for (key, item) in (0u64..).zip(items) {
                self.item_done(key, item, out);
            }
        }
    }

    fn error(&self, error: &Value) -> ProviderError {
        stream_error::classify(&self.provider, &self.key_hint, error)
    }
}

impl Decoder for ResponsesDecoder {
    fn event(
        &mut self,
        event: &SseEvent,
        out: &mut Vec<StreamEvent>,
    ) -> Result<Flow, ProviderError> {
        let data = event.data.trim();
        if data.is_empty() || data == "[DONE]" {
            return Ok(Flow::Continue);
        }
        let payload: Value = match serde_json::from_str(data) {
            Ok(payload) => payload,
            Err(err) => {
                // Every delta, and every item, is carried whole again by a later event
                // (`output_item.done`, `response.completed`): skipped here, checked in
                // `finish`. A lost `response.completed` is a stream without its end.
                tracing::warn!(
                    provider = %self.provider,
                    event = %event.event,
                    "skipped a malformed event; the item's done event carries it whole"
                );
                if self.lost.is_none() {
                    self.lost = Some(format!(
                        "an event is not valid JSON ({err}); it began with: {}",
                        data.chars().take(160).collect::<String>()
                    ));
                }
                return Ok(Flow::Continue);
            }
        };
        let kind = payload
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or(event.event.as_str());
        match kind {
            "response.output_item.added" | "response.output_item.done" => {
                let item = payload.get("item").cloned().unwrap_or(Value::Null);
                if kind.ends_with("added") {
                    let key = self.key(&payload, Some(&item), self.next_key());
                    self.item_added(key, &item, out);
                } else {
                    let key = self.key(&payload, Some(&item), self.next_key());
                    self.item_done(key, &item, out);
                }
            }
            "response.output_text.delta" => self.text_delta(&payload, out),
            "response.refusal.delta" => {
                self.refusal = true;
                self.text_delta(&payload, out);
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                self.thinking_delta(&payload, out);
            }
            "response.function_call_arguments.delta" | "response.custom_tool_call_input.delta" => {
                self.arguments_event(&payload, false, out);
            }
            "response.function_call_arguments.done" | "response.custom_tool_call_input.done" => {
                self.arguments_event(&payload, true, out);
            }
            "response.completed" => {
                let response = payload.get("response").cloned().unwrap_or(Value::Null);
                self.end(&response, out);
                self.stop.get_or_insert(StopReason::EndTurn);
                return Ok(Flow::Done);
            }
            "response.incomplete" => {
                let response = payload.get("response").cloned().unwrap_or(Value::Null);
                let reason = response
                    .pointer("/incomplete_details/reason")
                    .and_then(Value::as_str)
                    .unwrap_or("unknown");
                let stop = match reason {
                    "max_output_tokens" => StopReason::MaxTokens,
                    "content_filter" => StopReason::Refusal,
                    other => {
                        return Err(ProviderError::Stream {
                            provider: self.provider.clone(),
                            message: format!(
                                "the response stopped early ({other}); send the request again \
                                 or shorten the conversation"
                            ),
                        });
                    }
                };
                self.end(&response, out);
                self.stop = Some(stop);
                return Ok(Flow::Done);
            }
            "response.failed" => {
                let error = payload
                    .pointer("/response/error")
                    .filter(|e| !e.is_null())
                    .cloned()
                    .unwrap_or_else(|| json!({"message": "the response failed without a reason"}));
                return Err(self.error(&error));
            }
            "error" => return Err(self.error(&payload)),
            _ => {}
        }
        Ok(Flow::Continue)
    }

    fn finish(&mut self) -> Result<Completion, ProviderError> {
        let Some(stop) = self.stop.take() else {
            return Err(ProviderError::Network {
                provider: self.provider.clone(),
                message: "the stream ended before response.completed; the request is sent again"
                    .to_string(),
            });
        };
        if let Some(lost) = &self.lost {
            let unfinished = self
                .slots
                .iter()
                .any(|(key, slot)| !matches!(slot, Slot::Skipped) && !self.finished.contains(key));
            if unfinished {
                return Err(ProviderError::Decode {
                    provider: self.provider.clone(),
                    message: format!(
                        "{lost}; no later event carried that item whole, so the step is \
                         requested again"
                    ),
                    retryable: true,
                });
            }
        }
        let mut calls = std::mem::take(&mut self.calls);
        let mut parts = Vec::new();
        for slot in std::mem::take(&mut self.slots).into_values() {
            match slot {
                Slot::Message { text } if !text.is_empty() => parts.push(Part::text(text)),
                Slot::Reasoning { text, item, .. } if !text.is_empty() || item.is_some() => {
                    parts.push(Part::Thinking {
                        text,
                        replay: item.map(|data| Replay {
                            origin: self.tag.clone(),
                            data,
                        }),
                    });
                }
                Slot::Call(position) => {
                    if let Some(call) = calls.take(position) {
                        parts.push(Part::ToolCall {
                            id: call.id,
                            name: call.name,
                            arguments: decoded_arguments(call.arguments),
                            replay: Some(origin_marker(&self.tag)),
                        });
                    }
                }
                _ => {}
            }
        }
        let has_calls = parts.iter().any(|p| matches!(p, Part::ToolCall { .. }));
        let stop = if has_calls {
            StopReason::ToolUse
        } else if self.refusal && stop == StopReason::EndTurn {
            StopReason::Refusal
        } else {
            stop
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

    const TAG: &str = "openai-responses/gpt-5";

    fn decode(lines: &[&str]) -> (Vec<StreamEvent>, Result<Completion, ProviderError>) {
        let mut decoder = ResponsesDecoder::new("openai", "OPENAI_API_KEY", TAG.into());
        let mut out = Vec::new();
        for line in lines {
            let event = SseEvent {
                event: String::new(),
                data: (*line).to_string(),
            };
            match decoder.event(&event, &mut out) {
                Ok(Flow::Done) => break,
                Ok(Flow::Continue) => {}
                Err(err) => return (out, Err(err)),
            }
        }
        let done = decoder.finish();
        (out, done)
    }

    const COMPLETED: &str = r#"{"type":"response.completed","response":{"usage":{"input_tokens":100,"input_tokens_details":{"cached_tokens":30},"output_tokens":40,"output_tokens_details":{"reasoning_tokens":12},"total_tokens":140}}}"#;

    #[test]
    fn reasoning_text_and_call_in_output_order() {
        let (events, done) = decode(&[
            r#"{"type":"response.output_item.added","output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}}"#,
            r#"{"type":"response.reasoning_summary_text.delta","output_index":0,"summary_index":0,"delta":"Plan"}"#,
            r#"{"type":"response.reasoning_summary_text.delta","output_index":0,"summary_index":1,"delta":"More"}"#,
            r#"{"type":"response.output_item.done","output_index":0,"item":{"id":"rs_1","type":"reasoning","encrypted_content":"gAAA","summary":[{"type":"summary_text","text":"Plan"},{"type":"summary_text","text":"More"}]}}"#,
            r#"{"type":"response.output_item.added","output_index":1,"item":{"id":"msg_1","type":"message","content":[]}}"#,
            r#"{"type":"response.output_text.delta","output_index":1,"delta":"Sure."}"#,
            r#"{"type":"response.output_item.added","output_index":2,"item":{"id":"fc_1","type":"function_call","call_id":"call_1","name":"ls","arguments":""}}"#,
            r#"{"type":"response.function_call_arguments.delta","output_index":2,"delta":"{\"p\":"}"#,
            r#"{"type":"response.function_call_arguments.delta","output_index":2,"delta":"1}"}"#,
            r#"{"type":"response.function_call_arguments.done","output_index":2,"arguments":"{\"p\":1}"}"#,
            COMPLETED,
        ]);
        let done = done.unwrap();
        assert_eq!(done.stop, StopReason::ToolUse);
        assert_eq!(
            done.usage,
            Usage {
                input: 70,
                output: 40,
                cache_read: 30,
                cache_write: 0,
                reasoning: 12,
                unreported: 0,
            }
        );
        let Part::Thinking { text, replay } = &done.message.parts[0] else {
            panic!("reasoning first");
        };
        assert_eq!(text, "Plan\n\nMore");
        let replay = replay.as_ref().unwrap();
        assert_eq!(replay.origin, TAG);
        assert_eq!(replay.data["encrypted_content"], "gAAA");
        assert_eq!(replay.data["id"], "rs_1");
        assert_eq!(done.message.parts[1], Part::text("Sure."));
        assert_eq!(
            done.message.tool_calls().collect::<Vec<_>>(),
            vec![("call_1", "ls", "{\"p\":1}")]
        );
        assert!(events.contains(&StreamEvent::ToolCallStart {
            index: 0,
            id: "call_1".into(),
            name: "ls".into()
        }));
        assert!(events.contains(&StreamEvent::ThinkingDelta {
            text: "\n\nMore".into()
        }));
    }

    #[test]
    fn a_malformed_event_is_skipped_when_the_item_arrives_whole_and_retried_when_not() {
        let added = r#"{"type":"response.output_item.added","output_index":0,"item":{"id":"msg_1","type":"message","content":[]}}"#;
        let delta = r#"{"type":"response.output_text.delta","output_index":0,"delta":"Hel"}"#;
        let broken = r#"{"type":"response.output_text.delta","output_index":0,"del"#;
        let done = r#"{"type":"response.output_item.done","output_index":0,"item":{"id":"msg_1","type":"message","content":[{"type":"output_text","text":"Hello!"}]}}"#;
        let completed_with_output = r#"{"type":"response.completed","response":{"output":[{"id":"msg_1","type":"message","content":[{"type":"output_text","text":"Hello!"}]}],"usage":{"input_tokens":5,"output_tokens":2}}}"#;
        // The broken delta is made redundant by the item's done event.
        let (_, result) = decode(&[added, delta, broken, done, COMPLETED]);
        assert_eq!(result.unwrap().message.text(), "Hello!");
        // A broken done event is made redundant by the completed response's output.
        let (_, result) = decode(&[added, delta, &done[..40], completed_with_output]);
        assert_eq!(result.unwrap().message.text(), "Hello!");
        // Nothing later carries the item whole: the step is requested again.
        let (_, result) = decode(&[added, delta, broken, COMPLETED]);
        let err = result.unwrap_err();
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
    }

    #[test]
    fn whole_items_without_deltas() {
        let (events, done) = decode(&[
            r#"{"type":"response.output_item.done","item":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hello"}]}}"#,
            r#"{"type":"response.output_item.added","output_index":1,"item":{"type":"function_call","call_id":"c","name":"f","arguments":"{\"a\":1}"}}"#,
            r#"{"type":"response.output_item.done","output_index":1,"item":{"type":"function_call","call_id":"c","name":"f","arguments":"{\"a\":1}"}}"#,
            r#"{"type":"response.completed","response":{}}"#,
        ]);
        let done = done.unwrap();
        assert_eq!(done.message.text(), "hello");
        assert_eq!(
            done.message.tool_calls().collect::<Vec<_>>(),
            vec![("c", "f", "{\"a\":1}")]
        );
        let deltas = events
            .iter()
            .filter(|e| matches!(e, StreamEvent::ToolCallDelta { .. }))
            .count();
        assert_eq!(deltas, 1);
    }

    #[test]
    fn output_rebuilt_from_completed_when_no_items_streamed() {
        let (_, done) = decode(&[
            r#"{"type":"response.completed","response":{"output":[{"type":"function_call","call_id":"c9","name":"g","arguments":""}]}}"#,
        ]);
        let done = done.unwrap();
        assert_eq!(
            done.message.tool_calls().collect::<Vec<_>>(),
            vec![("c9", "g", "{}")]
        );
    }

    #[test]
    fn incomplete_failed_and_error_events() {
        let (_, done) = decode(&[
            r#"{"type":"response.output_text.delta","output_index":0,"delta":"long"}"#,
            r#"{"type":"response.incomplete","response":{"incomplete_details":{"reason":"max_output_tokens"}}}"#,
        ]);
        assert_eq!(done.unwrap().stop, StopReason::MaxTokens);
        let (_, done) = decode(&[
            r#"{"type":"response.failed","response":{"error":{"code":"server_error","message":"boom"}}}"#,
        ]);
        assert!(done.unwrap_err().is_retryable());
        let (_, done) = decode(&[
            r#"{"type":"error","error":{"type":"invalid_request_error","code":"context_length_exceeded","message":"Your input exceeds the context window of this model."}}"#,
        ]);
        assert!(done.unwrap_err().is_context_overflow());
        let (_, done) = decode(&[r#"{"type":"response.output_text.delta","delta":"cut"}"#]);
        let err = done.unwrap_err();
        assert!(matches!(err, ProviderError::Network { .. }));
    }

    #[test]
    fn reasoning_without_encrypted_content_is_not_replayable() {
        let (_, done) = decode(&[
            r#"{"type":"response.output_item.done","output_index":0,"item":{"type":"reasoning","summary":[],"content":[{"type":"reasoning_text","text":"local thoughts"}]}}"#,
            r#"{"type":"response.completed","response":{}}"#,
        ]);
        assert_eq!(
            done.unwrap().message.parts,
            vec![Part::Thinking {
                text: "local thoughts".into(),
                replay: None
            }]
        );
    }
}
