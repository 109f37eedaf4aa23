//! The `key: value` sections: Constraints, Context, Model Parameters (the keys for every
//! model), Workspace, Sandbox, Review, Metadata.
//!
//! Each key is one row of a table: its name, what it accepts, how to set it from text and how
//! to write it back. Reading, writing and the accepted-values text of error messages all come
//! from the same row, so they cannot drift apart; a key the user leaves out keeps the value
//! of the layer below (the built-in defaults).

use std::time::Duration;

use crate::model::Reasoning;
use crate::workspace::Isolation;

use super::duration;
use super::model::{
    Choice, CompactStrategy, FilesystemAccess, NetworkAccess, Recipe, SubAgentsMode, TaskMode,
};
use super::problems::{ProblemKind, did_you_mean, list};
use super::sections::{Ctx, Item, SectionId, key_value};
use super::values::{self, Value};

/// One key of a key/value section.
pub(crate) struct Key {
    /// The key as written.
    pub name: &'static str,
    /// What the key accepts, for error messages.
    pub accepts: fn() -> String,
    /// Sets the key from its text.
    pub set: fn(&mut Recipe, &str) -> Value<()>,
    /// The key's value as a recipe writes it.
    pub get: fn(&Recipe) -> String,
}

const SECOND: Duration = Duration::from_secs(1);

fn text_or_none(v: &Option<String>) -> String {
    v.clone().unwrap_or_else(|| "none".into())
}

fn opt_text(text: &str) -> Value<Option<String>> {
    values::optional(text, |t| Ok(t.to_string()))
}

fn duration_accepts() -> String {
    format!("{} (at least 1s)", duration::ACCEPTED)
}

/// The keys of a key/value section (empty for the others).
pub(crate) fn keys(id: SectionId) -> &'static [Key] {
    match id {
        SectionId::Constraints => CONSTRAINTS,
        SectionId::Context => CONTEXT,
        SectionId::ModelParameters => PARAMETERS,
        SectionId::Workspace => WORKSPACE,
        SectionId::Sandbox => SANDBOX,
        SectionId::Review => REVIEW,
        SectionId::Metadata => METADATA,
        _ => &[],
    }
}

const CONSTRAINTS: &[Key] = &[
    Key {
        name: "timeout",
        accepts: duration_accepts,
        set: |r, v| {
            r.constraints.timeout = values::duration_at_least(v, SECOND)?;
            Ok(())
        },
        get: |r| duration::format(r.constraints.timeout),
    },
    Key {
        name: "bash_timeout",
        accepts: duration_accepts,
        set: |r, v| {
            r.constraints.bash_timeout = values::duration_at_least(v, SECOND)?;
            Ok(())
        },
        get: |r| duration::format(r.constraints.bash_timeout),
    },
    Key {
        name: "bash_spill_max_mb",
        accepts: || "a whole number of MiB, at least 1".into(),
        set: |r, v| {
            let mb: u64 = values::whole(v)?;
            if mb == 0 {
                return Err(values::out_of_range("must be at least 1 (MiB)"));
            }
            r.constraints.bash_spill_max_mb = mb;
            Ok(())
        },
        get: |r| r.constraints.bash_spill_max_mb.to_string(),
    },
    Key {
        name: "max_steps",
        accepts: || "a whole number of at least 0 (0 = unlimited)".into(),
        set: |r, v| {
            r.constraints.max_steps = values::whole(v)?;
            Ok(())
        },
        get: |r| r.constraints.max_steps.to_string(),
    },
    Key {
        name: "max_cost",
        accepts: || "US dollars above 0 (e.g. `0.50`), or `none` for no limit".into(),
        set: |r, v| {
            r.constraints.max_cost = values::optional(v, values::positive)?;
            Ok(())
        },
        get: |r| {
            r.constraints
                .max_cost
                .map_or_else(|| "none".into(), |c| c.to_string())
        },
    },
    Key {
        name: "project_root",
        accepts: || {
            "a folder, relative to the recipe file's folder, or `none` for the folder versus \
             runs in"
                .into()
        },
        set: |r, v| {
            r.constraints.project_root = opt_text(v)?;
            Ok(())
        },
        get: |r| text_or_none(&r.constraints.project_root),
    },
    Key {
        name: "edit_tools",
        accepts: || "`family`, `edit_file`, `apply_patch`, `both`, or `default`".into(),
        set: |r, v| {
            r.constraints.edit_tools = values::optional(v, |t| {
                crate::tools::EditTools::parse(t).map_err(values::bad)
            })?;
            Ok(())
        },
        get: |r| {
            r.constraints
                .edit_tools
                .map_or("default", |e| e.as_str())
                .into()
        },
    },
    Key {
        name: "sub_agents",
        accepts: values::choices::<SubAgentsMode>,
        set: |r, v| {
            r.constraints.sub_agents = values::choice(v)?;
            Ok(())
        },
        get: |r| r.constraints.sub_agents.as_str().into(),
    },
    Key {
        name: "sub_agents_max_depth",
        accepts: || "a whole number from 1 to 8".into(),
        set: |r, v| {
            r.constraints.sub_agents_max_depth = whole_in(v, 1, 8)?;
            Ok(())
        },
        get: |r| r.constraints.sub_agents_max_depth.to_string(),
    },
    Key {
        name: "sub_agents_per_turn",
        accepts: || "a whole number from 1 to 64".into(),
        set: |r, v| {
            r.constraints.sub_agents_per_turn = whole_in(v, 1, 64)?;
            Ok(())
        },
        get: |r| r.constraints.sub_agents_per_turn.to_string(),
    },
];

