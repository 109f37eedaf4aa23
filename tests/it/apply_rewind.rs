//! Apply and rewind on real folders and git repositories: exact restore (bytes, modes, created
//! and deleted files and folders), staleness merges and conflict resolutions, crash recovery,
//! and rewinds that walk back across engine restarts.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use versus::apply::{
    AppliedAs, ApplyEngine, ApplyError, ApplyPlan, ConflictReason, EditorSave, FileStatus,
    PlannedWrite, Resolution, RewindAction, journal,
};

/// A project root plus a separate session folder, both temporary.
struct Setup {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    session: PathBuf,
}

impl Setup {
    fn plain() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let root = base.join("project");
        let session = base.join("session");
        fs::create_dir_all(&root).unwrap();
        Self {
            _tmp: tmp,
            root,
            session,
        }
    }

    /// A git repository with committed files, a staged change, an unstaged edit and an
    /// untracked file: the kinds of state a base captures.
    fn git_repo() -> Self {
        let s = Self::plain();
        s.git(&["init", "-q"]);
        s.write("run.sh", "#!/bin/sh\necho hi\n");
        s.chmod("run.sh", 0o755);
        s.write("src/lib.rs", "fn a() {}\nfn b() {}\nfn c() {}\n");
        s.write("old.txt", "to be deleted\n");
        s.write("README.md", "readme\n");
        s.git(&["add", "-A"]);
        s.git(&["commit", "-q", "-m", "init"]);
        s.write("README.md", "readme, staged\n");
        s.git(&["add", "README.md"]);
        s.write(
            "src/lib.rs",
            "fn a() {}\nfn b() {}\nfn c() {}\n// unstaged\n",
        );
        s.write("notes.txt", "untracked\n");
        s
    }

    fn git(&self, args: &[&str]) {
        let out = Command::new("git")
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "commit.gpgsign=false",
            ])
            .args(args)
            .current_dir(&self.root)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
    }

    fn engine(&self) -> ApplyEngine {
        ApplyEngine::new(&self.root, &self.session).unwrap()
    }

    fn write(&self, rel: &str, content: &str) {
        let p = self.root.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, content).unwrap();
    }

    fn read(&self, rel: &str) -> String {
        fs::read_to_string(self.root.join(rel)).unwrap()
    }

    fn mode(&self, rel: &str) -> u32 {
        fs::metadata(self.root.join(rel))
            .unwrap()
            .permissions()
            .mode()
            & 0o7777
    }

    fn chmod(&self, rel: &str, mode: u32) {
        fs::set_permissions(self.root.join(rel), fs::Permissions::from_mode(mode)).unwrap();
    }

    /// Every file and folder under the root except `.git`: path -> (bytes, mode). Folders
    /// appear with a trailing `/` and no bytes, so created folders show up in comparisons.
    fn tree(&self) -> BTreeMap<String, (Vec<u8>, u32)> {
        fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, (Vec<u8>, u32)>) {
            for entry in fs::read_dir(dir).unwrap() {
                let entry = entry.unwrap();
                let path = entry.path();
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
                let mode = meta.permissions().mode() & 0o7777;
                if meta.file_type().is_symlink() {
                    let target = fs::read_link(&path).unwrap();
                    out.insert(rel, (target.to_string_lossy().as_bytes().to_vec(), 0));
                } else if meta.is_dir() {
                    out.insert(format!("{rel}/"), (Vec::new(), mode));
                    walk(root, &path, out);
                } else {
                    out.insert(rel, (fs::read(&path).unwrap(), mode));
                }
            }
        }
        let mut out = BTreeMap::new();
        walk(&self.root, &self.root, &mut out);
        out
    }
}

fn change(path: &str, base: Option<&str>, proposed: Option<&str>) -> PlannedWrite {
    PlannedWrite {
        path: path.into(),
        base: base.map(|b| b.as_bytes().to_vec()),
        proposed: proposed.map(|p| p.as_bytes().to_vec()),
        mode: None,
        symlink: false,
        base_symlink: false,
    }
}

fn plan(writes: Vec<PlannedWrite>) -> ApplyPlan {
    ApplyPlan {
        writes,
        models: vec!["openai/gpt-5".into()],
        hunks: vec!["openai/gpt-5:src/lib.rs:1".into()],
        label: "make it better".into(),
    }
}

fn no_resolutions() -> BTreeMap<String, Resolution> {
    BTreeMap::new()
}

/// The git fixture's full change: modify, keep-executable, delete, create in new folders.
fn big_plan() -> ApplyPlan {
    let mut new_tool = change("bin/tools/tool.sh", None, Some("#!/bin/sh\nexit 0\n"));
    new_tool.mode = Some(0o755);
    plan(vec![
        change(
            "run.sh",
            Some("#!/bin/sh\necho hi\n"),
            Some("#!/bin/sh\necho hello\n"),
        ),
        change(
            "src/lib.rs",
            Some("fn a() {}\nfn b() {}\nfn c() {}\n// unstaged\n"),
            Some("fn a() {}\nfn b2() {}\nfn c() {}\n// unstaged\n"),
        ),
        change("old.txt", Some("to be deleted\n"), None),
        change("new/deep/file.txt", None, Some("brand new\n")),
        new_tool,
    ])
}

#[test]
fn apply_then_rewind_restores_the_whole_tree_with_modes() {
    let s = Setup::git_repo();
    let before = s.tree();
    let engine = s.engine();
    let preview = engine.preview(&big_plan()).unwrap();
    assert!(preview.files.iter().all(|f| f.status == FileStatus::Clean));
    let report = engine.apply(&big_plan(), &no_resolutions()).unwrap();
    assert!(report.apply_id.is_some());
    assert_eq!(report.written().len(), 5);

    assert_eq!(s.read("run.sh"), "#!/bin/sh\necho hello\n");
    assert_eq!(s.mode("run.sh"), 0o755, "rewritten script stays executable");
    assert_eq!(s.mode("bin/tools/tool.sh"), 0o755, "new file gets its mode");
    assert!(!s.root.join("old.txt").exists());
    assert_eq!(s.read("new/deep/file.txt"), "brand new\n");
    assert_ne!(s.tree(), before);

    let rp = engine.rewind_preview().unwrap().unwrap();
    assert_eq!(rp.files.len(), 5);
    assert!(rp.edited().is_empty());
    assert_eq!(rp.summary(), "5 files, +3 -5");
    let action = |p: &str| rp.files.iter().find(|f| f.path == p).unwrap().action;
    assert_eq!(action("old.txt"), RewindAction::Recreate);
    assert_eq!(action("new/deep/file.txt"), RewindAction::Remove);
    assert_eq!(action("run.sh"), RewindAction::Restore);

    let r = engine.rewind(false).unwrap();
    assert_eq!(r.restored.len(), 5);
    assert!(r.kept.is_empty());
    assert_eq!(
        s.tree(),
        before,
        "tree (bytes, modes, folders) back exactly"
    );
    assert!(matches!(
        engine.rewind(false),
        Err(ApplyError::NothingToRewind)
    ));
}

