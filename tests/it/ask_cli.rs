//! `versus ask`, `versus rewind` and `versus demo` end to end through the binary, with scripted
//! demo models on real temporary git repositories.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util;

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::Duration;

use util::{git, tree_state as tree, versus};

fn write(root: &Path, rel: &str, content: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, content).unwrap();
}

const MODEL_A: &str = r##"
{"say": "Editing.", "tools": [{"name": "edit_file", "args": {"path": "src/calc.txt", "old_string": "two = 3", "new_string": "two = 2"}}, {"name": "write_file", "args": {"path": "docs/new/notes.md", "content": "# Notes\n"}}]}
{"tools": [{"name": "bash", "args": {"command": "rm old.txt && chmod +x run.sh && echo ran"}}]}
{"say": "Fixed two and added notes."}
"##;

const MODEL_B: &str = r#"
{"tools": [{"name": "write_file", "args": {"path": "src/calc.txt", "content": "rewritten\n"}}]}
{"say": "Rewrote it."}
"#;

/// A repository with a script, a file to fix, a file to delete, an uncommitted edit and an
/// untracked file; demo scripts live in an ignored folder.
pub(crate) fn project() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    write(&root, "src/calc.txt", "one = 1\ntwo = 3\nthree = 3\n");
    write(&root, "old.txt", "obsolete\n");
    write(&root, "run.sh", "#!/bin/sh\necho run\n");
    write(&root, ".gitignore", "scripts/\n");
    write(&root, "scripts/a.jsonl", MODEL_A);
    write(&root, "scripts/b.jsonl", MODEL_B);
    git(&root, &["init", "-q"]);
    git(&root, &["add", "."]);
    git(&root, &["commit", "-qm", "init"]);
    write(
        &root,
        "src/calc.txt",
        "one = 1\ntwo = 3\nthree = 3\nfour = 4\n",
    );
    write(&root, "untracked.txt", "mine\n");
    (tmp, root)
}

pub(crate) fn ask(root: &Path, extra: &[&str]) -> Output {
    versus()
        .arg("-C")
        .arg(root)
        .args([
            "ask",
            "fix two",
            "-m",
            "demo/scripts/a.jsonl",
            "-m",
            "demo/scripts/b.jsonl",
        ])
        .args(extra)
        .env("XDG_CONFIG_HOME", root.join(".no-config"))
        .output()
        .unwrap()
}

pub(crate) fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn ask_prints_the_table_and_diffs_and_changes_nothing() {
    let (_tmp, root) = project();
    let before = tree(&root);
    let out = ask(&root, &[]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.starts_with("model"), "{stdout}");
    assert!(stdout.contains("failed edits"));
    let row_a = stdout
        .lines()
        .find(|l| l.starts_with("demo/scripts/a.jsonl"))
        .unwrap();
    assert!(row_a.contains("done"), "{row_a}");
    assert!(row_a.contains("+2 -2"), "{row_a}");
    assert!(stdout.contains("+two = 2"), "{stdout}");
    assert!(
        stdout.contains("diff --git a/old.txt b/old.txt\ndeleted file mode 100644"),
        "{stdout}"
    );
    assert!(stdout.contains("+rewritten"), "{stdout}");
    // Progress went to stderr, not stdout.
    assert!(stderr.contains("edit_file src/calc.txt"), "{stderr}");
    assert_eq!(
        tree(&root),
        before,
        "the user's tree changed before any pick"
    );
    // The session log holds the run's events.
    let sessions: Vec<_> = std::fs::read_dir(root.join(".versus/sessions"))
        .unwrap()
        .collect();
    assert_eq!(sessions.len(), 1);
    let events =
        std::fs::read_to_string(sessions[0].as_ref().unwrap().path().join("events.jsonl")).unwrap();
    assert!(events.contains("\"type\":\"turn\""));
    assert!(events.contains("tool_result"));
    let exclude = std::fs::read_to_string(root.join(".git/info/exclude")).unwrap();
    assert!(exclude.contains(".versus/"));
}

