//! Owning the terminal: raw mode, alternate screen, bracketed paste, focus reporting, and
//! giving all of it back on every way out — normal exit (the guard's `Drop`), a panic (a hook
//! that restores first, then prints the panic), and SIGTERM/SIGHUP (the event loop turns them
//! into a quit).
//!
//! Restoring is idempotent, so the guard and the panic hook can both run it safely.

use std::io::{self, Stdout, Write};
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

use crossterm::event::{
    DisableBracketedPaste, DisableFocusChange, DisableMouseCapture, EnableBracketedPaste,
    EnableFocusChange, EnableMouseCapture, KeyboardEnhancementFlags, PopKeyboardEnhancementFlags,
    PushKeyboardEnhancementFlags,
};
use crossterm::terminal::{
    Clear, ClearType, EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use crossterm::{cursor, execute};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

/// Whether the terminal is currently ours (set on enter, cleared on restore).
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// Whether keyboard enhancement flags were pushed (they must be popped on restore).
static ENHANCED: AtomicBool = AtomicBool::new(false);
/// Whether the terminal supports them (asked once at start; a shell's return does not ask
/// again, since the answer could be lost there).
static SUPPORTED: AtomicBool = AtomicBool::new(false);
static HOOK: Once = Once::new();

/// The terminal type the interface draws on.
pub type Tui = Terminal<CrosstermBackend<Stdout>>;

/// Restores the terminal when dropped.
#[derive(Debug)]
pub struct TerminalGuard(());

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
    }
}

/// Takes over the terminal. Shift+Enter is told apart from Enter where the terminal supports
/// the keyboard enhancement protocol (kitty, foot, WezTerm...); elsewhere Ctrl+J and
/// Alt+Enter insert a newline.
pub fn enter() -> io::Result<(Tui, TerminalGuard)> {
    install_panic_hook();
    enable_raw_mode()?;
    ACTIVE.store(true, Ordering::SeqCst);
    let guard = TerminalGuard(());
    let mut stdout = io::stdout();
    take_screen(&mut stdout)?;
    if std::env::var_os("VERSUS_NO_KEYBOARD_ENHANCEMENT").is_none()
        && matches!(
            crossterm::terminal::supports_keyboard_enhancement(),
            Ok(true)
        )
    {
        execute!(
            stdout,
            PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
        )?;
        ENHANCED.store(true, Ordering::SeqCst);
        SUPPORTED.store(true, Ordering::SeqCst);
    }
    let terminal = Terminal::new(CrosstermBackend::new(stdout))?;
    Ok((terminal, guard))
}

/// Whether the interface takes the mouse (see [`set_mouse`]).
static MOUSE: AtomicBool = AtomicBool::new(false);

/// Takes the mouse (wheel and click events come to the interface; most terminals still select
/// text with Shift held) or gives it back to the terminal. Kept across a suspended shell.
pub fn set_mouse(on: bool) {
    MOUSE.store(on, Ordering::SeqCst);
    if !ACTIVE.load(Ordering::SeqCst) {
        return;
    }
    let mut stdout = io::stdout();
    let _ = if on {
        execute!(stdout, EnableMouseCapture)
    } else {
        execute!(stdout, DisableMouseCapture)
    };
}

/// The alternate screen, wiped, with bracketed paste and focus reporting on. Entering the
/// alternate screen does not clear it when the terminal is already there (a versus killed
/// with SIGKILL never left it), and the first frame only paints cells that are not blank, so
/// without the wipe the old screen's characters would show through the new one.
fn take_screen(out: &mut impl Write) -> io::Result<()> {
    execute!(
        out,
        EnterAlternateScreen,
        Clear(ClearType::All),
        cursor::MoveTo(0, 0),
        EnableBracketedPaste,
        EnableFocusChange
    )?;
    if MOUSE.load(Ordering::SeqCst) {
        execute!(out, EnableMouseCapture)?;
    }
    Ok(())
}

/// Gives the terminal back (best effort; safe to call twice).
pub fn restore() {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return;
    }
    let mut stdout = io::stdout();
    if ENHANCED.swap(false, Ordering::SeqCst) {
        let _ = execute!(stdout, PopKeyboardEnhancementFlags);
    }
    let _ = execute!(
        stdout,
        DisableMouseCapture,
        DisableFocusChange,
        DisableBracketedPaste,
        LeaveAlternateScreen,
        cursor::Show
    );
    let _ = disable_raw_mode();
    let _ = stdout.flush();
}

/// Writes a notification's bytes (the bell or an OSC string) to the terminal, only while the
/// interface owns it: they move no cursor and draw no cell, so the frames stay as they are.
pub fn notify(bytes: &str) {
    if !ACTIVE.load(Ordering::SeqCst) {
        return;
    }
    let mut stdout = io::stdout();
    let _ = stdout.write_all(bytes.as_bytes());
    let _ = stdout.flush();
}

/// Runs the review's shell (`o`) in a model's workspace, inside that model's sandbox
/// ([`super::engine::ShellRequest::command`]), with the terminal given back to it, then takes
/// the terminal over again. The caller redraws everything afterwards.
pub fn run_shell(request: &super::engine::ShellRequest) -> io::Result<std::process::ExitStatus> {
    let command = request.command().map_err(io::Error::other);
    restore();
    let status = command.and_then(|mut command| {
        let mut out = io::stderr();
        let _ = writeln!(out, "{}", request.banner());
        command.status()
    });
    resume()?;
    status
}

/// Takes the terminal over again after [`run_shell`].
fn resume() -> io::Result<()> {
    enable_raw_mode()?;
    ACTIVE.store(true, Ordering::SeqCst);
    let mut stdout = io::stdout();
    take_screen(&mut stdout)?;
    if SUPPORTED.load(Ordering::SeqCst) {
        execute!(
            stdout,
            PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
        )?;
        ENHANCED.store(true, Ordering::SeqCst);
    }
    Ok(())
}

/// Restores the terminal before the panic message is printed, so it is readable.
fn install_panic_hook() {
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            previous(info);
        }));
    });
}