#[test]
fn rewind_restores_an_unusual_mode_on_a_deleted_file() {
    let s = Setup::plain();
    s.write("secret.txt", "x\n");
    s.chmod("secret.txt", 0o600);
    let before = s.tree();
    let engine = s.engine();
    engine
        .apply(
            &plan(vec![change("secret.txt", Some("x\n"), None)]),
            &no_resolutions(),
        )
        .unwrap();
    assert!(!s.root.join("secret.txt").exists());
    engine.rewind(false).unwrap();
    assert_eq!(s.tree(), before);
    assert_eq!(s.mode("secret.txt"), 0o600);
}

#[test]
fn non_overlapping_user_edit_merges_cleanly() {
    let s = Setup::git_repo();
    let base = "fn a() {}\nfn b() {}\nfn c() {}\n// unstaged\n";
    // The user edits the first line after the run started; the model changed the third.
    s.write(
        "src/lib.rs",
        "fn a_user() {}\nfn b() {}\nfn c() {}\n// unstaged\n",
    );
    let p = plan(vec![change(
        "src/lib.rs",
        Some(base),
        Some("fn a() {}\nfn b() {}\nfn c_model() {}\n// unstaged\n"),
    )]);
    let engine = s.engine();
    let preview = engine.preview(&p).unwrap();
    assert_eq!(preview.files[0].status, FileStatus::Merged);
    assert_eq!((preview.files[0].added, preview.files[0].removed), (1, 1));
    let report = engine.apply(&p, &no_resolutions()).unwrap();
    assert_eq!(report.files[0].applied_as, AppliedAs::Merged);
    assert_eq!(
        s.read("src/lib.rs"),
        "fn a_user() {}\nfn b() {}\nfn c_model() {}\n// unstaged\n"
    );
    engine.rewind(false).unwrap();
    assert_eq!(
        s.read("src/lib.rs"),
        "fn a_user() {}\nfn b() {}\nfn c() {}\n// unstaged\n"
    );
}

#[test]
fn overlapping_edits_conflict_and_each_resolution_is_honoured() {
    let s = Setup::plain();
    let base = "one\ntwo\nthree\n";
    let user = "one\nTWO (user)\nthree\n";
    let model = "one\nTWO (model)\nthree\n";
    for f in ["over.txt", "skip.txt", "mark.txt", "none.txt"] {
        s.write(f, user);
    }
    let p = plan(
        ["over.txt", "skip.txt", "mark.txt", "none.txt"]
            .iter()
            .map(|f| change(f, Some(base), Some(model)))
            .collect(),
    );
    let engine = s.engine();
    let preview = engine.preview(&p).unwrap();
    assert_eq!(preview.conflicts().len(), 4);
    match &preview.files[0].status {
        FileStatus::Conflict {
            reason,
            regions,
            markers_available,
        } => {
            assert_eq!(*reason, ConflictReason::Lines);
            assert!(*markers_available);
            assert_eq!(regions.len(), 1);
            assert_eq!(regions[0].ours.start, 2);
            assert_eq!(regions[0].ours.len, 1);
        }
        other => panic!("expected conflict, got {other:?}"),
    }
    // The preview carries each side's text of the region, for the question to show.
    let texts = &preview.files[0].texts;
    assert_eq!(texts.len(), 1);
    assert_eq!(texts[0].ours, ["TWO (user)"]);
    assert_eq!(texts[0].theirs, ["TWO (model)"]);
    let before = s.tree();

    // Without resolutions nothing at all is written and no apply is journaled.
    let report = engine.apply(&p, &no_resolutions()).unwrap();
    assert!(report.apply_id.is_none());
    assert!(
        report
            .files
            .iter()
            .all(|f| f.applied_as == AppliedAs::Unresolved)
    );
    assert_eq!(s.tree(), before);

    let resolutions = BTreeMap::from([
        ("over.txt".to_string(), Resolution::Overwrite),
        ("skip.txt".to_string(), Resolution::Skip),
        ("mark.txt".to_string(), Resolution::Markers),
    ]);
    let report = engine.apply(&p, &resolutions).unwrap();
    let how: Vec<AppliedAs> = report.files.iter().map(|f| f.applied_as).collect();
    assert_eq!(
        how,
        vec![
            AppliedAs::Overwritten,
            AppliedAs::Skipped,
            AppliedAs::MarkersWritten,
            AppliedAs::Unresolved
        ]
    );
    assert_eq!(s.read("over.txt"), model);
    assert_eq!(s.read("skip.txt"), user);
    assert_eq!(
        s.read("mark.txt"),
        "one\n<<<<<<< yours\nTWO (user)\n=======\nTWO (model)\n>>>>>>> model\nthree\n"
    );
    assert_eq!(s.read("none.txt"), user);

    // Only the written paths are snapshotted, and rewind gives the user's versions back.
    let rp = engine.rewind_preview().unwrap().unwrap();
    let paths: Vec<&str> = rp.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, vec!["over.txt", "mark.txt"]);
    engine.rewind(false).unwrap();
    assert_eq!(s.tree(), before);
}

