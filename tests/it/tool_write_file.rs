//! write_file and the `versus tool` command line through the real binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util;

use std::os::unix::fs::PermissionsExt;

use serde_json::json;
use util::{Dir, versus};

#[test]
fn creates_a_new_file_with_parents() {
    let d = Dir::new();
    let out = d.tool(
        "write_file",
        &json!({"path": "a/b/new.rs", "content": "x\ny\n"}),
    );
    assert_eq!(out.ok(), "wrote a/b/new.rs (2 lines, new file)\n");
    assert_eq!(d.read("a/b/new.rs"), b"x\ny\n");
}

#[test]
fn replaces_and_reports_previous_size() {
    let d = Dir::new();
    d.write("f.txt", "1\n2\n3\n");
    let out = d.tool("write_file", &json!({"path": "f.txt", "content": "only\n"}));
    assert_eq!(out.ok(), "wrote f.txt (1 lines, was 3 lines)\n");
    assert_eq!(d.read("f.txt"), b"only\n");
}

#[test]
fn keeps_crlf_and_bom_of_the_file_it_replaces() {
    let d = Dir::new();
    d.write("win.txt", b"\xEF\xBB\xBFold\r\nlines\r\n");
    d.tool(
        "write_file",
        &json!({"path": "win.txt", "content": "new\ntext\n"}),
    )
    .ok();
    assert_eq!(d.read("win.txt"), b"\xEF\xBB\xBFnew\r\ntext\r\n");
}

#[test]
fn keeps_the_executable_bit() {
    let d = Dir::new();
    let p = d.write("run.sh", "#!/bin/sh\necho old\n");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    d.tool(
        "write_file",
        &json!({"path": "run.sh", "content": "#!/bin/sh\necho new\n"}),
    )
    .ok();
    let mode = std::fs::metadata(&p).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o755);
}

#[test]
fn refuses_directories_and_the_root() {
    let d = Dir::new();
    std::fs::create_dir(d.path().join("src")).unwrap();
    assert!(
        d.tool("write_file", &json!({"path": "src", "content": ""}))
            .err()
            .contains("is a directory")
    );
    assert!(
        d.tool("write_file", &json!({"path": ".", "content": ""}))
            .err()
            .contains("not the project root")
    );
}

#[test]
fn path_escapes_are_refused_and_nothing_is_written() {
    let d = Dir::new();
    let outside = Dir::new();
    std::os::unix::fs::symlink(outside.path(), d.path().join("link")).unwrap();
    let abs = outside.path().join("abs.txt");
    for p in [
        "../escape.txt",
        abs.to_str().unwrap(),
        "link/via-link.txt",
        ".git/hooks/pre-commit",
    ] {
        let e = d.tool("write_file", &json!({"path": p, "content": "pwned"}));
        assert!(
            e.err().starts_with("path escapes the project"),
            "{p}: {}",
            e.stdout
        );
    }
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    assert!(!d.exists(".git"));
    assert!(!d.path().parent().unwrap().join("escape.txt").exists());
}

#[test]
fn missing_field_is_named() {
    let d = Dir::new();
    let e = d.tool("write_file", &json!({"path": "x"}));
    assert_eq!(
        e.err(),
        "invalid arguments for write_file: missing required field `content`\n"
    );
}

#[test]
fn invalid_json_is_an_error_result() {
    let d = Dir::new();
    let out = versus()
        .args(["tool", "write_file", "--args", "{not json", "--dir"])
        .arg(d.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("invalid arguments for write_file: not valid JSON"),
        "{text}"
    );
}

#[test]
fn unknown_tool_is_bad_usage() {
    let out = versus()
        .args(["tool", "delete_everything"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown tool `delete_everything`"), "{err}");
    assert!(err.contains("read_file"), "{err}");
}

#[test]
fn bad_flags_are_bad_usage() {
    let out = versus()
        .args(["tool", "read_file", "--bogus"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn without_a_name_lists_every_tool() {
    let out = versus().arg("tool").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    for name in [
        "read_file",
        "write_file",
        "edit_file",
        "apply_patch",
        "list_directory",
        "search_files",
        "search_code",
        "bash",
        "web_fetch",
    ] {
        assert!(text.contains(name), "{name} missing from {text}");
    }
}

#[test]
fn a_folder_swapped_for_a_symlink_mid_write_never_sends_bytes_outside() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let d = Dir::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(d.path().join("racedir")).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let stop = Arc::clone(&stop);
        let root = d.path().to_path_buf();
        let target = outside.path().to_path_buf();
        std::thread::spawn(move || {
            let (dir, parked) = (root.join("racedir"), root.join("parked"));
            while !stop.load(Ordering::Relaxed) {
                if std::fs::rename(&dir, &parked).is_ok() {
                    let _ = std::os::unix::fs::symlink(&target, &dir);
                    std::thread::yield_now();
                    let _ = std::fs::remove_file(&dir);
                    let _ = std::fs::rename(&parked, &dir);
                }
            }
        })
    };
    let mut written = 0;
    for i in 0..300 {
        let out = d.tool(
            "write_file",
            &json!({"path": format!("racedir/f{i}.txt"), "content": "x\n"}),
        );
        if out.code == 0 {
            written += 1;
        }
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    let escaped: Vec<_> = std::fs::read_dir(outside.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(
        escaped.is_empty(),
        "{} writes landed outside: {escaped:?}",
        escaped.len()
    );
    // Every write reported as done is in the workspace.
    let inside = std::fs::read_dir(d.path().join("racedir"))
        .map(|rd| rd.flatten().count())
        .unwrap_or(0)
        + std::fs::read_dir(d.path().join("parked"))
            .map(|rd| rd.flatten().count())
            .unwrap_or(0);
    assert_eq!(inside, written, "writes reported done vs files inside");
}
