//! versus: one prompt, several models, each in its own workspace; the user keeps the best change.
//!
//! The library is layered so that every arrow points down (see docs/ARCHITECTURE.md):
//! `tools` act on a [`workspace::FileView`] and know nothing of providers or UI; the binary in
//! `src/main.rs` is thin glue that maps errors to exit codes.

pub mod agent;
pub mod apply;
pub mod check;
pub mod config;
pub mod engine;
pub mod example;
pub mod exec;
pub mod fsutil;
pub mod headless;
pub mod jsonl;
pub mod mcp;
pub mod model;
pub mod provider;
pub mod recipe;
pub mod review;
pub mod runner;
pub mod sanitize;
pub mod session;
pub mod stats;
pub mod tools;
pub mod tui;
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
