//! The review screen: picking across models, the basket and its conflicts, applying (with the
//! real apply engine for the user-edit conflict), "none of them", ratings, rewind scopes, blind
//! mode; pure updates plus snapshots of the real draw function on ratatui's TestBackend
//! (tests/it/snapshots/it__tui_review__*.snap; review changes with `cargo insta review`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::style::Color;
use versus::apply::{
    AppliedAs, ApplyEngine, FileStatus, Resolution, RewindAction, RewindFile, RewindPreview,
};
use versus::model::{AgentEvent, RunStop, Usage};
use versus::session::Rating;
use versus::tui::action::{
    CheckResult, CheckState, ChoiceDone, Effect, EngineMsg, Msg, RewindDone, RewindPlan,
    RewindScope, Settings,
};
use versus::tui::panel::RunSummary;
use versus::tui::state::{App, Dialog, Screen, SessionInfo};
use versus::tui::theme::Theme;
use versus::tui::update::update;
use versus::tui::view::draw;
use versus::workspace::changeset::{BaseReader, ChangeSet};
use versus::workspace::{Base, FileWrite, WriteOrigin};

const GOOD: &str = "demo/good";
const SLOPPY: &str = "demo/sloppy";

/// The project both models start from: a 30-line `src/pricing.rs` and a README.
pub(crate) fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/pricing.rs"), pricing(&[])).unwrap();
    std::fs::write(dir.path().join("README.md"), "# Shop\n\nPrices.\n").unwrap();
    dir
}

/// `src/pricing.rs` with some lines replaced (0-based index, new text).
pub(crate) fn pricing(edits: &[(usize, &str)]) -> String {
    let mut lines: Vec<String> = (1..=30)
        .map(|i| match i {
            1 => "pub const BULK_MIN_ITEMS: u32 = 10;".to_string(),
            4 => "pub fn discount(count: u32) -> u32 {".to_string(),
            5 => "    if count > BULK_MIN_ITEMS {".to_string(),
            6 => "        return 10;".to_string(),
            7 => "    }".to_string(),
            8 => "    0".to_string(),
            9 => "}".to_string(),
            25 => "pub fn tax(cents: u64) -> u64 { cents / 5 }".to_string(),
            i => format!("// line {i}"),
        })
        .collect();
    for (i, text) in edits {
        lines[*i] = text.to_string();
    }
    lines.join("\n") + "\n"
}

pub(crate) fn write(seq: u64, path: &str, content: &str, tool: &str) -> FileWrite {
    FileWrite {
        path: path.into(),
        content: Some(Arc::new(content.as_bytes().to_vec())),
        origin: WriteOrigin::new(tool, format!("call-{seq}")),
        seq,
        symlink: false,
    }
}

pub(crate) fn change_set(base: &Base, model: &str, writes: &[FileWrite]) -> ChangeSet {
    ChangeSet::build(model, base, writes, &BaseReader::new(base), None).unwrap()
}

/// demo/good: two edits of pricing.rs (lines 5 and 25) and a README line; demo/sloppy: the
/// same line 5 changed differently (write_file), and a new test file from bash.
fn sets(base: &Base) -> (ChangeSet, ChangeSet) {
    let good = change_set(
        base,
        GOOD,
        &[
            write(
                0,
                "src/pricing.rs",
                &pricing(&[(4, "    if count >= BULK_MIN_ITEMS {")]),
                "edit_file",
            ),
            write(
                1,
                "src/pricing.rs",
                &pricing(&[
                    (4, "    if count >= BULK_MIN_ITEMS {"),
                    (24, "pub fn tax(cents: u64) -> u64 { cents * 20 / 100 }"),
                ]),
                "edit_file",
            ),
            write(
                2,
                "README.md",
                "# Shop\n\nPrices and discounts.\n",
                "write_file",
            ),
        ],
    );
    let sloppy = change_set(
        base,
        SLOPPY,
        &[
            write(
                0,
                "src/pricing.rs",
                &pricing(&[(4, "    if count + 1 > BULK_MIN_ITEMS {")]),
                "write_file",
            ),
            write(
                1,
                "tests/discount.rs",
                "#[test]\nfn ten_items() {\n    assert_eq!(shop::discount(10), 10);\n}\n",
                "bash",
            ),
        ],
    );
    (good, sloppy)
}

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
    app.size = (120, 40);
    app
}

pub(crate) fn send(app: &mut App, msg: EngineMsg) -> Vec<Effect> {
    update(app, Msg::Engine(msg))
}

/// Blind mode on, as the session engine turns it on: its aliases for the roster, shuffled by
/// `seed`, reach the app.
pub(crate) fn hide(app: &mut App, seed: u64) {
    let names = versus::review::BlindNames::new(&app.roster.clone(), seed);
    send(app, EngineMsg::Blind(Some(names)));
}

fn press(app: &mut App, code: KeyCode, mods: KeyModifiers) -> Vec<Effect> {
    update(app, Msg::Key(KeyEvent::new(code, mods)))
}

pub(crate) fn key(app: &mut App, code: KeyCode) -> Vec<Effect> {
    press(app, code, KeyModifiers::NONE)
}

pub(crate) fn ch(app: &mut App, c: char) -> Vec<Effect> {
    key(app, KeyCode::Char(c))
}

pub(crate) fn typed(app: &mut App, s: &str) {
    for c in s.chars() {
        ch(app, c);
    }
}

fn command(app: &mut App, line: &str) -> Vec<Effect> {
    typed(app, line);
    key(app, KeyCode::Enter)
}

pub(crate) fn finish(app: &mut App, panel: usize, files: &[&str]) {
    send(
        app,
        EngineMsg::Finished {
            panel,
            summary: RunSummary {
                stop: RunStop::Completed,
                elapsed_ms: 7_000,
                writes: files.len(),
                files: files.iter().map(|f| f.to_string()).collect(),
                deleted: Vec::new(),
                error: None,
            },
        },
    );
}

/// A turn of both models, finished, with their change sets in: the review opens by itself.
pub(crate) fn reviewed(base: &Base, blind: bool) -> App {
    let mut a = app(&[GOOD, SLOPPY]);
    if blind {
        hide(&mut a, 7);
    }
    typed(&mut a, "The discount test fails. Fix it.");
    key(&mut a, KeyCode::Enter);
    send(&mut a, EngineMsg::TurnStarted { turn: 1 });
    for panel in 0..2 {
        send(
            &mut a,
            EngineMsg::Agent {
                panel,
                event: AgentEvent::StepStarted { step: 1 },
            },
        );
        send(
            &mut a,
            EngineMsg::Agent {
                panel,
                event: AgentEvent::Usage {
                    step: Usage::default(),
                    total: Usage {
                        input: 1200 + panel as u64 * 300,
                        output: 340,
                        ..Usage::default()
                    },
                    cost: Some(0.0123 + panel as f64 * 0.01),
                },
            },
        );
    }
    let (good, sloppy) = sets(base);
    finish(&mut a, 0, &["README.md", "src/pricing.rs"]);
    send(
        &mut a,
        EngineMsg::ChangeSet {
            turn: 1,
            label: GOOD.into(),
            set: Ok(good),
        },
    );
    finish(&mut a, 1, &["src/pricing.rs", "tests/discount.rs"]);
    send(
        &mut a,
        EngineMsg::ChangeSet {
            turn: 1,
            label: SLOPPY.into(),
            set: Ok(sloppy),
        },
    );
    send(&mut a, EngineMsg::TurnEnded { turn: 1 });
    a.status = None;
    a
}

pub(crate) fn render(app: &mut App, width: u16, height: u16) -> Terminal<TestBackend> {
    app.size = (width, height);
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|f| draw(f, app)).unwrap();
    terminal
}

pub(crate) fn status(app: &App) -> (String, bool) {
    let s = app.status.clone().expect("a status message");
    (s.text, s.error)
}

fn plan_of(effects: &[Effect]) -> versus::apply::ApplyPlan {
    match effects {
        [Effect::PreviewApply { plan, .. }] => plan.clone(),
        other => panic!("expected a preview, got {other:?}"),
    }
}

/// Moves the review's selection to `label`.
pub(crate) fn select(app: &mut App, label: &str) {
    for _ in 0..4 {
        let review = app.review.as_ref().unwrap();
        if review.model().unwrap().label == label {
            return;
        }
        key(app, KeyCode::Tab);
    }
    panic!("{label} is not in the review");
}

// ---------------------------------------------------------------------------------------------
// Pure updates

#[test]
fn the_review_opens_when_the_first_change_set_arrives_and_esc_returns_to_the_prompt() {
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    let a = reviewed(&base, false);
    assert_eq!(a.screen, Screen::Review);
    let review = a.review.as_ref().unwrap();
    assert_eq!(
        review.model().unwrap().label,
        GOOD,
        "the first to finish is shown"
    );
    assert_eq!(review.current_file().unwrap().path, "README.md");
    let mut a = a;
    key(&mut a, KeyCode::Esc);
    assert_eq!(a.screen, Screen::Panels);
    press(&mut a, KeyCode::Char('o'), KeyModifiers::CONTROL);
    assert_eq!(a.screen, Screen::Review);
    // Typing in review mode never reaches the prompt.
    ch(&mut a, 'z');
    assert!(a.prompt.is_empty());
}

#[test]
fn ctrl_c_and_ctrl_d_ask_before_quitting_while_the_turn_waits_for_its_choice() {
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    for (key_char, name) in [('c', "Ctrl+C"), ('d', "Ctrl+D")] {
        let mut a = reviewed(&base, false);
        key(&mut a, KeyCode::Esc);
        assert!(press(&mut a, KeyCode::Char(key_char), KeyModifiers::CONTROL).is_empty());
        assert!(!a.quit);
        assert_eq!(
            status(&a).0,
            format!(
                "press {name} again to quit: turn 1 is not chosen yet (versus --continue brings it back)"
            )
        );
        // Another key withdraws the question.
        key(&mut a, KeyCode::Tab);
        assert!(press(&mut a, KeyCode::Char(key_char), KeyModifiers::CONTROL).is_empty());
        assert_eq!(
            press(&mut a, KeyCode::Char(key_char), KeyModifiers::CONTROL),
            [Effect::Quit]
        );
        assert!(a.quit);
    }
    // Once the choice is made, Ctrl+C quits at once.
    let mut a = reviewed(&base, false);
    ch(&mut a, 'x');
    send(
        &mut a,
        EngineMsg::Chosen(ChoiceDone {
            turn: 1,
            chosen: Vec::new(),
            apply_id: None,
            files: Vec::new(),
        }),
    );
    key(&mut a, KeyCode::Esc);
    assert_eq!(
        press(&mut a, KeyCode::Char('c'), KeyModifiers::CONTROL),
        [Effect::Quit]
    );
}

