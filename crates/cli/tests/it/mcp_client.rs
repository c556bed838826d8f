//! MCP servers' tools through the real binary: `mcp.servers.fs` (the reference
//! `server-filesystem`, installed in `interop/.cache` by `.ci/run`) gives the agent
//! `fs__read_text_file` in its next `pincer ask` turn, called by the mock LLM, its result
//! sent back to the model; `agents.list[].mcp` leaves servers out; `pincer mcp list`,
//! `tools`, `call` and `status` show and use them, and a server that cannot start is a
//! failed status with its reason, not a failed turn.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use crate::common;

use common::{Home, json_of, mock};
use pincer_testkit::{Match, MockLlm, Reply, Rule, Scenario};
use serde_json::{Value, json};

const QUESTION: &str = "what does note.txt say?";

/// `server-filesystem`'s entry point, or `None` (printed) when it or node is missing;
/// in CI a missing server fails the test.
fn server_filesystem() -> Option<String> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(
        "../../interop/.cache/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js",
    );
    let why = if std::process::Command::new("node")
        .arg("--version")
        .output()
        .is_err()
    {
        "node is not installed".to_owned()
    } else if !path.is_file() {
        format!("{} is missing (.ci/run installs it)", path.display())
    } else {
        return Some(path.to_string_lossy().into_owned());
    };
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "server-filesystem: {why}"
    );
    eprintln!("skipped: server-filesystem: {why}");
    None
}

/// A home with a directory holding note.txt (returned, canonical).
fn home_with_note() -> (Home, PathBuf) {
    let home = Home::new();
    let dir = home.path().join("shared");
    std::fs::create_dir_all(&dir).unwrap();
    let dir = dir.canonicalize().unwrap();
    std::fs::write(dir.join("note.txt"), "hello from the note").unwrap();
    (home, dir)
}

/// The config: the mock, `mcp.servers.fs` serving `dir`, and `agents` as extra config
/// (e.g. an agent list).
fn use_fs(home: &Home, server: &MockLlm, entry: &str, dir: &std::path::Path, agents: &str) {
    home.use_mock(
        server,
        &format!(
            "agents: {{ defaults: {{ model: \"mock/backup\" }} {agents} }},\n  \
             mcp: {{ servers: {{ fs: {{ command: \"node\", args: [{entry:?}, {dir:?}] }} }} }},",
            dir = dir.to_str().unwrap()
        ),
    );
}

