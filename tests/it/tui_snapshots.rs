//! Component tests of the interface: the real draw function on ratatui's TestBackend at fixed
//! sizes, compared with snapshot files in tests/it/snapshots/ (review changes with
//! `cargo insta review`, or `INSTA_UPDATE=always cargo test --test it tui_snapshots::`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::style::Color;
use versus::model::{AgentEvent, RunStop, Usage};
use versus::tui::action::{EngineMsg, Msg, Settings};
use versus::tui::panel::RunSummary;
use versus::tui::state::{App, SessionInfo};
use versus::tui::theme::Theme;
use versus::tui::update::update;
use versus::tui::view::draw;

pub(crate) fn app(models: &[&str]) -> App {
    let mut app = App::new(
        SessionInfo {
            id: "20261121-090503-ab12".into(),
            project: "/work/project".into(),
            demo: false,
        },
        models.iter().map(|m| m.to_string()).collect(),
        Settings::default(),
        Theme::COLOR,
    );
    app.now_ms = 12_000;
    app
}

pub(crate) fn send(app: &mut App, msg: EngineMsg) {
    update(app, Msg::Engine(msg));
}

pub(crate) fn agent(app: &mut App, panel: usize, event: AgentEvent) {
    send(app, EngineMsg::Agent { panel, event });
}

pub(crate) fn text(app: &mut App, panel: usize, text: &str) {
    agent(
        app,
        panel,
        AgentEvent::TextDelta {
            text: text.to_string(),
        },
    );
}

pub(crate) fn key(app: &mut App, code: KeyCode) {
    update(app, Msg::Key(KeyEvent::new(code, KeyModifiers::NONE)));
}

pub(crate) fn ctrl(app: &mut App, c: char) {
    update(
        app,
        Msg::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)),
    );
}

pub(crate) fn typed(app: &mut App, s: &str) {
    for c in s.chars() {
        key(app, KeyCode::Char(c));
    }
}

/// Sends `prompt` and starts the turn as the driver would.
pub(crate) fn start_turn(app: &mut App, prompt: &str) {
    typed(app, prompt);
    key(app, KeyCode::Enter);
    let turn = app.turn + 1;
    send(app, EngineMsg::TurnStarted { turn });
    app.status = None;
    // The clock moves on: panels show 7 s elapsed.
    app.now_ms += 7_000;
}

pub(crate) fn tool(app: &mut App, panel: usize, id: &str, name: &str, args: &str) {
    agent(
        app,
        panel,
        AgentEvent::ToolCallStarted {
            id: id.into(),
            name: name.into(),
        },
    );
    agent(
        app,
        panel,
        AgentEvent::ToolCallReady {
            id: id.into(),
            name: name.into(),
            arguments: args.into(),
        },
    );
}

pub(crate) fn result(
    app: &mut App,
    panel: usize,
    id: &str,
    name: &str,
    error: Option<&str>,
    bytes: usize,
) {
    agent(
        app,
        panel,
        AgentEvent::ToolResult {
            id: id.into(),
            name: name.into(),
            is_error: error.is_some(),
            bytes,
            summary: error.unwrap_or("ok").into(),
            duration_ms: 4,
            failed_edit: error.is_some() && name == "edit_file",
            outcome: None,
            output: String::new(),
            timing: None,
        },
    );
}

pub(crate) fn usage(app: &mut App, panel: usize, input: u64, output: u64, cost: f64) {
    let total = Usage {
        input,
        output,
        ..Usage::default()
    };
    agent(
        app,
        panel,
        AgentEvent::Usage {
            step: total,
            total,
            cost: Some(cost),
        },
    );
}

fn render(app: &mut App, width: u16, height: u16) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|f| draw(f, app)).unwrap();
    terminal
}

/// One model whose edit failed (its error result `output_bytes` long) and whose provider then
/// failed: the error scene the whole-screen and the per-widget snapshots share.
pub(crate) fn tool_error(output_bytes: usize) -> App {
    let mut a = app(&["demo/sloppy"]);
    start_turn(&mut a, "Fix it");
    agent(&mut a, 0, AgentEvent::StepStarted { step: 1 });
    tool(
        &mut a,
        0,
        "e1",
        "edit_file",
        r#"{"path":"src/lib.rs","old_string":"x","new_string":"y"}"#,
    );
    result(
        &mut a,
        0,
        "e1",
        "edit_file",
        Some("old_string not found in src/lib.rs; read the file again"),
        output_bytes,
    );
    agent(
        &mut a,
        0,
        AgentEvent::Error {
            message: "provider error: 500 upstream".into(),
            context_overflow: false,
        },
    );
    a
}

