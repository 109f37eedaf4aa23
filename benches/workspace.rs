//! Workspace and apply benchmarks, each against a reference measured in the same run.
//!
//! `cargo bench --bench workspace [-- create|ask|pick|base|changeset|apply]`. A git repository of
//! `VERSUS_BENCH_FILES` files (default 10,000) totalling `VERSUS_BENCH_MB` megabytes (default
//! 200) is generated in a temporary folder (`VERSUS_BENCH_DIR` to put it elsewhere);
//! `VERSUS_BENCH_APPLY_FILES` (default 1,000) files form the change set that is applied and
//! rewound; `VERSUS_BENCH_RUNS` (default 5) timed runs follow one warm-up, and the median is
//! reported. docs/benchmarks.md explains the method and records the latest run.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    missing_docs
)]

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[path = "common/repo.rs"]
mod repo;

use repo::{generate, git, rel};
use versus::apply::{ApplyEngine, Selection, compose};
use versus::workspace::changeset::BaseReader;
use versus::workspace::{Base, ChangeSet, Isolation, Workspace, WriteOrigin};

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn runs() -> usize {
    env_or("VERSUS_BENCH_RUNS", 5)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// One warm-up, then the median of the timed runs; `run` does its own setup and returns the
/// time of the measured part only.
fn measure<F: FnMut() -> Duration>(mut run: F) -> Duration {
    run();
    median((0..runs()).map(|_| run()).collect())
}

fn timed<F: FnOnce()>(f: F) -> Duration {
    let t = Instant::now();
    f();
    t.elapsed()
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

fn row(name: &str, ours: Duration, reference_name: &str, reference: Duration) {
    println!(
        "| {name} | {} | {reference_name} | {} | {:.2}x |",
        ms(ours),
        ms(reference),
        ours.as_secs_f64() / reference.as_secs_f64()
    );
}

/// The user's uncommitted state: `n` modified tracked files and `n / 4` untracked ones.
fn make_dirty(root: &Path, n: usize, files: usize) {
    for i in 0..n {
        let path = root.join(rel(i * (files / n.max(1)).max(1) % files));
        let mut f = fs::OpenOptions::new().append(true).open(path).unwrap();
        f.write_all(b"// uncommitted edit\n").unwrap();
    }
    for i in 0..n / 4 {
        fs::write(root.join(format!("src/untracked{i}.txt")), "new\n").unwrap();
    }
}

fn bench_create(root: &Path, scratch: &Path, label: &str) {
    let base = Base::capture(root).unwrap();
    let parent = scratch.join("workspaces");
    let ours = measure(|| {
        let mut all = Vec::new();
        let t = timed(|| {
            for i in 0..4 {
                all.push(
                    Workspace::create_in(&parent, Isolation::Worktree, &base, &format!("m{i}"))
                        .unwrap(),
                );
            }
        });
        assert!(all.iter().all(|w| w.mode() == Isolation::Worktree));
        drop(all);
        t
    });
    let cli_parent = scratch.join("cli-worktrees");
    let reference = measure(|| {
        let dirs: Vec<PathBuf> = (0..4).map(|i| cli_parent.join(format!("wt{i}"))).collect();
        let t = timed(|| {
            for d in &dirs {
                let d = d.to_str().unwrap();
                git(root, &["worktree", "add", "-q", "--detach", d, "HEAD"]);
            }
        });
        for d in &dirs {
            git(
                root,
                &["worktree", "remove", "--force", d.to_str().unwrap()],
            );
        }
        t
    });
    row(
        &format!("4 workspaces (worktree), {label}"),
        ours,
        "4 x `git worktree add --detach`",
        reference,
    );
}

/// End to end, as a user runs it: `versus ask` with `models` instant demo models (each answers
/// at once, so the time is start-up, base capture, workspace creation, the change-set scan and
/// removal), alternating with the reference: `models` x `git worktree add --detach` then
/// `git worktree remove --force`, one after the other as a script would.
fn bench_ask(root: &Path, scratch: &Path, models: usize, label: &str, envs: &[(&str, &str)]) {
    let script = scratch.join("instant.jsonl");
    fs::write(&script, "{\"say\": \"Nothing to change.\"}\n").unwrap();
    let workspaces = scratch.join("ask-tmp");
    fs::create_dir_all(&workspaces).unwrap();
    let mut args: Vec<String> = vec!["ask".into(), "-C".into(), root.display().to_string()];
    for i in 0..models {
        args.push("-m".into());
        args.push(format!("demo/{}#{}", script.display(), i + 1));
    }
    args.push("Say hello.".into());
    let ours = || {
        timed(|| {
            let out = Command::new(env!("CARGO_BIN_EXE_versus"))
                .args(&args)
                .envs(envs.iter().copied())
                .env("TMPDIR", &workspaces)
                .env("XDG_STATE_HOME", scratch.join("state"))
                .env("XDG_CONFIG_HOME", scratch.join("config"))
                .stdin(Stdio::null())
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "versus ask failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        })
    };
    let cli_parent = scratch.join("cli-worktrees-ask");
    let reference = || {
        let dirs: Vec<PathBuf> = (0..models)
            .map(|i| cli_parent.join(format!("w{i}")))
            .collect();
        timed(|| {
            for d in &dirs {
                git(
                    root,
                    &[
                        "worktree",
                        "add",
                        "-q",
                        "--detach",
                        d.to_str().unwrap(),
                        "HEAD",
                    ],
                );
            }
            for d in &dirs {
                git(
                    root,
                    &["worktree", "remove", "--force", d.to_str().unwrap()],
                );
            }
        })
    };
    // Alternate the two so a change in the machine's load hits both alike.
    ours();
    reference();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..runs() {
        a.push(ours());
        b.push(reference());
    }
    row(
        &format!("`versus ask`, {models} instant models, {label}"),
        median(a),
        &format!("{models} x `git worktree add` + `remove`"),
        median(b),
    );
}

/// Whole commands, as a user runs them: `versus ask --pick` of a scripted model whose one
/// bash call appends a line to `n` files (start-up, capture, the workspace, the model, the
/// bash-change scan, the change set, recording, apply with its fsyncs), then `versus rewind
/// --yes`; then the same change kept later, `versus ask` (not timed) and `versus pick` (start-up,
/// the session reopened, the change set rebuilt from its record, apply with its fsyncs), the
/// apply alone as a whole command; alternating run by run with the same change made by `git
/// apply` + `sync` and undone by `git checkout -- <the files>` + `sync`.
fn bench_pick(root: &Path, scratch: &Path, n: usize, files: usize) {
    let step = (files / n).max(1);
    let command = format!(
        "for k in $(seq 0 {}); do i=$(( (k * {step}) % {files} )); \
         printf -v p 'src/d%03d/file%05d.txt' $((i % 100)) $i; \
         echo '// changed by the model' >> \"$p\"; done",
        n - 1
    );
    let script = scratch.join("pick.jsonl");
    let step_json = serde_json::json!({"tools": [{"name": "bash", "args": {"command": command}}]});
    fs::write(&script, format!("{step_json}\n{{\"say\": \"Done.\"}}\n")).unwrap();
    let model = format!("demo/{}", script.display());
    let temp = scratch.join("pick-tmp");
    fs::create_dir_all(&temp).unwrap();
    let versus = |args: &[&str]| {
        timed(|| {
            let out = Command::new(env!("CARGO_BIN_EXE_versus"))
                .arg("-C")
                .arg(root)
                .args(args)
                .env("TMPDIR", &temp)
                .env("XDG_STATE_HOME", scratch.join("state"))
                .env("XDG_CONFIG_HOME", scratch.join("config"))
                .stdin(Stdio::null())
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "versus {args:?} failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        })
    };
    let pick = || {
        versus(&[
            "ask",
            "-q",
            "-m",
            &model,
            "--pick",
            &model,
            "Change the files.",
        ])
    };
    let rewind = || versus(&["rewind", "--yes"]);
    let ask_only = || versus(&["ask", "-q", "-m", &model, "Change the files."]);
    let pick_later = || versus(&["pick", &model]);
    // The same change as a patch, and the list of its files, from the first pick.
    pick();
    let patch = scratch.join("pick.patch");
    let out = Command::new("git")
        .args(["diff"])
        .current_dir(root)
        .output()
        .unwrap();
    fs::write(&patch, &out.stdout).unwrap();
    let out = Command::new("git")
        .args(["diff", "--name-only"])
        .current_dir(root)
        .output()
        .unwrap();
    let list = scratch.join("pick-paths.txt");
    fs::write(&list, &out.stdout).unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), n);
    rewind();
    let clean = || {
        let out = Command::new("git")
            .args(["status", "--porcelain", "--untracked-files=no"])
            .current_dir(root)
            .output()
            .unwrap();
        assert!(
            out.stdout.is_empty(),
            "not rewound: {}",
            String::from_utf8_lossy(&out.stdout)
        );
    };
    clean();
    let sync = || {
        Command::new("sync").status().unwrap();
    };
    let git_apply = || {
        timed(|| {
            git(root, &["apply", patch.to_str().unwrap()]);
            sync();
        })
    };
    let git_checkout = || {
        timed(|| {
            git(
                root,
                &[
                    "checkout",
                    "--pathspec-from-file",
                    list.to_str().unwrap(),
                    "--",
                ],
            );
            sync();
        })
    };
    let (mut ours_pick, mut ours_rewind, mut ref_apply, mut ref_checkout) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut ours_pick_later = Vec::new();
    // Every timed command starts with nothing left to write back: a `sync` (not timed) first,
    // so the reference's own `sync` flushes only what its command wrote, not what the
    // commands before it left (the workspaces and session records of `versus ask`).
    for _ in 0..runs() {
        sync();
        ours_pick.push(pick());
        sync();
        ours_rewind.push(rewind());
        clean();
        ask_only();
        sync();
        ours_pick_later.push(pick_later());
        sync();
        ours_rewind.push(rewind());
        clean();
        sync();
        ref_apply.push(git_apply());
        sync();
        ref_checkout.push(git_checkout());
        clean();
    }
    row(
        &format!("`versus ask --pick`, a model changing {n} files (whole command)"),
        median(ours_pick),
        "`git apply` + `sync`",
        median(ref_apply.clone()),
    );
    row(
        &format!("`versus pick` of those {n} files after `versus ask` (whole command)"),
        median(ours_pick_later),
        "`git apply` + `sync`",
        median(ref_apply),
    );
    row(
        &format!("`versus rewind --yes` of those {n} files (whole command)"),
        median(ours_rewind),
        "`git checkout -- <the files>` + `sync`",
        median(ref_checkout),
    );
}

fn bench_base(root: &Path) {
    let ours = measure(|| timed(|| drop(Base::capture(root).unwrap())));
    let reference = measure(|| {
        timed(|| {
            Command::new("git")
                .args(["status", "--porcelain", "--untracked-files=all"])
                .current_dir(root)
                .stdout(Stdio::null())
                .status()
                .unwrap();
        })
    });
    row(
        "base capture (blake3 of every file)",
        ours,
        "`git status --porcelain -uall`",
        reference,
    );
}

/// A finished model that rewrote `n` files (one line appended to each) in a worktree.
fn model_workspace(root: &Path, scratch: &Path, base: &Base, n: usize, files: usize) -> Workspace {
    let ws =
        Workspace::create_in(&scratch.join("model"), Isolation::Worktree, base, "model").unwrap();
    let view = ws.view();
    let step = (files / n).max(1);
    for k in 0..n {
        let path = view.resolve(&rel((k * step) % files)).unwrap();
        let mut content = fs::read(root.join(path.rel())).unwrap();
        content.extend_from_slice(b"// changed by the model\n");
        view.write(
            &path,
            &content,
            &WriteOrigin::new("edit_file", format!("c{k}")),
        )
        .unwrap();
    }
    ws
}

fn bench_changeset(ws: &Workspace, base: &Base, n: usize) -> ChangeSet {
    let mut cs = None;
    let ours =
        measure(|| timed(|| cs = Some(ChangeSet::from_workspace("model", base, ws).unwrap())));
    let reference = measure(|| {
        timed(|| {
            Command::new("git")
                .args(["status", "--porcelain", "--untracked-files=all"])
                .current_dir(ws.root())
                .stdout(Stdio::null())
                .status()
                .unwrap();
        })
    });
    let cs = cs.unwrap();
    assert_eq!(cs.files_changed(), n);
    // The same without the workspace scan: folding the recorded writes into hunks.
    let writes = ws.writes();
    let reader = BaseReader::new(base);
    let build = measure(|| {
        timed(|| drop(ChangeSet::build("model", base, &writes, &reader, Some(ws.root())).unwrap()))
    });
    row(
        &format!("change set of a finished model ({n} files written; scans the workspace)"),
        ours,
        "`git status` in the workspace",
        reference,
    );
    row(
        &format!("  of which: diffs and hunks of the {n} files"),
        build,
        "`git status` in the workspace",
        reference,
    );
    cs
}

fn bench_apply(root: &Path, scratch: &Path, cs: &ChangeSet, n: usize) {
    let selection = Selection::new().change_set("model");
    let sets = std::slice::from_ref(cs);
    let compose_time = measure(|| timed(|| drop(compose(sets, &selection, "bench").unwrap())));
    let plan = compose(sets, &selection, "bench").unwrap();
    let engine = ApplyEngine::new(root, &scratch.join("session")).unwrap();
    let preview = measure(|| timed(|| drop(engine.preview(&plan).unwrap())));
    let mut rewinds = Vec::new();
    let apply = measure(|| {
        let t = timed(|| {
            let report = engine.apply(&plan, &BTreeMap::new()).unwrap();
            assert_eq!(report.written().len(), n);
        });
        rewinds.push(timed(|| {
            let r = engine.rewind(false).unwrap();
            assert_eq!(r.restored.len(), n);
        }));
        t
    });
    rewinds.remove(0); // the warm-up
    let rewind = median(rewinds);
    // Reference: the least a durable write of the same files costs: write + fsync each.
    let originals: Vec<(PathBuf, Vec<u8>, Vec<u8>)> = plan
        .writes
        .iter()
        .map(|w| {
            (
                root.join(&w.path),
                w.base.clone().unwrap(),
                w.proposed.clone().unwrap(),
            )
        })
        .collect();
    let reference = measure(|| {
        let t = timed(|| {
            for (path, _, new) in &originals {
                let mut f = fs::File::create(path).unwrap();
                f.write_all(new).unwrap();
                f.sync_all().unwrap();
            }
        });
        for (path, old, _) in &originals {
            fs::write(path, old).unwrap();
        }
        t
    });
    // Reference for rewind: `git checkout` of the same files from a commit holding their
    // pre-apply content (the tree is rewound here, so it holds that content now). The commit is
    // made with a temporary index, so neither HEAD nor the index change before the checkout.
    let list = scratch.join("apply-paths.txt");
    let paths: Vec<&str> = plan.writes.iter().map(|w| w.path.as_str()).collect();
    fs::write(&list, paths.join("\n")).unwrap();
    let list_arg = list.to_str().unwrap();
    let index = scratch.join("pre-apply.index");
    git_with_index(root, &index, &["read-tree", "HEAD"]);
    git_with_index(root, &index, &["add", "--pathspec-from-file", list_arg]);
    let tree = git_with_index(root, &index, &["write-tree"]);
    let commit = git_with_index(
        root,
        &index,
        &["commit-tree", &tree, "-p", "HEAD", "-m", "pre"],
    );
    let checkout = measure(|| {
        for (path, _, new) in &originals {
            fs::write(path, new).unwrap();
        }
        let t = timed(|| {
            git(
                root,
                &["checkout", &commit, "--pathspec-from-file", list_arg],
            )
        });
        for (path, old, _) in &originals {
            assert!(
                fs::read(path).unwrap() == *old,
                "git checkout restored {path:?}"
            );
        }
        t
    });
    // Not a target, a gauge of the machine: creating as many new files as apply stages (any
    // temp + rename pays one new inode per file; ext4 makes that slow for a few minutes after
    // many files were deleted, by this bench or anything else on the filesystem).
    let spare = scratch.join("inode-gauge");
    let creates = measure(|| {
        fs::create_dir_all(&spare).unwrap();
        let t = timed(|| {
            for i in 0..n {
                drop(fs::File::create_new(spare.join(i.to_string())).unwrap());
            }
        });
        fs::remove_dir_all(&spare).unwrap();
        t
    });
    println!(
        "| compose (whole change set, {n} files) | {} | - | - | - |",
        ms(compose_time)
    );
    println!(
        "| preview (the decisions apply makes first; reads every file) | {} | - | - | - |",
        ms(preview)
    );
    row(
        &format!("apply, {n} files"),
        apply,
        "write + fsync each file",
        reference,
    );
    println!(
        "| gauge: create {n} empty files (the new inodes apply stages) | {} | - | - | - |",
        ms(creates)
    );
    row(
        &format!("rewind, {n} files"),
        rewind,
        "`git checkout <pre-apply commit> -- <the files>`",
        checkout,
    );
    row(
        &format!("rewind, {n} files"),
        rewind,
        "write + fsync each file",
        reference,
    );
}

/// Runs git in `dir` with `index` as its index file; returns its output, trimmed.
fn git_with_index(dir: &Path, index: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=bench",
            "-c",
            "user.email=bench@example.com",
        ])
        .args(args)
        .env("GIT_INDEX_FILE", index)
        .current_dir(dir)
        .stderr(Stdio::inherit())
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?} failed");
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

fn main() {
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let wants = |name: &str| filter.is_empty() || filter.iter().any(|f| name.contains(f.as_str()));
    let files = env_or("VERSUS_BENCH_FILES", 10_000).max(4);
    let mb = env_or("VERSUS_BENCH_MB", 200);
    let apply_files = env_or("VERSUS_BENCH_APPLY_FILES", 1_000).clamp(1, files);
    let scratch = match std::env::var("VERSUS_BENCH_DIR") {
        Ok(dir) => tempfile::tempdir_in(dir).unwrap(),
        Err(_) => tempfile::tempdir().unwrap(),
    };
    let scratch_path = scratch.path().canonicalize().unwrap();
    let root = scratch_path.join("repo");
    fs::create_dir_all(&root).unwrap();
    let t = Instant::now();
    generate(&root, files, mb * 1024 * 1024 / files);
    println!(
        "versus workspace benchmarks: {files} files, {mb} MB, median of {} runs after one warm-up \
         (repository generated in {:.1} s)\n",
        runs(),
        t.elapsed().as_secs_f64()
    );
    println!("| case | versus | reference | reference time | ratio |\n|---|---|---|---|---|");
    if wants("create") {
        bench_create(&root, &scratch_path, "clean tree");
    }
    if wants("ask") {
        for models in [4, 16] {
            bench_ask(&root, &scratch_path, models, "clean tree", &[]);
        }
    }
    if wants("pick") {
        bench_pick(&root, &scratch_path, apply_files, files);
    }
    make_dirty(&root, 40, files);
    if wants("ask") {
        bench_ask(&root, &scratch_path, 4, "40 modified + 10 untracked", &[]);
    }
    // Last: full checkouts delete tens of thousands of files, and ext4 hands out inodes more
    // slowly for minutes afterwards, which would burden the rows after it.
    if wants("ask-full") {
        bench_ask(
            &root,
            &scratch_path,
            4,
            "40 modified + 10 untracked, full checkouts",
            &[("VERSUS_COPY_ON_WRITE", "off")],
        );
    }
    if wants("create") {
        bench_create(&root, &scratch_path, "40 modified + 10 untracked files");
    }
    if wants("base") {
        bench_base(&root);
    }
    if wants("changeset") || wants("apply") {
        let base = Base::capture(&root).unwrap();
        let ws = model_workspace(&root, &scratch_path, &base, apply_files, files);
        let cs = bench_changeset(&ws, &base, apply_files);
        if wants("apply") {
            bench_apply(&root, &scratch_path, &cs, apply_files);
        }
    }
}
