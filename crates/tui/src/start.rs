//! Starting a session: which models run, and demo mode when none can.
//!
//! The rule (docs/tui.md): models given with `-m` must run — if none can, versus stops and
//! says why. Without `-m`, the config's `models` are used, else the default model of each
//! provider whose key is set (`Config::default_models_for`, shown in the banner); when there
//! are none, or none of them has its key, versus writes the shipped example project to a new folder under the system
//! temp folder (kept, so you can look at it afterwards), runs the three scripted demo models
//! there, and explains in a banner how to add real models. Your current folder is never
//! touched in demo mode.

use std::path::{Path, PathBuf};

use versus_core::config::{Config, ConfigError, Env, TrustStore};
use versus_core::example;
use versus_core::session::now;

use super::engine::{Model, Resolver};
use super::strings::demo_banner;

/// Models that can run, by label.
pub type Models = Vec<(String, Model)>;

/// Where the models come from.
#[derive(Debug)]
pub enum Choice {
    /// These models run in the user's project; `warnings` name the ones skipped.
    Models {
        /// Resolved models.
        models: Vec<(String, Model)>,
        /// One line per skipped model.
        warnings: Vec<String>,
        /// Banner lines: which default models were picked from the keys set, when no model
        /// was named.
        banner: Vec<String>,
    },
    /// Demo mode in `project`, with a banner.
    Demo {
        /// The example project folder.
        project: PathBuf,
        /// The demo models.
        models: Vec<(String, Model)>,
        /// Banner lines.
        banner: Vec<String>,
    },
}

