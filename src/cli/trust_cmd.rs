//! `versus trust [RECIPE...] [--revoke] [--adopt-state]`: lets this project's own
//! `.versus/config.toml` and `.env` count (they may choose models, providers and commands),
//! recorded by folder and content so any later change asks again; with recipe files, lets
//! those recipes loosen the sandbox (by path and content); with `--adopt-state`, keeps a
//! `.versus/` that versus refused as not its own (written by an earlier versus, or moved).
//! See docs/config.md, "Trusting a project".

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use versus::config::{Trust, TrustStore};

/// `versus trust` flags.
#[derive(Debug, Args)]
pub struct TrustArgs {
    /// Recipe files this project ships that may loosen the sandbox (`filesystem:
    /// unrestricted`, `network: full`, `allow_local_fetch`, a `project_root` outside the
    /// repository). Trusted by path and content: any change asks again.
    #[arg(value_name = "RECIPE")]
    pub recipes: Vec<PathBuf>,

    /// Forget this folder (or the recipes named): its config and .env are ignored again.
    #[arg(long)]
    pub revoke: bool,

    /// Keep this project's existing .versus/ (sessions, applies, history) as your own: for a
    /// folder written by an earlier versus, or one you moved to another disk or restored.
    /// Only after checking that it did not come with the project (a clone, an archive).
    #[arg(long, conflicts_with_all = ["revoke", "recipes"])]
    pub adopt_state: bool,
}

/// Records (or revokes) trust in the project folder and says what it covers.
pub fn run(args: TrustArgs, project: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let project = super::project_dir(project)?;
    if args.adopt_state {
        let adopted = versus::session::Store::adopt(&project)?;
        eprintln!(
            "versus: adopted {} as your own ({} session folder{} stamped{})",
            adopted.store.display(),
            adopted.sessions,
            if adopted.sessions == 1 { "" } else { "s" },
            if adopted.skipped.is_empty() {
                String::new()
            } else {
                format!("; left out, not folders: {}", adopted.skipped.join(", "))
            }
        );
        return Ok(ExitCode::SUCCESS);
    }
    let store = TrustStore::for_user().context("find the trust record")?;
    if !args.recipes.is_empty() {
        return recipes(&store, &args);
    }
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

/// `versus trust RECIPE...`: each recipe, by path and the hash of the bytes read now.
fn recipes(store: &TrustStore, args: &TrustArgs) -> anyhow::Result<ExitCode> {
    for recipe in &args.recipes {
        if args.revoke {
            let was = store.revoke_recipe(recipe)?;
            eprintln!(
                "versus: {} {}",
                if was {
                    "no longer trusted to loosen the sandbox:"
                } else {
                    "was not trusted:"
                },
                recipe.display()
            );
            continue;
        }
        let bytes = versus::fsutil::read_capped(recipe, versus::recipe::RECIPE_READ_CAP)
            .with_context(|| format!("read the recipe {}", recipe.display()))?;
        let hash = blake3::hash(&bytes).to_hex().to_string();
        store.trust_recipe(recipe, &hash)?;
        eprintln!(
            "versus: trusted {} to loosen the sandbox as it says now (asked again when it \
             changes); recorded in {}",
            recipe.display(),
            store.path().display()
        );
    }
    Ok(ExitCode::SUCCESS)
}
