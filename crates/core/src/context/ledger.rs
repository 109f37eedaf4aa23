//! The fairness ledger: for each model of a turn, a hash of what it was given (the system
//! prompt, the instruction files, the skill catalog, the tools with their schemas, the seed,
//! the limits), so versus can prove every model of a comparison got the same, and name what
//! differed when one did not (a tool server that failed for one model, other limits).
//!
//! The parts are hashed one by one, so a difference is named by part; the tools' names and
//! the seed and limits' text are kept beside the hashes to say *what* differs.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{ProjectContext, short_hash};
use crate::model::ToolDef;

/// What one model of a turn was given, as the engine saw it when the turn started.
pub struct LedgerInput<'a> {
    /// The model's entry label.
    pub model: &'a str,
    /// Its whole system prompt (context included).
    pub system: &'a str,
    /// The turn's context (instruction files and skill catalog).
    pub context: &'a ProjectContext,
    /// Its tools, with their schemas (its tool servers' included).
    pub tools: &'a [ToolDef],
    /// What its tools' definitions do not say but a fair comparison must know, as `tool: what`
    /// lines (web_search's backend and endpoint); empty when nothing.
    pub tool_settings: &'a [String],
    /// The sampling seed sent, if any.
    pub seed: Option<u64>,
    /// Its limits and sampling settings as one canonical text.
    pub limits: &'a str,
}

/// What one model of a turn was given, owned, so the engine can hash it again once the
/// tools it gets late are known: a tool server starts in the model's workspace after the turn
/// started, and a server that failed for one model must show in the ledger as a difference,
/// not only as an error among its events.
#[derive(Debug, Clone)]
pub struct LedgerSource {
    /// The model's entry label.
    pub model: String,
    /// Its whole system prompt (context included).
    pub system: String,
    /// Its tools with their schemas: its registry's when the turn started, then every tool it
    /// actually got once its tool servers started ([`LedgerSource::tools_given`]).
    pub tools: Vec<ToolDef>,
    /// See [`LedgerInput::tool_settings`].
    pub tool_settings: Vec<String>,
    /// The sampling seed sent, if any.
    pub seed: Option<u64>,
    /// Its limits and sampling settings as one canonical text.
    pub limits: String,
}

impl LedgerSource {
    /// The model's tools are final: what it was given once its tool servers started (their
    /// tools added, a failed server's missing).
    pub fn tools_given(&mut self, tools: Vec<ToolDef>) {
        self.tools = tools;
    }

    /// Hashes it, with the turn's `context`.
    pub fn entry(&self, context: &ProjectContext) -> LedgerEntry {
        LedgerEntry::new(&LedgerInput {
            model: &self.model,
            system: &self.system,
            context,
            tools: &self.tools,
            tool_settings: &self.tool_settings,
            seed: self.seed,
            limits: &self.limits,
        })
    }
}

/// One model's line of the ledger, as recorded in the session log.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LedgerEntry {
    /// The model's entry label.
    #[serde(default)]
    pub model: String,
    /// One hash over every part.
    #[serde(default)]
    pub hash: String,
    /// Each part's hash: `system`, `context`, `skills`, `tools`, `seed`, `limits`.
    #[serde(default)]
    pub parts: BTreeMap<String, String>,
    /// The tools' names, in order.
    #[serde(default)]
    pub tools: Vec<String>,
    /// The seed sent.
    #[serde(default)]
    pub seed: Option<u64>,
    /// The limits as text.
    #[serde(default)]
    pub limits: String,
    /// Its tools' settings beyond their definitions (web_search's backend, spawn_agent's
    /// limits), as `tool: what` lines; hashed as the part `tool_settings` only when there are
    /// any, so entries of models without them hash as before.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_settings: Vec<String>,
    /// The sub-agent settings as text, as logs written before sub-agents' limits became a
    /// tool setting recorded them (`None` in newer logs: see `tool_settings`). Read, never
    /// written.
    #[serde(default, skip_serializing)]
    pub sub_agents: Option<String>,
    /// How it differs from what most models of the turn were given (empty: the same).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub differs: Vec<String>,
}

