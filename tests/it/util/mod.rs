//! Shared helpers for integration tests: a temp project folder and a runner for the real binary.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

pub mod aws;
pub mod mock_server;
pub mod users;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use tokio_util::sync::CancellationToken;
use versus::model::Message;
use versus::runner::{EntryRun, ModelEntry, RunEvent, RunOptions, fan_out_each};
use versus::workspace::Base;

/// Every entry on the same prompt through the runner (`fan_out_each`, as an engine turn
/// starts them), each in a new workspace; the token cancels them all. For tests of the agent
/// loop and the adapters below the engine.
pub fn fan_out(
    base: Arc<Base>,
    entries: Vec<ModelEntry>,
    prompt: Message,
    options: RunOptions,
) -> (
    tokio::sync::mpsc::UnboundedReceiver<RunEvent>,
    CancellationToken,
) {
    let all = CancellationToken::new();
    let runs = entries
        .into_iter()
        .map(|entry| EntryRun {
            entry,
            prompt: prompt.clone(),
            cancel: all.child_token(),
            workspace: None,
        })
        .collect();
    (fan_out_each(base, runs, options), all)
}

/// A temporary project directory.
pub struct Dir {
    tmp: tempfile::TempDir,
    root: PathBuf,
}

impl Dir {
    pub fn new() -> Self {
        let tmp = tempdir();
        let root = tmp.path().canonicalize().unwrap();
        Self { tmp, root }
    }

    pub fn path(&self) -> &Path {
        &self.root
    }

    pub fn write(&self, rel: &str, content: impl AsRef<[u8]>) -> PathBuf {
        let p = self.root.join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(&p, content).unwrap();
        p
    }

    pub fn read(&self, rel: &str) -> Vec<u8> {
        std::fs::read(self.root.join(rel)).unwrap()
    }

    pub fn exists(&self, rel: &str) -> bool {
        self.root.join(rel).exists()
    }

    /// Runs `versus tool NAME --args ARGS --dir ROOT`.
    pub fn tool(&self, name: &str, args: &serde_json::Value) -> ToolRun {
        self.tool_with(name, args, &[])
    }

    pub fn tool_with(&self, name: &str, args: &serde_json::Value, extra: &[&str]) -> ToolRun {
        let out = versus()
            .arg("tool")
            .arg(name)
            .arg("--args")
            .arg(args.to_string())
            .arg("--dir")
            .arg(&self.root)
            .args(extra)
            .output()
            .unwrap();
        ToolRun::from(out)
    }
}

/// The binary under test. Its per-user state (trust records, the key that stamps `.versus`)
/// goes to [`state_home`], never to the real home of whoever runs the tests; a test that needs
/// a state folder of its own sets `XDG_STATE_HOME` after this.
pub fn versus() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_versus"));
    c.env("NO_COLOR", "1")
        .env("XDG_STATE_HOME", state_home())
        .env("TMPDIR", temp_home());
    c
}

