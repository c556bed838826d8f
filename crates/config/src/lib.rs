//! pincer-config: the typed `$PINCER_HOME/pincer.json5`. Every key is a Rust type (the JSON
//! schema is derived from them), loading is strict (an unknown key, a wrong type or a bad
//! value is an error naming the key, the file and the line), and writes are atomic and 0600.

pub mod types;

pub use types::*;
