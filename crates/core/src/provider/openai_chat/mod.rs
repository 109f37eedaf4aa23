//! OpenAI Chat Completions: the format spoken by OpenAI (when chat is selected), OpenRouter,
//! Ollama's `/v1` endpoint and most OpenAI-compatible servers (vLLM, LM Studio, llama.cpp,
//! LiteLLM, Azure, DeepSeek, xAI, Groq, Mistral...).
//!
//! Because one format serves so many servers, the decoder is written against what servers
//! *send*, not what the reference says: tool-call deltas are accumulated with repairs for
//! missing or repeated `index` values (`calls`), thinking arrives under three different names,
//! usage is normalised so `input` means uncached input, and errors inside the 200 stream are
//! classified like HTTP errors (`stream_error`). The few provider differences in the request
//! (token cap field, reasoning parameter, which reasoning fields may be echoed back) are decided
//! from the provider name in `request`.
//!
//! Replay: thinking and tool calls this adapter decodes carry a [`crate::model::Replay`] tagged
//! `openai-chat/MODEL`; `history` uses the tag to send reasoning back only to the same model
//! and to normalise tool ids that came from another provider. The Responses adapter shares
//! `history` and `stream_error`.

mod body_cache;
pub(crate) mod calls;
pub(crate) mod decode;
pub(crate) mod history;
pub(crate) mod request;
pub(crate) mod stream_error;

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use super::error::{ProviderError, classify_status, error_message_from_body};
use super::http::{Decoder, Wire, WireConfig, WireRequest};
use crate::model::{ModelRequest, replay_tag};
use body_cache::BodyCache;

/// The API kind in replay tags (`openai-chat/MODEL`).
pub const API_KIND: &str = "openai-chat";

/// A [`Wire`] for `POST {base}/chat/completions` with `stream: true`.
///
/// One wire serves one model's conversation: it keeps the JSON of the messages it sent, so the
/// next step encodes only what was added (see `body_cache`).
#[derive(Debug)]
pub struct ChatWire {
    config: WireConfig,
    cache: Mutex<BodyCache>,
}

impl ChatWire {
    /// A wire for one provider; the base URL, key and extra headers come from `config`.
    pub fn new(config: WireConfig) -> Self {
        Self {
            config,
            cache: Mutex::default(),
        }
    }
}

impl Clone for ChatWire {
    /// The same provider, with nothing cached.
    fn clone(&self) -> Self {
        Self::new(self.config.clone())
    }
}

impl Wire for ChatWire {
    fn config(&self) -> &WireConfig {
        &self.config
    }

    fn build(&self, request: &ModelRequest) -> Result<WireRequest, ProviderError> {
        let tag = replay_tag(API_KIND, &request.model);
        Ok(WireRequest {
            url: format!("{}/chat/completions", self.config.base()),
            headers: history::auth_headers(&self.config),
            body: {
                // A panic while encoding leaves at worst a cache that is rebuilt: keep going.
                let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
                request::encode(&self.config, request, &tag, &mut cache).map_err(|err| {
                    ProviderError::Config {
                        provider: self.config.provider.clone(),
                        message: format!("could not encode the request: {err}"),
                    }
                })?
            },
        })
    }

    fn decoder(&self, request: &ModelRequest) -> Box<dyn Decoder> {
        Box::new(decode::ChatDecoder::new(
            &self.config.provider,
            &self.config.key_hint,
            replay_tag(API_KIND, &request.model),
        ))
    }

    fn classify(&self, status: u16, retry_after: Option<Duration>, body: &str) -> ProviderError {
        classify_http(&self.config, status, retry_after, body)
    }
}

/// The error for a non-2xx answer: the shared classification, plus OpenAI's
/// `code: "context_length_exceeded"` (its message does not always say "context").
pub(crate) fn classify_http(
    config: &WireConfig,
    status: u16,
    retry_after: Option<Duration>,
    body: &str,
) -> ProviderError {
    let message = error_message_from_body(body);
    if (400..500).contains(&status) && stream_error::body_says_overflow(body) {
        return ProviderError::ContextOverflow {
            provider: config.provider.clone(),
            message,
        };
    }
    classify_status(
        &config.provider,
        status,
        message,
        retry_after,
        &config.key_hint,
    )
}
