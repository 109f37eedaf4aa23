//! Keeps docs/ARCHITECTURE.md honest: lower layers must not import higher ones.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

/// (module folder or file stem, modules it must never import)
const FORBIDDEN: &[(&str, &[&str])] = &[
    (
        "fsutil",
        &[
            "workspace",
            "tools",
            "provider",
            "agent",
            "runner",
            "session",
            "apply",
            "recipe",
            "headless",
            "tui",
            "model",
        ],
    ),
    (
        "workspace",
        &[
            "tools", "provider", "agent", "runner", "session", "recipe", "headless", "tui",
        ],
    ),
    (
        "tools",
        &[
            "provider", "agent", "runner", "session", "apply", "recipe", "headless", "tui",
        ],
    ),
    (
        "model",
        &[
            "fsutil",
            "workspace",
            "tools",
            "provider",
            "agent",
            "runner",
            "session",
            "apply",
            "recipe",
            "headless",
            "tui",
        ],
    ),
    (
        "provider",
        &[
            "tools",
            "workspace",
            "agent",
            "runner",
            "session",
            "apply",
            "recipe",
            "headless",
            "tui",
        ],
    ),
    (
        "config",
        &[
            "tools",
            "workspace",
            "agent",
            "runner",
            "session",
            "apply",
            "recipe",
            "headless",
            "tui",
        ],
    ),
    ("agent", &["runner", "session", "recipe", "headless", "tui"]),
    ("runner", &["session", "recipe", "headless", "tui"]),
    ("recipe", &["runner", "session", "headless", "tui"]),
    (
        "stats",
        &["headless", "tui", "runner", "agent", "provider", "recipe"],
    ),
    (
        "review",
        &[
            "provider", "agent", "runner", "session", "recipe", "headless", "tui",
        ],
    ),
    (
        "session",
        &["runner", "agent", "provider", "recipe", "headless", "tui"],
    ),
    ("tui", &["headless"]),
    ("headless", &["tui"]),
    (
        "exec",
        &[
            "fsutil",
            "workspace",
            "tools",
            "provider",
            "agent",
            "runner",
            "session",
            "apply",
            "recipe",
            "headless",
            "tui",
            "model",
            "config",
        ],
    ),
];

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn layers_only_point_down() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut violations = Vec::new();
    for (module, banned) in FORBIDDEN {
        let mut files = Vec::new();
        let folder = src.join(module);
        if folder.is_dir() {
            rust_files(&folder, &mut files);
        }
        let file = src.join(format!("{module}.rs"));
        if file.is_file() {
            files.push(file);
        }
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            for (n, line) in text.lines().enumerate() {
                for b in *banned {
                    if line.contains(&format!("crate::{b}::"))
                        || line.contains(&format!("crate::{b};"))
                        || line.contains(&format!("crate::{b}}}"))
                        || line.contains(&format!("crate::{{{b}"))
                    {
                        violations.push(format!(
                            "{}:{}: {module} uses {b}: {}",
                            f.display(),
                            n + 1,
                            line.trim()
                        ));
                    }
                }
            }
        }
    }
    assert!(
        violations.is_empty(),
        "imports that point up:\n{}",
        violations.join("\n")
    );
}

#[test]
fn the_library_does_not_depend_on_the_binary_edge() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    for f in files {
        if f.starts_with(src.join("cli")) || f.ends_with("main.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        assert!(
            !text.contains("anyhow::"),
            "{}: anyhow belongs to the binary edge",
            f.display()
        );
        assert!(
            !text.contains("clap::"),
            "{}: clap belongs to the binary edge",
            f.display()
        );
    }
}
