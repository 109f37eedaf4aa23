//! The Bedrock wire through the shared transport against a local mock speaking AWS's binary
//! event stream: corrupted frames (checked by both CRCs) retried with a clear reason, an
//! exception inside the stream retried like a 429, and credentials the server echoes back
//! scrubbed from the error.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use crate::util::aws;
use crate::util::mock_server::*;
use versus::model::{Message, ModelRequest, Reasoning};
use versus::provider::bedrock::credentials::{AwsEnv, Lookup};
use versus::provider::bedrock::{BedrockSettings, BedrockWire};
use versus::provider::http::default_client;
use versus::provider::{HttpModel, RetryPolicy, WireConfig};

const SECRET: &str = "wire-secret-SECRET-5566778899";

fn model(server: &MockServer, tries: u32) -> HttpModel {
    let wire = BedrockWire::new(
        WireConfig {
            provider: "bedrock".into(),
            base_url: server.url(),
            ..WireConfig::default()
        },
        BedrockSettings {
            lookup: Lookup::default(),
            env: AwsEnv::from_pairs([
                ("AWS_ACCESS_KEY_ID", "AKIDWIRETEST"),
                ("AWS_SECRET_ACCESS_KEY", SECRET),
                ("AWS_REGION", "eu-west-1"),
            ]),
        },
    );
    HttpModel::new(
        default_client().unwrap(),
        Arc::new(wire),
        RetryPolicy {
            max_tries: tries,
            base_delay: Duration::from_millis(5),
            max_delay: Duration::from_millis(20),
            max_retry_after: Duration::from_millis(20),
        },
    )
}

fn request() -> ModelRequest {
    ModelRequest {
        model: "amazon.nova-pro-v1:0".into(),
        system: "be brief".into(),
        messages: vec![Message::user("hi")].into(),
        tools: Vec::new().into(),
        max_output_tokens: None,
        temperature: None,
        reasoning: Reasoning::Default,
        seed: None,
    }
}

/// `bytes` with one bit of the payload of its first message flipped: the message CRC fails.
fn corrupted(mut bytes: Vec<u8>) -> Vec<u8> {
    let total = u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as usize;
    bytes[total - 6] ^= 0x01;
    bytes
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_corrupted_frame_is_retried_with_a_clear_reason() {
    let good = aws::converse(1, &[], Some("All good."));
    let server = MockServer::start(vec![
        aws::stream_reply(corrupted(good.clone())),
        aws::stream_reply(good.clone()),
    ]);
    let (events, done) = collect(&model(&server, 3), request()).await;
    let done = done.unwrap();
    assert!(text_of(&events).contains("All good."));
    assert_eq!(done.usage.input, 1000);
    let reasons: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            versus::model::StreamEvent::Retrying { reason, .. } => Some(reason.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(reasons.len(), 1, "{reasons:?}");
    assert!(
        reasons[0].contains("the event stream was corrupted")
            && reasons[0].contains("message checksum mismatch"),
        "{reasons:?}"
    );
    // The request asked for the event stream.
    assert_eq!(
        server.requests()[0].header("accept"),
        Some("application/vnd.amazon.eventstream")
    );

    // Every attempt corrupted (here the prelude): the step fails with that reason.
    let mut bad_prelude = good.clone();
    bad_prelude[2] ^= 0x40;
    let server = MockServer::start(vec![
        aws::stream_reply(bad_prelude.clone()),
        aws::stream_reply(bad_prelude),
    ]);
    let (_, done) = collect(&model(&server, 2), request()).await;
    let err = done.unwrap_err().to_string();
    assert!(err.contains("prelude checksum mismatch"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn throttling_inside_the_stream_is_retried() {
    let server = MockServer::start(vec![
        aws::stream_reply(aws::exception("throttlingException", "Too many tokens")),
        aws::stream_reply(aws::converse(1, &[], Some("Done."))),
    ]);
    let (events, done) = collect(&model(&server, 3), request()).await;
    assert!(done.is_ok(), "{done:?}");
    let retried = retries(&events);
    assert_eq!(retried.len(), 1, "{events:?}");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credentials_echoed_in_errors_are_redacted() {
    let server = MockServer::start(vec![Reply::json(
        403,
        format!(
            r#"{{"message":"The request signature we calculated does not match; secret {SECRET} rejected"}}"#
        ),
    )]);
    let (_, done) = collect(&model(&server, 1), request()).await;
    let err = done.unwrap_err().to_string();
    assert!(
        !err.contains(SECRET) && !err.contains("SECRET-5566"),
        "{err}"
    );
    assert!(err.contains("secret [redacted] rejected"), "{err}");
    assert!(err.contains("AWS_ACCESS_KEY_ID"), "{err}");
}
