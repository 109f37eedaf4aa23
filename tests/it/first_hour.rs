//! What a new user meets in the first hour, through the binary (issue 22): warnings for
//! skipped models from `versus run` as from `versus ask`, nothing created by an `ask` that
//! cannot start, exit codes, and the hints `ask` gives.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::util::users::{Who, give_away};
use crate::util::{self, git, versus_without_keys, versus_without_keys_as};

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// An empty git repository with one commit, and a home with no config in it.
fn repository() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = util::tempdir();
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
    assert!(
        !root.join(".versus").exists(),
        "a run that cannot start creates nothing"
    );
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

/// A listener on the host's loopback: bwrap's own network namespace has a loopback of its
/// own, so only a command with the host's network reaches it.
fn host_listener() -> (std::net::TcpListener, u16) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    (listener, port)
}

/// How many connections reached `listener` (the kernel queues them until accepted).
fn connections(listener: &std::net::TcpListener) -> usize {
    let mut n = 0;
    while listener.accept().is_ok() {
        n += 1;
    }
    n
}

/// A project whose demo model tries the host's loopback from its bash and writes down whether
/// it got there.
fn network_project(port: u16) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let (tmp, root, home) = repository();
    std::fs::write(root.join(".gitignore"), "scripts/\n").unwrap();
    std::fs::create_dir_all(root.join("scripts")).unwrap();
    let command = format!(
        "if (exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null; then echo reached; else echo no-network; fi > net.txt"
    );
    let script = format!(
        "{}\n{{\"say\": \"done\"}}\n",
        serde_json::json!({"tools": [{"name": "bash", "args": {"command": command}}]})
    );
    std::fs::write(root.join("scripts/net.jsonl"), script).unwrap();
    (tmp, root, home)
}

fn ask_with_setup(who: Who, root: &Path, home: &Path, setup: &str, extra: &[&str]) -> Output {
    versus_without_keys_as(who, home)
        .arg("-C")
        .arg(root)
        .args(["ask", "x", "-m", "demo/scripts/net.jsonl", "--setup", setup])
        .args(extra)
        .output()
        .unwrap()
}

/// Played as root and as an unprivileged user: the switch gives the setup command (and only
/// it) the host's network whoever runs versus.
#[test]
fn setup_network_gives_the_setup_command_the_hosts_network_and_the_model_none() {
    for who in Who::BOTH {
        let (listener, port) = host_listener();
        let (tmp, root, home) = network_project(port);
        let setup = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo hello >&3");
        // Its own state and temp folders exist before the folder is handed over.
        drop(versus_without_keys_as(who, &home));
        give_away(tmp.path(), who);

        let closed = ask_with_setup(who, &root, &home, &setup, &[]);
        let (stdout, stderr) = text(&closed);
        assert!(
            stdout.contains("the setup command") && stdout.contains("failed"),
            "{}: {stdout}\n{stderr}",
            who.name()
        );
        assert_eq!(
            connections(&listener),
            0,
            "{}: no network without the switch",
            who.name()
        );

        let open = ask_with_setup(who, &root, &home, &setup, &["--setup-network"]);
        let (stdout, stderr) = text(&open);
        assert_eq!(
            open.status.code(),
            Some(0),
            "{}: {stdout}\n{stderr}",
            who.name()
        );
        assert_eq!(
            connections(&listener),
            1,
            "{}: the setup command (and only it) reached the host: {stdout}",
            who.name()
        );
        assert!(
            stdout.contains("+no-network"),
            "{}: the model's bash had none: {stdout}",
            who.name()
        );
    }
}

