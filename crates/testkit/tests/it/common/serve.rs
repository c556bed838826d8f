//! What tests of a server need, here and in pincer-fakes' tests (which include this file with
//! `#[path]`): an HTTP client that ignores proxies, JSON calls, and stopping a server binary.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;

pub fn client() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().unwrap()
}

pub async fn post(url: &str, body: &Value) -> reqwest::Response {
    client().post(url).json(body).send().await.unwrap()
}

/// GETs `url` and reads its JSON answer.
pub async fn get_json(url: &str) -> Value {
    let response = client().get(url).send().await.unwrap();
    response.json().await.unwrap()
}

/// POSTs `body` as JSON to `url` and reads its JSON answer.
pub async fn post_json(url: &str, body: &Value) -> Value {
    post(url, body).await.json().await.unwrap()
}

/// The answer's `Content-Type`.
pub fn content_type(response: &reqwest::Response) -> &str {
    response.headers()["content-type"].to_str().unwrap()
}

/// Sends `request`: the answer's status and JSON body (`null` when the body is empty).
pub async fn send_json(request: reqwest::RequestBuilder) -> (u16, Value) {
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let body = response.bytes().await.unwrap();
    if body.is_empty() {
        return (status, Value::Null);
    }
    (status, serde_json::from_slice(&body).unwrap())
}

/// Stops a server binary with SIGTERM and asserts that it exits cleanly.
pub fn terminate(mut child: std::process::Child) {
    #[cfg(unix)]
    {
        let status = std::process::Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let exit = child.wait().unwrap();
        assert!(exit.success(), "exit status after SIGTERM: {exit}");
    }
    #[cfg(not(unix))]
    {
        child.kill().unwrap();
        child.wait().unwrap();
    }
}
