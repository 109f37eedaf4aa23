//! Issue 22 item 8: labels and paths at 80 columns. Two models whose labels share their first
//! 21 characters (`openrouter/anthropic/claude-…`) and files in deep folders, drawn by the real
//! `draw` function at 160x45, 80x24 and a narrow 60x20: the panels, the review's table, its
//! file list, the basket and every model's version of a hunk each tell the two models apart,
//! file rows keep the file's name, and every cut shows `…`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crossterm::event::KeyCode;
use versus::model::{AgentEvent, Usage};
use versus::tui::action::EngineMsg;
use versus::tui::state::{App, Screen};
use versus::workspace::Base;

use super::tui_review::{app, ch, change_set, finish, key, render, send, typed, write};

const SONNET: &str = "openrouter/anthropic/claude-sonnet-4.5";
const OPUS: &str = "openrouter/anthropic/claude-opus-4.1";
const DEEP: &str = "src/services/billing/pricing/rules/discount_rules.rs";
const SIZES: [(u16, u16); 3] = [(160, 45), (80, 24), (60, 20)];

/// A project with a file in deep folders and a short one.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let deep = dir.path().join(DEEP);
    std::fs::create_dir_all(deep.parent().unwrap()).unwrap();
    std::fs::write(&deep, "pub const MIN: u32 = 10;\npub fn rule() {}\n").unwrap();
    std::fs::write(dir.path().join("README.md"), "# Shop\n").unwrap();
    dir
}

/// Both models finished, each with a change to the deep file (the same line, differently)
/// and Opus with the README too: the review is open.
fn reviewed(base: &Base) -> App {
    let mut a = app(&[SONNET, OPUS]);
    typed(&mut a, "Raise the minimum.");
    key(&mut a, KeyCode::Enter);
    send(&mut a, EngineMsg::TurnStarted { turn: 1 });
    for panel in 0..2 {
        send(
            &mut a,
            EngineMsg::Agent {
                panel,
                event: AgentEvent::Usage {
                    step: Usage::default(),
                    total: Usage {
                        input: 1000,
                        output: 200,
                        ..Usage::default()
                    },
                    cost: Some(0.01),
                },
            },
        );
    }
    let sets = [
        (
            SONNET,
            vec![write(
                0,
                DEEP,
                "pub const MIN: u32 = 12;\npub fn rule() {}\n",
                "edit_file",
            )],
        ),
        (
            OPUS,
            vec![
                write(
                    0,
                    DEEP,
                    "pub const MIN: u32 = 15;\npub fn rule() {}\n",
                    "edit_file",
                ),
                write(1, "README.md", "# Shop\n\nRules.\n", "write_file"),
            ],
        ),
    ];
    for (panel, (label, writes)) in sets.into_iter().enumerate() {
        let files: Vec<&str> = writes.iter().map(|w| w.path.as_str()).collect();
        finish(&mut a, panel, &files);
        send(
            &mut a,
            EngineMsg::ChangeSet {
                turn: 1,
                label: label.into(),
                set: Ok(change_set(base, label, &writes)),
            },
        );
    }
    send(&mut a, EngineMsg::TurnEnded { turn: 1 });
    a.status = None;
    a
}

fn screen(a: &mut App, w: u16, h: u16) -> String {
    let t = render(a, w, h);
    let mut out = String::new();
    let buffer = t.backend().buffer();
    for y in 0..h {
        for x in 0..w {
            out.push_str(buffer[(x, y)].symbol());
        }
        out.push('\n');
    }
    out
}

/// The labels on screen: both whole, or cut with `…` and still told apart by their tails
/// (before, both read `openrouter/anthr`).
fn assert_told_apart(screen: &str, step: &str) {
    let whole = screen.contains(SONNET) && screen.contains(OPUS);
    let cut = screen.contains("open") && screen.contains('…');
    let tails = screen.contains("4.5") && screen.contains("4.1");
    assert!(
        whole || (cut && tails),
        "{step}: the two models look alike:\n{screen}"
    );
}

#[test]
fn two_labels_with_a_long_common_prefix_stay_apart_at_every_size() {
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    for (w, h) in SIZES {
        let mut a = reviewed(&base);
        // The panels, the review hidden behind them.
        key(&mut a, KeyCode::Esc);
        assert_eq!(a.screen, Screen::Panels);
        let panels = screen(&mut a, w, h);
        assert_told_apart(&panels, &format!("panels at {w}x{h}"));
        insta::assert_snapshot!(format!("panels__{w}x{h}"), panels);
        // The review: table, files (Opus: the deep file keeps its name), diff, basket.
        key(&mut a, KeyCode::Char('o'));
        a.screen = Screen::Review;
        super::tui_review::select(&mut a, OPUS);
        ch(&mut a, 'c');
        let review = screen(&mut a, w, h);
        assert_told_apart(&review, &format!("review at {w}x{h}"));
        // (At 60 columns the review has no room for the file list: the diff's title names it.)
        assert!(
            review.contains("discount_rules.rs") || !review.contains("files · "),
            "the file row keeps its name at {w}x{h}:\n{review}"
        );
        if w < 160 {
            assert!(review.contains('…'), "a cut shows at {w}x{h}:\n{review}");
        }
        insta::assert_snapshot!(format!("review__{w}x{h}"), review);
        // Every model's version of the hunk.
        key(&mut a, KeyCode::Char('V'));
        let versions = screen(&mut a, w, h);
        assert_told_apart(&versions, &format!("versions at {w}x{h}"));
        insta::assert_snapshot!(format!("versions__{w}x{h}"), versions);
    }
}
