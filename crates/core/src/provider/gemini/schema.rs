//! JSON Schema cut down to the OpenAPI subset Gemini's `FunctionDeclaration.parameters`
//! accepts.
//!
//! Gemini rejects a declaration outright when its schema carries a keyword it does not know
//! (`additionalProperties`, `$schema`, `$ref`, `const`...), so the conversion keeps an
//! allow-list instead of removing known offenders: a new keyword in a tool schema degrades to
//! "not enforced by the provider" (the tool registry still validates every call) instead of
//! breaking every request. Property *names* are never filtered, only keywords.

use serde_json::{Map, Value, json};

/// Keywords copied unchanged (their values are plain data, not schemas).
const PLAIN: &[&str] = &[
    "description",
    "title",
    "nullable",
    "pattern",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "default",
    "example",
    "propertyOrdering",
];

/// `format` values Gemini accepts; others are dropped.
const FORMATS: &[&str] = &["float", "double", "int32", "int64", "enum", "date-time"];

/// The Gemini form of one schema.
pub(super) fn convert(schema: &Value) -> Value {
    let Some(object) = schema.as_object() else {
        // `true` and other non-object schemas mean "anything".
        return json!({});
    };
    let mut out = Map::new();
    for (key, value) in object {
        match key.as_str() {
            "type" => convert_type(value, &mut out),
            "format" if value.as_str().is_some_and(|f| FORMATS.contains(&f)) => {
                out.insert(key.clone(), value.clone());
            }
            "enum" => {
                // Gemini enums are strings only.
                if let Some(items) = value.as_array()
                    && !items.is_empty()
                    && items.iter().all(Value::is_string)
                {
                    out.insert(key.clone(), value.clone());
                }
            }
            "const" if value.is_string() => {
                out.insert("enum".into(), json!([value]));
            }
            "properties" => {
                if let Some(properties) = value.as_object() {
                    let converted: Map<String, Value> = properties
                        .iter()
                        .map(|(name, schema)| (name.clone(), convert(schema)))
                        .collect();
                    out.insert(key.clone(), Value::Object(converted));
                }
            }
            "required" if value.as_array().is_some_and(|r| !r.is_empty()) => {
                out.insert(key.clone(), value.clone());
            }
            "items" => {
                // Tuple forms (`items: [..]`) keep their first schema.
                let item = value.as_array().and_then(|a| a.first()).unwrap_or(value);
                out.insert(key.clone(), convert(item));
            }
            "anyOf" | "oneOf" => {
                if let Some(choices) = value.as_array() {
                    let converted: Vec<Value> = choices.iter().map(convert).collect();
                    out.insert("anyOf".into(), Value::Array(converted));
                }
            }
            _ if PLAIN.contains(&key.as_str()) => {
                out.insert(key.clone(), value.clone());
            }
            // additionalProperties, $schema, $ref, $defs, allOf, not, examples, unsupported
            // formats, non-string consts, empty `required`...
            _ => {}
        }
    }
    if out.contains_key("enum") && !out.contains_key("type") {
        out.insert("type".into(), json!("string"));
    }
    Value::Object(out)
}

/// `type: [T, "null"]` becomes `type: T` + `nullable: true`; several types become `anyOf`.
fn convert_type(value: &Value, out: &mut Map<String, Value>) {
    match value {
        Value::String(_) => {
            out.insert("type".into(), value.clone());
        }
        Value::Array(types) => {
            let names: Vec<&str> = types.iter().filter_map(Value::as_str).collect();
            if names.contains(&"null") {
                out.insert("nullable".into(), json!(true));
            }
            let concrete: Vec<&str> = names.into_iter().filter(|t| *t != "null").collect();
            match concrete.as_slice() {
                [] => {}
                [one] => {
                    out.insert("type".into(), json!(one));
                }
                many => {
                    let choices: Vec<Value> = many.iter().map(|t| json!({"type": t})).collect();
                    out.insert("anyOf".into(), Value::Array(choices));
                }
            }
        }
        _ => {}
    }
}

/// Whether a converted parameters schema declares nothing (an object without properties):
/// such declarations are sent without `parameters`, which Gemini accepts for no-arg tools.
pub(super) fn is_empty_object(schema: &Value) -> bool {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .is_none_or(Map::is_empty)
        && schema.get("anyOf").is_none()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn tool_schemas_lose_unsupported_keywords_but_keep_property_names() {
        let bash = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "The command line."},
                "description": {"type": "string", "description": "What it does."},
                "pattern": {"type": "string", "pattern": "^[a-z]+$", "format": "uri"},
                "timeout_secs": {"type": "integer", "minimum": 1, "format": "int64"}
            },
            "required": ["command"],
            "additionalProperties": false
        });
        assert_eq!(
            convert(&bash),
            json!({
                "type": "object",
                "properties": {
                    "command": {"type": "string", "description": "The command line."},
                    "description": {"type": "string", "description": "What it does."},
                    "pattern": {"type": "string", "pattern": "^[a-z]+$"},
                    "timeout_secs": {"type": "integer", "minimum": 1, "format": "int64"}
                },
                "required": ["command"]
            })
        );
    }

    #[test]
    fn nullable_unions_consts_enums_and_nested_items() {
        let schema = json!({
            "type": "object",
            "properties": {
                "offset": {"type": ["integer", "null"]},
                "mode": {"const": "fast"},
                "level": {"enum": [1, 2]},
                "either": {"type": ["string", "number"]},
                "edits": {
                    "type": "array",
                    "items": {"type": "object", "additionalProperties": false,
                              "properties": {"old": {"type": "string"}}},
                    "minItems": 1
                },
                "choice": {"oneOf": [{"type": "string"}, {"$ref": "#/x"}]}
            },
            "required": []
        });
        assert_eq!(
            convert(&schema),
            json!({
                "type": "object",
                "properties": {
                    "offset": {"type": "integer", "nullable": true},
                    "mode": {"type": "string", "enum": ["fast"]},
                    "level": {},
                    "either": {"anyOf": [{"type": "string"}, {"type": "number"}]},
                    "edits": {
                        "type": "array",
                        "items": {"type": "object", "properties": {"old": {"type": "string"}}},
                        "minItems": 1
                    },
                    "choice": {"anyOf": [{"type": "string"}, {}]}
                }
            })
        );
    }

    #[test]
    fn empty_objects_are_recognised() {
        assert!(is_empty_object(&convert(&json!({"type": "object"}))));
        assert!(is_empty_object(&convert(
            &json!({"type": "object", "properties": {}})
        )));
        assert!(!is_empty_object(&convert(
            &json!({"type": "object", "properties": {"a": {"type": "string"}}})
        )));
        assert_eq!(convert(&json!(true)), json!({}));
    }
}
