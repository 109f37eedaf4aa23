//! Accumulating streamed Chat Completions tool calls, with the repairs real servers need.
//!
//! The reference stream gives each call an `index`, sends `id` and `name` once, then argument
//! fragments under the same index. Servers differ: Mistral omits `index`; some servers send
//! `index: 0` for every parallel call; DashScope repeats `id: ""` on continuations; Mistral's
//! GLM repeats `name: ""`; Anthropic-backed gateways start at `index: 1`; Groq and xAI send a
//! whole call in one chunk. The rules that cover all of them:
//!
//! 1. A non-empty `id` never seen before starts a new call, whatever its `index` says.
//! 2. An `id` already seen continues that call.
//! 3. Without an `id`, the `index` names the call (the latest call that used it).
//! 4. Without either, the fragment continues the latest call.
//!
//! Calls are numbered in order of arrival; that number is the `index` of the stream events.

use std::collections::HashMap;

use serde_json::Value;

use super::history::{decoded_arguments, origin_marker};
use crate::model::{Part, StreamEvent};
use crate::provider::ids::synthesize_call_id;

/// One call being assembled.
#[derive(Debug, Clone, PartialEq)]
struct Call {
    id: String,
    name: String,
    arguments: String,
    /// `ToolCallStart` was emitted (it waits for the name).
    started: bool,
}

/// All calls of one response.
#[derive(Debug, Default)]
pub(crate) struct ToolCalls {
    calls: Vec<Call>,
    /// Server `index` -> position of the latest call that used it.
    slots: HashMap<u64, usize>,
    latest: Option<usize>,
}

impl ToolCalls {
    /// Applies one entry of `delta.tool_calls`, emitting start/argument events.
    pub(crate) fn apply(&mut self, entry: &Value, out: &mut Vec<StreamEvent>) {
        let id = entry
            .get("id")
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty());
        let index = entry.get("index").and_then(Value::as_u64);
        let function = entry.get("function");
        let name = function
            .and_then(|f| f.get("name"))
            .and_then(Value::as_str)
            .filter(|name| !name.is_empty());
        let fragment = match function.and_then(|f| f.get("arguments")) {
            Some(Value::String(text)) => text.clone(),
            // A few servers send the arguments as a JSON object instead of a string.
            Some(value @ (Value::Object(_) | Value::Array(_))) => value.to_string(),
            _ => String::new(),
        };

        let existing = match (id, index) {
            (Some(id), _) => self.calls.iter().position(|call| call.id == id),
            (None, Some(index)) => self.slots.get(&index).copied(),
            (None, None) => self.latest,
        };
        let position = match existing {
            Some(position) => position,
            None => {
                let position = self.calls.len();
                let id = match id {
                    Some(id) => id.to_string(),
                    None => synthesize_call_id(position, name.unwrap_or("tool")),
                };
                self.calls.push(Call {
                    id,
                    name: String::new(),
                    arguments: String::new(),
                    started: false,
                });
                position
            }
        };
        if let Some(index) = index {
            self.slots.insert(index, position);
        }
        self.latest = Some(position);

