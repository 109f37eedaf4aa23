//! The tool calls of one streamed answer, accumulated the same way by every decoder whose
//! format sends a call's arguments in pieces (Responses, Anthropic Messages, Bedrock
//! Converse): a call is started with its id and name (a [`StreamEvent::ToolCallStart`] at its
//! position, counted from 0 in the order calls start), its argument pieces are appended as they
//! come (a [`StreamEvent::ToolCallDelta`] each; empty pieces are dropped), and a whole value
//! sent at the end, when the format has one, replaces the pieces without being shown twice.
//! Where the finished calls go in the message stays each decoder's own (Anthropic in block
//! order, Bedrock after the text). Going the other way, a recorded call's arguments become
//! the object the formats that want one send back ([`arguments_object`]).

use serde_json::Value;

use crate::model::StreamEvent;

/// A call's argument text as the JSON object Anthropic's `input`, Bedrock's `input` and
/// Gemini's `args` must be; anything else (invalid JSON, an array, a number) becomes `{}`:
/// the model already got an error result for arguments that are not an object, and the APIs
/// refuse a request whose call input is not one.
pub(crate) fn arguments_object(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(value @ Value::Object(_)) => value,
        _ => Value::Object(serde_json::Map::new()),
    }
}

/// One call as accumulated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Call {
    /// The call id (the provider's, or one the decoder made up).
    pub(crate) id: String,
    /// The tool's name.
    pub(crate) name: String,
    /// The arguments as received: the pieces joined, or the final whole value.
    pub(crate) arguments: String,
}

/// The calls of one answer, by position.
#[derive(Debug, Default)]
pub(crate) struct ToolCalls {
    calls: Vec<Option<Call>>,
}

impl ToolCalls {
    /// The position the next call started gets.
    pub(crate) fn next(&self) -> usize {
        self.calls.len()
    }

    /// Starts a call and says so; returns its position.
    pub(crate) fn start(&mut self, id: String, name: String, out: &mut Vec<StreamEvent>) -> usize {
        let position = self.calls.len();
        out.push(StreamEvent::ToolCallStart {
            index: position,
            id: id.clone(),
            name: name.clone(),
        });
        self.calls.push(Some(Call {
            id,
            name,
            arguments: String::new(),
        }));
        position
    }

    /// Appends a piece of a call's arguments and shows it.
    pub(crate) fn append(&mut self, position: usize, piece: &str, out: &mut Vec<StreamEvent>) {
        if piece.is_empty() {
            return;
        }
        if let Some(Some(call)) = self.calls.get_mut(position) {
            call.arguments.push_str(piece);
            out.push(StreamEvent::ToolCallDelta {
                index: position,
                delta: piece.to_string(),
            });
        }
    }

    /// The whole arguments, sent at the end: they are the truth, and are shown only when no
    /// piece was.
    pub(crate) fn finish(&mut self, position: usize, whole: String, out: &mut Vec<StreamEvent>) {
        if whole.is_empty() {
            return;
        }
        match self.calls.get_mut(position) {
            Some(Some(call)) if !call.arguments.is_empty() => call.arguments = whole,
            _ => self.append(position, &whole, out),
        }
    }

    /// Takes the call at `position` out (each call goes into the message once).
    pub(crate) fn take(&mut self, position: usize) -> Option<Call> {
        self.calls.get_mut(position).and_then(Option::take)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn arguments_become_an_object_or_an_empty_one() {
        use serde_json::json;
        assert_eq!(arguments_object(r#"{"path":"a"}"#), json!({"path": "a"}));
        for not_an_object in ["", "{oops", "[1,2]", "3", "\"text\"", "null"] {
            assert_eq!(
                arguments_object(not_an_object),
                json!({}),
                "{not_an_object}"
            );
        }
    }

    #[test]
    fn pieces_then_the_whole_value_shown_once() {
        let mut calls = ToolCalls::default();
        let mut out = Vec::new();
        assert_eq!(calls.next(), 0);
        let a = calls.start("c1".into(), "read_file".into(), &mut out);
        calls.append(a, "{\"path\":", &mut out);
        calls.append(a, "", &mut out);
        calls.append(a, "\"a\"}", &mut out);
        calls.finish(a, "{\"path\": \"a\"}".into(), &mut out);
        let b = calls.start("c2".into(), "ls".into(), &mut out);
        calls.finish(b, "{}".into(), &mut out);
        assert_eq!(
            out,
            [
                StreamEvent::ToolCallStart {
                    index: 0,
                    id: "c1".into(),
                    name: "read_file".into()
                },
                StreamEvent::ToolCallDelta {
                    index: 0,
                    delta: "{\"path\":".into()
                },
                StreamEvent::ToolCallDelta {
                    index: 0,
                    delta: "\"a\"}".into()
                },
                StreamEvent::ToolCallStart {
                    index: 1,
                    id: "c2".into(),
                    name: "ls".into()
                },
                StreamEvent::ToolCallDelta {
                    index: 1,
                    delta: "{}".into()
                },
            ]
        );
        assert_eq!(calls.take(0).unwrap().arguments, "{\"path\": \"a\"}");
        assert!(calls.take(0).is_none());
        assert_eq!(calls.take(1).unwrap().arguments, "{}");
    }
}
