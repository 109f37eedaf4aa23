//! web_fetch through the real binary (`versus tool web_fetch`), against a tiny HTTP server the
//! test starts on 127.0.0.1. Nothing here touches the real network: refused addresses are
//! refused before any connection is attempted.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::Command;
use std::sync::Arc;

use versus::tools::{ToolContext, ToolRegistry};
use versus::workspace::DirectView;

const PAGE: &str = r#"<!DOCTYPE html>
<html><head><title>Test Page</title>
<style>.hidden-rule { color: red }</style>
<script>var trackingScript = "SCRIPT-CONTENT";</script></head>
<body><h1>Install Guide</h1>
<p>Run the installer and read the <a href="/docs">docs</a>.</p>
<script>document.write("MORE-SCRIPT")</script>
</body></html>"#;

/// A canned HTTP/1.1 response with Content-Length and Connection: close.
fn response(status: &str, headers: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
    let mut out = format!("HTTP/1.1 {status}\r\n");
    for (name, value) in headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    ));
    let mut out = out.into_bytes();
    out.extend_from_slice(body);
    out
}

/// The answer of the test server for one request path.
fn route(path: &str, request: &str) -> Vec<u8> {
    let html = [("Content-Type", "text/html; charset=utf-8")];
    let plain = [("Content-Type", "text/plain")];
    if path == "/page" {
        return response("200 OK", &html, PAGE.as_bytes());
    }
    if path == "/json" {
        return response(
            "200 OK",
            &[("Content-Type", "application/json")],
            br#"{"name": "versus", "ok": true}"#,
        );
    }
    if path == "/image" {
        return response(
            "200 OK",
            &[("Content-Type", "image/png")],
            b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01",
        );
    }
    if path == "/untyped-html" {
        return response("200 OK", &[], PAGE.as_bytes());
    }
    if path == "/latin1" {
        return response(
            "200 OK",
            &[("Content-Type", "text/plain; charset=iso-8859-1")],
            b"caf\xe9",
        );
    }
    if path == "/agent" {
        let agent = request
            .lines()
            .find_map(|l| {
                let (name, value) = l.split_once(':')?;
                name.eq_ignore_ascii_case("user-agent")
                    .then(|| value.trim().to_string())
            })
            .unwrap_or_default();
        return response("200 OK", &plain, format!("agent={agent}").as_bytes());
    }
    if path == "/missing" {
        return response("404 Not Found", &html, b"<h1>No such page here</h1>");
    }
    if path == "/broken" {
        return response("500 Internal Server Error", &plain, b"database exploded");
    }
    if path == "/stall" {
        // Answers far later than any test waits.
        std::thread::sleep(std::time::Duration::from_secs(30));
        return response("200 OK", &plain, b"too late");
    }
    if path == "/big" {
        return response("200 OK", &plain, "x".repeat(10_000).as_bytes());
    }
    if path == "/long-text" {
        return response("200 OK", &plain, "é".repeat(1000).as_bytes());
    }
    if let Some(n) = path.strip_prefix("/hops/") {
        // /hops/N redirects N times before arriving.
        let n: usize = n.parse().unwrap();
        if n == 0 {
            return response("200 OK", &plain, b"arrived after the redirects");
        }
        let location = format!("/hops/{}", n - 1);
        return response("302 Found", &[("Location", location.as_str())], b"");
    }
    response("404 Not Found", &plain, b"unknown test route")
}

/// Starts the test server on 127.0.0.1 and returns its base URL.
fn server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            std::thread::spawn(move || {
                let mut seen = Vec::new();
                let mut buf = [0u8; 4096];
                while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => seen.extend_from_slice(&buf[..n]),
                    }
                }
                let request = String::from_utf8_lossy(&seen).into_owned();
                let path = request.split_whitespace().nth(1).unwrap_or("/").to_string();
                let _ = stream.write_all(&route(&path, &request));
            });
        }
    });
    format!("http://127.0.0.1:{port}")
}

/// Runs `versus tool web_fetch` and returns (exit code, stdout).
fn fetch(url: &str, allow_local: bool) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_versus"));
    cmd.arg("tool")
        .arg("web_fetch")
        .arg("--dir")
        .arg(dir.path())
        .arg("--args")
        .arg(serde_json::json!({ "url": url }).to_string());
    if allow_local {
        cmd.arg("--allow-local-fetch");
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    (out.status.code().unwrap(), stdout)
}

fn assert_refused(url: &str, shown: &str) {
    let (code, out) = fetch(url, false);
    assert_eq!(code, 1, "{url}: {out}");
    assert!(out.contains("refused to fetch"), "{url}: {out}");
    assert!(out.contains(shown), "{url}: {out}");
    assert!(out.contains("allow_local_fetch"), "{url}: {out}");
}

