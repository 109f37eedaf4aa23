//! web_search through `versus ask` with scripted demo models, against a local fake of each
//! backend that speaks its exact format (Brave's `GET ...?q=&count=` with
//! `X-Subscription-Token`, Tavily's and Exa's JSON `POST`s with their key headers, SearXNG's
//! `GET /search?q=&format=json`): what versus sent, what the model read, the backend in the
//! fairness ledger; and the ways a backend fails (not its JSON, an HTTP error, a metadata
//! address, a missing key), each said clearly while the run goes on.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util;

use std::path::PathBuf;
use std::process::{Command, Output};

use util::mock_server::{MockServer, Reply};
use util::versus;

struct World {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    config: PathBuf,
}

/// A committed repository with an ignored `scripts/` folder and a user config folder.
fn world() -> World {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let (root, config) = util::scripted_project(&base, &[]);
    World {
        _tmp: tmp,
        root,
        config,
    }
}

impl World {
    /// A demo script: one step per list of calls, then "done".
    fn script(&self, name: &str, steps: &[serde_json::Value]) -> String {
        util::tool_steps_script(&self.root, name, steps)
    }

    fn user_config(&self, toml: &str) {
        std::fs::write(self.config.join("versus/config.toml"), toml).unwrap();
    }

    fn versus(&self) -> Command {
        let mut c = versus();
        c.arg("-C")
            .arg(&self.root)
            .env("XDG_CONFIG_HOME", &self.config)
            .env_remove("BRAVE_API_KEY")
            .env_remove("TAVILY_API_KEY")
            .env_remove("EXA_API_KEY");
        c
    }

    fn ask(&self, models: &[&str], envs: &[(&str, &str)]) -> Output {
        let mut c = self.versus();
        c.args(["ask", "look it up"]);
        for m in models {
            c.args(["-m", m]);
        }
        c.envs(envs.iter().copied()).output().unwrap()
    }

    /// Every record of the latest session's log.
    fn records(&self) -> Vec<serde_json::Value> {
        let sessions = self.root.join(".versus/sessions");
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(&sessions)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        dirs.sort();
        std::fs::read_to_string(dirs.last().unwrap().join("events.jsonl"))
            .unwrap()
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect()
    }

    /// Each tool result of the latest session: (tool, text, is_error), in order.
    fn tool_outputs(&self) -> Vec<(String, String, bool)> {
        self.records()
            .iter()
            .filter_map(|v| {
                let event = v.get("event")?;
                (event["type"] == "tool_result").then(|| {
                    (
                        event["name"].as_str().unwrap_or_default().to_string(),
                        event["output"].as_str().unwrap_or_default().to_string(),
                        event["is_error"].as_bool().unwrap_or_default(),
                    )
                })
            })
            .collect()
    }
}

