//! Tool parameter schemas, cleaned for what each provider accepts. Schemas derived from
//! Rust types (schemars) carry `$schema`, `$defs`/`$ref`, `format: "uint64"` and
//! `type: [T, "null"]`; OpenAI's strict mode and Gemini's OpenAPI subset reject some of
//! these, so each API gets its own sanitised copy: OpenAI-compatible and Anthropic requests
//! get [`inline_refs`] (self-contained, no meta keys), callers that turn on OpenAI's strict
//! mode use [`for_openai_strict`], and Gemini's OpenAPI-subset conversion lives with the
//! Google provider (`providers::google`).

use serde_json::{Map, Value};

/// Formats OpenAI structured outputs accept; others are dropped.
const OPENAI_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

const MAX_REF_DEPTH: usize = 32;

/// Replace every local `$ref` (`#/$defs/X`, `#/definitions/X`) by the definition it names,
/// and drop `$defs` / `definitions` / `$schema`. Recursive schemas are cut at a fixed depth
/// (the cut branch becomes `{}`, "anything"), because providers do not take cycles.
pub fn inline_refs(schema: &Value) -> Value {
    let defs = collect_defs(schema);
    inline(schema, &defs, 0)
}

fn collect_defs(schema: &Value) -> Map<String, Value> {
    let mut defs = Map::new();
    for key in ["$defs", "definitions"] {
        if let Some(Value::Object(map)) = schema.get(key) {
            for (name, def) in map {
                defs.insert(format!("#/{key}/{name}"), def.clone());
            }
        }
    }
    defs
}

fn inline(value: &Value, defs: &Map<String, Value>, depth: usize) -> Value {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(reference)) = map.get("$ref") {
                if depth >= MAX_REF_DEPTH {
                    return Value::Object(Map::new());
                }
                let mut resolved = match defs.get(reference) {
                    Some(def) => inline(def, defs, depth + 1),
                    None => Value::Object(Map::new()),
                };
                // Siblings of $ref (a description, say) are kept on top of the definition.
                if let Value::Object(out) = &mut resolved {
                    for (k, v) in map {
                        if k != "$ref" {
                            out.insert(k.clone(), inline(v, defs, depth));
                        }
                    }
                }
                return resolved;
            }
            let mut out = Map::new();
            for (k, v) in map {
                if matches!(k.as_str(), "$defs" | "definitions" | "$schema" | "$id") {
                    continue;
                }
                out.insert(k.clone(), inline(v, defs, depth));
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| inline(v, defs, depth)).collect()),
        other => other.clone(),
    }
}

/// A schema OpenAI's strict mode accepts: references inlined, every object closed
/// (`additionalProperties: false`) with every property required, and properties that were
/// optional made nullable so the model can still leave them out by sending `null`.
pub fn for_openai_strict(schema: &Value) -> Value {
    let mut value = inline_refs(schema);
    strictify(&mut value);
    value
}

fn strictify(value: &mut Value) {
    let Value::Object(map) = value else {
        if let Value::Array(items) = value {
            items.iter_mut().for_each(strictify);
        }
        return;
    };
    if let Some(Value::String(format)) = map.get("format")
        && !OPENAI_FORMATS.contains(&format.as_str())
    {
        map.remove("format");
    }
    map.remove("default");
    for key in ["items", "anyOf", "oneOf", "allOf", "not", "additionalItems"] {
        if let Some(child) = map.get_mut(key) {
            strictify(child);
        }
    }
    let is_object = map.get("type").is_some_and(|t| {
        t == "object"
            || t.as_array()
                .is_some_and(|a| a.iter().any(|x| x == "object"))
    }) || map.contains_key("properties");
    if !is_object {
        return;
    }
    let required: Vec<String> = map
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let mut all = Vec::new();
    if let Some(Value::Object(props)) = map.get_mut("properties") {
        for (name, prop) in props.iter_mut() {
            strictify(prop);
            if !required.contains(name) {
                make_nullable(prop);
            }
            all.push(Value::String(name.clone()));
        }
    }
    map.insert("required".into(), Value::Array(all));
    map.insert("additionalProperties".into(), Value::Bool(false));
}

fn make_nullable(prop: &mut Value) {
    let Value::Object(map) = prop else { return };
    match map.get_mut("type") {
        Some(Value::String(t)) if t != "null" => {
            let t = std::mem::take(t);
            map.insert("type".into(), serde_json::json!([t, "null"]));
        }
        Some(Value::Array(types)) => {
            if !types.iter().any(|t| t == "null") {
                types.push(Value::String("null".into()));
            }
        }
        Some(_) => {}
        None => {
            let inner = Value::Object(std::mem::take(map));
            map.insert("anyOf".into(), serde_json::json!([inner, {"type": "null"}]));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schemars_like() -> Value {
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "ReadArgs",
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "file"},
                "offset": {"type": ["integer", "null"], "format": "uint64", "minimum": 0},
                "mode": {"$ref": "#/$defs/Mode", "description": "how"}
            },
            "required": ["path"],
            "$defs": {"Mode": {"type": "string", "enum": ["a", "b"]}}
        })
    }

    #[test]
    fn refs_are_inlined_and_meta_dropped() {
        assert_eq!(
            inline_refs(&schemars_like()),
            json!({
                "title": "ReadArgs",
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "file"},
                    "offset": {"type": ["integer", "null"], "format": "uint64", "minimum": 0},
                    "mode": {"type": "string", "enum": ["a", "b"], "description": "how"}
                },
                "required": ["path"]
            })
        );
    }

    #[test]
    fn strict_mode_closes_objects_and_nulls_optionals() {
        assert_eq!(
            for_openai_strict(&schemars_like()),
            json!({
                "title": "ReadArgs",
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "file"},
                    "offset": {"type": ["integer", "null"], "minimum": 0},
                    "mode": {"type": ["string", "null"], "enum": ["a", "b"], "description": "how"}
                },
                "required": ["mode", "offset", "path"],
                "additionalProperties": false
            })
        );
    }

    #[test]
    fn recursive_refs_terminate() {
        let schema = json!({"$defs": {"N": {"type": "object", "properties": {"next": {"$ref": "#/$defs/N"}}}}, "$ref": "#/$defs/N"});
        let out = inline_refs(&schema);
        assert!(out.to_string().len() < 100_000);
        assert_eq!(inline_refs(&json!({"$ref": "#/$defs/Missing"})), json!({}));
    }
}
