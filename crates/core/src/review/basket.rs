//! The basket: what the user has picked so far, from one model or several, and whether it can
//! be applied. Toggling is cheap and the state is recomputed with the pure
//! [`compose`](fn@crate::apply::compose) on every change, so conflicts show while picking, not
//! when the apply fails.

use crate::apply::{ApplyPlan, ComposeError, Conflict, Pick, Selection, compose};
use crate::workspace::changeset::{ChangeSet, Hunk, LineKind};

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
        self.picks.retain(|p| p.model() != model);
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
        self.picks.retain(|p| {
            !matches!(p, Pick::Hunk { model: m, path: f, .. } | Pick::Line { model: m, path: f, .. }
                if m == model && f == path)
        });
        self.picks.push(file);
    }

    /// Picks one hunk (replacing its line picks); again removes it.
    pub fn toggle_hunk(&mut self, model: &str, path: &str, hunk: &str) {
        let pick = Pick::Hunk {
            model: model.to_string(),
            path: path.to_string(),
            hunk: hunk.to_string(),
        };
        if !self.remove(&pick) {
            self.picks.retain(|p| {
                !matches!(p, Pick::Line { model: m, path: f, hunk: h, .. }
                    if m == model && f == path && h == hunk)
            });
            self.picks.push(pick);
        }
    }

    /// Picks one changed line (index into the hunk's lines); again removes it. A hunk that is
    /// already taken whole (itself, its file or its model) is not split: the caller says so,
    /// since a line pick inside it would change nothing.
    pub fn toggle_line(&mut self, model: &str, path: &str, hunk: &str, line: usize) {
        let pick = Pick::Line {
            model: model.to_string(),
            path: path.to_string(),
            hunk: hunk.to_string(),
            line,
        };
        if !self.remove(&pick) {
            self.picks.push(pick);
        }
    }

    /// Whether this changed line is picked on its own (not through its hunk, file or model).
    pub fn has_line(&self, model: &str, path: &str, hunk: &str, line: usize) -> bool {
        self.picks.iter().any(|p| {
            matches!(p, Pick::Line { model: m, path: f, hunk: h, line: l }
                if m == model && f == path && h == hunk && *l == line)
        })
    }

    /// How many lines of this hunk are picked on their own.
    pub fn lines_in(&self, model: &str, path: &str, hunk: &str) -> usize {
        self.picks
            .iter()
            .filter(|p| {
                matches!(p, Pick::Line { model: m, path: f, hunk: h, .. }
                    if m == model && f == path && h == hunk)
            })
            .count()
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
            Pick::Line { .. } => false,
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

/// The indices (into [`Hunk::lines`]) of a hunk's added and removed lines: what a line pick
/// can name, in the order the diff shows them.
pub fn changed_lines(hunk: &Hunk) -> Vec<usize> {
    hunk.lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.kind != LineKind::Context)
        .map(|(i, _)| i)
        .collect()
}

/// Where line `line` of a hunk sits, for the basket list: `-7` (removed line 7 of the base) or
/// `+7` (added as line 7 of the proposed file), with its text; `None` for a context line.
pub fn line_place(hunk: &Hunk, line: usize) -> Option<String> {
    let (mut old, mut new) = (hunk.old.indices().start, hunk.new.indices().start);
    for (i, l) in hunk.lines.iter().enumerate() {
        let (sign, number) = match l.kind {
            LineKind::Context => ("", 0),
            LineKind::Removed => ("-", old + 1),
            LineKind::Added => ("+", new + 1),
        };
        if i == line {
            return (l.kind != LineKind::Context)
                .then(|| format!("line {sign}{number} {}", l.text.trim()));
        }
        match l.kind {
            LineKind::Context => {
                old += 1;
                new += 1;
            }
            LineKind::Removed => old += 1,
            LineKind::Added => new += 1,
        }
    }
    None
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
            origin: WriteOrigin::new("write_file", "c1"),
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
    #[test]
    fn line_picks_split_a_hunk_and_wider_picks_replace_them() {
        let dir = tempfile::tempdir().unwrap();
        let lines: Vec<String> = (1..=10).map(|i| format!("line {i}")).collect();
        std::fs::write(dir.path().join("f.txt"), lines.join("\n") + "\n").unwrap();
        let base = crate::workspace::Base::capture(dir.path()).unwrap();
        let edit = |edits: &[(usize, &str)]| {
            let mut l = lines.clone();
            for (i, t) in edits {
                l[*i] = t.to_string();
            }
            l.join("\n") + "\n"
        };
        let a = change_set(&base, "a", &edit(&[(2, "A three"), (4, "A five")]));
        let b = change_set(&base, "b", &edit(&[(4, "B five")]));
        let sets = vec![a.clone(), b.clone()];
        let hunk = &a.files[0].hunks[0];
        let changed = changed_lines(hunk);
        assert_eq!(changed.len(), 4, "two modified lines, one hunk");
        assert_eq!(
            line_place(hunk, changed[1]).as_deref(),
            Some("line +3 A three")
        );
        let mut basket = Basket::new();
        // Line 3 of a only (its remove and add): line 5 stays as it was.
        basket.toggle_line("a", "f.txt", &hunk.id, changed[0]);
        basket.toggle_line("a", "f.txt", &hunk.id, changed[1]);
        assert!(basket.has_line("a", "f.txt", &hunk.id, changed[1]));
        assert!(!basket.covers_hunk("a", "f.txt", &hunk.id));
        // b's hunk on line 5 does not meet a's line 3.
        basket.toggle_hunk("b", "f.txt", &b.files[0].hunks[0].id);
        let BasketState::Ready { plan, .. } = basket.state(&sets, "p") else {
            panic!("a's line 3 and b's line 5 compose");
        };
        let text = String::from_utf8(plan.writes[0].proposed.clone().unwrap()).unwrap();
        assert_eq!(text, edit(&[(2, "A three"), (4, "B five")]));
        // a's line 5 too: it collides with b's hunk.
        basket.toggle_line("a", "f.txt", &hunk.id, changed[2]);
        assert!(matches!(
            basket.state(&sets, "p"),
            BasketState::Conflicts(_)
        ));
        basket.toggle_line("a", "f.txt", &hunk.id, changed[2]);
        assert!(
            !basket.has_line("a", "f.txt", &hunk.id, changed[2]),
            "again drops it"
        );
        // The whole hunk replaces its line picks; so does the file.
        basket.toggle_hunk("a", "f.txt", &hunk.id);
        assert_eq!(basket.lines_in("a", "f.txt", &hunk.id), 0);
        basket.toggle_hunk("a", "f.txt", &hunk.id);
        basket.toggle_line("a", "f.txt", &hunk.id, changed[0]);
        basket.toggle_file("a", "f.txt");
        assert_eq!(basket.lines_in("a", "f.txt", &hunk.id), 0);
    }
}
