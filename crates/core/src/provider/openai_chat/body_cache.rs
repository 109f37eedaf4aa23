//! The JSON of a conversation's messages, kept between the steps of a turn.
//!
//! Chat Completions is stateless: every step sends the whole conversation again, and escaping
//! its strings as JSON was most of the cost of building a request (about 0.05 ms of a 0.5 ms
//! step at 50 steps, growing with the conversation). The messages of a
//! [`crate::model::Conversation`] sit behind `Arc`s that never change, so a message this cache
//! encoded for an earlier step is recognised by pointer ([`Arc::ptr_eq`]) and its JSON copied.
//! A cached entry holds its `Arc`, so a pointer cannot be reused by another message while the
//! entry lives.
//!
//! What else a message's JSON depends on is part of the [`Key`] (replay tag, server dialect,
//! vision) or the set of calls this model made ([`CallIds`]): a call or result id is sent as it
//! is when the call is ours and normalised otherwise. That set only grows while a conversation
//! grows, and each entry remembers the ids it sent normalised; if a later message makes one of
//! them ours (an id repeated across providers), everything is encoded again. A conversation
//! that changes other than by appending (compaction, a rewind, a new turn's rebuilt history)
//! keeps the entries up to the first message that differs.

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::value::RawValue;

use super::history::CallIds;
use super::request::{Dialect, message_json, system_json, tools_json};
use crate::model::{Message, ModelRequest, Part, ToolDef};

/// What a message's JSON depends on besides the message and the calls that are ours: the
/// replay tag of the model called, the server's dialect, whether it takes images.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Key<'a> {
    /// The model's replay tag.
    pub(crate) tag: &'a str,
    /// The server's dialect.
    pub(crate) dialect: Dialect,
    /// Whether pictures are sent as images.
    pub(crate) vision: bool,
}

/// A [`Key`] the cache keeps.
#[derive(Debug)]
struct OwnedKey {
    tag: String,
    dialect: Dialect,
    vision: bool,
}

impl OwnedKey {
    fn is(&self, key: Key<'_>) -> bool {
        self.tag == key.tag && self.dialect == key.dialect && self.vision == key.vision
    }
}

/// One canonical message and the wire messages it became.
#[derive(Debug)]
struct Entry {
    message: Arc<Message>,
    wire: Vec<Box<RawValue>>,
    /// Ids this entry sent normalised (calls from another model, and their results).
    foreign: Vec<String>,
}

/// The encoded parts of the last request (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct BodyCache {
    key: Option<OwnedKey>,
    system: Option<(Arc<str>, Box<RawValue>)>,
    tools: Option<(Arc<[ToolDef]>, Box<RawValue>)>,
    entries: Vec<Entry>,
    /// The calls this model made, over the cached entries.
    ids: CallIds,
    /// Every id some entry sent normalised.
    foreign: HashSet<String>,
}

/// Borrowed JSON for one request's body.
pub(crate) struct Encoded<'c> {
    /// The system message (if any) and every message of the conversation, in order.
    pub(crate) messages: Vec<&'c RawValue>,
    /// The `tools` array, when tools are offered.
    pub(crate) tools: Option<&'c RawValue>,
}

impl BodyCache {
    /// Brings the cache up to `request` and lends out its JSON.
    pub(crate) fn update(
        &mut self,
        request: &ModelRequest,
        key: Key<'_>,
    ) -> Result<Encoded<'_>, serde_json::Error> {
        // Compared borrowed: the key is allocated only when the cache starts over.
        if !self.key.as_ref().is_some_and(|k| k.is(key)) {
            *self = Self {
                key: Some(OwnedKey {
                    tag: key.tag.to_string(),
                    dialect: key.dialect,
                    vision: key.vision,
                }),
                ..Self::default()
            };
        }
        self.update_system(&request.system)?;
        self.update_tools(&request.tools)?;
        self.update_messages(request.messages.shared(), key)?;
        let mut messages = Vec::with_capacity(self.entries.len() + 1);
        if let Some((_, json)) = &self.system {
            messages.push(json.as_ref());
        }
        for entry in &self.entries {
            messages.extend(entry.wire.iter().map(AsRef::as_ref));
        }
        Ok(Encoded {
            messages,
            tools: self.tools.as_ref().map(|(_, json)| json.as_ref()),
        })
    }

    fn update_system(&mut self, text: &Arc<str>) -> Result<(), serde_json::Error> {
        if text.trim().is_empty() {
            self.system = None;
        } else if !self
            .system
            .as_ref()
            .is_some_and(|(s, _)| Arc::ptr_eq(s, text))
        {
            self.system = Some((Arc::clone(text), system_json(text)?));
        }
        Ok(())
    }

    fn update_tools(&mut self, tools: &Arc<[ToolDef]>) -> Result<(), serde_json::Error> {
        if tools.is_empty() {
            self.tools = None;
        } else if !self
            .tools
            .as_ref()
            .is_some_and(|(t, _)| Arc::ptr_eq(t, tools))
        {
            self.tools = Some((Arc::clone(tools), tools_json(tools)?));
        }
        Ok(())
    }

    fn update_messages(
        &mut self,
        messages: &[Arc<Message>],
        key: Key<'_>,
    ) -> Result<(), serde_json::Error> {
        let same = self
            .entries
            .iter()
            .zip(messages)
            .take_while(|(entry, message)| Arc::ptr_eq(&entry.message, message))
            .count();
        if same < self.entries.len() {
            self.entries.truncate(same);
            self.recount(key.tag);
        }
        let new = &messages[same..];
        let ours: Vec<&str> = new
            .iter()
            .flat_map(|m| CallIds::ours_in(m, key.tag))
            .collect();
        if ours.iter().any(|id| self.foreign.contains(*id)) {
            // An id sent normalised earlier is ours now: those entries are stale.
            self.entries.clear();
            self.recount(key.tag);
            return self.update_messages(messages, key);
        }
        for id in ours {
            self.ids.insert(id);
        }
        for message in new {
            let wire = message_json(message, &self.ids, key.tag, key.dialect, key.vision)?;
            let foreign: Vec<String> = mentioned_ids(message)
                .filter(|id| !self.ids.is_ours(id))
                .map(str::to_string)
                .collect();
            self.foreign.extend(foreign.iter().cloned());
            self.entries.push(Entry {
                message: Arc::clone(message),
                wire,
                foreign,
            });
        }
        Ok(())
    }

    /// Rebuilds the id sets from the entries kept.
    fn recount(&mut self, tag: &str) {
        self.ids = CallIds::from_history(self.entries.iter().map(|e| e.message.as_ref()), tag);
        self.foreign = self
            .entries
            .iter()
            .flat_map(|e| e.foreign.iter().cloned())
            .collect();
    }
}

/// The call ids a message's wire form depends on: its calls and the calls its results answer.
fn mentioned_ids(message: &Message) -> impl Iterator<Item = &str> {
    message.parts.iter().filter_map(|part| match part {
        Part::ToolCall { id, .. } => Some(id.as_str()),
        Part::ToolResult { call_id, .. } => Some(call_id.as_str()),
        _ => None,
    })
}