#[test]
fn the_first_changes_while_others_run_notify_a_user_who_is_away() {
    use versus::tui::notify::Notifier;
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    let mut a = app(&[GOOD, SLOPPY]);
    a.notifier = Some(Notifier::Bell);
    update(&mut a, Msg::Focus(false));
    typed(&mut a, "fix it");
    key(&mut a, KeyCode::Enter);
    send(&mut a, EngineMsg::TurnStarted { turn: 1 });
    let (good, sloppy) = sets(&base);
    finish(&mut a, 0, &["README.md", "src/pricing.rs"]);
    let effects = send(
        &mut a,
        EngineMsg::ChangeSet {
            turn: 1,
            label: GOOD.into(),
            set: Ok(good),
        },
    );
    assert_eq!(
        effects,
        [Effect::Notify {
            notifier: Notifier::Bell,
            text: "versus: turn 1 has changes to review".into()
        }]
    );
    // The second model's changes are no news; the turn's end is.
    finish(&mut a, 1, &["src/pricing.rs", "tests/discount.rs"]);
    let effects = send(
        &mut a,
        EngineMsg::ChangeSet {
            turn: 1,
            label: SLOPPY.into(),
            set: Ok(sloppy),
        },
    );
    assert!(effects.is_empty(), "{effects:?}");
    assert_eq!(
        send(&mut a, EngineMsg::TurnEnded { turn: 1 }),
        [Effect::Notify {
            notifier: Notifier::Bell,
            text: "versus: turn 1 finished".into()
        }]
    );
}

#[test]
fn a_user_typing_a_prompt_is_not_interrupted_by_the_review() {
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    let mut a = app(&[GOOD]);
    typed(&mut a, "first");
    key(&mut a, KeyCode::Enter);
    send(&mut a, EngineMsg::TurnStarted { turn: 1 });
    typed(&mut a, "next idea");
    finish(&mut a, 0, &["README.md"]);
    let (good, _) = sets(&base);
    send(
        &mut a,
        EngineMsg::ChangeSet {
            turn: 1,
            label: GOOD.into(),
            set: Ok(good),
        },
    );
    assert_eq!(a.screen, Screen::Panels);
    assert!(status(&a).0.contains("Ctrl+O opens the review"));
    assert_eq!(a.prompt.raw(), "next idea");
}

#[test]
fn picking_a_hunk_from_one_model_and_a_file_from_another_composes_one_plan() {
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    let mut a = reviewed(&base, false);
    // demo/good: next file is src/pricing.rs; its second hunk is the tax line.
    key(&mut a, KeyCode::Right);
    assert_eq!(
        a.review.as_ref().unwrap().current_file().unwrap().path,
        "src/pricing.rs"
    );
    ch(&mut a, 'n');
    assert_eq!(a.review.as_ref().unwrap().current_hunk().unwrap().number, 2);
    ch(&mut a, ' ');
    let (text, error) = status(&a);
    assert!(!error, "{text}");
    assert!(text.contains("picked hunk 2/2 of src/pricing.rs"), "{text}");
    // demo/sloppy: its test file, whole.
    select(&mut a, SLOPPY);
    key(&mut a, KeyCode::Right);
    assert_eq!(
        a.review.as_ref().unwrap().current_file().unwrap().path,
        "tests/discount.rs"
    );
    ch(&mut a, 'f');
    assert!(
        status(&a).0.contains("2 files from 2 models"),
        "{:?}",
        a.status
    );
    let plan = plan_of(&ch(&mut a, 'a'));
    assert_eq!(plan.models, [GOOD, SLOPPY]);
    let paths: Vec<&str> = plan.writes.iter().map(|w| w.path.as_str()).collect();
    assert_eq!(paths, ["src/pricing.rs", "tests/discount.rs"]);
    let text = String::from_utf8(plan.writes[0].proposed.clone().unwrap()).unwrap();
    assert!(text.contains("cents * 20 / 100"), "the picked hunk is in");
    assert!(text.contains("if count > BULK"), "the other hunk is not");
    assert!(a.review.as_ref().unwrap().busy);
    // While the preview is under way, picks are refused.
    ch(&mut a, 'f');
    assert!(status(&a).0.contains("working"));
}

#[test]
fn overlapping_hunks_of_two_models_conflict_and_apply_is_refused() {
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    let mut a = reviewed(&base, false);
    key(&mut a, KeyCode::Right);
    ch(&mut a, ' '); // good: hunk 1 (line 5)
    select(&mut a, SLOPPY);
    ch(&mut a, ' '); // sloppy: its pricing.rs hunk, line 5 too
    let (text, error) = status(&a);
    assert!(error && text.contains("1 conflict(s)"), "{text}");
    assert!(
        ch(&mut a, 'a').is_empty(),
        "nothing is sent while conflicts remain"
    );
    let (text, error) = status(&a);
    assert!(error, "{text}");
    assert!(
        text.contains("cannot apply: 1 conflict(s)")
            && text.contains("demo/good hunk 1 (line 5)")
            && text.contains("demo/sloppy hunk 1 (line 5)"),
        "{text}"
    );
    // Dropping one side makes it applicable again.
    ch(&mut a, ' ');
    plan_of(&ch(&mut a, 'a'));
}

/// Line picks in the review: J/K move the line cursor over the changed lines of the hunk on
/// screen, L picks the line under it (marked in the diff), a hunk picked whole is not split, and
/// a line that another model's hunk also changes conflicts like a hunk.
#[test]
fn the_line_cursor_picks_single_lines_that_conflict_like_hunks() {
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    let mut a = reviewed(&base, false);
    key(&mut a, KeyCode::Right); // good's pricing.rs, hunk 1: line 5 replaced
    ch(&mut a, 'L');
    assert!(
        status(&a).0.contains("no line under the cursor"),
        "{:?}",
        a.status
    );
    ch(&mut a, 'J');
    assert!(
        status(&a).0.contains("line -5 if count > BULK"),
        "{:?}",
        a.status
    );
    ch(&mut a, 'J');
    assert!(
        status(&a).0.contains("line +5 if count >= BULK"),
        "{:?}",
        a.status
    );
    ch(&mut a, 'J');
    assert!(
        status(&a).0.contains("last changed line of this hunk"),
        "{:?}",
        a.status
    );
    // The whole hunk picked: its lines are not split.
    ch(&mut a, ' ');
    ch(&mut a, 'L');
    let (text, error) = status(&a);
    assert!(error && text.contains("is picked whole"), "{text}");
    ch(&mut a, ' ');
    ch(&mut a, 'L');
    let (text, error) = status(&a);
    assert!(!error && text.contains("picked line +5"), "{text}");
    let t = render(&mut a, 120, 36);
    let screen: String = format!("{}", t.backend());
    assert!(screen.contains("+✓    if count >= BULK"), "{screen}");
    assert!(screen.contains("✓ 1 line picked"), "{screen}");
    // Sloppy's hunk changes line 5 too: the added line touches it, so they conflict.
    select(&mut a, SLOPPY);
    ch(&mut a, ' ');
    let (text, error) = status(&a);
    assert!(error && text.contains("1 conflict(s)"), "{text}");
    assert!(
        ch(&mut a, 'a').is_empty(),
        "refused while the conflict stays"
    );
    ch(&mut a, ' ');
    // Alone, the added line is inserted below the line it replaces.
    let plan = plan_of(&ch(&mut a, 'a'));
    let written = String::from_utf8(plan.writes[0].proposed.clone().unwrap()).unwrap();
    let mut want: Vec<&str> = Vec::new();
    let old = pricing(&[]);
    for (i, line) in old.lines().enumerate() {
        want.push(line);
        if i == 4 {
            want.push("    if count >= BULK_MIN_ITEMS {");
        }
    }
    assert_eq!(written, want.join("\n") + "\n");
}

#[test]
fn a_whole_model_and_the_rules_for_what_can_be_picked() {
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    let mut a = reviewed(&base, false);
    // Nothing picked: apply explains what to do.
    assert!(ch(&mut a, 'a').is_empty());
    assert!(status(&a).0.contains("nothing picked"));
    // A created file cannot be picked by hunk.
    select(&mut a, SLOPPY);
    key(&mut a, KeyCode::Right);
    ch(&mut a, ' ');
    assert!(
        status(&a).0.contains("can only be taken whole"),
        "{:?}",
        a.status
    );
    select(&mut a, GOOD);
    ch(&mut a, 'c');
    let plan = plan_of(&ch(&mut a, 'a'));
    assert_eq!(plan.models, [GOOD]);
    assert_eq!(plan.writes.len(), 2);
}

#[test]
fn choosing_is_refused_while_models_run() {
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    let mut a = app(&[GOOD, SLOPPY]);
    typed(&mut a, "go");
    key(&mut a, KeyCode::Enter);
    send(&mut a, EngineMsg::TurnStarted { turn: 1 });
    send(
        &mut a,
        EngineMsg::Agent {
            panel: 1,
            event: AgentEvent::StepStarted { step: 1 },
        },
    );
    finish(&mut a, 0, &["README.md"]);
    let (good, _) = sets(&base);
    send(
        &mut a,
        EngineMsg::ChangeSet {
            turn: 1,
            label: GOOD.into(),
            set: Ok(good),
        },
    );
    assert_eq!(
        a.screen,
        Screen::Review,
        "the first finished model is reviewable"
    );
    ch(&mut a, 'c');
    assert!(ch(&mut a, 'a').is_empty());
    assert!(status(&a).0.contains("still running"));
    assert!(ch(&mut a, 'x').is_empty());
}

/// Rating says what the rating means for the statistics: `=` ties with the kept model and
/// beats the others (nothing with x), `+` / `-` are marks, not games.
#[test]
fn rating_says_what_it_means_for_the_stats() {
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    let mut a = reviewed(&base, false);
    select(&mut a, SLOPPY);
    ch(&mut a, '=');
    let (text, error) = status(&a);
    assert!(!error);
    assert!(
        text.contains("rated tie")
            && text.contains("as good as the model you keep")
            && text.contains("ties with it and beats the others")
            && text.contains("none of them) it has no effect"),
        "{text}"
    );
    ch(&mut a, '+');
    let (text, _) = status(&a);
    assert!(
        text.contains("rated good") && text.contains("not a game"),
        "{text}"
    );
    ch(&mut a, '-');
    assert!(
        status(&a).0.contains("rated bad: a mark"),
        "{}",
        status(&a).0
    );
    ch(&mut a, '-');
    assert!(status(&a).0.contains("rating removed"));
}

