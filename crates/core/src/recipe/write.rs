//! Recipe to Markdown: every section, every key, in the spec's order.
//!
//! The output is self-contained: it does not rely on the built-in defaults (every key is
//! written), so it reads back to an equal recipe today and keeps its meaning if the defaults
//! change later. Only `## Tools` is left out when the recipe offers every tool, since a missing
//! Tools section is how a recipe says "all tools".

use super::keys;
use super::model::{FORMAT_VERSION, McpTransport, Recipe, ToolSet};
use super::output;
use super::params;
use super::sections::SectionId;
use super::tasks;

impl Recipe {
    /// The recipe as a Markdown file that [`Recipe::parse`] reads back to an equal recipe.
    pub fn to_markdown(&self) -> String {
        let mut out = format!("# {}\nversion: {FORMAT_VERSION}\n", self.name);
        for &id in SectionId::ALL {
            if id == SectionId::Tools && self.tools == ToolSet::All {
                continue;
            }
            out.push_str(&format!("\n## {}\n", id.title()));
            self.write_section(id, &mut out);
        }
        out
    }

    fn write_section(&self, id: SectionId, out: &mut String) {
        let mut line = |text: String| {
            out.push_str(&text);
            out.push('\n');
        };
        match id {
            SectionId::Models => {
                for m in &self.models {
                    line(format!("- {}", m.spec));
                }
            }
            SectionId::SystemPrompt => prose(&self.system_prompt, out),
            SectionId::SummarizationPrompt => prose(&self.summarization_prompt, out),
            SectionId::Tools => {
                if let ToolSet::Only(entries) = &self.tools {
                    for e in entries {
                        let mut text = format!("- {}", e.name);
                        if let Some(prefixes) = &e.bash_prefixes {
                            text.push_str(&format!("({})", prefixes.join(", ")));
                        }
                        if let Some(backend) = &e.search_backend {
                            text.push_str(&format!("({backend})"));
                        }
                        if let Some(g) = &e.guidance {
                            text.push_str(&format!(": {g}"));
                        }
                        line(text);
                    }
                }
            }
            SectionId::ToolDescriptions => {
                let (short, long): (Vec<_>, Vec<_>) = self
                    .tool_descriptions
                    .iter()
                    .partition(|(_, d)| !d.contains('\n'));
                for (name, d) in short {
                    line(format!("- {name}: {d}"));
                }
                for (name, d) in long {
                    line(format!("\n### {name}\n{d}"));
                }
            }
            SectionId::McpServers => {
                for s in &self.mcp_servers {
                    let target = match &s.transport {
                        McpTransport::Stdio { command_line, .. } => command_line,
                        McpTransport::Http { url } => url,
                    };
                    line(format!("- {}: {target}", s.name));
                }
            }
            SectionId::Constraints
            | SectionId::Context
            | SectionId::Workspace
            | SectionId::Sandbox
            | SectionId::Review
            | SectionId::Metadata => {
                for key in keys::keys(id) {
                    line(
                        format!("{}: {}", key.name, (key.get)(self))
                            .trim_end()
                            .to_string(),
                    );
                }
            }
            SectionId::ModelParameters => {
                for key in keys::keys(id) {
                    line(format!("{}: {}", key.name, (key.get)(self)));
                }
                for o in &self.parameters.per_model {
                    line(format!("- {}: {}", o.spec, params::format_override(o)));
                }
            }
            SectionId::Tasks => tasks::write(&self.tasks, out),
            SectionId::SuccessCriteria => {
                for c in &self.criteria {
                    line(format!("- {c}"));
                }
            }
            SectionId::OutputProcessing => {
                for (tool, rule) in &self.output_processing {
                    line(format!("- {tool}: {}", output::format_rule(rule)));
                }
            }
        }
    }
}

fn prose(text: &str, out: &mut String) {
    if !text.is_empty() {
        out.push_str(text);
        out.push('\n');
    }
}
