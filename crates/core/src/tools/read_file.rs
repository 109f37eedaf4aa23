//! read_file: numbered lines of a file, in pages, without ever loading a huge file whole.
//!
//! The file is streamed line by line and reading stops as soon as the page is full, so the first
//! 2000 lines of a 1 GB log cost the same as those of a small file. The total line count is only
//! computed for files small enough to scan cheaply; for larger ones the footer gives the size.

use std::io::{BufRead, BufReader, Read};
use std::sync::Arc;

use serde::Deserialize;
use serde_json::json;

use super::registry::{Handler, Tool, run_blocking, typed};
use super::suggest::did_you_mean;
use super::text::{self, BOM};
use super::{ImagePart, ToolClass, ToolContext, ToolError, ToolOutput, ToolSpec};
use crate::workspace::{DirectView, EntryKind, FileView, ProjectPath};

/// Files up to this size get an exact total line count in the footer.
const COUNT_ALL_LINES_UP_TO: u64 = 8 * 1024 * 1024;
/// Images up to this size go to providers as image parts.
const MAX_IMAGE_BYTES: u64 = 20 * 1024 * 1024;
/// Read size for files larger than this: skipping to a far offset goes through the file in
/// blocks this big (fewer system calls), small enough to stay in the CPU's cache.
const READ_BUFFER: usize = 256 * 1024;

pub(crate) fn tool() -> Arc<dyn Tool> {
    typed(
        ToolSpec {
            name: "read_file",
            description: "Read a text file from the project. Returns lines prefixed with their \
                line number and a tab. Use offset and limit to page through long files; the \
                footer says how to continue. Binary files are reported, not dumped."
                .to_string(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "File path, relative to the project root."},
                    "offset": {"type": "integer", "minimum": 1, "description": "First line to show (1-based). Default 1."},
                    "limit": {"type": "integer", "minimum": 1, "description": "Number of lines to show. Default 2000."}
                },
                "required": ["path"],
                "additionalProperties": false
            }),
            guidance:
                "read_file: read a file before editing it; page long files with offset/limit."
                    .to_string(),
            class: ToolClass::ReadOnly,
        },
        ReadFile,
    )
}

#[derive(Debug, Deserialize)]
pub(crate) struct Args {
    path: String,
    offset: Option<u64>,
    limit: Option<u64>,
}

struct ReadFile;

impl Handler for ReadFile {
    type Args = Args;

    async fn run(&self, args: Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        run_blocking("read_file", args, ctx, read).await
    }
}

/// A read-only view of the folder outside the workspace that `path` lies in, when it is an
/// absolute path under one of the call's read roots (a skill of the user or a recipe).
fn outside_view(path: &str, ctx: &ToolContext) -> Result<Option<Arc<dyn FileView>>, ToolError> {
    let path = std::path::Path::new(path);
    if !path.is_absolute() {
        return Ok(None);
    }
    let Some(root) = ctx.read_roots.iter().find(|root| path.starts_with(root)) else {
        return Ok(None);
    };
    let view = DirectView::new(root)
        .map_err(|e| ToolError::io("reading", root.display().to_string(), e))?;
    Ok(Some(Arc::new(view)))
}

fn read(args: &Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
    // A skill outside the workspace is read through a view of its own folder, by the same
    // path rules (no link followed out of it); it is never written.
    let outside = outside_view(&args.path, ctx)?;
    let view = outside.as_ref().unwrap_or(&ctx.view);
    let path = view.resolve(&args.path)?;
    let meta = match view.metadata(&path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(ToolError::failed(format!(
                "file not found: {}{}",
                path,
                did_you_mean(view.root(), path.rel())
            )));
        }
        Err(e) => return Err(ToolError::io("reading", path.display(), e)),
    };
    match meta.kind {
        EntryKind::Dir => {
            return Err(ToolError::failed(format!(
                "{path} is a directory, not a file; use list_directory to see its entries"
            )));
        }
        EntryKind::Other => {
            return Err(ToolError::failed(format!(
                "{path} is not a regular file (socket, pipe or device); it cannot be read"
            )));
        }
        EntryKind::File => {}
    }
    // Small files get a buffer their size; large ones read in large blocks.
    let capacity =
        usize::try_from(meta.len.clamp(8 * 1024, READ_BUFFER as u64)).unwrap_or(READ_BUFFER);
    let mut reader = BufReader::with_capacity(
        capacity,
        view.open(&path)
            .map_err(|e| ToolError::io("reading", path.display(), e))?,
    );
    let head = reader
        .fill_buf()
        .map_err(|e| ToolError::io("reading", path.display(), e))?;
    if head.is_empty() {
        return Ok(ToolOutput::ok("[empty file]"));
    }
    if text::is_binary(path.rel(), head) {
        return Ok(binary(&path, meta.len, view.as_ref()));
    }
    let offset = args.offset.unwrap_or(1).max(1);
    let limit = args
        .limit
        .unwrap_or(ctx.limits.read_max_lines as u64)
        .max(1);
    let limit = limit.min(ctx.limits.read_max_lines as u64);
    let page = Page::collect(
        reader,
        offset,
        limit,
        ctx,
        meta.len <= COUNT_ALL_LINES_UP_TO,
    )
    .map_err(|e| ToolError::io("reading", path.display(), e))?;
    page.render(&path, offset, meta.len)
}

