//! Pure transitions of the interface: keys and driver messages in, state and effects out. No
//! terminal, no runtime, no model.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use versus::model::{AgentEvent, RunStop, SubAgentTag, ToolOutcome, Usage};
use versus::tui::action::{Effect, EngineMsg, Msg, Settings, Target};
use versus::tui::panel::{PanelStatus, RunSummary};
use versus::tui::state::{App, Overlay, SessionInfo};
use versus::tui::theme::Theme;
use versus::tui::update::update;

fn app() -> App {
    let mut app = App::new(
        SessionInfo {
            id: "s".into(),
            project: "/p".into(),
            demo: false,
        },
        vec!["demo/good".into(), "demo/sloppy".into()],
        Settings::default(),
        Theme::PLAIN,
    );
    app.tool_names = vec!["read_file".into(), "edit_file".into()];
    app
}

fn press(app: &mut App, code: KeyCode, mods: KeyModifiers) -> Vec<Effect> {
    update(app, Msg::Key(KeyEvent::new(code, mods)))
}

fn key(app: &mut App, code: KeyCode) -> Vec<Effect> {
    press(app, code, KeyModifiers::NONE)
}

fn typed(app: &mut App, s: &str) {
    for c in s.chars() {
        key(app, KeyCode::Char(c));
    }
}

fn engine(app: &mut App, msg: EngineMsg) {
    update(app, Msg::Engine(msg));
}

fn submitted(effects: &[Effect]) -> &versus::tui::action::TurnRequest {
    match effects {
        [Effect::Submit(request)] => request,
        other => panic!("expected one Submit, got {other:?}"),
    }
}

fn target(panel: usize, label: &str) -> Target {
    Target {
        panel,
        label: label.into(),
    }
}

#[test]
fn enter_sends_to_every_model_and_the_turn_starts_when_the_driver_says_so() {
    let mut a = app();
    typed(&mut a, "fix the bug");
    let effects = key(&mut a, KeyCode::Enter);
    let request = submitted(&effects);
    assert_eq!(request.prompt, "fix the bug");
    assert_eq!(request.turn, 1);
    assert_eq!(
        request.targets,
        vec![target(0, "demo/good"), target(1, "demo/sloppy")]
    );
    assert!(a.prompt.is_empty());
    assert!(a.submitting);
    engine(&mut a, EngineMsg::TurnStarted { turn: 1 });
    assert_eq!(a.turn, 1);
    assert!(a.running());
    assert_eq!(a.history, ["fix the bug"]);
    // A second prompt while models run is refused, never queued silently.
    typed(&mut a, "more");
    assert!(key(&mut a, KeyCode::Enter).is_empty());
    assert!(a.status.as_ref().unwrap().error);
}

#[test]
fn at_model_addresses_some_models_and_at_path_attaches() {
    let mut a = app();
    typed(&mut a, "@sloppy explain @src/lib.rs please");
    let effects = key(&mut a, KeyCode::Enter);
    let request = submitted(&effects);
    assert_eq!(request.targets, vec![target(1, "demo/sloppy")]);
    assert_eq!(request.prompt, "explain @src/lib.rs please");
    assert_eq!(request.attachments, ["src/lib.rs"]);
}

#[test]
fn a_rejected_turn_puts_the_prompt_back_with_the_reason() {
    let mut a = app();
    typed(&mut a, "read @nope.txt");
    key(&mut a, KeyCode::Enter);
    engine(
        &mut a,
        EngineMsg::TurnRejected {
            error: "@nope.txt is neither a model nor a file".into(),
        },
    );
    assert_eq!(a.prompt.raw(), "read @nope.txt");
    assert!(!a.submitting);
    assert!(a.status.as_ref().unwrap().error);
}

#[test]
fn unknown_commands_are_errors_and_are_never_sent() {
    let mut a = app();
    typed(&mut a, "/frobnicate now");
    let effects = key(&mut a, KeyCode::Enter);
    assert!(effects.is_empty());
    let status = a.status.clone().unwrap();
    assert!(status.error);
    assert!(
        status.text.contains("unknown command /frobnicate"),
        "{}",
        status.text
    );
    assert_eq!(a.prompt.raw(), "/frobnicate now");
}

