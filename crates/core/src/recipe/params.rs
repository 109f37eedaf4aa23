//! `## Model Parameters`: the `key: value` lines for every model, and per-model lines
//! `model-spec: key=value, ...` (a versus addition).
//!
//! A line with `=` is a per-model line. Its spec ends at the last `:` before the first `=`, so
//! specs with colons (`ollama/qwen2.5-coder:7b: temperature=0.2`) read as written. A per-model
//! line changes only the keys it names, over whatever the layer below said for that model.

use crate::config::ModelSpec;
use crate::model::Reasoning;

use super::keys;
use super::model::{Choice, ModelOverride, Recipe, SourceLine};
use super::problems::{ProblemKind, did_you_mean, list};
use super::sections::{Ctx, Item, SectionId, assignments};
use super::values::{self, Value};

/// The keys of a per-model line.
const KEYS: &[&str] = &[
    "temperature",
    "max_output_tokens",
    "reasoning_effort",
    "seed",
];

/// Reads the section: global keys through the key table, per-model lines here.
pub(crate) fn read(items: &[Item], recipe: &mut Recipe, ctx: &mut Ctx) {
    let (per_model, global): (Vec<&Item>, Vec<&Item>) =
        items.iter().partition(|i| i.text.contains('='));
    let global: Vec<Item> = global.into_iter().cloned().collect();
    keys::read(&global, SectionId::ModelParameters, recipe, ctx);
    let mut seen: Vec<(ModelSpec, usize)> = Vec::new();
    for item in per_model {
        let Some(line) = per_model_line(item, ctx) else {
            continue;
        };
        if let Some((_, first)) = seen.iter().find(|(s, _)| *s == line.spec) {
            ctx.problem(
                item.line,
                ProblemKind::DuplicateEntry,
                format!(
                    "`{}` already has a line at {first}; put all its parameters on one line",
                    line.spec
                ),
            );
            continue;
        }
        seen.push((line.spec.clone(), item.line));
        match recipe
            .parameters
            .per_model
            .iter_mut()
            .find(|o| o.spec == line.spec)
        {
            Some(existing) => {
                existing.temperature = line.temperature.or(existing.temperature);
                existing.max_output_tokens = line.max_output_tokens.or(existing.max_output_tokens);
                existing.reasoning = line.reasoning.or(existing.reasoning);
                existing.seed = line.seed.or(existing.seed);
                existing.line = line.line;
            }
            None => recipe.parameters.per_model.push(line),
        }
    }
}

fn per_model_line(item: &Item, ctx: &mut Ctx) -> Option<ModelOverride> {
    let text = item.text.as_str();
    let eq = text.find('=').unwrap_or(text.len());
    let Some(colon) = text[..eq].rfind(':') else {
        ctx.problem(
            item.line,
            ProblemKind::Syntax,
            format!(
                "`{text}`: write `key: value` for every model, or `PROVIDER/MODEL: key=value, ...` \
                 for one model"
            ),
        );
        return None;
    };
    let spec = match ctx.model_spec(&text[..colon]) {
        Ok(spec) => spec,
        Err(e) => {
            ctx.problem(
                item.line,
                ProblemKind::BadModel,
                format!("{e} (a per-model line is `PROVIDER/MODEL: key=value, ...`)"),
            );
            return None;
        }
    };
    let mut line = ModelOverride {
        spec,
        temperature: None,
        max_output_tokens: None,
        reasoning: None,
        seed: None,
        line: SourceLine(item.line),
    };
    let mut seen: Vec<String> = Vec::new();
    for pair in assignments(&text[colon + 1..]) {
        let (key, value) = match pair {
            Ok(p) => p,
            Err(part) => {
                ctx.problem(
                    item.line,
                    ProblemKind::Syntax,
                    format!("`{part}` is not `key=value`; keys: {}", list(KEYS)),
                );
                continue;
            }
        };
        if seen.contains(&key) {
            ctx.problem(
                item.line,
                ProblemKind::DuplicateKey,
                format!("`{key}` is given twice for `{}`; keep one", line.spec),
            );
            continue;
        }
        seen.push(key.clone());
        let (result, accepts): (Value<()>, String) = match key.as_str() {
            "temperature" => (
                keys::temperature(value).map(|v| line.temperature = Some(v)),
                keys::temperature_accepts(),
            ),
            "max_output_tokens" => (
                keys::max_tokens(value).map(|v| line.max_output_tokens = Some(v)),
                keys::max_tokens_accepts(),
            ),
            "reasoning_effort" => (
                values::choice::<Reasoning>(value).map(|v| line.reasoning = Some(v)),
                values::choices::<Reasoning>(),
            ),
            "seed" => (
                keys::seed(value).map(|v| line.seed = Some(v)),
                keys::seed_accepts(),
            ),
            _ => {
                ctx.problem(
                    item.line,
                    ProblemKind::UnknownKey,
                    format!(
                        "unknown parameter `{key}` for `{}`{}; keys: {}",
                        line.spec,
                        did_you_mean(&key, KEYS.iter().copied()),
                        list(KEYS)
                    ),
                );
                continue;
            }
        };
        if let Err(e) = result {
            ctx.problem(
                item.line,
                e.kind,
                format!(
                    "`{key}` for `{}`: {}; accepted: {accepts}",
                    line.spec, e.reason
                ),
            );
        }
    }
    if seen.is_empty() {
        ctx.problem(
            item.line,
            ProblemKind::MissingValue,
            format!(
                "no parameters for `{}`; write e.g. `{}: temperature=0.2`",
                line.spec, line.spec
            ),
        );
        return None;
    }
    Some(line)
}

/// Writes a per-model line's settings (`temperature=0.2, seed=7`), only the keys it sets.
pub(crate) fn format_override(o: &ModelOverride) -> String {
    let mut parts = Vec::new();
    if let Some(t) = o.temperature {
        parts.push(format!("temperature={}", keys::or_default(t)));
    }
    if let Some(m) = o.max_output_tokens {
        parts.push(format!("max_output_tokens={}", keys::or_default(m)));
    }
    if let Some(r) = o.reasoning {
        parts.push(format!("reasoning_effort={}", r.as_str()));
    }
    if let Some(s) = o.seed {
        parts.push(format!("seed={}", keys::or_default(s)));
    }
    parts.join(", ")
}
