//! The fairness ledger of the running turn, settled once every model's tools are known.
//!
//! Most of what a model is given is decided before the turn starts (prompt, context, its
//! registry, seed, limits). Its tool servers' tools are not: they start in its workspace once
//! that is ready, and one may fail there for one model only. So the ledger waits for each model
//! of a turn with tool servers to report the tools it actually got (or to end without getting
//! that far) before it compares them and the front ends hear the verdict.

use crate::context::{LedgerEntry, LedgerSource, ProjectContext, compare};
use crate::model::ToolDef;

/// The ledger of one turn while it settles.
pub(super) struct LedgerBook {
    context: ProjectContext,
    sources: Vec<LedgerSource>,
    /// The models whose tools are not known yet, by position.
    waiting: Vec<bool>,
}

impl LedgerBook {
    /// What each model was given when the turn started; with `late_tools`, every model gets
    /// more tools once its workspace is ready, and the ledger waits for them.
    pub(super) fn new(
        context: ProjectContext,
        sources: Vec<LedgerSource>,
        late_tools: bool,
    ) -> Self {
        let waiting = vec![late_tools; sources.len()];
        Self {
            context,
            sources,
            waiting,
        }
    }

    /// The turn's context, as given to every model.
    pub(super) fn context(&self) -> &ProjectContext {
        &self.context
    }

    /// Whether every model's tools are known.
    pub(super) fn settled(&self) -> bool {
        !self.waiting.iter().any(|w| *w)
    }

    /// Every model's entry, compared: the differences are flagged against what most got.
    pub(super) fn entries(&self) -> Vec<LedgerEntry> {
        let mut entries: Vec<LedgerEntry> = self
            .sources
            .iter()
            .map(|s| s.entry(&self.context))
            .collect();
        compare(&mut entries);
        entries
    }

    /// Model `entry` got `tools` in all (its tool servers' included); true when this settles
    /// the ledger.
    pub(super) fn tools_given(&mut self, entry: usize, tools: Vec<ToolDef>) -> bool {
        if let Some(source) = self.sources.get_mut(entry) {
            source.tools_given(tools);
        }
        self.stop_waiting(entry)
    }

    /// Model `entry` ended; if its tools never came (its workspace failed, it was cancelled
    /// while waiting), it is hashed with what it had. True when this settles the ledger.
    pub(super) fn ended(&mut self, entry: usize) -> bool {
        self.stop_waiting(entry)
    }

    fn stop_waiting(&mut self, entry: usize) -> bool {
        match self.waiting.get_mut(entry) {
            Some(waiting) if *waiting => {
                *waiting = false;
                self.settled()
            }
            _ => false,
        }
    }
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

    fn source(model: &str) -> LedgerSource {
        LedgerSource {
            model: model.into(),
            system: "prompt".into(),
            tools: vec![tool("read_file")],
            tool_settings: Vec::new(),
            seed: None,
            limits: "steps=5".into(),
        }
    }

    #[test]
    fn without_late_tools_the_ledger_is_settled_at_once() {
        let book = LedgerBook::new(
            ProjectContext::default(),
            vec![source("a"), source("b")],
            false,
        );
        assert!(book.settled());
        assert!(book.entries().iter().all(|e| e.differs.is_empty()));
    }

    #[test]
    fn a_server_that_failed_for_one_model_is_a_difference_once_settled() {
        let mut book = LedgerBook::new(
            ProjectContext::default(),
            vec![source("a"), source("b"), source("c")],
            true,
        );
        assert!(!book.settled());
        let with_server = vec![tool("read_file"), tool("files__write")];
        assert!(!book.tools_given(0, with_server.clone()));
        assert!(!book.tools_given(2, with_server));
        assert!(book.tools_given(1, vec![tool("read_file")]));
        let entries = book.entries();
        assert!(entries[0].differs.is_empty());
        assert_eq!(entries[1].differs, ["tools (missing files__write)"]);
        assert!(entries[2].differs.is_empty());
        // Nothing more settles it again.
        assert!(!book.ended(1));
    }

    #[test]
    fn a_model_that_ended_before_its_tools_came_settles_the_ledger() {
        let mut book = LedgerBook::new(
            ProjectContext::default(),
            vec![source("a"), source("b")],
            true,
        );
        assert!(!book.tools_given(0, vec![tool("read_file"), tool("s__t")]));
        assert!(book.ended(1));
        assert!(!book.ended(1));
        assert_eq!(book.entries()[1].differs, ["tools (missing s__t)"]);
    }
}