/// `versus ask --pick --on-conflict`'s one pass: the conflicts the front end did not name take
/// the rest's resolution, named ones keep theirs, clean paths are written, and a refused path
/// comes back with the words the preview would have shown, all without a preview first.
#[test]
fn one_apply_resolves_the_rest_and_says_why_a_path_was_refused() {
    let s = Setup::plain();
    let base = "one\ntwo\nthree\n";
    let user = "one\nTWO (user)\nthree\n";
    let model = "one\nTWO (model)\nthree\n";
    for f in ["named.txt", "rest.txt"] {
        s.write(f, user);
    }
    s.write("clean.txt", base);
    let p = plan(vec![
        change("named.txt", Some(base), Some(model)),
        change("rest.txt", Some(base), Some(model)),
        change("clean.txt", Some(base), Some(model)),
        link("out.txt", None, "../outside.txt"),
    ]);
    let before = s.tree();
    let engine = s.engine();
    let named = BTreeMap::from([("named.txt".to_string(), Resolution::Skip)]);
    let report = engine
        .apply_resolving(&p, &named, Some(Resolution::Markers))
        .unwrap();
    let how: Vec<AppliedAs> = report.files.iter().map(|f| f.applied_as).collect();
    assert_eq!(
        how,
        vec![
            AppliedAs::Skipped,
            AppliedAs::MarkersWritten,
            AppliedAs::Written,
            AppliedAs::Refused,
        ]
    );
    assert_eq!(s.read("named.txt"), user);
    assert_eq!(
        s.read("rest.txt"),
        "one\n<<<<<<< yours\nTWO (user)\n=======\nTWO (model)\n>>>>>>> model\nthree\n"
    );
    assert_eq!(s.read("clean.txt"), model);
    assert!(!s.root.join("out.txt").exists());
    assert_eq!(report.refused.len(), 1, "{:?}", report.refused);
    assert!(
        report.refused["out.txt"].contains("out.txt -> ../outside.txt"),
        "{:?}",
        report.refused
    );
    // Without a rest, the unnamed conflict stays unresolved, as `apply` leaves it.
    engine.rewind(false).unwrap();
    assert_eq!(s.tree(), before);
    let report = engine.apply_resolving(&p, &named, None).unwrap();
    assert_eq!(report.files[1].applied_as, AppliedAs::Unresolved);
    assert_eq!(s.read("rest.txt"), user);
    engine.rewind(false).unwrap();
    assert_eq!(s.tree(), before);
}
/// A large plan is decided by several threads; what it reports is still what one thread
/// deciding in plan order would: every path in order, and the first error in plan order.
#[test]
fn a_large_plan_is_decided_in_plan_order_with_the_first_error_first() {
    let s = Setup::plain();
    let names: Vec<String> = (0..150)
        .map(|i| format!("d{}/f{i:03}.txt", i % 7))
        .collect();
    for name in &names {
        s.write(name, "old\n");
    }
    let writes = |names: &[String]| -> Vec<PlannedWrite> {
        names
            .iter()
            .map(|n| change(n, Some("old\n"), Some("new\n")))
            .collect()
    };
    let before = s.tree();
    let engine = s.engine();
    // A path that leaves the project at 100 and a duplicate at 120: the escape is first.
    let mut bad = names.clone();
    bad[100] = "../outside.txt".to_string();
    bad[120] = bad[3].clone();
    match engine.apply(&plan(writes(&bad)), &no_resolutions()) {
        Err(ApplyError::Path(e)) => assert!(e.to_string().contains("outside.txt"), "{e}"),
        other => panic!("{other:?}"),
    }
    // Only the duplicate: named.
    let mut dup = names.clone();
    dup[120] = dup[3].clone();
    match engine.apply(&plan(writes(&dup)), &no_resolutions()) {
        Err(ApplyError::DuplicatePath { path }) => assert_eq!(path, names[3]),
        other => panic!("{other:?}"),
    }
    assert_eq!(s.tree(), before);
    // The plan whole: every path reported in plan order, written, and rewound.
    let report = engine
        .apply(&plan(writes(&names)), &no_resolutions())
        .unwrap();
    let paths: Vec<&str> = report.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, names.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(
        report
            .files
            .iter()
            .all(|f| f.applied_as == AppliedAs::Written)
    );
    assert_eq!(s.read(&names[149]), "new\n");
    engine.rewind(false).unwrap();
    assert_eq!(s.tree(), before);
}

#[test]
fn deleting_a_file_the_user_changed_is_a_conflict() {
    let s = Setup::plain();
    s.write("a.txt", "user changed\n");
    let p = plan(vec![change("a.txt", Some("original\n"), None)]);
    let engine = s.engine();
    let preview = engine.preview(&p).unwrap();
    assert!(matches!(
        preview.files[0].status,
        FileStatus::Conflict {
            reason: ConflictReason::DeletedByModel,
            markers_available: false,
            ..
        }
    ));
    let markers = BTreeMap::from([("a.txt".to_string(), Resolution::Markers)]);
    let report = engine.apply(&p, &markers).unwrap();
    assert_eq!(report.files[0].applied_as, AppliedAs::MarkersUnavailable);
    assert_eq!(s.read("a.txt"), "user changed\n");
    let over = BTreeMap::from([("a.txt".to_string(), Resolution::Overwrite)]);
    engine.apply(&p, &over).unwrap();
    assert!(!s.root.join("a.txt").exists());
}

#[test]
fn already_applied_content_is_not_rewritten_or_journaled() {
    let s = Setup::plain();
    s.write("a.txt", "new\n");
    let report = s
        .engine()
        .apply(
            &plan(vec![change("a.txt", Some("old\n"), Some("new\n"))]),
            &no_resolutions(),
        )
        .unwrap();
    assert_eq!(report.files[0].applied_as, AppliedAs::AlreadyApplied);
    assert!(report.apply_id.is_none());
    assert!(journal::read(&s.session).unwrap().is_empty());
}

#[test]
fn crash_between_snapshot_and_commit_is_rolled_back_exactly() {
    let s = Setup::git_repo();
    let mut writes = Vec::new();
    for i in 0..30 {
        let rel = format!("gen/{}/f{i}.txt", i % 3);
        writes.push(change(&rel, None, Some(&format!("generated {i}\n"))));
    }
    writes.extend(big_plan().writes);
    let p = plan(writes);
    let before = s.tree();
    let err = s
        .engine()
        .fail_after_writes(20)
        .apply(&p, &no_resolutions())
        .unwrap_err();
    assert!(matches!(err, ApplyError::InjectedFailure { after: 20 }));
    assert_ne!(s.tree(), before, "the crash left a half-applied tree");

    // Next start: a fresh engine finds the interrupted apply.
    let engine = s.engine();
    let pending = engine
        .pending_recovery()
        .unwrap()
        .expect("interrupted apply");
    assert_eq!(pending.paths.len(), 35);
    assert_eq!(pending.models, vec!["openai/gpt-5".to_string()]);
    assert!(matches!(
        engine.apply(&p, &no_resolutions()),
        Err(ApplyError::PendingRecovery { .. })
    ));
    assert!(matches!(
        engine.rewind(false),
        Err(ApplyError::PendingRecovery { .. })
    ));
    let report = engine.rollback_incomplete(&pending.apply_id).unwrap();
    assert_eq!(report.restored.len(), 35);
    assert_eq!(
        s.tree(),
        before,
        "rollback restores the exact pre-apply tree"
    );
    assert!(engine.pending_recovery().unwrap().is_none());
    assert!(matches!(
        engine.rollback_incomplete(&pending.apply_id),
        Err(ApplyError::NotPending { .. })
    ));
    // A rolled-back apply is not something rewind can undo again.
    assert!(matches!(
        engine.rewind(false),
        Err(ApplyError::NothingToRewind)
    ));
}

#[test]
fn crash_before_any_write_leaves_the_tree_and_rolls_back_cleanly() {
    let s = Setup::plain();
    s.write("a.txt", "a\n");
    let before = s.tree();
    let p = plan(vec![
        change("a.txt", Some("a\n"), Some("A\n")),
        change("x/y.txt", None, Some("y\n")),
    ]);
    assert!(
        s.engine()
            .fail_after_writes(0)
            .apply(&p, &no_resolutions())
            .is_err()
    );
    assert_eq!(s.tree(), before);
    let engine = s.engine();
    let pending = engine.pending_recovery().unwrap().unwrap();
    engine.rollback_incomplete(&pending.apply_id).unwrap();
    assert_eq!(s.tree(), before);
}

