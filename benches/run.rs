//! Headless runs: what `versus run` costs on top of the models' own time.
//!
//! `cargo bench --bench run`; docs/benchmarks.md ("Headless runs") explains the method and
//! records the latest results.
//!
//! The demo recipe's shape: the example project (a small git repository), 3 tasks and 6 demo
//! models, `--jobs 6`. Each model is a demo script written into a temporary folder: a few
//! steps of streamed words paced by `token_delay_ms`, reading a file, writing one, and a final
//! answer; no step runs cargo or any other slow command, so nearly all of a run's time is the
//! scripted delay. The bench runs the real `versus run` binary (the one `cargo bench` builds in
//! the release-like bench profile, or `VERSUS_BENCH_BIN`), times the whole process, and reads
//! the `report.json` it wrote.
//!
//! - Wall time against the scripted delay. The demo provider sleeps `token_delay_ms` before
//!   every streamed word and every tool call, so each run's scripted delay is known exactly
//!   from its script. With 18 equal runs and 6 at a time, no schedule can finish before
//!   `max(total delay / jobs, the longest model's delay over its tasks)` = 3 runs' delay. The
//!   overhead is the wall time above that bound, as a share of it (target: < 10%). Everything
//!   versus adds is in it: process start, recipe load, workspace creation and setup, the agent
//!   loop and tools, criteria, report and diffs.
//! - Per run: `latency_ms` from the report minus the run's scripted delay (the agent loop,
//!   the tools, and the timer's rounding of every pause, measured on its own as the same
//!   pauses slept by tokio alone), and `workspace_ms` (creating the workspace and running the
//!   setup command), per task.
//!
//! Environment: `VERSUS_BENCH_RUNS` (3) timed runs, after one untimed warm-up;
//! `VERSUS_BENCH_DELAY_MS` (50) the per-word delay; `VERSUS_BENCH_JOBS` (6);
//! `VERSUS_BENCH_BIN` another `versus` binary.
//!
//! `cargo bench --bench run -- scale`: many instant jobs (issue 23). `VERSUS_BENCH_SCALE_JOBS`
//! (6000) task x model jobs, `VERSUS_BENCH_SCALE_MODELS` (16) demo models over
//! `jobs / models` tasks, `--jobs` `VERSUS_BENCH_JOBS` (16), each job one answer of
//! `SCALE_WORDS` words at `VERSUS_BENCH_DELAY_MS` (5) ms a word and nothing else (no tool, only
//! `no_errors`), in overlay workspaces: what is measured is what `versus run` adds per job
//! (scheduling, the session's records, the checkpoint, events, diffs and the report). The
//! reference is measured in the same run: the same pauses slept by tokio alone, one wave of
//! `--jobs` jobs after the other (`jobs / --jobs` waves), which no schedule can beat; the
//! ratio printed is the wall time above it as a share of it (target: < 5%).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    missing_docs
)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const MODELS: usize = 6;
const TASKS: usize = 3;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|v| *v > 0)
        .unwrap_or(default)
}

