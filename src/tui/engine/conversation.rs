//! `/compact`: shortening a model's conversation to its latest turn, with a recap of the
//! earlier ones. A pure function over the canonical conversation, tested without a model. (The
//! note a model reads before its next prompt is `session::next_turn_note`, shared with
//! `versus ask`.)

use crate::model::{Message, Part, Role};

/// Whether `message` is a user prompt (not only tool results): turns start there.
fn is_prompt(message: &Message) -> bool {
    message.role == Role::User && message.parts.iter().any(|p| matches!(p, Part::Text { .. }))
}

/// Keeps only the latest turn of `messages`; earlier turns become a short recap put in front of
/// that turn's prompt (their prompts and final answers, cut). Returns how many turns were
/// folded; the conversation stays valid (it still starts with the user's prompt).
pub fn compact(messages: &mut Vec<Message>) -> usize {
    let starts: Vec<usize> = messages
        .iter()
        .enumerate()
        .filter(|(_, m)| is_prompt(m))
        .map(|(i, _)| i)
        .collect();
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
}
