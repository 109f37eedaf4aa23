//! A crash can leave half a line (or half a UTF-8 character) at the end of a JSON Lines file,
//! and a disk or an editor can leave a bad byte anywhere. Readers skip exactly that line, name
//! the file and line, and keep working: `versus sessions`, `--continue`-style reads and
//! `versus stats` must never refuse every session because of one bad line.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Output;

use util::versus;

struct Project {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
}

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

    fn events_file(&self) -> PathBuf {
        let sessions = self.root.join(".versus/sessions");
        let dir = std::fs::read_dir(&sessions)
            .unwrap()
            .flatten()
            .next()
            .unwrap()
            .path();
        dir.join("events.jsonl")
    }
}

fn append(path: &Path, bytes: &[u8]) -> usize {
    let lines = std::fs::read(path)
        .unwrap()
        .iter()
        .filter(|&&b| b == b'\n')
        .count();
    let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    f.write_all(bytes).unwrap();
    lines + 1
}

#[test]
fn a_torn_utf8_character_in_a_session_log_skips_only_that_line() {
    let p = project();
    p.ok(&["ask", "hello", "-m", "demo/scripts/quiet.jsonl"]);
    let (before, _) = p.ok(&["sessions", "--json"]);
    let events = p.events_file();
    let line = append(&events, b"{\"kind\":\"note\",\"text\":\"caf\xc3");
    let (after, err) = p.ok(&["sessions", "--json"]);
    assert_eq!(before, after, "the session's readable records changed");
    let named = format!("{}:{line}: skipped", events.display());
    assert!(err.contains(&named), "{err}");
    let (shown, err) = p.ok(&["sessions", "show"]);
    assert!(shown.contains("hello"), "{shown}");
    assert!(err.contains(&named), "{err}");
}

#[test]
fn a_bad_byte_in_preferences_does_not_break_stats() {
    let p = project();
    p.ok(&[
        "ask",
        "hello",
        "-m",
        "demo/scripts/quiet.jsonl",
        "--pick",
        "none",
    ]);
    let prefs = p.root.join(".versus/preferences.jsonl");
    assert!(prefs.is_file());
    let line = append(&prefs, b"{\"turn\": 1, \"bad\": \"\xff\"}\n");
    let (_, err) = p.ok(&["stats"]);
    let named = format!("{}:{line}: skipped", prefs.display());
    assert!(err.contains(&named), "{err}");
}
