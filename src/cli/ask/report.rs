//! What `versus ask` prints when the models are done: the comparison table, each model's
//! diff, and the same facts as one JSON document for scripts.

use serde::Serialize;

use versus::apply::links::check_link_target;
use versus::model::{RunStop, Usage};
use versus::sanitize::{line, name};
use versus::workspace::changeset::{BlobInfo, ChangeSet, FileChange};

/// One model's row.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// Entry label.
    pub model: String,
    /// How its run ended.
    pub status: RunStop,
    /// Error or stop note.
    pub error: Option<String>,
    /// Files in the change set.
    pub files: usize,
    /// Lines added.
    pub added: usize,
    /// Lines removed.
    pub removed: usize,
    /// Tokens.
    pub usage: Usage,
    /// USD (`None`: unknown price).
    pub cost: Option<f64>,
    /// Wall time in milliseconds.
    pub elapsed_ms: u64,
    /// Requests made.
    pub steps: u32,
    /// Tool calls.
    pub tool_calls: u32,
    /// Tool calls that did not succeed, by outcome (a command's non-zero exit counts, as in
    /// the review's `failed` column), so a build that kept failing shows in the table.
    pub failed_calls: u32,
    /// Edits that did not apply.
    pub failed_edits: u32,
    /// The model's last text.
    pub final_text: String,
    /// Unified diff of its change set.
    pub diff: String,
    /// Paths changed, with the tools that changed them.
    pub changes: Vec<ChangedFile>,
}

/// One changed file in the JSON document.
#[derive(Debug, Clone, Serialize)]
pub struct ChangedFile {
    /// Path.
    pub path: String,
    /// created / modified / deleted.
    pub kind: String,
    /// Lines added.
    pub added: usize,
    /// Lines removed.
    pub removed: usize,
    /// Tools that wrote it.
    pub tools: Vec<String>,
    /// For a symlink proposal, what review shows (`symlink -> TARGET`); absent for files.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub symlink: Option<String>,
    /// The mode review shows for the proposal (`100644` / `100755`), what apply writes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// For a binary change: the size and blake3 of what was there and of what the model
    /// leaves (`null` on a side with no file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub binary: Option<[Option<BlobInfo>; 2]>,
    /// The added lines hold bytes a terminal would act on; the diff shows them escaped.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub odd_bytes: bool,
    /// Lines printed above the diff (already escaped): links and whether apply would refuse
    /// them, binary changes, odd bytes.
    #[serde(skip)]
    pub notes: Vec<String>,
}

impl ChangedFile {
    /// The files of a change set.
    pub fn all(set: &ChangeSet) -> Vec<Self> {
        set.files
            .iter()
            .map(|f| ChangedFile {
                path: f.path.clone(),
                kind: format!("{:?}", f.kind).to_lowercase(),
                added: f.added,
                removed: f.removed,
                tools: f.tools.clone(),
                symlink: f.symlink_label(),
                mode: f
                    .shown_mode()
                    .map(|m| if m & 0o111 != 0 { "100755" } else { "100644" }.to_string()),
                binary: f.binary_sides().map(|(a, b)| [a, b]),
                odd_bytes: f.odd_bytes(),
                notes: notes_of(f),
            })
            .collect()
    }
}

/// What a diff alone would not make plain about `f`, one escaped line each.
fn notes_of(f: &FileChange) -> Vec<String> {
    let mut notes = Vec::new();
    let path = name(&f.path);
    if f.symlink
        && let Some(target) = f.proposed.as_deref()
    {
        let shown = versus::sanitize::lossless(target);
        notes.push(format!("{path} -> {} (symlink)", line(&shown)));
        if let Err(why) = check_link_target(&f.path, target) {
            notes.push(format!("  apply will not make this link: {}", line(&why)));
        }
    } else if let Some(label) = f.symlink_label() {
        notes.push(format!("{path} ({})", line(&label)));
    }
    if let Some((before, after)) = f.binary_sides() {
        let side = |s: Option<BlobInfo>| s.map_or("no file".to_string(), |s| s.to_string());
        notes.push(format!(
            "{path}: binary file, no line diff: {} -> {}",
            side(before),
            side(after)
        ));
    }
    if f.odd_bytes() {
        notes.push(format!(
            "{path}: its new lines hold bytes a terminal would act on (controls, NUL, bidi or \
             invisible characters, or bytes that are not UTF-8), shown escaped below as \\0, \\x1b, \\u{{202e}}..."
        ));
    }
    notes
}