#[test]
fn two_applies_then_two_rewinds_across_restarts_walk_back_to_the_original() {
    let s = Setup::git_repo();
    let original = s.tree();
    s.engine().apply(&big_plan(), &no_resolutions()).unwrap();
    let after_first = s.tree();
    let second = plan(vec![
        change(
            "run.sh",
            Some("#!/bin/sh\necho hello\n"),
            Some("#!/bin/sh\necho bye\n"),
        ),
        change("new/deep/file.txt", Some("brand new\n"), None),
        change("new/other.txt", None, Some("other\n")),
    ]);
    let mut second = second;
    second.label = "second turn".into();
    s.engine().apply(&second, &no_resolutions()).unwrap();
    assert_eq!(s.read("run.sh"), "#!/bin/sh\necho bye\n");

    // Each rewind uses a fresh engine: state comes from the journal and snapshots on disk.
    let r = s.engine().rewind(false).unwrap();
    assert_eq!(r.label, "second turn");
    assert_eq!(s.tree(), after_first);
    let r = s.engine().rewind(false).unwrap();
    assert_eq!(r.label, "make it better");
    assert_eq!(s.tree(), original);
    assert!(s.engine().rewind_preview().unwrap().is_none());

    let recs = journal::read(&s.session).unwrap();
    let kinds: Vec<&str> = recs
        .iter()
        .map(|r| match r {
            journal::Record::Begin { .. } => "begin",
            journal::Record::Commit { .. } => "commit",
            journal::Record::Rewind { .. } => "rewind",
            journal::Record::Rollback { .. } => "rollback",
        })
        .collect();
    assert_eq!(
        kinds,
        vec!["begin", "commit", "begin", "commit", "rewind", "rewind"]
    );
}

#[test]
fn file_edited_after_apply_is_reported_and_kept_unless_forced() {
    for force in [false, true] {
        let s = Setup::plain();
        s.write("a.txt", "a\n");
        s.write("b.txt", "b\n");
        let p = plan(vec![
            change("a.txt", Some("a\n"), Some("a by model\n")),
            change("b.txt", Some("b\n"), Some("b by model\n")),
        ]);
        s.engine().apply(&p, &no_resolutions()).unwrap();
        s.write("a.txt", "a by model\nand the user's later work\n");

        let engine = s.engine();
        let rp = engine.rewind_preview().unwrap().unwrap();
        assert_eq!(rp.edited(), vec!["a.txt"]);
        let r = engine.rewind(force).unwrap();
        assert_eq!(s.read("b.txt"), "b\n");
        if force {
            assert_eq!(r.restored, vec!["a.txt", "b.txt"]);
            assert_eq!(s.read("a.txt"), "a\n");
        } else {
            assert_eq!(r.kept, vec!["a.txt"]);
            assert_eq!(s.read("a.txt"), "a by model\nand the user's later work\n");
        }
    }
}

#[test]
fn symlink_escapes_are_refused_before_anything_is_written() {
    let s = Setup::plain();
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), s.root.join("link")).unwrap();
    s.write("a.txt", "a\n");
    let before = s.tree();
    let p = plan(vec![
        change("a.txt", Some("a\n"), Some("A\n")),
        change("link/evil.txt", None, Some("x\n")),
    ]);
    let err = s.engine().apply(&p, &no_resolutions()).unwrap_err();
    assert!(matches!(err, ApplyError::Path(_)), "{err}");
    assert_eq!(s.tree(), before);
    assert_eq!(fs::read_dir(outside.path()).unwrap().count(), 0);
}

/// Issue 21: a cloned repository ships `docs -> .git/hooks`; a plan writing `docs/pre-commit`
/// (a file pick without the link's deletion, or any path through the link) would install a
/// hook the user's next `git commit` runs. Paths through a link into `.git/` or `.versus/`
/// are refused before anything is written.
#[test]
fn a_path_through_a_link_into_git_or_versus_state_is_refused() {
    let s = Setup::plain();
    fs::create_dir_all(s.root.join(".git/hooks")).unwrap();
    fs::create_dir_all(s.root.join(".versus")).unwrap();
    std::os::unix::fs::symlink(".git/hooks", s.root.join("docs")).unwrap();
    std::os::unix::fs::symlink(".versus", s.root.join("notes")).unwrap();
    s.write("a.txt", "a\n");
    let before = s.tree();
    for evil in ["docs/pre-commit", "notes/config.toml"] {
        let p = plan(vec![
            change("a.txt", Some("a\n"), Some("A\n")),
            change(evil, None, Some("#!/bin/sh\necho pwned\n")),
        ]);
        let err = s.engine().apply(&p, &no_resolutions()).unwrap_err();
        assert!(matches!(err, ApplyError::Path(_)), "{evil}: {err}");
        assert!(err.to_string().contains(".git/ or .versus/"), "{err}");
        assert_eq!(s.tree(), before, "{evil}");
    }
    assert!(!s.root.join(".git/hooks/pre-commit").exists());
    assert!(!s.root.join(".versus/config.toml").exists());
}

#[test]
fn crlf_file_with_user_edit_merges_keeping_line_endings() {
    let s = Setup::plain();
    let base = "a\r\nb\r\nc\r\nd\r\n";
    s.write("w.txt", "A\r\nb\r\nc\r\nd\r\n");
    let p = plan(vec![change("w.txt", Some(base), Some("a\r\nb\r\nc\r\nD"))]);
    s.engine().apply(&p, &no_resolutions()).unwrap();
    assert_eq!(s.read("w.txt"), "A\r\nb\r\nc\r\nD");
}

#[test]
fn a_real_write_failure_half_way_rolls_back_at_once() {
    let s = Setup::plain();
    s.write("a.txt", "a\n");
    let before = s.tree();
    // "p" is written as a file first, so creating "p/q.txt" fails half-way through the apply.
    let p = plan(vec![
        change("a.txt", Some("a\n"), Some("A\n")),
        change("p", None, Some("file\n")),
        change("p/q.txt", None, Some("q\n")),
    ]);
    let engine = s.engine();
    assert!(matches!(
        engine.apply(&p, &no_resolutions()),
        Err(ApplyError::Io { .. })
    ));
    assert_eq!(s.tree(), before);
    assert!(engine.pending_recovery().unwrap().is_none());
    let recs = journal::read(&s.session).unwrap();
    assert!(matches!(
        recs.last(),
        Some(journal::Record::Rollback { .. })
    ));
}

