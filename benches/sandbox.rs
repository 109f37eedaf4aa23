//! The sandbox's cost, each against the same work unconfined in the same run.
//!
//! `cargo bench --bench sandbox`: (1) `true` through the one command runner, sandboxed vs
//! `sandbox = "off"`, alternating, median per call; (2) `cargo test` of the demo project
//! (written to a temp folder, built once first so both sides measure the same warm build),
//! warm and after touching a source file (the crate recompiles, as after a model's edit).
//! `VERSUS_BENCH_RUNS` sets the number of timed runs (default 200 for `true`, 5 for cargo).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    missing_docs
)]

use std::path::Path;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;
use versus::exec::{CommandSpec, Sandbox, SandboxMode, SandboxSettings, WorkspaceDirs};

fn runs(default: usize) -> usize {
    std::env::var("VERSUS_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Runs `script` once and returns its time; a non-zero exit fails the benchmark with the
/// output, so a row can never measure a command that did not do its work.
async fn once(script: &str, dir: &Path, sandbox: &Sandbox) -> Duration {
    let cancel = CancellationToken::new();
    let mut output = Vec::new();
    let started = Instant::now();
    let finished = versus::exec::run(
        CommandSpec {
            script,
            cwd: dir,
            sandbox,
            timeout: Duration::from_secs(600),
            cancel: &cancel,
        },
        |chunk| output.extend_from_slice(chunk),
    )
    .await
    .unwrap();
    let elapsed = started.elapsed();
    assert_eq!(
        finished.ending,
        versus::exec::Ending::Exited(0),
        "{script}:\n{}",
        String::from_utf8_lossy(&output)
    );
    elapsed
}

async fn compare(name: &str, script: &str, dir: &Path, n: usize) {
    let on = Sandbox::new(&SandboxSettings::default(), WorkspaceDirs::tree_only(dir));
    let off = Sandbox::new(
        &SandboxSettings {
            sandbox: SandboxMode::Off,
            ..SandboxSettings::default()
        },
        WorkspaceDirs::tree_only(dir),
    );
    once(script, dir, &on).await;
    once(script, dir, &off).await;
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..n {
        a.push(once(script, dir, &on).await);
        b.push(once(script, dir, &off).await);
    }
    let (a, b) = (median(a), median(b));
    println!(
        "{name:<28} sandbox {:>9.2} ms   unconfined {:>9.2} ms   overhead {:>7.2} ms   ratio {:.3}",
        a.as_secs_f64() * 1e3,
        b.as_secs_f64() * 1e3,
        (a.as_secs_f64() - b.as_secs_f64()) * 1e3,
        a.as_secs_f64() / b.as_secs_f64()
    );
}

fn main() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    versus::example::write_project(dir.path()).unwrap();
    runtime.block_on(async {
        compare("bash true (per call)", "true", dir.path(), runs(200)).await;
        // The demo project's test fails on purpose (the demo models fix it), so the bench runs
        // the passing ones; the warm-up builds once (inside the sandbox, to the same target/),
        // then both sides time warm test runs that compile and run the same binary.
        compare(
            "cargo test, demo project",
            "cargo test -q --offline -- --skip ten_items_get_the_bulk_discount",
            dir.path(),
            runs(5),
        )
        .await;
        // What a model really does: edit a source file, then test (the crate recompiles).
        compare(
            "edit + cargo test, demo",
            "touch src/lib.rs && cargo test -q --offline -- --skip ten_items_get_the_bulk_discount",
            dir.path(),
            runs(5),
        )
        .await;
    });
}
