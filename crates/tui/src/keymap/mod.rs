//! The key bindings, in one table that drives the event handling, the status-line hints, the
//! keys a question shows in its bottom line and `/help`, so what the screen says a key does is
//! what the key does (gitui's `key_list` is the model).
//!
//! Each [`Context`] (the prompt, the completion list, the review...) has a static list of
//! [`Binding`]s: key chords, the [`KeyAction`] they trigger, a short hint label and the long
//! help text. Handlers call [`action`] and match on the action, never on a raw key code; a
//! printable character no binding takes is text (the prompt, a search, a comment). Adding a key
//! is one entry in `table` and one arm in the handler of its context.

mod table;
#[cfg(test)]
mod tests;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use unicode_width::UnicodeWidthStr;

pub use table::{KeyAction, UNBOUND};

/// Where the keyboard is: which list of bindings reads a key. Handlers pick the context from
/// the state; the status line and `/help` read the same lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Context {
    /// The prompt editor and the panels: the keys of the main screen (and, when no other
    /// context takes them, of the review: Ctrl+C, Ctrl+O...).
    Prompt,
    /// The completion list under the prompt is open (it takes Tab, the arrows and Esc first).
    Completion,
    /// The prompt history search (Ctrl+R).
    HistorySearch,
    /// The review screen.
    Review,
    /// The review's search is being typed (`/`).
    ReviewSearch,
    /// A review comment is being typed (`m`).
    ReviewComment,
    /// The apply question about files that conflict with the user's edits.
    ApplyDialog,
    /// The rewind question.
    RewindDialog,
    /// `/help` or another text overlay is open.
    Overlay,
}

impl Context {
    /// Every context, in the order `/help` lists them.
    pub const ALL: [Context; 9] = [
        Context::Prompt,
        Context::Completion,
        Context::HistorySearch,
        Context::Review,
        Context::ReviewSearch,
        Context::ReviewComment,
        Context::ApplyDialog,
        Context::RewindDialog,
        Context::Overlay,
    ];

    /// The context's bindings, in the order its hints and its `/help` section show them.
    pub fn bindings(self) -> &'static [Binding] {
        table::bindings(self)
    }

    /// The heading of the context's section in `/help`.
    pub fn title(self) -> &'static str {
        table::title(self)
    }

    /// What typing does in this context, when unbound characters are text there: the status
    /// line starts with `type <this>` (the history search).
    pub fn typing(self) -> Option<&'static str> {
        table::typing(self)
    }
}

/// A situation that decides whether (and how) a hint shows, for the hints that depend on the
/// state: the prompt's hints differ while models run, the rewind question's with edited files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum When {
    /// Idle, with nothing to review.
    Idle,
    /// Idle, with changes of the last turn to review.
    ToReview,
    /// Models are running.
    Running,
    /// The rewind question, with files the user edited after the apply.
    EditedFiles,
    /// The rewind question, with no such file.
    NoEditedFiles,
}

/// Whether a binding shows in the hints of its context, and with which label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hint {
    /// Only in `/help`.
    Hidden,
    /// Always, with this label.
    Always(&'static str),
    /// In the listed situations, each with its label.
    When(&'static [(When, &'static str)]),
}

impl Hint {
    /// The label in situation `when` (`None` for a context without situations), if it shows.
    pub fn label(self, when: Option<When>) -> Option<&'static str> {
        match self {
            Hint::Hidden => None,
            Hint::Always(label) => Some(label),
            Hint::When(list) => list
                .iter()
                .find(|(w, _)| Some(*w) == when)
                .map(|(_, label)| *label),
        }
    }
}

/// A key and its modifiers (Ctrl, Alt, Shift), as the table writes them and as a press is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Chord {
    /// The key.
    pub code: KeyCode,
    /// Ctrl, Alt and Shift only; Shift is never part of a character's chord (`G` is `G`).
    pub mods: KeyModifiers,
}

impl Chord {
    /// A key with no modifier.
    pub const fn key(code: KeyCode) -> Chord {
        Chord {
            code,
            mods: KeyModifiers::NONE,
        }
    }

    /// A character with no modifier.
    pub const fn ch(c: char) -> Chord {
        Chord::key(KeyCode::Char(c))
    }

    /// Ctrl and a character.
    pub const fn ctrl(c: char) -> Chord {
        Chord {
            code: KeyCode::Char(c),
            mods: KeyModifiers::CONTROL,
        }
    }

    /// A key with modifiers.
    pub const fn with(code: KeyCode, mods: KeyModifiers) -> Chord {
        Chord { code, mods }
    }

    /// How a press reads: only Ctrl, Alt and Shift count, and Shift is dropped where the key
    /// already says it (an upper-case letter, `?`, Shift+Tab), as terminals differ there.
    pub fn of(key: KeyEvent) -> Chord {
        let mut mods =
            key.modifiers & (KeyModifiers::CONTROL | KeyModifiers::ALT | KeyModifiers::SHIFT);
        if matches!(key.code, KeyCode::Char(_) | KeyCode::BackTab) {
            mods.remove(KeyModifiers::SHIFT);
        }
        Chord {
            code: key.code,
            mods,
        }
    }

