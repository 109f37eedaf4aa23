//! The system prompt: what every model is told, whatever its provider.

/// The base instructions plus one guidance line per active tool, then the caller's extra
/// instructions (a recipe's system prompt, a config override).
pub fn system_prompt(tool_guidance: &str, extra: Option<&str>) -> String {
    let mut prompt = String::from(
        "You are a coding agent working in a copy of the user's project. Your file changes are \
         proposals: the user compares them with other models' and applies the best, so make \
         complete, working changes and verify them (run the tests when there are any).\n\
         Paths are relative to the project root. Read before you edit; keep edits minimal and \
         in the project's style. When you are done, reply with a short summary of what you \
         changed and why, without calling tools.\n\nTools:\n",
    );
    prompt.push_str(tool_guidance);
    if let Some(extra) = extra.map(str::trim).filter(|e| !e.is_empty()) {
        prompt.push_str("\n\n");
        prompt.push_str(extra);
    }
    prompt
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guidance_and_extra_are_included() {
        let p = system_prompt("- read_file: read", Some("Answer in French."));
        assert!(p.contains("- read_file: read"));
        assert!(p.ends_with("Answer in French."));
        assert!(!system_prompt("x", Some("  ")).ends_with("\n\n"));
    }

    #[test]
    fn a_prompt_composed_from_a_narrowed_registry_names_only_its_tools() {
        use crate::tools::{EditTools, ToolRegistry, narrow_edit_tools};
        let mut settings = crate::agent::AgentSettings {
            instructions: Some("Be brief.".into()),
            ..Default::default()
        };
        let all = ToolRegistry::builtin();
        settings.compose_system(&all);
        assert!(settings.system.contains("apply_patch") && settings.system.contains("edit_file"));
        let Some(gpt) = narrow_edit_tools(&all, EditTools::Family, "gpt-5", false) else {
            panic!("gpt-5 kept both tools")
        };
        settings.compose_system(&gpt);
        assert!(!settings.system.contains("edit_file"), "{}", settings.system);
        assert!(settings.system.contains("apply_patch"));
        assert!(settings.system.ends_with("Be brief."));
    }
}