/// A whole number in `low..=high`.
fn whole_in(v: &str, low: u32, high: u32) -> Value<u32> {
    let n: u32 = values::whole(v)?;
    if !(low..=high).contains(&n) {
        return Err(values::out_of_range(format!(
            "must be from {low} to {high}"
        )));
    }
    Ok(n)
}

const CONTEXT: &[Key] = &[
    Key {
        name: "task_mode",
        accepts: values::choices::<TaskMode>,
        set: |r, v| {
            r.context.task_mode = values::choice(v)?;
            Ok(())
        },
        get: |r| r.context.task_mode.as_str().into(),
    },
    Key {
        name: "max_history_turns",
        accepts: || "a whole number of at least 0 (0 = keep every turn)".into(),
        set: |r, v| {
            r.context.max_history_turns = values::whole(v)?;
            Ok(())
        },
        get: |r| r.context.max_history_turns.to_string(),
    },
    Key {
        name: "strategy",
        accepts: values::choices::<CompactStrategy>,
        set: |r, v| {
            r.context.strategy = values::choice(v)?;
            Ok(())
        },
        get: |r| r.context.strategy.as_str().into(),
    },
    Key {
        name: "compact_threshold",
        accepts: || "a number in (0, 1], e.g. `0.8`".into(),
        set: |r, v| {
            r.context.compact_threshold = values::fraction(v)?;
            Ok(())
        },
        get: |r| r.context.compact_threshold.to_string(),
    },
    Key {
        name: "skills",
        accepts: || {
            "folders holding skill folders, relative to the recipe's folder and inside it,              comma-separated (e.g. `skills, ../shared-skills` is refused: no `..`), or `none`"
                .into()
        },
        set: |r, v| {
            r.context.skills = skill_folders(v)?;
            Ok(())
        },
        get: |r| {
            if r.context.skills.is_empty() {
                "none".into()
            } else {
                r.context.skills.join(", ")
            }
        },
    },
];

/// Reads `skills`: relative folders inside the recipe's folder (a recipe that came with a
/// project cannot point versus at the user's other folders), or `none`.
fn skill_folders(v: &str) -> Value<Vec<String>> {
    let v = values::required(v)?;
    if values::is_unset(v) {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for part in v.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let path = std::path::Path::new(part);
        if path.is_absolute()
            || path.components().any(|c| {
                !matches!(
                    c,
                    std::path::Component::Normal(_) | std::path::Component::CurDir
                )
            })
        {
            return Err(values::bad(format!(
                "`{part}` must be a folder inside the recipe's folder (relative, no `..`)"
            )));
        }
        out.push(part.to_string());
    }
    Ok(out)
}

