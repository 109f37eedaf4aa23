//! The review compared across models (issue 14 item 16) and long diff lines (item 4): `v`
//! diffs the selected model's file against another model's version, `V` shows every model's
//! version of the hunk on screen, `<` / `>` scroll long lines sideways and `w` wraps them.
//! Pure updates, snapshots of the real draw function at 200x50, 80x24 and 60x15, and the
//! blind-mode frame scan over the new views.

use crossterm::event::KeyCode;
use versus::tui::action::EngineMsg;
use versus::tui::state::{App, Screen};
use versus::workspace::Base;
use versus::workspace::changeset::ChangeSet;

use super::tui_review::{
    app, assert_no_name, ch, change_set, finish, hide, key, pricing, project, render, select, send,
    status, typed, write,
};

const GOOD: &str = "demo/good";
const CAREFUL: &str = "demo/careful";
const SLOPPY: &str = "demo/sloppy";

/// A comment line long enough to be cut at every size tested.
fn long_line() -> String {
    format!(
        "// {} END",
        (1..=30)
            .map(|i| format!("word{i}"))
            .collect::<Vec<_>>()
            .join(" ")
    )
}

/// demo/good: pricing.rs lines 5 (`>=`) and 25 (tax); demo/careful: the same line 5 and a
/// long comment on line 14; demo/sloppy: line 5 its own way.
fn sets(base: &Base) -> Vec<ChangeSet> {
    let fixed = "    if count >= BULK_MIN_ITEMS {";
    let long = long_line();
    vec![
        change_set(
            base,
            GOOD,
            &[write(
                0,
                "src/pricing.rs",
                &pricing(&[
                    (4, fixed),
                    (24, "pub fn tax(cents: u64) -> u64 { cents * 20 / 100 }"),
                ]),
                "edit_file",
            )],
        ),
        change_set(
            base,
            CAREFUL,
            &[write(
                0,
                "src/pricing.rs",
                &pricing(&[(4, fixed), (13, &long)]),
                "edit_file",
            )],
        ),
        change_set(
            base,
            SLOPPY,
            &[write(
                0,
                "src/pricing.rs",
                &pricing(&[(4, "    if count + 1 > BULK_MIN_ITEMS {")]),
                "write_file",
            )],
        ),
    ]
}

/// A finished turn of the three models with their change sets in: the review is open with
/// demo/good's pricing.rs on screen (the shown order is the panel order unless blind).
fn reviewed(base: &Base, blind: bool) -> App {
    let labels = [GOOD, CAREFUL, SLOPPY];
    let mut a = app(&labels);
    if blind {
        hide(&mut a, 7);
    }
    typed(&mut a, "The discount test fails. Fix it.");
    key(&mut a, KeyCode::Enter);
    send(&mut a, EngineMsg::TurnStarted { turn: 1 });
    for (panel, set) in sets(base).into_iter().enumerate() {
        finish(&mut a, panel, &["src/pricing.rs"]);
        send(
            &mut a,
            EngineMsg::ChangeSet {
                turn: 1,
                label: labels[panel].into(),
                set: Ok(set),
            },
        );
    }
    send(&mut a, EngineMsg::TurnEnded { turn: 1 });
    assert_eq!(a.screen, Screen::Review);
    select(&mut a, GOOD);
    a.status = None;
    a
}

fn against(a: &App) -> Option<String> {
    a.review.as_ref().unwrap().against.clone()
}

fn title_row(a: &mut App, w: u16, h: u16) -> String {
    let t = render(a, w, h);
    crate::util::screen_rows(t.backend().buffer())
        .into_iter()
        .find(|r| r.contains("src/pricing.rs "))
        .unwrap_or_default()
}

// ---------------------------------------------------------------------------------------------
// Pure updates