#[test]
fn enter_on_a_completed_prefix_runs_the_selected_command() {
    let mut a = app();
    typed(&mut a, "/he");
    assert!(a.completion.is_some());
    key(&mut a, KeyCode::Enter);
    assert_eq!(a.overlay, Some(Overlay::Help));
    key(&mut a, KeyCode::Char('x'));
    assert_eq!(a.overlay, None);
}

#[test]
fn tab_completes_paths_and_otherwise_moves_focus() {
    let mut a = app();
    engine(
        &mut a,
        EngineMsg::FilesLoaded(vec!["src/lib.rs".into(), "src/main.rs".into()]),
    );
    key(&mut a, KeyCode::Tab);
    assert_eq!(a.focus, 1);
    typed(&mut a, "see @src/m");
    key(&mut a, KeyCode::Tab);
    assert_eq!(a.prompt.raw(), "see @src/main.rs ");
    assert!(a.completion.is_none());
    assert_eq!(a.focus, 1);
}

#[test]
fn esc_cancels_everything_and_ctrl_x_only_the_focused_model() {
    let mut a = app();
    typed(&mut a, "go");
    key(&mut a, KeyCode::Enter);
    engine(&mut a, EngineMsg::TurnStarted { turn: 1 });
    key(&mut a, KeyCode::Tab);
    let effects = press(&mut a, KeyCode::Char('x'), KeyModifiers::CONTROL);
    assert_eq!(
        effects,
        vec![Effect::Cancel {
            label: "demo/sloppy".into()
        }]
    );
    // Esc asks first; Esc again cancels every model.
    assert!(key(&mut a, KeyCode::Esc).is_empty());
    assert_eq!(key(&mut a, KeyCode::Esc), vec![Effect::CancelAll]);
}

fn status_text(app: &App) -> String {
    app.status
        .as_ref()
        .map(|s| s.text.clone())
        .unwrap_or_default()
}

#[test]
fn esc_asks_before_cancelling_and_only_esc_again_confirms_in_time() {
    let mut a = app();
    typed(&mut a, "go");
    key(&mut a, KeyCode::Enter);
    engine(&mut a, EngineMsg::TurnStarted { turn: 1 });
    a.now_ms = 1_000;
    // The first Esc closes a completion list, as before: it never counts as the question.
    typed(&mut a, "/");
    assert!(a.completion.is_some());
    assert!(key(&mut a, KeyCode::Esc).is_empty());
    assert!(a.completion.is_none());
    assert!(key(&mut a, KeyCode::Backspace).is_empty());
    // Esc asks; the models keep running.
    assert!(key(&mut a, KeyCode::Esc).is_empty());
    assert_eq!(
        status_text(&a),
        "press Esc again to cancel 2 running models (any other key: keep them)"
    );
    assert!(a.running());
    // Any other key withdraws the question: the next Esc asks again.
    typed(&mut a, "a");
    assert!(key(&mut a, KeyCode::Esc).is_empty());
    assert!(status_text(&a).starts_with("press Esc again"));
    // Too late: the clock passes the window, the tick takes the question off the screen,
    // and Esc asks afresh.
    a.now_ms += versus::tui::state::CONFIRM_MS;
    update(&mut a, Msg::Tick);
    assert!(a.status.is_none() && a.confirm.is_none());
    assert!(key(&mut a, KeyCode::Esc).is_empty());
    // In time: Esc again cancels.
    a.now_ms += 500;
    assert_eq!(key(&mut a, KeyCode::Esc), vec![Effect::CancelAll]);
    // A message that replaces the question withdraws it too.
    let mut b = app();
    typed(&mut b, "go");
    key(&mut b, KeyCode::Enter);
    engine(&mut b, EngineMsg::TurnStarted { turn: 1 });
    assert!(key(&mut b, KeyCode::Esc).is_empty());
    engine(&mut b, EngineMsg::Info("something else".into()));
    assert!(key(&mut b, KeyCode::Esc).is_empty(), "asks again");
}

#[test]
fn demo_mode_models_add_says_where_they_run_and_how_to_use_them_on_the_project() {
    let mut a = app();
    a.session.demo = true;
    a.session.project = "/tmp/versus-demo-1".into();
    engine(
        &mut a,
        EngineMsg::ModelsAdded {
            added: vec!["openai/gpt-5".into()],
            errors: Vec::new(),
            replace: false,
        },
    );
    let text = status_text(&a);
    assert!(text.contains("/tmp/versus-demo-1"), "{text}");
    assert!(text.contains("not on your folder"), "{text}");
    assert!(text.contains("`versus -m openai/gpt-5` there"), "{text}");
    // Outside demo mode the plain list, as before.
    let mut b = app();
    engine(
        &mut b,
        EngineMsg::ModelsAdded {
            added: vec!["openai/gpt-5".into()],
            errors: Vec::new(),
            replace: false,
        },
    );
    assert_eq!(
        status_text(&b),
        "models: demo/good, demo/sloppy, openai/gpt-5"
    );
}

