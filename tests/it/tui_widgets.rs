//! Snapshot tests per component (issue 14): each render function of `versus::tui::view` drawn
//! ALONE on ratatui's TestBackend at the three sizes the issue names, 200x50, 80x24 and 60x15,
//! so a change to one widget shows in that widget's snapshots, not only in whole screens
//! (tests/it/tui_snapshots.rs, tests/it/tui_review.rs).
//!
//! Sizes: a component gets the whole `W`x`H` buffer, except the components the layout sizes
//! to their content, which get the full width and the rows `layout::areas` gives them on a
//! `W`x`H` terminal: the header and the status line (one row; a long status message up to
//! three), the banner and the prompt box. The completion list is drawn with the real panel and
//! prompt rectangles of a `W`x`H` screen (it places itself above the prompt box). Snapshots are
//! named `widget__NAME__WxH` after the terminal size (tests/it/snapshots/
//! it__tui_widgets__widget__*.snap; review changes with `cargo insta review`).
//!
//! Blind mode per component: the review table, the file list, the basket and the diff title
//! drawn for a blind turn name no real model.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crossterm::event::KeyCode;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::{Frame, Terminal};
use versus::apply::{RewindAction, RewindFile, RewindPreview};
use versus::model::{AgentEvent, RunStop};
use versus::tui::action::{EngineMsg, RewindPlan, RewindScope, Settings};
use versus::tui::keymap::{self, Context, When};
use versus::tui::layout::{Areas, areas};
use versus::tui::panel::RunSummary;
use versus::tui::state::{App, SessionInfo, Status};
use versus::tui::theme::Theme;
use versus::tui::view::review::{diff, lists, table};
use versus::tui::view::{banner, completion, dialog, header, overlay, panel, prompt, status};
use versus::workspace::Base;

use crate::tui_review::{conflict_dialog, project, reviewed};
use crate::tui_snapshots::{
    agent, app as snapshot_app, ctrl, key, result, send, start_turn,
    streaming as snapshot_streaming, text as say, tool, tool_error, typed, usage,
};
use crate::util::screen_rows;

