//! What a hostile model can do to versus's own state and to the host through what versus keeps
//! for it (issue 21, items 1, 8, 9 and 12): the workspace's borrowed git objects, files too
//! large to hold, folders too deep to recurse into, and a flood of streamed text. Each test
//! plays the model through the real binary (a scripted demo model running bash in the
//! sandbox), as the test user and as an unprivileged one, and asserts the harm did not happen.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util;

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use util::users::{Who, give_away};

/// Runs the copy-on-write workspaces off (full checkouts), as kept workspaces are.
const FULL_CHECKOUT: (&str, &str) = ("VERSUS_COPY_ON_WRITE", "off");

/// A repository with history, a pack and loose objects; a home, config and temp folder of its
/// own; everything owned by whoever runs versus.
struct World {
    _tmp: tempfile::TempDir,
    top: PathBuf,
    root: PathBuf,
    home: PathBuf,
    config: PathBuf,
    workspaces: PathBuf,
    who: Who,
}

/// git with a fixed identity, trusting folders another user owns (the unprivileged case).
/// Removes a folder with `rm -rf` when dropped (before the `TempDir` holding it): `rm` walks
/// iteratively, where the recursive removal of `TempDir` would overflow this test process's
/// stack on a tree 20,000 levels deep left by a failing run.
struct Scrub(PathBuf);

