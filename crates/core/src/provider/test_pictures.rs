//! The conversation every wire's image tests send: a read_file call on a PNG whose result
//! carries the picture, and the note a model without vision reads instead. One fixture, so the
//! four wires are held to the same input.

use crate::model::{Image, Message, Part, Role};

/// A read_file call on a PNG and its result carrying the picture (bytes `89 50 4E 47`,
/// base64 `iVBORw==`).
pub(crate) fn picture_turn(call_id: &str) -> Vec<Message> {
    vec![
        Message::user("Look at the logo"),
        Message {
            role: Role::Assistant,
            parts: vec![Part::ToolCall {
                id: call_id.into(),
                name: "read_file".into(),
                arguments: r#"{"path":"logo.png"}"#.into(),
                replay: None,
            }],
        },
        Message {
            role: Role::User,
            parts: vec![Part::ToolResult {
                call_id: call_id.into(),
                name: "read_file".into(),
                content: "[binary file, 4 bytes]".into(),
                is_error: false,
                images: vec![Image {
                    media_type: "image/png".into(),
                    data: vec![0x89, b'P', b'N', b'G'],
                }],
            }],
        },
    ]
}

/// What a model without vision reads in place of the picture.
pub(crate) const NOTE: &str = "[binary file, 4 bytes]\n[versus] the image from read_file (image/png, 4 bytes) was not sent: this model does not accept images";
