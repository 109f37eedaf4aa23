//! bash: run a shell command in the model's workspace and report its output and exit status.
//!
//! The pieces: [`allowlist`] decides whether a recipe allows the line, [`crate::exec`] runs
//! `bash -c` in the workspace's sandbox (the one command runner: environment allowlist,
//! process tree, timeout), [`output`] keeps the merged output within the model's budget and
//! spills the full text to a file.
//!
//! Result kinds: a command that ran to its end is a normal result whatever its exit code or
//! signal (a failing test is information for the model, not a tool failure). A refused line, a
//! shell that could not start, a timeout and a cancellation are error results; the last two still
//! carry the output captured so far. The [`ToolOutcome`] of each says what really happened (exit
//! code, signal, refused, timed out, cancelled) for the people judging the run.

mod allowlist;
mod output;

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use serde_json::json;

use super::registry::{Handler, Tool, typed};
use super::{ToolClass, ToolContext, ToolError, ToolLimits, ToolOutput, ToolSpec};
use crate::exec::{CommandSpec, Ending, ExecError, Finished};
use crate::model::ToolOutcome;
use output::{Budget, Collector, Rendered, SpillPlace};

/// The most bytes of saved outputs one spill folder (a session's, or a task's) holds (256 MiB).
/// The folder is on the host, next to the user's project, outside any sandbox: each call may
/// save 64 MiB, and a model calling `yes` a thousand times would otherwise write 64 GB there.
/// Past it, a call saves only the first and last few hundred bytes (its output to the model is
/// cut as always).
const SPILL_FOLDER_MAX_BYTES: u64 = 256 * 1024 * 1024;

/// What is left of [`SPILL_FOLDER_MAX_BYTES`] in `dir` (a flat folder of spill files).
fn spill_room(dir: &std::path::Path) -> u64 {
    let used: u64 = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter_map(|entry| entry.metadata().ok())
                .filter(std::fs::Metadata::is_file)
                .map(|meta| meta.len())
                .fold(0, u64::saturating_add)
        })
        .unwrap_or(0);
    SPILL_FOLDER_MAX_BYTES.saturating_sub(used)
}

/// The bash tool, for the registry.
pub(crate) fn tool() -> Arc<dyn Tool> {
    typed(
        ToolSpec {
            name: "bash",
            description: "Run a shell command with `bash -c` in the project root and get its \
                combined stdout and stderr, in order, followed by its exit status. stdin is \
                closed, so interactive programs get end-of-file. Background processes are killed \
                when the command ends. Default timeout 120 s (timeout_secs, at most 600). Long \
                output keeps its beginning and end; the full output is saved to a file whose \
                path is given. Use it to build, test, and run project tools; use the file tools \
                to read, search and edit files."
                .to_string(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "command": {"type": "string", "description": "The command line, run with `bash -c` in the project root."},
                    "description": {"type": "string", "description": "A few words on what the command does, shown to the user."},
                    "timeout_secs": {"type": "integer", "minimum": 1, "description": "Seconds before the command is stopped. Default 120, at most 600."}
                },
                "required": ["command"],
                "additionalProperties": false
            }),
            guidance: "bash: build and run tests here; read, search and edit files with the file \
                tools rather than cat, grep or sed."
                .to_string(),
            class: ToolClass::WorkspaceEffect,
        },
        Bash,
    )
}

/// The arguments. `description` is accepted by the schema for the user's benefit only and is
/// not needed to run the command, so it is not parsed.
#[derive(Debug, Deserialize)]
pub(crate) struct Args {
    command: String,
    timeout_secs: Option<u64>,
}

struct Bash;

impl Handler for Bash {
    type Args = Args;

