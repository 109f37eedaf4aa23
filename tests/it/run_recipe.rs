//! `versus run` end to end through the binary, on the fixture in tests/fixtures/run/: a shell
//! project whose `add` subtracts, and scripted demo models (fixer, cheater, vandal, slow) that
//! never run cargo, so every run takes about a second.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use util::{Dir, versus};

const FIXER: &str = "demo/fixer.jsonl";
const CHEATER: &str = "demo/cheater.jsonl";
const VANDAL: &str = "demo/vandal.jsonl";
const SLOW: &str = "demo/slow.jsonl";

/// A temp folder holding a copy of tests/fixtures/run (recipe, scripts, project/).
pub(crate) fn fixture() -> Dir {
    let dir = Dir::new();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/run");
    copy_tree(&src, dir.path());
    dir
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

/// `versus run ARGS...` in `dir`.
fn run_in(dir: &Dir, args: &[&str]) -> Output {
    versus()
        .current_dir(dir.path())
        .arg("run")
        .args(args)
        .output()
        .unwrap()
}

fn code(out: &Output) -> i32 {
    out.status.code().unwrap_or(-1)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// The run of `model` on `task` in a report.
fn cell<'a>(report: &'a Value, task: &str, model: &str) -> &'a Value {
    let task = report["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == task)
        .unwrap_or_else(|| panic!("no task {task}"));
    task["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["model"] == model)
        .unwrap_or_else(|| panic!("no run of {model}"))
}

/// criterion text -> (passed, detail) of one run.
fn criteria(run: &Value) -> Vec<(String, bool, String)> {
    run["criteria"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["criterion"].as_str().unwrap().to_string(),
                c["passed"].as_bool().unwrap(),
                c["detail"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn failed(run: &Value) -> Vec<String> {
    criteria(run)
        .into_iter()
        .filter(|(_, passed, _)| !passed)
        .map(|(c, _, _)| c)
        .collect()
}

fn detail(run: &Value, criterion: &str) -> String {
    criteria(run)
        .into_iter()
        .find(|(c, _, _)| c == criterion)
        .unwrap_or_else(|| panic!("no criterion {criterion}"))
        .2
}

/// The single report folder under .versus/reports/.
fn only_report_dir(dir: &Dir) -> PathBuf {
    let reports = dir.path().join(".versus/reports");
    let found: Vec<PathBuf> = std::fs::read_dir(&reports)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    found.into_iter().next().unwrap()
}

const TESTS_PASS: &str = "run(timeout=20s): sh test.sh";
const CALC_FIXED: &str = "run: grep -qF '$(( $1 + $2 ))' calc.sh";
const EXPECTATION_KEPT: &str = "run: grep -qF '\"5\"' test.sh";
const PROTECTED: &str = "protected: test.sh";

#[test]
fn the_good_model_passes_every_criterion_and_the_others_fail_theirs() {
    let dir = fixture();
    let out = run_in(&dir, &["run.recipe.md"]);
    assert_eq!(code(&out), 1, "some criteria fail: {}", text(&out.stderr));
    let report_dir = only_report_dir(&dir);
    let name = report_dir
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(name.starts_with("fix-add-"), "{name}");
    let report = read_json(&report_dir.join("report.json"));
    assert_eq!(report["schema_version"], 1);
    assert_eq!(report["complete"], true);
    assert_eq!(report["passed"], false);
    assert_eq!(
        report["models"],
        serde_json::json!([FIXER, CHEATER, VANDAL])
    );

    let fixer = cell(&report, "fix-add", FIXER);
    assert_eq!(fixer["status"], "passed");
    assert_eq!(fixer["stop_reason"], "completed");
    assert_eq!(fixer["criteria_passed"], 7);
    assert!(failed(fixer).is_empty(), "{:?}", criteria(fixer));
    assert_eq!(fixer["tool_calls_by_name"]["bash"], 2);
    assert_eq!(fixer["change_set"]["files"][0]["path"], "calc.sh");
    assert!(fixer["final_text"].as_str().unwrap().starts_with("Fixed"));
    assert!(
        detail(fixer, TESTS_PASS).contains("ok: all tests pass"),
        "the detail keeps the output"
    );

    let cheater = cell(&report, "fix-add", CHEATER);
    assert_eq!(cheater["status"], "failed");
    assert_eq!(failed(cheater), [CALC_FIXED, EXPECTATION_KEPT, PROTECTED]);
    let vandal = cell(&report, "fix-add", VANDAL);
    assert_eq!(
        failed(vandal),
        [TESTS_PASS, EXPECTATION_KEPT, PROTECTED, "contains: Fixed"]
    );
    let deleted = &vandal["change_set"]["files"][1];
    assert_eq!(deleted["path"], "test.sh");
    assert_eq!(deleted["kind"], "deleted");
    assert_eq!(deleted["tools"][0], "bash", "a change bash made is found");

    let summary = report["summary"].as_array().unwrap();
    assert_eq!(summary[0]["tasks_passed"], 1);
    assert_eq!(summary[1]["criteria_passed"], 4);
    assert_eq!(summary[1]["criteria_total"], 7);

    let md = std::fs::read_to_string(report_dir.join("summary.md")).unwrap();
    assert!(md.contains("| demo/fixer.jsonl | passed | 7/7 |"), "{md}");
    assert!(md.contains("| demo/cheater.jsonl | failed | 4/7 |"), "{md}");
    assert!(md.contains("| demo/vandal.jsonl | 0/1 | 3/7 |"), "{md}");
    assert!(
        md.contains("- demo/cheater.jsonl: `protected: test.sh`"),
        "{md}"
    );
    assert_eq!(text(&out.stdout), md, "stdout shows the summary");

    let diff =
        std::fs::read_to_string(report_dir.join("diffs/fix-add/demo-fixer.jsonl.diff")).unwrap();
    assert!(diff.contains("+  echo $(( $1 + $2 ))"), "{diff}");
    assert_eq!(fixer["change_set"]["diff"].as_str().unwrap(), diff);
    let events =
        std::fs::read_to_string(report_dir.join(fixer["events_file"].as_str().unwrap())).unwrap();
    let kinds: Vec<String> = events
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(kinds.first().map(String::as_str), Some("step_started"));
    assert_eq!(kinds.last().map(String::as_str), Some("finished"));
    assert_eq!(kinds.iter().filter(|k| *k == "step_finished").count(), 4);
}

#[test]
fn run_criteria_see_each_models_own_workspace_and_the_project_is_untouched() {
    let dir = fixture();
    let out = run_in(&dir, &["run.recipe.md", "--out", "out", "--json"]);
    assert_eq!(code(&out), 1, "{}", text(&out.stderr));
    let printed: Value = serde_json::from_slice(&out.stdout).unwrap();
    let report = read_json(&dir.path().join("out/report.json"));
    assert_eq!(printed, report, "--json prints report.json");
    // The same command, three answers: each reads its own model's calc.sh and test.sh.
    assert!(!failed(cell(&report, "fix-add", FIXER)).contains(&CALC_FIXED.to_string()));
    assert!(failed(cell(&report, "fix-add", CHEATER)).contains(&CALC_FIXED.to_string()));
    assert!(!failed(cell(&report, "fix-add", VANDAL)).contains(&CALC_FIXED.to_string()));
    // `sh test.sh` passes for the cheater, whose test.sh expects the wrong value, and fails
    // for the vandal, whose test.sh is gone.
    assert!(!failed(cell(&report, "fix-add", CHEATER)).contains(&TESTS_PASS.to_string()));
    let vandal = detail(cell(&report, "fix-add", VANDAL), TESTS_PASS);
    assert!(vandal.starts_with("failed (exit "), "{vandal}");
    assert!(vandal.contains("test.sh"), "{vandal}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("project/calc.sh")).unwrap(),
        std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/run/project/calc.sh")
        )
        .unwrap(),
        "the user's project is never changed"
    );
    assert!(dir.exists("project/test.sh"));
}

#[test]
fn protected_catches_a_model_that_edits_or_deletes_a_protected_file() {
    let dir = fixture();
    let out = run_in(&dir, &["run.recipe.md", "--out", "out", "-q"]);
    assert_eq!(code(&out), 1);
    assert!(
        out.stderr.is_empty(),
        "-q prints nothing: {}",
        text(&out.stderr)
    );
    let report = read_json(&dir.path().join("out/report.json"));
    for model in [CHEATER, VANDAL] {
        let d = detail(cell(&report, "fix-add", model), PROTECTED);
        assert_eq!(d, "changed paths matching `test.sh`: test.sh", "{model}");
    }
    assert_eq!(
        detail(cell(&report, "fix-add", FIXER), PROTECTED),
        "no changed path matches `test.sh`"
    );
}

/// Drops times and ids (the report's volatile fields) so two runs can be compared.
fn without_volatile(value: &mut Value) {
    const VOLATILE: &[&str] = &[
        "run_id",
        "session",
        "started_at",
        "finished_at",
        "latency_ms",
        "time_to_first_token_ms",
        "workspace_ms",
        "mean_latency_ms",
        "total_latency_ms",
        // A tool call's run time (`tool_results`).
        "duration_ms",
    ];
    match value {
        Value::Object(map) => {
            for key in VOLATILE {
                map.remove(*key);
            }
            for v in map.values_mut() {
                without_volatile(v);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(without_volatile),
        _ => {}
    }
}

#[test]
fn two_runs_differ_only_in_times_and_ids() {
    let dir = fixture();
    let a = run_in(&dir, &["run.recipe.md", "--out", "a"]);
    let b = run_in(&dir, &["run.recipe.md", "--out", "b", "--jobs", "2"]);
    assert_eq!((code(&a), code(&b)), (1, 1));
    let mut ra = read_json(&dir.path().join("a/report.json"));
    let mut rb = read_json(&dir.path().join("b/report.json"));
    assert_ne!(ra["run_id"], rb["run_id"]);
    // --jobs is recorded; it is the one setting that differs on purpose.
    assert_eq!(rb["environment"]["jobs"], 2);
    rb["environment"]["jobs"] = ra["environment"]["jobs"].clone();
    without_volatile(&mut ra);
    without_volatile(&mut rb);
    assert_eq!(ra, rb);
    for model in [
        "demo-fixer.jsonl",
        "demo-cheater.jsonl",
        "demo-vandal.jsonl",
    ] {
        let rel = format!("diffs/fix-add/{model}.diff");
        assert_eq!(dir.read(&format!("a/{rel}")), dir.read(&format!("b/{rel}")));
    }
}

#[test]
fn jobs_1_runs_one_model_at_a_time_in_order() {
    let dir = fixture();
    let out = run_in(&dir, &["run.recipe.md", "--out", "out", "--jobs", "1"]);
    assert_eq!(code(&out), 1, "{}", text(&out.stderr));
    let report = read_json(&dir.path().join("out/report.json"));
    assert_eq!(report["environment"]["jobs"], 1);
    assert_eq!(report["complete"], true);
    let records = checkpoint(&dir.path().join("out"));
    // `--jobs` bounds the models running at once: with 1, a model's steps all come before
    // the next model's first (its criteria are checked once it gave its place up).
    let mut order: Vec<String> = Vec::new();
    for r in records.iter().filter(|r| r["type"] == "step") {
        let model = r["model"].as_str().unwrap().to_string();
        if order.last() != Some(&model) {
            assert!(
                !order.contains(&model),
                "two models at once with --jobs 1: {records:?}"
            );
            order.push(model);
        }
    }
    assert_eq!(order, [FIXER, CHEATER, VANDAL]);
    let started: Vec<&str> = records
        .iter()
        .filter(|r| r["type"] == "started")
        .map(|r| r["model"].as_str().unwrap())
        .collect();
    assert_eq!(started, [FIXER, CHEATER, VANDAL], "jobs start in order");
}

fn checkpoint(out: &Path) -> Vec<Value> {
    std::fs::read_to_string(out.join("checkpoint.jsonl"))
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Starts `versus run` in the background.
fn spawn_run(dir: &Dir, args: &[&str]) -> Child {
    versus()
        .current_dir(dir.path())
        .arg("run")
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Polls the checkpoint until `ready` holds (the deadline only guards against a hang).
fn wait_for(out: &Path, what: &str, ready: impl Fn(&[Value]) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if out.join("checkpoint.jsonl").exists() && ready(&checkpoint(out)) {
            return;
        }
        assert!(Instant::now() < deadline, "never saw: {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn has(records: &[Value], kind: &str, model: &str) -> bool {
    records
        .iter()
        .any(|r| r["type"] == kind && (r["model"] == model || r["run"]["model"] == model))
}

fn count(records: &[Value], kind: &str, model: &str) -> usize {
    records
        .iter()
        .filter(|r| r["type"] == kind && r["model"] == model)
        .count()
}

/// The fixture run with the fixer and the slow model, killed with SIGKILL once the fixer has
/// finished and the slow model is past its first step: the start of every resume test.
fn killed_mid_run() -> (Dir, PathBuf) {
    let dir = fixture();
    let out = dir.path().join("out");
    let mut child = spawn_run(
        &dir,
        &["run.recipe.md", "--out", "out", "-m", FIXER, "-m", SLOW],
    );
    wait_for(&out, "fixer finished and slow past its first step", |r| {
        has(r, "finished", FIXER) && has(r, "step", SLOW)
    });
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    (dir, out)
}

#[test]
fn a_run_killed_with_sigkill_resumes_and_does_not_rerun_finished_models() {
    let (dir, out) = killed_mid_run();
    let records = checkpoint(&out);
    assert!(!has(&records, "finished", SLOW), "slow was still streaming");
    assert!(
        !out.join("report.json").exists(),
        "no report after a SIGKILL"
    );
    let fixer_events = dir.read("out/events/fix-add/demo-fixer.jsonl.jsonl");

    // No -m: the resume runs the models the run started with.
    let resumed = run_in(&dir, &["run.recipe.md", "--resume", "--out", "out"]);
    assert_eq!(code(&resumed), 1, "{}", text(&resumed.stderr));
    let report = read_json(&out.join("report.json"));
    assert_eq!(report["complete"], true);
    assert_eq!(report["environment"]["resumed"], 1);
    assert_eq!(report["models"], serde_json::json!([FIXER, SLOW]));
    assert_eq!(cell(&report, "fix-add", FIXER)["status"], "passed");
    let slow = cell(&report, "fix-add", SLOW);
    assert_eq!(slow["stop_reason"], "completed");
    assert!(slow["final_text"].as_str().unwrap().ends_with("forty"));
    let records = checkpoint(&out);
    assert_eq!(
        count(&records, "started", FIXER),
        1,
        "the finished model is not re-run"
    );
    assert_eq!(
        count(&records, "started", SLOW),
        2,
        "the cut-off model runs again"
    );
    assert_eq!(
        dir.read("out/events/fix-add/demo-fixer.jsonl.jsonl"),
        fixer_events,
        "the finished model's event log is untouched"
    );
    assert!(dir.path().join("out/summary.md").exists());
}

/// The run's sessions in `.versus/sessions` of the fixture's project: (id, records).
fn run_sessions(dir: &Dir) -> Vec<(String, Vec<Value>)> {
    let sessions = dir.path().join("project/.versus/sessions");
    let mut found: Vec<(String, Vec<Value>)> = std::fs::read_dir(&sessions)
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            let records = std::fs::read_to_string(path.join("events.jsonl"))
                .unwrap()
                .lines()
                .filter_map(|l| serde_json::from_str(l).ok())
                .collect();
            (
                path.file_name().unwrap().to_string_lossy().into_owned(),
                records,
            )
        })
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0));
    found
}

/// The one session start under `versus run`: a resume whose session folder was removed by hand
/// says so and records the rest of the run in a new session, named in the checkpoint and the
/// report.
#[test]
fn a_resumed_run_whose_session_is_gone_records_the_rest_in_a_new_one() {
    let (dir, out) = killed_mid_run();
    let before = run_sessions(&dir);
    assert_eq!(before.len(), 1);
    let gone = before[0].0.clone();
    std::fs::remove_dir_all(dir.path().join("project/.versus/sessions").join(&gone)).unwrap();

    let resumed = run_in(&dir, &["run.recipe.md", "--resume", "--out", "out"]);
    let stderr = text(&resumed.stderr);
    assert_eq!(code(&resumed), 1, "{stderr}");
    assert!(
        stderr.contains(&format!(
            "the run's session {gone} is gone from .versus/sessions"
        )),
        "{stderr}"
    );
    let after = run_sessions(&dir);
    assert_eq!(after.len(), 1, "one new session");
    let (id, records) = &after[0];
    assert_ne!(id, &gone);
    assert_eq!(records[0]["type"], "opened");
    assert_eq!(records[0]["source"], "run");
    let named: Vec<String> = checkpoint(&out)
        .iter()
        .filter(|r| r["type"] == "session")
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        named,
        [gone, id.clone()],
        "the checkpoint names both, in order"
    );
    let report: Value =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["session"], id.as_str());
}

/// Issue 23: `versus run --resume` continues the run's own session (the session log holds every
/// attempt) instead of opening a new one.
#[test]
fn a_resumed_run_continues_its_own_session() {
    let (dir, out) = killed_mid_run();
    let before = run_sessions(&dir);
    let ids = |sessions: &[(String, Vec<Value>)]| -> Vec<String> {
        sessions.iter().map(|(id, _)| id.clone()).collect()
    };
    assert_eq!(before.len(), 1, "one session: {:?}", ids(&before));
    let (id, first) = &before[0];
    assert_eq!(first[0]["type"], "opened");
    assert_eq!(first[0]["source"], "run");

    let resumed = run_in(&dir, &["run.recipe.md", "--resume", "--out", "out"]);
    assert_eq!(code(&resumed), 1, "{}", text(&resumed.stderr));
    let after = run_sessions(&dir);
    assert_eq!(after.len(), 1, "no second session: {:?}", ids(&after));
    assert_eq!(&after[0].0, id, "the same session id");
    let records = &after[0].1;
    // Appended: the first process's records are still there, in order, as written (a torn
    // last line of the killed process aside).
    let whole = first.len();
    assert_eq!(
        &records[..whole],
        &first[..],
        "the earlier records are kept"
    );
    let added = &records[whole..];
    assert_eq!(added[0]["type"], "opened", "{:?}", added[0]);
    assert_eq!(added[0]["source"], "run");
    assert_eq!(added[0]["continued_after_turn"], 1);
    let turn = added
        .iter()
        .find(|r| r["type"] == "turn")
        .expect("the task run again is a new turn");
    assert_eq!(turn["turn"], 2);
    assert_eq!(
        turn["models"],
        serde_json::json!([SLOW]),
        "only the cut-off model"
    );
    let finished: Vec<&Value> = added.iter().filter(|r| r["type"] == "finished").collect();
    assert_eq!(finished.len(), 1, "{finished:?}");
    assert_eq!(finished[0]["model"], SLOW);
    assert_eq!(finished[0]["turn"], 2);
    assert_eq!(finished[0]["entry"], 0);
    assert!(
        added
            .iter()
            .any(|r| r["type"] == "turn_ended" && r["turn"] == 2)
    );
    assert_eq!(added.last().unwrap()["type"], "ended");
    // The checkpoint names the session once, from the first process.
    let records = checkpoint(&out);
    let named: Vec<&Value> = records.iter().filter(|r| r["type"] == "session").collect();
    assert_eq!(named.len(), 1, "{named:?}");
    assert_eq!(named[0]["id"], id.as_str());
    // And the report says which session holds the run's transcripts.
    let report: Value =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["session"], id.as_str());
}

#[test]
fn sigterm_writes_an_incomplete_report_that_resume_completes() {
    let dir = fixture();
    let out = dir.path().join(".versus/reports");
    let mut child = spawn_run(&dir, &["run.recipe.md", "-m", FIXER, "-m", SLOW]);
    let report_dir = loop {
        if let Ok(mut entries) = std::fs::read_dir(&out)
            && let Some(entry) = entries.next()
        {
            break entry.unwrap().path();
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    wait_for(&report_dir, "slow past its first step", |r| {
        has(r, "step", SLOW)
    });
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let report = read_json(&report_dir.join("report.json"));
    assert_eq!(report["complete"], false);
    assert_eq!(cell(&report, "fix-add", SLOW)["status"], "not_run");
    let md = std::fs::read_to_string(report_dir.join("summary.md")).unwrap();
    assert!(md.contains("**Incomplete**"), "{md}");

    // Without --out, --resume continues the latest report of the recipe.
    let resumed = run_in(&dir, &["run.recipe.md", "--resume"]);
    assert_eq!(code(&resumed), 1, "{}", text(&resumed.stderr));
    let report = read_json(&report_dir.join("report.json"));
    assert_eq!(report["complete"], true);
    assert_ne!(cell(&report, "fix-add", SLOW)["status"], "not_run");
}

#[test]
fn sequential_mode_keeps_each_models_workspace_and_conversation() {
    let dir = fixture();
    dir.write(
        "seq.jsonl",
        concat!(
            r#"{"say": "Writing a note.", "tools": [{"name": "write_file", "args": {"path": "note.txt", "content": "first\n"}}]}"#,
            "\n",
            r#"{"say": "Wrote it."}"#,
            "\n",
            r#"{"say": "Adding to the note.", "tools": [{"name": "bash", "args": {"command": "echo second >> note.txt"}}]}"#,
            "\n",
            r#"{"say": "Second task done."}"#,
            "\n",
        ),
    );
    dir.write(
        "seq.recipe.md",
        "# Seq\nversion: 1\n\n## Models\n- demo/seq.jsonl\n\n## Constraints\nproject_root: project\n\n## Context\ntask_mode: sequential\n\n## Tasks\n- Write a note.\n- Add to the note.\n\n## Success Criteria\n- no_errors\n- run: grep -q first note.txt\n",
    );
    let out = run_in(&dir, &["seq.recipe.md", "--out", "out"]);
    assert_eq!(code(&out), 0, "{}", text(&out.stderr));
    let report = read_json(&dir.path().join("out/report.json"));
    assert_eq!(report["recipe"]["task_mode"], "sequential");
    let second = cell(&report, "task-2", "demo/seq.jsonl");
    assert_eq!(second["status"], "passed", "{:?}", criteria(second));
    assert_eq!(
        second["final_text"], "Second task done.",
        "the script went on"
    );
    let diff = second["change_set"]["diff"].as_str().unwrap();
    assert!(
        diff.contains("+first\n+second"),
        "the change set is cumulative: {diff}"
    );
}

#[test]
fn a_missing_or_broken_recipe_is_exit_2_with_every_problem_listed() {
    let dir = fixture();
    let missing = run_in(&dir, &["nope.recipe.md"]);
    assert_eq!(code(&missing), 2);
    assert!(
        text(&missing.stderr).contains("nope.recipe.md"),
        "{}",
        text(&missing.stderr)
    );

    dir.write(
        "broken.md",
        "# Broken\nversion: 1\n\n## Tasks\n- go\n\n## Succes Criteria\n- no_errors\n\n## Constraints\nmax_steps: lots\n",
    );
    let broken = run_in(&dir, &["broken.md"]);
    assert_eq!(code(&broken), 2);
    let err = text(&broken.stderr);
    assert!(err.contains("broken.md:7:"), "{err}");
    assert!(err.contains("broken.md:11:"), "{err}");
    assert!(err.contains("2 problems"), "{err}");

    dir.write(
        "empty.md",
        "# Empty\nversion: 1\n\n## Models\n- demo/fixer.jsonl\n",
    );
    let empty = run_in(&dir, &["empty.md"]);
    assert_eq!(code(&empty), 2);
    assert!(
        text(&empty.stderr).contains("has no task"),
        "{}",
        text(&empty.stderr)
    );

    let resume = run_in(&dir, &["run.recipe.md", "--resume"]);
    assert_eq!(code(&resume), 2);
    assert!(
        text(&resume.stderr).contains("nothing to resume"),
        "{}",
        text(&resume.stderr)
    );
    assert!(
        !dir.exists(".versus/reports/fix-add"),
        "nothing is written on a usage error"
    );
}

#[test]
fn missing_keys_skip_models_and_an_out_folder_in_use_is_refused() {
    let dir = fixture();
    let out = Command::new(env!("CARGO_BIN_EXE_versus"))
        .current_dir(dir.path())
        .env("XDG_STATE_HOME", util::state_home())
        .env("TMPDIR", util::temp_home())
        .env_remove("ANTHROPIC_API_KEY")
        .env("NO_COLOR", "1")
        .args(["run", "run.recipe.md", "--out", "out", "-m", FIXER, "-m"])
        .arg("anthropic/claude-sonnet-4-5")
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("skipping"),
        "{}",
        text(&out.stderr)
    );
    let report = read_json(&dir.path().join("out/report.json"));
    assert_eq!(report["passed"], true);
    assert_eq!(
        report["skipped_models"][0]["model"],
        "anthropic/claude-sonnet-4-5"
    );
    assert_eq!(report["models"], serde_json::json!([FIXER]));

    let again = run_in(&dir, &["run.recipe.md", "--out", "out", "-m", FIXER]);
    assert_eq!(code(&again), 2);
    assert!(
        text(&again.stderr).contains("--resume"),
        "{}",
        text(&again.stderr)
    );
}

#[test]
fn a_failing_setup_fails_the_run_and_keep_leaves_the_workspace() {
    let dir = fixture();
    dir.write(
        "setup.recipe.md",
        "# Setup\nversion: 1\n\n## Models\n- demo/fixer.jsonl\n\n## Constraints\nproject_root: project\n\n## Workspace\nsetup: echo preparing; exit 3\n\n## Tasks\n- Fix it.\n\n## Success Criteria\n- no_errors\n- run: true\n",
    );
    let out = run_in(&dir, &["setup.recipe.md", "--out", "setup"]);
    assert_eq!(code(&out), 1, "{}", text(&out.stderr));
    let report = read_json(&dir.path().join("setup/report.json"));
    let run = cell(&report, "task-1", FIXER);
    assert_eq!(run["stop_reason"], Value::Null, "the model never started");
    let error = run["error"].as_str().unwrap();
    assert!(
        error.contains("the setup command `echo preparing; exit 3` failed"),
        "{error}"
    );
    assert!(error.contains("exit code 3"), "{error}");
    assert!(detail(run, "run: true").contains("no workspace"));

    dir.write(
        "keep.recipe.md",
        "# Keep\nversion: 1\n\n## Models\n- demo/fixer.jsonl\n\n## Constraints\nproject_root: project\n\n## Workspace\nsetup: touch .setup-ran\nkeep: true\n\n## Tasks\n- Fix it.\n\n## Success Criteria\n- run: test -f .setup-ran\n",
    );
    let out = run_in(&dir, &["keep.recipe.md", "--out", "keep"]);
    assert_eq!(code(&out), 0, "{}", text(&out.stderr));
    let report = read_json(&dir.path().join("keep/report.json"));
    let kept = PathBuf::from(
        cell(&report, "task-1", FIXER)["workspace"]
            .as_str()
            .unwrap(),
    );
    let fixed = std::fs::read_to_string(kept.join("calc.sh")).unwrap();
    assert!(fixed.contains("$(( $1 + $2 ))"), "{fixed}");
    // The kept workspace is ours to remove (its folder holds the marker and the tree).
    std::fs::remove_dir_all(kept.parent().unwrap()).unwrap();

    // Two independent tasks: each is a turn of its own, and the first turn's workspace is
    // kept too when the second starts (not only the last turn's).
    dir.write(
        "keep2.recipe.md",
        "# Keep two\nversion: 1\n\n## Models\n- demo/fixer.jsonl\n\n## Constraints\nproject_root: project\n\n## Workspace\nkeep: true\n\n## Tasks\n- Fix it.\n- Fix it again.\n\n## Success Criteria\n- no_errors\n",
    );
    let out = run_in(&dir, &["keep2.recipe.md", "--out", "keep2"]);
    assert_eq!(code(&out), 0, "{}", text(&out.stderr));
    let report = read_json(&dir.path().join("keep2/report.json"));
    let roots: Vec<PathBuf> = ["task-1", "task-2"]
        .iter()
        .map(|t| PathBuf::from(cell(&report, t, FIXER)["workspace"].as_str().unwrap()))
        .collect();
    assert_ne!(roots[0], roots[1], "a fresh workspace per independent task");
    for root in &roots {
        assert!(
            root.join("calc.sh").is_file(),
            "{} was removed",
            root.display()
        );
        std::fs::remove_dir_all(root.parent().unwrap()).unwrap();
    }
}

#[test]
fn resume_refuses_a_changed_recipe_or_other_models() {
    let dir = fixture();
    let out = run_in(&dir, &["run.recipe.md", "--out", "out", "-m", FIXER]);
    assert_eq!(code(&out), 0, "{}", text(&out.stderr));
    let other = run_in(
        &dir,
        &["run.recipe.md", "--resume", "--out", "out", "-m", CHEATER],
    );
    assert_eq!(code(&other), 2);
    assert!(
        text(&other.stderr).contains("resume without -m"),
        "{}",
        text(&other.stderr)
    );
    // A finished run resumes to the same report without running anything.
    let same = run_in(&dir, &["run.recipe.md", "--resume", "--out", "out"]);
    assert_eq!(code(&same), 0, "{}", text(&same.stderr));
    assert_eq!(
        count(&checkpoint(&dir.path().join("out")), "started", FIXER),
        1
    );

    let recipe = std::fs::read_to_string(dir.path().join("run.recipe.md")).unwrap();
    dir.write(
        "run.recipe.md",
        recipe.replace("- contains: Fixed", "- contains: fixed"),
    );
    let changed = run_in(&dir, &["run.recipe.md", "--resume", "--out", "out"]);
    assert_eq!(code(&changed), 2);
    assert!(
        text(&changed.stderr).contains("the recipe changed"),
        "{}",
        text(&changed.stderr)
    );
}

/// The shipped demo recipe, exactly as the README tells a user to run it: the three built-in
/// demo models on the example project, scored by the project's real `cargo test`.
#[test]
fn the_shipped_demo_recipe_scores_the_demo_models_as_documented() {
    let dir = Dir::new();
    let recipes = Path::new(env!("CARGO_MANIFEST_DIR")).join("recipes");
    copy_tree(
        &recipes.join("demo/project"),
        &dir.path().join("recipes/demo/project"),
    );
    std::fs::copy(
        recipes.join("demo.recipe.md"),
        dir.path().join("recipes/demo.recipe.md"),
    )
    .unwrap();
    let out = run_in(&dir, &["recipes/demo.recipe.md", "--quiet"]);
    assert_eq!(
        code(&out),
        1,
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let report_dir = only_report_dir(&dir);
    let report = read_json(&report_dir.join("report.json"));
    let task = "fix-bulk-discount";
    let good = cell(&report, task, "demo/good");
    assert!(
        failed(good).is_empty(),
        "demo/good failed {:?}",
        criteria(good)
    );
    let sloppy = failed(cell(&report, task, "demo/sloppy"));
    assert_eq!(
        sloppy,
        ["run: grep -qF 'assert_eq!(order_total(&items), 900);' tests/pricing.rs"],
        "demo/sloppy changed the test's expectation"
    );
    let reckless = failed(cell(&report, task, "demo/reckless"));
    assert!(
        reckless.iter().any(|c| c.contains("cargo test"))
            && reckless.iter().any(|c| c.contains("cargo build"))
            && reckless.contains(&"protected: src/main.rs".to_string()),
        "demo/reckless broke main.rs: {reckless:?}"
    );
    let summary = std::fs::read_to_string(report_dir.join("summary.md")).unwrap();
    for model in ["demo/good", "demo/sloppy", "demo/reckless"] {
        assert!(summary.contains(model), "{summary}");
    }
    // The example project itself is untouched: the models worked in their own copies.
    assert_eq!(
        std::fs::read(dir.path().join("recipes/demo/project/src/pricing.rs")).unwrap(),
        std::fs::read(recipes.join("demo/project/src/pricing.rs")).unwrap()
    );
}

/// A recipe's Output Processing rule that the tool cannot apply itself (keep the tail of bash
/// output) is applied by the loop before the model reads the result.
#[test]
fn output_processing_the_tool_cannot_apply_is_applied_before_the_model_reads_it() {
    let dir = fixture();
    dir.write(
        "talker.jsonl",
        "{\"tools\": [{\"name\": \"bash\", \"args\": {\"command\": \"seq 1 40\"}}]}\n{\"say\": \"Counted.\"}\n",
    );
    dir.write(
        "tail.recipe.md",
        "# Tail\nversion: 1\n\n## Models\n- demo/talker.jsonl\n\n## Constraints\nproject_root: project\n\n\
         ## Tasks\n- Count to forty.\n\n## Success Criteria\n- no_errors\n\n\
         ## Output Processing\n- bash: max_lines=3, truncation=tail\n",
    );
    let out = run_in(&dir, &["tail.recipe.md", "--out", "out", "--quiet"]);
    assert_eq!(code(&out), 0, "{}", text(&out.stderr));
    assert!(
        !text(&out.stderr).contains("Output Processing"),
        "no 'not applied' note any more: {}",
        text(&out.stderr)
    );
    let events_dir = dir.path().join("out/events");
    let task_dir = std::fs::read_dir(&events_dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let log = std::fs::read_dir(&task_dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let result = std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|v| v.to_string().contains("\"tool_result\""))
        .expect("a tool result event");
    let text = result.to_string();
    assert!(text.contains("earlier lines not shown"), "{text}");
    let bytes = result
        .pointer("/event/bytes")
        .or_else(|| result.get("bytes"))
        .and_then(Value::as_u64)
        .unwrap();
    assert!(bytes < 60, "the model read only the tail: {bytes} bytes");
}

#[test]
fn the_report_records_the_sandbox_and_warns_when_it_is_weakened() {
    // Default: confined, no warning.
    let dir = fixture();
    run_in(&dir, &["run.recipe.md", "--out", "out"]);
    let report = read_json(&dir.path().join("out/report.json"));
    let sandbox = &report["environment"]["sandbox"];
    assert_eq!(sandbox["enabled"], true, "{sandbox}");
    assert_eq!(sandbox["filesystem"], "project_only", "{sandbox}");
    assert!(sandbox["warning"].is_null(), "{sandbox}");
    let md = std::fs::read_to_string(dir.path().join("out/summary.md")).unwrap();
    assert!(!md.contains("WARNING"), "{md}");

    // `filesystem: unrestricted`: the report says so, at the top of the Markdown too.
    let dir = fixture();
    let recipe = dir.path().join("run.recipe.md");
    let mut body = std::fs::read_to_string(&recipe).unwrap();
    body.push_str("\n## Sandbox\nfilesystem: unrestricted\n");
    std::fs::write(&recipe, body).unwrap();
    // A recipe in the folder versus runs in may loosen the sandbox only when trusted
    // (tests/it/foreign_state.rs plays the refusal); --trust trusts it for this run.
    let out = versus()
        .current_dir(dir.path())
        .args(["--trust", "run", "run.recipe.md", "--out", "out"])
        .output()
        .unwrap();
    assert!(
        text(&out.stderr).contains("WARNING"),
        "{}",
        text(&out.stderr)
    );
    let report = read_json(&dir.path().join("out/report.json"));
    let sandbox = &report["environment"]["sandbox"];
    assert_eq!(sandbox["filesystem"], "unrestricted", "{sandbox}");
    let warning = sandbox["warning"].as_str().unwrap_or_default().to_string();
    assert!(warning.contains("unrestricted"), "{sandbox}");
    let md = std::fs::read_to_string(dir.path().join("out/summary.md")).unwrap();
    let head: String = md.lines().take(4).collect::<Vec<_>>().join("\n");
    assert!(head.contains(&format!("WARNING: {warning}")), "{head}");
}

#[test]
fn criteria_that_could_not_run_are_errors_of_the_run_not_failures_of_the_models() {
    // The sandbox cannot start (its program is missing): the `run:` criteria never ran, so
    // they must not count against the models.
    let dir = fixture();
    dir.write(
        "config/versus/config.toml",
        "[sandbox]\nprogram = \"/nonexistent/bwrap\"\n",
    );
    let out = versus()
        .current_dir(dir.path())
        .env("XDG_CONFIG_HOME", dir.path().join("config"))
        .args(["run", "run.recipe.md", "--out", "out"])
        .output()
        .unwrap();
    assert_eq!(
        code(&out),
        2,
        "a broken run is not 'some failed': {}",
        text(&out.stderr)
    );
    assert!(
        text(&out.stderr).contains("reported as errors"),
        "{}",
        text(&out.stderr)
    );
    let report = read_json(&dir.path().join("out/report.json"));
    assert_eq!(report["broken"], true, "{report}");
    assert_eq!(report["passed"], false);
    for model in [FIXER, CHEATER, VANDAL] {
        let run = cell(&report, "fix-add", model);
        assert_eq!(run["status"], "error", "{model}: {run}");
        for c in run["criteria"].as_array().unwrap() {
            if c["kind"] == "run" {
                assert_eq!(c["error"], true, "{c}");
                assert_eq!(c["passed"], false, "{c}");
                let detail = c["detail"].as_str().unwrap();
                assert!(detail.starts_with("not checked: "), "{detail}");
                assert!(detail.contains("sandbox cannot start"), "{detail}");
            } else {
                assert!(c.get("error").is_none(), "only run: criteria: {c}");
            }
        }
    }
    for s in report["summary"].as_array().unwrap() {
        assert_eq!(s["tasks_run"], 0, "{s}");
        assert_eq!(s["tasks_errored"], 1, "{s}");
    }
    let md = std::fs::read_to_string(dir.path().join("out/summary.md")).unwrap();
    assert!(md.contains("**Broken**"), "{md}");
    assert!(md.contains("Criteria not checked"), "{md}");
    assert!(md.contains("| error |"), "{md}");
    assert!(!md.contains("Failed criteria"), "{md}");
    // `versus stats` counts nothing from it: no model won or lost anything. (The run's own
    // `.versus` is the project's, where its session was recorded.)
    let report_dir = dir.path().join("project/.versus/reports/copied");
    std::fs::create_dir_all(&report_dir).unwrap();
    std::fs::copy(
        dir.path().join("out/report.json"),
        report_dir.join("report.json"),
    )
    .unwrap();
    let stats = versus()
        .current_dir(dir.path().join("project"))
        .args(["stats", "--json"])
        .output()
        .unwrap();
    assert_eq!(code(&stats), 0, "{}", text(&stats.stderr));
    let stats: Value = serde_json::from_slice(&stats.stdout).unwrap();
    assert_eq!(
        stats["sources"]["reports"], 1,
        "the report was read: {stats}"
    );
    assert_eq!(stats["models"], serde_json::json!([]), "{stats}");
}

/// Issue 23: independent tasks are jobs of their own that fill `--jobs` places across tasks:
/// with 2 models and `--jobs 4`, both tasks' models run at once, in one turn of the run's
/// session whose record names each entry's task; no task clears the conversations of the
/// others (each job starts with none), and `versus sessions show` says which task a model's
/// part belongs to.
#[test]
fn independent_tasks_run_side_by_side_and_each_job_starts_afresh() {
    let dir = fixture();
    dir.write(
        "slow2.jsonl",
        std::fs::read(dir.path().join("slow.jsonl")).unwrap(),
    );
    dir.write(
        "two.recipe.md",
        "# Two\nversion: 1\n\n## Constraints\ntimeout: 1m\nproject_root: project\n\n## Tasks\n- List the files.\n- List them again.\n\n## Success Criteria\n- no_errors\n- contains: forty\n",
    );
    let out = run_in(
        &dir,
        &[
            "two.recipe.md",
            "--out",
            "out",
            "--jobs",
            "4",
            "-m",
            SLOW,
            "-m",
            "demo/slow2.jsonl",
        ],
    );
    assert_eq!(code(&out), 0, "{}", text(&out.stderr));
    let report = read_json(&dir.path().join("out/report.json"));
    for task in ["task-1", "task-2"] {
        for model in [SLOW, "demo/slow2.jsonl"] {
            let run = cell(&report, task, model);
            assert_eq!(run["status"], "passed", "{task} {model}: {run}");
        }
    }
    let sessions = run_sessions(&dir);
    assert_eq!(sessions.len(), 1);
    let records = &sessions[0].1;
    assert!(
        !records.iter().any(|r| r["type"] == "cleared"),
        "no task clears another's conversation: {records:?}"
    );
    let turns: Vec<&Value> = records.iter().filter(|r| r["type"] == "turn").collect();
    assert_eq!(turns.len(), 1, "one turn for both tasks: {turns:?}");
    assert_eq!(
        turns[0]["models"],
        serde_json::json!([SLOW, "demo/slow2.jsonl", SLOW, "demo/slow2.jsonl"])
    );
    let tasks = &turns[0]["tasks"];
    assert_eq!(tasks[0]["name"], "task-1");
    assert_eq!(tasks[0]["prompt"], "List the files.");
    assert_eq!(tasks[0]["entries"], serde_json::json!([0, 1]));
    assert_eq!(tasks[1]["name"], "task-2");
    assert_eq!(tasks[1]["entries"], serde_json::json!([2, 3]));
    // Four models at once: every workspace was ready before the first model ended (each
    // streams for about two seconds).
    let position = |kind: &str| records.iter().position(|r| r["type"] == kind).unwrap();
    let last_workspace = records
        .iter()
        .rposition(|r| r["type"] == "workspace")
        .unwrap();
    assert_eq!(
        records.iter().filter(|r| r["type"] == "workspace").count(),
        4
    );
    assert!(
        last_workspace < position("finished"),
        "task-2's models started while task-1's ran"
    );
    // Each job was sent its own task's prompt and no other conversation.
    for (entry, prompt) in [(0, "List the files."), (3, "List them again.")] {
        let finished = records
            .iter()
            .find(|r| r["type"] == "finished" && r["entry"] == entry)
            .unwrap();
        assert!(finished["final_text"].as_str().unwrap().ends_with("forty"));
        let conversation = records
            .iter()
            .filter(|r| {
                (r["type"] == "conversation" || r["type"] == "conversation_tail")
                    && r["model"] == finished["model"]
            })
            .find(|r| {
                r["messages"][0]["parts"][0]["text"]
                    .as_str()
                    .is_some_and(|t| t == prompt)
            });
        assert!(
            conversation.is_some(),
            "entry {entry} was sent {prompt:?}: {records:?}"
        );
    }
    let show = versus()
        .current_dir(dir.path().join("project"))
        .args(["sessions", "show"])
        .output()
        .unwrap();
    assert!(show.status.success(), "{}", text(&show.stderr));
    let shown = text(&show.stdout);
    assert!(
        shown.contains(&format!("{SLOW} [task-1]:"))
            && shown.contains("demo/slow2.jsonl [task-2]:"),
        "{shown}"
    );
}

/// Issue 23: the checkpoint and the raw event logs are record files like the others (through
/// the one JSONL module): a version on every line, a torn last line cut before the next
/// append; a checkpoint written before lines carried a version still resumes.
#[test]
fn checkpoint_and_event_logs_carry_versions_and_an_old_checkpoint_still_resumes() {
    let dir = fixture();
    let out = dir.path().join("out");
    let first = run_in(
        &dir,
        &["run.recipe.md", "--out", "out", "-m", FIXER, "-m", CHEATER],
    );
    assert_eq!(code(&first), 1, "{}", text(&first.stderr));
    let lines = |path: &Path| -> Vec<String> {
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect()
    };
    for file in [
        out.join("checkpoint.jsonl"),
        out.join("events/fix-add/demo-fixer.jsonl.jsonl"),
    ] {
        let all = lines(&file);
        assert!(all.len() > 2, "{all:?}");
        assert!(
            all.iter().all(|l| l.starts_with("{\"v\":1,")),
            "a version first on every line of {}: {all:?}",
            file.display()
        );
    }
    // The same run as an older versus left it when killed: no versions, the cheater's
    // result not written, a torn last line.
    let mut old: String = lines(&out.join("checkpoint.jsonl"))
        .iter()
        .filter(|l| !(l.contains("\"type\":\"finished\"") && l.contains(CHEATER)))
        .map(|l| format!("{}\n", l.replacen("{\"v\":1,", "{", 1)))
        .collect();
    old.push_str("{\"type\":\"step\",\"ta");
    std::fs::write(out.join("checkpoint.jsonl"), &old).unwrap();
    std::fs::remove_file(out.join("report.json")).unwrap();
    let resumed = run_in(&dir, &["run.recipe.md", "--resume", "--out", "out"]);
    assert_eq!(code(&resumed), 1, "{}", text(&resumed.stderr));
    let report = read_json(&out.join("report.json"));
    assert_eq!(report["complete"], true);
    assert_eq!(cell(&report, "fix-add", FIXER)["status"], "passed");
    assert_eq!(cell(&report, "fix-add", CHEATER)["status"], "failed");
    let after = lines(&out.join("checkpoint.jsonl"));
    assert!(
        after
            .iter()
            .all(|l| serde_json::from_str::<Value>(l).is_ok()),
        "the torn line was cut before the resume appended: {after:?}"
    );
    let records = checkpoint(&out);
    assert_eq!(
        count(&records, "started", FIXER),
        1,
        "the fixer is not run again"
    );
    assert_eq!(count(&records, "started", CHEATER), 2);
    assert!(after.last().unwrap().starts_with("{\"v\":1,"));
}

/// Issue 23: a run whose independent tasks share a turn, killed with SIGKILL, resumes: the
/// jobs that finished (on either task) are not run again, the cut-off ones run in a new turn
/// of the same session holding only them.
#[test]
fn a_run_of_tasks_sharing_a_turn_resumes_only_its_unfinished_jobs() {
    let dir = fixture();
    dir.write(
        "two.recipe.md",
        "# Two\nversion: 1\n\n## Constraints\ntimeout: 1m\nproject_root: project\n\n## Tasks\n- Fix the tests.\n- Fix them again.\n\n## Success Criteria\n- no_errors\n",
    );
    let out = dir.path().join("out");
    let mut child = spawn_run(
        &dir,
        &["two.recipe.md", "--out", "out", "-m", FIXER, "-m", SLOW],
    );
    let finished = |records: &[Value], model: &str| {
        records
            .iter()
            .filter(|r| r["type"] == "finished" && r["run"]["model"] == model)
            .count()
    };
    wait_for(
        &out,
        "the fixer finished both tasks, slow past a step",
        |r| finished(r, FIXER) == 2 && has(r, "step", SLOW),
    );
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert_eq!(
        finished(&checkpoint(&out), SLOW),
        0,
        "slow was still streaming"
    );

    let resumed = run_in(&dir, &["two.recipe.md", "--resume", "--out", "out"]);
    assert_eq!(code(&resumed), 0, "{}", text(&resumed.stderr));
    let report = read_json(&out.join("report.json"));
    assert_eq!(report["complete"], true);
    for task in ["task-1", "task-2"] {
        assert_eq!(cell(&report, task, SLOW)["stop_reason"], "completed");
        assert_eq!(cell(&report, task, FIXER)["status"], "passed");
    }
    let records = checkpoint(&out);
    assert_eq!(
        count(&records, "started", FIXER),
        2,
        "one per task, never again"
    );
    assert_eq!(
        count(&records, "started", SLOW),
        4,
        "each cut-off job runs again"
    );
    let sessions = run_sessions(&dir);
    assert_eq!(sessions.len(), 1, "the same session");
    let turns: Vec<&Value> = sessions[0]
        .1
        .iter()
        .filter(|r| r["type"] == "turn")
        .collect();
    assert_eq!(turns.len(), 2, "{turns:?}");
    assert_eq!(turns[1]["models"], serde_json::json!([SLOW, SLOW]));
    assert_eq!(turns[1]["tasks"][1]["name"], "task-2");
    assert!(
        !sessions[0].1.iter().any(|r| r["type"] == "cleared"),
        "jobs of a shared turn start afresh without clearing"
    );
}
