//! The canonical conversation: one shape for every provider, translated by each adapter.
//!
//! Provider-specific state that must be replayed unchanged to the *same* model (Anthropic
//! thinking signatures, Gemini `thoughtSignature`s, OpenAI encrypted reasoning) travels in a
//! [`Replay`] tagged with the model that produced it. An adapter sends a replay back only when
//! the tag names the model it is talking to; otherwise it drops it (thinking text may become
//! plain text), which is how a history crosses providers safely.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// Who said a message. System text is not a message: it is [`ModelRequest::system`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The user, and tool results (which every provider treats as input to the model).
    User,
    /// The model.
    Assistant,
}

/// Opaque provider state kept for the model that produced it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Replay {
    /// `api-kind/model` of the producer, e.g. `anthropic/claude-sonnet-4-5`; see [`replay_tag`].
    pub origin: String,
    /// Whatever the adapter needs to send back (signature string, encrypted blob, item id...).
    pub data: serde_json::Value,
}

/// The tag adapters compare to decide whether a [`Replay`] may be sent back.
pub fn replay_tag(api_kind: &str, model: &str) -> String {
    format!("{api_kind}/{model}")
}

/// One piece of a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Part {
    /// Visible text.
    Text {
        /// The text.
        text: String,
        /// Provider state attached to this text (e.g. a Gemini thought signature).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        replay: Option<Replay>,
    },
    /// Reasoning the model showed (or summarised), with what is needed to replay it.
    Thinking {
        /// Readable thinking text (may be empty when only an encrypted form exists).
        text: String,
        /// Signature / encrypted content / redacted data for the same model.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        replay: Option<Replay>,
    },
    /// A tool call made by the model.
    ToolCall {
        /// Provider call id (normalised by adapters when a history crosses providers).
        id: String,
        /// Tool name as the model wrote it.
        name: String,
        /// Arguments exactly as streamed (JSON text, possibly invalid).
        arguments: String,
        /// Provider state attached to the call (e.g. a Gemini thought signature).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        replay: Option<Replay>,
    },
    /// The result of a tool call, sent back as user input.
    ToolResult {
        /// The id of the call this answers.
        call_id: String,
        /// The tool's name (Gemini matches results by name).
        name: String,
        /// What the model reads.
        content: String,
        /// Whether the tool failed (the model should correct itself).
        is_error: bool,
        /// Pictures the tool produced (read_file of an image). Each wire sends them in its own
        /// format to models that accept images, and a text note instead to the others. Left
        /// out of the log when empty, and absent in logs written before images travelled.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<Image>,
    },
}

/// A picture in the conversation: the bytes themselves, so a log replays without the file.
/// Serialised with the bytes as standard base64 (the form every provider wants on the wire).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Image {
    /// MIME type such as `image/png`.
    pub media_type: String,
    /// Raw bytes (base64 in JSON).
    #[serde(with = "base64_bytes")]
    pub data: Vec<u8>,
}

impl Image {
    /// The bytes as standard base64 with padding, as providers take inline images.
    pub fn base64(&self) -> String {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD.encode(&self.data)
    }

    /// A `data:` URL (OpenAI's `image_url` / `input_image`).
    pub fn data_url(&self) -> String {
        format!("data:{};base64,{}", self.media_type, self.base64())
    }

    /// What a model that cannot see images reads instead of this one, so it knows an image
    /// existed and that asking again will not help.
    pub fn not_sent_note(&self, tool: &str) -> String {
        let from = if tool.is_empty() {
            String::new()
        } else {
            format!(" from {tool}")
        };
        format!(
            "[versus] the image{from} ({}, {} bytes) was not sent: this model does not accept images",
            self.media_type,
            self.data.len()
        )
    }
}

/// Bytes as base64 text in JSON (session logs stay text and a third of the size of a number
/// array).
mod base64_bytes {
    use base64::Engine as _;
    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(data: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&base64::engine::general_purpose::STANDARD.encode(data))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Vec<u8>, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        base64::engine::general_purpose::STANDARD
            .decode(text.as_bytes())
            .map_err(serde::de::Error::custom)
    }
}

impl Part {
    /// Plain text without provider state.
    pub fn text(text: impl Into<String>) -> Self {
        Part::Text {
            text: text.into(),
            replay: None,
        }
    }
}

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Speaker.
    pub role: Role,
    /// Content, in order.
    pub parts: Vec<Part>,
}

impl Message {
    /// A user message with one text part.
    pub fn user(text: impl Into<String>) -> Self {
        Self {
            role: Role::User,
            parts: vec![Part::text(text)],
        }
    }

    /// The concatenated visible text (for summaries and final answers).
    pub fn text(&self) -> String {
        let mut out = String::new();
        for part in &self.parts {
            if let Part::Text { text, .. } = part {
                out.push_str(text);
            }
        }
        out
    }

    /// The tool calls in this message, in order: `(id, name, arguments)`.
    pub fn tool_calls(&self) -> impl Iterator<Item = (&str, &str, &str)> {
        self.parts.iter().filter_map(|part| match part {
            Part::ToolCall {
                id,
                name,
                arguments,
                ..
            } => Some((id.as_str(), name.as_str(), arguments.as_str())),
            _ => None,
        })
    }
}

/// A tool as offered to the model: the canonical spec reduced to what goes on the wire.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDef {
    /// Tool name.
    pub name: String,
    /// What the tool does.
    pub description: String,
    /// JSON schema of the arguments object.
    pub parameters: serde_json::Value,
}

