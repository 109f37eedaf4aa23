//! An MCP tool's name and input schema made into something every provider accepts.
//!
//! Providers disagree on what a tool schema may hold: OpenAI and Anthropic want an object
//! schema at the top and refuse `anyOf`/`oneOf`/`allOf`/`enum`/`not` there; Gemini takes an
//! OpenAPI subset and drops what it does not know (its wire converts, see
//! `provider/gemini/schema.rs`), which loses the shape behind a `$ref`. So local references
//! (`#/$defs/X`, `#/definitions/X`, the form pydantic and zod emit) are inlined here once for
//! every provider, and a schema no provider would take is refused with the reason, so one bad
//! tool never breaks a model's every request: the tool is left out and the run goes on.

use serde_json::{Map, Value};

/// How deep `$ref`s are followed (a recursive type stops there as "any value").
const MAX_REF_DEPTH: usize = 8;

/// Longest tool name every provider accepts.
const MAX_NAME: usize = 64;

/// `server__tool` in the characters every provider accepts (`[A-Za-z0-9_-]`, others become
/// `_`), at most 64 long; `None` when nothing of the tool's name is left.
pub(crate) fn tool_name(server: &str, tool: &str) -> Option<String> {
    let cleaned = crate::provider::ids::only_name_characters(tool);
    if cleaned.is_empty() {
        return None;
    }
    let mut name = format!("{server}__{cleaned}");
    if name.len() > MAX_NAME {
        name.truncate(MAX_NAME);
    }
    Some(name)
}

/// The schema to send, or why no provider would take it.
pub(crate) fn normalize(schema: &Map<String, Value>) -> Result<Value, String> {
    let mut top = schema.clone();
    match top.get("type") {
        None => {
            top.insert("type".into(), Value::String("object".into()));
        }
        Some(Value::String(t)) if t == "object" => {}
        Some(other) => {
            return Err(format!(
                "its input schema has type {other}, but providers take only an object of named \
                 arguments"
            ));
        }
    }
    for key in ["anyOf", "oneOf", "allOf", "enum", "not"] {
        if top.contains_key(key) {
            return Err(format!(
                "its input schema uses `{key}` at the top, which OpenAI and Anthropic reject"
            ));
        }
    }
    let defs: Map<String, Value> = ["$defs", "definitions"]
        .iter()
        .filter_map(|k| top.get(*k).and_then(Value::as_object))
        .flat_map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())))
        .collect();
    top.remove("$defs");
    top.remove("definitions");
    top.remove("$schema");
    top.remove("$id");
    let mut value = Value::Object(top);
    inline(&mut value, &defs, 0)?;
    if let Value::Object(map) = &mut value {
        match map.get("properties") {
            None => {
                map.insert("properties".into(), Value::Object(Map::new()));
            }
            Some(Value::Object(_)) => {}
            Some(_) => return Err("its input schema's `properties` is not an object".into()),
        }
    }
    Ok(value)
}

fn inline(value: &mut Value, defs: &Map<String, Value>, depth: usize) -> Result<(), String> {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(target)) = map.get("$ref") {
                let name = target
                    .strip_prefix("#/$defs/")
                    .or_else(|| target.strip_prefix("#/definitions/"));
                let resolved = match name.and_then(|n| defs.get(n)) {
                    Some(def) if depth < MAX_REF_DEPTH => {
                        let mut def = def.clone();
                        inline(&mut def, defs, depth + 1)?;
                        def
                    }
                    // Too deep (a recursive type) or not a local definition: any value, which
                    // the server still checks.
                    _ => Value::Object(Map::new()),
                };
                map.remove("$ref");
                if let Value::Object(fields) = resolved {
                    for (k, v) in fields {
                        map.entry(k).or_insert(v);
                    }
                }
            }
            for child in map.values_mut() {
                inline(child, defs, depth)?;
            }
        }
        Value::Array(items) => {
            for item in items {
                inline(item, defs, depth)?;
            }
        }
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn norm(v: Value) -> Result<Value, String> {
        normalize(v.as_object().unwrap())
    }

    #[test]
    fn names_keep_to_what_every_provider_accepts() {
        assert_eq!(tool_name("fs", "write_file").unwrap(), "fs__write_file");
        assert_eq!(tool_name("fs", "get.time now").unwrap(), "fs__get_time_now");
        assert_eq!(tool_name("s", &"x".repeat(100)).unwrap().len(), 64);
        assert!(tool_name("s", "").is_none());
    }

    #[test]
    fn local_references_are_inlined_and_the_top_is_an_object() {
        let out = norm(json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "number"}}},
                      "Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}},
            "properties": {"at": {"$ref": "#/$defs/Point", "description": "where"},
                           "list": {"$ref": "#/$defs/Node"}},
            "required": ["at"]
        }))
        .unwrap();
        assert_eq!(out["type"], "object");
        assert!(out.get("$defs").is_none() && out.get("$schema").is_none());
        assert_eq!(out["properties"]["at"]["properties"]["x"]["type"], "number");
        assert_eq!(out["properties"]["at"]["description"], "where");
        assert!(!out.to_string().contains("$ref"), "{out}");
        assert_eq!(
            norm(json!({})).unwrap(),
            json!({"type": "object", "properties": {}})
        );
    }

    #[test]
    fn schemas_no_provider_takes_are_refused_with_the_reason() {
        let err = norm(json!({"type": "string"})).unwrap_err();
        assert!(err.contains("type \"string\""), "{err}");
        let err = norm(json!({"type": "object", "anyOf": [{}, {}]})).unwrap_err();
        assert!(err.contains("`anyOf` at the top"), "{err}");
        let err = norm(json!({"type": "object", "properties": [1]})).unwrap_err();
        assert!(err.contains("not an object"), "{err}");
    }
}
