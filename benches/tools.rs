//! Tool benchmarks, each against a reference measured in the same run.
//!
//! `cargo bench --bench tools [-- search|read|edit|startup]`. Results are printed as a table with
//! medians and ratios; docs/benchmarks.md explains the method and records the latest run.
//! Environment: `VERSUS_BENCH_CORPUS` overrides the search corpus (default: the cargo registry
//! sources, tens of thousands of files); `VERSUS_BENCH_RUNS` the number of timed runs (default 5);
//! `VERSUS_BENCH_CASE` keeps only the search cases whose label contains it (for profiling one).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    missing_docs
)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use versus::tools::{ToolContext, ToolRegistry};
use versus::workspace::DirectView;

fn runs() -> usize {
    std::env::var("VERSUS_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn time<F: FnMut()>(mut f: F) -> Duration {
    f(); // warm-up (page cache, thread pools)
    median(
        (0..runs())
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed()
            })
            .collect(),
    )
}

/// Like [`time`], with an untimed `setup` before every run (e.g. restoring a file).
fn time_with_setup<S: FnMut(), F: FnMut()>(mut setup: S, mut f: F) -> Duration {
    setup();
    f();
    median(
        (0..runs())
            .map(|_| {
                setup();
                let t = Instant::now();
                f();
                t.elapsed()
            })
            .collect(),
    )
}

/// The release binary cargo built for this bench, for whole-command timings.
const VERSUS: &str = env!("CARGO_BIN_EXE_versus");

/// Runs a command with its output discarded; it must succeed.
fn run_quiet(cmd: &mut Command) {
    let status = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "{cmd:?} failed");
}

/// `versus tool NAME --args ARGS --dir DIR`.
fn versus_tool(name: &str, args: &serde_json::Value, dir: &Path) -> Command {
    let mut cmd = Command::new(VERSUS);
    cmd.args(["tool", name, "--args", &args.to_string(), "--dir"])
        .arg(dir);
    cmd
}

