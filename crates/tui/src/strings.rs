//! Fixed UI text in one place: messages, the demo banner, the conflict detail. Keeping it here
//! means docs/tui.md can be checked against one file and wording stays consistent. The text
//! about keys (hints, `/help`) lives with the bindings, in [`super::keymap`].

/// The heading of [`HELP_PROMPT_WORDS`] in `/help`.
pub const HELP_PROMPT_WORDS_TITLE: &str = "Prompt words";

/// Rows after the keys in `/help`: words of the prompt that are not keys, (word, what it does).
pub const HELP_PROMPT_WORDS: &[(&str, &str)] = &[
    (
        "@model",
        "send this prompt only to that model (e.g. @good or @demo/good)",
    ),
    ("@path", "attach that file's content to the prompt"),
];

/// The `/help` title's note on keys that close it (the scrolling keys come from the key table).
pub const HELP_CLOSE: &str = "other keys close";

/// The title's note of an overlay that fits without scrolling.
pub const OVERLAY_ANY_KEY: &str = "any key closes";

/// The header's demo badge (padded: it is drawn reversed).
pub const HEADER_DEMO: &str = " DEMO ";
/// The header's badge when a review waits behind the prompt (followed by its key).
pub const HEADER_REVIEW_READY: &str = "review ready";
/// [`HEADER_REVIEW_READY`] on a header too narrow for it.
pub const HEADER_REVIEW_SHORT: &str = "review";
/// The header's mark of a blind session (names hidden), kept at every width.
pub const HEADER_BLIND: &str = "blind";
/// Said after a choice while blind mode hides the names: they are the session's, and stay
/// hidden until the user asks.
pub const NAMES_STAY_HIDDEN: &str = " · names stay hidden (/blind reveals them)";
/// The header's mark of verbose mode.
pub const HEADER_VERBOSE: &str = "verbose";

/// The empty prompt box's text.
pub const PROMPT_PLACEHOLDER: &str =
    "type a prompt for every model (/ for commands, @ for models and files)";
/// [`PROMPT_PLACEHOLDER`] on a narrow prompt box.
pub const PROMPT_PLACEHOLDER_SHORT: &str = "type a prompt (/ commands, @ models and files)";
/// The empty prompt box's text when the session has no model.
pub const PROMPT_NO_MODEL: &str = "add a model with /models add SPEC";

/// The demo banner (demo mode: no model could run). `folder` is where versus was started
/// (never touched), `project` the example's folder under the temp folder, where the demo runs.
/// Real models are advised with `-m` in the user's own folder: `/models add` here would add
/// them to the demo session, on the example project.
pub fn demo_banner(folder: &str, project: &str, why: &str) -> Vec<String> {
    vec![
        format!("Demo mode: {why}"),
        format!(
            "Your folder {folder} is not touched: scripted demo models (no network, no cost) work \
             on a copy of an example project in {project}."
        ),
        "Press Enter to send the prompt below and watch them. To use real models on your \
         project: quit, set a key (OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY...) \
         and run `versus -m openai/gpt-5` in your folder, or set `models = [...]` in \
         ~/.config/versus/config.toml."
            .to_string(),
    ]
}

/// Said after `/models add` in demo mode: the models joined the demo session, not the user's
/// project, and how to use them there.
pub fn demo_models_added(project: &str, added: &[String]) -> String {
    let specs: Vec<String> = added.iter().map(|m| format!("-m {m}")).collect();
    format!(
        "demo mode: added to the demo session, which works on the example project in {project}, \
         not on your folder; to use them on your project, quit and run `versus {}` there",
        specs.join(" ")
    )
}

/// The question Esc asks while models run.
pub fn confirm_cancel(running: usize) -> String {
    let s = if running == 1 { "" } else { "s" };
    format!("press Esc again to cancel {running} running model{s} (any other key: keep them)")
}

/// The question Enter asks when a new prompt would leave review comments unsent.
pub fn confirm_drop_comments(count: usize) -> String {
    let s = if count == 1 { "" } else { "s" };
    format!(
        "{count} review comment{s} not sent yet (Ctrl+O, then M or A sends them): press Enter \
         again to send this prompt without them"
    )
}

/// The question Ctrl+C / Ctrl+D asks while a turn waits for its choice. `demo`: the example
/// project's folder in demo mode, which the command must name (the session lives there, not
/// in the folder the user started from).
pub fn confirm_quit(key: &str, turn: u32, demo: Option<&str>) -> String {
    let command = match demo {
        Some(folder) => format!(
            "versus -C {} --continue",
            versus_core::sanitize::shell_word(folder)
        ),
        None => "versus --continue".to_string(),
    };
    format!("press {key} again to quit: turn {turn} is not chosen yet ({command} brings it back)")
}

/// Notification: every model of a turn has ended.
pub fn notify_turn_ended(turn: u32) -> String {
    format!("versus: turn {turn} finished")
}

/// Notification: the first changes of a turn can be reviewed while other models still run.
pub fn notify_review_ready(turn: u32) -> String {
    format!("versus: turn {turn} has changes to review")
}

/// Notification: a question waits for an answer.
pub const NOTIFY_QUESTION: &str = "versus: a question waits for your answer";

/// Column headings of the conflict detail: the user's text and the model's.
pub const CONFLICT_YOURS: &str = "yours";
/// See [`CONFLICT_YOURS`].
pub const CONFLICT_MODEL: &str = "model";

