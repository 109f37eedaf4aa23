//! The one way versus keeps an append-only record file (JSON Lines: one JSON object per line):
//! the session log (`events.jsonl`), the apply journal (`journal.jsonl`), `preferences.jsonl`
//! and `history.jsonl` all read and append through here, so they share one set of rules:
//!
//! - **A version on every line**, as its first field (`{"v":3,...}`), so a reader knows which
//!   shape it holds without guessing; a line without one (files written before versions) is
//!   read as the file's original version ([`Format::unversioned`]).
//! - **One write per line** on a file opened with `O_APPEND`, under an exclusive `flock` on the
//!   file, so two processes appending to one file never interleave and a crash can cut short
//!   only the last line.
//! - **A torn tail is ended before the next append.** A process killed in the middle of a write
//!   (SIGKILL, a full disk) leaves a last line without its newline. Appending after it would
//!   glue the next record onto the fragment and lose both, so every append first looks at the
//!   end of the file: an unterminated last line that is not a whole JSON value is removed
//!   (truncated back to the end of the last complete line), one that is whole (a file edited by
//!   hand) gets its newline. Removed, not kept as a damaged line: every writer ends its record
//!   with the newline in the same write, so a fragment is a record nobody was told was written,
//!   and a fragment kept in the middle would be reported on every read forever (for the apply
//!   journal, a damaged middle line is an error: it would stop every rewind).
//! - **Damage is reported by file and line, never dropped silently**: [`Read::damaged`] names
//!   each line that could not be read and why; the owner of each file decides whether that is a
//!   warning (the logs) or an error (the apply journal).
//! - **A file written by a newer versus is read but never appended to**: [`Appender::open`]
//!   refuses it with [`AppendError::Newer`] ("update versus to continue it"), so an older
//!   versus never mixes its records into a format it does not know; the lines it can read are
//!   still read, the others reported.

use std::fs::{File, OpenOptions};
use std::io::{self, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use nix::fcntl::{Flock, FlockArg};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// What kind of record file this is and which versions of it this versus knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Format {
    /// What the file is, as messages name it (`session log`, `apply journal`).
    pub name: &'static str,
    /// The version written on every new line; the newest this versus reads.
    pub version: u32,
    /// The version of a line without one (written before lines carried versions).
    pub unversioned: u32,
}

/// One line as written: the version first, then the record's own fields.
#[derive(Debug, Serialize)]
pub struct Versioned<'a, T> {
    /// The format version.
    pub v: u32,
    /// The record.
    #[serde(flatten)]
    pub record: &'a T,
}

/// One line as read: the version (absent in lines written before versions) and the record.
#[derive(Debug, Deserialize)]
pub struct VersionedIn<T> {
    /// The format version, if the line has one.
    #[serde(default)]
    pub v: Option<u32>,
    /// The record.
    #[serde(flatten)]
    pub record: T,
}

/// Only the version of a line (every other field ignored): what a line this versus cannot
/// read says about who wrote it.
#[derive(Debug, Deserialize)]
struct VersionOnly {
    #[serde(default)]
    v: Option<u32>,
}

impl Format {
    /// `record` as one line of this format, with its version and the newline.
    pub fn encode<T: Serialize>(&self, record: &T) -> serde_json::Result<Vec<u8>> {
        let mut line = serde_json::to_vec(&Versioned {
            v: self.version,
            record,
        })?;
        line.push(b'\n');
        Ok(line)
    }

    /// Decodes one line into `T`, with its version (the format's unversioned one when the
    /// line has none).
    pub fn decode<T: DeserializeOwned>(&self, line: &[u8]) -> Decoded<T> {
        match serde_json::from_slice::<VersionedIn<T>>(line) {
            Ok(read) => Decoded::Record {
                version: read.v.unwrap_or(self.unversioned),
                record: read.record,
            },
            Err(err) => Decoded::Bad(err),
        }
    }
}

/// What a decoder made of one line.
#[derive(Debug)]
pub enum Decoded<T> {
    /// A record of this version.
    Record {
        /// The line's version.
        version: u32,
        /// The record.
        record: T,
    },
    /// A line read and deliberately left out (it only repeated another record).
    Nothing,
    /// The line is not a record this versus reads.
    Bad(serde_json::Error),
}

