//! Keys of the review screen: moving between models, files, hunks and search matches, the
//! layout, and the ways out (transcript, shell, prompt); picking and choosing are in
//! [`super::pick`].

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::super::action::{Effect, RewindScope};
use super::super::keymap::{self, Context, KeyAction};
use super::super::layout::diff_height;
use super::super::review::doc::DiffMode;
use super::super::review::{DiffSearch, ReviewState};
use super::super::state::{App, Overlay, Screen};
use super::{comments, compare, lines, pick};

/// Handles a key on the review screen; `None` leaves it to the prompt's context (Ctrl+C,
/// Ctrl+O, Ctrl+X...): keys with Ctrl or Alt always go there.
pub fn key(app: &mut App, key: KeyEvent) -> Option<Vec<Effect>> {
    if key
        .modifiers
        .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
    {
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
        comments::draft_key(app, key);
        return Some(Vec::new());
    }
    if review.search.as_ref().is_some_and(|s| s.typing) {
        search_key(app, key);
        return Some(Vec::new());
    }
    if review.versions.is_some() {
        compare::versions_key(app, keymap::action(Context::Review, key), height);
        return Some(Vec::new());
    }
    let page = height.saturating_sub(2).max(1) as isize;
    let Some(action) = keymap::action(Context::Review, key) else {
        app.dirty = false;
        return Some(Vec::new());
    };
    match action {
        KeyAction::ReviewBack => {
            if review.search.take().is_none() {
                app.screen = Screen::Panels;
            }
        }
        KeyAction::ReviewClose => app.screen = Screen::Panels,
        KeyAction::NextModel => review.select_model(1),
        KeyAction::PrevModel => review.select_model(-1),
        KeyAction::DiffDown => review.scroll_by(1, height),
        KeyAction::DiffUp => review.scroll_by(-1, height),
        KeyAction::DiffPageDown => review.scroll_by(page, height),
        KeyAction::DiffPageUp => review.scroll_by(-page, height),
        KeyAction::DiffTop => review.scroll = 0,
        KeyAction::DiffBottom => review.scroll = review.bottom(height),
        KeyAction::NextFile => {
            if !review.select_file(1) {
                app.info("last file of this model (Tab: next model)");
            }
        }
        KeyAction::PrevFile => {
            if !review.select_file(-1) {
                app.info("first file of this model (Shift+Tab: previous model)");
            }
        }
        KeyAction::NextHunk => step(app, true),
        KeyAction::PrevHunk => step(app, false),
        KeyAction::DiffSearch => {
            review.search = Some(DiffSearch {
                typing: true,
                ..DiffSearch::default()
            });
        }
        KeyAction::ToggleLayout => toggle_layout(review),
        KeyAction::CompareNext => compare::cycle(app),
        KeyAction::Versions => compare::open_versions(app),
        KeyAction::ScrollLeft => compare::hscroll(app, false),
        KeyAction::ScrollRight => compare::hscroll(app, true),
        KeyAction::ToggleWrap => review.toggle_wrap(),
        // Picks are relative to the base: refused while comparing with another model.
        KeyAction::PickHunk
        | KeyAction::PickFile
        | KeyAction::PickLine
        | KeyAction::NextLine
        | KeyAction::PrevLine
        | KeyAction::Comment
            if review.against.is_some() =>
        {
            compare::refuse_pick(app);
        }
        KeyAction::PickHunk => pick::hunk(app),
        KeyAction::NextLine => lines::step(app, true, height),
        KeyAction::PrevLine => lines::step(app, false, height),
        KeyAction::PickLine => lines::pick(app),
        KeyAction::PickFile => pick::file(app),
        KeyAction::Comment => comments::start(app),
        KeyAction::SendComments => return Some(comments::send(app, false)),
        KeyAction::SendAllComments => return Some(comments::send(app, true)),
        KeyAction::DropComment => comments::remove_last(app),
        KeyAction::PickModel => return Some(pick::model(app)),
        KeyAction::Apply => return Some(pick::apply(app)),
        KeyAction::NoneOfThem => return Some(pick::none_of_them(app)),
        KeyAction::RateGood => pick::rate(app, versus_core::session::Rating::Good),
        KeyAction::RateBad => pick::rate(app, versus_core::session::Rating::Bad),
        KeyAction::RateTie => pick::rate(app, versus_core::session::Rating::Tie),
        KeyAction::Transcript => transcript(app),
        KeyAction::Shell => return Some(open_shell(app)),
        KeyAction::Rewind => {
            if app.running() {
                app.error("models are still running: wait for them before rewinding");
                return Some(Vec::new());
            }
            return Some(vec![Effect::PlanRewind {
                scope: RewindScope::Both,
            }]);
        }
        KeyAction::Help => app.overlay = Some(Overlay::Help),
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

fn search_key(app: &mut App, key: KeyEvent) {
    let Some(review) = app.review.as_mut() else {
        return;
    };
    let Some(search) = review.search.clone() else {
        return;
    };
    match keymap::action(Context::ReviewSearch, key) {
        Some(KeyAction::ReviewSearchCancel) => review.search = None,
        Some(KeyAction::ReviewSearchKeep) => {
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
        Some(KeyAction::ReviewSearchErase) => {
            let mut query = search.query;
            query.pop();
            review.search_for(query, true);
        }
        _ => {
            if let KeyCode::Char(c) = key.code {
                let mut query = search.query;
                query.push(c);
                review.search_for(query, true);
            }
        }
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
