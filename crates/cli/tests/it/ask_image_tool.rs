//! The `image` tool through `pincer ask` with the real binary and the mock LLM: a text-only
//! agent calls it on a PNG in its workspace, the image model (`agents.defaults.imageModel`,
//! else the agent's own model when it takes images) gets one request of the prompt and the
//! exact image part, and its answer comes back to the agent as the tool's result. Without a
//! model that takes images the tool says so and no vision call is made. An http URL is
//! fetched (from a one-answer server on 127.0.0.1, allowed by `tools.web.fetch.allowHosts`)
//! with the size cap enforced as it arrives; without the allowance, or towards a metadata
//! address, the download is refused before any connection.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use base64::Engine as _;
use common::{Home, mock};
use pincer_testkit::{Match, MockLlm, Reply, Rule, Scenario};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

const PNG: &[u8] = pincer_testkit::files::PIXEL_PNG;

const QUESTION: &str = "what is in pic.png?";
const PROMPT: &str = "What colour is it?";

/// The agent (`agent_model`) asks about pic.png, the vision call is answered, and the agent
/// ends with "done" once it has the tool's result.
async fn setup(agent_model: &str, image_model: Option<&str>) -> (MockLlm, Home) {
    setup_with(
        agent_model,
        image_model,
        json!({"path": "pic.png", "prompt": PROMPT}),
    )
    .await
}

/// [`setup`] with the tool called with `args`.
async fn setup_with(agent_model: &str, image_model: Option<&str>, args: Value) -> (MockLlm, Home) {
    let server = mock(
        Scenario::new()
            .rule(Rule::when(Match::tool_result("image")).reply(Reply::text("done")))
            .rule(Rule::when(Match::last_user(QUESTION)).reply(Reply::tool_call("image", args)))
            // The vision call ends with the prompt (and the image).
            .rule(Rule::when(Match::last_user(PROMPT)).reply(Reply::text("a red square"))),
    )
    .await;
    let home = Home::new();
    let image_model = image_model
        .map(|m| format!(", imageModel: \"{m}\""))
        .unwrap_or_default();
    home.use_mock(
        &server,
        &format!(
            "agents: {{ defaults: {{ model: \"{agent_model}\" {image_model} }} }},\n  \
             tools: {{ web: {{ fetch: {{ allowHosts: [\"127.0.0.1\"] }} }} }},"
        ),
    );
    let workspace = home.path().join("agents/main/workspace");
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::write(workspace.join("pic.png"), PNG).unwrap();
    (server, home)
}

