//! The offline demo provider: scripted models that need no key and no network.
//!
//! A script is JSON Lines, one line per model response (blank lines and `#` comments are
//! skipped). The step played is the number of assistant messages already in the conversation,
//! so a script naturally continues across tool rounds and turns:
//!
//! ```text
//! {"think": "Let me look.", "say": "Reading the code.", "tools": [{"name": "read_file", "args": {"path": "src/lib.rs"}}]}
//! {"say": "Fixed.", "token_delay_ms": 20}
//! ```
//!
//! Keys: `say` (text), `think` (thinking text), `tools` (calls: `name` + `args` object, or
//! `raw_args` text to simulate malformed JSON), `token_delay_ms` (pause per word so streaming
//! is visible), `error` (fail the request with this message instead), `agent` (the line
//! belongs to a sub-agent's track, below).
//!
//! Sub-agents: a line with `"agent": "NAME"` is played not for the model's own conversation
//! but for a conversation whose first message (a `spawn_agent` task) starts with `NAME`; the
//! lines of one track play in order like the main ones. So a script says what the model does
//! and what each sub-agent it starts does:
//!
//! ```text
//! {"tools": [{"name": "spawn_agent", "args": {"task": "fix: the greeting", "role": "coder"}}]}
//! {"agent": "fix", "tools": [{"name": "write_file", "args": {"path": "a.txt", "content": "hi\n"}}]}
//! {"agent": "fix", "say": "Wrote a.txt."}
//! {"say": "The sub-agent fixed it."}
//! ``` Built-in scripts
//! (`demo/good`, `demo/sloppy`, `demo/reckless`) are compiled into the binary so the demo works
//! from any folder; any other name is a path to a `.jsonl` file.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::client::{EventStream, ModelClient};
use super::error::ProviderError;
use super::http::receiver_stream;
use crate::model::{Completion, Message, ModelRequest, Part, Role, StopReason, StreamEvent, Usage};

/// The scripts shipped in the binary: (name, JSON Lines).
pub const BUILTIN_SCRIPTS: &[(&str, &str)] = &[
    ("good", include_str!("../../../../recipes/demo/good.jsonl")),
    (
        "sloppy",
        include_str!("../../../../recipes/demo/sloppy.jsonl"),
    ),
    (
        "reckless",
        include_str!("../../../../recipes/demo/reckless.jsonl"),
    ),
];

/// One scripted response.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DemoStep {
    /// Visible text.
    #[serde(default)]
    pub say: String,
    /// Thinking text.
    #[serde(default)]
    pub think: String,
    /// Tool calls.
    #[serde(default)]
    pub tools: Vec<DemoCall>,
    /// Pause per streamed word, in milliseconds.
    #[serde(default)]
    pub token_delay_ms: u64,
    /// Fail the request with this message.
    #[serde(default)]
    pub error: Option<String>,
    /// The sub-agent track the line belongs to: played for a conversation whose first
    /// message starts with this text (`None`: the model's own).
    #[serde(default)]
    pub agent: Option<String>,
}

/// One scripted tool call.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DemoCall {
    /// Tool name.
    pub name: String,
    /// Arguments object.
    #[serde(default)]
    pub args: Option<serde_json::Value>,
    /// Arguments text sent verbatim (to simulate malformed JSON).
    #[serde(default)]
    pub raw_args: Option<String>,
}

/// Why a script could not be loaded; the text names the file and line.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// No built-in script of that name and no such file.
    #[error(
        "no demo script `{name}`: built-in scripts are {builtins}; or give a path to a .jsonl file (demo/path/to/script.jsonl)"
    )]
    Unknown {
        /// The name given.
        name: String,
        /// The built-in names.
        builtins: String,
    },
    /// The file could not be read.
    #[error("could not read demo script {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A line is not a valid step.
    #[error("demo script {origin}, line {line}: {why}")]
    Parse {
        /// File or built-in name.
        origin: String,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        why: String,
    },
}

/// A scripted model.
#[derive(Debug, Clone)]
pub struct DemoModel {
    name: String,
    steps: Arc<Vec<DemoStep>>,
}

