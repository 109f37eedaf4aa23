//! Shared helpers for integration tests: a temp project folder and a runner for the real binary.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A temporary project directory.
pub struct Dir {
    tmp: tempfile::TempDir,
    root: PathBuf,
}

impl Dir {
    pub fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
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

/// The binary under test.
pub fn versus() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_versus"));
    c.env("NO_COLOR", "1");
    c
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
