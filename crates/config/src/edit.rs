//! `pincer config get/set/unset` on the raw document (as written, `${ENV}` references
//! intact), addressed by key paths such as `agents.list[0].id`. These only edit the tree;
//! [`crate::save`] checks the result and writes it.

use serde_json::{Map, Value};

use crate::error::ConfigError;
use crate::keypath::{KeyPath, PathSegment};
use crate::locate::is_blank;
use crate::raw::parse_raw;

/// The value at `path`, if there is one.
pub fn get<'v>(raw: &'v Value, path: &KeyPath) -> Option<&'v Value> {
    path.segments()
        .iter()
        .try_fold(raw, |value, segment| match segment {
            PathSegment::Key(key) => value.as_object()?.get(key),
            PathSegment::Index(index) => value.as_array()?.get(*index),
        })
}

/// Puts `value` at `path`, creating missing objects (and arrays, for an index) on the way.
/// An index may be one past the end to append. Refuses to go through a value that is not
/// an object (for a key) or an array (for an index) rather than overwrite it.
pub fn set(raw: &mut Value, path: &KeyPath, value: Value) -> Result<(), ConfigError> {
    let segments = path.segments();
    let Some((last, parents)) = segments.split_last() else {
        return Err(fail(path, "cannot replace the whole document".to_owned()));
    };
    let mut current = raw;
    for (depth, segment) in parents.iter().enumerate() {
        let next_is_index = matches!(segments[depth + 1], PathSegment::Index(_));
        let empty = || {
            if next_is_index {
                Value::Array(Vec::new())
            } else {
                Value::Object(Map::new())
            }
        };
        current = step(current, segment, empty, path, depth)?;
    }
    let slot = step(current, last, || Value::Null, path, parents.len())?;
    *slot = value;
    Ok(())
}

/// Removes the value at `path` and returns it (`None` if there was none). Removing an
/// array element shifts the ones after it.
pub fn unset(raw: &mut Value, path: &KeyPath) -> Option<Value> {
    let (last, parents) = path.segments().split_last()?;
    let parent = get_mut(raw, parents)?;
    match (last, parent) {
        (PathSegment::Key(key), Value::Object(map)) => map.remove(key),
        (PathSegment::Index(index), Value::Array(items)) if *index < items.len() => {
            Some(items.remove(*index))
        }
        _ => None,
    }
}

/// A value typed on the command line: JSON5 if it parses as JSON5 (numbers, booleans,
/// `null`, objects, arrays, quoted strings), otherwise the text itself as a string, so
/// `anthropic/claude-sonnet-4-5` needs no quotes.
pub fn parse_cli_value(text: &str) -> Value {
    if is_blank(text) {
        return Value::String(text.to_owned());
    }
    parse_raw(text, "value").unwrap_or_else(|_| Value::String(text.to_owned()))
}

fn get_mut<'v>(raw: &'v mut Value, segments: &[PathSegment]) -> Option<&'v mut Value> {
    segments
        .iter()
        .try_fold(raw, |value, segment| match segment {
            PathSegment::Key(key) => value.as_object_mut()?.get_mut(key),
            PathSegment::Index(index) => value.as_array_mut()?.get_mut(*index),
        })
}

/// One step down from `current` along `segment`, creating the child with `empty` if absent.
fn step<'v>(
    current: &'v mut Value,
    segment: &PathSegment,
    empty: impl FnOnce() -> Value,
    path: &KeyPath,
    depth: usize,
) -> Result<&'v mut Value, ConfigError> {
    let here = || KeyPath::from_segments(path.segments()[..depth].to_vec());
    if current.is_null() {
        // `null` means "not set": going through it is like going through a missing key.
        *current = match segment {
            PathSegment::Key(_) => Value::Object(Map::new()),
            PathSegment::Index(_) => Value::Array(Vec::new()),
        };
    }
    match segment {
        PathSegment::Key(key) => match current {
            Value::Object(map) => Ok(map.entry(key.clone()).or_insert_with(empty)),
            other => Err(fail(
                path,
                format!("{} is {}, not an object", describe(&here()), kind(other)),
            )),
        },
        PathSegment::Index(index) => match current {
            Value::Array(items) => {
                let len = items.len();
                if *index == len {
                    items.push(empty());
                }
                items.get_mut(*index).ok_or_else(|| {
                    fail(
                        path,
                        format!(
                            "index {index} is past the end of {} ({len} elements)",
                            describe(&here())
                        ),
                    )
                })
            }
            other => Err(fail(
                path,
                format!("{} is {}, not an array", describe(&here()), kind(other)),
            )),
        },
    }
}

fn describe(path: &KeyPath) -> String {
    if path.is_root() {
        "the document".to_owned()
    } else {
        format!("`{path}`")
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn fail(path: &KeyPath, reason: String) -> ConfigError {
    ConfigError::KeyPath {
        path: path.to_string(),
        reason,
    }
}
