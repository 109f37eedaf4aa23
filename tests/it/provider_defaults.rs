//! Default models from keys, through the real binary: with only a provider's key set (on the
//! child process) and no `-m` and no `models` in the config, `versus ask`, `versus models` and
//! the interface run that provider's documented default model and say so; with no key at all
//! `ask` says what to do and the interface starts its demo.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util;

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::{Value, json};
use util::git;
use util::mock_server::{MockServer, Reply};

const OPENAI_KEY: &str = "sk-defaults-SECRET-1111";
const ANTHROPIC_KEY: &str = "sk-ant-defaults-SECRET-2222";

/// A one-step text answer in the Responses format.
fn responses_text(text: &str) -> Reply {
    let item = json!({"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
                      "content": [{"type": "output_text", "text": text, "annotations": []}]});
    let events = [
        json!({"type": "response.created", "response": {"id": "resp_1", "object": "response",
               "status": "in_progress", "output": []}}),
        json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "message",
               "id": "msg_1", "status": "in_progress", "role": "assistant", "content": []}}),
        json!({"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0,
               "content_index": 0, "delta": text}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
        json!({"type": "response.completed", "response": {"id": "resp_1", "object": "response",
               "status": "completed", "output": [item],
               "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}}}),
    ];
    typed(&events)
}

/// A one-step text answer in the Anthropic Messages format.
fn messages_text(text: &str) -> Reply {
    let events = [
        json!({"type": "message_start", "message": {"id": "msg_01", "type": "message",
               "role": "assistant", "model": "claude-sonnet-4-6", "content": [],
               "stop_reason": null, "usage": {"input_tokens": 10, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null},
               "usage": {"output_tokens": 5}}),
        json!({"type": "message_stop"}),
    ];
    typed(&events)
}

fn typed(events: &[Value]) -> Reply {
    let mut body = String::new();
    for event in events {
        body.push_str(&format!(
            "event: {}\ndata: {event}\n\n",
            event["type"].as_str().unwrap()
        ));
    }
    Reply::sse(body)
}

/// A project (a git repository with one file), a user config folder with no config and a temp
/// folder for the workspaces.
struct Setup {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    base: PathBuf,
}

impl Setup {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let root = base.join("project");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join("README.md"), "# p\n").unwrap();
        git(&root, &["init", "-q"]);
        git(&root, &["add", "."]);
        git(&root, &["commit", "-qm", "init"]);
        for dir in ["config", "tmp", "home"] {
            std::fs::create_dir_all(base.join(dir)).unwrap();
        }
        Self {
            _tmp: tmp,
            root,
            base,
        }
    }

    /// The binary with none of the developer's keys, an empty user config and `vars` set on
    /// the child only.
    fn command(&self, vars: &[(&str, String)]) -> Command {
        let mut c = util::versus_without_providers();
        c.env("XDG_CONFIG_HOME", self.base.join("config"))
            .env("HOME", self.base.join("home"))
            .env("TMPDIR", self.base.join("tmp"))
            .arg("-C")
            .arg(&self.root);
        for (k, v) in vars {
            c.env(k, v);
        }
        c
    }

    fn ask(&self, vars: &[(&str, String)]) -> Output {
        self.command(vars)
            .args(["ask", "say hello"])
            .output()
            .unwrap()
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn ask_with_only_an_openai_key_runs_its_default_model_and_says_so() {
    let s = Setup::new();
    let openai = MockServer::start(vec![responses_text("HELLO-FROM-DEFAULT")]);
    let out = s.ask(&[
        ("OPENAI_API_KEY", OPENAI_KEY.to_string()),
        ("OPENAI_BASE_URL", format!("{}/v1", openai.url())),
    ]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("using the default model of each key set: openai/gpt-5.4 (OPENAI_API_KEY)"),
        "{stderr}"
    );
    assert!(stdout.contains("openai/gpt-5.4"), "{stdout}");
    assert!(stdout.contains("HELLO-FROM-DEFAULT"), "{stdout}");
    let requests = openai.requests();
    assert_eq!(requests.len(), 1, "{requests:?}");
    assert_eq!(requests[0].target, "/v1/responses");
    assert_eq!(requests[0].json()["model"], "gpt-5.4");
    assert!(!stdout.contains(OPENAI_KEY) && !stderr.contains(OPENAI_KEY));
}

#[test]
fn ask_with_two_keys_runs_one_default_model_per_key() {
    let s = Setup::new();
    let openai = MockServer::start(vec![responses_text("FROM-OPENAI")]);
    let anthropic = MockServer::start(vec![messages_text("FROM-ANTHROPIC")]);
    let out = s.ask(&[
        ("OPENAI_API_KEY", OPENAI_KEY.to_string()),
        ("OPENAI_BASE_URL", format!("{}/v1", openai.url())),
        ("ANTHROPIC_API_KEY", ANTHROPIC_KEY.to_string()),
        ("ANTHROPIC_BASE_URL", anthropic.url()),
    ]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stderr.contains(
            "openai/gpt-5.4 (OPENAI_API_KEY), anthropic/claude-sonnet-4-6 (ANTHROPIC_API_KEY)"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("2 model(s)"), "{stderr}");
    assert!(stdout.contains("FROM-OPENAI") && stdout.contains("FROM-ANTHROPIC"));
    assert_eq!(openai.requests()[0].json()["model"], "gpt-5.4");
    let sent = anthropic.requests();
    assert_eq!(sent[0].json()["model"], "claude-sonnet-4-6");
    assert_eq!(sent[0].header("x-api-key"), Some(ANTHROPIC_KEY));
}

#[test]
fn configured_models_win_over_keys() {
    let s = Setup::new();
    std::fs::create_dir_all(s.base.join("config/versus")).unwrap();
    std::fs::write(
        s.base.join("config/versus/config.toml"),
        "models = [\"demo/good\"]\n",
    )
    .unwrap();
    let out = s.ask(&[("OPENAI_API_KEY", OPENAI_KEY.to_string())]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(!stderr.contains("default model of each key"), "{stderr}");
    assert!(stdout.contains("demo/good") && !stdout.contains("gpt-5.4"));
}

#[test]
fn ask_with_no_key_and_no_model_says_what_to_set() {
    let s = Setup::new();
    let out = s.ask(&[]);
    let stderr = text(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("no model given and no API key set"),
        "{stderr}"
    );
    assert!(stderr.contains("OPENAI_API_KEY"), "{stderr}");
    // Vertex's default needs no key, but credentials and a project: said too.
    assert!(
        stderr.contains("GOOGLE_APPLICATION_CREDENTIALS and GOOGLE_CLOUD_PROJECT"),
        "{stderr}"
    );
}

#[test]
fn models_lists_the_defaults_of_the_keys_set() {
    let s = Setup::new();
    let vars = [("GEMINI_API_KEY", "g-defaults-SECRET".to_string())];
    let out = s.command(&vars).arg("models").output().unwrap();
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        stdout.contains("Default models: gemini/gemini-2.5-pro (GEMINI_API_KEY) (one per key set"),
        "{stdout}"
    );
    let out = s
        .command(&vars)
        .args(["models", "--json"])
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        json["models_without_flags"],
        json!({"specs": ["gemini/gemini-2.5-pro"], "from": "keys", "keys": ["GEMINI_API_KEY"]})
    );
    assert!(!text(&out.stdout).contains("g-defaults-SECRET"));
}

/// `versus run` of a recipe without `## Models` and no `-m`: the key's default model runs.
#[test]
fn run_with_only_a_key_runs_its_default_model() {
    let s = Setup::new();
    let openai = MockServer::start(vec![responses_text("RUN-DEFAULT")]);
    let recipe = s.base.join("r.recipe.md");
    std::fs::write(&recipe, "# r\n\nversion: 1\n\n## Tasks\n\n- say hello\n").unwrap();
    let out = s
        .command(&[
            ("OPENAI_API_KEY", OPENAI_KEY.to_string()),
            ("OPENAI_BASE_URL", format!("{}/v1", openai.url())),
        ])
        .arg("run")
        .arg(&recipe)
        .arg("--out")
        .arg(s.base.join("out"))
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("using the default model of each key set: openai/gpt-5.4"),
        "{stderr}"
    );
    assert_eq!(openai.requests()[0].json()["model"], "gpt-5.4", "{stderr}");
    let report = std::fs::read_to_string(s.base.join("out/report.json")).unwrap();
    assert!(report.contains("openai/gpt-5.4"), "{report}");
}

/// A service-account file (the Vertex tests' key, made for tests) whose token endpoint is
/// `tokens`, naming project `sa-proj`.
fn service_account(s: &Setup, tokens: &MockServer) -> PathBuf {
    let key = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/vertex/test-sa-key.pem"),
    )
    .unwrap();
    let path = s.base.join("sa.json");
    std::fs::write(
        &path,
        json!({"type": "service_account", "project_id": "sa-proj", "private_key_id": "k1",
               "private_key": key, "client_email": "t@sa-proj.iam.gserviceaccount.com",
               "token_uri": format!("{}/token", tokens.url())})
        .to_string(),
    )
    .unwrap();
    path
}

/// With only Google credentials (naming their project), `ask` runs Vertex's default model
/// and says so; `versus models` shows which credentials Vertex uses, not "not needed".
#[test]
fn vertex_credentials_alone_run_its_default_model_and_models_names_them() {
    let s = Setup::new();
    let tokens = MockServer::start(vec![Reply::json(
        200,
        json!({"access_token": "ya29.defaults-token", "expires_in": 3600}).to_string(),
    )]);
    let chunk = json!({"candidates": [{"content": {"parts": [{"text": "HELLO-FROM-VERTEX"}],
                                                   "role": "model"}, "finishReason": "STOP"}],
                       "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5}});
    let vertex = MockServer::start(vec![Reply::sse(format!("data: {chunk}\r\n\r\n"))]);
    let sa = service_account(&s, &tokens);
    let vars = [
        ("GOOGLE_APPLICATION_CREDENTIALS", sa.display().to_string()),
        ("GOOGLE_CLOUD_LOCATION", "us-east5".to_string()),
        ("VERTEX_BASE_URL", vertex.url()),
    ];
    let out = s.ask(&vars);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stderr.contains(
            "using the default model of each key set: vertex/gemini-2.5-pro (GOOGLE_APPLICATION_CREDENTIALS)"
        ),
        "{stderr}"
    );
    assert!(stdout.contains("HELLO-FROM-VERTEX"), "{stdout}");
    assert_eq!(
        vertex.requests()[0].target,
        "/v1/projects/sa-proj/locations/us-east5/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
    );

    let out = s.command(&vars).arg("models").output().unwrap();
    let stdout = text(&out.stdout);
    let row = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("vertex "))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(
        row.contains(&format!(
            "GOOGLE_APPLICATION_CREDENTIALS: service account ({})",
            sa.display()
        )),
        "{row}"
    );
    assert!(!row.contains("not needed"), "{row}");
    assert!(
        stdout.contains("Default models: vertex/gemini-2.5-pro (GOOGLE_APPLICATION_CREDENTIALS)"),
        "{stdout}"
    );
    let out = s
        .command(&vars)
        .args(["models", "--json"])
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let provider = json["providers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "vertex")
        .unwrap();
    assert_eq!(provider["key"], "set", "{provider}");

    // gcloud's file under HOME when the variable is unset; none at all: not found.
    let gcloud = s.base.join("home/.config/gcloud");
    std::fs::create_dir_all(&gcloud).unwrap();
    std::fs::copy(&sa, gcloud.join("application_default_credentials.json")).unwrap();
    let out = s.command(&[]).arg("models").output().unwrap();
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("gcloud application-default credentials: service account"),
        "{stdout}"
    );
    std::fs::remove_file(gcloud.join("application_default_credentials.json")).unwrap();
    let out = s.command(&[]).arg("models").output().unwrap();
    let stdout = text(&out.stdout);
    let row = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("vertex "))
        .unwrap();
    assert!(
        row.contains("not found (set GOOGLE_APPLICATION_CREDENTIALS"),
        "{row}"
    );
    assert!(stdout.contains("Default models: none"), "{stdout}");
    let out = s.command(&[]).args(["models", "--json"]).output().unwrap();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let provider = json["providers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "vertex")
        .unwrap();
    assert_eq!(provider["key"], "missing", "{provider}");
}
