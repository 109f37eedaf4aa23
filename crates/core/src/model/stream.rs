//! What a provider adapter streams back for one request, and the token usage it reports.

use serde::{Deserialize, Serialize};

use super::message::Message;

/// Token counts as the provider reports them. `input` excludes cached tokens where the
/// provider reports them separately, so cost = input x price + cache_read x cache price + ...
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
        };
        let mut total = huge;
        total.add(&huge);
        assert_eq!(total.input, u64::MAX);
        assert_eq!(total.output, u64::MAX);
        assert_eq!(total.total_input(), u64::MAX);
    }
}