#[test]
fn a_network_failure_without_the_network_names_the_switch() {
    let (_tmp, root, home) = network_project(9);
    let out = ask_with_setup(
        Who::Me,
        &root,
        &home,
        "exec 3<>/dev/tcp/versus-test.invalid/80",
        &[],
    );
    let (stdout, stderr) = text(&out);
    assert!(
        stdout.contains("looks like a network failure") && stdout.contains("--setup-network"),
        "{stdout}\n{stderr}"
    );
    // Any other failure of a setup command says nothing of the network.
    let other = ask_with_setup(Who::Me, &root, &home, "echo broken >&2; exit 3", &[]);
    let (stdout, _) = text(&other);
    assert!(stdout.contains("exit code 3"), "{stdout}");
    assert!(!stdout.contains("network"), "{stdout}");

    // A model's bash is told too, above its exit status.
    let tool = util::versus()
        .args(["tool", "bash", "--dir"])
        .arg(&root)
        .arg("--args")
        .arg(r#"{"command": "exec 3<>/dev/tcp/versus-test.invalid/80"}"#)
        .output()
        .unwrap();
    let (stdout, _) = text(&tool);
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(
        lines.last().unwrap().starts_with("[exit code: "),
        "{stdout}"
    );
    assert!(
        lines[lines.len() - 2].contains("model commands run without the network"),
        "{stdout}"
    );
}

#[test]
fn a_recipe_gives_its_setup_the_network_only_once_trusted_and_run_has_the_flag_too() {
    let (listener, port) = host_listener();
    let (_tmp, root, home) = network_project(port);
    let recipe = |sandbox: &str| {
        format!(
            "# Net\nversion: 1\n\n## Models\n- demo/scripts/net.jsonl\n\n## Workspace\n\
             setup: exec 3<>/dev/tcp/127.0.0.1/{port}\n\n## Sandbox\n{sandbox}\n\n## Tasks\n- go\n\n\
             ## Success Criteria\n- run: grep -qx no-network net.txt\n"
        )
    };
    std::fs::write(root.join("loose.recipe.md"), recipe("setup_network: true")).unwrap();
    std::fs::write(root.join("plain.recipe.md"), recipe("network: fetch_only")).unwrap();
    let run = |args: &[&str]| {
        versus_without_keys(&home)
            .current_dir(&root)
            .arg("run")
            .args(args)
            .output()
            .unwrap()
    };

    let refused = run(&["loose.recipe.md", "--out", "refused"]);
    let (_, stderr) = text(&refused);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("`setup_network: true`") && stderr.contains("versus trust"),
        "{stderr}"
    );
    assert!(!root.join("refused").exists());

    let trusted = run(&["--trust", "loose.recipe.md", "--out", "trusted"]);
    let (stdout, stderr) = text(&trusted);
    assert_eq!(trusted.status.code(), Some(0), "{stdout}\n{stderr}");
    assert_eq!(connections(&listener), 1, "{stdout}");

    let flag = run(&["plain.recipe.md", "--out", "flag", "--setup-network"]);
    let (stdout, stderr) = text(&flag);
    assert_eq!(flag.status.code(), Some(0), "{stdout}\n{stderr}");
    assert_eq!(connections(&listener), 1, "{stdout}");

    let closed = run(&["plain.recipe.md", "--out", "closed"]);
    assert_ne!(closed.status.code(), Some(0), "{:?}", text(&closed));
    assert_eq!(connections(&listener), 0);
}

#[test]
fn ask_exits_1_when_every_model_failed_and_0_when_one_did_its_work() {
    let (_tmp, root, home) = repository();
    std::fs::write(root.join(".gitignore"), "scripts/\n").unwrap();
    std::fs::create_dir_all(root.join("scripts")).unwrap();
    std::fs::write(
        root.join("scripts/broken.jsonl"),
        "{\"error\": \"the provider is down\"}\n",
    )
    .unwrap();
    std::fs::write(
        root.join("scripts/fine.jsonl"),
        "{\"say\": \"All good.\"}\n",
    )
    .unwrap();
    let ask = |models: &[&str]| {
        let mut c = versus_without_keys(&home);
        c.arg("-C").arg(&root).args(["ask", "x"]);
        for m in models {
            c.args(["-m", m]);
        }
        c.output().unwrap()
    };
    let failed = ask(&["demo/scripts/broken.jsonl", "demo/scripts/broken.jsonl#2"]);
    let (stdout, stderr) = text(&failed);
    assert_eq!(failed.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stderr.contains("every model failed"), "{stderr}");
    assert!(stdout.contains("the provider is down"), "{stdout}");

    let one_fine = ask(&["demo/scripts/broken.jsonl", "demo/scripts/fine.jsonl"]);
    let (stdout, stderr) = text(&one_fine);
    assert_eq!(one_fine.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(!stderr.contains("every model failed"), "{stderr}");
}

/// A repository with demo scripts: `writer` adds a file, `fine` only answers.
fn scripted_repository() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let (tmp, root, home) = repository();
    std::fs::write(root.join(".gitignore"), "scripts/\n").unwrap();
    std::fs::create_dir_all(root.join("scripts")).unwrap();
    std::fs::write(
        root.join("scripts/writer.jsonl"),
        "{\"tools\": [{\"name\": \"write_file\", \"args\": {\"path\": \"new.txt\", \"content\": \"new\\n\"}}]}\n{\"say\": \"Added.\"}\n",
    )
    .unwrap();
    std::fs::write(
        root.join("scripts/fine.jsonl"),
        "{\"say\": \"All good.\"}\n",
    )
    .unwrap();
    (tmp, root, home)
}

