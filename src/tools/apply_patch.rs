//! PLACEHOLDER: being built; replaced by the real tool.

use std::sync::Arc;

use serde_json::json;

use super::registry::{Handler, Tool, typed};
use super::{ToolClass, ToolContext, ToolError, ToolOutput, ToolSpec};

pub(crate) fn tool() -> Arc<dyn Tool> {
    typed(
        ToolSpec {
            name: "apply_patch",
            description: String::new(),
            parameters: json!({"type": "object", "properties": {}}),
            guidance: String::new(),
            class: ToolClass::ReadOnly,
        },
        Placeholder,
    )
}

struct Placeholder;

impl Handler for Placeholder {
    type Args = serde_json::Value;
    async fn run(&self, _args: Self::Args, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        Err(ToolError::failed("not built yet"))
    }
}
