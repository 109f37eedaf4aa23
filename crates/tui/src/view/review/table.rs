//! The table of the turn's models: status, files, +/- lines, tokens, cost, time, tool calls,
//! calls that did not succeed (a command's non-zero exit, a failed edit, a refusal, a
//! timeout), check result and rating, one row per model in the order shown (shuffled in
//! blind mode), the selected one marked, `⚠` before the file count of a change set that
//! touches test files; under it the selected model's check output and, when a change set
//! touches test files, a note about it.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};
use unicode_width::UnicodeWidthStr;

use super::super::super::action::CheckState;
use super::super::super::format::{clock, cost, duration_ms, one_line, usage_tokens};
use super::super::super::review::{ReviewModel, ReviewState, SetState};
use super::super::super::state::App;
use super::super::super::wrap;
use super::super::panel::status_mark;

/// Draws the table.
pub fn render(frame: &mut Frame<'_>, area: Rect, app: &App, review: &ReviewState) {
    if area.height < 3 {
        return;
    }
    let t = app.theme;
    let names: Vec<String> = review
        .order
        .iter()
        .filter_map(|&i| review.models.get(i))
        .map(|m| app.shown_label(&m.label))
        .collect();
    let longest = names.iter().map(|n| n.width()).max().unwrap_or(5).max(5);
    let layout = Columns::fit(usize::from(area.width.saturating_sub(2)), longest);
    // Cut by the one rule for labels: in the middle, with `…`, never two alike.
    let names = wrap::labels(&names, layout.name);
    let mut lines = vec![Line::styled(layout.header(), t.dim())];
    // Rows for the models: as many as fit, scrolled so the selected one is always on screen.
    // Cut with `…` like every other cut (the terminal would clip it mid-word, unmarked).
    let check = check_line(app, review)
        .map(|l| wrap::fit_line(l, usize::from(area.width.saturating_sub(2))));
    let tests = tests_line(app, review, usize::from(area.width.saturating_sub(4)));
    let context = context_line(app, review, usize::from(area.width.saturating_sub(4)));
    let room = usize::from(area.height.saturating_sub(3))
        .saturating_sub(usize::from(check.is_some()))
        .saturating_sub(usize::from(tests.is_some()))
        .saturating_sub(usize::from(context.is_some()))
        .max(1);
    let at = review
        .order
        .iter()
        .position(|&i| i == review.selected)
        .unwrap_or(0);
    let first = at.saturating_sub(room.saturating_sub(1));
    for (&i, name) in review.order.iter().zip(&names).skip(first).take(room) {
        let Some(model) = review.models.get(i) else {
            continue;
        };
        lines.push(row(app, review, model, name, &layout, i == review.selected));
    }
    if let Some(line) = check {
        lines.push(line);
    }
    if let Some(line) = tests {
        lines.push(line);
    }
    if let Some(line) = context {
        lines.push(line);
    }
    let finished = review
        .models
        .iter()
        .filter(|m| {
            app.panel_of(&m.label)
                .and_then(|p| app.panels.get(p))
                .is_some_and(|p| !p.status.is_active())
        })
        .count();
    let mut block = Block::bordered()
        .border_style(t.accent())
        .title_top(Line::styled(
            format!(
                " review · turn {} · {finished}/{} finished · Tab/Shift+Tab model ",
                review.turn,
                review.models.len()
            ),
            t.accent(),
        ));
    if let Some(right) = corner(app, review) {
        block = block.title_top(right.right_aligned());
    }
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

/// The top right corner: the choice once made, else whether names are hidden.
fn corner(app: &App, review: &ReviewState) -> Option<Line<'static>> {
    let t = app.theme;
    if let Some(decided) = &review.decided {
        let text = if decided.chosen.is_empty() {
            " ✓ none of them ".to_string()
        } else {
            // A corner, not the whole border: each name in at most a third of the table.
            let room = usize::from(app.size.0 / 3).max(8);
            let names: Vec<String> = decided
                .chosen
                .iter()
                .map(|l| app.short_label(l, room))
                .collect();
            format!(" ✓ applied {} ", names.join(" + "))
        };
        return Some(Line::styled(text, t.ok()));
    }
    app.hiding()
        .then(|| Line::styled(" blind: names hidden (/blind reveals them) ", t.warn()))
}

