//! Owning the terminal: raw mode, alternate screen, bracketed paste, and giving all of it back
//! on every way out — normal exit (the guard's `Drop`), a panic (a hook that restores first,
//! then prints the panic), and SIGTERM/SIGHUP (the event loop turns them into a quit).
//!
//! Restoring is idempotent, so the guard and the panic hook can both run it safely.

use std::io::{self, Stdout, Write};
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

use crossterm::event::{
    DisableBracketedPaste, EnableBracketedPaste, KeyboardEnhancementFlags,
    PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags,
};
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use crossterm::{cursor, execute};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

/// Whether the terminal is currently ours (set on enter, cleared on restore).
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// Whether keyboard enhancement flags were pushed (they must be popped on restore).
static ENHANCED: AtomicBool = AtomicBool::new(false);
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
    execute!(stdout, EnterAlternateScreen, EnableBracketedPaste)?;
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
    }
    let terminal = Terminal::new(CrosstermBackend::new(stdout))?;
    Ok((terminal, guard))
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
        DisableBracketedPaste,
        LeaveAlternateScreen,
        cursor::Show
    );
    let _ = disable_raw_mode();
    let _ = stdout.flush();
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