fn text(out: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A step searching for `query`, then a step reading a file (the run goes on after it).
fn search_then_read(query: &str, max: Option<u64>) -> Vec<serde_json::Value> {
    let mut args = serde_json::json!({ "query": query });
    if let Some(max) = max {
        args["max_results"] = max.into();
    }
    vec![
        serde_json::json!([{ "name": "web_search", "args": args }]),
        serde_json::json!([{ "name": "read_file", "args": { "path": "src/main.rs" } }]),
    ]
}

/// One backend played end to end: the request versus sent is checked by `sent`, the model
/// reads the two results (of three) in order as title / URL / snippet, and the run goes on.
fn plays(
    backend: &str,
    path: &str,
    key: Option<(&str, &str)>,
    answer: &str,
    sent: impl Fn(&util::mock_server::Recorded),
) {
    let w = world();
    let fake = MockServer::start(vec![Reply::json(200, answer.to_string())]);
    w.user_config(&format!(
        "[web_search]\nbackend = \"{backend}\"\nurl = \"{}{path}\"\n",
        fake.url()
    ));
    let model = w.script(backend, &search_then_read("rust async book", Some(2)));
    let envs: Vec<(&str, &str)> = key.into_iter().collect();
    let out = w.ask(&[&model], &envs);
    assert!(out.status.success(), "{}", text(&out));
    let requests = fake.requests();
    assert_eq!(requests.len(), 1, "{requests:?}");
    sent(&requests[0]);
    let outputs = w.tool_outputs();
    assert_eq!(outputs.len(), 2, "{outputs:?}\n{}", text(&out));
    let (name, result, is_error) = &outputs[0];
    assert_eq!(
        (name.as_str(), *is_error),
        ("web_search", false),
        "{result}"
    );
    let expected = format!(
        "web search ({backend}) for \"rust async book\": 2 results\n\n\
         1. Async Rust\n   https://rust-lang.github.io/async-book/\n   The async book & its chapters\n\n\
         2. Tokio tutorial\n   https://tokio.rs/tokio/tutorial\n   Learn Tokio step by step\n"
    );
    assert_eq!(result, &expected);
    assert!(
        !result.contains("Third"),
        "bounded to max_results: {result}"
    );
    assert_eq!(outputs[1].0, "read_file");
    // The ledger records the backend for the model, never the key.
    let context = w
        .records()
        .into_iter()
        .find(|r| r["type"] == "context")
        .expect("a context record");
    let settings = context["ledger"][0]["tool_settings"].to_string();
    assert!(
        settings.contains(&format!("web_search: {backend} {}{path}", fake.url())),
        "{settings}"
    );
    if let Some((_, secret)) = key {
        let log = w
            .records()
            .iter()
            .map(|r| r.to_string())
            .collect::<String>();
        assert!(!log.contains(secret), "the key is in the session log");
    }
}

#[test]
fn brave_is_asked_with_its_query_string_and_token_and_answers_web_results() {
    plays(
        "brave",
        "/res/v1/web/search",
        Some(("BRAVE_API_KEY", "brave-test-key")),
        r#"{"type":"search","query":{"original":"rust async book"},"web":{"type":"search","results":[
            {"title":"<strong>Async</strong> Rust","url":"https://rust-lang.github.io/async-book/","description":"The async book &amp; its chapters","language":"en"},
            {"title":"Tokio tutorial","url":"https://tokio.rs/tokio/tutorial","description":"Learn <strong>Tokio</strong> step by step"},
            {"title":"Third","url":"https://example.com/3","description":"more"}]}}"#,
        |r| {
            assert_eq!(r.method, "GET");
            assert_eq!(
                r.target, "/res/v1/web/search?q=rust+async+book&count=2",
                "{r:?}"
            );
            assert_eq!(r.header("x-subscription-token"), Some("brave-test-key"));
            assert_eq!(r.header("accept"), Some("application/json"));
        },
    );
}

#[test]
fn tavily_is_asked_with_a_json_post_and_a_bearer_key_and_answers_results() {
    plays(
        "tavily",
        "/search",
        Some(("TAVILY_API_KEY", "tvly-test-key")),
        r#"{"query":"rust async book","answer":null,"images":[],"response_time":0.5,"results":[
            {"title":"Async Rust","url":"https://rust-lang.github.io/async-book/","content":"The async book & its chapters","score":0.9,"raw_content":null},
            {"title":"Tokio tutorial","url":"https://tokio.rs/tokio/tutorial","content":"Learn Tokio step by step","score":0.8},
            {"title":"Third","url":"https://example.com/3","content":"more","score":0.1}]}"#,
        |r| {
            assert_eq!((r.method.as_str(), r.target.as_str()), ("POST", "/search"));
            assert_eq!(r.header("authorization"), Some("Bearer tvly-test-key"));
            assert_eq!(r.header("content-type"), Some("application/json"));
            assert_eq!(
                r.json(),
                serde_json::json!({"query": "rust async book", "max_results": 2})
            );
        },
    );
}

