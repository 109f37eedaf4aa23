//! The review screen's state: the models of the turn under review with their change sets and
//! check results, which model, file and row are on screen, the basket of picks, the ratings and
//! the choice once made.
//!
//! Plain data changed by [`super::update`] only. The rules (pairing lines, word highlights,
//! composing picks, blind names) live in the [`versus_core::review`] library; this module keeps what
//! the screen needs between frames: the laid-out diff of the file on screen ([`doc::DiffDoc`],
//! rebuilt only when the file or the layout changes) and the basket's composed state
//! (recomputed on each pick, so conflicts show while picking and a frame never composes).

pub mod doc;

use std::collections::BTreeMap;

use versus_core::apply::ApplyPlan;
use versus_core::review::{Basket, BasketState};
use versus_core::workspace::changeset::{ChangeSet, FileChange, Hunk};

use super::action::CheckState;
use super::state::App;
use doc::{DiffDoc, DiffMode};

/// Where a model's change set is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SetState {
    /// The model is running, or its change set is being built.
    Pending,
    /// Built (it is in [`ReviewState::sets`]).
    Ready,
    /// Could not be built.
    Failed(String),
}

/// One model of the turn under review.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewModel {
    /// Its panel.
    pub panel: usize,
    /// Its label.
    pub label: String,
    /// Its change set's state.
    pub set: SetState,
    /// Its review check, when one is configured.
    pub check: Option<CheckState>,
}

/// The choice made for the turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decided {
    /// Chosen models (empty: none of them).
    pub chosen: Vec<String>,
    /// The apply's journal id, when something was written.
    pub apply_id: Option<String>,
}

/// Rows kept above a search match when jumping to it, so the lines before it (and the hunk
/// header, when the match is near the hunk's start) stay in sight instead of the match
/// becoming the top row.
pub const MATCH_CONTEXT: usize = 3;

/// A search in the diff (`/`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DiffSearch {
    /// What is searched for.
    pub query: String,
    /// The query is still being typed.
    pub typing: bool,
    /// Rows that match, in order.
    pub matches: Vec<usize>,
    /// The match jumped to last.
    pub current: usize,
}

/// The review of one turn.
#[derive(Debug, Clone)]
pub struct ReviewState {
    /// The turn.
    pub turn: u32,
    /// What its models were given besides the prompt and the fairness ledger (`None` until
    /// the engine says, or for a turn rebuilt from an older log).
    pub context: Option<(
        versus_core::engine::ProjectContext,
        Vec<versus_core::engine::LedgerEntry>,
    )>,
    /// Its prompt (the apply's label).
    pub prompt: String,
    /// Its models, in panel order.
    pub models: Vec<ReviewModel>,
    /// Indices into `models` in the order they are listed (shuffled in blind mode).
    pub order: Vec<usize>,
    /// Change sets built so far.
    pub sets: Vec<ChangeSet>,
    /// Selected model (index into `models`).
    pub selected: usize,
    /// Selected file of the selected model.
    pub file: usize,
    /// First diff row on screen.
    pub scroll: usize,
    /// Unified or side by side.
    pub mode: DiffMode,
    /// The picks.
    pub basket: Basket,
    /// What the picks compose to (recomputed on each pick).
    pub basket_state: BasketState,
    /// The search in the diff.
    pub search: Option<DiffSearch>,
    /// Rows of the diff pane when the last key came (0 before any): a search jump keeps up
    /// to [`MATCH_CONTEXT`] rows above the match only when the pane has room for them and the
    /// match below.
    pub diff_rows: usize,
    /// Ratings given (label -> `good` / `bad` / `tie`).
    pub ratings: BTreeMap<String, versus_core::session::Rating>,
    /// The choice, once made.
    pub decided: Option<Decided>,
    /// A preview or a choice is being carried out.
    pub busy: bool,
    /// The plan sent for preview (applied once the preview is accepted).
    pub pending: Option<ApplyPlan>,
    /// Whether the screen was opened for this turn already (it opens by itself only once).
    pub opened: bool,
    /// The laid-out diff of the file on screen.
    pub doc: Option<DiffDoc>,
    /// The line cursor of line picking (`J`/`K`), if put on a changed line.
    pub line: Option<LineCursor>,
    /// Inline review comments written with `m`, in the order written: `M` / `A` send them back
    /// as the next turn's prompt (issue 14 item 17).
    pub comments: Vec<ReviewComment>,
    /// The comment being typed (`m`), if any: keys go to it until Enter or Esc.
    pub draft: Option<ReviewComment>,
    /// Columns of the diff pane when the last key came (0 before any): sideways scrolling
    /// clamps to it, and the bottom of a wrapped diff is measured with it.
    pub diff_width: usize,
    /// Columns of every line's text scrolled off to the left (`<` / `>`); 0 while wrapping.
    pub hscroll: usize,
    /// Long lines wrap onto further screen lines instead of being cut (`w`).
    pub wrap: bool,
    /// The other model whose version the selected model's file is compared with (`v`);
    /// `None`: the base, as usual. Picks are always relative to the base.
    pub against: Option<String>,
    /// The selected model's file diffed against [`ReviewState::against`]'s version, built by
    /// [`ReviewState::ensure_doc`] with the doc it is shown by.
    pub compared: Option<FileChange>,
    /// The N-way view of one hunk's region (`V`), shown in place of the diff while open.
    pub versions: Option<VersionsView>,
    /// The base diff laid out last, kept while comparing (`v`) so coming back to the base
    /// costs nothing on a large file.
    pub stash: Option<DiffDoc>,
}

