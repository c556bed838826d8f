//! Tool parameter schemas for Gemini's `parameters` field, which takes an OpenAPI 3.0
//! subset, not JSON Schema: no `$ref`, no type arrays (`nullable` instead), no `const`, no
//! `additionalProperties`, `enum` only for strings, and a short list of `format`s. Gemini
//! rejects the whole request on an unknown key, so the conversion keeps an allowlist.

use serde_json::{Map, Value};

use crate::schema::inline_refs;

/// Keys Gemini's `Schema` accepts that are copied as they are.
const PLAIN_KEYS: &[&str] = &[
    "description",
    "title",
    "minimum",
    "maximum",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "minProperties",
    "maxProperties",
    "pattern",
    "propertyOrdering",
];

const MAX_DEPTH: usize = 64;

/// Convert a JSON Schema to the subset Gemini accepts.
pub(crate) fn gemini_schema(schema: &Value) -> Value {
    convert(&inline_refs(schema), 0)
}

fn convert(schema: &Value, depth: usize) -> Value {
    let Value::Object(src) = schema else {
        // `true` / `false` schemas and garbage: "anything" is the closest Gemini can say.
        return Value::Object(Map::new());
    };
    if depth > MAX_DEPTH {
        return Value::Object(Map::new());
    }
    let mut out = Map::new();
    let mut nullable = src
        .get("nullable")
        .and_then(Value::as_bool)
        .unwrap_or(false);

    // `allOf` is merged into the schema itself: Gemini has no intersection.
    let merged;
    let src = match src.get("allOf").and_then(Value::as_array) {
        Some(parts) => {
            merged = merge_all_of(src, parts);
            &merged
        }
        None => src,
    };

    match src.get("type") {
        Some(Value::String(t)) if t == "null" => nullable = true,
        Some(Value::String(t)) => {
            out.insert("type".into(), Value::String(t.clone()));
        }
        Some(Value::Array(types)) => {
            let real: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
            nullable |= real.len() < types.len();
            match real.as_slice() {
                [] => {}
                [one] => {
                    out.insert("type".into(), (*one).clone());
                }
                many => {
                    // Several types: a union of the same schema with each type.
                    let variants = many
                        .iter()
                        .map(|t| {
                            let mut variant = src.clone();
                            variant.insert("type".into(), (*t).clone());
                            convert(&Value::Object(variant), depth + 1)
                        })
                        .collect();
                    let mut union = Map::new();
                    union.insert("anyOf".into(), Value::Array(variants));
                    copy_key(src, &mut union, "description");
                    if nullable {
                        union.insert("nullable".into(), Value::Bool(true));
                    }
                    return Value::Object(union);
                }
            }
        }
        _ => {}
    }

    let union = src
        .get("anyOf")
        .or_else(|| src.get("oneOf"))
        .and_then(Value::as_array);
    if let Some(variants) = union {
        let (nulls, real): (Vec<&Value>, Vec<&Value>) =
            variants.iter().partition(|v| is_null_schema(v));
        nullable |= !nulls.is_empty();
        match real.as_slice() {
            [] => {}
            // `T | null` is the common Option<T>: flatten it into T itself.
            [one] => {
                if let Value::Object(inner) = convert(one, depth + 1) {
                    for (k, v) in inner {
                        out.entry(k).or_insert(v);
                    }
                }
            }
            many => {
                let converted = many.iter().map(|v| convert(v, depth + 1)).collect();
                out.insert("anyOf".into(), Value::Array(converted));
            }
        }
    }

    for key in PLAIN_KEYS {
        copy_key(src, &mut out, key);
    }
    if let Some(Value::String(format)) = src.get("format") {
        let kind = out.get("type").and_then(Value::as_str).unwrap_or("");
        let allowed = match kind {
            "string" => matches!(format.as_str(), "enum" | "date-time"),
            "number" => matches!(format.as_str(), "float" | "double"),
            "integer" => matches!(format.as_str(), "int32" | "int64"),
            _ => false,
        };
        if allowed {
            out.insert("format".into(), Value::String(format.clone()));
        }
    }

    let enum_values = match src.get("const") {
        Some(c) => Some(vec![c.clone()]),
        None => src.get("enum").and_then(Value::as_array).cloned(),
    };
    if let Some(values) = enum_values {
        nullable |= values.iter().any(Value::is_null);
        let values: Vec<Value> = values.into_iter().filter(|v| !v.is_null()).collect();
        // Gemini only has string enums; for other values the type alone has to do.
        if !values.is_empty() && values.iter().all(Value::is_string) {
            out.entry("type")
                .or_insert_with(|| Value::String("string".into()));
            out.insert("enum".into(), Value::Array(values));
        }
    }

    if let Some(Value::Object(props)) = src.get("properties") {
        let props: Map<String, Value> = props
            .iter()
            .map(|(k, v)| (k.clone(), convert(v, depth + 1)))
            .collect();
        if let Some(Value::Array(required)) = src.get("required") {
            // A required name without a property is an error for Gemini.
            let required: Vec<Value> = required
                .iter()
                .filter(|r| r.as_str().is_some_and(|name| props.contains_key(name)))
                .cloned()
                .collect();
            if !required.is_empty() {
                out.insert("required".into(), Value::Array(required));
            }
        }
        out.insert("properties".into(), Value::Object(props));
        out.entry("type")
            .or_insert_with(|| Value::String("object".into()));
    }
    match src.get("items") {
        Some(items @ Value::Object(_)) => {
            out.insert("items".into(), convert(items, depth + 1));
        }
        // Tuples (`items: [A, B]`, `prefixItems`) become arrays of either.
        Some(Value::Array(items)) => {
            out.insert("items".into(), tuple_items(items, depth));
        }
        _ => {
            if let Some(Value::Array(items)) = src.get("prefixItems") {
                out.insert("items".into(), tuple_items(items, depth));
            }
        }
    }
    if nullable {
        out.insert("nullable".into(), Value::Bool(true));
    }
    Value::Object(out)
}

