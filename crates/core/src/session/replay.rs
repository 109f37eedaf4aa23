//! Turning a recorded conversation back into a demo script (`versus replay export`), so a real
//! model's run can be replayed offline: in a bug report, a test, or a demo of the interface.
//!
//! One assistant message becomes one script line; the demo provider plays the line whose index
//! is the number of assistant messages so far, so the replay follows the same tool rounds and
//! turns as the recording. Tool results are not stored: the replay re-runs the tools.
//!
//! Sub-agents (`spawn_agent`) have no conversation of their own in the log, only their events
//! (nested in the parent's, [`AgentEvent::SubAgent`]): their tool calls, one step per `Usage`,
//! and their final answer, which is the parent's tool result. [`sub_agent_tracks`] rebuilds
//! each one's steps from those, and [`demo_script_with`] writes them as the demo provider's
//! sub-agent tracks (`"agent": TASK` lines, played for the conversation that starts with that
//! task), under a comment naming the sub-agent, right after the line whose call started it.
//! Their streamed text is not recorded, so only the final answer is said.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use crate::model::{AgentEvent, Message, Part, Role, SubAgentTag};

/// The demo script (JSON Lines, one line per assistant message) for `messages`, with a header
/// comment saying where it came from. `token_delay_ms` makes streaming visible on replay.
pub fn demo_script(messages: &[Message], origin: &str, token_delay_ms: u64) -> String {
    demo_script_with(messages, &[], origin, token_delay_ms)
}

/// [`demo_script`] with the sub-agents' tracks: each after the line of the model's (or its
/// parent sub-agent's) call that started it. A track whose starting call is not in
/// `messages` (a turn the conversation no longer has) is left out.
pub fn demo_script_with(
    messages: &[Message],
    tracks: &[SubAgentTrack],
    origin: &str,
    token_delay_ms: u64,
) -> String {
    let mut out = format!("# demo script exported from {origin}\n");
    // The model's own spawn_agent calls are matched in order, so an id a later turn reuses
    // finds that turn's sub-agent.
    let mut roots: Vec<&SubAgentTrack> = tracks.iter().filter(|t| t.parent.is_none()).collect();
    let mut seen_tasks: Vec<&str> = Vec::new();
    for message in messages.iter().filter(|m| m.role == Role::Assistant) {
        let mut line = Map::new();
        let mut say = String::new();
        let mut think = String::new();
        let mut tools = Vec::new();
        let mut started = Vec::new();
        for part in &message.parts {
            match part {
                Part::Text { text, .. } => say.push_str(text),
                Part::Thinking { text, .. } => think.push_str(text),
                Part::ToolCall {
                    id,
                    name,
                    arguments,
                    ..
                } => {
                    tools.push(demo_call(name, arguments));
                    if name == "spawn_agent"
                        && let Some(at) = roots.iter().position(|t| t.tag.call_id == *id)
                    {
                        started.push(roots.remove(at));
                    }
                }
                Part::ToolResult { .. } => {}
            }
        }
        push_line(
            &mut out,
            line_of(&mut line, think, say, tools, token_delay_ms),
        );
        for track in started {
            write_track(&mut out, track, tracks, &mut seen_tasks, token_delay_ms);
        }
    }
    out
}

/// One sub-agent's work as the session log has it, enough to replay it.
#[derive(Debug, Clone, PartialEq)]
pub struct SubAgentTrack {
    /// The turn it ran in (sub-agents are numbered per turn).
    pub turn: u32,
    /// Its name, role, depth and the call that started it.
    pub tag: SubAgentTag,
    /// The number of the sub-agent that started it (`None`: the model).
    pub parent: Option<u32>,
    /// Its task, the first message of its conversation (what its track is played for).
    pub task: String,
    /// Its tool calls, step by step, as demo script calls (`name` + `args`).
    pub steps: Vec<Vec<Value>>,
    /// Its final answer, as its parent received it (`None`: none was recorded).
    pub answer: Option<String>,
}

