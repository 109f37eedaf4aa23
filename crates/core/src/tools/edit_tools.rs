//! A model's tools under the editing-tools policy ([`EditTools`]): the registry without the
//! editing tool the model goes without, and its system prompt to match.

use super::ToolRegistry;
use crate::model::EditTools;
use crate::model::edit_tools::{APPLY_PATCH, EDIT_FILE};

/// A model's registry under `policy`: the editing tool it goes without is taken out, but only
/// when the registry offers both (a recipe that lists one editing tool keeps it), and the
/// system prompt's tool guidance is rewritten to match, so the model is never told about a
/// tool it cannot call. `system` must hold `tools.guidance()` verbatim, as every front end
/// builds it ([`crate::agent::system_prompt`]).
pub fn narrow(
    tools: &ToolRegistry,
    system: &str,
    policy: EditTools,
    model: &str,
    scripted: bool,
) -> Option<(ToolRegistry, String)> {
    let dropped = policy.dropped_for(model, scripted)?;
    if tools.get(EDIT_FILE).is_none() || tools.get(APPLY_PATCH).is_none() {
        return None;
    }
    let mut narrowed = tools.clone();
    let kept: Vec<&str> = tools
        .names()
        .into_iter()
        .filter(|n| *n != dropped)
        .collect();
    narrowed.retain(&kept);
    let system = system.replacen(&tools.guidance(), &narrowed.guidance(), 1);
    Some((narrowed, system))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The system prompt's tools section as every front end builds it
    /// ([`crate::agent::system_prompt`]): the guidance verbatim, then the extra instructions.
    fn system_prompt(guidance: &str, extra: Option<&str>) -> String {
        let mut prompt = format!("You are a coding agent.\n\nTools:\n{guidance}");
        if let Some(extra) = extra {
            prompt.push_str("\n\n");
            prompt.push_str(extra);
        }
        prompt
    }

    #[test]
    fn a_model_family_keeps_its_own_tool_and_the_prompt_names_only_what_it_has() {
        let tools = ToolRegistry::builtin();
        let system = system_prompt(&tools.guidance(), Some("Be brief."));
        let Some((gpt, gpt_system)) = narrow(&tools, &system, EditTools::Family, "gpt-5", false)
        else {
            panic!("gpt-5 kept both tools")
        };
        assert!(gpt.get(APPLY_PATCH).is_some());
        assert!(gpt.get(EDIT_FILE).is_none());
        assert!(!gpt_system.contains("edit_file"), "{gpt_system}");
        assert!(gpt_system.ends_with("Be brief."));
        let Some((claude, claude_system)) =
            narrow(&tools, &system, EditTools::Family, "claude-opus-4-1", false)
        else {
            panic!("claude kept both tools")
        };
        assert!(claude.get(EDIT_FILE).is_some());
        assert!(claude.get(APPLY_PATCH).is_none());
        assert!(!claude_system.contains("apply_patch"), "{claude_system}");
        // Samples of one model: the same tools, the same words.
        let again = narrow(&tools, &system, EditTools::Family, "gpt-5", false);
        assert_eq!(again.map(|(_, s)| s), Some(gpt_system));
    }

    #[test]
    fn both_scripts_and_single_tool_registries_are_left_alone() {
        let tools = ToolRegistry::builtin();
        let system = system_prompt(&tools.guidance(), None);
        assert!(narrow(&tools, &system, EditTools::Both, "gpt-5", false).is_none());
        assert!(narrow(&tools, &system, EditTools::Family, "good", true).is_none());
        // A scripted model under an explicit policy is narrowed like any other.
        assert!(narrow(&tools, &system, EditTools::EditFile, "good", true).is_some());
        let mut only_edit = ToolRegistry::builtin();
        only_edit.retain(&["read_file", "edit_file"]);
        assert!(narrow(&only_edit, &system, EditTools::Family, "gpt-5", false).is_none());
    }
}
