//! web_fetch: one URL fetched over http(s) and returned as text the model can read.
//!
//! The tool reaches outside the machine, so safety comes before convenience: `guard` decides
//! which addresses may be contacted (DNS results included, every redirect hop included),
//! `client` builds a client that can only connect to those addresses, `fetch` follows redirects
//! by hand and caps the download, `content` and `html` turn the bytes into text. This module
//! holds the tool definition and puts the answer together: a one-line header (final URL,
//! status, content type), the text cut to the return limit, and a notice for each cut.

mod client;
mod content;
mod fetch;
mod guard;
mod html;

use std::sync::Arc;

use reqwest::Url;
use serde::Deserialize;
use serde_json::json;

use super::registry::{Handler, Tool, typed};
use super::{ToolClass, ToolContext, ToolError, ToolOutput, ToolSpec};
use fetch::Fetched;
pub(super) use fetch::{Fetched as Answer, Outgoing, send};
pub(super) use guard::AddressPolicy;
pub(super) use html::inline_text;

/// Characters of an error response's text shown to the model.
const ERROR_EXCERPT_CHARS: usize = 500;

/// The web_fetch tool for the registry: its definition and its handler.
pub(crate) fn tool() -> Arc<dyn Tool> {
    typed(
        ToolSpec {
            name: "web_fetch",
            description: "Fetch a web page or file by URL (http or https) and return it as text. \
                HTML is converted to readable text with links listed as numbered footnotes; \
                JSON, XML, JavaScript and other text come back as they are; binary files \
                (images, PDFs, archives) are only described. The first line gives the final \
                URL after redirects, the HTTP status and the content type. At most 5 MB is \
                downloaded and 100 KB of text returned (defaults); longer pages are cut with \
                a notice. Local, private and cloud metadata addresses are refused unless local \
                fetch is allowed."
                .to_string(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "url": {
                        "type": "string",
                        "description": "Absolute http:// or https:// URL to fetch."
                    }
                },
                "required": ["url"],
                "additionalProperties": false
            }),
            guidance: "web_fetch: fetch documentation or references by URL when the project \
                does not have them; each model's fetch is a separate real request to that \
                server, so never fetch URLs that change anything."
                .to_string(),
            class: ToolClass::ExternalEffect,
        },
        WebFetch,
    )
}

/// The model's arguments, after the schema check.
#[derive(Debug, Deserialize)]
pub(crate) struct Args {
    /// The URL to fetch.
    url: String,
}

struct WebFetch;

impl Handler for WebFetch {
    type Args = Args;
    const CONCURRENT: bool = true;

    async fn run(&self, args: Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let start = parse_url(&args.url)?;
        guard::check_scheme(&start).map_err(|e| ToolError::failed(e.to_string()))?;
        let limits = &ctx.limits;
        let policy = AddressPolicy::new(limits.allow_local_fetch);
        let timeout = limits.fetch_timeout;
        let fetching = fetch::fetch(start.clone(), &policy, limits.fetch_max_download, timeout);
        let fetched = tokio::select! {
            _ = ctx.cancel.cancelled() => {
                return Err(ToolError::failed(format!("fetching {start} was cancelled")));
            }
            result = tokio::time::timeout(timeout, fetching) => match result {
                Err(_) => {
                    return Err(ToolError::failed(format!(
                        "fetching {start} timed out after {} s; the server is slow or \
                         unreachable, try again later or another URL",
                        timeout.as_secs_f64()
                    )));
                }
                Ok(Err(e)) => return Err(ToolError::failed(e.to_string())),
                Ok(Ok(f)) => f,
            },
        };
        let max_download = limits.fetch_max_download;
        let max_return = limits.fetch_max_return;
        // Rendering a few MB of HTML is CPU work: keep it off the async workers.
        tokio::task::spawn_blocking(move || answer(&fetched, max_download, max_return))
            .await
            .map_err(|e| ToolError::failed(format!("web_fetch stopped unexpectedly: {e}")))?
    }
}

/// Parses the model's URL, with a hint for the usual mistake (no scheme).
fn parse_url(raw: &str) -> Result<Url, ToolError> {
    let raw = raw.trim();
    Url::parse(raw).map_err(|e| {
        let hint = if !raw.contains(':') {
            format!("; add the scheme, e.g. https://{raw}")
        } else {
            "; give an absolute http:// or https:// URL".to_string()
        };
        ToolError::failed(format!("invalid URL `{raw}`: {e}{hint}"))
    })
}