fn row(
    app: &App,
    review: &ReviewState,
    model: &ReviewModel,
    name: &str,
    layout: &Columns,
    selected: bool,
) -> Line<'static> {
    let t = app.theme;
    let panel = app.panel_of(&model.label).and_then(|i| app.panels.get(i));
    let (icon, word, status_style) = match panel {
        Some(p) => status_mark(p.status, t),
        None => ("?", "unknown", t.dim()),
    };
    let set = review.set_of(&model.label);
    let (files, lines) = match (&model.set, set) {
        (SetState::Ready, Some(set)) => (
            set.files_changed().to_string(),
            format!("+{} -{}", set.added(), set.removed()),
        ),
        (SetState::Failed(_), _) => ("✗".to_string(), String::new()),
        _ => ("…".to_string(), String::new()),
    };
    let (tok, money, time, calls, failed) = match panel {
        Some(p) => (
            usage_tokens(&p.usage),
            cost(p.cost),
            clock(p.elapsed(app.now_ms)),
            p.tool_calls.to_string(),
            p.tool_errors.to_string(),
        ),
        None => Default::default(),
    };
    let (check, check_style) = check_cell(app, model);
    let rating = review
        .ratings
        .get(&model.label)
        .map(|r| r.word().to_string())
        .unwrap_or_default();
    let name = fit(name, layout.name);
    let pad = layout.name.saturating_sub(name.width());
    let mut spans = vec![
        Span::styled(if selected { "▸ " } else { "  " }, t.accent()),
        Span::styled(
            format!("{name}{} ", " ".repeat(pad)),
            if selected { t.accent() } else { t.bold() },
        ),
        Span::styled(layout.status_cell(icon, word), status_style),
    ];
    // A change set that touches test files: `⚠` before its file count (the note under the
    // table says why).
    if review.test_files(&model.label).is_empty() {
        spans.push(Span::raw(format!(" {files:>5} ")));
    } else {
        spans.push(Span::raw(format!(
            " {:>width$}",
            "",
            width = 3usize.saturating_sub(files.width())
        )));
        spans.push(Span::styled("⚠ ", t.warn()));
        spans.push(Span::raw(format!("{files} ")));
    }
    if layout.lines {
        spans.push(Span::styled(format!("{lines:>11}"), t.text()));
    }
    let mut numbers = String::new();
    if layout.tokens {
        numbers.push_str(&format!(" {tok:>7}"));
    }
    numbers.push_str(&format!(" {money:>8}"));
    if layout.time {
        numbers.push_str(&format!(" {time:>6}"));
    }
    if layout.tools {
        numbers.push_str(&format!(" {calls:>5}"));
    }
    if layout.failed {
        numbers.push_str(&format!(" {failed:>6}"));
    }
    numbers.push_str("  ");
    spans.push(Span::styled(numbers, t.dim()));
    spans.push(Span::styled(format!("{check:<12}"), check_style));
    spans.push(Span::styled(format!(" {rating}"), t.hint()));
    if selected {
        for s in &mut spans {
            s.style = s
                .style
                .patch(Style::new().add_modifier(ratatui::style::Modifier::BOLD));
        }
    }
    Line::from(spans)
}

/// Which columns fit the table's width, and how wide the model names are. Names get what
/// the columns leave (at least [`Columns::MIN_NAME`], cut with `…` beyond), and on narrow
/// terminals the least needed columns go first: tokens, failed calls, tool calls, time, the
/// +/- lines, then the status's word (its icon stays). The name, the files, the cost, the
/// check and the rating always stay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Columns {
    name: usize,
    tokens: bool,
    time: bool,
    tools: bool,
    failed: bool,
    lines: bool,
    status_word: bool,
}

impl Columns {
    /// The narrowest a name column gets before columns are dropped.
    const MIN_NAME: usize = 12;
    /// Marker, files, cost, check and rating: always shown.
    const FIXED: usize = 2 + 1 + 7 + 9 + 2 + 12 + 7;
    /// How many columns can give way, in [`Columns::drop`]'s order.
    const DROPS: usize = 6;

    fn fit(width: usize, longest: usize) -> Columns {
        let mut c = Columns {
            name: longest,
            tokens: true,
            time: true,
            tools: true,
            failed: true,
            lines: true,
            status_word: true,
        };
        for step in 0..Self::DROPS {
            if c.used() + Self::MIN_NAME.min(longest) <= width {
                break;
            }
            c.drop(step);
        }
        let room = width.saturating_sub(c.used());
        c.name = longest.min(room.max(Self::MIN_NAME.min(longest))).max(5);
        c
    }

