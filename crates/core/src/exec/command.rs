//! Running one command (`bash -c`) for a model or a recipe: in the workspace's sandbox, in its
//! own process group, with a timeout, cancellation and a clean end.
//!
//! stdout and stderr are the two ends of one pipe, so their lines arrive in the order the
//! command wrote them. The pipe is created close-on-exec (so a process that other models spawn
//! at the same moment cannot inherit it and keep it open), and versus's copies of the write end
//! are dropped right after the spawn, so end-of-file means "every process holding the output
//! has gone".
//!
//! The started process (bubblewrap, or bash when the sandbox is off) leads a new process
//! group; every signal goes to the whole group:
//! - timeout or cancellation: SIGTERM, then SIGKILL 2 s later (sooner if the group is already
//!   empty), then output is read for at most 2 s more;
//! - normal end: as soon as the command exits, SIGKILL to the group;
//! - the call's future dropped (the run was aborted): a guard sends SIGKILL to the group.
//!
//! In the sandbox the command is in its own PID namespace, so when it ends (or bubblewrap is
//! killed, or versus itself dies) every process it started dies with it, `setsid` or not.
//! Unconfined, a process that left the group can survive (unless the command had a pids
//! cgroup, `limit.rs`: everything left in it is killed at the end); reading its output then
//! stops 2 s after the shell ended so it cannot stall the call.
//!
//! Nothing but stdin, stdout and stderr reaches the command (`descriptors.rs`).

use std::io;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use nix::sys::signal::Signal;
use tokio::io::AsyncReadExt;
use tokio::process::{Child, Command};
use tokio::time::{Instant, sleep_until};
use tokio_util::sync::CancellationToken;

use super::bwrap::{self, EPHEMERAL_HOME, Host};
use super::env;
use super::group::Group;
use super::probe;
use super::sandbox::{Sandbox, SandboxKind};
use super::{descriptors, limit};

/// Time between SIGTERM and SIGKILL.
pub(crate) const KILL_GRACE: Duration = Duration::from_secs(2);
/// Time output is still read after the group was killed.
pub(crate) const DRAIN_AFTER_KILL: Duration = Duration::from_secs(2);

/// Time the call waits, after the final SIGKILL, for the group's members to be gone.
const REAP_WAIT: Duration = Duration::from_secs(1);

/// What to run.
pub struct CommandSpec<'a> {
    /// The command line given to `bash -c`.
    pub script: &'a str,
    /// Working directory, inside the sandbox's tree.
    pub cwd: &'a Path,
    /// Where and how the command may run.
    pub sandbox: &'a Sandbox,
    /// Time after which the group is stopped.
    pub timeout: Duration,
    /// Stops the group when fired.
    pub cancel: &'a CancellationToken,
}

/// Why a command did not run at all.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// The sandbox refuses commands here (overlay mode).
    #[error("{0}")]
    Refused(String),
    /// The sandbox cannot start on this machine; commands are refused rather than run
    /// unconfined.
    #[error(
        "the command sandbox cannot start: {reason}. versus does not run model commands \
         unconfined unless told to: {remedy}"
    )]
    Unavailable {
        /// What failed.
        reason: String,
        /// What to do about it.
        remedy: &'static str,
    },
    /// The process could not be started.
    #[error("could not start the command: {0}")]
    Spawn(#[from] io::Error),
}

/// How the command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// The shell exited with this code.
    Exited(i32),
    /// The shell was killed by this signal (not by versus).
    Signaled(i32),
    /// versus stopped it at the timeout.
    TimedOut,
    /// versus stopped it because the call was cancelled.
    Cancelled,
}

/// The end of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Finished {
    /// How the command ended.
    pub ending: Ending,
    /// Reading stopped while some process outside the group still held the output open.
    pub output_abandoned: bool,
}

enum Phase {
    Running,
    Terminating { kill_at: Instant },
    Draining { until: Instant },
}

