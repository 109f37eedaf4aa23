//! The list sections: Models, Tools, Tool Descriptions, MCP Servers, Success Criteria.
//!
//! One entry per line (a `- ` bullet is optional). A list section the file has replaces the
//! default list whole; an empty `## Tools` therefore means "no tools", while a missing one
//! keeps the default (every tool).

use std::collections::BTreeMap;

use crate::config::ModelSpec;

use super::criteria::Criterion;
use super::model::{McpServer, McpTransport, ModelEntry, SourceLine, ToolEntry};
use super::parse::Section;
use super::problems::{ProblemKind, did_you_mean, list};
use super::sections::{Ctx, Item, SectionId, body_text, items, key_value, subsections};

/// `## Models`: one spec per line; the same spec twice is an error (use `#2`).
pub(crate) fn models(section: &Section, ctx: &mut Ctx) -> Vec<ModelEntry> {
    let mut out: Vec<ModelEntry> = Vec::new();
    for item in items(&section.body, SectionId::Models, ctx) {
        match ctx.model_spec(&item.text) {
            Ok(spec) => {
                if let Some(first) = out.iter().find(|m| m.spec == spec) {
                    let again = ModelSpec {
                        sample: spec.sample + 1,
                        ..spec.clone()
                    };
                    ctx.problem(
                        item.line,
                        ProblemKind::DuplicateEntry,
                        format!(
                            "`{spec}` is already listed at line {}; write `{again}` for another \
                             sample of the same model",
                            first.line.0
                        ),
                    );
                    continue;
                }
                out.push(ModelEntry {
                    spec,
                    line: SourceLine(item.line),
                });
            }
            Err(e) => ctx.problem(item.line, ProblemKind::BadModel, e.to_string()),
        }
    }
    out
}

/// Checks a tool name against the built-in tools.
pub(crate) fn known_tool(name: &str, line: usize, ctx: &mut Ctx) -> bool {
    if ctx.tools.contains(&name) {
        return true;
    }
    let message = format!(
        "`{name}` is not a tool{}; tools: {}",
        did_you_mean(name, ctx.tools.iter().copied()),
        list(&ctx.tools)
    );
    ctx.problem(line, ProblemKind::UnknownTool, message);
    false
}

/// `## Tools`: `name`, `name: guidance`, `bash(prefix, prefix)`, `bash(...): guidance`.
pub(crate) fn tools(section: &Section, ctx: &mut Ctx) -> Vec<ToolEntry> {
    let mut out: Vec<ToolEntry> = Vec::new();
    for item in items(&section.body, SectionId::Tools, ctx) {
        let Some(entry) = tool_entry(&item, ctx) else {
            continue;
        };
        if let Some(first) = ctx.trace.tools.get(&entry.name) {
            ctx.problem(
                item.line,
                ProblemKind::DuplicateEntry,
                format!(
                    "`{}` is already listed at line {first}; keep one line per tool",
                    entry.name
                ),
            );
            continue;
        }
        ctx.trace.tools.insert(entry.name.clone(), item.line);
        out.push(entry);
    }
    out
}