impl LedgerEntry {
    /// Hashes what one model was given.
    pub fn new(input: &LedgerInput<'_>) -> LedgerEntry {
        let mut parts = BTreeMap::new();
        parts.insert("system".to_string(), short_hash(input.system.as_bytes()));
        let mut files = String::new();
        for f in &input.context.files {
            files.push_str(&format!("{:?}\0{}\0{}\0", f.origin, f.path, f.hash));
        }
        parts.insert("context".to_string(), short_hash(files.as_bytes()));
        let mut skills = String::new();
        for s in &input.context.skills {
            skills.push_str(&format!("{}\0{}\0{}\0", s.name, s.description, s.location));
        }
        parts.insert("skills".to_string(), short_hash(skills.as_bytes()));
        let mut tools = String::new();
        let mut names = Vec::new();
        for t in input.tools {
            tools.push_str(&format!(
                "{}\0{}\0{}\0",
                t.name, t.description, t.parameters
            ));
            names.push(t.name.clone());
        }
        parts.insert("tools".to_string(), short_hash(tools.as_bytes()));
        let seed = input.seed.map(|s| s.to_string()).unwrap_or_default();
        parts.insert("seed".to_string(), short_hash(seed.as_bytes()));
        parts.insert("limits".to_string(), short_hash(input.limits.as_bytes()));
        if !input.tool_settings.is_empty() {
            let settings = input.tool_settings.join("\n");
            parts.insert("tool_settings".to_string(), short_hash(settings.as_bytes()));
        }
        let all: String = parts.iter().map(|(k, v)| format!("{k}={v};")).collect();
        LedgerEntry {
            model: input.model.to_string(),
            hash: short_hash(all.as_bytes()),
            parts,
            tools: names,
            seed: input.seed,
            limits: input.limits.to_string(),
            tool_settings: input.tool_settings.to_vec(),
            sub_agents: None,
            differs: Vec::new(),
        }
    }
}

/// Flags the entries that differ from what most models of the turn were given (on a tie, the
/// first model's), naming each part that differs; returns whether every model got the same.
pub fn compare(entries: &mut [LedgerEntry]) -> bool {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for e in entries.iter() {
        match counts.iter_mut().find(|(h, _)| *h == e.hash) {
            Some((_, n)) => *n += 1,
            None => counts.push((&e.hash, 1)),
        }
    }
    let Some(best) = counts.iter().map(|(_, n)| *n).max() else {
        return true;
    };
    let Some(reference) = counts
        .iter()
        .find(|(_, n)| *n == best)
        .and_then(|(h, _)| entries.iter().find(|e| e.hash == *h))
        .cloned()
    else {
        return true;
    };
    let mut same = true;
    for e in entries.iter_mut() {
        e.differs = differences(e, &reference);
        same &= e.differs.is_empty();
    }
    same
}

fn differences(e: &LedgerEntry, reference: &LedgerEntry) -> Vec<String> {
    if e.hash == reference.hash {
        return Vec::new();
    }
    let mut out = Vec::new();
    // A part only one side has (tool settings, sub-agents on for the others) differs too.
    let mut names: Vec<&String> = e.parts.keys().chain(reference.parts.keys()).collect();
    names.sort();
    names.dedup();
    for part in names {
        if reference.parts.get(part) == e.parts.get(part) {
            continue;
        }
        out.push(match part.as_str() {
            "tools" => {
                let missing: Vec<&str> = reference
                    .tools
                    .iter()
                    .filter(|t| !e.tools.contains(t))
                    .map(String::as_str)
                    .collect();
                let extra: Vec<&str> = e
                    .tools
                    .iter()
                    .filter(|t| !reference.tools.contains(t))
                    .map(String::as_str)
                    .collect();
                tools_difference(&missing, &extra)
            }
            "seed" => format!(
                "seed ({} vs {})",
                seed_text(e.seed),
                seed_text(reference.seed)
            ),
            "limits" => format!("limits ({} vs {})", e.limits, reference.limits),
            "tool_settings" => format!(
                "tool settings ({} vs {})",
                settings_text(&e.tool_settings),
                settings_text(&reference.tool_settings)
            ),
            other => other.to_string(),
        });
    }
    out
}

/// How a model's tools differ from the reference's. One editing tool in place of the other is
/// the `edit_tools` policy giving each family its own, and is said so, with the setting that
/// gives every model both.
fn tools_difference(missing: &[&str], extra: &[&str]) -> String {
    let is_edit_tool = |name: &str| name == "edit_file" || name == "apply_patch";
    if let ([gone], [instead]) = (missing, extra)
        && is_edit_tool(gone)
        && is_edit_tool(instead)
    {
        return format!(
            "editing tool {instead} instead of {gone} (by model family; edit_tools = \"both\" \
             gives every model both)"
        );
    }
    let mut text = String::from("tools");
    if !missing.is_empty() {
        text.push_str(&format!(" (missing {})", missing.join(", ")));
    }
    if !extra.is_empty() {
        text.push_str(&format!(" (extra {})", extra.join(", ")));
    }
    if missing.is_empty() && extra.is_empty() {
        text.push_str(" (same names, other descriptions or schemas)");
    }
    text
}

fn settings_text(settings: &[String]) -> String {
    if settings.is_empty() {
        "none".into()
    } else {
        settings.join("; ")
    }
}