#[test]
fn a_turn_end_notifies_only_when_the_terminal_is_not_focused_and_notifications_are_on() {
    use versus::tui::notify::Notifier;
    let ended = |a: &mut App| update(a, Msg::Engine(EngineMsg::TurnEnded { turn: 1 }));
    let mut a = app();
    typed(&mut a, "go");
    key(&mut a, KeyCode::Enter);
    engine(&mut a, EngineMsg::TurnStarted { turn: 1 });
    // Off (the app's default until the config says otherwise): never.
    update(&mut a, Msg::Focus(false));
    assert!(ended(&mut a).is_empty());
    // On, focused: never; unfocused: once per event.
    a.notifier = Some(Notifier::Osc9);
    update(&mut a, Msg::Focus(true));
    assert!(ended(&mut a).is_empty());
    update(&mut a, Msg::Focus(false));
    assert_eq!(
        ended(&mut a),
        vec![Effect::Notify {
            notifier: Notifier::Osc9,
            text: "versus: turn 1 finished".into()
        }]
    );
    // A question that opens while the user is away is notified too.
    let effects = update(
        &mut a,
        Msg::Engine(EngineMsg::RewindPlanned(versus::tui::action::RewindPlan {
            scope: versus::tui::action::RewindScope::Conversation,
            turn: Some(1),
            prompt: Some("go".into()),
            files: None,
            files_note: None,
        })),
    );
    assert_eq!(
        effects,
        vec![Effect::Notify {
            notifier: Notifier::Osc9,
            text: "versus: a question waits for your answer".into()
        }]
    );
}

#[test]
fn run_events_fill_panels_and_the_turn_end_reports_every_model() {
    let mut a = app();
    typed(&mut a, "go");
    key(&mut a, KeyCode::Enter);
    engine(&mut a, EngineMsg::TurnStarted { turn: 1 });
    engine(
        &mut a,
        EngineMsg::Agent {
            panel: 0,
            event: AgentEvent::TextDelta {
                text: "done".into(),
            },
        },
    );
    for (panel, stop) in [(0, RunStop::Completed), (1, RunStop::Cancelled)] {
        engine(
            &mut a,
            EngineMsg::Finished {
                panel,
                summary: RunSummary {
                    stop,
                    elapsed_ms: 10,
                    writes: 1,
                    files: vec!["src/a.rs".into()],
                    deleted: vec![],
                    error: None,
                },
            },
        );
    }
    engine(&mut a, EngineMsg::TurnEnded { turn: 1 });
    assert!(!a.running());
    assert_eq!(a.panels[1].status, PanelStatus::Done(RunStop::Cancelled));
    let text = a.status.clone().unwrap().text;
    assert!(text.contains("1 done, demo/sloppy cancelled"), "{text}");
    // /resume continues only the interrupted model, without touching the history.
    typed(&mut a, "/resume");
    let effects = key(&mut a, KeyCode::Enter);
    let request = submitted(&effects);
    assert_eq!(request.targets, vec![target(1, "demo/sloppy")]);
    assert!(!request.remember);
}

