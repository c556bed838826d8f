//! Session keys and agent ids through the router's public API: every key format OpenClaw
//! builds, parsing them back, and the CLI's `--session` normalisation.

use std::collections::BTreeMap;

use pincer_config::{DmScope, SessionConfig, SessionScope};
use pincer_turns::router::{
    ChatAddress, ChatKind, ParsedSessionKey, RouterError, SessionKind, SessionTarget, ThreadRef,
    chat_session_key, cron_session_key, is_valid_agent_id, main_session_key, normalize_account_id,
    normalize_agent_id, normalize_cli_session_key, parse_session_key, subagent_session_key,
    validate_agent_id,
};

fn session(dm_scope: DmScope) -> SessionConfig {
    SessionConfig {
        dm_scope,
        ..SessionConfig::default()
    }
}

fn address<'a>(
    channel: &'a str,
    account_id: Option<&'a str>,
    kind: ChatKind,
    peer_id: &'a str,
    thread: Option<&'a ThreadRef>,
) -> ChatAddress<'a> {
    ChatAddress {
        channel,
        account_id,
        kind,
        peer_id,
        thread,
    }
}

#[test]
fn agent_ids_validate_and_normalise_like_openclaw() {
    let valid = ["main", "a", "0", "work-bot", "x_1", &"a".repeat(64)];
    for id in valid {
        assert!(is_valid_agent_id(id), "{id}");
    }
    let invalid = ["", "-a", "_a", "Work", "a b", "a.b", "ä", &"a".repeat(65)];
    for id in invalid {
        assert!(!is_valid_agent_id(id), "{id}");
    }
    assert_eq!(validate_agent_id(" Work ").unwrap(), "work");
    assert_eq!(
        validate_agent_id("my agent"),
        Err(RouterError::InvalidAgentId {
            id: "my agent".into()
        })
    );
    let cases = [
        ("", "main"),
        ("  ", "main"),
        ("Work", "work"),
        ("My Agent!", "my-agent"),
        ("--x--", "x"),
        ("a..b", "a-b"),
        ("***", "main"),
        ("_ops", "_ops"),
    ];
    for (input, expected) in cases {
        assert_eq!(normalize_agent_id(input), expected, "{input:?}");
    }
    assert_eq!(normalize_agent_id(&"b".repeat(80)), "b".repeat(64));
}

#[test]
fn account_ids_normalise_like_openclaw() {
    let cases = [
        (None, "default"),
        (Some(""), "default"),
        (Some(" Bot1 "), "bot1"),
        (Some("my bot"), "my-bot"),
        (Some("!!!"), "default"),
    ];
    for (input, expected) in cases {
        assert_eq!(normalize_account_id(input), expected, "{input:?}");
    }
}

#[test]
fn main_key_follows_main_key_and_scope() {
    assert_eq!(
        main_session_key("main", &SessionConfig::default()),
        "agent:main:main"
    );
    let custom = SessionConfig {
        main_key: Some(" Home ".into()),
        ..SessionConfig::default()
    };
    assert_eq!(main_session_key("Work", &custom), "agent:work:home");
    let global = SessionConfig {
        scope: SessionScope::Global,
        ..SessionConfig::default()
    };
    assert_eq!(main_session_key("work", &global), "global");
}

#[test]
fn direct_keys_by_dm_scope() {
    let cases = [
        (DmScope::Main, "agent:main:main"),
        (DmScope::PerPeer, "agent:main:direct:u123abc"),
        (
            DmScope::PerChannelPeer,
            "agent:main:telegram:direct:u123abc",
        ),
        (
            DmScope::PerAccountChannelPeer,
            "agent:main:telegram:bot1:direct:u123abc",
        ),
    ];
    for (scope, expected) in cases {
        let chat = address(
            " Telegram ",
            Some("Bot1"),
            ChatKind::Direct,
            " U123abc ",
            None,
        );
        assert_eq!(
            chat_session_key("main", &chat, &session(scope)),
            expected,
            "{scope:?}"
        );
    }
    // No account means the `default` account.
    let chat = address("discord", None, ChatKind::Direct, "42", None);
    assert_eq!(
        chat_session_key("main", &chat, &session(DmScope::PerAccountChannelPeer)),
        "agent:main:discord:default:direct:42"
    );
    // A blank peer cannot get its own session: it falls back to the main session.
    let chat = address("discord", None, ChatKind::Direct, "  ", None);
    assert_eq!(
        chat_session_key("main", &chat, &session(DmScope::PerPeer)),
        "agent:main:main"
    );
}

