//! The shared HTTP transport: one implementation of sending, streaming, retrying and error
//! classification, with a thin [`Wire`] per API that only builds bodies and decodes events.
//!
//! Keeping retries here (not in each adapter) is what makes "a stream cut after content has
//! arrived is retried as a new request for that step" hold for every provider alike.

use std::sync::{Arc, Once};
use std::time::Duration;

use futures::StreamExt;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::client::{EventStream, ModelClient};
use super::debug_log::{self, Entry};
use super::error::{ProviderError, classify_status, error_message_from_body};
use super::redact::Redactor;
use super::sse::{SseEvent, SseParser};
use crate::model::{Completion, ModelRequest, StreamEvent};

/// Where and how to reach one provider; every [`Wire`] is built from one.
#[derive(Clone, Default)]
pub struct WireConfig {
    /// Name in messages: `openai`, `openrouter`, `ollama`, or a configured provider's name.
    pub provider: String,
    /// API base the adapter appends its endpoint to, without trailing slash:
    /// `{base}/chat/completions`, `{base}/responses`, `{base}/v1/messages`,
    /// `{base}/v1beta/models/{model}:streamGenerateContent?alt=sse`. (For Ollama the config
    /// layer passes `OLLAMA_BASE_URL` + `/v1`.)
    pub base_url: String,
    /// The key, if the provider needs one.
    pub api_key: Option<String>,
    /// Where the key comes from (a variable name), for error hints.
    pub key_hint: String,
    /// Extra headers from the config file (e.g. OpenRouter's `HTTP-Referer`).
    pub headers: Vec<(String, String)>,
    /// Where `base_url` comes from, for the error when nothing listens there (`OLLAMA_BASE_URL`,
    /// `base_url in ~/.config/versus/config.toml`); empty: not known.
    pub base_hint: String,
    /// Whether the model accepts images. When false, a tool's image is replaced by a text note
    /// (see [`crate::model::Image::not_sent_note`]): servers without vision refuse image parts,
    /// which would end the run. The config layer decides it per model (`config::vision`).
    pub vision: bool,
}

impl std::fmt::Debug for WireConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The key must never reach a log line, even through Debug.
        f.debug_struct("WireConfig")
            .field("provider", &self.provider)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "[redacted]"))
            .field("key_hint", &self.key_hint)
            .field("base_hint", &self.base_hint)
            .field(
                "headers",
                &self.headers.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            )
            .field("vision", &self.vision)
            .finish()
    }
}

impl WireConfig {
    /// The config with an empty provider name or key hint replaced by the API's own, so error
    /// messages always name something the user can act on.
    pub fn or_defaults(mut self, provider: &str, key_hint: &str) -> Self {
        if self.provider.trim().is_empty() {
            self.provider = provider.to_string();
        }
        if self.key_hint.trim().is_empty() {
            self.key_hint = key_hint.to_string();
        }
        self
    }

    /// `base_url` without trailing slashes (users paste them).
    pub fn base(&self) -> &str {
        self.base_url.trim_end_matches('/')
    }

    /// The values to scrub from texts: the key and extra header values that look secret.
    pub fn secrets(&self) -> Vec<String> {
        let mut out: Vec<String> = self.api_key.iter().cloned().collect();
        for (name, value) in &self.headers {
            let lower = name.to_ascii_lowercase();
            if lower.contains("key") || lower.contains("auth") || lower.contains("token") {
                out.push(value.clone());
            }
        }
        out
    }
}

/// A request ready to send.
#[derive(Debug, Clone)]
pub struct WireRequest {
    /// Full URL (may carry a `key=` parameter; it is redacted in every message).
    pub url: String,
    /// Headers, secrets included.
    pub headers: Vec<(String, String)>,
    /// The JSON body, serialised once per attempt (what goes on the socket).
    pub body: Vec<u8>,
}

/// A body as the bytes of its JSON, serialised once per attempt from the wire's typed body.
pub(crate) fn json_bytes(
    provider: &str,
    body: &impl serde::Serialize,
) -> Result<Vec<u8>, ProviderError> {
    serde_json::to_vec(body).map_err(|err| ProviderError::Config {
        provider: provider.to_string(),
        message: format!("could not encode the request: {err}"),
    })
}

