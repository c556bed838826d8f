//! Memory around `pincer ask` turns, with the real binary and the mock LLM: lainclaw's
//! per-session memory (`--memory`: old messages summarised into `memory/<key>.md`, its tail
//! shown to the model, the JSON fields) and OpenClaw's pre-compaction memory flush (one
//! silent turn per compaction cycle near the threshold).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Home, mock};
use pincer_testkit::{Api, Match, MockLlm, Reply, Rule, Scenario, UsageSpec};
use serde_json::{Value, json};

fn index(home: &Home) -> Value {
    let text = std::fs::read_to_string(home.sessions_dir().join("sessions.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The main session's index entry.
fn main_entry(home: &Home) -> Value {
    index(home)["agent:main:main"].clone()
}

fn transcript_text(home: &Home, entry: &Value) -> String {
    let id = entry["sessionId"].as_str().unwrap();
    std::fs::read_to_string(home.sessions_dir().join(format!("{id}.jsonl"))).unwrap()
}

fn blocks(text: &str) -> usize {
    text.matches("## Memory Summary").count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_session_memory_summarises_old_messages_once_and_shows_the_tail() {
    let (server, home) = Home::on_script(Scenario::new().default_reply(Reply::text("noted"))).await;
    let out = home.ask_json(&["--memory", "m0"]);
    assert_eq!(out["memoryEnabled"], true);
    assert_eq!(out["memoryUpdated"], false);
    let file = std::path::PathBuf::from(out["memoryFile"].as_str().unwrap());
    assert!(
        file.ends_with("workspace/memory/agent_main_main.md"),
        "{}",
        file.display()
    );
    assert_eq!(main_entry(&home)["memoryEnabled"], true);
    // 12 turns: 24 messages, nothing summarised yet.
    for i in 1..12 {
        let out = home.ask_json(&[&format!("m{i}")]);
        assert_eq!(out["memoryUpdated"], false, "turn {i}");
    }
    assert!(!file.exists());
    assert!(main_entry(&home).get("compactedMessageCount").is_none());
    let before = server.requests().len();
    assert!(
        !server.requests()[before - 1]
            .body
            .to_string()
            .contains("[memory]"),
        "no memory file, nothing injected"
    );

    // The 13th: 26 messages, the 14 before the last 12 become one block.
    let out = home.ask_json(&["m12"]);
    assert_eq!(out["memoryUpdated"], true);
    assert_eq!(main_entry(&home)["compactedMessageCount"], 14);
    let text = std::fs::read_to_string(&file).unwrap();
    assert_eq!(blocks(&text), 1);
    let session_id = main_entry(&home)["sessionId"].as_str().unwrap().to_owned();
    assert!(
        text.contains(&format!(" ({session_id})\n## Memory Summary\n")),
        "{text}"
    );
    let bullets: Vec<&str> = text.lines().filter(|l| l.starts_with("- ")).collect();
    let expected: Vec<String> = (0..7)
        .flat_map(|i| [format!("- user: m{i}"), "- assistant: noted".to_owned()])
        .collect();
    assert_eq!(bullets, expected);

    // The next turn shows the tail to the model, before the history, not persisted.
    let out = home.ask_json(&["m13"]);
    assert_eq!(out["memoryUpdated"], false, "2 new messages are not enough");
    let body = server.requests().last().unwrap().body.clone();
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages[0]["role"], "system");
    assert_eq!(messages[1]["role"], "user");
    let memory = messages[1]["content"].as_str().unwrap();
    assert!(memory.starts_with("[memory]\n## "), "{memory}");
    assert!(
        memory.ends_with("- user: m6\n- assistant: noted"),
        "{memory}"
    );
    assert_eq!(messages[2]["content"], "m0", "the history follows");
    assert!(!transcript_text(&home, &main_entry(&home)).contains("[memory]"));

    // 32 messages: the 6 new ones (m7..m9 and replies) make the second block; none twice.
    home.ask_json(&["m14"]);
    let out = home.ask_json(&["m15"]);
    assert_eq!(out["memoryUpdated"], true);
    assert_eq!(main_entry(&home)["compactedMessageCount"], 20);
    let text = std::fs::read_to_string(&file).unwrap();
    assert_eq!(blocks(&text), 2);
    for i in 0..10 {
        assert_eq!(text.matches(&format!("- user: m{i}\n")).count(), 1, "m{i}");
    }
    assert!(!text.contains("m10"));

    // `/new` starts over at 0 and keeps memory on; the file stays.
    let out = home.ask_json(&["/new"]);
    assert_eq!(out["memoryEnabled"], true);
    let entry = main_entry(&home);
    assert!(entry.get("compactedMessageCount").is_none(), "{entry}");
    assert_eq!(entry["memoryEnabled"], true);
    assert_eq!(blocks(&std::fs::read_to_string(&file).unwrap()), 2);

    // Memory off: no injection, no file reported.
    let out = home.ask_json(&["--memory=off", "quiet"]);
    assert_eq!(out["memoryEnabled"], false);
    assert!(out.get("memoryFile").is_none());
    let body = server.requests().last().unwrap().body.to_string();
    assert!(!body.contains("[memory]"));
}

const FLUSH: &str = "Pre-compaction memory flush";

/// A home whose model `mock/primary` has a 21000-token window: compaction at 4616
/// estimated tokens (21000 − 16384), the memory flush above 616 (4000 below that).
fn small_window_home(server: &MockLlm, extra: &str) -> Home {
    let home = Home::new();
    home.write_config(&format!(
        r#"{{
  models: {{ providers: {{ mock: {{
    baseUrl: "{}", api: "openai-completions", apiKey: "mock-key",
    models: [{{ id: "primary", contextWindow: 21000 }}],
  }} }} }},
  agents: {{ defaults: {{ model: "mock/primary" {extra} }} }},
}}"#,
        server.base_url(Api::OpenAiCompletions)
    ));
    home
}

/// Every reply reports 1000 input tokens, so after the first turn the context is past the
/// flush threshold; the flush turn writes a memory file, then says NO_REPLY.
fn flush_scenario() -> Scenario {
    let usage = UsageSpec {
        input: Some(1000),
        ..Default::default()
    };
    Scenario::new()
        .rule(Rule::when(Match::tool_result("write")).reply(Reply::text("NO_REPLY")))
        .rule(
            Rule::when(Match::last_user_contains(FLUSH)).reply(Reply::tool_call(
                "write",
                json!({"path": "memory/flushed.md", "content": "durable fact"}),
            )),
        )
        .default_reply(Reply::text("fine").with_usage(usage))
}

fn flush_requests(server: &MockLlm) -> usize {
    server
        .requests()
        .iter()
        .filter(|r| r.body.to_string().contains(FLUSH))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_memory_flush_runs_once_per_compaction_cycle_and_stays_silent() {
    let big = UsageSpec {
        input: Some(6000),
        ..Default::default()
    };
    let server =
        mock(flush_scenario().rule(
            Rule::when(Match::last_user("big")).reply(Reply::text("big reply").with_usage(big)),
        ))
        .await;
    let home = small_window_home(&server, ", compaction: { keepRecentTokens: 1 }");
    // First turn: nothing in context yet, no flush.
    home.ask_json(&["hello"]);
    assert_eq!(flush_requests(&server), 0);
    assert!(main_entry(&home).get("memoryFlushAt").is_none());

    // Second turn: past the soft threshold, the flush runs first and nobody sees it.
    let run = home.run_ok(&["ask", "second"]);
    assert_eq!(run.stdout(), "fine\n");
    assert!(!run.stderr().contains("NO_REPLY"), "{}", run.stderr());
    let requests = server.requests();
    assert_eq!(
        requests.len(),
        4,
        "hello, flush, flush after its tool, second"
    );
    let flush = &requests[1].body;
    let system = flush["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.ends_with("Pre-compaction memory flush turn. The session is near auto-compaction; capture durable memories to disk. You may reply, but usually NO_REPLY is correct."),
        "{system}"
    );
    let last = flush["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(
        last["content"],
        "Pre-compaction memory flush. Store durable memories now (use memory/YYYY-MM-DD.md; create memory/ if needed). If nothing to store, reply with NO_REPLY."
    );
    assert_eq!(
        flush["messages"][1]["content"], "hello",
        "it sees the session"
    );
    // The user's turn does not see the flush; the transcript does not keep it.
    let user_turn = requests[3].body.to_string();
    assert!(!user_turn.contains(FLUSH) && !user_turn.contains("NO_REPLY"));
    let entry = main_entry(&home);
    assert!(entry["memoryFlushAt"].as_i64().unwrap() > 0);
    assert_eq!(entry["memoryFlushCompactionCount"], 0);
    let transcript = transcript_text(&home, &entry);
    assert!(!transcript.contains(FLUSH) && !transcript.contains("NO_REPLY"));
    // What the flush wrote stays.
    let workspace = home.path().join("agents/main/workspace");
    assert_eq!(
        std::fs::read_to_string(workspace.join("memory/flushed.md")).unwrap(),
        "durable fact"
    );

    // Same cycle: no second flush; the JSON result is the user's turn's.
    let out = home.ask_json(&["third"]);
    assert_eq!(out["result"], "fine");
    assert_eq!(flush_requests(&server), 2);

    // A real compaction starts a new cycle: a reply past the threshold (21000 − 16384) makes
    // the agent summarise the older messages (`keepRecentTokens: 1` leaves something to cut),
    // and the next turn flushes again, once.
    let out = home.ask_json(&["big"]);
    assert_eq!(out["result"], "big reply");
    let compactions = main_entry(&home)["compactionCount"].as_u64().unwrap();
    assert!(compactions >= 1, "{}", main_entry(&home));
    assert_eq!(flush_requests(&server), 2, "no flush in the same cycle");
    let out = home.ask_json(&["fourth"]);
    assert_eq!(out["result"], "fine");
    assert_eq!(flush_requests(&server), 4);
    let entry = main_entry(&home);
    assert_eq!(
        entry["memoryFlushCompactionCount"], entry["compactionCount"],
        "{entry}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_disabled_memory_flush_never_runs() {
    for extra in [
        ", compaction: { memoryFlush: { enabled: false } }",
        ", memorySearch: { enabled: false }",
    ] {
        let server = mock(flush_scenario()).await;
        let home = small_window_home(&server, extra);
        for text in ["one", "two", "three"] {
            home.ask_json(&[text]);
        }
        assert_eq!(flush_requests(&server), 0, "{extra}");
        assert!(main_entry(&home).get("memoryFlushAt").is_none());
    }
    // Without a tool that writes files there is nothing to flush with.
    let server = mock(flush_scenario()).await;
    let home = small_window_home(&server, "");
    for text in ["one", "two"] {
        home.ask_json(&["--no-with-tools", text]);
    }
    assert_eq!(flush_requests(&server), 0);
}

/// A flush that answers "save now" with `NO_REPLY` after a soft threshold of 3000 tokens.
const CUSTOM_FLUSH: &str = ", compaction: { memoryFlush: { softThresholdTokens: 3000, prompt: \"save now\", systemPrompt: \"FLUSH MODE\" } }";

/// A mock whose answers report `input` context tokens, and that answers "save now" with
/// `NO_REPLY`.
async fn saving_server(input: u64) -> MockLlm {
    mock(
        Scenario::new()
            .rule(Rule::when(Match::last_user("save now")).reply(Reply::text("NO_REPLY")))
            .default_reply(Reply::text("fine").with_usage(UsageSpec {
                input: Some(input),
                ..Default::default()
            })),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn custom_flush_prompts_and_threshold_are_used() {
    let server = saving_server(1000).await;
    // 21000 − 16384 − 3000 = 1616: the 1000-token context stays under it.
    let home = small_window_home(&server, CUSTOM_FLUSH);
    home.ask_json(&["one"]);
    home.ask_json(&["two"]);
    assert_eq!(server.requests().len(), 2, "under the threshold");
    let server2 = saving_server(2000).await;
    let home = small_window_home(&server2, CUSTOM_FLUSH);
    home.ask_json(&["one"]);
    let out = home.ask_json(&["two"]);
    assert_eq!(out["result"], "fine");
    let requests = server2.requests();
    assert_eq!(requests.len(), 3);
    let flush = &requests[1].body;
    assert!(
        flush["messages"][0]["content"]
            .as_str()
            .unwrap()
            .ends_with("\n\nFLUSH MODE")
    );
    assert_eq!(
        flush["messages"].as_array().unwrap().last().unwrap()["content"],
        "save now"
    );
}
