//! The sandbox against a hostile model: scripted demo models in a real `versus ask` try every
//! attack of issue 11 (reach the project, its repository, the user's home and keys, other
//! processes, the network, outlive the run) and the tests assert the harm did not happen.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use util::{command_alive, command_gone, git, tree_state, versus};

/// The key versus holds in its environment; it must appear nowhere a model can read.
const CANARY: &str = "sk-canary-4f1d2e9b7a";

struct World {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    outside: PathBuf,
    config: PathBuf,
    workspaces: PathBuf,
}

/// A repository with a commit, an uncommitted edit and an ignored folder of scripts; a fake
/// home with secrets and a dotfile; a folder outside the project.
fn world() -> World {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let root = base.join("project");
    let home = base.join("home");
    let outside = base.join("outside");
    let config = base.join("config");
    let workspaces = base.join("tmp");
    for dir in [&root, &home, &outside, &config, &workspaces] {
        std::fs::create_dir_all(dir).unwrap();
    }
    let write = |p: PathBuf, c: &str| {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, c).unwrap();
    };
    write(root.join("src/main.rs"), "fn main() {}\n");
    write(root.join(".gitignore"), "scripts/\n");
    write(home.join(".bashrc"), "# mine\n");
    write(home.join(".ssh/id_ed25519"), "PRIVATE KEY\n");
    write(outside.join("keep.txt"), "outside\n");
    git(&root, &["init", "-q"]);
    git(&root, &["add", "."]);
    git(&root, &["commit", "-qm", "init"]);
    write(root.join("src/main.rs"), "fn main() { /* wip */ }\n");
    World {
        _tmp: tmp,
        root,
        home,
        outside,
        config,
        workspaces,
    }
}

impl World {
    fn script(&self, name: &str, commands: &[&str]) -> String {
        let mut text = String::new();
        for command in commands {
            let step =
                serde_json::json!({"tools": [{"name": "bash", "args": {"command": command}}]});
            text.push_str(&step.to_string());
            text.push('\n');
        }
        text.push_str("{\"say\": \"done\"}\n");
        let path = self.root.join("scripts").join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        format!("demo/scripts/{name}")
    }

