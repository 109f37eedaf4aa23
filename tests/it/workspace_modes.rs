//! Workspaces in worktree, copy and overlay modes, driven through the tool registry exactly as
//! the agent loop will: `ToolRegistry::builtin().dispatch(name, args, &ToolContext::new(view))`.
//! Projects are real temporary git repositories (made with the `git` CLI) and plain folders.
//! Each test makes its workspaces under a temporary parent folder of its own: the default one
//! (`$TMPDIR/versus-workspaces-UID`, which versus keeps) would be left behind by a test run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util;

use util::git;

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use versus::exec::SandboxSettings;
use versus::tools::{ToolContext, ToolRegistry};
use versus::workspace::{
    Base, Isolation, SETUP_TIMEOUT, Workspace, WorkspaceError, cleanup_leftovers,
    cleanup_leftovers_in,
};

const ALL_MODES: [Isolation; 3] = [Isolation::Worktree, Isolation::Copy, Isolation::Overlay];

fn write(root: &Path, rel: &str, content: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, content).unwrap();
}

/// A repository with every kind of user state: committed, modified, staged, untracked, deleted,
/// an executable script, and an ignored build folder.
fn repo() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    git(&root, &["init", "-q"]);
    write(&root, ".gitignore", "target/\n");
    write(&root, "src/lib.rs", "pub fn a() {}\n");
    write(&root, "tracked.txt", "v1\n");
    write(&root, "deleted.txt", "bye\n");
    write(&root, "run.sh", "#!/bin/sh\necho ran\n");
    fs::set_permissions(root.join("run.sh"), fs::Permissions::from_mode(0o755)).unwrap();
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-q", "-m", "init"]);
    write(&root, "tracked.txt", "v2 user edit\n");
    write(&root, "staged.txt", "staged\n");
    git(&root, &["add", "staged.txt"]);
    write(&root, "untracked.txt", "untracked\n");
    fs::remove_file(root.join("deleted.txt")).unwrap();
    write(&root, "target/debug/big.bin", "build output\n");
    cleanup_leftovers(&root).unwrap();
    (tmp, root)
}

/// A plain folder (no git) with the same kind of content.
fn plain() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    write(&root, ".gitignore", "target/\n");
    write(&root, "tracked.txt", "v2 user edit\n");
    write(&root, "untracked.txt", "untracked\n");
    write(&root, "target/debug/big.bin", "build output\n");
    (tmp, root)
}