fn binary(path: &ProjectPath, len: u64, view: &dyn FileView) -> ToolOutput {
    let mut out = ToolOutput::ok(format!("[binary file, {len} bytes]"));
    if let Some(media_type) = text::image_media_type(path.rel())
        && len <= MAX_IMAGE_BYTES
        && let Ok(data) = view.read(path)
    {
        out.image = Some(ImagePart {
            media_type: media_type.to_string(),
            data,
        });
    }
    out
}

/// The lines of one page plus what is known about the rest of the file.
struct Page {
    lines: Vec<String>,
    /// The page stopped before `limit` lines because of the byte cap.
    stopped_by_bytes: bool,
    /// Total lines, when the whole file was scanned.
    total: Option<u64>,
    /// Whether lines remain after the page.
    more: bool,
    invalid_utf8: bool,
}

impl Page {
    fn collect<R: Read>(
        mut reader: BufReader<R>,
        offset: u64,
        limit: u64,
        ctx: &ToolContext,
        count_all: bool,
    ) -> std::io::Result<Self> {
        let max_chars = ctx.limits.read_max_line_chars;
        let max_bytes = ctx.limits.read_max_bytes;
        let mut page = Page {
            lines: Vec::new(),
            stopped_by_bytes: false,
            total: None,
            more: false,
            invalid_utf8: false,
        };
        // Lines before the page are only counted: no copy, no character count (a BOM only
        // matters on the first line, which is then never shown).
        let mut line_no = skip_lines(&mut reader, offset - 1)?;
        let mut first = line_no == 0;
        let mut out_bytes = 0usize;
        let mut buf = Vec::new();
        while line_no < (offset - 1).saturating_add(limit) {
            buf.clear();
            // Keep at most enough bytes to show a cut line; count the rest.
            let Some(info) = read_line_capped(&mut reader, &mut buf, max_chars * 4 + 4)? else {
                break;
            };
            line_no += 1;
            if first {
                first = false;
                if buf.starts_with(BOM) {
                    buf.drain(..BOM.len());
                }
            }
            let rendered = render_line(&buf, &info, max_chars, &mut page.invalid_utf8);
            let entry = format!("{line_no:>6}\t{rendered}");
            if out_bytes + entry.len() + 1 > max_bytes && !page.lines.is_empty() {
                page.stopped_by_bytes = true;
                page.more = true;
                // The line that did not fit is counted; the rest is counted below.
                break;
            }
            out_bytes += entry.len() + 1;
            page.lines.push(entry);
        }
        if count_all {
            // The rest of the file is counted, never copied.
            let rest = skip_lines(&mut reader, u64::MAX)?;
            page.more |= rest > 0;
            page.total = Some(line_no + rest);
        } else if !page.more {
            // One more byte tells whether a line follows the page.
            page.more = !reader.fill_buf()?.is_empty();
            if !page.more {
                page.total = Some(line_no);
            }
        }
        Ok(page)
    }

    fn render(
        self,
        path: &ProjectPath,
        offset: u64,
        file_len: u64,
    ) -> Result<ToolOutput, ToolError> {
        if self.lines.is_empty() {
            let total = self.total.unwrap_or(0);
            return Err(ToolError::failed(format!(
                "offset {offset} is past the end of {path}: it has {total} line{}; use an offset from 1 to {total}",
                if total == 1 { "" } else { "s" }
            )));
        }
        let first = offset;
        let last = offset + self.lines.len() as u64 - 1;
        let mut text = String::new();
        if self.invalid_utf8 {
            text.push_str(
                "[note: the file is not valid UTF-8; invalid bytes are shown as \u{FFFD}]\n",
            );
        }
        text.push_str(&self.lines.join("\n"));
        let of_total = match self.total {
            Some(t) => format!("of {t}"),
            None => format!("of a {} file", human_size(file_len)),
        };
        let cap = if self.stopped_by_bytes {
            " (output size cap reached)"
        } else {
            ""
        };
        if self.more {
            text.push_str(&format!(
                "\n\n[lines {first}-{last} {of_total}{cap}; use offset={} to continue]",
                last + 1
            ));
        } else if first > 1 {
            text.push_str(&format!(
                "\n\n[lines {first}-{last} {of_total}; end of file]"
            ));
        }
        Ok(ToolOutput::ok(text))
    }
}