/// The sub-agents of one model's recorded events (`(turn, event)` in log order), in the order
/// they started.
pub fn sub_agent_tracks<'a>(
    events: impl IntoIterator<Item = (u32, &'a AgentEvent)>,
) -> Vec<SubAgentTrack> {
    let mut rebuilt = Rebuild::default();
    for (turn, event) in events {
        rebuilt.visit(turn, None, event);
    }
    let Rebuild {
        mut tracks,
        calls,
        results,
        ..
    } = rebuilt;
    for track in &mut tracks {
        let by = (
            track.turn,
            track.parent.unwrap_or(0),
            track.tag.call_id.clone(),
        );
        track.task = calls
            .get(&by)
            .and_then(|args| serde_json::from_str::<Value>(args).ok())
            .and_then(|v| v.get("task").and_then(Value::as_str).map(str::to_string))
            .unwrap_or_default();
        track.answer = results.get(&by).and_then(|text| answer_of(text));
    }
    tracks.retain(|t| !t.task.is_empty());
    tracks
}

/// What [`sub_agent_tracks`] collects on its way through the events.
#[derive(Default)]
struct Rebuild {
    tracks: Vec<SubAgentTrack>,
    /// Whether a track's next call starts a step (after a `Usage`), by (turn, number).
    new_step: HashMap<(u32, u32), bool>,
    /// Every call's arguments and every spawn_agent result, by (turn, agent number or 0 for
    /// the model, call id): where a sub-agent's task and answer are found.
    calls: HashMap<(u32, u32, String), String>,
    results: HashMap<(u32, u32, String), String>,
}

impl Rebuild {
    fn visit(&mut self, turn: u32, by: Option<&SubAgentTag>, event: &AgentEvent) {
        let level = by.map_or(0, |t| t.number);
        match event {
            AgentEvent::SubAgent { agent, event } => {
                if !self
                    .tracks
                    .iter()
                    .any(|t| t.turn == turn && t.tag.number == agent.number)
                {
                    self.tracks.push(SubAgentTrack {
                        turn,
                        tag: agent.clone(),
                        parent: by.map(|t| t.number),
                        task: String::new(),
                        steps: Vec::new(),
                        answer: None,
                    });
                    self.new_step.insert((turn, agent.number), true);
                }
                self.visit(turn, Some(agent), event);
            }
            AgentEvent::ToolCallReady {
                id,
                name,
                arguments,
            } => {
                self.calls
                    .insert((turn, level, id.clone()), arguments.clone());
                let Some(tag) = by else { return };
                let fresh = self.new_step.insert((turn, tag.number), false) == Some(true);
                if let Some(track) = self
                    .tracks
                    .iter_mut()
                    .find(|t| t.turn == turn && t.tag.number == tag.number)
                {
                    if fresh || track.steps.is_empty() {
                        track.steps.push(Vec::new());
                    }
                    if let Some(step) = track.steps.last_mut() {
                        step.push(demo_call(name, arguments));
                    }
                }
            }
            AgentEvent::ToolResult {
                id, name, output, ..
            } if name == "spawn_agent" => {
                self.results
                    .insert((turn, level, id.clone()), output.clone());
            }
            AgentEvent::Usage { .. } => {
                if let Some(tag) = by {
                    self.new_step.insert((turn, tag.number), true);
                }
            }
            _ => {}
        }
    }
}

/// The sub-agent's answer in its parent's `spawn_agent` result (`sub-agent coder #1
/// finished.` + a blank line + the answer); `None` when it gave none.
fn answer_of(result: &str) -> Option<String> {
    let (_, answer) = result.split_once("\n\n")?;
    let answer = answer.trim();
    (!answer.is_empty() && answer != "(It gave no answer.)").then(|| answer.to_string())
}