/// What the transport needs from one API format.
pub trait Wire: Send + Sync + 'static {
    /// The provider's configuration (name, base URL, key, headers).
    fn config(&self) -> &WireConfig;
    /// Provider name for messages (`openai`, `anthropic`, a configured name...).
    fn provider(&self) -> &str {
        &self.config().provider
    }
    /// Where the key comes from, for auth error hints (e.g. `OPENAI_API_KEY`).
    fn key_hint(&self) -> &str {
        &self.config().key_hint
    }
    /// Secret values to scrub from every text (the API key).
    fn secrets(&self) -> Vec<String> {
        self.config().secrets()
    }
    /// Builds the HTTP request for a conversation.
    fn build(&self, request: &ModelRequest) -> Result<WireRequest, ProviderError>;
    /// A fresh decoder for one response.
    fn decoder(&self, request: &ModelRequest) -> Box<dyn Decoder>;
    /// How the response body is framed: server-sent events for every API but Bedrock's.
    fn framing(&self) -> BodyFraming {
        BodyFraming::Sse
    }
    /// The error for a non-2xx answer; the default handles the common statuses and the
    /// `{"error":{"message"}}` body shapes.
    fn classify(&self, status: u16, retry_after: Option<Duration>, body: &str) -> ProviderError {
        classify_status(
            self.provider(),
            status,
            error_message_from_body(body),
            retry_after,
            self.key_hint(),
        )
    }
}

/// How a response body is cut into events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyFraming {
    /// `text/event-stream`.
    Sse,
    /// AWS's binary event stream, both checksums verified
    /// ([`super::bedrock::eventstream`]): each message becomes one [`SseEvent`].
    AwsEventStream,
}

/// The parser of one response body, by its [`BodyFraming`].
enum Frames {
    Sse(SseParser),
    Aws(super::bedrock::eventstream::Parser),
}

impl Frames {
    fn new(framing: BodyFraming, provider: &str) -> Self {
        match framing {
            BodyFraming::Sse => Frames::Sse(SseParser::new()),
            BodyFraming::AwsEventStream => {
                Frames::Aws(super::bedrock::eventstream::Parser::new(provider))
            }
        }
    }

    fn accept(&self) -> &'static str {
        match self {
            Frames::Sse(_) => "text/event-stream",
            Frames::Aws(_) => "application/vnd.amazon.eventstream",
        }
    }

    fn feed(&mut self, bytes: &[u8], out: &mut Vec<SseEvent>) -> Result<(), ProviderError> {
        match self {
            Frames::Sse(parser) => {
                parser.feed(bytes, out);
                Ok(())
            }
            Frames::Aws(parser) => parser.feed(bytes, out),
        }
    }

    fn finish(&mut self, out: &mut Vec<SseEvent>) {
        if let Frames::Sse(parser) = self {
            parser.finish(out);
        }
    }
}

/// Whether the stream goes on after an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Keep reading.
    Continue,
    /// The response is complete (e.g. `data: [DONE]`, `message_stop`).
    Done,
}

/// Turns one response's SSE events into stream events and finally a [`Completion`].
pub trait Decoder: Send {
    /// Handles one SSE event; live deltas go to `out`. An error event inside a 200 stream is
    /// returned as `Err` (classified: overloaded is retryable, overflow is overflow).
    fn event(
        &mut self,
        event: &SseEvent,
        out: &mut Vec<StreamEvent>,
    ) -> Result<Flow, ProviderError>;
    /// The assembled response once the stream ended. Returns a retryable
    /// [`ProviderError::Network`] when the stream stopped before the response was complete.
    fn finish(&mut self) -> Result<Completion, ProviderError>;
}

/// Retry timing. Tests shorten the delays; the defaults follow providers' guidance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in total, the first included.
    pub max_tries: u32,
    /// Delay before the first retry; doubles each time (with +-25% jitter).
    pub base_delay: Duration,
    /// Upper bound for computed delays.
    pub max_delay: Duration,
    /// Upper bound for a server's `retry-after`.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_tries: 5,
            base_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(120),
        }
    }
}

impl RetryPolicy {
    /// The wait before attempt `next` (2 = first retry).
    pub fn delay(&self, next: u32, retry_after: Option<Duration>) -> Duration {
        if let Some(wait) = retry_after {
            return wait.min(self.max_retry_after);
        }
        let exponent = next.saturating_sub(2).min(16);
        let raw = self.base_delay.saturating_mul(1u32 << exponent);
        let capped = raw.min(self.max_delay);
        jitter(capped)
    }
}

