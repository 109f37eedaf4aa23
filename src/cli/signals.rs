//! The signals that stop a headless command: Ctrl+C (SIGINT), SIGTERM and SIGHUP (the terminal
//! went away). Each one cancels the run the same way, so models' process trees are killed,
//! workspaces removed and the session log closed whichever way the user (or their system)
//! stops versus.

use std::fmt;

use tokio::signal::unix::{Signal, SignalKind, signal};

/// Which stop signal arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopSignal {
    /// Ctrl+C.
    Interrupt,
    /// SIGTERM.
    Terminate,
    /// SIGHUP.
    Hangup,
}

impl fmt::Display for StopSignal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Interrupt => "interrupted",
            Self::Terminate => "terminated (SIGTERM)",
            Self::Hangup => "hung up (SIGHUP)",
        })
    }
}

/// Listeners for the three stop signals, installed once.
pub struct StopSignals {
    interrupt: Signal,
    terminate: Signal,
    hangup: Signal,
}

impl StopSignals {
    /// Installs the listeners (from then on these signals no longer kill versus outright).
    pub fn new() -> std::io::Result<Self> {
        Ok(Self {
            interrupt: signal(SignalKind::interrupt())?,
            terminate: signal(SignalKind::terminate())?,
            hangup: signal(SignalKind::hangup())?,
        })
    }

    /// Waits for the next stop signal.
    pub async fn next(&mut self) -> StopSignal {
        tokio::select! {
            Some(()) = self.interrupt.recv() => StopSignal::Interrupt,
            Some(()) = self.terminate.recv() => StopSignal::Terminate,
            Some(()) = self.hangup.recv() => StopSignal::Hangup,
            else => std::future::pending().await,
        }
    }
}
