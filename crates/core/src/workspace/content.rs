//! How a [`FileWrite`](super::FileWrite)'s content is written in a saved record: by
//! reference in a session log, inline elsewhere.
//!
//! A session log used to hold every proposed file's bytes in its line, as a JSON string, or,
//! when not UTF-8, as an array of numbers (four to five bytes of log per byte of file): a
//! 256 MB file a model made took gigabytes of memory to encode and 1.6 GB of log. In a log
//! now, content larger than [`INLINE_MAX`] (or not UTF-8) is written as `{"blob": HASH,
//! "size": N}` and its bytes go once, streamed, to a content-addressed file beside the log
//! (`blobs/HASH`, blake3, shared by every record that holds the same bytes). Small text stays
//! inline, readable. Outside a log, bytes that are not UTF-8 are base64 (`{"base64": ...}`),
//! never numbers.
//!
//! The session module decides where blobs go and come from: [`collecting`] around encoding a
//! record gathers the blobs its writer then stores; [`resolving`] around reading a log lets a
//! reference find its bytes (checked against its hash and size). Both are scoped to the
//! calling thread and restore what was before, even on panic. Lines written before (strings,
//! arrays of numbers) still read.

use std::cell::RefCell;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use base64::Engine as _;
use serde::{Deserialize, Deserializer, Serializer};

/// Content up to this many bytes of UTF-8 text stays inline in a log line.
pub const INLINE_MAX: usize = 1024;

/// Bytes a log refers to by hash: the content and its blake3 (lowercase hex).
pub type Blob = (String, Arc<Vec<u8>>);

/// What serializing or deserializing content does on this thread.
#[derive(Default)]
enum Mode {
    /// Inline (text, or base64 for bytes); a reference cannot be read.
    #[default]
    Inline,
    /// Large or binary content becomes a reference; the bytes are collected here.
    Collect(Vec<Blob>),
    /// References are read from this folder.
    Resolve(PathBuf),
}

thread_local! {
    static MODE: RefCell<Mode> = const { RefCell::new(Mode::Inline) };
}

/// Puts the previous mode back when dropped.
struct Restore(Option<Mode>);

impl Drop for Restore {
    fn drop(&mut self) {
        if let Some(previous) = self.0.take() {
            MODE.with(|m| *m.borrow_mut() = previous);
        }
    }
}

fn enter(mode: Mode) -> Restore {
    Restore(Some(MODE.with(|m| m.replace(mode))))
}

/// Runs `encode` with content written by reference, and returns what it returned with the
/// blobs it referred to (each once), for the caller to store before the line that names them.
pub fn collecting<R>(encode: impl FnOnce() -> R) -> (R, Vec<Blob>) {
    let restore = enter(Mode::Collect(Vec::new()));
    let out = encode();
    let blobs = MODE.with(|m| match m.replace(Mode::Inline) {
        Mode::Collect(blobs) => blobs,
        _ => Vec::new(),
    });
    drop(restore);
    let mut seen = std::collections::HashSet::new();
    let blobs = blobs
        .into_iter()
        .filter(|(hash, _)| seen.insert(hash.clone()))
        .collect();
    (out, blobs)
}

/// Runs `decode` with references read from the folder `blobs`.
pub fn resolving<R>(blobs: &Path, decode: impl FnOnce() -> R) -> R {
    let _restore = enter(Mode::Resolve(blobs.to_path_buf()));
    decode()
}

