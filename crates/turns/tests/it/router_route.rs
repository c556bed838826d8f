//! Agent resolution through `resolve_route`: binding scores (peer 8 > guild 4 > account 2 >
//! channel 1), ties, `/agent` prefixes, the default agent, and roles.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;

use pincer_config::{
    AgentEntry, Binding, BindingMatch, ChannelRoles, DmScope, PeerKind, PeerMatch, PincerConfig,
    RolesConfig, SessionConfig,
};
use pincer_turns::router::{
    ChatKind, MatchedBy, Route, RouteInput, SessionKind, ThreadRef, binding_score,
    default_agent_id, known_agent_ids, resolve_role, resolve_route,
};

fn agent(id: &str) -> AgentEntry {
    AgentEntry {
        id: id.to_string(),
        ..AgentEntry::default()
    }
}

fn bind(agent_id: &str, m: BindingMatch) -> Binding {
    Binding {
        agent_id: agent_id.to_string(),
        match_: m,
    }
}

fn on(channel: &str) -> BindingMatch {
    BindingMatch {
        channel: channel.to_string(),
        ..BindingMatch::default()
    }
}

fn peer(kind: PeerKind, id: &str) -> Option<PeerMatch> {
    Some(PeerMatch {
        kind,
        id: id.to_string(),
    })
}

fn config(agents: &[&str], bindings: Vec<Binding>) -> PincerConfig {
    let mut cfg = PincerConfig::default();
    cfg.agents.list = agents.iter().map(|id| agent(id)).collect();
    cfg.bindings = bindings;
    cfg
}

fn dm(channel: &str, sender: &str, text: &str) -> RouteInput {
    RouteInput {
        channel: channel.to_string(),
        chat_kind: ChatKind::Direct,
        peer_id: sender.to_string(),
        text: text.to_string(),
        ..RouteInput::default()
    }
}

fn group(channel: &str, kind: ChatKind, id: &str) -> RouteInput {
    RouteInput {
        channel: channel.to_string(),
        chat_kind: kind,
        peer_id: id.to_string(),
        text: "hi".to_string(),
        ..RouteInput::default()
    }
}

/// The (agent, matched_by) pair a route chose.
fn chosen(cfg: &PincerConfig, input: &RouteInput) -> (String, MatchedBy) {
    let route = resolve_route(cfg, input);
    (route.agent_id, route.matched_by)
}

#[test]
fn each_binding_field_scores_its_weight() {
    let input = RouteInput {
        account_id: Some("bot1".into()),
        guild_id: Some("g1".into()),
        team_id: Some("t1".into()),
        ..group("discord", ChatKind::Channel, "c1")
    };
    let cases = [
        (on("discord"), Some(1)),
        (on(" Discord "), Some(1)),
        (
            BindingMatch {
                account_id: Some("Bot1".into()),
                ..on("discord")
            },
            Some(3),
        ),
        (
            BindingMatch {
                account_id: Some("*".into()),
                ..on("discord")
            },
            Some(1),
        ),
        (
            BindingMatch {
                guild_id: Some("g1".into()),
                ..on("discord")
            },
            Some(5),
        ),
        (
            BindingMatch {
                team_id: Some("t1".into()),
                ..on("discord")
            },
            Some(5),
        ),
        (
            BindingMatch {
                peer: peer(PeerKind::Channel, "c1"),
                ..on("discord")
            },
            Some(9),
        ),
        // A group peer binding matches a channel chat (OpenClaw treats them as one).
        (
            BindingMatch {
                peer: peer(PeerKind::Group, "c1"),
                ..on("discord")
            },
            Some(9),
        ),
        (
            BindingMatch {
                account_id: Some("bot1".into()),
                guild_id: Some("g1".into()),
                peer: peer(PeerKind::Channel, "c1"),
                ..on("discord")
            },
            Some(15),
        ),
        // Every given field must match.
        (on("telegram"), None),
        (on(""), None),
        (
            BindingMatch {
                account_id: Some("bot2".into()),
                ..on("discord")
            },
            None,
        ),
        (
            BindingMatch {
                guild_id: Some("g2".into()),
                ..on("discord")
            },
            None,
        ),
        (
            BindingMatch {
                peer: peer(PeerKind::Direct, "c1"),
                ..on("discord")
            },
            None,
        ),
        // Peer ids compare exactly.
        (
            BindingMatch {
                peer: peer(PeerKind::Channel, "C1"),
                ..on("discord")
            },
            None,
        ),
    ];
    for (m, expected) in cases {
        assert_eq!(binding_score(&m, &input), expected, "{m:?}");
    }
}

