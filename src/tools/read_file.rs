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
use crate::workspace::{EntryKind, ProjectPath};

/// Files up to this size get an exact total line count in the footer.
const COUNT_ALL_LINES_UP_TO: u64 = 8 * 1024 * 1024;
/// Images up to this size go to providers as image parts.
const MAX_IMAGE_BYTES: u64 = 20 * 1024 * 1024;

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

fn read(args: &Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
    let view = &ctx.view;
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
    let mut reader = BufReader::with_capacity(
        64 * 1024,
        view.open(&path)
            .map_err(|e| ToolError::io("reading", path.display(), e))?,
    );
    let head = reader
        .fill_buf()
        .map_err(|e| ToolError::io("reading", path.display(), e))?
        .to_vec();
    if head.is_empty() {
        return Ok(ToolOutput::ok("[empty file]"));
    }
    if text::is_binary(path.rel(), &head) {
        return Ok(binary(&path, meta.len, ctx));
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

fn binary(path: &ProjectPath, len: u64, ctx: &ToolContext) -> ToolOutput {
    let mut out = ToolOutput::ok(format!("[binary file, {len} bytes]"));
    if let Some(media_type) = text::image_media_type(path.rel())
        && len <= MAX_IMAGE_BYTES
        && let Ok(data) = ctx.view.read(path)
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
        let mut line_no: u64 = 0;
        let mut out_bytes = 0usize;
        let mut first = true;
        let mut buf = Vec::new();
        loop {
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
            let in_page = line_no >= offset && line_no < offset + limit && !page.stopped_by_bytes;
            if in_page {
                let rendered = render_line(&buf, &info, max_chars, &mut page.invalid_utf8);
                let entry = format!("{line_no:>6}\t{rendered}");
                if out_bytes + entry.len() + 1 > max_bytes && !page.lines.is_empty() {
                    page.stopped_by_bytes = true;
                    page.more = true;
                    if !count_all {
                        break;
                    }
                    continue;
                }
                out_bytes += entry.len() + 1;
                page.lines.push(entry);
            } else if line_no >= offset {
                page.more = true;
                if !count_all {
                    break;
                }
            }
        }
        if count_all || !page.more {
            page.total = Some(line_no);
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
