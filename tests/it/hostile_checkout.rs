//! A hostile repository against what versus does on the host, outside the sandbox (issue 21,
//! third red team): building a workspace lays the user's uncommitted state over a checkout of
//! HEAD, and HEAD is whatever the repository committed. A committed link `a -> ~/.ssh` while
//! the user's tree holds a real folder `a/` (a type change, or a repository unpacked from an
//! archive with its `.git`) made versus write `a/authorized_keys` into the folder the link
//! names, on the host, before any model ran; a deleted `b/victim` in the index below a
//! committed link `b` deleted the file the link leads to. Both are played through the real
//! binary, as the test user and as an unprivileged one, with full checkouts and copy-on-write.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use util::git;
use util::users::{Who, give_away};

/// The bytes the repository wants on the host.
const PAYLOAD: &str = "ssh-ed25519 AAAA attacker\n";

struct Lab {
    _tmp: tempfile::TempDir,
    base: PathBuf,
}

impl Lab {
    fn path(&self, rel: &str) -> PathBuf {
        self.base.join(rel)
    }
}

/// A repository whose HEAD holds the links `a` and `b` to a folder outside it (the user's
/// `~/.ssh`, here `outside/`), a working tree where `a` is a real folder holding
/// `a/authorized_keys`, and an index (as an archive ships it) listing `b/victim` while the
/// tree has no `b`: git status calls `a` deleted, `a/authorized_keys` untracked and
/// `b/victim` deleted.
fn lab() -> Lab {
    let tmp = util::tempdir();
    let base = tmp.path().canonicalize().unwrap();
    for dir in ["home", "tmp", "outside", "project/scripts"] {
        std::fs::create_dir_all(base.join(dir)).unwrap();
    }
    let project = base.join("project");
    let outside = base.join("outside");
    std::fs::write(outside.join("victim"), "the user's own\n").unwrap();
    std::fs::write(project.join("README"), "hi\n").unwrap();
    std::fs::write(project.join(".gitignore"), "scripts/\n").unwrap();
    std::fs::write(project.join("scripts/m"), "{\"say\": \"done\"}\n").unwrap();
    std::os::unix::fs::symlink(&outside, project.join("a")).unwrap();
    std::os::unix::fs::symlink(&outside, project.join("b")).unwrap();
    git(&project, &["init", "-q"]);
    git(&project, &["add", "."]);
    git(&project, &["commit", "-qm", "init"]);
    std::fs::remove_file(project.join("a")).unwrap();
    std::fs::create_dir(project.join("a")).unwrap();
    std::fs::write(project.join("a/authorized_keys"), PAYLOAD).unwrap();
    git(&project, &["rm", "-q", "--cached", "b"]);
    std::fs::remove_file(project.join("b")).unwrap();
    let blob = Command::new("git")
        .args(["hash-object", "-w", "--stdin"])
        .current_dir(&project)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(b"x\n")?;
            child.wait_with_output()
        })
        .unwrap();
    let blob = String::from_utf8(blob.stdout).unwrap();
    git(
        &project,
        &[
            "update-index",
            "--add",
            "--cacheinfo",
            &format!("100644,{},b/victim", blob.trim()),
        ],
    );
    Lab { _tmp: tmp, base }
}

fn ask(lab: &Lab, who: Who, copy_on_write: &str) -> Output {
    who.versus()
        .arg("-C")
        .arg(lab.path("project"))
        .args(["ask", "hi", "-m", "demo/scripts/m"])
        .env("HOME", lab.path("home"))
        .env("XDG_CONFIG_HOME", lab.path("home/.config"))
        .env("XDG_STATE_HOME", lab.path("home/.state"))
        .env("TMPDIR", lab.path("tmp"))
        .env("VERSUS_COPY_ON_WRITE", copy_on_write)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn listing(dir: &Path) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let text = std::fs::read_to_string(e.path()).unwrap_or_default();
            (e.file_name().to_string_lossy().into_owned(), text)
        })
        .collect();
    out.sort();
    out
}

#[test]
fn a_committed_link_never_lets_the_workspace_checkout_write_or_delete_outside() {
    for who in Who::BOTH {
        for copy_on_write in ["auto", "off"] {
            let lab = lab();
            give_away(&lab.base, who);
            let out = ask(&lab, who, copy_on_write);
            let stdout = String::from_utf8_lossy(&out.stdout);
            let stderr = String::from_utf8_lossy(&out.stderr);
            let case = format!("{} (copy-on-write {copy_on_write})", who.name());
            assert!(out.status.success(), "{case}: {stdout}\n{stderr}");
            assert_eq!(
                listing(&lab.path("outside")),
                vec![("victim".to_string(), "the user's own\n".to_string())],
                "{case}: the folder a committed link names was written or emptied"
            );
            // The workspace is the user's tree: nothing of theirs shows up as a change.
            assert!(
                stdout.contains("(no changes)"),
                "{case}: {stdout}\n{stderr}"
            );
            assert_eq!(
                std::fs::read_to_string(lab.path("project/a/authorized_keys")).unwrap(),
                PAYLOAD,
                "{case}"
            );
        }
    }
}

