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

/// The table "Dependency direction, concretely" in docs/ARCHITECTURE.md, as (module, the
/// crate modules it may use).
fn documented_dependencies() -> Vec<(String, Vec<String>)> {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/ARCHITECTURE.md"))
            .unwrap();
    let table = doc
        .split("## Dependency direction, concretely")
        .nth(1)
        .expect("the dependency table in docs/ARCHITECTURE.md");
    let code = |cell: &str| -> Vec<String> {
        cell.split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect()
    };
    table
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .filter_map(|row| {
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            let module = code(cells.get(1)?).into_iter().next()?;
            let uses = code(cells.get(2)?);
            (module != "cli").then_some((module, uses))
        })
        .collect()
}

/// Every module with a row in the table uses only what its row names, and every top-level
/// module of the library has a row: the table cannot drift from the code.
#[test]
fn each_module_uses_only_what_the_architecture_table_says() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let table = documented_dependencies();
    let mut problems = Vec::new();
    for entry in std::fs::read_dir(&src).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().replace(".rs", "");
        if ["lib", "main", "cli"].contains(&name.as_str()) {
            continue;
        }
        if !table.iter().any(|(m, _)| *m == name) {
            problems.push(format!("src/{name} has no row in the dependency table"));
        }
    }
    for (module, allowed) in &table {
        let dir = src.join(module);
        let mut files = Vec::new();
        if dir.is_dir() {
            rust_files(&dir, &mut files);
        } else {
            files.push(src.join(format!("{module}.rs")));
        }
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            for (n, line) in text.lines().enumerate() {
                for used in line.split("crate::").skip(1) {
                    let used: String = used
                        .chars()
                        .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                        .collect();
                    if !used.is_empty() && used != *module && !allowed.contains(&used) {
                        problems.push(format!(
                            "{}:{}: {module} uses {used}, which its row does not name",
                            f.display(),
                            n + 1
                        ));
                    }
                }
            }
        }
    }
    assert!(
        problems.is_empty(),
        "docs/ARCHITECTURE.md and the code disagree:\n{}",
        problems.join("\n")
    );
}
