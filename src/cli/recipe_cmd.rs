//! `versus recipe check FILE` and `versus recipe new [FILE]`.
//!
//! `check` reads the recipe over the built-in defaults and, when the configuration loads,
//! also checks that every model names a known provider; it prints every problem at once as
//! `FILE:LINE: message` (exit 1) or a short summary (exit 0). `new` writes the commented
//! template, which passes `check` as it is; it never overwrites a file.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand};

use versus::config;
use versus::recipe::{McpTransport, Recipe, RecipeErrors, TEMPLATE_TEXT};

/// A line on stdout; a closed stdout (`| head`) is not worth an error. Escaped on the way
/// out ([`versus::sanitize`]): the lines name project files and quote project text.
macro_rules! say {
    ($($arg:tt)*) => {{
        let _ = writeln!(versus::sanitize::stdout(), $($arg)*);
    }};
}

/// Arguments of `versus recipe`.
#[derive(Debug, Args)]
pub struct RecipeArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: RecipeCommand,
}

/// `versus recipe` subcommands.
#[derive(Debug, Subcommand)]
pub enum RecipeCommand {
    /// Check a recipe: every problem as FILE:LINE: message (exit 1), or a summary (exit 0).
    ///
    /// Exit code 2 when the file cannot be read.
    Check {
        /// The recipe file.
        file: PathBuf,
    },
    /// Write a commented starter recipe that passes `versus recipe check`.
    ///
    /// Refuses to overwrite an existing file.
    New {
        /// Where to write it.
        #[arg(default_value = "recipe.md")]
        file: PathBuf,
    },
}

/// Runs the subcommand.
pub fn run(
    args: RecipeArgs,
    project: Option<PathBuf>,
    config_file: Option<PathBuf>,
    trust: bool,
) -> anyhow::Result<ExitCode> {
    match args.command {
        RecipeCommand::Check { file } => check(&file, project, config_file, trust),
        RecipeCommand::New { file } => new(&file),
    }
}

fn check(
    file: &Path,
    project: Option<PathBuf>,
    config_file: Option<PathBuf>,
    trust: bool,
) -> anyhow::Result<ExitCode> {
    let config = match load_config(project, config_file, trust) {
        Ok(config) => Some(config),
        Err(err) => {
            eprintln!("versus: provider names not checked: {err:#}");
            None
        }
    };
    let loaded = match &config {
        Some(config) => Recipe::load_for(file, config),
        None => Recipe::load(file),
    };
    match loaded {
        Ok(recipe) => {
            summary(file, &recipe, config.as_ref());
            // Seeds only reach providers that take one: say which models go without.
            let warnings = match &config {
                Some(config) => recipe.seed_warnings(config.seed, |spec| {
                    config.provider(&spec.provider).map(|p| p.kind)
                }),
                None => recipe.seed_warnings(None, |spec| {
                    versus::config::providers::builtin_providers()
                        .into_iter()
                        .find(|p| p.name == spec.provider)
                        .map(|p| p.kind)
                }),
            };
            for warning in warnings {
                say!("warning: {warning}");
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(errors) if errors.is_unreadable() => {
            eprintln!("versus: {errors}");
            Ok(ExitCode::from(super::EXIT_USAGE))
        }
        Err(errors) => {
            report(file, &errors);
            Ok(ExitCode::from(1))
        }
    }
}

fn load_config(
    project: Option<PathBuf>,
    config_file: Option<PathBuf>,
    trust: bool,
) -> anyhow::Result<config::Config> {
    let dir = super::project_dir(project)?;
    let (config, env) = config::load(&dir, config_file.as_deref(), trust)?;
    super::print_config_notices(&config, &env);
    Ok(config)
}

fn report(file: &Path, errors: &RecipeErrors) {
    for problem in &errors.problems {
        say!("{problem}");
    }
    let n = errors.problems.len();
    eprintln!(
        "{}: {n} problem{}",
        file.display(),
        if n == 1 { "" } else { "s" }
    );
}

fn summary(file: &Path, recipe: &Recipe, config: Option<&config::Config>) {
    say!("{}: ok", file.display());
    say!("name: {}", recipe.name);
    let models: Vec<String> = recipe.models.iter().map(|m| m.spec.to_string()).collect();
    if models.is_empty() {
        say!("models: none (give them with -m PROVIDER/MODEL)");
    } else {
        say!("models: {} ({})", models.len(), models.join(", "));
    }
    let tasks: Vec<&str> = recipe.tasks().iter().map(|t| t.name.as_str()).collect();
    if tasks.is_empty() {
        say!("tasks: none (versus run needs at least one)");
    } else {
        say!("tasks: {} ({})", tasks.len(), tasks.join(", "));
    }
    let criteria: Vec<String> = recipe.criteria().iter().map(|c| c.to_string()).collect();
    say!("criteria: {} ({})", criteria.len(), criteria.join("; "));
    let allowlist = recipe.tool_limits().bash_allowlist;
    let tools: Vec<String> = recipe
        .active_tool_names_for(config)
        .into_iter()
        .map(|t| match &allowlist {
            Some(prefixes) if t == "bash" => format!("bash({})", prefixes.join(", ")),
            _ => t.to_string(),
        })
        .collect();
    if tools.is_empty() {
        say!("tools: none");
    } else {
        say!("tools: {}", tools.join(", "));
    }
    // Without ## Tools, web_search is the user's to turn on: say where it comes from.
    if recipe.web_search_from_config(config) == Some(true) {
        say!("web_search: from your config's [web_search]");
    }
    if !recipe.mcp_servers.is_empty() {
        let servers: Vec<String> = recipe
            .mcp_servers
            .iter()
            .map(|s| match &s.transport {
                McpTransport::Stdio { .. } => format!("{} (stdio)", s.name),
                McpTransport::Http { .. } => format!("{} (http)", s.name),
            })
            .collect();
        say!(
            "mcp servers: {} (started for every model of a run once the recipe is trusted)",
            servers.join(", ")
        );
    }
}

fn new(file: &Path) -> anyhow::Result<ExitCode> {
    let mut out = match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(file)
    {
        Ok(out) => out,
        Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {
            anyhow::bail!(
                "{} already exists; versus recipe new never overwrites a file: give another \
                 name (versus recipe new FILE) or remove it first",
                file.display()
            );
        }
        Err(err) => {
            return Err(err).with_context(|| format!("create {}", file.display()));
        }
    };
    out.write_all(TEMPLATE_TEXT.as_bytes())
        .and_then(|()| out.sync_all())
        .with_context(|| format!("write {}", file.display()))?;
    say!(
        "wrote {f}: edit it, then check it with `versus recipe check {f}`",
        f = file.display()
    );
    Ok(ExitCode::SUCCESS)
}