impl DemoModel {
    /// Loads `name`: a built-in script, else a path (relative to `base_dir`) to a `.jsonl`.
    pub fn load(name: &str, base_dir: &Path) -> Result<Self, DemoError> {
        if let Some((_, text)) = BUILTIN_SCRIPTS.iter().find(|(n, _)| *n == name) {
            return Self::parse(name, text);
        }
        let path = base_dir.join(name);
        if !(name.ends_with(".jsonl") || name.contains('/') || path.is_file()) {
            return Err(DemoError::Unknown {
                name: name.to_string(),
                builtins: BUILTIN_SCRIPTS
                    .iter()
                    .map(|(n, _)| format!("demo/{n}"))
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
        let text = std::fs::read_to_string(&path).map_err(|source| DemoError::Read {
            path: path.clone(),
            source,
        })?;
        Self::parse(&path.display().to_string(), &text)
    }

    /// Parses a script's text.
    pub fn parse(origin: &str, text: &str) -> Result<Self, DemoError> {
        let mut steps = Vec::new();
        for (index, line) in text.lines().enumerate() {
            let trimmed = line.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let step: DemoStep = serde_json::from_str(trimmed).map_err(|e| DemoError::Parse {
                origin: origin.to_string(),
                line: index + 1,
                why: e.to_string(),
            })?;
            for call in &step.tools {
                if call.args.is_some() == call.raw_args.is_some() {
                    return Err(DemoError::Parse {
                        origin: origin.to_string(),
                        line: index + 1,
                        why: format!(
                            "tool call `{}` needs exactly one of `args` (object) or `raw_args` (text)",
                            call.name
                        ),
                    });
                }
            }
            steps.push(step);
        }
        Ok(Self {
            name: origin.to_string(),
            steps: Arc::new(steps),
        })
    }

    /// The step to play: the `index`th line of the track the conversation belongs to (a
    /// sub-agent's when its first message starts with a track's name, the longest such name
    /// winning; else the lines without `agent`).
    fn step_for(&self, request: &ModelRequest, index: usize) -> Option<DemoStep> {
        let first = request
            .messages
            .iter()
            .find(|m| m.role == Role::User)
            .map(Message::text)
            .unwrap_or_default();
        let track = self
            .steps
            .iter()
            .filter_map(|s| s.agent.as_deref())
            .filter(|name| first.starts_with(name))
            .max_by_key(|name| name.len());
        self.steps
            .iter()
            .filter(|s| s.agent.as_deref() == track)
            .nth(index)
            .cloned()
    }

    /// Number of scripted responses.
    pub fn len(&self) -> usize {
        self.steps.len()
    }

    /// Whether the script has no responses.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }
}

impl ModelClient for DemoModel {
    fn provider(&self) -> &str {
        "demo"
    }

    fn stream(&self, request: ModelRequest, cancel: CancellationToken) -> EventStream {
        let (tx, rx) = mpsc::channel(256);
        let index = request
            .messages
            .iter()
            .filter(|m| m.role == Role::Assistant)
            .count();
        let step = self.step_for(&request, index);
        let name = self.name.clone();
        tokio::spawn(async move {
            let outcome = tokio::select! {
                outcome = play(step, index, &request, &tx) => outcome,
                () = cancel.cancelled() => Err(ProviderError::Cancelled),
            };
            if let Err(err) = outcome {
                let err = match err {
                    ProviderError::Stream { message, .. } => ProviderError::Stream {
                        provider: format!("demo ({name})"),
                        message,
                    },
                    other => other,
                };
                let _ = tx.send(Err(err)).await;
            }
        });
        receiver_stream(rx)
    }
}

type Sender = mpsc::Sender<Result<StreamEvent, ProviderError>>;

async fn play(
    step: Option<DemoStep>,
    index: usize,
    request: &ModelRequest,
    tx: &Sender,
) -> Result<(), ProviderError> {
    let step = step.unwrap_or_else(|| DemoStep {
        say: "(The demo script has no more steps.)".to_string(),
        think: String::new(),
        tools: Vec::new(),
        token_delay_ms: 0,
        error: None,
        agent: None,
    });
    if let Some(message) = step.error {
        return Err(ProviderError::Stream {
            provider: "demo".to_string(),
            message,
        });
    }
    let delay = Duration::from_millis(step.token_delay_ms);
    for word in words(&step.think) {
        pause(delay).await;
        send(tx, StreamEvent::ThinkingDelta { text: word }).await;
    }
    for word in words(&step.say) {
        pause(delay).await;
        send(tx, StreamEvent::TextDelta { text: word }).await;
    }
    let mut parts = Vec::new();
    if !step.think.is_empty() {
        parts.push(Part::Thinking {
            text: step.think.clone(),
            replay: None,
        });
    }
    if !step.say.is_empty() {
        parts.push(Part::text(step.say.clone()));
    }
    for (i, call) in step.tools.iter().enumerate() {
        let id = format!("demo_{index}_{i}");
        let arguments = match (&call.raw_args, &call.args) {
            (Some(raw), _) => raw.clone(),
            (None, Some(args)) => args.to_string(),
            (None, None) => "{}".to_string(),
        };
        pause(delay).await;
        send(
            tx,
            StreamEvent::ToolCallStart {
                index: i,
                id: id.clone(),
                name: call.name.clone(),
            },
        )
        .await;
        send(
            tx,
            StreamEvent::ToolCallDelta {
                index: i,
                delta: arguments.clone(),
            },
        )
        .await;
        parts.push(Part::ToolCall {
            id,
            name: call.name.clone(),
            arguments,
            replay: None,
        });
    }
    let output_chars: usize = step.say.len()
        + step.think.len()
        + step
            .tools
            .iter()
            .map(|c| c.name.len() + c.raw_args.as_ref().map_or(0, String::len))
            .sum::<usize>();
    let usage = Usage {
        input: tokens_estimate(request_chars(request)),
        output: tokens_estimate(output_chars),
        ..Usage::default()
    };
    let stop = if step.tools.is_empty() {
        StopReason::EndTurn
    } else {
        StopReason::ToolUse
    };
    let completion = Completion {
        message: Message {
            role: Role::Assistant,
            parts,
        },
        usage,
        stop,
    };
    send(tx, StreamEvent::Completed(completion)).await;
    Ok(())
}

async fn send(tx: &Sender, event: StreamEvent) {
    let _ = tx.send(Ok(event)).await;
}

async fn pause(delay: Duration) {
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
}

/// Words with their trailing whitespace, so the concatenation is the original text.
fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut in_space = false;
    for c in text.chars() {
        if !c.is_whitespace() && in_space {
            out.push(std::mem::take(&mut current));
            in_space = false;
        }
        if c.is_whitespace() {
            in_space = true;
        }
        current.push(c);
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

fn request_chars(request: &ModelRequest) -> usize {
    let mut total = request.system.len();
    for message in &request.messages {
        for part in &message.parts {
            total += match part {
                Part::Text { text, .. } | Part::Thinking { text, .. } => text.len(),
                Part::ToolCall { arguments, .. } => arguments.len(),
                Part::ToolResult { content, .. } => content.len(),
            };
        }
    }
    total
}

/// About four characters per token: close enough for a demo's token column.
fn tokens_estimate(chars: usize) -> u64 {
    u64::try_from(chars.div_ceil(4)).unwrap_or(u64::MAX)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use futures::StreamExt;

    #[test]
    fn builtin_scripts_parse() {
        for (name, text) in BUILTIN_SCRIPTS {
            let model = DemoModel::parse(name, text).unwrap();
            assert!(!model.is_empty(), "{name} is empty");
        }
    }

    #[test]
    fn bad_lines_name_the_line() {
        let err = DemoModel::parse("x.jsonl", "# c\n{\"say\":\"a\"}\n{\"sey\":1}\n").unwrap_err();
        assert!(err.to_string().contains("line 3"), "{err}");
        let err = DemoModel::parse("x", r#"{"tools":[{"name":"bash"}]}"#).unwrap_err();
        assert!(err.to_string().contains("exactly one of"), "{err}");
        let err = DemoModel::load("nope", Path::new("/")).unwrap_err();
        assert!(err.to_string().contains("demo/good"), "{err}");
    }

    #[tokio::test]
    async fn a_sub_agent_conversation_plays_its_own_track() {
        let model = DemoModel::parse(
            "t",
            "{\"say\":\"main 1\"}\n{\"agent\":\"fix\",\"say\":\"sub 1\"}\n\
             {\"say\":\"main 2\"}\n{\"agent\":\"fix more\",\"say\":\"deeper\"}",
        )
        .unwrap();
        let said = |prompt: &str| {
            let request = ModelRequest {
                model: "t".into(),
                system: "".into(),
                messages: vec![Message::user(prompt)].into(),
                tools: Vec::new().into(),
                max_output_tokens: None,
                temperature: None,
                reasoning: Default::default(),
                seed: None,
            };
            let events = model.stream(request, CancellationToken::new());
            async move {
                let events: Vec<_> = events.collect().await;
                match events.last() {
                    Some(Ok(StreamEvent::Completed(c))) => c.message.text(),
                    other => panic!("{other:?}"),
                }
            }
        };
        assert_eq!(said("do it").await, "main 1");
        assert_eq!(said("fix: the bug").await, "sub 1");
        // The longest matching name wins.
        assert_eq!(said("fix more things").await, "deeper");
    }

    #[test]
    fn words_keep_the_text() {
        assert_eq!(words("a  b\nc").concat(), "a  b\nc");
        assert_eq!(words("a  b\nc").len(), 3);
    }

    #[tokio::test]
    async fn plays_the_step_matching_the_conversation() {
        let model = DemoModel::parse(
            "t",
            "{\"say\":\"one\",\"tools\":[{\"name\":\"read_file\",\"args\":{\"path\":\"a\"}}]}\n{\"say\":\"two\"}",
        )
        .unwrap();
        let mut request = ModelRequest {
            model: "t".into(),
            system: "".into(),
            messages: vec![Message::user("go")].into(),
            tools: Vec::new().into(),
            max_output_tokens: None,
            temperature: None,
            reasoning: Default::default(),
            seed: None,
        };
        let events: Vec<_> = model
            .stream(request.clone(), CancellationToken::new())
            .collect()
            .await;
        let Some(Ok(StreamEvent::Completed(first))) = events.last() else {
            panic!("no completion: {events:?}");
        };
        assert_eq!(first.stop, StopReason::ToolUse);
        assert_eq!(
            first.message.tool_calls().next(),
            Some(("demo_0_0", "read_file", r#"{"path":"a"}"#))
        );
        request.messages.push(first.message.clone());
        let events: Vec<_> = model
            .stream(request, CancellationToken::new())
            .collect()
            .await;
        let Some(Ok(StreamEvent::Completed(second))) = events.last() else {
            panic!("no completion");
        };
        assert_eq!(second.message.text(), "two");
    }
}
