//! What `versus ask --pick` and `versus pick` share: the engine's choice of one model's whole
//! change set (or none of them), carrying it out, and what the apply did, as the output says
//! it. `ask --pick` picks right after its turn; `versus pick` picks later, from the turn a
//! session left unchosen, without running any model again.

use std::io::Write;

use anyhow::bail;
use clap::ValueEnum;

use versus::apply::compose::{Selection, compose};
use versus::apply::{AppliedAs, Resolution};
use versus::engine::{ChoiceOutcome, ChoiceRequest, EngineEvent, EngineEvents, EngineHandle, Op};
use versus::sanitize::{line, name};
use versus::workspace::changeset::ChangeSet;

/// What to do with a file you changed since the run started when the merge conflicts.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ConflictArg {
    /// Leave your file alone (default).
    Skip,
    /// Replace your file with the model's version.
    Overwrite,
    /// Write the merge with conflict markers for you to resolve.
    Markers,
}

impl ConflictArg {
    fn resolution(self) -> Resolution {
        match self {
            ConflictArg::Skip => Resolution::Skip,
            ConflictArg::Overwrite => Resolution::Overwrite,
            ConflictArg::Markers => Resolution::Markers,
        }
    }
}

/// How a pick treats the user's own edits and another versus holding the project.
#[derive(Debug, Clone, Copy)]
pub struct PickOptions {
    /// Conflicts with the user's edits since the turn.
    pub on_conflict: ConflictArg,
    /// Refuse at once when another versus applies to or rewinds the project.
    pub no_wait: bool,
}

/// The engine's choice for picking `pick` (a model's label, or `none`) in `turn`: that model's
/// whole change set (or, when it changed no file, its answer), or none of them. `prompt` is
/// the turn's, which names the apply in the journal and in `versus rewind`.
pub fn choice(
    sets: &[ChangeSet],
    pick: &str,
    options: PickOptions,
    prompt: &str,
    turn: u32,
) -> anyhow::Result<ChoiceRequest> {
    let mut request = ChoiceRequest {
        turn,
        resolve_rest: Some(options.on_conflict.resolution()),
        lock_wait: crate::cli::lock_wait(options.no_wait),
        ..ChoiceRequest::default()
    };
    if pick == "none" {
        return Ok(request);
    }
    let changed = sets.iter().any(|s| s.model == pick && !s.is_empty());
    if changed {
        request.plan = Some(compose(sets, &Selection::new().change_set(pick), prompt)?);
    } else {
        request.chosen = vec![pick.to_string()];
    }
    Ok(request)
}

/// Submits `request` and waits for the engine to carry it out.
pub async fn choose(
    handle: &EngineHandle,
    events: &mut EngineEvents,
    request: ChoiceRequest,
) -> anyhow::Result<ChoiceOutcome> {
    handle.submit(Op::Choose(request))?;
    loop {
        match events.recv().await {
            Some(EngineEvent::Chosen(outcome)) => return Ok(outcome),
            Some(EngineEvent::Failed { error, .. }) => return Err(error.into()),
            Some(_) => {}
            None => bail!("the session engine stopped before the choice was made"),
        }
    }
}

/// What a pick did, for the output (`shown` is the name the output uses for the model: its
/// label, or its alias in a blind session).
#[derive(Debug, serde::Serialize)]
pub struct PickReport {
    /// The model as the output names it.
    #[serde(rename = "model")]
    pub shown: String,
    /// The apply, when anything was written (what `versus rewind` undoes).
    pub apply_id: Option<String>,
    /// Each path and what became of it.
    pub files: Vec<(String, String)>,
}

impl PickReport {
    /// The report of `outcome`, and how many files a conflict left unwritten (a pick that
    /// left any fails: exit code 1).
    pub fn of(shown: &str, outcome: &ChoiceOutcome) -> (PickReport, usize) {
        let mut conflicts = 0;
        let files = outcome
            .files
            .iter()
            .map(|(path, applied_as)| {
                let what = match applied_as {
                    AppliedAs::Written => "written",
                    AppliedAs::Deleted => "deleted",
                    AppliedAs::Merged => "merged with your edits",
                    AppliedAs::Overwritten => "overwritten (conflict)",
                    AppliedAs::MarkersWritten => "conflict markers written",
                    AppliedAs::AlreadyApplied => "already as proposed",
                    AppliedAs::Skipped => {
                        conflicts += 1;
                        "skipped: conflicts with your edits"
                    }
                    AppliedAs::Unresolved => {
                        conflicts += 1;
                        "not written: conflicts with your edits"
                    }
                    AppliedAs::MarkersUnavailable => {
                        conflicts += 1;
                        "not written: conflict, and markers cannot be written here"
                    }
                    // Reported, not a conflict: the rest of the pick was applied as chosen.
                    AppliedAs::Refused => {
                        let why = outcome.refused.get(path).map_or("refused", String::as_str);
                        return (path.clone(), format!("not written: {why}"));
                    }
                };
                (path.clone(), what.to_string())
            })
            .collect();
        (
            PickReport {
                shown: shown.to_string(),
                apply_id: outcome.apply_id.clone(),
                files,
            },
            conflicts,
        )
    }

    /// Writes the report as text: what was applied, file by file, and how to undo it.
    pub fn write(&self, out: &mut impl Write) -> std::io::Result<()> {
        match &self.apply_id {
            Some(id) => writeln!(out, "Applied {} (apply {id}):", line(&self.shown))?,
            None => writeln!(out, "Nothing to write for {}:", line(&self.shown))?,
        }
        for (path, what) in &self.files {
            writeln!(out, "  {}: {}", name(path), line(what))?;
        }
        writeln!(out, "Undo with: versus rewind")
    }
}