#[test]
fn pick_applies_exactly_that_change_set_and_rewind_restores_the_tree() {
    let (_tmp, root) = project();
    let before = tree(&root);
    let out = ask(&root, &["--pick", "demo/scripts/a.jsonl"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("Applied demo/scripts/a.jsonl"), "{stdout}");

    let after = tree(&root);
    let mut expected = before.clone();
    let calc_mode = before["src/calc.txt"].1;
    expected.insert(
        "src/calc.txt".into(),
        (
            b"one = 1\ntwo = 2\nthree = 3\nfour = 4\n".to_vec(),
            calc_mode,
        ),
    );
    expected.insert("docs/new/notes.md".into(), (b"# Notes\n".to_vec(), 0o644));
    expected.insert("docs/".into(), (Vec::new(), 0));
    expected.insert("docs/new/".into(), (Vec::new(), 0));
    expected.remove("old.txt");
    // chmod +x by bash is a change of the executable bit, shown (old mode 100644 / new mode
    // 100755) and applied as such: the script keeps its bytes and becomes 0755.
    let script = before["run.sh"].0.clone();
    expected.insert("run.sh".into(), (script, 0o755));
    assert!(
        stdout.contains("diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n"),
        "{stdout}"
    );
    assert_eq!(
        after.keys().collect::<Vec<_>>(),
        expected.keys().collect::<Vec<_>>()
    );
    for (path, want) in &expected {
        assert_eq!(&after[path], want, "{path}");
    }

    let prefs = std::fs::read_to_string(root.join(".versus/preferences.jsonl")).unwrap();
    let line: serde_json::Value = serde_json::from_str(prefs.lines().next().unwrap()).unwrap();
    assert_eq!(line["chosen"], serde_json::json!(["demo/scripts/a.jsonl"]));
    assert_eq!(line["models"].as_array().unwrap().len(), 2);
    assert_eq!(line["source"], "ask");

    let rewind = versus()
        .arg("-C")
        .arg(&root)
        .args(["rewind", "--yes"])
        .output()
        .unwrap();
    let (stdout, stderr) = text(&rewind);
    assert!(rewind.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("4 files"), "{stdout}");
    assert_eq!(
        tree(&root),
        before,
        "rewind did not restore the tree exactly"
    );

    let again = versus()
        .arg("-C")
        .arg(&root)
        .args(["rewind", "--yes"])
        .output()
        .unwrap();
    assert!(again.status.success());
    assert!(
        text(&again).1.contains("Nothing to rewind"),
        "{:?}",
        text(&again)
    );
}

#[test]
fn pick_none_is_recorded_and_json_has_everything() {
    let (_tmp, root) = project();
    let before = tree(&root);
    let out = ask(&root, &["--pick", "none", "--json", "--quiet"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stderr.is_empty(), "--quiet printed: {stderr}");
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc["prompt"], "fix two");
    let models = doc["models"].as_array().unwrap();
    assert_eq!(models.len(), 2);
    assert_eq!(models[0]["model"], "demo/scripts/a.jsonl");
    assert_eq!(models[0]["status"], "completed");
    assert_eq!(models[0]["tool_calls"], 3);
    assert!(models[0]["diff"].as_str().unwrap().contains("+two = 2"));
    assert_eq!(models[1]["files"], 1);
    assert_eq!(tree(&root), before);
    let prefs = std::fs::read_to_string(root.join(".versus/preferences.jsonl")).unwrap();
    let line: serde_json::Value = serde_json::from_str(prefs.trim()).unwrap();
    assert_eq!(line["chosen"], serde_json::json!([]));
}

#[test]
fn bad_usage_is_exit_2_with_a_clear_message() {
    let (_tmp, root) = project();
    let out = ask(&root, &["--pick", "demo/other"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out).1.contains("is not one of the models"),
        "{:?}",
        text(&out)
    );
    let out = versus()
        .arg("-C")
        .arg(&root)
        .args(["ask", "x", "-m", "nosuch/model"])
        .env("XDG_CONFIG_HOME", root.join(".no-config"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).1.contains("nosuch"), "{:?}", text(&out));
}

#[test]
fn a_model_without_its_key_is_skipped_with_a_warning() {
    let (_tmp, root) = project();
    let out = versus()
        .arg("-C")
        .arg(&root)
        .args([
            "ask",
            "x",
            "-m",
            "anthropic/claude-sonnet-4-5",
            "-m",
            "demo/scripts/b.jsonl",
        ])
        .env("XDG_CONFIG_HOME", root.join(".no-config"))
        .env_remove("ANTHROPIC_API_KEY")
        .output()
        .unwrap();
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("skipping anthropic/claude-sonnet-4-5"),
        "{stderr}"
    );
    assert!(stderr.contains("ANTHROPIC_API_KEY"), "{stderr}");
    assert!(stdout.contains("demo/scripts/b.jsonl"));
}

