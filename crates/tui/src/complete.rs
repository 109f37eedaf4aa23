//! The completion list under the cursor: slash commands, `@model` names and `@path` files.
//!
//! Completion is a pure function of the prompt text, the cursor, the session's models and the
//! project's file list (read once in the background at start), so it can be recomputed on
//! every keystroke and tested without a terminal.

use super::commands;

/// What a completion item completes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemKind {
    /// A slash command.
    Command,
    /// A model label.
    Model,
    /// A project file.
    Path,
}

/// One choice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// Text that replaces the token (with its `/` or `@`).
    pub replacement: String,
    /// Short explanation shown beside it.
    pub detail: String,
    /// What it is.
    pub kind: ItemKind,
}

/// The open list: the token being completed (byte range in the prompt) and its choices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    /// Token start (byte).
    pub start: usize,
    /// Token end (byte).
    pub end: usize,
    /// Choices, best first.
    pub items: Vec<Item>,
    /// Highlighted choice.
    pub selected: usize,
}

/// Most choices offered at once.
pub const MAX_ITEMS: usize = 50;

/// The completion for `text` with the cursor at byte `cursor`, if the cursor ends a `/command`
/// (first word of the prompt) or an `@token`.
pub fn compute(
    text: &str,
    cursor: usize,
    models: &[String],
    files: &[String],
) -> Option<Completion> {
    let before = text.get(..cursor)?;
    let start = before
        .rfind(|c: char| c.is_whitespace())
        .map(|i| i + 1)
        .unwrap_or(0);
    let token = &before[start..];
    let end = cursor
        + text[cursor..]
            .find(|c: char| c.is_whitespace())
            .unwrap_or(text.len() - cursor);
    let items: Vec<Item> = if let Some(name) = token.strip_prefix('/') {
        if start != 0 || before.contains('\n') {
            return None;
        }
        commands::complete(name)
            .into_iter()
            .map(|c| Item {
                replacement: format!("/{}", c.name),
                detail: if c.args.is_empty() {
                    c.help.to_string()
                } else {
                    format!("{} — {}", c.args, c.help)
                },
                kind: ItemKind::Command,
            })
            .collect()
    } else if let Some(word) = token.strip_prefix('@') {
        let mut items: Vec<Item> = models
            .iter()
            .filter(|m| model_matches(m, word))
            .map(|m| Item {
                replacement: format!("@{m}"),
                detail: "send to this model only".to_string(),
                kind: ItemKind::Model,
            })
            .collect();
        let lower = word.to_lowercase();
        let prefixed = files.iter().filter(|f| f.starts_with(word));
        let inside = files
            .iter()
            .filter(|f| !f.starts_with(word) && f.to_lowercase().contains(&lower));
        items.extend(prefixed.chain(inside).take(MAX_ITEMS).map(|f| Item {
            replacement: format!("@{f}"),
            detail: "attach this file".to_string(),
            kind: ItemKind::Path,
        }));
        items
    } else {
        return None;
    };
    if items.is_empty() {
        return None;
    }
    Some(Completion {
        start,
        end,
        items,
        selected: 0,
    })
}

/// Whether `@word` names `label`: the whole label (`demo/good`), or its model part (`good`),
/// or a prefix of either.
pub fn model_matches(label: &str, word: &str) -> bool {
    let model = label.split_once('/').map(|(_, m)| m).unwrap_or(label);
    label.starts_with(word) || model.starts_with(word)
}

/// Whether `@word` names exactly `label` (full label or model part).
pub fn model_is(label: &str, word: &str) -> bool {
    let model = label.split_once('/').map(|(_, m)| m).unwrap_or(label);
    label == word || model == word
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn commands_complete_only_as_the_first_word() {
        let c = compute("/co", 3, &[], &[]).unwrap();
        let names: Vec<&str> = c.items.iter().map(|i| i.replacement.as_str()).collect();
        assert_eq!(names, ["/config", "/compact"]);
        assert_eq!((c.start, c.end), (0, 3));
        assert!(compute("x /co", 5, &[], &[]).is_none());
        assert!(compute("/zzz", 4, &[], &[]).is_none());
    }

    #[test]
    fn at_tokens_offer_models_then_files() {
        let models = s(&["demo/good", "demo/sloppy"]);
        let files = s(&["src/lib.rs", "src/good.rs", "README.md"]);
        let c = compute("fix @go now", 7, &models, &files).unwrap();
        let got: Vec<&str> = c.items.iter().map(|i| i.replacement.as_str()).collect();
        assert_eq!(got, ["@demo/good", "@src/good.rs"]);
        assert_eq!((c.start, c.end), (4, 7));
        let c = compute("@src/", 5, &models, &files).unwrap();
        assert_eq!(c.items.len(), 2);
        assert!(compute("plain", 5, &models, &files).is_none());
    }
}
