//! What a provider adapter streams back for one request, and the token usage it reports.

use serde::{Deserialize, Serialize};

use super::message::Message;

/// Token counts as the provider reports them. `input` excludes cached tokens where the
/// provider reports them separately, so cost = input x price + cache_read x cache price + ...
///
/// A request whose usage the provider did not report (no usage chunk, or every count zero,
/// as some proxies send) is counted in `unreported` instead of as zeros: a total with any
/// such request is unknown ([`Usage::is_known`]), shown as unknown and never priced, because
/// `0 0` and `$0` would read as a real, free answer (issue 25, wire finding 4). The rule is
/// decided once, by [`Usage::or_unreported`] in the agent loop, for every provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Usage {
    /// Uncached input tokens.
    pub input: u64,
    /// Output tokens (including reasoning where the provider counts it there).
    pub output: u64,
    /// Input tokens served from the prompt cache.
    pub cache_read: u64,
    /// Input tokens written to the prompt cache.
    pub cache_write: u64,
    /// Reasoning tokens (already part of `output` for providers that include them).
    pub reasoning: u64,
    /// Requests whose usage the provider did not report. Absent in older logs and whenever
    /// every request reported its usage (0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unreported: u32,
}

/// Serde's test for leaving `unreported` out when nothing is missing.
fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl Usage {
    /// Adds another step's usage. Saturating: the numbers come from a provider's stream, and a
    /// hostile one sending `u64::MAX` must neither panic the loop nor wrap a count (and the
    /// cost limit computed from it) back to small.
    pub fn add(&mut self, other: &Usage) {
        self.input = self.input.saturating_add(other.input);
        self.output = self.output.saturating_add(other.output);
        self.cache_read = self.cache_read.saturating_add(other.cache_read);
        self.cache_write = self.cache_write.saturating_add(other.cache_write);
        self.reasoning = self.reasoning.saturating_add(other.reasoning);
        self.unreported = self.unreported.saturating_add(other.unreported);
    }

    /// The usage of one request the provider did not report.
    pub fn unreported() -> Usage {
        Usage {
            unreported: 1,
            ..Usage::default()
        }
    }

    /// The one rule for missing usage: a request's usage without a single counted token is
    /// one the provider did not report (every real request reads at least one input token),
    /// so it becomes [`Usage::unreported`]. Anything with a count is kept as it is.
    pub fn or_unreported(self) -> Usage {
        let counted = self.input != 0
            || self.output != 0
            || self.cache_read != 0
            || self.cache_write != 0
            || self.reasoning != 0;
        if counted || self.unreported != 0 {
            self
        } else {
            Usage::unreported()
        }
    }

    /// Whether these counts are the whole usage: false when any request's usage was not
    /// reported, so the totals are only a lower bound (shown as unknown, cost unknown).
    pub fn is_known(&self) -> bool {
        self.unreported == 0
    }

    /// All input tokens, cached or not (what fills the context window).
    pub fn total_input(&self) -> u64 {
        self.input
            .saturating_add(self.cache_read)
            .saturating_add(self.cache_write)
    }
}

/// Why the model stopped producing this response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "detail")]
pub enum StopReason {
    /// Finished its answer.
    EndTurn,
    /// Wants tool results (decided from the content, not only the finish reason).
    ToolUse,
    /// Hit the output token cap.
    MaxTokens,
    /// Refused or was filtered.
    Refusal,
    /// Anything else the provider said, verbatim.
    Other(String),
}

/// The assembled result of one request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Completion {
    /// The assistant message, with replay state attached.
    pub message: Message,
    /// Usage of this request.
    pub usage: Usage,
    /// Stop reason; `ToolUse` whenever the message has tool calls.
    pub stop: StopReason,
}

/// One streamed event. Deltas are for live display; [`StreamEvent::Completed`] is the truth.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StreamEvent {
    /// Visible text arrived.
    TextDelta {
        /// The new text.
        text: String,
    },
    /// Thinking text arrived.
    ThinkingDelta {
        /// The new text.
        text: String,
    },
    /// A tool call began (position `index` among this response's calls).
    ToolCallStart {
        /// Position of the call in this response.
        index: usize,
        /// Call id.
        id: String,
        /// Tool name.
        name: String,
    },
    /// More argument text for a started call.
    ToolCallDelta {
        /// Position of the call in this response.
        index: usize,
        /// The new argument text.
        delta: String,
    },
    /// The request failed in a retryable way and is being sent again: discard the partial
    /// deltas shown since the last `Completed`.
    Retrying {
        /// The attempt about to start (2 for the first retry).
        attempt: u32,
        /// Wait before it, in milliseconds.
        delay_ms: u64,
        /// Why (error text, no secrets).
        reason: String,
    },
    /// The response is complete.
    Completed(Completion),
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn usage_from_a_hostile_stream_saturates_instead_of_wrapping() {
        let huge = Usage {
            input: u64::MAX,
            output: u64::MAX,
            cache_read: 1,
            cache_write: 1,
            reasoning: u64::MAX,
            unreported: u32::MAX,
        };
        let mut total = huge;
        total.add(&huge);
        assert_eq!(total.input, u64::MAX);
        assert_eq!(total.output, u64::MAX);
        assert_eq!(total.total_input(), u64::MAX);
        assert_eq!(total.unreported, u32::MAX);
    }

    #[test]
    fn usage_without_a_count_is_unreported_and_stays_so_in_totals() {
        assert_eq!(Usage::default().or_unreported(), Usage::unreported());
        let real = Usage {
            input: 5,
            ..Usage::default()
        };
        assert_eq!(real.or_unreported(), real);
        assert!(real.is_known());
        let mut total = real;
        total.add(&Usage::default().or_unreported());
        assert!(!total.is_known());
        assert_eq!(total.input, 5);
        // Older logs have no `unreported`; known usage is written without it.
        let old: Usage = serde_json::from_str(
            r#"{"input":1,"output":2,"cache_read":0,"cache_write":0,"reasoning":0}"#,
        )
        .unwrap();
        assert!(old.is_known());
        assert!(!serde_json::to_string(&old).unwrap().contains("unreported"));
        let back: Usage =
            serde_json::from_str(&serde_json::to_string(&Usage::unreported()).unwrap()).unwrap();
        assert!(!back.is_known());
    }
}
