//! What both OpenAI adapters do the same way when a conversation goes back on the wire:
//! deciding which parts came from the model being called (by their replay tag), normalising
//! tool ids that came from elsewhere, making tool arguments valid JSON, and the auth headers.
//!
//! Tool ids are normalised with [`normalize_call_id`], a pure function, so a call and its
//! result always get the same id even though they are translated separately.

use std::collections::HashSet;

use serde_json::{Value, json};

use crate::model::{Message, Part, Replay};
use crate::provider::WireConfig;
use crate::provider::ids::normalize_call_id;

/// `Authorization: Bearer KEY` when a key is set (local servers need none), then the extra
/// headers from the config, in order.
pub(crate) fn auth_headers(config: &WireConfig) -> Vec<(String, String)> {
    let mut headers = Vec::new();
    if let Some(key) = config.api_key.as_deref().filter(|k| !k.trim().is_empty()) {
        headers.push((
            "authorization".to_string(),
            format!("Bearer {}", key.trim()),
        ));
    }
    headers.extend(config.headers.iter().cloned());
    headers
}

/// Whether a part's provider state was produced by the model behind `tag`.
pub(crate) fn is_ours(replay: Option<&Replay>, tag: &str) -> bool {
    replay.is_some_and(|r| r.origin == tag)
}

/// The replay marker put on tool calls this adapter decodes: no state to send back, only the
/// origin, so later requests know the id needs no normalising.
pub(crate) fn origin_marker(tag: &str) -> Replay {
    Replay {
        origin: tag.to_string(),
        data: Value::Null,
    }
}

/// Tool ids as they go on the wire: ids of calls made by this model are kept, every other id
/// (calls from another provider, and their results) is normalised.
#[derive(Debug, Default)]
pub(crate) struct CallIds {
    ours: HashSet<String>,
}

impl CallIds {
    /// Collects the ids of the calls in `messages` that the model behind `tag` made.
    pub(crate) fn from_history<'a>(
        messages: impl IntoIterator<Item = &'a Message>,
        tag: &str,
    ) -> Self {
        let ours = messages
            .into_iter()
            .flat_map(|message| Self::ours_in(message, tag))
            .map(str::to_string)
            .collect();
        Self { ours }
    }

    /// The ids of the calls in `message` that the model behind `tag` made (what
    /// [`CallIds::from_history`] collects, one message at a time).
    pub(crate) fn ours_in<'m>(message: &'m Message, tag: &str) -> impl Iterator<Item = &'m str> {
        message.parts.iter().filter_map(move |part| match part {
            Part::ToolCall { id, replay, .. } if is_ours(replay.as_ref(), tag) => Some(id.as_str()),
            _ => None,
        })
    }

    /// Counts `id` as one of this model's calls from now on.
    pub(crate) fn insert(&mut self, id: &str) {
        self.ours.insert(id.to_string());
    }

    /// Whether `id` is sent as it is (a call this model made) rather than normalised.
    pub(crate) fn is_ours(&self, id: &str) -> bool {
        self.ours.contains(id)
    }

    /// The id to send for a call or a result.
    pub(crate) fn wire_id(&self, id: &str) -> String {
        if self.ours.contains(id) {
            id.to_string()
        } else {
            normalize_call_id(id)
        }
    }
}

/// Arguments as sent back in history. The canonical history keeps what the model streamed
/// (possibly invalid); several servers (Ollama, vLLM) parse this string and reject the whole
/// request when it is not a JSON object, which would end the run instead of letting the model
/// correct itself. So: an object is sent verbatim, nothing becomes `{}`, anything else is
/// wrapped as `{"raw_arguments": "<text>"}`.
pub(crate) fn wire_arguments(raw: &str) -> std::borrow::Cow<'_, str> {
    use std::borrow::Cow;
    if raw.trim().is_empty() {
        return Cow::Borrowed("{}");
    }
    // A syntax check without building the value: this runs for every call of the history on
    // every step.
    let object = raw.trim_start().starts_with('{')
        && serde_json::from_str::<serde::de::IgnoredAny>(raw).is_ok();
    if object {
        Cow::Borrowed(raw)
    } else {
        Cow::Owned(json!({ "raw_arguments": raw }).to_string())
    }
}

/// Tool arguments as stored in a decoded call: what arrived, with "no arguments" as `{}`.
pub(crate) fn decoded_arguments(raw: String) -> String {
    if raw.trim().is_empty() {
        "{}".to_string()
    } else {
        raw
    }
}

/// Reads a token count that servers send as a number (sometimes a float or `null`).
pub(crate) fn count(value: Option<&Value>) -> u64 {
    match value {
        Some(Value::Number(n)) => n
            .as_u64()
            .or_else(|| n.as_f64().map(|f| f.max(0.0) as u64))
            .unwrap_or(0),
        _ => 0,
    }
}

/// Some servers (xAI) report reasoning tokens outside `completion_tokens`; the total gives it
/// away. Output then gets them added, so cost (billed as output) is right everywhere.
pub(crate) fn output_with_reasoning(input: u64, output: u64, reasoning: u64, total: u64) -> u64 {
    if reasoning > 0 && total > input + output && total == input + output + reasoning {
        output + reasoning
    } else {
        output
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::model::Role;

    fn call(id: &str, origin: Option<&str>) -> Part {
        Part::ToolCall {
            id: id.to_string(),
            name: "read_file".to_string(),
            arguments: "{}".to_string(),
            replay: origin.map(origin_marker),
        }
    }

    #[test]
    fn own_ids_are_kept_foreign_ones_normalised() {
        let messages = vec![Message {
            role: Role::Assistant,
            parts: vec![
                call("functions.read:0", Some("openai-chat/m")),
                call("weird id/1", Some("anthropic/x")),
                call("plain_id", None),
            ],
        }];
        let ids = CallIds::from_history(&messages, "openai-chat/m");
        assert_eq!(ids.wire_id("functions.read:0"), "functions.read:0");
        let foreign = ids.wire_id("weird id/1");
        assert_ne!(foreign, "weird id/1");
        assert!(
            foreign
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        );
        assert_eq!(ids.wire_id("plain_id"), "plain_id");
    }

    #[test]
    fn arguments_sent_back_are_json_objects() {
        assert_eq!(wire_arguments(""), "{}");
        assert_eq!(wire_arguments(r#"{"a": 1}"#), r#"{"a": 1}"#);
        let wrapped: Value = serde_json::from_str(&wire_arguments(r#"{"a": "#)).unwrap();
        assert_eq!(wrapped["raw_arguments"], r#"{"a": "#);
        let wrapped: Value = serde_json::from_str(&wire_arguments("[1]")).unwrap();
        assert_eq!(wrapped["raw_arguments"], "[1]");
        assert_eq!(decoded_arguments(" ".into()), "{}");
    }

    #[test]
    fn auth_header_only_with_a_key() {
        let mut config = WireConfig {
            headers: vec![("x-title".into(), "versus".into())],
            ..WireConfig::default()
        };
        assert_eq!(
            auth_headers(&config),
            vec![("x-title".into(), "versus".into())]
        );
        config.api_key = Some("sk-abc".into());
        assert_eq!(auth_headers(&config)[0].1, "Bearer sk-abc");
    }

    #[test]
    fn reasoning_outside_completion_is_added() {
        assert_eq!(output_with_reasoning(291, 26, 196, 513), 222);
        assert_eq!(output_with_reasoning(100, 50, 20, 150), 50);
        assert_eq!(count(Some(&json!(3.0))), 3);
        assert_eq!(count(Some(&Value::Null)), 0);
    }
}
