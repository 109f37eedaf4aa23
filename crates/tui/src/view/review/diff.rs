//! The diff of the file on screen: hunk headers with their origin (write, edit, patch, bash)
//! and pick state, then the lines, unified or side by side, with +/- colours and the changed
//! words of each changed line highlighted. Only the rows on screen are turned into spans, and
//! word highlights are computed for those rows only, so a frame costs the same for a 50-line
//! file and a 20,000-line one.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};

use versus_core::review::{Cell, word_highlights};
use versus_core::workspace::changeset::{ChangeKind, FileChange, Hunk, LineKind};

use super::super::super::keymap::{self, Context, KeyAction};
use super::super::super::review::ReviewState;
use super::super::super::review::doc::{DiffDoc, DiffMode, NO_NEWLINE, Row};
use super::super::super::state::App;
use super::super::super::theme::Theme;
use super::cut::lay;
use super::text::{find_all, fit, highlighted_found};

/// Marks a screen line that continues the line above (long lines wrap with `w`).
const WRAPPED: &str = "↪";

/// Draws the diff pane (or the N-way view of one hunk, while it is open).
pub fn render(frame: &mut Frame<'_>, area: Rect, app: &App, review: &ReviewState) {
    if area.height < 3 || area.width < 10 {
        return;
    }
    if let Some(view) = &review.versions {
        super::versions::render(frame, area, app, review, view);
        return;
    }
    let t = app.theme;
    let file = review.shown_file();
    let (title, doc) = match (file, &review.doc) {
        (Some(file), Some(doc)) => (
            fit_title(file_title(app, file, doc, review), doc.mode, area.width),
            Some((file, doc)),
        ),
        _ => (empty_title(app, review), None),
    };
    let mut block = Block::bordered()
        .border_style(t.accent())
        .title_top(Line::styled(title, t.bold()));
    block = block.title_bottom(bottom_line(
        app,
        review,
        t,
        usize::from(area.width).saturating_sub(2),
    ));
    let inner_height = usize::from(area.height - 2);
    let inner_width = usize::from(area.width - 2);
    let lines: Vec<Line<'static>> = match doc {
        Some((file, _)) if review.against.is_some() && file.hunks.is_empty() && !file.binary => {
            vec![Line::styled(
                format!(" {}", super::super::super::strings::COMPARE_SAME),
                t.dim(),
            )]
        }
        Some((file, doc)) => {
            let label = review.model().map_or("", |m| m.label.as_str());
            let current = doc.hunk_at(review.scroll);
            let matched = review
                .search
                .as_ref()
                .and_then(|s| s.matches.get(s.current).copied());
            let cursor = review.cursor_line();
            let query = review.search.as_ref().map_or("", |s| s.query.as_str());
            let comparing = review.against.is_some();
            let mut lines = Vec::with_capacity(inner_height);
            for (i, row) in doc.rows.iter().enumerate().skip(review.scroll) {
                if lines.len() >= inner_height {
                    break;
                }
                let view = RowView {
                    theme: t,
                    width: inner_width,
                    doc,
                    file,
                    matched: matched == Some(i),
                    query,
                    hscroll: review.hscroll,
                    wrap: review.wrap,
                };
                // Line picks: a mark on picked lines, the cursor on its line (not while
                // comparing: those hunks are not the base diff's).
                let line_marks = |h: usize, line: usize| {
                    if comparing {
                        return (false, false);
                    }
                    let id = file.hunks.get(h).map_or("", |h| h.id.as_str());
                    let picked = review.basket.has_line(label, &file.path, id, line);
                    (picked, h == current && cursor == Some(line))
                };
                match row {
                    Row::Note(text) => lines.push(Line::styled(format!(" {text}"), t.dim())),
                    Row::Header { hunk } => {
                        lines.push(file.hunks.get(*hunk).map_or_else(Line::default, |h| {
                            header(app, review, label, file, h, *hunk == current)
                        }))
                    }
                    Row::Line {
                        hunk,
                        line,
                        old,
                        new,
                        partner,
                    } => lines.extend(view.unified(
                        *hunk,
                        *line,
                        (*old, *new),
                        *partner,
                        line_marks(*hunk, *line),
                    )),
                    Row::Side { row, .. } => {
                        lines.extend(view.side(&row.left, &row.right, &row.words()))
                    }
                }
            }
            lines.truncate(inner_height);
            lines
        }
        None => vec![Line::styled(empty_text(app, review), t.dim())],
    };
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