/// Why a line was not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DamageKind {
    /// The last line, without its newline and not whole: a write cut short by a crash. The
    /// next append removes it.
    TornTail,
    /// A line in the middle cut short by a crash and ended by an older versus, which started
    /// the next record on a new line instead of removing the fragment.
    Torn,
    /// A line written by a newer versus (a higher version than this one reads).
    Newer,
    /// Anything else: not JSON, not a record of a known shape, a bad byte.
    Bad,
}

/// A line of a record file that could not be read, named so the user can find it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Damage {
    /// The file.
    pub path: PathBuf,
    /// 1-based line number.
    pub line: usize,
    /// Why it was not read (never the line's text: it may hold anything).
    pub why: String,
    /// What kind of damage.
    pub kind: DamageKind,
}

impl std::fmt::Display for Damage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}: skipped: {}",
            self.path.display(),
            self.line,
            self.why
        )
    }
}

/// Everything read from one record file.
#[derive(Debug, Clone, PartialEq)]
pub struct Read<T> {
    /// The records, in file order.
    pub records: Vec<T>,
    /// The lines that could not be read, in file order.
    pub damaged: Vec<Damage>,
    /// The highest version above this versus's seen in the file (`None`: none): the file was
    /// written by a newer versus, and [`Appender::open`] refuses it.
    pub newer: Option<u32>,
}

impl<T> Default for Read<T> {
    fn default() -> Self {
        Self {
            records: Vec::new(),
            damaged: Vec::new(),
            newer: None,
        }
    }
}

impl<T> Read<T> {
    /// The damage that is more than a torn line left by a crash: a line of unknown shape, a
    /// bad byte, a line of a newer versus.
    pub fn serious(&self) -> impl Iterator<Item = &Damage> {
        self.damaged
            .iter()
            .filter(|d| matches!(d.kind, DamageKind::Bad | DamageKind::Newer))
    }
}

/// Reads the record file at `path` (missing: empty) with the format's own decoding.
pub fn read<T: DeserializeOwned>(path: &Path, format: &Format) -> io::Result<Read<T>> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Read::default()),
        Err(e) => return Err(e),
    };
    Ok(parse(path, &bytes, format, |line| format.decode(line)))
}

/// The records of the file `path` holding `bytes`, each line decoded by `decode`; a line of a
/// version above the format's is reported as newer and not read.
pub fn parse<T>(
    path: &Path,
    bytes: &[u8],
    format: &Format,
    mut decode: impl FnMut(&[u8]) -> Decoded<T>,
) -> Read<T> {
    let mut read = Read::default();
    let ends_with_newline = bytes.last() == Some(&b'\n');
    let mut lines = bytes.split(|&b| b == b'\n').enumerate().peekable();
    while let Some((index, line)) = lines.next() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let last = lines.peek().is_none();
        let damage = |why: String, kind: DamageKind| Damage {
            path: path.to_path_buf(),
            line: index + 1,
            why,
            kind,
        };
        let newer = |version: u32| {
            format!(
                "written by a newer versus ({} format {version}; this versus reads up to {}): \
                 update versus to continue it",
                format.name, format.version
            )
        };
        match decode(line) {
            Decoded::Record { version, .. } if version > format.version => {
                read.newer = read.newer.max(Some(version));
                read.damaged.push(damage(newer(version), DamageKind::Newer));
            }
            Decoded::Record { record, .. } => read.records.push(record),
            Decoded::Nothing => {}
            Decoded::Bad(err) => {
                let version = serde_json::from_slice::<VersionOnly>(line)
                    .ok()
                    .and_then(|v| v.v);
                let kind = match version {
                    Some(v) if v > format.version => {
                        read.newer = read.newer.max(Some(v));
                        read.damaged.push(damage(newer(v), DamageKind::Newer));
                        continue;
                    }
                    _ if last && !ends_with_newline => DamageKind::TornTail,
                    _ if err.is_eof() => DamageKind::Torn,
                    _ => DamageKind::Bad,
                };
                let why = match kind {
                    DamageKind::TornTail => format!(
                        "a last line cut short by a crash ({err}); the next record written removes it"
                    ),
                    DamageKind::Torn => format!("a line cut short by a crash ({err})"),
                    _ => err.to_string(),
                };
                read.damaged.push(damage(why, kind));
            }
        }
    }
    read
}

