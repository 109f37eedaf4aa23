//! The basket: what the user has picked so far, from one model or several, and whether it can
//! be applied. Toggling is cheap and the state is recomputed with the pure
//! [`compose`](fn@crate::apply::compose) on every change, so conflicts show while picking, not
//! when the apply fails.

use crate::apply::{ApplyPlan, ComposeError, Conflict, Pick, Selection, compose};
use crate::workspace::changeset::ChangeSet;

/// The picks, in the order made.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Basket {
    picks: Vec<Pick>,
}

/// What the basket would do now.
#[derive(Debug, Clone, PartialEq)]
pub enum BasketState {
    /// Nothing picked.
    Empty,
    /// Ready to apply: the plan and a summary line ("3 files from 2 models").
    Ready {
        /// The composed plan.
        plan: ApplyPlan,
        /// For the status line.
        summary: String,
    },
    /// Picks collide: apply is refused until one side is dropped.
    Conflicts(Vec<Conflict>),
    /// A pick names something that is not in the change sets (stale after a new turn).
    Invalid(String),
}

impl Basket {
    /// An empty basket.
    pub fn new() -> Self {
        Self::default()
    }

    /// The picks as a selection for [`compose`](fn@crate::apply::compose).
    pub fn selection(&self) -> Selection {
        Selection {
            items: self.picks.clone(),
        }
    }

    /// Whether nothing is picked.
    pub fn is_empty(&self) -> bool {
        self.picks.is_empty()
    }

    /// The picks in order.
    pub fn picks(&self) -> &[Pick] {
        &self.picks
    }

    /// Empties the basket.
    pub fn clear(&mut self) {
        self.picks.clear();
    }

    /// Picks one model's whole change set, replacing every other pick of that model (a whole
    /// set includes its files and hunks). Picking it again removes it.
    pub fn toggle_model(&mut self, model: &str) {
        let whole = Pick::ChangeSet {
            model: model.to_string(),
        };
        if self.remove(&whole) {
            return;
        }
        self.picks.retain(|p| pick_model(p) != model);
        self.picks.push(whole);
    }

    /// Picks one file of a model whole (replacing that file's hunk picks); again removes it.
    pub fn toggle_file(&mut self, model: &str, path: &str) {
        let file = Pick::File {
            model: model.to_string(),
            path: path.to_string(),
        };
        if self.remove(&file) {
            return;
        }
        self.picks.retain(
            |p| !matches!(p, Pick::Hunk { model: m, path: f, .. } if m == model && f == path),
        );
        self.picks.push(file);
    }

    /// Picks one hunk; again removes it.
    pub fn toggle_hunk(&mut self, model: &str, path: &str, hunk: &str) {
        let pick = Pick::Hunk {
            model: model.to_string(),
            path: path.to_string(),
            hunk: hunk.to_string(),
        };
        if !self.remove(&pick) {
            self.picks.push(pick);
        }
    }

    /// Whether this hunk will be applied (picked itself, or through its file or model).
    pub fn covers_hunk(&self, model: &str, path: &str, hunk: &str) -> bool {
        self.picks.iter().any(|p| match p {
            Pick::ChangeSet { model: m } => m == model,
            Pick::File { model: m, path: f } => m == model && f == path,
            Pick::Hunk {
                model: m,
                path: f,
                hunk: h,
            } => m == model && f == path && h == hunk,
        })
    }

    /// Composes the picks over this turn's change sets.
    pub fn state(&self, sets: &[ChangeSet], label: &str) -> BasketState {
        if self.picks.is_empty() {
            return BasketState::Empty;
        }
        match compose(sets, &self.selection(), label) {
            Ok(plan) => {
                let files = plan.writes.len();
                let models = plan.models.len();
                let summary = format!(
                    "{files} file{} from {models} model{}",
                    if files == 1 { "" } else { "s" },
                    if models == 1 { "" } else { "s" }
                );
                BasketState::Ready { plan, summary }
            }
            Err(ComposeError::Conflicts(conflicts)) => BasketState::Conflicts(conflicts),
            Err(other) => BasketState::Invalid(other.to_string()),
        }
    }

