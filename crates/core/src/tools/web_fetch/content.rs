//! From response bytes to what the model reads: HTML as text, text as text, binary described.
//!
//! The Content-Type header decides first; when it is missing or too vague
//! (`application/octet-stream`, an unknown `application/*`), the bytes are sniffed: a document
//! that starts like HTML is HTML, bytes that look binary are described, the rest is text. Text is
//! decoded with the declared charset (header, else an HTML `<meta charset>`), UTF-8 otherwise,
//! invalid sequences replaced rather than refused.

use std::borrow::Cow;

use encoding_rs::Encoding;
use reqwest::Url;

use super::html;
use crate::tools::text;

/// How a body is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Rendered to readable text.
    Html,
    /// Shown as it is.
    Text,
    /// Described in one line, never dumped.
    Binary,
}

/// The media type of a Content-Type header value, lowercased, without parameters.
pub(crate) fn essence(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// The `charset` parameter of a Content-Type header value.
pub(crate) fn charset(content_type: &str) -> Option<String> {
    content_type.split(';').skip(1).find_map(|param| {
        let (name, value) = param.split_once('=')?;
        name.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| value.trim().trim_matches(['"', '\'']).to_string())
    })
}

/// Decides how to show a body from its Content-Type (if any) and its first bytes.
pub(crate) fn classify(content_type: Option<&str>, body: &[u8]) -> Kind {
    let essence = content_type.map(essence).unwrap_or_default();
    match essence.as_str() {
        "text/html" | "application/xhtml+xml" => Kind::Html,
        "" | "application/octet-stream" | "binary/octet-stream" | "application/unknown" => {
            sniff(body)
        }
        e if is_textual(e) => Kind::Text,
        e if is_binary(e) => Kind::Binary,
        _ => sniff(body),
    }
}

fn is_textual(essence: &str) -> bool {
    essence.starts_with("text/")
        || essence.ends_with("+json")
        || essence.ends_with("+xml")
        || matches!(
            essence,
            "application/json"
                | "application/xml"
                | "application/javascript"
                | "application/ecmascript"
                | "application/x-javascript"
                | "application/x-sh"
                | "application/x-httpd-php"
                | "application/toml"
                | "application/yaml"
                | "application/x-yaml"
                | "application/sql"
                | "application/graphql"
                | "application/x-www-form-urlencoded"
                | "application/x-ndjson"
                | "application/jsonl"
        )
}

fn is_binary(essence: &str) -> bool {
    ["image/", "audio/", "video/", "font/", "model/"]
        .iter()
        .any(|p| essence.starts_with(p))
        || matches!(
            essence,
            "application/pdf"
                | "application/zip"
                | "application/gzip"
                | "application/x-gzip"
                | "application/x-tar"
                | "application/x-7z-compressed"
                | "application/x-rar-compressed"
                | "application/x-bzip2"
                | "application/x-xz"
                | "application/zstd"
                | "application/wasm"
                | "application/java-archive"
                | "application/x-msdownload"
                | "application/vnd.ms-excel"
                | "application/msword"
        )
        || essence.starts_with("application/vnd.openxmlformats")
}

/// Kind of a body whose type says nothing useful.
fn sniff(body: &[u8]) -> Kind {
    if looks_like_html(body) {
        Kind::Html
    } else if text::looks_binary(body) {
        Kind::Binary
    } else {
        Kind::Text
    }
}

/// The document starts (after a BOM, whitespace and comments) with a doctype or an `<html>`,
/// `<head>` or `<body>` tag.
pub(crate) fn looks_like_html(body: &[u8]) -> bool {
    let (_, rest) = text::split_bom(&body[..body.len().min(1024)]);
    let start = String::from_utf8_lossy(rest).to_ascii_lowercase();
    let mut s = start.trim_start();
    while let Some(after) = s.strip_prefix("<!--") {
        match after.find("-->") {
            Some(end) => s = after[end + 3..].trim_start(),
            None => return false,
        }
    }
    ["<!doctype html", "<html", "<head", "<body"]
        .iter()
        .any(|tag| s.starts_with(tag))
}

/// Decodes a text body: the declared charset, else a BOM or an HTML `<meta charset>`, else
/// UTF-8 with invalid sequences replaced.
pub(crate) fn decode<'a>(body: &'a [u8], declared: Option<&str>, kind: Kind) -> Cow<'a, str> {
    let encoding = declared
        .and_then(|label| Encoding::for_label(label.as_bytes()))
        .or_else(|| (kind == Kind::Html).then(|| meta_charset(body)).flatten())
        .unwrap_or(encoding_rs::UTF_8);
    // `decode` lets a byte-order mark override the label, as browsers do.
    let (text, _, _) = encoding.decode(body);
    text
}

