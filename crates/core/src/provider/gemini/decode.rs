//! `streamGenerateContent` chunks back into one assistant message.
//!
//! Every chunk is a whole `GenerateContentResponse`; only the first candidate is read. Text
//! pieces of the same kind are joined into one part until a piece carries a
//! `thoughtSignature`, which closes the part it came with (an empty text part that carries
//! only a signature stays a part of its own). Function calls arrive whole, or, on Vertex,
//! as a named start followed by `partialArgs` chunks and an empty terminator. Gemini reports
//! `STOP` even when it called functions, so the stop reason comes from the content. A stream
//! that ends without any `finishReason` is incomplete and retried.

use serde_json::{Map, Value, json};

use super::api_error;
use super::args::ArgsBuilder;
use crate::model::{Completion, Message, Part, Replay, Role, StopReason, StreamEvent, Usage};
use crate::provider::error::{ProviderError, broken_event, error_message_from_body};
use crate::provider::http::{Decoder, Flow};
use crate::provider::ids::synthesize_call_id;
use crate::provider::sse::SseEvent;

/// One part of the answer as it is being streamed.
#[derive(Debug)]
enum Piece {
    Text {
        text: String,
        thought: bool,
        signature: Option<String>,
    },
    Call {
        index: usize,
        id: String,
        /// Whether Gemini issued `id` (then it is sent back; synthesized ids are not).
        issued: bool,
        name: String,
        arguments: String,
        signature: Option<String>,
    },
}

/// A call whose arguments are still streaming.
#[derive(Debug)]
struct Open {
    slot: usize,
    args: ArgsBuilder,
}

/// The latest token counters (chunks repeat and grow them; absent fields keep their value).
#[derive(Debug, Default)]
struct Counts {
    prompt: u64,
    cached: u64,
    candidates: u64,
    thoughts: u64,
}

/// Decoder for one Gemini response.
pub(crate) struct GeminiDecoder {
    provider: String,
    key_hint: String,
    tag: String,
    pieces: Vec<Piece>,
    calls: usize,
    open: Option<Open>,
    counts: Counts,
    finish_reason: Option<String>,
    blocked: Option<String>,
}

impl GeminiDecoder {
    /// A decoder whose replay state is tagged `tag` (this model's replay tag).
    pub(crate) fn new(provider: String, key_hint: String, tag: String) -> Self {
        Self {
            provider,
            key_hint,
            tag,
            pieces: Vec::new(),
            calls: 0,
            open: None,
            counts: Counts::default(),
            finish_reason: None,
            blocked: None,
        }
    }

    fn chunk(&mut self, chunk: &Value, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        if chunk.get("error").is_some() {
            let message = error_message_from_body(&chunk.to_string());
            return Err(api_error(
                &self.provider,
                &self.key_hint,
                0,
                None,
                chunk,
                message,
            ));
        }
        if let Some(usage) = chunk.get("usageMetadata") {
            self.read_usage(usage);
        }
        if let Some(reason) = chunk
            .pointer("/promptFeedback/blockReason")
            .and_then(Value::as_str)
        {
            self.blocked = Some(reason.to_string());
        }
        let Some(candidate) = chunk.pointer("/candidates/0") else {
            return Ok(());
        };
        if let Some(parts) = candidate
            .pointer("/content/parts")
            .and_then(Value::as_array)
        {
            for part in parts {
                self.part(part, out);
            }
        }
        if let Some(reason) = candidate.get("finishReason").and_then(Value::as_str) {
            self.finish_reason = Some(reason.to_string());
            // Some streams never send the empty terminator of a streamed call.
            self.close(out);
        }
        Ok(())
    }

    fn read_usage(&mut self, usage: &Value) {
        let count = |key: &str| usage.get(key).and_then(Value::as_u64);
        if let Some(n) = count("promptTokenCount") {
            self.counts.prompt = n;
        }
        if let Some(n) = count("cachedContentTokenCount") {
            self.counts.cached = n;
        }
        if let Some(n) = count("candidatesTokenCount") {
            self.counts.candidates = n;
        }
        if let Some(n) = count("thoughtsTokenCount") {
            self.counts.thoughts = n;
        }
    }

    fn part(&mut self, part: &Value, out: &mut Vec<StreamEvent>) {
        let signature = part
            .get("thoughtSignature")
            .and_then(Value::as_str)
            .map(str::to_string);
        if let Some(call) = part.get("functionCall") {
            self.function_call(call, signature, out);
        } else if let Some(text) = part.get("text").and_then(Value::as_str) {
            let thought = part.get("thought").and_then(Value::as_bool) == Some(true);
            self.text(text, thought, signature, out);
        }
        // inlineData, executableCode and other part kinds have no canonical form.
    }

