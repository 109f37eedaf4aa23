//! OpenAI Responses API: `POST {base}/responses` with `stream: true` and `store: false`.
//!
//! Nothing is stored server-side, so every request carries the whole conversation as input
//! items, and reasoning survives between steps only as `encrypted_content` that OpenAI returns
//! because we ask for it (`include: ["reasoning.encrypted_content"]`). Those reasoning items
//! are kept unchanged in a [`crate::model::Replay`] tagged `openai-responses/MODEL` and sent
//! back only to that model; any other model's thinking is dropped.
//!
//! The decoder (`decode`) keys items by `output_index`, not item id: some servers (GitHub
//! Copilot) rotate item ids on every event. Shared rules with the Chat adapter (tool id
//! normalisation, argument sanitising, in-stream error classification) live in
//! `openai_chat::history` and `openai_chat::stream_error`.

pub(crate) mod decode;
pub(crate) mod items;
pub(crate) mod request;

use std::time::Duration;

use super::cache::prompt_cache_key;
use super::error::ProviderError;
use super::http::{Decoder, Wire, WireConfig, WireRequest, json_bytes};
use super::openai_chat::{classify_http, history};
use crate::model::{ModelRequest, replay_tag};

/// The API kind in replay tags (`openai-responses/MODEL`).
pub const API_KIND: &str = "openai-responses";

/// A [`Wire`] for the Responses API.
#[derive(Debug, Clone)]
pub struct ResponsesWire {
    config: WireConfig,
}

impl ResponsesWire {
    /// A wire for one provider; the base URL, key and extra headers come from `config`.
    pub fn new(config: WireConfig) -> Self {
        Self { config }
    }
}

impl Wire for ResponsesWire {
    fn config(&self) -> &WireConfig {
        &self.config
    }

    fn build(&self, request: &ModelRequest) -> Result<WireRequest, ProviderError> {
        let tag = replay_tag(API_KIND, &request.model);
        Ok(WireRequest {
            url: format!("{}/responses", self.config.base()),
            headers: history::auth_headers(&self.config),
            body: json_bytes(
                &self.config.provider,
                &request::body(request, &tag, self.config.vision)
                    .with_cache_key(prompt_cache_key(request)),
            )?,
        })
    }

    fn decoder(&self, request: &ModelRequest) -> Box<dyn Decoder> {
        Box::new(decode::ResponsesDecoder::new(
            &self.config.provider,
            &self.config.key_hint,
            replay_tag(API_KIND, &request.model),
        ))
    }

    fn classify(&self, status: u16, retry_after: Option<Duration>, body: &str) -> ProviderError {
        classify_http(&self.config, status, retry_after, body)
    }
}