fn kind_word(kind: ChangeKind) -> &'static str {
    match kind {
        ChangeKind::Created => "new file",
        ChangeKind::Modified => "modified",
        ChangeKind::Deleted => "deleted",
    }
}

fn file_title(app: &App, file: &FileChange, doc: &DiffDoc, review: &ReviewState) -> String {
    let hunk = if file.hunks.is_empty() {
        String::new()
    } else {
        format!(
            " · hunk {}/{}",
            doc.hunk_at(review.scroll) + 1,
            file.hunks.len()
        )
    };
    let layout = match doc.mode {
        DiffMode::Unified => "unified",
        DiffMode::SideBySide => "side by side",
    };
    let link = file
        .symlink_label()
        .map(|label| format!(" · {label}"))
        .unwrap_or_default();
    let long = if review.wrap {
        " · wrap".to_string()
    } else if review.hscroll > 0 {
        format!(" · col {}", review.hscroll + 1)
    } else {
        String::new()
    };
    if let Some(other) = &review.against {
        // Each name in at most a quarter of the screen, cut by the one rule for labels.
        let room = usize::from(app.size.0 / 4).max(10);
        let mine = review
            .model()
            .map_or(String::new(), |m| app.short_label(&m.label, room));
        return format!(
            " {mine} vs {} · {}{long} · +{} -{}{hunk} · {layout} ",
            app.short_label(other, room),
            versus_core::sanitize::name(&file.path),
            file.added,
            file.removed
        );
    }
    format!(
        " {}{long} · {}{link} · +{} -{}{hunk} · {layout} ",
        versus_core::sanitize::name(&file.path),
        kind_word(file.kind),
        file.added,
        file.removed
    )
}

/// The title within the border: the layout's name goes first when it does not fit (the rows
/// show the layout anyway), so the path, the counts and the hunk stay whole.
fn fit_title(title: String, mode: DiffMode, width: u16) -> String {
    let room = usize::from(width).saturating_sub(2);
    if unicode_width::UnicodeWidthStr::width(title.as_str()) <= room {
        return title;
    }
    let layout = match mode {
        DiffMode::Unified => " · unified ",
        DiffMode::SideBySide => " · side by side ",
    };
    let title = match title.strip_suffix(layout) {
        Some(short) => format!("{short} "),
        None => title,
    };
    // Still too wide: cut at its end, and the cut shows.
    super::super::super::wrap::clip(&title, room)
}

fn empty_title(app: &App, review: &ReviewState) -> String {
    match review.model() {
        Some(m) => format!(
            " {} ",
            app.short_label(&m.label, usize::from(app.size.0).saturating_sub(4).max(8))
        ),
        None => " diff ".to_string(),
    }
}

fn empty_text(app: &App, review: &ReviewState) -> String {
    use super::super::super::review::SetState;
    let Some(m) = review.model() else {
        return " no model".to_string();
    };
    let running = app
        .panel_of(&m.label)
        .and_then(|i| app.panels.get(i))
        .is_some_and(|p| p.status.is_active());
    match &m.set {
        SetState::Pending if running => {
            " still running: its changes show here when it finishes".into()
        }
        SetState::Pending => " preparing its changes…".into(),
        SetState::Failed(why) => format!(" its changes cannot be shown: {why}"),
        SetState::Ready => " no file changed (t shows what it said)".into(),
    }
}

