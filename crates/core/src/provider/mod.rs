//! Talking to models: one transport ([`http`]) with retries, SSE framing and redaction, and one
//! thin format module per API. Adapters only translate the canonical conversation
//! ([`crate::model`]) to a wire body and decode events back; the agent loop does the rest.

pub mod anthropic;
pub mod azure;
pub mod bedrock;
pub(crate) mod cache;
pub(crate) mod calls;
pub mod client;
pub mod debug_log;
pub mod demo;
pub mod error;
pub mod gemini;
pub mod http;
pub mod ids;
pub mod openai_chat;
pub mod openai_responses;
pub mod redact;
pub mod sse;
#[cfg(test)]
mod test_corpus;
#[cfg(test)]
mod test_pictures;
pub mod vertex;
pub(crate) mod vision;

pub use client::{EventStream, ModelClient};
pub use error::ProviderError;
pub use http::{BodyFraming, Decoder, Flow, HttpModel, RetryPolicy, Wire, WireConfig, WireRequest};
