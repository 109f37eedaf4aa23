//! [`Env`]: a snapshot of the environment variables versus reads, plus the project's `.env`.
//!
//! Keys and base URLs come from the environment, so every lookup goes through an explicit
//! `Env` value instead of `std::env::var`: tests build one from pairs without touching the
//! process environment (which is shared by every test thread), and the rule "a `.env` file never
//! overrides a variable that is already set" lives in one place.
//!
//! The `.env` syntax is the common one: `KEY=VALUE` lines, an optional `export ` prefix, `#`
//! comments, single quotes (literal) or double quotes (with `\n`, `\t`, `\"`, `\\` escapes; may
//! span lines), unquoted values ending at ` #`. No `${VAR}` expansion. Parse errors name the
//! line but never echo its text: a `.env` holds secrets.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

/// Where a variable's value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarSource {
    /// The process environment.
    Process,
    /// The project's `.env` file.
    DotEnv,
}

/// Environment variables as versus sees them: process variables, then `.env` entries for names
/// the process did not set.
#[derive(Clone, Default)]
pub struct Env {
    vars: BTreeMap<String, String>,
    from_dotenv: BTreeSet<String>,
    dotenv_path: Option<PathBuf>,
    ignored_dotenv: Vec<String>,
}

/// Whether a `.env` entry may be used: keys (`*_API_KEY`, `*_KEY`, `*_TOKEN`) and base URLs
/// (`*_BASE_URL`) only. Everything else a `.env` could set would steer versus itself
/// (`XDG_CONFIG_HOME`, `HOME`, `PATH`, `VERSUS_*`, proxies) and is ignored. A base URL from
/// `.env` counts only for a provider whose key comes from the same file
/// ([`super::ProviderDef::base_url`]).
pub fn dotenv_name_allowed(name: &str) -> bool {
    let steering = name.starts_with("XDG_")
        || name.starts_with("VERSUS_")
        || name.to_ascii_uppercase().ends_with("_PROXY")
        || matches!(
            name,
            "HOME" | "PATH" | "TMPDIR" | "SSL_CERT_FILE" | "SSL_CERT_DIR"
        );
    !steering
        && ["_API_KEY", "_KEY", "_TOKEN", "_BASE_URL"]
            .iter()
            .any(|s| name.ends_with(s))
}

impl fmt::Debug for Env {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Values are secrets (API keys); show only how many there are and where they came from.
        f.debug_struct("Env")
            .field("vars", &self.vars.len())
            .field("from_dotenv", &self.from_dotenv)
            .field("dotenv_path", &self.dotenv_path)
            .field("ignored_dotenv", &self.ignored_dotenv)
            .finish()
    }
}

/// A `.env` file that could not be read or parsed.
#[derive(Debug, thiserror::Error)]
pub enum EnvError {
    /// The file exists but could not be read.
    #[error("could not read {}: {error} (fix its permissions or remove it)", path.display())]
    Read {
        /// The `.env` file.
        path: PathBuf,
        /// The I/O error (in the message, so not also a `source`).
        error: std::io::Error,
    },
    /// A line is not `KEY=VALUE`.
    #[error("{}:{line}: {problem}; each line must be KEY=VALUE (optionally `export KEY=VALUE`), a `#` comment or blank", path.display())]
    Syntax {
        /// The `.env` file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong (never the line's text).
        problem: String,
    },
}

impl Env {
    /// An empty environment (tests, and callers that want nothing inherited).
    pub fn empty() -> Env {
        Env::default()
    }