/// Every file under `root` (ignored ones included, `.git` excluded) -> (content, mode).
fn snapshot(root: &Path) -> BTreeMap<String, (Vec<u8>, u32)> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, (Vec<u8>, u32)>) {
        for entry in fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            if entry.file_name() == ".git" {
                continue;
            }
            let meta = fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                walk(root, &path, out);
            } else {
                let rel = path
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                out.insert(rel, (fs::read(&path).unwrap(), meta.permissions().mode()));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// Runs one tool call through the registry; returns (text, is_error).
async fn call(ws: &Workspace, tool: &str, call_id: &str, args: Value) -> (String, bool) {
    let mut ctx = ToolContext::new(ws.view());
    ctx.call_id = call_id.to_string();
    let out = ToolRegistry::builtin()
        .dispatch(tool, &args.to_string(), &ctx)
        .await;
    (out.text, out.is_error)
}

async fn ok(ws: &Workspace, tool: &str, args: Value) -> String {
    let (text, is_error) = call(ws, tool, "", args.clone()).await;
    assert!(!is_error, "{tool} {args} failed: {text}");
    text
}

fn worktree_names(root: &Path) -> Vec<String> {
    match fs::read_dir(root.join(".git/worktrees")) {
        Ok(rd) => rd
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// Writes, edits, reads, lists and searches through the tools in one workspace.
async fn exercise(ws: &Workspace, mode: Isolation) {
    ok(
        ws,
        "write_file",
        json!({"path": "notes/new.txt", "content": "alpha\n"}),
    )
    .await;
    assert!(
        ok(ws, "read_file", json!({"path": "notes/new.txt"}))
            .await
            .contains("alpha")
    );
    // Edit after write.
    let args = json!({"path": "notes/new.txt", "old_string": "alpha", "new_string": "beta"});
    ok(ws, "edit_file", args).await;
    // Two edits in a row on a user-modified file: the second builds on the first.
    let args = json!({"path": "tracked.txt", "old_string": "v2", "new_string": "v3"});
    ok(ws, "edit_file", args).await;
    let args = json!({"path": "tracked.txt", "old_string": "v3 user", "new_string": "v4 model"});
    ok(ws, "edit_file", args).await;
    let read = ok(ws, "read_file", json!({"path": "tracked.txt"})).await;
    assert!(read.contains("v4 model edit"), "{mode:?}: {read}");
    let read = ok(ws, "read_file", json!({"path": "notes/new.txt"})).await;
    assert!(
        read.contains("beta") && !read.contains("alpha"),
        "{mode:?}: {read}"
    );

    let listed = ok(ws, "list_directory", json!({"path": "notes"})).await;
    assert!(listed.contains("new.txt"), "{mode:?}: {listed}");
    let listed = ok(ws, "list_directory", json!({})).await;
    assert!(listed.contains("notes"), "{mode:?}: {listed}");
    let found = ok(ws, "search_files", json!({"pattern": "**/new.txt"})).await;
    assert!(found.contains("notes/new.txt"), "{mode:?}: {found}");
    let found = ok(ws, "search_code", json!({"pattern": "beta"})).await;
    assert!(found.contains("notes/new.txt"), "{mode:?}: {found}");
    let found = ok(ws, "search_code", json!({"pattern": "v4 model"})).await;
    assert!(found.contains("tracked.txt"), "{mode:?}: {found}");

    if mode != Isolation::Overlay {
        // Bash runs in the workspace and sees the model's edits.
        let out = ok(
            ws,
            "bash",
            json!({"command": "cat notes/new.txt tracked.txt"}),
        )
        .await;
        assert!(
            out.contains("beta") && out.contains("v4 model edit"),
            "{mode:?}: {out}"
        );
        let out = ok(ws, "bash", json!({"command": "./run.sh"})).await;
        assert!(out.contains("ran"), "{mode:?}: {out}");
    }
}

#[tokio::test]
async fn every_mode_sees_its_own_writes_and_leaves_the_user_tree_alone() {
    let parent = tempfile::tempdir().unwrap();
    let (_tmp, root) = repo();
    let before = snapshot(&root);
    let base = Base::capture(&root).unwrap();
    for mode in ALL_MODES {
        let ws = Workspace::create_in(parent.path(), mode, &base, "model-a").unwrap();
        assert_eq!(ws.mode(), mode);
        exercise(&ws, mode).await;
        assert_eq!(snapshot(&root), before, "{mode:?} changed the user's tree");
        let tools: Vec<String> = ws.writes().into_iter().map(|w| w.origin.tool).collect();
        assert_eq!(tools, ["write_file", "edit_file", "edit_file", "edit_file"]);
    }
    assert_eq!(snapshot(&root), before);
}

#[tokio::test]
async fn plain_folders_work_in_copy_and_overlay_and_worktree_falls_back_to_copy() {
    let parent = tempfile::tempdir().unwrap();
    let (_tmp, root) = plain();
    write(&root, "run.sh", "#!/bin/sh\necho ran\n");
    fs::set_permissions(root.join("run.sh"), fs::Permissions::from_mode(0o755)).unwrap();
    let before = snapshot(&root);
    let base = Base::capture(&root).unwrap();
    assert_eq!(Isolation::default_for(&root), Isolation::Copy);
    for mode in ALL_MODES {
        let ws = Workspace::create_in(parent.path(), mode, &base, "plain").unwrap();
        let expected = if mode == Isolation::Overlay {
            mode
        } else {
            Isolation::Copy
        };
        assert_eq!(ws.mode(), expected);
        exercise(&ws, ws.mode()).await;
        assert_eq!(snapshot(&root), before, "{mode:?} changed the user's tree");
    }
}

#[tokio::test]
async fn a_repository_without_commits_falls_back_to_copy() {
    let parent = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    git(&root, &["init", "-q"]);
    write(&root, "a.txt", "a\n");
    let base = Base::capture(&root).unwrap();
    let ws = Workspace::create_in(parent.path(), Isolation::Worktree, &base, "unborn").unwrap();
    assert_eq!(ws.mode(), Isolation::Copy);
    assert!(
        ok(&ws, "read_file", json!({"path": "a.txt"}))
            .await
            .contains('a')
    );
    assert!(worktree_names(&root).is_empty());
}

#[tokio::test]
async fn two_workspaces_never_see_each_others_edits() {
    let parent = tempfile::tempdir().unwrap();
    let (_tmp, root) = repo();
    let base = Base::capture(&root).unwrap();
    for mode in ALL_MODES {
        let a = Workspace::create_in(parent.path(), mode, &base, "a").unwrap();
        let b = Workspace::create_in(parent.path(), mode, &base, "b").unwrap();
        let edit = |to: &str| json!({"path": "tracked.txt", "old_string": "v2", "new_string": to});
        ok(&a, "edit_file", edit("from A")).await;
        ok(&b, "edit_file", edit("from B")).await;
        ok(
            &a,
            "write_file",
            json!({"path": "only_a.txt", "content": "a"}),
        )
        .await;
        let ra = ok(&a, "read_file", json!({"path": "tracked.txt"})).await;
        let rb = ok(&b, "read_file", json!({"path": "tracked.txt"})).await;
        assert!(
            ra.contains("from A") && !ra.contains("from B"),
            "{mode:?}: {ra}"
        );
        assert!(
            rb.contains("from B") && !rb.contains("from A"),
            "{mode:?}: {rb}"
        );
        let (text, is_error) = call(&b, "read_file", "", json!({"path": "only_a.txt"})).await;
        assert!(is_error, "{mode:?}: B sees A's file: {text}");
        let found = ok(&b, "search_code", json!({"pattern": "from A"})).await;
        assert!(!found.contains("tracked.txt"), "{mode:?}: {found}");
    }
    assert_eq!(
        fs::read_to_string(root.join("tracked.txt")).unwrap(),
        "v2 user edit\n"
    );
}

#[tokio::test]
async fn the_users_uncommitted_state_is_in_every_workspace_and_build_folders_are_not() {
    let (_tmp, root) = repo();
    // This test checks the default placement; versus keeps that folder, the test removes it
    // if it made it (and nothing else is in it).
    let default_parent = versus::workspace::default_parent();
    let made_default_parent = !default_parent.exists();
    let base = Base::capture(&root).unwrap();
    assert!(!base.contains("target/debug/big.bin"));
    assert!(!base.contains("deleted.txt"));
    for mode in ALL_MODES {
        let ws = Workspace::create(mode, &base, "state").unwrap();
        for (path, text) in [
            ("tracked.txt", "v2 user edit"),
            ("staged.txt", "staged"),
            ("untracked.txt", "untracked"),
            ("src/lib.rs", "pub fn a"),
        ] {
            let read = ok(&ws, "read_file", json!({"path": path})).await;
            assert!(read.contains(text), "{mode:?} {path}: {read}");
        }
        let (text, is_error) = call(&ws, "read_file", "", json!({"path": "deleted.txt"})).await;
        assert!(is_error, "{mode:?}: deleted.txt is visible: {text}");
        if mode != Isolation::Overlay {
            assert!(
                !ws.root().join("target").exists(),
                "{mode:?} copied target/"
            );
            assert!(!ws.root().join("deleted.txt").exists());
            let mode_bits = fs::metadata(ws.root().join("run.sh"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode_bits & 0o111, 0o111, "{mode:?}: run.sh lost its x bit");
            // The workspace starts exactly equal to the base.
            assert_eq!(base.diff_dir(ws.root()).unwrap(), vec![], "{mode:?}");
            assert!(ws.root().starts_with(&default_parent));
        }
    }
    if made_default_parent {
        let _ = fs::remove_dir(&default_parent);
    }
}

#[tokio::test]
async fn a_project_in_a_subfolder_of_its_repository_gets_a_worktree_rooted_there() {
    let parent = tempfile::tempdir().unwrap();
    let (_tmp, root) = repo();
    write(&root, "pkg/inner.txt", "inner v1\n");
    git(&root, &["add", "pkg/inner.txt"]);
    git(&root, &["commit", "-q", "-m", "pkg"]);
    write(&root, "pkg/inner.txt", "inner v2\n");
    let base = Base::capture(&root.join("pkg")).unwrap();
    let ws = Workspace::create_in(parent.path(), Isolation::Worktree, &base, "sub").unwrap();
    assert_eq!(ws.mode(), Isolation::Worktree);
    assert!(ws.root().ends_with("pkg"));
    let read = ok(&ws, "read_file", json!({"path": "inner.txt"})).await;
    assert!(read.contains("inner v2"), "{read}");
    assert_eq!(base.diff_dir(ws.root()).unwrap(), vec![]);
}

#[test]
fn workspaces_inside_a_repository_that_ignores_everything_still_see_their_files() {
    // The workspace parent lies inside a repository whose `.gitignore` says `*` (a dotfiles
    // repository in the home folder, where the default parent lives): none of that is the
    // project's. The scan that finds bash's changes reads the rules from the workspace's tree
    // down, as the capture reads them from the project's repository down.
    let (_tmp, root) = repo();
    let base = Base::capture(&root).unwrap();
    let home = tempfile::tempdir().unwrap();
    let home = home.path().canonicalize().unwrap();
    git(&home, &["init", "-q"]);
    write(&home, ".gitignore", "*\n");
    for mode in [Isolation::Worktree, Isolation::Copy] {
        let ws = Workspace::create_in(&home.join(".cache/ws"), mode, &base, "dot").unwrap();
        assert_eq!(ws.mode(), mode);
        assert_eq!(base.diff_dir(ws.root()).unwrap(), vec![], "{mode:?}");
        write(ws.root(), "made_by_bash.txt", "new\n");
        let changes = base.diff_dir(ws.root()).unwrap();
        assert_eq!(changes.len(), 1, "{mode:?}: {changes:?}");
        assert_eq!(changes[0].path(), "made_by_bash.txt");
    }
}

#[test]
fn a_project_its_repository_ignores_is_copied_whole() {
    let parent = tempfile::tempdir().unwrap();
    // ~/scratch/proj under a dotfiles repository at home that ignores `*`: the capture takes
    // the project under its own rules, and the workspace must hold the same files (a checkout
    // of the home repository would hold none of them, and every file would look deleted).
    let home = tempfile::tempdir().unwrap();
    let home = home.path().canonicalize().unwrap();
    git(&home, &["init", "-q"]);
    // Folders only (`scratch/`): the checkout must be refused by the same rules the capture
    // applies, which see that the project's folder lies in an ignored one.
    write(&home, ".gitignore", "scratch/\n");
    write(&home, ".bashrc", "alias ll='ls -l'\n");
    git(&home, &["add", "-f", ".gitignore", ".bashrc"]);
    git(&home, &["commit", "-q", "-m", "dotfiles"]);
    let project = home.join("scratch/proj");
    write(&project, "main.rs", "fn main() {}\n");
    write(&project, ".gitignore", "*.log\n");
    write(&project, "debug.log", "noise\n");
    let base = Base::capture(&project).unwrap();
    let keys: Vec<&str> = base.entries().keys().map(String::as_str).collect();
    assert_eq!(keys, vec![".gitignore", "main.rs"]);
    let ws = Workspace::create_in(parent.path(), Isolation::Worktree, &base, "ignored").unwrap();
    assert_eq!(
        ws.mode(),
        Isolation::Copy,
        "a checkout of the home repository"
    );
    assert_eq!(base.diff_dir(ws.root()).unwrap(), vec![]);
    assert!(ws.root().join("main.rs").is_file());
}

#[test]
fn a_worktree_workspace_gets_no_git_template_files() {
    let parent = tempfile::tempdir().unwrap();
    // git's template folder holds hook samples and, when the user configured
    // `init.templateDir`, possibly real hooks: none of it belongs in a model's repository (a
    // `git commit` there would run them), and copying it was most of a workspace's set-up CPU.
    let (_tmp, root) = repo();
    let base = Base::capture(&root).unwrap();
    let ws = Workspace::create_in(parent.path(), Isolation::Worktree, &base, "tpl").unwrap();
    assert_eq!(ws.mode(), Isolation::Worktree);
    let git_dir = ws.root().join(".git");
    assert!(git_dir.join("HEAD").is_file(), "not a repository");
    // libgit2's built-in skeleton only: no hook samples, no `branches` folder.
    let hooks: Vec<String> = std::fs::read_dir(git_dir.join("hooks"))
        .map(|dir| {
            dir.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    assert!(
        hooks.iter().all(|name| name == "README.sample"),
        "hooks copied from git's templates: {hooks:?}"
    );
    assert!(!git_dir.join("branches").exists());
    // The user's own exclude rules still come along.
    assert!(git_dir.join("info/exclude").is_file());
}

#[tokio::test]
async fn writes_are_recorded_in_order_and_bash_changes_are_found() {
    let parent = tempfile::tempdir().unwrap();
    let (_tmp, root) = repo();
    let base = Base::capture(&root).unwrap();
    for mode in [Isolation::Worktree, Isolation::Copy] {
        let ws = Workspace::create_in(parent.path(), mode, &base, "rec").unwrap();
        let args = json!({"path": "a.txt", "content": "one\n"});
        assert!(!call(&ws, "write_file", "call-1", args).await.1);
        let args = json!({"path": "a.txt", "old_string": "one", "new_string": "two"});
        assert!(!call(&ws, "edit_file", "call-2", args).await.1);
        let cmd = "echo x > new.txt && rm untracked.txt && echo three > a.txt";
        assert!(!call(&ws, "bash", "call-3", json!({"command": cmd})).await.1);

        let writes = ws.writes();
        let seen: Vec<(u64, &str, &str, &str)> = writes
            .iter()
            .map(|w| {
                (
                    w.seq,
                    w.path.as_str(),
                    w.origin.tool.as_str(),
                    w.origin.call_id.as_str(),
                )
            })
            .collect();
        assert_eq!(
            seen,
            [
                (0, "a.txt", "write_file", "call-1"),
                (1, "a.txt", "edit_file", "call-2")
            ]
        );
        assert_eq!(writes[1].content.as_deref().unwrap().as_slice(), b"two\n");

        let found = ws.bash_changes(&base).unwrap();
        let got: Vec<(&str, Option<&[u8]>)> = found
            .iter()
            .map(|w| (w.path.as_str(), w.content.as_deref().map(Vec::as_slice)))
            .collect();
        assert_eq!(
            got,
            [
                ("a.txt", Some(&b"three\n"[..])),
                ("new.txt", Some(&b"x\n"[..])),
                ("untracked.txt", None)
            ],
            "{mode:?}"
        );
        assert!(found.iter().all(|w| w.origin.tool == "bash"));
        assert_eq!(ws.writes().len(), 5);
    }
}

#[tokio::test]
async fn drop_removes_the_workspace_and_keep_preserves_it() {
    let parent = tempfile::tempdir().unwrap();
    let (_tmp, root) = repo();
    let base = Base::capture(&root).unwrap();
    let ws = Workspace::create_in(parent.path(), Isolation::Worktree, &base, "dropme").unwrap();
    let folder = ws.folder().unwrap().to_path_buf();
    assert!(folder.exists());
    assert!(
        worktree_names(&root).is_empty(),
        "nothing is registered in the user's repository"
    );
    drop(ws);
    assert!(!folder.exists());
    assert!(worktree_names(&root).is_empty());

    let copy = Workspace::create_in(parent.path(), Isolation::Copy, &base, "dropme").unwrap();
    let copy_folder = copy.folder().unwrap().to_path_buf();
    drop(copy);
    assert!(!copy_folder.exists());

    let mut kept =
        Workspace::create_in(parent.path(), Isolation::Worktree, &base, "keepme").unwrap();
    let folder = kept.folder().unwrap().to_path_buf();
    kept.keep();
    drop(kept);
    assert!(folder.join("tree/tracked.txt").exists());
    assert!(
        worktree_names(&root).is_empty(),
        "nothing is registered in the user's repository"
    );
    // Tidy up: mark it as left by a dead process and let cleanup remove it.
    let parent = folder.parent().unwrap().to_path_buf();
    orphan(&folder);
    cleanup_leftovers_in(&parent, &root).unwrap();
    assert!(!folder.exists());
    assert!(worktree_names(&root).is_empty());
}

/// Rewrites a workspace marker so its owner is a process that has exited.
fn orphan(folder: &Path) {
    let mut child = Command::new("true").spawn().unwrap();
    let dead_pid = child.id();
    child.wait().unwrap();
    let marker = folder.join("versus-workspace.json");
    let mut json: Value = serde_json::from_slice(&fs::read(&marker).unwrap()).unwrap();
    json["pid"] = json!(dead_pid);
    json["kept"] = json!(false);
    fs::write(&marker, serde_json::to_vec(&json).unwrap()).unwrap();
}

#[tokio::test]
async fn cleanup_removes_dead_owners_workspaces_and_registrations_only() {
    let (_tmp, root) = repo();
    let parent_tmp = tempfile::tempdir().unwrap();
    let parent = parent_tmp.path();
    let base = Base::capture(&root).unwrap();
    let mut crashed = Workspace::create_in(parent, Isolation::Worktree, &base, "crashed").unwrap();
    let mut crashed_copy = Workspace::create_in(parent, Isolation::Copy, &base, "crashed").unwrap();
    let live = Workspace::create_in(parent, Isolation::Worktree, &base, "live").unwrap();
    crashed.keep();
    crashed_copy.keep();
    let crashed_folder = crashed.folder().unwrap().to_path_buf();
    let copy_folder = crashed_copy.folder().unwrap().to_path_buf();
    drop(crashed);
    drop(crashed_copy);
    orphan(&crashed_folder);
    orphan(&copy_folder);
    // A folder without a marker is not ours to judge.
    fs::create_dir_all(parent.join("stranger")).unwrap();
    assert!(
        worktree_names(&root).is_empty(),
        "nothing is registered in the user's repository"
    );

    let removed = cleanup_leftovers_in(parent, &root).unwrap();
    assert_eq!(removed, 2);
    assert!(!crashed_folder.exists());
    assert!(!copy_folder.exists());
    assert!(parent.join("stranger").exists());
    assert!(live.folder().unwrap().exists());
    assert!(
        worktree_names(&root).is_empty(),
        "nothing is registered in the user's repository"
    );
    let out = ok(&live, "read_file", json!({"path": "tracked.txt"})).await;
    assert!(out.contains("v2 user edit"));
    drop(live);
    assert!(worktree_names(&root).is_empty());
}

#[tokio::test]
async fn setup_runs_once_in_the_workspace_and_a_failure_is_a_clear_error() {
    let parent = tempfile::tempdir().unwrap();
    let (_tmp, root) = repo();
    let before = snapshot(&root);
    let base = Base::capture(&root).unwrap();
    let ws = Workspace::create_in(parent.path(), Isolation::Copy, &base, "setup").unwrap();
    let sandbox = ws.sandbox(&SandboxSettings::default());
    let never = CancellationToken::new();
    let out = ws
        .run_setup(
            "echo prepared > setup.txt && echo done",
            &sandbox,
            SETUP_TIMEOUT,
            &never,
        )
        .await
        .unwrap();
    assert!(out.contains("done"));
    assert!(
        ok(&ws, "read_file", json!({"path": "setup.txt"}))
            .await
            .contains("prepared")
    );
    assert_eq!(snapshot(&root), before);

    let err = ws
        .run_setup(
            "echo about to fail; exit 3",
            &sandbox,
            SETUP_TIMEOUT,
            &never,
        )
        .await
        .unwrap_err();
    assert!(matches!(err, WorkspaceError::Setup { .. }));
    let text = err.to_string();
    assert!(text.contains("`echo about to fail; exit 3`"), "{text}");
    assert!(text.contains("exit code 3"), "{text}");
    assert!(text.contains("about to fail"), "{text}");

    // A hanging setup is killed with its background children when its time is up.
    // Unique among the test modules, which share one process id in the one test binary.
    let marker = format!("303.{}", std::process::id());
    let err = ws
        .run_setup(
            &format!("echo waiting; setsid sleep {marker} & wait"),
            &sandbox,
            std::time::Duration::from_millis(500),
            &never,
        )
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("timed out after 0.5 s"), "{text}");
    assert!(text.contains("waiting"), "{text}");
    assert!(
        util::command_gone(&["sleep", &marker]),
        "the setup's background child survived"
    );
}

/// `versus ask --pick` of a scripted model whose one bash call changes many files (enough for
/// the change scan's reads and the change set's build to be split between threads), each in
/// its own way, plus a deletion and a new file: each file gets exactly its own new content,
/// and `versus rewind` gives back the tree byte for byte.
#[test]
fn a_pick_of_a_bash_change_to_many_files_applies_each_its_own_content_and_rewinds_exactly() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap().join("project");
    let temp = tmp.path().join("tmp");
    let config = tmp.path().join("config");
    fs::create_dir_all(&temp).unwrap();
    let n = 300;
    for i in 0..n {
        write(
            &root,
            &format!("src/d{}/f{i:03}.txt", i % 9),
            &format!("line one of {i}\nline two\n{}\n", "y".repeat(i % 41)),
        );
    }
    write(&root, ".gitignore", "scripts/\n");
    git(&root, &["init", "-q"]);
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-q", "-m", "init"]);
    // Each file gets a line naming it, repeated by its number so the sizes differ.
    let command = "for f in src/d*/f*.txt; do n=${f##*/f}; n=$((10#${n%.txt})); \
                   for k in $(seq 0 $((n % 5))); do echo \"changed $f\" >> \"$f\"; done; done; \
                   rm src/d0/f000.txt; echo fresh > src/new.txt";
    let step = json!({"tools": [{"name": "bash", "args": {"command": command}}]});
    write(
        &root,
        "scripts/many.jsonl",
        &format!("{step}\n{{\"say\": \"done\"}}\n"),
    );
    let model = "demo/scripts/many.jsonl";
    let before = util::tree_state(&root);
    let run = |args: &[&str]| {
        let out = util::versus()
            .arg("-C")
            .arg(&root)
            .args(args)
            .env("TMPDIR", &temp)
            .env("XDG_CONFIG_HOME", &config)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "versus {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    run(&["ask", "-q", "-m", model, "--pick", model, "change them"]);
    for i in 1..n {
        let rel = format!("src/d{}/f{i:03}.txt", i % 9);
        let mut expected = format!("line one of {i}\nline two\n{}\n", "y".repeat(i % 41));
        for _ in 0..=(i % 5) {
            expected.push_str(&format!("changed {rel}\n"));
        }
        assert_eq!(fs::read_to_string(root.join(&rel)).unwrap(), expected);
    }
    assert!(!root.join("src/d0/f000.txt").exists());
    assert_eq!(
        fs::read_to_string(root.join("src/new.txt")).unwrap(),
        "fresh\n"
    );
    run(&["rewind", "--yes"]);
    assert_eq!(util::tree_state(&root), before);
}
