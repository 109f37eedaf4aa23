//! The bash allowlist against a corpus of bypass attempts, through the real binary, with only
//! `cargo test` allowed. `cargo` on PATH is a fake that records its arguments, so the test sees
//! exactly which lines ran it; every payload tries to create `PWNED`, which must never appear.
//! The allowlist is a policy (docs/sandbox.md): the sandbox is still the boundary.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util;

use std::os::unix::fs::PermissionsExt;

use serde_json::json;
use util::{Dir, ToolRun, versus};

/// (command line, allowed?)
const CORPUS: &[(&str, bool)] = &[
    // Separators.
    ("cargo test; touch PWNED", false),
    ("cargo test;touch PWNED", false),
    ("cargo test && touch PWNED", false),
    ("cargo test&&touch PWNED", false),
    ("cargo test || touch PWNED", false),
    ("cargo test | touch PWNED", false),
    ("cargo test |& touch PWNED", false),
    ("cargo test & touch PWNED", false),
    ("cargo test & disown; touch PWNED", false),
    ("cargo test\ntouch PWNED", false),
    ("cargo test # note\ntouch PWNED", false),
    ("cargo test 'x' ; touch PWNED", false),
    ("cargo test \";\" ; touch PWNED", false),
    ("cargo test\ttest; touch PWNED", false),
    ("cargo test 1>&2; touch PWNED", false),
    ("cargo test --manifest-path=x; touch PWNED", false),
    // Substitutions.
    ("cargo test $(touch PWNED)", false),
    ("cargo test `touch PWNED`", false),
    ("cargo test \"$(touch PWNED)\"", false),
    ("cargo test \"`touch PWNED`\"", false),
    ("cargo test \"a\"$(touch PWNED)", false),
    ("cargo test <(touch PWNED)", false),
    ("cargo test >(touch PWNED)", false),
    // Expansions, arithmetic included (the findings of the issue first).
    ("cargo test '$(touch PWNED)'; cargo test ${_@P}", false),
    ("cargo test 'a[$(touch PWNED)]'; cargo test ${PWD:_}", false),
    (
        "cargo test 'a[$(touch PWNED)]'; cargo test ${PWD::_}",
        false,
    ),
    (
        "cargo test 'a[$(touch PWNED)]'; cargo test ${PWD:-x}${PWD:_}",
        false,
    ),
    ("cargo test $((1+1))", false),
    ("cargo test $[1+1]", false),
    ("cargo test $HOME", false),
    ("cargo test ${HOME}", false),
    ("cargo test \"$HOME\"", false),
    ("cargo test $_", false),
    ("cargo test $0", false),
    ("cargo test $@", false),
    ("cargo test $*", false),
    ("cargo test $#", false),
    ("cargo test ${!x}", false),
    ("cargo test ${x@P}", false),
    ("cargo test $\"x\"", false),
    ("cargo test a${x}", false),
    ("cargo test ${IFS}touch", false),
    ("cargo test \"${x:-$(touch PWNED)}\"", false),
    // Options that run programs.
    (
        "cargo test --config 'build.rustc-wrapper=\"./evil\"'",
        false,
    ),
    ("cargo test --config=build.rustc-wrapper=./evil", false),
    ("cargo test '--config' x", false),
    ("cargo test \"--config\" x", false),
    ("cargo test -Zunstable-options", false),
    ("cargo test -Z build-std", false),
    ("cargo test -- -c", false),
    ("cargo test -c", false),
    ("cargo test --exec-path=x", false),
    // Environment prefixes and other commands in front.
    ("RUSTC_WRAPPER=./evil cargo test", false),
    ("env RUSTC_WRAPPER=./evil cargo test", false),
    ("FOO=1 cargo test", false),
    ("eval 'touch PWNED'", false),
    ("exec touch PWNED", false),
    ("time touch PWNED", false),
    ("! touch PWNED", false),
    ("coproc touch PWNED", false),
    ("sh -c 'touch PWNED'", false),
    ("bash -c 'touch PWNED'", false),
    ("touch PWNED", false),
    // Grouping, functions, compound commands.
    ("(touch PWNED)", false),
    ("cargo test; (touch PWNED)", false),
    ("cargo() { touch PWNED; }; cargo test", false),
    ("{ touch PWNED; }", false),
    ("if true; then touch PWNED; fi", false),
    // Redirections.
    ("cargo test > PWNED", false),
    ("cargo test >> PWNED", false),
    ("cargo test 2> PWNED", false),
    ("cargo test &> PWNED", false),
    ("cargo test >| PWNED", false),
    ("cargo test <> PWNED", false),
    ("cargo test < /etc/passwd", false),
    ("cargo test <<EOF\nx\nEOF", false),
    ("cargo test <<< x", false),
    // Near misses of the prefix and quoting tricks.
    ("cargo testx", false),
    ("cargo tes", false),
    ("cargo", false),
    ("cargo +nightly test", false),
    ("'cargo' test; touch PWNED", false),
    ("c\\argo test", false),
    // Allowed: the prefix, quoted arguments, descriptor duplication, /dev/null, literals.
    ("cargo test", true),
    ("cargo test -p a", true),
    ("cargo test -- --nocapture", true),
    ("cargo test 'a b'", true),
    ("cargo test \"a;b\"", true),
    ("cargo test 2>&1", true),
    ("cargo test > /dev/null", true),
    ("cargo test && cargo test", true),
    ("cargo test $'\\x3b'", true),
    ("cargo test \\\ntouch PWNED", true),
    ("cargo test 'cost $5'", true),
    ("cargo test a$", true),
    ("cargo test '${HOME}'", true),
];

fn calls(d: &Dir) -> usize {
    std::fs::read_to_string(d.path().join(".fake-cargo.log"))
        .map(|t| t.lines().count())
        .unwrap_or(0)
}

#[test]
fn the_bypass_corpus_is_refused_and_allowed_lines_run_only_cargo() {
    assert!(CORPUS.len() >= 80, "{} cases", CORPUS.len());
    // The fake cargo lives outside /tmp (the sandbox gives commands a fresh /tmp) and is
    // mounted read-only as a PATH entry.
    let bin = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let cargo = bin.path().join("cargo");
    std::fs::write(
        &cargo,
        "#!/bin/sh\nprintf 'cargo %s\\n' \"$*\" >> .fake-cargo.log\n",
    )
    .unwrap();
    std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let d = Dir::new();
    for &(line, allowed) in CORPUS {
        let before = calls(&d);
        let out = versus()
            .env("PATH", &path)
            .args(["tool", "bash", "--dir"])
            .arg(d.path())
            .args(["--bash-allow", "cargo test", "--args"])
            .arg(json!({"command": line, "timeout_secs": 10}).to_string())
            .output()
            .unwrap();
        let run = ToolRun::from(out);
        assert!(!d.exists("PWNED"), "{line:?} created PWNED: {run:?}");
        if allowed {
            let text = run.ok();
            assert!(!text.contains("refused"), "{line:?}: {text}");
            assert!(calls(&d) > before, "{line:?} did not run cargo: {text}");
        } else {
            let text = run.err();
            assert!(
                text.contains("refused by the allowlist"),
                "{line:?}: {text}"
            );
            assert_eq!(calls(&d), before, "{line:?} ran cargo although refused");
        }
    }
}