/// Runs `producer | head -n LINES` (output discarded), as a shell pipeline would: the producer
/// may stop early when head has its lines and closes the pipe.
fn piped_to_head(mut producer: Command, lines: usize) {
    let mut child = producer
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let out = child.stdout.take().unwrap();
    let head = Command::new("head")
        .arg("-n")
        .arg(lines.to_string())
        .stdin(out)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(head.success());
    child.wait().unwrap();
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

fn row(name: &str, ours: Duration, reference_name: &str, reference: Duration) {
    println!(
        "| {name} | {} | {reference_name} | {} | {:.2}x |",
        ms(ours),
        ms(reference),
        ours.as_secs_f64() / reference.as_secs_f64()
    );
}

fn ctx(root: &Path) -> ToolContext {
    ToolContext::new(Arc::new(DirectView::new(root).unwrap()))
}

fn call(
    rt: &tokio::runtime::Runtime,
    reg: &ToolRegistry,
    c: &ToolContext,
    tool: &str,
    args: &serde_json::Value,
) -> String {
    let out = rt.block_on(reg.dispatch(tool, &args.to_string(), c));
    assert!(!out.is_error, "{tool} failed: {}", out.text);
    out.text
}

fn corpus() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("VERSUS_BENCH_CORPUS") {
        return Some(PathBuf::from(p));
    }
    let home = std::env::var("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|_| std::env::var("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .ok()?;
    let src = home.join("registry/src");
    src.is_dir().then_some(src)
}

fn count_files(root: &Path) -> usize {
    ignore::WalkBuilder::new(root)
        .hidden(false)
        .require_git(false)
        .build()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .count()
}

fn bench_search(rt: &tokio::runtime::Runtime, reg: &ToolRegistry) {
    let Some(root) = corpus() else {
        println!("search: no corpus found (set VERSUS_BENCH_CORPUS)");
        return;
    };
    let root = root.canonicalize().unwrap();
    let rg = Command::new("rg").arg("--version").output().is_ok();
    println!(
        "\nsearch_code vs rg on {} ({} files)\n",
        root.display(),
        count_files(&root)
    );
    println!("| case | versus | reference | reference time | ratio |\n|---|---|---|---|---|");
    let c = ctx(&root);
    // (label, pattern, literal, ignore case, file glob)
    let cases = [
        ("literal", "frobnicate_the_widget_zyx", true, false, None),
        ("regex", r"fn\s+[a-z]+_zyxq\w*\(", false, false, None),
        (
            "literal, ignore case",
            "Frobnicate_The_Widget_zyx",
            true,
            true,
            None,
        ),
        (
            "literal, glob *.rs",
            "frobnicate_the_widget_zyx",
            true,
            false,
            Some("*.rs"),
        ),
        (
            "literal, glob *.toml",
            "frobnicate_the_widget_zyx",
            true,
            false,
            Some("*.toml"),
        ),
        (
            "regex, glob **/src/**/*.rs",
            r"fn\s+[a-z]+_zyxq\w*\(",
            false,
            false,
            Some("**/src/**/*.rs"),
        ),
    ];
    let only = std::env::var("VERSUS_BENCH_CASE").unwrap_or_default();
    for (label, pattern, literal, ignore_case, glob) in cases {
        if !label.contains(only.as_str()) {
            continue;
        }
        let mut args = json!({"pattern": pattern, "literal": literal, "ignore_case": ignore_case});
        if let Some(glob) = glob {
            args["file_glob"] = json!(glob);
        }
        let ours = time(|| {
            call(rt, reg, &c, "search_code", &args);
        });
        if rg {
            let reference = time(|| {
                let mut cmd = Command::new("rg");
                // Same semantics as search_code: .gitignore honoured outside git repos too,
                // hidden files searched, binary files skipped.
                cmd.args([
                    "--no-require-git",
                    "--hidden",
                    "-n",
                    "--no-heading",
                    "--color",
                    "never",
                ]);
                if literal {
                    cmd.arg("-F");
                }
                if ignore_case {
                    cmd.arg("-i");
                }
                if let Some(glob) = glob {
                    cmd.arg("-g").arg(glob);
                }
                cmd.arg("--").arg(pattern).arg(".").current_dir(&root);
                cmd.stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status()
                    .unwrap();
            });
            row(&format!("search_code {label}"), ours, "rg", reference);
        } else {
            println!(
                "| search_code {label} | {} | rg not installed | - | - |",
                ms(ours)
            );
        }
    }
    bench_capped_search(rt, reg, &c, &root, rg);
}

/// A pattern that matches in nearly every file, so the 100-match cap ends the search: versus
/// must give the first 100 matches in path order, the same on every run.
fn bench_capped_search(
    rt: &tokio::runtime::Runtime,
    reg: &ToolRegistry,
    c: &ToolContext,
    root: &Path,
    rg: bool,
) {
    let pattern = "the";
    let args = json!({"pattern": pattern, "literal": true});
    let mut outputs = std::collections::BTreeSet::new();
    let ours = time(|| {
        outputs.insert(call(rt, reg, c, "search_code", &args));
    });
    println!(
        "\ncapped search_code (literal `{pattern}`, 100-match cap): {} distinct result(s) over \
         {} runs\n",
        outputs.len(),
        runs() + 1
    );
    if !rg {
        println!("| case | versus | reference | reference time | ratio |\n|---|---|---|---|---|");
        println!(
            "| search_code capped | {} | rg not installed | - | - |",
            ms(ours)
        );
        return;
    }
    let rg_cmd = |sorted: bool| {
        let mut cmd = Command::new("rg");
        cmd.args([
            "--no-require-git",
            "--hidden",
            "-n",
            "--no-heading",
            "--color",
            "never",
            "-F",
        ]);
        if sorted {
            // Deterministic output in path order; rg then searches on one thread.
            cmd.args(["--sort", "path"]);
        }
        cmd.arg("--").arg(pattern).arg(".").current_dir(root);
        cmd
    };
    // The same first 100 `path:line` as rg in path order?
    let key = |text: &str| -> Vec<String> {
        text.lines()
            .take(100)
            .map(|l| {
                let l = l.strip_prefix("./").unwrap_or(l);
                l.splitn(3, ':').take(2).collect::<Vec<_>>().join(":")
            })
            .collect()
    };
    let rg_sorted = rg_cmd(true).output().unwrap().stdout;
    let ours_text = outputs.iter().next().cloned().unwrap_or_default();
    println!(
        "same first 100 path:line as `rg --sort path`: {}\n",
        if key(&ours_text) == key(&String::from_utf8_lossy(&rg_sorted)) {
            "yes"
        } else {
            "no"
        }
    );
    println!("| case | versus | reference | reference time | ratio |\n|---|---|---|---|---|");
    let parallel = time(|| piped_to_head(rg_cmd(false), 100));
    let sorted = time(|| piped_to_head(rg_cmd(true), 100));
    row(
        "search_code capped",
        ours,
        "rg, piped to head -n 100",
        parallel,
    );
    row(
        "search_code capped",
        ours,
        "rg --sort path, piped to head -n 100",
        sorted,
    );
}

fn bench_read(rt: &tokio::runtime::Runtime, reg: &ToolRegistry) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.log");
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        let line = format!(
            "{}\n",
            "2026-11-21T12:00:00Z INFO request served in 12 ms ".repeat(2)
        );
        let mut written = 0u64;
        while written < 1 << 30 {
            f.write_all(line.as_bytes()).unwrap();
            written += line.len() as u64;
        }
    }
    let c = ctx(dir.path());
    println!("\nread_file of lines 1-2000 of a 1 GB file\n");
    println!("| case | versus | reference | reference time | ratio |\n|---|---|---|---|---|");
    let args = json!({"path": "huge.log", "offset": 1, "limit": 2000});
    let ours = time(|| {
        call(rt, reg, &c, "read_file", &args);
    });
    let reference = time(|| {
        Command::new("head")
            .args(["-n", "2000"])
            .arg(&path)
            .stdout(Stdio::null())
            .status()
            .unwrap();
    });
    row("read_file 1-2000 of 1 GB", ours, "head -n 2000", reference);

    // Far into the file: every byte before the page must be read to count lines.
    let far = 5_000_000u64;
    let args = json!({"path": "huge.log", "offset": far, "limit": 2000});
    // The page stops at the output cap (50 KB) before 2000 lines; sed prints the same lines.
    let shown = call(rt, reg, &c, "read_file", &args);
    let ours_lines: Vec<&str> = shown
        .lines()
        .map_while(|l| l.split_once('\t').map(|(_, text)| text))
        .collect();
    let last = far + ours_lines.len() as u64 - 1;
    let sed = || {
        let mut cmd = Command::new("sed");
        cmd.arg("-n").arg(format!("{far},{last}p")).arg(&path);
        cmd
    };
    let sed_out = String::from_utf8(sed().output().unwrap().stdout).unwrap();
    assert_eq!(ours_lines, sed_out.lines().collect::<Vec<_>>());
    println!(
        "\nread_file of lines {far}-{last} of the same file: the process `versus tool read_file` \
         against the process `sed -n '{far},{last}p'`, and the library call\n"
    );
    println!("| case | versus | reference | reference time | ratio |\n|---|---|---|---|---|");
    let library = time(|| {
        call(rt, reg, &c, "read_file", &args);
    });
    let process = time(|| run_quiet(&mut versus_tool("read_file", &args, dir.path())));
    let reference = time(|| run_quiet(&mut sed()));
    row(
        "versus tool read_file (process)",
        process,
        "sed -n",
        reference,
    );
    row("read_file (library call)", library, "sed -n", reference);
}