#[test]
fn a_binding_without_account_matches_any_account_and_a_named_one_needs_the_default() {
    let no_account = dm("telegram", "1", "hi");
    let named_default = BindingMatch {
        account_id: Some("default".into()),
        ..on("telegram")
    };
    assert_eq!(binding_score(&on("telegram"), &no_account), Some(1));
    assert_eq!(binding_score(&named_default, &no_account), Some(3));
    let bot2 = RouteInput {
        account_id: Some("bot2".into()),
        ..no_account
    };
    assert_eq!(binding_score(&on("telegram"), &bot2), Some(1));
    assert_eq!(binding_score(&named_default, &bot2), None);
}

#[test]
fn the_most_specific_binding_wins_whatever_its_position() {
    let cfg = config(
        &["chan", "acct", "guild", "peer"],
        vec![
            bind("chan", on("discord")),
            bind(
                "acct",
                BindingMatch {
                    account_id: Some("bot1".into()),
                    ..on("discord")
                },
            ),
            bind(
                "peer",
                BindingMatch {
                    peer: peer(PeerKind::Channel, "c1"),
                    ..on("discord")
                },
            ),
            bind(
                "guild",
                BindingMatch {
                    guild_id: Some("g1".into()),
                    ..on("discord")
                },
            ),
        ],
    );
    let base = RouteInput {
        account_id: Some("bot1".into()),
        guild_id: Some("g1".into()),
        ..group("discord", ChatKind::Channel, "c1")
    };
    let cases = [
        (base.clone(), "peer", 2),
        (
            RouteInput {
                peer_id: "c2".into(),
                ..base.clone()
            },
            "guild",
            3,
        ),
        (
            RouteInput {
                peer_id: "c2".into(),
                guild_id: Some("g2".into()),
                ..base.clone()
            },
            "acct",
            1,
        ),
        (
            RouteInput {
                peer_id: "c2".into(),
                guild_id: None,
                account_id: None,
                ..base.clone()
            },
            "chan",
            0,
        ),
    ];
    for (input, agent, index) in cases {
        assert_eq!(
            chosen(&cfg, &input),
            (agent.to_string(), MatchedBy::Binding { index }),
            "{input:?}"
        );
    }
}

#[test]
fn guild_plus_account_beats_a_lone_peer_only_when_it_scores_higher() {
    // account 2 + guild 4 + channel 1 = 7 < peer 8 + channel 1 = 9.
    let cfg = config(
        &["combo", "peer"],
        vec![
            bind(
                "combo",
                BindingMatch {
                    account_id: Some("bot1".into()),
                    guild_id: Some("g1".into()),
                    ..on("discord")
                },
            ),
            bind(
                "peer",
                BindingMatch {
                    peer: peer(PeerKind::Channel, "c1"),
                    ..on("discord")
                },
            ),
        ],
    );
    let input = RouteInput {
        account_id: Some("bot1".into()),
        guild_id: Some("g1".into()),
        ..group("discord", ChatKind::Channel, "c1")
    };
    assert_eq!(
        chosen(&cfg, &input),
        ("peer".into(), MatchedBy::Binding { index: 1 })
    );
}

#[test]
fn ties_go_to_the_first_binding_in_config_order() {
    let cfg = config(
        &["first", "second"],
        vec![
            bind(
                "first",
                BindingMatch {
                    guild_id: Some("g1".into()),
                    ..on("discord")
                },
            ),
            bind(
                "second",
                BindingMatch {
                    team_id: Some("t1".into()),
                    ..on("discord")
                },
            ),
        ],
    );
    let input = RouteInput {
        guild_id: Some("g1".into()),
        team_id: Some("t1".into()),
        ..group("discord", ChatKind::Channel, "c1")
    };
    assert_eq!(
        chosen(&cfg, &input),
        ("first".into(), MatchedBy::Binding { index: 0 })
    );
}

