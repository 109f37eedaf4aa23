//! Picking and choosing on the review: hunks, files and whole change sets into the basket (from
//! one model or several), then applying it, "none of them", and ratings.
//!
//! Picking never writes anything: the basket is recomposed on each pick (conflicts show at
//! once) and the apply only starts with `a`, through a preview the engine answers. A choice
//! is made once per turn, when every model has finished.

use versus_core::review::BasketState;

use super::super::action::{ChoiceRequest, Effect};
use super::super::review::conflict_side;
use super::super::state::App;

/// Refuses picking once the turn is decided or while a choice is being carried out.
pub(super) fn can_pick(app: &mut App) -> bool {
    let Some(review) = &app.review else {
        return false;
    };
    if review.busy {
        app.info("working on the apply…");
        return false;
    }
    if review.decided.is_some() {
        app.error(format!(
            "the choice for turn {} is made; /rewind undoes it (/rewind files keeps the conversation)",
            review.turn
        ));
        return false;
    }
    true
}

/// Space: the hunk at the top of the diff.
pub fn hunk(app: &mut App) {
    if !can_pick(app) {
        return;
    }
    let Some(review) = &app.review else { return };
    let Some(label) = review.model().map(|m| m.label.clone()) else {
        return;
    };
    let Some(file) = review.current_file() else {
        app.error("this model changed no file: nothing to pick");
        return;
    };
    if let Some(why) = file.whole_file_only() {
        let path = file.path.clone();
        app.error(format!(
            "{path} can only be taken whole because {why}: press f to pick the file"
        ));
        return;
    }
    let Some(hunk) = review.current_hunk() else {
        app.error("no hunk on screen: n moves to the next one");
        return;
    };
    let (path, id, number, total) = (
        file.path.clone(),
        hunk.id.clone(),
        hunk.number,
        file.hunks.len(),
    );
    let Some(review) = app.review.as_mut() else {
        return;
    };
    review.basket.toggle_hunk(&label, &path, &id);
    let taken = review.basket.covers_hunk(&label, &path, &id);
    review.recompute_basket();
    let what = format!("hunk {number}/{total} of {path}");
    report_pick(app, &label, &what, taken);
}

/// `f`: the file on screen, whole.
pub fn file(app: &mut App) {
    if !can_pick(app) {
        return;
    }
    let Some(review) = app.review.as_mut() else {
        return;
    };
    let Some(label) = review.model().map(|m| m.label.clone()) else {
        return;
    };
    let Some(path) = review.current_file().map(|f| f.path.clone()) else {
        app.error("this model changed no file: nothing to pick");
        return;
    };
    review.basket.toggle_file(&label, &path);
    let taken = review
        .current_file()
        .is_some_and(|f| review.file_pick(&label, f) == Some(true));
    review.recompute_basket();
    report_pick(app, &label, &path, taken);
}

/// `c`: the selected model's whole change set; for a model that changed no file (it answered
/// in text), choosing it records its answer as the turn's winner.
pub fn model(app: &mut App) -> Vec<Effect> {
    if !can_pick(app) {
        return Vec::new();
    }
    let Some(review) = app.review.as_mut() else {
        return Vec::new();
    };
    let Some(label) = review.model().map(|m| m.label.clone()) else {
        return Vec::new();
    };
    if review.set_of(&label).is_some_and(|s| s.is_empty()) {
        return text_winner(app, &label);
    }
    if review.set_of(&label).is_none() {
        let shown = app.shown_label(&label);
        app.error(format!(
            "{shown} has nothing to pick yet: its change set is not ready"
        ));
        return Vec::new();
    }
    review.basket.toggle_model(&label);
    let taken = review
        .basket
        .picks()
        .iter()
        .any(|p| matches!(p, versus_core::apply::Pick::ChangeSet { model } if *model == label));
    review.recompute_basket();
    report_pick(app, &label, "every change", taken);
    Vec::new()
}

/// Chooses a model that changed no file: its answer wins, nothing is written.
fn text_winner(app: &mut App, label: &str) -> Vec<Effect> {
    let shown = app.shown_label(label);
    if let Some(why) = choice_blocked(app) {
        app.error(why);
        return Vec::new();
    }
    let Some(review) = app.review.as_mut() else {
        return Vec::new();
    };
    if !review.basket.picks().is_empty() {
        app.error(format!(
            "{shown} changed no file; to choose its answer, empty the basket first (Space/f/c on the picks)"
        ));
        return Vec::new();
    }
    review.busy = true;
    let request = ChoiceRequest {
        turn: review.turn,
        chosen: vec![label.to_string()],
        plan: None,
        resolutions: Default::default(),
        ratings: review.ratings.clone(),
    };
    app.info(format!(
        "recording: {shown}'s answer chosen (it changed no file)…"
    ));
    vec![Effect::Choose(request)]
}

