//! What a Bedrock mock needs, written here independently of versus's own code: a SigV4 check
//! of a recorded request (as AWS verifies it: the canonical request rebuilt from what arrived,
//! the signature recomputed from the secret key), and the binary event-stream encoding with its
//! two CRC-32s, plus ConverseStream replies built from it.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use ring::{digest, hmac};
use serde_json::{Value, json};

use super::mock_server::{Recorded, Reply};

/// The credentials a mock accepts.
#[derive(Debug, Clone)]
pub struct Expected {
    pub access_key_id: &'static str,
    pub secret_access_key: &'static str,
    pub session_token: Option<&'static str>,
    pub region: &'static str,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn sha256_hex(data: &[u8]) -> String {
    hex(digest::digest(&digest::SHA256, data).as_ref())
}

fn hmac_sha256(key: &[u8], data: &str) -> Vec<u8> {
    hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, key), data.as_bytes())
        .as_ref()
        .to_vec()
}

fn encode_segment(segment: &str) -> String {
    segment
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// Checks `request`'s SigV4 signature for service `bedrock` the way AWS does; `Err` says what
/// AWS would answer.
pub fn verify_sigv4(request: &Recorded, expected: &Expected) -> Result<(), String> {
    let auth = request
        .header("authorization")
        .ok_or("MissingAuthenticationTokenException: Missing Authentication Token")?;
    let rest = auth
        .strip_prefix("AWS4-HMAC-SHA256 ")
        .ok_or("IncompleteSignatureException: not AWS4-HMAC-SHA256")?;
    let mut credential = "";
    let mut signed = "";
    let mut signature = "";
    for part in rest.split(", ") {
        if let Some(v) = part.strip_prefix("Credential=") {
            credential = v;
        } else if let Some(v) = part.strip_prefix("SignedHeaders=") {
            signed = v;
        } else if let Some(v) = part.strip_prefix("Signature=") {
            signature = v;
        }
    }
    let scope: Vec<&str> = credential.split('/').collect();
    if scope.len() != 5 || scope[4] != "aws4_request" || scope[3] != "bedrock" {
        return Err(format!(
            "IncompleteSignatureException: credential {credential}"
        ));
    }
    if scope[0] != expected.access_key_id {
        return Err(
            "UnrecognizedClientException: The security token included in the request is invalid."
                .into(),
        );
    }
    if scope[2] != expected.region {
        return Err(format!(
            "InvalidSignatureException: wrong region {}",
            scope[2]
        ));
    }
    let amz_date = request
        .header("x-amz-date")
        .ok_or("IncompleteSignatureException: no x-amz-date")?;
    if !amz_date.starts_with(scope[1]) {
        return Err("InvalidSignatureException: date and scope differ".into());
    }
    let names: Vec<&str> = signed.split(';').collect();
    for needed in ["host", "x-amz-date"] {
        if !names.contains(&needed) {
            return Err(format!("InvalidSignatureException: {needed} not signed"));
        }
    }
    let token_ok = match expected.session_token {
        Some(token) => {
            request.header("x-amz-security-token") == Some(token)
                && names.contains(&"x-amz-security-token")
        }
        None => request.header("x-amz-security-token").is_none(),
    };
    if !token_ok {
        return Err(
            "UnrecognizedClientException: The security token included in the request is invalid."
                .into(),
        );
    }
    let (path, query) = request
        .target
        .split_once('?')
        .unwrap_or((request.target.as_str(), ""));
    let canonical_uri: Vec<String> = path.split('/').map(encode_segment).collect();
    let mut headers = String::new();
    for name in &names {
        let values: Vec<String> = request
            .headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect();
        if values.is_empty() {
            return Err(format!(
                "InvalidSignatureException: signed header {name} missing"
            ));
        }
        headers.push_str(&format!("{name}:{}\n", values.join(",")));
    }
    let canonical = format!(
        "{}\n{}\n{}\n{headers}\n{signed}\n{}",
        request.method,
        canonical_uri.join("/"),
        query,
        sha256_hex(&request.body)
    );
    let string_to_sign = format!(
        "AWS4-HMAC-SHA256\n{amz_date}\n{}\n{}",
        scope[1..].join("/"),
        sha256_hex(canonical.as_bytes())
    );
    let mut key = hmac_sha256(
        format!("AWS4{}", expected.secret_access_key).as_bytes(),
        scope[1],
    );
    for part in &scope[2..] {
        key = hmac_sha256(&key, part);
    }
    let computed = hex(&hmac_sha256(&key, &string_to_sign));
    if computed != signature {
        return Err("InvalidSignatureException: The request signature we calculated does not match the signature you provided.".into());
    }
    Ok(())
}

/// CRC-32 (IEEE), bit by bit.
pub fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for byte in data {
        crc ^= u32::from(*byte);
        for _ in 0..8 {
            let mask = (crc & 1).wrapping_neg();
            crc = (crc >> 1) ^ (0xEDB8_8320 & mask);
        }
    }
    !crc
}

