//! Everything a tool call runs with: the model's file view, its limits, its cancellation.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::exec::Sandbox;
use crate::workspace::FileView;

/// Limits that spec/tools.md gives as defaults; a recipe may change them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolLimits {
    /// read_file: lines shown per call.
    pub read_max_lines: usize,
    /// read_file: bytes of output per call (never a partial line).
    pub read_max_bytes: usize,
    /// read_file: characters per line before it is cut.
    pub read_max_line_chars: usize,
    /// bash: timeout when the model gives none.
    pub bash_default_timeout: Duration,
    /// bash: the longest timeout a model may ask for.
    pub bash_max_timeout: Duration,
    /// bash: bytes of output returned to the model (head and tail kept).
    pub bash_output_max_bytes: usize,
    /// bash: lines of output returned to the model (head and tail kept).
    pub bash_output_max_lines: usize,
    /// bash: size limit of the file a long output is saved to (its first and last halves
    /// are kept past it).
    pub bash_spill_max_bytes: u64,
    /// bash: allowed command prefixes (`None`: any command).
    pub bash_allowlist: Option<Vec<String>>,
    /// web_fetch: allow loopback, private and link-local addresses.
    pub allow_local_fetch: bool,
    /// web_fetch: whole-request timeout.
    pub fetch_timeout: Duration,
    /// web_fetch: bytes read from the server at most.
    pub fetch_max_download: usize,
    /// web_fetch: bytes of text returned to the model.
    pub fetch_max_return: usize,
    /// search_code: matches returned.
    pub search_max_matches: usize,
    /// search_code: characters per printed line.
    pub search_max_line_chars: usize,
    /// search_files: paths returned.
    pub search_max_files: usize,
    /// list_directory: entries returned.
    pub list_max_entries: usize,
    /// Wall time of one call of a tool that works on a blocking thread (read, search, list,
    /// write, edit, patch): past it the model is told the call timed out and the work is
    /// abandoned (told to stop, and never waited for).
    pub blocking_timeout: Duration,
}

impl Default for ToolLimits {
    fn default() -> Self {
        Self {
            read_max_lines: 2000,
            read_max_bytes: 50 * 1024,
            read_max_line_chars: 2000,
            bash_default_timeout: Duration::from_secs(120),
            bash_max_timeout: Duration::from_secs(600),
            bash_output_max_bytes: 50 * 1024,
            bash_output_max_lines: 2000,
            bash_spill_max_bytes: 64 * 1024 * 1024,
            bash_allowlist: None,
            allow_local_fetch: false,
            fetch_timeout: Duration::from_secs(30),
            fetch_max_download: 5 * 1024 * 1024,
            fetch_max_return: 100 * 1024,
            search_max_matches: 100,
            search_max_line_chars: 500,
            search_max_files: 1000,
            list_max_entries: 500,
            blocking_timeout: Duration::from_secs(120),
        }
    }
}

/// The context of one tool call.
#[derive(Clone)]
pub struct ToolContext {
    /// The calling model's view of the project.
    pub view: Arc<dyn FileView>,
    /// Limits in force for this run.
    pub limits: ToolLimits,
    /// The provider's id for this call (proposal provenance).
    pub call_id: String,
    /// Fires when the user cancels the model or the run; long tools stop promptly.
    pub cancel: CancellationToken,
    /// Folder where bash saves full outputs that were too long to return.
    pub spill_dir: PathBuf,
    /// Where bash runs: the workspace's sandbox (shared by every call of one model).
    pub sandbox: Arc<Sandbox>,
    /// Folders outside the workspace that read_file may read by absolute path (the user's
    /// and a recipe's skills): read-only, no link followed out of them.
    pub read_roots: Arc<[PathBuf]>,
    /// Runs `spawn_agent`'s sub-agents: set by the agent loop when sub-agents are on (the
    /// tools cannot run an agent themselves); `None` refuses the call.
    pub spawner: Option<Arc<dyn super::spawn_agent::Spawner>>,
}

impl ToolContext {
    /// A context with default limits, a fresh cancellation token, spill files in the system
    /// temp folder and the default sandbox over the view's root.
    pub fn new(view: Arc<dyn FileView>) -> Self {
        let sandbox = Arc::new(Sandbox::for_dir(view.root()));
        Self {
            view,
            limits: ToolLimits::default(),
            call_id: String::new(),
            cancel: CancellationToken::new(),
            spill_dir: std::env::temp_dir().join("versus-tool-output"),
            sandbox,
            read_roots: Arc::from(Vec::new()),
            spawner: None,
        }
    }
}
