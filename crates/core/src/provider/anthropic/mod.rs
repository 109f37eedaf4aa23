//! Anthropic Messages adapter (`POST {base}/v1/messages`, streamed).
//!
//! Split in two halves that share nothing but the replay tag: `request` turns the canonical
//! conversation into a Messages body (merging same-role turns, gathering a turn's tool results
//! into one user message, replaying signed thinking only to the model that produced it), and
//! `decode` rebuilds the assistant message from the content-block events. Errors that arrive
//! inside a 200 stream (`event: error`) are classified here, next to the HTTP ones, so an
//! `overloaded_error` is retryable whether it comes as a 529 or mid-stream.

mod decode;
pub(crate) mod request;

use std::time::Duration;

use serde_json::Value;

use super::error::{
    ProviderError, classify_status, error_message_from_body, looks_like_context_overflow,
};
use super::http::{Decoder, Wire, WireConfig, WireRequest, json_bytes};
use crate::model::{ModelRequest, replay_tag};

/// The API kind in replay tags: thinking signatures go back only to `anthropic/<same model>`.
const API_KIND: &str = "anthropic";

/// The API version header every request carries.
const API_VERSION: &str = "2023-06-01";

/// The Anthropic Messages API as a [`Wire`]: also serves Anthropic-compatible gateways through
/// a configured base URL.
#[derive(Debug, Clone)]
pub struct AnthropicWire {
    config: WireConfig,
}

impl AnthropicWire {
    /// A wire for one configured provider. Empty names fall back to `anthropic` and
    /// `ANTHROPIC_API_KEY`, so error messages always name something the user can act on.
    pub fn new(config: WireConfig) -> Self {
        Self {
            config: config.or_defaults("anthropic", "ANTHROPIC_API_KEY"),
        }
    }
}

impl Wire for AnthropicWire {
    fn config(&self) -> &WireConfig {
        &self.config
    }

    fn build(&self, request: &ModelRequest) -> Result<WireRequest, ProviderError> {
        let mut headers = Vec::with_capacity(self.config.headers.len() + 2);
        if let Some(key) = &self.config.api_key {
            headers.push(("x-api-key".to_string(), key.clone()));
        }
        headers.push(("anthropic-version".to_string(), API_VERSION.to_string()));
        headers.extend(self.config.headers.iter().cloned());
        Ok(WireRequest {
            url: format!("{}/v1/messages", self.config.base()),
            headers,
            body: json_bytes(
                &self.config.provider,
                &request::cached(request::body(
                    request,
                    &replay_tag(API_KIND, &request.model),
                    self.config.vision,
                )),
            )?,
        })
    }

    fn decoder(&self, request: &ModelRequest) -> Box<dyn Decoder> {
        Box::new(decode::AnthropicDecoder::new(
            self.config.provider.clone(),
            self.config.key_hint.clone(),
            replay_tag(API_KIND, &request.model),
        ))
    }

    fn classify(&self, status: u16, retry_after: Option<Duration>, body: &str) -> ProviderError {
        let message = error_message_from_body(body);
        // Anthropic reports overload as 529, but gateways pass `overloaded_error` on with other
        // statuses; it is always worth another try.
        if status != 429 && message.contains("overloaded_error") {
            return ProviderError::Server {
                provider: self.config.provider.clone(),
                status,
                message,
                retry_after,
            };
        }
        classify_status(
            &self.config.provider,
            status,
            message,
            retry_after,
            &self.config.key_hint,
        )
    }
}

