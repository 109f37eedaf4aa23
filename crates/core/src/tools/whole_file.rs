//! Reading a whole workspace file for a tool that rewrites it (write_file, edit_file,
//! apply_patch): only a regular file, and only up to [`MAX_WHOLE_FILE`].
//!
//! The model makes the workspace with bash before it calls these tools, and they run in versus
//! itself, on the host. Opening a fifo it made (`mkfifo f`, then `write_file f`) blocked in
//! `open` forever: the run's timeout, Ctrl+C and SIGTERM all waited on that thread, so only
//! SIGKILL ended versus. Reading a sparse file whole (`truncate -s 30G f`, then `edit_file f`)
//! took as much of the host's memory as the model asked for. Every such read goes through
//! [`read_whole`], which checks the kind and size first and never reads past the bound.
//! (Tools run one at a time per model and every process a bash call starts dies with it, so
//! nothing of the model's changes the file between the check and the read.)

use std::io::Read;

use crate::workspace::{EntryKind, FileView, MAX_PROPOSED_FILE, ProjectPath};

use super::error::ToolError;

/// The largest file the editing tools read whole: the largest the change scan proposes
/// (16 MiB). A bigger file could not reach the review anyway.
pub(crate) const MAX_WHOLE_FILE: u64 = MAX_PROPOSED_FILE;

/// The bytes of the regular file at `path`, at most [`MAX_WHOLE_FILE`] of them; `tool` names
/// the tool in the errors. A folder, a fifo, a socket or a device is an error before anything
/// is opened, and so is a file over the bound.
pub(crate) fn read_whole(
    view: &dyn FileView,
    path: &ProjectPath,
    tool: &str,
) -> Result<Vec<u8>, ToolError> {
    let meta = view
        .metadata(path)
        .map_err(|e| ToolError::io("reading", path.display(), e))?;
    match meta.kind {
        EntryKind::File => {}
        EntryKind::Dir => {
            return Err(ToolError::failed(format!(
                "{path} is a directory, not a file; give the path of a file inside it"
            )));
        }
        EntryKind::Other => {
            return Err(ToolError::failed(format!(
                "{path} is not a regular file (socket, pipe or device); {tool} only changes \
                 regular files"
            )));
        }
    }
    if meta.len > MAX_WHOLE_FILE {
        return Err(too_large(path, meta.len, tool));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len).unwrap_or(0));
    view.open(path)
        .and_then(|file| file.take(MAX_WHOLE_FILE + 1).read_to_end(&mut bytes))
        .map_err(|e| ToolError::io("reading", path.display(), e))?;
    if bytes.len() as u64 > MAX_WHOLE_FILE {
        return Err(too_large(path, bytes.len() as u64, tool));
    }
    Ok(bytes)
}

fn too_large(path: &ProjectPath, len: u64, tool: &str) -> ToolError {
    ToolError::failed(format!(
        "{path} is too large for {tool} ({len} bytes, over the {} MiB a file tool reads \
         whole; a file that large is not proposed for review either)",
        MAX_WHOLE_FILE / (1024 * 1024)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::DirectView;

    #[test]
    fn fifos_and_files_over_the_bound_are_refused_before_any_read() {
        let dir = tempfile::tempdir().unwrap();
        let view = DirectView::new(dir.path()).unwrap();
        nix::unistd::mkfifo(&dir.path().join("pipe"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        let big = std::fs::File::create(dir.path().join("big")).unwrap();
        big.set_len(MAX_WHOLE_FILE + 1).unwrap();
        std::fs::write(dir.path().join("small"), "hi\n").unwrap();
        let path = |raw: &str| view.resolve(raw).unwrap();
        let err = read_whole(&view, &path("pipe"), "edit_file").unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
        let err = read_whole(&view, &path("big"), "edit_file").unwrap_err();
        assert!(err.to_string().contains("too large for edit_file"), "{err}");
        assert_eq!(read_whole(&view, &path("small"), "x").unwrap(), b"hi\n");
    }
}
