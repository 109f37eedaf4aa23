//! The sandbox must not get in the way of real development in the model's own workspace:
//! committing in its private repository, building and testing Rust, Python, JavaScript and C
//! projects, reading system headers and toolchains. One scripted model does all of it in a
//! normal `versus ask`; each step prints a marker only when it succeeded.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util;

use std::path::Path;
use std::process::Command;

use util::{git, versus};

fn have(program: &str, arg: &str) -> bool {
    Command::new(program)
        .arg(arg)
        .output()
        .is_ok_and(|o| o.status.success())
}

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn session_text(root: &Path) -> String {
    let mut text = String::new();
    let mut stack = vec![root.join(".versus")];
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

#[test]
fn a_model_commits_builds_and_tests_in_its_workspace() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let root = base.join("project");
    let home = base.join("home");
    std::fs::create_dir_all(&home).unwrap();
    write(
        &root,
        "rs/Cargo.toml",
        "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    write(
        &root,
        "rs/src/lib.rs",
        "pub fn add(a: i32, b: i32) -> i32 { a + b }\n#[test]\nfn adds() { assert_eq!(add(1, 2), 3); }\n",
    );
    write(&root, "py/calc.py", "def add(a, b):\n    return a + b\n");
    write(
        &root,
        "py/test_calc.py",
        "from calc import add\n\ndef test_add():\n    assert add(1, 2) == 3\n",
    );
    write(
        &root,
        "js/package.json",
        "{\"name\": \"t\", \"version\": \"1.0.0\", \"scripts\": {\"test\": \"node test.js\"}}\n",
    );
    write(
        &root,
        "js/test.js",
        "require('assert').strictEqual(1 + 1, 2); console.log('JS-' + 'OK');\n",
    );
    write(
        &root,
        "c/m.c",
        "#include <stdio.h>\nint main(void) { puts(\"C-\" \"OK\"); return 0; }\n",
    );
    write(&root, ".gitignore", "target/\nbuild/\n");
    git(&root, &["init", "-q"]);
    git(&root, &["add", "."]);
    git(&root, &["commit", "-qm", "init"]);
    let user_head = Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(&root)
        .output()
        .unwrap()
        .stdout;

    let mut steps = vec![
        // Its own commit, in its private repository.
        "echo mine > notes.txt && git add notes.txt && \
         git -c user.name=m -c user.email=m@x commit -qm mine && \
         test \"$(git log --oneline | wc -l)\" = 2 && echo GIT-''OK",
        // A Rust build writing target/ and its tests, offline.
        "cd rs && cargo test -q --offline 2>&1 | tail -3 && test -d target && echo CARGO-''OK",
        // System headers and the C toolchain, writing into the workspace.
        "mkdir -p build && cc c/m.c -o build/m && ./build/m",
    ];
    let mut expected = vec!["GIT-OK", "CARGO-OK", "C-OK"];
    if have("npm", "--version") {
        steps.push("cd js && npm test 2>&1 | tail -2");
        expected.push("JS-OK");
    } else {
        eprintln!("npm not installed: its step is skipped");
    }
    if have_pytest() {
        steps.push("cd py && python3 -m pytest -q 2>&1 | tail -1 | sed 's/passed/PY-PASSED/'");
        expected.push("1 PY-PASSED");
    } else {
        eprintln!("pytest not installed (.ci/run installs it): its step is skipped");
    }
    let mut script = String::new();
    for step in &steps {
        let line = serde_json::json!({"tools": [{"name": "bash", "args": {"command": step}}]});
        script.push_str(&format!("{line}\n"));
    }
    script.push_str("{\"say\": \"done\"}\n");
    write(&base, "dev.jsonl", &script);

    let out = versus()
        .arg("-C")
        .arg(&root)
        .args(["ask", "develop", "-m"])
        .arg(format!("demo/{}", base.join("dev.jsonl").display()))
        .env("HOME", &home)
        .env("TMPDIR", &home)
        .env_remove("XDG_CONFIG_HOME")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = session_text(&root);
    for marker in expected {
        assert!(
            text.contains(marker),
            "missing {marker} in the session:\n{text}"
        );
    }
    // None of it reached the user's repository.
    let head_now = Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(&root)
        .output()
        .unwrap()
        .stdout;
    assert_eq!(head_now, user_head);
    assert!(!root.join("rs/target").exists());
    assert!(!root.join("build").exists());
}

fn have_pytest() -> bool {
    Command::new("python3")
        .args(["-m", "pytest", "--version"])
        .output()
        .is_ok_and(|o| o.status.success())
}