/// The lines printed above a file's diff (see [`ChangedFile::notes`]).
pub fn notes(change: &ChangedFile) -> &[String] {
    &change.notes
}

/// The comparison table as aligned text.
pub fn table(rows: &[Row]) -> String {
    let header = [
        "model",
        "status",
        "files",
        "+/-",
        "tokens in",
        "out",
        "cost",
        "time",
        "tools",
        "failed",
        "failed edits",
    ];
    let mut cells: Vec<Vec<String>> = vec![header.iter().map(|h| h.to_string()).collect()];
    for row in rows {
        cells.push(vec![
            line(&row.model).to_string(),
            row.status.label().to_string(),
            row.files.to_string(),
            format!("+{} -{}", row.added, row.removed),
            known_tokens(&row.usage, row.usage.total_input()),
            known_tokens(&row.usage, row.usage.output),
            row.cost
                .map_or_else(|| "unknown".to_string(), |c| format!("${c:.4}")),
            format!("{:.1} s", row.elapsed_ms as f64 / 1000.0),
            row.tool_calls.to_string(),
            row.failed_calls.to_string(),
            row.failed_edits.to_string(),
        ]);
    }
    let columns = header.len();
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            cells
                .iter()
                .map(|r| r[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for (i, row) in cells.iter().enumerate() {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            let pad = widths[c] - cell.chars().count();
            // Text columns left-aligned, numbers right-aligned.
            if c <= 1 {
                line.push_str(cell);
                line.push_str(&" ".repeat(pad));
            } else {
                line.push_str(&" ".repeat(pad));
                line.push_str(cell);
            }
            if c + 1 < columns {
                line.push_str("  ");
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
        if i == 0 {
            let total: usize = widths.iter().sum::<usize>() + 2 * (columns - 1);
            out.push_str(&"-".repeat(total));
            out.push('\n');
        }
    }
    out
}

/// A token count, or `?` when some request's usage was not reported (the count would only be
/// a lower bound; see [`Usage::is_known`]).
fn known_tokens(usage: &Usage, n: u64) -> String {
    if usage.is_known() {
        tokens(n)
    } else {
        "?".to_string()
    }
}

fn tokens(n: u64) -> String {
    if n >= 10_000 {
        format!("{:.1}k", n as f64 / 1000.0)
    } else {
        n.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_aligns_and_shows_unknown_cost() {
        let row = Row {
            model: "demo/good".into(),
            status: RunStop::Completed,
            error: None,
            files: 1,
            added: 1,
            removed: 1,
            usage: Usage {
                input: 12_345,
                output: 50,
                ..Usage::default()
            },
            cost: None,
            elapsed_ms: 1500,
            steps: 3,
            tool_calls: 2,
            failed_calls: 1,
            failed_edits: 0,
            final_text: String::new(),
            diff: String::new(),
            changes: Vec::new(),
        };
        let text = table(&[row]);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("model"));
        assert!(lines[2].contains("unknown"));
        assert!(lines[2].contains("12.3k"));
        assert!(lines[2].contains("+1 -1"));
        assert!(lines[2].contains("1.5 s"));
        assert!(lines[0].ends_with("tools  failed  failed edits"), "{text}");
        assert!(lines[2].ends_with("2       1             0"), "{text}");
    }
}
