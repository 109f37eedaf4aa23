//! The bubblewrap command line for a confined command.
//!
//! Namespaces: user (no real privileges inside), mount (the filesystem below), PID (the command
//! sees only its own processes, so no `/proc/<versus>/environ`; when it ends every process it
//! started dies, `setsid` or not), IPC, UTS, cgroup, and network unless the settings allow it
//! (then only loopback exists). `--cap-drop ALL`: no capability at all, not even in the
//! sandbox's own user namespace (run as root, the command would otherwise hold every one there:
//! enough to remount a read-only folder writable or unmount a mask). `--die-with-parent` kills
//! the sandbox if versus itself dies, even by SIGKILL; `--new-session` keeps the command from
//! typing into the user's terminal. Inside, `ulimit -u` sets the process limit before the
//! command starts (see `limit.rs`).
//!
//! Filesystem, in mount order (later mounts lie on top):
//! 1. system folders read-only (`/usr`, `/etc`, `/opt`, ...; merged-usr symlinks recreated);
//! 2. toolchains read-only: every absolute PATH entry, exactly that folder; an entry inside a
//!    known toolchain root (`~/.cargo`, `~/.pyenv`, `~/go`, ...) brings that root; the roots
//!    named by variables (`CARGO_HOME`, ...); the user's extra read-only folders; then the
//!    user's writable folders. Never the home folder, a folder above it, or one of its generic
//!    top folders (`~/.local`, `~/.config`, `~/.cache`);
//! 3. masks: protected paths (the project, the workspaces' parent), secret places that lie
//!    under something mounted above, and whatever in `/etc` (as root also `/opt`,
//!    `/usr/local`) not every user may read (run as root, the command owns root's files:
//!    `/etc/shadow`, host keys, VPN and wifi secrets);
//! 4. fresh `/dev`, `/proc`, `/tmp`;
//! 5. the workspace: its tree read-write (read-only for `filesystem: read_only`), its private
//!    home and temp folders, the base repository's objects read-only.
//!
//! Candidates for step 2 that contain or lie inside a protected path are skipped, so a PATH
//! entry inside the project cannot bring the project in.

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

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

/// Toolchain roots under the home folder that their tools need whole (a shim in `bin` runs
/// what lies beside it): a PATH entry inside one, or a link in such a PATH folder pointing
/// into one, mounts the root. Each holds toolchains and packages, no credentials (those that
/// may, like `.cargo/credentials.toml`, are in [`SECRET_PLACES`] and masked).
const HOME_TOOLCHAIN_ROOTS: &[&str] = &[
    ".cargo",
    ".rustup",
    ".pyenv",
    ".nvm",
    ".rbenv",
    ".volta",
    ".sdkman",
    ".bun",
    ".deno",
    "go",
    ".local/share/mise",
    ".asdf",
    ".nodenv",
    ".goenv",
    ".jenv",
    ".ghcup",
    ".elan",
    ".juliaup",
    ".pixi",
    ".fnm",
    ".local/share/fnm",
    ".local/share/pnpm",
    ".yarn",
    ".config/yarn/global",
    ".config/composer/vendor",
    ".composer/vendor",
    ".gem",
    ".local/share/gem",
    ".local/share/uv/tools",
    ".local/share/uv/python",
    ".local/pipx",
    ".local/share/pipx",
    ".dotnet",
    ".nix-profile",
    ".opam",
    ".krew",
];

/// Folders of the home folder that hold everything of every program (keyrings, tokens,
/// browser profiles): never mounted as a whole, whatever names them.
const HOME_GENERIC: &[&str] = &[
    ".local",
    ".local/share",
    ".local/state",
    ".local/lib",
    ".config",
    ".cache",
    ".var",
    ".var/app",
];

/// Links read per PATH folder under the home folder, and mounts their targets may add.
const MAX_LINKS_PER_FOLDER: usize = 4096;
const MAX_LINK_MOUNTS: usize = 256;

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

