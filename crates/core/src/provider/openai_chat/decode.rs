//! Decoding a Chat Completions stream: `chat.completion.chunk` payloads until `data: [DONE]`.
//!
//! The response is complete when `[DONE]` arrived or a `finish_reason` was seen (several
//! servers end the body without `[DONE]`); anything else is a cut stream, which the transport
//! retries. Usage comes in its own final chunk (`choices: []`) or on the finish chunk, so a
//! `finish_reason` never ends the reading: only `[DONE]` and the end of the body do.

use serde_json::{Map, Value, json};

use super::calls::ToolCalls;
use super::history::{count, output_with_reasoning};
use super::stream_error;
use crate::model::{Completion, Message, Part, Replay, Role, StopReason, StreamEvent, Usage};
use crate::provider::error::broken_event;
use crate::provider::http::Flow;
use crate::provider::sse::SseEvent;
use crate::provider::{Decoder, ProviderError};

/// Thinking as it arrived, with what is needed to send it back.
#[derive(Debug, Default)]
struct Thinking {
    text: String,
    /// `reasoning_content` or `reasoning`: where it came from and goes back to. `None` for
    /// thinking that cannot be echoed (Mistral's typed content parts).
    field: Option<&'static str>,
    /// OpenRouter's `reasoning_details`, merged per entry.
    details: Vec<Value>,
}

/// A chunk as the fast path reads it: fields it must see to decide, borrowed text.
#[derive(serde::Deserialize)]
struct FastChunk<'a> {
    #[serde(default, borrow)]
    choices: Vec<FastChoice<'a>>,
    #[serde(default)]
    usage: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    error: Option<serde::de::IgnoredAny>,
}

/// One choice of a [`FastChunk`].
#[derive(serde::Deserialize)]
struct FastChoice<'a> {
    #[serde(default)]
    index: Option<u64>,
    #[serde(default, borrow)]
    delta: Option<FastDelta<'a>>,
    #[serde(default)]
    message: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    error: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    finish_reason: Option<serde::de::IgnoredAny>,
}

/// The delta of a [`FastChoice`]; a `content` that is not a string makes the parse fail, so
/// typed content parts take the general path.
#[derive(serde::Deserialize)]
struct FastDelta<'a> {
    #[serde(default, borrow)]
    content: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, borrow)]
    reasoning_content: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, borrow)]
    reasoning: Option<std::borrow::Cow<'a, str>>,
    #[serde(default)]
    tool_calls: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    reasoning_details: Option<serde::de::IgnoredAny>,
}

/// Decoder for one Chat Completions response.
pub(crate) struct ChatDecoder {
    provider: String,
    key_hint: String,
    tag: String,
    text: String,
    thinking: Thinking,
    calls: ToolCalls,
    finish: Option<String>,
    usage: Option<Usage>,
    done: bool,
}

impl ChatDecoder {
    /// A decoder for a response of the model tagged `tag`.
    pub(crate) fn new(provider: &str, key_hint: &str, tag: String) -> Self {
        Self {
            provider: provider.to_string(),
            key_hint: key_hint.to_string(),
            tag,
            text: String::new(),
            thinking: Thinking::default(),
            calls: ToolCalls::default(),
            finish: None,
            usage: None,
            done: false,
        }
    }

    fn error(&self, error: &Value) -> ProviderError {
        stream_error::classify(&self.provider, &self.key_hint, error)
    }

    /// The typed fast path for the bulk of a stream: chunks that only carry text or reasoning
    /// text (no tool calls, usage, errors, typed parts). Returns false, having done nothing,
    /// for anything else, which then takes the general path over a `serde_json::Value`.
    fn fast_chunk(&mut self, chunk: &FastChunk<'_>, out: &mut Vec<StreamEvent>) -> bool {
        if chunk.error.is_some() || chunk.usage.is_some() || chunk.choices.len() > 1 {
            return false;
        }
        let Some(choice) = chunk.choices.first() else {
            return false;
        };
        if choice.index.unwrap_or(0) != 0
            || choice.message.is_some()
            || choice.error.is_some()
            || choice.finish_reason.is_some()
        {
            return false;
        }
        let Some(delta) = &choice.delta else {
            return true;
        };
        if delta.tool_calls.is_some() || delta.reasoning_details.is_some() {
            return false;
        }
        if let Some(text) = &delta.content {
            self.push_text(text, out);
        }
        for (field, value) in [
            ("reasoning_content", &delta.reasoning_content),
            ("reasoning", &delta.reasoning),
        ] {
            if let Some(text) = value
                && !text.is_empty()
            {
                self.thinking.field.get_or_insert(field);
                self.push_thinking(text, out);
                break;
            }
        }
        true
    }

