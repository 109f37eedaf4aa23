//! Pure state transitions: `update(app, msg) -> effects`.
//!
//! No I/O, no clock, no async: the event loop feeds messages in and carries the returned
//! effects out, so every behaviour of the interface (keys, commands, how a run shows up) is
//! tested here with plain values. Split by source: `keys` (the keyboard), `review` (keys of
//! the review screen: moving around), `pick` (picking, applying, none of them, ratings),
//! `dialog` (the apply and rewind questions), `engine` (news from runs and answers to
//! effects), `answers` (the review's answers: change sets, checks, preview, choice,
//! rewind), `command` (slash commands and sending a prompt).

mod answers;
mod command;
mod comments;
mod compare;
mod dialog;
mod engine;
mod keys;
mod lines;
mod mouse;
mod pick;
mod review;

pub use answers::check_notes;

use super::action::{Effect, Msg};
use super::complete;
use super::state::App;

/// Applies one message and returns what the driver must do.
pub fn update(app: &mut App, msg: Msg) -> Vec<Effect> {
    app.dirty = true;
    match msg {
        Msg::Key(key) => keys::handle(app, key),
        Msg::Mouse(event) => {
            mouse::handle(app, event);
            Vec::new()
        }
        Msg::Paste(text) => {
            if app.prompt.search.is_some() {
                let history = std::mem::take(&mut app.history);
                app.prompt
                    .search_type(&history, |q| q.push_str(text.lines().next().unwrap_or("")));
                app.history = history;
            } else {
                app.prompt.paste(&text);
                app.completion_dismissed = false;
                refresh_completion(app);
            }
            Vec::new()
        }
        Msg::Resize { width, height } => {
            app.size = (width, height);
            Vec::new()
        }
        Msg::Tick => {
            app.dirty = app.running();
            if app.confirm.is_some_and(|c| app.now_ms >= c.until_ms) {
                // The question lapsed: take it off the status line too.
                app.confirm = None;
                app.status = None;
                app.dirty = true;
            }
            Vec::new()
        }
        Msg::Focus(focused) => {
            app.focused = focused;
            app.dirty = false;
            Vec::new()
        }
        Msg::Terminate => {
            app.quit = true;
            vec![Effect::CancelAll, Effect::Quit]
        }
        Msg::Engine(m) => engine::handle(app, m),
    }
}

/// Recomputes the completion list after an edit.
pub(crate) fn refresh_completion(app: &mut App) {
    // While blind mode hides the names, `@` offers files only: the list would name the models.
    let models: &[String] = if app.hiding() { &[] } else { &app.roster };
    app.completion = if app.completion_dismissed {
        None
    } else {
        complete::compute(app.prompt.raw(), app.prompt.cursor(), models, &app.files)
    };
}
