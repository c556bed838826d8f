//! `pincer mcp serve` driven by the official Rust SDK's MCP client (rmcp) over stdio, the
//! way an editor runs it: against a real `pincer gateway run` on the mock LLM (ask, then the
//! session in sessions_list and sessions_history, memory_search finding a note, cron_add
//! then cron_list, malformed arguments, cancellation stopping the run), and without any
//! gateway (the tools say to start it); and the same tools at the gateway's `/mcp` over
//! Streamable HTTP, behind its token.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientRequest, ErrorCode, ProgressNotificationParam,
    Request,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, RoleClient, ServiceError, ServiceExt as _};
use serde_json::{Value, json};

use crate::common;
use common::Home;
use common::gateway::{free_port, gateway_home, http_status_with, long_story, run_and_connect};
use pincer_testkit::{Match, Reply, Rule, Scenario};

const TOKEN: &str = "mcp-serve-token";
const TOOLS: [&str; 6] = [
    "ask",
    "sessions_list",
    "sessions_history",
    "memory_search",
    "cron_list",
    "cron_add",
];

/// The client's side: records the progress it is sent (progress value and message).
#[derive(Clone, Default)]
struct Recorder {
    progress: Arc<Mutex<Vec<(f64, String)>>>,
}

impl ClientHandler for Recorder {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress
            .lock()
            .unwrap()
            .push((params.progress, params.message.unwrap_or_default()));
    }
}

type Client = RunningService<RoleClient, Recorder>;

/// Starts `pincer mcp serve` for `home` and completes the MCP handshake.
async fn serve(home: &Home) -> Client {
    let command = tokio::process::Command::from(home.command(&["mcp", "serve"]));
    let transport = TokioChildProcess::builder(command)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
        .0;
    Recorder::default().serve(transport).await.unwrap()
}

async fn call(client: &Client, tool: &str, args: Value) -> Result<CallToolResult, ServiceError> {
    let params = CallToolRequestParams::new(tool.to_owned())
        .with_arguments(args.as_object().unwrap().clone());
    tokio::time::timeout(Duration::from_secs(60), client.call_tool(params))
        .await
        .expect("the tool answered within 60 s")
}

/// The text of a result that must not be an error.
fn text(result: &CallToolResult) -> String {
    assert_eq!(result.is_error, Some(false), "{result:?}");
    only_text(result)
}

fn only_text(result: &CallToolResult) -> String {
    assert_eq!(result.content.len(), 1, "{result:?}");
    result.content[0].as_text().unwrap().text.clone()
}

fn json_text(result: &CallToolResult) -> Value {
    serde_json::from_str(&text(result)).unwrap()
}

