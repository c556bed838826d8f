//! Slack end to end, what only Slack does (the rest is in `channel_conformance`): a mention
//! outside a DM arrives twice (`message` and `app_mention`), is answered once at top level
//! and every envelope is acked.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use crate::common::channels::last_user_text;
use crate::common::fake_channel::{FakeChannel, T};
use crate::common::replies;
use pincer_fakes::fake_slack::{FakeSlack, InjectSlackMessage};

const CHANNEL: &str = "C1GENERAL";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mention_sent_as_message_and_app_mention_is_answered_once() {
    let (llm, fake, _home, gateway) = FakeSlack::started(
        replies(&[("what time is it?", "tea time")]),
        "groupPolicy: \"open\"",
    )
    .await;

    // Slack sends message and app_mention for the post: one answer, at top level.
    let ids = fake.inject_message(
        InjectSlackMessage::channel("U7", CHANNEL, "what time is it?")
            .mentioning_bot()
            .ts("1700000100.000100"),
    );
    assert_eq!(ids.len(), 2);
    let sent = fake.wait_for_messages(1, T).await;
    assert_eq!(
        (sent[0].channel.as_str(), sent[0].text.as_str()),
        (CHANNEL, "tea time")
    );
    assert_eq!(sent[0].thread_ts, None);
    assert_eq!(last_user_text(&llm), "what time is it?");
    assert_eq!(fake.wait_for_acks(2, T).await, ids, "every envelope acked");
    assert_eq!(fake.quiet(Duration::from_millis(1500)).await, 1, "once");
    assert_eq!(llm.requests().len(), 1);
    drop(gateway);
}