    async fn run(&self, args: Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        if args.command.trim().is_empty() {
            return Err(ToolError::failed(
                "bash needs a command: `command` is empty; give the command line to run",
            ));
        }
        if let Some(allowed) = &ctx.limits.bash_allowlist {
            allowlist::check(&args.command, allowed)
                .map_err(|refusal| ToolError::Refused(refusal.to_string()))?;
        }
        if ctx.cancel.is_cancelled() {
            return Err(ToolError::Cancelled(
                "bash was not run: the call was cancelled before it started".to_string(),
            ));
        }
        let timeout = effective_timeout(args.timeout_secs, &ctx.limits);
        let mut collector = Collector::new(
            Budget {
                max_bytes: ctx.limits.bash_output_max_bytes,
                max_lines: ctx.limits.bash_output_max_lines,
            },
            SpillPlace {
                dir: ctx.spill_dir.clone(),
                call_id: ctx.call_id.clone(),
                max_bytes: ctx
                    .limits
                    .bash_spill_max_bytes
                    .min(spill_room(&ctx.spill_dir)),
            },
        );
        let job = CommandSpec {
            script: &args.command,
            cwd: ctx.view.root(),
            sandbox: &ctx.sandbox,
            timeout,
            cancel: &ctx.cancel,
        };
        let finished = crate::exec::run(job, |chunk| collector.push(chunk))
            .await
            .map_err(|e| match e {
                ExecError::Spawn(e) => ToolError::failed(format!(
                    "could not run bash: {e}; check that bash is installed and on PATH and that \
                     the project folder exists"
                )),
                refused => ToolError::Refused(format!("bash was not run: {refused}")),
            })?;
        let rendered = collector.finish();
        // A command that failed for want of the network is told so (and that the user, not
        // the model, can change it), so the model does not retry it in vain.
        let network = match finished.ending {
            Ending::Exited(code) if code != 0 && ctx.sandbox.without_network() => {
                crate::exec::network_hint(crate::exec::CommandRole::Model, &rendered.text)
            }
            _ => None,
        };
        let mut text = compose(&rendered, finished, timeout, ctx.limits.bash_max_timeout);
        if let Some(hint) = network {
            // Above the exit status, which stays the last line.
            let at = text.rfind('\n').map_or(0, |i| i + 1);
            text.insert_str(at, &format!("[{hint}]\n"));
        }
        Ok(match finished.ending {
            Ending::TimedOut => ToolOutput::error(text).with_outcome(ToolOutcome::TimedOut),
            Ending::Cancelled => ToolOutput::error(text).with_outcome(ToolOutcome::Cancelled),
            Ending::Exited(0) => ToolOutput::ok(text),
            Ending::Exited(code) => ToolOutput::ok(text).with_outcome(ToolOutcome::Exit { code }),
            Ending::Signaled(signal) => {
                ToolOutput::ok(text).with_outcome(ToolOutcome::Signal { signal })
            }
        })
    }
}

/// The model's timeout, or the default, never above the maximum.
fn effective_timeout(requested: Option<u64>, limits: &ToolLimits) -> Duration {
    let wanted = requested.map_or(limits.bash_default_timeout, |s| {
        Duration::from_secs(s.max(1))
    });
    wanted.min(limits.bash_max_timeout)
}