#[test]
fn none_of_them_is_a_choice_with_ratings_and_blind_names_stay_hidden_until_asked() {
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    let mut a = reviewed(&base, true);
    assert!(a.hiding());
    let shown = a.shown(0);
    assert!(shown.starts_with("Model "), "{shown}");
    select(&mut a, SLOPPY);
    ch(&mut a, '-');
    select(&mut a, GOOD);
    ch(&mut a, '=');
    ch(&mut a, '=');
    ch(&mut a, '+');
    let effects = ch(&mut a, 'x');
    let [Effect::Choose(request)] = effects.as_slice() else {
        panic!("{effects:?}");
    };
    assert_eq!(request.plan, None);
    assert_eq!(
        request.ratings,
        BTreeMap::from([
            (GOOD.to_string(), Rating::Good),
            (SLOPPY.to_string(), Rating::Bad)
        ])
    );
    send(
        &mut a,
        EngineMsg::Chosen(ChoiceDone {
            turn: 1,
            chosen: Vec::new(),
            apply_id: None,
            files: Vec::new(),
        }),
    );
    // Issue 22 item 2: the names are the session's; a choice does not reveal them.
    assert!(a.hiding(), "the choice keeps the names hidden");
    assert!(a.shown(0).starts_with("Model "));
    let said = status(&a).0;
    assert!(
        said.contains("none of them") && said.contains("/blind reveals them"),
        "{said}"
    );
    assert!(!said.contains("demo/"), "{said}");
    // Decided: a second choice is refused.
    assert!(ch(&mut a, 'x').is_empty());
    assert!(status(&a).0.contains("already made"));
    ch(&mut a, ' ');
    assert!(status(&a).0.contains("/rewind undoes it"));
    // Asked: `/blind` says who was who, and the engine is told.
    key(&mut a, KeyCode::Esc);
    assert_eq!(command(&mut a, "/blind"), [Effect::Blind(false)]);
    assert!(!a.hiding());
    assert!(a.shown(0).starts_with("demo/good (Model "));
    let said = status(&a).0;
    assert!(
        said.contains("blind off: Model ") && said.contains(" is demo/good"),
        "{said}"
    );
}

/// Issue 22 item 2: while blind mode hides the names, `/export` writes the transcripts under
/// the aliases (in their order), `/models` and `/config` list aliases, `@` offers no model
/// name, and `/stats` (which names every model) waits for the reveal.
#[test]
fn export_models_config_completion_and_stats_name_no_model_while_blind() {
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    let mut a = reviewed(&base, true);
    key(&mut a, KeyCode::Esc);
    let effects = command(&mut a, "/export");
    let [Effect::Export { markdown, .. }] = effects.as_slice() else {
        panic!("{effects:?}");
    };
    assert!(!markdown.contains("demo/"), "{markdown}");
    let a_at = markdown.find("\n## Model A\n").expect("Model A's section");
    let b_at = markdown.find("\n## Model B\n").expect("Model B's section");
    assert!(a_at < b_at, "{markdown}");
    for line in ["/models", "/config"] {
        command(&mut a, line);
        // (`/models` gives `demo/good` as an example of a spec to add: not a model listed.)
        let shown = format!("{:?} {:?}", a.overlay, a.status).replace("e.g. demo/good", "");
        assert!(!shown.contains("demo/"), "{line}: {shown}");
        assert!(shown.contains("Model A"), "{line}: {shown}");
        a.overlay = None;
    }
    typed(&mut a, "@");
    let offered = format!("{:?}", a.completion);
    assert!(!offered.contains("demo/"), "{offered}");
    a.prompt.clear();
    a.completion = None;
    assert!(command(&mut a, "/stats").is_empty());
    assert!(status(&a).0.contains("/stats names the models"));
    // Revealed: the statistics can show.
    command(&mut a, "/blind");
    assert_eq!(command(&mut a, "/stats"), [Effect::Stats]);
}

#[test]
fn rewind_scopes_ask_first_then_put_the_prompt_back() {
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    let mut a = reviewed(&base, false);
    key(&mut a, KeyCode::Esc);
    for (line, scope) in [
        ("/rewind", RewindScope::Both),
        ("/rewind files", RewindScope::Files),
        ("/rewind conversation", RewindScope::Conversation),
    ] {
        assert_eq!(
            command(&mut a, line),
            [Effect::PlanRewind { scope }],
            "{line}"
        );
    }
    let preview = RewindPreview {
        apply_id: "a1".into(),
        label: "The discount test fails. Fix it.".into(),
        models: vec![GOOD.into()],
        files: vec![RewindFile {
            path: "src/pricing.rs".into(),
            action: RewindAction::Restore,
            added: 1,
            removed: 1,
            edited_after_apply: true,
        }],
    };
    let plan = RewindPlan {
        scope: RewindScope::Both,
        turn: Some(1),
        prompt: Some("The discount test fails. Fix it.".into()),
        files: Some(preview),
        files_note: None,
    };
    send(&mut a, EngineMsg::RewindPlanned(plan.clone()));
    assert!(matches!(a.dialog, Some(Dialog::Rewind(_))));
    // Keys other than the answers do nothing; n cancels.
    ch(&mut a, 'z');
    assert!(a.dialog.is_some());
    ch(&mut a, 'n');
    assert!(a.dialog.is_none());
    send(&mut a, EngineMsg::RewindPlanned(plan.clone()));
    assert_eq!(
        ch(&mut a, 'f'),
        [Effect::Rewind {
            plan: plan.clone(),
            force: true
        }],
        "f also restores the file edited after the apply"
    );
    send(&mut a, EngineMsg::RewindPlanned(plan.clone()));
    assert_eq!(ch(&mut a, 'y'), [Effect::Rewind { plan, force: false }]);
    send(
        &mut a,
        EngineMsg::Rewound(RewindDone {
            apply_id: None,
            scope: RewindScope::Both,
            turn: Some(1),
            prompt: Some("The discount test fails. Fix it.".into()),
            restored: vec![],
            kept: vec!["src/pricing.rs".into()],
        }),
    );
    assert_eq!(a.prompt.raw(), "The discount test fails. Fix it.");
    assert!(
        a.review.is_none(),
        "its conversation is gone: so is its review"
    );
    let (text, _) = status(&a);
    assert!(
        text.contains("rewound turn 1") && text.contains("kept src/pricing.rs"),
        "{text}"
    );
    // Rewinding while models run is refused.
    a.prompt.clear();
    typed(&mut a, "again");
    key(&mut a, KeyCode::Enter);
    send(&mut a, EngineMsg::TurnStarted { turn: 2 });
    assert!(command(&mut a, "/rewind").is_empty());
}

/// Bug (issue 14, 2): the prompt a rewind put back had lost its `@model` target, so Enter sent
/// it to every model; the history kept it without the `@` too.
#[test]
fn a_rewound_prompt_comes_back_with_its_model_targets() {
    let mut a = app(&[GOOD, SLOPPY]);
    typed(&mut a, "@sloppy explain the discount");
    let effects = key(&mut a, KeyCode::Enter);
    let [Effect::Submit(request)] = effects.as_slice() else {
        panic!("{effects:?}");
    };
    assert_eq!(request.prompt, "explain the discount");
    assert_eq!(request.line, "@sloppy explain the discount");
    send(&mut a, EngineMsg::TurnStarted { turn: 1 });
    assert_eq!(
        a.history.last().map(String::as_str),
        Some("@sloppy explain the discount")
    );
    finish(&mut a, 1, &[]);
    send(&mut a, EngineMsg::TurnEnded { turn: 1 });
    send(
        &mut a,
        EngineMsg::Rewound(RewindDone {
            apply_id: None,
            scope: RewindScope::Conversation,
            turn: Some(1),
            prompt: Some("explain the discount".into()),
            restored: vec![],
            kept: vec![],
        }),
    );
    assert_eq!(a.prompt.raw(), "@sloppy explain the discount");
    let effects = key(&mut a, KeyCode::Enter);
    let [Effect::Submit(again)] = effects.as_slice() else {
        panic!("{effects:?}");
    };
    assert_eq!(
        again
            .targets
            .iter()
            .map(|t| t.label.as_str())
            .collect::<Vec<_>>(),
        [SLOPPY],
        "Enter sends it to the same model again"
    );
}

#[test]
fn a_files_only_rewind_keeps_the_review_open_for_a_new_choice() {
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    let mut a = reviewed(&base, false);
    ch(&mut a, 'c');
    plan_of(&ch(&mut a, 'a'));
    send(
        &mut a,
        EngineMsg::Chosen(ChoiceDone {
            turn: 1,
            chosen: vec![GOOD.into()],
            apply_id: Some("a1".into()),
            files: vec![("README.md".into(), AppliedAs::Written)],
        }),
    );
    assert!(status(&a).0.contains("applied demo/good: wrote README.md"));
    send(
        &mut a,
        EngineMsg::Rewound(RewindDone {
            apply_id: None,
            scope: RewindScope::Files,
            turn: Some(1),
            prompt: None,
            restored: vec!["README.md".into()],
            kept: vec![],
        }),
    );
    let review = a.review.as_ref().unwrap();
    assert!(review.decided.is_none());
    assert!(
        a.prompt.is_empty(),
        "the conversation stays: no prompt comes back"
    );
    ch(&mut a, 'c');
    plan_of(&ch(&mut a, 'a'));
}

