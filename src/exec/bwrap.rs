//! The bubblewrap command line for a confined command.
//!
//! Namespaces: user (no real privileges inside), mount (the filesystem below), PID (the command
//! sees only its own processes, so no `/proc/<versus>/environ`; when it ends every process it
//! started dies, `setsid` or not), IPC, UTS, cgroup, and network unless the settings allow it
//! (then only loopback exists). `--die-with-parent` kills the sandbox if versus itself dies,
//! even by SIGKILL; `--new-session` keeps the command from typing into the user's terminal.
//!
//! Filesystem, in mount order (later mounts lie on top):
//! 1. system folders read-only (`/usr`, `/etc`, `/opt`, ...; merged-usr symlinks recreated);
//! 2. toolchains read-only: every absolute PATH entry (one under the home folder brings its
//!    top folder, `~/.cargo` for `~/.cargo/bin`), the toolchain homes, the user's extra
//!    read-only folders; then the user's writable folders;
//! 3. masks: protected paths (the project, the workspaces' parent) and secret places that lie
//!    under something mounted above become empty;
//! 4. fresh `/dev`, `/proc`, `/tmp`;
//! 5. the workspace: its tree read-write (read-only for `filesystem: read_only`), its private
//!    home and temp folders, the base repository's objects read-only.
//!
//! Candidates for step 2 that contain or lie inside a protected path are skipped, so a PATH
//! entry inside the project cannot bring the project in.

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

use super::sandbox::{FsAccess, SECRET_PLACES, SandboxSettings, WorkspaceDirs};

/// Top-level system folders mounted read-only when they exist.
const SYSTEM: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/nix",
];

/// Variables whose value is a toolchain folder to mount read-only.
const TOOLCHAIN_VARS: &[&str] = &[
    "CARGO_HOME",
    "RUSTUP_HOME",
    "PYENV_ROOT",
    "NVM_DIR",
    "GOROOT",
    "JAVA_HOME",
];

/// Where a confined command's home and temp folder are when the workspace has none of its own.
pub(crate) const EPHEMERAL_HOME: &str = "/tmp/home";

/// Everything the bubblewrap line depends on besides the settings and the workspace.
pub(crate) struct Host {
    /// The user's home folder.
    pub home: Option<PathBuf>,
    /// Absolute PATH entries.
    pub path: Vec<PathBuf>,
    /// Toolchain folders named by variables.
    pub toolchains: Vec<PathBuf>,
}

impl Host {
    /// Reads versus's environment.
    pub(crate) fn current() -> Self {
        let home = super::env::host_home();
        let path = std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).collect())
            .unwrap_or_default();
        let mut toolchains: Vec<PathBuf> = TOOLCHAIN_VARS
            .iter()
            .filter_map(std::env::var_os)
            .map(PathBuf::from)
            .collect();
        if let Some(home) = &home {
            for default in [".cargo", ".rustup"] {
                toolchains.push(home.join(default));
            }
        }
        Self {
            home,
            path,
            toolchains,
        }
    }
}

