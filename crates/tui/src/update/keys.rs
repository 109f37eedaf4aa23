//! The keyboard: overlays, dialogs and the history search take keys first, then the review
//! screen's keys when it is shown, then the completion list, then the prompt's context (global
//! keys: cancel, focus, scroll, and the editor). Each reads the key in [`keymap`] and acts on
//! the action; a printable character no binding takes is typed into the prompt.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::super::action::Effect;
use super::super::complete::ItemKind;
use super::super::keymap::{self, Context, KeyAction};
use super::super::layout::panel_height;
use super::super::state::{App, CONFIRM_MS, Confirm, ConfirmKey, Overlay, Screen};
use super::super::strings;
use super::command::submit;
use super::{dialog, refresh_completion, review};

/// Handles one key press: the context of the moment reads it in the key table
/// ([`keymap::action`]) and the handler acts on the action.
pub fn handle(app: &mut App, key: KeyEvent) -> Vec<Effect> {
    if key.kind == KeyEventKind::Release {
        app.dirty = false;
        return Vec::new();
    }
    // Any key ends a "press again" question; only the key that asked, pressed again, confirms.
    let armed = app.confirm.take();
    if app.overlay.is_some() {
        overlay_key(app, key);
        return Vec::new();
    }
    if app.dialog.is_some() {
        app.status = None;
        return dialog::key(app, key);
    }
    if app.prompt.search.is_some() {
        search_key(app, key);
        return Vec::new();
    }
    app.status = None;
    if app.screen == Screen::Review
        && let Some(effects) = review::key(app, key)
    {
        return effects;
    }
    let action = app
        .completion
        .as_ref()
        .and_then(|_| keymap::action(Context::Completion, key))
        .or_else(|| keymap::action(Context::Prompt, key));
    match action {
        Some(action) => prompt_action(app, action, armed),
        None => type_text(app, key),
    }
}

/// An action of the prompt's context (or the completion list's, which sits over it).
fn prompt_action(app: &mut App, action: KeyAction, armed: Option<Confirm>) -> Vec<Effect> {
    match action {
        KeyAction::ToggleReview => {
            toggle_review(app);
            return Vec::new();
        }
        KeyAction::Interrupt => return ctrl_c(app, armed),
        KeyAction::Quit => {
            if app.prompt.is_empty() && !app.running() {
                return quit(app, ConfirmKey::CtrlD, armed);
            }
            app.dirty = false;
            return Vec::new();
        }
        KeyAction::CancelAll => return escape(app, armed),
        KeyAction::CancelFocused => return cancel_focused(app),
        KeyAction::Complete => {
            accept_completion(app);
            return Vec::new();
        }
        KeyAction::CompletionUp => {
            select(app, -1);
            return Vec::new();
        }
        KeyAction::CompletionDown => {
            select(app, 1);
            return Vec::new();
        }
        KeyAction::CloseList => {
            app.completion = None;
            app.completion_dismissed = true;
            return Vec::new();
        }
        KeyAction::NextPanel => {
            move_focus(app, 1);
            return Vec::new();
        }
        KeyAction::PrevPanel => {
            move_focus(app, -1);
            return Vec::new();
        }
        KeyAction::ScrollUp => {
            scroll(app, true);
            return Vec::new();
        }
        KeyAction::ScrollDown => {
            scroll(app, false);
            return Vec::new();
        }
        KeyAction::ScrollBottom => {
            if let Some(p) = app.panels.get_mut(app.focus) {
                p.scroll = 0;
            }
            return Vec::new();
        }
        KeyAction::ScrollTop => {
            let height = panel_height(app, app.focus);
            if let Some(p) = app.panels.get_mut(app.focus) {
                p.scroll = p.transcript.row_count().saturating_sub(height);
            }
            return Vec::new();
        }
        KeyAction::ToolOutput => {
            open_results(app);
            return Vec::new();
        }
        KeyAction::HistorySearch => {
            app.completion = None;
            app.prompt.search_back(&app.history);
            return Vec::new();
        }
        KeyAction::Send => return enter(app, armed),
        KeyAction::Newline => app.prompt.insert("\n"),
        KeyAction::Commands => app.prompt.insert("/"),
        KeyAction::CursorUp => {
            if !app.prompt.up() {
                app.prompt.history_back(&app.history);
            }
        }
        KeyAction::CursorDown => {
            if !app.prompt.down() {
                app.prompt.history_forward(&app.history);
            }
        }
        KeyAction::ClearPrompt => app.prompt.clear(),
        KeyAction::DeleteWord => app.prompt.delete_word(),
        KeyAction::LineStart => app.prompt.home(),
        KeyAction::LineEnd => app.prompt.end(),
        KeyAction::CursorLeft => app.prompt.left(),
        KeyAction::CursorRight => app.prompt.right(),
        KeyAction::DeleteBack => app.prompt.backspace(),
        KeyAction::DeleteForward => app.prompt.delete(),
        _ => {
            app.dirty = false;
            return Vec::new();
        }
    }
    edited(app);
    Vec::new()
}

