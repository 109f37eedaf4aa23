//! Which file-editing tool each model gets: `edit_file` (exact string replacement) or
//! `apply_patch` (codex's patch format).
//!
//! Both make the same proposals; what differs is how well a model drives each. OpenAI's
//! GPT-4.1, o3/o4, GPT-5 and codex models were trained on `apply_patch` (codex offers them
//! nothing else), while Claude, Gemini and most open models were trained on string-replacement
//! editing. Offering a model both tools costs it tokens and invites the one it writes worse, so
//! by default each model gets its own family's tool. The choice depends on the model name
//! alone, so every sample of one model (`openai/gpt-5#1`, `#2`) gets the same tools; the
//! fairness ledger records the difference between families and says why.

use serde::{Deserialize, Serialize};

/// The editing tools policy: `edit_tools = "family" | "edit_file" | "apply_patch" | "both"`
/// in the config, `edit_tools` in a recipe's Constraints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EditTools {
    /// Each model gets the tool its family was trained on (see [`trained_tool`]).
    #[default]
    Family,
    /// Every model gets `edit_file` and not `apply_patch`.
    EditFile,
    /// Every model gets `apply_patch` and not `edit_file`.
    ApplyPatch,
    /// Every model gets both.
    Both,
}

/// The two editing tools' names.
pub(crate) const EDIT_FILE: &str = "edit_file";
pub(crate) const APPLY_PATCH: &str = "apply_patch";

impl EditTools {
    /// Parses a setting's value; the error lists the values allowed.
    pub fn parse(text: &str) -> Result<Self, String> {
        match text.trim() {
            "family" => Ok(Self::Family),
            "edit_file" => Ok(Self::EditFile),
            "apply_patch" => Ok(Self::ApplyPatch),
            "both" => Ok(Self::Both),
            other => Err(format!(
                "unknown edit_tools value `{other}`; use family, edit_file, apply_patch or both"
            )),
        }
    }

    /// The setting as written in a config or recipe.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Family => "family",
            Self::EditFile => "edit_file",
            Self::ApplyPatch => "apply_patch",
            Self::Both => "both",
        }
    }

    /// The editing tool a model named `model` goes without under this policy (`None`: it
    /// keeps both). `scripted` models (demo scripts) were trained on nothing and name
    /// whichever tool their script calls, so the family policy leaves them both.
    pub fn dropped_for(self, model: &str, scripted: bool) -> Option<&'static str> {
        match self {
            Self::Both => None,
            Self::EditFile => Some(APPLY_PATCH),
            Self::ApplyPatch => Some(EDIT_FILE),
            Self::Family if scripted => None,
            Self::Family => Some(match trained_tool(model) {
                APPLY_PATCH => EDIT_FILE,
                _ => APPLY_PATCH,
            }),
        }
    }
}

/// The editing tool a model's family was trained on, from its name on the wire (a gateway's
/// `openai/gpt-5` counts as `gpt-5`): `apply_patch` for OpenAI's GPT-4.1, o3, o4, GPT-5 and
/// codex models, `edit_file` for every other.
pub fn trained_tool(model: &str) -> &'static str {
    let name = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    let patch_family = ["gpt-5", "gpt-4.1", "o3", "o4", "codex"]
        .iter()
        .any(|prefix| name.starts_with(prefix))
        || name.contains("codex");
    if patch_family { APPLY_PATCH } else { EDIT_FILE }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn openai_patch_models_get_apply_patch_and_the_others_edit_file() {
        for model in [
            "gpt-5",
            "gpt-5.4-mini",
            "gpt-4.1",
            "o3",
            "o4-mini",
            "codex-mini-latest",
            "gpt-5-codex",
            "openai/gpt-5",
            "GPT-5",
        ] {
            assert_eq!(trained_tool(model), APPLY_PATCH, "{model}");
        }
        for model in [
            "claude-sonnet-4-6",
            "gemini-2.5-pro",
            "anthropic/claude-sonnet-4.6",
            "qwen3-coder",
            "llama3.1",
            "gpt-4o",
        ] {
            assert_eq!(trained_tool(model), EDIT_FILE, "{model}");
        }
    }

    #[test]
    fn settings_parse_and_name_themselves() {
        for policy in [
            EditTools::Family,
            EditTools::EditFile,
            EditTools::ApplyPatch,
            EditTools::Both,
        ] {
            assert_eq!(EditTools::parse(policy.as_str()), Ok(policy));
        }
        let Err(e) = EditTools::parse("patch") else {
            panic!("bad value accepted")
        };
        assert!(e.contains("family, edit_file, apply_patch or both"), "{e}");
    }
}
