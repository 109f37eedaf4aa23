//! Change sets and composition on real workspaces: models write through the real tools (the
//! registry, exactly as the agent loop calls them) in worktree and copy workspaces of temporary
//! git repositories and plain folders; their change sets are composed and applied with the
//! apply engine, and the bytes on disk are compared with what was picked.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};
use versus::apply::{ApplyEngine, ComposeError, Selection, compose, journal};
use versus::tools::{ToolContext, ToolRegistry};
use versus::workspace::changeset::{BaseReader, LineKind};
use versus::workspace::{
    Base, ChangeKind, ChangeSet, FileWrite, Isolation, Workspace, WriteOrigin,
};

/// A 30-line source file: changes at lines 3, 15 and 27 are three separate hunks.
fn source() -> String {
    (1..=30).map(|i| format!("fn f{i}() {{}}\n")).collect()
}

/// A project (git repository or plain folder) plus folders for workspaces and the session.
struct Project {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    parent: PathBuf,
    session: PathBuf,
}

impl Project {
    fn new(git: bool) -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let top = tmp.path().canonicalize().unwrap();
        let root = top.join("project");
        fs::create_dir_all(&root).unwrap();
        let p = Self {
            _tmp: tmp,
            root,
            parent: top.join("workspaces"),
            session: top.join("session"),
        };
        p.write("src/lib.rs", &source());
        p.write("docs/notes.md", "# Notes\n\nnothing yet\n");
        p.write("run.sh", "#!/bin/sh\necho run\n");
        fs::set_permissions(p.root.join("run.sh"), fs::Permissions::from_mode(0o755)).unwrap();
        p.write("old.txt", "old\n");
        if git {
            p.git(&["init", "-q"]);
            p.git(&["add", "-A"]);
            p.git(&["commit", "-q", "-m", "init"]);
            // Uncommitted state is part of the base too.
            p.write("docs/notes.md", "# Notes\n\nuncommitted\n");
            p.write("untracked.txt", "u\n");
        }
        p
    }

    fn git(&self, args: &[&str]) {
        let out = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args([
                "-c",
                "commit.gpgsign=false",
                "-c",
                "init.defaultBranch=main",
            ])
            .args(args)
            .current_dir(&self.root)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
    }

    fn write(&self, rel: &str, content: &str) {
        let p = self.root.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, content).unwrap();
    }

    fn read(&self, rel: &str) -> String {
        fs::read_to_string(self.root.join(rel)).unwrap()
    }

    fn workspace(&self, base: &Base, label: &str) -> Workspace {
        let mode = Isolation::default_for(&self.root);
        Workspace::create_in(&self.parent, mode, base, label).unwrap()
    }

    fn engine(&self) -> ApplyEngine {
        ApplyEngine::new(&self.root, &self.session).unwrap()
    }

    /// Every file under the root except `.git`: path -> (bytes, mode).
    fn tree(&self) -> BTreeMap<String, (Vec<u8>, u32)> {
        fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, (Vec<u8>, u32)>) {
            for entry in fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                let rel = path
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                // versus's own folder (the project lock lives there) is not the user's tree.
                if rel == ".git" || rel == ".versus" {
                    continue;
                }
                let meta = fs::symlink_metadata(&path).unwrap();
                if meta.is_dir() {
                    out.insert(format!("{rel}/"), (Vec::new(), 0));
                    walk(root, &path, out);
                } else {
                    let mode = meta.permissions().mode() & 0o7777;
                    out.insert(rel, (fs::read(&path).unwrap(), mode));
                }
            }
        }
        let mut out = BTreeMap::new();
        walk(&self.root, &self.root, &mut out);
        out
    }
}

/// Runs one tool call through the registry in `ws`; fails the test on an error result.
async fn tool(ws: &Workspace, name: &str, call_id: &str, args: Value) -> String {
    let mut ctx = ToolContext::new(ws.view());
    ctx.call_id = call_id.to_string();
    let out = ToolRegistry::builtin()
        .dispatch(name, &args.to_string(), &ctx)
        .await;
    assert!(!out.is_error, "{name} {args} failed: {}", out.text);
    out.text
}

async fn edit(ws: &Workspace, call_id: &str, path: &str, old: &str, new: &str) {
    let args = json!({"path": path, "old_string": old, "new_string": new});
    tool(ws, "edit_file", call_id, args).await;
}

