//! Tool benchmarks, each against a reference measured in the same run.
//!
//! `cargo bench --bench tools [-- search|read|edit]`. Results are printed as a table with
//! medians and ratios; docs/benchmarks.md explains the method and records the latest run.
//! Environment: `VERSUS_BENCH_CORPUS` overrides the search corpus (default: the cargo registry
//! sources, tens of thousands of files); `VERSUS_BENCH_RUNS` the number of timed runs (default 5).
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
    let cases = [
        ("literal", "frobnicate_the_widget_zyx", true),
        ("regex", r"fn\s+[a-z]+_zyxq\w*\(", false),
    ];
    for (label, pattern, literal) in cases {
        let args = json!({"pattern": pattern, "literal": literal});
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
}
