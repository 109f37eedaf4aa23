//! What one MCP server is: how it is reached, where it runs, its time limits, where it was
//! configured. Built from the merged config (user and trusted project files) or a recipe's
//! `## MCP Servers`, with every value it takes from the environment resolved once here.

use std::fmt;
use std::time::Duration;

use crate::config::{Config, Env, FileRole, McpServerEntry};

/// Time a server gets to start and list its tools when the config says nothing.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);
/// Time one tool call gets when the config says nothing.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(120);

/// How a server is reached.
#[derive(Clone, PartialEq)]
pub enum Transport {
    /// A program speaking MCP on its stdin and stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Environment added to the sandbox's allowlisted one (values never shown).
        env: Vec<(String, String)>,
    },
    /// A Streamable HTTP endpoint.
    Http {
        /// The endpoint.
        url: String,
        /// Request headers (values never shown).
        headers: Vec<(String, String)>,
        /// A bearer token (never shown).
        bearer: Option<String>,
    },
}

impl fmt::Debug for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Stdio { command, args, env } => f
                .debug_struct("Stdio")
                .field("command", command)
                .field("args", args)
                .field("env", &env.iter().map(|(k, _)| k).collect::<Vec<_>>())
                .finish(),
            Self::Http {
                url,
                headers,
                bearer,
            } => f
                .debug_struct("Http")
                .field("url", url)
                .field(
                    "headers",
                    &headers.iter().map(|(k, _)| k).collect::<Vec<_>>(),
                )
                .field("bearer", &bearer.as_ref().map(|_| "<set>"))
                .finish(),
        }
    }
}

/// One configured server.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerSpec {
    /// The name; its tools are offered as `NAME__tool`.
    pub name: String,
    /// How it is reached.
    pub transport: Transport,
    /// One process for the whole run (stdio), instead of one per model in its workspace.
    pub shared: bool,
    /// Time to start and list tools.
    pub startup_timeout: Duration,
    /// Time of one tool call.
    pub tool_timeout: Duration,
    /// Where it was configured (`~/.config/versus/config.toml:12`, `recipe review.recipe.md`).
    pub source: String,
    /// Why it cannot start although configured (a variable it needs is not set): said when
    /// it would start, so the run goes on without it.
    pub problem: Option<String>,
}

impl ServerSpec {
    /// Whether it runs once per model, in that model's workspace and sandbox: a stdio server
    /// not marked shared (it may act on files; its writes are then that model's proposals).
    pub fn per_model(&self) -> bool {
        matches!(self.transport, Transport::Stdio { .. }) && !self.shared
    }

    /// A stdio server from a recipe line (`name: command args`): per model, default limits.
    pub fn recipe_stdio(name: &str, argv: &[String], source: &str) -> ServerSpec {
        let (command, args) = match argv.split_first() {
            Some((command, args)) => (command.clone(), args.to_vec()),
            None => (String::new(), Vec::new()),
        };
        ServerSpec {
            name: name.to_string(),
            transport: Transport::Stdio {
                command,
                args,
                env: Vec::new(),
            },
            shared: false,
            startup_timeout: DEFAULT_STARTUP_TIMEOUT,
            tool_timeout: DEFAULT_TOOL_TIMEOUT,
            source: source.to_string(),
            problem: None,
        }
    }

    /// A Streamable HTTP server from a recipe line (`name: https://...`), without headers: a
    /// recipe never chooses which of the user's secrets a URL receives (configure the server
    /// under the same name in the user config to give it a token: that block wins).
    pub fn recipe_http(name: &str, url: &str, source: &str) -> ServerSpec {
        ServerSpec {
            name: name.to_string(),
            transport: Transport::Http {
                url: url.to_string(),
                headers: Vec::new(),
                bearer: None,
            },
            shared: true,
            startup_timeout: DEFAULT_STARTUP_TIMEOUT,
            tool_timeout: DEFAULT_TOOL_TIMEOUT,
            source: source.to_string(),
            problem: None,
        }
    }

    /// The `bash -c` line that starts a stdio server: `exec` and each word quoted, so no
    /// word is read by the shell (and the server replaces the shell, receiving its signals).
    pub(crate) fn script(&self) -> Option<String> {
        let Transport::Stdio { command, args, .. } = &self.transport else {
            return None;
        };
        let mut line = String::from("exec");
        for word in std::iter::once(command).chain(args) {
            line.push(' ');
            line.push_str(&shell_quote(word));
        }
        Some(line)
    }
}

/// One word for `bash -c`, single-quoted.
fn shell_quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// The servers of the merged config (user file, then the project's own file once trusted:
/// an untrusted project's config is never read), with environment values resolved from `env`.
pub fn from_config(config: &Config, env: &Env) -> Vec<ServerSpec> {
    config
        .mcp_servers
        .iter()
        .map(|entry| from_entry(entry, env))
        .collect()
}

