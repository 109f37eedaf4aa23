//! edit_file through the real binary: `versus tool edit_file --args JSON --dir DIR`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

fn versus(dir: &Path, tool: &str, args: &Value) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_versus"))
        .args(["tool", tool, "--args", &args.to_string(), "--dir"])
        .arg(dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    (out.status.code().unwrap(), stdout)
}

fn edit(dir: &Path, path: &str, old: &str, new: &str) -> (i32, String) {
    versus(
        dir,
        "edit_file",
        &json!({"path": path, "old_string": old, "new_string": new}),
    )
}

fn setup(name: &str, content: &[u8]) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join(name), content).unwrap();
    d
}

fn read(d: &tempfile::TempDir, name: &str) -> Vec<u8> {
    std::fs::read(d.path().join(name)).unwrap()
}

/// A file of numbered lines, `line 1` to `line n`.
fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

// ---------- exact ----------

#[test]
fn exact_edit_writes_and_shows_a_unified_diff() {
    let d = setup("a.txt", numbered(20).as_bytes());
    let (code, out) = edit(d.path(), "a.txt", "line 10\n", "ten\nten and a half\n");
    assert_eq!(code, 0, "{out}");
    let want = numbered(20).replace("line 10\n", "ten\nten and a half\n");
    assert_eq!(read(&d, "a.txt"), want.as_bytes());
    assert!(
        out.starts_with("edited a.txt: replaced 1 occurrence at line 10"),
        "{out}"
    );
    assert!(!out.contains("note:"), "{out}");
    assert!(out.contains("--- a/a.txt\n+++ b/a.txt\n"), "{out}");
    assert!(
        out.contains(
            "@@ -7,7 +7,8 @@\n line 7\n line 8\n line 9\n-line 10\n+ten\n+ten and a half\n line 11\n line 12\n line 13\n"
        ),
        "{out}"
    );
}

#[test]
fn exact_ambiguous_names_count_and_lines_and_changes_nothing() {
    let content = "a\nx = 1\nb\nc\nx = 1\n";
    let d = setup("f.py", content.as_bytes());
    let (code, out) = edit(d.path(), "f.py", "x = 1", "x = 2");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("occurs 2 times"), "{out}");
    assert!(out.contains("lines 2, 5"), "{out}");
    assert!(out.contains("replace_all"), "{out}");
    assert_eq!(read(&d, "f.py"), content.as_bytes());
}

#[test]
fn replace_all_replaces_every_occurrence() {
    let d = setup("f.rs", b"foo(1);\nbar();\nfoo(2);\nfoo(3);\n");
    let (code, out) = versus(
        d.path(),
        "edit_file",
        &json!({"path": "f.rs", "old_string": "foo(", "new_string": "baz(", "replace_all": true}),
    );
    assert_eq!(code, 0, "{out}");
    assert_eq!(read(&d, "f.rs"), b"baz(1);\nbar();\nbaz(2);\nbaz(3);\n");
    assert!(
        out.contains("replaced 3 occurrences (lines 1, 3, 4)"),
        "{out}"
    );
    assert_eq!(out.matches("\n+baz(").count(), 3, "{out}");
}

#[test]
fn a_second_edit_builds_on_the_first() {
    let d = setup("s.txt", b"alpha\nbeta\ngamma\n");
    assert_eq!(edit(d.path(), "s.txt", "beta", "BETA").0, 0);
    // The second edit's old_string only exists after the first edit.
    let (code, out) = edit(d.path(), "s.txt", "BETA\ngamma", "BETA\nGAMMA");
    assert_eq!(code, 0, "{out}");
    assert_eq!(read(&d, "s.txt"), b"alpha\nBETA\nGAMMA\n");
}

#[test]
fn deleting_text_with_an_empty_new_string() {
    let d = setup("d.txt", b"keep\ndrop me\nkeep too\n");
    let (code, out) = edit(d.path(), "d.txt", "drop me\n", "");
    assert_eq!(code, 0, "{out}");
    assert_eq!(read(&d, "d.txt"), b"keep\nkeep too\n");
    assert!(out.contains("-drop me\n"), "{out}");
}

// ---------- byte-for-byte preservation ----------

