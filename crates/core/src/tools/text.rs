//! Byte-level text helpers shared by the file tools: BOM, line endings, binary detection.
//!
//! Models see and send text; users' files are bytes. These helpers let tools show clean text
//! while writing back the file's own conventions (CRLF, BOM) byte for byte.

use std::borrow::Cow;

/// The UTF-8 byte order mark.
pub const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Splits a leading UTF-8 BOM off, returning whether there was one.
pub fn split_bom(bytes: &[u8]) -> (bool, &[u8]) {
    match bytes.strip_prefix(BOM) {
        Some(rest) => (true, rest),
        None => (false, bytes),
    }
}

/// A file's line-ending convention.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineEnding {
    /// `\n`
    Lf,
    /// `\r\n`
    CrLf,
}

impl LineEnding {
    /// The dominant ending in `text` (LF when there are no line breaks).
    pub fn detect(text: &[u8]) -> Self {
        let lf = memchr_count(b'\n', text);
        let crlf = text.windows(2).filter(|w| w == b"\r\n").count();
        if crlf > 0 && crlf * 2 >= lf {
            Self::CrLf
        } else {
            Self::Lf
        }
    }

    /// The ending's bytes.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Lf => "\n",
            Self::CrLf => "\r\n",
        }
    }
}

fn memchr_count(needle: u8, hay: &[u8]) -> usize {
    hay.iter().filter(|&&b| b == needle).count()
}

/// Converts every line break in `text` to `ending`.
pub fn convert_endings(text: &str, ending: LineEnding) -> String {
    let lf = text.replace("\r\n", "\n");
    match ending {
        LineEnding::Lf => lf,
        LineEnding::CrLf => lf.replace('\n', "\r\n"),
    }
}

/// Makes new content follow an existing file's conventions: its BOM and its line endings.
/// Used when a model replaces a file it did not write itself (it sends LF for a CRLF file).
pub fn adapt_to_existing(new_content: &str, existing: &[u8]) -> Vec<u8> {
    let (had_bom, body) = split_bom(existing);
    let ending = LineEnding::detect(body);
    let (new_has_bom, new_body) = split_bom(new_content.as_bytes());
    let new_body = String::from_utf8_lossy(new_body);
    let converted = if body.contains(&b'\n') {
        convert_endings(&new_body, ending)
    } else {
        new_body.into_owned()
    };
    let mut out = Vec::with_capacity(converted.len() + 3);
    if had_bom || new_has_bom {
        out.extend_from_slice(BOM);
    }
    out.extend_from_slice(converted.as_bytes());
    out
}

/// Extensions whose files are binary whatever their first bytes say.
const BINARY_EXTENSIONS: &[&str] = &[
    "png", "jpg", "jpeg", "gif", "webp", "bmp", "ico", "tiff", "pdf", "zip", "gz", "tgz", "bz2",
    "xz", "zst", "7z", "rar", "tar", "jar", "war", "class", "exe", "dll", "so", "dylib", "a", "o",
    "obj", "lib", "bin", "wasm", "pyc", "pyo", "woff", "woff2", "ttf", "otf", "eot", "mp3", "mp4",
    "wav", "ogg", "flac", "avi", "mov", "mkv", "webm", "sqlite", "db", "rlib", "rmeta", "psd",
    "iso", "dmg", "deb", "rpm",
];

/// Image extensions that providers may accept as image parts, with their MIME type.
pub fn image_media_type(path: &str) -> Option<&'static str> {
    match extension(path)?.as_str() {
        "png" => Some("image/png"),
        "jpg" | "jpeg" => Some("image/jpeg"),
        "gif" => Some("image/gif"),
        "webp" => Some("image/webp"),
        _ => None,
    }
}

fn extension(path: &str) -> Option<String> {
    let name = path.rsplit('/').next()?;
    let (_, ext) = name.rsplit_once('.')?;
    Some(ext.to_ascii_lowercase())
}