#[tokio::test]
async fn hunks_1_and_3_of_model_a_and_model_bs_other_file_give_exactly_those_changes() {
    for git in [true, false] {
        let p = Project::new(git);
        let base = Base::capture(&p.root).unwrap();
        let before = p.tree();
        let a = p.workspace(&base, "model-a");
        let b = p.workspace(&base, "model-b");
        edit(&a, "a1", "src/lib.rs", "fn f3() {}", "fn f3() { one() }").await;
        edit(&a, "a2", "src/lib.rs", "fn f15() {}", "fn f15() { two() }").await;
        edit(
            &a,
            "a3",
            "src/lib.rs",
            "fn f27() {}\n",
            "fn f27() {}\nfn extra() {}\n",
        )
        .await;
        edit(&a, "a4", "docs/notes.md", "# Notes", "# Notes by A").await;
        let notes_b = "# Notes\n\nwritten by B\n";
        let args = json!({"path": "docs/notes.md", "content": notes_b});
        tool(&b, "write_file", "b1", args).await;
        edit(&b, "b2", "src/lib.rs", "fn f15() {}", "fn f15() { b() }").await;
        assert_eq!(
            p.tree(),
            before,
            "nothing reaches the user's tree during the run"
        );

        let sets = [
            ChangeSet::from_workspace("model-a", &base, &a).unwrap(),
            ChangeSet::from_workspace("model-b", &base, &b).unwrap(),
        ];
        let lib = sets[0].file("src/lib.rs").unwrap();
        assert_eq!(lib.hunks.len(), 3);
        assert_eq!(sets[0].summary(), "2 files, +4 -3");
        let selection = Selection::new()
            .hunk("model-a", "src/lib.rs", &lib.hunks[0].id)
            .hunk("model-a", "src/lib.rs", &lib.hunks[2].id)
            .file("model-b", "docs/notes.md");
        let plan = compose(&sets, &selection, "pick hunks").unwrap();
        assert_eq!(plan.models, vec!["model-a", "model-b"]);
        assert_eq!(plan.writes.len(), 2);
        assert_eq!(plan.hunks.len(), 3, "{:?}", plan.hunks);
        let report = p.engine().apply(&plan, &BTreeMap::new()).unwrap();
        assert_eq!(report.written(), vec!["docs/notes.md", "src/lib.rs"]);

        let mut expected = before.clone();
        let lib_expected = source()
            .replace("fn f3() {}", "fn f3() { one() }")
            .replace("fn f27() {}\n", "fn f27() {}\nfn extra() {}\n");
        expected.get_mut("src/lib.rs").unwrap().0 = lib_expected.into_bytes();
        expected.get_mut("docs/notes.md").unwrap().0 = notes_b.as_bytes().to_vec();
        assert_eq!(p.tree(), expected, "git={git}: exactly the picked changes");

        let journaled = journal::read(&p.session).unwrap();
        match &journaled[0] {
            journal::Record::Begin { models, hunks, .. } => {
                assert_eq!(models, &plan.models);
                assert!(hunks.iter().any(|h| h.starts_with("model-a:src/lib.rs#")));
            }
            other => panic!("expected begin, got {other:?}"),
        }
        p.engine().rewind(false).unwrap();
        assert_eq!(p.tree(), before, "git={git}: rewind restores everything");
    }
}

#[tokio::test]
async fn overlapping_hunks_from_two_models_conflict_before_anything_is_written() {
    let p = Project::new(true);
    let base = Base::capture(&p.root).unwrap();
    let before = p.tree();
    let a = p.workspace(&base, "a");
    let b = p.workspace(&base, "b");
    edit(
        &a,
        "a1",
        "src/lib.rs",
        "fn f10() {}\nfn f11() {}",
        "fn ten_eleven() {}",
    )
    .await;
    edit(&b, "b1", "src/lib.rs", "fn f11() {}", "fn f11() { b() }").await;
    edit(&b, "b2", "src/lib.rs", "fn f25() {}", "fn f25() { b() }").await;
    let sets = [
        ChangeSet::from_workspace("a", &base, &a).unwrap(),
        ChangeSet::from_workspace("b", &base, &b).unwrap(),
    ];
    let b_lib = sets[1].file("src/lib.rs").unwrap();
    let selection = Selection::new()
        .change_set("a")
        .hunk("b", "src/lib.rs", &b_lib.hunks[0].id)
        .hunk("b", "src/lib.rs", &b_lib.hunks[1].id);
    let err = compose(&sets, &selection, "t").unwrap_err();
    let ComposeError::Conflicts(conflicts) = &err else {
        panic!("expected conflicts, got {err:?}");
    };
    assert_eq!(
        conflicts.len(),
        1,
        "only the first hunk of b collides: {err}"
    );
    let c = &conflicts[0];
    assert_eq!(c.path, "src/lib.rs");
    assert_eq!(
        (c.first.model.as_str(), c.second.model.as_str()),
        ("a", "b")
    );
    assert_eq!(c.first.lines.unwrap().to_string(), "lines 10-11");
    assert_eq!(c.second.lines.unwrap().to_string(), "line 11");
    let text = err.to_string();
    assert!(text.contains("nothing was written"), "{text}");
    assert!(text.contains("src/lib.rs: a hunk"), "{text}");
    // Two whole change sets with different results for the same file conflict too.
    let whole = Selection::new().change_set("a").change_set("b");
    assert!(matches!(
        compose(&sets, &whole, "t"),
        Err(ComposeError::Conflicts(_))
    ));
    assert_eq!(p.tree(), before);
    assert!(journal::read(&p.session).unwrap().is_empty());
    // Without the colliding hunk, the rest composes and merges.
    let ok = Selection::new()
        .change_set("a")
        .hunk("b", "src/lib.rs", &b_lib.hunks[1].id);
    let plan = compose(&sets, &ok, "t").unwrap();
    p.engine().apply(&plan, &BTreeMap::new()).unwrap();
    let lib = p.read("src/lib.rs");
    assert!(lib.contains("fn ten_eleven() {}\nfn f12()") && lib.contains("fn f25() { b() }"));
}

