//! `versus stats` through the binary on hand-written `.versus/preferences.jsonl` and
//! `report.json` files, and `versus recipe check` on every shipped recipe.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util;

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};
use util::{Dir, versus};

/// One line of preferences.jsonl, as `versus ask --pick` writes it.
fn choice(models: &[(&str, Option<f64>, u64)], chosen: &[&str], source: &str) -> Value {
    json!({
        "time": "2026-11-21T09:00:00.000Z",
        "session": "20261121-090000-abcd",
        "turn": 1,
        "prompt_hash": "0".repeat(64),
        "models": models.iter().map(|(m, cost, ms)| json!({
            "model": m, "status": "done", "cost": cost,
            "usage": {"input": 1000, "output": 200, "cache_read": 0, "cache_write": 0, "reasoning": 0},
            "latency_ms": ms, "files": 1
        })).collect::<Vec<_>>(),
        "chosen": chosen,
        "blind": false,
        "source": source,
    })
}

fn write_preferences(dir: &Dir, lines: &[Value]) {
    let mut text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    // A torn last line, as a killed process leaves it: skipped, never an error.
    text.push_str("{\"time\": \"2026");
    dir.write(".versus/preferences.jsonl", text);
}

/// One model's run in a report (the full schema of docs/report.md, of which stats reads a few
/// fields).
fn run(model: &str, task: &str, passed: usize, total: usize, cost: Option<f64>, ms: u64) -> Value {
    json!({
        "model": model, "task": task,
        "status": if passed == total { "passed" } else { "failed" },
        "stop_reason": "completed", "error": null, "steps": 4,
        "tokens": {"input": 5000, "output": 300, "cache_read": 0, "cache_write": 0, "reasoning": 0},
        "cost_usd": cost, "latency_ms": ms, "time_to_first_token_ms": 200, "workspace_ms": 40,
        "tool_calls": 3, "tool_calls_by_name": {"bash": 2, "edit_file": 1}, "tool_errors": 0,
        "edit_failures": 0, "retries": 0,
        "change_set": {"files_changed": 1, "added": 1, "removed": 1, "files": [], "diff": "", "diff_file": ""},
        "criteria": (0..total).map(|i| json!({
            "criterion": format!("c{i}"), "kind": "run", "passed": i < passed, "detail": ""
        })).collect::<Vec<_>>(),
        "criteria_passed": passed, "criteria_total": total,
        "final_text": "done", "events_file": "", "workspace": null
    })
}

fn write_report(dir: &Dir, folder: &str, recipe: &str, tasks: Vec<(&str, Vec<Value>)>) {
    let report = json!({
        "schema_version": 1,
        "run_id": folder,
        "complete": true,
        "passed": false,
        "recipe": {"name": recipe, "file": "r.recipe.md", "hash": "h", "task_mode": "independent", "sections": []},
        "environment": {"versus_version": "0.1.0", "started_at": "", "finished_at": "", "resumed": 0,
                        "project": "", "project_commit": null, "os": "linux", "arch": "x86_64", "jobs": 2},
        "models": [],
        "skipped_models": [],
        "tasks": tasks.into_iter().map(|(name, runs)| json!({"name": name, "prompt": "p", "runs": runs}))
            .collect::<Vec<_>>(),
        "summary": [],
    });
    dir.write(
        &format!(".versus/reports/{folder}/report.json"),
        serde_json::to_string_pretty(&report).unwrap(),
    );
}

fn stats(dir: &Dir, args: &[&str]) -> Output {
    // The files these tests write by hand stand for the user's own state: adopt them as such
    // (versus counts only a `.versus` its user's versus wrote or adopted).
    if dir.path().join(".versus").exists() {
        let adopt = versus()
            .arg("-C")
            .arg(dir.path())
            .args(["trust", "--adopt-state"])
            .output()
            .unwrap();
        assert!(adopt.status.success(), "{adopt:?}");
    }
    versus()
        .arg("-C")
        .arg(dir.path())
        .arg("stats")
        .args(args)
        .output()
        .unwrap()
}

