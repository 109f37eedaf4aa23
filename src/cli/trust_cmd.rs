//! `versus trust [--revoke]`: lets this project's own `.versus/config.toml` and `.env` count
//! (they may choose models, providers and commands), recorded by folder and content so any
//! later change asks again. See docs/config.md, "Trusting a project".

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use versus::config::{Trust, TrustStore};

/// `versus trust` flags.
#[derive(Debug, Args)]
pub struct TrustArgs {
    /// Forget this folder: its config and .env are ignored again.
    #[arg(long)]
    pub revoke: bool,
}

/// Records (or revokes) trust in the project folder and says what it covers.
pub fn run(args: TrustArgs, project: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let project = super::project_dir(project)?;
    let store = TrustStore::for_user().context("find the trust record")?;
    if args.revoke {
        let was = store.revoke(&project)?;
        eprintln!(
            "versus: {} {}",
            if was {
                "no longer trusted:"
            } else {
                "was not trusted:"
            },
            project.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let before = store.check(&project)?;
    let files = store.trust(&project)?;
    if files.is_empty() {
        eprintln!(
            "versus: trusted {} (it has no .versus/config.toml or .env yet; files added later \
             ask again)",
            project.display()
        );
    } else {
        let names: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
        let already = matches!(before, Trust::Trusted);
        eprintln!(
            "versus: {} {}; recorded in {}",
            if already {
                "already trusted:"
            } else {
                "trusted:"
            },
            names.join(", "),
            store.path().display()
        );
    }
    Ok(ExitCode::SUCCESS)
}
