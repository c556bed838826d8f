//! The gateway's protocol sections in the system prompt the model receives: a gateway turn
//! gets the heartbeat, cron and media sections by default (the channels and the web chat
//! carry files), `agents.defaults.gatewayPrompts` turns them off, and a one-shot
//! `pincer ask` turn never has them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::gateway::*;
use common::{Home, mock, replies};
use pincer_testkit::MockLlm;

const TOKEN: &str = "prompt-test-token";

async fn llm() -> MockLlm {
    mock(replies(&[("hello", "hi")])).await
}

/// The system prompt of the last request the model received.
fn last_system_prompt(llm: &MockLlm) -> String {
    let last = llm.requests().last().cloned().expect("a request");
    let first = &last.body["messages"][0];
    assert_eq!(first["role"], "system", "{}", last.body);
    first["content"].as_str().expect("a text prompt").to_owned()
}

/// Sends `hello` to the main session through a gateway started on `home`; returns the
/// system prompt of that turn.
async fn gateway_turn_prompt(home: &Home, llm: &MockLlm) -> String {
    let gateway = Foreground::start(home, &["gateway", "run"]);
    let mut client = WsClient::connect(gateway.port, TOKEN).await;
    let done = client
        .chat_until("agent:main:main", "hello", "p1", "final")
        .await;
    assert_eq!(text_of(&done["payload"]["message"]), "hi", "{done}");
    last_system_prompt(llm)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gateway_turns_get_the_protocol_sections_and_ask_turns_do_not() {
    let llm = llm().await;
    let (home, _) = gateway_home(&llm, TOKEN);

    home.run(&["ask", "hello"]).assert_ok();
    let ask = last_system_prompt(&llm);
    assert!(ask.contains("## Runtime"), "{ask}");
    for heading in [
        "## Heartbeat Protocol",
        "## Cron Event Protocol",
        "## Media Reply Protocol",
    ] {
        assert!(!ask.contains(heading), "{heading} in an ask turn:\n{ask}");
    }

    let prompt = gateway_turn_prompt(&home, &llm).await;
    let heartbeat = prompt.find("\n## Heartbeat Protocol\n");
    let cron = prompt.find("\n## Cron Event Protocol\n");
    let media = prompt.find("\n## Media Reply Protocol\n");
    let runtime = prompt.find("\n## Runtime\n");
    assert!(
        heartbeat.is_some() && heartbeat < cron && cron < media && media < runtime,
        "{prompt}"
    );
    assert!(prompt.contains("`HEARTBEAT_OK`"), "{prompt}");
    assert!(prompt.contains("[CRON:<jobId>]"), "{prompt}");
    assert!(prompt.contains("MEDIA:<path>"), "{prompt}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gateway_prompts_in_the_defaults_turn_the_sections_off() {
    let llm = llm().await;
    let (home, _) = gateway_home_with(
        &llm,
        TOKEN,
        "gatewayPrompts: { heartbeat: false, cron: false, media: false },",
    );
    let prompt = gateway_turn_prompt(&home, &llm).await;
    assert!(prompt.contains("## Runtime"), "{prompt}");
    for heading in [
        "## Heartbeat Protocol",
        "## Cron Event Protocol",
        "## Media Reply Protocol",
    ] {
        assert!(
            !prompt.contains(heading),
            "{heading} still there:\n{prompt}"
        );
    }
}