/// Whether `name` is a blob's name: 64 lowercase hex digits (nothing that could climb out of
/// the folder).
pub fn is_blob_name(name: &str) -> bool {
    name.len() == 64 && name.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The shapes content takes on the wire.
#[derive(Deserialize)]
#[serde(untagged)]
enum Wire {
    Text(String),
    /// Version 1 and 2 logs: an array of byte values.
    Bytes(Vec<u8>),
    Base64 {
        base64: String,
    },
    Blob {
        blob: String,
        size: u64,
    },
}

/// Writes content as the module comment says (`#[serde(with = "workspace::content")]` on an
/// `Option<Arc<Vec<u8>>>`): inline when small text, else by reference while collecting.
pub fn serialize<S: Serializer>(
    content: &Option<Arc<Vec<u8>>>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let Some(bytes) = content else {
        return serializer.serialize_none();
    };
    let text = std::str::from_utf8(bytes).ok();
    if let Some(text) = text.filter(|t| t.len() <= INLINE_MAX) {
        return serializer.serialize_some(text);
    }
    let hash = MODE.with(|m| match &mut *m.borrow_mut() {
        Mode::Collect(blobs) => {
            let hash = blake3::hash(bytes).to_hex().to_string();
            blobs.push((hash.clone(), Arc::clone(bytes)));
            Some(hash)
        }
        _ => None,
    });
    match (hash, text) {
        (Some(hash), _) => {
            let mut map = serializer.serialize_map(Some(2))?;
            map.serialize_entry("blob", &hash)?;
            map.serialize_entry("size", &bytes.len())?;
            map.end()
        }
        (None, Some(text)) => serializer.serialize_some(text),
        (None, None) => {
            let mut map = serializer.serialize_map(Some(1))?;
            map.serialize_entry(
                "base64",
                &base64::engine::general_purpose::STANDARD.encode(bytes.as_slice()),
            )?;
            map.end()
        }
    }
}

/// Reads content in any of the shapes it was ever written in, a reference from the folder
/// being resolved.
pub fn deserialize<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Arc<Vec<u8>>>, D::Error> {
    use serde::de::Error;
    let Some(wire) = Option::<Wire>::deserialize(deserializer)? else {
        return Ok(None);
    };
    let bytes = match wire {
        Wire::Text(text) => text.into_bytes(),
        Wire::Bytes(bytes) => bytes,
        Wire::Base64 { base64 } => base64::engine::general_purpose::STANDARD
            .decode(base64)
            .map_err(D::Error::custom)?,
        Wire::Blob { blob, size } => read_blob(&blob, size).map_err(D::Error::custom)?,
    };
    Ok(Some(Arc::new(bytes)))
}

/// The bytes of the blob `hash` in the folder being resolved, checked against its size and
/// hash (never more than `size` bytes are read).
fn read_blob(hash: &str, size: u64) -> Result<Vec<u8>, String> {
    let folder = MODE.with(|m| match &*m.borrow() {
        Mode::Resolve(folder) => Some(folder.clone()),
        _ => None,
    });
    let Some(folder) = folder else {
        return Err("content stored by reference outside a session log".to_string());
    };
    read_named(&folder, hash, Some(size))
}

/// The bytes of `folder/<hash>`, a file named by its content's blake3, only when they hash to
/// that name (and are `size` bytes, when given: never more are read then): never through a
/// link, never a device or a FIFO. A session's blob folder read by a log or by a base
/// ([`crate::workspace::Base::with_content_from`]).
pub(crate) fn read_named(folder: &Path, hash: &str, size: Option<u64>) -> Result<Vec<u8>, String> {
    if !is_blob_name(hash) {
        return Err(format!("`{}` is not a content hash", hash.escape_debug()));
    }
    let path = folder.join(hash);
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(&path)
        .map_err(|e| format!("content {hash} is missing from {}: {e}", folder.display()))?;
    let meta = file
        .metadata()
        .map_err(|e| format!("could not read {}: {e}", path.display()))?;
    let wrong = || {
        format!(
            "{} does not hold the content it is named after",
            path.display()
        )
    };
    if !meta.is_file() || size.is_some_and(|size| meta.len() != size) {
        return Err(wrong());
    }
    let size = size.unwrap_or(meta.len());
    let mut bytes = Vec::new();
    file.take(size.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| format!("could not read {}: {e}", path.display()))?;
    if bytes.len() as u64 != size || blake3::hash(&bytes).to_hex().as_str() != hash {
        return Err(wrong());
    }
    Ok(bytes)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::super::{FileWrite, WriteOrigin};
    use super::*;

    fn write(content: &[u8]) -> FileWrite {
        FileWrite {
            path: "f".into(),
            content: Some(Arc::new(content.to_vec())),
            origin: WriteOrigin::new("bash", ""),
            seq: 0,
            symlink: false,
        }
    }

    #[test]
    fn large_or_binary_content_goes_by_reference_and_comes_back_checked() {
        let big = write(&vec![0u8; 300_000]);
        let small = write(b"fn main() {}\n");
        let ((big_json, small_json), blobs) = collecting(|| {
            (
                serde_json::to_string(&big).unwrap(),
                serde_json::to_string(&small).unwrap(),
            )
        });
        assert!(big_json.len() < 300, "{big_json}");
        assert!(big_json.contains("\"size\":300000"), "{big_json}");
        assert!(small_json.contains("fn main()"), "{small_json}");
        assert_eq!(blobs.len(), 1);
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join(&blobs[0].0), blobs[0].1.as_slice()).unwrap();
        let back: FileWrite = resolving(d.path(), || serde_json::from_str(&big_json).unwrap());
        assert_eq!(back, big);
        // Outside a log nothing resolves; a tampered blob is refused.
        assert!(serde_json::from_str::<FileWrite>(&big_json).is_err());
        std::fs::write(d.path().join(&blobs[0].0), b"other").unwrap();
        assert!(resolving(d.path(), || serde_json::from_str::<FileWrite>(&big_json)).is_err());
        let climbing = big_json.replace(&blobs[0].0, "../../etc/passwd");
        assert!(resolving(d.path(), || serde_json::from_str::<FileWrite>(&climbing)).is_err());
        // A link in the blob folder (to /dev/zero, say) is never read.
        std::fs::remove_file(d.path().join(&blobs[0].0)).unwrap();
        std::os::unix::fs::symlink("/dev/zero", d.path().join(&blobs[0].0)).unwrap();
        assert!(resolving(d.path(), || serde_json::from_str::<FileWrite>(&big_json)).is_err());
        // Outside a log, bytes are base64, never an array of numbers; old arrays still read.
        let binary = write(&[0xff, 0xfe, 0]);
        let json = serde_json::to_string(&binary).unwrap();
        assert!(json.contains("\"base64\":\"//4A\""), "{json}");
        assert_eq!(serde_json::from_str::<FileWrite>(&json).unwrap(), binary);
        let old =
            r#"{"path":"f","content":[255,254,0],"origin":{"tool":"bash","call_id":""},"seq":0}"#;
        assert_eq!(serde_json::from_str::<FileWrite>(old).unwrap(), binary);
    }
}
