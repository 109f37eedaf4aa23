//! bash through the real binary: output, exit status, process cleanup, environment, allowlist.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util;

use std::io::Read;
use std::process::Stdio;

use serde_json::json;
use util::{Dir, ToolRun, versus};

fn bash(d: &Dir, command: &str) -> ToolRun {
    d.tool("bash", &json!({"command": command, "timeout_secs": 10}))
}

fn bash_allowing(d: &Dir, command: &str, allowed: &[&str]) -> ToolRun {
    let mut extra = Vec::new();
    for prefix in allowed {
        extra.push("--bash-allow");
        extra.push(prefix);
    }
    d.tool_with(
        "bash",
        &json!({"command": command, "timeout_secs": 10}),
        &extra,
    )
}

#[test]
fn timeout_kills_the_whole_group_and_is_an_error() {
    let d = Dir::new();
    let out = d.tool(
        "bash",
        &json!({"command": "sleep 1000.25 & echo started; wait", "timeout_secs": 1}),
    );
    assert_eq!(
        out.err(),
        "started\n[the command did not finish in time: pass a larger timeout_secs (at most 600) or \
         run a smaller part of the work, e.g. one test target]\n[killed: timed out after 1 s]\n"
    );
    assert!(
        util::command_gone(&["sleep", "1000.25"]),
        "the background sleep survived the timeout"
    );
}

#[test]
fn background_processes_do_not_outlive_a_finished_command() {
    let d = Dir::new();
    let out = bash(&d, "sleep 1000.5 & setsid sleep 1000.75 & echo done");
    assert_eq!(out.ok(), "done\n[exit code: 0]\n");
    assert!(
        util::command_gone(&["sleep", "1000.5"]),
        "the background sleep survived the command"
    );
    assert!(
        util::command_gone(&["sleep", "1000.75"]),
        "the setsid sleep survived the command"
    );
}

#[test]
fn long_output_keeps_head_and_tail_and_saves_everything() {
    let d = Dir::new();
    let tmp = tempfile::tempdir().unwrap();
    let out = versus()
        .env("TMPDIR", tmp.path())
        .args(["tool", "bash", "--dir"])
        .arg(d.path())
        .arg("--args")
        .arg(json!({"command": "seq 1 5000"}).to_string())
        .output()
        .unwrap();
    let run = ToolRun::from(out);
    let text = run.ok();
    let lines: Vec<&str> = text.lines().collect();
    let expected_head: Vec<String> = (1..=1000).map(|i| i.to_string()).collect();
    let expected_tail: Vec<String> = (4001..=5000).map(|i| i.to_string()).collect();
    assert_eq!(lines[..1000], expected_head[..]);
    assert_eq!(lines[1000], "[... 3000 lines omitted ...]");
    assert_eq!(lines[1001..2001], expected_tail[..]);
    let note = lines[2001];
    let path = note
        .strip_prefix("[output cut: full output (5000 lines, 23893 bytes) saved to ")
        .and_then(|rest| rest.strip_suffix(']'))
        .unwrap_or_else(|| panic!("unexpected note: {note}"));
    assert!(path.starts_with(tmp.path().to_str().unwrap()), "{path}");
    let saved = std::fs::read_to_string(path).unwrap();
    let all: String = (1..=5000).map(|i| format!("{i}\n")).collect();
    assert_eq!(saved, all);
    assert_eq!(lines[2002], "[exit code: 0]");
    assert_eq!(lines.len(), 2003);
}

#[test]
fn a_flood_of_output_leaves_a_spill_file_under_its_cap() {
    let d = Dir::new();
    let tmp = tempfile::tempdir().unwrap();
    // 200 MB of output, three times the 64 MiB cap.
    let out = versus()
        .env("TMPDIR", tmp.path())
        .args(["tool", "bash", "--dir"])
        .arg(d.path())
        .arg("--args")
        .arg(
            json!({"command": "yes 0123456789abcdef | head -c 200000000; echo; echo THE-END"})
                .to_string(),
        )
        .output()
        .unwrap();
    let run = ToolRun::from(out);
    let text = run.ok();
    let note = text
        .lines()
        .find(|l| l.starts_with("[output cut: full output"))
        .unwrap_or_else(|| panic!("no spill note: {text}"));
    let path = note
        .split(" saved to ")
        .nth(1)
        .and_then(|rest| rest.strip_suffix(']'))
        .unwrap_or_else(|| panic!("unexpected note: {note}"));
    let size = std::fs::metadata(path).unwrap().len();
    assert!(size <= 64 * 1024 * 1024, "spill file of {size} bytes");
    let saved = std::fs::read(path).unwrap();
    assert!(saved.starts_with(b"0123456789abcdef\n"));
    assert!(saved.ends_with(b"THE-END\n"));
    let middle = String::from_utf8_lossy(&saved[32 * 1024 * 1024 - 10..32 * 1024 * 1024 + 300]);
    assert!(middle.contains("bytes omitted here"), "{middle}");
}

