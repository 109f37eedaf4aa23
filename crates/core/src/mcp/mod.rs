//! MCP client: the servers a user (or a trusted project, or a recipe) configured, their tools
//! offered to every model of a run as `server__tool`, through the one tool registry so the
//! agent loop stays one loop.
//!
//! Built on the official Rust SDK (`rmcp`): versus asks for protocol revision 2026-07-28
//! (`server/discover`) and falls back to 2025-11-25 (`initialize`) with a server that does not
//! know it. What versus adds is where servers run and what happens when they fail:
//! - a stdio server runs once per model, started through [`crate::exec`] in that model's
//!   sandbox with its workspace as working folder, so whatever it writes is the model's
//!   proposal, seen by the change scan, and the user's tree is never touched; a server marked
//!   `shared` runs once per run, in the sandbox with the project read-only; an HTTP server is
//!   one session per run;
//! - start, list and call each have a time limit, a call follows the model's cancellation, a
//!   server that died is restarted once and then reported, a tool whose schema no provider
//!   would take is left out with the reason, and none of it fails a run.

mod client;
mod schema;
mod set;
mod spec;
mod tool;

pub use client::{FALLBACK_PROTOCOL, PREFERRED_PROTOCOL, Place, Server, ServerError};
pub use set::{McpPlan, ModelServers, ServerReport, inspect, plan, plan_of};
pub use spec::{
    DEFAULT_STARTUP_TIMEOUT, DEFAULT_TOOL_TIMEOUT, ServerSpec, Transport, from_config, merge,
};