fn tool_entry(item: &Item, ctx: &mut Ctx) -> Option<ToolEntry> {
    let text = item.text.as_str();
    let name_end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .unwrap_or(text.len());
    let name = &text[..name_end];
    let mut rest = text[name_end..].trim_start();
    if name.is_empty() {
        ctx.problem(
            item.line,
            ProblemKind::Syntax,
            format!(
                "`{text}` is not a tool line; write `name`, `name: guidance` or `bash(cargo test, cargo build)`"
            ),
        );
        return None;
    }
    let known = known_tool(name, item.line, ctx);
    let mut bash_prefixes = None;
    let mut search_backend = None;
    if let Some(inner) = rest.strip_prefix('(') {
        let Some((inside, after)) = inner.split_once(')') else {
            ctx.problem(
                item.line,
                ProblemKind::Syntax,
                format!(
                    "`{text}`: `(` is never closed; write e.g. `bash(cargo test, cargo build)`"
                ),
            );
            return None;
        };
        rest = after.trim_start();
        if name == "web_search" {
            let backend = inside.trim();
            if crate::tools::SearchBackend::parse(backend).is_some() {
                search_backend = Some(backend.to_string());
            } else {
                ctx.problem(
                    item.line,
                    ProblemKind::Syntax,
                    format!(
                        "`{text}`: unknown search backend `{backend}`; write one of \
                         web_search(brave), web_search(tavily), web_search(exa), \
                         web_search(searxng)"
                    ),
                );
            }
        } else if name != "bash" {
            ctx.problem(
                item.line,
                ProblemKind::Syntax,
                format!(
                    "only bash takes a list of allowed command prefixes (and web_search a \
                     backend), not `{name}`; write just `{name}`"
                ),
            );
        } else {
            bash_prefixes = prefixes(inside, item.line, ctx);
        }
    }
    let guidance = if rest.is_empty() {
        None
    } else if let Some(g) = rest.strip_prefix(':') {
        let g = g.trim();
        if g.is_empty() {
            ctx.problem(
                item.line,
                ProblemKind::MissingValue,
                format!("nothing after `{name}:`; write `{name}: guidance` or just `{name}`"),
            );
            return None;
        }
        Some(g.to_string())
    } else {
        ctx.problem(
            item.line,
            ProblemKind::Syntax,
            format!(
                "`{text}` is not a tool line; write `name`, `name: guidance` or `bash(cargo test, cargo build)`"
            ),
        );
        return None;
    };
    known.then(|| ToolEntry {
        name: name.to_string(),
        guidance,
        bash_prefixes,
        search_backend,
        line: SourceLine(item.line),
    })
}

/// The prefixes of `bash(...)`. A trailing `*` (Errata-style `go test *`) means the same as
/// the plain prefix and is dropped; any other `*` is an error, since prefixes are not globs.
fn prefixes(inside: &str, line: usize, ctx: &mut Ctx) -> Option<Vec<String>> {
    let mut out = Vec::new();
    for raw in inside.split(',') {
        let p = raw.trim().trim_end_matches('*').trim_end();
        if p.is_empty() {
            ctx.problem(
                line,
                ProblemKind::MissingValue,
                "empty command prefix in `bash(...)`; list prefixes such as `bash(cargo test, \
                 cargo build)`, or write just `bash` to allow every command",
            );
            return None;
        }
        if p.contains('*') {
            ctx.problem(
                line,
                ProblemKind::BadValue,
                format!(
                    "`{}`: bash prefixes are plain command prefixes matched word by word, not \
                     globs; write e.g. `cargo test`",
                    raw.trim()
                ),
            );
            return None;
        }
        out.push(p.to_string());
    }
    Some(out)
}

/// `## Tool Descriptions`: `name: description` lines, or `### name` with a multi-line body.
pub(crate) fn descriptions(section: &Section, ctx: &mut Ctx) -> BTreeMap<String, String> {
    let (lead, subs) = subsections(section);
    let mut entries: Vec<(String, String, usize)> = Vec::new();
    for item in items(&lead, SectionId::ToolDescriptions, ctx) {
        match key_value(&item.text) {
            Some((name, text)) => entries.push((name, text.to_string(), item.line)),
            None => ctx.problem(
                item.line,
                ProblemKind::Syntax,
                format!(
                    "`{}` is not `tool: description`; or put a long description under a `### tool` heading",
                    item.text
                ),
            ),
        }
    }
    for sub in subs {
        entries.push((sub.name.trim().to_string(), body_text(&sub.body), sub.line));
    }
    let mut out = BTreeMap::new();
    for (name, text, line) in entries {
        if !known_tool(&name, line, ctx) {
            continue;
        }
        if text.is_empty() {
            ctx.problem(
                line,
                ProblemKind::MissingValue,
                format!("no description for `{name}`; write `{name}: what the tool does`"),
            );
            continue;
        }
        if let Some(first) = ctx.trace.descriptions.get(&name) {
            ctx.problem(
                line,
                ProblemKind::DuplicateEntry,
                format!("`{name}` already has a description at line {first}; keep one"),
            );
            continue;
        }
        ctx.trace.descriptions.insert(name.clone(), line);
        out.insert(name, text);
    }
    out
}