/// The flags that make the sandbox itself, shared by every command and by the probe: the
/// namespaces, no capabilities, death with versus, no terminal.
pub(crate) fn isolation(network: bool) -> Vec<OsString> {
    let mut a = Args::default();
    a.flag("--die-with-parent");
    a.flag("--new-session");
    a.flag("--unshare-user");
    a.flag("--unshare-pid");
    a.flag("--unshare-ipc");
    a.flag("--unshare-uts");
    a.flag("--unshare-cgroup-try");
    if !network {
        a.flag("--unshare-net");
    }
    a.pair("--cap-drop", "ALL");
    a.pair("--hostname", "versus-sandbox");
    a.0
}

/// What runs inside: `bash -c script`, after the process limit is set (`0`: none). The limit
/// is set by a first bash that then becomes the command's own (`exec`), so the script sees
/// the same `bash -c` it always did.
pub(crate) fn inner_command(max_processes: u32, script: &str) -> Vec<OsString> {
    let mut a = Args::default();
    a.flag("bash");
    a.flag("-c");
    if max_processes > 0 {
        // Both limits: a lower hard limit than asked (a user's own) stays and applies.
        a.flag("ulimit -Su \"$1\" 2>/dev/null; ulimit -Hu \"$1\" 2>/dev/null; exec bash -c \"$2\"");
        a.flag("versus-sandbox");
        a.flag(max_processes.to_string());
    }
    a.flag(script);
    a.0
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
    let mut a = Args(isolation(settings.network));

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
        let home = host.home.as_deref();
        let secrets: Vec<PathBuf> = home
            .iter()
            .flat_map(|home| SECRET_PLACES.iter().map(move |rel| home.join(rel)))
            .chain(
                host.toolchains
                    .iter()
                    .flat_map(|root| TOOLCHAIN_SECRETS.iter().map(move |rel| root.join(rel))),
            )
            .chain(settings.deny.iter().map(|p| expand_home(p, home)))
            .collect();
        for candidate in toolchain_folders(host) {
            if secrets.iter().any(|s| candidate.starts_with(s)) {
                continue;
            }
            mount_outside(&mut a, &mut mounted, "--ro-bind", candidate, protected);
        }
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
        for hidden in protected.iter().chain(&secrets) {
            if !mounted.iter().any(|m| hidden.starts_with(m)) {
                continue;
            }
            match std::fs::metadata(hidden) {
                Ok(meta) if meta.is_dir() => a.pair("--tmpfs", hidden),
                Ok(_) => a.triple("--ro-bind", "/dev/null", hidden),
                Err(_) => {}
            }
        }
        for (path, is_dir) in unreadable_in_system() {
            if mounted.iter().any(|m| path.starts_with(m)) {
                if *is_dir {
                    a.pair("--tmpfs", path);
                } else {
                    a.triple("--ro-bind", "/dev/null", path);
                }
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
    a.0.extend(inner_command(settings.max_processes, script));
    a.0
}

/// Secrets inside a toolchain root named by a variable, wherever it lies (`CARGO_HOME` is
/// `/usr/local/cargo` in the official Rust images, under the system folders).
const TOOLCHAIN_SECRETS: &[&str] = &["credentials", "credentials.toml"];

/// The folders holding the toolchains on PATH and named by variables. A PATH entry is mounted
/// as itself, or as the known toolchain root it lies in; a link in a PATH folder under the
/// home folder brings its target (or the known root holding it). Never the home folder, a
/// folder above it, or one of its generic top folders.
fn toolchain_folders(host: &Host) -> Vec<PathBuf> {
    let home = host.home.as_deref();
    let roots: Vec<PathBuf> = home
        .iter()
        .flat_map(|h| HOME_TOOLCHAIN_ROOTS.iter().map(move |r| h.join(r)))
        .collect();
    let root_of = |path: &Path| -> PathBuf {
        roots
            .iter()
            .find(|root| path.starts_with(root))
            .cloned()
            .unwrap_or_else(|| path.to_path_buf())
    };
    let mut wanted: Vec<PathBuf> = Vec::new();
    let mut link_mounts = 0;
    for entry in &host.path {
        if !entry.is_absolute() || !entry.exists() {
            continue;
        }
        let entry = normalize(entry);
        wanted.push(root_of(&entry));
        let Some(home) = home else { continue };
        if !entry.starts_with(home) || roots.iter().any(|r| entry.starts_with(r)) {
            continue;
        }
        // A PATH folder of links (`~/.local/bin` of pipx and uv, a yarn global bin): each
        // link's target must be there too, and only that.
        let Ok(list) = std::fs::read_dir(&entry) else {
            continue;
        };
        for item in list.flatten().take(MAX_LINKS_PER_FOLDER) {
            if link_mounts >= MAX_LINK_MOUNTS {
                break;
            }
            if !item.file_type().is_ok_and(|t| t.is_symlink()) {
                continue;
            }
            let Ok(target) = std::fs::read_link(item.path()) else {
                continue;
            };
            let target = normalize(&entry.join(target));
            if target.exists() {
                wanted.push(root_of(&target));
                link_mounts += 1;
            }
        }
    }
    wanted.extend(host.toolchains.iter().map(|t| normalize(t)));
    let mut out: Vec<PathBuf> = Vec::new();
    for folder in wanted {
        if !folder.is_absolute()
            || folder == Path::new("/")
            || !folder.exists()
            || out.contains(&folder)
        {
            continue;
        }
        if SYSTEM.iter().any(|s| folder.starts_with(s))
            || ["/proc", "/sys", "/dev"]
                .iter()
                .any(|s| folder.starts_with(s))
        {
            continue;
        }
        if let Some(home) = home
            && (home.starts_with(&folder) || HOME_GENERIC.iter().any(|g| folder == home.join(g)))
        {
            tracing::warn!(path = %folder.display(), "not mounted in the sandbox: the home folder, a folder above it or a generic folder of it");
            continue;
        }
        out.push(folder);
    }
    out
}

/// `path` with `.` and `..` resolved by name (as the kernel resolves a relative link's target
/// from the link's folder), without following links.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// The files and folders in the system folders that not every user may read (no read bit
/// for others; a folder without the search bit), found once per process: masked in the
/// sandbox, because a command run by root owns them all, capabilities or not. `/etc` always
/// (`/etc/shadow`, host keys, VPN and wifi secrets); run as root also `/opt` and `/usr/local`,
/// where installed software keeps its own (a `CARGO_HOME` of `/usr/local/cargo` holds
/// `credentials.toml`, 0600).
fn unreadable_in_system() -> &'static [(PathBuf, bool)] {
    static FOUND: OnceLock<Vec<(PathBuf, bool)>> = OnceLock::new();
    FOUND.get_or_init(|| {
        let mut tops = vec!["/etc"];
        if nix::unistd::geteuid().is_root() {
            tops.extend(["/opt", "/usr/local"]);
        }
        tops.iter()
            .flat_map(|top| unreadable_under(Path::new(top), 50_000))
            .collect()
    })
}

/// [`unreadable_in_system`] for one folder, looking at no more than `budget` entries.
fn unreadable_under(top: &Path, budget: usize) -> Vec<(PathBuf, bool)> {
    let mut out = Vec::new();
    let mut stack = vec![top.to_path_buf()];
    let mut seen = 0;
    while let Some(dir) = stack.pop() {
        let Ok(list) = std::fs::read_dir(&dir) else {
            continue;
        };
        for item in list.flatten() {
            seen += 1;
            if seen > budget {
                tracing::warn!(folder = %top.display(), "too many entries to check for unreadable files; the rest is not masked");
                return out;
            }
            let Ok(meta) = std::fs::symlink_metadata(item.path()) else {
                continue;
            };
            let kind = meta.file_type();
            if kind.is_symlink() {
                continue;
            }
            let mode = meta.permissions().mode();
            if kind.is_dir() {
                if mode & 0o001 == 0 {
                    out.push((item.path(), true));
                } else {
                    stack.push(item.path());
                }
            } else if mode & 0o004 == 0 {
                out.push((item.path(), false));
            }
        }
    }
    out
}

/// `~/x` in the user's settings means `x` under their home folder, as in a shell.
fn expand_home(path: &Path, home: Option<&Path>) -> PathBuf {
    match (path.strip_prefix("~"), home) {
        (Ok(rest), Some(home)) => home.join(rest),
        _ => path.to_path_buf(),
    }
}

/// Mounts `path` unless it overlaps a protected path or does not exist.
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

    fn mkdirs(base: &Path, rels: &[&str]) {
        for rel in rels {
            std::fs::create_dir_all(base.join(rel)).unwrap_or_else(|e| panic!("{e}"));
        }
    }

    #[test]
    fn a_path_entry_under_home_is_mounted_as_itself_or_as_its_toolchain_root() {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let home = tmp.path().join("home");
        mkdirs(
            &home,
            &[
                ".local/bin",
                ".local/share/keyrings",
                ".config/yarn/global/node_modules/.bin",
                ".config/rclone",
                ".pyenv/shims",
                ".cargo/bin",
                "bin",
            ],
        );
        let entries: Vec<PathBuf> = [
            ".local/bin",
            ".config/yarn/global/node_modules/.bin",
            ".pyenv/shims",
            "bin",
        ]
        .iter()
        .map(|r| home.join(r))
        .chain([home.clone(), tmp.path().to_path_buf(), PathBuf::from("/")])
        .collect();
        let host = Host {
            home: Some(home.clone()),
            path: entries,
            toolchains: vec![home.join(".cargo"), home.join(".local")],
        };
        let got = toolchain_folders(&host);
        let want: Vec<PathBuf> = [
            ".local/bin",
            ".config/yarn/global",
            ".pyenv",
            "bin",
            ".cargo",
        ]
        .iter()
        .map(|r| home.join(r))
        .collect();
        // The home, the folder above it, `/` and the generic `~/.local` are never mounted.
        assert_eq!(got, want);
    }

    #[test]
    fn a_link_in_a_path_folder_brings_its_target_not_the_targets_parent() {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let home = tmp.path().join("home");
        mkdirs(
            &home,
            &[
                ".local/bin",
                ".local/share/uv/tools/ruff/bin",
                ".local/share/x",
            ],
        );
        let write = |rel: &str| {
            std::fs::write(home.join(rel), "#!/bin/sh\n").unwrap_or_else(|e| panic!("{e}"));
        };
        write(".local/share/uv/tools/ruff/bin/ruff");
        write(".local/share/x/tool");
        let link = |target: &str, name: &str| {
            std::os::unix::fs::symlink(target, home.join(".local/bin").join(name))
                .unwrap_or_else(|e| panic!("{e}"));
        };
        link("../share/uv/tools/ruff/bin/ruff", "ruff");
        link(&home.join(".local/share/x/tool").to_string_lossy(), "tool");
        link("../share", "share");
        let host = host(&home, &[&home.join(".local/bin")]);
        let mut got = toolchain_folders(&host);
        got.sort();
        let mut want: Vec<PathBuf> = [".local/bin", ".local/share/uv/tools", ".local/share/x/tool"]
            .iter()
            .map(|r| home.join(r))
            .collect();
        want.sort();
        // `share -> ../share` names a generic folder: not mounted.
        assert_eq!(got, want);
    }

    #[test]
    fn only_what_every_user_may_read_in_a_folder_stays_visible() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let etc = tmp.path();
        mkdirs(etc, &["ssl/private", "open"]);
        let put = |rel: &str, mode: u32| {
            let path = etc.join(rel);
            if !path.is_dir() {
                std::fs::write(&path, "x").unwrap_or_else(|e| panic!("{e}"));
            }
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode))
                .unwrap_or_else(|e| panic!("{e}"));
        };
        put("shadow", 0o640);
        put("passwd", 0o644);
        put("open/key", 0o600);
        put("ssl/private", 0o700);
        let mut got = unreadable_under(etc, 1000);
        got.sort();
        assert_eq!(
            got,
            vec![
                (etc.join("open/key"), false),
                (etc.join("shadow"), false),
                (etc.join("ssl/private"), true),
            ]
        );
    }

    #[test]
    fn every_command_drops_every_capability_and_gets_the_process_limit() {
        let text = bare_host_line(&SandboxSettings::default());
        assert!(text.contains("--cap-drop ALL"), "{text}");
        assert!(text.contains("ulimit -Su"), "{text}");
        assert!(text.ends_with(" versus-sandbox 2048 true"), "{text}");
        let unlimited = SandboxSettings {
            max_processes: 0,
            ..SandboxSettings::default()
        };
        assert!(bare_host_line(&unlimited).ends_with("-- bash -c true"));
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