fn bottom_line(app: &App, review: &ReviewState, t: Theme, width: usize) -> Line<'static> {
    if let Some(d) = &review.draft {
        return Line::from(vec![
            Span::styled(format!(" comment on {}:{}: ", d.path, d.place), t.hint()),
            Span::styled(format!("{}▏", d.text), t.bold()),
            Span::styled(
                format!(" · {} ", keymap::hint_line(Context::ReviewComment, None)),
                t.dim(),
            ),
        ]);
    }
    match &review.search {
        Some(s) if s.typing => Line::from(vec![
            Span::styled(" /", t.hint()),
            Span::styled(format!("{}▏", s.query), t.bold()),
            Span::styled(
                format!(
                    " {} match(es) · {} ",
                    s.matches.len(),
                    keymap::hint_line(Context::ReviewSearch, None)
                ),
                t.dim(),
            ),
        ]),
        Some(s) => Line::styled(
            format!(
                " /{} · match {}/{} · {} next/previous · {} clears ",
                s.query,
                (s.current + 1).min(s.matches.len()),
                s.matches.len(),
                pair(KeyAction::NextHunk, KeyAction::PrevHunk),
                key(KeyAction::ReviewBack),
            ),
            t.hint(),
        ),
        None if review.against.is_some() => Line::styled(
            super::super::super::strings::compare_hint(
                &review
                    .against
                    .as_deref()
                    .map(|a| app.shown_label(a))
                    .unwrap_or_default(),
            ),
            t.hint(),
        ),
        None if review.cursor_line().is_some() => Line::styled(
            fitted(
                vec![
                    (pair(KeyAction::NextLine, KeyAction::PrevLine), "line"),
                    (key(KeyAction::PickLine), "pick/drop the line"),
                    (key(KeyAction::PickHunk), "the whole hunk"),
                    (pair(KeyAction::NextHunk, KeyAction::PrevHunk), "hunk"),
                ],
                width,
            ),
            t.hint(),
        ),
        None => Line::styled(
            fitted(
                vec![
                    (pair(KeyAction::NextHunk, KeyAction::PrevHunk), "hunk"),
                    (pair(KeyAction::PrevFile, KeyAction::NextFile), "file"),
                    (key(KeyAction::ToggleLayout), "layout"),
                    (key(KeyAction::DiffSearch), "search"),
                    (key(KeyAction::PickHunk), "pick hunk"),
                    (pair(KeyAction::NextLine, KeyAction::PrevLine), "lines"),
                    (key(KeyAction::PickFile), "file"),
                    (key(KeyAction::CompareNext), "compare"),
                    (key(KeyAction::Versions), "all versions"),
                    (
                        pair(KeyAction::ScrollLeft, KeyAction::ScrollRight),
                        "sideways",
                    ),
                    (key(KeyAction::ToggleWrap), "wrap"),
                ],
                width,
            ),
            t.dim(),
        ),
    }
}

