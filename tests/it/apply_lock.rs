//! One writer per project, through the binary: apply and rewind take `.versus/lock`; a second
//! writer waits (saying for whom) or, with `--no-wait`, refuses with exit code 75; two picks
//! racing on the same 300 files never leave a mix.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util;

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};

use nix::fcntl::{Flock, FlockArg};
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
    std::fs::write(root.join("keep.txt"), "base\n").unwrap();
    for (name, letter) in [("a", "A"), ("b", "B")] {
        let command = format!("for i in $(seq 300); do echo {letter} > f$i.txt; done");
        let step = serde_json::json!({"tools": [{"name": "bash", "args": {"command": command}}]});
        std::fs::write(
            root.join(format!("scripts/{name}.jsonl")),
            format!("{step}\n{{\"say\": \"done\"}}\n"),
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
    fn command(&self, args: &[&str]) -> Command {
        let mut c = versus();
        c.arg("-C")
            .arg(&self.root)
            .args(args)
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_STATE_HOME")
            .env("HOME", &self.home)
            .env("TMPDIR", &self.home)
            .stdin(Stdio::null());
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }

    fn pick(&self, model: &str, extra: &[&str]) -> Vec<String> {
        let mut args = vec![
            "ask".to_string(),
            "write".into(),
            "-m".into(),
            "demo/scripts/a.jsonl".into(),
            "-m".into(),
            "demo/scripts/b.jsonl".into(),
            "--pick".into(),
            format!("demo/scripts/{model}.jsonl"),
            "--quiet".into(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        args
    }

    /// Holds the project's lock from this process, as another versus would.
    fn hold_lock(&self) -> Flock<File> {
        std::fs::create_dir_all(self.root.join(".versus")).unwrap();
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(self.root.join(".versus/lock"))
            .unwrap();
        Flock::lock(file, FlockArg::LockExclusiveNonblock).unwrap()
    }

    fn contents(&self) -> Vec<Option<String>> {
        (1..=300)
            .map(|i| std::fs::read_to_string(self.root.join(format!("f{i}.txt"))).ok())
            .collect()
    }
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Spawns and returns the child plus a reader of its stderr lines.
fn spawn(p: &Project, args: &[String]) -> (Child, std::sync::mpsc::Receiver<String>) {
    let mut child = p
        .command(&args.iter().map(String::as_str).collect::<Vec<_>>())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let err = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    (child, rx)
}

fn wait_for_line(rx: &std::sync::mpsc::Receiver<String>, needle: &str) -> String {
    loop {
        let line = rx
            .recv_timeout(std::time::Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("no line with {needle:?}"));
        if line.contains(needle) {
            return line;
        }
    }
}

#[test]
fn a_second_writer_refuses_with_no_wait_and_waits_without() {
    let p = project();
    let lock = p.hold_lock();
    let out = p.run(
        &p.pick("a", &["--no-wait"])
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    assert_eq!(out.status.code(), Some(75), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("another versus process"),
        "{}",
        stderr(&out)
    );
    assert!(
        p.contents().iter().all(Option::is_none),
        "written while locked"
    );

    let (mut child, rx) = spawn(&p, &p.pick("a", &[]));
    let line = wait_for_line(&rx, "waiting for another versus");
    assert!(line.contains(&format!("pid {}", std::process::id())) || line.contains("versus"));
    assert!(
        p.contents().iter().all(Option::is_none),
        "written while locked"
    );
    drop(lock);
    assert!(child.wait().unwrap().success());
    assert!(p.contents().iter().all(|c| c.as_deref() == Some("A\n")));

    // Rewind honours the lock the same way.
    let lock = p.hold_lock();
    let out = p.run(&["rewind", "-y", "--no-wait"]);
    assert_eq!(out.status.code(), Some(75), "{}", stderr(&out));
    assert!(p.contents().iter().all(|c| c.as_deref() == Some("A\n")));
    drop(lock);
    let out = p.run(&["rewind", "-y"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(p.contents().iter().all(Option::is_none));
}

#[test]
fn two_picks_racing_on_the_same_files_never_mix() {
    for _ in 0..3 {
        let p = project();
        let a = spawn(&p, &p.pick("a", &[])).0;
        let b = spawn(&p, &p.pick("b", &[])).0;
        for mut child in [a, b] {
            child.wait().unwrap();
        }
        let contents = p.contents();
        let first = contents[0].clone();
        assert!(first.is_some(), "nothing applied");
        assert!(
            contents.iter().all(|c| *c == first),
            "a mix of both models: {:?}",
            contents.iter().filter(|c| **c != first).count()
        );
        // Everything applied can be rewound back to nothing.
        loop {
            let out = p.run(&["rewind", "-y"]);
            assert!(out.status.success(), "{}", stderr(&out));
            if stderr(&out).contains("Nothing to rewind")
                || String::from_utf8_lossy(&out.stdout).contains("Nothing to rewind")
            {
                break;
            }
        }
        assert!(p.contents().iter().all(Option::is_none));
        assert_eq!(
            std::fs::read_to_string(p.root.join("keep.txt")).unwrap(),
            "base\n"
        );
    }
}
