//! read_file through the real binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util;

use serde_json::json;
use util::Dir;

fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

#[test]
fn offset_and_limit_page_through() {
    let d = Dir::new();
    d.write("a.txt", numbered(10));
    let out = d.tool(
        "read_file",
        &json!({"path": "a.txt", "offset": 3, "limit": 2}),
    );
    assert_eq!(
        out.ok(),
        "     3\tline 3\n     4\tline 4\n\n[lines 3-4 of 10; use offset=5 to continue]\n"
    );
    let tail = d.tool("read_file", &json!({"path": "a.txt", "offset": 9}));
    assert_eq!(
        tail.ok(),
        "     9\tline 9\n    10\tline 10\n\n[lines 9-10 of 10; end of file]\n"
    );
}

#[test]
fn whole_small_file_has_no_footer() {
    let d = Dir::new();
    d.write("a.txt", "x\ny");
    assert_eq!(
        d.tool("read_file", &json!({"path": "a.txt"})).ok(),
        "     1\tx\n     2\ty\n"
    );
}

#[test]
fn caps_at_2000_lines_with_continuation_hint() {
    let d = Dir::new();
    d.write("big.txt", numbered(3000));
    let out = d.tool("read_file", &json!({"path": "big.txt"}));
    let text = out.ok();
    assert!(text.contains("  2000\tline 2000\n"));
    assert!(!text.contains("line 2001"));
    assert!(text.ends_with("[lines 1-2000 of 3000; use offset=2001 to continue]\n"));
    // A limit above the cap is clamped to it.
    let out = d.tool("read_file", &json!({"path": "big.txt", "limit": 5000}));
    assert!(out.ok().contains("[lines 1-2000 of 3000;"));
}

#[test]
fn caps_at_50_kb_never_cutting_a_line() {
    let d = Dir::new();
    let line = "y".repeat(100);
    let content: String = (0..1500).map(|_| format!("{line}\n")).collect();
    d.write("wide.txt", content);
    let out = d.tool("read_file", &json!({"path": "wide.txt"}));
    let text = out.ok();
    let (body, footer) = text.rsplit_once("\n\n").unwrap();
    assert!(body.len() <= 50 * 1024, "body is {} bytes", body.len());
    for l in body.lines() {
        assert!(l.ends_with(&line), "partial line: {l:?}");
    }
    let shown = body.lines().count();
    assert!(shown > 400 && shown < 1500, "{shown}");
    assert_eq!(
        footer,
        format!(
            "[lines 1-{shown} of 1500 (output size cap reached); use offset={} to continue]\n",
            shown + 1
        )
    );
}

#[test]
fn long_lines_are_cut_with_their_length() {
    let d = Dir::new();
    d.write("min.js", format!("{}\nshort\n", "z".repeat(5000)));
    let out = d.tool("read_file", &json!({"path": "min.js"}));
    let text = out.ok();
    let first = text.lines().next().unwrap();
    assert_eq!(
        first,
        format!(
            "     1\t{}... [line truncated, 5000 chars]",
            "z".repeat(2000)
        )
    );
    assert!(text.contains("     2\tshort"));
}

#[test]
fn multibyte_long_line_counts_characters() {
    let d = Dir::new();
    d.write("u.txt", "é".repeat(9000));
    let text = d
        .tool("read_file", &json!({"path": "u.txt"}))
        .ok()
        .to_string();
    assert!(
        text.ends_with("... [line truncated, 9000 chars]\n"),
        "{}",
        &text[text.len() - 60..]
    );
    assert!(!text.contains('\u{FFFD}'));
    assert!(!text.contains("not valid UTF-8"));
}

#[test]
fn binary_files_are_reported_not_dumped() {
    let d = Dir::new();
    d.write("blob.dat", b"abc\0\x01\x02def");
    assert_eq!(
        d.tool("read_file", &json!({"path": "blob.dat"})).ok(),
        "[binary file, 9 bytes]\n"
    );
    d.write("ctrl.txt", [1u8, 2, 3, 4, 5, 6, 7, b'a', b'b']);
    assert_eq!(
        d.tool("read_file", &json!({"path": "ctrl.txt"})).ok(),
        "[binary file, 9 bytes]\n"
    );
}

