//! The AWS event-stream framing (`application/vnd.amazon.eventstream`) Bedrock streams in:
//! binary messages, each `total length (u32) | headers length (u32) | prelude CRC32 | headers
//! | payload | message CRC32`, big-endian, CRC-32 (IEEE) over the 8 prelude bytes and over
//! everything before the message CRC.
//!
//! Both checksums are verified before a message is used: a corrupted frame is an error that
//! says which checksum failed (retried like a cut stream, since the bytes were damaged on the
//! way), never a garbled event. Each message becomes an [`SseEvent`] so the shared transport
//! and the decoder handle it like any other API's events: an event's `:event-type` as the
//! event name and its payload as data; an exception as `exception:TYPE` with its payload; an
//! error message as `error:CODE` with its `:error-message`.

use crate::provider::error::ProviderError;
use crate::provider::sse::SseEvent;

/// The largest message accepted (AWS's limit is 16 MiB).
const MAX_MESSAGE: usize = 16 * 1024 * 1024;
/// Prelude (12 bytes) + message CRC (4 bytes).
const MIN_MESSAGE: usize = 16;

/// CRC-32 (IEEE 802.3, reflected, as zlib computes it).
pub fn crc32(data: &[u8]) -> u32 {
    static TABLE: std::sync::OnceLock<[u32; 256]> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut table = [0u32; 256];
        for (n, slot) in table.iter_mut().enumerate() {
            let mut c = n as u32;
            for _ in 0..8 {
                c = if c & 1 != 0 {
                    0xEDB8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
            }
            *slot = c;
        }
        table
    });
    let mut crc = !0u32;
    for byte in data {
        crc = table[((crc ^ u32::from(*byte)) & 0xFF) as usize] ^ (crc >> 8);
    }
    !crc
}

/// One header value; strings are what Bedrock sends, the other types are read to be skipped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeaderValue {
    /// Type 7.
    String(String),
    /// Any other type, as raw bytes.
    Other(Vec<u8>),
}

/// One decoded message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// Headers in order.
    pub headers: Vec<(String, HeaderValue)>,
    /// The payload (JSON for Bedrock).
    pub payload: Vec<u8>,
}

impl Message {
    /// A string header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find_map(|(n, v)| match v {
            HeaderValue::String(s) if n == name => Some(s.as_str()),
            _ => None,
        })
    }

    /// The message as the event the decoder reads.
    pub fn to_event(&self) -> SseEvent {
        let payload = String::from_utf8_lossy(&self.payload).into_owned();
        match self.header(":message-type").unwrap_or("event") {
            "exception" => SseEvent {
                event: format!(
                    "exception:{}",
                    self.header(":exception-type").unwrap_or("unknown")
                ),
                data: payload,
            },
            "error" => SseEvent {
                event: format!("error:{}", self.header(":error-code").unwrap_or("unknown")),
                data: self
                    .header(":error-message")
                    .unwrap_or(&payload)
                    .to_string(),
            },
            _ => SseEvent {
                event: self.header(":event-type").unwrap_or("").to_string(),
                data: payload,
            },
        }
    }
}

/// Encodes a message (string headers only): what a server sends. For tests and mocks.
pub fn encode(headers: &[(&str, &str)], payload: &[u8]) -> Vec<u8> {
    let mut head = Vec::new();
    for (name, value) in headers {
        head.push(u8::try_from(name.len()).unwrap_or(u8::MAX));
        head.extend_from_slice(name.as_bytes());
        head.push(7);
        head.extend_from_slice(&u16::try_from(value.len()).unwrap_or(u16::MAX).to_be_bytes());
        head.extend_from_slice(value.as_bytes());
    }
    let total = 12 + head.len() + payload.len() + 4;
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(&u32::try_from(total).unwrap_or(u32::MAX).to_be_bytes());
    out.extend_from_slice(&u32::try_from(head.len()).unwrap_or(u32::MAX).to_be_bytes());
    let prelude_crc = crc32(&out);
    out.extend_from_slice(&prelude_crc.to_be_bytes());
    out.extend_from_slice(&head);
    out.extend_from_slice(payload);
    let message_crc = crc32(&out);
    out.extend_from_slice(&message_crc.to_be_bytes());
    out
}

/// Incremental decoder: bytes in, whole verified messages out.
#[derive(Debug)]
pub struct Parser {
    provider: String,
    buffer: Vec<u8>,
}

impl Parser {
    /// A parser at the start of a stream; `provider` names the errors.
    pub fn new(provider: &str) -> Self {
        Self {
            provider: provider.to_string(),
            buffer: Vec::new(),
        }
    }

    fn corrupt(&self, what: String) -> ProviderError {
        ProviderError::Network {
            provider: self.provider.clone(),
            message: format!("the event stream was corrupted on the way: {what}"),
        }
    }

