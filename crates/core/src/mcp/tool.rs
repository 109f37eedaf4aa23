//! An MCP server's tool as one more [`Tool`] of the registry, so the agent loop dispatches it
//! like a built-in one (one loop, one event stream, the panels show its calls), and its
//! result (text, pictures, structured content) as a [`ToolOutput`].

use std::collections::HashSet;
use std::sync::{Arc, LazyLock, Mutex};

use base64::Engine;
use futures::future::BoxFuture;
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use serde_json::Value;

use super::client::{CallEnd, Server};
use crate::model::ToolOutcome;
use crate::tools::{ImagePart, Tool, ToolClass, ToolContext, ToolOutput, ToolSpec};

/// Bytes of text a result keeps (its start; the rest is said to be cut).
const MAX_TEXT: usize = 100 * 1024;

/// Tool names live as long as the process ([`ToolSpec::name`] is `&'static str`, as fixed
/// built-in names are): each distinct name is kept once, however many turns start its server.
fn intern(name: &str) -> &'static str {
    static NAMES: LazyLock<Mutex<HashSet<&'static str>>> =
        LazyLock::new(|| Mutex::new(HashSet::new()));
    let Ok(mut names) = NAMES.lock() else {
        return Box::leak(name.to_string().into_boxed_str());
    };
    if let Some(found) = names.get(name) {
        return found;
    }
    let leaked: &'static str = Box::leak(name.to_string().into_boxed_str());
    names.insert(leaked);
    leaked
}

/// One tool of one server.
pub(crate) struct McpTool {
    spec: ToolSpec,
    remote: String,
    server: Arc<Server>,
    /// The server annotated the tool `readOnlyHint`: its calls run beside other reads.
    read_only: bool,
}

impl McpTool {
    /// The tool `remote` of `server`, offered as `name` with `parameters`.
    pub(crate) fn new(
        server: Arc<Server>,
        name: &str,
        remote: &str,
        description: &str,
        parameters: Value,
        class: ToolClass,
    ) -> McpTool {
        let described = if description.trim().is_empty() {
            format!(
                "Tool `{remote}` of the MCP server `{}`.",
                server.spec().name
            )
        } else {
            description.to_string()
        };
        McpTool {
            spec: ToolSpec {
                name: intern(name),
                description: described,
                parameters,
                guidance: format!(
                    "{name}: tool `{remote}` of the MCP server `{}`",
                    server.spec().name
                ),
                class,
            },
            remote: remote.to_string(),
            server,
            read_only: false,
        }
    }

    /// This tool as the server annotated it: `readOnlyHint` lets its calls of one step run
    /// at the same time as the step's other reads (the server's word is taken: a tool that
    /// says it reads but writes only races other reads of that step).
    pub(crate) fn read_only(mut self, read_only: bool) -> McpTool {
        self.read_only = read_only;
        self
    }
}

impl Tool for McpTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn concurrent(&self) -> bool {
        self.read_only
    }

    fn call<'a>(&'a self, args: &'a Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            let arguments = match args {
                Value::Object(map) => map.clone(),
                Value::Null => serde_json::Map::new(),
                _ => {
                    return ToolOutput::error(format!(
                        "invalid arguments for {}: send one JSON object",
                        self.spec.name
                    ));
                }
            };
            match self.server.call(&self.remote, arguments, &ctx.cancel).await {
                CallEnd::Answered(result) => output_of(result),
                CallEnd::TimedOut(limit) => ToolOutput::error(format!(
                    "{} timed out after {} s and was cancelled on the server",
                    self.spec.name,
                    limit.as_secs_f64()
                ))
                .with_outcome(ToolOutcome::TimedOut),
                CallEnd::Cancelled => {
                    ToolOutput::error(format!("{} was cancelled", self.spec.name))
                        .with_outcome(ToolOutcome::Cancelled)
                }
                CallEnd::Failed(message) => ToolOutput::error(message),
            }
        })
    }
}

