//! Memory end to end: a fact the agent writes to `memory/` in one session is found with
//! `memory_search` in another (the "done when"), `pincer memory index|search|status`
//! keyword-only and with embeddings from the mock server's OpenAI-compatible endpoint, and
//! a misconfigured provider failing with a message that says what to do, embeddings at the
//! base URL the chat client uses (`OPENAI_BASE_URL`, `models.providers.openai.baseUrl`), and
//! a turn whose embedder cannot be reached answering at once, from keyword search.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{FACT, Home, last_tool_result, mock};
use pincer_testkit::{Api, Scenario};
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fact_saved_in_one_session_is_found_in_another() {
    let (server, home) = Home::on_script(common::remember_and_recall("On Friday.")).await;

    let saved = home.ask_json(&["--session", "monday", "remember: Mia visits on Friday"]);
    assert_eq!(saved["result"], "Noted.");
    let asked = home.ask_json(&["--session", "friday", "when does my sister visit?"]);
    assert_eq!(asked["result"], "On Friday.");
    assert_ne!(saved["sessionId"], asked["sessionId"]);

    let found: Value = serde_json::from_str(&last_tool_result(&server)).unwrap();
    assert_eq!(found["mode"], "keyword-only");
    assert_eq!(found["reason"], "no embedding provider is configured");
    let top = &found["results"][0];
    assert_eq!(top["path"], "memory/2026-11-23.md");
    assert_eq!(top["startLine"], 1);
    assert_eq!(top["endLine"], 3);
    assert!(
        top["snippet"]
            .as_str()
            .unwrap()
            .contains("Mia visits on Friday"),
        "{found}"
    );

    // The same from the terminal.
    let run = home.run_ok(&["memory", "search", "sister"]);
    assert!(
        run.stdout()
            .starts_with("1.000  memory/2026-11-23.md:1-3  # 2026-11-23\n"),
        "{}",
        run.stdout()
    );
    assert!(run.stdout().contains("Ann's sister Mia visits on Friday."));
    assert_eq!(
        run.stderr(),
        "keyword-only search: no embedding provider is configured\n"
    );
    let status = home.run(&["memory", "status", "--json"]).stdout();
    let status: Value = serde_json::from_str(&status).unwrap();
    assert_eq!(status["agentId"], "main");
    // MEMORY.md (from the workspace's first-run templates) and the note.
    assert_eq!(status["files"], 2);
    assert_eq!(status["embeddedChunks"], 0);
    assert!(home.path().join("memory/main.sqlite").is_file());
    assert_eq!(
        std::fs::read_to_string(
            home.path()
                .join("agents/main/workspace/memory/2026-11-23.md")
        )
        .unwrap(),
        FACT
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn embeddings_from_an_openai_compatible_endpoint_make_search_hybrid() {
    let server = mock(Scenario::new()).await;
    let home = Home::new();
    home.use_mock(
        &server,
        &format!(
            "agents: {{ defaults: {{ model: \"mock/primary\", memorySearch: {{ provider: \"openai\", \
             model: \"text-embedding-3-small\", remote: {{ baseUrl: \"{}\", apiKey: \"emb-key\" }} }} }} }},",
            server.base_url(Api::OpenAiEmbeddings)
        ),
    );
    let ws = home.path().join("agents/main/workspace");
    std::fs::create_dir_all(ws.join("memory")).unwrap();
    std::fs::write(
        ws.join("MEMORY.md"),
        "# Preferences\n\nAnn drinks green tea every morning.\n\n# Work\n\nAnn maintains the Pincer gateway.\n",
    )
    .unwrap();
    std::fs::write(ws.join("memory/2026-11-20.md"), FACT).unwrap();

    let run = home.run_ok(&["memory", "index", "--json"]);
    let report: Value = serde_json::from_str(&run.stdout()).unwrap();
    assert_eq!(report["filesScanned"], 2);
    assert_eq!(report["filesIndexed"], 2);
    let embedded = report["textsEmbedded"].as_u64().unwrap();
    assert!(embedded >= 2, "{report}");
    let calls = server.requests().len();
    assert!(calls >= 1);
    assert_eq!(
        server.requests()[0].header("authorization"),
        Some("Bearer emb-key")
    );

    // Nothing changed: nothing is embedded again.
    let again = home.run(&["memory", "index", "--json"]).stdout();
    let again: Value = serde_json::from_str(&again).unwrap();
    assert_eq!(again["textsEmbedded"], 0, "{again}");
    assert_eq!(server.requests().len(), calls);

    let run = home.run_ok(&["memory", "search", "--json", "green tea"]);
    let found: Value = serde_json::from_str(&run.stdout()).unwrap();
    assert_eq!(found["mode"], "hybrid", "{found}");
    assert_eq!(found["results"][0]["path"], "MEMORY.md");
    assert_eq!(found["results"][0]["heading"], "# Preferences");
    assert_eq!(
        server.requests().len(),
        calls + 1,
        "only the query was embedded"
    );

    let status = home.run_ok(&["memory", "status"]);
    let text = status.stdout();
    assert!(text.starts_with("agent main: 2 memory files, "), "{text}");
    assert!(text.contains("\nsearch: hybrid\n"), "{text}");
    assert!(
        text.contains("embedder: openai/text-embedding-3-small, 64 dims\n"),
        "{text}"
    );
}

#[test]
fn a_provider_without_its_key_says_what_to_set() {
    let home = Home::new();
    home.write_config("{ agents: { defaults: { memorySearch: { provider: \"gemini\" } } } }");
    let run = home.run(&["memory", "status"]);
    assert_eq!(run.code(), 1);
    let err = run.stderr();
    assert!(err.starts_with("error: memorySearch: "), "{err}");
    assert!(err.contains("memorySearch.remote.apiKey"), "{err}");

    home.write_config("{ agents: { defaults: { memorySearch: { enabled: false } } } }");
    let run = home.run(&["memory", "search", "x"]);
    assert_eq!(run.code(), 1);
    assert!(
        run.stderr()
            .starts_with("error: memory is off for agent main (memorySearch.enabled is false in "),
        "{}",
        run.stderr()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gateway_keeps_memory_indexed_as_files_change() {
    use common::gateway::{Foreground, gateway_home_with};
    let server = mock(Scenario::new()).await;
    let (home, _port) = gateway_home_with(
        &server,
        "mem-token",
        "heartbeat: { every: \"0m\" }, memorySearch: { sync: { watchDebounceMs: 200 } }",
    );
    let gateway = Foreground::start(&home, &["gateway", "run"]);
    let ws = home.path().join("agents/main/workspace");
    std::fs::create_dir_all(ws.join("memory")).unwrap();
    std::fs::write(ws.join("memory/2026-11-23.md"), FACT).unwrap();

    // Indexed by the watcher, without `pincer memory index`.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let db = home.path().join("memory/main.sqlite");
    let mut last = Value::Null;
    let indexed = loop {
        if db.is_file() {
            let run = home.run(&["memory", "status", "--json"]);
            if run.code() == 0 {
                let status: Value = serde_json::from_str(&run.stdout()).unwrap();
                if status["problems"] == json!([])
                    && status["files"].as_u64().unwrap_or(0) >= 1
                    && status["lastSyncMs"].is_number()
                {
                    break status;
                }
                last = status;
            }
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the note was not indexed: {last}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    };
    assert_eq!(indexed["agentId"], "main");
    drop(gateway);
}

/// The embedding requests `server` received, with their bearer keys.
fn embedding_calls(server: &pincer_testkit::MockLlm) -> Vec<(String, Option<String>)> {
    server
        .requests()
        .into_iter()
        .filter(|r| r.api == Api::OpenAiEmbeddings)
        .map(|r| (r.path.clone(), r.header("authorization").map(str::to_owned)))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn embeddings_go_to_openai_base_url_like_chat_requests() {
    let server = mock(common::remember_and_recall("On Friday.")).await;
    let home = Home::on_mock(&server)
        .with_env("OPENAI_API_KEY", "env-key")
        .with_env("OPENAI_BASE_URL", &server.base_url(Api::OpenAiEmbeddings));
    let saved = home.ask_json(&["--session", "monday", "remember: Mia visits on Friday"]);
    assert_eq!(saved["result"], "Noted.");
    let asked = home.ask_json(&["--session", "friday", "when does my sister visit?"]);
    assert_eq!(asked["result"], "On Friday.");

    let calls = embedding_calls(&server);
    assert!(!calls.is_empty(), "no embedding request reached the mock");
    for (path, auth) in &calls {
        assert_eq!(path, "/v1/embeddings");
        assert_eq!(auth.as_deref(), Some("Bearer env-key"));
    }
    let found: Value = serde_json::from_str(&last_tool_result(&server)).unwrap();
    assert_eq!(found["mode"], "hybrid", "{found}");
    assert_eq!(found["results"][0]["path"], "memory/2026-11-23.md");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn embeddings_go_to_the_configured_openai_base_url() {
    let server = mock(Scenario::new()).await;
    let home = Home::new().with_env("OPENAI_API_KEY", "env-key");
    // The variable points elsewhere: the configuration wins, as for chat requests.
    let home = home.with_env("OPENAI_BASE_URL", "http://127.0.0.1:9/v1");
    home.write_config(&format!(
        "{{ models: {{ providers: {{ openai: {{ baseUrl: \"{}\" }} }} }} }}",
        server.base_url(Api::OpenAiEmbeddings)
    ));
    let ws = home.path().join("agents/main/workspace");
    std::fs::create_dir_all(ws.join("memory")).unwrap();
    std::fs::write(ws.join("memory/2026-11-23.md"), FACT).unwrap();
    let run = home.run_ok(&["memory", "index", "--json"]);
    let report: Value = serde_json::from_str(&run.stdout()).unwrap();
    assert_eq!(report["textsEmbedded"], 1, "{report}");
    assert_eq!(report["embedFailures"], 0, "{report}");
    assert_eq!(
        embedding_calls(&server),
        vec![(
            "/v1/embeddings".to_owned(),
            Some("Bearer env-key".to_owned())
        )]
    );
}

/// A home whose memory embeds at `base_url` (which does not work).
fn home_with_embedder_at(server: &pincer_testkit::MockLlm, base_url: &str) -> Home {
    let home = Home::new();
    home.use_mock(
        server,
        &format!(
            "agents: {{ defaults: {{ model: \"mock/primary\", memorySearch: {{ provider: \"openai\", \
             remote: {{ baseUrl: \"{base_url}\", apiKey: \"emb-key\" }} }} }} }},"
        ),
    );
    home
}

/// Saves the fact, then asks for it: the answer, the search result the model was given,
/// and how long the asking turn took.
fn remember_then_recall(
    server: &pincer_testkit::MockLlm,
    home: &Home,
) -> (Value, std::time::Duration) {
    let saved = home.ask_json(&["--session", "monday", "remember: Mia visits on Friday"]);
    assert_eq!(saved["result"], "Noted.");
    let started = std::time::Instant::now();
    let asked = home.ask_json(&["--session", "friday", "when does my sister visit?"]);
    let took = started.elapsed();
    assert_eq!(asked["result"], "On Friday.");
    let found: Value = serde_json::from_str(&last_tool_result(server)).unwrap();
    assert_eq!(found["mode"], "keyword-only", "{found}");
    assert_eq!(
        found["results"][0]["path"], "memory/2026-11-23.md",
        "{found}"
    );
    assert_eq!(found["results"][0]["startLine"], 1);
    (found, took)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_embedding_port_does_not_hold_up_the_turn() {
    let server = mock(common::remember_and_recall("On Friday.")).await;
    // A port nobody listens on: every connection is refused.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let home = home_with_embedder_at(&server, &format!("http://127.0.0.1:{port}/v1"));
    let (found, took) = remember_then_recall(&server, &home);
    let reason = found["reason"].as_str().unwrap();
    assert!(
        reason
            .starts_with("the query could not be embedded: the embedding provider failed 0 s ago"),
        "{reason}"
    );
    assert!(reason.contains("cannot reach"), "{reason}");
    // With retries (1 + 2 + 4 s) for the sync and again for the query it took 14 s.
    assert!(took < std::time::Duration::from_secs(6), "{took:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_embedder_that_never_answers_does_not_hold_up_the_turn() {
    let server = mock(common::remember_and_recall("On Friday.")).await;
    // Accepts connections and never answers.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in silent.incoming().flatten() {
            held.push(stream);
        }
    });
    let home = home_with_embedder_at(&server, &format!("http://127.0.0.1:{port}/v1"));
    let (found, took) = remember_then_recall(&server, &home);
    let reason = found["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("the query could not be embedded: the embedding provider failed 0 s ago (no answer within 3 s)"),
        "{reason}"
    );
    // The search gives the embedder 3 s; a request's own timeout is 60 s, times 4 tries.
    assert!(took < std::time::Duration::from_secs(20), "{took:?}");
}
