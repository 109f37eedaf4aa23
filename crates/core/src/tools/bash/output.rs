//! Collecting a command's output within a fixed memory budget, and cutting it for the model.
//!
//! Output is kept whole in memory only while it fits the limits. The moment it passes them,
//! everything so far goes to a spill file and from then on every chunk is streamed there, while
//! memory keeps only the first half-budget of bytes (the head) and a ring of the last
//! half-budget (the tail). A build that prints a gigabyte therefore costs about one budget of
//! memory, and the model still gets the start (usually the command and first error) and the end
//! (usually the summary), plus the path of the complete log.
//!
//! The head and tail are cut at line ends. Only a single line longer than the budget is cut
//! inside (at a UTF-8 character boundary); the marker then also gives the bytes omitted.
//! Spill writes are plain buffered file writes: they are small and local, and keeping the
//! collector synchronous keeps it testable on its own.

use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// How much output the model may receive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Budget {
    /// Bytes at most (head and tail together).
    pub max_bytes: usize,
    /// Lines at most (head and tail together).
    pub max_lines: usize,
}

impl Budget {
    fn head_bytes(&self) -> usize {
        self.max_bytes / 2
    }
    fn tail_bytes(&self) -> usize {
        self.max_bytes - self.head_bytes()
    }
    fn head_lines(&self) -> usize {
        self.max_lines.div_ceil(2)
    }
    fn tail_lines(&self) -> usize {
        self.max_lines / 2
    }
}

/// Where a too-long output is saved.
#[derive(Debug, Clone)]
pub(crate) struct SpillPlace {
    /// The folder (created on first use).
    pub dir: PathBuf,
    /// Distinguishes the file of this call (the provider's call id, or empty).
    pub call_id: String,
    /// The file's size limit: past it, the file keeps its first half and a rolling last half
    /// with a marker between (`yes` can print gigabytes a second).
    pub max_bytes: u64,
}

/// Room kept for the marker between a capped spill file's head and tail.
const SPILL_MARKER_ROOM: u64 = 200;

/// The output as the model will see it, plus the facts needed to describe what was cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rendered {
    /// Text to show: the whole output, or head, marker and tail. Ends with a newline unless
    /// empty.
    pub text: String,
    /// Set when the output was cut: the full output's file, or why it could not be saved.
    pub full: Option<Result<PathBuf, String>>,
    /// Bytes the command printed.
    pub total_bytes: u64,
    /// Lines the command printed (a last line without newline counts).
    pub total_lines: u64,
}

/// Accumulates output chunks; see the module comment.
pub(crate) struct Collector {
    budget: Budget,
    place: SpillPlace,
    total_bytes: u64,
    newlines: u64,
    last_byte: Option<u8>,
    state: State,
}

enum State {
    Whole(Vec<u8>),
    Cut {
        head: Vec<u8>,
        tail: Tail,
        spill: Spill,
    },
}

impl Collector {
    /// An empty collector.
    pub(crate) fn new(budget: Budget, place: SpillPlace) -> Self {
        let budget = Budget {
            max_bytes: budget.max_bytes.max(2),
            max_lines: budget.max_lines.max(1),
        };
        Self {
            budget,
            place,
            total_bytes: 0,
            newlines: 0,
            last_byte: None,
            state: State::Whole(Vec::new()),
        }
    }

    fn total_lines(&self) -> u64 {
        self.newlines + u64::from(self.last_byte.is_some_and(|b| b != b'\n'))
    }

    /// Adds a chunk of output.
    pub(crate) fn push(&mut self, chunk: &[u8]) {
        if chunk.is_empty() {
            return;
        }
        self.total_bytes += chunk.len() as u64;
        self.newlines += memchr::memchr_iter(b'\n', chunk).count() as u64;
        self.last_byte = chunk.last().copied();
        let over = self.total_bytes > self.budget.max_bytes as u64
            || self.total_lines() > self.budget.max_lines as u64;
        match &mut self.state {
            State::Whole(all) => {
                all.extend_from_slice(chunk);
                if over {
                    let all = std::mem::take(all);
                    self.state = self.cut(all);
                }
            }
            State::Cut { head, tail, spill } => {
                spill.write(chunk);
                let room = self.budget.head_bytes().saturating_sub(head.len());
                head.extend_from_slice(&chunk[..room.min(chunk.len())]);
                tail.push(chunk);
            }
        }
    }