#[test]
fn identity_links_map_peers_to_a_canonical_name() {
    let mut links = BTreeMap::new();
    links.insert(
        "Alice".to_string(),
        vec!["telegram:123".to_string(), " Discord:ALICE#1 ".to_string()],
    );
    links.insert("bob".to_string(), vec!["555".to_string()]);
    let linked = |dm_scope| SessionConfig {
        dm_scope,
        identity_links: links.clone(),
        ..SessionConfig::default()
    };
    let cases = [
        // (channel, peer, scope, key)
        (
            "telegram",
            "123",
            DmScope::PerPeer,
            "agent:main:direct:alice",
        ),
        (
            "discord",
            "alice#1",
            DmScope::PerPeer,
            "agent:main:direct:alice",
        ),
        (
            "telegram",
            "123",
            DmScope::PerChannelPeer,
            "agent:main:telegram:direct:alice",
        ),
        // A bare id in the list matches on any channel.
        ("slack", "555", DmScope::PerPeer, "agent:main:direct:bob"),
        // Channel-scoped ids only match their channel.
        ("discord", "123", DmScope::PerPeer, "agent:main:direct:123"),
        // Under dmScope main, links are not consulted (everything is the main session).
        ("telegram", "123", DmScope::Main, "agent:main:main"),
    ];
    for (channel, peer, scope, expected) in cases {
        let chat = address(channel, None, ChatKind::Direct, peer, None);
        assert_eq!(
            chat_session_key("main", &chat, &linked(scope)),
            expected,
            "{channel}:{peer} {scope:?}"
        );
    }
}

#[test]
fn group_channel_room_thread_and_topic_keys() {
    let thread = ThreadRef::Thread("T99".into());
    let topic = ThreadRef::Topic("5".into());
    let blank_thread = ThreadRef::Thread(" ".into());
    let cases = [
        (
            address("telegram", None, ChatKind::Group, "-100123", None),
            "agent:main:telegram:group:-100123",
        ),
        (
            address("discord", Some("bot2"), ChatKind::Channel, "C42", None),
            "agent:main:discord:channel:c42",
        ),
        (
            address("matrix", None, ChatKind::Room, "!Room", None),
            "agent:main:matrix:room:!room",
        ),
        (
            address("discord", None, ChatKind::Channel, "c42", Some(&thread)),
            "agent:main:discord:channel:c42:thread:t99",
        ),
        (
            address("telegram", None, ChatKind::Group, "-100123", Some(&topic)),
            "agent:main:telegram:group:-100123:topic:5",
        ),
        (
            address("slack", None, ChatKind::Channel, "c1", Some(&blank_thread)),
            "agent:main:slack:channel:c1",
        ),
        (
            address("", None, ChatKind::Group, "", None),
            "agent:main:unknown:group:unknown",
        ),
        // A thread in a DM hangs off whatever the DM's session is.
        (
            address("slack", None, ChatKind::Direct, "u1", Some(&thread)),
            "agent:main:main:thread:t99",
        ),
    ];
    for (chat, expected) in cases {
        // dmScope `main`: groups ignore it, and the DM-thread row hangs off the main key.
        assert_eq!(
            chat_session_key("main", &chat, &session(DmScope::Main)),
            expected
        );
    }
}

#[test]
fn global_scope_puts_every_chat_in_one_session() {
    let global = SessionConfig {
        scope: SessionScope::Global,
        dm_scope: DmScope::PerPeer,
        ..SessionConfig::default()
    };
    let thread = ThreadRef::Thread("1".into());
    let chats = [
        address("telegram", None, ChatKind::Direct, "1", None),
        address("discord", None, ChatKind::Channel, "2", Some(&thread)),
    ];
    for chat in chats {
        assert_eq!(chat_session_key("work", &chat, &global), "global");
    }
}

#[test]
fn cron_and_subagent_keys() {
    assert_eq!(cron_session_key(" Daily-Report "), "cron:daily-report");
    assert_eq!(
        subagent_session_key("Work", "3F2504E0-4F89-11D3-9A0C-0305E82C3301"),
        "agent:work:subagent:3f2504e0-4f89-11d3-9a0c-0305e82c3301"
    );
}

fn parsed(
    agent: Option<&str>,
    target: SessionTarget,
    thread: Option<ThreadRef>,
) -> ParsedSessionKey {
    ParsedSessionKey {
        agent_id: agent.map(str::to_string),
        target,
        thread,
    }
}