/// The N-way view (`V`): every model's version of the base lines under one hunk, side by
/// side, computed once when opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionsView {
    /// The file's path.
    pub path: String,
    /// The base lines the region covers (1-based, as in the hunk header).
    pub region: versus_core::workspace::changeset::LineRange,
    /// One column per model, in the shown order.
    pub columns: Vec<versus_core::review::VersionColumn>,
    /// Lines scrolled off the top.
    pub scroll: usize,
}

/// One inline review comment: where it points in a model's diff and what the user wrote.
/// The place is kept as text (not as a hunk index) because it goes into the prompt verbatim
/// and must read the same to the model as it did on screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewComment {
    /// The model entry whose diff it is about.
    pub label: String,
    /// The file's path.
    pub path: String,
    /// The line in the model's version (`5`), a removed line of the original (`-5`, which the
    /// model's version no longer has), or the hunk's span (`2-8`).
    pub place: String,
    /// The quoted line (or the hunk's changed lines, one per line with their `-`/`+`).
    pub quote: String,
    /// What the user wrote.
    pub text: String,
}

/// Where the line cursor is: one changed line of one hunk of one model. Kept by id rather than
/// by row, so it is simply not shown (and `L` refuses) once the user moves to another hunk,
/// file or model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineCursor {
    /// The model entry.
    pub label: String,
    /// The file's path.
    pub path: String,
    /// The hunk's id.
    pub hunk: String,
    /// Index into the hunk's lines (an added or removed line).
    pub line: usize,
}

impl ReviewState {
    /// The review of turn `turn`: `targets` are (panel, label) in panel order; `order` lists
    /// positions in `targets` as they are shown.
    pub fn new(
        turn: u32,
        prompt: &str,
        targets: &[(usize, String)],
        order: Vec<usize>,
    ) -> ReviewState {
        let models = targets
            .iter()
            .map(|(panel, label)| ReviewModel {
                panel: *panel,
                label: label.clone(),
                set: SetState::Pending,
                check: None,
            })
            .collect::<Vec<_>>();
        let order = if order.len() == models.len() {
            order
        } else {
            (0..models.len()).collect()
        };
        let selected = order.first().copied().unwrap_or(0);
        ReviewState {
            turn,
            context: None,
            prompt: prompt.to_string(),
            models,
            order,
            sets: Vec::new(),
            selected,
            file: 0,
            scroll: 0,
            mode: DiffMode::Unified,
            basket: Basket::new(),
            basket_state: BasketState::Empty,
            search: None,
            diff_rows: 0,
            ratings: BTreeMap::new(),
            decided: None,
            busy: false,
            pending: None,
            opened: false,
            doc: None,
            line: None,
            comments: Vec::new(),
            draft: None,
            diff_width: 0,
            hscroll: 0,
            wrap: false,
            against: None,
            compared: None,
            versions: None,
            stash: None,
        }
    }

    /// The model of panel `panel`.
    pub fn model_of_panel(&self, panel: usize) -> Option<usize> {
        self.models.iter().position(|m| m.panel == panel)
    }

    /// The selected model.
    pub fn model(&self) -> Option<&ReviewModel> {
        self.models.get(self.selected)
    }

