//! Reading the fields of Responses output items and usage objects, whatever the server left
//! out: every accessor tolerates missing fields, because compatible servers (LM Studio, xAI,
//! Copilot) each omit different ones.

use serde_json::Value;

use crate::model::Usage;
use crate::provider::openai_chat::history::{count, output_with_reasoning};

/// The `type` of an item or content part (empty when missing).
pub(crate) fn item_type(item: &Value) -> &str {
    item.get("type").and_then(Value::as_str).unwrap_or_default()
}

/// A string field, empty when missing or not a string.
pub(crate) fn text_field(value: &Value, key: &str) -> String {
    value
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// A call item's arguments (`function_call`) or free-form input (`custom_tool_call`).
pub(crate) fn call_input(item: &Value) -> String {
    match item.get("arguments").or_else(|| item.get("input")) {
        Some(Value::String(text)) => text.clone(),
        Some(value @ Value::Object(_)) => value.to_string(),
        _ => String::new(),
    }
}

/// The text of a finished message item; notes a refusal.
pub(crate) fn message_text(item: &Value, refusal: &mut bool) -> String {
    let mut text = String::new();
    if let Some(Value::Array(content)) = item.get("content") {
        for part in content {
            match item_type(part) {
                "output_text" => text.push_str(&text_field(part, "text")),
                "refusal" => {
                    *refusal = true;
                    text.push_str(&text_field(part, "refusal"));
                }
                _ => {}
            }
        }
    }
    text
}

/// The readable text of a finished reasoning item: its summaries, else its reasoning text.
pub(crate) fn reasoning_text(item: &Value) -> String {
    let collect = |key: &str| -> Vec<String> {
        match item.get(key) {
            Some(Value::Array(parts)) => parts
                .iter()
                .map(|p| text_field(p, "text"))
                .filter(|t| !t.is_empty())
                .collect(),
            _ => Vec::new(),
        }
    };
    let summary = collect("summary");
    if summary.is_empty() {
        collect("content").join("\n\n")
    } else {
        summary.join("\n\n")
    }
}

/// Usage with `input` as uncached input: `input_tokens` counts cached tokens too.
pub(crate) fn parse_usage(usage: &Value) -> Usage {
    let input = count(usage.get("input_tokens"));
    let details = usage.get("input_tokens_details");
    let cache_read = count(details.and_then(|d| d.get("cached_tokens")));
    let cache_write = count(details.and_then(|d| d.get("cache_write_tokens")));
    let output = count(usage.get("output_tokens"));
    let reasoning = count(
        usage
            .get("output_tokens_details")
            .and_then(|d| d.get("reasoning_tokens")),
    );
    let total = count(usage.get("total_tokens"));
    Usage {
        input: input.saturating_sub(cache_read + cache_write),
        output: output_with_reasoning(input, output, reasoning, total),
        cache_read,
        cache_write,
        reasoning,
        unreported: 0,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn item_fields() {
        let mut refusal = false;
        let message = json!({"content":[{"type":"output_text","text":"a"},{"type":"refusal","refusal":"no"}]});
        assert_eq!(message_text(&message, &mut refusal), "ano");
        assert!(refusal);
        let reasoning =
            json!({"summary":[{"text":"one"},{"text":"two"}],"content":[{"text":"raw"}]});
        assert_eq!(reasoning_text(&reasoning), "one\n\ntwo");
        assert_eq!(
            reasoning_text(&json!({"summary":[],"content":[{"text":"raw"}]})),
            "raw"
        );
        assert_eq!(
            call_input(&json!({"input":"*** Begin Patch"})),
            "*** Begin Patch"
        );
        assert_eq!(call_input(&json!({"arguments":{"a":1}})), r#"{"a":1}"#);
        assert_eq!(call_input(&json!({})), "");
    }

    #[test]
    fn usage_counts_uncached_input() {
        let usage = parse_usage(
            &json!({"input_tokens":10,"input_tokens_details":{"cached_tokens":4,"cache_write_tokens":1},
            "output_tokens":7,"output_tokens_details":{"reasoning_tokens":3},"total_tokens":17}),
        );
        assert_eq!(
            usage,
            Usage {
                input: 5,
                output: 7,
                cache_read: 4,
                cache_write: 1,
                reasoning: 3,
                unreported: 0,
            }
        );
    }
}
