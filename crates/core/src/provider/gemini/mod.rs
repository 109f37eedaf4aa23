//! Gemini adapter (`POST {base}/v1beta/models/{model}:streamGenerateContent?alt=sse`).
//!
//! Four small parts: `request` builds `contents` (roles `user`/`model`, function calls and
//! responses, thought signatures kept on the part they came with and replayed only to the same
//! model), `schema` cuts tool schemas down to the OpenAPI subset Gemini accepts, `decode`
//! rebuilds the answer from the candidate chunks (including Vertex's streamed function-call
//! arguments, assembled by `args`), and this module owns the HTTP side: the key travels in
//! the `x-goog-api-key` header, never in the URL, and Google's error bodies are read for what
//! the status alone does not say (`RetryInfo.retryDelay`, an invalid key reported as 400).

mod args;
mod decode;
mod request;
mod schema;

use std::time::Duration;

use serde_json::Value;

use super::error::{ProviderError, classify_status, error_message_from_body};
use super::http::{Decoder, Wire, WireConfig, WireRequest, json_bytes};
use crate::model::{ModelRequest, replay_tag};

/// The API kind in replay tags: thought signatures go back only to `gemini/<same model>`.
const API_KIND: &str = "gemini";

/// The Gemini API (or a compatible endpoint) as a [`Wire`].
#[derive(Debug, Clone)]
pub struct GeminiWire {
    config: WireConfig,
}

impl GeminiWire {
    /// A wire for one configured provider. Empty names fall back to `gemini` and
    /// `GEMINI_API_KEY`, so error messages always name something the user can act on.
    pub fn new(config: WireConfig) -> Self {
        Self {
            config: config.or_defaults("gemini", "GEMINI_API_KEY"),
        }
    }
}

impl Wire for GeminiWire {
    fn config(&self) -> &WireConfig {
        &self.config
    }

    fn build(&self, request: &ModelRequest) -> Result<WireRequest, ProviderError> {
        // Users copy names from Google's model list, which spells them `models/...`.
        let model = request.model.trim_start_matches("models/");
        if model.is_empty() || model.contains(['/', '?', '#', ' ']) {
            return Err(ProviderError::Config {
                provider: self.config.provider.clone(),
                message: format!(
                    "`{}` is not a Gemini model name; use a name like `gemini-2.5-pro`",
                    request.model
                ),
            });
        }
        let mut headers = Vec::with_capacity(self.config.headers.len() + 1);
        if let Some(key) = &self.config.api_key {
            headers.push(("x-goog-api-key".to_string(), key.clone()));
        }
        headers.extend(self.config.headers.iter().cloned());
        Ok(WireRequest {
            url: format!(
                "{}/v1beta/models/{model}:streamGenerateContent?alt=sse",
                self.config.base()
            ),
            headers,
            body: json_bytes(
                &self.config.provider,
                &request::body(
                    request,
                    &replay_tag(API_KIND, &request.model),
                    self.config.vision,
                ),
            )?,
        })
    }

    fn decoder(&self, request: &ModelRequest) -> Box<dyn Decoder> {
        Box::new(decode::GeminiDecoder::new(
            self.config.provider.clone(),
            self.config.key_hint.clone(),
            replay_tag(API_KIND, &request.model),
        ))
    }

    fn classify(&self, status: u16, retry_after: Option<Duration>, body: &str) -> ProviderError {
        let value: Value = serde_json::from_str(body).unwrap_or(Value::Null);
        api_error(
            &self.config.provider,
            &self.config.key_hint,
            status,
            retry_after,
            &value,
            error_message_from_body(body),
        )
    }
}

/// Classifies a Google error (`{"error":{"code","message","status","details"}}`, or a list of
/// them) from an HTTP answer or from inside the stream (`status` 0: taken from the body).
pub(crate) fn api_error(
    provider: &str,
    key_hint: &str,
    status: u16,
    retry_after: Option<Duration>,
    body: &Value,
    message: String,
) -> ProviderError {
    let error = match body {
        Value::Array(items) => items.first().unwrap_or(&Value::Null),
        other => other,
    };
    let error = error.get("error").unwrap_or(error);
    let status = if status != 0 {
        status
    } else {
        match status_of(error) {
            Some(status) => status,
            None => {
                return ProviderError::Stream {
                    provider: provider.to_string(),
                    message,
                };
            }
        }
    };
    // Google answers a wrong key with 400 INVALID_ARGUMENT, not 401.
    let invalid_key = error.to_string().contains("API_KEY_INVALID")
        || message.contains("API key not valid")
        || message.contains("API key expired");
    let status = if status == 400 && invalid_key {
        401
    } else {
        status
    };
    let retry_after = retry_after.or_else(|| retry_delay(error));
    classify_status(provider, status, message, retry_after, key_hint)
}