    /// The change set of `label`, once built.
    pub fn set_of(&self, label: &str) -> Option<&ChangeSet> {
        self.sets.iter().find(|s| s.model == label)
    }

    /// The selected model's change set.
    pub fn set(&self) -> Option<&ChangeSet> {
        self.model().and_then(|m| self.set_of(&m.label))
    }

    /// The file on screen.
    pub fn current_file(&self) -> Option<&FileChange> {
        self.set().and_then(|s| s.files.get(self.file))
    }

    /// The file the diff shows: the selected model's file against the base, or against the
    /// other model's version while comparing (`v`).
    pub fn shown_file(&self) -> Option<&FileChange> {
        if self.against.is_some() {
            self.compared.as_ref()
        } else {
            self.current_file()
        }
    }

    /// The hunk at the top of the diff (of the comparison while comparing).
    pub fn current_hunk(&self) -> Option<&Hunk> {
        let file = self.shown_file()?;
        let doc = self.doc.as_ref()?;
        file.hunks.get(doc.hunk_at(self.scroll))
    }

    /// The line under the line cursor, when it is in the hunk on screen of the model shown:
    /// the index into that hunk's lines.
    pub fn cursor_line(&self) -> Option<usize> {
        let cursor = self.line.as_ref()?;
        let label = &self.model()?.label;
        let file = self.current_file()?;
        let hunk = self.current_hunk()?;
        (cursor.label == *label && cursor.path == file.path && cursor.hunk == hunk.id)
            .then_some(cursor.line)
    }

    /// Adds a built change set (replacing one of the same model).
    pub fn add_set(&mut self, set: ChangeSet) {
        if let Some(i) = self.model_of_label(&set.model) {
            self.models[i].set = SetState::Ready;
        }
        self.sets.retain(|s| s.model != set.model);
        self.sets.push(set);
        self.recompute_basket();
        self.doc = None;
        self.stash = None;
    }

    fn model_of_label(&self, label: &str) -> Option<usize> {
        self.models.iter().position(|m| m.label == label)
    }

    /// Whether every model's change set is built or failed.
    pub fn all_built(&self) -> bool {
        self.models.iter().all(|m| m.set != SetState::Pending)
    }

    /// Every change set is built (or failed) and no check is still running: the review knows
    /// all it will know about the turn.
    pub fn settled(&self) -> bool {
        self.all_built()
            && !self
                .models
                .iter()
                .any(|m| m.check == Some(CheckState::Running))
    }

