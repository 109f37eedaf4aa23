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
use util::versus;

const ISOLATED: &[&str] = &[
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "OPENROUTER_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_BASE_URL",
    "GEMINI_BASE_URL",
    "OPENROUTER_BASE_URL",
    "OLLAMA_BASE_URL",
];

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
    let mut c = versus();
    for var in ISOLATED {
        c.env_remove(var);
    }
    c.env("XDG_STATE_HOME", state)
        .env("XDG_CONFIG_HOME", config)
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
