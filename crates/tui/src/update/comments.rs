//! Inline review comments (issue 14 item 17): `m` writes a comment on the line under the line
//! cursor (or on the hunk on screen), the basket pane lists them, and `M` sends the selected
//! model's comments back to it as the next turn's prompt (`A`: every comment, to every model).
//! Sending builds an ordinary [`TurnRequest`], so the engine records it like a typed prompt and
//! the model reads each comment with its file, line and the quoted code.

use crossterm::event::{KeyCode, KeyEvent};

use super::super::action::{Effect, Target, TurnRequest};
use super::super::keymap::{self, Context, KeyAction};
use super::super::review::ReviewComment;
use super::super::state::{App, Screen};
use super::super::strings;
use versus_core::workspace::changeset::{Hunk, LineKind};

/// `m`: starts a comment on the cursor's line, else on the hunk on screen. A comment already
/// written there comes back for editing (Enter on an empty text removes it).
pub fn start(app: &mut App) {
    let Some(review) = app.review.as_mut() else {
        return;
    };
    review.ensure_doc();
    let Some(label) = review.model().map(|m| m.label.clone()) else {
        return;
    };
    let (Some(file), Some(hunk)) = (review.current_file(), review.current_hunk()) else {
        app.error(strings::COMMENT_NO_PLACE);
        return;
    };
    let (place, quote) = match review.cursor_line() {
        Some(line) => line_anchor(hunk, line),
        None => hunk_anchor(hunk),
    };
    let mut draft = ReviewComment {
        label,
        path: file.path.clone(),
        place,
        quote,
        text: String::new(),
    };
    if let Some(old) = review.comments.iter().find(|c| same_place(c, &draft)) {
        draft.text = old.text.clone();
    }
    review.draft = Some(draft);
}

/// A key while a comment is being typed: Enter keeps it (replacing one at the same place; an
/// empty text removes that one), Esc drops the draft.
pub fn draft_key(app: &mut App, key: KeyEvent) {
    let Some(review) = app.review.as_mut() else {
        return;
    };
    let Some(draft) = review.draft.as_mut() else {
        return;
    };
    match keymap::action(Context::ReviewComment, key) {
        Some(KeyAction::CommentCancel) => review.draft = None,
        Some(KeyAction::CommentErase) => {
            draft.text.pop();
        }
        Some(KeyAction::CommentKeep) => {
            let Some(mut draft) = review.draft.take() else {
                return;
            };
            draft.text = draft.text.trim().to_string();
            let old = review.comments.iter().position(|c| same_place(c, &draft));
            let at = format!("{}:{}", draft.path, draft.place);
            match (old, draft.text.is_empty()) {
                (Some(i), true) => {
                    review.comments.remove(i);
                    app.info(format!("{} {at}", strings::COMMENT_REMOVED));
                }
                (None, true) => {}
                (Some(i), false) => {
                    review.comments[i] = draft;
                    app.info(format!("{} {at}", strings::COMMENT_SAVED));
                }
                (None, false) => {
                    review.comments.push(draft);
                    app.info(format!(
                        "{} {at} · {}",
                        strings::COMMENT_SAVED,
                        strings::COMMENT_HINT
                    ));
                }
            }
        }
        _ => {
            if let KeyCode::Char(c) = key.code {
                draft.text.push(c);
            }
        }
    }
}

/// Backspace on the review: removes the selected model's latest comment.
pub fn remove_last(app: &mut App) {
    let Some(review) = app.review.as_mut() else {
        return;
    };
    let Some(label) = review.model().map(|m| m.label.clone()) else {
        return;
    };
    let Some(i) = review.comments.iter().rposition(|c| c.label == label) else {
        app.info(strings::COMMENT_NONE);
        return;
    };
    let gone = review.comments.remove(i);
    app.info(format!(
        "{} {}:{}",
        strings::COMMENT_REMOVED,
        gone.path,
        gone.place
    ));
}

