//! A gateway killed with SIGKILL in the middle of a run: the transcript keeps every line
//! whole, and after a restart the same session goes on.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::gateway::*;
use common::mock;
use nix::sys::signal::Signal;
use pincer_testkit::{Match, Reply, Rule, Scenario};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_during_a_run_then_restart_resumes_the_session() {
    const TOKEN: &str = "crash-test-token";
    const KEY: &str = "agent:main:main";
    let llm = mock(
        Scenario::new()
            .rule(
                // About 40 s of streaming: the run is still going when the gateway dies.
                Rule::when(Match::last_user("tell me a long story")).reply(long_story(200)),
            )
            .rule(Rule::when(Match::last_user("are you back?")).reply(Reply::text("yes, back"))),
    )
    .await;
    let (home, port) = gateway_home(&llm, TOKEN);

    let mut gateway = Foreground::start(&home, &["gateway", "run"]);
    assert_eq!(gateway.port, port);
    let mut client = WsClient::connect(port, TOKEN).await;
    client
        .start_chat(KEY, "tell me a long story", "before-crash")
        .await;
    client.chat_event("before-crash", "delta").await;
    let history = client.history(KEY).await;
    let session_id = history["payload"]["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("{history}"))
        .to_owned();

    gateway.signal(Signal::SIGKILL);
    let status = gateway.wait();
    use std::os::unix::process::ExitStatusExt as _;
    assert_eq!(status.signal(), Some(9), "{status:?}");
    assert!(
        client.frame().await.is_none(),
        "the connection died with it"
    );

    // The transcript has only whole lines, and the user's message is in it.
    let entries = transcript_entries(&home);
    let users: Vec<String> = entries
        .iter()
        .filter(|e| e["type"] == "message" && e["message"]["role"] == "user")
        .map(|e| text_of(&e["message"]))
        .collect();
    assert_eq!(users, ["tell me a long story"], "{entries:?}");
    assert!(
        home.session_files().iter().all(|n| !n.ends_with(".tmp")),
        "no temporary file left behind"
    );

    // Restarted on the same home (and the configured port), the session goes on.
    let gateway = Foreground::start(&home, &["gateway", "run"]);
    assert_eq!(gateway.port, port);
    let mut client = WsClient::connect(port, TOKEN).await;
    let last = client
        .chat_until(KEY, "are you back?", "after-crash", "final")
        .await;
    assert_eq!(text_of(&last["payload"]["message"]), "yes, back", "{last}");

    let history = client.history(KEY).await;
    assert_eq!(
        history["payload"]["sessionId"],
        session_id.as_str(),
        "{history}"
    );
    let messages = history["payload"]["messages"].as_array().unwrap();
    let users: Vec<String> = messages
        .iter()
        .filter(|m| m["role"] == "user")
        .map(text_of)
        .collect();
    assert_eq!(
        users,
        ["tell me a long story", "are you back?"],
        "{history}"
    );
    assert_eq!(text_of(messages.last().unwrap()), "yes, back", "{history}");
    // The model saw the message from before the crash as context.
    let request = llm.requests().last().unwrap().body.clone();
    let context: Vec<String> = request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(text_of)
        .collect();
    assert_eq!(
        context,
        ["tell me a long story", "are you back?"],
        "{request}"
    );
    drop(gateway);
}
