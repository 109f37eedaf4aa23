//! Reading one config file: TOML text into a [`Layer`] whose every entry remembers the file
//! and line it came from, so that errors found later (after layering) can still point there.
//!
//! Unknown keys are errors, not warnings: a misspelt `base_ulr` silently ignored would send
//! requests somewhere the user did not mean. `[ui]` is kept as a raw table here and checked
//! against [`super::UiConfig`], so new UI settings need no change to this file.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use super::ConfigError;
use super::kind::ApiKind;
use super::prices::PriceEntry;

/// A place in a config file, for messages: `path:line`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// The file.
    pub path: PathBuf,
    /// 1-based line, when known.
    pub line: Option<usize>,
}

impl Origin {
    /// A place in a file.
    pub fn new(path: impl Into<PathBuf>, line: Option<usize>) -> Origin {
        Origin {
            path: path.into(),
            line,
        }
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}", self.path.display()),
            None => write!(f, "{}", self.path.display()),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    models: Option<Spanned<Vec<Spanned<String>>>>,
    #[serde(default)]
    providers: BTreeMap<String, Spanned<ProviderBlock>>,
    #[serde(default)]
    prices: BTreeMap<String, Spanned<PriceEntry>>,
    ui: Option<Spanned<toml::Table>>,
    sandbox: Option<Spanned<toml::Table>>,
    check: Option<Spanned<CheckBlock>>,
    seed: Option<u64>,
    edit_tools: Option<crate::model::EditTools>,
    #[serde(default)]
    mcp_servers: BTreeMap<String, Spanned<McpServerBlock>>,
    web_search: Option<Spanned<WebSearchBlock>>,
    sub_agents: Option<Spanned<SubAgentsBlock>>,
}

/// `[web_search]` as written: turns the web_search tool on for every model of every run,
/// with one backend; see docs/extensions.md, "Web search".
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebSearchBlock {
    /// `brave`, `tavily`, `exa` or `searxng` (the default: keyless, at `url`).
    pub backend: Option<String>,
    /// The endpoint: a SearXNG instance's address (required for it), or another address for
    /// a keyed service (a proxy). User config only: the key is sent there.
    pub url: Option<String>,
    /// The variable holding the key, instead of the service's own (`BRAVE_API_KEY`, ...).
    /// User config only: a project must not choose which of the user's secrets is sent.
    pub api_key_env: Option<String>,
    /// Results per search when the model asks for no number (1 to 20, default 5).
    pub max_results: Option<u32>,
    /// `false` turns off what an earlier layer turned on.
    pub enabled: Option<bool>,
}

/// `[sub_agents]`: turns `spawn_agent` on for every model of every run (off without it); see
/// docs/extensions.md, "Sub-agents".
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubAgentsBlock {
    /// `false` turns sub-agents off again (a later layer over an earlier one); default true.
    pub enabled: Option<bool>,
    /// How deep sub-agents may nest (default 2).
    pub max_depth: Option<u32>,
    /// Sub-agents one model may start in one turn, nested ones included (default 4).
    pub max_per_turn: Option<u32>,
}

/// One `[mcp_servers.NAME]` block as written: an MCP server whose tools every model of a run
/// gets (as `NAME__tool`). A `command` is started over stdio, a `url` is reached over
/// Streamable HTTP; see docs/extensions.md.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpServerBlock {
    /// The program of a stdio server (`npx`, `uvx`, a path).
    pub command: Option<String>,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Environment variables given to the server, literally.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Names of versus's own environment variables passed on to the server (user config
    /// only: a project must not choose which of the user's secrets a program receives).
    #[serde(default)]
    pub env_vars: Vec<String>,
    /// The endpoint of a Streamable HTTP server.
    pub url: Option<String>,
    /// Request headers sent to an HTTP server, literally.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Request headers whose values come from environment variables (header -> variable;
    /// user config only).
    #[serde(default)]
    pub env_headers: BTreeMap<String, String>,
    /// The variable holding a bearer token for an HTTP server (user config only).
    pub bearer_token_env: Option<String>,
    /// One server for the whole run instead of one per model in its workspace's sandbox.
    #[serde(default)]
    pub shared: bool,
    /// `false` turns off a server an earlier layer configured.
    pub enabled: Option<bool>,
    /// Seconds the server may take to start and list its tools (default 30).
    pub startup_timeout: Option<f64>,
    /// Seconds one tool call may take (default 120).
    pub tool_timeout: Option<f64>,
}

/// `[check]`: the review check, a command run in each model's workspace as soon as that model
/// finishes, so the review can say which change builds and passes (and open on the best one).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckBlock {
    /// The shell command (`cargo test`, `npm test`); empty: no check (a later layer can turn
    /// off an earlier one's).
    pub command: String,
}