/// What `temperature` accepts (shared with per-model lines).
pub(crate) fn temperature_accepts() -> String {
    "a number in [0, 2], or `default` for the provider's default".into()
}

/// Reads a temperature (shared with per-model lines).
pub(crate) fn temperature(v: &str) -> Value<Option<f32>> {
    values::optional(v, |t| values::decimal_in(t, 0.0, 2.0).map(|n| n as f32))
}

/// What `max_output_tokens` accepts.
pub(crate) fn max_tokens_accepts() -> String {
    "a whole number of at least 1, or `default`".into()
}

/// Reads `max_output_tokens`.
pub(crate) fn max_tokens(v: &str) -> Value<Option<u32>> {
    values::optional(v, |t| values::at_least(t, 1))
}

/// What `seed` accepts.
pub(crate) fn seed_accepts() -> String {
    "a whole number of at least 0, or `default`".into()
}

/// Reads `seed`.
pub(crate) fn seed(v: &str) -> Value<Option<u64>> {
    values::optional(v, values::whole)
}

/// Writes an optional parameter (`default` when unset).
pub(crate) fn or_default<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "default".into(), |x| x.to_string())
}

const PARAMETERS: &[Key] = &[
    Key {
        name: "temperature",
        accepts: temperature_accepts,
        set: |r, v| {
            r.parameters.all.temperature = temperature(v)?;
            Ok(())
        },
        get: |r| or_default(r.parameters.all.temperature),
    },
    Key {
        name: "max_output_tokens",
        accepts: max_tokens_accepts,
        set: |r, v| {
            r.parameters.all.max_output_tokens = max_tokens(v)?;
            Ok(())
        },
        get: |r| or_default(r.parameters.all.max_output_tokens),
    },
    Key {
        name: "reasoning_effort",
        accepts: values::choices::<Reasoning>,
        set: |r, v| {
            r.parameters.all.reasoning = values::choice(v)?;
            Ok(())
        },
        get: |r| r.parameters.all.reasoning.as_str().into(),
    },
    Key {
        name: "seed",
        accepts: seed_accepts,
        set: |r, v| {
            r.parameters.all.seed = seed(v)?;
            Ok(())
        },
        get: |r| or_default(r.parameters.all.seed),
    },
];

const WORKSPACE: &[Key] = &[
    Key {
        name: "isolation",
        accepts: || format!("`auto`, {}", values::choices::<Isolation>()),
        set: |r, v| {
            let v = values::required(v)?;
            r.workspace.isolation = if v.eq_ignore_ascii_case("auto") {
                None
            } else {
                Some(values::choice(v)?)
            };
            Ok(())
        },
        get: |r| r.workspace.isolation.map_or("auto", |i| i.as_str()).into(),
    },
    Key {
        name: "setup",
        accepts: || "a shell command run once in each workspace, or `none`".into(),
        set: |r, v| {
            r.workspace.setup = opt_text(v)?;
            Ok(())
        },
        get: |r| text_or_none(&r.workspace.setup),
    },
    Key {
        name: "keep",
        accepts: || "`true` or `false`".into(),
        set: |r, v| {
            r.workspace.keep = values::boolean(v)?;
            Ok(())
        },
        get: |r| r.workspace.keep.to_string(),
    },
];

const SANDBOX: &[Key] = &[
    Key {
        name: "filesystem",
        accepts: values::choices::<FilesystemAccess>,
        set: |r, v| {
            r.sandbox.filesystem = values::choice(v)?;
            Ok(())
        },
        get: |r| r.sandbox.filesystem.as_str().into(),
    },
    Key {
        name: "network",
        accepts: values::choices::<NetworkAccess>,
        set: |r, v| {
            r.sandbox.network = values::choice(v)?;
            Ok(())
        },
        get: |r| r.sandbox.network.as_str().into(),
    },
    Key {
        name: "allow_local_fetch",
        accepts: || "`true` or `false`".into(),
        set: |r, v| {
            r.sandbox.allow_local_fetch = values::boolean(v)?;
            Ok(())
        },
        get: |r| r.sandbox.allow_local_fetch.to_string(),
    },
    Key {
        name: "setup_network",
        accepts: || "`true` or `false`".into(),
        set: |r, v| {
            r.sandbox.setup_network = values::boolean(v)?;
            Ok(())
        },
        get: |r| r.sandbox.setup_network.to_string(),
    },
];

