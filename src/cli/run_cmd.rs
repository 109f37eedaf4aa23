//! `versus run RECIPE [-m SPEC...] [--out DIR] [--json] [--jobs N] [--resume]`: run a recipe
//! headless and write its report.
//!
//! This file only decides what the library is asked: which recipe (every problem listed, exit
//! 2), which project (`project_root` of the recipe, else `-C DIR` or the current folder),
//! which models (`-m`, else the recipe's, else the config's), where the output goes
//! (`--out`, else a new folder in `.versus/reports/` of the folder versus runs in), and how
//! progress is shown. Ctrl+C and SIGTERM cancel the run (a second one exits at once); the
//! exit code says all passed (0), some failed (1), bad usage or setup (2), interrupted (130).

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Args;
use tokio_util::sync::CancellationToken;

use versus::config::{self, Config, TrustStore};
use versus::headless::{
    DisplayMode, OutDir, RequestedModel, RunOutcome, RunRequest, Verdict, layout,
};
use versus::recipe::{LooseningKind, Recipe};

/// Exit code when the run was interrupted.
const EXIT_INTERRUPTED: u8 = 130;

/// Arguments of `versus run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The recipe file (Markdown; see `versus recipe new` for a template).
    pub recipe: PathBuf,

    /// A model (PROVIDER/MODEL[#N]) instead of the recipe's; repeat for several.
    #[arg(short = 'm', long = "model", value_name = "SPEC")]
    pub models: Vec<String>,

    /// Output folder (default: a new .versus/reports/<recipe>-<time>/; with --resume, the
    /// latest report folder of the recipe).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// Print report.json on stdout instead of the summary.
    #[arg(long)]
    pub json: bool,

    /// Model runs at once (default: the number of models).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,

    /// Finish an interrupted run: only the runs that did not finish are run again.
    #[arg(long)]
    pub resume: bool,

    /// Print no progress on stderr.
    #[arg(long, short = 'q')]
    pub quiet: bool,

    /// Give the recipe's setup command the network (to download dependencies); the models'
    /// own commands and the criteria keep the recipe's `network` setting.
    #[arg(long)]
    pub setup_network: bool,
}

/// Runs the command.
pub fn run(
    args: RunArgs,
    project: Option<PathBuf>,
    config_file: Option<PathBuf>,
    trust: bool,
) -> anyhow::Result<ExitCode> {
    let here = super::project_dir(project)?;
    let runtime = super::runtime()?;
    super::on_runtime(&runtime, run_recipe(args, here, config_file, trust))
}

async fn run_recipe(
    args: RunArgs,
    here: PathBuf,
    config_file: Option<PathBuf>,
    trust: bool,
) -> anyhow::Result<ExitCode> {
    let (mut config, env) = config::load(&here, config_file.as_deref(), trust)?;
    super::print_config_notices(&config, &env);
    // The user's own switch, as if set in their config: no recipe loosening.
    config.sandbox.setup_network |= args.setup_network;
    let (recipe, recipe_hash) = match Recipe::load_hashed_for(&args.recipe, &config) {
        Ok(loaded) => loaded,
        Err(errors) => {
            for problem in &errors.problems {
                // Quotes the recipe's own text.
                let _ = writeln!(
                    versus::sanitize::stderr(),
                    "{}",
                    versus::sanitize::line(&problem.to_string())
                );
            }
            let n = errors.problems.len();
            eprintln!(
                "versus: {} cannot run: {n} problem{} (fix {}; `versus recipe check FILE` lists them again)",
                args.recipe.display(),
                if n == 1 { "" } else { "s" },
                if n == 1 { "it" } else { "them" },
            );
            return Ok(ExitCode::from(super::EXIT_USAGE));
        }
    };
    let recipe_dir = absolute_parent(&args.recipe)?;
    let project = match recipe.project_root(&args.recipe) {
        Some(root) => root.canonicalize().with_context(|| {
            format!(
                "open the recipe's project_root {} (it is relative to the recipe's folder); fix `project_root` in ## Constraints",
                root.display()
            )
        })?,
        None => here.clone(),
    };
    // Before anything is created: only a trusted recipe may loosen the sandbox.
    let recipe_may_loosen = trust
        || TrustStore::for_user_or_none()
            .recipe(&args.recipe, &recipe_hash, &[&project, &here])
            .may_loosen();
    recipe.check_loosening(
        &config.sandbox,
        &args.recipe,
        recipe_may_loosen,
        LooseningKind::ALL,
    )?;
    let (models, from_command_line) =
        requested_models(&args, &recipe, &config, &env, &here, &recipe_dir)?;
    let out = output_dir(&args, &recipe, &here)?;
    let display = if args.quiet {
        DisplayMode::Quiet
    } else if std::io::stderr().is_terminal() {
        DisplayMode::Live
    } else {
        DisplayMode::Lines
    };
    let request = RunRequest {
        recipe_file: args.recipe.clone(),
        recipe,
        recipe_hash,
        recipe_may_loosen,
        project,
        models,
        models_from_command_line: from_command_line,
        out,
        resume: args.resume,
        jobs: args.jobs.map(usize::from),
        display,
    };
    let cancel = CancellationToken::new();
    let watcher = tokio::spawn(watch_signals(cancel.clone(), !args.quiet));
    let outcome = versus::headless::run(request, &config, &env, cancel).await;
    watcher.abort();
    let outcome = outcome?;
    print_outcome(&args, &outcome)?;
    Ok(match outcome.verdict {
        Verdict::AllPassed => ExitCode::SUCCESS,
        Verdict::SomeFailed => ExitCode::from(1),
        Verdict::Interrupted => ExitCode::from(EXIT_INTERRUPTED),
        // Criteria that could not be checked: a broken run (a setup problem), not a failure.
        Verdict::Broken => ExitCode::from(super::EXIT_USAGE),
    })
}

