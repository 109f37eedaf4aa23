//! Sending a prompt (with `@model` addressing and `@path` attachments) and running slash
//! commands. An unknown command is an error in the status line and is never sent.

use versus_core::model::RunStop;

use super::super::action::{Effect, ReviewOpening, Settings, Target, TurnRequest};
use super::super::commands::{self, Command, ConfigSet};
use super::super::complete::model_is;
use super::super::export;
use super::super::panel::PanelStatus;
use super::super::state::{App, Overlay};

/// The prompt `/resume` sends to interrupted models.
pub const RESUME_PROMPT: &str =
    "You were interrupted before finishing. Continue the task from where you stopped.";

/// Sends what is in the prompt box: a slash command, or a prompt to the models.
pub fn submit(app: &mut App) -> Vec<Effect> {
    let text = app.prompt.expanded();
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Vec::new();
    }
    app.completion = None;
    if trimmed.starts_with('/') {
        return match commands::parse(trimmed) {
            Ok(command) => {
                app.prompt.clear();
                run(app, command)
            }
            Err(error) => {
                app.error(error);
                Vec::new()
            }
        };
    }
    if let Some(why) = busy(app) {
        app.error(why);
        return Vec::new();
    }
    if app.roster.is_empty() {
        app.error("no model to send to: add one with /models add PROVIDER/MODEL");
        return Vec::new();
    }
    app.sync_panels();
    let mut named = Vec::new();
    let mut attachments = Vec::new();
    let mut words = Vec::new();
    for word in trimmed.split(' ') {
        match word.strip_prefix('@').filter(|w| !w.is_empty()) {
            Some(name) => {
                let models: Vec<&String> =
                    app.roster.iter().filter(|m| model_is(m, name)).collect();
                if models.is_empty() {
                    attachments.push(name.trim_end_matches([',', '.', ':', ';']).to_string());
                    words.push(word);
                } else {
                    named.extend(models.into_iter().cloned());
                }
            }
            None => words.push(word),
        }
    }
    let prompt = words.join(" ").trim().to_string();
    if prompt.is_empty() {
        app.error("the prompt is empty once the @model names are taken out: add what to do");
        return Vec::new();
    }
    let targets: Vec<Target> = app
        .panels
        .iter()
        .enumerate()
        .filter(|(_, p)| named.is_empty() || named.contains(&p.label))
        .map(|(panel, p)| Target {
            panel,
            label: p.label.clone(),
        })
        .collect();
    let request = TurnRequest {
        turn: app.turn + 1,
        prompt,
        line: trimmed.to_string(),
        targets,
        attachments,
        settings: app.settings.clone(),
        blind: app.blind,
        remember: true,
    };
    start(app, request, text)
}

pub(super) fn busy(app: &App) -> Option<&'static str> {
    if app.running() {
        Some("models are still running: wait for them, or press Esc to cancel them")
    } else if app.submitting {
        Some("a turn is starting")
    } else {
        None
    }
}

fn start(app: &mut App, request: TurnRequest, typed: String) -> Vec<Effect> {
    app.submitting = true;
    app.pending = Some((request.clone(), typed));
    app.prompt.clear();
    vec![Effect::Submit(request)]
}

/// The title of the `/models` overlay (the remote lists redraw it when they arrive).
pub const MODELS_TITLE: &str = "models";

/// Most model ids shown per provider in `/models` (the rest counted).
const REMOTE_SHOWN: usize = 12;

/// The `/models` overlay: the next turn's models, how to change them, and (not while blind)
/// what each provider offers, from the cache.
pub fn models_lines(app: &App) -> Vec<String> {
    let mut lines: Vec<String> = app
        .roster
        .iter()
        .map(|m| format!("  {}", app.shown_label(m)))
        .collect();
    if lines.is_empty() {
        lines.push("  (none)".to_string());
    }
    lines.insert(0, "Models of the next turn:".to_string());
    lines.push(String::new());
    lines.push("/models add SPEC... adds (e.g. demo/good, openai/gpt-5#2)".to_string());
    lines.push("/models remove SPEC... removes; @model in a prompt sends to one".to_string());
    if app.blind {
        return lines;
    }
    let (lists, refreshing) = &app.remote_models;
    lines.push(String::new());
    lines.push(if *refreshing {
        "Offered by your providers (refreshing in the background):".to_string()
    } else {
        "Offered by your providers (`versus models --remote` lists them all):".to_string()
    });
    if lists.is_empty() {
        lines.push(if *refreshing {
            "  (asking them…)".to_string()
        } else {
            "  (no list yet)".to_string()
        });
    }
    for (provider, models) in lists {
        let mut shown: Vec<String> = models
            .iter()
            .take(REMOTE_SHOWN)
            .map(|m| format!("{provider}/{m}"))
            .collect();
        if models.len() > REMOTE_SHOWN {
            shown.push(format!("and {} more", models.len() - REMOTE_SHOWN));
        }
        lines.push(format!("  {}", shown.join(", ")));
    }
    lines
}

