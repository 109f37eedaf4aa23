//! Google Vertex AI through the real binary (`versus ask`), against two local mocks: a token
//! endpoint (the service-account JSON's `token_uri`) and the Vertex API (`VERTEX_BASE_URL`).
//!
//! Checked: the JWT each token request carries is verified with the test key's public key
//! (RS256) and says the right issuer, audience and scope; a token that is about to expire is
//! fetched again before the next step (the fake answers `expires_in: 30`, inside the refresh
//! margin, so every step asks; with `expires_in: 3600` one token serves the whole run); the
//! Gemini and Anthropic-on-Vertex request URLs, headers and bodies; a read -> edit -> bash ->
//! finish loop on Gemini; and that no credential (private key, token, JWT) reaches the output
//! or the session's files. The test key under tests/fixtures/vertex/ was made for these tests
//! (`openssl genpkey -algorithm RSA`) and guards nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};
use util::mock_server::{MockServer, Recorded, Reply};
use util::{git, versus};

const EMAIL: &str = "versus-test@test-proj.iam.gserviceaccount.com";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/vertex")
        .join(name)
}

fn private_key() -> String {
    std::fs::read_to_string(fixture("test-sa-key.pem")).unwrap()
}

/// Token answers `ya29.test-token-N`, each living `expires_in` seconds.
fn token_server(count: usize, expires_in: u64) -> MockServer {
    MockServer::start(
        (1..=count)
            .map(|n| {
                Reply::json(
                    200,
                    json!({"access_token": format!("ya29.test-token-{n}"),
                           "expires_in": expires_in, "token_type": "Bearer"})
                    .to_string(),
                )
            })
            .collect(),
    )
}

/// The form fields of a token request.
fn form(request: &Recorded) -> Vec<(String, String)> {
    let text = String::from_utf8(request.body.clone()).unwrap();
    text.split('&')
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap();
            let decode = |s: &str| {
                let s = s.replace('+', " ");
                let mut out = Vec::new();
                let bytes = s.as_bytes();
                let mut i = 0;
                while i < bytes.len() {
                    if bytes[i] == b'%' {
                        out.push(u8::from_str_radix(&s[i + 1..i + 3], 16).unwrap());
                        i += 3;
                    } else {
                        out.push(bytes[i]);
                        i += 1;
                    }
                }
                String::from_utf8(out).unwrap()
            };
            (decode(k), decode(v))
        })
        .collect()
}

/// Verifies one token request as the token endpoint would: a JWT-bearer grant whose
/// assertion is signed RS256 by the test key, for this account, audience and scope.
fn verify_token_request(request: &Recorded, token_uri: &str) -> Value {
    assert_eq!(request.method, "POST");
    assert_eq!(request.target, "/token");
    let fields = form(request);
    let field = |name: &str| {
        fields
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .unwrap()
    };
    assert_eq!(
        field("grant_type"),
        "urn:ietf:params:oauth:grant-type:jwt-bearer"
    );
    let jwt = field("assertion");
    let parts: Vec<&str> = jwt.split('.').collect();
    assert_eq!(parts.len(), 3, "{jwt}");
    let public = std::fs::read(fixture("test-sa-public.der")).unwrap();
    let key = ring::signature::UnparsedPublicKey::new(
        &ring::signature::RSA_PKCS1_2048_8192_SHA256,
        public,
    );
    let signature = URL_SAFE_NO_PAD.decode(parts[2]).unwrap();
    key.verify(format!("{}.{}", parts[0], parts[1]).as_bytes(), &signature)
        .expect("the JWT is signed by the service account's key");
    // The same input with one byte changed does not verify (the check is real).
    assert!(
        key.verify(format!("{}.{}x", parts[0], parts[1]).as_bytes(), &signature)
            .is_err()
    );
    let header: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[0]).unwrap()).unwrap();
    assert_eq!(header["alg"], "RS256");
    assert_eq!(header["kid"], "test-key-id");
    let claims: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).unwrap()).unwrap();
    assert_eq!(claims["iss"], EMAIL);
    assert_eq!(claims["aud"], token_uri);
    assert_eq!(
        claims["scope"],
        "https://www.googleapis.com/auth/cloud-platform"
    );
    assert_eq!(
        claims["exp"].as_u64().unwrap() - claims["iat"].as_u64().unwrap(),
        3600
    );
    claims
}

/// A project with the bug and a test script; the credentials file beside it.
struct Setup {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    base: PathBuf,
    credentials: PathBuf,
    token_uri: String,
}

