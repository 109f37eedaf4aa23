//! A text file as lines that remember their own endings, so a patch changes only what it names.
//!
//! Models send LF lines without a BOM. Splitting the file into (text, ending) pairs lets the
//! hunks match on text alone while every untouched line, the BOM and a missing final newline
//! are written back byte for byte; new lines take the file's dominant ending.

use crate::tools::text::{self, LineEnding};

/// One line: its text (no terminator) and the terminator it had.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Line {
    /// The line without `\n` / `\r\n`.
    pub text: String,
    /// `None` only for a last line without a final newline.
    pub ending: Option<LineEnding>,
}

/// A UTF-8 text file split into lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Document {
    /// The file started with a UTF-8 BOM.
    pub bom: bool,
    /// The ending given to lines the patch adds.
    pub ending: LineEnding,
    /// The lines in order.
    pub lines: Vec<Line>,
}

/// Why a file cannot be patched as text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NotText {
    /// NUL bytes or mostly control characters.
    Binary,
    /// Not valid UTF-8; the byte offset of the first bad sequence.
    Encoding(usize),
}

impl Document {
    /// Splits file bytes into lines, refusing binary and non-UTF-8 content (patching it as text
    /// would corrupt it).
    pub fn parse(bytes: &[u8]) -> Result<Self, NotText> {
        if text::looks_binary(bytes) {
            return Err(NotText::Binary);
        }
        let (bom, body) = text::split_bom(bytes);
        let body = std::str::from_utf8(body)
            .map_err(|e| NotText::Encoding(e.valid_up_to() + if bom { 3 } else { 0 }))?;
        let ending = LineEnding::detect(body.as_bytes());
        let mut lines = Vec::new();
        let mut rest = body;
        while !rest.is_empty() {
            match rest.find('\n') {
                Some(i) => {
                    let raw = &rest[..i];
                    let (text, ending) = match raw.strip_suffix('\r') {
                        Some(t) => (t, LineEnding::CrLf),
                        None => (raw, LineEnding::Lf),
                    };
                    lines.push(Line {
                        text: text.to_string(),
                        ending: Some(ending),
                    });
                    rest = &rest[i + 1..];
                }
                None => {
                    lines.push(Line {
                        text: rest.to_string(),
                        ending: None,
                    });
                    rest = "";
                }
            }
        }
        Ok(Self { bom, ending, lines })
    }

    /// The line texts, for matching.
    pub fn texts(&self) -> Vec<&str> {
        self.lines.iter().map(|l| l.text.as_str()).collect()
    }

    /// A new line as the patch adds it: with the file's dominant ending.
    pub fn new_line(&self, text: &str) -> Line {
        Line {
            text: text.to_string(),
            ending: Some(self.ending),
        }
    }

    /// The file's bytes. Every line but the last gets an ending (a line that used to be last
    /// without a newline gets one when lines are added after it).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        if self.bom {
            out.extend_from_slice(text::BOM);
        }
        let last = self.lines.len().saturating_sub(1);
        for (i, line) in self.lines.iter().enumerate() {
            out.extend_from_slice(line.text.as_bytes());
            let ending = match line.ending {
                Some(e) => Some(e),
                None if i < last => Some(self.ending),
                None => None,
            };
            if let Some(e) = ending {
                out.extend_from_slice(e.as_str().as_bytes());
            }
        }
        out
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_byte_for_byte() {
        for bytes in [
            &b""[..],
            b"a\nb\n",
            b"a\r\nb\r\n",
            b"\xEF\xBB\xBFa\r\nb",
            b"mixed\r\nlf\nlast",
            b"\n\n",
            b"lone\rcr\n",
        ] {
            let doc = Document::parse(bytes).unwrap();
            assert_eq!(
                doc.to_bytes(),
                bytes,
                "{:?}",
                String::from_utf8_lossy(bytes)
            );
        }
    }

    #[test]
    fn detects_the_dominant_ending_and_bom() {
        let doc = Document::parse(b"\xEF\xBB\xBFa\r\nb\r\n").unwrap();
        assert!(doc.bom);
        assert_eq!(doc.ending, LineEnding::CrLf);
        assert_eq!(doc.texts(), vec!["a", "b"]);
    }

    #[test]
    fn a_former_last_line_gets_an_ending_when_followed() {
        let mut doc = Document::parse(b"a\r\nb").unwrap();
        let extra = doc.new_line("c");
        doc.lines.push(extra);
        assert_eq!(doc.to_bytes(), b"a\r\nb\r\nc\r\n");
    }

    #[test]
    fn refuses_binary_and_bad_utf8() {
        assert_eq!(Document::parse(b"a\0b"), Err(NotText::Binary));
        assert_eq!(Document::parse(b"ok\n\xff"), Err(NotText::Encoding(3)));
    }
}