    /// Feeds bytes; each complete message is checked and appended to `out` as an event.
    pub fn feed(&mut self, bytes: &[u8], out: &mut Vec<SseEvent>) -> Result<(), ProviderError> {
        self.buffer.extend_from_slice(bytes);
        let mut start = 0;
        while self.buffer.len() - start >= 12 {
            let frame = &self.buffer[start..];
            let total = u32::from_be_bytes([frame[0], frame[1], frame[2], frame[3]]) as usize;
            let headers_len = u32::from_be_bytes([frame[4], frame[5], frame[6], frame[7]]) as usize;
            let prelude_crc = u32::from_be_bytes([frame[8], frame[9], frame[10], frame[11]]);
            let computed = crc32(&frame[..8]);
            if computed != prelude_crc {
                return Err(self.corrupt(format!(
                    "prelude checksum mismatch (the frame says {prelude_crc:08x}, its bytes give {computed:08x})"
                )));
            }
            if !(MIN_MESSAGE..=MAX_MESSAGE).contains(&total) || headers_len > total - MIN_MESSAGE {
                return Err(self.corrupt(format!(
                    "a frame of {total} bytes with {headers_len} bytes of headers"
                )));
            }
            if frame.len() < total {
                break;
            }
            let message_crc = u32::from_be_bytes([
                frame[total - 4],
                frame[total - 3],
                frame[total - 2],
                frame[total - 1],
            ]);
            let computed = crc32(&frame[..total - 4]);
            if computed != message_crc {
                return Err(self.corrupt(format!(
                    "message checksum mismatch (the frame says {message_crc:08x}, its bytes give {computed:08x})"
                )));
            }
            let headers = parse_headers(&frame[12..12 + headers_len])
                .ok_or_else(|| self.corrupt("headers that do not parse".to_string()))?;
            let message = Message {
                headers,
                payload: frame[12 + headers_len..total - 4].to_vec(),
            };
            out.push(message.to_event());
            start += total;
        }
        self.buffer.drain(..start);
        Ok(())
    }
}

fn parse_headers(mut bytes: &[u8]) -> Option<Vec<(String, HeaderValue)>> {
    let mut out = Vec::new();
    let take = |bytes: &mut &[u8], n: usize| -> Option<Vec<u8>> {
        if bytes.len() < n {
            return None;
        }
        let (head, tail) = bytes.split_at(n);
        *bytes = tail;
        Some(head.to_vec())
    };
    while !bytes.is_empty() {
        let name_len = usize::from(*take(&mut bytes, 1)?.first()?);
        let name = String::from_utf8(take(&mut bytes, name_len)?).ok()?;
        let kind = *take(&mut bytes, 1)?.first()?;
        let value = match kind {
            0 | 1 => HeaderValue::Other(Vec::new()),
            2 => HeaderValue::Other(take(&mut bytes, 1)?),
            3 => HeaderValue::Other(take(&mut bytes, 2)?),
            4 => HeaderValue::Other(take(&mut bytes, 4)?),
            5 | 8 => HeaderValue::Other(take(&mut bytes, 8)?),
            9 => HeaderValue::Other(take(&mut bytes, 16)?),
            6 | 7 => {
                let len = take(&mut bytes, 2)?;
                let len = usize::from(u16::from_be_bytes([len[0], len[1]]));
                let raw = take(&mut bytes, len)?;
                if kind == 7 {
                    HeaderValue::String(String::from_utf8(raw).ok()?)
                } else {
                    HeaderValue::Other(raw)
                }
            }
            _ => return None,
        };
        out.push((name, value));
    }
    Some(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn event(kind: &str, payload: &str) -> Vec<u8> {
        encode(
            &[
                (":event-type", kind),
                (":content-type", "application/json"),
                (":message-type", "event"),
            ],
            payload.as_bytes(),
        )
    }

    #[test]
    fn crc32_matches_zlib() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
    }

    #[test]
    fn messages_split_anywhere_are_decoded_whole() {
        let mut bytes = event("messageStart", r#"{"role":"assistant"}"#);
        bytes.extend(event(
            "contentBlockDelta",
            r#"{"contentBlockIndex":0,"delta":{"text":"Hé"}}"#,
        ));
        bytes.extend(encode(
            &[
                (":exception-type", "throttlingException"),
                (":message-type", "exception"),
            ],
            br#"{"message":"slow down"}"#,
        ));
        for size in [1, 3, 7, 64, bytes.len()] {
            let mut parser = Parser::new("bedrock");
            let mut out = Vec::new();
            for chunk in bytes.chunks(size) {
                parser.feed(chunk, &mut out).unwrap();
            }
            assert_eq!(out.len(), 3, "chunks of {size}");
            assert_eq!(out[0].event, "messageStart");
            assert_eq!(
                out[1].data,
                r#"{"contentBlockIndex":0,"delta":{"text":"Hé"}}"#
            );
            assert_eq!(out[2].event, "exception:throttlingException");
            assert_eq!(out[2].data, r#"{"message":"slow down"}"#);
        }
    }

    #[test]
    fn corrupted_frames_are_clear_errors() {
        let good = event("messageStop", r#"{"stopReason":"end_turn"}"#);
        // A payload byte changed: the message checksum fails.
        let mut bad = good.clone();
        let at = bad.len() - 8;
        bad[at] ^= 0x20;
        let err = Parser::new("bedrock")
            .feed(&bad, &mut Vec::new())
            .unwrap_err();
        assert!(err.is_retryable());
        assert!(
            err.to_string().contains("message checksum mismatch"),
            "{err}"
        );
        // A length byte changed: the prelude checksum fails before the length is trusted.
        let mut bad = good.clone();
        bad[3] ^= 0x01;
        let err = Parser::new("bedrock")
            .feed(&bad, &mut Vec::new())
            .unwrap_err();
        assert!(
            err.to_string().contains("prelude checksum mismatch"),
            "{err}"
        );
        // Half a frame is not an error yet: the rest may come.
        let mut out = Vec::new();
        Parser::new("bedrock")
            .feed(&good[..good.len() / 2], &mut out)
            .unwrap();
        assert!(out.is_empty());
    }
}