    fn user_config(&self, toml: &str) {
        let dir = self.config.join("versus");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("config.toml"), toml).unwrap();
    }

    fn ask(&self, model: &str, extra: &[&str]) -> Output {
        self.ask_with(model, extra, &[])
    }

    /// [`World::ask`] with further environment variables.
    fn ask_with(&self, model: &str, extra: &[&str], envs: &[(&str, &str)]) -> Output {
        versus()
            .envs(envs.iter().copied())
            .arg("-C")
            .arg(&self.root)
            .args(["ask", "do it", "-m", model])
            .args(extra)
            .env("XDG_CONFIG_HOME", &self.config)
            // versus's own state (its ownership key) outside the home folder the tests compare.
            .env("XDG_STATE_HOME", self.config.with_file_name("state"))
            .env("HOME", &self.home)
            .env("TMPDIR", &self.workspaces)
            .env("OPENAI_API_KEY", CANARY)
            .env("ANTHROPIC_API_KEY", CANARY)
            .output()
            .unwrap()
    }

    /// `versus rewind -y` in the project, as the user.
    fn rewind(&self) -> Output {
        versus()
            .arg("-C")
            .arg(&self.root)
            .args(["rewind", "-y"])
            .env("XDG_CONFIG_HOME", &self.config)
            // versus's own state (its ownership key) outside the home folder the tests compare.
            .env("XDG_STATE_HOME", self.config.with_file_name("state"))
            .env("HOME", &self.home)
            .output()
            .unwrap()
    }

    /// Everything a user could lose: the project's files and modes, its refs, config, hooks
    /// and stash, the home folder and a folder outside the project.
    fn state(&self) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        out.insert("tree".into(), format!("{:?}", tree_state(&self.root)));
        out.insert("home".into(), format!("{:?}", tree_state(&self.home)));
        out.insert("outside".into(), format!("{:?}", tree_state(&self.outside)));
        let git_out = |args: &[&str]| {
            let o = Command::new("git")
                .args(args)
                .current_dir(&self.root)
                .output()
                .unwrap();
            String::from_utf8_lossy(&o.stdout).into_owned()
        };
        out.insert("refs".into(), git_out(&["for-each-ref"]));
        out.insert("stash".into(), git_out(&["stash", "list"]));
        out.insert("worktrees".into(), git_out(&["worktree", "list"]));
        out.insert(
            "config".into(),
            std::fs::read_to_string(self.root.join(".git/config")).unwrap(),
        );
        let mut hooks: Vec<String> = std::fs::read_dir(self.root.join(".git/hooks"))
            .map(|rd| {
                rd.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        hooks.sort();
        out.insert("hooks".into(), hooks.join(","));
        out
    }

    /// The text of every file versus wrote for the session (events, conversations).
    fn session_text(&self) -> String {
        let mut text = String::new();
        let mut stack = vec![self.root.join(".versus")];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(dir).unwrap().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                } else {
                    text.push_str(&String::from_utf8_lossy(&std::fs::read(&path).unwrap()));
                }
            }
        }
        text
    }
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Every attack of the issue, by a model that knows the real paths.
fn attacks(w: &World) -> Vec<String> {
    let project = w.root.display().to_string();
    let home = w.home.display().to_string();
    let outside = w.outside.display().to_string();
    // Matches the key without spelling it, so the command text itself cannot leak it.
    let pattern = format!(
        "{}[{}]",
        &CANARY[..CANARY.len() - 1],
        &CANARY[CANARY.len() - 1..]
    );
    vec![
        // Finding the project.
        "cat ../versus-workspace.json; git worktree list; cat .git 2>&1 | head -2; \
         grep -rl project /proc/self/mountinfo; echo discovered-end"
            .to_string(),
        // Writing the project, the home folder, a folder outside.
        format!(
            "echo pwned >> {project}/src/main.rs; touch {project}/evil.txt; \
             echo pwned >> {home}/.bashrc; cat {home}/.ssh/id_ed25519; \
             echo pwned > {outside}/keep.txt; echo pwned > $HOME/.bashrc; echo writes-end"
        ),
        // The user's repository through git.
        format!(
            "git -C {project} update-ref refs/heads/evil HEAD; git -C {project} tag evil; \
             git -C {project} config core.fsmonitor 'touch /tmp/fsmonitor-ran'; \
             echo evil > {project}/.git/hooks/pre-commit; echo git-end"
        ),
        // Private git state in the workspace: all of this must work, and stay here.
        "git update-ref refs/heads/main HEAD && git tag mine && git config core.fsmonitor false \
         && echo hook > .git/hooks/pre-commit && echo change >> src/main.rs && git stash -q \
         && git stash list | wc -l && git -c user.name=m -c user.email=m@x commit -q \
         --allow-empty -m model-commit && git log --oneline | head -3 && echo private-git-end"
            .to_string(),
        // Keys: the parent's environment, every process's environment, our own.
        format!(
            "tr '\\0' '\\n' < /proc/$PPID/environ; cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n' \
             | grep -c '{pattern}'; env | grep -c '{pattern}'; ls /proc | grep -c '^[0-9]'; echo keys-end"
        ),
    ]
}

/// Copy-on-write workspaces (overlays over one frozen checkout) are the default where they
/// work; `VERSUS_COPY_ON_WRITE=off` makes full checkouts. Both must hold.
const FULL_CHECKOUT: (&str, &str) = ("VERSUS_COPY_ON_WRITE", "off");

fn assert_attacks_failed(w: &World, mode: &str) {
    assert_attacks_failed_with(w, mode, &[]);
}

fn assert_attacks_failed_with(w: &World, mode: &str, envs: &[(&str, &str)]) {
    let commands = attacks(w);
    let refs: Vec<&str> = commands.iter().map(String::as_str).collect();
    let model = w.script(&format!("attack-{mode}.jsonl"), &refs);
    let before = w.state();
    let out = w.ask_with(&model, &["--isolation", mode], envs);
    assert!(out.status.success(), "{mode}: {}", stderr(&out));
    assert_eq!(
        w.state(),
        before,
        "{mode}: the attack changed the user's state"
    );
    let session = w.session_text();
    assert!(
        !session.contains(CANARY),
        "{mode}: a key reached the session log"
    );
    assert!(
        !session.contains("PRIVATE KEY"),
        "{mode}: the ssh key was read"
    );
    assert!(
        !Path::new("/tmp/fsmonitor-ran").exists(),
        "{mode}: the fsmonitor command ran"
    );
    // The model got clear errors, not silent success.
    for needle in [
        "No such file or directory",
        "discovered-end",
        "writes-end",
        "git-end",
        "keys-end",
    ] {
        assert!(session.contains(needle), "{mode}: `{needle}` missing");
    }
    assert!(
        session.contains("../versus-workspace.json: No such file or directory"),
        "{mode}: the workspace marker (which names the project) was readable"
    );
    if mode == "worktree" {
        assert!(
            session.contains("model-commit"),
            "git commit failed in the workspace"
        );
        assert!(
            session.contains("private-git-end"),
            "private git state failed"
        );
    }
}

