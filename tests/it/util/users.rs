//! Running the real binary as root and as an unprivileged user, so an attack is played under
//! both: the house rule is that a defence holds whoever runs versus.
//!
//! When the tests run as root, [`Who::Nobody`] runs the command through `setpriv --reuid=65534
//! --regid=65534 --clear-groups` (uid 65534 is `nobody` on every Linux); the folders the command
//! needs must then belong to that user ([`give_away`]). When the tests already run as an
//! ordinary user, both cases run as that user: there is no root to drop from.

use std::path::Path;
use std::process::Command;

/// The uid and gid `setpriv` switches to.
pub const NOBODY: u32 = 65534;

/// Who runs a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Who {
    /// Whoever runs the tests (root on CI machines and here).
    Me,
    /// uid/gid 65534 with no supplementary groups, when the tests run as root.
    Nobody,
}

impl Who {
    /// Both, in the order the tests play them.
    pub const BOTH: [Who; 2] = [Who::Me, Who::Nobody];

    /// A short name for messages.
    pub fn name(self) -> &'static str {
        match self {
            Who::Me => "as the test user",
            Who::Nobody => "as an unprivileged user",
        }
    }

    /// Whether this case really drops privileges here (tests run as root and setpriv exists).
    pub fn drops(self) -> bool {
        self == Who::Nobody && is_root() && setpriv_exists()
    }

    /// `program` as a command this user runs.
    pub fn command(self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        if self.drops() {
            let mut c = Command::new("setpriv");
            c.args([
                format!("--reuid={NOBODY}"),
                format!("--regid={NOBODY}"),
                "--clear-groups".to_string(),
                "--".to_string(),
            ]);
            c.arg(program);
            c
        } else {
            Command::new(program)
        }
    }

    /// The real versus binary run by this user, as `util::versus()` does.
    pub fn versus(self) -> Command {
        let mut c = self.command(env!("CARGO_BIN_EXE_versus"));
        c.env("NO_COLOR", "1");
        if self.drops() {
            // One it can enter, whatever TMPDIR the tests run with.
            c.env("TMPDIR", super::temp_root());
        } else {
            // The unprivileged user cannot write the shared one: tests give it its own.
            c.env("XDG_STATE_HOME", super::state_home())
                .env("TMPDIR", super::temp_home());
        }
        c
    }
}

/// Whether the tests run as root.
pub fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

fn setpriv_exists() -> bool {
    Command::new("setpriv")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Hands `dir` and everything under it to `who` (a no-op unless it drops privileges), so the
/// unprivileged run can use the folders a test prepared as root.
pub fn give_away(dir: &Path, who: Who) {
    if !who.drops() {
        return;
    }
    let status = Command::new("chown")
        .args(["-R", "-h", &format!("{NOBODY}:{NOBODY}")])
        .arg(dir)
        .status()
        .unwrap();
    assert!(status.success(), "chown -R {}", dir.display());
}

/// Where versus puts the workspaces of `who` when its `TMPDIR` is `tmpdir`: one private folder
/// per user (`versus-workspaces-<uid>`).
pub fn workspaces_parent(tmpdir: &Path, who: Who) -> std::path::PathBuf {
    let uid = if who.drops() {
        NOBODY
    } else {
        nix::unistd::geteuid().as_raw()
    };
    tmpdir.join(format!("versus-workspaces-{uid}"))
}
