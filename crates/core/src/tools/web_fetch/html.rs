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

/// Deepest element nesting html2text is given. Its layout work grows faster than linearly
/// with depth (a 2 MB page of 200,000 nested `<div>`s took minutes of CPU), and no readable
/// page nests this deep; deeper documents get the linear tag stripper instead.
const MAX_DEPTH: usize = 512;

/// Elements that never have a closing tag, so they do not deepen the nesting.
const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
    "wbr", "!doctype", "!--",
];

/// The deepest nesting of elements in `html`, counted in one pass over the tags (an
/// approximation that can only over-count: unclosed `<p>` and `<li>` count as open).
fn nesting_depth(html: &str) -> usize {
    let bytes = html.as_bytes();
    let (mut depth, mut deepest) = (0usize, 0usize);
    for at in memchr::memchr_iter(b'<', bytes) {
        let rest = &html[at + 1..];
        if let Some(closing) = rest.strip_prefix('/') {
            if closing.starts_with(|c: char| c.is_ascii_alphabetic()) {
                depth = depth.saturating_sub(1);
            }
            continue;
        }
        if !rest.starts_with(|c: char| c.is_ascii_alphabetic()) {
            continue;
        }
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .map(|c| c.to_ascii_lowercase())
            .collect();
        let self_closing = rest.find('>').is_some_and(|end| rest[..end].ends_with('/'));
        if VOID.contains(&name.as_str()) || self_closing {
            continue;
        }
        depth += 1;
        deepest = deepest.max(depth);
    }
    deepest
}

/// Text of `html` with every tag removed and whitespace runs collapsed: linear in the input,
/// for documents too deep to lay out.
fn strip_tags(html: &str) -> String {
    let mut out = String::with_capacity(html.len() / 4);
    let mut in_tag = false;
    let mut last_blank = true;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                if !last_blank {
                    out.push(' ');
                    last_blank = true;
                }
            }
            _ if in_tag => {}
            c if c.is_whitespace() => {
                if !last_blank {
                    out.push(if c == '\n' { '\n' } else { ' ' });
                    last_blank = true;
                }
            }
            c => {
                out.push(c);
                last_blank = false;
            }
        }
    }
    out
}

/// Readable text of an HTML document (already decoded to a string) fetched from `base`.
pub(crate) fn to_text(html: &str, base: &Url) -> String {
    let depth = nesting_depth(html);
    if depth > MAX_DEPTH {
        return format!(
            "[the page nests its elements {depth} deep (more than {MAX_DEPTH}), too deep to lay \
             out; its text with the markup removed follows]\n{}",
            strip_tags(html).trim()
        );
    }
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
    let title = inline_text(&head[start..end]);
    (!title.is_empty()).then_some(title)
}

/// The text of a short HTML fragment on one line: tags dropped, entities decoded, whitespace
/// collapsed (a page title, a search result's snippet with its `<strong>` marks).
pub(crate) fn inline_text(raw: &str) -> String {
    // Rendered through the same renderer as pages, to decode entities the same way.
    let decoded = html2text::config::plain_no_decorate()
        .allow_width_overflow()
        .string_from_read(format!("<p>{raw}</p>").as_bytes(), usize::MAX / 4)
        .unwrap_or_else(|_| strip_tags(raw));
    decoded.split_whitespace().collect::<Vec<_>>().join(" ")
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
    fn a_page_nested_too_deep_gets_the_linear_stripper() {
        let n = 200_000;
        let html = format!(
            "<html><body>{}deep text{}</body></html>",
            "<div>".repeat(n),
            "</div>".repeat(n)
        );
        assert_eq!(nesting_depth(&html), n + 2);
        let text = to_text(&html, &base());
        assert!(
            text.starts_with("[the page nests its elements 200002 deep"),
            "{}",
            &text[..200]
        );
        assert!(text.contains("deep text"), "{}", &text[..200]);
    }

    #[test]
    fn ordinary_pages_are_shallow_and_void_elements_do_not_count() {
        assert_eq!(nesting_depth(PAGE), 4);
        let many = "<p>a<br>b<img src=x><hr/></p>".repeat(10_000);
        assert_eq!(nesting_depth(&many), 1);
        assert!(!to_text(PAGE, &base()).contains("too deep"));
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