#[test]
fn a_user_edit_overlapping_the_chosen_hunk_conflicts_and_is_written_only_as_chosen() {
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    let session = tempfile::tempdir().unwrap();
    let mut a = reviewed(&base, false);
    let mut b = reviewed(&base, false);
    key(&mut a, KeyCode::Right);
    ch(&mut a, ' '); // demo/good hunk 1: line 5
    // Meanwhile the user changed line 5 too.
    let user = pricing(&[(4, "    if count >= BULK_MIN_ITEMS + 0 {")]);
    let file = dir.path().join("src/pricing.rs");
    std::fs::write(&file, &user).unwrap();

    let preview_of = |plan: &versus::apply::ApplyPlan| {
        ApplyEngine::new(dir.path(), session.path())
            .unwrap()
            .preview(plan)
            .unwrap()
    };
    let plan = plan_of(&ch(&mut a, 'a'));
    let preview = preview_of(&plan);
    assert!(matches!(
        preview.files[0].status,
        FileStatus::Conflict { .. }
    ));
    assert!(
        send(
            &mut a,
            EngineMsg::ApplyPreview {
                turn: 1,
                preview: preview.clone()
            }
        )
        .is_empty(),
        "a conflict is asked about, not applied"
    );
    assert!(matches!(a.dialog, Some(Dialog::Apply(_))));
    // Esc: nothing is applied and nothing recorded.
    assert!(key(&mut a, KeyCode::Esc).is_empty());
    assert!(a.dialog.is_none());
    assert_eq!(std::fs::read_to_string(&file).unwrap(), user);

    // Again, and Enter without an answer: the file is not written.
    let plan = plan_of(&ch(&mut a, 'a'));
    send(
        &mut a,
        EngineMsg::ApplyPreview {
            turn: 1,
            preview: preview_of(&plan),
        },
    );
    let effects = key(&mut a, KeyCode::Enter);
    let [Effect::Choose(request)] = effects.as_slice() else {
        panic!("{effects:?}");
    };
    assert!(request.resolutions.is_empty());
    let outcome = ApplyEngine::new(dir.path(), session.path())
        .unwrap()
        .apply(request.plan.as_ref().unwrap(), &request.resolutions)
        .unwrap();
    let files: Vec<(String, AppliedAs)> = outcome
        .files
        .iter()
        .map(|f| (f.path.clone(), f.applied_as))
        .collect();
    assert_eq!(
        files,
        [("src/pricing.rs".to_string(), AppliedAs::Unresolved)]
    );
    assert_eq!(outcome.apply_id, None);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), user, "untouched");

    // The user chooses overwrite: now it is written.
    key(&mut b, KeyCode::Right);
    ch(&mut b, ' ');
    let plan = plan_of(&ch(&mut b, 'a'));
    send(
        &mut b,
        EngineMsg::ApplyPreview {
            turn: 1,
            preview: preview_of(&plan),
        },
    );
    ch(&mut b, 'o');
    let effects = key(&mut b, KeyCode::Enter);
    let [Effect::Choose(request)] = effects.as_slice() else {
        panic!("{effects:?}");
    };
    assert_eq!(
        request.resolutions,
        BTreeMap::from([("src/pricing.rs".to_string(), Resolution::Overwrite)])
    );
    let outcome = ApplyEngine::new(dir.path(), session.path())
        .unwrap()
        .apply(request.plan.as_ref().unwrap(), &request.resolutions)
        .unwrap();
    assert_eq!(outcome.written(), ["src/pricing.rs"]);
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        pricing(&[(4, "    if count >= BULK_MIN_ITEMS {")])
    );
}

#[test]
fn search_and_layout_keep_the_place() {
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    let mut a = reviewed(&base, false);
    key(&mut a, KeyCode::Right);
    ch(&mut a, '/');
    typed(&mut a, "tax");
    key(&mut a, KeyCode::Enter);
    let review = a.review.as_ref().unwrap();
    assert_eq!(
        review.current_hunk().unwrap().number,
        2,
        "the match is in hunk 2"
    );
    ch(&mut a, 's');
    let review = a.review.as_ref().unwrap();
    assert_eq!(
        review.current_hunk().unwrap().number,
        2,
        "same hunk side by side"
    );
    ch(&mut a, '/');
    typed(&mut a, "no such text");
    key(&mut a, KeyCode::Enter);
    assert!(status(&a).1);
    assert!(a.review.as_ref().unwrap().search.is_none());
}

/// A search match lands under its hunk header (not as the top row), and every occurrence on
/// screen is highlighted, the current match's row more strongly.
#[test]
fn a_search_match_shows_under_its_header_and_is_highlighted() {
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    let mut a = reviewed(&base, false);
    key(&mut a, KeyCode::Right); // src/pricing.rs
    a.size = (120, 36);
    ch(&mut a, '/');
    typed(&mut a, "TAX");
    key(&mut a, KeyCode::Enter);
    let review = a.review.as_ref().unwrap();
    let doc = review.doc.as_ref().unwrap();
    let search = review.search.as_ref().unwrap();
    let row = search.matches[search.current];
    assert_eq!(review.scroll, doc.hunk_rows[1], "hunk 2's header on top");
    assert!(row > review.scroll, "the match below it");
    a.status = None;
    let t = render(&mut a, 120, 36);
    insta::assert_snapshot!(t.backend());
    // The matched text's cells carry the search styles: the current match's row strong, the
    // other occurrence on screen (the added line) plain.
    let theme = a.theme;
    let buf = t.backend().buffer();
    let mut styles = Vec::new();
    for (y, line) in crate::util::screen_rows(buf).iter().enumerate() {
        let y = u16::try_from(y).unwrap();
        for (at, _) in line.match_indices("tax(") {
            let x = u16::try_from(line[..at].chars().count()).unwrap();
            let cell = &buf[(x, y)];
            styles.push((cell.bg, cell.modifier));
        }
    }
    let current = theme.search_current();
    let other = theme.search_match();
    assert!(
        styles.contains(&(current.bg.unwrap(), current.add_modifier)),
        "{styles:?}"
    );
    assert!(
        styles.contains(&(other.bg.unwrap(), other.add_modifier)),
        "{styles:?}"
    );
}

#[test]
fn blind_mode_shuffles_and_hides_until_the_choice() {
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    // The engine gives the aliases: `/blind` asks it.
    assert_eq!(command(&mut app(&[GOOD]), "/blind"), [Effect::Blind(true)]);
    let a = reviewed(&base, true);
    let names: Vec<String> = (0..2).map(|i| a.shown(i)).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(sorted, ["Model A", "Model B"]);
    assert!(!status_or_empty(&a).contains("demo/"));
    // The header says so; the table never shows a real name.
    let mut a = a;
    let t = render(&mut a, 120, 30);
    let screen = format!("{:?}", t.backend());
    assert!(!screen.contains("demo/good") && !screen.contains("demo/sloppy"));
    assert!(screen.contains("blind"));
}

fn status_or_empty(app: &App) -> String {
    app.status
        .as_ref()
        .map(|s| s.text.clone())
        .unwrap_or_default()
}

