//! Anthropic request shape and stream decoding, against recordings in the form the API
//! sends them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

use crate::model::Model;
use crate::test_support;

mod decode;
mod request;

fn model(id: &str) -> Model {
    test_support::model(
        "anthropic-messages",
        "anthropic",
        "https://api.anthropic.com",
        json!({"id": id, "name": "Claude", "reasoning": true,
        "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75},
        "contextWindow": 200000, "maxTokens": 64000}),
    )
}

const MODEL: &str = "claude-sonnet-4-5";
