//! TUI benchmarks: what one frame costs with very long transcripts, and how fast a key press
//! reaches the screen while models stream.
//!
//! `cargo bench --bench tui`; docs/benchmarks.md ("TUI") explains the method and records the
//! latest run.
//!
//! - frame: 8 panels, each fed `VERSUS_BENCH_TUI_LINES` (default 100,000) transcript lines
//!   through the real event path (`update` with `AgentEvent`s: Markdown text with code blocks
//!   and bold, a tool call every 50 lines), drawn by the real `view::draw` on a 240x70
//!   `TestBackend`. The first frame wraps every line once (reported as "cold"); then
//!   `VERSUS_BENCH_TUI_FRAMES` (default 1,000) frames are drawn, each after one more streamed
//!   delta on one panel (the live case) — p50/p99/max. A scrolled variant pages the focused
//!   panel up between frames.
//! - latency: 8 panels streaming at 200 tokens/s each (one delta per token, 16 ms of events
//!   between frames), a key typed before each frame: the time from handling the key to the
//!   frame being drawn (the event loop adds at most one frame interval, 16 ms, of coalescing).
//! - review: a 20,000-line file of which 2,000 lines changed (every tenth line rewritten), as
//!   one model's change set. Time to first frame: from the change set reaching the app
//!   (`EngineMsg::ChangeSet`, which opens the review and lays out the diff) to the frame being
//!   drawn, at 240x70; also for switching to side by side. Then scrolling: frames after a
//!   line down, a page down, or a jump to the next hunk (p50/p99/max). Building the change set
//!   itself happens in the engine, off the loop's thread; it is reported for reference.
//! - review while streaming: the same 20,000-line file changed by two models (the second
//!   rewrites half of the first's lines its own way and agrees on the rest; every 100th line
//!   is 300 columns long), the review open on it at 240x70 while the 8 panels keep streaming
//!   through `update` (200 tokens/s each, as in the latency case). Before each frame a
//!   round of keys is pressed in turn: line down, page down, next hunk, `>` (sideways), `w`
//!   (wrap on / off), `v` (compare with the other model / back to the base): the time from
//!   handling the key to the frame being drawn, p50/p99/max, and p99 as a share of the
//!   16.7 ms frame budget (the reference of the latency case). `v` alone (a 20,000-line
//!   model-against-model diff) is reported too.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    missing_docs
)]

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use versus::model::AgentEvent;
use versus::tui::action::{EngineMsg, Msg, Settings};
use versus::tui::state::{App, SessionInfo};
use versus::tui::theme::Theme;
use versus::tui::update::update;
use versus::tui::view::draw;
use versus::workspace::changeset::{BaseReader, ChangeSet};
use versus::workspace::{Base, FileWrite, WriteOrigin};

const PANELS: usize = 8;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn app() -> App {
    let models = (0..PANELS).map(|i| format!("demo/model-{i}")).collect();
    let mut app = App::new(
        SessionInfo {
            id: "bench".into(),
            project: "/bench".into(),
            demo: false,
        },
        models,
        Settings::default(),
        Theme::COLOR,
    );
    for c in "start".chars() {
        key(&mut app, c);
    }
    update(
        &mut app,
        Msg::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)),
    );
    update(&mut app, Msg::Engine(EngineMsg::TurnStarted { turn: 1 }));
    app
}

fn key(app: &mut App, c: char) {
    update(
        app,
        Msg::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)),
    );
}

fn event(app: &mut App, panel: usize, event: AgentEvent) {
    update(app, Msg::Engine(EngineMsg::Agent { panel, event }));
}