#[test]
fn torn_journal_line_and_user_files_in_created_folders_are_tolerated() {
    let s = Setup::plain();
    s.engine()
        .apply(
            &plan(vec![change("gen/out.txt", None, Some("out\n"))]),
            &no_resolutions(),
        )
        .unwrap();
    // A crash while appending a later record leaves a torn last line.
    let mut j = fs::OpenOptions::new()
        .append(true)
        .open(journal::journal_path(&s.session))
        .unwrap();
    std::io::Write::write_all(&mut j, br#"{"kind":"begin","apply_id":"tor"#).unwrap();
    drop(j);
    // The user put their own file in the folder the apply created.
    s.write("gen/mine.txt", "mine\n");
    let engine = s.engine();
    assert!(engine.pending_recovery().unwrap().is_none());
    let r = engine.rewind(false).unwrap();
    assert_eq!(r.restored, vec!["gen/out.txt"]);
    assert!(!s.root.join("gen/out.txt").exists());
    assert_eq!(
        s.read("gen/mine.txt"),
        "mine\n",
        "non-empty created folder is kept"
    );
    assert_eq!(journal::read(&s.session).unwrap().len(), 3);
}

#[test]
fn rollback_also_removes_the_temp_file_a_killed_write_left_and_its_new_folder() {
    let s = Setup::git_repo();
    let mut writes = Vec::new();
    for i in 0..10 {
        writes.push(change(
            &format!("fresh/deep/f{i}.txt"),
            None,
            Some(&format!("new {i}\n")),
        ));
    }
    let p = plan(writes);
    let before = s.tree();
    let err = s
        .engine()
        .fail_after_writes(4)
        .apply(&p, &no_resolutions())
        .unwrap_err();
    assert!(matches!(err, ApplyError::InjectedFailure { after: 4 }));
    // What kill -9 in the middle of the fifth write leaves: its temporary file, beside the
    // target, in a folder the apply created.
    let debris = s.root.join("fresh/deep/.f4.txt.versus-tmp-4242-0-17");
    std::fs::write(&debris, "half").unwrap();
    // A file of the user's with a look-alike name is not debris of this apply.
    std::fs::write(s.root.join("fresh/deep/.f4.txt.bak"), "mine").unwrap();

    let engine = s.engine();
    let pending = engine.pending_recovery().unwrap().expect("interrupted");
    engine.rollback_incomplete(&pending.apply_id).unwrap();
    assert!(!debris.exists(), "the temporary file survived the rollback");
    let mut expected = before.clone();
    expected.insert("fresh/".into(), (Vec::new(), 0o755));
    expected.insert("fresh/deep/".into(), (Vec::new(), 0o755));
    expected.insert("fresh/deep/.f4.txt.bak".into(), (b"mine".to_vec(), 0o644));
    let after = s.tree();
    assert_eq!(
        after.keys().collect::<Vec<_>>(),
        expected.keys().collect::<Vec<_>>(),
        "exactly the user's files are left"
    );

    // Without a file of the user's in them, the folders the apply made go too (the folders
    // kept above for the user's file existed before this second apply: clear them first).
    std::fs::remove_dir_all(s.root.join("fresh")).unwrap();
    assert_eq!(s.tree(), before);
    let err = s
        .engine()
        .fail_after_writes(2)
        .apply(&p, &no_resolutions())
        .unwrap_err();
    assert!(matches!(err, ApplyError::InjectedFailure { .. }));
    std::fs::write(s.root.join("fresh/deep/.f2.txt.versus-tmp-1-2-3"), "half").unwrap();
    let engine = s.engine();
    let pending = engine.pending_recovery().unwrap().expect("interrupted");
    engine.rollback_incomplete(&pending.apply_id).unwrap();
    assert_eq!(s.tree(), before, "folders and debris gone: the exact tree");
}

fn inode(path: &Path) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    let m = fs::metadata(path).unwrap();
    (m.ino(), m.nlink())
}

#[test]
fn a_hard_linked_snapshot_gives_back_the_very_file_with_its_bytes_and_mode() {
    let s = Setup::plain();
    s.write("run.sh", "#!/bin/sh\necho old\n");
    s.chmod("run.sh", 0o750);
    s.write("gone.txt", "to be deleted\n");
    s.chmod("gone.txt", 0o604);
    let before = s.tree();
    let (run_ino, _) = inode(&s.root.join("run.sh"));
    let (gone_ino, _) = inode(&s.root.join("gone.txt"));
    let engine = s.engine();
    engine
        .apply(
            &plan(vec![
                change(
                    "run.sh",
                    Some("#!/bin/sh\necho old\n"),
                    Some("#!/bin/sh\necho new\n"),
                ),
                change("gone.txt", Some("to be deleted\n"), None),
            ]),
            &no_resolutions(),
        )
        .unwrap();
    let (new_ino, links) = inode(&s.root.join("run.sh"));
    assert_ne!(
        new_ino, run_ino,
        "the new content is a new file renamed into place"
    );
    assert_eq!(links, 1);
    assert_eq!(
        s.mode("run.sh"),
        0o750,
        "the replaced script keeps its mode"
    );
    // The preview reads the old bytes through the link.
    let rp = engine.rewind_preview().unwrap().unwrap();
    assert_eq!(rp.summary(), "2 files, +2 -1");
    engine.rewind(false).unwrap();
    assert_eq!(s.tree(), before, "bytes and modes back exactly");
    assert_eq!(
        inode(&s.root.join("run.sh")),
        (run_ino, 1),
        "the user's own file is back, and the snapshot no longer shares it"
    );
    assert_eq!(inode(&s.root.join("gone.txt")), (gone_ino, 1));
    // Applying again snapshots the same file again.
    engine
        .apply(
            &plan(vec![change(
                "run.sh",
                Some("#!/bin/sh\necho old\n"),
                Some("#!/bin/sh\necho again\n"),
            )]),
            &no_resolutions(),
        )
        .unwrap();
    engine.rewind(false).unwrap();
    assert_eq!(s.tree(), before);
}

#[test]
fn a_file_with_several_hard_links_is_restored_exactly_whatever_is_done_through_the_others() {
    let s = Setup::plain();
    s.write("a.txt", "shared old\n");
    s.chmod("a.txt", 0o640);
    fs::hard_link(s.root.join("a.txt"), s.root.join("twin.txt")).unwrap();
    let engine = s.engine();
    engine
        .apply(
            &plan(vec![change("a.txt", Some("shared old\n"), Some("model\n"))]),
            &no_resolutions(),
        )
        .unwrap();
    assert_eq!(s.read("a.txt"), "model\n");
    assert_eq!(
        s.read("twin.txt"),
        "shared old\n",
        "the other name is not the path applied"
    );
    // Written in place through the other name: must not reach the snapshot.
    fs::write(s.root.join("twin.txt"), "edited through the twin\n").unwrap();
    fs::set_permissions(s.root.join("twin.txt"), fs::Permissions::from_mode(0o600)).unwrap();
    engine.rewind(false).unwrap();
    assert_eq!(s.read("a.txt"), "shared old\n");
    assert_eq!(s.mode("a.txt"), 0o640);
    assert_eq!(s.read("twin.txt"), "edited through the twin\n");
}

