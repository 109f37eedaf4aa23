//! A scripted HTTP/1.1 server on 127.0.0.1 for provider tests: it answers each request with
//! the next [`Reply`] and records every request so tests can assert on what versus sent.
//!
//! Plain threads and blocking sockets: it works the same under `#[tokio::test]` and when the
//! real binary is the client. Streams use chunked encoding so a reply cut mid-way (`cut`) is a
//! truncated body for the client, exactly like a dropped connection.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One scripted answer.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub chunks: Vec<Vec<u8>>,
    /// Pause before each chunk.
    pub delay: Duration,
    /// Close the connection after the chunks without ending the chunked body.
    pub cut: bool,
}

impl Reply {
    /// A `text/event-stream` body sent as-is (split into ~64-byte chunks to exercise framing).
    pub fn sse(body: impl Into<Vec<u8>>) -> Self {
        let body = body.into();
        let chunks = body.chunks(64).map(<[u8]>::to_vec).collect();
        Self {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            chunks,
            delay: Duration::ZERO,
            cut: false,
        }
    }

    /// A JSON body with a status.
    pub fn json(status: u16, body: impl Into<Vec<u8>>) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            chunks: vec![body.into()],
            delay: Duration::ZERO,
            cut: false,
        }
    }

    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Sends only the first `bytes` bytes of the body, then drops the connection.
    pub fn cut_after(mut self, bytes: usize) -> Self {
        let all: Vec<u8> = self.chunks.concat();
        let kept = &all[..bytes.min(all.len())];
        self.chunks = kept.chunks(64).map(<[u8]>::to_vec).collect();
        self.cut = true;
        self
    }

    pub fn delayed(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }
}

/// A request as the server received it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    /// Path and query, e.g. `/v1/messages`.
    pub target: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).expect("request body is JSON")
    }
}

/// A check of every request (auth, URL, signature): `Err(why)` answers 401 with `why` as the
/// error message instead of the next reply, as a real server refuses a bad request.
pub type Check = Arc<dyn Fn(&Recorded) -> Result<(), String> + Send + Sync>;

#[derive(Default)]
struct State {
    replies: VecDeque<Reply>,
    requests: Vec<Recorded>,
    check: Option<Check>,
    refused: Vec<String>,
}

/// The running server; it lives until the process ends (threads are cheap in tests).
pub struct MockServer {
    port: u16,
    state: Arc<Mutex<State>>,
}

impl MockServer {
    pub fn start(replies: Vec<Reply>) -> Self {
        Self::start_with(replies, None)
    }

    /// A server that answers only requests `check` accepts (see [`Check`]).
    pub fn start_checked(
        replies: Vec<Reply>,
        check: impl Fn(&Recorded) -> Result<(), String> + Send + Sync + 'static,
    ) -> Self {
        Self::start_with(replies, Some(Arc::new(check)))
    }

    fn start_with(replies: Vec<Reply>, check: Option<Check>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let state = Arc::new(Mutex::new(State {
            replies: replies.into(),
            check,
            ..State::default()
        }));
        let shared = Arc::clone(&state);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let shared = Arc::clone(&shared);
                std::thread::spawn(move || serve(stream, &shared));
            }
        });
        Self { port, state }
    }

    /// `http://127.0.0.1:PORT` (no trailing slash).
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn push(&self, reply: Reply) {
        self.state.lock().unwrap().replies.push_back(reply);
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.state.lock().unwrap().requests.clone()
    }

    /// Why the check refused requests, in order (empty: every request passed).
    pub fn refused(&self) -> Vec<String> {
        self.state.lock().unwrap().refused.clone()
    }
}