    fn choice(&mut self, choice: &Value, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        // We ask for one choice; a server that sends more gets only the first one read.
        if choice.get("index").and_then(Value::as_u64).unwrap_or(0) != 0 {
            return Ok(());
        }
        if let Some(delta) = choice.get("delta").or_else(|| choice.get("message")) {
            self.delta(delta, out);
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            if reason == "error" {
                let error = choice.get("error").cloned().unwrap_or_else(|| {
                    json!({
                        "code": "server_error",
                        "message": "the provider ended the response with finish_reason \"error\"",
                    })
                });
                return Err(self.error(&error));
            }
            self.finish = Some(reason.to_string());
        }
        Ok(())
    }

    fn delta(&mut self, delta: &Value, out: &mut Vec<StreamEvent>) {
        match delta.get("content") {
            Some(Value::String(text)) => self.push_text(text, out),
            Some(Value::Array(parts)) => self.content_parts(parts, out),
            _ => {}
        }
        let mut reasoned = false;
        for field in ["reasoning_content", "reasoning"] {
            if let Some(text) = delta.get(field).and_then(Value::as_str)
                && !text.is_empty()
            {
                self.thinking.field.get_or_insert(field);
                self.push_thinking(text, out);
                reasoned = true;
                break;
            }
        }
        if let Some(Value::Array(details)) = delta.get("reasoning_details") {
            for detail in details {
                if !reasoned && let Some(text) = detail_text(detail) {
                    self.thinking.field.get_or_insert("reasoning");
                    self.push_thinking(&text, out);
                }
                merge_detail(&mut self.thinking.details, detail);
            }
        }
        if let Some(Value::Array(entries)) = delta.get("tool_calls") {
            for entry in entries {
                self.calls.apply(entry, out);
            }
        }
    }

    /// Mistral's typed content: `text` parts and `thinking` parts (text nested one level).
    fn content_parts(&mut self, parts: &[Value], out: &mut Vec<StreamEvent>) {
        for part in parts {
            match part.get("type").and_then(Value::as_str) {
                Some("text") => {
                    if let Some(text) = part.get("text").and_then(Value::as_str) {
                        self.push_text(text, out);
                    }
                }
                Some("thinking") => match part.get("thinking") {
                    Some(Value::String(text)) => self.push_thinking(text, out),
                    Some(Value::Array(inner)) => {
                        for piece in inner {
                            if let Some(text) = piece.get("text").and_then(Value::as_str) {
                                self.push_thinking(text, out);
                            }
                        }
                    }
                    _ => {}
                },
                _ => {}
            }
        }
    }

    fn push_text(&mut self, text: &str, out: &mut Vec<StreamEvent>) {
        if !text.is_empty() {
            self.text.push_str(text);
            out.push(StreamEvent::TextDelta {
                text: text.to_string(),
            });
        }
    }

    fn push_thinking(&mut self, text: &str, out: &mut Vec<StreamEvent>) {
        if !text.is_empty() {
            self.thinking.text.push_str(text);
            out.push(StreamEvent::ThinkingDelta {
                text: text.to_string(),
            });
        }
    }
}