#[test]
fn exa_is_asked_with_a_json_post_and_its_key_header_and_answers_highlights() {
    plays(
        "exa",
        "/search",
        Some(("EXA_API_KEY", "exa-test-key")),
        r#"{"requestId":"b5947044","resolvedSearchType":"neural","results":[
            {"id":"a","title":"Async Rust","url":"https://rust-lang.github.io/async-book/","publishedDate":null,"author":null,"highlights":["The async book & its chapters"],"highlightScores":[0.5]},
            {"id":"b","title":"Tokio tutorial","url":"https://tokio.rs/tokio/tutorial","summary":"Learn Tokio step by step"},
            {"id":"c","title":"Third","url":"https://example.com/3","text":"more"}],"costDollars":{"total":0.005}}"#,
        |r| {
            assert_eq!((r.method.as_str(), r.target.as_str()), ("POST", "/search"));
            assert_eq!(r.header("x-api-key"), Some("exa-test-key"));
            assert_eq!(
                r.json(),
                serde_json::json!({
                    "query": "rust async book",
                    "numResults": 2,
                    "type": "auto",
                    "contents": {"highlights": true}
                })
            );
        },
    );
}

#[test]
fn searxng_is_asked_for_json_without_a_key_and_answers_results() {
    plays(
        "searxng",
        "",
        None,
        r#"{"query":"rust async book","number_of_results":0,"results":[
            {"url":"https://rust-lang.github.io/async-book/","title":"Async Rust","content":"The async book &amp; its chapters","engine":"duckduckgo","engines":["duckduckgo"],"score":1.0,"category":"general"},
            {"url":"https://tokio.rs/tokio/tutorial","title":"Tokio tutorial","content":"Learn Tokio step by step","engine":"brave"},
            {"url":"https://example.com/3","title":"Third","content":"more"}],
            "answers":[],"corrections":[],"infoboxes":[],"suggestions":[],"unresponsive_engines":[]}"#,
        |r| {
            assert_eq!(r.method, "GET");
            assert_eq!(r.target, "/search?q=rust+async+book&format=json", "{r:?}");
            assert!(r.header("authorization").is_none());
        },
    );
}