    fn remove(&mut self, pick: &Pick) -> bool {
        let before = self.picks.len();
        self.picks.retain(|p| p != pick);
        self.picks.len() != before
    }
}

fn pick_model(pick: &Pick) -> &str {
    match pick {
        Pick::ChangeSet { model } | Pick::File { model, .. } | Pick::Hunk { model, .. } => model,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn toggling_replaces_narrower_picks_and_removes_on_repeat() {
        let mut basket = Basket::new();
        basket.toggle_hunk("a", "x.rs", "h1");
        basket.toggle_hunk("a", "x.rs", "h2");
        assert!(basket.covers_hunk("a", "x.rs", "h1"));
        basket.toggle_file("a", "x.rs");
        assert_eq!(basket.picks().len(), 1, "the file replaces its hunks");
        assert!(basket.covers_hunk("a", "x.rs", "h9"));
        basket.toggle_hunk("b", "y.rs", "h3");
        basket.toggle_model("a");
        assert_eq!(basket.picks().len(), 2);
        assert!(basket.covers_hunk("a", "z.rs", "any"));
        basket.toggle_model("a");
        assert_eq!(basket.picks().len(), 1);
        assert!(!basket.covers_hunk("a", "x.rs", "h1"));
        basket.toggle_hunk("b", "y.rs", "h3");
        assert!(basket.is_empty());
        assert_eq!(basket.state(&[], "p"), BasketState::Empty);
    }

    fn change_set(base: &crate::workspace::Base, model: &str, content: &str) -> ChangeSet {
        use crate::workspace::{FileWrite, WriteOrigin};
        let write = FileWrite {
            path: "f.txt".into(),
            content: Some(std::sync::Arc::new(content.as_bytes().to_vec())),
            origin: WriteOrigin {
                tool: "write_file".into(),
                call_id: "c1".into(),
            },
            seq: 0,
            symlink: false,
        };
        let reader = crate::workspace::changeset::BaseReader::new(base);
        ChangeSet::build(model, base, &[write], &reader, None).unwrap()
    }

    #[test]
    fn hunks_from_two_models_compose_or_conflict_before_anything_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let lines: Vec<String> = (1..=30).map(|i| format!("line {i}")).collect();
        std::fs::write(dir.path().join("f.txt"), lines.join("\n") + "\n").unwrap();
        let base = crate::workspace::Base::capture(dir.path()).unwrap();
        let edit = |edits: &[(usize, &str)]| {
            let mut l = lines.clone();
            for (i, t) in edits {
                l[*i] = t.to_string();
            }
            l.join("\n") + "\n"
        };
        let a = change_set(&base, "a", &edit(&[(1, "A top"), (25, "A bottom")]));
        let b = change_set(&base, "b", &edit(&[(1, "B top"), (12, "B middle")]));
        let sets = vec![a.clone(), b.clone()];
        let hunk = |set: &ChangeSet, n: usize| set.files[0].hunks[n].id.clone();

        let mut basket = Basket::new();
        basket.toggle_hunk("a", "f.txt", &hunk(&a, 1));
        basket.toggle_hunk("b", "f.txt", &hunk(&b, 1));
        let BasketState::Ready { plan, summary } = basket.state(&sets, "p") else {
            panic!("disjoint hunks must compose");
        };
        assert_eq!(summary, "1 file from 2 models");
        let text = String::from_utf8(plan.writes[0].proposed.clone().unwrap()).unwrap();
        assert!(
            text.contains("A bottom") && text.contains("B middle") && text.contains("line 2\n")
        );

        basket.toggle_hunk("a", "f.txt", &hunk(&a, 0));
        basket.toggle_hunk("b", "f.txt", &hunk(&b, 0));
        let BasketState::Conflicts(conflicts) = basket.state(&sets, "p") else {
            panic!("both models changed line 2");
        };
        assert_eq!(conflicts.len(), 1);
        assert_eq!(conflicts[0].path, "f.txt");
    }

    #[test]
    fn a_pick_of_an_unknown_model_is_invalid_not_a_panic() {
        let mut basket = Basket::new();
        basket.toggle_model("ghost");
        assert!(matches!(basket.state(&[], "p"), BasketState::Invalid(_)));
    }
}
