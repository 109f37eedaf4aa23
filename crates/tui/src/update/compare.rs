//! Comparing models on the review: `v` steps the diff's other side through the base and every
//! other model that changed the file, `V` opens every model's version of the hunk on screen,
//! and picks are refused while the diff is not against the base (picks always apply to the
//! base; a hunk of a model-against-model diff is no pick). Also the long-line keys: `<` / `>`
//! scroll sideways, `w` wraps.

use super::super::keymap::KeyAction;
use super::super::review::VersionsView;
use super::super::state::App;
use super::super::strings;

/// Columns one `<` / `>` scrolls sideways.
pub const HSCROLL_STEP: isize = 8;

/// `v`: compares with the next model that changed this file, after the last one with the
/// base again; says what is compared now, by the shown names.
pub fn cycle(app: &mut App) {
    let Some(review) = app.review.as_mut() else {
        return;
    };
    review.versions = None;
    if review.against.is_none() && review.compare_targets().is_empty() {
        app.info(strings::COMPARE_NONE);
        return;
    }
    match review.cycle_against() {
        Some(other) => {
            let who = app.shown_label(&other);
            app.info(strings::compare_with(&who));
        }
        None => app.info(strings::COMPARE_BASE),
    }
}

/// Refuses a pick, line cursor or comment while comparing with another model, saying why and
/// how to get back; true when refused.
pub fn refuse_pick(app: &mut App) -> bool {
    let Some(other) = app.review.as_ref().and_then(|r| r.against.clone()) else {
        return false;
    };
    let who = app.shown_label(&other);
    app.error(strings::compare_no_pick(&who));
    true
}

/// `V`: every model's version of the base lines under the hunk on screen, in the shown order.
pub fn open_versions(app: &mut App) {
    let Some(review) = app.review.as_mut() else {
        return;
    };
    if review.against.is_some() {
        app.error(strings::VERSIONS_COMPARING);
        return;
    }
    review.ensure_doc();
    let (Some(file), Some(hunk)) = (review.current_file(), review.current_hunk()) else {
        app.error(strings::VERSIONS_NO_HUNK);
        return;
    };
    let path = file.path.clone();
    let region = hunk.old;
    let base = file.base.clone();
    let versions: Vec<(String, Option<Option<&[u8]>>)> = review
        .order
        .iter()
        .filter_map(|&i| review.models.get(i))
        .filter_map(|m| {
            let set = review.set_of(&m.label)?;
            let version = set
                .file(&path)
                .map(|f| f.proposed.as_deref().map(Vec::as_slice));
            Some((m.label.clone(), version))
        })
        .collect();
    let columns =
        versus_core::review::region_versions(base.as_deref().map(Vec::as_slice), region, &versions);
    review.versions = Some(VersionsView {
        path,
        region,
        columns,
        scroll: 0,
    });
}

/// A key while the N-way view is open (as the review's key table reads it): the diff's
/// scrolling keys scroll the view, its ways back (and `V`) return to the diff.
pub fn versions_key(app: &mut App, action: Option<KeyAction>, height: usize) {
    let Some(review) = app.review.as_mut() else {
        return;
    };
    let page = height.saturating_sub(2).max(1) as isize;
    match action {
        Some(KeyAction::ReviewBack | KeyAction::ReviewClose | KeyAction::Versions) => {
            review.versions = None
        }
        Some(KeyAction::DiffDown) => _ = review.scroll_versions(1, height),
        Some(KeyAction::DiffUp) => _ = review.scroll_versions(-1, height),
        Some(KeyAction::DiffPageDown) => _ = review.scroll_versions(page, height),
        Some(KeyAction::DiffPageUp) => _ = review.scroll_versions(-page, height),
        Some(KeyAction::DiffTop) => _ = review.scroll_versions(isize::MIN / 2, height),
        _ => app.dirty = false,
    }
}

/// `<` / `>`: sideways by [`HSCROLL_STEP`] columns (refused, with the way out, while wrapping).
pub fn hscroll(app: &mut App, forward: bool) {
    let Some(review) = app.review.as_mut() else {
        return;
    };
    if review.wrap {
        app.info(strings::HSCROLL_WRAPPING);
        return;
    }
    review.ensure_doc();
    review.hscroll_by(if forward { HSCROLL_STEP } else { -HSCROLL_STEP });
}