#[test]
fn v_cycles_through_the_models_that_changed_the_file_then_back_to_the_base() {
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    let mut a = reviewed(&base, false);
    assert_eq!(against(&a), None);
    ch(&mut a, 'v');
    assert_eq!(against(&a).as_deref(), Some(CAREFUL));
    let (text, error) = status(&a);
    assert!(
        !error && text.contains("comparing with demo/careful"),
        "{text}"
    );
    assert!(title_row(&mut a, 200, 50).contains("demo/good vs demo/careful · src/pricing.rs"));
    ch(&mut a, 'v');
    assert_eq!(against(&a).as_deref(), Some(SLOPPY));
    ch(&mut a, 'v');
    assert_eq!(against(&a), None, "after the last model: the base again");
    let (text, _) = status(&a);
    assert!(text.contains("the base again"), "{text}");
    assert!(!title_row(&mut a, 200, 50).contains(" vs "));
}

#[test]
fn the_comparison_shows_only_what_differs_between_the_two_models() {
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    let mut a = reviewed(&base, false);
    ch(&mut a, 'v');
    let review = a.review.as_ref().unwrap();
    let file = review.shown_file().unwrap();
    let changed: Vec<String> = file
        .hunks
        .iter()
        .flat_map(|h| h.lines.iter())
        .filter(|l| l.kind != versus::workspace::changeset::LineKind::Context)
        .map(|l| l.text.clone())
        .collect();
    // Line 5 was fixed the same way by both: not shown. Careful's long line 14 is theirs
    // (removed), good's line 25 is mine (added).
    assert!(
        !changed.iter().any(|l| l.contains("BULK_MIN_ITEMS")),
        "{changed:?}"
    );
    assert_eq!(
        changed,
        vec![
            long_line(),
            "// line 14".to_string(),
            "pub fn tax(cents: u64) -> u64 { cents / 5 }".to_string(),
            "pub fn tax(cents: u64) -> u64 { cents * 20 / 100 }".to_string(),
        ]
    );
    // Against sloppy: both versions of line 5 show.
    ch(&mut a, 'v');
    let review = a.review.as_ref().unwrap();
    let texts: Vec<&str> = review.shown_file().unwrap().hunks[0]
        .lines
        .iter()
        .map(|l| l.text.as_str())
        .collect();
    assert!(texts.contains(&"    if count + 1 > BULK_MIN_ITEMS {"));
    assert!(texts.contains(&"    if count >= BULK_MIN_ITEMS {"));
}

#[test]
fn picks_are_refused_while_comparing_and_work_again_against_the_base() {
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    let mut a = reviewed(&base, false);
    ch(&mut a, 'v');
    for c in [' ', 'f', 'L', 'J', 'm'] {
        a.status = None;
        ch(&mut a, c);
        let (text, error) = status(&a);
        assert!(
            error && text.contains("picks are relative to the base"),
            "{c:?}: {text}"
        );
        let review = a.review.as_ref().unwrap();
        assert!(review.basket.is_empty(), "{c:?} picked something");
        assert!(review.line.is_none() && review.draft.is_none(), "{c:?}");
    }
    ch(&mut a, 'v');
    ch(&mut a, 'v');
    assert_eq!(against(&a), None);
    ch(&mut a, ' ');
    assert!(
        !a.review.as_ref().unwrap().basket.is_empty(),
        "picked against the base"
    );
}

#[test]
fn v_says_so_when_no_other_model_changed_the_file() {
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    let mut a = app(&[GOOD, SLOPPY]);
    typed(&mut a, "Fix it.");
    key(&mut a, KeyCode::Enter);
    send(&mut a, EngineMsg::TurnStarted { turn: 1 });
    let readme = change_set(
        &base,
        GOOD,
        &[write(0, "README.md", "# Shop\n", "write_file")],
    );
    let empty = change_set(&base, SLOPPY, &[]);
    for (panel, (label, set)) in [(GOOD, readme), (SLOPPY, empty)].into_iter().enumerate() {
        finish(&mut a, panel, &[]);
        send(
            &mut a,
            EngineMsg::ChangeSet {
                turn: 1,
                label: label.into(),
                set: Ok(set),
            },
        );
    }
    select(&mut a, GOOD);
    ch(&mut a, 'v');
    assert_eq!(against(&a), None);
    let (text, _) = status(&a);
    assert!(text.contains("no other model changed this file"), "{text}");
}