/// A sub-agent's calls reach the panel through the same update as the model's own: nested
/// under the `spawn_agent` call with its role, not counted as the model's calls, and its
/// tokens only through the parent's `Usage` total that follows.
#[test]
fn a_sub_agents_calls_are_nested_in_the_panel_with_its_role() {
    let mut a = app();
    typed(&mut a, "go");
    key(&mut a, KeyCode::Enter);
    engine(&mut a, EngineMsg::TurnStarted { turn: 1 });
    let agent = |event: AgentEvent| EngineMsg::Agent { panel: 0, event };
    let tag = SubAgentTag {
        role: "planner".into(),
        number: 1,
        depth: 1,
        model: "demo/good".into(),
        call_id: "p1".into(),
    };
    let sub = |event: AgentEvent| AgentEvent::SubAgent {
        agent: tag.clone(),
        event: Box::new(event),
    };
    let tokens = |n: u64| Usage {
        input: n,
        ..Usage::default()
    };
    engine(
        &mut a,
        agent(AgentEvent::ToolCallReady {
            id: "p1".into(),
            name: "spawn_agent".into(),
            arguments: r#"{"task":"plan the fix","role":"planner"}"#.into(),
        }),
    );
    engine(
        &mut a,
        agent(sub(AgentEvent::ToolCallReady {
            id: "s1".into(),
            name: "bash".into(),
            arguments: r#"{"command":"cargo test"}"#.into(),
        })),
    );
    engine(
        &mut a,
        agent(sub(AgentEvent::ToolResult {
            id: "s1".into(),
            name: "bash".into(),
            is_error: false,
            bytes: 4,
            summary: "ok".into(),
            duration_ms: 1200,
            failed_edit: false,
            outcome: Some(ToolOutcome::Exit { code: 3 }),
            output: "FAILED".into(),
            timing: None,
        })),
    );
    engine(
        &mut a,
        agent(sub(AgentEvent::Usage {
            step: tokens(500),
            total: tokens(500),
            cost: None,
        })),
    );
    engine(
        &mut a,
        agent(sub(AgentEvent::Finished {
            stop: RunStop::Completed,
        })),
    );
    engine(
        &mut a,
        agent(AgentEvent::Usage {
            step: tokens(500),
            total: tokens(700),
            cost: Some(0.0),
        }),
    );
    let panel = &a.panels[0];
    let lines: Vec<&str> = panel
        .transcript
        .lines()
        .iter()
        .filter(|l| !l.verbose_only)
        .map(|l| l.text())
        .collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("⚙ spawn_agent plan the fix"))
        .unwrap_or_else(|| panic!("{lines:?}"));
    assert_eq!(
        lines[at + 1..at + 3],
        [
            "  ↳ planner #1: ✗ bash cargo test · 1.2 s · ok",
            "  ↳ planner #1 done"
        ]
    );
    assert_eq!(panel.tool_calls, 0);
    assert_eq!(panel.usage.input, 700);
}

#[test]
fn models_and_settings_change_for_the_next_turn() {
    let mut a = app();
    typed(&mut a, "/models remove sloppy");
    key(&mut a, KeyCode::Enter);
    assert_eq!(a.roster, ["demo/good"]);
    assert_eq!(a.panels.len(), 1);
    typed(&mut a, "/models add demo/reckless");
    assert_eq!(
        key(&mut a, KeyCode::Enter),
        vec![Effect::AddModels {
            specs: vec!["demo/reckless".into()],
            replace: false
        }]
    );
    engine(
        &mut a,
        EngineMsg::ModelsAdded {
            added: vec!["demo/reckless".into()],
            errors: vec![],
            replace: false,
        },
    );
    assert_eq!(a.roster, ["demo/good", "demo/reckless"]);
    assert_eq!(a.panels.len(), 2);
    typed(&mut a, "/config max_steps 7");
    key(&mut a, KeyCode::Enter);
    assert_eq!(a.settings.max_steps, 7);
    typed(&mut a, "/config tools read_file,bash");
    key(&mut a, KeyCode::Enter);
    assert!(a.status.as_ref().unwrap().error, "bash is not offered here");
    assert_eq!(a.settings.tools, None);
    typed(&mut a, "/config");
    key(&mut a, KeyCode::Enter);
    assert!(matches!(a.overlay, Some(Overlay::Info { .. })));
}

#[test]
fn ctrl_c_clears_then_quits_and_terminate_always_quits() {
    let mut a = app();
    typed(&mut a, "draft");
    assert!(press(&mut a, KeyCode::Char('c'), KeyModifiers::CONTROL).is_empty());
    // No turn waits for a choice: the first Ctrl+C on an empty prompt quits.
    assert!(a.prompt.is_empty());
    assert_eq!(
        press(&mut a, KeyCode::Char('c'), KeyModifiers::CONTROL),
        vec![Effect::Quit]
    );
    let mut b = app();
    assert_eq!(
        update(&mut b, Msg::Terminate),
        vec![Effect::CancelAll, Effect::Quit]
    );
    assert!(b.quit);
}

