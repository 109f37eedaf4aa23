//! `versus models` and `versus completions` through the real binary: keys reported as set or
//! missing (never printed), config layering, custom providers, `.env`, errors with locations.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util;

use std::process::{Command, Output};

use util::Dir;

const FAKE_KEY: &str = "sk-fake-0123456789abcdef";

/// A project folder and a home folder (with XDG_CONFIG_HOME inside it).
struct Setup {
    project: Dir,
    home: Dir,
}

impl Setup {
    fn new() -> Self {
        Self {
            project: Dir::new(),
            home: Dir::new(),
        }
    }

    fn user_config(&self, text: &str) {
        self.home.write("xdg/versus/config.toml", text);
    }

    /// `versus trust` in the project: its own config and `.env` count from now on.
    fn trust(&self) {
        let out = self.run(&["trust"], &[]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut c = util::versus_without_providers();
        c.env("HOME", self.home.path())
            .env("XDG_CONFIG_HOME", self.home.path().join("xdg"))
            .arg("-C")
            .arg(self.project.path())
            .args(args);
        c
    }

    fn run(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut c = self.command(args);
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().unwrap()
    }

    fn ok(&self, args: &[&str], env: &[(&str, &str)]) -> String {
        let out = self.run(args, env);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?} failed: {stderr}");
        let stdout = String::from_utf8(out.stdout).unwrap();
        assert!(
            !stdout.contains(FAKE_KEY) && !stderr.contains(FAKE_KEY),
            "key leaked"
        );
        stdout
    }

    fn json(&self, env: &[(&str, &str)]) -> serde_json::Value {
        serde_json::from_str(&self.ok(&["models", "--json"], env)).unwrap()
    }
}

fn provider<'a>(json: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    json["providers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("no provider {name} in {json:#}"))
}

fn line_of<'a>(text: &'a str, start: &str) -> &'a str {
    text.lines()
        .find(|l| l.trim_start().starts_with(start))
        .unwrap_or_else(|| panic!("no line starting with {start:?} in:\n{text}"))
}

#[test]
fn keys_show_as_set_or_missing_and_never_as_values() {
    let s = Setup::new();
    let text = s.ok(&["models"], &[]);
    assert!(
        line_of(&text, "openai ").contains("OPENAI_API_KEY: missing"),
        "{text}"
    );
    assert!(line_of(&text, "ollama ").contains("not needed"), "{text}");
    assert!(line_of(&text, "demo ").contains("not needed"), "{text}");

    let text = s.ok(
        &["models"],
        &[("OPENAI_API_KEY", FAKE_KEY), ("GOOGLE_API_KEY", FAKE_KEY)],
    );
    assert!(
        line_of(&text, "openai ").contains("OPENAI_API_KEY: set"),
        "{text}"
    );
    assert!(
        line_of(&text, "gemini ").contains("GOOGLE_API_KEY: set"),
        "{text}"
    );
    assert!(
        line_of(&text, "anthropic ").contains("ANTHROPIC_API_KEY: missing"),
        "{text}"
    );

    let json = s.json(&[("OPENAI_API_KEY", FAKE_KEY)]);
    assert_eq!(provider(&json, "openai")["key"], "set");
    assert_eq!(provider(&json, "openai")["key_source"], "OPENAI_API_KEY");
    assert_eq!(provider(&json, "anthropic")["key"], "missing");
    assert_eq!(provider(&json, "ollama")["key"], "not_needed");
}

#[test]
fn lists_providers_prices_and_windows() {
    let s = Setup::new();
    let text = s.ok(&["models"], &[]);
    let openai = line_of(&text, "openai ");
    assert!(openai.contains("openai-responses") && openai.contains("https://api.openai.com/v1"));
    assert!(line_of(&text, "ollama ").contains("http://127.0.0.1:11434"));
    let sonnet = line_of(&text, "anthropic/claude-sonnet-4-5 ");
    assert!(sonnet.contains("3.00") && sonnet.contains("15.00") && sonnet.contains("200K"));

    let json = s.json(&[]);
    let gpt5 = json["models"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["spec"] == "openai/gpt-5")
        .unwrap();
    assert_eq!(gpt5["price"]["input"], 1.25);
    assert_eq!(gpt5["context_window"], 400_000);
    assert_eq!(json["default_models"], serde_json::json!([]));
    assert!(json["prices_checked"].as_str().unwrap().starts_with("20"));
}

#[test]
fn env_base_url_override_is_shown_with_its_source() {
    let s = Setup::new();
    let text = s.ok(
        &["models"],
        &[("OPENAI_BASE_URL", "http://127.0.0.1:9/v1/")],
    );
    assert!(
        line_of(&text, "openai ").contains("http://127.0.0.1:9/v1 (env:OPENAI_BASE_URL)"),
        "{text}"
    );
}