    /// A snapshot of the process environment (variables that are not UTF-8 are skipped).
    pub fn from_process() -> Env {
        Env::from_pairs(
            std::env::vars_os()
                .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))),
        )
    }

    /// An environment holding exactly these variables, as if set in the process.
    pub fn from_pairs<K, V>(pairs: impl IntoIterator<Item = (K, V)>) -> Env
    where
        K: Into<String>,
        V: Into<String>,
    {
        Env {
            vars: pairs
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
            ..Env::default()
        }
    }

    /// The process environment plus `project_dir/.env` (if it exists).
    pub fn load(project_dir: &Path) -> Result<Env, EnvError> {
        Env::from_process().with_dotenv_file(&project_dir.join(".env"))
    }

    /// Adds the entries of a `.env` file for names not already set. A missing file is not an
    /// error (most projects have none).
    pub fn with_dotenv_file(self, path: &Path) -> Result<Env, EnvError> {
        let text = match crate::fsutil::read_capped_string(path, super::FILE_READ_CAP) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(self),
            Err(error) => {
                return Err(EnvError::Read {
                    path: path.to_path_buf(),
                    error,
                });
            }
        };
        let entries = parse_dotenv(&text).map_err(|(line, problem)| EnvError::Syntax {
            path: path.to_path_buf(),
            line,
            problem,
        })?;
        let (allowed, ignored): (Vec<_>, Vec<_>) = entries
            .into_iter()
            .partition(|(name, _)| dotenv_name_allowed(name));
        let mut env = self.with_dotenv_entries(allowed);
        env.dotenv_path = Some(path.to_path_buf());
        env.ignored_dotenv = ignored.into_iter().map(|(name, _)| name).collect();
        Ok(env)
    }

    /// Adds already parsed `.env` entries for names not already set.
    pub fn with_dotenv_entries(mut self, entries: Vec<(String, String)>) -> Env {
        for (key, value) in entries {
            if !self.vars.contains_key(&key) {
                self.vars.insert(key.clone(), value);
                self.from_dotenv.insert(key);
            }
        }
        self
    }

    /// Returns a copy with one more variable set (as if in the process environment).
    pub fn with_var(mut self, key: impl Into<String>, value: impl Into<String>) -> Env {
        let key = key.into();
        self.from_dotenv.remove(&key);
        self.vars.insert(key, value.into());
        self
    }

    /// The raw value of a variable.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(String::as_str)
    }

    /// The value, trimmed, when it is set and not blank: `OPENAI_API_KEY=` counts as unset.
    pub fn non_empty(&self, name: &str) -> Option<&str> {
        self.get(name).map(str::trim).filter(|v| !v.is_empty())
    }

    /// Where a set variable came from.
    pub fn source(&self, name: &str) -> Option<VarSource> {
        if !self.vars.contains_key(name) {
            None
        } else if self.from_dotenv.contains(name) {
            Some(VarSource::DotEnv)
        } else {
            Some(VarSource::Process)
        }
    }

    /// The `.env` file that was read, if any.
    pub fn dotenv_path(&self) -> Option<&Path> {
        self.dotenv_path.as_deref()
    }

    /// Names in `.env` that were ignored because they are not keys or base URLs.
    pub fn ignored_dotenv(&self) -> &[String] {
        &self.ignored_dotenv
    }
}

/// Parses `.env` text into entries in file order. On error: the 1-based line and the problem.
pub fn parse_dotenv(text: &str) -> Result<Vec<(String, String)>, (usize, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let number = i + 1;
        let line = lines[i].trim_start_matches('\u{feff}').trim();
        i += 1;
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line
            .strip_prefix("export ")
            .or_else(|| line.strip_prefix("export\t"))
            .map(str::trim_start)
            .unwrap_or(line);
        let Some((key, rest)) = line.split_once('=') else {
            return Err((number, "no `=` found".to_string()));
        };
        let key = key.trim();
        if !is_var_name(key) {
            return Err((
                number,
                "the variable name must be letters, digits, `_` or `.`, not starting with a digit"
                    .to_string(),
            ));
        }
        let rest = rest.trim_start();
        let value = if let Some(quoted) = rest.strip_prefix('"') {
            let (value, after, used) = double_quoted(quoted, &lines[i..])
                .ok_or((number, "a double-quoted value is never closed".to_string()))?;
            i += used;
            check_after_quote(after, number)?;
            value
        } else if let Some(quoted) = rest.strip_prefix('\'') {
            let end = quoted
                .find('\'')
                .ok_or((number, "a single-quoted value is never closed".to_string()))?;
            check_after_quote(&quoted[end + 1..], number)?;
            quoted[..end].to_string()
        } else {
            let value = match rest.find(" #").or_else(|| rest.find("\t#")) {
                Some(at) => &rest[..at],
                None => rest,
            };
            value.trim_end().to_string()
        };
        out.push((key.to_string(), value));
    }
    Ok(out)
}

fn is_var_name(key: &str) -> bool {
    let mut chars = key.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
}

fn check_after_quote(after: &str, line: usize) -> Result<(), (usize, String)> {
    let after = after.trim();
    if after.is_empty() || after.starts_with('#') {
        Ok(())
    } else {
        Err((
            line,
            "unexpected text after the closing quote (start a comment with `#`)".to_string(),
        ))
    }
}

