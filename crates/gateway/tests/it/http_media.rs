//! Images sent to `POST /v1/chat/completions` as OpenAI's `image_url` parts, against a real
//! server on 127.0.0.1: a `data:` URL and a fetched `http://` URL reach the mock LLM as the
//! exact image part (the file saved in the workspace inbox and named in the text), and every
//! bad image is a 400 in OpenAI's shape that starts no run and saves nothing.

use crate::support;

use base64::Engine as _;
use pincer_testkit::{MockLlm, Reply, Rule, Scenario};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio_util::sync::CancellationToken;

const TOKEN: &str = "http-media-token-789";
/// A whole PNG (pictures are decoded before they go to a model).
const PNG: &[u8] = pincer_testkit::files::PIXEL_PNG;
const MB: usize = 1024 * 1024;

struct Server {
    base: String,
    stop: CancellationToken,
    llm: MockLlm,
    dir: tempfile::TempDir,
    http: reqwest::Client,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// A server whose runtime has `agents.defaults.mediaMaxMb` = `media_max_mb` (none: 20).
async fn start(media_max_mb: Option<u64>) -> Server {
    let mut config = support::test_config();
    config.agents.defaults.media_max_mb = media_max_mb;
    let scenario = Scenario::new().rule(Rule::any().reply(Reply::text("a cat")));
    let running = support::start_server_configured(scenario, TOKEN, config, |_| {}).await;
    Server {
        base: format!("http://{}", running.addr),
        stop: running.stop,
        llm: running.llm,
        dir: running.dir,
        http: reqwest::Client::new(),
    }
}

impl Server {
    async fn completion(&self, content: Value) -> (u16, Value) {
        let body = json!({"model": "pincer", "messages": [{"role": "user", "content": content}]});
        let res = self
            .http
            .post(format!("{}/v1/chat/completions", self.base))
            .bearer_auth(TOKEN)
            .json(&body)
            .send()
            .await
            .unwrap();
        (res.status().as_u16(), res.json().await.unwrap())
    }

    /// The user message the model got in its only request.
    fn user_content_sent(&self) -> Value {
        let requests = self.llm.requests();
        assert_eq!(requests.len(), 1, "one model call");
        let messages = requests[0].body["messages"].as_array().unwrap().clone();
        let user = messages.iter().rfind(|m| m["role"] == "user").unwrap();
        user["content"].clone()
    }

    /// Today's inbox directory in the agent's workspace.
    fn inbox(&self) -> std::path::PathBuf {
        self.dir.path().join("workspace/inbox").join(today())
    }

    /// Asserts a refusal: `status` with OpenAI's error body, no model call, nothing saved.
    async fn refused(&self, content: Value, status: u16, message: &str, code: &str) {
        let (got, body) = self.completion(content).await;
        let kind = "invalid_request_error";
        assert_eq!(
            (got, body),
            (
                status,
                json!({"error": {"message": message, "type": kind, "code": code}})
            ),
        );
        assert!(self.llm.requests().is_empty(), "no run started");
        assert!(!self.inbox().exists(), "nothing saved");
    }
}

fn today() -> String {
    jiff::Zoned::now().strftime("%Y-%m-%d").to_string()
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn image_part(url: &str) -> Value {
    json!({"type": "image_url", "image_url": {"url": url, "detail": "low"}})
}

/// An HTTP server on 127.0.0.1 that answers every request with `status`, the body `body`
/// (declaring its length when `declare_length`), and closes. Returns its base URL.
async fn image_host(status: u16, body: Vec<u8>, declare_length: bool) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let mut request = vec![0u8; 4096];
            let _ = socket.read(&mut request).await;
            let length = if declare_length {
                format!("content-length: {}\r\n", body.len())
            } else {
                String::new()
            };
            let head = format!(
                "HTTP/1.1 {status} X\r\ncontent-type: image/png\r\n{length}connection: close\r\n\r\n"
            );
            let _ = socket.write_all(head.as_bytes()).await;
            let _ = socket.write_all(&body).await;
            let _ = socket.shutdown().await;
        }
    });
    format!("http://{addr}")
}

#[tokio::test]
async fn a_data_url_image_reaches_the_model_as_its_image_part() {
    let server = start(None).await;
    let url = format!("data:image/png;base64,{}", b64(PNG));
    let (status, body) = server
        .completion(json!([{"type": "text", "text": "what is this?"}, image_part(&url)]))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["choices"][0]["message"]["content"], "a cat");
    let path = format!("inbox/{}/image.png", today());
    assert_eq!(
        server.user_content_sent(),
        json!([
            {"type": "text", "text": format!("[media attached: {path} (image/png)]\nwhat is this?")},
            {"type": "image_url", "image_url": {"url": url}},
        ])
    );
    let saved = std::fs::read(server.dir.path().join("workspace").join(path)).unwrap();
    assert_eq!(saved, PNG);
}