/// A repository unpacked from an archive carries its `.git` whole: `.git/info/exclude ->
/// ~/.ssh/id_ed25519`. versus copied that file into the workspace's private repository, where
/// the model read the key with `cat .git/info/exclude` (and sent it on), and rewrote the
/// project's exclude with the key's text in it when it added `.versus/`. Now both read the
/// repository's own file only, never through a link: the model sees no key, the link is left
/// as it was. Played as the test user and as an unprivileged one.
#[test]
fn a_linked_exclude_file_in_an_archived_git_folder_never_reaches_the_model() {
    const KEY: &str = "PRIVATE-KEY-EXCLUDE-CANARY";
    for who in Who::BOTH {
        let tmp = util::tempdir();
        let base = tmp.path().canonicalize().unwrap();
        let lab = Lab {
            _tmp: tmp,
            base: base.clone(),
        };
        let project = lab.path("project");
        for dir in ["home/.ssh", "tmp", "project/scripts"] {
            std::fs::create_dir_all(lab.path(dir)).unwrap();
        }
        let key = lab.path("home/.ssh/id_ed25519");
        std::fs::write(&key, format!("{KEY}\n")).unwrap();
        std::fs::write(project.join("README"), "hi\n").unwrap();
        std::fs::write(project.join(".gitignore"), "scripts/\n").unwrap();
        let step = serde_json::json!({"tools": [{"name": "bash",
            "args": {"command": "cat .git/info/exclude; echo READ-DONE"}}]});
        std::fs::write(
            project.join("scripts/m"),
            format!("{step}\n{{\"say\": \"done\"}}\n"),
        )
        .unwrap();
        git(&project, &["init", "-q"]);
        git(&project, &["add", "."]);
        git(&project, &["commit", "-qm", "init"]);
        let exclude = project.join(".git/info/exclude");
        let _ = std::fs::remove_file(&exclude);
        std::os::unix::fs::symlink(&key, &exclude).unwrap();
        give_away(&base, who);
        let out = ask(&lab, who, "auto");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{}: {stdout}\n{stderr}", who.name());
        let sessions = project.join(".versus/sessions");
        let session = std::fs::read_dir(&sessions)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        let events = std::fs::read_to_string(session.join("events.jsonl")).unwrap();
        assert!(events.contains("READ-DONE"), "{}: {events}", who.name());
        assert!(
            !events.contains(KEY),
            "{}: the model read the key through .git/info/exclude",
            who.name()
        );
        assert_eq!(
            std::fs::read_link(&exclude).unwrap(),
            key,
            "{}: the linked exclude was replaced",
            who.name()
        );
        assert_eq!(
            std::fs::read_to_string(&key).unwrap(),
            format!("{KEY}\n"),
            "{}",
            who.name()
        );
    }
}

/// A folder a repository merely surrounds is not that repository's: `versus ask` in
/// `~/Downloads/x` under a dotfiles repository at home (untracked files hidden with
/// `status.showUntrackedFiles=no`, nothing ignored) gave the model a checkout of the whole
/// dotfiles repository, and `cat ../../.netrc` read the password committed there. Now a
/// project folder HEAD does not hold gets a copy of its own files. Played as the test user and
/// as an unprivileged one.
#[test]
fn a_repository_around_an_untracked_project_never_reaches_the_workspace() {
    const NETRC: &str = "machine example.com password NETRC-CANARY";
    for who in Who::BOTH {
        let tmp = util::tempdir();
        let base = tmp.path().canonicalize().unwrap();
        let lab = Lab {
            _tmp: tmp,
            base: base.clone(),
        };
        let home = lab.path("home");
        let project = home.join("Downloads/x");
        std::fs::create_dir_all(project.join("scripts")).unwrap();
        std::fs::create_dir_all(lab.path("tmp")).unwrap();
        std::fs::write(home.join(".netrc"), format!("{NETRC}\n")).unwrap();
        git(&home, &["init", "-q"]);
        git(&home, &["add", ".netrc"]);
        git(&home, &["commit", "-qm", "dotfiles"]);
        git(&home, &["config", "status.showUntrackedFiles", "no"]);
        std::fs::write(project.join("README"), "hi\n").unwrap();
        let step = serde_json::json!({"tools": [{"name": "bash",
            "args": {"command": "cat ../../.netrc; git show HEAD:.netrc; echo READ-DONE"}}]});
        std::fs::write(
            project.join("scripts/m"),
            format!("{step}\n{{\"say\": \"done\"}}\n"),
        )
        .unwrap();
        give_away(&base, who);
        let out = who
            .versus()
            .arg("-C")
            .arg(&project)
            .args(["ask", "hi", "-m", "demo/scripts/m"])
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("XDG_STATE_HOME", home.join(".state"))
            .env("TMPDIR", lab.path("tmp"))
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{}: {stdout}\n{stderr}", who.name());
        let session = std::fs::read_dir(project.join(".versus/sessions"))
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        let events = std::fs::read_to_string(session.join("events.jsonl")).unwrap();
        assert!(events.contains("READ-DONE"), "{}: {events}", who.name());
        assert!(
            !events.contains("NETRC-CANARY"),
            "{}: the model read the surrounding repository",
            who.name()
        );
    }
}