#[test]
fn newlines_history_and_zoom() {
    let mut a = app();
    engine(&mut a, EngineMsg::HistoryLoaded(vec!["old one".into()]));
    typed(&mut a, "a");
    press(&mut a, KeyCode::Enter, KeyModifiers::SHIFT);
    press(&mut a, KeyCode::Char('j'), KeyModifiers::CONTROL);
    typed(&mut a, "b");
    assert_eq!(a.prompt.raw(), "a\n\nb");
    key(&mut a, KeyCode::Up);
    key(&mut a, KeyCode::Up);
    key(&mut a, KeyCode::Up);
    assert_eq!(a.prompt.raw(), "old one");
    key(&mut a, KeyCode::Down);
    assert_eq!(a.prompt.raw(), "a\n\nb");
    press(&mut a, KeyCode::Char('u'), KeyModifiers::CONTROL);
    key(&mut a, KeyCode::Enter);
    assert!(a.zoom);
}

#[test]
fn export_and_save_carry_the_session_to_the_driver() {
    let mut a = app();
    typed(&mut a, "/export out.md");
    match key(&mut a, KeyCode::Enter).as_slice() {
        [Effect::Export { path, markdown }] => {
            assert_eq!(path.as_deref(), Some("out.md"));
            assert!(markdown.contains("## demo/good"));
        }
        other => panic!("{other:?}"),
    }
    typed(&mut a, "/save");
    assert!(matches!(
        key(&mut a, KeyCode::Enter).as_slice(),
        [Effect::Save { path: None, .. }]
    ));
}

fn mouse(app: &mut App, kind: crossterm::event::MouseEventKind, column: u16, row: u16) {
    update(
        app,
        Msg::Mouse(crossterm::event::MouseEvent {
            kind,
            column,
            row,
            modifiers: KeyModifiers::NONE,
        }),
    );
}

/// Issue 14 item 18: the wheel scrolls the panel under the pointer (not the focused one) and
/// a click focuses the panel it lands on; `/mouse` gives the mouse back to the terminal.
#[test]
fn the_wheel_scrolls_the_panel_under_it_and_a_click_focuses_it() {
    use crossterm::event::{MouseButton, MouseEventKind};
    let mut a = app();
    a.size = (120, 30);
    typed(&mut a, "go");
    key(&mut a, KeyCode::Enter);
    engine(&mut a, EngineMsg::TurnStarted { turn: 1 });
    for panel in 0..2 {
        let text: String = (0..80).map(|n| format!("line {n}\n")).collect();
        engine(
            &mut a,
            EngineMsg::Agent {
                panel,
                event: AgentEvent::TextDelta { text },
            },
        );
    }
    assert_eq!(a.focus, 0);
    // Panels wrap their lines when drawn: draw one frame, as the event loop does.
    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(120, 30)).unwrap();
    terminal
        .draw(|f| versus::tui::view::draw(f, &mut a))
        .unwrap();
    // Two panels side by side at 120 columns: the right one starts past the middle.
    mouse(&mut a, MouseEventKind::ScrollUp, 90, 10);
    assert_eq!(
        a.panels[1].scroll, 3,
        "the panel under the pointer scrolled"
    );
    assert_eq!(a.panels[0].scroll, 0, "the focused panel did not");
    mouse(&mut a, MouseEventKind::ScrollDown, 90, 10);
    assert_eq!(a.panels[1].scroll, 0);
    mouse(&mut a, MouseEventKind::Down(MouseButton::Left), 90, 10);
    assert_eq!(a.focus, 1, "a click focuses the panel");
    mouse(&mut a, MouseEventKind::Down(MouseButton::Left), 10, 10);
    assert_eq!(a.focus, 0);

    a.mouse = true;
    typed(&mut a, "/mouse");
    let effects = key(&mut a, KeyCode::Enter);
    assert_eq!(effects, vec![Effect::Mouse(false)]);
    assert!(!a.mouse);
    assert!(status_text(&a).contains("the terminal selects text"));
}

/// Issue 14 item 4: a status message longer than the screen is wide wraps onto extra rows
/// instead of being cut.
#[test]
fn a_long_status_message_wraps_instead_of_being_cut() {
    let mut a = app();
    let text = "the changes of demo/sloppy cannot be reviewed: could not read the base content of src/a/very/long/path/to/a/file.rs (it changed since the run started); END-OF-MESSAGE";
    a.error(text);
    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(80, 24)).unwrap();
    terminal
        .draw(|f| versus::tui::view::draw(f, &mut a))
        .unwrap();
    let screen = crate::util::screen_rows(terminal.backend().buffer()).join("\n");
    assert!(screen.contains("END-OF-MESSAGE"), "{screen}");
    // The panels keep their place above it.
    assert!(screen.contains("demo/good"), "{screen}");
}

