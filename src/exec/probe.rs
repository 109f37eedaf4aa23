//! Whether the sandbox can start on this machine, checked once per program and process.
//!
//! The check runs bubblewrap with the same namespaces a command gets and `true` inside. Any
//! failure (no bwrap, user namespaces disabled, not Linux) becomes one sentence that says why
//! and what to do; commands are then refused, never run unconfined.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};

/// How to get a working sandbox, or to opt out knowingly.
pub(crate) const REMEDY: &str = "install bubblewrap (Debian/Ubuntu: `apt install bubblewrap`, \
    Fedora: `dnf install bubblewrap`, Arch: `pacman -S bubblewrap`) and make sure unprivileged \
    user namespaces are enabled (`sysctl kernel.unprivileged_userns_clone=1`, or on Ubuntu \
    24.04+ an AppArmor profile for bwrap), or run commands unconfined at your own risk with \
    `sandbox = \"off\"` under `[sandbox]` in ~/.config/versus/config.toml; see docs/sandbox.md";

static RESULTS: OnceLock<Mutex<HashMap<PathBuf, Result<(), String>>>> = OnceLock::new();

/// `Ok` when `program` can set up the sandbox here; otherwise why not.
pub(crate) fn check(program: &Path) -> Result<(), String> {
    let results = RESULTS.get_or_init(|| Mutex::new(HashMap::new()));
    if let Ok(cache) = results.lock()
        && let Some(known) = cache.get(program)
    {
        return known.clone();
    }
    let result = run_check(program);
    if let Ok(mut cache) = results.lock() {
        cache.insert(program.to_path_buf(), result.clone());
    }
    result
}

#[cfg(target_os = "linux")]
fn run_check(program: &Path) -> Result<(), String> {
    let output = Command::new(program)
        .args([
            "--unshare-user",
            "--unshare-pid",
            "--unshare-net",
            "--unshare-ipc",
            "--die-with-parent",
            "--ro-bind",
            "/",
            "/",
            "--proc",
            "/proc",
            "--dev",
            "/dev",
            "--",
            "true",
        ])
        .env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output();
    match output {
        Ok(out) if out.status.success() => Ok(()),
        Ok(out) => Err(format!(
            "bubblewrap (`{}`) failed to set up namespaces: {}",
            program.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(format!(
            "bubblewrap (`{}`) is not installed",
            program.display()
        )),
        Err(e) => Err(format!(
            "bubblewrap (`{}`) could not be started: {e}",
            program.display()
        )),
    }
}

#[cfg(not(target_os = "linux"))]
fn run_check(_program: &Path) -> Result<(), String> {
    Err(
        "the command sandbox is only built for Linux so far (the macOS design is in \
         docs/sandbox.md)"
            .to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_program_says_it_is_not_installed() {
        let err = check(Path::new("/nonexistent/bwrap")).unwrap_err();
        assert!(err.contains("is not installed"), "{err}");
    }
}