fn stats_json(dir: &Dir, args: &[&str]) -> Value {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let out = stats(dir, &all);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

fn model<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["models"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["model"] == name)
        .unwrap_or_else(|| panic!("no {name} in {doc:#}"))
}

fn names(doc: &Value) -> Vec<String> {
    doc["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["model"].as_str().unwrap().to_string())
        .collect()
}

/// gpt-5 chosen 4 times over claude, claude once; one "none of them" turn with gemini.
fn interactive_history(dir: &Dir) {
    let pair = [
        ("openai/gpt-5", Some(0.02), 30_000),
        ("anthropic/claude-sonnet-4-5", Some(0.04), 20_000),
    ];
    let mut lines = vec![choice(&pair, &["openai/gpt-5"], "ask"); 4];
    lines.push(choice(&pair, &["anthropic/claude-sonnet-4-5"], "tui"));
    lines.push(choice(
        &[
            ("openai/gpt-5", None, 30_000),
            ("gemini/gemini-2.5-pro", Some(0.01), 10_000),
        ],
        &[],
        "tui",
    ));
    write_preferences(dir, &lines);
}

#[test]
fn an_empty_project_has_no_stats_yet() {
    let dir = Dir::new();
    let out = stats(&dir, &[]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("No choices or reports yet"), "{text}");
    assert!(text.contains("versus run"), "{text}");
    let doc = stats_json(&dir, &[]);
    assert_eq!(doc["models"], json!([]));
    assert_eq!(doc["sources"]["preferences"], 0);
}

#[test]
fn interactive_choices_give_wins_losses_rating_cost_and_latency() {
    let dir = Dir::new();
    interactive_history(&dir);
    let doc = stats_json(&dir, &[]);
    assert_eq!(doc["sources"]["preferences"], 6);
    assert_eq!(
        names(&doc),
        [
            "openai/gpt-5",
            "anthropic/claude-sonnet-4-5",
            "gemini/gemini-2.5-pro"
        ]
    );

    let gpt = model(&doc, "openai/gpt-5");
    assert_eq!(
        (&gpt["choices"], &gpt["wins"], &gpt["losses"], &gpt["ties"]),
        (&json!(6), &json!(4), &json!(1), &json!(0))
    );
    assert_eq!(gpt["none_of_them"], 1);
    assert_eq!(gpt["win_rate"], 0.8);
    // Mean over the five priced runs; the latency over all six.
    assert!((gpt["mean_cost_usd"].as_f64().unwrap() - 0.02).abs() < 1e-12);
    assert_eq!(gpt["mean_latency_ms"], 30_000.0);
    let rating = &gpt["rating"];
    let (value, low, high) = (
        rating["value"].as_f64().unwrap(),
        rating["low"].as_f64().unwrap(),
        rating["high"].as_f64().unwrap(),
    );
    assert!(low < value && value < high && value > 1000.0, "{rating}");

    let claude = model(&doc, "anthropic/claude-sonnet-4-5");
    assert_eq!((&claude["wins"], &claude["losses"]), (&json!(1), &json!(4)));
    assert!(claude["rating"]["value"].as_f64().unwrap() < 1000.0);

    // "None of them" is a choice without games: no win rate, no rating.
    let gemini = model(&doc, "gemini/gemini-2.5-pro");
    assert_eq!(
        (&gemini["choices"], &gemini["none_of_them"]),
        (&json!(1), &json!(1))
    );
    assert_eq!(
        (&gemini["win_rate"], &gemini["rating"]),
        (&Value::Null, &Value::Null)
    );

    let out = stats(&dir, &[]);
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("model") && lines[0].contains("95% interval"),
        "{text}"
    );
    assert!(lines[2].starts_with("openai/gpt-5"), "{text}");
    assert!(
        lines[2].contains("80%") && lines[2].contains("$0.0200") && lines[2].contains("30.0 s")
    );
    assert!(
        lines[4].starts_with("gemini/gemini-2.5-pro") && lines[4].contains(" - "),
        "{text}"
    );
    assert!(text.contains("From 6 interactive choices and 0 headless tasks in 0 reports"));
    // What the review's ratings mean is said, in the text and in the JSON method.
    assert!(
        text.contains("= tie means as good as the model you kept")
            && text.contains("+ good and - bad are marks"),
        "{text}"
    );
    assert!(lines[0].contains("marks"), "{text}");
    assert!(
        doc["method"]["ratings"]
            .as_str()
            .is_some_and(|r| r.contains("with none of them it has no effect")),
        "{doc}"
    );
}

