//! The header line: session, models, turn and cumulative cost, then the badges (demo, review
//! ready, blind, verbose). On a narrow terminal it degrades by priority: the badges stay (a
//! blind session always says so), the session id gets short, then the model count, the cost's
//! word, the session and the cost go, the review badge gets short, and the turn goes last;
//! nothing is cut mid-word.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::super::format::cost;
use super::super::keymap::{self, Context, KeyAction};
use super::super::state::App;
use super::super::strings;

/// The parts of the header's text that can give way, each `None` once dropped.
#[derive(Debug, Clone)]
struct Info {
    session: Option<String>,
    models: Option<String>,
    turn: Option<String>,
    cost: Option<String>,
    /// The review badge in its short form.
    short_review: bool,
}

/// Draws the header: the fullest form of it that fits the width.
pub fn render(frame: &mut Frame<'_>, area: Rect, app: &App) {
    let width = usize::from(area.width);
    let mut info = full_info(app);
    let mut line = header_line(app, &info);
    for step in DEGRADE {
        if line.width() <= width {
            break;
        }
        step(&mut info, app);
        line = header_line(app, &info);
    }
    frame.render_widget(Paragraph::new(whole_spans(line, width)), area);
}

/// Every part at its longest.
fn full_info(app: &App) -> Info {
    let n = app.roster.len();
    Info {
        session: Some(format!("session {}", app.session.id)),
        models: Some(format!("{n} model{}", if n == 1 { "" } else { "s" })),
        turn: Some(format!("turn {}", app.turn)),
        cost: Some(format!("{} total", cost(app.total_cost()))),
        short_review: false,
    }
}

/// How the header gives way, least important first; each step keeps the ones before it.
const DEGRADE: [fn(&mut Info, &App); 7] = [
    |i, app| i.session = Some(format!("session {}", short_id(&app.session.id))),
    |i, _| i.models = None,
    |i, app| i.cost = Some(cost(app.total_cost())),
    |i, _| i.session = None,
    |i, _| i.cost = None,
    |i, _| i.short_review = true,
    |i, _| i.turn = None,
];

/// The session id's last part (`ab12` of `20261121-090503-ab12`), enough to tell sessions
/// of one day apart on a narrow header.
fn short_id(id: &str) -> &str {
    id.rsplit('-').next().unwrap_or(id)
}

/// The header's spans for `info`, the badges after the text.
fn header_line<'a>(app: &App, info: &Info) -> Line<'a> {
    let t = app.theme;
    let mut spans = vec![Span::styled("versus", t.accent())];
    if app.session.demo {
        spans.push(Span::raw(" "));
        spans.push(Span::styled(strings::HEADER_DEMO, t.badge()));
    }
    let parts = [&info.session, &info.models, &info.turn, &info.cost];
    for part in parts.into_iter().flatten() {
        spans.push(Span::styled(" │ ", t.dim()));
        spans.push(Span::raw(part.clone()));
    }
    if app.review_ready() {
        let key = keymap::key_name(Context::Prompt, KeyAction::ToggleReview);
        let label = if info.short_review {
            strings::HEADER_REVIEW_SHORT
        } else {
            strings::HEADER_REVIEW_READY
        };
        spans.push(Span::raw("  "));
        spans.push(Span::styled(format!(" {label} · {key} "), t.badge()));
    }
    if app.blind || app.hiding() {
        spans.push(Span::styled(
            format!("  {}", strings::HEADER_BLIND),
            t.warn(),
        ));
    }
    if app.verbose {
        spans.push(Span::styled(
            format!("  {}", strings::HEADER_VERBOSE),
            t.dim(),
        ));
    }
    Line::from(spans)
}

/// `line` without the spans from the first one that does not fit in `width` on, so a part is
/// shown whole or not at all.
fn whole_spans(line: Line<'_>, width: usize) -> Line<'_> {
    let mut used = 0;
    let spans: Vec<Span<'_>> = line
        .spans
        .into_iter()
        .take_while(|s| {
            used += s.width();
            used <= width
        })
        .collect();
    Line::from(spans)
}
