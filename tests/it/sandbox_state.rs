//! What a hostile model can do to versus's own state and to the host through what versus keeps
//! for it (issue 21, items 1, 8, 9 and 12): the workspace's borrowed git objects, files too
//! large to hold, folders too deep to recurse into, and a flood of streamed text. Each test
//! plays the model through the real binary (a scripted demo model running bash in the
//! sandbox), as the test user and as an unprivileged one, and asserts the harm did not happen.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util;

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use util::users::{Who, give_away};

/// Runs the copy-on-write workspaces off (full checkouts), as kept workspaces are.
const FULL_CHECKOUT: (&str, &str) = ("VERSUS_COPY_ON_WRITE", "off");

/// A repository with history, a pack and loose objects; a home, config and temp folder of its
/// own; everything owned by whoever runs versus.
struct World {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    config: PathBuf,
    workspaces: PathBuf,
    who: Who,
}

/// git with a fixed identity, trusting folders another user owns (the unprivileged case).
fn git_out(dir: &Path, args: &[&str]) -> Output {
    Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args([
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(["-c", "safe.directory=*"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = git_out(dir, args);
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn world(who: Who) -> World {
    let tmp = tempfile::tempdir().unwrap();
    let top = tmp.path().canonicalize().unwrap();
    let root = top.join("project");
    let home = top.join("home");
    let config = top.join("config");
    let workspaces = top.join("tmp");
    for dir in [&root, &home, &config, &workspaces] {
        std::fs::create_dir_all(dir).unwrap();
    }
    let write = |rel: &str, text: &str| {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write(".gitignore", "scripts/\n");
    write("src/main.rs", "fn main() {}\n");
    git(&root, &["init", "-q"]);
    git(&root, &["add", "."]);
    git(&root, &["commit", "-qm", "first"]);
    // A pack, then loose objects on top: both kinds of file the model will attack.
    git(&root, &["gc", "-q"]);
    write("src/lib.rs", "pub fn f() {}\n");
    git(&root, &["add", "."]);
    git(&root, &["commit", "-qm", "second"]);
    std::fs::create_dir_all(root.join("scripts")).unwrap();
    give_away(&top, who);
    World {
        _tmp: tmp,
        root,
        home,
        config,
        workspaces,
        who,
    }
}

impl World {
    /// A demo model that runs each command with bash, one step each, then says "done".
    fn script(&self, name: &str, commands: &[&str]) -> String {
        let mut text = String::new();
        for command in commands {
            let step =
                serde_json::json!({"tools": [{"name": "bash", "args": {"command": command}}]});
            text.push_str(&step.to_string());
            text.push('\n');
        }
        text.push_str("{\"say\": \"done\"}\n");
        self.raw_script(name, &text)
    }

    /// A demo model from its JSON Lines.
    fn raw_script(&self, name: &str, text: &str) -> String {
        let path = self.root.join("scripts").join(name);
        std::fs::write(&path, text).unwrap();
        give_away(&path, self.who);
        format!("demo/scripts/{name}")
    }

    /// `versus ask` in the project as this world's user.
    fn ask(&self, model: &str, extra: &[&str], envs: &[(&str, &str)]) -> Output {
        self.versus()
            .envs(envs.iter().copied())
            .arg("-C")
            .arg(&self.root)
            .args(["ask", "do it", "-m", model])
            .args(extra)
            .output()
            .unwrap()
    }

    /// The binary as this world's user, with its home, config and temp folder.
    fn versus(&self) -> Command {
        let mut c = self.who.versus();
        c.env("XDG_CONFIG_HOME", &self.config)
            .env("XDG_STATE_HOME", self.home.join(".local/state"))
            .env("HOME", &self.home)
            .env("TMPDIR", &self.workspaces);
        c
    }

    /// Where this world's workspaces live.
    fn parent(&self) -> PathBuf {
        self.workspaces.join("versus-workspaces")
    }

    /// The folders versus left in the workspaces' parent.
    fn leftovers(&self) -> Vec<String> {
        std::fs::read_dir(self.parent())
            .map(|rd| {
                rd.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default()
    }
}

fn text(out: &Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Every file under `dir` with its bytes, by relative path.
fn files_under(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).unwrap().flatten() {
            let path = entry.path();
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                stack.push(path);
            } else {
                let rel = path.strip_prefix(dir).unwrap().display().to_string();
                out.insert(rel, std::fs::read(&path).unwrap_or_default());
            }
        }
    }
    out
}

/// (device, inode) of every regular file under `dir`, and those with more than one name.
fn inodes_under(dir: &Path) -> (BTreeSet<(u64, u64)>, Vec<String>) {
    let mut all = BTreeSet::new();
    let mut linked = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(meta) = std::fs::symlink_metadata(entry.path()) else {
                continue;
            };
            if meta.is_dir() {
                stack.push(entry.path());
            } else if meta.is_file() {
                all.insert((meta.dev(), meta.ino()));
                if meta.nlink() > 1 {
                    linked.push(entry.path().display().to_string());
                }
            }
        }
    }
    (all, linked)
}

/// Item 1: the workspace's repository borrows the user's objects (git alternates, mounted
/// read-only), it never holds hard links to them. A model makes every object file it can name
/// writable and overwrites and appends to it, then `git gc --prune=now` and `git repack -adf`:
/// the user's object files keep their bytes, `git fsck` passes, `git log` worked in the
/// workspace, and no file the model could reach shares an inode with the user's.
#[test]
fn a_model_cannot_rewrite_the_users_git_objects_through_its_workspace() {
    for who in Who::BOTH {
        for envs in [&[][..], &[FULL_CHECKOUT][..]] {
            let w = world(who);
            let objects = w.root.join(".git/objects");
            let before = files_under(&objects);
            assert!(before.keys().any(|k| k.starts_with("pack/")), "{before:?}");
            let model = w.script(
                "objects.jsonl",
                &[
                    "git log --format=%s > gitlog.txt",
                    // Every object folder the workspace's repository names, its own included.
                    "for d in .git/objects $(cat .git/objects/info/alternates); do \
                       echo \"links=$(find $d -type f -links +1 | wc -l)\" >> links.txt; \
                       find $d -type f | while read -r f; do \
                         chmod u+w \"$f\"; printf tail >> \"$f\"; printf garbage > \"$f\"; \
                       done; \
                     done 2>&1 | tail -3; echo attacked",
                    "git gc --prune=now 2>&1 | tail -2; git repack -adf 2>&1 | tail -2; \
                     git commit -qm mine --allow-empty 2>&1 | tail -1; echo repacked",
                ],
            );
            let out = w.ask(&model, &[], envs);
            let said = text(&out);
            assert!(out.status.success(), "{}: {said}", who.name());
            assert!(
                said.contains("+second\n+first"),
                "{}: git log failed in the workspace: {said}",
                who.name()
            );
            assert!(
                said.contains("+links=0\n+links=0\n"),
                "{}: a reachable object file has another name: {said}",
                who.name()
            );
            assert!(!said.contains("+links=1"), "{said}");
            assert_eq!(
                files_under(&objects),
                before,
                "{} {envs:?}: the user's objects changed",
                who.name()
            );
            let fsck = git_out(&w.root, &["fsck", "--strict", "--full"]);
            assert!(fsck.status.success(), "{}", text(&fsck));
            assert_eq!(
                git(&w.root, &["log", "--format=%s"]),
                "second\nfirst\n",
                "the user's history changed"
            );
            assert!(w.leftovers().is_empty(), "{:?}", w.leftovers());
        }
    }
}

/// Item 1, seen from the host: a kept workspace (a full checkout) holds no file with a second
/// name, and none of its files is one of the project's.
#[test]
fn no_file_of_a_workspace_is_a_hard_link_to_a_project_file() {
    for who in Who::BOTH {
        let w = world(who);
        let model = w.script("keep.jsonl", &["git log -1 --format=%s > head.txt"]);
        let out = w.ask(&model, &["--keep-workspaces"], &[]);
        assert!(out.status.success(), "{}", text(&out));
        assert!(text(&out).contains("+second"), "{}", text(&out));
        let (project, _) = inodes_under(&w.root);
        let kept = w.leftovers();
        assert_eq!(kept.len(), 1, "{kept:?}");
        if who.drops() {
            let owner = std::fs::metadata(w.parent().join(&kept[0])).unwrap().uid();
            assert_eq!(
                owner,
                util::users::NOBODY,
                "versus did not run unprivileged"
            );
        }
        let (workspace, linked) = inodes_under(&w.parent());
        assert!(
            linked.is_empty(),
            "{}: files with several names: {linked:?}",
            who.name()
        );
        let shared: Vec<_> = workspace.intersection(&project).collect();
        assert!(shared.is_empty(), "shared with the project: {shared:?}");
        let out = w.versus().arg("clean").output().unwrap();
        assert!(out.status.success(), "{}", text(&out));
        assert!(w.leftovers().is_empty(), "{:?}", w.leftovers());
    }
}