/// One `[providers.NAME]` block as written.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderBlock {
    /// API format; required for names that are not built in.
    pub kind: Option<ApiKind>,
    /// Base URL (for Ollama the server root; `/v1` is added).
    pub base_url: Option<String>,
    /// Variable holding the key; replaces the built-in variable names.
    pub api_key_env: Option<String>,
    /// The key itself (allowed, discouraged: prefer `api_key_env`).
    pub api_key: Option<String>,
    /// Extra request headers.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Model names to list in `versus models`.
    pub models: Option<Vec<String>>,
    /// Whether this provider's models accept images (default: decided from each model's name,
    /// see [`crate::config::vision`]); a model's own `[prices]` entry wins over this.
    pub vision: Option<bool>,
    /// Azure: `chat` or `responses`, the OpenAI API the deployments are called through.
    pub api: Option<crate::provider::azure::AzureApi>,
    /// Azure: the `api-version` query parameter.
    pub api_version: Option<String>,
    /// Azure: the variable holding an Entra ID token (user config only).
    pub entra_token_env: Option<String>,
    /// Azure: a command printing an Entra ID token (user config only).
    pub entra_token_command: Option<String>,
    /// Bedrock: the AWS region (else `AWS_REGION`, `AWS_DEFAULT_REGION`, the profile's).
    pub region: Option<String>,
    /// Bedrock: the AWS profile (else `AWS_PROFILE`, else `default`; user config only).
    pub profile: Option<String>,
}

/// One file's settings, each with the place it was written.
#[derive(Debug, Clone, Default)]
pub struct Layer {
    /// The file.
    pub path: PathBuf,
    /// `models = [...]`: each entry and where it is.
    pub models: Option<Vec<(String, Origin)>>,
    /// `[providers.NAME]` blocks in name order.
    pub providers: Vec<(String, ProviderBlock, Origin)>,
    /// `[prices."provider/model"]` blocks in key order.
    pub prices: Vec<(String, PriceEntry, Origin)>,
    /// `[ui]`, unchecked.
    pub ui: Option<(toml::Table, Origin)>,
    /// `[sandbox]`, unchecked.
    pub sandbox: Option<(toml::Table, Origin)>,
    /// `[check]`.
    pub check: Option<(CheckBlock, Origin)>,
    /// `seed = N`: the sampling seed sent to every provider that takes one.
    pub seed: Option<u64>,
    /// `edit_tools = "family" | "edit_file" | "apply_patch" | "both"`.
    pub edit_tools: Option<crate::model::EditTools>,
    /// `[mcp_servers.NAME]` blocks in name order.
    pub mcp_servers: Vec<(String, McpServerBlock, Origin)>,
    /// `[web_search]`.
    pub web_search: Option<(WebSearchBlock, Origin)>,
    /// `[sub_agents]`.
    pub sub_agents: Option<(SubAgentsBlock, Origin)>,
}

/// Reads and parses a config file.
pub fn read_layer(path: &Path) -> Result<Layer, ConfigError> {
    let text = crate::fsutil::read_capped_string(path, super::FILE_READ_CAP).map_err(|error| {
        ConfigError::Read {
            path: path.to_path_buf(),
            error,
        }
    })?;
    parse_layer(&text, path)
}

/// Parses config text; `path` is used in messages only.
pub fn parse_layer(text: &str, path: &Path) -> Result<Layer, ConfigError> {
    let raw: RawFile = toml::from_str(text).map_err(|err| {
        let (line, column) = match err.span() {
            Some(span) => {
                let (l, c) = line_col(text, span.start);
                (Some(l), Some(c))
            }
            None => (None, None),
        };
        ConfigError::Syntax {
            path: path.to_path_buf(),
            line,
            column,
            message: friendly_message(err.message()),
        }
    })?;
    let at = |offset: usize| Origin::new(path, Some(line_col(text, offset).0));
    Ok(Layer {
        path: path.to_path_buf(),
        models: raw.models.map(|list| {
            list.into_inner()
                .into_iter()
                .map(|entry| {
                    let origin = at(entry.span().start);
                    (entry.into_inner(), origin)
                })
                .collect()
        }),
        providers: raw
            .providers
            .into_iter()
            .map(|(name, block)| {
                let origin = at(block.span().start);
                (name, block.into_inner(), origin)
            })
            .collect(),
        prices: raw
            .prices
            .into_iter()
            .map(|(key, entry)| {
                let origin = at(entry.span().start);
                (key, entry.into_inner(), origin)
            })
            .collect(),
        ui: raw.ui.map(|table| {
            let origin = at(table.span().start);
            (table.into_inner(), origin)
        }),
        sandbox: raw.sandbox.map(|table| {
            let origin = at(table.span().start);
            (table.into_inner(), origin)
        }),
        check: raw.check.map(|block| {
            let origin = at(block.span().start);
            (block.into_inner(), origin)
        }),
        seed: raw.seed,
        edit_tools: raw.edit_tools,
        mcp_servers: raw
            .mcp_servers
            .into_iter()
            .map(|(name, block)| {
                let origin = at(block.span().start);
                (name, block.into_inner(), origin)
            })
            .collect(),
        web_search: raw.web_search.map(|block| {
            let origin = at(block.span().start);
            (block.into_inner(), origin)
        }),
        sub_agents: raw.sub_agents.map(|block| {
            let origin = at(block.span().start);
            (block.into_inner(), origin)
        }),
    })
}

