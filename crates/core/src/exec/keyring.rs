//! No kernel key of the user's session reaches a command.
//!
//! A process's session keyring is inherited by every child, across user namespaces:
//! bubblewrap gives the sandbox a new user namespace (so a new user keyring) but keeps the
//! session keyring, and a key in it (a Kerberos ticket, `cifscreds`, a token a tool cached with
//! `keyctl`) is readable from inside with `keyctl read`. So versus joins a new, empty,
//! anonymous session keyring first thing at start: every command it runs inherits that one.
//! versus itself reads no key from the kernel's keyrings.

/// `KEYCTL_JOIN_SESSION_KEYRING` from `<linux/keyctl.h>` (not in the libc crate).
#[cfg(target_os = "linux")]
const KEYCTL_JOIN_SESSION_KEYRING: nix::libc::c_long = 1;

/// Replaces this process's session keyring with a new anonymous one, so no command inherits
/// the user's. Call it first thing in `main`. A kernel without keyrings (or a filter that
/// forbids the call) has nothing to leak through them: failure is ignored.
pub fn leave_session_keyring() {
    #[cfg(target_os = "linux")]
    join_anonymous_session_keyring();
}

#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn join_anonymous_session_keyring() {
    // SAFETY: keyctl(KEYCTL_JOIN_SESSION_KEYRING, NULL) takes no pointer the kernel reads
    // (a NULL name means "a new anonymous keyring") and touches no memory of this process; it
    // only replaces the calling thread's session keyring (in a process with one thread, as at
    // start, the process's). No wrapper exists in nix or std.
    let result = unsafe {
        nix::libc::syscall(
            nix::libc::SYS_keyctl,
            KEYCTL_JOIN_SESSION_KEYRING,
            std::ptr::null::<nix::libc::c_char>(),
        )
    };
    if result < 0 {
        tracing::debug!(
            error = %std::io::Error::last_os_error(),
            "no new session keyring"
        );
    }
}
