//! [`WorkspaceError`]: why a base capture, a workspace creation, a setup command or a cleanup
//! failed.
//!
//! Kept apart from the tools' `ToolError`: these errors are read by the user (and the agent
//! loop), not by a model, so each one names the file, repository or command involved and what
//! to do about it.

use std::io;
use std::path::PathBuf;

/// Everything that can go wrong while capturing a base or managing a workspace.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    /// A filesystem operation failed on a given path.
    #[error("could not {op} {}: {source} (check that the path exists and is readable/writable)", path.display())]
    Io {
        /// What was being done (`read`, `copy`, `create folder`, ...).
        op: &'static str,
        /// The path involved.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// A git operation on the project's repository failed.
    #[error("git could not {op} in {}: {source}", repo.display())]
    Git {
        /// What was being done (`add a worktree`, `read the status`, ...).
        op: &'static str,
        /// The repository (or project) path.
        repo: PathBuf,
        /// The libgit2 error.
        #[source]
        source: git2::Error,
    },
    /// Walking the project tree failed (an unreadable folder, a broken ignore file).
    #[error("could not walk {}: {message} (fix the permissions or the ignore file it names)", root.display())]
    Walk {
        /// Root of the walk.
        root: PathBuf,
        /// What the walker reported.
        message: String,
    },
    /// The folder that holds every workspace is not this user's own private folder (another
    /// user made it first in a shared temp folder, or it is a link): workspaces are never put,
    /// nor leftovers looked for, where someone else could read or plant them.
    #[error(
        "the workspace folder {} is not safe to use: {reason}; remove it, or point TMPDIR at a folder of your own",
        path.display()
    )]
    UnsafeParent {
        /// The folder.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// Some leftover workspace folders could not be removed (the others were).
    #[error(
        "removed {removed} workspace folder(s), but could not remove: {failed}; remove them by hand (they are versus's own folders, nothing of yours)"
    )]
    Cleanup {
        /// How many were removed.
        removed: usize,
        /// Each failure, with its folder and reason.
        failed: String,
    },
    /// The workspace setup command exited with a failure.
    #[error(
        "the setup command `{command}` failed in {} ({status}){hint}; fix the command in the recipe or config, or run it by hand there to see why. Output:\n{output}",
        dir.display()
    )]
    Setup {
        /// The command as configured.
        command: String,
        /// The folder it ran in.
        dir: PathBuf,
        /// `exit code N` or `killed by a signal`.
        status: String,
        /// `; ` and what would let it run, when that is known (a network failure in a
        /// sandbox without the network names the switch), else empty.
        hint: String,
        /// Its combined stdout and stderr (tail kept if long).
        output: String,
    },
}

impl WorkspaceError {
    /// Shorthand for [`WorkspaceError::Io`].
    pub(crate) fn io(op: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        Self::Io {
            op,
            path: path.into(),
            source,
        }
    }

    /// Shorthand for [`WorkspaceError::Git`].
    pub(crate) fn git(op: &'static str, repo: impl Into<PathBuf>, source: git2::Error) -> Self {
        Self::Git {
            op,
            repo: repo.into(),
            source,
        }
    }
}
