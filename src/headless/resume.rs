//! Resuming: the checks that the run in an output folder is the run asked for now, and the
//! models it started with.
//!
//! A resume must not mix two different runs in one report, so it refuses a recipe whose bytes
//! changed, another project, or other `-m` models; without `-m` it takes the models from the
//! checkpoint, so `versus run RECIPE --resume` needs nothing else.

use std::path::Path;

use crate::config::ModelSpec;

use super::checkpoint::{self, CHECKPOINT_VERSION};
use super::layout;
use super::{HeadlessError, RequestedModel, RunRequest};

/// Reads the checkpoint of `dir` and checks that it is the run asked for now.
pub(super) fn load_resume(
    dir: &Path,
    request: &RunRequest,
) -> Result<checkpoint::State, HeadlessError> {
    let path = dir.join(layout::CHECKPOINT_FILE);
    if !path.is_file() {
        return Err(HeadlessError::NothingToResume {
            path: dir.to_path_buf(),
            why: format!("it has no {}", layout::CHECKPOINT_FILE),
        });
    }
    let read = checkpoint::read(&path)?;
    // A torn last line is a record nobody was told was written (the next append removes
    // it); any other line that cannot be read is said, never dropped silently: the job it
    // recorded runs again.
    for damage in read
        .damaged
        .iter()
        .filter(|d| d.kind != crate::jsonl::DamageKind::TornTail)
    {
        let mut err = crate::sanitize::stderr();
        let _ = std::io::Write::write_fmt(
            &mut err,
            format_args!(
                "versus: WARNING: {}\n",
                crate::sanitize::line(&damage.to_string())
            ),
        );
    }
    let records = read.records;
    let state =
        checkpoint::State::replay(&records).ok_or_else(|| HeadlessError::NothingToResume {
            path: dir.to_path_buf(),
            why: "its checkpoint has no header (the run was killed as it started)".to_string(),
        })?;
    let mismatch = |why: String| HeadlessError::ResumeMismatch {
        path: dir.to_path_buf(),
        why,
    };
    let header = &state.header;
    if header.checkpoint_version != CHECKPOINT_VERSION {
        return Err(mismatch(format!(
            "its checkpoint has version {} and this versus writes version {CHECKPOINT_VERSION}; start a new run",
            header.checkpoint_version
        )));
    }
    if header.recipe_hash != request.recipe_hash {
        return Err(mismatch(format!(
            "the recipe changed since the run started ({} then); restore it, or start a new run without --resume",
            header.recipe_file
        )));
    }
    let project = request.project.display().to_string();
    if header.project != project {
        return Err(mismatch(format!(
            "it ran on the project {} and this run is on {project}; run from the same folder (or -C DIR)",
            header.project
        )));
    }
    if request.models_from_command_line {
        let then: Vec<&str> = header.models.iter().map(|m| m.spec.as_str()).collect();
        let now: Vec<String> = request.models.iter().map(|m| m.spec.to_string()).collect();
        if then != now {
            return Err(mismatch(format!(
                "it ran the models {}; resume without -m, or with exactly those models",
                then.join(", ")
            )));
        }
    }
    Ok(state)
}

/// The models the checkpoint started with.
pub(super) fn header_models(
    state: &checkpoint::State,
) -> Result<Vec<RequestedModel>, HeadlessError> {
    state
        .header
        .models
        .iter()
        .map(|m| {
            let spec = ModelSpec::parse(&m.spec).map_err(|e| HeadlessError::Model {
                model: m.spec.clone(),
                message: format!("the checkpoint's model cannot be read: {e}"),
            })?;
            Ok(RequestedModel {
                spec,
                script_base: m.script_base.clone(),
            })
        })
        .collect()
}
