//! `versus models --remote` through the real binary against mock servers speaking each list
//! format: OpenAI `GET /v1/models`, Anthropic `GET /v1/models`, Gemini `GET /v1beta/models`,
//! and an Ollama address that accepts the connection and never answers. The others are
//! listed, the hanging one is named as timed out, keys go in headers and never in the output,
//! and the lists land in the cache file the interface reads.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util;

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::Command;

use serde_json::{Value, json};
use util::mock_server::{MockServer, Reply};

const OPENAI_KEY: &str = "sk-remote-SECRET-1";
const ANTHROPIC_KEY: &str = "sk-ant-remote-SECRET-2";
const GEMINI_KEY: &str = "gem-remote-SECRET-3";

struct Mocks {
    openai: MockServer,
    anthropic: MockServer,
    gemini: MockServer,
    /// Accepts connections (the kernel's backlog) and never answers.
    hanging: TcpListener,
}

fn mocks() -> Mocks {
    Mocks {
        openai: MockServer::start(vec![Reply::json(
            200,
            json!({"object": "list", "data": [{"id": "gpt-5.4", "object": "model"},
                                               {"id": "o3", "object": "model"}]})
            .to_string(),
        )]),
        anthropic: MockServer::start(vec![Reply::json(
            200,
            json!({"data": [{"type": "model", "id": "claude-sonnet-4-6", "display_name": "Claude Sonnet 4.6"}],
                   "has_more": false, "first_id": "claude-sonnet-4-6", "last_id": "claude-sonnet-4-6"})
            .to_string(),
        )]),
        gemini: MockServer::start(vec![Reply::json(
            200,
            json!({"models": [{"name": "models/gemini-2.5-pro",
                               "supportedGenerationMethods": ["generateContent"]}]})
            .to_string(),
        )]),
        hanging: TcpListener::bind("127.0.0.1:0").unwrap(),
    }
}

fn command(state: &std::path::Path, config: &std::path::Path, m: &Mocks) -> Command {
    let mut c = util::versus_without_providers();
    c.env("XDG_STATE_HOME", state)
        .env("XDG_CONFIG_HOME", config)
        .env("HOME", config.join("home"))
        .env("OPENAI_API_KEY", OPENAI_KEY)
        .env("OPENAI_BASE_URL", format!("{}/v1", m.openai.url()))
        .env("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
        .env("ANTHROPIC_BASE_URL", m.anthropic.url())
        .env("GEMINI_API_KEY", GEMINI_KEY)
        .env("GEMINI_BASE_URL", m.gemini.url())
        .env(
            "OLLAMA_BASE_URL",
            format!("http://{}", m.hanging.local_addr().unwrap()),
        );
    c
}

fn dirs() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let config = tmp.path().join("config");
    std::fs::create_dir_all(&config).unwrap();
    (tmp, state, config)
}

