//! `/export`: the panels' transcripts as one Markdown document (what the user saw, per model).

use super::format::cost;
use super::state::App;

/// The document for every panel, thinking and tool arguments included.
pub fn markdown(app: &App) -> String {
    let mut out = format!(
        "# versus session {}\n\nProject: `{}` · turns: {} · cost: {}\n",
        app.session.id,
        app.session.project,
        app.turn,
        cost(app.total_cost())
    );
    // In the order and under the names shown: aliases while blind mode hides the names.
    for index in app.panel_order() {
        let Some(panel) = app.panels.get(index) else {
            continue;
        };
        out.push_str(&format!("\n## {}\n\n", app.shown(index)));
        let mut in_fence = false;
        for line in panel.transcript.lines() {
            // The compact view's tail of a tool's output: the export has the whole output.
            if line.compact_only {
                continue;
            }
            let text = line.text();
            if text.starts_with("┄┄┄") {
                in_fence = !in_fence;
                let lang = text.trim_start_matches('┄').trim();
                out.push_str("```");
                if in_fence {
                    out.push_str(lang);
                }
                out.push('\n');
                continue;
            }
            if line.verbose_only && !in_fence {
                out.push_str("> ");
            }
            out.push_str(text);
            out.push('\n');
        }
        if in_fence {
            out.push_str("```\n");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::action::{EngineMsg, Msg, Settings};
    use super::super::state::{App, SessionInfo};
    use super::super::theme::Theme;
    use super::super::update::update;
    use super::*;
    use versus_core::model::AgentEvent;

    #[test]
    fn exports_each_panel_with_fences_restored() {
        let mut app = App::new(
            SessionInfo {
                id: "s1".into(),
                project: "/p".into(),
                demo: false,
            },
            vec!["demo/good".into()],
            Settings::default(),
            Theme::PLAIN,
        );
        update(
            &mut app,
            Msg::Engine(EngineMsg::Agent {
                panel: 0,
                event: AgentEvent::TextDelta {
                    text: "Fix:\n```rust\nlet a = 1;\n```\n".into(),
                },
            }),
        );
        let md = markdown(&app);
        assert!(
            md.contains("## demo/good\n\nFix:\n```rust\nlet a = 1;\n```\n"),
            "{md}"
        );
    }
}
