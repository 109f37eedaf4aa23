//! News from the driver: run events land in their panel, answers to effects update the
//! roster, settings and status line.

use versus_core::model::RunStop;

use super::super::action::{Effect, EngineMsg};
use super::super::format::cost;
use super::super::panel::PanelStatus;
use super::super::review::ReviewState;
use super::super::state::{App, Overlay, Screen};
use super::super::strings;
use super::answers;

/// Handles one driver message.
pub fn handle(app: &mut App, msg: EngineMsg) -> Vec<Effect> {
    let asking = app.dialog.is_some();
    let mut effects = news(app, msg);
    if !asking && app.dialog.is_some() {
        effects.extend(notify(app, strings::NOTIFY_QUESTION.to_string()));
    }
    effects
}

/// A notification of `text`, when the user is elsewhere (the terminal lost the focus) and
/// notifications are on. Decided here, purely, so when one is due is tested without a terminal.
pub fn notify(app: &App, text: String) -> Option<Effect> {
    match app.notifier {
        Some(notifier) if !app.focused => Some(Effect::Notify { notifier, text }),
        _ => None,
    }
}

/// Whether turn `turn` has changes to review.
fn has_changes(app: &App, turn: u32) -> bool {
    app.review
        .as_ref()
        .is_some_and(|r| r.turn == turn && r.sets.iter().any(|s| !s.is_empty()))
}