    /// The press that reads as this chord (the tests press every binding this way).
    pub fn event(self) -> KeyEvent {
        KeyEvent::new(self.code, self.mods)
    }

    /// The key's name as every hint and `/help` write it: `Ctrl+O`, `Shift+Tab`, `PgUp`, `G`;
    /// the arrows as `↑` `↓` `←` `→`, which keep a narrow hint line short.
    pub fn name(self) -> String {
        let key = match self.code {
            KeyCode::Char(' ') => "Space".to_string(),
            KeyCode::Char(c) if self.mods.contains(KeyModifiers::CONTROL) => {
                c.to_ascii_uppercase().to_string()
            }
            KeyCode::Char(c) => c.to_string(),
            KeyCode::Enter => "Enter".to_string(),
            KeyCode::Esc => "Esc".to_string(),
            KeyCode::Tab => "Tab".to_string(),
            KeyCode::BackTab => "Shift+Tab".to_string(),
            KeyCode::Backspace => "Backspace".to_string(),
            KeyCode::Delete => "Delete".to_string(),
            KeyCode::Up => "↑".to_string(),
            KeyCode::Down => "↓".to_string(),
            KeyCode::Left => "←".to_string(),
            KeyCode::Right => "→".to_string(),
            KeyCode::PageUp => "PgUp".to_string(),
            KeyCode::PageDown => "PgDn".to_string(),
            KeyCode::Home => "Home".to_string(),
            KeyCode::End => "End".to_string(),
            KeyCode::F(n) => format!("F{n}"),
            other => format!("{other:?}"),
        };
        let mut name = String::new();
        if self.mods.contains(KeyModifiers::CONTROL) {
            name.push_str("Ctrl+");
        }
        if self.mods.contains(KeyModifiers::ALT) {
            name.push_str("Alt+");
        }
        if self.mods.contains(KeyModifiers::SHIFT) {
            name.push_str("Shift+");
        }
        name.push_str(&key);
        name
    }
}

/// One entry of the table: the chords that trigger an action in a context, the hint and the
/// help text. The first chord is the one hints name; `/help` names them all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Binding {
    /// What the keys do.
    pub action: KeyAction,
    /// The chords, the hinted one first.
    pub keys: &'static [Chord],
    /// Whether the status line (or the question's bottom line) shows it.
    pub hint: Hint,
    /// The line in `/help`.
    pub help: &'static str,
}

