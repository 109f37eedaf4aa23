//! What prompt caching saves on a 50-step Anthropic run: the input-token cost with and
//! without versus's `cache_control` breakpoints.
//!
//! `cargo bench --bench caching`: a scripted tool loop of 50 steps (each step reads a file of
//! about 3 KB, so the conversation grows by a tool call and its result per step) is turned into
//! the exact request bodies versus sends, by the Anthropic wire itself (`Wire::build`). The
//! bodies are then billed as Anthropic documents it: the prefix (tools, system, messages) is
//! cut into blocks, each breakpoint writes the prefix up to it into the cache (prefixes under
//! 1,024 tokens are not cached) and reads the longest cached prefix ending at it or up to 20
//! blocks before it; tokens up to the last breakpoint that were not read are cache writes, the
//! rest is uncached input. Tokens are estimated as 4 bytes of JSON each. Prices are
//! claude-sonnet-4-5's from the shipped table: $3 input, $0.30 cache read, $3.75 cache write
//! per million. Without caching every input token costs $3 per million.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    missing_docs
)]

use std::collections::HashSet;

use serde_json::{Value, json};
use versus::model::{Message, ModelRequest, Part, Reasoning, Role, ToolDef};
use versus::provider::anthropic::AnthropicWire;
use versus::provider::{Wire, WireConfig};
use versus::tools::ToolRegistry;

const STEPS: usize = 50;
const INPUT: f64 = 3.0;
const CACHE_READ: f64 = 0.30;
const CACHE_WRITE: f64 = 3.75;
const MIN_CACHED_TOKENS: u64 = 1024;
const LOOKBACK: usize = 20;

fn tokens(value: &Value) -> u64 {
    (value.to_string().len() as u64).div_ceil(4)
}

/// The request of step `step` (1-based): the prompt, then `step - 1` read-file rounds.
fn request(step: usize, tools: &[ToolDef], system: &str) -> ModelRequest {
    let mut messages = vec![Message::user(
        "The parser drops the last line of every file; find why and fix it, with a test.",
    )];
    for k in 1..step {
        let id = format!("toolu_{k:03}");
        messages.push(Message {
            role: Role::Assistant,
            parts: vec![
                Part::text(format!("Reading src/part_{k}.rs next.")),
                Part::ToolCall {
                    id: id.clone(),
                    name: "read_file".into(),
                    arguments: json!({"path": format!("src/part_{k}.rs")}).to_string(),
                    replay: None,
                },
            ],
        });
        let content: String = (0..60)
            .map(|line| format!("{line:4}  let value_{k}_{line} = parse(input, {line});\n"))
            .collect();
        messages.push(Message {
            role: Role::User,
            parts: vec![Part::ToolResult {
                call_id: id,
                name: "read_file".into(),
                content,
                is_error: false,
                images: Vec::new(),
            }],
        });
    }
    ModelRequest {
        model: "claude-sonnet-4-5".into(),
        system: system.into(),
        messages: messages.into(),
        tools: tools.to_vec().into(),
        max_output_tokens: None,
        temperature: None,
        reasoning: Reasoning::Default,
        seed: None,
    }
}

/// The body's prefix as blocks (tools, system, each message's blocks with its role), each
/// with its tokens, whether it carries a breakpoint, and the hash of the prefix up to it.
fn blocks(body: &Value) -> Vec<(u64, bool, blake3::Hash)> {
    let mut flat: Vec<Value> = Vec::new();
    for tool in body["tools"].as_array().into_iter().flatten() {
        flat.push(tool.clone());
    }
    for block in body["system"].as_array().into_iter().flatten() {
        flat.push(block.clone());
    }
    for message in body["messages"].as_array().unwrap() {
        for block in message["content"].as_array().unwrap() {
            let mut block = block.clone();
            block["role"] = message["role"].clone();
            flat.push(block);
        }
    }
    let mut hasher = blake3::Hasher::new();
    flat.into_iter()
        .map(|mut block| {
            let marked = block
                .as_object_mut()
                .and_then(|b| b.remove("cache_control"))
                .is_some();
            hasher.update(block.to_string().as_bytes());
            (tokens(&block), marked, hasher.finalize())
        })
        .collect()
}

