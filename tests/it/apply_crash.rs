//! Crash safety of apply, with a real crash: a child process (this test binary, re-run on one
//! ignored test) builds a model's change set of 200 files from a real workspace and applies it
//! with a hook that pauses after 100 writes; the parent kills it with SIGKILL and then, like a
//! fresh start of versus, finds the interrupted apply in the journal and rolls it back. The
//! whole tree (every file's hash and mode, every folder) must be exactly as before.
//!
//! Also: paths are checked again at apply time, so a symlink that appears after the run cannot
//! redirect a proposal out of the project.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util;

use util::git;

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use versus::apply::{ApplyEngine, ApplyError, Selection, compose, content_hash, journal};
use versus::workspace::{Base, ChangeSet, Isolation, Workspace, WriteOrigin, cleanup_leftovers_in};

/// Set (to the test folder) only in the child process.
const CHILD_ENV: &str = "VERSUS_APPLY_CRASH_DIR";
/// How many writes the child does before pausing (default [`PAUSE_AFTER`]).
const PAUSE_ENV: &str = "VERSUS_APPLY_CRASH_PAUSE";
const MODEL: &str = "crash/model";
const PAUSE_AFTER: usize = 100;

fn write(root: &Path, rel: &str, content: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, content).unwrap();
}

fn chmod(root: &Path, rel: &str, mode: u32) {
    fs::set_permissions(root.join(rel), fs::Permissions::from_mode(mode)).unwrap();
}

fn file_name(i: usize) -> String {
    format!("src/m{}/f{i:03}.txt", i % 10)
}

fn body(i: usize, tag: &str) -> String {
    (0..40)
        .map(|l| format!("file {i} line {l} {tag}\n"))
        .collect()
}

