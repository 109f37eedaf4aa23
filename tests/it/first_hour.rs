//! What a new user meets in the first hour, through the binary (issue 22): warnings for
//! skipped models from `versus run` as from `versus ask`, nothing created by an `ask` that
//! cannot start, exit codes, and the hints `ask` gives.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::util::{git, versus_without_keys};

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// An empty git repository with one commit, and a home with no config in it.
fn repository() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let root = base.join("project");
    let home = base.join("home");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(root.join("README.md"), "hello\n").unwrap();
    git(&root, &["init", "-q"]);
    git(&root, &["add", "."]);
    git(&root, &["commit", "-qm", "init"]);
    (tmp, root, home)
}

/// The line of `stderr` that starts with `start`.
fn line_starting<'a>(stderr: &'a str, start: &str) -> Option<(usize, &'a str)> {
    stderr
        .lines()
        .enumerate()
        .find(|(_, l)| l.starts_with(start))
}

#[test]
fn run_on_a_shipped_recipe_without_keys_says_which_key_each_model_needs_as_ask_does() {
    let (_tmp, root, home) = repository();
    let recipe = Path::new(env!("CARGO_MANIFEST_DIR")).join("recipes/fix-failing-tests.recipe.md");
    let run = versus_without_keys(&home)
        .current_dir(&root)
        .arg("run")
        .arg(&recipe)
        .output()
        .unwrap();
    let (_, stderr) = text(&run);
    assert_eq!(run.status.code(), Some(2), "{stderr}");
    let (error_at, _) = line_starting(&stderr, "versus: no model can run").expect(&stderr);
    for (model, var) in [
        ("openai/gpt-5", "OPENAI_API_KEY"),
        ("anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
        ("gemini/gemini-2.5-pro", "GEMINI_API_KEY or GOOGLE_API_KEY"),
    ] {
        let (at, warning) = line_starting(&stderr, &format!("versus: skipping {model}: "))
            .unwrap_or_else(|| panic!("no warning for {model}:\n{stderr}"));
        assert!(
            at < error_at,
            "the warning comes before the error:\n{stderr}"
        );
        assert!(
            warning.contains(&format!(
                "set {var} (in the environment or the project's .env)"
            )),
            "{warning}"
        );
    }

    // `versus ask` says it in the very same words.
    let ask = versus_without_keys(&home)
        .arg("-C")
        .arg(&root)
        .args(["ask", "x", "-m", "openai/gpt-5"])
        .output()
        .unwrap();
    let (_, ask_stderr) = text(&ask);
    assert_eq!(ask.status.code(), Some(2), "{ask_stderr}");
    let start = "versus: skipping openai/gpt-5: ";
    assert_eq!(
        line_starting(&ask_stderr, start).map(|(_, l)| l),
        line_starting(&stderr, start).map(|(_, l)| l),
        "ask:\n{ask_stderr}\nrun:\n{stderr}"
    );
}

#[test]
fn an_ask_that_cannot_start_creates_nothing_in_the_project() {
    let (_tmp, root, home) = repository();
    std::fs::write(root.join(".gitignore"), "scripts/\n").unwrap();
    std::fs::create_dir_all(root.join("scripts")).unwrap();
    std::fs::write(
        root.join("scripts/a.jsonl"),
        "{\"say\": \"Nothing to do.\"}\n",
    )
    .unwrap();
    let exclude = || std::fs::read(root.join(".git/info/exclude")).unwrap_or_default();
    let before = exclude();
    let cases: [&[&str]; 4] = [
        &["-m", "openai/gpt-5"],
        &["-m", "nosuch/model"],
        &["-m", "demo/scripts/missing.jsonl"],
        &["-m", "demo/scripts/a.jsonl", "--pick", "openai/gpt-5"],
    ];
    for case in cases {
        let out = versus_without_keys(&home)
            .arg("-C")
            .arg(&root)
            .args(["ask", "x"])
            .args(case)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{case:?}: {:?}", text(&out));
        assert!(
            !root.join(".versus").exists(),
            "{case:?} created .versus: {:?}",
            text(&out)
        );
        assert_eq!(exclude(), before, "{case:?} edited .git/info/exclude");
    }
    let continued = versus_without_keys(&home)
        .arg("-C")
        .arg(&root)
        .args(["ask", "x", "--continue", "-m", "demo/scripts/a.jsonl"])
        .output()
        .unwrap();
    assert_eq!(continued.status.code(), Some(2), "{:?}", text(&continued));
    assert!(text(&continued).1.contains("no versus session"));
    assert!(!root.join(".versus").exists(), "--continue created .versus");

    // The same ask that can start makes its store (and hides it from git) as before.
    let ok = versus_without_keys(&home)
        .arg("-C")
        .arg(&root)
        .args(["ask", "x", "-m", "demo/scripts/a.jsonl"])
        .output()
        .unwrap();
    assert_eq!(ok.status.code(), Some(0), "{:?}", text(&ok));
    assert!(root.join(".versus").is_dir());
    assert!(String::from_utf8_lossy(&exclude()).contains(".versus/"));
}
