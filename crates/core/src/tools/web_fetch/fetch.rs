//! The fetch itself: vet each hop, connect only to the vetted addresses, follow redirects by
//! hand, read a capped body.
//!
//! reqwest's own redirect following would connect to the next host without asking the address
//! policy, so it is off; each Location is resolved here, vetted like the first URL and fetched
//! with a client pinned to that hop's checked addresses. The body is read chunk by chunk and
//! reading stops at the download cap, so a huge or endless response costs at most the cap.

use std::time::Duration;

use reqwest::header::{CONTENT_TYPE, LOCATION};
use reqwest::{StatusCode, Url};

use super::client;
use super::guard::{self, AddressPolicy, GuardError};

/// Redirects followed at most; one more is an error.
pub(crate) const MAX_REDIRECTS: usize = 5;

/// Bytes read from an error response, for its excerpt.
const ERROR_BODY_CAP: usize = 64 * 1024;

/// A response that ended the redirect chain, with its (possibly cut) body.
#[derive(Debug)]
pub(crate) struct Fetched {
    /// The URL that answered (after redirects).
    pub(crate) url: Url,
    /// Redirects followed to get there.
    pub(crate) redirects: usize,
    /// HTTP status.
    pub(crate) status: StatusCode,
    /// The Content-Type header, if any (lossy if not visible ASCII).
    pub(crate) content_type: Option<String>,
    /// The Content-Length header, if any.
    pub(crate) content_length: Option<u64>,
    /// The body, at most the cap.
    pub(crate) body: Vec<u8>,
    /// Reading stopped at the cap while more was coming.
    pub(crate) cut: bool,
}

/// Why a fetch failed. The display text is what the model reads.
#[derive(Debug, thiserror::Error)]
pub(crate) enum FetchError {
    /// Refused by the address policy, or an unusable URL.
    #[error(transparent)]
    Guard(#[from] GuardError),
    /// The redirect chain is longer than [`MAX_REDIRECTS`].
    #[error(
        "{start} redirected more than {MAX_REDIRECTS} times (last hop: {last}); web_fetch stops \
         there. Fetch the final URL directly if you know it"
    )]
    TooManyRedirects {
        /// The URL the model asked for.
        start: Url,
        /// The URL that answered with the sixth redirect.
        last: Url,
    },
    /// Building the client, connecting, sending or reading failed.
    #[error("fetching {url} failed: {reason}; check the URL, or try again later")]
    Request {
        /// The hop being fetched.
        url: Url,
        /// The error and its causes.
        reason: String,
    },
}

