//! A hostile model and a hostile provider against what versus does on the host, outside the
//! command sandbox: the provider's HTTP stream and the file tools, which run in versus itself.
//! Each test plays the attacker through the real binary, as the test user and as uid 65534.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::Output;
use std::thread::JoinHandle;

use crate::util::git;
use crate::util::users::{Who, give_away};

const MIB: usize = 1024 * 1024;

struct World {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    base: PathBuf,
}

/// A committed project with an ignored `scripts/` folder, owned by `who`.
fn world(who: Who) -> World {
    let tmp = crate::util::tempdir();
    let base = tmp.path().canonicalize().unwrap();
    let root = base.join("project");
    for dir in ["project", "config", "state", "home", "tmp"] {
        std::fs::create_dir_all(base.join(dir)).unwrap();
    }
    std::fs::write(root.join("a.txt"), "hello\n").unwrap();
    std::fs::write(root.join(".gitignore"), "scripts/\n").unwrap();
    git(&root, &["init", "-q"]);
    git(&root, &["add", "."]);
    git(&root, &["commit", "-qm", "init"]);
    give_away(&base, who);
    World {
        _tmp: tmp,
        root,
        base,
    }
}

impl World {
    /// `versus ask` of `model` as `who` (under a watchdog: a hang is a failure, not a stuck
    /// test run), with `envs`.
    fn ask(&self, who: Who, model: &str, envs: &[(&str, String)]) -> Output {
        let mut command = who.command("timeout");
        command
            .args(["-s", "KILL", "600", env!("CARGO_BIN_EXE_versus")])
            .arg("-C")
            .arg(&self.root)
            .args(["ask", "do it", "-m", model])
            .env("NO_COLOR", "1")
            .env("XDG_CONFIG_HOME", self.base.join("config"))
            .env("XDG_STATE_HOME", self.base.join("state"))
            .env("HOME", self.base.join("home"))
            .env("TMPDIR", self.base.join("tmp"));
        for (name, value) in envs {
            command.env(name, value);
        }
        let out = command.output().unwrap();
        // Killed by the watchdog: `timeout` dies of the signal too (or exits 124 or 137).
        assert!(
            matches!(out.status.code(), Some(code) if code != 124 && code != 137),
            "{}: versus hung and was killed by the watchdog",
            who.name()
        );
        out
    }

    /// A demo model that plays `steps` (JSON Lines, one response each), then says done.
    fn script(&self, who: Who, name: &str, steps: &[serde_json::Value]) -> String {
        let mut text = String::new();
        for step in steps {
            text.push_str(&step.to_string());
            text.push('\n');
        }
        text.push_str("{\"say\": \"done\"}\n");
        let path = self.root.join("scripts").join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        give_away(&self.root.join("scripts"), who);
        format!("demo/scripts/{name}")
    }
}

fn all_output(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A hostile model server on 127.0.0.1: to every request it sends `head`, then `filler`
/// repeated until `cap` bytes of filler are sent or the client hangs up. Returns how much
/// filler went out, once [`Flood::finish`] stops it.
struct Flood {
    port: u16,
    thread: JoinHandle<usize>,
}

impl Flood {
    fn start(head: Vec<u8>, filler: u8, cap: usize) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let thread = std::thread::spawn(move || {
            let mut sent = 0;
            for stream in listener.incoming() {
                let mut stream = stream.unwrap();
                if !read_request(&stream) {
                    break; // the poke of `finish`
                }
                if stream.write_all(&head).is_err() {
                    continue;
                }
                let chunk = vec![filler; MIB];
                let mut this = 0;
                while this < cap {
                    let n = MIB.min(cap - this);
                    if stream.write_all(&chunk[..n]).is_err() {
                        break;
                    }
                    this += n;
                }
                sent = sent.max(this);
            }
            sent
        });
        Self { port, thread }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Stops the server; the most filler one response sent.
    fn finish(self) -> usize {
        drop(TcpStream::connect(("127.0.0.1", self.port)).unwrap());
        self.thread.join().unwrap()
    }
}

/// Reads one request's head and body; false when the peer sent nothing.
fn read_request(stream: &TcpStream) -> bool {
    let mut reader = BufReader::new(stream);
    let mut length = 0;
    let mut any = false;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return any;
        }
        any = true;
        if line == "\r\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).is_ok()
}