fn median(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len() % 2 == 1 {
        values[mid]
    } else {
        (values[mid - 1] + values[mid]) / 2.0
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The steps of one demo script: think/say text and tool calls; every task replays them from
/// the start (independent mode gives each task a fresh conversation). The write goes to a new
/// file so the same script succeeds on every task.
fn script_steps(model: usize, delay_ms: u64) -> Vec<Value> {
    vec![
        json!({
            "think": "Start by reading the code that the task is about before changing anything.",
            "say": "I will read the pricing module first to see how totals are computed.",
            "tools": [{"name": "read_file", "args": {"path": "src/pricing.rs"}}],
            "token_delay_ms": delay_ms
        }),
        json!({
            "say": "The module is small. I will list the project and then write my notes down.",
            "tools": [{"name": "list_directory", "args": {"path": "."}}],
            "token_delay_ms": delay_ms
        }),
        json!({
            "say": "Writing the notes file with what I found in the pricing code.",
            "tools": [{"name": "write_file", "args": {
                "path": "NOTES.md",
                "content": format!("# Notes of model {model}\n\nThe bulk discount starts at ten items.\n")
            }}],
            "token_delay_ms": delay_ms
        }),
        json!({
            "say": "Done: NOTES.md describes the bulk discount rule of the pricing module.",
            "token_delay_ms": delay_ms
        }),
    ]
}

/// How many times the demo provider pauses in one run of the script: once per streamed word
/// (thinking and text) and once per tool call. Every step uses the same delay.
fn pauses(steps: &[Value]) -> u32 {
    let mut pauses = 0;
    for step in steps {
        for key in ["think", "say"] {
            pauses += step[key].as_str().unwrap_or("").split_whitespace().count() as u32;
        }
        pauses += step["tools"].as_array().map_or(0, |t| t.len() as u32);
        assert_eq!(step["token_delay_ms"], steps[0]["token_delay_ms"]);
    }
    pauses
}

/// What the same pauses take when tokio alone sleeps them, one after the other (the bench
/// takes the median of three): the timer's own rounding (it wakes at the next millisecond tick
/// or later), which every scripted run pays and which is not versus's work.
fn timer_floor(pauses: u32, delay: Duration) -> Duration {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_time()
        .build()
        .unwrap();
    let start = Instant::now();
    runtime.block_on(async {
        for _ in 0..pauses {
            tokio::time::sleep(delay).await;
        }
    });
    start.elapsed()
}

fn recipe_text(scripts: &[PathBuf]) -> String {
    let mut text = String::from("# Bench headless\nversion: 1\n\n## Models\n");
    for s in scripts {
        text.push_str(&format!("- demo/{}\n", s.display()));
    }
    text.push_str(
        "\n## Constraints\ntimeout: 5m\nmax_steps: 20\n\n## Tasks\n\
         ### read-the-pricing\nRead the pricing code and write what you find to NOTES.md.\n\n\
         ### explain-the-discount\nExplain the bulk discount in NOTES.md.\n\n\
         ### summarise-the-project\nSummarise the project in NOTES.md.\n\n\
         ## Success Criteria\n- no_errors\n- has_writes\n- contains: NOTES.md\n\
         - run: test -s NOTES.md\n- protected: src/**\n",
    );
    text
}

fn binary() -> PathBuf {
    std::env::var_os("VERSUS_BENCH_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_versus")))
}