/// The error for an `{"type":"error","error":{"type":..,"message":..}}` event inside a 200
/// stream, classified by its type the way the HTTP statuses would be.
pub(crate) fn stream_error(provider: &str, key_hint: &str, event: &Value) -> ProviderError {
    let error = event.get("error").unwrap_or(event);
    let kind = error.get("type").and_then(Value::as_str).unwrap_or("error");
    let detail = error
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("(no message)");
    let message = format!("{kind}: {detail}");
    let provider = provider.to_string();
    match kind {
        "overloaded_error" | "api_error" => ProviderError::Server {
            provider,
            status: 0,
            message,
            retry_after: None,
        },
        "rate_limit_error" => ProviderError::RateLimited {
            provider,
            message,
            retry_after: None,
        },
        "authentication_error" | "permission_error" => ProviderError::Auth {
            provider,
            status: if kind == "authentication_error" {
                401
            } else {
                403
            },
            message,
            hint: key_hint.to_string(),
        },
        "request_too_large" => ProviderError::ContextOverflow { provider, message },
        _ if looks_like_context_overflow(&message) => {
            ProviderError::ContextOverflow { provider, message }
        }
        _ => ProviderError::Stream { provider, message },
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn wire() -> AnthropicWire {
        AnthropicWire::new(WireConfig {
            provider: String::new(),
            base_url: "https://api.example.test/".into(),
            api_key: Some("sk-ant-secret-value".into()),
            key_hint: String::new(),
            base_hint: String::new(),
            headers: vec![("anthropic-beta".into(), "feature-x".into())],
            vision: true,
        })
    }

    #[test]
    fn request_goes_to_messages_with_key_version_and_extra_headers() {
        let request = ModelRequest {
            model: "claude-sonnet-4-5".into(),
            system: "".into(),
            messages: vec![crate::model::Message::user("hi")].into(),
            tools: vec![].into(),
            max_output_tokens: None,
            temperature: None,
            reasoning: Default::default(),
            seed: None,
        };
        let built = wire().build(&request).unwrap();
        assert_eq!(built.url, "https://api.example.test/v1/messages");
        let header = |name: &str| {
            built
                .headers
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(header("x-api-key"), Some("sk-ant-secret-value"));
        assert_eq!(header("anthropic-version"), Some("2023-06-01"));
        assert_eq!(header("anthropic-beta"), Some("feature-x"));
        assert_eq!(wire().provider(), "anthropic");
        assert_eq!(wire().key_hint(), "ANTHROPIC_API_KEY");
        assert_eq!(wire().secrets(), vec!["sk-ant-secret-value".to_string()]);
    }

    #[test]
    fn http_errors_overloaded_is_retryable_and_overflow_recognised() {
        let w = wire();
        let overloaded =
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        assert!(w.classify(529, None, overloaded).is_retryable());
        assert!(w.classify(400, None, overloaded).is_retryable());
        let long = r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208000 tokens > 200000 maximum"}}"#;
        assert!(w.classify(400, None, long).is_context_overflow());
        let auth = w.classify(
            401,
            None,
            r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#,
        );
        assert!(matches!(auth, ProviderError::Auth { .. }));
        assert!(auth.to_string().contains("ANTHROPIC_API_KEY"));
    }

    #[test]
    fn stream_errors_are_classified_by_type() {
        let e = |kind: &str, message: &str| {
            stream_error(
                "anthropic",
                "ANTHROPIC_API_KEY",
                &json!({"type": "error", "error": {"type": kind, "message": message}}),
            )
        };
        assert!(matches!(
            e("overloaded_error", "Overloaded"),
            ProviderError::Server { status: 0, .. }
        ));
        assert!(e("api_error", "Internal").is_retryable());
        assert!(matches!(
            e("rate_limit_error", "slow down"),
            ProviderError::RateLimited { .. }
        ));
        assert!(e("invalid_request_error", "prompt is too long: 1 > 0").is_context_overflow());
        assert!(e("request_too_large", "too big").is_context_overflow());
        let other = e("invalid_request_error", "bad block");
        assert!(matches!(other, ProviderError::Stream { .. }));
        assert!(!other.is_retryable());
        assert!(matches!(
            e("authentication_error", "revoked"),
            ProviderError::Auth { status: 401, .. }
        ));
    }
}