/// `-m` models (read from the folder versus runs in), else the recipe's (read from the
/// recipe's folder), else the config's defaults (its `models`, else one per key set).
fn requested_models(
    args: &RunArgs,
    recipe: &Recipe,
    config: &Config,
    env: &config::Env,
    here: &Path,
    recipe_dir: &Path,
) -> anyhow::Result<(Vec<RequestedModel>, bool)> {
    if !args.models.is_empty() {
        let models = args
            .models
            .iter()
            .map(|text| {
                Ok(RequestedModel {
                    spec: config.parse_spec(text)?,
                    script_base: here.to_path_buf(),
                })
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        return Ok((models, true));
    }
    let (specs, base) = if recipe.models.is_empty() {
        let defaults = config.default_models_for(env);
        if let Some(note) = defaults.note() {
            let _ = writeln!(
                versus::sanitize::stderr(),
                "versus: {}",
                versus::sanitize::line(&note)
            );
        }
        (defaults.specs, here)
    } else {
        (recipe.model_specs(), recipe_dir)
    };
    let models = specs
        .into_iter()
        .map(|spec| RequestedModel {
            spec,
            script_base: base.to_path_buf(),
        })
        .collect();
    Ok((models, false))
}

/// `--out DIR`, the latest report of the recipe for `--resume`, or a new report folder.
fn output_dir(args: &RunArgs, recipe: &Recipe, here: &Path) -> anyhow::Result<OutDir> {
    if let Some(dir) = &args.out {
        return Ok(OutDir::Exact(dir.clone()));
    }
    if args.resume {
        let reports = match versus::session::Store::existing(here)? {
            Some(store) => store.reports(),
            None => here.join(".versus").join("reports"),
        };
        let slug = layout::slug(&recipe.name);
        return match layout::latest_report(&reports, &slug) {
            Some(dir) => Ok(OutDir::Exact(dir)),
            None => bail!(
                "nothing to resume: {} has no report folder of the recipe `{}`; give the folder with --out DIR, or run without --resume",
                reports.display(),
                recipe.name
            ),
        };
    }
    // Opened by the run once it can start (nothing is created before).
    Ok(OutDir::NewInStore(here.to_path_buf()))
}

/// The folder of `file`, made absolute.
fn absolute_parent(file: &Path) -> anyhow::Result<PathBuf> {
    let parent = match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    parent
        .canonicalize()
        .with_context(|| format!("open the recipe's folder {}", parent.display()))
}

/// Cancels the run on the first Ctrl+C, SIGTERM or SIGHUP; exits at once on the second.
async fn watch_signals(cancel: CancellationToken, say: bool) {
    let Ok(mut signals) = super::signals::StopSignals::new() else {
        return;
    };
    let mut seen = 0;
    loop {
        let signal = signals.next().await;
        seen += 1;
        if seen > 1 {
            std::process::exit(i32::from(EXIT_INTERRUPTED));
        }
        if say {
            eprintln!(
                "versus: {signal}; stopping the models and writing what is done (again to quit at once)"
            );
        }
        cancel.cancel();
    }
}

fn print_outcome(args: &RunArgs, outcome: &RunOutcome) -> anyhow::Result<()> {
    // The report quotes the recipe, the models and the criteria's commands: escaped on the
    // way out (summary.md is escaped when written; this holds for a tampered file too).
    let mut out = versus::sanitize::stdout();
    if args.json {
        writeln!(
            out,
            "{}",
            versus::sanitize::json::to_string_pretty(&outcome.report)?
        )?;
    } else {
        let summary =
            std::fs::read_to_string(outcome.out_dir.join(layout::SUMMARY_FILE)).unwrap_or_default();
        write!(out, "{}", versus::sanitize::block(&summary))?;
    }
    out.flush()?;
    if !args.quiet {
        eprintln!("versus: report in {}", outcome.out_dir.display());
        if outcome.verdict == Verdict::Interrupted {
            eprintln!(
                "versus: finish it with: versus run {} --resume --out {}",
                args.recipe.display(),
                outcome.out_dir.display()
            );
        }
    }
    Ok(())
}