/// +-25% so that many models retrying together do not hit the server in lockstep.
fn jitter(delay: Duration) -> Duration {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let factor = 0.75 + f64::from(nanos % 1000) / 2000.0;
    delay.mul_f64(factor)
}

/// The most bytes versus reads of one model response (64 MiB). A model's answer is bounded by
/// its output tokens: 128k tokens streamed one event each, with every API's per-event framing,
/// are about 25 MB. A server that sends more (one line without an end, arguments without end,
/// events without end) is cut off here with an error, so what the parser, the decoder and the
/// agent keep of a response stays bounded whatever the server sends: before this, one endless
/// `data:` line took 3 GB of the host's memory in 15 seconds.
pub const MAX_RESPONSE_BYTES: usize = 64 * 1024 * 1024;

/// The most bytes of an error response versus reads (64 KiB): enough for any error message,
/// and an endless error body cannot take the host's memory (it is read again on each retry).
pub const MAX_ERROR_BODY_BYTES: usize = 64 * 1024;

/// The error for a response longer than [`MAX_RESPONSE_BYTES`]: not retried (the same server
/// would send the same again).
fn too_long(provider: &str) -> ProviderError {
    ProviderError::Decode {
        provider: provider.to_string(),
        message: format!(
            "the response passed {} MiB, far more than any model answer; versus stopped \
             reading it (the server is not behaving like a model API)",
            MAX_RESPONSE_BYTES / (1024 * 1024)
        ),
        retryable: false,
    }
}

