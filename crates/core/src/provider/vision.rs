//! What every wire does with a tool's pictures when the model cannot see them: the text of the
//! result gains one note per image, so the model knows a picture existed and was withheld,
//! instead of a request the server would refuse.

use crate::model::Image;

/// `content` followed by [`Image::not_sent_note`] for each image (unchanged when none).
pub(crate) fn content_with_notes(content: &str, tool: &str, images: &[Image]) -> String {
    let mut out = content.to_string();
    for image in images {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&image.not_sent_note(tool));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_note_per_image_after_the_text() {
        let image = Image {
            media_type: "image/png".into(),
            data: vec![1, 2, 3],
        };
        assert_eq!(content_with_notes("text", "read_file", &[]), "text");
        assert_eq!(
            content_with_notes("[binary file, 3 bytes]", "read_file", &[image]),
            "[binary file, 3 bytes]\n[versus] the image from read_file (image/png, 3 bytes) was not sent: this model does not accept images"
        );
    }
}