#[test]
fn sideways_keys_scroll_clamp_and_show_the_column_and_w_wraps() {
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    let mut a = reviewed(&base, false);
    select(&mut a, CAREFUL);
    a.size = (80, 24);
    let hscroll = |a: &App| a.review.as_ref().unwrap().hscroll;
    ch(&mut a, '<');
    assert_eq!(hscroll(&a), 0);
    ch(&mut a, '>');
    ch(&mut a, '>');
    assert_eq!(hscroll(&a), 16);
    assert!(
        title_row(&mut a, 80, 24).contains("col 17"),
        "{}",
        title_row(&mut a, 80, 24)
    );
    for _ in 0..100 {
        ch(&mut a, '>');
    }
    let review = a.review.as_ref().unwrap();
    let doc = review.doc.as_ref().unwrap();
    let (room, _) = doc.text_widths(review.diff_width);
    assert_eq!(
        hscroll(&a),
        doc.widest - room,
        "stops with the line's end in sight"
    );
    ch(&mut a, 'w');
    assert_eq!(hscroll(&a), 0);
    assert!(title_row(&mut a, 80, 24).contains("wrap"));
    ch(&mut a, '>');
    let (text, _) = status(&a);
    assert!(text.contains("long lines wrap"), "{text}");
}

#[test]
fn big_v_lists_every_models_version_of_the_hunk_and_esc_returns() {
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    let mut a = reviewed(&base, false);
    ch(&mut a, 'V');
    let view = a
        .review
        .as_ref()
        .unwrap()
        .versions
        .clone()
        .expect("the view is open");
    assert_eq!(view.columns.len(), 3);
    let models: Vec<&str> = view.columns.iter().map(|c| c.model.as_str()).collect();
    assert_eq!(models, [GOOD, CAREFUL, SLOPPY]);
    assert_eq!(
        view.columns[1].same_as,
        Some(0),
        "careful wrote the same line 5"
    );
    assert!(!view.columns[2].unchanged && view.columns[2].same_as.is_none());
    key(&mut a, KeyCode::Esc);
    assert!(a.review.as_ref().unwrap().versions.is_none());
    assert_eq!(
        a.screen,
        Screen::Review,
        "Esc closes the view, not the review"
    );
    // Not while comparing: the region is a hunk of the base diff.
    ch(&mut a, 'v');
    ch(&mut a, 'V');
    assert!(a.review.as_ref().unwrap().versions.is_none());
    let (text, error) = status(&a);
    assert!(error && text.contains("v back to the base"), "{text}");
}

#[test]
fn the_keys_and_the_wheel_scroll_the_versions_view_not_the_diff_under_it() {
    use crossterm::event::{KeyModifiers, MouseEvent, MouseEventKind};
    use ratatui::layout::Rect;
    use versus::tui::action::Msg;
    use versus::tui::layout::{areas, review_areas};
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    let mut a = reviewed(&base, false);
    render(&mut a, 80, 24);
    ch(&mut a, 'V');
    let scroll = |a: &App| {
        let r = a.review.as_ref().unwrap();
        (r.versions.as_ref().unwrap().scroll, r.scroll)
    };
    key(&mut a, KeyCode::Down);
    key(&mut a, KeyCode::Down);
    key(&mut a, KeyCode::Up);
    assert_eq!(scroll(&a), (1, 0));
    let r = review_areas(&a, areas(&a, Rect::new(0, 0, a.size.0, a.size.1)).panels);
    versus::tui::update::update(
        &mut a,
        Msg::Mouse(MouseEvent {
            kind: MouseEventKind::ScrollDown,
            column: r.diff.x + 5,
            row: r.diff.y + 5,
            modifiers: KeyModifiers::NONE,
        }),
    );
    assert_eq!(scroll(&a), (4, 0), "three lines a notch, the diff stays");
    key(&mut a, KeyCode::Home);
    assert_eq!(scroll(&a), (0, 0));
    for _ in 0..100 {
        key(&mut a, KeyCode::PageDown);
    }
    let (bottom, _) = scroll(&a);
    assert!(bottom > 0 && bottom < 27, "bounded: {bottom}");
}

