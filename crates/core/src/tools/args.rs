//! Validating a model's arguments against a tool's JSON schema before typed parsing.
//!
//! Models send wrong types, forget fields and invent names. serde alone would report these as
//! opaque errors; checking against the schema first lets the error name the field, its expected
//! type and the accepted fields, so the model can correct itself on the next step. Only the
//! schema subset our tools use is supported: object, properties, required, type, enum,
//! minimum/maximum, items and additionalProperties.

use serde_json::Value;

/// Checks `args` against `schema`; the error names the offending field.
pub fn validate(schema: &Value, args: &Value) -> Result<(), String> {
    check(schema, args, "")
}

fn check(schema: &Value, value: &Value, at: &str) -> Result<(), String> {
    if let Some(ty) = schema.get("type").and_then(Value::as_str)
        && !type_matches(ty, value)
    {
        return Err(if at.is_empty() {
            format!("expected a JSON {ty} of arguments, got {}", describe(value))
        } else {
            format!(
                "field `{at}` must be {}, got {}",
                article(ty),
                describe(value)
            )
        });
    }
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
        && !allowed.contains(value)
    {
        let list: Vec<String> = allowed.iter().map(Value::to_string).collect();
        return Err(format!(
            "field `{at}` must be one of {}, got {}",
            list.join(", "),
            value
        ));
    }
    if let Some(n) = value.as_f64() {
        if let Some(min) = schema.get("minimum").and_then(Value::as_f64)
            && n < min
        {
            return Err(format!("field `{at}` must be at least {min}, got {value}"));
        }
        if let Some(max) = schema.get("maximum").and_then(Value::as_f64)
            && n > max
        {
            return Err(format!("field `{at}` must be at most {max}, got {value}"));
        }
    }
    if let (Some(items), Some(arr)) = (schema.get("items"), value.as_array()) {
        for (i, item) in arr.iter().enumerate() {
            check(items, item, &format!("{at}[{i}]"))?;
        }
    }
    if let Some(obj) = value.as_object() {
        let props = schema.get("properties").and_then(Value::as_object);
        if let Some(required) = schema.get("required").and_then(Value::as_array) {
            for name in required.iter().filter_map(Value::as_str) {
                if obj.get(name).is_none_or(Value::is_null) {
                    return Err(format!("missing required field `{}`", join_path(at, name)));
                }
            }
        }
        if let Some(props) = props {
            for (key, val) in obj {
                match props.get(key) {
                    // null for an optional field means "use the default"
                    Some(_) if val.is_null() => {}
                    Some(sub) => check(sub, val, &join_path(at, key))?,
                    None if schema.get("additionalProperties") == Some(&Value::Bool(false)) => {
                        let accepted: Vec<&str> = props.keys().map(String::as_str).collect();
                        return Err(format!(
                            "unknown field `{}`; accepted fields: {}",
                            join_path(at, key),
                            accepted.join(", ")
                        ));
                    }
                    None => {}
                }
            }
        }
    }
    Ok(())
}

fn join_path(at: &str, key: &str) -> String {
    if at.is_empty() {
        key.to_string()
    } else {
        format!("{at}.{key}")
    }
}

fn type_matches(ty: &str, v: &Value) -> bool {
    match ty {
        "object" => v.is_object(),
        "string" => v.is_string(),
        "boolean" => v.is_boolean(),
        "array" => v.is_array(),
        "number" => v.is_number(),
        "integer" => v.is_i64() || v.is_u64(),
        "null" => v.is_null(),
        _ => true,
    }
}

fn article(ty: &str) -> String {
    match ty {
        "integer" | "object" | "array" => format!("an {ty}"),
        _ => format!("a {ty}"),
    }
}

fn describe(v: &Value) -> String {
    let shown = {
        let s = v.to_string();
        if s.chars().count() > 40 {
            format!("{}...", s.chars().take(40).collect::<String>())
        } else {
            s
        }
    };
    let kind = match v {
        Value::Null => return "null".to_string(),
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    format!("{kind} {shown}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "offset": {"type": "integer", "minimum": 1},
                "flag": {"type": "boolean"}
            },
            "required": ["path"],
            "additionalProperties": false
        })
    }

    #[test]
    fn accepts_valid() {
        assert!(validate(&schema(), &json!({"path": "a", "offset": 3})).is_ok());
        assert!(validate(&schema(), &json!({"path": "a", "offset": null})).is_ok());
    }

    #[test]
    fn names_missing_field() {
        let e = validate(&schema(), &json!({})).unwrap_err();
        assert_eq!(e, "missing required field `path`");
    }

    #[test]
    fn names_wrong_type() {
        let e = validate(&schema(), &json!({"path": "a", "offset": "5"})).unwrap_err();
        assert_eq!(e, "field `offset` must be an integer, got string \"5\"");
        let e = validate(&schema(), &json!({"path": "a", "offset": 1.5})).unwrap_err();
        assert!(e.contains("`offset` must be an integer"), "{e}");
    }

    #[test]
    fn names_unknown_field() {
        let e = validate(&schema(), &json!({"path": "a", "file_path": "b"})).unwrap_err();
        assert!(e.contains("unknown field `file_path`"), "{e}");
        assert!(
            e.contains("path, offset, flag") || e.contains("flag"),
            "{e}"
        );
    }

    #[test]
    fn checks_range() {
        let e = validate(&schema(), &json!({"path": "a", "offset": 0})).unwrap_err();
        assert!(e.contains("at least 1"), "{e}");
    }

    #[test]
    fn not_an_object() {
        let e = validate(&schema(), &json!([1])).unwrap_err();
        assert!(e.contains("expected a JSON object"), "{e}");
    }
}