#[test]
fn rewind_says_nothing_was_ever_applied_apart_from_already_undone() {
    let (_tmp, root, home) = scripted_repository();
    let versus = |args: &[&str]| {
        versus_without_keys(&home)
            .arg("-C")
            .arg(&root)
            .args(args)
            .output()
            .unwrap()
    };
    let asked = versus(&["ask", "x", "-m", "demo/scripts/writer.jsonl"]);
    assert_eq!(asked.status.code(), Some(0), "{:?}", text(&asked));
    let never = versus(&["rewind", "--yes"]);
    let (stdout, stderr) = text(&never);
    assert_eq!(never.status.code(), Some(0));
    assert!(
        stderr.contains("versus has not applied anything in this project"),
        "{stdout}\n{stderr}"
    );
    assert!(!stderr.contains("already undone"), "{stderr}");
    let session = std::fs::read_dir(root.join(".versus/sessions"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .file_name()
        .to_string_lossy()
        .into_owned();
    let named = versus(&["rewind", "--yes", "--session", &session]);
    assert!(
        text(&named)
            .1
            .contains(&format!("nothing was ever applied in session {session}")),
        "{:?}",
        text(&named)
    );

    let picked = versus(&[
        "ask",
        "x",
        "-m",
        "demo/scripts/writer.jsonl",
        "--pick",
        "demo/scripts/writer.jsonl",
    ]);
    assert_eq!(picked.status.code(), Some(0), "{:?}", text(&picked));
    assert!(root.join("new.txt").exists());
    let undone = versus(&["rewind", "--yes"]);
    assert_eq!(undone.status.code(), Some(0), "{:?}", text(&undone));
    assert!(!root.join("new.txt").exists());
    let again = versus(&["rewind", "--yes"]);
    let (_, stderr) = text(&again);
    assert!(stderr.contains("already undone"), "{stderr}");
    assert!(!stderr.contains("not applied anything"), "{stderr}");
}

#[test]
fn stats_counts_what_its_footer_says_in_sentences_without_holes() {
    let (_tmp, root, home) = scripted_repository();
    std::fs::write(
        root.join("one.recipe.md"),
        "# One\nversion: 1\n\n## Models\n- demo/scripts/fine.jsonl\n\n## Tasks\n- go\n\n## Success Criteria\n- no_errors\n",
    )
    .unwrap();
    let ran = versus_without_keys(&home)
        .current_dir(&root)
        .args(["run", "one.recipe.md", "-q"])
        .output()
        .unwrap();
    assert_eq!(ran.status.code(), Some(0), "{:?}", text(&ran));
    let stats = versus_without_keys(&home)
        .current_dir(&root)
        .arg("stats")
        .output()
        .unwrap();
    let (stdout, stderr) = text(&stats);
    assert_eq!(stats.status.code(), Some(0), "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(
        lines[0].starts_with("model") && lines[0].contains("compared"),
        "{stdout}"
    );
    assert!(!lines[0].contains("choices"), "{stdout}");
    let row = lines
        .iter()
        .find(|l| l.starts_with("demo/scripts/fine.jsonl"))
        .expect(&stdout);
    let compared: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(compared[1], "1", "{row}");
    assert!(
        stdout.contains("From 0 interactive choices and 1 headless task in 1 report; `compared` counts those a model took part in."),
        "{stdout}"
    );
    // Every sentence under the table (up to the recipes' tables) is whole: no run of spaces.
    let prose = lines
        .iter()
        .skip_while(|l| !l.is_empty())
        .skip(1)
        .take_while(|l| !l.is_empty());
    for line in prose {
        assert!(!line.trim().contains("  "), "{line:?}\n{stdout}");
    }
}

#[test]
fn the_mode_without_a_copy_is_called_in_memory_and_overlay_still_works_with_a_note() {
    let (_tmp, root, home) = scripted_repository();
    let help = versus_without_keys(&home)
        .args(["ask", "--help"])
        .output()
        .unwrap();
    let (help, _) = text(&help);
    assert!(help.contains("in-memory"), "{help}");
    assert!(help.contains("copy-on-write"), "{help}");
    assert!(!help.contains("overlay"), "{help}");

    let ask = |mode: &str| {
        versus_without_keys(&home)
            .arg("-C")
            .arg(&root)
            .args([
                "ask",
                "x",
                "-m",
                "demo/scripts/fine.jsonl",
                "--isolation",
                mode,
            ])
            .output()
            .unwrap()
    };
    let in_memory = ask("in-memory");
    let (stdout, stderr) = text(&in_memory);
    assert_eq!(in_memory.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("in-memory isolation: model commands"),
        "{stderr}"
    );
    assert!(!stderr.contains("overlay"), "{stderr}");
    let old = ask("overlay");
    let (stdout, stderr) = text(&old);
    assert_eq!(old.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("`--isolation overlay` is now called `--isolation in-memory`"),
        "{stderr}"
    );

    // A recipe says `in_memory`, and one written with the old name still reads.
    std::fs::write(
        root.join("old.recipe.md"),
        "# Old\nversion: 1\n\n## Workspace\nisolation: overlay\nsetup: true\n\n## Tasks\n- go\n",
    )
    .unwrap();
    let run = versus_without_keys(&home)
        .current_dir(&root)
        .args(["run", "old.recipe.md", "-m", "demo/scripts/fine.jsonl"])
        .output()
        .unwrap();
    let (_, stderr) = text(&run);
    assert_eq!(run.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("`isolation: in_memory` keeps"), "{stderr}");
}

#[test]
fn build_output_in_a_project_that_does_not_ignore_it_is_named_once_with_the_fix() {
    let (_tmp, root, home) = repository();
    // The scripts are ignored through git's own exclude file: the project has no .gitignore.
    std::fs::write(root.join(".git/info/exclude"), "scripts/\n").unwrap();
    std::fs::create_dir_all(root.join("scripts")).unwrap();
    let build = "mkdir -p target/debug && for i in $(seq 1 15); do echo $i > target/debug/f$i.o; done && echo 'fn main() {}' > main.rs";
    std::fs::write(
        root.join("scripts/builder.jsonl"),
        format!(
            "{}\n{{\"say\": \"Built.\"}}\n",
            serde_json::json!({"tools": [{"name": "bash", "args": {"command": build}}]})
        ),
    )
    .unwrap();
    let ask = || {
        versus_without_keys(&home)
            .arg("-C")
            .arg(&root)
            .args(["ask", "x", "-m", "demo/scripts/builder.jsonl"])
            .output()
            .unwrap()
    };
    let out = ask();
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let hint = "15 of the changed files are under `target/`, build output the project does not ignore: add `target/` to .gitignore";
    assert_eq!(stdout.matches(hint).count(), 1, "{stdout}");

    // The same run from a recipe says it in the report and its summary.
    std::fs::write(
        root.join("scripts/build.recipe.md"),
        "# Build\nversion: 1\n\n## Models\n- demo/builder.jsonl\n\n## Tasks\n- go\n",
    )
    .unwrap();
    let run = versus_without_keys(&home)
        .current_dir(&root)
        .args([
            "run",
            "scripts/build.recipe.md",
            "--out",
            "scripts/out",
            "-q",
        ])
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(0), "{:?}", text(&run));
    let summary = std::fs::read_to_string(root.join("scripts/out/summary.md")).unwrap();
    assert!(
        summary.contains("Build output proposed") && summary.contains(hint),
        "{summary}"
    );
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root.join("scripts/out/report.json")).unwrap())
            .unwrap();
    let said = report["tasks"][0]["runs"][0]["change_set"]["build_output"][0]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(said.starts_with("15 of the changed files"), "{report:#}");

    // Once the project ignores it, it is neither proposed nor mentioned.
    std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
    let ignored = ask();
    let (stdout, _) = text(&ignored);
    assert!(!stdout.contains("build output"), "{stdout}");
    assert!(!stdout.contains("target/debug"), "{stdout}");
    assert!(stdout.contains("main.rs"), "{stdout}");
}

