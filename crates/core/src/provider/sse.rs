//! Server-sent events framing: bytes in, `(event, data)` pairs out.
//!
//! Bytes are buffered until a line is complete, so a UTF-8 character split across network
//! chunks is decoded whole. Lines may end in `\n`, `\r\n` or `\r` (Gemini separates events
//! with CRLF). Comments (`: keep-alive`, `: OPENROUTER PROCESSING`) and `id:`/`retry:` fields
//! are skipped. A final event without its blank line is still delivered by [`SseParser::finish`].

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, empty when absent.
    pub event: String,
    /// The `data:` lines joined with `\n`.
    pub data: String,
}

/// Incremental SSE parser.
#[derive(Debug, Default)]
pub struct SseParser {
    buffer: Vec<u8>,
    event: String,
    data: String,
    has_data: bool,
    skip_lf: bool,
}

impl SseParser {
    /// A parser at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds bytes; complete events are appended to `out`. Line ends are found with memchr,
    /// so long `data:` lines are copied in one go, not byte by byte.
    pub fn feed(&mut self, mut bytes: &[u8], out: &mut Vec<SseEvent>) {
        while !bytes.is_empty() {
            if self.skip_lf {
                self.skip_lf = false;
                if bytes[0] == b'\n' {
                    bytes = &bytes[1..];
                    continue;
                }
            }
            match memchr::memchr2(b'\n', b'\r', bytes) {
                Some(pos) => {
                    self.buffer.extend_from_slice(&bytes[..pos]);
                    self.skip_lf = bytes[pos] == b'\r';
                    self.end_line(out);
                    bytes = &bytes[pos + 1..];
                }
                None => {
                    self.buffer.extend_from_slice(bytes);
                    break;
                }
            }
        }
    }

    /// Ends the stream: a pending line and event are delivered.
    pub fn finish(&mut self, out: &mut Vec<SseEvent>) {
        if !self.buffer.is_empty() {
            self.end_line(out);
        }
        self.dispatch(out);
    }

    fn end_line(&mut self, out: &mut Vec<SseEvent>) {
        if self.buffer.is_empty() {
            self.dispatch(out);
            return;
        }
        // Reuse the line buffer's allocation for the next line.
        let mut line = std::mem::take(&mut self.buffer);
        self.field(&line);
        line.clear();
        self.buffer = line;
    }

    fn field(&mut self, line: &[u8]) {
        if line.first() == Some(&b':') {
            return;
        }
        let (field, value) = match memchr::memchr(b':', line) {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &[][..]),
        };
        match field {
            b"event" => self.event = String::from_utf8_lossy(value).into_owned(),
            b"data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(&String::from_utf8_lossy(value));
                self.has_data = true;
            }
            _ => {}
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        if self.has_data {
            out.push(SseEvent {
                event: std::mem::take(&mut self.event),
                data: std::mem::take(&mut self.data),
            });
        } else {
            self.event.clear();
        }
        self.has_data = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_chunks(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut parser = SseParser::new();
        let mut out = Vec::new();
        for chunk in chunks {
            parser.feed(chunk, &mut out);
        }
        parser.finish(&mut out);
        out
    }

    #[test]
    fn events_data_comments_and_line_endings() {
        let events = parse_chunks(&[
            b": keep-alive\n\nevent: message_start\ndata: {\"a\":1}\n\n",
            b"data: one\r\ndata: two\r\n\r\n",
            b"data: three\r\rdata:four",
        ]);
        assert_eq!(
            events,
            vec![
                SseEvent {
                    event: "message_start".into(),
                    data: "{\"a\":1}".into()
                },
                SseEvent {
                    event: String::new(),
                    data: "one\ntwo".into()
                },
                SseEvent {
                    event: String::new(),
                    data: "three".into()
                },
                SseEvent {
                    event: String::new(),
                    data: "four".into()
                },
            ]
        );
    }

    #[test]
    fn utf8_split_across_chunks_and_crlf_split() {
        let text = "data: héllo ✓\r\n\r\n".as_bytes();
        let mut chunks: Vec<&[u8]> = Vec::new();
        for i in 0..text.len() {
            chunks.push(&text[i..i + 1]);
        }
        let events = parse_chunks(&chunks);
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].data, "héllo ✓");
    }

    #[test]
    fn event_without_data_is_ignored() {
        assert!(parse_chunks(&[b"event: ping\n\n"]).is_empty());
    }
}