/// Runs a parsed command.
pub fn run(app: &mut App, command: Command) -> Vec<Effect> {
    match command {
        Command::Help => app.overlay = Some(Overlay::Help),
        Command::ModelsList => {
            app.overlay = Some(Overlay::Info {
                title: MODELS_TITLE.to_string(),
                lines: models_lines(app),
            });
            // Blind mode shows no list a model name could be told from.
            if !app.blind {
                return vec![Effect::RemoteModels];
            }
        }
        Command::ModelsAdd(specs) => {
            return vec![Effect::AddModels {
                specs,
                replace: false,
            }];
        }
        Command::ModelsRemove(specs) => remove_models(app, &specs),
        Command::ConfigShow => show_config(app),
        Command::ConfigSet(set) => return config_set(app, set),
        Command::Review => super::keys::toggle_review_open(app),
        Command::Rewind(scope) => {
            if let Some(why) = busy(app) {
                app.error(why);
                return Vec::new();
            }
            return vec![Effect::PlanRewind { scope }];
        }
        Command::Blind => return blind(app),
        Command::Stats if app.hiding() => {
            // The statistics name every model (and a fresh win would point at one).
            app.info("blind: /stats names the models; it shows once you reveal them (/blind)");
        }
        Command::Stats => return vec![Effect::Stats],
        Command::Resume => return resume(app),
        Command::Compact => {
            if let Some(why) = busy(app) {
                app.error(why);
                return Vec::new();
            }
            return vec![Effect::Compact];
        }
        Command::Clear => {
            if let Some(why) = busy(app) {
                app.error(why);
                return Vec::new();
            }
            for p in &mut app.panels {
                p.transcript.clear();
                p.scroll = 0;
                p.status = PanelStatus::Idle;
                p.step = 0;
            }
            app.info("cleared: every model starts afresh on the next prompt");
            return vec![Effect::ClearConversations];
        }
        Command::Mouse => {
            app.mouse = !app.mouse;
            app.info(if app.mouse {
                "mouse on: the wheel scrolls what is under it, a click focuses a panel (hold Shift to select text)"
            } else {
                "mouse off: the terminal selects text; /mouse takes it back"
            });
            return vec![Effect::Mouse(app.mouse)];
        }
        Command::Verbose => {
            app.verbose = !app.verbose;
            app.info(if app.verbose {
                "verbose: thinking and full tool arguments shown"
            } else {
                "verbose off"
            });
        }
        Command::Save(path) => {
            return vec![Effect::Save {
                path,
                settings: app.settings.clone(),
                models: app.roster.clone(),
            }];
        }
        Command::Load(path) => return vec![Effect::Load { path }],
        Command::Export(path) => {
            return vec![Effect::Export {
                path,
                markdown: export::markdown(app),
            }];
        }
        Command::Quit => {
            app.quit = true;
            return vec![Effect::CancelAll, Effect::Quit];
        }
    }
    Vec::new()
}

/// `/blind`: the session's models are hidden under aliases from now on (the session engine
/// gives them, stable across turns); turning it off reveals who was who.
fn blind(app: &mut App) -> Vec<Effect> {
    app.blind = !app.blind;
    if app.blind {
        app.info("blind: models are Model A, B, C… in a random order, the same every turn, until you reveal them (/blind again) or the session ends");
    } else {
        let hidden = app.hiding();
        if let Some(names) = app.names.as_mut() {
            names.reveal();
        }
        let who: Vec<String> = app
            .names
            .iter()
            .flat_map(|n| n.labels().iter())
            .filter_map(|label| {
                let names = app.names.as_ref()?;
                Some(format!("{} is {label}", names.alias(label)?))
            })
            .collect();
        if hidden && !who.is_empty() {
            app.info(format!("blind off: {}", who.join(", ")));
        } else {
            app.info("blind off: real names shown");
        }
    }
    vec![Effect::Blind(app.blind)]
}

fn remove_models(app: &mut App, specs: &[String]) {
    let mut missing = Vec::new();
    for spec in specs {
        let before = app.roster.len();
        app.roster.retain(|m| !model_is(m, spec));
        if app.roster.len() == before {
            missing.push(spec.clone());
        }
    }
    app.sync_panels();
    if missing.is_empty() {
        app.info(format!("models: {}", roster_text(app)));
    } else {
        app.error(format!(
            "not a model of this session: {}; /models lists them",
            missing.join(", ")
        ));
    }
}

fn roster_text(app: &App) -> String {
    if app.roster.is_empty() {
        "none (add one with /models add SPEC)".to_string()
    } else {
        app.shown_roster()
    }
}