/// One `versus run`: wall time of the process and the report it wrote.
fn run_once(
    bin: &Path,
    project: &Path,
    recipe: &Path,
    out: &Path,
    jobs: usize,
) -> (Duration, Value) {
    let start = Instant::now();
    let output = Command::new(bin)
        .arg("-C")
        .arg(project)
        .arg("run")
        .arg(recipe)
        .arg("--jobs")
        .arg(jobs.to_string())
        .arg("--out")
        .arg(out)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let wall = start.elapsed();
    let report_path = out.join("report.json");
    let Ok(text) = std::fs::read_to_string(&report_path) else {
        panic!(
            "versus run wrote no {} (exit {:?})\nstdout:\n{}\nstderr:\n{}",
            report_path.display(),
            output.status.code(),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    };
    if output.status.code() != Some(0) {
        println!(
            "note: versus run exited with {:?} (0 = every criterion passed); stderr:\n{}",
            output.status.code(),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    (wall, serde_json::from_str(&text).unwrap())
}

/// Every run of a report as (task, model, latency_ms, workspace_ms, status).
fn report_runs(report: &Value) -> Vec<(String, String, f64, f64, String)> {
    let mut out = Vec::new();
    for task in report["tasks"].as_array().unwrap() {
        for run in task["runs"].as_array().unwrap() {
            out.push((
                task["name"].as_str().unwrap_or("").to_string(),
                run["model"].as_str().unwrap_or("").to_string(),
                run["latency_ms"].as_f64().unwrap_or(0.0),
                run["workspace_ms"].as_f64().unwrap_or(0.0),
                run["status"].as_str().unwrap_or("").to_string(),
            ));
        }
    }
    out
}

/// Words of a scale job's one answer.
const SCALE_WORDS: usize = 10;

/// `-- scale`: many instant jobs at `--jobs 16`; see the module's documentation.
fn scale(bin: &Path) {
    let total = env_usize("VERSUS_BENCH_SCALE_JOBS", 6000);
    let models = env_usize("VERSUS_BENCH_SCALE_MODELS", 16);
    let jobs = env_usize("VERSUS_BENCH_JOBS", 16);
    let delay_ms = env_usize("VERSUS_BENCH_DELAY_MS", 5) as u64;
    let runs = env_usize("VERSUS_BENCH_RUNS", 1);
    let tasks = total.div_ceil(models);
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let project = root.join("project");
    versus::example::write_project(&project).unwrap();
    let scripts_dir = root.join("scripts");
    std::fs::create_dir_all(&scripts_dir).unwrap();
    let words: Vec<String> = (1..=SCALE_WORDS).map(|w| format!("word{w}")).collect();
    let step = json!({"say": words.join(" "), "token_delay_ms": delay_ms});
    let per_job_pauses = pauses(std::slice::from_ref(&step));
    let mut text = String::from(
        "# Bench scale\nversion: 1\n\n## Constraints\ntimeout: 5m\nmax_steps: 5\n\n\
         ## Workspace\nisolation: in_memory\n\n## Models\n",
    );
    for m in 1..=models {
        let path = scripts_dir.join(format!("model-{m}.jsonl"));
        std::fs::write(&path, format!("{step}\n")).unwrap();
        text.push_str(&format!("- demo/{}\n", path.display()));
    }
    text.push_str("\n## Tasks\n");
    for t in 1..=tasks {
        text.push_str(&format!("- Answer question {t}.\n"));
    }
    text.push_str("\n## Success Criteria\n- no_errors\n");
    let recipe = root.join("scale.recipe.md");
    std::fs::write(&recipe, text).unwrap();

    let cells = tasks * models;
    let waves = cells.div_ceil(jobs.min(cells)) as u32;
    let per_job = Duration::from_millis(delay_ms) * per_job_pauses;
    let mut floors: Vec<f64> = (0..3)
        .map(|_| ms(timer_floor(per_job_pauses, Duration::from_millis(delay_ms))))
        .collect();
    let floor = Duration::from_secs_f64(median(&mut floors) / 1e3);
    let reference = floor * waves;
    println!(
        "versus run: {cells} jobs ({tasks} tasks x {models} demo models), --jobs {jobs}, one \
         answer of {SCALE_WORDS} words at {delay_ms} ms a word per job (scripted {:.0} ms, \
         {:.1} ms as tokio sleeps it); reference: {waves} waves of {jobs} jobs = {:.0} ms",
        ms(per_job),
        ms(floor),
        ms(reference)
    );
    let mut ratios = Vec::new();
    for i in 1..=runs {
        let out = root.join(format!("scale-{i}"));
        let (wall, report) = run_once(bin, &project, &recipe, &out, jobs);
        let all = report_runs(&report);
        assert_eq!(all.len(), cells, "one run per task and model");
        let passed = all.iter().filter(|r| r.4 == "passed").count();
        let mut latency: Vec<f64> = all.iter().map(|r| r.2 - ms(per_job)).collect();
        let ratio = (ms(wall) - ms(reference)) / ms(reference);
        ratios.push(ratio);
        println!(
            "run {i}: wall {:.0} ms for {cells} jobs ({passed} passed); scheduling overhead \
             {:.0} ms = {:.2}% of the scripted time (target < 5%); {:.2} ms per job; a job's \
             latency minus its scripted time, median {:.1} ms",
            ms(wall),
            ms(wall) - ms(reference),
            ratio * 100.0,
            (ms(wall) - ms(reference)) / cells as f64,
            median(&mut latency)
        );
    }
    println!(
        "ratio (wall / reference), median of {}: {:.3}",
        ratios.len(),
        1.0 + median(&mut ratios)
    );
}

fn main() {
    let bin = binary();
    if std::env::args().skip(1).any(|a| a == "scale") {
        scale(&bin);
        return;
    }
    let help = Command::new(&bin).args(["run", "--help"]).output();
    if !help.is_ok_and(|o| o.status.success()) {
        println!(
            "{} has no `run` command yet: build a versus with `versus run`, or point \
             VERSUS_BENCH_BIN at one",
            bin.display()
        );
        return;
    }
    let runs = env_usize("VERSUS_BENCH_RUNS", 3);
    let delay_ms = env_usize("VERSUS_BENCH_DELAY_MS", 50) as u64;
    let jobs = env_usize("VERSUS_BENCH_JOBS", 6);

    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let project = root.join("project");
    versus::example::write_project(&project).unwrap();
    let scripts_dir = root.join("scripts");
    std::fs::create_dir_all(&scripts_dir).unwrap();
    let mut scripts = Vec::new();
    let mut per_run_delay = Duration::ZERO;
    let mut per_run_pauses = 0;
    for m in 1..=MODELS {
        let steps = script_steps(m, delay_ms);
        per_run_pauses = pauses(&steps);
        per_run_delay = Duration::from_millis(delay_ms) * per_run_pauses;
        let text: String = steps.iter().map(|s| format!("{s}\n")).collect();
        let path = scripts_dir.join(format!("model-{m}.jsonl"));
        std::fs::write(&path, text).unwrap();
        scripts.push(path);
    }
    let recipe = root.join("bench.recipe.md");
    std::fs::write(&recipe, recipe_text(&scripts)).unwrap();

    // The bound no schedule can beat: every run's delay is the same.
    let total_delay = per_run_delay * (MODELS * TASKS) as u32;
    let longest_model = per_run_delay * TASKS as u32;
    let bound = (total_delay / jobs.min(MODELS * TASKS) as u32).max(longest_model);

    println!(
        "versus run: {TASKS} tasks x {MODELS} demo models, --jobs {jobs}, {delay_ms} ms per \
         word; scripted delay {:.0} ms per run, {:.0} ms in all; lower bound for the wall \
         time {:.0} ms; {runs} timed runs after a warm-up",
        ms(per_run_delay),
        ms(total_delay),
        ms(bound)
    );

    let mut walls = Vec::new();
    let mut unclean = 0;
    let mut all_walls = Vec::new();
    let mut run_overheads = Vec::new();
    let mut workspace_by_task: Vec<(String, Vec<f64>)> = Vec::new();
    let mut statuses = Vec::new();
    for i in 0..=runs {
        let out = root.join(format!("out-{i}"));
        let (wall, report) = run_once(&bin, &project, &recipe, &out, jobs);
        let all = report_runs(&report);
        assert_eq!(all.len(), MODELS * TASKS, "one run per task and model");
        for run in report["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|t| t["runs"].as_array().unwrap())
        {
            if run["status"] != "passed" {
                println!(
                    "note: {} on {} {}: {}",
                    run["model"], run["task"], run["status"], run["error"]
                );
            }
        }
        if i == 0 {
            println!("warm-up: {:.0} ms", ms(wall));
            continue;
        }
        // A run where some model failed or never ran finished early or late for reasons
        // that are not overhead (notes above say why); it is reported but not in the median.
        let clean = report["complete"] == true && all.iter().all(|r| r.4 == "passed");
        all_walls.push(ms(wall));
        if clean {
            walls.push(ms(wall));
        } else {
            unclean += 1;
        }
        println!(
            "run {i}: wall {:.0} ms, overhead {:.1}%{}",
            ms(wall),
            (ms(wall) - ms(bound)) / ms(bound) * 100.0,
            if clean {
                ""
            } else {
                " (not every run passed: left out of the median)"
            }
        );
        for (task, _model, latency, workspace, status) in all {
            if status == "not_run" {
                statuses.push(status);
                continue;
            }
            run_overheads.push(latency - ms(per_run_delay));
            statuses.push(status);
            match workspace_by_task.iter_mut().find(|(t, _)| *t == task) {
                Some((_, v)) => v.push(workspace),
                None => workspace_by_task.push((task, vec![workspace])),
            }
        }
    }

    let mut floors: Vec<f64> = (0..3)
        .map(|_| ms(timer_floor(per_run_pauses, Duration::from_millis(delay_ms))))
        .collect();
    let floor = Duration::from_secs_f64(median(&mut floors) / 1e3);
    if walls.is_empty() {
        println!("note: no clean run; the figures below use every run");
        walls = all_walls;
        unclean = 0;
    }
    let timed = walls.len();
    let wall = median(&mut walls);
    // The same bound with every pause as long as tokio really sleeps it.
    let waves = (MODELS * TASKS).div_ceil(jobs.min(MODELS * TASKS)) as u32;
    let bound_with_timer = floor * waves.max(TASKS as u32);
    println!();
    println!("| Figure | Value |");
    println!("|---|---|");
    println!("| Scripted delay per run | {:.0} ms |", ms(per_run_delay));
    println!(
        "| Lower bound for the wall time (3 runs' delay) | {:.0} ms |",
        ms(bound)
    );
    println!(
        "| Wall time of `versus run`, median of {timed} clean runs ({unclean} left out) | \
         {wall:.0} ms |"
    );
    println!(
        "| Overhead over the bound | {:.0} ms ({:.1}%, target < 10%) |",
        wall - ms(bound),
        (wall - ms(bound)) / ms(bound) * 100.0
    );
    println!(
        "| Overhead over the bound with the timer's rounding counted as delay ({:.0} ms) | \
         {:.0} ms ({:.1}%) |",
        ms(bound_with_timer),
        wall - ms(bound_with_timer),
        (wall - ms(bound_with_timer)) / ms(bound_with_timer) * 100.0
    );
    println!(
        "| Per run: latency minus scripted delay, median | {:.0} ms |",
        median(&mut run_overheads)
    );
    println!(
        "| of which the timer's rounding: the same {per_run_pauses} pauses slept by tokio \
         alone, minus their nominal {:.0} ms | {:.0} ms |",
        ms(per_run_delay),
        ms(floor) - ms(per_run_delay)
    );
    for (task, values) in &mut workspace_by_task {
        let max = values.iter().copied().fold(0.0, f64::max);
        println!(
            "| Workspace setup, task `{task}`: median / max over its runs | {:.0} / {:.0} ms |",
            median(values),
            max
        );
    }
    let passed = statuses.iter().filter(|s| *s == "passed").count();
    println!(
        "| Runs whose criteria all passed | {passed} of {} |",
        statuses.len()
    );
}