// ---------------------------------------------------------------------------------------------
// Snapshots

const SIZES: [(u16, u16); 3] = [(200, 50), (80, 24), (60, 15)];

#[test]
fn model_against_model_diff() {
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    let mut a = reviewed(&base, false);
    ch(&mut a, 'v');
    a.status = None;
    for (w, h) in SIZES {
        let t = render(&mut a, w, h);
        insta::assert_snapshot!(format!("a_vs_b_{w}x{h}"), t.backend());
    }
}

#[test]
fn every_models_version_of_one_hunk() {
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    let mut a = reviewed(&base, false);
    ch(&mut a, 'V');
    for (w, h) in SIZES {
        let t = render(&mut a, w, h);
        insta::assert_snapshot!(format!("versions_{w}x{h}"), t.backend());
    }
    // Careful's long line, in the region of its second hunk: cut with → in its column.
    key(&mut a, KeyCode::Esc);
    select(&mut a, CAREFUL);
    ch(&mut a, 'n');
    ch(&mut a, 'V');
    let t = render(&mut a, 200, 50);
    let screen = crate::util::screen_rows(t.backend().buffer()).join("\n");
    assert!(screen.contains("+// word1 word2"), "{screen}");
    assert!(
        screen.contains("→│"),
        "the long line is cut with →:\n{screen}"
    );
    insta::assert_snapshot!("versions_long_line_200x50", t.backend());
}

#[test]
fn a_long_line_cut_scrolled_and_wrapped() {
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    let mut a = reviewed(&base, false);
    select(&mut a, CAREFUL);
    ch(&mut a, 'n');
    for (w, h) in SIZES {
        a.size = (w, h);
        let t = render(&mut a, w, h);
        insta::assert_snapshot!(format!("long_cut_{w}x{h}"), t.backend());
        ch(&mut a, '>');
        ch(&mut a, '>');
        let t = render(&mut a, w, h);
        insta::assert_snapshot!(format!("long_scrolled_{w}x{h}"), t.backend());
        ch(&mut a, 'w');
        let t = render(&mut a, w, h);
        insta::assert_snapshot!(format!("long_wrapped_{w}x{h}"), t.backend());
        ch(&mut a, 's');
        let t = render(&mut a, w, h);
        insta::assert_snapshot!(format!("long_wrapped_side_{w}x{h}"), t.backend());
        ch(&mut a, 'w');
        ch(&mut a, '>');
        let t = render(&mut a, w, h);
        insta::assert_snapshot!(format!("long_scrolled_side_{w}x{h}"), t.backend());
        ch(&mut a, 's');
        ch(&mut a, '<');
        a.status = None;
    }
}

// ---------------------------------------------------------------------------------------------
// Blind mode

/// Every frame of the new views is scanned at the three sizes: the comparison's title and
/// messages, the N-way view's column headings, the long-line views.
#[test]
fn blind_comparisons_show_only_aliases() {
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    let mut a = reviewed(&base, true);
    assert!(a.hiding());
    for (step, code) in [
        ("compare with the next model", KeyCode::Char('v')),
        ("a refused pick", KeyCode::Char(' ')),
        ("compare with the last model", KeyCode::Char('v')),
        ("side by side comparison", KeyCode::Char('s')),
        ("back to the base", KeyCode::Char('v')),
        ("every version", KeyCode::Char('V')),
        ("every version scrolled", KeyCode::Down),
        ("versions closed", KeyCode::Esc),
        ("unified", KeyCode::Char('s')),
        ("sideways", KeyCode::Char('>')),
        ("wrapped", KeyCode::Char('w')),
        ("next model", KeyCode::Tab),
        ("compare from there", KeyCode::Char('v')),
        ("its versions refused", KeyCode::Char('V')),
    ] {
        key(&mut a, code);
        assert_no_name(&mut a, step);
    }
    // And the aliases are what the title names.
    let review = a.review.as_ref().unwrap();
    assert!(review.against.is_some());
    let title = title_row(&mut a, 200, 50);
    assert!(
        title.contains("Model ") && title.contains(" vs Model "),
        "{title}"
    );
}
