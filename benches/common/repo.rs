//! The generated repository the workspace and turn benches measure on: the same files, the
//! same commit, so their numbers compare. Included by both with `#[path]` (not a bench of
//! its own).

use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// Runs git in `dir` with a fixed identity and no signing; panics when it fails.
pub fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args([
            "-c",
            "user.name=bench",
            "-c",
            "user.email=bench@example.com",
        ])
        .args([
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?} failed");
}

/// The path of generated file `i`: 100 folders of files.
pub fn rel(i: usize) -> String {
    format!("src/d{:03}/file{i:05}.txt", i % 100)
}

/// Writes `files` distinct text files of about `bytes_each` bytes, commits them.
pub fn generate(root: &Path, files: usize, bytes_each: usize) {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    for i in 0..files {
        let path = root.join(rel(i));
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        let mut f = std::io::BufWriter::new(fs::File::create(&path).unwrap());
        let mut written = 0;
        let mut line = 0;
        while written < bytes_each {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let text = format!("{i:05}:{line:05} let value = compute({state:016x});\n");
            f.write_all(text.as_bytes()).unwrap();
            written += text.len();
            line += 1;
        }
    }
    fs::write(root.join(".gitignore"), "target/\n").unwrap();
    git(root, &["init", "-q"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "generated"]);
}
