//! What a command may reach: the [`Sandbox`] of one workspace, built from the user's
//! [`SandboxSettings`] and the workspace's own folders.
//!
//! The filesystem a confined command sees is built from an allowlist, not a denylist: system
//! folders and toolchains read-only, the workspace read-write (or read-only), a private home
//! and temp folder, and nothing else. The user's project, their home folder, versus's own
//! state and the other models' workspaces are simply absent, so no path to them can be
//! guessed, listed or found in `/proc/self/mountinfo`. Secret places that happen to lie under
//! an allowed folder (a credentials file inside a toolchain folder, the user's own deny list)
//! are masked on top.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Whether versus confines commands at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SandboxMode {
    /// Every command runs in the sandbox; if it cannot start, commands are refused.
    #[default]
    On,
    /// Commands run unconfined (with the allowlisted environment); always shown as a warning.
    Off,
}

/// What a confined command may do with files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FsAccess {
    /// Write only the workspace and a private home and temp folder; read system folders and
    /// toolchains.
    #[default]
    ProjectOnly,
    /// Like `ProjectOnly`, but the workspace itself is read-only too.
    ReadOnly,
    /// The whole filesystem, read-write (still its own processes, environment and network
    /// setting); always shown as a warning.
    Unrestricted,
}

impl FsAccess {
    /// The name used in recipes and config.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ProjectOnly => "project_only",
            Self::ReadOnly => "read_only",
            Self::Unrestricted => "unrestricted",
        }
    }
}

/// The user's sandbox settings (`[sandbox]` in the user config, narrowed by a recipe's
/// `## Sandbox`). Only the user's own config file sets them: a project cannot weaken its own
/// sandbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SandboxSettings {
    /// `sandbox = "on" | "off"`.
    pub sandbox: SandboxMode,
    /// What commands may do with files.
    pub filesystem: FsAccess,
    /// Whether commands reach the network (`false`: a network namespace with only loopback).
    pub network: bool,
    /// Whether setup commands (`--setup "npm ci"`, a recipe's `setup:`) reach the network even
    /// when other commands do not: installing dependencies needs it, a model's bash does not.
    pub setup_network: bool,
    /// The bubblewrap program.
    pub program: PathBuf,
    /// Further folders commands may read (a shared cache, a toolchain outside PATH).
    pub read_only: Vec<PathBuf>,
    /// Further folders commands may write (a cache the user chooses to share).
    pub writable: Vec<PathBuf>,
    /// Further paths that stay hidden even when they lie under an allowed folder.
    pub deny: Vec<PathBuf>,
    /// Names of further environment variables passed to commands.
    pub env: Vec<String>,
    /// Most processes (threads included) one command may have at once; `0`: no limit. A fork
    /// bomb then stops here instead of taking every PID of the machine.
    pub max_processes: u32,
}

/// The default of [`SandboxSettings::max_processes`]: far above what builds and test runs use
/// (a parallel `cargo test` on many cores stays in the hundreds), far below a machine's PIDs.
pub const DEFAULT_MAX_PROCESSES: u32 = 2048;

impl Default for SandboxSettings {
    fn default() -> Self {
        Self {
            sandbox: SandboxMode::On,
            filesystem: FsAccess::ProjectOnly,
            network: false,
            setup_network: false,
            program: PathBuf::from("bwrap"),
            read_only: Vec::new(),
            writable: Vec::new(),
            deny: Vec::new(),
            env: Vec::new(),
            max_processes: DEFAULT_MAX_PROCESSES,
        }
    }
}

impl SandboxSettings {
    /// The settings of a setup command: these, with the network when `setup_network` says so.
    /// Model commands never get these settings, so they keep the network off.
    pub fn for_setup(&self) -> SandboxSettings {
        let mut settings = self.clone();
        settings.network = self.network || self.setup_network;
        settings
    }

    /// A sentence for the TUI header, `ask` output and reports when these settings weaken the
    /// sandbox; `None` when commands are fully confined.
    pub fn warning(&self) -> Option<String> {
        match (self.sandbox, self.filesystem) {
            (SandboxMode::Off, _) => Some(
                "sandbox is off: model commands run unconfined and can reach your files, \
                 processes and network (sandbox = \"off\" in your config)"
                    .to_string(),
            ),
            (SandboxMode::On, FsAccess::Unrestricted) => Some(
                "filesystem: unrestricted: model commands can read and write every file you \
                 can"
                .to_string(),
            ),
            _ => None,
        }
    }
}