/// The arguments of `bwrap` (without the program) that run `bash -c script` in `cwd`.
pub(crate) fn arguments(
    settings: &SandboxSettings,
    dirs: &WorkspaceDirs,
    host: &Host,
    cwd: &Path,
    script: &str,
) -> Vec<OsString> {
    let protected = dirs.hidden.as_slice();
    let mut a = Args::default();
    a.flag("--die-with-parent");
    a.flag("--new-session");
    a.flag("--unshare-user");
    a.flag("--unshare-pid");
    a.flag("--unshare-ipc");
    a.flag("--unshare-uts");
    a.flag("--unshare-cgroup-try");
    if !settings.network {
        a.flag("--unshare-net");
    }
    a.pair("--hostname", "versus-sandbox");

    let mut mounted: Vec<PathBuf> = Vec::new();
    if settings.filesystem == FsAccess::Unrestricted {
        a.triple("--bind", "/", "/");
        a.pair("--dev", "/dev");
        a.pair("--proc", "/proc");
    } else {
        for dir in SYSTEM {
            let path = Path::new(dir);
            match std::fs::symlink_metadata(path) {
                Ok(meta) if meta.file_type().is_symlink() => {
                    if let Ok(target) = std::fs::read_link(path) {
                        a.triple("--symlink", target, path);
                    }
                }
                Ok(meta) if meta.is_dir() => {
                    // A protected path below a system folder is masked in step 3.
                    a.triple("--ro-bind", path, path);
                    mounted.push(path.to_path_buf());
                }
                _ => {}
            }
        }
        // Before the folders below: a fresh /tmp mounted after them would hide any of them
        // that lies under /tmp (a user's shared cache, a toolchain unpacked there).
        a.pair("--dev", "/dev");
        a.pair("--proc", "/proc");
        a.pair("--tmpfs", "/tmp");
        for candidate in toolchain_folders(host) {
            mount_outside(&mut a, &mut mounted, "--ro-bind", candidate, protected);
        }
        let home = host.home.as_deref();
        for extra in &settings.read_only {
            mount_outside(
                &mut a,
                &mut mounted,
                "--ro-bind",
                expand_home(extra, home),
                protected,
            );
        }
        for extra in &settings.writable {
            mount_outside(
                &mut a,
                &mut mounted,
                "--bind",
                expand_home(extra, home),
                protected,
            );
        }
        if settings.network {
            // /etc/resolv.conf often links into /run, which is otherwise not mounted.
            if let Ok(resolv) = std::fs::canonicalize("/etc/resolv.conf")
                && let Some(dir) = resolv.parent()
                && !mounted.iter().any(|m| dir.starts_with(m))
            {
                mount_outside(&mut a, &mut mounted, "--ro-bind", dir.into(), protected);
            }
        }
        let secrets = host
            .home
            .iter()
            .flat_map(|home| SECRET_PLACES.iter().map(move |rel| home.join(rel)));
        for hidden in protected
            .iter()
            .cloned()
            .chain(secrets)
            .chain(settings.deny.iter().map(|p| expand_home(p, home)))
        {
            if !mounted.iter().any(|m| hidden.starts_with(m)) {
                continue;
            }
            match std::fs::metadata(&hidden) {
                Ok(meta) if meta.is_dir() => a.pair("--tmpfs", &hidden),
                Ok(_) => a.triple("--ro-bind", "/dev/null", &hidden),
                Err(_) => {}
            }
        }
    }

    let tree_flag = if settings.filesystem == FsAccess::ReadOnly {
        "--ro-bind"
    } else {
        "--bind"
    };
    a.triple(tree_flag, &dirs.tree, &dirs.tree);
    match &dirs.home {
        Some(home) => a.triple("--bind", home, home),
        None => a.pair("--dir", EPHEMERAL_HOME),
    }
    if let Some(tmp) = &dirs.tmp {
        a.triple("--bind", tmp, tmp);
    }
    for ro in &dirs.read_only {
        a.triple("--ro-bind", ro, ro);
    }
    a.pair("--chdir", cwd);
    a.flag("--");
    a.flag("bash");
    a.flag("-c");
    a.flag(script);
    a.0
}

/// Folders holding the toolchains on PATH and named by variables: a PATH entry under the home
/// folder brings its top folder (`~/.pyenv/shims` -> `~/.pyenv`), never the home itself.
fn toolchain_folders(host: &Host) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for entry in host.path.iter().chain(&host.toolchains) {
        if !entry.is_absolute() || !entry.exists() {
            continue;
        }
        let folder = match &host.home {
            Some(home) if entry.starts_with(home) => {
                match entry.strip_prefix(home).ok().and_then(first_component) {
                    Some(top) => home.join(top),
                    None => continue,
                }
            }
            _ => entry.clone(),
        };
        if SYSTEM.iter().any(|s| folder.starts_with(s)) || out.contains(&folder) {
            continue;
        }
        out.push(folder);
    }
    out
}

fn first_component(rel: &Path) -> Option<PathBuf> {
    match rel.components().next()? {
        Component::Normal(name) => Some(PathBuf::from(name)),
        _ => None,
    }
}

/// Mounts `path` unless it overlaps a protected path or does not exist.
/// `~/x` in the user's settings means `x` under their home folder, as in a shell.
fn expand_home(path: &Path, home: Option<&Path>) -> PathBuf {
    match (path.strip_prefix("~"), home) {
        (Ok(rest), Some(home)) => home.join(rest),
        _ => path.to_path_buf(),
    }
}