    fn cut(&self, all: Vec<u8>) -> State {
        let mut spill = Spill::create(&self.place);
        spill.write(&all);
        let mut tail = Tail::new(self.budget.tail_bytes());
        tail.push(&all);
        let mut head = all;
        head.truncate(self.budget.head_bytes());
        State::Cut { head, tail, spill }
    }

    /// Ends collection and renders what the model sees.
    pub(crate) fn finish(self) -> Rendered {
        let total_lines = self.total_lines();
        let (text, full) = match self.state {
            State::Whole(all) => (String::from_utf8_lossy(&all).into_owned(), None),
            State::Cut { head, tail, spill } => {
                let full = spill.finish();
                (
                    render_cut(&head, &tail, self.budget, self.newlines),
                    Some(full),
                )
            }
        };
        let mut text = text;
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        Rendered {
            text,
            full,
            total_bytes: self.total_bytes,
            total_lines,
        }
    }
}

/// Head lines, the marker, tail lines.
fn render_cut(head: &[u8], tail: &Tail, budget: Budget, newlines: u64) -> String {
    let (head_shown, head_clean) = head_part(head, budget.head_lines());
    let ring = tail.contents();
    let (tail_shown, tail_clean) = tail_part(&ring, tail.starts_at_line(), budget.tail_lines());
    let count = |b: &[u8]| memchr::memchr_iter(b'\n', b).count() as u64;
    let omitted_lines = newlines.saturating_sub(count(head_shown) + count(tail_shown));
    let mut text = String::from_utf8_lossy(head_shown).into_owned();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    if head_clean && tail_clean {
        text.push_str(&format!("[... {omitted_lines} lines omitted ...]\n"));
    } else {
        let shown = (head_shown.len() + tail_shown.len()) as u64;
        let total = tail.total_seen();
        text.push_str(&format!(
            "[... {omitted_lines} lines omitted ({} bytes; a long line was cut) ...]\n",
            total.saturating_sub(shown)
        ));
    }
    text.push_str(&String::from_utf8_lossy(tail_shown));
    text
}

/// The first whole lines of `head` (at most `max_lines`); a first line longer than the whole
/// buffer is cut at a character boundary. Returns the part and whether it ends at a line end.
fn head_part(head: &[u8], max_lines: usize) -> (&[u8], bool) {
    let mut end = 0;
    for (taken, nl) in memchr::memchr_iter(b'\n', head).enumerate() {
        if taken == max_lines {
            break;
        }
        end = nl + 1;
    }
    if end > 0 || head.is_empty() {
        return (&head[..end], true);
    }
    (&head[..complete_chars_len(head)], false)
}

/// Length of the longest prefix of `bytes` that does not end inside a UTF-8 character.
fn complete_chars_len(bytes: &[u8]) -> usize {
    let Some(lead) = (1..=bytes.len().min(4))
        .map(|back| bytes.len() - back)
        .find(|&i| !is_continuation(bytes[i]))
    else {
        return bytes.len();
    };
    let width = match bytes[lead] {
        b if b < 0x80 => 1,
        b if b >= 0xF0 => 4,
        b if b >= 0xE0 => 3,
        b if b >= 0xC0 => 2,
        _ => 1,
    };
    if lead + width <= bytes.len() {
        bytes.len()
    } else {
        lead
    }
}

/// The last whole lines of the ring (at most `max_lines`). When the ring starts inside a line,
/// that partial line is dropped, unless it is the only one.
fn tail_part(ring: &[u8], starts_at_line: bool, max_lines: usize) -> (&[u8], bool) {
    if max_lines == 0 {
        return (&[], true);
    }
    let mut start = 0;
    if !starts_at_line {
        match memchr::memchr(b'\n', ring) {
            Some(nl) if nl + 1 < ring.len() => start = nl + 1,
            _ => {
                let mut s = 0;
                while s < ring.len() && s < 3 && is_continuation(ring[s]) {
                    s += 1;
                }
                return (&ring[s..], false);
            }
        }
    }
    let body = &ring[start..];
    let search_end = if body.ends_with(b"\n") {
        body.len() - 1
    } else {
        body.len()
    };
    // The line after the (max_lines)th newline from the end starts the tail.
    let cut = memchr::memrchr_iter(b'\n', &body[..search_end])
        .nth(max_lines - 1)
        .map_or(0, |nl| nl + 1);
    (&body[cut..], true)
}

