//! `${ENV}` substitution in string values, with OpenClaw's semantics
//! (`src/config/env-substitution.ts`): `${NAME}` with NAME matching `[A-Z_][A-Z0-9_]*` is
//! replaced by that variable; a missing or empty one is an error naming it; `$${NAME}`
//! escapes to a literal `${NAME}`; any other `$` text (`$5`, `${lower}`, an unclosed `${`)
//! is left alone. Only values are substituted, never keys. It runs on the raw document
//! before typed loading, so a substituted value is checked like a written one.

use pincer_ai::env::EnvSource;
use serde_json::Value;

use crate::keypath::KeyPath;

/// A `${NAME}` whose variable is missing or empty, and where it was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MissingVar {
    pub(crate) path: KeyPath,
    pub(crate) name: String,
}

/// `raw` with every `${NAME}` in its string values replaced. All missing variables are
/// reported, in document order.
pub(crate) fn substitute(raw: &Value, env: &dyn EnvSource) -> Result<Value, Vec<MissingVar>> {
    let mut missing = Vec::new();
    let resolved = walk(raw, &KeyPath::root(), env, &mut missing);
    if missing.is_empty() {
        Ok(resolved)
    } else {
        Err(missing)
    }
}

fn walk(
    value: &Value,
    path: &KeyPath,
    env: &dyn EnvSource,
    missing: &mut Vec<MissingVar>,
) -> Value {
    match value {
        Value::String(s) => Value::String(substitute_str(s, env, |name| {
            missing.push(MissingVar {
                path: path.clone(),
                name: name.to_owned(),
            });
        })),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, item)| walk(item, &path.index(i), env, missing))
                .collect(),
        ),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), walk(v, &path.key(k), env, missing)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Substitutes one string; `on_missing` hears of each variable that is not set.
fn substitute_str(text: &str, env: &dyn EnvSource, mut on_missing: impl FnMut(&str)) -> String {
    if !text.contains('$') {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(dollar) = rest.find('$') {
        out.push_str(&rest[..dollar]);
        let at = &rest[dollar..];
        if let Some(name) = at.strip_prefix("$$").and_then(reference_name) {
            // `$${NAME}` is the escape: the reference itself, written literally.
            out.push_str(&format!("${{{name}}}"));
            rest = &at[2 + name.len() + 2..];
        } else if let Some(name) = reference_name(&at[1..]) {
            match env.var(name).filter(|v| !v.is_empty()) {
                Some(value) => out.push_str(&value),
                None => on_missing(name),
            }
            rest = &at[1 + name.len() + 2..];
        } else {
            out.push('$');
            rest = &at[1..];
        }
    }
    out.push_str(rest);
    out
}

/// If `text` starts with `{NAME}` and NAME is a valid variable name, NAME.
fn reference_name(text: &str) -> Option<&str> {
    let inner = text.strip_prefix('{')?;
    let end = inner.find('}')?;
    let name = &inner[..end];
    is_var_name(name).then_some(name)
}

/// `[A-Z_][A-Z0-9_]*`.
pub(crate) fn is_var_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_uppercase() || c == '_')
        && chars.all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// Whether `text` is exactly one `${NAME}` reference (redaction shows those as written).
pub(crate) fn is_single_reference(text: &str) -> bool {
    text.strip_prefix('$')
        .and_then(reference_name)
        .is_some_and(|name| text.len() == name.len() + 3)
}

#[cfg(test)]
mod tests {
    use pincer_ai::env::MapEnv;

    use super::*;

    fn sub(text: &str) -> (String, Vec<String>) {
        let env = MapEnv::new([("KEY", "k1"), ("_X9", "x"), ("EMPTY", "")]);
        let mut missing = Vec::new();
        let out = substitute_str(text, &env, |n| missing.push(n.to_owned()));
        (out, missing)
    }

    #[test]
    fn references_escapes_and_plain_dollars() {
        assert_eq!(sub("${KEY}"), ("k1".to_owned(), vec![]));
        assert_eq!(sub("a${KEY}b${_X9}c"), ("ak1bxc".to_owned(), vec![]));
        assert_eq!(sub("$${KEY}"), ("${KEY}".to_owned(), vec![]));
        assert_eq!(sub("$$${KEY}"), ("$${KEY}".to_owned(), vec![]));
        assert_eq!(
            sub("$5 ${lower} ${ unclosed $"),
            ("$5 ${lower} ${ unclosed $".to_owned(), vec![])
        );
        assert_eq!(sub("$${lower}"), ("$${lower}".to_owned(), vec![]));
        assert_eq!(
            sub("${NOPE}-${EMPTY}"),
            ("-".to_owned(), vec!["NOPE".to_owned(), "EMPTY".to_owned()])
        );
        assert_eq!(sub("é${KEY}é"), ("ék1é".to_owned(), vec![]));
    }

    #[test]
    fn single_references() {
        assert!(is_single_reference("${OPENAI_API_KEY}"));
        assert!(!is_single_reference("x${A}"));
        assert!(!is_single_reference("${A}x"));
        assert!(!is_single_reference("${a}"));
    }
}