#[test]
fn slack_team_and_direct_peer_bindings() {
    let cfg = config(
        &["work", "boss"],
        vec![
            bind(
                "work",
                BindingMatch {
                    team_id: Some("T01".into()),
                    ..on("slack")
                },
            ),
            bind(
                "boss",
                BindingMatch {
                    peer: peer(PeerKind::Direct, "U42"),
                    ..on("slack")
                },
            ),
        ],
    );
    let in_team = RouteInput {
        team_id: Some("T01".into()),
        ..dm("slack", "U7", "hello")
    };
    assert_eq!(
        chosen(&cfg, &in_team),
        ("work".into(), MatchedBy::Binding { index: 0 })
    );
    let boss = RouteInput {
        team_id: Some("T01".into()),
        ..dm("slack", "U42", "hello")
    };
    assert_eq!(
        chosen(&cfg, &boss),
        ("boss".into(), MatchedBy::Binding { index: 1 })
    );
    // A direct peer binding never matches a group with the same id.
    assert_eq!(
        chosen(&cfg, &group("slack", ChatKind::Group, "U42")),
        ("main".into(), MatchedBy::Default)
    );
}

#[test]
fn bindings_to_unknown_agents_are_skipped() {
    let cfg = config(
        &["work"],
        vec![
            bind(
                "ghost",
                BindingMatch {
                    peer: peer(PeerKind::Direct, "1"),
                    ..on("telegram")
                },
            ),
            bind("work", on("telegram")),
        ],
    );
    assert_eq!(
        chosen(&cfg, &dm("telegram", "1", "hi")),
        ("work".into(), MatchedBy::Binding { index: 1 })
    );
    // `main` always exists, listed or not.
    let cfg = config(&[], vec![bind("Main", on("telegram"))]);
    assert_eq!(
        chosen(&cfg, &dm("telegram", "1", "hi")),
        ("main".into(), MatchedBy::Binding { index: 0 })
    );
}

#[test]
fn a_prefix_names_the_agent_only_when_no_binding_matched_and_the_agent_exists() {
    let cfg = config(&["work", "home"], vec![bind("home", on("discord"))]);
    let cases = [
        (
            "/work fix the build",
            "work",
            MatchedBy::Prefix,
            "fix the build",
        ),
        (
            "/Work   spaced  out  ",
            "work",
            MatchedBy::Prefix,
            "spaced  out",
        ),
        ("/work\nnext line", "work", MatchedBy::Prefix, "next line"),
        ("/work", "work", MatchedBy::Prefix, ""),
        ("/main hi", "main", MatchedBy::Prefix, "hi"),
        ("/ghost hi", "main", MatchedBy::Default, "/ghost hi"),
        ("/workshop hi", "main", MatchedBy::Default, "/workshop hi"),
        ("/work: hi", "main", MatchedBy::Default, "/work: hi"),
        (
            "please /work hi",
            "main",
            MatchedBy::Default,
            "please /work hi",
        ),
        ("/ hi", "main", MatchedBy::Default, "/ hi"),
    ];
    for (text, agent, matched_by, rest) in cases {
        let route = resolve_route(&cfg, &dm("telegram", "1", text));
        assert_eq!(
            (
                route.agent_id.as_str(),
                route.matched_by,
                route.text.as_str()
            ),
            (agent, matched_by, rest),
            "{text:?}"
        );
    }
    // A binding outranks a prefix, and the text is left as it was.
    let bound = RouteInput {
        text: "/work do it".into(),
        ..group("discord", ChatKind::Channel, "c1")
    };
    let route = resolve_route(&cfg, &bound);
    assert_eq!(
        (
            route.agent_id.as_str(),
            route.matched_by,
            route.text.as_str()
        ),
        ("home", MatchedBy::Binding { index: 0 }, "/work do it")
    );
}

