//! HTML to readable text for the model.
//!
//! A model reading raw HTML spends most of its context on markup, scripts and styles. html2text
//! renders the document the way a text browser would: headings, paragraphs, lists and tables
//! stay, `<head>`, `<script>` and `<style>` go, and links become numbered footnotes listed after
//! the text so their targets stay readable (relative targets are made absolute against the
//! page's URL, so the model can fetch them as they are). The page title lives in `<head>`, which the renderer
//! drops, so it is pulled out separately and put first.

/// Columns the text is wrapped to: wide enough for code and tables, narrow enough to read.
const WIDTH: usize = 100;

use reqwest::Url;

/// Readable text of an HTML document (already decoded to a string) fetched from `base`.
pub(crate) fn to_text(html: &str, base: &Url) -> String {
    let body = match html2text::config::plain()
        .allow_width_overflow()
        .string_from_read(html.as_bytes(), WIDTH)
    {
        Ok(text) => text,
        Err(e) => {
            return format!(
                "[the HTML could not be converted to text ({e}); showing it as it came]\n{html}"
            );
        }
    };
    let body = absolute_footnotes(&body, base);
    match title(html) {
        Some(title) => format!("Title: {title}\n\n{body}"),
        None => body,
    }
}

/// Rewrites the trailing link footnotes (`[3]: /docs`) with absolute targets.
fn absolute_footnotes(text: &str, base: &Url) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let notes = lines
        .iter()
        .rev()
        .take_while(|l| footnote(l).is_some())
        .count();
    let (main, notes) = lines.split_at(lines.len() - notes);
    let mut out = main.join("\n");
    for line in notes {
        out.push('\n');
        match footnote(line) {
            Some((label, target)) if Url::parse(target).is_err() => match base.join(target) {
                Ok(url) => out.push_str(&format!("{label} {url}")),
                Err(_) => out.push_str(line),
            },
            _ => out.push_str(line),
        }
    }
    if text.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// Splits `[12]: target` into `("[12]:", "target")`.
fn footnote(line: &str) -> Option<(&str, &str)> {
    let rest = line.strip_prefix('[')?;
    let close = rest.find("]: ")?;
    if close == 0 || !rest[..close].bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((&line[..close + 3], &rest[close + 3..]))
}

/// The text of the document's `<title>`, whitespace collapsed, entities decoded.
fn title(html: &str) -> Option<String> {
    // Only the start of the document can hold the head.
    let head = html.get(..html.len().min(64 * 1024)).unwrap_or(html);
    let lower = head.to_ascii_lowercase();
    let open = lower.find("<title")?;
    let start = open + lower[open..].find('>')? + 1;
    let end = start + lower[start..].find("</title")?;
    let raw = &head[start..end];
    // Render the title's text through the same renderer to decode entities.
    let decoded = html2text::config::plain_no_decorate()
        .allow_width_overflow()
        .string_from_read(format!("<p>{raw}</p>").as_bytes(), usize::MAX / 4)
        .unwrap_or_else(|_| raw.to_string());
    let title = decoded.split_whitespace().collect::<Vec<_>>().join(" ");
    (!title.is_empty()).then_some(title)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    const PAGE: &str = r#"<!DOCTYPE html>
<html><head><title>The  Guide &amp; More</title>
<style>body { color: red; } .secret-style {}</style>
<script>var secretScript = 1; alert("x");</script></head>
<body><h1>Main Heading</h1>
<p>First paragraph with <a href="https://example.com/docs">a link</a>.</p>
<ul><li>item one</li><li>item two</li></ul>
<script>console.log("inline secret")</script>
</body></html>"#;

    fn base() -> Url {
        Url::parse("https://example.org/guide/intro.html").unwrap()
    }

    #[test]
    fn text_keeps_content_and_drops_markup_scripts_and_styles() {
        let text = to_text(PAGE, &base());
        assert!(text.starts_with("Title: The Guide & More\n"), "{text}");
        assert!(text.contains("Main Heading"), "{text}");
        assert!(text.contains("First paragraph with"), "{text}");
        assert!(
            text.contains("item one") && text.contains("item two"),
            "{text}"
        );
        assert!(text.contains("https://example.com/docs"), "{text}");
        for gone in [
            "<p>",
            "<h1>",
            "secretScript",
            "inline secret",
            "color: red",
            "<a ",
        ] {
            assert!(!text.contains(gone), "{gone} in {text}");
        }
    }

    #[test]
    fn relative_link_targets_become_absolute() {
        let html = r##"<p><a href="/api">API</a> <a href="next.html">next</a>
            <a href="#top">top</a> <a href="//cdn.example.net/x">cdn</a>
            <a href="mailto:a@b.c">mail</a> <a href="/wiki/File:x.png">file</a> <a href="https://other.net/">other</a></p>"##;
        let text = to_text(html, &base());
        for target in [
            "https://example.org/api",
            "https://example.org/guide/next.html",
            "https://example.org/guide/intro.html#top",
            "https://cdn.example.net/x",
            "mailto:a@b.c",
            "https://example.org/wiki/File:x.png",
            "https://other.net/",
        ] {
            assert!(text.contains(&format!("]: {target}\n")), "{target}: {text}");
        }
    }

    #[test]
    fn lines_are_wrapped_to_the_width() {
        let long = "word ".repeat(200);
        let text = to_text(&format!("<p>{long}</p>"), &base());
        assert!(text.lines().count() > 5, "{text}");
        assert!(text.lines().all(|l| l.chars().count() <= WIDTH), "{text}");
    }

    #[test]
    fn a_page_without_title_has_no_title_line() {
        let text = to_text("<p>just text</p>", &base());
        assert!(!text.contains("Title:"), "{text}");
        assert!(text.contains("just text"), "{text}");
    }

    #[test]
    fn deeply_nested_markup_does_not_crash() {
        let html = format!("{}deep{}", "<div>".repeat(3000), "</div>".repeat(3000));
        let text = to_text(&html, &base());
        assert!(text.contains("deep"), "{}", &text[..text.len().min(200)]);
    }
}
