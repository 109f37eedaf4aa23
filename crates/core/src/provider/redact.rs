//! Keeping keys out of every text versus produces.
//!
//! The HTTP layer knows the secret values it sends; a [`Redactor`] built from them scrubs error
//! bodies and messages before they become [`super::ProviderError`]s, and [`redact_url`] hides
//! `key=` query parameters (Gemini accepts the key there).

/// Replaces known secret values with `[redacted]`.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    secrets: Vec<String>,
}

impl Redactor {
    /// A redactor for these values (empty and very short values are ignored: they would
    /// scrub ordinary text).
    pub fn new(secrets: impl IntoIterator<Item = String>) -> Self {
        let secrets = secrets.into_iter().filter(|s| s.len() >= 6).collect();
        Self { secrets }
    }

    /// The text with every secret replaced.
    pub fn scrub(&self, text: &str) -> String {
        let mut out = text.to_string();
        for secret in &self.secrets {
            if out.contains(secret.as_str()) {
                out = out.replace(secret.as_str(), "[redacted]");
            }
        }
        redact_url(&out)
    }
}

/// Hides the value of `key=` query parameters in any URL inside `text`.
pub fn redact_url(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(pos) = find_key_param(rest) {
        let value_start = pos + 4;
        out.push_str(&rest[..value_start]);
        out.push_str("[redacted]");
        let tail = &rest[value_start..];
        let end = tail
            .find(|c: char| c == '&' || c == '#' || c.is_whitespace() || c == '"' || c == '\'')
            .unwrap_or(tail.len());
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

fn find_key_param(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(offset) = text[from..].find("key=") {
        let pos = from + offset;
        if pos > 0 && matches!(bytes[pos - 1], b'?' | b'&') {
            return Some(pos);
        }
        from = pos + 4;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrubs_values_and_query_keys() {
        let r = Redactor::new(vec!["sk-secret-123".to_string(), "ab".to_string()]);
        assert_eq!(
            r.scrub("bad key sk-secret-123 given; ab stays"),
            "bad key [redacted] given; ab stays"
        );
        assert_eq!(
            redact_url("GET https://x/v1?alt=sse&key=AIzaXYZ&y=1 failed"),
            "GET https://x/v1?alt=sse&key=[redacted]&y=1 failed"
        );
        assert_eq!(redact_url("monkey=1"), "monkey=1");
    }
}