/// `track`'s lines under a comment naming it, then the tracks of the sub-agents it started.
/// A second sub-agent with the same task as an earlier one would play the earlier one's lines
/// (tracks are found by task), so it gets only the comment.
fn write_track<'a>(
    out: &mut String,
    track: &'a SubAgentTrack,
    all: &'a [SubAgentTrack],
    seen_tasks: &mut Vec<&'a str>,
    token_delay_ms: u64,
) {
    let name = track.tag.name();
    let task = comment_text(&track.task);
    if seen_tasks.contains(&track.task.as_str()) {
        out.push_str(&format!(
            "# {name} (turn {}) had the same task as an earlier sub-agent and replays its \
             track: {task}\n",
            track.turn
        ));
    } else {
        seen_tasks.push(&track.task);
        out.push_str(&format!(
            "# {name} (turn {}, depth {}), started by the call above: {task}\n",
            track.turn, track.tag.depth
        ));
        let agent = Value::String(track.task.clone());
        for calls in &track.steps {
            let mut line = Map::new();
            line.insert("agent".into(), agent.clone());
            push_line(
                out,
                line_of(
                    &mut line,
                    String::new(),
                    String::new(),
                    calls.clone(),
                    token_delay_ms,
                ),
            );
        }
        let mut last = Map::new();
        last.insert("agent".into(), agent);
        let say = track.answer.clone().unwrap_or_default();
        push_line(
            out,
            line_of(&mut last, String::new(), say, Vec::new(), token_delay_ms),
        );
    }
    for child in all
        .iter()
        .filter(|c| c.turn == track.turn && c.parent == Some(track.tag.number))
    {
        write_track(out, child, all, seen_tasks, token_delay_ms);
    }
}

/// A call as a demo script writes it: `args` when they are a JSON object, else `raw_args`.
fn demo_call(name: &str, arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(args @ Value::Object(_)) => json!({"name": name, "args": args}),
        Ok(_) | Err(_) if arguments.trim().is_empty() => json!({"name": name, "args": {}}),
        _ => json!({"name": name, "raw_args": arguments}),
    }
}

/// Fills `line` with a step's keys (empty ones left out).
fn line_of(
    line: &mut Map<String, Value>,
    think: String,
    say: String,
    tools: Vec<Value>,
    token_delay_ms: u64,
) -> Value {
    if !think.is_empty() {
        line.insert("think".into(), Value::String(think));
    }
    if !say.is_empty() {
        line.insert("say".into(), Value::String(say));
    }
    if !tools.is_empty() {
        line.insert("tools".into(), Value::Array(tools));
    }
    if token_delay_ms > 0 {
        line.insert("token_delay_ms".into(), json!(token_delay_ms));
    }
    Value::Object(std::mem::take(line))
}

/// `text` on one line (a `#` comment ends at the line's end), cut to 120 characters.
fn comment_text(text: &str) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.char_indices().nth(120) {
        Some((at, _)) => format!("{}…", &flat[..at]),
        None => flat,
    }
}

fn push_line(out: &mut String, line: Value) {
    out.push_str(&line.to_string());
    out.push('\n');
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_conversation_becomes_a_script_the_demo_provider_plays() {
        let messages = vec![
            Message::user("fix it"),
            Message {
                role: Role::Assistant,
                parts: vec![
                    Part::Thinking {
                        text: "look first".into(),
                        replay: None,
                    },
                    Part::text("Reading."),
                    Part::ToolCall {
                        id: "c1".into(),
                        name: "read_file".into(),
                        arguments: r#"{"path":"a.rs"}"#.into(),
                        replay: None,
                    },
                    Part::ToolCall {
                        id: "c2".into(),
                        name: "bash".into(),
                        arguments: "{not json".into(),
                        replay: None,
                    },
                ],
            },
            Message {
                role: Role::User,
                parts: vec![Part::ToolResult {
                    call_id: "c1".into(),
                    name: "read_file".into(),
                    content: "1 fn a() {}".into(),
                    is_error: false,
                    images: Vec::new(),
                }],
            },
            Message {
                role: Role::Assistant,
                parts: vec![Part::text("Done.")],
            },
        ];
        let script = demo_script(&messages, "session s1, openai/gpt-5", 0);
        let lines: Vec<&str> = script.lines().collect();
        assert!(lines[0].starts_with("# demo script exported from session s1"));
        assert_eq!(lines.len(), 3);
        let first: Value = serde_json::from_str(lines[1]).unwrap();
        assert_eq!(first["think"], "look first");
        assert_eq!(first["tools"][0]["args"]["path"], "a.rs");
        assert_eq!(first["tools"][1]["raw_args"], "{not json");
        let second: Value = serde_json::from_str(lines[2]).unwrap();
        assert_eq!(second, json!({"say": "Done."}));
    }
}
