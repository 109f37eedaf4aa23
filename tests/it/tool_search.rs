//! list_directory, search_files and search_code through the real binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util;

use std::os::unix::fs::symlink;

use serde_json::json;
use util::Dir;

/// A small project: sources, a hidden CI folder, ignored build output, a fake `.git`.
fn project() -> Dir {
    let d = Dir::new();
    d.write(".gitignore", "target/\n*.log\n");
    d.write(".ignore", "secret.txt\n");
    d.write(".github/workflows/ci.yml", "on: push\n");
    d.write("src/main.rs", "fn main() {\n    helper();\n}\n");
    d.write("src/lib.rs", "pub fn helper() {}\n");
    d.write("src/util/Strings.rs", "pub fn helper_two() {}\n");
    d.write("README.md", "# Demo\nCall helper() first.\n");
    d.write("target/debug/out.rs", "fn helper() {}\n");
    d.write("debug.log", "helper\n");
    d.write("secret.txt", "helper\n");
    d.write(".git/config", "helper\n");
    d
}

// ---------------------------------------------------------------- list_directory

#[test]
fn list_shows_a_sorted_tree_with_markers_and_sizes() {
    let d = Dir::new();
    d.write("b.txt", vec![b'x'; 2048]);
    d.write("A.rs", "0123456789");
    d.write("c/d.rs", "");
    d.write(".env.example", "K=V\n");
    d.write(".git/HEAD", "ref\n");
    symlink("A.rs", d.path().join("link")).unwrap();
    let out = d.tool("list_directory", &json!({}));
    assert_eq!(
        out.ok(),
        "./\n  .env.example (4 B)\n  A.rs (10 B)\n  b.txt (2 KB)\n  c/\n    d.rs (0 B)\n  link@\n"
    );
}

#[test]
fn list_respects_gitignore_and_ignore_outside_git() {
    let d = project();
    std::fs::remove_dir_all(d.path().join(".git")).unwrap();
    let text = d
        .tool("list_directory", &json!({"depth": 3}))
        .ok()
        .to_string();
    for shown in [
        ".github/",
        "workflows/",
        "ci.yml",
        "src/",
        "util/",
        "README.md",
        ".gitignore",
    ] {
        assert!(text.contains(shown), "{shown} missing:\n{text}");
    }
    for hidden in ["target", "debug.log", "secret.txt", ".git/"] {
        assert!(!text.contains(hidden), "{hidden} shown:\n{text}");
    }
}

#[test]
fn list_respects_git_info_exclude() {
    let d = Dir::new();
    d.write(".git/info/exclude", "local-only.txt\n");
    d.write("local-only.txt", "x");
    d.write("kept.txt", "x");
    let out = d.tool("list_directory", &json!({}));
    assert_eq!(out.ok(), "./\n  kept.txt (1 B)\n");
}

#[test]
fn list_depth_defaults_to_two_and_is_clamped() {
    let d = Dir::new();
    d.write("a/b/c/d/e/f/g.txt", "x");
    let levels = |args: serde_json::Value| {
        let out = d.tool("list_directory", &args);
        out.ok().lines().count() - 1
    };
    assert_eq!(levels(json!({})), 2);
    assert_eq!(levels(json!({"depth": 1})), 1);
    assert_eq!(levels(json!({"depth": 0})), 1);
    assert_eq!(levels(json!({"depth": -3})), 1);
    assert_eq!(levels(json!({"depth": 5})), 5);
    assert_eq!(levels(json!({"depth": 99})), 5);
}

#[test]
fn list_of_a_subfolder_keeps_root_ignore_rules() {
    let d = project();
    d.write("src/trace.log", "x");
    let out = d.tool("list_directory", &json!({"path": "src"}));
    assert_eq!(
        out.ok(),
        "src/\n  lib.rs (19 B)\n  main.rs (28 B)\n  util/\n    Strings.rs (23 B)\n"
    );
}

#[test]
fn list_of_an_ignored_folder_named_explicitly_shows_it() {
    let d = project();
    let out = d.tool("list_directory", &json!({"path": "target"}));
    assert_eq!(out.ok(), "target/\n  debug/\n    out.rs (15 B)\n");
}

