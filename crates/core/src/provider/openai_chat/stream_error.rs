//! Errors reported inside a 200 stream, classified like HTTP errors so the transport retries
//! what may pass on a second try and the loop recognises context overflow.
//!
//! OpenRouter and LiteLLM put an `error` object with a numeric (HTTP-like) `code` into a chat
//! chunk; the Responses API sends `error` events and `response.failed` with string codes
//! (`rate_limit_exceeded`, `server_error`, `context_length_exceeded`...). Both adapters use
//! [`classify`].

use serde_json::Value;

use crate::provider::ProviderError;
use crate::provider::error::{classify_status, looks_like_context_overflow};

/// String codes and types meaning "try again later".
const TRANSIENT: &[&str] = &[
    "server_error",
    "internal_error",
    "internal_server_error",
    "api_error",
    "overloaded",
    "overloaded_error",
    "server_is_overloaded",
    "service_unavailable",
    "slow_down",
    "timeout",
    "gateway_timeout",
];

/// String codes and types meaning "too many requests".
const RATE_LIMITED: &[&str] = &[
    "rate_limit_exceeded",
    "rate_limit_error",
    "too_many_requests",
];

/// The error for an error object (or string) found in a stream.
pub(crate) fn classify(provider: &str, key_hint: &str, error: &Value) -> ProviderError {
    let fields = Fields::read(error);
    let message = fields.display();
    let provider_name = provider.to_string();
    let is = |list: &[&str]| {
        fields
            .labels()
            .any(|label| list.contains(&label.to_ascii_lowercase().as_str()))
    };
    if fields.labels().any(|l| l == "context_length_exceeded")
        || looks_like_context_overflow(&fields.message)
    {
        return ProviderError::ContextOverflow {
            provider: provider_name,
            message,
        };
    }
    if let Some(status) = fields.status {
        return classify_status(provider, status, message, None, key_hint);
    }
    if is(RATE_LIMITED) {
        return ProviderError::RateLimited {
            provider: provider_name,
            message,
            retry_after: None,
        };
    }
    if is(TRANSIENT) || fields.message.to_ascii_lowercase().contains("overloaded") {
        return ProviderError::Server {
            provider: provider_name,
            status: 0,
            message,
            retry_after: None,
        };
    }
    if is(&["insufficient_quota"]) {
        return ProviderError::Stream {
            provider: provider_name,
            message: format!("{message} (add credit or raise the quota, then run again)"),
        };
    }
    if is(&["invalid_api_key", "authentication_error"]) {
        return ProviderError::Auth {
            provider: provider_name,
            status: 401,
            message,
            hint: key_hint.to_string(),
        };
    }
    ProviderError::Stream {
        provider: provider_name,
        message,
    }
}

/// Whether an HTTP error body carries OpenAI's overflow code (in `code` or `type`).
pub(crate) fn body_says_overflow(body: &str) -> bool {
    let Ok(value) = serde_json::from_str::<Value>(body) else {
        return false;
    };
    let error = value.get("error").unwrap_or(&value);
    Fields::read(error)
        .labels()
        .any(|l| l == "context_length_exceeded")
}

/// The parts of an error object that matter, whatever its shape.
struct Fields {
    message: String,
    code: Option<String>,
    kind: Option<String>,
    status: Option<u16>,
}

impl Fields {
    fn read(error: &Value) -> Self {
        // `{"error": {...}}` wrappers (Responses `error` events from some servers).
        let error = match error.get("error") {
            Some(inner) if inner.is_object() => inner,
            _ => error,
        };
        if let Some(text) = error.as_str() {
            return Self {
                message: text.to_string(),
                code: None,
                kind: None,
                status: None,
            };
        }
        let text = |key: &str| error.get(key).and_then(Value::as_str).map(str::to_string);
        let numeric = |key: &str| {
            error
                .get(key)
                .and_then(Value::as_u64)
                .and_then(|n| u16::try_from(n).ok())
                .filter(|n| (400..600).contains(n))
        };
        let status = numeric("code").or_else(|| numeric("status"));
        Self {
            message: text("message").unwrap_or_else(|| "(no message)".to_string()),
            code: text("code"),
            // `"type": "error"` is the event name of Responses error events, not a label.
            kind: text("type").filter(|kind| kind != "error"),
            status,
        }
    }

    fn labels(&self) -> impl Iterator<Item = &str> {
        self.code.iter().chain(self.kind.iter()).map(String::as_str)
    }

    fn display(&self) -> String {
        match (&self.code, &self.kind, self.status) {
            (Some(code), _, _) => format!("{code}: {}", self.message),
            (None, Some(kind), _) => format!("{kind}: {}", self.message),
            (None, None, Some(status)) => format!("{status}: {}", self.message),
            _ => self.message.clone(),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn kind(error: Value) -> ProviderError {
        classify("openrouter", "OPENROUTER_API_KEY", &error)
    }

    #[test]
    fn numeric_codes_follow_http_rules() {
        let e = kind(json!({"code": 502, "message": "Provider returned error"}));
        assert!(matches!(e, ProviderError::Server { status: 502, .. }));
        assert!(e.is_retryable());
        let e = kind(json!({"code": 429, "message": "slow down"}));
        assert!(matches!(e, ProviderError::RateLimited { .. }));
        let e = kind(json!({"code": 400, "message": "bad"}));
        assert!(matches!(e, ProviderError::BadRequest { .. }));
    }

    #[test]
    fn string_codes_and_overflow() {
        let e = kind(json!({"type": "error", "code": "context_length_exceeded", "message": "x"}));
        assert!(e.is_context_overflow());
        let e = kind(json!({"message": "This model's maximum context length is 8192 tokens"}));
        assert!(e.is_context_overflow());
        let e = kind(json!({"code": "server_error", "message": "oops"}));
        assert!(e.is_retryable());
        let e = kind(json!({"error": {"type": "overloaded_error", "message": "Overloaded"}}));
        assert!(e.is_retryable());
        let e = kind(json!({"code": "rate_limit_exceeded", "message": "TPM"}));
        assert!(matches!(e, ProviderError::RateLimited { .. }));
        let e = kind(json!({"code": "insufficient_quota", "message": "pay"}));
        assert!(!e.is_retryable());
        assert!(e.to_string().contains("quota"));
        let e = kind(json!({"code": "ERR_SOMETHING", "message": "Something went wrong"}));
        assert!(matches!(e, ProviderError::Stream { .. }));
        assert!(e.to_string().contains("Something went wrong"));
        let e = kind(json!("plain text failure"));
        assert!(e.to_string().contains("plain text failure"));
    }

    #[test]
    fn overflow_code_in_http_bodies() {
        assert!(body_says_overflow(
            r#"{"error":{"message":"Your input exceeds the limit","type":"invalid_request_error","code":"context_length_exceeded"}}"#
        ));
        assert!(!body_says_overflow(
            r#"{"error":{"message":"bad","code":"invalid_value"}}"#
        ));
        assert!(!body_says_overflow("not json"));
    }
}
