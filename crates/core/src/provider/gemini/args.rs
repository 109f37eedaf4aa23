//! Function-call arguments streamed as `partialArgs` (Vertex `streamFunctionCallArguments`).
//!
//! Each partial argument names its target with a JSON path (`$.operations[1].price`) and
//! carries one scalar; strings may come in pieces (`willContinue: true` until the last piece
//! for that path). The builder writes them into one JSON object, creating objects and arrays
//! along the path, and hands back the object's text when the call is complete: the canonical
//! [`crate::model::Part::ToolCall`] keeps arguments as JSON text like every other provider's.

use serde_json::{Map, Value};

/// One step of a JSON path.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Key(String),
    Index(usize),
}

/// Arguments of one call being assembled.
#[derive(Debug)]
pub(super) struct ArgsBuilder {
    root: Value,
    /// The path whose string value is still being streamed.
    continuing: Option<String>,
}

impl ArgsBuilder {
    /// Starts from the call's `args` when it had any (an object), else from `{}`.
    pub(super) fn new(initial: Option<&Value>) -> Self {
        let root = match initial {
            Some(value @ Value::Object(_)) => value.clone(),
            _ => Value::Object(Map::new()),
        };
        Self {
            root,
            continuing: None,
        }
    }

    /// Applies one `PartialArg`; ones without a usable path or value are skipped.
    pub(super) fn apply(&mut self, partial: &Value) {
        let Some(path) = partial.get("jsonPath").and_then(Value::as_str) else {
            return;
        };
        let Some(segments) = parse_path(path).filter(|s| !s.is_empty()) else {
            return;
        };
        let continues = partial.get("willContinue").and_then(Value::as_bool) == Some(true);
        let appending = self.continuing.as_deref() == Some(path);
        self.continuing = continues.then(|| path.to_string());
        let slot = slot_mut(&mut self.root, &segments);
        if let Some(piece) = partial.get("stringValue").and_then(Value::as_str) {
            match slot {
                Value::String(existing) if appending => existing.push_str(piece),
                _ => *slot = Value::String(piece.to_string()),
            }
        } else if let Some(number) = partial.get("numberValue").filter(|n| n.is_number()) {
            *slot = whole_number(number);
        } else if let Some(flag) = partial.get("boolValue").and_then(Value::as_bool) {
            *slot = Value::Bool(flag);
        } else if partial.get("nullValue").is_some() {
            *slot = Value::Null;
        }
    }

    /// The assembled arguments as JSON text.
    pub(super) fn finish(self) -> String {
        self.root.to_string()
    }
}

/// Numbers arrive as doubles; `3.0` becomes `3` so integer parameters stay integers.
fn whole_number(number: &Value) -> Value {
    match number.as_f64() {
        Some(f) if number.is_f64() && f.fract() == 0.0 && f.abs() < 9.0e15 => {
            // Exact: |f| < 2^53 and no fraction.
            Value::from(f as i64)
        }
        _ => number.clone(),
    }
}

/// The value at `segments`, creating containers (and replacing mismatched ones) on the way.
fn slot_mut<'a>(root: &'a mut Value, segments: &[Segment]) -> &'a mut Value {
    let mut current = root;
    for segment in segments {
        match segment {
            Segment::Key(key) => {
                if !current.is_object() {
                    *current = Value::Object(Map::new());
                }
                // On an object, indexing by key inserts `null` when the key is missing.
                current = &mut current[key.as_str()];
            }
            Segment::Index(index) => {
                if !current.is_array() {
                    *current = Value::Array(Vec::new());
                }
                if let Value::Array(items) = current
                    && items.len() <= *index
                {
                    items.resize(index + 1, Value::Null);
                }
                current = &mut current[*index];
            }
        }
    }
    current
}

/// `$.a.b[0]['c d']` as segments; `None` for anything that is not such a path.
fn parse_path(path: &str) -> Option<Vec<Segment>> {
    let mut rest = path.strip_prefix('$')?;
    let mut segments = Vec::new();
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[']).unwrap_or(after.len());
            if end == 0 {
                return None;
            }
            segments.push(Segment::Key(after[..end].to_string()));
            rest = &after[end..];
        } else if let Some(after) = rest.strip_prefix('[') {
            let close = after.find(']')?;
            let inner = after[..close].trim();
            let quoted = inner
                .strip_prefix('\'')
                .and_then(|s| s.strip_suffix('\''))
                .or_else(|| inner.strip_prefix('"').and_then(|s| s.strip_suffix('"')));
            match quoted {
                Some(key) => segments.push(Segment::Key(key.to_string())),
                None => segments.push(Segment::Index(inner.parse().ok()?)),
            }
            rest = &after[close + 1..];
        } else {
            return None;
        }
    }
    Some(segments)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_parse() {
        assert_eq!(
            parse_path("$.operations[1].price"),
            Some(vec![
                Segment::Key("operations".into()),
                Segment::Index(1),
                Segment::Key("price".into())
            ])
        );
        assert_eq!(
            parse_path("$['a b'][\"c\"]"),
            Some(vec![Segment::Key("a b".into()), Segment::Key("c".into())])
        );
        assert_eq!(parse_path("$"), Some(vec![]));
        assert_eq!(parse_path("a.b"), None);
        assert_eq!(parse_path("$..x"), None);
        assert_eq!(parse_path("$[x]"), None);
    }

    #[test]
    fn pieces_build_nested_arguments() {
        let mut args = ArgsBuilder::new(None);
        for partial in [
            json!({"jsonPath": "$.ops[0].name", "stringValue": "app", "willContinue": true}),
            json!({"jsonPath": "$.ops[0].name", "stringValue": "le"}),
            json!({"jsonPath": "$.ops[0].price", "numberValue": 0.5}),
            json!({"jsonPath": "$.ops[1].count", "numberValue": 3.0}),
            json!({"jsonPath": "$.ops[1].ok", "boolValue": true}),
            json!({"jsonPath": "$.note", "nullValue": "NULL_VALUE"}),
            json!({"jsonPath": "$.ops[0].name", "stringValue": "pear"}),
            json!({"stringValue": "no path"}),
        ] {
            args.apply(&partial);
        }
        let value: Value = serde_json::from_str(&args.finish()).unwrap();
        assert_eq!(
            value,
            json!({"ops": [{"name": "pear", "price": 0.5}, {"count": 3, "ok": true}], "note": null})
        );
        assert_eq!(
            ArgsBuilder::new(Some(&json!({"a": 1}))).finish(),
            r#"{"a":1}"#
        );
    }
}