fn is_continuation(b: u8) -> bool {
    b & 0b1100_0000 == 0b1000_0000
}

/// The last bytes seen, in a fixed-size ring.
struct Tail {
    ring: VecDeque<u8>,
    cap: usize,
    /// The byte just before the ring's first byte, once anything has been dropped.
    dropped_last: Option<u8>,
    seen: u64,
}

impl Tail {
    fn new(cap: usize) -> Self {
        Self {
            ring: VecDeque::with_capacity(cap),
            cap,
            dropped_last: None,
            seen: 0,
        }
    }

    fn push(&mut self, chunk: &[u8]) {
        self.seen += chunk.len() as u64;
        let mut chunk = chunk;
        if chunk.len() > self.cap {
            let skip = chunk.len() - self.cap;
            self.dropped_last = Some(chunk[skip - 1]);
            self.ring.clear();
            chunk = &chunk[skip..];
        }
        let overflow = (self.ring.len() + chunk.len()).saturating_sub(self.cap);
        if overflow > 0 {
            self.dropped_last = self.ring.get(overflow - 1).copied();
            self.ring.drain(..overflow);
        }
        self.ring.extend(chunk);
    }

    fn starts_at_line(&self) -> bool {
        self.dropped_last.is_none_or(|b| b == b'\n')
    }

    fn contents(&self) -> Vec<u8> {
        self.ring.iter().copied().collect()
    }

    fn total_seen(&self) -> u64 {
        self.seen
    }
}

/// The file the full output streams into once it is too long to return. Within its cap it
/// holds every byte in order; past the cap its first half stays and the rest of the file is a
/// ring of the latest bytes, put back in order (after a marker) when the command ends.
struct Spill {
    file: Result<(PathBuf, BufWriter<File>), String>,
    /// Bytes handed to the spill so far.
    written: u64,
    /// Bytes kept from the start.
    head_cap: u64,
    /// Size of the rolling tail region.
    tail_cap: u64,
}

/// Makes spill names unique within this process.
static SPILL_COUNTER: AtomicU64 = AtomicU64::new(0);

impl Spill {
    fn create(place: &SpillPlace) -> Self {
        let cap = place.max_bytes.max(2 * SPILL_MARKER_ROOM + 2);
        let head_cap = cap / 2;
        Self {
            file: open_spill_file(place)
                .map_err(|e| format!("creating a file in {}: {e}", place.dir.display())),
            written: 0,
            head_cap,
            tail_cap: cap - head_cap - SPILL_MARKER_ROOM,
        }
    }

    fn write(&mut self, chunk: &[u8]) {
        let Ok((path, out)) = &mut self.file else {
            return;
        };
        let result = place(out, chunk, self.written, self.head_cap, self.tail_cap);
        self.written += chunk.len() as u64;
        if let Err(e) = result {
            self.file = Err(format!("writing {}: {e}", path.display()));
        }
    }
}

/// Writes `chunk`, whose first byte is byte `at` of the output, where it belongs in a spill
/// file: straight on while the file is under its cap, then into the tail ring.
fn place(
    out: &mut BufWriter<File>,
    mut chunk: &[u8],
    mut at: u64,
    head_cap: u64,
    tail_cap: u64,
) -> io::Result<()> {
    let limit = head_cap + tail_cap;
    if at < limit {
        let straight = ((limit - at) as usize).min(chunk.len());
        out.write_all(&chunk[..straight])?;
        chunk = &chunk[straight..];
        at += straight as u64;
    }
    // Only the last tail_cap bytes of a chunk can survive in the ring.
    if chunk.len() as u64 > tail_cap {
        let skip = chunk.len() - tail_cap as usize;
        chunk = &chunk[skip..];
        at += skip as u64;
    }
    while !chunk.is_empty() {
        let pos = (at - head_cap) % tail_cap;
        let room = ((tail_cap - pos) as usize).min(chunk.len());
        out.seek(SeekFrom::Start(head_cap + pos))?;
        out.write_all(&chunk[..room])?;
        chunk = &chunk[room..];
        at += room as u64;
    }
    Ok(())
}

