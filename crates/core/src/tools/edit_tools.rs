//! A model's tools under the editing-tools policy ([`EditTools`]): the registry without the
//! editing tool the model goes without, and its system prompt to match.

use super::ToolRegistry;
use crate::model::EditTools;
use crate::model::edit_tools::{APPLY_PATCH, EDIT_FILE};

/// A model's registry under `policy`: the editing tool it goes without is taken out, but only
/// when the registry offers both (a recipe that lists one editing tool keeps it). `None`: the
/// registry stays as it is. The system prompt is composed from the result
/// ([`crate::agent::AgentSettings::compose_system`]).
pub fn narrow(
    tools: &ToolRegistry,
    policy: EditTools,
    model: &str,
    scripted: bool,
) -> Option<ToolRegistry> {
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
    Some(narrowed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_family_keeps_its_own_tool_and_its_guidance_names_only_what_it_has() {
        let tools = ToolRegistry::builtin();
        let Some(gpt) = narrow(&tools, EditTools::Family, "gpt-5", false) else {
            panic!("gpt-5 kept both tools")
        };
        assert!(gpt.get(APPLY_PATCH).is_some());
        assert!(gpt.get(EDIT_FILE).is_none());
        assert!(!gpt.guidance().contains("edit_file"), "{}", gpt.guidance());
        let Some(claude) = narrow(&tools, EditTools::Family, "claude-opus-4-1", false) else {
            panic!("claude kept both tools")
        };
        assert!(claude.get(EDIT_FILE).is_some());
        assert!(claude.get(APPLY_PATCH).is_none());
        assert!(!claude.guidance().contains("apply_patch"));
        // Samples of one model: the same tools, the same words.
        let again = narrow(&tools, EditTools::Family, "gpt-5", false).map(|t| t.guidance());
        assert_eq!(again, Some(gpt.guidance()));
    }

    #[test]
    fn both_scripts_and_single_tool_registries_are_left_alone() {
        let tools = ToolRegistry::builtin();
        assert!(narrow(&tools, EditTools::Both, "gpt-5", false).is_none());
        assert!(narrow(&tools, EditTools::Family, "good", true).is_none());
        // A scripted model under an explicit policy is narrowed like any other.
        assert!(narrow(&tools, EditTools::EditFile, "good", true).is_some());
        let mut only_edit = ToolRegistry::builtin();
        only_edit.retain(&["read_file", "edit_file"]);
        assert!(narrow(&only_edit, EditTools::Family, "gpt-5", false).is_none());
    }
}