/// Consumes up to `n` lines from `reader` and returns how many it consumed (fewer at the end
/// of the file; a last line without a newline counts). Lines are found with `memchr` inside the
/// reader's buffer and never copied, so skipping to line 5,000,000 of a large file costs about
/// what reading those bytes from the page cache costs.
fn skip_lines<R: Read>(reader: &mut BufReader<R>, n: u64) -> std::io::Result<u64> {
    let mut skipped = 0u64;
    // Bytes of an unterminated line consumed so far (it counts if the file ends there).
    let mut partial = false;
    while skipped < n {
        let available = reader.fill_buf()?;
        if available.is_empty() {
            if partial {
                skipped += 1;
            }
            break;
        }
        let wanted = n - skipped;
        let in_buffer = memchr::memchr_iter(b'\n', available).count() as u64;
        let used = if in_buffer < wanted {
            skipped += in_buffer;
            partial = available.last() != Some(&b'\n');
            available.len()
        } else {
            // The wanted newline is in this buffer: stop right after it.
            let index = usize::try_from(wanted - 1).unwrap_or(usize::MAX);
            let at = memchr::memchr_iter(b'\n', available)
                .nth(index)
                .map_or(available.len(), |i| i + 1);
            skipped += wanted;
            partial = false;
            at
        };
        reader.consume(used);
    }
    Ok(skipped)
}

/// One line read by [`read_line_capped`].
struct LineInfo {
    /// Characters in the whole line (terminator excluded), counted while streaming.
    chars: usize,
    /// Bytes were dropped because the line was longer than the cap.
    cut: bool,
}

/// Reads one line (through `\n`) keeping at most `cap` bytes in `buf`, so a 1 GB single-line
/// file does not land in memory. The terminator (`\n` or `\r\n`) is not kept. `None` at EOF.
fn read_line_capped<R: Read>(
    reader: &mut BufReader<R>,
    buf: &mut Vec<u8>,
    cap: usize,
) -> std::io::Result<Option<LineInfo>> {
    let mut seen_any = false;
    let mut chars = 0usize;
    let mut cut = false;
    let mut last_two = [0u8; 2];
    loop {
        let available = reader.fill_buf()?;
        if available.is_empty() {
            break;
        }
        seen_any = true;
        let (chunk, done) = match memchr::memchr(b'\n', available) {
            Some(i) => (&available[..=i], true),
            None => (available, false),
        };
        chars += chunk.iter().filter(|&&b| b & 0xC0 != 0x80).count();
        let take = chunk.len().min(cap.saturating_sub(buf.len()));
        buf.extend_from_slice(&chunk[..take]);
        if take < chunk.len() {
            cut = true;
        }
        for &b in chunk {
            last_two = [last_two[1], b];
        }
        let used = chunk.len();
        reader.consume(used);
        if done {
            break;
        }
    }
    if !seen_any {
        return Ok(None);
    }
    if last_two[1] == b'\n' {
        chars -= 1;
        if last_two[0] == b'\r' {
            chars -= 1;
        }
    }
    if buf.last() == Some(&b'\n') {
        buf.pop();
    }
    if buf.last() == Some(&b'\r') && last_two == *b"\r\n" {
        buf.pop();
    }
    // The terminator alone spilling over the cap is not a cut line.
    if cut && buf.len() >= chars {
        cut = false;
    }
    Ok(Some(LineInfo { chars, cut }))
}

fn render_line(bytes: &[u8], info: &LineInfo, max_chars: usize, invalid: &mut bool) -> String {
    // A cut may split a multi-byte character; that is not invalid UTF-8 in the file.
    let bytes = match std::str::from_utf8(bytes) {
        Err(e) if info.cut && e.error_len().is_none() => &bytes[..e.valid_up_to()],
        _ => bytes,
    };
    let (decoded, bad) = text::decode_lossy(bytes);
    *invalid |= bad;
    if info.chars > max_chars || info.cut {
        let shown: String = decoded.chars().take(max_chars).collect();
        format!("{shown}... [line truncated, {} chars]", info.chars)
    } else {
        decoded.into_owned()
    }
}