/// Runs the command, handing every chunk of merged output to `on_output`. An `Err` means it
/// did not start at all (refused, sandbox unavailable, spawn failure).
pub async fn run(
    job: CommandSpec<'_>,
    mut on_output: impl FnMut(&[u8]),
) -> Result<Finished, ExecError> {
    let (mut child, mut output, mut group, limit) = spawn(&job)?;
    let deadline = Instant::now() + job.timeout;
    let mut buf = vec![0u8; 64 * 1024];
    let mut status: Option<ExitStatus> = None;
    let mut eof = false;
    let mut stopped: Option<Ending> = None;
    let mut phase = Phase::Running;
    let mut output_abandoned = false;

    loop {
        if status.is_some() && eof {
            match phase {
                Phase::Terminating { .. } if group.has_live_members() => {}
                _ => break,
            }
        }
        match phase {
            Phase::Running => tokio::select! {
                read = output.read(&mut buf), if !eof => {
                    eof = consume(read, &buf, &mut on_output);
                }
                exited = child.wait(), if status.is_none() => {
                    status = Some(exited?);
                    group.signal(Signal::SIGKILL);
                    phase = Phase::Draining { until: Instant::now() + DRAIN_AFTER_KILL };
                }
                () = sleep_until(deadline) => {
                    stopped = Some(Ending::TimedOut);
                    group.signal(Signal::SIGTERM);
                    phase = Phase::Terminating { kill_at: Instant::now() + KILL_GRACE };
                }
                () = job.cancel.cancelled() => {
                    stopped = Some(Ending::Cancelled);
                    group.signal(Signal::SIGTERM);
                    phase = Phase::Terminating { kill_at: Instant::now() + KILL_GRACE };
                }
            },
            Phase::Terminating { kill_at } => tokio::select! {
                read = output.read(&mut buf), if !eof => {
                    eof = consume(read, &buf, &mut on_output);
                }
                exited = child.wait(), if status.is_none() => {
                    status = Some(exited?);
                }
                () = sleep_until(kill_at) => {
                    group.signal(Signal::SIGKILL);
                    phase = Phase::Draining { until: Instant::now() + DRAIN_AFTER_KILL };
                }
            },
            Phase::Draining { until } => tokio::select! {
                read = output.read(&mut buf), if !eof => {
                    eof = consume(read, &buf, &mut on_output);
                }
                exited = child.wait(), if status.is_none() => {
                    status = Some(exited?);
                }
                () = sleep_until(until), if !eof => {
                    output_abandoned = true;
                    break;
                }
                () = job.cancel.cancelled(), if !eof && stopped.is_none() => {
                    output_abandoned = true;
                    break;
                }
            },
        }
    }
    group.kill_and_disarm();
    let status = match status {
        Some(s) => s,
        // The shell got SIGKILL above; reaping it cannot take long.
        None => child.wait().await?,
    };
    group.wait_until_gone(REAP_WAIT).await;
    // Its cgroup goes too, with anything left in it (unconfined, a process that left the
    // group; in the sandbox the PID namespace has ended everything already).
    if let Some(cgroup) = limit {
        cgroup.end(REAP_WAIT).await;
    }
    let ending = stopped.unwrap_or_else(|| ending_of(status));
    Ok(Finished {
        ending,
        output_abandoned,
    })
}

/// Handles one read; returns whether the output is finished.
fn consume(read: io::Result<usize>, buf: &[u8], on_output: &mut impl FnMut(&[u8])) -> bool {
    match read {
        Ok(0) | Err(_) => true,
        Ok(n) => {
            on_output(&buf[..n]);
            false
        }
    }
}

fn ending_of(status: ExitStatus) -> Ending {
    match (status.code(), status.signal()) {
        (Some(code), _) => Ending::Exited(code),
        (None, Some(signal)) => Ending::Signaled(signal),
        (None, None) => Ending::Exited(-1),
    }
}

/// A command ready to start: the program with its arguments, working folder and environment,
/// built by the same rules for [`run`] and [`super::interactive`].
pub(crate) struct Prepared {
    /// bubblewrap (or bash when the sandbox is off) with everything set but stdio; started
    /// through the cgroup's shim when there is one.
    pub(crate) command: std::process::Command,
    /// The command's pids cgroup, removed when this is dropped (after the command ended).
    pub(crate) limit: Option<limit::Cgroup>,
}