#[test]
fn the_local_server_is_refused_without_allow_local_fetch_and_reachable_with_it() {
    let base = server();
    assert_refused(&format!("{base}/page"), "127.0.0.1 is a loopback address");
    let (code, out) = fetch(&format!("{base}/json"), true);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains(r#"{"name": "versus", "ok": true}"#), "{out}");
}

#[test]
fn local_private_and_metadata_addresses_are_refused_before_connecting() {
    assert_refused("http://127.0.0.1/", "loopback");
    assert_refused("http://[::1]/", "::1 is a loopback address");
    assert_refused("http://10.0.0.1/", "10.0.0.1 is a private network address");
    assert_refused("http://192.168.1.1/admin", "private network");
    assert_refused("http://169.254.169.254/latest/meta-data", "cloud metadata");
    assert_refused("http://metadata.google.internal/", "metadata");
    assert_refused("http://0.0.0.0:8080/", "unspecified");
}

#[test]
fn special_purpose_blocks_are_refused_before_connecting() {
    assert_refused("http://198.18.0.1/", "Benchmarking, 198.18.0.0/15");
    assert_refused("http://192.0.0.8/", "192.0.0.0/24");
    assert_refused("http://203.0.113.9/", "Documentation");
    assert_refused("http://[2002:c0a8:101::1]/", "6to4, 2002::/16");
    assert_refused("http://[64:ff9b:1::a00:1]/", "64:ff9b:1::/48");
    assert_refused("http://[2001:db8::1]/", "2001:db8::/32");
}

#[test]
fn allow_local_fetch_never_opens_metadata_or_link_local_addresses() {
    for (url, shown) in [
        ("http://169.254.169.254/latest/meta-data", "cloud metadata"),
        ("http://[fd00:ec2::254]/latest/meta-data", "cloud metadata"),
        ("http://metadata.google.internal/", "metadata"),
        ("http://169.254.10.1/", "link-local"),
        ("http://198.18.0.1/", "Benchmarking"),
    ] {
        let (code, out) = fetch(url, true);
        assert_eq!(code, 1, "{url}: {out}");
        assert!(out.contains("refused to fetch"), "{url}: {out}");
        assert!(out.contains(shown), "{url}: {out}");
    }
}

#[test]
fn a_host_name_resolving_to_loopback_is_refused() {
    let base = server();
    let port = base.rsplit(':').next().unwrap();
    assert_refused(
        &format!("http://localhost:{port}/page"),
        "`localhost` resolves to",
    );
}

#[test]
fn other_schemes_are_refused_with_the_scheme_named() {
    let (code, out) = fetch("ftp://example.com/file.txt", true);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("`ftp:`"), "{out}");
    let (code, out) = fetch("file:///etc/passwd", true);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("`file:`") && out.contains("read_file"),
        "{out}"
    );
    let (code, out) = fetch("example.com/docs", true);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("https://example.com/docs"), "{out}");
}

#[test]
fn html_becomes_readable_text_under_a_header_line() {
    let base = server();
    let (code, out) = fetch(&format!("{base}/page"), true);
    assert_eq!(code, 0, "{out}");
    let first = out.lines().next().unwrap();
    assert_eq!(
        first,
        format!("URL: {base}/page | status: 200 OK | content-type: text/html; charset=utf-8")
    );
    for present in ["Title: Test Page", "Install Guide", "Run the installer"] {
        assert!(out.contains(present), "{present} missing: {out}");
    }
    // The link stays readable, its target made absolute so it can be fetched as it is.
    assert!(out.contains(&format!("]: {base}/docs")), "{out}");
    for absent in [
        "SCRIPT-CONTENT",
        "MORE-SCRIPT",
        "hidden-rule",
        "<h1>",
        "<p>",
        "</",
    ] {
        assert!(!out.contains(absent), "{absent} present: {out}");
    }
}

#[test]
fn untyped_html_is_sniffed_and_other_types_are_handled() {
    let base = server();
    let (code, out) = fetch(&format!("{base}/untyped-html"), true);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("content-type: (none)"), "{out}");
    assert!(
        out.contains("Install Guide") && !out.contains("<h1>"),
        "{out}"
    );

    let (code, out) = fetch(&format!("{base}/image"), true);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("[binary content: image/png, 20 bytes]"),
        "{out}"
    );
    assert!(!out.contains("PNG"), "{out}");

    let (code, out) = fetch(&format!("{base}/latin1"), true);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("café"), "{out}");
}