/// Why a session cannot start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// No model given with `-m` (or recorded in a reopened session) can run.
    #[error("no model can run: {0}")]
    NoModel(String),
    /// The example project could not be written.
    #[error("could not write the example project to {}: {source} (free some space in the temp folder, or pass -m SPEC)", path.display())]
    Demo {
        /// Where.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// Decides the models of a new session.
pub fn choose(
    flags: &[String],
    project: &Path,
    config: &Config,
    env: &Env,
    http: &reqwest::Client,
) -> Result<Choice, StartError> {
    let resolver = Resolver {
        project,
        config,
        env,
        http,
    };
    if !flags.is_empty() {
        let (models, errors) = resolver.resolve_specs(flags);
        if models.is_empty() {
            return Err(StartError::NoModel(errors.join("; ")));
        }
        return Ok(Choice::Models {
            models,
            warnings: errors,
            banner: Vec::new(),
        });
    }
    // The config's `models`, else one default model per key set (decided in the core, as for
    // `ask` and `run`); demo mode only when neither gives a model that can run.
    let defaults = config.default_models_for(env);
    let configured: Vec<String> = defaults.specs.iter().map(|s| s.to_string()).collect();
    let why = if configured.is_empty() {
        "no model is configured (no -m flag, no `models` in the config, no API key set)."
            .to_string()
    } else {
        let (models, errors) = resolver.resolve_specs(&configured);
        if !models.is_empty() {
            return Ok(Choice::Models {
                models,
                warnings: errors,
                banner: defaults.note().into_iter().collect(),
            });
        }
        format!(
            "none of your configured models can run ({}).",
            errors.join("; ")
        )
    };
    let dir = demo_dir();
    write_demo(&dir).map_err(|source| StartError::Demo {
        path: dir.clone(),
        source,
    })?;
    let resolver = Resolver {
        project: &dir,
        config,
        env,
        http,
    };
    let specs: Vec<String> = example::MODELS.iter().map(|m| m.to_string()).collect();
    let (models, errors) = resolver.resolve_specs(&specs);
    if models.is_empty() {
        return Err(StartError::NoModel(errors.join("; ")));
    }
    let banner = demo_banner(
        &project.display().to_string(),
        &dir.display().to_string(),
        &why,
    );
    Ok(Choice::Demo {
        project: dir,
        models,
        banner,
    })
}

/// The models of a reopened session: `specs` (its last turn's models, or `-m` flags) that can
/// run; the others are returned as warnings. Never demo mode: the session has its own models.
pub fn choose_for_session(
    specs: &[String],
    project: &Path,
    config: &Config,
    env: &Env,
    http: &reqwest::Client,
) -> Result<(Models, Vec<String>), StartError> {
    let resolver = Resolver {
        project,
        config,
        env,
        http,
    };
    let (models, errors) = resolver.resolve_specs(specs);
    if models.is_empty() {
        return Err(StartError::NoModel(if errors.is_empty() {
            "the session has no model yet; give one with -m SPEC".to_string()
        } else {
            errors.join("; ")
        }));
    }
    Ok((models, errors))
}

/// Writes the example project and its own settings (the review check) into `dir`.
pub fn write_demo(dir: &Path) -> std::io::Result<()> {
    example::write_project(dir)?;
    example::write_settings(dir)
}

/// Trusts the demo folder `dir` in `store`: versus wrote every byte of it ([`write_demo`]),
/// and without trust its settings would not count when the user continues the demo there
/// (`versus -C DIR --continue`, as the quit line says). Best effort: when the user's state
/// folder cannot be used, continuing asks first; the demo session itself reads the settings
/// either way ([`demo_config`]).
pub fn trust_demo(dir: &Path, store: Result<TrustStore, versus_core::config::TrustError>) {
    if let Err(err) = store.and_then(|store| store.trust(dir)) {
        tracing::warn!(error = %err, "could not record trust for the demo folder");
    }
}

/// The config of a demo session: the user's (or `--config`) with the example project's own
/// settings over it, read as trusted since versus wrote them ([`write_demo`]).
pub fn demo_config(dir: &Path, config_file: Option<&Path>) -> Result<(Config, Env), ConfigError> {
    versus_core::config::load(dir, config_file, true)
}

/// A new folder for the example project: `<temp>/versus-demo-<time>-<pid>`.
fn demo_dir() -> PathBuf {
    std::env::temp_dir().join(format!(
        "versus-demo-{}-{}",
        now().compact(),
        std::process::id()
    ))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn setup() -> (Config, Env, reqwest::Client) {
        let env = Env::empty();
        let config = Config::builtin().unwrap();
        let http = versus_core::provider::http::default_client().unwrap();
        (config, env, http)
    }

    #[test]
    fn flags_that_cannot_run_stop_the_start() {
        let (config, env, http) = setup();
        let dir = tempfile::tempdir().unwrap();
        let err = choose(
            &["openai/gpt-5".to_string()],
            dir.path(),
            &config,
            &env,
            &http,
        )
        .unwrap_err();
        assert!(err.to_string().contains("OPENAI_API_KEY"), "{err}");
        let ok = choose(&["demo/good".to_string()], dir.path(), &config, &env, &http).unwrap();
        assert!(matches!(ok, Choice::Models { ref models, .. } if models.len() == 1));
    }

    #[test]
    fn nothing_configured_means_demo_mode_in_a_new_folder() {
        let (config, env, http) = setup();
        let dir = tempfile::tempdir().unwrap();
        let Choice::Demo {
            project,
            models,
            banner,
        } = choose(&[], dir.path(), &config, &env, &http).unwrap()
        else {
            panic!("expected demo mode");
        };
        assert!(project.join("src/pricing.rs").is_file());
        assert_eq!(models.len(), 3);
        // Its own settings turn the review check on.
        let (demo, _) = demo_config(&project, None).unwrap();
        assert_eq!(
            demo.check.as_deref(),
            Some("cargo test --quiet --all-targets")
        );
        assert!(banner[0].contains("no model is configured"), "{banner:?}");
        // The banner says the user's folder is untouched and where the demo runs, and its
        // advice works: `-m` in the user's folder, not `/models add` into the demo session.
        let text = banner.join(" ");
        let folder = dir.path().display().to_string();
        assert!(
            text.contains(&format!("Your folder {folder} is not touched")),
            "{text}"
        );
        assert!(text.contains(&project.display().to_string()), "{text}");
        assert!(
            text.contains("versus -m openai/gpt-5` in your folder"),
            "{text}"
        );
        assert!(!text.contains("/models add"), "{text}");
        assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
        std::fs::remove_dir_all(project).unwrap();
    }
}