#[test]
fn a_session_on_another_filesystem_copies_snapshots_and_still_restores_exactly() {
    let shm = Path::new("/dev/shm");
    if !shm.is_dir() {
        return;
    }
    let session_tmp = tempfile::tempdir_in(shm).unwrap();
    let s = Setup::git_repo();
    {
        use std::os::unix::fs::MetadataExt;
        if fs::metadata(&s.root).unwrap().dev() == fs::metadata(session_tmp.path()).unwrap().dev() {
            return; // one filesystem only: nothing to test here
        }
    }
    let engine = ApplyEngine::new(&s.root, session_tmp.path()).unwrap();
    let before = s.tree();
    engine.apply(&big_plan(), &no_resolutions()).unwrap();
    assert_eq!(s.mode("run.sh"), 0o755);
    assert_eq!(s.mode("bin/tools/tool.sh"), 0o755);
    engine.rewind(false).unwrap();
    assert_eq!(s.tree(), before);
    // And an interrupted apply rolls back from the copies.
    let err = ApplyEngine::new(&s.root, session_tmp.path())
        .unwrap()
        .fail_after_writes(3)
        .apply(&big_plan(), &no_resolutions())
        .unwrap_err();
    assert!(matches!(err, ApplyError::InjectedFailure { after: 3 }));
    let pending = engine.pending_recovery().unwrap().unwrap();
    engine.rollback_incomplete(&pending.apply_id).unwrap();
    assert_eq!(s.tree(), before);
}

#[test]
fn rollback_gives_back_untouched_and_replaced_files_and_unshares_them() {
    let s = Setup::plain();
    for i in 0..6 {
        s.write(&format!("f{i}.txt"), &format!("old {i}\n"));
    }
    s.chmod("f4.txt", 0o700);
    let before = s.tree();
    let inodes: Vec<_> = (0..6)
        .map(|i| inode(&s.root.join(format!("f{i}.txt"))).0)
        .collect();
    let writes = (0..6)
        .map(|i| {
            let old = format!("old {i}\n");
            change(&format!("f{i}.txt"), Some(&old), Some("new\n"))
        })
        .collect();
    let p = plan(writes);
    assert!(
        s.engine()
            .fail_after_writes(3)
            .apply(&p, &no_resolutions())
            .is_err()
    );
    assert_eq!(s.read("f0.txt"), "new\n");
    assert_eq!(s.read("f5.txt"), "old 5\n");
    // Not reached yet: the snapshot holds a second name of the user's file.
    assert_eq!(inode(&s.root.join("f5.txt")).1, 2);
    let engine = s.engine();
    let pending = engine.pending_recovery().unwrap().unwrap();
    engine.rollback_incomplete(&pending.apply_id).unwrap();
    assert_eq!(s.tree(), before);
    for (i, ino) in inodes.iter().enumerate() {
        assert_eq!(
            inode(&s.root.join(format!("f{i}.txt"))),
            (*ino, 1),
            "f{i}.txt"
        );
    }
}

#[test]
fn a_snapshot_left_by_a_crash_before_begin_is_removed_by_the_next_apply() {
    let s = Setup::plain();
    s.write("a.txt", "a\n");
    // What a power cut after the snapshot and before the `begin` record leaves.
    let orphan = s.session.join("snapshots/0000000000001-1-0/entries");
    fs::create_dir_all(&orphan).unwrap();
    fs::hard_link(s.root.join("a.txt"), orphan.join("0")).unwrap();
    let before = s.tree();
    let engine = s.engine();
    engine
        .apply(
            &plan(vec![change("a.txt", Some("a\n"), Some("A\n"))]),
            &no_resolutions(),
        )
        .unwrap();
    assert!(!orphan.exists(), "the stray snapshot is gone");
    engine.rewind(false).unwrap();
    assert_eq!(s.tree(), before);
    assert_eq!(inode(&s.root.join("a.txt")).1, 1);
}

/// A symlink proposal: `change` with `proposed` as the link's target.
fn link(path: &str, base: Option<&str>, target: &str) -> PlannedWrite {
    let mut w = change(path, base, Some(target));
    w.symlink = true;
    w
}

#[test]
fn symlinks_are_applied_as_links_only_inside_and_rewind_restores_the_exact_tree() {
    let s = Setup::plain();
    fs::create_dir_all(s.root.join("src")).unwrap();
    fs::write(s.root.join("src/lib.rs"), "lib\n").unwrap();
    fs::write(s.root.join("a.txt"), "old\n").unwrap();
    fs::set_permissions(s.root.join("a.txt"), fs::Permissions::from_mode(0o640)).unwrap();
    let before = s.tree();
    let engine = s.engine();
    let p = plan(vec![
        // A file replaced by a link, a new link in a new folder, and three refused ones.
        link("a.txt", Some("old\n"), "src/lib.rs"),
        link("deep/er/up", None, "../../src"),
        link("out.txt", None, "../outside.txt"),
        link("abs.txt", None, "/etc/passwd"),
        link("sneaky", None, "src/../../x"),
        change("src/lib.rs", Some("lib\n"), Some("lib 2\n")),
    ]);
    let preview = engine.preview(&p).unwrap();
    let refused: Vec<&str> = preview
        .files
        .iter()
        .filter(|f| matches!(f.status, FileStatus::Refused { .. }))
        .map(|f| f.path.as_str())
        .collect();
    assert_eq!(refused, vec!["out.txt", "abs.txt", "sneaky"]);
    match &preview.files[2].status {
        FileStatus::Refused { why } => {
            assert!(why.contains("out.txt -> ../outside.txt"), "{why}")
        }
        other => panic!("{other:?}"),
    }
    // Even told to overwrite, a refused link is not written.
    let force: BTreeMap<String, Resolution> = ["out.txt", "abs.txt", "sneaky"]
        .iter()
        .map(|p| (p.to_string(), Resolution::Overwrite))
        .collect();
    let report = engine.apply(&p, &force).unwrap();
    let how: Vec<AppliedAs> = report.files.iter().map(|f| f.applied_as).collect();
    assert_eq!(
        how,
        vec![
            AppliedAs::Written,
            AppliedAs::Written,
            AppliedAs::Refused,
            AppliedAs::Refused,
            AppliedAs::Refused,
            AppliedAs::Written,
        ]
    );
    for (path, target) in [("a.txt", "src/lib.rs"), ("deep/er/up", "../../src")] {
        let meta = fs::symlink_metadata(s.root.join(path)).unwrap();
        assert!(meta.file_type().is_symlink(), "{path}");
        assert_eq!(fs::read_link(s.root.join(path)).unwrap(), Path::new(target));
    }
    for path in ["out.txt", "abs.txt", "sneaky"] {
        assert!(fs::symlink_metadata(s.root.join(path)).is_err(), "{path}");
    }
    assert_eq!(
        s.read("a.txt"),
        "lib 2\n",
        "the link reads through to the project"
    );
    // Applying again: the links are already there.
    let again = engine.preview(&p).unwrap();
    assert_eq!(again.files[0].status, FileStatus::AlreadyApplied);

    let rp = engine.rewind_preview().unwrap().unwrap();
    assert!(rp.edited().is_empty(), "{:?}", rp.edited());
    engine.rewind(false).unwrap();
    assert!(
        fs::symlink_metadata(s.root.join("a.txt"))
            .unwrap()
            .is_file()
    );
    assert_eq!(s.mode("a.txt"), 0o640);
    assert!(!s.root.join("deep").exists(), "created folders removed");
    assert_eq!(s.tree(), before);
}