        let Some(call) = self.calls.get_mut(position) else {
            return;
        };
        if call.name.is_empty()
            && let Some(name) = name
        {
            call.name = name.to_string();
        }
        call.arguments.push_str(&fragment);
        if !call.started && !call.name.is_empty() {
            call.started = true;
            out.push(StreamEvent::ToolCallStart {
                index: position,
                id: call.id.clone(),
                name: call.name.clone(),
            });
            if !call.arguments.is_empty() {
                out.push(StreamEvent::ToolCallDelta {
                    index: position,
                    delta: call.arguments.clone(),
                });
            }
        } else if call.started && !fragment.is_empty() {
            out.push(StreamEvent::ToolCallDelta {
                index: position,
                delta: fragment,
            });
        }
    }

    /// Whether any call arrived.
    pub(crate) fn is_empty(&self) -> bool {
        self.calls.is_empty()
    }

    /// The calls as message parts, in order of arrival, marked with the producer's tag.
    pub(crate) fn into_parts(self, tag: &str) -> Vec<Part> {
        self.calls
            .into_iter()
            .map(|call| Part::ToolCall {
                id: call.id,
                name: call.name,
                arguments: decoded_arguments(call.arguments),
                replay: Some(origin_marker(tag)),
            })
            .collect()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(entries: &[Value]) -> (Vec<(String, String, String)>, Vec<StreamEvent>) {
        let mut calls = ToolCalls::default();
        let mut events = Vec::new();
        for entry in entries {
            calls.apply(entry, &mut events);
        }
        let parts = calls
            .into_parts("t")
            .into_iter()
            .map(|p| match p {
                Part::ToolCall {
                    id,
                    name,
                    arguments,
                    ..
                } => (id, name, arguments),
                other => panic!("unexpected {other:?}"),
            })
            .collect();
        (parts, events)
    }

    fn owned(list: &[(&str, &str, &str)]) -> Vec<(String, String, String)> {
        list.iter()
            .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
            .collect()
    }

    #[test]
    fn reference_stream_with_two_indices() {
        let (calls, events) = run(&[
            json!({"index":0,"id":"a","function":{"name":"read","arguments":""}}),
            json!({"index":1,"id":"b","function":{"name":"list","arguments":"{\"p\""}}),
            json!({"index":0,"function":{"arguments":"{\"x\":1}"}}),
            json!({"index":1,"function":{"arguments":":2}"}}),
        ]);
        assert_eq!(
            calls,
            owned(&[("a", "read", "{\"x\":1}"), ("b", "list", "{\"p\":2}")])
        );
        assert_eq!(
            events[0],
            StreamEvent::ToolCallStart {
                index: 0,
                id: "a".into(),
                name: "read".into()
            }
        );
        assert_eq!(events.len(), 5);
    }

    #[test]
    fn every_call_at_index_zero_is_split_by_id() {
        let (calls, _) = run(&[
            json!({"index":0,"id":"a","function":{"name":"read","arguments":""}}),
            json!({"index":0,"function":{"arguments":"{}"}}),
            json!({"index":0,"id":"b","function":{"name":"write","arguments":""}}),
            json!({"index":0,"function":{"arguments":"{\"y\":2}"}}),
        ]);
        assert_eq!(
            calls,
            owned(&[("a", "read", "{}"), ("b", "write", "{\"y\":2}")])
        );
    }

    #[test]
    fn missing_index_and_empty_ids_and_names() {
        let (calls, _) = run(&[
            json!({"id":"a","function":{"name":"read","arguments":"{\"p\":"}}),
            json!({"id":"","type":"function","function":{"name":"","arguments":"1}"}}),
            json!({"id":"b","function":{"name":"list","arguments":"{}"}}),
        ]);
        assert_eq!(
            calls,
            owned(&[("a", "read", "{\"p\":1}"), ("b", "list", "{}")])
        );
    }

    #[test]
    fn repeated_id_continues_and_missing_id_is_synthesised() {
        let (calls, events) = run(&[
            json!({"index":3,"id":"a","function":{"name":"read","arguments":"{"}}),
            json!({"index":3,"id":"a","function":{"arguments":"}"}}),
            json!({"index":4,"function":{"name":"list","arguments":{"p":"."}}}),
        ]);
        assert_eq!(calls[0], ("a".into(), "read".into(), "{}".into()));
        assert_eq!(calls[1].1, "list");
        assert_eq!(calls[1].2, r#"{"p":"."}"#);
        assert!(!calls[1].0.is_empty());
        assert!(events.contains(&StreamEvent::ToolCallStart {
            index: 1,
            id: calls[1].0.clone(),
            name: "list".into()
        }));
    }

    #[test]
    fn name_after_arguments_starts_late_and_flushes() {
        let (calls, events) = run(&[
            json!({"index":0,"id":"a","function":{"arguments":"{\"q\""}}),
            json!({"index":0,"function":{"name":"search","arguments":":1}"}}),
        ]);
        assert_eq!(calls, owned(&[("a", "search", "{\"q\":1}")]));
        assert_eq!(
            events,
            vec![
                StreamEvent::ToolCallStart {
                    index: 0,
                    id: "a".into(),
                    name: "search".into()
                },
                StreamEvent::ToolCallDelta {
                    index: 0,
                    delta: "{\"q\":1}".into()
                }
            ]
        );
    }

    #[test]
    fn empty_arguments_mean_an_empty_object() {
        let (calls, _) =
            run(&[json!({"index":0,"id":"a","function":{"name":"now","arguments":""}})]);
        assert_eq!(calls, owned(&[("a", "now", "{}")]));
    }
}