impl Setup {
    fn new(tokens: &MockServer) -> Setup {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let root = base.join("project");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join("calc.py"), "def add(a, b):\n    return a - b\n").unwrap();
        std::fs::write(
            root.join("test.sh"),
            "grep -q 'return a + b' calc.py && echo PASS || echo FAIL\n",
        )
        .unwrap();
        git(&root, &["init", "-q"]);
        git(&root, &["add", "."]);
        git(&root, &["commit", "-qm", "init"]);
        for dir in ["config", "tmp", "home"] {
            std::fs::create_dir_all(base.join(dir)).unwrap();
        }
        let token_uri = format!("{}/token", tokens.url());
        let credentials = base.join("sa.json");
        std::fs::write(
            &credentials,
            json!({"type": "service_account", "project_id": "test-proj",
                   "private_key_id": "test-key-id", "private_key": private_key(),
                   "client_email": EMAIL, "client_id": "1",
                   "token_uri": token_uri})
            .to_string(),
        )
        .unwrap();
        Setup {
            _tmp: tmp,
            root,
            base,
            credentials,
            token_uri,
        }
    }

    fn ask(&self, vertex: &MockServer, model: &str) -> Output {
        let mut c: Command = util::versus_without_providers();
        c.env("XDG_CONFIG_HOME", self.base.join("config"))
            .env("HOME", self.base.join("home"))
            .env("TMPDIR", self.base.join("tmp"))
            .env("GOOGLE_APPLICATION_CREDENTIALS", &self.credentials)
            .env("GOOGLE_CLOUD_LOCATION", "us-east5")
            .env("VERTEX_BASE_URL", vertex.url())
            .arg("-C")
            .arg(&self.root)
            .args(["ask", "fix add() so test.sh passes", "-m", model])
            .output()
            .unwrap()
    }

    /// Every file versus wrote in the project's `.versus/`, as text.
    fn state_text(&self) -> String {
        let mut text = String::new();
        let mut stack = vec![self.root.join(".versus")];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).into_iter().flatten() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else {
                    text.push_str(&String::from_utf8_lossy(&std::fs::read(&path).unwrap()));
                }
            }
        }
        text
    }
}

/// One Gemini `alt=sse` chunk: function calls or a text, `STOP`, usage.
fn gemini(parts: Value) -> Reply {
    let chunk = json!({"candidates": [{"content": {"parts": parts, "role": "model"}, "index": 0,
                                       "finishReason": "STOP"}],
                       "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 10,
                                         "totalTokenCount": 110},
                       "modelVersion": "gemini-2.5-pro"});
    Reply::sse(format!("data: {chunk}\r\n\r\n"))
}

fn call(name: &str, args: Value) -> Value {
    json!([{"functionCall": {"name": name, "args": args}}])
}

fn secrets_absent(text: &str, claims: &[Value]) {
    let key = private_key();
    let middle = key.lines().nth(5).unwrap();
    assert!(!text.contains(middle), "a piece of the private key leaked");
    assert!(!text.contains("ya29.test-token"), "an access token leaked");
    for c in claims {
        // A JWT's claims part, as sent, never shows.
        let encoded = URL_SAFE_NO_PAD.encode(c.to_string());
        assert!(!text.contains(&encoded[..20.min(encoded.len())]));
    }
}

#[test]
fn gemini_on_vertex_runs_read_edit_bash_finish_with_a_token_refreshed_as_it_expires() {
    // expires_in 30 is inside the five-minute refresh margin: every step needs a new token.
    let tokens = token_server(8, 30);
    let s = Setup::new(&tokens);
    let vertex = MockServer::start(vec![
        gemini(call("read_file", json!({"path": "calc.py"}))),
        gemini(call(
            "edit_file",
            json!({"path": "calc.py", "old_string": "return a - b", "new_string": "return a + b"}),
        )),
        gemini(call("bash", json!({"command": "sh test.sh"}))),
        gemini(json!([{"text": "Fixed: add() adds. VERTEX-DONE"}])),
    ]);
    let out = s.ask(&vertex, "vertex/gemini-2.5-pro");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("VERTEX-DONE"), "{stdout}");
    assert!(stdout.contains("return a + b"), "the diff: {stdout}");

    let sent = vertex.requests();
    assert_eq!(sent.len(), 4, "{sent:?}");
    for (n, request) in sent.iter().enumerate() {
        assert_eq!(
            request.target,
            "/v1/projects/test-proj/locations/us-east5/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
        );
        // Step N carries the Nth token: each was fetched again as it neared expiry.
        assert_eq!(
            request.header("authorization"),
            Some(format!("Bearer ya29.test-token-{}", n + 1).as_str())
        );
        assert_eq!(request.header("x-goog-api-key"), None);
        let body = request.json();
        assert!(
            body["contents"].is_array() && body["tools"].is_array(),
            "{body}"
        );
    }
    // The bash result reached the model.
    assert!(
        String::from_utf8_lossy(&sent[3].body).contains("PASS"),
        "{}",
        String::from_utf8_lossy(&sent[3].body)
    );
    let token_requests = tokens.requests();
    assert_eq!(token_requests.len(), 4, "one token per step");
    let claims: Vec<Value> = token_requests
        .iter()
        .map(|r| verify_token_request(r, &s.token_uri))
        .collect();
    secrets_absent(&format!("{stdout}{stderr}{}", s.state_text()), &claims);
}