fn seed_text(seed: Option<u64>) -> String {
    seed.map(|s| s.to_string()).unwrap_or_else(|| "none".into())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn tool(name: &str) -> ToolDef {
        ToolDef {
            name: name.into(),
            description: "d".into(),
            parameters: serde_json::json!({"type": "object"}),
        }
    }

    fn entry(model: &str, tools: &[ToolDef], extra: &[ToolDef], limits: &str) -> LedgerEntry {
        let tools: Vec<ToolDef> = tools.iter().chain(extra).cloned().collect();
        LedgerEntry::new(&LedgerInput {
            model,
            system: "prompt",
            context: &ProjectContext::default(),
            tools: &tools,
            tool_settings: &[],
            seed: Some(7),
            limits,
        })
    }

    #[test]
    fn identical_inputs_hash_alike_and_a_difference_is_named() {
        let tools = [tool("read_file"), tool("bash")];
        let mut entries = vec![
            entry("a", &tools, &[tool("srv__x")], "steps=5"),
            entry("b", &tools, &[tool("srv__x")], "steps=5"),
            entry("c", &tools, &[], "steps=9"),
        ];
        assert_eq!(entries[0].hash, entries[1].hash);
        assert!(!compare(&mut entries));
        assert!(entries[0].differs.is_empty() && entries[1].differs.is_empty());
        assert_eq!(
            entries[2].differs,
            ["limits (steps=9 vs steps=5)", "tools (missing srv__x)"]
        );
        let mut same = vec![entries[0].clone(), entries[1].clone()];
        assert!(compare(&mut same));
    }

    #[test]
    fn one_editing_tool_in_place_of_the_other_is_named_as_the_family_policy() {
        let claude = [tool("read_file"), tool("edit_file")];
        let gpt = [tool("read_file"), tool("apply_patch")];
        let mut entries = vec![
            entry("claude", &claude, &[], "l"),
            entry("claude#2", &claude, &[], "l"),
            entry("gpt", &gpt, &[], "l"),
        ];
        assert!(!compare(&mut entries));
        assert_eq!(
            entries[2].differs,
            [
                "editing tool apply_patch instead of edit_file (by model family; edit_tools = \
              \"both\" gives every model both)"
            ]
        );
        // Any other difference is listed as before.
        let mut entries = vec![
            entry("a", &claude, &[], "l"),
            entry("b", &claude, &[], "l"),
            entry("c", &[tool("read_file"), tool("bash")], &[], "l"),
        ];
        compare(&mut entries);
        assert_eq!(
            entries[2].differs,
            ["tools (missing edit_file) (extra bash)"]
        );
    }

    #[test]
    fn a_search_backend_is_in_the_ledger_and_another_one_is_flagged() {
        let tools = [tool("web_search")];
        let with = |model, settings: &[String]| {
            LedgerEntry::new(&LedgerInput {
                model,
                system: "prompt",
                context: &ProjectContext::default(),
                tools: &tools,
                tool_settings: settings,
                seed: None,
                limits: "l",
            })
        };
        let brave = ["web_search: brave https://api.search.brave.com/".to_string()];
        let searx = ["web_search: searxng http://localhost:8888/".to_string()];
        let plain = with("p", &[]);
        assert!(!plain.parts.contains_key("tool_settings"));
        let mut entries = vec![with("a", &brave), with("b", &brave), with("c", &searx)];
        assert_eq!(entries[0].hash, entries[1].hash);
        assert!(!compare(&mut entries));
        assert_eq!(
            entries[2].differs,
            [
                "tool settings (web_search: searxng http://localhost:8888/ vs web_search: brave \
              https://api.search.brave.com/)"
            ]
        );
        let mut missing = vec![with("a", &brave), with("b", &brave), with("d", &[])];
        assert!(!compare(&mut missing));
        assert_eq!(
            missing[2].differs,
            ["tool settings (none vs web_search: brave https://api.search.brave.com/)"]
        );
    }

    #[test]
    fn sub_agent_limits_are_a_tool_setting_and_a_model_without_them_is_flagged() {
        let with = |model: &str, limits: Option<&str>| {
            let mut tools = vec![tool("read_file")];
            let mut settings = Vec::new();
            if let Some(limits) = limits {
                tools.push(tool("spawn_agent"));
                settings.push(format!("spawn_agent: {limits}"));
            }
            LedgerEntry::new(&LedgerInput {
                model,
                system: "prompt",
                context: &ProjectContext::default(),
                tools: &tools,
                tool_settings: &settings,
                seed: None,
                limits: "steps=5",
            })
        };
        let off = with("a", None);
        assert!(!off.parts.contains_key("tool_settings"));
        let mut entries = vec![
            with("a", Some("max_depth=2 max_per_turn=4")),
            with("b", Some("max_depth=2 max_per_turn=4")),
            with("c", Some("max_depth=1 max_per_turn=4")),
            off,
        ];
        assert_eq!(entries[0].hash, entries[1].hash);
        assert_ne!(entries[0].hash, entries[2].hash);
        assert!(!compare(&mut entries));
        assert_eq!(
            entries[2].differs,
            [
                "tool settings (spawn_agent: max_depth=1 max_per_turn=4 vs spawn_agent: \
                 max_depth=2 max_per_turn=4)"
            ]
        );
        assert_eq!(
            entries[3].differs,
            [
                "tool settings (none vs spawn_agent: max_depth=2 max_per_turn=4)",
                "tools (missing spawn_agent)"
            ]
        );
    }
}