/// The HTTP status an error object stands for: its `code`, else its gRPC `status` name.
fn status_of(error: &Value) -> Option<u16> {
    if let Some(code) = error
        .get("code")
        .and_then(Value::as_u64)
        .and_then(|c| u16::try_from(c).ok())
        .filter(|c| (400..600).contains(c))
    {
        return Some(code);
    }
    let status = match error.get("status").and_then(Value::as_str)? {
        "INVALID_ARGUMENT" | "FAILED_PRECONDITION" | "OUT_OF_RANGE" => 400,
        "UNAUTHENTICATED" => 401,
        "PERMISSION_DENIED" => 403,
        "NOT_FOUND" => 404,
        "RESOURCE_EXHAUSTED" => 429,
        "INTERNAL" | "UNKNOWN" | "DATA_LOSS" => 500,
        "UNAVAILABLE" => 503,
        "DEADLINE_EXCEEDED" => 504,
        _ => return None,
    };
    Some(status)
}

/// `RetryInfo.retryDelay` (`"34.4s"`) from an error's `details`.
fn retry_delay(error: &Value) -> Option<Duration> {
    error
        .get("details")?
        .as_array()?
        .iter()
        .filter(|detail| {
            detail
                .get("@type")
                .and_then(Value::as_str)
                .is_some_and(|t| t.ends_with("google.rpc.RetryInfo"))
        })
        .find_map(|detail| {
            let text = detail.get("retryDelay")?.as_str()?;
            let seconds: f64 = text.trim().strip_suffix('s')?.parse().ok()?;
            (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds))
        })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::model::Message;

    fn wire() -> GeminiWire {
        GeminiWire::new(WireConfig {
            provider: String::new(),
            base_url: "https://generativelanguage.example.test/".into(),
            api_key: Some("AIza-secret-key".into()),
            key_hint: String::new(),
            base_hint: String::new(),
            headers: vec![],
            vision: true,
        })
    }

    fn request(model: &str) -> ModelRequest {
        ModelRequest {
            model: model.into(),
            system: "".into(),
            messages: vec![Message::user("hi")].into(),
            tools: vec![].into(),
            max_output_tokens: None,
            temperature: None,
            reasoning: Default::default(),
            seed: None,
        }
    }

    #[test]
    fn url_names_the_model_and_the_key_goes_in_a_header() {
        let built = wire().build(&request("models/gemini-2.5-pro")).unwrap();
        assert_eq!(
            built.url,
            "https://generativelanguage.example.test/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
        );
        assert!(!built.url.contains("key="));
        assert_eq!(
            built.headers,
            vec![("x-goog-api-key".to_string(), "AIza-secret-key".to_string())]
        );
        assert!(matches!(
            wire().build(&request("bad/name")),
            Err(ProviderError::Config { .. })
        ));
    }

    #[test]
    fn retry_info_becomes_retry_after() {
        let body = r#"{"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"34.4s"}]}}"#;
        let err = wire().classify(429, None, body);
        assert!(matches!(err, ProviderError::RateLimited { .. }));
        assert_eq!(err.retry_after(), Some(Duration::from_secs_f64(34.4)));
        let header_wins = wire().classify(429, Some(Duration::from_secs(2)), body);
        assert_eq!(header_wins.retry_after(), Some(Duration::from_secs(2)));
    }

    #[test]
    fn invalid_key_overflow_and_stream_errors() {
        let bad_key = r#"{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"reason":"API_KEY_INVALID"}]}}"#;
        let err = wire().classify(400, None, bad_key);
        assert!(matches!(err, ProviderError::Auth { .. }));
        assert!(err.to_string().contains("GEMINI_API_KEY"));
        let long = r#"{"error":{"code":400,"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}"#;
        assert!(wire().classify(400, None, long).is_context_overflow());
        let value: Value = serde_json::from_str(
            r#"{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}"#,
        )
        .unwrap();
        let err = api_error("gemini", "K", 0, None, &value, "overloaded".into());
        assert!(matches!(err, ProviderError::Server { status: 503, .. }));
        let by_name: Value =
            serde_json::from_str(r#"{"error":{"message":"busy","status":"RESOURCE_EXHAUSTED"}}"#)
                .unwrap();
        assert!(api_error("gemini", "K", 0, None, &by_name, "busy".into()).is_retryable());
        let unknown: Value = serde_json::from_str(r#"{"error":{"message":"odd"}}"#).unwrap();
        assert!(matches!(
            api_error("gemini", "K", 0, None, &unknown, "odd".into()),
            ProviderError::Stream { .. }
        ));
    }
}