fn offered_tools(server: &MockLlm) -> Vec<String> {
    server.requests()[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_gets_the_filesystem_servers_tools_and_calls_one() {
    let Some(entry) = server_filesystem() else {
        return;
    };
    let (home, dir) = home_with_note();
    let path = dir.join("note.txt");
    let server = mock(
        Scenario::new()
            .rule(Rule::when(Match::tool_result("fs__read_text_file")).reply(Reply::text("done")))
            .rule(
                Rule::when(Match::last_user(QUESTION)).reply(Reply::tool_call(
                    "fs__read_text_file",
                    json!({"path": path}),
                )),
            ),
    )
    .await;
    use_fs(&home, &server, &entry, &dir, "");
    let run = home.run_ok(&["ask", QUESTION]);
    assert_eq!(run.stdout(), "done\n");
    let tools = offered_tools(&server);
    assert!(
        tools.contains(&"fs__read_text_file".to_owned()),
        "{tools:?}"
    );
    assert!(
        tools.contains(&"read".to_owned()),
        "the built-ins stay: {tools:?}"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let last = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["role"], "tool");
    assert_eq!(last["content"], json!("hello from the note"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_whose_mcp_list_is_empty_gets_no_mcp_tools() {
    let Some(entry) = server_filesystem() else {
        return;
    };
    let server = mock(Scenario::new().rule(Rule::any().reply(Reply::text("ok")))).await;
    let (home, dir) = home_with_note();
    use_fs(
        &home,
        &server,
        &entry,
        &dir,
        ", list: [{ id: \"main\", mcp: [] }]",
    );
    home.run_ok(&["ask", "hi"]);
    let tools = offered_tools(&server);
    assert!(!tools.iter().any(|t| t.starts_with("fs__")), "{tools:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_list_tools_call_and_status() {
    let Some(entry) = server_filesystem() else {
        return;
    };
    let server = mock(Scenario::new()).await;
    let (home, dir) = home_with_note();
    use_fs(&home, &server, &entry, &dir, "");
    let list = json_of(&home.run_ok(&["mcp", "list", "--json"]));
    assert_eq!(
        list,
        json!({"servers": [{"name": "fs", "transport": "stdio", "enabled": true,
            "target": format!("node {entry} {}", dir.display())}]})
    );
    // `pincer tools list` lists the agent's MCP tools with the built-ins.
    let all = json_of(&home.run_ok(&["tools", "list"]));
    let names: Vec<&str> = all
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"fs__read_text_file") && names.contains(&"read"),
        "{names:?}"
    );
    let tools = home.run_ok(&["mcp", "tools", "fs"]).stdout();
    assert!(
        tools.lines().any(|l| l.starts_with("fs__read_text_file\t")),
        "{tools}"
    );
    let path = dir.join("note.txt");
    let args = json!({"path": path}).to_string();
    let call = home.run_ok(&["mcp", "call", "fs", "read_text_file", "--args", &args]);
    assert_eq!(call.stdout(), "hello from the note\n");
    let status = json_of(&home.run_ok(&["mcp", "status", "--json"]));
    let fs = &status["servers"][0];
    assert_eq!(fs["name"], "fs");
    assert_eq!(fs["state"], "ready");
    assert!(fs["tools"].as_u64().unwrap() > 5, "{fs}");
    let bad = home.run(&["mcp", "call", "fs", "read_text_file", "--args", "{nope"]);
    bad.assert_fails(1, "--args is not JSON");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_cannot_start_is_a_failed_status_not_a_failed_turn() {
    let server = mock(Scenario::new().rule(Rule::any().reply(Reply::text("still here")))).await;
    let home = Home::new();
    home.use_mock(
        &server,
        "agents: { defaults: { model: \"mock/backup\" } },\n  \
         mcp: { servers: { gone: { command: \"/nonexistent/mcp\" } } },",
    );
    assert_eq!(home.run_ok(&["ask", "hi"]).stdout(), "still here\n");
    let run = home.run(&["mcp", "status", "--json"]);
    assert_eq!(run.code(), 1);
    let status: Value = serde_json::from_str(&run.stdout()).unwrap();
    assert_eq!(status["servers"][0]["state"], "failed");
    let error = status["servers"][0]["error"].as_str().unwrap();
    assert!(
        error.starts_with("cannot start the server: /nonexistent/mcp:"),
        "{error}"
    );
}

#[test]
fn bad_mcp_config_is_refused_with_the_key() {
    let home = Home::new();
    home.write_config("{ mcp: { servers: { \"bad name\": { command: \"x\" }, both: { command: \"x\", url: \"http://h\" }, none: {} } }, agents: { list: [{ id: \"main\", mcp: [\"missing\"] }] } }");
    let run = home.run(&["mcp", "list"]);
    assert_eq!(run.code(), 1);
    common::assert_contains(
        &run.stderr(),
        &[
            "mcp.servers[\"bad name\"]: invalid MCP server name \"bad name\"",
            "mcp.servers.both: has both `command` and `url`",
            "mcp.servers.none: needs `command`",
            "agents.list[0].mcp[0]: no MCP server \"missing\" in mcp.servers",
        ],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gateway_gives_agents_mcp_tools_reports_them_in_status_and_stops_them() {
    gateway_turn_with_mcp("").await;
}

/// The same turn on an RPC worker (`agent.runner: "rpc"`): the worker starts the agent's
/// MCP servers itself before its first turn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_rpc_worker_gives_its_turn_the_mcp_tools() {
    gateway_turn_with_mcp("agent: { runner: \"rpc\", pool: { min: 0, max: 1 } },").await;
}

async fn gateway_turn_with_mcp(runner: &str) {
    use common::Script as _;
    use common::gateway::{Foreground, WsClient, free_port};
    const TOKEN: &str = "mcp-client-token";
    let Some(entry) = server_filesystem() else {
        return;
    };
    let (home, dir) = home_with_note();
    let llm = mock(Scenario::new().tool_turn(
        QUESTION,
        "fs__read_text_file",
        json!({"path": dir.join("note.txt")}),
        "done",
    ))
    .await;
    let port = free_port();
    home.use_mock(
        &llm,
        &format!(
            "agents: {{ defaults: {{ model: \"mock/backup\" }} }},\n  \
             gateway: {{ port: {port}, auth: {{ token: \"{TOKEN}\" }} }},\n  \
             mcp: {{ servers: {{ fs: {{ command: \"node\", args: [{entry:?}, {dir:?}] }} }} }},\n  \
             {runner}",
            dir = dir.to_str().unwrap()
        ),
    );
    let mut gateway = Foreground::start(&home, &["gateway", "run"]);
    let mut client = WsClient::connect(port, TOKEN).await;
    let done = client
        .chat_until("agent:main:main", QUESTION, "r1", "final")
        .await;
    assert_eq!(
        done["payload"]["message"]["content"][0]["text"], "done",
        "{done}"
    );
    let requests = llm.requests();
    let last = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["content"], json!("hello from the note"));

    if !runner.is_empty() {
        // The worker (the gateway's child) started its own server: a grandchild running
        // server-filesystem.
        let worker_servers: Vec<u32> = children(gateway.child.id())
            .into_iter()
            .flat_map(children)
            .filter(|pid| {
                std::fs::read(format!("/proc/{pid}/cmdline"))
                    .is_ok_and(|c| String::from_utf8_lossy(&c).contains("server-filesystem"))
            })
            .collect();
        assert_eq!(worker_servers.len(), 1, "{worker_servers:?}");
        gateway.signal(nix::sys::signal::Signal::SIGTERM);
        gateway.wait();
        return;
    }
    let status = client.call("status", json!({})).await;
    let fs = &status["payload"]["mcp"]["servers"][0];
    assert_eq!(fs["name"], "fs", "{status}");
    assert_eq!(fs["state"], "ready", "{status}");
    assert!(fs["tools"].as_u64().unwrap() > 5, "{fs}");
    let pid = u32::try_from(fs["pid"].as_u64().unwrap()).unwrap();
    assert!(common::gateway::alive(pid));
    gateway.signal(nix::sys::signal::Signal::SIGTERM);
    gateway.wait();
    let gone = (0..100).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(50));
        !common::gateway::alive(pid)
    });
    assert!(gone, "the MCP server outlived the gateway");
}

/// The processes whose parent is `pid`.
fn children(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else {
            continue;
        };
        // `pid (comm) state ppid …`: comm may hold spaces, so split after its `)`.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        if ppid == Some(pid) {
            out.push(child);
        }
    }
    out
}