#[test]
fn crlf_file_keeps_crlf_and_inserted_lines_get_crlf() {
    let d = setup("w.txt", b"one\r\ntwo\r\nthree\r\n");
    let (code, out) = edit(d.path(), "w.txt", "two", "two\nand a half");
    assert_eq!(code, 0, "{out}");
    assert_eq!(read(&d, "w.txt"), b"one\r\ntwo\r\nand a half\r\nthree\r\n");
    assert!(!out.contains('\r'), "the diff shows CRLF as LF: {out:?}");
}

#[test]
fn bom_file_keeps_its_bom() {
    let d = setup("b.txt", b"\xEF\xBB\xBFfirst\nsecond\n");
    let (code, out) = edit(d.path(), "b.txt", "first", "premier");
    assert_eq!(code, 0, "{out}");
    assert_eq!(read(&d, "b.txt"), b"\xEF\xBB\xBFpremier\nsecond\n");
}

#[test]
fn crlf_and_bom_together_after_a_fuzzy_match() {
    let d = setup("c.txt", b"\xEF\xBB\xBFa\r\nb\r\nc\r\nd\r\n");
    let (code, out) = edit(d.path(), "c.txt", "b\nc\n", "B\nC\nC2\n");
    assert_eq!(code, 0, "{out}");
    assert_eq!(read(&d, "c.txt"), b"\xEF\xBB\xBFa\r\nB\r\nC\r\nC2\r\nd\r\n");
    assert!(
        out.contains("matched after normalising line endings"),
        "{out}"
    );
}

// ---------- fuzzy strategies ----------

#[test]
fn line_endings_strategy_matches_lf_string_in_crlf_file() {
    let d = setup("e.txt", b"x = 1\r\ny = 2\r\nz = 3\r\n");
    let (code, out) = edit(d.path(), "e.txt", "x = 1\ny = 2\n", "x = 10\ny = 20\n");
    assert_eq!(code, 0, "{out}");
    assert_eq!(read(&d, "e.txt"), b"x = 10\r\ny = 20\r\nz = 3\r\n");
    assert!(
        out.contains("note: no exact match; matched after normalising line endings"),
        "{out}"
    );
}

#[test]
fn trailing_whitespace_strategy_leaves_other_lines_byte_for_byte() {
    // Trailing spaces and curly quotes elsewhere in the file must survive untouched.
    let content = "msg = \u{201C}hi\u{201D}   \nif a:   \n    go()\t\nend  \n";
    let d = setup("t.py", content.as_bytes());
    let (code, out) = edit(d.path(), "t.py", "if a:\n    go()\n", "if b:\n    stop()\n");
    assert_eq!(code, 0, "{out}");
    let want = "msg = \u{201C}hi\u{201D}   \nif b:\n    stop()\nend  \n";
    assert_eq!(read(&d, "t.py"), want.as_bytes());
    assert!(out.contains("ignoring trailing whitespace"), "{out}");
}

#[test]
fn punctuation_strategy_matches_ascii_quotes_against_curly_ones() {
    let content = "title = \u{201C}Intro\u{201D}\nsub = \u{2018}x\u{2019} \u{2014} y\u{a0}z\nother = \u{201C}keep\u{201D}  \n";
    let d = setup("p.txt", content.as_bytes());
    let (code, out) = edit(d.path(), "p.txt", "sub = 'x' - y z", "sub = 'x' - y and z");
    assert_eq!(code, 0, "{out}");
    let want =
        "title = \u{201C}Intro\u{201D}\nsub = 'x' - y and z\nother = \u{201C}keep\u{201D}  \n";
    assert_eq!(read(&d, "p.txt"), want.as_bytes());
    assert!(out.contains("normalising Unicode punctuation"), "{out}");
}

#[test]
fn indentation_strategy_reindents_with_the_files_tabs() {
    let content = "func f() {\n\tif ok {\n\t\trun()\n\t}\n}\n";
    let d = setup("f.go", content.as_bytes());
    let (code, out) = edit(
        d.path(),
        "f.go",
        "    if ok {\n        run()\n    }\n",
        "    if ok {\n        run()\n        log()\n    }\n",
    );
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        read(&d, "f.go"),
        b"func f() {\n\tif ok {\n\t\trun()\n\t\tlog()\n\t}\n}\n"
    );
    assert!(out.contains("ignoring indentation"), "{out}");
}

