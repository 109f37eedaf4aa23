//! versus-core: everything of versus below its front ends.
//!
//! The crate is layered so that every arrow points down (see docs/ARCHITECTURE.md): `tools` act on
//! a [`workspace::FileView`] and know nothing of providers or UI, and [`engine`] is the one place a
//! turn is run. Front ends (the TUI crate, `versus run` and the binary's commands) submit
//! operations to the engine's handle and render its events. What only the engine may drive, the
//! runner, the agent loop, workspace creation and the apply engine, is private to this crate
//! unless the `internals` feature is on, which only the workspace's own tests and benches turn on:
//! a front end that names them does not compile.

/// Declares a module or a re-export that only this crate may name: public with the `internals`
/// feature (the workspace's own tests and benches), private to the crate otherwise. The runner,
/// the agent loop, workspace creation and the apply engine are declared this way, so a front end
/// that tries to drive them itself instead of submitting to the engine does not compile.
macro_rules! internal {
    ($(#[$attr:meta])* mod $name:ident;) => {
        $(#[$attr])*
        #[cfg(feature = "internals")]
        pub mod $name;
        $(#[$attr])*
        #[cfg(not(feature = "internals"))]
        pub(crate) mod $name;
    };
    (use $($path:tt)*) => {
        #[cfg(feature = "internals")]
        pub use $($path)*
        #[cfg(not(feature = "internals"))]
        pub(crate) use $($path)*
    };
}

internal! {
    /// The agent loop (one per model and turn), driven only by the runner.
    mod agent;
}
pub mod apply;
pub mod check;
pub mod config;
pub mod context;
pub mod engine;
pub mod example;
pub mod exec;
pub mod fsutil;
pub mod jsonl;
pub mod mcp;
pub mod model;
pub mod provider;
pub mod recipe;
pub mod review;
internal! {
    /// The fan-out of a turn's models into their workspaces, driven only by the engine.
    mod runner;
}
pub mod sanitize;
pub mod session;
pub mod stats;
pub mod tools;
pub mod workspace;

/// The allocator of every program built on this library: the binary, its benchmarks and its
/// tests, so that what is measured is what users run. With sixteen models on two cores the
/// harness allocates from many threads at once (workers, tool threads, the recorder); glibc's
/// malloc spent 11% of the harness's CPU per step in its arenas. mimalloc's thread-local heaps
/// cut the CPU per step by about a tenth, built without transparent huge pages: with them,
/// peak memory of a 16-model run went from 24 to 100-125 MB and zeroing the huge pages cost more
/// CPU than the allocator saved (docs/benchmarks.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