/// A key no binding of the prompt takes: a printable character is typed, anything else is
/// ignored.
fn type_text(app: &mut App, key: KeyEvent) -> Vec<Effect> {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let alt = key.modifiers.contains(KeyModifiers::ALT);
    match key.code {
        KeyCode::Char(c) if !ctrl && !alt => {
            let mut buf = [0u8; 4];
            app.prompt.insert(c.encode_utf8(&mut buf));
            edited(app);
        }
        _ => app.dirty = false,
    }
    Vec::new()
}

/// After an edit of the prompt: the completion list follows the text again.
fn edited(app: &mut App) {
    app.completion_dismissed = false;
    refresh_completion(app);
}

/// A key over `/help` or another overlay: the table's keys scroll it, any other closes it.
fn overlay_key(app: &mut App, key: KeyEvent) {
    match keymap::action(Context::Overlay, key) {
        Some(KeyAction::OverlayDown) => overlay_down(app, 1),
        Some(KeyAction::OverlayPageDown) => overlay_down(app, 10),
        Some(KeyAction::OverlayUp) => app.overlay_scroll = app.overlay_scroll.saturating_sub(1),
        Some(KeyAction::OverlayPageUp) => {
            app.overlay_scroll = app.overlay_scroll.saturating_sub(10);
        }
        _ => {
            app.overlay = None;
            app.overlay_scroll = 0;
        }
    }
}

/// Opens the focused panel's tool results, whole, in the overlay, scrolled to the latest call
/// (earlier ones are above it); a status line says so when it has none yet.
fn open_results(app: &mut App) {
    let Some(panel) = app.panels.get(app.focus) else {
        app.dirty = false;
        return;
    };
    let Some((lines, last)) = panel.results_text() else {
        app.status = Some(super::super::state::Status {
            text: strings::NO_TOOL_RESULTS.to_string(),
            error: false,
        });
        return;
    };
    app.overlay = Some(Overlay::Info {
        title: format!("tool results · {}", app.shown(app.focus)),
        lines,
    });
    let screen = ratatui::layout::Rect::new(0, 0, app.size.0, app.size.1);
    let panels = super::super::layout::areas(app, screen).panels;
    let end = super::super::view::overlay::max_scroll(app, panels);
    app.overlay_scroll = super::super::view::overlay::rows_before(app, panels, last).min(end);
}

/// Scrolls the overlay down `rows`, no further than its end at the terminal's size, so a key
/// up after the end moves it at once.
fn overlay_down(app: &mut App, rows: usize) {
    let screen = ratatui::layout::Rect::new(0, 0, app.size.0, app.size.1);
    let panels = super::super::layout::areas(app, screen).panels;
    let end = super::super::view::overlay::max_scroll(app, panels);
    app.overlay_scroll = app.overlay_scroll.saturating_add(rows).min(end);
}

