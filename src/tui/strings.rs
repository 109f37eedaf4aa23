//! Fixed UI text in one place: key hints, the help screen, the demo banner. Keeping it here
//! means docs/tui.md can be checked against one file and wording stays consistent.

/// Status-line hints while idle: (key, what it does).
pub const HINTS_IDLE: &[(&str, &str)] = &[
    ("Enter", "send"),
    ("Ctrl+J", "newline"),
    ("Tab", "next panel"),
    ("PgUp/PgDn", "scroll"),
    ("/", "commands"),
    ("Ctrl+C", "quit"),
];

/// Status-line hints while idle with changes to review.
pub const HINTS_IDLE_REVIEW: &[(&str, &str)] = &[
    ("Ctrl+O", "review the changes"),
    ("Enter", "send"),
    ("Ctrl+J", "newline"),
    ("Tab", "next panel"),
    ("PgUp/PgDn", "scroll"),
    ("/", "commands"),
];

/// Status-line hints while models run.
pub const HINTS_RUNNING: &[(&str, &str)] = &[
    ("Esc", "cancel all"),
    ("Ctrl+X", "cancel focused"),
    ("Tab", "next panel"),
    ("PgUp/PgDn", "scroll"),
    ("Enter", "zoom"),
];

/// Status-line hints on the review screen.
pub const HINTS_REVIEW: &[(&str, &str)] = &[
    ("Space", "pick hunk"),
    ("f", "file"),
    ("c", "model"),
    ("a", "apply"),
    ("x", "none"),
    ("+/-/=", "rate"),
    ("Tab", "model"),
    ("n/N", "hunk"),
    ("s", "layout"),
    ("t", "transcript"),
    ("o", "shell"),
    ("R", "rewind"),
    ("Esc", "prompt"),
];

/// Status-line hints while a dialog asks.
pub const HINTS_DIALOG: &[(&str, &str)] = &[
    ("Enter", "confirm"),
    ("Esc", "cancel"),
    ("(more keys", "in the question's bottom line)"),
];

/// Status-line hints during a history search.
pub const HINTS_SEARCH: &[(&str, &str)] = &[
    ("type", "search"),
    ("Ctrl+R", "older"),
    ("Enter", "take"),
    ("Esc", "cancel"),
];

/// Status-line hints with the completion list open.
pub const HINTS_COMPLETION: &[(&str, &str)] =
    &[("Tab", "complete"), ("Up/Down", "choose"), ("Esc", "close")];

/// The keys section of `/help`: (key, what it does).
pub const HELP_KEYS: &[(&str, &str)] = &[
    (
        "Enter",
        "send the prompt (on an empty prompt: zoom the focused panel)",
    ),
    ("Shift+Enter, Ctrl+J, Alt+Enter", "new line in the prompt"),
    (
        "Up / Down",
        "move in the prompt; on its first/last line: prompt history",
    ),
    ("Ctrl+R", "search the prompt history (again: older match)"),
    (
        "Tab / Shift+Tab",
        "complete (/command, @model, @path), else focus next/previous panel",
    ),
    (
        "PgUp / PgDn",
        "scroll the focused panel (End of output: Ctrl+End)",
    ),
    (
        "Esc",
        "close a list, else cancel every running model, else unzoom",
    ),
    ("Ctrl+X", "cancel the focused model only"),
    ("Ctrl+O", "the review of the last turn / back to the panels"),
    (
        "review: Tab ↑↓ ←→ n/N",
        "model · scroll · file · hunk (search match while searching)",
    ),
    (
        "review: Space f c",
        "pick the hunk on screen, the file, the whole model (again: drop)",
    ),
    (
        "review: a x + - =",
        "apply the basket · none of them · rate good / bad / tie",
    ),
    (
        "review: / s t o R",
        "search · layout · transcript · shell in the workspace · rewind",
    ),
    ("review: Esc q", "back to the prompt"),
    ("Ctrl+W / Ctrl+U", "delete a word / the whole prompt"),
    (
        "Ctrl+C",
        "cancel running models; when idle, clear the prompt, then quit",
    ),
    (
        "@model",
        "send this prompt only to that model (e.g. @good or @demo/good)",
    ),
    ("@path", "attach that file's content to the prompt"),
];

/// The demo banner (demo mode: no model could run).
pub fn demo_banner(project: &str, why: &str) -> Vec<String> {
    vec![
        format!("Demo mode: {why}"),
        format!(
            "Scripted demo models (no network, no cost) work on an example project in {project}."
        ),
        "Press Enter to send the prompt below and watch them. To use real models: set a key \
         (OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY...) and run `versus -m openai/gpt-5`, \
         or set `models = [...]` in ~/.config/versus/config.toml, or type /models add SPEC."
            .to_string(),
    ]
}