/// Starts a model whose bash leaves a background and a `setsid` sleep, sends `signal` to
/// versus once both run, and checks the run stopped cleanly: exit 130, no process left, no
/// user file changed, no choice recorded, no workspace left behind.
fn stop_signal_cancels_every_model_kills_bash_and_changes_nothing(
    signal: nix::sys::signal::Signal,
) {
    let (_tmp, root) = project();
    // Unique among the test modules, which share one process id in the one test binary.
    let marker = format!("302.{}{}", std::process::id(), signal as i32);
    let setsid_marker = format!("{marker}1");
    write(
        &root,
        "scripts/slow.jsonl",
        &format!(
            "{{\"tools\": [{{\"name\": \"write_file\", \"args\": {{\"path\": \"x.txt\", \"content\": \"x\"}}}}]}}\n\
             {{\"tools\": [{{\"name\": \"bash\", \"args\": {{\"command\": \"sleep {marker} & setsid sleep {setsid_marker} & wait\"}}}}]}}\n"
        ),
    );
    let before = tree(&root);
    let workspaces = tempfile::tempdir().unwrap();
    let child = versus()
        .arg("-C")
        .arg(&root)
        .args([
            "ask",
            "x",
            "-m",
            "demo/scripts/slow.jsonl",
            "--pick",
            "demo/scripts/slow.jsonl",
        ])
        .env("XDG_CONFIG_HOME", root.join(".no-config"))
        .env("TMPDIR", workspaces.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut waited = 0;
    while !(util::command_alive(&["sleep", &marker])
        && util::command_alive(&["sleep", &setsid_marker]))
    {
        std::thread::sleep(Duration::from_millis(100));
        waited += 1;
        assert!(waited < 300, "the model never started its bash command");
    }
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), signal).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{:?}", text(&out));
    assert!(
        text(&out).1.contains("stopping every model"),
        "{:?}",
        text(&out)
    );
    assert!(
        util::command_gone(&["sleep", &marker]),
        "the model's background sleep survived {signal}"
    );
    assert!(
        util::command_gone(&["sleep", &setsid_marker]),
        "the model's setsid sleep survived {signal}"
    );
    assert_eq!(tree(&root), before, "{signal} changed a user file");
    assert!(
        !root.join(".versus/preferences.jsonl").exists(),
        "no choice was made"
    );
    let left: Vec<_> = std::fs::read_dir(util::users::workspaces_parent(
        workspaces.path(),
        util::users::Who::Me,
    ))
    .map(|rd| {
        rd.flatten()
            .map(|e| e.path())
            // The frozen checkout kept for later runs (workspace::cow::cache) is no leftover.
            .filter(|p| {
                !p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("cache-"))
            })
            .collect()
    })
    .unwrap_or_default();
    assert!(left.is_empty(), "workspaces left after {signal}: {left:?}");
}

#[test]
fn ctrl_c_cancels_every_model_kills_bash_and_changes_nothing() {
    stop_signal_cancels_every_model_kills_bash_and_changes_nothing(
        nix::sys::signal::Signal::SIGINT,
    );
}

#[test]
fn sigterm_cancels_like_ctrl_c() {
    stop_signal_cancels_every_model_kills_bash_and_changes_nothing(
        nix::sys::signal::Signal::SIGTERM,
    );
}

#[test]
fn sighup_cancels_like_ctrl_c() {
    stop_signal_cancels_every_model_kills_bash_and_changes_nothing(
        nix::sys::signal::Signal::SIGHUP,
    );
}