fn mount_outside(
    a: &mut Args,
    mounted: &mut Vec<PathBuf>,
    flag: &str,
    path: PathBuf,
    protected: &[PathBuf],
) {
    if !path.is_absolute() || !path.exists() {
        return;
    }
    if protected
        .iter()
        .any(|p| path.starts_with(p) || p.starts_with(&path))
    {
        tracing::warn!(path = %path.display(), "not mounted in the sandbox: it overlaps a protected folder");
        return;
    }
    a.triple(flag, &path, &path);
    mounted.push(path);
}

#[derive(Default)]
struct Args(Vec<OsString>);

impl Args {
    fn flag(&mut self, s: impl Into<OsString>) {
        self.0.push(s.into());
    }
    fn pair(&mut self, flag: &str, value: impl AsRef<std::ffi::OsStr>) {
        self.0.push(flag.into());
        self.0.push(value.as_ref().to_owned());
    }
    fn triple(
        &mut self,
        flag: &str,
        from: impl AsRef<std::ffi::OsStr>,
        to: impl AsRef<std::ffi::OsStr>,
    ) {
        self.0.push(flag.into());
        self.0.push(from.as_ref().to_owned());
        self.0.push(to.as_ref().to_owned());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(home: &Path, path: &[&Path]) -> Host {
        Host {
            home: Some(home.to_path_buf()),
            path: path.iter().map(|p| p.to_path_buf()).collect(),
            toolchains: Vec::new(),
        }
    }

    fn line(args: &[OsString]) -> String {
        args.iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn a_path_entry_inside_the_project_does_not_bring_it_in() {
        let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let project = home.path().join("proj");
        let bin = project.join("bin");
        std::fs::create_dir_all(&bin).unwrap_or_else(|e| panic!("{e}"));
        let tools = home.path().join(".tools/bin");
        std::fs::create_dir_all(&tools).unwrap_or_else(|e| panic!("{e}"));
        let mut dirs = WorkspaceDirs::tree_only("/ws/tree");
        dirs.hidden = vec![project.clone()];
        let args = arguments(
            &SandboxSettings::default(),
            &dirs,
            &host(home.path(), &[&bin, &tools]),
            Path::new("/ws/tree"),
            "true",
        );
        let text = line(&args);
        assert!(!text.contains(&*project.to_string_lossy()), "{text}");
        assert!(
            text.contains(&*home.path().join(".tools").to_string_lossy()),
            "{text}"
        );
        assert!(text.contains("--unshare-net"), "{text}");
    }

    #[test]
    fn a_tilde_in_the_users_folders_means_their_home() {
        let home = Path::new("/home/u");
        assert_eq!(
            expand_home(Path::new("~/.cache/pip"), Some(home)),
            Path::new("/home/u/.cache/pip")
        );
        assert_eq!(expand_home(Path::new("~"), Some(home)), home);
        assert_eq!(
            expand_home(Path::new("/opt/~x"), Some(home)),
            Path::new("/opt/~x")
        );
        assert_eq!(expand_home(Path::new("~/x"), None), Path::new("~/x"));
    }

    /// The arguments for `true` in `/ws/tree` on a host with no home and no PATH.
    fn bare_host_line(settings: &SandboxSettings) -> String {
        let host = Host {
            home: None,
            path: Vec::new(),
            toolchains: Vec::new(),
        };
        let dirs = WorkspaceDirs::tree_only("/ws/tree");
        line(&arguments(
            settings,
            &dirs,
            &host,
            Path::new("/ws/tree"),
            "true",
        ))
    }

    #[test]
    fn read_only_mounts_the_tree_read_only_and_network_can_be_allowed() {
        let settings = SandboxSettings {
            filesystem: FsAccess::ReadOnly,
            network: true,
            ..SandboxSettings::default()
        };
        let text = bare_host_line(&settings);
        assert!(text.contains("--ro-bind /ws/tree /ws/tree"), "{text}");
        assert!(!text.contains("--unshare-net"), "{text}");
    }

    #[test]
    fn folders_the_user_shares_under_tmp_are_mounted_after_the_fresh_tmp() {
        let shared = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let settings = SandboxSettings {
            writable: vec![shared.path().to_path_buf()],
            ..SandboxSettings::default()
        };
        let text = bare_host_line(&settings);
        let bind = format!("--bind {0} {0}", shared.path().display());
        let (Some(tmp), Some(bound)) = (text.find("--tmpfs /tmp"), text.find(&bind)) else {
            panic!("missing mounts: {text}");
        };
        assert!(
            tmp < bound,
            "the fresh /tmp hides the shared folder: {text}"
        );
    }
}