/// `30 s`, or `0.5 s` for limits below a second.
fn seconds(d: Duration) -> String {
    if d.subsec_nanos() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

/// The output, notes on what was cut or abandoned, and the exit status on the last line.
fn compose(rendered: &Rendered, finished: Finished, timeout: Duration, max: Duration) -> String {
    let mut text = if rendered.text.is_empty() {
        "(no output)\n".to_string()
    } else {
        rendered.text.clone()
    };
    match &rendered.full {
        None => {}
        Some(Ok(path)) => {
            let _ = writeln!(
                text,
                "[output cut: full output ({} lines, {} bytes) saved to {}]",
                rendered.total_lines,
                rendered.total_bytes,
                path.display()
            );
        }
        Some(Err(reason)) => {
            let _ = writeln!(
                text,
                "[output cut; the full output ({} lines, {} bytes) could not be saved: {reason}]",
                rendered.total_lines, rendered.total_bytes
            );
        }
    }
    if finished.output_abandoned {
        let _ = writeln!(
            text,
            "[stopped reading output: a process that left the command's process group still \
             holds it open]"
        );
    }
    if finished.ending == Ending::TimedOut {
        let hint = if timeout < max {
            format!("pass a larger timeout_secs (at most {}) or ", max.as_secs())
        } else {
            String::new()
        };
        let _ = writeln!(
            text,
            "[the command did not finish in time: {hint}run a smaller part of the work, e.g. \
             one test target]"
        );
    }
    let status = match finished.ending {
        // A shell reports a command killed by signal N as 128 + N; in the sandbox that is
        // also how the shell's own death reaches versus.
        Ending::Exited(code @ 129..=192) => match nix::sys::signal::Signal::try_from(code - 128) {
            Ok(sig) => format!(
                "[exit code: {code} (killed by signal {}, {})]",
                code - 128,
                sig.as_str()
            ),
            Err(_) => format!("[exit code: {code}]"),
        },
        Ending::Exited(code) => format!("[exit code: {code}]"),
        Ending::Signaled(signal) => match nix::sys::signal::Signal::try_from(signal) {
            Ok(sig) => format!("[killed by signal {signal} ({})]", sig.as_str()),
            Err(_) => format!("[killed by signal {signal}]"),
        },
        Ending::TimedOut => format!("[killed: timed out after {}]", seconds(timeout)),
        Ending::Cancelled => "[killed: cancelled]".to_string(),
    };
    text.push_str(&status);
    text
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::workspace::DirectView;

    fn context(dir: &std::path::Path) -> ToolContext {
        let mut ctx = ToolContext::new(Arc::new(DirectView::new(dir).unwrap()));
        ctx.spill_dir = dir.join("spill");
        ctx
    }

    #[test]
    fn timeout_is_defaulted_and_clamped() {
        let limits = ToolLimits::default();
        assert_eq!(effective_timeout(None, &limits), Duration::from_secs(120));
        assert_eq!(effective_timeout(Some(5), &limits), Duration::from_secs(5));
        assert_eq!(
            effective_timeout(Some(5000), &limits),
            Duration::from_secs(600)
        );
    }

    #[tokio::test]
    async fn cancellation_stops_the_command() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = context(dir.path());
        let cancel = ctx.cancel.clone();
        let canceller = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            cancel.cancel();
        });
        let out = tool()
            .call(&json!({"command": "echo begun; sleep 30"}), &ctx)
            .await;
        canceller.await.unwrap();
        assert!(out.is_error, "{out:?}");
        assert_eq!(out.text, "begun\n[killed: cancelled]");
        assert_eq!(out.outcome, ToolOutcome::Cancelled);
    }

    #[tokio::test]
    async fn non_zero_exit_is_a_normal_result() {
        let dir = tempfile::tempdir().unwrap();
        let out = tool()
            .call(&json!({"command": "exit 1"}), &context(dir.path()))
            .await;
        assert!(!out.is_error);
        assert_eq!(out.text, "(no output)\n[exit code: 1]");
        assert_eq!(out.outcome, ToolOutcome::Exit { code: 1 });
    }

    #[tokio::test]
    async fn the_outcome_carries_the_real_exit_status() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = context(dir.path());
        let ok = tool().call(&json!({"command": "echo fine"}), &ctx).await;
        assert_eq!(ok.outcome, ToolOutcome::Ok);
        let three = tool()
            .call(&json!({"command": "echo broken; exit 3"}), &ctx)
            .await;
        assert_eq!(three.outcome, ToolOutcome::Exit { code: 3 });
        assert_eq!(three.text, "broken\n[exit code: 3]");
    }

    #[tokio::test]
    async fn a_command_past_its_time_limit_is_timed_out() {
        let dir = tempfile::tempdir().unwrap();
        let mut ctx = context(dir.path());
        ctx.limits.bash_max_timeout = Duration::from_millis(300);
        let out = tool()
            .call(&json!({"command": "echo started; sleep 30"}), &ctx)
            .await;
        assert!(out.is_error);
        assert_eq!(out.outcome, ToolOutcome::TimedOut);
        assert!(out.text.starts_with("started\n"), "{}", out.text);
    }

    #[tokio::test]
    async fn a_line_the_recipe_does_not_allow_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut ctx = context(dir.path());
        ctx.limits.bash_allowlist = Some(vec!["cargo test".to_string()]);
        let out = tool().call(&json!({"command": "rm -rf src"}), &ctx).await;
        assert!(out.is_error);
        assert_eq!(out.outcome, ToolOutcome::Refused);
    }

    #[tokio::test]
    async fn empty_command_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let out = tool()
            .call(&json!({"command": "  "}), &context(dir.path()))
            .await;
        assert!(out.is_error);
        assert!(out.text.contains("`command` is empty"), "{}", out.text);
    }

    #[tokio::test]
    async fn small_limits_cut_and_spill() {
        let dir = tempfile::tempdir().unwrap();
        let mut ctx = context(dir.path());
        ctx.limits.bash_output_max_lines = 4;
        ctx.call_id = "call_7".to_string();
        let out = tool().call(&json!({"command": "seq 1 10"}), &ctx).await;
        let lines: Vec<&str> = out.text.lines().collect();
        assert_eq!(
            lines[..5],
            ["1", "2", "[... 6 lines omitted ...]", "9", "10"]
        );
        let saved = lines[5]
            .strip_prefix("[output cut: full output (10 lines, 21 bytes) saved to ")
            .and_then(|rest| rest.strip_suffix(']'))
            .unwrap();
        assert!(saved.contains("bash-call_7-"), "{saved}");
        let expected: String = (1..=10).map(|i| format!("{i}\n")).collect();
        assert_eq!(std::fs::read_to_string(saved).unwrap(), expected);
        assert_eq!(lines[6], "[exit code: 0]");
    }
}
