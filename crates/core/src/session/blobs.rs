//! The content a session log refers to: `blobs/<blake3>` beside `events.jsonl`.
//!
//! A record holding file content (a model's proposals) names each large or binary content by
//! its hash (`workspace::content`); the bytes are written here once, before the line that
//! names them, under a temporary name renamed into place, so a crash leaves at worst an
//! unnamed blob, never a line whose blob is half-written. Identical content (the same file
//! proposed by several models, or again the next turn) is stored once.

use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::workspace::content::{self, Blob};

/// Name of the blob folder inside a session folder.
pub const BLOBS_DIR: &str = "blobs";

/// The blob folder of the session whose log is `events`.
pub(crate) fn folder_of(events: &Path) -> PathBuf {
    events
        .parent()
        .unwrap_or_else(|| Path::new("."))
        .join(BLOBS_DIR)
}

/// Encodes `value` as one line (no newline) with content by reference, returning the blobs it
/// names.
pub(crate) fn encode<T: serde::Serialize>(value: &T) -> serde_json::Result<(Vec<u8>, Vec<Blob>)> {
    let (line, blobs) = content::collecting(|| serde_json::to_vec(value));
    Ok((line?, blobs))
}

/// Stores each blob in `folder` unless it is already there.
pub(crate) fn store(folder: &Path, blobs: &[Blob]) -> io::Result<()> {
    if blobs.is_empty() {
        return Ok(());
    }
    fs::create_dir_all(folder)?;
    for (hash, bytes) in blobs {
        store_one(folder, hash, bytes)?;
    }
    Ok(())
}

fn store_one(folder: &Path, hash: &str, bytes: &Arc<Vec<u8>>) -> io::Result<()> {
    if !content::is_blob_name(hash) {
        return Err(io::Error::other("not a content hash"));
    }
    let path = folder.join(hash);
    if fs::symlink_metadata(&path).is_ok_and(|m| m.is_file() && m.len() == bytes.len() as u64) {
        return Ok(());
    }
    let temp = folder.join(format!(".{hash}.{}.tmp", std::process::id()));
    let written = (|| {
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .custom_flags(nix::libc::O_NOFOLLOW)
            .open(&temp)?;
        file.write_all(bytes)?;
        fs::rename(&temp, &path)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&temp);
    }
    written
}