#[test]
fn images_become_image_parts() {
    let d = Dir::new();
    d.write("logo.png", b"\x89PNG\r\n\x1a\n....");
    let out = d.tool("read_file", &json!({"path": "logo.png"}));
    assert_eq!(out.ok(), "[binary file, 12 bytes]\n");
    assert!(out.stderr.contains("image/png"), "{}", out.stderr);
}

#[test]
fn invalid_utf8_is_decoded_lossily_with_a_notice() {
    let d = Dir::new();
    d.write("latin1.txt", b"caf\xe9\nok\n");
    let text = d
        .tool("read_file", &json!({"path": "latin1.txt"}))
        .ok()
        .to_string();
    assert!(
        text.starts_with("[note: the file is not valid UTF-8"),
        "{text}"
    );
    assert!(text.contains("     1\tcaf\u{FFFD}\n"));
}

#[test]
fn crlf_and_bom_are_not_shown() {
    let d = Dir::new();
    d.write("w.txt", b"\xEF\xBB\xBFone\r\ntwo\r\n");
    assert_eq!(
        d.tool("read_file", &json!({"path": "w.txt"})).ok(),
        "     1\tone\n     2\ttwo\n"
    );
}

#[test]
fn empty_file() {
    let d = Dir::new();
    d.write("e.txt", "");
    assert_eq!(
        d.tool("read_file", &json!({"path": "e.txt"})).ok(),
        "[empty file]\n"
    );
}

#[test]
fn offset_past_end_names_the_line_count() {
    let d = Dir::new();
    d.write("a.txt", numbered(7));
    let e = d.tool("read_file", &json!({"path": "a.txt", "offset": 50}));
    assert!(e.err().contains("it has 7 lines"), "{}", e.stdout);
}

#[test]
fn directory_suggests_list_directory() {
    let d = Dir::new();
    d.write("src/main.rs", "fn main() {}\n");
    let e = d.tool("read_file", &json!({"path": "src"}));
    assert!(e.err().contains("use list_directory"), "{}", e.stdout);
}

#[test]
fn missing_file_suggests_similar_paths() {
    let d = Dir::new();
    d.write("src/util.rs", "");
    d.write("src/main.rs", "");
    let e = d.tool("read_file", &json!({"path": "src/utils.rs"}));
    let text = e.err();
    assert!(text.starts_with("file not found: src/utils.rs"), "{text}");
    assert!(text.contains("did you mean: src/util.rs"), "{text}");
}

#[test]
fn large_file_footer_gives_size_instead_of_scanning_everything() {
    let d = Dir::new();
    let line = "0123456789".repeat(10);
    let content: String = (0..100_000).map(|_| format!("{line}\n")).collect();
    d.write("huge.log", &content);
    let text = d
        .tool("read_file", &json!({"path": "huge.log", "limit": 3}))
        .ok()
        .to_string();
    assert!(
        text.ends_with("[lines 1-3 of a 9.6 MB file; use offset=4 to continue]\n"),
        "{text}"
    );
}

#[test]
fn wrong_argument_types_name_the_field() {
    let d = Dir::new();
    d.write("a.txt", "x\n");
    let e = d.tool("read_file", &json!({"path": "a.txt", "limit": "10"}));
    assert_eq!(
        e.err(),
        "invalid arguments for read_file: field `limit` must be an integer, got string \"10\"\n"
    );
    let e = d.tool("read_file", &json!({}));
    assert_eq!(
        e.err(),
        "invalid arguments for read_file: missing required field `path`\n"
    );
}

#[test]
fn path_escapes_are_refused() {
    let d = Dir::new();
    let outside = Dir::new();
    outside.write("secret.txt", "top secret\n");
    std::os::unix::fs::symlink(outside.path(), d.path().join("link")).unwrap();
    std::fs::create_dir_all(d.path().join(".git")).unwrap();
    d.write(".git/config", "[core]\n");
    let abs = outside.path().join("secret.txt");
    for p in [
        "../secret.txt",
        abs.to_str().unwrap(),
        "link/secret.txt",
        ".git/config",
    ] {
        let e = d.tool("read_file", &json!({"path": p}));
        let text = e.err();
        assert!(text.starts_with("path escapes the project"), "{p}: {text}");
        assert!(!text.contains("top secret"));
    }
}