#[test]
fn demo_writes_the_example_project_and_runs_the_demo_models() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("try");
    let out = versus()
        .arg("-C")
        .arg(tmp.path())
        .args(["demo"])
        .arg(&dir)
        .env("XDG_CONFIG_HOME", tmp.path().join(".no-config"))
        .output()
        .unwrap();
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    for model in ["demo/good", "demo/sloppy", "demo/reckless"] {
        let row = stdout.lines().find(|l| l.starts_with(model)).unwrap();
        assert!(row.contains("done"), "{row}");
    }
    assert!(
        stdout.contains("+    if count >= BULK_MIN_ITEMS {"),
        "{stdout}"
    );
    assert!(
        stdout.contains("+    assert_eq!(order_total(&items), 1000);"),
        "{stdout}"
    );
    assert!(stdout.contains("format_receipt"), "{stdout}");
    assert!(dir.join("src/pricing.rs").is_file());
    assert!(
        stderr.contains(&format!("versus -C {} rewind --yes", dir.display())),
        "{stderr}"
    );
    // The next step keeps the fix without running the models again, said once (the demo's
    // own words, not also `ask`'s closing line).
    let keep = format!("versus -C {} pick demo/good", dir.display());
    assert_eq!(stderr.matches(&keep).count(), 1, "{stderr}");
    assert!(!stderr.contains("Keep one model's changes"), "{stderr}");
    let out = versus()
        .arg("-C")
        .arg(&dir)
        .args(["pick", "demo/good"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{:?}", text(&out));
    assert!(
        std::fs::read_to_string(dir.join("src/pricing.rs"))
            .unwrap()
            .contains("if count >= BULK_MIN_ITEMS {")
    );
}

#[test]
fn sessions_list_and_show_what_was_asked_done_and_chosen() {
    let (_tmp, root) = project();
    let out = ask(&root, &["--pick", "demo/scripts/b.jsonl", "--quiet"]);
    assert!(out.status.success(), "{:?}", text(&out));
    let list = versus()
        .arg("-C")
        .arg(&root)
        .arg("sessions")
        .output()
        .unwrap();
    let (stdout, _) = text(&list);
    assert!(list.status.success());
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    assert!(
        stdout.contains("1 turn(s), 2 model(s)  fix two"),
        "{stdout}"
    );

    let show = versus()
        .arg("-C")
        .arg(&root)
        .args(["sessions", "show"])
        .output()
        .unwrap();
    let (stdout, _) = text(&show);
    assert!(show.status.success());
    assert!(stdout.contains("Turn 1"), "{stdout}");
    assert!(stdout.contains("> fix two"), "{stdout}");
    assert!(
        // edit_file, write_file, and bash's deletion and chmod +x.
        stdout.contains("demo/scripts/a.jsonl: done, 4 proposal(s)"),
        "{stdout}"
    );
    assert!(stdout.contains("Fixed two and added notes."), "{stdout}");
    assert!(stdout.contains("chosen: demo/scripts/b.jsonl"), "{stdout}");

    let json = versus()
        .arg("-C")
        .arg(&root)
        .args(["sessions", "show", "--json"])
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(doc["turns"][0]["complete"], true);
    assert_eq!(doc["turns"][0]["models"][1]["writes"], 1);
    // The session keeps each model's conversation, so it can be continued.
    let id = doc["id"].as_str().unwrap();
    let events =
        std::fs::read_to_string(root.join(".versus/sessions").join(id).join("events.jsonl"))
            .unwrap();
    assert_eq!(events.matches("\"type\":\"conversation\"").count(), 2);
    assert_eq!(events.matches("\"type\":\"choice\"").count(), 1);
}

#[test]
fn a_recorded_run_exported_as_a_demo_script_replays_the_same_change() {
    let (_tmp, root) = project();
    let out = ask(&root, &["--json", "--quiet"]);
    assert!(out.status.success(), "{:?}", text(&out));
    let first: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let export = versus()
        .arg("-C")
        .arg(&root)
        .args([
            "replay",
            "export",
            "-m",
            "demo/scripts/a.jsonl",
            "--delay",
            "0",
        ])
        .args(["-o", "scripts/replayed.jsonl"])
        .output()
        .unwrap();
    assert!(export.status.success(), "{:?}", text(&export));
    let script = std::fs::read_to_string(root.join("scripts/replayed.jsonl")).unwrap();
    assert!(
        script.starts_with("# demo script exported from session"),
        "{script}"
    );
    assert_eq!(
        script.lines().count(),
        4,
        "a header and three responses: {script}"
    );

    let again = versus()
        .arg("-C")
        .arg(&root)
        .args([
            "ask",
            "fix two",
            "-m",
            "demo/scripts/replayed.jsonl",
            "--json",
            "--quiet",
        ])
        .env("XDG_CONFIG_HOME", root.join(".no-config"))
        .output()
        .unwrap();
    assert!(again.status.success(), "{:?}", text(&again));
    let replayed: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(replayed["models"][0]["diff"], first["models"][0]["diff"]);
    assert_eq!(
        replayed["models"][0]["final_text"],
        first["models"][0]["final_text"]
    );

    let missing = versus()
        .arg("-C")
        .arg(&root)
        .args(["replay", "export", "-m", "nobody/x"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        text(&missing)
            .1
            .contains("no recorded conversation of nobody/x")
    );
}

/// `versus stats --json` in `root`.
fn stats(root: &Path) -> serde_json::Value {
    let out = versus()
        .arg("-C")
        .arg(root)
        .args(["stats", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{:?}", text(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn wins(stats: &serde_json::Value, model: &str) -> Option<u64> {
    stats["models"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["model"] == model)
        .map(|m| m["wins"].as_u64().unwrap())
}

/// Regression: a choice undone with `versus rewind` kept counting as a win.
#[test]
fn a_rewound_choice_no_longer_counts_in_stats_and_stats_says_so() {
    let (_tmp, root) = project();
    let out = ask(&root, &["--pick", "demo/scripts/a.jsonl"]);
    assert!(out.status.success(), "{:?}", text(&out));
    assert_eq!(wins(&stats(&root), "demo/scripts/a.jsonl"), Some(1));

    let rewind = versus()
        .arg("-C")
        .arg(&root)
        .args(["rewind", "--yes"])
        .output()
        .unwrap();
    assert!(rewind.status.success(), "{:?}", text(&rewind));
    let after = stats(&root);
    assert_eq!(after["sources"]["preferences"], 0, "{after}");
    assert_eq!(after["sources"]["rewound"], 1, "{after}");
    assert_eq!(wins(&after, "demo/scripts/a.jsonl"), None, "{after}");
    let human = versus().arg("-C").arg(&root).arg("stats").output().unwrap();
    let (stdout, _) = text(&human);
    assert!(
        stdout.contains("1 choice made here were rewound"),
        "{stdout}"
    );
    // The session log says the turn's choice was rewound (files only).
    let sessions = root.join(".versus/sessions");
    let session = std::fs::read_dir(&sessions)
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    let log = std::fs::read_to_string(session.path().join("events.jsonl")).unwrap();
    let rewound: Vec<serde_json::Value> = log
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|r| r["type"] == "rewound")
        .collect();
    assert_eq!(rewound.len(), 1, "{log}");
    assert_eq!(rewound[0]["scope"], "files");
    assert_eq!(rewound[0]["turn"], 1);
}

const TEXT_ONLY: &str = r#"
{"say": "The answer is 42: nothing needs to change."}
"#;

/// Regression: a model that answered in text only could not be the turn's winner.
#[test]
fn a_text_only_answer_can_win_and_counts_in_stats() {
    let (_tmp, root) = project();
    write(&root, "scripts/t.jsonl", TEXT_ONLY);
    let before = tree(&root);
    let out = versus()
        .arg("-C")
        .arg(&root)
        .args([
            "ask",
            "what is the answer?",
            "-m",
            "demo/scripts/a.jsonl",
            "-m",
            "demo/scripts/t.jsonl",
            "--pick",
            "demo/scripts/t.jsonl",
        ])
        .env("XDG_CONFIG_HOME", root.join(".no-config"))
        .output()
        .unwrap();
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("Nothing to write for demo/scripts/t.jsonl"),
        "{stdout}"
    );
    assert_eq!(tree(&root), before, "a text-only choice writes nothing");
    let prefs = std::fs::read_to_string(root.join(".versus/preferences.jsonl")).unwrap();
    let line: serde_json::Value = serde_json::from_str(prefs.trim()).unwrap();
    assert_eq!(line["chosen"], serde_json::json!(["demo/scripts/t.jsonl"]));
    let s = stats(&root);
    assert_eq!(wins(&s, "demo/scripts/t.jsonl"), Some(1), "{s}");
    assert_eq!(wins(&s, "demo/scripts/a.jsonl"), Some(0), "{s}");
}

/// Regression: in a linked worktree `.versus/` showed in `git status` (the exclude went to the
/// worktree's own folder, which git never reads).
#[test]
fn versus_leaves_git_status_clean_in_a_linked_worktree() {
    let (tmp, root) = project();
    git(&root, &["add", "."]);
    git(&root, &["commit", "-qm", "all"]);
    let linked = tmp.path().canonicalize().unwrap().join("linked");
    git(
        &root,
        &["worktree", "add", "-q", linked.to_str().unwrap(), "HEAD"],
    );
    write(&linked, "scripts/a.jsonl", MODEL_A);
    write(&linked, "scripts/b.jsonl", MODEL_B);
    let status = |dir: &Path| {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(["status", "--porcelain", "--untracked-files=all"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert_eq!(status(&linked), "");
    let out = ask(&linked, &[]);
    assert!(out.status.success(), "{:?}", text(&out));
    assert!(linked.join(".versus/sessions").is_dir());
    assert_eq!(status(&linked), "", "versus's folder shows in git status");
}

const TWO_TURNS: &str = r#"
{"say": "Editing.", "tools": [{"name": "edit_file", "args": {"path": "src/calc.txt", "old_string": "two = 3", "new_string": "two = 2"}}]}
{"say": "Fixed two."}
{"say": "Second turn: noted."}
"#;

/// The one session start, asked to continue where versus never ran: a clear error, and nothing
/// created (no `.versus/`, no line in git's exclude file).
#[test]
fn ask_continue_where_versus_never_ran_says_so_and_creates_nothing() {
    let (_tmp, root) = project();
    let exclude = std::fs::read(root.join(".git/info/exclude")).unwrap_or_default();
    for flags in [&["--continue"][..], &["--session", "abc"][..]] {
        let out = versus()
            .arg("-C")
            .arg(&root)
            .args(["ask", "and now?", "--quiet"])
            .args(flags)
            .env("XDG_CONFIG_HOME", root.join(".no-config"))
            .output()
            .unwrap();
        let (stdout, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {stdout}\n{stderr}");
        assert!(
            stderr.contains("this project has no versus session yet"),
            "{flags:?}: {stderr}"
        );
        assert!(!root.join(".versus").exists(), "{flags:?}");
    }
    assert_eq!(
        std::fs::read(root.join(".git/info/exclude")).unwrap_or_default(),
        exclude
    );
}

/// Continuing a conversation was only in the TUI: `versus ask --continue` goes on with the
/// session's models, their conversations and the note about the last choice.
#[test]
fn ask_continue_goes_on_with_the_conversation_and_the_note() {
    let (_tmp, root) = project();
    write(&root, "scripts/two.jsonl", TWO_TURNS);
    let first = versus()
        .arg("-C")
        .arg(&root)
        .args(["ask", "fix two", "-m", "demo/scripts/two.jsonl"])
        .args(["--pick", "demo/scripts/two.jsonl", "--quiet"])
        .env("XDG_CONFIG_HOME", root.join(".no-config"))
        .output()
        .unwrap();
    assert!(first.status.success(), "{:?}", text(&first));
    let second = versus()
        .arg("-C")
        .arg(&root)
        .args(["ask", "and now?", "--continue", "--json", "--quiet"])
        .env("XDG_CONFIG_HOME", root.join(".no-config"))
        .output()
        .unwrap();
    let (stdout, stderr) = text(&second);
    assert!(second.status.success(), "{stdout}\n{stderr}");
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc["models"][0]["model"], "demo/scripts/two.jsonl");
    assert_eq!(doc["models"][0]["final_text"], "Second turn: noted.");
    // One session, two turns; the second prompt carries the note and follows the first turn.
    let sessions: Vec<_> = std::fs::read_dir(root.join(".versus/sessions"))
        .unwrap()
        .collect();
    assert_eq!(sessions.len(), 1, "--continue appends to the same session");
    let dir = sessions[0].as_ref().unwrap().path();
    let log = versus::session::SessionLog::read(&dir).unwrap();
    assert_eq!(log.turns().len(), 2);
    let conversation = &log.conversations()["demo/scripts/two.jsonl"];
    let prompts: Vec<String> = conversation
        .iter()
        .filter(|m| m.role == versus::model::Role::User && !m.text().is_empty())
        .map(|m| m.text())
        .collect();
    assert_eq!(prompts.len(), 2, "{prompts:?}");
    assert!(prompts[0].starts_with("fix two"));
    assert!(
        prompts[1].contains("your changes were applied") && prompts[1].ends_with("and now?"),
        "{}",
        prompts[1]
    );
}

/// `versus rewind` opens the session in the session engine and records through its one log
/// writer: `opened` (source `rewind`), the `rewound` record of the chosen turn, `ended`, in
/// that order after the choice, every line whole and none twice; `versus ask --continue`
/// afterwards tells the model nothing is applied any more.
#[test]
fn rewind_records_through_the_sessions_one_writer_and_continue_sees_it() {
    let (_tmp, root) = project();
    write(&root, "scripts/two.jsonl", TWO_TURNS);
    let before = std::fs::read_to_string(root.join("src/calc.txt")).unwrap();
    let first = versus()
        .arg("-C")
        .arg(&root)
        .args(["ask", "fix two", "-m", "demo/scripts/two.jsonl"])
        .args(["--pick", "demo/scripts/two.jsonl", "--quiet"])
        .env("XDG_CONFIG_HOME", root.join(".no-config"))
        .output()
        .unwrap();
    assert!(first.status.success(), "{:?}", text(&first));
    let rewind = versus()
        .arg("-C")
        .arg(&root)
        .args(["rewind", "--yes"])
        .output()
        .unwrap();
    let (stdout, stderr) = text(&rewind);
    assert!(rewind.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("Rewound: 1 file(s) restored."), "{stdout}");
    assert!(
        stdout.contains("The prompt of that turn was: fix two"),
        "{stdout}"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("src/calc.txt")).unwrap(),
        before,
        "the file is back"
    );

    let sessions: Vec<_> = std::fs::read_dir(root.join(".versus/sessions"))
        .unwrap()
        .collect();
    assert_eq!(
        sessions.len(),
        1,
        "the rewind reopened the session, made none"
    );
    let dir = sessions[0].as_ref().unwrap().path();
    let log = std::fs::read_to_string(dir.join("events.jsonl")).unwrap();
    assert!(log.ends_with('\n'), "a torn last line: {log}");
    let lines: Vec<&str> = log.lines().collect();
    let unique: std::collections::BTreeSet<&&str> = lines.iter().collect();
    assert_eq!(unique.len(), lines.len(), "a line written twice: {log}");
    let records: Vec<serde_json::Value> = lines
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<String> = records
        .iter()
        .map(|r| match r["type"].as_str().unwrap() {
            "opened" => format!("opened/{}", r["source"].as_str().unwrap()),
            other => other.to_string(),
        })
        .filter(|k| {
            ["opened/ask", "opened/rewind", "choice", "rewound", "ended"].contains(&k.as_str())
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "opened/ask",
            "choice",
            "ended",
            "opened/rewind",
            "rewound",
            "ended"
        ],
        "{log}"
    );
    let choice = records.iter().find(|r| r["type"] == "choice").unwrap();
    let rewound = records.iter().find(|r| r["type"] == "rewound").unwrap();
    assert_eq!(rewound["turn"], 1);
    assert_eq!(rewound["scope"], "files");
    assert_eq!(rewound["apply_id"], choice["apply_id"]);
    assert_eq!(rewound["restored"], serde_json::json!(["src/calc.txt"]));
    // The log, typed, reads whole and knows the choice is undone.
    let typed = versus::session::SessionLog::read(&dir).unwrap();
    assert!(typed.skipped.is_empty(), "{:?}", typed.skipped);
    assert!(typed.undone_choices().contains(&1));
    let show = versus()
        .arg("-C")
        .arg(&root)
        .args(["sessions", "show"])
        .output()
        .unwrap();
    assert!(show.status.success(), "{:?}", text(&show));

    let second = versus()
        .arg("-C")
        .arg(&root)
        .args(["ask", "and now?", "--continue", "--json", "--quiet"])
        .env("XDG_CONFIG_HOME", root.join(".no-config"))
        .output()
        .unwrap();
    assert!(second.status.success(), "{:?}", text(&second));
    let log = versus::session::SessionLog::read(&dir).unwrap();
    assert_eq!(log.turns().len(), 2);
    let conversation = &log.conversations()["demo/scripts/two.jsonl"];
    let last = conversation
        .iter()
        .rfind(|m| m.role == versus::model::Role::User && !m.text().is_empty())
        .unwrap()
        .text();
    assert!(
        last.contains("none of the proposed changes were applied") && last.ends_with("and now?"),
        "{last}"
    );
}