#[test]
fn list_caps_entries_with_a_notice() {
    let d = Dir::new();
    for i in 0..520 {
        d.write(&format!("f{i:04}.txt"), "");
    }
    let out = d.tool("list_directory", &json!({}));
    let text = out.ok();
    assert_eq!(text.lines().filter(|l| l.starts_with("  f")).count(), 500);
    assert!(text.contains("  f0499.txt"));
    assert!(!text.contains("f0500.txt"));
    assert!(
        text.trim_end()
            .ends_with("... 20 more entries (list a subfolder or use a smaller depth to see them)"),
        "{text}"
    );
}

#[test]
fn list_errors_for_files_missing_paths_and_empty_folders() {
    let d = project();
    let file = d.tool("list_directory", &json!({"path": "README.md"}));
    assert!(
        file.err()
            .contains("is a file, not a folder; use read_file"),
        "{file:?}"
    );
    let missing = d.tool("list_directory", &json!({"path": "nope"}));
    assert!(
        missing.err().starts_with("folder not found: nope"),
        "{missing:?}"
    );
    std::fs::create_dir(d.path().join("empty")).unwrap();
    let empty = d.tool("list_directory", &json!({"path": "empty"}));
    assert!(empty.ok().contains("[empty folder"), "{empty:?}");
}

// ---------------------------------------------------------------- path escapes, every tool

#[test]
fn every_tool_refuses_paths_outside_the_project() {
    let d = project();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("x.rs"), "helper\n").unwrap();
    symlink(outside.path(), d.path().join("out")).unwrap();
    let abs = outside.path().to_str().unwrap().to_string();
    for bad in [
        "../",
        "..",
        "src/../../x",
        abs.as_str(),
        "out",
        "out/x.rs",
        ".git",
        ".git/info",
    ] {
        for (tool, args) in [
            ("list_directory", json!({"path": bad})),
            ("search_files", json!({"pattern": "*", "base_path": bad})),
            ("search_code", json!({"pattern": "helper", "path": bad})),
        ] {
            let out = d.tool(tool, &args);
            assert!(
                out.err().starts_with("path escapes the project"),
                "{tool} {bad}: {out:?}"
            );
        }
    }
    // Nothing outside leaks through a whole-project search either.
    let all = d.tool("search_code", &json!({"pattern": "helper"}));
    assert!(!all.ok().contains("out/"), "{all:?}");
}

// ---------------------------------------------------------------- search_files

#[test]
fn search_files_matches_names_at_any_depth_sorted() {
    let d = project();
    let out = d.tool("search_files", &json!({"pattern": "*.rs"}));
    assert_eq!(out.ok(), "src/lib.rs\nsrc/main.rs\nsrc/util/Strings.rs\n");
}

#[test]
fn search_files_with_a_slash_matches_relative_to_base_path() {
    let d = project();
    let top = d.tool("search_files", &json!({"pattern": "src/*.rs"}));
    assert_eq!(top.ok(), "src/lib.rs\nsrc/main.rs\n");
    let deep = d.tool("search_files", &json!({"pattern": "src/**/*.rs"}));
    assert_eq!(deep.ok(), "src/lib.rs\nsrc/main.rs\nsrc/util/Strings.rs\n");
    let based = d.tool(
        "search_files",
        &json!({"pattern": "util/*.rs", "base_path": "src"}),
    );
    assert_eq!(based.ok(), "src/util/Strings.rs\n");
    let hidden = d.tool("search_files", &json!({"pattern": ".github/**/*.yml"}));
    assert_eq!(hidden.ok(), ".github/workflows/ci.yml\n");
}

#[test]
fn search_files_skips_ignored_files() {
    let d = project();
    let out = d.tool("search_files", &json!({"pattern": "*"}));
    let text = out.ok();
    assert!(text.contains("README.md"));
    for hidden in ["target/", "debug.log", "secret.txt", ".git/"] {
        assert!(!text.contains(hidden), "{hidden} listed:\n{text}");
    }
}

#[test]
fn search_files_caps_results_with_a_notice() {
    let d = Dir::new();
    for i in 0..1010 {
        d.write(&format!("d{}/f{i:04}.txt", i % 7), "");
    }
    let out = d.tool("search_files", &json!({"pattern": "*.txt"}));
    let text = out.ok();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1001);
    let mut sorted = lines[..1000].to_vec();
    sorted.sort();
    assert_eq!(sorted, lines[..1000]);
    assert_eq!(
        lines[1000],
        "[truncated: showing 1000 of 1010 matching files; narrow the pattern or base_path]"
    );
}

