//! The listing as a tree: entries collected from the walk and the overlay, chosen breadth
//! first under the entry cap, printed depth first.
//!
//! Choosing breadth first means a capped listing still shows every top-level entry before any
//! deep one, so one huge subfolder cannot hide the shape of the project.

use std::collections::{BTreeMap, HashSet, VecDeque};

/// What an entry is, as the listing shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// A folder (`name/`).
    Dir,
    /// A regular file and its size in bytes (`name (12 KB)`).
    File(u64),
    /// A symbolic link, not followed (`name@`).
    Symlink,
    /// A socket, fifo or device (`name`).
    Other,
}

/// Entries below the listed folder, keyed by their `/`-separated path relative to it.
#[derive(Debug, Default)]
pub(super) struct Tree {
    entries: BTreeMap<String, Kind>,
}

impl Tree {
    /// Adds or replaces an entry.
    pub(super) fn insert(&mut self, rel: String, kind: Kind) {
        self.entries.insert(rel, kind);
    }

    /// Adds a file the model wrote in memory, and the folders leading to it, as deep as the
    /// listing goes. A file replacing a disk entry takes its place with the in-memory size.
    pub(super) fn insert_written(&mut self, rel: &str, len: u64, depth: usize) {
        let parts: Vec<&str> = rel.split('/').collect();
        for level in 1..parts.len() {
            if level > depth {
                return;
            }
            let dir = parts[..level].join("/");
            self.entries.insert(dir, Kind::Dir);
        }
        if parts.len() <= depth {
            self.entries.insert(rel.to_string(), Kind::File(len));
        }
    }

    /// Total number of entries.
    pub(super) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Renders the tree under a `header` line, showing at most `max` entries, and returns the
    /// text plus how many entries were left out.
    pub(super) fn render(&self, header: &str, max: usize) -> (String, usize) {
        let children = self.children();
        let chosen = choose_breadth_first(&children, max);
        let mut out = String::new();
        out.push_str(header);
        out.push('\n');
        let mut stack: Vec<(&str, usize)> = Vec::new();
        push_children(&children, "", 1, &mut stack);
        while let Some((rel, level)) = stack.pop() {
            if !chosen.contains(rel) {
                continue;
            }
            let name = rel.rsplit('/').next().unwrap_or(rel);
            for _ in 0..level {
                out.push_str("  ");
            }
            out.push_str(name);
            match self.entries.get(rel) {
                Some(Kind::Dir) => out.push('/'),
                Some(Kind::Symlink) => out.push('@'),
                Some(Kind::File(len)) => {
                    out.push_str(" (");
                    out.push_str(&human_size(*len));
                    out.push(')');
                }
                Some(Kind::Other) | None => {}
            }
            out.push('\n');
            push_children(&children, rel, level + 1, &mut stack);
        }
        (out, self.entries.len() - chosen.len())
    }

    /// Each folder's children, sorted case-insensitively (ties broken by exact name).
    fn children(&self) -> BTreeMap<&str, Vec<&str>> {
        let mut map: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for rel in self.entries.keys() {
            let parent = rel.rfind('/').map_or("", |i| &rel[..i]);
            map.entry(parent).or_default().push(rel.as_str());
        }
        for list in map.values_mut() {
            list.sort_by_cached_key(|rel| {
                let name = rel.rsplit('/').next().unwrap_or(rel);
                (name.to_lowercase(), name.to_string())
            });
        }
        map
    }
}

/// Pushes a folder's children on the render stack so they pop in sorted order.
fn push_children<'a>(
    children: &BTreeMap<&'a str, Vec<&'a str>>,
    parent: &str,
    level: usize,
    stack: &mut Vec<(&'a str, usize)>,
) {
    if let Some(list) = children.get(parent) {
        stack.extend(list.iter().rev().map(|rel| (*rel, level)));
    }
}

/// The first `max` entries in breadth-first order (parents always before their children).
fn choose_breadth_first<'a>(
    children: &BTreeMap<&'a str, Vec<&'a str>>,
    max: usize,
) -> HashSet<&'a str> {
    let mut chosen = HashSet::new();
    let mut queue: VecDeque<&str> = VecDeque::from([""]);
    while let Some(parent) = queue.pop_front() {
        for rel in children.get(parent).into_iter().flatten() {
            if chosen.len() == max {
                return chosen;
            }
            chosen.insert(*rel);
            queue.push_back(rel);
        }
    }
    chosen
}

/// A size as people read it: bytes under 1 KB, then KB, MB, GB with at most one decimal
/// (`512 B`, `1.5 KB`, `12 KB`, `3.2 MB`).
pub(super) fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KB", "MB", "GB", "TB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    loop {
        // Round first, so 1023.96 KB becomes 1 MB rather than "1024 KB".
        let rounded = if value < 10.0 {
            (value * 10.0).round() / 10.0
        } else {
            value.round()
        };
        if rounded >= 1024.0 && unit + 1 < UNITS.len() {
            value /= 1024.0;
            unit += 1;
            continue;
        }
        return if rounded.fract() == 0.0 {
            format!("{rounded:.0} {}", UNITS[unit])
        } else {
            format!("{rounded:.1} {}", UNITS[unit])
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_like_people_write_them() {
        assert_eq!(human_size(0), "0 B");
        assert_eq!(human_size(1023), "1023 B");
        assert_eq!(human_size(1024), "1 KB");
        assert_eq!(human_size(1536), "1.5 KB");
        assert_eq!(human_size(12 * 1024 + 300), "12 KB");
        assert_eq!(human_size(1024 * 1024 - 1), "1 MB");
        assert_eq!(human_size(3 * 1024 * 1024 + 200 * 1024), "3.2 MB");
        assert_eq!(human_size(5 * 1024 * 1024 * 1024), "5 GB");
    }

    fn sample() -> Tree {
        let mut t = Tree::default();
        t.insert("b".into(), Kind::Dir);
        t.insert("b/z.txt".into(), Kind::File(3));
        t.insert("b/A.txt".into(), Kind::File(2048));
        t.insert("a.rs".into(), Kind::File(10));
        t.insert("C.md".into(), Kind::File(0));
        t.insert("link".into(), Kind::Symlink);
        t
    }

    #[test]
    fn renders_sorted_case_insensitively_with_markers() {
        let (text, more) = sample().render("./", 500);
        assert_eq!(
            text,
            "./\n  a.rs (10 B)\n  b/\n    A.txt (2 KB)\n    z.txt (3 B)\n  C.md (0 B)\n  link@\n"
        );
        assert_eq!(more, 0);
    }

    #[test]
    fn the_cap_keeps_shallow_entries_first() {
        let (text, more) = sample().render("./", 4);
        assert_eq!(text, "./\n  a.rs (10 B)\n  b/\n  C.md (0 B)\n  link@\n");
        assert_eq!(more, 2);
    }

    #[test]
    fn written_files_bring_their_folders_within_depth() {
        let mut t = Tree::default();
        t.insert_written("new/deeper/file.rs", 5, 2);
        let (text, _) = t.render("./", 500);
        assert_eq!(text, "./\n  new/\n    deeper/\n");
        t.insert_written("top.rs", 1500, 2);
        assert_eq!(t.len(), 3);
    }
}