fn serve(stream: TcpStream, state: &Mutex<State>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_string();
    let target = parts.next().unwrap_or_default().to_string();
    let mut headers = Vec::new();
    let mut length = 0usize;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).unwrap_or(0) == 0 {
            return;
        }
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            let value = value.trim().to_string();
            if name.eq_ignore_ascii_case("content-length") {
                length = value.parse().unwrap_or(0);
            }
            headers.push((name.trim().to_string(), value));
        }
    }
    let mut body = vec![0; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let reply = {
        let mut state = state.lock().unwrap();
        let recorded = Recorded {
            method,
            target,
            headers,
            body,
        };
        let verdict = state.check.as_ref().map(|check| check(&recorded));
        state.requests.push(recorded);
        if let Some(Err(why)) = verdict {
            state.refused.push(why.clone());
            let body = serde_json::json!({"error": {"message": why}, "message": why});
            Reply::json(401, body.to_string())
        } else {
            state.replies.pop_front().unwrap_or_else(|| {
                Reply::json(
                    500,
                    r#"{"error":{"message":"mock server: no scripted reply left"}}"#,
                )
            })
        }
    };
    let mut out = stream;
    let mut head = format!("HTTP/1.1 {} Mock\r\n", reply.status);
    for (name, value) in &reply.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("transfer-encoding: chunked\r\nconnection: close\r\n\r\n");
    if out.write_all(head.as_bytes()).is_err() {
        return;
    }
    for chunk in &reply.chunks {
        if !reply.delay.is_zero() {
            std::thread::sleep(reply.delay);
        }
        if chunk.is_empty() {
            continue;
        }
        let framed = [
            format!("{:x}\r\n", chunk.len()).into_bytes(),
            chunk.clone(),
            b"\r\n".to_vec(),
        ]
        .concat();
        if out.write_all(&framed).is_err() {
            return;
        }
        let _ = out.flush();
    }
    if reply.cut {
        let _ = out.shutdown(std::net::Shutdown::Both);
        return;
    }
    let _ = out.write_all(b"0\r\n\r\n");
    let _ = out.flush();
}

/// Bytes of a fixture file under tests/fixtures/.
pub fn fixture(rel: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel);
    std::fs::read(&path).unwrap_or_else(|e| panic!("fixture {}: {e}", path.display()))
}

/// How to frame a payload-per-line fixture (see tests/fixtures/README.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// `data: <line>` only.
    DataOnly,
    /// `data: <line>` followed by `data: [DONE]` (OpenAI Chat).
    DataThenDone,
    /// `event: <payload.type>` + `data: <line>` (Anthropic, OpenAI Responses).
    EventFromType,
}

/// Turns a payload-per-line fixture into an SSE body, keeping each line's bytes.
pub fn payload_lines_to_sse(bytes: &[u8], framing: Framing) -> Vec<u8> {
    let text = std::str::from_utf8(bytes).unwrap();
    let mut out = Vec::new();
    for line in text.lines() {
        if line.trim().is_empty() {
            continue;
        }
        if framing == Framing::EventFromType {
            let value: serde_json::Value = serde_json::from_str(line).unwrap();
            if let Some(kind) = value.get("type").and_then(|t| t.as_str()) {
                out.extend_from_slice(format!("event: {kind}\n").as_bytes());
            }
        }
        out.extend_from_slice(b"data: ");
        out.extend_from_slice(line.as_bytes());
        out.extend_from_slice(b"\n\n");
    }
    if framing == Framing::DataThenDone {
        out.extend_from_slice(b"data: [DONE]\n\n");
    }
    out
}

/// Streams one request and splits the outcome: the live events, then the completion or the
/// error that ended the stream.
pub async fn collect(
    model: &dyn versus::provider::ModelClient,
    request: versus::model::ModelRequest,
) -> (
    Vec<versus::model::StreamEvent>,
    Result<versus::model::Completion, versus::provider::ProviderError>,
) {
    use futures::StreamExt;
    use versus::model::StreamEvent;
    let mut stream = model.stream(request, tokio_util::sync::CancellationToken::new());
    let mut events = Vec::new();
    while let Some(item) = stream.next().await {
        match item {
            Ok(StreamEvent::Completed(done)) => return (events, Ok(done)),
            Ok(event) => events.push(event),
            Err(err) => return (events, Err(err)),
        }
    }
    panic!("the stream ended without a completion or an error");
}

/// The streamed text deltas, joined.
pub fn text_of(events: &[versus::model::StreamEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            versus::model::StreamEvent::TextDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// `(attempt, delay_ms)` of every retry announced in the stream.
pub fn retries(events: &[versus::model::StreamEvent]) -> Vec<(u32, u64)> {
    events
        .iter()
        .filter_map(|e| match e {
            versus::model::StreamEvent::Retrying {
                attempt, delay_ms, ..
            } => Some((*attempt, *delay_ms)),
            _ => None,
        })
        .collect()
}