#[test]
fn search_files_reports_no_match_and_bad_globs() {
    let d = project();
    let none = d.tool("search_files", &json!({"pattern": "*.java"}));
    assert!(
        none.ok().starts_with("no files match `*.java` under ."),
        "{none:?}"
    );
    let bad = d.tool("search_files", &json!({"pattern": "src/[ab"}));
    assert!(
        bad.err()
            .starts_with("invalid glob `src/[ab`: unclosed character class"),
        "{bad:?}"
    );
    let nested = d.tool("search_files", &json!({"pattern": "{a,{b}"}));
    assert!(nested.err().starts_with("invalid glob"), "{nested:?}");
    let file = d.tool(
        "search_files",
        &json!({"pattern": "*", "base_path": "README.md"}),
    );
    assert!(file.err().contains("is a file, not a folder"), "{file:?}");
}

// ---------------------------------------------------------------- search_code

#[test]
fn search_code_prints_grep_format_sorted_by_path() {
    let d = project();
    let out = d.tool("search_code", &json!({"pattern": r"helper\(\)"}));
    assert_eq!(
        out.ok(),
        "README.md:2:Call helper() first.\nsrc/lib.rs:1:pub fn helper() {}\nsrc/main.rs:2:    helper();\n"
    );
}

#[test]
fn search_code_respects_ignore_files_outside_git() {
    let d = project();
    std::fs::remove_dir_all(d.path().join(".git")).unwrap();
    let out = d.tool("search_code", &json!({"pattern": "helper"}));
    let text = out.ok();
    assert!(text.contains("src/lib.rs:1:"));
    for hidden in ["target/", "debug.log", "secret.txt", ".git/"] {
        assert!(!text.contains(hidden), "{hidden} searched:\n{text}");
    }
}

#[test]
fn search_code_skips_binary_files() {
    let d = Dir::new();
    d.write("data.bin2", b"needle\0\x01\x02needle\n");
    d.write("text.txt", "needle\n");
    d.write("image.png", "needle\n");
    let out = d.tool("search_code", &json!({"pattern": "needle"}));
    assert_eq!(out.ok(), "text.txt:1:needle\n");
    let one = d.tool(
        "search_code",
        &json!({"pattern": "needle", "path": "data.bin2"}),
    );
    assert!(
        one.ok().starts_with("data.bin2 is a binary file"),
        "{one:?}"
    );
}

#[test]
fn search_code_caps_matches_with_the_notice() {
    let d = Dir::new();
    let body: String = (0..60).map(|i| format!("match {i}\n")).collect();
    for f in ["a.txt", "b.txt", "c.txt"] {
        d.write(f, &body);
    }
    let out = d.tool("search_code", &json!({"pattern": "match"}));
    let text = out.ok();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 101, "{text}");
    assert_eq!(
        lines[100],
        "[truncated: more matches; narrow the pattern or path]"
    );
    let mut sorted = lines[..100].to_vec();
    sorted.sort_by_key(|l| {
        let mut parts = l.splitn(3, ':');
        (
            parts.next().unwrap().to_string(),
            parts.next().unwrap().parse::<u32>().unwrap(),
        )
    });
    assert_eq!(sorted, lines[..100]);
}

#[test]
fn search_code_exactly_at_the_cap_has_no_notice() {
    let d = Dir::new();
    let body: String = (0..100).map(|i| format!("match {i}\n")).collect();
    d.write("a.txt", &body);
    let out = d.tool("search_code", &json!({"pattern": "match"}));
    assert_eq!(out.ok().lines().count(), 100);
    assert!(!out.ok().contains("[truncated"));
}

#[test]
fn search_code_reports_invalid_regex_with_position() {
    let d = project();
    let out = d.tool("search_code", &json!({"pattern": "fn helper("}));
    let text = out.err();
    assert!(text.starts_with("invalid regex:"), "{text}");
    assert!(text.contains("unclosed group"), "{text}");
    assert!(text.contains('^'), "{text}");
    assert!(text.contains("literal=true"), "{text}");
}

#[test]
fn search_code_literal_and_ignore_case() {
    let d = Dir::new();
    d.write("a.txt", "call(x)\nCALL(Y)\ncallzx)\n");
    let regex = d.tool("search_code", &json!({"pattern": "call.x"}));
    assert_eq!(regex.ok(), "a.txt:1:call(x)\na.txt:3:callzx)\n");
    let literal = d.tool("search_code", &json!({"pattern": "call(", "literal": true}));
    assert_eq!(literal.ok(), "a.txt:1:call(x)\n");
    let both = d.tool(
        "search_code",
        &json!({"pattern": "call(", "literal": true, "ignore_case": true}),
    );
    assert_eq!(both.ok(), "a.txt:1:call(x)\na.txt:2:CALL(Y)\n");
}

