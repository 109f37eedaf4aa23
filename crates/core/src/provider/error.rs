//! Provider failures, classified so the loop knows what to retry and what to report.
//!
//! Texts never carry secrets: the HTTP layer passes every body and message through
//! [`super::redact::Redactor`] before it becomes an error.

use std::time::Duration;

/// Why a request to a model failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProviderError {
    /// The key is missing, wrong or lacks access (401/403).
    #[error("{provider}: authentication failed ({status}): {message}; check {hint}")]
    Auth {
        /// Provider name.
        provider: String,
        /// HTTP status.
        status: u16,
        /// Server message (redacted).
        message: String,
        /// What to check, e.g. the key's variable name.
        hint: String,
    },
    /// Too many requests (429); `retry_after` when the server said how long to wait.
    #[error("{provider}: rate limited (429): {message}")]
    RateLimited {
        /// Provider name.
        provider: String,
        /// Server message (redacted).
        message: String,
        /// Server-requested wait.
        retry_after: Option<Duration>,
    },
    /// The provider is overloaded or failing (5xx, 529, `overloaded_error`).
    #[error("{provider}: server error ({status}): {message}")]
    Server {
        /// Provider name.
        provider: String,
        /// HTTP status (0 when reported inside a 200 stream).
        status: u16,
        /// Server message (redacted).
        message: String,
        /// Server-requested wait.
        retry_after: Option<Duration>,
    },
    /// The conversation no longer fits the model's context window.
    #[error(
        "{provider}: the conversation is too long for the model's context window: {message}; compact the history or start a new turn"
    )]
    ContextOverflow {
        /// Provider name.
        provider: String,
        /// Server message (redacted).
        message: String,
    },
    /// The request was refused as invalid (4xx other than the above).
    #[error("{provider}: request rejected ({status}): {message}")]
    BadRequest {
        /// Provider name.
        provider: String,
        /// HTTP status.
        status: u16,
        /// Server message (redacted).
        message: String,
    },
    /// The connection failed or was cut (retryable).
    #[error("{provider}: connection problem: {message}")]
    Network {
        /// Provider name.
        provider: String,
        /// What happened (redacted).
        message: String,
    },
    /// Nothing listens at the provider's address on this machine (connection refused on a
    /// loopback address): a local server such as Ollama that is not running. Not retried.
    #[error(
        "{provider}: nothing listens at {url} (connection refused): start the server{}",
        hint_text(hint)
    )]
    Unreachable {
        /// Provider name.
        provider: String,
        /// The address tried (redacted).
        url: String,
        /// Where the address comes from (`OLLAMA_BASE_URL`).
        hint: String,
    },
    /// The stream carried something that could not be understood.
    #[error("{provider}: could not read the response stream: {message}")]
    Decode {
        /// Provider name.
        provider: String,
        /// What was wrong (redacted).
        message: String,
        /// Whether asking again may give a readable answer: true for one malformed event
        /// that no later event made redundant (the step is requested again, as for a cut
        /// stream; issue 25, wire finding 2), false for a response that is not a model's
        /// at all (too long).
        retryable: bool,
    },
    /// The provider reported an error inside the stream that is not retryable.
    #[error("{provider}: the model reported an error: {message}")]
    Stream {
        /// Provider name.
        provider: String,
        /// Server message (redacted).
        message: String,
    },
    /// The request could not be built (bad configuration).
    #[error("{provider}: {message}")]
    Config {
        /// Provider name.
        provider: String,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// The run was cancelled.
    #[error("cancelled")]
    Cancelled,
}

fn hint_text(hint: &str) -> String {
    if hint.is_empty() {
        String::new()
    } else {
        format!(", or point {hint} to where it runs")
    }
}

impl ProviderError {
    /// Whether sending the same request again may succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            ProviderError::RateLimited { .. }
                | ProviderError::Server { .. }
                | ProviderError::Network { .. }
                | ProviderError::Decode {
                    retryable: true,
                    ..
                }
        )
    }

    /// The wait the server asked for, if any.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            ProviderError::RateLimited { retry_after, .. }
            | ProviderError::Server { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// Whether this is a context-window overflow (compaction may help).
    pub fn is_context_overflow(&self) -> bool {
        matches!(self, ProviderError::ContextOverflow { .. })
    }
}

/// Parses one streamed event's JSON; invalid JSON is a retryable [`ProviderError::Decode`]
/// quoting the start of the event ([`broken_event`]), worded the same for every adapter.
/// Adapters that can tell a later event makes the broken one redundant skip it instead.
pub fn event_json(provider: &str, data: &str) -> Result<serde_json::Value, ProviderError> {
    serde_json::from_str(data).map_err(|err| broken_event(provider, data, &err))
}