/// The status line after a pick: what changed and what the basket now does.
pub(super) fn report_pick(app: &mut App, label: &str, what: &str, taken: bool) {
    let who = app.shown_label(label);
    let verb = if taken { "picked" } else { "dropped" };
    let Some(review) = &app.review else { return };
    match &review.basket_state {
        BasketState::Conflicts(conflicts) => {
            let n = conflicts.len();
            app.error(format!(
                "{verb} {what} of {who}: {n} conflict(s) in the basket (marked ⚠); drop one side before applying"
            ));
        }
        BasketState::Invalid(why) => {
            let why = why.clone();
            app.error(format!("{verb} {what} of {who}, but: {why}"));
        }
        BasketState::Ready { summary, .. } => {
            let summary = summary.clone();
            app.info(format!(
                "{verb} {what} of {who} · basket: {summary} · a applies"
            ));
        }
        BasketState::Empty => app.info(format!("{verb} {what} of {who} · the basket is empty")),
    }
}

/// Why a choice cannot be made now, if it cannot.
fn choice_blocked(app: &App) -> Option<String> {
    let review = app.review.as_ref()?;
    if app.running() {
        return Some(
            "models are still running: wait for them (or Ctrl+C cancels them) before choosing"
                .to_string(),
        );
    }
    if review.busy {
        return Some("the apply is under way".to_string());
    }
    if let Some(decided) = &review.decided {
        return Some(format!(
            "the choice for turn {} is already made ({}); /rewind undoes it",
            review.turn,
            if decided.chosen.is_empty() {
                "none of them".to_string()
            } else {
                decided
                    .chosen
                    .iter()
                    .map(|l| app.shown_label(l))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        ));
    }
    if !review.all_built() {
        return Some("change sets are still being prepared; a moment".to_string());
    }
    None
}

/// `a`: composes the basket and asks the engine for a preview (conflicts refuse).
pub fn apply(app: &mut App) -> Vec<Effect> {
    if app.review.is_none() {
        app.error("no turn to review yet: send a prompt first");
        return Vec::new();
    }
    if let Some(why) = choice_blocked(app) {
        app.error(why);
        return Vec::new();
    }
    let Some(review) = app.review.as_mut() else {
        return Vec::new();
    };
    review.recompute_basket();
    let (turn, state) = (review.turn, review.basket_state.clone());
    match state {
        BasketState::Empty => {
            app.error(
                "nothing picked: Space picks the hunk on screen, f the file, c the whole model; x records none of them",
            );
            Vec::new()
        }
        BasketState::Conflicts(conflicts) => {
            let first = conflicts
                .first()
                .map(|c| {
                    format!(
                        "{}: {} and {} change the same lines",
                        c.path,
                        conflict_side(app, &c.first),
                        conflict_side(app, &c.second)
                    )
                })
                .unwrap_or_default();
            app.error(format!(
                "cannot apply: {} conflict(s) in the basket ({first}); drop one side (Space, f or c again)",
                conflicts.len()
            ));
            Vec::new()
        }
        BasketState::Invalid(why) => {
            app.error(format!("cannot apply: {why}"));
            Vec::new()
        }
        BasketState::Ready { plan, summary } => {
            review.busy = true;
            review.pending = Some(plan.clone());
            app.info(format!(
                "applying {summary}: checking your files for edits since the run started…"
            ));
            vec![Effect::PreviewApply { turn, plan }]
        }
    }
}

/// `x`: "none of them" is a choice too.
pub fn none_of_them(app: &mut App) -> Vec<Effect> {
    if app.review.is_none() {
        app.error("no turn to review yet: send a prompt first");
        return Vec::new();
    }
    if let Some(why) = choice_blocked(app) {
        app.error(why);
        return Vec::new();
    }
    let Some(review) = app.review.as_mut() else {
        return Vec::new();
    };
    review.busy = true;
    let request = ChoiceRequest {
        turn: review.turn,
        chosen: Vec::new(),
        plan: None,
        resolutions: Default::default(),
        ratings: review.ratings.clone(),
    };
    app.info("recording: none of them…");
    vec![Effect::Choose(request)]
}

/// `+` / `-` / `=`: rates the selected model (again removes the rating).
pub fn rate(app: &mut App, rating: versus_core::session::Rating) {
    let Some(review) = app.review.as_mut() else {
        return;
    };
    if review.decided.is_some() {
        app.error("ratings go with the choice, which is already recorded for this turn");
        return;
    }
    let Some(label) = review.model().map(|m| m.label.clone()) else {
        return;
    };
    let again = review.ratings.get(&label).is_some_and(|r| *r == rating);
    if again {
        review.ratings.remove(&label);
    } else {
        review.ratings.insert(label.clone(), rating);
    }
    let who = app.shown_label(&label);
    app.info(if again {
        format!("{who}: rating removed")
    } else {
        super::super::strings::rated(&who, rating)
    });
}
