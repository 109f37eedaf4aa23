//! `versus mcp list`: every configured MCP server (user config, the project's own config once
//! trusted), started as a run would start it, with its tools and status, then stopped. What a
//! model would be offered is exactly what is listed (`server__tool`), so a server that fails
//! here is fixed before a run.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};

/// Arguments of `versus mcp`.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: McpCommand,
}

/// `versus mcp` subcommands.
#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// Start every configured server (short timeout), list its tools and status, stop it.
    ///
    /// Exit code 0 when every server answered, 1 when one did not.
    List {
        /// Seconds each server gets to start and list its tools (default 10).
        #[arg(long, default_value_t = 10.0)]
        timeout: f64,
    },
}

/// Runs the command.
pub fn run(
    args: McpArgs,
    project: Option<PathBuf>,
    config_file: Option<PathBuf>,
    trust: bool,
) -> anyhow::Result<ExitCode> {
    let project = super::project_dir(project)?;
    let runtime = super::runtime()?;
    super::on_runtime(&runtime, list(args, project, config_file, trust))
}

async fn list(
    args: McpArgs,
    project: PathBuf,
    config_file: Option<PathBuf>,
    trust: bool,
) -> anyhow::Result<ExitCode> {
    let McpCommand::List { timeout } = args.command;
    let (config, env) = versus::config::load(&project, config_file.as_deref(), trust)?;
    super::print_config_notices(&config, &env);
    let mut out = versus::sanitize::stdout();
    let limit = std::time::Duration::from_secs_f64(timeout.clamp(0.1, 600.0));
    let specs: Vec<versus::mcp::ServerSpec> = versus::mcp::from_config(&config, &env)
        .into_iter()
        .map(|mut spec| {
            spec.startup_timeout = spec.startup_timeout.min(limit);
            spec
        })
        .collect();
    let Some(plan) = versus::mcp::plan_of(specs, &project, &config) else {
        writeln!(
            out,
            "no MCP servers configured (add [mcp_servers.NAME] to your config; see \
             docs/extensions.md)"
        )?;
        return Ok(ExitCode::SUCCESS);
    };
    let reports = versus::mcp::inspect(&plan).await;
    let mut failed = false;
    for report in &reports {
        writeln!(out, "{} ({}, {})", report.name, report.reach, report.scope)?;
        writeln!(out, "  from {}", report.source)?;
        match &report.status {
            Ok((protocol, tools)) => {
                writeln!(
                    out,
                    "  status: running (protocol {protocol}), {} tools",
                    tools.len()
                )?;
                for (name, description) in tools {
                    let first = description.lines().next().unwrap_or_default();
                    writeln!(out, "    {name}: {first}")?;
                }
            }
            Err(why) => {
                failed = true;
                writeln!(out, "  status: failed: {why}")?;
            }
        }
        for problem in &report.problems {
            writeln!(out, "  note: {problem}")?;
        }
    }
    out.flush()?;
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