#[tokio::test]
async fn each_hunk_names_the_tool_and_call_that_produced_it() {
    let p = Project::new(true);
    let base = Base::capture(&p.root).unwrap();
    let ws = p.workspace(&base, "m");
    let rewritten = source().replace("fn f2() {}", "fn f2() { written() }");
    let args = json!({"path": "src/lib.rs", "content": rewritten});
    tool(&ws, "write_file", "call-w", args).await;
    edit(
        &ws,
        "call-e",
        "src/lib.rs",
        "fn f28() {}",
        "fn f28() { edited() }",
    )
    .await;
    // Bash changes a file the model never touched, creates one and deletes one, and changes
    // a line of the file the tools wrote.
    let cmd = "sed -i 's/nothing yet/by sed/; s/uncommitted/by sed/' docs/notes.md \
               && echo made > made.txt && rm old.txt \
               && sed -i 's/fn f16() {}/fn f16() { bashed() }/' src/lib.rs";
    tool(&ws, "bash", "call-b", json!({"command": cmd})).await;

    let cs = ChangeSet::from_workspace("m", &base, &ws).unwrap();
    let lib = cs.file("src/lib.rs").unwrap();
    assert_eq!(lib.tools, vec!["write_file", "edit_file", "bash"]);
    let per_hunk: Vec<(Vec<&str>, Vec<&str>)> = lib
        .hunks
        .iter()
        .map(|h| {
            (
                h.tools(),
                h.origins.iter().map(|o| o.call_id.as_str()).collect(),
            )
        })
        .collect();
    assert_eq!(
        per_hunk,
        vec![
            (vec!["write_file"], vec!["call-w"]),
            (vec!["bash"], vec![""]),
            (vec!["edit_file"], vec!["call-e"]),
        ]
    );
    // Removed lines are credited too: the old f28 line went with the edit.
    let removed: Vec<u64> = lib.hunks[2]
        .lines
        .iter()
        .filter(|l| l.kind == LineKind::Removed)
        .filter_map(|l| l.origin)
        .collect();
    assert_eq!(removed, vec![lib.origins[1].seq]);

    for (path, kind) in [
        ("docs/notes.md", ChangeKind::Modified),
        ("made.txt", ChangeKind::Created),
        ("old.txt", ChangeKind::Deleted),
    ] {
        let f = cs.file(path).unwrap();
        assert_eq!(
            (f.kind, f.tools.clone()),
            (kind, vec!["bash".to_string()]),
            "{path}"
        );
        assert!(f.hunks.iter().all(|h| h.tools() == ["bash"]), "{path}");
    }
    assert_eq!(cs.files_changed(), 4);
    let json = serde_json::to_value(&cs).unwrap();
    assert_eq!(json["files_changed"], 4);
    assert_eq!(
        json["files"][3]["tools"],
        json!(["write_file", "edit_file", "bash"])
    );
}

