//! The parsers of AWS credential sources under arbitrary input: the shared profile files
//! (INI), STS's AssumeRoleWithWebIdentity XML, and the container / instance-metadata JSON.
//! None may panic; a parsed INI file's sections and keys are never empty.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pincer_ai::providers::bedrock::profile::parse_ini;
use pincer_ai::providers::bedrock::remote::{parse_credentials_json, parse_sts_response};

fuzz_target!(|input: &[u8]| {
    let _ = parse_credentials_json(input, "fuzz");
    let Ok(text) = std::str::from_utf8(input) else {
        return;
    };
    let _ = parse_sts_response(text);
    if let Ok(sections) = parse_ini(text) {
        for (name, keys) in &sections {
            assert!(!name.is_empty());
            assert!(keys.keys().all(|k| !k.is_empty()));
        }
    }
});