/// An MCP `invalid_params` error with `message` in its text.
fn assert_invalid_params(result: Result<CallToolResult, ServiceError>, message: &str) {
    match result {
        Err(ServiceError::McpError(e)) => {
            assert_eq!(e.code, ErrorCode::INVALID_PARAMS, "{e:?}");
            assert!(e.message.contains(message), "{e:?}");
        }
        other => panic!("expected invalid params, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_client_asks_reads_sessions_and_schedules_through_the_gateway() {
    let llm = common::mock(
        Scenario::new()
            .rule(Rule::when(Match::last_user("ping")).reply(Reply::text("Pong from the mock."))),
    )
    .await;
    let (home, port) = gateway_home(&llm, TOKEN);
    let notes = home.path().join("agents/main/workspace/memory");
    std::fs::create_dir_all(&notes).unwrap();
    std::fs::write(notes.join("2026-11-23.md"), common::FACT).unwrap();
    let (_gateway, _ws) = run_and_connect(&home, port, TOKEN).await;
    let client = serve(&home).await;

    let info = client.peer_info().unwrap();
    let server = info.server_info.as_ref().unwrap();
    assert_eq!(server.name, "pincer");
    assert_eq!(server.version, env!("CARGO_PKG_VERSION"));
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, TOOLS);

    let reply = call(&client, "ask", json!({"message": "ping"}))
        .await
        .unwrap();
    assert_eq!(text(&reply), "Pong from the mock.");
    // rmcp's client sends a progress token with every request: the reply streamed as
    // progress. Its handler runs each notification as a task of its own, so they are put
    // back in order by their progress values (1, 2, 3, …: increasing, as MCP asks). The
    // last of those tasks may still be running when the answer is in: wait for the text.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let got: String = client
            .service()
            .progress
            .lock()
            .unwrap()
            .iter()
            .map(|p| p.1.clone())
            .collect();
        if got.len() >= "Pong from the mock.".len() || std::time::Instant::now() > deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let mut progress = client.service().progress.lock().unwrap().clone();
    progress.sort_by(|a, b| a.0.total_cmp(&b.0));
    let steps: Vec<f64> = progress.iter().map(|p| p.0).collect();
    let want: Vec<f64> = (1..=steps.len()).map(|n| n as f64).collect();
    assert_eq!(steps, want);
    let streamed: String = progress.into_iter().map(|p| p.1).collect();
    assert_eq!(streamed, "Pong from the mock.");

    let list = json_text(&call(&client, "sessions_list", json!({})).await.unwrap());
    let keys: Vec<&str> = list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["key"].as_str().unwrap())
        .collect();
    assert!(keys.contains(&"agent:main:mcp"), "{list}");

    let history = json_text(
        &call(
            &client,
            "sessions_history",
            json!({"sessionKey": "agent:main:mcp"}),
        )
        .await
        .unwrap(),
    );
    assert_eq!(history["sessionKey"], "agent:main:mcp", "{history}");
    let said: Vec<(&str, &str)> = history["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["role"].as_str().unwrap(), m["text"].as_str().unwrap()))
        .collect();
    assert_eq!(
        said,
        [("user", "ping"), ("assistant", "Pong from the mock.")]
    );

    let found = json_text(
        &call(&client, "memory_search", json!({"query": "sister"}))
            .await
            .unwrap(),
    );
    assert_eq!(
        found["results"][0]["path"], "memory/2026-11-23.md",
        "{found}"
    );
    let snippet = found["results"][0]["snippet"].as_str().unwrap();
    assert!(snippet.contains("Mia visits on Friday"), "{found}");

    let job = json!({"name": "Stretch", "schedule": {"kind": "every", "everyMs": 3_600_000},
        "payload": {"kind": "systemEvent", "text": "Time to stretch"}});
    let added = json_text(&call(&client, "cron_add", job).await.unwrap());
    assert_eq!(added["name"], "Stretch", "{added}");
    let id = added["id"].as_str().unwrap();
    let jobs = json_text(&call(&client, "cron_list", json!({})).await.unwrap());
    assert_eq!(jobs["jobs"].as_array().unwrap().len(), 1, "{jobs}");
    assert_eq!(jobs["jobs"][0]["id"], id, "{jobs}");
    assert_eq!(
        jobs["jobs"][0]["payload"]["text"], "Time to stretch",
        "{jobs}"
    );

    // Malformed arguments are the client's mistake: an MCP error, and the server goes on.
    assert_invalid_params(
        call(&client, "ask", json!({})).await,
        "missing field `message`",
    );
    assert_invalid_params(
        call(&client, "ask", json!({"message": "x", "sesionKey": "typo"})).await,
        "unknown field `sesionKey`",
    );
    assert_invalid_params(
        call(&client, "cron_add", json!({"name": "no schedule"})).await,
        "missing field `schedule`",
    );
    assert_invalid_params(
        call(&client, "nope", json!({})).await,
        "unknown tool \"nope\"",
    );
    // A refusal of the gateway is the tool's answer.
    let refused = call(
        &client,
        "cron_add",
        json!({"name": "bad", "schedule": {"kind": "cron", "expr": "not cron"},
        "payload": {"kind": "systemEvent", "text": "x"}}),
    )
    .await
    .unwrap();
    assert_eq!(refused.is_error, Some(true), "{refused:?}");
    assert!(
        only_text(&refused).starts_with("the gateway refused cron.add: "),
        "{refused:?}"
    );
    assert_eq!(
        text(
            &call(&client, "ask", json!({"message": "ping"}))
                .await
                .unwrap()
        ),
        "Pong from the mock."
    );
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_an_ask_stops_the_run() {
    let llm = common::mock(
        Scenario::new()
            .rule(Rule::when(Match::last_user("tell me a story")).reply(long_story(400))),
    )
    .await;
    let (home, port) = gateway_home(&llm, TOKEN);
    let (_gateway, mut ws) = run_and_connect(&home, port, TOKEN).await;
    let client = serve(&home).await;

    let params = CallToolRequestParams::new("ask").with_arguments(
        json!({"message": "tell me a story"})
            .as_object()
            .unwrap()
            .clone(),
    );
    let handle = client
        .send_request_with_option(
            ClientRequest::CallToolRequest(Request::new(params)),
            PeerRequestOptions::no_options(),
        )
        .await
        .unwrap();
    // The story is streaming once progress arrives.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while client.service().progress.lock().unwrap().is_empty() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no progress within 30 s"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    handle.cancel(Some("changed my mind".into())).await.unwrap();

    let ended = tokio::time::timeout(Duration::from_secs(15), async {
        loop {
            let frame = ws.event("chat").await;
            let state = frame["payload"]["state"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            if state != "delta" {
                return frame;
            }
        }
    })
    .await
    .expect("the run ended within 15 s");
    assert_eq!(ended["payload"]["state"], "aborted", "{ended}");
    assert_eq!(ended["payload"]["sessionKey"], "agent:main:mcp", "{ended}");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_gateway_the_server_lists_its_tools_and_says_to_start_it() {
    let home = Home::new();
    home.write_config(&format!("{{ gateway: {{ port: {} }} }}", free_port()));
    let client = serve(&home).await;

    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), TOOLS.len());
    for (tool, args) in [
        ("ask", json!({"message": "hello"})),
        ("sessions_list", json!({})),
        ("cron_list", json!({})),
    ] {
        let result = call(&client, tool, args).await.unwrap();
        assert_eq!(result.is_error, Some(true), "{result:?}");
        let said = only_text(&result);
        assert!(
            said.starts_with("the gateway is not running (nothing listens on 127.0.0.1:"),
            "{said}"
        );
        assert!(
            said.ends_with("start it with `pincer gateway start --daemon`"),
            "{said}"
        );
    }
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gateway_serves_the_same_tools_at_mcp_behind_its_token() {
    let llm = common::mock(
        Scenario::new()
            .rule(Rule::when(Match::last_user("ping")).reply(Reply::text("Pong over HTTP."))),
    )
    .await;
    let (home, port) = gateway_home(&llm, TOKEN);
    let (_gateway, _ws) = run_and_connect(&home, port, TOKEN).await;
    // Refused before MCP without the token, or with another.
    for (headers, want) in [
        ("", "HTTP/1.1 401 Unauthorized"),
        (
            "Authorization: Bearer nope\r\n",
            "HTTP/1.1 401 Unauthorized",
        ),
    ] {
        let status = http_status_with(port, "/mcp", headers).unwrap();
        assert_eq!(status, want, "{headers:?}");
    }

    let config =
        StreamableHttpClientTransportConfig::with_uri(format!("http://127.0.0.1:{port}/mcp"))
            .auth_header(TOKEN);
    let client = Recorder::default()
        .serve(StreamableHttpClientTransport::from_config(config))
        .await
        .unwrap();
    let info = client.peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().unwrap().name, "pincer");
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, TOOLS);

    let reply = call(&client, "ask", json!({"message": "ping"}))
        .await
        .unwrap();
    assert_eq!(text(&reply), "Pong over HTTP.");
    // Progress came as SSE events of the call's response.
    let mut progress = client.service().progress.lock().unwrap().clone();
    progress.sort_by(|a, b| a.0.total_cmp(&b.0));
    let streamed: String = progress.into_iter().map(|p| p.1).collect();
    assert_eq!(streamed, "Pong over HTTP.");
    let history = json_text(
        &call(
            &client,
            "sessions_history",
            json!({"sessionKey": "agent:main:mcp"}),
        )
        .await
        .unwrap(),
    );
    let texts: Vec<&str> = history["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["ping", "Pong over HTTP."]);
    assert_invalid_params(
        call(&client, "ask", json!({})).await,
        "missing field `message`",
    );
    client.cancel().await.unwrap();
}
