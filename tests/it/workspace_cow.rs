//! Copy-on-write workspaces from the user's side: entering a namespace of its own must not
//! cost versus any access it had before. Root (a CI container, a sudo session) working on a
//! project owned by another user still reads and applies to it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util;

use std::os::unix::fs::PermissionsExt;

use std::path::{Path, PathBuf};
use std::process::Output;

use util::{git, versus};

/// A committed project `<base>/project` holding `file` with `content`.
fn project(base: &Path, file: &str, content: &str) -> PathBuf {
    let root = base.join("project");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join(file), content).unwrap();
    git(&root, &["init", "-q"]);
    git(&root, &["add", "."]);
    git(&root, &["commit", "-qm", "init"]);
    root
}

/// A demo script at `path` that runs `command` with bash (none: only answers), as a model spec.
fn script(path: &Path, command: Option<&str>) -> String {
    let mut text = String::new();
    if let Some(command) = command {
        let step = serde_json::json!({"tools": [{"name": "bash", "args": {"command": command}}]});
        text.push_str(&format!("{step}\n"));
    }
    text.push_str("{\"say\": \"done\"}\n");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    format!("demo/{}", path.display())
}

/// `versus [pre...] -C root ask x ARGS` with its own config folder and `temp` as TMPDIR;
/// asserts success.
fn ask(root: &Path, base: &Path, temp: &Path, pre: &[&str], args: &[&str]) -> Output {
    let out = versus()
        .args(pre)
        .arg("-C")
        .arg(root)
        .args(["ask", "x"])
        .args(args)
        .env("XDG_CONFIG_HOME", base.join("config"))
        .env("TMPDIR", temp)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

#[test]
fn root_still_reaches_a_project_owned_by_another_user() {
    if !nix::unistd::getuid().is_root() {
        eprintln!("skipped: needs root to give the project to another user");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let root = project(&base, "private.txt", "mine\n");
    std::fs::set_permissions(
        root.join("private.txt"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    let other = Some(nix::unistd::Uid::from_raw(4242));
    let group = Some(nix::unistd::Gid::from_raw(4242));
    let mut stack = vec![root.clone()];
    while let Some(path) = stack.pop() {
        nix::unistd::fchownat(
            nix::fcntl::AT_FDCWD,
            &path,
            other,
            group,
            nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW,
        )
        .unwrap();
        if path.is_dir() && !path.is_symlink() {
            stack.extend(
                std::fs::read_dir(&path)
                    .unwrap()
                    .flatten()
                    .map(|e| e.path()),
            );
        }
    }
    let model = script(
        &base.join("scripts/edit.jsonl"),
        Some("echo theirs >> private.txt"),
    );
    ask(&root, &base, &base, &[], &["-m", &model, "--pick", &model]);
    assert_eq!(
        std::fs::read_to_string(root.join("private.txt")).unwrap(),
        "mine\ntheirs\n"
    );
}

#[test]
fn where_overlays_cannot_be_mounted_versus_makes_full_checkouts_and_says_why() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let root = project(&base, "a.txt", "a\n");
    // Overlay options cannot name a folder with a comma, so the probe fails here.
    let temp = base.join("tmp,with-comma");
    std::fs::create_dir_all(&temp).unwrap();
    let model = script(&base.join("fs.jsonl"), Some("stat -f -c %T . > fs.txt"));
    let log = base.join("versus.log");
    let log_arg = log.display().to_string();
    let out = ask(&root, &base, &temp, &["--log", &log_arg], &["-m", &model]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("+++ b/fs.txt"), "{stdout}");
    assert!(!stdout.contains("+overlayfs"), "{stdout}");
    let log = std::fs::read_to_string(&log).unwrap();
    assert!(
        log.contains("full checkouts: no copy-on-write workspaces"),
        "{log}"
    );
    assert!(log.contains("overlay options cannot carry"), "{log}");
}

#[test]
fn a_probe_folder_left_by_a_killed_run_is_removed_and_a_live_ones_is_not() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let root = project(&base, "a.txt", "a\n");
    let parent = util::users::workspaces_parent(&base, util::users::Who::Me);
    // A pid above any pid_max: dead. Our own test process: alive.
    let dead = parent.join(".cow-probe-4294967294");
    let live = parent.join(format!(".cow-probe-{}", std::process::id()));
    for dir in [&dead, &live] {
        std::fs::create_dir_all(dir.join("upper")).unwrap();
        std::fs::write(dir.join("upper/file"), "x").unwrap();
    }
    let model = script(&base.join("say.jsonl"), None);
    ask(&root, &base, &base, &[], &["-m", &model]);
    assert!(!dead.exists(), "the dead run's probe folder was left");
    assert!(
        live.join("upper/file").exists(),
        "a live run's probe folder was removed"
    );
}
