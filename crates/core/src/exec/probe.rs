//! Whether the sandbox can start on this machine, checked once per program and process.
//!
//! The check starts bubblewrap with the very namespace and privilege flags every command gets
//! (`bwrap::isolation`) and reads `/proc/self/status` inside: the sandbox counts as working
//! only if it holds no capability at all (effective, permitted, bounding, inheritable,
//! ambient: all zero) and `NoNewPrivs` is set. Run as root, a user namespace would otherwise
//! hand the command every capability over its own mounts; a bubblewrap that cannot drop them
//! is no boundary. Any failure (no bwrap, user namespaces disabled, capabilities kept, not
//! Linux) becomes one sentence that says why, with bubblewrap's own message, and what to do;
//! commands are then refused, never run unconfined. A start that fails is tried once more after
//! a short pause, so one hiccup of a loaded machine does not refuse a whole run.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// How to get a working sandbox, or to opt out knowingly.
pub(crate) const REMEDY: &str = "install bubblewrap (Debian/Ubuntu: `apt install bubblewrap`, \
    Fedora: `dnf install bubblewrap`, Arch: `pacman -S bubblewrap`) and make sure unprivileged \
    user namespaces are enabled (`sysctl kernel.unprivileged_userns_clone=1`, or on Ubuntu \
    24.04+ an AppArmor profile for bwrap), or run commands unconfined at your own risk with \
    `sandbox = \"off\"` under `[sandbox]` in ~/.config/versus/config.toml; see docs/sandbox.md";

/// The pause before the second try.
const RETRY_AFTER: Duration = Duration::from_millis(500);

/// The capability sets of `/proc/self/status` that must all be empty.
const CAPABILITY_SETS: &[&str] = &["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"];

static RESULTS: OnceLock<Mutex<HashMap<PathBuf, Result<(), String>>>> = OnceLock::new();

/// `Ok` when `program` can set up the sandbox here; otherwise why not.
pub(crate) fn check(program: &Path) -> Result<(), String> {
    let results = RESULTS.get_or_init(|| Mutex::new(HashMap::new()));
    if let Ok(cache) = results.lock()
        && let Some(known) = cache.get(program)
    {
        return known.clone();
    }
    let result = match run_check(program) {
        Err(Failure::Retry(first)) => {
            tracing::info!(%first, "the sandbox probe failed; trying once more");
            std::thread::sleep(RETRY_AFTER);
            run_check(program).map_err(|again| {
                let again = again.reason();
                if again == first {
                    format!("{again} (tried twice)")
                } else {
                    format!("{again} (tried twice; the first time: {first})")
                }
            })
        }
        other => other.map_err(Failure::reason),
    };
    if let Ok(mut cache) = results.lock() {
        cache.insert(program.to_path_buf(), result.clone());
    }
    result
}

/// Why one probe failed.
enum Failure {
    /// Worth a second try (bubblewrap ran and failed, or could not be started).
    Retry(String),
    /// Not (bubblewrap is not there).
    Final(String),
}

impl Failure {
    fn reason(self) -> String {
        match self {
            Self::Retry(r) | Self::Final(r) => r,
        }
    }
}