/// Applies one driver message (questions it opens are notified by [`handle`]).
fn news(app: &mut App, msg: EngineMsg) -> Vec<Effect> {
    match msg {
        EngineMsg::HistoryLoaded(mut older) => {
            older.append(&mut app.history);
            app.history = older;
        }
        EngineMsg::FilesLoaded(files) => app.files = files,
        EngineMsg::RemoteModels { lists, refreshing } => {
            app.remote_models = (lists, refreshing);
            // An open `/models` shows the news at once.
            let open = matches!(&app.overlay,
                Some(Overlay::Info { title, .. }) if title == super::command::MODELS_TITLE);
            if open {
                app.overlay = Some(Overlay::Info {
                    title: super::command::MODELS_TITLE.to_string(),
                    lines: super::command::models_lines(app),
                });
            }
        }
        EngineMsg::TurnStarted { turn } => turn_started(app, turn),
        EngineMsg::TurnContext {
            turn,
            context,
            ledger,
        } => {
            if let Some(review) = app.review.as_mut().filter(|r| r.turn == turn) {
                review.context = Some((*context, ledger));
            }
        }
        EngineMsg::Blind(names) => {
            app.blind = names.as_ref().is_some_and(|n| !n.is_revealed());
            app.names = names;
        }
        EngineMsg::TurnRejected { error } => {
            app.submitting = false;
            if let Some((_, typed)) = app.pending.take()
                && app.prompt.is_empty()
            {
                app.prompt.set(&typed);
            }
            app.error(error);
        }
        EngineMsg::Agent { panel, event } => {
            let now = app.now_ms;
            if let Some(p) = app.panels.get_mut(panel) {
                p.apply(&event, now);
            }
        }
        EngineMsg::Finished { panel, summary } => {
            if let Some(p) = app.panels.get_mut(panel) {
                p.finish(&summary);
            }
        }
        EngineMsg::TurnEnded { turn } => {
            turn_ended(app, turn);
            return notify(app, strings::notify_turn_ended(turn))
                .into_iter()
                .collect();
        }
        EngineMsg::ModelsAdded {
            added,
            errors,
            replace,
        } => {
            if replace && (!added.is_empty() || errors.is_empty()) {
                app.roster.clear();
            }
            for label in &added {
                if !app.roster.contains(label) {
                    app.roster.push(label.clone());
                }
            }
            app.sync_panels();
            if errors.is_empty() && app.session.demo && !added.is_empty() {
                let added: Vec<String> = added.iter().map(|l| app.shown_label(l)).collect();
                app.info(strings::demo_models_added(&app.session.project, &added));
            } else if errors.is_empty() {
                let note = if app.running() {
                    " (from the next turn)"
                } else {
                    ""
                };
                app.info(format!("models: {}{note}", app.shown_roster()));
            } else {
                app.error(errors.join("; "));
            }
        }
        EngineMsg::SettingsLoaded {
            settings,
            models,
            errors,
        } => {
            app.settings = settings;
            if !models.is_empty() {
                app.roster = models;
            }
            app.sync_panels();
            if errors.is_empty() {
                app.info(format!("settings loaded; models: {}", app.shown_roster()));
            } else {
                app.error(format!("settings loaded, but: {}", errors.join("; ")));
            }
        }
        EngineMsg::ChangeSet { turn, label, set } => {
            let before = has_changes(app, turn);
            answers::change_set(app, turn, &label, set);
            // The first changes of a turn while others still run: worth a look already (the
            // turn's end is notified on its own).
            if !before && has_changes(app, turn) && app.running() {
                return notify(app, strings::notify_review_ready(turn))
                    .into_iter()
                    .collect();
            }
        }
        EngineMsg::Check { turn, label, state } => answers::check(app, turn, &label, state),
        EngineMsg::ApplyPreview { turn, preview } => return answers::preview(app, turn, preview),
        EngineMsg::Chosen(done) => answers::chosen(app, done),
        EngineMsg::ChoiceFailed { error } => answers::choice_failed(app, error),
        EngineMsg::RewindPlanned(plan) => answers::rewind_planned(app, plan),
        EngineMsg::Rewound(done) => answers::rewound(app, done),
        EngineMsg::Show { title, lines } => app.overlay = Some(Overlay::Info { title, lines }),
        EngineMsg::Compacted(models) => {
            // Blind mode: no model is named (the count says enough).
            let who = if app.blind || app.hiding() {
                format!("{} model(s)", models.len())
            } else {
                models
                    .iter()
                    .map(|(label, n)| format!("{label} ({n} turn(s))"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            app.info(format!(
                "context nearly full: compacted {who} (earlier turns folded into a recap)"
            ));
        }
        EngineMsg::Info(text) => app.info(text),
        EngineMsg::Error(text) => app.error(text),
    }
    Vec::new()
}

fn turn_started(app: &mut App, turn: u32) {
    app.submitting = false;
    app.turn = turn;
    let Some((request, _)) = app.pending.take() else {
        return;
    };
    let order = app.panel_order();
    let targets: Vec<(usize, String)> = request
        .targets
        .iter()
        .map(|t| (t.panel, t.label.clone()))
        .collect();
    let shown: Vec<usize> = order
        .iter()
        .filter_map(|panel| targets.iter().position(|(p, _)| p == panel))
        .collect();
    app.review = Some(ReviewState::new(turn, &request.prompt, &targets, shown));
    app.screen = Screen::Panels;
    app.dialog = None;
    if request.remember && app.history.last() != Some(&request.line) {
        app.history.push(request.line.clone());
    }
    app.sent.insert(turn, request.line.clone());
    let now = app.now_ms;
    for (index, panel) in app.panels.iter_mut().enumerate() {
        if request.targets.iter().any(|t| t.panel == index) {
            panel.begin_turn(turn, &request.prompt, now);
        } else if panel.status.is_active() {
            // Cannot happen (a turn starts only when none runs); keep the panel as it is.
        } else {
            panel.note(&format!("── turn {turn}: not addressed ──"));
        }
    }
    let names: Vec<String> = request.targets.iter().map(|t| app.shown(t.panel)).collect();
    let blind = if app.hiding() {
        " (blind: names hidden until you reveal them with /blind)"
    } else {
        ""
    };
    app.info(format!("turn {turn}: sent to {}{blind}", names.join(", ")));
}

fn turn_ended(app: &mut App, turn: u32) {
    let mut done = 0;
    let mut other = Vec::new();
    for (i, p) in app.panels.iter().enumerate() {
        match p.status {
            PanelStatus::Done(RunStop::Completed) => done += 1,
            PanelStatus::Done(stop) => other.push(format!("{} {}", app.shown(i), stop.label())),
            _ => {}
        }
    }
    let mut text = format!("turn {turn} finished: {done} done");
    if !other.is_empty() {
        text.push_str(&format!(", {}", other.join(", ")));
    }
    text.push_str(&format!(" · session {}", cost(app.total_cost())));
    if app
        .review
        .as_ref()
        .is_some_and(|r| !r.sets.iter().all(|s| s.is_empty()))
    {
        text.push_str(if app.screen == Screen::Review {
            " · pick with Space/f/c, a applies, x none of them"
        } else {
            " · Ctrl+O reviews the changes"
        });
    }
    app.info(text);
    // Panels of removed models go now, unless names are hidden (a panel's place would change
    // under its alias); then at the next prompt.
    if !app.hiding() {
        app.sync_panels();
    }
}