fn human_size(n: u64) -> String {
    const UNITS: [&str; 4] = ["bytes", "KB", "MB", "GB"];
    let mut v = n as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} bytes")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::io::{BufReader, Cursor};
    use std::sync::Arc;

    use super::*;
    use crate::workspace::DirectView;

    /// What a page must hold, computed the simple way: split the whole text into lines.
    fn expected(text: &[u8], offset: u64, limit: u64) -> (Vec<String>, Option<u64>, bool) {
        let body = text.strip_prefix(BOM).unwrap_or(text);
        let mut lines: Vec<&[u8]> = body.split(|&b| b == b'\n').collect();
        if body.ends_with(b"\n") || body.is_empty() {
            lines.pop();
        }
        let total = lines.len() as u64;
        let shown = lines
            .iter()
            .enumerate()
            .skip(offset as usize - 1)
            .take(limit as usize)
            .map(|(i, l)| {
                let l = l.strip_suffix(b"\r").unwrap_or(l);
                format!("{:>6}\t{}", i + 1, String::from_utf8_lossy(l))
            })
            .collect();
        (shown, Some(total), offset - 1 + limit < total)
    }

    fn ctx() -> (tempfile::TempDir, ToolContext) {
        let dir = tempfile::tempdir().unwrap();
        let view = DirectView::new(dir.path()).unwrap();
        (dir, ToolContext::new(Arc::new(view)))
    }

    /// Every offset and limit, with buffers so small that lines, CRLF pairs and the BOM are
    /// split across reads, and a buffer that ends exactly after a newline.
    #[test]
    fn pages_match_a_plain_split_at_every_offset_and_buffer_size() {
        let (_dir, ctx) = ctx();
        let texts: [&[u8]; 7] = [
            b"one\ntwo\nthree\n",
            b"one\ntwo\nno newline at the end",
            b"crlf\r\nline two\r\n\r\nlast\r\n",
            b"\xEF\xBB\xBFbom\r\nthen\nmixed\r\nend",
            b"\n\n\n",
            b"x",
            b"a\nbb\nccc\ndddd\neeeee\n",
        ];
        for text in texts {
            let lines = text.iter().filter(|&&b| b == b'\n').count() as u64 + 1;
            for capacity in [1, 2, 3, 4, 5, 7, 16, 1024] {
                for offset in 1..=lines + 2 {
                    for limit in 1..=lines + 1 {
                        let reader = BufReader::with_capacity(capacity, Cursor::new(text));
                        let page = Page::collect(reader, offset, limit, &ctx, true).unwrap();
                        let (lines, total, more) = expected(text, offset, limit);
                        let case = format!(
                            "{:?} capacity {capacity} offset {offset} limit {limit}",
                            String::from_utf8_lossy(text)
                        );
                        assert_eq!(page.lines, lines, "{case}");
                        assert_eq!(page.total, total, "{case}");
                        assert_eq!(page.more, more, "{case}");
                        // Without the full count: the same page, and a total only at the end.
                        let reader = BufReader::with_capacity(capacity, Cursor::new(text));
                        let page = Page::collect(reader, offset, limit, &ctx, false).unwrap();
                        assert_eq!(page.lines, lines, "{case}");
                        assert_eq!(page.more, more, "{case}");
                        assert_eq!(page.total, if more { None } else { total }, "{case}");
                    }
                }
            }
        }
    }

    #[test]
    fn skip_lines_stops_right_after_the_wanted_newline() {
        // The newline of line 2 is the last byte of the first 8-byte buffer.
        let text = b"aaa\nbbb\nccc\nddd";
        for (n, skipped, rest) in [
            (0, 0, &b"aaa\nbbb\nccc\nddd"[..]),
            (2, 2, b"ccc\nddd"),
            (3, 3, b"ddd"),
            (4, 4, b""),
            (9, 4, b""),
        ] {
            let mut reader = BufReader::with_capacity(8, Cursor::new(text));
            assert_eq!(skip_lines(&mut reader, n).unwrap(), skipped, "n = {n}");
            let mut left = Vec::new();
            reader.read_to_end(&mut left).unwrap();
            assert_eq!(left, rest, "n = {n}");
        }
    }
}