#[cfg(target_os = "linux")]
fn run_check(program: &Path) -> Result<(), Failure> {
    let mut args = super::bwrap::isolation(false);
    for arg in [
        "--ro-bind",
        "/",
        "/",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--",
    ] {
        args.push(arg.into());
    }
    args.extend(super::bwrap::inner_command(
        super::sandbox::DEFAULT_MAX_PROCESSES,
        "cat /proc/self/status",
    ));
    let output = Command::new(program)
        .args(args)
        .env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output();
    match output {
        Ok(out) if out.status.success() => {
            confined(&String::from_utf8_lossy(&out.stdout)).map_err(|why| {
                Failure::Retry(format!(
                    "bubblewrap (`{}`) started a sandbox that {why}",
                    program.display()
                ))
            })
        }
        Ok(out) => Err(Failure::Retry(format!(
            "bubblewrap (`{}`) failed to set up namespaces: {}",
            program.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(Failure::Final(format!(
            "bubblewrap (`{}`) is not installed",
            program.display()
        ))),
        Err(e) => Err(Failure::Retry(format!(
            "bubblewrap (`{}`) could not be started: {e}",
            program.display()
        ))),
    }
}

/// `Ok` when a `/proc/self/status` read inside the sandbox shows no capability and no way to
/// gain privileges; otherwise what is wrong.
fn confined(status: &str) -> Result<(), String> {
    let field = |name: &str| {
        status.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            (key == name).then(|| value.trim().to_string())
        })
    };
    for set in CAPABILITY_SETS {
        match field(set) {
            Some(hex) if u64::from_str_radix(&hex, 16) == Ok(0) => {}
            Some(hex) => return Err(format!("keeps capabilities ({set}: {hex})")),
            // Older kernels lack the ambient set; every other set is always there.
            None if *set == "CapAmb" => {}
            None => return Err(format!("shows no {set} in /proc/self/status")),
        }
    }
    match field("NoNewPrivs").as_deref() {
        Some("1") => Ok(()),
        Some(other) => Err(format!("allows new privileges (NoNewPrivs: {other})")),
        None => Err("shows no NoNewPrivs in /proc/self/status".to_string()),
    }
}

#[cfg(not(target_os = "linux"))]
fn run_check(_program: &Path) -> Result<(), Failure> {
    Err(Failure::Final(
        "the command sandbox is only built for Linux so far (the macOS design is in \
         docs/sandbox.md)"
            .to_string(),
    ))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_program_says_it_is_not_installed() {
        let err = check(Path::new("/nonexistent/bwrap")).unwrap_err();
        assert!(err.contains("is not installed"), "{err}");
        assert!(!err.contains("tried twice"), "{err}");
    }

    const CONFINED: &str = "Name:\tcat\nCapInh:\t0000000000000000\nCapPrm:\t0000000000000000\n\
        CapEff:\t0000000000000000\nCapBnd:\t0000000000000000\nCapAmb:\t0000000000000000\n\
        NoNewPrivs:\t1\n";

    #[test]
    fn only_a_sandbox_without_capabilities_counts() {
        assert_eq!(confined(CONFINED), Ok(()));
        let root = CONFINED.replace("CapEff:\t0000000000000000", "CapEff:\t000001ffffffffff");
        let err = confined(&root).unwrap_err();
        assert!(err.contains("CapEff: 000001ffffffffff"), "{err}");
        let bounding = CONFINED.replace("CapBnd:\t0000000000000000", "CapBnd:\t0000000000000400");
        assert!(confined(&bounding).unwrap_err().contains("CapBnd"));
        let privs = CONFINED.replace("NoNewPrivs:\t1", "NoNewPrivs:\t0");
        assert!(confined(&privs).unwrap_err().contains("NoNewPrivs: 0"));
        assert!(confined("Name:\tcat\n").is_err());
    }

    /// A stand-in for bubblewrap: a script that fails (with a message of its own) as many
    /// times as `failures`, counting its runs in a file, then prints `status`.
    fn fake_bwrap(dir: &Path, failures: u32, status: &str) -> PathBuf {
        let program = dir.join("bwrap");
        let count = dir.join("runs");
        let script = format!(
            "#!/bin/sh\nn=$(cat '{count}' 2>/dev/null || echo 0)\nn=$((n+1))\necho $n > '{count}'\n\
             if [ $n -le {failures} ]; then echo \"bwrap: loaded machine, try $n\" >&2; exit 1; fi\n\
             printf '%s' '{status}'\n",
            count = count.display(),
        );
        std::fs::write(&program, script).unwrap();
        std::fs::set_permissions(
            &program,
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        program
    }

    fn runs(dir: &Path) -> String {
        std::fs::read_to_string(dir.join("runs"))
            .unwrap()
            .trim()
            .to_string()
    }

    #[test]
    fn a_probe_that_fails_once_is_tried_again_and_passes() {
        let dir = tempfile::tempdir().unwrap();
        let program = fake_bwrap(dir.path(), 1, CONFINED);
        assert_eq!(check(&program), Ok(()));
        assert_eq!(runs(dir.path()), "2");
        // Known now: no third start.
        assert_eq!(check(&program), Ok(()));
        assert_eq!(runs(dir.path()), "2");
    }

    #[test]
    fn a_probe_that_fails_twice_refuses_with_bubblewraps_own_message() {
        let dir = tempfile::tempdir().unwrap();
        let program = fake_bwrap(dir.path(), 2, CONFINED);
        let err = check(&program).unwrap_err();
        assert_eq!(runs(dir.path()), "2");
        assert!(err.contains("bwrap: loaded machine, try 2"), "{err}");
        assert!(err.contains("bwrap: loaded machine, try 1"), "{err}");
        assert!(err.contains("tried twice"), "{err}");
    }

    #[test]
    fn a_sandbox_that_keeps_capabilities_is_unavailable() {
        let dir = tempfile::tempdir().unwrap();
        let kept = CONFINED.replace("CapPrm:\t0000000000000000", "CapPrm:\t000001ffffffffff");
        let program = fake_bwrap(dir.path(), 0, &kept);
        let err = check(&program).unwrap_err();
        assert!(
            err.contains("keeps capabilities (CapPrm: 000001ffffffffff)"),
            "{err}"
        );
    }

    #[test]
    fn the_real_bubblewrap_here_drops_every_capability() {
        match check(Path::new("bwrap")) {
            Ok(()) => {}
            // Not installed here: nothing to prove.
            Err(err) => assert!(err.contains("is not installed"), "{err}"),
        }
    }
}