#[tokio::test]
async fn mode_only_changes_are_proposals_shown_and_applied_as_git_modes() {
    let p = Project::new(true);
    p.write("plain.sh", "#!/bin/sh\n");
    let base = Base::capture(&p.root).unwrap();
    let ws = p.workspace(&base, "m");
    let cmd = "chmod +x plain.sh && chmod -x run.sh \
               && mkdir -p bin && printf '#!/bin/sh\\necho new\\n' > bin/new.sh && chmod 755 bin/new.sh";
    tool(&ws, "bash", "c1", json!({"command": cmd})).await;
    let cs = ChangeSet::from_workspace("m", &base, &ws).unwrap();
    let paths: Vec<&str> = cs.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(
        paths,
        vec!["bin/new.sh", "plain.sh", "run.sh"],
        "a change of the executable bit is a proposal"
    );
    let new = cs.file("bin/new.sh").unwrap();
    assert_eq!(new.mode, Some(0o755));
    assert!(cs.unified_diff().contains("new file mode 100755\n"));
    assert!(
        cs.unified_diff()
            .contains("diff --git a/plain.sh b/plain.sh\nold mode 100644\nnew mode 100755\n")
    );
    assert!(
        cs.unified_diff()
            .contains("diff --git a/run.sh b/run.sh\nold mode 100755\nnew mode 100644\n")
    );
    let plain = cs.file("plain.sh").unwrap();
    assert!(plain.mode_changed() && plain.hunks.is_empty() && plain.added == 0);

    let plan = compose(
        std::slice::from_ref(&cs),
        &Selection::new().change_set("m"),
        "t",
    )
    .unwrap();
    p.engine().apply(&plan, &BTreeMap::new()).unwrap();
    let mode = |rel: &str| fs::metadata(p.root.join(rel)).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode("bin/new.sh"), 0o755);
    assert_eq!(
        mode("run.sh"),
        0o644,
        "the execute bits cleared, nothing else"
    );
    assert_eq!(
        mode("plain.sh"),
        0o755,
        "the execute bits set where it is readable"
    );
}

#[tokio::test]
async fn file_writes_round_trip_through_json_and_rebuild_the_same_change_set() {
    let p = Project::new(false);
    let base = Base::capture(&p.root).unwrap();
    let ws = p.workspace(&base, "m");
    edit(&ws, "c1", "src/lib.rs", "fn f1() {}", "fn f1() { é }").await;
    tool(
        &ws,
        "bash",
        "c2",
        json!({"command": "printf 'a\\0b\\377' > blob.bin && rm old.txt"}),
    )
    .await;
    let cs = ChangeSet::from_workspace("m", &base, &ws).unwrap();
    let writes = ws.writes();
    assert_eq!(writes.len(), 3);

    let json = serde_json::to_string(&writes).unwrap();
    assert!(
        json.contains("fn f1() { é }"),
        "text stays readable: {json}"
    );
    let back: Vec<FileWrite> = serde_json::from_str(&json).unwrap();
    assert_eq!(back, writes);
    assert_eq!(back[1].content.as_deref().unwrap().as_slice(), b"a\0b\xff");
    assert_eq!(back[2].content, None);
    assert_eq!(back[2].origin, WriteOrigin::new("bash", ""));

    // After a restart: the saved writes and base rebuild the same change set.
    let base_json = serde_json::to_string(&base).unwrap();
    let base_back: Base = serde_json::from_str(&base_json).unwrap();
    let rebuilt = ChangeSet::build(
        "m",
        &base_back,
        &back,
        &BaseReader::new(&base_back),
        Some(ws.root()),
    )
    .unwrap();
    assert_eq!(rebuilt, cs);
    assert!(cs.file("blob.bin").unwrap().binary);
    assert!(
        cs.unified_diff()
            .contains("Binary files /dev/null and b/blob.bin differ")
    );
}

#[tokio::test]
async fn the_unified_diff_is_accepted_by_git_apply() {
    let p = Project::new(true);
    p.write("no_eol.txt", "a\nb");
    let base = Base::capture(&p.root).unwrap();
    let ws = p.workspace(&base, "m");
    edit(&ws, "c1", "src/lib.rs", "fn f5() {}\n", "").await;
    edit(&ws, "c2", "src/lib.rs", "fn f20() {}", "fn f20() { x }").await;
    edit(&ws, "c3", "no_eol.txt", "b", "b\nc").await;
    tool(
        &ws,
        "write_file",
        "c4",
        json!({"path": "new/dir/file.txt", "content": "new\n"}),
    )
    .await;
    tool(&ws, "bash", "c5", json!({"command": "rm old.txt"})).await;
    let cs = ChangeSet::from_workspace("m", &base, &ws).unwrap();
    assert_eq!(cs.files_changed(), 4);

    // A fresh copy of the user's files, patched by git, must equal the proposals.
    let copy = tempfile::tempdir().unwrap();
    for path in base.entries().keys() {
        let dest = copy.path().join(path);
        fs::create_dir_all(dest.parent().unwrap()).unwrap();
        fs::copy(p.root.join(path), dest).unwrap();
    }
    let patch = copy.path().join("change.patch");
    fs::write(&patch, cs.unified_diff()).unwrap();
    let out = Command::new("git")
        .args(["apply", "change.patch"])
        .current_dir(copy.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git apply: {out:?}\n{}",
        cs.unified_diff()
    );
    for f in &cs.files {
        let patched = fs::read(copy.path().join(&f.path)).ok();
        assert_eq!(patched, f.proposed.as_deref().cloned(), "{}", f.path);
    }
}
