//! The table itself: every user action, and per context its chords, hint and help text. The
//! UI text about keys lives here and nowhere else.

use crossterm::event::{KeyCode, KeyModifiers};

use super::{Binding, Chord, Context, Hint, When};

/// Declares [`KeyAction`] and its list of variants, so tests can check every one is bound.
macro_rules! actions {
    ($($(#[$doc:meta])* $name:ident,)*) => {
        /// What a key does. Handlers match on these, never on raw key codes.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum KeyAction {
            $($(#[$doc])* $name,)*
        }

        impl KeyAction {
            /// Every action (the tests check each has a binding or is in [`UNBOUND`]).
            pub const ALL: &'static [KeyAction] = &[$(KeyAction::$name,)*];
        }
    };
}

impl KeyAction {
    /// The way out of a question or of a line being typed: its hint stays on a key line that
    /// is too narrow for every hint (after the `…` that says some were left out), so a narrow
    /// terminal still says how to leave.
    pub fn is_way_out(self) -> bool {
        matches!(
            self,
            KeyAction::ApplyCancel
                | KeyAction::RewindCancel
                | KeyAction::SearchCancel
                | KeyAction::ReviewSearchCancel
                | KeyAction::CommentCancel
        )
    }
}

actions! {
    // The prompt and the panels.
    /// Ctrl+O: the review of the last turn, or back to the panels.
    ToggleReview,
    /// Esc: cancel every model (asks first), else unzoom the panel.
    CancelAll,
    /// Ctrl+X: cancel the focused model (on the review: the selected one).
    CancelFocused,
    /// Enter: send the prompt (an empty prompt zooms the focused panel).
    Send,
    /// A new line in the prompt.
    Newline,
    /// Focus the next panel.
    NextPanel,
    /// Focus the previous panel.
    PrevPanel,
    /// Scroll the focused panel up a page.
    ScrollUp,
    /// Scroll the focused panel down a page.
    ScrollDown,
    /// The start of the focused panel's output.
    ScrollTop,
    /// The end of the focused panel's output.
    ScrollBottom,
    /// `/`: start a slash command (types it, which opens the list).
    Commands,
    /// Ctrl+C: cancel the models, else clear the prompt, else quit.
    Interrupt,
    /// Ctrl+D: quit on an empty prompt.
    Quit,
    /// Ctrl+R: search the prompt history.
    HistorySearch,
    /// Ctrl+T: the focused panel's tool calls with their whole results, the latest first on
    /// screen.
    ToolOutput,
    /// Up in the prompt, or the previous prompt of the history on its first line.
    CursorUp,
    /// Down in the prompt, or the next prompt of the history on its last line.
    CursorDown,
    /// The cursor one character left.
    CursorLeft,
    /// The cursor one character right.
    CursorRight,
    /// The start of the line.
    LineStart,
    /// The end of the line.
    LineEnd,
    /// Delete the character before the cursor.
    DeleteBack,
    /// Delete the character under the cursor.
    DeleteForward,
    /// Delete the word before the cursor.
    DeleteWord,
    /// Delete the whole prompt.
    ClearPrompt,

    // The completion list.
    /// Take the selected item.
    Complete,
    /// The item above.
    CompletionUp,
    /// The item below.
    CompletionDown,
    /// Close the list.
    CloseList,

    // The history search.
    /// An older match.
    SearchOlder,
    /// Take the match into the prompt.
    SearchTake,
    /// Leave the search, the prompt as it was.
    SearchCancel,
    /// Delete the search's last character.
    SearchErase,

    // The review.
    /// Pick the hunk on screen (again: drop it).
    PickHunk,
    /// Pick the file on screen, whole.
    PickFile,
    /// Pick the model's whole change set.
    PickModel,
    /// Apply the basket.
    Apply,
    /// None of them: keep no change.
    NoneOfThem,
    /// Rate the model good.
    RateGood,
    /// Rate the model bad.
    RateBad,
    /// Rate the model a tie with the kept one.
    RateTie,
    /// The next model.
    NextModel,
    /// The previous model.
    PrevModel,
    /// The next hunk (search match while searching).
    NextHunk,
    /// The previous hunk (search match while searching).
    PrevHunk,
    /// Unified or side by side.
    ToggleLayout,
    /// Compare with the next model that changed the file, after the last one the base.
    CompareNext,
    /// Every model's version of the hunk on screen (again: back to the diff).
    Versions,
    /// Scroll long lines to the left.
    ScrollLeft,
    /// Scroll long lines to the right.
    ScrollRight,
    /// Wrap long lines, or cut them again.
    ToggleWrap,
    /// The model's transcript.
    Transcript,
    /// A shell in the model's workspace.
    Shell,
    /// Rewind the turn (asks first).
    Rewind,
    /// Clear the search, else back to the prompt.
    ReviewBack,
    /// Back to the prompt.
    ReviewClose,
    /// Scroll the diff a row down.
    DiffDown,
    /// Scroll the diff a row up.
    DiffUp,
    /// Scroll the diff a page down.
    DiffPageDown,
    /// Scroll the diff a page up.
    DiffPageUp,
    /// The top of the diff.
    DiffTop,
    /// The bottom of the diff.
    DiffBottom,
    /// The next file of the model.
    NextFile,
    /// The previous file of the model.
    PrevFile,
    /// Search the file's diff.
    DiffSearch,
    /// The line cursor on the next changed line.
    NextLine,
    /// The line cursor on the previous changed line.
    PrevLine,
    /// Pick the cursor's line (again: drop it).
    PickLine,
    /// Comment on the cursor's line or the hunk on screen.
    Comment,
    /// Send the model's comments to it.
    SendComments,
    /// Send every comment to every model.
    SendAllComments,
    /// Drop the model's last comment.
    DropComment,
    /// The help.
    Help,

    // The review's search, being typed.
    /// Keep the search (move between its matches with n/N).
    ReviewSearchKeep,
    /// Drop the search.
    ReviewSearchCancel,
    /// Delete the search's last character.
    ReviewSearchErase,

    // A review comment, being typed.
    /// Keep the comment (empty: remove the one at this place).
    CommentKeep,
    /// Drop the draft.
    CommentCancel,
    /// Delete the comment's last character.
    CommentErase,

    // The apply question.
    /// The conflicting file above.
    ConflictUp,
    /// The conflicting file below.
    ConflictDown,
    /// The conflict detail a page up.
    DetailPageUp,
    /// The conflict detail a page down.
    DetailPageDown,
    /// The top of the conflict detail.
    DetailTop,
    /// Write the model's file.
    Overwrite,
    /// Keep the user's file.
    Skip,
    /// Write the merge with conflict markers.
    Markers,
    /// Apply with these answers.
    ApplyConfirm,
    /// Apply nothing.
    ApplyCancel,

    // The rewind question.
    /// Rewind (files edited after the apply are kept).
    RewindConfirm,
    /// Rewind the edited files too.
    RewindForce,
    /// Rewind nothing.
    RewindCancel,

    // An overlay.
    /// Scroll a row up.
    OverlayUp,
    /// Scroll a row down.
    OverlayDown,
    /// Scroll a page up.
    OverlayPageUp,
    /// Scroll a page down.
    OverlayPageDown,
}

/// Actions with no key: none today. An action reached only by a command or the mouse goes
/// here, so the coverage test knows it is meant.
pub const UNBOUND: &[KeyAction] = &[];

use KeyAction as A;

const fn b(action: KeyAction, keys: &'static [Chord], hint: Hint, help: &'static str) -> Binding {
    Binding {
        action,
        keys,
        hint,
        help,
    }
}

const fn k(code: KeyCode) -> Chord {
    Chord::key(code)
}

const fn c(ch: char) -> Chord {
    Chord::ch(ch)
}

const fn ctrl(ch: char) -> Chord {
    Chord::ctrl(ch)
}

const fn ctrl_key(code: KeyCode) -> Chord {
    Chord::with(code, KeyModifiers::CONTROL)
}

const HIDDEN: Hint = Hint::Hidden;

const fn show(label: &'static str) -> Hint {
    Hint::Always(label)
}

const PANEL_SCROLL: &str = "scroll the focused panel a page";
const PANEL_FOCUS: &str = "focus the next / previous panel";
const PANEL_ENDS: &str = "the start / end of the focused panel's output";
const PROMPT_MOVE: &str = "move in the prompt; on its first/last line: prompt history";
const PROMPT_CURSOR: &str = "move the cursor";
const PROMPT_LINE: &str = "start / end of the line";
const PROMPT_DELETE: &str = "delete the character before / under the cursor";

const PROMPT: &[Binding] = &[
    b(
        A::ToggleReview,
        &[ctrl('o')],
        Hint::When(&[(When::ToReview, "review the changes")]),
        "the review of the last turn / back to the panels",
    ),
    b(
        A::CancelAll,
        &[k(KeyCode::Esc)],
        Hint::When(&[(When::Running, "cancel all")]),
        "cancel all models (press twice), else unzoom",
    ),
    b(
        A::CancelFocused,
        &[ctrl('x')],
        Hint::When(&[(When::Running, "cancel focused")]),
        "cancel the focused model only (on the review: the selected one)",
    ),
    b(
        A::Send,
        &[k(KeyCode::Enter)],
        Hint::When(&[
            (When::Idle, "send"),
            (When::ToReview, "send"),
            (When::Running, "zoom"),
        ]),
        "send the prompt (on an empty prompt: zoom the focused panel)",
    ),
    b(
        A::Newline,
        &[
            ctrl('j'),
            Chord::with(KeyCode::Enter, KeyModifiers::SHIFT),
            Chord::with(KeyCode::Enter, KeyModifiers::ALT),
        ],
        Hint::When(&[(When::Idle, "newline"), (When::ToReview, "newline")]),
        "new line in the prompt",
    ),
    b(
        A::NextPanel,
        &[k(KeyCode::Tab)],
        show("next panel"),
        PANEL_FOCUS,
    ),
    b(A::PrevPanel, &[k(KeyCode::BackTab)], HIDDEN, PANEL_FOCUS),
    b(
        A::ScrollUp,
        &[k(KeyCode::PageUp)],
        show("scroll"),
        PANEL_SCROLL,
    ),
    b(
        A::ScrollDown,
        &[k(KeyCode::PageDown)],
        show("scroll"),
        PANEL_SCROLL,
    ),
    b(
        A::Commands,
        &[c('/')],
        Hint::When(&[(When::Idle, "commands"), (When::ToReview, "commands")]),
        "a slash command (the list of commands opens)",
    ),
    b(
        A::Interrupt,
        &[ctrl('c')],
        Hint::When(&[(When::Idle, "quit")]),
        "cancel models; idle: clear the prompt, then quit (asks first)",
    ),
    b(
        A::Quit,
        &[ctrl('d')],
        HIDDEN,
        "quit, on an empty prompt while idle (asks first)",
    ),
    b(A::ScrollTop, &[ctrl_key(KeyCode::Home)], HIDDEN, PANEL_ENDS),
    b(
        A::ScrollBottom,
        &[ctrl_key(KeyCode::End)],
        HIDDEN,
        PANEL_ENDS,
    ),
    b(
        A::HistorySearch,
        &[ctrl('r')],
        HIDDEN,
        "search the prompt history (again: older match)",
    ),
    b(
        A::ToolOutput,
        &[ctrl('t')],
        HIDDEN,
        "the focused panel's tool results, whole (scroll up for earlier calls)",
    ),
    b(A::CursorUp, &[k(KeyCode::Up)], HIDDEN, PROMPT_MOVE),
    b(A::CursorDown, &[k(KeyCode::Down)], HIDDEN, PROMPT_MOVE),
    b(A::CursorLeft, &[k(KeyCode::Left)], HIDDEN, PROMPT_CURSOR),
    b(A::CursorRight, &[k(KeyCode::Right)], HIDDEN, PROMPT_CURSOR),
    b(
        A::LineStart,
        &[k(KeyCode::Home), ctrl('a')],
        HIDDEN,
        PROMPT_LINE,
    ),
    b(
        A::LineEnd,
        &[k(KeyCode::End), ctrl('e')],
        HIDDEN,
        PROMPT_LINE,
    ),
    b(
        A::DeleteBack,
        &[k(KeyCode::Backspace)],
        HIDDEN,
        PROMPT_DELETE,
    ),
    b(
        A::DeleteForward,
        &[k(KeyCode::Delete)],
        HIDDEN,
        PROMPT_DELETE,
    ),
    b(
        A::DeleteWord,
        &[ctrl('w')],
        HIDDEN,
        "delete the word before the cursor",
    ),
    b(
        A::ClearPrompt,
        &[ctrl('u')],
        HIDDEN,
        "delete the whole prompt",
    ),
];

const CHOOSE: &str = "choose in the list";

const COMPLETION: &[Binding] = &[
    b(
        A::Complete,
        &[k(KeyCode::Tab)],
        show("complete"),
        "complete with the chosen item (/command, @model, @path)",
    ),
    b(A::CompletionUp, &[k(KeyCode::Up)], show("choose"), CHOOSE),
    b(
        A::CompletionDown,
        &[k(KeyCode::Down)],
        show("choose"),
        CHOOSE,
    ),
    b(
        A::CloseList,
        &[k(KeyCode::Esc)],
        show("close"),
        "close the list",
    ),
];

const HISTORY_SEARCH: &[Binding] = &[
    b(
        A::SearchOlder,
        &[ctrl('r'), k(KeyCode::Up)],
        show("older"),
        "an older match",
    ),
    b(
        A::SearchTake,
        &[k(KeyCode::Enter), k(KeyCode::Tab), k(KeyCode::Right)],
        show("take"),
        "take the match into the prompt",
    ),
    b(
        A::SearchCancel,
        &[k(KeyCode::Esc), ctrl('c'), ctrl('g')],
        show("cancel"),
        "leave the search, the prompt as it was",
    ),
    b(
        A::SearchErase,
        &[k(KeyCode::Backspace)],
        HIDDEN,
        "delete the search's last character",
    ),
];

const RATE: &str = "rate: +/- marks (no games) · = tie: as good as the kept one";
const MODEL_STEP: &str = "the next / previous model";
const HUNK_STEP: &str = "the next / previous hunk (search match while searching)";
const DIFF_ROW: &str = "scroll the diff a row";
const DIFF_PAGE: &str = "scroll the diff a page";
const DIFF_ENDS: &str = "the top / bottom of the diff";
const FILE_STEP: &str = "the previous / next file of the model";
const LINE_STEP: &str = "the line cursor on the next / previous changed line of the hunk";

const REVIEW: &[Binding] = &[
    b(
        A::PickHunk,
        &[c(' ')],
        show("pick hunk"),
        "pick the hunk on screen (again: drop it)",
    ),
    b(
        A::PickFile,
        &[c('f')],
        show("file"),
        "pick the file on screen, whole",
    ),
    b(
        A::PickModel,
        &[c('c')],
        show("model"),
        "pick the model's whole change set",
    ),
    b(A::Apply, &[c('a')], show("apply"), "apply the basket"),
    b(
        A::NoneOfThem,
        &[c('x')],
        show("none"),
        "none of them: keep no change",
    ),
    b(A::RateGood, &[c('+')], show("rate"), RATE),
    b(A::RateBad, &[c('-')], show("rate"), RATE),
    b(A::RateTie, &[c('=')], show("rate"), RATE),
    b(A::NextModel, &[k(KeyCode::Tab)], show("model"), MODEL_STEP),
    b(A::PrevModel, &[k(KeyCode::BackTab)], HIDDEN, MODEL_STEP),
    b(A::NextHunk, &[c('n')], show("hunk"), HUNK_STEP),
    b(A::PrevHunk, &[c('N'), c('p')], show("hunk"), HUNK_STEP),
    b(
        A::ToggleLayout,
        &[c('s')],
        show("layout"),
        "layout: unified / side by side",
    ),
    b(
        A::CompareNext,
        &[c('v')],
        show("compare"),
        "compare with another model's version (again: the next, then the base)",
    ),
    b(
        A::Versions,
        &[c('V')],
        show("compare"),
        "every model's version of the hunk on screen (again: back)",
    ),
    b(
        A::ScrollLeft,
        &[c('<')],
        HIDDEN,
        "scroll long lines sideways (left / right)",
    ),
    b(
        A::ScrollRight,
        &[c('>')],
        HIDDEN,
        "scroll long lines sideways (left / right)",
    ),
    b(
        A::ToggleWrap,
        &[c('w')],
        HIDDEN,
        "wrap long lines (again: cut them)",
    ),
    b(
        A::Transcript,
        &[c('t')],
        show("transcript"),
        "the model's transcript (Ctrl+O comes back)",
    ),
    b(
        A::Shell,
        &[c('o')],
        show("shell"),
        "a shell in the model's workspace",
    ),
    b(
        A::Rewind,
        &[c('R')],
        show("rewind"),
        "rewind the turn (asks first)",
    ),
    b(
        A::ReviewBack,
        &[k(KeyCode::Esc)],
        show("prompt"),
        "clear the search, else back to the prompt",
    ),
    b(A::ReviewClose, &[c('q')], HIDDEN, "back to the prompt"),
    b(A::DiffUp, &[k(KeyCode::Up), c('k')], HIDDEN, DIFF_ROW),
    b(A::DiffDown, &[k(KeyCode::Down), c('j')], HIDDEN, DIFF_ROW),
    b(A::DiffPageUp, &[k(KeyCode::PageUp)], HIDDEN, DIFF_PAGE),
    b(A::DiffPageDown, &[k(KeyCode::PageDown)], HIDDEN, DIFF_PAGE),
    b(A::DiffTop, &[k(KeyCode::Home), c('g')], HIDDEN, DIFF_ENDS),
    b(A::DiffBottom, &[k(KeyCode::End), c('G')], HIDDEN, DIFF_ENDS),
    b(
        A::PrevFile,
        &[k(KeyCode::Left), c('['), c('h')],
        HIDDEN,
        FILE_STEP,
    ),
    b(
        A::NextFile,
        &[k(KeyCode::Right), c(']'), c('l')],
        HIDDEN,
        FILE_STEP,
    ),
    b(A::DiffSearch, &[c('/')], HIDDEN, "search the file's diff"),
    b(A::NextLine, &[c('J')], HIDDEN, LINE_STEP),
    b(A::PrevLine, &[c('K')], HIDDEN, LINE_STEP),
    b(
        A::PickLine,
        &[c('L')],
        HIDDEN,
        "pick the cursor's line (again: drop it)",
    ),
    b(
        A::Comment,
        &[c('m')],
        HIDDEN,
        "comment on the cursor's line or the hunk on screen",
    ),
    b(
        A::SendComments,
        &[c('M')],
        HIDDEN,
        "send the model's comments to it",
    ),
    b(
        A::SendAllComments,
        &[c('A')],
        HIDDEN,
        "send every comment to every model",
    ),
    b(
        A::DropComment,
        &[k(KeyCode::Backspace)],
        HIDDEN,
        "drop the model's last comment",
    ),
    b(A::Help, &[c('?')], HIDDEN, "keys and commands (this help)"),
];

const REVIEW_SEARCH: &[Binding] = &[
    b(
        A::ReviewSearchKeep,
        &[k(KeyCode::Enter)],
        show("keep"),
        "keep the search (n/N move between its matches)",
    ),
    b(
        A::ReviewSearchCancel,
        &[k(KeyCode::Esc)],
        show("cancel"),
        "drop the search",
    ),
    b(
        A::ReviewSearchErase,
        &[k(KeyCode::Backspace)],
        HIDDEN,
        "delete the search's last character",
    ),
];

const REVIEW_COMMENT: &[Binding] = &[
    b(
        A::CommentKeep,
        &[k(KeyCode::Enter)],
        show("keep (empty: remove)"),
        "keep the comment (empty: remove the one at this place)",
    ),
    b(
        A::CommentCancel,
        &[k(KeyCode::Esc)],
        show("cancel"),
        "drop what was typed",
    ),
    b(
        A::CommentErase,
        &[k(KeyCode::Backspace)],
        HIDDEN,
        "delete the comment's last character",
    ),
];

const CONFLICT_STEP: &str = "the previous / next conflicting file";
const DETAIL_PAGE: &str = "scroll the conflict detail a page";

/// The answers first: a narrow bottom line still shows them.
const APPLY_DIALOG: &[Binding] = &[
    b(
        A::ApplyConfirm,
        &[k(KeyCode::Enter), c('a')],
        show("apply"),
        "apply (a file left unanswered is not written)",
    ),
    b(
        A::ApplyCancel,
        &[k(KeyCode::Esc), c('q'), ctrl('c')],
        show("cancel"),
        "apply nothing; the basket stays as it was",
    ),
    b(
        A::Overwrite,
        &[c('o')],
        show("overwrite"),
        "overwrite: write the model's whole file",
    ),
    b(A::Skip, &[c('s')], show("skip"), "skip: keep your file"),
    b(
        A::Markers,
        &[c('m')],
        show("markers"),
        "markers: write the merge with conflict markers",
    ),
    b(
        A::ConflictUp,
        &[k(KeyCode::Up), c('k')],
        show("file"),
        CONFLICT_STEP,
    ),
    b(
        A::ConflictDown,
        &[k(KeyCode::Down), c('j')],
        show("file"),
        CONFLICT_STEP,
    ),
    b(
        A::DetailPageUp,
        &[k(KeyCode::PageUp)],
        show("scroll"),
        DETAIL_PAGE,
    ),
    b(
        A::DetailPageDown,
        &[k(KeyCode::PageDown)],
        show("scroll"),
        DETAIL_PAGE,
    ),
    b(
        A::DetailTop,
        &[k(KeyCode::Home)],
        HIDDEN,
        "the top of the conflict detail",
    ),
];

const REWIND_DIALOG: &[Binding] = &[
    b(
        A::RewindConfirm,
        &[c('y'), k(KeyCode::Enter)],
        Hint::When(&[
            (When::EditedFiles, "rewind (edited files kept)"),
            (When::NoEditedFiles, "rewind"),
        ]),
        "rewind (files edited after the apply are kept)",
    ),
    b(
        A::RewindForce,
        &[c('f')],
        Hint::When(&[(When::EditedFiles, "rewind them too")]),
        "rewind the edited files too",
    ),
    b(
        A::RewindCancel,
        &[c('n'), k(KeyCode::Esc), c('q'), ctrl('c')],
        Hint::When(&[
            (When::EditedFiles, "cancel"),
            (When::NoEditedFiles, "cancel"),
        ]),
        "rewind nothing",
    ),
];

const OVERLAY_ROW: &str = "scroll a row (other keys close)";
const OVERLAY_PAGE: &str = "scroll a page";

const OVERLAY: &[Binding] = &[
    b(
        A::OverlayUp,
        &[k(KeyCode::Up), c('k')],
        show("scroll"),
        OVERLAY_ROW,
    ),
    b(
        A::OverlayDown,
        &[k(KeyCode::Down), c('j')],
        show("scroll"),
        OVERLAY_ROW,
    ),
    b(
        A::OverlayPageUp,
        &[k(KeyCode::PageUp)],
        show("scroll"),
        OVERLAY_PAGE,
    ),
    b(
        A::OverlayPageDown,
        &[k(KeyCode::PageDown), c(' ')],
        show("scroll"),
        OVERLAY_PAGE,
    ),
];

/// The bindings of `context`.
pub(super) fn bindings(context: Context) -> &'static [Binding] {
    match context {
        Context::Prompt => PROMPT,
        Context::Completion => COMPLETION,
        Context::HistorySearch => HISTORY_SEARCH,
        Context::Review => REVIEW,
        Context::ReviewSearch => REVIEW_SEARCH,
        Context::ReviewComment => REVIEW_COMMENT,
        Context::ApplyDialog => APPLY_DIALOG,
        Context::RewindDialog => REWIND_DIALOG,
        Context::Overlay => OVERLAY,
    }
}

/// The `/help` heading of `context`.
pub(super) fn title(context: Context) -> &'static str {
    match context {
        Context::Prompt => "Prompt and panels (Ctrl keys work on the review too)",
        Context::Completion => "Completion list (/command, @model, @path)",
        Context::HistorySearch => "History search (Ctrl+R)",
        Context::Review => "Review (Ctrl+O)",
        Context::ReviewSearch => "Review: typing a search (/)",
        Context::ReviewComment => "Review: typing a comment (m)",
        Context::ApplyDialog => "Apply question (files you edited too)",
        Context::RewindDialog => "Rewind question",
        Context::Overlay => "This help and other lists",
    }
}

/// What typed characters do in `context`, where the hints say so.
pub(super) fn typing(context: Context) -> Option<&'static str> {
    match context {
        Context::HistorySearch => Some("search"),
        _ => None,
    }
}