impl Binding {
    /// The chords' names joined for `/help`: `Ctrl+J, Shift+Enter, Alt+Enter`.
    pub fn key_names(&self) -> String {
        self.keys
            .iter()
            .map(|k| k.name())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The action `key` triggers in `context`, if any. A non-character key pressed with modifiers
/// no chord of the context takes reads as the bare key (Shift+PgUp scrolls like PgUp), as it
/// always did.
pub fn action(context: Context, key: KeyEvent) -> Option<KeyAction> {
    let pressed = Chord::of(key);
    find(context, pressed).or_else(|| {
        let bare = Chord::key(pressed.code);
        let loose = !matches!(pressed.code, KeyCode::Char(_)) && pressed != bare;
        if loose { find(context, bare) } else { None }
    })
}

fn find(context: Context, pressed: Chord) -> Option<KeyAction> {
    context
        .bindings()
        .iter()
        .find(|b| b.keys.contains(&pressed))
        .map(|b| b.action)
}

/// The hints of `context` in situation `when`, as (keys, label) pairs: neighbours with the
/// same label share one pair (`PgUp/PgDn scroll`, `+/-/= rate`), named by their first chords.
pub fn hints(context: Context, when: Option<When>) -> Vec<(String, &'static str)> {
    marked_hints(context, when)
        .into_iter()
        .map(|(keys, label, _)| (keys, label))
        .collect()
}

/// [`hints`], each marked with whether it is the way out ([`KeyAction::is_way_out`]).
fn marked_hints(context: Context, when: Option<When>) -> Vec<(String, &'static str, bool)> {
    let mut out: Vec<(String, &'static str, bool)> = Vec::new();
    if let Some(what) = context.typing() {
        out.push(("type".to_string(), what, false));
    }
    let mut last: Option<&'static str> = None;
    for binding in context.bindings() {
        let Some(label) = binding.hint.label(when) else {
            continue;
        };
        let Some(first) = binding.keys.first() else {
            continue;
        };
        let way_out = binding.action.is_way_out();
        match out.last_mut() {
            Some((keys, _, out)) if last == Some(label) => {
                keys.push('/');
                keys.push_str(&first.name());
                *out |= way_out;
            }
            _ => out.push((first.name(), label, way_out)),
        }
        last = Some(label);
    }
    out
}

/// The hints as one line of text: `Enter keep · Esc cancel` (a question's bottom line, the
/// review's search and comment lines).
pub fn hint_line(context: Context, when: Option<When>) -> String {
    hints(context, when)
        .iter()
        .map(|(keys, label)| format!("{keys} {label}"))
        .collect::<Vec<_>>()
        .join(HINT_SEP)
}

/// Between two hints on a key line.
pub const HINT_SEP: &str = " · ";

/// The hints of a key line that fit in `width` columns, and whether some were left out. Every
/// key line (the status line, a question's bottom border) fits its hints here, by one rule:
/// hints are kept whole, from the first (the most important) on, until the next would not fit
/// with room left for the mark [`HINT_SEP`] + `…` that ends a line hints were dropped from.
pub fn fit_hints(
    hints: Vec<(String, &'static str)>,
    width: usize,
) -> (Vec<(String, &'static str)>, bool) {
    let total = hints_width(&hints);
    if total <= width {
        return (hints, false);
    }
    let room = width.saturating_sub(HINT_SEP.width() + crate::wrap::ELLIPSIS.width());
    let mut kept = Vec::new();
    for hint in hints {
        kept.push(hint);
        if hints_width(&kept) > room {
            kept.pop();
            break;
        }
    }
    (kept, true)
}

/// Columns the hints take joined by [`HINT_SEP`].
fn hints_width(hints: &[(String, &str)]) -> usize {
    let text: usize = hints.iter().map(|(k, l)| k.width() + 1 + l.width()).sum();
    text + HINT_SEP.width() * hints.len().saturating_sub(1)
}

/// [`hint_line`] fitted to `width` columns by [`fit_hints`], ending with ` · …` when hints
/// were left out (a question's bottom border). When the way out (`n cancel`, `Esc cancel`)
/// would be among those left out, it is kept after the `…`: the first hints whole, `…`, the way
/// out.
pub fn hint_line_within(context: Context, when: Option<When>, width: usize) -> String {
    let marked = marked_hints(context, when);
    let join = |hints: &[(String, &'static str)]| {
        hints
            .iter()
            .map(|(keys, label)| format!("{keys} {label}"))
            .collect::<Vec<_>>()
            .join(HINT_SEP)
    };
    let all: Vec<(String, &'static str)> = marked.iter().map(|(k, l, _)| (k.clone(), *l)).collect();
    let (kept, dropped) = fit_hints(all, width);
    let way_out_kept = !marked.iter().any(|(_, _, out)| *out)
        || marked[..kept.len()].iter().any(|(_, _, out)| *out);
    if !dropped || way_out_kept {
        let mut line = join(&kept);
        if dropped {
            if !line.is_empty() {
                line.push_str(HINT_SEP);
            }
            line.push_str(crate::wrap::ELLIPSIS);
        }
        return line;
    }
    let way_out = marked
        .iter()
        .find(|(_, _, out)| *out)
        .map(|(k, l, _)| (k.clone(), *l));
    let others: Vec<(String, &'static str)> = marked
        .into_iter()
        .filter(|(_, _, out)| !out)
        .map(|(k, l, _)| (k, l))
        .collect();
    let tail = way_out.as_ref().map_or(0, |out| {
        HINT_SEP.width() + hints_width(std::slice::from_ref(out))
    });
    let (kept, _) = fit_hints(others, width.saturating_sub(tail));
    let mut line = join(&kept);
    if !line.is_empty() {
        line.push_str(HINT_SEP);
    }
    line.push_str(crate::wrap::ELLIPSIS);
    if let Some(out) = way_out {
        line.push_str(HINT_SEP);
        line.push_str(&join(&[out]));
    }
    line
}

/// The rows of `context`'s section in `/help`, as (keys, text): neighbours with the same help
/// text share a row (`PgUp / PgDn`).
pub fn help_rows(context: Context) -> Vec<(String, &'static str)> {
    let mut rows: Vec<(String, &'static str)> = Vec::new();
    for binding in context.bindings() {
        match rows.last_mut() {
            Some((keys, help)) if *help == binding.help => {
                keys.push_str(" / ");
                keys.push_str(&binding.key_names());
            }
            _ => rows.push((binding.key_names(), binding.help)),
        }
    }
    rows
}

/// The name of the first chord of `action` in `context` (`Ctrl+O`), for a line that names a
/// key outside the hints (the prompt box's title, the diff's bottom line), so it follows the
/// table; empty when the context has no such binding (the keymap tests check the ones used).
pub fn key_name(context: Context, action: KeyAction) -> String {
    context
        .bindings()
        .iter()
        .find(|b| b.action == action)
        .and_then(|b| b.keys.first())
        .map(|k| k.name())
        .unwrap_or_default()
}

/// The hint of `action` in `context` and situation `when`, as `Enter send`, if it shows there.
pub fn hint_of(context: Context, action: KeyAction, when: Option<When>) -> Option<String> {
    let binding = context.bindings().iter().find(|b| b.action == action)?;
    let label = binding.hint.label(when)?;
    Some(format!("{} {label}", binding.keys.first()?.name()))
}