/// The vision request's messages: the prompt and the image, nothing else.
fn vision_messages() -> Value {
    let data = base64::engine::general_purpose::STANDARD.encode(PNG);
    json!([{"role": "user", "content": [
        {"type": "text", "text": PROMPT},
        {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{data}")}},
    ]}])
}

/// The text of the tool result the agent's last request ends with.
fn tool_result_sent(server: &MockLlm) -> Value {
    let requests = server.requests();
    let last = requests.last().unwrap();
    let message = last.body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(message["role"], "tool", "{message}");
    message["content"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_text_only_agent_sees_a_workspace_image_through_the_image_model() {
    let (server, home) = setup("mock/backup", Some("mock/primary")).await;
    let run = home.run_ok(&["ask", QUESTION]);
    assert_eq!(run.stdout(), "done\n");
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "agent, vision call, agent");
    // The agent is offered the tool with its parameters.
    let tools = requests[0].body["tools"].as_array().unwrap();
    let image = tools
        .iter()
        .find(|t| t["function"]["name"] == "image")
        .expect("the image tool is offered");
    let mut params: Vec<&str> = image["function"]["parameters"]["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    params.sort_unstable();
    assert_eq!(params, ["path", "prompt", "url"]);
    // The vision call: the image model, the prompt and the exact image part, no tools.
    assert_eq!(requests[0].body["model"], "backup");
    assert_eq!(requests[1].body["model"], "primary");
    assert_eq!(requests[1].body["messages"], vision_messages());
    let no_tools = requests[1].body.get("tools");
    assert!(
        no_tools.is_none() || no_tools == Some(&json!([])),
        "{no_tools:?}"
    );
    // Its answer is the tool's result.
    assert_eq!(requests[2].body["model"], "backup");
    assert_eq!(tool_result_sent(&server), json!("a red square"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_an_image_model_the_agents_own_model_looks_when_it_takes_images() {
    let (server, home) = setup("mock/primary", None).await;
    home.run_ok(&["ask", QUESTION]);
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[1].body["model"], "primary");
    assert_eq!(requests[1].body["messages"], vision_messages());
    assert_eq!(tool_result_sent(&server), json!("a red square"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_no_model_that_takes_images_the_tool_says_what_to_set() {
    let (server, home) = setup("mock/backup", None).await;
    home.run_ok(&["ask", QUESTION]);
    assert_eq!(server.requests().len(), 2, "no vision call");
    assert_eq!(
        tool_result_sent(&server),
        json!("no image model: set agents.defaults.imageModel to a model that takes images")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_model_that_takes_only_text_is_refused() {
    let (server, home) = setup("mock/backup", Some("mock/backup")).await;
    home.run_ok(&["ask", QUESTION]);
    assert_eq!(server.requests().len(), 2, "no vision call");
    assert_eq!(
        tool_result_sent(&server),
        json!(
            "agents.defaults.imageModel \"mock/backup\" does not take images (its input is \
             text only); name a model that does"
        )
    );
}

/// An HTTP server on 127.0.0.1 answering every request with `status` and `body` (its length
/// not declared, so only the bytes as they arrive can tell its size), then closing.
async fn image_host(status: u16, body: Vec<u8>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let mut request = vec![0u8; 4096];
            let _ = socket.read(&mut request).await;
            let head = format!(
                "HTTP/1.1 {status} X\r\ncontent-type: image/png\r\nconnection: close\r\n\r\n"
            );
            let _ = socket.write_all(head.as_bytes()).await;
            let _ = socket.write_all(&body).await;
            let _ = socket.shutdown().await;
        }
    });
    format!("http://{addr}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_image_is_fetched_and_shown_to_the_image_model() {
    let url = format!("{}/pic.png", image_host(200, PNG.to_vec()).await);
    let (server, home) = setup_with(
        "mock/backup",
        Some("mock/primary"),
        json!({"url": url, "prompt": PROMPT}),
    )
    .await;
    home.run_ok(&["ask", QUESTION]);
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[1].body["messages"], vision_messages());
    assert_eq!(tool_result_sent(&server), json!("a red square"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_image_that_fails_or_is_too_big_is_a_tool_error() {
    for (status, body, error) in [
        (404, b"gone".to_vec(), "HTTP 404".to_owned()),
        (
            200,
            vec![0x89; 6 * 1024 * 1024 + 1],
            "larger than 6291456 bytes, the most the image tool takes".to_owned(),
        ),
    ] {
        let url = format!("{}/pic.png", image_host(status, body).await);
        let (server, home) =
            setup_with("mock/backup", Some("mock/primary"), json!({"url": url})).await;
        home.run_ok(&["ask", QUESTION]);
        assert_eq!(server.requests().len(), 2, "no vision call");
        assert_eq!(
            tool_result_sent(&server),
            json!(format!("cannot fetch {url}: {error}"))
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_url_on_the_local_network_is_refused_unless_allowed() {
    let url = format!("{}/pic.png", image_host(200, PNG.to_vec()).await);
    for (target, refusal) in [
        (
            url.clone(),
            "refused 127.0.0.1: it is 127.0.0.1, a loopback address; to allow it set \
             tools.web.fetch.allowPrivateNetwork: true or add \"127.0.0.1\" to \
             tools.web.fetch.allowHosts",
        ),
        (
            "http://169.254.169.254/latest/meta-data/pic.png".to_owned(),
            "refused 169.254.169.254: it is 169.254.169.254, a cloud metadata service \
             address; to reach it anyway add \"169.254.169.254\" to tools.web.fetch.allowHosts",
        ),
    ] {
        let (server, home) =
            setup_with("mock/backup", Some("mock/primary"), json!({"url": target})).await;
        // The same home without the allowance for 127.0.0.1.
        home.use_mock(
            &server,
            "agents: { defaults: { model: \"mock/backup\", imageModel: \"mock/primary\" } },",
        );
        home.run_ok(&["ask", QUESTION]);
        assert_eq!(server.requests().len(), 2, "no vision call");
        assert_eq!(
            tool_result_sent(&server),
            json!(format!("cannot fetch {target}: {refusal}"))
        );
    }
}
