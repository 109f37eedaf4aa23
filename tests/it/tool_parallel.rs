//! Read-only calls of one step run at the same time, through `versus ask` with a scripted demo
//! model: four web_search calls reach a local search backend that answers none of them until
//! all four are in flight (a barrier: run one after the other they could never pass it, so the
//! test needs no timing), a read_file among them joins them, and the tool layer's start and
//! end timestamps in the session log overlap. A write after them is a barrier the other way:
//! it starts only once every read before it ended, the read after it sees its content, and
//! the results come back in call order.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use util::versus;

/// Requests the barrier waits for.
const WIDTH: usize = 4;

/// How long a request waits for the others before it is answered anyway (so a broken,
/// sequential loop fails the test instead of hanging it).
const GIVE_UP: Duration = Duration::from_secs(10);

#[derive(Default)]
struct Flight {
    arrived: usize,
    in_flight: usize,
    most: usize,
}

/// A SearXNG-speaking server that holds every request until [`WIDTH`] requests arrived (or
/// [`GIVE_UP`] passed), then answers each with one result naming its query. Returns its URL and
/// the most requests it had in flight at once.
fn barrier_backend() -> (String, Arc<(Mutex<Flight>, Condvar)>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    let state = Arc::new((Mutex::new(Flight::default()), Condvar::new()));
    let shared = Arc::clone(&state);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let shared = Arc::clone(&shared);
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut first = String::new();
                if reader.read_line(&mut first).unwrap_or(0) == 0 {
                    return;
                }
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
                        break;
                    }
                }
                let target = first
                    .split_whitespace()
                    .nth(1)
                    .unwrap_or_default()
                    .to_string();
                let query = target
                    .split_once("q=")
                    .map(|(_, rest)| rest.split('&').next().unwrap_or_default().to_string())
                    .unwrap_or_default();
                let (lock, cv) = &*shared;
                {
                    let mut f = lock.lock().unwrap();
                    f.arrived += 1;
                    f.in_flight += 1;
                    f.most = f.most.max(f.in_flight);
                    cv.notify_all();
                    let _ = cv
                        .wait_timeout_while(f, GIVE_UP, |f| f.arrived < WIDTH)
                        .unwrap();
                }
                let body = format!(
                    r#"{{"query":"{query}","results":[{{"url":"https://example.com/{query}","title":"about {query}","content":"found"}}]}}"#
                );
                let mut out = stream;
                let _ = write!(
                    out,
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
                     connection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = out.flush();
                lock.lock().unwrap().in_flight -= 1;
            });
        }
    });
    (url, state)
}

#[test]
fn read_only_calls_of_a_step_overlap_and_a_write_keeps_its_place() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let (root, config) = util::scripted_project(&base, &[]);
    let (url, flight) = barrier_backend();
    std::fs::write(
        config.join("versus/config.toml"),
        format!("[web_search]\nurl = \"{url}\"\n"),
    )
    .unwrap();
    let search = |q: &str| serde_json::json!({"name": "web_search", "args": {"query": q}});
    let step = serde_json::json!([
        search("q0"),
        search("q1"),
        {"name": "read_file", "args": {"path": "src/main.rs"}},
        search("q2"),
        search("q3"),
        {"name": "write_file", "args": {"path": "notes.txt", "content": "written first\n"}},
        {"name": "read_file", "args": {"path": "notes.txt"}},
    ]);
    let script = root.join("scripts/parallel");
    std::fs::create_dir_all(script.parent().unwrap()).unwrap();
    std::fs::write(
        &script,
        format!(
            "{}\n{{\"say\": \"done\"}}\n",
            serde_json::json!({ "tools": step })
        ),
    )
    .unwrap();
    let out = versus()
        .arg("-C")
        .arg(&root)
        .args(["ask", "look around", "-m", "demo/scripts/parallel"])
        .env("XDG_CONFIG_HOME", &config)
        .output()
        .unwrap();
    let said = format!(
        "status {:?}\n{}\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{said}");

    let sessions = root.join(".versus/sessions");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&sessions)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    dirs.sort();
    let log = std::fs::read_to_string(dirs.last().unwrap().join("events.jsonl")).unwrap();
    let results: Vec<serde_json::Value> = log
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["event"]["type"] == "tool_result")
        .map(|v| v["event"].clone())
        .collect();
    // Results in call order, each search with its own answer.
    let names: Vec<&str> = results
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "web_search",
            "web_search",
            "read_file",
            "web_search",
            "web_search",
            "write_file",
            "read_file"
        ],
        "{said}"
    );
    for (i, q) in [(0, "q0"), (1, "q1"), (3, "q2"), (4, "q3")] {
        let output = results[i]["output"].as_str().unwrap();
        assert!(
            output.contains(&format!("1. about {q}\n")),
            "call {i}: {output}"
        );
    }
    assert!(
        results[6]["output"]
            .as_str()
            .unwrap()
            .contains("written first"),
        "the read after the write sees it: {}",
        results[6]
    );
    // The backend had all four searches in flight at once.
    assert_eq!(flight.0.lock().unwrap().most, WIDTH, "{said}");
    // The tool layer's timestamps: the four searches overlap (each started before any
    // ended), and the read_file among them ran while they did; the write started after all
    // of them ended; the last read after the write ended.
    let span = |r: &serde_json::Value| {
        (
            r["timing"]["started_us"].as_u64().unwrap(),
            r["timing"]["ended_us"].as_u64().unwrap(),
        )
    };
    let reads: Vec<(u64, u64)> = results[..5].iter().map(span).collect();
    let searches: Vec<(u64, u64)> = [0, 1, 3, 4].iter().map(|&i| reads[i]).collect();
    let last_start = searches.iter().map(|s| s.0).max().unwrap();
    let first_end = searches.iter().map(|s| s.1).min().unwrap();
    assert!(
        last_start < first_end,
        "the searches did not overlap: {searches:?}"
    );
    let read = reads[2];
    assert!(
        read.0 < first_end && read.1 > searches[0].0,
        "the read_file did not run while the searches did: {read:?} {searches:?}"
    );
    let write = span(&results[5]);
    let last_end = reads.iter().map(|s| s.1).max().unwrap();
    assert!(
        write.0 >= last_end,
        "the write started before the reads ended: {write:?} {reads:?}"
    );
    let after = span(&results[6]);
    assert!(after.0 >= write.1, "the read after the write started early");
}
