//! `versus pick`: applying a model's changes from a turn `versus ask` left without a choice,
//! through the binary, on the same scripted project as `ask_cli` (so "the same as `ask
//! --pick`" is checked against `ask --pick` itself).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Output;

use crate::ask_cli::{ask, project, text};
use crate::util::{tree_state as tree, versus};

const A: &str = "demo/scripts/a.jsonl";

fn pick(root: &Path, args: &[&str]) -> Output {
    versus()
        .arg("-C")
        .arg(root)
        .arg("pick")
        .args(args)
        .output()
        .unwrap()
}

/// The records of one kind in the project's only session log.
fn records(root: &Path, kind: &str) -> Vec<serde_json::Value> {
    let sessions: Vec<_> = std::fs::read_dir(root.join(".versus/sessions"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("events.jsonl").is_file())
        .collect();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    std::fs::read_to_string(sessions[0].join("events.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|r| r["type"] == kind)
        .collect()
}

#[test]
fn pick_after_ask_writes_what_ask_pick_writes_without_running_the_models_again() {
    // One project picks at once, the other asks first and picks later: the same tree.
    let (_at_once_tmp, at_once) = project();
    let out = ask(&at_once, &["--pick", A]);
    assert!(out.status.success(), "{:?}", text(&out));
    let (_later_tmp, later) = project();
    let before = tree(&later);
    let out = ask(&later, &[]);
    let (_, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    // The turn ends by saying how to keep one (in the project's folder: not the current one).
    assert!(
        stderr.contains(&format!(
            "versus -C {} pick {A} (undo: versus -C {} rewind)",
            later.display(),
            later.display()
        )),
        "{stderr}"
    );
    assert_eq!(tree(&later), before, "ask alone changed the tree");

    let out = pick(&later, &[A]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.starts_with("Turn 1 of session "), "{stdout}");
    assert!(stdout.contains(&format!("Applied {A} (apply ")), "{stdout}");
    assert!(stdout.contains("  src/calc.txt: written"), "{stdout}");
    assert!(stdout.contains("Undo with: versus rewind"), "{stdout}");
    assert_eq!(tree(&later), tree(&at_once), "not what ask --pick wrote");

    // Nothing ran again: one turn and one run per model in the log, and one choice.
    assert_eq!(records(&later, "turn").len(), 1);
    let choices = records(&later, "choice");
    assert_eq!(choices.len(), 1);
    assert_eq!(choices[0]["chosen"], serde_json::json!([A]));
    let prefs = std::fs::read_to_string(later.join(".versus/preferences.jsonl")).unwrap();
    let line: serde_json::Value = serde_json::from_str(prefs.trim()).unwrap();
    assert_eq!(line["chosen"], serde_json::json!([A]));
    assert_eq!(line["models"].as_array().unwrap().len(), 2);

    // Undone like any apply, and the turn is not picked twice.
    let out = versus()
        .arg("-C")
        .arg(&later)
        .args(["rewind", "--yes"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{:?}", text(&out));
    assert_eq!(tree(&later), before, "rewind did not restore the tree");
    let out = pick(&later, &["demo/scripts/b.jsonl"]);
    assert_eq!(out.status.code(), Some(1), "{:?}", text(&out));
    assert!(
        text(&out)
            .1
            .contains(&format!("turn 1 already has a choice: {A}, since rewound")),
        "{:?}",
        text(&out)
    );
    assert_eq!(tree(&later), before);
}

#[test]
fn a_pick_that_meets_your_edits_keeps_them_and_fails() {
    let (_tmp, root) = project();
    assert!(ask(&root, &["-q"]).status.success());
    // The user changes the very line model A changed, after the turn.
    let edited = "one = 1\ntwo = 5\nthree = 3\nfour = 4\n";
    std::fs::write(root.join("src/calc.txt"), edited).unwrap();
    let out = pick(&root, &[A]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("  src/calc.txt: skipped: conflicts with your edits"),
        "{stdout}"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("src/calc.txt")).unwrap(),
        edited
    );
    // The rest of the change set was written.
    assert_eq!(
        std::fs::read_to_string(root.join("docs/new/notes.md")).unwrap(),
        "# Notes\n"
    );
}

#[test]
fn pick_none_records_that_none_was_good_and_json_says_what_was_done() {
    let (_tmp, root) = project();
    assert!(ask(&root, &["-q"]).status.success());
    let before = tree(&root);
    let out = pick(&root, &["none", "--json"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc["version"], 1);
    assert_eq!(doc["turn"], 1);
    assert_eq!(doc["prompt"], "fix two");
    assert_eq!(doc["pick"], "none");
    assert!(doc["applied"].is_null(), "{doc}");
    assert_eq!(tree(&root), before);
    let prefs = std::fs::read_to_string(root.join(".versus/preferences.jsonl")).unwrap();
    let line: serde_json::Value = serde_json::from_str(prefs.trim()).unwrap();
    assert_eq!(line["chosen"], serde_json::json!([]));

    // And a pick of a model as JSON, in a project of its own.
    let (_tmp, root) = project();
    assert!(ask(&root, &["-q"]).status.success());
    let out = pick(&root, &["demo/scripts/b.jsonl", "--json"]);
    let doc: serde_json::Value = serde_json::from_str(&text(&out).0).unwrap();
    assert_eq!(doc["applied"]["model"], "demo/scripts/b.jsonl");
    assert!(doc["applied"]["apply_id"].is_string(), "{doc}");
    assert_eq!(
        doc["applied"]["files"],
        serde_json::json!([["src/calc.txt", "written"]]),
        "{doc}"
    );
}

#[test]
fn pick_refuses_clearly_and_changes_nothing_when_there_is_nothing_to_pick() {
    let (_tmp, root) = project();
    let before = tree(&root);
    // Where versus never ran: said, and no `.versus/` made.
    let out = pick(&root, &[A]);
    assert_eq!(out.status.code(), Some(1), "{:?}", text(&out));
    assert!(
        text(&out).1.contains("versus has not run in this project"),
        "{:?}",
        text(&out)
    );
    assert!(!root.join(".versus").exists());
    assert_eq!(tree(&root), before);

    // A model the turn did not have: usage error naming the ones it had; nothing recorded,
    // so a right pick still works after it.
    assert!(ask(&root, &["-q"]).status.success());
    let out = pick(&root, &["demo/other"]);
    assert_eq!(out.status.code(), Some(2), "{:?}", text(&out));
    assert!(
        text(&out).1.contains(&format!(
            "demo/other is not a model of turn 1: pick one of {A}, demo/scripts/b.jsonl or `none`"
        )),
        "{:?}",
        text(&out)
    );
    assert_eq!(tree(&root), before);
    assert!(records(&root, "choice").is_empty());
    assert!(pick(&root, &[A]).status.success());
    assert_ne!(tree(&root), before);
}