#[test]
fn the_readme_says_how_long_the_first_build_takes_where_it_gives_the_command() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let at = readme
        .find("cargo run --release")
        .expect("the README gives the build command");
    let after: String = readme[at..].lines().take(8).collect::<Vec<_>>().join(" ");
    assert!(
        after.contains("about ten minutes on a 2-core machine"),
        "{after}"
    );
    // The README's own examples are what the binary accepts.
    for flag in ["--setup-network", "in-memory"] {
        assert!(readme.contains(flag), "{flag}");
    }
    let help = util::versus().args(["ask", "--help"]).output().unwrap();
    let (help, _) = text(&help);
    assert!(
        help.contains("--setup-network") && help.contains("in-memory"),
        "{help}"
    );
}

#[test]
fn a_criterion_that_failed_for_want_of_the_network_names_the_switch() {
    let (_tmp, root, home) = scripted_repository();
    std::fs::write(
        root.join("scripts/net.recipe.md"),
        "# Net criteria\nversion: 1\n\n## Models\n- demo/fine.jsonl\n\n## Tasks\n- go\n\n\
         ## Success Criteria\n- run: exec 3<>/dev/tcp/versus-test.invalid/80\n- run: exit 3\n",
    )
    .unwrap();
    let run = versus_without_keys(&home)
        .current_dir(&root)
        .args(["run", "scripts/net.recipe.md", "--out", "scripts/out", "-q"])
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(1), "{:?}", text(&run));
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root.join("scripts/out/report.json")).unwrap())
            .unwrap();
    let criteria = report["tasks"][0]["runs"][0]["criteria"]
        .as_array()
        .unwrap();
    let detail = |i: usize| {
        criteria[i]["detail"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    assert!(
        detail(0).contains("check and criteria commands run without the network")
            && detail(0).contains("network: full"),
        "{report:#}"
    );
    assert!(!detail(1).contains("network"), "{report:#}");
}