/// One event-stream message with string headers.
pub fn frame(headers: &[(&str, &str)], payload: &[u8]) -> Vec<u8> {
    let mut head = Vec::new();
    for (name, value) in headers {
        head.push(name.len() as u8);
        head.extend_from_slice(name.as_bytes());
        head.push(7);
        head.extend_from_slice(&(value.len() as u16).to_be_bytes());
        head.extend_from_slice(value.as_bytes());
    }
    let total = (16 + head.len() + payload.len()) as u32;
    let mut out = total.to_be_bytes().to_vec();
    out.extend_from_slice(&(head.len() as u32).to_be_bytes());
    let prelude = crc32(&out);
    out.extend_from_slice(&prelude.to_be_bytes());
    out.extend_from_slice(&head);
    out.extend_from_slice(payload);
    let crc = crc32(&out);
    out.extend_from_slice(&crc.to_be_bytes());
    out
}

/// A ConverseStream event message.
pub fn event(kind: &str, payload: Value) -> Vec<u8> {
    frame(
        &[
            (":event-type", kind),
            (":content-type", "application/json"),
            (":message-type", "event"),
        ],
        payload.to_string().as_bytes(),
    )
}

/// An exception message inside the stream (`throttlingException`...).
pub fn exception(kind: &str, message: &str) -> Vec<u8> {
    frame(
        &[
            (":exception-type", kind),
            (":content-type", "application/json"),
            (":message-type", "exception"),
        ],
        json!({ "message": message }).to_string().as_bytes(),
    )
}

/// A 200 reply streaming `bytes` as `application/vnd.amazon.eventstream`, in 64-byte chunks.
pub fn stream_reply(bytes: Vec<u8>) -> Reply {
    let mut reply = Reply::sse(bytes);
    reply.headers = vec![(
        "content-type".into(),
        "application/vnd.amazon.eventstream".into(),
    )];
    reply
}

/// One ConverseStream response: tool uses `(id, name, input)` or a text, stop reason and usage.
pub fn converse(n: usize, calls: &[(&str, &str, Value)], text: Option<&str>) -> Vec<u8> {
    let mut out = event("messageStart", json!({"role": "assistant", "p": "abcd"}));
    if let Some(text) = text {
        let (head, tail) = text.split_at(text.len() / 2);
        for piece in [head, tail] {
            out.extend(event(
                "contentBlockDelta",
                json!({"contentBlockIndex": 0, "delta": {"text": piece}, "p": "ab"}),
            ));
        }
        out.extend(event("contentBlockStop", json!({"contentBlockIndex": 0})));
    }
    for (i, (id, name, input)) in calls.iter().enumerate() {
        let index = i + usize::from(text.is_some());
        out.extend(event(
            "contentBlockStart",
            json!({"contentBlockIndex": index, "start": {"toolUse": {"toolUseId": id, "name": name}}}),
        ));
        let input = input.to_string();
        let (head, tail) = input.split_at(input.len() / 2);
        for piece in [head, tail] {
            out.extend(event(
                "contentBlockDelta",
                json!({"contentBlockIndex": index, "delta": {"toolUse": {"input": piece}}}),
            ));
        }
        out.extend(event(
            "contentBlockStop",
            json!({"contentBlockIndex": index}),
        ));
    }
    let stop = if calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    out.extend(event("messageStop", json!({"stopReason": stop})));
    out.extend(event(
        "metadata",
        json!({"usage": {"inputTokens": 1000 * n, "outputTokens": 100, "totalTokens": 1000 * n + 100},
               "metrics": {"latencyMs": 120}}),
    ));
    out
}

/// The `toolResult`s of the last user message of a Converse request: `(toolUseId, text,
/// status)`.
pub fn tool_results(request: &Recorded) -> Vec<(String, String, String)> {
    let body = request.json();
    let messages = body["messages"].as_array().unwrap();
    let last = messages.last().unwrap();
    assert_eq!(last["role"], "user", "{last}");
    last["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|block| block.get("toolResult"))
        .map(|result| {
            (
                result["toolUseId"].as_str().unwrap().to_string(),
                result["content"][0]["text"].as_str().unwrap().to_string(),
                result["status"].as_str().unwrap_or("success").to_string(),
            )
        })
        .collect()
}