#[test]
fn search_code_context_lines_and_separators() {
    let d = Dir::new();
    d.write("a.txt", "1\nhit\n3\n4\n5\n6\nhit\n8\n");
    d.write("b.txt", "hit\nx\n");
    let out = d.tool(
        "search_code",
        &json!({"pattern": "hit", "context_lines": 1}),
    );
    assert_eq!(
        out.ok(),
        "a.txt-1-1\na.txt:2:hit\na.txt-3-3\n--\na.txt-6-6\na.txt:7:hit\na.txt-8-8\n--\nb.txt:1:hit\nb.txt-2-x\n"
    );
    // Overlapping context merges into one group; huge values are clamped.
    let merged = d.tool(
        "search_code",
        &json!({"pattern": "hit", "path": "a.txt", "context_lines": 500}),
    );
    assert_eq!(merged.ok().lines().count(), 8);
    assert!(!merged.ok().contains("--"));
}

#[test]
fn search_code_file_glob_filters_files() {
    let d = project();
    let rs = d.tool(
        "search_code",
        &json!({"pattern": "helper", "file_glob": "*.rs"}),
    );
    assert_eq!(
        rs.ok(),
        "src/lib.rs:1:pub fn helper() {}\nsrc/main.rs:2:    helper();\nsrc/util/Strings.rs:1:pub fn helper_two() {}\n"
    );
    let nested = d.tool(
        "search_code",
        &json!({"pattern": "helper", "path": "src", "file_glob": "util/*.rs"}),
    );
    assert_eq!(
        nested.ok(),
        "src/util/Strings.rs:1:pub fn helper_two() {}\n"
    );
    let bad = d.tool(
        "search_code",
        &json!({"pattern": "helper", "file_glob": "[z"}),
    );
    assert!(bad.err().starts_with("invalid glob `[z`"), "{bad:?}");
}

#[test]
fn search_code_in_one_file_and_no_match_text() {
    let d = project();
    let one = d.tool(
        "search_code",
        &json!({"pattern": "helper", "path": "src/main.rs"}),
    );
    assert_eq!(one.ok(), "src/main.rs:2:    helper();\n");
    let none = d.tool("search_code", &json!({"pattern": "nothing_like_this"}));
    assert!(
        none.ok()
            .starts_with("no matches for `nothing_like_this` in ."),
        "{none:?}"
    );
    let missing = d.tool("search_code", &json!({"pattern": "x", "path": "nope.rs"}));
    assert!(
        missing.err().starts_with("path not found: nope.rs"),
        "{missing:?}"
    );
}

#[test]
fn search_code_cuts_long_lines() {
    let d = Dir::new();
    d.write(
        "min.js",
        format!("{}needle{}\n", "a".repeat(2000), "b".repeat(2000)),
    );
    let out = d.tool("search_code", &json!({"pattern": "needle"}));
    let text = out.ok().trim_end().to_string();
    assert!(text.starts_with("min.js:1:..."), "{text}");
    assert!(text.contains("needle"), "{text}");
    assert!(text.ends_with("... [line truncated, 4006 chars]"), "{text}");
    let shown = text
        .trim_start_matches("min.js:1:...")
        .trim_end_matches("... [line truncated, 4006 chars]");
    assert_eq!(shown.chars().count(), 500);
}

#[test]
fn search_code_does_not_follow_symlinks() {
    let d = Dir::new();
    d.write("real/a.txt", "needle\n");
    symlink(d.path().join("real"), d.path().join("alias")).unwrap();
    symlink("real/a.txt", d.path().join("file-link")).unwrap();
    let out = d.tool("search_code", &json!({"pattern": "needle"}));
    assert_eq!(out.ok(), "real/a.txt:1:needle\n");
    // A symlinked folder inside the project may be searched by name.
    let via = d.tool(
        "search_code",
        &json!({"pattern": "needle", "path": "alias"}),
    );
    assert_eq!(via.ok(), "real/a.txt:1:needle\n");
}