/// `## MCP Servers`: `name: command args` (stdio) or `name: https://...` (streamable HTTP).
pub(crate) fn mcp_servers(section: &Section, ctx: &mut Ctx) -> Vec<McpServer> {
    let mut out: Vec<McpServer> = Vec::new();
    let mut lines: BTreeMap<String, usize> = BTreeMap::new();
    for item in items(&section.body, SectionId::McpServers, ctx) {
        let form = "write `name: command args` or `name: https://host/path`";
        let Some((name, target)) = item.text.split_once(':') else {
            ctx.problem(
                item.line,
                ProblemKind::Syntax,
                format!("`{}` names no server; {form}", item.text),
            );
            continue;
        };
        let name = name.trim();
        let target = target.trim();
        let valid_name = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
        if !valid_name {
            ctx.problem(
                item.line,
                ProblemKind::BadValue,
                format!(
                    "`{name}` is not a server name: use letters, digits, `-`, `_` and `.`; {form}"
                ),
            );
            continue;
        }
        if target.is_empty() {
            ctx.problem(
                item.line,
                ProblemKind::MissingValue,
                format!("server `{name}` has no command or URL; {form}"),
            );
            continue;
        }
        let transport = match transport(target) {
            Ok(t) => t,
            Err(reason) => {
                ctx.problem(
                    item.line,
                    ProblemKind::BadValue,
                    format!("server `{name}`: {reason}"),
                );
                continue;
            }
        };
        if let Some(first) = lines.get(name) {
            ctx.problem(
                item.line,
                ProblemKind::DuplicateEntry,
                format!("server `{name}` is already defined at line {first}; give each server its own name"),
            );
            continue;
        }
        lines.insert(name.to_string(), item.line);
        out.push(McpServer {
            name: name.to_string(),
            transport,
        });
    }
    out
}

fn transport(target: &str) -> Result<McpTransport, String> {
    let lower = target.to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") {
        let host = target
            .split_once("://")
            .map(|(_, rest)| rest.split(['/', '?', '#']).next().unwrap_or(""))
            .unwrap_or("");
        if host.is_empty() || target.chars().any(char::is_whitespace) {
            return Err(format!(
                "`{target}` is not a URL; write e.g. `https://mcp.example.com/mcp` (no spaces)"
            ));
        }
        return Ok(McpTransport::Http {
            url: target.to_string(),
        });
    }
    let argv = split_args(target)?;
    Ok(McpTransport::Stdio {
        command_line: target.to_string(),
        argv,
    })
}

/// Splits a command line into words; `"..."` and `'...'` group words (no escapes).
pub(crate) fn split_args(text: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    for c in text.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => word.push(c),
            None if c == '"' || c == '\'' => {
                quote = Some(c);
                in_word = true;
            }
            None if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            None => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if let Some(q) = quote {
        return Err(format!("`{text}`: the quote {q} is never closed"));
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

/// `## Success Criteria`: one criterion per line.
pub(crate) fn criteria(section: &Section, ctx: &mut Ctx) -> Vec<Criterion> {
    let mut out: Vec<Criterion> = Vec::new();
    let mut lines: Vec<usize> = Vec::new();
    for item in items(&section.body, SectionId::SuccessCriteria, ctx) {
        match Criterion::parse(&item.text, &ctx.tools) {
            Ok(c) => {
                if let Some(i) = out.iter().position(|o| *o == c) {
                    ctx.problem(
                        item.line,
                        ProblemKind::DuplicateEntry,
                        format!("`{c}` is already listed at line {}; keep one", lines[i]),
                    );
                    continue;
                }
                out.push(c);
                lines.push(item.line);
            }
            Err(e) => ctx.problem(item.line, e.kind, e.message),
        }
    }
    ctx.trace.criteria = lines;
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn command_lines_split_like_a_shell_without_escapes() {
        assert_eq!(
            split_args("npx -y @scope/server --root 'my dir' \"a b\"c").unwrap(),
            ["npx", "-y", "@scope/server", "--root", "my dir", "a bc"]
        );
        assert_eq!(split_args("x ''").unwrap(), ["x", ""]);
        assert!(split_args("x 'open").is_err());
    }

    #[test]
    fn transports_by_scheme() {
        assert!(matches!(
            transport("https://mcp.example.com/mcp").unwrap(),
            McpTransport::Http { .. }
        ));
        assert!(transport("https:///nohost").is_err());
        let McpTransport::Stdio { argv, .. } = transport("uvx mcp-server-git").unwrap() else {
            panic!("stdio expected");
        };
        assert_eq!(argv, ["uvx", "mcp-server-git"]);
    }
}