#[test]
fn a_configured_provider_appears_with_its_models_and_defaults() {
    let s = Setup::new();
    s.user_config(
        r#"
models = ["local/qwen-coder", "openai/gpt-5#2"]

[providers.local]
kind = "openai-chat"
base_url = "http://127.0.0.1:8000/v1"
api_key_env = "LOCAL_KEY"
headers = { "X-Secret-Token" = "header-secret-value" }
models = ["qwen-coder", "llama"]

[prices."local/qwen-coder"]
input = 0.5
output = 1.5
context_window = 32768
"#,
    );
    let text = s.ok(&["models"], &[]);
    let local = line_of(&text, "local ");
    assert!(local.contains("openai-chat"), "{local}");
    assert!(local.contains("http://127.0.0.1:8000/v1"), "{local}");
    assert!(local.contains("LOCAL_KEY: missing"), "{local}");
    assert!(
        line_of(&text, "local/qwen-coder ").contains("0.50"),
        "{text}"
    );
    assert!(
        line_of(&text, "local/qwen-coder ").contains("33K"),
        "{text}"
    );
    assert!(line_of(&text, "local/llama ").contains("unknown"), "{text}");
    assert!(
        text.contains("Default models: local/qwen-coder, openai/gpt-5#2"),
        "{text}"
    );
    assert!(
        !text.contains("header-secret-value"),
        "header values are not shown"
    );

    let text = s.ok(&["models"], &[("LOCAL_KEY", FAKE_KEY)]);
    assert!(
        line_of(&text, "local ").contains("LOCAL_KEY: set"),
        "{text}"
    );

    let json = s.json(&[]);
    let local = provider(&json, "local");
    assert_eq!(local["builtin"], false);
    assert_eq!(local["key_vars"], serde_json::json!(["LOCAL_KEY"]));
    assert_eq!(local["headers"], serde_json::json!(["X-Secret-Token"]));
    let llama = json["models"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["spec"] == "local/llama")
        .unwrap();
    assert!(
        llama["price"].is_null(),
        "unknown price is null, not 0: {llama}"
    );
    assert_eq!(llama["free"], false);
}

#[test]
fn project_config_layers_over_the_user_config() {
    let s = Setup::new();
    s.user_config("models = [\"openai/gpt-5\"]\n[providers.openai]\nkind = \"openai-chat\"\n");
    s.project.write(
        ".versus/config.toml",
        "models = [\"demo/good\", \"demo/good#2\"]\n",
    );
    // Untrusted, the project's file is ignored.
    assert_eq!(
        s.json(&[])["default_models"],
        serde_json::json!(["openai/gpt-5"])
    );
    s.trust();
    let json = s.json(&[]);
    assert_eq!(
        json["default_models"],
        serde_json::json!(["demo/good", "demo/good#2"])
    );
    assert_eq!(provider(&json, "openai")["kind"], "openai-chat");
    let files = json["config_files"].as_array().unwrap();
    assert_eq!(files.len(), 2);
    assert!(files.iter().all(|f| f["loaded"] == true), "{files:?}");
}

#[test]
fn config_flag_replaces_the_user_config() {
    let s = Setup::new();
    s.user_config("models = [\"openai/gpt-5\"]\n");
    let other = s
        .home
        .write("other.toml", "models = [\"anthropic/claude-haiku-4-5\"]\n");
    let json: serde_json::Value = serde_json::from_str(&s.ok(
        &["--config", other.to_str().unwrap(), "models", "--json"],
        &[],
    ))
    .unwrap();
    assert_eq!(
        json["default_models"],
        serde_json::json!(["anthropic/claude-haiku-4-5"])
    );
    assert_eq!(json["config_files"][0]["role"], "explicit");

    let out = s.run(&["--config", "/nonexistent/versus.toml", "models"], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/versus.toml"));
}

#[test]
fn dotenv_supplies_keys_but_never_overrides_the_environment() {
    let s = Setup::new();
    s.project.write(
        ".env",
        format!("# keys\nexport ANTHROPIC_API_KEY=\"{FAKE_KEY}\"\nOPENAI_API_KEY={FAKE_KEY}\n"),
    );
    s.trust();
    let text = s.ok(&["models"], &[]);
    assert!(
        line_of(&text, "anthropic ").contains("ANTHROPIC_API_KEY (.env): set"),
        "{text}"
    );
    let json = s.json(&[("OPENAI_API_KEY", "sk-from-process")]);
    assert_eq!(provider(&json, "openai")["key_source"], "OPENAI_API_KEY");
    assert_eq!(
        provider(&json, "anthropic")["key_source"],
        "ANTHROPIC_API_KEY (.env)"
    );
}

#[test]
fn config_errors_name_file_line_key_and_accepted_keys() {
    let s = Setup::new();
    s.user_config("[providers.local]\nkind = \"openai-chat\"\nbase_ulr = \"http://x\"\n");
    let out = s.run(&["models"], &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("xdg/versus/config.toml:3"), "{err}");
    assert!(err.contains("unknown key `base_ulr`"), "{err}");
    assert!(err.contains("`base_url`"), "{err}");

    s.user_config("models = [\"opneai/gpt-5\"]\n");
    let err = String::from_utf8_lossy(&s.run(&["models"], &[]).stderr).into_owned();
    assert!(err.contains("unknown provider `opneai`"), "{err}");
    assert!(err.contains("known providers: openai, anthropic"), "{err}");
}

#[test]
fn a_bad_dotenv_line_is_reported_without_its_text() {
    let s = Setup::new();
    s.project.write(".env", format!("OK=1\n{FAKE_KEY}\n"));
    s.trust();
    let out = s.run(&["models"], &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(".env:2"), "{err}");
    assert!(!err.contains(FAKE_KEY), "{err}");
}

#[test]
fn completions_print_a_script_per_shell() {
    let s = Setup::new();
    let bash = s.ok(&["completions", "bash"], &[]);
    assert!(bash.contains("_versus()"), "{bash}");
    assert!(bash.contains("models") && bash.contains("completions") && bash.contains("--config"));
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let script = s.ok(&["completions", shell], &[]);
        assert!(script.contains("versus"), "{shell}: {script}");
    }
    let out = s.run(&["completions", "tcsh"], &[]);
    assert_eq!(out.status.code(), Some(2));
}
