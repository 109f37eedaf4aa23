//! End to end in a real terminal: the `versus` binary runs inside tmux with scripted demo
//! models (tests/fixtures/tui/). A session: a prompt is typed, the panels finish, a second
//! prompt is cancelled with Esc, /quit leaves, and afterwards the terminal is back from the
//! alternate screen and the session's events.jsonl holds both turns. A killed session
//! continues. The review: hunk 1 from one model and a file from another are picked and
//! applied (exactly those changes on disk), a review check runs in each workspace, a shell
//! opens in a workspace and returns, the next turn's note names the chosen models, and two
//! /rewinds walk back to a byte-identical tree (modes included) with the prompt back in the
//! box and the choice in preferences.jsonl.
//!
//! Skips (and says why) when tmux is not installed; .ci/run installs it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// A private tmux server (its own socket in a folder of its own), killed when the test ends.
struct Tmux {
    socket: std::path::PathBuf,
    target: &'static str,
    /// Removed (with the socket) after the server is killed.
    _socket_dir: tempfile::TempDir,
}

impl Tmux {
    fn start(name: &'static str, width: u16, height: u16) -> Tmux {
        let socket_dir = util::tmux_socket_dir();
        let tmux = Tmux {
            socket: socket_dir.path().join("s"),
            target: name,
            _socket_dir: socket_dir,
        };
        let out = tmux
            .cmd()
            .args(["new-session", "-d", "-s", name, "-x"])
            .arg(width.to_string())
            .arg("-y")
            .arg(height.to_string())
            .arg("sh")
            .env("PS1", "$ ")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "tmux: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        tmux
    }

    fn cmd(&self) -> Command {
        let mut c = Command::new("tmux");
        c.arg("-S").arg(&self.socket).args(["-f", "/dev/null"]);
        c
    }

    /// Types `text` literally.
    fn type_text(&self, text: &str) {
        let ok = self
            .cmd()
            .args(["send-keys", "-t", self.target, "-l", text])
            .status()
            .unwrap();
        assert!(ok.success());
    }

    /// Presses a named key (`Enter`, `Escape`).
    fn press(&self, key: &str) {
        let ok = self
            .cmd()
            .args(["send-keys", "-t", self.target, key])
            .status()
            .unwrap();
        assert!(ok.success());
    }