#[test]
fn exit_codes_are_reported_as_normal_results() {
    let d = Dir::new();
    assert_eq!(bash(&d, "echo out; exit 3").ok(), "out\n[exit code: 3]\n");
    let out = d.tool(
        "bash",
        &json!({"command": "true", "description": "does nothing", "timeout_secs": 10}),
    );
    assert_eq!(out.ok(), "(no output)\n[exit code: 0]\n");
}

#[test]
fn death_by_signal_is_reported() {
    let d = Dir::new();
    assert_eq!(
        bash(&d, "kill -9 $$").ok(),
        "(no output)\n[exit code: 137 (killed by signal 9, SIGKILL)]\n"
    );
}

#[test]
fn secrets_are_removed_from_the_environment() {
    let d = Dir::new();
    let out = versus()
        .env("OPENAI_API_KEY", "sk-test-openai")
        .env("MY_SERVICE_TOKEN", "tok-test")
        .env("lower_case_secret", "shh")
        .env("VERSUS_TEST_VISIBLE", "yes")
        .args(["tool", "bash", "--dir"])
        .arg(d.path())
        .arg("--args")
        .arg(json!({"command": "env"}).to_string())
        .output()
        .unwrap();
    let run = ToolRun::from(out);
    let text = run.ok();
    assert!(!text.contains("OPENAI_API_KEY"), "{text}");
    assert!(!text.contains("sk-test-openai"), "{text}");
    assert!(!text.contains("MY_SERVICE_TOKEN"), "{text}");
    assert!(!text.contains("lower_case_secret"), "{text}");
    // An allowlist, not a denylist: a variable nobody named does not pass either.
    assert!(!text.contains("VERSUS_TEST_VISIBLE"), "{text}");
    assert!(text.lines().any(|l| l.starts_with("HOME=")), "{text}");
    assert!(text.lines().any(|l| l.starts_with("PATH=")), "{text}");
}

#[test]
fn stdout_and_stderr_are_merged_in_order() {
    let d = Dir::new();
    assert_eq!(
        bash(&d, "echo a; echo b >&2; echo c; echo d >&2").ok(),
        "a\nb\nc\nd\n[exit code: 0]\n"
    );
}

#[test]
fn stdin_is_closed() {
    let d = Dir::new();
    // versus's own stdin stays open: if bash inherited it, `cat` would wait until the timeout.
    let mut child = versus()
        .args(["tool", "bash", "--dir"])
        .arg(d.path())
        .arg("--args")
        .arg(json!({"command": "cat; echo after", "timeout_secs": 5}).to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take();
    let mut text = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut text)
        .unwrap();
    let status = child.wait().unwrap();
    drop(stdin);
    assert_eq!(text, "after\n[exit code: 0]\n");
    assert!(status.success());
}

#[test]
fn runs_in_the_project_folder() {
    let d = Dir::new();
    d.write("marker.txt", "here");
    let out = bash(&d, "pwd; cat marker.txt");
    assert_eq!(
        out.ok(),
        format!("{}\nhere\n[exit code: 0]\n", d.path().display())
    );
}

#[test]
fn allowlist_refuses_what_it_must() {
    let d = Dir::new();
    let cases = [
        ("cargo test; touch made", "`touch made`"),
        ("cargo test && touch made", "`touch made`"),
        ("cargo test $(touch made)", "command substitution `$(`"),
        ("cargo test `touch made`", "backticks"),
        ("cargo test > made", "`> made`"),
        ("cargo testx", "`cargo testx`"),
    ];
    for (command, named) in cases {
        let out = bash_allowing(&d, command, &["cargo test"]);
        let text = out.err();
        assert!(
            text.contains("refused by the allowlist"),
            "{command}: {text}"
        );
        assert!(text.contains(named), "{command}: {text}");
        assert!(text.contains("`cargo test`"), "{command}: {text}");
        assert!(!d.exists("made"), "{command} ran");
    }
}

#[test]
fn allowlist_accepts_allowed_commands() {
    let d = Dir::new();
    // Not refused: cargo runs (and fails, there is no Cargo.toml here), which is a normal result.
    let out = bash_allowing(&d, "cargo test -p a", &["cargo test", "cargo build"]);
    let text = out.ok();
    assert!(!text.contains("refused"), "{text}");
    assert!(text.contains("[exit code: "), "{text}");
    let out = bash_allowing(&d, "echo one && echo 'two; three' 2>&1", &["echo"]);
    assert_eq!(out.ok(), "one\ntwo; three\n[exit code: 0]\n");
}

#[test]
fn timeout_below_one_is_rejected_by_the_schema() {
    let d = Dir::new();
    let out = d.tool("bash", &json!({"command": "true", "timeout_secs": 0}));
    assert!(out.err().contains("timeout_secs"), "{out:?}");
}
