//! What apply writes against what the review showed (issue 21, items 5 and 12), through the
//! real binary, as the test user and as an unprivileged one: a model's `chmod 4755` / `0666`
//! / `6777` is shown as git modes and applied as exactly those (0755 / 0644, never setuid,
//! setgid, sticky or writable by others), the user's own modes are kept and given back by
//! rewind; and links a model makes into `.git/` or `.versus/` (directly, through another
//! link, or through a link the repository ships) are refused, said so, and never made.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::output_safety::{Hostile, assert_inert, bash};
use crate::util::tree_state;
use crate::util::users::Who;

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path)
        .unwrap()
        .permissions()
        .mode()
        & 0o7777
}

fn is_link(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

#[test]
fn apply_writes_the_modes_review_shows_and_rewind_gives_back_the_users_own() {
    for who in Who::BOTH {
        let p = Hostile::new(
            who,
            &[
                ("script.sh", b"#!/bin/sh\necho hi\n", 0o644),
                ("other.txt", b"data\n", 0o644),
                ("private.sh", b"#!/bin/sh\necho secret\n", 0o700),
                ("odd.sh", b"#!/bin/sh\necho odd\n", 0o755),
            ],
        );
        // The user's own unusual mode (set after the project changed hands: chown clears it).
        std::fs::set_permissions(
            p.root.join("odd.sh"),
            std::fs::Permissions::from_mode(0o4750),
        )
        .unwrap();
        let model = p.script(
            "modes.jsonl",
            &[
                bash(
                    "chmod 4755 script.sh && chmod 0666 other.txt && echo more >> other.txt && \
                     printf '#!/bin/sh\\necho new\\n' > new.sh && chmod 6777 new.sh && \
                     echo edit >> private.sh && chmod 0777 private.sh && \
                     echo edit >> odd.sh && chmod 0777 odd.sh",
                ),
                serde_json::json!({"say": "Done."}),
            ],
        );
        let before = tree_state(&p.root);
        assert_eq!(before["odd.sh"].1, 0o4750);
        let out = p.versus(&["ask", "modes", "-m", &model, "--pick", &model]);
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "{}: {stdout}\n{}",
            who.name(),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_inert("ask stdout", &out.stdout);
        // What the review showed: git modes only.
        assert!(
            stdout
                .contains("diff --git a/script.sh b/script.sh\nold mode 100644\nnew mode 100755\n"),
            "{stdout}"
        );
        assert!(
            stdout.contains("diff --git a/new.sh b/new.sh\nnew file mode 100755\n"),
            "{stdout}"
        );
        assert!(
            stdout.contains("diff --git a/other.txt b/other.txt\n--- a/other.txt"),
            "no mode change shown for 0666: {stdout}"
        );
        for raw in ["4755", "6777", "0666", "100666", "104755"] {
            assert!(!stdout.contains(raw), "{raw} in {stdout}");
        }
        // What apply wrote: exactly that.
        assert_eq!(mode(&p.root.join("script.sh")), 0o755, "{}", who.name());
        assert_eq!(mode(&p.root.join("other.txt")), 0o644, "{}", who.name());
        assert_eq!(mode(&p.root.join("new.sh")), 0o755, "{}", who.name());
        // The user's own modes stay (the executable bit the review shows did not change).
        assert_eq!(mode(&p.root.join("private.sh")), 0o700, "{}", who.name());
        assert_eq!(mode(&p.root.join("odd.sh")), 0o4750, "{}", who.name());
        assert_eq!(
            std::fs::read_to_string(p.root.join("private.sh")).unwrap(),
            "#!/bin/sh\necho secret\nedit\n"
        );
        // Rewind gives back every byte and every mode, the user's unusual ones included.
        let rewind = p.versus(&["rewind", "--yes"]);
        assert!(rewind.status.success(), "{}: {rewind:?}", who.name());
        assert_eq!(tree_state(&p.root), before, "{}", who.name());
    }
}

#[test]
fn links_into_git_or_versus_folders_are_refused_whatever_leads_there() {
    for who in Who::BOTH {
        // A link the repository itself ships, pointing at its git folder.
        let p = Hostile::with_links(
            who,
            &[("src/main.rs", b"fn main() {}\n", 0o644)],
            &[("meta", ".git")],
        );
        let model = p.script(
            "links.jsonl",
            &[
                bash(
                    "ln -s .git/config cfg && ln -s .git/hooks hooks && ln -s ./.git gitdir && \
                     mkdir -p a && ln -s ../.versus/sessions a/state && \
                     ln -s cfg cfg2 && ln -s meta/hooks/pre-commit viameta && \
                     ln -s gitdir/HEAD twohops && ln -s src srclink && \
                     echo '// edit' >> src/main.rs",
                ),
                serde_json::json!({"say": "Linked."}),
            ],
        );
        let git_before = tree_state(&p.root.join(".git"));
        let out = p.versus(&["ask", "links", "-m", &model, "--pick", &model]);
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "{}: {stdout}\n{}",
            who.name(),
            String::from_utf8_lossy(&out.stderr)
        );
        // The plain link and the edit are applied.
        assert!(is_link(&p.root.join("srclink")), "{stdout}");
        assert!(
            std::fs::read_to_string(p.root.join("src/main.rs"))
                .unwrap()
                .ends_with("// edit\n")
        );
        // None of the others exists, and each refusal is said, by name.
        for (name, why) in [
            ("cfg", "a git folder"),
            ("hooks", "a git folder"),
            ("gitdir", "a git folder"),
            ("a/state", "versus's own state folder"),
            ("cfg2", "a git folder"),
            ("viameta", "a git folder"),
            ("twohops", "a git folder"),
        ] {
            assert!(
                !is_link(&p.root.join(name)),
                "{}: {name} was made",
                who.name()
            );
            let said = stdout
                .lines()
                .find(|l| l.starts_with(&format!("  {name}: not written: symlink {name} -> ")))
                .unwrap_or_else(|| panic!("{}: no refusal of {name} in {stdout}", who.name()));
            assert!(said.contains(why), "{name}: {said}");
        }
        // The review said so before apply, for the links it can judge from their text.
        for name in ["cfg", "hooks", "gitdir", "a/state"] {
            assert!(
                stdout.contains(&format!("{name} -> ")),
                "{name} shown as a link: {stdout}"
            );
        }
        assert!(
            stdout.contains(
                "  apply will not make this link: its target goes into a git folder (.git)"
            )
        );
        assert_eq!(
            tree_state(&p.root.join(".git")).get("config"),
            git_before.get("config")
        );
    }
}