#[test]
fn keys_parse_back_into_parts() {
    let direct = |channel: Option<&str>, account: Option<&str>, peer: &str| SessionTarget::Direct {
        channel: channel.map(str::to_string),
        account_id: account.map(str::to_string),
        peer: peer.to_string(),
    };
    let chat = |channel: &str, kind, id: &str| SessionTarget::Chat {
        channel: channel.to_string(),
        kind,
        id: id.to_string(),
    };
    let named = |name: &str| SessionTarget::Named { name: name.into() };
    let cron = |job: &str| SessionTarget::Cron { job_id: job.into() };
    let thread = |id: &str| Some(ThreadRef::Thread(id.into()));
    let topic = |id: &str| Some(ThreadRef::Topic(id.into()));
    let cases = [
        (
            "global",
            parsed(None, SessionTarget::Global, None),
            SessionKind::Main,
        ),
        (
            "cron:daily",
            parsed(None, cron("daily"), None),
            SessionKind::Cron,
        ),
        (
            "agent:main:main",
            parsed(Some("main"), named("main"), None),
            SessionKind::Main,
        ),
        (
            " Agent:Main:Main ",
            parsed(Some("main"), named("main"), None),
            SessionKind::Main,
        ),
        (
            "agent:main:direct:alice",
            parsed(Some("main"), direct(None, None, "alice"), None),
            SessionKind::Direct,
        ),
        (
            "agent:main:telegram:direct:123",
            parsed(Some("main"), direct(Some("telegram"), None, "123"), None),
            SessionKind::Direct,
        ),
        (
            "agent:main:telegram:bot1:direct:123",
            parsed(
                Some("main"),
                direct(Some("telegram"), Some("bot1"), "123"),
                None,
            ),
            SessionKind::Direct,
        ),
        (
            "agent:main:telegram:group:-100123",
            parsed(
                Some("main"),
                chat("telegram", ChatKind::Group, "-100123"),
                None,
            ),
            SessionKind::Group,
        ),
        (
            "agent:main:telegram:group:-100123:topic:5",
            parsed(
                Some("main"),
                chat("telegram", ChatKind::Group, "-100123"),
                topic("5"),
            ),
            SessionKind::Group,
        ),
        (
            "agent:ops:discord:channel:c42:thread:t99",
            parsed(
                Some("ops"),
                chat("discord", ChatKind::Channel, "c42"),
                thread("t99"),
            ),
            SessionKind::Group,
        ),
        (
            "agent:main:matrix:room:!abc",
            parsed(Some("main"), chat("matrix", ChatKind::Room, "!abc"), None),
            SessionKind::Group,
        ),
        (
            "agent:main:main:thread:t1",
            parsed(Some("main"), named("main"), thread("t1")),
            SessionKind::Main,
        ),
        (
            "agent:main:subagent:abc-123",
            parsed(
                Some("main"),
                SessionTarget::Subagent {
                    id: "abc-123".into(),
                },
                None,
            ),
            SessionKind::Subagent,
        ),
        (
            "agent:main:cron:daily",
            parsed(Some("main"), cron("daily"), None),
            SessionKind::Cron,
        ),
        (
            "agent:main:webchat:tab1",
            parsed(
                Some("main"),
                SessionTarget::Other {
                    rest: "webchat:tab1".into(),
                },
                None,
            ),
            SessionKind::Group,
        ),
    ];
    for (key, expected, kind) in cases {
        let got = parse_session_key(key).unwrap();
        assert_eq!(got, expected, "{key}");
        assert_eq!(got.kind(), kind, "{key}");
    }
}

#[test]
fn built_keys_round_trip_through_the_parser() {
    let thread = ThreadRef::Thread("t1".into());
    let topic = ThreadRef::Topic("7".into());
    let chats = [
        (
            address("telegram", Some("b"), ChatKind::Direct, "9", None),
            SessionKind::Direct,
        ),
        (
            address("discord", None, ChatKind::Channel, "c", Some(&thread)),
            SessionKind::Group,
        ),
        (
            address("telegram", None, ChatKind::Group, "-1", Some(&topic)),
            SessionKind::Group,
        ),
    ];
    for (chat, kind) in chats {
        let key = chat_session_key("ops", &chat, &session(DmScope::PerAccountChannelPeer));
        let parsed = parse_session_key(&key).unwrap();
        assert_eq!(parsed.agent_id.as_deref(), Some("ops"), "{key}");
        assert_eq!(parsed.kind(), kind, "{key}");
        assert_eq!(parsed.thread.as_ref(), chat.thread, "{key}");
    }
}

#[test]
fn malformed_keys_are_refused_with_a_reason() {
    assert_eq!(parse_session_key("  "), Err(RouterError::EmptySessionKey));
    let cases = [
        ("agent", "`agent:` needs an agent id and a session"),
        ("agent:main", "nothing follows `agent:<id>:`"),
        (
            "agent:main:",
            "it has an empty segment (`::` or a `:` at an end)",
        ),
        (
            "agent::main",
            "it has an empty segment (`::` or a `:` at an end)",
        ),
        (
            "agent:-x:main",
            "`-x` is not a valid agent id (^[a-z0-9][a-z0-9_-]{0,63}$)",
        ),
        ("cron", "`cron:` needs a job id"),
        (
            "foo:bar",
            "a session key is `global`, `cron:<job>` or `agent:<agentId>:<rest>`",
        ),
    ];
    for (key, reason) in cases {
        assert_eq!(
            parse_session_key(key),
            Err(RouterError::InvalidSessionKey {
                key: key.to_string(),
                reason: reason.to_string()
            }),
            "{key}"
        );
    }
}