/// The encoding an HTML document declares in its first KB (`<meta charset=...>` or the
/// `http-equiv` form, which both contain `charset=`).
fn meta_charset(body: &[u8]) -> Option<&'static Encoding> {
    let head = String::from_utf8_lossy(&body[..body.len().min(1024)]).to_ascii_lowercase();
    let at = head.find("charset=")? + "charset=".len();
    let label: String = head[at..]
        .trim_start_matches(['"', '\''])
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'))
        .collect();
    Encoding::for_label(label.as_bytes())
}

/// The text the model reads for a successful response body.
pub(crate) fn render(
    content_type: Option<&str>,
    body: &[u8],
    total_len: Option<u64>,
    url: &Url,
) -> String {
    if body.is_empty() {
        return "[empty body]".to_string();
    }
    let kind = classify(content_type, body);
    let declared = content_type.and_then(charset);
    match kind {
        Kind::Binary => {
            let shown = content_type.map(essence).filter(|e| !e.is_empty());
            let size = match total_len {
                Some(n) => format!("{n} bytes"),
                None => format!("{} bytes", body.len()),
            };
            format!(
                "[binary content: {}, {size}]",
                shown.as_deref().unwrap_or("unknown type")
            )
        }
        Kind::Html => html::to_text(&decode(body, declared.as_deref(), kind), url),
        Kind::Text => decode(body, declared.as_deref(), kind).into_owned(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn url() -> Url {
        Url::parse("https://example.org/").unwrap()
    }

    #[test]
    fn content_type_parts_are_parsed() {
        assert_eq!(essence("Text/HTML; charset=UTF-8"), "text/html");
        assert_eq!(
            charset("text/html; Charset=\"ISO-8859-1\"").as_deref(),
            Some("ISO-8859-1")
        );
        assert_eq!(charset("text/plain"), None);
    }

    #[test]
    fn types_are_classified() {
        let text = b"hello";
        assert_eq!(classify(Some("text/html"), text), Kind::Html);
        assert_eq!(
            classify(Some("text/plain; charset=utf-8"), text),
            Kind::Text
        );
        assert_eq!(classify(Some("application/json"), text), Kind::Text);
        assert_eq!(classify(Some("application/ld+json"), text), Kind::Text);
        assert_eq!(classify(Some("application/rss+xml"), text), Kind::Text);
        assert_eq!(classify(Some("application/javascript"), text), Kind::Text);
        assert_eq!(classify(Some("image/png"), text), Kind::Binary);
        assert_eq!(classify(Some("application/pdf"), text), Kind::Binary);
        assert_eq!(classify(Some("application/zip"), text), Kind::Binary);
        assert_eq!(
            classify(Some("application/octet-stream"), b"\0\x01\x02"),
            Kind::Binary
        );
    }

    #[test]
    fn vague_or_missing_types_are_sniffed() {
        assert_eq!(classify(None, b"  <!DOCTYPE html><p>x</p>"), Kind::Html);
        assert_eq!(classify(None, b"<!-- c --><HTML><body>x"), Kind::Html);
        assert_eq!(
            classify(Some("application/octet-stream"), b"<html>x"),
            Kind::Html
        );
        assert_eq!(classify(None, b"plain words"), Kind::Text);
        assert_eq!(
            classify(None, b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"),
            Kind::Binary
        );
        assert_eq!(
            classify(Some("application/x-custom"), b"key = 1\n"),
            Kind::Text
        );
    }

    #[test]
    fn charsets_are_honoured() {
        // "café" in Latin-1.
        let latin1 = b"caf\xe9";
        assert_eq!(decode(latin1, Some("iso-8859-1"), Kind::Text), "café");
        assert_eq!(decode(latin1, None, Kind::Text), "caf\u{fffd}");
        let html = b"<html><head><meta charset=\"windows-1252\"></head><body>caf\xe9</body>";
        assert!(decode(html, None, Kind::Html).contains("café"));
        // Shift_JIS "日本".
        assert_eq!(
            decode(b"\x93\xfa\x96\x7b", Some("shift_jis"), Kind::Text),
            "日本"
        );
        // An unknown label falls back to UTF-8.
        assert_eq!(decode("é".as_bytes(), Some("no-such"), Kind::Text), "é");
    }

    #[test]
    fn binary_bodies_are_described_not_dumped() {
        let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0";
        assert_eq!(
            render(Some("image/png"), png, None, &url()),
            format!("[binary content: image/png, {} bytes]", png.len())
        );
        assert_eq!(
            render(Some("application/pdf"), b"%PDF-1.7", Some(90_000), &url()),
            "[binary content: application/pdf, 90000 bytes]"
        );
        assert_eq!(
            render(None, b"\0\0\0\0", None, &url()),
            "[binary content: unknown type, 4 bytes]"
        );
    }

    #[test]
    fn text_and_json_are_returned_as_they_are() {
        let json = br#"{"a": [1, 2]}"#;
        assert_eq!(
            render(Some("application/json"), json, None, &url()),
            r#"{"a": [1, 2]}"#
        );
        assert_eq!(
            render(Some("text/plain"), b"", None, &url()),
            "[empty body]"
        );
    }
}