/// The model's view of a result: text parts in order, the first picture as the result's
/// image (a note for any further one), other content named, structured content as JSON
/// unless a text part already says the same.
pub(crate) fn output_of(result: CallToolResult) -> ToolOutput {
    let mut text: Vec<String> = Vec::new();
    let mut image: Option<ImagePart> = None;
    let b64 = base64::engine::general_purpose::STANDARD;
    for block in &result.content {
        match block {
            ContentBlock::Text(t) => text.push(t.text.clone()),
            ContentBlock::Image(i) => match b64.decode(i.data.as_bytes()) {
                Ok(bytes) if image.is_none() => {
                    text.push(format!("[image: {}, {} bytes]", i.mime_type, bytes.len()));
                    image = Some(ImagePart {
                        media_type: i.mime_type.clone(),
                        data: bytes,
                    });
                }
                Ok(bytes) => text.push(format!(
                    "[a further image ({}, {} bytes) is not shown: one picture per result]",
                    i.mime_type,
                    bytes.len()
                )),
                Err(_) => text.push(format!(
                    "[an image ({}) whose data is not valid base64]",
                    i.mime_type
                )),
            },
            ContentBlock::Audio(a) => text.push(format!(
                "[audio ({}) is not shown: versus passes text and pictures]",
                a.mime_type
            )),
            ContentBlock::Resource(r) => match &r.resource {
                ResourceContents::TextResourceContents { uri, text: t, .. } => {
                    text.push(format!("[resource {uri}]\n{t}"));
                }
                ResourceContents::BlobResourceContents { uri, mime_type, .. } => {
                    text.push(format!(
                        "[resource {uri} ({}) is binary and not shown]",
                        mime_type.as_deref().unwrap_or("unknown type")
                    ))
                }
                #[allow(unreachable_patterns)]
                _ => text.push("[a resource of a kind versus does not show]".into()),
            },
            ContentBlock::ResourceLink(link) => {
                text.push(format!("[resource link: {} ({})]", link.uri, link.name));
            }
            #[allow(unreachable_patterns)]
            _ => text.push("[content of a kind versus does not show]".into()),
        }
    }
    if let Some(structured) = &result.structured_content {
        let said = text
            .iter()
            .any(|t| serde_json::from_str::<Value>(t).is_ok_and(|v| &v == structured));
        if !said {
            text.push(format!("structured content: {structured}"));
        }
    }
    let mut joined = text.join("\n");
    if joined.len() > MAX_TEXT {
        let mut cut = MAX_TEXT;
        while !joined.is_char_boundary(cut) {
            cut -= 1;
        }
        let total = joined.len();
        joined.truncate(cut);
        joined.push_str(&format!(
            "\n[cut: {total} bytes in all, the first {cut} shown]"
        ));
    }
    if joined.is_empty() {
        joined = "(the tool returned no content)".into();
    }
    let mut out = if result.is_error == Some(true) {
        ToolOutput::error(joined)
    } else {
        ToolOutput::ok(joined)
    };
    out.image = image;
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn result(v: Value) -> CallToolResult {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn text_pictures_and_structured_content_reach_the_model() {
        let out = output_of(result(json!({"content": [
            {"type": "text", "text": "here"},
            {"type": "image", "data": "iVBORw==", "mimeType": "image/png"},
            {"type": "image", "data": "iVBORw==", "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "file:///a", "text": "A"}}
        ], "structuredContent": {"n": 1}})));
        assert!(!out.is_error);
        assert_eq!(out.image.as_ref().unwrap().media_type, "image/png");
        assert_eq!(out.image.unwrap().data, [0x89, b'P', b'N', b'G']);
        assert!(
            out.text.starts_with("here\n[image: image/png, 4 bytes]"),
            "{}",
            out.text
        );
        assert!(out.text.contains("a further image"), "{}", out.text);
        assert!(out.text.contains("[resource file:///a]\nA"), "{}", out.text);
        assert!(
            out.text.ends_with("structured content: {\"n\":1}"),
            "{}",
            out.text
        );

        let out = output_of(result(
            json!({"content": [{"type": "text", "text": "{\"n\": 1}"}],
            "structuredContent": {"n": 1}, "isError": true}),
        ));
        assert!(out.is_error);
        assert_eq!(out.text, "{\"n\": 1}", "said once");
    }

    #[test]
    fn names_are_kept_once() {
        let a = intern("s__t");
        let b = intern(&String::from("s__t"));
        assert!(std::ptr::eq(a, b));
    }
}