/// Issue 14 item 1 (noticed): the compaction notice named the real models in blind mode.
#[test]
fn the_compaction_notice_names_no_model_in_blind_mode() {
    let mut a = app();
    engine(&mut a, EngineMsg::Compacted(vec![("demo/good".into(), 2)]));
    assert!(status_text(&a).contains("compacted demo/good (2 turn(s))"));
    a.blind = true;
    engine(&mut a, EngineMsg::Compacted(vec![("demo/good".into(), 2)]));
    let text = status_text(&a);
    assert!(
        text.contains("compacted 1 model(s)") && !text.contains("demo/"),
        "{text}"
    );
}

/// One finished bash call on `panel`: `command`, its outcome and the text the model received.
fn bash_call(
    app: &mut App,
    panel: usize,
    id: &str,
    command: &str,
    outcome: ToolOutcome,
    output: &str,
) {
    let arguments = serde_json::json!({ "command": command }).to_string();
    for event in [
        AgentEvent::ToolCallStarted {
            id: id.into(),
            name: "bash".into(),
        },
        AgentEvent::ToolCallReady {
            id: id.into(),
            name: "bash".into(),
            arguments,
        },
        AgentEvent::ToolResult {
            id: id.into(),
            name: "bash".into(),
            is_error: false,
            bytes: output.len(),
            summary: output.lines().next().unwrap_or_default().into(),
            duration_ms: 20,
            failed_edit: false,
            outcome: Some(outcome),
            output: output.into(),
            timing: None,
        },
    ] {
        engine(app, EngineMsg::Agent { panel, event });
    }
}

#[test]
fn ctrl_t_opens_the_focused_panels_tool_results_whole_on_the_latest_call() {
    let mut a = app();
    a.size = (100, 30);
    // Before any call: a status line says so, no overlay.
    press(&mut a, KeyCode::Char('t'), KeyModifiers::CONTROL);
    assert_eq!(a.overlay, None);
    assert!(a.status.clone().unwrap().text.contains("no tool call"));

    typed(&mut a, "go");
    key(&mut a, KeyCode::Enter);
    engine(&mut a, EngineMsg::TurnStarted { turn: 1 });
    let long: String = (1..=40).map(|i| format!("line {i}\n")).collect();
    bash_call(
        &mut a,
        0,
        "c1",
        "make",
        ToolOutcome::Exit { code: 3 },
        &format!("{long}[exit code: 3]"),
    );
    bash_call(
        &mut a,
        0,
        "c2",
        "echo b",
        ToolOutcome::Ok,
        "b\n[exit code: 0]",
    );
    bash_call(
        &mut a,
        1,
        "d1",
        "echo other",
        ToolOutcome::Ok,
        "other\n[exit code: 0]",
    );

    let effects = press(&mut a, KeyCode::Char('t'), KeyModifiers::CONTROL);
    assert!(effects.is_empty(), "{effects:?}");
    let Some(Overlay::Info { title, lines }) = a.overlay.clone() else {
        panic!("no overlay: {:?}", a.overlay);
    };
    assert_eq!(title, "tool results · demo/good");
    assert_eq!(lines[0], "turn 1 · ✗ exit 3 bash make · 20 ms");
    assert!(
        lines.contains(&"  line 1".to_string()),
        "the whole output: {lines:?}"
    );
    assert!(lines.contains(&"  line 40".to_string()), "{lines:?}");
    assert!(
        !lines.iter().any(|l| l.contains("other")),
        "only the focused panel: {lines:?}"
    );
    // It opens on the latest call, the earlier ones above it.
    let last = lines
        .iter()
        .position(|l| l.contains("bash echo b"))
        .unwrap();
    let panels = versus::tui::layout::areas(&a, ratatui::layout::Rect::new(0, 0, 100, 30)).panels;
    let end = versus::tui::view::overlay::max_scroll(&a, panels);
    assert!(end > 0 && end < last, "the text is longer than the screen");
    assert_eq!(
        a.overlay_scroll, end,
        "scrolled as far towards the latest call as it goes"
    );
    // Any other key closes it; the panel's prompt is untouched.
    key(&mut a, KeyCode::Char('x'));
    assert_eq!(a.overlay, None);
    assert!(a.prompt.is_empty());

    // Tab to the other panel: its own results.
    key(&mut a, KeyCode::Tab);
    press(&mut a, KeyCode::Char('t'), KeyModifiers::CONTROL);
    let Some(Overlay::Info { title, lines }) = a.overlay.clone() else {
        panic!("no overlay");
    };
    assert_eq!(title, "tool results · demo/sloppy");
    assert_eq!(
        lines,
        [
            "turn 1 · ✓ bash echo other · 20 ms",
            "  other",
            "  [exit code: 0]"
        ]
    );
}

