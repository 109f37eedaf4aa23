//! A long-lived process in a workspace's sandbox: an MCP server that acts on files runs once
//! per model, with that model's workspace as its working folder, under the same bubblewrap
//! arguments, environment allowlist, process group and pids limit as the model's bash calls
//! ([`super::command::prepare`]), so whatever it writes is that model's proposal and nothing
//! else it does reaches the user's tree.
//!
//! Unlike [`super::run`], nothing here waits for the end: the caller talks to the process over
//! its stdin and stdout and ends it with [`Service::stop`]. Dropping a [`Service`] SIGKILLs its
//! whole process group (in the sandbox, its PID namespace ends with it), so a run that is
//! aborted leaves nothing behind.

use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use nix::sys::signal::Signal;
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};

use super::command::{ExecError, prepare};
use super::group::Group;
use super::limit;
use super::sandbox::Sandbox;

/// How long [`Service::stop`] waits after SIGTERM before SIGKILL.
const STOP_GRACE: Duration = Duration::from_millis(500);

/// A started long-lived process with piped stdin, stdout and stderr.
pub struct Service {
    child: Child,
    group: Group,
    /// Its pids cgroup, removed after the process ended.
    limit: Option<limit::Cgroup>,
    /// Written by the caller (requests).
    pub stdin: Option<ChildStdin>,
    /// Read by the caller (responses).
    pub stdout: Option<ChildStdout>,
    /// Read by the caller (the server's log, kept for error messages).
    pub stderr: Option<ChildStderr>,
}

/// Starts `bash -c script` in `cwd` under `sandbox`, with `env` added to the allowlisted
/// environment (values the user configured for this process; never shown in arguments, so
/// they do not appear in the host's process list).
pub fn start_service(
    sandbox: &Sandbox,
    cwd: &Path,
    script: &str,
    env: &[(String, String)],
) -> Result<Service, ExecError> {
    let prepared = prepare(sandbox, cwd, script)?;
    let mut command = Command::from(prepared.command);
    for (name, value) in env {
        command.env(name, value);
    }
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = command.spawn()?;
    let pid = child
        .id()
        .and_then(|id| i32::try_from(id).ok())
        .ok_or_else(|| std::io::Error::other("the started process has no process id"))?;
    Ok(Service {
        stdin: child.stdin.take(),
        stdout: child.stdout.take(),
        stderr: child.stderr.take(),
        child,
        group: Group::new(pid),
        limit: prepared.limit,
    })
}

impl Service {
    /// The exit status, if the process has ended.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Ends the process and everything it started: SIGTERM to the group, SIGKILL after a
    /// short grace, then waits (bounded) until the group is gone and removes its cgroup.
    pub async fn stop(mut self) {
        drop(self.stdin.take());
        self.group.signal(Signal::SIGTERM);
        let _ = tokio::time::timeout(STOP_GRACE, self.child.wait()).await;
        self.group.kill_and_disarm();
        let _ = tokio::time::timeout(Duration::from_secs(1), self.child.wait()).await;
        self.group.wait_until_gone(Duration::from_secs(1)).await;
        if let Some(cgroup) = self.limit.take() {
            cgroup.end(Duration::from_secs(1)).await;
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    #[tokio::test]
    async fn a_service_talks_over_its_pipes_and_stops_with_its_children() {
        let dir = tempfile::tempdir().unwrap();
        let sandbox = Sandbox::new(
            &crate::exec::SandboxSettings {
                sandbox: crate::exec::SandboxMode::Off,
                ..Default::default()
            },
            crate::exec::WorkspaceDirs::tree_only(dir.path()),
        );
        let mut service = start_service(
            &sandbox,
            dir.path(),
            "sleep 60 & echo \"$!\"; while read -r line; do echo \"got $line $GREETING\"; done",
            &[("GREETING".into(), "hello".into())],
        )
        .unwrap();
        let mut out = BufReader::new(service.stdout.take().unwrap()).lines();
        let child: i32 = out.next_line().await.unwrap().unwrap().parse().unwrap();
        let mut stdin = service.stdin.take().unwrap();
        stdin.write_all(b"ping\n").await.unwrap();
        assert_eq!(
            out.next_line().await.unwrap().unwrap(),
            "got ping hello",
            "the configured environment reaches the process"
        );
        service.stdin = Some(stdin);
        assert!(service.exited().is_none());
        service.stop().await;
        let alive = nix::sys::signal::kill(nix::unistd::Pid::from_raw(child), None).is_ok()
            && !std::fs::read_to_string(format!("/proc/{child}/stat"))
                .unwrap_or_default()
                .contains(") Z ");
        assert!(!alive, "the background child outlived stop()");
    }
}