#[test]
fn attacks_leave_the_users_files_repository_home_and_keys_untouched_in_worktree_mode() {
    assert_attacks_failed(&world(), "worktree");
}

#[test]
fn attacks_leave_the_users_files_repository_home_and_keys_untouched_in_copy_mode() {
    assert_attacks_failed(&world(), "copy");
}

#[test]
fn attacks_fail_in_full_checkouts_too() {
    assert_attacks_failed_with(&world(), "worktree", &[FULL_CHECKOUT]);
    assert_attacks_failed_with(&world(), "copy", &[FULL_CHECKOUT]);
}

/// The diff part of `versus ask`'s output (from the first `diff --git`).
fn diffs(out: &Output) -> String {
    let text = String::from_utf8_lossy(&out.stdout);
    text.find("diff --git")
        .map(|at| text[at..].to_string())
        .unwrap_or_default()
}

#[test]
fn copy_on_write_workspaces_propose_exactly_what_full_checkouts_do() {
    let w = world();
    std::fs::create_dir_all(w.root.join("src/nested")).unwrap();
    std::fs::write(w.root.join("src/nested/lib.rs"), "pub fn f() {}\n").unwrap();
    std::fs::write(w.root.join("notes.txt"), "untracked\n").unwrap();
    let model = w.script(
        "cow.jsonl",
        &[
            "stat -f -c %T . > fs.txt",
            "echo appended >> src/main.rs && rm notes.txt && rm -rf src/nested && \
             mkdir src/nested && echo replaced > src/nested/other.rs && chmod +x src/main.rs && \
             git -c user.name=m -c user.email=m@x commit -qam model-commit && echo cow-end",
        ],
    );
    let before = w.state();
    let cow = w.ask(&model, &[]);
    assert!(cow.status.success(), "{}", stderr(&cow));
    let full = w.ask_with(&model, &[], &[FULL_CHECKOUT]);
    assert!(full.status.success(), "{}", stderr(&full));
    assert_eq!(w.state(), before, "a run changed the user's state");
    let (cow, full) = (diffs(&cow), diffs(&full));
    assert!(cow.contains("+overlayfs"), "not an overlay:\n{cow}");
    assert!(
        !full.contains("+overlayfs"),
        "full checkout is an overlay:\n{full}"
    );
    let without_fs = |d: &str| d[d.find("diff --git a/notes.txt").unwrap()..].to_string();
    assert_eq!(without_fs(&cow), without_fs(&full));
    for expected in [
        "deleted file mode 100644\n--- a/notes.txt",
        "+appended",
        "--- a/src/nested/lib.rs\n+++ /dev/null",
        "+++ b/src/nested/other.rs",
    ] {
        assert!(cow.contains(expected), "`{expected}` missing:\n{cow}");
    }
    let left: Vec<_> = std::fs::read_dir(util::users::workspaces_parent(
        &w.workspaces,
        util::users::Who::Me,
    ))
    .unwrap()
    .flatten()
    .map(|e| e.file_name())
    // The frozen checkout is kept for later runs of the same state (workspace::cow::cache).
    .filter(|name| !name.to_string_lossy().starts_with("cache-"))
    .collect();
    assert!(left.is_empty(), "workspace folders left: {left:?}");
}

