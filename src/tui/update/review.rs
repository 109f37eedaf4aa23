//! Keys of the review screen: moving between models, files, hunks and search matches, the
//! layout, and the ways out (transcript, shell, prompt); picking and choosing are in
//! [`super::pick`].

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::super::action::{Effect, RewindScope};
use super::super::layout::diff_height;
use super::super::review::doc::DiffMode;
use super::super::review::{DiffSearch, ReviewState};
use super::super::state::{App, Overlay, Screen};
use super::{comments, compare, lines, pick};

/// Handles a key on the review screen; `None` leaves it to the global keys (Ctrl+C...).
pub fn key(app: &mut App, key: KeyEvent) -> Option<Vec<Effect>> {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    if ctrl && key.code == KeyCode::Char('x') {
        // Ctrl+X cancels the model selected in the table (the panels' focus follows it).
        if let Some(panel) = app
            .review
            .as_ref()
            .and_then(|r| r.model())
            .and_then(|m| app.panel_of(&m.label))
        {
            app.focus = panel;
        }
        return None;
    }
    if ctrl || key.modifiers.contains(KeyModifiers::ALT) {
        return None;
    }
    let height = diff_height(app);
    let width = super::super::layout::diff_width(app);
    let Some(review) = app.review.as_mut() else {
        app.screen = Screen::Panels;
        return None;
    };
    review.diff_rows = height;
    review.diff_width = width;
    if review.draft.is_some() {
        comments::draft_key(app, key.code);
        return Some(Vec::new());
    }
    if review.search.as_ref().is_some_and(|s| s.typing) {
        search_key(app, key.code);
        return Some(Vec::new());
    }
    if review.versions.is_some() {
        compare::versions_key(app, key.code, height);
        return Some(Vec::new());
    }

    let page = height.saturating_sub(2).max(1) as isize;
    match key.code {
        KeyCode::Esc => {
            if review.search.take().is_none() {
                app.screen = Screen::Panels;
            }
        }
        KeyCode::Char('q') => app.screen = Screen::Panels,
        KeyCode::Tab => review.select_model(1),
        KeyCode::BackTab => review.select_model(-1),
        KeyCode::Down | KeyCode::Char('j') => review.scroll_by(1, height),
        KeyCode::Up | KeyCode::Char('k') => review.scroll_by(-1, height),
        KeyCode::PageDown => review.scroll_by(page, height),
        KeyCode::PageUp => review.scroll_by(-page, height),
        KeyCode::Home | KeyCode::Char('g') => review.scroll = 0,
        KeyCode::End | KeyCode::Char('G') => review.scroll = review.bottom(height),
        KeyCode::Right | KeyCode::Char(']') | KeyCode::Char('l') => {
            if !review.select_file(1) {
                app.info("last file of this model (Tab: next model)");
            }
        }
        KeyCode::Left | KeyCode::Char('[') | KeyCode::Char('h') => {
            if !review.select_file(-1) {
                app.info("first file of this model (Shift+Tab: previous model)");
            }
        }
        KeyCode::Char('n') => step(app, true),
        KeyCode::Char('N') | KeyCode::Char('p') => step(app, false),
        KeyCode::Char('/') => {
            review.search = Some(DiffSearch {
                typing: true,
                ..DiffSearch::default()
            });
        }
        KeyCode::Char('s') => toggle_layout(review),
        KeyCode::Char('v') => compare::cycle(app),
        KeyCode::Char('V') => compare::open_versions(app),
        KeyCode::Char('<') => compare::hscroll(app, false),
        KeyCode::Char('>') => compare::hscroll(app, true),
        KeyCode::Char('w') => review.toggle_wrap(),
        // Picks are relative to the base: refused while comparing with another model.
        KeyCode::Char(' ' | 'f' | 'J' | 'K' | 'L' | 'm') if review.against.is_some() => {
            compare::refuse_pick(app);
        }
        KeyCode::Char(' ') => pick::hunk(app),
        KeyCode::Char('J') => lines::step(app, true, height),
        KeyCode::Char('K') => lines::step(app, false, height),
        KeyCode::Char('L') => lines::pick(app),
        KeyCode::Char('f') => pick::file(app),
        KeyCode::Char('m') => comments::start(app),
        KeyCode::Char('M') => return Some(comments::send(app, false)),
        KeyCode::Char('A') => return Some(comments::send(app, true)),
        KeyCode::Backspace => comments::remove_last(app),
        KeyCode::Char('c') => return Some(pick::model(app)),
        KeyCode::Char('a') => return Some(pick::apply(app)),
        KeyCode::Char('x') => return Some(pick::none_of_them(app)),
        KeyCode::Char('+') => pick::rate(app, "good"),
        KeyCode::Char('-') => pick::rate(app, "bad"),
        KeyCode::Char('=') => pick::rate(app, "tie"),
        KeyCode::Char('t') => transcript(app),
        KeyCode::Char('o') => return Some(open_shell(app)),
        KeyCode::Char('R') => {
            if app.running() {
                app.error("models are still running: wait for them before rewinding");
                return Some(Vec::new());
            }
            return Some(vec![Effect::PlanRewind {
                scope: RewindScope::Both,
            }]);
        }
        KeyCode::Char('?') => app.overlay = Some(Overlay::Help),
        KeyCode::Enter => {}
        _ => {
            app.dirty = false;
            return Some(Vec::new());
        }
    }
    if let Some(review) = app.review.as_mut() {
        review.ensure_doc();
    }
    Some(Vec::new())
}

