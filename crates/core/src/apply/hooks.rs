//! Test hooks of the apply engine: stop an apply after some writes as a crash would, pause it
//! so a test can SIGKILL the process at a known point, or change a file in the middle as an
//! editor would. They exist only with the `test-hooks` feature, which nothing but the
//! package's own tests and benches turns on (Cargo.toml: the dev-dependency of the package on
//! itself), so a release build carries none of them: there [`Hooks`] is empty and
//! [`Hooks::at`] does nothing. docs/ARCHITECTURE.md ("Test hooks") says how to check.

#[cfg(feature = "test-hooks")]
pub use enabled::{EditorSave, Hooks};

/// With the feature off: no hook, nothing to do at a crash point.
#[cfg(not(feature = "test-hooks"))]
#[derive(Debug, Clone, Default)]
pub struct Hooks {}

#[cfg(not(feature = "test-hooks"))]
impl Hooks {
    /// Nothing: release builds have no hooks.
    #[inline(always)]
    pub fn at(&self, _root: &std::path::Path, _done: usize) -> super::Result<()> {
        Ok(())
    }
}

#[cfg(feature = "test-hooks")]
mod enabled {
    use std::fs;
    use std::path::{Path, PathBuf};

    use super::super::engine::ApplyEngine;
    use super::super::{ApplyError, Result};

    /// How the test hook [`ApplyEngine::save_during_apply`] changes a path mid-apply.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum EditorSave {
        /// Written in place (same inode).
        InPlace,
        /// A new file renamed over the path.
        ByRename,
        /// The link at the path re-pointed to another target.
        Repoint,
    }

    /// The hooks set on one engine.
    #[derive(Debug, Clone, Default)]
    pub struct Hooks {
        fail_after_writes: Option<usize>,
        pause_after_writes: Option<(usize, PathBuf)>,
        save_during_apply: Option<(usize, String, Vec<u8>, EditorSave)>,
    }

    impl Hooks {
        /// Where the hooks act: before user-file write number `done` (counting from 0), or
        /// with `done` equal to the number of writes, after the last one and before the
        /// commit.
        pub fn at(&self, root: &Path, done: usize) -> Result<()> {
            if let Some((n, rel, bytes, how)) = &self.save_during_apply
                && *n == done
            {
                let path = root.join(rel);
                let temp = root.join(format!("{rel}.editor-save"));
                let saved = match how {
                    EditorSave::ByRename => {
                        fs::write(&temp, bytes).and_then(|()| fs::rename(&temp, &path))
                    }
                    EditorSave::InPlace => fs::OpenOptions::new()
                        .write(true)
                        .truncate(true)
                        .open(&path)
                        .and_then(|mut file| std::io::Write::write_all(&mut file, bytes)),
                    EditorSave::Repoint => {
                        let target = String::from_utf8_lossy(bytes).into_owned();
                        std::os::unix::fs::symlink(target, &temp)
                            .and_then(|()| fs::rename(&temp, &path))
                    }
                };
                saved.map_err(|e| ApplyError::io("write", &path, e))?;
            }
            if self.fail_after_writes == Some(done) {
                return Err(ApplyError::InjectedFailure { after: done });
            }
            if let Some((n, marker)) = &self.pause_after_writes
                && *n == done
            {
                let _ = fs::write(marker, done.to_string());
                loop {
                    std::thread::sleep(std::time::Duration::from_secs(3600));
                }
            }
            Ok(())
        }
    }

    impl ApplyEngine {
        /// Test hook: stop an apply after `n` user-file writes, without a commit record,
        /// exactly as a crash at that point would leave things (`n` = all of them: after the
        /// last write, before the commit).
        pub fn fail_after_writes(mut self, n: usize) -> Self {
            self.hooks.fail_after_writes = Some(n);
            self
        }

        /// Test hook: after `n` user-file writes, create the file `ready_marker` and then
        /// sleep forever, so a test can kill the process (SIGKILL) at a known point in the
        /// middle of an apply, as a real crash would.
        pub fn pause_after_writes(mut self, n: usize, ready_marker: PathBuf) -> Self {
            self.hooks.pause_after_writes = Some((n, ready_marker));
            self
        }

        /// Test hook: before user-file write number `n`, change the project path `rel` as
        /// another program would in the middle of an apply (see [`EditorSave`]), with `bytes`
        /// as the new content or link target.
        pub fn save_during_apply(
            mut self,
            n: usize,
            rel: &str,
            bytes: &[u8],
            how: EditorSave,
        ) -> Self {
            self.hooks.save_during_apply = Some((n, rel.to_string(), bytes.to_vec(), how));
            self
        }
    }
}
