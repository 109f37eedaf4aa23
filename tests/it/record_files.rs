//! The record files through the binary (`src/jsonl.rs`): a last line torn by a kill is ended
//! before the next record, so `--continue` keeps its `opened` record and the next choice is
//! counted; a log written by a newer versus is read but never appended to; a damaged line in
//! the middle of the apply journal makes `versus rewind` refuse, naming file and line, instead
//! of rolling back an apply that finished; `history.jsonl` lines are typed and old ones read.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Output;

use util::versus;
use versus::session::{SessionLog, SessionRecord};

struct Project {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
}

/// A project with three scripted models: one that only answers, two that each write a file.
fn project() -> Project {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let root = base.join("p");
    let home = base.join("home");
    std::fs::create_dir_all(root.join("scripts")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(root.join("a.txt"), "a\n").unwrap();
    std::fs::write(
        root.join("scripts/quiet.jsonl"),
        "{\"say\": \"nothing to do\"}\n",
    )
    .unwrap();
    for n in [1, 2] {
        std::fs::write(
            root.join(format!("scripts/w{n}.jsonl")),
            format!(
                "{{\"tools\": [{{\"name\": \"write_file\", \"args\": {{\"path\": \"out{n}.txt\", \"content\": \"written {n}\\n\"}}}}]}}\n{{\"say\": \"wrote out{n}.txt\"}}\n"
            ),
        )
        .unwrap();
    }
    Project {
        _tmp: tmp,
        root,
        home,
    }
}

impl Project {
    fn run(&self, args: &[&str]) -> Output {
        versus()
            .arg("-C")
            .arg(&self.root)
            .args(args)
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_STATE_HOME")
            .env("HOME", &self.home)
            .env("TMPDIR", &self.home)
            .output()
            .unwrap()
    }

    fn ok(&self, args: &[&str]) -> (String, String) {
        let out = self.run(args);
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{args:?}: {err}");
        (String::from_utf8_lossy(&out.stdout).into_owned(), err)
    }

    /// The folder of the project's only session.
    fn session_dir(&self) -> PathBuf {
        let sessions: Vec<PathBuf> = std::fs::read_dir(self.root.join(".versus/sessions"))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        assert_eq!(sessions.len(), 1, "{sessions:?}");
        sessions[0].clone()
    }
}

/// Appends `bytes` as a process killed in the middle of a write leaves them (no newline).
fn tear(path: &Path, bytes: &[u8]) {
    let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    f.write_all(bytes).unwrap();
}

#[test]
fn continue_after_a_torn_last_line_keeps_the_opened_record_and_every_later_one() {
    let p = project();
    p.ok(&["ask", "first", "-m", "demo/scripts/quiet.jsonl"]);
    let dir = p.session_dir();
    let events = dir.join("events.jsonl");
    tear(
        &events,
        b"{\"v\":3,\"type\":\"agent\",\"turn\":1,\"entry\":0,\"model\":\"demo/scr",
    );
    p.ok(&["ask", "second", "--continue", "--quiet"]);

    let log = SessionLog::read(&dir).unwrap();
    assert!(log.skipped.is_empty(), "{:?}", log.skipped);
    let opened: Vec<u32> = log
        .records
        .iter()
        .filter_map(|r| match r {
            SessionRecord::Opened {
                continued_after_turn,
                ..
            } => Some(*continued_after_turn),
            _ => None,
        })
        .collect();
    assert_eq!(opened, [0, 1], "the continued session's `opened` is kept");
    let turns = log.turns();
    assert_eq!(turns.len(), 2);
    assert_eq!(turns[1].prompt, "second");
    assert!(turns[1].complete, "every record of the second turn is kept");
    assert!(
        log.records
            .iter()
            .any(|r| matches!(r, SessionRecord::TurnEnded { turn: 2, .. }))
    );
    assert!(matches!(
        log.records.last(),
        Some(SessionRecord::Ended { turn: 2, .. })
    ));
    // Every line of the file is one whole record: nothing glued onto the fragment.
    let text = std::fs::read_to_string(&events).unwrap();
    for (n, line) in text.lines().enumerate() {
        assert!(
            serde_json::from_str::<serde_json::Value>(line).is_ok(),
            "line {}: {line}",
            n + 1
        );
    }
}

#[test]
fn a_torn_preferences_tail_followed_by_a_choice_keeps_the_choice() {
    let p = project();
    let quiet = [
        "-m",
        "demo/scripts/quiet.jsonl",
        "--pick",
        "none",
        "--quiet",
    ];
    p.ok(&[&["ask", "first"][..], &quiet].concat());
    let prefs = p.root.join(".versus/preferences.jsonl");
    tear(&prefs, b"{\"v\":1,\"time\":\"2026-01-01T00:");
    p.ok(&[&["ask", "second"][..], &quiet].concat());
    let (out, err) = p.ok(&["stats", "--json"]);
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["sources"]["preferences"], 2, "{doc:#}");
    assert!(!err.contains("skipped"), "{err}");
    assert_eq!(
        std::fs::read_to_string(&prefs).unwrap().lines().count(),
        2,
        "the fragment is gone"
    );
}