/// Key hints for the border, whole ones from the first that fit in `width` (with the spaces
/// around them), ending with `…` when some were left out: the one rule of every key line.
fn fitted(hints: Vec<(String, &'static str)>, width: usize) -> String {
    let (kept, dropped) = keymap::fit_hints(hints, width.saturating_sub(2));
    let mut line = kept
        .iter()
        .map(|(keys, label)| format!("{keys} {label}"))
        .collect::<Vec<_>>()
        .join(keymap::HINT_SEP);
    if dropped {
        if !line.is_empty() {
            line.push_str(keymap::HINT_SEP);
        }
        line.push_str(crate::wrap::ELLIPSIS);
    }
    format!(" {line} ")
}

/// The review key of `action`, as the table names it.
fn key(action: KeyAction) -> String {
    keymap::key_name(Context::Review, action)
}

/// Two review keys as `n/N`.
fn pair(a: KeyAction, b: KeyAction) -> String {
    format!("{}/{}", key(a), key(b))
}

/// A hunk's header: its ranges, number, origin, and whether it is picked or conflicts.
fn header(
    app: &App,
    review: &ReviewState,
    label: &str,
    file: &FileChange,
    hunk: &Hunk,
    current: bool,
) -> Line<'static> {
    let t = app.theme;
    let mut spans = vec![
        Span::styled(if current { "▶" } else { " " }, t.accent()),
        Span::styled(
            format!("@@ -{} +{} @@", hunk.old.header(), hunk.new.header()),
            t.hint(),
        ),
        Span::styled(
            format!(" hunk {}/{}", hunk.number, file.hunks.len()),
            t.bold(),
        ),
    ];
    let tools = hunk.tools();
    if !tools.is_empty() {
        spans.push(Span::styled(
            format!(" · from {}", tools.join(", ")),
            t.dim(),
        ));
    }
    if review.basket.covers_hunk(label, &file.path, &hunk.id) {
        spans.push(Span::styled(" · ✓ picked", t.ok()));
    } else {
        let lines = review.basket.lines_in(label, &file.path, &hunk.id);
        if lines > 0 {
            spans.push(Span::styled(
                format!(
                    " · ✓ {lines} line{} picked",
                    if lines == 1 { "" } else { "s" }
                ),
                t.ok(),
            ));
        }
    }
    if review.hunk_conflicts(label, &file.path, &hunk.id) {
        spans.push(Span::styled(" · ⚠ conflict", t.error()));
    }
    Line::from(spans)
}

/// What a row needs to be drawn.
struct RowView<'a> {
    theme: Theme,
    width: usize,
    doc: &'a DiffDoc,
    file: &'a FileChange,
    matched: bool,
    /// The search query: its occurrences are highlighted on every row drawn.
    query: &'a str,
    /// Columns of text scrolled off to the left.
    hscroll: usize,
    /// Long lines wrap instead of being cut.
    wrap: bool,
}