/// `M` (`all` false): the selected model's comments, to that model; `A` (`all` true): every
/// comment, to every model of the session. The comments sent leave the list; the prompt box
/// is left as it was.
pub fn send(app: &mut App, all: bool) -> Vec<Effect> {
    if let Some(why) = super::command::busy(app) {
        app.error(why);
        return Vec::new();
    }
    let Some(review) = app.review.as_ref() else {
        return Vec::new();
    };
    let Some(label) = review.model().map(|m| m.label.clone()) else {
        return Vec::new();
    };
    let chosen: Vec<ReviewComment> = review
        .comments
        .iter()
        .filter(|c| all || c.label == label)
        .cloned()
        .collect();
    if chosen.is_empty() {
        app.error(strings::COMMENT_NONE_TO_SEND);
        return Vec::new();
    }
    app.sync_panels();
    let targets: Vec<Target> = app
        .panels
        .iter()
        .enumerate()
        .filter(|(_, p)| all || p.label == label)
        .map(|(panel, p)| Target {
            panel,
            label: p.label.clone(),
        })
        .collect();
    if targets.is_empty() {
        let who = app.shown_label(&label);
        app.error(format!("{who} {}", strings::COMMENT_NO_PANEL));
        return Vec::new();
    }
    let prompt = comments_prompt(app, &chosen, all);
    // The typed line goes to the history and back to the prompt box (a failed start, a rewind):
    // while names are hidden it must not carry the real name, so it has no `@model` then.
    let line = if all || app.hiding() {
        prompt.clone()
    } else {
        format!("@{label} {prompt}")
    };
    if let Some(review) = app.review.as_mut() {
        review.comments.retain(|c| !(all || c.label == label));
    }
    let request = TurnRequest {
        turn: app.turn + 1,
        prompt,
        line: line.clone(),
        targets,
        attachments: Vec::new(),
        settings: app.settings.clone(),
        blind: app.blind,
        remember: true,
    };
    app.submitting = true;
    app.pending = Some((request.clone(), line));
    app.screen = Screen::Panels;
    vec![Effect::Submit(request)]
}

/// The prompt that carries the comments: one bullet per comment with `path:line`, the quoted
/// code and the text. Sent to all models, each comment also says whose diff it is about (the
/// shown name, so blind mode reveals nothing).
pub fn comments_prompt(app: &App, comments: &[ReviewComment], all: bool) -> String {
    let mut out = String::from(if all {
        strings::COMMENT_PROMPT_ALL
    } else {
        strings::COMMENT_PROMPT_ONE
    });
    for c in comments {
        out.push_str("\n- ");
        if all {
            out.push_str(&format!("({}) ", app.shown_label(&c.label)));
        }
        if c.quote.contains('\n') {
            out.push_str(&format!("{}:{}: {}\n", c.path, c.place, c.text));
            for q in c.quote.lines() {
                out.push_str(&format!("    {q}\n"));
            }
            out.pop();
        } else {
            out.push_str(&format!("{}:{} `{}`: {}", c.path, c.place, c.quote, c.text));
        }
    }
    out
}

fn same_place(a: &ReviewComment, b: &ReviewComment) -> bool {
    a.label == b.label && a.path == b.path && a.place == b.place
}

/// Line `line` of a hunk: its number in the model's version (an added line), or `-N` in the
/// original for a removed line; and its text.
fn line_anchor(hunk: &Hunk, line: usize) -> (String, String) {
    let (mut old, mut new) = (hunk.old.indices().start, hunk.new.indices().start);
    for (i, l) in hunk.lines.iter().enumerate() {
        if i == line {
            let place = match l.kind {
                LineKind::Removed => format!("-{}", old + 1),
                _ => (new + 1).to_string(),
            };
            return (place, l.text.trim().to_string());
        }
        match l.kind {
            LineKind::Context => {
                old += 1;
                new += 1;
            }
            LineKind::Removed => old += 1,
            LineKind::Added => new += 1,
        }
    }
    hunk_anchor(hunk)
}

/// A whole hunk: its span in the model's version and its changed lines.
fn hunk_anchor(hunk: &Hunk) -> (String, String) {
    let span = hunk.new.indices();
    let place = if span.len() <= 1 {
        (span.start + 1).to_string()
    } else {
        format!("{}-{}", span.start + 1, span.end)
    };
    let quote: Vec<String> = hunk
        .lines
        .iter()
        .filter_map(|l| match l.kind {
            LineKind::Context => None,
            LineKind::Removed => Some(format!("-{}", l.text.trim_end())),
            LineKind::Added => Some(format!("+{}", l.text.trim_end())),
        })
        .collect();
    (place, quote.join("\n"))
}
