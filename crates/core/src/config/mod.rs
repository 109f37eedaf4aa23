//! Configuration: which models exist, where their APIs are, which keys they use and what they
//! cost.
//!
//! Inputs are layered, each over the one before: the built-in providers and price table, the
//! user config (`~/.config/versus/config.toml`, or `--config FILE`), the project's
//! `.versus/config.toml`. Environment variables (and the project's `.env`, which never
//! overrides a set variable) are captured once into an explicit [`Env`] that is passed to
//! whatever needs them, so resolution is a pure function of `(spec, Config, Env)` and tests
//! never touch the process environment.
//!
//! The one entry point callers need is [`resolve`](fn@resolve): a [`ModelSpec`] becomes a
//! [`ResolvedModel`] (adapter kind, [`crate::provider::WireConfig`], price, context window),
//! or a [`ResolveError`] saying what to set. Keys never appear in `Debug`, `Display` or errors.
//!
//! This layer sits above `provider` and `model` (it builds their `WireConfig` and prices their
//! `Usage`) and below the runner and the command line.

pub mod defaults;
pub mod env;
pub mod file;
pub mod kind;
pub mod load;
mod merge;
pub mod prices;
pub mod providers;
pub mod remote;
pub mod resolve;
pub mod spec;
pub mod trust;
pub mod ui;
pub mod vision;

use std::path::PathBuf;

/// The most versus reads of one config file or `.env` (1 MiB; real ones are a few KiB). A
/// project is someone else's: `.env -> /dev/zero` or a multi-gigabyte file must end in a clear
/// error naming the file, not in the machine's memory running out. See
/// [`crate::fsutil::read_capped`], which also refuses fifos and devices.
pub const FILE_READ_CAP: u64 = 1 << 20;

pub use defaults::{DefaultModels, DefaultsFrom, KEY_DEFAULTS};
pub use env::{Env, EnvError, VarSource};
pub use file::Origin;
pub use kind::ApiKind;
pub use load::{
    Config, ConfigFileInfo, FileRole, KnownModel, LoadOptions, McpServerEntry, WEB_SEARCH_BACKENDS,
    WebSearchConfig, user_config_dir, user_config_path,
};
pub use prices::{ModelInfo, Price, PriceEntry, PriceTable};
pub use providers::{BaseSource, BaseUrl, KeySource, KeyStatus, ProviderDef};
pub use resolve::{CloudSettings, ResolveError, ResolvedModel, resolve};
pub use spec::{ModelSpec, SpecError};
pub use trust::{RecipeTrust, Trust, TrustError, TrustStore};
pub use ui::{NotifyMode, UiConfig};

/// Why the configuration could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A config file exists (or was named with `--config`) but could not be read.
    #[error("could not read the config file {}: {error} (check the path and its permissions)", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error (in the message, so not also a `source`).
        error: std::io::Error,
    },
    /// The file is not valid TOML, has an unknown key, or a value of the wrong type.
    #[error("{}: {message}", location(path, *line, *column))]
    Syntax {
        /// The file.
        path: PathBuf,
        /// 1-based line, when the parser knows it.
        line: Option<usize>,
        /// 1-based column, when the parser knows it.
        column: Option<usize>,
        /// What is wrong (and which keys are accepted, for unknown keys).
        message: String,
    },
    /// A value is well-formed TOML but not a valid setting.
    #[error("{origin}: {message}")]
    Invalid {
        /// Where the setting is.
        origin: Origin,
        /// What is wrong and what to write instead.
        message: String,
    },
    /// The project's `.env` could not be read.
    #[error(transparent)]
    Env(#[from] EnvError),
    /// Deciding whether the project is trusted failed (a project file could not be read).
    #[error(transparent)]
    Trust(#[from] TrustError),
    /// The built-in price table is broken (a bug).
    #[error(transparent)]
    Builtin(#[from] prices::BuiltinTableError),
}

fn location(path: &std::path::Path, line: Option<usize>, column: Option<usize>) -> String {
    match (line, column) {
        (Some(l), Some(c)) => format!("{}:{l}:{c}", path.display()),
        (Some(l), None) => format!("{}:{l}", path.display()),
        _ => path.display().to_string(),
    }
}

/// Loads everything a command needs from a project directory: the environment (process, plus
/// the keys of the project's `.env`) and the layered config. `config_file` is `--config FILE`
/// (replaces the user config). The project's `.versus/config.toml` and `.env` are read only
/// when the user trusts the folder ([`trust`]) or `trust_once` (`--trust`) says so for this
/// run; otherwise [`Config::trust`] carries the notice front ends print.
pub fn load(
    project_dir: &std::path::Path,
    config_file: Option<&std::path::Path>,
    trust_once: bool,
) -> Result<(Config, Env), ConfigError> {
    let store = TrustStore::for_user().ok();
    let trust = if trust_once {
        Trust::Trusted
    } else {
        match &store {
            Some(store) => store.check(project_dir)?,
            // No state folder: nothing can have been trusted.
            None => TrustStore::at(std::path::PathBuf::new()).check(project_dir)?,
        }
    };
    let project_trusted =
        trust_once || store.is_some_and(|store| store.folder_trusted(project_dir));
    let mut env = Env::from_process();
    if trust.allows_project_files() {
        env = env.with_dotenv_file(&project_dir.join(".env"))?;
    }
    let options = LoadOptions {
        project_dir: trust
            .allows_project_files()
            .then(|| project_dir.to_path_buf()),
        config_file: config_file.map(std::path::Path::to_path_buf),
    };
    let mut config = Config::load(&options, &env)?;
    config.trust = trust;
    config.project_trusted = project_trusted;
    Ok((config, env))
}
