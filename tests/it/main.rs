//! The integration tests, as one test binary (`cargo test --test it`): one module per area,
//! sharing `util` (a temp project, the real binary, the mock HTTP server).
//!
//! One binary instead of one per file because every test binary links the whole library and
//! its dependencies again: with ~35 of them, linking dominated the build of `cargo test` after
//! any change to the library (docs/benchmarks.md, "Build times"). The cost of sharing one
//! process: tests of different modules run side by side in it, so nothing may change process-wide
//! state (environment, current directory, signal handlers) and anything named after
//! `std::process::id()` (sleep markers, sockets) needs a prefix of its own per module.
//!
//! To add tests: a file `tests/it/NAME.rs` and a line `mod NAME;` below (kept sorted). Run one
//! module with `cargo test --test it NAME::`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod agent_loop;
mod allowlist_corpus;
mod apply_crash;
mod apply_lock;
mod apply_modes;
mod apply_rewind;
mod architecture;
mod ask_cli;
mod ask_cloud;
mod ask_providers;
mod ask_wire;
mod boundary;
mod changeset_compose;
mod config_models;
mod context;
mod e2e_tui;
mod engine;
mod first_hour;
mod foreign_state;
mod hostile_checkout;
mod mcp;
mod models_remote;
mod output_safety;
mod pick_cli;
mod provider_anthropic;
mod provider_bedrock;
mod provider_defaults;
mod provider_gemini;
mod provider_loops;
mod provider_openai_chat;
mod provider_openai_responses;
mod provider_vertex;
mod recipe;
mod record_files;
mod redteam_model;
mod run_recipe;
mod sandbox;
mod sandbox_boundary;
mod sandbox_dev;
mod sandbox_state;
mod stats;
mod sub_agents;
mod tool_apply_patch;
mod tool_bash;
mod tool_edit_file;
mod tool_parallel;
mod tool_read_file;
mod tool_results;
mod tool_search;
mod tool_web_fetch;
mod tool_web_search;
mod tool_write_file;
mod torn_logs;
mod trust;
mod tui_compare;
mod tui_keymap;
mod tui_labels;
mod tui_review;
mod tui_snapshots;
mod tui_update;
mod tui_widgets;
mod util;
mod workspace_cache;
mod workspace_cow;
mod workspace_modes;
