//! AWS Signature Version 4 for one request, on ring's HMAC-SHA256 and SHA-256 (already built
//! for rustls: no new crate; docs/benchmarks.md has the comparison with `aws-sigv4`).
//!
//! The canonical request is built as AWS specifies for every service but S3: the path's
//! segments URI-encoded once more (a model id's `%3A` is signed as `%253A`), the query's pairs
//! sorted, header names lowercased, values trimmed with inner runs of spaces collapsed, repeated
//! headers joined with `,`, and the payload's SHA-256. The unit tests hold it to AWS's published
//! test suite (`get-vanilla`, `post-vanilla`, `get-header-key-duplicate`...).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::provider::http::percent_encode;
use ring::{digest, hmac};

/// An access key pair and, for temporary credentials, the session token. `Debug` shows the
/// access key id only.
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    /// `AKIA...` / `ASIA...`.
    pub access_key_id: String,
    /// The secret key: never sent, only used to derive the signing key.
    pub secret_access_key: String,
    /// `x-amz-security-token`, for temporary credentials.
    pub session_token: Option<String>,
    /// When temporary credentials stop working (re-read shortly before).
    pub expires: Option<SystemTime>,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("access_key_id", &self.access_key_id)
            .field("secret_access_key", &"[redacted]")
            .field(
                "session_token",
                &self.session_token.as_ref().map(|_| "[redacted]"),
            )
            .field("expires", &self.expires)
            .finish()
    }
}

/// What is signed: the request as it goes on the wire.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    /// `GET`, `POST`.
    pub method: &'a str,
    /// `host[:port]` exactly as the `Host` header will carry it.
    pub host: &'a str,
    /// The path as sent (already percent-encoded where needed).
    pub path: &'a str,
    /// The query string without `?` (may be empty).
    pub query: &'a str,
    /// Further headers to sign (names in any case; a name may repeat).
    pub headers: &'a [(String, String)],
    /// The body.
    pub payload: &'a [u8],
}

/// Where and when: `us-east-1`, `bedrock`, the signing time.
#[derive(Debug, Clone, Copy)]
pub struct Scope<'a> {
    /// The region.
    pub region: &'a str,
    /// The signing name of the service (`bedrock` for Bedrock Runtime).
    pub service: &'a str,
    /// The time of the signature (`x-amz-date`).
    pub time: SystemTime,
}

/// The headers to add to the request: `x-amz-date`, `x-amz-security-token` (when the
/// credentials have one) and `authorization`.
pub fn sign(
    request: &Request<'_>,
    scope: &Scope<'_>,
    credentials: &Credentials,
) -> Vec<(String, String)> {
    let (date, stamp) = amz_date(scope.time);
    let mut added = vec![("x-amz-date".to_string(), stamp.clone())];
    if let Some(token) = &credentials.session_token {
        added.push(("x-amz-security-token".to_string(), token.clone()));
    }
    let mut all: Vec<(String, String)> = vec![("host".to_string(), request.host.to_string())];
    all.extend(request.headers.iter().cloned());
    all.extend(added.iter().cloned());
    let (canonical_headers, signed_headers) = canonical_headers(&all);
    let canonical = format!(
        "{}\n{}\n{}\n{}\n{}\n{}",
        request.method,
        canonical_uri(request.path),
        canonical_query(request.query),
        canonical_headers,
        signed_headers,
        hex(digest::digest(&digest::SHA256, request.payload).as_ref()),
    );
    let credential_scope = format!("{date}/{}/{}/aws4_request", scope.region, scope.service);
    let string_to_sign = format!(
        "AWS4-HMAC-SHA256\n{stamp}\n{credential_scope}\n{}",
        hex(digest::digest(&digest::SHA256, canonical.as_bytes()).as_ref())
    );
    let mut key = mac(
        format!("AWS4{}", credentials.secret_access_key).as_bytes(),
        date.as_bytes(),
    );
    for part in [scope.region, scope.service, "aws4_request"] {
        key = mac(&key, part.as_bytes());
    }
    let signature = hex(&mac(&key, string_to_sign.as_bytes()));
    added.push((
        "authorization".to_string(),
        format!(
            "AWS4-HMAC-SHA256 Credential={}/{credential_scope}, SignedHeaders={signed_headers}, Signature={signature}",
            credentials.access_key_id
        ),
    ));
    added
}