#[test]
fn offsets_in_crlf_files_and_after_a_last_line_without_newline() {
    let d = Dir::new();
    d.write("w.txt", b"\xEF\xBB\xBFone\r\ntwo\r\nthree\r\nfour");
    assert_eq!(
        d.tool(
            "read_file",
            &json!({"path": "w.txt", "offset": 2, "limit": 2})
        )
        .ok(),
        "     2\ttwo\n     3\tthree\n\n[lines 2-3 of 4; use offset=4 to continue]\n"
    );
    assert_eq!(
        d.tool("read_file", &json!({"path": "w.txt", "offset": 4}))
            .ok(),
        "     4\tfour\n\n[lines 4-4 of 4; end of file]\n"
    );
    let e = d.tool("read_file", &json!({"path": "w.txt", "offset": 5}));
    assert!(e.err().contains("it has 4 lines"), "{}", e.stdout);
    let e = d.tool("read_file", &json!({"path": "w.txt", "offset": 1_000_000}));
    assert!(e.err().contains("it has 4 lines"), "{}", e.stdout);
}

/// Lines of 16 bytes: line 16384 ends exactly at 256 KiB, read_file's block size, so the
/// page starts right after a block (and right before its end) in these calls.
fn sixteen_byte_lines(n: usize) -> String {
    (1..=n).map(|i| format!("line {i:010}\n")).collect()
}

#[test]
fn offsets_at_a_read_block_boundary() {
    let d = Dir::new();
    // Small enough to be counted whole (total known), and large enough not to be (size shown).
    for (lines, of_total) in [
        (20_000, "of 20000".to_string()),
        (600_000, "of a 9.2 MB file".to_string()),
    ] {
        d.write("b.log", sixteen_byte_lines(lines));
        for offset in [16_383u64, 16_384, 16_385, 16_386] {
            let out = d.tool(
                "read_file",
                &json!({"path": "b.log", "offset": offset, "limit": 2}),
            );
            assert_eq!(
                out.ok(),
                format!(
                    "{offset:>6}\tline {offset:010}\n{:>6}\tline {:010}\n\n[lines {offset}-{} \
                     {of_total}; use offset={} to continue]\n",
                    offset + 1,
                    offset + 1,
                    offset + 1,
                    offset + 2
                ),
                "{lines} lines, offset {offset}"
            );
        }
        let last = lines as u64;
        let out = d.tool("read_file", &json!({"path": "b.log", "offset": last}));
        assert_eq!(
            out.ok(),
            format!("{last:>6}\tline {last:010}\n\n[lines {last}-{last} of {last}; end of file]\n")
        );
        let e = d.tool("read_file", &json!({"path": "b.log", "offset": last + 1}));
        assert!(
            e.err().contains(&format!("it has {last} lines")),
            "{}",
            e.stdout
        );
    }
}

/// Only bash needs the user's config (its sandbox settings): the other tools start without
/// reading it, so a broken config cannot stop them (and costs them no start-up time).
#[test]
fn only_bash_reads_the_user_config() {
    let d = Dir::new();
    d.write("a.txt", "x\n");
    let config_home = Dir::new();
    config_home.write("versus/config.toml", "this is [not toml\n");
    let run = |name: &str, args: serde_json::Value| {
        util::versus()
            .env("XDG_CONFIG_HOME", config_home.path())
            .args(["tool", name, "--args", &args.to_string(), "--dir"])
            .arg(d.path())
            .output()
            .unwrap()
    };
    let read = run("read_file", json!({"path": "a.txt"}));
    assert!(read.status.success(), "{read:?}");
    assert_eq!(String::from_utf8_lossy(&read.stdout), "     1\tx\n");
    let bash = run("bash", json!({"command": "true"}));
    assert_eq!(bash.status.code(), Some(2), "{bash:?}");
    assert!(
        String::from_utf8_lossy(&bash.stderr).contains("config.toml"),
        "{bash:?}"
    );
}