/// A component's render function, drawn over an area.
type Component = fn(&mut Frame<'_>, Rect, &App);

/// The terminal sizes of issue 14.
const SIZES: [(u16, u16); 3] = [(200, 50), (80, 24), (60, 15)];

// ---------------------------------------------------------------------------------------------
// Rendering one component

/// Brings the caches the real `draw` fills before drawing up to date for a component drawn
/// over `width` columns: every panel's wrap cache, the review's laid-out diff.
fn prepare(app: &mut App, width: u16) {
    let verbose = app.verbose;
    for p in &mut app.panels {
        p.transcript.ensure(width.saturating_sub(2), verbose);
    }
    if let Some(review) = app.review.as_mut() {
        review.ensure_doc();
    }
}

/// Draws `component` alone into a `width`x`height` buffer.
fn draw_alone(
    app: &mut App,
    (width, height): (u16, u16),
    component: &dyn Fn(&mut Frame<'_>, Rect, &App),
) -> Terminal<TestBackend> {
    prepare(app, width);
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    let app: &App = app;
    terminal.draw(|f| component(f, f.area(), app)).unwrap();
    terminal
}

/// The one snapshot helper: draws `component` alone at the three terminal sizes `W`x`H`, over
/// `W` columns and `rows(app, W, H)` rows, and asserts the snapshots `widget__NAME__WxH`;
/// returns the three terminals for further checks.
fn snapshots(
    name: &str,
    app: &mut App,
    rows: impl Fn(&App, u16, u16) -> u16,
    component: impl Fn(&mut Frame<'_>, Rect, &App),
) -> Vec<Terminal<TestBackend>> {
    SIZES
        .iter()
        .map(|&(w, h)| {
            app.size = (w, h);
            let height = rows(app, w, h);
            assert!(height > 0, "{name} has rows at {w}x{h}");
            let t = draw_alone(app, (w, height), &component);
            insta::assert_snapshot!(format!("widget__{name}__{w}x{h}"), t.backend());
            t
        })
        .collect()
}

/// [`snapshots`] of a component drawn over the whole `W`x`H` buffer.
fn widget(
    name: &str,
    app: &mut App,
    component: impl Fn(&mut Frame<'_>, Rect, &App),
) -> Vec<Terminal<TestBackend>> {
    snapshots(name, app, |_, _, h| h, component)
}

/// [`snapshots`] of a component the layout sizes to its content: over `W` columns and the rows
/// `area` picks from the layout of a `W`x`H` screen (one for the header; the status line's,
/// the banner's or the prompt box's own).
fn sized_widget(
    name: &str,
    app: &mut App,
    area: fn(&Areas) -> Rect,
    component: impl Fn(&mut Frame<'_>, Rect, &App),
) -> Vec<Terminal<TestBackend>> {
    snapshots(
        name,
        app,
        |app, w, h| area(&areas(app, Rect::new(0, 0, w, h))).height,
        component,
    )
}

/// The rendered text of a terminal, row by row.
fn text(t: &Terminal<TestBackend>) -> String {
    screen_rows(t.backend().buffer()).join("\n")
}

// ---------------------------------------------------------------------------------------------
// Building states through the public API

/// The snapshot tests' app, laid out for an 80x24 terminal until a test draws it otherwise.
fn app(models: &[&str]) -> App {
    let mut app = snapshot_app(models);
    app.size = (80, 24);
    app
}

fn finished(app: &mut App, panel: usize, stop: RunStop, files: &[&str]) {
    agent(app, panel, AgentEvent::Finished { stop });
    send(
        app,
        EngineMsg::Finished {
            panel,
            summary: RunSummary {
                stop,
                elapsed_ms: 7_000,
                writes: files.len(),
                files: files.iter().map(|f| f.to_string()).collect(),
                deleted: Vec::new(),
                error: None,
            },
        },
    );
}

/// Two models mid-run (the whole-screen snapshot tests' scene), laid out for 80x24.
fn streaming() -> App {
    let mut app = snapshot_streaming(&["openai/gpt-5", "anthropic/claude-sonnet-4-5"]);
    app.size = (80, 24);
    app
}

/// Panel 0 of `app` over the whole area, all panels on screen.
fn first_panel(f: &mut Frame<'_>, area: Rect, app: &App) {
    panel::render(f, area, app, &app.panels[0], 0, app.panels.len());
}

/// A blind turn of demo/good and demo/sloppy in review, the first file of the selected model
/// picked so the basket names its model (`dir` must outlive the app's use of the base).
fn blind_review(dir: &tempfile::TempDir) -> App {
    let base = Base::capture(dir.path()).unwrap();
    let mut a = reviewed(&base, true);
    key(&mut a, KeyCode::Right);
    key(&mut a, KeyCode::Char(' '));
    a.status = None;
    a
}

/// A review of demo/good and demo/sloppy, the diff of demo/good's first file on screen.
fn review(dir: &tempfile::TempDir) -> App {
    let base = Base::capture(dir.path()).unwrap();
    let mut a = reviewed(&base, false);
    key(&mut a, KeyCode::Right);
    a.status = None;
    a
}

// ---------------------------------------------------------------------------------------------
// Header, banner, status line (sized by the layout)

/// At 60 columns the session id is short (`session ab12`) and the rest is whole.
#[test]
fn header_idle() {
    let mut a = app(&["demo/good", "demo/sloppy"]);
    let ts = sized_widget("header_idle", &mut a, |a| a.header, header::render);
    for t in &ts {
        assert!(text(t).contains("$0.0000 total"), "{}", text(t));
    }
}

/// Every badge at once: demo, review ready, blind, verbose (the longest header).
#[test]
fn header_with_every_badge() {
    let dir = project();
    let base = Base::capture(dir.path()).unwrap();
    let mut a = reviewed(&base, false);
    key(&mut a, KeyCode::Esc);
    // As with `/config review stay`: the changes wait, the review was never opened.
    a.review.as_mut().unwrap().opened = false;
    a.session.demo = true;
    a.blind = true;
    a.verbose = true;
    assert!(a.review_ready(), "the review waits behind the prompt");
    // The header gives way by priority: at 80 columns the session and the model count go, at
    // 60 the cost too and the review badge is short; every badge stays, nothing is cut.
    let ts = sized_widget("header_badges", &mut a, |a| a.header, header::render);
    for (t, (w, h)) in ts.iter().zip(SIZES) {
        let shown = text(t);
        for badge in ["DEMO", "review", "Ctrl+O", "blind", "verbose", "turn 1"] {
            assert!(shown.contains(badge), "{badge} at {w}x{h}: {shown}");
        }
    }
}

/// The layout counts the banner's rows wrapped at words, as it is drawn: whole at 200x50 and
/// 80x24; at 60x15 it gets 4 rows of text (the panels keep theirs) and the last one ends with
/// `…`, the mark that the rest is left out.
#[test]
fn banner_demo() {
    let mut a = App::new(
        SessionInfo {
            id: "20261121-090503-ab12".into(),
            project: "/tmp/versus-demo/project".into(),
            demo: true,
        },
        vec!["demo/good".into(), "demo/sloppy".into()],
        Settings::default(),
        Theme::COLOR,
    );
    a.banner = versus::tui::strings::demo_banner(
        "/home/me/code/shop",
        "/tmp/versus-demo/project",
        "no model is configured",
    );
    let ts = sized_widget("banner_demo", &mut a, |a| a.banner, banner::render);
    for (t, (w, h)) in ts.iter().zip(SIZES) {
        let rows = screen_rows(t.backend().buffer());
        let last = rows[rows.len() - 2]
            .trim_end_matches([' ', '│'])
            .to_string();
        let end = if (w, h) == (60, 15) {
            "…"
        } else {
            "config.toml."
        };
        assert!(
            last.ends_with(end),
            "the banner's last row at {w}x{h}: {last}"
        );
    }
}

/// The hints that do not fit are left out whole, from the end, and the line ends with ` · …`
/// (`/help` lists them all): at 80 and 60 columns here, in the running and review hints too.
#[test]
fn status_idle_hints() {
    let mut a = app(&["demo/good"]);
    let ts = sized_widget("status_idle", &mut a, |a| a.status, status::render);
    let all = keymap::hints(Context::Prompt, Some(When::Idle));
    for (t, (w, h)) in ts.iter().zip(SIZES) {
        let shown = text(t).trim_end().to_string();
        let dropped = shown.ends_with(" · …");
        assert_eq!(dropped, w < 200, "the mark at {w}x{h}: {shown}");
        let hints: Vec<&str> = shown.trim_end_matches(" · …").split(" · ").collect();
        // The first hints, each whole.
        for (hint, (keys, label)) in hints.iter().zip(&all) {
            assert_eq!(*hint, format!("{keys} {label}"), "at {w}x{h}: {shown}");
        }
    }
}

#[test]
fn status_running_hints() {
    let mut a = streaming();
    assert!(a.running());
    sized_widget("status_running", &mut a, |a| a.status, status::render);
}

#[test]
fn status_review_hints() {
    let dir = project();
    let mut a = review(&dir);
    sized_widget("status_review", &mut a, |a| a.status, status::render);
}

#[test]
fn status_error_message() {
    let mut a = app(&["demo/good"]);
    a.status = Some(Status {
        text: "unknown command /fo (try /help)".into(),
        error: true,
    });
    sized_widget("status_error", &mut a, |a| a.status, status::render);
}

/// A message longer than the row wraps (the apply question's own message): two rows at 80
/// and 60 columns, one at 200.
#[test]
fn status_long_message_wraps() {
    let mut a = app(&["demo/good"]);
    a.status = Some(Status {
        text: "2 file(s) conflict with your edits since the run started: choose per file \
               (o overwrite, s skip, m markers), Enter applies"
            .into(),
        error: true,
    });
    let ts = sized_widget("status_long", &mut a, |a| a.status, status::render);
    for t in &ts {
        let shown: String = text(t).split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(shown.ends_with("Enter applies"), "{shown}");
    }
}

/// A message needing more than three rows ends its third with `…` (at 60x15), so the cut
/// shows.
#[test]
fn status_too_long_message_is_cut_at_three_rows() {
    let mut a = app(&["demo/good"]);
    a.status = Some(Status {
        text: "2 file(s) conflict with your edits since the run started: choose per file \
               (o overwrite, s skip, m markers), Enter applies; Esc goes back to the review \
               without applying anything, and nothing on disk changes until you answer"
            .into(),
        error: true,
    });
    let ts = sized_widget("status_too_long", &mut a, |a| a.status, status::render);
    let sixty = text(&ts[2]);
    assert_eq!(sixty.lines().count(), 3, "{sixty}");
    assert!(sixty.trim_end().ends_with("without applying …"), "{sixty}");
}

// ---------------------------------------------------------------------------------------------
// Panels

#[test]
fn panel_streaming_markdown_and_a_tool_call() {
    let mut a = streaming();
    widget("panel_streaming", &mut a, first_panel);
}

/// The same panel when only it is on screen: its place is in the title.
#[test]
fn panel_zoomed_shows_its_place() {
    let mut a = streaming();
    widget("panel_zoomed", &mut a, |f, area, app| {
        panel::render(f, area, app, &app.panels[1], 1, 1);
    });
}

#[test]
fn panel_tool_error() {
    let mut a = tool_error(1830);
    a.size = (80, 24);
    finished(&mut a, 0, RunStop::Error, &[]);
    widget("panel_error", &mut a, first_panel);
}

#[test]
fn panel_finished_with_its_summary() {
    let mut a = app(&["demo/good"]);
    start_turn(&mut a, "Fix the discount");
    agent(&mut a, 0, AgentEvent::StepStarted { step: 1 });
    say(
        &mut a,
        0,
        "Fixed: the bulk discount now starts at **10** items.\n",
    );
    tool(
        &mut a,
        0,
        "w1",
        "edit_file",
        r#"{"path":"src/pricing.rs","old_string":">","new_string":">="}"#,
    );
    result(&mut a, 0, "w1", "edit_file", None, 1830);
    usage(&mut a, 0, 2400, 512, 0.031);
    finished(
        &mut a,
        0,
        RunStop::Completed,
        &["src/pricing.rs", "README.md"],
    );
    widget("panel_finished", &mut a, first_panel);
}

/// A long transcript scrolled up five rows: the bottom border says `↑5 (PgDn)`.
#[test]
fn panel_scrolled_shows_the_marker() {
    let mut a = app(&["demo/good"]);
    start_turn(&mut a, "Count");
    agent(&mut a, 0, AgentEvent::StepStarted { step: 1 });
    let long: String = (1..=80)
        .map(|i| format!("line {i} of the answer\n"))
        .collect();
    say(&mut a, 0, &long);
    // The field is public; scrolling by key depends on the page size of one terminal.
    a.panels[0].scroll = 5;
    let ts = widget("panel_scrolled", &mut a, first_panel);
    for t in &ts {
        assert!(text(t).contains("↑5 (PgDn)"), "{}", text(t));
    }
}

#[test]
fn panel_empty_without_a_model() {
    let mut a = app(&[]);
    widget("panel_empty", &mut a, panel::render_empty);
}

// ---------------------------------------------------------------------------------------------
// Prompt box and completion

/// At 60 columns the placeholder is the short one, whole.
#[test]
fn prompt_empty() {
    let mut a = app(&["demo/good", "demo/sloppy"]);
    let ts = sized_widget("prompt_empty", &mut a, |a| a.prompt, prompt::render);
    assert!(
        text(&ts[2]).contains(versus::tui::strings::PROMPT_PLACEHOLDER_SHORT),
        "{}",
        text(&ts[2])
    );
}

#[test]
fn prompt_multi_line() {
    let mut a = app(&["demo/good", "demo/sloppy"]);
    typed(&mut a, "Fix the discount:");
    ctrl(&mut a, 'j');
    typed(&mut a, "- ten items get 10%");
    ctrl(&mut a, 'j');
    typed(&mut a, "- keep the tax as it is");
    sized_widget("prompt_multi_line", &mut a, |a| a.prompt, prompt::render);
}

#[test]
fn prompt_history_search() {
    let mut a = app(&["demo/good"]);
    send(
        &mut a,
        EngineMsg::HistoryLoaded(vec![
            "fix the failing test".into(),
            "add a CHANGELOG entry".into(),
        ]),
    );
    ctrl(&mut a, 'r');
    typed(&mut a, "fix");
    sized_widget(
        "prompt_history_search",
        &mut a,
        |a| a.prompt,
        prompt::render,
    );
}

#[test]
fn prompt_addressed_to_a_model() {
    let mut a = app(&["demo/good", "demo/sloppy"]);
    typed(&mut a, "@sloppy explain your change");
    a.completion = None;
    sized_widget("prompt_addressed", &mut a, |a| a.prompt, prompt::render);
}

/// A detail too long for the box is cut after a word, with `…` ("(models,…" at 60 columns).
/// The list is drawn with the panel and prompt rectangles of the real layout (it sits on the
/// panels just above the prompt box); nothing else is drawn.
#[test]
fn completion_of_slash_commands() {
    let mut a = app(&["demo/good"]);
    typed(&mut a, "/c");
    assert!(a.completion.is_some());
    let ts = widget("completion_commands", &mut a, |f, area, app| {
        let at = areas(app, area);
        completion::render(f, at.panels, at.prompt, app);
    });
    assert!(text(&ts[2]).contains("(models,… "), "{}", text(&ts[2]));
}

/// `@src/` at the end of a three-line prompt offers twelve files; the last is selected, so the
/// list is scrolled. The selected item stays on screen at every size: at 60x15 the box gets
/// 6 rows of items and shows src/mod_07 to src/mod_12.
#[test]
fn completion_scrolled_to_the_selected_file() {
    let mut a = app(&["demo/good"]);
    a.files = (1..=12).map(|i| format!("src/mod_{i:02}.rs")).collect();
    typed(&mut a, "look at");
    ctrl(&mut a, 'j');
    typed(&mut a, "these files:");
    ctrl(&mut a, 'j');
    typed(&mut a, "@src/");
    for _ in 0..11 {
        key(&mut a, KeyCode::Down);
    }
    assert_eq!(a.completion.as_ref().map(|c| c.selected), Some(11));
    let ts = widget("completion_scrolled", &mut a, |f, area, app| {
        let at = areas(app, area);
        completion::render(f, at.panels, at.prompt, app);
    });
    for (t, (w, h)) in ts.iter().zip(SIZES) {
        assert!(
            text(t).contains("src/mod_12.rs"),
            "the selected file at {w}x{h}:\n{}",
            text(t)
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Overlay and dialogs

/// The help wraps its descriptions under their own column and its title counts the rows
/// drawn: "(1-13 of 152)" at 60x15, where the title leaves out the scrolling keys to fit.
#[test]
fn overlay_help() {
    let mut a = app(&["demo/good"]);
    typed(&mut a, "/help");
    key(&mut a, KeyCode::Enter);
    let ts = widget("overlay_help", &mut a, overlay::render);
    let sixty = screen_rows(ts[2].backend().buffer());
    assert!(sixty[0].contains("(1-13 of "), "{}", sixty[0]);
    assert!(sixty[0].contains("other keys close"), "{}", sixty[0]);
}

/// A text overlay (`/stats`, `/config`, `/models`) wraps an indented line under its own indent:
/// at 60 and 80 columns the long rows of the list go on two columns further in than they
/// start (they started at the left edge before), and each item keeps its own indent.
#[test]
fn overlay_text_keeps_indentation() {
    let mut a = app(&["demo/good"]);
    a.overlay = Some(versus::tui::state::Overlay::Info {
        title: "stats".to_string(),
        lines: vec![
            "Models by wins (this project, 12 turns):".to_string(),
            "  demo/good      8 wins  3 losses  1 tie   win rate 67%   rating 1540 ± 80   $0.12 per turn"
                .to_string(),
            "  demo/careful   3 wins  8 losses  1 tie   win rate 25%   rating 1460 ± 80   $0.08 per turn"
                .to_string(),
        ],
    });
    let ts = widget("overlay_text_indented", &mut a, overlay::render);
    for (t, (w, h)) in ts.iter().zip(SIZES) {
        let rows = screen_rows(t.backend().buffer());
        let inside: Vec<&str> = rows
            .iter()
            .filter_map(|r| r.split('│').nth(1))
            .filter(|r| !r.trim().is_empty())
            .collect();
        let indent = |r: &str| r.len() - r.trim_start().len();
        let items: Vec<usize> = inside
            .iter()
            .enumerate()
            .filter(|(_, r)| r.trim_start().starts_with("demo/"))
            .map(|(i, _)| i)
            .collect();
        assert_eq!(items.len(), 2, "{w}x{h}:\n{}", rows.join("\n"));
        let mut continued = 0;
        for row in &inside[1..] {
            let want = if row.trim_start().starts_with("demo/") {
                2
            } else {
                continued += 1;
                4
            };
            assert_eq!(indent(row), want, "{w}x{h}: {row:?}");
        }
        assert_eq!(continued > 0, w < 200, "{w}x{h}:\n{}", rows.join("\n"));
    }
}

/// Scrolled as far as it goes, the help shows its last row (the end of /quit's text) just
/// above the bottom border at every size, the title ends its place at the total ("-N of N"),
/// and every row of the commands wraps under the key column.
#[test]
fn overlay_help_scrolled_to_the_end() {
    let mut a = app(&["demo/good"]);
    typed(&mut a, "/help");
    key(&mut a, KeyCode::Enter);
    a.overlay_scroll = usize::MAX;
    let ts = widget("overlay_help_end", &mut a, overlay::render);
    for (t, (w, h)) in ts.iter().zip(SIZES) {
        assert_help_ends(t, &format!("{w}x{h}"));
    }
}

/// `t` shows the end of `/help`: the last row above the border ends /quit's text, the title's
/// place ends at its total, and every row of the commands is indented (no wrapped row starts
/// under the key column).
fn assert_help_ends(t: &Terminal<TestBackend>, size: &str) {
    let rows = screen_rows(t.backend().buffer());
    let (top, bottom) = (&rows[0], rows.len() - 1);
    let last = rows[..bottom]
        .iter()
        .rposition(|r| r.contains('└'))
        .map_or(bottom, |b| b);
    let quit = versus::tui::commands::COMMANDS.last().unwrap().help;
    let last_word = quit.split(' ').next_back().unwrap();
    assert!(
        rows[last - 1]
            .trim_end_matches([' ', '│'])
            .ends_with(last_word),
        "the last row at {size}:\n{}",
        rows.join("\n")
    );
    let total = top
        .split(" of ")
        .nth(1)
        .and_then(|r| r.split(')').next())
        .unwrap();
    assert!(
        top.contains(&format!("-{total} of {total})")),
        "{size}: {top}"
    );
    // The commands (the end of the help) have no heading between them.
    let first = rows
        .iter()
        .position(|r| r.contains("│Commands"))
        .map_or(1, |c| c + 1);
    for row in &rows[first..last] {
        let inside = row.trim_start_matches([' ', '│']);
        let at = row.chars().count() - inside.chars().count();
        let edge = row.chars().position(|c| c == '│').unwrap_or(0) + 1;
        assert!(
            inside.is_empty() || at > edge,
            "{size}: a row under the key column: {row}"
        );
    }
}

/// The keys scroll the help no further than its end at the terminal's size: after many
/// page downs the last row shows, and one key up moves it at once (at 60x15).
#[test]
fn overlay_help_keys_stop_at_the_end() {
    let mut a = app(&["demo/good"]);
    a.size = (60, 15);
    typed(&mut a, "/help");
    key(&mut a, KeyCode::Enter);
    for _ in 0..40 {
        key(&mut a, KeyCode::PageDown);
    }
    let end = a.overlay_scroll;
    let screen = areas(&a, Rect::new(0, 0, 60, 15));
    let t = draw_alone(&mut a, (60, 15), &|f, _, app| {
        overlay::render(f, screen.panels, app)
    });
    let title = screen_rows(t.backend().buffer())
        .into_iter()
        .find(|r| r.contains("help"))
        .unwrap();
    assert!(title.contains(&format!("({}-", end + 1)), "{title}");
    key(&mut a, KeyCode::Up);
    assert_eq!(a.overlay_scroll, end - 1);
}

// The keys in the bottom border keep their first hints whole and end with ` · …` when some
// are left out ("s skip · …" at 60x15, "↑/↓ file · …" at 80x24); the way out stays after the
// `…` when it would have been left out (the rewind's "… · n cancel" at 60x15). A wrapped line
// of a question goes on under the text after its label.
// When the conflict detail goes on below, its "↓ more: PgDn" badge is in the bottom border,
// right of the keys, and covers no text (at 60x15 and 80x24).
/// The apply question as it opens: README.md, the first conflicting file, selected.
#[test]
fn dialog_apply() {
    let mut a = conflict_dialog();
    a.status = None;
    let ts = widget("dialog_apply", &mut a, dialog::render);
    for (t, (w, h)) in ts.iter().zip(SIZES) {
        let rows = screen_rows(t.backend().buffer());
        let bottom = rows.iter().rposition(|r| r.contains('└')).unwrap();
        let keys = &rows[bottom];
        assert!(keys.contains("Enter apply · Esc cancel"), "{w}x{h}: {keys}");
        assert_eq!(keys.contains(" · … "), w < 200, "{w}x{h}: {keys}");
        let more = rows.iter().any(|r| r.contains("more: PgDn"));
        assert!(
            !more || keys.contains("more: PgDn"),
            "the badge over the text at {w}x{h}:\n{}",
            rows.join("\n")
        );
    }
}

/// The apply question with the selected conflict's texts (src/pricing.rs, README.md skipped).
#[test]
fn dialog_conflict() {
    let mut a = conflict_dialog();
    key(&mut a, KeyCode::Char('s'));
    a.status = None;
    widget("dialog_conflict", &mut a, dialog::render);
}

#[test]
fn dialog_rewind_preview() {
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
                models: vec!["demo/good".into()],
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
                ],
            }),
            files_note: None,
        }),
    );
    a.status = None;
    let ts = widget("dialog_rewind", &mut a, dialog::render);
    for (t, (w, h)) in ts.iter().zip(SIZES) {
        let rows = screen_rows(t.backend().buffer());
        let bottom = rows.iter().rposition(|r| r.contains('└')).unwrap();
        let keys = &rows[bottom];
        assert!(keys.contains("n cancel"), "{w}x{h}: no way out in {keys}");
        assert!(keys.contains("y rewind"), "{w}x{h}: {keys}");
        // Every row counted is drawn: the last line ends right above the border.
        assert!(
            rows[bottom - 1]
                .trim_end_matches([' ', '│'])
                .ends_with("box"),
            "{w}x{h}:\n{}",
            rows.join("\n")
        );
        // A wrapped line goes on under the text after its label, never at the left edge.
        let labels = ["prompt  ", "files   ", "models  ", "  restore", "  remove"];
        for row in rows.iter().filter_map(|r| r.split('│').nth(1)) {
            assert!(
                row.trim().is_empty()
                    || row.starts_with(' ')
                    || labels.iter().any(|l| row.starts_with(l)),
                "{w}x{h}: a row at the left edge: {row:?}"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The review's parts

fn review_table(f: &mut Frame<'_>, area: Rect, app: &App) {
    table::render(f, area, app, app.review.as_ref().unwrap());
}

fn review_files(f: &mut Frame<'_>, area: Rect, app: &App) {
    lists::files(f, area, app, app.review.as_ref().unwrap());
}

fn review_basket(f: &mut Frame<'_>, area: Rect, app: &App) {
    lists::basket(f, area, app, app.review.as_ref().unwrap());
}

fn review_diff(f: &mut Frame<'_>, area: Rect, app: &App) {
    diff::render(f, area, app, app.review.as_ref().unwrap());
}

/// The table with demo/good rated `+`: at 60 columns the +/- lines and the status's word give
/// way, so the names, the check and the rating stay on screen at every size.
#[test]
fn review_table_of_the_models() {
    let dir = project();
    let mut a = review(&dir);
    key(&mut a, KeyCode::Char('+'));
    a.status = None;
    let ts = widget("review_table", &mut a, review_table);
    for (t, (w, h)) in ts.iter().zip(SIZES) {
        let shown = text(t);
        for part in ["demo/good", "demo/sloppy", "check", "rating", "good  "] {
            assert!(shown.contains(part), "{part} at {w}x{h}:\n{shown}");
        }
    }
}

#[test]
fn review_files_of_the_selected_model() {
    let dir = project();
    let mut a = review(&dir);
    key(&mut a, KeyCode::Char(' '));
    a.status = None;
    let ts = widget("review_files", &mut a, review_files);
    // The selected file (src/pricing.rs, shown in the diff) is drawn reversed at every size.
    for t in &ts {
        let buffer = t.backend().buffer();
        let y = screen_rows(buffer)
            .iter()
            .position(|row| row.contains("src/pricing.rs"))
            .and_then(|y| u16::try_from(y).ok())
            .expect("the selected file is on screen");
        assert!(buffer[(3, y)].modifier.contains(Modifier::REVERSED));
    }
}

#[test]
fn review_basket_with_a_conflict() {
    let dir = project();
    let mut a = review(&dir);
    key(&mut a, KeyCode::Char(' '));
    key(&mut a, KeyCode::Tab);
    key(&mut a, KeyCode::Char(' '));
    a.status = None;
    widget("review_basket", &mut a, review_basket);
}

// Both layouts: the bottom border keeps whole key hints and ends with … when some are left
// out; a title too wide for the border leaves out the layout's name, not part of it.
#[test]
fn review_diff_unified() {
    let dir = project();
    let mut a = review(&dir);
    widget("review_diff_unified", &mut a, review_diff);
}

#[test]
fn review_diff_side_by_side() {
    let dir = project();
    let mut a = review(&dir);
    key(&mut a, KeyCode::Char('s'));
    a.status = None;
    widget("review_diff_side_by_side", &mut a, review_diff);
}

/// Blind mode, component by component: the table, the file list, the basket (with a pick)
/// and the diff (its title and hunk headers) name no real model at any size; the first three
/// name the aliases (the diff's title names the file, not the model).
#[test]
fn blind_review_components_name_no_model() {
    let dir = project();
    let mut a = blind_review(&dir);
    assert!(a.hiding());
    let parts: [(&str, Component); 4] = [
        ("table", review_table),
        ("files", review_files),
        ("basket", review_basket),
        ("diff", review_diff),
    ];
    for (part, component) in parts {
        let mut aliases = false;
        for size in SIZES {
            a.size = size;
            let t = draw_alone(&mut a, size, &component);
            let screen = text(&t);
            for leak in ["demo/", "demo-", "good", "sloppy"] {
                assert!(
                    !screen.contains(leak),
                    "blind {part} at {size:?} shows {leak:?}:\n{screen}"
                );
            }
            aliases |= screen.contains("Model A") || screen.contains("Model B");
        }
        assert!(
            aliases || part == "diff",
            "blind {part} names an alias somewhere"
        );
    }
}

/// A model whose tests failed: its bash call marked `✗ … exit 3` with the end of its output
/// under it, and a passing call after it.
fn failed_command() -> App {
    let mut a = app(&["demo/good"]);
    start_turn(&mut a, "Run the tests");
    agent(&mut a, 0, AgentEvent::StepStarted { step: 1 });
    let calls = [
        (
            "c1",
            "cargo test --quiet",
            versus::model::ToolOutcome::Exit { code: 3 },
            "running 12 tests\n..........F.\nfailures:\n    pricing::bulk_discount\ntest result: FAILED. 11 passed; 1 failed\n[exit code: 3]",
        ),
        (
            "c2",
            "echo \"a line long enough to be cut at the end of a narrow panel, and then some\"",
            versus::model::ToolOutcome::Ok,
            "a line long enough to be cut at the end of a narrow panel, and then some\n[exit code: 0]",
        ),
    ];
    for (id, command, outcome, output) in calls {
        let args = serde_json::json!({ "command": command }).to_string();
        tool(&mut a, 0, id, "bash", &args);
        agent(
            &mut a,
            0,
            AgentEvent::ToolResult {
                id: id.into(),
                name: "bash".into(),
                is_error: false,
                bytes: output.len(),
                summary: String::new(),
                duration_ms: 1234,
                failed_edit: false,
                outcome: Some(outcome),
                output: output.into(),
                timing: None,
            },
        );
    }
    say(&mut a, 0, "One test fails.");
    a
}

#[test]
fn panel_failed_command_with_its_output() {
    let mut a = failed_command();
    let ts = widget("panel_failed_command", &mut a, first_panel);
    for t in &ts {
        let rows = screen_rows(t.backend().buffer());
        assert!(rows.iter().any(|r| r.contains("✗ bash")), "{rows:?}");
        assert!(!rows.iter().any(|r| r.contains("✓ bash cargo")), "{rows:?}");
    }
    // Wide enough for the whole call line: the exit code, and the output's last lines.
    let wide = screen_rows(ts[0].backend().buffer()).join("\n");
    assert!(wide.contains("· exit 3 ·"), "{wide}");
    assert!(
        wide.contains("test result: FAILED. 11 passed; 1 failed"),
        "{wide}"
    );
}

#[test]
fn overlay_tool_results() {
    let mut a = failed_command();
    ctrl(&mut a, 't');
    let ts = widget("overlay_tool_results", &mut a, overlay::render);
    let wide = screen_rows(ts[0].backend().buffer()).join("\n");
    assert!(
        wide.contains("turn 1 · ✗ exit 3 bash cargo test --quiet"),
        "{wide}"
    );
    assert!(wide.contains("pricing::bulk_discount"), "{wide}");
}