#[test]
fn checks_show_in_the_table_and_the_transcript() {
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    let mut a = reviewed(&base, false);
    send(
        &mut a,
        EngineMsg::Check {
            turn: 1,
            label: GOOD.into(),
            state: CheckState::Done(CheckResult {
                command: "cargo test".into(),
                passed: false,
                ending: "failed (exit 101)".into(),
                elapsed_ms: 3_400,
                tail: vec![
                    "test discount ... FAILED".into(),
                    "test result: FAILED".into(),
                ],
            }),
        },
    );
    let t = render(&mut a, 120, 30);
    let screen = format!("{:?}", t.backend());
    assert!(screen.contains("✗ 3.4 s"), "{screen}");
    assert!(screen.contains("failed (exit 101)") && screen.contains("test result: FAILED"));
    let panel = &a.panels[0];
    let last: Vec<&str> = panel
        .transcript
        .lines()
        .iter()
        .rev()
        .take(3)
        .map(|l| l.text())
        .collect();
    assert!(
        last.iter().any(|l| l.contains("test discount ... FAILED")),
        "{last:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// Snapshots

#[test]
fn review_table_and_unified_diff() {
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    let mut a = reviewed(&base, false);
    key(&mut a, KeyCode::Right);
    let t = render(&mut a, 120, 36);
    insta::assert_snapshot!(t.backend());
    // Colours: removed lines red, added green, the changed word on a coloured background.
    let buf = t.backend().buffer();
    let row = |needle: &str| {
        (0..buf.area.height)
            .find(|&y| {
                (0..buf.area.width)
                    .map(|x| buf[(x, y)].symbol())
                    .collect::<String>()
                    .contains(needle)
            })
            .unwrap()
    };
    let removed = row("-     if count > BULK");
    let added = row("+     if count >= BULK");
    let fg_at = |y: u16, text: &str| {
        let line: String = (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect();
        let col = line.find(text).unwrap();
        let x = line[..col].chars().count() as u16;
        (buf[(x, y)].fg, buf[(x, y)].bg)
    };
    assert_eq!(fg_at(removed, "count").0, Color::Red);
    assert_eq!(fg_at(added, "count").0, Color::Green);
    assert_eq!(
        fg_at(added, ">=").1,
        Color::Green,
        "the changed word is highlighted"
    );
    // Syntax-aware colours: the keyword `if` is coloured as a keyword on both lines, over the
    // line's added/removed background.
    assert_eq!(fg_at(added, "if").0, Color::LightBlue);
    assert_eq!(fg_at(added, "if").1, Color::Indexed(22));
    assert_eq!(fg_at(removed, "if").0, Color::LightBlue);
    assert_eq!(fg_at(removed, "if").1, Color::Indexed(52));
}

#[test]
fn side_by_side_diff() {
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    let mut a = reviewed(&base, false);
    key(&mut a, KeyCode::Right);
    ch(&mut a, 's');
    let t = render(&mut a, 120, 36);
    insta::assert_snapshot!(t.backend());
}

#[test]
fn a_basket_with_a_conflict() {
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    let mut a = reviewed(&base, false);
    key(&mut a, KeyCode::Right);
    ch(&mut a, ' ');
    select(&mut a, SLOPPY);
    ch(&mut a, ' ');
    key(&mut a, KeyCode::Right);
    ch(&mut a, 'f');
    a.status = None;
    let t = render(&mut a, 120, 36);
    insta::assert_snapshot!(t.backend());
}

#[test]
fn a_basket_ready_to_apply() {
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    let mut a = reviewed(&base, false);
    key(&mut a, KeyCode::Right);
    ch(&mut a, 'n');
    ch(&mut a, ' ');
    select(&mut a, SLOPPY);
    key(&mut a, KeyCode::Right);
    ch(&mut a, 'f');
    a.status = None;
    let t = render(&mut a, 120, 36);
    insta::assert_snapshot!(t.backend());
}

/// The review with "choose demo/good" applied over two user edits that conflict with it
/// (README.md and src/pricing.rs): the apply question is open, README.md selected.
pub(crate) fn conflict_dialog() -> App {
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    let session = tempfile::tempdir().unwrap();
    let mut a = reviewed(&base, false);
    ch(&mut a, 'c');
    std::fs::write(
        dir.path().join("src/pricing.rs"),
        pricing(&[(4, "    if count > BULK_MIN_ITEMS - 1 {")]),
    )
    .unwrap();
    std::fs::write(dir.path().join("README.md"), "# Shop\n\nPrices here.\n").unwrap();
    let plan = plan_of(&ch(&mut a, 'a'));
    let preview = ApplyEngine::new(dir.path(), session.path())
        .unwrap()
        .preview(&plan)
        .unwrap();
    send(&mut a, EngineMsg::ApplyPreview { turn: 1, preview });
    a
}

#[test]
fn an_apply_conflict_with_your_edits() {
    let mut a = conflict_dialog();
    ch(&mut a, 's');
    let t = render(&mut a, 120, 30);
    insta::assert_snapshot!(t.backend());
}

/// The question shows what each side wrote in the conflicting lines and what each answer
/// would write there, at the three sizes (side by side when wide, stacked when narrow).
#[test]
fn the_conflict_dialog_shows_both_texts_and_each_answer() {
    for (w, h) in [(200, 50), (80, 24), (60, 15)] {
        let mut a = conflict_dialog();
        ch(&mut a, 's'); // README.md skipped; src/pricing.rs selected
        a.status = None;
        let t = render(&mut a, w, h);
        insta::assert_snapshot!(format!("conflict_texts_{w}x{h}"), t.backend());
    }
}

/// PgDn scrolls the conflict detail, PgUp and Home bring it back, another file resets it.
#[test]
fn the_conflict_detail_scrolls_and_resets_on_another_file() {
    let mut a = conflict_dialog();
    a.size = (60, 15);
    let scroll = |a: &App| match &a.dialog {
        Some(Dialog::Apply(d)) => d.scroll,
        other => panic!("{other:?}"),
    };
    assert_eq!(scroll(&a), 0);
    key(&mut a, KeyCode::PageDown);
    let down = scroll(&a);
    assert!(down > 0, "PgDn scrolls");
    key(&mut a, KeyCode::PageDown);
    key(&mut a, KeyCode::PageDown);
    key(&mut a, KeyCode::PageDown);
    assert!(scroll(&a) < 40, "bounded by the detail: {}", scroll(&a));
    key(&mut a, KeyCode::PageUp);
    assert!(scroll(&a) < 40);
    key(&mut a, KeyCode::Home);
    assert_eq!(scroll(&a), 0);
    key(&mut a, KeyCode::PageDown);
    key(&mut a, KeyCode::Down);
    assert_eq!(scroll(&a), 0, "another file starts at its top");
    let before = render(&mut a, 60, 15);
    key(&mut a, KeyCode::PageDown);
    let after = render(&mut a, 60, 15);
    assert_ne!(
        format!("{:?}", before.backend()),
        format!("{:?}", after.backend()),
        "the screen scrolls"
    );
}

#[test]
fn blind_review_before_and_after_the_choice() {
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    let mut a = reviewed(&base, true);
    let before = render(&mut a, 120, 30);
    insta::assert_snapshot!("blind_before", before.backend());
    ch(&mut a, 'c');
    plan_of(&ch(&mut a, 'a'));
    let chosen = a.review.as_ref().unwrap().model().unwrap().label.clone();
    send(
        &mut a,
        EngineMsg::Chosen(ChoiceDone {
            turn: 1,
            chosen: vec![chosen.clone()],
            apply_id: Some("a1".into()),
            files: vec![
                ("README.md".into(), AppliedAs::Written),
                ("src/pricing.rs".into(), AppliedAs::Merged),
            ],
        }),
    );
    // Issue 22 item 2: the choice names the alias; the names stay hidden after it.
    let (text, _) = status(&a);
    let alias = a.shown_label(&chosen);
    assert!(alias.starts_with("Model "), "{alias}");
    assert!(
        text.contains(&alias) && !text.contains(&chosen) && text.contains("merged with your edits"),
        "{text}"
    );
    a.status = None;
    let after = render(&mut a, 120, 30);
    assert!(!format!("{:?}", after.backend()).contains("demo/"));
    insta::assert_snapshot!("blind_after", after.backend());
    // Revealed when asked: the names beside the aliases.
    key(&mut a, KeyCode::Esc);
    assert_eq!(command(&mut a, "/blind"), [Effect::Blind(false)]);
    a.status = None;
    let revealed = render(&mut a, 120, 30);
    assert!(format!("{:?}", revealed.backend()).contains(&format!("{chosen} ({alias})")));
    insta::assert_snapshot!("blind_revealed", revealed.backend());
}

#[test]
fn the_rewind_preview() {
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    let mut a = reviewed(&base, false);
    key(&mut a, KeyCode::Esc);
    send(
        &mut a,
        EngineMsg::RewindPlanned(RewindPlan {
            scope: RewindScope::Both,
            turn: Some(1),
            prompt: Some("The discount test fails. Fix it.".into()),
            files: Some(RewindPreview {
                apply_id: "20261121-091002-1f3a".into(),
                label: "The discount test fails. Fix it.".into(),
                models: vec![GOOD.into(), SLOPPY.into()],
                files: vec![
                    RewindFile {
                        path: "src/pricing.rs".into(),
                        action: RewindAction::Restore,
                        added: 40,
                        removed: 16,
                        edited_after_apply: true,
                    },
                    RewindFile {
                        path: "tests/discount.rs".into(),
                        action: RewindAction::Remove,
                        added: 0,
                        removed: 1,
                        edited_after_apply: false,
                    },
                    RewindFile {
                        path: "old.txt".into(),
                        action: RewindAction::Recreate,
                        added: 2,
                        removed: 0,
                        edited_after_apply: false,
                    },
                ],
            }),
            files_note: None,
        }),
    );
    let t = render(&mut a, 110, 24);
    let screen = format!("{:?}", t.backend());
    assert!(screen.contains("3 files, +42 -17"), "{screen}");
    insta::assert_snapshot!(t.backend());
}

#[test]
fn commands_of_the_review_stats_check_blind() {
    let mut a = app(&[GOOD]);
    assert!(command(&mut a, "/review").is_empty());
    assert!(status(&a).0.contains("nothing to review yet"));
    assert_eq!(command(&mut a, "/stats"), [Effect::Stats]);
    send(
        &mut a,
        EngineMsg::Show {
            title: "stats".into(),
            lines: vec!["This session: 0 choice(s)".into()],
        },
    );
    assert!(matches!(
        &a.overlay,
        Some(versus::tui::state::Overlay::Info { title, .. }) if title == "stats"
    ));
    ch(&mut a, 'q');
    command(&mut a, "/config check cargo test -q");
    assert_eq!(a.settings.check.as_deref(), Some("cargo test -q"));
    command(&mut a, "/config check none");
    assert_eq!(a.settings.check, None);
    command(&mut a, "/blind");
    assert!(a.blind);
    command(&mut a, "/blind");
    assert!(!a.blind);
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    let mut b = reviewed(&base, false);
    key(&mut b, KeyCode::Esc);
    assert_eq!(b.screen, Screen::Panels);
    command(&mut b, "/review");
    assert_eq!(b.screen, Screen::Review);
    // t shows the selected model's transcript, zoomed; Ctrl+O comes back.
    ch(&mut b, 't');
    assert_eq!((b.screen, b.zoom, b.focus), (Screen::Panels, true, 0));
    press(&mut b, KeyCode::Char('o'), KeyModifiers::CONTROL);
    assert_eq!(b.screen, Screen::Review);
    assert_eq!(
        ch(&mut b, 'o'),
        [Effect::OpenShell {
            label: GOOD.into(),
            shown: GOOD.into(),
            hidden: false,
        }]
    );
}

#[test]
fn the_review_draws_at_any_size_without_panicking() {
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    let mut a = reviewed(&base, true);
    key(&mut a, KeyCode::Right);
    ch(&mut a, ' ');
    for layout in 0..2 {
        for (w, h) in [
            (1, 1),
            (10, 4),
            (20, 5),
            (40, 10),
            (69, 14),
            (70, 14),
            (200, 60),
        ] {
            render(&mut a, w, h);
        }
        send(
            &mut a,
            EngineMsg::RewindPlanned(RewindPlan {
                scope: RewindScope::Files,
                turn: None,
                prompt: None,
                files: None,
                files_note: Some("note".into()),
            }),
        );
        for (w, h) in [(1, 1), (10, 4), (25, 6), (200, 60)] {
            render(&mut a, w, h);
        }
        key(&mut a, KeyCode::Esc);
        if layout == 0 {
            ch(&mut a, 's');
        }
    }
    // Narrow: the diff alone under the table, still with its title.
    let t = render(&mut a, 60, 20);
    let screen = format!("{:?}", t.backend());
    assert!(screen.contains("src/pricing.rs"), "{screen}");
}

/// Regression: `c` on a model that answered in text only said "has no change to pick", so a
/// turn whose best answer changed no file could not have a winner.
#[test]
fn c_on_a_text_only_model_chooses_its_answer() {
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    let mut a = app(&[GOOD, SLOPPY]);
    typed(&mut a, "Which discount applies to ten items?");
    key(&mut a, KeyCode::Enter);
    send(&mut a, EngineMsg::TurnStarted { turn: 1 });
    let (good, _) = sets(&base);
    finish(&mut a, 0, &["README.md", "src/pricing.rs"]);
    send(
        &mut a,
        EngineMsg::ChangeSet {
            turn: 1,
            label: GOOD.into(),
            set: Ok(good),
        },
    );
    finish(&mut a, 1, &[]);
    send(
        &mut a,
        EngineMsg::ChangeSet {
            turn: 1,
            label: SLOPPY.into(),
            set: Ok(change_set(&base, SLOPPY, &[])),
        },
    );
    send(&mut a, EngineMsg::TurnEnded { turn: 1 });
    assert_eq!(a.screen, Screen::Review, "the review opened by itself");
    // Select the text-only model, rate it, choose it.
    for _ in 0..2 {
        if a.review.as_ref().unwrap().model().unwrap().label != SLOPPY {
            key(&mut a, KeyCode::Tab);
        }
    }
    assert_eq!(a.review.as_ref().unwrap().model().unwrap().label, SLOPPY);
    ch(&mut a, '+');
    let effects = ch(&mut a, 'c');
    let [Effect::Choose(request)] = effects.as_slice() else {
        panic!(
            "c should choose the text-only answer: {effects:?}, {:?}",
            a.status
        );
    };
    assert_eq!(request.chosen, [SLOPPY]);
    assert!(request.plan.is_none());
    assert_eq!(request.ratings.get(SLOPPY).copied(), Some(Rating::Good));
    let (text, error) = status(&a);
    assert!(!error && text.contains("answer chosen"), "{text}");
}

/// Renders `app` at the three sizes the issue names and fails if any frame shows a real model
/// name (or the part of a workspace folder named after it).
pub(crate) fn assert_no_name(app: &mut App, step: &str) {
    for (w, h) in [(200, 50), (80, 24), (60, 15)] {
        let t = render(app, w, h);
        // The help's fixed texts ("@good or @demo/good", "as good as the kept one") name no
        // model of the turn; they happen to match these demo models, so they are left out.
        let screen: String = format!("{:?}", t.backend())
            .lines()
            .filter(|l| {
                !l.contains("send this prompt only to that model") && !l.contains("rate: +/- marks")
            })
            .collect::<Vec<_>>()
            .join("\n");
        for leak in ["demo/", "demo-", "good", "sloppy", "careful"] {
            assert!(
                !screen.contains(leak),
                "{step} at {w}x{h} shows {leak:?}:\n{screen}"
            );
        }
    }
}

/// Bug (issue 14, 1): blind mode leaked the names (the zoomed title's `-m` position, the shell
/// banner with the workspace folder). Every frame of a whole blind turn — panels while models
/// stream, the review and its layouts, search, the transcript zoom, the apply and rewind
/// dialogs, help, ratings, the status line — is scanned at 200x50, 80x24 and 60x15 until the
/// choice; `o` asks for a shell that names only the alias. After the choice the names stay
/// hidden (issue 22 item 2) until `/blind` reveals them.
#[test]
fn a_blind_turn_shows_no_real_name_in_any_frame_until_the_choice() {
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    let session = tempfile::tempdir().unwrap();
    let mut a = app(&[GOOD, SLOPPY]);
    // This seed lays demo/sloppy out first: the `-m` position differs from the one on screen.
    hide(&mut a, 0xdead_beef);
    typed(&mut a, "The discount test fails. Fix it.");
    key(&mut a, KeyCode::Enter);
    send(&mut a, EngineMsg::TurnStarted { turn: 1 });
    assert_eq!(a.panel_order(), [1, 0]);
    assert_no_name(&mut a, "turn started");
    for panel in 0..2 {
        for event in [
            AgentEvent::StepStarted { step: 1 },
            AgentEvent::TextDelta {
                text: "Looking at the discount rule.\n".into(),
            },
            AgentEvent::Usage {
                step: Usage::default(),
                total: Usage {
                    input: 1200,
                    output: 340,
                    ..Usage::default()
                },
                cost: Some(0.0123),
            },
        ] {
            send(&mut a, EngineMsg::Agent { panel, event });
            assert_no_name(&mut a, "streaming");
        }
    }
    let (good, sloppy) = sets(&base);
    finish(&mut a, 0, &["README.md", "src/pricing.rs"]);
    assert_no_name(&mut a, "one finished");
    send(
        &mut a,
        EngineMsg::ChangeSet {
            turn: 1,
            label: GOOD.into(),
            set: Ok(good),
        },
    );
    assert_no_name(&mut a, "first change set");
    finish(&mut a, 1, &["src/pricing.rs", "tests/discount.rs"]);
    send(
        &mut a,
        EngineMsg::ChangeSet {
            turn: 1,
            label: SLOPPY.into(),
            set: Ok(sloppy),
        },
    );
    send(&mut a, EngineMsg::TurnEnded { turn: 1 });
    assert_eq!(a.screen, Screen::Review);
    assert_no_name(&mut a, "review");
    // The review's keys, each frame scanned.
    for (step, code) in [
        ("next file", KeyCode::Right),
        ("side by side", KeyCode::Char('s')),
        ("next hunk", KeyCode::Char('n')),
        ("next model", KeyCode::Tab),
        ("unified", KeyCode::Char('s')),
        ("pick a hunk", KeyCode::Char(' ')),
        ("pick a file", KeyCode::Char('f')),
        ("rate", KeyCode::Char('-')),
        ("previous model", KeyCode::BackTab),
        ("help", KeyCode::Char('?')),
        ("help closed", KeyCode::Esc),
        // Issue 14 item 16: comparing models and every model's version of a hunk.
        ("to the file both changed", KeyCode::Right),
        ("compare with another model", KeyCode::Char('v')),
        ("a pick refused while comparing", KeyCode::Char(' ')),
        ("compared side by side", KeyCode::Char('s')),
        ("compare: back to the base", KeyCode::Char('v')),
        ("every version of the hunk", KeyCode::Char('V')),
        ("versions closed", KeyCode::Esc),
        ("unified again", KeyCode::Char('s')),
        ("sideways", KeyCode::Char('>')),
        ("wrapped", KeyCode::Char('w')),
        ("unwrapped", KeyCode::Char('w')),
    ] {
        key(&mut a, code);
        if step == "compare with another model" {
            assert!(a.review.as_ref().unwrap().against.is_some(), "v compares");
        }
        assert_no_name(&mut a, step);
    }
    ch(&mut a, '/');
    typed(&mut a, "BULK");
    assert_no_name(&mut a, "search");
    key(&mut a, KeyCode::Esc);
    // The transcript of the model listed first: zoomed, its title says 1/2 (its place on
    // screen), never its `-m` position.
    let first = a.panel_order()[0];
    let label = a.panels[first].label.clone();
    select(&mut a, &label);
    ch(&mut a, 't');
    assert!(a.zoom);
    assert_eq!(a.focus, first);
    let t = render(&mut a, 120, 30);
    let screen = format!("{:?}", t.backend());
    assert!(screen.contains("Model A 1/2"), "{screen}");
    assert_no_name(&mut a, "transcript zoom");
    press(&mut a, KeyCode::Char('o'), KeyModifiers::CONTROL);
    assert_no_name(&mut a, "back to the review");
    // `o`: the shell is asked for by alias, with the names hidden.
    let effects = ch(&mut a, 'o');
    let [Effect::OpenShell { shown, hidden, .. }] = effects.as_slice() else {
        panic!("{effects:?}");
    };
    assert!(*hidden && shown.starts_with("Model "), "{shown}");
    let tree = std::path::Path::new("/work/project/.versus/ws/5766-demo-good-8/tree");
    let shell = versus::tui::engine::ShellRequest {
        dir: tree.into(),
        shown: shown.clone(),
        hidden: true,
        sandbox: versus::exec::Sandbox::for_dir(tree),
    };
    for text in [
        shell.banner(),
        shell.failed(&std::io::Error::other("no such shell")),
        shell.shown_dir().display().to_string(),
    ] {
        assert!(
            !text.contains("good") && !text.contains("/ws/"),
            "the shell prints {text}"
        );
    }
    send(
        &mut a,
        EngineMsg::Info(format!("back from the shell in {shown}'s workspace")),
    );
    assert_no_name(&mut a, "back from the shell");
    // The apply dialog (a user edit conflicts) and the rewind dialog.
    std::fs::write(
        dir.path().join("src/pricing.rs"),
        pricing(&[(4, "    if count > BULK_MIN_ITEMS - 1 {")]),
    )
    .unwrap();
    let plan = plan_of(&ch(&mut a, 'a'));
    let preview = ApplyEngine::new(dir.path(), session.path())
        .unwrap()
        .preview(&plan)
        .unwrap();
    send(&mut a, EngineMsg::ApplyPreview { turn: 1, preview });
    assert!(matches!(a.dialog, Some(Dialog::Apply(_))));
    assert_no_name(&mut a, "apply dialog");
    key(&mut a, KeyCode::Esc);
    assert_no_name(&mut a, "apply abandoned");
    send(
        &mut a,
        EngineMsg::RewindPlanned(RewindPlan {
            scope: RewindScope::Conversation,
            turn: Some(1),
            prompt: Some("The discount test fails. Fix it.".into()),
            files: None,
            files_note: None,
        }),
    );
    assert!(matches!(a.dialog, Some(Dialog::Rewind(_))));
    assert_no_name(&mut a, "rewind dialog");
    ch(&mut a, 'n');
    assert_no_name(&mut a, "rewind cancelled");
    // Issue 22 item 2: the choice keeps the names hidden; `/blind` reveals them (and the scan
    // would see them).
    ch(&mut a, 'x');
    send(
        &mut a,
        EngineMsg::Chosen(ChoiceDone {
            turn: 1,
            chosen: Vec::new(),
            apply_id: None,
            files: Vec::new(),
        }),
    );
    assert_no_name(&mut a, "chosen");
    key(&mut a, KeyCode::Esc);
    command(&mut a, "/blind");
    let t = render(&mut a, 200, 50);
    assert!(format!("{:?}", t.backend()).contains("demo/good"));
}

/// Issue 14 item 18: in the review, a click on a model's row selects it, a click on a file
/// selects the file, and the wheel over the diff scrolls it.
#[test]
fn the_mouse_selects_models_and_files_and_scrolls_the_diff() {
    use crossterm::event::{MouseButton, MouseEvent, MouseEventKind};
    use ratatui::layout::Rect;
    use versus::tui::layout::{areas, review_areas};
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    let mut a = reviewed(&base, false);
    assert_eq!(a.screen, Screen::Review);
    let click = |app: &mut App, kind: MouseEventKind, column: u16, row: u16| {
        update(
            app,
            Msg::Mouse(MouseEvent {
                kind,
                column,
                row,
                modifiers: KeyModifiers::NONE,
            }),
        )
    };
    let first = a.review.as_ref().unwrap().selected;
    let r = review_areas(&a, areas(&a, Rect::new(0, 0, a.size.0, a.size.1)).panels);
    // The second row of the table (border, header, then the rows).
    click(
        &mut a,
        MouseEventKind::Down(MouseButton::Left),
        r.table.x + 4,
        r.table.y + 3,
    );
    let review = a.review.as_ref().unwrap();
    assert_ne!(review.selected, first, "the clicked row is selected");
    assert_eq!(review.order[1], review.selected);
    // Its second file.
    let r = review_areas(&a, areas(&a, Rect::new(0, 0, a.size.0, a.size.1)).panels);
    click(
        &mut a,
        MouseEventKind::Down(MouseButton::Left),
        r.files.x + 3,
        r.files.y + 2,
    );
    assert_eq!(a.review.as_ref().unwrap().file, 1);
    // The wheel over the diff scrolls it (a short screen: the diff is longer) and comes back.
    key(&mut a, KeyCode::Left);
    render(&mut a, 120, 16);
    let r = review_areas(&a, areas(&a, Rect::new(0, 0, a.size.0, a.size.1)).panels);
    let before = a.review.as_ref().unwrap().scroll;
    click(
        &mut a,
        MouseEventKind::ScrollDown,
        r.diff.x + 5,
        r.diff.y + 5,
    );
    let after = a.review.as_ref().unwrap().scroll;
    click(&mut a, MouseEventKind::ScrollUp, r.diff.x + 5, r.diff.y + 5);
    assert_eq!(after, before + 3, "three rows a notch");
    assert_eq!(a.review.as_ref().unwrap().scroll, before);
}

/// Issue 14 item 8: with `/config review stay` the review does not take the screen while the
/// user reads the panels: a "review ready" badge says it is there, Ctrl+O opens it, and the
/// setting is one `/save` keeps.
#[test]
fn review_stay_keeps_the_panels_with_a_badge_until_ctrl_o() {
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    let mut a = app(&[GOOD, SLOPPY]);
    command(&mut a, "/config review stay");
    assert_eq!(a.settings.review, versus::tui::action::ReviewOpening::Stay);
    typed(&mut a, "The discount test fails. Fix it.");
    key(&mut a, KeyCode::Enter);
    send(&mut a, EngineMsg::TurnStarted { turn: 1 });
    let (good, _) = sets(&base);
    finish(&mut a, 0, &["README.md", "src/pricing.rs"]);
    send(
        &mut a,
        EngineMsg::ChangeSet {
            turn: 1,
            label: GOOD.into(),
            set: Ok(good),
        },
    );
    assert_eq!(
        a.screen,
        Screen::Panels,
        "the review did not take the screen"
    );
    assert!(a.review_ready());
    let screen = format!("{:?}", render(&mut a, 120, 40).backend());
    assert!(screen.contains("review ready · Ctrl+O"), "{screen}");
    press(&mut a, KeyCode::Char('o'), KeyModifiers::CONTROL);
    assert_eq!(a.screen, Screen::Review);
    assert!(!a.review_ready());
    // Saved with the other settings.
    key(&mut a, KeyCode::Esc);
    let effects = command(&mut a, "/save");
    let saved = effects.iter().find_map(|e| match e {
        Effect::Save { settings, .. } => Some(settings.clone()),
        _ => None,
    });
    assert_eq!(
        saved.map(|s| s.review),
        Some(versus::tui::action::ReviewOpening::Stay)
    );
    // And without the setting, the same change opens the review (the default is unchanged).
    let b = reviewed(&base, false);
    assert_eq!(b.screen, Screen::Review);
}

/// Issue 14 item 4: a label over 32 characters no longer pushes its row out of line, the
/// selected model's row stays on screen in a short table, and at 80x24 the check and rating
/// columns are shown.
#[test]
fn the_table_keeps_columns_aligned_and_the_selection_on_screen() {
    const LONG: &str = "demo/a-model-label-well-over-thirty-two-chars";
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    let mut a = app(&[GOOD, SLOPPY, LONG]);
    typed(&mut a, "Fix it.");
    key(&mut a, KeyCode::Enter);
    send(&mut a, EngineMsg::TurnStarted { turn: 1 });
    let (good, sloppy) = sets(&base);
    let long = change_set(&base, LONG, &[]);
    for (panel, set) in [good, sloppy, long].into_iter().enumerate() {
        finish(&mut a, panel, &[]);
        let label = set.model.clone();
        send(
            &mut a,
            EngineMsg::ChangeSet {
                turn: 1,
                label,
                set: Ok(set),
            },
        );
    }
    send(&mut a, EngineMsg::TurnEnded { turn: 1 });
    assert_eq!(a.screen, Screen::Review);
    // Wide: the status column starts at the same place on every row.
    let terminal = render(&mut a, 160, 40);
    let rows: Vec<String> = crate::util::screen_rows(terminal.backend().buffer())
        .into_iter()
        .filter(|line| line.contains("✓ done"))
        .take(3)
        .collect();
    assert_eq!(rows.len(), 3, "{rows:#?}");
    let at: Vec<usize> = rows
        .iter()
        .map(|r| r[..r.find("done").unwrap()].chars().count())
        .collect();
    assert!(
        at.iter().all(|&x| x == at[0]),
        "columns out of line: {rows:#?}"
    );
    // Short: the selected (last) model's row is on screen, its name cut to fit.
    while a.review.as_ref().unwrap().model().unwrap().label != LONG {
        key(&mut a, KeyCode::Tab);
    }
    let screen = format!("{:?}", render(&mut a, 60, 15).backend());
    // The check and the rating stay at 60 columns (the +/- lines and the status's word go).
    // Issue 22 item 8: the name is cut in the middle, its end kept.
    assert!(screen.contains("▸ demo/a-mo…-chars"), "{screen}");
    assert!(
        screen.contains("rating") && screen.contains("check"),
        "{screen}"
    );
    let screen = format!("{:?}", render(&mut a, 80, 24).backend());
    assert!(
        screen.contains("rating") && screen.contains("check"),
        "{screen}"
    );
}

// ---------------------------------------------------------------------------------------------
// Inline review comments (issue 14 item 17)

fn submitted(effects: &[Effect]) -> versus::tui::action::TurnRequest {
    match effects {
        [Effect::Submit(request)] => request.clone(),
        other => panic!("expected a turn, got {other:?}"),
    }
}

/// `m` on the cursor's line writes a comment, the basket lists it, `m` again edits it, and
/// `M` sends it to that model alone with the file, the line in its version and the quote.
#[test]
fn a_comment_on_a_line_is_listed_and_sent_to_that_model() {
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    let mut a = first_hunk_of(&base, false, GOOD); // good's pricing.rs, hunk 1: line 5 replaced
    ch(&mut a, 'M');
    assert!(
        status(&a).0.contains("no comment to send"),
        "{:?}",
        a.status
    );
    ch(&mut a, 'J');
    ch(&mut a, 'J'); // the added line 5
    comment(&mut a, "use > here");
    let review = a.review.as_ref().unwrap();
    assert_eq!(review.comments.len(), 1);
    assert_eq!(review.comments[0].place, "5");
    let screen = format!("{}", render(&mut a, 120, 36).backend());
    assert!(
        screen.contains("✎ demo/good · src/pricing.rs:5:")
            && screen.contains("use > here")
            && screen.contains("basket · ✎ 1 · M/A send"),
        "the basket lists it: {screen}"
    );
    // Editing: `m` brings the text back; Enter keeps the new text, still one comment.
    ch(&mut a, 'm');
    key(&mut a, KeyCode::Backspace);
    typed(&mut a, "e, please");
    key(&mut a, KeyCode::Enter);
    let review = a.review.as_ref().unwrap();
    assert_eq!(review.comments.len(), 1);
    assert_eq!(review.comments[0].text, "use > here, please");
    let request = submitted(&ch(&mut a, 'M'));
    assert_eq!(
        request
            .targets
            .iter()
            .map(|t| t.label.as_str())
            .collect::<Vec<_>>(),
        vec![GOOD]
    );
    assert!(
        request.prompt.contains(
            "Review comments on your changes:\n- src/pricing.rs:5 `if count >= BULK_MIN_ITEMS {`: use > here, please"
        ),
        "{}",
        request.prompt
    );
    assert!(
        a.review.as_ref().unwrap().comments.is_empty(),
        "sent comments leave the list"
    );
}

/// The review with `model`'s first file open at its first hunk.
fn first_hunk_of(base: &Base, blind: bool, model: &str) -> App {
    let mut a = reviewed(base, blind);
    select(&mut a, model);
    key(&mut a, KeyCode::Right);
    a
}

/// Writes a review comment `text` at the hunk (or line) on screen: `m`, the text, Enter.
fn comment(a: &mut App, text: &str) {
    ch(a, 'm');
    typed(a, text);
    key(a, KeyCode::Enter);
}

/// A comment written and not sent is not dropped silently by the next prompt: the first Enter
/// asks, the second sends the prompt (and a command never asks).
#[test]
fn a_new_prompt_asks_before_unsent_comments_are_dropped() {
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    let mut a = first_hunk_of(&base, false, GOOD);
    comment(&mut a, "keep the old name");
    assert_eq!(a.review.as_ref().unwrap().comments.len(), 1);
    key(&mut a, KeyCode::Esc); // back to the prompt
    typed(&mut a, "now add tests");
    let first = key(&mut a, KeyCode::Enter);
    assert!(first.is_empty(), "nothing is sent yet: {first:?}");
    assert!(
        status(&a).0.contains("1 review comment not sent yet"),
        "{:?}",
        a.status
    );
    assert_eq!(a.prompt.raw(), "now add tests", "the prompt is kept");
    let request = submitted(&key(&mut a, KeyCode::Enter));
    assert_eq!(request.prompt, "now add tests");
}

/// Without a line cursor `m` comments on the hunk on screen; Backspace removes the selected
/// model's latest comment, and an empty edit removes the one edited.
#[test]
fn comments_on_hunks_can_be_removed() {
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    let mut a = first_hunk_of(&base, false, GOOD);
    comment(&mut a, "whole hunk");
    let c = a.review.as_ref().unwrap().comments[0].clone();
    assert_eq!(c.place, "2-8");
    assert!(
        c.quote.contains("+    if count >= BULK_MIN_ITEMS {"),
        "{}",
        c.quote
    );
    // Esc drops a draft.
    ch(&mut a, 'J');
    ch(&mut a, 'm');
    typed(&mut a, "never mind");
    key(&mut a, KeyCode::Esc);
    assert_eq!(a.review.as_ref().unwrap().comments.len(), 1);
    key(&mut a, KeyCode::Backspace);
    assert!(a.review.as_ref().unwrap().comments.is_empty());
    assert!(
        status(&a)
            .0
            .contains("removed the comment on src/pricing.rs:2-8")
    );
    comment(&mut a, "x");
    ch(&mut a, 'm');
    key(&mut a, KeyCode::Backspace);
    key(&mut a, KeyCode::Enter);
    assert!(
        a.review.as_ref().unwrap().comments.is_empty(),
        "an empty edit removes it"
    );
}

/// `A` sends every comment to every model, each naming whose diff it is about; in blind mode
/// by alias, in the list and in the prompt.
#[test]
fn comments_to_all_models_name_the_alias_in_blind_mode() {
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    let mut a = reviewed(&base, true);
    for label in [GOOD, SLOPPY] {
        select(&mut a, label);
        key(&mut a, KeyCode::Right);
        ch(&mut a, 'm');
        typed(
            &mut a,
            &format!("note for {}", if label == GOOD { "one" } else { "two" }),
        );
        key(&mut a, KeyCode::Enter);
    }
    let screen = format!("{}", render(&mut a, 200, 60).backend());
    assert!(
        screen.contains("✎ Model A · src/pricing.rs:2-8") && screen.contains("basket · ✎ 2"),
        "{screen}"
    );
    assert!(
        !screen.contains("demo/good") && !screen.contains("demo/sloppy"),
        "blind: no real name on screen: {screen}"
    );
    let request = submitted(&ch(&mut a, 'A'));
    assert_eq!(request.targets.len(), 2, "to every model");
    assert!(request.prompt.contains("note for one") && request.prompt.contains("note for two"));
    assert!(
        !request.prompt.contains("demo/good") && !request.prompt.contains("demo/sloppy"),
        "{}",
        request.prompt
    );
    let alias = a.shown_label(GOOD);
    assert!(
        request.prompt.contains(&format!("({alias})")),
        "{}",
        request.prompt
    );
    assert!(a.review.as_ref().unwrap().comments.is_empty());
}

/// Blind mode, `M`: the turn goes to the model alone, but the line kept for the history and the
/// prompt box does not name it.
#[test]
fn a_comment_sent_to_one_model_in_blind_mode_does_not_name_it() {
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    let mut a = first_hunk_of(&base, true, SLOPPY);
    comment(&mut a, "why this?");
    let request = submitted(&ch(&mut a, 'M'));
    assert_eq!(
        request
            .targets
            .iter()
            .map(|t| t.label.as_str())
            .collect::<Vec<_>>(),
        vec![SLOPPY]
    );
    assert!(request.prompt.contains("why this?"), "{}", request.prompt);
    for text in [&request.line, &request.prompt] {
        assert!(!text.contains("demo/"), "{text}");
    }
}

/// Issue 14 item 4: the basket is as tall as its picks and comments need, taking rows from an
/// almost empty file list rather than hiding its own lines.
#[test]
fn the_basket_grows_with_its_picks_and_comments() {
    use ratatui::layout::Rect;
    use versus::tui::layout::{areas, review_areas};
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    let mut a = reviewed(&base, false);
    render(&mut a, 100, 26);
    ch(&mut a, ' ');
    for text in ["first", "second", "third"] {
        ch(&mut a, 'J');
        ch(&mut a, 'm');
        typed(&mut a, text);
        key(&mut a, KeyCode::Enter);
    }
    let review = a.review.as_ref().unwrap();
    let wanted = review.basket.picks().len() + review.comments.len();
    assert!(wanted >= 3, "{wanted}");
    let r = review_areas(&a, areas(&a, Rect::new(0, 0, a.size.0, a.size.1)).panels);
    // Each pick or comment takes a row at 40 columns and more, two below (it wraps), plus the
    // title line and the borders.
    let per = if r.basket.width >= 40 { 1 } else { 2 };
    assert!(
        usize::from(r.basket.height) >= per * wanted + 3,
        "basket {} rows for {wanted} lines; files {} rows",
        r.basket.height,
        r.files.height
    );
    assert!(r.files.height >= 3, "the file list keeps its files");
}

/// The status line shows exactly the key table's hints of the context the keyboard is in: the
/// prompt with changes to review, the review, the apply question, the rewind question.
#[test]
fn the_status_line_hints_are_the_key_tables_on_the_review_and_in_questions() {
    use versus::tui::keymap::{self, Context, When};
    use versus::tui::view::status::hint_context;
    fn shows(app: &mut App, context: Context, when: Option<When>) {
        assert_eq!(hint_context(app), (context, when));
        let rows = versus_rows(app);
        assert_eq!(rows.trim_end(), keymap::hint_line(context, when));
    }
    fn versus_rows(app: &mut App) -> String {
        let t = render(app, 200, 40);
        crate::util::screen_rows(t.backend().buffer())
            .pop()
            .unwrap()
    }
    let mut a = conflict_dialog();
    a.status = None;
    shows(&mut a, Context::ApplyDialog, None);
    key(&mut a, KeyCode::Esc);
    a.status = None;
    shows(&mut a, Context::Review, None);
    key(&mut a, KeyCode::Esc);
    shows(&mut a, Context::Prompt, Some(When::ToReview));
    let hints = keymap::hint_line(Context::Prompt, Some(When::ToReview));
    assert!(hints.starts_with("Ctrl+O review the changes"), "{hints}");

    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    let mut a = reviewed(&base, false);
    key(&mut a, KeyCode::Esc);
    for edited in [true, false] {
        send(
            &mut a,
            EngineMsg::RewindPlanned(RewindPlan {
                scope: RewindScope::Both,
                turn: Some(1),
                prompt: None,
                files: Some(RewindPreview {
                    apply_id: "a1".into(),
                    label: "l".into(),
                    models: vec![GOOD.into()],
                    files: vec![RewindFile {
                        path: "src/pricing.rs".into(),
                        action: RewindAction::Restore,
                        added: 1,
                        removed: 1,
                        edited_after_apply: edited,
                    }],
                }),
                files_note: None,
            }),
        );
        a.status = None;
        let when = if edited {
            When::EditedFiles
        } else {
            When::NoEditedFiles
        };
        shows(&mut a, Context::RewindDialog, Some(when));
        // The `f` the hint offers only with edited files.
        assert_eq!(
            keymap::hint_line(Context::RewindDialog, Some(when)).contains("f rewind them too"),
            edited
        );
        key(&mut a, KeyCode::Esc);
    }
}

/// Issue 22 item 5: with a check configured, the review waits until every model's change set
/// is built and every check has ended, then opens by itself on the best model (its check
/// passed and it left the tests alone), not on the first to finish; the model that edited a
/// test is marked in the table with a note under it.
#[test]
fn with_a_check_the_review_opens_on_the_best_model_once_every_check_ended() {
    const RECKLESS: &str = "demo/reckless";
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    let mut a = app(&[RECKLESS, SLOPPY, GOOD]);
    a.settings.check = Some("cargo test".into());
    typed(&mut a, "Fix it.");
    key(&mut a, KeyCode::Enter);
    send(&mut a, EngineMsg::TurnStarted { turn: 1 });
    let (good, sloppy) = sets(&base);
    let reckless = change_set(
        &base,
        RECKLESS,
        &[write(
            0,
            "src/main.rs",
            "fn main() { receipt() }\n",
            "write_file",
        )],
    );
    let result = |passed: bool| CheckResult {
        command: "cargo test".into(),
        passed,
        ending: if passed {
            "passed (exit 0)"
        } else {
            "failed (exit 101)"
        }
        .into(),
        elapsed_ms: 1_500,
        tail: vec![
            if passed {
                "test result: ok"
            } else {
                "error[E0425]"
            }
            .into(),
        ],
    };
    // The order they finish in: reckless (build broken), sloppy (edited the test), good.
    for (panel, set, passed) in [(0, reckless, false), (1, sloppy, true), (2, good, true)] {
        let label = set.model.clone();
        finish(&mut a, panel, &["x"]);
        let running = CheckState::Running;
        send(
            &mut a,
            EngineMsg::Check {
                turn: 1,
                label: label.clone(),
                state: running,
            },
        );
        send(
            &mut a,
            EngineMsg::ChangeSet {
                turn: 1,
                label: label.clone(),
                set: Ok(set),
            },
        );
        assert_eq!(a.screen, Screen::Panels, "{label}: its check still runs");
        send(
            &mut a,
            EngineMsg::Check {
                turn: 1,
                label: label.clone(),
                state: CheckState::Done(result(passed)),
            },
        );
        if label != GOOD {
            assert_eq!(a.screen, Screen::Panels, "{label}: a model still runs");
        }
    }
    assert_eq!(
        a.screen,
        Screen::Review,
        "every check ended: the review opens"
    );
    let review = a.review.as_ref().unwrap();
    assert_eq!(review.model().unwrap().label, GOOD);
    assert_eq!(review.test_files(SLOPPY), ["tests/discount.rs"]);
    assert!(review.test_files(GOOD).is_empty() && review.test_files(RECKLESS).is_empty());
    let screen = crate::util::screen_rows(render(&mut a, 120, 40).backend().buffer()).join("\n");
    let row = |label: &str| {
        screen
            .lines()
            .find(|l| l.contains(&format!(" {label} ")))
            .unwrap_or_default()
            .to_string()
    };
    assert!(
        row(GOOD).contains("▸ demo/good") && row(GOOD).contains("✓ 1.5 s"),
        "{screen}"
    );
    assert!(
        row(SLOPPY).contains("⚠ 2") && row(SLOPPY).contains("✓ 1.5 s"),
        "{screen}"
    );
    assert!(
        row(RECKLESS).contains("✗ 1.5 s") && !row(RECKLESS).contains('⚠'),
        "{screen}"
    );
    assert!(
        screen.contains("⚠ demo/sloppy changed test files: a test edited to pass proves nothing"),
        "{screen}"
    );
}

/// The turn's context under the review table: the context files with their sizes, and the
/// model given something different named as the table names it (its alias in blind mode).
#[test]
fn the_review_shows_the_turns_context_and_flags_the_model_given_something_different() {
    use versus::engine::{LedgerEntry, ProjectContext};
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    let mut a = reviewed(&base, true);
    let context: ProjectContext = serde_json::from_value(serde_json::json!({
        "files": [{"origin": "project", "path": "AGENTS.md", "bytes": 1234, "given": 1234,
                   "hash": "0123456789abcdef"}],
        "skills": [{"name": "release-notes", "description": "d", "location": "x",
                    "origin": "user"}],
    }))
    .unwrap();
    let entry = |model: &str, hash: &str, differs: &[&str]| LedgerEntry {
        model: model.into(),
        hash: hash.into(),
        differs: differs.iter().map(|d| d.to_string()).collect(),
        ..LedgerEntry::default()
    };
    send(
        &mut a,
        EngineMsg::TurnContext {
            turn: 1,
            context: Box::new(context),
            ledger: vec![
                entry(GOOD, "aaaa", &[]),
                entry(SLOPPY, "bbbb", &["limits (max_steps=5 vs max_steps=50)"]),
            ],
        },
    );
    let alias = a.shown_label(SLOPPY);
    assert_ne!(alias, SLOPPY, "blind mode hides the name");
    for (width, height) in [(160, 40), (100, 30)] {
        let t = render(&mut a, width, height);
        let shown = format!("{}", t.backend());
        assert!(
            shown.contains("context files: AGENTS.md (1.2 KiB)"),
            "{width}x{height}\n{shown}"
        );
        assert!(
            !shown.contains(SLOPPY),
            "{width}x{height}: a hidden name\n{shown}"
        );
        if width == 160 {
            assert!(
                shown.contains(&format!(
                    "fairness: {alias} was given something different: limits"
                )),
                "{shown}"
            );
            insta::assert_snapshot!(t.backend());
        }
    }
}