    fn text(
        &mut self,
        piece: &str,
        thought: bool,
        signature: Option<String>,
        out: &mut Vec<StreamEvent>,
    ) {
        if !piece.is_empty() {
            out.push(if thought {
                StreamEvent::ThinkingDelta { text: piece.into() }
            } else {
                StreamEvent::TextDelta { text: piece.into() }
            });
        } else if signature.is_none() {
            return;
        }
        if !piece.is_empty()
            && let Some(Piece::Text {
                text,
                thought: previous,
                signature: open_signature,
            }) = self.pieces.last_mut()
            && *previous == thought
            && open_signature.is_none()
        {
            text.push_str(piece);
            *open_signature = signature;
            return;
        }
        self.pieces.push(Piece::Text {
            text: piece.to_string(),
            thought,
            signature,
        });
    }

    fn function_call(
        &mut self,
        call: &Value,
        signature: Option<String>,
        out: &mut Vec<StreamEvent>,
    ) {
        let continues = call.get("willContinue").and_then(Value::as_bool) == Some(true);
        let partials = call.get("partialArgs").and_then(Value::as_array);
        if let Some(name) = call
            .get("name")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
        {
            // A named call starts a new call and ends any streaming one.
            self.close(out);
            let index = self.calls;
            self.calls += 1;
            let given = call
                .get("id")
                .and_then(Value::as_str)
                .filter(|id| !id.is_empty());
            let id = given.map_or_else(|| synthesize_call_id(index, name), str::to_string);
            out.push(StreamEvent::ToolCallStart {
                index,
                id: id.clone(),
                name: name.to_string(),
            });
            self.pieces.push(Piece::Call {
                index,
                id,
                issued: given.is_some(),
                name: name.to_string(),
                arguments: String::new(),
                signature,
            });
            self.open = Some(Open {
                slot: self.pieces.len() - 1,
                args: ArgsBuilder::new(call.get("args")),
            });
        } else if let Some(open) = &self.open
            && signature.is_some()
            && let Some(Piece::Call {
                signature: kept @ None,
                ..
            }) = self.pieces.get_mut(open.slot)
        {
            *kept = signature;
        }
        if let Some(open) = &mut self.open {
            for partial in partials.into_iter().flatten() {
                open.args.apply(partial);
            }
        }
        if !continues {
            self.close(out);
        }
    }

    /// Ends the streaming call, if any: its arguments become final and are announced.
    fn close(&mut self, out: &mut Vec<StreamEvent>) {
        let Some(open) = self.open.take() else {
            return;
        };
        let text = open.args.finish();
        if let Some(Piece::Call {
            index, arguments, ..
        }) = self.pieces.get_mut(open.slot)
        {
            out.push(StreamEvent::ToolCallDelta {
                index: *index,
                delta: text.clone(),
            });
            *arguments = text;
        }
    }

    fn replay(&self, signature: Option<String>, issued: bool) -> Option<Replay> {
        let mut data = Map::new();
        if let Some(signature) = signature {
            data.insert("thoughtSignature".into(), json!(signature));
        }
        if issued {
            data.insert("geminiId".into(), json!(true));
        }
        (!data.is_empty()).then(|| Replay {
            origin: self.tag.clone(),
            data: Value::Object(data),
        })
    }

    fn to_part(&self, piece: Piece) -> Part {
        match piece {
            Piece::Text {
                text,
                thought: true,
                signature,
            } => Part::Thinking {
                text,
                replay: self.replay(signature, false),
            },
            Piece::Text {
                text, signature, ..
            } => Part::Text {
                text,
                replay: self.replay(signature, false),
            },
            Piece::Call {
                id,
                issued,
                name,
                arguments,
                signature,
                ..
            } => Part::ToolCall {
                id,
                name,
                arguments: if arguments.trim().is_empty() {
                    "{}".to_string()
                } else {
                    arguments
                },
                replay: self.replay(signature, issued),
            },
        }
    }

    fn stop(&self, has_calls: bool) -> StopReason {
        if has_calls {
            return StopReason::ToolUse;
        }
        if self.blocked.is_some() {
            return StopReason::Refusal;
        }
        match self.finish_reason.as_deref() {
            None | Some("STOP" | "FINISH_REASON_UNSPECIFIED") => StopReason::EndTurn,
            Some("MAX_TOKENS") => StopReason::MaxTokens,
            Some(
                "SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII"
                | "IMAGE_SAFETY" | "LANGUAGE",
            ) => StopReason::Refusal,
            Some(other) => StopReason::Other(other.to_string()),
        }
    }
}