#[test]
fn a_model_cannot_reach_the_shared_lower_layer_nor_another_models_workspace() {
    let w = world();
    let sync = w.home.parent().unwrap().join("sync");
    std::fs::create_dir_all(&sync).unwrap();
    w.user_config(&format!("[sandbox]\nwritable = [\"{}\"]\n", sync.display()));
    let sync = sync.display();
    // The destroyer finds the frozen base in the mount table and tries it, then wipes its
    // own tree; the reader waits until that happened before it reads.
    let destroyer = w.script(
        "destroyer.jsonl",
        &[&format!(
            "lower=$(grep -o 'lowerdir=[^,]*' /proc/self/mountinfo | head -1 | cut -d= -f2); \
             echo \"lower is $lower\"; ls \"$lower\"; touch \"$lower/evil\"; \
             rm -rf ./* .gitignore; ls -A | wc -l; touch {sync}/destroyed; echo destroyer-end"
        )],
    );
    let reader = w.script(
        "reader.jsonl",
        &[&format!(
            "for i in $(seq 600); do [ -e {sync}/destroyed ] && break; sleep 0.05; done; \
             ls {sync}; cat src/main.rs > seen.txt"
        )],
    );
    let before = w.state();
    let out = versus()
        .arg("-C")
        .arg(&w.root)
        .args(["ask", "do it", "-m", &destroyer, "-m", &reader])
        .env("XDG_CONFIG_HOME", &w.config)
        .env("XDG_STATE_HOME", w.config.with_file_name("state"))
        .env("HOME", &w.home)
        .env("TMPDIR", &w.workspaces)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(w.state(), before);
    let session = w.session_text();
    assert!(
        session.contains("lower is /"),
        "no lower layer named:\n{session}"
    );
    assert!(session.contains("destroyer-end"));
    assert!(
        session.contains("No such file or directory"),
        "the lower layer was reachable"
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("+fn main() { /* wip */ }"),
        "the reader did not see the project after the destroyer wiped its own:\n{text}\n{session}"
    );
}

#[test]
fn overlay_mode_refuses_commands_instead_of_running_them_in_the_users_tree() {
    let w = world();
    let project = w.root.display().to_string();
    let model = w.script(
        "overlay.jsonl",
        &[&format!(
            "echo pwned >> {project}/src/main.rs; touch made-by-bash"
        )],
    );
    let before = w.state();
    let out = w.ask(&model, &["--isolation", "overlay"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("model commands (bash, setup) are refused"));
    assert_eq!(w.state(), before);
    assert!(
        w.session_text()
            .contains("in-memory isolation keeps the model's changes in memory")
    );
}

/// A tiny HTTP server on loopback that answers every request with `reached`.
fn local_server() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut stream = stream;
            let mut buf = [0u8; 1024];
            let _ = stream.read(&mut buf);
            let _ = stream.write_all(b"HTTP/1.0 200 OK\r\nContent-Length: 7\r\n\r\nreached");
        }
    });
    port
}