/// Start-up of the binary: a tiny read through `versus tool` (where nearly all the time is
/// process start-up) against `head` on the same file, plus `versus --version` (parsing only).
/// Each sample spawns the command 20 times; the per-process time is reported.
fn bench_startup() {
    const SPAWNS: u32 = 20;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("small.txt");
    std::fs::write(&path, "one\ntwo\nthree\n").unwrap();
    let per_process = |mut make: Box<dyn FnMut() -> Command>| {
        time(|| {
            for _ in 0..SPAWNS {
                run_quiet(&mut make());
            }
        }) / SPAWNS
    };
    let args = json!({"path": "small.txt"});
    let d = dir.path().to_path_buf();
    let tool = per_process(Box::new(move || versus_tool("read_file", &args, &d)));
    let version = per_process(Box::new(|| {
        let mut cmd = Command::new(VERSUS);
        cmd.arg("--version");
        cmd
    }));
    let p = path.clone();
    let head = per_process(Box::new(move || {
        let mut cmd = Command::new("head");
        cmd.args(["-n", "2000"]).arg(&p);
        cmd
    }));
    println!("\nprocess start-up, per process ({SPAWNS} spawns per sample)\n");
    println!("| case | versus | reference | reference time | ratio |\n|---|---|---|---|---|");
    row("versus tool read_file, 3 lines", tool, "head -n 2000", head);
    row("versus --version", version, "head -n 2000", head);
}