impl Decoder for GeminiDecoder {
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
        let value: Value = match serde_json::from_str(data) {
            Ok(value) => value,
            // After the finishReason the answer is whole (a later chunk could only repeat the
            // cumulative usage): skipped. Before it, the chunk held text or a call that no
            // later chunk repeats: the step is requested again.
            Err(_) if self.finish_reason.is_some() || self.blocked.is_some() => {
                tracing::warn!(
                    provider = %self.provider,
                    "skipped a malformed chunk after the finishReason"
                );
                return Ok(Flow::Continue);
            }
            Err(err) => return Err(broken_event(&self.provider, data, &err)),
        };
        match &value {
            // Error bodies (and non-SSE streams) come as arrays of responses.
            Value::Array(chunks) => {
                for chunk in chunks {
                    self.chunk(chunk, out)?;
                }
            }
            chunk => self.chunk(chunk, out)?,
        }
        Ok(Flow::Continue)
    }

    fn finish(&mut self) -> Result<Completion, ProviderError> {
        if self.finish_reason.is_none() && self.blocked.is_none() {
            return Err(ProviderError::Network {
                provider: self.provider.clone(),
                message: "the stream ended before Gemini sent a finishReason, so the response \
                          is incomplete; it will be requested again"
                    .to_string(),
            });
        }
        self.close(&mut Vec::new());
        let pieces = std::mem::take(&mut self.pieces);
        let parts: Vec<Part> = pieces.into_iter().map(|p| self.to_part(p)).collect();
        let has_calls = parts.iter().any(|p| matches!(p, Part::ToolCall { .. }));
        let counts = &self.counts;
        Ok(Completion {
            usage: Usage {
                input: counts.prompt.saturating_sub(counts.cached),
                output: counts.candidates + counts.thoughts,
                cache_read: counts.cached,
                cache_write: 0,
                reasoning: counts.thoughts,
                unreported: 0,
            },
            stop: self.stop(has_calls),
            message: Message {
                role: Role::Assistant,
                parts,
            },
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    const TAG: &str = "gemini/g";

    fn run(chunks: &[&str]) -> (Vec<StreamEvent>, Result<Completion, ProviderError>) {
        let mut decoder = GeminiDecoder::new("gemini".into(), "GEMINI_API_KEY".into(), TAG.into());
        let mut out = Vec::new();
        for chunk in chunks {
            let event = SseEvent {
                event: String::new(),
                data: (*chunk).to_string(),
            };
            if let Err(err) = decoder.event(&event, &mut out) {
                return (out, Err(err));
            }
        }
        let done = decoder.finish();
        (out, done)
    }

    fn signature(part: &Part) -> Option<&str> {
        let replay = match part {
            Part::Text { replay, .. }
            | Part::Thinking { replay, .. }
            | Part::ToolCall { replay, .. } => replay.as_ref()?,
            Part::ToolResult { .. } => return None,
        };
        assert_eq!(replay.origin, TAG);
        replay.data.get("thoughtSignature")?.as_str()
    }

    #[test]
    fn text_thoughts_signatures_and_usage() {
        let (events, done) = run(&[
            r#"{"candidates":[{"content":{"parts":[{"text":"think","thought":true}]}}]}"#,
            r#"{"candidates":[{"content":{"parts":[{"text":"ing","thought":true,"thoughtSignature":"T"}]}}]}"#,
            r#"{"candidates":[{"content":{"parts":[{"text":"Hel"}]}}],"usageMetadata":{"promptTokenCount":100}}"#,
            r#"{"candidates":[{"content":{"parts":[{"text":"lo"}]}}]}"#,
            r#"{"candidates":[{"content":{"parts":[{"text":"","thoughtSignature":"E"}]},"finishReason":"STOP"}],
               "usageMetadata":{"promptTokenCount":100,"cachedContentTokenCount":60,"candidatesTokenCount":5,"thoughtsTokenCount":20}}"#,
        ]);
        let done = done.unwrap();
        assert_eq!(events.len(), 4);
        assert_eq!(done.stop, StopReason::EndTurn);
        let parts = &done.message.parts;
        assert_eq!(parts.len(), 3);
        assert!(matches!(&parts[0], Part::Thinking { text, .. } if text == "thinking"));
        assert_eq!(signature(&parts[0]), Some("T"));
        assert!(matches!(&parts[1], Part::Text { text, replay: None } if text == "Hello"));
        assert!(matches!(&parts[2], Part::Text { text, .. } if text.is_empty()));
        assert_eq!(signature(&parts[2]), Some("E"));
        assert_eq!(
            done.usage,
            Usage {
                input: 40,
                output: 25,
                cache_read: 60,
                cache_write: 0,
                reasoning: 20,
                unreported: 0,
            }
        );
    }

    #[test]
    fn whole_and_streamed_calls_with_and_without_ids() {
        let (events, done) = run(&[
            r#"{"candidates":[{"content":{"parts":[{"functionCall":{"name":"read","args":{"p":"a"},"id":"g1"},"thoughtSignature":"S"},{"functionCall":{"name":"list"}}]}}]}"#,
            r#"{"candidates":[{"content":{"parts":[{"functionCall":{"name":"write","willContinue":true}}]}}]}"#,
            r#"{"candidates":[{"content":{"parts":[{"functionCall":{"partialArgs":[{"jsonPath":"$.path","stringValue":"x.","willContinue":true}],"willContinue":true}}]}}]}"#,
            r#"{"candidates":[{"content":{"parts":[{"functionCall":{"partialArgs":[{"jsonPath":"$.path","stringValue":"rs"}],"willContinue":true}}]}}]}"#,
            r#"{"candidates":[{"content":{"parts":[{"functionCall":{}}]},"finishReason":"STOP"}]}"#,
        ]);
        let done = done.unwrap();
        assert_eq!(done.stop, StopReason::ToolUse);
        let calls: Vec<_> = done.message.tool_calls().collect();
        let list_id = synthesize_call_id(1, "list");
        let write_id = synthesize_call_id(2, "write");
        assert_eq!(
            calls,
            vec![
                ("g1", "read", r#"{"p":"a"}"#),
                (list_id.as_str(), "list", "{}"),
                (write_id.as_str(), "write", r#"{"path":"x.rs"}"#),
            ]
        );
        let parts = &done.message.parts;
        assert_eq!(signature(&parts[0]), Some("S"));
        assert!(
            matches!(&parts[0], Part::ToolCall { replay: Some(r), .. } if r.data["geminiId"] == true)
        );
        assert!(matches!(&parts[1], Part::ToolCall { replay: None, .. }));
        assert!(events.contains(&StreamEvent::ToolCallDelta {
            index: 2,
            delta: r#"{"path":"x.rs"}"#.into()
        }));
    }

    #[test]
    fn finish_reasons_map_and_missing_finish_is_incomplete() {
        for (reason, stop) in [
            ("MAX_TOKENS", StopReason::MaxTokens),
            ("SAFETY", StopReason::Refusal),
            ("RECITATION", StopReason::Refusal),
            (
                "MALFORMED_FUNCTION_CALL",
                StopReason::Other("MALFORMED_FUNCTION_CALL".into()),
            ),
        ] {
            let chunk = format!(r#"{{"candidates":[{{"finishReason":"{reason}"}}]}}"#);
            assert_eq!(run(&[&chunk]).1.unwrap().stop, stop);
        }
        let blocked = r#"{"promptFeedback":{"blockReason":"SAFETY"}}"#;
        assert_eq!(run(&[blocked]).1.unwrap().stop, StopReason::Refusal);
        let err = run(&[r#"{"candidates":[{"content":{"parts":[{"text":"Hi"}]}}]}"#])
            .1
            .unwrap_err();
        assert!(matches!(err, ProviderError::Network { .. }));
    }

    #[test]
    fn a_malformed_chunk_retries_before_the_finish_reason_and_is_skipped_after() {
        let (_, done) = run(&[
            r#"{"candidates":[{"content":{"parts":[{"text":"Hi"}]}}]}"#,
            r#"{"candidates":[{"content":{"parts":[{"te"#,
        ]);
        assert!(done.unwrap_err().is_retryable());
        let (_, done) = run(&[
            r#"{"candidates":[{"content":{"parts":[{"text":"Hi"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":7,"candidatesTokenCount":1}}"#,
            r#"{"usageMetadata":{"promptTok"#,
        ]);
        let done = done.unwrap();
        assert_eq!(done.message.text(), "Hi");
        assert_eq!(done.usage.input, 7);
    }

    #[test]
    fn errors_inside_the_stream() {
        let (events, done) = run(&[
            r#"{"candidates":[{"content":{"parts":[{"text":"Hi"}]}}]}"#,
            r#"{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}"#,
        ]);
        assert_eq!(events.len(), 1);
        assert!(done.unwrap_err().is_retryable());
        let (_, done) = run(&[
            r#"[{"error":{"code":400,"message":"The input token count (2000000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}]"#,
        ]);
        assert!(done.unwrap_err().is_context_overflow());
        assert!(matches!(
            run(&["{oops"]).1,
            Err(ProviderError::Decode { .. })
        ));
        let done = run(&[r#"{"candidates":[{"finishReason":"STOP"}]}"#, "[DONE]"]);
        assert_eq!(done.1.unwrap().stop, StopReason::EndTurn);
    }
}
