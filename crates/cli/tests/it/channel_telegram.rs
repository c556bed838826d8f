//! Telegram end to end, what only Telegram does (the rest is in `channel_conformance`):
//! `/new` starting the chat's session over and the other chat commands answered, the owner told of pairing requests and the
//! pending list, heartbeat replies reaching the chat, and two bots each answering their
//! own chats under their own rules.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use crate::common::channels::GATEWAY_TOKEN;
use crate::common::fake_channel::{FakeChannel, T};
use crate::common::gateway::WsClient;
use crate::common::{mock, replies};
use pincer_fakes::fake_telegram::{FakeTelegram, InjectMessage};
use pincer_testkit::{Match, Reply, Rule, Scenario};
use serde_json::Value;

const OWNER: i64 = 1001;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_starts_the_chats_session_over() {
    let (llm, fake, _home, gateway) =
        FakeTelegram::started_for_owner(replies(&[("hello", "hi")])).await;
    fake.inject_message(InjectMessage::private(OWNER, "hello"));
    fake.wait_for_messages(1, T).await;

    // `/new` starts the chat's session over, as in the web chat.
    fake.inject_message(InjectMessage::private(OWNER, "/new"));
    let sent = fake.wait_for_messages(2, T).await;
    assert!(
        sent[1]
            .plain_text
            .starts_with("New session started. sessionId="),
        "{}",
        sent[1].plain_text
    );
    assert_eq!(llm.requests().len(), 1, "no model call for /new");

    // The other chat commands are the gateway's to answer too, here as in every client.
    fake.inject_message(InjectMessage::private(OWNER, "/think low"));
    let sent = fake.wait_for_messages(3, T).await;
    assert_eq!(sent[2].plain_text, "thinking: low");
    fake.inject_message(InjectMessage::private(OWNER, "/status"));
    let sent = fake.wait_for_messages(4, T).await;
    let status: Vec<&str> = sent[3].plain_text.lines().collect();
    assert_eq!(status.len(), 6, "{}", sent[3].plain_text);
    // Direct chats share the agent's main session (dmScope "main").
    assert_eq!(status[0], "session:  agent:main:main");
    assert_eq!(status[3], "thinking: low");
    assert_eq!(llm.requests().len(), 1, "no model call for the commands");
    drop(gateway);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_owner_hears_of_a_pairing_request_once_and_it_is_listed() {
    let llm = mock(Scenario::new()).await;
    let fake = FakeTelegram::start().await;
    // dmPolicy defaults to pairing; the owner (OWNER) hears about requests.
    let (home, gateway) = fake.gateway_with(
        &llm,
        "",
        "0m",
        &format!("pairingNotify: {{ channel: \"telegram\", to: \"{OWNER}\" }},"),
    );
    let stranger = 2002;

    fake.inject_message(InjectMessage::private(stranger, "hey"));
    let sent = fake.wait_for_messages(2, T).await;
    let (to_stranger, to_owner): (Vec<_>, Vec<_>) =
        sent.iter().partition(|m| m.chat_id == stranger);
    assert_eq!(to_owner.len(), 1, "{sent:?}");
    assert!(
        to_owner[0]
            .plain_text
            .contains(&format!("pairing request on telegram from {stranger}")),
        "{}",
        to_owner[0].plain_text
    );
    let text = &to_stranger[0].plain_text;
    let code = text
        .lines()
        .find_map(|l| l.strip_prefix("Pairing code: "))
        .unwrap_or_else(|| panic!("{text}"))
        .to_owned();
    // A repeat while the request is pending is not answered again (the code was sent),
    // and the owner is told only about new requests.
    fake.inject_message(InjectMessage::private(stranger, "hey?"));
    assert_eq!(fake.quiet(Duration::from_millis(2500)).await, 2);
    assert!(llm.requests().is_empty(), "no agent for a stranger");

    let listed = home.run_ok(&["pairing", "list", "telegram", "--json"]);
    let json: Value = serde_json::from_str(&listed.stdout()).unwrap();
    assert_eq!(json["requests"][0]["code"], code.as_str(), "{json}");
    assert_eq!(json["requests"][0]["id"], stranger.to_string().as_str());
    drop(gateway);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heartbeat_replies_reach_the_chat() {
    let llm = mock(
        Scenario::new()
            .rule(Rule::when(Match::last_user("hello")).reply(Reply::text("hi")))
            .rule(
                Rule::when(Match::last_user_contains("stretch reminder"))
                    .reply(Reply::text("Time to stand up and stretch!")),
            ),
    )
    .await;
    let fake = FakeTelegram::start().await;
    // Timer beats a day apart: only the wake below runs one.
    let (_home, gateway) = fake.gateway_with(&llm, &FakeTelegram::owner_only(), "24h", "");
    // The owner's DM is the main session: the heartbeat answers where it last heard from.
    fake.inject_message(InjectMessage::private(OWNER, "hello"));
    fake.wait_for_messages(1, T).await;

    let mut client = WsClient::connect(gateway.port, GATEWAY_TOKEN).await;
    let woke = client
        .call(
            "wake",
            serde_json::json!({"mode": "now", "text": "stretch reminder"}),
        )
        .await;
    assert_eq!(woke["ok"], true, "{woke}");
    let sent = fake.wait_for_messages(2, T).await;
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert_eq!(sent[1].chat_id, OWNER);
    assert_eq!(sent[1].text, "Time to stand up and stretch!");
    drop(gateway);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_bots_each_answer_their_own_chats_under_their_own_rules() {
    let llm = mock(replies(&[
        ("hello one", "from one"),
        ("hello two", "from two"),
    ]))
    .await;
    let main = FakeTelegram::start().await;
    let work = FakeTelegram::start().await;
    // The work bot inherits allowFrom but not the token, and pairs strangers instead.
    let (home, gateway) = main.gateway(
        &llm,
        &format!(
            "{}, accounts: {{ work: {{ botToken: \"{}\", apiBaseUrl: \"{}\", dmPolicy: \"pairing\" }} }}",
            FakeTelegram::owner_only(),
            work.token(),
            work.base_url()
        ),
    );

    main.inject_message(InjectMessage::private(OWNER, "hello one"));
    let sent = main.wait_for_messages(1, T).await;
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0].text, "from one");
    work.inject_message(InjectMessage::private(OWNER, "hello two"));
    let sent = work.wait_for_messages(1, T).await;
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0].text, "from two");
    assert_eq!(
        main.sent_messages().len(),
        1,
        "each bot answers its own chats"
    );

    let stranger = 2002;
    main.inject_message(InjectMessage::private(stranger, "hi"));
    work.inject_message(InjectMessage::private(stranger, "hi"));
    let sent = work.wait_for_messages(2, T).await;
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert_eq!(sent[1].chat_id, stranger);
    assert!(
        sent[1].plain_text.contains("Pairing code: "),
        "{}",
        sent[1].plain_text
    );
    assert_eq!(
        main.quiet(Duration::from_millis(1500)).await,
        1,
        "the main bot's allowlist stays silent"
    );
    let pending: Value = serde_json::from_str(
        &std::fs::read_to_string(home.path().join("credentials/telegram-pairing.json")).unwrap(),
    )
    .unwrap();
    let requests = pending["requests"].as_array().unwrap();
    assert_eq!(requests.len(), 1, "{pending}");
    assert_eq!(requests[0]["id"], stranger.to_string());
    assert_eq!(requests[0]["accountId"], "work", "{pending}");

    let mut client = WsClient::connect(gateway.port, GATEWAY_TOKEN).await;
    let health = client.call("health", serde_json::json!({})).await;
    let accounts = health["payload"]["channels"]["telegram"]["accounts"]
        .as_array()
        .unwrap()
        .clone();
    let ids: Vec<&str> = accounts
        .iter()
        .map(|a| a["accountId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["default", "work"], "{health}");
    assert!(accounts.iter().all(|a| a["connected"] == true), "{health}");
    drop(gateway);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_voice_note_reaches_the_model_as_its_transcript() {
    use crate::common::channels::last_user_text;
    use crate::common::fake_channel::FakeChannel;
    use crate::common::gateway::{Foreground, gateway_home_in};
    use pincer_testkit::Api;

    let llm =
        mock(Scenario::new().rule(Rule::when(Match::any()).reply(Reply::text("heard")))).await;
    let fake = FakeTelegram::start().await;
    let voice = b"OggS\0\x02 a voice note".to_vec();
    // `tools.media.audio` on the mock's transcription endpoint, then on a dead one.
    for (base_url, heard) in [
        (
            llm.base_url(Api::OpenAiCompletions),
            format!(
                "[voice note] mock transcript of voice.ogg ({} bytes, whisper-1)\n",
                voice.len()
            ),
        ),
        (
            "http://127.0.0.1:9/v1".to_owned(),
            "could not be transcribed: the transcription service could not be reached".to_owned(),
        ),
    ] {
        let channels = fake.config(&FakeTelegram::owner_only());
        let (home, _port) = gateway_home_in(
            crate::common::Home::new(),
            &llm,
            GATEWAY_TOKEN,
            "heartbeat: { every: \"0m\" }",
            &format!(
                "channels: {{ {channels} }},\n  tools: {{ media: {{ audio: {{ provider: \"mock\", \
                 model: \"whisper-1\", baseUrl: \"{base_url}\", apiKey: \"k\" }} }} }},"
            ),
        );
        let gateway = Foreground::start(&home, &["gateway", "run"]);
        let before = FakeChannel::sent(&fake).len();
        FakeChannel::inject_dm_file(&fake, FakeTelegram::OWNER, "voice.ogg", voice.clone());
        FakeChannel::wait_for_sent(&fake, before + 1, T).await;
        let prompt = last_user_text(&llm);
        assert!(prompt.contains("(audio/ogg)]\n"), "{prompt}");
        assert!(prompt.contains(&heard), "{prompt}");
        drop(gateway);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_a_group_only_the_owner_changes_the_shared_session() {
    const GROUP: i64 = -100_555;
    const MEMBER: i64 = 7;
    let (llm, fake, _home, gateway) = FakeTelegram::started(
        Scenario::new(),
        &format!(
            "allowFrom: [\"{OWNER}\"], groupPolicy: \"open\", \
             groups: {{ \"{GROUP}\": {{ requireMention: false }} }}"
        ),
    )
    .await;
    // A member may look, not change: /think and /new are refused, /status answered.
    fake.inject_message(InjectMessage::supergroup(GROUP, MEMBER, "/think high"));
    let sent = fake.wait_for_messages(1, T).await;
    assert_eq!(
        sent[0].plain_text,
        "⚠️ Only the owner can use /think in a group (add your id to channels.telegram.allowFrom)."
    );
    fake.inject_message(InjectMessage::supergroup(GROUP, MEMBER, "/new"));
    let sent = fake.wait_for_messages(2, T).await;
    assert_eq!(
        sent[1].plain_text,
        "⚠️ Only the owner can use /new in a group (add your id to channels.telegram.allowFrom)."
    );
    fake.inject_message(InjectMessage::supergroup(GROUP, MEMBER, "/status"));
    let sent = fake.wait_for_messages(3, T).await;
    assert!(
        sent[2]
            .plain_text
            .starts_with("session:  agent:main:telegram:group:-100555"),
        "{}",
        sent[2].plain_text
    );
    assert!(
        sent[2].plain_text.contains("thinking: default"),
        "{}",
        sent[2].plain_text
    );
    // The owner may, in the same group.
    fake.inject_message(InjectMessage::supergroup(GROUP, OWNER, "/think high"));
    let sent = fake.wait_for_messages(4, T).await;
    assert_eq!(sent[3].plain_text, "thinking: high");
    assert!(llm.requests().is_empty(), "no model call for any of them");
    drop(gateway);
}