#[test]
fn commands_have_no_network_unless_allowed() {
    let w = world();
    let port = local_server();
    let fetch = format!(
        "python3 -c \"import urllib.request; print('got', urllib.request.urlopen('http://127.0.0.1:{port}/', timeout=5).read().decode())\" 2>&1 | tail -1; echo net-end"
    );
    let model = w.script("net.jsonl", &[&fetch]);
    let out = w.ask(&model, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let session = w.session_text();
    assert!(session.contains("net-end"), "{session}");
    assert!(
        !session.contains("got reached"),
        "network reached by default"
    );

    w.user_config("[sandbox]\nnetwork = true\n");
    let model = w.script("net2.jsonl", &[&fetch]);
    let out = w.ask(&model, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        w.session_text().contains("got reached"),
        "network = true did not allow it"
    );
}

#[test]
fn an_unavailable_sandbox_refuses_commands_and_off_runs_them_with_a_warning() {
    let w = world();
    w.user_config("[sandbox]\nprogram = \"/nonexistent/bwrap\"\n");
    let model = w.script("refused.jsonl", &["touch ran-anyway; echo ran"]);
    let out = w.ask(&model, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("model commands will be refused"),
        "{}",
        stderr(&out)
    );
    let session = w.session_text();
    assert!(
        session.contains("the command sandbox cannot start"),
        "{session}"
    );
    assert!(session.contains("sandbox = \\\"off\\\""), "{session}");
    assert!(
        !session.contains("[exit code: 0]"),
        "the command ran unconfined"
    );

    w.user_config("[sandbox]\nsandbox = \"off\"\n");
    let model = w.script("off.jsonl", &["echo ran-unconfined"]);
    let out = w.ask(&model, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("WARNING: sandbox is off"),
        "{}",
        stderr(&out)
    );
    assert!(w.session_text().contains("ran-unconfined"));
}

#[test]
fn a_project_cannot_configure_its_own_sandbox() {
    let w = world();
    std::fs::create_dir_all(w.root.join(".versus")).unwrap();
    std::fs::write(
        w.root.join(".versus/config.toml"),
        "[sandbox]\nsandbox = \"off\"\n",
    )
    .unwrap();
    let model = w.script("p.jsonl", &["echo hi"]);
    // Untrusted, the project's config is ignored as a whole: the run is confined as usual.
    let out = w.ask(&model, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("ignored"), "{}", stderr(&out));
    assert!(!stderr(&out).contains("sandbox is off"), "{}", stderr(&out));
    // Trusted, a [sandbox] table there is an error, not a setting.
    let out = w.ask(&model, &["--trust"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("[sandbox] is only read from your own config"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn commands_die_when_versus_is_killed_with_sigkill() {
    let w = world();
    let marker = format!("600.{}", std::process::id());
    let model = w.script(
        "sigkill.jsonl",
        &[&format!("setsid sleep {marker} & sleep {marker}1; wait")],
    );
    let child = versus()
        .arg("-C")
        .arg(&w.root)
        .args(["ask", "x", "-m", &model])
        .env("XDG_CONFIG_HOME", &w.config)
        .env("XDG_STATE_HOME", w.config.with_file_name("state"))
        .env("TMPDIR", &w.workspaces)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut waited = 0;
    while !(command_alive(&["sleep", &marker]) && command_alive(&["sleep", &format!("{marker}1")]))
    {
        std::thread::sleep(Duration::from_millis(100));
        waited += 1;
        assert!(waited < 300, "the model never started its command");
    }
    let mut child = child;
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        command_gone(&["sleep", &marker]),
        "the setsid sleep outlived versus"
    );
    assert!(
        command_gone(&["sleep", &format!("{marker}1")]),
        "the sleep outlived versus"
    );
    // The killed run's folders (the model's layers; the overlay itself died with the process)
    // are removed by the next run; its frozen base is kept for later runs of the same state
    // (workspace::cow::cache), no longer held by anyone.
    let parent = util::users::workspaces_parent(&w.workspaces, util::users::Who::Me);
    let left = |pid: u32| {
        std::fs::read_dir(&parent)
            .unwrap()
            .flatten()
            .filter(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with(&format!("{pid}-"))
            })
            .count()
    };
    assert!(left(child.id()) >= 1, "no workspace folder was made");
    let kept = std::fs::read_dir(&parent)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("cache-"))
        .count();
    assert_eq!(kept, 1, "the frozen base was not kept");
    let quick = w.script("quick.jsonl", &[]);
    let out = w.ask(&quick, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(left(child.id()), 0, "the killed run's folders were left");
}

#[test]
fn cleanup_never_follows_a_gitdir_and_removes_only_the_registration() {
    let w = world();
    // A registration left by an older versus whose process is dead, pointing at a victim.
    let victim = w.outside.join("victim");
    std::fs::create_dir_all(victim.join(".git")).unwrap();
    std::fs::write(victim.join("precious.txt"), "keep me\n").unwrap();
    let mut dead = Command::new("true").spawn().unwrap();
    let pid = dead.id();
    dead.wait().unwrap();
    let admin = w.root.join(format!(".git/worktrees/versus-ws-{pid}-x-0"));
    std::fs::create_dir_all(&admin).unwrap();
    std::fs::write(admin.join("gitdir"), format!("{}/.git\n", victim.display())).unwrap();
    std::fs::write(admin.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(admin.join("commondir"), "../..\n").unwrap();
    let model = w.script("noop.jsonl", &["true"]);
    let out = w.ask(&model, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        victim.join("precious.txt").exists(),
        "cleanup deleted the folder a gitdir named"
    );
    assert!(victim.join(".git").exists());
    assert!(!admin.exists(), "the dead registration was not pruned");
}

#[test]
fn kept_workspaces_survive_later_runs_until_versus_clean() {
    let w = world();
    let model = w.script("keep.jsonl", &["echo kept > note.txt"]);
    let out = w.ask(&model, &["--keep-workspaces"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let parent = util::users::workspaces_parent(&w.workspaces, util::users::Who::Me);
    let kept: Vec<PathBuf> = std::fs::read_dir(&parent)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    let out = w.ask(&model, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        kept[0].join("tree/note.txt").exists(),
        "a later run removed a kept workspace"
    );
    let out = versus()
        .arg("clean")
        .env("TMPDIR", &w.workspaces)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!kept[0].exists(), "versus clean left the kept workspace");
}

#[test]
fn symlinks_bash_makes_are_proposed_as_links_applied_only_inside_and_rewound_exactly() {
    let w = world();
    let before_passwd = std::fs::read("/etc/passwd").unwrap();
    let model = w.script(
        "links.jsonl",
        &[
            "ln -s ../../../../../../../etc/passwd rel.txt && ln -s src srclink && \
           echo '// edit' >> src/main.rs",
        ],
    );
    let before = w.state();
    let out = w.ask(&model, &["--pick", &model]);
    assert!(out.status.success(), "{}", stderr(&out));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    // Both links are proposed, shown as links (git's mode 120000), never as the bytes behind.
    assert!(stdout.contains("srclink -> src (symlink)"), "{stdout}");
    assert!(
        stdout.contains("rel.txt -> ../../../../../../../etc/passwd (symlink)"),
        "{stdout}"
    );
    assert!(stdout.contains("new file mode 120000"), "{stdout}");
    // The real edit made it.
    let main = std::fs::read_to_string(w.root.join("src/main.rs")).unwrap();
    assert!(main.ends_with("// edit\n"), "{main}");
    // The inside link is applied as a link to `src`; the outside one is refused, by name.
    let link = std::fs::symlink_metadata(w.root.join("srclink")).unwrap();
    assert!(link.file_type().is_symlink());
    assert_eq!(
        std::fs::read_link(w.root.join("srclink")).unwrap(),
        Path::new("src")
    );
    assert!(std::fs::symlink_metadata(w.root.join("rel.txt")).is_err());
    assert!(
        stdout.contains(
            "rel.txt: not written: symlink rel.txt -> ../../../../../../../etc/passwd refused"
        ),
        "{stdout}"
    );
    assert_eq!(std::fs::read("/etc/passwd").unwrap(), before_passwd);
    assert!(!w.session_text().contains("root:x:0:0"));
    let tree = format!("{:?}", tree_state(&w.root));
    assert!(!tree.contains("root:x:0:0"));
    // Rewind gives back the exact tree: no link left, main.rs as it was, byte for byte.
    let out = w.rewind();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(std::fs::symlink_metadata(w.root.join("srclink")).is_err());
    assert_eq!(w.state()["tree"], before["tree"]);
}

#[test]
fn a_committed_symlink_the_model_removes_is_deleted_itself_and_rewound_exactly() {
    let w = world();
    std::os::unix::fs::symlink("src", w.root.join("docs-link")).unwrap();
    git(&w.root, &["add", "docs-link"]);
    git(&w.root, &["commit", "-qm", "link"]);
    let model = w.script(
        "rm-link.jsonl",
        &["rm docs-link && echo '// edit' >> src/main.rs"],
    );
    let before = w.state();
    let out = w.ask(&model, &["--pick", &model]);
    assert!(out.status.success(), "{}", stderr(&out));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(stdout.contains("deleted file mode 120000"), "{stdout}");
    // The link itself is gone; what it pointed to is untouched, and the edit made it.
    assert!(std::fs::symlink_metadata(w.root.join("docs-link")).is_err());
    assert!(w.root.join("src").is_dir());
    let main = std::fs::read_to_string(w.root.join("src/main.rs")).unwrap();
    assert_eq!(main, "fn main() { /* wip */ }\n// edit\n");
    let out = w.rewind();
    assert!(out.status.success(), "{}", stderr(&out));
    // The very link is back (a link, same target), and the tree as it was, byte for byte.
    let link = std::fs::symlink_metadata(w.root.join("docs-link")).unwrap();
    assert!(link.file_type().is_symlink());
    assert_eq!(
        std::fs::read_link(w.root.join("docs-link")).unwrap(),
        Path::new("src")
    );
    assert_eq!(w.state(), before);
}
