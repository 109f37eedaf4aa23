//! The [`FileView`] trait: one model's view of the project's files.

use std::io::{self, Read};
use std::path::Path;
use std::sync::Arc;

use super::path::{PathError, ProjectPath};

/// Which tool call produced a write, so a proposal can say where each change came from.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WriteOrigin {
    /// Tool name (`write_file`, `edit_file`, `apply_patch`, `bash`).
    pub tool: String,
    /// The provider's id for the tool call (empty when run by hand with `versus tool`).
    pub call_id: String,
    /// The sub-agent that made the call (`coder #1`), `None` for the model itself: a
    /// sub-agent's writes are its parent's proposals, and review and `versus sessions show`
    /// say which of them a sub-agent made. Absent in records written before sub-agents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
}

impl WriteOrigin {
    /// Origin for a tool call.
    pub fn new(tool: impl Into<String>, call_id: impl Into<String>) -> Self {
        Self {
            tool: tool.into(),
            call_id: call_id.into(),
            agent: None,
        }
    }
}

/// A sub-agent's view of its parent's workspace: the parent's view, with every write and
/// delete marked as the sub-agent's ([`WriteOrigin::agent`]), so they become the parent's
/// proposals with provenance naming the sub-agent. A mark already set (a sub-agent of a
/// sub-agent) is kept: the agent that made the call is named.
pub struct AttributedView {
    inner: Arc<dyn FileView>,
    agent: String,
}

impl AttributedView {
    /// `inner` with writes marked as `agent`'s.
    pub fn new(inner: Arc<dyn FileView>, agent: impl Into<String>) -> Self {
        Self {
            inner,
            agent: agent.into(),
        }
    }

    fn mark(&self, origin: &WriteOrigin) -> WriteOrigin {
        let mut origin = origin.clone();
        if origin.agent.is_none() {
            origin.agent = Some(self.agent.clone());
        }
        origin
    }
}

impl FileView for AttributedView {
    fn root(&self) -> &Path {
        self.inner.root()
    }

    fn resolve(&self, raw: &str) -> Result<ProjectPath, PathError> {
        self.inner.resolve(raw)
    }

    fn metadata(&self, path: &ProjectPath) -> io::Result<EntryMeta> {
        self.inner.metadata(path)
    }

    fn open(&self, path: &ProjectPath) -> io::Result<Box<dyn Read + Send>> {
        self.inner.open(path)
    }

    fn read(&self, path: &ProjectPath) -> io::Result<Vec<u8>> {
        self.inner.read(path)
    }

    fn write(&self, path: &ProjectPath, content: &[u8], origin: &WriteOrigin) -> io::Result<()> {
        self.inner.write(path, content, &self.mark(origin))
    }

    fn delete(&self, path: &ProjectPath, origin: &WriteOrigin) -> io::Result<()> {
        self.inner.delete(path, &self.mark(origin))
    }

    fn written_by_model(&self, path: &ProjectPath) -> bool {
        self.inner.written_by_model(path)
    }

    fn pending(&self) -> Vec<PendingChange> {
        self.inner.pending()
    }
}

/// What a path is, as the model's view sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A regular file (or a symlink to one inside the project).
    File,
    /// A directory.
    Dir,
    /// Anything else (socket, fifo, device).
    Other,
}

/// Metadata the tools need without reading content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryMeta {
    /// File, directory or other.
    pub kind: EntryKind,
    /// Size in bytes.
    pub len: u64,
}

/// A change that exists only in the view, not on disk (the overlay workspace mode keeps
/// proposals in memory). Listing and search merge these over what they find on disk.
#[derive(Debug, Clone)]
pub enum PendingChange {
    /// The file at `rel` has this content in the view.
    Write {
        /// `/`-separated path relative to the root.
        rel: String,
        /// Full new content.
        content: Arc<Vec<u8>>,
    },
    /// The file at `rel` is deleted in the view.
    Delete {
        /// `/`-separated path relative to the root.
        rel: String,
    },
}

/// One model's view of the project: reads see its own earlier writes, writes never reach
/// anybody else's view.
///
/// Tools depend only on this trait. The direct implementation writes to a directory; the
/// proposal layer records every write as a proposal while keeping the same contract.
pub trait FileView: Send + Sync {
    /// The workspace root (canonical). Bash runs here; searches start here.
    fn root(&self) -> &Path;

    /// Resolves a path the model gave, refusing anything outside the project.
    fn resolve(&self, raw: &str) -> Result<ProjectPath, PathError> {
        ProjectPath::resolve(self.root(), raw)
    }

    /// Kind and size of the entry at `path`, following symlinks that stay inside.
    fn metadata(&self, path: &ProjectPath) -> io::Result<EntryMeta>;

    /// Opens a file for streaming reads (large files are never loaded whole by read_file).
    fn open(&self, path: &ProjectPath) -> io::Result<Box<dyn Read + Send>>;

    /// Reads a whole file.
    fn read(&self, path: &ProjectPath) -> io::Result<Vec<u8>> {
        let mut buf = Vec::new();
        self.open(path)?.read_to_end(&mut buf)?;
        Ok(buf)
    }

    /// Creates or replaces a file (parents created). Must be atomic for any reader.
    fn write(&self, path: &ProjectPath, content: &[u8], origin: &WriteOrigin) -> io::Result<()>;

    /// Deletes a file.
    fn delete(&self, path: &ProjectPath, origin: &WriteOrigin) -> io::Result<()>;

    /// True when the file's current content came from this model's own earlier write, so
    /// write_file should take the model's bytes literally instead of adapting line endings.
    fn written_by_model(&self, path: &ProjectPath) -> bool;

    /// Changes held only in memory (overlay mode); empty when every change is on disk.
    fn pending(&self) -> Vec<PendingChange> {
        Vec::new()
    }
}