    /// The test files `label`'s change set touches, in its order (none before it is built):
    /// the review marks them, since editing a test is how a model makes it pass without a fix.
    pub fn test_files(&self, label: &str) -> Vec<String> {
        self.set_of(label)
            .map(|set| {
                versus_core::review::test_files(set.files.iter().map(|f| f.path.as_str()))
                    .into_iter()
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The model the review opens on ([`versus_core::review::best`] over the models in the order
    /// shown); `ended_well` says whether a model's run ended normally.
    pub fn best(&self, ended_well: impl Fn(&str) -> bool) -> Option<usize> {
        let standings: Vec<versus_core::review::Standing> = self
            .order
            .iter()
            .filter_map(|&i| self.models.get(i))
            .map(|m| versus_core::review::Standing {
                check: match &m.check {
                    Some(CheckState::Done(r)) if r.passed => {
                        versus_core::review::CheckVerdict::Passed
                    }
                    Some(CheckState::Done(_)) => versus_core::review::CheckVerdict::Failed,
                    _ => versus_core::review::CheckVerdict::NotRun,
                },
                test_files: self.test_files(&m.label).len(),
                ended_well: ended_well(&m.label),
                changed: self.set_of(&m.label).is_some_and(|s| !s.is_empty()),
            })
            .collect();
        let at = versus_core::review::best(&standings)?;
        self.order.get(at).copied()
    }

    /// Shows model `index` from its first file's top.
    pub fn open_on(&mut self, index: usize) {
        if index < self.models.len() {
            self.selected = index;
            self.file = 0;
            self.scroll = 0;
            self.doc = None;
            self.line = None;
        }
    }

    /// Recomposes the basket over the change sets.
    pub fn recompute_basket(&mut self) {
        self.basket_state = self.basket.state(&self.sets, &self.prompt);
    }

    /// Makes sure [`ReviewState::doc`] is the diff of the file on screen in the current layout
    /// (built once per file and layout).
    pub fn ensure_doc(&mut self) {
        let Some(model) = self.models.get(self.selected) else {
            self.doc = None;
            return;
        };
        if self.against.as_deref() == Some(model.label.as_str()) {
            self.against = None;
        }
        let fresh = |d: &DiffDoc| {
            d.model == model.label
                && d.mode == self.mode
                && d.against == self.against
                && self.current_file().is_some_and(|f| f.path == d.path)
        };
        if self.doc.as_ref().is_some_and(fresh) {
            return;
        }
        // Back from a comparison: the base diff laid out before it is still right.
        if self.stash.as_ref().is_some_and(fresh) {
            let base = self.stash.take();
            self.stash = std::mem::replace(&mut self.doc, base).filter(|d| d.against.is_none());
            self.compared = None;
            return;
        }
        let label = model.label.clone();
        if let Some(old) = self.doc.take().filter(|d| d.against.is_none()) {
            self.stash = Some(old);
        }
        self.compared = match (&self.against, self.current_file()) {
            (Some(other), Some(file)) => {
                let theirs = self.set_of(other).and_then(|s| s.file(&file.path));
                Some(versus_core::review::compare_file(file, theirs))
            }
            _ => None,
        };
        let against = self.against.clone();
        self.doc = self.shown_file().map(|file| {
            let mut doc = DiffDoc::build(&label, file, self.mode);
            doc.against = against;
            doc
        });
        self.hscroll = self.hscroll.min(self.doc.as_ref().map_or(0, |d| d.widest));
    }

    /// The models `v` steps through for the file on screen: the others whose change set is
    /// built and changed this file, in the shown order (a model that left it alone has the
    /// base's version, which is what the usual diff compares with).
    pub fn compare_targets(&self) -> Vec<String> {
        let (Some(model), Some(file)) = (self.model(), self.current_file()) else {
            return Vec::new();
        };
        self.order
            .iter()
            .filter_map(|&i| self.models.get(i))
            .filter(|m| m.label != model.label)
            .filter(|m| {
                self.set_of(&m.label)
                    .is_some_and(|s| s.file(&file.path).is_some())
            })
            .map(|m| m.label.clone())
            .collect()
    }

    /// `v`: compares with the next model of [`ReviewState::compare_targets`], and after the
    /// last one with the base again. Returns what is compared with now (`None`: the base);
    /// the diff starts over at the top, since its hunks are not the base diff's.
    pub fn cycle_against(&mut self) -> Option<String> {
        let targets = self.compare_targets();
        let next = match &self.against {
            None => targets.first().cloned(),
            Some(now) => targets
                .iter()
                .position(|t| t == now)
                .and_then(|i| targets.get(i + 1))
                .cloned(),
        };
        self.against = next.clone();
        self.scroll = 0;
        self.line = None;
        self.search = None;
        self.ensure_doc();
        next
    }

    /// Scrolls the N-way view (`V`) by `delta` lines in a pane `height` rows high, if it is
    /// open (false when it is not: the diff is what scrolls then). Bounded by the stacked
    /// layout's length, which the side-by-side one never exceeds.
    pub fn scroll_versions(&mut self, delta: isize, height: usize) -> bool {
        let Some(view) = self.versions.as_mut() else {
            return false;
        };
        let most: usize = view.columns.iter().map(|c| c.lines.len() + 2).sum();
        let max = most.saturating_sub(height.max(1)) as isize;
        view.scroll = (view.scroll as isize + delta).clamp(0, max.max(0)) as usize;
        true
    }

    /// Sideways scroll by `delta` columns, kept between 0 and the widest line's end (less
    /// one text column, so the last characters stay in sight). Nothing moves while wrapping.
    pub fn hscroll_by(&mut self, delta: isize) {
        if self.wrap {
            return;
        }
        let max = self.doc.as_ref().map_or(0, |d| {
            let (room, _) = d.text_widths(self.diff_width.max(1));
            d.widest.saturating_sub(room)
        });
        self.hscroll = (self.hscroll as isize + delta).clamp(0, max as isize) as usize;
    }

    /// `w`: long lines wrap, or are cut again (sideways scroll starts over either way).
    pub fn toggle_wrap(&mut self) {
        self.wrap = !self.wrap;
        self.hscroll = 0;
    }

    /// Moves the selection `delta` models along the shown order; the file list starts over.
    pub fn select_model(&mut self, delta: isize) {
        let n = self.order.len() as isize;
        if n == 0 {
            return;
        }
        let at = self
            .order
            .iter()
            .position(|&i| i == self.selected)
            .unwrap_or(0) as isize;
        self.selected = self.order[(at + delta).rem_euclid(n) as usize];
        self.file = 0;
        self.scroll = 0;
        self.search = None;
        self.ensure_doc();
    }

    /// Selects the model of panel `panel`.
    pub fn select_panel(&mut self, panel: usize) {
        if let Some(i) = self.model_of_panel(panel)
            && i != self.selected
        {
            self.selected = i;
            self.file = 0;
            self.scroll = 0;
            self.search = None;
            self.ensure_doc();
        }
    }

    /// Moves to the next (`delta` 1) or previous (-1) file of the selected model; returns
    /// false at either end.
    pub fn select_file(&mut self, delta: isize) -> bool {
        let n = self.set().map_or(0, |s| s.files.len()) as isize;
        let next = self.file as isize + delta;
        if next < 0 || next >= n {
            return false;
        }
        self.file = next as usize;
        self.scroll = 0;
        self.ensure_doc();
        if let Some(search) = self.search.take() {
            self.search_for(search.query, search.typing);
        }
        true
    }

    /// Scrolls the diff by `delta` rows. Scrolling down stops once the last row is on screen
    /// (a jump may have put the view further down; it is kept there).
    pub fn scroll_by(&mut self, delta: isize, height: usize) {
        let max = self.bottom(height).max(self.scroll) as isize;
        self.scroll = (self.scroll as isize + delta).clamp(0, max) as usize;
    }

    /// The scroll that shows the last page of a diff area `height` rows high (measured in
    /// screen lines when long lines wrap).
    pub fn bottom(&self, height: usize) -> usize {
        match (&self.doc, self.shown_file()) {
            (Some(d), Some(file)) if self.wrap && self.diff_width > 0 => {
                d.wrapped_bottom(file, height, self.diff_width)
            }
            (Some(d), _) => d.rows.len().saturating_sub(height.max(1)),
            _ => 0,
        }
    }

    /// Jumps to the next (`forward`) or previous hunk, putting its header at the top; across
    /// files when the file has no more. Returns false when there is none in that direction.
    pub fn jump_hunk(&mut self, forward: bool) -> bool {
        self.ensure_doc();
        let Some(doc) = &self.doc else {
            return false;
        };
        let target = if forward {
            doc.hunk_rows.iter().find(|&&r| r > self.scroll).copied()
        } else {
            doc.hunk_rows
                .iter()
                .rev()
                .find(|&&r| r < self.scroll)
                .copied()
        };
        match target {
            Some(row) => {
                self.scroll = row;
                true
            }
            None => {
                if !self.select_file(if forward { 1 } else { -1 }) {
                    return false;
                }
                if !forward && let Some(doc) = &self.doc {
                    self.scroll = doc.hunk_rows.last().copied().unwrap_or(0);
                }
                true
            }
        }
    }

    /// Starts or updates a search for `query` in the file on screen, jumping to the first
    /// match at or below the top row.
    pub fn search_for(&mut self, query: String, typing: bool) {
        self.ensure_doc();
        let matches = match (&self.doc, self.shown_file()) {
            (Some(doc), Some(file)) => doc.search(file, &query),
            _ => Vec::new(),
        };
        let current = matches.iter().position(|&r| r >= self.scroll).unwrap_or(0);
        if let Some(&row) = matches.get(current) {
            self.scroll = self.top_for_match(row);
        }
        self.search = Some(DiffSearch {
            query,
            typing,
            matches,
            current,
        });
    }

    /// Jumps to the next or previous search match (wrapping); false without matches.
    pub fn next_match(&mut self, forward: bool) -> bool {
        let Some(search) = &mut self.search else {
            return false;
        };
        let n = search.matches.len();
        if n == 0 {
            return false;
        }
        search.current = if forward {
            (search.current + 1) % n
        } else {
            (search.current + n - 1) % n
        };
        let row = search.matches[search.current];
        self.scroll = self.top_for_match(row);
        true
    }

    /// The top row that shows match `row` with context: up to [`MATCH_CONTEXT`] rows above
    /// it (fewer on a short pane, so the match stays on screen), never above the header of
    /// the match's own hunk (so the hunk at the top, what Space picks, is the matched one),
    /// and the header itself when the match is within twice that of it: a hunk's first
    /// change sits after its three context lines, and it should show under its header.
    fn top_for_match(&self, row: usize) -> usize {
        let context = MATCH_CONTEXT.min(self.diff_rows.saturating_sub(1) / 2);
        let header = self
            .doc
            .as_ref()
            .and_then(|d| d.hunk_rows.get(d.hunk_at(row)).copied())
            .filter(|&h| h <= row)
            .unwrap_or(0);
        if row - header <= 2 * context {
            header
        } else {
            row - context
        }
    }

    /// Whether the hunk `hunk` of `path` of `label` takes part in a conflict of the basket.
    pub fn hunk_conflicts(&self, label: &str, path: &str, hunk: &str) -> bool {
        let BasketState::Conflicts(conflicts) = &self.basket_state else {
            return false;
        };
        conflicts.iter().any(|c| {
            c.path == path
                && [&c.first, &c.second]
                    .iter()
                    .any(|s| s.model == label && s.hunk.as_deref().is_none_or(|h| h == hunk))
        })
    }

    /// Whether some pick of the basket touches `path` of `label` (`Some(true)`: the whole file).
    pub fn file_pick(&self, label: &str, file: &FileChange) -> Option<bool> {
        let covered = file
            .hunks
            .iter()
            .filter(|h| self.basket.covers_hunk(label, &file.path, &h.id))
            .count();
        let whole = self.basket.picks().iter().any(|p| match p {
            versus_core::apply::Pick::ChangeSet { model } => model == label,
            versus_core::apply::Pick::File { model, path } => model == label && *path == file.path,
            versus_core::apply::Pick::Hunk { .. } | versus_core::apply::Pick::Line { .. } => false,
        });
        let lines = file
            .hunks
            .iter()
            .any(|h| self.basket.lines_in(label, &file.path, &h.id) > 0);
        if whole || (covered > 0 && covered == file.hunks.len()) {
            Some(true)
        } else if covered > 0 || lines {
            Some(false)
        } else {
            None
        }
    }
}

/// One side of a conflict with the name shown for its model.
pub fn conflict_side(app: &App, side: &versus_core::apply::ConflictSide) -> String {
    let who = app.shown_label(&side.model);
    match (&side.hunk, &side.lines) {
        (Some(_), Some(lines)) => {
            let number = app
                .review
                .as_ref()
                .and_then(|r| r.set_of(&side.model))
                .and_then(|s| {
                    s.files
                        .iter()
                        .flat_map(|f| f.hunks.iter())
                        .find(|h| Some(&h.id) == side.hunk.as_ref())
                })
                .map(|h| format!("hunk {} ", h.number))
                .unwrap_or_default();
            format!("{who} {number}({lines})")
        }
        _ => format!("{who} (whole file)"),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use versus_core::workspace::changeset::{BaseReader, LineKind};
    use versus_core::workspace::{Base, FileWrite, WriteOrigin};

    fn review() -> (tempfile::TempDir, ReviewState) {
        let dir = tempfile::tempdir().unwrap();
        let lines: String = (1..=40).map(|i| format!("line {i}\n")).collect();
        std::fs::write(dir.path().join("a.txt"), &lines).unwrap();
        std::fs::write(dir.path().join("b.txt"), &lines).unwrap();
        let base = Base::capture(dir.path()).unwrap();
        let edited = lines
            .replace("line 3\n", "three\n")
            .replace("line 30\n", "thirty\n");
        let writes: Vec<FileWrite> = ["a.txt", "b.txt"]
            .iter()
            .enumerate()
            .map(|(i, p)| FileWrite {
                path: (*p).into(),
                content: Some(Arc::new(edited.as_bytes().to_vec())),
                origin: WriteOrigin::new("write_file", "c"),
                seq: i as u64,
                symlink: false,
            })
            .collect();
        let set = ChangeSet::build("m/a", &base, &writes, &BaseReader::new(&base), None).unwrap();
        let mut r = ReviewState::new(
            1,
            "p",
            &[(0, "m/a".to_string()), (1, "m/b".to_string())],
            vec![1, 0],
        );
        r.add_set(set);
        (dir, r)
    }

    #[test]
    fn hunks_are_walked_across_files() {
        let (_d, mut r) = review();
        assert_eq!(r.selected, 1, "the first model shown is selected");
        r.selected = 0;
        r.ensure_doc();
        assert_eq!(r.current_hunk().unwrap().number, 1);
        assert!(r.jump_hunk(true));
        assert_eq!(r.current_hunk().unwrap().number, 2);
        assert!(r.jump_hunk(true), "on to the next file");
        assert_eq!((r.file, r.scroll), (1, 0));
        assert!(r.jump_hunk(true));
        assert!(!r.jump_hunk(true), "no hunk after the last");
        assert!(r.jump_hunk(false));
        assert!(r.jump_hunk(false), "back to the previous file's last hunk");
        assert_eq!(r.file, 0);
        assert_eq!(r.current_hunk().unwrap().number, 2);
    }

    #[test]
    fn a_search_jump_keeps_context_and_the_hunk_header_above_the_match() {
        let (_d, mut r) = review();
        r.selected = 0;
        r.diff_rows = 20;
        // Near the start of hunk 2: the top is its header.
        r.search_for("line 28".into(), false);
        let doc = r.doc.clone().unwrap();
        let header = doc.hunk_rows[1];
        let row = r.search.as_ref().unwrap().matches[0];
        assert!(
            row > header && row - header <= 2 * MATCH_CONTEXT,
            "{row} {header}"
        );
        assert_eq!(r.scroll, header, "the hunk header stays in sight");
        // The hunk's first change (after its context lines) shows under its header too.
        r.search_for("thirty".into(), false);
        assert_eq!(r.scroll, header);
        // Deeper in: MATCH_CONTEXT rows above the match, still in the same hunk.
        r.search_for("line 32".into(), false);
        let row = r.search.as_ref().unwrap().matches[0];
        assert_eq!(r.scroll, row - MATCH_CONTEXT);
        assert_eq!(doc.hunk_at(r.scroll), 1, "Space picks the matched hunk");
        // n keeps the same rule.
        r.scroll = 0;
        r.search_for("line 32".into(), false);
        assert!(r.next_match(true));
        assert_eq!(r.scroll, row - MATCH_CONTEXT);
        // A pane 3 rows high keeps one row above, so the match stays on screen.
        r.diff_rows = 3;
        r.search_for("line 32".into(), false);
        assert_eq!(r.scroll, row - 1);
    }

    #[test]
    fn search_jumps_to_matches_and_wraps() {
        let (_d, mut r) = review();
        r.selected = 0;
        r.search_for("thirty".into(), false);
        let first = r.scroll;
        assert!(first > 0);
        assert!(r.next_match(true));
        assert_eq!(r.scroll, first, "one match: wraps onto itself");
        r.search_for("nothing like this".into(), false);
        assert!(!r.next_match(true));
    }

    #[test]
    fn picks_mark_files_and_selecting_resets_the_position() {
        let (_d, mut r) = review();
        r.selected = 0;
        r.ensure_doc();
        let file = r.current_file().unwrap().clone();
        assert_eq!(r.file_pick("m/a", &file), None);
        r.basket.toggle_hunk("m/a", "a.txt", &file.hunks[0].id);
        assert_eq!(r.file_pick("m/a", &file), Some(false));
        r.basket.toggle_file("m/a", "a.txt");
        assert_eq!(r.file_pick("m/a", &file), Some(true));
        r.recompute_basket();
        assert!(matches!(r.basket_state, BasketState::Ready { .. }));
        r.scroll = 5;
        r.select_model(1);
        assert_eq!((r.selected, r.scroll, r.file), (1, 0, 0));
    }

    /// Two models that both changed `a.txt`: m/a its line 3 and a 200-column line 10, m/b the
    /// same line 3 and line 20.
    fn two() -> (tempfile::TempDir, ReviewState) {
        let dir = tempfile::tempdir().unwrap();
        let lines: String = (1..=40).map(|i| format!("line {i}\n")).collect();
        std::fs::write(dir.path().join("a.txt"), &lines).unwrap();
        let base = Base::capture(dir.path()).unwrap();
        let long = format!("{}\n", "x".repeat(200));
        let a = lines
            .replace("line 3\n", "three\n")
            .replace("line 10\n", &long);
        let b = lines
            .replace("line 3\n", "three\n")
            .replace("line 20\n", "twenty\n");
        let set = |label: &str, text: &str| {
            let write = FileWrite {
                path: "a.txt".into(),
                content: Some(Arc::new(text.as_bytes().to_vec())),
                origin: WriteOrigin::new("write_file", "c"),
                seq: 0,
                symlink: false,
            };
            ChangeSet::build(label, &base, &[write], &BaseReader::new(&base), None).unwrap()
        };
        let mut r = ReviewState::new(
            1,
            "p",
            &[(0, "m/a".to_string()), (1, "m/b".to_string())],
            vec![0, 1],
        );
        r.add_set(set("m/a", &a));
        r.add_set(set("m/b", &b));
        r.ensure_doc();
        (dir, r)
    }

    #[test]
    fn v_cycles_through_the_other_models_and_back_to_the_base() {
        let (_d, mut r) = two();
        assert_eq!(r.compare_targets(), vec!["m/b".to_string()]);
        assert_eq!(r.cycle_against(), Some("m/b".to_string()));
        let shown = r.shown_file().unwrap();
        // Line 3 was changed the same way by both: no difference there; line 10 (mine) and
        // line 20 (theirs) differ.
        let changed: Vec<(LineKind, String)> = shown
            .hunks
            .iter()
            .flat_map(|h| h.lines.iter())
            .filter(|l| l.kind != LineKind::Context)
            .map(|l| (l.kind, l.text.clone()))
            .collect();
        assert_eq!(
            changed,
            vec![
                (LineKind::Removed, "line 10".to_string()),
                (LineKind::Added, "x".repeat(200)),
                (LineKind::Removed, "twenty".to_string()),
                (LineKind::Added, "line 20".to_string()),
            ]
        );
        assert_eq!(r.doc.as_ref().unwrap().against.as_deref(), Some("m/b"));
        assert_eq!(r.cycle_against(), None, "after the last model: the base");
        assert_eq!(r.shown_file(), r.current_file());
        // Selecting the model compared with goes back to the base.
        r.cycle_against();
        r.select_model(1);
        assert_eq!(r.against, None);
    }

    #[test]
    fn sideways_scroll_clamps_to_the_widest_line() {
        let (_d, mut r) = two();
        r.diff_width = 60;
        let doc = r.doc.clone().unwrap();
        assert_eq!(doc.widest, 200);
        let (room, _) = doc.text_widths(60);
        assert_eq!(room, 60 - doc.gutter());
        r.hscroll_by(-8);
        assert_eq!(r.hscroll, 0, "not left of the first column");
        r.hscroll_by(16);
        assert_eq!(r.hscroll, 16);
        r.hscroll_by(10_000);
        assert_eq!(r.hscroll, 200 - room, "the line's end stays in sight");
        r.toggle_wrap();
        assert_eq!(r.hscroll, 0, "wrapping starts over at the first column");
        r.hscroll_by(8);
        assert_eq!(r.hscroll, 0, "no sideways scroll while wrapping");
    }

    #[test]
    fn wrapping_counts_screen_lines_and_the_bottom_follows() {
        let (_d, mut r) = two();
        r.diff_width = 60;
        let doc = r.doc.clone().unwrap();
        let file = r.current_file().unwrap().clone();
        let (room, _) = doc.text_widths(60);
        let long_row = doc
            .rows
            .iter()
            .position(|row| matches!(row, doc::Row::Line { line, hunk, .. } if file.hunks[*hunk].lines[*line].text.len() == 200))
            .unwrap();
        assert_eq!(doc.row_height(&file, long_row, 60), 200usize.div_ceil(room));
        assert_eq!(doc.row_height(&file, 0, 60), 1, "a header");
        assert_eq!(doc::wrapped_lines(104, 52), 2, "exactly two lines' worth");
        assert_eq!(doc::wrapped_lines(105, 52), 3);
        assert_eq!(
            doc::wrapped_lines(0, 52),
            1,
            "an empty line still takes one"
        );
        let unwrapped = r.bottom(5);
        assert_eq!(unwrapped, doc.rows.len() - 5);
        r.toggle_wrap();
        // The long line sits 3 context rows from the end and takes 4 lines: with it, the last
        // page would need 7 lines, so the bottom shows only the 3 rows after it.
        assert_eq!(r.bottom(5), doc.rows.len() - 3);
        assert_eq!(r.bottom(7), doc.rows.len() - 4);
        let total: usize = (0..doc.rows.len())
            .map(|i| doc.row_height(&file, i, 60))
            .sum();
        assert_eq!(total, doc.rows.len() - 1 + 200usize.div_ceil(room));
    }
}