/// Reads a double-quoted value starting after the opening quote, possibly continuing on the
/// following lines. Returns the value, the text after the closing quote, and how many extra
/// lines were consumed.
fn double_quoted<'a>(first: &'a str, more: &[&'a str]) -> Option<(String, &'a str, usize)> {
    let mut value = String::new();
    let mut current = first;
    let mut used = 0;
    loop {
        let mut chars = current.char_indices();
        while let Some((at, c)) = chars.next() {
            match c {
                '"' => return Some((value, &current[at + 1..], used)),
                '\\' => match chars.next() {
                    Some((_, 'n')) => value.push('\n'),
                    Some((_, 't')) => value.push('\t'),
                    Some((_, 'r')) => value.push('\r'),
                    Some((_, other)) => value.push(other),
                    None => value.push('\\'),
                },
                other => value.push(other),
            }
        }
        let next = more.get(used)?;
        used += 1;
        value.push('\n');
        current = next;
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> Vec<(String, String)> {
        parse_dotenv(text).unwrap()
    }

    fn pair(k: &str, v: &str) -> (String, String) {
        (k.to_string(), v.to_string())
    }

    #[test]
    fn reads_plain_exported_quoted_and_commented_lines() {
        let text = "# a comment\n\
                    \n\
                    PLAIN=value\n\
                    export EXPORTED=yes\n\
                    SPACED = padded value  \n\
                    INLINE=abc # trailing comment\n\
                    HASH=abc#def\n\
                    DOUBLE=\"two words # not a comment\"\n\
                    ESCAPES=\"a\\nb\\\"c\\\\\"\n\
                    SINGLE='no $expansion \\n here'\n\
                    EMPTY=\n\
                    QUOTED_EMPTY=\"\" # nothing\n";
        assert_eq!(
            parsed(text),
            vec![
                pair("PLAIN", "value"),
                pair("EXPORTED", "yes"),
                pair("SPACED", "padded value"),
                pair("INLINE", "abc"),
                pair("HASH", "abc#def"),
                pair("DOUBLE", "two words # not a comment"),
                pair("ESCAPES", "a\nb\"c\\"),
                pair("SINGLE", "no $expansion \\n here"),
                pair("EMPTY", ""),
                pair("QUOTED_EMPTY", ""),
            ]
        );
    }

    #[test]
    fn double_quotes_may_span_lines() {
        let text = "KEY=\"line one\nline two\"\nNEXT=1\n";
        assert_eq!(
            parsed(text),
            vec![pair("KEY", "line one\nline two"), pair("NEXT", "1")]
        );
    }

    #[test]
    fn crlf_files_parse() {
        assert_eq!(
            parsed("A=1\r\nB='2'\r\n"),
            vec![pair("A", "1"), pair("B", "2")]
        );
    }

    #[test]
    fn errors_name_the_line_but_not_its_text() {
        let (line, problem) = parse_dotenv("A=1\nsk-secret-value\n").unwrap_err();
        assert_eq!(line, 2);
        assert!(!problem.contains("sk-secret"), "{problem}");
        assert_eq!(parse_dotenv("A=\"open\n").unwrap_err().0, 1);
        assert_eq!(parse_dotenv("1A=x\n").unwrap_err().0, 1);
        assert_eq!(parse_dotenv("A='x' y\n").unwrap_err().0, 1);
    }

    #[test]
    fn dotenv_never_overrides_a_set_variable() {
        let env = Env::from_pairs([("OPENAI_API_KEY", "from-process")]).with_dotenv_entries(vec![
            pair("OPENAI_API_KEY", "from-dotenv"),
            pair("ANTHROPIC_API_KEY", "dotenv-only"),
        ]);
        assert_eq!(env.get("OPENAI_API_KEY"), Some("from-process"));
        assert_eq!(env.source("OPENAI_API_KEY"), Some(VarSource::Process));
        assert_eq!(env.get("ANTHROPIC_API_KEY"), Some("dotenv-only"));
        assert_eq!(env.source("ANTHROPIC_API_KEY"), Some(VarSource::DotEnv));
        assert_eq!(env.source("GEMINI_API_KEY"), None);
    }

    #[test]
    fn only_keys_and_base_urls_may_come_from_dotenv() {
        for name in [
            "OPENAI_API_KEY",
            "MY_SERVER_KEY",
            "HF_TOKEN",
            "OLLAMA_BASE_URL",
        ] {
            assert!(dotenv_name_allowed(name), "{name}");
        }
        for name in [
            "XDG_CONFIG_HOME",
            "XDG_STATE_HOME",
            "HOME",
            "PATH",
            "TMPDIR",
            "VERSUS_LOG",
            "VERSUS_API_KEY",
            "HTTPS_PROXY",
            "https_proxy",
            "ALL_PROXY",
            "RUSTFLAGS",
        ] {
            assert!(!dotenv_name_allowed(name), "{name}");
        }
    }

    #[test]
    fn dotenv_file_is_read_when_present_and_ignored_when_absent() {
        let dir = tempfile::tempdir().unwrap();
        let env = Env::empty()
            .with_dotenv_file(&dir.path().join(".env"))
            .unwrap();
        assert_eq!(env.dotenv_path(), None);
        std::fs::write(
            dir.path().join(".env"),
            "export K_API_KEY=v\nXDG_CONFIG_HOME=/x\nK=w\n",
        )
        .unwrap();
        let env = Env::empty()
            .with_dotenv_file(&dir.path().join(".env"))
            .unwrap();
        assert_eq!(env.get("K_API_KEY"), Some("v"));
        // Names that are not keys or base URLs are ignored, and said to be.
        assert_eq!(env.get("XDG_CONFIG_HOME"), None);
        assert_eq!(env.get("K"), None);
        assert_eq!(env.ignored_dotenv(), ["XDG_CONFIG_HOME", "K"]);
        std::fs::write(dir.path().join(".env"), "oops\n").unwrap();
        let err = Env::empty()
            .with_dotenv_file(&dir.path().join(".env"))
            .unwrap_err()
            .to_string();
        assert!(err.contains(".env:1:"), "{err}");
    }

    #[test]
    fn blank_values_count_as_unset_and_debug_hides_values() {
        let env = Env::from_pairs([("A", "  "), ("B", " sk-123 ")]);
        assert_eq!(env.non_empty("A"), None);
        assert_eq!(env.non_empty("B"), Some("sk-123"));
        assert!(!format!("{env:?}").contains("sk-123"));
    }
}