    /// Presses a key and waits until the screen shows its effect (any change). Needed after
    /// `Escape` when text follows: an Esc still unread when the next character arrives is
    /// read with it as one Alt+character key, so a loaded machine turns `Esc /quit` into
    /// Alt+/ followed by `quit`.
    fn press_and_see(&self, key: &str) {
        let before = self.screen();
        self.press(key);
        let deadline = Instant::now() + Duration::from_secs(60);
        while self.screen() == before {
            assert!(
                Instant::now() < deadline,
                "{key} changed nothing:\n{before}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn screen(&self) -> String {
        let out = self
            .cmd()
            .args(["capture-pane", "-p", "-t", self.target])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The screen with the lines the terminal wrapped joined back (`capture-pane -J`): for
    /// text printed on the normal screen, whose wrapping depends on how long the temp folder's
    /// path is.
    fn screen_joined(&self) -> String {
        let out = self
            .cmd()
            .args(["capture-pane", "-p", "-J", "-t", self.target])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// [`Tmux::wait_for`] on the screen's text as one line: box borders taken out and runs of
    /// blanks and line ends made one space, so a phrase the interface wrapped inside a box
    /// (where it wraps depends on the length of a path, so on `TMPDIR`) is still found.
    fn wait_for_text(&self, needles: &[&str]) -> String {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let screen = self.screen();
            let text = screen
                .replace(['│', '┌', '┐', '└', '┘', '─'], " ")
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            if needles.iter().all(|n| text.contains(n)) {
                return screen;
            }
            if Instant::now() > deadline {
                panic!("waited for {needles:?}; the screen is:\n{screen}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// [`Tmux::wait_for`] on [`Tmux::screen_joined`].
    fn wait_for_joined(&self, needles: &[&str]) -> String {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let screen = self.screen_joined();
            if needles.iter().all(|n| screen.contains(n)) {
                return screen;
            }
            if Instant::now() > deadline {
                panic!("waited for {needles:?}; the screen is:\n{screen}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn alternate_on(&self) -> String {
        let out = self
            .cmd()
            .args([
                "display-message",
                "-p",
                "-t",
                self.target,
                "#{alternate_on}",
            ])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Polls the screen until every needle is on it and the frame is whole (the same on two
    /// captures in a row: a capture can catch a frame half drawn, with later rows still
    /// blank), or fails after a generous deadline.
    fn wait_for(&self, needles: &[&str]) -> String {
        self.wait_for_within(needles, Duration::from_secs(60))
    }

    /// [`Tmux::wait_for`] with its own deadline (for work that compiles, on a loaded machine).
    fn wait_for_within(&self, needles: &[&str], within: Duration) -> String {
        let deadline = Instant::now() + within;
        let mut last = String::new();
        loop {
            let screen = self.screen();
            if needles.iter().all(|n| screen.contains(n)) && screen == last {
                return screen;
            }
            if Instant::now() > deadline {
                panic!("waited for {needles:?}; the screen is:\n{screen}");
            }
            last = screen;
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Tmux {
    /// Kills the server; its socket's folder is removed right after (the field's own drop).
    fn drop(&mut self) {
        let _ = self.cmd().arg("kill-server").status();
    }
}

fn tmux_available() -> bool {
    Command::new("tmux")
        .arg("-V")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// A committed git project with a notes file and the two demo scripts.
fn project(dir: &Path) {
    versus::example::write_project(dir).unwrap();
    std::fs::write(dir.join("notes.txt"), "hello\n").unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tui");
    for name in ["quick.jsonl", "broken.jsonl"] {
        std::fs::copy(fixtures.join(name), dir.join(name)).unwrap();
    }
}

fn events(project: &Path) -> Vec<serde_json::Value> {
    let sessions = project.join(".versus/sessions");
    let session = std::fs::read_dir(&sessions)
        .unwrap()
        .next()
        .expect("one session folder")
        .unwrap()
        .path();
    std::fs::read_to_string(session.join("events.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Starts versus in the pane with `args` (after the common flags); `; echo EXIT=$?` follows.
/// Its per-user state goes to the tests' own state folder.
fn launch(tmux: &Tmux, proj: &Path, config: &Path, args: &str) {
    launch_in(tmux, proj, config, &util::state_home(), args);
}

/// [`launch`] with `state` as versus's state folder.
fn launch_in(tmux: &Tmux, proj: &Path, config: &Path, state: &Path, args: &str) {
    let command = format!(
        "NO_COLOR=1 VERSUS_NO_KEYBOARD_ENHANCEMENT=1 XDG_STATE_HOME={} TMPDIR={} {} -C {} --config {} {args}; echo EXIT=$?",
        state.display(),
        util::temp_home().display(),
        env!("CARGO_BIN_EXE_versus"),
        proj.display(),
        config.display()
    );
    tmux.type_text(&command);
    tmux.press("Enter");
}

/// Starts versus in the pane in `here` with no model configured (demo mode), with `temp` as
/// its temp folder (the demo's project and its workspaces go there, so the test's folder
/// takes them away) and the tests' state folder; `; echo EXIT=$?` follows.
fn launch_demo(tmux: &Tmux, here: &Path, temp: &Path, config: &Path) {
    tmux.type_text(&format!(
        "cd {} && NO_COLOR=1 VERSUS_NO_KEYBOARD_ENHANCEMENT=1 TMPDIR={} XDG_STATE_HOME={} {} --config {}; echo EXIT=$?",
        here.display(),
        temp.display(),
        util::state_home().display(),
        env!("CARGO_BIN_EXE_versus"),
        config.display()
    ));
    tmux.press("Enter");
}

/// Starts versus in the pane as `who` (through `setpriv` for the unprivileged user) with a
/// canary key in its environment, its own temp and home folders, and `args`; `; echo EXIT=$?`
/// follows. For the attacks played as both users.
fn launch_as(tmux: &Tmux, who: util::users::Who, key: &str, dirs: [&Path; 4], args: &str) {
    let [workspaces, home, proj, config] = dirs;
    let setpriv = if who.drops() {
        "setpriv --reuid=65534 --regid=65534 --clear-groups -- "
    } else {
        ""
    };
    tmux.type_text(&format!(
        "OPENAI_API_KEY={key} NO_COLOR=1 VERSUS_NO_KEYBOARD_ENHANCEMENT=1 \
         TMPDIR={} HOME={} {setpriv}{} -C {} --config {} {args}; echo EXIT=$?",
        workspaces.display(),
        home.display(),
        env!("CARGO_BIN_EXE_versus"),
        proj.display(),
        config.display()
    ));
    tmux.press("Enter");
}

const MODELS: &str = "-m demo/quick.jsonl -m demo/broken.jsonl";

#[test]
fn a_session_in_a_real_terminal() {
    if !tmux_available() {
        eprintln!("skipped: tmux is not installed (apt-get install tmux; .ci/run does it)");
        return;
    }
    let tmp = util::Dir::new();
    let proj = tmp.path().join("project");
    project(&proj);
    let config = tmp.write("empty.toml", "");
    let tmux = Tmux::start("session", 120, 32);
    launch(&tmux, &proj, &config, MODELS);
    tmux.wait_for(&["turn 0", "demo/quick.jsonl", "demo/broken.jsonl"]);
    assert_eq!(
        tmux.alternate_on(),
        "1",
        "the interface uses the alternate screen"
    );

    tmux.type_text("what do the notes say?");
    tmux.press("Enter");
    let screen = tmux.wait_for(&["QUICK-DONE", "BROKEN-DONE", "turn 1 finished"]);
    assert!(screen.contains("✓ read_file notes.txt"), "{screen}");
    assert!(screen.contains("✗ read_file missing.toml"), "{screen}");
    assert!(
        screen.contains("── turn 1 ── what do the notes say?"),
        "{screen}"
    );

    tmux.type_text("and now?");
    tmux.press("Enter");
    tmux.wait_for(&["This second", "Another slow"]);
    // Esc asks first and the models keep running; Esc again cancels them.
    tmux.press("Escape");
    let screen = tmux.wait_for(&["press Esc again to cancel 2 running models"]);
    assert!(
        !screen.contains("cancelled"),
        "nothing is cancelled yet: {screen}"
    );
    assert!(
        screen.contains("● demo/quick.jsonl") && screen.contains("● demo/broken.jsonl"),
        "both models still run: {screen}"
    );
    tmux.press("Escape");
    let screen = tmux.wait_for(&["turn 2 finished"]);
    assert!(screen.contains("demo/quick.jsonl cancelled"), "{screen}");
    assert!(screen.contains("demo/broken.jsonl cancelled"), "{screen}");

    tmux.type_text("/quit");
    tmux.press("Enter");
    let screen = tmux.wait_for(&["EXIT=0"]);
    assert_eq!(tmux.alternate_on(), "0", "the alternate screen was left");
    assert!(screen.contains("versus: session"), "{screen}");

    let log = events(&proj);
    let of = |kind: &str| -> Vec<&serde_json::Value> {
        log.iter().filter(|e| e["type"] == kind).collect()
    };
    let turns: Vec<u64> = of("turn")
        .iter()
        .map(|e| e["turn"].as_u64().unwrap())
        .collect();
    assert_eq!(turns, [1, 2]);
    assert_eq!(of("turn")[1]["prompt"], "and now?");
    let finished: Vec<(u64, String)> = of("finished")
        .iter()
        .map(|e| {
            (
                e["turn"].as_u64().unwrap(),
                e["stop"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(finished.len(), 4, "{finished:?}");
    assert!(
        finished
            .iter()
            .filter(|(t, _)| *t == 1)
            .all(|(_, s)| s == "completed")
    );
    assert!(
        finished
            .iter()
            .filter(|(t, _)| *t == 2)
            .all(|(_, s)| s == "cancelled")
    );
    assert!(
        of("agent")
            .iter()
            .any(|e| e["turn"] == 2 && e["event"]["type"] == "text_delta"),
        "turn 2 events are recorded as they happen"
    );
    let history = std::fs::read_to_string(proj.join(".versus/history.jsonl")).unwrap();
    assert_eq!(history.lines().count(), 2);
}

/// A versus killed with SIGKILL leaves the terminal on the alternate screen with its last
/// frame. The next start must wipe it: entering the alternate screen again does not clear it,
/// and a frame only paints its non-blank cells, so the old characters would show through.
#[test]
fn a_start_over_a_stale_alternate_screen_wipes_it() {
    if !tmux_available() {
        eprintln!("skipped: tmux is not installed (apt-get install tmux; .ci/run does it)");
        return;
    }
    let tmp = util::Dir::new();
    let proj = tmp.path().join("project");
    project(&proj);
    let config = tmp.write("empty.toml", "");
    let tmux = Tmux::start("stale", 120, 32);
    // What a killed versus leaves behind: the alternate screen, full of characters.
    tmux.type_text(&format!(
        "printf '\\033[?1049h\\033[H'; yes '{}' | head -40",
        "ST''ALE-".repeat(18)
    ));
    tmux.press("Enter");
    tmux.wait_for(&["STALE-STALE-STALE"]);
    assert_eq!(tmux.alternate_on(), "1");
    launch(&tmux, &proj, &config, MODELS);
    let screen = tmux.wait_for(&["turn 0", "demo/quick.jsonl", "demo/broken.jsonl"]);
    assert!(
        !screen.contains("STALE"),
        "old characters show through:\n{screen}"
    );
    tmux.type_text("/quit");
    tmux.press("Enter");
    tmux.wait_for(&["EXIT=0"]);
}

/// With `[ui] notify = "osc9"`, a turn that ends while the terminal is not focused writes the
/// OSC 9 desktop notification (seen in the pane's raw output); while it is focused, nothing.
#[test]
fn a_turn_that_ends_while_the_terminal_is_unfocused_notifies() {
    if !tmux_available() {
        eprintln!("skipped: tmux is not installed (apt-get install tmux; .ci/run does it)");
        return;
    }
    let tmp = util::Dir::new();
    let proj = tmp.path().join("project");
    project(&proj);
    std::fs::write(
        proj.join("twice.jsonl"),
        "{\"say\": \"FIRST-DONE\"}\n{\"say\": \"SECOND-DONE\"}\n",
    )
    .unwrap();
    let config = tmp.write("notify.toml", "[ui]\nnotify = \"osc9\"\n");
    let raw = tmp.path().join("raw.out");
    let tmux = Tmux::start("notify", 120, 32);
    let ok = tmux
        .cmd()
        .args(["pipe-pane", "-o", "-t", tmux.target])
        .arg(format!("cat >> {}", raw.display()))
        .status()
        .unwrap();
    assert!(ok.success());
    launch(&tmux, &proj, &config, "-m demo/twice.jsonl");
    tmux.wait_for(&["turn 0"]);
    let notification = "\x1b]9;versus: turn 1 finished\x07";
    // Focused (as assumed until the terminal says otherwise): no notification.
    tmux.type_text("first");
    tmux.press("Enter");
    tmux.wait_for(&["FIRST-DONE", "turn 1 finished"]);
    // The terminal reports that it lost the focus (CSI O, as focus reporting sends it).
    let ok = tmux
        .cmd()
        .args(["send-keys", "-t", tmux.target, "-H", "1b", "5b", "4f"])
        .status()
        .unwrap();
    assert!(ok.success());
    tmux.type_text("second");
    tmux.press("Enter");
    tmux.wait_for(&["SECOND-DONE", "turn 2 finished"]);
    tmux.type_text("/quit");
    tmux.press("Enter");
    tmux.wait_for(&["EXIT=0"]);
    let bytes = std::fs::read(&raw).unwrap();
    let out = String::from_utf8_lossy(&bytes);
    assert!(
        out.contains("\x1b]9;versus: turn 2 finished\x07"),
        "no OSC 9 notification in the pane's output"
    );
    assert!(
        !out.contains(notification),
        "a notification while the terminal was focused"
    );
    assert!(out.contains("\x1b[?1004h"), "focus reporting is asked for");
}

/// The pid of the versus process running in the pane (a child of the pane's shell).
fn versus_pid(tmux: &Tmux) -> i32 {
    let out = tmux
        .cmd()
        .args(["display-message", "-p", "-t", tmux.target, "#{pane_pid}"])
        .output()
        .unwrap();
    let shell = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let children = std::fs::read_to_string(format!("/proc/{shell}/task/{shell}/children"))
            .unwrap_or_default();
        for pid in children.split_whitespace() {
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
            if comm.trim() == "versus" {
                return pid.parse().unwrap();
            }
        }
        assert!(
            Instant::now() < deadline,
            "no versus process under the pane's shell {shell}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_session_killed_mid_run_continues() {
    if !tmux_available() {
        eprintln!("skipped: tmux is not installed (apt-get install tmux; .ci/run does it)");
        return;
    }
    let tmp = util::Dir::new();
    let proj = tmp.path().join("project");
    project(&proj);
    let config = tmp.write("empty.toml", "");
    {
        let tmux = Tmux::start("killed", 120, 32);
        launch(&tmux, &proj, &config, MODELS);
        tmux.wait_for(&["turn 0"]);
        tmux.type_text("what do the notes say?");
        tmux.press("Enter");
        tmux.wait_for(&["turn 1 finished"]);
        tmux.type_text("and now?");
        tmux.press("Enter");
        tmux.wait_for(&["This second", "Another slow"]);
        let pid = versus_pid(&tmux);
        let killed = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        tmux.wait_for(&["EXIT=137"]);
    }
    // A fresh terminal (the killed process could not restore its own).
    let tmux = Tmux::start("continued", 120, 32);
    launch(&tmux, &proj, &config, "--continue");
    let screen = tmux.wait_for(&["QUICK-DONE", "BROKEN-DONE", "turn 2", "interrupted"]);
    assert!(screen.contains("── turn 2 ── and now?"), "{screen}");
    assert!(screen.contains("its prompt is back in the box"), "{screen}");
    assert!(screen.contains("│and now?"), "the prompt is back: {screen}");
    // Going on: the prompt is sent again as turn 3 (the slow script step), then cancelled.
    tmux.press("Enter");
    tmux.wait_for(&["── turn 3 ── and now?", "This second"]);
    tmux.press("Escape");
    tmux.wait_for(&["press Esc again"]);
    tmux.press("Escape");
    tmux.wait_for(&["turn 3 finished"]);
    tmux.type_text("/quit");
    tmux.press("Enter");
    tmux.wait_for(&["EXIT=0"]);
    assert_eq!(tmux.alternate_on(), "0");

    let log = events(&proj);
    let turns: Vec<u64> = log
        .iter()
        .filter(|e| e["type"] == "turn")
        .map(|e| e["turn"].as_u64().unwrap())
        .collect();
    assert_eq!(turns, [1, 2, 3], "one session file holds every turn");
    // Turn 3 continues each model's conversation of turn 1: only the new messages are
    // written, after the ones kept.
    let tails: Vec<&serde_json::Value> = log
        .iter()
        .filter(|e| e["type"] == "conversation_tail" && e["turn"] == 3)
        .collect();
    assert_eq!(tails.len(), 2, "both models carried on in turn 3");
    for tail in &tails {
        assert!(tail["keep"].as_u64().unwrap() >= 3, "{tail}");
    }
    let sessions = proj.join(".versus/sessions");
    let dir = std::fs::read_dir(&sessions)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let read = versus::session::SessionLog::read(&dir).unwrap();
    assert!(read.skipped.is_empty(), "{:?}", read.skipped);
    let quick = &read.conversations()["demo/quick.jsonl"];
    assert!(
        quick.len() > 4 && quick[0].text().contains("what do the notes say?"),
        "turn 3 continues the conversation of turn 1: {quick:?}"
    );
}

/// Every file under `dir` (but `.git` and `.versus`): its path, mode and content hash.
fn tree(dir: &Path) -> std::collections::BTreeMap<String, (u32, String)> {
    use std::os::unix::fs::PermissionsExt;
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if name == ".git" || name == ".versus" {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                stack.push(path);
            } else {
                let rel = path.strip_prefix(dir).unwrap().display().to_string();
                let hash = blake3::hash(&std::fs::read(&path).unwrap())
                    .to_hex()
                    .to_string();
                out.insert(rel, (meta.permissions().mode() & 0o7777, hash));
            }
        }
    }
    out
}

/// A committed git project for the review test: a 30-line story, notes, an executable script
/// and the two review scripts (tests/fixtures/tui/review_*.jsonl).
fn review_project(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir).unwrap();
    let story: String = (1..=30).map(|i| format!("line {i}\n")).collect();
    std::fs::write(dir.join("story.txt"), story).unwrap();
    std::fs::write(dir.join("notes.txt"), "hello\n").unwrap();
    std::fs::write(dir.join("run.sh"), "#!/bin/sh\necho hi\n").unwrap();
    std::fs::set_permissions(dir.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tui");
    for name in ["review_a.jsonl", "review_b.jsonl"] {
        std::fs::copy(fixtures.join(name), dir.join(name)).unwrap();
    }
    let git = |args: &[&str]| {
        let ok = Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .output()
            .unwrap();
        assert!(ok.status.success(), "git {args:?}: {ok:?}");
    };
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["commit", "-qm", "start"]);
}

#[test]
fn review_pick_across_models_apply_and_rewind_in_a_real_terminal() {
    if !tmux_available() {
        eprintln!("skipped: tmux is not installed (apt-get install tmux; .ci/run does it)");
        return;
    }
    let tmp = util::Dir::new();
    let proj = tmp.path().join("project");
    review_project(&proj);
    let config = tmp.write("empty.toml", "");
    let before = tree(&proj);
    let tmux = Tmux::start("review", 130, 40);
    launch(
        &tmux,
        &proj,
        &config,
        "-m demo/review_a.jsonl -m demo/review_b.jsonl",
    );
    tmux.wait_for(&["turn 0"]);
    // A review check: passes where "three" made it into the story.
    tmux.type_text("/config check grep -q three story.txt");
    tmux.press("Enter");
    tmux.wait_for(&["check: `grep -q three story.txt` runs"]);
    tmux.type_text("tell the story");
    tmux.press("Enter");
    tmux.wait_for(&["turn 1 finished", "review · turn 1 · 2/2 finished"]);

    // Hunk 1 of A's story.txt.
    // Tab until the file list is the model's; each Tab is waited for (the title changes).
    let files_title = |screen: &str| {
        screen
            .lines()
            .find(|l| l.contains("files · "))
            .map(str::to_string)
    };
    let select = |label: &str| {
        let want = format!("files · {label} (");
        for _ in 0..4 {
            let screen = tmux.screen();
            if screen.contains(&want) {
                return;
            }
            let shown = files_title(&screen);
            tmux.press("Tab");
            let deadline = Instant::now() + Duration::from_secs(10);
            while files_title(&tmux.screen()) == shown && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        tmux.wait_for(&[&want]);
    };
    select("demo/review_a.jsonl");
    tmux.wait_for(&[
        "story.txt · modified · +2 -2 · hunk 1/2",
        "`grep -q three story.txt` passed (exit 0)",
    ]);
    // Open its workspace in a shell, and come back.
    tmux.press("o");
    tmux.wait_for(&["a shell in the workspace of demo/review_a.jsonl"]);
    tmux.type_text("echo INSIDE=$VERSUS_WORKSPACE; exit");
    tmux.press("Enter");
    tmux.wait_for(&["back from the shell in demo/review_a.jsonl's workspace"]);
    tmux.press("Space");
    tmux.wait_for(&["picked hunk 1/2 of story.txt"]);
    // notes.txt of B, whole (its first file).
    select("demo/review_b.jsonl");
    tmux.wait_for(&["notes.txt · modified", "failed (exit 1)"]);
    tmux.press("f");
    tmux.wait_for(&["basket: 2 files from 2 models"]);
    tmux.press("a");
    let screen = tmux.wait_for(&["applied demo/review_a.jsonl + demo/review_b.jsonl"]);
    assert!(screen.contains("wrote notes.txt, story.txt"), "{screen}");

    // Exactly those changes on disk.
    let story: String = (1..=30)
        .map(|i| match i {
            3 => "line three, told by A\n".to_string(),
            i => format!("line {i}\n"),
        })
        .collect();
    assert_eq!(
        std::fs::read_to_string(proj.join("story.txt")).unwrap(),
        story
    );
    assert_eq!(
        std::fs::read_to_string(proj.join("notes.txt")).unwrap(),
        "notes from B\nsecond line\n"
    );
    let after = tree(&proj);
    for (path, entry) in &before {
        if path != "story.txt" && path != "notes.txt" {
            assert_eq!(after.get(path), Some(entry), "{path} is untouched");
        }
    }
    assert_eq!(after.len(), before.len(), "no file was added");

    // A second turn: the models read which changes were applied.
    tmux.press_and_see("Escape");
    tmux.type_text("and then?");
    tmux.press("Enter");
    tmux.wait_for(&["A-AGAIN", "B-AGAIN", "turn 2 finished"]);

    // /rewind walks back: turn 2 (nothing applied), then turn 1 with its files.
    tmux.type_text("/rewind");
    tmux.press("Enter");
    let screen = tmux.wait_for(&["rewind turn 2?"]);
    assert!(
        screen.contains("no choice was made in that turn"),
        "{screen}"
    );
    tmux.press("y");
    let screen = tmux.wait_for(&["rewound turn 2"]);
    assert!(
        screen.contains("│and then?"),
        "the prompt is back: {screen}"
    );
    assert_ne!(tree(&proj), before, "turn 1's changes are still applied");
    tmux.press("C-u");
    tmux.type_text("/rewind");
    tmux.press("Enter");
    let screen = tmux.wait_for(&["rewind turn 1?", "2 files, +2 -3"]);
    assert!(screen.contains("restore  story.txt"), "{screen}");
    tmux.press("y");
    let screen = tmux.wait_for(&["rewound turn 1", "its prompt is back in the box"]);
    assert!(
        screen.contains("│tell the story"),
        "the prompt is back: {screen}"
    );
    assert_eq!(tree(&proj), before, "byte-identical tree, modes included");

    // The choice is in preferences.jsonl and the session.
    let prefs = std::fs::read_to_string(proj.join(".versus/preferences.jsonl")).unwrap();
    let pref: serde_json::Value = serde_json::from_str(prefs.lines().next().unwrap()).unwrap();
    assert_eq!(
        pref["chosen"],
        serde_json::json!(["demo/review_a.jsonl", "demo/review_b.jsonl"])
    );
    assert_eq!(pref["source"], "tui");
    assert_eq!(pref["blind"], false);
    assert_eq!(pref["models"].as_array().unwrap().len(), 2);

    tmux.press("C-u");
    tmux.type_text("/quit");
    tmux.press("Enter");
    tmux.wait_for(&["EXIT=0"]);
    let log = events(&proj);
    let choice = log.iter().find(|e| e["type"] == "choice").unwrap();
    assert_eq!(choice["turn"], 1);
    assert!(choice["apply_id"].is_string());
    assert!(
        log.iter().any(|e| e["type"] == "rewound" && e["turn"] == 1),
        "the rewind is in the session log"
    );
}

/// The demo model `lines.jsonl` (two nearby edits of story.txt joined into one hunk) in a
/// fresh project, its turn sent and its review open; the project's folder and the terminal.
fn lines_review(tmp: &util::Dir, session: &'static str) -> (std::path::PathBuf, Tmux) {
    let proj = tmp.path().join("project");
    review_project(&proj);
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tui/lines.jsonl"),
        proj.join("lines.jsonl"),
    )
    .unwrap();
    let config = tmp.write("empty.toml", "");
    let tmux = Tmux::start(session, 130, 40);
    launch(&tmux, &proj, &config, "-m demo/lines.jsonl");
    tmux.wait_for(&["turn 0"]);
    tmux.type_text("retell two lines");
    tmux.press("Enter");
    tmux.wait_for(&["turn 1 finished", "story.txt · modified · +2 -2 · hunk 1/1"]);
    (proj, tmux)
}

/// Issue 14 item 9: lines 3 and 5 changed by one model join into one hunk; the line cursor
/// picks only line 3 (its removed and added line) and exactly that lands on disk.
#[test]
fn a_line_pick_of_one_of_two_joined_changes_lands_exactly_that_line() {
    if !tmux_available() {
        eprintln!("skipped: tmux is not installed (apt-get install tmux; .ci/run does it)");
        return;
    }
    let tmp = util::Dir::new();
    let (proj, tmux) = lines_review(&tmp, "lines");
    // The first changed line of the hunk is line 3 as it was; then its replacement.
    tmux.press("J");
    tmux.wait_for(&["line -3 line 3 · L picks or drops it"]);
    tmux.press("L");
    tmux.wait_for(&["picked line -3 line 3 (story.txt) of demo/lines.jsonl"]);
    tmux.press("J");
    tmux.wait_for(&["line +3 line three, told by L · L picks"]);
    tmux.press("L");
    let screen = tmux.wait_for(&[
        "picked line +3 line three, told by L (story.txt)",
        "hunk 1/1 · from edit_file · ✓ 2 lines picked",
    ]);
    assert!(screen.contains("-✓line 3"), "{screen}");
    assert!(screen.contains("+✓line three, told by L"), "{screen}");
    // The cursor moves on to line 5 without picking it.
    tmux.press("J");
    tmux.wait_for(&["line -5 line 5 · L picks"]);
    tmux.press("a");
    let screen = tmux.wait_for(&["applied demo/lines.jsonl"]);
    assert!(screen.contains("wrote story.txt"), "{screen}");
    let story: String = (1..=30)
        .map(|i| match i {
            3 => "line three, told by L\n".to_string(),
            i => format!("line {i}\n"),
        })
        .collect();
    assert_eq!(
        std::fs::read_to_string(proj.join("story.txt")).unwrap(),
        story,
        "only line 3 changed; line 5 is as it was"
    );
    tmux.press_and_see("Escape");
    tmux.type_text("/quit");
    tmux.press("Enter");
    tmux.wait_for(&["EXIT=0"]);
}

/// Issue 14 item 17: a comment written on a line of the model's diff (`J` to the line, `m`,
/// text, Enter) and sent with `M` reaches that model's next request: its recorded conversation
/// ends with a user message carrying the comment, the file:line and the quoted line.
#[test]
fn an_inline_comment_reaches_the_models_next_request() {
    if !tmux_available() {
        eprintln!("skipped: tmux is not installed (apt-get install tmux; .ci/run does it)");
        return;
    }
    let tmp = util::Dir::new();
    let (proj, tmux) = lines_review(&tmp, "comment");
    tmux.press("J");
    tmux.press("J");
    tmux.wait_for(&["line +3 line three, told by L · L picks"]);
    tmux.press("m");
    tmux.wait_for(&["comment on story.txt:3:"]);
    tmux.type_text("say it in verse");
    tmux.press("Enter");
    tmux.wait_for(&["comment on story.txt:3 · M sends"]);
    tmux.press("M");
    tmux.wait_for(&["L-DONE: two lines retold.", "turn 2 finished"]);
    let sessions = proj.join(".versus/sessions");
    let dir = std::fs::read_dir(&sessions)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let read = versus::session::SessionLog::read(&dir).unwrap();
    let conversation = &read.conversations()["demo/lines.jsonl"];
    let last_user = conversation
        .iter()
        .rev()
        .find(|m| m.role == versus::model::Role::User && !m.text().is_empty())
        .expect("a user message");
    let text = last_user.text();
    assert!(
        text.contains("- story.txt:3 `line three, told by L`: say it in verse"),
        "{text}"
    );
    tmux.press_and_see("Escape");
    tmux.type_text("/quit");
    tmux.press("Enter");
    tmux.wait_for(&["EXIT=0"]);
}

/// A model whose bash leaves a `setsid` sleeper and a background child, then hangs.
fn hanging_model(proj: &Path, marker: &str) {
    let command = format!("setsid sleep {marker}1 & sleep {marker}2 & sleep 600");
    let step = serde_json::json!({"tools": [{"name": "bash", "args": {"command": command}}]});
    std::fs::write(
        proj.join("hang.jsonl"),
        format!("{step}\n{{\"say\": \"x\"}}\n"),
    )
    .unwrap();
}

/// SIGTERM or SIGHUP to the TUI while a model's command runs: every process it started is
/// gone, its workspace removed, the terminal back from the alternate screen, and the session
/// log readable line by line.
fn stop_by_signal(signal: &str, name: &'static str, marker: &str) {
    if !tmux_available() {
        eprintln!("skipped: tmux is not installed (apt-get install tmux; .ci/run does it)");
        return;
    }
    let tmp = util::Dir::new();
    let proj = tmp.path().join("project");
    project(&proj);
    hanging_model(&proj, marker);
    let config = tmp.write("empty.toml", "");
    let scratch = tmp.path().join("tmp");
    std::fs::create_dir_all(&scratch).unwrap();
    let tmux = Tmux::start(name, 120, 32);
    let command = format!(
        "TMPDIR={} XDG_STATE_HOME={} NO_COLOR=1 VERSUS_NO_KEYBOARD_ENHANCEMENT=1 {} -C {} --config {} -m demo/hang.jsonl; echo \"EXIT\"\"=$?\"",
        scratch.display(),
        util::state_home().display(),
        env!("CARGO_BIN_EXE_versus"),
        proj.display(),
        config.display()
    );
    tmux.type_text(&command);
    tmux.press("Enter");
    tmux.wait_for(&["turn 0", "demo/hang.jsonl"]);
    tmux.type_text("go");
    tmux.press("Enter");
    let (setsid_child, background) = (format!("{marker}1"), format!("{marker}2"));
    let deadline = Instant::now() + Duration::from_secs(30);
    while !(util::command_alive(&["sleep", &background])
        && util::command_alive(&["sleep", &setsid_child]))
    {
        assert!(
            Instant::now() < deadline,
            "the model's command never started"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let pid = versus_pid(&tmux).to_string();
    let sent = Command::new("kill")
        .args([&format!("-{signal}"), &pid])
        .status()
        .unwrap();
    assert!(sent.success());
    // The typed command never shows `EXIT=` itself (it is quoted in two), so this waits for
    // versus to have exited.
    let screen = tmux.wait_for(&["EXIT="]);
    assert_eq!(tmux.alternate_on(), "0", "terminal not restored:\n{screen}");
    assert!(
        util::command_gone(&["sleep", &setsid_child]),
        "setsid child survived"
    );
    assert!(
        util::command_gone(&["sleep", &background]),
        "background child survived"
    );
    let left: Vec<_> = std::fs::read_dir(util::users::workspaces_parent(
        &scratch,
        util::users::Who::Me,
    ))
    .map(|rd| {
        rd.flatten()
            .map(|e| e.file_name())
            // The frozen checkout kept for later runs (workspace::cow::cache) is no leftover.
            .filter(|n| !n.to_string_lossy().starts_with("cache-"))
            .collect()
    })
    .unwrap_or_default();
    assert!(left.is_empty(), "workspaces left behind: {left:?}");
    // Every line of the session log parses.
    let records = events(&proj);
    assert!(!records.is_empty());
}

#[test]
fn sigterm_stops_the_interface_and_everything_it_started() {
    stop_by_signal("TERM", "sigterm", "98761");
}

#[test]
fn sighup_stops_the_interface_and_everything_it_started() {
    stop_by_signal("HUP", "sighup", "98762");
}

/// Starts versus in the pane with its own state folder (where trust is recorded).
fn launch_with_state(tmux: &Tmux, proj: &Path, config: &Path, state: &Path, args: &str) {
    tmux.type_text("clear; ");
    launch_in(tmux, proj, config, state, args);
}

#[test]
fn the_interface_asks_before_a_projects_own_settings_count() {
    if !tmux_available() {
        eprintln!("skipped: tmux is not installed (apt-get install tmux; .ci/run does it)");
        return;
    }
    let tmp = util::Dir::new();
    let proj = tmp.path().join("project");
    project(&proj);
    std::fs::create_dir_all(proj.join(".versus")).unwrap();
    std::fs::write(
        proj.join(".versus/config.toml"),
        "models = [\"demo/quick.jsonl\"]\n",
    )
    .unwrap();
    std::fs::write(proj.join(".env"), "OPENAI_API_KEY=sk-never-shown-42\n").unwrap();
    let config = tmp.write("empty.toml", "");
    let state = tmp.path().join("state");
    let record = state.join("versus/trust.json");
    let tmux = Tmux::start("trust", 120, 40);

    // Asked first, shown what the files say (a key's value never), trusted with `y`: the
    // project's model is the session's model.
    launch_with_state(&tmux, &proj, &config, &state, "");
    let screen = tmux.wait_for_joined(&["Trust them? [y/N]"]);
    assert!(
        screen.contains("| models = [\"demo/quick.jsonl\"]"),
        "{screen}"
    );
    assert!(screen.contains("sets OPENAI_API_KEY"), "{screen}");
    assert!(!screen.contains("sk-never-shown-42"), "{screen}");
    assert!(!record.exists(), "recorded before the answer");
    tmux.type_text("y");
    tmux.press("Enter");
    tmux.wait_for(&["turn 0", "demo/quick.jsonl"]);
    assert!(record.exists(), "trust was not recorded");
    tmux.type_text("/quit");
    tmux.press("Enter");
    tmux.wait_for(&["EXIT=0"]);

    // Trusted and unchanged: no question.
    launch_with_state(&tmux, &proj, &config, &state, "");
    let screen = tmux.wait_for(&["turn 0", "demo/quick.jsonl"]);
    assert!(!screen.contains("Trust them?"), "{screen}");
    tmux.type_text("/quit");
    tmux.press("Enter");
    tmux.wait_for(&["EXIT=0"]);

    // Changed since: asked again; `n` leaves the files ignored and the banner says so.
    std::fs::write(
        proj.join(".versus/config.toml"),
        "models = [\"demo/broken.jsonl\"]\n",
    )
    .unwrap();
    launch_with_state(&tmux, &proj, &config, &state, "-m demo/quick.jsonl");
    let screen = tmux.wait_for_joined(&["Trust them? [y/N]"]);
    assert!(
        screen.contains("they changed since you trusted"),
        "{screen}"
    );
    tmux.type_text("n");
    tmux.press("Enter");
    let screen = tmux.wait_for_text(&["turn 0", "(changed since you trusted"]);
    assert!(!screen.contains("demo/broken.jsonl"), "{screen}");
    tmux.type_text("/quit");
    tmux.press("Enter");
    tmux.wait_for(&["EXIT=0"]);
}

/// A turn killed with SIGKILL after one model finished: `--continue` brings that model's
/// proposal back for review and choice (rebuilt from the session log, its workspace is gone),
/// the prompt goes back to the box for the model that never finished only, and the killed
/// model's command did not outlive versus.
#[test]
fn a_killed_turn_is_reviewable_after_continue_and_only_the_unfinished_model_reruns() {
    if !tmux_available() {
        eprintln!("skipped: tmux is not installed (apt-get install tmux; .ci/run does it)");
        return;
    }
    let tmp = util::Dir::new();
    let proj = tmp.path().join("project");
    project(&proj);
    let fast = serde_json::json!({"say": "Fixing the notes.", "tools": [{"name": "write_file",
        "args": {"path": "notes.txt", "content": "hello, fixed\n"}}]});
    std::fs::write(
        proj.join("fast.jsonl"),
        format!("{fast}\n{{\"say\": \"FAST-DONE\"}}\n"),
    )
    .unwrap();
    let marker = format!("4{}", std::process::id() % 100_000);
    let hang = serde_json::json!({"tools": [{"name": "bash",
        "args": {"command": format!("sleep {marker}")}}]});
    std::fs::write(
        proj.join("hang.jsonl"),
        format!("{hang}\n{{\"say\": \"x\"}}\n"),
    )
    .unwrap();
    util::git(&proj, &["add", "fast.jsonl", "hang.jsonl"]);
    util::git(&proj, &["commit", "-qm", "scripts"]);
    let config = tmp.write("empty.toml", "");
    {
        let tmux = Tmux::start("crashreview", 120, 32);
        launch(
            &tmux,
            &proj,
            &config,
            "-m demo/fast.jsonl -m demo/hang.jsonl",
        );
        tmux.wait_for(&["turn 0"]);
        tmux.type_text("fix the notes");
        tmux.press("Enter");
        // The finished model's change opens the review by itself.
        tmux.wait_for(&["1/2 finished", "hello, fixed"]);
        let deadline = Instant::now() + Duration::from_secs(30);
        while !util::command_alive(&["sleep", &marker]) {
            assert!(
                Instant::now() < deadline,
                "the hanging command never started"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let pid = versus_pid(&tmux);
        let killed = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        tmux.wait_for(&["EXIT=137"]);
    }
    assert!(
        util::command_gone(&["sleep", &marker]),
        "the killed model's command outlived versus"
    );
    assert_eq!(
        std::fs::read_to_string(proj.join("notes.txt")).unwrap(),
        "hello\n"
    );
    let tmux = Tmux::start("crashcontinue", 120, 32);
    launch(&tmux, &proj, &config, "--continue");
    let screen = tmux.wait_for(&["ready to review", "(interrupted"]);
    assert!(
        screen.contains("│@demo/hang.jsonl fix the notes"),
        "the prompt is back for the unfinished model only:\n{screen}"
    );
    // Review and choose the finished model's change, as if the session had never stopped.
    tmux.press("C-u");
    tmux.press("C-o");
    tmux.wait_for(&["hello, fixed"]);
    tmux.type_text("c");
    tmux.type_text("a");
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::fs::read_to_string(proj.join("notes.txt")).unwrap() != "hello, fixed\n" {
        assert!(
            Instant::now() < deadline,
            "the restored change was not applied:\n{}",
            tmux.screen()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // The choice record is appended by the session's writer thread after the files are
    // written, so it may land a moment after notes.txt changes.
    let choice = loop {
        if let Some(choice) = events(&proj).into_iter().find(|e| e["type"] == "choice") {
            break choice;
        }
        assert!(Instant::now() < deadline, "no choice record");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(choice["turn"], 1);
    assert_eq!(choice["chosen"], serde_json::json!(["demo/fast.jsonl"]));
    assert!(choice["apply_id"].is_string(), "{choice}");
}

/// A session log as comparable values: ids, times, paths, durations and token counts (the
/// demo model counts the system prompt, which a recipe extends) removed; records in turn order,
/// each model's records in the order it wrote them.
fn comparable(log: &Path) -> Vec<serde_json::Value> {
    fn scrub(value: &mut serde_json::Value) {
        match value {
            serde_json::Value::Object(map) => {
                map.retain(|key, _| {
                    !(key == "time"
                        || key == "root"
                        || key == "source"
                        || key == "usage"
                        || key == "total"
                        || key == "cost"
                        // When a tool call started and ended (wall-clock microseconds).
                        || key == "timing"
                        || key.ends_with("_ms"))
                });
                if map.get("type").and_then(|t| t.as_str()) == Some("usage") {
                    map.remove("step");
                }
                for v in map.values_mut() {
                    scrub(v);
                }
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(scrub),
            _ => {}
        }
    }
    let mut records: Vec<(u64, i64, usize, serde_json::Value)> = std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .enumerate()
        .map(|(n, line)| {
            let mut value: serde_json::Value = serde_json::from_str(line).unwrap();
            let turn = value["turn"]
                .as_u64()
                .or(value["continued_after_turn"].as_u64())
                .unwrap_or(0);
            let entry = value["entry"].as_i64().unwrap_or(-1);
            scrub(&mut value);
            (turn, entry, n, value)
        })
        .collect();
    records.sort_by_key(|(turn, entry, n, _)| (*turn, *entry, *n));
    records.into_iter().map(|(_, _, _, v)| v).collect()
}

/// The one engine under every front end: the same scripted turn through `versus ask`, the
/// interface and `versus run` leaves the same typed session records.
#[test]
fn ask_the_interface_and_run_record_the_same_turn_the_same_way() {
    if !tmux_available() {
        eprintln!("skipped: tmux is not installed (apt-get install tmux; .ci/run does it)");
        return;
    }
    let tmp = util::Dir::new();
    let proj = tmp.path().join("project");
    std::fs::create_dir_all(proj.join("scripts")).unwrap();
    std::fs::write(proj.join("notes.txt"), "hello\n").unwrap();
    std::fs::write(proj.join(".gitignore"), "scripts/\n*.recipe.md\n").unwrap();
    let step = serde_json::json!({"say": "Reading, then fixing.", "tools": [
        {"name": "read_file", "args": {"path": "notes.txt"}},
        {"name": "write_file", "args": {"path": "notes.txt", "content": "hello, fixed\n"}}]});
    std::fs::write(
        proj.join("scripts/fix.jsonl"),
        format!("{step}\n{{\"say\": \"Fixed the notes.\"}}\n"),
    )
    .unwrap();
    std::fs::write(
        proj.join("same.recipe.md"),
        "# Same turn\nversion: 1\n\n## Models\n- demo/scripts/fix.jsonl\n\n## Tasks\n\n### fix\nfix the notes\n",
    )
    .unwrap();
    util::git(&proj, &["init", "-q"]);
    util::git(&proj, &["add", "."]);
    util::git(&proj, &["commit", "-qm", "init"]);
    let config = tmp.write("empty.toml", "");

    let ask = util::versus()
        .arg("-C")
        .arg(&proj)
        .arg("--config")
        .arg(&config)
        .args([
            "ask",
            "fix the notes",
            "-m",
            "demo/scripts/fix.jsonl",
            "--quiet",
        ])
        .output()
        .unwrap();
    assert!(ask.status.success(), "{ask:?}");
    let run = util::versus()
        .current_dir(&proj)
        .arg("--config")
        .arg(&config)
        .args(["run", "same.recipe.md"])
        .output()
        .unwrap();
    assert!(run.status.code() == Some(0), "{run:?}");
    {
        let tmux = Tmux::start("sameturn", 120, 32);
        launch(&tmux, &proj, &config, "-m demo/scripts/fix.jsonl");
        tmux.wait_for(&["turn 0"]);
        tmux.type_text("fix the notes");
        tmux.press("Enter");
        tmux.wait_for(&["turn 1 finished"]);
        tmux.press_and_see("Escape");
        tmux.type_text("/quit");
        tmux.press("Enter");
        tmux.wait_for(&["EXIT=0"]);
    }
    let mut by_source = std::collections::BTreeMap::new();
    for entry in std::fs::read_dir(proj.join(".versus/sessions")).unwrap() {
        let log = entry.unwrap().path().join("events.jsonl");
        let first: serde_json::Value = serde_json::from_str(
            std::fs::read_to_string(&log)
                .unwrap()
                .lines()
                .next()
                .unwrap(),
        )
        .unwrap();
        by_source.insert(
            first["source"].as_str().unwrap().to_string(),
            comparable(&log),
        );
    }
    assert_eq!(
        by_source.keys().collect::<Vec<_>>(),
        ["ask", "run", "tui"],
        "one session per front end"
    );
    let ask = &by_source["ask"];
    assert!(ask.len() > 10, "{ask:#?}");
    let kinds: Vec<&str> = ask.iter().map(|r| r["type"].as_str().unwrap()).collect();
    for kind in [
        "opened",
        "turn",
        "workspace",
        "agent",
        "proposals",
        "finished",
        "conversation_tail",
        "turn_ended",
        "ended",
    ] {
        assert!(
            kinds.contains(&kind)
                || (kind == "conversation_tail" && kinds.contains(&"conversation")),
            "no {kind} record: {kinds:?}"
        );
    }
    for other in ["tui", "run"] {
        let theirs = &by_source[other];
        for (n, (a, b)) in ask.iter().zip(theirs.iter()).enumerate() {
            assert_eq!(a, b, "record {n} differs between ask and {other}");
        }
        assert_eq!(
            ask.len(),
            theirs.len(),
            "ask and {other} wrote different numbers of records"
        );
    }
}

/// Issue 14 item 16 in the real binary: `v` diffs demo/review_a's story.txt against
/// demo/review_b's version (both changed line 3, each its own way; only A changed line 25), a
/// pick is refused while comparing, `v` returns to the base diff, and `V` shows both models'
/// versions of the hunk.
#[test]
fn v_compares_two_models_in_a_real_terminal() {
    if !tmux_available() {
        eprintln!("skipped: tmux is not installed (apt-get install tmux; .ci/run does it)");
        return;
    }
    let tmp = util::Dir::new();
    let proj = tmp.path().join("project");
    review_project(&proj);
    let config = tmp.write("empty.toml", "");
    let tmux = Tmux::start("compare", 130, 40);
    launch(
        &tmux,
        &proj,
        &config,
        "-m demo/review_a.jsonl -m demo/review_b.jsonl",
    );
    tmux.wait_for(&["turn 0"]);
    tmux.type_text("tell the story");
    tmux.press("Enter");
    tmux.wait_for(&["turn 1 finished", "review · turn 1 · 2/2 finished"]);
    // A selected (the review opens on whichever finished first), its only file story.txt.
    if !tmux.screen().contains("files · demo/review_a.jsonl (") {
        tmux.press("Tab");
    }
    tmux.wait_for(&[
        "files · demo/review_a.jsonl (",
        "story.txt · modified · +2 -2",
    ]);
    tmux.press("v");
    let screen = tmux.wait_for(&[
        "demo/review_a.jsonl vs demo/review_b.jsonl · story.txt",
        "comparing with demo/review_b.jsonl",
    ]);
    assert!(screen.contains("- line 3 as B sees it"), "{screen}");
    assert!(screen.contains("+ line three, told by A"), "{screen}");
    assert!(screen.contains("+ line twenty-five, told by A"), "{screen}");
    tmux.press("Space");
    tmux.wait_for(&["picks are relative to the base"]);
    tmux.press("v");
    tmux.wait_for(&[
        "comparing with the base again",
        "story.txt · modified · +2 -2",
    ]);
    tmux.press("V");
    let screen = tmux.wait_for(&["story.txt lines 1-6 · every model's version (2)"]);
    assert!(screen.contains("line three, told by A"), "{screen}");
    assert!(screen.contains("line 3 as B sees it"), "{screen}");
    tmux.press("Escape");
    tmux.wait_for(&["story.txt · modified · +2 -2 · hunk 1/2"]);
}

/// Issue 21 item 2: the review's shell (`o`) opened in a workspace whose git config, aliases
/// and hooks the model wrote. The first `git status` there (typed, or run by a git-aware
/// prompt) used to run the model's `core.fsmonitor` on the host with versus's keys. Now the
/// shell runs in the model's sandbox: whatever the model's config runs stays in its
/// workspace, and the shell has no keys. Played as the test user and as an unprivileged one.
#[test]
fn the_review_shell_runs_the_models_git_config_only_inside_its_sandbox() {
    use util::users::{Who, give_away};
    if !tmux_available() {
        eprintln!("skipped: tmux is not installed (apt-get install tmux; .ci/run does it)");
        return;
    }
    for who in Who::BOTH {
        let tmp = util::Dir::new();
        let proj = tmp.path().join("project");
        review_project(&proj);
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        let o = outside.display();
        let configure = format!(
            "git config core.fsmonitor 'env > {o}/fsmonitor-env; touch {o}/fsmonitor-ran; false' \
             && git config core.pager 'touch {o}/pager-ran; cat' \
             && git config alias.st '!touch {o}/alias-ran' \
             && printf '#!/bin/sh\\ntouch {o}/hook-ran\\n' > .git/hooks/post-checkout \
             && chmod +x .git/hooks/post-checkout && echo configured"
        );
        let steps = [
            serde_json::json!({"tools": [{"name": "bash", "args": {"command": configure}}]}),
            serde_json::json!({"tools": [{"name": "edit_file", "args": {"path": "notes.txt",
                "old_string": "hello\n", "new_string": "hello, shell\n"}}]}),
            serde_json::json!({"say": "HOSTILE-DONE"}),
        ];
        let script: String = steps.iter().map(|s| format!("{s}\n")).collect();
        std::fs::write(proj.join("hostile.jsonl"), script).unwrap();
        let config = tmp.write("empty.toml", "");
        let workspaces = tmp.path().join("tmp");
        std::fs::create_dir_all(&workspaces).unwrap();
        // A home of this user's own: versus keeps its per-user state (the key that stamps
        // `.versus`) there.
        let home = tmp.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        give_away(tmp.path(), who);
        let tmux = Tmux::start(
            if who == Who::Me {
                "shell-me"
            } else {
                "shell-nobody"
            },
            130,
            40,
        );
        launch_as(
            &tmux,
            who,
            "sk-shell-canary",
            [&workspaces, &home, &proj, &config],
            "-m demo/hostile.jsonl",
        );
        tmux.wait_for(&["turn 0"]);
        tmux.type_text("configure your git");
        tmux.press("Enter");
        tmux.wait_for(&["review · turn 1 · 1/1 finished"]);
        tmux.press("o");
        let banner = tmux.wait_for(&["a shell in the workspace of demo/hostile.jsonl"]);
        assert!(
            banner
                .replace('\n', "")
                .contains("sandboxed like the model's own commands"),
            "{banner}"
        );
        tmux.type_text(
            "git status >/dev/null 2>&1; git st; git log -1 >/dev/null; git checkout -q -b x; \
             echo \"KEY=${OPENAI_API_KEY:-none}-END\"",
        );
        tmux.press("Enter");
        let screen = tmux.wait_for(&["KEY=none-END"]);
        let shell_part = &screen[screen.find("versus: a shell in").unwrap()..];
        assert!(
            !shell_part.contains("sk-shell-canary"),
            "{}: {screen}",
            who.name()
        );
        tmux.type_text("exit");
        tmux.press("Enter");
        tmux.wait_for(&["back from the shell in demo/hostile.jsonl's workspace"]);
        let ran: Vec<_> = std::fs::read_dir(&outside)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(
            ran.is_empty(),
            "{}: the model's git config ran outside its sandbox: {ran:?}",
            who.name()
        );
        // Dropping the tmux server ends versus (SIGHUP) before the folders go.
        drop(tmux);
    }
}

/// A cloned repository ships links as easily as files: `CONTRIBUTING.md -> ~/.ssh/id_ed25519`
/// and `ENV.md -> /proc/self/environ` (versus's own environment, every key it holds). Attached
/// with `@` like any project file, both used to be read on the host and sent to every model of
/// the turn. Now an attachment is a project file by the rule the models' own tools follow (a
/// link must resolve inside the project): those two stay plain text, the real file attaches.
/// Played as the test user and as an unprivileged one.
#[test]
fn an_attachment_never_follows_a_link_out_of_the_project() {
    use util::users::{Who, give_away};
    if !tmux_available() {
        eprintln!("skipped: tmux is not installed (apt-get install tmux; .ci/run does it)");
        return;
    }
    for who in Who::BOTH {
        let tmp = util::Dir::new();
        let proj = tmp.path().join("project");
        project(&proj);
        let home = tmp.path().join("home");
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::write(home.join(".ssh/id_ed25519"), "PRIVATE-KEY-CANARY\n").unwrap();
        std::os::unix::fs::symlink(home.join(".ssh/id_ed25519"), proj.join("CONTRIBUTING.md"))
            .unwrap();
        std::os::unix::fs::symlink("/proc/self/environ", proj.join("ENV.md")).unwrap();
        let config = tmp.write("empty.toml", "");
        let workspaces = tmp.path().join("tmp");
        std::fs::create_dir_all(&workspaces).unwrap();
        give_away(tmp.path(), who);
        let tmux = Tmux::start(
            if who == Who::Me {
                "attach-me"
            } else {
                "attach-nobody"
            },
            130,
            40,
        );
        launch_as(
            &tmux,
            who,
            "sk-attach-canary",
            [&workspaces, &home, &proj, &config],
            "-m demo/quick.jsonl",
        );
        tmux.wait_for(&["turn 0"]);
        tmux.type_text("read @CONTRIBUTING.md @ENV.md @notes.txt ");
        tmux.press("Enter");
        tmux.wait_for(&["QUICK-DONE"]);
        let sessions = proj.join(".versus/sessions");
        let dir = std::fs::read_dir(&sessions)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        let read = versus::session::SessionLog::read(&dir).unwrap();
        let conversation = &read.conversations()["demo/quick.jsonl"];
        let sent: String = conversation
            .iter()
            .filter(|m| m.role == versus::model::Role::User)
            .map(|m| m.text())
            .collect();
        assert!(
            sent.contains("Attached file `notes.txt`"),
            "{}: {sent}",
            who.name()
        );
        for secret in [
            "PRIVATE-KEY-CANARY",
            "sk-attach-canary",
            "Attached file `ENV.md`",
        ] {
            assert!(
                !sent.contains(secret),
                "{}: {secret} reached the model: {sent}",
                who.name()
            );
        }
        // Dropping the tmux server ends versus (SIGHUP) before the folders go.
        drop(tmux);
    }
}

/// A model whose bash call prints a known line (built by printf, so the command line does not
/// hold it) and exits 3, then answers.
const EXIT3_SCRIPT: &str = r#"{"say": "Running the tests.", "tools": [{"name": "bash", "args": {"command": "printf 'first\\nKNOWN-%s\\n' OUTPUT-7731; exit 3"}}]}
{"say": "EXIT3-DONE: the tests fail."}
"#;

#[test]
fn a_command_that_exits_3_is_shown_failed_with_its_output_in_a_real_terminal() {
    if !tmux_available() {
        eprintln!("skipped: tmux is not installed (apt-get install tmux; .ci/run does it)");
        return;
    }
    let tmp = util::Dir::new();
    let proj = tmp.path().join("project");
    versus::example::write_project(&proj).unwrap();
    std::fs::write(proj.join("exit3.jsonl"), EXIT3_SCRIPT).unwrap();
    let config = tmp.write("empty.toml", "");
    let tmux = Tmux::start("toolfail", 110, 30);
    launch(&tmux, &proj, &config, "-m demo/exit3.jsonl");
    tmux.wait_for(&["turn 0", "demo/exit3.jsonl"]);

    tmux.type_text("run the tests");
    tmux.press("Enter");
    // The panel: the failure mark with the exit code, and the output's tail under the call.
    let screen = tmux.wait_for(&["EXIT3-DONE", "turn 1 finished"]);
    assert!(screen.contains("✗ bash printf"), "{screen}");
    assert!(screen.contains("· exit 3 ·"), "{screen}");
    assert!(screen.contains("    KNOWN-OUTPUT-7731"), "{screen}");
    assert!(
        !screen.contains("✓ bash"),
        "a failed call is never ✓: {screen}"
    );

    // Ctrl+T: the whole result in the overlay; any key closes it.
    tmux.press("C-t");
    let screen = tmux.wait_for(&["tool results", "turn 1 · ✗ exit 3 bash printf"]);
    assert!(screen.contains("  first"), "{screen}");
    assert!(screen.contains("  [exit code: 3]"), "{screen}");
    tmux.press_and_see("Escape");

    // /verbose: the whole output under the call, in the transcript.
    tmux.type_text("/verbose");
    tmux.press("Enter");
    let screen = tmux.wait_for(&["│ KNOWN-OUTPUT-7731", "│ [exit code: 3]"]);
    assert!(screen.contains("│ first"), "{screen}");

    let export = tmp.path().join("export.md");
    tmux.type_text(&format!("/export {}", export.display()));
    tmux.press("Enter");
    tmux.wait_for_joined(&["exported to"]);
    tmux.type_text("/quit");
    tmux.press("Enter");
    tmux.wait_for(&["EXIT=0"]);

    let md = std::fs::read_to_string(&export).unwrap();
    assert!(md.contains("✗ bash printf"), "{md}");
    assert!(md.contains("│ KNOWN-OUTPUT-7731"), "{md}");
    let show = util::versus()
        .arg("-C")
        .arg(&proj)
        .args(["sessions", "show"])
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&show.stdout);
    assert!(shown.contains("✗ exit 3 bash printf"), "{shown}");
    assert!(shown.contains("│ KNOWN-OUTPUT-7731"), "{shown}");
}

/// Issue 23: the review's check and a recipe's `run:` criterion are one evaluator. The same
/// command (62 lines of output, the model's file last, exit 3) as the recipe's `Review: check`
/// in the interface and as its `run:` criterion in `versus run`: the session's `check` record
/// and the report's criterion detail say the same thing in the same words, with the same tail.
#[test]
fn one_check_command_reads_the_same_in_the_review_and_in_a_run_report() {
    if !tmux_available() {
        eprintln!("skipped: tmux is not installed (apt-get install tmux; .ci/run does it)");
        return;
    }
    let tmp = util::Dir::new();
    let proj = tmp.path().join("project");
    std::fs::create_dir_all(proj.join("scripts")).unwrap();
    std::fs::write(proj.join("notes.txt"), "hello\n").unwrap();
    std::fs::write(proj.join(".gitignore"), "scripts/\n*.recipe.md\nout/\n").unwrap();
    let step = serde_json::json!({"say": "Fixing.", "tools": [
        {"name": "write_file", "args": {"path": "notes.txt", "content": "hello, fixed\n"}}]});
    std::fs::write(
        proj.join("scripts/fix.jsonl"),
        format!("{step}\n{{\"say\": \"Fixed the notes.\"}}\n"),
    )
    .unwrap();
    let command = "seq 1 60; cat notes.txt; exit 3";
    let recipe = proj.join("verdict.recipe.md");
    std::fs::write(
        &recipe,
        format!(
            "# Verdict\nversion: 1\n\n## Models\n- demo/scripts/fix.jsonl\n\n## Review\ncheck: {command}\n\n## Tasks\n- fix the notes\n\n## Success Criteria\n- run: {command}\n"
        ),
    )
    .unwrap();
    util::git(&proj, &["init", "-q"]);
    util::git(&proj, &["add", "."]);
    util::git(&proj, &["commit", "-qm", "init"]);
    let config = tmp.write("empty.toml", "");

    let run = util::versus()
        .current_dir(&proj)
        .arg("--config")
        .arg(&config)
        .args(["run", "verdict.recipe.md", "--out", "out", "--quiet"])
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(1), "{run:?}");
    {
        let tmux = Tmux::start("verdict", 120, 32);
        launch(
            &tmux,
            &proj,
            &config,
            &format!("--recipe {}", recipe.display()),
        );
        tmux.wait_for(&["turn 0"]);
        tmux.type_text("fix the notes");
        tmux.press("Enter");
        tmux.wait_for(&["turn 1 finished", "failed (exit 3)"]);
        tmux.press_and_see("Escape");
        tmux.type_text("/quit");
        tmux.press("Enter");
        tmux.wait_for(&["EXIT=0"]);
    }
    let mut checks = Vec::new();
    for entry in std::fs::read_dir(proj.join(".versus/sessions")).unwrap() {
        let log = std::fs::read_to_string(entry.unwrap().path().join("events.jsonl")).unwrap();
        for line in log.lines() {
            let record: serde_json::Value = serde_json::from_str(line).unwrap();
            if record["type"] == "check" {
                checks.push(record["result"].clone());
            }
        }
    }
    assert_eq!(checks.len(), 1, "one review check: {checks:?}");
    let review = &checks[0];
    assert_eq!(review["ending"], "failed (exit 3)", "{review}");
    let tail: Vec<&str> = review["tail"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert_eq!(tail.len(), 50, "{tail:?}");
    assert_eq!(tail.first(), Some(&"12"), "{tail:?}");
    assert_eq!(
        tail.last(),
        Some(&"hello, fixed"),
        "the model's file: {tail:?}"
    );

    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(proj.join("out/report.json")).unwrap())
            .unwrap();
    let criteria = report["tasks"][0]["runs"][0]["criteria"]
        .as_array()
        .unwrap();
    let criterion = criteria
        .iter()
        .find(|c| c["kind"] == "run")
        .expect("the run criterion");
    let detail = criterion["detail"].as_str().unwrap();
    assert_eq!(
        detail,
        format!(
            "failed (exit 3); last 50 lines of output:\n{}",
            tail.join("\n")
        ),
        "the same verdict, the same words, the same tail"
    );
    let summary = std::fs::read_to_string(proj.join("out/summary.md")).unwrap();
    assert!(
        summary.contains("failed (exit 3); last 50 lines of output:"),
        "{summary}"
    );
}

/// The row of the review table that names `label` (empty when none does).
fn table_row(screen: &str, label: &str) -> String {
    screen
        .lines()
        .find(|l| l.contains(&format!(" {label} ")) && l.contains("done"))
        .unwrap_or_default()
        .to_string()
}

/// Issue 22 items 4 and 5 in the real binary: the demo tells its story with no command typed.
/// Enter, and the review opens by itself once every model's check (the example project's own
/// `[check]`: cargo test) has ended, on demo/good (passed, tests left alone), with the check
/// column filled for every model (reckless broke the build: ✗) and demo/sloppy marked for
/// editing the test. Quitting prints the command that continues it (the session is in the
/// demo's own folder, not the one the user is in); run as printed, the session comes back
/// with the same check results.
#[test]
fn the_demo_review_opens_on_the_best_model_with_its_checks_and_continues_as_printed() {
    if !tmux_available() {
        eprintln!("skipped: tmux is not installed (apt-get install tmux; .ci/run does it)");
        return;
    }
    let tmp = util::Dir::new();
    let here = tmp.path().join("here");
    let temp = tmp.path().join("temp");
    std::fs::create_dir_all(&here).unwrap();
    std::fs::create_dir_all(&temp).unwrap();
    let config = tmp.write("empty.toml", "");
    let tmux = Tmux::start("demo-story", 160, 45);
    launch_demo(&tmux, &here, &temp, &config);
    tmux.wait_for(&[
        "Demo mode",
        "The test ten_items_get_the_bulk_discount fails",
    ]);
    tmux.press("Enter");
    let within = Duration::from_secs(300);
    let screen = tmux.wait_for_within(&["review · turn 1 · 3/3 finished", "▸ demo/good"], within);
    let assert_story = |screen: &str| {
        let (good, sloppy, reckless) = (
            table_row(screen, "demo/good"),
            table_row(screen, "demo/sloppy"),
            table_row(screen, "demo/reckless"),
        );
        assert!(good.contains("▸ demo/good"), "{screen}");
        assert!(good.contains(" ✓ ") && !good.contains('⚠'), "{screen}");
        assert!(sloppy.contains("⚠ 1") && sloppy.contains(" ✓ "), "{screen}");
        assert!(
            reckless.contains(" ✗ ") && !reckless.contains('⚠'),
            "{screen}"
        );
        assert!(
            screen
                .contains("⚠ demo/sloppy changed test files: a test edited to pass proves nothing"),
            "{screen}"
        );
        assert!(
            screen.contains("demo/good: `cargo test --quiet --all-targets` passed (exit 0)"),
            "{screen}"
        );
    };
    assert_story(&screen);
    // The diff on screen is demo/good's fix.
    assert!(screen.contains("files · demo/good (1)"), "{screen}");
    assert!(screen.contains("if count >= BULK_MIN_ITEMS {"), "{screen}");

    // Quit; the question and the last line name the command that continues it.
    tmux.press("C-c");
    let question = tmux.wait_for(&["again to quit: turn 1 is not chosen yet"]);
    let demo_dir = std::fs::read_dir(&temp)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("versus-demo-")
        })
        .expect("the demo's folder, in the temp folder");
    assert!(
        std::fs::read_dir(&here).unwrap().next().is_none(),
        "the user's folder is untouched"
    );
    let command = format!("versus -C {} --continue", demo_dir.display());
    assert!(
        question.contains(&format!("({command} brings it back)")),
        "{question}"
    );
    tmux.press("C-c");
    let after = tmux.wait_for_joined(&["EXIT=0"]);
    let printed = after
        .lines()
        .find_map(|l| l.strip_prefix("versus: continue it with: "))
        .unwrap_or_else(|| panic!("no continue line:\n{after}"))
        .trim()
        .to_string();
    assert_eq!(printed, command);

    // Continue exactly as printed (from the user's folder), with the tests' own settings.
    tmux.type_text("clear");
    tmux.press("Enter");
    tmux.type_text(&format!(
        "NO_COLOR=1 VERSUS_NO_KEYBOARD_ENHANCEMENT=1 TMPDIR={} XDG_STATE_HOME={} {}{} --config {}; echo EXIT=$?",
        temp.display(),
        util::state_home().display(),
        env!("CARGO_BIN_EXE_versus"),
        printed.strip_prefix("versus").unwrap(),
        config.display()
    ));
    tmux.press("Enter");
    // No trust question (versus wrote the demo's settings and trusted them), and the
    // reopened turn's review comes back with its recorded checks (the workspaces are gone).
    let screen = tmux.wait_for_within(&["review · turn 1 · 3/3 finished", "▸ demo/good"], within);
    assert!(!screen.contains("Trust them?"), "{screen}");
    assert_story(&screen);
    tmux.press("C-c");
    tmux.wait_for(&["again to quit"]);
    tmux.press("C-c");
    tmux.wait_for_joined(&["EXIT=0\n"]);
}

/// Two scripted models for the blind session, each writing its own file every turn. Their
/// names (`zebra`, `walrus`) appear in no text they say or write, so any of them on screen is a
/// leak of the interface.
fn blind_project(dir: &Path) {
    review_project(dir);
    for (name, first, second) in [
        ("zebra", "one.txt", "three.txt"),
        ("walrus", "two.txt", "four.txt"),
    ] {
        let step = |path: &str, say: &str| {
            serde_json::json!({"say": say, "token_delay_ms": 2, "tools": [{"name": "write_file",
                "args": {"path": path, "content": format!("{path} written\n")}}]})
        };
        let script = format!(
            "{}\n{}\n{}\n{}\n",
            step(first, "Writing a first file."),
            serde_json::json!({"say": "FIRST-DONE", "token_delay_ms": 2}),
            step(second, "Writing a second file."),
            serde_json::json!({"say": "SECOND-DONE", "token_delay_ms": 2}),
        );
        std::fs::write(dir.join(format!("{name}.jsonl")), script).unwrap();
    }
}

/// Every screen a blind session shows, captured over and over while it waits, checked for any
/// model name (label, script name, provider).
struct BlindWatch<'a> {
    tmux: &'a Tmux,
    scanned: usize,
}

impl BlindWatch<'_> {
    /// Fails if `screen` names a model.
    fn check(&mut self, screen: &str, step: &str) {
        self.scanned += 1;
        let lower = screen.to_lowercase();
        for leak in ["zebra", "walrus", "demo"] {
            assert!(
                !lower.contains(leak),
                "{step}: the screen shows {leak:?}:\n{screen}"
            );
        }
    }

    /// [`Tmux::wait_for`], checking every capture on the way.
    fn wait_for(&mut self, needles: &[&str], step: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut last = String::new();
        loop {
            let screen = self.tmux.screen();
            self.check(&screen, step);
            if needles.iter().all(|n| screen.contains(n)) && screen == last {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "{step}: waited for {needles:?}; the screen is:\n{screen}"
            );
            last = screen;
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Tab until the review's file list is `alias`'s, checking every capture.
    fn select(&mut self, alias: &str) {
        let want = format!("files · {alias} (");
        for _ in 0..4 {
            let screen = self.wait_for(&["files · "], "selecting a model");
            if screen.contains(&want) {
                return;
            }
            self.tmux.press("Tab");
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                let now = self.tmux.screen();
                self.check(&now, "after Tab");
                if now != screen || Instant::now() > deadline {
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        self.wait_for(&[&want], "selecting a model");
    }
}

/// Issue 22 item 2: a two-turn blind session in a real terminal, every screen captured from
/// the start to the choice of turn 2 scanned for any model name (the models come from the
/// config, so not even the command line names them). Both choices take "Model A"'s changes:
/// the preference lines, both blind, name the same model, so the alias stayed with its model
/// across the turns. Quitting ends the session and says who was who.
#[test]
fn a_two_turn_blind_session_never_shows_a_model_name_until_revealed() {
    if !tmux_available() {
        eprintln!("skipped: tmux is not installed (apt-get install tmux; .ci/run does it)");
        return;
    }
    let tmp = util::Dir::new();
    let proj = tmp.path().join("project");
    blind_project(&proj);
    let config = tmp.write(
        "settings.toml",
        "models = [\"demo/zebra.jsonl\", \"demo/walrus.jsonl\"]\n",
    );
    let tmux = Tmux::start("blind", 100, 30);
    let mut watch = BlindWatch {
        tmux: &tmux,
        scanned: 0,
    };
    watch.check(&tmux.screen(), "the shell");
    launch(&tmux, &proj, &config, "--blind");
    // Before turn 1: the idle panels show the aliases.
    let screen = watch.wait_for(&["turn 0", "Model A", "Model B", "blind"], "start");
    assert_eq!(tmux.alternate_on(), "1");
    assert!(
        screen.contains("○ Model A") && screen.contains("○ Model B"),
        "{screen}"
    );

    for (turn, prompt) in [(1, "write your first file"), (2, "write your second file")] {
        tmux.type_text(prompt);
        watch.check(&tmux.screen(), "typing");
        tmux.press("Enter");
        let done = format!("turn {turn} finished");
        let title = format!("review · turn {turn} · 2/2 finished");
        watch.wait_for(&[&done, &title], "the turn");
        watch.select("Model A");
        tmux.press("c");
        watch.wait_for(&["basket: "], "picked");
        tmux.press("a");
        let screen = watch.wait_for(&["applied Model A"], "applied");
        assert!(screen.contains("names stay hidden"), "{screen}");
        tmux.press_and_see("Escape");
        watch.check(&tmux.screen(), "back to the prompt");
    }
    assert!(watch.scanned > 20, "only {} screens scanned", watch.scanned);

    // Both choices were blind, and took the same model: its alias never changed.
    let prefs = std::fs::read_to_string(proj.join(".versus/preferences.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> = prefs
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{prefs}");
    assert!(lines.iter().all(|l| l["blind"] == true), "{prefs}");
    assert_eq!(lines[0]["chosen"], lines[1]["chosen"], "{prefs}");
    let chosen = lines[0]["chosen"][0].as_str().unwrap().to_string();
    assert!(chosen.starts_with("demo/"), "{chosen}");

    // The session ends: who was who is said.
    tmux.type_text("/quit");
    tmux.press("Enter");
    let screen = tmux.wait_for_joined(&["EXIT=0"]);
    assert!(
        screen.contains(&format!(
            "versus: blind session ended: Model A was {chosen}"
        )),
        "{screen}"
    );
    let log = events(&proj);
    let turns: Vec<bool> = log
        .iter()
        .filter(|e| e["type"] == "turn")
        .map(|e| e["blind"] == true)
        .collect();
    assert_eq!(turns, [true, true]);
    assert!(
        log.iter()
            .any(|e| e["type"] == "blind" && e["revealed"] == true)
    );
}

/// A session log a newer versus wrote is read but never continued, by the interface as by
/// `versus ask`: `--continue` refuses with the message to update versus, before the terminal
/// is taken over, and the log stays as it was, byte for byte.
#[test]
fn continue_refuses_a_log_written_by_a_newer_versus() {
    if !tmux_available() {
        eprintln!("skipped: tmux is not installed (apt-get install tmux; .ci/run does it)");
        return;
    }
    let tmp = util::Dir::new();
    let proj = tmp.path().join("project");
    project(&proj);
    let config = tmp.write("empty.toml", "");
    let out = util::versus()
        .arg("-C")
        .arg(&proj)
        .arg("--config")
        .arg(&config)
        .args(["ask", "hello", "-m", "demo/quick.jsonl", "--quiet"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let session = std::fs::read_dir(proj.join(".versus/sessions"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let log = session.join("events.jsonl");
    let mut file = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    std::io::Write::write_all(&mut file, b"{\"v\":42,\"type\":\"future\",\"turn\":1}\n").unwrap();
    drop(file);
    let before = std::fs::read(&log).unwrap();

    let tmux = Tmux::start("newer", 120, 32);
    launch(&tmux, &proj, &config, "--continue");
    let screen = tmux.wait_for_joined(&["update versus to continue it", "EXIT="]);
    assert!(
        screen.contains("written by a newer versus (session log format 42"),
        "{screen}"
    );
    assert!(!screen.contains("EXIT=0"), "{screen}");
    assert_eq!(std::fs::read(&log).unwrap(), before, "the log is unchanged");
}

/// Issue 23 item 3: the project-wide "an apply was interrupted" refusal holds for the
/// interface's apply as it does for `versus ask --pick`: while another session's apply is
/// interrupted half-way (its journal begun, never committed), applying in the review is
/// refused with the command that rolls it back, and no file is written.
#[test]
fn the_interface_refuses_to_apply_while_another_sessions_apply_is_interrupted() {
    if !tmux_available() {
        eprintln!("skipped: tmux is not installed (apt-get install tmux; .ci/run does it)");
        return;
    }
    let tmp = util::Dir::new();
    let proj = tmp.path().join("project");
    project(&proj);
    std::fs::write(
        proj.join("writer.jsonl"),
        "{\"tools\": [{\"name\": \"write_file\", \"args\": {\"path\": \"other.txt\", \"content\": \"from the model\\n\"}}]}\n{\"say\": \"wrote other.txt\"}\n",
    )
    .unwrap();
    // Another session applies; then its journal says a later apply began and never ended
    // (what a crash half-way leaves).
    let out = util::versus()
        .args(["-C", proj.to_str().unwrap(), "ask", "write it", "-q"])
        .args(["-m", "demo/writer.jsonl", "--pick", "demo/writer.jsonl"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::remove_file(proj.join("other.txt")).unwrap();
    let session = std::fs::read_dir(proj.join(".versus/sessions"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    versus::apply::journal::append(
        &session,
        &versus::apply::journal::Record::Begin {
            apply_id: "a-interrupted".into(),
            time: 1,
            label: "write it".into(),
            models: vec!["demo/writer.jsonl".into()],
            hunks: Vec::new(),
            paths: vec!["other.txt".into()],
            snapshot: "s-interrupted".into(),
        },
    )
    .unwrap();
    let config = tmp.write("empty.toml", "");
    let tmux = Tmux::start("refuse-interrupted", 140, 40);
    launch(&tmux, &proj, &config, "-m demo/writer.jsonl");
    tmux.wait_for(&["turn 0"]);
    tmux.type_text("write it again");
    tmux.press("Enter");
    tmux.wait_for(&["turn 1 finished", "other.txt"]);
    tmux.press("c");
    tmux.wait_for(&["basket: 1 file"]);
    tmux.press("a");
    let screen = tmux.wait_for_joined(&["a-interrupted", "was interrupted half-way"]);
    assert!(screen.contains("versus rewind"), "{screen}");
    assert!(
        !proj.join("other.txt").exists(),
        "nothing was written while the other apply is interrupted"
    );
    tmux.press_and_see("Escape");
    tmux.type_text("/quit");
    tmux.press("Enter");
    tmux.wait_for(&["EXIT=0"]);
}

/// The turn's context in a real terminal: the project's `AGENTS.md` and the global one beside
/// the config file given (`--config FILE`: FILE's folder is the user's for this run) are
/// listed under the review's table with their sizes, with the fairness verdict, and the
/// session log holds the same in its `context` record.
#[test]
fn the_review_lists_the_context_files_the_models_read() {
    if !tmux_available() {
        eprintln!("skipped: tmux is not installed (apt-get install tmux; .ci/run does it)");
        return;
    }
    let tmp = util::Dir::new();
    let proj = tmp.path().join("project");
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::write(proj.join("AGENTS.md"), "Keep the story short.\n").unwrap();
    review_project(&proj);
    let config = tmp.write("empty.toml", "");
    tmp.write("AGENTS.md", "Answer in English.\n");
    let tmux = Tmux::start("context", 150, 40);
    launch(
        &tmux,
        &proj,
        &config,
        "-m demo/review_a.jsonl -m demo/review_b.jsonl",
    );
    tmux.wait_for(&["turn 0"]);
    tmux.type_text("tell the story");
    tmux.press("Enter");
    let screen = tmux.wait_for(&[
        "review · turn 1 · 2/2 finished",
        "context files: ",
        "AGENTS.md (global, 19 B), AGENTS.md (22 B)",
        "fairness: every model was given the same",
    ]);
    assert!(
        !screen.contains("was given something different"),
        "{screen}"
    );
    let context = events(&proj)
        .into_iter()
        .find(|r| r["type"] == "context")
        .expect("a context record");
    let paths: Vec<&str> = context["context"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths.len(), 2, "{paths:?}");
    assert!(
        paths[0].ends_with("/AGENTS.md") && paths[1] == "AGENTS.md",
        "{paths:?}"
    );
    assert_eq!(context["ledger"].as_array().unwrap().len(), 2);
}

/// Issue 23: `versus run`'s live table shows a model that only waits for its `--jobs` place
/// as waiting, not preparing (it was marked preparing as soon as its task's turn started).
#[test]
fn a_run_shows_a_model_waiting_for_its_jobs_place_as_waiting() {
    if !tmux_available() {
        eprintln!("skipped: tmux is not installed (apt-get install tmux; .ci/run does it)");
        return;
    }
    let dir = crate::run_recipe::fixture();
    let config = dir.write("empty.toml", "");
    let tmux = Tmux::start("runwaiting", 120, 20);
    launch(
        &tmux,
        dir.path(),
        &config,
        &format!(
            "run {} --out {} --jobs 1 -m demo/slow.jsonl -m demo/fixer.jsonl",
            dir.path().join("run.recipe.md").display(),
            dir.path().join("out").display()
        ),
    );
    // The slow model streams for about two seconds while the fixer waits for the one place.
    let screen = tmux.wait_for(&["fix-add  demo/slow.jsonl", "running"]);
    let row = |model: &str| {
        screen
            .lines()
            .find(|l| l.starts_with("fix-add") && l.contains(model))
            .unwrap_or_else(|| panic!("no row of {model}:\n{screen}"))
            .to_string()
    };
    assert!(row("demo/slow.jsonl").contains("running"), "{screen}");
    let fixer = row("demo/fixer.jsonl");
    assert!(
        fixer.contains("waiting") && !fixer.contains("preparing"),
        "the fixer only waits for its place: {screen}"
    );
    tmux.wait_for_joined(&["\nEXIT="]);
}

/// Only a key set (on the child), no `-m`, no `models` in the config: the key's documented
/// default model is the session's model and the banner says why; no demo mode.
#[test]
fn the_interface_starts_the_default_model_of_the_only_key_set() {
    if !tmux_available() {
        eprintln!("skipped: tmux is not installed (apt-get install tmux; .ci/run does it)");
        return;
    }
    let tmp = util::Dir::new();
    let proj = tmp.path().join("project");
    project(&proj);
    let config = tmp.write("empty.toml", "");
    let tmux = Tmux::start("key-defaults", 200, 40);
    let key = "sk-e2e-defaults-SECRET-77";
    tmux.type_text(&format!(
        "unset ANTHROPIC_API_KEY GEMINI_API_KEY GOOGLE_API_KEY OPENROUTER_API_KEY; \
         OPENAI_API_KEY={key} OPENAI_BASE_URL=http://127.0.0.1:9/v1 "
    ));
    launch(&tmux, &proj, &config, "");
    let screen = tmux.wait_for(&["turn 0", "openai/gpt-5.4 (OPENAI_API_KEY)"]);
    assert!(
        screen.contains("no model named: using the default model of each key set"),
        "{screen}"
    );
    assert!(!screen.contains("Demo mode"), "{screen}");
    assert!(!screen.contains(key), "{screen}");
}

/// A Python MCP server on the official SDK (`mcp` 2.x `MCPServer`, or 1.x `FastMCP`) with one
/// tool, `lines`, answering `count` numbered lines as text.
const MCP_LINES_SERVER: &str = r#"
try:
    from mcp.server.mcpserver import MCPServer as Server
except ImportError:
    from mcp.server.fastmcp import FastMCP as Server

server = Server("py")


@server.tool()
def lines(count: int):
    """Answers `count` numbered lines."""
    return "\n".join("MCP-LINE-%d" % i for i in range(1, count + 1))


server.run()
"#;

/// Issue 24: a model calls an MCP server's tool (`py__lines`, a Python server from the user's
/// config) in the interface: the panel shows the call by its `server__tool` name with its
/// outcome mark and the tail of its result, and Ctrl+T shows the whole result.
#[test]
fn an_mcp_tool_call_shows_in_the_panel_with_its_result_and_whole_in_ctrl_t() {
    if !tmux_available() {
        eprintln!("skipped: tmux is not installed (apt-get install tmux; .ci/run does it)");
        return;
    }
    let sdk = Command::new("python3")
        .args(["-c", "import mcp.server"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !sdk {
        eprintln!("SKIPPED: the Python MCP SDK is not installed; .ci/run runs `pip install mcp`");
        return;
    }
    let tmp = util::Dir::new();
    let proj = tmp.path().join("project");
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::write(proj.join("main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(proj.join("mcp_lines.py"), MCP_LINES_SERVER).unwrap();
    std::fs::write(
        proj.join("mcp.jsonl"),
        "{\"say\": \"Asking the server.\", \"tools\": [{\"name\": \"py__lines\", \"args\": {\"count\": 6}}]}\n\
         {\"say\": \"MCP-DONE: six lines.\"}\n",
    )
    .unwrap();
    util::git(&proj, &["init", "-q"]);
    util::git(&proj, &["add", "."]);
    util::git(&proj, &["commit", "-qm", "init"]);
    let config = tmp.write(
        "config.toml",
        "[mcp_servers.py]\ncommand = \"python3\"\nargs = [\"mcp_lines.py\"]\n",
    );
    let tmux = Tmux::start("mcp-panel", 110, 30);
    launch(&tmux, &proj, &config, "-m demo/mcp.jsonl");
    tmux.wait_for(&["turn 0", "demo/mcp.jsonl"]);

    tmux.type_text("ask the server");
    tmux.press("Enter");
    // The panel: the call by its server__tool name, marked done, with its result's last lines.
    let screen = tmux.wait_for(&["MCP-DONE", "turn 1 finished"]);
    assert!(screen.contains("✓ py__lines"), "{screen}");
    assert!(
        screen.contains("    … +3 line(s) above (Ctrl+T: the whole result)"),
        "{screen}"
    );
    for line in ["    MCP-LINE-4", "    MCP-LINE-5", "    MCP-LINE-6"] {
        assert!(screen.contains(line), "{line}: {screen}");
    }
    assert!(!screen.contains("MCP-LINE-1"), "only the tail: {screen}");

    // Ctrl+T: the whole result in the overlay.
    tmux.press("C-t");
    let screen = tmux.wait_for(&["tool results", "turn 1 · ✓ py__lines"]);
    for line in ["  MCP-LINE-1", "  MCP-LINE-2", "  MCP-LINE-6"] {
        assert!(screen.contains(line), "{line}: {screen}");
    }
    tmux.press_and_see("Escape");
    tmux.type_text("/quit");
    tmux.press("Enter");
    tmux.wait_for(&["EXIT=0"]);
}

/// Issue 24: a model's coder sub-agent in the interface: its calls nested in the panel, and
/// Ctrl+T lists them after the `spawn_agent` call that started it, named `coder #1`, with
/// their whole results.
#[test]
fn a_sub_agents_calls_are_listed_under_its_spawn_call_in_ctrl_t() {
    if !tmux_available() {
        eprintln!("skipped: tmux is not installed (apt-get install tmux; .ci/run does it)");
        return;
    }
    let tmp = util::Dir::new();
    let proj = tmp.path().join("project");
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::write(proj.join("greeting.txt"), "hello\n").unwrap();
    let steps = [
        serde_json::json!({"say": "Delegating.", "tools": [{"name": "spawn_agent", "args": {
            "task": "polish: make the greeting polite", "role": "coder"}}]}),
        serde_json::json!({"agent": "polish", "tools": [{"name": "edit_file", "args": {
            "path": "greeting.txt", "old_string": "hello", "new_string": "good morning"}}]}),
        serde_json::json!({"agent": "polish", "say": "SUB-ANSWER: polite now."}),
        serde_json::json!({"say": "SPAWN-DONE: delegated."}),
    ];
    let script: String = steps.iter().map(|s| format!("{s}\n")).collect();
    std::fs::write(proj.join("spawn.jsonl"), script).unwrap();
    util::git(&proj, &["init", "-q"]);
    util::git(&proj, &["add", "."]);
    util::git(&proj, &["commit", "-qm", "init"]);
    let config = tmp.write("config.toml", "[sub_agents]\n");
    let tmux = Tmux::start("sub-agent-overlay", 110, 30);
    launch(&tmux, &proj, &config, "-m demo/spawn.jsonl");
    tmux.wait_for(&["turn 0", "demo/spawn.jsonl"]);
    tmux.type_text("delegate it");
    tmux.press("Enter");
    // The coder's edit opens the review; Esc goes back to the panels.
    tmux.wait_for(&[
        "turn 1 finished",
        "reviewing: Esc or q goes back to the prompt",
    ]);
    tmux.press_and_see("Escape");
    let screen = tmux.wait_for(&["SPAWN-DONE"]);
    assert!(
        screen.contains("↳ coder #1: ✓ edit_file greeting.txt"),
        "{screen}"
    );
    tmux.press("C-t");
    let screen = tmux.wait_for(&[
        "tool results",
        "turn 1 · ↳ coder #1: ✓ edit_file greeting.txt",
    ]);
    // Headings (`turn 1 · ...`) are the overlay's own; the panel behind it has the same calls.
    let spawn = screen
        .find("turn 1 · ✓ spawn_agent polish")
        .unwrap_or_else(|| panic!("{screen}"));
    let edit = screen
        .find("turn 1 · ↳ coder #1: ✓ edit_file")
        .unwrap_or_else(|| panic!("{screen}"));
    assert!(
        spawn < edit,
        "the sub-agent's call after its spawn call: {screen}"
    );
    assert!(screen.contains("SUB-ANSWER: polite now."), "{screen}");
    // Dropping the tmux server ends versus (SIGHUP) before the folders go.
    drop(tmux);
}

/// A Chat Completions server (`[providers.mock]` in the config given) whose answers carry no
/// usage chunk, as some proxies send: each reply streams `text`, stops, and says nothing of
/// tokens. The key is `MOCK_CHAT_KEY`'s value; the server refuses any other.
fn unreported_usage_server(text: &str, key: &'static str) -> util::mock_server::MockServer {
    use util::mock_server::{MockServer, Reply};
    let chunk = |delta: serde_json::Value, finish: serde_json::Value| {
        serde_json::json!({"id": "chatcmpl-1", "object": "chat.completion.chunk",
                           "created": 1_760_000_000, "model": "tiny-model",
                           "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let (head, tail) = text.split_at(text.len() / 2);
    let mut body = String::new();
    for event in [
        chunk(
            serde_json::json!({"role": "assistant", "content": head}),
            serde_json::Value::Null,
        ),
        chunk(
            serde_json::json!({"content": tail}),
            serde_json::Value::Null,
        ),
        chunk(serde_json::json!({}), serde_json::json!("stop")),
    ] {
        body.push_str(&format!("data: {event}\n\n"));
    }
    body.push_str("data: [DONE]\n\n");
    MockServer::start_checked(vec![Reply::sse(body)], move |request| {
        match request.header("authorization") {
            Some(value) if value == format!("Bearer {key}") => Ok(()),
            _ => Err("Incorrect API key provided".to_string()),
        }
    })
}

/// Starts versus in the pane on `mock/tiny-model` (the config names the mock server) with
/// `MOCK_CHAT_KEY` set for it only, and `extra` flags; `; echo EXIT=$?` follows.
fn launch_with_key(tmux: &Tmux, proj: &Path, config: &Path, key: &str, extra: &str) {
    tmux.type_text(&format!(
        "MOCK_CHAT_KEY={key} NO_COLOR=1 VERSUS_NO_KEYBOARD_ENHANCEMENT=1 XDG_STATE_HOME={} TMPDIR={} {} -C {} --config {} -m mock/tiny-model {extra}; echo EXIT=$?",
        util::state_home().display(),
        util::temp_home().display(),
        env!("CARGO_BIN_EXE_versus"),
        proj.display(),
        config.display()
    ));
    tmux.press("Enter");
}

fn mock_provider_config(
    tmp: &util::Dir,
    server: &util::mock_server::MockServer,
) -> std::path::PathBuf {
    tmp.write(
        "mock.toml",
        format!(
            "[providers.mock]\nkind = \"openai-chat\"\nbase_url = \"{}/v1\"\napi_key_env = \"MOCK_CHAT_KEY\"\n",
            server.url()
        ),
    )
}

/// A model whose server reports no usage shows `?` tokens and `$?` in its panel, never a
/// misleading `0`, as `versus ask` does.
#[test]
fn a_model_whose_usage_was_not_reported_shows_question_marks_in_a_real_terminal() {
    if !tmux_available() {
        eprintln!("skipped: tmux is not installed (apt-get install tmux; .ci/run does it)");
        return;
    }
    let tmp = util::Dir::new();
    let proj = tmp.path().join("project");
    project(&proj);
    let key = "sk-mock-unreported-SECRET-1";
    let server = unreported_usage_server("NO-USAGE-ANSWER", key);
    let config = mock_provider_config(&tmp, &server);
    let tmux = Tmux::start("unreported-usage", 140, 40);
    launch_with_key(&tmux, &proj, &config, key, "");
    tmux.wait_for(&["turn 0", "mock/tiny-model"]);
    tmux.type_text("say something");
    tmux.press("Enter");
    let screen = tmux.wait_for(&["NO-USAGE-ANSWER", "turn 1 finished"]);
    assert_eq!(server.refused(), Vec::<String>::new());
    assert!(screen.contains("· ? tokens ·"), "{screen}");
    assert!(screen.contains("· ? tok · $? ·"), "{screen}");
    assert!(!screen.contains(" 0 tok"), "{screen}");
    tmux.type_text("/quit");
    tmux.press("Enter");
    tmux.wait_for(&["EXIT=0"]);
}

/// Bare `versus --debug-log FILE` (the interface) writes the turn's request and the answer's
/// events, the key redacted, to a file only the user can read.
#[test]
fn the_interface_writes_the_debug_log_of_a_turn_without_the_key() {
    use std::os::unix::fs::PermissionsExt;
    if !tmux_available() {
        eprintln!("skipped: tmux is not installed (apt-get install tmux; .ci/run does it)");
        return;
    }
    let tmp = util::Dir::new();
    let proj = tmp.path().join("project");
    project(&proj);
    let key = "sk-mock-debuglog-SECRET-2";
    let server = unreported_usage_server("LOGGED-ANSWER", key);
    let config = mock_provider_config(&tmp, &server);
    let log = tmp.path().join("debug.jsonl");
    let tmux = Tmux::start("tui-debug-log", 140, 40);
    launch_with_key(
        &tmux,
        &proj,
        &config,
        key,
        &format!("--debug-log {}", log.display()),
    );
    tmux.wait_for(&["turn 0", "mock/tiny-model"]);
    tmux.type_text("say something");
    tmux.press("Enter");
    let screen = tmux.wait_for(&["LOGGED-ANSWER", "turn 1 finished"]);
    assert!(!screen.contains(key), "{screen}");
    tmux.type_text("/quit");
    tmux.press("Enter");
    tmux.wait_for(&["EXIT=0"]);
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        std::fs::metadata(&log).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert!(
        !text.contains(key) && !text.contains("debuglog-SECRET"),
        "{text}"
    );
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let requests: Vec<&serde_json::Value> =
        lines.iter().filter(|l| l["kind"] == "request").collect();
    assert_eq!(requests.len(), 1, "{text}");
    let sent = server.requests();
    assert_eq!(requests[0]["body"], sent[0].json(), "the body as sent");
    assert_eq!(requests[0]["provider"], "mock");
    assert_eq!(requests[0]["headers"]["authorization"], "[redacted]");
    assert!(
        lines
            .iter()
            .any(|l| l["kind"] == "event" && l["data"].to_string().contains("LOGGED")),
        "{text}"
    );
}

/// The turn after a pick starts from the session's record of what the pick applied: the
/// layer of the uncommitted state every model of the next turn reads links the recorded
/// bytes instead of copying the project's files (`cow::layer`, the speed of issue 22). Run
/// through the interface as a user runs it, read back from its `--log`.
#[test]
fn the_turn_after_a_pick_links_the_applied_files_from_the_session() {
    if !tmux_available() {
        eprintln!("skipped: tmux is not installed (apt-get install tmux; .ci/run does it)");
        return;
    }
    let tmp = util::Dir::new();
    let proj = tmp.path().join("project");
    std::fs::create_dir_all(&proj).unwrap();
    let old: String = (1..=200).map(|i| format!("old line {i}\n")).collect();
    std::fs::write(proj.join("big.txt"), old).unwrap();
    std::fs::write(proj.join(".gitignore"), "grow.jsonl\n").unwrap();
    let new: String = (1..=200).map(|i| format!("new line {i}\n")).collect();
    let step = serde_json::json!({"say": "growing",
        "tools": [{"name": "write_file", "args": {"path": "big.txt", "content": new}}]});
    std::fs::write(
        proj.join("grow.jsonl"),
        format!("{step}\n{{\"say\": \"done\"}}\n{{\"say\": \"SECOND-TURN\"}}\n"),
    )
    .unwrap();
    util::git(&proj, &["init", "-q"]);
    util::git(&proj, &["add", "-A"]);
    util::git(&proj, &["commit", "-qm", "start"]);
    let config = tmp.write("empty.toml", "");
    let log = tmp.path().join("versus.log");
    // Workspaces beside the project: the link needs one filesystem.
    let workspaces = tmp.path().join("workspaces");
    std::fs::create_dir_all(&workspaces).unwrap();
    let tmux = Tmux::start("pick-then-turn", 120, 36);
    tmux.type_text(&format!(
        "NO_COLOR=1 VERSUS_NO_KEYBOARD_ENHANCEMENT=1 XDG_STATE_HOME={} TMPDIR={} {} -C {} \
         --config {} --log {} -m demo/grow.jsonl; echo EXIT=$?",
        util::state_home().display(),
        workspaces.display(),
        env!("CARGO_BIN_EXE_versus"),
        proj.display(),
        config.display(),
        log.display()
    ));
    tmux.press("Enter");
    tmux.wait_for(&["turn 0"]);
    tmux.type_text("grow it");
    tmux.press("Enter");
    tmux.wait_for(&["turn 1 finished", "big.txt"]);
    tmux.press("c");
    tmux.press("a");
    tmux.wait_for(&["applied demo/grow.jsonl"]);
    assert_eq!(
        std::fs::read_to_string(proj.join("big.txt")).unwrap(),
        new,
        "the pick applied"
    );
    tmux.press_and_see("Escape");
    tmux.type_text("and then?");
    tmux.press("Enter");
    tmux.wait_for(&["SECOND-TURN", "turn 2 finished"]);
    tmux.type_text("/quit");
    tmux.press("Enter");
    tmux.wait_for(&["EXIT=0"]);
    let text = std::fs::read_to_string(&log).unwrap();
    if !text.contains("copy-on-write workspaces") {
        eprintln!("skipped: copy-on-write workspaces are not available here (no layer)");
        return;
    }
    let laid: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("uncommitted state laid over the kept checkout"))
        .collect();
    assert_eq!(laid.len(), 1, "only the second turn has a layer: {text}");
    assert!(
        laid[0].contains("copied=0") && laid[0].contains("linked=1"),
        "{}",
        laid[0]
    );
    // The project is exactly the pick, and the session's record is intact.
    assert_eq!(std::fs::read_to_string(proj.join("big.txt")).unwrap(), new);
}