/// A committed repository at `base/project` (`src/main.rs`, an ignored `scripts/` folder for
/// demo scripts, and `files`) and a user config folder at `base/config` (with its `versus/`):
/// the world of the tests that drive `versus ask` with scripted demo models and a config of
/// their own. Returns `(project, config)`.
pub fn scripted_project(base: &Path, files: &[(&str, &str)]) -> (PathBuf, PathBuf) {
    let root = base.join("project");
    let config = base.join("config");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::create_dir_all(config.join("versus")).unwrap();
    std::fs::write(root.join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(root.join(".gitignore"), "scripts/\n").unwrap();
    for (name, text) in files {
        std::fs::write(root.join(name), text).unwrap();
    }
    git(&root, &["init", "-q"]);
    git(&root, &["add", "."]);
    git(&root, &["commit", "-qm", "init"]);
    (root, config)
}

/// Writes `root/scripts/NAME`, a demo script of one step per list of tool calls and then
/// "done", and returns its model spec.
pub fn tool_steps_script(root: &Path, name: &str, steps: &[serde_json::Value]) -> String {
    let mut text = String::new();
    for calls in steps {
        text.push_str(&serde_json::json!({ "tools": calls }).to_string());
        text.push('\n');
    }
    text.push_str("{\"say\": \"done\"}\n");
    let path = root.join("scripts").join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    format!("demo/scripts/{name}")
}

/// Every variable through which the developer's own providers would reach a test's versus:
/// keys, base URLs, cloud credentials, profiles and endpoints (and `LOCAL_KEY`, the custom
/// provider's key some tests set). One list, so a test that must see no provider cannot miss
/// one that another test already knew about.
pub const PROVIDER_ENV: &[&str] = &[
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "AWS_ACCESS_KEY_ID",
    "AWS_BEARER_TOKEN_BEDROCK",
    "AWS_CONFIG_FILE",
    "AWS_DEFAULT_REGION",
    "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT_URL_BEDROCK",
    "AWS_ENDPOINT_URL_BEDROCK_RUNTIME",
    "AWS_ENDPOINT_URL_SSO",
    "AWS_PROFILE",
    "AWS_REGION",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_SHARED_CREDENTIALS_FILE",
    "AZURE_OPENAI_API_KEY",
    "AZURE_OPENAI_ENDPOINT",
    "CLOUDSDK_CONFIG",
    "GEMINI_API_KEY",
    "GEMINI_BASE_URL",
    "GOOGLE_API_KEY",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "GOOGLE_CLOUD_LOCATION",
    "GOOGLE_CLOUD_PROJECT",
    "LITELLM_API_KEY",
    "LITELLM_BASE_URL",
    "LOCAL_KEY",
    "OLLAMA_BASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENROUTER_API_KEY",
    "OPENROUTER_BASE_URL",
    "VERTEX_BASE_URL",
];

/// [`versus`] with none of [`PROVIDER_ENV`] inherited: the test sets on the child only the
/// providers it means to give.
pub fn versus_without_providers() -> Command {
    let mut c = versus();
    for var in PROVIDER_ENV {
        c.env_remove(var);
    }
    c
}

/// The folder the tests make their temp folders in: `TMPDIR` when an unprivileged user can
/// pass through every folder down to it and write in it, else `/tmp`. Why: the tests that play
/// an attack as uid 65534 too hand it folders made here ([`users::give_away`]), and a private
/// `TMPDIR` (mode 0700, as `mktemp -d` makes it) would stop those runs at its door, while the
/// tests must pass whatever `TMPDIR` runs them.
pub fn temp_root() -> PathBuf {
    static ROOT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    ROOT.get_or_init(|| {
        let tmpdir = std::env::temp_dir();
        if !users::is_root() || open_to_others(&tmpdir) {
            return tmpdir;
        }
        let fallback = PathBuf::from("/tmp");
        assert!(
            open_to_others(&fallback),
            "neither TMPDIR ({}) nor /tmp lets an unprivileged user in: the tests that run as \
             uid 65534 need one of them open to others (mode 1777)",
            tmpdir.display()
        );
        fallback
    })
    .clone()
}

/// Whether others may pass through every folder down to `dir` and create files in it.
fn open_to_others(dir: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path| std::fs::metadata(p).map(|m| m.permissions().mode()).ok();
    mode(dir).is_some_and(|m| m & 0o003 == 0o003)
        && dir
            .ancestors()
            .skip(1)
            .all(|a| mode(a).is_some_and(|m| m & 0o001 != 0))
}

/// A temp folder in [`temp_root`], removed when dropped: where a test prepares what an
/// unprivileged run may be handed.
pub fn tempdir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(".tmp")
        .tempdir_in(temp_root())
        .unwrap()
}

/// The temp folder of the tests' versus runs (a test that sets its own `TMPDIR` later wins):
/// under cargo's temp folder, so what versus keeps there by design (the frozen checkouts it
/// reuses across runs, `cache-*`) stays with the build and not in the machine's `/tmp`.
pub fn temp_home() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("versus-tmp");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A private folder for one tmux server's socket (`tmux -S FOLDER/s`), removed with the
/// returned guard. Why: `tmux -L NAME` puts its socket in `$TMUX_TMPDIR/tmux-UID/` (`/tmp`
/// when unset, whatever `TMPDIR` says), and that folder stayed behind after every test run.
/// A socket's path may not exceed 107 bytes, so a long `TMPDIR` falls back to `/tmp`.
pub fn tmux_socket_dir() -> tempfile::TempDir {
    let in_tmpdir = tempfile::Builder::new()
        .prefix("vs-tmux")
        .tempdir()
        .unwrap();
    if in_tmpdir.path().join("s").as_os_str().len() <= 100 {
        return in_tmpdir;
    }
    tempfile::Builder::new()
        .prefix("vs-tmux")
        .tempdir_in("/tmp")
        .unwrap()
}

/// The state folder of the tests' versus runs: under cargo's temp folder for integration
/// tests (`target/tmp`), so a test run leaves nothing in the user's home.
pub fn state_home() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("versus-state")
}