fn anthropic_env(flood: &Flood) -> Vec<(&'static str, String)> {
    vec![
        ("ANTHROPIC_API_KEY", "sk-ant-redteam".to_string()),
        ("ANTHROPIC_BASE_URL", flood.url()),
    ]
}

#[test]
fn an_endless_stream_line_is_cut_off_at_the_response_bound() {
    for who in Who::BOTH {
        let world = world(who);
        // One `data:` line that never ends: every byte would be kept waiting for its newline.
        let mut head =
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n"
                .to_vec();
        head.extend_from_slice(
            b"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\
              \"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n\
              event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\
              \"delta\":{\"type\":\"text_delta\",\"text\":\"",
        );
        let cap = 160 * MIB;
        let flood = Flood::start(head, b'A', cap);
        let out = world.ask(who, "anthropic/claude-sonnet-4-5", &anthropic_env(&flood));
        let sent = flood.finish();
        let text = all_output(&out);
        assert!(
            text.contains("the response passed 64 MiB"),
            "{}: no clear error for the endless line:\n{}",
            who.name(),
            &text[..text.len().min(4000)]
        );
        assert!(
            sent < cap,
            "{}: versus read all {sent} bytes instead of stopping",
            who.name()
        );
    }
}

#[test]
fn an_endless_error_body_is_read_only_as_far_as_an_error_message_needs() {
    for who in Who::BOTH {
        let world = world(who);
        // A 400 (not retried) whose JSON message never ends: read whole, it became the
        // error message versus prints.
        let mut head =
            b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n"
                .to_vec();
        head.extend_from_slice(b"{\"error\":{\"type\":\"invalid_request_error\",\"message\":\"");
        let cap = 32 * MIB;
        let flood = Flood::start(head, b'B', cap);
        let out = world.ask(who, "anthropic/claude-sonnet-4-5", &anthropic_env(&flood));
        let sent = flood.finish();
        let text = all_output(&out);
        assert!(
            text.contains("request rejected (400)"),
            "{}: {}",
            who.name(),
            &text[..text.len().min(4000)]
        );
        assert!(
            text.len() < MIB,
            "{}: {} bytes of output (the endless body was read and printed)",
            who.name(),
            text.len()
        );
        assert!(sent < cap, "{}: versus read all {sent} bytes", who.name());
    }
}

#[test]
fn file_tools_never_block_on_a_fifo_or_read_a_sparse_file_whole() {
    for who in Who::BOTH {
        let world = world(who);
        let bash = |command: &str| serde_json::json!({"tools": [{"name": "bash", "args": {"command": command}}]});
        let call = |name: &str, args: serde_json::Value| serde_json::json!({"tools": [{"name": name, "args": args}]});
        let patch = "*** Begin Patch\n*** Update File: big.txt\n@@\n-hi\n+ho\n*** End Patch\n";
        let model = world.script(
            who,
            "fifo.jsonl",
            &[
                // A fifo blocked versus's open forever (only SIGKILL ended it); a 3 GiB sparse
                // file cost the model no disk and versus 3 GiB of memory per read.
                bash("mkfifo pipe && truncate -s 3G big.txt && echo hi >> big.txt"),
                call("write_file", serde_json::json!({"path": "pipe", "content": "x"})),
                call(
                    "edit_file",
                    serde_json::json!({"path": "pipe", "old_string": "a", "new_string": "b"}),
                ),
                call(
                    "apply_patch",
                    serde_json::json!({"patch": "*** Begin Patch\n*** Update File: pipe\n@@\n-a\n+b\n*** End Patch\n"}),
                ),
                call(
                    "edit_file",
                    serde_json::json!({"path": "big.txt", "old_string": "hi", "new_string": "ho"}),
                ),
                call("write_file", serde_json::json!({"path": "big.txt", "content": "x"})),
                call("apply_patch", serde_json::json!({"patch": patch})),
                call(
                    "write_file",
                    serde_json::json!({"path": "a.txt", "content": "real edit\n"}),
                ),
            ],
        );
        let out = world.ask(who, &model, &[]);
        let text = all_output(&out);
        let log = session_log(&world);
        for tool in ["write_file", "edit_file", "apply_patch"] {
            assert!(
                log.contains(&format!("big.txt is too large for {tool}")),
                "{}: {tool} read the sparse file:\n{}",
                who.name(),
                &text[..text.len().min(4000)]
            );
        }
        assert!(
            log.matches("pipe is not a regular file").count() >= 3,
            "{}: {}",
            who.name(),
            &text[..text.len().min(4000)]
        );
        assert!(
            text.contains("real edit"),
            "{}: the model's real edit is missing:\n{text}",
            who.name()
        );
    }
}