/// True when a file should be shown as `[binary file, N bytes]`: a known binary extension, a NUL
/// in the first 8 KB, or more than 30% control bytes there.
pub fn is_binary(path: &str, head: &[u8]) -> bool {
    if let Some(ext) = extension(path)
        && BINARY_EXTENSIONS.contains(&ext.as_str())
    {
        return true;
    }
    looks_binary(head)
}

/// The content test alone (for files whose name says nothing).
pub fn looks_binary(head: &[u8]) -> bool {
    let head = &head[..head.len().min(8192)];
    let (_, head) = split_bom(head);
    if head.is_empty() {
        return false;
    }
    if head.contains(&0) {
        return true;
    }
    let control = head
        .iter()
        .filter(|&&b| b < 0x20 && !matches!(b, b'\n' | b'\r' | b'\t' | 0x0c | 0x1b))
        .count();
    control * 10 > head.len() * 3
}

/// Decodes bytes as UTF-8, replacing invalid sequences; the flag says whether any were.
pub fn decode_lossy(bytes: &[u8]) -> (Cow<'_, str>, bool) {
    match std::str::from_utf8(bytes) {
        Ok(s) => (Cow::Borrowed(s), false),
        Err(_) => (String::from_utf8_lossy(bytes), true),
    }
}

/// Number of lines as an editor counts them (a trailing newline does not start a new line).
pub fn line_count(text: &str) -> usize {
    if text.is_empty() {
        0
    } else {
        text.lines().count()
    }
}

/// Maps typographic punctuation to its ASCII twin: curly quotes, dashes and minus signs,
/// non-breaking and other odd spaces. Char-for-char, so positions in the normalised text line up
/// with positions in the original (by char index). Models often "prettify" the code they quote.
pub fn punct_char(c: char) -> char {
    match c {
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' | '\u{FF07}' => '\'',
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' | '\u{FF02}' => '"',
        '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}'
        | '\u{2212}' => '-',
        '\u{00A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
        '\u{200B}' | '\u{FEFF}' => ' ',
        other => other,
    }
}

/// [`punct_char`] over a whole string.
pub fn normalize_punctuation(s: &str) -> String {
    s.chars().map(punct_char).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn punctuation() {
        assert_eq!(
            normalize_punctuation("\u{201C}a\u{201D} \u{2013} \u{2018}b\u{2019}\u{00A0}c"),
            "\"a\" - 'b' c"
        );
    }

    use super::*;

    #[test]
    fn detects_endings() {
        assert_eq!(LineEnding::detect(b"a\r\nb\r\n"), LineEnding::CrLf);
        assert_eq!(LineEnding::detect(b"a\nb\n"), LineEnding::Lf);
        assert_eq!(LineEnding::detect(b"abc"), LineEnding::Lf);
    }

    #[test]
    fn adapts_crlf_and_bom() {
        let existing = b"\xEF\xBB\xBFone\r\ntwo\r\n";
        assert_eq!(
            adapt_to_existing("x\ny\n", existing),
            b"\xEF\xBB\xBFx\r\ny\r\n".to_vec()
        );
        assert_eq!(adapt_to_existing("x\ny\n", b"a\nb\n"), b"x\ny\n".to_vec());
    }

    #[test]
    fn binary_detection() {
        assert!(is_binary("a.txt", b"abc\0def"));
        assert!(is_binary("logo.PNG", b"hello"));
        assert!(!is_binary("a.txt", b"plain text\n"));
        assert!(looks_binary(&[1, 2, 3, 4, b'a']));
        assert!(!looks_binary("héllo wörld\n".as_bytes()));
    }

    #[test]
    fn lossy_flag() {
        assert!(!decode_lossy(b"ok").1);
        let (s, bad) = decode_lossy(b"a\xffb");
        assert!(bad);
        assert_eq!(s, "a\u{FFFD}b");
    }
}