/// Feeds `lines` lines of mixed content to every panel.
fn fill(app: &mut App, lines: usize) {
    for panel in 0..PANELS {
        let mut written = 0;
        let mut call = 0;
        while written < lines {
            let mut chunk = String::new();
            for k in 0..50 {
                let n = written + k;
                match n % 10 {
                    0 => chunk.push_str(&format!("## Step {n}\n")),
                    3 => chunk.push_str("```rust\n"),
                    4 => chunk.push_str(&format!("    let total_{n} = order_total(&items) * {n};\n")),
                    5 => chunk.push_str("```\n"),
                    _ => chunk.push_str(&format!(
                        "Line {n}: the **bulk discount** applies from ten items, so `count >= BULK_MIN_ITEMS` is the check we want here.\n"
                    )),
                }
            }
            event(app, panel, AgentEvent::TextDelta { text: chunk });
            written += 50;
            call += 1;
            let id = format!("call-{call}");
            event(
                app,
                panel,
                AgentEvent::ToolCallStarted {
                    id: id.clone(),
                    name: "read_file".into(),
                },
            );
            event(
                app,
                panel,
                AgentEvent::ToolResult {
                    id,
                    name: "read_file".into(),
                    is_error: false,
                    bytes: 1200,
                    summary: "ok".into(),
                    duration_ms: 3,
                    failed_edit: false,
                    outcome: Some(versus::model::ToolOutcome::Ok),
                    output: String::new(),
                    timing: None,
                },
            );
            written += 1;
        }
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn report(name: &str, mut samples: Vec<Duration>) {
    samples.sort();
    println!(
        "{name}: n={} p50={:.3} ms p99={:.3} ms max={:.3} ms",
        samples.len(),
        percentile(&samples, 0.50).as_secs_f64() * 1e3,
        percentile(&samples, 0.99).as_secs_f64() * 1e3,
        samples.last().copied().unwrap_or_default().as_secs_f64() * 1e3,
    );
}

fn frame_bench(lines: usize, frames: usize) {
    let mut app = app();
    let started = Instant::now();
    fill(&mut app, lines);
    let fill_time = started.elapsed();
    let total: usize = app.panels.iter().map(|p| p.transcript.len()).sum();
    println!(
        "fill: {PANELS} panels x {lines} lines ({total} logical lines) through update(): {:.2} s",
        fill_time.as_secs_f64()
    );
    let mut terminal = Terminal::new(TestBackend::new(240, 70)).unwrap();
    let cold = Instant::now();
    terminal.draw(|f| draw(f, &mut app)).unwrap();
    println!(
        "cold frame (wraps every line once): {:.1} ms",
        cold.elapsed().as_secs_f64() * 1e3
    );
    let mut live = Vec::with_capacity(frames);
    for i in 0..frames {
        event(
            &mut app,
            i % PANELS,
            AgentEvent::TextDelta {
                text: format!("word{i} "),
            },
        );
        let t = Instant::now();
        terminal.draw(|f| draw(f, &mut app)).unwrap();
        live.push(t.elapsed());
    }
    report("frame, 8 panels streaming (240x70)", live);
    let mut scrolled = Vec::with_capacity(frames);
    for i in 0..frames {
        let code = if (i / 50).is_multiple_of(2) {
            KeyCode::PageUp
        } else {
            KeyCode::PageDown
        };
        update(&mut app, Msg::Key(KeyEvent::new(code, KeyModifiers::NONE)));
        let t = Instant::now();
        terminal.draw(|f| draw(f, &mut app)).unwrap();
        scrolled.push(t.elapsed());
    }
    report("frame, focused panel scrolling (240x70)", scrolled);
}

fn latency_bench(frames: usize) {
    let mut app = app();
    fill(&mut app, 2_000);
    let mut terminal = Terminal::new(TestBackend::new(240, 70)).unwrap();
    terminal.draw(|f| draw(f, &mut app)).unwrap();
    // 200 tokens/s per model over a 16 ms frame is about 3.2 deltas per model per frame.
    let per_frame = (200.0 * PANELS as f64 * 0.016).round() as usize;
    let mut samples = Vec::with_capacity(frames);
    let mut token = 0usize;
    for i in 0..frames {
        for _ in 0..per_frame {
            token += 1;
            event(
                &mut app,
                token % PANELS,
                AgentEvent::TextDelta {
                    text: if token.is_multiple_of(12) {
                        "end.\n".to_string()
                    } else {
                        format!("tok{token} ")
                    },
                },
            );
        }
        let t = Instant::now();
        key(&mut app, if i.is_multiple_of(2) { 'a' } else { 'b' });
        terminal.draw(|f| draw(f, &mut app)).unwrap();
        samples.push(t.elapsed());
    }
    report(
        &format!("key to frame, 8 models at 200 tok/s ({per_frame} deltas per frame)"),
        samples,
    );
}

fn press(app: &mut App, code: KeyCode) {
    update(app, Msg::Key(KeyEvent::new(code, KeyModifiers::NONE)));
}

fn review_bench(frames: usize) {
    const LINES: usize = 20_000;
    let dir = tempfile::tempdir().unwrap();
    let old: String = (0..LINES)
        .map(|i| {
            format!("    let value_{i} = compute(&inputs[{i}], SCALE) + offset; // line {i}\n")
        })
        .collect();
    let new: String = (0..LINES)
        .map(|i| {
            if i % 10 == 5 {
                format!("    let value_{i} = compute_checked(&inputs[{i}], SCALE)? + offset; // line {i}\n")
            } else {
                format!("    let value_{i} = compute(&inputs[{i}], SCALE) + offset; // line {i}\n")
            }
        })
        .collect();
    std::fs::write(dir.path().join("big.rs"), &old).unwrap();
    let base = Base::capture(dir.path()).unwrap();
    let write = FileWrite {
        path: "big.rs".into(),
        content: Some(std::sync::Arc::new(new.into_bytes())),
        origin: WriteOrigin::new("edit_file", "c1"),
        seq: 0,
        symlink: false,
    };
    let t = Instant::now();
    let set = ChangeSet::build(
        "demo/model-0",
        &base,
        &[write],
        &BaseReader::new(&base),
        None,
    )
    .unwrap();
    let build = t.elapsed();
    let file = &set.files[0];
    println!(
        "review: change set of a {LINES}-line file, {} lines changed, {} hunks: built in {:.1} ms (engine, off the loop's thread)",
        file.removed,
        file.hunks.len(),
        build.as_secs_f64() * 1e3
    );

    let mut app = app();
    for panel in 0..PANELS {
        update(
            &mut app,
            Msg::Engine(EngineMsg::Finished {
                panel,
                summary: versus::tui::panel::RunSummary {
                    stop: versus::model::RunStop::Completed,
                    elapsed_ms: 1000,
                    writes: 1,
                    files: vec!["big.rs".into()],
                    deleted: vec![],
                    error: None,
                },
            }),
        );
    }
    let mut terminal = Terminal::new(TestBackend::new(240, 70)).unwrap();
    terminal.draw(|f| draw(f, &mut app)).unwrap();
    let t = Instant::now();
    update(
        &mut app,
        Msg::Engine(EngineMsg::ChangeSet {
            turn: 1,
            label: "demo/model-0".into(),
            set: Ok(set),
        }),
    );
    terminal.draw(|f| draw(f, &mut app)).unwrap();
    let first = t.elapsed();
    let rows = app
        .review
        .as_ref()
        .and_then(|r| r.doc.as_ref())
        .map_or(0, |d| d.rows.len());
    println!(
        "review: first frame of the diff (unified, {rows} rows): {:.1} ms",
        first.as_secs_f64() * 1e3
    );
    let t = Instant::now();
    press(&mut app, KeyCode::Char('s'));
    terminal.draw(|f| draw(f, &mut app)).unwrap();
    println!(
        "review: switch to side by side and draw: {:.1} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
    press(&mut app, KeyCode::Char('s'));
    terminal.draw(|f| draw(f, &mut app)).unwrap();
    for (name, code) in [
        ("line down", KeyCode::Down),
        ("page down", KeyCode::PageDown),
        ("next hunk", KeyCode::Char('n')),
    ] {
        press(&mut app, KeyCode::Home);
        let mut samples = Vec::with_capacity(frames);
        for _ in 0..frames {
            let t = Instant::now();
            press(&mut app, code);
            terminal.draw(|f| draw(f, &mut app)).unwrap();
            samples.push(t.elapsed());
        }
        report(
            &format!("review: key + frame, {name} (unified, 240x70)"),
            samples,
        );
    }
    press(&mut app, KeyCode::Char('s'));
    press(&mut app, KeyCode::Home);
    let mut samples = Vec::with_capacity(frames);
    for _ in 0..frames {
        let t = Instant::now();
        press(&mut app, KeyCode::PageDown);
        terminal.draw(|f| draw(f, &mut app)).unwrap();
        samples.push(t.elapsed());
    }
    report(
        "review: key + frame, page down (side by side, 240x70)",
        samples,
    );
}

/// The 20,000-line file of the review cases: base, model-0's version (every tenth line
/// rewritten) and model-1's (half of those rewritten differently); every 100th line is 300
/// columns long in all three.
fn big_file(lines: usize) -> (String, String, String) {
    let line = |i: usize, body: &str| {
        if i % 100 == 7 {
            format!(
                "    let value_{i} = {body}; // {}\n",
                "long comment ".repeat(22)
            )
        } else {
            format!("    let value_{i} = {body}; // line {i}\n")
        }
    };
    let plain = |i: usize| format!("compute(&inputs[{i}], SCALE) + offset");
    let mut base = String::new();
    let mut zero = String::new();
    let mut one = String::new();
    for i in 0..lines {
        base.push_str(&line(i, &plain(i)));
        if i % 10 == 5 {
            let fixed = format!("compute_checked(&inputs[{i}], SCALE)? + offset");
            zero.push_str(&line(i, &fixed));
            if i % 20 == 5 {
                one.push_str(&line(
                    i,
                    &format!("compute(&inputs[{i}], SCALE).unwrap_or(0) + offset"),
                ));
            } else {
                one.push_str(&line(i, &fixed));
            }
        } else {
            zero.push_str(&line(i, &plain(i)));
            one.push_str(&line(i, &plain(i)));
        }
    }
    (base, zero, one)
}

fn streaming_review_bench(frames: usize) {
    const LINES: usize = 20_000;
    let dir = tempfile::tempdir().unwrap();
    let (old, zero, one) = big_file(LINES);
    std::fs::write(dir.path().join("big.rs"), &old).unwrap();
    let base = Base::capture(dir.path()).unwrap();
    let set = |label: &str, text: String| {
        let write = FileWrite {
            path: "big.rs".into(),
            content: Some(std::sync::Arc::new(text.into_bytes())),
            origin: WriteOrigin::new("edit_file", "c1"),
            seq: 0,
            symlink: false,
        };
        ChangeSet::build(label, &base, &[write], &BaseReader::new(&base), None).unwrap()
    };
    let sets = [set("demo/model-0", zero), set("demo/model-1", one)];
    let mut app = app();
    fill(&mut app, 2_000);
    for s in sets {
        let label = s.model.clone();
        update(
            &mut app,
            Msg::Engine(EngineMsg::ChangeSet {
                turn: 1,
                label,
                set: Ok(s),
            }),
        );
    }
    app.screen = versus::tui::state::Screen::Review;
    let mut terminal = Terminal::new(TestBackend::new(240, 70)).unwrap();
    terminal.draw(|f| draw(f, &mut app)).unwrap();
    assert!(app.review.as_ref().is_some_and(|r| r.doc.is_some()));
    let per_frame = (200.0 * PANELS as f64 * 0.016).round() as usize;
    let keys = [
        KeyCode::Down,
        KeyCode::PageDown,
        KeyCode::Char('n'),
        KeyCode::Char('>'),
        KeyCode::Char('w'),
        KeyCode::Char('v'),
    ];
    let mut samples = Vec::with_capacity(frames);
    let mut compare = Vec::new();
    let mut back = Vec::new();
    let mut token = 0usize;
    for i in 0..frames {
        for _ in 0..per_frame {
            token += 1;
            event(
                &mut app,
                token % PANELS,
                AgentEvent::TextDelta {
                    text: if token.is_multiple_of(12) {
                        "end.\n".to_string()
                    } else {
                        format!("tok{token} ")
                    },
                },
            );
        }
        let code = keys[i % keys.len()];
        let t = Instant::now();
        press(&mut app, code);
        terminal.draw(|f| draw(f, &mut app)).unwrap();
        let took = t.elapsed();
        samples.push(took);
        if code == KeyCode::Char('v') {
            if app.review.as_ref().is_some_and(|r| r.against.is_some()) {
                compare.push(took);
            } else {
                back.push(took);
            }
        }
    }
    let compared = app.review.as_ref().map(|r| r.against.is_some());
    assert_eq!(compared, Some(frames / keys.len() % 2 == 1), "v compares");
    let mut sorted = samples.clone();
    sorted.sort();
    let p99 = percentile(&sorted, 0.99).as_secs_f64() * 1e3;
    report(
        &format!(
            "review open on a {LINES}-line diff, 8 models at 200 tok/s: key + frame (down, page down, next hunk, >, w, v in turn)"
        ),
        samples,
    );
    println!(
        "  p99 {p99:.3} ms = {:.1}% of the 16.7 ms frame budget ({:.0}x under it)",
        p99 / 16.7 * 100.0,
        16.7 / p99
    );
    report(
        "  of which v onto the other model (model-against-model diff of the file)",
        compare,
    );
    report("  of which v back to the base", back);
}

fn main() {
    let lines = env_usize("VERSUS_BENCH_TUI_LINES", 100_000);
    let frames = env_usize("VERSUS_BENCH_TUI_FRAMES", 1_000);
    review_bench(frames);
    streaming_review_bench(frames);
    frame_bench(lines, frames);
    latency_bench(frames);
}
