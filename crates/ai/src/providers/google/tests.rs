//! Gemini request shape and stream decoding, against recordings in the form the API sends
//! them (`alt=sse`, CRLF-separated events, one whole response per event).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

use crate::model::Model;
use crate::test_support;

mod cloud;
mod decode;
mod request;

const FLASH: &str = "gemini-2.5-flash";
const SIG: &str = "CiQB0e2Kb7Q1Zm9vYmFy";

fn model(id: &str) -> Model {
    test_support::model(
        "google-generative-ai",
        "google",
        "https://generativelanguage.googleapis.com/v1beta",
        json!({"id": id, "name": "Gemini", "reasoning": true,
        "cost": {"input": 0.3, "output": 2.5, "cacheRead": 0.075},
        "contextWindow": 1048576, "maxTokens": 65536}),
    )
}