impl Spill {
    fn finish(self) -> Result<PathBuf, String> {
        let (path, mut out) = self.file?;
        let limit = self.head_cap + self.tail_cap;
        let done = out.flush().and_then(|()| {
            if self.written <= limit {
                return Ok(());
            }
            let file = out.get_mut();
            let mut ring = vec![0u8; self.tail_cap as usize];
            file.seek(SeekFrom::Start(self.head_cap))?;
            file.read_exact(&mut ring)?;
            let pos = ((self.written - self.head_cap) % self.tail_cap) as usize;
            ring.rotate_left(pos);
            let marker = format!(
                "\n[... versus: {} bytes omitted here: this log keeps the first and last {} \
                 bytes ...]\n",
                self.written - limit,
                self.head_cap
            );
            let marker = &marker.as_bytes()[..marker.len().min(SPILL_MARKER_ROOM as usize)];
            file.seek(SeekFrom::Start(self.head_cap))?;
            file.write_all(marker)?;
            file.write_all(&ring)?;
            let end = file.stream_position()?;
            file.set_len(end)
        });
        done.map_err(|e| format!("writing {}: {e}", path.display()))?;
        Ok(path)
    }
}

fn open_spill_file(place: &SpillPlace) -> io::Result<(PathBuf, BufWriter<File>)> {
    std::fs::create_dir_all(&place.dir)?;
    let stem: String = place
        .call_id
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .take(64)
        .collect();
    let stem = if stem.is_empty() {
        let millis = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        millis.to_string()
    } else {
        stem
    };
    let mut last_err = None;
    for _ in 0..16 {
        let n = SPILL_COUNTER.fetch_add(1, Ordering::Relaxed);
        let path = place
            .dir
            .join(format!("bash-{stem}-{}-{n}.log", std::process::id()));
        match OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(file) => return Ok((absolute(&path), BufWriter::new(file))),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last_err = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last_err.unwrap_or_else(|| io::Error::other("no free file name")))
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn collector(dir: &Path, max_bytes: usize, max_lines: usize) -> Collector {
        Collector::new(
            Budget {
                max_bytes,
                max_lines,
            },
            SpillPlace {
                dir: dir.join("spill"),
                call_id: "call/1".to_string(),
                max_bytes: 64 * 1024 * 1024,
            },
        )
    }

    #[test]
    fn a_spill_file_past_its_cap_keeps_its_first_and_last_bytes_in_order() {
        let d = tempfile::tempdir().unwrap();
        let cap = 1000u64;
        let mut c = Collector::new(
            Budget {
                max_bytes: 100,
                max_lines: 1000,
            },
            SpillPlace {
                dir: d.path().join("spill"),
                call_id: String::new(),
                max_bytes: cap,
            },
        );
        let all: String = (0..5000).map(|i| format!("{i:06}\n")).collect();
        // Odd chunk sizes, one larger than the whole ring, so every path is taken.
        let bytes = all.as_bytes();
        let (a, rest) = bytes.split_at(333);
        let (b, rest) = rest.split_at(2500);
        for chunk in [a, b] {
            c.push(chunk);
        }
        for chunk in rest.chunks(77) {
            c.push(chunk);
        }
        let r = c.finish();
        let spilled = std::fs::read(r.full.unwrap().unwrap()).unwrap();
        assert!(spilled.len() as u64 <= cap, "{} > {cap}", spilled.len());
        let head = (cap / 2) as usize;
        let tail = (cap - cap / 2 - SPILL_MARKER_ROOM) as usize;
        assert_eq!(&spilled[..head], &bytes[..head]);
        assert_eq!(
            &spilled[spilled.len() - tail..],
            &bytes[bytes.len() - tail..]
        );
        let marker = String::from_utf8_lossy(&spilled[head..spilled.len() - tail]).into_owned();
        let omitted = bytes.len() - head - tail;
        assert!(
            marker.contains(&format!("{omitted} bytes omitted")),
            "{marker}"
        );
        assert_eq!(r.total_bytes, bytes.len() as u64);
    }

    fn numbered(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    #[test]
    fn short_output_is_returned_whole() {
        let d = tempfile::tempdir().unwrap();
        let mut c = collector(d.path(), 1000, 10);
        c.push(b"a\nb");
        let r = c.finish();
        assert_eq!(r.text, "a\nb\n");
        assert_eq!(r.full, None);
        assert_eq!((r.total_bytes, r.total_lines), (3, 2));
        assert!(!d.path().join("spill").exists());
    }

    #[test]
    fn too_many_lines_keep_head_and_tail_and_spill_everything() {
        let d = tempfile::tempdir().unwrap();
        let mut c = collector(d.path(), 1_000_000, 10);
        let all = numbered(100);
        for chunk in all.as_bytes().chunks(7) {
            c.push(chunk);
        }
        let r = c.finish();
        let expected = format!(
            "{}[... 90 lines omitted ...]\n{}",
            numbered(5),
            (96..=100)
                .map(|i| format!("line {i}\n"))
                .collect::<String>()
        );
        assert_eq!(r.text, expected);
        let path = r.full.unwrap().unwrap();
        assert!(
            path.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("bash-call1-")
        );
        assert_eq!(std::fs::read_to_string(path).unwrap(), all);
        assert_eq!(r.total_lines, 100);
    }

    #[test]
    fn too_many_bytes_cut_at_line_ends() {
        let d = tempfile::tempdir().unwrap();
        // 100 lines of 10 bytes; 200 bytes allowed: 100 bytes of head, 100 of tail.
        let mut c = collector(d.path(), 200, 1000);
        let all: String = (0..100).map(|i| format!("{i:09}\n")).collect();
        c.push(all.as_bytes());
        let r = c.finish();
        let head: String = (0..10).map(|i| format!("{i:09}\n")).collect();
        let tail: String = (90..100).map(|i| format!("{i:09}\n")).collect();
        assert_eq!(r.text, format!("{head}[... 80 lines omitted ...]\n{tail}"));
        assert_eq!(
            std::fs::read_to_string(r.full.unwrap().unwrap()).unwrap(),
            all
        );
    }

    #[test]
    fn tail_skips_a_partial_first_line() {
        let d = tempfile::tempdir().unwrap();
        // 15-byte lines; the 50-byte tail ring starts inside a line.
        let mut c = collector(d.path(), 100, 1000);
        let all: String = (0..20).map(|i| format!("{i:014}\n")).collect();
        c.push(all.as_bytes());
        let r = c.finish();
        let head: String = (0..3).map(|i| format!("{i:014}\n")).collect();
        let tail: String = (17..20).map(|i| format!("{i:014}\n")).collect();
        assert_eq!(r.text, format!("{head}[... 14 lines omitted ...]\n{tail}"));
    }

    #[test]
    fn one_huge_line_is_cut_inside_on_char_boundaries() {
        let d = tempfile::tempdir().unwrap();
        let mut c = collector(d.path(), 11, 1000);
        // 'é' is two bytes: 12 of them is 24 bytes, no newline.
        let all = "é".repeat(12);
        c.push(all.as_bytes());
        let r = c.finish();
        assert!(!r.text.contains('\u{FFFD}'), "{:?}", r.text);
        let lines: Vec<&str> = r.text.lines().collect();
        assert_eq!(lines.len(), 3, "{:?}", r.text);
        assert_eq!(lines[0], "éé");
        assert!(
            lines[1].starts_with("[... 0 lines omitted ("),
            "{}",
            lines[1]
        );
        assert_eq!(lines[2], "ééé");
        assert_eq!(
            std::fs::read_to_string(r.full.unwrap().unwrap()).unwrap(),
            all
        );
    }

    #[test]
    fn memory_stays_bounded_for_long_output() {
        let d = tempfile::tempdir().unwrap();
        let mut c = collector(d.path(), 1000, 100);
        let line = [b'x'; 99].iter().chain(b"\n").copied().collect::<Vec<u8>>();
        for _ in 0..10_000 {
            c.push(&line);
        }
        if let State::Cut { head, tail, .. } = &c.state {
            assert!(head.len() <= 500);
            assert!(tail.ring.len() <= 500);
        } else {
            panic!("should be cut");
        }
        let r = c.finish();
        assert_eq!(r.total_lines, 10_000);
        assert_eq!(
            std::fs::metadata(r.full.unwrap().unwrap()).unwrap().len(),
            1_000_000
        );
    }

    #[test]
    fn unwritable_spill_folder_is_reported_not_fatal() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("spill"), "a file, not a folder").unwrap();
        let mut c = collector(d.path(), 1000, 2);
        c.push(b"1\n2\n3\n4\n");
        let r = c.finish();
        assert_eq!(r.text, "1\n[... 2 lines omitted ...]\n4\n");
        assert!(r.full.unwrap().is_err());
    }

    #[test]
    fn invalid_utf8_is_decoded_lossily() {
        let d = tempfile::tempdir().unwrap();
        let mut c = collector(d.path(), 1000, 10);
        c.push(b"ok \xff\n");
        assert_eq!(c.finish().text, "ok \u{FFFD}\n");
    }
}