#[test]
fn the_default_agent_is_the_marked_one_else_main() {
    let cfg = config(&["a", "b"], vec![]);
    assert_eq!(default_agent_id(&cfg), "main");
    assert_eq!(known_agent_ids(&cfg), ["main", "a", "b"]);
    let mut cfg = config(&["a", "b"], vec![]);
    cfg.agents.list[1].default = true;
    assert_eq!(default_agent_id(&cfg), "b");
    let route = resolve_route(&cfg, &dm("cli", "me", "hello"));
    assert_eq!(
        route,
        Route {
            agent_id: "b".into(),
            channel: "cli".into(),
            account_id: "default".into(),
            session_key: "agent:b:main".into(),
            main_session_key: "agent:b:main".into(),
            session_kind: SessionKind::Main,
            text: "hello".into(),
            matched_by: MatchedBy::Default,
            role: "default".into(),
        }
    );
}

#[test]
fn routes_carry_session_keys_for_the_chosen_agent() {
    let mut cfg = config(&["work"], vec![bind("work", on("telegram"))]);
    cfg.session = SessionConfig {
        dm_scope: DmScope::PerChannelPeer,
        ..SessionConfig::default()
    };
    let route = resolve_route(&cfg, &dm("Telegram", "ABC", "hi"));
    assert_eq!(route.session_key, "agent:work:telegram:direct:abc");
    assert_eq!(route.main_session_key, "agent:work:main");
    assert_eq!(route.session_kind, SessionKind::Direct);
    assert_eq!(route.channel, "telegram");

    let topic = RouteInput {
        thread: Some(ThreadRef::Topic("12".into())),
        ..group("telegram", ChatKind::Group, "-100777")
    };
    let route = resolve_route(&cfg, &topic);
    assert_eq!(
        route.session_key,
        "agent:work:telegram:group:-100777:topic:12"
    );
    assert_eq!(route.session_kind, SessionKind::Group);
}

#[test]
fn roles_resolve_from_the_most_specific_entry() {
    let mut channels = BTreeMap::new();
    channels.insert(
        "discord".to_string(),
        ChannelRoles {
            role: Some("discord-role".into()),
            groups: BTreeMap::from([
                ("g1".to_string(), "guild-role".to_string()),
                ("c9".to_string(), "channel-role".to_string()),
            ]),
        },
    );
    channels.insert(
        "telegram".to_string(),
        ChannelRoles {
            role: None,
            groups: BTreeMap::from([("-100".to_string(), "tg-group-role".to_string())]),
        },
    );
    channels.insert(
        "slack".to_string(),
        ChannelRoles {
            role: None,
            groups: BTreeMap::from([("T1".to_string(), "team-role".to_string())]),
        },
    );
    let roles = RolesConfig {
        default: Some("fallback".into()),
        channels,
    };
    let in_guild = |chat: &str| RouteInput {
        guild_id: Some("g1".into()),
        ..group("discord", ChatKind::Channel, chat)
    };
    let cases = [
        (in_guild("c9"), "channel-role"),
        (in_guild("c1"), "guild-role"),
        (group("discord", ChatKind::Channel, "c1"), "discord-role"),
        (dm("Discord", "u1", "hi"), "discord-role"),
        (group("telegram", ChatKind::Group, "-100"), "tg-group-role"),
        (group("telegram", ChatKind::Group, "-200"), "fallback"),
        // A DM whose sender id equals a group id is not that group.
        (dm("telegram", "-100", "hi"), "fallback"),
        (
            RouteInput {
                team_id: Some("T1".into()),
                ..dm("slack", "u1", "hi")
            },
            "team-role",
        ),
        (dm("feishu", "u1", "hi"), "fallback"),
    ];
    for (input, expected) in cases {
        assert_eq!(resolve_role(&roles, &input), expected, "{input:?}");
    }
    assert_eq!(
        resolve_role(&RolesConfig::default(), &dm("telegram", "1", "hi")),
        "default"
    );
}