/// Every file (blake3 of its bytes, mode) and folder under `root`, `.git` excluded.
fn tree(root: &Path) -> BTreeMap<String, (String, u32)> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, (String, u32)>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            // versus's own folder (the project lock lives there), like git's, is not the user's
            // tree.
            if rel == ".git" || rel == ".versus" {
                continue;
            }
            let meta = fs::symlink_metadata(&path).unwrap();
            let mode = meta.permissions().mode() & 0o7777;
            if meta.file_type().is_symlink() {
                let target = fs::read_link(&path).unwrap();
                out.insert(rel, (format!("-> {}", target.display()), 0));
            } else if meta.is_dir() {
                out.insert(format!("{rel}/"), (String::new(), mode));
                walk(root, &path, out);
            } else {
                out.insert(rel, (content_hash(&fs::read(&path).unwrap()), mode));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// A git repository with 171 files (and uncommitted edits) the model will work on.
fn project(root: &Path) {
    fs::create_dir_all(root).unwrap();
    for i in 0..170 {
        write(root, &file_name(i), &body(i, "base"));
    }
    write(root, "run.sh", "#!/bin/sh\necho run\n");
    chmod(root, "run.sh", 0o755);
    write(root, "secret.txt", "secret\n");
    chmod(root, "secret.txt", 0o600);
    write(root, "README.md", "untouched\n");
    git(root, &["init", "-q"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "init"]);
    write(root, &file_name(7), &body(7, "uncommitted"));
    write(root, "untracked.txt", "untracked\n");
}

/// The child: a model changes 200 files in its worktree; apply pauses after 100 writes.
#[test]
#[ignore = "child process of sigkill_in_the_middle_of_an_apply_of_200_files_rolls_back_exactly"]
fn child_apply() {
    let Ok(dir) = std::env::var(CHILD_ENV) else {
        return;
    };
    let dir = PathBuf::from(dir);
    let root = dir.join("project");
    let base = Base::capture(&root).unwrap();
    let ws =
        Workspace::create_in(&dir.join("workspaces"), Isolation::Worktree, &base, MODEL).unwrap();
    assert_eq!(ws.mode(), Isolation::Worktree);
    let view = ws.view();
    let origin = |i: usize| WriteOrigin::new("write_file", format!("call-{i}"));
    // 150 modified (one of them the executable script), 20 deleted, 30 created in new folders.
    for i in 0..149 {
        let path = view.resolve(&file_name(i)).unwrap();
        view.write(&path, body(i, "model").as_bytes(), &origin(i))
            .unwrap();
    }
    let script = view.resolve("run.sh").unwrap();
    view.write(&script, b"#!/bin/sh\necho model\n", &origin(149))
        .unwrap();
    for i in 150..169 {
        let path = view.resolve(&file_name(i)).unwrap();
        view.delete(&path, &origin(i)).unwrap();
    }
    let secret = view.resolve("secret.txt").unwrap();
    view.delete(&secret, &origin(169)).unwrap();
    for i in 0..30 {
        let path = view.resolve(&format!("gen/g{}/new{i}.txt", i % 3)).unwrap();
        view.write(&path, b"generated\n", &origin(170 + i)).unwrap();
    }
    let cs = ChangeSet::from_workspace(MODEL, &base, &ws).unwrap();
    assert_eq!(cs.files_changed(), 200);
    let plan = compose(&[cs], &Selection::new().change_set(MODEL), "crash test").unwrap();
    let pause = std::env::var(PAUSE_ENV)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(PAUSE_AFTER);
    ApplyEngine::new(&root, &dir.join("session"))
        .unwrap()
        .pause_after_writes(pause, dir.join("ready"))
        .apply(&plan, &BTreeMap::new())
        .unwrap();
    unreachable!("the apply pauses forever after {pause} writes");
}

#[test]
fn sigkill_in_the_middle_of_an_apply_of_200_files_rolls_back_exactly() {
    kill_after_writes_then_recover(PAUSE_AFTER);
}

/// The same at the edges: before the first file is put in place (everything snapshotted and
/// staged, `begin` written), after the first, before the last, and after the last (before the
/// folders are flushed and `commit` is written).
#[test]
fn sigkill_at_the_edges_of_the_writes_rolls_back_exactly() {
    for pause in [0, 1, 199, 200] {
        kill_after_writes_then_recover(pause);
    }
}

/// The harness's name for [`child_apply`]: its module path without the crate (`apply_crash::
/// child_apply` in the one test binary `it`), so the re-run finds it wherever the module moves.
fn child_test_name() -> String {
    let module = module_path!();
    let module = module.split_once("::").map_or(module, |(_, rest)| rest);
    format!("{module}::child_apply")
}

/// Runs the child until it pauses after `pause` writes, kills it, and recovers like a fresh
/// start: the tree must be exactly as before.
fn kill_after_writes_then_recover(pause: usize) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().canonicalize().unwrap();
    let root = dir.join("project");
    project(&root);
    let before = tree(&root);

    let log = fs::File::create(dir.join("child.log")).unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", &child_test_name(), "--ignored", "--nocapture"])
        .env(CHILD_ENV, &dir)
        .env(PAUSE_ENV, pause.to_string())
        .stdin(Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .unwrap();
    // Wait for the pause. The limit only stops a broken child from hanging the suite.
    let limit = Instant::now() + Duration::from_secs(300);
    while !dir.join("ready").exists() {
        if let Some(status) = child.try_wait().unwrap() {
            let log = fs::read_to_string(dir.join("child.log")).unwrap();
            panic!("child exited ({status}) before pausing:\n{log}");
        }
        if Instant::now() > limit {
            child.kill().unwrap();
            panic!("child never reached the pause");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    let status = child.wait().unwrap();
    assert_eq!(status.signal(), Some(9), "{status}");

    let half = tree(&root);
    let changed = before
        .iter()
        .filter(|(p, v)| !p.ends_with('/') && half.get(*p) != Some(v))
        .count()
        + half
            .keys()
            .filter(|p| !p.ends_with('/') && !before.contains_key(*p))
            .count();
    assert_eq!(changed, pause, "the crash left a half-applied tree");

    // Next start: a fresh engine finds the interrupted apply in the journal.
    let session = dir.join("session");
    let engine = ApplyEngine::new(&root, &session).unwrap();
    let pending = engine
        .pending_recovery()
        .unwrap()
        .expect("interrupted apply");
    assert_eq!(pending.paths.len(), 200);
    assert_eq!(pending.models, vec![MODEL.to_string()]);
    assert_eq!(pending.label, "crash test");
    assert!(matches!(
        engine.rewind(false),
        Err(ApplyError::PendingRecovery { .. })
    ));
    let report = engine.rollback_incomplete(&pending.apply_id).unwrap();
    assert_eq!(report.restored.len(), 200);
    assert_eq!(
        tree(&root),
        before,
        "the exact pre-apply tree, modes included"
    );
    assert!(engine.pending_recovery().unwrap().is_none());
    let kinds: Vec<&str> = journal::read(&session)
        .unwrap()
        .iter()
        .map(|r| match r {
            journal::Record::Begin { .. } => "begin",
            journal::Record::Commit { .. } => "commit",
            journal::Record::Rewind { .. } => "rewind",
            journal::Record::Rollback { .. } => "rollback",
        })
        .collect();
    assert_eq!(kinds, vec!["begin", "rollback"]);

    // The killed run's workspace and its worktree registration are cleaned up too.
    assert_eq!(
        cleanup_leftovers_in(&dir.join("workspaces"), &root).unwrap(),
        1
    );
    let out = Command::new("git")
        .args(["worktree", "list", "--porcelain"])
        .current_dir(&root)
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&out.stdout);
    assert_eq!(listed.matches("worktree ").count(), 1, "{listed}");
}

#[test]
fn a_symlink_created_after_the_run_makes_apply_refuse_the_path() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().canonicalize().unwrap();
    let root = dir.join("project");
    let outside = dir.join("outside");
    write(&root, "sub/a.txt", "a\n");
    write(&root, "keep.txt", "k\n");
    write(&outside, "a.txt", "a\n");
    let base = Base::capture(&root).unwrap();
    let ws = Workspace::create_in(&dir.join("ws"), Isolation::Copy, &base, "m").unwrap();
    let view = ws.view();
    let origin = WriteOrigin::new("edit_file", "c1");
    for (path, content) in [
        ("sub/a.txt", "A\n"),
        ("sub/new.txt", "n\n"),
        ("keep.txt", "K\n"),
    ] {
        let p = view.resolve(path).unwrap();
        view.write(&p, content.as_bytes(), &origin).unwrap();
    }
    let cs = ChangeSet::from_workspace("m", &base, &ws).unwrap();
    let plan = compose(&[cs], &Selection::new().change_set("m"), "t").unwrap();

    // After the run, `sub` becomes a link to a folder outside the project.
    fs::remove_dir_all(root.join("sub")).unwrap();
    std::os::unix::fs::symlink(&outside, root.join("sub")).unwrap();
    let before = tree(&root);
    let outside_before = tree(&outside);
    let session = dir.join("session");
    let err = ApplyEngine::new(&root, &session)
        .unwrap()
        .apply(&plan, &BTreeMap::new())
        .unwrap_err();
    assert!(matches!(err, ApplyError::Path(_)), "{err}");
    assert!(err.to_string().contains("sub/"), "{err}");
    assert_eq!(tree(&root), before, "nothing written, not even keep.txt");
    assert_eq!(tree(&outside), outside_before, "nothing written outside");
    assert!(journal::read(&session).unwrap().is_empty());
}
