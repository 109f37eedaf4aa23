//! What a model's tools returned, and how each call ended, through the binary: a bash call
//! that exits 3 is printed as failed with its output by `versus ask`, listed with its output by
//! `versus sessions show` (and whole in `--json`), a path escape is refused, a command past its
//! time limit is timed out, and `versus run` reports each call's outcome and output in
//! report.json and the failed ones in summary.md. Everything printed goes through the
//! sanitiser: an escape sequence in a command's output reaches the terminal escaped.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util;

use std::path::{Path, PathBuf};
use std::process::Output;

use util::{git, versus};

/// The known line the failing command prints (built by printf, so the command line itself
/// does not hold it and only the output can show it).
const KNOWN: &str = "KNOWN-OUTPUT-7731";

fn write(root: &Path, rel: &str, content: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, content).unwrap();
}

/// A committed repository whose ignored `scripts/` folder holds `script` as `model.jsonl`.
fn project(script: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap().join("project");
    write(&root, "README.md", "hello\n");
    write(&root, ".gitignore", "scripts/\n");
    write(&root, "scripts/model.jsonl", script);
    git(&root, &["init", "-q"]);
    git(&root, &["add", "."]);
    git(&root, &["commit", "-qm", "init"]);
    (tmp, root)
}

fn bash_step(command: &str, timeout: Option<u64>) -> String {
    let mut args = serde_json::json!({ "command": command });
    if let Some(secs) = timeout {
        args["timeout_secs"] = secs.into();
    }
    serde_json::json!({"tools": [{"name": "bash", "args": args}]}).to_string()
}

fn run(root: &Path, args: &[&str]) -> Output {
    versus()
        .arg("-C")
        .arg(root)
        .args(args)
        .env("XDG_CONFIG_HOME", root.join(".no-config"))
        .output()
        .unwrap()
}

fn ask(root: &Path) -> Output {
    run(
        root,
        &["ask", "run the tests", "-m", "demo/scripts/model.jsonl"],
    )
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn a_command_that_exits_3_is_failed_with_its_output_in_ask_and_sessions_show() {
    let failing = "printf 'first line\\nKNOWN-%s\\n' OUTPUT-7731; exit 3";
    let script = [
        bash_step(failing, None),
        bash_step("echo fine", None),
        r#"{"say": "Tests fail."}"#.to_string(),
    ]
    .join("\n");
    let (_tmp, root) = project(&script);
    let out = ask(&root);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("✗ exit 3 bash failed"),
        "ask says the call failed, with its exit code: {stderr}"
    );
    assert!(stderr.contains(&format!("│ {KNOWN}")), "{stderr}");
    assert!(!stderr.contains("bash failed: fine"), "{stderr}");
    assert_eq!(
        stderr.matches("failed").count(),
        1,
        "only the failing call is printed as failed: {stderr}"
    );
    // The table counts it: two calls, one failed, no failed edit.
    let row: Vec<&str> = stdout
        .lines()
        .find(|l| l.starts_with("demo/"))
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(row[row.len() - 3..], ["2", "1", "0"], "{stdout}");

    let show = run(&root, &["sessions", "show"]);
    let shown = text(&show.stdout);
    assert!(show.status.success(), "{shown}");
    assert!(shown.contains("✗ exit 3 bash printf"), "{shown}");
    assert!(shown.contains(&format!("│ {KNOWN}")), "{shown}");
    assert!(shown.contains("✓ bash echo fine"), "{shown}");
    assert!(shown.contains("│ fine"), "{shown}");

    let json = run(&root, &["sessions", "show", "--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let tools = &doc["turns"][0]["models"][0]["tools"];
    assert_eq!(
        tools[0]["outcome"],
        serde_json::json!({"kind": "exit", "code": 3})
    );
    assert_eq!(
        tools[0]["output"],
        format!("first line\n{KNOWN}\n[exit code: 3]")
    );
    assert_eq!(tools[1]["outcome"], serde_json::json!({"kind": "ok"}));
}

#[test]
fn a_path_escape_is_refused_and_a_command_past_its_limit_timed_out() {
    let script = [
        serde_json::json!({"tools": [{"name": "read_file", "args": {"path": "../outside.txt"}}]})
            .to_string(),
        bash_step("echo started; sleep 30", Some(1)),
        r#"{"say": "Done."}"#.to_string(),
    ]
    .join("\n");
    let (_tmp, root) = project(&script);
    let out = ask(&root);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("⊘ refused read_file failed: path escapes the project"),
        "{stderr}"
    );
    assert!(stderr.contains("⏱ timed out bash failed"), "{stderr}");
    assert!(stderr.contains("│ started"), "{stderr}");

    let show = text(&run(&root, &["sessions", "show"]).stdout);
    assert!(
        show.contains("⊘ refused read_file ../outside.txt"),
        "{show}"
    );
    assert!(show.contains("⏱ timed out bash echo started"), "{show}");
}

#[test]
fn escape_sequences_in_a_commands_output_reach_the_terminal_escaped() {
    let script = [
        bash_step(r"printf '\033]0;pwned\007\033[2Jwiped\n'; exit 4", None),
        r#"{"say": "Done."}"#.to_string(),
    ]
    .join("\n");
    let (_tmp, root) = project(&script);
    let out = ask(&root);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        !out.stderr.contains(&0x1b),
        "a raw ESC reached stderr: {stderr}"
    );
    assert!(
        stderr.contains(r"│ \x1b]0;pwned\x07\x1b[2Jwiped"),
        "{stderr}"
    );
    let show = run(&root, &["sessions", "show"]);
    assert!(!show.stdout.contains(&0x1b), "a raw ESC reached stdout");
    assert!(
        text(&show.stdout).contains(r"│ \x1b]0;pwned\x07\x1b[2Jwiped"),
        "{}",
        text(&show.stdout)
    );
}