/// The folders of one workspace that its commands use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspaceDirs {
    /// The workspace tree (its project root is where commands start).
    pub tree: PathBuf,
    /// Private home folder (`HOME`); `None`: an empty one inside the sandbox for each call.
    pub home: Option<PathBuf>,
    /// Private temp folder (`TMPDIR`); `None`: the sandbox's own `/tmp`.
    pub tmp: Option<PathBuf>,
    /// Folders commands may read but not write (the base repository's objects).
    pub read_only: Vec<PathBuf>,
    /// Paths that must stay invisible even when they lie under a mounted folder: the user's
    /// project and the folder holding every workspace.
    pub hidden: Vec<PathBuf>,
}

impl WorkspaceDirs {
    /// Just a tree, with per-call home and temp (`versus tool`, tests).
    pub fn tree_only(tree: impl Into<PathBuf>) -> Self {
        Self {
            tree: tree.into(),
            home: None,
            tmp: None,
            read_only: Vec::new(),
            hidden: Vec::new(),
        }
    }
}

/// How the commands of one workspace run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sandbox {
    pub(crate) kind: SandboxKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SandboxKind {
    /// In bubblewrap.
    Confined {
        settings: SandboxSettings,
        dirs: WorkspaceDirs,
    },
    /// Plain `bash -c` (`sandbox = "off"`), allowlisted environment.
    Unconfined {
        settings: SandboxSettings,
        dirs: WorkspaceDirs,
    },
    /// Commands are refused with this explanation.
    Refused(String),
}

impl Sandbox {
    /// The sandbox for a workspace under `settings`.
    pub fn new(settings: &SandboxSettings, dirs: WorkspaceDirs) -> Self {
        let kind = match settings.sandbox {
            SandboxMode::On => SandboxKind::Confined {
                settings: settings.clone(),
                dirs,
            },
            SandboxMode::Off => SandboxKind::Unconfined {
                settings: settings.clone(),
                dirs,
            },
        };
        Self { kind }
    }

    /// Default settings over a bare folder: what `versus tool` and unit tests use.
    pub fn for_dir(dir: &Path) -> Self {
        Self::new(&SandboxSettings::default(), WorkspaceDirs::tree_only(dir))
    }

    /// A sandbox that refuses every command with `reason` (overlay mode, where a command would
    /// run in the user's real project).
    pub fn refusing(reason: impl Into<String>) -> Self {
        Self {
            kind: SandboxKind::Refused(reason.into()),
        }
    }

    /// Whether commands run confined and without the network: then a command that failed
    /// with a network error failed because of it, and the user is told which switch opens it
    /// (see [`crate::exec::network_hint`]).
    pub fn without_network(&self) -> bool {
        matches!(&self.kind, SandboxKind::Confined { settings, .. } if !settings.network)
    }

    /// Whether commands run unconfined (for warnings).
    pub fn is_unconfined(&self) -> bool {
        matches!(self.kind, SandboxKind::Unconfined { .. })
    }

    /// The tree commands run in, when they can run at all.
    pub fn tree(&self) -> Option<&Path> {
        match &self.kind {
            SandboxKind::Confined { dirs, .. } | SandboxKind::Unconfined { dirs, .. } => {
                Some(&dirs.tree)
            }
            SandboxKind::Refused(_) => None,
        }
    }
}

/// Paths that never enter the sandbox even under an allowed folder: the usual homes of
/// credentials, relative to the user's home.
pub(crate) const SECRET_PLACES: &[&str] = &[
    ".ssh",
    ".aws",
    ".gnupg",
    ".config/gcloud",
    ".netrc",
    ".docker/config.json",
    ".config/versus",
    ".local/state/versus",
    ".git-credentials",
    ".config/gh",
    ".kube",
    ".azure",
    ".npmrc",
    ".pypirc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".gem/credentials",
    ".local/share/keyrings",
    ".password-store",
    ".config/rclone",
    ".config/github-copilot",
    ".config/hub",
    ".config/composer/auth.json",
    ".composer/auth.json",
    ".vault-token",
    ".pgpass",
    ".m2/settings.xml",
    ".m2/settings-security.xml",
    ".gradle/gradle.properties",
    ".mozilla",
    ".config/google-chrome",
    ".config/chromium",
];
