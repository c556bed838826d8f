//! What the fake Telegram's test files share: JSON calls to its methods over real HTTP.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use pincer_fakes::FakeTelegram;
use serde_json::Value;

pub use crate::common::{client, get_json, post_json, send_json};

/// POSTs JSON `params` to `method`; returns (HTTP status, body).
pub async fn call(fake: &FakeTelegram, method: &str, params: Value) -> (u16, Value) {
    send_json(client().post(fake.method_url(method)).json(&params)).await
}

/// POSTs `body` to `method` as `multipart/form-data` with `boundary` (as the header
/// spells it: quoted or not); returns the response.
pub async fn post_multipart(
    fake: &FakeTelegram,
    method: &str,
    boundary: &str,
    body: impl Into<reqwest::Body>,
) -> reqwest::Response {
    let content_type = format!("multipart/form-data; boundary={boundary}");
    let request = client().post(fake.method_url(method));
    let request = request.header("content-type", content_type).body(body);
    request.send().await.unwrap()
}

pub async fn ok(fake: &FakeTelegram, method: &str, params: Value) -> Value {
    let (status, body) = call(fake, method, params).await;
    assert_eq!(status, 200, "{method}: {body}");
    assert_eq!(body["ok"], true, "{method}: {body}");
    body["result"].clone()
}

pub async fn bad_request(fake: &FakeTelegram, method: &str, params: Value) -> String {
    let (status, body) = call(fake, method, params).await;
    assert_eq!(status, 400, "{method}: {body}");
    assert_eq!(body["ok"], false);
    assert_eq!(body["error_code"], 400);
    body["description"].as_str().unwrap().to_owned()
}

/// [`bad_request`] for `sendMessage`.
pub async fn send_refused(fake: &FakeTelegram, params: Value) -> String {
    bad_request(fake, "sendMessage", params).await
}

pub fn ids(updates: &Value) -> Vec<i64> {
    updates
        .as_array()
        .unwrap()
        .iter()
        .map(|update| update["update_id"].as_i64().unwrap())
        .collect()
}
