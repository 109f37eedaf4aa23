//! Turning a recorded conversation back into a demo script (`versus replay export`), so a real
//! model's run can be replayed offline: in a bug report, a test, or a demo of the interface.
//!
//! One assistant message becomes one script line; the demo provider plays the line whose index
//! is the number of assistant messages so far, so the replay follows the same tool rounds and
//! turns as the recording. Tool results are not stored: the replay re-runs the tools.

use serde_json::{Map, Value, json};

use crate::model::{Message, Part, Role};

/// The demo script (JSON Lines, one line per assistant message) for `messages`, with a header
/// comment saying where it came from. `token_delay_ms` makes streaming visible on replay.
pub fn demo_script(messages: &[Message], origin: &str, token_delay_ms: u64) -> String {
    let mut out = format!("# demo script exported from {origin}\n");
    for message in messages.iter().filter(|m| m.role == Role::Assistant) {
        let mut line = Map::new();
        let mut say = String::new();
        let mut think = String::new();
        let mut tools = Vec::new();
        for part in &message.parts {
            match part {
                Part::Text { text, .. } => say.push_str(text),
                Part::Thinking { text, .. } => think.push_str(text),
                Part::ToolCall {
                    name, arguments, ..
                } => tools.push(match serde_json::from_str::<Value>(arguments) {
                    Ok(args @ Value::Object(_)) => json!({"name": name, "args": args}),
                    Ok(_) | Err(_) if arguments.trim().is_empty() => {
                        json!({"name": name, "args": {}})
                    }
                    _ => json!({"name": name, "raw_args": arguments}),
                }),
                Part::ToolResult { .. } => {}
            }
        }
        if !think.is_empty() {
            line.insert("think".into(), Value::String(think));
        }
        if !say.is_empty() {
            line.insert("say".into(), Value::String(say));
        }
        if !tools.is_empty() {
            line.insert("tools".into(), Value::Array(tools));
        }
        if token_delay_ms > 0 {
            line.insert("token_delay_ms".into(), json!(token_delay_ms));
        }
        out.push_str(&Value::Object(line).to_string());
        out.push('\n');
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_conversation_becomes_a_script_the_demo_provider_plays() {
        let messages = vec![
            Message::user("fix it"),
            Message {
                role: Role::Assistant,
                parts: vec![
                    Part::Thinking {
                        text: "look first".into(),
                        replay: None,
                    },
                    Part::text("Reading."),
                    Part::ToolCall {
                        id: "c1".into(),
                        name: "read_file".into(),
                        arguments: r#"{"path":"a.rs"}"#.into(),
                        replay: None,
                    },
                    Part::ToolCall {
                        id: "c2".into(),
                        name: "bash".into(),
                        arguments: "{not json".into(),
                        replay: None,
                    },
                ],
            },
            Message {
                role: Role::User,
                parts: vec![Part::ToolResult {
                    call_id: "c1".into(),
                    name: "read_file".into(),
                    content: "1 fn a() {}".into(),
                    is_error: false,
                    images: Vec::new(),
                }],
            },
            Message {
                role: Role::Assistant,
                parts: vec![Part::text("Done.")],
            },
        ];
        let script = demo_script(&messages, "session s1, openai/gpt-5", 0);
        let lines: Vec<&str> = script.lines().collect();
        assert!(lines[0].starts_with("# demo script exported from session s1"));
        assert_eq!(lines.len(), 3);
        let first: Value = serde_json::from_str(lines[1]).unwrap();
        assert_eq!(first["think"], "look first");
        assert_eq!(first["tools"][0]["args"]["path"], "a.rs");
        assert_eq!(first["tools"][1]["raw_args"], "{not json");
        let second: Value = serde_json::from_str(lines[2]).unwrap();
        assert_eq!(second, json!({"say": "Done."}));
    }
}