/// Builds the command that runs `bash -c script` in `cwd` under `sandbox`, or says why it may
/// not run at all (refused, sandbox unavailable).
pub(crate) fn prepare(sandbox: &Sandbox, cwd: &Path, script: &str) -> Result<Prepared, ExecError> {
    let (command, settings) = match &sandbox.kind {
        SandboxKind::Refused(reason) => return Err(ExecError::Refused(reason.clone())),
        SandboxKind::Confined { settings, dirs } => {
            probe::check(&settings.program).map_err(|reason| ExecError::Unavailable {
                reason,
                remedy: probe::REMEDY,
            })?;
            let host = Host::current();
            let home = dirs.home.clone().unwrap_or_else(|| EPHEMERAL_HOME.into());
            let tmp = dirs.tmp.clone().unwrap_or_else(|| "/tmp".into());
            let mut command = std::process::Command::new(&settings.program);
            command.args(bwrap::arguments(settings, dirs, &host, cwd, script));
            command.env_clear().envs(env::command_env(
                &settings.env,
                &home,
                &tmp,
                host.home.as_deref(),
            ));
            (command, settings)
        }
        SandboxKind::Unconfined { settings, dirs } => {
            let temp = std::env::temp_dir();
            let home = dirs.home.clone().unwrap_or_else(|| temp.clone());
            let tmp = dirs.tmp.clone().unwrap_or(temp);
            let mut command = std::process::Command::new("bash");
            command.arg("-c").arg(script).current_dir(cwd);
            command.env_clear().envs(env::command_env(
                &settings.env,
                &home,
                &tmp,
                env::host_home().as_deref(),
            ));
            (command, settings)
        }
    };
    // Nothing but stdio may reach the command: a descriptor versus inherited, or one a library
    // opened without close-on-exec, would be a way out of the sandbox.
    descriptors::close_on_exec_all();
    if settings.max_processes == 0 {
        return Ok(Prepared {
            command,
            limit: None,
        });
    }
    let limit = limit::cgroup(settings.max_processes);
    match (&limit, sandbox.is_unconfined()) {
        (Some(_), _) => {}
        (None, false) if nix::unistd::geteuid().is_root() => limit::warn_unlimited(
            "versus runs as root, where the kernel does not enforce RLIMIT_NPROC, and no pids \
             cgroup could be made (see docs/config.md, max_processes)",
        ),
        (None, false) => {}
        (None, true) => limit::warn_unlimited(
            "the sandbox is off and no pids cgroup could be made (see docs/config.md, \
             max_processes)",
        ),
    }
    let command = match &limit {
        Some(cgroup) => cgroup.wrap(&command),
        None => command,
    };
    Ok(Prepared { command, limit })
}

/// A started command: the process, the read end of its output, its group and its cgroup.
type Started = (
    Child,
    tokio::net::unix::pipe::Receiver,
    Group,
    Option<limit::Cgroup>,
);

fn spawn(job: &CommandSpec<'_>) -> Result<Started, ExecError> {
    let prepared = prepare(job.sandbox, job.cwd, job.script)?;
    let mut command = Command::from(prepared.command);
    let limit = prepared.limit;
    let (sender, receiver) = tokio::net::unix::pipe::pipe()?;
    let stdout = sender.into_blocking_fd()?;
    let stderr = stdout.try_clone()?;
    command
        .stdin(Stdio::null())
        .stdout(Stdio::from(stdout))
        .stderr(Stdio::from(stderr))
        .process_group(0);
    let child = command.spawn()?;
    // The command holds our copies of the write end; without them end-of-file can arrive.
    drop(command);
    let pid = child
        .id()
        .and_then(|id| i32::try_from(id).ok())
        .ok_or_else(|| io::Error::other("the started command has no process id"))?;
    Ok((child, receiver, Group::new(pid), limit))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    async fn run_collect(command: &str, timeout: Duration) -> (Finished, String) {
        let dir = tempfile::tempdir().unwrap();
        let cancel = CancellationToken::new();
        let mut out = Vec::new();
        let sandbox = Sandbox::new(
            &crate::exec::SandboxSettings {
                sandbox: crate::exec::SandboxMode::Off,
                ..Default::default()
            },
            crate::exec::WorkspaceDirs::tree_only(dir.path()),
        );
        let finished = run(
            CommandSpec {
                script: command,
                cwd: dir.path(),
                sandbox: &sandbox,
                timeout,
                cancel: &cancel,
            },
            |chunk| out.extend_from_slice(chunk),
        )
        .await
        .unwrap();
        (finished, String::from_utf8_lossy(&out).into_owned())
    }

    #[tokio::test]
    async fn exit_codes_and_signals() {
        let (f, out) = run_collect("echo hi; exit 3", Duration::from_secs(5)).await;
        assert_eq!(f.ending, Ending::Exited(3));
        assert_eq!(out, "hi\n");
        let (f, _) = run_collect("kill -TERM $$", Duration::from_secs(5)).await;
        assert_eq!(f.ending, Ending::Signaled(15));
    }

    #[tokio::test]
    async fn a_process_that_left_the_group_cannot_hold_the_call() {
        // setsid puts the sleep in a new session, out of reach of the group kill; it keeps the
        // output pipe open, so reading must stop on its own 2 s after the shell ended.
        let command = "setsid sh -c 'echo $$ > started; exec sleep 20' & \
            while [ ! -s started ]; do sleep 0.05; done; cat started";
        let (f, out) = run_collect(command, Duration::from_secs(10)).await;
        assert_eq!(f.ending, Ending::Exited(0));
        assert!(f.output_abandoned);
        let pid: i32 = out.trim().parse().unwrap();
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), Signal::SIGKILL);
    }

    #[tokio::test]
    async fn timeout_ends_a_group_that_ignores_sigterm() {
        let (f, out) = run_collect("trap '' TERM; echo up; sleep 30", Duration::from_secs(1)).await;
        assert_eq!(f.ending, Ending::TimedOut);
        assert_eq!(out, "up\n");
    }
}