/// How much the model may think, for providers that take a budget or an effort level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Reasoning {
    /// Provider default (nothing sent).
    #[default]
    Default,
    /// Low effort / small budget.
    Low,
    /// Medium effort.
    Medium,
    /// High effort / large budget.
    High,
}

/// The messages of a conversation, shared rather than copied: each message sits behind its own
/// `Arc`, so the agent loop hands every step's request a snapshot (one pointer per message)
/// instead of a deep copy of everything said so far, and appending never touches what earlier
/// requests still hold. Reads like a slice of [`Message`]s.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Conversation {
    messages: Vec<Arc<Message>>,
}

impl Conversation {
    /// An empty conversation.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a message (earlier snapshots are not affected).
    pub fn push(&mut self, message: Message) {
        self.messages.push(Arc::new(message));
    }

    /// Number of messages.
    pub fn len(&self) -> usize {
        self.messages.len()
    }

    /// Whether there is no message.
    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    /// The messages in order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &Message> + ExactSizeIterator + Clone {
        self.messages.iter().map(|m| m.as_ref())
    }

    /// The messages behind their shared pointers: a request encoder can recognise, with
    /// `Arc::ptr_eq`, the messages it already encoded for an earlier step of the same
    /// conversation (a message behind an `Arc` never changes).
    pub fn shared(&self) -> &[Arc<Message>] {
        &self.messages
    }

    /// Keeps the first `len` messages (the conversation as it was some steps earlier, still
    /// sharing its messages with this one).
    pub fn truncate(&mut self, len: usize) {
        self.messages.truncate(len);
    }

    /// The last message.
    pub fn last(&self) -> Option<&Message> {
        self.messages.last().map(|m| m.as_ref())
    }

    /// The messages as owned values (each unwrapped when no snapshot shares it, else copied).
    pub fn into_vec(self) -> Vec<Message> {
        self.messages
            .into_iter()
            .map(Arc::unwrap_or_clone)
            .collect()
    }
}

impl From<Vec<Message>> for Conversation {
    fn from(messages: Vec<Message>) -> Self {
        messages.into_iter().collect()
    }
}

impl FromIterator<Message> for Conversation {
    fn from_iter<I: IntoIterator<Item = Message>>(iter: I) -> Self {
        Self {
            messages: iter.into_iter().map(Arc::new).collect(),
        }
    }
}

impl<'a> IntoIterator for &'a Conversation {
    type Item = &'a Message;
    type IntoIter =
        std::iter::Map<std::slice::Iter<'a, Arc<Message>>, fn(&Arc<Message>) -> &Message>;

    fn into_iter(self) -> Self::IntoIter {
        self.messages.iter().map(|m| m.as_ref())
    }
}

impl Serialize for Conversation {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

impl<'de> Deserialize<'de> for Conversation {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Vec::<Message>::deserialize(deserializer).map(Self::from)
    }
}

/// One request to a model: everything an adapter needs to build its wire body. Everything
/// large is shared (system prompt, conversation, tool definitions), so building one per step
/// copies pointers, not text.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelRequest {
    /// Model name as the provider knows it (no provider prefix, no `#N`).
    pub model: String,
    /// System prompt.
    pub system: Arc<str>,
    /// The conversation so far.
    pub messages: Conversation,
    /// Tools offered.
    pub tools: Arc<[ToolDef]>,
    /// Cap on output tokens (`None`: adapter default; Anthropic requires one).
    pub max_output_tokens: Option<u32>,
    /// Sampling temperature (`None`: provider default).
    pub temperature: Option<f32>,
    /// Thinking effort.
    pub reasoning: Reasoning,
    /// Sampling seed (`None`: not sent). Sent by the wires whose API takes one (Chat `seed`,
    /// Gemini `generationConfig.seed`); the others have no such field.
    pub seed: Option<u64>,
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn result(images: Vec<Image>) -> Part {
        Part::ToolResult {
            call_id: "c1".into(),
            name: "read_file".into(),
            content: "[binary file, 4 bytes]".into(),
            is_error: false,
            images,
        }
    }

    #[test]
    fn images_are_base64_in_logs_and_old_logs_still_read() {
        let png = Image {
            media_type: "image/png".into(),
            data: vec![0x89, b'P', b'N', b'G'],
        };
        let json = serde_json::to_value(result(vec![png.clone()])).unwrap();
        assert_eq!(
            json["images"],
            serde_json::json!([{"media_type": "image/png", "data": "iVBORw=="}])
        );
        let back: Part = serde_json::from_value(json).unwrap();
        assert_eq!(back, result(vec![png.clone()]));
        // No images: no key, so logs without pictures are byte-for-byte what they were.
        let plain = serde_json::to_string(&result(Vec::new())).unwrap();
        assert!(!plain.contains("images"), "{plain}");
        let old = r#"{"type":"tool_result","call_id":"c1","name":"read_file","content":"[binary file, 4 bytes]","is_error":false}"#;
        assert_eq!(
            serde_json::from_str::<Part>(old).unwrap(),
            result(Vec::new())
        );
        assert_eq!(png.data_url(), "data:image/png;base64,iVBORw==");
        let bad = r#"{"type":"tool_result","call_id":"c1","name":"r","content":"","is_error":false,"images":[{"media_type":"image/png","data":"not base64!"}]}"#;
        assert!(serde_json::from_str::<Part>(bad).is_err());
    }
}