    /// Drops the `step`th least needed column.
    fn drop(&mut self, step: usize) {
        match step {
            0 => self.tokens = false,
            1 => self.failed = false,
            2 => self.tools = false,
            3 => self.time = false,
            4 => self.lines = false,
            _ => self.status_word = false,
        }
    }

    /// Columns taken by everything but the name.
    fn used(&self) -> usize {
        Self::FIXED
            + self.status_width()
            + usize::from(self.lines) * 11
            + usize::from(self.tokens) * 8
            + usize::from(self.time) * 7
            + usize::from(self.tools) * 6
            + usize::from(self.failed) * 7
    }

    /// The status column: the icon and its word, or the icon alone on a narrow table.
    fn status_width(&self) -> usize {
        if self.status_word { 12 } else { 2 }
    }

    /// A row's status cell, as wide as the column.
    fn status_cell(&self, icon: &str, word: &str) -> String {
        let width = self.status_width();
        if self.status_word {
            format!("{:<width$}", format!("{icon} {word}"))
        } else {
            format!("{icon:<width$}")
        }
    }

    fn header(&self) -> String {
        let status = if self.status_word { "status" } else { "" };
        let mut text = format!(
            "  {:<width$} {status:<status_width$} {:>5}",
            "model",
            "files",
            width = self.name,
            status_width = self.status_width()
        );
        if self.lines {
            text.push_str(&format!(" {:>11}", "+/-"));
        }
        if self.tokens {
            text.push_str(&format!(" {:>7}", "tokens"));
        }
        text.push_str(&format!(" {:>8}", "cost"));
        if self.time {
            text.push_str(&format!(" {:>6}", "time"));
        }
        if self.tools {
            text.push_str(&format!(" {:>5}", "tools"));
        }
        if self.failed {
            text.push_str(&format!(" {:>6}", "failed"));
        }
        text.push_str(&format!("  {:<12} rating", "check"));
        text
    }
}

/// `text` cut to `width` columns, ending in `…` when cut.
fn fit(text: &str, width: usize) -> String {
    if text.width() <= width {
        return text.to_string();
    }
    let mut out = String::new();
    for c in text.chars() {
        if out.width() + unicode_width::UnicodeWidthChar::width(c).unwrap_or(0) + 1 > width {
            break;
        }
        out.push(c);
    }
    out.push('…');
    out
}

fn check_cell(app: &App, model: &ReviewModel) -> (String, Style) {
    let t = app.theme;
    match &model.check {
        None if app.settings.check.is_some() => ("waiting".to_string(), t.dim()),
        None => ("-".to_string(), t.dim()),
        Some(CheckState::Running) => ("… running".to_string(), t.running()),
        Some(CheckState::Missed) => ("- not run".to_string(), t.dim()),
        Some(CheckState::Done(r)) if r.passed => {
            (format!("✓ {}", duration_ms(r.elapsed_ms)), t.ok())
        }
        Some(CheckState::Done(r)) => (format!("✗ {}", duration_ms(r.elapsed_ms)), t.error()),
    }
}

/// The note under the table when a change set touches test files (`⚠` before its file
/// count): about the selected model when it is one of them, else naming them. Editing the
/// test is how a model makes a failing test pass without fixing anything, so its passing
/// check proves nothing until the test change is read.
fn tests_line(app: &App, review: &ReviewState, width: usize) -> Option<Line<'static>> {
    let t = app.theme;
    let selected = review.model()?;
    let own = review.test_files(&selected.label);
    let text = if let Some(first) = own.first() {
        let more = match own.len() {
            1 => String::new(),
            n => format!(" and {} more", n - 1),
        };
        format!(
            "⚠ {} changed the test file {}{more}: a test edited to pass proves nothing; read that change first",
            app.shown_label(&selected.label),
            versus_core::sanitize::name(first)
        )
    } else {
        let flagged: Vec<String> = review
            .order
            .iter()
            .filter_map(|&i| review.models.get(i))
            .filter(|m| !review.test_files(&m.label).is_empty())
            .map(|m| app.shown_label(&m.label))
            .collect();
        if flagged.is_empty() {
            return None;
        }
        format!(
            "⚠ {} changed test files: a test edited to pass proves nothing",
            flagged.join(", ")
        )
    };
    Some(Line::from(vec![
        Span::raw("  "),
        Span::styled(wrap::fit(&one_line(&text, 400), width), t.warn()),
    ]))
}