/// The model's result for a response: the header line, the text, and the cut notices. Non-2xx
/// statuses are error results with an excerpt of what the server said.
fn answer(f: &Fetched, max_download: usize, max_return: usize) -> Result<ToolOutput, ToolError> {
    let content_type = f.content_type.as_deref();
    if !f.status.is_success() {
        let excerpt = excerpt(&content::render(content_type, &f.body, None, &f.url));
        return Err(ToolError::failed(format!(
            "HTTP {} from {}{}; check the URL{}",
            status_text(f),
            f.url,
            if excerpt.is_empty() {
                String::new()
            } else {
                format!(". The server said: {excerpt}")
            },
            if f.status.is_server_error() {
                " or try again later"
            } else {
                ""
            }
        )));
    }
    let mut header = format!(
        "URL: {} | status: {} | content-type: {}",
        f.url,
        status_text(f),
        content_type.unwrap_or("(none)")
    );
    if f.redirects > 0 {
        let s = if f.redirects == 1 { "" } else { "s" };
        header.push_str(&format!(" | after {} redirect{s}", f.redirects));
    }
    let total = f.content_length.or((!f.cut).then_some(f.body.len() as u64));
    let text = content::render(content_type, &f.body, total, &f.url);
    let (shown, text_cut) = cut_at_char(&text, max_return);
    let mut out = format!("{header}\n\n{shown}");
    if !out.ends_with('\n') {
        out.push('\n');
    }
    if f.cut {
        out.push_str(&format!(
            "\n[page cut: only the first {} were downloaded{}; the text above is incomplete]",
            bytes(max_download),
            f.content_length
                .map(|n| format!(" of {}", bytes(n as usize)))
                .unwrap_or_default()
        ));
    }
    if text_cut {
        out.push_str(&format!(
            "\n[text cut: showing the first {} of {} of text; the rest of the page is not shown]",
            bytes(shown.len()),
            bytes(text.len())
        ));
    }
    Ok(ToolOutput::ok(out))
}

/// The status as people read it: `404 Not Found`.
pub(super) fn status_text(f: &Fetched) -> String {
    match f.status.canonical_reason() {
        Some(reason) => format!("{} {reason}", f.status.as_u16()),
        None => f.status.as_u16().to_string(),
    }
}

/// The start of an error page's text, on one line.
pub(super) fn excerpt(text: &str) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.char_indices().nth(ERROR_EXCERPT_CHARS) {
        Some((at, _)) => format!("{}...", &flat[..at]),
        None => flat,
    }
}

/// `text` cut to at most `max` bytes on a character boundary, and whether it was cut.
fn cut_at_char(text: &str, max: usize) -> (&str, bool) {
    if text.len() <= max {
        return (text, false);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (&text[..end], true)
}

/// A byte count as people read it: "5 MB", "100 KB", "731 bytes".
fn bytes(n: usize) -> String {
    const KB: usize = 1024;
    const MB: usize = 1024 * 1024;
    if n >= MB && n.is_multiple_of(MB) {
        format!("{} MB", n / MB)
    } else if n >= KB && n.is_multiple_of(KB) {
        format!("{} KB", n / KB)
    } else {
        format!("{n} bytes")
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn cuts_fall_on_char_boundaries() {
        assert_eq!(cut_at_char("abc", 3), ("abc", false));
        assert_eq!(cut_at_char("abcdef", 3), ("abc", true));
        // "é" is two bytes: a cut inside it moves back before it.
        assert_eq!(cut_at_char("aé", 2), ("a", true));
        assert_eq!(cut_at_char("日本語", 4), ("日", true));
    }

    #[test]
    fn sizes_read_naturally() {
        assert_eq!(bytes(5 * 1024 * 1024), "5 MB");
        assert_eq!(bytes(100 * 1024), "100 KB");
        assert_eq!(bytes(1000), "1000 bytes");
    }

    #[test]
    fn urls_without_scheme_get_a_hint() {
        let err = parse_url("example.com/docs").unwrap_err().to_string();
        assert!(err.contains("https://example.com/docs"), "{err}");
        assert!(parse_url(" https://example.com ").is_ok());
    }

    #[test]
    fn error_excerpts_are_short_and_on_one_line() {
        let long = "word\n".repeat(1000);
        let e = excerpt(&long);
        assert!(!e.contains('\n'));
        assert!(e.ends_with("..."));
        assert!(e.chars().count() <= ERROR_EXCERPT_CHARS + 3);
    }
}
