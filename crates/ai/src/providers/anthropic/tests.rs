//! Anthropic request shape and stream decoding, against recordings in the form the API
//! sends them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

use crate::model::Model;

mod decode;
mod request;

fn model(id: &str) -> Model {
    serde_json::from_value(
        json!({"id": id, "name": "Claude", "api": "anthropic-messages",
        "provider": "anthropic", "baseUrl": "https://api.anthropic.com", "reasoning": true,
        "input": ["text", "image"],
        "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75},
        "contextWindow": 200000, "maxTokens": 64000}),
    )
    .unwrap()
}

const MODEL: &str = "claude-sonnet-4-5";
