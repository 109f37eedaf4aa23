//! The environment a command runs with: built from an allowlist, never versus's own
//! environment minus a list.
//!
//! versus holds provider keys in its environment; a model can print its environment (`env`),
//! so only variables that are known to be harmless and needed (PATH, locale, terminal, time
//! zone, toolchain homes) pass, plus the names the user lists in `[sandbox] env`. `HOME` and
//! `TMPDIR` point at the workspace's private folders, so tools that write dotfiles or caches
//! write them there and never into the user's home.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Variables passed through when set: locale, terminal, time zone, identity, toolchain homes.
const PASSED: &[&str] = &[
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "LC_COLLATE",
    "LC_NUMERIC",
    "LC_TIME",
    "TERM",
    "TZ",
    "USER",
    "LOGNAME",
    "CARGO_HOME",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "PYENV_ROOT",
    "NVM_DIR",
    "GOROOT",
    "JAVA_HOME",
];

/// PATH when versus itself has none.
const DEFAULT_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// The environment of one command: the allowlist above read from versus's environment, the
/// user's extra names, `HOME` and `TMPDIR` set to the private folders, and toolchain homes
/// that default to the user's home made explicit (their default would follow the new `HOME`).
pub(crate) fn command_env(
    extra: &[String],
    home: &Path,
    tmp: &Path,
    host_home: Option<&Path>,
) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = Vec::new();
    let path = std::env::var_os("PATH").unwrap_or_else(|| OsString::from(DEFAULT_PATH));
    env.push(("PATH".into(), path));
    for name in PASSED
        .iter()
        .copied()
        .chain(extra.iter().map(String::as_str))
    {
        if let Some(value) = std::env::var_os(name)
            && !env.iter().any(|(n, _)| n == name)
        {
            env.push((name.into(), value));
        }
    }
    for (name, default) in [("CARGO_HOME", ".cargo"), ("RUSTUP_HOME", ".rustup")] {
        if env.iter().any(|(n, _)| n == name) {
            continue;
        }
        if let Some(dir) = host_home.map(|h| h.join(default))
            && dir.is_dir()
        {
            env.push((name.into(), dir.into_os_string()));
        }
    }
    for (name, value) in git_identity() {
        if !env.iter().any(|(n, _)| n == name) {
            env.push((name.into(), value.into()));
        }
    }
    env.push(("HOME".into(), home.as_os_str().to_owned()));
    env.push(("TMPDIR".into(), tmp.as_os_str().to_owned()));
    if !env.iter().any(|(n, _)| n == "TERM") {
        env.push(("TERM".into(), "dumb".into()));
    }
    env
}

/// Variables that carry the user's git identity into a command.
const IDENTITY: [(&str, [&str; 2]); 2] = [
    ("user.name", ["GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"]),
    ("user.email", ["GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"]),
];

/// The user's git identity, name and email only, from their own git config (global, XDG and
/// system files; never a project's, which a clone could not ship anyway): the sandbox's home is
/// private, so without it every `git commit` a model ran failed with "Author identity
/// unknown". Read once per process; a value with a control character or over 256 bytes is
/// left out.
fn git_identity() -> &'static [(&'static str, String)] {
    static FOUND: std::sync::OnceLock<Vec<(&'static str, String)>> = std::sync::OnceLock::new();
    FOUND.get_or_init(|| {
        let Ok(config) = git2::Config::open_default() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for (key, names) in IDENTITY {
            let Some(value) = config.get_string(key).ok().and_then(|v| identity_value(&v)) else {
                continue;
            };
            for name in names {
                out.push((name, value.clone()));
            }
        }
        out
    })
}

/// `raw` trimmed, when it is a plausible name or address.
fn identity_value(raw: &str) -> Option<String> {
    let value = raw.trim();
    (!value.is_empty() && value.len() <= 256 && !value.chars().any(char::is_control))
        .then(|| value.to_string())
}

/// The user's real home folder, from versus's environment.
pub(crate) fn host_home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(env: &[(OsString, OsString)]) -> Vec<String> {
        env.iter()
            .map(|(n, _)| n.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn only_allowlisted_names_pass_and_home_is_private() {
        let env = command_env(&[], Path::new("/ws/home"), Path::new("/ws/tmp"), None);
        for (name, value) in std::env::vars_os() {
            let name = name.to_string_lossy().into_owned();
            let identity = IDENTITY
                .iter()
                .any(|(_, names)| names.contains(&name.as_str()));
            if !PASSED.contains(&name.as_str())
                && !identity
                && !["PATH", "HOME", "TMPDIR"].contains(&&*name)
            {
                assert!(!names(&env).contains(&name), "{name} leaked ({value:?})");
            }
        }
        let home = env.iter().find(|(n, _)| n == "HOME").map(|(_, v)| v);
        assert_eq!(home, Some(&OsString::from("/ws/home")));
        let tmp = env.iter().find(|(n, _)| n == "TMPDIR").map(|(_, v)| v);
        assert_eq!(tmp, Some(&OsString::from("/ws/tmp")));
    }

    #[test]
    fn an_identity_value_is_one_plain_line() {
        assert_eq!(
            identity_value("  Ada Lovelace "),
            Some("Ada Lovelace".into())
        );
        assert_eq!(identity_value("a\nb"), None);
        assert_eq!(identity_value("\u{1b}]0;x\u{7}"), None);
        assert_eq!(identity_value(""), None);
        assert_eq!(identity_value(&"x".repeat(300)), None);
    }

    #[test]
    fn toolchain_homes_default_to_the_users_home() {
        let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        std::fs::create_dir(home.path().join(".rustup")).unwrap_or_else(|e| panic!("{e}"));
        let env = command_env(&[], Path::new("/h"), Path::new("/t"), Some(home.path()));
        if std::env::var_os("RUSTUP_HOME").is_none() {
            let value = env.iter().find(|(n, _)| n == "RUSTUP_HOME").map(|(_, v)| v);
            assert_eq!(value, Some(&home.path().join(".rustup").into_os_string()));
        }
    }
}