/// Every session log of the project, concatenated.
fn session_log(world: &World) -> String {
    let mut all = String::new();
    let sessions = world.root.join(".versus/sessions");
    for entry in std::fs::read_dir(sessions).unwrap() {
        let path = entry.unwrap().path().join("events.jsonl");
        if let Ok(text) = std::fs::read_to_string(path) {
            all.push_str(&text);
        }
    }
    all
}

#[test]
fn an_edit_that_repeats_one_line_costs_linear_time_not_hours() {
    for who in Who::BOTH {
        let world = world(who);
        let repeated = |line: &str| {
            let mut old = format!("{line}\n").repeat(20_000);
            old.push_str("missing");
            old
        };
        let edit = |old: String| {
            serde_json::json!({"tools": [{"name": "edit_file",
                "args": {"path": "many.txt", "old_string": old, "new_string": "x"}}]})
        };
        let model = world.script(
            who,
            "repeat.jsonl",
            &[
                // 4 million equal lines, and an old_string of 20,000 of them that is not
                // there: finding the closest region cast 8e10 votes (hours of CPU, past the
                // run's timeout, on the host).
                serde_json::json!({"tools": [{"name": "bash",
                    "args": {"command": "yes a | head -n 4000000 > many.txt"}}]}),
                edit(repeated("a")),
                edit(repeated("    a")),
            ],
        );
        let out = world.ask(who, &model, &[]);
        let text = all_output(&out);
        let log = session_log(&world);
        assert_eq!(
            log.matches("\"summary\":\"old_string was not found in many.txt")
                .count(),
            2,
            "{}: {}",
            who.name(),
            &text[..text.len().min(4000)]
        );
    }
}

#[test]
fn saved_outputs_of_many_flooding_commands_stay_within_the_spill_budget() {
    for who in Who::BOTH {
        let world = world(who);
        // Each call's whole output is saved next to the project, outside the sandbox (64 MiB
        // at most per call); six calls of 95 MiB wrote 384 MiB, a thousand would write 64 GB.
        let flood = serde_json::json!({"tools": [{"name": "bash",
            "args": {"command": "head -c 100000000 /dev/zero | tr '\\0' a"}}]});
        let steps = vec![flood; 6];
        let model = world.script(who, "flood.jsonl", &steps);
        let out = world.ask(who, &model, &[]);
        let text = all_output(&out);
        let spilled = spill_bytes(&world.root.join(".versus"));
        assert!(
            spilled > 0 && spilled <= 256 * MIB as u64 + 64 * 1024,
            "{}: {spilled} bytes of saved output:\n{}",
            who.name(),
            &text[..text.len().min(4000)]
        );
    }
}

/// Bytes of every file in a `spill` folder under `dir`.
fn spill_bytes(dir: &std::path::Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let meta = entry.metadata().unwrap();
            if meta.is_dir() {
                stack.push(entry.path());
            } else if dir.file_name().is_some_and(|n| n == "spill") {
                total += meta.len();
            }
        }
    }
    total
}