fn search_key(app: &mut App, key: KeyEvent) {
    let history = std::mem::take(&mut app.history);
    match keymap::action(Context::HistorySearch, key) {
        Some(KeyAction::SearchCancel) => app.prompt.search_end(&history, false),
        Some(KeyAction::SearchTake) => app.prompt.search_end(&history, true),
        Some(KeyAction::SearchOlder) => app.prompt.search_back(&history),
        Some(KeyAction::SearchErase) => app.prompt.search_type(&history, |q| {
            q.pop();
        }),
        _ => match key.code {
            KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                app.prompt.search_type(&history, |q| q.push(c));
            }
            _ => {}
        },
    }
    app.history = history;
}

fn ctrl_c(app: &mut App, armed: Option<Confirm>) -> Vec<Effect> {
    if app.running() {
        app.info("cancelling every model…");
        return vec![Effect::CancelAll];
    }
    if !app.prompt.is_empty() {
        app.prompt.clear();
        app.completion = None;
        return Vec::new();
    }
    quit(app, ConfirmKey::CtrlC, armed)
}

/// Ctrl+C or Ctrl+D on an empty prompt: leave, unless a turn waits for its choice; then ask
/// first (the turn is not lost, `--continue` brings it back, but leaving was likely a slip).
fn quit(app: &mut App, key: ConfirmKey, armed: Option<Confirm>) -> Vec<Effect> {
    let unchosen = app
        .review
        .as_ref()
        .filter(|r| r.decided.is_none() && r.sets.iter().any(|s| !s.is_empty()))
        .map(|r| r.turn);
    if let Some(turn) = unchosen
        && !confirmed(app, key, armed)
    {
        let name = if key == ConfirmKey::CtrlD {
            "Ctrl+D"
        } else {
            "Ctrl+C"
        };
        let demo = app.session.demo.then(|| app.session.project.clone());
        ask(app, key, strings::confirm_quit(name, turn, demo.as_deref()));
        return Vec::new();
    }
    app.quit = true;
    vec![Effect::Quit]
}

/// Whether `armed` is `key`'s own question, still standing.
fn confirmed(app: &App, key: ConfirmKey, armed: Option<Confirm>) -> bool {
    armed.is_some_and(|c| c.key == key && app.now_ms < c.until_ms)
}

/// Asks `question` on the status line; `key` again within [`CONFIRM_MS`] confirms.
fn ask(app: &mut App, key: ConfirmKey, question: String) {
    app.info(question);
    app.confirm = Some(Confirm {
        key,
        until_ms: app.now_ms.saturating_add(CONFIRM_MS),
    });
}

fn escape(app: &mut App, armed: Option<Confirm>) -> Vec<Effect> {
    if app.completion.is_some() {
        app.completion = None;
        app.completion_dismissed = true;
        return Vec::new();
    }
    if app.running() {
        if confirmed(app, ConfirmKey::Esc, armed) {
            app.info("cancelling every model…");
            return vec![Effect::CancelAll];
        }
        let running = app.panels.iter().filter(|p| p.status.is_active()).count();
        ask(app, ConfirmKey::Esc, strings::confirm_cancel(running));
        return Vec::new();
    }
    if app.zoom {
        app.zoom = false;
    }
    Vec::new()
}

/// Ctrl+X: cancels the focused model; on the review, the model selected in its table (the
/// panels' focus follows it).
fn cancel_focused(app: &mut App) -> Vec<Effect> {
    if app.screen == Screen::Review
        && let Some(panel) = app
            .review
            .as_ref()
            .and_then(|r| r.model())
            .and_then(|m| app.panel_of(&m.label))
    {
        app.focus = panel;
    }
    let shown = app.shown(app.focus);
    match app.panels.get(app.focus) {
        Some(p) if p.status.is_active() => {
            let label = p.label.clone();
            app.info(format!("cancelling {shown}…"));
            vec![Effect::Cancel { label }]
        }
        Some(_) => {
            app.info(format!("{shown} is not running"));
            Vec::new()
        }
        None => Vec::new(),
    }
}