impl Drop for Scrub {
    fn drop(&mut self) {
        let _ = Command::new("rm").arg("-rf").arg(&self.0).status();
    }
}

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
    let tmp = util::tempdir();
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
        top,
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
        util::users::workspaces_parent(&self.workspaces, self.who)
    }

    /// The folders versus left in the workspaces' parent.
    /// Workspace folders left behind; the frozen checkout kept for later runs of the same
    /// state (`cache-*`, workspace::cow::cache) is not a leftover.
    fn leftovers(&self) -> Vec<String> {
        std::fs::read_dir(self.parent())
            .map(|rd| {
                rd.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|name| !name.starts_with("cache-"))
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
                    "git log --format=%s > gitlog.txt; \
                     echo \"tree-links=$(find . -type f -links +1 | wc -l)\" > tree-links.txt",
                    // The folders the workspace's repository borrows from (the user's).
                    // Remounting the read-only mount needs a capability: there is none.
                    "for d in $(cat .git/objects/info/alternates); do \
                       echo \"links=$(find $d -type f -links +1 | wc -l)\" >> links.txt; \
                       mount -o remount,rw,bind \"$d\" 2>/dev/null; umount -l \"$d\" 2>/dev/null; \
                       find $d -type f | while read -r f; do \
                         chmod u+w \"$f\"; printf tail >> \"$f\"; printf garbage > \"$f\"; \
                       done; \
                     done 2>&1 | tail -3; echo attacked",
                    // git's own ways of rewriting objects, then its own history again.
                    "git gc --prune=now 2>&1 | tail -2; git repack -adf 2>&1 | tail -2; \
                     git -c user.name=m -c user.email=m@example.com commit -qm mine --allow-empty 2>&1 | tail -1; \
                     git log --format=%s > after.txt; echo repacked",
                    // Its own objects folder, last (that only breaks its own repository).
                    "echo \"links=$(find .git/objects -type f -links +1 | wc -l)\" >> links.txt; \
                     find .git/objects -type f | while read -r f; do \
                       chmod u+w \"$f\"; printf tail >> \"$f\"; printf garbage > \"$f\"; \
                     done; echo own",
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
                said.contains("+mine\n+second\n+first"),
                "{}: git log failed after the attack: {said}",
                who.name()
            );
            assert!(
                said.contains("+links=0\n+links=0\n"),
                "{}: a reachable object file has another name: {said}",
                who.name()
            );
            assert!(!said.contains("+links=1"), "{said}");
            assert!(said.contains("+tree-links=0"), "{said}");
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

/// The peak resident memory (`VmHWM`, KiB) of a running child, read until it exits; the
/// child is killed once it passes `limit_kib`, so a regression fails the test instead of
/// taking the machine's memory. Returns the output and the highest value seen.
fn run_watching_memory(mut command: Command, limit_kib: u64) -> (Output, u64) {
    use std::io::Read;
    let mut child = command
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let status_file = format!("/proc/{}/status", child.id());
    // Read the pipes on threads so a full pipe never stalls the child.
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out_thread = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        stdout.read_to_end(&mut bytes).unwrap();
        bytes
    });
    let err_thread = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        stderr.read_to_end(&mut bytes).unwrap();
        bytes
    });
    let mut peak = 0;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if let Ok(text) = std::fs::read_to_string(&status_file)
            && let Some(kib) = text
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        {
            peak = peak.max(kib);
            if kib > limit_kib {
                let _ = child.kill();
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let output = Output {
        status,
        stdout: out_thread.join().unwrap(),
        stderr: err_thread.join().unwrap(),
    };
    (output, peak)
}

/// The session folder of the project's only session.
fn session_dir(w: &World) -> PathBuf {
    let sessions: Vec<PathBuf> = std::fs::read_dir(w.root.join(".versus/sessions"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    sessions[0].clone()
}

/// Bytes of every file under `dir`.
fn bytes_under(dir: &Path) -> u64 {
    files_under(dir).values().map(|b| b.len() as u64).sum()
}

/// The memory versus may use for a run whose model left 3.3 GB of sparse files (the debug
/// build uses 40-60 MB for such a run; reading the 300 MB file whole alone would pass it).
const MEMORY_LIMIT_KIB: u64 = 256 * 1024;

/// Item 8: sparse files cost the model no disk; versus must not spend memory on them. The
/// model makes a 3 GiB and a 300 MiB sparse file, a 2 MiB binary file and a one-line edit:
/// versus stays under [`MEMORY_LIMIT_KIB`] (killed past it), the edit and the binary file are
/// proposed, the big files are noted with size and hash, the binary file's bytes are in the
/// session's blob folder (not in the log as numbers), and the session stays small.
#[test]
fn sparse_files_cost_versus_no_memory_and_the_real_edit_survives() {
    for who in Who::BOTH {
        let cases: &[&[(&str, &str)]] = if who == Who::Me {
            &[&[], &[FULL_CHECKOUT]]
        } else {
            &[&[]]
        };
        for envs in cases {
            let w = world(who);
            let model = w.script(
                "sparse.jsonl",
                &["truncate -s 3G big.img && truncate -s 300M mid.img && \
                   head -c 2097152 /dev/urandom > noise.bin && \
                   echo 'fn main() { println!(\"edit\"); }' > src/main.rs && echo made"],
            );
            let mut command = w.versus();
            command
                .envs(envs.iter().copied())
                .arg("-C")
                .arg(&w.root)
                .args(["ask", "do it", "-m", &model]);
            let (out, peak) = run_watching_memory(command, MEMORY_LIMIT_KIB);
            let said = text(&out);
            assert!(
                peak <= MEMORY_LIMIT_KIB,
                "{} {envs:?}: peak memory {peak} KiB: {said}",
                who.name()
            );
            assert!(out.status.success(), "{} {envs:?}: {said}", who.name());
            assert!(
                said.contains("+fn main() { println!(\"edit\"); }"),
                "the real edit was dropped: {said}"
            );
            assert!(
                said.contains("noise.bin"),
                "the binary file was dropped: {said}"
            );
            for note in [
                "big.img is too large (3.0 GiB, over the 16.0 MiB limit; blake3 ",
                "mid.img is too large (300.0 MiB, over the 16.0 MiB limit; blake3 ",
            ] {
                assert!(said.contains(note), "`{note}` missing: {said}");
            }
            assert!(!said.contains("+++ b/big.img"), "{said}");
            let session = session_dir(&w);
            let log = std::fs::metadata(session.join("events.jsonl"))
                .unwrap()
                .len();
            assert!(log < 1024 * 1024, "the log holds {log} bytes");
            let blobs = files_under(&session.join("blobs"));
            assert!(
                blobs.values().any(|b| b.len() == 2 * 1024 * 1024),
                "the binary file's bytes are not stored by reference: {:?}",
                blobs.keys()
            );
            assert!(
                bytes_under(&w.root.join(".versus")) < 4 * 1024 * 1024,
                "the session folder grew past 4 MiB"
            );
            // The session reads back: the proposal with its binary content is restored.
            let out = w
                .versus()
                .arg("-C")
                .arg(&w.root)
                .args(["sessions", "show"])
                .output();
            let out = out.unwrap();
            assert!(out.status.success(), "{}", text(&out));
            assert!(!text(&out).contains("skipped"), "{}", text(&out));
            assert!(w.leftovers().is_empty(), "{:?}", w.leftovers());
        }
    }
}

/// A temporary folder in memory where the machine has one: removing 20,000 nested folders
/// takes half a minute on some ext4 disks (`rm -rf` too), a fraction of a second on tmpfs.
fn fast_tempdir() -> tempfile::TempDir {
    tempfile::tempdir_in("/dev/shm").unwrap_or_else(|_| util::tempdir())
}

/// Makes `depth` nested folders `d` under `top` with python3 (a loop of `mkdir; cd` in bash
/// takes minutes), as `who`.
fn nest(top: &Path, depth: usize, who: Who) {
    // The system's own: a python3 under root's home (pyenv) is not for another user.
    let python = ["/usr/bin/python3", "/bin/python3"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .unwrap_or("python3");
    let out = who
        .command(python)
        .arg("-c")
        .arg(format!(
            "import os\nfor _ in range({depth}):\n    os.mkdir('d')\n    os.chdir('d')\nopen('bottom', 'w').write('x')\n"
        ))
        .current_dir(top)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
}

/// Item 9: 20,000 nested folders crashed versus when it removed the workspace (and every
/// later start in its cleanup), and 3,000 made the scan fail and drop the real edit. The
/// model makes them (python3 in the sandbox) beside a one-line edit: `versus ask` completes,
/// proposes the edit, notes the deep folder, and removes its workspace. Then a leftover
/// workspace holding 20,000 levels (a crashed run) is removed by the next run's cleanup, and
/// one versus cannot remove is reported and skipped, never fatal.
#[test]
fn deep_folders_neither_crash_versus_nor_drop_the_real_edit() {
    for who in Who::BOTH {
        let mut w = world(who);
        // The workspaces in memory where possible (see fast_tempdir); the project stays.
        let fast = fast_tempdir();
        let _scrub = (Scrub(fast.path().to_path_buf()), Scrub(w.top.clone()));
        let workspaces = fast.path().canonicalize().unwrap().join("tmp");
        std::fs::create_dir_all(&workspaces).unwrap();
        give_away(fast.path(), who);
        w.workspaces = workspaces;
        let model = w.script(
            "deep.jsonl",
            &[
                "command -v python3 && python3 -c \"import os\nfor _ in range(20000):\n    \
                 os.mkdir('d')\n    os.chdir('d')\nopen('bottom', 'w').write('x')\" && \
                 echo 'pub fn f() { /* edit */ }' > src/lib.rs && echo nested",
            ],
        );
        let out = w.ask(&model, &[], &[]);
        let said = text(&out);
        assert!(out.status.success(), "{}: {said}", who.name());
        assert!(
            said.contains("+pub fn f() { /* edit */ }"),
            "the real edit was dropped: {said}"
        );
        assert!(
            said.contains("is nested 200 folders deep; nothing below it was scanned"),
            "{said}"
        );
        assert!(w.leftovers().is_empty(), "not removed: {:?}", w.leftovers());

        // A crashed run's workspace, 20,000 levels deep, owned by a dead pid.
        let parent = w.parent();
        let leftover = parent.join("4294967295-crashed-0");
        std::fs::create_dir_all(leftover.join("tree")).unwrap();
        std::fs::write(
            leftover.join("versus-workspace.json"),
            serde_json::json!({"pid": 4294967295u32, "project": w.root, "kept": false}).to_string(),
        )
        .unwrap();
        give_away(&parent, who);
        nest(&leftover.join("tree"), 20_000, who);
        // One versus cannot remove (another user's folder inside), when it runs unprivileged.
        let stuck = parent.join("4294967295-stuck-1");
        if who.drops() {
            std::fs::create_dir_all(stuck.join("tree/root-owned")).unwrap();
            std::fs::write(stuck.join("tree/root-owned/f"), "x").unwrap();
            std::fs::write(
                stuck.join("versus-workspace.json"),
                serde_json::json!({"pid": 4294967295u32, "project": w.root, "kept": false})
                    .to_string(),
            )
            .unwrap();
            Command::new("chown")
                .arg(format!("{0}:{0}", util::users::NOBODY))
                .arg(&stuck)
                .arg(stuck.join("tree"))
                .arg(stuck.join("versus-workspace.json"))
                .status()
                .unwrap();
        }
        let model = w.script("plain.jsonl", &["echo fine > fine.txt"]);
        let out = w.ask(&model, &[], &[]);
        let said = text(&out);
        assert!(out.status.success(), "{}: {said}", who.name());
        assert!(said.contains("+fine"), "{said}");
        assert!(!leftover.exists(), "the deep leftover was not removed");
        if who.drops() {
            assert!(
                said.contains("warning: removed") && said.contains("4294967295-stuck-1"),
                "the leftover versus could not remove was not reported: {said}"
            );
            assert!(stuck.join("tree/root-owned/f").exists());
            assert_eq!(w.leftovers(), vec!["4294967295-stuck-1".to_string()]);
            // versus clean says which it could not remove, and fails.
            let out = w.versus().arg("clean").output().unwrap();
            assert!(!out.status.success(), "{}", text(&out));
            assert!(text(&out).contains("4294967295-stuck-1"), "{}", text(&out));
            std::fs::remove_dir_all(&stuck).unwrap();
        }
    }
}

/// Item 12: every streamed word was its own log record (7 MB of text, 231 MB of log). A
/// model streams about 7 MB: the session log stays within about twice the text (the streamed
/// text and the conversation each hold it once), and the text reads back whole from the log,
/// from `versus sessions show` and from `versus replay export`.
#[test]
fn seven_megabytes_of_streamed_text_make_a_log_about_twice_its_size() {
    for who in Who::BOTH {
        let w = world(who);
        let mut said = String::with_capacity(7 << 20);
        let mut n = 0;
        while said.len() < 7 * 1000 * 1000 {
            said.push_str(&format!("word{n} "));
            n += 1;
        }
        let step = serde_json::json!({ "say": said });
        let model = w.raw_script("chatty.jsonl", &format!("{step}\n"));
        let out = w.ask(&model, &[], &[]);
        assert!(
            out.status.success(),
            "{}",
            text(&out).chars().take(2000).collect::<String>()
        );
        let session = session_dir(&w);
        let log = std::fs::read(session.join("events.jsonl")).unwrap();
        let ratio = log.len() as f64 / said.len() as f64;
        assert!(
            ratio < 2.2,
            "{}: {} bytes of log for {} bytes of text ({ratio:.2}x)",
            who.name(),
            log.len(),
            said.len()
        );
        // Replaying the log's text deltas gives the text back.
        let mut streamed = String::new();
        let mut records = 0;
        for line in log.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            let value: serde_json::Value = serde_json::from_slice(line).unwrap();
            records += 1;
            if value["type"] == "agent" && value["event"]["type"] == "text_delta" {
                streamed.push_str(value["event"]["text"].as_str().unwrap());
            }
        }
        assert_eq!(streamed.trim_end(), said.trim_end());
        assert!(records < 1000, "{records} records");
        let out = w
            .versus()
            .arg("-C")
            .arg(&w.root)
            .args(["sessions", "show"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("word0 word1 word2"),
            "{}",
            text(&out)
        );
        let out = w
            .versus()
            .arg("-C")
            .arg(&w.root)
            .args(["replay", "export", "-m", &model])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            text(&out).chars().take(2000).collect::<String>()
        );
        let script = String::from_utf8_lossy(&out.stdout);
        assert!(
            script.contains(said.trim_end()),
            "the exported conversation lost text"
        );
    }
}

/// A workspace folder another local user made first in the shared temp folder (or a link
/// they planted there) would let them read every workspace (uncommitted work included) and
/// plant folders versus takes for its own leftovers. versus refuses to use it, says which
/// folder and why, and puts nothing in it; its own folder is private (0700).
#[test]
fn a_workspace_folder_another_user_made_first_is_never_used() {
    for who in Who::BOTH {
        let w = world(who);
        let model = w.script("parent.jsonl", &["echo hi > hi.txt"]);
        // First our own run: the folder it makes is ours alone.
        let out = w.ask(&model, &[], &[]);
        assert!(out.status.success(), "{}: {}", who.name(), text(&out));
        let parent = w.parent();
        let meta = std::fs::symlink_metadata(&parent).unwrap();
        assert_eq!(meta.mode() & 0o777, 0o700, "{}", who.name());
        std::fs::remove_dir_all(&parent).unwrap();
        if !who.drops() && !util::users::is_root() {
            continue; // No second user to play the attacker.
        }
        // The attacker: the other user of the pair, with a folder open to everyone.
        let attacker = if who.drops() { 0 } else { util::users::NOBODY };
        std::fs::create_dir(&parent).unwrap();
        std::fs::set_permissions(&parent, std::fs::Permissions::from_mode(0o777)).unwrap();
        std::os::unix::fs::chown(&parent, Some(attacker), Some(attacker)).unwrap();
        let out = w.ask(&model, &[], &[]);
        let said = text(&out);
        assert!(
            said.contains("is not safe to use") && said.contains("(no changes)"),
            "{}: {said}",
            who.name()
        );
        assert!(said.contains("belongs to user"), "{}: {said}", who.name());
        assert_eq!(
            std::fs::read_dir(&parent).unwrap().count(),
            0,
            "{}: versus wrote into another user's folder",
            who.name()
        );
        std::fs::remove_dir(&parent).unwrap();
        // A link to a folder of the attacker's: refused the same way.
        let theirs = w.top.join("theirs");
        std::fs::create_dir(&theirs).unwrap();
        std::os::unix::fs::symlink(&theirs, &parent).unwrap();
        let out = w.ask(&model, &[], &[]);
        let said = text(&out);
        assert!(said.contains("symbolic link"), "{}: {said}", who.name());
        assert_eq!(std::fs::read_dir(&theirs).unwrap().count(), 0);
    }
}

/// `versus run` says what a workspace's change scan left out, as `ask` does: a run whose
/// model made a file too large to propose must not report its change set as complete.
#[test]
fn a_runs_report_names_what_the_change_scan_left_out() {
    for who in Who::BOTH {
        let w = world(who);
        w.script(
            "notes.jsonl",
            &["truncate -s 20M big.bin && echo real > real.txt && echo made"],
        );
        // A recipe names demo scripts from its own folder.
        let model = "demo/notes.jsonl";
        let recipe = w.root.join("scripts/notes.recipe.md");
        std::fs::write(
            &recipe,
            format!(
                "# Notes\nversion: 1\n\n## Models\n- {model}\n\n## Constraints\ntimeout: 1m\n\n\
                 ## Tasks\n\n### big\nMake files.\n\n## Success Criteria\n- run: test -f real.txt\n"
            ),
        )
        .unwrap();
        give_away(&recipe, who);
        let out = w
            .versus()
            .arg("-C")
            .arg(&w.root)
            .args(["run", recipe.to_str().unwrap(), "-q"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}: {}", who.name(), text(&out));
        let dir = util::only_report_dir(&w.root);
        let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
        assert!(
            summary.contains("Not proposed from the workspaces") && summary.contains("big.bin"),
            "{}: {summary}",
            who.name()
        );
        let report: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
        let run = &report["tasks"][0]["runs"][0];
        let notes = run["change_set"]["notes"].as_array().unwrap();
        assert!(
            notes
                .iter()
                .any(|n| n.as_str().unwrap().contains("big.bin")),
            "{}: {run}",
            who.name()
        );
        let files: Vec<&str> = run["change_set"]["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["path"].as_str().unwrap())
            .collect();
        assert_eq!(files, ["real.txt"], "{}", who.name());
    }
}

/// Issue 22 item 6: the sandbox's home is private, so a model's `git commit` failed in every
/// workspace ("Author identity unknown"). The user's git identity, name and email only, is
/// passed from their own git config; nothing else of that config is.
#[test]
fn a_models_git_commit_carries_the_users_identity_and_nothing_else_of_their_config() {
    for who in Who::BOTH {
        let w = world(who);
        std::fs::write(
            w.home.join(".gitconfig"),
            "[user]\n\tname = Ada Lovelace\n\temail = ada@example.com\n\
             [alias]\n\tsecret = !echo ALIAS-FROM-HOST\n",
        )
        .unwrap();
        give_away(&w.home, who);
        let model = w.script(
            "identity.jsonl",
            &[
                "git -c commit.gpgsign=false commit -q --allow-empty -m mine 2>&1; \
               git log -1 --format='AUTHOR=%an <%ae> COMMITTER=%cn <%ce>'; \
               git secret 2>&1 | head -1; echo IDENTITY-DONE",
            ],
        );
        let out = w.ask(&model, &[], &[]);
        assert!(out.status.success(), "{}: {}", who.name(), text(&out));
        let session = std::fs::read_to_string(session_dir(&w).join("events.jsonl")).unwrap();
        assert!(
            session.contains("IDENTITY-DONE"),
            "{}: {session}",
            who.name()
        );
        assert!(
            session.contains(
                "AUTHOR=Ada Lovelace <ada@example.com> COMMITTER=Ada Lovelace <ada@example.com>"
            ),
            "{}: {session}",
            who.name()
        );
        assert!(!session.contains("Author identity unknown"), "{session}");
        assert!(
            !session.contains("ALIAS-FROM-HOST"),
            "{}: more of the user's git config than the identity reached the sandbox",
            who.name()
        );
    }
}