impl RowView<'_> {
    fn number(&self, n: Option<usize>) -> String {
        match n {
            Some(n) => format!("{n:>w$}", w = self.doc.number_width),
            None => " ".repeat(self.doc.number_width),
        }
    }

    fn gutter_style(&self) -> Style {
        if self.matched {
            self.theme.selected()
        } else {
            self.theme.dim()
        }
    }

    fn styles(&self, kind: LineKind) -> (&'static str, Style, Style) {
        let t = self.theme;
        match kind {
            LineKind::Context => (" ", t.text(), t.text()),
            LineKind::Removed => ("-", t.removed_line(), t.removed_word()),
            LineKind::Added => ("+", t.added_line(), t.added_word()),
        }
    }

    /// The search matches in `text` and their style (stronger on the current match's row).
    fn found(&self, text: &str) -> (Vec<std::ops::Range<usize>>, Style) {
        let style = if self.matched {
            self.theme.search_current()
        } else {
            self.theme.search_match()
        };
        (find_all(text, self.query), style)
    }

    /// Syntax colours of one line of this file (none for unknown languages).
    fn syntax(&self, text: &str) -> Vec<(std::ops::Range<usize>, Style)> {
        match versus_core::review::Lang::for_path(&self.file.path) {
            Some(lang) => versus_core::review::tokens(lang, text)
                .into_iter()
                .map(|(range, token)| (range, self.theme.syntax(token)))
                .collect(),
            None => Vec::new(),
        }
    }

    /// One unified row; `(picked, cursor)`: the line is picked on its own (a `✓` after its
    /// sign) and the line cursor is on it (the gutter is highlighted, and `▸` marks it).
    fn unified(
        &self,
        hunk: usize,
        line: usize,
        (old, new): (Option<usize>, Option<usize>),
        partner: Option<usize>,
        (picked, cursor): (bool, bool),
    ) -> Vec<Line<'static>> {
        let Some(h) = self.file.hunks.get(hunk) else {
            return vec![Line::default()];
        };
        let Some(l) = h.lines.get(line) else {
            return vec![Line::default()];
        };
        let (mark, base, word) = self.styles(l.kind);
        let marks = match (l.kind, partner.and_then(|p| h.lines.get(p))) {
            (LineKind::Removed, Some(other)) => word_highlights(&l.text, &other.text).old,
            (LineKind::Added, Some(other)) => word_highlights(&other.text, &l.text).new,
            _ => Vec::new(),
        };
        let gutter = if cursor {
            self.theme.selected()
        } else {
            self.gutter_style()
        };
        let pick = match (picked, cursor) {
            (true, _) => "✓",
            (false, true) => "▸",
            (false, false) => " ",
        };
        let numbers = format!("{} {} ", self.number(old), self.number(new));
        let (found, found_style) = self.found(&l.text);
        let mut text = highlighted_found(
            &l.text,
            &marks,
            &self.syntax(&l.text),
            base,
            word,
            &found,
            found_style,
        );
        if !l.newline {
            text.push(Span::styled(NO_NEWLINE, self.theme.dim()));
        }
        let (room, _) = self.doc.text_widths(self.width);
        let pieces = lay(&text, room, self.hscroll, self.wrap, self.theme.dim());
        let blank = " ".repeat(numbers.chars().count());
        pieces
            .into_iter()
            .enumerate()
            .map(|(k, piece)| {
                let mut spans = if k == 0 {
                    vec![
                        Span::styled(numbers.clone(), gutter),
                        Span::styled(format!("{mark}{pick}"), base),
                    ]
                } else {
                    vec![
                        Span::styled(blank.clone(), gutter),
                        Span::styled(format!("{WRAPPED} "), self.theme.dim()),
                    ]
                };
                spans.extend(piece);
                Line::from(spans)
            })
            .collect()
    }

    fn side(
        &self,
        left: &Option<Cell>,
        right: &Option<Cell>,
        words: &versus_core::review::Highlight,
    ) -> Vec<Line<'static>> {
        let half = self.width.saturating_sub(1) / 2;
        let (room_left, room_right) = self.doc.text_widths(self.width);
        let left = self.cell(left.as_ref(), &words.old, half, room_left);
        let right = self.cell(
            right.as_ref(),
            &words.new,
            self.width.saturating_sub(half + 1),
            room_right,
        );
        let n = left.len().max(right.len());
        (0..n)
            .map(|k| {
                let mut spans = left
                    .get(k)
                    .cloned()
                    .unwrap_or_else(|| fit(Vec::new(), half, self.theme.text()));
                spans.push(Span::styled("│", self.theme.dim()));
                spans.extend(right.get(k).cloned().unwrap_or_default());
                Line::from(spans)
            })
            .collect()
    }

    fn cell(
        &self,
        cell: Option<&Cell>,
        marks: &[std::ops::Range<usize>],
        width: usize,
        room: usize,
    ) -> Vec<Vec<Span<'static>>> {
        let Some(cell) = cell else {
            return vec![fit(Vec::new(), width, self.theme.dim())];
        };
        let (mark, base, word) = self.styles(cell.kind);
        let number = format!("{} ", self.number(Some(cell.line)));
        let (found, found_style) = self.found(&cell.text);
        let text = highlighted_found(
            &cell.text,
            marks,
            &self.syntax(&cell.text),
            base,
            word,
            &found,
            found_style,
        );
        let blank = " ".repeat(number.chars().count());
        lay(&text, room, self.hscroll, self.wrap, self.theme.dim())
            .into_iter()
            .enumerate()
            .map(|(k, piece)| {
                let mut spans = if k == 0 {
                    vec![
                        Span::styled(number.clone(), self.gutter_style()),
                        Span::styled(mark.to_string(), base),
                    ]
                } else {
                    vec![
                        Span::styled(blank.clone(), self.gutter_style()),
                        Span::styled(WRAPPED, self.theme.dim()),
                    ]
                };
                spans.extend(piece);
                fit(spans, width, self.theme.text())
            })
            .collect()
    }
}