#[test]
fn search_code_skips_a_file_whose_one_line_is_too_long_to_hold() {
    let d = Dir::new();
    // 40 MB without a newline, a match at its end: holding the line would take 40 MB and more.
    let mut huge = vec![b'x'; 40 * 1024 * 1024];
    huge.extend_from_slice(b"needle");
    d.write("huge.txt", &huge);
    d.write("small.txt", "no match here\n");
    let out = d.tool("search_code", &json!({"pattern": "needle"}));
    let text = out.ok();
    assert!(
        text.contains("1 file skipped for a line longer than 16 MiB"),
        "{text}"
    );
}

// ---------------------------------------------------------------- determinism under caps

/// A tree where every `.txt` file matches: 8 folders of 5 subfolders of 6 files, 3 matches
/// each, names chosen so that directory order on disk is unlikely to be path order. Before them
/// in path order, 250 files without a match: search_code's first pass in path order gives up
/// after 256 files, so its parallel second pass finds most of the matches.
fn matching_tree() -> (Dir, Vec<String>) {
    let d = Dir::new();
    for i in 0..250 {
        d.write(&format!("0/filler{i:03}.md"), "nothing here\n");
    }
    let mut rels = Vec::new();
    for a in ["q", "b", "x", "a", "m", "c", "z", "k"] {
        for b in ["t", "e", "n", "a", "y"] {
            for f in ["w", "d", "o", "b", "s", "h"] {
                let rel = format!("{a}/{b}{a}/{f}.txt");
                d.write(&rel, "needle one\ncontext\nneedle two\nneedle three\n");
                rels.push(rel);
            }
        }
    }
    rels.sort();
    (d, rels)
}

/// Runs `tool` in-process `times` times with `limits` changed, returning each output.
fn in_process(
    d: &Dir,
    tool: &str,
    args: &serde_json::Value,
    times: usize,
    limits: impl Fn(&mut versus::tools::ToolLimits),
) -> Vec<String> {
    let view = versus::workspace::DirectView::new(d.path()).unwrap();
    let mut ctx = versus::tools::ToolContext::new(std::sync::Arc::new(view));
    limits(&mut ctx.limits);
    let registry = versus::tools::ToolRegistry::builtin();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    (0..times)
        .map(|_| {
            let out = rt.block_on(registry.dispatch(tool, &args.to_string(), &ctx));
            assert!(!out.is_error, "{}", out.text);
            out.text
        })
        .collect()
}

#[test]
fn capped_search_code_gives_the_first_matches_in_path_order_every_time() {
    let (d, rels) = matching_tree();
    let cap = 25;
    let mut expected: Vec<String> = rels
        .iter()
        .flat_map(|rel| {
            [
                format!("{rel}:1:needle one"),
                format!("{rel}:3:needle two"),
                format!("{rel}:4:needle three"),
            ]
        })
        .take(cap)
        .collect();
    expected.push("[truncated: more matches; narrow the pattern or path]".into());
    let expected = expected.join("\n");
    let args = json!({"pattern": "needle"});
    for (i, out) in in_process(&d, "search_code", &args, 20, |l| l.search_max_matches = cap)
        .iter()
        .enumerate()
    {
        assert_eq!(*out, expected, "run {i}");
    }
    // With context lines and a folder: the same output on every run.
    let args = json!({"pattern": "needle t", "context_lines": 1, "path": "m"});
    let runs = in_process(&d, "search_code", &args, 20, |l| l.search_max_matches = 7);
    assert!(
        runs[0].starts_with(
            "m/am/b.txt-2-context\nm/am/b.txt:3:needle two\nm/am/b.txt:4:needle three\n--\n\
             m/am/d.txt-2-context\n"
        ),
        "{}",
        runs[0]
    );
    assert!(runs.iter().all(|r| *r == runs[0]), "{runs:#?}");
}

#[test]
fn capped_search_files_and_list_directory_are_the_same_every_time() {
    let (d, rels) = matching_tree();
    let runs = in_process(&d, "search_files", &json!({"pattern": "*.txt"}), 20, |l| {
        l.search_max_files = 10
    });
    let mut expected = rels[..10].join("\n");
    expected.push_str(&format!(
        "\n[truncated: showing 10 of {} matching files; narrow the pattern or base_path]",
        rels.len()
    ));
    assert!(runs.iter().all(|r| *r == expected), "{runs:#?}");
    let runs = in_process(&d, "list_directory", &json!({"depth": 3}), 20, |l| {
        l.list_max_entries = 30
    });
    assert!(runs[0].contains("... "), "{}", runs[0]);
    assert!(runs.iter().all(|r| *r == runs[0]), "{runs:#?}");
}