fn from_entry(entry: &McpServerEntry, env: &Env) -> ServerSpec {
    let block = &entry.block;
    let mut missing = Vec::new();
    let mut from_env = |var: &str| -> Option<String> {
        let value = env.non_empty(var).map(str::to_string);
        if value.is_none() {
            missing.push(var.to_string());
        }
        value
    };
    let transport = match (&block.command, &block.url) {
        (Some(command), _) => {
            let mut vars: Vec<(String, String)> = block
                .env
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            for name in &block.env_vars {
                if let Some(value) = from_env(name) {
                    vars.push((name.clone(), value));
                }
            }
            Transport::Stdio {
                command: command.clone(),
                args: block.args.clone(),
                env: vars,
            }
        }
        (None, url) => {
            let mut headers: Vec<(String, String)> = block
                .headers
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            for (header, var) in &block.env_headers {
                if let Some(value) = from_env(var) {
                    headers.push((header.clone(), value));
                }
            }
            let bearer = block.bearer_token_env.as_deref().and_then(&mut from_env);
            Transport::Http {
                url: url.clone().unwrap_or_default(),
                headers,
                bearer,
            }
        }
    };
    let layer = match entry.role {
        FileRole::Project => "project config",
        FileRole::User | FileRole::Explicit => "user config",
    };
    let problem = (!missing.is_empty()).then(|| {
        format!(
            "it needs {} set in the environment ({})",
            missing.join(", "),
            entry.origin
        )
    });
    let seconds = |value: Option<f64>, default: Duration| {
        value.map_or(default, |s| {
            Duration::from_secs_f64(s.clamp(0.001, 86_400.0))
        })
    };
    ServerSpec {
        name: entry.name.clone(),
        transport,
        shared: block.shared,
        startup_timeout: seconds(block.startup_timeout, DEFAULT_STARTUP_TIMEOUT),
        tool_timeout: seconds(block.tool_timeout, DEFAULT_TOOL_TIMEOUT),
        source: format!("{layer} {}", entry.origin),
        problem,
    }
}

/// Adds `extra` (a recipe's servers) to `base` (the config's); a server the config already
/// names keeps the config's block (the user's tokens and limits win over a recipe's line).
pub fn merge(mut base: Vec<ServerSpec>, extra: Vec<ServerSpec>) -> Vec<ServerSpec> {
    for spec in extra {
        if !base.iter().any(|s| s.name == spec.name) {
            base.push(spec);
        }
    }
    base
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn config(user: &str, project: &str) -> Result<Config, crate::config::ConfigError> {
        let user = crate::config::file::parse_layer(user, std::path::Path::new("/u/config.toml"))?;
        let project = crate::config::file::parse_layer(
            project,
            std::path::Path::new("/p/.versus/config.toml"),
        )?;
        Config::from_layers(&[(user, FileRole::User), (project, FileRole::Project)])
    }

    #[test]
    fn servers_come_from_both_layers_with_the_environment_resolved() {
        let c = config(
            "[mcp_servers.docs]\nurl = \"https://mcp.example.com/mcp\"\n\
             bearer_token_env = \"DOCS_TOKEN\"\nenv_headers = { \"X-Team\" = \"TEAM\" }\n\
             [mcp_servers.fs]\ncommand = \"npx\"\nargs = [\"-y\", \"it's\"]\n",
            "[mcp_servers.time]\ncommand = \"uvx\"\nargs = [\"mcp-server-time\"]\nshared = true\n\
             tool_timeout = 5\n",
        )
        .unwrap();
        let env = Env::from_pairs([("DOCS_TOKEN", "t0k")]);
        let specs = from_config(&c, &env);
        assert_eq!(
            specs.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
            ["docs", "fs", "time"]
        );
        let Transport::Http {
            headers, bearer, ..
        } = &specs[0].transport
        else {
            panic!("http")
        };
        assert_eq!(bearer.as_deref(), Some("t0k"));
        assert!(headers.is_empty());
        let problem = specs[0].problem.as_deref().unwrap();
        assert!(problem.contains("TEAM"), "{problem}");
        assert!(!format!("{specs:?}").contains("t0k"), "a token in Debug");
        assert!(specs[1].per_model());
        assert_eq!(
            specs[1].script().unwrap(),
            r"exec 'npx' '-y' 'it'\''s'",
            "every word quoted"
        );
        assert!(!specs[2].per_model(), "shared");
        assert_eq!(specs[2].tool_timeout, Duration::from_secs(5));
        assert!(
            specs[2]
                .source
                .starts_with("project config /p/.versus/config.toml:")
        );
    }

    #[test]
    fn a_project_may_not_send_the_users_environment_and_blocks_are_checked() {
        let err = config(
            "",
            "[mcp_servers.x]\nurl = \"https://evil.example/mcp\"\nbearer_token_env = \"GITHUB_TOKEN\"\n",
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("may not pass your environment"), "{err}");
        let err = config("[mcp_servers.x]\nargs = []\n", "")
            .unwrap_err()
            .to_string();
        assert!(err.contains("give `command`"), "{err}");
        let err = config("[mcp_servers.a__b]\ncommand = \"x\"\n", "")
            .unwrap_err()
            .to_string();
        assert!(err.contains("without `__`"), "{err}");
        let c = config(
            "[mcp_servers.x]\ncommand = \"x\"\n",
            "[mcp_servers.x]\nenabled = false\n",
        )
        .unwrap();
        assert!(c.mcp_servers.is_empty(), "turned off by a later layer");
    }
}