#[test]
fn indentation_strategy_reindents_a_dedented_quote_with_spaces() {
    let content =
        "class A:\n    def f(self):\n        return 1\n\n    def g(self):\n        return 2\n";
    let d = setup("a.py", content.as_bytes());
    let (code, out) = edit(
        d.path(),
        "a.py",
        "def f(self):\n    return 1\n",
        "def f(self):\n    if self:\n        return 0\n    return 1\n",
    );
    assert_eq!(code, 0, "{out}");
    let want = "class A:\n    def f(self):\n        if self:\n            return 0\n        return 1\n\n    def g(self):\n        return 2\n";
    assert_eq!(read(&d, "a.py"), want.as_bytes());
}

#[test]
fn line_number_prefixes_copied_from_read_file_are_stripped() {
    let d = setup("n.txt", b"first\nsecond\nthird\nfourth\n");
    let (code, shown) = versus(d.path(), "read_file", &json!({"path": "n.txt"}));
    assert_eq!(code, 0, "{shown}");
    // Lines 2-3 exactly as read_file printed them, prefixes included.
    let old: String = shown
        .lines()
        .skip(1)
        .take(2)
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(old.starts_with("     2\tsecond\n"), "{old:?}");
    let (code, out) = edit(d.path(), "n.txt", &old, "SECOND\nTHIRD\n");
    assert_eq!(code, 0, "{out}");
    assert_eq!(read(&d, "n.txt"), b"first\nSECOND\nTHIRD\nfourth\n");
    assert!(
        out.contains("stripping read_file line-number prefixes"),
        "{out}"
    );
}

#[test]
fn prefixes_are_not_stripped_unless_every_line_has_one() {
    let d = setup("n.txt", b"second\nthird\n");
    let (code, out) = edit(d.path(), "n.txt", "     1\tsecond\nthird\n", "x\n");
    assert_eq!(code, 1, "{out}");
    assert_eq!(read(&d, "n.txt"), b"second\nthird\n");
}

// ---------- refusals ----------

#[test]
fn two_fuzzy_candidates_are_refused_with_their_lines() {
    let content = "start\nvalue = 1  \nnext\nmiddle\nvalue = 1\t\nnext\n";
    let d = setup("two.txt", content.as_bytes());
    let (code, out) = edit(d.path(), "two.txt", "value = 1 \nnext", "value = 2\nnext");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("matches 2 places"), "{out}");
    assert!(out.contains("lines 2, 5"), "{out}");
    assert_eq!(read(&d, "two.txt"), content.as_bytes());
}

#[test]
fn two_indentation_candidates_are_refused() {
    let content = "\tcall();\n\tdone();\n\n\t\tcall();\n\t\tdone();\n";
    let d = setup("i.txt", content.as_bytes());
    let (code, out) = edit(d.path(), "i.txt", "  call();\n  done();\n", "x();\n");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("ignoring indentation"), "{out}");
    assert!(out.contains("lines 1, 4"), "{out}");
    assert_eq!(read(&d, "i.txt"), content.as_bytes());
}

#[test]
fn first_and_last_lines_alone_never_match() {
    let content = "fn total() -> u32 {\n    let a = price();\n    let b = tax();\n    a + b\n}\n";
    let d = setup("m.rs", content.as_bytes());
    let old = "fn total() -> u32 {\n    let a = cost();\n    let b = fee();\n    a * b\n}\n";
    let (code, out) = edit(d.path(), "m.rs", old, "fn total() -> u32 { 0 }\n");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("not found"), "{out}");
    assert_eq!(read(&d, "m.rs"), content.as_bytes());
}

#[test]
fn not_found_shows_the_closest_region_and_first_difference() {
    let mut content = numbered(30);
    content = content.replace("line 15\n", "let total = price * 2;\n");
    let d = setup("c.txt", content.as_bytes());
    let (code, out) = edit(
        d.path(),
        "c.txt",
        "line 14\nlet total = price * 3;\nline 16\n",
        "x\n",
    );
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("old_string was not found in c.txt"), "{out}");
    assert!(out.contains("closest region is at lines 14-16"), "{out}");
    assert!(out.contains("    14\tline 14\n"), "{out}");
    assert!(out.contains("    15\tlet total = price * 2;\n"), "{out}");
    assert!(
        out.contains("line 15 of the file vs line 2 of old_string"),
        "{out}"
    );
    assert!(out.contains("\"let total = price * 3;\""), "{out}");
    assert_eq!(read(&d, "c.txt"), content.as_bytes());
}