/// Input cost in USD of the bodies, billed as Anthropic's cache does.
fn bill(bodies: &[Value]) -> (f64, u64, u64, u64) {
    let mut cache: HashSet<blake3::Hash> = HashSet::new();
    let (mut uncached, mut read, mut written) = (0u64, 0u64, 0u64);
    for body in bodies {
        let blocks = blocks(body);
        let mut cumulative = Vec::with_capacity(blocks.len());
        let mut sum = 0;
        for (tokens, _, _) in &blocks {
            sum += tokens;
            cumulative.push(sum);
        }
        let total = sum;
        let marks: Vec<usize> = (0..blocks.len()).filter(|&i| blocks[i].1).collect();
        let hit = marks
            .iter()
            .flat_map(|&mark| (mark.saturating_sub(LOOKBACK)..=mark).rev())
            .filter(|&i| cache.contains(&blocks[i].2))
            .map(|i| cumulative[i])
            .max()
            .unwrap_or(0);
        let last = marks.last().map_or(0, |&m| cumulative[m]);
        for &mark in &marks {
            if cumulative[mark] >= MIN_CACHED_TOKENS {
                cache.insert(blocks[mark].2);
            }
        }
        // Tokens after the cache hit up to the last breakpoint are written; the rest of the
        // input (none when the breakpoint ends the prefix) is billed as uncached input.
        let write = if last >= MIN_CACHED_TOKENS {
            last.saturating_sub(hit)
        } else {
            0
        };
        read += hit;
        written += write;
        uncached += total - hit - write;
    }
    let cost = (uncached as f64 * INPUT + read as f64 * CACHE_READ + written as f64 * CACHE_WRITE)
        / 1_000_000.0;
    (cost, uncached, read, written)
}

fn main() {
    let tools: Vec<ToolDef> = ToolRegistry::builtin()
        .specs()
        .into_iter()
        .map(|spec| ToolDef {
            name: spec.name.to_string(),
            description: spec.description,
            parameters: spec.parameters,
        })
        .collect();
    let guidance = ToolRegistry::builtin().guidance();
    let system = format!(
        "You are a coding agent working in a copy of the user's project. Your file changes are \
         proposals.\n\nTools:\n{guidance}\n\n{}",
        "Project instructions (AGENTS.md): keep functions short; run `cargo test`.\n".repeat(20)
    );
    let wire = AnthropicWire::new(WireConfig {
        base_url: "http://127.0.0.1:9".into(),
        api_key: Some("sk-ant-bench-000000".into()),
        ..WireConfig::default()
    });
    let bodies: Vec<Value> = (1..=STEPS)
        .map(|step| {
            let built = wire.build(&request(step, &tools, &system)).unwrap();
            serde_json::from_slice(&built.body).unwrap()
        })
        .collect();
    let plain: Vec<Value> = bodies
        .iter()
        .map(|body| {
            let mut body = body.clone();
            strip(&mut body);
            body
        })
        .collect();
    let (with, uncached, read, written) = bill(&bodies);
    let (without, all, _, _) = bill(&plain);
    println!("50-step scripted Anthropic run (claude-sonnet-4-5 prices), input tokens only:");
    println!("  without caching: {all} input tokens, ${without:.4}",);
    println!(
        "  with caching:    {uncached} uncached + {read} cache reads + {written} cache writes, ${with:.4}"
    );
    println!("  ratio (with / without): {:.3}", with / without);
    println!("  saving: {:.1}x cheaper", without / with);
}

/// The body without its breakpoints: what versus sent before caching.
fn strip(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.remove("cache_control");
            for child in map.values_mut() {
                strip(child);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(strip),
        _ => {}
    }
}
