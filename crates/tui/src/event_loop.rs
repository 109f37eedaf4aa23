//! The one event loop: terminal input, the engine's events, the front end's own messages and a
//! clock, merged with
//! `select!`; state changes through [`super::update::update`]; frames drawn only when something
//! changed, at most one per [`FRAME`].
//!
//! Idle means idle: with no model running there is no tick and no timer, so the process sleeps
//! until a key arrives. While models stream, bursts of events are drained before a frame is
//! drawn, so eight models at hundreds of tokens per second still cost about sixty frames a
//! second, not thousands.

use std::io;
use std::time::{Duration, Instant};

use crossterm::event::{Event, EventStream};
use futures::StreamExt;
use ratatui::Terminal;
use ratatui::backend::Backend;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc::UnboundedReceiver;

use super::action::{EngineMsg, Msg};
use super::engine::{Engine, LoopMsg};
use super::state::App;
use super::update::update;
use super::view;

/// Shortest time between two frames.
pub const FRAME: Duration = Duration::from_millis(16);
/// Clock refresh while models run.
const TICK: Duration = Duration::from_millis(250);
/// How long quitting waits for cancelled models to report (so the log ends cleanly).
const QUIT_GRACE: Duration = Duration::from_secs(3);
/// Most queued driver messages handled before a frame is drawn.
const DRAIN: usize = 1024;

/// Runs until the app quits (a command, a key, or a signal).
pub async fn run<B: Backend>(
    terminal: &mut Terminal<B>,
    app: &mut App,
    engine: &mut Engine,
    rx: &mut UnboundedReceiver<LoopMsg>,
) -> io::Result<()>
where
    B::Error: Into<io::Error>,
{
    let started = Instant::now();
    let mut input = EventStream::new();
    let mut sigterm = signal(SignalKind::terminate())?;
    let mut sighup = signal(SignalKind::hangup())?;
    // In raw mode Ctrl+C and Ctrl+Z are keys, but while a shell runs in a workspace ("open
    // workspace") they are signals to the whole foreground group: versus must not die or stop.
    let _sigint = signal(SignalKind::interrupt())?;
    let _sigquit = signal(SignalKind::quit())?;
    let _sigtstp = signal(SignalKind::from_raw(
        nix::sys::signal::Signal::SIGTSTP as i32,
    ))?;
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut last_draw: Option<Instant> = None;
    let mut quitting: Option<Instant> = None;
    loop {
        app.now_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let due = last_draw.is_none_or(|t| t.elapsed() >= FRAME);
        if app.dirty && due {
            terminal
                .draw(|frame| view::draw(frame, app))
                .map_err(Into::into)?;
            app.dirty = false;
            last_draw = Some(Instant::now());
        }
        if let Some(since) = quitting
            && (!engine.running() || since.elapsed() >= QUIT_GRACE)
        {
            break;
        }
        let redraw_at = last_draw.map(|t| t + FRAME).unwrap_or_else(Instant::now);
        // A "press again" question ticks too, so it lapses on screen when its time is up.
        let ticking = app.running() || quitting.is_some() || app.confirm.is_some();
        let msgs: Vec<Msg> = tokio::select! {
            event = input.next() => match event {
                Some(Ok(event)) => translate(event).into_iter().collect(),
                Some(Err(err)) => return Err(err),
                None => vec![Msg::Terminate],
            },
            Some(event) = engine.next_event() => {
                let mut msgs: Vec<Msg> = engine.on_event(event).into_iter().map(Msg::Engine).collect();
                for _ in 0..DRAIN {
                    match engine.try_event() {
                        Some(more) => msgs.extend(engine.on_event(more).into_iter().map(Msg::Engine)),
                        None => break,
                    }
                }
                msgs
            }
            Some(LoopMsg::App(msg)) = rx.recv() => vec![Msg::Engine(msg)],
            _ = tick.tick(), if ticking => vec![Msg::Tick],
            () = tokio::time::sleep_until(redraw_at.into()), if app.dirty => Vec::new(),
            _ = sigterm.recv() => vec![Msg::Terminate],
            _ = sighup.recv() => vec![Msg::Terminate],
        };
        app.now_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        for msg in msgs {
            dispatch(app, engine, msg);
        }
        if let Some(shell) = engine.take_shell() {
            // crossterm's reader must stop before the shell reads the terminal.
            drop(input);
            let outcome = super::terminal::run_shell(&shell);
            input = EventStream::new();
            // A full redraw without asking the terminal where its cursor is (ratatui's
            // `clear` does, and that answer can be lost right after the shell): wipe the
            // screen and forget both frame buffers, so the next frame paints every cell.
            terminal.backend_mut().clear().map_err(Into::into)?;
            terminal.current_buffer_mut().reset();
            terminal.swap_buffers();
            let text = match outcome {
                Ok(_) => EngineMsg::Info(format!(
                    "back from the shell in {}'s workspace",
                    shell.shown
                )),
                Err(e) => EngineMsg::Error(shell.failed(&e)),
            };
            dispatch(app, engine, Msg::Engine(text));
            app.dirty = true;
        }
        if app.quit && quitting.is_none() {
            quitting = Some(Instant::now());
        }
    }
    Ok(())
}

/// Applies a message and carries out its effects (their immediate answers are applied too).
pub fn dispatch(app: &mut App, engine: &mut Engine, msg: Msg) {
    let mut queue = std::collections::VecDeque::from([msg]);
    while let Some(msg) = queue.pop_front() {
        for effect in update(app, msg) {
            queue.extend(engine.execute(effect).into_iter().map(Msg::Engine));
        }
    }
}

/// A terminal event as a message (mouse events are not used).
fn translate(event: Event) -> Option<Msg> {
    match event {
        Event::FocusGained => Some(Msg::Focus(true)),
        Event::FocusLost => Some(Msg::Focus(false)),
        Event::Key(key) => Some(Msg::Key(key)),
        Event::Mouse(mouse) => Some(Msg::Mouse(mouse)),
        Event::Paste(text) => Some(Msg::Paste(text)),
        Event::Resize(width, height) => Some(Msg::Resize { width, height }),
    }
}
