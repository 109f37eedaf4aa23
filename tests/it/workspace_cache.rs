//! Frozen checkouts kept across runs (`workspace::cow::cache`): a later run of the same commit
//! and the same uncommitted state reuses the checkout instead of writing it again, yet every
//! model sees exactly the user's state of its own turn, never what a model of another run
//! wrote, and a checkout in use by one versus is never removed by another.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use crate::util::users::Who;
use crate::util::{self, git};

struct Lab {
    _tmp: tempfile::TempDir,
    base: PathBuf,
    root: PathBuf,
    temp: PathBuf,
    sync: PathBuf,
    who: Who,
}

/// A repository with `src/main.rs` committed and edited since (uncommitted), and a folder
/// models may write to signal each other.
fn lab() -> Lab {
    lab_as(Who::Me)
}

/// [`lab`] for `who`: its folders handed to that user.
fn lab_as(who: Who) -> Lab {
    let tmp = util::tempdir();
    let base = tmp.path().canonicalize().unwrap();
    let root = base.join("project");
    let temp = base.join("tmp");
    let sync = base.join("sync");
    for dir in [&root.join("src"), &temp, &sync, &base.join("config/versus")] {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::fs::write(root.join("src/main.rs"), "committed\n").unwrap();
    std::fs::write(root.join(".gitignore"), "scripts/\n").unwrap();
    git(&root, &["init", "-q"]);
    git(&root, &["add", "."]);
    git(&root, &["commit", "-qm", "init"]);
    std::fs::write(root.join("src/main.rs"), "committed\nfirst edit\n").unwrap();
    std::fs::write(
        base.join("config/versus/config.toml"),
        format!("[sandbox]\nwritable = [\"{}\"]\n", sync.display()),
    )
    .unwrap();
    util::users::give_away(&base, who);
    Lab {
        _tmp: tmp,
        base,
        root,
        temp,
        sync,
        who,
    }
}

impl Lab {
    /// A demo model (ignored `scripts/` folder) that runs `command` with bash once.
    fn model(&self, name: &str, command: &str) -> String {
        let step = serde_json::json!({"tools": [{"name": "bash", "args": {"command": command}}]});
        let path = self.root.join("scripts").join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, format!("{step}\n{{\"say\": \"done\"}}\n")).unwrap();
        format!("demo/scripts/{name}")
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = self.who.versus();
        command
            .arg("-C")
            .arg(&self.root)
            .args(args)
            .env("XDG_CONFIG_HOME", self.base.join("config"))
            .env("XDG_STATE_HOME", self.base.join("state"))
            .env("TMPDIR", &self.temp);
        command
    }

    /// `versus ask` with `model`, logging to `log`; asserts success.
    fn ask(&self, model: &str, log: &str) -> Output {
        let log = self.base.join(log).display().to_string();
        let out = self
            .command(&["--log", &log, "ask", "x", "-m", model])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    fn spawn_ask(&self, model: &str) -> Child {
        self.command(&["ask", "x", "-m", model])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    fn log(&self, name: &str) -> String {
        std::fs::read_to_string(self.base.join(name)).unwrap_or_default()
    }

    fn parent(&self) -> PathBuf {
        util::users::workspaces_parent(&self.temp, self.who)
    }

    /// The names under the workspace parent: kept checkouts, and everything else.
    fn folders(&self) -> (Vec<String>, Vec<String>) {
        let mut names: Vec<String> = std::fs::read_dir(self.parent())
            .map(|rd| {
                rd.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names.into_iter().partition(|n| n.starts_with("cache-"))
    }
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Waits (bounded) for `path` to exist.
fn wait_for(path: &Path) {
    for _ in 0..600 {
        if path.exists() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("{} never appeared", path.display());
}

#[test]
/// Played as root and as an unprivileged user: a kept checkout never shows another run's
/// changes, whoever runs versus.
fn a_later_run_reuses_the_kept_checkout_and_sees_its_own_state_only() {
    for who in Who::BOTH {
        let lab = lab_as(who);
        let first = lab.model(
            "first.jsonl",
            "cat src/main.rs > seen.txt; echo leak > leaked.txt; echo by-the-model >> src/main.rs",
        );
        let out = lab.ask(&first, "first.log");
        assert!(stdout(&out).contains("+first edit"), "{}", stdout(&out));
        // A repository gets a kept checkout of its commit and a layer of the user's changes;
        // a copy (no usable repository, as for the unprivileged user here) a kept checkout
        // of the whole state.
        let layered = lab
            .log("first.log")
            .contains("checkout of the commit written");
        let (kept, others) = lab.folders();
        assert_eq!(kept.len(), 1, "{kept:?}");
        assert!(others.is_empty(), "folders left: {others:?}");

        // Same commit, same uncommitted state: the checkout is reused, and nothing the first
        // run's model wrote is there.
        let look = "cat src/main.rs > seen.txt; ls leaked.txt > ls.txt 2>&1; true";
        let second = lab.model("second.jsonl", look);
        let out = lab.ask(&second, "second.log");
        let text = stdout(&out);
        let reused = if layered {
            "kept checkout of the commit reused"
        } else {
            "kept frozen base reused"
        };
        assert!(
            lab.log("second.log").contains(reused),
            "{}",
            lab.log("second.log")
        );
        assert!(
            text.contains("+committed\n+first edit\n"),
            "the model did not see the user's state:\n{text}"
        );
        assert!(
            !text.contains("by-the-model"),
            "another run's edit:\n{text}"
        );
        assert!(text.contains("No such file"), "another run's file:\n{text}");
        assert_eq!(lab.folders().0, kept);

        // The user edits between runs: the next run sees the edit, laid over the same kept
        // checkout of the commit (nothing of the earlier runs' models there either); a copy
        // gets a checkout of its own.
        std::fs::write(lab.root.join("src/main.rs"), "committed\nsecond edit\n").unwrap();
        let third = lab.model("third.jsonl", look);
        let out = lab.ask(&third, "third.log");
        let text = stdout(&out);
        assert!(text.contains("+second edit"), "{text}");
        assert!(!text.contains("first edit"), "{text}");
        assert!(
            !text.contains("by-the-model"),
            "another run's edit:\n{text}"
        );
        assert!(text.contains("No such file"), "another run's file:\n{text}");
        if layered {
            assert!(
                lab.log("third.log")
                    .contains("kept checkout of the commit reused"),
                "{}",
                lab.log("third.log")
            );
        } else {
            assert!(!lab.log("third.log").contains("kept frozen base reused"));
        }
        let (kept, others) = lab.folders();
        assert_eq!(kept.len(), if layered { 1 } else { 2 }, "{kept:?}");
        assert!(others.is_empty(), "folders left: {others:?}");

        // `versus clean` removes the kept checkouts nobody uses.
        let out = lab.command(&["clean"]).output().unwrap();
        assert!(out.status.success());
        assert_eq!(lab.folders(), (vec![], vec![]));
    }
}

/// Between two runs the user edits a tracked file, adds an untracked one and deletes a
/// tracked one (and a tracked file the ignore rules hide). The second run reuses the kept
/// checkout of the commit and lays only those changes over it: its model sees exactly the
/// user's new files, and its own edit is diffed against them.
#[test]
fn a_later_run_after_the_user_changed_files_sees_them_through_a_thin_layer() {
    // Played as root and as an unprivileged user (who gets a copy of the whole state where
    // no repository is usable: the same files must be seen either way).
    for who in Who::BOTH {
        let lab = lab_as(who);
        std::fs::create_dir_all(lab.root.join("docs")).unwrap();
        std::fs::write(lab.root.join("src/lib.rs"), "lib\n").unwrap();
        std::fs::write(lab.root.join("docs/gone.txt"), "bye\n").unwrap();
        std::fs::write(lab.root.join("trace.log"), "tracked but ignored\n").unwrap();
        std::fs::write(lab.root.join(".gitignore"), "scripts/\n*.log\n").unwrap();
        git(
            &lab.root,
            &["add", "src/lib.rs", "docs/gone.txt", ".gitignore"],
        );
        git(&lab.root, &["add", "-f", "trace.log"]);
        git(&lab.root, &["commit", "-qm", "more"]);
        let look = lab.model(
            "look.jsonl",
            "for f in src/main.rs src/lib.rs new.txt docs/gone.txt trace.log; do \
             echo \"== $f\"; cat $f 2>&1 | sed 's/.*No such file.*/(none)/'; done > seen.txt; \
             echo by-the-model >> src/lib.rs",
        );
        let out = lab.ask(&look, "first.log");
        let layered = lab
            .log("first.log")
            .contains("checkout of the commit written");
        assert!(
            layered || who.drops(),
            "root gets the kept checkout of the commit: {}",
            lab.log("first.log")
        );
        let text = stdout(&out);
        // A copy workspace (no usable repository) honours the ignore rules even for a file
        // git tracks, so it lacks trace.log; a checkout of the commit has it.
        let ignored_but_tracked = if layered {
            "+tracked but ignored\n"
        } else {
            "+(none)\n"
        };
        assert!(
            text.contains(&format!(
                "+== src/main.rs\n+committed\n+first edit\n+== src/lib.rs\n+lib\n\
                 +== new.txt\n+(none)\n+== docs/gone.txt\n+bye\n+== trace.log\n\
                 {ignored_but_tracked}"
            )),
            "{who:?}: {text}"
        );
        let (kept, others) = lab.folders();
        assert_eq!(kept.len(), 1, "{kept:?}");
        assert!(others.is_empty(), "folders left: {others:?}");

        // The user's changes between the runs.
        std::fs::write(lab.root.join("src/lib.rs"), "lib\nuser edit\n").unwrap();
        std::fs::write(lab.root.join("new.txt"), "untracked\n").unwrap();
        std::fs::remove_file(lab.root.join("docs/gone.txt")).unwrap();
        std::fs::remove_file(lab.root.join("trace.log")).unwrap();
        let out = lab.ask(&look, "second.log");
        let text = stdout(&out);
        let log = lab.log("second.log");
        if layered {
            assert!(log.contains("kept checkout of the commit reused"), "{log}");
            assert!(
                log.contains(
                    "uncommitted state laid over the kept checkout copied=3 linked=0 hidden=2"
                ),
                "{log}"
            );
        }
        assert!(
            text.contains(
                "+== src/main.rs\n+committed\n+first edit\n+== src/lib.rs\n+lib\n+user edit\n\
                 +== new.txt\n+untracked\n+== docs/gone.txt\n+(none)\n+== trace.log\n+(none)\n"
            ),
            "the model did not see exactly the user's files:\n{text}"
        );
        // The model's edit is measured against the user's new state, not the commit.
        assert!(
            text.contains("@@ -1,2 +1,3 @@\n lib\n user edit\n+by-the-model\n"),
            "{text}"
        );
        // One kept checkout (the commit's), and the layer went with the run; a copy keeps a
        // checkout of each state.
        if layered {
            assert_eq!(lab.folders().0, kept);
        }
        assert!(lab.folders().1.is_empty(), "{:?}", lab.folders().1);
        let out = lab.command(&["clean"]).output().unwrap();
        assert!(out.status.success());
        assert_eq!(lab.folders(), (vec![], vec![]));
    }
}

#[test]
fn concurrent_runs_share_a_kept_checkout_and_each_sees_its_own_users_state() {
    let lab = lab();
    let sync = lab.sync.display();
    // A holds its checkout while the others run, the user edits, and `versus clean` runs.
    let holder = lab.model(
        "holder.jsonl",
        &format!(
            "cat src/main.rs > before.txt; touch {sync}/a-started; \
             for i in $(seq 600); do [ -e {sync}/go ] && break; sleep 0.05; done; \
             cat src/main.rs > after.txt"
        ),
    );
    let a = lab.spawn_ask(&holder);
    wait_for(&lab.sync.join("a-started"));
    let (kept, _) = lab.folders();
    assert_eq!(kept.len(), 1, "{kept:?}");

    // Two more runs start together on the same state while A holds the checkout.
    let look = lab.model("look.jsonl", "cat src/main.rs > seen.txt");
    let b = lab.spawn_ask(&look);
    let c = lab.spawn_ask(&look);
    for child in [b, c] {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(stdout(&out).contains("+first edit"), "{}", stdout(&out));
    }
    assert_eq!(
        lab.folders().0,
        kept,
        "the same state made another checkout"
    );

    // Cleaning while A runs leaves A's checkout alone.
    let out = lab.command(&["clean"]).output().unwrap();
    assert!(out.status.success());
    assert_eq!(lab.folders().0, kept, "a checkout in use was removed");

    // The user edits; a new run sees the edit.
    std::fs::write(lab.root.join("src/main.rs"), "committed\nsecond edit\n").unwrap();
    let out = lab.spawn_ask(&look).wait_with_output().unwrap();
    assert!(out.status.success());
    assert!(stdout(&out).contains("+second edit"), "{}", stdout(&out));

    // A, still running, sees its own turn's state to the end.
    std::fs::write(lab.sync.join("go"), "").unwrap();
    let out = a.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = stdout(&out);
    assert!(
        text.contains("+++ b/after.txt\n@@ -0,0 +1,2 @@\n+committed\n+first edit\n"),
        "{text}"
    );
    assert!(!text.contains("second edit"), "{text}");
    // Every run, the edited state's too, used the one kept checkout of the commit.
    let (kept, others) = lab.folders();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert!(others.is_empty(), "folders left: {others:?}");
    let out = lab.command(&["clean"]).output().unwrap();
    assert!(out.status.success());
    assert_eq!(lab.folders(), (vec![], vec![]));
}

/// Two turns of one session through the session engine, as the TUI runs them: between them
/// the user rewrites a file with content of the same size and puts its modification time
/// back (as `cp -p` or an editor restoring times would), so only its change time differs.
/// The second turn's model must see the new content, and nothing the first turn's model
/// wrote.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_later_turn_sees_the_users_edit_between_turns_even_with_the_old_size_and_mtime() {
    use std::sync::Arc;
    use versus::agent::{Agent, AgentSettings, system_prompt};
    use versus::engine::{EngineEvent, HistoryPolicy, Op, SessionEngine, TurnRequest, TurnTarget};
    use versus::provider::demo::DemoModel;
    use versus::runner::RunOptions;
    use versus::session::{Source, Store};
    use versus::tools::{ToolLimits, ToolRegistry};
    use versus::workspace::Isolation;

    let lab = lab();
    let tools = Arc::new(ToolRegistry::builtin());
    let bash = |command: &str| serde_json::json!({"tools": [{"name": "bash", "args": {"command": command}}]});
    let script = format!(
        "{}\n{{\"say\": \"one\"}}\n{}\n{{\"say\": \"two\"}}\n",
        bash("cat src/main.rs > seen.txt; echo leak > leaked.txt"),
        bash("cat src/main.rs > seen.txt; ls leaked.txt > ls.txt 2>&1; true")
    );
    let target = TurnTarget {
        label: "demo/look".into(),
        agent: Agent {
            client: Arc::new(DemoModel::parse("demo/look", &script).unwrap()),
            model: "demo/look".into(),
            settings: AgentSettings {
                system: system_prompt(&tools.guidance(), None),
                ..AgentSettings::default()
            },
            tools,
            cost: None,
        },
        window: None,
    };
    let store = Store::open_with(
        &lab.root,
        versus::session::OwnerKey::at(&lab.base.join("state/store-key")).unwrap(),
    )
    .unwrap();
    let engine = SessionEngine::create(store, Source::Tui, vec!["demo/look".into()]).unwrap();
    let (engine, mut events) = engine.spawn();
    // Older than a capture trusts (see workspace::stat_cache): only its stamp can tell.
    std::thread::sleep(Duration::from_secs(3));
    let mut seen = Vec::new();
    for n in 0..2 {
        if n == 1 {
            let file = lab.root.join("src/main.rs");
            let mtime = std::fs::metadata(&file).unwrap().modified().unwrap();
            std::fs::write(&file, "committed\nFIRST EDIT\n").unwrap();
            std::fs::File::options()
                .write(true)
                .open(&file)
                .unwrap()
                .set_modified(mtime)
                .unwrap();
        }
        engine
            .submit(Op::StartTurn(TurnRequest {
                prompt: format!("turn {n}"),
                attached: String::new(),
                targets: vec![target.clone()],
                options: RunOptions {
                    isolation: Isolation::Worktree,
                    limits: ToolLimits::default(),
                    setup: None,
                    workspace_parent: Some(lab.parent()),
                    spill_dir: lab.base.join("spill"),
                    output_filter: None,
                    sandbox: versus::exec::SandboxSettings::default(),
                    limit: None,
                    mcp: None,
                },
                policy: HistoryPolicy::default(),
                check: None,
                history_line: None,
                workspaces: Default::default(),
                context: Default::default(),
                tasks: Vec::new(),
            }))
            .unwrap();
        let set = loop {
            match events.recv().await.unwrap() {
                EngineEvent::ModelFinished { change_set, .. } => break change_set.unwrap(),
                EngineEvent::Failed { error, .. } => panic!("{error}"),
                _ => {}
            }
        };
        let text = |path: &str| {
            set.file(path)
                .and_then(|f| f.proposed.clone())
                .map(|b| String::from_utf8(b.to_vec()).unwrap())
                .unwrap_or_default()
        };
        seen.push((text("seen.txt"), text("ls.txt")));
    }
    engine
        .submit(Op::Shutdown {
            keep_workspaces: false,
        })
        .unwrap();
    while events.recv().await.is_some() {}
    assert_eq!(seen[0].0, "committed\nfirst edit\n");
    assert_eq!(
        seen[1].0, "committed\nFIRST EDIT\n",
        "the edit between turns was missed"
    );
    assert!(seen[1].1.contains("No such file"), "{:?}", seen[1].1);
}

/// A new process reuses the hashes an earlier run kept (in the user's state folder, never in
/// the project), and a file changed since, even with its old size and modification time, is
/// read again: the model sees its new content.
#[test]
fn a_new_run_reads_only_the_files_changed_since_the_last_one() {
    let lab = lab();
    std::fs::write(lab.root.join("src/other.rs"), "other\n").unwrap();
    let look = lab.model("look.jsonl", "cat src/main.rs > seen.txt");
    // Older than a capture trusts (see workspace::stat_cache): only the stamp can tell.
    std::thread::sleep(Duration::from_secs(3));
    lab.ask(&look, "first.log");
    // `.gitignore`, `src/main.rs`, `src/other.rs`.
    assert!(
        lab.log("first.log").contains("read=3"),
        "{}",
        lab.log("first.log")
    );
    let kept: Vec<_> = std::fs::read_dir(lab.base.join("state/versus/hashes"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    let out = lab.ask(&look, "second.log");
    assert!(
        lab.log("second.log").contains("read=0"),
        "{}",
        lab.log("second.log")
    );
    assert!(stdout(&out).contains("+first edit"), "{}", stdout(&out));

    // Same size, the old modification time put back: only the change time differs.
    let file = lab.root.join("src/main.rs");
    let mtime = std::fs::metadata(&file).unwrap().modified().unwrap();
    std::fs::write(&file, "committed\nFIRST EDIT\n").unwrap();
    std::fs::File::options()
        .write(true)
        .open(&file)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    let out = lab.ask(&look, "third.log");
    assert!(
        lab.log("third.log").contains("read=1"),
        "{}",
        lab.log("third.log")
    );
    let text = stdout(&out);
    assert!(text.contains("+FIRST EDIT"), "{text}");
    assert!(!text.contains("first edit"), "{text}");
    let out = lab.command(&["clean"]).output().unwrap();
    assert!(out.status.success());
}
