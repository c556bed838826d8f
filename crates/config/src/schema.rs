//! The JSON schema of `pincer.json5` (`pincer config schema`), derived from the types so it
//! can never disagree with what loading accepts. Editors use it through `$schema`.

use serde_json::Value;

use crate::types::PincerConfig;

/// The schema of the whole config (JSON Schema draft 2020-12, as schemars emits it).
pub fn schema_json() -> Value {
    let mut schema = schemars::schema_for!(PincerConfig);
    schema.insert(
        "title".to_owned(),
        Value::String("Pincer configuration".to_owned()),
    );
    schema.to_value()
}
