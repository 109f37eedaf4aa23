//! The key table is what the screen says: the status line shows exactly the hints of the
//! context the keyboard is in, `/help` lists every binding, and a key does what its hint says
//! (the same lookup serves both). The review and its questions are checked in `tui_review`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use versus::tui::action::{EngineMsg, Msg, Settings};
use versus::tui::keymap::{self, Context, When};
use versus::tui::state::{App, Overlay, SessionInfo};
use versus::tui::theme::Theme;
use versus::tui::update::update;
use versus::tui::view::draw;
use versus::tui::view::status::hint_context;

use crate::util::screen_rows;

fn app() -> App {
    let mut app = App::new(
        SessionInfo {
            id: "20261121-090503-ab12".into(),
            project: "/work/project".into(),
            demo: false,
        },
        vec!["demo/good".into(), "demo/sloppy".into()],
        Settings::default(),
        Theme::COLOR,
    );
    app.now_ms = 12_000;
    app
}

fn press(app: &mut App, code: KeyCode, mods: KeyModifiers) {
    update(app, Msg::Key(KeyEvent::new(code, mods)));
}

fn typed(app: &mut App, s: &str) {
    for c in s.chars() {
        press(app, KeyCode::Char(c), KeyModifiers::NONE);
    }
}

fn rows(app: &mut App, width: u16, height: u16) -> Vec<String> {
    app.size = (width, height);
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|f| draw(f, app)).unwrap();
    screen_rows(terminal.backend().buffer())
}

/// The status line (the last row), without its padding.
fn status_line(app: &mut App) -> String {
    rows(app, 200, 30).last().unwrap().trim_end().to_string()
}

/// Checks the status line is the table's hint line for `context` in `when`.
fn shows(app: &mut App, context: Context, when: Option<When>) {
    assert_eq!(hint_context(app), (context, when));
    assert_eq!(status_line(app), keymap::hint_line(context, when));
}

#[test]
fn tui_status_hints_are_the_tables_for_the_prompt_list_search_and_run() {
    let mut a = app();
    shows(&mut a, Context::Prompt, Some(When::Idle));
    typed(&mut a, "/he");
    shows(&mut a, Context::Completion, None);
    press(&mut a, KeyCode::Esc, KeyModifiers::NONE);
    shows(&mut a, Context::Prompt, Some(When::Idle));
    press(&mut a, KeyCode::Char('u'), KeyModifiers::CONTROL);
    press(&mut a, KeyCode::Char('r'), KeyModifiers::CONTROL);
    shows(&mut a, Context::HistorySearch, None);
    press(&mut a, KeyCode::Esc, KeyModifiers::NONE);
    typed(&mut a, "Fix the bug.");
    press(&mut a, KeyCode::Enter, KeyModifiers::NONE);
    update(&mut a, Msg::Engine(EngineMsg::TurnStarted { turn: 1 }));
    a.status = None;
    shows(&mut a, Context::Prompt, Some(When::Running));
}

/// The running hints say Esc cancels all and Enter zooms: the keys do it.
#[test]
fn tui_a_hinted_key_does_what_its_hint_says() {
    let mut a = app();
    typed(&mut a, "Fix the bug.");
    press(&mut a, KeyCode::Enter, KeyModifiers::NONE);
    update(&mut a, Msg::Engine(EngineMsg::TurnStarted { turn: 1 }));
    a.status = None;
    let hints = keymap::hints(Context::Prompt, Some(When::Running));
    let zoom = hints.iter().find(|(_, l)| *l == "zoom").unwrap();
    assert_eq!(zoom.0, "Enter");
    assert!(!a.zoom);
    press(&mut a, KeyCode::Enter, KeyModifiers::NONE);
    assert!(a.zoom, "Enter zooms on an empty prompt");
    let cancel = hints.iter().find(|(_, l)| *l == "cancel all").unwrap();
    assert_eq!(cancel.0, "Esc");
    press(&mut a, KeyCode::Esc, KeyModifiers::NONE);
    assert!(a.status.as_ref().unwrap().text.contains("press Esc again"));
    assert_eq!(
        update(
            &mut a,
            Msg::Key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE))
        ),
        [versus::tui::action::Effect::CancelAll]
    );
}

/// `/help` lists every binding of every context, with all its keys, and the commands.
#[test]
fn tui_help_lists_every_binding() {
    let mut a = app();
    a.overlay = Some(Overlay::Help);
    let screen = rows(&mut a, 160, 200).join("\n");
    for context in Context::ALL {
        assert!(screen.contains(context.title()), "{}", context.title());
        for (keys, help) in keymap::help_rows(context) {
            assert!(
                screen.contains(&format!("{keys} ")) && screen.contains(help),
                "{context:?}: {keys} {help}"
            );
        }
        for binding in context.bindings() {
            assert!(
                screen.contains(&binding.key_names()),
                "{:?}",
                binding.action
            );
        }
    }
    for command in versus::tui::commands::COMMANDS {
        assert!(screen.contains(&format!("/{}", command.name)));
    }
}

/// docs/tui.md's key reference is the table, row for row, as `/help` shows it.
#[test]
fn tui_the_docs_key_reference_is_the_table() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/tui.md")).unwrap();
    let start = doc.find("\n## Keys\n").expect("a Keys section");
    let section = &doc[start..];
    let section = &section[..section.find("\nDetails:").expect("its details")];
    let mut expected = 0;
    for context in Context::ALL {
        assert!(
            section.contains(&format!("\n### {}\n", context.title())),
            "docs/tui.md: no heading for {}",
            context.title()
        );
        for (keys, help) in keymap::help_rows(context) {
            let row = format!("| {keys} | {help} |");
            assert!(section.contains(&row), "docs/tui.md lacks {row}");
            expected += 1;
        }
    }
    let rows = section
        .lines()
        .filter(|l| l.starts_with("| ") && *l != "| Key | Does |")
        .count();
    assert_eq!(rows, expected, "docs/tui.md has rows the table does not");
}
