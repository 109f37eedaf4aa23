//! The raw request log (`--debug-log FILE`): every request body versus sends to a model and
//! every event of its answer, one JSON object a line, so a user can show a provider's
//! maintainers exactly what went over the wire when reporting a bug.
//!
//! What keeps it safe to attach to a bug report: keys never reach it (header values that
//! carry credentials are replaced by `[redacted]`, and every text goes through the request's
//! [`Redactor`], which knows the secret values and hides `key=` URL parameters); the file is
//! created `0600`, opened without following a symlink, appended to; and it may not lie inside
//! the project, whose files are copied into every model's workspace (a model could read its
//! own raw log, and `ask --pick` could apply it).
//!
//! One log per process, installed by the binary before any model runs ([`install`]); the
//! transport writes to it when it is there ([`record`]) and costs nothing when it is not.

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock, PoisonError};

use serde_json::{Value, json};

use super::redact::Redactor;

/// Why the log could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum DebugLogError {
    /// The file would be inside the project.
    #[error(
        "the debug log {path} is inside the project {project}: its files are copied into every \
         model's workspace, so write it elsewhere (e.g. /tmp/versus-debug.jsonl)"
    )]
    InsideProject {
        /// The log's path.
        path: PathBuf,
        /// The project folder.
        project: PathBuf,
    },
    /// The file could not be opened or created.
    #[error("could not open the debug log {path}: {source}")]
    Open {
        /// The log's path.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// A log is already installed in this process.
    #[error("a debug log is already open")]
    AlreadyOpen,
}

/// The open log.
struct DebugLog {
    file: Mutex<File>,
}

static LOG: OnceLock<DebugLog> = OnceLock::new();

/// Opens `path` (appended, created `0600`, never through a symlink) as this process's raw
/// request log, refusing a path inside `project`.
pub fn install(path: &Path, project: &Path) -> Result<PathBuf, DebugLogError> {
    let open_error = |source| DebugLogError::Open {
        path: path.to_path_buf(),
        source,
    };
    let absolute = std::path::absolute(path).map_err(open_error)?;
    let parent = absolute.parent().unwrap_or(Path::new("/"));
    let folder = parent.canonicalize().map_err(open_error)?;
    let resolved = match absolute.file_name() {
        Some(name) => folder.join(name),
        None => folder,
    };
    let project = project
        .canonicalize()
        .unwrap_or_else(|_| project.to_path_buf());
    if resolved.starts_with(&project) {
        return Err(DebugLogError::InsideProject {
            path: resolved,
            project,
        });
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits() | nix::fcntl::OFlag::O_CLOEXEC.bits())
        .open(&resolved)
        .map_err(open_error)?;
    // An existing file keeps its mode on open: make it private too.
    file.set_permissions(std::fs::Permissions::from_mode(0o600))
        .map_err(open_error)?;
    LOG.set(DebugLog {
        file: Mutex::new(file),
    })
    .map_err(|_| DebugLogError::AlreadyOpen)?;
    Ok(resolved)
}

/// Whether a log is installed (the transport skips building lines otherwise).
pub(crate) fn enabled() -> bool {
    LOG.get().is_some()
}

/// What one line records.
pub(crate) enum Entry<'a> {
    /// A request about to be sent.
    Request {
        /// Attempt number (1 for the first).
        attempt: u32,
        /// The URL (may carry a `key=` parameter: redacted).
        url: &'a str,
        /// Headers, secrets included (redacted here).
        headers: &'a [(String, String)],
        /// The body as sent.
        body: &'a [u8],
    },
    /// The HTTP status of the answer, and its body when it is an error.
    Status {
        /// The status code.
        status: u16,
        /// The error body, when not 2xx.
        body: Option<&'a str>,
    },
    /// One server-sent event of the answer.
    Event {
        /// Its `event:` name.
        name: &'a str,
        /// Its data.
        data: &'a str,
    },
    /// The attempt failed.
    Failed {
        /// The error, as the user sees it.
        error: &'a str,
    },
}

/// Header names whose values are credentials.
fn secret_header(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    [
        "key",
        "auth",
        "token",
        "secret",
        "signature",
        "cookie",
        "credential",
    ]
    .iter()
    .any(|word| lower.contains(word))
}

/// `text` scrubbed, as JSON when it is JSON (so the log stays one readable object a line).
fn payload(text: &str, redactor: &Redactor) -> Value {
    let clean = redactor.scrub(text);
    serde_json::from_str(&clean).unwrap_or(Value::String(clean))
}

/// Appends one line for `entry` of a request by `provider` for `model`; nothing when no log
/// is installed. A failed write is reported once in the trace log and otherwise ignored: the
/// debug log must never stop a model.
pub(crate) fn record(provider: &str, model: &str, redactor: &Redactor, entry: Entry<'_>) {
    let Some(log) = LOG.get() else {
        return;
    };
    let time_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let mut line = json!({"time_ms": time_ms, "provider": provider, "model": model});
    let fields = match entry {
        Entry::Request {
            attempt,
            url,
            headers,
            body,
        } => {
            let headers: serde_json::Map<String, Value> = headers
                .iter()
                .map(|(name, value)| {
                    let shown = if secret_header(name) {
                        "[redacted]".to_string()
                    } else {
                        redactor.scrub(value)
                    };
                    (name.clone(), Value::String(shown))
                })
                .collect();
            json!({"kind": "request", "attempt": attempt, "url": redactor.scrub(url),
                   "headers": headers,
                   "body": payload(&String::from_utf8_lossy(body), redactor)})
        }
        Entry::Status { status, body } => {
            json!({"kind": "status", "status": status,
                   "body": body.map(|b| payload(b, redactor))})
        }
        Entry::Event { name, data } => {
            json!({"kind": "event", "event": name, "data": payload(data, redactor)})
        }
        Entry::Failed { error } => json!({"kind": "failed", "error": redactor.scrub(error)}),
    };
    if let (Some(line), Value::Object(fields)) = (line.as_object_mut(), fields) {
        line.extend(fields);
    }
    let mut text = line.to_string();
    text.push('\n');
    let mut file = log.file.lock().unwrap_or_else(PoisonError::into_inner);
    if let Err(err) = file.write_all(text.as_bytes()) {
        tracing::warn!(%err, "could not write to the debug log");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_headers_are_recognised() {
        for name in ["Authorization", "x-api-key", "x-goog-api-key", "api-key"] {
            assert!(secret_header(name), "{name}");
        }
        for name in ["content-type", "anthropic-version", "accept"] {
            assert!(!secret_header(name), "{name}");
        }
    }

    #[test]
    fn payloads_are_scrubbed_and_kept_as_json() {
        let redactor = Redactor::new(["sk-secret-123456".to_string()]);
        assert_eq!(
            payload(r#"{"a":"sk-secret-123456"}"#, &redactor),
            json!({"a": "[redacted]"})
        );
        assert_eq!(
            payload("not json sk-secret-123456", &redactor),
            json!("not json [redacted]")
        );
    }
}