/// A change of a path that was the symlink `-> base` at run start.
fn over_link(path: &str, base: &str, proposed: Option<&str>, as_link: bool) -> PlannedWrite {
    let mut w = change(path, Some(base), proposed);
    w.base_symlink = true;
    w.symlink = as_link && proposed.is_some();
    w
}

fn is_link_to(path: &Path, target: &str) -> bool {
    fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
        && fs::read_link(path).unwrap() == Path::new(target)
}

#[test]
fn base_links_are_deleted_replaced_and_repointed_and_rewind_puts_back_the_exact_links() {
    let s = Setup::plain();
    s.write("src/lib.rs", "lib\n");
    s.chmod("src/lib.rs", 0o640);
    s.write("docs/a.md", "a\n");
    for (name, target) in [
        ("gone", "src"),
        ("to-file", "src/lib.rs"),
        ("moved", "src"),
        ("escape", "docs"),
    ] {
        std::os::unix::fs::symlink(target, s.root.join(name)).unwrap();
    }
    let before = s.tree();
    let engine = s.engine();
    let mut to_file = over_link("to-file", "src/lib.rs", Some("now a file\n"), false);
    to_file.mode = Some(0o600);
    let p = plan(vec![
        over_link("gone", "src", None, false),
        to_file,
        over_link("moved", "src", Some("docs"), true),
        over_link("escape", "docs", Some("../../etc"), true),
        change("src/lib.rs", Some("lib\n"), Some("lib 2\n")),
    ]);
    let preview = engine.preview(&p).unwrap();
    let statuses: Vec<&FileStatus> = preview.files.iter().map(|f| &f.status).collect();
    assert_eq!(statuses[..3], [&FileStatus::Clean; 3]);
    match statuses[3] {
        FileStatus::Refused { why } => assert!(why.contains("escape -> ../../etc"), "{why}"),
        other => panic!("{other:?}"),
    }
    let report = engine.apply(&p, &no_resolutions()).unwrap();
    let how: Vec<AppliedAs> = report.files.iter().map(|f| f.applied_as).collect();
    assert_eq!(
        how,
        vec![
            AppliedAs::Deleted,
            AppliedAs::Written,
            AppliedAs::Written,
            AppliedAs::Refused,
            AppliedAs::Written,
        ]
    );
    // The link itself went, never what it pointed to.
    assert!(fs::symlink_metadata(s.root.join("gone")).is_err());
    assert!(s.root.join("src").is_dir());
    assert_eq!(
        s.read("src/lib.rs"),
        "lib 2\n",
        "written, not through a link"
    );
    let meta = fs::symlink_metadata(s.root.join("to-file")).unwrap();
    assert!(meta.is_file());
    assert_eq!(s.read("to-file"), "now a file\n");
    // A file replacing a link is new as a file: it gets the mode review shows for the
    // plan's 0o600 (100644, as git records it), not the plan's raw bits.
    assert_eq!(s.mode("to-file"), 0o644);
    assert_eq!(
        s.mode("src/lib.rs"),
        0o640,
        "the old target's mode is untouched"
    );
    assert!(is_link_to(&s.root.join("moved"), "docs"));
    assert!(
        is_link_to(&s.root.join("escape"), "docs"),
        "refused: untouched"
    );

    let rp = engine.rewind_preview().unwrap().unwrap();
    assert!(rp.edited().is_empty(), "{:?}", rp.edited());
    engine.rewind(false).unwrap();
    assert_eq!(s.tree(), before);
    assert!(is_link_to(&s.root.join("gone"), "src"));
    assert!(is_link_to(&s.root.join("to-file"), "src/lib.rs"));
    assert!(is_link_to(&s.root.join("moved"), "src"));
}

#[test]
fn a_crash_mid_apply_puts_back_base_links_exactly() {
    let s = Setup::plain();
    s.write("src/lib.rs", "lib\n");
    std::os::unix::fs::symlink("src", s.root.join("a-link")).unwrap();
    std::os::unix::fs::symlink("src/lib.rs", s.root.join("b-link")).unwrap();
    let before = s.tree();
    let p = plan(vec![
        over_link("a-link", "src", None, false),
        over_link("b-link", "src/lib.rs", Some("file\n"), false),
    ]);
    let err = s
        .engine()
        .fail_after_writes(2)
        .apply(&p, &no_resolutions())
        .unwrap_err();
    assert!(matches!(err, ApplyError::InjectedFailure { .. }), "{err}");
    let engine = s.engine();
    let pending = engine.pending_recovery().unwrap().unwrap();
    engine.rollback_incomplete(&pending.apply_id).unwrap();
    assert_eq!(s.tree(), before);
    assert!(is_link_to(&s.root.join("a-link"), "src"));
    assert!(is_link_to(&s.root.join("b-link"), "src/lib.rs"));
}

#[test]
fn a_base_link_the_user_repointed_during_the_run_is_not_overwritten() {
    let s = Setup::plain();
    s.write("src/lib.rs", "lib\n");
    s.write("docs/a.md", "a\n");
    for name in ["del", "file", "move"] {
        // At run start each was `-> src`; the user re-pointed them since.
        std::os::unix::fs::symlink("docs", s.root.join(name)).unwrap();
    }
    let before = s.tree();
    let engine = s.engine();
    let p = plan(vec![
        over_link("del", "src", None, false),
        over_link("file", "src", Some("x\n"), false),
        over_link("move", "src", Some("src/lib.rs"), true),
    ]);
    let preview = engine.preview(&p).unwrap();
    assert!(matches!(
        preview.files[0].status,
        FileStatus::Conflict {
            reason: ConflictReason::DeletedByModel,
            ..
        }
    ));
    assert!(matches!(
        preview.files[1].status,
        FileStatus::Conflict { .. }
    ));
    assert!(matches!(
        preview.files[2].status,
        FileStatus::Refused { .. }
    ));
    let report = engine.apply(&p, &no_resolutions()).unwrap();
    assert_eq!(report.apply_id, None, "nothing written");
    assert_eq!(s.tree(), before);
    // Overwrite, chosen, replaces the user's link; the snapshot keeps it for rewind.
    let force: BTreeMap<String, Resolution> = ["del", "file", "move"]
        .iter()
        .map(|p| (p.to_string(), Resolution::Overwrite))
        .collect();
    engine.apply(&p, &force).unwrap();
    assert!(fs::symlink_metadata(s.root.join("del")).is_err());
    assert_eq!(s.read("file"), "x\n");
    assert!(
        is_link_to(&s.root.join("move"), "docs"),
        "refused stays refused"
    );
    engine.rewind(false).unwrap();
    assert_eq!(s.tree(), before);
}