/// What is sent besides the URL: web_fetch sends a plain GET and follows redirects; a search
/// backend's API call sends its own method, headers (its key) and body, and follows none (a
/// redirect would carry the key to another host).
#[derive(Debug, Clone)]
pub(crate) struct Outgoing {
    /// GET or POST.
    pub(crate) method: reqwest::Method,
    /// Request headers (name, value).
    pub(crate) headers: Vec<(&'static str, String)>,
    /// The request body, if any.
    pub(crate) body: Option<Vec<u8>>,
    /// Redirects followed at most; `0` returns a redirect response as it is.
    pub(crate) max_redirects: usize,
}

impl Outgoing {
    /// web_fetch's request: GET, no extra header, up to [`MAX_REDIRECTS`] redirects.
    pub(crate) fn get() -> Self {
        Self {
            method: reqwest::Method::GET,
            headers: Vec::new(),
            body: None,
            max_redirects: MAX_REDIRECTS,
        }
    }
}

/// Fetches `start`, following at most [`MAX_REDIRECTS`] redirects, every hop vetted by
/// `policy`. A success body is read up to `max_download` bytes; an error body only enough for
/// an excerpt. `timeout` bounds each request; the caller bounds the whole fetch.
pub(crate) async fn fetch(
    start: Url,
    policy: &AddressPolicy,
    max_download: usize,
    timeout: Duration,
) -> Result<Fetched, FetchError> {
    send(start, &Outgoing::get(), policy, max_download, timeout).await
}

/// [`fetch`] with the request `outgoing` describes: the one HTTP path of the tools that reach
/// outside the machine (web_fetch, web_search), every hop vetted and pinned, the body capped.
pub(crate) async fn send(
    start: Url,
    outgoing: &Outgoing,
    policy: &AddressPolicy,
    max_download: usize,
    timeout: Duration,
) -> Result<Fetched, FetchError> {
    let mut url = start.clone();
    let mut redirects = 0;
    loop {
        let target = policy.vet(&url).await?;
        let request_error = |url: &Url, e: reqwest::Error| FetchError::Request {
            url: url.clone(),
            reason: describe(&e),
        };
        let client = client::build(&target, timeout).map_err(|e| request_error(&url, e))?;
        let mut request = client.request(outgoing.method.clone(), url.clone());
        for (name, value) in &outgoing.headers {
            request = request.header(*name, value.as_str());
        }
        if let Some(body) = &outgoing.body {
            request = request.body(body.clone());
        }
        let mut response = request.send().await.map_err(|e| request_error(&url, e))?;
        let status = response.status();
        if status.is_redirection()
            && outgoing.max_redirects > 0
            && let Some(location) = response.headers().get(LOCATION)
        {
            if redirects == outgoing.max_redirects {
                return Err(FetchError::TooManyRedirects { start, last: url });
            }
            let location = String::from_utf8_lossy(location.as_bytes()).into_owned();
            url = guard::next_hop(&url, &location)?;
            redirects += 1;
            continue;
        }
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
        let content_length = response.content_length();
        let cap = if status.is_success() {
            max_download
        } else {
            max_download.min(ERROR_BODY_CAP)
        };
        let mut body = Vec::new();
        let mut cut = false;
        while let Some(chunk) = response.chunk().await.map_err(|e| request_error(&url, e))? {
            let room = cap - body.len();
            if chunk.len() > room {
                body.extend_from_slice(&chunk[..room]);
                cut = true;
                break;
            }
            body.extend_from_slice(&chunk);
        }
        return Ok(Fetched {
            url,
            redirects,
            status,
            content_type,
            content_length,
            body,
            cut,
        });
    }
}

/// An error with its causes: reqwest's own text ("error sending request") says little alone.
fn describe(e: &reqwest::Error) -> String {
    let mut text = if e.is_timeout() {
        "the server did not answer in time".to_string()
    } else if e.is_connect() {
        "could not connect".to_string()
    } else {
        e.to_string()
    };
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use std::io::{Read, Write};
    use std::net::TcpListener;

    use super::*;

    /// A one-route test server on 127.0.0.1 answering every request with `response`.
    fn serve(response: &'static str) -> u16 {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut buf = [0u8; 4096];
                let mut seen = Vec::new();
                while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => seen.extend_from_slice(&buf[..n]),
                    }
                }
                let _ = stream.write_all(response.as_bytes());
            }
        });
        port
    }

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[tokio::test]
    async fn a_redirect_from_an_allowed_hop_to_a_refused_address_is_refused() {
        // The test server is trusted; where it redirects to is not.
        for location in [
            "http://169.254.169.254/latest/meta-data",
            "http://10.0.0.1/",
            "http://127.0.0.2/",
            "http://[::1]/",
        ] {
            let response: &'static str = Box::leak(
                format!(
                    "HTTP/1.1 302 Found\r\nLocation: {location}\r\nContent-Length: 0\r\n\
                     Connection: close\r\n\r\n"
                )
                .into_boxed_str(),
            );
            let port = serve(response);
            let policy = AddressPolicy::strict_except("127.0.0.1".parse().unwrap());
            let start = url(&format!("http://127.0.0.1:{port}/"));
            let err = fetch(start, &policy, 1024, Duration::from_secs(10))
                .await
                .unwrap_err();
            assert!(
                matches!(err, FetchError::Guard(GuardError::Refused { .. })),
                "{location}: {err}"
            );
            assert!(err.to_string().contains("allow_local_fetch"), "{err}");
        }
    }

    #[tokio::test]
    async fn a_redirect_to_another_scheme_is_refused() {
        let port = serve(
            "HTTP/1.1 301 Moved\r\nLocation: ftp://example.com/x\r\nContent-Length: 0\r\n\
             Connection: close\r\n\r\n",
        );
        let policy = AddressPolicy::strict_except("127.0.0.1".parse().unwrap());
        let err = fetch(
            url(&format!("http://127.0.0.1:{port}/")),
            &policy,
            1024,
            Duration::from_secs(10),
        )
        .await
        .unwrap_err();
        assert!(err.to_string().contains("`ftp:`"), "{err}");
    }

    #[tokio::test]
    async fn the_body_stops_at_the_cap() {
        let port = serve(
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 20\r\n\
             Connection: close\r\n\r\n0123456789abcdefghij",
        );
        let policy = AddressPolicy::strict_except("127.0.0.1".parse().unwrap());
        let start = url(&format!("http://127.0.0.1:{port}/"));
        let got = fetch(start.clone(), &policy, 8, Duration::from_secs(10))
            .await
            .unwrap();
        assert_eq!(got.body, b"01234567");
        assert!(got.cut);
        let whole = fetch(start, &policy, 20, Duration::from_secs(10))
            .await
            .unwrap();
        assert_eq!(whole.body.len(), 20);
        assert!(!whole.cut);
        assert_eq!(whole.content_length, Some(20));
        assert_eq!(whole.content_type.as_deref(), Some("text/plain"));
    }
}