#[test]
fn the_user_agent_names_versus() {
    let base = server();
    let (code, out) = fetch(&format!("{base}/agent"), true);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(&format!("agent=versus/{}", env!("CARGO_PKG_VERSION"))),
        "{out}"
    );
}

#[test]
fn redirects_are_followed_up_to_five_times() {
    let base = server();
    let (code, out) = fetch(&format!("{base}/hops/1"), true);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.starts_with(&format!("URL: {base}/hops/0 | status: 200 OK")),
        "{out}"
    );
    assert!(out.contains("after 1 redirect\n"), "{out}");
    assert!(out.contains("arrived after the redirects"), "{out}");

    let (code, out) = fetch(&format!("{base}/hops/5"), true);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("after 5 redirects"), "{out}");

    let (code, out) = fetch(&format!("{base}/hops/6"), true);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("redirected more than 5 times"), "{out}");
    assert!(!out.contains("arrived"), "{out}");
}

#[test]
fn error_statuses_are_error_results_with_an_excerpt() {
    let base = server();
    let (code, out) = fetch(&format!("{base}/missing"), true);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("HTTP 404 Not Found"), "{out}");
    assert!(out.contains("No such page here"), "{out}");
    assert!(!out.contains("<h1>"), "{out}");

    let (code, out) = fetch(&format!("{base}/broken"), true);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("HTTP 500 Internal Server Error"), "{out}");
    assert!(
        out.contains("database exploded") && out.contains("try again later"),
        "{out}"
    );
}

/// Runs web_fetch through the library, with the context adjusted by `adjust`.
fn fetch_with(url: &str, adjust: impl FnOnce(&mut ToolContext)) -> (bool, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut ctx = ToolContext::new(Arc::new(DirectView::new(dir.path()).unwrap()));
    ctx.limits.allow_local_fetch = true;
    adjust(&mut ctx);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let args = serde_json::json!({ "url": url }).to_string();
    let out = runtime.block_on(ToolRegistry::builtin().dispatch("web_fetch", &args, &ctx));
    (out.is_error, out.text)
}

/// Runs web_fetch through the library with lowered size limits.
fn fetch_with_limits(url: &str, max_download: usize, max_return: usize) -> (bool, String) {
    fetch_with(url, |ctx| {
        ctx.limits.fetch_max_download = max_download;
        ctx.limits.fetch_max_return = max_return;
    })
}

#[test]
fn a_server_that_does_not_answer_hits_the_timeout() {
    let base = server();
    let (is_error, out) = fetch_with(&format!("{base}/stall"), |ctx| {
        ctx.limits.fetch_timeout = std::time::Duration::from_millis(300);
    });
    assert!(is_error, "{out}");
    assert!(out.contains("/stall"), "{out}");
    assert!(
        out.contains("in time") || out.contains("timed out"),
        "{out}"
    );
    assert!(!out.contains("too late"), "{out}");
}

#[test]
fn a_cancelled_call_stops() {
    let base = server();
    let (is_error, out) = fetch_with(&format!("{base}/stall"), |ctx| ctx.cancel.cancel());
    assert!(is_error, "{out}");
    assert!(out.contains("cancelled"), "{out}");
}

#[test]
fn a_body_over_the_download_cap_is_cut_with_a_notice() {
    let base = server();
    let (is_error, out) = fetch_with_limits(&format!("{base}/big"), 1000, 100 * 1024);
    assert!(!is_error, "{out}");
    assert!(out.contains(&"x".repeat(1000)), "{out}");
    assert!(!out.contains(&"x".repeat(1001)), "{out}");
    assert!(
        out.contains("[page cut: only the first 1000 bytes were downloaded of 10000 bytes"),
        "{out}"
    );

    let (is_error, out) = fetch_with_limits(&format!("{base}/big"), 1 << 20, 100 * 1024);
    assert!(!is_error, "{out}");
    assert!(out.contains(&"x".repeat(10_000)), "{out}");
    assert!(!out.contains("cut"), "{out}");
}

#[test]
fn text_over_the_return_limit_is_cut_on_a_char_boundary_with_a_notice() {
    let base = server();
    // 1000 "é" are 2000 bytes; 101 bytes hold 50 of them.
    let (is_error, out) = fetch_with_limits(&format!("{base}/long-text"), 1 << 20, 101);
    assert!(!is_error, "{out}");
    assert!(out.contains(&"é".repeat(50)), "{out}");
    assert!(!out.contains(&"é".repeat(51)), "{out}");
    assert!(
        out.contains("[text cut: showing the first 100 bytes of 2000 bytes of text"),
        "{out}"
    );
}