#[test]
fn one_hanging_provider_is_named_and_the_others_are_listed() {
    let (_tmp, state, config) = dirs();
    let m = mocks();
    let out = command(&state, &config, &m)
        .args(["models", "--remote", "--timeout", "1"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stdout}\n{stderr}");
    for listed in [
        "openai: 2 models",
        "  openai/gpt-5.4",
        "  openai/o3",
        "anthropic: 1 model\n  anthropic/claude-sonnet-4-6",
        "gemini: 1 model\n  gemini/gemini-2.5-pro",
        "openrouter: not asked: no key (set OPENROUTER_API_KEY)",
        "ollama: timed out: no answer within 1s",
    ] {
        assert!(stdout.contains(listed), "{listed:?} missing in:\n{stdout}");
    }
    for key in [OPENAI_KEY, ANTHROPIC_KEY, GEMINI_KEY] {
        assert!(!stdout.contains(key) && !stderr.contains(key));
    }

    // Each format's request, key in its header.
    let openai = &m.openai.requests()[0];
    assert_eq!(
        (openai.method.as_str(), openai.target.as_str()),
        ("GET", "/v1/models")
    );
    assert_eq!(
        openai.header("authorization"),
        Some(format!("Bearer {OPENAI_KEY}").as_str())
    );
    let anthropic = &m.anthropic.requests()[0];
    assert_eq!(anthropic.target, "/v1/models?limit=1000");
    assert_eq!(anthropic.header("x-api-key"), Some(ANTHROPIC_KEY));
    assert_eq!(anthropic.header("anthropic-version"), Some("2023-06-01"));
    let gemini = &m.gemini.requests()[0];
    assert_eq!(gemini.target, "/v1beta/models?pageSize=1000");
    assert_eq!(gemini.header("x-goog-api-key"), Some(GEMINI_KEY));

    // The lists that came are cached; the one that did not is not.
    let cache: Value =
        serde_json::from_slice(&std::fs::read(state.join("versus/cache/models.json")).unwrap())
            .unwrap();
    assert_eq!(cache["version"], 1);
    assert_eq!(
        cache["providers"]["openai"]["models"],
        json!(["gpt-5.4", "o3"])
    );
    assert_eq!(
        cache["providers"]["gemini"]["models"],
        json!(["gemini-2.5-pro"])
    );
    assert!(cache["providers"].get("ollama").is_none(), "{cache}");
}

#[test]
fn json_output_gives_each_providers_status() {
    let (_tmp, state, config) = dirs();
    let m = mocks();
    let out = command(&state, &config, &m)
        .args(["models", "--remote", "--timeout", "1", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let of = |name: &str| {
        json["remote"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["provider"] == name)
            .cloned()
            .unwrap()
    };
    assert_eq!(of("openai")["status"], "ok");
    assert_eq!(of("openai")["models"], json!(["gpt-5.4", "o3"]));
    assert_eq!(of("ollama")["status"], "timed_out");
    assert_eq!(of("openrouter")["status"], "no_key");
}

// ---------------------------------------------------------------------------------------------
// The cloud providers: Azure OpenAI, Bedrock, Vertex AI.

const AZURE_KEY: &str = "azure-remote-SECRET-4";
const AWS_KEY_ID: &str = "AKIDREMOTELIST01";
const AWS_SECRET: &str = "aws-remote-SECRET-5e6f7a8b";

/// The cloud providers' variables pointing at `azure`, `bedrock` and a Vertex base, with a
/// service-account file whose token endpoint is `tokens`; every keyed provider unset.
/// Runs a `models --remote` command: its status and what it printed on each stream.
fn run_listing(mut command: Command) -> (std::process::Output, String, String) {
    let out = command.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out, stdout, stderr)
}

fn cloud_command(
    state: &std::path::Path,
    config: &std::path::Path,
    azure: &str,
    bedrock: &str,
    vertex: &str,
    tokens: &MockServer,
) -> Command {
    let key = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/vertex/test-sa-key.pem"),
    )
    .unwrap();
    let sa = config.join("sa.json");
    std::fs::write(
        &sa,
        json!({"type": "service_account", "project_id": "list-proj", "private_key_id": "k",
               "private_key": key, "client_email": "l@list-proj.iam.gserviceaccount.com",
               "token_uri": format!("{}/token", tokens.url())})
        .to_string(),
    )
    .unwrap();
    let mut c = util::versus_without_providers();
    c.env("XDG_STATE_HOME", state)
        .env("XDG_CONFIG_HOME", config)
        .env("HOME", config.join("home"))
        .env("OLLAMA_BASE_URL", "http://127.0.0.1:9/")
        .env("AZURE_OPENAI_ENDPOINT", azure)
        .env("AZURE_OPENAI_API_KEY", AZURE_KEY)
        .env("AWS_ACCESS_KEY_ID", AWS_KEY_ID)
        .env("AWS_SECRET_ACCESS_KEY", AWS_SECRET)
        .env("AWS_REGION", "us-west-2")
        .env("AWS_ENDPOINT_URL_BEDROCK", bedrock)
        .env("GOOGLE_APPLICATION_CREDENTIALS", &sa)
        .env("GOOGLE_CLOUD_LOCATION", "us-east5")
        .env("VERTEX_BASE_URL", vertex);
    c
}

fn token_server() -> MockServer {
    MockServer::start(vec![Reply::json(
        200,
        json!({"access_token": "ya29.list-token-SECRET", "expires_in": 3600}).to_string(),
    )])
}

/// Bedrock's ListFoundationModels (`GET /foundation-models`), then ListInferenceProfiles
/// (`GET /inference-profiles?maxResults=1000`) answered with `profiles`; SigV4 for `bedrock`
/// in us-west-2 checked by the mock, the query included.
fn bedrock_mock_with(profiles: Reply) -> MockServer {
    MockServer::start_checked(
        vec![
            Reply::json(
                200,
                json!({"modelSummaries": [
                    {"modelId": "anthropic.claude-sonnet-4-5-20250929-v1:0", "providerName": "Anthropic",
                     "inferenceTypesSupported": ["INFERENCE_PROFILE"]},
                    {"modelId": "amazon.nova-pro-v1:0", "providerName": "Amazon",
                     "inferenceTypesSupported": ["ON_DEMAND"]}]})
                .to_string(),
            ),
            profiles,
        ],
        |request| {
            if request.method != "GET"
                || !matches!(
                    request.target.as_str(),
                    "/foundation-models" | "/inference-profiles?maxResults=1000"
                )
            {
                return Err(format!("UnknownOperation {} {}", request.method, request.target));
            }
            util::aws::verify_sigv4(
                request,
                &util::aws::Expected {
                    access_key_id: AWS_KEY_ID,
                    secret_access_key: AWS_SECRET,
                    session_token: None,
                    region: "us-west-2",
                },
            )
        },
    )
}

/// The Bedrock mock with one active cross-region profile and one that is not active.
fn bedrock_mock() -> MockServer {
    bedrock_mock_with(Reply::json(
        200,
        json!({"inferenceProfileSummaries": [
            {"inferenceProfileId": "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
             "inferenceProfileName": "US Anthropic Claude Sonnet 4.5", "status": "ACTIVE",
             "type": "SYSTEM_DEFINED"},
            {"inferenceProfileId": "eu.retired.model-v1:0", "status": "INACTIVE",
             "type": "SYSTEM_DEFINED"}]})
        .to_string(),
    ))
}

/// Vertex's publisher models: Google's in two pages, then Anthropic's; every request with
/// the access token and the project billed.
fn vertex_mock() -> MockServer {
    MockServer::start_checked(
        vec![
            Reply::json(
                200,
                json!({"publisherModels": [{"name": "publishers/google/models/gemini-2.5-pro"}],
                       "nextPageToken": "page/2"})
                .to_string(),
            ),
            Reply::json(
                200,
                json!({"publisherModels": [{"name": "publishers/google/models/gemini-2.5-flash"}]})
                    .to_string(),
            ),
            Reply::json(
                200,
                json!({"publisherModels": [{"name": "publishers/anthropic/models/claude-sonnet-4-5"}]})
                    .to_string(),
            ),
        ],
        |request| {
            if request.header("authorization") != Some("Bearer ya29.list-token-SECRET") {
                return Err("UNAUTHENTICATED".to_string());
            }
            if request.header("x-goog-user-project") != Some("list-proj") {
                return Err("no quota project".to_string());
            }
            Ok(())
        },
    )
}

#[test]
fn azure_bedrock_and_vertex_list_their_models_with_their_own_credentials() {
    let (_tmp, state, config) = dirs();
    let azure = MockServer::start_checked(
        vec![Reply::json(
            200,
            json!({"object": "list", "data": [{"id": "gpt-4.1", "object": "model"},
                                               {"id": "gpt-5-mini", "object": "model"}]})
            .to_string(),
        )],
        |request| {
            if request.target != "/openai/v1/models" {
                return Err(format!("Resource not found: {}", request.target));
            }
            match request.header("api-key") {
                Some(AZURE_KEY) => Ok(()),
                _ => Err("Access denied due to invalid subscription key".to_string()),
            }
        },
    );
    let bedrock = bedrock_mock();
    let vertex = vertex_mock();
    let tokens = token_server();
    let mut command = cloud_command(
        &state,
        &config,
        &format!("{}/openai/v1", azure.url()),
        &bedrock.url(),
        &vertex.url(),
        &tokens,
    );
    command.args(["models", "--remote", "--timeout", "5"]);
    let (out, stdout, stderr) = run_listing(command);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert_eq!(azure.refused(), Vec::<String>::new());
    assert_eq!(bedrock.refused(), Vec::<String>::new());
    assert_eq!(vertex.refused(), Vec::<String>::new());
    for listed in [
        "azure: 2 models\n  azure/gpt-4.1\n  azure/gpt-5-mini",
        "bedrock: 3 models\n  bedrock/amazon.nova-pro-v1:0\n  bedrock/anthropic.claude-sonnet-4-5-20250929-v1:0\n  bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        "vertex: 3 models\n  vertex/claude-sonnet-4-5\n  vertex/gemini-2.5-flash\n  vertex/gemini-2.5-pro",
    ] {
        assert!(
            stdout.contains(listed),
            "{listed:?} missing in:\n{stdout}\n{stderr}"
        );
    }
    let targets: Vec<String> = vertex.requests().iter().map(|r| r.target.clone()).collect();
    assert_eq!(
        targets,
        [
            "/v1beta1/publishers/google/models?pageSize=1000",
            "/v1beta1/publishers/google/models?pageSize=1000&pageToken=page%2F2",
            "/v1beta1/publishers/anthropic/models?pageSize=1000",
        ]
    );
    assert_eq!(tokens.requests().len(), 1);
    for secret in [AZURE_KEY, AWS_SECRET, "list-token-SECRET"] {
        assert!(!stdout.contains(secret) && !stderr.contains(secret));
    }
    // Cached like the others, under the endpoint each was asked at.
    let cache: Value =
        serde_json::from_slice(&std::fs::read(state.join("versus/cache/models.json")).unwrap())
            .unwrap();
    assert_eq!(
        cache["providers"]["bedrock"]["models"],
        json!([
            "amazon.nova-pro-v1:0",
            "anthropic.claude-sonnet-4-5-20250929-v1:0",
            "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
        ])
    );
    let targets: Vec<String> = bedrock
        .requests()
        .iter()
        .map(|r| r.target.clone())
        .collect();
    assert_eq!(
        targets,
        ["/foundation-models", "/inference-profiles?maxResults=1000"]
    );
    assert_eq!(cache["providers"]["bedrock"]["base_url"], bedrock.url());
    assert_eq!(
        cache["providers"]["vertex"]["models"],
        json!(["claude-sonnet-4-5", "gemini-2.5-flash", "gemini-2.5-pro"])
    );
    assert_eq!(
        cache["providers"]["azure"]["models"],
        json!(["gpt-4.1", "gpt-5-mini"])
    );
}

/// Credentials allowed to list foundation models but not inference profiles (a narrow IAM
/// policy) still list the foundation models: the profiles are an extra list.
#[test]
fn bedrock_without_the_right_to_list_profiles_still_lists_its_models() {
    let (_tmp, state, config) = dirs();
    let bedrock = bedrock_mock_with(Reply::json(
        403,
        json!({"message": "User is not authorized to perform: bedrock:ListInferenceProfiles"})
            .to_string(),
    ));
    let tokens = token_server();
    let mut command = cloud_command(
        &state,
        &config,
        "http://127.0.0.1:9/openai/v1",
        &bedrock.url(),
        "http://127.0.0.1:9",
        &tokens,
    );
    command.args(["models", "--remote", "--timeout", "5"]);
    let (out, stdout, stderr) = run_listing(command);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert_eq!(bedrock.refused(), Vec::<String>::new());
    assert_eq!(bedrock.requests().len(), 2, "both lists were asked");
    assert!(
        stdout.contains(
            "bedrock: 2 models\n  bedrock/amazon.nova-pro-v1:0\n  \
             bedrock/anthropic.claude-sonnet-4-5-20250929-v1:0\n"
        ),
        "{stdout}\n{stderr}"
    );
    assert!(!stdout.contains(AWS_SECRET) && !stderr.contains(AWS_SECRET));
}

/// A resource called through deployment URLs lists its deployments, here with an Entra
/// token from the user config; Bedrock's endpoint hangs and is named within the limit while
/// Azure and Vertex are listed.
#[test]
fn azure_deployments_with_an_entra_token_and_a_hanging_bedrock() {
    let (_tmp, state, config) = dirs();
    let azure = MockServer::start_checked(
        vec![Reply::json(
            200,
            json!({"object": "list", "data": [{"id": "my-gpt41", "model": "gpt-4.1",
                                               "object": "deployment", "status": "succeeded"}]})
            .to_string(),
        )],
        |request| {
            if request.target != "/openai/deployments?api-version=2022-12-01" {
                return Err(format!("Resource not found: {}", request.target));
            }
            if request.header("authorization") != Some("Bearer entra-list-SECRET-token") {
                return Err("Unauthorized".to_string());
            }
            if request.header("api-key").is_some() {
                return Err("api-key sent with a token".to_string());
            }
            Ok(())
        },
    );
    std::fs::create_dir_all(config.join("versus")).unwrap();
    std::fs::write(
        config.join("versus/config.toml"),
        "[providers.azure]\nentra_token_env = \"LIST_ENTRA_TOKEN\"\n",
    )
    .unwrap();
    let hanging = TcpListener::bind("127.0.0.1:0").unwrap();
    let vertex = vertex_mock();
    let tokens = token_server();
    let mut command = cloud_command(
        &state,
        &config,
        &format!("{}/", azure.url()),
        &format!("http://{}", hanging.local_addr().unwrap()),
        &vertex.url(),
        &tokens,
    );
    command
        .env_remove("AZURE_OPENAI_API_KEY")
        .env("LIST_ENTRA_TOKEN", "entra-list-SECRET-token")
        .args(["models", "--remote", "--timeout", "1", "--json"]);
    let (out, stdout, stderr) = run_listing(command);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert_eq!(azure.refused(), Vec::<String>::new());
    let json: Value = serde_json::from_str(&stdout).unwrap();
    let of = |name: &str| {
        json["remote"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["provider"] == name)
            .cloned()
            .unwrap()
    };
    assert_eq!(of("azure")["models"], json!(["my-gpt41"]), "{stdout}");
    assert_eq!(of("bedrock")["status"], "timed_out", "{stdout}");
    assert_eq!(of("vertex")["status"], "ok", "{stdout}");
    assert!(!stdout.contains("entra-list-SECRET") && !stderr.contains("entra-list-SECRET"));
}