/// Two models mid-run: text streaming with Markdown, a finished tool call, one still running.
pub(crate) fn streaming(models: &[&str]) -> App {
    let mut a = app(models);
    start_turn(&mut a, "The test fails. Fix the bug.");
    for panel in 0..models.len() {
        agent(&mut a, panel, AgentEvent::StepStarted { step: 1 });
    }
    text(
        &mut a,
        0,
        "## Plan\nRun the **failing** test, then read `pricing.rs`.\n",
    );
    tool(
        &mut a,
        0,
        "c1",
        "bash",
        r#"{"command":"cargo test --quiet"}"#,
    );
    result(&mut a, 0, "c1", "bash", None, 1830);
    agent(&mut a, 0, AgentEvent::StepStarted { step: 2 });
    text(
        &mut a,
        0,
        "The check is off by one:\n```rust\nif count > BULK_MIN_ITEMS {\n```\nFix",
    );
    tool(&mut a, 0, "c2", "read_file", r#"{"path":"src/pricing.rs"}"#);
    usage(&mut a, 0, 1200, 340, 0.0123);
    if models.len() > 1 {
        text(&mut a, 1, "Let me look at the tests first.");
        usage(&mut a, 1, 800, 20, 0.004);
    }
    a
}

#[test]
fn panels_streaming() {
    let mut a = streaming(&["openai/gpt-5", "anthropic/claude-sonnet-4-5"]);
    let t = render(&mut a, 100, 20);
    insta::assert_snapshot!(t.backend());
}

#[test]
fn a_tool_error_is_red_with_its_message() {
    let mut a = tool_error(61);
    agent(
        &mut a,
        0,
        AgentEvent::Finished {
            stop: RunStop::Error,
        },
    );
    send(
        &mut a,
        EngineMsg::Finished {
            panel: 0,
            summary: RunSummary {
                stop: RunStop::Error,
                elapsed_ms: 2100,
                writes: 0,
                files: vec![],
                deleted: vec![],
                error: None,
            },
        },
    );
    let t = render(&mut a, 70, 12);
    insta::assert_snapshot!(t.backend());
    let buffer = t.backend().buffer();
    let row = crate::util::screen_rows(buffer)
        .iter()
        .position(|line| line.contains("✗ edit_file"))
        .and_then(|y| u16::try_from(y).ok())
        .expect("the failed tool line is on screen");
    let x = (0..70).find(|x| buffer[(*x, row)].symbol() == "✗").unwrap();
    assert_eq!(buffer[(x, row)].fg, Color::Red);
}

#[test]
fn wide_terminals_show_panels_side_by_side() {
    let mut a = streaming(&["demo/good", "demo/sloppy", "demo/reckless"]);
    let t = render(&mut a, 150, 16);
    insta::assert_snapshot!(t.backend());
}

#[test]
fn narrow_terminals_stack_panels() {
    let mut a = streaming(&["demo/good", "demo/sloppy", "demo/reckless"]);
    let t = render(&mut a, 60, 26);
    insta::assert_snapshot!(t.backend());
}

#[test]
fn a_tiny_terminal_shows_the_focused_panel_only() {
    let mut a = streaming(&["demo/good", "demo/sloppy", "demo/reckless"]);
    key(&mut a, KeyCode::Tab);
    let t = render(&mut a, 40, 10);
    insta::assert_snapshot!(t.backend());
}

#[test]
fn wide_unicode_wraps_on_column_width() {
    let mut a = app(&["demo/good", "demo/sloppy"]);
    start_turn(&mut a, "日本語で説明して 🚀");
    agent(&mut a, 0, AgentEvent::StepStarted { step: 1 });
    text(
        &mut a,
        0,
        "修正しました：割引は十個以上の注文に適用されます。テストは全部通ります 🎉✅\n",
    );
    text(
        &mut a,
        1,
        "emoji 😀😀😀😀😀😀😀😀😀😀😀😀 and 中文字符混合 text",
    );
    let t = render(&mut a, 64, 18);
    insta::assert_snapshot!(t.backend());
}

#[test]
fn the_prompt_box_searches_history() {
    let mut a = app(&["demo/good"]);
    send(
        &mut a,
        EngineMsg::HistoryLoaded(vec![
            "fix the failing test".into(),
            "add a CHANGELOG entry".into(),
            "explain the pricing module".into(),
        ]),
    );
    ctrl(&mut a, 'r');
    typed(&mut a, "fix");
    let t = render(&mut a, 70, 10);
    insta::assert_snapshot!(t.backend());
    key(&mut a, KeyCode::Enter);
    assert_eq!(a.prompt.raw(), "fix the failing test");
}

#[test]
fn slash_commands_show_a_completion_list() {
    let mut a = app(&["demo/good"]);
    typed(&mut a, "/c");
    let t = render(&mut a, 80, 14);
    insta::assert_snapshot!(t.backend());
}

#[test]
fn a_large_paste_is_a_badge_and_multi_line_prompts_grow() {
    let mut a = app(&["demo/good"]);
    typed(&mut a, "review this:");
    ctrl(&mut a, 'j');
    let paste: String = (0..120).map(|i| format!("line {i}\n")).collect();
    update(&mut a, Msg::Paste(paste));
    typed(&mut a, " please");
    let t = render(&mut a, 60, 12);
    insta::assert_snapshot!(t.backend());
}

#[test]
fn help_lists_keys_and_commands() {
    let mut a = app(&["demo/good"]);
    typed(&mut a, "/help");
    key(&mut a, KeyCode::Enter);
    let t = render(&mut a, 110, 44);
    insta::assert_snapshot!(t.backend());
}
