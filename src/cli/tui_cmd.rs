//! `versus` with no subcommand: the interactive interface (src/tui/, docs/tui.md).

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Args;

use versus::config::{Trust, TrustStore};
use versus::tui::{TuiOptions, run as run_tui};

/// Flags of the bare command.
#[derive(Debug, Args)]
pub struct TuiArgs {
    /// A model for the interactive session (PROVIDER/MODEL[#N]); repeat for several.
    /// Default: the config's `models`; with none that can run, the offline demo models on an
    /// example project.
    #[arg(short = 'm', long = "model", value_name = "SPEC")]
    pub models: Vec<String>,

    /// Reopen the latest session of this project: its turns are shown again and every model
    /// continues its conversation (-m replaces its models).
    #[arg(long = "continue", conflicts_with = "resume")]
    pub continue_session: bool,

    /// Reopen the session ID (a unique prefix or ending, as the header shows it, is enough;
    /// `versus sessions` lists them).
    #[arg(long, value_name = "ID")]
    pub resume: Option<String>,

    /// Blind review: models are shown as Model A, B, C in a random order, the same every turn,
    /// until you reveal them (/blind toggles it in the session) or the session ends.
    #[arg(long)]
    pub blind: bool,

    /// A recipe: its models (unless -m is given) and its Review section (`blind`, and the
    /// `check` command run in each model's workspace when it finishes).
    #[arg(long, value_name = "FILE")]
    pub recipe: Option<PathBuf>,
}

/// Runs the interactive interface.
pub fn run(
    args: TuiArgs,
    project: Option<PathBuf>,
    config_file: Option<PathBuf>,
    trust: bool,
) -> anyhow::Result<ExitCode> {
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        bail!(
            "the interactive interface needs a terminal; in scripts use `versus ask PROMPT -m SPEC` (see versus --help)"
        );
    }
    let project = super::project_dir(project)?;
    if !trust {
        ask_trust(&project)?;
    }
    let runtime = super::runtime()?;
    let outcome = runtime.block_on(run_tui(TuiOptions {
        project,
        config_file,
        trust,
        models: args.models,
        resume: match (args.continue_session, args.resume) {
            (_, Some(id)) => Some(Some(id)),
            (true, None) => Some(None),
            (false, None) => None,
        },
        blind: args.blind,
        recipe: args.recipe,
    }))?;
    // Workspaces are removed on drop; do not let a runtime shutdown timeout cut that short.
    runtime.shutdown_timeout(std::time::Duration::from_secs(5));
    print_quit_hint(&outcome)?;
    Ok(ExitCode::SUCCESS)
}

/// What the user reads after quitting: where the session is and the command that continues
/// it. A demo ran in its own folder under the temp folder, so a bare `versus --continue` in
/// the user's folder would not find it: the command names the folder (shell-quoted, and
/// escaped like every project-controlled text that reaches the terminal).
fn print_quit_hint(outcome: &versus::tui::TuiOutcome) -> std::io::Result<()> {
    use std::io::Write;
    use versus::sanitize::{line, shell_word};
    let mut err = versus::sanitize::stderr();
    let dir = outcome.session_dir.display().to_string();
    writeln!(
        err,
        "versus: session {} is in {}",
        line(&outcome.session_id),
        line(&dir)
    )?;
    if !outcome.revealed.is_empty() {
        // Blind mode: the session ended, so who was who is said.
        let who: Vec<String> = outcome
            .revealed
            .iter()
            .map(|(alias, label)| format!("{alias} was {}", line(label)))
            .collect();
        writeln!(err, "versus: blind session ended: {}", who.join(", "))?;
    }
    let here = std::env::current_dir().and_then(|d| d.canonicalize()).ok();
    let project = outcome
        .project
        .canonicalize()
        .unwrap_or_else(|_| outcome.project.clone());
    let continue_with = match &outcome.demo_project {
        Some(project) => {
            let folder = project.display().to_string();
            writeln!(
                err,
                "versus: the demo ran on the example project in {} (delete it when you are done)",
                line(&folder)
            )?;
            format!("versus -C {} --continue", shell_word(&folder))
        }
        None if here.as_deref() == Some(project.as_path()) => "versus --continue".to_string(),
        None => format!(
            "versus -C {} --continue",
            shell_word(&outcome.project.display().to_string())
        ),
    };
    writeln!(err, "versus: continue it with: {continue_with}")
}

/// Lines of a project config shown before the user decides.
const CONFIG_PREVIEW_LINES: usize = 40;

/// Asks, before the interface starts, whether to trust the project's own config and `.env`
/// when it has them and they are not trusted: shows the config's text and the names (never the
/// values) `.env` sets, then records trust on `y`. Anything else leaves them ignored, as the
/// interface's banner then says.
fn ask_trust(project: &std::path::Path) -> anyhow::Result<()> {
    use std::io::{BufRead, Write};
    let store = TrustStore::for_user().context("find the trust record")?;
    let Trust::Untrusted { files, changed } = store.check(project)? else {
        return Ok(());
    };
    let mut err = std::io::stderr().lock();
    writeln!(
        err,
        "versus: {} has settings of its own, ignored until you trust them{}:",
        project.display(),
        if changed {
            " (they changed since you trusted this folder)"
        } else {
            ""
        }
    )?;
    for file in &files {
        writeln!(err, "\n  {}", file.display())?;
        let text = std::fs::read_to_string(file).unwrap_or_default();
        if file.file_name().is_some_and(|n| n == ".env") {
            for name in dotenv_names(&text) {
                writeln!(err, "    sets {name}")?;
            }
            continue;
        }
        for line in text.lines().take(CONFIG_PREVIEW_LINES) {
            writeln!(err, "    | {line}")?;
        }
        if text.lines().count() > CONFIG_PREVIEW_LINES {
            writeln!(err, "    | ...")?;
        }
    }
    write!(
        err,
        "\nThey may choose models, providers, base URLs and commands that run on this machine.\n\
         Trust them? [y/N] "
    )?;
    err.flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    if matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes") {
        store.trust(project)?;
        writeln!(
            err,
            "versus: trusted; recorded in {}",
            store.path().display()
        )?;
    } else {
        writeln!(
            err,
            "versus: not trusted; they stay ignored (`versus trust` to change your mind)"
        )?;
    }
    Ok(())
}

/// The variable names a `.env` text sets, in order (values are never shown: they may be keys).
fn dotenv_names(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| {
            let l = l.strip_prefix("export ").unwrap_or(l);
            let (name, _) = l.split_once('=')?;
            let name = name.trim();
            (!name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
                .then(|| name.to_string())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dotenv_names_never_carry_values() {
        let names = dotenv_names("# c\nexport A_KEY=sk-secret\nB = x\n\nbad line\n=v\n");
        assert_eq!(names, ["A_KEY", "B"]);
    }
}