/// At most `limit` bytes of `response`'s body, as text (invalid UTF-8 replaced); the rest is
/// never read. A body that fails mid-way gives what arrived.
async fn bounded_text(response: reqwest::Response, limit: usize) -> String {
    let mut body = response.bytes_stream();
    let mut bytes = Vec::new();
    while let Some(Ok(chunk)) = body.next().await {
        let room = limit.saturating_sub(bytes.len());
        bytes.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if bytes.len() >= limit {
            break;
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The error for a response that redirects the request (never followed, see
/// [`default_client`]): where it pointed, and what to do if that is the right address.
fn redirected(provider: &str, status: u16, location: &str) -> ProviderError {
    let to = if location.is_empty() {
        "without saying where".to_string()
    } else {
        format!("to {location}")
    };
    ProviderError::Config {
        provider: provider.to_string(),
        message: format!(
            "the server redirected the request ({status}) {to}; versus does not follow \
             redirects of model requests (the API key would go along): if that is the right \
             address, set the provider's base_url to it"
        ),
    }
}

static CRYPTO: Once = Once::new();

/// reqwest is built without a default TLS crypto provider; install ring once per process.
fn ensure_crypto_provider() {
    CRYPTO.call_once(|| {
        // Err means a provider is already installed, which is all we need.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// A shared HTTP client for providers: long streams, no whole-request timeout (the agent loop
/// owns the run's timeout), but a read timeout so a silent connection does not hang forever.
/// Redirects are not followed: a model API does not redirect its requests, and following one
/// would carry the key to wherever it points (reqwest drops `Authorization` on the way to
/// another host, but not `x-api-key`, `x-goog-api-key` or `api-key`). A redirect is an error
/// that names where it pointed ([`HttpModel`]).
pub fn default_client() -> Result<reqwest::Client, ProviderError> {
    ensure_crypto_provider();
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("versus/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(Duration::from_secs(30))
        .read_timeout(Duration::from_secs(300))
        .build()
        .map_err(|err| ProviderError::Config {
            provider: "http".to_string(),
            message: format!("could not start the HTTP client: {err}"),
        })
}

/// An error with its causes, joined by `: ` (`error sending request: ... Connection refused`):
/// a transport error's own text rarely says what went wrong, its sources do. The one form
/// of the model lists' and the SSO portal's connection errors.
pub(crate) fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// `text` percent-encoded as one URL path segment or query value (RFC 3986): unreserved
/// characters (`A-Z a-z 0-9 - _ . ~`) as they are, every other byte `%XX` in upper case.
/// The one encoder of the providers' URLs (model ids, deployment names, SSO and page-token
/// query values) and of SigV4's canonical request, which requires exactly this form.
pub fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// A model served over HTTP by one [`Wire`].
#[derive(Clone)]
pub struct HttpModel {
    client: reqwest::Client,
    wire: Arc<dyn Wire>,
    retry: RetryPolicy,
}

impl HttpModel {
    /// A model using `wire` over `client`.
    pub fn new(client: reqwest::Client, wire: Arc<dyn Wire>, retry: RetryPolicy) -> Self {
        Self {
            client,
            wire,
            retry,
        }
    }
}

impl ModelClient for HttpModel {
    fn provider(&self) -> &str {
        self.wire.provider()
    }

    fn stream(&self, request: ModelRequest, cancel: CancellationToken) -> EventStream {
        let (tx, rx) = mpsc::channel(256);
        let this = self.clone();
        driven_stream(
            async move {
                let outcome = tokio::select! {
                    outcome = this.run(&request, &tx) => outcome,
                    () = cancel.cancelled() => Err(ProviderError::Cancelled),
                };
                if let Err(err) = outcome {
                    let _ = tx.send(Err(err)).await;
                }
            },
            rx,
        )
    }
}

/// An [`EventStream`] of the events `producer` sends into `rx`'s channel, with `producer`
/// polled by whoever polls the stream. The request then runs in the agent's own task rather
/// than in one spawned per step, so each event is handed over without waking another thread
/// (a step used to cost a task spawn and a cross-thread wake-up per event), and dropping the
/// stream drops the request.
pub(crate) fn driven_stream(
    producer: impl Future<Output = ()> + Send + 'static,
    mut rx: mpsc::Receiver<Result<StreamEvent, ProviderError>>,
) -> EventStream {
    let mut producer = Some(Box::pin(producer));
    futures::stream::poll_fn(move |cx| {
        if let Some(running) = producer.as_mut()
            && running.as_mut().poll(cx).is_ready()
        {
            // Done: its sender is gone, so the channel ends once drained.
            producer = None;
        }
        rx.poll_recv(cx)
    })
    .boxed()
}

/// Adapts a channel receiver into an [`EventStream`].
pub(crate) fn receiver_stream(
    mut rx: mpsc::Receiver<Result<StreamEvent, ProviderError>>,
) -> EventStream {
    futures::stream::poll_fn(move |cx| rx.poll_recv(cx)).boxed()
}

type Sender = mpsc::Sender<Result<StreamEvent, ProviderError>>;

impl HttpModel {
    async fn run(&self, request: &ModelRequest, tx: &Sender) -> Result<(), ProviderError> {
        let redactor = Redactor::new(self.wire.secrets());
        let mut attempt = 1;
        loop {
            let outcome = self.attempt(request, tx, &redactor, attempt).await;
            if let Err(err) = &outcome
                && debug_log::enabled()
            {
                debug_log::record(
                    self.wire.provider(),
                    &request.model,
                    &redactor,
                    Entry::Failed {
                        error: &err.to_string(),
                    },
                );
            }
            match outcome {
                Ok(completion) => {
                    let _ = tx.send(Ok(StreamEvent::Completed(completion))).await;
                    return Ok(());
                }
                Err(err) if err.is_retryable() && attempt < self.retry.max_tries => {
                    attempt += 1;
                    let delay = self.retry.delay(attempt, err.retry_after());
                    tracing::warn!(
                        provider = self.wire.provider(),
                        model = %request.model,
                        attempt,
                        delay_ms = delay.as_millis() as u64,
                        error = %err,
                        "retrying request"
                    );
                    let event = StreamEvent::Retrying {
                        attempt,
                        delay_ms: u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                        reason: err.to_string(),
                    };
                    if tx.send(Ok(event)).await.is_err() {
                        return Ok(());
                    }
                    tokio::time::sleep(delay).await;
                }
                Err(err) => {
                    tracing::error!(
                        provider = self.wire.provider(),
                        model = %request.model,
                        error = %err,
                        "request failed"
                    );
                    return Err(err);
                }
            }
        }
    }

    async fn attempt(
        &self,
        request: &ModelRequest,
        tx: &Sender,
        redactor: &Redactor,
        attempt: u32,
    ) -> Result<Completion, ProviderError> {
        let provider = self.wire.provider().to_string();
        let wire_request = self.wire.build(request)?;
        let mut parser = Frames::new(self.wire.framing(), &provider);
        let debug = debug_log::enabled();
        let log = |entry: Entry<'_>| debug_log::record(&provider, &request.model, redactor, entry);
        if debug {
            log(Entry::Request {
                attempt,
                url: &wire_request.url,
                headers: &wire_request.headers,
                body: &wire_request.body,
            });
        }
        let mut builder = self
            .client
            .post(&wire_request.url)
            .header("content-type", "application/json")
            .header("accept", parser.accept())
            .body(wire_request.body);
        for (name, value) in &wire_request.headers {
            builder = builder.header(name.as_str(), value.as_str());
        }
        let network = |err: reqwest::Error| ProviderError::Network {
            provider: provider.clone(),
            message: redactor.scrub(&describe(&err)),
        };
        // Connection refused on this machine: nothing listens there (a local server that is not
        // running). Retrying for seconds would only hide it; say so at once.
        let refused = |err: reqwest::Error| {
            if refused_locally(&err) {
                ProviderError::Unreachable {
                    provider: provider.clone(),
                    url: redactor.scrub(&self.wire.config().base_url),
                    hint: self.wire.config().base_hint.clone(),
                }
            } else {
                network(err)
            }
        };
        tracing::debug!(
            provider = %provider,
            model = %request.model,
            url = %redactor.scrub(&wire_request.url),
            messages = request.messages.len(),
            "sending request"
        );
        let response = builder.send().await.map_err(refused)?;
        let status = response.status().as_u16();
        tracing::debug!(provider = %provider, status, "response started");
        if (300..400).contains(&status) {
            let location = response
                .headers()
                .get(reqwest::header::LOCATION)
                .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned())
                .unwrap_or_default();
            return Err(redirected(&provider, status, &redactor.scrub(&location)));
        }
        if debug && (200..300).contains(&status) {
            log(Entry::Status { status, body: None });
        }
        if !(200..300).contains(&status) {
            let retry_after = retry_after(response.headers());
            let body = bounded_text(response, MAX_ERROR_BODY_BYTES).await;
            if debug {
                log(Entry::Status {
                    status,
                    body: Some(&body),
                });
            }
            return Err(self
                .wire
                .classify(status, retry_after, &redactor.scrub(&body)));
        }
        let mut decoder = self.wire.decoder(request);
        let mut frames = Vec::new();
        let mut events = Vec::new();
        let mut body = response.bytes_stream();
        let scrub = |err: ProviderError| scrub_error(err, redactor);
        let mut received: usize = 0;
        'read: loop {
            let chunk = match body.next().await {
                Some(chunk) => chunk.map_err(network)?,
                None => {
                    parser.finish(&mut frames);
                    for frame in frames.drain(..) {
                        if debug {
                            log(Entry::Event {
                                name: &frame.event,
                                data: &frame.data,
                            });
                        }
                        if decoder.event(&frame, &mut events).map_err(scrub)? == Flow::Done {
                            break;
                        }
                    }
                    forward(tx, &mut events).await;
                    break 'read;
                }
            };
            received = received.saturating_add(chunk.len());
            if received > MAX_RESPONSE_BYTES {
                return Err(too_long(&provider));
            }
            parser.feed(&chunk, &mut frames).map_err(scrub)?;
            for frame in frames.drain(..) {
                if debug {
                    log(Entry::Event {
                        name: &frame.event,
                        data: &frame.data,
                    });
                }
                let flow = decoder.event(&frame, &mut events).map_err(scrub)?;
                forward(tx, &mut events).await;
                if flow == Flow::Done {
                    break 'read;
                }
            }
        }
        decoder.finish().map_err(scrub)
    }
}

async fn forward(tx: &Sender, events: &mut Vec<StreamEvent>) {
    for event in events.drain(..) {
        let _ = tx.send(Ok(event)).await;
    }
}

/// Whether `err` is a refused connection to an address of this machine (loopback or
/// `localhost`): a server that is not running, not a network hiccup.
fn refused_locally(err: &reqwest::Error) -> bool {
    if !err.is_connect() {
        return false;
    }
    let local = err.url().and_then(|u| u.host_str()).is_some_and(|host| {
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        match bare.parse::<std::net::IpAddr>() {
            Ok(ip) => ip.is_loopback() || ip.is_unspecified(),
            Err(_) => bare.eq_ignore_ascii_case("localhost"),
        }
    });
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(cause) = source {
        if let Some(io) = cause.downcast_ref::<std::io::Error>()
            && io.kind() == std::io::ErrorKind::ConnectionRefused
        {
            return local;
        }
        source = cause.source();
    }
    false
}

/// A reqwest error with its causes (reqwest's Display alone hides "connection reset").
fn describe(err: &reqwest::Error) -> String {
    let mut text = if err.is_timeout() {
        "timed out".to_string()
    } else if err.is_connect() {
        "could not connect".to_string()
    } else if err.is_body() || err.is_decode() {
        "the response stream was cut".to_string()
    } else {
        "request failed".to_string()
    };
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

fn scrub_error(err: ProviderError, redactor: &Redactor) -> ProviderError {
    use ProviderError as E;
    let s = |text: String| redactor.scrub(&text);
    match err {
        E::Auth {
            provider,
            status,
            message,
            hint,
        } => E::Auth {
            provider,
            status,
            message: s(message),
            hint,
        },
        E::RateLimited {
            provider,
            message,
            retry_after,
        } => E::RateLimited {
            provider,
            message: s(message),
            retry_after,
        },
        E::Server {
            provider,
            status,
            message,
            retry_after,
        } => E::Server {
            provider,
            status,
            message: s(message),
            retry_after,
        },
        E::ContextOverflow { provider, message } => E::ContextOverflow {
            provider,
            message: s(message),
        },
        E::Unreachable {
            provider,
            url,
            hint,
        } => E::Unreachable {
            provider,
            url: s(url),
            hint,
        },
        E::BadRequest {
            provider,
            status,
            message,
        } => E::BadRequest {
            provider,
            status,
            message: s(message),
        },
        E::Network { provider, message } => E::Network {
            provider,
            message: s(message),
        },
        E::Decode {
            provider,
            message,
            retryable,
        } => E::Decode {
            provider,
            message: s(message),
            retryable,
        },
        E::Stream { provider, message } => E::Stream {
            provider,
            message: s(message),
        },
        E::Config { provider, message } => E::Config {
            provider,
            message: s(message),
        },
        E::Cancelled => E::Cancelled,
    }
}

/// `retry-after-ms` (OpenAI), else `retry-after` in seconds or as an HTTP date.
fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    if let Some(ms) = headers
        .get("retry-after-ms")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<f64>().ok())
    {
        return Some(Duration::from_secs_f64(ms.max(0.0) / 1000.0));
    }
    let value = headers.get("retry-after")?.to_str().ok()?.trim();
    if let Ok(seconds) = value.parse::<f64>() {
        return Some(Duration::from_secs_f64(seconds.max(0.0)));
    }
    parse_http_date(value).map(|when| {
        when.duration_since(std::time::SystemTime::now())
            .unwrap_or(Duration::ZERO)
    })
}

/// IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the only form servers send today.
fn parse_http_date(value: &str) -> Option<std::time::SystemTime> {
    let parts: Vec<&str> = value.split_whitespace().collect();
    if parts.len() != 6 || parts[5] != "GMT" {
        return None;
    }
    let day: i64 = parts[1].parse().ok()?;
    let month = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]
    .iter()
    .position(|m| *m == parts[2])? as i64
        + 1;
    let year: i64 = parts[3].parse().ok()?;
    let hms: Vec<i64> = parts[4]
        .split(':')
        .map(|p| p.parse().ok())
        .collect::<Option<Vec<_>>>()?;
    if hms.len() != 3 {
        return None;
    }
    // Days from civil date (Howard Hinnant's algorithm).
    let (y, m) = if month <= 2 {
        (year - 1, month + 9)
    } else {
        (year, month - 3)
    };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * m + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + hms[0] * 3600 + hms[1] * 60 + hms[2];
    let secs = u64::try_from(secs).ok()?;
    Some(std::time::UNIX_EPOCH + Duration::from_secs(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_honours_retry_after() {
        let policy = RetryPolicy {
            base_delay: Duration::from_millis(100),
            ..RetryPolicy::default()
        };
        let first = policy.delay(2, None);
        let third = policy.delay(4, None);
        assert!(first >= Duration::from_millis(75) && first <= Duration::from_millis(125));
        assert!(third >= Duration::from_millis(300) && third <= Duration::from_millis(500));
        assert_eq!(
            policy.delay(2, Some(Duration::from_secs(3))),
            Duration::from_secs(3)
        );
        assert_eq!(
            policy.delay(2, Some(Duration::from_secs(9999))),
            policy.max_retry_after
        );
    }

    #[test]
    fn retry_after_headers() {
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert("retry-after", "2".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
        headers.insert("retry-after-ms", "150".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(150)));
        assert_eq!(
            parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(std::time::UNIX_EPOCH + Duration::from_secs(784_111_777))
        );
    }
}