#[test]
fn versus_run_reports_each_calls_outcome_and_output() {
    let dir = util::Dir::new();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/run");
    copy_tree(&src, dir.path());
    let out = versus()
        .current_dir(dir.path())
        .args([
            "run",
            "run.recipe.md",
            "--out",
            "out",
            "-q",
            "-m",
            "demo/fixer.jsonl",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("out/report.json")).unwrap())
            .unwrap();
    let calls = report["tasks"][0]["runs"][0]["tool_results"]
        .as_array()
        .unwrap();
    let kinds: Vec<(&str, &str)> = calls
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap(),
                c["outcome"]["kind"].as_str().unwrap(),
            )
        })
        .collect();
    // The tests fail first (exit 1), then the edit, then the tests pass.
    assert_eq!(
        kinds,
        [("bash", "exit"), ("edit_file", "ok"), ("bash", "ok")],
        "{calls:?}"
    );
    assert_eq!(calls[0]["outcome"]["code"], 1);
    // Counted as a call that did not succeed, though the model was not told "error".
    assert_eq!(report["tasks"][0]["runs"][0]["tool_errors"], 1, "{report}");
    assert_eq!(calls[0]["target"], "sh test.sh");
    assert!(
        calls[0]["output"]
            .as_str()
            .unwrap()
            .contains("FAIL: add 2 3 gave -1, expected 5"),
        "{calls:?}"
    );
    assert!(
        calls[2]["output"]
            .as_str()
            .unwrap()
            .contains("ok: all tests pass"),
        "{calls:?}"
    );
    let md = std::fs::read_to_string(dir.path().join("out/summary.md")).unwrap();
    assert!(md.contains("Tool calls that did not succeed"), "{md}");
    assert!(
        md.contains("- demo/fixer.jsonl: ✗ exit 1 `bash sh test.sh`: FAIL: add 2 3 gave -1"),
        "{md}"
    );
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}
