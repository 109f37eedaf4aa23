//! The canonical definition of a tool: one per tool, translated per provider later.

use serde_json::Value;

/// How far a tool's effects reach, so the UI can mark external side effects and recipes can
/// deny them (N models doing the same external action means N actions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolClass {
    /// Reads the model's view only (read, list, search).
    ReadOnly,
    /// Changes the model's view; becomes a proposal (write, edit, patch).
    Proposal,
    /// Runs inside the workspace and may change it (bash).
    WorkspaceEffect,
    /// Reaches outside the machine (web_fetch).
    ExternalEffect,
}

/// Name, description, JSON schema and system-prompt guidance of one tool.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ToolSpec {
    /// Fixed tool name; recipes written for other harnesses rely on it.
    pub name: &'static str,
    /// What the model is told the tool does (a recipe may replace it).
    pub description: String,
    /// JSON schema of the arguments object.
    pub parameters: Value,
    /// One line for the system prompt on when and how to use the tool (a recipe may replace it).
    pub guidance: String,
    /// Reach of the tool's effects.
    pub class: ToolClass,
}
