//! [`UiConfig`]: the `[ui]` section of the config file.
//!
//! It accepts no keys yet; the TUI adds its settings here as fields with serde defaults.
//! Unknown keys are still errors, with the list of accepted ones, like every other section.

use serde::{Deserialize, Serialize};

/// Settings of the interactive interface (`[ui]` in the config file).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct UiConfig {}