const REVIEW: &[Key] = &[
    Key {
        name: "blind",
        accepts: || "`true` or `false`".into(),
        set: |r, v| {
            r.review.blind = values::boolean(v)?;
            Ok(())
        },
        get: |r| r.review.blind.to_string(),
    },
    Key {
        name: "check",
        accepts: || {
            "a shell command run in every workspace when its model finishes, or `none`".into()
        },
        set: |r, v| {
            r.review.check = opt_text(v)?;
            Ok(())
        },
        get: |r| text_or_none(&r.review.check),
    },
];

const METADATA: &[Key] = &[
    Key {
        name: "description",
        accepts: || "one line of text".into(),
        set: |r, v| {
            r.metadata.description = v.trim().to_string();
            Ok(())
        },
        get: |r| r.metadata.description.clone(),
    },
    Key {
        name: "tags",
        accepts: || "comma-separated words, e.g. `rust, tests`".into(),
        set: |r, v| {
            r.metadata.tags = v
                .split(',')
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .map(String::from)
                .collect();
            Ok(())
        },
        get: |r| r.metadata.tags.join(", "),
    },
    Key {
        name: "author",
        accepts: || "one line of text".into(),
        set: |r, v| {
            r.metadata.author = v.trim().to_string();
            Ok(())
        },
        get: |r| r.metadata.author.clone(),
    },
    Key {
        name: "name",
        accepts: || "one line of text (Errata's display name; the `# Title` stays the name)".into(),
        set: |r, v| {
            r.metadata.name = v.trim().to_string();
            Ok(())
        },
        get: |r| r.metadata.name.clone(),
    },
    Key {
        name: "version",
        accepts: || "one line of text (the version of this recipe's content)".into(),
        set: |r, v| {
            r.metadata.version = v.trim().to_string();
            Ok(())
        },
        get: |r| r.metadata.version.clone(),
    },
];

/// Reads `key: value` items of section `id` into `recipe`.
pub(crate) fn read(items: &[Item], id: SectionId, recipe: &mut Recipe, ctx: &mut Ctx) {
    let table = keys(id);
    let names: Vec<&str> = table.iter().map(|k| k.name).collect();
    for item in items {
        let Some((name, value)) = key_value(&item.text) else {
            ctx.problem(
                item.line,
                ProblemKind::Syntax,
                format!(
                    "`{}` is not a `key: value` line; keys of ## {}: {}",
                    item.text,
                    id.title(),
                    list(&names)
                ),
            );
            continue;
        };
        let Some(key) = table.iter().find(|k| k.name == name) else {
            ctx.problem(
                item.line,
                ProblemKind::UnknownKey,
                format!(
                    "unknown key `{name}` in ## {}{}; keys: {}",
                    id.title(),
                    did_you_mean(&name, names.iter().copied()),
                    list(&names)
                ),
            );
            continue;
        };
        if let Some(first) = ctx.trace.keys.get(&(id, key.name)) {
            ctx.problem(
                item.line,
                ProblemKind::DuplicateKey,
                format!(
                    "`{name}` is already set in ## {} at line {first}; keep one of them",
                    id.title()
                ),
            );
            continue;
        }
        ctx.trace.keys.insert((id, key.name), item.line);
        if let Err(e) = (key.set)(recipe, value) {
            ctx.problem(
                item.line,
                e.kind,
                format!(
                    "`{name}` in ## {}: {}; accepted: {}",
                    id.title(),
                    e.reason,
                    (key.accepts)()
                ),
            );
        }
    }
}