fn tuple_items(items: &[Value], depth: usize) -> Value {
    match items {
        [one] => convert(one, depth + 1),
        many => {
            let mut union = Map::new();
            let converted = many.iter().map(|v| convert(v, depth + 1)).collect();
            union.insert("anyOf".into(), Value::Array(converted));
            Value::Object(union)
        }
    }
}

fn is_null_schema(schema: &Value) -> bool {
    schema.get("type").is_some_and(|t| t == "null")
}

fn copy_key(src: &Map<String, Value>, out: &mut Map<String, Value>, key: &str) {
    if let Some(value) = src.get(key) {
        out.insert(key.to_owned(), value.clone());
    }
}

/// The schema with every `allOf` part folded in: properties and required lists are
/// unioned, other keys of later parts win.
fn merge_all_of(src: &Map<String, Value>, parts: &[Value]) -> Map<String, Value> {
    let mut merged = src.clone();
    merged.remove("allOf");
    for part in parts {
        let Value::Object(part) = part else { continue };
        for (key, value) in part {
            match (key.as_str(), merged.get_mut(key), value) {
                ("properties", Some(Value::Object(into)), Value::Object(from)) => {
                    into.extend(from.iter().map(|(k, v)| (k.clone(), v.clone())));
                }
                ("required", Some(Value::Array(into)), Value::Array(from)) => {
                    into.extend(
                        from.iter()
                            .filter(|r| !into.contains(r))
                            .cloned()
                            .collect::<Vec<_>>(),
                    );
                }
                _ => {
                    merged.insert(key.clone(), value.clone());
                }
            }
        }
    }
    merged
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn schemars_output_becomes_openapi_subset() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": "x",
            "title": "ReadArgs",
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "path": {"type": "string", "description": "file", "examples": ["a"], "default": "."},
                "offset": {"type": ["integer", "null"], "format": "uint64", "minimum": 0},
                "mode": {"$ref": "#/$defs/Mode"},
                "when": {"type": "string", "format": "date-time"},
                "kind": {"const": "fixed"},
                "opt": {"anyOf": [{"$ref": "#/$defs/Mode"}, {"type": "null"}]},
                "tags": {"type": "array", "items": {"type": "string", "format": "uri"}, "maxItems": 3}
            },
            "required": ["path", "ghost"],
            "$defs": {"Mode": {"type": "string", "enum": ["a", "b"], "description": "how"}}
        });
        assert_eq!(
            gemini_schema(&schema),
            json!({
                "title": "ReadArgs",
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "file"},
                    "offset": {"type": "integer", "nullable": true, "minimum": 0},
                    "mode": {"type": "string", "enum": ["a", "b"], "description": "how"},
                    "when": {"type": "string", "format": "date-time"},
                    "kind": {"type": "string", "enum": ["fixed"]},
                    "opt": {"type": "string", "enum": ["a", "b"], "description": "how", "nullable": true},
                    "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3}
                },
                "required": ["path"]
            })
        );
    }

    #[test]
    fn unions_and_odd_shapes() {
        assert_eq!(
            gemini_schema(
                &json!({"oneOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]})
            ),
            json!({"anyOf": [{"type": "string"}, {"type": "integer"}], "nullable": true})
        );
        assert_eq!(
            gemini_schema(&json!({"type": ["string", "number"], "description": "d"})),
            json!({"anyOf": [{"type": "string", "description": "d"}, {"type": "number", "description": "d"}], "description": "d"})
        );
        assert_eq!(
            gemini_schema(&json!({"type": "integer", "enum": [1, 2], "format": "int32"})),
            json!({"type": "integer", "format": "int32"})
        );
        assert_eq!(
            gemini_schema(
                &json!({"allOf": [{"properties": {"a": {"type": "string"}}, "required": ["a"]},
                                            {"properties": {"b": {"type": "boolean"}}}]})
            ),
            json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "boolean"}}, "required": ["a"]})
        );
        assert_eq!(
            gemini_schema(&json!({"type": "array", "prefixItems": [{"type": "string"}]})),
            json!({"type": "array", "items": {"type": "string"}})
        );
        assert_eq!(gemini_schema(&json!(true)), json!({}));
        assert_eq!(
            gemini_schema(&json!({"enum": ["x", null]})),
            json!({"type": "string", "enum": ["x"], "nullable": true})
        );
    }

    #[test]
    fn deep_and_recursive_schemas_terminate() {
        let mut deep = json!({"type": "string"});
        for _ in 0..500 {
            deep = json!({"type": "array", "items": deep});
        }
        let out = gemini_schema(&deep);
        assert!(out.to_string().len() < 100_000);
        let recursive = json!({"$defs": {"N": {"type": "object", "properties": {"next": {"$ref": "#/$defs/N"}}}}, "$ref": "#/$defs/N"});
        assert!(gemini_schema(&recursive).is_object());
    }
}