#[tokio::test]
async fn an_image_alone_is_a_message() {
    let server = start(None).await;
    let url = format!("data:image/png;base64,{}", b64(PNG));
    let (status, body) = server.completion(json!([image_part(&url)])).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        server.user_content_sent(),
        json!([
            {"type": "text", "text": format!("[media attached: inbox/{}/image.png (image/png)]\n", today())},
            {"type": "image_url", "image_url": {"url": url}},
        ])
    );
}

#[tokio::test]
async fn an_http_image_url_is_fetched_and_named_by_its_file() {
    let server = start(None).await;
    let host = image_host(200, PNG.to_vec(), false).await;
    let (status, body) = server
        .completion(json!([
            {"type": "text", "text": "and this?"},
            image_part(&format!("{host}/pics/cat.png?size=large")),
        ]))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        server.user_content_sent(),
        json!([
            {"type": "text", "text": format!("[media attached: inbox/{}/cat.png (image/png)]\nand this?", today())},
            {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{}", b64(PNG))}},
        ])
    );
}

#[tokio::test]
async fn malformed_image_parts_are_refused_before_any_run() {
    let server = start(None).await;
    let text = json!({"type": "text", "text": "look"});
    let invalid = "invalid_image_url";
    let cases = [
        (
            json!({"type": "image_url", "image_url": {"detail": "low"}}),
            "image_url part is missing a valid URL",
        ),
        (
            image_part("data:image/png,not-base64"),
            "image_url data URL must be base64 encoded (data:<mime>;base64,<data>)",
        ),
        (
            image_part("data:image/png;base64,"),
            "image_url data URL has no data",
        ),
        (
            image_part("data:image/png;base64,@@not base64@@"),
            "image_url data URL is not valid base64",
        ),
        (
            image_part(&format!("data:image/png;base64,{}", b64(b"%PDF-1.7 a pdf"))),
            "image_url is not a PNG, JPEG, GIF or WebP image",
        ),
        (
            image_part("ftp://example.com/cat.png"),
            "image_url must be a data: URL or an http(s):// URL",
        ),
    ];
    for (part, message) in cases {
        server
            .refused(json!([text, part]), 400, message, invalid)
            .await;
    }
    let url = format!("data:image/png;base64,{}", b64(PNG));
    let nine: Vec<Value> = (0..9).map(|_| image_part(&url)).collect();
    server
        .refused(
            Value::Array(nine),
            400,
            "too many image_url parts (9; limit 8)",
            "too_many_images",
        )
        .await;
}

#[tokio::test]
async fn images_over_media_max_mb_are_refused_before_any_run() {
    let server = start(Some(1)).await;
    let mut big = PNG.to_vec();
    big.resize(MB + 1, 0);
    let too_large = "image_too_large";
    server
        .refused(
            json!([image_part(&format!("data:image/png;base64,{}", b64(&big)))]),
            400,
            "image is 1.1 MB, over the limit of 1 MB (agents.defaults.mediaMaxMb)",
            too_large,
        )
        .await;
    // A server that declares the length is refused by it, one that does not as the bytes
    // come.
    let declared = image_host(200, big.clone(), true).await;
    server
        .refused(
            json!([image_part(&format!("{declared}/big.png"))]),
            400,
            "image is 1.1 MB, over the limit of 1 MB (agents.defaults.mediaMaxMb)",
            too_large,
        )
        .await;
    let streamed = image_host(200, big, false).await;
    server
        .refused(
            json!([image_part(&format!("{streamed}/big.png"))]),
            400,
            "image is over the limit of 1 MB (agents.defaults.mediaMaxMb)",
            too_large,
        )
        .await;
    // The body may hold one image of the largest size, base64 encoded, and 1 MB of text.
    let huge = "x".repeat(3 * MB);
    server
        .refused(
            json!([{"type": "text", "text": huge}]),
            413,
            "the request body is over the limit of 2.4 MB (one image of agents.defaults.mediaMaxMb, base64 encoded, and 1 MB of text)",
            "body_too_large",
        )
        .await;
}

#[tokio::test]
async fn an_image_url_that_cannot_be_fetched_is_refused() {
    let server = start(None).await;
    let missing = image_host(404, b"not here".to_vec(), true).await;
    server
        .refused(
            json!([image_part(&format!("{missing}/gone.png"))]),
            400,
            "image_url could not be fetched: HTTP 404",
            "image_fetch_failed",
        )
        .await;
}