fn show_config(app: &mut App) {
    let s: &Settings = &app.settings;
    let tools = match &s.tools {
        None => "all".to_string(),
        Some(list) => list.join(", "),
    };
    let lines = vec![
        format!("models      {}", roster_text(app)),
        format!("tools       {tools}"),
        format!("max_steps   {}", s.max_steps),
        format!("timeout     {} s", s.timeout_secs),
        format!(
            "system      {}",
            s.system.as_deref().unwrap_or("(built-in prompt only)")
        ),
        format!(
            "check       {}",
            s.check.as_deref().unwrap_or("(none: nothing runs when a model finishes)")
        ),
        format!(
            "review      {}",
            match s.review {
                ReviewOpening::Auto => "auto (opens when the first changes are ready)",
                ReviewOpening::Stay => "stay (a badge in the header; Ctrl+O opens it)",
            }
        ),
        format!("blind       {}", if app.blind { "on" } else { "off" }),
        format!("project     {}", app.session.project),
        format!("session     {}", app.session.id),
        String::new(),
        "Change with /config KEY VALUE, e.g. /config max_steps 30, /config tools read_file,edit_file,"
            .to_string(),
        "/config tools all, /config timeout 600, /config system Answer briefly., /config system none,"
            .to_string(),
        "/config check cargo test -q (runs in each workspace when its model finishes), /config check none,"
            .to_string(),
        "/config review stay (do not open the review by itself), /config review auto".to_string(),
    ];
    app.overlay = Some(Overlay::Info {
        title: "session settings".to_string(),
        lines,
    });
}

fn config_set(app: &mut App, set: ConfigSet) -> Vec<Effect> {
    match set {
        ConfigSet::Models(specs) => {
            return vec![Effect::AddModels {
                specs,
                replace: true,
            }];
        }
        ConfigSet::Tools(None) => {
            app.settings.tools = None;
            app.info("tools: all (from the next turn)");
        }
        ConfigSet::Tools(Some(list)) => {
            let unknown: Vec<&String> = list
                .iter()
                .filter(|t| !app.tool_names.iter().any(|k| k == *t))
                .collect();
            if !unknown.is_empty() {
                app.error(format!(
                    "unknown tool(s) {}; the tools are {}",
                    unknown
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                    app.tool_names.join(", ")
                ));
                return Vec::new();
            }
            app.info(format!("tools: {} (from the next turn)", list.join(", ")));
            app.settings.tools = Some(list);
        }
        ConfigSet::MaxSteps(n) => {
            app.settings.max_steps = n;
            app.info(format!("max_steps: {n} (from the next turn)"));
        }
        ConfigSet::Timeout(secs) => {
            app.settings.timeout_secs = secs;
            app.info(format!("timeout: {secs} s (from the next turn)"));
        }
        ConfigSet::System(text) => {
            app.info(match &text {
                Some(_) => "system prompt: your text is added (from the next turn)",
                None => "system prompt: built-in only (from the next turn)",
            });
            app.settings.system = text;
        }
        ConfigSet::Review(opening) => {
            app.settings.review = opening;
            app.info(match opening {
                ReviewOpening::Auto => {
                    "review: opens by itself when the first changes are ready (/save keeps it)"
                }
                ReviewOpening::Stay => {
                    "review: you stay on the panels; the header says when it is ready, Ctrl+O opens it (/save keeps it)"
                }
            });
        }
        ConfigSet::Check(command) => {
            app.info(match &command {
                Some(c) => format!(
                    "check: `{c}` runs in each model's workspace when it finishes (from the next turn)"
                ),
                None => "check: none".to_string(),
            });
            app.settings.check = command;
        }
    }
    Vec::new()
}

fn resume(app: &mut App) -> Vec<Effect> {
    if let Some(why) = busy(app) {
        app.error(why);
        return Vec::new();
    }
    let targets: Vec<Target> = app
        .panels
        .iter()
        .enumerate()
        .filter(|(_, p)| {
            matches!(
                p.status,
                PanelStatus::Done(
                    RunStop::Cancelled
                        | RunStop::Timeout
                        | RunStop::MaxSteps
                        | RunStop::MaxTokens
                        | RunStop::Error
                )
            ) && app.roster.contains(&p.label)
        })
        .map(|(panel, p)| Target {
            panel,
            label: p.label.clone(),
        })
        .collect();
    if targets.is_empty() {
        app.info("no model was interrupted in the last turn: nothing to resume");
        return Vec::new();
    }
    let labels: Vec<String> = targets.iter().map(|t| t.label.clone()).collect();
    let request = TurnRequest {
        turn: app.turn + 1,
        prompt: RESUME_PROMPT.to_string(),
        line: app.addressed(RESUME_PROMPT, &labels),
        targets,
        attachments: Vec::new(),
        settings: app.settings.clone(),
        blind: app.blind,
        remember: false,
    };
    let typed = app.prompt.raw().to_string();
    start(app, request, typed)
}