#[test]
fn a_log_written_by_a_newer_versus_is_read_but_never_appended_to() {
    let p = project();
    p.ok(&["ask", "first", "-m", "demo/scripts/quiet.jsonl"]);
    let dir = p.session_dir();
    let events = dir.join("events.jsonl");
    tear(
        &events,
        b"{\"v\":99,\"type\":\"hologram\",\"turn\":1,\"time\":\"2031-01-01T00:00:00Z\"}\n",
    );
    let before = std::fs::read(&events).unwrap();
    let out = p.run(&["ask", "second", "--continue"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("written by a newer versus (session log format 99")
            && err.contains("update versus to continue it"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(&events).unwrap(),
        before,
        "the log is unchanged"
    );
    // Still read: the session shows, the line it cannot read is named.
    let (shown, err) = p.ok(&["sessions", "show"]);
    assert!(shown.contains("first"), "{shown}");
    assert!(
        err.contains(&format!("{}:", events.display())) && err.contains("newer versus"),
        "{err}"
    );
    assert_eq!(std::fs::read(&events).unwrap(), before);
}

#[test]
fn a_damaged_middle_journal_line_makes_rewind_refuse_naming_file_and_line() {
    let p = project();
    for (n, extra) in [(1, &[][..]), (2, &["--continue"][..])] {
        let model = format!("demo/scripts/w{n}.jsonl");
        let prompt = format!("write {n}");
        let args = [
            &["ask", &prompt, "-m", &model, "--pick", &model, "--quiet"][..],
            extra,
        ];
        p.ok(&args.concat());
    }
    assert!(p.root.join("out1.txt").is_file() && p.root.join("out2.txt").is_file());
    let journal = p.session_dir().join("journal.jsonl");
    let text = std::fs::read_to_string(&journal).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert!(lines[1].contains("\"kind\":\"commit\""), "{text}");
    // The first apply's commit damaged (a bad byte where its kind was).
    let damaged = text.replacen("\"kind\":\"commit\"", "\"kind\":\"c\u{1}mmit\"", 1);
    std::fs::write(&journal, &damaged).unwrap();

    let out = p.run(&["rewind", "--yes"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains(&format!("{}:2:", journal.display())), "{err}");
    assert!(err.contains("apply journal"), "{err}");
    assert_eq!(
        std::fs::read_to_string(p.root.join("out1.txt")).unwrap(),
        "written 1\n",
        "the first apply, which finished, is not rolled back"
    );
    assert_eq!(
        std::fs::read_to_string(p.root.join("out2.txt")).unwrap(),
        "written 2\n"
    );
    assert_eq!(std::fs::read_to_string(&journal).unwrap(), damaged);
}

#[test]
fn history_lines_are_typed_and_old_ones_still_read() {
    let p = project();
    p.ok(&["ask", "one", "-m", "demo/scripts/quiet.jsonl", "--quiet"]);
    let history = p.root.join(".versus/history.jsonl");
    let written = std::fs::read_to_string(&history).unwrap();
    assert!(written.starts_with("{\"v\":1,\"time\":\""), "{written}");
    // Lines as earlier versions wrote them, then a line torn by a kill.
    let old = "{\"time\":\"2025-01-01T00:00:00Z\",\"session\":\"s0\",\"prompt\":\"old\"}\n\
               {\"prompt\":\"oldest\"}\n";
    std::fs::write(&history, format!("{old}{written}{{\"v\":1,\"time\":\"20")).unwrap();
    p.ok(&["ask", "two", "-m", "demo/scripts/quiet.jsonl", "--quiet"]);
    let text = std::fs::read_to_string(&history).unwrap();
    assert!(text.starts_with(&format!("{old}{written}")), "{text}");
    let last = text.lines().last().unwrap();
    let entry: versus::session::HistoryEntry = serde_json::from_str(last).unwrap();
    assert_eq!(entry.prompt, "two");
    assert!(last.starts_with("{\"v\":1,"), "{last}");
    // What the prompt box's history reads.
    assert_eq!(
        versus::session::read_history(&history),
        ["old", "oldest", "one", "two"]
    );
}
