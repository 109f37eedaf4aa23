//! The boundary the compiler holds: built the way users get it (no `internals` feature), the
//! core crate lets a front end submit to the engine, and refuses to let it name the runner, the
//! agent loop, workspace creation or the apply engine.
//!
//! `cargo test` builds the core with its internals public (its own tests and the workspace's
//! need them), so this test runs a second `cargo check` of the workspace's crates, as
//! `cargo build` and `cargo install` compile them, in a target folder of its own under
//! `target/tmp` (kept between runs: only the first run checks the dependencies). It needs the
//! dependencies already downloaded (`--offline`), which building this test did.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::util;

/// The workspace's root folder.
fn workspace() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `cargo check --offline` with `args`, in this test's own target folder, without the
/// variables the outer cargo set for this test that would leak into the inner one.
fn cargo_check(manifest: &Path, args: &[&str]) -> Output {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let target: PathBuf = Path::new(env!("CARGO_TARGET_TMPDIR")).join("boundary");
    let mut command = Command::new(cargo);
    command
        .arg("check")
        .arg("--offline")
        .arg("--quiet")
        .arg("--manifest-path")
        .arg(manifest)
        .args(args)
        .env("CARGO_TARGET_DIR", target)
        .env("CARGO_TERM_COLOR", "never")
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS");
    command.output().unwrap()
}

/// The crates as users build them: the TUI, `versus run` and the binary reach everything they
/// need through the engine, so they compile with the core's internals private.
#[test]
fn the_front_ends_compile_without_the_cores_internals() {
    let out = cargo_check(&workspace().join("Cargo.toml"), &["--workspace"]);
    assert!(
        out.status.success(),
        "the front ends do not compile against the core as users build it:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A front end that reaches past the engine, written as a crate of its own on the core as users
/// build it: each name is refused by the compiler as private, while the engine's handle, named
/// in the same file, is not.
#[test]
fn a_front_end_naming_the_runner_agent_loop_workspaces_or_apply_engine_does_not_compile() {
    let dir = util::Dir::new();
    let core = workspace().join("crates/core");
    dir.write(
        "Cargo.toml",
        format!(
            "[package]\nname = \"reaching-front-end\"\nversion = \"0.0.0\"\nedition = \"2024\"\n\n\
             [dependencies]\nversus-core = {{ path = {:?} }}\n\n[workspace]\n",
            core.to_str().unwrap()
        ),
    );
    // The same versions the workspace builds with, so the check reuses its dependencies.
    std::fs::copy(
        workspace().join("Cargo.lock"),
        dir.path().join("Cargo.lock"),
    )
    .unwrap();
    dir.write(
        "src/lib.rs",
        "pub use versus_core::engine::{EngineHandle, Op, SessionEngine};\n\
         pub use versus_core::runner::fan_out_each;\n\
         pub use versus_core::agent::Agent;\n\
         pub use versus_core::workspace::Workspace;\n\
         pub use versus_core::apply::ApplyEngine;\n\
         pub use versus_core::apply::engine::ApplyEngine as Again;\n",
    );
    let out = cargo_check(&dir.path().join("Cargo.toml"), &[]);
    let errors = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "it compiled:\n{errors}");
    for refused in [
        "module `runner` is private",
        "module `agent` is private",
        "struct `Workspace` is private",
        "struct `ApplyEngine` is private",
        "module `engine` is private",
    ] {
        assert!(errors.contains(refused), "not refused: {refused}\n{errors}");
    }
    assert!(
        !errors.contains("`EngineHandle`") && !errors.contains("`SessionEngine`"),
        "the engine's handle was refused too:\n{errors}"
    );
}