fn bench_edit(rt: &tokio::runtime::Runtime, reg: &ToolRegistry) {
    let dir = tempfile::tempdir().unwrap();
    let mut content = String::new();
    let mut i = 0;
    while content.len() < 10 * 1024 * 1024 {
        content.push_str(&format!(
            "    let value_{i} = compute(\"item {i}\", {i});\n"
        ));
        i += 1;
    }
    let target = i - 10;
    let path = dir.path().join("big.rs");
    // A model's private workspace skips fsync (DirectView::scratch); `versus tool` on the
    // user's own folder syncs (DirectView::new). Both are measured.
    let scratch = ToolContext::new(Arc::new(DirectView::scratch(dir.path()).unwrap()));
    let synced = ctx(dir.path());
    println!("\nedit_file on a 10 MB file ({i} lines)\n");
    println!("| case | versus | reference | reference time | ratio |\n|---|---|---|---|---|");
    let exact_old = format!("    let value_{target} = compute(\"item {target}\", {target});");
    let exact =
        json!({"path": "big.rs", "old_string": exact_old, "new_string": "    let changed = 1;"});
    // Fuzzy: the model's copy has curly quotes and trailing spaces, so exact matching fails.
    let fuzzy_old =
        format!("    let value_{target} = compute(\u{201C}item {target}\u{201D}, {target});   ");
    let fuzzy =
        json!({"path": "big.rs", "old_string": fuzzy_old, "new_string": "    let changed = 2;"});
    let cases = [
        ("exact, workspace", &exact, &scratch),
        ("fuzzy, workspace", &fuzzy, &scratch),
        ("exact, fsync", &exact, &synced),
        ("fuzzy, fsync", &fuzzy, &synced),
    ];
    for (label, args, c) in cases {
        let restore = || std::fs::write(&path, &content).unwrap();
        let ours = time_with_setup(restore, || {
            call(rt, reg, c, "edit_file", args);
        });
        // Reference: the least work any edit needs: read the file, replace, write it back.
        let reference = time_with_setup(restore, || {
            let text = std::fs::read_to_string(&path).unwrap();
            let replaced = text.replacen(&exact_old, "    let changed = 1;", 1);
            std::fs::write(&path, replaced).unwrap();
        });
        row(
            &format!("edit_file {label}"),
            ours,
            "read+replacen+write",
            reference,
        );
    }
}

fn main() {
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let wants = |name: &str| filter.is_empty() || filter.iter().any(|f| name.contains(f.as_str()));
    let rt = tokio::runtime::Runtime::new().unwrap();
    let reg = ToolRegistry::builtin();
    println!(
        "versus tool benchmarks: median of {} runs after one warm-up",
        runs()
    );
    if wants("search") {
        bench_search(&rt, &reg);
    }
    if wants("read") {
        bench_read(&rt, &reg);
    }
    if wants("edit") {
        bench_edit(&rt, &reg);
    }
    if wants("startup") {
        bench_startup();
    }
}
