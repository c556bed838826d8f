//! Gemini request shape and stream decoding, against recordings in the form the API sends
//! them (`alt=sse`, CRLF-separated events, one whole response per event).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

use crate::model::Model;

mod decode;
mod request;

const FLASH: &str = "gemini-2.5-flash";
const SIG: &str = "CiQB0e2Kb7Q1Zm9vYmFy";

fn model(id: &str) -> Model {
    serde_json::from_value(
        json!({"id": id, "name": "Gemini", "api": "google-generative-ai",
        "provider": "google", "baseUrl": "https://generativelanguage.googleapis.com/v1beta",
        "reasoning": true, "input": ["text", "image"],
        "cost": {"input": 0.3, "output": 2.5, "cacheRead": 0.075},
        "contextWindow": 1048576, "maxTokens": 65536}),
    )
    .unwrap()
}