#[test]
fn a_link_made_after_an_apply_deleted_a_base_link_is_kept_by_rewind_unless_forced() {
    let s = Setup::plain();
    s.write("src/lib.rs", "lib\n");
    std::os::unix::fs::symlink("src", s.root.join("l")).unwrap();
    let before = s.tree();
    let engine = s.engine();
    engine
        .apply(
            &plan(vec![over_link("l", "src", None, false)]),
            &no_resolutions(),
        )
        .unwrap();
    std::os::unix::fs::symlink("src/lib.rs", s.root.join("l")).unwrap();
    let rp = engine.rewind_preview().unwrap().unwrap();
    assert_eq!(rp.edited(), vec!["l"]);
    let report = engine.rewind(false).unwrap();
    assert_eq!(report.kept, vec!["l".to_string()]);
    assert!(
        is_link_to(&s.root.join("l"), "src/lib.rs"),
        "the user's link kept"
    );
    // Another apply, then a link made over its file and a forced rewind: the link of before
    // that apply comes back over the one made since.
    engine
        .apply(
            &plan(vec![over_link("l", "src/lib.rs", Some("file\n"), false)]),
            &no_resolutions(),
        )
        .unwrap();
    assert_eq!(s.read("l"), "file\n");
    fs::remove_file(s.root.join("l")).unwrap();
    std::os::unix::fs::symlink("src", s.root.join("l")).unwrap();
    assert_eq!(
        engine.rewind_preview().unwrap().unwrap().edited(),
        vec!["l"]
    );
    engine.rewind(true).unwrap();
    assert!(is_link_to(&s.root.join("l"), "src/lib.rs"));
    assert_eq!(
        s.read("src/lib.rs"),
        "lib\n",
        "nothing written through the links"
    );
    fs::remove_file(s.root.join("l")).unwrap();
    std::os::unix::fs::symlink("src", s.root.join("l")).unwrap();
    assert_eq!(s.tree(), before);
}

#[test]
fn a_forced_rewind_puts_the_old_file_back_over_a_link_made_since_never_through_it() {
    for force in [false, true] {
        let s = Setup::plain();
        s.write("src/lib.rs", "lib\n");
        s.write("a.txt", "old\n");
        s.chmod("a.txt", 0o640);
        let before = s.tree();
        let engine = s.engine();
        engine
            .apply(
                &plan(vec![change("a.txt", Some("old\n"), Some("new\n"))]),
                &no_resolutions(),
            )
            .unwrap();
        fs::remove_file(s.root.join("a.txt")).unwrap();
        std::os::unix::fs::symlink("src/lib.rs", s.root.join("a.txt")).unwrap();
        assert_eq!(
            engine.rewind_preview().unwrap().unwrap().edited(),
            vec!["a.txt"]
        );
        let report = engine.rewind(force).unwrap();
        assert_eq!(
            s.read("src/lib.rs"),
            "lib\n",
            "never written through the link"
        );
        if force {
            assert!(report.kept.is_empty());
            assert_eq!(s.tree(), before, "the old file, bytes and mode");
        } else {
            assert_eq!(report.kept, vec!["a.txt".to_string()]);
            assert!(is_link_to(&s.root.join("a.txt"), "src/lib.rs"));
        }
    }
}

#[test]
fn a_file_saved_by_an_editor_during_the_apply_is_kept_and_the_apply_rolled_back() {
    for (how, twin) in [
        (EditorSave::InPlace, false),
        (EditorSave::ByRename, false),
        (EditorSave::InPlace, true),
    ] {
        editor_save_during_apply(how, twin);
    }
}

#[test]
fn a_base_link_repointed_during_the_apply_is_kept_and_the_apply_rolled_back() {
    let s = Setup::plain();
    s.write("a.txt", "a\n");
    s.write("src/lib.rs", "lib\n");
    s.write("docs/a.md", "a\n");
    std::os::unix::fs::symlink("src", s.root.join("del")).unwrap();
    let p = plan(vec![
        change("a.txt", Some("a\n"), Some("A\n")),
        over_link("del", "src", None, false),
    ]);
    let engine = s
        .engine()
        .save_during_apply(1, "del", b"docs", EditorSave::Repoint);
    let err = engine.apply(&p, &no_resolutions()).unwrap_err();
    assert!(
        matches!(&err, ApplyError::ChangedWhileApplying { path } if path == "del"),
        "{err}"
    );
    assert_eq!(s.read("a.txt"), "a\n");
    assert_eq!(
        fs::read_link(s.root.join("del")).unwrap(),
        Path::new("docs"),
        "the user's re-pointed link was removed"
    );
    assert!(engine.pending_recovery().unwrap().is_none());
}

/// `twin`: b.txt has a second name outside the project, so its snapshot is a copy.
fn editor_save_during_apply(how: EditorSave, twin: bool) {
    let s = Setup::plain();
    s.write("a.txt", "a\n");
    s.write("b.txt", "b\n");
    let other = tempfile::tempdir().unwrap();
    if twin {
        fs::hard_link(s.root.join("b.txt"), other.path().join("twin.txt")).unwrap();
    }
    s.write("c.txt", "c\n");
    let p = plan(vec![
        change("a.txt", Some("a\n"), Some("A\n")),
        change("b.txt", Some("b\n"), Some("B\n")),
        change("c.txt", Some("c\n"), Some("C\n")),
    ]);
    // Before the second write, an editor saves b.txt in place.
    let engine = s
        .engine()
        .save_during_apply(1, "b.txt", b"b, saved by the user\n", how);
    let err = engine.apply(&p, &no_resolutions()).unwrap_err();
    assert!(
        matches!(&err, ApplyError::ChangedWhileApplying { path } if path == "b.txt"),
        "{err}"
    );
    assert_eq!(s.read("a.txt"), "a\n", "the first write was rolled back");
    assert_eq!(
        s.read("b.txt"),
        "b, saved by the user\n",
        "the user's save was lost"
    );
    assert_eq!(s.read("c.txt"), "c\n");
    assert!(engine.pending_recovery().unwrap().is_none());
}