/// Issue 22 item 10: a run's last line carries the panel title's mark — `✓` for a normal
/// finish, `■` only for a limit or a cancel (docs/tui.md's legend), `✗` for an error.
#[test]
fn a_finished_run_is_marked_like_its_title() {
    for (stop, mark) in [
        (RunStop::Completed, "✓ done"),
        (RunStop::MaxSteps, "■ max steps"),
        (RunStop::Timeout, "■ timeout"),
        (RunStop::Cancelled, "■ cancelled"),
        (RunStop::Error, "✗ error"),
    ] {
        let mut a = app();
        typed(&mut a, "go");
        key(&mut a, KeyCode::Enter);
        engine(&mut a, EngineMsg::TurnStarted { turn: 1 });
        engine(
            &mut a,
            EngineMsg::Finished {
                panel: 0,
                summary: RunSummary {
                    stop,
                    elapsed_ms: 1,
                    writes: 0,
                    files: Vec::new(),
                    deleted: Vec::new(),
                    error: None,
                },
            },
        );
        let lines: Vec<String> = a.panels[0]
            .transcript
            .lines()
            .iter()
            .map(|l| l.text().to_string())
            .collect();
        assert!(
            lines.iter().any(|l| l.starts_with(&format!("{mark} · "))),
            "{stop:?}: {lines:?}"
        );
        assert_eq!(
            lines.iter().filter(|l| l.starts_with('■')).count(),
            usize::from(!matches!(stop, RunStop::Completed | RunStop::Error)),
            "{stop:?}: {lines:?}"
        );
    }
}

fn overlay_text(app: &App) -> String {
    match &app.overlay {
        Some(Overlay::Info { lines, .. }) => lines.join("\n"),
        other => panic!("expected an info overlay, got {other:?}"),
    }
}

#[test]
fn models_shows_the_cached_provider_lists_and_the_background_refresh_updates_it() {
    let mut a = app();
    typed(&mut a, "/models");
    // The cache is asked for (and refreshed in the background when stale); the overlay opens
    // at once without waiting.
    assert_eq!(key(&mut a, KeyCode::Enter), vec![Effect::RemoteModels]);
    assert!(
        overlay_text(&a).contains("(no list yet)"),
        "{}",
        overlay_text(&a)
    );
    engine(
        &mut a,
        EngineMsg::RemoteModels {
            lists: vec![("openai".into(), vec!["gpt-5.4".into()])],
            refreshing: true,
        },
    );
    let text = overlay_text(&a);
    assert!(text.contains("refreshing in the background"), "{text}");
    assert!(text.contains("  openai/gpt-5.4"), "{text}");
    let many: Vec<String> = (0..20).map(|n| format!("m{n:02}")).collect();
    engine(
        &mut a,
        EngineMsg::RemoteModels {
            lists: vec![
                ("openai".into(), vec!["gpt-5.4".into(), "o3".into()]),
                ("ollama".into(), many),
            ],
            refreshing: false,
        },
    );
    let text = overlay_text(&a);
    assert!(!text.contains("refreshing"), "{text}");
    assert!(text.contains("  openai/gpt-5.4, openai/o3"), "{text}");
    assert!(text.contains("ollama/m11, and 8 more"), "{text}");
    // Still the session's models first.
    assert!(
        text.starts_with("Models of the next turn:\n  demo/good"),
        "{text}"
    );

    // Blind mode asks for no list and shows none.
    a.overlay = None;
    a.blind = true;
    typed(&mut a, "/models");
    assert!(key(&mut a, KeyCode::Enter).is_empty());
    let text = overlay_text(&a);
    assert!(
        !text.contains("Offered by") && !text.contains("openai/o3"),
        "{text}"
    );
}
