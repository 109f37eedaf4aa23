//! The one history policy: what of a model's conversation goes into its next turn. Every front
//! end uses it, so a conversation is shortened the same way in the TUI, `versus ask` and
//! `versus run`: first compaction near the context window (earlier turns folded into a recap),
//! then, if the caller keeps only the last N turns, a cut at a turn boundary (a tool call is
//! never separated from its result). Pure functions over the canonical conversation.

use crate::model::{Message, Part, Role};

/// Share of a model's context window at which its conversation is compacted before the next
/// turn (the recipe format's `compact_threshold` default).
pub const AUTO_COMPACT_THRESHOLD: f64 = 0.8;

/// How a conversation is shortened before a turn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HistoryPolicy {
    /// Compact when the conversation fills more than this share of the window (`None`: never
    /// automatically, e.g. a recipe's `strategy: manual` or `off`).
    pub compact_at: Option<f64>,
    /// Turns kept; 0 keeps all.
    pub max_turns: u32,
}

impl Default for HistoryPolicy {
    fn default() -> Self {
        Self {
            compact_at: Some(AUTO_COMPACT_THRESHOLD),
            max_turns: 0,
        }
    }
}

/// What [`prepare`] did to a conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Shortened {
    /// Turns folded into a recap by compaction.
    pub folded: usize,
    /// Turns dropped by `max_turns`.
    pub dropped: usize,
}

/// Applies `policy` to `messages` for a model whose context window is `window` tokens (`None`:
/// unknown, no automatic compaction).
pub fn prepare(
    messages: &mut Vec<Message>,
    window: Option<u64>,
    policy: HistoryPolicy,
) -> Shortened {
    let mut out = Shortened::default();
    if let (Some(window), Some(threshold)) = (window, policy.compact_at) {
        out.folded = auto_compact(messages, window, threshold);
    }
    out.dropped = keep_last_turns(messages, policy.max_turns);
    out
}

/// Whether `message` is a user prompt (not only tool results): turns start there.
fn is_prompt(message: &Message) -> bool {
    message.role == Role::User
        && message
            .parts
            .iter()
            .any(|p| !matches!(p, Part::ToolResult { .. }))
}

fn turn_starts(messages: &[Message]) -> Vec<usize> {
    messages
        .iter()
        .enumerate()
        .filter(|(_, m)| is_prompt(m))
        .map(|(i, _)| i)
        .collect()
}

/// Keeps the last `turns` turns (0 keeps all); returns how many were dropped.
pub fn keep_last_turns(messages: &mut Vec<Message>, turns: u32) -> usize {
    if turns == 0 {
        return 0;
    }
    let starts = turn_starts(messages);
    let keep = turns as usize;
    if starts.len() <= keep {
        return 0;
    }
    let from = starts[starts.len() - keep];
    messages.drain(..from);
    starts.len() - keep
}

/// Keeps only the latest turn of `messages`; earlier turns become a short recap put in front of
/// that turn's prompt (their prompts and final answers, cut). Returns how many turns were
/// folded; the conversation stays valid (it still starts with the user's prompt).
pub fn compact(messages: &mut Vec<Message>) -> usize {
    let starts = turn_starts(messages);
    let Some(&last) = starts.last() else {
        return 0;
    };
    if starts.len() < 2 {
        return 0;
    }
    let mut recap =
        String::from("[versus] Earlier turns of this conversation were compacted. Recap:\n");
    for (n, window) in starts.windows(2).enumerate() {
        let prompt = messages[window[0]].text();
        let answer = messages[window[0]..window[1]]
            .iter()
            .rev()
            .find(|m| m.role == Role::Assistant && !m.text().trim().is_empty())
            .map(Message::text)
            .unwrap_or_default();
        recap.push_str(&format!(
            "{}. User: {}\n   You answered: {}\n",
            n + 1,
            cut(&prompt, 400),
            cut(&answer, 600)
        ));
    }
    let folded = starts.len() - 1;
    let mut kept = messages.split_off(last);
    if let Some(first) = kept.first_mut() {
        first.parts.insert(
            0,
            Part::Text {
                text: format!("{recap}\nNow:"),
                replay: None,
            },
        );
    }
    *messages = kept;
    folded
}

/// Tokens an image in a tool result is counted as: about what the largest image the
/// providers accept costs (they scale images down to roughly 1.2 megapixels).
const TOKENS_PER_IMAGE: usize = 1_600;