/// 1-based line and column of a byte offset.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// serde's "unknown field `x`, expected one of `a`, `b`" in the words of a config file.
pub(crate) fn friendly_message(message: &str) -> String {
    let message = message.trim();
    let Some(rest) = message.strip_prefix("unknown field ") else {
        return message
            .replace("unknown variant", "unknown value")
            .replace("expected f64", "expected a number")
            .replace("expected u64", "expected a whole number 0 or more")
            .replace("expected i64", "expected a whole number");
    };
    let (name, accepted) = match rest.split_once(", expected one of ") {
        Some((name, accepted)) => (name, accepted.to_string()),
        None => match rest.split_once(", expected ") {
            Some((name, accepted)) => (name, accepted.to_string()),
            None => match rest.split_once(", there are no fields") {
                Some((name, _)) => (name, "none yet".to_string()),
                None => (rest, String::new()),
            },
        },
    };
    if accepted.is_empty() {
        format!("unknown key {name}")
    } else {
        format!("unknown key {name}; accepted keys here: {accepted}")
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Layer, ConfigError> {
        parse_layer(text, Path::new("/home/u/.config/versus/config.toml"))
    }

    #[test]
    fn reads_every_section_with_lines() {
        let layer = parse(
            r#"
models = ["openai/gpt-5",
          "local/qwen"]

[providers.local]
kind = "openai-chat"
base_url = "http://127.0.0.1:8000/v1"
api_key_env = "LOCAL_KEY"
headers = { "X-Team" = "core" }
models = ["qwen"]

[prices."local/qwen"]
input = 0.1
output = 0.2

[ui]
"#,
        )
        .unwrap();
        let models = layer.models.unwrap();
        assert_eq!(models[0].0, "openai/gpt-5");
        assert_eq!(models[1].1.line, Some(3));
        let (name, block, origin) = &layer.providers[0];
        assert_eq!(name, "local");
        assert_eq!(block.kind, Some(ApiKind::OpenAiChat));
        assert_eq!(
            block.headers.get("X-Team").map(String::as_str),
            Some("core")
        );
        assert_eq!(origin.line, Some(5), "the [providers.local] header");
        assert_eq!(layer.prices[0].1.input, Some(0.1));
        assert!(layer.ui.is_some());
    }

    #[test]
    fn unknown_keys_name_the_key_file_line_and_accepted_keys() {
        let err = parse("[providers.openai]\nbase_ulr = \"x\"\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("config.toml:2"), "{err}");
        assert!(err.contains("unknown key `base_ulr`"), "{err}");
        assert!(err.contains("`base_url`"), "{err}");

        let err = parse("model = []\n").unwrap_err().to_string();
        assert!(err.contains(":1:"), "{err}");
        assert!(err.contains("unknown key `model`"), "{err}");
        assert!(err.contains("`models`"), "{err}");

        let err = parse("[prices.\"openai/gpt-5\"]\ninput_price = 1\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown key `input_price`"), "{err}");
        assert!(err.contains("`cache_read`"), "{err}");
    }

    #[test]
    fn bad_values_and_syntax_are_located() {
        let err = parse("[providers.x]\nkind = \"openai\"\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains(":2:"), "{err}");
        assert!(err.contains("openai-chat"), "{err}");
        let err = parse("models = [\"a\"\n").unwrap_err().to_string();
        assert!(err.contains("config.toml:"), "{err}");
    }

    #[test]
    fn friendly_message_rewrites_serde_wording() {
        assert_eq!(
            friendly_message("unknown field `x`, there are no fields"),
            "unknown key `x`; accepted keys here: none yet"
        );
        assert_eq!(friendly_message("invalid type"), "invalid type");
        assert_eq!(
            friendly_message("invalid type: string \"a\", expected f64"),
            "invalid type: string \"a\", expected a number"
        );
    }
}
