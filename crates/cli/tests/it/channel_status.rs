//! The WS `status` method's heartbeat and channel summaries with a channel running (the
//! fake Telegram), in OpenClaw's shapes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::channels::GATEWAY_TOKEN;
use crate::common::fake_channel::{FakeChannel, T};
use crate::common::gateway::WsClient;
use crate::common::replies;
use pincer_fakes::fake_telegram::{FakeTelegram, InjectMessage};
use serde_json::json;

const OWNER: i64 = 1001;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_summarises_the_heartbeats_and_the_running_channels() {
    let llm = crate::common::mock(replies(&[("hello", "hi")])).await;
    let fake = FakeTelegram::start().await;
    let (_home, gateway) = fake.gateway_with(&llm, &FakeTelegram::owner_only(), "24h", "");
    let mut client = WsClient::connect(gateway.port, GATEWAY_TOKEN).await;

    let status = client.call("status", json!({})).await;
    let payload = &status["payload"];
    assert_eq!(
        payload["heartbeat"],
        json!({"defaultAgentId": "main", "agents": [{
            "agentId": "main", "enabled": true, "every": "24h", "everyMs": 86_400_000,
            // Its replies go to the chat the main session last heard from: none yet.
            "waitingForRoute": true,
        }]}),
        "{status}"
    );
    assert_eq!(
        payload["channelSummary"],
        json!([
            "Telegram: configured",
            "  - default (dm:allowlist, allow:1001)"
        ]),
        "{status}"
    );

    // Once the owner wrote, the heartbeat has somewhere to go.
    fake.inject_message(InjectMessage::private(OWNER, "hello"));
    fake.wait_for_messages(1, T).await;
    let status = client.call("status", json!({})).await;
    assert_eq!(
        status["payload"]["heartbeat"]["agents"][0]["waitingForRoute"], false,
        "{status}"
    );
    drop(gateway);
}