#[test]
fn cli_session_names_become_full_keys() {
    let cfg = SessionConfig::default();
    let cases = [
        ("main", "agent:work:main"),
        (" MAIN ", "agent:work:main"),
        ("project-x", "agent:work:project-x"),
        ("Notes.2026", "agent:work:notes.2026"),
        ("telegram:direct:123", "agent:work:telegram:direct:123"),
        ("agent:main:main", "agent:main:main"),
        (
            "Agent:Ops:Discord:Channel:C1",
            "agent:ops:discord:channel:c1",
        ),
        ("cron:daily", "cron:daily"),
        ("global", "global"),
    ];
    for (input, expected) in cases {
        assert_eq!(
            normalize_cli_session_key("work", input, &cfg).unwrap(),
            expected,
            "{input:?}"
        );
    }
    let custom = SessionConfig {
        main_key: Some("home".into()),
        ..SessionConfig::default()
    };
    assert_eq!(
        normalize_cli_session_key("work", "main", &custom).unwrap(),
        "agent:work:home"
    );
    let global = SessionConfig {
        scope: SessionScope::Global,
        ..SessionConfig::default()
    };
    assert_eq!(
        normalize_cli_session_key("work", "main", &global).unwrap(),
        "global"
    );
}

#[test]
fn cli_session_names_with_bad_characters_are_refused() {
    let cfg = SessionConfig::default();
    assert_eq!(
        normalize_cli_session_key("main", "   ", &cfg),
        Err(RouterError::EmptySessionKey)
    );
    assert_eq!(
        normalize_cli_session_key("bad agent", "x", &cfg),
        Err(RouterError::InvalidAgentId {
            id: "bad agent".into()
        })
    );
    let cases = [
        (
            "my session",
            "the character ' ' is not allowed; use letters, digits and _ - . @ + :",
        ),
        (
            "../etc",
            "the character '/' is not allowed; use letters, digits and _ - . @ + :",
        ),
        (
            "a\u{0}b",
            "the character '\\0' is not allowed; use letters, digits and _ - . @ + :",
        ),
        (
            "café",
            "the character 'é' is not allowed; use letters, digits and _ - . @ + :",
        ),
        ("a::b", "it has an empty segment (`::` or a `:` at an end)"),
        ("agent:main", "nothing follows `agent:<id>:`"),
    ];
    for (input, reason) in cases {
        assert_eq!(
            normalize_cli_session_key("main", input, &cfg),
            Err(RouterError::InvalidSessionKey {
                key: input.to_string(),
                reason: reason.to_string()
            }),
            "{input:?}"
        );
    }
    let long = "x".repeat(600);
    assert_eq!(
        normalize_cli_session_key("main", &long, &cfg),
        Err(RouterError::InvalidSessionKey {
            key: long.clone(),
            reason: "it is longer than 512 characters".into()
        })
    );
    // The message says what is wrong and what to use instead.
    let err = normalize_cli_session_key("main", "my session", &cfg).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid session key \"my session\": the character ' ' is not allowed; \
         use letters, digits and _ - . @ + :"
    );
}

mod malformed_input {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// Any string parses to parts or an error, and the CLI normaliser never panics.
        #[test]
        fn parsers_never_panic(key in "\\PC{0,80}", colons in "[a-z:]{0,20}") {
            let _ = parse_session_key(&key);
            let _ = parse_session_key(&colons);
            let _ = normalize_cli_session_key("main", &key, &SessionConfig::default());
            let _ = normalize_cli_session_key("main", &colons, &SessionConfig::default());
        }

        /// Keys built from colon-free ids always parse back to the same agent and kind.
        #[test]
        fn built_keys_parse_back(
            agent in "[a-z0-9][a-z0-9_-]{0,10}",
            channel in "[A-Za-z0-9]{1,8}",
            peer in "[A-Za-z0-9_.@+-]{1,12}",
            group_kind in 0usize..3,
        ) {
            let kinds = [ChatKind::Group, ChatKind::Channel, ChatKind::Room];
            let scope = session(DmScope::PerAccountChannelPeer);
            let direct = chat_session_key(&agent, &address(&channel, None, ChatKind::Direct, &peer, None), &scope);
            let parsed = parse_session_key(&direct).unwrap();
            prop_assert_eq!(parsed.agent_id.as_deref(), Some(agent.as_str()));
            prop_assert_eq!(parsed.kind(), SessionKind::Direct);
            let chat = address(&channel, None, kinds[group_kind], &peer, None);
            let grouped = parse_session_key(&chat_session_key(&agent, &chat, &scope)).unwrap();
            prop_assert_eq!(grouped.kind(), SessionKind::Group);
        }
    }
}