/// Anthropic Messages events for one step: a tool call or a text.
fn messages(calls: &[(&str, &str, Value)], text: Option<&str>) -> Reply {
    let mut events = vec![json!({"type": "message_start", "message": {"id": "msg_v",
        "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": [],
        "stop_reason": null, "usage": {"input_tokens": 50, "output_tokens": 1}}})];
    for (index, (id, name, args)) in calls.iter().enumerate() {
        events.push(json!({"type": "content_block_start", "index": index,
            "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}));
        events.push(json!({"type": "content_block_delta", "index": index,
            "delta": {"type": "input_json_delta", "partial_json": args.to_string()}}));
        events.push(json!({"type": "content_block_stop", "index": index}));
    }
    if let Some(text) = text {
        events.push(json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "text", "text": ""}}));
        events.push(json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "text_delta", "text": text}}));
        events.push(json!({"type": "content_block_stop", "index": 0}));
    }
    let stop = if calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    events.push(json!({"type": "message_delta",
        "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": 5}}));
    events.push(json!({"type": "message_stop"}));
    let mut body = String::new();
    for event in &events {
        body.push_str(&format!(
            "event: {}\ndata: {event}\n\n",
            event["type"].as_str().unwrap()
        ));
    }
    Reply::sse(body)
}

#[test]
fn claude_on_vertex_sends_the_messages_body_with_the_vertex_version_and_reuses_its_token() {
    let tokens = token_server(4, 3600);
    let s = Setup::new(&tokens);
    let vertex = MockServer::start(vec![
        messages(
            &[("toolu_01", "read_file", json!({"path": "calc.py"}))],
            None,
        ),
        messages(&[], Some("It subtracts. CLAUDE-VERTEX-DONE")),
    ]);
    let model = "claude-sonnet-4-5@20250929";
    let out = s.ask(&vertex, &format!("vertex/{model}"));
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("CLAUDE-VERTEX-DONE"), "{stdout}");
    let sent = vertex.requests();
    assert_eq!(sent.len(), 2);
    for request in &sent {
        assert_eq!(
            request.target,
            format!(
                "/v1/projects/test-proj/locations/us-east5/publishers/anthropic/models/{model}:streamRawPredict"
            )
        );
        assert_eq!(
            request.header("authorization"),
            Some("Bearer ya29.test-token-1")
        );
        assert_eq!(request.header("x-api-key"), None);
        let body = request.json();
        assert_eq!(body["anthropic_version"], "vertex-2023-10-16");
        assert!(body.get("model").is_none(), "{body}");
        assert_eq!(body["stream"], true);
        assert!(
            body["messages"].is_array() && body["max_tokens"].is_u64(),
            "{body}"
        );
    }
    // The second step sends the tool result back in Messages form.
    assert!(
        sent[1].json()["messages"]
            .to_string()
            .contains("tool_result"),
        "{}",
        sent[1].json()
    );
    // A token with an hour to live serves both steps.
    let token_requests = tokens.requests();
    assert_eq!(token_requests.len(), 1);
    let claims = verify_token_request(&token_requests[0], &s.token_uri);
    secrets_absent(&format!("{stdout}{stderr}{}", s.state_text()), &[claims]);
}

#[test]
fn a_refused_token_names_the_credentials_and_shows_no_secret() {
    let tokens = MockServer::start(vec![Reply::json(
        401,
        json!({"error": "invalid_grant", "error_description": "Invalid JWT Signature."})
            .to_string(),
    )]);
    let s = Setup::new(&tokens);
    let vertex = MockServer::start(vec![]);
    let out = s.ask(&vertex, "vertex/gemini-2.5-pro");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!out.status.success(), "{text}");
    assert!(text.contains("Invalid JWT Signature"), "{text}");
    assert!(text.contains("GOOGLE_APPLICATION_CREDENTIALS"), "{text}");
    assert!(vertex.requests().is_empty());
    secrets_absent(&format!("{text}{}", s.state_text()), &[]);
}

#[test]
fn no_credentials_skip_the_model_with_what_to_set() {
    let tokens = MockServer::start(vec![]);
    let s = Setup::new(&tokens);
    let out = versus()
        .env_remove("GOOGLE_APPLICATION_CREDENTIALS")
        .env_remove("CLOUDSDK_CONFIG")
        .env("HOME", s.base.join("home"))
        .env("XDG_CONFIG_HOME", s.base.join("config"))
        .arg("-C")
        .arg(&s.root)
        .args(["ask", "hi", "-m", "vertex/gemini-2.5-pro"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("GOOGLE_APPLICATION_CREDENTIALS")
            && stderr.contains("gcloud auth application-default login"),
        "{stderr}"
    );
    assert!(tokens.requests().is_empty());
}