/// A conservative size of a conversation in tokens: four bytes of text per token, which
/// over-counts code and English a little, so compaction happens early rather than late; each
/// image counts as `TOKENS_PER_IMAGE`.
pub fn estimate_tokens(messages: &[Message]) -> u64 {
    let bytes: usize = messages
        .iter()
        .flat_map(|m| m.parts.iter())
        .map(|p| match p {
            Part::Text { text, .. } | Part::Thinking { text, .. } => text.len(),
            Part::ToolCall {
                name, arguments, ..
            } => name.len() + arguments.len(),
            Part::ToolResult {
                content, images, ..
            } => content.len() + images.len() * TOKENS_PER_IMAGE * 4,
        })
        .sum();
    u64::try_from(bytes.div_ceil(4)).unwrap_or(u64::MAX)
}

/// Compacts `messages` (see [`compact`]) when they fill more than `threshold` of a context
/// `window` of tokens, so the next turn does not fail with a context overflow. Returns how many
/// turns were folded (0: not needed, or only one turn, which cannot be shortened this way).
pub fn auto_compact(messages: &mut Vec<Message>, window: u64, threshold: f64) -> usize {
    if (estimate_tokens(messages) as f64) < threshold * window as f64 {
        return 0;
    }
    compact(messages)
}

fn cut(text: &str, max: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out: String = flat.chars().take(max).collect();
    if out.len() < flat.len() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assistant(text: &str) -> Message {
        Message {
            role: Role::Assistant,
            parts: vec![Part::text(text)],
        }
    }

    fn tool_result() -> Message {
        Message {
            role: Role::User,
            parts: vec![Part::ToolResult {
                call_id: "c".into(),
                name: "read_file".into(),
                content: "x".into(),
                is_error: false,
                images: Vec::new(),
            }],
        }
    }

    #[test]
    fn auto_compaction_happens_only_near_the_window() {
        let turn = |n: usize| {
            vec![
                Message::user(format!("prompt {n}")),
                assistant(&"x".repeat(4_000)),
            ]
        };
        let mut messages: Vec<Message> = (0..3).flat_map(turn).collect();
        let size = estimate_tokens(&messages);
        assert!(size > 3_000 && size < 3_100, "{size}");
        assert_eq!(
            auto_compact(&mut messages, 100_000, 0.8),
            0,
            "far from the window"
        );
        assert_eq!(messages.len(), 6);
        assert_eq!(
            auto_compact(&mut messages, 3_500, 0.8),
            2,
            "over 80% of 3,500"
        );
        assert_eq!(messages.len(), 2);
        assert!(messages[0].text().contains("compacted"));
        assert!(estimate_tokens(&messages) < size);
    }

    #[test]
    fn compaction_keeps_the_latest_turn_with_a_recap() {
        let mut messages = vec![
            Message::user("first task"),
            assistant("did the first"),
            Message::user("second task"),
            assistant("did the second"),
            Message::user("third task"),
            assistant("working"),
        ];
        assert_eq!(compact(&mut messages), 2);
        assert_eq!(messages.len(), 2);
        let first = messages[0].text();
        assert!(first.contains("1. User: first task"), "{first}");
        assert!(first.contains("You answered: did the second"), "{first}");
        assert!(first.ends_with("third task"), "{first}");
        assert_eq!(compact(&mut messages), 0);
    }

    #[test]
    fn keeping_the_last_turns_never_splits_a_call_from_its_result() {
        let mut history = vec![
            Message::user("one"),
            assistant("a"),
            Message::user("two"),
            assistant("b"),
            tool_result(),
            assistant("c"),
            Message::user("three"),
            assistant("d"),
            tool_result(),
        ];
        assert_eq!(keep_last_turns(&mut history.clone(), 0), 0);
        let mut two = history.clone();
        assert_eq!(keep_last_turns(&mut two, 2), 1);
        assert_eq!(two[0], Message::user("two"));
        assert_eq!(two.len(), 7);
        assert_eq!(keep_last_turns(&mut history, 1), 2);
        assert_eq!(history[0], Message::user("three"));
    }

    #[test]
    fn the_policy_compacts_first_then_cuts() {
        let mut messages: Vec<Message> = (0..4)
            .flat_map(|n| vec![Message::user(format!("p{n}")), assistant(&"y".repeat(400))])
            .collect();
        let policy = HistoryPolicy {
            compact_at: Some(0.5),
            max_turns: 0,
        };
        let done = prepare(&mut messages, Some(100), policy);
        assert_eq!(
            done,
            Shortened {
                folded: 3,
                dropped: 0
            }
        );
        let mut none = messages.clone();
        assert_eq!(prepare(&mut none, None, policy), Shortened::default());
    }
}