/// Ctrl+O: between the panels and the review of the last turn.
pub fn toggle_review(app: &mut App) {
    match app.screen {
        Screen::Review => app.screen = Screen::Panels,
        Screen::Panels => toggle_review_open(app),
    }
}

/// Opens the review of the last turn (`/review`); the first time, on the best model so far
/// ([`versus_core::review::best`]).
pub fn toggle_review_open(app: &mut App) {
    let best = app
        .review
        .as_ref()
        .filter(|r| !r.opened)
        .and_then(|r| r.best(|label| super::answers::ended_well(app, label)));
    match app.screen {
        Screen::Review => {}
        Screen::Panels => match app.review.as_mut() {
            Some(review) => {
                if let Some(best) = best {
                    review.open_on(best);
                }
                review.opened = true;
                review.ensure_doc();
                app.screen = Screen::Review;
                app.zoom = false;
                app.completion = None;
            }
            None => app.info("nothing to review yet: send a prompt first"),
        },
    }
}

fn enter(app: &mut App, armed: Option<Confirm>) -> Vec<Effect> {
    if let Some(c) = app.completion.clone()
        && let Some(item) = c.items.get(c.selected)
    {
        let typed = app.prompt.raw().get(c.start..c.end).unwrap_or("");
        let exact = typed == item.replacement;
        match item.kind {
            ItemKind::Command => {
                if !exact {
                    app.prompt.replace(c.start, c.end, &item.replacement);
                }
                app.completion = None;
                return submit(app);
            }
            ItemKind::Model | ItemKind::Path if !exact => {
                accept_completion(app);
                return Vec::new();
            }
            _ => app.completion = None,
        }
    }
    if app.prompt.is_empty() {
        if !app.panels.is_empty() {
            app.zoom = !app.zoom;
        }
        return Vec::new();
    }
    // A new prompt opens a new review: comments written on this one and not sent would be
    // gone without a word, so the first Enter asks.
    let unsent = app.review.as_ref().map_or(0, |r| r.comments.len());
    let command = app.prompt.raw().trim_start().starts_with('/');
    if unsent > 0 && !command && !confirmed(app, ConfirmKey::SendOverComments, armed) {
        ask(
            app,
            ConfirmKey::SendOverComments,
            strings::confirm_drop_comments(unsent),
        );
        return Vec::new();
    }
    submit(app)
}

fn accept_completion(app: &mut App) {
    let Some(c) = app.completion.take() else {
        return;
    };
    let Some(item) = c.items.get(c.selected) else {
        return;
    };
    let next_is_space = app.prompt.raw()[c.end..].starts_with(char::is_whitespace);
    let with = if next_is_space || item.kind == ItemKind::Command && c.items.len() > 1 {
        item.replacement.clone()
    } else {
        format!("{} ", item.replacement)
    };
    app.prompt.replace(c.start, c.end, &with);
    refresh_completion(app);
    // A finished token (followed by a space) closes the list.
    if app.prompt.raw()[..app.prompt.cursor()].ends_with(' ') {
        app.completion = None;
    }
}

fn select(app: &mut App, delta: isize) {
    if let Some(c) = &mut app.completion {
        let n = c.items.len() as isize;
        c.selected = (c.selected as isize + delta).rem_euclid(n.max(1)) as usize;
    }
}

/// Moves the focus along the panels as they are laid out (shuffled in a blind turn).
fn move_focus(app: &mut App, delta: isize) {
    let order = app.panel_order();
    let n = order.len() as isize;
    if n > 0 {
        let at = order.iter().position(|&i| i == app.focus).unwrap_or(0) as isize;
        app.focus = order[(at + delta).rem_euclid(n) as usize];
    }
}

fn scroll(app: &mut App, up: bool) {
    let height = panel_height(app, app.focus);
    let page = height.saturating_sub(1).max(1);
    if let Some(p) = app.panels.get_mut(app.focus) {
        let max = p.transcript.row_count().saturating_sub(height);
        p.scroll = if up {
            (p.scroll + page).min(max)
        } else {
            p.scroll.saturating_sub(page)
        };
    }
}