/// Why a record file cannot be appended to. The messages do not repeat the file's path: the
/// caller's message names it (`could not open PATH: ...`, [`appending`]).
#[derive(Debug, thiserror::Error)]
pub enum AppendError {
    /// The file holds lines of a newer format: this versus reads it but never adds to it.
    #[error(
        "written by a newer versus ({name} format {version}; this versus writes {ours}): \
         it is read but not added to; update versus to continue it"
    )]
    Newer {
        /// The file.
        path: PathBuf,
        /// What the file is.
        name: &'static str,
        /// The newest version in the file.
        version: u32,
        /// The version this versus writes.
        ours: u32,
    },
    /// Reading, locking, repairing or writing the file failed.
    #[error("could not {op} {}: {source}", path.display())]
    Io {
        /// What was being done.
        op: &'static str,
        /// The file.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
}

/// An error of appending to the record file `path`, with the path in its message (for callers
/// whose errors carry none).
pub fn appending(path: &Path, err: impl Into<io::Error>) -> io::Error {
    let err = err.into();
    io::Error::new(
        err.kind(),
        format!("could not append to {}: {err}", path.display()),
    )
}

impl From<AppendError> for io::Error {
    fn from(err: AppendError) -> Self {
        match err {
            AppendError::Io { source, .. } => source,
            newer @ AppendError::Newer { .. } => io::Error::other(newer),
        }
    }
}

/// The highest version on any line read from `reader`, taken from the `{"v":N` every writer
/// puts first (a line without it is the format's unversioned one). Cheap: no line is parsed
/// and no line is held, only the first bytes of each, so a long log costs no memory.
pub fn newest_version(reader: impl io::Read, format: &Format) -> io::Result<u32> {
    const PREFIX: &[u8] = b"{\"v\":";
    const HEAD: usize = PREFIX.len() + 10;
    let version_of = |head: &[u8]| -> Option<u32> {
        if head.iter().all(u8::is_ascii_whitespace) {
            return None; // a blank line
        }
        Some(
            head.strip_prefix(PREFIX)
                .map_or(format.unversioned, |rest| {
                    rest.iter()
                        .take_while(|b| b.is_ascii_digit())
                        .fold(0u32, |n, d| {
                            n.saturating_mul(10).saturating_add(u32::from(d - b'0'))
                        })
                }),
        )
    };
    let mut reader = io::BufReader::with_capacity(64 * 1024, reader);
    let mut newest = format.unversioned;
    // The first bytes of the current line, and whether the rest of it is being skipped.
    let mut head: Vec<u8> = Vec::with_capacity(HEAD);
    let mut skipping = false;
    loop {
        let buf = io::BufRead::fill_buf(&mut reader)?;
        if buf.is_empty() {
            break;
        }
        let mut used = 0;
        while used < buf.len() {
            let rest = &buf[used..];
            let newline = memchr::memchr(b'\n', rest);
            let part = &rest[..newline.unwrap_or(rest.len())];
            if !skipping {
                let room = HEAD - head.len();
                head.extend_from_slice(&part[..part.len().min(room)]);
                skipping = head.len() == HEAD;
            }
            match newline {
                Some(at) => {
                    if let Some(v) = version_of(&head) {
                        newest = newest.max(v);
                    }
                    head.clear();
                    skipping = false;
                    used += at + 1;
                }
                None => used = buf.len(),
            }
        }
        io::BufRead::consume(&mut reader, used);
    }
    if let Some(v) = version_of(&head) {
        newest = newest.max(v);
    }
    Ok(newest)
}

/// An open record file, for appending whole lines.
#[derive(Debug)]
pub struct Appender {
    file: File,
    path: PathBuf,
    /// Where the file ended after this appender's last write (a file of that length needs no
    /// look at its tail before the next one).
    end: Option<u64>,
    /// Each line is flushed to the disk before `append` returns (the apply journal).
    sync: bool,
    /// A second descriptor of the file, the one the lock is taken on (kept, so an append
    /// costs no `dup` and `close`).
    lock: Option<File>,
}