/// The error for one malformed stream event that nothing later in the stream replaces: the
/// step is requested again, as for a cut stream (the transport retries it; the steps before
/// it and their proposals stay as they are).
pub fn broken_event(provider: &str, data: &str, err: &dyn std::fmt::Display) -> ProviderError {
    ProviderError::Decode {
        provider: provider.to_string(),
        message: format!(
            "an event is not valid JSON ({err}); it began with: {}",
            data.chars().take(160).collect::<String>()
        ),
        retryable: true,
    }
}

/// Phrases providers use for context overflow in 400 bodies and stream errors.
pub fn looks_like_context_overflow(message: &str) -> bool {
    let lower = message.to_ascii_lowercase();
    [
        "context_length_exceeded",
        "context length",
        "context window",
        "maximum context",
        "prompt is too long",
        "too many tokens",
        "input is too long",
        "exceeds the maximum number of tokens",
        "input token count",
        "request too large",
    ]
    .iter()
    .any(|needle| lower.contains(needle))
}

/// Builds the error for a non-2xx HTTP answer from the status and (redacted) body. Adapters
/// call this and only special-case what their provider does differently.
pub fn classify_status(
    provider: &str,
    status: u16,
    message: String,
    retry_after: Option<Duration>,
    key_hint: &str,
) -> ProviderError {
    let provider = provider.to_string();
    match status {
        401 | 403 => ProviderError::Auth {
            provider,
            status,
            message,
            hint: key_hint.to_string(),
        },
        429 => ProviderError::RateLimited {
            provider,
            message,
            retry_after,
        },
        408 | 409 | 425 | 500..=599 => ProviderError::Server {
            provider,
            status,
            message,
            retry_after,
        },
        413 => ProviderError::ContextOverflow { provider, message },
        _ if looks_like_context_overflow(&message) => {
            ProviderError::ContextOverflow { provider, message }
        }
        _ => ProviderError::BadRequest {
            provider,
            status,
            message,
        },
    }
}

/// Pulls the human message out of a JSON error body (`{"error":{"message":..}}`, Gemini's
/// `[{"error":..}]`, Anthropic's `{"type":"error","error":{..}}`), else the trimmed body.
pub fn error_message_from_body(body: &str) -> String {
    let parsed: Option<serde_json::Value> = serde_json::from_str(body).ok();
    let value = match parsed {
        Some(serde_json::Value::Array(items)) => items.into_iter().next(),
        other => other,
    };
    if let Some(value) = value {
        let error = value.get("error").unwrap_or(&value);
        if let Some(message) = error.get("message").and_then(|m| m.as_str()) {
            let kind = error
                .get("type")
                .or_else(|| error.get("status"))
                .or_else(|| error.get("code"))
                .and_then(|t| t.as_str());
            return match kind {
                Some(kind) => format!("{kind}: {message}"),
                None => message.to_string(),
            };
        }
        if let Some(text) = error.as_str() {
            return text.to_string();
        }
    }
    let trimmed = body.trim();
    let mut cut: String = trimmed.chars().take(500).collect();
    if cut.len() < trimmed.len() {
        cut.push_str("...");
    }
    if cut.is_empty() {
        "(empty body)".to_string()
    } else {
        cut
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_map_to_kinds() {
        let e = classify_status("openai", 429, "slow".into(), None, "OPENAI_API_KEY");
        assert!(e.is_retryable());
        let e = classify_status("openai", 401, "bad".into(), None, "OPENAI_API_KEY");
        assert!(!e.is_retryable());
        assert!(e.to_string().contains("OPENAI_API_KEY"));
        let e = classify_status(
            "openai",
            400,
            "This model's maximum context length is 128000 tokens".into(),
            None,
            "",
        );
        assert!(e.is_context_overflow());
        let e = classify_status("anthropic", 529, "overloaded".into(), None, "");
        assert!(e.is_retryable());
        let e = classify_status("x", 400, "bad field".into(), None, "");
        assert!(matches!(e, ProviderError::BadRequest { status: 400, .. }));
    }

    #[test]
    fn messages_are_extracted_from_each_body_shape() {
        assert_eq!(
            error_message_from_body(
                r#"{"error":{"message":"nope","type":"invalid_request_error"}}"#
            ),
            "invalid_request_error: nope"
        );
        assert_eq!(
            error_message_from_body(
                r#"[{"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED"}}]"#
            ),
            "RESOURCE_EXHAUSTED: quota"
        );
        assert_eq!(error_message_from_body("plain failure\n"), "plain failure");
        assert_eq!(error_message_from_body(""), "(empty body)");
    }
}
