//! versus: one prompt, several models, each in its own workspace; the user keeps the best change.
//!
//! This package is the binary (`src/main.rs`, thin glue from the command line to the crates,
//! errors to exit codes) and its headless front end, [`headless`] (`versus run`). Everything below
//! the front ends is `versus-core`, the interactive front end is `versus-tui`; both are re-exported
//! here under the names the binary, the tests and the benchmarks use. The core's internals (the
//! runner, the agent loop) are re-exported only with the `test-hooks` feature the package's own
//! tests and benches turn on, so `versus run` reaches a turn only through the engine's handle.

#[cfg(feature = "test-hooks")]
pub use versus_core::{agent, runner};
pub use versus_core::{
    apply, check, config, context, engine, example, exec, fsutil, jsonl, mcp, model, provider,
    recipe, review, sanitize, session, stats, tools, workspace,
};
pub use versus_tui as tui;

pub mod headless;