/// Whether the turn's context is worth a line under the table: instruction files or skills
/// were given, something was left out, or a model was given something different. A turn
/// without any of these keeps the table as it was.
pub fn shows_context(review: &ReviewState) -> bool {
    review.context.as_ref().is_some_and(|(context, ledger)| {
        !context.files.is_empty()
            || !context.skills.is_empty()
            || !context.skipped.is_empty()
            || !context.notes.is_empty()
            || ledger.iter().any(|e| !e.differs.is_empty())
    })
}

/// The turn's context in one line: the instruction files and their sizes, the skills, what
/// was left out, the fairness verdict (a model given something different in the warning
/// colour, named as the table names it).
fn context_line(app: &App, review: &ReviewState, width: usize) -> Option<Line<'static>> {
    if !shows_context(review) {
        return None;
    }
    let (context, ledger) = review.context.as_ref()?;
    let t = app.theme;
    let lines =
        versus_core::engine::context_summary(context, ledger, &|label| app.shown_label(label));
    let unfair = ledger.iter().any(|e| !e.differs.is_empty());
    let text = versus_core::sanitize::line(&lines.join(" · ")).to_string();
    let style = if unfair { t.warn() } else { t.dim() };
    Some(Line::from(vec![
        Span::raw("  "),
        Span::styled(wrap::fit(&one_line(&text, 600), width), style),
    ]))
}

/// The selected model's check: how it ended and the last line of its output.
fn check_line(app: &App, review: &ReviewState) -> Option<Line<'static>> {
    let t = app.theme;
    let model = review.model()?;
    let command = app.settings.check.as_deref().unwrap_or("check");
    let who = app.shown_label(&model.label);
    match &model.check {
        Some(CheckState::Done(r)) => {
            let command = r.command.as_str();
            let last = r
                .tail
                .iter()
                .rev()
                .find(|l| !l.trim().is_empty())
                .map(|l| one_line(l, 200))
                .unwrap_or_default();
            Some(Line::from(vec![
                Span::styled(
                    format!("  {who}: `{command}` {} · ", r.ending),
                    if r.passed { t.ok() } else { t.error() },
                ),
                Span::styled(last, t.dim()),
                Span::styled("  (t: full output in the transcript)", t.dim()),
            ]))
        }
        Some(CheckState::Running) => Some(Line::styled(
            format!("  {who}: `{command}` running…"),
            t.dim(),
        )),
        Some(CheckState::Missed) => Some(Line::styled(
            format!("  {who}: no check result (versus stopped before its check ended)"),
            t.dim(),
        )),
        None if app.settings.check.is_some() => Some(Line::styled(
            format!("  {who}: `{command}` runs when the model finishes"),
            t.dim(),
        )),
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_names_are_cut_and_narrow_tables_drop_the_least_needed_columns() {
        assert_eq!(
            fit("openrouter/meta-llama/llama-3.3-70b", 12),
            "openrouter/…"
        );
        assert_eq!(fit("demo/good", 12), "demo/good");
        // Wide: every column, the whole name.
        let wide = Columns::fit(200, 40);
        assert_eq!((wide.name, wide.tokens, wide.time), (40, true, true));
        // 80 columns (78 inside the border): rating and check stay, tokens go first.
        let eighty = Columns::fit(78, 40);
        assert!(!eighty.tokens && !eighty.failed, "{eighty:?}");
        assert!(eighty.name >= Columns::MIN_NAME, "{eighty:?}");
        assert!(eighty.header().width() <= 78, "{}", eighty.header());
        assert!(eighty.header().ends_with("rating"));
        // Every header is as wide as its rows' fixed part: the columns line up.
        for width in [58, 78, 118, 198] {
            let c = Columns::fit(width, 35);
            assert!(c.header().starts_with("  model"));
            assert!(c.header().width() <= width, "{width}: {c:?}");
        }
        // 60 columns (58 inside): the +/- lines and the status's word go, so the check and
        // the rating stay on screen, with the whole of a short name.
        let sixty = Columns::fit(58, 11);
        assert!(!sixty.lines && !sixty.status_word, "{sixty:?}");
        assert_eq!(sixty.name, 11);
        assert!(sixty.header().ends_with("rating"), "{}", sixty.header());
        assert!(sixty.used() + sixty.name <= 58, "{sixty:?}");
    }
}