/// Bad answers from a backend: each is an error result naming the backend and what to check,
/// and the model's next step still runs.
#[test]
fn a_bad_backend_answer_is_a_clear_tool_error_and_the_run_goes_on() {
    let cases: [(&str, Reply, &str); 4] = [
        (
            "searxng",
            Reply::json(200, "<html><body>Too many requests</body></html>")
                .header("x-note", "html"),
            "SearXNG's answer is not a SearXNG search result (not JSON",
        ),
        (
            "searxng",
            Reply::json(403, "Forbidden"),
            "SearXNG answered HTTP 403 Forbidden (a SearXNG instance answers 403 when JSON \
             output is off: add `json` to `search.formats` in its settings.yml)",
        ),
        (
            "brave",
            Reply::json(401, r#"{"error":{"code":"SUBSCRIPTION_TOKEN_INVALID"}}"#),
            "Brave Search answered HTTP 401 Unauthorized (check the key in BRAVE_API_KEY). \
             It said: {\"error\":{\"code\":\"SUBSCRIPTION_TOKEN_INVALID\"}}",
        ),
        (
            "tavily",
            Reply::json(200, r#"{"detail":{"error":"Invalid API key"}}"#),
            "Tavily's answer is not a Tavily search result (no `results` list)",
        ),
    ];
    for (backend, reply, said) in cases {
        let w = world();
        let fake = MockServer::start(vec![reply]);
        w.user_config(&format!(
            "[web_search]\nbackend = \"{backend}\"\nurl = \"{}/search\"\n",
            fake.url()
        ));
        let model = w.script("bad", &search_then_read("anything", None));
        let out = w.ask(
            &[&model],
            &[("BRAVE_API_KEY", "k"), ("TAVILY_API_KEY", "k")],
        );
        assert!(out.status.success(), "{backend}: {}", text(&out));
        let outputs = w.tool_outputs();
        assert_eq!(outputs.len(), 2, "{backend}: {outputs:?}");
        let (name, result, is_error) = &outputs[0];
        assert_eq!(name, "web_search");
        assert!(*is_error, "{backend}: {result}");
        assert!(result.contains(said), "{backend}: {result}");
        // The run went on: the next step's read ran.
        assert_eq!(outputs[1].0, "read_file");
        assert!(!outputs[1].2, "{outputs:?}");
    }
}

/// The address rules of web_fetch hold for the backend: even the user's own `url` may not be a
/// cloud metadata or link-local address (loopback and private ones are allowed there, for a
/// SearXNG on this machine). Nothing is sent; the run goes on.
#[test]
fn a_backend_at_a_metadata_address_is_refused_and_the_run_goes_on() {
    let w = world();
    w.user_config("[web_search]\nbackend = \"searxng\"\nurl = \"http://169.254.169.254/\"\n");
    let model = w.script("meta", &search_then_read("credentials", None));
    let out = w.ask(&[&model], &[]);
    assert!(out.status.success(), "{}", text(&out));
    let outputs = w.tool_outputs();
    let (_, result, is_error) = &outputs[0];
    assert!(*is_error);
    assert!(
        result.contains("web_search: could not reach SearXNG")
            && result.contains("a cloud metadata service address"),
        "{result}"
    );
    assert_eq!(outputs[1].0, "read_file");
}

/// A keyed backend without its key stops before any model runs, saying which variable to set;
/// without `[web_search]` there is no web_search at all (off unless configured).
#[test]
fn a_missing_key_stops_the_run_and_no_config_means_no_web_search() {
    let w = world();
    w.user_config("[web_search]\nbackend = \"brave\"\n");
    let model = w.script("nokey", &search_then_read("x", None));
    let out = w.ask(&[&model], &[]);
    assert!(!out.status.success(), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("web_search with `brave` needs its key: set BRAVE_API_KEY"),
        "{stderr}"
    );
    w.user_config("");
    let out = w.ask(&[&model], &[]);
    assert!(out.status.success(), "{}", text(&out));
    let outputs = w.tool_outputs();
    assert!(outputs[0].2, "{outputs:?}");
    assert!(
        outputs[0].1.starts_with("unknown tool `web_search`"),
        "{outputs:?}"
    );
}

/// Two models of one run get the same backend, so the same ledger; the backend is part of it.
#[test]
fn every_model_of_a_run_gets_the_same_backend_in_the_ledger() {
    let w = world();
    let fake = MockServer::start(vec![
        Reply::json(200, r#"{"results":[]}"#),
        Reply::json(200, r#"{"results":[]}"#),
    ]);
    w.user_config(&format!(
        "[web_search]\nurl = \"{}\"\nmax_results = 3\n",
        fake.url()
    ));
    let model = w.script("both", &search_then_read("nothing here", None));
    let second = format!("{model}#2");
    let out = w.ask(&[&model, &second], &[]);
    assert!(out.status.success(), "{}", text(&out));
    let context = w
        .records()
        .into_iter()
        .find(|r| r["type"] == "context")
        .unwrap();
    let ledger = context["ledger"].as_array().unwrap();
    assert_eq!(ledger.len(), 2);
    assert_eq!(ledger[0]["hash"], ledger[1]["hash"]);
    assert!(ledger[0].get("differs").is_none(), "{ledger:?}");
    assert_eq!(
        ledger[0]["tool_settings"],
        serde_json::json!([format!("web_search: searxng {}/", fake.url())])
    );
    let outputs = w.tool_outputs();
    assert!(
        outputs
            .iter()
            .filter(|o| o.0 == "web_search")
            .all(|o| o.1.contains(": 0 results\n\nNo results; try other words.")),
        "{outputs:?}"
    );
}

/// `versus run`: a recipe's `## Tools` naming `web_search(searxng)` gives its models the
/// backend of the user's config (address from there, never from the recipe), and the report
/// sees the call.
#[test]
fn a_recipe_offers_web_search_with_the_backend_it_names() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().canonicalize().unwrap();
    let config = dir.join("config");
    std::fs::create_dir_all(config.join("versus")).unwrap();
    std::fs::create_dir_all(dir.join("project")).unwrap();
    std::fs::write(dir.join("project/README.md"), "# p\n").unwrap();
    let fake = MockServer::start(vec![Reply::json(
        200,
        r#"{"results":[{"url":"https://docs.rs/tokio","title":"tokio - Rust","content":"An event-driven runtime"}]}"#,
    )]);
    std::fs::write(
        config.join("versus/config.toml"),
        format!("[web_search]\nurl = \"{}\"\n", fake.url()),
    )
    .unwrap();
    std::fs::write(
        dir.join("searcher.jsonl"),
        "{\"tools\": [{\"name\": \"web_search\", \"args\": {\"query\": \"tokio docs\"}}]}\n\
         {\"say\": \"Found it.\"}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("search.recipe.md"),
        "# Search\nversion: 1\n\n## Models\n- demo/searcher.jsonl\n\n## Constraints\n\
         timeout: 1m\nproject_root: project\n\n## Tools\n- read_file\n- web_search(searxng)\n\n\
         ## Tasks\n\n### look\nFind the tokio docs.\n\n## Success Criteria\n- no_errors\n\
         - tool_used: web_search\n",
    )
    .unwrap();
    let out = versus()
        .current_dir(&dir)
        .args(["run", "search.recipe.md", "--out", "out", "--json"])
        .env("XDG_CONFIG_HOME", &config)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let requests = fake.requests();
    assert_eq!(requests.len(), 1, "{}", text(&out));
    assert_eq!(requests[0].target, "/search?q=tokio+docs&format=json");
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("out/report.json")).unwrap()).unwrap();
    let report_text = report.to_string();
    assert!(
        report_text.contains("tool_used: web_search"),
        "{report_text}"
    );
    let events_dir = dir.join("out/events/look");
    let events: String = std::fs::read_dir(&events_dir)
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect();
    assert!(
        events.contains(r#"1. tokio - Rust\n   https://docs.rs/tokio\n   An event-driven runtime"#),
        "{events}"
    );
}

/// Issue 24: `versus tool web_search` runs the search by hand as a turn would: the backend,
/// address and key variable of the user's config, the key from the environment (never in the
/// output), off with a clear message when not configured, and a project's config may not
/// point it elsewhere.
#[test]
fn versus_tool_runs_web_search_with_the_configured_backend() {
    let w = world();
    let tool = |envs: &[(&str, &str)], extra: &[&str]| {
        let mut c = w.versus();
        c.args(extra)
            .args(["tool", "web_search", "--args"])
            .arg(r#"{"query": "rust async book", "max_results": 1}"#)
            .envs(envs.iter().copied());
        c.output().unwrap()
    };
    // Not configured: off, said with what to add; the listing says so too.
    let out = tool(&[], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("web_search is off: add [web_search] to your config"),
        "{}",
        text(&out)
    );
    let list = w.versus().arg("tool").output().unwrap();
    assert!(list.status.success(), "{}", text(&list));
    assert!(
        String::from_utf8_lossy(&list.stdout).contains("web_search       (web_search is off"),
        "{}",
        text(&list)
    );

    let fake = MockServer::start(vec![Reply::json(
        200,
        r#"{"type":"search","web":{"results":[
            {"title":"Async Rust","url":"https://rust-lang.github.io/async-book/","description":"The async book"},
            {"title":"Second","url":"https://example.com/2","description":"more"}]}}"#,
    )]);
    w.user_config(&format!(
        "[web_search]\nbackend = \"brave\"\nurl = \"{}/res/v1/web/search\"\n",
        fake.url()
    ));
    // Configured, but the key is missing: which variable to set.
    let out = tool(&[], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("BRAVE_API_KEY"),
        "{}",
        text(&out)
    );
    assert!(fake.requests().is_empty());

    // With the key: the backend's exact request, the results on stdout, the key nowhere.
    let out = tool(&[("BRAVE_API_KEY", "brave-tool-key")], &[]);
    assert!(out.status.success(), "{}", text(&out));
    let requests = fake.requests();
    assert_eq!(requests.len(), 1, "{requests:?}");
    assert_eq!(
        requests[0].target,
        "/res/v1/web/search?q=rust+async+book&count=1"
    );
    assert_eq!(
        requests[0].header("x-subscription-token"),
        Some("brave-tool-key")
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        stdout,
        "web search (brave) for \"rust async book\": 1 result\n\n\
         1. Async Rust\n   https://rust-lang.github.io/async-book/\n   The async book\n"
    );
    assert!(!text(&out).contains("brave-tool-key"));
    let list = w.versus().arg("tool").output().unwrap();
    let listed = String::from_utf8_lossy(&list.stdout);
    assert!(
        listed
            .lines()
            .any(|l| l.starts_with("web_search ") && !l.contains("is off")),
        "{listed}"
    );

    // A trusted project's config may not send the key elsewhere.
    std::fs::create_dir_all(w.root.join(".versus")).unwrap();
    std::fs::write(
        w.root.join(".versus/config.toml"),
        "[web_search]\nurl = \"http://attacker.example\"\n",
    )
    .unwrap();
    let out = tool(&[("BRAVE_API_KEY", "brave-tool-key")], &["--trust"]);
    assert!(!out.status.success(), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("a project's config may not set `url`"),
        "{}",
        text(&out)
    );
    assert_eq!(fake.requests().len(), 1, "nothing more was sent");
}