/// What one `versus tool` run printed and returned.
#[derive(Debug)]
pub struct ToolRun {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl From<Output> for ToolRun {
    fn from(o: Output) -> Self {
        Self {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

impl ToolRun {
    /// Asserts a normal result and returns its text.
    pub fn ok(&self) -> &str {
        assert_eq!(self.code, 0, "expected success, got {self:#?}");
        &self.stdout
    }

    /// Asserts an error result and returns its text.
    pub fn err(&self) -> &str {
        assert_eq!(self.code, 1, "expected an error result, got {self:#?}");
        &self.stdout
    }
}

/// Runs git in `dir` with a fixed identity and no signing, so tests do not depend on the
/// machine's git config; panics with git's output when it fails.
pub fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args([
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
            // The test's own git, on repositories a test may have given to another user.
            "-c",
            "safe.directory=*",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

/// Every file under `root` with its bytes and permission bits, plus every folder as `path/`
/// (empty content, mode 0) so removed or created folders show too. `.git` and `.versus` are
/// left out: they are git's and versus' own state, not the user's tree.
pub fn tree_state(root: &Path) -> std::collections::BTreeMap<String, (Vec<u8>, u32)> {
    use std::os::unix::fs::PermissionsExt;
    fn walk(root: &Path, dir: &Path, out: &mut std::collections::BTreeMap<String, (Vec<u8>, u32)>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if name == ".git" || name == ".versus" {
                continue;
            }
            let rel = path.strip_prefix(root).unwrap().display().to_string();
            if path.is_dir() {
                walk(root, &path, out);
                out.entry(format!("{rel}/")).or_insert((Vec::new(), 0));
            } else {
                let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777;
                out.insert(rel, (std::fs::read(&path).unwrap(), mode));
            }
        }
    }
    let mut out = std::collections::BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// Whether process `pid` is gone (or a zombie) within five seconds.
pub fn process_gone(pid: i32) -> bool {
    for _ in 0..100 {
        let alive = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| !s.contains(") Z"))
            .unwrap_or(false);
        if !alive {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    false
}

/// Whether a live (non-zombie) process has exactly this command line.
pub fn command_alive(argv: &[&str]) -> bool {
    let wanted: Vec<u8> = argv.iter().flat_map(|a| a.bytes().chain([0])).collect();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    entries.flatten().any(|e| {
        let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        cmd == wanted && !stat.contains(") Z ")
    })
}

/// Waits (up to 5 s) until no live process has this command line; false if one still does.
/// Processes inside a sandbox have other pids there, so tests find them by a unique command.
pub fn command_gone(argv: &[&str]) -> bool {
    for _ in 0..100 {
        if !command_alive(argv) {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    false
}

/// The rows of a rendered buffer as text, one string per row (wide characters' continuation
/// cells add nothing), for tests that look for words at a place on screen.
pub fn screen_rows(buffer: &ratatui::buffer::Buffer) -> Vec<String> {
    (0..buffer.area.height)
        .map(|y| {
            (0..buffer.area.width)
                .map(|x| buffer[(x, y)].symbol().to_string())
                .collect()
        })
        .collect()
}

/// The one report folder `versus run` wrote in `project` (`.versus/reports/<run>`).
pub fn only_report_dir(project: &Path) -> PathBuf {
    let mut runs: Vec<PathBuf> = std::fs::read_dir(project.join(".versus/reports"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(runs.len(), 1, "{runs:?}");
    runs.remove(0)
}

/// The binary under test with none of the environment of whoever runs the tests: no API key
/// a developer exported can reach it, so a test of "no key set" holds on every machine. Only
/// `PATH` (bwrap, git, cargo) is kept; the home and the user config are `home`, state goes to
/// [`state_home`] and temp files to [`temp_home`].
pub fn versus_without_keys(home: &Path) -> Command {
    versus_without_keys_as(users::Who::Me, home)
}

/// [`versus_without_keys`] run by `who`. The unprivileged user cannot write the shared state
/// and temp folders, so it gets its own under `home` (`.state`, `.tmp`, created here): the
/// test hands `home` to it with [`users::give_away`] before running the command.
pub fn versus_without_keys_as(who: users::Who, home: &Path) -> Command {
    let (state, temp) = if who.drops() {
        let (state, temp) = (home.join(".state"), home.join(".tmp"));
        std::fs::create_dir_all(&state).unwrap();
        std::fs::create_dir_all(&temp).unwrap();
        (state, temp)
    } else {
        (state_home(), temp_home())
    };
    let mut c = who.command(env!("CARGO_BIN_EXE_versus"));
    c.env_clear()
        .env("NO_COLOR", "1")
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_STATE_HOME", state)
        .env("TMPDIR", temp);
    if let Some(path) = std::env::var_os("PATH") {
        c.env("PATH", path);
    }
    c
}