fn search_key(app: &mut App, code: KeyCode) {
    let Some(review) = app.review.as_mut() else {
        return;
    };
    let Some(search) = review.search.clone() else {
        return;
    };
    match code {
        KeyCode::Esc => review.search = None,
        KeyCode::Enter => {
            if search.query.is_empty() {
                review.search = None;
            } else if search.matches.is_empty() {
                let query = search.query.clone();
                review.search = None;
                app.error(format!("`{query}` is not in this file's diff"));
            } else if let Some(s) = review.search.as_mut() {
                s.typing = false;
            }
        }
        KeyCode::Backspace => {
            let mut query = search.query;
            query.pop();
            review.search_for(query, true);
        }
        KeyCode::Char(c) => {
            let mut query = search.query;
            query.push(c);
            review.search_for(query, true);
        }
        _ => {}
    }
}

/// `n` / `N`: the next search match while a search is active, else the next hunk.
fn step(app: &mut App, forward: bool) {
    let Some(review) = app.review.as_mut() else {
        return;
    };
    if review.search.is_some() {
        if !review.next_match(forward) {
            app.error("no match in this file (Esc clears the search)");
        }
        return;
    }
    if !review.jump_hunk(forward) {
        app.info(if forward {
            "no hunk after this one (Tab: next model)"
        } else {
            "no hunk before this one"
        });
    }
}

/// Unified <-> side by side, keeping the hunk on screen.
fn toggle_layout(review: &mut ReviewState) {
    review.ensure_doc();
    let hunk = review.doc.as_ref().map(|d| d.hunk_at(review.scroll));
    review.mode = match review.mode {
        DiffMode::Unified => DiffMode::SideBySide,
        DiffMode::SideBySide => DiffMode::Unified,
    };
    review.ensure_doc();
    review.scroll = match (hunk, &review.doc) {
        (Some(h), Some(doc)) => doc.hunk_rows.get(h).copied().unwrap_or(0),
        _ => 0,
    };
    if let Some(search) = review.search.take() {
        review.search_for(search.query, false);
    }
}

fn transcript(app: &mut App) {
    let Some(label) = app
        .review
        .as_ref()
        .and_then(|r| r.model())
        .map(|m| m.label.clone())
    else {
        return;
    };
    if let Some(panel) = app.panel_of(&label) {
        app.focus = panel;
        app.zoom = true;
        app.screen = Screen::Panels;
        let who = app.shown(panel);
        app.info(format!(
            "transcript of {who} · PgUp/PgDn scroll · Ctrl+O back to the review"
        ));
    }
}

fn open_shell(app: &mut App) -> Vec<Effect> {
    let Some(label) = app
        .review
        .as_ref()
        .and_then(|r| r.model())
        .map(|m| m.label.clone())
    else {
        return Vec::new();
    };
    let running = app
        .panel_of(&label)
        .and_then(|i| app.panels.get(i))
        .is_some_and(|p| p.status.is_active());
    if running {
        let who = app.shown_label(&label);
        app.error(format!(
            "{who} is still running in its workspace; wait for it or cancel it first"
        ));
        return Vec::new();
    }
    let shown = app.shown_label(&label);
    let hidden = app.hiding();
    vec![Effect::OpenShell {
        label,
        shown,
        hidden,
    }]
}
