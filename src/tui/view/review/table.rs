//! The table of the turn's models: status, files, +/- lines, tokens, cost, time, tool calls,
//! failed edits, check result and rating, one row per model in the order shown (shuffled in
//! blind mode), the selected one marked; under it the selected model's check output.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};
use unicode_width::UnicodeWidthStr;

use super::super::super::action::CheckState;
use super::super::super::format::{clock, cost, duration_ms, one_line, tokens};
use super::super::super::review::{ReviewModel, ReviewState, SetState};
use super::super::super::state::App;
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
    let name_width = names
        .iter()
        .map(|n| n.width())
        .max()
        .unwrap_or(5)
        .clamp(5, 32);
    let mut lines = vec![Line::styled(
        format!(
            "  {:<name_width$} {:<12} {:>5} {:>11} {:>7} {:>8} {:>6} {:>5} {:>6}  {:<12} {}",
            "model",
            "status",
            "files",
            "+/-",
            "tokens",
            "cost",
            "time",
            "tools",
            "failed",
            "check",
            "rating"
        ),
        t.dim(),
    )];
    for (&i, name) in review.order.iter().zip(&names) {
        let Some(model) = review.models.get(i) else {
            continue;
        };
        lines.push(row(
            app,
            review,
            model,
            name,
            name_width,
            i == review.selected,
        ));
    }
    if let Some(line) = check_line(app, review) {
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
            let names: Vec<String> = decided.chosen.iter().map(|l| app.shown_label(l)).collect();
            format!(" ✓ applied {} ", names.join(" + "))
        };
        return Some(Line::styled(text, t.ok()));
    }
    app.hiding()
        .then(|| Line::styled(" blind: names hidden until you choose ", t.warn()))
}

fn row(
    app: &App,
    review: &ReviewState,
    model: &ReviewModel,
    name: &str,
    name_width: usize,
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
            tokens(p.usage.input + p.usage.output),
            cost(p.cost),
            clock(p.elapsed(app.now_ms)),
            p.tool_calls.to_string(),
            p.failed_edits.to_string(),
        ),
        None => Default::default(),
    };
    let (check, check_style) = check_cell(app, model);
    let rating = review
        .ratings
        .get(&model.label)
        .cloned()
        .unwrap_or_default();
    let pad = name_width.saturating_sub(name.width());
    let mut spans = vec![
        Span::styled(if selected { "▸ " } else { "  " }, t.accent()),
        Span::styled(
            format!("{name}{} ", " ".repeat(pad)),
            if selected { t.accent() } else { t.bold() },
        ),
        Span::styled(format!("{:<12}", format!("{icon} {word}")), status_style),
        Span::raw(format!(" {files:>5} ")),
        Span::styled(format!("{lines:>11}"), t.text()),
        Span::styled(
            format!(" {tok:>7} {money:>8} {time:>6} {calls:>5} {failed:>6}  "),
            t.dim(),
        ),
        Span::styled(format!("{check:<12}"), check_style),
        Span::styled(format!(" {rating}"), t.hint()),
    ];
    if selected {
        for s in &mut spans {
            s.style = s
                .style
                .patch(Style::new().add_modifier(ratatui::style::Modifier::BOLD));
        }
    }
    Line::from(spans)
}

fn check_cell(app: &App, model: &ReviewModel) -> (String, Style) {
    let t = app.theme;
    match &model.check {
        None if app.settings.check.is_some() => ("waiting".to_string(), t.dim()),
        None => ("-".to_string(), t.dim()),
        Some(CheckState::Running) => ("… running".to_string(), t.running()),
        Some(CheckState::Done(r)) if r.passed => {
            (format!("✓ {}", duration_ms(r.elapsed_ms)), t.ok())
        }
        Some(CheckState::Done(r)) => (format!("✗ {}", duration_ms(r.elapsed_ms)), t.error()),
    }
}

/// The selected model's check: how it ended and the last line of its output.
fn check_line(app: &App, review: &ReviewState) -> Option<Line<'static>> {
    let t = app.theme;
    let model = review.model()?;
    let command = app.settings.check.as_deref().unwrap_or("check");
    let who = app.shown_label(&model.label);
    match &model.check {
        Some(CheckState::Done(r)) => {
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
        None if app.settings.check.is_some() => Some(Line::styled(
            format!("  {who}: `{command}` runs when the model finishes"),
            t.dim(),
        )),
        None => None,
    }
}
