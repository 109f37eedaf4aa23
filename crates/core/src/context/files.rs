//! Instruction files: `AGENTS.md` from the project root down to the working folder, and the
//! user's global one, read as codex reads them.
//!
//! In each folder the first of `AGENTS.override.md`, `AGENTS.md`, `CLAUDE.md`, `GEMINI.md`
//! that exists is taken (the fallback names only where no `AGENTS.md` is), so a project
//! written for another agent still gives its instructions. The project root is the nearest
//! folder up from the working folder holding `.git` (the working folder itself outside git).
//! Files are given global first, then from the root down: the nearest to the working folder
//! comes last and wins where they conflict. All of them together are cut at [`CONTEXT_CAP`]
//! bytes, with a note in the text saying so.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::ProjectContext;

/// Bytes of instruction files given to the models in all (codex's default cap): a file past
/// it is cut, and the files after it are left out, each with a note.
pub const CONTEXT_CAP: u64 = 32 * 1024;

/// The names looked for in each folder, in order of preference.
const NAMES: &[&str] = &["AGENTS.override.md", "AGENTS.md", "CLAUDE.md", "GEMINI.md"];

/// Where an instruction file came from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileOrigin {
    /// The user's global file, in their versus config folder.
    Global,
    /// A file of the project (from its root down to the working folder).
    #[default]
    Project,
}

/// One instruction file given to the models.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ContextFile {
    /// Global or project.
    #[serde(default)]
    pub origin: FileOrigin,
    /// Its path: relative to the project root for a project file, absolute for the global one.
    #[serde(default)]
    pub path: String,
    /// Its size on disk in bytes.
    #[serde(default)]
    pub bytes: u64,
    /// The bytes of it the models were given (less than `bytes` when it was cut).
    #[serde(default)]
    pub given: u64,
    /// blake3 of the text given (16 hex digits).
    #[serde(default)]
    pub hash: String,
    /// The text given (not kept in the session log: the project holds it, the hash names it).
    #[serde(skip)]
    pub text: String,
}

impl ContextFile {
    /// Whether it was cut at the cap.
    pub fn cut(&self) -> bool {
        self.given < self.bytes
    }
}

/// The nearest folder at or above `folder` holding `.git`, else `folder` itself.
fn project_root(folder: &Path) -> PathBuf {
    folder
        .ancestors()
        .find(|dir| dir.join(".git").symlink_metadata().is_ok())
        .unwrap_or(folder)
        .to_path_buf()
}

/// Reads the instruction files into `context`.
pub(super) fn gather(project: &Path, user_dir: Option<&Path>, context: &mut ProjectContext) {
    let mut budget = CONTEXT_CAP;
    if let Some(dir) = user_dir {
        for name in &NAMES[..2] {
            let path = dir.join(name);
            match crate::fsutil::read_head(&path, budget) {
                Ok((bytes, len)) => {
                    push(
                        context,
                        FileOrigin::Global,
                        path.display().to_string(),
                        bytes,
                        len,
                        &mut budget,
                    );
                    break;
                }
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
                Err(err) => {
                    context
                        .notes
                        .push(format!("{} was left out: {err}", path.display()));
                    break;
                }
            }
        }
    }
    let root = project_root(project);
    let below = project.strip_prefix(&root).unwrap_or(Path::new(""));
    let mut folders = vec![String::new()];
    let mut rel = String::new();
    for part in below.components() {
        if !rel.is_empty() {
            rel.push('/');
        }
        rel.push_str(&part.as_os_str().to_string_lossy());
        folders.push(rel.clone());
    }
    for folder in folders {
        for name in NAMES {
            let rel = if folder.is_empty() {
                (*name).to_string()
            } else {
                format!("{folder}/{name}")
            };
            match crate::fsutil::read_head_beneath(&root, &rel, budget) {
                Ok((bytes, len)) => {
                    push(context, FileOrigin::Project, rel, bytes, len, &mut budget);
                    break;
                }
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
                Err(err) => {
                    // A link or a folder by that name: left out, said, and the next name
                    // of the folder is not tried (it is not a fallback for a broken file).
                    context.notes.push(format!("{rel} was left out: {err}"));
                    break;
                }
            }
        }
    }
}