/// The session log of the first session in `project`.
fn session_events(project: &Path) -> String {
    let session = std::fs::read_dir(project.join(".versus/sessions"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::fs::read_to_string(session.join("events.jsonl")).unwrap()
}

/// `versus ask` in `project` with a demo model running `command`, as `who`.
fn ask_running(lab: &Lab, project: &Path, who: Who, command: &str) -> Output {
    let step = serde_json::json!({"tools": [{"name": "bash", "args": {"command": command}}]});
    std::fs::create_dir_all(project.join("scripts")).unwrap();
    std::fs::write(
        project.join("scripts/m"),
        format!("{step}\n{{\"say\": \"done\"}}\n"),
    )
    .unwrap();
    give_away(&lab.base, who);
    who.versus()
        .arg("-C")
        .arg(project)
        .args(["ask", "hi", "-m", "demo/scripts/m"])
        .env("HOME", lab.path("home"))
        .env("XDG_CONFIG_HOME", lab.path("home/.config"))
        .env("XDG_STATE_HOME", lab.path("home/.state"))
        .env("TMPDIR", lab.path("tmp"))
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn fresh_lab() -> Lab {
    let tmp = util::tempdir();
    let base = tmp.path().canonicalize().unwrap();
    for dir in ["home", "tmp"] {
        std::fs::create_dir_all(base.join(dir)).unwrap();
    }
    Lab { _tmp: tmp, base }
}

/// An archive can ship its `.git` as a file naming another repository (`gitdir:
/// ~/private/.git`), as a link to one, or as a folder whose `commondir` is one: libgit2 then
/// opens that other repository for the project, and the workspace used to be a checkout of
/// its files. A git folder that does not name the project back is not the project's: the
/// workspace is a copy of the project's own files.
#[test]
fn a_git_folder_that_is_another_repositorys_never_brings_it_into_the_workspace() {
    const SECRET: &str = "PRIVATE-REPO-CANARY";
    for who in Who::BOTH {
        for shape in ["gitdir file", "symlink", "commondir"] {
            let lab = fresh_lab();
            let private = lab.path("private");
            std::fs::create_dir_all(&private).unwrap();
            std::fs::write(private.join("secret.txt"), format!("{SECRET}\n")).unwrap();
            git(&private, &["init", "-q"]);
            git(&private, &["add", "."]);
            git(&private, &["commit", "-qm", "private"]);
            let project = lab.path("project");
            std::fs::create_dir_all(&project).unwrap();
            std::fs::write(project.join("README"), "hi\n").unwrap();
            let dot_git = project.join(".git");
            match shape {
                "gitdir file" => std::fs::write(
                    &dot_git,
                    format!("gitdir: {}\n", private.join(".git").display()),
                )
                .unwrap(),
                "symlink" => std::os::unix::fs::symlink(private.join(".git"), &dot_git).unwrap(),
                _ => {
                    std::fs::create_dir_all(&dot_git).unwrap();
                    std::fs::write(
                        dot_git.join("commondir"),
                        format!("{}\n", private.join(".git").display()),
                    )
                    .unwrap();
                    std::fs::write(dot_git.join("HEAD"), "ref: refs/heads/main\n").unwrap();
                    std::fs::write(dot_git.join("gitdir"), format!("{}\n", dot_git.display()))
                        .unwrap();
                }
            }
            let out = ask_running(
                &lab,
                &project,
                who,
                "cat secret.txt; git show HEAD:secret.txt; ls; echo READ-DONE",
            );
            let said = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(out.status.success(), "{} {shape}: {said}", who.name());
            let events = session_events(&project);
            assert!(
                events.contains("READ-DONE"),
                "{} {shape}: {events}",
                who.name()
            );
            assert!(
                !events.contains(SECRET) && !said.contains(SECRET),
                "{} {shape}: the model read another repository",
                who.name()
            );
        }
    }
}

/// A real linked worktree (`git worktree add`) names the project back: its workspace is still
/// a private repository with the history, not a copy.
#[test]
fn a_real_linked_worktree_still_gets_its_history() {
    for who in Who::BOTH {
        let lab = fresh_lab();
        let main = lab.path("main");
        std::fs::create_dir_all(&main).unwrap();
        std::fs::write(main.join("README"), "hi\n").unwrap();
        std::fs::write(main.join(".gitignore"), "scripts/\n").unwrap();
        git(&main, &["init", "-q"]);
        git(&main, &["add", "."]);
        git(&main, &["commit", "-qm", "the-first-commit"]);
        let linked = lab.path("linked");
        git(
            &main,
            &[
                "worktree",
                "add",
                "-q",
                linked.to_str().unwrap(),
                "-b",
                "feature",
            ],
        );
        let out = ask_running(
            &lab,
            &linked,
            who,
            "git -c safe.directory='*' log --format=%s; echo LOG-DONE",
        );
        let said = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{}: {said}", who.name());
        let events = session_events(&linked);
        assert!(
            events.contains("the-first-commit") && events.contains("LOG-DONE"),
            "{}: {events}",
            who.name()
        );
    }
}