/// Issue 24: a recipe without `## Tools` gives its models the web_search of the user's
/// config, so `tool_used: web_search` is satisfiable then: `recipe check` says where it comes
/// from and `versus run` passes it; without `[web_search]`, `recipe check` and `versus run`
/// say clearly that it can never pass and what to add.
#[test]
fn a_recipe_without_tools_counts_tool_used_web_search_when_the_config_has_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().canonicalize().unwrap();
    let config = dir.join("config");
    std::fs::create_dir_all(config.join("versus")).unwrap();
    std::fs::create_dir_all(dir.join("project")).unwrap();
    std::fs::write(dir.join("project/README.md"), "# p\n").unwrap();
    std::fs::write(
        dir.join("searcher.jsonl"),
        "{\"tools\": [{\"name\": \"web_search\", \"args\": {\"query\": \"tokio docs\"}}]}\n\
         {\"say\": \"Found it.\"}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("search.recipe.md"),
        "# Search\nversion: 1\n\n## Models\n- demo/searcher.jsonl\n\n## Constraints\n\
         timeout: 1m\nproject_root: project\n\n## Tasks\n\n### look\nFind the tokio docs.\n\n\
         ## Success Criteria\n- tool_used: web_search\n",
    )
    .unwrap();
    let run = |args: &[&str]| {
        versus()
            .current_dir(&dir)
            .args(args)
            .env("XDG_CONFIG_HOME", &config)
            .output()
            .unwrap()
    };

    // No [web_search]: the check names the line, why, and what to add; the run refuses too.
    let out = run(&["recipe", "check", "search.recipe.md"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("search.recipe.md:17: `tool_used: web_search` can never pass: web_search is not configured")
            && said.contains("add [web_search] to your config"),
        "{}",
        text(&out)
    );
    let out = run(&["run", "search.recipe.md", "--out", "out-none"]);
    assert!(!out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("web_search is not configured"),
        "{}",
        text(&out)
    );

    // With [web_search]: the check passes and says so; the run offers it and the criterion
    // passes.
    let fake = MockServer::start(vec![Reply::json(
        200,
        r#"{"results":[{"url":"https://docs.rs/tokio","title":"tokio - Rust","content":"An event-driven runtime"}]}"#,
    )]);
    std::fs::write(
        config.join("versus/config.toml"),
        format!("[web_search]\nurl = \"{}\"\n", fake.url()),
    )
    .unwrap();
    let out = run(&["recipe", "check", "search.recipe.md"]);
    assert!(out.status.success(), "{}", text(&out));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("web_search: from your config's [web_search]"),
        "{said}"
    );
    assert!(
        said.lines()
            .any(|l| l.starts_with("tools:") && l.contains("web_fetch, web_search")),
        "{said}"
    );
    let out = run(&["run", "search.recipe.md", "--out", "out", "--json"]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(fake.requests().len(), 1, "{}", text(&out));
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("out/report.json")).unwrap()).unwrap();
    assert_eq!(report["passed"], true, "{report}");
    assert!(
        report
            .to_string()
            .contains(r#""criterion":"tool_used: web_search","detail":"web_search called 1 time","kind":"tool_used","passed":true"#),
        "{report}"
    );
}
