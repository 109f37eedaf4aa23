//! `versus tool NAME --args JSON [--dir DIR]`: one tool call, as a model would make it.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, bail};
use clap::Args;

use versus::tools::{ToolContext, ToolRegistry};
use versus::workspace::DirectView;

/// Arguments of `versus tool`.
#[derive(Debug, Args)]
pub struct ToolArgs {
    /// Tool name (read_file, write_file, edit_file, apply_patch, list_directory, search_files,
    /// search_code, bash, web_fetch, and web_search when your config's `[web_search]` turns
    /// it on). Omit to list the tools.
    pub name: Option<String>,

    /// The tool's arguments as one JSON object, exactly as a model would send them.
    #[arg(long, value_name = "JSON", default_value = "{}")]
    pub args: String,

    /// Directory the tool acts on (default: -C or the current directory). Writes land here.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,

    /// Allow web_fetch to reach loopback and private addresses.
    #[arg(long)]
    pub allow_local_fetch: bool,

    /// Restrict bash to these command prefixes (repeatable), like a recipe's `bash(...)`.
    #[arg(long = "bash-allow", value_name = "PREFIX")]
    pub bash_allow: Vec<String>,
}

/// Runs the tool and prints its result on stdout.
pub fn run(
    args: ToolArgs,
    project: Option<PathBuf>,
    config_file: Option<PathBuf>,
    trust: bool,
) -> anyhow::Result<ExitCode> {
    let mut registry = ToolRegistry::builtin();
    let dir = match args.dir.clone().or(project) {
        Some(d) => d,
        None => std::env::current_dir().context("reading the current directory")?,
    };
    // web_search is offered as in a turn: only when the config turns it on, with the
    // backend, address and key variable of the user's own config (a project's may not set
    // them) and the key from the environment. Only the listing and web_search itself pay for
    // loading the config (start-up time of the other tools).
    let wants_search = args.name.as_deref().is_none_or(|n| n == "web_search");
    let mut search_off = None;
    let loading = wants_search.then(|| versus::config::load(&dir, config_file.as_deref(), trust));
    let loaded = match loading {
        None => None,
        Some(Ok(loaded)) => Some(loaded),
        // The listing still lists the other tools.
        Some(Err(error)) if args.name.is_none() => {
            search_off = Some(format!("your config could not be read: {error}"));
            None
        }
        Some(Err(error)) => return Err(error.into()),
    };
    if let Some((config, env)) = loaded {
        super::print_config_notices(&config, &env);
        match versus::recipe::web_search_setup(&config, &env, None) {
            Ok(Some(search)) => registry = registry.with_web_search(search),
            Ok(None) => {
                search_off = Some(
                    "web_search is off: add [web_search] to your config to turn it on (see \
                     docs/extensions.md, \"Web search\")"
                        .to_string(),
                )
            }
            Err(error) => search_off = Some(format!("web_search cannot run: {error}")),
        }
    }
    let Some(name) = args.name else {
        let mut out = std::io::stdout().lock();
        for spec in registry.specs() {
            writeln!(out, "{:<16} {}", spec.name, spec.guidance)?;
        }
        if let Some(off) = &search_off {
            let off = versus::sanitize::escape(off, versus::sanitize::Layout::Line);
            writeln!(out, "{:<16} ({off})", "web_search")?;
        }
        return Ok(ExitCode::SUCCESS);
    };
    if let Some(off) = search_off.filter(|_| name == "web_search") {
        bail!("{off}");
    }
    if registry.get(&name).is_none() {
        bail!(
            "unknown tool `{name}`; available tools: {}",
            registry.names().join(", ")
        );
    }
    let view = DirectView::new(&dir).with_context(|| format!("opening {}", dir.display()))?;
    let mut ctx = ToolContext::new(Arc::new(view));
    // bash runs in the sandbox the user's config describes, over this folder.
    // Only the user's own [sandbox] matters here, so the project's files are never needed.
    // No other tool runs commands, so only bash pays for loading the config (start-up time).
    if name == "bash" {
        let (config, _env) = versus::config::load(&dir, None, false)?;
        ctx.sandbox = Arc::new(versus::exec::Sandbox::new(
            &config.sandbox,
            versus::exec::WorkspaceDirs::tree_only(ctx.view.root()),
        ));
    }
    ctx.limits.allow_local_fetch = args.allow_local_fetch;
    if !args.bash_allow.is_empty() {
        ctx.limits.bash_allowlist = Some(args.bash_allow);
    }
    // One call: a single-threaded runtime starts no worker threads (blocking work still gets
    // its thread, and search_code its own walkers), which is most of a small call's time.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let output = runtime.block_on(registry.dispatch(&name, &args.args, &ctx));
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(output.text.as_bytes())?;
    if !output.text.ends_with('\n') {
        stdout.write_all(b"\n")?;
    }
    stdout.flush()?;
    if let Some(image) = &output.image {
        eprintln!(
            "[an image part ({}, {} bytes) goes to providers that accept images]",
            image.media_type,
            image.data.len()
        );
    }
    Ok(if output.is_error {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
