//! Block streaming end to end: `pincer gateway run` with Telegram pointed at the fake Bot
//! API and the mock LLM streaming a long reply with a code fence in small deltas. Off (the
//! default) the reply is one message, as before; on, it arrives as several messages, each
//! cut where a reader would pause, the fence never split, nothing lost, in order, the first
//! replying to the user, a `MEDIA:` line sent as a file and never as text; and the first
//! blocks go out while the model is still writing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::Duration;

use common::channels::GATEWAY_TOKEN;
use common::gateway::*;
use common::{Home, mock};
use pincer_fakes::fake_telegram::{FakeTelegram, InjectMessage};
use pincer_testkit::{Fault, Match, MockLlm, Reply, Rule, Scenario};

const OWNER: i64 = 1001;
const T: Duration = Duration::from_secs(20);

const INTRO: &str = "Here is the plan for today, in three short parts.\n\n";
const FIRST: &str = "First we look at the code that does the work, just below.\n\n";
const CODE: &str =
    "```rust\nfn main() {\n    let x = 1;\n\n    println!(\"{}\", x + 2);\n}\n```\n\n";
const THEN: &str = "Then we run it and check that it prints three, as it should.\n\n";
const AFTER: &str =
    "After that we clean up the workspace and write a short note about what we learned.\n\n";
const END: &str = "That is all.\nMEDIA:./report.txt";

/// The reply, streamed 7 chars at a time.
fn reply() -> String {
    [INTRO, FIRST, CODE, THEN, AFTER, END].concat()
}

/// A gateway whose Telegram bot is the fake and answers its owner; `defaults` goes into
/// `agents.defaults`, `telegram` into `channels.telegram`.
fn gateway(
    llm: &MockLlm,
    fake: &FakeTelegram,
    defaults: &str,
    telegram: &str,
) -> (Home, Foreground) {
    let (home, _port) = gateway_home_in(
        Home::new().with_env("PINCER_TELEGRAM_POLL_SECS", "1"),
        llm,
        GATEWAY_TOKEN,
        &format!("heartbeat: {{ every: \"0m\" }}, {defaults}"),
        &format!(
            "channels: {{ telegram: {{ botToken: \"{}\", apiBaseUrl: \"{}\", \
             dmPolicy: \"allowlist\", allowFrom: [\"{OWNER}\"], {telegram} }} }},",
            fake.token(),
            fake.base_url()
        ),
    );
    let workspace = home.path().join("agents/main/workspace");
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::write(workspace.join("report.txt"), "the report").unwrap();
    let gateway = Foreground::start(&home, &["gateway", "run"]);
    (home, gateway)
}

async fn long_reply_llm() -> MockLlm {
    mock(
        Scenario::new()
            .chunk_size(7)
            .rule(Rule::when(Match::last_user("plan please")).reply(Reply::text(reply()))),
    )
    .await
}

/// Blocks of 120–200 chars; every block its own message (coalescing to `maxChars: 1` sends
/// each at once), so the messages depend on the text alone.
const STREAMING: &str = "blockStreamingChunk: { minChars: 120, maxChars: 200 }, \
    blockStreamingCoalesce: { maxChars: 1, idleMs: 0 }";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn off_by_default_the_reply_is_one_message() {
    let llm = long_reply_llm().await;
    let fake = FakeTelegram::start().await;
    let (_home, gateway) = gateway(&llm, &fake, "", "");

    let (_, message_id) = fake.inject_message(InjectMessage::private(OWNER, "plan please"));
    let files = fake.wait_for_files(1, T).await;
    assert_eq!(files[0].bytes, b"the report");
    let sent = fake.wait_for_messages(1, T).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let sent_after = fake.sent_messages();
    assert_eq!(sent_after.len(), 1, "{sent_after:#?}");
    let expected = [INTRO, FIRST, CODE, THEN, AFTER, "That is all."].concat();
    assert_eq!(
        sent[0].plain_text,
        expected.replace("```rust\n", "").replace("```\n", "")
    );
    assert_eq!(sent[0].reply_to_message_id, Some(message_id));
    drop(gateway);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_the_reply_arrives_in_blocks_with_the_fence_whole() {
    let llm = long_reply_llm().await;
    let fake = FakeTelegram::start().await;
    let (_home, gateway) = gateway(&llm, &fake, STREAMING, "blockStreaming: true");

    let (_, message_id) = fake.inject_message(InjectMessage::private(OWNER, "plan please"));
    let files = fake.wait_for_files(1, T).await;
    assert_eq!(files[0].bytes, b"the report");
    fake.wait_for_messages(3, T).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let sent = fake.sent_messages();
    let texts: Vec<&str> = sent.iter().map(|m| m.text.as_str()).collect();
    // Cut at the first paragraph break past 120 chars outside the fence: not at the blank
    // line inside it, which a plain splitter would take.
    assert_eq!(
        texts,
        [
            "Here is the plan for today, in three short parts.\n\n\
             First we look at the code that does the work, just below.\n\n\
             <pre><code class=\"language-rust\">fn main() {\n    let x = 1;\n\n    \
             println!(\"{}\", x + 2);\n}</code></pre>",
            "Then we run it and check that it prints three, as it should.\n\n\
             After that we clean up the workspace and write a short note about what we learned.",
            "That is all.",
        ]
    );
    let replies: Vec<Option<i64>> = sent.iter().map(|m| m.reply_to_message_id).collect();
    assert_eq!(replies, [Some(message_id), None, None]);
    drop(gateway);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blocks_go_out_while_the_model_is_still_writing() {
    let first = "The first paragraph is here and it is done.\n\n";
    let second = "The second paragraph also goes out before the end.\n\n";
    let third = "The third paragraph never finishes, because the model stops sending ";
    let text = format!("{first}{second}{third}{}", "and so on ".repeat(30));
    let llm = mock(
        Scenario::new().chunk_size(10).rule(
            Rule::when(Match::last_user("tell me"))
                .reply(Reply::text(text))
                .fault(Fault::hang_after_chunks(14)),
        ),
    )
    .await;
    let fake = FakeTelegram::start().await;
    let (_home, gateway) = gateway(
        &llm,
        &fake,
        "blockStreamingDefault: \"on\", blockStreamingChunk: { minChars: 20, maxChars: 300 }, \
         blockStreamingCoalesce: { maxChars: 1 }",
        "",
    );

    fake.inject_message(InjectMessage::private(OWNER, "tell me"));
    // The model hangs with the third paragraph half written: the reply has not ended.
    let sent = fake.wait_for_messages(2, T).await;
    let texts: Vec<&str> = sent.iter().map(|m| m.text.as_str()).collect();
    assert_eq!(texts, [first.trim_end(), second.trim_end()]);
    drop(gateway);
}