#[test]
fn empty_old_string_points_to_write_file() {
    let d = setup("e.txt", b"text\n");
    let (code, out) = edit(d.path(), "e.txt", "", "more");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("old_string is empty"), "{out}");
    assert!(out.contains("write_file"), "{out}");
    assert_eq!(read(&d, "e.txt"), b"text\n");
}

#[test]
fn identical_strings_are_refused() {
    let d = setup("e.txt", b"text\n");
    let (code, out) = edit(d.path(), "e.txt", "text", "text");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("identical"), "{out}");
}

#[test]
fn an_edit_that_changes_nothing_is_refused() {
    let content = "say(\u{201C}hi\u{201D})\n";
    let d = setup("q.txt", content.as_bytes());
    let (code, out) = edit(d.path(), "q.txt", "say(\"hi\")", "say(\u{201C}hi\u{201D})");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("would not change"), "{out}");
    assert_eq!(read(&d, "q.txt"), content.as_bytes());
}

#[test]
fn missing_file_points_to_write_file_and_similar_names() {
    let d = setup("util.rs", b"fn a() {}\n");
    let (code, out) = edit(d.path(), "utils.rs", "a", "b");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("file not found: utils.rs"), "{out}");
    assert!(out.contains("write_file"), "{out}");
    assert!(out.contains("did you mean: util.rs"), "{out}");
    assert!(!d.path().join("utils.rs").exists());
}

#[test]
fn binary_and_directory_are_refused() {
    let d = setup("blob.dat", b"abc\0def\0ghi");
    let (code, out) = edit(d.path(), "blob.dat", "abc", "xyz");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("binary file"), "{out}");
    assert_eq!(read(&d, "blob.dat"), b"abc\0def\0ghi");
    std::fs::create_dir(d.path().join("sub")).unwrap();
    let (code, out) = edit(d.path(), "sub", "a", "b");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("is a directory"), "{out}");
}

#[test]
fn paths_that_escape_the_project_are_refused() {
    let parent = tempfile::tempdir().unwrap();
    let project = parent.path().join("project");
    std::fs::create_dir(&project).unwrap();
    std::fs::write(parent.path().join("x"), b"secret\n").unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("f.txt"), b"secret\n").unwrap();
    std::os::unix::fs::symlink(outside.path(), project.join("link")).unwrap();
    std::fs::create_dir(project.join(".git")).unwrap();
    std::fs::write(project.join(".git/config"), b"secret\n").unwrap();
    let abs_outside = outside.path().join("f.txt");
    for path in [
        "../x",
        abs_outside.to_str().unwrap(),
        "link/f.txt",
        ".git/config",
    ] {
        let (code, out) = edit(&project, path, "secret", "leaked");
        assert_eq!(code, 1, "{path}: {out}");
        assert!(out.contains("path escapes the project"), "{path}: {out}");
    }
    assert_eq!(std::fs::read(parent.path().join("x")).unwrap(), b"secret\n");
    assert_eq!(std::fs::read(&abs_outside).unwrap(), b"secret\n");
    assert_eq!(
        std::fs::read(project.join(".git/config")).unwrap(),
        b"secret\n"
    );
}

#[test]
fn bad_arguments_are_an_error_result() {
    let d = setup("a.txt", b"a\n");
    let (code, out) = versus(
        d.path(),
        "edit_file",
        &json!({"path": "a.txt", "old_string": "a"}),
    );
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("new_string"), "{out}");
}

#[test]
fn edits_in_a_large_file_report_the_right_lines() {
    let content = numbered(50_000);
    let d = setup("big.txt", content.as_bytes());
    let (code, out) = edit(d.path(), "big.txt", "line 40000\n", "forty thousand\n");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("at line 40000"), "{out}");
    assert!(out.contains("@@ -39997,7 +39997,7 @@"), "{out}");
    let want = content.replace("line 40000\n", "forty thousand\n");
    assert_eq!(read(&d, "big.txt"), want.as_bytes());
}