fn push(
    context: &mut ProjectContext,
    origin: FileOrigin,
    path: String,
    bytes: Vec<u8>,
    len: u64,
    budget: &mut u64,
) {
    let mut text = String::from_utf8_lossy(&bytes).into_owned();
    if (bytes.len() as u64) < len {
        // Cut on a character: a partial one at the end of the head is dropped.
        while text.ends_with('\u{FFFD}') && !bytes.ends_with("\u{FFFD}".as_bytes()) {
            text.pop();
        }
    }
    let given = bytes.len() as u64;
    *budget = budget.saturating_sub(given);
    context.files.push(ContextFile {
        origin,
        path,
        bytes: len,
        given,
        hash: super::short_hash(text.as_bytes()),
        text,
    });
}

/// The files' section of the system prompt (nothing without files).
pub(super) fn render(files: &[ContextFile], out: &mut String) {
    if files.is_empty() {
        return;
    }
    out.push_str(
        "# Instructions from AGENTS.md files\n\n\
         The user and the project left these instructions for coding agents. Follow them where \
         they apply. They come in order: the user's global file first, then the project's from \
         its root down to the working folder; where they conflict, the later (nearer) file wins. \
         The user's prompt wins over all of them.\n",
    );
    for file in files {
        let whose = match file.origin {
            FileOrigin::Global => " (the user's global instructions)",
            FileOrigin::Project => "",
        };
        out.push_str(&format!("\n## {}{whose}\n\n", file.path));
        out.push_str(file.text.trim_end());
        out.push('\n');
        if file.cut() {
            out.push_str(&format!(
                "\n[versus: this file holds {} bytes; only its first {} are given here, the \
                 {} KiB cap on instruction files was reached. Read the rest with read_file if \
                 you need it.]\n",
                file.bytes,
                file.given,
                CONTEXT_CAP / 1024
            ));
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn gathered(project: &Path, user: Option<&Path>) -> ProjectContext {
        let mut context = ProjectContext::default();
        gather(project, user, &mut context);
        context
    }

    #[test]
    fn root_down_to_the_working_folder_override_and_fallback_names() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        std::fs::create_dir(root.join(".git")).unwrap();
        write(&root.join("AGENTS.md"), "root rules\n");
        write(&root.join("CLAUDE.md"), "not read: AGENTS.md is here\n");
        write(&root.join("a/CLAUDE.md"), "a rules\n");
        write(&root.join("a/b/AGENTS.md"), "b plain\n");
        write(&root.join("a/b/AGENTS.override.md"), "b override\n");
        write(&root.join("other/AGENTS.md"), "not on the way\n");
        let user = root.join("user");
        write(&user.join("AGENTS.md"), "global rules\n");
        let context = gathered(&root.join("a/b"), Some(&user));
        let paths: Vec<&str> = context.files.iter().map(|f| f.path.as_str()).collect();
        let global = user.join("AGENTS.md").display().to_string();
        assert_eq!(
            paths,
            [
                global.as_str(),
                "AGENTS.md",
                "a/CLAUDE.md",
                "a/b/AGENTS.override.md"
            ]
        );
        let text = context.prompt_text();
        let order: Vec<usize> = ["global rules", "root rules", "a rules", "b override"]
            .iter()
            .map(|t| text.find(t).unwrap())
            .collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{text}");
        assert!(!text.contains("not read") && !text.contains("b plain"));
        assert!(!text.contains("not on the way"));
        assert!(context.notes.is_empty());
    }

    #[test]
    fn a_link_is_never_followed_and_a_long_file_is_cut_with_a_note() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let secret = root.join("secret.txt");
        write(&secret, "SECRET KEY\n");
        let project = root.join("p");
        std::fs::create_dir_all(project.join("sub")).unwrap();
        std::fs::create_dir(project.join(".git")).unwrap();
        std::os::unix::fs::symlink(&secret, project.join("AGENTS.md")).unwrap();
        let long = "x".repeat(CONTEXT_CAP as usize + 100);
        write(&project.join("sub/AGENTS.md"), &long);
        let context = gathered(&project.join("sub"), None);
        assert_eq!(context.files.len(), 1);
        let file = &context.files[0];
        assert_eq!(file.path, "sub/AGENTS.md");
        assert!(file.cut());
        assert_eq!(file.given, CONTEXT_CAP);
        assert!(
            context
                .prompt_text()
                .contains("only its first 32768 are given")
        );
        // The link is refused and said; what it names is never read.
        assert!(context.notes[0].contains("symlink"), "{:?}", context.notes);
        assert!(!context.prompt_text().contains("SECRET"));
    }
}
