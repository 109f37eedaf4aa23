//! Line picking on the review. A hunk joins edits that sit a few lines apart (context merging),
//! so picking hunks cannot take one of them without the other; like lazygit's line staging,
//! `J`/`K` put a cursor on the changed lines of the hunk on screen and `L` picks or drops the
//! line under it. The basket composes line picks into exact edits of the base
//! ([`versus_core::apply::Pick::Line`]).

use super::super::review::LineCursor;
use super::super::review::doc::{DiffMode, Row};
use super::super::state::App;
use super::pick::{can_pick, report_pick};
use versus_core::review::{changed_lines, line_place};

/// `J` / `K`: the next / previous changed line of the hunk on screen. The first press puts the
/// cursor on the hunk's first (or last) changed line; the layout turns unified, since side by
/// side shows a removed line and its replacement on one row.
pub fn step(app: &mut App, forward: bool, height: usize) {
    let Some(review) = app.review.as_mut() else {
        return;
    };
    review.ensure_doc();
    if review.mode == DiffMode::SideBySide {
        let hunk = review.doc.as_ref().map(|d| d.hunk_at(review.scroll));
        review.mode = DiffMode::Unified;
        review.ensure_doc();
        review.scroll = match (hunk, &review.doc) {
            (Some(h), Some(doc)) => doc.hunk_rows.get(h).copied().unwrap_or(0),
            _ => 0,
        };
        if let Some(search) = review.search.take() {
            review.search_for(search.query, false);
        }
    }
    let Some(label) = review.model().map(|m| m.label.clone()) else {
        return;
    };
    let Some(file) = review.current_file() else {
        app.error("this model changed no file: no line to pick");
        return;
    };
    if let Some(why) = file.whole_file_only() {
        let path = file.path.clone();
        app.error(format!(
            "{path} can only be taken whole because {why}: press f to pick the file"
        ));
        return;
    }
    let Some(hunk) = review.current_hunk() else {
        app.error("no hunk on screen: n moves to the next one");
        return;
    };
    let changed = changed_lines(hunk);
    let at = review
        .cursor_line()
        .and_then(|line| changed.iter().position(|&l| l == line));
    let next = match at {
        None if forward => changed.first().copied(),
        None => changed.last().copied(),
        Some(i) if forward => changed.get(i + 1).copied(),
        Some(i) => i.checked_sub(1).and_then(|i| changed.get(i)).copied(),
    };
    let Some(line) = next else {
        app.info(if forward {
            "last changed line of this hunk (n: next hunk)"
        } else {
            "first changed line of this hunk (N: previous hunk)"
        });
        return;
    };
    let place = line_place(hunk, line).unwrap_or_default();
    let (path, id) = (file.path.clone(), hunk.id.clone());
    review.line = Some(LineCursor {
        label,
        path,
        hunk: id,
        line,
    });
    // Keep the cursor's row on screen without leaving its hunk (its header may scroll off).
    if let Some(doc) = &review.doc {
        let h = doc.hunk_at(review.scroll);
        let start = doc.hunk_rows.get(h).copied().unwrap_or(0);
        let row = doc.rows[start..]
            .iter()
            .position(|r| matches!(r, Row::Line { hunk, line: l, .. } if *hunk == h && *l == line))
            .map(|i| start + i);
        if let Some(row) = row {
            if row >= review.scroll + height {
                review.scroll = row + 1 - height;
            } else if row < review.scroll {
                review.scroll = row;
            }
        }
    }
    app.info(format!(
        "{place} · L picks or drops it · J/K next/previous line"
    ));
}

/// `L`: picks the changed line under the cursor, or drops it when picked.
pub fn pick(app: &mut App) {
    if !can_pick(app) {
        return;
    }
    let Some(review) = app.review.as_mut() else {
        return;
    };
    let (Some(line), Some(label), Some(file), Some(hunk)) = (
        review.cursor_line(),
        review.model().map(|m| m.label.clone()),
        review.current_file(),
        review.current_hunk(),
    ) else {
        app.error("no line under the cursor: J/K put it on a changed line of the hunk on screen");
        return;
    };
    let (path, id, number) = (file.path.clone(), hunk.id.clone(), hunk.number);
    let place = line_place(hunk, line).unwrap_or_default();
    if review.basket.covers_hunk(&label, &path, &id) {
        app.error(format!(
            "hunk {number} of {path} is picked whole (the hunk, its file or the model): drop it with Space, f or c to pick single lines"
        ));
        return;
    }
    review.basket.toggle_line(&label, &path, &id, line);
    let taken = review.basket.has_line(&label, &path, &id, line);
    review.recompute_basket();
    report_pick(app, &label, &format!("{place} ({path})"), taken);
}