impl Decoder for ChatDecoder {
    fn event(
        &mut self,
        event: &SseEvent,
        out: &mut Vec<StreamEvent>,
    ) -> Result<Flow, ProviderError> {
        let data = event.data.trim();
        if data.is_empty() {
            return Ok(Flow::Continue);
        }
        if data == "[DONE]" {
            self.done = true;
            return Ok(Flow::Done);
        }
        if let Ok(fast) = serde_json::from_str::<FastChunk<'_>>(data)
            && self.fast_chunk(&fast, out)
        {
            return Ok(Flow::Continue);
        }
        let chunk: Value = match serde_json::from_str(data) {
            Ok(chunk) => chunk,
            Err(_) if event.event == "error" => return Err(self.error(&json!(data))),
            // After the finish reason only usage follows: the answer is whole, and asking
            // again to learn a count would pay for the whole step twice. The usage is then
            // unknown unless it came with the finish chunk. Before it, the chunk held part
            // of the answer that no later chunk repeats: the step is requested again.
            Err(_) if self.finish.is_some() => {
                tracing::warn!(
                    provider = %self.provider,
                    "skipped a malformed chunk after the finish reason"
                );
                return Ok(Flow::Continue);
            }
            Err(err) => return Err(broken_event(&self.provider, data, &err)),
        };
        match chunk.get("error") {
            Some(error) if !error.is_null() => return Err(self.error(error)),
            _ if event.event == "error" => return Err(self.error(&chunk)),
            _ => {}
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            self.usage = Some(parse_usage(usage));
        }
        if let Some(Value::Array(choices)) = chunk.get("choices") {
            for choice in choices {
                self.choice(choice, out)?;
            }
        }
        Ok(Flow::Continue)
    }

    fn finish(&mut self) -> Result<Completion, ProviderError> {
        if !self.done && self.finish.is_none() {
            return Err(ProviderError::Network {
                provider: self.provider.clone(),
                message: "the stream ended before the response was complete (no finish_reason \
                          and no [DONE]); the request is sent again"
                    .to_string(),
            });
        }
        let mut parts = Vec::new();
        let thinking = std::mem::take(&mut self.thinking);
        if !thinking.text.is_empty() || !thinking.details.is_empty() {
            let replay = thinking.field.map(|field| {
                let mut data = Map::new();
                data.insert("field".into(), json!(field));
                if !thinking.details.is_empty() {
                    data.insert("details".into(), Value::Array(thinking.details));
                }
                Replay {
                    origin: self.tag.clone(),
                    data: Value::Object(data),
                }
            });
            parts.push(Part::Thinking {
                text: thinking.text,
                replay,
            });
        }
        if !self.text.is_empty() {
            parts.push(Part::text(std::mem::take(&mut self.text)));
        }
        let has_calls = !self.calls.is_empty();
        parts.extend(std::mem::take(&mut self.calls).into_parts(&self.tag));
        let stop = if has_calls {
            StopReason::ToolUse
        } else {
            stop_reason(self.finish.as_deref())
        };
        Ok(Completion {
            message: Message {
                role: Role::Assistant,
                parts,
            },
            usage: self.usage.unwrap_or_default(),
            stop,
        })
    }
}

/// The stop reason from `finish_reason` for a response without tool calls.
fn stop_reason(finish: Option<&str>) -> StopReason {
    match finish {
        None | Some("stop" | "end_turn" | "tool_calls" | "function_call" | "eos") => {
            StopReason::EndTurn
        }
        Some("length" | "max_tokens") => StopReason::MaxTokens,
        Some("content_filter" | "refusal" | "safety") => StopReason::Refusal,
        Some(other) => StopReason::Other(other.to_string()),
    }
}

/// Usage with `input` as uncached input: `prompt_tokens` counts cached tokens too.
fn parse_usage(usage: &Value) -> Usage {
    let prompt = count(usage.get("prompt_tokens"));
    let details = usage.get("prompt_tokens_details");
    let mut cache_read = count(details.and_then(|d| d.get("cached_tokens")));
    if cache_read == 0 {
        // DeepSeek's own names.
        cache_read = count(usage.get("prompt_cache_hit_tokens"));
    }
    let cache_write = count(details.and_then(|d| d.get("cache_write_tokens")));
    let completion = count(usage.get("completion_tokens"));
    let reasoning = count(
        usage
            .get("completion_tokens_details")
            .and_then(|d| d.get("reasoning_tokens")),
    );
    let total = count(usage.get("total_tokens"));
    Usage {
        input: prompt.saturating_sub(cache_read + cache_write),
        output: output_with_reasoning(prompt, completion, reasoning, total),
        cache_read,
        cache_write,
        reasoning,
        unreported: 0,
    }
}