fn mac(key: &[u8], data: &[u8]) -> Vec<u8> {
    hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, key), data)
        .as_ref()
        .to_vec()
}

/// Lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        out.push(char::from(DIGITS[usize::from(byte >> 4)]));
        out.push(char::from(DIGITS[usize::from(byte & 15)]));
    }
    out
}

/// Each segment of the path as sent encoded once more (not normalised: `//` stays).
fn canonical_uri(path: &str) -> String {
    if path.is_empty() {
        return "/".to_string();
    }
    path.split('/')
        .map(percent_encode)
        .collect::<Vec<_>>()
        .join("/")
}

/// The query's `name=value` pairs sorted (by name, then value), each encoded.
fn canonical_query(query: &str) -> String {
    let mut pairs: Vec<(String, String)> = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            (
                percent_encode(&percent_decode(name)),
                percent_encode(&percent_decode(value)),
            )
        })
        .collect();
    pairs.sort();
    pairs
        .iter()
        .map(|(n, v)| format!("{n}={v}"))
        .collect::<Vec<_>>()
        .join("&")
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(h), Some(l)) = (hex_value(bytes[i + 1]), hex_value(bytes[i + 2]))
        {
            out.push(h * 16 + l);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex_value(byte: u8) -> Option<u8> {
    char::from(byte)
        .to_digit(16)
        .and_then(|d| u8::try_from(d).ok())
}

/// `name:value\n` lines sorted by name (repeated names joined with `,` in order), and the
/// `;`-joined names.
fn canonical_headers(headers: &[(String, String)]) -> (String, String) {
    let mut merged: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for (name, value) in headers {
        merged
            .entry(name.trim().to_ascii_lowercase())
            .or_default()
            .push(value.split_whitespace().collect::<Vec<_>>().join(" "));
    }
    let mut lines = String::new();
    for (name, values) in &merged {
        lines.push_str(name);
        lines.push(':');
        lines.push_str(&values.join(","));
        lines.push('\n');
    }
    let names = merged.keys().cloned().collect::<Vec<_>>().join(";");
    (lines, names)
}

/// `(YYYYMMDD, YYYYMMDDTHHMMSSZ)` in UTC.
pub fn amz_date(time: SystemTime) -> (String, String) {
    let secs = time
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_secs();
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let date = format!("{year:04}{month:02}{day:02}");
    let stamp = format!(
        "{date}T{:02}{:02}{:02}Z",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60
    );
    (date, stamp)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// The credentials, scope and time of AWS's Signature Version 4 test suite.
    fn suite() -> (Credentials, SystemTime) {
        (
            Credentials {
                access_key_id: "AKIDEXAMPLE".into(),
                secret_access_key: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY".into(),
                session_token: None,
                expires: None,
            },
            // 2015-08-30T12:36:00Z
            UNIX_EPOCH + Duration::from_secs(1_440_938_160),
        )
    }

    fn signature(method: &str, path: &str, query: &str, headers: &[(&str, &str)]) -> String {
        signature_with(method, path, query, headers, None)
    }

    fn signature_with(
        method: &str,
        path: &str,
        query: &str,
        headers: &[(&str, &str)],
        token: Option<&str>,
    ) -> String {
        let (mut credentials, time) = suite();
        credentials.session_token = token.map(str::to_string);
        let headers: Vec<(String, String)> = headers
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect();
        let added = sign(
            &Request {
                method,
                host: "example.amazonaws.com",
                path,
                query,
                headers: &headers,
                payload: b"",
            },
            &Scope {
                region: "us-east-1",
                service: "service",
                time,
            },
            &credentials,
        );
        assert_eq!(added[0], ("x-amz-date".into(), "20150830T123600Z".into()));
        let authorization = &added.last().unwrap().1;
        assert!(
            authorization.starts_with(
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders="
            ),
            "{authorization}"
        );
        authorization.clone()
    }

    fn ends(authorization: &str, signed: &str, signature: &str) {
        assert!(
            authorization.ends_with(&format!("SignedHeaders={signed}, Signature={signature}")),
            "{authorization}"
        );
    }

    #[test]
    fn aws_test_suite_vanilla_requests() {
        ends(
            &signature("GET", "/", "", &[]),
            "host;x-amz-date",
            "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31",
        );
        ends(
            &signature("POST", "/", "", &[]),
            "host;x-amz-date",
            "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b",
        );
        // get-vanilla-query-order-key-case: pairs sorted.
        ends(
            &signature("GET", "/", "Param2=value2&Param1=value1", &[]),
            "host;x-amz-date",
            "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500",
        );
        // get-unreserved: unreserved characters are not encoded.
        ends(
            &signature(
                "GET",
                "/-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
                "",
                &[],
            ),
            "host;x-amz-date",
            "07ef7494c76fa4850883e2b006601f940f8a34d404d0cfa977f52a65bbf5f24f",
        );
    }

    #[test]
    fn aws_test_suite_headers() {
        // get-header-key-duplicate: one name three times, joined in order.
        ends(
            &signature(
                "GET",
                "/",
                "",
                &[
                    ("My-Header1", "value2"),
                    ("My-Header1", "value2"),
                    ("My-Header1", "value1"),
                ],
            ),
            "host;my-header1;x-amz-date",
            "c9d5ea9f3f72853aea855b47ea873832890dbdd183b4468f858259531a5138ea",
        );
        // post-header-value-case: values keep their case.
        ends(
            &signature("POST", "/", "", &[("My-Header1", "VALUE1")]),
            "host;my-header1;x-amz-date",
            "cdbc9802e29d2942e5e10b5bccfdd67c5f22c7c4e8ae67b53629efa58b974b7d",
        );
        // get-header-value-trim: trimmed, inner runs of spaces collapsed.
        ends(
            &signature(
                "GET",
                "/",
                "",
                &[("My-Header1", " value1"), ("My-Header2", " \"a   b   c\"")],
            ),
            "host;my-header1;my-header2;x-amz-date",
            "acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736",
        );
    }

    #[test]
    fn aws_test_suite_session_token_is_signed() {
        // post-sts-header-after.
        let token = "AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAeMicRXmxfpSPfIeoIYRqTflfKD8YUuwthAx7mSEI/qkPpKPi/kMcGdQrmGdeehM4IC1NtBmUpp2wUE8phUZampKsburEDy0KPkyQDYwT7WZ0wq5VSXDvp75YU9HFvlRd8Tx6q6fE8YQcHNVXAkiY9q6d+xo0rKwT38xVqr7ZD0u0iPPkUL64lIZbqBAz+scqKmlzm8FDrypNC9Yjc8fPOLn9FX9KSYvKTr4rvx3iSIlTJabIQwj2ICCR/oLxBA==";
        ends(
            &signature_with("POST", "/", "", &[], Some(token)),
            "host;x-amz-date;x-amz-security-token",
            "85d96828115b5dc0cfc3bd16ad9e210dd772bbebba041836c64533a82be05ead",
        );
    }

    #[test]
    fn model_ids_are_encoded_twice_in_the_canonical_path() {
        assert_eq!(
            canonical_uri("/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream"),
            "/model/anthropic.claude-sonnet-4-5-20250929-v1%253A0/converse-stream"
        );
        assert_eq!(
            amz_date(UNIX_EPOCH + Duration::from_secs(951_782_400)).1,
            "20000229T000000Z"
        );
        let (credentials, _) = suite();
        assert!(!format!("{credentials:?}").contains("EXAMPLEKEY"));
    }
}