#[test]
fn headless_reports_count_criteria_and_show_pass_rates_per_recipe() {
    let dir = Dir::new();
    write_report(
        &dir,
        "demo-20261121-090000",
        "Demo",
        vec![
            (
                "fix-the-bug",
                vec![
                    run("demo/good", "fix-the-bug", 3, 3, Some(0.0), 1200),
                    run("demo/sloppy", "fix-the-bug", 2, 3, Some(0.0), 900),
                    run("demo/reckless", "fix-the-bug", 1, 3, None, 800),
                ],
            ),
            (
                "explain",
                vec![
                    run("demo/good", "explain", 3, 3, Some(0.0), 1000),
                    run("demo/sloppy", "explain", 3, 3, Some(0.0), 700),
                    run("demo/reckless", "explain", 0, 3, None, 600),
                ],
            ),
        ],
    );
    write_report(
        &dir,
        "other-20261121-100000",
        "Other",
        vec![(
            "t",
            vec![
                run("demo/reckless", "t", 1, 1, None, 10),
                run("demo/good", "t", 0, 1, None, 10),
            ],
        )],
    );
    let doc = stats_json(&dir, &[]);
    assert_eq!(doc["sources"]["reports"], 2);
    assert_eq!(doc["sources"]["report_tasks"], 3);
    let good = model(&doc, "demo/good");
    assert_eq!(
        (
            &good["choices"],
            &good["wins"],
            &good["losses"],
            &good["ties"]
        ),
        (&json!(3), &json!(3), &json!(1), &json!(1))
    );
    assert_eq!(names(&doc)[0], "demo/good");

    let recipes = doc["recipes"].as_array().unwrap();
    assert_eq!(recipes.len(), 2);
    assert_eq!(
        (&recipes[0]["recipe"], &recipes[0]["reports"]),
        (&json!("Demo"), &json!(1))
    );
    let rows = recipes[0]["models"].as_array().unwrap();
    assert_eq!(rows[0]["model"], "demo/good");
    assert_eq!(
        (
            &rows[0]["tasks_passed"],
            &rows[0]["tasks"],
            &rows[0]["pass_rate"]
        ),
        (&json!(2), &json!(2), &json!(1.0))
    );
    assert_eq!(rows[2]["model"], "demo/reckless");
    assert_eq!(
        (&rows[2]["criteria_passed"], &rows[2]["criteria_total"]),
        (&json!(1), &json!(6))
    );

    // --recipe keeps that recipe's reports only, by name or by folder-style slug, and leaves
    // the interactive choices out.
    interactive_history(&dir);
    for asked in ["Demo", "demo", "recipes/demo.recipe.md"] {
        let doc = stats_json(&dir, &["--recipe", asked]);
        assert_eq!(doc["recipe"], asked);
        assert_eq!(doc["sources"]["reports"], 1, "{asked}");
        assert_eq!(doc["sources"]["preferences"], 0);
        assert_eq!(doc["recipes"].as_array().unwrap().len(), 1);
        assert_eq!(
            names(&doc),
            ["demo/good", "demo/sloppy", "demo/reckless"],
            "{asked}"
        );
        assert_eq!(model(&doc, "demo/good")["losses"], 0);
    }

    let out = stats(&dir, &["--recipe", "Demo"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Recipe `Demo` (1 report):"), "{text}");
    let (_, pass_table) = text.split_once("Recipe `Demo`").unwrap();
    let row = pass_table
        .lines()
        .find(|l| l.starts_with("demo/sloppy"))
        .unwrap();
    assert!(
        row.contains("1/2") && row.contains("5/6") && row.contains("83%"),
        "{row}"
    );

    let out = stats(&dir, &["--recipe", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("`nope`") && err.contains("Demo, Other"),
        "{err}"
    );
}

#[test]
fn both_sources_add_up_and_a_broken_report_is_a_warning() {
    let dir = Dir::new();
    write_preferences(
        &dir,
        &[choice(
            &[
                ("demo/good", Some(0.0), 100),
                ("demo/sloppy", Some(0.0), 100),
            ],
            &["demo/good"],
            "ask",
        )],
    );
    write_report(
        &dir,
        "demo-1",
        "Demo",
        vec![(
            "t",
            vec![
                run("demo/good", "t", 2, 2, Some(0.0), 100),
                run("demo/sloppy", "t", 1, 2, Some(0.0), 100),
            ],
        )],
    );
    dir.write(
        ".versus/reports/demo-2/report.json",
        "{\"schema_version\": 1, \"recip",
    );
    let out = stats(&dir, &["--json"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("demo-2") && err.contains("skipped"), "{err}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    // The broken report, and the torn last line of preferences.jsonl named by file and line.
    let skipped = doc["sources"]["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 2, "{skipped:?}");
    assert!(
        skipped[0]
            .as_str()
            .unwrap()
            .contains("preferences.jsonl:2: skipped"),
        "{skipped:?}"
    );
    let good = model(&doc, "demo/good");
    assert_eq!((&good["choices"], &good["wins"]), (&json!(2), &json!(2)));
}

#[test]
fn more_choices_narrow_the_interval() {
    let interval = |n: usize| {
        let dir = Dir::new();
        let pair = [("a/x", None, 1), ("b/y", None, 1)];
        let mut lines = Vec::new();
        for i in 0..n {
            lines.push(choice(
                &pair,
                &[if i % 3 == 2 { "b/y" } else { "a/x" }],
                "ask",
            ));
        }
        write_preferences(&dir, &lines);
        let doc = stats_json(&dir, &[]);
        let r = &model(&doc, "a/x")["rating"];
        r["high"].as_f64().unwrap() - r["low"].as_f64().unwrap()
    };
    let (few, many) = (interval(6), interval(60));
    assert!(many < few * 0.5, "{few} {many}");
}

#[test]
fn every_shipped_recipe_passes_recipe_check() {
    let recipes = Path::new(env!("CARGO_MANIFEST_DIR")).join("recipes");
    let mut files: Vec<_> = std::fs::read_dir(&recipes)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".recipe.md"))
        .collect();
    files.sort();
    let names: Vec<String> = files
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    for want in ["fix-failing-tests.recipe.md", "small-feature.recipe.md"] {
        assert!(
            names.iter().any(|n| n == want),
            "{want} missing from {names:?}"
        );
    }
    // An empty home and config, so the check sees the built-in providers only.
    let home = Dir::new();
    let config = home.write("config.toml", "");
    for file in &files {
        let out = versus()
            .env("HOME", home.path())
            .env("XDG_CONFIG_HOME", home.path())
            .arg("-C")
            .arg(home.path())
            .arg("--config")
            .arg(&config)
            .args(["recipe", "check"])
            .arg(file)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}:\n{stdout}{stderr}",
            file.display()
        );
        assert!(
            !stderr.contains("not checked"),
            "providers were not checked: {stderr}"
        );
        assert!(stdout.contains(": ok"), "{stdout}");
    }
}