/// Readable text of one `reasoning_details` entry.
fn detail_text(detail: &Value) -> Option<String> {
    ["text", "summary"]
        .iter()
        .find_map(|key| detail.get(*key).and_then(Value::as_str))
        .filter(|text| !text.is_empty())
        .map(str::to_string)
}

/// Merges a streamed `reasoning_details` fragment into the list: fragments of the same entry
/// (same `index` and `type`) have their text concatenated and other fields updated.
fn merge_detail(details: &mut Vec<Value>, fragment: &Value) {
    let Some(fragment) = fragment.as_object() else {
        return;
    };
    let same = |entry: &&mut Value| {
        entry.get("index") == fragment.get("index") && entry.get("type") == fragment.get("type")
    };
    let Some(entry) = details
        .iter_mut()
        .rev()
        .find(same)
        .and_then(Value::as_object_mut)
    else {
        details.push(Value::Object(fragment.clone()));
        return;
    };
    for (key, value) in fragment {
        match (entry.get_mut(key), value) {
            (Some(Value::String(old)), Value::String(new))
                if matches!(key.as_str(), "text" | "summary" | "data") =>
            {
                old.push_str(new);
            }
            (_, Value::Null) => {}
            _ => {
                entry.insert(key.clone(), value.clone());
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn decode(lines: &[&str]) -> (Vec<StreamEvent>, Result<Completion, ProviderError>) {
        let mut decoder = ChatDecoder::new("test", "TEST_KEY", "openai-chat/m".into());
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
        let completion = decoder.finish();
        (out, completion)
    }

    #[test]
    fn text_thinking_and_usage() {
        let (events, done) = decode(&[
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":"Think"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"Hel","reasoning_content":null}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":"stop"}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":100,"completion_tokens":20,"total_tokens":120,
                "prompt_tokens_details":{"cached_tokens":60},"completion_tokens_details":{"reasoning_tokens":5}}}"#,
            "[DONE]",
        ]);
        let done = done.unwrap();
        assert_eq!(done.message.text(), "Hello");
        assert_eq!(
            done.usage,
            Usage {
                input: 40,
                output: 20,
                cache_read: 60,
                cache_write: 0,
                reasoning: 5,
                unreported: 0,
            }
        );
        assert_eq!(done.stop, StopReason::EndTurn);
        match &done.message.parts[0] {
            Part::Thinking { text, replay } => {
                assert_eq!(text, "Think");
                let replay = replay.as_ref().unwrap();
                assert_eq!(replay.origin, "openai-chat/m");
                assert_eq!(replay.data["field"], "reasoning_content");
            }
            other => panic!("expected thinking, got {other:?}"),
        }
        assert_eq!(
            events[0],
            StreamEvent::ThinkingDelta {
                text: "Think".into()
            }
        );
        assert_eq!(events.len(), 3);
    }

    #[test]
    fn finish_reasons_map_to_stops() {
        assert_eq!(stop_reason(Some("length")), StopReason::MaxTokens);
        assert_eq!(stop_reason(Some("content_filter")), StopReason::Refusal);
        assert_eq!(stop_reason(Some("tool_calls")), StopReason::EndTurn);
        assert_eq!(
            stop_reason(Some("weird")),
            StopReason::Other("weird".into())
        );
    }

    #[test]
    fn tool_calls_decide_the_stop_even_with_finish_stop() {
        let (_, done) = decode(&[
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"ls","arguments":"{}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
        ]);
        let done = done.unwrap();
        assert_eq!(done.stop, StopReason::ToolUse);
        assert_eq!(done.message.tool_calls().count(), 1);
    }

    #[test]
    fn cut_stream_is_a_retryable_network_error() {
        let (events, done) =
            decode(&[r#"{"choices":[{"index":0,"delta":{"content":"partial"}}]}"#]);
        assert_eq!(events.len(), 1);
        let err = done.unwrap_err();
        assert!(matches!(err, ProviderError::Network { .. }));
        assert!(err.is_retryable());
    }

    #[test]
    fn finish_without_done_is_complete() {
        let (_, done) = decode(&[
            r#"{"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}"#,
        ]);
        assert_eq!(done.unwrap().message.text(), "ok");
    }

    #[test]
    fn in_stream_errors() {
        let (_, done) = decode(&[
            r#"{"choices":[{"index":0,"delta":{"content":"par"}}]}"#,
            r#"{"error":{"code":502,"message":"Upstream overloaded"},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}"#,
        ]);
        let err = done.unwrap_err();
        assert!(matches!(err, ProviderError::Server { status: 502, .. }));
        let (_, done) =
            decode(&[r#"{"choices":[{"index":0,"delta":{},"finish_reason":"error"}]}"#]);
        assert!(done.unwrap_err().is_retryable());
        let (_, done) = decode(&[
            r#"{"error":{"message":"This model's maximum context length is 4096 tokens","type":"invalid_request_error"}}"#,
        ]);
        assert!(done.unwrap_err().is_context_overflow());
        let (_, done) = decode(&["{not json"]);
        assert!(matches!(done.unwrap_err(), ProviderError::Decode { .. }));
    }

    #[test]
    fn a_malformed_chunk_retries_before_the_finish_reason_and_is_skipped_after() {
        let (_, done) = decode(&[
            r#"{"choices":[{"index":0,"delta":{"content":"Hel"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"cont"#,
        ]);
        let err = done.unwrap_err();
        assert!(err.is_retryable(), "{err:?}");
        let (_, done) = decode(&[
            r#"{"choices":[{"index":0,"delta":{"content":"Hello"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
            r#"{"choices":[],"usage":{"prompt_tok"#,
            "[DONE]",
        ]);
        let done = done.unwrap();
        assert_eq!(done.message.text(), "Hello");
        assert_eq!(done.stop, StopReason::EndTurn);
        assert!(!done.usage.or_unreported().is_known());
    }

    #[test]
    fn openrouter_reasoning_details_are_merged() {
        let (events, done) = decode(&[
            r#"{"choices":[{"index":0,"delta":{"reasoning":"Let","reasoning_details":[{"type":"reasoning.text","text":"Let","index":0,"format":"anthropic-claude-v1"}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"reasoning":" me","reasoning_details":[{"type":"reasoning.text","text":" me","index":0}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"reasoning_details":[{"type":"reasoning.text","signature":"sig","index":0}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":"stop"}]}"#,
            "[DONE]",
        ]);
        let done = done.unwrap();
        let Part::Thinking { text, replay } = &done.message.parts[0] else {
            panic!("expected thinking first");
        };
        assert_eq!(text, "Let me");
        let data = &replay.as_ref().unwrap().data;
        assert_eq!(data["field"], "reasoning");
        assert_eq!(
            data["details"],
            json!([{"type":"reasoning.text","text":"Let me","index":0,"format":"anthropic-claude-v1","signature":"sig"}])
        );
        let thinking: Vec<_> = events
            .iter()
            .filter(|e| matches!(e, StreamEvent::ThinkingDelta { .. }))
            .collect();
        assert_eq!(thinking.len(), 2);
    }

    #[test]
    fn typed_content_parts_give_text_and_unreplayable_thinking() {
        let (_, done) = decode(&[
            r#"{"choices":[{"index":0,"delta":{"content":[{"type":"thinking","thinking":[{"type":"text","text":"17*23"}]},{"type":"text","text":"3"}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"91"},"finish_reason":"stop"}]}"#,
        ]);
        let done = done.unwrap();
        assert_eq!(done.message.text(), "391");
        assert_eq!(
            done.message.parts[0],
            Part::Thinking {
                text: "17*23".into(),
                replay: None
            }
        );
    }
}