/// The heading over what each answer writes in a conflicting region.
pub const CONFLICT_WRITES: &str = "what each answer writes here:";

/// Shown at the bottom of the conflict detail while more of it is below.
pub const CONFLICT_MORE: &str = " ↓ more: PgDn ";

/// The three answers, as labelled in the conflict detail (key and name).
pub const CONFLICT_ANSWERS: [&str; 3] = ["o overwrite", "s skip     ", "m markers  "];

/// Said under a file's regions: overwrite takes the model's whole file, not only the regions
/// shown, so edits of the user's that merged cleanly elsewhere go too.
pub fn conflict_overwrite_note(added: usize, removed: usize) -> String {
    format!(
        "o writes the model's whole file (+{added} -{removed} against yours: your other edits in it go too); \
         s keeps your file; m writes the merge with these blocks"
    )
}

/// What each answer does for a whole-file conflict (binary, or deleted on one side), which has
/// no regions to show.
pub fn conflict_whole(reason: versus_core::apply::ConflictReason) -> &'static str {
    use versus_core::apply::ConflictReason;
    match reason {
        ConflictReason::Binary => {
            "both sides changed this file as a whole (binary, or a link): o writes the model's version, s keeps yours; no markers"
        }
        ConflictReason::DeletedByYou => {
            "you deleted this file and the model changed it: o writes the model's version back, s leaves it deleted; no markers"
        }
        ConflictReason::DeletedByModel => {
            "the model deletes this file and you changed it: o deletes it, s keeps your version; no markers"
        }
        ConflictReason::Lines => "",
    }
}

/// Said when the user rates a model in the review: what the rating will mean for the
/// statistics, so `=` (which changes games) and `+`/`-` (which do not) are never a surprise.
pub fn rated(who: &str, rating: versus_core::session::Rating) -> String {
    use versus_core::session::Rating;
    let meaning = match rating {
        Rating::Tie => {
            "as good as the model you keep: it ties with it and beats the others in the stats; \
             with x (none of them) it has no effect"
        }
        Rating::Good | Rating::Bad => "a mark counted in the stats (not a game)",
    };
    format!("{who} rated {rating}: {meaning}")
}

/// Inline review comments (`m`, `M`, `A`, Backspace on the review).
pub const COMMENT_NO_PLACE: &str =
    "no hunk on screen to comment on: n moves to a hunk, J/K to a line";
/// A comment was kept.
pub const COMMENT_SAVED: &str = "comment on";
/// A comment was removed.
pub const COMMENT_REMOVED: &str = "removed the comment on";
/// What to do with the comments once written.
pub const COMMENT_HINT: &str = "M sends this model's comments to it · A all to all";
/// Backspace with no comment on the selected model.
pub const COMMENT_NONE: &str = "no comment on this model (m writes one)";
/// `M` / `A` with nothing to send.
pub const COMMENT_NONE_TO_SEND: &str =
    "no comment to send: m comments on the cursor's line or the hunk on screen";
/// The model has no panel any more (removed with /models remove).
pub const COMMENT_NO_PANEL: &str = "is no longer in the session: its comments cannot be sent";
/// First line of the prompt that sends comments to the model they are about.
pub const COMMENT_PROMPT_ONE: &str = "Review comments on your changes:";
/// First line of the prompt that sends every comment to every model.
pub const COMMENT_PROMPT_ALL: &str =
    "Review comments on the changes of this turn (whose diff each is about in parentheses):";

/// Bottom line of the diff while comparing with another model (`v`).
pub fn compare_hint(other: &str) -> String {
    format!(" comparing with {other} · v next model / base · picks are relative to the base ")
}
/// The diff pane while comparing two versions that are the same bytes.
pub const COMPARE_SAME: &str =
    "no difference: both models left this file exactly the same (v compares with the next)";
/// `v` with no other model that changed the file.
pub const COMPARE_NONE: &str = "no other model changed this file: the diff is against the base";
/// `v` back to the usual diff.
pub const COMPARE_BASE: &str = "comparing with the base again (picks are made here)";
/// `v` onto another model.
pub fn compare_with(other: &str) -> String {
    format!("comparing with {other}'s version of this file · v next · picks need the base diff")
}
/// A pick, line cursor or comment key while comparing with another model.
pub fn compare_no_pick(other: &str) -> String {
    format!(
        "picks are relative to the base, not to {other}'s version: press v until the diff is against the base, then pick"
    )
}
/// `V` with no hunk on screen.
pub const VERSIONS_NO_HUNK: &str =
    "no hunk on screen: n moves to a hunk, then V shows every model's version of it";
/// `V` while comparing with another model.
pub const VERSIONS_COMPARING: &str =
    "V shows every model's version of a hunk of the base diff: press v back to the base first";
/// Bottom line of the N-way view.
pub const VERSIONS_HINT: &str = " ↑↓ PgUp/PgDn scroll · Esc or V back to the diff ";
/// `<` / `>` while long lines wrap.
pub const HSCROLL_WRAPPING: &str = "long lines wrap (w cuts them again, then </> scroll sideways)";

/// The status line when the whole-result key is pressed on a panel with no finished tool call.
pub const NO_TOOL_RESULTS: &str = "no tool call has finished in this panel yet";