impl Appender {
    /// Opens (creating) the record file at `path` for appending lines of `format`: refuses a
    /// file holding lines of a newer version ([`AppendError::Newer`]), and ends a torn last
    /// line now, so even a file nobody appends to again reads clean.
    pub fn open(path: &Path, format: &Format) -> Result<Self, AppendError> {
        let io = |op| {
            move |source| AppendError::Io {
                op,
                path: path.to_path_buf(),
                source,
            }
        };
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(path)
            .map_err(io("open"))?;
        let newest = newest_version(&file, format).map_err(io("read"))?;
        if newest > format.version {
            return Err(AppendError::Newer {
                path: path.to_path_buf(),
                name: format.name,
                version: newest,
                ours: format.version,
            });
        }
        let mut appender = Self {
            file,
            path: path.to_path_buf(),
            end: None,
            sync: false,
            lock: None,
        };
        appender
            .locked(|_| Ok(0))
            .map_err(io("repair the end of"))?;
        Ok(appender)
    }

    /// Every line is flushed to the disk before [`Appender::append`] returns.
    pub fn durable(mut self) -> Self {
        self.sync = true;
        self
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one encoded line (ending in its newline) in one write, after ending a torn
    /// last line, under the file's lock.
    pub fn append(&mut self, line: &[u8]) -> io::Result<()> {
        let sync = self.sync;
        self.locked(|file| {
            file.write_all(line)?;
            if sync {
                file.sync_data()?;
            }
            Ok(line.len() as u64)
        })
    }

    /// Appends `record` as a line of `format`.
    pub fn append_record<T: Serialize>(&mut self, format: &Format, record: &T) -> io::Result<()> {
        let line = format.encode(record).map_err(io::Error::other)?;
        self.append(&line)
    }

    /// Runs `write` (which returns how many bytes it appended) with the file locked and its
    /// tail ended, and notes where the file ends afterwards.
    fn locked(&mut self, write: impl FnOnce(&mut File) -> io::Result<u64>) -> io::Result<()> {
        let fd = match self.lock.take() {
            Some(fd) => fd,
            None => self.file.try_clone()?,
        };
        let held = match Flock::lock(fd, FlockArg::LockExclusive) {
            Ok(held) => held,
            Err((fd, errno)) => {
                self.lock = Some(fd);
                return Err(errno.into());
            }
        };
        let result = self.write_locked(write);
        // Unlocked here, the descriptor kept for the next append (dropping it unlocks too).
        if let Ok(fd) = held.unlock() {
            self.lock = Some(fd);
        }
        result
    }

    /// [`Appender::locked`]'s work, with the lock held.
    fn write_locked(&mut self, write: impl FnOnce(&mut File) -> io::Result<u64>) -> io::Result<()> {
        let len = self.file.metadata()?.len();
        let end = if self.end == Some(len) {
            len
        } else {
            end_torn_tail(&mut self.file, &self.path, len)?
        };
        // Unknown if the write fails half-way: the next append looks at the tail.
        self.end = None;
        let written = write(&mut self.file)?;
        self.end = Some(end + written);
        Ok(())
    }
}

/// Ends the file's last line if a crash cut it short: an unterminated last line that is not a
/// whole JSON value is truncated away, a whole one gets its newline. Returns the new length.
fn end_torn_tail(file: &mut File, path: &Path, len: u64) -> io::Result<u64> {
    if len == 0 {
        return Ok(0);
    }
    let mut last = [0u8; 1];
    file.read_exact_at(&mut last, len - 1)?;
    if last[0] == b'\n' {
        return Ok(len);
    }
    // Find the start of the last line, reading backwards.
    const CHUNK: u64 = 64 * 1024;
    let mut start = 0;
    let mut pos = len;
    while pos > 0 {
        let from = pos.saturating_sub(CHUNK);
        let mut buf = vec![0u8; usize::try_from(pos - from).map_err(io::Error::other)?];
        file.read_exact_at(&mut buf, from)?;
        if let Some(i) = memchr::memrchr(b'\n', &buf) {
            start = from + i as u64 + 1;
            break;
        }
        pos = from;
    }
    let mut fragment = vec![0u8; usize::try_from(len - start).map_err(io::Error::other)?];
    file.read_exact_at(&mut fragment, start)?;
    if serde_json::from_slice::<serde::de::IgnoredAny>(&fragment).is_ok() {
        file.write_all(b"\n")?;
        return Ok(len + 1);
    }
    file.set_len(start)?;
    file.seek(SeekFrom::End(0))?;
    tracing::warn!(
        "{}: removed a last line cut short by a crash ({} bytes at offset {start}) before appending",
        path.display(),
        len - start
    );
    Ok(start)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const F: Format = Format {
        name: "test log",
        version: 2,
        unversioned: 1,
    };

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Rec {
        n: u32,
    }

    fn read_recs(path: &Path) -> Read<Rec> {
        read(path, &F).unwrap()
    }

    #[test]
    fn every_line_carries_the_version_first_and_old_lines_read_as_their_version() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.jsonl");
        std::fs::write(&path, "{\"n\":1}\n").unwrap();
        let mut a = Appender::open(&path, &F).unwrap();
        a.append_record(&F, &Rec { n: 2 }).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, "{\"n\":1}\n{\"v\":2,\"n\":2}\n");
        let mut versions = Vec::new();
        let read = parse(&path, text.as_bytes(), &F, |line| {
            let d = F.decode::<Rec>(line);
            if let Decoded::Record { version, .. } = &d {
                versions.push(*version);
            }
            d
        });
        assert_eq!(read.records, [Rec { n: 1 }, Rec { n: 2 }]);
        assert_eq!(versions, [1, 2]);
        assert!(read.damaged.is_empty());
    }

    #[test]
    fn a_torn_tail_is_removed_before_the_next_append_and_a_whole_one_is_ended() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.jsonl");
        std::fs::write(&path, "{\"v\":2,\"n\":1}\n{\"v\":2,\"n\"").unwrap();
        let read = read_recs(&path);
        assert_eq!(read.records, [Rec { n: 1 }]);
        assert_eq!(read.damaged.len(), 1);
        assert_eq!(read.damaged[0].kind, DamageKind::TornTail);
        assert_eq!(read.damaged[0].line, 2);
        let mut a = Appender::open(&path, &F).unwrap();
        a.append_record(&F, &Rec { n: 3 }).unwrap();
        let read = read_recs(&path);
        assert_eq!(read.records, [Rec { n: 1 }, Rec { n: 3 }]);
        assert!(read.damaged.is_empty(), "{:?}", read.damaged);

        // A whole last line without its newline (edited by hand) is kept and ended.
        std::fs::write(&path, "{\"v\":2,\"n\":1}").unwrap();
        Appender::open(&path, &F)
            .unwrap()
            .append_record(&F, &Rec { n: 2 })
            .unwrap();
        assert_eq!(read_recs(&path).records, [Rec { n: 1 }, Rec { n: 2 }]);
    }

    #[test]
    fn a_tail_torn_by_another_writer_after_open_is_ended_too() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.jsonl");
        let mut a = Appender::open(&path, &F).unwrap();
        a.append_record(&F, &Rec { n: 1 }).unwrap();
        // Another process, killed in the middle of its write.
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(&[b'{'; 70_000])
            .unwrap();
        a.append_record(&F, &Rec { n: 2 }).unwrap();
        assert_eq!(read_recs(&path).records, [Rec { n: 1 }, Rec { n: 2 }]);
    }

    #[test]
    fn appenders_of_one_file_in_several_threads_keep_every_line_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.jsonl");
        std::thread::scope(|scope| {
            for t in 0..4u32 {
                let path = &path;
                scope.spawn(move || {
                    let mut a = Appender::open(path, &F).unwrap();
                    for i in 0..250 {
                        a.append_record(&F, &Rec { n: t * 1000 + i }).unwrap();
                    }
                });
            }
        });
        let read = read_recs(&path);
        assert!(read.damaged.is_empty(), "{:?}", read.damaged);
        let mut seen: Vec<u32> = read.records.iter().map(|r| r.n).collect();
        seen.sort_unstable();
        let expected: Vec<u32> = (0..4)
            .flat_map(|t| (0..250).map(move |i| t * 1000 + i))
            .collect();
        assert_eq!(seen, expected);
    }

    #[test]
    fn damage_in_the_middle_is_named_by_line_and_kind() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.jsonl");
        std::fs::write(
            &path,
            b"{\"n\":1}\n{\"n\":\"x\"}\n{\"v\":2,\"n\n{\"v\":2,\"n\":4}\n\xff\n",
        )
        .unwrap();
        let read = read_recs(&path);
        assert_eq!(read.records, [Rec { n: 1 }, Rec { n: 4 }]);
        let kinds: Vec<(usize, DamageKind)> =
            read.damaged.iter().map(|d| (d.line, d.kind)).collect();
        assert_eq!(
            kinds,
            [
                (2, DamageKind::Bad),
                (3, DamageKind::Torn),
                (5, DamageKind::Bad)
            ]
        );
        assert_eq!(read.serious().count(), 2);
        assert!(
            read.damaged[0]
                .to_string()
                .starts_with(&format!("{}:2: skipped", path.display()))
        );
    }

    #[test]
    fn a_torn_utf8_character_and_a_bad_byte_skip_only_their_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        std::fs::write(
            &path,
            b"{\"a\":1}\n{\"a\":\"\xff\"}\n{\"a\":2}\n{\"a\":\"\xc3",
        )
        .unwrap();
        let read: Read<serde_json::Value> = read(&path, &F).unwrap();
        assert_eq!(
            read.records,
            vec![serde_json::json!({"a": 1}), serde_json::json!({"a": 2})]
        );
        let lines: Vec<usize> = read.damaged.iter().map(|s| s.line).collect();
        assert_eq!(lines, vec![2, 4]);
        assert_eq!(read.damaged[1].kind, DamageKind::TornTail);
        assert!(
            read.damaged[0]
                .to_string()
                .starts_with(&format!("{}:2: skipped", path.display()))
        );
    }

    #[test]
    fn a_file_of_a_newer_versus_is_read_but_never_appended_to() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.jsonl");
        let text = "{\"v\":2,\"n\":1}\n{\"v\":3,\"n\":2}\n{\"v\":3,\"m\":[]}\n{\"v\":2,\"n\":3}";
        std::fs::write(&path, text).unwrap();
        let read = read_recs(&path);
        assert_eq!(read.records, [Rec { n: 1 }, Rec { n: 3 }]);
        assert_eq!(read.newer, Some(3));
        assert!(read.damaged.iter().all(|d| d.kind == DamageKind::Newer));
        assert!(
            read.damaged[0]
                .why
                .contains("newer versus (test log format 3")
        );
        let err = Appender::open(&path, &F).unwrap_err();
        assert!(
            matches!(err, AppendError::Newer { version: 3, .. }),
            "{err}"
        );
        assert!(
            err.to_string().contains("update versus to continue it"),
            "{err}"
        );
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            text,
            "not even the tail is touched"
        );
    }

    #[test]
    fn the_newest_version_is_read_from_line_prefixes() {
        let newest = |bytes: &[u8]| newest_version(bytes, &F).unwrap();
        assert_eq!(newest(b""), 1);
        assert_eq!(newest(b"{\"n\":1}\n{\"v\":12,\"n\":1}\n{\"v\":2}\n"), 12);
        // Long lines, a version past a buffer's end, a last line without its newline.
        let mut long = b"{\"v\":2,\"n\":\"".to_vec();
        long.extend(std::iter::repeat_n(b'x', 200_000));
        long.extend_from_slice(b"\"}\n");
        let mut bytes = long.clone();
        bytes.extend(std::iter::repeat_n(b' ', 65_530));
        bytes.extend_from_slice(b"\n{\"v\":7");
        assert_eq!(newest(&bytes), 7);
        bytes.extend_from_slice(b"\n");
        bytes.extend_from_slice(&long);
        assert_eq!(newest(&bytes), 7);
        let mut split = vec![b'\n'; 65_533];
        split.extend_from_slice(b"{\"v\":31}");
        assert_eq!(newest(&split), 31, "the prefix straddles two reads");
    }
}
